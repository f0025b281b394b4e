// AruSession over a DiskController, in every mode: what other readers see
// before and after a commit, a commit that fails on the backing store (it
// applies nothing and keeps the ARU), a failed sync (the disk stops; a power
// cut then shows all of the ARU or none), aborts and the ARU statistics.
#include "core/aru/aru_session.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/store/fault_store.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
using Bytes = std::vector<std::byte>;

Bytes data_of(uint64_t seed, size_t len) {
  Bytes v(len);
  for (size_t i = 0; i < len; ++i) v[i] = std::byte((i * 131 + seed * 17) % 251 + 1);
  return v;
}

// A formatted 16 MiB image of the mode in memory, a FaultyStore over it,
// and a controller on that.
class AruSessionTest : public ::testing::TestWithParam<DiskMode> {
 protected:
  AruSessionTest() : sb_(plan()), mem_(sb_.image_bytes()), faulty_(format()) { open(); }
  Superblock plan() const {
    FormatOptions o;
    o.mode = GetParam();
    o.export_bytes = 16 << 20;
    o.geometry = *find_preset("st19101");
    o.geometry.derive_skews();
    return plan_image(o);
  }
  MemoryBackingStore& format() {
    format_store(mem_, sb_);
    return mem_;
  }
  void open() {
    ctl_ = std::make_unique<DiskController>(
        make_disk(std::make_unique<ProxyStore>(faulty_), sb_, DiskOptions{}));
  }
  Bytes read(uint64_t offset, size_t len) {
    Bytes out(len);
    ctl_->read(offset, out, std::nullopt);
    return out;
  }
  // Reopens the image a power cut right now would leave (the last
  // successful sync's) and reads [offset, +len) from it.
  Bytes read_after_power_cut(uint64_t offset, size_t len) {
    auto img = std::make_unique<MemoryBackingStore>(faulty_.synced_image());
    DiskController after(make_disk(std::move(img), sb_, DiskOptions{}));
    Bytes out(len);
    after.read(offset, out, std::nullopt);
    return out;
  }
  Superblock sb_;
  MemoryBackingStore mem_;
  FaultyStore faulty_;
  std::unique_ptr<DiskController> ctl_;
};

TEST_P(AruSessionTest, OthersSeeTheAruOnlyOnceCommitted) {
  AruSession aru(*ctl_, kDefaultAruMaxBytes);
  const Bytes a = data_of(1, 2 * kBlock), b = data_of(2, 1024);
  aru.write(0, a, std::nullopt);
  aru.write(300 * kBlock + 512, b, std::nullopt);
  Bytes got(2 * kBlock);
  aru.read(0, got, std::nullopt);
  EXPECT_EQ(got, a);
  EXPECT_EQ(read(0, 2 * kBlock), Bytes(2 * kBlock)) << "the disk showed an uncommitted ARU";
  const RequestTiming t = aru.commit(std::nullopt);
  EXPECT_GT(t.end, t.start);
  EXPECT_EQ(read(0, 2 * kBlock), a);
  EXPECT_EQ(read(300 * kBlock + 512, 1024), b);
  EXPECT_EQ(aru.shadow_bytes(), 0u) << "a commit starts a new, empty ARU";
  const DiskStats s = ctl_->stats();
  EXPECT_EQ(s.aru.commits, 1u);
  EXPECT_EQ(s.aru.blocks_committed, 3u);
  EXPECT_EQ(s.requests.write, 0u);
  // The ARU's read, the committed data merged into block 300's partial
  // write, and this test's three reads.
  EXPECT_EQ(s.requests.read, 5u);
}

TEST_P(AruSessionTest, AnEmptyCommitIsAFlushAndADroppedAruIsCountedOnce) {
  {
    AruSession aru(*ctl_, kDefaultAruMaxBytes);
    aru.commit(std::nullopt);
    aru.trim(0, 8 * kBlock, std::nullopt);
  }  // closed with the trim uncommitted
  const DiskStats s = ctl_->stats();
  EXPECT_EQ(s.requests.flush, 1u);
  EXPECT_EQ(s.aru.commits, 0u);
  EXPECT_EQ(s.aru.aborts, 1u);
  EXPECT_EQ(s.aru.blocks_aborted, 8u);
}

