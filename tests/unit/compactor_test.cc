// The idle-time compactor: Compactor::choose (qualification and the three
// policies) on hand-made censuses; and VldDisk compaction through
// DiskController: every byte kept (across rounds of writes and idle grants,
// a clean reopen and unclean stops mid-compaction), empty tracks made, a
// request waiting for at most the step in progress, compacted tracks filled
// to the threshold again, the compactor off doing nothing, and the same
// workload and grants giving the same drive twice.
//
// The disks are small: 8 MiB exported on an st19101 with spare=5, which
// plan_image sizes to 5 cylinders (80 tracks, 2560 blocks of 4 KiB), so the
// export is 80% of the platters and the cylinder window (32 by default) is
// the whole disk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/vld/compactor.h"
#include "core/vld/track_lists.h"
#include "core/store/crash_store.h"
#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "stats/mode_report_json.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint32_t kSpt = 256;

SimTime at_us(double us) { return kSimEpoch + sim_us(us); }

// ============================================================ Compactor

TEST(CompactionPolicy, NamesParseBack) {
  for (CompactionPolicy p :
       {CompactionPolicy::kRandom, CompactionPolicy::kFewestLive, CompactionPolicy::kCostBenefit})
    EXPECT_EQ(parse_compaction_policy(policy_name(p)), p);
  EXPECT_EQ(parse_compaction_policy("fewest-live"), CompactionPolicy::kFewestLive);
  EXPECT_FALSE(parse_compaction_policy("greedy").has_value());
  EXPECT_FALSE(parse_compaction_policy("").has_value());
  EXPECT_EQ(CompactorOptions{}.policy, CompactionPolicy::kFewestLive);
  EXPECT_TRUE(CompactorOptions{}.enabled);
}

Compactor make_compactor(CompactionPolicy p, uint32_t block_sectors = 8, uint64_t seed = 0) {
  CompactorOptions o;
  o.policy = p;
  o.seed = seed;
  return Compactor(o, block_sectors);
}

// A track that takes anything and is never a victim itself (the fill
// track), with `holes` block holes.
TrackCensus sink(uint32_t track, uint32_t holes) {
  return TrackCensus{track, kSpt, 10, holes, kSimEpoch, /*may_be_victim=*/false};
}
TrackCensus candidate(uint32_t track, uint32_t used, uint32_t holes = 0,
                      SimTime last_write = kSimEpoch) {
  return TrackCensus{track, kSpt, used, holes, last_write, true};
}

// Each rule on its own: the census is one candidate and a sink with room.
TEST(Compactor, QualificationRules) {
  for (CompactionPolicy p :
       {CompactionPolicy::kRandom, CompactionPolicy::kFewestLive, CompactionPolicy::kCostBenefit}) {
    SCOPED_TRACE(policy_name(p));
    Compactor c = make_compactor(p);
    auto choose = [&](std::vector<TrackCensus> v) { return c.choose(v, at_us(1000)); };
    // Nothing at all, or only the sink.
    EXPECT_FALSE(choose({}).has_value());
    EXPECT_FALSE(choose({sink(1, 1000)}).has_value()) << "the fill track is never a victim";
    // A track holding data qualifies.
    EXPECT_EQ(choose({sink(1, 1000), candidate(5, 100)}), 5u);
    // An empty track: nothing to gain.
    EXPECT_FALSE(choose({sink(1, 1000), candidate(5, 0)}).has_value());
    // The fill track, however empty it is otherwise.
    EXPECT_FALSE(
        choose({sink(1, 1000), TrackCensus{5, kSpt, 100, 0, kSimEpoch, false}}).has_value());
    // kMaxVictimUse = 0.9 of 256 = 230.4 sectors: 230 may be emptied, 231 not.
    EXPECT_EQ(choose({sink(1, 1000), candidate(5, 230)}), 5u);
    EXPECT_FALSE(choose({sink(1, 1000), candidate(5, 231)}).has_value());
    EXPECT_FALSE(choose({sink(1, 1000), candidate(5, 256)}).has_value());
  }
}

// Fewer free sectors than one block: emptying gains nothing. With 8-sector
// blocks kMaxVictimUse hides the rule (free < 8 means used > 248 > 230.4);
// with 64-sector blocks (32 KiB) it stands alone: used 192 leaves 64 free
// (qualifies, 192 <= 230.4), 193 leaves 63 (does not).
TEST(Compactor, FewerFreeSectorsThanABlockDoesNotQualify) {
  Compactor c = make_compactor(CompactionPolicy::kFewestLive, /*block_sectors=*/64);
  std::vector<TrackCensus> v = {sink(1, 1000), candidate(5, 192)};
  EXPECT_EQ(c.choose(v, kSimEpoch), 5u);
  v[1].used_sectors = 193;
  EXPECT_FALSE(c.choose(v, kSimEpoch).has_value());
  // Block-sized: 8-sector blocks, used 248 leaves exactly one block free but
  // is over kMaxVictimUse; so is 249. The rule that applies here is the use.
  Compactor c8 = make_compactor(CompactionPolicy::kFewestLive, 8);
  v = {sink(1, 1000), candidate(5, 248)};
  EXPECT_FALSE(c8.choose(v, kSimEpoch).has_value());
}

// Its blocks must fit into the block holes of the *other* tracks, with one
// to spare (for the map sectors the moves write): ceil(used / 8) + 1 holes.
TEST(Compactor, NeedsEnoughBlockHolesElsewhere) {
  Compactor c = make_compactor(CompactionPolicy::kFewestLive);
  // 80 used sectors: 10 blocks, needs 11 holes elsewhere.
  EXPECT_FALSE(c.choose(std::vector{sink(1, 10), candidate(5, 80)}, kSimEpoch).has_value());
  EXPECT_EQ(c.choose(std::vector{sink(1, 11), candidate(5, 80)}, kSimEpoch), 5u);
  // 81 used sectors: ceil(81 / 8) = 11 blocks, needs 12.
  EXPECT_FALSE(c.choose(std::vector{sink(1, 11), candidate(5, 81)}, kSimEpoch).has_value());
  EXPECT_EQ(c.choose(std::vector{sink(1, 12), candidate(5, 81)}, kSimEpoch), 5u);
  // Its own holes do not count.
  EXPECT_FALSE(c.choose(std::vector{sink(1, 10), candidate(5, 80, 100)}, kSimEpoch).has_value());
  // Holes on other candidates do: 6 + 5 = 11 for track 5 (80 used), and
  // 10 + 6 = 16 for track 6 (only 7 needed: 48 used = 6 blocks): both
  // qualify; fewest-live takes 6.
  std::vector<TrackCensus> v = {sink(1, 6), candidate(5, 80, 10), candidate(6, 48, 5)};
  EXPECT_EQ(c.choose(v, kSimEpoch), 6u);
  // Without the sink's holes track 5 has only 5 elsewhere, track 6 has 10.
  v[0].block_holes = 0;
  EXPECT_EQ(c.choose(v, kSimEpoch), 6u);
  v[1].block_holes = 6;  // track 6 now has 6 elsewhere (< 7): neither
  EXPECT_FALSE(c.choose(v, kSimEpoch).has_value());
}

TEST(Compactor, FewestLiveTakesTheLeastUsedTrackFirstOnTies) {
  Compactor c = make_compactor(CompactionPolicy::kFewestLive);
  std::vector<TrackCensus> v = {sink(1, 1000),       candidate(9, 120),
                                candidate(4, 64),    candidate(7, 231),  // too full
                                candidate(12, 64),   candidate(3, 200),
                                candidate(2, 0)};                        // empty
  EXPECT_EQ(c.choose(v, kSimEpoch), 4u) << "64 used; 12 ties and comes later";
  std::swap(v[2], v[4]);
  EXPECT_EQ(c.choose(v, kSimEpoch), 12u) << "the tie goes to the first in the census";
  // Choosing does not change the census' answer (no state but the rng).
  EXPECT_EQ(c.choose(v, kSimEpoch), 12u);
}

