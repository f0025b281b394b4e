// The drive's one-track read-ahead buffer (geometry/track_buffer.h) and
// reads through it (DriveModel::read): a whole track read from any moment
// costs one revolution, buffered sectors cost no media time (even after a
// write elsewhere), sectors passing under the idle head are buffered,
// another track replaces the buffer, the buffer off is access(); and a
// scattered file read in logical order, by hand, with the buffer and
// without.
//
// All numbers are st19101 (geometry/presets.cc): 256 sectors per track,
// 10,000 rpm = 6,000,000 ns per revolution, so one sector (one angular slot)
// is 23,437.5 ns and slot k starts k * 23,437.5 ns into each revolution;
// controller overhead 100,000 ns; head switch 500,000 ns; track skew
// ceil(500,000 / 23,437.5) = 22 sectors, so sector s of head h on cylinder 0
// passes at slot (s + 22 h) mod 256.
//
// Rules of DriveModel::read used below (drive_model.cc):
//  - read-ahead starts when the head reaches the track (after the seek or
//    head switch) and buffers every slot that passes *wholly* under the head
//    from the first slot starting at or after that moment (next_slot);
//  - a read of sectors not all buffered waits for the first wanted one in
//    rotational order from next_slot(t) and ends when the last has passed:
//    the end is t + wait to the first + transfer_time(last - first + 1);
//  - transfer_time(n) = ceil(n * 23,437.5) ns.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "geometry/drive_model.h"
#include "geometry/presets.h"
#include "geometry/track_buffer.h"

