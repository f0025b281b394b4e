// mode=lld's idle-time work against the predicted end of the idle period
// (Disk::idle_step's idle_ends; core/lld/lld_cleaner.cc): a step that would
// not end by then is declined, a shorter period gets a shorter step (part of
// a victim read or moved, part of the NVRAM written), and bursts with pauses
// between them are never slower than the same bursts back to back (paper
// 001's Figure 10, in small). Crashes in the middle of such steps are the
// crash harness's (CrashHarness.Lld*ShortIdlePeriods*).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/lld/lld_disk.h"
#include "core/store/backing_store.h"
#include "tests/unit/lld_test_util.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExportBytes = 4 << 20;
constexpr uint64_t kBlocks = kExportBytes / kBlock;
constexpr uint64_t kRegion = kBlocks * 8 / 10;  // written and updated: about 80% of the segments

Superblock superblock(uint64_t nvram_bytes) {
  return plan_image(test::lld_format_options(kExportBytes, 25, 64 * 1024, nvram_bytes));
}

std::vector<std::byte> block_of(uint64_t seed) {
  std::vector<std::byte> b(kBlock);
  std::mt19937_64 rng(seed);
  for (auto& x : b) x = static_cast<std::byte>(rng());
  return b;
}

// An lld disk whose region was written in order and then updated at random
// until the cleaner has run (segments hold dead blocks), and a model of
// its contents; each write has its own bytes.
class AgedDisk {
 public:
  explicit AgedDisk(uint64_t nvram_bytes) : sb_(superblock(nvram_bytes)), model_(kBlocks) {
    auto store = std::make_unique<MemoryBackingStore>(sb_.image_bytes());
    format_store(*store, sb_);
    store_ = store.get();
    disk_ = std::make_unique<LldDisk>(std::move(store), sb_);
    for (uint64_t b = 0; b < kRegion; ++b) write(b);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 3000; ++i) write(rng() % kRegion);
    now_ = disk_->flush(now_).end;
  }

  void write(uint64_t block) {
    model_[block] = block_of(++writes_);
    now_ = disk_->write(block * kBlock, model_[block], false, now_).end;
  }
  // One idle step that must end by `ends`; false if it is declined.
  bool step(SimTime ends) {
    std::optional<Completion> c = disk_->idle_step(now_, ends);
    if (!c) return false;
    EXPECT_LE(c->end, ends) << "an idle step ended after the idle period";
    now_ = c->end;
    return true;
  }
  void wait(SimDuration d) { now_ += d; }
  void expect_model() {
    std::vector<std::byte> out(kBlock);
    for (uint64_t b = 0; b < kBlocks; ++b) {
      now_ = disk_->read(b * kBlock, out, now_).end;
      const std::vector<std::byte> zeros(kBlock);
      const std::vector<std::byte>& want = model_[b].empty() ? zeros : model_[b];
      ASSERT_EQ(0, std::memcmp(out.data(), want.data(), kBlock)) << "block " << b;
    }
    EXPECT_EQ(disk_->check_consistency(), "");
  }
  void reopen() {
    disk_->close();
    std::vector<std::byte> bytes = store_->bytes();
    auto store = std::make_unique<MemoryBackingStore>(std::move(bytes));
    store_ = store.get();
    disk_ = std::make_unique<LldDisk>(std::move(store), sb_);
  }

  LldDisk& disk() { return *disk_; }
  LldStats stats() const { return disk_->report().stats; }
  SimTime now() const { return now_; }

 private:
  Superblock sb_;
  MemoryBackingStore* store_ = nullptr;
  std::unique_ptr<LldDisk> disk_;
  std::vector<std::vector<std::byte>> model_;
  uint64_t writes_ = 0;
  SimTime now_ = kSimEpoch;
};

TEST(LldIdle, DeclinesAStepThePeriodCannotHold) {
  for (uint64_t nvram : {uint64_t{0}, uint64_t{256 * 1024}}) {
    AgedDisk d(nvram);
    if (nvram) d.write(3);  // a block buffered: the drain's write comes first
    const LldStats before = d.stats();
    // No drive command ends at once (each pays the controller's overhead).
    EXPECT_FALSE(d.step(d.now())) << "nvram=" << nvram;
    const LldStats after = d.stats();
    EXPECT_EQ(after.segment_writes, before.segment_writes);
    EXPECT_EQ(after.cleaner_sectors_read, before.cleaner_sectors_read);
    EXPECT_EQ(after.checkpoints, before.checkpoints);
    // With no prediction every step fits.
    EXPECT_TRUE(d.step(kUnknownIdleEnd)) << "nvram=" << nvram;
  }
}

