// Command queueing in DiskController (sched=sptf): requests on real
// threads queue while the drive is busy and are chosen when it becomes
// free, in the time of a fake clock the test moves by hand.
//
// The drive: an ST19101 (256 sectors a track, 6 ms a revolution, 23.4375 us
// a sector, 100 us overhead), mode=inplace, 64 MiB (32 cylinders). Request A
// writes block 0 (sectors 0-7) at time 0: the overhead passes sector 0, so it
// waits a revolution and ends at 6000 + 187.5 us with the head after sector
// 8. Then, while the drive is busy, B (the last block, cylinder 31), C
// (block 2, sectors 16-23) and D (block 4, sectors 32-39) arrive in that
// order. From A's end C is 8 sectors ahead: overhead (4.27 sectors), then
// 3.73 sectors of rotation (87.5 us); from C's end D is the same; B needs a
// seek across 31 cylinders. SPTF: C, D, B, each 100 + 87.5 + 187.5 = 375 us
// for C and D. FIFO order would be B, C, D.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/disk_controller.h"
#include "core/inplace/inplace_disk.h"
#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExport = 64ull << 20;

// Time stands still until the test sets it; waits last until a notify.
class FakeClock final : public DiskController::Clock {
 public:
  SimTime now() const override { return SimTime{SimDuration{now_ns_.load()}}; }
  void wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                  SimTime) const override {
    cv.wait(lock);
  }
  void set(SimDuration d) { now_ns_.store(d.count()); }

 private:
  std::atomic<int64_t> now_ns_{0};
};

struct Fixture {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  std::unique_ptr<DiskController> dc;
  std::vector<std::byte> data = std::vector<std::byte>(kBlock, std::byte{7});

  Fixture(SchedPolicy policy, SimDuration aging) {
    const Superblock sb = test::st19101_superblock(DiskMode::kInplace, kExport);
    dc = std::make_unique<DiskController>(std::make_unique<InplaceDisk>(
        std::make_unique<MemoryBackingStore>(sb.image_bytes()), sb));
    dc->set_scheduler(policy, aging, clock);
  }
  SimTime at_us(int64_t us) const { return kSimEpoch + std::chrono::microseconds(us); }

  // Waits (wall time, bounded) until `n` requests are queued.
  void await_queued(size_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (dc->queued() < n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    ASSERT_EQ(dc->queued(), n);
  }
};

// A at 0, then B, C, D queued behind it (arrivals 1, 2, 3 us); then time
// moves past everything. The timings of B, C, D.
std::vector<RequestTiming> run_abcd(Fixture& f) {
  const uint64_t blocks[] = {kExport / kBlock - 1, 2, 4};  // B, C, D
  const RequestTiming a = f.dc->write(0, f.data, false, f.at_us(0));
  EXPECT_EQ(a.start, f.at_us(0));
  std::vector<RequestTiming> t(3);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      t[i] = f.dc->write(blocks[i] * kBlock, f.data, false, f.at_us(1 + i));
    });
    f.await_queued(static_cast<size_t>(i) + 1);  // arrival order = queue order
  }
  EXPECT_EQ(f.dc->busy_until(), a.end);  // nobody served while the clock stood still
  f.clock->set(std::chrono::hours(1));
  f.dc->clock_advanced();
  for (auto& th : threads) th.join();
  EXPECT_EQ(f.dc->queued(), 0u);
  return t;
}

TEST(CommandQueueController, SptfServesTheQueueNearestFirstWhenTheDriveIsFree) {
  Fixture f(SchedPolicy::kSptf, kDefaultSchedAging);
  const std::vector<RequestTiming> t = run_abcd(f);
  const RequestTiming &b = t[0], &c = t[1], &d = t[2];
  // C at the moment A ended, then D, then B: back to back, simulated.
  EXPECT_EQ(c.start, f.at_us(0) + std::chrono::nanoseconds(6'187'500));
  EXPECT_EQ(d.start, c.end);
  EXPECT_EQ(b.start, d.end);
  EXPECT_NEAR(to_us(c.end - c.start), 375.0, 0.01);
  EXPECT_NEAR(to_us(d.end - d.start), 375.0, 0.01);
  EXPECT_NEAR(to_us(c.service.rotation), 87.5, 0.01);
  EXPECT_GT(b.service.seek, SimDuration{0});
  const SchedCounts s = f.dc->stats().sched;
  EXPECT_EQ(s.picks, 4u);      // A alone, then C, D, B
  EXPECT_EQ(s.reordered, 2u);  // C and D went before B
  EXPECT_EQ(s.aged, 0u);
  EXPECT_EQ(s.max_queue_depth, 3u);
  EXPECT_EQ(s.queue_depth_sum, 1u + 3u + 2u + 1u);
  EXPECT_EQ(f.dc->sched_policy(), SchedPolicy::kSptf);
}

TEST(CommandQueueController, AgedRequestsGoFirstInArrivalOrder) {
  // Every queued request has waited past a 1 us bound when A ends: FIFO.
  Fixture f(SchedPolicy::kSptf, std::chrono::microseconds(1));
  const std::vector<RequestTiming> t = run_abcd(f);
  const RequestTiming &b = t[0], &c = t[1], &d = t[2];
  EXPECT_EQ(b.start, f.at_us(0) + std::chrono::nanoseconds(6'187'500));
  EXPECT_EQ(c.start, b.end);
  EXPECT_EQ(d.start, c.end);
  const SchedCounts s = f.dc->stats().sched;
  EXPECT_EQ(s.reordered, 0u);
  EXPECT_EQ(s.aged, 3u);
}

TEST(CommandQueueController, CloseFailsQueuedRequestsInsteadOfLeavingThemWaiting) {
  Fixture f(SchedPolicy::kSptf, kDefaultSchedAging);
  f.dc->write(0, f.data, false, f.at_us(0));
  int err = 0;
  std::thread th([&] {
    try {
      f.dc->write(8 * kBlock, f.data, false, f.at_us(1));
    } catch (const Error& e) {
      err = e.err();
    }
  });
  f.await_queued(1);
  f.dc->close();
  th.join();
  EXPECT_EQ(err, ESHUTDOWN);
  EXPECT_EQ(f.dc->queued(), 0u);
}

TEST(CommandQueueController, WithoutArrivalTimesNothingQueues) {
  // latency=none: served in lock order at once, even with sched=sptf.
  Fixture f(SchedPolicy::kSptf, kDefaultSchedAging);
  const RequestTiming a = f.dc->write(0, f.data, false, std::nullopt);
  const RequestTiming b = f.dc->write((kExport / kBlock - 1) * kBlock, f.data, false, std::nullopt);
  EXPECT_EQ(b.start, a.end);
  EXPECT_EQ(f.dc->stats().sched.picks, 0u);
}

TEST(CommandQueueController, PositioningEstimateIsTheLocateTimeOfTheAccess) {
  Fixture f(SchedPolicy::kFifo, kDefaultSchedAging);
  const RequestTiming a = f.dc->write(0, f.data, false, std::nullopt);
  // From A's end block 2 is 87.5 us of rotation away, for reads and writes.
  EXPECT_NEAR(to_us(f.dc->positioning_estimate(true, 2 * kBlock, kBlock, a.end)), 87.5, 0.01);
  EXPECT_NEAR(to_us(f.dc->positioning_estimate(false, 2 * kBlock, kBlock, a.end)), 87.5, 0.01);
  EXPECT_EQ(f.dc->sched_policy(), SchedPolicy::kFifo);
}

}  // namespace
}  // namespace vld
