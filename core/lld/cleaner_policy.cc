#include "core/lld/cleaner_policy.h"

#include <cassert>
#include <limits>

namespace vld {

namespace {

struct Candidate {
  uint32_t segment;
  uint32_t live;
  uint64_t last_seq;
  uint64_t age;
};

// True if a should be cleaned before b under greedy.
bool greedy_before(const Candidate& a, const Candidate& b) {
  if (a.live != b.live) return a.live < b.live;
  if (a.last_seq != b.last_seq) return a.last_seq < b.last_seq;
  return a.segment < b.segment;
}

// True if a should be cleaned before b under cost-benefit. Scores
// (C - L) * age / (C + L) are compared by cross-multiplying in 128 bits.
bool cost_benefit_before(const Candidate& a, const Candidate& b, uint32_t capacity) {
  if ((a.live == 0) != (b.live == 0)) return a.live == 0;  // empty: a free win
  using U128 = unsigned __int128;
  const U128 lhs = U128{capacity - a.live} * a.age * (capacity + b.live);
  const U128 rhs = U128{capacity - b.live} * b.age * (capacity + a.live);
  if (lhs != rhs) return lhs > rhs;
  if (a.live != b.live) return a.live < b.live;
  return a.segment < b.segment;
}

}  // namespace

std::optional<CleanerPolicy> parse_cleaner_policy(std::string_view name) {
  if (name == "greedy") return CleanerPolicy::kGreedy;
  if (name == "cost-benefit") return CleanerPolicy::kCostBenefit;
  return std::nullopt;
}

std::string_view cleaner_policy_name(CleanerPolicy policy) {
  return policy == CleanerPolicy::kGreedy ? "greedy" : "cost-benefit";
}

std::optional<uint32_t> pick_victim(const SegmentUsageTable& table, CleanerPolicy policy,
                                    uint64_t now_seq, bool skip_empty) {
  const uint32_t capacity = table.capacity_blocks();
  std::optional<Candidate> best;
  for (uint32_t s = 0; s < table.segment_count(); ++s) {
    const SegmentUsage& u = table.usage(s);
    if (table.state(s) != SegmentState::kFull || u.live_blocks >= capacity) continue;
    if (skip_empty && u.live_blocks == 0) continue;
    assert(now_seq >= u.last_seq);
    const Candidate c{s, u.live_blocks, u.last_seq, now_seq - u.last_seq};
    const bool better = !best.has_value() ||
                        (policy == CleanerPolicy::kGreedy ? greedy_before(c, *best)
                                                          : cost_benefit_before(c, *best, capacity));
    if (better) best = c;
  }
  if (!best.has_value()) return std::nullopt;
  return best->segment;
}

double cost_benefit_score(uint32_t live_blocks, uint32_t capacity_blocks, uint64_t age_seqs) {
  assert(capacity_blocks > 0 && live_blocks <= capacity_blocks);
  const double u = static_cast<double>(live_blocks) / capacity_blocks;
  return (1.0 - u) * static_cast<double>(age_seqs) / (1.0 + u);
}

double lfs_write_cost(double utilization) {
  assert(utilization >= 0.0 && utilization <= 1.0);
  if (utilization == 0.0) return 1.0;
  if (utilization >= 1.0) return std::numeric_limits<double>::infinity();
  return 2.0 / (1.0 - utilization);
}

}  // namespace vld
