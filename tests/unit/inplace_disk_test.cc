// InplaceDisk: contents, trim, zero, extents, syncs. (DiskController's
// tests, which run over an InplaceDisk, are in disk_controller_test.cc.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/store/backing_store.h"
#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/inplace/inplace_disk.h"
#include "core/util/error.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kExport = 1 << 20;  // 256 blocks of 4 KiB
constexpr uint64_t kBlock = 4096;
constexpr int64_t kOverheadNs = 100'000;  // st19101, Table 1
constexpr double kSectorNs = 23'437.5;    // st19101: 6 ms / 256

Superblock small_superblock() { return test::st19101_superblock(DiskMode::kInplace, kExport); }

SimTime at_ns(int64_t ns) { return kSimEpoch + SimDuration{ns}; }

int64_t sectors_ns(int sectors) {
  return static_cast<int64_t>(std::ceil(sectors * kSectorNs));
}

// A backing store with holes, like a sparse file: 512-byte granules are
// data once written, holes once wholly discarded. Counts syncs.
class SparseStore final : public BackingStore {
 public:
  explicit SparseStore(uint64_t size) : bytes_(size), data_(size / 512, false) {}
  uint64_t size_bytes() const override { return bytes_.size(); }
  void read(uint64_t offset, std::span<std::byte> out) override {
    ASSERT_LE(offset + out.size(), bytes_.size());
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
  }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    ASSERT_LE(offset + data.size(), bytes_.size());
    std::memcpy(bytes_.data() + offset, data.data(), data.size());
    if (data.empty()) return;
    for (uint64_t g = offset / 512; g <= (offset + data.size() - 1) / 512; ++g) data_[g] = true;
  }
  void discard(uint64_t offset, uint64_t len) override {
    ASSERT_LE(offset + len, bytes_.size());
    std::memset(bytes_.data() + offset, 0, len);
    for (uint64_t g = (offset + 511) / 512; g < (offset + len) / 512; ++g) data_[g] = false;
  }
  void sync() override { ++syncs_; }
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    uint64_t g = offset / 512, end = (offset + len + 511) / 512;
    while (g < end) {
      if (!data_[g]) {
        ++g;
        continue;
      }
      uint64_t h = g;
      while (h < end && data_[h]) ++h;
      uint64_t from = std::max(offset, g * 512), to = std::min(offset + len, h * 512);
      fn(from, to - from);
      g = h;
    }
  }
  uint64_t syncs() const { return syncs_; }

 private:
  std::vector<std::byte> bytes_;
  std::vector<bool> data_;
  uint64_t syncs_ = 0;
};

struct Extent {
  uint64_t offset, len;
  ExtentType type;
  bool operator==(const Extent&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Extent& e) {
  return os << "{" << e.offset << ", +" << e.len << ", "
            << (e.type == ExtentType::kData ? "data" : "hole") << "}";
}

std::vector<Extent> extents_of(Disk& d, uint64_t offset, uint64_t len) {
  std::vector<Extent> v;
  d.extents(offset, len, [&](uint64_t o, uint64_t l, ExtentType t) { v.push_back({o, l, t}); });
  return v;
}

std::vector<std::byte> pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);  // never zero
  return v;
}

std::vector<std::byte> read_back(Disk& d, uint64_t offset, uint64_t len) {
  std::vector<std::byte> v(len);
  d.read(offset, v, kSimEpoch);
  return v;
}

bool all_zero(const std::vector<std::byte>& v) {
  return std::all_of(v.begin(), v.end(), [](std::byte b) { return b == std::byte{0}; });
}

// The disk on a SparseStore, keeping a pointer to the store.
struct SparseDisk {
  SparseDisk() {
    Superblock sb = small_superblock();
    auto s = std::make_unique<SparseStore>(sb.image_bytes());
    store = s.get();
    disk = std::make_unique<InplaceDisk>(std::move(s), sb);
  }
  SparseStore* store;
  std::unique_ptr<InplaceDisk> disk;
};

// ------------------------------------------------------------ contents

