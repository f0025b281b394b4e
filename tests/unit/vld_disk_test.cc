// VldDisk (mode=vld): contents against a shadow copy, trim/zero/fast zero,
// extents, consistency after every operation of a random workload, clean and
// unclean reopen (recovery), what a single-block write costs on the media,
// and its simulated service time against InplaceDisk at 80% utilization.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/util/checksum.h"
#include "core/store/crash_store.h"
#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/image_format.h"
#include "core/inplace/inplace_disk.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;

Superblock make_superblock(DiskMode mode, uint64_t export_bytes, uint32_t spare_percent,
                           uint32_t block_bytes = kBlock) {
  return test::st19101_superblock(mode, export_bytes, spare_percent, block_bytes);
}

// A formatted image: superblock, then VldDisk::format's first record.
std::unique_ptr<MemoryBackingStore> formatted(const Superblock& sb) {
  auto s = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  auto bytes = encode_superblock(sb);
  s->write(0, std::as_bytes(std::span(bytes)));
  if (sb.mode == DiskMode::kVld) VldDisk::format(*s, sb);
  return s;
}

std::vector<std::byte> read_all(BackingStore& s) {
  std::vector<std::byte> v(s.size_bytes());
  s.read(0, v);
  return v;
}

// A BackingStore over bytes it owns that logs every access while tapping.
class TapStore final : public BackingStore {
 public:
  struct Op {
    char kind;  // 'r', 'w', 'd', 's'
    uint64_t offset, len;
  };
  explicit TapStore(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  uint64_t size_bytes() const override { return bytes_.size(); }
  void read(uint64_t offset, std::span<std::byte> out) override {
    ASSERT_LE(offset + out.size(), bytes_.size());
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    if (tap) ops.push_back({'r', offset, out.size()});
  }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    ASSERT_LE(offset + data.size(), bytes_.size());
    std::memcpy(bytes_.data() + offset, data.data(), data.size());
    if (tap) ops.push_back({'w', offset, data.size()});
  }
  void discard(uint64_t offset, uint64_t len) override {
    std::memset(bytes_.data() + offset, 0, len);
    if (tap) ops.push_back({'d', offset, len});
  }
  void sync() override {
    ++syncs;
    if (tap) ops.push_back({'s', 0, 0});
  }
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    fn(offset, len);
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

  bool tap = false;
  std::vector<Op> ops;
  uint64_t syncs = 0;

 private:
  std::vector<std::byte> bytes_;
};

std::vector<std::byte> pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);  // never zero
  return v;
}

bool all_zero(std::span<const std::byte> v) {
  return std::all_of(v.begin(), v.end(), [](std::byte b) { return b == std::byte{0}; });
}

struct Ext {
  uint64_t offset, len;
  ExtentType type;
  bool operator==(const Ext&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Ext& e) {
  return os << "{" << e.offset << ", +" << e.len << ", "
            << (e.type == ExtentType::kData ? "data" : "hole") << "}";
}
std::vector<Ext> extents_of(Disk& d, uint64_t offset, uint64_t len) {
  std::vector<Ext> v;
  d.extents(offset, len, [&](uint64_t o, uint64_t l, ExtentType t) { v.push_back({o, l, t}); });
  return v;
}

// The whole-block map a shadow keeps, as extents.
std::vector<Ext> shadow_extents(const std::vector<bool>& mapped, uint64_t offset, uint64_t len) {
  std::vector<Ext> v;
  uint64_t pos = offset;
  while (pos < offset + len) {
    bool live = mapped[pos / kBlock];
    uint64_t b = pos / kBlock + 1;
    while (b * kBlock < offset + len && mapped[b] == live) ++b;
    uint64_t end = std::min(offset + len, b * kBlock);
    v.push_back({pos, end - pos, live ? ExtentType::kData : ExtentType::kHole});
    pos = end;
  }
  return v;
}

// The bytes of the block at psn straight from an image, wrapping within its
// track as the allocator places blocks.
std::vector<std::byte> raw_block(const std::vector<std::byte>& image, const Superblock& sb,
                                 uint64_t psn) {
  const uint32_t spt = sb.geometry.sectors_per_track;
  const uint64_t track = psn / spt;
  const uint32_t sector = static_cast<uint32_t>(psn % spt);
  std::vector<std::byte> out(sb.block_bytes);
  for (uint32_t i = 0; i < sb.block_bytes / kSectorBytes; ++i) {
    uint64_t p = track * spt + (sector + i) % spt;
    std::memcpy(out.data() + size_t{i} * kSectorBytes,
                image.data() + sb.platter_offset + p * kSectorBytes, kSectorBytes);
  }
  return out;
}

// Every map entry points at bytes with its checksum, and no two blocks share
// a physical sector.
void expect_map_matches_image(const VldDisk& d, const std::vector<std::byte>& image) {
  const Superblock& sb = d.superblock();
  const uint32_t spt = sb.geometry.sectors_per_track;
  std::set<uint64_t> used;
  for (uint64_t b = 0; b < d.map().size(); ++b) {
    const MapEntry& e = d.map()[b];
    if (!e.mapped()) continue;
    ASSERT_GE(e.psn(), spt) << "block " << b << " on the system track";
    ASSERT_LT(e.psn(), uint64_t{sb.simulated_cylinders} * sb.geometry.sectors_per_cylinder());
    auto bytes = raw_block(image, sb, e.psn());
    EXPECT_EQ(data_checksum(bytes.data(), bytes.size(), b), e.checksum) << "block " << b;
    for (uint32_t i = 0; i < sb.block_bytes / kSectorBytes; ++i) {
      uint64_t p = e.psn() / spt * spt + (e.psn() % spt + i) % spt;
      EXPECT_TRUE(used.insert(p).second) << "sector " << p << " used twice";
    }
  }
}

// The disk, its shadow and the simulated clock.
struct Rig {
  // block_bytes: the disk's block; mapped[] counts kBlock (4 KiB) blocks.
  Rig(uint64_t export_bytes, uint32_t spare = 25, uint32_t block_bytes = kBlock)
      : sb(make_superblock(DiskMode::kVld, export_bytes, spare, block_bytes)) {
    auto s = std::make_unique<TapStore>(read_all(*formatted(sb)));
    store = s.get();
    disk = std::make_unique<VldDisk>(std::move(s), sb);
    shadow.assign(export_bytes, std::byte{0});
    mapped.assign(export_bytes / kBlock, false);
  }

