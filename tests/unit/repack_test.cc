// Running out of room for whole blocks (VldDisk::repack): a disk filled by
// back-to-back single-block writes (latency=none, no flush between them)
// leaves the few sectors the head passes during each command's controller
// overhead free behind every block, too few to hold one. Before repacking
// existed such a fill stopped with ENOSPC at 75-77% of an st19101 export
// and 98.6% of an hp97560 one (20 MiB, sequential or random order). Now every
// block of the export can be written, in any order, the contents read back,
// and the image reopens exactly, clean or not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint32_t kBlock = 4096;

std::vector<std::byte> contents(uint64_t block, uint64_t version) {
  std::vector<std::byte> v(kBlock);
  std::mt19937_64 rng(block * 7919 + version);
  for (size_t i = 0; i < v.size(); i += 8) {
    const uint64_t x = rng();
    std::memcpy(v.data() + i, &x, 8);
  }
  return v;
}

struct FillCase {
  const char* preset;
  uint64_t export_mib;
  bool random_order;
  bool needs_repacks;  // whether the gaps strand space before the export is full
  bool least_spare;    // the least spare= check_vld_fillable accepts (else 25)
};

// The least spare check_vld_fillable accepts for the case.
FormatOptions least_spare_options(FormatOptions o) {
  for (o.spare_percent = 0;; ++o.spare_percent) {
    try {
      check_vld_fillable(o, plan_image(o));
      return o;
    } catch (const Error&) {
    }
  }
}

std::string case_name(const ::testing::TestParamInfo<FillCase>& info) {
  return std::string(info.param.preset) + "_" + std::to_string(info.param.export_mib) + "MiB_" +
         (info.param.random_order ? "random" : "sequential") +
         (info.param.least_spare ? "_least_spare" : "");
}

class BackToBackFill : public ::testing::TestWithParam<FillCase> {};

// Writes each block in `order` once (version 1), from *now on; records
// after how many writes the first repack ran (0: none).
void write_each_once(VldDisk& disk, const std::vector<uint64_t>& order, SimTime* now,
                     uint64_t* first_repack_at) {
  for (uint64_t i = 0; i < order.size(); ++i) {
    const uint64_t b = order[i];
    ASSERT_NO_THROW(*now = disk.write(b * kBlock, contents(b, 1), false, *now).end)
        << "write " << i << " of " << order.size() << " (block " << b << ")";
    if (!*first_repack_at && disk.vld_stats().repacks) *first_repack_at = i + 1;
  }
}

// The last victim is the new reserve once a record has freed its old
// copies; idle time writes that record first.
void expect_reserve_back(VldDisk& disk, SimTime now) {
  if (!disk.allocator().reserved_track()) {
    EXPECT_GT(disk.vld_stats().repacks, 0u);
    const std::optional<uint32_t> victim = disk.allocator().excluded_track();
    ASSERT_TRUE(victim.has_value());
    ASSERT_TRUE(disk.idle_step(now).has_value());
    EXPECT_EQ(disk.allocator().reserved_track(), victim);
    EXPECT_EQ(disk.allocator().excluded_track(), std::nullopt);
  }
  ASSERT_TRUE(disk.allocator().reserved_track().has_value());
}