TEST(InplaceDisk, ReadAfterWriteAlignedAndUnaligned) {
  Superblock sb = small_superblock();
  auto owned = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  MemoryBackingStore* store = owned.get();
  InplaceDisk disk(std::move(owned), sb);

  std::vector<std::byte> shadow(kExport, std::byte{0});
  struct W {
    uint64_t offset, len;
  };
  const W writes[] = {{8192, 16384},  {5000, 3000},   {12345, 777}, {0, 1},
                      {kExport - 513, 513}, {4095, 2}, {100000, 70000}, {16384, 4096}};
  uint64_t seed = 1;
  for (const W& w : writes) {
    auto data = pattern(w.len, seed++);
    disk.write(w.offset, data, false, kSimEpoch);
    std::copy(data.begin(), data.end(), shadow.begin() + w.offset);
  }
  EXPECT_EQ(read_back(disk, 0, kExport), shadow);
  // Unaligned reads of parts.
  const std::vector<std::pair<uint64_t, uint64_t>> parts = {
      {5001, 2998}, {12000, 5000}, {4090, 10}, {kExport - 1000, 1000}};
  for (auto [o, l] : parts) {
    auto got = read_back(disk, o, l);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), shadow.begin() + o)) << o << "+" << l;
  }
  // Logical byte x is at platter_offset + x in the backing store.
  std::vector<std::byte> raw(3000);
  store->read(sb.platter_offset + 5000, raw);
  EXPECT_TRUE(std::equal(raw.begin(), raw.end(), shadow.begin() + 5000));
}

TEST(InplaceDisk, WritePaysForWholeSectorsAndCountsBlocks) {
  SparseDisk d;
  auto data = pattern(3000, 7);
  // [5000, 8000): sectors 9..15 (7 sectors), all in block 1.
  Completion c = d.disk->write(5000, data, false, kSimEpoch);
  EXPECT_EQ(c.service.transfer.count(), sectors_ns(7));
  EXPECT_EQ(c.physical_blocks_written, 1u);
  EXPECT_EQ(c.service.overhead.count(), kOverheadNs);
  EXPECT_EQ(c.end - kSimEpoch, c.service.total());
  // [4000, 12500): blocks 0..3.
  auto more = pattern(8500, 8);
  c = d.disk->write(4000, more, false, c.end);
  EXPECT_EQ(c.physical_blocks_written, 4u);
  std::vector<std::byte> out(8192);
  c = d.disk->read(8192, out, c.end);
  EXPECT_EQ(c.physical_blocks_read, 2u);
  EXPECT_EQ(c.service.transfer.count(), sectors_ns(16));
}

// ---------------------------------------------------------------- trim

TEST(InplaceDisk, TrimOfWholeBlocksReadsZerosAndLowersLiveBlocks) {
  SparseDisk d;
  EXPECT_EQ(d.disk->live_blocks(), 0u);
  auto data = pattern(64 * 1024, 3);
  d.disk->write(0, data, false, kSimEpoch);
  EXPECT_EQ(d.disk->live_blocks(), 16u);

  SimTime start = at_ns(10'000'000);
  Completion c = d.disk->trim(2 * kBlock, 3 * kBlock, false, start);
  EXPECT_EQ(d.disk->live_blocks(), 13u);
  EXPECT_TRUE(all_zero(read_back(*d.disk, 2 * kBlock, 3 * kBlock)));
  auto before = read_back(*d.disk, 0, 2 * kBlock);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), data.begin()));
  auto after = read_back(*d.disk, 5 * kBlock, 11 * kBlock);
  EXPECT_TRUE(std::equal(after.begin(), after.end(), data.begin() + 5 * kBlock));
  // One command, no media time.
  EXPECT_EQ((c.end - start).count(), kOverheadNs);
  EXPECT_EQ(c.service.transfer.count(), 0);
  EXPECT_EQ(c.physical_blocks_written, 0u);
  EXPECT_EQ(c.syncs, 0u);

  // Trimming again, or trimming holes, changes nothing.
  d.disk->trim(2 * kBlock, 3 * kBlock, false, c.end);
  d.disk->trim(100 * kBlock, 10 * kBlock, false, c.end);
  EXPECT_EQ(d.disk->live_blocks(), 13u);
}