  Completion write(uint64_t off, const std::vector<std::byte>& data, bool fua = false) {
    Completion c = disk->write(off, data, fua, now);
    after(c);
    std::copy(data.begin(), data.end(), shadow.begin() + off);
    if (!data.empty())
      for (uint64_t b = off / kBlock; b <= (off + data.size() - 1) / kBlock; ++b) mapped[b] = true;
    return c;
  }
  Completion trim(uint64_t off, uint64_t len, bool fua = false) {
    Completion c = disk->trim(off, len, fua, now);
    after(c);
    for (uint64_t b = (off + kBlock - 1) / kBlock; (b + 1) * kBlock <= off + len; ++b) {
      mapped[b] = false;
      std::fill(shadow.begin() + b * kBlock, shadow.begin() + (b + 1) * kBlock, std::byte{0});
    }
    return c;
  }
  // Whether zero() must write data blocks (and so refuse a fast zero).
  bool zero_writes_data(uint64_t off, uint64_t len, const ZeroFlags& f) const {
    for (uint64_t b = off / kBlock; b <= (off + len - 1) / kBlock; ++b) {
      bool whole = b * kBlock >= off && (b + 1) * kBlock <= off + len;
      if (whole ? !f.may_trim : mapped[b]) return true;
    }
    return false;
  }
  std::optional<Completion> zero(uint64_t off, uint64_t len, ZeroFlags f) {
    if (len == 0) return disk->zero(off, len, f, now);
    if (f.fast && zero_writes_data(off, len, f)) {
      EXPECT_THROW(
          {
            try {
              disk->zero(off, len, f, now);
            } catch (const Error& e) {
              EXPECT_EQ(e.err(), ENOTSUP);
              throw;
            }
          },
          Error);
      return std::nullopt;
    }
    Completion c = disk->zero(off, len, f, now);
    after(c);
    std::fill(shadow.begin() + off, shadow.begin() + off + len, std::byte{0});
    for (uint64_t b = off / kBlock; b <= (off + len - 1) / kBlock; ++b) {
      bool whole = b * kBlock >= off && (b + 1) * kBlock <= off + len;
      if (whole) mapped[b] = !f.may_trim;
    }
    return c;
  }
  Completion flush() {
    Completion c = disk->flush(now);
    after(c);
    return c;
  }
  std::vector<std::byte> read(uint64_t off, uint64_t len) {
    std::vector<std::byte> v(len);
    Completion c = disk->read(off, v, now);
    after(c);
    return v;
  }
  void expect_reads_shadow(uint64_t off, uint64_t len) {
    auto got = read(off, len);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), shadow.begin() + off))
        << "[" << off << ", +" << len << ") differs";
  }
  uint64_t shadow_live() const { return std::count(mapped.begin(), mapped.end(), true); }

  void after(const Completion& c) {
    EXPECT_GE(c.end, now);
    EXPECT_EQ(c.end - now, c.service.total());
    EXPECT_EQ(c.service.overhead, sb.geometry.controller_overhead);
    now = c.end;
  }

  Superblock sb;
  TapStore* store;
  std::unique_ptr<VldDisk> disk;
  std::vector<std::byte> shadow;
  std::vector<bool> mapped;
  SimTime now = kSimEpoch;
};

// Opens a copy of `image` (a new VldDisk), tapping the store's accesses.
struct Reopened {
  Reopened(const Superblock& sb, std::vector<std::byte> image) {
    auto s = std::make_unique<TapStore>(std::move(image));
    s->tap = true;
    store = s.get();
    disk = std::make_unique<VldDisk>(std::move(s), sb);
    open_ops = store->ops;
    store->tap = false;
  }
  TapStore* store;
  std::unique_ptr<VldDisk> disk;
  std::vector<TapStore::Op> open_ops;
};

// ------------------------------------------------------------ contents

TEST(VldDisk, FreshDiskReadsZerosAndIsConsistent) {
  Rig r(2 << 20);
  EXPECT_EQ(r.disk->live_blocks(), 0u);
  EXPECT_EQ(r.disk->check_consistency(), "");
  auto v = r.read(0, 2 << 20);
  EXPECT_TRUE(all_zero(v));
  EXPECT_EQ(extents_of(*r.disk, 0, 2 << 20), (std::vector<Ext>{{0, 2 << 20, ExtentType::kHole}}));
  // Opening a formatted image: its clean record, walked; nothing to walk.
  EXPECT_TRUE(r.disk->recovery().clean);
  EXPECT_EQ(r.disk->recovery().method, "clean-walk");
  EXPECT_EQ(r.disk->recovery().sectors_read, VldLayout::kRecordSlots);
}

TEST(VldDisk, ReadAfterWriteAlignedUnalignedMultiBlockAndAcrossPieces) {
  Rig r(2 << 20);  // 512 blocks, 16 pieces of 32 blocks (128 KiB)
  struct W {
    uint64_t offset, len;
  };
  const uint64_t piece = kEntriesPerPiece * kBlock;
  const W writes[] = {
      {8192, 16384},                       // aligned, 4 blocks
      {5000, 3000},                        // inside block 1: read-modify-write
      {12345, 777},                        // inside block 3
      {0, 1},                              // one byte
      {(2 << 20) - 513, 513},              // the very end
      {4095, 2},                           // across a block boundary
      {100000, 70000},                     // unaligned, many blocks
      {piece - 3 * kBlock, 6 * kBlock},    // across pieces 0 and 1, aligned
      {3 * piece - 1000, 2 * piece + 2000},// across four pieces, unaligned
      {16384, 4096},                       // overwrite
      {8192, 16384},                       // overwrite the first again
  };
  uint64_t seed = 1;
  for (const W& w : writes) {
    const uint64_t before_rmw = r.disk->vld_stats().rmw_reads;
    const uint64_t first = w.offset / kBlock, last = (w.offset + w.len - 1) / kBlock;
    // Partial blocks that already hold data are read first.
    uint64_t expect_rmw = 0;
    for (uint64_t b : std::set<uint64_t>{first, last}) {
      bool whole = b * kBlock >= w.offset && (b + 1) * kBlock <= w.offset + w.len;
      if (!whole && r.mapped[b]) ++expect_rmw;
    }
    Completion c = r.write(w.offset, pattern(w.len, seed++));
    EXPECT_EQ(c.physical_blocks_written, last - first + 1);
    EXPECT_EQ(r.disk->vld_stats().rmw_reads - before_rmw, expect_rmw) << w.offset;
    EXPECT_GT(c.service.transfer.count(), 0);
    ASSERT_EQ(r.disk->check_consistency(), "");
    EXPECT_EQ(r.disk->live_blocks(), r.shadow_live());
  }
  r.expect_reads_shadow(0, 2 << 20);
  const std::vector<std::pair<uint64_t, uint64_t>> parts = {
      {5001, 2998}, {12000, 5000}, {4090, 10}, {(2 << 20) - 1000, 1000}, {piece - 7, 14},
      {3 * piece - 5000, 9000}};
  for (auto [o, l] : parts) r.expect_reads_shadow(o, l);
  // A read of mapped blocks counts them.
  std::vector<std::byte> buf(3 * kBlock);
  Completion c = r.disk->read(2 * kBlock, buf, r.now);
  EXPECT_EQ(c.physical_blocks_read, 3u);
  EXPECT_EQ(c.service.transfer.count() > 0, true);
  // Unmapped blocks cost nothing on the media.
  c = r.disk->read(200 * kBlock, buf, r.now);
  EXPECT_EQ(c.physical_blocks_read, 0u);
  EXPECT_EQ(c.service.total(), r.sb.geometry.controller_overhead);
  expect_map_matches_image(*r.disk, r.store->bytes());
}

