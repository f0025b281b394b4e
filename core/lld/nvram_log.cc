#include "core/lld/nvram_log.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/util/checksum.h"
#include "core/util/coding.h"

namespace vld {

namespace {

constexpr uint32_t kNvramHeaderMagic = 0x484e444c;  // "LDNH"
constexpr uint32_t kNvramRecordMagic = 0x564e444c;  // "LDNV"
constexpr uint32_t kNvramTrimMagic = 0x544e444c;    // "LDNT"
// Where a record header's MAC goes: after 48 bytes of fields in version 2,
// at the end of its sector in version 3 (after durable_seq at 48).
constexpr uint32_t kPackedMacOffset = kNvramPackedHeaderBytes - kMacBytes;  // 48
constexpr uint32_t kSectorMacOffset = kNvramSectorHeaderBytes - kMacBytes;  // 496
constexpr uint32_t kDurableSeqOffset = 48;

uint32_t block_bytes(const LldShape& shape) { return shape.block_sectors * kLldSectorBytes; }
uint32_t header_bytes(const LldShape& shape) {
  return shape.nvram_header_sector() ? kNvramSectorHeaderBytes : kNvramPackedHeaderBytes;
}
uint32_t mac_offset(const LldShape& shape) {
  return shape.nvram_header_sector() ? kSectorMacOffset : kPackedMacOffset;
}

// A decoded record with the request it belongs to.
struct RawRecord {
  NvramRecord record;
  uint64_t epoch = 0;
  uint64_t request_first_seq = 0;
  uint32_t request_blocks = 0;
  uint64_t durable_seq = 0;  // version 2: request_first_seq - 1, as appends were synced in turn
  bool same_request(const RawRecord& o) const {
    return request_first_seq == o.request_first_seq && request_blocks == o.request_blocks;
  }
};

bool trim_range_ok(uint32_t logical_block, uint32_t trim_blocks, const LldShape& shape) {
  return trim_blocks != 0 && uint64_t{logical_block} + trim_blocks <= shape.logical_blocks;
}

// The record's header at p, zero-filled beforehand (its unused bytes stay
// so); a data record's block follows it, appended by the caller.
void encode_record(unsigned char* p, const NvramHeader& h, uint64_t seq, uint64_t first_seq,
                   uint32_t count, uint64_t durable_seq, const NvramBlock& b,
                   const LldShape& shape, const MacKey& key) {
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
  // (Not asserted: the assert would be the second pass over the data that
  // the caller's checksum spares, in every build that keeps asserts.)
  uint32_t checksum_or_trim = b.trim_blocks;
  if (!trim)
    checksum_or_trim =
        b.checksum ? *b.checksum : data_checksum(b.data.data(), b.data.size(), b.logical_block);
  encode_fixed32(p + 44, checksum_or_trim);
  if (shape.nvram_header_sector()) encode_fixed64(p + kDurableSeqOffset, durable_seq);
  mac_seal(p, mac_offset(shape), key);
}

// The record header at p if it is authentic (a known magic, a good MAC) and
// makes sense for shape; its epoch and seq are the caller's to check.
std::optional<RawRecord> decode_header(const unsigned char* p, const LldShape& shape,
                                       const MacKey& key) {
  const uint32_t magic = decode_fixed32(p);
  const bool known = magic == kNvramRecordMagic || magic == kNvramTrimMagic;
  if (!known || !mac_valid(p, mac_offset(shape), key)) return std::nullopt;
  RawRecord r;
  r.epoch = decode_fixed64(p + 8);
  r.record.seq = decode_fixed64(p + 16);
  r.record.logical_block = decode_fixed32(p + 4);
  r.record.version = decode_fixed64(p + 24);
  r.request_first_seq = decode_fixed64(p + 32);
  r.request_blocks = decode_fixed32(p + 40);
  if (r.record.seq == 0 || r.record.version == 0 ||
      r.record.logical_block >= shape.logical_blocks || r.request_first_seq > r.record.seq ||
      r.record.seq - r.request_first_seq >= r.request_blocks)
    return std::nullopt;
  r.durable_seq = shape.nvram_header_sector() ? decode_fixed64(p + kDurableSeqOffset)
                                              : r.request_first_seq - 1;
  if (r.durable_seq >= r.request_first_seq) return std::nullopt;
  if (magic == kNvramTrimMagic) {
    r.record.trim_blocks = decode_fixed32(p + 44);
    if (!trim_range_ok(r.record.logical_block, r.record.trim_blocks, shape)) return std::nullopt;
  }
  return r;
}

// What the region holds where epoch h's record with seq belongs.
enum class Found {
  kWhole,     // that record, whole
  kBadBlock,  // that record's authentic header, but its block fails its checksum
  kNothing,   // no record of epoch h with seq there (never written, stale, or damaged)
};

Found read_record(std::span<const unsigned char> region, const NvramHeader& h, uint64_t seq,
                  const LldShape& shape, const MacKey& key, RawRecord* out) {
  const unsigned char* p = region.data() + nvram_record_offset(h, seq, shape);
  std::optional<RawRecord> r = decode_header(p, shape, key);
  if (!r || r->epoch != h.epoch || r->record.seq != seq) return Found::kNothing;
  *out = std::move(*r);
  if (out->record.trim_blocks != 0) return Found::kWhole;  // the data area is not checked
  const unsigned char* data = p + header_bytes(shape);
  if (data_checksum(data, block_bytes(shape), out->record.logical_block) != decode_fixed32(p + 44))
    return Found::kBadBlock;
  out->record.data.assign(data, data + block_bytes(shape));
  return Found::kWhole;
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

// The header of the newest epoch any authentic record names (record i of
// an epoch has seq first_seq + i), or nullopt if there is no record.
std::optional<NvramHeader> newest_record_epoch(std::span<const unsigned char> region,
                                               const LldShape& shape, const MacKey& key) {
  std::optional<NvramHeader> newest;
  const uint64_t capacity = nvram_capacity_records(region.size(), shape);
  for (uint64_t i = 0; i < capacity; ++i) {
    const unsigned char* p =
        region.data() + kNvramRecordsOffsetBytes + i * nvram_record_bytes(shape);
    std::optional<RawRecord> r = decode_header(p, shape, key);
    if (!r || r->epoch == 0 || r->record.seq <= i) continue;
    if (!newest || r->epoch > newest->epoch) newest = NvramHeader{r->epoch, r->record.seq - i};
  }
  return newest;
}

// Every record of the header's epoch that the region holds, by index.
struct EpochRecords {
  std::vector<Found> found;          // per record index
  std::vector<RawRecord> records;    // per record index (meaningful unless kNothing)
  uint64_t vouched_seq = 0;          // the highest durable_seq any record states
  uint64_t end_seq = 0;              // one past the last seq with a record
  bool has(uint64_t seq, uint64_t first_seq) const {
    return seq < end_seq && found[seq - first_seq] != Found::kNothing;
  }
};

EpochRecords read_epoch(std::span<const unsigned char> region, const NvramHeader& h,
                        const LldShape& shape, const MacKey& key) {
  const uint64_t capacity = nvram_capacity_records(region.size(), shape);
  EpochRecords e;
  e.found.assign(capacity, Found::kNothing);
  e.records.resize(capacity);
  e.vouched_seq = h.first_seq - 1;
  e.end_seq = h.first_seq;
  for (uint64_t i = 0; i < capacity; ++i) {
    const uint64_t seq = h.first_seq + i;
    e.found[i] = read_record(region, h, seq, shape, key, &e.records[i]);
    if (e.found[i] == Found::kNothing) continue;
    e.vouched_seq = std::max(e.vouched_seq, e.records[i].durable_seq);
    e.end_seq = seq + 1;
  }
  return e;
}

std::string missing_record(uint64_t seq, const NvramHeader& h, uint64_t vouched) {
  return "record seq " + std::to_string(seq) + " (record " + std::to_string(seq - h.first_seq) +
         " of epoch " + std::to_string(h.epoch) +
         ") is missing or fails its MAC check, and a later record says every record up to seq " +
         std::to_string(vouched) + " was written";
}

// The request that begins at seq: whole (every record there, authentic and
// of this request) or not, and how many records it has.
struct RequestAt {
  bool whole = false;
  uint64_t end_seq = 0;  // one past its last record, or past the first one missing
};

RequestAt request_at(const EpochRecords& e, const NvramHeader& h, uint64_t seq) {
  const RawRecord& first = e.records[seq - h.first_seq];
  RequestAt r{true, seq + first.request_blocks};
  for (uint64_t s = seq + 1; s < r.end_seq; ++s)
    if (!e.has(s, h.first_seq) || !e.records[s - h.first_seq].same_request(first)) {
      r.whole = false;
      r.end_seq = s;
      return r;
    }
  return r;
}

// Adds the request [seq, end) to out: its whole records to replay, its bad
// blocks as damaged. REQUIRES: request_at(seq) was whole.
void take_request(EpochRecords& e, const NvramHeader& h, uint64_t seq, uint64_t end,
                  NvramReplay& out) {
  for (uint64_t s = seq; s < end; ++s) {
    RawRecord& r = e.records[s - h.first_seq];
    if (e.found[s - h.first_seq] == Found::kWhole)
      out.records.push_back(std::move(r.record));
    else
      out.damaged.push_back({s, r.record.logical_block, r.record.version});
  }
}

bool has_bad_block(const EpochRecords& e, const NvramHeader& h, uint64_t seq, uint64_t end) {
  for (uint64_t s = seq; s < end; ++s)
    if (e.found[s - h.first_seq] == Found::kBadBlock) return true;
  return false;
}

}  // namespace

uint64_t nvram_record_bytes(const LldShape& shape) {
  return uint64_t{header_bytes(shape)} + block_bytes(shape);
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
                                                uint64_t durable_seq, const LldShape& shape,
                                                const MacKey& key) {
  assert(!blocks.empty() && first_seq >= h.first_seq);
  assert(durable_seq < first_seq && durable_seq + 1 >= h.first_seq);
  assert(shape.nvram_header_sector() || durable_seq + 1 == first_seq);
  const uint64_t stride = nvram_record_bytes(shape);
  std::vector<unsigned char> out;
  out.reserve(blocks.size() * stride);
  const auto count = static_cast<uint32_t>(blocks.size());
  for (uint32_t i = 0; i < count; ++i) {
    // Zeros only where the record needs them: a block's bytes cover its
    // data area, so a data record zeroes its header alone.
    const size_t at = out.size();
    out.resize(at + header_bytes(shape));
    encode_record(out.data() + at, h, first_seq + i, first_seq, count, durable_seq, blocks[i],
                  shape, key);
    if (blocks[i].trim_blocks != 0) out.resize(at + stride);  // a trim's data area: zeros
    else out.insert(out.end(), blocks[i].data.begin(), blocks[i].data.end());
  }
  assert(out.size() == blocks.size() * stride);
  return out;
}

std::optional<NvramReplay> replay_nvram(std::span<const unsigned char> region, const MacKey& key,
                                        const LldShape& shape) {
  assert(shape.valid());
  std::optional<NvramHeader> h = pick_header(region, key);
  NvramReplay out;
  if (auto newest = newest_record_epoch(region, shape, key);
      newest && (!h || newest->epoch > h->epoch)) {
    h = newest;
    out.header_rebuilt = true;
  }
  if (!h) return std::nullopt;
  out.header = *h;
  EpochRecords e = read_epoch(region, *h, shape, key);
  out.next_seq = e.end_seq;
  for (uint64_t seq = h->first_seq; seq < e.end_seq;) {
    // A record the region lacks (or that is not the one its place should
    // hold) is damage if some record says it was synced; otherwise it
    // belongs to a request that was never acknowledged, which is dropped.
    const bool starts =
        e.has(seq, h->first_seq) && e.records[seq - h->first_seq].request_first_seq == seq;
    const RequestAt req = starts ? request_at(e, *h, seq) : RequestAt{false, seq + 1};
    if (!req.whole) {
      const uint64_t missing = starts ? req.end_seq : seq;
      if (missing <= e.vouched_seq) {
        out.damage = missing_record(missing, *h, e.vouched_seq);
        return out;
      }
      for (uint64_t s = seq; s < req.end_seq; ++s) out.dropped += e.has(s, h->first_seq);
      seq = req.end_seq;
      continue;
    }
    // A whole request with a bad block: damaged if vouched for, else it
    // may be a torn append never acknowledged (nothing tells the two apart).
    if (has_bad_block(e, *h, seq, req.end_seq) && req.end_seq - 1 > e.vouched_seq)
      out.dropped += req.end_seq - seq;
    else
      take_request(e, *h, seq, req.end_seq, out);
    seq = req.end_seq;
  }
  return out;
}

}  // namespace vld
