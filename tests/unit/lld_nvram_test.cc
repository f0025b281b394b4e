// mode=lld's NVRAM region (core/lld/nvram_log.h): round trips, trim records
// mixed with data records, requests replayed whole or not at all, torn and
// flipped records refused, stale records of an earlier epoch or seq not
// replayed, header slot choice, and golden bytes of both record layouts so
// the format cannot change by accident.
#include <gtest/gtest.h>
#include <sodium.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/lld/nvram_log.h"
#include "core/util/checksum.h"
#include "core/util/coding.h"
#include "tests/unit/lld_test_util.h"

namespace vld {
namespace {

using Bytes = std::vector<unsigned char>;

using test::hex;
using test::key_of;

class LldNvramTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(sodium_init(), 0); }

  Bytes block(uint32_t tag) const {
    Bytes b(shape.block_sectors * 512u);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<unsigned char>(tag * 13 + i * 7);
    return b;
  }
  // A region holding capacity records after the two header slots, with h in its slot.
  Bytes region_with(const NvramHeader& h, uint64_t capacity) const {
    Bytes r(kNvramRecordsOffsetBytes + capacity * nvram_record_bytes(shape));
    put_header(r, h);
    return r;
  }
  void put_header(Bytes& r, const NvramHeader& h) const {
    Bytes s = encode_nvram_header(h, key);
    std::copy(s.begin(), s.end(), r.begin() + nvram_header_offset(h));
  }
  // A record to append: a block, or with trim > 0 a trim of [logical, logical + trim).
  struct Spec {
    uint32_t logical = 0;
    uint64_t version = 0;
    uint32_t trim = 0;
  };
  // Appends records as one request at seq; returns the records replay should give.
  std::vector<NvramRecord> append(Bytes& r, const NvramHeader& h, uint64_t seq,
                                  std::vector<Spec> blocks) const {
    std::vector<Bytes> data;
    std::vector<NvramBlock> in;
    std::vector<NvramRecord> out;
    for (const Spec& b : blocks)
      data.push_back(b.trim ? Bytes{} : block(b.logical * 100 + static_cast<uint32_t>(b.version)));
    for (size_t i = 0; i < blocks.size(); ++i) {
      in.push_back({blocks[i].logical, blocks[i].version, data[i], blocks[i].trim, {}});
      out.push_back({seq + i, blocks[i].logical, blocks[i].version, data[i], blocks[i].trim});
    }
    Bytes w = encode_nvram_request(h, seq, in, seq - 1, shape, key);
    std::copy(w.begin(), w.end(), r.begin() + nvram_record_offset(h, seq, shape));
    return out;
  }

  const MacKey key = key_of(1);
  LldShape shape{.segment_sectors = 1024, .block_sectors = 8, .segment_count = 8,
                 .logical_blocks = 1000, .platter_sectors = 1 << 16};
};

TEST_F(LldNvramTest, Sizes) {
  EXPECT_EQ(nvram_record_bytes(shape), 4608u);  // a header sector, then the block
  // The paper's 6.1 MB buffer (6.1 x 2^20, rounded down to a sector).
  EXPECT_EQ(nvram_capacity_records(6396313 / 512 * 512, shape), 1387u);
  LldShape packed = shape;
  packed.format_version = kLldPackedFormatVersion;
  EXPECT_EQ(nvram_record_bytes(packed), 4160u);
  EXPECT_EQ(nvram_capacity_records(6396313 / 512 * 512, packed), 1537u);
  EXPECT_EQ(nvram_capacity_records(1023, shape), 0u);
  EXPECT_EQ(nvram_header_offset({2, 1}), 0u);
  EXPECT_EQ(nvram_header_offset({3, 1}), 512u);
  EXPECT_EQ(nvram_record_offset({3, 10}, 12, shape), 1024u + 2 * 4608u);
}

TEST_F(LldNvramTest, RoundTrip) {
  const NvramHeader h{1, 1};
  Bytes r = region_with(h, 8);
  auto want = append(r, h, 1, {{7, 1}, {3, 1}, {999, 4}});
  auto more = append(r, h, 4, {{7, 2}});
  want.insert(want.end(), more.begin(), more.end());
  auto got = replay_nvram(r, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->header, h);
  EXPECT_EQ(got->records, want);
  EXPECT_EQ(got->next_seq, 5u);
}

