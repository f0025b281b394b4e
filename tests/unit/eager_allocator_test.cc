// EagerAllocator: hand-computed locate times, the single-cylinder model of
// paper 001 (section 2.2, formulas (2)-(4), Table 1) against nearest() on
// both presets, the fill-threshold policy, and the one-run plan for a
// data block with its map sector.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/vld/eager_allocator.h"
#include "core/vld/free_space_map.h"
#include "geometry/drive_model.h"
#include "geometry/presets.h"

namespace vld {
namespace {

DriveGeometry preset(const char* name) {
  auto g = find_preset(name);
  EXPECT_TRUE(g.has_value()) << name;
  return *g;
}

SimTime at_ns(int64_t ns) { return kSimEpoch + SimDuration{ns}; }

// ceil(slots * revolution / spt): the time for `slots` sector slots to pass,
// as DriveModel rounds it.
int64_t slots_ns(const DriveGeometry& g, int64_t slots) {
  const int64_t rev = g.revolution().count(), spt = g.sectors_per_track;
  return (slots * rev + spt - 1) / spt;
}

// Allocates every sector of `track` except `free_slots`, given as angular
// slots of cylinder `cyl`, head `head` (so tests can think in rotational
// positions whatever the skew).
void leave_free_slots(FreeSpaceMap& m, const DriveGeometry& g, uint32_t cyl, uint32_t head,
                      const std::vector<uint32_t>& free_slots) {
  const uint32_t spt = g.sectors_per_track;
  const uint32_t track = cyl * g.tracks_per_cylinder + head;
  std::vector<bool> keep(spt, false);
  for (uint32_t slot : free_slots) {
    uint32_t offset = g.angular_slot(Chs{cyl, head, 0});
    keep[(slot + spt - offset) % spt] = true;
  }
  for (uint32_t s = 0; s < spt; ++s)
    if (!keep[s]) m.allocate(track, s, 1);
}

std::vector<uint32_t> range(uint32_t first, uint32_t count) {
  std::vector<uint32_t> v(count);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(CylinderWindow, ContainsWraps) {
  CylinderWindow w{8, 4};  // 8, 9, 0, 1 of 10
  for (uint32_t c = 0; c < 10; ++c)
    EXPECT_EQ(w.contains(c, 10), c == 8 || c == 9 || c == 0 || c == 1) << c;
  CylinderWindow all{3, 10};
  for (uint32_t c = 0; c < 10; ++c) EXPECT_TRUE(all.contains(c, 10));
}

// ----------------------------------------------------------- by hand

TEST(EagerAllocator, NearestWaitsForTheFreeSectorOrSwitchesHeads) {
  const DriveGeometry g = preset("hp97560");  // 72 sectors, s = 2.5 ms
  ASSERT_EQ(g.track_skew_sectors, 13u);       // ceil(2.5 ms / 208.2 us)
  DriveModel drive(g, 1);
  FreeSpaceMap m(g.tracks_per_cylinder, g.sectors_per_track);
  for (uint32_t t = 0; t < g.tracks_per_cylinder; ++t) m.allocate(t, 0, g.sectors_per_track);
  EagerAllocator alloc(drive, m, AllocatorPolicy{});
  const CylinderWindow win{0, 1};
  EXPECT_FALSE(alloc.nearest(1, HeadPosition{0, 0}, kSimEpoch, win).has_value());

  // Sector 10 of the head's track: 10 slots from time zero.
  m.release(0, 10, 1);
  auto c = alloc.nearest(1, HeadPosition{0, 0}, kSimEpoch, win);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->extent, (Extent{0, 10, 1}));
  EXPECT_EQ(c->locate.count(), slots_ns(g, 10));
  // Half a sector later it is still 9.5 slots away.
  const int64_t half = slots_ns(g, 1) / 2;
  c = alloc.nearest(1, HeadPosition{0, 0}, at_ns(half), win);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->locate.count(), slots_ns(g, 10) - half);
  // Just after it passed: a revolution less a little.
  c = alloc.nearest(1, HeadPosition{0, 0}, at_ns(slots_ns(g, 11)), win);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->locate.count(), slots_ns(g, 72 + 10) - slots_ns(g, 11));

