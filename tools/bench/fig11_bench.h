// vld-bench fig11: paper 001's Figure 11 (section 5.5). Bursts of random
// 4 KiB synchronous updates on a prepared mode=vld disk, an idle interval
// after each, for each idle length (--idle-ms) and compactor policy
// (--policies), and with the compactor off; the idle intervals are the
// compactor's to use.
//
// Prints one JSON object per line per point: "experiment": "fig11",
// "disk", "compactor_on", "policy", the burst fields (bursts.h: mean and
// percentiles of the write and of the write with its flush, the service
// breakdown, the writes that waited for a compaction step), and the
// compactor's and vld's work over the measured bursts.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_FIG11_BENCH_H_
#define VLD_TOOLS_BENCH_FIG11_BENCH_H_

#include "tools/bench/bursts.h"
#include "tools/bench/disk_spec.h"

namespace vld {

int cmd_fig11(const DiskSpec& spec, const BurstSpec& bs);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_FIG11_BENCH_H_
