// mode=lld's incremental checkpoints (format_version 3; checkpoint.h,
// checkpoint_sectors.h): which table sectors each slot holds stale, and on
// a real disk that a checkpoint writes what changed, not the whole tables,
// while one of format_version 2 still writes them whole.
#include "core/lld/checkpoint_sectors.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/lld/checkpoint.h"
#include "core/lld/lld_disk.h"
#include "core/store/backing_store.h"
#include "tests/unit/lld_test_util.h"

namespace vld {
namespace {

using Sectors = std::vector<uint32_t>;

TEST(CheckpointSectors, ATouchIsStaleInBothSlotsUntilEachIsWritten) {
  // 100 blocks: map sectors 0..3 (32 entries a sector, the last one part
  // full), usage rows from byte 1600: sector 3 on.
  CheckpointSectors s(5, 100);
  EXPECT_EQ(s.stale(0), (Sectors{0, 1, 2, 3, 4}));  // nothing known of either slot
  std::vector<unsigned char> a(5 * 512, 1), b = a;
  b[2 * 512 + 7] = 9;  // slot 1 differs in sector 2
  s.loaded(0, std::vector<uint64_t>(5, 7), a, b);
  EXPECT_EQ(s.stale(0), Sectors{});
  EXPECT_EQ(s.stale(1), Sectors{2});
  s.touch_map(40);    // sector 1
  s.touch_usage(0);   // byte 1600: sector 3
  s.touch_usage(9);   // bytes 1708..1719: sector 3 (512 * 3 = 1536 .. 2047)
  s.touch_usage(35);  // bytes 2020..2031: sector 3
  s.touch_usage(36);  // bytes 2032..2043
  s.touch_usage(37);  // bytes 2044..2055: sectors 3 and 4
  EXPECT_EQ(s.stale(0), (Sectors{1, 3, 4}));
  EXPECT_EQ(s.stale(1), (Sectors{1, 2, 3, 4}));
  s.written(0);
  EXPECT_EQ(s.stale(0), Sectors{});
  EXPECT_EQ(s.stale(1), (Sectors{1, 2, 3, 4}));
  // An invalid other slot: all of it stale.
  s.loaded(1, std::vector<uint64_t>(5, 7), a, {});
  EXPECT_EQ(s.stale(0), (Sectors{0, 1, 2, 3, 4}));
  EXPECT_EQ(s.stale(1), Sectors{});
}

TEST(CheckpointSectors, ATableSectorEncodesAsTheWholeTablesDo) {
  LldShape shape{.segment_sectors = 64, .block_sectors = 8, .segment_count = 50,
                 .logical_blocks = 70, .platter_sectors = 1 << 16};
  Checkpoint c;
  c.generation = 1;
  c.next_seq = 5;
  c.tables.map.resize(shape.logical_blocks);
  c.tables.usage.resize(shape.segment_count);
  for (uint32_t b = 0; b < 70; ++b) c.tables.map[b] = BlockMapEntry{b * 8 + 1, b * 77, b + 1};
  for (uint32_t s = 0; s < 50; ++s) c.tables.usage[s] = SegmentUsage{s % 7, s % 5};
  const std::vector<unsigned char> slot = encode_checkpoint(c, shape, test::key_of(3));
  std::vector<unsigned char> sector(512);
  for (uint32_t i = 0; i < checkpoint_table_sectors(shape); ++i) {
    encode_table_sector(c.tables.map, c.tables.usage, i, sector.data());
    EXPECT_TRUE(std::equal(sector.begin(), sector.end(), slot.begin() + 512 * (i + 1))) << i;
  }
}

// A 64 MiB disk (16,384 blocks: 513 table sectors) and 200 random one-block
// writes after a clean open: the closing checkpoint writes the record and
// the sectors those writes changed, into each slot in turn (the two then
// alike), and the image opens clean, reading the records and one slot's
// tables, with every block as written. An image of format_version 2 writes
// the whole slot, once.
TEST(CheckpointSectors, ACheckpointWritesWhatChanged) {
  std::map<uint32_t, SimDuration> checkpoint_time;
  for (uint32_t version : {kLldFormatVersion, kLldDigestFormatVersion, kLldPackedFormatVersion}) {
    Superblock sb = plan_image(test::lld_format_options(64 << 20, 25, 512 * 1024, 0));
    sb.format_version = version;
    MemoryBackingStore mem(sb.image_bytes());
    format_store(mem, sb);
    const LldLayout layout = plan_lld_layout(sb.geometry, sb.simulated_cylinders, sb.export_bytes,
                                             sb.block_bytes, sb.segment_bytes, sb.nvram_bytes,
                                             version);
    const uint32_t table_sectors = checkpoint_table_sectors(layout.shape);
    std::vector<std::byte> data(4096, std::byte{5});
    std::mt19937_64 rng(1);
    std::vector<uint64_t> written;
    {
      LldDisk disk(std::make_unique<ProxyStore>(mem), sb);
      for (int i = 0; i < 100; ++i) {
        written.push_back(rng() % 16384);
        disk.write(written.back() * 4096, data, false, SimTime{});
      }
      disk.close();
      const LldStats s = disk.report().stats;
      checkpoint_time[version] = s.checkpoint_time;
      if (version == kLldPackedFormatVersion) {
        EXPECT_EQ(s.checkpoints, 1u);
        EXPECT_EQ(s.checkpoint_sectors_written, 1 + table_sectors);
      } else {
        // Twice: 100 map entries in at most 100 sectors, a few usage rows,
        // the record (version 4: and an index sector), which fit the
        // journal (130 sectors); a third checkpoint only if the second
        // freed a segment.
        EXPECT_GE(s.checkpoints, 2u);
        EXPECT_LE(s.checkpoints, 3u);
        EXPECT_LE(s.checkpoint_sectors_written, 2 * (1u + 100 + 2 + 1) + 1 + 2 + 1);
        EXPECT_GE(s.checkpoint_sectors_written, 2 * (1u + 75));
        EXPECT_EQ(s.checkpoint_folds, version == kLldFormatVersion ? 0 : s.checkpoints);
      }
    }
    // The open reads both records, then one slot's tables and its journal,
    // and the other's journal, whose index it must know.
    uint32_t journals = 0;
    for (const LldExtent& slot : layout.checkpoint) {
      std::vector<unsigned char> record(512);
      mem.read(sb.platter_offset + slot.first_psn * 512, std::as_writable_bytes(std::span(record)));
      auto r = decode_checkpoint_record(record, layout.shape, sb.secret);
      ASSERT_TRUE(r.has_value());
      journals += r->checkpoint.journal_sectors;
      if (version != kLldFormatVersion) {
        EXPECT_EQ(r->checkpoint.journal_sectors, 0u);
      }
    }
    if (version == kLldFormatVersion) {
      EXPECT_GE(journals, 2 * 75u);
    }
    LldDisk again(std::make_unique<ProxyStore>(mem), sb);
    EXPECT_TRUE(again.report().recovery.clean);
    EXPECT_EQ(again.report().recovery.sectors_read, 2 + table_sectors + journals)
        << "version " << version;
    std::vector<std::byte> got(4096);
    for (uint64_t b : written) {
      again.read(b * 4096, got, SimTime{});
      ASSERT_EQ(got, data) << "block " << b;
    }
  }
  // Appended in one run, the changed sectors cost far less than written in
  // place, where they lie on most of the tables' tracks.
  EXPECT_LT(checkpoint_time[kLldFormatVersion] * 3, checkpoint_time[kLldDigestFormatVersion]);
}

// A small disk the cleaner works on (overwrites, trims; many checkpoints,
// each written incrementally, in version 4 into journals that fill and
// fold), and the same requests on images of format_version 3 and 2, which
// writes whole tables: after each clean close both slots decode, versions
// 3 and 2 hold the same tables, and every block reads as written.
TEST(CheckpointSectors, IncrementalSlotsHoldTheWholeTables) {
  // The crash harness's tight disk: 64-sector tracks, 24 cylinders.
  FormatOptions o = test::lld_format_options(1 << 20, 0, 32 * 1024, 0);
  o.geometry.sectors_per_track = 64;
  o.geometry.tracks_per_cylinder = 4;
  o.geometry.cylinders = 24;
  o.geometry.derive_skews();
  constexpr int kVersions = 3;
  Superblock sb[kVersions] = {plan_image_unchecked(o), plan_image_unchecked(o),
                              plan_image_unchecked(o)};
  sb[1].format_version = kLldDigestFormatVersion;
  sb[2].format_version = kLldPackedFormatVersion;
  std::vector<MemoryBackingStore> mem;
  for (const Superblock& s : sb) {
    mem.emplace_back(s.image_bytes());
    format_store(mem.back(), s);
  }
  std::vector<std::vector<std::byte>> model(256, std::vector<std::byte>(4096));
  std::mt19937_64 rng(9);
  uint64_t checkpoints = 0, folds = 0;
  for (int round = 0; round < 4; ++round) {
    std::vector<std::unique_ptr<LldDisk>> disk;
    for (int v = 0; v < kVersions; ++v)
      disk.push_back(std::make_unique<LldDisk>(std::make_unique<ProxyStore>(mem[v]), sb[v]));
    for (int i = 0; i < 3000; ++i) {
      const uint64_t b = rng() % 256;
      const bool trim = rng() % 10 == 0;
      std::fill(model[b].begin(), model[b].end(), trim ? std::byte{0} : std::byte(1 + rng() % 250));
      for (auto& d : disk) {
        if (trim)
          d->trim(b * 4096, 4096, false, SimTime{});
        else
          d->write(b * 4096, model[b], false, SimTime{});
      }
    }
    std::vector<std::unique_ptr<unsigned char[]>> keep;
    std::vector<CheckpointTables> newest;
    for (int v = 0; v < kVersions; ++v) {
      disk[v]->close();
      const LldLayout& l = disk[v]->layout();
      auto slot = [&](int i) {
        std::vector<unsigned char> bytes(l.checkpoint[i].sectors * 512);
        mem[v].read(sb[v].platter_offset + l.checkpoint[i].first_psn * 512,
                    std::as_writable_bytes(std::span(bytes)));
        return bytes;
      };
      auto picked = pick_checkpoint(slot(0), slot(1), l.shape, sb[v].secret);
      ASSERT_TRUE(picked.has_value());
      ASSERT_TRUE(decode_checkpoint(slot(1 - picked->slot), l.shape, sb[v].secret).has_value());
      newest.push_back(picked->checkpoint.tables);
    }
    checkpoints += disk[0]->report().stats.checkpoints;
    folds += disk[0]->report().stats.checkpoint_folds;
    // Versions 3 and 2 share a layout; version 4's journals make the slots
    // longer and leave fewer segments, so its tables are checked by what
    // the disk reads after each reopen.
    ASSERT_EQ(newest[1], newest[2]) << "round " << round << ": the tables differ";
  }
  EXPECT_GT(checkpoints, 20u) << "precondition: the cleaner checkpoints often";
  EXPECT_GT(folds, 2u) << "precondition: version 4's journals fill and fold";
  for (int v = 0; v < kVersions; ++v) {
    LldDisk disk(std::make_unique<ProxyStore>(mem[v]), sb[v]);
    std::vector<std::byte> got(4096);
    for (uint64_t b = 0; b < 256; ++b) {
      disk.read(b * 4096, got, SimTime{});
      ASSERT_EQ(got, model[b]) << "version " << sb[v].format_version << ", block " << b;
    }
  }
}

}  // namespace
}  // namespace vld