  // Sector 0 of head 5 passes at slot 5 * 13 = 65; a head switch arrives at
  // 12.006 sectors, so from time 11 slots on track 0 it wins over sector 10
  // (a revolution away).
  m.release(5, 0, 1);
  c = alloc.nearest(1, HeadPosition{0, 0}, at_ns(slots_ns(g, 11)), win);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->extent, (Extent{5, 0, 1}));
  EXPECT_EQ(c->locate.count(), slots_ns(g, 65) - slots_ns(g, 11));
  // From time zero, sector 10 of the head's own track is sooner.
  c = alloc.nearest(1, HeadPosition{0, 0}, kSimEpoch, win);
  EXPECT_EQ(c->extent, (Extent{0, 10, 1}));
  // Track skew: sector 0 of head 1 comes 13 slots after sector 0 of head 0,
  // just after a head switch from time zero lands.
  m.allocate(5, 0, 1);
  m.allocate(0, 10, 1);
  m.release(1, 0, 1);
  c = alloc.nearest(1, HeadPosition{0, 0}, kSimEpoch, win);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->extent, (Extent{1, 0, 1}));
  EXPECT_EQ(c->locate.count(), slots_ns(g, 13));
  // nearest() allocates nothing.
  EXPECT_EQ(m.free_sectors(), 1u);
}

// A one-cylinder seek costs the same either way, so a free sector on the
// cylinder behind the head that passes sooner wins over one ahead; with
// one_way_seeks (section 4.2's sweep) only the one ahead is a candidate.
// hp97560, a window of cylinders 0-2 (of 4: the sweep stops at cylinder 3
// rather than wrap back to 0), the head on cylinder 1: the seek lands at
// slot L; cylinder 0 has one free sector at slot L + 2, cylinder 2 at L + 20.
TEST(EagerAllocator, SeeksEitherWayToTheSoonestRunUnlessOneWay) {
  const DriveGeometry g = preset("hp97560");
  DriveModel drive(g, 4);
  const uint32_t heads = g.tracks_per_cylinder;
  const SimDuration seek1 = drive.reposition(HeadPosition{1, 0}, HeadPosition{0, 0}).seek;
  ASSERT_EQ(seek1, drive.reposition(HeadPosition{1, 0}, HeadPosition{2, 0}).seek);
  const uint32_t land = drive.next_slot(kSimEpoch + seek1, drive.geometry().sectors_per_track);
  for (bool one_way : {false, true}) {
    FreeSpaceMap m(4 * heads, g.sectors_per_track);
    for (uint32_t t = 0; t < 4 * heads; ++t)
      if (t != 0 && t != 2 * heads) m.allocate(t, 0, g.sectors_per_track);
    leave_free_slots(m, g, 0, 0, {land + 2});
    leave_free_slots(m, g, 2, 0, {land + 20});
    AllocatorPolicy policy;
    policy.one_way_seeks = one_way;
    EagerAllocator alloc(drive, m, policy);
    auto c = alloc.nearest(1, HeadPosition{1, 0}, kSimEpoch, CylinderWindow{0, 3});
    ASSERT_TRUE(c.has_value());
    const uint32_t cylinder = one_way ? 2 : 0, slot = one_way ? land + 20 : land + 2;
    EXPECT_EQ(c->extent.track, cylinder * heads) << "one_way " << one_way;
    EXPECT_EQ(c->locate, seek1 + drive.rotational_wait(kSimEpoch + seek1, slot, drive.geometry().sectors_per_track));
  }
}

