// mode=lld's on-disk records (core/lld/segment_summary.h, core/lld/checkpoint.h):
// round trips, the sizes docs/format.md gives, trim entries and the continues
// flag, the keyed MAC (every flipped bit, another key), field limits, the
// choice between the two checkpoint slots, and golden bytes so the format
// cannot change by accident.
#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/lld/checkpoint.h"
#include "core/lld/segment_summary.h"
#include "core/util/coding.h"
#include "tests/unit/lld_test_util.h"

namespace vld {
namespace {

using test::hex;
using test::key_of;
using Bytes = std::vector<unsigned char>;

class LldFormatTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(sodium_init(), 0); }
  const MacKey key = key_of(1);
  // 512 KiB segments of 4 KiB blocks (paper 001, section 4.4).
  const LldShape shape{.segment_sectors = 1024, .block_sectors = 8, .segment_count = 64,
                       .logical_blocks = 6000, .platter_sectors = 1 << 16};
  // Small enough to flip every bit of a checkpoint slot.
  const LldShape small{.segment_sectors = 64, .block_sectors = 8, .segment_count = 4,
                       .logical_blocks = 40, .platter_sectors = 256};
};

SegmentSummary summary_of(uint32_t count, uint64_t seq = 77) {
  SegmentSummary s;
  s.segment = 5;
  s.seq = seq;
  s.first_sector = 0;
  s.next_segment = 9;
  for (uint32_t i = 0; i < count; ++i) s.blocks.push_back({i * 37 % 6000, 0xabc00000u + i, 1 + i});
  return s;
}

// --- segment summary -------------------------------------------------------

TEST_F(LldFormatTest, SummarySizes) {
  EXPECT_EQ(summary_sectors(1), 1u);
  EXPECT_EQ(summary_sectors(29), 1u);  // 32 + 29 x 16 + 16 = 512
  EXPECT_EQ(summary_sectors(30), 2u);
  EXPECT_EQ(max_blocks_per_write(shape), 127u);  // 5 + 127 x 8 = 1021 <= 1024
  EXPECT_EQ(summary_sectors(127), 5u);
  EXPECT_EQ(max_blocks_per_write(small), 7u);  // 1 + 7 x 8 = 57 <= 64
}

TEST_F(LldFormatTest, SummaryRoundTrip) {
  for (uint32_t count : {1u, 29u, 30u, 127u}) {
    SegmentSummary s = summary_of(count);
    s.closes_segment = count == 127;
    Bytes b = encode_segment_summary(s, shape, key);
    ASSERT_EQ(b.size(), summary_sectors(count) * 512u);
    auto d = decode_segment_summary(b, shape, key);
    ASSERT_TRUE(d.has_value()) << count;
    EXPECT_EQ(*d, s);
    EXPECT_EQ(d->end_sector(shape), summary_sectors(count) + 8 * count);
  }
}

TEST_F(LldFormatTest, SummaryPartialWritesChainInOneSegment) {
  SegmentSummary first = summary_of(3, 10);
  SegmentSummary second = summary_of(2, 11);
  second.first_sector = first.end_sector(shape);  // 1 + 24
  EXPECT_EQ(second.first_sector, 25u);
  auto d = decode_segment_summary(encode_segment_summary(second, shape, key), shape, key);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->first_sector, 25u);
}

