// PluginOptions: the key=value parameters of `nbdkit vld ...`, parsed and
// checked without nbdkit so that tests can exercise every bad input.
//
// Format-time parameters (size, geometry and its overrides, mode, block,
// spare or span; mode=lld's segment and nvram) shape a new image and are stored in
// it; on an existing image they may be repeated but must agree, and
// segment= and nvram= are refused unless the mode is lld. Run-time
// parameters (latency, statsfile, aru_max, track_buffer, fill, window,
// compactor*, seed; mode=lld's partial, cleaner_policy, nvram_us) apply to this server
// only; those of one mode are ignored by the others.
//
// Sizes, booleans and whole numbers are read by nbdkit's parsers
// (params/nbdkit_values.h). Every error is one line that names the
// parameter and its value, says what is wrong with it (not of the form, or
// out of range) and what is accepted.
//
// Thread-safety: plain values; nbdkit calls config serially.
#ifndef VLD_PLUGIN_OPTIONS_H_
#define VLD_PLUGIN_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/aru/aru_session.h"
#include "core/modes/mode_image.h"
#include "core/sched/command_queue.h"
#include "geometry/seek_curve.h"
#include "geometry/span.h"
#include "params/nbdkit_values.h"
#include "stats/latency_mode.h"

namespace vld {

struct PluginOptions {
  std::string file;

  // Format-time; unset means "the default" for a new image, "whatever the
  // image says" for an existing one.
  std::optional<uint64_t> size_bytes;
  std::optional<std::string> geometry;
  std::optional<DiskMode> mode;
  std::optional<uint32_t> block_bytes;
  std::optional<uint32_t> spare_percent;
  std::optional<SpanSpec> span;  // resolved against the drive's cylinders
  std::optional<uint32_t> sectors_per_track;
  std::optional<uint32_t> tracks_per_cylinder;
  std::optional<uint32_t> cylinders;
  std::optional<uint32_t> rpm;
  std::optional<double> head_switch_us;
  std::optional<double> overhead_us;
  std::optional<SeekCurve> seek;
  std::optional<uint64_t> segment_bytes;  // mode=lld only
  std::optional<uint64_t> nvram_bytes;    // mode=lld only

  // Run-time.
  LatencyMode latency = LatencyMode::kSleep;
  // track_buffer=, fill=, window=, compactor=, compactor_policy=, seed=;
  // partial=, cleaner_policy=, nvram_us=
  DiskOptions disk;
  // compactor_quiet_ms=: with latency=sleep, the compactor starts after the
  // drive has been idle this long (wall time).
  uint32_t compactor_quiet_ms = 50;
  // sched=, sched_aging_ms=: command queueing (core/sched/command_queue.h).
  SchedPolicy sched = SchedPolicy::kFifo;
  uint32_t sched_aging_ms = 100;
  std::string statsfile;
  // stats_interval=: seconds between the lines of statsfile=PATH's time
  // series, PATH.jsonl (docs/stats.md); 0: none.
  uint32_t stats_interval_s = 1;
  // profile=phases: this host's time per write by phase in the stats file
  // (core/util/host_phases.h).
  bool profile_phases = false;
  uint64_t seed = 0;
  // aru_max=: the most one ARU (export "aru") may hold (core/aru/).
  uint64_t aru_max_bytes = kDefaultAruMaxBytes;
};

inline constexpr const char* kDefaultGeometry = "st19101";
inline constexpr DiskMode kDefaultMode = DiskMode::kVld;

// Applies one key=value, reading sizes, booleans and whole numbers with
// `parsers` (the plugin: nbdkit's). Returns "" or the error, one line:
//   size=0: too small (at least 512 bytes); expected a size of at least ...
std::string set_option(PluginOptions* o, std::string_view key, std::string_view value,
                       const ValueParsers& parsers);
// The same with builtin_parsers(): for tests and programs without nbdkit.
std::string set_option(PluginOptions* o, std::string_view key, std::string_view value);

// FormatOptions for a new image, or the error (e.g. size= missing, or
// segment= without mode=lld).
std::string format_options(const PluginOptions& o, FormatOptions* out);

// "" if the options agree with an existing image, else the first conflict
// (segment= or nvram= on an image whose mode is not lld is one).
std::string conflicts_with_image(const PluginOptions& o, const Superblock& sb);

// The text of `nbdkit vld --help`: every parameter with its default, made
// from the table in plugin/parameters.h (which also makes the man page's
// PARAMETERS section).
const char* config_help();

}  // namespace vld

#endif  // VLD_PLUGIN_OPTIONS_H_
