// The crash harness of mode=vld and mode=lld: every crash state a
// RecordingStore can materialize for a workload, checked against the crash
// contract (see tests/unit/crash_oracle.h for the contract, the oracle and
// the checks).
//
//   CrashOracle.*     the oracle itself, on hand-made states: it must accept
//                     the allowed ones and reject lost durable writes, torn
//                     requests, other blocks' data and garbage.
//   CrashHarness.Exhaustive*
//                     a short scripted workload; every crash point (after
//                     every backing-store event) and every subset of the
//                     pending units (2^k), at 4 KiB and torn at 512 bytes;
//                     points with more pending units than the cap get every
//                     prefix subset plus random subsets instead.
//   CrashHarness.WriteZeroesOverANonDurableTrimIsAllOrNothing,
//   CrashHarness.FlushedWritesSurviveReuseOfReplacedBlocks
//                     the two bugs the harness found (fixed in cfbd589), each
//                     as a tiny workload crashed everywhere.
//   CrashHarness.Randomized
//                     random workloads (overwrites, requests up to 64 KiB over
//                     several map pieces, trims, zeros, flushes, FUA, clean
//                     close and reopen), crashed at random points with random
//                     and prefix subsets.
//   CrashHarness.Lld*
//                     mode=lld, with a 64 KiB NVRAM (every completed write,
//                     trim and zero must survive) and with nvram=0 (Lld-
//                     NoNvram*): the scripted workload exhaustively at 4K
//                     and torn 512; an aged disk whose cleaner runs;
//                     requests up to 512 KiB past the NVRAM and over many
//                     segments, among writes that fill the NVRAM again and
//                     again; idle-time drain and cleaning between requests,
//                     and in idle periods shorter than a victim's cleaning;
//                     recovery cut at each barrier on every sampled state;
//                     requests of the advertised maximum on a full, aged
//                     disk (LldRequestsUpToTheAdvertisedMaximum...);
//                     and the three bugs they found, fixed in core/lld.
//                     DISABLED_LldRequestLargerThanTheFreeSegments... shows
//                     a request lld commits in pieces (no room for it whole,
//                     longer than the maximum the plugin would advertise)
//                     failing clause 3.
// Every crash state gets all five checks, including recovery twice and, for
// every few states, a second crash in the middle of recovery's own writes.
// Every test prints "crash states verified: N" and asserts its own minimum
// (Randomized: 10,000); a normal run verifies about 45,000 crash states for
// mode=vld and 41,000 for mode=lld.
#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <iostream>
#include <random>

#include "tests/unit/crash_oracle.h"