// LFS's (1 - u) * age / (1 + u), age in microseconds + 1, at now = 10 ms:
//   track 4: u = 64/256 = 0.25, last write 9,001 us: age 999 + 1 = 1000:
//            0.75 * 1000 / 1.25 = 600
//   track 5: u = 32/256 = 0.125, last write 9,601 us: age 400:
//            0.875 * 400 / 1.125 = 311.1
//   track 6: u = 128/256 = 0.5, last write 8,001 us: age 2000:
//            0.5 * 2000 / 1.5 = 666.7
// Cost-benefit takes 6 (old, half full); fewest-live takes 5.
TEST(Compactor, CostBenefitWeighsFreeSpaceByAge) {
  const SimTime now = at_us(10'000);
  std::vector<TrackCensus> v = {sink(1, 1000), candidate(4, 64, 0, at_us(9'001)),
                                candidate(5, 32, 0, at_us(9'601)),
                                candidate(6, 128, 0, at_us(8'001))};
  Compactor cb = make_compactor(CompactionPolicy::kCostBenefit);
  Compactor fl = make_compactor(CompactionPolicy::kFewestLive);
  EXPECT_EQ(cb.choose(v, now), 6u);
  EXPECT_EQ(fl.choose(v, now), 5u);
  // Track 6 written 1 ms later: age 1000, 333.3 < 600: track 4.
  v[3].last_write = at_us(9'001);
  EXPECT_EQ(cb.choose(v, now), 4u);
  // Track 5 written at 7,001 us: age 3000, 0.875 * 3000 / 1.125 = 2333.3.
  v[2].last_write = at_us(7'001);
  EXPECT_EQ(cb.choose(v, now), 5u);
  // Ages equal: the emptiest wins ((1 - u) / (1 + u) falls with u).
  for (auto& t : v) t.last_write = at_us(5'000);
  EXPECT_EQ(cb.choose(v, now), 5u);
}

// Tracks of different sizes (a zoned drive): each rule, and the use u,
// against the track's own sectors.
TEST(Compactor, EachTrackIsMeasuredByItsOwnSize) {
  auto on = [](uint32_t track, uint32_t sectors, uint32_t used, SimTime last_write = kSimEpoch) {
    return TrackCensus{track, sectors, used, 0, last_write, true};
  };
  Compactor c = make_compactor(CompactionPolicy::kFewestLive);
  // kMaxVictimUse = 0.9 of 192 = 172.8: 172 may be emptied, 173 not
  // (on a 256-sector track both may).
  EXPECT_EQ(c.choose(std::vector{sink(1, 1000), on(5, 192, 172)}, kSimEpoch), 5u);
  EXPECT_FALSE(c.choose(std::vector{sink(1, 1000), on(5, 192, 173)}, kSimEpoch).has_value());
  EXPECT_EQ(c.choose(std::vector{sink(1, 1000), on(5, 256, 173)}, kSimEpoch), 5u);
  // Fewer free sectors than a 64-sector block: 128 of 192 used leaves 64.
  Compactor c64 = make_compactor(CompactionPolicy::kFewestLive, 64);
  EXPECT_EQ(c64.choose(std::vector{sink(1, 1000), on(5, 192, 128)}, kSimEpoch), 5u);
  EXPECT_FALSE(c64.choose(std::vector{sink(1, 1000), on(5, 192, 129)}, kSimEpoch).has_value());
  // Cost-benefit at equal age and used sectors: the larger track is the
  // emptier (96 of 256: u = 0.375; 96 of 192: u = 0.5).
  Compactor cb = make_compactor(CompactionPolicy::kCostBenefit);
  EXPECT_EQ(cb.choose(std::vector{sink(1, 1000), on(5, 192, 96), on(6, 256, 96)}, at_us(100)),
            6u);
}

TEST(Compactor, RandomPicksUniformlyAmongQualifyingTracksOnly) {
  // Qualifying: 3, 8, 11, 20. Not: the sink 1, empty 2, too full 7.
  const std::vector<TrackCensus> v = {sink(1, 1000),      candidate(3, 100), candidate(2, 0),
                                      candidate(8, 20),   candidate(7, 240), candidate(11, 230),
                                      candidate(20, 1)};
  Compactor c = make_compactor(CompactionPolicy::kRandom, 8, /*seed=*/7);
  std::map<uint32_t, int> picks;
  constexpr int kDraws = 4000;
  std::vector<uint32_t> sequence;
  for (int i = 0; i < kDraws; ++i) {
    auto t = c.choose(v, kSimEpoch);
    ASSERT_TRUE(t.has_value());
    ++picks[*t];
    sequence.push_back(*t);
  }
  EXPECT_EQ(picks.size(), 4u);
  for (uint32_t t : {3u, 8u, 11u, 20u}) {
    // 1000 expected each; binomial sd = sqrt(4000 * 1/4 * 3/4) = 27.4:
    // +-150 is 5.5 sd.
    EXPECT_NEAR(picks[t], kDraws / 4, 150) << "track " << t;
  }
  // The same seed draws the same sequence; another seed another one.
  Compactor again = make_compactor(CompactionPolicy::kRandom, 8, 7);
  Compactor other = make_compactor(CompactionPolicy::kRandom, 8, 8);
  int same = 0, differ = 0;
  for (int i = 0; i < kDraws; ++i) {
    same += again.choose(v, kSimEpoch) == sequence[i];
    differ += other.choose(v, kSimEpoch) != sequence[i];
  }
  EXPECT_EQ(same, kDraws);
  EXPECT_GT(differ, kDraws / 2);
  // Nothing qualifies: nullopt, whatever the rng.
  EXPECT_FALSE(c.choose(std::vector{sink(1, 1000), candidate(2, 0)}, kSimEpoch).has_value());
}

// ====================================================== VldDisk compaction

std::vector<std::byte> pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t w = rng();
    std::memcpy(v.data() + i, &w, std::min<size_t>(8, n - i));
  }
  return v;
}

Superblock small_superblock(uint64_t export_bytes = 8 << 20, uint32_t spare = 5) {
  return test::st19101_superblock(DiskMode::kVld, export_bytes, spare);
}

// A VldDisk behind a DiskController, its shadow, and a view of the disk.
struct Rig {
  explicit Rig(const Superblock& sb_in, VldOptions options = {}) : sb(sb_in) {
    auto s = std::make_unique<MemoryBackingStore>(sb.image_bytes());
    format_store(*s, sb);
    store = s.get();
    auto d = std::make_unique<VldDisk>(std::move(s), sb, options);
    disk = d.get();
    ctl = std::make_unique<DiskController>(std::move(d));
    shadow.assign(sb.export_bytes, std::byte{0});
  }

  RequestTiming write(uint64_t off, const std::vector<std::byte>& data, bool fua = false,
                      std::optional<SimTime> arrival = std::nullopt) {
    RequestTiming t = ctl->write(off, data, fua, arrival);
    std::copy(data.begin(), data.end(), shadow.begin() + static_cast<ptrdiff_t>(off));
    return t;
  }
  void trim(uint64_t off, uint64_t len) {
    ctl->trim(off, len, false, std::nullopt);
    for (uint64_t b = (off + kBlock - 1) / kBlock; (b + 1) * kBlock <= off + len; ++b)
      std::fill(shadow.begin() + static_cast<ptrdiff_t>(b * kBlock),
                shadow.begin() + static_cast<ptrdiff_t>((b + 1) * kBlock), std::byte{0});
  }
  // Every block written once, 64 at a time: 80% of the platters.
  void prefill() {
    for (uint64_t off = 0; off < sb.export_bytes; off += 64 * kBlock)
      write(off, pattern(64 * kBlock, off));
  }
  // Random 4 KiB writes (65%), unaligned writes of 1..12,000 bytes (25%),
  // trims of one or two blocks (7%), flushes (3%).
  void random_ops(int n, std::mt19937_64& rng) {
    const uint64_t blocks = sb.export_bytes / kBlock;
    for (int i = 0; i < n; ++i) {
      const int kind = static_cast<int>(rng() % 100);
      if (kind < 65) {
        write((rng() % blocks) * kBlock, pattern(kBlock, rng()));
      } else if (kind < 90) {
        const uint64_t off = rng() % sb.export_bytes;
        const uint64_t len = std::min<uint64_t>(sb.export_bytes - off, 1 + rng() % 12'000);
        write(off, pattern(len, rng()));
      } else if (kind < 97) {
        const uint64_t b = rng() % (blocks - 1);
        trim(b * kBlock, (1 + rng() % 2) * kBlock);
      } else {
        ctl->flush(std::nullopt);
      }
    }
  }
  // The first offset where a read of the whole export differs from the
  // shadow, or nullopt.
  std::optional<uint64_t> first_difference() { return first_difference_on(*ctl); }
  std::optional<uint64_t> first_difference_on(DiskController& c) const {
    constexpr uint64_t kChunk = 1 << 20;
    std::vector<std::byte> buf(kChunk);
    for (uint64_t off = 0; off < sb.export_bytes; off += kChunk) {
      c.read(off, buf, std::nullopt);
      auto m = std::mismatch(buf.begin(), buf.end(), shadow.begin() + static_cast<ptrdiff_t>(off));
      if (m.first != buf.end()) return off + static_cast<uint64_t>(m.first - buf.begin());
    }
    return std::nullopt;
  }
  uint32_t used(uint32_t track) const { return kSpt - disk->free_space().free_sectors(track); }

  Superblock sb;
  MemoryBackingStore* store;
  VldDisk* disk;  // owned by ctl
  std::unique_ptr<DiskController> ctl;
  std::vector<std::byte> shadow;
};

// A disk opened (recovered) from an image, behind its own controller.
struct Opened {
  Opened(const Superblock& sb, std::vector<std::byte> image) {
    auto d = std::make_unique<VldDisk>(std::make_unique<MemoryBackingStore>(std::move(image)), sb);
    disk = d.get();
    ctl = std::make_unique<DiskController>(std::move(d));
  }
  VldDisk* disk;
  std::unique_ptr<DiskController> ctl;
};

// The geometry and sizes every test below assumes.
void check_small_disk(const Rig& r) {
  ASSERT_EQ(r.sb.simulated_cylinders, 5u);
  ASSERT_EQ(r.disk->physical_blocks(), 2560u);
  ASSERT_EQ(r.sb.geometry.sectors_per_track, kSpt);
  ASSERT_EQ(r.disk->free_space().tracks(), 80u);
  ASSERT_EQ(r.disk->compactor().stats().steps, 0u);
}

// The common start: the export written once, then random traffic, leaving
// tracks with holes of every size and no empty track.
void age(Rig& r, uint64_t seed, int ops = 1500) {
  r.prefill();
  std::mt19937_64 rng(seed);
  r.random_ops(ops, rng);
}

// ---------------------------------------------------------- keeps bytes

TEST(VldCompaction, KeepsEveryByteThroughRoundsAndReopens) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 2024);
  const double u = r.ctl->utilization();
  EXPECT_GT(u, 0.70);
  EXPECT_LE(u, 0.80);
  ASSERT_EQ(r.disk->check_consistency(), "");
  ASSERT_EQ(r.first_difference(), std::nullopt);

  // Rounds of writes and idle grants short enough (40 ms: a victim takes
  // tens of steps of a millisecond or more) that most end with a victim in
  // progress, so the next writes land while it is being emptied (and
  // rewrite, trim and overwrite blocks still on it).
  std::mt19937_64 rng(99);
  int ended_mid_victim = 0;
  uint64_t steps = 0;
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    r.random_ops(150, rng);
    steps += r.ctl->idle_until(r.ctl->busy_until() + sim_ms(40));
    ended_mid_victim += r.disk->compaction_victim().has_value();
    ASSERT_EQ(r.disk->check_consistency(), "");
    ASSERT_EQ(r.first_difference(), std::nullopt);
  }
  const CompactorStats& cs = r.disk->compactor().stats();
  EXPECT_EQ(cs.steps, steps);
  EXPECT_GT(cs.tracks_compacted, 0u);
  EXPECT_GT(cs.blocks_moved, 0u);
  EXPECT_GT(ended_mid_victim, 0) << "no write ever met a victim in progress";
  std::printf("\n12 rounds: %llu steps, %llu tracks compacted (%llu abandoned), %llu blocks and "
              "%llu map sectors moved, %d rounds ended mid-victim, %u empty tracks\n",
              static_cast<unsigned long long>(cs.steps),
              static_cast<unsigned long long>(cs.tracks_compacted),
              static_cast<unsigned long long>(cs.tracks_abandoned),
              static_cast<unsigned long long>(cs.blocks_moved),
              static_cast<unsigned long long>(cs.map_sectors_moved), ended_mid_victim,
              r.disk->free_space().empty_tracks());

  // Stop mid-compaction: everything flushed, then idle steps until a victim
  // is in progress and at least one block has left it.
  r.random_ops(150, rng);
  r.ctl->flush(std::nullopt);
  const uint64_t moved_before = cs.blocks_moved;
  for (int i = 0; i < 200; ++i) {
    if (r.disk->compaction_victim() && cs.blocks_moved > moved_before) break;
    ASSERT_TRUE(r.ctl->idle_step(r.ctl->busy_until()).has_value()) << "compaction ran dry";
  }
  ASSERT_TRUE(r.disk->compaction_victim().has_value());
  const uint32_t victim = *r.disk->compaction_victim();
  ASSERT_GT(r.used(victim), 0u) << "the victim still holds something";
  const std::vector<std::byte> unclean = r.store->bytes();  // as a kill -9 leaves it

  // Clean close, reopen.
  r.ctl->close();
  {
    Opened o(sb, r.store->bytes());
    EXPECT_TRUE(o.disk->recovery().clean);
    EXPECT_EQ(o.disk->check_consistency(), "");
    EXPECT_EQ(r.first_difference_on(*o.ctl), std::nullopt) << "after a clean close";
  }
  // The image as it was mid-compaction, never closed.
  {
    Opened o(sb, unclean);
    EXPECT_FALSE(o.disk->recovery().clean);
    EXPECT_EQ(o.disk->recovery().method, "record+window");
    EXPECT_EQ(o.disk->check_consistency(), "");
    EXPECT_EQ(r.first_difference_on(*o.ctl), std::nullopt) << "after an unclean stop";
    // And it compacts on from there, keeping every byte.
    EXPECT_GT(o.ctl->idle_until(o.ctl->busy_until() + sim_ms(100)), 0u);
    EXPECT_EQ(o.disk->check_consistency(), "");
    EXPECT_EQ(r.first_difference_on(*o.ctl), std::nullopt) << "compacting after recovery";
  }
}

// A crash mid-compaction that loses writes since the last sync: the moves
// of the victim in progress (they are not synced until its end record)
// survive in any subset, and whatever survives, every flushed byte reads
// back: a move is a map update whose data is unchanged, and the old copy is
// freed only by the record.
// ---------------------------------------------------- per-track lists

// live_on answers from the blocks' slots (core/vld/track_slots.h) and the
// pieces' lists (core/vld/track_lists.h), not from a scan of the map and
// the log: it must say what that scan says.
void expect_live_on_is_the_scan(const VldDisk& d) {
  const uint32_t spt = d.superblock().geometry.sectors_per_track;
  const uint32_t tracks = d.free_space().tracks();
  std::vector<std::vector<uint64_t>> blocks(tracks);
  std::vector<std::vector<uint32_t>> pieces(tracks);
  for (uint64_t b = 0; b < d.map().size(); ++b)
    if (d.map()[b].mapped()) blocks[d.map()[b].psn() / spt].push_back(b);
  for (uint32_t p = 0; p < d.virtual_log().pieces(); ++p)
    if (d.virtual_log().node(p).seq) pieces[d.virtual_log().node(p).psn / spt].push_back(p);
  for (uint32_t t = 0; t < tracks; ++t) {
    std::vector<uint64_t> b;
    std::vector<uint32_t> p;
    d.live_on(t, &b, &p);
    ASSERT_EQ(b, blocks[t]) << "data blocks on track " << t;
    ASSERT_EQ(p, pieces[t]) << "map sectors on track " << t;
  }
}

TEST(VldTrackLists, AddRemoveCountAndCheck) {
  TrackLists l(4, 10);
  std::vector<std::optional<uint32_t>> truth(10);
  auto track_of = [&](uint32_t i) { return truth[i]; };
  std::mt19937_64 rng(3);
  for (int step = 0; step < 2000; ++step) {
    const uint32_t i = static_cast<uint32_t>(rng() % 10);
    if (truth[i]) {
      l.remove(*truth[i], i);
      truth[i].reset();
    } else {
      truth[i] = static_cast<uint32_t>(rng() % 4);
      l.add(*truth[i], i);
    }
    ASSERT_EQ(l.check(track_of), "");
  }
  for (uint32_t t = 0; t < 4; ++t) {
    std::vector<uint32_t> on;
    l.items(t, &on);
    EXPECT_EQ(on.size(), l.count(t));
  }
  // The check finds a list that disagrees with the truth.
  if (!truth[0]) {
    l.add(0, 0);
    truth[0] = 0;
  }
  truth[0] = (*truth[0] + 1) % 4;  // listed on one track, said to be on another
  EXPECT_NE(l.check(track_of), "");
}

TEST(VldTrackLists, LiveOnIsTheScanThroughWritesTrimsCompactionRepackAndReopen) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  age(r, 2025);
  ASSERT_NO_FATAL_FAILURE(expect_live_on_is_the_scan(*r.disk));
  std::mt19937_64 rng(17);
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    r.random_ops(150, rng);
    r.ctl->idle_until(r.ctl->busy_until() + sim_ms(40));
    ASSERT_EQ(r.disk->check_consistency(), "");
    ASSERT_NO_FATAL_FAILURE(expect_live_on_is_the_scan(*r.disk));
  }
  EXPECT_GT(r.disk->compactor().stats().tracks_compacted, 0u);
  ASSERT_TRUE(r.disk->repack_now(r.ctl->busy_until()));
  ASSERT_EQ(r.disk->check_consistency(), "");
  ASSERT_NO_FATAL_FAILURE(expect_live_on_is_the_scan(*r.disk));
  r.random_ops(100, rng);  // the record that frees the repack's victim
  ASSERT_NO_FATAL_FAILURE(expect_live_on_is_the_scan(*r.disk));
  const std::vector<std::byte> unclean = r.store->bytes();
  r.ctl->close();  // a checkpoint moves every piece
  {
    Opened o(sb, r.store->bytes());
    ASSERT_EQ(o.disk->check_consistency(), "");
    ASSERT_NO_FATAL_FAILURE(expect_live_on_is_the_scan(*o.disk));
  }
  Opened o(sb, unclean);  // recovery's own checkpoint
  ASSERT_EQ(o.disk->check_consistency(), "");
  ASSERT_NO_FATAL_FAILURE(expect_live_on_is_the_scan(*o.disk));
  EXPECT_EQ(r.first_difference_on(*o.ctl), std::nullopt);
}

TEST(VldCompaction, CrashLosingUnsyncedMovesKeepsEveryFlushedByte) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 31337);
  r.ctl->close();  // everything on the image, clean

  // The same image under a recording store; the shadow is what was flushed.
  auto rs = std::make_unique<RecordingStore>(r.store->bytes());
  RecordingStore* rec = rs.get();
  VldDisk d(std::move(rs), sb);
  ASSERT_TRUE(d.recovery().clean);
  // Steps until the victim in progress has had three blocks moved off it
  // (the record at the end of the previous victim synced everything
  // before).
  SimTime now = kSimEpoch;
  std::optional<uint32_t> victim;
  uint64_t moved_at_choice = 0;
  for (int i = 0; i < 400; ++i) {
    const uint64_t moved = d.compactor().stats().blocks_moved;
    auto c = d.idle_step(now);
    ASSERT_TRUE(c.has_value()) << "compaction ran dry";
    now = c->end;
    if (d.compaction_victim() != victim) {
      victim = d.compaction_victim();
      moved_at_choice = moved;
    }
    if (victim && d.compactor().stats().blocks_moved - moved_at_choice >= 3) break;
  }
  ASSERT_TRUE(d.compaction_victim().has_value());
  ASSERT_GE(d.compactor().stats().blocks_moved - moved_at_choice, 3u);
  const size_t point = rec->events();
  const size_t units = rec->pending_unit_count(point, RecordingStore::Granularity::k4K);
  ASSERT_GT(units, 0u) << "no unsynced move: the test tests nothing";
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    std::vector<bool> survives(units);
    for (size_t k = 0; k < units; ++k)
      survives[k] = trial == 0 ? false : trial == 1 ? true : rng() % 2 == 0;
    Opened o(sb, rec->materialize(point, survives, RecordingStore::Granularity::k4K));
    EXPECT_FALSE(o.disk->recovery().clean);
    EXPECT_EQ(o.disk->check_consistency(), "");
    EXPECT_EQ(r.first_difference_on(*o.ctl), std::nullopt);
  }
}

// ------------------------------------------------------ makes empty tracks

TEST(VldCompaction, EmptiesTracksOneVictimAtATime) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 7);
  const uint32_t empty_before = r.disk->free_space().empty_tracks();
  const CompactorStats& cs = r.disk->compactor().stats();
  std::set<uint32_t> emptied;
  uint64_t steps = 0;
  int first_moves = 0;
  SimDuration step_time{};
  for (int i = 0; i < 5000; ++i) {
    const std::optional<uint32_t> victim = r.disk->compaction_victim();
    const uint64_t compacted = cs.tracks_compacted;
    const uint32_t empties = r.disk->free_space().empty_tracks();
    const uint64_t moved = cs.blocks_moved;
    const SimTime start = r.ctl->busy_until();
    const std::optional<SimTime> end = r.ctl->idle_step(start);
    if (!end) break;
    ++steps;
    step_time += *end - start;
    // Hole-plugging never writes into an empty track, and a record only
    // frees: the number of empty tracks never falls while compacting.
    EXPECT_GE(r.disk->free_space().empty_tracks(), empties) << "step " << i;
    const std::optional<uint32_t> now_victim = r.disk->compaction_victim();
    if (now_victim && now_victim != victim) {
      // A new victim: a track of data, not the system track.
      EXPECT_NE(*now_victim, 0u);
      EXPECT_FALSE(r.disk->free_space().is_empty(*now_victim));
      // Its first move reads the whole track into the track buffer first
      // (no track of data has been read before): a revolution at least.
      if (cs.blocks_moved > moved) {
        EXPECT_GE(*end - start, sb.geometry.revolution()) << "step " << i;
        ++first_moves;
      }
    }
    if (victim && now_victim != victim) {
      // Its steps are over: emptied (or given up).
      if (cs.tracks_compacted == compacted + 1) {
        EXPECT_TRUE(r.disk->free_space().is_empty(*victim)) << "track " << *victim;
        emptied.insert(*victim);
      }
    }
  }
  EXPECT_EQ(r.ctl->idle_step(r.ctl->busy_until()), std::nullopt) << "never settled";
  EXPECT_FALSE(r.disk->compaction_victim().has_value());
  EXPECT_GT(cs.tracks_compacted, 0u);
  EXPECT_GT(cs.blocks_moved, 0u);
  EXPECT_EQ(cs.steps, steps);
  EXPECT_EQ(cs.busy, step_time);
  EXPECT_EQ(r.ctl->stats().idle_steps, steps);
  EXPECT_EQ(r.ctl->stats().idle_busy, step_time);
  EXPECT_EQ(emptied.size(), cs.tracks_compacted) << "a track compacted twice, or unseen";
  EXPECT_GT(first_moves, 0);
  for (uint32_t t : emptied) EXPECT_TRUE(r.disk->free_space().is_empty(t)) << t;
  EXPECT_GE(r.disk->free_space().empty_tracks(), empty_before + cs.tracks_compacted);
  EXPECT_EQ(r.disk->check_consistency(), "");
  EXPECT_EQ(r.first_difference(), std::nullopt);
  std::printf("\nsettled after %llu steps (%.1f ms): %llu tracks emptied, %llu abandoned, %llu "
              "blocks + %llu map sectors moved; empty tracks %u -> %u\n",
              static_cast<unsigned long long>(steps), to_ms(step_time),
              static_cast<unsigned long long>(cs.tracks_compacted),
              static_cast<unsigned long long>(cs.tracks_abandoned),
              static_cast<unsigned long long>(cs.blocks_moved),
              static_cast<unsigned long long>(cs.map_sectors_moved), empty_before,
              r.disk->free_space().empty_tracks());
}

