// RecordingStore: the log, pending units at both granularities, and the
// images materialize() builds for chosen subsets of surviving units.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "core/store/backing_store.h"
#include "core/store/crash_store.h"
#include "core/util/error.h"

namespace vld {
namespace {

using Bytes = std::vector<std::byte>;
using G = RecordingStore::Granularity;
using Kind = RecordingStore::Event::Kind;

constexpr uint64_t kImage = 64 * 1024;

Bytes filled(size_t n, uint8_t v) { return Bytes(n, std::byte{v}); }

// n bytes that differ from each other and from every other pattern with a
// different seed, so a misplaced piece shows.
Bytes pattern(size_t n, uint8_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte(static_cast<uint8_t>(seed * 31 + i * 7 + i / 251));
  return b;
}

// Copies src over dst at offset, as the expected-image builder in tests.
void put(Bytes& dst, uint64_t offset, const Bytes& src) {
  std::copy(src.begin(), src.end(), dst.begin() + static_cast<std::ptrdiff_t>(offset));
}

Bytes slice(const Bytes& b, uint64_t offset, uint64_t len) {
  return Bytes(b.begin() + static_cast<std::ptrdiff_t>(offset),
               b.begin() + static_cast<std::ptrdiff_t>(offset + len));
}

Bytes read_store(BackingStore& s) {
  Bytes out(s.size_bytes());
  s.read(0, out);
  return out;
}

TEST(RecordingStore, StartsWithBaseAndAnEmptyLog) {
  Bytes base = pattern(kImage, 1);
  RecordingStore s(base);
  EXPECT_EQ(s.size_bytes(), kImage);
  EXPECT_EQ(s.events(), 0u);
  EXPECT_EQ(s.syncs(), 0u);
  EXPECT_EQ(read_store(s), base);
  EXPECT_EQ(s.synced_prefix(0), 0u);
  EXPECT_TRUE(s.pending_units(0, G::k4K).empty());
  EXPECT_EQ(s.materialize(0, {}, G::k4K), base);
}

TEST(RecordingStore, CopiesAnotherStore) {
  MemoryBackingStore m(kImage);
  Bytes p = pattern(kImage, 2);
  m.write(0, p);
  RecordingStore s(m);
  EXPECT_EQ(s.base(), p);
  EXPECT_EQ(read_store(s), p);
}

TEST(RecordingStore, RecordsTheLogAndReadsItsOwnWrites) {
  RecordingStore s(filled(kImage, 0x11));
  Bytes a = pattern(1000, 3);
  s.write(100, a);
  s.discard(4096, 512);
  s.sync();
  s.write(0, {});
  s.sync();
  ASSERT_EQ(s.events(), 5u);
  EXPECT_EQ(s.syncs(), 2u);
  EXPECT_EQ(s.event(0).kind, Kind::kWrite);
  EXPECT_EQ(s.event(0).offset, 100u);
  EXPECT_EQ(s.event(0).len, 1000u);
  EXPECT_EQ(s.event(0).data, a);
  EXPECT_EQ(s.event(1).kind, Kind::kDiscard);
  EXPECT_EQ(s.event(1).offset, 4096u);
  EXPECT_EQ(s.event(1).len, 512u);
  EXPECT_TRUE(s.event(1).data.empty());
  EXPECT_EQ(s.event(2).kind, Kind::kSync);
  EXPECT_EQ(s.event(3).kind, Kind::kWrite);
  EXPECT_EQ(s.event(3).len, 0u);
  EXPECT_EQ(s.event(4).kind, Kind::kSync);

  Bytes got(1000);
  s.read(100, got);
  EXPECT_EQ(got, a);
  Bytes z(512);
  s.read(4096, z);
  EXPECT_EQ(z, filled(512, 0));
  Bytes edge(1);
  s.read(4096 + 512, edge);
  EXPECT_EQ(edge, filled(1, 0x11));
}

TEST(RecordingStore, OutOfRangeAccessThrowsAndRecordsNothing) {
  RecordingStore s(filled(8192, 0));
  Bytes b(4096);
  EXPECT_THROW(s.write(8192 - 100, b), Error);
  EXPECT_THROW(s.discard(8000, 4096), Error);
  EXPECT_THROW(s.discard(UINT64_MAX, 2), Error);
  EXPECT_THROW(s.read(8192, std::span<std::byte>(b.data(), 1)), Error);
  EXPECT_EQ(s.events(), 0u);
  EXPECT_EQ(s.contents(), filled(8192, 0));
}

TEST(RecordingStore, SyncedPrefixIsOnePastTheLastSyncBeforeThePoint) {
  RecordingStore s(filled(kImage, 0));
  s.write(0, filled(10, 1));   // 0
  s.sync();                    // 1
  s.write(0, filled(10, 2));   // 2
  s.write(0, filled(10, 3));   // 3
  s.sync();                    // 4
  s.write(0, filled(10, 4));   // 5
  const size_t want[] = {0, 0, 2, 2, 2, 5, 5};
  for (size_t p = 0; p <= s.events(); ++p) EXPECT_EQ(s.synced_prefix(p), want[p]) << "p=" << p;
  EXPECT_THROW(s.synced_prefix(s.events() + 1), Error);
}

TEST(RecordingStore, NoPendingWritesGivesTheSyncedState) {
  Bytes base = pattern(kImage, 4);
  RecordingStore s(base);
  s.write(8192, pattern(4096, 5));
  s.discard(0, 4096);
  s.sync();
  const Bytes synced = s.contents();
  ASSERT_NE(synced, base);
  // Right after the sync: nothing pending.
  EXPECT_EQ(s.pending_unit_count(s.events(), G::k4K), 0u);
  EXPECT_EQ(s.materialize(s.events(), {}, G::k4K), synced);
  EXPECT_EQ(s.materialize(s.events(), {}, G::k512), synced);

  // Later writes, none surviving, also give the synced state.
  s.write(8192, pattern(8192, 6));
  s.discard(20000, 3000);
  ASSERT_NE(s.contents(), synced);
  for (G g : {G::k4K, G::k512}) {
    size_t n = s.pending_unit_count(s.events(), g);
    ASSERT_GT(n, 0u);
    EXPECT_EQ(s.materialize(s.events(), std::vector<bool>(n, false), g), synced);
  }
}

TEST(RecordingStore, AllSurvivingGivesTheLiveContentsAtEveryPoint) {
  RecordingStore s(pattern(kImage, 7));
  std::vector<Bytes> live{s.contents()};
  auto step = [&](auto op) {
    op();
    live.push_back(s.contents());
  };
  step([&] { s.write(1000, pattern(9000, 8)); });
  step([&] { s.write(4096, pattern(4096, 9)); });
  step([&] { s.sync(); });
  step([&] { s.discard(3000, 7000); });
  step([&] { s.write(2048, pattern(100, 10)); });
  step([&] { s.write(60000, pattern(5536, 11)); });
  step([&] { s.sync(); });
  step([&] { s.write(0, pattern(kImage, 12)); });
  step([&] { s.discard(512, 512); });
  ASSERT_EQ(live.size(), s.events() + 1);
  for (size_t p = 0; p <= s.events(); ++p) {
    for (G g : {G::k4K, G::k512}) {
      size_t n = s.pending_unit_count(p, g);
      EXPECT_EQ(s.materialize(p, std::vector<bool>(n, true), g), live[p])
          << "p=" << p << " g=" << RecordingStore::unit_bytes(g);
      EXPECT_EQ(s.materialize(p, std::vector<bool>(n, false), g), live[s.synced_prefix(p)])
          << "p=" << p << " g=" << RecordingStore::unit_bytes(g);
    }
  }
}

TEST(RecordingStore, An8KiBWriteIs2UnitsAt4KAnd16At512) {
  RecordingStore s(filled(kImage, 0));
  s.write(0, filled(100, 1));
  s.sync();
  Bytes data = pattern(8192, 13);
  s.write(16384, data);
  const size_t p = s.events();

  auto u4 = s.pending_units(p, G::k4K);
  ASSERT_EQ(u4.size(), 2u);
  EXPECT_EQ(s.pending_unit_count(p, G::k4K), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(u4[k].offset, 16384 + 4096 * k);
    EXPECT_EQ(u4[k].len, 4096u);
    EXPECT_EQ(u4[k].event, 2u);
    EXPECT_EQ(u4[k].bytes, slice(data, 4096 * k, 4096));
  }

  auto u512 = s.pending_units(p, G::k512);
  ASSERT_EQ(u512.size(), 16u);
  EXPECT_EQ(s.pending_unit_count(p, G::k512), 16u);
  for (size_t k = 0; k < 16; ++k) {
    EXPECT_EQ(u512[k].offset, 16384 + 512 * k);
    EXPECT_EQ(u512[k].len, 512u);
    EXPECT_EQ(u512[k].event, 2u);
    EXPECT_EQ(u512[k].bytes, slice(data, 512 * k, 512));
  }
}

TEST(RecordingStore, UnalignedWritesSplitAtGranuleBoundaries) {
  RecordingStore s(filled(kImage, 0));
  Bytes data = pattern(5000, 14);
  s.write(1000, data);  // [1000, 6000)
  s.write(5000, pattern(10, 15));  // inside one granule at both sizes

  auto u4 = s.pending_units(s.events(), G::k4K);
  ASSERT_EQ(u4.size(), 3u);
  EXPECT_EQ(u4[0].offset, 1000u);
  EXPECT_EQ(u4[0].len, 3096u);
  EXPECT_EQ(u4[0].bytes, slice(data, 0, 3096));
  EXPECT_EQ(u4[1].offset, 4096u);
  EXPECT_EQ(u4[1].len, 1904u);
  EXPECT_EQ(u4[1].bytes, slice(data, 3096, 1904));
  EXPECT_EQ(u4[2].offset, 5000u);
  EXPECT_EQ(u4[2].len, 10u);
  EXPECT_EQ(u4[2].event, 1u);

  // 512: [1000,1024) then 9 full sectors [1024,5632) then [5632,6000), then
  // the small write.
  auto u512 = s.pending_units(s.events(), G::k512);
  ASSERT_EQ(u512.size(), 12u);
  EXPECT_EQ(u512[0].offset, 1000u);
  EXPECT_EQ(u512[0].len, 24u);
  for (size_t k = 1; k <= 9; ++k) {
    EXPECT_EQ(u512[k].offset, 1024 + 512 * (k - 1));
    EXPECT_EQ(u512[k].len, 512u);
  }
  EXPECT_EQ(u512[10].offset, 5632u);
  EXPECT_EQ(u512[10].len, 368u);
  EXPECT_EQ(u512[10].bytes, slice(data, 4632, 368));
  EXPECT_EQ(u512[11].offset, 5000u);
  EXPECT_EQ(u512[11].event, 1u);
}

TEST(RecordingStore, SubsetsGiveExactlyTheChosenBytes) {
  // Base 0x00 over 16 KiB; after the sync, 8 KiB of A at 0 (units 0, 1) and
  // 4 KiB of B at 4096 (unit 2, overlapping unit 1).
  RecordingStore s(filled(16384, 0));
  s.sync();
  const Bytes a = filled(8192, 0xAA), b = filled(4096, 0xBB);
  s.write(0, a);
  s.write(4096, b);
  const size_t p = s.events();
  ASSERT_EQ(s.pending_unit_count(p, G::k4K), 3u);

  auto image = [](uint8_t q0, uint8_t q1) {
    Bytes e = filled(16384, 0);
    put(e, 0, filled(4096, q0));
    put(e, 4096, filled(4096, q1));
    return e;
  };
  EXPECT_EQ(s.materialize(p, {true, false, false}, G::k4K), image(0xAA, 0x00));
  EXPECT_EQ(s.materialize(p, {false, true, false}, G::k4K), image(0x00, 0xAA));
  EXPECT_EQ(s.materialize(p, {false, false, true}, G::k4K), image(0x00, 0xBB));
  // B is later than A's second unit: it wins where both survive.
  EXPECT_EQ(s.materialize(p, {false, true, true}, G::k4K), image(0x00, 0xBB));
  EXPECT_EQ(s.materialize(p, {true, false, true}, G::k4K), image(0xAA, 0xBB));
  EXPECT_EQ(s.materialize(p, {true, true, false}, G::k4K), image(0xAA, 0xAA));

  // At the crash point between the two writes only A is pending.
  EXPECT_EQ(s.materialize(p - 1, {false, true}, G::k4K), image(0x00, 0xAA));
  EXPECT_THROW(s.materialize(p - 1, {false, true, true}, G::k4K), Error);
}

TEST(RecordingStore, TornModeKeepsChosenSectors) {
  RecordingStore s(filled(8192, 0x11));
  s.sync();
  const Bytes data = pattern(8192, 16);
  s.write(0, data);
  std::vector<bool> even(16);
  for (size_t k = 0; k < 16; ++k) even[k] = k % 2 == 0;
  Bytes got = s.materialize(s.events(), even, G::k512);
  for (size_t k = 0; k < 16; ++k) {
    Bytes want = k % 2 == 0 ? slice(data, 512 * k, 512) : filled(512, 0x11);
    EXPECT_EQ(slice(got, 512 * k, 512), want) << "sector " << k;
  }
  // A torn subset is not expressible at 4K: the flag count differs.
  EXPECT_THROW(s.materialize(s.events(), even, G::k4K), Error);
}

TEST(RecordingStore, DiscardsAreZeroWrites) {
  RecordingStore s(filled(16384, 0x5A));
  s.discard(0, 4096);  // before the sync: always zeros
  s.sync();
  s.discard(4096, 6000);  // [4096, 10096): units [4096, 8192), [8192, 10096)
  const size_t p = s.events();

  auto units = s.pending_units(p, G::k4K);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].offset, 4096u);
  EXPECT_EQ(units[0].bytes, filled(4096, 0));
  EXPECT_EQ(units[1].offset, 8192u);
  EXPECT_EQ(units[1].len, 1904u);
  EXPECT_EQ(units[1].bytes, filled(1904, 0));
  EXPECT_EQ(units[1].event, 2u);