TEST(VldDisk, SingleBlockWriteWritesOneDataBlockAndOneMapSector) {
  Rig r(2 << 20);
  r.store->tap = true;
  const auto data = pattern(kBlock, 3);
  Completion c = r.write(7 * kBlock, data);
  r.store->tap = false;
  EXPECT_EQ(r.disk->vld_stats().data_blocks_written, 1u);
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, 1u);
  // The first write since the clean open wrote the "open" record first.
  EXPECT_EQ(r.disk->vld_stats().records_written, 1u);
  // The drive transferred the record, then 8 + 1 sectors.
  const double sector_ns = r.sb.geometry.sector_time_ns();
  EXPECT_NEAR(static_cast<double>(c.service.transfer.count()), 10 * sector_ns, 3.0);
  uint64_t bytes = 0, record_bytes = 0;
  for (const auto& op : r.store->ops) {
    if (op.kind != 'w') continue;
    if (op.offset < r.sb.platter_offset + VldLayout::kRecordSlots * kSectorBytes)
      record_bytes += op.len;
    else
      bytes += op.len;
  }
  EXPECT_EQ(record_bytes, kSectorBytes);
  EXPECT_EQ(bytes, kBlock + kSectorBytes);
  // The map entry points at the data, and the map sector is a valid one for
  // piece 0 with bit 7 in `changed`.
  const MapEntry& e = r.disk->map()[7];
  ASSERT_TRUE(e.mapped());
  EXPECT_EQ(raw_block(r.store->bytes(), r.sb, e.psn()), data);
  int found = 0;
  const auto& img = r.store->bytes();
  const uint64_t sectors = uint64_t{r.sb.simulated_cylinders} * r.sb.geometry.sectors_per_cylinder();
  for (uint64_t p = 0; p < sectors; ++p) {
    auto m = decode_map_sector(reinterpret_cast<const unsigned char*>(img.data()) +
                                   r.sb.platter_offset + p * kSectorBytes,
                               r.sb.secret);
    if (!m) continue;
    ++found;
    EXPECT_EQ(m->piece, 0u);
    EXPECT_EQ(m->changed, uint64_t{1} << 7);
    EXPECT_EQ(m->entries[7], e);
    EXPECT_EQ(m->group_count, 1u);
    EXPECT_EQ(m->pointer_count, 0);
  }
  EXPECT_EQ(found, 1);
}

// The report's fragmentation figures, by hand: on a fresh disk every free
// sector lies on an empty track, 32 blocks side by side; one 4 KiB write
// (8 data sectors and its map sector back to back on an empty track) leaves
// that track one free run of 247 sectors: 30 blocks, and 7 sectors that only
// map sectors can use.
TEST(VldDisk, ReportCountsFreeSectorsNoBlockCanUse) {
  Rig r(2 << 20);
  const uint32_t spt = r.sb.geometry.sectors_per_track;
  VldReport fresh = *r.disk->mode_report().vld;
  EXPECT_EQ(fresh.free_sectors, r.disk->free_space().free_sectors());
  EXPECT_EQ(fresh.block_holes * 8, fresh.free_sectors);
  EXPECT_EQ(fresh.fragmented_free_fraction(), 0.0);
  r.write(7 * kBlock, pattern(kBlock, 3));
  VldReport after = *r.disk->mode_report().vld;
  ASSERT_EQ(after.free_sectors, fresh.free_sectors - 9);
  EXPECT_EQ(after.block_holes, fresh.block_holes - spt / 8 + (spt - 9) / 8);
  EXPECT_NEAR(after.fragmented_free_fraction(), 7.0 / static_cast<double>(after.free_sectors),
              1e-12);
}