// fewest-live (the default), at the disk: the first victim is the track of
// the window with the fewest used sectors among those that qualify (a
// census computed here from the free space map, as compactor.h defines it).
// Compaction works in the window; with nothing left there it sweeps on,
// window after window (one record each), and comes back to where the writes
// were. The small disk's 5 cylinders with window=2: windows of cylinders
// 2-3, 4-0 and 1-2 from wherever the writes left the window.
TEST(VldCompaction, SweepsEveryWindowThenReturnsToTheWrites) {
  const Superblock sb = small_superblock();
  VldOptions options;
  options.window_cylinders = 2;
  Rig r(sb, options);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 7);
  const CylinderWindow home = r.disk->mode_report().vld->window;
  ASSERT_EQ(home.count, 2u);
  std::vector<bool> was_empty(80);
  for (uint32_t t = 0; t < 80; ++t) was_empty[t] = r.disk->free_space().is_empty(t);
  const uint64_t records = r.disk->vld_stats().records_written;
  r.ctl->idle_until(kSimEpoch + std::chrono::hours(1));
  EXPECT_EQ(r.ctl->idle_step(r.ctl->busy_until()), std::nullopt) << "never settled";
  // Back where the writes were.
  EXPECT_EQ(r.disk->mode_report().vld->window.first, home.first);
  // Tracks emptied outside the home window: the sweep compacted there.
  uint32_t emptied_home = 0, emptied_elsewhere = 0;
  for (uint32_t t = 1; t < 80; ++t) {
    if (was_empty[t] || !r.disk->free_space().is_empty(t)) continue;
    (home.contains(t / 16, 5) ? emptied_home : emptied_elsewhere) += 1;
  }
  EXPECT_GT(emptied_home, 0u);
  EXPECT_GT(emptied_elsewhere, 0u);
  // Two records move the window on, one brings it back; each emptied track
  // ends with one too.
  EXPECT_GE(r.disk->vld_stats().records_written,
            records + 3 + r.disk->compactor().stats().tracks_compacted);
  EXPECT_EQ(r.disk->check_consistency(), "");
  EXPECT_EQ(r.first_difference(), std::nullopt);
  // A write starts the sweep over: the window goes round again.
  r.write(0, pattern(kBlock, 99));
  const uint64_t before_sweep = r.disk->vld_stats().records_written;
  r.ctl->idle_until(r.ctl->busy_until() + std::chrono::hours(1));
  EXPECT_GE(r.disk->vld_stats().records_written, before_sweep + 3);
  EXPECT_EQ(r.first_difference(), std::nullopt);
  // With one window (the whole disk) there is nothing to sweep to.
  Rig whole(sb, VldOptions{});
  age(whole, 7);
  const CylinderWindow w = whole.disk->mode_report().vld->window;
  whole.ctl->idle_until(kSimEpoch + std::chrono::hours(1));
  EXPECT_EQ(whole.disk->mode_report().vld->window.first, w.first);
}

