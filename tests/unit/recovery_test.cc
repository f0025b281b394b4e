// recover() by itself (core/vld/recovery.h), on images a VldDisk wrote:
// which of its three ways it takes (clean walk, record + window, full scan),
// that its map is the disk's (clean) or the flushed part of it (unclean),
// that it rolls back a request whose data does not check out, that it
// reads and never writes (so running it twice gives the same state), and
// that what it read is listed as protected for the checkpoint.
// The crash harness (crash_harness_test.cc) checks recovery against every
// crash state; these tests pin down each step on one small image.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/store/backing_store.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery.h"
#include "core/vld/vld_layout.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExportBytes = 4 << 20;

Superblock small_vld_superblock() { return test::st19101_superblock(DiskMode::kVld, kExportBytes); }

std::vector<std::byte> block_of(uint64_t block, uint8_t version) {
  std::vector<std::byte> b(kBlock);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<std::byte>((block * 131 + i * 7 + version * 29) | 1);
  return b;
}

// A formatted image and a VldDisk on a copy of its bytes, whose bytes the
// test takes as they are at any moment (what a kill -9 leaves).
class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override { format_new(small_vld_superblock()); }
  void format_new(const Superblock& sb) {
    sb_ = sb;
    auto store = std::make_unique<MemoryBackingStore>(sb_.image_bytes());
    const auto sbytes = encode_superblock(sb_);
    store->write(0, std::as_bytes(std::span(sbytes)));
    VldDisk::format(*store, sb_);
    store_ = store.get();
    disk_ = std::make_unique<VldDisk>(std::move(store), sb_);
  }
  void write(uint64_t block, uint8_t version, bool fua = false) {
    now_ = disk_->write(block * kBlock, block_of(block, version), fua, now_).end;
  }
  void flush() { now_ = disk_->flush(now_).end; }
  // The image now, as a kill -9 would leave it.
  std::unique_ptr<MemoryBackingStore> snapshot() const {
    return std::make_unique<MemoryBackingStore>(store_->bytes());
  }
  static size_t mapped(const std::vector<MapEntry>& map) {
    return static_cast<size_t>(std::count_if(map.begin(), map.end(), [](const MapEntry& e) { return e.mapped(); }));
  }

  Superblock sb_;
  MemoryBackingStore* store_ = nullptr;  // owned by disk_
  std::unique_ptr<VldDisk> disk_;
  SimTime now_ = kSimEpoch;
};

TEST_F(RecoveryTest, ANewImageIsACleanEmptyLog) {
  disk_->close();
  RecoveredState st = recover(*store_, sb_);
  EXPECT_TRUE(st.report.clean);
  EXPECT_EQ(st.report.method, "clean-walk");
  EXPECT_EQ(st.map.size(), kExportBytes / kBlock);
  EXPECT_EQ(mapped(st.map), 0u);
  EXPECT_FALSE(st.needs_checkpoint);
  EXPECT_EQ(st.report.damage, "");
}

TEST_F(RecoveryTest, ACleanCloseIsWalkedFromTheTail) {
  for (uint64_t b = 0; b < 40; ++b) write(b * 3, 1);
  write(6, 2);
  disk_->close();
  const std::vector<MapEntry> want = disk_->map();
  RecoveredState st = recover(*store_, sb_);
  EXPECT_TRUE(st.report.clean);
  EXPECT_EQ(st.report.method, "clean-walk");
  EXPECT_EQ(st.report.tracks_scanned, 0u) << "a clean walk reads map sectors only";
  EXPECT_GT(st.report.map_sectors_walked, 0u);
  EXPECT_EQ(st.map, want);
  EXPECT_EQ(mapped(st.map), 40u);
}

TEST_F(RecoveryTest, AfterAKillTheWindowGivesBackEveryFlushedRequest) {
  for (uint64_t b = 0; b < 20; ++b) write(b, 1);
  flush();
  write(100, 1, /*fua=*/true);
  const std::vector<MapEntry> want = disk_->map();
  auto image = snapshot();  // kill -9: every completed write is in the file
  RecoveredState st = recover(*image, sb_);
  EXPECT_FALSE(st.report.clean);
  EXPECT_EQ(st.report.method, "record+window");
  EXPECT_GT(st.report.tracks_scanned, 0u);
  EXPECT_GE(st.report.groups_accepted, 21u);
  EXPECT_EQ(st.report.groups_rejected, 0u);
  // Every request accepted: they extend the record's tree, rooted at the
  // newest one's last map sector, and VldDisk writes just a record.
  EXPECT_FALSE(st.needs_checkpoint);
  ASSERT_TRUE(st.root.has_value());
  EXPECT_EQ(*st.root, 100 / kEntriesPerPiece) << "the FUA write's piece is the newest root";
  EXPECT_EQ(st.map, want);
  // Everything it read since the record stays put until the next record.
  EXPECT_FALSE(st.protected_psns.empty());
  EXPECT_GE(st.protected_data_psns.size(), 21u);
}

