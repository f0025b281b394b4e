// vld-bench fig2: paper 001's Figure 2 (section 2.3, models (5) and (13)).
// The locate time of writes into initially empty tracks against the
// track-switch threshold: the EagerAllocator alone on a DriveModel, no
// disk, no image.
//
// Prints one JSON object per threshold: "experiment": "fig2", the
// threshold and the fill it means, the mean locate time per write, the
// track switches and their mean cost, and the drive's sector and head
// switch times, the model's terms.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_FIG2_BENCH_H_
#define VLD_TOOLS_BENCH_FIG2_BENCH_H_

#include <cstdint>
#include <vector>

#include "tools/bench/disk_spec.h"

namespace vld {

// Writes of `sectors` arriving at random rotational positions, placed by the
// EagerAllocator on a disk whose tracks all start empty, filled to
// 1 - threshold before moving on. The mean locate time per write against the
// threshold (the percentage of free sectors reserved per track). strict:
// the paper's rule (stay on a track until the threshold); otherwise the
// allocator as built, which also leaves earlier when an empty track is
// sooner than the next free run.
int cmd_fig2(const DiskSpec& spec, const std::vector<double>& thresholds, uint32_t sectors,
             uint64_t writes, bool strict);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_FIG2_BENCH_H_
