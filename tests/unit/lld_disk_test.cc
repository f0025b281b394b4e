// LldDisk (mode=lld) on an in-memory image: data, NVRAM, the partial-segment
// rule, the cleaner, trims and zeros, idle work, reopening clean and after
// a stop without close, and the simulated time of the NVRAM path. Crashes
// with lost writes are the crash harness's (crash_harness_test.cc).
#include "core/lld/lld_disk.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "geometry/presets.h"
#include "tests/unit/lld_test_util.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;

struct LldConfig {
  uint64_t export_bytes = 4 << 20;
  uint64_t segment_bytes = 64 * 1024;  // small segments: many of them on a small disk
  uint64_t nvram_bytes = 256 * 1024;   // 62 records of 4 KiB
  uint32_t spare_percent = 25;
  LldOptions options;
};

Superblock lld_superblock(const LldConfig& c) {
  return plan_image(
      test::lld_format_options(c.export_bytes, c.spare_percent, c.segment_bytes, c.nvram_bytes));
}

// A disk over a store the test keeps, and a model of what it must read.
class LldRig {
 public:
  explicit LldRig(LldConfig c = {}) : c_(c), sb_(lld_superblock(c)) {
    store_ = std::make_unique<MemoryBackingStore>(sb_.image_bytes());
    format_store(*store_, sb_);
    model_.assign(c.export_bytes, std::byte{0});
    open();
  }

  void open() { disk_ = std::make_unique<LldDisk>(std::make_unique<ProxyStore>(*store_), sb_, c_.options); }
  // The process stops without close(): everything written stays (no lost
  // writes here; the crash harness loses them).
  void stop_and_reopen() {
    disk_.reset();
    open();
  }
  void close_and_reopen() {
    disk_->close();
    stop_and_reopen();
  }

  Completion write(uint64_t offset, uint64_t len, bool fua = false) {
    std::vector<std::byte> data(len);
    for (auto& b : data) b = static_cast<std::byte>(rng_() % 255 + 1);
    std::memcpy(model_.data() + offset, data.data(), len);
    Completion done = disk_->write(offset, data, fua, now_);
    now_ = done.end;
    return done;
  }
  void trim(uint64_t offset, uint64_t len) {
    const uint64_t first = (offset + kBlock - 1) / kBlock, end = (offset + len) / kBlock;
    for (uint64_t b = first; b < end; ++b) std::memset(model_.data() + b * kBlock, 0, kBlock);
    now_ = disk_->trim(offset, len, false, now_).end;
  }
  void zero(uint64_t offset, uint64_t len, bool may_trim) {
    std::memset(model_.data() + offset, 0, len);
    now_ = disk_->zero(offset, len, ZeroFlags{.may_trim = may_trim}, now_).end;
  }
  void flush() { now_ = disk_->flush(now_).end; }
  void idle() {
    while (auto step = disk_->idle_step(now_)) now_ = step->end;
  }
  // One step of idle work; false if there was none.
  bool idle_step() {
    auto step = disk_->idle_step(now_);
    if (step) now_ = step->end;
    return step.has_value();
  }

  // Every byte reads as the model says, and the disk agrees with itself.
  void expect_model() {
    std::vector<std::byte> out(c_.export_bytes);
    for (uint64_t at = 0; at < out.size(); at += 256 * 1024)
      now_ = disk_->read(at, std::span(out).subspan(at, 256 * 1024), now_).end;
    for (uint64_t b = 0; b < out.size() / kBlock; ++b)
      ASSERT_EQ(0, std::memcmp(out.data() + b * kBlock, model_.data() + b * kBlock, kBlock))
          << "block " << b;
    EXPECT_EQ(disk_->check_consistency(), "");
  }

  LldDisk& disk() { return *disk_; }
  LldStats stats() const { return disk_->report().stats; }
  SimTime now() const { return now_; }

 private:
  LldConfig c_;
  Superblock sb_;
  std::unique_ptr<MemoryBackingStore> store_;
  std::unique_ptr<LldDisk> disk_;
  std::vector<std::byte> model_;
  std::mt19937_64 rng_{42};
  SimTime now_ = kSimEpoch;
};

LldConfig no_nvram() {
  LldConfig c;
  c.nvram_bytes = 0;
  return c;
}

TEST(LldDisk, WritesReadBackThroughNvramAndAfterReopen) {
  LldRig rig;
  for (int i = 0; i < 40; ++i) rig.write((i * 7 % 1024) * kBlock, kBlock);
  rig.expect_model();
  EXPECT_EQ(rig.stats().nvram_records_written, 40u);
  EXPECT_EQ(rig.stats().segment_writes, 0u);  // all still in the buffer
  rig.stop_and_reopen();  // no close: the NVRAM region holds them
  rig.expect_model();
  rig.close_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, NvramWriteCostsNvramUsPerBlock) {
  LldRig rig;
  const SimTime before = rig.now();
  const Completion one = rig.write(0, kBlock);
  EXPECT_EQ(one.end - before, sim_us(20));
  const Completion four = rig.write(8 * kBlock, 4 * kBlock);
  EXPECT_EQ(four.end - one.end, sim_us(80));
  EXPECT_EQ(four.syncs, 1u);  // durable before the reply
}

