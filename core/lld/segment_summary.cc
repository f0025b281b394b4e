#include "core/lld/segment_summary.h"

#include <algorithm>
#include <cassert>

#include "core/util/coding.h"

namespace vld {

namespace {

constexpr uint32_t kSummaryMagic = 0x5353444c;  // "LDSS"
constexpr uint32_t kKnownFlags = kSummaryClosesSegment | kSummaryContinues;

// The fields known before the entries are read, with the entry count: the
// summary itself must fit in the segment from first_sector, which bounds the
// count before it is trusted to say where the MAC is.
bool header_ok(const SegmentSummary& s, uint32_t entries, const LldShape& shape) {
  return s.seq != 0 && s.segment < shape.segment_count && s.next_segment < shape.segment_count &&
         entries >= 1 && s.first_sector < shape.segment_sectors &&
         summary_sectors(entries) <= shape.segment_sectors - s.first_sector;
}

bool entry_ok(const SummaryEntry& e, const LldShape& shape) {
  if (e.version == 0 || e.version >= kSummaryTrimBit) return false;
  if (e.trim_blocks == 0) return e.logical_block < shape.logical_blocks;
  return e.checksum == 0 &&
         uint64_t{e.logical_block} + e.trim_blocks <= uint64_t{shape.logical_blocks};
}

// The entries, and the whole write (summary and data blocks) fits in the segment.
bool entries_ok(const SegmentSummary& s, const LldShape& shape) {
  for (const SummaryEntry& e : s.blocks) {
    if (!entry_ok(e, shape)) return false;
  }
  const auto entries = static_cast<uint32_t>(s.blocks.size());
  return s.first_sector + write_sectors(entries, s.data_blocks(), shape) <= shape.segment_sectors;
}

void encode_entry(unsigned char* e, const SummaryEntry& entry) {
  const bool trim = entry.trim_blocks != 0;
  encode_fixed32(e, entry.logical_block);
  encode_fixed32(e + 4, trim ? entry.trim_blocks : entry.checksum);
  encode_fixed64(e + 8, trim ? entry.version | kSummaryTrimBit : entry.version);
}

// nullopt for a trim of no blocks, which the struct could not tell from a data entry.
std::optional<SummaryEntry> decode_entry(const unsigned char* e) {
  SummaryEntry entry;
  entry.logical_block = decode_fixed32(e);
  const uint32_t word = decode_fixed32(e + 4);
  const uint64_t version = decode_fixed64(e + 8);
  entry.version = version & ~kSummaryTrimBit;
  if ((version & kSummaryTrimBit) == 0) {
    entry.checksum = word;
  } else if (word != 0) {
    entry.trim_blocks = word;
  } else {
    return std::nullopt;
  }
  return entry;
}

}  // namespace

uint32_t summary_sectors(uint32_t entries) {
  const uint64_t bytes = kSummaryHeaderBytes + uint64_t{kSummaryEntryBytes} * entries + kMacBytes;
  return static_cast<uint32_t>((bytes + kLldSectorBytes - 1) / kLldSectorBytes);
}

uint64_t write_sectors(uint32_t entries, uint32_t data_blocks, const LldShape& shape) {
  assert(data_blocks <= entries);
  return summary_sectors(entries) + uint64_t{data_blocks} * shape.block_sectors;
}

uint32_t max_blocks_per_write(const LldShape& shape) {
  assert(shape.valid());
  uint32_t n = shape.segment_sectors / shape.block_sectors;
  while (n > 0 && write_sectors(n, n, shape) > shape.segment_sectors) --n;
  return n;
}

uint32_t SegmentSummary::data_blocks() const {
  return static_cast<uint32_t>(std::count_if(
      blocks.begin(), blocks.end(), [](const SummaryEntry& e) { return e.trim_blocks == 0; }));
}

uint32_t SegmentSummary::end_sector(const LldShape& shape) const {
  const auto entries = static_cast<uint32_t>(blocks.size());
  return first_sector + static_cast<uint32_t>(write_sectors(entries, data_blocks(), shape));
}

std::vector<unsigned char> encode_segment_summary(const SegmentSummary& s, const LldShape& shape,
                                                  const MacKey& key) {
  const auto count = static_cast<uint32_t>(s.blocks.size());
  assert(header_ok(s, count, shape) && entries_ok(s, shape));
  std::vector<unsigned char> b(size_t{summary_sectors(count)} * kLldSectorBytes);
  unsigned char* p = b.data();
  encode_fixed32(p, kSummaryMagic);
  encode_fixed32(p + 4, s.segment);
  encode_fixed64(p + 8, s.seq);
  encode_fixed32(p + 16, s.first_sector);
  encode_fixed32(p + 20, count);
  encode_fixed32(p + 24, s.next_segment);
  encode_fixed32(p + 28, (s.closes_segment ? kSummaryClosesSegment : 0) |
                             (s.continues ? kSummaryContinues : 0));
  for (uint32_t i = 0; i < count; ++i)
    encode_entry(p + kSummaryHeaderBytes + kSummaryEntryBytes * i, s.blocks[i]);
  mac_seal(p, b.size() - kMacBytes, key);
  return b;
}

std::optional<SegmentSummary> decode_segment_summary(std::span<const unsigned char> bytes,
                                                     const LldShape& shape, const MacKey& key) {
  if (bytes.size() < kLldSectorBytes) return std::nullopt;
  const unsigned char* p = bytes.data();
  if (decode_fixed32(p) != kSummaryMagic) return std::nullopt;
  SegmentSummary s;
  s.segment = decode_fixed32(p + 4);
  s.seq = decode_fixed64(p + 8);
  s.first_sector = decode_fixed32(p + 16);
  const uint32_t count = decode_fixed32(p + 20);
  s.next_segment = decode_fixed32(p + 24);
  const uint32_t flags = decode_fixed32(p + 28);
  s.closes_segment = flags & kSummaryClosesSegment;
  s.continues = flags & kSummaryContinues;
  // Bound the count before it says where the MAC is.
  if (!header_ok(s, count, shape) || (flags & ~kKnownFlags) != 0) return std::nullopt;
  const size_t total = size_t{summary_sectors(count)} * kLldSectorBytes;
  if (bytes.size() < total || !mac_valid(p, total - kMacBytes, key)) return std::nullopt;
  s.blocks.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const auto e = decode_entry(p + kSummaryHeaderBytes + kSummaryEntryBytes * i);
    if (!e) return std::nullopt;
    s.blocks[i] = *e;
  }
  if (!entries_ok(s, shape)) return std::nullopt;
  return s;
}

}  // namespace vld
