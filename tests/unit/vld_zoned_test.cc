// mode=vld on a zoned drive (geometry/drive_geometry.h): three zones of 256,
// 224 and 192 sectors per track on 4 heads, 30 cylinders simulated. The
// layout's per-track answers and capacity; random writes with flushes
// reading back, on tracks of every zone and each extent within its own
// track; a clean reopen, an unclean one that scans every track at its own
// size, and a crash that loses the unsynced writes; compaction and a
// repack; and vld-inspect's check, report and layout grid on the image.
//
// The superblock is built by hand and the disk formatted in memory, so no
// superblock is encoded (VldDisk takes it as given).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/image_format.h"
#include "core/store/backing_store.h"
#include "core/store/crash_store.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/vld_disk.h"
#include "core/vld/vld_layout.h"
#include "geometry/presets.h"
#include "tools/inspect/check.h"
#include "tools/inspect/inspection.h"
#include "tools/inspect/layout_grid.h"
#include "tools/inspect/open_image.h"
#include "tools/inspect/report.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint32_t kBlockSectors = kBlock / kSectorBytes;
constexpr uint32_t kCylinders = 30;  // simulated: 10 of each zone
constexpr uint32_t kHeads = 4;
constexpr uint32_t kZoneSpt[] = {256, 224, 192};
constexpr uint64_t kExportBytes = 8 << 20;  // 2048 blocks: more than zone 0 holds

DriveGeometry zoned_geometry() {
  DriveGeometry g = *find_preset("st19101");
  g.name = "st19101-zoned";
  g.sectors_per_track = 0;
  g.track_skew_sectors = 0;
  g.cylinder_skew_sectors = 0;
  g.tracks_per_cylinder = kHeads;
  g.zones = {Zone{0, kZoneSpt[0]}, Zone{10, kZoneSpt[1]}, Zone{20, kZoneSpt[2]}};
  g.derive_skews();
  g.number_zones();
  return g;
}

Superblock zoned_superblock() {
  Superblock sb;
  sb.mode = DiskMode::kVld;
  sb.export_bytes = kExportBytes;
  sb.block_bytes = kBlock;
  sb.spare_percent = 25;
  sb.simulated_cylinders = kCylinders;
  sb.geometry = zoned_geometry();
  for (size_t i = 0; i < sb.secret.size(); ++i) sb.secret[i] = static_cast<unsigned char>(i * 7 + 1);
  return sb;
}

uint64_t image_bytes(const Superblock& sb) {
  return sb.platter_offset + sb.geometry.bytes_in_cylinders(sb.simulated_cylinders);
}

std::vector<std::byte> pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);  // never zero
  return v;
}

// A formatted zoned disk in memory and a shadow of what it should read.
struct Rig {
  Rig() : sb(zoned_superblock()) {
    auto s = std::make_unique<MemoryBackingStore>(image_bytes(sb));
    VldDisk::format(*s, sb);
    store = s.get();
    disk = std::make_unique<VldDisk>(std::move(s), sb);
    shadow.assign(kExportBytes, std::byte{0});
  }
  void write(uint64_t off, const std::vector<std::byte>& data) {
    now = disk->write(off, data, false, now).end;
    std::copy(data.begin(), data.end(), shadow.begin() + static_cast<ptrdiff_t>(off));
  }
  void flush() { now = disk->flush(now).end; }

  Superblock sb;
  MemoryBackingStore* store;
  std::unique_ptr<VldDisk> disk;
  std::vector<std::byte> shadow;
  SimTime now = kSimEpoch;
};

// Every block once in 16-block writes, then random 1..4-block writes; a
// flush every 8 writes, a consistency check every 64.
void fill_and_overwrite(Rig& r, int random_writes, uint64_t seed) {
  const uint64_t blocks = kExportBytes / kBlock;
  for (uint64_t b = 0; b < blocks; b += 16) {
    r.write(b * kBlock, pattern(16 * kBlock, b));
    if (b % 128 == 0) r.flush();
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < random_writes; ++i) {
    const uint64_t n = 1 + rng() % 4, b = rng() % (blocks - n + 1);
    r.write(b * kBlock, pattern(n * kBlock, seed * 1000 + i));
    if (i % 8 == 7) r.flush();
    if (i % 64 == 63) {
      ASSERT_EQ(r.disk->check_consistency(), "") << "after write " << i;
    }
  }
  ASSERT_EQ(r.disk->check_consistency(), "");
}