// Table 2 in small (a 4-cylinder window): 80% of the physical blocks
// written once, half as many random updates, an hour of idle time for the
// compactor's sweep, then `writes` random updates.
struct AfterSweep {
  // Updates after which the window had no empty track a write may use
  // while a window around the head had (none wrote a record, which would
  // have named the window): what the rule moves away from.
  int dry_windows_kept = 0;
  uint64_t dry_window_moves = 0;
};
AfterSweep updates_after_a_sweep(bool move_dry_window, uint64_t export_mib, int writes) {
  const Superblock sb = small_superblock(export_mib << 20);
  VldOptions options;
  options.window_cylinders = 4;
  options.move_dry_window = move_dry_window;
  Rig r(sb, options);
  const uint64_t region = r.disk->physical_blocks() * 8 / 10;
  for (uint64_t b = 0; b < region; b += 64)
    r.write(b * kBlock, pattern(std::min<uint64_t>(64, region - b) * kBlock, b));
  std::mt19937_64 rng(13);
  auto update = [&] {
    const uint64_t block = rng() % region;  // one draw after the other, whatever the compiler
    r.write(block * kBlock, pattern(kBlock, rng()));
  };
  for (uint64_t i = 0; i < region / 2; ++i) update();
  r.ctl->idle_until(r.ctl->busy_until() + std::chrono::hours(1));
  const EagerAllocator& alloc = r.disk->allocator();
  const uint32_t cylinders = sb.simulated_cylinders;
  EXPECT_GE(alloc.usable_empty_tracks(CylinderWindow{0, cylinders}), 8u)
      << "the sweep emptied too few tracks";
  AfterSweep out;
  for (int i = 0; i < writes; ++i) {
    const uint64_t records = r.disk->vld_stats().records_written;
    update();
    if (r.disk->vld_stats().records_written != records) continue;
    if (alloc.usable_empty_tracks(r.disk->mode_report().vld->window) > 0) continue;
    const uint32_t head = r.disk->drive().head().cylinder;
    const CylinderWindow around{(head + cylinders - 3) % cylinders, 7};
    if (alloc.usable_empty_tracks(around) > 0) ++out.dry_windows_kept;
  }
  out.dry_window_moves = r.disk->vld_stats().dry_window_moves;
  EXPECT_EQ(r.disk->check_consistency(), "");
  EXPECT_EQ(r.first_difference(), std::nullopt);
  return out;
}

