// mode=inplace's atomic recovery units (docs/aru.md): InplaceDisk::commit_group
// through the redo journal (core/inplace/redo_journal.h). Contents, reopen,
// replay after a crash and its idempotence, no stale replay, ENOSPC, an
// image never used with ARUs, backing-store faults, and the simulated cost.
// The crash harness (aru_crash_test.cc) enumerates crash states at large.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/inplace/inplace_disk.h"
#include "core/inplace/redo_journal.h"
#include "core/store/backing_store.h"
#include "core/store/crash_store.h"
#include "core/store/fault_store.h"
#include "core/store/overlay_store.h"
#include "core/util/error.h"
#include "tests/unit/test_superblock.h"
#include "tests/unit/aru_test_util.h"

namespace vld {
namespace {

using Bytes = std::vector<std::byte>;
using G512 = RecordingStore::Granularity;
constexpr uint64_t kExport = 1 << 20;  // 256 blocks of 4 KiB
constexpr uint64_t kBlock = 4096;

Superblock inplace_sb() { return test::st19101_superblock(DiskMode::kInplace, kExport); }

// An empty formatted image.
Bytes empty_image(const Superblock& sb) {
  MemoryBackingStore m(sb.image_bytes());
  format_store(m, sb);
  return m.bytes();
}

Bytes pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);  // never zero
  return v;
}

Bytes read_all(Disk& d) {
  Bytes v(d.export_bytes());
  d.read(0, v, kSimEpoch);
  return v;
}

Bytes block_of(const Bytes& all, uint64_t b) {
  return Bytes(all.begin() + b * kBlock, all.begin() + (b + 1) * kBlock);
}

// A group of blocks with data of its own (zeros where asked).
struct Group {
  Group(std::vector<uint64_t> blocks, uint64_t seed, std::vector<bool> zeros = {}) {
    data.reserve(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      const bool zero = i < zeros.size() && zeros[i];
      data.push_back(zero ? Bytes() : pattern(kBlock, seed * 1000 + i));
      group.push_back(GroupBlock{blocks[i], zero ? nullptr : data.back().data()});
    }
  }
  // What the export reads once `before` had this group committed.
  Bytes applied_to(Bytes before) const {
    test::apply_group(group, before.data(), kBlock);
    return before;
  }
  std::vector<Bytes> data;
  std::vector<GroupBlock> group;
};

std::unique_ptr<InplaceDisk> open_on(BackingStore& s, const Superblock& sb) {
  return std::make_unique<InplaceDisk>(std::make_unique<ProxyStore>(s), sb);
}

// Fills blocks [0, n) with data of seed's, flushed.
Bytes fill(Disk& d, uint64_t n, uint64_t seed) {
  Bytes data = pattern(n * kBlock, seed);
  d.write(0, data, false, kSimEpoch);
  d.flush(kSimEpoch);
  return read_all(d);
}

TEST(InplaceAru, CommitReadsBackWithZerosAsHoles) {
  const Superblock sb = inplace_sb();
  MemoryBackingStore image(empty_image(sb));
  auto d = open_on(image, sb);
  const Bytes before = fill(*d, 32, 1);
  const uint64_t live = d->live_blocks();  // a MemoryBackingStore has no holes: all
  Group g({3, 17, 20, 200}, 2, {false, true, false, false});
  d->commit_group(g.group, kSimEpoch);
  EXPECT_EQ(read_all(*d), g.applied_to(before));
  // Block 17 became a hole; 200 became data.
  std::vector<std::pair<uint64_t, ExtentType>> ext;
  d->extents(16 * kBlock, 3 * kBlock, [&](uint64_t o, uint64_t, ExtentType t) { ext.push_back({o, t}); });
  ASSERT_EQ(ext.size(), 3u);
  EXPECT_EQ(ext[1].second, ExtentType::kHole);
  EXPECT_EQ(d->live_blocks(), live - 1);
  EXPECT_EQ(d->check_consistency(), "");
}