// Every write of the commit fails in turn: each time nothing is applied,
// the ARU is intact, and the disk serves on; then the commit goes through.
TEST_P(AruSessionTest, AFailedWriteInTheCommitAppliesNothingAndKeepsTheAru) {
  const Bytes old = data_of(3, 64 * kBlock);
  ctl_->write(0, old, true, std::nullopt);
  AruSession aru(*ctl_, kDefaultAruMaxBytes);
  Bytes want = old;
  for (uint64_t b = 0; b < 64; b += 3) {  // scattered blocks, several map pieces
    const Bytes d = data_of(100 + b, kBlock);
    aru.write(b * kBlock, d, std::nullopt);
    std::memcpy(want.data() + b * kBlock, d.data(), kBlock);
  }
  aru.write(40 * 1024 * 1024 / 4, data_of(7, kBlock), std::nullopt);  // far away (block 2560)
  int failures = 0;
  for (uint64_t nth = 0; nth < 64; ++nth) {
    faulty_.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite, .nth = nth});
    try {
      aru.commit(std::nullopt);
      faulty_.disarm();
      break;
    } catch (const Error& e) {
      faulty_.disarm();
      ++failures;
      EXPECT_EQ(e.err(), EIO) << e.what();
      ASSERT_EQ(read(0, 64 * kBlock), old) << "a failed commit (write " << nth << ") applied some";
      Bytes got(64 * kBlock);
      aru.read(0, got, std::nullopt);
      ASSERT_EQ(got, want) << "a failed commit lost the ARU";
    }
  }
  EXPECT_GT(failures, 1) << "the commit must have more than one write to fail";
  EXPECT_EQ(read(0, 64 * kBlock), want);
  EXPECT_EQ(read(2560 * kBlock, kBlock), data_of(7, kBlock));
}

// A failed sync stops the disk (FailStopStore); a power cut then shows the
// ARU whole or not at all.
TEST_P(AruSessionTest, AFailedSyncInTheCommitStopsTheDiskAndAPowerCutKeepsAllOrNothing) {
  const Bytes old = data_of(4, 32 * kBlock);
  ctl_->write(0, old, true, std::nullopt);
  AruSession aru(*ctl_, kDefaultAruMaxBytes);
  const Bytes neu = data_of(5, 32 * kBlock);
  aru.write(0, neu, std::nullopt);
  faulty_.arm(FaultyStore::Fault{.op = FaultyStore::Op::kSync, .nth = 0, .drop_on_failed_sync = true});
  EXPECT_THROW(aru.commit(std::nullopt), Error);
  faulty_.disarm();
  EXPECT_THROW(aru.commit(std::nullopt), Error) << "a commit succeeded after a failed sync";
  const Bytes after = read_after_power_cut(0, 32 * kBlock);
  EXPECT_TRUE(after == old || after == neu) << "the ARU came back in part";
}

TEST_P(AruSessionTest, BlocksPastTheEndAreRefused) {
  AruSession aru(*ctl_, kDefaultAruMaxBytes);
  try {
    aru.write(sb_.export_bytes - 512, data_of(1, 1024), std::nullopt);
    ADD_FAILURE() << "a write past the end was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL);
  }
  EXPECT_EQ(aru.shadow_bytes(), 0u);
}

// mode=inplace commits through a redo journal of fixed size: an ARU may not
// grow past what it holds (the write fails, the ARU stays whole), however
// large aru_max= is.
TEST_P(AruSessionTest, AnAruStopsGrowingWhereTheDiskCannotCommitIt) {
  const uint64_t max_blocks = ctl_->max_group_blocks();
  if (GetParam() != DiskMode::kInplace) {  // free space alone bounds its commits
    EXPECT_EQ(max_blocks, UINT64_MAX) << "only mode=inplace bounds a commit";
    return;
  }
  ASSERT_GT(max_blocks, 64u);
  AruSession aru(*ctl_, kDefaultAruMaxBytes);
  const Bytes all = data_of(9, max_blocks * kBlock);
  aru.write(0, all, std::nullopt);
  try {
    aru.write(max_blocks * kBlock, data_of(10, kBlock), std::nullopt);
    ADD_FAILURE() << "an ARU grew past what the redo journal holds";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), ENOSPC);
    EXPECT_NE(std::string(e.what()).find("redo journal"), std::string::npos) << e.what();
  }
  aru.commit(std::nullopt);
  EXPECT_EQ(read(0, max_blocks * kBlock), all);
}