TEST_F(LldFormatTest, SummaryEveryBitFlipRefused) {
  for (uint32_t count : {2u, 40u}) {
    const Bytes good = encode_segment_summary(summary_of(count), shape, key);
    for (size_t bit = 0; bit < good.size() * 8; ++bit) {
      Bytes b = good;
      b[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      EXPECT_FALSE(decode_segment_summary(b, shape, key).has_value()) << count << " bit " << bit;
    }
  }
}

TEST_F(LldFormatTest, SummaryWrongKeyOrShortBufferRefused) {
  const Bytes b = encode_segment_summary(summary_of(40), shape, key);
  EXPECT_FALSE(decode_segment_summary(b, shape, key_of(2)).has_value());
  EXPECT_FALSE(decode_segment_summary(std::span(b).first(512), shape, key).has_value());
  EXPECT_FALSE(decode_segment_summary(std::span(b).first(100), shape, key).has_value());
}

// Encodes a valid summary, lets edit change its bytes, reseals it.
Bytes forged_summary(const SegmentSummary& s, const LldShape& shape, const MacKey& key,
                     void (*edit)(unsigned char*)) {
  Bytes b = encode_segment_summary(s, shape, key);
  edit(b.data());
  mac_seal(b.data(), b.size() - kMacBytes, key);
  return b;
}
Bytes forged_summary(uint32_t count, const LldShape& shape, const MacKey& key,
                     void (*edit)(unsigned char*)) {
  return forged_summary(summary_of(count), shape, key, edit);
}

TEST_F(LldFormatTest, SummaryFieldLimitsRefused) {
  using Edit = void (*)(unsigned char*);
  const Edit edits[] = {
      [](unsigned char* p) { encode_fixed64(p + 8, 0); },             // seq 0
      [](unsigned char* p) { encode_fixed32(p + 4, 64); },            // segment >= count
      [](unsigned char* p) { encode_fixed32(p + 24, 64); },           // next_segment >= count
      [](unsigned char* p) { encode_fixed32(p + 20, 0); },            // no blocks
      [](unsigned char* p) { encode_fixed32(p + 20, 128); },          // > a segment's capacity
      [](unsigned char* p) { encode_fixed32(p + 16, 1024 - 16); },    // overruns the segment
      [](unsigned char* p) { encode_fixed32(p + 28, 4); },            // unknown flag
      [](unsigned char* p) { encode_fixed32(p + 32, 6000); },         // logical block >= export
      [](unsigned char* p) { encode_fixed64(p + 40, 0); },            // version 0
      [](unsigned char* p) { encode_fixed64(p + 40, kSummaryTrimBit); },  // trim, version 0
      [](unsigned char* p) { encode_fixed32(p + 20, 0xffffffff); },   // summary overruns
  };
  for (size_t i = 0; i < std::size(edits); ++i)
    EXPECT_FALSE(decode_segment_summary(forged_summary(2, shape, key, edits[i]), shape, key))
        << "edit " << i;
  // The resealing itself is sound: a harmless edit still decodes.
  EXPECT_TRUE(decode_segment_summary(
      forged_summary(2, shape, key, [](unsigned char* p) { encode_fixed32(p + 16, 8); }), shape,
      key));
  // A logical block twice in one write is allowed (with nvram=0 a write may
  // carry two versions of one block; the later entry wins).
  const auto duplicate = decode_segment_summary(
      forged_summary(2, shape, key,
                     [](unsigned char* p) { encode_fixed32(p + 48, decode_fixed32(p + 32)); }),
      shape, key);
  ASSERT_TRUE(duplicate.has_value());
  EXPECT_EQ(duplicate->blocks[0].logical_block, duplicate->blocks[1].logical_block);
}

// Data, trim, data: block 10 written, blocks [100, 120) trimmed, block 10
// written again (the later entry wins).
SegmentSummary mixed_summary() {
  SegmentSummary s = summary_of(0, 12);
  s.blocks = {{10, 0x1234, 5}, {100, 0, 7, 20}, {10, 0x5678, 6}};
  return s;
}

TEST_F(LldFormatTest, SummaryTrimEntriesRoundTrip) {
  SegmentSummary s = mixed_summary();
  s.first_sector = 40;
  EXPECT_EQ(s.data_blocks(), 2u);
  EXPECT_EQ(write_sectors(3, 2, shape), 1u + 2 * 8);
  EXPECT_EQ(s.end_sector(shape), 40u + 1 + 2 * 8);  // no block for the trim
  const std::pair<bool, bool> flag_sets[] = {{false, true}, {true, true}, {true, false}};
  for (auto [closes, continues] : flag_sets) {
    s.closes_segment = closes;
    s.continues = continues;
    const Bytes b = encode_segment_summary(s, shape, key);
    EXPECT_EQ(decode_fixed32(b.data() + 28), (closes ? 1u : 0u) | (continues ? 2u : 0u));
    // The trim entry: logical block, trim_blocks where a checksum goes, version | 2^63.
    EXPECT_EQ(hex(b.data() + 48, 16), "64000000" "14000000" "0700000000000080");
    auto d = decode_segment_summary(b, shape, key);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, s);
  }
}

