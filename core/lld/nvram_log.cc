#include "core/lld/nvram_log.h"

#include <algorithm>
#include <cassert>

#include "core/util/coding.h"
#include "core/vld/map_sector.h"

namespace vld {

namespace {

constexpr uint32_t kNvramHeaderMagic = 0x484e444c;  // "LDNH"
constexpr uint32_t kNvramRecordMagic = 0x564e444c;  // "LDNV"
constexpr uint32_t kNvramTrimMagic = 0x544e444c;    // "LDNT"
constexpr uint32_t kRecordMacOffset = kNvramRecordHeaderBytes - kMacBytes;  // 48

uint32_t block_bytes(const LldShape& shape) { return shape.block_sectors * kLldSectorBytes; }

// A decoded record with the request it belongs to.
struct RawRecord {
  NvramRecord record;
  uint64_t request_first_seq = 0;
  uint32_t request_blocks = 0;
};

bool trim_range_ok(uint32_t logical_block, uint32_t trim_blocks, const LldShape& shape) {
  return trim_blocks != 0 && uint64_t{logical_block} + trim_blocks <= shape.logical_blocks;
}

// The record's header; a data record's block follows it. p: a whole stride,
// zero-filled (a trim record's data area stays so).
void encode_record(unsigned char* p, const NvramHeader& h, uint64_t seq, uint64_t first_seq,
                   uint32_t count, const NvramBlock& b, const LldShape& shape, const MacKey& key) {
  const bool trim = b.trim_blocks != 0;
  assert(b.version > 0 && b.logical_block < shape.logical_blocks);
  assert(trim ? b.data.empty() && trim_range_ok(b.logical_block, b.trim_blocks, shape)
              : b.data.size() == block_bytes(shape));
  encode_fixed32(p, trim ? kNvramTrimMagic : kNvramRecordMagic);
  encode_fixed32(p + 4, b.logical_block);
  encode_fixed64(p + 8, h.epoch);
  encode_fixed64(p + 16, seq);
  encode_fixed64(p + 24, b.version);
  encode_fixed64(p + 32, first_seq);
  encode_fixed32(p + 40, count);
  encode_fixed32(p + 44, trim ? b.trim_blocks
                              : data_checksum(b.data.data(), b.data.size(), b.logical_block));
  mac_seal(p, kRecordMacOffset, key);
  std::copy(b.data.begin(), b.data.end(), p + kNvramRecordHeaderBytes);
}

// The record at p if it is valid and is the one with seq in epoch h.epoch.
std::optional<RawRecord> decode_record(const unsigned char* p, const NvramHeader& h, uint64_t seq,
                                       const LldShape& shape, const MacKey& key) {
  const uint32_t magic = decode_fixed32(p);
  const bool known = magic == kNvramRecordMagic || magic == kNvramTrimMagic;
  if (!known || !mac_valid(p, kRecordMacOffset, key)) return std::nullopt;
  RawRecord r;
  r.record.seq = decode_fixed64(p + 16);
  r.record.logical_block = decode_fixed32(p + 4);
  r.record.version = decode_fixed64(p + 24);
  r.request_first_seq = decode_fixed64(p + 32);
  r.request_blocks = decode_fixed32(p + 40);
  if (decode_fixed64(p + 8) != h.epoch || r.record.seq != seq || r.record.version == 0 ||
      r.record.logical_block >= shape.logical_blocks || r.request_first_seq > seq ||
      seq - r.request_first_seq >= r.request_blocks)
    return std::nullopt;
  if (magic == kNvramTrimMagic) {
    r.record.trim_blocks = decode_fixed32(p + 44);
    if (!trim_range_ok(r.record.logical_block, r.record.trim_blocks, shape)) return std::nullopt;
    return r;  // the data area is not checked
  }
  const unsigned char* data = p + kNvramRecordHeaderBytes;
  if (data_checksum(data, block_bytes(shape), r.record.logical_block) != decode_fixed32(p + 44))
    return std::nullopt;
  r.record.data.assign(data, data + block_bytes(shape));
  return r;
}

std::optional<NvramHeader> pick_header(std::span<const unsigned char> region, const MacKey& key) {
  if (region.size() < kNvramRecordsOffsetBytes) return std::nullopt;
  auto h0 = decode_nvram_header(region.subspan(0, kNvramHeaderSlotBytes), key);
  auto h1 = decode_nvram_header(region.subspan(kNvramHeaderSlotBytes, kNvramHeaderSlotBytes), key);
  if (h0 && h0->epoch % 2 != 0) h0.reset();  // a slot holds only its own parity
  if (h1 && h1->epoch % 2 != 1) h1.reset();
  if (h0 && h1) return h0->epoch > h1->epoch ? h0 : h1;
  return h0 ? h0 : h1;
}

}  // namespace

uint64_t nvram_record_bytes(const LldShape& shape) {
  return kNvramRecordHeaderBytes + uint64_t{block_bytes(shape)};
}

uint64_t nvram_capacity_records(uint64_t region_bytes, const LldShape& shape) {
  if (region_bytes < kNvramRecordsOffsetBytes) return 0;
  return (region_bytes - kNvramRecordsOffsetBytes) / nvram_record_bytes(shape);
}

uint64_t nvram_record_offset(const NvramHeader& h, uint64_t seq, const LldShape& shape) {
  assert(seq >= h.first_seq);
  return kNvramRecordsOffsetBytes + (seq - h.first_seq) * nvram_record_bytes(shape);
}

uint64_t nvram_header_offset(const NvramHeader& h) {
  return (h.epoch % 2) * kNvramHeaderSlotBytes;
}

std::vector<unsigned char> encode_nvram_header(const NvramHeader& h, const MacKey& key) {
  assert(h.epoch > 0 && h.first_seq > 0);
  std::vector<unsigned char> b(kNvramHeaderSlotBytes);
  encode_fixed32(b.data(), kNvramHeaderMagic);
  encode_fixed64(b.data() + 8, h.epoch);
  encode_fixed64(b.data() + 16, h.first_seq);
  mac_seal(b.data(), kNvramHeaderSlotBytes - kMacBytes, key);
  return b;
}

std::optional<NvramHeader> decode_nvram_header(std::span<const unsigned char> slot,
                                               const MacKey& key) {
  if (slot.size() < kNvramHeaderSlotBytes) return std::nullopt;
  const unsigned char* p = slot.data();
  if (decode_fixed32(p) != kNvramHeaderMagic || !mac_valid(p, kNvramHeaderSlotBytes - kMacBytes, key))
    return std::nullopt;
  NvramHeader h{decode_fixed64(p + 8), decode_fixed64(p + 16)};
  if (h.epoch == 0 || h.first_seq == 0) return std::nullopt;
  return h;
}

std::vector<unsigned char> encode_nvram_request(const NvramHeader& h, uint64_t first_seq,
                                                std::span<const NvramBlock> blocks,
                                                const LldShape& shape, const MacKey& key) {
  assert(!blocks.empty() && first_seq >= h.first_seq);
  const uint64_t stride = nvram_record_bytes(shape);
  std::vector<unsigned char> out(blocks.size() * stride);
  const auto count = static_cast<uint32_t>(blocks.size());
  for (uint32_t i = 0; i < count; ++i)
    encode_record(out.data() + i * stride, h, first_seq + i, first_seq, count, blocks[i], shape, key);
  return out;
}

std::optional<NvramReplay> replay_nvram(std::span<const unsigned char> region, const MacKey& key,
                                        const LldShape& shape) {
  assert(shape.valid());
  std::optional<NvramHeader> h = pick_header(region, key);
  if (!h) return std::nullopt;
  NvramReplay out;
  out.header = *h;
  const uint64_t capacity = nvram_capacity_records(region.size(), shape);
  size_t complete = 0;  // records up to the end of the last whole request
  uint64_t request_first = 0;
  uint32_t request_blocks = 0;
  for (uint64_t i = 0; i < capacity; ++i) {
    const uint64_t seq = h->first_seq + i;
    auto r = decode_record(region.data() + nvram_record_offset(*h, seq, shape), *h, seq, shape, key);
    if (!r) break;
    const bool starts = r->request_first_seq == seq;
    if (starts != (out.records.size() == complete)) break;  // a request cut short, or a gap
    if (!starts && (r->request_first_seq != request_first || r->request_blocks != request_blocks))
      break;
    request_first = r->request_first_seq;
    request_blocks = r->request_blocks;
    out.records.push_back(std::move(r->record));
    if (seq == request_first + request_blocks - 1) complete = out.records.size();
  }
  out.records.resize(complete);
  out.next_seq = h->first_seq + complete;
  return out;
}

}  // namespace vld
