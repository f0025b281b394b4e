// IdleGapPredictor: the expected end of an idle period from the periods
// seen so far and how long this one has lasted (idle work starts only when
// the expected gap covers it: docs/compaction.md section 2a). Times are hand-picked milliseconds.
#include "core/idle_gap_predictor.h"

#include <gtest/gtest.h>

namespace vld {
namespace {

SimTime at_ms(double ms) { return kSimEpoch + sim_ms(ms); }

TEST(IdleGapPredictor, WithoutArrivalTimesTheEndIsUnknown) {
  IdleGapPredictor p;
  EXPECT_EQ(p.expected_end(at_ms(10), at_ms(10)), kUnknownIdleEnd);
  EXPECT_EQ(p.expected_end(at_ms(10), at_ms(500)), kUnknownIdleEnd);
}

TEST(IdleGapPredictor, WithNoHistoryAPeriodIsExpectedToLastAsLongAgainAsItHas) {
  IdleGapPredictor p;
  p.saw_arrival();
  EXPECT_EQ(p.expected_end(at_ms(100), at_ms(100)), at_ms(100));  // nothing fits at the start
  EXPECT_EQ(p.expected_end(at_ms(100), at_ms(130)), at_ms(160));
}

TEST(IdleGapPredictor, TheShortestRecentPeriodUntilItIsOutlasted) {
  IdleGapPredictor p;
  p.observe(sim_ms(50));
  p.observe(sim_ms(30));
  p.observe(sim_ms(40));
  EXPECT_EQ(p.history_size(), 3u);
  // Began at 1000 ms: the shortest (30 ms) while it has lasted less.
  EXPECT_EQ(p.expected_end(at_ms(1000), at_ms(1000)), at_ms(1030));
  EXPECT_EQ(p.expected_end(at_ms(1000), at_ms(1029)), at_ms(1030));
  // Lasted 30 ms, then 35: every recent period was shorter; as long again.
  EXPECT_EQ(p.expected_end(at_ms(1000), at_ms(1030)), at_ms(1060));
  EXPECT_EQ(p.expected_end(at_ms(1000), at_ms(1035)), at_ms(1070));
}

TEST(IdleGapPredictor, RemembersTheLastEightPeriodsAndCountsQueuedRequestsAsZero) {
  IdleGapPredictor p;
  p.observe(sim_ms(5));  // the shortest, then 8 periods of 20 ms push it out
  for (int i = 0; i < 7; ++i) p.observe(sim_ms(20));
  EXPECT_EQ(p.expected_end(at_ms(0), at_ms(0)), at_ms(5));
  p.observe(sim_ms(20));
  EXPECT_EQ(p.history_size(), IdleGapPredictor::kHistory);
  EXPECT_EQ(p.expected_end(at_ms(0), at_ms(0)), at_ms(20));
  p.observe(-sim_ms(3));  // arrived before the last request ended: no idle time
  EXPECT_EQ(p.expected_end(at_ms(0), at_ms(0)), at_ms(0));
}

}  // namespace
}  // namespace vld
