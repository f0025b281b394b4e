// One synchronous 4 KiB update, as fio --fsync=1 sends it: a write, then a
// flush; what it cost in simulated time and what this host spent on it.
// The burst experiments (fig10, fig11), table2 and the prepared disks'
// warm-up all update this way.
//
// Thread-safety: as DiskController.
#ifndef VLD_TOOLS_BENCH_SYNC_UPDATE_H_
#define VLD_TOOLS_BENCH_SYNC_UPDATE_H_

#include <cstdint>
#include <optional>

#include "core/disk_controller.h"
#include "geometry/drive_model.h"
#include "geometry/sim_time.h"

namespace vld {

struct Update {
  SimDuration latency;  // the write: from arrival (or start, back to back) to end
  SimDuration waited;   // of that, waiting for an idle step to end
  SimDuration sync_latency;  // the write and its flush: from the write's arrival to the flush's end
  ServiceBreakdown service;
  double host_us;       // wall time this host spent in the write (not simulated)
};

// Writes bench_payload()'s first 4 KiB to `block`, arriving at `arrival`
// (nullopt: back to back), then flushes.
Update sync_update(DiskController& ctl, uint64_t block, std::optional<SimTime> arrival);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_SYNC_UPDATE_H_