TEST(InplaceAru, ReopenAfterCleanCloseReadsTheCommits) {
  const Superblock sb = inplace_sb();
  MemoryBackingStore image(empty_image(sb));
  Bytes want;
  {
    auto d = open_on(image, sb);
    fill(*d, 8, 3);
    Group a({1, 2, 100}, 4), b({2, 5, 255}, 5, {false, true, false});
    d->commit_group(a.group, kSimEpoch);
    d->commit_group(b.group, kSimEpoch);
    want = read_all(*d);
    d->close();
  }
  RecordingStore rec(image);
  auto d = open_on(rec, sb);
  EXPECT_EQ(rec.events(), 0u) << "a clean image's open writes nothing";
  // Its report: the journal's header read, nothing replayed, and no word on
  // how the last run ended (a crash with no commit in flight looks the same).
  const InplaceRecoveryReport opened = *d->mode_report().inplace_recovery;
  EXPECT_FALSE(opened.clean.has_value());
  EXPECT_EQ(opened.sectors_read, 1u);
  EXPECT_GT(opened.simulated_ms, 0.0);
  EXPECT_EQ(opened.records_replayed, 0u);
  EXPECT_EQ(opened.blocks_replayed, 0u);
  // The read is reported, not charged: the head is where a new drive has it.
  EXPECT_EQ(d->drive().head(), DriveModel(sb.geometry, sb.simulated_cylinders).head());
  EXPECT_EQ(read_all(*d), want);
  EXPECT_EQ(d->check_consistency(), "");
}

// The events of one commit on a RecordingStore: the record, a sync (the
// commit point), the home writes, a sync, the void.
struct Recorded {
  Superblock sb = inplace_sb();
  std::unique_ptr<RecordingStore> rec;
  Bytes before, after;
  size_t commit_begin = 0, commit_end = 0;
  Recorded(const Group& g) {
    MemoryBackingStore m(empty_image(sb));
    {
      auto d = open_on(m, sb);
      before = fill(*d, 40, 6);
      d->close();
    }
    rec = std::make_unique<RecordingStore>(m);
    auto d = open_on(*rec, sb);
    commit_begin = rec->events();
    d->commit_group(g.group, kSimEpoch);
    commit_end = rec->events();
    after = read_all(*d);
  }
  // The event index of the n-th sync of the commit.
  size_t sync_event(int n) const {
    for (size_t e = commit_begin; e < commit_end; ++e)
      if (rec->event(e).kind == RecordingStore::Event::Kind::kSync && n-- == 0) return e;
    return commit_end;
  }
};

TEST(InplaceAru, ReplaysAfterACrashBetweenTheJournalSyncAndTheHomeWrites) {
  Group g({0, 7, 39, 120, 121}, 7, {false, false, true, false, false});
  Recorded r(g);
  ASSERT_EQ(r.after, g.applied_to(r.before));
  const size_t commit_point = r.sync_event(0) + 1;
  ASSERT_EQ(commit_point, r.commit_begin + 2) << "the record, then its sync";
  // Right after the commit point, and with any prefix of the home writes.
  for (size_t p = commit_point; p <= r.sync_event(1); ++p) {
    for (auto g4 : {RecordingStore::Granularity::k4K, RecordingStore::Granularity::k512}) {
      std::vector<bool> none(r.rec->pending_unit_count(p, g4), false);
      RecordingStore crash(r.rec->materialize(p, none, g4));
      auto d = open_on(crash, r.sb);
      const InplaceRecoveryReport opened = *d->mode_report().inplace_recovery;
      EXPECT_EQ(opened.clean, std::optional<bool>(false)) << "a replay means an unclean stop";
      EXPECT_EQ(opened.records_replayed, 1u);
      EXPECT_EQ(opened.blocks_replayed, g.group.size());
      EXPECT_EQ(opened.sectors_read,
                (RedoJournal(r.sb).record_bytes(5, 4) + kSectorBytes - 1) / kSectorBytes);
      EXPECT_GT(opened.simulated_ms, 0.0);
      EXPECT_EQ(read_all(*d), r.after) << "crash after event " << p;
      EXPECT_EQ(d->check_consistency(), "");
      EXPECT_GT(crash.syncs(), 0u) << "the replay is made durable";
    }
  }
  // Before the commit point nothing of it survives unless all of it does.
  std::vector<bool> none(r.rec->pending_unit_count(commit_point - 1, RecordingStore::Granularity::k512));
  RecordingStore lost(r.rec->materialize(commit_point - 1, none, RecordingStore::Granularity::k512));
  EXPECT_EQ(read_all(*open_on(lost, r.sb)), r.before);
}