TEST_F(LldNvramTest, FreshOrForeignRegion) {
  EXPECT_FALSE(replay_nvram(Bytes(64 * 1024), key, shape).has_value());  // no header
  Bytes r = region_with({1, 1}, 4);
  append(r, {1, 1}, 1, {{1, 1}});
  EXPECT_FALSE(replay_nvram(r, key_of(2), shape).has_value());  // another image's key
  auto empty = replay_nvram(region_with({5, 40}, 4), key, shape);
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->records.empty());
  EXPECT_EQ(empty->next_seq, 40u);
}

TEST_F(LldNvramTest, TornRequestIsDroppedWhole) {
  const NvramHeader h{1, 1};
  const uint64_t stride = nvram_record_bytes(shape);
  for (uint64_t torn : {0u, 1u, 2u}) {  // which record of the second request the crash lost
    Bytes r = region_with(h, 8);
    auto want = append(r, h, 1, {{1, 1}, {2, 1}});
    append(r, h, 3, {{3, 1}, {4, 1}, {5, 1}});
    // The block's last sector never reached the platter (a hole reads as zeros).
    const uint64_t end = nvram_record_offset(h, 3 + torn, shape) + stride;
    std::fill(r.begin() + end - 512, r.begin() + end, 0);
    auto got = replay_nvram(r, key, shape);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->records, want) << torn;
    EXPECT_EQ(got->dropped, 3u) << torn;
    EXPECT_EQ(got->next_seq, 6u);  // past every record there: seqs are never reused
  }
}