// After a sweep the empty tracks lie in every window. The writes use up the
// ones in theirs before its free space is spent; the window must then move
// on to a window around the head that still has some (one record, ~5 ms)
// rather than send each write to the greedy search (~0.5 ms more: Table 2,
// seed 3, placed 752 pieces so with 45 empty tracks left; docs/benchmarks.md
// section 11). On a disk this small the moves cost about what the greedy
// writes would have (the system track is never far); on Table 2's 136
// cylinders they save up to 7%.
TEST(VldCompaction, WritesMoveTheWindowOnWhenItsEmptyTracksAreUsedUp) {
  // 16 MiB: usable empty tracks after the sweep; with the rule off, some
  // of the 300 updates leave a dry window with empty tracks around the
  // head (the update seed is one whose sequence does: the layout the sweep
  // leaves depends on every record before it).
  const AfterSweep moved = updates_after_a_sweep(true, 16, 300);
  const AfterSweep kept = updates_after_a_sweep(false, 16, 300);
  EXPECT_EQ(moved.dry_windows_kept, 0) << "a dry window stayed with empty tracks around the head";
  EXPECT_GT(moved.dry_window_moves, 0u);
  EXPECT_GT(kept.dry_windows_kept, 0) << "the scenario no longer runs a window dry";
  EXPECT_EQ(kept.dry_window_moves, 0u);
}