// Ten cylinders of two heads, windows of three, the head on cylinder 5:
// the candidates start at 3, 4 and 5. With nothing empty, the one starting
// at the head (as a window always moved before). Empty tracks on cylinders
// 3 and 4 (behind the head) win over one on 7; a reserve-like track that is
// not usable does not count; ties go to the later start.
TEST(RoomiestWindow, TheWindowAroundTheHeadWithTheMostEmptyTracks) {
  FreeSpaceMap m(20, 8);
  for (uint32_t t = 0; t < 20; ++t) m.allocate(t, 0, 1);  // nothing empty
  auto all = [](uint32_t) { return true; };
  EXPECT_EQ(roomiest_window(m, 2, 10, 3, 5, all), (CylinderWindow{5, 3}));
  m.release(14, 0, 1);  // cylinder 7 head 0
  EXPECT_EQ(roomiest_window(m, 2, 10, 3, 5, all), (CylinderWindow{5, 3}));
  m.release(6, 0, 1);   // cylinder 3
  m.release(9, 0, 1);   // cylinder 4
  EXPECT_EQ(roomiest_window(m, 2, 10, 3, 5, all), (CylinderWindow{3, 3}));
  auto not_6 = [](uint32_t t) { return t != 6; };  // cylinder 3's is the reserve
  EXPECT_EQ(roomiest_window(m, 2, 10, 3, 5, not_6), (CylinderWindow{5, 3}));  // 4+5+6 ties 5+6+7
  // Wrapping: the head on cylinder 0, candidates start at 8, 9 and 0.
  m.release(17, 0, 1);  // cylinder 8
  EXPECT_EQ(roomiest_window(m, 2, 10, 3, 0, all), (CylinderWindow{8, 3}));
  // A window as wide as the disk: the one at the head.
  EXPECT_EQ(roomiest_window(m, 2, 10, 10, 5, all), (CylinderWindow{5, 10}));
}

// ------------------------------------------- formulas (2)-(4), Table 1

// Formula (2) with (3) and (4), summed until the terms vanish: x and y are
// sector counts, fx(p, x) = p (1-p)^x, fy(p, y) = fx(1 - (1-p)^(t-1), y - s),
// i.e. y = s + j for j = 0, 1, ... (s need not be whole).
double paper_model(double p, double s, uint32_t t) {
  const double q = 1 - std::pow(1 - p, t - 1);
  double sum = 0;
  for (int x = 0;; ++x) {
    const double fx = p * std::pow(1 - p, x);
    if (fx < 1e-18) break;
    for (int j = 0;; ++j) {
      const double fy = q * std::pow(1 - q, j);
      if (fy < 1e-18) break;
      sum += std::min<double>(x, s + j) * fx * fy;
    }
  }
  return sum;
}

// The same quantity for the tracks the test builds: n sectors with exactly k
// free at random. P(X >= m) = C(n-m, k) / C(n, k) (the first m positions are
// all used); the other t-1 tracks are independent, so P(J >= m) = P(X >= m)^(t-1).
// s = S + f: the head lands S or S+1 whole slots later, the latter with
// probability f (see the comment in the test), so
// E[min] = (1-f) E[min(X, S+J)] + f E[min(X, S+1+J)], each computed as
// sum over m >= 1 of P(X >= m) P(S'+J >= m).
double finite_model(uint32_t n, uint32_t k, double s, uint32_t t) {
  std::vector<double> ge(n + 2, 0.0);  // ge[m] = P(X >= m)
  ge[0] = 1;
  for (uint32_t m = 1; m <= n - k; ++m)
    ge[m] = ge[m - 1] * static_cast<double>(n - k - (m - 1)) / static_cast<double>(n - (m - 1));
  auto j_ge = [&](int64_t r) { return r <= 0 ? 1.0 : std::pow(ge[r], t - 1); };
  auto e_min = [&](int64_t shift) {
    double e = 0;
    for (uint32_t m = 1; m <= n - k; ++m) e += ge[m] * j_ge(static_cast<int64_t>(m) - shift);
    return e;
  };
  const double S = std::floor(s), f = s - S;
  return (1 - f) * e_min(static_cast<int64_t>(S)) + f * e_min(static_cast<int64_t>(S) + 1);
}

