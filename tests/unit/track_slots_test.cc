// TrackSlots (core/vld/track_slots.h): the blocks on each track, one slot
// per block-sized piece of it, against a plain record of where each block
// starts, through random moves that include blocks wrapping past a track's
// last sector, on tracks of different sizes (a zoned drive's).
#include "core/vld/track_slots.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

namespace vld {
namespace {

constexpr uint32_t kBlockSectors = 8;
const std::vector<uint32_t> kTrackSectors = {64, 61, 57, 17, 8, 9};

// Where blocks start, and which sectors they cover, as the map and the
// free-space map would say.
struct Truth {
  std::vector<std::optional<TrackSlots::Where>> where;
  std::vector<std::vector<bool>> used;  // per track, per sector

  explicit Truth(uint32_t blocks) : where(blocks) {
    for (uint32_t spt : kTrackSectors) used.emplace_back(spt, false);
  }
  bool fits(uint32_t track, uint32_t sector) const {
    const uint32_t spt = static_cast<uint32_t>(used[track].size());
    for (uint32_t i = 0; i < kBlockSectors; ++i)
      if (used[track][(sector + i) % spt]) return false;
    return true;
  }
  void mark(uint32_t track, uint32_t sector, bool on) {
    const uint32_t spt = static_cast<uint32_t>(used[track].size());
    for (uint32_t i = 0; i < kBlockSectors; ++i) used[track][(sector + i) % spt] = on;
  }
};

TrackSlots make_slots() {
  return TrackSlots(static_cast<uint32_t>(kTrackSectors.size()), kBlockSectors,
                    [](uint32_t t) { return kTrackSectors[t]; });
}

TEST(TrackSlots, FollowsRandomMovesIncludingBlocksThatWrap) {
  constexpr uint32_t kBlocks = 30;
  TrackSlots slots = make_slots();
  Truth truth(kBlocks);
  auto where = [&](uint32_t b) { return truth.where[b]; };
  std::mt19937_64 rng(11);
  uint64_t wrapped = 0;
  for (int step = 0; step < 5000; ++step) {
    const uint32_t b = static_cast<uint32_t>(rng() % kBlocks);
    if (const auto w = truth.where[b]) {
      slots.remove(w->track, w->sector, b);
      truth.mark(w->track, w->sector, false);
      truth.where[b].reset();
    }
    if (rng() % 4 != 0) {  // a move; otherwise a trim
      const uint32_t t = static_cast<uint32_t>(rng() % kTrackSectors.size());
      const uint32_t s = static_cast<uint32_t>(rng() % kTrackSectors[t]);
      if (kTrackSectors[t] >= kBlockSectors && truth.fits(t, s)) {
        slots.add(t, s, b);
        truth.mark(t, s, true);
        truth.where[b] = TrackSlots::Where{t, s};
        if (s + kBlockSectors > kTrackSectors[t]) ++wrapped;
      }
    }
    ASSERT_EQ(slots.check(kBlocks, where), "") << "step " << step;
  }
  EXPECT_GT(wrapped, 100u);  // the wrapping case was exercised
  for (uint32_t t = 0; t < kTrackSectors.size(); ++t) {
    std::vector<uint32_t> on;
    slots.items(t, &on);
    EXPECT_EQ(on.size(), slots.count(t));
    // In the order of their sectors.
    EXPECT_TRUE(std::is_sorted(on.begin(), on.end(), [&](uint32_t x, uint32_t y) {
      return truth.where[x]->sector < truth.where[y]->sector;
    })) << "track " << t;
  }
}

TEST(TrackSlots, CheckFindsABlockInTheWrongPlaceOrMissing) {
  TrackSlots slots = make_slots();
  Truth truth(4);
  auto where = [&](uint32_t b) { return truth.where[b]; };
  slots.add(0, 3, 1);
  truth.where[1] = TrackSlots::Where{0, 3};
  slots.add(2, 50, 2);  // wraps: sectors 50-56 of 57, then 0
  truth.where[2] = TrackSlots::Where{2, 50};
  ASSERT_EQ(slots.check(4, where), "");

  truth.where[1] = TrackSlots::Where{0, 11};  // the next slot of the same track
  EXPECT_NE(slots.check(4, where), "");
  truth.where[1] = TrackSlots::Where{1, 3};  // the same sector of another track
  EXPECT_NE(slots.check(4, where), "");
  truth.where[1] = TrackSlots::Where{0, 3};
  truth.where[3] = TrackSlots::Where{4, 0};  // mapped, but in no slot
  EXPECT_NE(slots.check(4, where), "");
  truth.where[3].reset();
  ASSERT_EQ(slots.check(4, where), "");
}

TEST(TrackSlots, MemoryIsOneSlotPerBlockSizedPieceOfEachTrack) {
  const TrackSlots slots = make_slots();
  uint64_t pieces = 0;
  for (uint32_t spt : kTrackSectors) pieces += (spt + kBlockSectors - 1) / kBlockSectors;
  // Slots, plus a first slot and a count per track (and the end).
  EXPECT_EQ(slots.memory_bytes(), 4 * (pieces + 2 * kTrackSectors.size() + 1));
}

}  // namespace
}  // namespace vld