  Bytes none = filled(16384, 0x5A);
  put(none, 0, filled(4096, 0));
  EXPECT_EQ(s.materialize(p, {false, false}, G::k4K), none);

  Bytes second = none;
  put(second, 8192, filled(1904, 0));
  EXPECT_EQ(s.materialize(p, {false, true}, G::k4K), second);

  Bytes both = none;
  put(both, 4096, filled(6000, 0));
  EXPECT_EQ(s.materialize(p, {true, true}, G::k4K), both);
  EXPECT_EQ(s.contents(), both);

  // Same result as recording the equivalent zero write.
  RecordingStore w(filled(16384, 0x5A));
  w.write(0, filled(4096, 0));
  w.sync();
  w.write(4096, filled(6000, 0));
  for (const std::vector<bool>& v : {std::vector<bool>{false, false}, {true, false},
                                     {false, true}, {true, true}})
    EXPECT_EQ(w.materialize(p, v, G::k4K), s.materialize(p, v, G::k4K));
}

TEST(RecordingStore, WritesBeforeTheSyncAreAlwaysPresent) {
  RecordingStore s(filled(16384, 0));
  const Bytes a = pattern(8192, 17);  // [0, 8192), synced
  s.write(0, a);
  s.sync();
  s.write(4096, filled(8192, 0xCC));  // [4096, 12288) spans A's end
  const size_t p = s.events();

  // Nothing pending survives: all of A, nothing of C.
  Bytes want = filled(16384, 0);
  put(want, 0, a);
  EXPECT_EQ(s.materialize(p, {false, false}, G::k4K), want);
  // C's first unit lost, second kept: A's second half stays under it.
  Bytes want2 = want;
  put(want2, 8192, filled(4096, 0xCC));
  EXPECT_EQ(s.materialize(p, {false, true}, G::k4K), want2);
  // Every torn subset keeps A where C did not survive.
  const size_t n = s.pending_unit_count(p, G::k512);
  ASSERT_EQ(n, 16u);
  for (size_t k = 0; k < n; ++k) {
    std::vector<bool> one(n, false);
    one[k] = true;
    Bytes got = s.materialize(p, one, G::k512);
    Bytes exp = want;
    put(exp, 4096 + 512 * k, filled(512, 0xCC));
    EXPECT_EQ(got, exp) << "only sector " << k;
  }

  // A crash before the sync: A is pending there and may be lost.
  EXPECT_EQ(s.synced_prefix(1), 0u);
  EXPECT_EQ(s.materialize(1, {false, false}, G::k4K), filled(16384, 0));
  // The sync itself completing makes A durable.
  EXPECT_EQ(s.materialize(2, {}, G::k4K), want);
}

