// make_corpus DIR: writes the seed corpus of open_image_fuzzer into DIR.
//
// Each seed is a small real image, made the way a served disk makes it: a
// VldDisk (or InplaceDisk) on an in-memory store, some writes, trims and
// flushes, then either a clean close or the bytes as they were before close
// (an unclean stop). The geometry is tiny (a custom st19101 with 32 or 64
// sectors per track, 2 or 4 heads, platters at 4 KiB instead of 1 MiB) so
// every seed stays well under libFuzzer's -max_len (scripts/fuzz: 1 MiB).
// Deterministic: the same seeds every run (the secret comes from a fixed
// pattern, not randombytes).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/inplace/inplace_disk.h"
#include "core/lld/lld_disk.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"

namespace {

using namespace vld;
using Bytes = std::vector<std::byte>;

struct Spec {
  DiskMode mode = DiskMode::kVld;
  uint64_t export_bytes = 256 * 1024;
  uint32_t block_bytes = 4096;
  uint32_t spt = 64, heads = 4;
  uint32_t spare_percent = 25;
  uint64_t segment_bytes = 16 * 1024;  // mode=lld: small, so a tiny disk has many
  uint64_t nvram_bytes = 64 * 1024;
  // Zoned: two zones (spt, then 3/4 of it from the drive's cylinder 12 on),
  // a write settle, and the platters a band from cylinder 6 (span=), so the
  // superblock's zone table and span fields are in the corpus too.
  bool zoned_band = false;
};

Superblock superblock(const Spec& s, uint8_t secret_seed) {
  FormatOptions o;
  o.mode = s.mode;
  o.export_bytes = s.export_bytes;
  o.block_bytes = s.block_bytes;
  o.spare_percent = s.spare_percent;
  o.segment_bytes = s.segment_bytes;
  o.nvram_bytes = s.nvram_bytes;
  DriveGeometry g = *find_preset("st19101");
  g.sectors_per_track = s.spt;
  g.tracks_per_cylinder = s.heads;
  if (s.zoned_band) {
    g.cylinders = 64;
    g.write_settle = sim_ms(0.1);
    g.sectors_per_track = g.track_skew_sectors = g.cylinder_skew_sectors = 0;
    g.zones = {Zone{0, s.spt, 0, 0, 0}, Zone{12, s.spt * 3 / 4, 0, 0, 0}};
    g.number_zones();
    o.span = CylinderSpan{6, 6 + 15};
    o.spare_percent = 0;
  }
  g.derive_skews();
  o.geometry = g;
  Superblock sb = plan_image(o);
  sb.platter_offset = 4096;
  for (size_t i = 0; i < sb.secret.size(); ++i) sb.secret[i] = static_cast<unsigned char>(secret_seed * 31 + i);
  return sb;
}

Bytes pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);
  return v;
}