TEST(VldCompaction, FewestLiveEmptiesTheLeastUsedQualifyingTrackFirst) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 8);
  ASSERT_EQ(r.disk->compactor().options().policy, CompactionPolicy::kFewestLive);
  const FreeSpaceMap& fs = r.disk->free_space();
  const std::optional<uint32_t> fill = r.disk->allocator().fill_track();
  uint64_t holes = 0;
  for (uint32_t t = 1; t < fs.tracks(); ++t) holes += fs.holes_for(t, 8);
  std::set<uint32_t> qualifying;
  std::optional<uint32_t> fewest_used;
  for (uint32_t t = 1; t < fs.tracks(); ++t) {
    const uint32_t used = r.used(t);
    if (used == 0 || t == fill || kSpt - used < 8 || used > 0.9 * kSpt) continue;
    if (holes - fs.holes_for(t, 8) < (used + 7) / 8 + 1) continue;
    qualifying.insert(t);
    fewest_used = std::min(fewest_used.value_or(used), used);
  }
  ASSERT_TRUE(fewest_used.has_value());
  ASSERT_TRUE(r.ctl->idle_step(r.ctl->busy_until()).has_value());
  // Ties go to the first track in the window's order, which starts at the
  // window's first cylinder: any qualifying track with the fewest will do.
  const std::optional<uint32_t> victim = r.disk->compaction_victim();
  ASSERT_TRUE(victim.has_value());
  EXPECT_TRUE(qualifying.count(*victim)) << "track " << *victim;
  EXPECT_EQ(r.used(*victim), *fewest_used) << "track " << *victim;
}

// ------------------------------------------------- preemption at steps

// Idle time granted up to U, which falls inside a step: the step runs to its
// end E (steps are not interrupted), and a write arriving at U starts at E.
// Two identical disks: on the first the steps are run one at a time to
// measure them; the second gets idle_until(U).
TEST(VldCompaction, ARequestWaitsAtMostForTheStepInProgress) {
  const Superblock sb = small_superblock();
  Rig a(sb), b(sb);
  check_small_disk(a);
  if (HasFatalFailure()) return;
  age(a, 555);
  age(b, 555);
  ASSERT_EQ(a.ctl->busy_until(), b.ctl->busy_until());
  ASSERT_TRUE(a.store->bytes() == b.store->bytes());

  struct Step {
    SimTime start, end;
  };
  std::vector<Step> steps;
  while (steps.size() < 60) {
    const SimTime s = a.ctl->busy_until();
    const std::optional<SimTime> e = a.ctl->idle_step(s);
    if (!e) break;
    steps.push_back({s, *e});
  }
  ASSERT_EQ(steps.size(), 60u);
  // The longest of steps 10..59 (the start of a victim reads its whole
  // track: more than a revolution), and U in its middle.
  size_t k = 10;
  for (size_t i = 10; i < steps.size(); ++i)
    if (steps[i].end - steps[i].start > steps[k].end - steps[k].start) k = i;
  const SimDuration step = steps[k].end - steps[k].start;
  ASSERT_GT(step, SimDuration{2});
  const SimTime u = steps[k].start + step / 2;

  const uint64_t ran = b.ctl->idle_until(u);
  EXPECT_EQ(ran, k + 1) << "every step that starts before U, and no other";
  const SimTime busy = b.ctl->busy_until();
  EXPECT_EQ(busy, steps[k].end);
  EXPECT_TRUE(b.disk->compaction_victim().has_value()) << "U is not mid-compaction";
  const DiskStats before = b.ctl->stats();
  EXPECT_EQ(before.preempt_wait.count(), 0u);

  RequestTiming t = b.write(123 * kBlock, pattern(kBlock, 1), false, u);
  EXPECT_EQ(t.start, busy);
  EXPECT_EQ(t.queued, busy - u);
  EXPECT_GT(t.queued.count(), 0);
  EXPECT_LE(t.queued, step) << "waited longer than the step in progress";
  EXPECT_EQ(t.queued, step - step / 2);
  const DiskStats after = b.ctl->stats();
  EXPECT_EQ(after.preempt_wait.count(), 1u);
  EXPECT_EQ(after.preempt_wait.max_ns(), t.queued.count());
  EXPECT_EQ(after.idle_steps, k + 1);

  // A request that arrives when the drive is free waits for nothing and is
  // no preemption.
  RequestTiming t2 = b.write(124 * kBlock, pattern(kBlock, 2), false, b.ctl->busy_until());
  EXPECT_EQ(t2.queued.count(), 0);
  EXPECT_EQ(b.ctl->stats().preempt_wait.count(), 1u);
  EXPECT_EQ(b.disk->check_consistency(), "");
  EXPECT_EQ(b.first_difference(), std::nullopt);
}

// Idle time the drive had but could not use (served read-only until the
// first writable connection): idle_between runs the steps that start at
// or after `from` and end by `until`, in that past period, so the request
// arriving at `until` waits for none of them; on a read-only controller it
// runs none.
TEST(VldCompaction, IdleBetweenRunsTheStepsAPastPeriodHadRoomFor) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 556);
  const SimTime from = r.ctl->busy_until() + sim_ms(50), until = from + sim_ms(300);
  const uint64_t ran = r.ctl->idle_between(from, until);
  EXPECT_GT(ran, 5u);
  const DiskStats st = r.ctl->stats();
  EXPECT_EQ(st.idle_steps, ran);
  EXPECT_LE(r.ctl->busy_until(), until) << "a step ended after the period";
  EXPECT_LE(st.idle_busy, until - from);
  EXPECT_GT(r.disk->compactor().stats().blocks_moved, 0u);
  EXPECT_EQ(r.ctl->idle_between(from, until), 0u) << "the period is used up";
  RequestTiming t = r.write(7 * kBlock, pattern(kBlock, 9), false, until);
  EXPECT_EQ(t.start, until);
  EXPECT_EQ(t.queued.count(), 0);
  EXPECT_EQ(r.ctl->stats().preempt_wait.count(), 0u);
  EXPECT_EQ(r.first_difference(), std::nullopt);

  DiskController read_only(std::make_unique<VldDisk>(
                               std::make_unique<MemoryBackingStore>(r.store->bytes()), sb),
                           /*read_only=*/true);
  EXPECT_EQ(read_only.idle_between(from, until), 0u);
  EXPECT_EQ(read_only.stats().idle_steps, 0u);
}

// The same bound over many grants, stepping by hand (exactly what
// idle_until does) to know each step: every wait is the rest of the step in
// progress, and preempt_wait's max is at most the longest step.
TEST(VldCompaction, EveryPreemptedRequestWaitsForLessThanOneStep) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 4242);
  std::mt19937_64 rng(17);
  SimDuration longest{};
  uint64_t preempted = 0;
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE("grant " + std::to_string(i));
    const SimTime u = r.ctl->busy_until() + SimDuration{static_cast<int64_t>(rng() % 20'000'000)};
    std::optional<std::pair<SimTime, SimTime>> last;
    while (r.ctl->busy_until() < u) {
      const SimTime s = r.ctl->busy_until();
      const std::optional<SimTime> e = r.ctl->idle_step(s);
      if (!e) break;
      last = {s, *e};
      longest = std::max(longest, *e - s);
    }
    const SimTime busy = r.ctl->busy_until();
    RequestTiming t = r.write((rng() % 2048) * kBlock, pattern(kBlock, rng()), false, u);
    if (busy > u) {
      ASSERT_TRUE(last.has_value());
      EXPECT_EQ(t.queued, busy - u);
      EXPECT_LT(t.queued, last->second - last->first);
      ++preempted;
    } else {
      EXPECT_EQ(t.queued.count(), 0);
    }
  }
  const DiskStats st = r.ctl->stats();
  EXPECT_GT(preempted, 0u);
  EXPECT_EQ(st.preempt_wait.count(), preempted);
  EXPECT_LE(st.preempt_wait.max_ns(), longest.count());
  EXPECT_EQ(r.disk->check_consistency(), "");
  EXPECT_EQ(r.first_difference(), std::nullopt);
}

// ------------------------------------------- compacted tracks fill again