TEST(RecordingStore, EightSubsetsOfThreeDisjointUnitsAreEightImages) {
  RecordingStore s(filled(kImage, 0));
  s.sync();
  const Bytes w[3] = {pattern(4096, 20), pattern(4096, 21), pattern(4096, 22)};
  const uint64_t at[3] = {0, 12288, 40960};
  for (int i = 0; i < 3; ++i) s.write(at[i], w[i]);
  const size_t p = s.events();
  ASSERT_EQ(s.pending_unit_count(p, G::k4K), 3u);

  std::set<Bytes> images;
  for (unsigned mask = 0; mask < 8; ++mask) {
    std::vector<bool> v{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    Bytes got = s.materialize(p, v, G::k4K);
    Bytes exp = filled(kImage, 0);
    for (int i = 0; i < 3; ++i)
      if (v[i]) put(exp, at[i], w[i]);
    EXPECT_EQ(got, exp) << "mask " << mask;
    images.insert(std::move(got));
  }
  EXPECT_EQ(images.size(), 8u);
}

TEST(RecordingStore, BadCrashPointsAndFlagCountsThrow) {
  RecordingStore s(filled(8192, 0));
  s.write(0, filled(4096, 1));
  EXPECT_THROW(s.pending_units(2, G::k4K), Error);
  EXPECT_THROW(s.pending_unit_count(2, G::k4K), Error);
  EXPECT_THROW(s.materialize(2, {true}, G::k4K), Error);
  EXPECT_THROW(s.materialize(1, {}, G::k4K), Error);
  EXPECT_THROW(s.materialize(1, {true, true}, G::k4K), Error);
  EXPECT_NO_THROW(s.materialize(1, {true}, G::k4K));
}

TEST(RecordingStore, AsStoreHoldsTheImage) {
  Bytes img = pattern(20000, 23);
  std::unique_ptr<MemoryBackingStore> m = as_store(img);
  ASSERT_EQ(m->size_bytes(), img.size());
  EXPECT_EQ(read_store(*m), img);
  EXPECT_EQ(m->syncs(), 0u);
}

}  // namespace
}  // namespace vld