TEST(LldDisk, AFullNvramDrainsWhollyIntoSegments) {
  LldRig rig;
  const uint64_t capacity = rig.disk().report().nvram_capacity_records;
  ASSERT_GT(capacity, 10u);
  for (uint64_t i = 0; i <= capacity; ++i) rig.write(i * kBlock, kBlock);
  const LldStats s = rig.stats();
  EXPECT_EQ(s.nvram_drains, 1u);
  EXPECT_EQ(s.nvram_stalls, 1u);
  EXPECT_EQ(s.client_blocks_written, capacity);
  EXPECT_GT(s.nvram_stall_time, SimDuration{});
  EXPECT_EQ(rig.disk().report().nvram_buffered_blocks, 1u);
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, NoNvramFlushWritesAPartialSegmentBelowTheThreshold) {
  LldRig rig(no_nvram());
  rig.write(0, kBlock);
  EXPECT_EQ(rig.stats().segment_writes, 0u);  // in the memory copy
  rig.flush();
  EXPECT_EQ(rig.stats().segment_writes, 1u);
  EXPECT_EQ(rig.stats().partial_writes, 1u);  // the segment stays open
  rig.write(kBlock, kBlock, /*fua=*/true);
  EXPECT_EQ(rig.stats().partial_writes, 2u);
  EXPECT_EQ(rig.stats().segments_closed, 0u);
  rig.stop_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, NoNvramFlushAboveTheThresholdClosesTheSegment) {
  LldConfig c = no_nvram();
  c.options.partial_percent = 1;
  LldRig rig(c);
  rig.write(0, kBlock, /*fua=*/true);
  EXPECT_EQ(rig.stats().segments_closed, 1u);
  EXPECT_EQ(rig.stats().partial_writes, 0u);
  rig.stop_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, NoNvramWritesWithoutFlushGoOutAsSegmentsFill) {
  LldRig rig(no_nvram());
  const uint32_t per_segment = rig.disk().report().blocks_per_segment;
  for (uint32_t i = 0; i < 3 * per_segment; ++i) rig.write(i * kBlock, kBlock);
  // The third is full in memory; it goes out when a block follows, or now:
  EXPECT_EQ(rig.stats().segments_closed, 2u);
  rig.flush();
  EXPECT_EQ(rig.stats().segments_closed, 3u);
  rig.stop_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, ARequestLargerThanASegmentIsLoggedWhole) {
  for (LldConfig c : {LldConfig{}, no_nvram()}) {
    LldRig rig(c);
    rig.write(3 * kBlock, 2 << 20, /*fua=*/true);  // larger than the NVRAM too
    rig.stop_and_reopen();
    rig.expect_model();
  }
}

TEST(LldDisk, UnalignedWritesMergeWithTheBlocksTheyTouch) {
  for (LldConfig c : {LldConfig{}, no_nvram()}) {
    LldRig rig(c);
    rig.write(0, 3 * kBlock, true);
    rig.write(kBlock + 512, 1024, true);
    rig.write(2 * kBlock - 512, 1536, true);
    rig.expect_model();
    rig.stop_and_reopen();
    rig.expect_model();
  }
}

TEST(LldDisk, TrimAndZeroReadAsZerosAndShowAsHoles) {
  for (LldConfig c : {LldConfig{}, no_nvram()}) {
    LldRig rig(c);
    rig.write(0, 64 * kBlock, true);
    rig.trim(8 * kBlock, 8 * kBlock);
    rig.zero(20 * kBlock + 512, 4 * kBlock, /*may_trim=*/true);
    rig.zero(40 * kBlock, 2 * kBlock, /*may_trim=*/false);
    rig.flush();
    rig.expect_model();
    uint64_t hole_bytes = 0;
    rig.disk().extents(0, 64 * kBlock, [&](uint64_t, uint64_t len, ExtentType t) {
      if (t == ExtentType::kHole) hole_bytes += len;
    });
    EXPECT_EQ(hole_bytes, (8 + 3) * kBlock);
    rig.stop_and_reopen();
    rig.expect_model();
  }
}

// Random overwrites at 80% of the export: the cleaner must run, and every
// block must still read what was last written, through reopens.
void churn(LldConfig c, uint64_t writes) {
  LldRig rig(c);
  const uint64_t blocks = c.export_bytes / kBlock;
  for (uint64_t b = 0; b < blocks * 8 / 10; ++b) rig.write(b * kBlock, kBlock);
  std::mt19937_64 rng(7);
  for (uint64_t i = 0; i < writes; ++i) {
    rig.write(rng() % (blocks * 8 / 10) * kBlock, kBlock, /*fua=*/i % 3 == 0);
    if (i % 997 == 0) rig.expect_model();
  }
  rig.flush();
  const LldStats s = rig.stats();
  EXPECT_GT(s.segments_cleaned, 0u);
  EXPECT_GT(s.segments_freed, 0u);
  EXPECT_GT(s.checkpoints, 0u);
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, CleanerKeepsEveryBlockWithNvram) { churn(LldConfig{}, 6000); }
TEST(LldDisk, CleanerKeepsEveryBlockWithoutNvram) { churn(no_nvram(), 6000); }
TEST(LldDisk, CostBenefitCleanerKeepsEveryBlock) {
  LldConfig c;
  c.options.cleaner_policy = CleanerPolicy::kCostBenefit;
  churn(c, 4000);
}