TEST(InplaceAru, ReplayIsIdempotentWhereverItIsCut) {
  Group g({2, 3, 4, 90, 250}, 8);
  Recorded r(g);
  const size_t commit_point = r.sync_event(0) + 1;
  std::vector<bool> none(r.rec->pending_unit_count(commit_point, RecordingStore::Granularity::k4K));
  const Bytes crash_image = r.rec->materialize(commit_point, none, RecordingStore::Granularity::k4K);
  RecordingStore replay(crash_image);
  ASSERT_EQ(read_all(*open_on(replay, r.sb)), r.after);
  ASSERT_GE(replay.events(), 3u);
  // Cut the replay after every event, keeping every second pending unit
  // (torn at 512), and open twice more.
  for (size_t p = 0; p <= replay.events(); ++p) {
    std::vector<bool> some(replay.pending_unit_count(p, RecordingStore::Granularity::k512));
    for (size_t i = 0; i < some.size(); i += 2) some[i] = true;
    RecordingStore cut(replay.materialize(p, some, RecordingStore::Granularity::k512));
    EXPECT_EQ(read_all(*open_on(cut, r.sb)), r.after) << "replay cut after event " << p;
    EXPECT_EQ(read_all(*open_on(cut, r.sb)), r.after) << "and recovered again";
  }
}

// The record stays valid until voided; the void must be durable before
// any later write is, or a replay would undo a flushed write.
TEST(InplaceAru, AStaleRecordIsNeverReplayedOverNewerFlushedWrites) {
  const Superblock sb = inplace_sb();
  MemoryBackingStore m(empty_image(sb));
  RecordingStore rec(m);
  auto d = open_on(rec, sb);
  Group g({5, 6, 60}, 9);
  d->commit_group(g.group, kSimEpoch);
  const size_t after_commit = rec.events();
  const Bytes w = pattern(2 * kBlock, 10);
  d->write(5 * kBlock, w, false, kSimEpoch);  // over blocks 5 and 6
  d->flush(kSimEpoch);
  const Bytes want = read_all(*d);
  // Every crash after the commit, with any pending subset (torn at 512):
  // once the flush completed, the write is there; before, each block of
  // it is the write's or the commit's.
  for (size_t p = after_commit; p <= rec.events(); ++p) {
    const size_t k = rec.pending_unit_count(p, RecordingStore::Granularity::k512);
    ASSERT_LE(k, 20u);
    for (uint64_t mask = 0; mask < (uint64_t{1} << k); mask += 1 + mask / 7) {
      std::vector<bool> s(k);
      for (size_t i = 0; i < k; ++i) s[i] = (mask >> i) & 1;
      RecordingStore crash(rec.materialize(p, s, RecordingStore::Granularity::k512));
      const Bytes got = read_all(*open_on(crash, sb));
      if (p == rec.events()) {
        EXPECT_EQ(got, want) << "the flushed write is lost to a stale replay";
        continue;
      }
      // In place, a write is atomic per sector only.
      for (uint64_t b : {5, 6})
        for (uint64_t sct = 0; sct < kBlock / 512; ++sct) {
          const auto at = got.begin() + static_cast<ptrdiff_t>(b * kBlock + sct * 512);
          const bool new_w = std::equal(at, at + 512, want.begin() + (at - got.begin()));
          const bool commit = std::equal(at, at + 512, g.data[b - 5].begin() + sct * 512);
          EXPECT_TRUE(new_w || commit) << "block " << b << " sector " << sct << " at " << p;
        }
    }
  }
}

