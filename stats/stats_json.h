// The statistics file: one JSON object, the schema documented in
// docs/stats.md, and its time series. The plugin (statsfile=) and vld-bench
// (--stats) write both with these functions.
//
// Thread-safety: reads the controller through its lock.
#ifndef VLD_STATS_STATS_JSON_H_
#define VLD_STATS_STATS_JSON_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/disk_controller.h"
#include "core/util/host_phases.h"
#include "stats/latency_mode.h"

namespace vld {

nlohmann::json stats_to_json(const DiskController& controller, LatencyMode latency);
// The fixed bucket scheme of every "histogram" (UsBuckets), as the stats
// file's "histogram_scheme".
nlohmann::json histogram_scheme_json();

// "host_phases_us" (profile=phases): "writes" and "requests" timed, and
// "sum" and "per_write", each an object of the phases' microseconds (one
// key per HostPhase, "other" and "total").
nlohmann::json host_phases_json(const HostPhaseTotals& t);

// One line of the time series (PATH.jsonl): an interval, with the wall
// clock's start and end in Unix seconds if it has them (the plugin; not
// vld-bench, whose intervals are of simulated time only).
struct WallSpan {
  double start_s = 0;
  double end_s = 0;
};
nlohmann::json interval_to_json(const IntervalStats& interval, std::optional<WallSpan> wall);
// Appends `line` and a newline to `path` (created if absent) in one
// write(2). Throws Error on failure.
void append_jsonl(const std::string& path, const nlohmann::json& line);

// Throws Error (one line: which file, why, what to do) unless each file the
// stats writer renames over (PATH), truncates (PATH.tmp) or empties
// (PATH.jsonl, with `series`) is absent or a regular file other than
// `image`: pointed at the image, a device or a directory, the writer would
// destroy or replace it. Touches nothing. REQUIRES: absolute paths.
void check_stats_paths(const std::string& path, const std::string& image, bool series);
// Throws Error (one line: the path, the errno text, what to do) unless
// PATH.tmp, through which write_stats_file() writes, can be created.
void check_stats_file_writable(const std::string& path);
// Creates or empties a time series' file (a new run, a new series); throws
// Error "what: strerror" if it cannot.
void start_series_file(const std::string& series, const std::string& what);
// Throws Error (one line, as above) unless PATH.jsonl, the time series
// (stats_interval= > 0), can be written; leaves an existing one as it is.
void check_series_file_writable(const std::string& path);
// Writes atomically (temporary file + rename) so readers never see half a
// file. Throws Error on failure.
void write_stats_file(const std::string& path, const nlohmann::json& stats);

}  // namespace vld

#endif  // VLD_STATS_STATS_JSON_H_