TEST_P(BackToBackFill, EveryBlockOfTheExportCanBeWritten) {
  const FillCase& fc = GetParam();
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = fc.export_mib << 20;
  o.block_bytes = kBlock;
  o.geometry = *find_preset(fc.preset);
  if (fc.least_spare) o = least_spare_options(o);
  const Superblock sb = plan_image(o);
  ASSERT_NO_THROW(check_vld_fillable(o, sb));
  MemoryBackingStore mem(sb.image_bytes());
  format_store(mem, sb);
  auto disk = std::make_unique<VldDisk>(std::make_unique<ProxyStore>(mem), sb);
  ASSERT_TRUE(disk->allocator().reserved_track().has_value()) << "a new image has a reserve";

  const uint64_t blocks = sb.export_bytes / kBlock;
  std::vector<uint64_t> order(blocks);
  for (uint64_t b = 0; b < blocks; ++b) order[b] = b;
  if (fc.random_order) std::shuffle(order.begin(), order.end(), std::mt19937_64(11));
  SimTime now = kSimEpoch;
  uint64_t first_repack_at = 0;  // blocks written when the first repack ran
  ASSERT_NO_FATAL_FAILURE(write_each_once(*disk, order, &now, &first_repack_at));
  const VldStats& st = disk->vld_stats();
  std::printf("  %s: %llu blocks; first repack after %.1f%% of them; %llu repacks moved %llu "
              "blocks in %.0f ms of %.0f ms simulated\n",
              case_name({GetParam(), 0}).c_str(), static_cast<unsigned long long>(blocks),
              100.0 * static_cast<double>(first_repack_at) / static_cast<double>(blocks),
              static_cast<unsigned long long>(st.repacks),
              static_cast<unsigned long long>(st.repack_blocks_moved), to_ms(st.repack_time),
              to_ms(now - kSimEpoch));
  EXPECT_EQ(st.repacks > 0, fc.needs_repacks);
  EXPECT_EQ(disk->check_consistency(), "");
  EXPECT_EQ(disk->live_blocks(), blocks);
  ASSERT_NO_FATAL_FAILURE(expect_reserve_back(*disk, now));
  EXPECT_TRUE(disk->free_space().is_empty(*disk->allocator().reserved_track()));

  // Overwrites of a full disk keep going.
  std::mt19937_64 rng(5);
  std::vector<uint64_t> version(blocks, 1);
  for (int i = 0; i < 200; ++i) {
    const uint64_t b = rng() % blocks;
    ASSERT_NO_THROW(now = disk->write(b * kBlock, contents(b, ++version[b]), false, now).end);
  }
  now = disk->flush(now).end;
  auto read_all_exact = [&](VldDisk& d) {
    std::vector<std::byte> got(kBlock);
    for (uint64_t b = 0; b < blocks; ++b) {
      d.read(b * kBlock, got, kSimEpoch);
      if (got != contents(b, version[b])) return "block " + std::to_string(b) + " differs";
    }
    return std::string();
  };
  EXPECT_EQ(read_all_exact(*disk), "");

  // Unclean: the bytes as a kill -9 leaves them (everything was flushed).
  MemoryBackingStore unclean(mem.bytes());
  VldDisk after_crash(std::make_unique<ProxyStore>(unclean), sb);
  EXPECT_EQ(after_crash.recovery().method, "record+window");
  EXPECT_EQ(read_all_exact(after_crash), "");
  EXPECT_EQ(after_crash.check_consistency(), "");

  disk->close();
  disk.reset();
  VldDisk reopened(std::make_unique<ProxyStore>(mem), sb);
  EXPECT_EQ(reopened.recovery().method, "clean-walk");
  EXPECT_EQ(read_all_exact(reopened), "");
}

// The three presets' gaps differ: st19101's 100 us overhead is 4.3 sectors,
// hp97560's 2.3 ms is 5 of its 72, savvio10k4 (none needed at 8 MiB) is the
// control that repacking changes nothing when no gap strands space.
// Idle time repacks once few free runs hold a block, so that writes
// arriving after it need not: the same back-to-back fill in bursts of 32
// writes, with and without 100 ms of idle time after each burst.
struct BurstFill {
  uint64_t repacks = 0, idle_repacks = 0;
  SimDuration write_time{};
};
BurstFill fill_in_bursts(bool idle) {
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = 8ull << 20;
  o.geometry = *find_preset("st19101");
  const Superblock sb = plan_image(o);
  MemoryBackingStore mem(sb.image_bytes());
  format_store(mem, sb);
  VldDisk disk(std::make_unique<ProxyStore>(mem), sb);
  const uint64_t blocks = sb.export_bytes / kBlock;
  BurstFill out;
  SimTime now = kSimEpoch;
  for (uint64_t b = 0; b < blocks; ++b) {
    const Completion c = disk.write(b * kBlock, contents(b, 1), false, now);
    out.write_time += c.end - now;
    now = c.end;
    if (b % 32 != 31 || !idle) continue;
    const SimTime until = now + sim_ms(100);
    while (now < until) {
      std::optional<Completion> step = disk.idle_step(now);
      if (!step) break;
      now = step->end;
    }
  }
  std::vector<std::byte> got(kBlock);
  for (uint64_t b = 0; b < blocks; ++b) {
    disk.read(b * kBlock, got, kSimEpoch);
    EXPECT_EQ(got, contents(b, 1)) << "block " << b;
  }
  EXPECT_EQ(disk.check_consistency(), "");
  out.repacks = disk.vld_stats().repacks;
  out.idle_repacks = disk.vld_stats().idle_repacks;
  return out;
}