TEST_F(LldFormatTest, SummaryTrimOnlyWriteIsASummaryAlone) {
  // 127 trims: a 5-sector summary and no blocks, fitting exactly at the segment's end.
  SegmentSummary s = summary_of(0);
  for (uint32_t i = 0; i < 127; ++i) s.blocks.push_back({i * 40, 0, 1 + i, 40});
  s.first_sector = 1024 - 5;
  EXPECT_EQ(s.data_blocks(), 0u);
  EXPECT_EQ(s.end_sector(shape), 1024u);
  auto d = decode_segment_summary(encode_segment_summary(s, shape, key), shape, key);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(*d, s);
  // One sector later the summary itself would overrun the segment.
  EXPECT_FALSE(decode_segment_summary(
      forged_summary(s, shape, key, [](unsigned char* p) { encode_fixed32(p + 16, 1020); }),
      shape, key));
  // Nor may a data-carrying write overrun: 127 blocks from sector 3 end at 1024, from 4 at 1025.
  SegmentSummary full = summary_of(127);
  full.first_sector = 3;
  EXPECT_EQ(full.end_sector(shape), 1024u);
  EXPECT_TRUE(decode_segment_summary(encode_segment_summary(full, shape, key), shape, key));
  EXPECT_FALSE(decode_segment_summary(
      forged_summary(full, shape, key, [](unsigned char* p) { encode_fixed32(p + 16, 4); }),
      shape, key));
}

TEST_F(LldFormatTest, SummaryTrimLimitsRefused) {
  using Edit = void (*)(unsigned char*);
  // The trim entry is entry 1, at byte 48: lb at 48, trim_blocks at 52, version at 56.
  const Edit edits[] = {
      [](unsigned char* p) { encode_fixed32(p + 52, 0); },                // trims no block
      [](unsigned char* p) { encode_fixed64(p + 56, kSummaryTrimBit); },  // version 0
      [](unsigned char* p) { encode_fixed32(p + 48, 5981); },             // ends at 6001 > 6000
      [](unsigned char* p) { encode_fixed32(p + 52, 0xffffffff); },       // far past the export
      [](unsigned char* p) { encode_fixed32(p + 48, 6000); },             // starts past it
  };
  for (size_t i = 0; i < std::size(edits); ++i)
    EXPECT_FALSE(decode_segment_summary(forged_summary(mixed_summary(), shape, key, edits[i]),
                                        shape, key))
        << "edit " << i;
  // Ending exactly at the export's end is fine.
  auto d = decode_segment_summary(
      forged_summary(mixed_summary(), shape, key,
                     [](unsigned char* p) { encode_fixed32(p + 48, 5980); }),
      shape, key);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->blocks[1], (SummaryEntry{5980, 0, 7, 20}));
}

TEST_F(LldFormatTest, SummaryEncoderAssertsItsInvariants) {
#ifdef NDEBUG
  GTEST_SKIP() << "asserts compiled out";
#else
  SegmentSummary s = mixed_summary();
  s.blocks[0].version = kSummaryTrimBit;  // a data version must stay below 2^63
  EXPECT_DEATH(encode_segment_summary(s, shape, key), "");
  s = mixed_summary();
  s.blocks[1].checksum = 1;  // a trim's checksum is unused: 0
  EXPECT_DEATH(encode_segment_summary(s, shape, key), "");
  s.blocks.clear();  // a write holds at least one entry
  EXPECT_DEATH(encode_segment_summary(s, shape, key), "");
#endif
}

TEST_F(LldFormatTest, SummaryGoldenBytes) {
  SegmentSummary s;
  s.segment = 3;
  s.seq = 0x0102030405060708;
  s.first_sector = 25;
  s.next_segment = 4;
  s.closes_segment = true;
  s.blocks = {{17, 0xdeadbeef, 2}, {5, 0x01020304, 1}};
  const Bytes b = encode_segment_summary(s, shape, key);
  ASSERT_EQ(b.size(), 512u);
  EXPECT_EQ(hex(b.data(), 64),
            "4c44535303000000080706050403020119000000020000000400000001000000"
            "11000000efbeadde020000000000000005000000040302010100000000000000");
  for (size_t i = 64; i < 496; ++i) ASSERT_EQ(b[i], 0) << i;
  EXPECT_EQ(hex(b.data() + 496, 16), "b248ff4421a2537ffce305ac05b448d6");
}

