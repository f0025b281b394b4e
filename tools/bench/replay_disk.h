// The disk a replay starts from: a copy in memory of an existing image, or
// a new image of a mode, preset and size, aged to a utilization.
//
// Aging (the Figure 8 warm-up, paper 001 section 5.3, the same in every
// mode): the first util x (the disk's blocks) of the export written in
// order with 1 MiB writes, then one random synchronous 4 KiB update of that
// region per two of its blocks, with no idle time; then closed cleanly and
// reopened, as a server restarted on it would find it.
//
// Thread-safety: functions of their arguments.
#ifndef VLD_TOOLS_BENCH_REPLAY_DISK_H_
#define VLD_TOOLS_BENCH_REPLAY_DISK_H_

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "core/disk_controller.h"
#include "tools/bench/replay_bench.h"

namespace vld {

struct ReplayDisk {
  std::unique_ptr<DiskController> ctl;
  nlohmann::json disk;  // the summary's "disk": what the replay ran on
};

// The disk of spec: --image's copy, or a new (aged) one. Throws Error for
// an unreadable image, an unknown mode or preset, or a size the preset
// cannot hold.
ReplayDisk open_replay_disk(const ReplaySpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_REPLAY_DISK_H_
