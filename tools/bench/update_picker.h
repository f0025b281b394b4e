// Which block each random update of the in-process benchmarks goes to.
//
//   uniform       every block of the region alike: paper 001's Figure 8
//                 workload ("we repeatedly choose a random 4 KB block to
//                 update", section 5.3), the default.
//   hot-and-cold  Sprite LFS's locality workload (Rosenblum and Ousterhout,
//                 section 3.5): a share of the updates (hot_writes) goes to a
//                 share of the blocks (hot_blocks), the rest to the others;
//                 uniform within each group. The hot blocks are the region's
//                 first ones, so the in-order fill puts them together; the
//                 warm-up's updates scatter them.
//
// Invariants: a uniform picker draws exactly as
// std::uniform_int_distribution(0, region - 1) on the same generator, so
// every published run repeats unchanged; each draw is in [0, region).
//
// Thread-safety: a picker is a value; operator() uses only the generator
// passed in.
#ifndef VLD_TOOLS_BENCH_UPDATE_PICKER_H_
#define VLD_TOOLS_BENCH_UPDATE_PICKER_H_

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "core/util/error.h"

namespace vld {

// hot_writes_percent of the updates to hot_blocks_percent of the blocks;
// {0, 0}: uniform.
struct HotCold {
  double hot_writes_percent = 0;
  double hot_blocks_percent = 0;
  bool uniform() const { return hot_blocks_percent == 0; }
};

// "" (uniform) or "W/B", e.g. "90/10": W% of the updates to B% of the
// blocks, each in (0, 100). Throws Error(EINVAL) naming the option otherwise.
inline HotCold parse_hot_cold(const std::string& text) {
  if (text.empty()) return {};
  const std::string what = "--hot-cold " + text +
                           ": expected WRITES/BLOCKS percents, each between 0 and 100, such as "
                           "90/10 (90% of the updates to 10% of the blocks)";
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw Error(what, EINVAL);
  HotCold hc;
  try {
    size_t used_w = 0, used_b = 0;
    hc.hot_writes_percent = std::stod(text.substr(0, slash), &used_w);
    hc.hot_blocks_percent = std::stod(text.substr(slash + 1), &used_b);
    if (used_w != slash || used_b != text.size() - slash - 1) throw Error(what, EINVAL);
  } catch (const std::logic_error&) {  // stod: no number, or out of range
    throw Error(what, EINVAL);
  }
  const auto inside = [](double p) { return p > 0 && p < 100; };
  if (!inside(hc.hot_writes_percent) || !inside(hc.hot_blocks_percent)) throw Error(what, EINVAL);
  return hc;
}

class UpdatePicker {
 public:
  // REQUIRES: region > 0; with hot-and-cold, region >= 2 (a block in each group).
  UpdatePicker(uint64_t region, HotCold hc) : all_(0, region - 1) {
    assert(region > 0);
    if (hc.uniform()) return;
    assert(region >= 2);
    const auto hot = static_cast<uint64_t>(
        std::llround(static_cast<double>(region) * hc.hot_blocks_percent / 100.0));
    hot_blocks_ = std::clamp<uint64_t>(hot, 1, region - 1);
    hot_share_ = std::bernoulli_distribution(hc.hot_writes_percent / 100.0);
    hot_ = std::uniform_int_distribution<uint64_t>(0, hot_blocks_ - 1);
    cold_ = std::uniform_int_distribution<uint64_t>(hot_blocks_, region - 1);
  }

  // The next update's block, in [0, region).
  uint64_t operator()(std::mt19937_64& rng) {
    if (hot_blocks_ == 0) return all_(rng);
    return hot_share_(rng) ? hot_(rng) : cold_(rng);
  }

  uint64_t hot_blocks() const { return hot_blocks_; }  // 0: uniform

 private:
  std::uniform_int_distribution<uint64_t> all_;
  uint64_t hot_blocks_ = 0;
  std::bernoulli_distribution hot_share_;
  std::uniform_int_distribution<uint64_t> hot_, cold_;
};

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_UPDATE_PICKER_H_
