// FreeSpaceMap: allocation bookkeeping, wrapping runs, empty-track counting,
// first_free_run by hand, and formula (1) of paper 001 (section 2.1,
// appendix A.1) against first_free_run on random tracks.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/vld/free_space_map.h"
#include "core/util/error.h"

namespace vld {
namespace {

// Free sectors of a track, counted bit by bit through is_free().
uint32_t count_free(const FreeSpaceMap& m, uint32_t track) {
  uint32_t n = 0;
  for (uint32_t s = 0; s < m.sectors_on(track); ++s) n += m.is_free(track, s) ? 1 : 0;
  return n;
}

// A track with exactly the given sectors free (the rest allocated).
void leave_free(FreeSpaceMap& m, uint32_t track, const std::vector<uint32_t>& free_sectors) {
  std::vector<bool> keep(m.sectors_on(track), false);
  for (uint32_t s : free_sectors) keep[s] = true;
  for (uint32_t s = 0; s < m.sectors_on(track); ++s)
    if (!keep[s]) m.allocate(track, s, 1);
}

TEST(FreeSpaceMap, StartsEmptyAndCountsAllocations) {
  FreeSpaceMap m(4, 100);
  EXPECT_EQ(m.tracks(), 4u);
  EXPECT_EQ(m.sectors_on(0), 100u);
  EXPECT_EQ(m.free_sectors(), 400u);
  EXPECT_EQ(m.empty_tracks(), 4u);
  for (uint32_t t = 0; t < 4; ++t) {
    EXPECT_TRUE(m.is_empty(t));
    EXPECT_EQ(m.free_sectors(t), 100u);
  }

  m.allocate(1, 10, 8);
  EXPECT_EQ(m.free_sectors(1), 92u);
  EXPECT_EQ(m.free_sectors(), 392u);
  EXPECT_EQ(m.empty_tracks(), 3u);
  EXPECT_FALSE(m.is_empty(1));
  for (uint32_t s = 0; s < 100; ++s) EXPECT_EQ(m.is_free(1, s), s < 10 || s >= 18) << s;
  // Sector 64 and up live in the second word of the bitmap.
  m.allocate(1, 60, 8);
  for (uint32_t s = 58; s < 70; ++s) EXPECT_EQ(m.is_free(1, s), s < 60 || s >= 68) << s;
  EXPECT_EQ(count_free(m, 1), m.free_sectors(1));
  EXPECT_EQ(m.empty_tracks(), 3u);

  m.release(1, 10, 8);
  m.release(1, 60, 8);
  EXPECT_TRUE(m.is_empty(1));
  EXPECT_EQ(m.empty_tracks(), 4u);
  EXPECT_EQ(m.free_sectors(), 400u);
}

TEST(FreeSpaceMap, RunsWrapPastTheEndOfTheTrack) {
  FreeSpaceMap m(2, 72);
  m.allocate(0, 70, 5);  // 70, 71, 0, 1, 2
  for (uint32_t s = 0; s < 72; ++s)
    EXPECT_EQ(m.is_free(0, s), !(s >= 70 || s <= 2)) << s;
  EXPECT_EQ(m.free_sectors(0), 67u);
  EXPECT_TRUE(m.is_empty(1));  // nothing spilled onto the next track
  m.release(0, 70, 5);
  EXPECT_TRUE(m.is_empty(0));
  // A whole-track run from the middle.
  m.allocate(0, 30, 72);
  EXPECT_EQ(m.free_sectors(0), 0u);
  m.release(0, 0, 72);
  EXPECT_EQ(m.free_sectors(0), 72u);
}

TEST(FreeSpaceMap, DoubleAllocationAndDoubleFreeThrow) {
  FreeSpaceMap m(2, 64);
  m.allocate(0, 5, 3);
  EXPECT_THROW(m.allocate(0, 5, 1), Error);
  EXPECT_THROW(m.allocate(0, 7, 1), Error);
  EXPECT_THROW(m.release(0, 8, 1), Error);
  EXPECT_THROW(m.release(1, 0, 1), Error);
  // Out of range is an error too.
  EXPECT_THROW(m.allocate(2, 0, 1), Error);
  EXPECT_THROW(m.allocate(0, 64, 1), Error);
  EXPECT_THROW(m.allocate(0, 0, 65), Error);
  try {
    m.allocate(0, 6, 1);
    ADD_FAILURE() << "double allocation accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EIO);
  }
  EXPECT_EQ(m.free_sectors(0), 61u);
  EXPECT_EQ(m.free_sectors(), 125u);
}

// A refused allocation must leave the map as it was. Here the run's first
// two sectors are free and the third is not: the check fires after the
// first two bits were already flipped.
TEST(FreeSpaceMap, RefusedAllocationLeavesTheMapUnchanged) {
  FreeSpaceMap m(1, 64);
  m.allocate(0, 2, 1);
  EXPECT_THROW(m.allocate(0, 0, 4), Error);
  EXPECT_TRUE(m.is_free(0, 0));
  EXPECT_TRUE(m.is_free(0, 1));
  EXPECT_EQ(m.free_sectors(0), 63u);
  EXPECT_EQ(count_free(m, 0), m.free_sectors(0)) << "bitmap and free count disagree";
  EXPECT_THROW(m.release(0, 1, 3), Error);  // 1 is free: refused at once
  EXPECT_EQ(count_free(m, 0), m.free_sectors(0));
}

TEST(FreeSpaceMap, EmptyTrackCountFollowsReserveAndRelease) {
  FreeSpaceMap m(5, 32);
  m.reserve_track(0);
  EXPECT_EQ(m.empty_tracks(), 4u);
  EXPECT_EQ(m.free_sectors(0), 0u);
  EXPECT_EQ(m.free_sectors(), 4u * 32);
  m.allocate(3, 31, 1);
  m.allocate(3, 0, 1);
  EXPECT_EQ(m.empty_tracks(), 3u);
  m.release(3, 31, 1);
  EXPECT_EQ(m.empty_tracks(), 3u);  // still one sector used
  m.release(3, 0, 1);
  EXPECT_EQ(m.empty_tracks(), 4u);
  // Filling a track completely and emptying it again.
  m.allocate(4, 0, 32);
  EXPECT_EQ(m.empty_tracks(), 3u);
  m.release(4, 16, 32);
  EXPECT_EQ(m.empty_tracks(), 4u);
  // Recount against is_empty().
  uint32_t empties = 0;
  for (uint32_t t = 0; t < 5; ++t) empties += m.is_empty(t) ? 1 : 0;
  EXPECT_EQ(empties, m.empty_tracks());
}

TEST(FreeSpaceMap, FirstFreeRunByHand) {
  FreeSpaceMap m(2, 16);
  // Track 0 free: {3, 4, 5}, {9}, {14, 15, 0, 1} (wrapping).
  leave_free(m, 0, {3, 4, 5, 9, 14, 15, 0, 1});
  auto run = [&](uint32_t from, uint32_t len) { return m.first_free_run(0, from, len); };
  auto expect_run = [&](uint32_t from, uint32_t len, uint32_t sector, uint32_t skipped) {
    auto r = run(from, len);
    ASSERT_TRUE(r.has_value()) << "from " << from << " len " << len;
    EXPECT_EQ(r->sector, sector) << "from " << from << " len " << len;
    EXPECT_EQ(r->skipped, skipped) << "from " << from << " len " << len;
  };
  expect_run(3, 1, 3, 0);    // under the head
  expect_run(2, 1, 3, 1);
  expect_run(6, 1, 9, 3);
  expect_run(10, 1, 14, 4);
  expect_run(2, 3, 3, 1);
  expect_run(4, 3, 14, 10);  // 4,5 too short: next run of 3 is the wrapping one
  expect_run(2, 4, 14, 12);
  expect_run(14, 4, 14, 0);  // wraps from 15 to 0
  expect_run(15, 3, 15, 0);  // 15, 0, 1
  expect_run(15, 4, 14, 15); // 15,0,1 is short: 14 is one sector behind the head
  expect_run(1, 1, 1, 0);
  expect_run(1, 2, 3, 2);
  expect_run(0, 2, 0, 0);
  EXPECT_FALSE(run(0, 5).has_value());  // no run of 5 anywhere
  EXPECT_FALSE(run(0, 0).has_value());  // len 0 is not a run
  EXPECT_FALSE(run(0, 9).has_value());  // more than the 8 free sectors
  EXPECT_FALSE(run(0, 17).has_value()); // longer than the track
  // An empty track: wherever the head is, skipping nothing.
  auto e = m.first_free_run(1, 7, 16);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->sector, 7u);
  EXPECT_EQ(e->skipped, 0u);
  // A full track has nothing.
  m.allocate(1, 0, 16);
  EXPECT_FALSE(m.first_free_run(1, 0, 1).has_value());
  // A single free sector right behind the head: a whole revolution less one.
  m.release(1, 4, 1);
  auto one = m.first_free_run(1, 5, 1);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->sector, 4u);
  EXPECT_EQ(one->skipped, 15u);
}