namespace vld {
namespace {

DriveGeometry st19101() {
  auto g = find_preset("st19101");
  EXPECT_TRUE(g.has_value());
  return g.value_or(DriveGeometry{});
}

SimTime at_ns(int64_t ns) { return kSimEpoch + SimDuration{ns}; }
int64_t ns_of(SimTime t) { return (t - kSimEpoch).count(); }

constexpr int64_t kRev = 6'000'000;
constexpr int64_t kOverhead = 100'000;
constexpr int64_t kHeadSwitch = 500'000;

// The geometry these hand calculations assume.
void check_geometry(const DriveGeometry& g) {
  ASSERT_EQ(g.sectors_per_track, 256u);
  ASSERT_EQ(g.revolution().count(), kRev);
  ASSERT_EQ(g.controller_overhead.count(), kOverhead);
  ASSERT_EQ(g.head_switch.count(), kHeadSwitch);
  ASSERT_EQ(g.track_skew_sectors, 22u);
}

Access read1(DriveModel& m, uint64_t psn, uint32_t count, int64_t start_ns,
             bool charge_overhead = true) {
  SectorRun r{psn, count};
  return m.read(std::span(&r, 1), at_ns(start_ns), charge_overhead);
}

void expect_breakdown(const Access& a, int64_t start, int64_t overhead, int64_t seek,
                      int64_t head_switch, int64_t rotation, int64_t transfer) {
  EXPECT_EQ(a.breakdown.overhead.count(), overhead);
  EXPECT_EQ(a.breakdown.seek.count(), seek);
  EXPECT_EQ(a.breakdown.head_switch.count(), head_switch);
  EXPECT_EQ(a.breakdown.rotation.count(), rotation);
  EXPECT_EQ(a.breakdown.transfer.count(), transfer);
  EXPECT_EQ(ns_of(a.end) - start, a.breakdown.total().count());
}

// ------------------------------------------------------------ TrackBuffer

TEST(TrackBuffer, StartsEmptyOnNoTrack) {
  TrackBuffer b(256);
  EXPECT_FALSE(b.track().has_value());
  EXPECT_FALSE(b.full());
  for (uint32_t s = 0; s < 256; ++s) EXPECT_FALSE(b.has(s)) << s;
  // No track: nothing is buffered, not even an empty range of track 0.
  EXPECT_FALSE(b.has_all(0, 0, 1));
}

TEST(TrackBuffer, HasAllOnlyForItsTrackAndOnlyWhenEverySectorIsThere) {
  TrackBuffer b(256);
  b.start(7, 256);
  ASSERT_EQ(b.track(), 7u);
  for (uint32_t s = 60; s < 70; ++s) b.add(s);  // crosses a 64-bit word
  EXPECT_TRUE(b.has_all(7, 60, 10));
  EXPECT_TRUE(b.has_all(7, 63, 2));
  EXPECT_TRUE(b.has_all(7, 64, 6));
  EXPECT_FALSE(b.has_all(7, 59, 2));  // 59 missing
  EXPECT_FALSE(b.has_all(7, 69, 2));  // 70 missing
  EXPECT_FALSE(b.has_all(8, 60, 10)) << "another track is never buffered";
  EXPECT_FALSE(b.has(59));
  EXPECT_TRUE(b.has(60));
  EXPECT_TRUE(b.has(69));
  EXPECT_FALSE(b.has(70));
  EXPECT_FALSE(b.full());
}

TEST(TrackBuffer, FullAfterEverySectorOnceAndAddIsIdempotent) {
  // 72 sectors (hp97560): the last word is partly used.
  TrackBuffer b(72);
  b.start(3, 72);
  for (uint32_t s = 0; s < 71; ++s) {
    b.add(s);
    b.add(s);  // counted once
  }
  EXPECT_FALSE(b.full()) << "71 of 72 sectors, each added twice";
  EXPECT_FALSE(b.has_all(3, 0, 72));
  b.add(71);
  EXPECT_TRUE(b.full());
  EXPECT_TRUE(b.has_all(3, 0, 72));
  EXPECT_TRUE(b.has_all(3, 5, 1));
  EXPECT_FALSE(b.has_all(4, 5, 1)) << "full, but of track 3";
}

TEST(TrackBuffer, StartEmptiesAndRededicatesClearForgetsTheTrack) {
  TrackBuffer b(256);
  b.start(1, 256);
  for (uint32_t s = 0; s < 256; ++s) b.add(s);
  ASSERT_TRUE(b.full());
  b.start(2, 256);
  EXPECT_EQ(b.track(), 2u);
  EXPECT_FALSE(b.full());
  EXPECT_FALSE(b.has(0));
  EXPECT_FALSE(b.has(255));
  EXPECT_FALSE(b.has_all(1, 0, 1));
  EXPECT_FALSE(b.has_all(2, 0, 1));
  // Refilling counts from zero again.
  for (uint32_t s = 0; s < 255; ++s) b.add(s);
  EXPECT_FALSE(b.full());
  b.add(255);
  EXPECT_TRUE(b.full());
  b.clear();
  EXPECT_FALSE(b.track().has_value());
  EXPECT_FALSE(b.full());
  EXPECT_FALSE(b.has(0));
  EXPECT_FALSE(b.has_all(2, 0, 1));
}

// ------------------------------------------------------ DriveModel::read

// A whole track from an arbitrary moment: the head starts reading at the
// next slot boundary, wherever that is, and one revolution later every
// sector has passed. No waiting for sector 0 (a zero-latency read).
TEST(TrackBufferRead, WholeTrackCostsOneRevolutionFromAnyStart) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  {
    DriveModel m(g, 4);
    // Start 1,234,567: after the overhead t = 1,334,567 ns, i.e.
    // 1,334,567 * 256 = 341,649,152 slot units (slot k starts at
    // k * 6,000,000 units): inside slot 56 (336,000,000); slot 57 starts at
    // 342,000,000 units, ceil(350,848 / 256) = 1,371 ns later. Then all 256
    // sectors pass in one revolution.
    const int64_t start = 1'234'567;
    SectorRun whole{0, 256};
    // Without the buffer, the same read waits for sector 0 (slot 0 of the
    // next turn): 6,000,000 - 1,334,567 = 4,665,433 ns.
    Access e = m.estimate(std::span(&whole, 1), at_ns(start), Transfer::kRead);
    EXPECT_EQ(ns_of(e.end), start + kOverhead + 4'665'433 + kRev);
    Access a = m.read(std::span(&whole, 1), at_ns(start));
    EXPECT_EQ(ns_of(a.end), start + kOverhead + 1'371 + kRev);
    expect_breakdown(a, start, kOverhead, 0, 0, 1'371, kRev);
    EXPECT_EQ(m.buffer().track(), 0u);
    EXPECT_TRUE(m.buffer().full());
    EXPECT_EQ(m.head(), (HeadPosition{0, 0}));
  }
  {
    // On a slot boundary: t = 2,243,750 + 100,000 = 2,343,750 = the start of
    // slot 100 (100 * 23,437.5): not a nanosecond of rotation.
    DriveModel m(g, 4);
    const int64_t start = 2'243'750;
    Access a = read1(m, 0, 256, start);
    EXPECT_EQ(ns_of(a.end), start + kOverhead + kRev);
    expect_breakdown(a, start, kOverhead, 0, 0, 0, kRev);
    EXPECT_TRUE(m.buffer().full());
  }
  {
    // Another head: track (0,5) is psn 5 * 256 = 1280. From t = 0: overhead
    // to 100,000, head switch to 600,000 = slot 25.6; slot 26 starts at
    // 609,375: 9,375 ns of rotation, then one revolution.
    DriveModel m(g, 4);
    Access a = read1(m, 1280, 256, 0);
    EXPECT_EQ(ns_of(a.end), kOverhead + kHeadSwitch + 9'375 + kRev);
    expect_breakdown(a, 0, kOverhead, 0, kHeadSwitch, 9'375, kRev);
    EXPECT_EQ(m.buffer().track(), 5u);
    EXPECT_TRUE(m.buffer().full());
    EXPECT_EQ(m.head(), (HeadPosition{0, 5}));
  }
}

// Once the track is buffered, any of its sectors cost only the controller
// overhead (nothing without it), the head stays where it is, and a write
// elsewhere neither discards the buffer nor makes the head come back.
TEST(TrackBufferRead, BufferedTrackCostsNoMediaTimeEvenAfterAWriteElsewhere) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  DriveModel m(g, 4);
  // Track 0 from kRev - 100,000: the overhead ends at slot 0 of the second
  // turn, the track has passed at 2 * kRev.
  Access full = read1(m, 0, 256, kRev - kOverhead);
  ASSERT_EQ(ns_of(full.end), 2 * kRev);
  ASSERT_TRUE(m.buffer().full());

  int64_t t = ns_of(full.end) + 12'345;  // any moment later
  const std::vector<std::vector<SectorRun>> reads = {
      {{0, 1}}, {{255, 1}}, {{100, 50}}, {{0, 256}}, {{200, 8}, {3, 8}, {77, 1}}};
  for (const auto& runs : reads) {
    Access a = m.read(runs, at_ns(t));
    EXPECT_EQ(ns_of(a.end), t + kOverhead);
    expect_breakdown(a, t, kOverhead, 0, 0, 0, 0);
    Access b = m.read(runs, a.end, /*charge_overhead=*/false);
    EXPECT_EQ(b.end, a.end) << "no overhead, no media time";
    EXPECT_EQ(m.head(), (HeadPosition{0, 0}));
    t = ns_of(b.end) + 1'000;
  }

  // A write on cylinder 2, head 7 (psn 2 * 4096 + 7 * 256 = 9984): the head
  // goes there. The buffer still holds track 0, whole.
  SectorRun w{9984 + 40, 8};
  Access wa = m.access(std::span(&w, 1), at_ns(t));
  EXPECT_GT(wa.breakdown.seek.count(), 0);
  ASSERT_EQ(m.head(), (HeadPosition{2, 7}));
  EXPECT_EQ(m.buffer().track(), 0u);
  EXPECT_TRUE(m.buffer().full());
  t = ns_of(wa.end);
  for (const auto& runs : reads) {
    Access a = m.read(runs, at_ns(t));
    EXPECT_EQ(ns_of(a.end), t + kOverhead);
    expect_breakdown(a, t, kOverhead, 0, 0, 0, 0);
    EXPECT_EQ(m.head(), (HeadPosition{2, 7})) << "a buffered read does not move the head";
    t = ns_of(a.end);
  }
}

// Sectors passing under the head while the drive sits idle on a track it
// read are buffered; sectors that have not passed cost the wait until they
// do.
TEST(TrackBufferRead, IdleReadAheadBuffersWhatPassedUnderTheHead) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  DriveModel m(g, 4);
  // Read 1: sectors 10..17 of track 0 (slots 10..17) from t = 0. After the
  // overhead the head is at 100,000 ns = slot 4.27: read-ahead starts with
  // slot 5 (117,187.5 ns). Sector 10 starts at 234,375: 134,375 ns of
  // rotation; 8 sectors, 187,500 ns; ends at 421,875 = the start of slot 18.
  Access r1 = read1(m, 10, 8, 0);
  EXPECT_EQ(ns_of(r1.end), 421'875);
  expect_breakdown(r1, 0, kOverhead, 0, 0, 134'375, 187'500);
  // Slots 5..17 have passed wholly: sectors 5..17 are buffered.
  for (uint32_t s = 0; s < 256; ++s)
    EXPECT_EQ(m.buffer().has(s), s >= 5 && s <= 17) << "sector " << s;
  EXPECT_EQ(m.buffer().track(), 0u);

  // Read 2, at 1,900,000: t = 2,000,000 after the overhead = slot 85.33
  // (slot 85 began at 1,992,187.5). Since 117,188 (the first read-ahead
  // slot's start, rounded up) floor((2,000,000 - 117,188 + 16) * 256 /
  // 6,000,000) = 80 slots have passed: sectors 5..84. Sectors 100..107 have
  // not: slot 100 starts at 2,343,750, 343,750 ns on; the read ends when
  // sector 107 has passed, at 2,531,250 (slot 108).
  Access r2 = read1(m, 100, 8, 1'900'000);
  EXPECT_EQ(ns_of(r2.end), 2'531'250);
  expect_breakdown(r2, 1'900'000, kOverhead, 0, 0, 343'750, 187'500);

  // Read 3, when read 2 ended: sectors 40..47 passed long ago, while the
  // drive was idle between reads 1 and 2: the overhead only.
  Access r3 = read1(m, 40, 8, 2'531'250);
  EXPECT_EQ(ns_of(r3.end), 2'531'250 + kOverhead);
  expect_breakdown(r3, 2'531'250, kOverhead, 0, 0, 0, 0);
  // So did 18..84 (idle after read 1) and 85..107 (before and during read 2).
  EXPECT_TRUE(m.buffer().has_all(0, 5, 103));

  // Read 4, when read 3 ended: sectors 0..4 passed before the head was
  // reading (slots 0..4 of the first turn): not buffered. At t = 2,731,250
  // (slot 116.53) the next slot 0 is 6,000,000 - 2,731,250 = 3,268,750 ns
  // away; 5 sectors take ceil(117,187.5) = 117,188 ns.
  EXPECT_FALSE(m.buffer().has(0));
  EXPECT_FALSE(m.buffer().has(4));
  Access r4 = read1(m, 0, 5, 2'631'250);
  EXPECT_EQ(ns_of(r4.end), 2'731'250 + 3'268'750 + 117'188);
  expect_breakdown(r4, 2'631'250, kOverhead, 0, 0, 3'268'750, 117'188);
  // A revolution (6,000,016 >= 6,000,000 ns) has now passed since 117,188:
  // the whole track is in the buffer.
  EXPECT_TRUE(m.buffer().full());
  EXPECT_EQ(m.head(), (HeadPosition{0, 0}));
}

// A sector the head is in the middle of when the read arrives: if the
// drive's read-ahead was already running on the track when that sector
// began to pass, it is being read and is complete when it has passed; if
// not (the head just arrived, or the drive was writing), it costs a
// revolution.
TEST(TrackBufferRead, ASectorHalfPassedIsReadIfReadAheadWasRunning) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  DriveModel m(g, 4);
  // As above: read-ahead on track 0 from slot 5 (117,188 ns).
  ASSERT_EQ(ns_of(read1(m, 10, 8, 0).end), 421'875);
  // At t = 2,731,250 (commands without overhead from here) the head is in
  // slot 116 (2,718,750 .. 2,742,187.5): floor((2,731,250 - 117,188 + 16)
  // * 256 / 6e6) = 111 slots have passed, sectors 5..115. So 114 and 115
  // cost nothing...
  const int64_t t = 2'731'250;
  Access buffered = read1(m, 114, 2, t, /*charge_overhead=*/false);
  EXPECT_EQ(ns_of(buffered.end), t);
  // ...and of 114..117, 116 is under the head and being read since its
  // start (2,718,750 >= 117,188): it is complete when slot 117 starts, a
  // wait of 10,937.5 -> 10,938 ns; 117 then passes (23,438 ns). The read
  // ends 34,376 ns after t, all of it wanted sectors passing.
  Access a = read1(m, 114, 4, t, /*charge_overhead=*/false);
  EXPECT_EQ(ns_of(a.end), t + 10'938 + 23'438);
  expect_breakdown(a, t, 0, 0, 0, 0, 10'938 + 23'438);
  EXPECT_FALSE(m.buffer().full());

  // A fresh drive: read 10..17 as above (ends at slot 18, 421,875), then
  // write sectors 30..31 of the same track (slot 30 starts at 703,125; the
  // write ends at slot 32, 750,000): writing stops the read-ahead.
  DriveModel w(g, 4);
  ASSERT_EQ(ns_of(read1(w, 10, 8, 0).end), 421'875);
  SectorRun wr{30, 2};
  ASSERT_EQ(ns_of(w.access(std::span(&wr, 1), at_ns(421'875), false).end), 750'000);
  // Half a sector later (761,719), read 32..33: 32 began passing before
  // this read, while the drive was writing, so nobody read it: 33 comes
  // first (slot 33 at 773,437.5: a wait of 11,718.5 -> 11,719 ns), and
  // 32 a whole revolution after 33 began: the read ends 11,719 + 6,000,000
  // ns after it arrived; two sectors (46,875 ns) of that are transfer.
  const int64_t t2 = 761'719;
  Access b = read1(w, 32, 2, t2, /*charge_overhead=*/false);
  EXPECT_EQ(ns_of(b.end), t2 + 11'719 + kRev);
  expect_breakdown(b, t2, 0, 0, 0, 11'719 + kRev - 46'875, 46'875);
}

// Reading another track empties the buffer and dedicates it to that track:
// the old track's sectors cost media time again.
TEST(TrackBufferRead, ReadingAnotherTrackReplacesTheBuffer) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  DriveModel m(g, 4);
  ASSERT_EQ(ns_of(read1(m, 0, 256, kRev - kOverhead).end), 2 * kRev);
  ASSERT_TRUE(m.buffer().full());
  ASSERT_EQ(m.buffer().track(), 0u);

  // Sectors 40..47 of track (0,1) (psn 296..303), at slots 62..69. From
  // 12,000,000: overhead, head switch: t = 12,600,000 = 600,000 into the
  // turn = slot 25.6; read-ahead starts at slot 26 (sector 4). Slot 62
  // starts at 1,453,125: 853,125 ns of rotation, then 187,500.
  Access a = read1(m, 256 + 40, 8, 2 * kRev);
  EXPECT_EQ(ns_of(a.end), 2 * kRev + kOverhead + kHeadSwitch + 853'125 + 187'500);
  expect_breakdown(a, 2 * kRev, kOverhead, 0, kHeadSwitch, 853'125, 187'500);
  EXPECT_EQ(m.buffer().track(), 1u);
  EXPECT_FALSE(m.buffer().full());
  // Slots 26..69 passed: sectors 4..47 of track 1, nothing of track 0.
  EXPECT_TRUE(m.buffer().has_all(1, 4, 44));
  EXPECT_FALSE(m.buffer().has(3));
  EXPECT_FALSE(m.buffer().has(48));
  EXPECT_FALSE(m.buffer().has_all(0, 0, 8));

  // Track 0's sectors 0..7 again, at 13,640,625: overhead and the head
  // switch back, t = 14,240,625 = 2,240,625 into the turn (slot 95.6);
  // slot 0 is 3,759,375 ns away: ends at 3 * kRev + 187,500.
  const int64_t start = ns_of(a.end);
  ASSERT_EQ(start, 13'640'625);
  Access b = read1(m, 0, 8, start);
  EXPECT_EQ(ns_of(b.end), 3 * kRev + 187'500);
  expect_breakdown(b, start, kOverhead, 0, kHeadSwitch, 3'759'375, 187'500);
  EXPECT_EQ(m.buffer().track(), 0u);
  EXPECT_FALSE(m.buffer().full());
  EXPECT_EQ(m.head(), (HeadPosition{0, 0}));
}

// set_track_buffer(false): read() costs exactly what access() costs (and
// estimate() predicts), every time, and moves the head as access() does.
TEST(TrackBufferRead, WithTheBufferOffReadIsAccess) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  {
    // By hand: track 0, then its sectors 0..7 again. With the buffer on the
    // second read is the overhead; off, it waits from t = 2 kRev + 100,000
    // for slot 0 of the next turn (5,900,000 ns) and transfers 187,500.
    DriveModel on(g, 4), off(g, 4);
    off.set_track_buffer(false);
    EXPECT_FALSE(off.track_buffer());
    EXPECT_TRUE(on.track_buffer());
    for (DriveModel* m : {&on, &off}) ASSERT_EQ(ns_of(read1(*m, 0, 256, kRev - kOverhead).end), 2 * kRev);
    EXPECT_FALSE(off.buffer().track().has_value()) << "the buffer off buffers nothing";
    EXPECT_EQ(ns_of(read1(on, 0, 8, 2 * kRev).end), 2 * kRev + kOverhead);
    Access a = read1(off, 0, 8, 2 * kRev);
    EXPECT_EQ(ns_of(a.end), 2 * kRev + kOverhead + 5'900'000 + 187'500);
    expect_breakdown(a, 2 * kRev, kOverhead, 0, 0, 5'900'000, 187'500);
  }
  // Random commands (several runs, crossing tracks and cylinders, repeated
  // and overlapping) against a twin model that writes them with access().
  DriveModel m(g, 8), twin(g, 8);
  m.set_track_buffer(false);
  std::mt19937_64 rng(4242);
  const uint64_t sectors = m.simulated_sectors();
  int64_t t = 0;
  std::vector<SectorRun> last;
  for (int i = 0; i < 500; ++i) {
    std::vector<SectorRun> runs;
    if (i % 3 == 0 && !last.empty()) {
      runs = last;  // the same again: free with the buffer on, not here
    } else {
      for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k)
        runs.push_back({rng() % (sectors - 600), 1 + static_cast<uint32_t>(rng() % 520)});
    }
    const bool overhead = rng() % 4 != 0;
    Access e = m.estimate(runs, at_ns(t), Transfer::kRead, overhead);
    Access r = m.read(runs, at_ns(t), overhead);
    Access w = twin.access(runs, at_ns(t), overhead);
    ASSERT_EQ(r.end, e.end) << i;
    ASSERT_EQ(r.end, w.end) << i;
    ASSERT_EQ(r.breakdown.overhead, e.breakdown.overhead) << i;
    ASSERT_EQ(r.breakdown.seek, e.breakdown.seek) << i;
    ASSERT_EQ(r.breakdown.head_switch, e.breakdown.head_switch) << i;
    ASSERT_EQ(r.breakdown.rotation, e.breakdown.rotation) << i;
    ASSERT_EQ(r.breakdown.transfer, e.breakdown.transfer) << i;
    ASSERT_EQ(m.head(), twin.head()) << i;
    ASSERT_FALSE(m.buffer().track().has_value()) << i;
    last = runs;
    t = ns_of(r.end) + static_cast<int64_t>(rng() % 3'000'000);
  }
}

// The acceptance test: a file of 8 blocks of 8 sectors, eager-written so its
// blocks lie on one track in scrambled rotational order, read sequentially
// (block 0, 1, ..., 7) as 8 commands, each arriving when the previous one
// ended. With the track buffer, the first command pays the head switch and
// the wait for its block while the track streams into the buffer; later
// commands find their block buffered (overhead only) or wait until it
// passes. Without, every command waits for its block.
TEST(TrackBufferRead, ScatteredFileReadSequentiallyByHand) {
  const DriveGeometry g = st19101();
  check_geometry(g);
  if (HasFatalFailure()) return;
  // Track (0,3): psn 768 + sector; sector s passes at slot (s + 66) mod 256.
  const uint32_t kTrack = 3;
  const uint32_t sector[8] = {128, 32, 200, 64, 0, 168, 96, 224};
  // Their slots, (s + 66) mod 256:
  const uint32_t slot[8] = {194, 98, 10, 130, 66, 234, 162, 34};
  for (uint32_t i = 0; i < 8; ++i) ASSERT_EQ(g.angular_slot(Chs{0, kTrack, sector[i]}), slot[i]);

  // --- With the buffer: ends of the 8 commands, by hand.
  // Cmd 0 at 0: overhead, head switch: t = 600,000 = slot 25.6; read-ahead
  //   from slot 26 (609,375, sector 216). Block 0 at slot 194 (4,546,875):
  //   3,946,875 of rotation, 187,500 of transfer: ends 4,734,375 (slot 202).
  //   Buffered: slots 26..201 = sectors 216..255 and 0..135.
  // Cmd 1 at 4,734,375: t = 4,834,375: floor((4,834,375 - 609,375 + 16) *
  //   256 / 6e6) = 180 slots passed (26..205 = sectors ..139). Block 1
  //   (32..39) is buffered: ends at t.
  // Cmd 2 at 4,834,375: t = 4,934,375 (slot 210.53): 184 slots passed
  //   (sectors ..143). Block 2 (200..207, slots 10..17) is not: slot 10 of
  //   the next turn is 6,234,375, 1,300,000 away; ends 6,421,875.
  // Cmd 3 at 6,421,875: t = 6,521,875: 252 slots passed (all but slots
  //   22..25 = sectors 212..215). Block 3 (64..71) buffered: ends at t.
  // Cmd 4 at 6,521,875: t = 6,621,875: more than a turn since 609,375: the
  //   track is full. Block 4 and then 5, 6, 7: the overhead each.
  const int64_t with_buffer[8] = {4'734'375, 4'834'375, 6'421'875, 6'521'875,
                                  6'621'875, 6'721'875, 6'821'875, 6'921'875};
  // --- Without: each command waits for its block. A command starts at the
  // end of the previous block (slot e, a whole even slot, so every time is
  // a whole nanosecond) and its overhead takes it to slot e + 4.27; its
  // block at slot s is (s - e) mod 256 slots on (>= 5 here, so no turn is
  // lost), and it ends 8 slots later: (s - e) mod 256 + 8 slots of 23,437.5.
  //   cmd 0: as above, ends at slot 202          4,734,375
  //   cmd 1: e 202, s  98: 152 + 8 = 160 slots  +3,750,000 =  8,484,375
  //   cmd 2: e 106, s  10: 160 + 8 = 168 slots  +3,937,500 = 12,421,875
  //   cmd 3: e  18, s 130: 112 + 8 = 120 slots  +2,812,500 = 15,234,375
  //   cmd 4: e 138, s  66: 184 + 8 = 192 slots  +4,500,000 = 19,734,375
  //   cmd 5: e  74, s 234: 160 + 8 = 168 slots  +3,937,500 = 23,671,875
  //   cmd 6: e 242, s 162: 176 + 8 = 184 slots  +4,312,500 = 27,984,375
  //   cmd 7: e 170, s  34: 120 + 8 = 128 slots  +3,000,000 = 30,984,375
  const int64_t without_buffer[8] = {4'734'375,  8'484'375,  12'421'875, 15'234'375,
                                     19'734'375, 23'671'875, 27'984'375, 30'984'375};

  for (bool buffered : {true, false}) {
    SCOPED_TRACE(buffered ? "track buffer on" : "track buffer off");
    DriveModel m(g, 4);
    m.set_track_buffer(buffered);
    ServiceBreakdown sum;
    SimTime t = kSimEpoch;
    for (int i = 0; i < 8; ++i) {
      SectorRun r{uint64_t{kTrack} * 256 + sector[i], 8};
      Access a = m.read(std::span(&r, 1), t, /*charge_overhead=*/true);
      EXPECT_EQ(ns_of(a.end), (buffered ? with_buffer : without_buffer)[i]) << "command " << i;
      EXPECT_EQ(a.end - t, a.breakdown.total()) << "command " << i;
      sum += a.breakdown;
      t = a.end;
    }
    EXPECT_EQ(sum.overhead.count(), 8 * kOverhead);
    EXPECT_EQ(sum.head_switch.count(), kHeadSwitch);
    EXPECT_EQ(sum.seek.count(), 0);
    if (buffered) {
      // Two commands touched the media: blocks 0 and 2.
      EXPECT_EQ(sum.transfer.count(), 2 * 187'500);
      EXPECT_EQ(sum.rotation.count(), 3'946'875 + 1'300'000);
      EXPECT_EQ(ns_of(t), 6'921'875);
      EXPECT_TRUE(m.buffer().full());
    } else {
      EXPECT_EQ(sum.transfer.count(), 8 * 187'500);
      EXPECT_EQ(ns_of(t), 30'984'375);
    }
  }
  // The buffer makes the sequential read of the scattered file 4.5x faster:
  // 6.9 ms against 31.0 ms.
  EXPECT_LT(with_buffer[7] * 4, without_buffer[7]);
}

}  // namespace
}  // namespace vld
