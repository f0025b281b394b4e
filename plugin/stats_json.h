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

// Writes atomically (temporary file + rename) so readers never see half a
// file. Throws Error on failure.
void write_stats_file(const std::string& path, const nlohmann::json& stats);

}  // namespace vld

#endif  // VLD_PLUGIN_STATS_JSON_H_