// The simulated time of the first two writes on a fresh 2-cylinder st19101
// disk, by hand (a revolution is 6 ms: 256 slots of 23.4375 us). The head
// is on the system track (cylinder 0, head 0), which holds only log
// records. Write 1 starts at 0 with 100 us of overhead; as the first write
// since a clean open it writes the "open" record first, in slot 0 of the
// system track (generation 2): 5.9 ms of rotation to slot 256, one sector,
// ending at 6,023.438 us. Then a head switch to the nearest empty track
// (head 1; the one-cylinder seek costs the same 0.5 ms and is not
// preferred), landing at slot 22.33 of the revolution, so the data starts
// at slot 23 (15.625 us of rotation), which is sector 23 - 22 (track skew)
// = 1 of track 1; 8 + 1 sectors follow back to back. Write 2 starts when
// write 1 ends: 100 us later the head is at slot 36.27 of the same track,
// and the free run starting at slot 37 (sector 15) is 17.19 us away.
TEST(VldDisk, FirstWritesCostWhatTheGeometrySays) {
  Rig r(2 << 20);
  ASSERT_EQ(r.sb.simulated_cylinders, 2u);
  ASSERT_EQ(r.sb.geometry.track_skew_sectors, 22u);
  const int64_t sector = 23'438;                  // ceil(23437.5)
  const int64_t xfer = 187'500 + sector;          // ceil(8 x 23437.5) + ceil(23437.5)
  const int64_t record_end = 6'000'000 + sector;  // the open record, from slot 256
  Completion c1 = r.write(7 * kBlock, pattern(kBlock, 1));
  EXPECT_EQ(c1.service.overhead.count(), 100'000);
  EXPECT_EQ(c1.service.head_switch.count(), 500'000);
  EXPECT_EQ(c1.service.seek.count(), 0);
  EXPECT_EQ(c1.service.rotation.count(), 5'900'000 + 15'625);
  EXPECT_EQ(c1.service.transfer.count(), sector + xfer);
  EXPECT_EQ((c1.end - kSimEpoch).count(), record_end + 500'000 + 15'625 + xfer);
  EXPECT_EQ(r.disk->vld_stats().records_written, 1u);
  EXPECT_EQ(r.disk->map()[7].psn(), 256u + 1);
  Completion c2 = r.write(8 * kBlock, pattern(kBlock, 2));
  const int64_t start2 = (c1.end - kSimEpoch).count();
  ASSERT_EQ(start2, 6'750'001);
  EXPECT_EQ(c2.service.head_switch.count(), 0);
  EXPECT_EQ(c2.service.rotation.count(), 6'867'188 - (start2 + 100'000));
  EXPECT_EQ(c2.service.transfer.count(), xfer);
  EXPECT_EQ(r.disk->map()[8].psn(), 256u + 15);
  EXPECT_EQ(r.disk->vld_stats().records_written, 1u);
  EXPECT_EQ(r.disk->check_consistency(), "");
}

// A 1 KiB write into a block that holds data, as ext4 of 1 KiB blocks
// writes: a disk of 4 KiB blocks reads the block's old copy first (8
// sectors, with a rotational wait: the track buffer holds nothing written)
// and writes it whole with its map sector, 17 sectors in all; a disk of
// 1 KiB blocks (block=1K) maps the 1 KiB block itself and writes its 2
// sectors and the map sector, reading nothing (docs/benchmarks.md, section
// 13). Both read back the merged contents.
TEST(VldDisk, OneKiBWriteReadsTheRestOfA4KiBBlockAndNothingOnA1KiBDisk) {
  const double sector_ns =
      test::st19101_superblock(DiskMode::kVld, 2 << 20).geometry.sector_time_ns();
  for (const uint32_t block : {4096u, 1024u}) {
    SCOPED_TRACE(block);
    Rig r(2 << 20, 25, block);
    r.write(0, pattern(4 * kBlock, 1));
    const VldStats before = r.disk->vld_stats();
    const Completion c = r.write(kBlock + 1024, pattern(1024, 2));
    const VldStats& after = r.disk->vld_stats();
    const uint64_t read_sectors = block == 4096 ? 8 : 0, written = block / kSectorBytes + 1;
    EXPECT_EQ(after.rmw_reads - before.rmw_reads, block == 4096 ? 1u : 0u);
    EXPECT_EQ(after.data_blocks_written - before.data_blocks_written, 1u);
    EXPECT_EQ(after.map_sectors_written - before.map_sectors_written, 1u);
    EXPECT_NEAR(static_cast<double>(c.service.transfer.count()),
                static_cast<double>(read_sectors + written) * sector_ns, 3.0);
    if (block == 4096) {
      EXPECT_GT(c.service.rotation.count(), 0);  // waiting for the old copy
    }
    r.expect_reads_shadow(0, 4 * kBlock);
    EXPECT_EQ(r.disk->check_consistency(), "");
  }
}

// --------------------------------------------------------- trim and zero

TEST(VldDisk, TrimUnmapsWholeBlocksOnly) {
  Rig r(2 << 20);
  r.write(0, pattern(16 * kBlock, 4));
  ASSERT_EQ(r.disk->live_blocks(), 16u);
  const VldStats before = r.disk->vld_stats();
  Completion c = r.trim(1000, 5 * kBlock);  // whole blocks 1..4 (5096 .. 21480)
  EXPECT_EQ(r.disk->live_blocks(), 12u);
  EXPECT_EQ(c.physical_blocks_written, 0u);
  EXPECT_EQ(r.disk->vld_stats().data_blocks_written, before.data_blocks_written);
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, before.map_sectors_written + 1);
  for (uint64_t b = 1; b <= 4; ++b) EXPECT_FALSE(r.disk->map()[b].mapped()) << b;
  EXPECT_TRUE(r.disk->map()[0].mapped());
  EXPECT_TRUE(r.disk->map()[5].mapped());
  r.expect_reads_shadow(0, 16 * kBlock);
  EXPECT_TRUE(all_zero(r.read(kBlock, 4 * kBlock)));
  EXPECT_EQ(extents_of(*r.disk, 0, 16 * kBlock),
            (std::vector<Ext>{{0, kBlock, ExtentType::kData},
                              {kBlock, 4 * kBlock, ExtentType::kHole},
                              {5 * kBlock, 11 * kBlock, ExtentType::kData}}));
  EXPECT_EQ(r.disk->check_consistency(), "");
  // Trimming holes unmaps them again in the request's own group (vld_disk.cc:
  // an earlier trim of them may not be durable yet, and the version chain
  // ties the two): one map sector, no data, nothing changes for the reader.
  VldStats s0 = r.disk->vld_stats();
  c = r.trim(kBlock, 4 * kBlock);
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written + 1);
  EXPECT_EQ(r.disk->vld_stats().data_blocks_written, s0.data_blocks_written);
  EXPECT_EQ(c.physical_blocks_written, 0u);
  EXPECT_EQ(r.disk->live_blocks(), 12u);
  // A trim that covers no whole block does nothing at all.
  s0 = r.disk->vld_stats();
  c = r.trim(6 * kBlock + 10, 100);
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written);
  EXPECT_EQ(c.service.total(), r.sb.geometry.controller_overhead);
  EXPECT_EQ(r.disk->live_blocks(), 12u);
  r.expect_reads_shadow(0, 16 * kBlock);
  EXPECT_EQ(r.disk->check_consistency(), "");
}

// Once a trim's map piece is durable (a flush), trimming the same holes
// again writes nothing: no crash can map them again. Never-written pieces
// are durably unmapped from the start: mkfs's discard of a whole fresh disk
// costs no map sectors (it cost one per piece: 8192 on 1 GiB).
TEST(VldDisk, TrimOfDurablyUnmappedBlocksWritesNothing) {
  Rig r(2 << 20);  // 512 blocks, 16 pieces
  VldStats s0 = r.disk->vld_stats();
  Completion c = r.trim(0, 2 << 20);  // the whole, never written disk
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written);
  EXPECT_EQ(c.service.total(), r.sb.geometry.controller_overhead);
  EXPECT_EQ(c.syncs, 0u);
  ASSERT_TRUE(r.zero(0, 2 << 20, ZeroFlags{true, false, true}).has_value());  // fast zero too
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written);
  EXPECT_EQ(r.disk->mode_report().vld->live_map_sectors, 0u);

  r.write(0, pattern(16 * kBlock, 4));
  r.trim(kBlock, 4 * kBlock);  // blocks 1..4 unmapped, not yet durable
  s0 = r.disk->vld_stats();
  r.trim(kBlock, 4 * kBlock);  // not durable: unmapped again, one map sector
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written + 1);
  r.flush();
  s0 = r.disk->vld_stats();
  r.trim(kBlock, 4 * kBlock);  // durable now: nothing to write
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written);
  // A partial-block zero over durable holes writes nothing either.
  r.zero(kBlock + 100, 200, ZeroFlags{false, false, false});
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, s0.map_sectors_written);
  r.expect_reads_shadow(0, 16 * kBlock);
  EXPECT_EQ(r.disk->check_consistency(), "");
}

TEST(VldDisk, ZeroWithMayTrimPunchesWholeBlocksAndRewritesEdges) {
  Rig r(2 << 20);
  r.write(0, pattern(8 * kBlock, 5));
  ZeroFlags f;
  f.may_trim = true;
  const VldStats before = r.disk->vld_stats();
  auto c = r.zero(1000, 12000, f);  // whole 1, 2; edges 0 and 3
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->physical_blocks_written, 2u);
  EXPECT_EQ(r.disk->vld_stats().rmw_reads - before.rmw_reads, 2u);
  EXPECT_EQ(r.disk->live_blocks(), 6u);
  r.expect_reads_shadow(0, 8 * kBlock);
  EXPECT_EQ(extents_of(*r.disk, 0, 8 * kBlock),
            (std::vector<Ext>{{0, kBlock, ExtentType::kData},
                              {kBlock, 2 * kBlock, ExtentType::kHole},
                              {3 * kBlock, 5 * kBlock, ExtentType::kData}}));
  EXPECT_EQ(r.disk->check_consistency(), "");
}