namespace vld::crash {
namespace {

std::atomic<uint64_t> g_total_verified{0};
std::atomic<uint64_t> g_total_recovery_cuts{0};

// Each crash state allocates and frees a few images of a megabyte or two; with
// glibc's defaults they come from fresh mmap()s and the page faults cost as
// much as the checks. Keep them in the heap.
const bool g_malloc_tuned = [] {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  return true;
}();

void report(const char* what, const RunResult& r, double seconds) {
  g_total_verified += r.verified;
  g_total_recovery_cuts += r.recovery_cuts;
  std::cout << "[ crash    ] " << what << ": crash states verified: " << r.verified << " ("
            << r.nested << " with recovery cut at each barrier), recovery-cut states verified: "
            << r.recovery_cuts << ", failures: " << r.failures << ", " << seconds
            << " s; all crash tests so far: " << g_total_verified.load() << " crash states, "
            << g_total_recovery_cuts.load() << " recovery-cut states" << std::endl;
  for (const std::string& m : r.messages) ADD_FAILURE() << what << ": " << m;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- the oracle on hand-made states ----------------------------------------

class CrashOracle : public ::testing::Test {
 protected:
  // Blocks 0..7 of a tiny disk; requests:
  //   #1 write 0-1, #2 flush, #3 write 1-2, #4 write 5 FUA, #5 trim 0,
  //   #6 write 6-7 (in flight at the end).
  void SetUp() override {
    RigConfig c;
    c.export_bytes = 64 * 1024;
    c.vld.retired_limit = 4096;
    rig_ = std::make_unique<Rig>(c, 7);
    rig_->write(0, 2 * kBlock, false);
    rig_->flush();
    rig_->write(kBlock, 2 * kBlock, false);
    rig_->write(5 * kBlock, kBlock, true);
    rig_->trim(0, kBlock, false);
    rig_->write(6 * kBlock, 2 * kBlock, false);
    ASSERT_EQ(rig_->check_live(), "");
  }
  uint64_t unit_hash(size_t req, uint64_t block) const {
    for (size_t u : rig_->requests()[req].units)
      for (auto [b, h] : rig_->units()[u].effects)
        if (b == block) return h;
    ADD_FAILURE() << "request " << req << " did not write block " << block;
    return 0;
  }
  std::vector<uint64_t> zeros() const { return std::vector<uint64_t>(rig_->blocks(), zero_hash()); }
  size_t end() const { return rig_->rec().events(); }
  std::unique_ptr<Rig> rig_;
};

TEST_F(CrashOracle, AcceptsTheLiveStateAndTheDurableMinimum) {
  std::vector<uint64_t> live = zeros();
  for (uint64_t b = 0; b < rig_->blocks(); ++b)
    live[b] = hash_block(rig_->live().data() + b * kBlock);
  EXPECT_EQ(rig_->check(end(), live), "");
  // Only the durable ones: #1 (flushed) and #4 (FUA).
  std::vector<uint64_t> min = zeros();
  min[0] = unit_hash(1, 0);
  min[1] = unit_hash(1, 1);
  min[5] = unit_hash(4, 5);
  EXPECT_EQ(rig_->check(end(), min), "");
  // The trim may or may not have happened.
  min[0] = zero_hash();
  EXPECT_EQ(rig_->check(end(), min), "");
}

TEST_F(CrashOracle, RejectsALostDurableWrite) {
  std::vector<uint64_t> s = zeros();
  s[0] = unit_hash(1, 0);
  s[1] = unit_hash(1, 1);  // #4 (FUA) lost
  EXPECT_NE(rig_->check(end(), s), "");
  // Before #4 completed, the same state is fine.
  EXPECT_EQ(rig_->check(rig_->requests()[4].ev_end - 1, s), "");
}

TEST_F(CrashOracle, RejectsATornRequest) {
  std::vector<uint64_t> s = zeros();
  s[0] = unit_hash(1, 0);
  s[1] = unit_hash(3, 1);  // #3 on block 1 but not on block 2
  s[5] = unit_hash(4, 5);
  std::string why = rig_->check(end(), s);
  EXPECT_NE(why, "");
  s[2] = unit_hash(3, 2);
  EXPECT_EQ(rig_->check(end(), s), "");
  // #6 half there.
  s[6] = unit_hash(6, 6);
  EXPECT_NE(rig_->check(end(), s), "");
}

TEST_F(CrashOracle, RejectsOtherBlocksDataGarbageAndTheFuture) {
  std::vector<uint64_t> s = zeros();
  s[0] = unit_hash(1, 0);
  s[1] = unit_hash(1, 1);
  s[5] = unit_hash(4, 5);
  std::vector<uint64_t> t = s;
  t[3] = unit_hash(1, 0);  // block 0's data in block 3
  EXPECT_NE(rig_->check(end(), t), "");
  t = s;
  t[4] = 12345;  // garbage
  EXPECT_NE(rig_->check(end(), t), "");
  t = s;
  t[6] = unit_hash(6, 6);
  t[7] = unit_hash(6, 7);
  EXPECT_EQ(rig_->check(end(), t), "");
  // ... but not before #6 was issued.
  EXPECT_NE(rig_->check(rig_->requests()[6].ev_begin, t), "");
}

TEST_F(CrashOracle, OlderThanTheDurableVersionIsRejected) {
  std::vector<uint64_t> s = zeros();
  s[0] = unit_hash(1, 0);
  s[1] = unit_hash(1, 1);
  s[5] = unit_hash(4, 5);
  rig_->flush();  // now #3 and #6 are durable too: block 1 must be #3's
  const size_t p = rig_->rec().events();
  s[6] = unit_hash(6, 6);
  s[7] = unit_hash(6, 7);
  EXPECT_NE(rig_->check(p, s), "");
  s[1] = unit_hash(3, 1);
  s[2] = unit_hash(3, 2);
  EXPECT_EQ(rig_->check(p, s), "");
  // A trim is advisory: block 0 may show #1's data or zeros.
  s[0] = zero_hash();
  EXPECT_EQ(rig_->check(p, s), "");
}

// ---- exhaustive, small -----------------------------------------------------------

// The scripted workload: single blocks, a 3-block request over two map pieces
// (blocks 31-33; pieces are 32 blocks), overwrites of one block, a trim, a
// partial-block write (read-modify-write), write-zeroes, a FUA write and
// flushes. retired_limit=2 and a one-cylinder window make it write several
// log records on the way, and checkpoint_every=2 delta checkpoints (each a
// group rewriting both pieces, then a record).
std::unique_ptr<Rig> scripted_rig() {
  RigConfig c;
  c.export_bytes = 256 * 1024;  // 64 blocks: pieces 0 and 1
  c.vld.window_cylinders = 1;
  c.vld.retired_limit = 2;
  c.vld.checkpoint_every_map_sectors = 2;
  auto rig = std::make_unique<Rig>(c, 1);
  const uint64_t B = kBlock;
  rig->write(0, B, false);                  // #1
  rig->write(31 * B, 3 * B, false);         // #2 pieces 0 and 1
  rig->flush();                             // #3
  rig->write(5 * B, B, false);              // #4
  rig->write(5 * B, B, false);              // #5 overwrite
  rig->write(32 * B, B, true);              // #6 FUA
  rig->trim(31 * B, B, false);              // #7
  rig->zero(31 * B + 2048, B, false, false);  // #8 partial 31 (just trimmed) and 32
  rig->write(40 * B + 512, B, false);       // #9 partial blocks 40, 41
  rig->write(0, B, false);                  // #10 overwrite
  rig->flush();                             // #11
  rig->write(63 * B, B, false);             // #12
  rig->zero(33 * B, 2 * B, true, false);    // #13 may_trim
  return rig;
}

// Jobs at every crash point of the rig after its format, at granularity g:
// every subset of the pending units where there are at most `cap`, else
// every prefix subset and `samples` random ones; and how many points were
// which.
struct EveryPoint {
  std::vector<Job> jobs;
  size_t exhaustive_points = 0, sampled_points = 0, max_k = 0;
};

EveryPoint every_point(const Rig& rig, G g, size_t cap, size_t samples, uint64_t seed) {
  EveryPoint e;
  std::mt19937_64 rng(seed);
  for (size_t p = rig.format_end(); p <= rig.rec().events(); ++p) {
    const size_t k = rig.rec().pending_unit_count(p, g);
    e.max_k = std::max(e.max_k, k);
    if (k <= cap) {
      ++e.exhaustive_points;
      for (uint64_t m = 0; m < (uint64_t{1} << k); ++m) e.jobs.push_back(Job{p, g, Job::Kind::kMask, m});
    } else {
      ++e.sampled_points;
      for (size_t j = 0; j <= k; ++j) e.jobs.push_back(Job{p, g, Job::Kind::kPrefix, j});
      for (size_t j = 0; j < samples; ++j) e.jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
    }
  }
  return e;
}

// The scripted workload's shapes on a disk of 1 KiB blocks (block=1K, what
// ext4 of 1 KiB blocks writes whole): 4 KiB requests of four blocks, 1 KiB
// writes, a 512-byte write (a read-modify-write of half a block), a request
// over two map pieces, trims, write-zeroes, a FUA write and flushes, with
// the same log records and delta checkpoints on the way.
std::unique_ptr<Rig> scripted_rig_1k() {
  RigConfig c;
  c.block_bytes = 1024;
  c.export_bytes = 64 * 1024;  // 64 blocks: pieces 0 and 1
  c.vld.window_cylinders = 1;
  c.vld.retired_limit = 2;
  c.vld.checkpoint_every_map_sectors = 2;
  auto rig = std::make_unique<Rig>(c, 3);
  const uint64_t B = 1024;
  rig->write(0, 4 * B, false);               // #1 blocks 0-3
  rig->write(30 * B, 4 * B, false);          // #2 blocks 30-33: pieces 0 and 1
  rig->flush();                              // #3
  rig->write(B, B, false);                   // #4 block 1
  rig->write(B + 512, 512, false);           // #5 half of block 1
  rig->write(33 * B, B, true);               // #6 FUA
  rig->trim(30 * B, 2 * B, false);           // #7
  rig->zero(31 * B + 512, B, false, false);  // #8 partial 31 (just trimmed) and 32
  rig->write(40 * B + 512, 3 * B, false);    // #9 partial blocks 40 and 43
  rig->write(0, B, false);                   // #10 overwrite
  rig->flush();                              // #11
  rig->write(63 * B, B, false);              // #12
  rig->zero(34 * B, 2 * B, true, false);     // #13 may_trim
  return rig;
}

void run_exhaustive(G g, size_t cap, size_t samples, uint64_t min_states,
                    std::unique_ptr<Rig> (*make_rig)() = scripted_rig) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Rig> rig = make_rig();
  ASSERT_EQ(rig->check_live(), "");
  const RecordingStore& rec = rig->rec();
  const EveryPoint e = every_point(*rig, g, cap, samples, 42);
  std::cout << "[ crash    ] scripted workload, " << rig->block_bytes() << "-byte blocks: "
            << rig->requests().size() << " requests, "
            << rec.events() << " backing-store events (" << rec.syncs() << " syncs), "
            << rig->vld_disk().vld_stats().records_written << " log records, "
            << rig->vld_disk().vld_stats().delta_checkpoints << " delta checkpoints; " << gran_name(g)
            << ": " << e.exhaustive_points << " crash points exhaustive (all 2^k subsets of their k <= "
            << cap << " pending units), " << e.sampled_points << " sampled (k > " << cap
            << ": all k+1 prefix subsets + " << samples << " random ones); largest k " << e.max_k
            << std::endl;
  ASSERT_GE(rig->vld_disk().vld_stats().delta_checkpoints, 2u) << "precondition";
  RunResult r = run_jobs(*rig, e.jobs, harness_threads(), /*nested_every=*/7, 1);
  const std::string what = std::string(g == G::k4K ? "exhaustive 4K" : "exhaustive torn 512") +
                           ", " + std::to_string(rig->block_bytes()) + "-byte blocks";
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, min_states);
}

TEST(CrashHarness, Exhaustive4K) { run_exhaustive(G::k4K, 14, 2048, 4000); }

TEST(CrashHarness, ExhaustiveTorn512) { run_exhaustive(G::k512, 14, 1024, 10000); }

TEST(CrashHarness, ExhaustiveOneKiBBlocks4K) {
  run_exhaustive(G::k4K, 14, 1024, 3000, scripted_rig_1k);
}

TEST(CrashHarness, ExhaustiveOneKiBBlocksTorn512) {
  run_exhaustive(G::k512, 14, 512, 6000, scripted_rig_1k);
}

// ---- focused cases --------------------------------------------------------------

// Every crash point from event `from` on, at both granularities: all subsets
// where there are at most `exhaustive_k` pending units, else every prefix
// subset and `samples` random ones.
std::vector<Job> point_jobs(const Rig& rig, size_t from, size_t exhaustive_k, size_t samples,
                            uint64_t seed) {
  std::vector<Job> jobs;
  std::mt19937_64 rng(seed);
  for (G g : {G::k4K, G::k512})
    for (size_t p = from; p <= rig.rec().events(); ++p) {
      const size_t k = rig.rec().pending_unit_count(p, g);
      if (k <= exhaustive_k) {
        for (uint64_t m = 0; m < (uint64_t{1} << k); ++m) jobs.push_back(Job{p, g, Job::Kind::kMask, m});
        continue;
      }
      for (size_t j = 0; j <= k; ++j) jobs.push_back(Job{p, g, Job::Kind::kPrefix, j});
      for (size_t j = 0; j < samples; ++j) jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
    }
  return jobs;
}

RunResult run_points(const Rig& rig, size_t from) {
  return run_jobs(rig, point_jobs(rig, from, 12, 64, 5), harness_threads(), /*nested_every=*/3, 5);
}

// What the compactor works on: blocks [0, region) written in 8-block
// requests, then `updates` random single-block overwrites among them (the
// holes), flushed.
void fill_and_fragment(Rig& rig, uint64_t region, int updates, std::mt19937_64& rng) {
  for (uint64_t b = 0; b < region; b += 8) rig.write(b * kBlock, 8 * kBlock, false);
  for (int i = 0; i < updates; ++i) rig.write((rng() % region) * kBlock, kBlock, false);
  rig.flush();
}

bool syncs_between(const Rig& rig, size_t from, size_t to) {
  for (size_t e = from; e < to; ++e)
    if (rig.rec().event(e).kind == RecordingStore::Event::Kind::kSync) return true;
  return false;
}

// Write-zeroes over a block whose trim is not durable yet, and a block of
// another map piece: the zero request must read back all old or all new.
TEST(CrashHarness, WriteZeroesOverANonDurableTrimIsAllOrNothing) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c;
  c.vld.retired_limit = 4096;
  // The rig's window is small: at the default 0.85 these few writes would
  // spend it, and the record that moves it on would make the trim durable.
  c.vld.window_move_fraction = 0.5;
  Rig rig(c, 3);
  const uint64_t B = kBlock;
  rig.write(31 * B, 2 * B, false);          // #1 blocks 31 (piece 0) and 32 (piece 1)
  rig.flush();                              // #2
  rig.trim(31 * B, B, false);               // #3 unmaps block 31: not durable
  rig.zero(31 * B + 2048, B, false, false);  // #4 zeros the 2nd half of 31, the 1st half of 32
  ASSERT_EQ(rig.check_live(), "");
  const auto& reqs = rig.requests();
  ASSERT_FALSE(syncs_between(rig, reqs[3].ev_begin, reqs[4].ev_end))
      << "precondition: the trim must still be pending when the zero request is written";
  RunResult r = run_points(rig, reqs[3].ev_begin);
  report("write-zeroes over a pending trim", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
}

// A flushed write A, then a FUA write B replacing one of A's blocks, then
// writes elsewhere. Recovery checks the data of every request written since
// the last log record, A's included, so A's replaced block must not be reused
// before the next record; if it is, recovery rejects A, and B with it (its
// map sector follows A's in the version chain): two durable writes lost.
// (Before cfbd589 the sync of B freed A's replaced block and the second write
// below reused it.)
TEST(CrashHarness, FlushedWritesSurviveReuseOfReplacedBlocks) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c;
  c.vld.window_cylinders = 2;
  c.vld.retired_limit = 4096;
  Rig rig(c, 4);
  const uint64_t B = kBlock;
  rig.write(0, 2 * B, false);  // #1 A: blocks 0 and 1
  rig.flush();                 // #2 A is durable
  const uint64_t a0 = rig.sb().platter_offset + rig.vld_disk().map()[0].psn() * kSectorBytes;
  rig.write(0, B, true);       // #3 B: block 0 again, FUA
  const size_t b_end = rig.requests().back().ev_end;
  const uint64_t records = rig.vld_disk().vld_stats().records_written;
  bool reused = false;
  for (uint64_t i = 0; i < 3; ++i) {  // #4.. two-block writes elsewhere
    const size_t e0 = rig.rec().events();
    rig.write((40 + 2 * i) * B, 2 * B, false);
    for (size_t e = e0; e < rig.rec().events(); ++e) {
      const auto& ev = rig.rec().event(e);
      if (ev.kind == RecordingStore::Event::Kind::kWrite && ev.offset < a0 + B &&
          a0 < ev.offset + ev.len && rig.vld_disk().vld_stats().records_written == records)
        reused = true;
    }
  }
  ASSERT_EQ(rig.check_live(), "");
  std::cout << "[ crash    ] A's replaced block reused before the next log record: "
            << (reused ? "yes" : "no") << std::endl;
  RunResult r = run_points(rig, b_end);
  report("flushed writes vs reuse of replaced blocks", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
}

// Recovery's checkpoint must not land on data that recovery from the same
// record reads again. A hot set of blocks rewritten round after round, each
// round flushed, leaves many replaced copies free after recovery, right
// where the head is (eager writing put them there); each later round's map
// sectors vouch that the earlier rounds were flushed. Recovery checks the
// data of every round, replaced copies too. If its checkpoint overwrote one
// and a crash came before the new record, the next recovery found that
// round's data damaged, a later map sector vouching for it, and refused the
// image: a power cut during recovery would lose the whole disk.
TEST(CrashHarness, RecoveryCutKeepsWhatRecoveryReads) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c;
  c.export_bytes = 512 * 1024;
  c.vld.retired_limit = 4096;
  // Filled block for block, tracks end up short of empty ones, so
  // placement plugs holes, right behind the head.
  c.spare_percent = 25;
  c.vld.window_move_fraction = 0;  // records only when the window is full: many groups since one
  c.vld.window_cylinders = 8;
  Rig rig(c, 5);
  const uint64_t B = kBlock;
  for (uint64_t b = 0; b < rig.blocks(); b += 8) rig.write(b * B, 8 * B, false);
  rig.flush();
  for (int round = 0; round < 12; ++round) {
    for (uint64_t b = 0; b < 6; ++b) rig.write((b * 7 % 40) * B, B, false);
    rig.flush();
  }
  rig.write(3 * B, B, false);
  ASSERT_EQ(rig.check_live(), "");
  RunResult r = run_jobs(rig, point_jobs(rig, rig.rec().events() - 40, 6, 8, 5), harness_threads(),
                         /*nested_every=*/1, 5);
  report("recovery cut vs replaced data", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
}

// Compaction moves (paper 001, 4.2): a fragmented disk, flushed, then idle
// time in which the compactor empties tracks, with a plain write, a FUA write
// and a flush arriving between its steps. Every crash point from the first
// move on: a move is a map update whose data is unchanged, so a crash keeps
// the old copy or the new one, never loses a durable write, and the track
// is reused only after the log record that ends it.
TEST(CrashHarness, CompactionMovesKeepEveryWrite) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c;
  c.export_bytes = 512 * 1024;  // 128 blocks, 16 per cylinder of 4 tracks
  c.vld.window_cylinders = 4;
  c.vld.retired_limit = 4096;
  // Once compaction settles, idle time writes a delta checkpoint of the
  // pieces the writes and moves scattered (at least 8 / 8 of them).
  c.vld.checkpoint_every_map_sectors = 8;
  Rig rig(c, 21);
  const uint64_t B = kBlock;
  std::mt19937_64 rng(21);
  fill_and_fragment(rig, 96, 40, rng);
  ASSERT_EQ(rig.check_live(), "");
  const size_t from = rig.rec().events();
  size_t steps = rig.idle(3);
  rig.write(100 * B, B, false);  // arrives between moves
  steps += rig.idle(3);
  rig.write(3 * B, B, true);     // FUA, over a block that may be on the victim
  steps += rig.idle(4);
  rig.flush();
  steps += rig.idle(64);
  steps += rig.idle(4);  // settled: the delta checkpoint is the next idle step
  ASSERT_EQ(rig.check_live(), "");
  const CompactorStats& cs = rig.vld_disk().compactor().stats();
  std::cout << "[ crash    ] compaction: " << steps << " steps, " << cs.blocks_moved
            << " blocks and " << cs.map_sectors_moved << " map sectors moved, "
            << cs.tracks_compacted << " tracks emptied, " << rig.rec().events() - from
            << " backing-store events" << std::endl;
  ASSERT_GE(cs.tracks_compacted, 1u) << "precondition: the compactor must empty a track";
  ASSERT_GE(cs.blocks_moved, 2u);
  ASSERT_GE(rig.vld_disk().vld_stats().idle_delta_checkpoints, 1u)
      << "precondition: idle time must write a delta checkpoint";
  // Every crash point, lighter than run_points (71 events): all subsets
  // up to 6 pending units, else every prefix and 12 random subsets.
  RunResult r = run_jobs(rig, point_jobs(rig, from, 6, 12, 21), harness_threads(),
                         /*nested_every=*/5, 21);
  report("compaction moves", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified, 1000u);
}

