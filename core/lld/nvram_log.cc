#include "core/lld/nvram_log.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "core/util/coding.h"
#include "core/util/checksum.h"

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
  uint64_t epoch = 0;
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

// The record header at p if it is authentic (a known magic, a good MAC) and
// makes sense for shape; its epoch and seq are the caller's to check.
std::optional<RawRecord> decode_header(const unsigned char* p, const LldShape& shape,
                                       const MacKey& key) {
  const uint32_t magic = decode_fixed32(p);
  const bool known = magic == kNvramRecordMagic || magic == kNvramTrimMagic;
  if (!known || !mac_valid(p, kRecordMacOffset, key)) return std::nullopt;
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
  if (magic == kNvramTrimMagic) {
    r.record.trim_blocks = decode_fixed32(p + 44);
    if (!trim_range_ok(r.record.logical_block, r.record.trim_blocks, shape)) return std::nullopt;
  }
  return r;
}

// What the region holds where epoch h's record with seq belongs.
enum class Found {
  kWhole,        // that record, whole
  kBadBlock,     // that record's authentic header, but its block fails its checksum
  kNothing,      // no record of epoch h with seq there (never written, stale, or damaged)
};

Found read_record(std::span<const unsigned char> region, const NvramHeader& h, uint64_t seq,
                  const LldShape& shape, const MacKey& key, RawRecord* out) {
  const unsigned char* p = region.data() + nvram_record_offset(h, seq, shape);
  std::optional<RawRecord> r = decode_header(p, shape, key);
  if (!r || r->epoch != h.epoch || r->record.seq != seq) return Found::kNothing;
  *out = std::move(*r);
  if (out->record.trim_blocks != 0) return Found::kWhole;  // the data area is not checked
  const unsigned char* data = p + kNvramRecordHeaderBytes;
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

// One request as the walk reads it.
struct WalkRequest {
  uint64_t first_seq = 0;
  uint32_t records = 0;
  std::vector<NvramRecord> whole;
  std::vector<NvramDamagedRecord> damaged;
  size_t size() const { return whole.size() + damaged.size(); }
  bool complete() const { return records != 0 && size() == records; }
};

void commit(WalkRequest& req, NvramReplay& out) {
  for (NvramRecord& r : req.whole) out.records.push_back(std::move(r));
  out.damaged.insert(out.damaged.end(), req.damaged.begin(), req.damaged.end());
  out.next_seq = req.first_seq + req.records;
  req = WalkRequest{};
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

namespace {

// After the walk stopped at `stop_seq` inside (or at the start of) the
// request that began at `request_seq`: the first authentic record of a later
// request of this epoch, from stop_seq on, which vouches that the stopping
// record was written; or nullopt.
std::optional<RawRecord> later_request(std::span<const unsigned char> region,
                                       const NvramHeader& h, uint64_t stop_seq,
                                       uint64_t request_seq, const LldShape& shape,
                                       const MacKey& key) {
  const uint64_t capacity = nvram_capacity_records(region.size(), shape);
  for (uint64_t seq = stop_seq; seq < h.first_seq + capacity; ++seq) {
    RawRecord r;
    if (read_record(region, h, seq, shape, key, &r) != Found::kNothing &&
        r.request_first_seq > request_seq)
      return r;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NvramReplay> replay_nvram(std::span<const unsigned char> region, const MacKey& key,
                                        const LldShape& shape) {
  assert(shape.valid());
  std::optional<NvramHeader> h = pick_header(region, key);
  NvramReplay out;
  if (auto newest = newest_record_epoch(region, shape, key); newest && (!h || newest->epoch > h->epoch)) {
    h = newest;
    out.header_rebuilt = true;
  }
  if (!h) return std::nullopt;
  out.header = *h;
  out.next_seq = h->first_seq;
  const uint64_t capacity = nvram_capacity_records(region.size(), shape);
  WalkRequest cur, held;  // held: the newest whole request with a bad block
  uint64_t seq = h->first_seq;
  for (; seq < h->first_seq + capacity; ++seq) {
    RawRecord r;
    const Found found = read_record(region, *h, seq, shape, key, &r);
    if (found == Found::kNothing) break;
    const bool starts = r.request_first_seq == seq;
    if (starts != (cur.size() == 0)) break;  // a request cut short, or a gap
    if (!starts && (r.request_first_seq != cur.first_seq || r.request_blocks != cur.records))
      break;
    if (starts) {
      if (held.complete()) commit(held, out);  // this request vouches for it
      cur.first_seq = seq;
      cur.records = r.request_blocks;
    }
    if (found == Found::kWhole)
      cur.whole.push_back(std::move(r.record));
    else
      cur.damaged.push_back({seq, r.record.logical_block, r.record.version});
    if (!cur.complete()) continue;
    if (cur.damaged.empty())
      commit(cur, out);
    else
      held = std::exchange(cur, WalkRequest{});
  }
  const uint64_t request_seq = cur.size() ? cur.first_seq : seq;
  if (auto later = later_request(region, *h, seq, request_seq, shape, key)) {
    out.damage = "record seq " + std::to_string(seq) + " (record " +
                 std::to_string(seq - h->first_seq) + " of epoch " + std::to_string(h->epoch) +
                 ") is missing or fails its MAC check, and the request of seq " +
                 std::to_string(later->request_first_seq) + " after it says it was written";
    return out;
  }
  out.dropped = cur.size() + held.size();
  return out;
}

}  // namespace vld
