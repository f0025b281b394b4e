// vld-bench table2: paper 001's Table 2 (section 5.4). Random 4 KiB
// synchronous updates on a prepared disk at the spec's utilization (80% by
// default), mode=vld measured right after its compactor has finished
// ("measured immediately after running a compactor", the section's
// footnote), beside mode=inplace on the same workload.
//
// With `uncompacted`, vld is also measured on the same prepared image
// without the compactor's run ("compacted": false): what eager writing
// costs when the disk has had no idle time.
//
// Prints one JSON object per mode: "experiment": "table2", "disk", "mode",
// the mean, p50 and p99 latency, the service breakdown, the utilization,
// and for vld the compaction it was given and the map's and free space's
// state after.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_TABLE2_BENCH_H_
#define VLD_TOOLS_BENCH_TABLE2_BENCH_H_

#include <cstdint>

#include "tools/bench/disk_spec.h"

namespace vld {

// `writes` measured updates per mode.
int cmd_table2(const DiskSpec& spec, uint64_t writes, bool uncompacted);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_TABLE2_BENCH_H_