// A window whose empty tracks the writes have used up moves on, with a log
// record, to one around the head that still has some (VldDisk::
// window_with_empty_tracks): after compaction's sweep left empty tracks in
// every window, writes with flushes and a FUA write among them run the
// windows dry. Every crash point from the first write after the sweep: a
// record that moves the window is one like any other, and recovery reads
// the window it names.
TEST(CrashHarness, DryWindowMovesKeepEveryWrite) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c;
  c.export_bytes = 1024 * 1024;  // 256 blocks, 32 per cylinder of 4 tracks
  c.vld.window_cylinders = 2;
  c.vld.retired_limit = 4096;
  Rig rig(c, 23);
  const uint64_t B = kBlock;
  const uint64_t region = 200;
  std::mt19937_64 rng(23);
  fill_and_fragment(rig, region, 150, rng);
  size_t steps = 0;
  for (size_t n; (n = rig.idle(64)) > 0;) steps += n;  // the sweep, to the end
  ASSERT_EQ(rig.check_live(), "");
  const size_t from = rig.rec().events();
  const VldStats& st = rig.vld_disk().vld_stats();
  for (int i = 0; i < 400 && st.dry_window_moves < 2; ++i) {
    rig.write((rng() % region) * B, B, /*fua=*/i % 17 == 5);
    if (i % 7 == 6) rig.flush();
  }
  rig.write(3 * B, 2 * B, false);  // unflushed at the end
  ASSERT_EQ(rig.check_live(), "");
  std::cout << "[ crash    ] dry windows: " << steps << " idle steps, "
            << rig.vld_disk().compactor().stats().tracks_compacted << " tracks emptied, "
            << st.dry_window_moves << " dry-window moves, " << rig.rec().events() - from
            << " backing-store events" << std::endl;
  ASSERT_GE(st.dry_window_moves, 1u) << "precondition: a window must run dry and move on";
  RunResult r = run_jobs(rig, point_jobs(rig, from, 5, 4, 23), harness_threads(),
                         /*nested_every=*/16, 23);
  report("dry-window moves", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified, 1000u);
}

// Repacks (VldDisk::repack): a disk filled block by block, back to back, runs
// out of free runs that hold a block with space still free in short gaps; a
// repack moves a fragmented track's blocks onto the empty reserve track as
// one group, and a log record then frees the old copies. Every crash point
// from the first repack on, with flushes and a FUA write among the writes
// that set repacks off: a crash keeps either copy of every moved block.
TEST(CrashHarness, RepacksKeepEveryWrite) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c;
  c.export_bytes = 512 * 1024;  // 128 blocks
  c.spare_percent = 5;          // on 20 tracks of 64 sectors: gaps of 1-2 sectors strand space
  // 7 blocks fit a track beside a map sector: 18 tracks (less the system
  // and reserve tracks) hold 126, so 120 are written (vld_fillable()).
  constexpr uint64_t kWritten = 120;
  c.vld.window_cylinders = 2;
  c.vld.retired_limit = 4096;
  Rig rig(c, 31);
  const uint64_t B = kBlock;
  size_t from = 0;
  for (uint64_t b = 0; b < kWritten; ++b) {
    const size_t e0 = rig.rec().events();
    rig.write(b * B, B, /*fua=*/b % 41 == 40);
    if (!from && rig.vld_disk().vld_stats().repacks) from = e0;
    if (b % 24 == 23) rig.flush();
    if (b % 40 == 39) {  // idle-time repacks too, once runs are scarce
      const size_t e1 = rig.rec().events();
      rig.idle(4);
      if (!from && rig.vld_disk().vld_stats().repacks) from = e1;
    }
  }
  for (uint64_t b : {3, 77, 119}) rig.write(b * B, B, false);
  rig.flush();
  ASSERT_EQ(rig.check_live(), "");
  const VldStats& st = rig.vld_disk().vld_stats();
  std::cout << "[ crash    ] repacks: " << st.repacks << " (" << st.idle_repacks
            << " in idle time), " << st.repack_blocks_moved
            << " blocks moved; crash points from event " << from << " of "
            << rig.rec().events() << std::endl;
  ASSERT_GE(st.repacks, 2u) << "precondition: the fill must run out of block-sized runs";
  ASSERT_GE(st.idle_repacks, 1u) << "precondition: idle time must repack too";
  RunResult r = run_jobs(rig, point_jobs(rig, from, 5, 8, 31), harness_threads(),
                         /*nested_every=*/5, 31);
  report("repacks", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified, 1000u);
}

// ---- randomized, larger ------------------------------------------------------------

void random_workload(Rig& rig, std::mt19937_64& rng, size_t requests) {
  const uint64_t blocks = rig.blocks(), bs = rig.block_bytes();
  auto pick = [&](uint64_t n) { return rng() % n; };
  for (size_t i = 0; i < requests; ++i) {
    const unsigned op = pick(100);
    // A hot region a quarter of the time, so overwrites are common.
    const uint64_t region = pick(4) == 0 ? std::min<uint64_t>(blocks, 24) : blocks;
    const uint64_t len_blocks = 1 + (pick(3) == 0 ? pick(16) : pick(3));  // up to 64 KiB
    uint64_t first = pick(region);
    uint64_t len = std::min(len_blocks, blocks - first) * bs;
    uint64_t offset = first * bs;
    if (pick(5) == 0) {  // sector-aligned, not block-aligned
      const uint64_t head = 512 * pick(bs / 512), cut = 512 * pick(bs / 512);
      offset += head;
      len = len > head + cut + 512 ? len - head - cut : 512;
      if (offset + len > blocks * bs) len = blocks * bs - offset;
    }
    if (op < 52) {
      rig.write(offset, len, false);
    } else if (op < 62) {
      rig.write(offset, len, true);
    } else if (op < 72) {
      rig.trim(offset, len, pick(8) == 0);
    } else if (op < 82) {
      rig.zero(offset, len, pick(2) == 0, pick(6) == 0);
    } else if (op < 92) {
      rig.flush();
    } else if (op < 96) {
      rig.idle(1 + pick(6));  // compaction steps between requests
    } else {
      rig.close_and_reopen();
      ASSERT_EQ(rig.check_live(), "");
    }
  }
}