void expect_reads_back(VldDisk& d, const std::vector<std::byte>& shadow) {
  std::vector<std::byte> all(shadow.size());
  d.read(0, all, kSimEpoch);
  for (uint64_t b = 0; b < shadow.size() / kBlock; ++b)
    ASSERT_TRUE(std::equal(all.begin() + b * kBlock, all.begin() + (b + 1) * kBlock,
                           shadow.begin() + b * kBlock))
        << "block " << b;
}

// Every mapped block lies within its own track, none on the system track;
// returns the blocks per zone.
std::vector<uint64_t> blocks_per_zone(const VldDisk& d, const Superblock& sb) {
  const VldLayout layout(sb);
  const DriveGeometry& g = sb.geometry;
  std::vector<uint64_t> per_zone(g.zone_count(), 0);
  for (const MapEntry& e : d.map()) {
    if (!e.mapped()) continue;
    EXPECT_LT(e.psn(), layout.platter_sectors());
    EXPECT_FALSE(layout.on_system_track(e.psn()));
    const Extent x = extent_at(e.psn(), kBlockSectors, g);
    EXPECT_LT(x.track, layout.tracks);
    EXPECT_LT(x.sector, layout.track_sectors(x.track)) << "psn " << e.psn();
    EXPECT_EQ(layout.track_first_psn(x.track) + x.sector, e.psn());
    uint32_t sectors = 0;
    for (const SectorRun& run : extent_runs(x, g)) {
      // Each run on the extent's own track.
      EXPECT_GE(run.first_psn, layout.track_first_psn(x.track));
      EXPECT_LE(run.first_psn + run.count,
                layout.track_first_psn(x.track) + layout.track_sectors(x.track));
      sectors += run.count;
    }
    EXPECT_EQ(sectors, kBlockSectors);
    ++per_zone[g.zone_index_of_cylinder(x.track / kHeads)];
  }
  return per_zone;
}

// ------------------------------------------------------------ layout

TEST(ZonedVldLayout, TracksAnswerForTheirZone) {
  const Superblock sb = zoned_superblock();
  ASSERT_EQ(sb.geometry.check(), "");
  const VldLayout l(sb);
  EXPECT_EQ(l.tracks, kCylinders * kHeads);
  EXPECT_EQ(l.platter_sectors(), 10u * kHeads * (256 + 224 + 192));
  const std::vector<uint32_t> sizes = l.track_sizes();
  ASSERT_EQ(sizes.size(), l.tracks);
  uint64_t psn = 0;
  for (uint32_t t = 0; t < l.tracks; ++t) {
    EXPECT_EQ(sizes[t], kZoneSpt[t / (10 * kHeads)]) << t;
    EXPECT_EQ(l.track_sectors(t), sizes[t]);
    EXPECT_EQ(l.track_first_psn(t), psn) << t;
    EXPECT_EQ(l.track_of(psn), t);
    EXPECT_EQ(l.track_of(psn + sizes[t] - 1), t);
    EXPECT_EQ(l.sector_of(psn + sizes[t] - 1), sizes[t] - 1);
    psn += sizes[t];
  }
  EXPECT_EQ(psn, l.platter_sectors());
  EXPECT_TRUE(l.on_system_track(255));
  EXPECT_FALSE(l.on_system_track(256));
  EXPECT_EQ(l.max_track_sectors(), 256u);
  // Whole blocks after a sector of crumbs: 31, 27 and 23 a track; less the
  // system track (31) and the reserve counted as the largest (31), less
  // two map sectors for each of the 64 pieces (16 blocks).
  EXPECT_EQ(l.block_capacity(), 40u * (31 + 27 + 23) - 31 - 31 - 16);
}

// A single-zone drive's capacity is the formula it always was:
// (tracks - 2) * floor((spt - 1) / block sectors), less the map's room.
TEST(ZonedVldLayout, SingleZoneCapacityIsTheOneZoneFormula) {
  Superblock sb = zoned_superblock();
  sb.geometry = *find_preset("st19101");
  sb.geometry.tracks_per_cylinder = kHeads;
  const VldLayout l(sb);
  EXPECT_EQ(l.block_capacity(), (uint64_t{l.tracks} - 2) * (255 / 8) - 16);
  EXPECT_EQ(l.track_sizes(), std::vector<uint32_t>(l.tracks, 256));
  EXPECT_EQ(l.platter_sectors(), uint64_t{l.tracks} * 256);
}

// ------------------------------------------------------------ the disk