// nearest() from a uniformly random time, head on track 0 of the only
// cylinder, every track of which has exactly round(pn) free sectors at random.
// The locate time in sectors is u + min(X, D + J): u in [0, 1) is the wait for
// the first whole slot (the model counts whole sectors), X and J are whole
// slots skipped on the head's track and on the best other track, D is the
// head switch in whole slots (S, or S+1 when the fraction of the slot the
// head is in exceeds 1 - f, probability f). Since E[min(x, S + B + j)] with
// B ~ Bernoulli(f) equals min(x, s + j) for whole x and j, the expectation is
// exactly formula (2) + 0.5 when X and J are geometric as (3) and (4) assume.
// A real track is finite (k of n free, without replacement), which is what
// finite_model() takes into account; the difference is the model's error.
void validate_single_cylinder(const char* name, double tolerance_paper) {
  const DriveGeometry g = preset(name);
  const uint32_t n = g.sectors_per_track, t = g.tracks_per_cylinder;
  const double sector_ns = g.sector_time_ns();
  const double s = static_cast<double>(g.head_switch.count()) / sector_ns;
  const int64_t rev = g.revolution().count();
  DriveModel drive(g, 1);
  std::mt19937_64 rng(97560 + n);
  constexpr int kLayouts = 1000, kTimes = 32;
  std::printf("\nSingle-cylinder model, %s: n=%u t=%u s=%.3f sectors (%.1f us/sector)\n", name, n,
              t, s, sector_ns / 1e3);
  std::printf("%5s %4s %10s %10s %12s %10s %10s %8s\n", "p", "k", "(2)", "(2)+0.5",
              "finite+0.5", "simulated", "sim us", "sim/(2)+.5");
  std::vector<uint32_t> order(n);
  for (int step = 1; step <= 9; ++step) {
    const double p = step / 10.0;
    const uint32_t k = static_cast<uint32_t>(std::lround(p * n));
    const double model = paper_model(p, s, t);
    const double finite = finite_model(n, k, s, t);
    double sum = 0;
    int samples = 0;
    uint64_t switched = 0;
    for (int l = 0; l < kLayouts; ++l) {
      FreeSpaceMap m(t, n);
      for (uint32_t tr = 0; tr < t; ++tr) {
        std::iota(order.begin(), order.end(), 0u);
        std::shuffle(order.begin(), order.end(), rng);
        for (uint32_t i = k; i < n; ++i) m.allocate(tr, order[i], 1);
      }
      EagerAllocator alloc(drive, m, AllocatorPolicy{});
      std::uniform_int_distribution<int64_t> when(0, 1000 * rev - 1);
      for (int i = 0; i < kTimes; ++i) {
        auto c = alloc.nearest(1, HeadPosition{0, 0}, at_ns(when(rng)), CylinderWindow{0, 1});
        ASSERT_TRUE(c.has_value());
        ASSERT_LT(c->extent.track, t);
        ASSERT_TRUE(m.is_free(c->extent.track, c->extent.sector));
        if (c->extent.track != 0) {
          ++switched;
          ASSERT_GE(c->locate, g.head_switch);
        }
        sum += static_cast<double>(c->locate.count()) / sector_ns;
        ++samples;
      }
    }
    const double sim = sum / samples;
    std::printf("%5.1f %4u %10.4f %10.4f %12.4f %10.4f %10.1f %8.4f\n", p, k, model, model + 0.5,
                finite + 0.5, sim, sim * sector_ns / 1e3, sim / (model + 0.5));
    EXPECT_NEAR(sim, finite + 0.5, 0.03 * (finite + 0.5)) << name << " p=" << p;
    EXPECT_NEAR(sim, model + 0.5, tolerance_paper * (model + 0.5)) << name << " p=" << p;
    if (p <= 0.3) {
      EXPECT_GT(switched, 0u) << "other tracks never won at p=" << p;
    }
  }
}

TEST(EagerAllocator, SingleCylinderModelHp97560) { validate_single_cylinder("hp97560", 0.07); }
TEST(EagerAllocator, SingleCylinderModelSt19101) { validate_single_cylinder("st19101", 0.07); }

// ---------------------------------------------------- fill threshold

