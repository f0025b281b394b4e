// The scheduler's choice on hand-made queues (core/sched/command_queue.h).
#include "core/sched/command_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace vld {
namespace {

SimTime at_us(int64_t us) { return kSimEpoch + std::chrono::microseconds(us); }
SimDuration us(int64_t n) { return std::chrono::microseconds(n); }

// Serves the whole queue, the drive free again `service` after each pick
// starts plus the picked command's positioning: the ids in service order.
std::vector<uint64_t> drain(std::vector<QueuedCommand> q, SimTime now, SchedPolicy p,
                            SimDuration aging, SimDuration service) {
  std::vector<uint64_t> order;
  while (!q.empty()) {
    const size_t i = pick_next(q, now, p, aging);
    order.push_back(q[i].id);
    now += q[i].positioning + service;
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return order;
}

TEST(CommandQueue, ParsesAndNamesPolicies) {
  EXPECT_EQ(parse_sched_policy("fifo"), SchedPolicy::kFifo);
  EXPECT_EQ(parse_sched_policy("sptf"), SchedPolicy::kSptf);
  EXPECT_EQ(parse_sched_policy("SPTF"), std::nullopt);
  EXPECT_EQ(parse_sched_policy(""), std::nullopt);
  EXPECT_STREQ(sched_policy_name(SchedPolicy::kFifo), "fifo");
  EXPECT_STREQ(sched_policy_name(SchedPolicy::kSptf), "sptf");
}

// Four commands: positioning 5, 1, 3 and 1 ms, arriving 0, 10, 20, 30 us.
std::vector<QueuedCommand> four() {
  return {{1, at_us(0), us(5000)}, {2, at_us(10), us(1000)},
          {3, at_us(20), us(3000)}, {4, at_us(30), us(1000)}};
}

TEST(CommandQueue, FifoServesByArrivalWhateverThePositioning) {
  EXPECT_EQ(pick_next(four(), at_us(100), SchedPolicy::kFifo), 0u);
  EXPECT_EQ(drain(four(), at_us(100), SchedPolicy::kFifo, kDefaultSchedAging, us(0)),
            (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST(CommandQueue, SptfServesShortestPositioningTiesByArrival) {
  // 2 and 4 tie at 1 ms: 2 arrived first.
  EXPECT_EQ(pick_next(four(), at_us(100), SchedPolicy::kSptf), 1u);
  EXPECT_EQ(drain(four(), at_us(100), SchedPolicy::kSptf, kDefaultSchedAging, us(0)),
            (std::vector<uint64_t>{2, 4, 3, 1}));
}

TEST(CommandQueue, AgedCommandGoesFirstOldestFirst) {
  // At 7 ms with a 6 ms bound: 1 (waited 7 ms) is aged, the rest are not.
  EXPECT_EQ(pick_next(four(), at_us(7000), SchedPolicy::kSptf, us(6000)), 0u);
  // Each pick costs its positioning + 1 ms: picks at 100 us (2: +2 ms), 2.1 ms
  // (4: +2 ms), then 4.1 ms. With a 3 ms bound: at 100 us nothing is aged:
  // 2; at 2.1 ms nothing: 4; at 4.1 ms 1 (waited 4.1 ms) and 3 (4.08 ms)
  // both are: 1, the older, before 3, whose positioning is shorter.
  EXPECT_EQ(drain(four(), at_us(100), SchedPolicy::kSptf, us(3000), us(1000)),
            (std::vector<uint64_t>{2, 4, 1, 3}));
  // Waiting exactly the bound is not yet aged.
  std::vector<QueuedCommand> q = {{1, at_us(0), us(5000)}, {2, at_us(10), us(1000)}};
  EXPECT_EQ(pick_next(q, at_us(3000), SchedPolicy::kSptf, us(3000)), 1u);
  EXPECT_EQ(pick_next(q, at_us(3001), SchedPolicy::kSptf, us(3000)), 0u);
}

TEST(CommandQueue, SeveralAgedCommandsByArrivalNotPositioning) {
  std::vector<QueuedCommand> q = {{1, at_us(50), us(9000)}, {2, at_us(0), us(8000)},
                                  {3, at_us(200), us(10)}};
  // At 1 ms with a 0.5 ms bound, 1 and 2 are aged: 2 arrived first.
  EXPECT_EQ(pick_next(q, at_us(1000), SchedPolicy::kSptf, us(500)), 1u);
}

TEST(CommandQueue, ZeroPositioningIsNoOpinionServedInArrivalOrder) {
  // Flushes, trims, vld writes: 0 each, so SPTF serves them as FIFO would,
  // and ahead of any command that needs the head to move.
  std::vector<QueuedCommand> q = {{1, at_us(0), us(2000)}, {2, at_us(5), us(0)},
                                  {3, at_us(6), us(0)}};
  EXPECT_EQ(drain(q, at_us(10), SchedPolicy::kSptf, kDefaultSchedAging, us(0)),
            (std::vector<uint64_t>{2, 3, 1}));
}

}  // namespace
}  // namespace vld