// Against a brute force: for every start and length, the smallest skip d
// such that sectors from+d .. from+d+len-1 (mod n) are all free.
TEST(FreeSpaceMap, FirstFreeRunMatchesBruteForceOnRandomTracks) {
  std::mt19937_64 rng(20240601);
  const uint32_t n = 100;  // not a multiple of 64: the last word is partial
  for (int trial = 0; trial < 200; ++trial) {
    FreeSpaceMap m(1, n);
    std::bernoulli_distribution used(std::uniform_real_distribution<double>(0.1, 0.95)(rng));
    std::vector<bool> free_v(n, true);
    for (uint32_t s = 0; s < n; ++s)
      if (used(rng)) {
        m.allocate(0, s, 1);
        free_v[s] = false;
      }
    for (uint32_t len : {1u, 2u, 3u, 8u, 9u}) {
      for (uint32_t from = 0; from < n; ++from) {
        std::optional<uint32_t> want;
        for (uint32_t d = 0; d < n && !want; ++d) {
          bool ok = true;
          for (uint32_t i = 0; i < len && ok; ++i) ok = free_v[(from + d + i) % n];
          if (ok) want = d;
        }
        auto got = m.first_free_run(0, from, len);
        ASSERT_EQ(got.has_value(), want.has_value()) << trial << " " << from << " " << len;
        if (!want) continue;
        EXPECT_EQ(got->skipped, *want);
        EXPECT_EQ(got->sector, (from + *want) % n);
      }
    }
  }
}

