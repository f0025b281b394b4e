// mode=lld's segment usage table and cleaner victim selection
// (core/lld/segment_usage.h, core/lld/cleaner_policy.h): state transitions
// and totals, restoring from checkpoint rows, hand-computed picks for both
// policies (ties, all-full, empty segments, skip_empty), and a randomized
// comparison against a brute-force reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "core/lld/cleaner_policy.h"
#include "core/lld/segment_usage.h"

namespace vld {
namespace {

// Opens segment, writes live blocks at seq, closes it.
void fill(SegmentUsageTable& t, uint32_t segment, uint32_t live, uint64_t seq) {
  t.open(segment);
  for (uint32_t i = 0; i < live; ++i) t.write_block(segment, seq);
  t.close(segment);
}

constexpr auto kGreedy = CleanerPolicy::kGreedy;
constexpr auto kCostBenefit = CleanerPolicy::kCostBenefit;

using Victims = std::pair<std::optional<uint32_t>, std::optional<uint32_t>>;
// The victims of greedy and of cost-benefit at now_seq.
Victims victims(const SegmentUsageTable& t, uint64_t now_seq) {
  return {pick_victim(t, kGreedy, now_seq), pick_victim(t, kCostBenefit, now_seq)};
}
constexpr std::nullopt_t kNone = std::nullopt;

TEST(LldSegmentUsage, TransitionsAndTotals) {
  SegmentUsageTable t(4, 10);
  EXPECT_EQ(t.free_count(), 4u);
  EXPECT_EQ(t.lowest_free(), 0u);
  t.open(0);
  t.write_block(0, 1);
  t.write_block(0, 2);
  EXPECT_EQ(t.open_segment(), 0u);
  EXPECT_EQ(t.state(0), SegmentState::kOpen);
  EXPECT_EQ(t.usage(0), (SegmentUsage{2, 2}));
  EXPECT_EQ(t.free_count(), 3u);
  EXPECT_EQ(t.lowest_free(), 1u);
  t.kill_block(0);  // overwritten while its segment is still open
  t.close(0);
  EXPECT_FALSE(t.open_segment().has_value());
  fill(t, 1, 3, 3);
  EXPECT_EQ(t.total_live_blocks(), 4u);
  t.kill_block(0);
  t.free_segment(0);
  EXPECT_EQ(t.state(0), SegmentState::kFree);
  EXPECT_EQ(t.usage(0), (SegmentUsage{0, 0}));  // a free segment checkpoints as {0, 0}
  EXPECT_EQ(t.free_count(), 3u);
  EXPECT_EQ(t.total_live_blocks(), 3u);
  ASSERT_TRUE(t.consistent());
}

TEST(LldSegmentUsage, BrokenInvariantsAssert) {
#ifdef NDEBUG
  GTEST_SKIP() << "asserts compiled out";
#else
  SegmentUsageTable t(2, 2);
  EXPECT_DEATH(t.write_block(0, 1), "");  // not open
  t.open(0);
  EXPECT_DEATH(t.open(1), "");  // one open segment at a time
  t.write_block(0, 1);
  t.write_block(0, 1);
  EXPECT_DEATH(t.write_block(0, 1), "");  // live > capacity
  t.close(0);
  EXPECT_DEATH(t.free_segment(0), "");  // live blocks left
  EXPECT_DEATH(t.kill_block(1), "");    // free segment has none
#endif
}

TEST(LldSegmentUsage, RestoreFromCheckpointRows) {
  const std::vector<SegmentUsage> rows = {{0, 0}, {5, 7}, {0, 3}, {2, 9}, {0, 0}};
  SegmentUsageTable t = SegmentUsageTable::restore(rows, 10, 2u);
  ASSERT_TRUE(t.consistent());
  EXPECT_EQ(t.state(0), SegmentState::kFree);
  EXPECT_EQ(t.state(1), SegmentState::kFull);
  EXPECT_EQ(t.state(2), SegmentState::kOpen);  // open whatever its live count
  EXPECT_EQ(t.state(3), SegmentState::kFull);
  EXPECT_EQ(t.state(4), SegmentState::kFree);
  EXPECT_EQ(t.open_segment(), 2u);
  EXPECT_EQ(t.free_count(), 2u);
  EXPECT_EQ(t.total_live_blocks(), 7u);
  EXPECT_EQ(t.capacity_blocks(), 10u);
  EXPECT_EQ(t.usage_table(), rows);
  EXPECT_EQ(t.empty_full_count(), 0u);
  // The restored open segment takes writes and closes as usual.
  t.write_block(2, 10);
  t.close(2);
  EXPECT_EQ(t.usage(2), (SegmentUsage{1, 10}));
  // With no open segment, a row with no live block is free, its last_seq kept.
  t = SegmentUsageTable::restore(rows, 10, std::nullopt);
  ASSERT_TRUE(t.consistent());
  EXPECT_FALSE(t.open_segment().has_value());
  EXPECT_EQ(t.state(2), SegmentState::kFree);
  EXPECT_EQ(t.usage(2), (SegmentUsage{0, 3}));
  EXPECT_EQ(t.free_count(), 3u);
  EXPECT_EQ(t.lowest_free(), 0u);
  // An open segment with live blocks.
  t = SegmentUsageTable::restore(rows, 10, 3u);
  EXPECT_EQ(t.state(3), SegmentState::kOpen);
  EXPECT_EQ(t.free_count(), 3u);
  ASSERT_TRUE(t.consistent());
}

TEST(LldSegmentUsage, UsageTableRoundTripsThroughRestore) {
  SegmentUsageTable t(5, 4);
  fill(t, 0, 4, 1);
  fill(t, 1, 3, 2);
  fill(t, 2, 2, 3);
  t.open(3);
  t.write_block(3, 4);
  t.kill_block(2);
  t.kill_block(2);  // seg 2: full and empty, to be freed at the next checkpoint
  EXPECT_EQ(t.empty_full_count(), 1u);
  SegmentUsageTable r = SegmentUsageTable::restore(t.usage_table(), 4, t.open_segment());
  ASSERT_TRUE(r.consistent());
  EXPECT_EQ(r.usage_table(), t.usage_table());
  EXPECT_EQ(r.total_live_blocks(), t.total_live_blocks());
  EXPECT_EQ(r.open_segment(), 3u);
  for (uint32_t s : {0u, 1u, 3u, 4u}) EXPECT_EQ(r.state(s), t.state(s)) << s;
  EXPECT_EQ(r.state(2), SegmentState::kFree);  // the empty full one comes back free
  EXPECT_EQ(r.empty_full_count(), 0u);
  t.free_segment(2);
  EXPECT_EQ(t.empty_full_count(), 0u);
}

TEST(LldSegmentUsage, RestoreAssertsItsPreconditions) {
#ifdef NDEBUG
  GTEST_SKIP() << "asserts compiled out";
#else
  const std::vector<SegmentUsage> over = {{0, 0}, {11, 2}};
  EXPECT_DEATH(SegmentUsageTable::restore(over, 10, std::nullopt), "");  // live > capacity
  const std::vector<SegmentUsage> rows = {{0, 0}, {1, 2}};
  EXPECT_DEATH(SegmentUsageTable::restore(rows, 10, 2u), "");  // no such segment
  EXPECT_DEATH(SegmentUsageTable::restore({}, 10, std::nullopt), "");
#endif
}

TEST(LldCleanerPolicy, GreedyAndCostBenefitDisagree) {
  // capacity 10, now 40:
  //   seg 0: 2 live, newest write 35: age 5,  (1 - .2) * 5 / 1.2  =  3.33
  //   seg 1: 5 live, newest write 2:  age 38, (1 - .5) * 38 / 1.5 = 12.67
  //   seg 2: 8 live, newest write 1:  age 39, (1 - .8) * 39 / 1.8 =  4.33
  SegmentUsageTable t(4, 10);
  fill(t, 2, 8, 1);
  fill(t, 1, 5, 2);
  fill(t, 0, 2, 35);
  EXPECT_EQ(victims(t, 40), (Victims{0u, 1u}));
  EXPECT_NEAR(cost_benefit_score(5, 10, 38), 38.0 / 3, 1e-12);
  EXPECT_NEAR(cost_benefit_score(2, 10, 5), 10.0 / 3, 1e-12);
}

TEST(LldCleanerPolicy, NeverOpenOrFree) {
  SegmentUsageTable t(3, 10);
  fill(t, 0, 9, 1);
  t.open(1);  // open with 1 live: fewest, but not a candidate
  t.write_block(1, 2);
  // seg 2 free: 0 live, not a candidate
  EXPECT_EQ(victims(t, 5), (Victims{0u, 0u}));
}

TEST(LldCleanerPolicy, AllFull) {
  SegmentUsageTable t(3, 4);
  fill(t, 0, 4, 1);
  fill(t, 1, 4, 2);
  fill(t, 2, 4, 3);
  // Every segment wholly live: cleaning frees nothing, so no victim.
  EXPECT_EQ(victims(t, 10), (Victims{kNone, kNone}));
  t.kill_block(2);  // no free segment left, one block dead
  EXPECT_EQ(victims(t, 10), (Victims{2u, 2u}));
}

TEST(LldCleanerPolicy, EmptySegmentIsAFreeWin) {
  // seg 1 empty but written just now (age 0, score 0); seg 0 old and sparse.
  SegmentUsageTable t(2, 10);
  fill(t, 0, 1, 1);
  fill(t, 1, 1, 100);
  t.kill_block(1);
  EXPECT_EQ(victims(t, 100), (Victims{1u, 1u}));
}

TEST(LldCleanerPolicy, SkipEmptyLeavesEmptySegmentsToTheCheckpoint) {
  // As above: seg 1 empty, seg 0 with one live block.
  SegmentUsageTable t(3, 10);
  fill(t, 0, 1, 1);
  fill(t, 1, 1, 100);
  t.kill_block(1);
  for (CleanerPolicy p : {kGreedy, kCostBenefit}) {
    EXPECT_EQ(pick_victim(t, p, 100, /*skip_empty=*/false), 1u);
    EXPECT_EQ(pick_victim(t, p, 100, /*skip_empty=*/true), 0u);
  }
  // Only empty full segments (and an open one, also empty): nothing to clean.
  t.kill_block(0);
  t.open(2);
  for (CleanerPolicy p : {kGreedy, kCostBenefit}) {
    EXPECT_FALSE(pick_victim(t, p, 100, true).has_value());
    EXPECT_EQ(pick_victim(t, p, 100, false), 0u);  // the older of the two empty ones
  }
}

TEST(LldCleanerPolicy, TiesAreDeterministic) {
  SegmentUsageTable t(6, 10);
  // Cost-benefit tie: 2 live age 3 -> 8*3/12 = 2; 5 live age 6 -> 5*6/15 = 2.
  fill(t, 3, 5, 4);
  fill(t, 4, 2, 7);
  EXPECT_EQ(pick_victim(t, kCostBenefit, 10), 4u);  // equal score: fewer live
  fill(t, 1, 2, 7);
  EXPECT_EQ(pick_victim(t, kCostBenefit, 10), 1u);  // and equal live: lower number
  // Greedy: 2 live in segs 1 and 4 (seq 7); seg 5 also 2 live but older.
  EXPECT_EQ(pick_victim(t, kGreedy, 10), 1u);
  fill(t, 5, 2, 5);
  EXPECT_EQ(pick_victim(t, kGreedy, 10), 5u);  // equal live: oldest
}

TEST(LldCleanerPolicy, NamesAndWriteCost) {
  EXPECT_EQ(parse_cleaner_policy("greedy"), kGreedy);
  EXPECT_EQ(parse_cleaner_policy("cost-benefit"), kCostBenefit);
  EXPECT_FALSE(parse_cleaner_policy("costbenefit").has_value());
  EXPECT_EQ(cleaner_policy_name(kCostBenefit), "cost-benefit");
  EXPECT_EQ(lfs_write_cost(0.0), 1.0);
  EXPECT_DOUBLE_EQ(lfs_write_cost(0.5), 4.0);
  EXPECT_DOUBLE_EQ(lfs_write_cost(0.8), 10.0);
  EXPECT_TRUE(std::isinf(lfs_write_cost(1.0)));
}

// The reference: every candidate ranked by an explicit sort key, scores as
// reduced fractions.
std::optional<uint32_t> brute_force(const SegmentUsageTable& t, CleanerPolicy p, uint64_t now,
                                    bool skip_empty) {
  const uint64_t c = t.capacity_blocks();
  struct Row { uint32_t seg; uint64_t live, last, num, den; };
  std::vector<Row> rows;
  for (uint32_t s = 0; s < t.segment_count(); ++s) {
    const SegmentUsage& u = t.usage(s);
    if (t.state(s) != SegmentState::kFull || u.live_blocks == c) continue;
    if (skip_empty && u.live_blocks == 0) continue;
    uint64_t num = (c - u.live_blocks) * (now - u.last_seq), den = c + u.live_blocks;
    const uint64_t g = std::gcd(num, den);
    rows.push_back({s, u.live_blocks, u.last_seq, num / g, den / g});
  }
  if (rows.empty()) return std::nullopt;
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (p == kGreedy) return std::tie(a.live, a.last, a.seg) < std::tie(b.live, b.last, b.seg);
    if ((a.live == 0) != (b.live == 0)) return a.live == 0;
    if (a.num != b.num || a.den != b.den) return a.num * b.den > b.num * a.den;
    return std::tie(a.live, a.seg) < std::tie(b.live, b.seg);
  });
  return rows.front().seg;
}