void save(const std::string& dir, const std::string& name, const Bytes& image) {
  const std::string path = dir + "/" + name;
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(image.data()), static_cast<std::streamsize>(image.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
  std::printf("  %-28s %7zu bytes\n", name.c_str(), image.size());
}

// A random workload of `ops` requests; flushes every `flush_every`.
void workload(Disk& d, uint64_t seed, int ops, int flush_every, bool trims) {
  std::mt19937_64 rng(seed);
  const uint64_t bs = d.superblock().block_bytes, size = d.superblock().export_bytes;
  const uint64_t blocks = size / bs;
  SimTime now = kSimEpoch;
  for (int i = 0; i < ops; ++i) {
    const uint64_t b = rng() % blocks;
    const uint64_t n = std::min<uint64_t>(blocks - b, 1 + rng() % 3);
    if (trims && rng() % 8 == 0) {
      now = d.trim(b * bs, n * bs, false, now).end;
    } else {
      // Some writes are partial blocks (read-modify-write).
      uint64_t off = b * bs + (rng() % 4 == 0 ? rng() % bs : 0);
      uint64_t len = std::min<uint64_t>(size - off, n * bs);
      now = d.write(off, pattern(len, seed * 1000 + i), rng() % 5 == 0, now).end;
    }
    if (flush_every && (i + 1) % flush_every == 0) now = d.flush(now).end;
  }
}

Bytes formatted(const Superblock& sb) {
  MemoryBackingStore s(sb.image_bytes());
  format_store(s, sb);
  return s.bytes();
}

VldOptions small_window() {
  VldOptions o;
  o.window_cylinders = 1;
  o.retired_limit = 2;  // records often: their slots alternate
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  try {
    std::printf("seed images in %s:\n", dir.c_str());
    const Spec big{};                                                  // 256 KiB, 64x4
    // 64 KiB on 32 sectors x 2 heads: the system track is a large part of
    // so small a disk, hence the spare.
    const Spec small{DiskMode::kVld, 64 * 1024, 4096, 32, 2, 100};
    const Spec tiny_blocks{DiskMode::kVld, 64 * 1024, 512, 32, 2, 100};  // 4 pieces
    const Spec inplace{DiskMode::kInplace, 64 * 1024, 4096, 32, 2, 25};

    // A freshly formatted image, never opened.
    save(dir, "vld-fresh-64k", formatted(superblock(small, 1)));

    // Clean closes, and the same images taken before close (unclean).
    struct Case {
      const char* name;
      Spec spec;
      uint64_t seed;
      int ops, flush_every;
      VldOptions opt;
    };
    const Case cases[] = {
        {"vld-256k", big, 2, 120, 10, small_window()},
        {"vld-256k-defaults", big, 3, 60, 0, VldOptions{}},
        {"vld-64k", small, 4, 80, 7, small_window()},
        {"vld-64k-512b-blocks", tiny_blocks, 5, 100, 9, small_window()},
    };
    for (const Case& c : cases) {
      const Superblock sb = superblock(c.spec, static_cast<uint8_t>(c.seed));
      MemoryBackingStore mem(formatted(sb));
      VldDisk d(std::make_unique<ProxyStore>(mem), sb, c.opt);
      workload(d, c.seed, c.ops, c.flush_every, /*trims=*/true);
      save(dir, std::string(c.name) + "-unclean", mem.bytes());
      d.close();
      save(dir, std::string(c.name) + "-clean", mem.bytes());
    }

    // A zoned drive, its platters a band of it: every mode, clean and not.
    for (DiskMode mode : {DiskMode::kVld, DiskMode::kLld, DiskMode::kInplace}) {
      Spec zoned{mode, 64 * 1024, 4096, 32, 2, 0};
      zoned.zoned_band = true;
      const Superblock sb = superblock(zoned, 12);
      MemoryBackingStore mem(formatted(sb));
      std::unique_ptr<Disk> d = mode == DiskMode::kVld
          ? std::unique_ptr<Disk>(new VldDisk(std::make_unique<ProxyStore>(mem), sb, small_window()))
          : mode == DiskMode::kLld
              ? std::unique_ptr<Disk>(new LldDisk(std::make_unique<ProxyStore>(mem), sb))
              : std::unique_ptr<Disk>(new InplaceDisk(std::make_unique<ProxyStore>(mem), sb));
      workload(*d, 12, 60, 9, /*trims=*/true);
      const std::string name = std::string(mode_name(mode)) + "-zoned-band";
      save(dir, name + "-unclean", mem.bytes());
      d->close();
      save(dir, name + "-clean", mem.bytes());
    }

    // Recovered from an unclean stop (a checkpoint on the platters), then
    // stopped uncleanly again after a few more writes.
    {
      const Superblock sb = superblock(big, 6);
      MemoryBackingStore mem(formatted(sb));
      {
        VldDisk d(std::make_unique<ProxyStore>(mem), sb, small_window());
        workload(d, 6, 80, 11, true);
      }  // no close
      VldDisk d(std::make_unique<ProxyStore>(mem), sb, small_window());
      workload(d, 7, 15, 0, false);
      save(dir, "vld-256k-recovered-unclean", mem.bytes());
    }

    // In the middle of compaction (idle steps), stopped uncleanly.
    {
      const Superblock sb = superblock(big, 8);
      MemoryBackingStore mem(formatted(sb));
      VldDisk d(std::make_unique<ProxyStore>(mem), sb, small_window());
      workload(d, 8, 150, 0, true);
      SimTime now = kSimEpoch + std::chrono::seconds(10);
      for (int i = 0; i < 6; ++i)
        if (auto c = d.idle_step(now)) now = c->end;
      save(dir, "vld-256k-compacting-unclean", mem.bytes());
    }

    // mode=lld, with NVRAM and without: the cleaner runs on so small a disk.
    for (uint64_t nvram : {uint64_t{64 * 1024}, uint64_t{0}}) {
      Spec lld{DiskMode::kLld, 128 * 1024, 4096, 64, 4, 25};
      lld.nvram_bytes = nvram;
      const Superblock sb = superblock(lld, nvram ? 10 : 11);
      MemoryBackingStore mem(formatted(sb));
      LldDisk d(std::make_unique<ProxyStore>(mem), sb);
      workload(d, 10, 200, 13, /*trims=*/true);
      const std::string name = nvram ? "lld-128k" : "lld-128k-nvram0";
      save(dir, name + "-unclean", mem.bytes());
      d.close();
      save(dir, name + "-clean", mem.bytes());
    }

    // mode=inplace.
    {
      const Superblock sb = superblock(inplace, 9);
      MemoryBackingStore mem(formatted(sb));
      InplaceDisk d(std::make_unique<ProxyStore>(mem), sb);
      workload(d, 9, 30, 0, true);
      d.close();
      save(dir, "inplace-64k", mem.bytes());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