// Formula (1): on a track of n sectors with a fraction p free, randomly
// placed, the head skips (1-p)n / (1+pn) sectors on average before the first
// free one. Appendix A.1 proves the exact form for k free sectors,
// E(n, k) = (n-k)/(1+k); formula (1) substitutes k = pn. Each layout here has
// exactly k = round(pn) free sectors and is averaged over every start
// position (a uniformly random start), so only the layouts are sampled.
TEST(FreeSpaceMap, Formula1MeanSkipMatchesTheSingleTrackModel) {
  std::mt19937_64 rng(1);
  constexpr int kLayouts = 4000;
  std::printf("\nFormula (1): mean sectors skipped before the first free sector\n");
  std::printf("%5s %5s %4s %10s %10s %10s %8s\n", "n", "p", "k", "(1)", "E(n,k)", "simulated",
              "sim/(1)");
  for (uint32_t n : {72u, 256u}) {
    std::vector<uint32_t> order(n);
    for (int step = 1; step <= 9; ++step) {
      const double p = step / 10.0;
      const uint32_t k = static_cast<uint32_t>(std::lround(p * n));
      const double model = (1 - p) * n / (1 + p * n);
      const double exact = static_cast<double>(n - k) / (1 + k);
      double sum = 0;
      uint64_t samples = 0;
      for (int l = 0; l < kLayouts; ++l) {
        FreeSpaceMap m(1, n);
        std::iota(order.begin(), order.end(), 0u);
        std::shuffle(order.begin(), order.end(), rng);
        for (uint32_t i = k; i < n; ++i) m.allocate(0, order[i], 1);  // n-k used
        ASSERT_EQ(m.free_sectors(0), k);
        for (uint32_t from = 0; from < n; ++from) {
          auto r = m.first_free_run(0, from, 1);
          ASSERT_TRUE(r.has_value());
          ASSERT_TRUE(m.is_free(0, r->sector));
          sum += r->skipped;
          ++samples;
        }
      }
      const double sim = sum / static_cast<double>(samples);
      std::printf("%5u %5.1f %4u %10.4f %10.4f %10.4f %8.4f\n", n, p, k, model, exact, sim,
                  sim / model);
      // Against the exact k-free-sector form: sampling error only.
      EXPECT_NEAR(sim, exact, 0.02 * exact) << "n=" << n << " p=" << p;
      // Against formula (1) itself: also the rounding of pn to k sectors.
      EXPECT_NEAR(sim, model, 0.05 * model) << "n=" << n << " p=" << p;
    }
  }
}

}  // namespace
}  // namespace vld