// Commands of one 8-sector data block and one map sector, each starting the
// moment the previous one ended, on an empty window of two st19101
// cylinders (paper 001, sections 2.3 and 4.2; eager_allocator.h: "while a
// fill track is below the fill threshold, pieces go there ...; then that
// empty track becomes the fill track", and "the threshold is the most a
// track is filled"). Back to back, the fill track fills 9 sectors a command
// from wherever the head is; it is below 75% (192 sectors) after 21
// commands (189) and at or past it after 22 (198). So when the head leaves a
// track for an empty one, the track holds at least 192 sectors and less than
// 192 + 9. Staying on the track costs no head switch and no rotation; a move
// costs one head switch (or the one-cylinder seek at the end of a cylinder,
// also 0.5 ms on the st19101).
TEST(EagerAllocator, FillsEmptyTracksToTheThresholdThenSwitches) {
  const DriveGeometry g = preset("st19101");
  const uint32_t n = g.sectors_per_track, t = g.tracks_per_cylinder;
  ASSERT_EQ(g.seek.time(1), g.head_switch);
  DriveModel drive(g, 2);
  FreeSpaceMap m(2 * t, n);
  EagerAllocator alloc(drive, m, AllocatorPolicy{0.75});
  const CylinderWindow win{0, 2};
  const uint32_t sizes[] = {8, 1};
  const uint32_t threshold = static_cast<uint32_t>(0.75 * n);  // 192
  constexpr int kCommands = 22 * 20;  // about 20 tracks' worth
  SimTime now = kSimEpoch;
  std::vector<uint32_t> visit{0};  // tracks in the order the head went to them
  int moves = 0;
  SimDuration move_time{};
  for (int i = 0; i < kCommands; ++i) {
    const HeadPosition before = drive.head();
    const uint32_t from_track = before.cylinder * t + before.head;
    auto ext = alloc.place(sizes, before, now, win);
    ASSERT_TRUE(ext.has_value()) << i;
    ASSERT_EQ(ext->size(), 2u);
    std::vector<SectorRun> runs = alloc.runs(*ext);
    Access a = drive.access(runs, now, /*charge_overhead=*/false);
    const uint32_t to_track = ext->back().track;
    const bool stayed = (*ext)[0].track == from_track && to_track == from_track;
    if (stayed) {
      EXPECT_EQ(a.breakdown.head_switch.count(), 0) << i;
      EXPECT_EQ(a.breakdown.seek.count(), 0) << i;
      EXPECT_EQ(a.breakdown.rotation.count(), 0) << i;  // right where the last one ended
    } else {
      ++moves;
      move_time += a.breakdown.head_switch + a.breakdown.seek;
      EXPECT_EQ(a.breakdown.head_switch + a.breakdown.seek, g.head_switch) << i;
      EXPECT_GE(m.free_sectors(to_track), n - 9) << "moved to a used track " << to_track;
    }
    if (visit.back() != to_track) visit.push_back(to_track);
    now = a.end;
  }
  std::string fill;
  for (size_t v = 0; v + 1 < visit.size(); ++v) {
    const uint32_t used = n - m.free_sectors(visit[v]);
    fill += std::to_string(visit[v]) + ":" + std::to_string(used) + " ";
    EXPECT_GE(used, threshold) << "track " << visit[v];
    EXPECT_LT(used, threshold + 9) << "track " << visit[v] << " filled past the threshold";
  }
  std::printf("\nfill=0.75, back-to-back [8,1] commands: sectors used when the head left "
              "each track (of %u):\n  %s\n",
              n, fill.c_str());
  std::printf("  tracks visited %zu, moves %d (%.1f us), fill_switches %llu, "
              "contiguous_commands %llu\n",
              visit.size(), moves, to_us(move_time),
              static_cast<unsigned long long>(alloc.stats().fill_switches),
              static_cast<unsigned long long>(alloc.stats().contiguous_commands));
  // 440 commands of 9 sectors at 198-ish per track: about 20 tracks.
  EXPECT_GE(visit.size(), static_cast<size_t>(kCommands * 9 / (threshold + 9)));
  // Every track was new when the head came to it: no revisits.
  std::vector<uint32_t> sorted = visit;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // One fill switch per track the head filled (the first is the head's own
  // track, reached without moving); one head movement per new track.
  EXPECT_EQ(alloc.stats().fill_switches, visit.size());
  EXPECT_EQ(moves, static_cast<int>(visit.size()) - 1);
  EXPECT_EQ(move_time, moves * g.head_switch);
  EXPECT_EQ(alloc.stats().greedy_pieces, 0u);
}

// ------------------------------------------------ one run for [8, 1]