TEST(InplaceDisk, TrimOnAMemoryStoreLowersLiveBlocks) {
  // A MemoryBackingStore has no holes, so every export block starts live.
  Superblock sb = small_superblock();
  InplaceDisk disk(std::make_unique<MemoryBackingStore>(sb.image_bytes()), sb);
  EXPECT_EQ(disk.live_blocks(), kExport / kBlock);
  disk.trim(kBlock, 10 * kBlock, false, kSimEpoch);
  EXPECT_EQ(disk.live_blocks(), kExport / kBlock - 10);
  EXPECT_EQ(extents_of(disk, 0, kExport),
            (std::vector<Extent>{{0, kBlock, ExtentType::kData},
                                 {kBlock, 10 * kBlock, ExtentType::kHole},
                                 {11 * kBlock, kExport - 11 * kBlock, ExtentType::kData}}));
}

TEST(InplaceDisk, TrimLeavesPartialBlockEdgesAlone) {
  SparseDisk d;
  auto data = pattern(4 * kBlock, 4);
  d.disk->write(0, data, false, kSimEpoch);
  // [1000, 13000): whole blocks 1 and 2; the edges [1000, 4096) and
  // [12288, 13000) are left as they were.
  d.disk->trim(1000, 12000, false, kSimEpoch);
  auto got = read_back(*d.disk, 0, 4 * kBlock);
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + kBlock, data.begin()));
  EXPECT_TRUE(all_zero({got.begin() + kBlock, got.begin() + 3 * kBlock}));
  EXPECT_TRUE(std::equal(got.begin() + 3 * kBlock, got.end(), data.begin() + 3 * kBlock));
  EXPECT_EQ(d.disk->live_blocks(), 2u);
  // A trim inside one block does nothing at all.
  d.disk->trim(100, 3000, false, kSimEpoch);
  EXPECT_EQ(read_back(*d.disk, 0, kBlock),
            std::vector<std::byte>(data.begin(), data.begin() + kBlock));
  EXPECT_EQ(d.disk->live_blocks(), 2u);
}

// ---------------------------------------------------------------- zero

TEST(InplaceDisk, ZeroWithMayTrimDeallocatesWholeBlocksAndWritesEdges) {
  SparseDisk d;
  auto data = pattern(4 * kBlock, 5);
  d.disk->write(0, data, false, kSimEpoch);
  ASSERT_EQ(d.disk->live_blocks(), 4u);

  ZeroFlags f;
  f.may_trim = true;
  Completion c = d.disk->zero(1000, 12000, f, at_ns(50'000'000));
  auto got = read_back(*d.disk, 0, 4 * kBlock);
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + 1000, data.begin()));
  EXPECT_TRUE(all_zero({got.begin() + 1000, got.begin() + 13000}));
  EXPECT_TRUE(std::equal(got.begin() + 13000, got.end(), data.begin() + 13000));
  // Blocks 1 and 2 are gone, the edge blocks 0 and 3 still hold data.
  EXPECT_EQ(d.disk->live_blocks(), 2u);
  EXPECT_EQ(extents_of(*d.disk, 0, 4 * kBlock),
            (std::vector<Extent>{{0, kBlock, ExtentType::kData},
                                 {kBlock, 2 * kBlock, ExtentType::kHole},
                                 {3 * kBlock, kBlock, ExtentType::kData}}));
  // The edges are media writes: sectors 1..7 and 24..25.
  EXPECT_EQ(c.physical_blocks_written, 2u);
  EXPECT_EQ(c.service.transfer.count(), sectors_ns(7) + sectors_ns(2));
  EXPECT_EQ(c.service.overhead.count(), kOverheadNs);
  EXPECT_EQ(c.end - at_ns(50'000'000), c.service.total());

  // Aligned: no media time at all.
  SimTime s2 = at_ns(100'000'000);
  c = d.disk->zero(8 * kBlock, 4 * kBlock, f, s2);
  EXPECT_EQ((c.end - s2).count(), kOverheadNs);
  EXPECT_EQ(c.physical_blocks_written, 0u);
}

TEST(InplaceDisk, ZeroInsideOneBlockWithMayTrimWritesZeros) {
  SparseDisk d;
  auto data = pattern(kBlock, 6);
  d.disk->write(0, data, false, kSimEpoch);
  ZeroFlags f;
  f.may_trim = true;
  Completion c = d.disk->zero(100, 1000, f, kSimEpoch);
  auto got = read_back(*d.disk, 0, kBlock);
  EXPECT_TRUE(all_zero({got.begin() + 100, got.begin() + 1100}));
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + 100, data.begin()));
  EXPECT_TRUE(std::equal(got.begin() + 1100, got.end(), data.begin() + 1100));
  EXPECT_EQ(d.disk->live_blocks(), 1u);
  EXPECT_EQ(c.physical_blocks_written, 1u);
  EXPECT_EQ(c.service.transfer.count(), sectors_ns(3));  // sectors 0..2
}

