// A clean stop leaves nothing for the next open to do (crash contract,
// "Clean close"): reopened and only read, an image of every mode is byte
// for byte what the stop left; and mode=lld's clean open, which reads the
// checkpoint records and one slot's tables, costs no more simulated time
// than mode=vld's walk of its fresh tree after the same writes.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/store/backing_store.h"
#include "geometry/presets.h"

namespace vld {
namespace {

constexpr uint64_t kExportBytes = 64 << 20;
constexpr uint64_t kBlock = 4096;

struct OpenCost {
  bool clean = false;
  uint64_t sectors_read = 0;
  double simulated_ms = 0;
};

OpenCost open_cost(const ModeReport& m) {
  if (m.recovery) return {m.recovery->clean, m.recovery->sectors_read, m.recovery->simulated_ms};
  if (m.lld)
    return {m.lld->recovery.clean, m.lld->recovery.sectors_read, m.lld->recovery.simulated_ms};
  return {true, m.inplace_recovery->sectors_read, m.inplace_recovery->simulated_ms};
}

Superblock plan(DiskMode mode, uint64_t nvram_bytes) {
  FormatOptions o;
  o.mode = mode;
  o.export_bytes = kExportBytes;
  o.nvram_bytes = nvram_bytes;
  o.geometry = *find_preset("st19101");
  o.geometry.derive_skews();
  return plan_image(o);
}

std::vector<std::byte> block_of(uint64_t seed) {
  std::vector<std::byte> b(kBlock);
  for (size_t i = 0; i < kBlock; ++i) b[i] = std::byte((i * 131 + seed * 17) % 251 + 1);
  return b;
}

struct Restart {
  OpenCost reopen;           // the open after the writes' clean close
  bool image_unchanged = false;
  bool contents_right = false;
};

// The whole export written, 2000 random blocks rewritten (every 10th FUA,
// a flush every 50), a clean close; then an open whose client reads every
// block, and its close.
Restart restart_after_writes(const Superblock& sb) {
  MemoryBackingStore mem(sb.image_bytes());
  format_store(mem, sb);
  const uint64_t blocks = kExportBytes / kBlock;
  std::vector<uint64_t> seed_of(blocks);
  {
    DiskController ctl(make_disk(std::make_unique<ProxyStore>(mem), sb, DiskOptions{}));
    for (uint64_t b = 0; b < blocks; ++b) ctl.write(b * kBlock, block_of(b), false, std::nullopt);
    std::mt19937_64 rng(7);
    for (uint64_t i = 0; i < 2000; ++i) {
      const uint64_t b = rng() % blocks;
      seed_of[b] = blocks + i;
      ctl.write(b * kBlock, block_of(seed_of[b]), i % 10 == 0, std::nullopt);
      if (i % 50 == 49) ctl.flush(std::nullopt);
    }
    ctl.close();
  }
  for (uint64_t b = 0; b < blocks; ++b)
    if (seed_of[b] == 0) seed_of[b] = b;
  const std::vector<std::byte> stopped = mem.bytes();
  Restart r;
  r.contents_right = true;
  {
    DiskController ctl(make_disk(std::make_unique<ProxyStore>(mem), sb, DiskOptions{}));
    r.reopen = open_cost(ctl.mode_report());
    std::vector<std::byte> got(kBlock);
    for (uint64_t b = 0; b < blocks; ++b) {
      ctl.read(b * kBlock, got, std::nullopt);
      r.contents_right = r.contents_right && got == block_of(seed_of[b]);
    }
    ctl.close();
  }
  r.image_unchanged = stopped == mem.bytes();
  return r;
}

TEST(CleanRestart, AReadOnlyRestartChangesNothingInAnyMode) {
  for (const auto& [mode, nvram] : {std::pair{DiskMode::kVld, uint64_t{0}},
                                    std::pair{DiskMode::kLld, kDefaultNvramBytes},
                                    std::pair{DiskMode::kLld, uint64_t{0}},
                                    std::pair{DiskMode::kInplace, uint64_t{0}}}) {
    SCOPED_TRACE(std::string(mode_name(mode)) + " nvram " + std::to_string(nvram));
    const Restart r = restart_after_writes(plan(mode, nvram));
    EXPECT_TRUE(r.reopen.clean);
    EXPECT_TRUE(r.contents_right);
    EXPECT_TRUE(r.image_unchanged);
  }
}

TEST(CleanRestart, AnLldCleanOpenCostsNoMoreThanAVldOne) {
  const Restart vld = restart_after_writes(plan(DiskMode::kVld, 0));
  const Restart lld = restart_after_writes(plan(DiskMode::kLld, kDefaultNvramBytes));
  EXPECT_LE(lld.reopen.simulated_ms, vld.reopen.simulated_ms);
  EXPECT_GT(lld.reopen.simulated_ms, 0);
  std::cout << "[ restart  ] clean open of 64 MiB st19101 after 2000 writes: vld "
            << vld.reopen.simulated_ms << " ms (" << vld.reopen.sectors_read
            << " sectors), lld " << lld.reopen.simulated_ms << " ms ("
            << lld.reopen.sectors_read << " sectors)" << std::endl;
}

}  // namespace
}  // namespace vld