// The head's track (head 0) has only 8-sector holes, at slots 2 and 100.
// Head 1 has a 9-sector run at slots 22..30, reachable after the 0.5 ms head
// switch (21.3 slots) from time zero. Everything else is full, so no empty
// track and no fill policy. Greedy would put the data in the hole at slot 2
// and the map sector in the next free sector after it, slot 100; the whole
// command as one run on head 1 ends at slot 31, far sooner.
TEST(EagerAllocator, PrefersANineSectorRunWhenItEndsSooner) {
  const DriveGeometry g = preset("st19101");
  const uint32_t n = g.sectors_per_track, t = g.tracks_per_cylinder;
  DriveModel drive(g, 1);
  FreeSpaceMap m(t, n);
  leave_free_slots(m, g, 0, 0, [] {
    auto v = range(2, 8);
    auto w = range(100, 8);
    v.insert(v.end(), w.begin(), w.end());
    return v;
  }());
  leave_free_slots(m, g, 0, 1, range(22, 9));
  for (uint32_t h = 2; h < t; ++h) m.allocate(h, 0, n);
  ASSERT_EQ(m.empty_tracks(), 0u);
  const uint64_t free_before = m.free_sectors();
  EagerAllocator alloc(drive, m, AllocatorPolicy{0.75});
  const uint32_t sizes[] = {8, 1};
  auto ext = alloc.place(sizes, HeadPosition{0, 0}, kSimEpoch, CylinderWindow{0, 1});
  ASSERT_TRUE(ext.has_value());
  const uint32_t run_sector = (22 + n - g.track_skew_sectors) % n;  // slot 22 of head 1
  EXPECT_EQ((*ext)[0], (Extent{1, run_sector, 8}));
  EXPECT_EQ((*ext)[1], (Extent{1, (run_sector + 8) % n, 1}));
  EXPECT_EQ(alloc.stats().contiguous_commands, 1u);
  // Exactly the run is allocated; greedy's tentative sectors were given back.
  EXPECT_EQ(m.free_sectors(), free_before - 9);
  EXPECT_EQ(m.free_sectors(1), 0u);
  EXPECT_EQ(m.free_sectors(0), 16u);
  // The drive does it in one pass: head switch, a wait to slot 22, 9 sectors.
  Access a = drive.access(alloc.runs(*ext), kSimEpoch, false);
  EXPECT_EQ(a.breakdown.head_switch, g.head_switch);
  EXPECT_EQ((a.end - kSimEpoch).count(), slots_ns(g, 22) + slots_ns(g, 9));
}

TEST(EagerAllocator, KeepsTheGreedyPlanWhenItEndsSooner) {
  // As above, but head 1's run is at slots 120..128: after greedy's map
  // sector at slot 100.
  const DriveGeometry g = preset("st19101");
  const uint32_t n = g.sectors_per_track, t = g.tracks_per_cylinder;
  DriveModel drive(g, 1);
  FreeSpaceMap m(t, n);
  auto holes = range(2, 8);
  auto w = range(100, 8);
  holes.insert(holes.end(), w.begin(), w.end());
  leave_free_slots(m, g, 0, 0, holes);
  leave_free_slots(m, g, 0, 1, range(120, 9));
  for (uint32_t h = 2; h < t; ++h) m.allocate(h, 0, n);
  const uint64_t free_before = m.free_sectors();
  EagerAllocator alloc(drive, m, AllocatorPolicy{0.75});
  const uint32_t sizes[] = {8, 1};
  auto ext = alloc.place(sizes, HeadPosition{0, 0}, kSimEpoch, CylinderWindow{0, 1});
  ASSERT_TRUE(ext.has_value());
  EXPECT_EQ((*ext)[0], (Extent{0, 2, 8}));
  EXPECT_EQ((*ext)[1], (Extent{0, 100, 1}));
  EXPECT_EQ(alloc.stats().contiguous_commands, 0u);
  EXPECT_EQ(m.free_sectors(), free_before - 9);
  EXPECT_EQ(m.free_sectors(1), 9u);
  Access a = drive.access(alloc.runs(*ext), kSimEpoch, false);
  EXPECT_EQ(a.breakdown.head_switch.count(), 0);
  EXPECT_EQ((a.end - kSimEpoch).count(), slots_ns(g, 101));
}