TEST_F(LldFormatTest, SummaryGoldenBytesTrimAndContinues) {
  SegmentSummary s;
  s.segment = 3;
  s.seq = 0x0102030405060708;
  s.first_sector = 25;
  s.next_segment = 4;
  s.closes_segment = true;
  s.continues = true;
  s.blocks = {{17, 0xdeadbeef, 2}, {5, 0, 1, 0x30}};
  const Bytes b = encode_segment_summary(s, shape, key);
  ASSERT_EQ(b.size(), 512u);
  EXPECT_EQ(hex(b.data(), 64),
            "4c44535303000000080706050403020119000000020000000400000003000000"
            "11000000efbeadde020000000000000005000000300000000100000000000080");
  for (size_t i = 64; i < 496; ++i) ASSERT_EQ(b[i], 0) << i;
  EXPECT_EQ(hex(b.data() + 496, 16), "975f3d6ee7ec1b5e4052bce4dc07541a");
}

// --- checkpoint ------------------------------------------------------------

Checkpoint checkpoint_of(const LldShape& shape, uint64_t generation) {
  Checkpoint c;
  c.generation = generation;
  c.checkpoint_seq = 100 + generation;
  c.next_seq = c.checkpoint_seq + 3;
  c.segment = 2;
  c.next_sector = 25;
  c.tables.map.resize(shape.logical_blocks);
  for (uint32_t i = 0; i < shape.logical_blocks; i += 3)
    c.tables.map[i] = {static_cast<uint32_t>(1 + (i * 8) % shape.platter_sectors), 0x5150u + i, 1 + i};
  c.tables.map[1].version = 4;  // written, then trimmed: unmapped, version kept
  c.tables.usage.resize(shape.segment_count);
  for (uint32_t i = 0; i < shape.segment_count; ++i) c.tables.usage[i] = {i % 5, i};  // last_seq < next_seq
  return c;
}

TEST_F(LldFormatTest, CheckpointSizes) {
  EXPECT_EQ(checkpoint_table_sectors(small), 2u);  // 40 x 16 + 4 x 12 = 688
  EXPECT_EQ(checkpoint_journal_sectors(small), 16u);  // at least 16
  EXPECT_EQ(checkpoint_slot_sectors(small), 19u);
  EXPECT_EQ(checkpoint_table_sectors(shape), 189u);  // 6000 x 16 + 64 x 12 = 96768
  LldShape big = shape;
  big.logical_blocks = 1 << 20;
  EXPECT_EQ(checkpoint_table_sectors(big), 32770u);
  EXPECT_EQ(checkpoint_journal_sectors(big), 8193u);  // a quarter of the tables
  // Version 3 has no journal.
  LldShape v3 = small;
  v3.format_version = kLldDigestFormatVersion;
  EXPECT_EQ(checkpoint_journal_sectors(v3), 0u);
  EXPECT_EQ(checkpoint_slot_sectors(v3), 3u);
}

TEST_F(LldFormatTest, CheckpointRoundTrip) {
  for (const LldShape& sh : {small, shape}) {
    Checkpoint c = checkpoint_of(sh, 7);
    c.clean = true;
    const Bytes b = encode_checkpoint(c, sh, key);
    ASSERT_EQ(b.size(), (1 + checkpoint_table_sectors(sh)) * 512u);  // the journal empty
    auto d = decode_checkpoint(b, sh, key);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(*d, c);
  }
}

TEST_F(LldFormatTest, CheckpointEveryBitFlipRefused) {
  const Bytes good = encode_checkpoint(checkpoint_of(small, 3), small, key);
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    Bytes b = good;
    b[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    EXPECT_FALSE(decode_checkpoint(b, small, key).has_value()) << "bit " << bit;
  }
}

TEST_F(LldFormatTest, CheckpointWrongKeyShapeOrShortBufferRefused) {
  const Bytes b = encode_checkpoint(checkpoint_of(small, 3), small, key);
  EXPECT_FALSE(decode_checkpoint(b, small, key_of(2)).has_value());
  EXPECT_FALSE(decode_checkpoint(std::span(b).first(b.size() - 1), small, key).has_value());
  LldShape other = small;
  other.segment_count = 5;  // same table sectors, different table
  EXPECT_FALSE(decode_checkpoint(b, other, key).has_value());
}

