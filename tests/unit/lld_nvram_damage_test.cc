// Damage to mode=lld's NVRAM region (docs/corruption.md, "mode=lld"): every
// single sector of the region of a small image, after acknowledged writes
// and kill -9, zeroed, bit-flipped or overwritten with another sector of
// the region. Opening the damaged copy must recover every acknowledged
// write exactly, or refuse with EIO naming the damage and leave the image
// byte for byte as it was. The one exception is the newest request, which
// nothing later vouches for: damage there cannot be told from a torn,
// unacknowledged append, and that request reads all old instead (the
// known gap vld has too); every other block is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/lld/lld_disk.h"
#include "core/lld/nvram_log.h"
#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "geometry/presets.h"

namespace vld {
namespace {

using Bytes = std::vector<std::byte>;
constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExport = 256 * 1024;  // 64 blocks

Superblock nvram_superblock() {
  FormatOptions o;
  o.mode = DiskMode::kLld;
  o.export_bytes = kExport;
  o.block_bytes = kBlock;
  o.spare_percent = 25;
  o.segment_bytes = 32 * 1024;
  o.nvram_bytes = 64 * 1024;  // 15 records
  DriveGeometry g = *find_preset("st19101");
  g.sectors_per_track = 64;
  g.tracks_per_cylinder = 4;
  g.cylinders = 16;
  g.derive_skews();
  o.geometry = g;
  Superblock sb = plan_image_unchecked(o);
  sb.platter_offset = 4096;
  return sb;
}

Bytes block_data(uint64_t block, uint64_t version) {
  std::mt19937_64 rng(block * 1000003 + version);
  Bytes v(kBlock);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);
  return v;
}

// An image after kill -9 with requests acknowledged into the NVRAM region
// since its last drain; what each block must read (`want`), and for each
// request still in the region the contents before it and where its
// records are.
struct NvramImage {
  struct Request {
    uint64_t first_record = 0, records = 0;  // region record indices
    std::vector<Bytes> before;               // every block, before it
  };
  Superblock sb;
  Bytes bytes;
  std::vector<Bytes> want;
  std::vector<Request> in_region;  // oldest first
  uint64_t region_offset = 0, region_bytes = 0, record_bytes = 0;  // in the image

  // The requests with a record in region bytes [at, at + len).
  std::vector<size_t> requests_at(uint64_t at, uint64_t len) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < in_region.size(); ++i) {
      const uint64_t from = kNvramRecordsOffsetBytes + in_region[i].first_record * record_bytes;
      const uint64_t to = from + in_region[i].records * record_bytes;
      if (at < to && from < at + len) out.push_back(i);
    }
    return out;
  }
};

NvramImage make_image(uint64_t seed) {
  NvramImage im;
  im.sb = nvram_superblock();
  MemoryBackingStore mem(im.sb.image_bytes());
  format_store(mem, im.sb);
  im.want.assign(kExport / kBlock, Bytes(kBlock));
  std::mt19937_64 rng(seed);
  LldDisk disk(std::make_unique<ProxyStore>(mem), im.sb);
  const LldLayout& layout = disk.layout();
  im.region_offset = im.sb.platter_offset + layout.nvram.first_psn * kSectorBytes;
  im.region_bytes = layout.nvram_bytes;
  im.record_bytes = nvram_record_bytes(layout.shape);
  SimTime now{};
  uint64_t version = 0;
  // Enough records to drain once (segments hold older versions), then
  // the region part full: requests of 1-3 blocks, often over the same
  // blocks, so that some records are superseded by later ones.
  for (int i = 0; i < 22 || im.in_region.size() < 4; ++i) {
    const uint64_t first = rng() % 20, n = 1 + rng() % 3;
    NvramImage::Request r{0, n, im.want};
    Bytes data;
    for (uint64_t b = first; b < first + n; ++b) {
      im.want[b] = block_data(b, ++version);
      data.insert(data.end(), im.want[b].begin(), im.want[b].end());
    }
    now = disk.write(first * kBlock, data, /*fua=*/false, now).end;
    const uint64_t used = disk.report().nvram_used_records;
    if (used == n) im.in_region.clear();  // drained first
    r.first_record = used - n;
    im.in_region.push_back(std::move(r));
  }
  EXPECT_GT(im.in_region.size(), 3u) << "precondition: requests in the region";
  im.bytes = mem.bytes();  // kill -9: no close
  return im;
}

