// A write's data checksums computed before DiskController's lock
// (BlockChecksums, Disk::write_with_checksums): mode=vld through the
// controller must write exactly what VldDisk::write, hashing every block
// itself, writes: the same map entries, the same image bytes and the same
// simulated times, for whole, partial and multi-block writes.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <span>
#include <vector>

#include "core/disk_controller.h"
#include "core/image_format.h"
#include "core/store/backing_store.h"
#include "core/util/checksum.h"
#include "core/vld/vld_disk.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExport = 4 << 20;  // 1024 blocks

struct Twin {
  MemoryBackingStore* store;  // owned by disk
  std::unique_ptr<VldDisk> disk;
};

// A new vld disk on a formatted image in memory.
Twin new_vld(const Superblock& sb) {
  auto s = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  const auto bytes = encode_superblock(sb);
  s->write(0, std::as_bytes(std::span(bytes)));
  VldDisk::format(*s, sb);
  MemoryBackingStore* raw = s.get();
  return Twin{raw, std::make_unique<VldDisk>(std::move(s), sb)};
}

std::vector<std::byte> image_of(BackingStore& s) {
  std::vector<std::byte> v(s.size_bytes());
  s.read(0, v);
  return v;
}

TEST(WriteChecksums, WholeBlocksAreCoveredAndPartialOnesLeftToTheDisk) {
  const uint32_t sums[] = {11, 22};
  const BlockChecksums given{5, sums};
  EXPECT_FALSE(given.of(4));
  EXPECT_EQ(given.of(5), 11u);
  EXPECT_EQ(given.of(6), 22u);
  EXPECT_FALSE(given.of(7));
  EXPECT_FALSE(BlockChecksums{}.of(0));
}

TEST(WriteChecksums, VldThroughTheControllerWritesWhatHashingUnderTheLockWrites) {
  const Superblock sb = test::st19101_superblock(DiskMode::kVld, kExport);
  Twin hashed_inside = new_vld(sb);
  Twin through = new_vld(sb);
  MemoryBackingStore* through_store = through.store;
  ASSERT_TRUE(through.disk->takes_write_checksums());
  DiskController dc(std::move(through.disk));

  std::mt19937_64 rng(7);
  std::vector<std::byte> data(4 * kBlock);
  for (int i = 0; i < 600; ++i) {
    for (auto& b : data) b = static_cast<std::byte>(rng());
    // Mostly whole blocks (1 to 4), some at a sector offset (partial
    // blocks at either end, merged under the lock).
    const uint64_t blocks = 1 + rng() % 4;
    uint64_t offset = (rng() % (kExport / kBlock - blocks)) * kBlock;
    uint64_t len = blocks * kBlock;
    if (i % 5 == 0) {
      offset += 512 * (1 + rng() % 7);
      len -= 512 * (1 + rng() % 7);
    }
    const std::span<const std::byte> bytes(data.data(), len);
    const bool fua = i % 7 == 0;
    const RequestTiming t = dc.write(offset, bytes, fua, std::nullopt);
    const Completion c = hashed_inside.disk->write(offset, bytes, fua, t.start);
    ASSERT_EQ(c.end, t.end) << "write " << i;
  }
  // The map sectors hold each block's checksum: equal images, equal maps.
  EXPECT_EQ(image_of(*through_store), image_of(*hashed_inside.store));
  dc.close();
  hashed_inside.disk->close();
  EXPECT_EQ(image_of(*through_store), image_of(*hashed_inside.store));
}

}  // namespace
}  // namespace vld