// Every single-bit flip: in the only header slot, the header is rebuilt
// from the records; in the first request, which the second vouches for, a
// damaged record header is named (`damage`) and a damaged block is kept
// aside (`damaged`); in the second, the newest, which nothing vouches for,
// the request is dropped as a torn append would be.
TEST_F(LldNvramTest, EverySingleBitFlipIsRecoveredOrNamed) {
  shape.block_sectors = 1;  // small records, to flip every bit
  const NvramHeader h{1, 1};
  Bytes r = region_with(h, 3);
  const auto first = append(r, h, 1, {{1, 1}});
  auto both = first;
  for (auto& rec : append(r, h, 2, {{2, 1}, {3, 1}})) both.push_back(rec);
  const size_t first_at = nvram_record_offset(h, 1, shape);
  const size_t second_at = nvram_record_offset(h, 2, shape);
  for (size_t bit = 0; bit < r.size() * 8; ++bit) {
    const size_t byte = bit / 8;
    if (byte < kNvramHeaderSlotBytes) continue;  // slot 0: unused by epoch 1
    r[byte] ^= static_cast<unsigned char>(1u << (bit % 8));
    auto got = replay_nvram(r, key, shape);
    ASSERT_TRUE(got.has_value()) << bit;
    EXPECT_EQ(got->header, h) << bit;
    if (byte < first_at) {  // the only header slot: rebuilt from the records
      EXPECT_TRUE(got->header_rebuilt) << bit;
      EXPECT_EQ(got->records, both) << bit;
    } else if (byte < first_at + nvram_record_header_bytes(shape)) {
      EXPECT_NE(got->damage.find("record seq 1 "), std::string::npos) << bit << got->damage;
    } else if (byte < second_at) {
      EXPECT_EQ(got->damage, "") << bit;
      EXPECT_EQ(got->damaged, (std::vector<NvramDamagedRecord>{{1, 1, 1}})) << bit;
      EXPECT_EQ(got->records, std::vector<NvramRecord>(both.begin() + 1, both.end())) << bit;
    } else {
      EXPECT_EQ(got->damage, "") << bit;
      EXPECT_TRUE(got->damaged.empty()) << bit;
      EXPECT_EQ(got->records, first) << bit;
      EXPECT_LE(got->dropped, 2u) << bit;
    }
    r[byte] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
}

TEST_F(LldNvramTest, StaleRecordsAreNotReplayed) {
  NvramHeader h{1, 1};
  Bytes r = region_with(h, 8);
  append(r, h, 1, {{1, 1}, {2, 1}});
  append(r, h, 3, {{3, 1}, {4, 1}});
  // Drained; reset: epoch 2 starts at seq 5, over epoch 1's records.
  h = {2, 5};
  put_header(r, h);
  auto want = append(r, h, 5, {{1, 2}});
  auto got = replay_nvram(r, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->header, h);
  EXPECT_EQ(got->records, want);  // record 1 (epoch 1, seq 2) stops the walk
  EXPECT_EQ(got->next_seq, 6u);
  // A record of this epoch but a lower seq at record 0 is refused too.
  append(r, {2, 1}, 1, {{9, 9}});
  got = replay_nvram(r, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->records.empty());
}

TEST_F(LldNvramTest, OutOfSequenceStops) {
  const NvramHeader h{1, 1};
  Bytes r = region_with(h, 8);
  auto want = append(r, h, 1, {{1, 1}});
  // A record with seq 4 where seq 2 belongs (written as if record 0 held seq 3).
  append(r, {1, 3}, 4, {{2, 1}});
  auto got = replay_nvram(r, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->records, want);
}

TEST_F(LldNvramTest, HeaderSlotChoice) {
  Bytes r = region_with({3, 10}, 2);
  put_header(r, {4, 20});
  EXPECT_EQ(replay_nvram(r, key, shape)->header, (NvramHeader{4, 20}));
  r[0] ^= 1;  // slot 0 (epoch 4) torn: back to epoch 3
  EXPECT_EQ(replay_nvram(r, key, shape)->header, (NvramHeader{3, 10}));
  // A valid header in the wrong slot for its epoch's parity is refused.
  Bytes odd = encode_nvram_header({5, 30}, key);
  std::copy(odd.begin(), odd.end(), r.begin());
  EXPECT_EQ(replay_nvram(r, key, shape)->header, (NvramHeader{3, 10}));
}

TEST_F(LldNvramTest, TrimRecordsMixWithDataRecords) {
  const NvramHeader h{1, 1};
  Bytes r = region_with(h, 8);
  // One request: write 7, trim [3, 10), write 999; then a trim-only request.
  auto want = append(r, h, 1, {{7, 1}, {3, 2, 7}, {999, 4}});
  auto more = append(r, h, 4, {{0, 3, 1000}});
  want.insert(want.end(), more.begin(), more.end());
  EXPECT_TRUE(want[1].data.empty());
  EXPECT_EQ(want[3].trim_blocks, 1000u);
  auto got = replay_nvram(r, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->records, want);
  EXPECT_EQ(got->next_seq, 5u);
  // A torn mixed request, the newest, is dropped whole, trim included.
  Bytes torn = r;
  auto newest = append(torn, h, 5, {{8, 5}, {20, 5, 3}, {21, 5}});
  const uint64_t third = nvram_record_offset(h, 7, shape);
  const uint64_t header = nvram_record_header_bytes(shape);
  std::fill(torn.begin() + third + header, torn.begin() + third + header + 512, 0);
  got = replay_nvram(torn, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->records, want);
  EXPECT_EQ(got->dropped, 3u);
  // The same block damaged in a request a later one vouches for: kept aside.
  Bytes damaged = r;
  const uint64_t first_block = nvram_record_offset(h, 3, shape) + header;
  std::fill(damaged.begin() + first_block, damaged.begin() + first_block + 512, 0);
  got = replay_nvram(damaged, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->damaged, (std::vector<NvramDamagedRecord>{{3, 999, 4}}));
  want.erase(want.begin() + 2);
  EXPECT_EQ(got->records, want);
}

TEST_F(LldNvramTest, TrimRecordDataAreaIsZeroAndUnchecked) {
  const NvramHeader h{1, 1};
  Bytes r = region_with(h, 4);
  auto want = append(r, h, 1, {{5, 1, 2}, {6, 1}});
  const uint64_t first = nvram_record_offset(h, 1, shape);
  const uint64_t stride = nvram_record_bytes(shape);
  const uint64_t header = nvram_record_header_bytes(shape);
  for (uint64_t i = header; i < stride; ++i) ASSERT_EQ(r[first + i], 0) << i;
  // Anything in a trim record's data area (stale bytes, a torn tail) is ignored.
  std::fill(r.begin() + first + header, r.begin() + first + stride, 0xa5);
  auto got = replay_nvram(r, key, shape);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->records, want);
}

TEST_F(LldNvramTest, TrimRecordLimitsRefused) {
  const NvramHeader h{1, 1};
  // Each edit of the trim record at seq 2 (resealed) makes it invalid; the
  // first request survives, the second does not.
  using Edit = void (*)(unsigned char*);
  const Edit edits[] = {
      [](unsigned char* p) { encode_fixed32(p + 44, 0); },           // trims no block
      [](unsigned char* p) { encode_fixed32(p + 4, 991); },          // [991, 1001) past 1000
      [](unsigned char* p) { encode_fixed32(p + 44, 0xffffffff); },  // far past it
      [](unsigned char* p) { encode_fixed64(p + 24, 0); },           // version 0
  };
  for (size_t i = 0; i <= std::size(edits); ++i) {
    Bytes r = region_with(h, 4);
    auto want = append(r, h, 1, {{1, 1}});
    auto second = append(r, h, 2, {{980, 1, 10}});
    unsigned char* p = r.data() + nvram_record_offset(h, 2, shape);
    if (i < std::size(edits)) {
      edits[i](p);
    } else {
      encode_fixed32(p + 4, 990);  // [990, 1000): ends at the export's end, accepted
      second[0].logical_block = 990;
      want.insert(want.end(), second.begin(), second.end());
    }
    mac_seal(p, nvram_record_header_bytes(shape) - kMacBytes, key);
    auto got = replay_nvram(r, key, shape);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->records, want) << "edit " << i;
  }
}