enum class Outcome { kExact, kRefused, kNewestOld };

// Opens a copy whose region bytes [at, at + 512) are damaged; checks the
// outcome is allowed.
Outcome open_damaged(const NvramImage& im, const Bytes& damaged, uint64_t at,
                     const std::string& what) {
  auto store = std::make_unique<MemoryBackingStore>(damaged);
  MemoryBackingStore* raw = store.get();
  std::unique_ptr<LldDisk> disk;
  try {
    disk = std::make_unique<LldDisk>(std::make_unique<ProxyStore>(*raw), im.sb);
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EIO) << what << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("NVRAM"), std::string::npos) << what << ": " << e.what();
    EXPECT_TRUE(raw->bytes() == damaged) << what << ": a refused image was written";
    return Outcome::kRefused;
  }
  std::vector<Bytes> got(im.want.size(), Bytes(kBlock));
  for (uint64_t b = 0; b < im.want.size(); ++b) disk->read(b * kBlock, got[b], SimTime{});
  if (got == im.want) return Outcome::kExact;
  // Allowed only where the sector holds records of the newest request:
  // the requests from one whose records it holds on read old.
  const std::vector<size_t> hit = im.requests_at(at, kSectorBytes);
  const bool newest = !hit.empty() && hit.back() + 1 == im.in_region.size();
  const bool old_from_one = std::any_of(hit.begin(), hit.end(), [&](size_t i) {
    return got == im.in_region[i].before;
  });
  EXPECT_TRUE(newest && old_from_one)
      << what << ": an acknowledged write was lost, and the damage is not to the newest request";
  return Outcome::kNewestOld;
}

TEST(LldNvramDamage, EverySectorOfTheRegionRecoversExactlyOrIsRefused) {
  for (uint64_t seed : {1, 2}) {
    const NvramImage im = make_image(seed);
    std::map<std::string, std::map<Outcome, int>> tally;
    const uint64_t sectors = im.region_bytes / kSectorBytes;
    for (uint64_t s = 0; s < sectors; ++s) {
      const uint64_t at = im.region_offset + s * kSectorBytes;
      for (int kind = 0; kind < 3; ++kind) {
        Bytes damaged = im.bytes;
        std::byte* p = damaged.data() + at;
        const char* name = kind == 0 ? "zeroed" : kind == 1 ? "bit flipped" : "another sector";
        if (kind == 0) std::memset(p, 0, kSectorBytes);
        if (kind == 1) p[kSectorBytes / 2 + s % 64] ^= std::byte{0x10};
        if (kind == 2)
          std::memcpy(p, im.bytes.data() + im.region_offset + (s + 7) % sectors * kSectorBytes,
                      kSectorBytes);
        if (damaged == im.bytes) continue;  // nothing changed (e.g. zeros zeroed)
        const std::string what =
            "seed " + std::to_string(seed) + ", NVRAM sector " + std::to_string(s) + " " + name;
        ++tally[name][open_damaged(im, damaged, s * kSectorBytes, what)];
        if (HasFailure()) return;
      }
    }
    for (const auto& [name, t] : tally) {
      std::cout << "[ damage   ] seed " << seed << ", " << sectors << " NVRAM sectors " << name
                << ": " << (t.count(Outcome::kExact) ? t.at(Outcome::kExact) : 0)
                << " exact, " << (t.count(Outcome::kRefused) ? t.at(Outcome::kRefused) : 0)
                << " refused, " << (t.count(Outcome::kNewestOld) ? t.at(Outcome::kNewestOld) : 0)
                << " with the newest request old" << std::endl;
    }
    EXPECT_GT(tally["bit flipped"][Outcome::kRefused], 0) << "precondition: vouched damage";
    EXPECT_GT(tally["bit flipped"][Outcome::kExact], 0);
  }
}

}  // namespace
}  // namespace vld