TEST(IdleRepack, TakesRepacksOffTheWrites) {
  const BurstFill busy = fill_in_bursts(false), idle = fill_in_bursts(true);
  const uint64_t busy_fg = busy.repacks - busy.idle_repacks, idle_fg = idle.repacks - idle.idle_repacks;
  std::printf("  repacks during writes: %llu without idle time, %llu with (and %llu in idle time); "
              "mean write %.0f us against %.0f us\n",
              static_cast<unsigned long long>(busy_fg), static_cast<unsigned long long>(idle_fg),
              static_cast<unsigned long long>(idle.idle_repacks),
              to_us(busy.write_time) / 2048, to_us(idle.write_time) / 2048);
  EXPECT_EQ(busy.idle_repacks, 0u);
  EXPECT_GT(busy_fg, 0u);
  EXPECT_GT(idle.idle_repacks, 0u);
  EXPECT_LT(idle_fg * 2, busy_fg) << "idle time should take most repacks off the writes";
  EXPECT_LT(idle.write_time, busy.write_time);
}

// Idle time settles. A repack must leave room on the reserve for more
// blocks than the victim's free runs held, counting the map sectors the
// move writes there too: otherwise the next idle step picks the track it
// has just filled and moves the same blocks back, a track read and a log
// record each time, for ever. (Found on this small disk: 9,000 records in
// 20,000 idle steps, no block moved for good.)
TEST(IdleRepack, SettlesRatherThanMovingBlocksBackAndForth) {
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = 256 * 1024;
  o.block_bytes = kBlock;
  o.spare_percent = 25;
  o.geometry = test::small_st19101_geometry();
  const Superblock sb = plan_image_unchecked(o);
  MemoryBackingStore mem(sb.image_bytes());
  format_store(mem, sb);
  VldOptions vo;
  vo.window_cylinders = 2;
  VldDisk disk(std::make_unique<ProxyStore>(mem), sb, vo);
  const uint64_t blocks = sb.export_bytes / kBlock;
  std::mt19937_64 rng(7);
  std::vector<uint64_t> version(blocks, 0);
  SimTime now = kSimEpoch;
  for (uint64_t i = 0; i < 3 * blocks; ++i) {  // every block, then random ones again
    const uint64_t b = i < blocks ? i : rng() % blocks;
    now = disk.write(b * kBlock, contents(b, ++version[b]), false, now).end;
  }
  now = disk.flush(now).end;
  int steps = 0;
  for (std::optional<Completion> c; steps < 1000 && (c = disk.idle_step(now)); ++steps)
    now = c->end;
  EXPECT_LT(steps, 1000) << "idle work never settles: " << disk.vld_stats().idle_repacks
                         << " idle repacks, " << disk.vld_stats().records_written << " records";
  // Each repack gains a block's room for good, so there are fewer than tracks.
  EXPECT_LE(disk.vld_stats().idle_repacks,
            uint64_t{sb.simulated_cylinders} * sb.geometry.tracks_per_cylinder);
  EXPECT_EQ(disk.check_consistency(), "");
  std::vector<std::byte> got(kBlock);
  for (uint64_t b = 0; b < blocks; ++b) {
    disk.read(b * kBlock, got, now);
    EXPECT_EQ(got, contents(b, version[b])) << "block " << b;
  }
}

// The capacity check: what it refuses, what it names, and that the least
// spare it accepts suffices (above: the _least_spare cases fill every block).
TEST(VldFillable, NamesTheLeastSpareOrTheLargestBlock) {
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = 64ull << 20;
  o.geometry = *find_preset("hp97560");
  o.spare_percent = 10;
  try {
    check_vld_fillable(o, plan_image(o));
    ADD_FAILURE() << "spare=10 accepted on the hp97560";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL);
    EXPECT_NE(std::string(e.what()).find("use spare=12 or more"), std::string::npos) << e.what();
  }
  EXPECT_EQ(least_spare_options(o).spare_percent, 12u);
  o.spare_percent = 25;
  o.block_bytes = 65536;  // 128 sectors; the track has 72
  try {
    check_vld_fillable(o, plan_image(o));
    ADD_FAILURE() << "block=64K accepted on the hp97560";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("use block=32768 or less"), std::string::npos) << e.what();
  }
  // In place nothing fragments: any spare will do.
  o.mode = DiskMode::kInplace;
  o.block_bytes = 4096;
  o.spare_percent = 0;
  EXPECT_NO_THROW(check_vld_fillable(o, plan_image(o)));
}

INSTANTIATE_TEST_SUITE_P(Presets, BackToBackFill,
                         ::testing::Values(FillCase{"st19101", 8, false, true, false},
                                           FillCase{"st19101", 8, true, true, false},
                                           FillCase{"hp97560", 20, false, true, false},
                                           FillCase{"savvio10k4", 8, true, false, false},
                                           FillCase{"st19101", 8, false, true, true},
                                           FillCase{"st19101", 8, true, true, true},
                                           FillCase{"hp97560", 8, true, true, true},
                                           FillCase{"savvio10k4", 8, true, false, true}),
                         case_name);

}  // namespace
}  // namespace vld