// Random workloads (random_workload, 160 requests each), each crashed at
// `states` random points, with random and prefix subsets of the pending
// units, a third of them torn at 512 bytes. checkpoint_every: 3 writes a
// delta checkpoint every few requests (0: the default, none on disks this
// small). group_pieces: 1 or 2 spread each delta over the requests that
// follow, a group of that many pieces each, so that crashes land between
// its groups (0: a track's worth, all of a delta this small at once).
struct RandomWorkload {
  uint64_t seed, export_bytes;
  size_t states;
  uint32_t checkpoint_every, group_pieces;
};

RunResult run_random_workload(const RandomWorkload& w, uint64_t block_bytes) {
  const uint64_t seed = w.seed;
  RigConfig c;
  c.block_bytes = block_bytes;
  c.export_bytes = w.export_bytes;
  c.vld.window_cylinders = 2;
  c.vld.retired_limit = 8;
  if (w.checkpoint_every) c.vld.checkpoint_every_map_sectors = w.checkpoint_every;
  c.vld.checkpoint_group_pieces = w.group_pieces;
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  random_workload(rig, rng, 160);
  RunResult r;
  if (std::string why = rig.check_live(); !why.empty()) {
    r.failures = 1;
    r.messages.push_back("seed " + std::to_string(seed) + ": " + why);
    return r;
  }
  const RecordingStore& rec = rig.rec();
  std::vector<Job> jobs;
  const size_t span = rec.events() - rig.format_end() + 1;
  for (size_t j = 0; j < w.states; ++j) {
    size_t p = rig.format_end() + rng() % span;
    G g = (j % 3 == 2) ? G::k512 : G::k4K;
    size_t k = rec.pending_unit_count(p, g);
    if (j % 4 == 3)
      jobs.push_back(Job{p, g, Job::Kind::kPrefix, k ? rng() % (k + 1) : 0});
    else
      jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
  }
  std::cout << "[ crash    ] random workload seed " << seed << " (" << (w.export_bytes >> 10)
            << " KiB, " << block_bytes << "-byte blocks): " << rig.requests().size()
            << " requests, " << rec.events() << " events, " << rec.syncs() << " syncs, "
            << rig.vld_disk().vld_stats().records_written << " log records, "
            << rig.vld_disk().vld_stats().delta_checkpoints << " delta checkpoints, "
            << rig.vld_disk().vld_stats().rmw_reads << " read-modify-writes, "
            << rig.vld_disk().compactor().stats().blocks_moved
            << " compaction moves since the last open" << std::endl;
  if (w.checkpoint_every && rig.vld_disk().vld_stats().delta_checkpoints == 0) {
    r.failures = 1;
    r.messages.push_back("precondition, seed " + std::to_string(seed) + ": no delta checkpoint");
    return r;
  }
  r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/5, seed);
  // The first two failures of each workload.
  if (r.messages.size() > 2) r.messages.resize(2);
  for (std::string& m : r.messages)
    m = "seed " + std::to_string(seed) + " (" + std::to_string(r.failures) +
        " failing crash states): " + m;
  return r;
}

RunResult run_random_workloads(std::initializer_list<RandomWorkload> workloads,
                               uint64_t block_bytes) {
  RunResult total;
  for (const RandomWorkload& w : workloads) {
    RunResult r = run_random_workload(w, block_bytes);
    total.verified += r.verified;
    total.nested += r.nested;
    total.recovery_cuts += r.recovery_cuts;
    total.failures += r.failures;
    total.messages.insert(total.messages.end(), r.messages.begin(), r.messages.end());
  }
  return total;
}

TEST(CrashHarness, Randomized) {
  auto t0 = std::chrono::steady_clock::now();
  // 1 MiB disks (8 map pieces) and a 2 MiB one (16 pieces: recovery's
  // checkpoint then needs a two-level tree, its root more than 12 pointers).
  RunResult total = run_random_workloads(
      {RandomWorkload{11, 1 << 20, 2300, 3, 0}, RandomWorkload{12, 1 << 20, 2300, 3, 1},
       RandomWorkload{13, 1 << 20, 2300, 0, 0}, RandomWorkload{14, 2 << 20, 1500, 5, 2},
       RandomWorkload{15, 1 << 20, 2300, 0, 0}},
      kBlock);
  report("randomized", total, seconds_since(t0));
  EXPECT_EQ(total.failures, 0u);
  EXPECT_GE(total.verified + total.failures, 10000u);
}

// The same on disks of 1 KiB blocks: 256 KiB (8 map pieces, as the 1 MiB
// disks of 4 KiB blocks) and 512 KiB (16 pieces); a fifth of the requests
// start or end inside a block, so read-modify-writes of parts of 1 KiB
// blocks are among them.
TEST(CrashHarness, RandomizedOneKiBBlocks) {
  auto t0 = std::chrono::steady_clock::now();
  RunResult total = run_random_workloads(
      {RandomWorkload{21, 256 << 10, 1500, 3, 1}, RandomWorkload{22, 256 << 10, 1500, 0, 0},
       RandomWorkload{23, 512 << 10, 1500, 3, 2}},
      1024);
  report("randomized, 1 KiB blocks", total, seconds_since(t0));
  EXPECT_EQ(total.failures, 0u);
  EXPECT_GE(total.verified + total.failures, 4000u);
}

// ---- recovery cut by a crash, on the drives users serve -----------------------------

// Random workloads on whole-size drive geometries with the default options
// (a 32-cylinder window, records only when it is spent): many requests
// after each record, so recovery accepts, rolls back and checks the data of
// many groups, and its checkpoint lands among blocks those groups replaced.
// Every state's recovery is cut at every event and the next recovery cut
// again (check_recovery_cuts).
struct CutWorkload {
  const char* name;
  RigConfig config;
  uint64_t seed;
  size_t requests, states;
  bool fill_first = false;  // write every block once first: a full disk
};

void run_recovery_cuts(const CutWorkload& w) {
  auto t0 = std::chrono::steady_clock::now();
  Rig rig(w.config, w.seed);
  std::mt19937_64 rng(w.seed);
  const uint64_t B = kBlock;
  if (w.fill_first)  // block by block, back to back: what runs out of block-sized runs
    for (uint64_t b = 0; b < rig.blocks(); ++b) {
      rig.write(b * B, B, false);
      if (b % 64 == 63) rig.flush();
    }
  const size_t from = rig.rec().events();
  random_workload(rig, rng, w.requests);
  ASSERT_EQ(rig.check_live(), "");
  const RecordingStore& rec = rig.rec();
  std::vector<Job> jobs;
  for (size_t j = 0; j < w.states; ++j) {
    // Crash points after the last sync are where recovery has the most to do.
    const size_t p = from + rng() % (rec.events() - from + 1);
    const G g = (j % 2) ? G::k512 : G::k4K;
    jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
  }
  std::cout << "[ crash    ] " << w.name << ": " << rig.requests().size() << " requests, "
            << rec.events() << " events, " << rec.syncs() << " syncs, "
            << rig.vld_disk().vld_stats().records_written << " log records, "
            << rig.vld_disk().vld_stats().repacks << " repacks" << std::endl;
  RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/1, w.seed);
  report(w.name, r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.recovery_cuts, 10 * w.states) << "every state's recovery must be cut many times";
}

RigConfig whole_drive(const char* preset, uint64_t export_bytes) {
  RigConfig c;
  c.preset = preset;
  c.sectors_per_track = 0;
  c.tracks_per_cylinder = 0;
  c.export_bytes = export_bytes;
  c.vld = VldOptions{};
  return c;
}

TEST(CrashHarness, RecoveryCutSt19101) {
  run_recovery_cuts(CutWorkload{"recovery cut, st19101 8M", whole_drive("st19101", 8 << 20), 41,
                                400, 120});
}

TEST(CrashHarness, RecoveryCutHp97560SmallWindow) {
  CutWorkload w{"recovery cut, hp97560 4M window=4", whole_drive("hp97560", 4 << 20), 42, 400, 120};
  w.config.vld.window_cylinders = 4;
  run_recovery_cuts(w);
}

TEST(CrashHarness, RecoveryCutFullDisk) {
  CutWorkload w{"recovery cut, full st19101 4M spare=4", whole_drive("st19101", 4 << 20), 43, 300,
                100, /*fill_first=*/true};
  w.config.spare_percent = 4;
  run_recovery_cuts(w);
}


// ---- mode=lld ------------------------------------------------------------------------

// mode=lld (core/lld/lld_disk.h) on the same 64-sector custom geometry: 32
// KiB segments (one track, 7 blocks and a summary sector), a 16-cylinder
// drive so that the system area is 4 tracks, and with NVRAM a 64 KiB region
// (15 records). With NVRAM every completed write, trim and zero must
// survive (RigConfig::durable_at_ack); without, the ordinary rules hold.
RigConfig lld_config(bool nvram, uint64_t export_bytes = 256 * 1024) {
  RigConfig c;
  c.mode = DiskMode::kLld;
  c.export_bytes = export_bytes;
  c.cylinders = 16;
  c.segment_bytes = 32 * 1024;
  c.nvram_bytes = nvram ? 64 * 1024 : 0;
  return c;
}

const char* nvram_name(const RigConfig& c) { return c.nvram_bytes ? "nvram=64K" : "nvram=0"; }

