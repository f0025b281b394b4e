// Delta checkpoints (core/vld/vld_disk_checkpoint.cc): what recovery after
// a crash reads is bounded by checkpoint_every, not by the writes since the
// last clean close.
//
//   VldCheckpoint.UncleanOpenWalksAtMostTheBound
//       random single-block writes, the image taken as kill -9 leaves it at
//       many points: every open walks at most checkpoint_every scattered map
//       sectors (plus one request's group), scans at most the window, and
//       rebuilds the map exactly. Without delta checkpoints the same
//       workload walks many more: the bound is the mechanism's doing.
//   VldCheckpoint.ADeltaIsSpreadOverTheRequestsAfterIt
//       no request writes more than one group of a delta (plus what was
//       scattered meanwhile, with the last), and crashes between the
//       groups rebuild the map exactly.
//   VldCheckpoint.RotationRewritesEveryPieceInTurn
//       every live piece is rewritten within a bounded number of deltas,
//       which is what keeps the live map sectors in recent checkpoint groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "core/vld/vld_disk.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint32_t kWindowCylinders = 2;

std::unique_ptr<MemoryBackingStore> formatted(const Superblock& sb) {
  auto s = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  auto bytes = encode_superblock(sb);
  s->write(0, std::as_bytes(std::span(bytes)));
  VldDisk::format(*s, sb);
  return s;
}

// A 32 MiB st19101 disk (256 map pieces), written one random block at a
// time, a flush after each (fio --fsync=1).
struct Workload {
  explicit Workload(uint32_t checkpoint_every, uint32_t group_pieces = 0)
      : sb(test::st19101_superblock(DiskMode::kVld, 32 << 20)) {
    auto s = formatted(sb);
    store = s.get();
    VldOptions o;
    o.checkpoint_every_map_sectors = checkpoint_every;
    o.checkpoint_group_pieces = group_pieces;
    o.compactor.enabled = false;
    // A narrow window moves on (a record) every few dozen writes, as a
    // 32-cylinder one does on a big disk: the record's tree is then what
    // recovery walks, and what it finds since is in the window it scans.
    o.window_cylinders = kWindowCylinders;
    disk = std::make_unique<VldDisk>(std::move(s), sb, o);
  }
  void write_one(std::mt19937_64& rng) {
    std::vector<std::byte> data(kBlock, std::byte(rng() & 0xff));
    disk->write((rng() % (sb.export_bytes / kBlock)) * kBlock, data, false, now);
    now = disk->flush(now).end;
  }
  Superblock sb;
  MemoryBackingStore* store;
  std::unique_ptr<VldDisk> disk;
  SimTime now{};
};

// What opening the image as it is now reads (the disk never closed: kill -9).
RecoveryReport open_crashed(const Workload& w, const std::vector<MapEntry>& want_map) {
  VldDisk reopened(std::make_unique<MemoryBackingStore>(w.store->bytes()), w.sb);
  EXPECT_FALSE(reopened.recovery().clean);
  EXPECT_EQ(reopened.map(), want_map) << "the map was not rebuilt exactly";
  EXPECT_EQ(reopened.check_consistency(), "");
  return reopened.recovery();
}

// The largest scattered walk over crashes after every `every` of `writes`.
uint64_t worst_scattered_walk(uint32_t checkpoint_every, uint64_t writes, uint64_t every,
                              uint64_t* deltas) {
  Workload w(checkpoint_every);
  std::mt19937_64 rng(17);
  const uint64_t window_tracks =
      uint64_t{kWindowCylinders} * w.sb.geometry.tracks_per_cylinder;
  uint64_t worst = 0;
  for (uint64_t i = 1; i <= writes; ++i) {
    w.write_one(rng);
    if (i % every != 0) continue;
    const RecoveryReport rep = open_crashed(w, w.disk->map());
    EXPECT_LE(rep.tracks_scanned, window_tracks);
    EXPECT_LE(rep.map_sectors_walked, w.disk->virtual_log().live_nodes());
    worst = std::max(worst, rep.scattered_walked);
  }
  *deltas = w.disk->vld_stats().delta_checkpoints;
  return worst;
}