TEST(InplaceDisk, ZeroWithoutMayTrimKeepsBlocksLive) {
  SparseDisk d;
  auto data = pattern(4 * kBlock, 9);
  d.disk->write(0, data, false, kSimEpoch);
  d.disk->trim(2 * kBlock, kBlock, false, kSimEpoch);  // block 2 now a hole
  ASSERT_EQ(d.disk->live_blocks(), 3u);

  ZeroFlags f;  // may_trim = false: allocated zeros
  Completion c = d.disk->zero(kBlock, 3 * kBlock, f, kSimEpoch);
  EXPECT_TRUE(all_zero(read_back(*d.disk, kBlock, 3 * kBlock)));
  EXPECT_EQ(read_back(*d.disk, 0, kBlock),
            std::vector<std::byte>(data.begin(), data.begin() + kBlock));
  EXPECT_EQ(d.disk->live_blocks(), 4u);  // block 2 allocated again
  EXPECT_EQ(extents_of(*d.disk, 0, 4 * kBlock),
            (std::vector<Extent>{{0, 4 * kBlock, ExtentType::kData}}));
  EXPECT_EQ(c.physical_blocks_written, 3u);
  EXPECT_EQ(c.service.transfer.count(), sectors_ns(24));
}

TEST(InplaceDisk, FastZeroRefusesMediaWritesWithEnotsup) {
  SparseDisk d;
  auto data = pattern(8 * kBlock, 10);
  d.disk->write(0, data, false, kSimEpoch);
  struct Case {
    uint64_t offset, len;
    bool may_trim;
  };
  const Case refused[] = {
      {1000, 12000, true},       // unaligned edges need writing
      {kBlock, kBlock + 1, true},
      {kBlock, 2 * kBlock, false},  // allocated zeros are media writes
      {100, 50, true},              // inside one block
  };
  for (const Case& k : refused) {
    ZeroFlags f;
    f.fast = true;
    f.may_trim = k.may_trim;
    try {
      d.disk->zero(k.offset, k.len, f, kSimEpoch);
      ADD_FAILURE() << "fast zero of [" << k.offset << ", +" << k.len << ") succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOTSUP) << e.what();
    }
    // Nothing was touched.
    EXPECT_EQ(read_back(*d.disk, 0, 8 * kBlock), data);
    EXPECT_EQ(d.disk->live_blocks(), 8u);
  }
  ZeroFlags f;
  f.fast = true;
  f.may_trim = true;
  SimTime s = at_ns(77'000'000);
  Completion c = d.disk->zero(2 * kBlock, 3 * kBlock, f, s);
  EXPECT_EQ((c.end - s).count(), kOverheadNs);
  EXPECT_TRUE(all_zero(read_back(*d.disk, 2 * kBlock, 3 * kBlock)));
  EXPECT_EQ(d.disk->live_blocks(), 5u);
}

// ------------------------------------------------------------- extents