TEST(VldDisk, ZeroWithoutMayTrimWritesAllocatedZeros) {
  Rig r(2 << 20);
  r.write(0, pattern(4 * kBlock, 6));
  r.trim(2 * kBlock, kBlock);
  ASSERT_EQ(r.disk->live_blocks(), 3u);
  ZeroFlags f;  // NO_HOLE
  auto c = r.zero(kBlock, 3 * kBlock, f);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->physical_blocks_written, 3u);
  EXPECT_EQ(r.disk->live_blocks(), 4u);
  EXPECT_TRUE(all_zero(r.read(kBlock, 3 * kBlock)));
  r.expect_reads_shadow(0, 4 * kBlock);
  EXPECT_EQ(extents_of(*r.disk, 0, 4 * kBlock), (std::vector<Ext>{{0, 4 * kBlock, ExtentType::kData}}));
  for (uint64_t b = 1; b < 4; ++b) {
    ASSERT_TRUE(r.disk->map()[b].mapped());
    std::vector<std::byte> z(kBlock, std::byte{0});
    EXPECT_EQ(r.disk->map()[b].checksum, data_checksum(z.data(), z.size(), b));
  }
  EXPECT_EQ(r.disk->check_consistency(), "");
}

TEST(VldDisk, FastZeroThatWouldWriteDataFailsWithEnotsupAndChangesNothing) {
  Rig r(2 << 20);
  r.write(0, pattern(8 * kBlock, 10));
  r.trim(6 * kBlock, 2 * kBlock);  // blocks 6 and 7 are holes
  r.flush();
  struct Case {
    uint64_t offset, len;
    bool may_trim;
  };
  const Case refused[] = {
      {kBlock, 2 * kBlock, false},  // NO_HOLE: allocated zeros are data writes
      {6 * kBlock, kBlock, false},  // even over a hole
      {1000, 12000, true},          // mapped partial edges need writing
      {100, 50, true},              // inside a mapped block
      {5 * kBlock + 1, kBlock, true},  // edge in mapped block 5
  };
  for (const Case& k : refused) {
    const auto image = r.store->bytes();
    const VldStats stats = r.disk->vld_stats();
    const std::vector<MapEntry> map = r.disk->map();
    ZeroFlags f;
    f.fast = true;
    f.may_trim = k.may_trim;
    try {
      r.disk->zero(k.offset, k.len, f, r.now);
      ADD_FAILURE() << "fast zero of [" << k.offset << ", +" << k.len << ") succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOTSUP) << e.what();
    }
    EXPECT_TRUE(r.store->bytes() == image) << "the image changed";
    EXPECT_EQ(r.disk->map(), map);
    EXPECT_EQ(r.disk->live_blocks(), 6u);
    EXPECT_EQ(r.disk->vld_stats().map_sectors_written, stats.map_sectors_written);
    EXPECT_EQ(r.disk->vld_stats().records_written, stats.records_written);
    EXPECT_EQ(r.disk->check_consistency(), "");
    r.expect_reads_shadow(0, 8 * kBlock);
  }
  // Fast zero that only unmaps, and one whose partial edges are holes.
  ZeroFlags f;
  f.fast = true;
  f.may_trim = true;
  const uint64_t data_blocks = r.disk->vld_stats().data_blocks_written;
  auto c = r.zero(2 * kBlock, 3 * kBlock, f);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->physical_blocks_written, 0u);
  c = r.zero(6 * kBlock + 100, kBlock, f);  // edges in holes 6 and 7
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(r.disk->vld_stats().data_blocks_written, data_blocks);
  EXPECT_EQ(r.disk->live_blocks(), 3u);
  r.expect_reads_shadow(0, 8 * kBlock);
  EXPECT_EQ(r.disk->check_consistency(), "");
}

// --------------------------------------------------------- random workload

// ~2000 random operations (writes of every shape, with and without FUA,
// reads, trims, zeros with every flag combination, flushes) on a 16 MiB
// st19101 disk; after every one the disk is consistent and agrees with the
// shadow on live blocks; reads compare with the shadow.
void random_workload(Rig& r, int ops, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const uint64_t size = r.shadow.size();
  const uint64_t blocks = size / kBlock;
  auto pick_block = [&] {
    // Half the traffic on a hot 1/16 of the disk, for overwrites.
    return rng() % 2 ? rng() % (blocks / 16) : rng() % blocks;
  };
  int refused = 0;
  for (int i = 0; i < ops; ++i) {
    SCOPED_TRACE("op " + std::to_string(i));
    const int kind = static_cast<int>(rng() % 100);
    uint64_t off, len;
    const int shape = static_cast<int>(rng() % 4);
    if (shape == 0) {
      off = pick_block() * kBlock;
      len = kBlock;
    } else if (shape == 1) {
      off = pick_block() * kBlock;
      len = (1 + rng() % 16) * kBlock;
    } else {
      off = pick_block() * kBlock + rng() % kBlock;
      len = 1 + rng() % 40000;
    }
    len = std::min(len, size - off);
    if (kind < 45) {
      r.write(off, pattern(len, seed * 1'000'003 + i), rng() % 3 == 0);
    } else if (kind < 60) {
      r.expect_reads_shadow(off, len);
    } else if (kind < 70) {
      r.trim(off, len, rng() % 2 == 0);
    } else if (kind < 90) {
      ZeroFlags f;
      f.may_trim = rng() % 2;
      f.fua = rng() % 2;
      f.fast = rng() % 3 == 0;
      if (!r.zero(off, len, f)) ++refused;
    } else {
      r.flush();
    }
    const std::string why = r.disk->check_consistency();
    ASSERT_EQ(why, "");
    ASSERT_EQ(r.disk->live_blocks(), r.shadow_live());
    if (i % 100 == 0) {
      ASSERT_EQ(extents_of(*r.disk, 0, size), shadow_extents(r.mapped, 0, size));
    }
  }
  EXPECT_GT(refused, 0);
}

// Each piece's newest valid map sector in an image: piece -> (psn, sector).
std::map<uint32_t, std::pair<uint64_t, MapSector>> newest_map_sectors(
    const Superblock& sb, const std::vector<std::byte>& img) {
  const uint64_t sectors = uint64_t{sb.simulated_cylinders} * sb.geometry.sectors_per_cylinder();
  std::map<uint32_t, std::pair<uint64_t, MapSector>> newest;
  for (uint64_t p = VldLayout::kRecordSlots; p < sectors; ++p) {
    auto m = decode_map_sector(
        reinterpret_cast<const unsigned char*>(img.data()) + sb.platter_offset + p * kSectorBytes,
        sb.secret);
    if (!m) continue;
    auto it = newest.find(m->piece);
    if (it == newest.end() || it->second.second.seq < m->seq) newest[m->piece] = {p, *m};
  }
  return newest;
}

// The valid log record of the newest generation in an image's two slots.
std::optional<LogRecord> newest_record(const Superblock& sb, const std::vector<std::byte>& img) {
  std::optional<LogRecord> rec;
  for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
    auto x = decode_log_record(
        reinterpret_cast<const unsigned char*>(img.data()) + sb.platter_offset + slot * kSectorBytes,
        sb.secret);
    if (x && (!rec || x->generation > rec->generation)) rec = x;
  }
  return rec;
}

