// The longest request a disk keeps its promises for (Disk::
// max_atomic_write_bytes, which the plugin advertises as the NBD maximum
// block size; clause 3 of docs/crash-contract.md), on disks filled whole
// and aged by random overwrites, written at random sector offsets:
//   - mode=lld refuses a request with ENOSPC (LldStats::refused_requests)
//     when its free segments, after cleaning, cannot take it beside the
//     live blocks: writes of the bound are never refused, and on the
//     tightest layout a write of the whole export is, changing nothing;
//   - mode=vld places a request as one group, whose new copies need room
//     beside every live block's old copy: writes of the bound always find
//     it (repacking fragmented tracks where needed), and read back; one of
//     more than the disk has free fails with ENOSPC and changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/lld/lld_disk.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "core/store/backing_store.h"
#include "geometry/presets.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;

struct Shape {
  std::string name;
  DiskMode mode;
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
  o.mode = s.mode;
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

// A disk on an in-memory image, every block written, then aged by as many
// random one-block overwrites again; a model of what each byte must read.
class AgedDisk {
 public:
  AgedDisk(const Shape& s, uint64_t seed) : sb_(superblock_of(s)), mem_(sb_.image_bytes()) {
    format_store(mem_, sb_);
    disk_ = make_disk(std::make_unique<ProxyStore>(mem_), sb_);
    model_.assign(s.export_bytes, std::byte{0});
    rng_.seed(seed);
    const uint64_t blocks = s.export_bytes / kBlock;
    for (uint64_t b = 0; b < blocks; b += 8) write(b * kBlock, 8 * kBlock);
    for (uint64_t i = 0; i < blocks; ++i) write(rng_() % blocks * kBlock, kBlock);
    flush();
  }

  // Throws what the disk throws, leaving the model as it was.
  void write(uint64_t offset, uint64_t len) {
    std::vector<std::byte> data(len, static_cast<std::byte>(rng_() % 255 + 1));
    now_ = disk_->write(offset, data, /*fua=*/false, now_).end;
    std::copy(data.begin(), data.end(), model_.begin() + static_cast<ptrdiff_t>(offset));
  }
  // "" if every byte reads what the model says.
  std::string check_model() {
    std::vector<std::byte> out(sb_.export_bytes);
    now_ = disk_->read(0, out, now_).end;
    return out == model_ ? "" : "the disk does not read what was written";
  }
  void flush() { now_ = disk_->flush(now_).end; }
  // "" if a disk opened on a copy of the image as it is (kill -9 after a
  // flush) reads what the model says.
  std::string check_reopened() {
    auto d2 = make_disk(std::make_unique<MemoryBackingStore>(mem_.bytes()), sb_);
    std::vector<std::byte> out(sb_.export_bytes);
    d2->read(0, out, SimTime{});
    return out == model_ ? "" : "the reopened disk does not read what was written";
  }
  // A sector-aligned offset at which `len` bytes fit the export.
  uint64_t any_offset(uint64_t len) {
    return rng_() % ((sb_.export_bytes - len) / 512 + 1) * 512;
  }

  Disk& disk() { return *disk_; }
  LldStats lld() const { return dynamic_cast<const LldDisk&>(*disk_).report().stats; }
  uint64_t refused() const { return lld().refused_requests; }