std::string ModeName(const ::testing::TestParamInfo<DiskMode>& info) {
  return mode_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Modes, AruSessionTest,
                         ::testing::Values(DiskMode::kVld, DiskMode::kLld, DiskMode::kInplace),
                         ModeName);

}  // namespace
}  // namespace vld

namespace vld {
namespace {

// mode=vld places an ARU's blocks as they are written (paper 000: the
// allocation is global) and holds back only their map entries: the commit
// writes map sectors alone; an abort gives the sectors back, at the next
// record, as a replaced block's; the state agrees with itself throughout.
class VldPlacement : public AruSessionTest {};

TEST_P(VldPlacement, WritesPlaceTheBlocksTheCommitMapsThemAndAnAbortFreesThem) {
  ASSERT_TRUE(ctl_->places_shadow());
  // A write first: the first group since the clean open writes the "open"
  // record, which would free what the ARU below replaces before the count.
  ctl_->write(200 * kBlock, data_of(4, kBlock), false, std::nullopt);
  const DiskStats s0 = ctl_->stats();
  auto pending = [&] { return ctl_->mode_report().vld->pending_data_frees; };
  const uint64_t pending0 = pending();
  {
    AruSession aru(*ctl_, kDefaultAruMaxBytes);
    aru.write(0, data_of(1, 8 * kBlock), std::nullopt);
    aru.write(2 * kBlock + 512, data_of(2, 512), std::nullopt);  // block 2 again: a new copy
    const DiskStats s1 = ctl_->stats();
    EXPECT_EQ(s1.aru.blocks_placed - s0.aru.blocks_placed, 9u);
    EXPECT_EQ(s1.physical_writes - s0.physical_writes, 9u) << "placed by the writes themselves";
    EXPECT_EQ(pending(), pending0 + 1) << "block 2's first copy waits for the next record";
    aru.commit(std::nullopt);
    const DiskStats s2 = ctl_->stats();
    EXPECT_EQ(s2.physical_writes - s1.physical_writes, 0u) << "the commit writes map sectors only";
    EXPECT_EQ(s2.aru.blocks_committed, 8u);
    aru.write(100 * kBlock, data_of(3, 4 * kBlock), std::nullopt);
  }  // aborted: its 4 placed blocks are given back, freed at the next record
  EXPECT_EQ(ctl_->stats().aru.aborts, 1u);
  EXPECT_EQ(pending(), pending0 + 5);
  Bytes want = data_of(1, 8 * kBlock);
  std::memcpy(want.data() + 2 * kBlock + 512, data_of(2, 512).data(), 512);
  EXPECT_EQ(read(0, 8 * kBlock), want);
  EXPECT_EQ(read(100 * kBlock, 4 * kBlock), Bytes(4 * kBlock));
  // Reopened after a clean close, the disk agrees with itself (free space
  // included) and maps the 8 committed blocks and the first write's.
  ctl_->close();
  VldDisk reopened(std::make_unique<ProxyStore>(mem_), sb_);
  EXPECT_EQ(reopened.live_blocks(), 8u + 1);  // and block 200
  EXPECT_EQ(reopened.check_consistency(), "");
}

// A placement that fails on the backing store fails the write and changes
// neither the ARU nor the disk: its sectors are free again at once.
TEST_P(VldPlacement, AFailedPlacementFailsTheWriteAndChangesNothing) {
  AruSession aru(*ctl_, kDefaultAruMaxBytes);
  const Bytes first = data_of(4, 2 * kBlock);
  aru.write(0, first, std::nullopt);
  faulty_.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite, .nth = 1});
  EXPECT_THROW(aru.write(kBlock, data_of(5, 3 * kBlock), std::nullopt), Error);
  faulty_.disarm();
  EXPECT_EQ(aru.shadow_bytes(), 2 * kBlock);
  Bytes got(2 * kBlock);
  aru.read(0, got, std::nullopt);
  EXPECT_EQ(got, first) << "a failed write changed the ARU";
  aru.commit(std::nullopt);
  EXPECT_EQ(read(0, 4 * kBlock), [&] {
    Bytes w = first;
    w.resize(4 * kBlock);
    return w;
  }());
  ctl_->close();
  VldDisk reopened(std::make_unique<ProxyStore>(mem_), sb_);
  EXPECT_EQ(reopened.check_consistency(), "");
  EXPECT_EQ(reopened.live_blocks(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Vld, VldPlacement, ::testing::Values(DiskMode::kVld), ModeName);

}  // namespace
}  // namespace vld
