// DriveModel: rotational position, repositioning and the cost of commands,
// with the expected simulated times worked out by hand; and the mean
// update-in-place service time of random 4 KiB writes on each preset
// against overhead + E[seek] + half a revolution + transfer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "core/store/backing_store.h"
#include "core/modes/mode_image.h"
#include "core/inplace/inplace_disk.h"
#include "geometry/drive_model.h"
#include "geometry/presets.h"

namespace vld {
namespace {

DriveGeometry preset(const char* name) {
  auto g = find_preset(name);
  EXPECT_TRUE(g.has_value()) << name;
  return g.value_or(DriveGeometry{});
}

SimTime at_ns(int64_t ns) { return kSimEpoch + SimDuration{ns}; }

// st19101: 256 sectors in 6,000,000 ns: one sector is 23,437.5 ns.
constexpr int64_t kStRev = 6'000'000;

// ------------------------------------------------------ rotational wait

TEST(DriveModel, AngleIsTimeModuloRevolution) {
  DriveModel m(preset("st19101"), 10);
  EXPECT_DOUBLE_EQ(m.angle_sectors(at_ns(0), m.geometry().sectors_per_track), 0.0);
  EXPECT_DOUBLE_EQ(m.angle_sectors(at_ns(3'000'000), m.geometry().sectors_per_track), 128.0);
  EXPECT_DOUBLE_EQ(m.angle_sectors(at_ns(kStRev), m.geometry().sectors_per_track), 0.0);
  EXPECT_DOUBLE_EQ(m.angle_sectors(at_ns(5 * kStRev + 46'875), m.geometry().sectors_per_track), 2.0);
  EXPECT_DOUBLE_EQ(m.angle_sectors(at_ns(23'437), m.geometry().sectors_per_track), 23'437.0 / 23'437.5);
}

TEST(DriveModel, RotationalWaitAtTimeZero) {
  DriveModel m(preset("st19101"), 10);
  EXPECT_EQ(m.rotational_wait(at_ns(0), 0, m.geometry().sectors_per_track).count(), 0);
  EXPECT_EQ(m.rotational_wait(at_ns(0), 128, m.geometry().sectors_per_track).count(), 3'000'000);  // half a turn
  // 6 ms * 255 / 256 = 5,976,562.5 ns, rounded up to the nanosecond.
  EXPECT_EQ(m.rotational_wait(at_ns(0), 255, m.geometry().sectors_per_track).count(), 5'976'563);
  EXPECT_EQ(m.rotational_wait(at_ns(0), 1, m.geometry().sectors_per_track).count(), 23'438);  // 23,437.5 up
  // Whole revolutions later, the same.
  EXPECT_EQ(m.rotational_wait(at_ns(7 * kStRev), 128, m.geometry().sectors_per_track).count(), 3'000'000);
}

TEST(DriveModel, RotationalWaitOneSectorIn) {
  DriveModel m(preset("st19101"), 10);
  // At t = 23,437 ns (just before slot 1 starts, at 23,437.5), slot 0 has
  // passed: wait a full revolution minus that, 6,000,000 - 23,437.
  EXPECT_EQ(m.rotational_wait(at_ns(23'437), 0, m.geometry().sectors_per_track).count(), 5'976'563);
  // Slot 1 starts half a nanosecond later: round up to 1 ns.
  EXPECT_EQ(m.rotational_wait(at_ns(23'437), 1, m.geometry().sectors_per_track).count(), 1);
  // Slot 2 starts exactly at 46,875 ns.
  EXPECT_EQ(m.rotational_wait(at_ns(46'875), 2, m.geometry().sectors_per_track).count(), 0);
  EXPECT_EQ(m.rotational_wait(at_ns(23'437), 2, m.geometry().sectors_per_track).count(), 46'875 - 23'437);
}

TEST(DriveModel, UpToTheSlackLateIsOnTime) {
  DriveModel m(preset("st19101"), 10);
  // Slot 1 starts at 23,437.5 ns; 23,438 is the ceiling of the boundary,
  // 0.5 ns late: the rounding of a previous transfer, not a missed sector.
  EXPECT_EQ(m.rotational_wait(at_ns(23'438), 1, m.geometry().sectors_per_track).count(), 0);
  EXPECT_EQ(m.rotational_wait(at_ns(kStRev + 23'438), 1, m.geometry().sectors_per_track).count(), 0);
  // Several roundings in a row (a wrapped block, then a map sector) stay
  // within kOnTimeSlackNs: still on time.
  EXPECT_EQ(m.rotational_wait(at_ns(23'439), 1, m.geometry().sectors_per_track).count(), 0);
  EXPECT_EQ(m.rotational_wait(at_ns(46'875 + kOnTimeSlackNs), 2, m.geometry().sectors_per_track).count(), 0);
  // One nanosecond past the slack is late: wait for the next turn.
  EXPECT_EQ(m.rotational_wait(at_ns(46'875 + kOnTimeSlackNs + 1), 2, m.geometry().sectors_per_track).count(),
            kStRev - kOnTimeSlackNs - 1);
  // next_slot agrees: within the slack the slot is still ahead, past it not.
  EXPECT_EQ(m.next_slot(at_ns(46'875 + kOnTimeSlackNs), m.geometry().sectors_per_track), 2u);
  EXPECT_EQ(m.next_slot(at_ns(46'875 + kOnTimeSlackNs + 1), m.geometry().sectors_per_track), 3u);
  EXPECT_EQ(m.next_slot(at_ns(46'874), m.geometry().sectors_per_track), 2u);
}

TEST(DriveModel, ConsecutiveRunsOnATrackAreOnePass) {
  // 256 one-sector runs in a row cost what one 256-sector run does: one
  // pass, not a transfer rounded up a nanosecond per run until the head
  // "misses" a sector past the slack and waits a revolution (7 times).
  DriveModel m(preset("st19101"), 10);
  std::vector<SectorRun> singles;
  for (uint64_t s = 0; s < 256; ++s) singles.push_back(SectorRun{256 + s, 1});
  const SectorRun whole{256, 256};
  const Access one = m.estimate(std::span(&whole, 1), at_ns(0), Transfer::kWrite, false);
  const Access many = m.estimate(singles, at_ns(0), Transfer::kWrite, false);
  EXPECT_EQ(many.end, one.end);
  EXPECT_LT((many.end - at_ns(0)).count(), 2 * kStRev);
}

TEST(DriveModel, RotationalWaitLandsOnTheSlotWithinOneRevolution) {
  std::mt19937_64 rng(20240601);
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    DriveModel m(g, 10);
    const int64_t rev = g.revolution().count();
    const int64_t n = g.sectors_per_track;
    std::uniform_int_distribution<int64_t> time(0, 1000 * rev);
    std::uniform_int_distribution<uint32_t> slot(0, g.sectors_per_track - 1);
    for (int i = 0; i < 20000; ++i) {
      int64_t t = time(rng);
      uint32_t s = slot(rng);
      int64_t w = m.rotational_wait(at_ns(t), s, m.geometry().sectors_per_track).count();
      ASSERT_GE(w, 0) << name;
      ASSERT_LT(w, rev) << name;
      // Positions relative to the start of slot s (at s * rev / n ns into the
      // revolution), in units of 1/n ns, folded into (-half turn, half turn].
      auto rel = [&](int64_t when) {
        int64_t x = (when % rev) * n - int64_t{s} * rev;
        if (x <= -n * rev / 2) x += n * rev;
        if (x > n * rev / 2) x -= n * rev;
        return x;
      };
      // The wait ends less than a nanosecond after the slot starts (or less
      // than a nanosecond late, when no wait was needed at all).
      ASSERT_GT(rel(t + w), -n) << name << " t=" << t << " slot=" << s << " wait=" << w;
      ASSERT_LT(rel(t + w), n) << name << " t=" << t << " slot=" << s << " wait=" << w;
      if (w > 0) {
        // One nanosecond less would be before the slot: the wait is minimal...
        ASSERT_LT(rel(t + w - 1), 0) << name << " t=" << t << " slot=" << s;
        // ...and it was needed: t was not already (less than 1 ns late) on time.
        ASSERT_FALSE(rel(t) >= 0 && rel(t) < n) << name << " t=" << t << " slot=" << s;
      } else {
        ASSERT_TRUE(rel(t) >= 0 && rel(t) < n) << name << " t=" << t << " slot=" << s;
      }
    }
  }
}

// The waits and slots the allocator works out from one phase per arrival
// are the integer arithmetic's as written out here (floor modulo at every
// step), for slots past the track's end too, and times before the epoch.
TEST(DriveModel, WaitsAndSlotsFromAPhaseAreTheFloorModuloArithmetic) {
  std::mt19937_64 rng(7);
  auto floor_mod = [](int64_t a, int64_t m) { return ((a % m) + m) % m; };
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    DriveModel m(g, 10);
    const int64_t rev = g.revolution().count();
    for (int i = 0; i < 20000; ++i) {
      const int64_t t = static_cast<int64_t>(rng() % (2000 * rev)) - 1000 * rev;
      const uint32_t spt = g.sectors_per_track - static_cast<uint32_t>(rng() % 8);
      const uint32_t slot = static_cast<uint32_t>(rng() % (3 * spt));
      const int64_t phase = floor_mod(t, rev) * spt;
      ASSERT_EQ(m.phase_units(at_ns(t), spt), phase);
      int64_t diff = int64_t{slot} * rev - phase;
      int64_t want_wait = 0;
      if (!(diff < 0 && diff >= -kOnTimeSlackNs * int64_t{spt}))
        want_wait = (floor_mod(diff, rev * spt) + spt - 1) / spt;
      ASSERT_EQ(m.rotational_wait(at_ns(t), slot, spt).count(), want_wait)
          << name << " t=" << t << " slot=" << slot;
      const int64_t units = phase - kOnTimeSlackNs * int64_t{spt};
      const int64_t want_slot = (units <= 0 ? 0 : (units + rev - 1) / rev) % spt;
      ASSERT_EQ(m.next_slot(at_ns(t), spt), want_slot) << name << " t=" << t;
    }
  }
}

TEST(DriveModel, TransferTimeIsSectorsTimesSectorTimeRoundedUp) {
  DriveModel m(preset("st19101"), 10);
  EXPECT_EQ(m.transfer_time(0, m.geometry().sectors_per_track).count(), 0);
  EXPECT_EQ(m.transfer_time(1, m.geometry().sectors_per_track).count(), 23'438);
  EXPECT_EQ(m.transfer_time(8, m.geometry().sectors_per_track).count(), 187'500);  // 4 KiB
  EXPECT_EQ(m.transfer_time(256, m.geometry().sectors_per_track).count(), kStRev);
  DriveModel hp(preset("hp97560"), 10);
  // 8 * 14,992,503 / 72 = 1,665,833.67 ns
  EXPECT_EQ(hp.transfer_time(8, hp.geometry().sectors_per_track).count(), 1'665'834);
}

// --------------------------------------------------------- repositioning

TEST(DriveModel, RepositionIsSeekOrHeadSwitchOrNothing) {
  DriveGeometry g = preset("hp97560");
  DriveModel m(g, 100);
  ServiceBreakdown same = m.reposition({5, 3}, {5, 3});
  EXPECT_EQ(same.total().count(), 0);
  ServiceBreakdown sw = m.reposition({5, 3}, {5, 4});
  EXPECT_EQ(sw.head_switch.count(), 2'500'000);
  EXPECT_EQ(sw.seek.count(), 0);
  EXPECT_EQ(sw.total().count(), 2'500'000);
  // A seek includes selecting the head: no head switch on top.
  ServiceBreakdown up = m.reposition({5, 3}, {105, 7});
  EXPECT_EQ(up.seek.count(), 7'240'000);  // 3.24 + 0.4 * sqrt(100)
  EXPECT_EQ(up.head_switch.count(), 0);
  ServiceBreakdown down = m.reposition({105, 0}, {5, 0});
  EXPECT_EQ(down.seek.count(), 7'240'000);
  EXPECT_EQ(m.reposition({0, 0}, {1, 0}).seek.count(), 3'640'000);
}

// A drive whose head switch (5 ms) is longer than its one-cylinder seek
// (3.64 ms), as on modern drives: the geometry
// `geometry=hp97560 head_switch_us=5000`.
DriveGeometry hp97560_slow_switch() {
  DriveGeometry g = preset("hp97560");
  g.head_switch = sim_ms(5);
  g.derive_skews();
  return g;
}

TEST(DriveModel, SeekThatChangesHeadsTakesTheLongerOfSeekAndHeadSwitch) {
  DriveModel m(hp97560_slow_switch(), 100);
  // The arm moves one cylinder (3.64 ms) while the head switch settles
  // (5 ms): ready after 5 ms, charged as the seek plus the switch's excess.
  ServiceBreakdown both = m.reposition({0, 0}, {1, 5});
  EXPECT_EQ(both.seek.count(), 3'640'000);
  EXPECT_EQ(both.head_switch.count(), 1'360'000);
  EXPECT_EQ(both.total().count(), 5'000'000);
  // Same head: the seek alone. A seek longer than the switch: the seek alone.
  EXPECT_EQ(m.reposition({0, 5}, {1, 5}).total().count(), 3'640'000);
  ServiceBreakdown far = m.reposition({0, 0}, {100, 5});
  EXPECT_EQ(far.seek.count(), 7'240'000);
  EXPECT_EQ(far.head_switch.count(), 0);
}

TEST(DriveModel, ReadAfterASeekThatChangesHeadsWaitsForTheHeadSwitch) {
  // 8 sectors at sector 0, then 8 at sector 1751
  // (cylinder 1, head 5, sector 23). Sector time 60 s / 4002 / 72 =
  // 208,229 ns; track skew ceil(5 ms / st) = 25; the cylinder skew covers
  // max(seek(1), head switch) = 5 ms too: 25 (it was 18 from the seek alone).
  DriveModel m(hp97560_slow_switch(), 100);
  EXPECT_EQ(m.geometry().track_skew_sectors, 25u);
  EXPECT_EQ(m.geometry().cylinder_skew_sectors, 25u);
  // Slot of (1, 5, 23): 23 + (18 * 25 + 25) + 5 * 25 = 623 = 47 mod 72.
  EXPECT_EQ(m.geometry().angular_slot({1, 5, 23}), 47u);
  SectorRun first{0, 8}, second{1751, 8};
  Access a = m.access(std::span(&first, 1), at_ns(0));
  Access b = m.access(std::span(&second, 1), a.end);
  // The head may not read before a.end + overhead 2.3 ms + 5 ms: one
  // charged 3.64 ms would be ready 1.36 ms (6.5 sectors) too early.
  const SimTime ready = a.end + sim_ms(2.3) + sim_ms(5);
  EXPECT_EQ(b.breakdown.seek.count() + b.breakdown.head_switch.count(), 5'000'000);
  EXPECT_EQ(b.breakdown.rotation, m.rotational_wait(ready, 47, m.geometry().sectors_per_track));
  EXPECT_EQ(b.end, ready + m.rotational_wait(ready, 47, m.geometry().sectors_per_track) + m.transfer_time(8, m.geometry().sectors_per_track));
}

TEST(DriveModel, CrossingACylinderWithALongHeadSwitchLosesNoRevolution) {
  // From the last head of cylinder 0 to head 0 of cylinder 1: the cylinder
  // skew covers the 5 ms head switch, so the transfer goes on within a
  // sector of rotation instead of waiting most of a revolution.
  DriveModel m(hp97560_slow_switch(), 100);
  m.set_head({0, 18});
  SectorRun run{72 * 19 - 4, 8};  // the last 4 sectors of (0,18), 4 of (1,0)
  SectorRun first_track{72 * 19 - 4, 4};
  const SimDuration first_wait =
      m.estimate(std::span(&first_track, 1), at_ns(0), Transfer::kWrite).breakdown.rotation;
  Access a = m.access(std::span(&run, 1), at_ns(0));
  EXPECT_EQ(a.breakdown.seek.count() + a.breakdown.head_switch.count(), 5'000'000);
  EXPECT_LT((a.breakdown.rotation - first_wait).count(), 208'230);
}

TEST(DriveModel, CommandOnlyCostsTheOverhead) {
  DriveModel m(preset("hp97560"), 10);
  Access a = m.command_only(at_ns(123));
  EXPECT_EQ(a.end, at_ns(123 + 2'300'000));
  EXPECT_EQ(a.breakdown.overhead.count(), 2'300'000);
  EXPECT_EQ(a.breakdown.total().count(), 2'300'000);
}

// --------------------------------------------------------------- access

TEST(DriveModel, SingleSectorAccessByHand) {
  DriveModel m(preset("st19101"), 10);
  SectorRun run{100, 1};  // cylinder 0, head 0, slot 100
  Access a = m.access(std::span(&run, 1), at_ns(0));
  // 0.1 ms overhead, then slot 100 at 100 * 23,437.5 = 2,343,750 ns,
  // then one sector (23,437.5 -> 23,438 ns).
  EXPECT_EQ(a.breakdown.overhead.count(), 100'000);
  EXPECT_EQ(a.breakdown.seek.count(), 0);
  EXPECT_EQ(a.breakdown.head_switch.count(), 0);
  EXPECT_EQ(a.breakdown.rotation.count(), 2'343'750 - 100'000);
  EXPECT_EQ(a.breakdown.transfer.count(), 23'438);
  EXPECT_EQ(a.end, at_ns(2'343'750 + 23'438));
}

TEST(DriveModel, RunCrossingATrackPaysOneHeadSwitch) {
  DriveModel m(preset("st19101"), 10);
  m.set_head({0, 0});
  // Sectors 250..255 of (0,0) then 0..5 of (0,1).
  SectorRun run{250, 12};
  Access a = m.access(std::span(&run, 1), at_ns(0));
  // t = 100,000 after overhead; slot 250 at 5,859,375: wait 5,759,375;
  // 6 sectors: 140,625 -> t = 6,000,000; head switch -> 6,500,000;
  // (0,1,0) is at slot 22 (track skew), 515,625: wait 15,625;
  // 6 sectors -> 6,656,250.
  EXPECT_EQ(a.breakdown.overhead.count(), 100'000);
  EXPECT_EQ(a.breakdown.seek.count(), 0);
  EXPECT_EQ(a.breakdown.head_switch.count(), 500'000);
  EXPECT_EQ(a.breakdown.rotation.count(), 5'759'375 + 15'625);
  EXPECT_EQ(a.breakdown.transfer.count(), 2 * 140'625);
  EXPECT_EQ(a.end, at_ns(6'656'250));
  EXPECT_EQ(a.end - at_ns(0), a.breakdown.total());
  EXPECT_EQ(m.head(), (HeadPosition{0, 1}));
}

TEST(DriveModel, RunCrossingACylinderPaysAOneCylinderSeek) {
  DriveModel m(preset("st19101"), 10);
  m.set_head({0, 15});
  // Sectors 250..255 of (0,15), then 0..5 of (1,0).
  SectorRun run{4096 - 6, 12};
  Access a = m.access(std::span(&run, 1), at_ns(0));
  // (0,15,250): slot (250 + 15 * 22) mod 256 = 68, at 1,593,750 ns: wait
  // 1,493,750; transfer 140,625 -> 1,734,375; seek(1) = 0.5 ms ->
  // 2,234,375; (1,0,0): slot (15 * 22 + 22) mod 256 = 96, at 2,250,000:
  // wait 15,625; transfer -> 2,390,625.
  EXPECT_EQ(a.breakdown.seek.count(), 500'000);
  EXPECT_EQ(a.breakdown.head_switch.count(), 0);
  EXPECT_EQ(a.breakdown.rotation.count(), 1'493'750 + 15'625);
  EXPECT_EQ(a.breakdown.transfer.count(), 2 * 140'625);
  EXPECT_EQ(a.end, at_ns(2'390'625));
  EXPECT_EQ(a.end - at_ns(0), a.breakdown.total());
  EXPECT_EQ(m.head(), (HeadPosition{1, 0}));
}

TEST(DriveModel, TwoWholeTracksInARowLoseNoRevolution) {
  DriveModel m(preset("st19101"), 10);
  m.set_head({0, 0});
  // Start so that the overhead ends exactly as slot 0 comes round.
  SimTime start = at_ns(kStRev - 100'000);
  SectorRun run{0, 512};
  Access a = m.access(std::span(&run, 1), start);
  // overhead + 2 revolutions of transfer + head switch and the rest of the
  // 22-sector skew (22 * 23,437.5 = 515,625 ns).
  EXPECT_EQ((a.end - start).count(), 100'000 + 2 * kStRev + 515'625);
  EXPECT_EQ(a.breakdown.transfer.count(), 2 * kStRev);
  EXPECT_EQ(a.breakdown.head_switch.count(), 500'000);
  EXPECT_EQ(a.breakdown.rotation.count(), 15'625);
  EXPECT_LT(a.breakdown.rotation.count(), kStRev);
  EXPECT_EQ(a.end - start, a.breakdown.total());
}

TEST(DriveModel, SequentialAcrossTrackAndCylinderOnEveryPreset) {
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    DriveModel m(g, 4);
    const double sector = 60e9 / g.rpm / g.sectors_per_track;
    const int64_t rev = g.revolution().count();
    const int64_t n = g.sectors_per_track;
    const int64_t o = g.controller_overhead.count();

    // Two whole tracks from (0,0,0), starting so that slot 0 is under the
    // head when the overhead ends (rev - o, modulo a revolution).
    m.set_head({0, 0});
    SimTime start = at_ns(((rev - o) % rev + rev) % rev);
    SectorRun two{0, static_cast<uint32_t>(2 * n)};
    Access a = m.access(std::span(&two, 1), start);
    double expected = static_cast<double>(o) + 2.0 * (60e9 / g.rpm) +
                      g.track_skew_sectors * sector;
    EXPECT_NEAR(static_cast<double>((a.end - start).count()), expected, 3.0) << name;
    EXPECT_LT(a.breakdown.rotation.count(), sector + 1) << name;
    EXPECT_EQ(a.breakdown.head_switch, g.head_switch) << name;
    EXPECT_EQ(a.end - start, a.breakdown.total()) << name;

    // The last track of cylinder 0 and the first of cylinder 1, from t = 0.
    // First wait, by hand: slot s = (heads - 1) * track skew mod n starts at
    // s * sector; the overhead has used o of it.
    m.set_head({0, g.tracks_per_cylinder - 1});
    uint64_t first = (g.tracks_per_cylinder - 1) * uint64_t{g.sectors_per_track};
    SectorRun across{first, static_cast<uint32_t>(2 * n)};
    Access b = m.access(std::span(&across, 1), at_ns(0));
    uint32_t s = ((g.tracks_per_cylinder - 1) * g.track_skew_sectors) % g.sectors_per_track;
    double w1 = s * sector - static_cast<double>(o);
    while (w1 < 0) w1 += 60e9 / g.rpm;
    double w2 = g.cylinder_skew_sectors * sector - static_cast<double>(g.seek.time(1).count());
    EXPECT_EQ(b.breakdown.seek, g.seek.time(1)) << name;
    EXPECT_EQ(b.breakdown.head_switch.count(), 0) << name;
    EXPECT_NEAR(static_cast<double>(b.breakdown.rotation.count()), w1 + w2, 3.0) << name;
    EXPECT_EQ(b.end - at_ns(0), b.breakdown.total()) << name;
    EXPECT_EQ(m.head(), (HeadPosition{1, 0})) << name;
  }
}

TEST(DriveModel, OverheadIsChargedOncePerCommand) {
  DriveGeometry g = preset("hp97560");
  DriveModel m(g, 100);
  std::vector<SectorRun> runs = {{0, 8}, {72 * 19 * 50, 8}, {500, 3}, {72 * 19 * 3 + 70, 20}};
  Access a = m.access(runs, at_ns(0));
  EXPECT_EQ(a.breakdown.overhead.count(), 2'300'000);
  EXPECT_EQ(a.end - at_ns(0), a.breakdown.total());
  EXPECT_GT(a.breakdown.seek.count(), 0);
  // 8 + 8 + 3 + 20 sectors; the last run is split over two tracks (2 + 18):
  // each piece rounds up separately.
  int64_t xfer = 0;
  for (uint32_t k : {8u, 8u, 3u, 2u, 18u})
    xfer += static_cast<int64_t>(std::ceil(k * 14'992'503.0 / 72));
  EXPECT_EQ(a.breakdown.transfer.count(), xfer);
}

TEST(DriveModel, EstimateDoesNotMoveTheHead) {
  DriveModel m(preset("st19101"), 10);
  SectorRun run{4096 * 5 + 256 * 3, 8};
  Access e = m.estimate(std::span(&run, 1), at_ns(1000), Transfer::kWrite);
  EXPECT_EQ(m.head(), (HeadPosition{0, 0}));
  Access a = m.access(std::span(&run, 1), at_ns(1000));
  EXPECT_EQ(m.head(), (HeadPosition{5, 3}));
  EXPECT_EQ(e.end, a.end);
  EXPECT_EQ(e.breakdown.seek.count(), sim_ms(0.28341 + 0.21659 * std::sqrt(5.0)).count());
}

TEST(DriveModel, BreakdownAlwaysAddsUpToTheServiceTime) {
  std::mt19937_64 rng(99);
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    const uint32_t cyl = 30;
    DriveModel m(g, cyl);
    std::uniform_int_distribution<uint64_t> psn(0, m.simulated_sectors() - 4000);
    std::uniform_int_distribution<uint32_t> len(1, 3000);
    std::uniform_int_distribution<int> nruns(1, 4);
    SimTime t = kSimEpoch;
    for (int i = 0; i < 2000; ++i) {
      std::vector<SectorRun> runs;
      for (int r = nruns(rng); r > 0; --r) runs.push_back({psn(rng), len(rng)});
      Access a = m.access(runs, t);
      ASSERT_EQ(a.end - t, a.breakdown.total()) << name;
      ASSERT_EQ(a.breakdown.overhead, g.controller_overhead) << name;
      ASSERT_GE(a.breakdown.rotation.count(), 0);
      t = a.end + SimDuration{static_cast<int64_t>(rng() % 1'000'000)};
    }
  }
}

// ---------------------------------------- update-in-place random writes

// Everything the hand calculation needs, typed in from the sources.
struct PresetNumbers {
  const char* name;
  uint64_t export_bytes;
  uint32_t expected_cylinders;  // export + metadata + 25% in whole cylinders
  uint32_t spt, heads, rpm;
  double overhead_ms, head_switch_ms;
  double a, b;
  uint32_t boundary;
  double c, e;
};

const PresetNumbers kPresets[] = {
    // Table 1 + Ruemmler & Wilkes. 32 MiB: 33,554,432 + 2 * 171 * 512 map
    // bytes, * 1.25 = 42,161,920 bytes over 700,416-byte cylinders -> 61.
    {"hp97560", 32 << 20, 61, 72, 19, 4002, 2.3, 2.5, 3.24, 0.400, 383, 8.00, 0.008},
    // Table 1 + the fitted curve (docs/geometry.md). 64 MiB: (67,108,864 +
    // 350,208) * 1.25 = 84,323,840 over 2 MiB cylinders -> 41.
    {"st19101", 64 << 20, 41, 256, 16, 10000, 0.1, 0.5, 0.28341, 0.21659, 101, 2.6815, 0.0011657},
    // Savvio manual. 42,161,920 over 4,064,256-byte cylinders -> 11.
    {"savvio10k4", 32 << 20, 11, 1323, 6, 10000, 0.2, 0.56, 0.5413, 0.01873, 70518, 3.0764,
     0.0000346},
};

double published_seek_ms(const PresetNumbers& p, uint64_t d) {
  if (d == 0) return 0;
  if (d < p.boundary) return p.a + p.b * std::sqrt(static_cast<double>(d));
  return p.c + p.e * static_cast<double>(d);
}

struct Expectation {
  double overhead_us, seek_us, head_switch_us, rotation_us, transfer_us;
  double total_us() const { return overhead_us + seek_us + head_switch_us + rotation_us + transfer_us; }
  double p_head_switch;  // between commands
};

// The hand model of a random 4 KiB write: the previous write's last sector
// and this write's first sector are on the tracks of two independent,
// uniformly chosen 4 KiB blocks of the export.
Expectation expect_random_write(const PresetNumbers& p) {
  const double rev_ns = 60e9 / p.rpm;
  const double sector_ns = rev_ns / p.spt;
  const uint64_t blocks = p.export_bytes / 4096;
  std::map<uint64_t, double> start_track, end_track;  // track -> probability
  double in_command_seek_ms = 0, in_command_switch = 0;
  for (uint64_t blk = 0; blk < blocks; ++blk) {
    uint64_t first = blk * 8, last = first + 7;
    uint64_t t0 = first / p.spt, t1 = last / p.spt;
    start_track[t0] += 1.0 / blocks;
    end_track[t1] += 1.0 / blocks;
    if (t0 != t1) {
      if (t0 / p.heads != t1 / p.heads) in_command_seek_ms += published_seek_ms(p, 1) / blocks;
      else in_command_switch += 1.0 / blocks;
    }
  }
  std::map<uint64_t, double> start_cyl, end_cyl;
  for (auto [t, pr] : start_track) start_cyl[t / p.heads] += pr;
  for (auto [t, pr] : end_track) end_cyl[t / p.heads] += pr;
  double seek_ms = in_command_seek_ms;
  for (auto [ce, pe] : end_cyl)
    for (auto [cs, ps] : start_cyl)
      seek_ms += pe * ps * published_seek_ms(p, ce > cs ? ce - cs : cs - ce);
  // Same cylinder, other head.
  double p_switch = 0;
  for (auto [ce, pe] : end_cyl) {
    if (!start_cyl.count(ce)) continue;
    double same_track = 0;
    for (uint32_t h = 0; h < p.heads; ++h) {
      uint64_t t = ce * p.heads + h;
      if (end_track.count(t) && start_track.count(t)) same_track += end_track[t] * start_track[t];
    }
    p_switch += pe * start_cyl[ce] - same_track;
  }
  Expectation x;
  x.overhead_us = p.overhead_ms * 1e3;
  x.seek_us = seek_ms * 1e3;
  x.p_head_switch = p_switch;
  x.head_switch_us = (p_switch + in_command_switch) * p.head_switch_ms * 1e3;
  x.rotation_us = rev_ns / 2 / 1e3;
  x.transfer_us = 8 * sector_ns / 1e3;
  return x;
}

TEST(InplaceServiceTime, HandModelOfSt19101IsTheClosedForm) {
  // Check the test's own arithmetic: 64 MiB of st19101 is exactly cylinders
  // 0..31 and no block straddles a track, so E[seek] must be the closed form
  // P(0) = 1/C, P(d) = 2 (C - d) / C^2 with C = 32, and the head-switch
  // probability (1/C)(1 - 1/H).
  const PresetNumbers& p = kPresets[1];
  ASSERT_STREQ(p.name, "st19101");
  Expectation x = expect_random_write(p);
  const double c = 32;
  double closed = 0;
  for (int d = 1; d < 32; ++d) closed += 2 * (c - d) / (c * c) * published_seek_ms(p, d);
  EXPECT_NEAR(x.seek_us, closed * 1e3, 1e-6);
  EXPECT_NEAR(x.p_head_switch, (1 / c) * (1 - 1.0 / 16), 1e-12);
}

class InplaceRandomWrite : public ::testing::TestWithParam<PresetNumbers> {};

// kWrites random 4 KiB writes, back to back, each checked for what is
// exact (overhead, transfer within rounding, one block); sums their
// service and the squares of their totals (us^2).
void random_writes(InplaceDisk& disk, const PresetNumbers& p, int writes, ServiceBreakdown* sum,
                   double* sum_sq_total_us2) {
  std::mt19937_64 rng(0x76c6d2024ULL);
  std::uniform_int_distribution<uint64_t> block(0, p.export_bytes / 4096 - 1);
  std::vector<std::byte> data(4096, std::byte{0xa5});
  const int64_t transfer_lo = static_cast<int64_t>(std::ceil(8 * 60e9 / p.rpm / p.spt - 1));
  SimTime t = kSimEpoch;
  for (int i = 0; i < writes; ++i) {
    Completion c = disk.write(block(rng) * 4096, data, /*fua=*/false, t);
    ASSERT_EQ(c.end - t, c.service.total());
    ASSERT_EQ(c.service.overhead, sim_ms(p.overhead_ms));
    ASSERT_GE(c.service.transfer.count(), transfer_lo);
    ASSERT_LE(c.service.transfer.count(), transfer_lo + 3);
    ASSERT_EQ(c.physical_blocks_written, 1u);
    *sum += c.service;
    const double tot = static_cast<double>(c.service.total().count()) / 1e3;
    *sum_sq_total_us2 += tot * tot;
    t = c.end;  // back to back
  }
}

void print_components(double overhead, double seek, double head_switch, double rotation,
                      double transfer) {
  std::cout << "overhead " << overhead << " + seek " << seek << " + head switch " << head_switch
            << " + rotation " << rotation << " + transfer " << std::setprecision(3) << transfer
            << std::setprecision(1) << std::endl;
}

TEST_P(InplaceRandomWrite, MeanServiceTimeIsOverheadSeekHalfTurnTransfer) {
  const PresetNumbers& p = GetParam();
  DriveGeometry g = preset(p.name);
  // The geometry the hand model assumes is the preset's.
  ASSERT_EQ(g.sectors_per_track, p.spt);
  ASSERT_EQ(g.tracks_per_cylinder, p.heads);
  ASSERT_EQ(g.rpm, p.rpm);
  ASSERT_EQ(g.controller_overhead, sim_ms(p.overhead_ms));
  ASSERT_EQ(g.head_switch, sim_ms(p.head_switch_ms));
  ASSERT_EQ(g.seek, SeekCurve(p.a, p.b, p.boundary, p.c, p.e));

  FormatOptions fo;
  fo.mode = DiskMode::kInplace;
  fo.export_bytes = p.export_bytes;
  fo.block_bytes = 4096;
  fo.spare_percent = 25;
  fo.geometry = g;
  Superblock sb = plan_image(fo);
  ASSERT_EQ(sb.simulated_cylinders, p.expected_cylinders);
  InplaceDisk disk(std::make_unique<MemoryBackingStore>(sb.image_bytes()), sb);

  constexpr int kWrites = 20000;
  ServiceBreakdown sum;
  double sum_sq_total = 0;
  ASSERT_NO_FATAL_FAILURE(random_writes(disk, p, kWrites, &sum, &sum_sq_total));
  auto mean_us = [&](SimDuration d) { return static_cast<double>(d.count()) / kWrites / 1e3; };
  const double total = mean_us(sum.total());
  const double sd_total = std::sqrt(sum_sq_total / kWrites - total * total);
  Expectation x = expect_random_write(p);
  std::cout << std::fixed << std::setprecision(1) << "[ inplace ] " << p.name << ": "
            << kWrites << " random 4 KiB writes over " << (p.export_bytes >> 20) << " MiB ("
            << sb.simulated_cylinders << " simulated cylinders)\n"
            << "[ inplace ]   simulated mean " << total << " us (sd " << sd_total << ") = ";
  print_components(mean_us(sum.overhead), mean_us(sum.seek), mean_us(sum.head_switch),
                   mean_us(sum.rotation), mean_us(sum.transfer));
  std::cout << "[ inplace ]   by hand        " << x.total_us() << " us      = ";
  print_components(x.overhead_us, x.seek_us, x.head_switch_us, x.rotation_us, x.transfer_us);

  // Exact components: Table 1's overhead on every command, 8 sectors of
  // transfer (each piece rounded up to the nanosecond).
  EXPECT_EQ(sum.overhead.count(), kWrites * sim_ms(p.overhead_ms).count());
  EXPECT_NEAR(mean_us(sum.transfer), x.transfer_us, 0.002);
  if (p.spt % 8 == 0) {
    // No block straddles a track: every transfer is exactly 8 sectors, up.
    EXPECT_EQ(sum.transfer.count(),
              kWrites * static_cast<int64_t>(std::ceil(8 * (60'000'000'000 / p.rpm) /
                                                       static_cast<double>(p.spt))));
  }

  // Random components: within 3% overall, and each within five standard
  // errors of its expectation (the seed is fixed, so this is deterministic).
  EXPECT_NEAR(total, x.total_us(), 0.03 * x.total_us());
  EXPECT_NEAR(total, x.total_us(), 5 * sd_total / std::sqrt(kWrites));
  EXPECT_NEAR(mean_us(sum.seek), x.seek_us, 0.03 * x.seek_us);
  // Rotation: uniform over a turn, sd = rev / sqrt(12).
  const double rot_se = (60e6 / p.rpm) / std::sqrt(12.0) / std::sqrt(kWrites);
  EXPECT_NEAR(mean_us(sum.rotation), x.rotation_us, 5 * rot_se);
  // Head switches: a Bernoulli count.
  const double q = x.head_switch_us / (p.head_switch_ms * 1e3);
  const double hs_se = p.head_switch_ms * 1e3 * std::sqrt(q * (1 - q) / kWrites);
  EXPECT_NEAR(mean_us(sum.head_switch), x.head_switch_us, 5 * hs_se);
}

INSTANTIATE_TEST_SUITE_P(Presets, InplaceRandomWrite, ::testing::ValuesIn(kPresets),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace vld