TEST(InplaceAru, TooLargeAGroupFailsWithEnospcAndChangesNothing) {
  const Superblock sb = inplace_sb();
  MemoryBackingStore m(empty_image(sb));
  RecordingStore rec(m);
  auto d = open_on(rec, sb);
  const RedoJournal j(sb);
  const uint64_t fits = (j.capacity() - j.descriptor_bytes(256)) / kBlock;
  ASSERT_LT(fits, 256u) << "the test needs a group the journal cannot hold";
  std::vector<uint64_t> all(256);
  for (uint64_t b = 0; b < 256; ++b) all[b] = b;
  Group g(all, 11);
  const size_t events = rec.events();
  try {
    d->commit_group(g.group, kSimEpoch);
    FAIL() << "no ENOSPC";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), ENOSPC);
    EXPECT_NE(std::string(e.what()).find("redo journal"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rec.events(), events) << "nothing written";
  EXPECT_TRUE(std::all_of(rec.contents().begin() + sb.platter_offset, rec.contents().end(),
                          [](std::byte b) { return b == std::byte{0}; }));
  // The same number of zero blocks needs no data room, and fits.
  Group zeros(all, 12, std::vector<bool>(256, true));
  d->commit_group(zeros.group, kSimEpoch);
  // And a group that just fits.
  Group just(std::vector<uint64_t>(all.begin(), all.begin() + static_cast<ptrdiff_t>(fits)), 13);
  d->commit_group(just.group, kSimEpoch);
  EXPECT_EQ(read_all(*d), just.applied_to(Bytes(kExport)));
}

TEST(InplaceAru, AnImageNeverUsedWithArusIsUnchanged) {
  const Superblock sb = inplace_sb();
  MemoryBackingStore m(empty_image(sb));
  {
    auto d = open_on(m, sb);
    fill(*d, 64, 14);
    d->trim(8 * kBlock, 4 * kBlock, false, kSimEpoch);
    d->close();
  }
  // Exactly the export's bytes at the platters and zeros elsewhere.
  const RedoJournal j(sb);
  EXPECT_EQ(j.offset(), kExport);
  EXPECT_TRUE(std::all_of(m.bytes().begin() + static_cast<ptrdiff_t>(sb.platter_offset + kExport),
                          m.bytes().end(), [](std::byte b) { return b == std::byte{0}; }));
  Superblock got;
  std::string why;
  ASSERT_EQ(decode_superblock(reinterpret_cast<const unsigned char*>(m.bytes().data()), &got, &why),
            DecodeResult::kOk);
  RecordingStore rec(m);
  auto d = open_on(rec, sb);
  EXPECT_EQ(rec.events(), 0u);
  EXPECT_EQ(d->check_consistency(), "");
}

TEST(InplaceAru, ReadOnlyOpenReplaysInMemoryOnly) {
  Group g({10, 11, 12}, 15);
  Recorded r(g);
  std::vector<bool> none(r.rec->pending_unit_count(r.sync_event(0) + 1, RecordingStore::Granularity::k4K));
  MemoryBackingStore crash(r.rec->materialize(r.sync_event(0) + 1, none, RecordingStore::Granularity::k4K));
  const Bytes image = crash.bytes();
  InplaceDisk d(std::make_unique<OverlayStore>(crash), r.sb);
  EXPECT_EQ(read_all(d), r.after);
  EXPECT_EQ(crash.bytes(), image) << "a read-only open wrote to the image";
}

// The baseline's cost: the group is written twice (journal and home) with
// two syncs, a command each; the void is paid by the next flush (or not
// at all when the next commit's record replaces it).
TEST(InplaceAru, CostsTheJournalTheHomeWritesAndTwoSyncs) {
  const Superblock sb = inplace_sb();
  const SimDuration overhead = sb.geometry.controller_overhead;
  Group g({3, 17, 200}, 16);
  MemoryBackingStore a(empty_image(sb)), b(empty_image(sb));
  auto da = open_on(a, sb);
  const SimTime t0 = kSimEpoch + std::chrono::milliseconds(50);
  Completion c = da->commit_group(g.group, t0);
  EXPECT_EQ(c.syncs, 2u);
  EXPECT_EQ(a.syncs(), 2u);
  EXPECT_EQ(c.physical_blocks_written, 4u + 3u) << "record (descriptor and 3 blocks) and home";
  EXPECT_EQ(c.end - t0, c.service.total());
  EXPECT_EQ(c.service.overhead, 4 * overhead) << "record, sync, home, sync: a command each";
  // The same blocks written plainly, then a flush.
  auto db = open_on(b, sb);
  SimTime t = t0;
  SimDuration plain_transfer{};
  for (const GroupBlock& x : g.group) {
    Completion w = db->write(x.block * kBlock, std::span(x.data, kBlock), false, t);
    plain_transfer += w.service.transfer;
    t = w.end;
  }
  t = db->flush(t).end;
  EXPECT_GE(c.end - t0, t - t0) << "an ARU on a conventional disk is no cheaper than plain writes";
  EXPECT_GT(c.service.transfer, 2 * plain_transfer) << "every block twice, and the descriptor";
  // The next flush voids the record first: one sector back at the journal.
  Completion f = da->flush(c.end);
  EXPECT_EQ(f.service.overhead, overhead);
  EXPECT_GT(f.service.transfer.count(), 0);
  EXPECT_EQ(da->flush(f.end).service.transfer.count(), 0) << "voided once";
  // Back to back commits: the second record replaces the first, no void.
  Completion c2 = da->commit_group(g.group, f.end);
  Completion c3 = da->commit_group(g.group, c2.end);
  EXPECT_EQ(c3.service.overhead, 4 * overhead);
  EXPECT_EQ(c3.service.transfer, c.service.transfer);
  EXPECT_EQ(da->check_consistency(), "");
}

