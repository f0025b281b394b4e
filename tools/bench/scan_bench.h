// vld-bench scan: what finding a track's contents costs on a large disk.
// On a new sparse mode=vld image of --size (1 TiB by default; st19101 with
// as many cylinders as it takes) after --writes random 4 KiB writes: one
// VldDisk::live_on (median and max of --repeats), one repack
// (VldDisk::repack_now, as a write that finds no run for a block triggers
// it), and, for comparison, one scan of the whole map for the blocks of a
// track (what live_on and repack_victims would cost without the per-track
// lists), all in microseconds of host time. Also the process's memory at
// each stage and the per-track lists' own bytes, for docs/scale.md.
//
// Host time, not simulated: the numbers vary from run to run (the
// simulated results of the writes do not).
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_SCAN_BENCH_H_
#define VLD_TOOLS_BENCH_SCAN_BENCH_H_

#include <cstdint>
#include <string>

namespace vld {

struct ScanBenchSpec {
  std::string geometry = "st19101";
  uint64_t export_bytes = 1ull << 40;
  uint64_t writes = 20000;
  uint32_t repeats = 101;
  std::string dir = "/tmp";  // where the sparse image goes (removed after)
  uint64_t seed = 1;
};

// Prints one JSON object: {"live_on_us": {"median", "max"}, "repack_us",
// "map_scan_us", "rss_mib": {...}, "track_lists_mib", ...}.
int cmd_scan(const ScanBenchSpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_SCAN_BENCH_H_
