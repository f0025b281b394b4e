// Cleaner victim selection for mode=lld (paper 001, sections 3.4 and 5.5;
// Rosenblum and Ousterhout's Sprite LFS, section 3.5), and the analytic LFS
// write cost the measured cleaner cost is reported beside.
//
//   greedy        the segment with the fewest live blocks.
//   cost-benefit  the highest benefit/cost = (1 - u) * age / (1 + u), with
//                 u = live_blocks / capacity_blocks and age = now_seq -
//                 last_seq (ages in segment-write seqs, not seconds: the
//                 simulated clock is not the image's history).
//
// Candidates are full segments with fewer live blocks than capacity: never
// the open segment, never a free one, never one cleaning would free nothing
// from. A full segment with no live block is an outright win under both
// policies (nothing to read or rewrite: write cost 1), ahead of any other,
// unless skip_empty excludes it: a disk that frees empty full segments at its
// next checkpoint without cleaning them passes skip_empty = true, so the
// cleaner spends its work on segments that need copying.
//
// Deterministic tie-breaking, so runs repeat exactly:
//   greedy:        fewest live, then oldest (smallest last_seq), then the
//                  lowest segment number.
//   cost-benefit:  highest score (compared exactly, in integers), then
//                  fewest live, then the lowest segment number.
//
// Thread-safety: pure functions.
#ifndef VLD_CORE_LLD_CLEANER_POLICY_H_
#define VLD_CORE_LLD_CLEANER_POLICY_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/lld/segment_usage.h"

namespace vld {

enum class CleanerPolicy : uint8_t { kGreedy, kCostBenefit };

// "greedy" or "cost-benefit" (the cleaner_policy= values); nullopt otherwise.
std::optional<CleanerPolicy> parse_cleaner_policy(std::string_view name);
std::string_view cleaner_policy_name(CleanerPolicy policy);

// The segment to clean next; nullopt if no segment is a candidate. With
// skip_empty, full segments with 0 live blocks are not candidates.
// REQUIRES: now_seq >= every candidate's last_seq.
std::optional<uint32_t> pick_victim(const SegmentUsageTable& table, CleanerPolicy policy,
                                    uint64_t now_seq, bool skip_empty = false);

// (1 - u) * age / (1 + u) with u = live_blocks / capacity_blocks, as a
// double for reports (pick_victim compares exactly, not through this).
// REQUIRES: live_blocks <= capacity_blocks, capacity_blocks > 0.
double cost_benefit_score(uint32_t live_blocks, uint32_t capacity_blocks, uint64_t age_seqs);

// Sprite LFS's write cost when cleaned segments have utilisation u: 2 / (1 - u)
// (read the segment, write its live part, write new data), 1 at u = 0 (an
// empty segment is not read), infinity at u = 1. REQUIRES: 0 <= u <= 1.
double lfs_write_cost(double utilization);

}  // namespace vld

#endif  // VLD_CORE_LLD_CLEANER_POLICY_H_
