// vld-bench fig10: the bursts of fig11 on the log-structured disk
// (mode=lld) with NVRAM (paper 001, section 5.5's comparison): its idle
// time drains the NVRAM buffer and cleans segments. The disk is warmed up
// to a steady state first (LldSpec::warm_passes).
//
// Prints one JSON object per line per idle length: "experiment": "fig10",
// "disk" (with the segments' and NVRAM's shape), "warmup" (the lld report
// after it), the burst fields (bursts.h), and the lld counters over the
// measured bursts ("lld") and over their idle intervals alone
// ("lld_idle").
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_FIG10_BENCH_H_
#define VLD_TOOLS_BENCH_FIG10_BENCH_H_

#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/image.h"
#include "tools/bench/bursts.h"
#include "tools/bench/disk_spec.h"

namespace vld {

// mode=lld's parameters (the plugin's segment=, nvram=, cleaner_policy=,
// partial=) and its warm-up.
struct LldSpec {
  uint64_t segment_bytes = kDefaultSegmentBytes;
  uint64_t nvram_bytes = kDefaultNvramBytes;
  std::string cleaner_policy = "greedy";
  uint32_t partial_percent = 75;
  double warm_passes = 1.0;  // warm-up updates, x the blocks the segments hold
};

// The format of the spec's mode=lld image with ls's segments and NVRAM.
Superblock plan_lld(const DiskSpec& spec, const LldSpec& ls);
// The disk options of ls's cleaner policy and partial-segment threshold;
// throws Error (EINVAL) for an unknown policy.
DiskOptions lld_options(const LldSpec& ls);
// An lld disk in a steady state: the region filled with 1 MiB writes, then
// random synchronous updates (no idle time) until the segments' capacity has
// been written warm_passes times over (or spec.warmup_writes), closed
// cleanly; the image's bytes, and the warm-up's report in *warm.
std::vector<std::byte> prepared_lld_image(const DiskSpec& spec, const LldSpec& ls,
                                          const Superblock& sb, nlohmann::json* warm);

int cmd_fig10(const DiskSpec& spec, const BurstSpec& bs, const LldSpec& ls);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_FIG10_BENCH_H_