TEST(EagerAllocator, PlaceFailsWithoutAllocatingWhenTheWindowIsFull) {
  const DriveGeometry g = preset("st19101");
  DriveModel drive(g, 3);
  FreeSpaceMap m(3 * g.tracks_per_cylinder, g.sectors_per_track);
  // Cylinder 1 is full; cylinder 0 has room, but outside the window.
  for (uint32_t h = 0; h < g.tracks_per_cylinder; ++h)
    m.allocate(g.tracks_per_cylinder + h, 0, g.sectors_per_track);
  for (uint32_t h = 0; h < g.tracks_per_cylinder; ++h)
    m.allocate(2 * g.tracks_per_cylinder + h, 0, g.sectors_per_track);
  // Leave one 8-sector hole in cylinder 1: data fits, the map sector does not.
  m.release(g.tracks_per_cylinder + 3, 40, 8);
  const uint64_t free_before = m.free_sectors();
  EagerAllocator alloc(drive, m, AllocatorPolicy{0.75});
  const uint32_t sizes[] = {8, 1};
  EXPECT_FALSE(alloc.place(sizes, HeadPosition{1, 0}, kSimEpoch, CylinderWindow{1, 2}).has_value());
  EXPECT_EQ(m.free_sectors(), free_before);
  // With cylinder 0 in the window it fits there.
  auto ext = alloc.place(sizes, HeadPosition{1, 0}, kSimEpoch, CylinderWindow{1, 3});
  ASSERT_TRUE(ext.has_value());
  EXPECT_EQ(m.free_sectors(), free_before - 9);
}