TEST(InplaceDisk, ExtentsReportHolesAndDataMerged) {
  SparseDisk d;
  EXPECT_EQ(extents_of(*d.disk, 0, kExport),
            (std::vector<Extent>{{0, kExport, ExtentType::kHole}}));
  auto blk = pattern(kBlock, 11);
  for (uint64_t b : {2, 3, 7}) d.disk->write(b * kBlock, blk, false, kSimEpoch);
  EXPECT_EQ(extents_of(*d.disk, 0, 10 * kBlock),
            (std::vector<Extent>{{0, 2 * kBlock, ExtentType::kHole},
                                 {2 * kBlock, 2 * kBlock, ExtentType::kData},
                                 {4 * kBlock, 3 * kBlock, ExtentType::kHole},
                                 {7 * kBlock, kBlock, ExtentType::kData},
                                 {8 * kBlock, 2 * kBlock, ExtentType::kHole}}));
  // A query that starts and ends inside blocks is clipped to the query.
  EXPECT_EQ(extents_of(*d.disk, 10000, 10000),
            (std::vector<Extent>{{10000, 16384 - 10000, ExtentType::kData},
                                 {16384, 20000 - 16384, ExtentType::kHole}}));
  EXPECT_EQ(extents_of(*d.disk, 7 * kBlock + 5, 10),
            (std::vector<Extent>{{7 * kBlock + 5, 10, ExtentType::kData}}));
  // Filling the gap merges the data runs into one.
  for (uint64_t b : {4, 5, 6}) d.disk->write(b * kBlock, blk, false, kSimEpoch);
  EXPECT_EQ(extents_of(*d.disk, 0, 10 * kBlock),
            (std::vector<Extent>{{0, 2 * kBlock, ExtentType::kHole},
                                 {2 * kBlock, 6 * kBlock, ExtentType::kData},
                                 {8 * kBlock, 2 * kBlock, ExtentType::kHole}}));
  // The last block of the export.
  d.disk->write(kExport - kBlock, blk, false, kSimEpoch);
  EXPECT_EQ(extents_of(*d.disk, kExport - 2 * kBlock, 2 * kBlock),
            (std::vector<Extent>{{kExport - 2 * kBlock, kBlock, ExtentType::kHole},
                                 {kExport - kBlock, kBlock, ExtentType::kData}}));
}

TEST(InplaceDisk, LiveMapIsRebuiltFromTheStoresHoles) {
  Superblock sb = small_superblock();
  auto s = std::make_unique<SparseStore>(sb.image_bytes());
  auto blk = pattern(kBlock, 12);
  s->write(sb.platter_offset + 5 * kBlock, blk);
  s->write(sb.platter_offset + 9 * kBlock + 100, std::span(blk).first(10));  // part of block 9
  InplaceDisk disk(std::move(s), sb);
  EXPECT_EQ(disk.live_blocks(), 2u);
  EXPECT_EQ(extents_of(disk, 4 * kBlock, 7 * kBlock),
            (std::vector<Extent>{{4 * kBlock, kBlock, ExtentType::kHole},
                                 {5 * kBlock, kBlock, ExtentType::kData},
                                 {6 * kBlock, 3 * kBlock, ExtentType::kHole},
                                 {9 * kBlock, kBlock, ExtentType::kData},
                                 {10 * kBlock, kBlock, ExtentType::kHole}}));
  EXPECT_EQ(read_back(disk, 5 * kBlock, kBlock), blk);
}

// --------------------------------------------------------------- syncs

TEST(InplaceDisk, FlushAndFuaCountBackingSyncs) {
  Superblock sb = small_superblock();
  auto owned = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  MemoryBackingStore* store = owned.get();
  InplaceDisk disk(std::move(owned), sb);
  auto data = pattern(kBlock, 13);

  Completion c = disk.write(0, data, /*fua=*/false, kSimEpoch);
  EXPECT_EQ(c.syncs, 0u);
  EXPECT_EQ(store->syncs(), 0u);
  c = disk.write(kBlock, data, /*fua=*/true, c.end);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(store->syncs(), 1u);

  SimTime s = c.end;
  c = disk.flush(s);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(store->syncs(), 2u);
  // No write cache: a flush is one command.
  EXPECT_EQ((c.end - s).count(), kOverheadNs);
  EXPECT_EQ(c.service.overhead.count(), kOverheadNs);

  c = disk.trim(0, kBlock, /*fua=*/true, c.end);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(store->syncs(), 3u);
  c = disk.trim(0, kBlock, /*fua=*/false, c.end);
  EXPECT_EQ(c.syncs, 0u);
  ZeroFlags f;
  f.fua = true;
  c = disk.zero(0, kBlock, f, c.end);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(store->syncs(), 4u);
  f.may_trim = true;
  c = disk.zero(0, kBlock, f, c.end);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(store->syncs(), 5u);
  std::vector<std::byte> out(kBlock);
  c = disk.read(0, out, c.end);
  EXPECT_EQ(c.syncs, 0u);
  EXPECT_EQ(store->syncs(), 5u);
  disk.close();
  EXPECT_EQ(store->syncs(), 6u);
}

}  // namespace
}  // namespace vld
