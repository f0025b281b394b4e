// The root's functions that return a ModeReport (core/disk.h,
// core/disk_controller.h): defined here, where every mode is known, so that
// the root needs none of them.
#include "core/modes/mode_report.h"

#include <memory>
#include <mutex>

#include "core/disk.h"
#include "core/disk_controller.h"
#include "core/inplace/inplace_disk.h"
#include "core/lld/lld_disk.h"
#include "core/vld/vld_disk.h"

namespace vld {

ModeReport Disk::mode_report() const {
  ModeReport r;
  if (const auto* d = dynamic_cast<const VldDisk*>(this)) {
    r.vld = d->report();
    r.compactor = d->compactor_report();
    r.recovery = d->recovery();
  } else if (const auto* d = dynamic_cast<const LldDisk*>(this)) {
    r.lld = d->report();
  } else if (const auto* d = dynamic_cast<const InplaceDisk*>(this)) {
    r.inplace_recovery = d->recovery_report();
  }
  return r;
}

ModeReport DiskController::mode_report() const {
  std::lock_guard lock(mu_);
  return disk_locked().mode_report();
}

std::shared_ptr<const ModeReport> DiskController::mode_report_locked() const {
  return std::make_shared<const ModeReport>(disk_locked().mode_report());
}

}  // namespace vld