namespace vld {
namespace {

// The word-at-a-time search agrees with the sector-at-a-time one on every
// start position, length and random layout (including runs that wrap and
// track sizes that are not multiples of 64).
TEST(FreeSpaceMap, FastFirstFreeRunAgreesWithTheSlowOne) {
  std::mt19937_64 rng(11);
  for (uint32_t spt : {8u, 64u, 72u, 256u, 1323u}) {
    for (int layout = 0; layout < 40; ++layout) {
      FreeSpaceMap m(1, spt);
      std::bernoulli_distribution used(std::uniform_real_distribution<double>(0, 1)(rng));
      for (uint32_t s = 0; s < spt; ++s)
        if (used(rng)) m.allocate(0, s, 1);
      for (uint32_t len : {1u, 2u, 8u, 9u, 17u}) {
        for (uint32_t from = 0; from < spt; from += (spt > 100 ? 7 : 1)) {
          auto fast = m.first_free_run(0, from, len);
          auto slow = m.first_free_run_slow(0, from, len);
          ASSERT_EQ(fast.has_value(), slow.has_value())
              << "spt " << spt << " len " << len << " from " << from;
          if (fast) {
            EXPECT_EQ(fast->skipped, slow->skipped) << "spt " << spt << " len " << len << " from " << from;
            EXPECT_EQ(fast->sector, slow->sector) << "spt " << spt << " len " << len << " from " << from;
          }
        }
      }
    }
  }
}

// count_empty and any_empty agree with is_empty over every range, as tracks fill and
// empty again (130 tracks: ranges that cross words and the last, partial one).
TEST(FreeSpaceMap, CountEmptyFollowsEveryChange) {
  FreeSpaceMap m(130, 8);
  std::vector<uint32_t> used_at(130);  // the one sector a non-empty track uses
  std::mt19937_64 rng(13);
  for (int step = 0; step < 400; ++step) {
    const uint32_t t = static_cast<uint32_t>(rng() % 130);
    if (m.is_empty(t)) {
      used_at[t] = static_cast<uint32_t>(rng() % 8);
      m.allocate(t, used_at[t], 1);
    } else {
      m.release(t, used_at[t], 1);
    }
    const uint32_t first = static_cast<uint32_t>(rng() % 130);
    const uint32_t count = static_cast<uint32_t>(rng() % 70);
    uint32_t expect = 0;
    for (uint32_t k = first; k < std::min(first + count, 130u); ++k) expect += m.is_empty(k);
    ASSERT_EQ(m.count_empty(first, count), expect) << "step " << step;
    ASSERT_EQ(m.any_empty(first, count), expect > 0) << "step " << step;
  }
}

// free_sectors_in reads whole groups of tracks from kept sums: it must
// agree with the sum of free_sectors over the same tracks, groups cut at
// either end or not.
TEST(FreeSpaceMap, FreeSectorsInFollowsEveryChange) {
  const uint32_t tracks = 300, spt = 12;
  FreeSpaceMap m(tracks, spt);
  std::mt19937_64 rng(17);
  for (int step = 0; step < 600; ++step) {
    const uint32_t t = static_cast<uint32_t>(rng() % tracks);
    const uint32_t s = static_cast<uint32_t>(rng() % spt);
    if (m.is_free(t, s)) m.allocate(t, s, 1);
    else m.release(t, s, 1);
    const uint32_t first = static_cast<uint32_t>(rng() % tracks);
    const uint32_t count = static_cast<uint32_t>(rng() % (tracks - first + 1));
    uint64_t expect = 0;
    for (uint32_t k = first; k < first + count; ++k) expect += m.free_sectors(k);
    ASSERT_EQ(m.free_sectors_in(first, count), expect) << "step " << step;
  }
  EXPECT_EQ(m.free_sectors_in(0, tracks), m.free_sectors());
}

// VldDisk's window: two ranges (it wraps), moved now and then, summed as
// allocations and releases of several sectors come and go, some outside.
TEST(FreeSpaceMap, WatchedFreeSectorsFollowEveryChangeAndEveryMove) {
  const uint32_t tracks = 300, spt = 12;
  FreeSpaceMap m(tracks, spt);
  std::mt19937_64 rng(23);
  std::array<FreeSpaceMap::TrackRange, 2> ranges{{{250, 50}, {0, 30}}};
  m.watch(ranges);
  uint64_t outside_changes = 0;
  for (int step = 0; step < 3000; ++step) {
    if (step % 500 == 499) {  // the window moves
      const uint32_t first = static_cast<uint32_t>(rng() % tracks);
      const uint32_t width = 1 + static_cast<uint32_t>(rng() % 80);
      const uint32_t before_wrap = std::min(width, tracks - first);
      ranges = {{{first, before_wrap}, {0, width - before_wrap}}};
      m.watch(ranges);
    }
    const uint32_t t = static_cast<uint32_t>(rng() % tracks);
    const uint32_t s = static_cast<uint32_t>(rng() % spt);
    const uint32_t n = 1 + static_cast<uint32_t>(rng() % 3);
    bool all_free = true, all_used = true;
    for (uint32_t i = 0; i < n; ++i) {
      if (m.is_free(t, (s + i) % spt)) all_used = false;
      else all_free = false;
    }
    if (all_free) m.allocate(t, s, n);
    else if (all_used) m.release(t, s, n);
    else continue;
    if (t - ranges[0].first >= ranges[0].count && t - ranges[1].first >= ranges[1].count)
      ++outside_changes;
    uint64_t expect = 0;
    for (const FreeSpaceMap::TrackRange& r : ranges) expect += m.free_sectors_in(r.first, r.count);
    ASSERT_EQ(m.watched_free_sectors(), expect) << "step " << step;
  }
  EXPECT_GT(outside_changes, 100u);  // changes the watch must ignore were made
}

// EagerAllocator keeps its nearest empty track while empty_version()
// stays: it must change with every change of the set of empty tracks, and
// no two maps may share one.
TEST(FreeSpaceMap, EmptyVersionNamesTheSetOfEmptyTracks) {
  FreeSpaceMap m(4, 8), other(4, 8);
  EXPECT_NE(m.empty_version(), other.empty_version());
  uint64_t v = m.empty_version();
  m.allocate(1, 2, 1);  // track 1 stops being empty
  EXPECT_NE(m.empty_version(), v);
  v = m.empty_version();
  m.allocate(1, 5, 2);  // still not empty: the same set
  m.release(1, 5, 2);
  EXPECT_EQ(m.empty_version(), v);
  m.release(1, 2, 1);  // empty again: the first set, but a new version
  EXPECT_NE(m.empty_version(), v);
  const FreeSpaceMap copy = m;
  EXPECT_EQ(copy.empty_version(), m.empty_version());
}

// allocate and release work a word at a time: against a sector-by-sector
// model, on a track whose runs wrap and cross word boundaries, a call is
// refused exactly when one of its sectors is in the wrong state, and a
// refused call changes nothing.
TEST(FreeSpaceMap, RunsFollowASectorBySectorModel) {
  const uint32_t spt = 150;
  FreeSpaceMap m(1, spt);
  std::vector<bool> used(spt, false);
  std::mt19937_64 rng(23);
  for (int step = 0; step < 3000; ++step) {
    const uint32_t sector = static_cast<uint32_t>(rng() % spt);
    const uint32_t count = static_cast<uint32_t>(rng() % 70) + 1;
    const bool allocate = rng() % 2 == 0;
    bool ok = true;
    for (uint32_t i = 0; i < count; ++i) ok = ok && used[(sector + i) % spt] != allocate;
    if (ok) {
      if (allocate) m.allocate(0, sector, count);
      else m.release(0, sector, count);
      for (uint32_t i = 0; i < count; ++i) used[(sector + i) % spt] = allocate;
    } else {
      EXPECT_THROW(allocate ? m.allocate(0, sector, count) : m.release(0, sector, count), Error)
          << "step " << step;
    }
    for (uint32_t s = 0; s < spt; ++s) ASSERT_EQ(m.is_free(0, s), !used[s]) << "step " << step;
    ASSERT_EQ(m.free_sectors(0), count_free(m, 0));
  }
}

// A track's start bitmaps follow small changes near each other (patched in
// place) and far apart (rebuilt): after every allocation or release of a
// few sectors, the runs of every length agree with the sector-by-sector
// search, from every sector. Runs that wrap past the track's end, and
// tracks whose size is not a multiple of 64, included.
TEST(FreeSpaceMap, StartBitmapsFollowSmallChanges) {
  std::mt19937_64 rng(29);
  for (uint32_t spt : {24u, 72u, 150u, 256u}) {
    FreeSpaceMap m(1, spt);
    std::vector<bool> used(spt, false);
    uint32_t near = 0;  // the last change's first sector
    for (int step = 0; step < 1500; ++step) {
      // Mostly a block or a map sector near the last change, as a write's
      // trial plans make them; now and then anywhere.
      const uint32_t sector = rng() % 8 == 0 ? static_cast<uint32_t>(rng() % spt)
                                             : (near + static_cast<uint32_t>(rng() % 24)) % spt;
      const uint32_t count = rng() % 3 == 0 ? 1 : static_cast<uint32_t>(rng() % 12) + 1;
      const bool allocate = rng() % 2 == 0;
      bool ok = true;
      for (uint32_t i = 0; i < count; ++i) ok = ok && used[(sector + i) % spt] != allocate;
      if (!ok) continue;
      if (allocate) m.allocate(0, sector, count);
      else m.release(0, sector, count);
      for (uint32_t i = 0; i < count; ++i) used[(sector + i) % spt] = allocate;
      near = sector;
      for (uint32_t len : {2u, 8u, 9u, 17u, 40u}) {
        for (uint32_t from = 0; from < spt; ++from) {
          auto fast = m.first_free_run(0, from, len);
          auto slow = m.first_free_run_slow(0, from, len);
          ASSERT_EQ(fast.has_value(), slow.has_value())
              << "spt " << spt << " step " << step << " len " << len << " from " << from;
          if (fast) {
            ASSERT_EQ(fast->sector, slow->sector) << "spt " << spt << " step " << step;
          }
        }
      }
    }
  }
}

// A search bounded by max_skipped (EagerAllocator::nearest, once it has a
// best run) finds the same run when it is within the bound, and nothing
// when it is not.
TEST(FreeSpaceMap, FirstFreeRunStopsAtMaxSkipped) {
  std::mt19937_64 rng(12);
  for (uint32_t spt : {64u, 72u, 256u}) {
    for (int layout = 0; layout < 20; ++layout) {
      FreeSpaceMap m(1, spt);
      std::bernoulli_distribution used(std::uniform_real_distribution<double>(0, 1)(rng));
      for (uint32_t s = 0; s < spt; ++s)
        if (used(rng)) m.allocate(0, s, 1);
      for (uint32_t len : {1u, 8u, 9u}) {
        for (uint32_t from = 0; from < spt; from += 5) {
          auto all = m.first_free_run(0, from, len);
          for (uint32_t max_skipped : {0u, 1u, 7u, 30u, spt - 1}) {
            auto bounded = m.first_free_run(0, from, len, max_skipped);
            const bool within = all && all->skipped <= max_skipped;
            ASSERT_EQ(bounded.has_value(), within)
                << "spt " << spt << " len " << len << " from " << from << " max " << max_skipped;
            if (within) {
              EXPECT_EQ(bounded->sector, all->sector);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace vld

namespace vld {
namespace {

TEST(FreeSpaceMap, LongestFreeRunIsKeptUpToDate) {
  std::mt19937_64 rng(5);
  FreeSpaceMap m(1, 72);
  EXPECT_EQ(m.longest_free_run(0), 72u);
  for (int step = 0; step < 3000; ++step) {
    uint32_t s = static_cast<uint32_t>(rng() % 72);
    if (m.is_free(0, s)) m.allocate(0, s, 1);
    else m.release(0, s, 1);
    // By brute force: the longest run of free sectors going round the track.
    uint32_t best = 0;
    for (uint32_t start = 0; start < 72; ++start) {
      uint32_t n = 0;
      while (n < 72 && m.is_free(0, (start + n) % 72)) ++n;
      best = std::max(best, n);
    }
    ASSERT_EQ(m.longest_free_run(0), best) << "step " << step;
  }
}

}  // namespace
}  // namespace vld

namespace vld {
namespace {

// holes_for is cached per track: after every change, and when asked for
// another length, it still equals a count by brute force (runs of free
// sectors going round the track, each holding floor(run / len) pieces).
TEST(FreeSpaceMap, HolesForFollowsEveryChange) {
  std::mt19937_64 rng(7);
  FreeSpaceMap m(1, 72);
  auto brute = [&](uint32_t len) {
    if (m.free_sectors(0) == 72) return 72 / len;
    uint32_t start = 0;
    while (m.is_free(0, start)) ++start;  // a used sector: no run wraps past it
    uint32_t holes = 0, run = 0;
    for (uint32_t k = 1; k <= 72; ++k) {
      if (m.is_free(0, (start + k) % 72)) {
        ++run;
      } else {
        holes += run / len;
        run = 0;
      }
    }
    return holes + run / len;
  };
  EXPECT_EQ(m.holes_for(0, 8), 9u);
  for (int step = 0; step < 3000; ++step) {
    uint32_t s = static_cast<uint32_t>(rng() % 72);
    if (m.is_free(0, s)) m.allocate(0, s, 1);
    else m.release(0, s, 1);
    ASSERT_EQ(m.holes_for(0, 8), brute(8)) << "step " << step;
    if (step % 7 == 0) {
      ASSERT_EQ(m.holes_for(0, 3), brute(3)) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace vld

namespace vld {
namespace {

// Tracks of different sizes (a zoned drive): each track's runs wrap at its
// own end, the bits past a short track's end are never free sectors, and
// the cached answers (longest run, holes, first run) are each track's own.
// 72 and 130 leave part of a bitmap word unused; 200 and 256 span words.
TEST(FreeSpaceMap, TracksOfDifferentSizesWrapAtTheirOwnEnds) {
  const std::vector<uint32_t> sizes = {256, 200, 72, 130};
  FreeSpaceMap m(sizes);
  EXPECT_EQ(m.tracks(), 4u);
  EXPECT_EQ(m.free_sectors(), 658u);
  EXPECT_EQ(m.empty_tracks(), 4u);
  for (uint32_t t = 0; t < 4; ++t) {
    SCOPED_TRACE("track " + std::to_string(t));
    const uint32_t spt = sizes[t];
    EXPECT_EQ(m.sectors_on(t), spt);
    EXPECT_EQ(m.longest_free_run(t), spt);
    EXPECT_EQ(m.holes_for(t, 8), spt / 8);
    // A run over the track's end: its last three sectors and its first three.
    m.allocate(t, spt - 3, 6);
    for (uint32_t s = 0; s < spt; ++s) EXPECT_EQ(m.is_free(t, s), s >= 3 && s < spt - 3) << s;
    EXPECT_EQ(m.free_sectors(t), spt - 6);
    EXPECT_EQ(m.longest_free_run(t), spt - 6);
    EXPECT_EQ(m.holes_for(t, 8), (spt - 6) / 8);
    m.release(t, spt - 3, 6);
    EXPECT_TRUE(m.is_empty(t));
    // The middle taken: the one free run is the six sectors round the end.
    m.allocate(t, 3, spt - 6);
    EXPECT_EQ(m.longest_free_run(t), 6u);
    EXPECT_EQ(m.holes_for(t, 6), 1u);
    EXPECT_EQ(m.holes_for(t, 3), 2u);
    const auto run = m.first_free_run(t, 0, 6);
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->sector, spt - 3);
    EXPECT_EQ(run->skipped, spt - 3);
    EXPECT_FALSE(m.first_free_run(t, 0, 7).has_value());
    // Out of the track's range, though within the longest track's.
    EXPECT_THROW(m.allocate(t, spt, 1), Error);
    EXPECT_THROW(m.allocate(t, 0, spt + 1), Error);
  }
  EXPECT_EQ(m.free_sectors(), 4u * 6);
  EXPECT_EQ(m.empty_tracks(), 0u);
  // Reserving a short track takes its sectors, no more.
  m.release(2, 3, 66);
  EXPECT_TRUE(m.is_empty(2));
  EXPECT_EQ(m.empty_tracks(), 1u);
  m.reserve_track(2);
  EXPECT_EQ(m.free_sectors(2), 0u);
  EXPECT_EQ(m.free_sectors(), 3u * 6);
  EXPECT_EQ(m.longest_free_run(2), 0u);
}

// The fast search against the slow one on tracks of mixed sizes side by
// side, the longest run against brute force.
TEST(FreeSpaceMap, MixedTrackSizesFastSearchAgreesWithTheSlowOne) {
  const std::vector<uint32_t> sizes = {256, 224, 192, 72, 65, 64, 130};
  FreeSpaceMap m(sizes);
  std::mt19937_64 rng(29);
  for (uint32_t t = 0; t < sizes.size(); ++t)
    for (uint32_t s = 0; s < sizes[t]; ++s)
      if (rng() % 3 == 0) m.allocate(t, s, 1);
  for (uint32_t t = 0; t < sizes.size(); ++t) {
    const uint32_t spt = sizes[t];
    uint32_t best = 0;
    for (uint32_t start = 0; start < spt; ++start) {
      uint32_t n = 0;
      while (n < spt && m.is_free(t, (start + n) % spt)) ++n;
      best = std::max(best, n);
    }
    EXPECT_EQ(m.longest_free_run(t), best) << "track " << t;
    for (uint32_t len : {1u, 2u, 5u, 8u}) {
      for (uint32_t from = 0; from < spt; ++from) {
        auto fast = m.first_free_run(t, from, len);
        auto slow = m.first_free_run_slow(t, from, len);
        ASSERT_EQ(fast.has_value(), slow.has_value()) << t << " " << len << " " << from;
        if (!fast) continue;
        EXPECT_EQ(fast->sector, slow->sector) << t << " " << len << " " << from;
        EXPECT_EQ(fast->skipped, slow->skipped) << t << " " << len << " " << from;
        EXPECT_LT(fast->sector, spt);
      }
    }
  }
}

}  // namespace
}  // namespace vld