TEST(ZonedVld, RandomWritesReadBackAfterCleanAndUncleanReopen) {
  Rig r;
  ASSERT_NO_FATAL_FAILURE(fill_and_overwrite(r, 600, 7));
  ASSERT_NO_FATAL_FAILURE(expect_reads_back(*r.disk, r.shadow));
  const std::vector<uint64_t> per_zone = blocks_per_zone(*r.disk, r.sb);
  for (uint32_t z = 0; z < per_zone.size(); ++z)
    EXPECT_GT(per_zone[z], 0u) << "no block on a track of zone " << z;
  // The free map's tracks have their zone's sizes.
  const FreeSpaceMap& free = r.disk->free_space();
  for (uint32_t t = 0; t < free.tracks(); ++t) ASSERT_EQ(free.sectors_on(t), kZoneSpt[t / 40]);
  const std::vector<MapEntry> map = r.disk->map();

  // Unclean: the image as the process left it. The window (all 30
  // cylinders) is scanned track by track at each track's own size.
  {
    auto s = std::make_unique<MemoryBackingStore>(r.store->bytes());
    VldDisk o(std::move(s), r.sb);
    const RecoveryReport& rep = o.recovery();
    EXPECT_FALSE(rep.clean);
    EXPECT_EQ(rep.method, "record+window");
    const VldLayout l(r.sb);
    EXPECT_EQ(rep.tracks_scanned, l.tracks - 1u);
    EXPECT_EQ(rep.sectors_read, VldLayout::kRecordSlots + rep.map_sectors_walked +
                                    (l.platter_sectors() - l.track_sectors(0)) +
                                    rep.data_blocks_read * kBlockSectors);
    EXPECT_EQ(o.check_consistency(), "");
    EXPECT_EQ(o.map(), map);
    ASSERT_NO_FATAL_FAILURE(expect_reads_back(o, r.shadow));
  }
  // Clean.
  r.disk->close();
  auto s = std::make_unique<MemoryBackingStore>(r.store->bytes());
  VldDisk c(std::move(s), r.sb);
  EXPECT_TRUE(c.recovery().clean);
  EXPECT_EQ(c.check_consistency(), "");
  ASSERT_NO_FATAL_FAILURE(expect_reads_back(c, r.shadow));
}

// A crash that loses every write after the last sync: what was flushed
// reads back, each later request all old or all new.
TEST(ZonedVld, CrashLosingUnsyncedWritesKeepsFlushedData) {
  Rig r;
  ASSERT_NO_FATAL_FAILURE(fill_and_overwrite(r, 200, 11));
  r.flush();
  r.disk->close();
  const std::vector<std::byte> flushed = r.shadow;
  auto rs = std::make_unique<RecordingStore>(r.store->bytes());
  RecordingStore* rec = rs.get();
  VldDisk d(std::move(rs), r.sb);
  std::mt19937_64 rng(3);
  struct Req {
    uint64_t off;
    std::vector<std::byte> data;
  };
  std::vector<Req> after;
  std::vector<uint64_t> slots(kExportBytes / kBlock / 2);  // 2-block slots, each used once
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  SimTime now = kSimEpoch;
  for (int i = 0; i < 60; ++i) {
    const uint64_t off = slots[i] * 2 * kBlock;
    auto data = pattern(2 * kBlock, 900 + i);
    now = d.write(off, data, false, now).end;
    after.push_back({off, data});
  }
  const size_t point = rec->events();
  std::vector<bool> none(rec->pending_unit_count(point, RecordingStore::Granularity::k4K), false);
  ASSERT_FALSE(none.empty()) << "nothing pending: the test tests nothing";
  auto s = std::make_unique<MemoryBackingStore>(
      rec->materialize(point, none, RecordingStore::Granularity::k4K));
  VldDisk o(std::move(s), r.sb);
  EXPECT_FALSE(o.recovery().clean);
  EXPECT_EQ(o.check_consistency(), "");
  std::vector<std::byte> got(kExportBytes);
  o.read(0, got, kSimEpoch);
  std::set<uint64_t> touched;
  for (const Req& q : after) touched.insert({q.off / kBlock, q.off / kBlock + 1});
  for (uint64_t b = 0; b < kExportBytes / kBlock; ++b) {
    if (touched.count(b)) continue;
    ASSERT_TRUE(std::equal(got.begin() + b * kBlock, got.begin() + (b + 1) * kBlock,
                           flushed.begin() + b * kBlock))
        << "flushed block " << b << " lost";
  }
  for (const Req& q : after) {
    const auto at = got.begin() + static_cast<ptrdiff_t>(q.off);
    const bool is_new = std::equal(q.data.begin(), q.data.end(), at);
    const bool is_old = std::equal(at, at + static_cast<ptrdiff_t>(q.data.size()),
                                   flushed.begin() + static_cast<ptrdiff_t>(q.off));
    EXPECT_TRUE(is_new || is_old) << "request at " << q.off << " torn";
  }
}

