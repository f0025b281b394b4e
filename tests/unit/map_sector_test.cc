// Map sector and log record encodings (core/vld/map_sector.h): round trips, the
// documented byte layout, the keyed MAC (any flipped bit, any other key),
// field validation, and the seeded data checksum.
#include <gtest/gtest.h>
#include <sodium.h>
#include <xxhash.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/vld/map_sector.h"
#include "core/util/checksum.h"

namespace vld {
namespace {

uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
uint64_t le64(const unsigned char* p) { return le32(p) | uint64_t{le32(p + 4)} << 32; }
void put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put64(unsigned char* p, uint64_t v) {
  put32(p, static_cast<uint32_t>(v));
  put32(p + 4, static_cast<uint32_t>(v >> 32));
}

Secret key_of(uint8_t seed) {
  Secret k;
  for (size_t i = 0; i < k.size(); ++i) k[i] = static_cast<unsigned char>(seed * 31 + i * 7 + 1);
  return k;
}

// Recomputes the MAC as map_sector.h documents it: keyed BLAKE2b-128 of
// bytes [0, 496), stored at 496.
void reseal(SectorBytes& b, const Secret& key) {
  ASSERT_EQ(crypto_generichash(b.data() + 496, 16, b.data(), 496, key.data(), key.size()), 0);
}

class MapSectorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(sodium_init(), 0); }
  const Secret key = key_of(1);
};

MapSector full_sector() {
  std::mt19937_64 rng(42);
  MapSector m;
  m.piece = 123456;
  m.seq = 1'000'000'007;
  m.prev_seq = 999'999'000;
  m.group_seq = 1'000'000'005;
  m.group_count = 4;  // seqs ...005 .. ...008
  m.changed = 0x8000'0000'0000'0005ULL;
  for (auto& e : m.entries) e = MapEntry{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
  m.entries[7] = MapEntry{};  // unmapped
  m.pointer_count = kMaxPointers;
  for (uint32_t i = 0; i < kMaxPointers; ++i)
    m.pointers[i] = LogPointer{static_cast<uint32_t>(rng()), m.seq - 1 - i * 1000};
  return m;
}

void expect_same(const MapSector& a, const MapSector& b) {
  EXPECT_EQ(a.piece, b.piece);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.prev_seq, b.prev_seq);
  EXPECT_EQ(a.group_seq, b.group_seq);
  EXPECT_EQ(a.group_count, b.group_count);
  EXPECT_EQ(a.changed, b.changed);
  EXPECT_EQ(a.entries, b.entries);
  ASSERT_EQ(a.pointer_count, b.pointer_count);
  for (uint32_t i = 0; i < a.pointer_count; ++i) EXPECT_EQ(a.pointers[i], b.pointers[i]) << i;
}

TEST_F(MapSectorTest, RoundTripAndDocumentedLayout) {
  const MapSector m = full_sector();
  SectorBytes b = encode_map_sector(m, key);
  auto d = decode_map_sector(b.data(), key);
  ASSERT_TRUE(d.has_value());
  expect_same(*d, m);

  const unsigned char* p = b.data();
  EXPECT_EQ(std::memcmp(p, "VLMS", 4), 0);
  EXPECT_EQ(le32(p + 4), m.piece);
  EXPECT_EQ(le64(p + 8), m.seq);
  EXPECT_EQ(le64(p + 16), m.prev_seq);
  EXPECT_EQ(le64(p + 24), m.group_seq);
  EXPECT_EQ(le32(p + 32), m.group_count);
  EXPECT_EQ(p[36] | p[37] << 8, kMaxPointers);
  EXPECT_EQ(p[38], 0);
  EXPECT_EQ(p[39], 0);
  EXPECT_EQ(le64(p + 40), m.changed);
  for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
    EXPECT_EQ(le32(p + 48 + 8 * i), m.entries[i].psn_plus_one);
    EXPECT_EQ(le32(p + 52 + 8 * i), m.entries[i].checksum);
  }
  for (uint32_t i = 0; i < kMaxPointers; ++i) {
    EXPECT_EQ(le32(p + 304 + 16 * i), m.pointers[i].psn);
    EXPECT_EQ(le64(p + 312 + 16 * i), m.pointers[i].seq);
  }
  unsigned char mac[16];
  ASSERT_EQ(crypto_generichash(mac, 16, p, 496, key.data(), key.size()), 0);
  EXPECT_EQ(std::memcmp(mac, p + 496, 16), 0);

  // The pointers end where the MAC begins.
  EXPECT_LE(304 + 16 * kMaxPointers, 496u);
  // Fewer pointers: the unused slots stay zero and decode to nothing.
  MapSector few = m;
  few.pointer_count = 3;
  SectorBytes fb = encode_map_sector(few, key);
  for (size_t i = 304 + 16 * 3; i < 496; ++i) EXPECT_EQ(fb[i], 0) << i;
  auto fd = decode_map_sector(fb.data(), key);
  ASSERT_TRUE(fd.has_value());
  EXPECT_EQ(fd->pointer_count, 3);
  EXPECT_EQ(fd->pointers[3], LogPointer{});
  // Encoding is a function of the fields and the key.
  EXPECT_EQ(encode_map_sector(m, key), b);
}