TEST(LldCleanerPolicy, RandomizedAgainstBruteForce) {
  std::mt19937 rng(14);
  for (int round = 0; round < 50; ++round) {
    SegmentUsageTable t(12, 8);
    uint64_t seq = 0;
    for (int op = 0; op < 400; ++op) {
      const uint32_t s = rng() % 12;
      switch (rng() % 4) {
        case 0:
          if (!t.open_segment() && t.lowest_free()) t.open(*t.lowest_free());
          break;
        case 1:
          if (t.open_segment() && t.usage(*t.open_segment()).live_blocks < 8)
            t.write_block(*t.open_segment(), ++seq);
          else if (t.open_segment()) t.close(*t.open_segment());
          break;
        case 2:
          if (t.state(s) != SegmentState::kFree && t.usage(s).live_blocks > 0) t.kill_block(s);
          break;
        default:
          if (t.state(s) == SegmentState::kFull && t.usage(s).live_blocks == 0) t.free_segment(s);
      }
      ASSERT_TRUE(t.consistent());
      const uint64_t now = seq + rng() % 3;
      for (CleanerPolicy p : {kGreedy, kCostBenefit}) {
        for (bool skip : {false, true})
          ASSERT_EQ(pick_victim(t, p, now, skip), brute_force(t, p, now, skip))
              << round << " " << op << " " << skip;
      }
    }
  }
}

}  // namespace
}  // namespace vld
