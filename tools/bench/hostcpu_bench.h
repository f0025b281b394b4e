// vld-bench hostcpu: this host's time per synchronous 4 KiB write, by phase
// (core/util/host_phases.h: allocator, map, checksum, store_io, stats, and
// the rest as other), for each mode asked for. Each mode's disk is prepared
// as fig11 (vld, inplace) and fig10 (lld) prepare theirs, then takes
// `writes` random updates back to back (a write and a flush each, no idle
// time: fig11 and fig10 with --idle-ms 0), in memory, with the phase timers
// on.
//
// Prints one JSON object per line per mode: "experiment": "hostcpu",
// "mode", "disk", "writes", "host_us_per_write" (wall time inside the disk
// controller, the write and its flush) and "phases_us_per_write" (an object
// with one key per phase and "other"; they sum to host_us_per_write); then,
// on stderr, the same as a table. Host times are of this machine and run,
// not simulated: only their shape is deterministic.
//
// Thread-safety: single-threaded (it switches the process's phase timers).
#ifndef VLD_TOOLS_BENCH_HOSTCPU_BENCH_H_
#define VLD_TOOLS_BENCH_HOSTCPU_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/bench/disk_spec.h"
#include "tools/bench/fig10_bench.h"

namespace vld {

struct HostCpuSpec {
  std::vector<std::string> modes = {"vld", "lld", "inplace"};
  uint64_t writes = 5000;  // measured updates per mode
};

int cmd_hostcpu(const DiskSpec& spec, const LldSpec& ls, const HostCpuSpec& hs);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_HOSTCPU_BENCH_H_