// ---- backing-store faults ------------------------------------------------

// An inplace disk on a FaultyStore over an image in memory, its first 16
// blocks filled with `seed`'s pattern (before).
struct FaultyInplace {
  explicit FaultyInplace(uint64_t seed)
      : sb(inplace_sb()), m(empty_image(sb)), f(m), d(open_on(f, sb)), before(fill(*d, 16, seed)) {}
  const Superblock sb;
  MemoryBackingStore m;
  FaultyStore f;
  std::unique_ptr<InplaceDisk> d;
  const Bytes before;
};

TEST(InplaceAru, AFailedRecordWriteFailsTheCommitAndVoidsIt) {
  FaultyInplace t(17);
  auto& [sb, m, f, d, before] = t;
  Group g({1, 2, 3}, 18);
  const uint64_t record = RedoJournal(sb).record_bytes(3, 3);
  // The whole record lands, and yet the write reports failure.
  f.arm({.op = FaultyStore::Op::kWrite, .nth = 0, .torn_bytes = record, .only_len = record});
  EXPECT_THROW(d->commit_group(g.group, kSimEpoch), Error);
  EXPECT_EQ(read_all(*d), before);
  f.disarm();
  d->flush(kSimEpoch);  // the disk goes on; the record must not become durable
  EXPECT_EQ(read_all(*open_on(m, sb)), before);
}

// Past the commit point a failed home write is undone: the old contents
// back, synced, the record voided, synced; the commit fails having applied
// nothing and the disk serves on.
TEST(InplaceAru, AFailedHomeWriteIsRolledBackAndTheDiskServesOn) {
  FaultyInplace t(19);
  auto& [sb, m, f, d, before] = t;
  Group g({1, 9, 30}, 20);
  // The third home write fails part way.
  f.arm({.op = FaultyStore::Op::kWrite, .nth = 2, .torn_bytes = 1024, .only_len = kBlock});
  try {
    d->commit_group(g.group, kSimEpoch);
    ADD_FAILURE() << "the commit succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EIO);
  }
  f.disarm();
  EXPECT_EQ(read_all(*d), before) << "a failed commit applied some";
  EXPECT_EQ(d->check_consistency(), "");
  EXPECT_EQ(read_all(*open_on(m, sb)), before) << "a failed commit's record was replayed";
  d->commit_group(g.group, kSimEpoch);  // the disk serves on
  EXPECT_EQ(read_all(*d), g.applied_to(before));
}