// Idle steps compact tracks of every size and a repack packs a track onto
// the reserve; everything reads back, before and after a reopen.
TEST(ZonedVld, CompactionAndRepackKeepEveryByte) {
  Rig r;
  ASSERT_NO_FATAL_FAILURE(fill_and_overwrite(r, 800, 23));
  for (int i = 0; i < 300; ++i) {
    const std::optional<Completion> c = r.disk->idle_step(r.now);
    if (!c) break;
    r.now = c->end;
  }
  ASSERT_EQ(r.disk->check_consistency(), "");
  EXPECT_GT(r.disk->compactor().stats().tracks_compacted, 0u);
  ASSERT_NO_FATAL_FAILURE(expect_reads_back(*r.disk, r.shadow));
  if (r.disk->repack_now(r.now)) {
    ASSERT_EQ(r.disk->check_consistency(), "");
    ASSERT_NO_FATAL_FAILURE(expect_reads_back(*r.disk, r.shadow));
  }
  blocks_per_zone(*r.disk, r.sb);
  r.disk->close();
  VldDisk c(std::make_unique<MemoryBackingStore>(r.store->bytes()), r.sb);
  EXPECT_EQ(c.check_consistency(), "");
  ASSERT_NO_FATAL_FAILURE(expect_reads_back(c, r.shadow));
}

// ------------------------------------------------------------ vld-inspect

TEST(ZonedVld, InspectChecksReportsAndDrawsTheImage) {
  Rig r;
  ASSERT_NO_FATAL_FAILURE(fill_and_overwrite(r, 300, 31));
  r.disk->close();
  const std::string path = testing::TempDir() + "vld_zoned_inspect.img";
  {
    auto f = FileBackingStore::create(path, r.store->size_bytes());
    f->write(0, std::span(r.store->bytes()));
  }
  inspect::OpenedImage img;
  img.path = path;
  img.store = FileBackingStore::open(path, /*readonly=*/true);
  img.sb = r.sb;  // as decoded: the store's first bytes hold no superblock here
  img.file_bytes = r.store->size_bytes();
  inspect::Inspection in(img);
  inspect::inspect(in);
  EXPECT_EQ(in.sectors, VldLayout(r.sb).platter_sectors());
  const inspect::Findings f = inspect::check(in);
  EXPECT_EQ(f.error_count, 0u) << f.errors.dump();
  EXPECT_EQ(f.free_map_agrees, std::optional<bool>(true));
  EXPECT_EQ(f.blocks_checked, kExportBytes / kBlock);
  uint64_t used = 0;
  for (uint32_t u : in.used_sectors) used += u;
  EXPECT_EQ(used + in.free_sectors, in.sectors);

  std::ostringstream text;
  inspect::print_report(in, text);
  EXPECT_NE(text.str().find("3 zones of 256 to 192 sectors/track"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("zones        from cylinder 0: 256 sectors/track, 10: 224, 20: 192"),
            std::string::npos)
      << text.str();
  const nlohmann::json j = inspect::report_json(in);
  EXPECT_EQ(j["geometry"]["zones"].size(), 3u);
  EXPECT_EQ(j["geometry"]["min_sectors_per_track"], 192);

  std::FILE* devnull = std::fopen("/dev/null", "w");
  const inspect::LayoutGrid grid = inspect::build_layout_grid(in, {devnull, false});
  std::fclose(devnull);
  EXPECT_EQ(grid.sectors_per_track, 256u);
  EXPECT_EQ(grid.min_sectors_per_track, 192u);
  EXPECT_EQ(std::accumulate(grid.class_sectors.begin(), grid.class_sectors.end(), uint64_t{0}),
            in.sectors);
  // A band is an angle of every track, whatever its size: no cell empty.
  for (size_t cell = 0; cell < grid.cell_percent.size(); ++cell)
    EXPECT_GT(grid.cell_percent[cell], 0u) << "cell " << cell;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vld