TEST(VldDisk, RandomWorkloadStaysConsistentAndReopensCleanly) {
  Rig r(16 << 20);
  random_workload(r, 2000, 77);
  if (HasFatalFailure()) return;
  r.expect_reads_shadow(0, r.shadow.size());
  EXPECT_EQ(extents_of(*r.disk, 0, r.shadow.size()), shadow_extents(r.mapped, 0, r.shadow.size()));
  expect_map_matches_image(*r.disk, r.store->bytes());
  const VldStats& st = r.disk->vld_stats();
  std::printf("\nrandom workload: %llu data blocks, %llu map sectors (%llu relays), %llu records, "
              "%llu rmw reads\n",
              static_cast<unsigned long long>(st.data_blocks_written),
              static_cast<unsigned long long>(st.map_sectors_written),
              static_cast<unsigned long long>(st.relays),
              static_cast<unsigned long long>(st.records_written),
              static_cast<unsigned long long>(st.rmw_reads));
  EXPECT_GT(st.records_written, 1u);  // the window moved at least once

  // Clean close, then a new VldDisk on a copy of the bytes.
  const std::vector<MapEntry> map = r.disk->map();
  const uint64_t live = r.disk->live_blocks();
  const auto live_map_sectors = r.disk->mode_report().vld->live_map_sectors;
  r.disk->close();
  Reopened o(r.sb, r.store->bytes());
  const RecoveryReport& rep = o.disk->recovery();
  EXPECT_TRUE(rep.clean);
  EXPECT_EQ(rep.method, "clean-walk");
  EXPECT_EQ(rep.tracks_scanned, 0u);
  EXPECT_EQ(rep.candidates, 0u);
  EXPECT_EQ(o.disk->map(), map);
  EXPECT_EQ(o.disk->live_blocks(), live);
  EXPECT_EQ(o.disk->check_consistency(), "");
  EXPECT_EQ(o.disk->mode_report().vld->live_map_sectors, live_map_sectors);
  std::vector<std::byte> all(r.shadow.size());
  o.disk->read(0, all, kSimEpoch);
  EXPECT_TRUE(all == r.shadow);

  // What the clean walk read. Re-derived from the image: the live version
  // of each piece is its newest valid map sector. The walk starts at the
  // record's root and follows pointers newest first; a pointer names its
  // piece, so one to a piece already met (an older version) is dropped
  // unread. So it reads the two record slots and each live map sector
  // exactly once: sectors_read == live map sectors + 2.
  const Superblock& sb = r.sb;
  const auto newest = newest_map_sectors(sb, r.store->bytes());
  EXPECT_EQ(newest.size(), live_map_sectors);
  const std::optional<LogRecord> rec = newest_record(sb, r.store->bytes());
  ASSERT_TRUE(rec.has_value());
  EXPECT_TRUE(rec->clean);
  ASSERT_TRUE(rec->has_root);
  std::multiset<uint64_t> expect_reads;
  for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) expect_reads.insert(slot);
  std::set<uint64_t> live_psns;
  for (auto& [piece, v] : newest) {
    live_psns.insert(v.first);
    expect_reads.insert(v.first);
  }
  EXPECT_TRUE(live_psns.count(rec->root.psn)) << "the root is not a live map sector";
  // Pointers held by live map sectors that lead to replaced versions.
  uint64_t stale_pointers = 0;
  for (auto& [piece, v] : newest)
    for (uint16_t i = 0; i < v.second.pointer_count; ++i)
      stale_pointers += live_psns.count(v.second.pointers[i].psn) == 0;
  EXPECT_EQ(rep.map_sectors_walked, live_map_sectors);
  EXPECT_EQ(rep.sectors_read, live_map_sectors + VldLayout::kRecordSlots);
  // The tracks those live map sectors lie on, each counted once.
  const VldLayout layout(sb);
  std::set<uint32_t> live_tracks;
  for (uint64_t psn : live_psns) live_tracks.insert(layout.track_of(psn));
  EXPECT_EQ(rep.tracks_walked, live_tracks.size());
  EXPECT_LT(rep.tracks_walked, live_map_sectors);  // the close's checkpoint is compact
  // The store saw exactly those single-sector reads, and nothing else.
  std::multiset<uint64_t> read_psns;
  for (const auto& op : o.open_ops) {
    if (op.kind != 'r') continue;
    EXPECT_EQ(op.len, kSectorBytes);
    read_psns.insert((op.offset - sb.platter_offset) / kSectorBytes);
  }
  EXPECT_EQ(read_psns, expect_reads);
  std::printf("clean walk: %llu sectors read = 2 record slots + %llu live map sectors "
              "(%llu pointers to replaced versions left unread); %.2f ms simulated\n",
              static_cast<unsigned long long>(rep.sectors_read),
              static_cast<unsigned long long>(live_map_sectors),
              static_cast<unsigned long long>(stale_pointers), rep.simulated_ms);
}

// With every piece written once (no replaced map sectors), the clean walk
// reads exactly the live map sectors and the two record slots.
TEST(VldDisk, CleanWalkOfAFreshTreeReadsLiveMapSectorsAndRecords) {
  Rig r(16 << 20);
  const uint64_t pieces = (16 << 20) / kBlock / kEntriesPerPiece;  // 128
  for (uint64_t p = 0; p < pieces; ++p) r.write(p * kEntriesPerPiece * kBlock + 5 * kBlock, pattern(kBlock, p));
  ASSERT_EQ(r.disk->vld_stats().relays, 0u);
  r.disk->close();
  Reopened o(r.sb, r.store->bytes());
  const RecoveryReport& rep = o.disk->recovery();
  EXPECT_TRUE(rep.clean);
  EXPECT_EQ(rep.method, "clean-walk");
  EXPECT_EQ(rep.map_sectors_walked, pieces);
  EXPECT_EQ(rep.sectors_read, pieces + VldLayout::kRecordSlots);
  EXPECT_GT(rep.simulated_ms, 0.0);
  uint64_t reads = 0;
  for (const auto& op : o.open_ops) reads += op.kind == 'r';
  EXPECT_EQ(reads, rep.sectors_read);
  for (uint64_t p = 0; p < pieces; ++p) {
    std::vector<std::byte> b(kBlock);
    o.disk->read(p * kEntriesPerPiece * kBlock + 5 * kBlock, b, kSimEpoch);
    EXPECT_EQ(b, pattern(kBlock, p)) << p;
  }
}

// ------------------------------------------------------------ unclean reopen

