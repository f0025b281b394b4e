#include "core/lld/checkpoint.h"

#include <algorithm>
#include <cassert>

#include "core/lld/segment_summary.h"
#include "core/util/coding.h"

namespace vld {

namespace {

constexpr uint32_t kCheckpointMagic = 0x5043444c;  // "LDCP"
constexpr size_t kRecordMacAt = kLldSectorBytes - kMacBytes;
constexpr size_t kTablesMacAt = 56;

bool position_ok(const Checkpoint& c, const LldShape& shape) {
  return c.generation != 0 && c.next_seq > c.checkpoint_seq && c.segment < shape.segment_count &&
         c.next_sector < shape.segment_sectors;
}

bool tables_ok(const Checkpoint& c, const LldShape& shape) {
  const CheckpointTables& t = c.tables;
  if (t.map.size() != shape.logical_blocks || t.usage.size() != shape.segment_count) return false;
  for (const BlockMapEntry& e : t.map)
    if (e.psn_plus_one != 0 && (e.psn_plus_one > shape.platter_sectors || e.version == 0)) return false;
  const uint32_t max_live = max_blocks_per_write(shape);
  return std::all_of(t.usage.begin(), t.usage.end(), [&](const SegmentUsage& u) {
    return u.live_blocks <= max_live && u.last_seq < c.next_seq;
  });
}

void encode_tables(const CheckpointTables& t, unsigned char* p) {
  for (const BlockMapEntry& e : t.map) {
    encode_fixed32(p, e.psn_plus_one);
    encode_fixed32(p + 4, e.checksum);
    encode_fixed64(p + 8, e.version);
    p += kBlockMapEntryBytes;
  }
  for (const SegmentUsage& u : t.usage) {
    encode_fixed32(p, u.live_blocks);
    encode_fixed64(p + 4, u.last_seq);
    p += kSegmentUsageBytes;
  }
}

void decode_tables(const unsigned char* p, const LldShape& shape, CheckpointTables* t) {
  t->map.resize(shape.logical_blocks);
  for (BlockMapEntry& e : t->map) {
    e = BlockMapEntry{decode_fixed32(p), decode_fixed32(p + 4), decode_fixed64(p + 8)};
    p += kBlockMapEntryBytes;
  }
  t->usage.resize(shape.segment_count);
  for (SegmentUsage& u : t->usage) {
    u = SegmentUsage{decode_fixed32(p), decode_fixed64(p + 4)};
    p += kSegmentUsageBytes;
  }
}

}  // namespace

uint32_t checkpoint_table_sectors(const LldShape& shape) {
  const uint64_t bytes = uint64_t{kBlockMapEntryBytes} * shape.logical_blocks +
                         uint64_t{kSegmentUsageBytes} * shape.segment_count;
  return static_cast<uint32_t>((bytes + kLldSectorBytes - 1) / kLldSectorBytes);
}

uint32_t checkpoint_slot_sectors(const LldShape& shape) {
  return 1 + checkpoint_table_sectors(shape);
}

std::vector<unsigned char> encode_checkpoint(const Checkpoint& c, const LldShape& shape,
                                             const MacKey& key) {
  assert(position_ok(c, shape) && tables_ok(c, shape));
  std::vector<unsigned char> b(size_t{checkpoint_slot_sectors(shape)} * kLldSectorBytes);
  unsigned char* p = b.data();
  unsigned char* tables = p + kLldSectorBytes;
  encode_tables(c.tables, tables);
  encode_fixed32(p, kCheckpointMagic);
  encode_fixed32(p + 4, c.clean ? 1 : 0);
  encode_fixed64(p + 8, c.generation);
  encode_fixed64(p + 16, c.checkpoint_seq);
  encode_fixed64(p + 24, c.next_seq);
  encode_fixed32(p + 32, c.segment);
  encode_fixed32(p + 36, c.next_sector);
  encode_fixed32(p + 40, shape.logical_blocks);
  encode_fixed32(p + 44, shape.segment_count);
  encode_fixed32(p + 48, checkpoint_table_sectors(shape));
  const Mac tables_mac = mac_of(tables, b.size() - kLldSectorBytes, key);
  std::copy(tables_mac.begin(), tables_mac.end(), p + kTablesMacAt);
  mac_seal(p, kRecordMacAt, key);
  return b;
}

std::optional<Checkpoint> decode_checkpoint(std::span<const unsigned char> slot,
                                            const LldShape& shape, const MacKey& key) {
  const size_t total = size_t{checkpoint_slot_sectors(shape)} * kLldSectorBytes;
  if (slot.size() < total) return std::nullopt;
  const unsigned char* p = slot.data();
  if (decode_fixed32(p) != kCheckpointMagic || !mac_valid(p, kRecordMacAt, key)) return std::nullopt;
  const uint32_t clean = decode_fixed32(p + 4);
  if (clean > 1 || decode_fixed32(p + 40) != shape.logical_blocks ||
      decode_fixed32(p + 44) != shape.segment_count ||
      decode_fixed32(p + 48) != checkpoint_table_sectors(shape))
    return std::nullopt;
  const unsigned char* tables = p + kLldSectorBytes;
  if (!mac_matches(tables, total - kLldSectorBytes, p + kTablesMacAt, key)) return std::nullopt;
  Checkpoint c;
  c.clean = clean == 1;
  c.generation = decode_fixed64(p + 8);
  c.checkpoint_seq = decode_fixed64(p + 16);
  c.next_seq = decode_fixed64(p + 24);
  c.segment = decode_fixed32(p + 32);
  c.next_sector = decode_fixed32(p + 36);
  decode_tables(tables, shape, &c.tables);
  if (!position_ok(c, shape) || !tables_ok(c, shape)) return std::nullopt;
  return c;
}

std::optional<PickedCheckpoint> pick_checkpoint(std::span<const unsigned char> slot0,
                                                std::span<const unsigned char> slot1,
                                                const LldShape& shape, const MacKey& key) {
  std::optional<Checkpoint> a = decode_checkpoint(slot0, shape, key);
  std::optional<Checkpoint> b = decode_checkpoint(slot1, shape, key);
  if (b && (!a || b->generation > a->generation)) return PickedCheckpoint{1, std::move(*b)};
  if (a) return PickedCheckpoint{0, std::move(*a)};
  return std::nullopt;
}

}  // namespace vld