TEST_F(MapSectorTest, AnyFlippedBitFails) {
  const SectorBytes b = encode_map_sector(full_sector(), key);
  for (size_t bit = 0; bit < b.size() * 8; ++bit) {
    SectorBytes c = b;
    c[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    EXPECT_FALSE(decode_map_sector(c.data(), key).has_value()) << "bit " << bit;
  }
}

TEST_F(MapSectorTest, WrongKeyFails) {
  const SectorBytes b = encode_map_sector(full_sector(), key);
  EXPECT_FALSE(decode_map_sector(b.data(), key_of(2)).has_value());
  for (size_t i = 0; i < key.size(); i += 5) {
    Secret k = key;
    k[i] ^= 0x80;
    EXPECT_FALSE(decode_map_sector(b.data(), k).has_value()) << i;
  }
  // Guest data that copies a sector sealed under another image's key.
  const SectorBytes other = encode_map_sector(full_sector(), key_of(3));
  EXPECT_FALSE(decode_map_sector(other.data(), key).has_value());
  // All zeros (a never-written sector) is not a map sector either.
  SectorBytes zeros{};
  EXPECT_FALSE(decode_map_sector(zeros.data(), key).has_value());
}

TEST_F(MapSectorTest, ResealedBytesStillDecode) {
  // The test's own sealing agrees with the code's: the rejections below are
  // about the fields, not the MAC.
  SectorBytes b = encode_map_sector(full_sector(), key);
  reseal(b, key);
  EXPECT_TRUE(decode_map_sector(b.data(), key).has_value());
}

TEST_F(MapSectorTest, RejectsInconsistentFieldsEvenWithAValidMac) {
  auto rejects = [&](MapSector m, const char* what) {
    SectorBytes b = encode_map_sector(m, key);
    EXPECT_FALSE(decode_map_sector(b.data(), key).has_value()) << what;
  };
  auto accepts = [&](MapSector m, const char* what) {
    SectorBytes b = encode_map_sector(m, key);
    EXPECT_TRUE(decode_map_sector(b.data(), key).has_value()) << what;
  };
  MapSector base;
  base.piece = 3;
  base.seq = 10;
  base.prev_seq = 4;
  base.group_seq = 8;
  base.group_count = 3;  // 8, 9, 10
  base.pointer_count = 2;
  base.pointers[0] = LogPointer{1000, 9};
  base.pointers[1] = LogPointer{2000, 2};
  accepts(base, "base");

  MapSector m = base;
  m.seq = 0;
  m.prev_seq = 0;
  m.group_seq = 0;
  m.pointer_count = 0;
  rejects(m, "seq 0");
  m = base;
  m.prev_seq = 10;
  rejects(m, "prev_seq == seq");
  m.prev_seq = 11;
  rejects(m, "prev_seq > seq");
  m.prev_seq = 0;
  accepts(m, "first version of a piece");

  m = base;
  m.group_count = 0;
  rejects(m, "group_count 0");
  m = base;
  m.group_seq = 11;
  rejects(m, "group_seq > seq");
  m = base;
  m.group_count = 2;  // 8, 9: does not include 10
  rejects(m, "seq outside its group");
  m.group_seq = 10;
  m.group_count = 1;
  accepts(m, "a group of one");

  m = base;
  m.pointers[1].seq = 10;
  rejects(m, "pointer to itself (seq == own)");
  m.pointers[1].seq = 11;
  rejects(m, "pointer forward in time");
  m.pointers[1].seq = 9;
  accepts(m, "pointer to the previous seq");

  // A pointer_count over kMaxPointers cannot be encoded: patch and reseal.
  SectorBytes b = encode_map_sector(full_sector(), key);
  b[36] = kMaxPointers + 1;
  reseal(b, key);
  EXPECT_FALSE(decode_map_sector(b.data(), key).has_value()) << "17 pointers";
  // The wrong magic, resealed.
  b = encode_map_sector(base, key);
  b[0] ^= 1;
  reseal(b, key);
  EXPECT_FALSE(decode_map_sector(b.data(), key).has_value()) << "magic";
}

// --------------------------------------------------------- log record

LogRecord full_record() {
  LogRecord r;
  r.clean = true;
  r.generation = 77;
  r.durable_seq = 5000;
  r.next_seq = 5001;
  r.has_root = true;
  r.root = LogPointer{4242, 4999};
  r.window_first = 12;
  r.window_cylinders = 32;
  r.head_cylinder = 17;
  r.head = 9;
  return r;
}

void expect_same(const LogRecord& a, const LogRecord& b) {
  EXPECT_EQ(a.clean, b.clean);
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.durable_seq, b.durable_seq);
  EXPECT_EQ(a.next_seq, b.next_seq);
  EXPECT_EQ(a.has_root, b.has_root);
  EXPECT_EQ(a.root, b.root);
  EXPECT_EQ(a.window_first, b.window_first);
  EXPECT_EQ(a.window_cylinders, b.window_cylinders);
  EXPECT_EQ(a.head_cylinder, b.head_cylinder);
  EXPECT_EQ(a.head, b.head);
}