// mode=lld writes a request only if the free segments, after cleaning, hold
// all of it beside every live block; otherwise it refuses it with ENOSPC
// (LldStats::refused_requests), so the plugin advertises no longer request
// than they hold (crash-contract.md, "The advertised maximum"). The tests
// below give their disks that room for their requests, and check it.
constexpr const char* kRoomForEveryRequest =
    "precondition: the disk must have room for every request whole (see "
    "LldRequestLargerThanTheFreeSegmentsIsRefusedWhole)";

// LldDisk's counters start again at each open: a rig's totals over its
// reopens (tally_across_reopens, then final_tally at the end).
struct LldTally {
  uint64_t cleaned = 0, idle_cleans = 0, checkpoints = 0, folds = 0, drains = 0, bypasses = 0,
           stalls = 0, refused = 0, segment_writes = 0;
  void add(const LldStats& s) {
    cleaned += s.segments_cleaned;
    idle_cleans += s.idle_cleans;
    checkpoints += s.checkpoints;
    folds += s.checkpoint_folds;
    drains += s.nvram_drains;
    bypasses += s.nvram_bypasses;
    stalls += s.nvram_stalls;
    refused += s.refused_requests;
    segment_writes += s.segment_writes;
  }
  std::string describe() const {
    std::ostringstream o;
    o << segment_writes << " segment writes, " << cleaned << " segments cleaned (" << idle_cleans
      << " in idle time), " << checkpoints << " checkpoints (" << folds << " folds), " << drains
      << " NVRAM drains ("
      << stalls << " stalling a write), " << bypasses << " requests past the NVRAM, " << refused
      << " refused";
    return o.str();
  }
};

LldTally final_tally(Rig& rig, LldTally t) {
  t.add(rig.lld_disk().report().stats);
  return t;
}

// Adds the disk's counters to t before each clean close of rig (any
// workload's close_and_reopen).
void tally_across_reopens(Rig& rig, LldTally& t) {
  rig.before_close([&t](Disk& d) { t.add(dynamic_cast<LldDisk&>(d).report().stats); });
}

std::string lld_geometry(Rig& rig) {
  const LldReport r = rig.lld_disk().report();
  std::ostringstream o;
  o << nvram_name(rig.config()) << ", " << rig.blocks() << " blocks, " << r.segment_count
    << " segments of " << r.blocks_per_segment << " blocks, " << r.nvram_capacity_records
    << " NVRAM records, image " << rig.sb().image_bytes() / 1024 << " KiB";
  return o.str();
}

// Jobs at sampled crash points from event `from` on: `points` random points
// at both granularities, each with every subset if it has at most
// `exhaustive_k` pending units, else `prefixes` random prefix subsets and
// `randoms` random ones.
std::vector<Job> sampled_jobs(const Rig& rig, size_t from, size_t points, size_t exhaustive_k,
                              size_t prefixes, size_t randoms, uint64_t seed) {
  std::vector<Job> jobs;
  std::mt19937_64 rng(seed);
  const size_t span = rig.rec().events() - from + 1;
  for (size_t i = 0; i < points; ++i) {
    const size_t p = from + rng() % span;
    const G g = (i % 2) ? G::k512 : G::k4K;
    const size_t k = rig.rec().pending_unit_count(p, g);
    if (k <= exhaustive_k) {
      for (uint64_t m = 0; m < (uint64_t{1} << k); ++m) jobs.push_back(Job{p, g, Job::Kind::kMask, m});
      continue;
    }
    for (size_t j = 0; j < prefixes; ++j) jobs.push_back(Job{p, g, Job::Kind::kPrefix, rng() % (k + 1)});
    for (size_t j = 0; j < randoms; ++j) jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
  }
  return jobs;
}

// The scripted workload of the exhaustive lld tests: single blocks, a
// 3-block write, overwrites, a FUA write, a trim, a partial write-zeroes
// (no hole) over the trimmed block, a partial-block write (read-modify-
// write), write-zeroes with may_trim (logged as a trim), flushes, a clean
// close and reopen, then a 9-block write (more than a segment holds), a
// FUA may_trim zero, a trim and a partial write into the trimmed range.
// With NVRAM the 18 records before the reopen overflow the 15-record
// region once: a drain stalls a write.
std::unique_ptr<Rig> lld_scripted_rig(bool nvram, LldTally* t, uint32_t format_version = 0) {
  RigConfig config = lld_config(nvram);
  config.format_version = format_version;
  auto rig = std::make_unique<Rig>(config, 2);
  tally_across_reopens(*rig, *t);
  const uint64_t B = kBlock;
  rig->write(0, B, false);                     // #1
  rig->write(6 * B, 3 * B, false);             // #2
  rig->flush();                                // #3
  rig->write(5 * B, B, false);                 // #4
  rig->write(5 * B, B, false);                 // #5 overwrite
  rig->write(20 * B, 4 * B, true);             // #6 FUA
  rig->trim(21 * B, B, false);                 // #7
  rig->zero(21 * B + 2048, B, false, false);   // #8 partial 21 (just trimmed) and 22
  rig->write(40 * B + 512, B, false);          // #9 partial blocks 40, 41
  rig->write(0, B, false);                     // #10 overwrite
  rig->zero(30 * B, 3 * B, true, false);       // #11 may_trim: a trim entry
  rig->flush();                                // #12
  rig->write(63 * B, B, false);                // #13
  rig->close_and_reopen();                     // #14 close, #15 open
  rig->write(10 * B, 9 * B, false);            // #16 more than a segment
  rig->zero(33 * B, 2 * B, true, true);        // #17 may_trim, FUA
  rig->trim(10 * B, 2 * B, false);             // #18
  rig->write(11 * B + 1024, 2048, false);      // #19 inside block 11, just trimmed
  *t = final_tally(*rig, *t);
  return rig;
}

void run_lld_exhaustive(bool nvram, G g, size_t cap, size_t samples, uint64_t min_states,
                        uint32_t format_version = 0) {
  auto t0 = std::chrono::steady_clock::now();
  LldTally t;
  std::unique_ptr<Rig> rig = lld_scripted_rig(nvram, &t, format_version);
  ASSERT_EQ(rig->check_live(), "");
  const RecordingStore& rec = rig->rec();
  const EveryPoint e = every_point(*rig, g, cap, samples, 43);
  std::cout << "[ crash    ] lld scripted workload (" << lld_geometry(*rig) << "): "
            << rig->requests().size() << " requests, " << rec.events() << " backing-store events ("
            << rec.syncs() << " syncs), " << t.describe() << "; " << gran_name(g) << ": "
            << e.exhaustive_points << " crash points exhaustive (k <= " << cap << "), "
            << e.sampled_points << " sampled (all k+1 prefixes + " << samples
            << " random subsets); largest k " << e.max_k << std::endl;
  if (nvram) {
    EXPECT_GE(t.drains, 1u) << "precondition: the script must overflow the NVRAM";
  }
  EXPECT_EQ(t.refused, 0u) << kRoomForEveryRequest;
  RunResult r = run_jobs(*rig, e.jobs, harness_threads(), /*nested_every=*/7, 2);
  const std::string what = std::string("lld ") + nvram_name(rig->config()) +
                           (format_version ? " format " + std::to_string(format_version) : "") +
                           " exhaustive " + gran_name(g);
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(rig->sb().version(), format_version ? format_version : kLldFormatVersion);
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, min_states);
}

TEST(CrashHarness, LldExhaustive4K) { run_lld_exhaustive(true, G::k4K, 12, 256, 1000); }
TEST(CrashHarness, LldExhaustiveTorn512) { run_lld_exhaustive(true, G::k512, 10, 64, 1000); }
TEST(CrashHarness, LldNoNvramExhaustive4K) { run_lld_exhaustive(false, G::k4K, 12, 256, 1000); }
TEST(CrashHarness, LldNoNvramExhaustiveTorn512) {
  run_lld_exhaustive(false, G::k512, 10, 64, 1000);
}
// Images of format_version 2 (packed NVRAM records, whole checkpoints) are
// read and written in their own format all their lives.
TEST(CrashHarness, LldPackedFormatExhaustiveTorn512) {
  run_lld_exhaustive(true, G::k512, 10, 64, 1000, kLldPackedFormatVersion);
}
// And of format_version 3 (checkpoints in place, no journal).
TEST(CrashHarness, LldDigestFormatExhaustiveTorn512) {
  run_lld_exhaustive(true, G::k512, 10, 64, 1000, kLldDigestFormatVersion);
}

// Ages an lld disk: fills `fill_percent` of the export (writes of 1-4
// blocks, a flush every few), then `requests` random requests mostly over
// the filled part: overwrites of 1-3 blocks (a hot eighth half the time),
// some of up to 12 blocks, FUA writes, flushes, trims and zeros (both
// kinds), and idle steps (NVRAM drain, idle cleaning). On a disk whose
// segments hold little more than the export, the overwrites leave dead
// blocks in every segment and the cleaner must run.
// Returns the blocks filled (the requests' region).
uint64_t lld_fill(Rig& rig, std::mt19937_64& rng, unsigned fill_percent) {
  const uint64_t B = kBlock;
  const uint64_t filled = rig.blocks() * fill_percent / 100;
  for (uint64_t b = 0; b < filled;) {
    const uint64_t n = std::min<uint64_t>(1 + rng() % 4, filled - b);
    rig.write(b * B, n * B, false);
    b += n;
    if (rng() % 6 == 0) rig.flush();
  }
  rig.flush();
  return filled;
}

