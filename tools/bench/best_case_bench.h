// vld-bench best-case: what eager writing could cost at a utilization with
// no idle time, if free space were as kind as it can be: a bound for
// Figure 8's steady state.
//
// With no idle time nothing moves data, so the only free space is what the
// random updates free: holes left by the blocks they replace. The real
// steady state is worse than random holes in two ways that placement
// cannot undo: map sectors break block-sized holes into crumbs
// (vld.fragmented_free_fraction, 0.5 at 80%), and the writes use up the
// holes near the head faster than updates elsewhere make new ones. This
// bench removes both. For each write it draws a fresh free-space map of
// the window in which a fraction 1 - util of every track is free, in
// holes of --hole-sectors each at random (by default 9: a 4 KiB block and
// its map sector, so that every command fits one hole whole), puts the head
// on a random track of the middle cylinder at a random rotational
// position, and lets the EagerAllocator place the command (a block and a
// map sector) as VldDisk does. The mean service time is then what the
// nearest-run policy gets from ideal free space: a floor that the real
// steady state (vld-bench fig11 --idle-ms 0) can only approach from above
// once no empty track is left (before that, the fill's empty tracks are
// kinder than any holes), and the most that any ratio to update in place
// can be without idle time. Why uneven free space cannot beat it:
// docs/benchmarks.md, section 12.
//
// In-process and on simulated time only: each line is a deterministic
// function of the arguments.
//
// Thread-safety: single-threaded.
#ifndef VLD_TOOLS_BENCH_BEST_CASE_BENCH_H_
#define VLD_TOOLS_BENCH_BEST_CASE_BENCH_H_

#include <cstdint>
#include <string>
#include <vector>

namespace vld {

struct BestCaseSpec {
  std::string geometry = "st19101";
  std::vector<double> utils = {80};  // percent of each track's sectors in use
  uint32_t hole_sectors = 9;         // a free hole: 9 = one 4 KiB block + its map sector
  uint32_t window_cylinders = 32;    // as VldDisk's window= default
  uint64_t writes = 20000;
  uint64_t seed = 1;
};

// Prints one JSON object per utilization: {"util_pct", "mean_us",
// "breakdown_us": {...}, "stayed_on_track", "holes_per_track", ...}.
int cmd_best_case(const BestCaseSpec& spec);

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_BEST_CASE_BENCH_H_
