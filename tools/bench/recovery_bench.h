// vld-bench recovery: what opening a mode=vld disk costs after a clean
// close and after a crash, in simulated time, with the cost the writes paid
// for that bound. In process and deterministic: the fio-driven
// scripts/bench-recovery measures the same through nbdkit (with memory), in
// minutes; this takes seconds, so that a checkpoint policy can be compared
// point by point.
//
// On a new sparse image of --size (st19101 with as many cylinders as it
// takes): --warm random 4 KiB writes, each followed by a flush; a clean
// close and open (C); --crash-writes more, each flushed; then the process
// "dies": the disk is dropped without close(), which leaves the image as
// kill -9 does (every write reached the file; no clean record); open (U).
// Reports each open's RecoveryReport and U / C, and for the crash phase the
// mean simulated time of a write and its flush, the records and delta
// checkpoints it wrote.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_RECOVERY_BENCH_H_
#define VLD_TOOLS_BENCH_RECOVERY_BENCH_H_

#include <cstdint>
#include <string>

namespace vld {

struct RecoveryBenchSpec {
  std::string geometry = "st19101";
  uint64_t export_bytes = 4ull << 30;
  uint64_t warm_writes = 200000;
  uint64_t crash_writes = 20000;
  uint32_t checkpoint_every = 4096;  // the plugin's checkpoint_every=
  double checkpoint_s = 60;          // checkpoint_s=
  uint32_t window_cylinders = 0;     // window= (0: the default)
  std::string dir = "/dev/shm";      // where the sparse image goes (removed after)
  uint64_t seed = 1;
};

// Prints one JSON object: {"clean": RecoveryReport, "unclean": ...,
// "unclean_over_clean", "crash_phase": {...}, ...}.
int cmd_recovery(const RecoveryBenchSpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_RECOVERY_BENCH_H_
