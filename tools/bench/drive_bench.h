// vld-bench drive: the drive model alone, as a drive validation measures it.
//
// Random 4 KiB reads and writes, one at a time with an idle gap before each
// (DiskSim's validation runs: no queueing, a random rotational position at
// each arrival), at block addresses uniform over the whole drive, in place
// (the physical sector is the address); and each zone's sequential rate:
// whole cylinders from the zone's first, one command, timed from the first
// sector under the head to the last. No disk mode, no image.
//
// Prints one JSON object per workload: "experiment": "drive", the workload
// (random-read, random-write), the mean, p50, p90 and p99 service time and
// the breakdown; then one per zone and direction: "workload":
// "sequential-read" or "sequential-write", the zone's first cylinder and sectors per track, the measured rate and the
// rate its zone table gives (sectors per revolution less the skews that a
// cylinder's track and cylinder switches pass over), both in MB/s (10^6).
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_DRIVE_BENCH_H_
#define VLD_TOOLS_BENCH_DRIVE_BENCH_H_

#include <cstdint>

#include "tools/bench/disk_spec.h"

namespace vld {

struct DriveBenchSpec {
  uint64_t requests = 10000;   // per random workload
  double gap_ms = 100;         // idle before each random request
  uint32_t request_sectors = 8;
  uint32_t sequential_cylinders = 4;  // per zone
};

int cmd_drive(const DiskSpec& spec, const DriveBenchSpec& drive);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_DRIVE_BENCH_H_
