// mode=lld's bound on what it writes all or nothing (clause 3 of
// docs/crash-contract.md; LldDisk::max_atomic_write_bytes, which the plugin
// advertises as the NBD maximum block size). log_to_segments commits a
// request in pieces (LldStats::split_requests) only when the free segments,
// after cleaning, cannot take it beside the live blocks. On disks filled
// whole and aged by random overwrites, so that cleaning has to work for
// every segment it frees, writes of exactly the bound, at any sector
// alignment, are never split; on the tightest layout a write a few segments
// longer is, so the bound is the free segments' and these tests can fail.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/image.h"
#include "core/lld/lld_disk.h"
#include "core/store/backing_store.h"
#include "geometry/presets.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;

struct Shape {
  std::string name;
  uint64_t export_bytes;
  uint32_t spare_percent;
  uint64_t segment_bytes;
  uint64_t nvram_bytes;
  // A small custom geometry (64-sector tracks, 4 a cylinder) with these
  // cylinders, as the crash harness's lld disks; 0: st19101's own.
  uint32_t cylinders = 0;
};

Superblock superblock_of(const Shape& s) {
  FormatOptions o;
  o.mode = DiskMode::kLld;
  o.export_bytes = s.export_bytes;
  o.block_bytes = kBlock;
  o.spare_percent = s.spare_percent;
  o.segment_bytes = s.segment_bytes;
  o.nvram_bytes = s.nvram_bytes;
  o.geometry = *find_preset("st19101");
  if (s.cylinders == 0) return plan_image(o);
  o.geometry.sectors_per_track = 64;
  o.geometry.tracks_per_cylinder = 4;
  o.geometry.cylinders = s.cylinders;
  o.geometry.derive_skews();
  return plan_image_unchecked(o);  // as few segments as the layout allows
}

// An lld disk on an in-memory image, every block written, then aged by as
// many random one-block overwrites again.
class AgedDisk {
 public:
  AgedDisk(const Shape& s, uint64_t seed) : sb_(superblock_of(s)), mem_(sb_.image_bytes()) {
    format_store(mem_, sb_);
    disk_ = std::make_unique<LldDisk>(std::make_unique<ProxyStore>(mem_), sb_);
    rng_.seed(seed);
    const uint64_t blocks = s.export_bytes / kBlock;
    for (uint64_t b = 0; b < blocks; b += 8) write(b * kBlock, 8 * kBlock);
    for (uint64_t i = 0; i < blocks; ++i) write(rng_() % blocks * kBlock, kBlock);
    flush();
  }

  void write(uint64_t offset, uint64_t len) {
    std::vector<std::byte> data(len, static_cast<std::byte>(rng_() % 255 + 1));
    now_ = disk_->write(offset, data, /*fua=*/false, now_).end;
  }
  void flush() { now_ = disk_->flush(now_).end; }
  // A sector-aligned offset at which `len` bytes fit the export.
  uint64_t any_offset(uint64_t len) {
    return rng_() % ((sb_.export_bytes - len) / 512 + 1) * 512;
  }

  LldDisk& disk() { return *disk_; }
  uint64_t splits() const { return disk_->report().stats.split_requests; }
  uint64_t segments_cleaned() const { return disk_->report().stats.segments_cleaned; }

 private:
  Superblock sb_;
  MemoryBackingStore mem_;
  std::unique_ptr<LldDisk> disk_;
  std::mt19937_64 rng_;
  SimTime now_{};
};

TEST(LldAtomicWrites, WritesOfTheBoundOnAFullAgedDiskAreNeverSplit) {
  const std::vector<Shape> shapes = {
      {"64-sector 256K spare=0 nvram=0", 256 << 10, 0, 32 << 10, 0, 16},
      {"64-sector 1M spare=25 nvram=0", 1 << 20, 25, 32 << 10, 0, 24},
      {"64-sector 1M spare=10 nvram=0", 1 << 20, 10, 32 << 10, 0, 24},
      {"64-sector 1M spare=10 nvram=16K", 1 << 20, 10, 32 << 10, 16 << 10, 24},
      {"st19101 64M spare=5 nvram=0", 64 << 20, 5, 512 << 10, 0},
      {"st19101 64M spare=10 nvram=1M", 64 << 20, 10, 512 << 10, 1 << 20},
  };
  for (const Shape& s : shapes) {
    for (uint64_t seed : {1, 2}) {
      AgedDisk d(s, seed);
      const uint64_t max = d.disk().max_atomic_write_bytes();
      ASSERT_GE(max, kBlock) << s.name;
      ASSERT_LT(max, s.export_bytes / 2) << s.name << ": precondition: a bound the spare sets";
      ASSERT_GT(d.segments_cleaned(), 0u) << s.name << ": precondition: an aged disk";
      ASSERT_EQ(d.splits(), 0u) << s.name;
      for (int i = 0; i < 40; ++i) {
        d.write(d.any_offset(max), max);  // mostly unaligned to blocks: one block more
        if (i % 8 == 7) d.flush();
      }
      EXPECT_EQ(d.splits(), 0u) << s.name << " seed " << seed << ": max " << max;
      EXPECT_EQ(d.disk().check_consistency(), "") << s.name;
    }
  }
}

// The crash harness's tightest lld disk without NVRAM (a 64-block export on
// 14 segments of 7 blocks, as DISABLED_LldRequestLargerThanTheFreeSegments-
// IsAllOrNothing has): the bound is one block, and a write of the whole
// export, which cannot fit beside the live blocks, is split.
TEST(LldAtomicWrites, AWriteTheFreeSegmentsCannotTakeIsSplit) {
  const Shape tight{"64-sector 256K spare=0 nvram=0", 256 << 10, 0, 32 << 10, 0, 16};
  AgedDisk d(tight, 3);
  EXPECT_EQ(d.disk().max_atomic_write_bytes(), kBlock);
  ASSERT_EQ(d.splits(), 0u);
  d.write(0, tight.export_bytes);
  EXPECT_GE(d.splits(), 1u);
}

}  // namespace
}  // namespace vld