void lld_aging_requests(Rig& rig, std::mt19937_64& rng, uint64_t filled, size_t requests) {
  const uint64_t B = kBlock;
  auto pick = [&](uint64_t n) { return rng() % n; };
  for (size_t i = 0; i < requests; ++i) {
    const unsigned op = pick(100);
    const uint64_t region = pick(2) == 0 ? std::max<uint64_t>(filled / 8, 4) : filled;
    const uint64_t len_blocks = pick(8) == 0 ? 4 + pick(9) : 1 + pick(3);
    const uint64_t first = pick(region);
    const uint64_t len = std::min(len_blocks, rig.blocks() - first) * B;
    if (op < 60) {
      rig.write(first * B, len, false);
    } else if (op < 68) {
      rig.write(first * B, len, true);
    } else if (op < 72) {
      rig.trim(first * B, std::min<uint64_t>(len, 2 * B), pick(4) == 0);
    } else if (op < 77) {
      rig.zero(first * B, std::min<uint64_t>(len, 2 * B), pick(2) == 0, pick(4) == 0);
    } else if (op < 88) {
      rig.flush();
    } else if (op < 99) {
      rig.idle(1 + pick(3));
    } else {
      rig.close_and_reopen();
    }
  }
}

void lld_aging_workload(Rig& rig, std::mt19937_64& rng, unsigned fill_percent, size_t requests) {
  lld_aging_requests(rig, rng, lld_fill(rig, rng, fill_percent), requests);
}

void run_lld_cleaner(bool nvram, uint64_t seed, size_t points, uint64_t min_states) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(nvram);
  c.spare_percent = 0;  // the fewest segments the layout allows: 12 for 64 blocks
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  LldTally t;
  tally_across_reopens(rig, t);
  lld_aging_workload(rig, rng, 85, 220);
  ASSERT_EQ(rig.check_live(), "");
  t = final_tally(rig, t);
  const RecordingStore& rec = rig.rec();
  std::cout << "[ crash    ] lld cleaner workload (" << lld_geometry(rig) << "), seed " << seed
            << ": " << rig.requests().size() << " requests, " << rec.events() << " events, "
            << rec.syncs() << " syncs, " << t.describe() << std::endl;
  ASSERT_GT(t.cleaned, 0u) << "precondition: the cleaner must run";
  ASSERT_EQ(t.refused, 0u) << kRoomForEveryRequest;
  ASSERT_GT(t.checkpoints, 0u) << "precondition: checkpoints must free cleaned segments";
  ASSERT_GT(t.idle_cleans, 0u) << "precondition: idle time must clean too";
  // Crashes during both kinds of checkpoint (checkpoint.h): appended to a
  // slot's journal, and folded in place when the journal is full.
  ASSERT_GT(t.folds, 0u) << "precondition: journals must fill and fold";
  ASSERT_GT(t.checkpoints, 2 * t.folds) << "precondition: checkpoints appended to journals";
  std::vector<Job> jobs = sampled_jobs(rig, rig.format_end(), points, 4, 2, 4, seed);
  RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/9, seed);
  const std::string what = std::string("lld ") + nvram_name(c) + " cleaner";
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, min_states);
}

TEST(CrashHarness, LldCleanerKeepsEveryWrite) { run_lld_cleaner(true, 51, 1500, 6000); }
TEST(CrashHarness, LldNoNvramCleanerKeepsEveryWrite) { run_lld_cleaner(false, 52, 1500, 6000); }


// The oracle with durable acknowledgements: on mode=lld with NVRAM a
// completed write, zero or trim must survive without flush or FUA; with
// nvram=0 the same states are allowed.
TEST(CrashHarness, LldOracleRequiresEveryAcknowledgedRequestWithNvram) {
  for (bool nvram : {true, false}) {
    Rig rig(lld_config(nvram, 64 * 1024), 8);
    rig.write(0, 2 * kBlock, false);      // #1 blocks 0-1
    rig.write(2 * kBlock, kBlock, false);  // #2 block 2
    rig.trim(0, kBlock, false);            // #3 block 0
    rig.zero(5 * kBlock, kBlock, false, false);  // #4 block 5 (zeros: no trace either way)
    ASSERT_EQ(rig.check_live(), "");
    const size_t end = rig.rec().events();
    auto content = [&](size_t req, uint64_t block) {
      for (size_t u : rig.requests()[req].units)
        for (auto [b, h] : rig.units()[u].effects)
          if (b == block) return h;
      ADD_FAILURE() << "request " << req << " did not write block " << block;
      return uint64_t{0};
    };
    std::vector<uint64_t> live(rig.blocks(), zero_hash());
    live[1] = content(1, 1);
    live[2] = content(2, 2);
    EXPECT_EQ(rig.check(end, live), "") << nvram_name(rig.config());
    std::vector<uint64_t> lost_write = live;  // #2 lost
    lost_write[2] = zero_hash();
    std::vector<uint64_t> lost_trim = live;   // #3 lost: block 0 shows #1
    lost_trim[0] = content(1, 0);
    std::vector<uint64_t> none(rig.blocks(), zero_hash());  // nothing survived
    if (nvram) {
      EXPECT_NE(rig.check(end, lost_write), "");
      EXPECT_NE(rig.check(end, lost_trim), "");
      EXPECT_NE(rig.check(end, none), "");
      // While #2 is in flight (its NVRAM append written, not yet synced),
      // losing it is fine; #1 must be there.
      std::vector<uint64_t> before = lost_write;
      before[0] = content(1, 0);
      EXPECT_EQ(rig.check(rig.requests()[2].ev_end - 1, before), "");
      before[0] = zero_hash();
      EXPECT_NE(rig.check(rig.requests()[2].ev_end - 1, before), "");
    } else {
      EXPECT_EQ(rig.check(end, lost_write), "");
      EXPECT_EQ(rig.check(end, lost_trim), "");
      EXPECT_EQ(rig.check(end, none), "");
    }
  }
}

// Requests of every size up to 384 KiB, on a 512 KiB export: with NVRAM (15
// records) the small ones fill the region over and over (drains that stall
// a write, epoch resets), and those of more than 15 blocks bypass it into
// segments, synced before the reply; every request over 7 blocks spans
// segment writes. Idle steps drain part of the buffer in between. Crashed
// at sampled points: each large request must read back all old or all new,
// and with NVRAM every completed request must be there.
void lld_large_requests_workload(Rig& rig, std::mt19937_64& rng) {
  const uint64_t B = kBlock;
  auto pick = [&](uint64_t n) { return rng() % n; };
  for (uint64_t b = 0; b < 100;) {  // ~50 small writes: ~100 records
    const uint64_t n = 1 + pick(3);
    rig.write(b * B, n * B, false);
    b += n;
    if (pick(16) == 0) rig.idle(1 + pick(2));
  }
  rig.write(100 * B, 20 * B, false);     // 80 KiB: more than the NVRAM holds
  rig.write(7 * B, 2 * B, false);
  rig.write(32 * B, 64 * B, false);      // 256 KiB over buffered blocks
  rig.zero(60 * B, 20 * B, false, false);  // 20 written zero blocks: past the NVRAM too
  rig.zero(90 * B, 30 * B, true, false);   // one trim record, with NVRAM
  rig.write(3 * B, B, false);
  rig.flush();
  rig.idle(2);
  rig.write(16 * B + 2048, 40 * B, true);  // 160 KiB + partial edges, FUA
  for (int i = 0; i < 20; ++i) rig.write(pick(rig.blocks() - 1) * B, (1 + pick(2)) * B, false);
  rig.close_and_reopen();
  rig.write(10 * B, 96 * B, false);      // 384 KiB
  rig.trim(40 * B, 16 * B, false);
  for (int i = 0; i < 12; ++i) rig.write(pick(rig.blocks()) * B, B, pick(4) == 0);
  rig.write(0, 128 * B, false);          // the whole export, 512 KiB
  rig.write(5 * B, B, false);
}

void run_lld_large_requests(bool nvram, uint32_t spare, uint64_t seed, size_t points,
                            uint64_t min_states) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(nvram, 512 * 1024);
  c.spare_percent = spare;
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  LldTally t;
  tally_across_reopens(rig, t);
  lld_large_requests_workload(rig, rng);
  ASSERT_EQ(rig.check_live(), "");
  t = final_tally(rig, t);
  const RecordingStore& rec = rig.rec();
  std::cout << "[ crash    ] lld large requests (" << lld_geometry(rig) << "): "
            << rig.requests().size() << " requests, " << rec.events() << " events, " << rec.syncs()
            << " syncs, " << t.describe() << std::endl;
  if (nvram) {
    ASSERT_GE(t.drains, 4u) << "precondition: the small writes must fill the NVRAM again and again";
    ASSERT_GE(t.bypasses, 4u) << "precondition: requests larger than the NVRAM";
  }
  ASSERT_EQ(t.refused, 0u) << kRoomForEveryRequest;
  std::vector<Job> jobs = sampled_jobs(rig, rig.format_end(), points, 4, 2, 3, seed);
  RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/9, seed);
  const std::string what = std::string("lld ") + nvram_name(rig.config()) + " large requests";
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, min_states);
}

TEST(CrashHarness, LldNvramDrainsAndLargeRequests) {
  run_lld_large_requests(true, 150, 61, 440, 1500);
}
TEST(CrashHarness, LldNoNvramLargeRequests) { run_lld_large_requests(false, 150, 62, 300, 1000); }