// format_version 2: packed records, 64-byte headers (images made before
// version 3 keep being written so).
TEST_F(LldNvramTest, GoldenBytesPacked) {
  shape.format_version = kLldPackedFormatVersion;
  const NvramHeader h{0x0102, 0x0304};
  Bytes slot = encode_nvram_header(h, key);
  EXPECT_EQ(hex(slot.data(), 24),
            "4c444e48" "00000000" "0201000000000000" "0403000000000000");
  EXPECT_EQ(hex(slot.data() + 496, 16), "d8f9cc2535fe7e8c28b01192f87b442a");
  Bytes data = block(1);
  const NvramBlock b{0x11, 0x22, data, 0, {}};
  Bytes rec = encode_nvram_request(h, 0x0305, std::span(&b, 1), 0x0304, shape, key);
  ASSERT_EQ(rec.size(), 4160u);
  EXPECT_EQ(hex(rec.data(), 48),
            "4c444e56" "11000000" "0201000000000000" "0503000000000000" "2200000000000000"
            "0503000000000000" "01000000" "53450875");
  EXPECT_EQ(hex(rec.data() + 48, 16), "7df3e5d22c03573fa982e3c30979055d");
  const NvramBlock t{0x11, 0x23, {}, 0x40, {}};
  Bytes trim = encode_nvram_request(h, 0x0306, std::span(&t, 1), 0x0305, shape, key);
  ASSERT_EQ(trim.size(), 4160u);
  EXPECT_EQ(hex(trim.data(), 48),
            "4c444e54" "11000000" "0201000000000000" "0603000000000000" "2300000000000000"
            "0603000000000000" "01000000" "40000000");
  EXPECT_EQ(hex(trim.data() + 48, 16), "568c7c895b74379874b34c8285d0b3b7");
  for (size_t i = 64; i < trim.size(); ++i) ASSERT_EQ(trim[i], 0) << i;
}

// format_version 3: a header sector per record, with the durable seq.
TEST_F(LldNvramTest, GoldenBytes) {
  const NvramHeader h{0x0102, 0x0304};
  Bytes data = block(1);
  const NvramBlock b{0x11, 0x22, data, 0, {}};
  Bytes rec = encode_nvram_request(h, 0x0305, std::span(&b, 1), 0x0303, shape, key);
  ASSERT_EQ(rec.size(), 4608u);
  EXPECT_EQ(hex(rec.data(), 56),
            "4c444e56" "11000000" "0201000000000000" "0503000000000000" "2200000000000000"
            "0503000000000000" "01000000" "53450875" "0303000000000000");
  for (size_t i = 56; i < 496; ++i) ASSERT_EQ(rec[i], 0) << i;
  EXPECT_EQ(hex(rec.data() + 496, 16), "54264e955c5966338d83e990412ecd8f");
  EXPECT_TRUE(std::equal(data.begin(), data.end(), rec.begin() + 512));
  // The caller's checksum (a LogEntry's) makes the same record.
  const NvramBlock given{0x11, 0x22, data, 0, data_checksum(data.data(), data.size(), 0x11)};
  EXPECT_EQ(encode_nvram_request(h, 0x0305, std::span(&given, 1), 0x0303, shape, key), rec);
  const NvramBlock t{0x11, 0x23, {}, 0x40, {}};
  Bytes trim = encode_nvram_request(h, 0x0306, std::span(&t, 1), 0x0305, shape, key);
  ASSERT_EQ(trim.size(), 4608u);
  EXPECT_EQ(hex(trim.data(), 56),
            "4c444e54" "11000000" "0201000000000000" "0603000000000000" "2300000000000000"
            "0603000000000000" "01000000" "40000000" "0503000000000000");
  EXPECT_EQ(hex(trim.data() + 496, 16), "945c386ccca0b55abb325cf5e779a0fe");
  for (size_t i = 512; i < trim.size(); ++i) ASSERT_EQ(trim[i], 0) << i;
}

}  // namespace
}  // namespace vld