TEST(LldDisk, IdleTimeDrainsTheBufferAndCleans) {
  LldRig rig;
  for (int i = 0; i < 30; ++i) rig.write(i * kBlock, kBlock);
  rig.idle();
  EXPECT_EQ(rig.disk().report().nvram_buffered_blocks, 0u);
  EXPECT_EQ(rig.disk().report().nvram_used_records, 0u);
  EXPECT_GE(rig.stats().segment_writes, 1u);
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
}

TEST(LldDisk, IdleCleaningFreesSegmentsOverwritesEmptied) {
  LldRig rig(no_nvram());
  const uint32_t per_segment = rig.disk().report().blocks_per_segment;
  for (int round = 0; round < 3; ++round)
    for (uint32_t i = 0; i < 2 * per_segment; ++i) rig.write(i * kBlock, kBlock);
  rig.flush();
  const uint32_t free_before = rig.disk().report().free_segments;
  rig.idle();
  EXPECT_GT(rig.disk().report().free_segments, free_before);
  rig.expect_model();
}

// With NVRAM a drain cuts requests wherever a segment fills, and at 80% it
// must clean between the pieces of a request: the NVRAM holds each request
// whole until the drain is durable (replay completes one a crash left partly
// in segments), so the pieces need not be grouped in the log.
TEST(LldDisk, ADrainCleansBetweenThePiecesOfARequest) {
  LldRig rig;
  const uint64_t blocks = LldConfig{}.export_bytes / kBlock;
  for (uint64_t b = 0; b + 8 <= blocks * 8 / 10; b += 8) rig.write(b * kBlock, 8 * kBlock);
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1500; ++i) {
    rig.write(rng() % (blocks * 8 / 10 - 8) * kBlock, 8 * kBlock);
    if (i % 499 == 0) rig.expect_model();
  }
  EXPECT_GT(rig.stats().segments_cleaned, 0u);
  EXPECT_GT(rig.stats().nvram_drains, 0u);
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
}

// An idle step writes one segment of the NVRAM buffer, cutting a request;
// the drain a full NVRAM then forces must take up from there.
TEST(LldDisk, AnIdleStepThatCutsARequestLeavesTheDrainFree) {
  LldRig rig;  // 62 NVRAM records, 15 blocks a segment write
  for (int i = 0; i < 7; ++i) rig.write(i * 8 * kBlock, 8 * kBlock);  // 56 records
  ASSERT_TRUE(rig.idle_step());
  EXPECT_EQ(rig.stats().segment_writes, 1u);
  rig.write(100 * kBlock, 8 * kBlock);  // does not fit: the NVRAM drains first
  EXPECT_EQ(rig.stats().nvram_drains, 1u);
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
}

// Random multi-block updates with a hot spot, as a file system makes them:
// the cleaner runs in many states of the open segment, and must never move
// a victim into room it does not have (a move that fills the last free
// segment closes it and needs another).
void churn_requests(LldConfig c, int writes, uint64_t seed) {
  LldRig rig(c);
  const uint64_t blocks = c.export_bytes / kBlock;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < writes; ++i) {
    const uint64_t n = 1 + rng() % 16;
    const uint64_t region = rng() % 3 == 0 ? 64 : blocks;
    rig.write(rng() % (region - n + 1) * kBlock, n * kBlock, /*fua=*/rng() % 4 == 0);
    if (rng() % 10 == 0) rig.flush();
  }
  rig.flush();  // nvram=0: what a stop without close keeps
  EXPECT_GT(rig.stats().segments_cleaned, 0u);
  {
    SCOPED_TRACE("before the reopen");
    rig.expect_model();
  }
  rig.stop_and_reopen();
  SCOPED_TRACE("after the reopen");
  rig.expect_model();
}

// Seeds 1 and 8 once made the cleaner fill the last free segment exactly
// with a victim's blocks, which then had to close it with no segment to
// open: "no clean segment left to write into".
TEST(LldDisk, CleanerMovesFitWithMultiBlockRequests) {
  for (uint64_t seed : {1, 8}) {
    SCOPED_TRACE(seed);
    churn_requests(LldConfig{}, 3000, seed);
  }
}

TEST(LldDisk, ReopeningTwiceAfterAStopReadsTheSame) {
  LldRig rig(no_nvram());
  for (int i = 0; i < 500; ++i) rig.write((i * 13 % 700) * kBlock, kBlock, i % 5 == 0);
  rig.flush();
  rig.stop_and_reopen();
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
}

}  // namespace
}  // namespace vld