// Idle time on an aged disk: NVRAM drained a segment write per step (the
// region reset when the buffer empties), victims cleaned one per step, and
// the checkpoints that free them, with a write, a FUA write, a trim and a
// flush arriving between steps. Every crash point from the first idle step
// on: an idle step changes no content, so every crash state must be one
// the client's requests allow.
void run_lld_idle(bool nvram, uint64_t seed, uint64_t min_states) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(nvram);
  c.spare_percent = 0;
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  LldTally t;
  tally_across_reopens(rig, t);
  const uint64_t B = kBlock;
  for (uint64_t b = 0; b < 54; b += 3) rig.write(b * B, 3 * B, false);  // 85%
  for (int i = 0; i < 30; ++i) rig.write((rng() % 54) * B, B, false);   // dead blocks everywhere
  rig.flush();
  for (int i = 0; i < 6; ++i) rig.write((rng() % 54) * B, B, false);    // buffered (NVRAM)
  const LldReport before = rig.lld_disk().report();
  const size_t from = rig.rec().events();
  size_t steps = rig.idle(2);
  rig.write(60 * B, B, false);
  steps += rig.idle(2);
  rig.write(3 * B, 2 * B, true);
  steps += rig.idle(3);
  rig.trim(10 * B, B, false);
  rig.flush();
  steps += rig.idle(40);
  ASSERT_EQ(rig.check_live(), "");
  t = final_tally(rig, t);
  const LldReport after = rig.lld_disk().report();
  std::cout << "[ crash    ] lld idle (" << lld_geometry(rig) << "): " << steps << " idle steps, "
            << before.nvram_buffered_blocks << " blocks buffered before them, "
            << after.nvram_used_records << " NVRAM records in use after, " << t.describe()
            << "; crash points from event " << from << " of " << rig.rec().events() << std::endl;
  ASSERT_GE(t.idle_cleans, 1u) << "precondition: idle time must clean";
  ASSERT_EQ(t.refused, 0u) << kRoomForEveryRequest;
  if (nvram) {
    ASSERT_GE(before.nvram_buffered_blocks, 4u) << "precondition: a buffer to drain";
    ASSERT_EQ(after.nvram_used_records, 0u) << "precondition: idle time must drain and reset";
  }
  RunResult r = run_jobs(rig, point_jobs(rig, from, 5, 8, seed), harness_threads(),
                         /*nested_every=*/5, seed);
  const std::string what = std::string("lld ") + nvram_name(c) + " idle drain and cleaning";
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, min_states);
}

// Group commit (mode=lld with NVRAM; Disk::set_group_commit): requests
// served one after another leave their NVRAM records unsynced, and one sync
// acknowledges them all, as the plugin's controller does for requests in
// flight together. A crash anywhere may keep any of the unacknowledged
// requests, each whole, and must keep every acknowledged one; a record
// written before an earlier group's sync ended says less was durable, which
// replay must not take for damage. Drains, idle steps and clean closes run
// between groups.
TEST(CrashHarness, LldGroupCommitKeepsEveryAcknowledgedWrite) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(true);
  c.group_commit = true;
  const uint64_t seed = 81;
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  const uint64_t B = kBlock, blocks = c.export_bytes / B;
  const size_t from = rig.rec().events();
  size_t requests = 0;
  uint64_t syncs = 0;
  for (int g = 0; g < 60; ++g) {
    const uint64_t k = 1 + rng() % 4;
    for (uint64_t j = 0; j < k; ++j, ++requests) {
      const uint64_t n = 1 + rng() % 3, b = rng() % (blocks - n + 1);
      const uint64_t op = rng() % 8;
      if (op == 0)
        rig.trim(b * B, n * B, false);
      else if (op == 1)
        rig.zero(b * B, n * B, rng() % 2 == 0, false);
      else
        rig.write(b * B, n * B, rng() % 4 == 0);
    }
    syncs += rig.sync_group();
    if (g % 13 == 6) rig.idle(3);
    if (g % 25 == 24) rig.close_and_reopen();
  }
  ASSERT_EQ(rig.check_live(), "");
  std::cout << "[ crash    ] lld nvram=64K group commit: " << requests << " requests in 60 groups, "
            << syncs << " group syncs; crash points from event " << from << " of "
            << rig.rec().events() << std::endl;
  EXPECT_LT(syncs, requests) << "precondition: requests shared syncs";
  RunResult r = run_jobs(rig, sampled_jobs(rig, from, 300, 4, 2, 2, seed), harness_threads(),
                         /*nested_every=*/7, seed);
  report("lld nvram=64K group commit", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GT(r.verified, 1000u);
}

TEST(CrashHarness, LldIdleDrainAndCleanKeepEveryWrite) { run_lld_idle(true, 71, 1000); }
TEST(CrashHarness, LldNoNvramIdleCleanKeepsEveryWrite) { run_lld_idle(false, 72, 1000); }

// Idle periods shorter than cleaning a victim (0.5-8 ms here): each idle
// step is one drive command that ends within the period, so victims are
// read a run at a time and their blocks moved a few at a time, the NVRAM
// drained in short writes, with writes, FUA writes, trims and flushes
// between the periods (a half-moved victim whose blocks a write replaces,
// a victim the request path's cleaner finishes). Every crash point from
// the first period on.
void run_lld_short_idle(bool nvram, uint64_t seed, uint64_t min_states) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(nvram);
  c.spare_percent = 0;
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t n) { return rng() % n; };
  LldTally t;
  tally_across_reopens(rig, t);
  const uint64_t B = kBlock;
  for (uint64_t b = 0; b < 54; b += 3) rig.write(b * B, 3 * B, false);  // 85%
  for (int i = 0; i < 30; ++i) rig.write(pick(54) * B, B, false);       // dead blocks everywhere
  rig.flush();
  const size_t from = rig.rec().events();
  size_t steps = 0, periods_cut = 0;
  for (int round = 0; round < 48; ++round) {
    const unsigned op = static_cast<unsigned>(pick(10));
    if (op < 6) rig.write(pick(54) * B, (1 + pick(2)) * B, false);
    else if (op < 8) rig.write(pick(54) * B, B, true);
    else if (op < 9) rig.trim(pick(54) * B, B, false);
    else rig.flush();
    const size_t n = rig.idle(6, sim_us(500 + static_cast<double>(pick(7500))));
    steps += n;
    if (n < 6) ++periods_cut;
  }
  steps += rig.idle(64);  // a long period: whatever is left
  ASSERT_EQ(rig.check_live(), "");
  t = final_tally(rig, t);
  std::cout << "[ crash    ] lld short idle periods (" << lld_geometry(rig) << "): " << steps
            << " idle steps, " << periods_cut << " of 48 periods stopped short of 6 steps, "
            << t.describe() << "; crash points from event " << from << " of "
            << rig.rec().events() << std::endl;
  ASSERT_GE(t.idle_cleans, 1u) << "precondition: idle time must clean";
  ASSERT_GE(periods_cut, 8u) << "precondition: periods too short for the work";
  ASSERT_EQ(t.refused, 0u) << kRoomForEveryRequest;
  RunResult r = run_jobs(rig, point_jobs(rig, from, 5, 6, seed), harness_threads(),
                         /*nested_every=*/5, seed);
  const std::string what = std::string("lld ") + nvram_name(c) + " short idle periods";
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, min_states);
}

TEST(CrashHarness, LldShortIdlePeriodsKeepEveryWrite) { run_lld_short_idle(true, 73, 1000); }
TEST(CrashHarness, LldNoNvramShortIdlePeriodsKeepEveryWrite) { run_lld_short_idle(false, 74, 1000); }

// nvram=0: blocks in the open segment's memory copy, then idle cleaning a
// step at a time until it stops or no segment is free, then a flush that
// writes them out. Idle cleaning must leave free the segments that flush
// closes (before 3bfda01 it took the last one, and the flush failed with
// ENOSPC on every aged disk tried). Every crash point from the first step.
TEST(CrashHarness, LldNoNvramIdleCleaningLeavesRoomForAFlush) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(false);
  c.spare_percent = 0;
  Rig rig(c, 1);
  std::mt19937_64 rng(1);
  const uint64_t B = kBlock;
  for (uint64_t b = 0; b < 54; b += 3) rig.write(b * B, 3 * B, false);
  for (int i = 0; i < 40; ++i) rig.write((rng() % 54) * B, B, false);
  rig.flush();
  for (int i = 0; i < 5; ++i) rig.write((rng() % 54) * B, B, false);  // the memory copy
  const size_t from = rig.rec().events();
  uint64_t least_free = rig.lld_disk().report().free_segments;
  size_t steps = 0;
  for (; steps < 30 && least_free > 0 && rig.idle(1) == 1; ++steps)
    least_free = std::min<uint64_t>(least_free, rig.lld_disk().report().free_segments);
  rig.flush();
  ASSERT_EQ(rig.check_live(), "");
  const LldTally t = final_tally(rig, LldTally{});
  std::cout << "[ crash    ] lld nvram=0 idle cleaning then a flush (" << lld_geometry(rig)
            << "): " << steps << " idle steps, fewest free segments " << least_free << ", "
            << t.describe() << std::endl;
  ASSERT_GE(t.idle_cleans, 2u) << "precondition: idle time must clean";
  EXPECT_GE(least_free, 1u);
  RunResult r = run_jobs(rig, point_jobs(rig, from, 5, 8, 1), harness_threads(),
                         /*nested_every=*/5, 1);
  report("lld nvram=0 idle cleaning then a flush", r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, 500u);
}

// Recovery cut by a crash (check_recovery_cuts) on every sampled state of a
// random workload (random_workload: requests up to 64 KiB, past the NVRAM
// and over several segments, trims, zeros, flushes, FUA, idle steps, clean
// reopens) on an aged lld disk: recovery writes a checkpoint and, with
// NVRAM, drains the replayed buffer and resets the region; each of its
// barriers is cut, and the recovery after that cut again.
void run_lld_recovery_cuts(bool nvram, uint64_t seed, size_t states) {
  auto t0 = std::chrono::steady_clock::now();
  RigConfig c = lld_config(nvram);
  c.spare_percent = 10;
  Rig rig(c, seed);
  std::mt19937_64 rng(seed);
  LldTally t;
  tally_across_reopens(rig, t);
  lld_aging_workload(rig, rng, 80, 60);
  const size_t from = rig.rec().events();
  random_workload(rig, rng, 40);
  rig.write(20 * kBlock, 20 * kBlock, false);  // past the NVRAM, over three segments
  random_workload(rig, rng, 40);
  ASSERT_EQ(rig.check_live(), "");
  t = final_tally(rig, t);
  const RecordingStore& rec = rig.rec();
  std::vector<Job> jobs;
  for (size_t j = 0; j < states; ++j) {
    const size_t p = from + rng() % (rec.events() - from + 1);
    jobs.push_back(Job{p, (j % 2) ? G::k512 : G::k4K, Job::Kind::kRandom, rng()});
  }
  std::cout << "[ crash    ] lld recovery cut (" << lld_geometry(rig) << "): "
            << rig.requests().size() << " requests, " << rec.events() << " events, " << rec.syncs()
            << " syncs, " << t.describe() << std::endl;
  ASSERT_GT(t.cleaned, 0u) << "precondition: an aged disk";
  ASSERT_GE(t.bypasses + (nvram ? 0 : 1), 1u) << "precondition: requests past the NVRAM";
  ASSERT_EQ(t.refused, 0u) << kRoomForEveryRequest;
  RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/1, seed);
  const std::string what = std::string("lld ") + nvram_name(c) + " recovery cut";
  report(what.c_str(), r, seconds_since(t0));
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified + r.failures, states);
  EXPECT_GE(r.recovery_cuts, 6 * states) << "every state's recovery must be cut many times";
}