// nearest() against every track of the window timed on its own, straight
// from the drive model (reposition, next_slot, the slow run search,
// rotational_wait): the search works a cylinder's move and skew out once
// and prunes by seek distance, and must still return the soonest run, ties
// to the nearest cylinder (ahead before behind) and then the lowest head.
// Random layouts on two presets (72 and 256 sectors a track) and a drive
// whose head switch outlasts short seeks, the head
// anywhere in a window that wraps, at any instant, for a map sector, a
// block and a block with its map sector; and with limits around it; the
// map changing between searches.
TEST(EagerAllocator, NearestIsTheSoonestRunOfTheWholeWindow) {
  std::mt19937_64 rng(17);
  // "slow-switch": st19101 with a head switch longer than short seeks, so
  // that the head's own surface on a nearby cylinder costs less than the
  // others there.
  for (const char* name : {"hp97560", "st19101", "slow-switch"}) {
    DriveGeometry g = preset(std::string(name) == "slow-switch" ? "st19101" : name);
    if (std::string(name) == "slow-switch") {
      g.head_switch = sim_ms(1.2);
      g.derive_skews();
      ASSERT_LT(g.seek.time(1), g.head_switch);
    }
    const uint32_t cylinders = 12, heads = g.tracks_per_cylinder, spt = g.sectors_per_track;
    DriveModel drive(g, cylinders);
    for (int layout = 0; layout < 12; ++layout) {
      FreeSpaceMap m(cylinders * heads, spt);
      const double used = std::uniform_real_distribution<double>(0.5, 0.97)(rng);
      for (uint32_t t = 0; t < cylinders * heads; ++t)
        for (uint32_t s = 0; s < spt; ++s)
          if (std::bernoulli_distribution(used)(rng)) m.allocate(t, s, 1);
      EagerAllocator alloc(drive, m, AllocatorPolicy{});
      const CylinderWindow window{static_cast<uint32_t>(rng() % cylinders), 5};
      for (int query = 0; query < 20; ++query) {
        const uint32_t c0 = (window.first + rng() % window.count) % cylinders;
        const HeadPosition head{c0, static_cast<uint32_t>(rng() % heads)};
        const SimTime at = at_ns(static_cast<int64_t>(rng() % 50'000'000));
        for (uint32_t len : {1u, 8u, 9u}) {
          // The brute force: (locate, rank, behind) of every track with a run.
          std::optional<std::tuple<SimDuration, uint64_t, int, uint32_t, uint32_t>> best;
          for (uint32_t c = 0; c < cylinders; ++c) {
            if (!window.contains(c, cylinders)) continue;
            const uint32_t ahead_d = (c + cylinders - c0) % cylinders;
            const uint32_t behind_d = (c0 + cylinders - c) % cylinders;
            const uint32_t d = std::min(ahead_d, behind_d);
            for (uint32_t h = 0; h < heads; ++h) {
              const ServiceBreakdown move = drive.reposition(head, HeadPosition{c, h});
              const SimTime arrive = at + move.seek + move.head_switch;
              const uint32_t first = (drive.next_slot(arrive, drive.geometry().sectors_per_track) + spt -
                                      g.angular_slot(Chs{c, h, 0})) % spt;
              auto run = m.first_free_run_slow(c * heads + h, first, len);
              if (!run) continue;
              const SimDuration locate =
                  move.seek + move.head_switch +
                  drive.rotational_wait(arrive, g.angular_slot(Chs{c, h, run->sector}), drive.geometry().sectors_per_track);
              auto key = std::make_tuple(locate, uint64_t{d} * heads + h,
                                         ahead_d <= behind_d ? 0 : 1, c * heads + h, run->sector);
              if (!best || key < *best) best = key;
            }
          }
          auto got = alloc.nearest(len, head, at, window);
          ASSERT_EQ(got.has_value(), best.has_value()) << name << " len " << len;
          if (!got) continue;
          EXPECT_EQ(got->locate, std::get<0>(*best)) << name << " len " << len;
          EXPECT_EQ(got->extent.track, std::get<3>(*best)) << name << " len " << len;
          EXPECT_EQ(got->extent.sector, std::get<4>(*best)) << name << " len " << len;
          // With a limit (the plans' searches that only a sooner run can
          // serve): the same run whenever it is reached by then, whatever
          // the limit does to the order runs are met and passed over in;
          // otherwise nothing, or a run reached later still.
          const int64_t soonest = std::get<0>(*best).count();
          for (int64_t limit_ns :
               {soonest, soonest + 1, soonest - 1, soonest / 2, soonest * 2 + 1,
                static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * soonest + 2))}) {
            if (limit_ns < 0) continue;
            auto limited = alloc.nearest(len, head, at, window, false, SimDuration{limit_ns});
            if (soonest <= limit_ns) {
              ASSERT_TRUE(limited.has_value()) << name << " len " << len << " limit " << limit_ns;
              EXPECT_EQ(limited->locate, got->locate) << name << " len " << len;
              EXPECT_EQ(limited->extent, got->extent) << name << " len " << len;
            } else if (limited) {
              EXPECT_GT(limited->locate.count(), limit_ns) << name << " len " << len;
            }
          }
        }
        // The map changes between searches, as a write's plans change it
        // (what the searches keep of it must follow): a few sectors flipped.
        for (int i = 0; i < 6; ++i) {
          const uint32_t t = static_cast<uint32_t>(rng() % (cylinders * heads));
          const uint32_t s = static_cast<uint32_t>(rng() % spt);
          if (m.is_free(t, s)) m.allocate(t, s, 1);
          else m.release(t, s, 1);
        }
      }
    }
  }
}

TEST(CylinderWindow, TrackRangesWrapAtTheLastCylinder) {
  auto ranges = CylinderWindow{2, 3}.track_ranges(10, 4);
  EXPECT_EQ(ranges[0].first, 8u);
  EXPECT_EQ(ranges[0].count, 12u);
  EXPECT_EQ(ranges[1].count, 0u);
  ranges = CylinderWindow{8, 4}.track_ranges(10, 4);  // cylinders 8, 9, 0, 1
  EXPECT_EQ((std::pair{ranges[0].first, ranges[0].count}), (std::pair{32u, 8u}));
  EXPECT_EQ((std::pair{ranges[1].first, ranges[1].count}), (std::pair{0u, 8u}));
  ranges = CylinderWindow{3, 10}.track_ranges(10, 4);  // the whole disk, once
  EXPECT_EQ(ranges[0].count + ranges[1].count, 40u);
}

}  // namespace
}  // namespace vld