TEST(VldDisk, UncleanReopenRecoversEverythingOnTheImage) {
  Rig r(16 << 20);
  random_workload(r, 600, 99);
  if (HasFatalFailure()) return;
  r.flush();
  // More after the flush, without FUA.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i) r.write((rng() % 4096) * kBlock, pattern(kBlock, 5000 + i));
  const std::vector<MapEntry> map = r.disk->map();
  // No close(): the image as the process left it.
  Reopened o(r.sb, r.store->bytes());
  const RecoveryReport& rep = o.disk->recovery();
  EXPECT_FALSE(rep.clean);
  EXPECT_EQ(rep.method, "record+window");
  // The window (kDefaultWindowCylinders, here all 11 cylinders) is read
  // track by track, less the system track; each track costs a revolution.
  ASSERT_LE(r.sb.simulated_cylinders, kDefaultWindowCylinders);
  const uint64_t tracks = uint64_t{r.sb.simulated_cylinders} * r.sb.geometry.tracks_per_cylinder - 1;
  EXPECT_EQ(rep.tracks_scanned, tracks);
  EXPECT_GE(rep.simulated_ms, tracks * to_ms(r.sb.geometry.revolution()));
  // Reads: record slots, the tree walk, the window, and the data of each
  // request that the scan had passed before finding its map sector. The
  // scan checks the rest from the tracks it reads whole: here all the
  // data lies in the window, so each block is either checked there or
  // read on its own, and eager writing (data just ahead of its map
  // sector) makes the scan's share most of it.
  EXPECT_EQ(rep.sectors_read, VldLayout::kRecordSlots + rep.map_sectors_walked +
                                  tracks * r.sb.geometry.sectors_per_track +
                                  rep.data_blocks_read * (kBlock / kSectorBytes));
  EXPECT_LT(rep.data_blocks_read * 2, rep.data_blocks_checked);
  EXPECT_GT(rep.candidates, 0u);
  EXPECT_GT(rep.groups_accepted, 0u);
  EXPECT_EQ(rep.groups_rejected, 0u);
  std::printf("\nunclean reopen: %llu candidates, %llu groups accepted, %llu sectors read, "
              "%.1f ms simulated\n",
              static_cast<unsigned long long>(rep.candidates),
              static_cast<unsigned long long>(rep.groups_accepted),
              static_cast<unsigned long long>(rep.sectors_read), rep.simulated_ms);
  EXPECT_EQ(o.disk->check_consistency(), "");
  std::vector<std::byte> all(r.shadow.size());
  o.disk->read(0, all, kSimEpoch);
  EXPECT_TRUE(all == r.shadow);
  EXPECT_EQ(o.disk->map(), map);  // every block where it was
  EXPECT_EQ(o.disk->live_blocks(), r.shadow_live());
  // Recovering the same image again gives the same state.
  Reopened again(r.sb, r.store->bytes());
  EXPECT_EQ(again.disk->map(), o.disk->map());
  // And the recovered disk goes on: write, close, reopen clean.
  o.disk->write(0, pattern(kBlock, 1), true, kSimEpoch);
  std::copy_n(pattern(kBlock, 1).begin(), kBlock, r.shadow.begin());
  o.disk->close();
  Reopened c(r.sb, o.store->bytes());
  EXPECT_TRUE(c.disk->recovery().clean);
  c.disk->read(0, all, kSimEpoch);
  EXPECT_TRUE(all == r.shadow);
}

// The smallest form of the case above: FUA writes only, over 64 hot blocks
// (two pieces), then the image as it is, every byte of it, reopened without
// close(). Each write was acknowledged with FUA, so each must read back
// (crash contract). vld_disk.h: "Nothing written since the last log record
// is reused before the next one, which is what lets recovery tell a lost
// write from a recycled one."
TEST(VldDisk, FuaWritesReadBackAfterUncleanReopen) {
  Rig r(16 << 20);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 40; ++i) r.write((rng() % 64) * kBlock, pattern(kBlock, 300 + i), true);
  const uint64_t records = r.disk->vld_stats().records_written;
  Reopened o(r.sb, r.store->bytes());
  const RecoveryReport& rep = o.disk->recovery();
  EXPECT_EQ(rep.method, "record+window");
  EXPECT_EQ(rep.candidates, 40u);
  EXPECT_EQ(rep.groups_accepted, 40u);
  EXPECT_EQ(rep.groups_rejected, 0u);
  int lost = 0;
  for (uint64_t b = 0; b < 64; ++b) {
    std::vector<std::byte> got(kBlock);
    o.disk->read(b * kBlock, got, kSimEpoch);
    lost += !std::equal(got.begin(), got.end(), r.shadow.begin() + b * kBlock);
  }
  EXPECT_EQ(lost, 0) << "FUA-acknowledged blocks lost (" << records << " log records written)";
  // The mechanism: a block written after the last record and overwritten
  // (freed at the overwrite's FUA sync) holds another block's bytes now.
  std::printf("\nFUA writes, unclean reopen: %d of 64 blocks lost, %llu of %llu groups rejected\n",
              lost, static_cast<unsigned long long>(rep.groups_rejected),
              static_cast<unsigned long long>(rep.candidates));
}

// A crash that loses every write after the last sync: what was flushed reads
// back; each request after it reads back all old or all new.
TEST(VldDisk, UncleanReopenAfterLosingUnsyncedWritesKeepsFlushedData) {
  Superblock sb = make_superblock(DiskMode::kVld, 4 << 20, 25);
  auto base = formatted(sb);
  auto rs = std::make_unique<RecordingStore>(*base);
  RecordingStore* rec = rs.get();
  VldDisk d(std::move(rs), sb);
  std::vector<std::byte> flushed(4 << 20, std::byte{0});
  std::mt19937_64 rng(11);
  SimTime now = kSimEpoch;
  for (int i = 0; i < 300; ++i) {
    uint64_t off = (rng() % 1024) * kBlock + (rng() % 2 ? rng() % kBlock : 0);
    uint64_t len = std::min<uint64_t>((4 << 20) - off, 1 + rng() % (3 * kBlock));
    auto data = pattern(len, 100 + i);
    now = d.write(off, data, false, now).end;
    std::copy(data.begin(), data.end(), flushed.begin() + off);
  }
  now = d.flush(now).end;
  struct Req {
    uint64_t off;
    std::vector<std::byte> data;
  };
  std::vector<Req> after;
  std::vector<uint64_t> slots(512);  // 2-block slots, each used once
  for (uint64_t k = 0; k < slots.size(); ++k) slots[k] = k;
  std::shuffle(slots.begin(), slots.end(), rng);
  for (int i = 0; i < 40; ++i) {
    const uint64_t off = slots[i] * 2 * kBlock;
    auto data = pattern(2 * kBlock, 900 + i);
    now = d.write(off, data, false, now).end;
    after.push_back({off, data});
  }
  const size_t point = rec->events();
  std::vector<bool> none(rec->pending_unit_count(point, RecordingStore::Granularity::k4K), false);
  ASSERT_FALSE(none.empty()) << "nothing pending: the test tests nothing";
  auto image = rec->materialize(point, none, RecordingStore::Granularity::k4K);
  Reopened o(sb, image);
  EXPECT_FALSE(o.disk->recovery().clean);
  EXPECT_EQ(o.disk->recovery().method, "record+window");
  EXPECT_EQ(o.disk->check_consistency(), "");
  std::vector<std::byte> got(4 << 20);
  o.disk->read(0, got, kSimEpoch);
  std::vector<bool> touched(1024, false);
  for (const Req& q : after)
    for (uint64_t b = q.off / kBlock; b < (q.off + q.data.size()) / kBlock; ++b) touched[b] = true;
  for (uint64_t b = 0; b < 1024; ++b) {
    if (touched[b]) continue;
    EXPECT_TRUE(std::equal(got.begin() + b * kBlock, got.begin() + (b + 1) * kBlock,
                           flushed.begin() + b * kBlock))
        << "flushed block " << b << " lost";
  }
  int kept_new = 0;
  for (const Req& q : after) {
    const bool is_new = std::equal(q.data.begin(), q.data.end(), got.begin() + q.off);
    const bool is_old = std::equal(got.begin() + q.off, got.begin() + q.off + q.data.size(),
                                   flushed.begin() + q.off);
    EXPECT_TRUE(is_new || is_old) << "request at " << q.off << " torn";
    kept_new += is_new;
  }
  // Without a sync since the flush nothing after it is on the image (unless
  // the disk synced on its own for a log record).
  std::printf("\nlost-unsynced crash: %d of %zu later requests survived (syncs after flush "
              "allowed by records)\n",
              kept_new, after.size());
}