TEST(CrashHarness, LldRecoveryCut) { run_lld_recovery_cuts(true, 81, 600); }
TEST(CrashHarness, LldNoNvramRecoveryCut) { run_lld_recovery_cuts(false, 82, 600); }


// Clause 3 for mode=lld up to what the plugin advertises: on a full disk
// aged by overwrites, requests of exactly LldDisk::max_atomic_write_bytes
// (aligned and not; a sector further on touches one block more) over live
// blocks are never split, and every crash state reads each of them all old
// or all new. 1 MiB exports on the harness's small geometry, with and
// without NVRAM; the requests are past the NVRAM's 15 records.
TEST(CrashHarness, LldRequestsUpToTheAdvertisedMaximumAreAllOrNothing) {
  for (bool nvram : {true, false}) {
    auto t0 = std::chrono::steady_clock::now();
    RigConfig c = lld_config(nvram, 1 << 20);
    c.cylinders = 24;
    Rig rig(c, 95);
    const uint64_t B = kBlock, blocks = rig.blocks();
    for (uint64_t b = 0; b < blocks; b += 8) rig.write(b * B, 8 * B, false);
    for (uint64_t i = 0; i < blocks; ++i) rig.write((i * 37 % blocks) * B, B, false);
    rig.flush();
    const uint64_t max = rig.lld_disk().max_atomic_write_bytes();
    ASSERT_GT(max, 15 * B) << "precondition: requests past the NVRAM";
    ASSERT_LT(max, blocks * B / 2) << "precondition: a bound the spare sets";
    rig.write(0, max, false);
    rig.write(blocks * B / 2 + 512, max, false);
    rig.flush();
    const size_t from = rig.rec().events();  // crashes during the last two
    rig.write(blocks * B / 4 + 1024, max, false);
    rig.write(blocks * B / 8 + 3584, max, true);
    ASSERT_EQ(rig.check_live(), "");
    const LldTally t = final_tally(rig, LldTally{});
    std::cout << "[ crash    ] lld requests at the advertised maximum, " << max / B << " blocks ("
              << lld_geometry(rig) << "): " << t.describe() << std::endl;
    ASSERT_GT(t.cleaned, 0u) << "precondition: an aged disk";
    ASSERT_EQ(t.refused, 0u) << "max " << max;
    // Every fourth of the crash states from there (about 3,000 a mode).
    std::vector<Job> jobs, all = point_jobs(rig, from, 4, 4, 95);
    for (size_t i = 0; i < all.size(); i += 4) jobs.push_back(all[i]);
    RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/0, 95);
    const std::string what = std::string("lld ") + nvram_name(c) + " requests at the maximum";
    report(what.c_str(), r, seconds_since(t0));
    EXPECT_EQ(r.failures, 0u);
    EXPECT_GT(r.verified, 2000u);
  }
}

// A request the cleaner cannot make room for is refused with ENOSPC before
// anything of it is written (the plugin advertises no more than
// LldDisk::max_atomic_write_bytes: on this disk one block without NVRAM,
// 14 with its 15 records). A full 64-block export on 12 segments of 7
// blocks (84 blocks, the fewest the layout allows) and a 32-block write
// over live blocks: the new copies and the live old ones need 96 blocks.
// The request reads old, live and in every crash state from it on, and the
// disk goes on. With NVRAM the request is past the region (32 blocks > 15
// records), so it goes the same way.
TEST(CrashHarness, LldRequestLargerThanTheFreeSegmentsIsRefusedWhole) {
  for (bool nvram : {true, false}) {
    auto t0 = std::chrono::steady_clock::now();
    RigConfig c = lld_config(nvram);
    c.spare_percent = 0;
    c.failures = true;
    Rig rig(c, 91);
    const uint64_t B = kBlock;
    for (uint64_t b = 0; b < rig.blocks(); b += 4) rig.write(b * B, 4 * B, false);
    rig.flush();
    rig.write(60 * B, B, false);  // in memory (nvram=0) or the buffer: written out first
    const size_t from = rig.rec().events();
    rig.write(0, 32 * B, false);
    ASSERT_TRUE(rig.requests().back().failed) << "a request the free segments cannot take";
    rig.write(B, 2 * B, false);
    rig.flush();
    ASSERT_EQ(rig.check_live(), "");
    const LldTally t = final_tally(rig, LldTally{});
    std::cout << "[ crash    ] lld request larger than the free segments (" << lld_geometry(rig)
              << "): " << t.describe() << std::endl;
    EXPECT_EQ(t.refused, 1u);
    RunResult r = run_jobs(rig, point_jobs(rig, from, 6, 16, 91), harness_threads(),
                           /*nested_every=*/0, 91);
    const std::string what = std::string("lld ") + nvram_name(c) + " request past the free segments";
    report(what.c_str(), r, seconds_since(t0));
    EXPECT_EQ(r.failures, 0u);
  }
}

// Backing-store faults inside the crash harness (docs/crash-contract.md,
// clauses 6 and 7): an aged lld disk's workload (lld_aging_workload:
// cleaning, checkpoints, NVRAM drains and resets, idle steps) with one
// write of the image failing, at every `stride`-th write in turn: a
// segment write, a checkpoint, an NVRAM append or header, or the write
// that voids a failed one. The failing write lands not at all, torn, or
// whole (the error after its bytes), with EIO or ENOSPC. The disk goes on
// serving; every crash state from the fault on must keep every write
// acknowledged, and no failed request may show in any of them (unless the
// disk stopped during it).
struct FaultTally {
  uint64_t runs = 0, faults = 0, failed_requests = 0, stopped = 0;
};

void run_lld_fault_points(bool nvram, uint64_t seed, size_t stride, size_t states_per_fault,
                          FaultTally& ft, RunResult& total) {
  RigConfig c = lld_config(nvram);
  c.spare_percent = 0;
  c.failures = true;
  const uint64_t filled = 64 * 85 / 100;
  const auto setup = [&](Rig& rig, std::mt19937_64& rng) { lld_aging_workload(rig, rng, 85, 40); };
  const auto workload = [&](Rig& rig, std::mt19937_64& rng) {
    lld_aging_requests(rig, rng, filled, 60);
    rig.write(10 * kBlock, 20 * kBlock, false);  // past the NVRAM (or refused on this disk)
    lld_aging_requests(rig, rng, filled, 40);
  };
  size_t writes = 0;  // of the workload, counted by a run without faults
  {
    Rig dry(c, seed);
    std::mt19937_64 rng(seed);
    setup(dry, rng);
    const size_t from = dry.rec().events();
    workload(dry, rng);
    for (size_t e = from; e < dry.rec().events(); ++e)
      writes += dry.rec().event(e).kind == RecordingStore::Event::Kind::kWrite;
  }
  for (size_t nth = 0; nth < writes; nth += stride) {
    Rig rig(c, seed);
    std::mt19937_64 rng(seed);
    setup(rig, rng);
    const size_t from = rig.rec().events();
    const uint64_t torn[] = {0, 700, uint64_t{1} << 30};
    // Every fourth fault sticks: the writes that would void the failed one
    // fail too, and the disk stops.
    rig.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite,
                               .nth = nth,
                               .err = (nth / stride) % 2 ? ENOSPC : EIO,
                               .sticky = (nth / stride) % 4 == 3,
                               .torn_bytes = torn[(nth / stride) % 3]});
    workload(rig, rng);
    rig.disarm();
    ++ft.runs;
    ft.faults += rig.injected_faults();
    ft.failed_requests += rig.failed_requests();
    ft.stopped += rig.stopped();
    if (!rig.stopped()) {
      ASSERT_EQ(rig.check_live(), "") << "fault at write " << nth;
    }
    std::vector<Job> jobs = sampled_jobs(rig, from, states_per_fault, 3, 1, 1, seed + nth);
    RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/7, seed + nth);
    total.verified += r.verified;
    total.nested += r.nested;
    total.recovery_cuts += r.recovery_cuts;
    total.failures += r.failures;
    for (std::string& m : r.messages)
      if (total.messages.size() < 8)
        total.messages.push_back("fault at write " + std::to_string(nth) + ": " + m);
  }
}

TEST(CrashHarness, LldFaultAtEveryWriteKeepsEveryAcknowledgedWrite) {
  for (bool nvram : {true, false}) {
    auto t0 = std::chrono::steady_clock::now();
    FaultTally ft;
    RunResult r;
    run_lld_fault_points(nvram, nvram ? 61 : 62, /*stride=*/3, /*states_per_fault=*/6, ft, r);
    std::cout << "[ crash    ] lld " << (nvram ? "nvram=64K" : "nvram=0")
              << " faults: " << ft.runs << " runs, " << ft.faults << " injected write faults, "
              << ft.failed_requests << " requests failed, " << ft.stopped
              << " disks stopped" << std::endl;
    const std::string what = std::string("lld ") + (nvram ? "nvram=64K" : "nvram=0") +
                             " a write fault at every point";
    report(what.c_str(), r, seconds_since(t0));
    EXPECT_EQ(r.failures, 0u);
    EXPECT_GT(ft.faults, 50u);
    EXPECT_GT(ft.failed_requests, 50u);
  }
}

}  // namespace
}  // namespace vld::crash
