// ModeReport: what a disk mode says about itself beyond DiskStats, as plain
// values (Disk::mode_report). A mode's sections are its own reports
// (vld_report.h, lld_report.h, inplace_report.h); the others are empty.
// Every mode reports its open's recovery, each in its own struct: the stats
// file shows it as "recovery", in keys all modes share plus the mode's own
// (docs/stats.md); stats/mode_report_json.h serialises them.
//
// This is the one struct that knows every mode, so it lives above them; the
// root (Disk, DiskController, IntervalStats) names it only by a forward
// declaration, and mode_report.cc defines the functions there that return
// it: they ask the disk's own mode for its sections.
//
// Thread-safety: a value; copy it freely.
#ifndef VLD_CORE_MODES_MODE_REPORT_H_
#define VLD_CORE_MODES_MODE_REPORT_H_

#include <optional>

#include "core/inplace/inplace_report.h"
#include "core/lld/lld_report.h"
#include "core/vld/recovery_report.h"
#include "core/vld/vld_report.h"

namespace vld {

struct ModeReport {
  std::optional<VldReport> vld;              // "vld"
  std::optional<CompactorReport> compactor;  // "compactor"
  std::optional<RecoveryReport> recovery;    // "recovery" (mode=vld)
  std::optional<LldReport> lld;              // "lld", its .recovery "recovery" (mode=lld)
  std::optional<InplaceRecoveryReport> inplace_recovery;  // "recovery" (mode=inplace)
};

}  // namespace vld

#endif  // VLD_CORE_MODES_MODE_REPORT_H_