// The newest valid record on an image.
LogRecord newest_record(BackingStore& image, const Superblock& sb) {
  const VldLayout L(sb);
  std::optional<LogRecord> newest;
  for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
    SectorBytes b{};
    image.read(L.byte_offset(slot), std::as_writable_bytes(std::span(b)));
    auto r = decode_log_record(b.data(), sb.secret);
    if (r && (!newest || r->generation > newest->generation)) newest = r;
  }
  EXPECT_TRUE(newest.has_value());
  return newest.value_or(LogRecord{});
}

// A disk of 64 cylinders, wider than its 32-cylinder window: a narrow
// record names a few of them (core/vld/scan_set.h).
constexpr uint64_t kWideExportBytes = 112 << 20;

TEST_F(RecoveryTest, AfterAKillANarrowRecordIsReadAroundItsWritesOnly) {
  format_new(test::st19101_superblock(DiskMode::kVld, kWideExportBytes));
  const VldLayout L(sb_);
  for (uint64_t k = 0; k < 300; ++k) write(k * 97 % (kWideExportBytes / kBlock), 1);
  flush();
  write(5, 2, /*fua=*/true);
  const std::vector<MapEntry> want = disk_->map();
  auto image = snapshot();
  const LogRecord rec = newest_record(*image, sb_);
  ASSERT_TRUE(rec.scan_set_narrow) << "precondition: an open starts calm, and nothing jumped";
  ASSERT_GE(rec.window_cylinders, 32u);
  RecoveredState st = recover(*image, sb_);
  EXPECT_EQ(st.report.method, "record+window");
  EXPECT_GE(st.report.tracks_scanned, 2u * L.heads) << "at least the head's neighbourhood (less the system track)";
  EXPECT_LE(st.report.tracks_scanned, 12u * L.heads) << "not the 32-cylinder window";
  EXPECT_EQ(st.report.groups_rejected, 0u);
  EXPECT_GE(st.report.groups_accepted, 301u);
  EXPECT_EQ(st.map, want);
}

TEST_F(RecoveryTest, AMapSectorDueBeyondTheScanSetWidensItFirstAndNothingIsLost) {
  format_new(test::st19101_superblock(DiskMode::kVld, kWideExportBytes));
  const uint64_t blocks = kWideExportBytes / kBlock;
  // Filling the disk: once the free sectors near the head are used up, the
  // nearest are several cylinders away (docs/scale.md, section 0c).
  for (uint64_t b = 0; b < blocks * 8 / 10 && disk_->vld_stats().scan_set_widenings == 0; ++b)
    write(b, 1);
  flush();
  ASSERT_GT(disk_->vld_stats().scan_set_widenings, 0u) << "precondition: a jump beyond the set";
  EXPECT_GT(disk_->vld_stats().narrow_records, 0u);
  const std::vector<MapEntry> want = disk_->map();
  auto image = snapshot();
  // The first widening since the open has the credit to name a set around
  // the placement, not the whole window.
  const LogRecord rec = newest_record(*image, sb_);
  EXPECT_TRUE(rec.scan_set_narrow);
  RecoveredState st = recover(*image, sb_);
  EXPECT_LT(st.report.tracks_scanned, rec.window_cylinders * VldLayout(sb_).heads);
  EXPECT_EQ(st.report.groups_rejected, 0u);
  EXPECT_EQ(st.map, want);
}

