// ModeReport: what a disk mode says about itself beyond DiskStats, as plain
// values (Disk::mode_report). Each mode fills the sections it has and
// leaves the rest empty; mode=inplace has none. The stats file gives each
// present section its own key (docs/stats.md); plugin/mode_report_json.h
// serialises them.
//
// Thread-safety: a value; copy it freely.
#ifndef VLD_CORE_MODE_REPORT_H_
#define VLD_CORE_MODE_REPORT_H_

#include <optional>

#include "core/lld/lld_report.h"
#include "core/vld/recovery_report.h"
#include "core/vld/vld_report.h"

namespace vld {

struct ModeReport {
  std::optional<VldReport> vld;              // "vld"
  std::optional<CompactorReport> compactor;  // "compactor"
  std::optional<RecoveryReport> recovery;    // "recovery"
  std::optional<LldReport> lld;              // "lld" (mode=lld)
};

}  // namespace vld

#endif  // VLD_CORE_MODE_REPORT_H_
