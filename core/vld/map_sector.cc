#include "core/vld/map_sector.h"

#include <algorithm>
#include <cstring>

#include "core/util/checksum.h"
#include "core/util/coding.h"
#include "core/util/mac.h"

namespace vld {

namespace {

constexpr uint32_t kMapMagic = 0x534d4c56;  // "VLMS"
constexpr uint32_t kLogMagic = 0x524c4c56;  // "VLLR"
constexpr size_t kMacAt = 496;

void seal(SectorBytes& b, const Secret& key) { mac_seal(b.data(), kMacAt, key); }

bool authentic(const unsigned char* p, const Secret& key) { return mac_valid(p, kMacAt, key); }

}  // namespace

SectorBytes encode_map_sector(const MapSector& m, const Secret& key) {
  SectorBytes b{};
  unsigned char* p = b.data();
  encode_fixed32(p, kMapMagic);
  encode_fixed32(p + 4, m.piece);
  encode_fixed64(p + 8, m.seq);
  encode_fixed64(p + 16, m.prev_seq);
  encode_fixed64(p + 24, m.group_seq);
  encode_fixed32(p + 32, m.group_count);
  p[36] = static_cast<unsigned char>(m.pointer_count);
  p[37] = static_cast<unsigned char>(m.pointer_count >> 8);
  p[38] = static_cast<unsigned char>(m.synced_back);
  p[39] = static_cast<unsigned char>(m.synced_back >> 8);
  encode_fixed64(p + 40, m.changed);
  for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
    encode_fixed32(p + 48 + 8 * i, m.entries[i].psn_plus_one);
    encode_fixed32(p + 52 + 8 * i, m.entries[i].checksum);
  }
  for (uint32_t i = 0; i < m.pointer_count; ++i) {
    encode_fixed32(p + 304 + 16 * i, m.pointers[i].psn);
    encode_fixed32(p + 308 + 16 * i, m.pointers[i].piece);
    encode_fixed64(p + 312 + 16 * i, m.pointers[i].seq);
  }
  seal(b, key);
  return b;
}

std::optional<MapSector> decode_map_sector(const unsigned char* p, const Secret& key) {
  if (decode_fixed32(p) != kMapMagic) return std::nullopt;
  if (!authentic(p, key)) return std::nullopt;
  MapSector m;
  m.piece = decode_fixed32(p + 4);
  m.seq = decode_fixed64(p + 8);
  m.prev_seq = decode_fixed64(p + 16);
  m.group_seq = decode_fixed64(p + 24);
  m.group_count = decode_fixed32(p + 32);
  m.pointer_count = static_cast<uint16_t>(p[36] | p[37] << 8);
  m.synced_back = static_cast<uint16_t>(p[38] | p[39] << 8);
  m.changed = decode_fixed64(p + 40);
  if (m.seq == 0 || m.prev_seq >= m.seq || m.group_count == 0 || m.group_seq > m.seq ||
      m.seq - m.group_seq >= m.group_count || m.pointer_count > kMaxPointers ||
      m.synced_back > m.seq)
    return std::nullopt;
  for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
    m.entries[i].psn_plus_one = decode_fixed32(p + 48 + 8 * i);
    m.entries[i].checksum = decode_fixed32(p + 52 + 8 * i);
  }
  for (uint32_t i = 0; i < m.pointer_count; ++i) {
    m.pointers[i].psn = decode_fixed32(p + 304 + 16 * i);
    m.pointers[i].piece = decode_fixed32(p + 308 + 16 * i);
    m.pointers[i].seq = decode_fixed64(p + 312 + 16 * i);
    if (m.pointers[i].seq >= m.seq) return std::nullopt;  // pointers go back in time
  }
  return m;
}

SectorBytes encode_log_record(const LogRecord& r, const Secret& key) {
  SectorBytes b{};
  unsigned char* p = b.data();
  encode_fixed32(p, kLogMagic);
  encode_fixed32(p + 4, r.clean ? 1 : 0);
  encode_fixed64(p + 8, r.generation);
  encode_fixed64(p + 16, r.durable_seq);
  encode_fixed64(p + 24, r.next_seq);
  encode_fixed32(p + 32, r.root.psn);
  encode_fixed32(p + 36, r.has_root ? 1 : 0);
  encode_fixed64(p + 40, r.root.seq);
  encode_fixed32(p + 48, r.window_first);
  encode_fixed32(p + 52, r.window_cylinders);
  encode_fixed32(p + 56, r.head_cylinder);
  encode_fixed32(p + 60, r.head);
  encode_fixed32(p + 64, r.root.piece);
  encode_fixed64(p + 68, r.checkpoint_seq);
  encode_fixed32(p + 76, r.scan_set_narrow ? 1 : 0);
  if (r.scan_set_narrow) std::copy(r.scan_set_bits.begin(), r.scan_set_bits.end(), p + 80);
  seal(b, key);
  return b;
}

std::optional<LogRecord> decode_log_record(const unsigned char* p, const Secret& key) {
  if (decode_fixed32(p) != kLogMagic) return std::nullopt;
  if (!authentic(p, key)) return std::nullopt;
  LogRecord r;
  r.clean = decode_fixed32(p + 4) == 1;
  r.generation = decode_fixed64(p + 8);
  r.durable_seq = decode_fixed64(p + 16);
  r.next_seq = decode_fixed64(p + 24);
  r.root.psn = decode_fixed32(p + 32);
  r.has_root = decode_fixed32(p + 36) == 1;
  r.root.seq = decode_fixed64(p + 40);
  r.window_first = decode_fixed32(p + 48);
  r.window_cylinders = decode_fixed32(p + 52);
  r.head_cylinder = decode_fixed32(p + 56);
  r.head = decode_fixed32(p + 60);
  r.root.piece = decode_fixed32(p + 64);
  r.checkpoint_seq = decode_fixed64(p + 68);
  r.scan_set_narrow = decode_fixed32(p + 76) == 1;
  if (r.scan_set_narrow) std::copy_n(p + 80, r.scan_set_bits.size(), r.scan_set_bits.begin());
  if (r.next_seq <= r.durable_seq || r.checkpoint_seq > r.durable_seq) return std::nullopt;
  return r;
}

}  // namespace vld