// Reseals a checkpoint slot after its bytes were edited: the tables' MAC in
// the record at 56, then the record's MAC at 496.
// The slot's tables authenticated again as its shape's format version does.
void reseal_checkpoint(Bytes& b, const LldShape& shape, const MacKey& key) {
  Mac t;
  if (shape.incremental_checkpoints()) {
    std::vector<uint64_t> hashes;
    for (size_t at = 512; at < b.size(); at += 512) hashes.push_back(table_sector_hash(&b[at]));
    t = table_digest(hashes, key);
  } else {
    t = mac_of(b.data() + 512, b.size() - 512, key);
  }
  std::copy(t.begin(), t.end(), b.data() + 56);
  mac_seal(b.data(), 496, key);
}

TEST_F(LldFormatTest, CheckpointFieldLimitsRefused) {
  using Edit = void (*)(unsigned char*);
  // Tables start at byte 512: map entries of 16 bytes (40 of them), then
  // usage entries of 12 at 512 + 640.
  const Edit edits[] = {
      [](unsigned char* p) { encode_fixed32(p + 4, 2); },                   // clean not 0/1
      [](unsigned char* p) { encode_fixed64(p + 8, 0); },                   // generation 0
      [](unsigned char* p) { encode_fixed64(p + 24, decode_fixed64(p + 16)); },  // next_seq
      [](unsigned char* p) { encode_fixed32(p + 32, 4); },                  // segment >= count
      [](unsigned char* p) { encode_fixed32(p + 36, 64); },                 // sector >= segment
      [](unsigned char* p) { encode_fixed32(p + 40, 41); },                 // logical blocks
      [](unsigned char* p) { encode_fixed32(p + 48, 3); },                  // table sectors
      [](unsigned char* p) { encode_fixed32(p + 512, 257); },               // psn beyond platters
      [](unsigned char* p) { encode_fixed64(p + 512 + 8, 0); },             // mapped, version 0
      [](unsigned char* p) { encode_fixed32(p + 512 + 640, 8); },           // live > capacity
      [](unsigned char* p) { encode_fixed64(p + 512 + 640 + 4, 1000); },    // usage after next_seq
  };
  const Bytes good = encode_checkpoint(checkpoint_of(small, 3), small, key);
  for (size_t i = 0; i < std::size(edits); ++i) {
    Bytes b = good;
    edits[i](b.data());
    reseal_checkpoint(b, small, key);
    EXPECT_FALSE(decode_checkpoint(b, small, key).has_value()) << "edit " << i;
  }
  Bytes b = good;
  reseal_checkpoint(b, small, key);
  EXPECT_TRUE(decode_checkpoint(b, small, key).has_value());
}

TEST_F(LldFormatTest, PickCheckpointNewerValidSlotWins) {
  const Bytes g4 = encode_checkpoint(checkpoint_of(small, 4), small, key);
  const Bytes g5 = encode_checkpoint(checkpoint_of(small, 5), small, key);
  auto p = pick_checkpoint(g4, g5, small, key);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->slot, 1);
  EXPECT_EQ(p->checkpoint.generation, 5u);
  p = pick_checkpoint(g5, g4, small, key);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->slot, 0);
  EXPECT_EQ(p->checkpoint.generation, 5u);
}

TEST_F(LldFormatTest, PickCheckpointDamagedNewerFallsBack) {
  const Bytes g4 = encode_checkpoint(checkpoint_of(small, 4), small, key);
  Bytes g5 = encode_checkpoint(checkpoint_of(small, 5), small, key);
  g5.back() ^= 1;  // torn: the last table sector did not make it
  auto p = pick_checkpoint(g4, g5, small, key);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->slot, 0);
  EXPECT_EQ(p->checkpoint.generation, 4u);
  const Bytes zeros(g4.size());
  EXPECT_FALSE(pick_checkpoint(zeros, g5, small, key).has_value());
  p = pick_checkpoint(zeros, g4, small, key);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->slot, 1);
}

// --- version 4's journal ------------------------------------------------