TEST_F(RecoveryTest, ARequestWhoseDataDoesNotCheckOutIsRolledBack) {
  write(5, 1);
  flush();
  const MapEntry flushed_entry = disk_->map()[5];
  write(5, 2);  // not flushed: its loss is allowed, its corruption must not show
  const MapEntry newest = disk_->map()[5];
  ASSERT_NE(newest, flushed_entry) << "the second write did not move block 5";
  auto image = snapshot();
  // The power cut kept the map sector but not the data it maps.
  const std::vector<std::byte> garbage(kBlock, std::byte{0x5a});
  image->write(sb_.platter_offset + newest.psn() * kSectorBytes, garbage);
  RecoveredState st = recover(*image, sb_);
  EXPECT_EQ(st.report.method, "record+window");
  EXPECT_GE(st.report.groups_rejected, 1u);
  EXPECT_EQ(st.map[5], flushed_entry) << "block 5 should read its flushed version";
  EXPECT_EQ(st.report.damage, "");
  EXPECT_FALSE(st.needs_checkpoint) << "only the last request was rolled back";
}

TEST_F(RecoveryTest, ARequestLostWholeBeforeOneAcceptedMeansAFreshTree) {
  write(5, 1);
  flush();
  write(5, 2);     // lost whole: its map sector never reached the platter
  const uint32_t lost_psn = disk_->virtual_log().node(5 / kEntriesPerPiece).psn;
  write(900, 1);   // accepted, and its group adopted the lost one's root
  auto image = snapshot();
  const std::vector<std::byte> garbage(kSectorBytes, std::byte{0});
  image->write(sb_.platter_offset + uint64_t{lost_psn} * kSectorBytes, garbage);
  RecoveredState st = recover(*image, sb_);
  EXPECT_EQ(st.report.groups_rejected, 0u) << "a group lost whole leaves no candidate";
  EXPECT_GE(st.report.groups_accepted, 1u);
  EXPECT_TRUE(st.needs_checkpoint) << "the seqs since the record have a gap";
  VldDisk reopened(std::make_unique<MemoryBackingStore>(image->bytes()), sb_);
  EXPECT_EQ(reopened.check_consistency(), "");
  EXPECT_EQ(reopened.vld_stats().checkpoints, 1u);
}

TEST_F(RecoveryTest, ARequestRolledBackBeforeOneAcceptedMeansAFreshTree) {
  write(5, 1);
  flush();
  write(5, 2);     // rolled back: its data does not check out
  const MapEntry torn = disk_->map()[5];
  write(900, 1);   // accepted, and its group adopted the torn one's root
  auto image = snapshot();
  const std::vector<std::byte> garbage(kBlock, std::byte{0x5a});
  image->write(sb_.platter_offset + torn.psn() * kSectorBytes, garbage);
  RecoveredState st = recover(*image, sb_);
  EXPECT_EQ(st.report.groups_rejected, 1u);
  EXPECT_GE(st.report.groups_accepted, 1u);
  EXPECT_TRUE(st.needs_checkpoint);
  // And the disk opens on it, with a fresh tree.
  VldDisk reopened(std::make_unique<MemoryBackingStore>(image->bytes()), sb_);
  EXPECT_EQ(reopened.check_consistency(), "");
  EXPECT_EQ(reopened.vld_stats().checkpoints, 1u);
}

TEST_F(RecoveryTest, ItReadsAndNeverWritesSoTwiceIsTheSame) {
  for (uint64_t b = 0; b < 30; ++b) write((b * 7) % 1000, 1, b % 5 == 0);
  auto image = snapshot();
  const std::vector<std::byte> before = image->bytes();
  RecoveredState first = recover(*image, sb_);
  EXPECT_EQ(image->bytes(), before) << "recover() wrote to the image";
  RecoveredState second = recover(*image, sb_);
  EXPECT_EQ(first.map, second.map);
  EXPECT_EQ(first.next_seq, second.next_seq);
  EXPECT_EQ(first.protected_psns, second.protected_psns);
}

TEST_F(RecoveryTest, ADamagedRecordSlotMeansAFullScan) {
  for (uint64_t b = 0; b < 10; ++b) write(b, 1);
  flush();
  const std::vector<MapEntry> want = disk_->map();
  auto image = snapshot();
  const std::vector<std::byte> garbage(kSectorBytes, std::byte{0x33});
  image->write(sb_.platter_offset + 0 * kSectorBytes, garbage);  // record slot 0
  RecoveredState st = recover(*image, sb_);
  EXPECT_EQ(st.report.method, "full-scan");
  EXPECT_NE(st.report.damage.find("slot 0"), std::string::npos) << st.report.damage;
  EXPECT_EQ(st.map, want) << "a full scan must still find every flushed write";
}

}  // namespace
}  // namespace vld
