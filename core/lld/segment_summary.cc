#include "core/lld/segment_summary.h"

#include <algorithm>
#include <cassert>

#include "core/util/coding.h"

namespace vld {

namespace {

constexpr uint32_t kSummaryMagic = 0x5353444c;  // "LDSS"

uint64_t write_sectors(uint32_t block_count, const LldShape& shape) {
  return summary_sectors(block_count) + uint64_t{block_count} * shape.block_sectors;
}

bool header_ok(const SegmentSummary& s, uint32_t block_count, const LldShape& shape) {
  return s.seq != 0 && s.segment < shape.segment_count && s.next_segment < shape.segment_count &&
         block_count >= 1 && block_count <= max_blocks_per_write(shape) &&
         s.first_sector + write_sectors(block_count, shape) <= shape.segment_sectors;
}

bool entries_ok(const std::vector<SummaryEntry>& blocks, const LldShape& shape) {
  std::vector<uint32_t> seen;
  seen.reserve(blocks.size());
  for (const SummaryEntry& e : blocks) {
    if (e.logical_block >= shape.logical_blocks || e.version == 0) return false;
    seen.push_back(e.logical_block);
  }
  std::sort(seen.begin(), seen.end());
  return std::adjacent_find(seen.begin(), seen.end()) == seen.end();
}

}  // namespace

uint32_t summary_sectors(uint32_t block_count) {
  const uint64_t bytes = kSummaryHeaderBytes + uint64_t{kSummaryEntryBytes} * block_count + kMacBytes;
  return static_cast<uint32_t>((bytes + kLldSectorBytes - 1) / kLldSectorBytes);
}

uint32_t max_blocks_per_write(const LldShape& shape) {
  assert(shape.valid());
  uint32_t n = shape.segment_sectors / shape.block_sectors;
  while (n > 0 && write_sectors(n, shape) > shape.segment_sectors) --n;
  return n;
}

uint32_t SegmentSummary::end_sector(const LldShape& shape) const {
  return first_sector + static_cast<uint32_t>(write_sectors(static_cast<uint32_t>(blocks.size()), shape));
}

std::vector<unsigned char> encode_segment_summary(const SegmentSummary& s, const LldShape& shape,
                                                  const MacKey& key) {
  const auto count = static_cast<uint32_t>(s.blocks.size());
  assert(header_ok(s, count, shape) && entries_ok(s.blocks, shape));
  std::vector<unsigned char> b(size_t{summary_sectors(count)} * kLldSectorBytes);
  unsigned char* p = b.data();
  encode_fixed32(p, kSummaryMagic);
  encode_fixed32(p + 4, s.segment);
  encode_fixed64(p + 8, s.seq);
  encode_fixed32(p + 16, s.first_sector);
  encode_fixed32(p + 20, count);
  encode_fixed32(p + 24, s.next_segment);
  encode_fixed32(p + 28, s.closes_segment ? kSummaryClosesSegment : 0);
  for (uint32_t i = 0; i < count; ++i) {
    unsigned char* e = p + kSummaryHeaderBytes + kSummaryEntryBytes * i;
    encode_fixed32(e, s.blocks[i].logical_block);
    encode_fixed32(e + 4, s.blocks[i].checksum);
    encode_fixed64(e + 8, s.blocks[i].version);
  }
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
  // Bound the count before it says where the MAC is.
  if (!header_ok(s, count, shape) || (flags & ~kSummaryClosesSegment) != 0) return std::nullopt;
  const size_t total = size_t{summary_sectors(count)} * kLldSectorBytes;
  if (bytes.size() < total || !mac_valid(p, total - kMacBytes, key)) return std::nullopt;
  s.blocks.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const unsigned char* e = p + kSummaryHeaderBytes + kSummaryEntryBytes * i;
    s.blocks[i] = SummaryEntry{decode_fixed32(e), decode_fixed32(e + 4), decode_fixed64(e + 8)};
  }
  if (!entries_ok(s.blocks, shape)) return std::nullopt;
  return s;
}

}  // namespace vld
