// libFuzzer target: opening (and so recovering) a vld image, then serving a
// few requests from it.
//
// The input is a whole image: superblock, record slots, platters. The target
//   1. reseals what the fuzzer cannot (unless the control byte says not to):
//      the superblock's XXH3 and the MAC of every sector that starts with a
//      map-sector or log-record magic (mode=lld: checkpoint, summary, NVRAM
//      header and record magics), with the image's own secret. Anyone
//      holding the image file holds the secret too, so a resealed image is
//      a crafted image that core/ must survive; without resealing almost
//      every mutation would stop at the checksum or MAC check;
//   2. reads the superblock (read_superblock on a MemoryBackingStore) and
//      skips images too large for one run to stay fast (bounds on the
//      parsed superblock below, never on the code under test);
//   3. opens the disk (make_disk: VldDisk recovers) and, if that succeeds,
//      requires check_consistency() == "" (crash contract clause 5), reads
//      the whole export, writes and flushes, zeroes, trims, closes, and
//      reopens the result (which must open and read back what was written).
// vld::Error is the expected answer to a damaged image at any step; any other
// exception, a crash, a hang or a sanitizer report is a finding.
//
// Control byte: superblock byte 4000 (in its zero padding, which nothing
// reads). Bit 0 set: keep the superblock's checksum as it is. Bit 1 set:
// keep the MACs as they are. The seeds have 0 there: both resealed.
#include <sodium.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "core/store/backing_store.h"
#include "core/disk.h"
#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/vld/map_sector.h"
#include "core/util/checksum.h"
#include "core/util/coding.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"