// ---------------------------------------------------- media cost per write

// 16 MiB export with spare=20: 10 cylinders, 5120 physical blocks, so a full
// export is exactly 80% utilization.
TEST(VldDisk, SingleBlockWritesAt80PercentCostOneDataAndOneMapSector) {
  Rig r(16 << 20, 20);
  ASSERT_EQ(r.disk->physical_blocks(), 5120u);
  for (uint64_t off = 0; off < r.shadow.size(); off += 64 * kBlock)
    r.write(off, pattern(64 * kBlock, off));
  ASSERT_EQ(r.disk->live_blocks(), 4096u);
  EXPECT_DOUBLE_EQ(static_cast<double>(r.disk->live_blocks()) / r.disk->physical_blocks(), 0.8);
  const uint64_t record_lo = r.sb.platter_offset;
  const uint64_t record_hi = r.sb.platter_offset + VldLayout::kRecordSlots * kSectorBytes;
  std::mt19937_64 rng(3);
  constexpr int kWrites = 2000;
  int one_map = 0, with_record = 0;
  for (int i = 0; i < kWrites; ++i) {
    const VldStats before = r.disk->vld_stats();
    r.store->ops.clear();
    r.store->tap = true;
    const uint64_t b = rng() % 4096;
    r.write(b * kBlock, pattern(kBlock, 7000 + i), rng() % 2 == 0);
    r.store->tap = false;
    const VldStats& after = r.disk->vld_stats();
    const uint64_t maps = after.map_sectors_written - before.map_sectors_written;
    const uint64_t relays = after.relays - before.relays;
    const uint64_t records = after.records_written - before.records_written;
    EXPECT_EQ(after.data_blocks_written - before.data_blocks_written, 1u);
    EXPECT_EQ(maps, 1 + relays) << i;
    one_map += maps == 1;
    with_record += records > 0;
    uint64_t record_writes = 0, bytes = 0;
    for (const auto& op : r.store->ops) {
      if (op.kind != 'w') continue;
      EXPECT_GE(op.offset, record_lo) << "a write outside the platters";
      if (op.offset < record_hi) {
        EXPECT_EQ(op.len, kSectorBytes);
        ++record_writes;
      }
      bytes += op.len;
    }
    EXPECT_EQ(record_writes, records) << i;
    EXPECT_EQ(bytes, kBlock + kSectorBytes * (maps + records)) << i;
    ASSERT_EQ(r.disk->live_blocks(), 4096u);
  }
  std::printf("\n80%% full: %d of %d single-block writes wrote exactly one map sector; %d wrote "
              "a log record\n",
              one_map, kWrites, with_record);
  EXPECT_GE(one_map, kWrites * 95 / 100);
  EXPECT_LE(with_record, kWrites / 20);
  EXPECT_EQ(r.disk->check_consistency(), "");
  r.expect_reads_shadow(0, r.shadow.size());
}

// ------------------------------------------------ vld against in-place

struct Means {
  double total = 0, overhead = 0, seek = 0, head_switch = 0, rotation = 0, transfer = 0;
  void add(const Completion& c, SimTime start) {
    total += to_us(c.end - start);
    overhead += to_us(c.service.overhead);
    seek += to_us(c.service.seek);
    head_switch += to_us(c.service.head_switch);
    rotation += to_us(c.service.rotation);
    transfer += to_us(c.service.transfer);
  }
  void print(const char* name, int n) const {
    std::printf("%-8s mean %8.1f us = overhead %6.1f + seek %7.1f + head switch %6.1f + rotation "
                "%7.1f + transfer %6.1f\n",
                name, total / n, overhead / n, seek / n, head_switch / n, rotation / n,
                transfer / n);
  }
};

Means random_fua_writes(Disk& d, int n, uint64_t seed) {
  const uint64_t blocks = d.export_bytes() / kBlock;
  SimTime now = kSimEpoch;
  for (uint64_t off = 0; off < d.export_bytes(); off += 64 * kBlock)
    now = d.write(off, pattern(64 * kBlock, off), false, now).end;
  now = d.flush(now).end;
  std::mt19937_64 rng(seed);
  const auto data = pattern(kBlock, seed);
  Means m;
  for (int i = 0; i < n; ++i) {
    const uint64_t b = rng() % blocks;
    Completion c = d.write(b * kBlock, data, true, now);
    EXPECT_EQ(c.end - now, c.service.total());
    m.add(c, now);
    now = c.end;
  }
  return m;
}

TEST(VldDisk, RandomFuaWritesAt80PercentBeatInPlaceThreeTimesOnA16MiBDisk) {
  constexpr int kWrites = 5000;
  Superblock vsb = make_superblock(DiskMode::kVld, 16 << 20, 20);
  VldDisk vld(formatted(vsb), vsb);
  Superblock isb = make_superblock(DiskMode::kInplace, 16 << 20, 20);
  ASSERT_EQ(isb.simulated_cylinders, vsb.simulated_cylinders);
  InplaceDisk inplace(formatted(isb), isb);
  Means v = random_fua_writes(vld, kWrites, 42);
  Means p = random_fua_writes(inplace, kWrites, 42);
  EXPECT_DOUBLE_EQ(static_cast<double>(vld.live_blocks()) / vld.physical_blocks(), 0.8);
  std::printf("\nrandom 4 KiB FUA writes at 80%% utilization, st19101, %d writes, 16 MiB export "
              "on %u cylinders:\n",
              kWrites, vsb.simulated_cylinders);
  v.print("vld", kWrites);
  p.print("inplace", kWrites);
  const VldStats& st = vld.vld_stats();
  const AllocatorStats& a = vld.allocator().stats();
  std::printf("vld: %.2fx faster; map sectors added %.1f us/request; %llu records (%.1f us "
              "total); %llu relays; allocator: %llu contiguous commands, %llu greedy pieces, "
              "%llu fill switches\n",
              p.total / v.total, to_us(st.map_time) / static_cast<double>(st.map_updates),
              static_cast<unsigned long long>(st.records_written), to_us(st.record_time),
              static_cast<unsigned long long>(st.relays),
              static_cast<unsigned long long>(a.contiguous_commands),
              static_cast<unsigned long long>(a.greedy_pieces),
              static_cast<unsigned long long>(a.fill_switches));
  // On this 16 MiB disk (10 cylinders) in-place seeks are short, so the gap
  // is smaller than the 5x target, which is stated for the Figure 8
  // workload and measured by scripts/bench-fig8 (1 GiB: docs/benchmarks.md).
  // Here: a deterministic guard against regressions in eager writing.
  EXPECT_LE(v.total * 3, p.total);
  EXPECT_EQ(vld.check_consistency(), "");
}

}  // namespace
}  // namespace vld