// Periods of 3 ms, shorter than reading a victim (half a revolution of
// sectors, 3 ms, and the seek and rotation to them) or writing a segment:
// the cleaner reads a run of blocks at a time but moves none, since a few
// blocks moved per pause change which victims the request path's cleaner
// meets and gain little. A pause that holds a segment's write then moves
// the blocks read, and finishes victims; the disk keeps every byte.
TEST(LldIdle, ShortPeriodsReadVictimsButMoveOnlyInAPauseThatHoldsASegment) {
  AgedDisk d(0);
  const LldStats before = d.stats();
  for (int i = 0; i < 400; ++i) {
    if (!d.step(d.now() + sim_us(3000))) d.wait(sim_us(1000));  // the platter turns on
  }
  const LldStats short_pauses = d.stats();
  EXPECT_GT(short_pauses.cleaner_sectors_read, before.cleaner_sectors_read) << "reads fit";
  EXPECT_EQ(short_pauses.cleaner_blocks_moved, before.cleaner_blocks_moved);
  EXPECT_EQ(short_pauses.idle_cleans, before.idle_cleans);
  for (int i = 0; i < 40; ++i) {
    if (!d.step(d.now() + sim_us(100'000))) d.wait(sim_us(1000));
  }
  const LldStats after = d.stats();
  EXPECT_GT(after.cleaner_blocks_moved, short_pauses.cleaner_blocks_moved);
  EXPECT_GE(after.idle_cleans, before.idle_cleans + 2) << "long pauses must clean";
  d.expect_model();
  d.reopen();
  d.expect_model();
}

// With NVRAM: a period writes part of the buffer only as a write that
// fills the open segment (a segment's worth a step), never a few blocks at
// a time: each partial write would cost a summary sector, and a block
// written out early and rewritten before the region resets is written
// twice. A period too short for that writes nothing. The region is reset
// only once the buffer is empty, and every block reads back.
TEST(LldIdle, ShortPeriodsDrainTheNvramInPieces) {
  AgedDisk d(256 * 1024);
  while (d.disk().report().nvram_buffered_blocks > 0) ASSERT_TRUE(d.step(kUnknownIdleEnd));
  for (uint64_t b = 0; b < 40; ++b) d.write(b * 5);
  ASSERT_EQ(d.disk().report().nvram_buffered_blocks, 40u);
  const uint64_t written = d.stats().client_blocks_written;
  EXPECT_FALSE(d.step(d.now() + sim_us(300))) << "300 us holds no segment's worth";
  bool part = false;
  for (int i = 0; i < 300 && d.disk().report().nvram_buffered_blocks > 0; ++i) {
    const uint64_t buffered = d.disk().report().nvram_buffered_blocks;
    if (!d.step(d.now() + sim_us(8000))) {
      d.wait(sim_us(700));
      continue;
    }
    const uint64_t now_buffered = d.disk().report().nvram_buffered_blocks;
    if (now_buffered > 0 && now_buffered < buffered) part = true;
  }
  EXPECT_TRUE(part) << "8 ms periods must write 40 blocks in pieces";
  // The rest with no prediction (the cleaning that makes room for it may
  // need a checkpoint, longer than a period with the seeks there and back).
  while (d.disk().report().nvram_buffered_blocks > 0) ASSERT_TRUE(d.step(kUnknownIdleEnd));
  EXPECT_EQ(d.disk().report().nvram_buffered_blocks, 0u);
  EXPECT_EQ(d.disk().report().nvram_used_records, 0u);
  EXPECT_EQ(d.stats().client_blocks_written, written + 40);
  d.expect_model();
  d.reopen();
  d.expect_model();
}

// With NVRAM, a pause that cannot hold a segment's write neither drains
// the buffer nor begins a victim's moves: either would change where the
// region resets and which victims the bursts' cleaner meets, for less than
// it gains. It may still read a victim, which moves nothing. A long pause
// then drains the buffer.
TEST(LldIdle, WithNvramShortPeriodsOnlyReadVictims) {
  AgedDisk d(256 * 1024);
  while (d.disk().report().nvram_buffered_blocks > 0) ASSERT_TRUE(d.step(kUnknownIdleEnd));
  for (uint64_t b = 0; b < 40; ++b) d.write(b * 5);
  const LldStats before = d.stats();
  for (int i = 0; i < 400; ++i) {
    if (!d.step(d.now() + sim_us(3000))) d.wait(sim_us(1000));
  }
  const LldStats short_pauses = d.stats();
  EXPECT_EQ(d.disk().report().nvram_buffered_blocks, 40u) << "3 ms holds no segment's write";
  EXPECT_EQ(short_pauses.client_blocks_written, before.client_blocks_written);
  EXPECT_EQ(short_pauses.cleaner_blocks_moved, before.cleaner_blocks_moved);
  EXPECT_EQ(short_pauses.checkpoints, before.checkpoints);
  EXPECT_GT(short_pauses.cleaner_sectors_read, before.cleaner_sectors_read) << "reads fit";
  for (int i = 0; i < 40 && d.disk().report().nvram_buffered_blocks > 0; ++i) {
    if (!d.step(d.now() + sim_us(100'000))) d.wait(sim_us(1000));
  }
  EXPECT_EQ(d.disk().report().nvram_buffered_blocks, 0u) << "long pauses drain";
  EXPECT_EQ(d.stats().client_blocks_written, before.client_blocks_written + 40);
  d.expect_model();
  d.reopen();
  d.expect_model();
}

// Figure 10 in small: bursts of 16 synchronous updates (write, flush) with
// a pause after each, on an aged disk, through a DiskController that
// predicts each pause from the ones before (IdleGapPredictor). No write
// waits for an idle step, and for every pause the mean write latency is
// at most that of the same bursts back to back, but for kPhaseSlack: a
// pause alone, with no idle step in it, moves where the platter is when
// the bursts' segment writes begin, and with it their rotational waits
// (here nvram=256K with 1 ms pauses: no idle step, and 6% faster; nvram=0:
// no idle step, 0.2% faster).
struct BurstResult {
  double mean_us = 0;
  uint64_t waited = 0;  // writes that arrived during an idle step
  uint64_t idle_steps = 0;
};

constexpr double kPhaseSlack = 1.01;

BurstResult bursts(const Superblock& sb, const std::vector<std::byte>& image, SimDuration pause) {
  DiskController ctl(std::make_unique<LldDisk>(std::make_unique<MemoryBackingStore>(image), sb));
  std::mt19937_64 rng(11);
  const std::vector<std::byte> data = block_of(1);
  BurstResult r;
  SimDuration total{};
  uint64_t n = 0;
  std::optional<SimTime> arrival = ctl.busy_until();
  for (int burst = 0; burst < 60; ++burst) {
    for (int i = 0; i < 16; ++i) {
      const RequestTiming w =
          ctl.write(rng() % kRegion * kBlock, data, false, i == 0 ? arrival : std::nullopt);
      ctl.flush(std::nullopt);
      if (burst < 10) continue;  // warm-up: the predictor learns the pauses
      total += w.end - w.start + w.queued;
      ++n;
      if (w.queued > SimDuration{0}) ++r.waited;
    }
    const SimTime idle_end = ctl.busy_until() + pause;
    r.idle_steps += ctl.idle_until(idle_end);
    arrival = idle_end;
  }
  r.mean_us = to_us(total) / static_cast<double>(n);
  return r;
}

TEST(LldIdle, PausesNeverMakeBurstsSlowerThanNoPauses) {
  for (uint64_t nvram : {uint64_t{256 * 1024}, uint64_t{0}}) {
    const Superblock sb = superblock(nvram);
    auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
    format_store(*store, sb);
    MemoryBackingStore* raw = store.get();
    std::vector<std::byte> image;
    {
      DiskController ctl(std::make_unique<LldDisk>(std::move(store), sb));
      const std::vector<std::byte> data = block_of(2);
      for (uint64_t b = 0; b < kRegion; ++b) ctl.write(b * kBlock, data, false, std::nullopt);
      std::mt19937_64 rng(5);
      for (int i = 0; i < 3000; ++i) {
        ctl.write(rng() % kRegion * kBlock, data, false, std::nullopt);
        ctl.flush(std::nullopt);
      }
      ASSERT_GT(ctl.mode_report().lld->stats.segments_cleaned, 0u) << "precondition: aged";
      ctl.close();
      image = raw->bytes();
    }
    const BurstResult none = bursts(sb, image, SimDuration{0});
    for (double ms : {1.0, 2.0, 4.0, 7.0, 12.0, 20.0, 40.0}) {
      const BurstResult r = bursts(sb, image, sim_us(ms * 1000));
      SCOPED_TRACE("nvram=" + std::to_string(nvram) + ", pauses of " + std::to_string(ms) + " ms");
      EXPECT_LE(r.mean_us, none.mean_us * kPhaseSlack) << "pauses made the bursts slower; idle steps " << r.idle_steps;
      EXPECT_EQ(r.waited, 0u) << "a write waited for an idle step";
      if (ms >= 12.0) {
        EXPECT_GT(r.idle_steps, 0u) << "idle time did nothing";
      }
    }
  }
}

}  // namespace
}  // namespace vld