namespace {

using namespace vld;

// Bounds on the parsed superblock: images a run can open in milliseconds.
constexpr uint64_t kMaxImageBytes = 2 << 20;     // the input itself is at most -max_len
constexpr uint32_t kMaxSectorsPerTrack = 1024;
constexpr uint32_t kMaxHeads = 64;
constexpr uint64_t kMaxSimulatedCylinders = 256;
constexpr size_t kControlByte = 4000;

[[noreturn]] void finding(const char* what, const std::string& detail) {
  std::fprintf(stderr, "open_image_fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

void seal(unsigned char* p, size_t covered, const unsigned char* key) {
  crypto_generichash(p + covered, 16, p, covered, key, 32);
}

// mode=lld's structures (docs/format.md, "mode=lld"): checkpoint slots and
// segment summaries start sectors, NVRAM records start at 64-byte strides
// of their region. Each is resealed where its own fields say its MAC is.
void reseal_lld(unsigned char* p, uint64_t from, uint64_t size, const unsigned char* key) {
  for (uint64_t off = from; off + 64 <= size; off += 64) {
    unsigned char* s = p + off;
    const uint32_t magic = decode_fixed32(s);
    if (magic == 0x564e444c /* LDNV */ || magic == 0x544e444c /* LDNT */) seal(s, 48, key);
    if (off % kSectorBytes != 0 || off + kSectorBytes > size) continue;
    if (magic == 0x484e444c /* LDNH */) seal(s, kSectorBytes - 16, key);
    if (magic == 0x5353444c /* LDSS */) {
      const uint64_t total = (32 + 16 * uint64_t{decode_fixed32(s + 20)} + 16 + 511) / 512 * 512;
      if (off + total <= size) seal(s, total - 16, key);
    }
    if (magic == 0x5043444c /* LDCP */) {
      const uint64_t tables = uint64_t{decode_fixed32(s + 48)} * kSectorBytes;
      if (off + kSectorBytes + tables > size) continue;
      crypto_generichash(s + 56, 16, s + kSectorBytes, tables, key, 32);
      seal(s, kSectorBytes - 16, key);
    }
  }
}

void reseal(std::vector<std::byte>& image) {
  auto* p = reinterpret_cast<unsigned char*>(image.data());
  const uint8_t control = p[kControlByte];
  if (!(control & 1)) encode_fixed64(p + kSuperblockBytes - 8, checksum64(p, kSuperblockBytes - 8));
  if (control & 2) return;
  const uint64_t platter_offset = decode_fixed64(p + 176);
  if (platter_offset < kSuperblockBytes || platter_offset % kSectorBytes != 0 ||
      platter_offset >= image.size())
    return;
  const unsigned char* key = p + 144;  // the secret
  if (decode_fixed32(p + 12) == static_cast<uint32_t>(DiskMode::kLld)) {
    reseal_lld(p, platter_offset, image.size(), key);
    return;
  }
  for (uint64_t off = platter_offset; off + kSectorBytes <= image.size(); off += kSectorBytes) {
    const uint32_t magic = decode_fixed32(p + off);
    if (magic != 0x534d4c56 /* VLMS */ && magic != 0x524c4c56 /* VLLR */) continue;
    crypto_generichash(p + off + kMapMacAt, 16, p + off, kMapMacAt, key, 32);
  }
}

bool small_enough(const Superblock& sb, uint64_t input_bytes) {
  const DriveGeometry& g = sb.geometry;
  if (g.sectors_per_track > kMaxSectorsPerTrack || g.tracks_per_cylinder > kMaxHeads) return false;
  if (sb.simulated_cylinders > kMaxSimulatedCylinders) return false;
  if (sb.image_bytes() > kMaxImageBytes || sb.image_bytes() > input_bytes) return false;
  return true;
}

// Runs fn; a vld::Error is an expected refusal (returns false).
template <typename Fn>
bool expected_to_work(Fn&& fn) {
  try {
    fn();
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (sodium_init() < 0) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kSuperblockBytes) return 0;
  std::vector<std::byte> image(reinterpret_cast<const std::byte*>(data),
                               reinterpret_cast<const std::byte*>(data) + size);
  reseal(image);
  auto store = std::make_unique<MemoryBackingStore>(std::move(image));
  Superblock sb;
  if (!expected_to_work([&] { sb = read_superblock(*store, "fuzz.img"); })) return 0;
  if (!small_enough(sb, size)) return -1;  // not added to the corpus

  MemoryBackingStore* mem = store.get();  // owned by the disk from here on
  std::unique_ptr<Disk> disk;
  if (!expected_to_work([&] { disk = make_disk(std::move(store), sb); })) return 0;
  if (std::string why = disk->check_consistency(); !why.empty())
    finding("opened an inconsistent disk", why);

  const uint64_t size_bytes = sb.export_bytes, bs = sb.block_bytes;
  SimTime now = kSimEpoch;
  std::vector<std::byte> all(size_bytes);
  expected_to_work([&] { now = disk->read(0, all, now).end; });
  // A write of two blocks, not aligned, then a flush: read-modify-write of
  // blocks that recovery accepted, placement, map sectors, a record.
  const uint64_t wlen = std::min<uint64_t>(size_bytes, 2 * bs);
  const uint64_t woff = (size_bytes - wlen) / 2 + (wlen < size_bytes ? 1 : 0);
  std::vector<std::byte> pattern(std::min<uint64_t>(wlen, size_bytes - woff));
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::byte>(i * 7 + 1);
  expected_to_work([&] {
    now = disk->write(woff, pattern, false, now).end;
    now = disk->flush(now).end;
  });
  expected_to_work([&] {
    now = disk->zero(0, std::min<uint64_t>(size_bytes, bs), ZeroFlags{}, now).end;
    now = disk->trim(size_bytes - std::min<uint64_t>(size_bytes, bs), bs, true, now).end;
  });
  // Last: a FUA write, durable once acknowledged.
  const bool durable = expected_to_work([&] { now = disk->write(woff, pattern, true, now).end; });
  if (std::string why = disk->check_consistency(); !why.empty())
    finding("inconsistent after requests", why);
  if (!expected_to_work([&] { disk->close(); })) return 0;
  std::vector<std::byte> after = mem->bytes();
  disk.reset();  // mem is gone with it

  // The image a clean close left behind (with the superblock as resealed)
  // opens again and holds the FUA write.
  if (!durable) return 0;
  auto store2 = std::make_unique<MemoryBackingStore>(std::move(after));
  std::unique_ptr<Disk> disk2;
  try {
    disk2 = make_disk(std::move(store2), sb);
  } catch (const Error& e) {
    finding("a cleanly closed image does not open again", e.what());
  }
  std::vector<std::byte> got(pattern.size());
  try {
    disk2->read(woff, got, kSimEpoch);
  } catch (const Error& e) {
    finding("a FUA write does not read back after a clean close", e.what());
  }
  if (got != pattern) finding("a FUA write reads back different bytes", "after a clean close");
  return 0;
}