// A crash anywhere in a rolled-back commit, torn at 512: the group reads
// all old or all new (a failed request, crash contract), and all old once
// the rollback's last sync is done.
TEST(InplaceAru, ACrashDuringARollBackLeavesAllOrNothing) {
  const Superblock sb = inplace_sb();
  MemoryBackingStore m(empty_image(sb));
  Bytes before;
  {
    auto d = open_on(m, sb);
    before = fill(*d, 16, 26);
    d->close();
  }
  RecordingStore rec(m);
  FaultyStore f(rec);
  auto d = open_on(f, sb);
  Group g({1, 2, 9}, 27);
  const Bytes after = g.applied_to(before);
  const size_t begin = rec.events();
  f.arm({.op = FaultyStore::Op::kWrite, .nth = 2, .torn_bytes = 1536, .only_len = kBlock});
  EXPECT_THROW(d->commit_group(g.group, kSimEpoch), Error);
  const G512 g512 = RecordingStore::Granularity::k512;
  std::mt19937_64 rng(28);
  for (size_t p = begin; p <= rec.events(); ++p) {
    const size_t k = rec.pending_unit_count(p, g512);
    for (int trial = 0; trial < 24; ++trial) {
      std::vector<bool> s(k);
      for (size_t i = 0; i < k; ++i) s[i] = trial == 0 ? false : trial == 1 ? true : (rng() & 1);
      RecordingStore crash(rec.materialize(p, s, g512));
      const Bytes got = read_all(*open_on(crash, sb));
      if (p == rec.events())
        EXPECT_EQ(got, before) << "rolled back and voided, durably";
      else
        EXPECT_TRUE(got == before || got == after) << "crash after event " << p << ", trial " << trial;
    }
  }
}

// If the old contents cannot be put back either, the group is committed
// (its record is durable): the disk stops, reads see the group, and the
// next open replays it.
TEST(InplaceAru, AHomeWriteThatCannotBeUndoneKeepsTheCommitAndStopsTheDisk) {
  FaultyInplace t(19);
  auto& [sb, m, f, d, before] = t;
  Group g({1, 9, 30}, 20);
  f.arm({.op = FaultyStore::Op::kWrite, .nth = 2, .sticky = true, .torn_bytes = 1024,
         .only_len = kBlock});
  Completion c = d->commit_group(g.group, kSimEpoch);
  EXPECT_EQ(c.syncs, 1u);
  EXPECT_EQ(read_all(*d), g.applied_to(before)) << "reads see the committed group";
  EXPECT_THROW(d->write(0, pattern(kBlock, 1), false, kSimEpoch), Error) << "the disk stopped";
  EXPECT_THROW(d->flush(kSimEpoch), Error);
  f.disarm();
  auto again = open_on(m, sb);
  EXPECT_EQ(read_all(*again), g.applied_to(before)) << "the next open replays it";
  EXPECT_EQ(again->check_consistency(), "");
}

TEST(InplaceAru, AFailedSyncAtTheCommitPointFailsTheCommit) {
  FaultyInplace t(21);
  auto& [sb, m, f, d, before] = t;
  Group g({4, 5}, 22);
  f.arm({.op = FaultyStore::Op::kSync, .nth = 0, .drop_on_failed_sync = true});
  EXPECT_THROW(d->commit_group(g.group, kSimEpoch), Error);
  EXPECT_EQ(read_all(*d), before) << "nothing applied";
  EXPECT_THROW(d->commit_group(g.group, kSimEpoch), Error) << "the disk stopped";
  f.disarm();
  EXPECT_EQ(read_all(*open_on(m, sb)), before) << "the dropped record is not replayed";
}

// The void the next flush writes first fails: the flush fails before its
// sync, the record stays valid, and the next flush voids it before any
// later write is durable.
TEST(InplaceAru, AFailedVoidFailsTheFlushAndIsRetried) {
  FaultyInplace t(23);
  auto& [sb, m, f, d, before] = t;
  Group g({2, 3}, 24);
  d->commit_group(g.group, kSimEpoch);
  f.arm({.op = FaultyStore::Op::kWrite, .nth = 0, .only_len = 512});
  const uint64_t syncs = m.syncs();
  EXPECT_THROW(d->flush(kSimEpoch), Error);
  EXPECT_EQ(m.syncs(), syncs) << "no sync after a failed void";
  f.disarm();
  const Bytes w = pattern(kBlock, 25);
  d->write(2 * kBlock, w, false, kSimEpoch);
  d->flush(kSimEpoch);
  EXPECT_EQ(d->check_consistency(), "");
  EXPECT_EQ(block_of(read_all(*open_on(m, sb)), 2), w) << "a stale replay undid a flushed write";
}

}  // namespace
}  // namespace vld