// After compaction has made empty tracks, single-block writes fill one of
// them to the fill threshold (0.75 x 256 = 192 sectors) and then move to
// the next: when the allocator leaves a fill track it holds at least 192
// sectors and less than 192 + 9 (the last command, one 8-sector block and
// its map sector, may cross the threshold). Each write arrives one
// revolution less the controller overhead after the previous one ended, so
// it reaches the platter where the previous one left off (as in
// EagerAllocator.FillsEmptyTracksToTheThresholdThenSwitches, which has no
// controller overhead).
void fill_compacted_tracks(bool paced, int* tracks_checked) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (::testing::Test::HasFatalFailure()) return;
  age(r, 1234);
  // Only the reserve track (VldDisk::repack) is empty.
  ASSERT_EQ(r.disk->free_space().empty_tracks(), 1u);
  const std::optional<uint32_t> reserve = r.disk->allocator().reserved_track();
  ASSERT_TRUE(reserve.has_value());
  ASSERT_TRUE(r.disk->free_space().is_empty(*reserve));
  // Compact until nothing qualifies.
  while (r.ctl->idle_until(r.ctl->busy_until() + sim_ms(1000)) > 0) {
  }
  std::set<uint32_t> empty;
  for (uint32_t t = 1; t < r.disk->free_space().tracks(); ++t)
    if (r.disk->free_space().is_empty(t) && t != reserve) empty.insert(t);
  // There were none before: compaction made them.
  ASSERT_GE(empty.size(), 4u);
  ASSERT_GE(r.disk->compactor().stats().tracks_compacted, 4u);

  const uint32_t threshold = static_cast<uint32_t>(0.75 * kSpt);  // 192
  const DriveGeometry& g = sb.geometry;
  std::vector<uint64_t> blocks(sb.export_bytes / kBlock);
  for (uint64_t b = 0; b < blocks.size(); ++b) blocks[b] = b;
  std::shuffle(blocks.begin(), blocks.end(), std::mt19937_64(3));
  std::optional<uint32_t> fill = r.disk->allocator().fill_track();
  SimTime last_end = r.ctl->busy_until();
  std::string trace;
  *tracks_checked = 0;
  for (size_t i = 0; i < blocks.size() && *tracks_checked < 3; ++i) {
    const std::optional<SimTime> arrival =
        paced ? std::optional(last_end + g.revolution() - g.controller_overhead) : std::nullopt;
    RequestTiming t = r.write(blocks[i] * kBlock, pattern(kBlock, 900 + i), false, arrival);
    last_end = t.end;
    const std::optional<uint32_t> f = r.disk->allocator().fill_track();
    if (f == fill) continue;
    ASSERT_TRUE(f.has_value()) << "write " << i << ": no fill track with empty tracks left";
    EXPECT_TRUE(empty.count(*f)) << "write " << i << ": new fill track " << *f << " was not empty";
    if (fill && empty.count(*fill)) {
      // A compacted track the allocator filled and left.
      const uint32_t used = r.used(*fill);
      trace += std::to_string(*fill) + ":" + std::to_string(used) + " ";
      EXPECT_GE(used, threshold) << "track " << *fill << " left below the threshold";
      EXPECT_LT(used, threshold + 9) << "track " << *fill << " filled past the threshold";
      ++*tracks_checked;
    }
    fill = f;
  }
  std::printf("\n%s single-block writes: sectors used when the allocator left each compacted "
              "track: %s\n",
              paced ? "paced" : "back-to-back", trace.c_str());
  EXPECT_EQ(*tracks_checked, 3);
  EXPECT_EQ(r.disk->check_consistency(), "");
  EXPECT_EQ(r.first_difference(), std::nullopt);
}

TEST(VldCompaction, CompactedTracksAreFilledToTheThreshold) {
  int checked = 0;
  fill_compacted_tracks(/*paced=*/true, &checked);
}

// Back to back (each write arriving when the previous one ended, as with
// latency=none) the threshold is not what stops the allocator: each command
// is 9 sectors (block + map sector) and the next one reaches the platter
// 100 us (4.27 sectors) of controller overhead later, so a 5-sector gap
// stays behind every command; once the only free run that takes a block is
// a revolution away, the nearest empty track (a 0.5 ms head switch) is
// sooner (eager_allocator.h: "unless the nearest empty track is sooner"),
// and the allocator moves on with the track below fill= but full for
// blocks. The gaps take map sectors later. (docs/compaction.md)
TEST(VldCompaction, BackToBackWritesLeaveATrackWhenNoBlockFitsNearby) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  // A fresh disk: every track but the system track is empty.
  std::optional<uint32_t> fill;
  int left = 0;
  for (uint64_t b = 0; b < 200 && left < 3; ++b) {
    r.write(b * kBlock, pattern(kBlock, 40 + b), false, std::nullopt);
    const std::optional<uint32_t> f = r.disk->allocator().fill_track();
    if (fill && f != fill) {
      const uint32_t used = r.used(*fill);
      // Below the threshold (192), in whole commands of 9 sectors ...
      EXPECT_LT(used, static_cast<uint32_t>(0.75 * kSpt)) << "track " << *fill;
      EXPECT_EQ(used % 9, 0u) << "track " << *fill;
      // ... and left only when at most one run could still take a block.
      EXPECT_LE(r.disk->free_space().holes_for(*fill, 8), 1u) << "track " << *fill;
      ++left;
    }
    fill = f;
  }
  EXPECT_EQ(left, 3);
  EXPECT_EQ(r.disk->check_consistency(), "");
}

// ------------------------------------------------------------- disabled

TEST(VldCompaction, DisabledCompactorRunsNoStepsAndChangesNothing) {
  const Superblock sb = small_superblock();
  VldOptions off;
  off.compactor.enabled = false;
  Rig r(sb, off), on(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 77);
  age(on, 77);
  // Enabled, the same disk has work to do: the comparison below is not
  // trivially true.
  EXPECT_GT(on.ctl->idle_until(on.ctl->busy_until() + sim_ms(100)), 0u);

  const std::vector<std::byte> image = r.store->bytes();
  const std::vector<MapEntry> map = r.disk->map();
  const SimTime busy = r.ctl->busy_until();
  const uint32_t empties = r.disk->free_space().empty_tracks();
  const uint64_t free_sectors = r.disk->free_space().free_sectors();
  const VldStats vs = r.disk->vld_stats();
  EXPECT_EQ(r.ctl->idle_until(busy + sim_ms(1000)), 0u);
  EXPECT_EQ(r.ctl->idle_step(busy), std::nullopt);
  EXPECT_EQ(r.disk->idle_step(busy), std::nullopt);
  EXPECT_EQ(r.ctl->busy_until(), busy);
  EXPECT_TRUE(r.store->bytes() == image) << "the image changed";
  EXPECT_EQ(r.disk->map(), map);
  EXPECT_EQ(r.disk->free_space().empty_tracks(), empties);
  EXPECT_EQ(r.disk->free_space().free_sectors(), free_sectors);
  EXPECT_EQ(r.disk->vld_stats().records_written, vs.records_written);
  EXPECT_EQ(r.disk->vld_stats().map_sectors_written, vs.map_sectors_written);
  EXPECT_FALSE(r.disk->compaction_victim().has_value());
  const CompactorStats& cs = r.disk->compactor().stats();
  EXPECT_EQ(cs.steps, 0u);
  EXPECT_EQ(cs.tracks_compacted, 0u);
  EXPECT_EQ(cs.blocks_moved, 0u);
  EXPECT_EQ(cs.busy.count(), 0);
  EXPECT_EQ(r.ctl->stats().idle_steps, 0u);
  EXPECT_FALSE(r.disk->mode_report().compactor->enabled);
  // A request arriving during the "idle time" starts when it arrives.
  RequestTiming t = r.write(0, pattern(kBlock, 5), false, busy + sim_ms(10));
  EXPECT_EQ(t.queued.count(), 0);
  EXPECT_EQ(r.ctl->stats().preempt_wait.count(), 0u);
}

// ------------------------------------------ only what the idle time covers

