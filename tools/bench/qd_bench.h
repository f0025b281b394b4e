// vld-bench qd: random 4 KiB writes (or reads) at queue depth N, the drive
// choosing among the queued commands by sched=fifo or sched=sptf
// (core/sched/command_queue.h).
//
// A closed loop, as fio's iodepth=N: N requests outstanding; whenever the
// drive is free at time T it picks one of the queued requests (all arrived
// by T) with the same pick_next the plugin's DiskController uses, from the
// positioning estimates of the disk at T (DiskController::positioning_
// estimate), serves it with its arrival time, and a new request (a random
// block of the region) arrives at that completion. Latency is completion -
// arrival (queueing included); IOPS is requests / simulated time.
//
// The disk: a new image of the mode whose region (the first --util of the
// export) is filled in order with 1 MiB writes; requests hit random blocks
// of that region, so every read has data to read. Each point starts from a
// copy of the same filled image.
//
// In-process and on simulated time only: each line is a deterministic
// function of the arguments.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_QD_BENCH_H_
#define VLD_TOOLS_BENCH_QD_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vld {

struct QdBenchSpec {
  std::string geometry = "st19101";
  uint64_t export_bytes = 256ull << 20;
  std::string span;   // --span, as DiskSpec's ("": the plugin's default spare)
  double util = 0.5;  // the region: this fraction of the export's blocks
  std::vector<std::string> modes = {"inplace", "vld"};
  std::vector<std::string> rw = {"write", "read"};
  std::vector<std::string> policies = {"fifo", "sptf"};
  std::vector<uint32_t> depths = {1, 4, 16};
  uint64_t requests = 2000;  // measured per point, after a quarter as many unmeasured
  uint32_t aging_ms = 100;
  uint64_t seed = 1;
};

// Prints one JSON object per point: {"mode", "rw", "policy", "qd", "iops",
// "mean_us", "p99_us", "reordered", ...}.
int cmd_qd(const QdBenchSpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_QD_BENCH_H_