 private:
  Superblock sb_;
  MemoryBackingStore mem_;
  std::unique_ptr<Disk> disk_;
  std::vector<std::byte> model_;
  std::mt19937_64 rng_;
  SimTime now_{};
};

TEST(LldAtomicWrites, WritesOfTheBoundOnAFullAgedDiskAreNeverRefused) {
  const std::vector<Shape> shapes = {
      {"64-sector 256K spare=0 nvram=0", DiskMode::kLld, 256 << 10, 0, 32 << 10, 0, 16},
      {"64-sector 1M spare=25 nvram=0", DiskMode::kLld, 1 << 20, 25, 32 << 10, 0, 24},
      {"64-sector 1M spare=10 nvram=0", DiskMode::kLld, 1 << 20, 10, 32 << 10, 0, 24},
      {"64-sector 1M spare=10 nvram=16K", DiskMode::kLld, 1 << 20, 10, 32 << 10, 16 << 10, 24},
      {"st19101 64M spare=5 nvram=0", DiskMode::kLld, 64 << 20, 5, 512 << 10, 0},
      {"st19101 64M spare=10 nvram=1M", DiskMode::kLld, 64 << 20, 10, 512 << 10, 1 << 20},
  };
  for (const Shape& s : shapes) {
    for (uint64_t seed : {1, 2}) {
      AgedDisk d(s, seed);
      const uint64_t max = d.disk().max_atomic_write_bytes();
      ASSERT_GE(max, kBlock) << s.name;
      ASSERT_LT(max, s.export_bytes / 2) << s.name << ": precondition: a bound the spare sets";
      ASSERT_GT(d.lld().segments_cleaned, 0u) << s.name << ": precondition: an aged disk";
      ASSERT_EQ(d.refused(), 0u) << s.name;
      for (int i = 0; i < 40; ++i) {
        d.write(d.any_offset(max), max);  // mostly unaligned to blocks: one block more
        if (i % 8 == 7) d.flush();
      }
      EXPECT_EQ(d.refused(), 0u) << s.name << " seed " << seed << ": max " << max;
      EXPECT_EQ(d.check_model(), "") << s.name;
      EXPECT_EQ(d.disk().check_consistency(), "") << s.name;
    }
  }
}

// A drain writes the NVRAM's blocks into segments on a disk whose every
// block is live: the blocks it writes replace older copies, so what it
// needs is what the cleaner can always free (the spare and lld_min_segments'
// reserve), and an acknowledged write never meets ENOSPC later. Disks with
// no spare and with little, an NVRAM of two segments to a few hundred
// records, and writes of one to eight blocks until the NVRAM has drained
// many times: no request is refused or fails, and every block reads back.
TEST(LldAtomicWrites, DrainsOnAFullDiskNeverFail) {
  const std::vector<Shape> shapes = {
      {"64-sector 256K spare=0 nvram=16K", DiskMode::kLld, 256 << 10, 0, 32 << 10, 16 << 10, 16},
      {"64-sector 256K spare=0 nvram=64K", DiskMode::kLld, 256 << 10, 0, 32 << 10, 64 << 10, 16},
      {"64-sector 1M spare=3 nvram=64K", DiskMode::kLld, 1 << 20, 3, 32 << 10, 64 << 10, 24},
      {"st19101 64M spare=1 nvram=1M", DiskMode::kLld, 64 << 20, 1, 512 << 10, 1 << 20},
  };
  for (const Shape& s : shapes) {
    for (uint64_t seed : {1, 2, 3}) {
      AgedDisk d(s, seed);
      const uint64_t drains_before = d.lld().nvram_drains;
      const uint64_t blocks = s.export_bytes / kBlock;
      std::mt19937_64 rng(seed);
      for (uint64_t i = 0; i < std::min<uint64_t>(3 * blocks, 3000); ++i) {
        const uint64_t n = 1 + rng() % 8;
        ASSERT_NO_THROW(d.write(rng() % (blocks - n + 1) * kBlock, n * kBlock))
            << s.name << " seed " << seed << " write " << i;
      }
      d.flush();
      EXPECT_GT(d.lld().nvram_drains - drains_before, 5u) << s.name << ": precondition: drains";
      EXPECT_EQ(d.refused(), 0u) << s.name;
      EXPECT_EQ(d.check_model(), "") << s.name;
      EXPECT_EQ(d.check_reopened(), "") << s.name;
      EXPECT_EQ(d.disk().check_consistency(), "") << s.name;
    }
  }
}

// The crash harness's tightest lld disks (a 64-block export on 14
// segments of 7 blocks, without NVRAM and with 15 records): the bound is one
// block without NVRAM, and a write of half the export, which cannot fit
// beside the live blocks, is refused with ENOSPC and changes nothing, live
// or after a restart (a split request would be committed in pieces).
TEST(LldAtomicWrites, AWriteTheFreeSegmentsCannotTakeIsRefusedWhole) {
  for (uint64_t nvram : {uint64_t{0}, uint64_t{64} << 10}) {
    const Shape tight{"64-sector 256K spare=0", DiskMode::kLld, 256 << 10, 0, 32 << 10, nvram,
                      16};
    AgedDisk d(tight, 3);
    if (nvram == 0) {
      EXPECT_EQ(d.disk().max_atomic_write_bytes(), kBlock);
    }
    ASSERT_EQ(d.refused(), 0u);
    try {
      d.write(512, tight.export_bytes / 2);
      ADD_FAILURE() << "a write the free segments cannot take was served";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOSPC) << e.what();
    }
    EXPECT_EQ(d.refused(), 1u);
    EXPECT_EQ(d.check_model(), "") << "nvram " << nvram << ": the refused write changed data";
    EXPECT_EQ(d.disk().check_consistency(), "");
    d.flush();
    EXPECT_EQ(d.check_reopened(), "") << "nvram " << nvram;
    d.write(0, kBlock);  // and the disk goes on
    EXPECT_EQ(d.check_model(), "");
  }
}

TEST(VldAtomicWrites, WritesOfTheBoundOnAFullAgedDiskFindRoom) {
  const std::vector<Shape> shapes = {
      {"st19101 16M spare=25", DiskMode::kVld, 16 << 20, 25, 0, 0},
      {"st19101 16M spare=40", DiskMode::kVld, 16 << 20, 40, 0, 0},
      {"st19101 64M spare=25", DiskMode::kVld, 64 << 20, 25, 0, 0},
      {"64-sector 1M spare=25", DiskMode::kVld, 1 << 20, 25, 0, 0, 24},
      {"64-sector 1M spare=60", DiskMode::kVld, 1 << 20, 60, 0, 0, 24},
  };
  for (const Shape& s : shapes) {
    AgedDisk d(s, 4);
    const uint64_t max = d.disk().max_atomic_write_bytes();
    ASSERT_GE(max, kBlock) << s.name;
    ASSERT_LT(max, s.export_bytes / 2) << s.name << ": precondition: a bound the spare sets";
    for (int i = 0; i < 12; ++i) {
      d.write(d.any_offset(max), max);  // throws ENOSPC if it finds no room
      if (i % 4 == 3) d.flush();
    }
    EXPECT_EQ(d.check_model(), "") << s.name;
    EXPECT_EQ(d.disk().check_consistency(), "") << s.name;
    // More than the disk has free (four thirds of what lies beyond the
    // export however fragmented; a little more is free unfragmented).
    const uint64_t too_long = std::min<uint64_t>(4 * max, s.export_bytes);
    try {
      d.write(d.any_offset(too_long), too_long);
      ADD_FAILURE() << s.name << ": " << too_long << " bytes found room";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOSPC) << s.name << ": " << e.what();
    }
    EXPECT_EQ(d.check_model(), "") << s.name << ": after the refused write";
  }
}

}  // namespace
}  // namespace vld