TEST(VldCheckpoint, UncleanOpenWalksAtMostTheBound) {
  // One write changes one piece; a relay or two may join its group.
  constexpr uint32_t kEvery = 24;
  constexpr uint64_t kOneGroup = 4;
  uint64_t deltas = 0;
  const uint64_t bounded = worst_scattered_walk(kEvery, 1200, 37, &deltas);
  std::printf("checkpoint_every=%u: %llu delta checkpoints, at most %llu scattered map "
              "sectors walked\n", kEvery, static_cast<unsigned long long>(deltas),
              static_cast<unsigned long long>(bounded));
  EXPECT_GE(deltas, 10u) << "precondition: the workload must make delta checkpoints";
  EXPECT_LE(bounded, kEvery + kOneGroup);
  EXPECT_GT(bounded, 0u) << "precondition: some crash must find scattered map sectors";

  uint64_t none = 0;
  const uint64_t unbounded = worst_scattered_walk(0, 1200, 37, &none);
  std::printf("checkpoint_every=0: at most %llu scattered map sectors walked\n",
              static_cast<unsigned long long>(unbounded));
  EXPECT_EQ(none, 0u);
  EXPECT_GT(unbounded, 4 * (kEvery + kOneGroup)) << "without deltas the walk is not bounded";
}

// A delta is written a group per request, not all on the path of the
// request that made it due: no request waits for more than one group (and,
// with the last, the few pieces scattered meanwhile), and a crash between
// the groups recovers the map exactly.
TEST(VldCheckpoint, ADeltaIsSpreadOverTheRequestsAfterIt) {
  constexpr uint32_t kEvery = 60, kGroup = 8;
  // The most map sectors one write and its flush wrote, with deltas in
  // groups of group_pieces (0: a track's worth, 256 here: all at once).
  auto most_per_request = [](uint32_t group_pieces, bool crash_each) {
    Workload w(kEvery, group_pieces);
    std::mt19937_64 rng(29);
    uint64_t most = 0;
    for (int i = 0; i < 600; ++i) {
      const uint64_t before = w.disk->vld_stats().map_sectors_written;
      w.write_one(rng);
      most = std::max(most, w.disk->vld_stats().map_sectors_written - before);
      if (crash_each && i % 7 == 0) open_crashed(w, w.disk->map());
    }
    EXPECT_GE(w.disk->vld_stats().delta_checkpoints, 3u) << "precondition: deltas were made";
    return most;
  };
  const uint64_t whole = most_per_request(0, false);
  const uint64_t spread = most_per_request(kGroup, true);
  std::printf("most map sectors one request wrote: %llu with each delta at once, %llu spread in "
              "groups of %u\n", static_cast<unsigned long long>(whole),
              static_cast<unsigned long long>(spread), kGroup);
  EXPECT_GE(whole, kEvery) << "precondition: a delta at once is one request's";
  // A group, the pieces scattered while the delta went on (one or two a
  // request, about 90 / 8 requests), the request's own group and relays.
  EXPECT_LE(spread, kGroup + 2 * 12 + 4);
}

TEST(VldCheckpoint, RotationRewritesEveryPieceInTurn) {
  // Each delta rewrites half as many older pieces as were scattered, so
  // the oldest live map sector is never more than about one turn old:
  // after writes that scatter 2 x 256 pieces, every piece's live version
  // is newer than the first delta.
  Workload w(16);
  std::mt19937_64 rng(3);
  // Every piece written once, then the same few blocks over and over:
  // only the rotation rewrites the pieces those writes leave alone.
  for (uint64_t b = 0; b < w.sb.export_bytes / kBlock; b += kEntriesPerPiece) {
    std::vector<std::byte> data(kBlock, std::byte{1});
    w.disk->write(b * kBlock, data, false, w.now);
  }
  const uint64_t first_delta_seq = w.disk->virtual_log().next_seq();
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::byte> data(kBlock, std::byte(i & 0xff));
    w.disk->write((rng() % 64) * kEntriesPerPiece * kBlock % w.sb.export_bytes, data, false, w.now);
  }
  const VirtualLog& log = w.disk->virtual_log();
  for (uint32_t p = 0; p < log.pieces(); ++p)
    ASSERT_GT(log.node(p).seq, first_delta_seq) << "piece " << p << " was never rewritten";
}

}  // namespace
}  // namespace vld
