// MapSector: one piece of the indirection map, as written to the platters,
// and the log record kept at fixed locations on the system track.
//
// The indirection map (logical block -> physical run) is cut into pieces of
// kEntriesPerPiece entries; each write of a piece is a new 512-byte map
// sector placed eagerly, usually right behind the data it maps (paper 001,
// section 3.2). Map sectors are the nodes of the virtual log: each carries
// pointers to older map sectors so that, from the newest one (the log tail),
// every live piece is reachable (section 3.2, Figure 3b).
//
// The byte layout of a map sector is docs/format.md, "Map sector (512
// bytes)"; the static_asserts below hold the offsets the code depends on.
// A synced_back of v vouches that every map sector with seq <= seq - v, and
// the data they map, was durable when this one was written, so recovery
// takes a missing or damaged one of those for damage, never for a write the
// crash lost.
//
// The MAC, not the checksum, is what makes a sector a map sector: guest data
// that copies a map sector byte for byte cannot carry a valid MAC without
// the key, and a stale sector is told from a live one by its seq (a pointer
// records the seq it expects; a scan ignores seqs older than the hint).
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_VLD_MAP_SECTOR_H_
#define VLD_CORE_VLD_MAP_SECTOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace vld {

inline constexpr uint32_t kEntriesPerPiece = 32;
// The piece whose map sector holds logical block `block`'s entry.
inline uint32_t piece_of(uint64_t block) { return static_cast<uint32_t>(block / kEntriesPerPiece); }
inline constexpr uint32_t kMaxPointers = 12;
using Secret = std::array<unsigned char, 32>;

// One map entry, as held in memory (8 bytes per logical block).
struct MapEntry {
  uint32_t psn_plus_one = 0;  // 0: unmapped (reads as zeros)
  uint32_t checksum = 0;      // of the data, seeded with the logical block
  bool mapped() const { return psn_plus_one != 0; }
  uint64_t psn() const { return psn_plus_one - 1; }
  bool operator==(const MapEntry&) const = default;
};
static_assert(sizeof(MapEntry) == 8);

struct LogPointer {
  uint32_t psn = 0;
  uint64_t seq = 0;
  uint32_t piece = 0;
  bool operator==(const LogPointer&) const = default;
};

struct MapSector {
  uint32_t piece = 0;
  uint64_t seq = 0;
  uint64_t prev_seq = 0;
  uint64_t group_seq = 0;
  uint32_t group_count = 1;
  uint16_t synced_back = 0;
  uint64_t changed = 0;
  std::array<MapEntry, kEntriesPerPiece> entries{};
  uint16_t pointer_count = 0;
  std::array<LogPointer, kMaxPointers> pointers{};

  // The newest seq this sector vouches was durable (0: none).
  uint64_t vouched_seq() const { return synced_back ? seq - synced_back : 0; }
  // The synced_back that says "everything up to synced_seq is durable", or
  // 0 where that does not fit in 16 bits (a claim must never exceed the truth).
  static uint16_t synced_back_for(uint64_t seq, uint64_t synced_seq) {
    return synced_seq < seq && seq - synced_seq <= 0xffff ? static_cast<uint16_t>(seq - synced_seq)
                                                          : 0;
  }
};

using SectorBytes = std::array<unsigned char, 512>;

// docs/format.md's map sector offsets, checked: entries and pointers end
// where the MAC begins.
inline constexpr size_t kMapEntriesAt = 48, kMapPointersAt = kMapEntriesAt + 8 * kEntriesPerPiece,
                        kMapMacAt = 496;
static_assert(kMapPointersAt == 304);
static_assert(kMapPointersAt + 16 * kMaxPointers == kMapMacAt, "pointers would overrun the MAC");

SectorBytes encode_map_sector(const MapSector& m, const Secret& key);
// nullopt unless the magic and the MAC are right and the fields make sense.
std::optional<MapSector> decode_map_sector(const unsigned char* bytes, const Secret& key);

// The log record, in two slots on the system track (track 0). Written after a
// sync, then synced: it says that every map sector with seq <= durable_seq is
// on stable storage and that the tree from root reaches every live piece as
// of then. A clean shutdown writes one with clean = 1; opening writes a new
// one with clean = 0 before serving, which is how the tail record is
// invalidated (paper 001, section 3.2). Writes after it go only to the
// cylinder window it names, so recovery after a crash scans only that window.
// Its byte layout is docs/format.md, "Log record (512 bytes, in slot 0 or
// 1)". checkpoint_seq is the last seq of the newest checkpoint group (full
// or delta, vld_disk_checkpoint.cc) under the record: every live map sector
// with a higher seq was scattered by a request. A narrow record names the
// cylinders of the window that recovery reads first (scan_set.h); the
// others name none, and recovery reads the whole window.
struct LogRecord {
  bool clean = false;
  uint64_t generation = 0;
  uint64_t durable_seq = 0;
  uint64_t next_seq = 1;
  bool has_root = false;
  LogPointer root;
  uint32_t window_first = 0;
  uint32_t window_cylinders = 0;
  uint32_t head_cylinder = 0;
  uint32_t head = 0;
  uint64_t checkpoint_seq = 0;
  bool scan_set_narrow = false;
  std::array<unsigned char, 416> scan_set_bits{};  // ScanSet::encode_bits, if narrow
  static_assert(80 + 416 == 496, "the bits end where the MAC begins");
};

SectorBytes encode_log_record(const LogRecord& r, const Secret& key);
std::optional<LogRecord> decode_log_record(const unsigned char* bytes, const Secret& key);

}  // namespace vld

#endif  // VLD_CORE_VLD_MAP_SECTOR_H_
