// JSON for the disk modes' reports (core/modes/mode_report.h): the one place each
// is turned into the keys docs/stats.md documents. The stats file
// (stats_json.h), vld-bench and vld-inspect all use these; nlohmann finds
// them by argument-dependent lookup (`nlohmann::json j = report;`).
//
// Thread-safety: pure functions of their arguments.
#ifndef VLD_STATS_MODE_REPORT_JSON_H_
#define VLD_STATS_MODE_REPORT_JSON_H_

#include <nlohmann/json.hpp>

#include "core/modes/mode_report.h"

namespace vld {

void to_json(nlohmann::json& j, const VldReport& r);
void to_json(nlohmann::json& j, const CompactorReport& r);
// Each mode's recovery: the keys every mode's "recovery" has (clean,
// method, sectors_read, simulated_ms, wall_ms, damage), then the mode's own.
void to_json(nlohmann::json& j, const RecoveryReport& r);
void to_json(nlohmann::json& j, const LldRecoveryReport& r);
void to_json(nlohmann::json& j, const InplaceRecoveryReport& r);
// "lld": the counters and state, and its recovery under "recovery" too
// (the same object as the stats file's top-level "recovery").
void to_json(nlohmann::json& j, const LldReport& r);
// An object with one key per section present ("vld", "compactor", "lld"),
// and, for a report of any mode, "recovery" and "checksum_failures" (null:
// mode=inplace keeps no checksums). {} for a report of no mode.
void to_json(nlohmann::json& j, const ModeReport& r);

}  // namespace vld

#endif  // VLD_STATS_MODE_REPORT_JSON_H_
