// JSON for the disk modes' reports (core/mode_report.h): the one place each
// is turned into the keys docs/stats.md documents. The stats file
// (stats_json.h), vld-bench and vld-inspect all use these; nlohmann finds
// them by argument-dependent lookup (`nlohmann::json j = report;`).
//
// Thread-safety: pure functions of their arguments.
#ifndef VLD_PLUGIN_MODE_REPORT_JSON_H_
#define VLD_PLUGIN_MODE_REPORT_JSON_H_

#include <nlohmann/json.hpp>

#include "core/mode_report.h"

namespace vld {

void to_json(nlohmann::json& j, const VldReport& r);
void to_json(nlohmann::json& j, const CompactorReport& r);
void to_json(nlohmann::json& j, const RecoveryReport& r);
void to_json(nlohmann::json& j, const LldRecoveryReport& r);
void to_json(nlohmann::json& j, const LldReport& r);
// An object with one key per section present ({} for mode=inplace).
// mode=lld's is "lld", its recovery inside it.
void to_json(nlohmann::json& j, const ModeReport& r);

}  // namespace vld

#endif  // VLD_PLUGIN_MODE_REPORT_JSON_H_
