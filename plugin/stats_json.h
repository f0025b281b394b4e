// The statistics file: one JSON object, the schema documented in
// docs/stats.md. Thread-safety: reads the controller through its lock.
#ifndef VLD_PLUGIN_STATS_JSON_H_
#define VLD_PLUGIN_STATS_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "core/disk_controller.h"
#include "plugin/options.h"

namespace vld {

nlohmann::json stats_to_json(const DiskController& controller, LatencyMode latency);

// Throws Error (one line: the path, the errno text, what to do) unless
// PATH.tmp, through which write_stats_file() writes, can be created.
void check_stats_file_writable(const std::string& path);
// Writes atomically (temporary file + rename) so readers never see half a
// file. Throws Error on failure.
void write_stats_file(const std::string& path, const nlohmann::json& stats);

}  // namespace vld

#endif  // VLD_PLUGIN_STATS_JSON_H_