// docs/compaction.md section 2a: a step starts only if the expected idle period covers it, a
// victim only if it covers the whole track, and a victim whose moves ran
// longer than predicted is closed by its record rather than left
// half-emptied. VldDisk::idle_step directly, with hand-set period ends.
TEST(VldCompaction, AStepThatWouldOutlastTheExpectedIdlePeriodIsNotStarted) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  if (HasFatalFailure()) return;
  age(r, 99);
  const CompactorStats& cs = r.disk->compactor().stats();
  const CompactionCosts& costs = r.disk->compactor().costs();
  const std::vector<std::byte> image = r.store->bytes();
  const SimTime s = r.ctl->busy_until();

  // 1 ns of expected idle time: no victim is chosen, nothing moves.
  EXPECT_EQ(r.disk->idle_step(s, s + SimDuration{1}), std::nullopt);
  EXPECT_EQ(cs.steps_declined, 1u);
  EXPECT_EQ(cs.steps, 0u);
  EXPECT_FALSE(r.disk->compaction_victim().has_value());
  EXPECT_TRUE(r.store->bytes() == image) << "a declined step wrote";

  // The end unknown (no arrival times): the same disk starts a victim.
  const std::optional<Completion> first = r.disk->idle_step(s, kUnknownIdleEnd);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(r.disk->compaction_victim().has_value());
  EXPECT_EQ(cs.blocks_moved + cs.map_sectors_moved, 1u);
  EXPECT_FALSE(costs.read_track.empty());
  EXPECT_FALSE(costs.move.empty());

  // Mid-victim, 1 ns short of the next move and its record: only the record
  // fits, and it closes the victim (cut short, not settled).
  const SimTime s2 = first->end;
  const SimTime end2 = s2 + costs.next_move() - SimDuration{1};
  const std::optional<Completion> cut = r.disk->idle_step(s2, end2);
  ASSERT_TRUE(cut.has_value());
  EXPECT_LE(cut->end, end2);
  EXPECT_EQ(cs.tracks_cut_short, 1u);
  EXPECT_EQ(cs.tracks_compacted, 0u);
  EXPECT_EQ(cs.tracks_abandoned, 0u);
  EXPECT_EQ(cs.blocks_moved + cs.map_sectors_moved, 1u) << "the cut moved more";
  EXPECT_FALSE(r.disk->compaction_victim().has_value());

  // Time for a record but not for a whole track: declined again.
  const SimTime s3 = cut->end;
  EXPECT_EQ(r.disk->idle_step(s3, s3 + costs.record.max()), std::nullopt);
  EXPECT_EQ(cs.steps_declined, 2u);
  EXPECT_FALSE(r.disk->compaction_victim().has_value());
  EXPECT_EQ(r.disk->check_consistency(), "");
}

// Regular idle periods of `gap` after bursts of 16 one-block writes (each
// burst's first write arriving when the period ends): the controller
// predicts the period from the ones before and the disk works only inside
// it. Returns the compactor's counts; fails the test if a step ran past a
// period's end, a request waited for one, or a burst found a victim
// half-emptied.
CompactorStats regular_gaps(SimDuration gap, int rounds, uint64_t* idle_steps) {
  const Superblock sb = small_superblock();
  Rig r(sb);
  check_small_disk(r);
  age(r, 4321);
  std::mt19937_64 rng(8);
  SimTime arrival = r.ctl->busy_until();
  for (int k = 0; k < rounds; ++k) {
    SCOPED_TRACE("round " + std::to_string(k));
    EXPECT_FALSE(r.disk->compaction_victim().has_value()) << "a burst found a track half-emptied";
    for (int i = 0; i < 16; ++i)
      r.write((rng() % 2048) * kBlock, pattern(kBlock, rng()), true,
              i == 0 ? std::optional<SimTime>(arrival) : std::nullopt);
    const SimTime began = r.ctl->busy_until();
    r.ctl->idle_until(began + gap);
    EXPECT_LE(r.ctl->busy_until(), began + gap) << "a step ran past the idle period";
    arrival = began + gap;
  }
  EXPECT_EQ(r.ctl->stats().preempt_wait.count(), 0u);
  EXPECT_EQ(r.disk->check_consistency(), "");
  EXPECT_EQ(r.first_difference(), std::nullopt);
  *idle_steps = r.ctl->stats().idle_steps;
  return r.disk->compactor().stats();
}

TEST(VldCompaction, RegularIdlePeriodsShorterThanAnyStepRunNone) {
  // 2 ms: less than a third of a revolution (6 ms), which reading a
  // victim's track takes before anything else.
  uint64_t steps = 1;
  const CompactorStats cs = regular_gaps(sim_ms(2), 20, &steps);
  EXPECT_EQ(steps, 0u);
  EXPECT_EQ(cs.steps, 0u);
  // Round 0's period has no history and its start is not worth a step
  // either: every period declines once.
  EXPECT_EQ(cs.steps_declined, 20u);
}

TEST(VldCompaction, RegularIdlePeriodsEmptyWholeTracksInsideThem) {
  uint64_t steps = 0;
  const CompactorStats cs = regular_gaps(sim_ms(60), 30, &steps);
  EXPECT_GT(cs.tracks_compacted, 5u) << "the periods fit whole tracks: the test is not trivial";
  EXPECT_EQ(cs.steps, steps);
  // Each period but the first ends with a step declined, or nearly each:
  // idle work that starts after narrow log records first writes a record
  // naming the whole window (core/vld/scan_set.h), and the period it falls
  // in may end without one (28 of 29 in a clang build).
  EXPECT_GE(cs.steps_declined, 28u) << "each period but the first ends with a step declined";
}

// ---------------------------------------------------------- determinism

TEST(VldCompaction, SameWorkloadAndGrantsGiveTheSameDrive) {
  const Superblock sb = small_superblock();
  auto run = [&](Rig& r) {
    age(r, 2718);
    std::mt19937_64 rng(31);
    for (int round = 0; round < 8; ++round) {
      r.random_ops(100, rng);
      r.ctl->idle_until(r.ctl->busy_until() + sim_ms(static_cast<double>(5 + rng() % 60)));
      // A write arriving in the middle of the idle time.
      const SimTime u = r.ctl->busy_until() - SimDuration{static_cast<int64_t>(rng() % 1'000'000)};
      r.write((rng() % 2048) * kBlock, pattern(kBlock, rng()), rng() % 2 == 0, u);
    }
  };
  Rig a(sb), b(sb);
  check_small_disk(a);
  if (HasFatalFailure()) return;
  run(a);
  run(b);
  const CompactorStats& x = a.disk->compactor().stats();
  const CompactorStats& y = b.disk->compactor().stats();
  EXPECT_GT(x.steps, 0u);
  EXPECT_GT(x.tracks_compacted, 0u);
  EXPECT_EQ(x.steps, y.steps);
  EXPECT_EQ(x.tracks_compacted, y.tracks_compacted);
  EXPECT_EQ(x.tracks_abandoned, y.tracks_abandoned);
  EXPECT_EQ(x.blocks_moved, y.blocks_moved);
  EXPECT_EQ(x.map_sectors_moved, y.map_sectors_moved);
  EXPECT_EQ(x.busy, y.busy);
  const DiskStats p = a.ctl->stats(), q = b.ctl->stats();
  EXPECT_EQ(p.idle_steps, q.idle_steps);
  EXPECT_EQ(p.idle_busy, q.idle_busy);
  EXPECT_EQ(p.busy, q.busy);
  EXPECT_EQ(p.preempt_wait.count(), q.preempt_wait.count());
  EXPECT_EQ(p.preempt_wait.max_ns(), q.preempt_wait.max_ns());
  EXPECT_EQ(p.preempt_wait.mean_ns(), q.preempt_wait.mean_ns());
  EXPECT_EQ(a.ctl->busy_until(), b.ctl->busy_until());
  EXPECT_EQ(a.disk->compaction_victim(), b.disk->compaction_victim());
  // (Not "recovery": it holds the wall time of opening.)
  const ModeReport ra = a.disk->mode_report(), rb = b.disk->mode_report();
  EXPECT_EQ(nlohmann::json(*ra.vld).dump(), nlohmann::json(*rb.vld).dump());
  EXPECT_EQ(nlohmann::json(*ra.compactor).dump(), nlohmann::json(*rb.compactor).dump());
  EXPECT_TRUE(a.store->bytes() == b.store->bytes()) << "the images differ";
  a.ctl->close();
  b.ctl->close();
  EXPECT_TRUE(a.store->bytes() == b.store->bytes()) << "the closed images differ";
}

}  // namespace
}  // namespace vld
