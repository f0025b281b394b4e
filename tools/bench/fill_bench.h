// vld-bench fill: every block of a new disk written once, 4 KiB at a
// time, back to back (as with latency=none), in order or shuffled: the
// write time as the disk fills, and the repacks that keep the last blocks
// writable (VldDisk::repack), mode=vld beside mode=inplace.
//
// Prints one JSON object per slice of the export (FillSpec::points) per
// mode: "experiment": "fill", "disk", "mode", "order", how much is
// written, the slice's mean, p99 and largest write time, and for vld the
// slice's repacks and their time.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_FILL_BENCH_H_
#define VLD_TOOLS_BENCH_FILL_BENCH_H_

#include <cstdint>

#include "tools/bench/disk_spec.h"

namespace vld {

struct FillSpec {
  bool shuffled = false;
  uint64_t flush_every = 0;  // writes between flushes (0: none)
  uint32_t points = 20;      // one line per 1/points of the export
};

int cmd_fill(const DiskSpec& spec, const FillSpec& fs);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_FILL_BENCH_H_