// A slot whose base holds `base`'s tables and whose journal holds the
// sectors where `now`'s differ, in chunks; its record is `now`'s.
Bytes journaled_slot(const Checkpoint& base, Checkpoint now, const LldShape& shape,
                     const MacKey& key, std::vector<uint32_t>* changed) {
  const Bytes old_slot = encode_checkpoint(base, shape, key);
  const Bytes new_slot = encode_checkpoint(now, shape, key);
  Bytes sectors;
  for (uint32_t i = 0; i < checkpoint_table_sectors(shape); ++i) {
    const auto at = static_cast<ptrdiff_t>((1 + i) * 512);
    if (std::equal(old_slot.begin() + at, old_slot.begin() + at + 512, new_slot.begin() + at))
      continue;
    changed->push_back(i);
    sectors.insert(sectors.end(), new_slot.begin() + at, new_slot.begin() + at + 512);
  }
  const Bytes journal = encode_journal(*changed, sectors);
  now.journal_sectors = static_cast<uint32_t>(journal.size() / 512);
  std::vector<uint64_t> hashes;
  EXPECT_TRUE(decode_checkpoint(new_slot, shape, key, &hashes).has_value());
  Bytes slot = encode_checkpoint_record(now, shape, table_digest(hashes, key), key);
  slot.insert(slot.end(), old_slot.begin() + 512, old_slot.end());
  slot.insert(slot.end(), journal.begin(), journal.end());
  return slot;
}

// The base with the journal's sectors laid over it is the newer tables;
// 130 changed sectors take two chunks, so two index sectors.
TEST_F(LldFormatTest, JournalLaysItsSectorsOverTheBase) {
  LldShape shape = this->shape;
  shape.logical_blocks = 60000;  // a journal of 470 sectors
  ASSERT_EQ(checkpoint_journal_sectors(shape), 470u);
  const Checkpoint base = checkpoint_of(shape, 7);
  Checkpoint now = checkpoint_of(shape, 8);
  for (uint32_t b = 0; b < 130 * 32; b += 32) now.tables.map[b] = {9, 0x77, 900 + b};
  std::vector<uint32_t> changed;
  const Bytes slot = journaled_slot(base, now, shape, key, &changed);
  ASSERT_EQ(changed.size(), 130u);
  EXPECT_EQ(journal_append_sectors(130), 132u);
  auto d = decode_checkpoint(slot, shape, key);
  ASSERT_TRUE(d.has_value());
  now.journal_sectors = 132;
  EXPECT_EQ(*d, now);
  auto r = decode_checkpoint_record(slot, shape, key);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(checkpoint_sectors_after_record(*r, shape), checkpoint_table_sectors(shape) + 132);
  auto t = assemble_slot_tables(*r, std::span(slot).subspan(512), shape);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->journaled, changed);
  auto listed = journal_listing(std::span(slot).subspan((1 + checkpoint_table_sectors(shape)) * 512),
                                132, checkpoint_table_sectors(shape));
  ASSERT_TRUE(listed.has_value());
  EXPECT_EQ(*listed, changed);
  // Short of the journal the record names: refused.
  EXPECT_FALSE(decode_checkpoint(std::span(slot).first(slot.size() - 512), shape, key));
}

// Every bit of the journal is checked: an index sector by its form or the
// tables' digest, a journaled sector by the digest.
TEST_F(LldFormatTest, JournalEveryBitFlipRefused) {
  Checkpoint now = checkpoint_of(small, 8);
  now.tables.map[0] = {9, 0x77, 900};
  std::vector<uint32_t> changed;
  const Bytes good = journaled_slot(checkpoint_of(small, 7), now, small, key, &changed);
  ASSERT_EQ(changed.size(), 1u);
  ASSERT_TRUE(decode_checkpoint(good, small, key).has_value());
  const size_t journal_at = (1 + checkpoint_table_sectors(small)) * 512;
  ASSERT_EQ(good.size(), journal_at + 2 * 512);
  for (size_t bit = journal_at * 8; bit < good.size() * 8; ++bit) {
    Bytes b = good;
    b[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    EXPECT_FALSE(decode_checkpoint(b, small, key).has_value()) << "bit " << bit;
  }
}

// A record may name no more journal than the slot has; version 3 none.
TEST_F(LldFormatTest, JournalLongerThanTheSlotsRefused) {
  for (uint32_t version : {kLldFormatVersion, kLldDigestFormatVersion}) {
    LldShape sh = small;
    sh.format_version = version;
    Checkpoint c = checkpoint_of(sh, 3);
    Bytes b = encode_checkpoint(c, sh, key);
    b.resize((1 + checkpoint_table_sectors(sh) + 17) * 512);
    encode_fixed32(b.data() + 52, checkpoint_journal_sectors(sh) + 1);
    reseal_checkpoint(b, sh, key);
    EXPECT_FALSE(decode_checkpoint_record(b, sh, key).has_value()) << "version " << version;
  }
}

}  // namespace
}  // namespace vld