TEST_F(MapSectorTest, LogRecordRoundTripAndLayout) {
  for (bool clean : {false, true}) {
    LogRecord r = full_record();
    r.clean = clean;
    SectorBytes b = encode_log_record(r, key);
    auto d = decode_log_record(b.data(), key);
    ASSERT_TRUE(d.has_value());
    expect_same(*d, r);
    const unsigned char* p = b.data();
    EXPECT_EQ(std::memcmp(p, "VLLR", 4), 0);
    EXPECT_EQ(le32(p + 4), clean ? 1u : 0u);
    EXPECT_EQ(le64(p + 8), r.generation);
    EXPECT_EQ(le64(p + 16), r.durable_seq);
    EXPECT_EQ(le64(p + 24), r.next_seq);
    EXPECT_EQ(le32(p + 32), r.root.psn);
    EXPECT_EQ(le32(p + 36), 1u);
    EXPECT_EQ(le64(p + 40), r.root.seq);
    EXPECT_EQ(le32(p + 48), r.window_first);
    EXPECT_EQ(le32(p + 52), r.window_cylinders);
    EXPECT_EQ(le32(p + 56), r.head_cylinder);
    EXPECT_EQ(le32(p + 60), r.head);
    for (size_t i = 68; i < 496; ++i) EXPECT_EQ(p[i], 0) << i;
  }
  // The empty log of a new image.
  LogRecord empty;
  empty.clean = true;
  empty.generation = 1;
  auto d = decode_log_record(encode_log_record(empty, key).data(), key);
  ASSERT_TRUE(d.has_value());
  expect_same(*d, empty);
  EXPECT_FALSE(d->has_root);
}

TEST_F(MapSectorTest, LogRecordMacAndKeyAndFields) {
  const SectorBytes b = encode_log_record(full_record(), key);
  for (size_t bit = 0; bit < b.size() * 8; ++bit) {
    SectorBytes c = b;
    c[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    EXPECT_FALSE(decode_log_record(c.data(), key).has_value()) << "bit " << bit;
  }
  EXPECT_FALSE(decode_log_record(b.data(), key_of(9)).has_value());
  // next_seq must exceed durable_seq.
  LogRecord r = full_record();
  r.next_seq = r.durable_seq;
  EXPECT_FALSE(decode_log_record(encode_log_record(r, key).data(), key).has_value());
  // A map sector is not a log record and the other way round.
  const SectorBytes ms = encode_map_sector(full_sector(), key);
  EXPECT_FALSE(decode_log_record(ms.data(), key).has_value());
  EXPECT_FALSE(decode_map_sector(b.data(), key).has_value());
  // A patched and resealed "clean" word other than 1 is not clean.
  SectorBytes c = b;
  put32(c.data() + 4, 2);
  reseal(c, key);
  auto d = decode_log_record(c.data(), key);
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->clean);
  put64(c.data() + 24, 0);  // next_seq 0 < durable_seq
  reseal(c, key);
  EXPECT_FALSE(decode_log_record(c.data(), key).has_value());
}

// ------------------------------------------------------ data checksum

TEST(DataChecksum, SeededWithTheLogicalBlock) {
  std::vector<unsigned char> block(4096);
  std::mt19937_64 rng(7);
  for (auto& c : block) c = static_cast<unsigned char>(rng());
  std::vector<uint32_t> seen;
  for (uint64_t lb = 0; lb < 64; ++lb) {
    const uint32_t c = data_checksum(block.data(), block.size(), lb);
    // As documented: the low 32 bits of XXH3-64 seeded with the block number.
    EXPECT_EQ(c, static_cast<uint32_t>(XXH3_64bits_withSeed(block.data(), block.size(), lb)));
    EXPECT_EQ(c, data_checksum(block.data(), block.size(), lb));  // deterministic
    for (uint32_t s : seen) EXPECT_NE(c, s) << "block " << lb;
    seen.push_back(c);
  }
  // Large block numbers too (the seed is 64-bit).
  EXPECT_NE(data_checksum(block.data(), block.size(), uint64_t{1} << 40),
            data_checksum(block.data(), block.size(), 0));
  // A zero block under two numbers differs, and one changed byte changes it.
  std::vector<unsigned char> zeros(4096, 0);
  EXPECT_NE(data_checksum(zeros.data(), zeros.size(), 5), data_checksum(zeros.data(), zeros.size(), 6));
  const uint32_t before = data_checksum(block.data(), block.size(), 3);
  block[4095] ^= 1;
  EXPECT_NE(data_checksum(block.data(), block.size(), 3), before);
}

}  // namespace
}  // namespace vld
