// NvramLog: the format of mode=lld's NVRAM region, the write buffer of
// paper 001, section 4.4 (nvram=SIZE, 6.1 MB by default) kept as a reserved
// region of the image. The byte layout is in docs/format.md, "mode=lld /
// NVRAM region"; this header must agree.
//
//   [header slot 0: 512 B][header slot 1: 512 B][record 0][record 1] ..
//
// A record is a header {magic, logical block, epoch, seq, version,
// request's first seq and record count, data checksum, durable seq, MAC}
// followed by the block. In format_version 3 the header fills a sector of
// its own (kNvramSectorHeaderBytes), so records are sector-aligned and no
// sector holds parts of two; in version 2 it is 64 bytes without the
// durable seq (kNvramPackedHeaderBytes) and records are packed. One request
// of n records is n consecutive records with consecutive seqs, so it is
// appended with one sequential write.
//
// A record's durable seq is the highest seq whose request was synced before
// the record was written (version 2: its request's first seq - 1, as each
// append was synced before the next). It is what lets replay tell damage
// from a crash (below), whatever order appends and syncs come in.
//
// A *trim record* (magic "LDNT" instead of "LDNV") records that logical
// blocks [logical_block, logical_block + trim_blocks) were trimmed at
// version: it holds trim_blocks where a data record holds the data
// checksum, and its data area (the rest of the stride) is zero-filled and
// not checked. A request may mix data and trim records; replay treats them
// alike (whole requests only).
//
// Epochs: the region is reset, not reused circularly. The disk drains the
// buffer wholly into segments when it fills (the paper: "we do not flush to
// disk until the buffer cache is full"), and once those segment writes are
// durable it writes the header slot of epoch + 1, whose first_seq is the
// next record seq, and appends from record 0 again. A reset makes every
// older record stale at once, and keeps replay a single forward walk with
// no wrap point to find. A crash between the drain and the header write
// replays records already in segments: the disk applies a replayed record
// only if its version is newer than the block's, so this is harmless.
//
// Replay (replay_nvram) takes the valid header slot with the higher epoch
// and every authentic record of that epoch at its place (record i has seq
// first_seq + i: a good MAC, the epoch, the seq, and for a trim a range
// within the export), and replays, in seq order, the requests all of whose
// records are there and whole (data checksums good). A request with a
// record missing, torn or damaged is dropped, unless it was acknowledged:
//
// Damage (docs/corruption.md, "mode=lld"). A record at or below the highest
// durable seq any record states was synced: if it fails, that is damage,
// not a crash. Replay then
//   - rebuilds a damaged newest header slot from its epoch's records (each
//     says its seq and so the epoch's first_seq), when records of an epoch
//     newer than every valid slot are found;
//   - keeps a vouched record whose header is authentic but whose block fails
//     its checksum as `damaged` (the caller recovers exactly if a newer
//     version of the block exists, and refuses otherwise);
//   - sets `damage` when a vouched record's header itself fails: its block
//     is unknown, so nothing can recover exactly.
// A request no record vouches for (the newest, and with appends in flight
// together the few before it) may fail damaged or torn: it is dropped, as
// a torn append would be (`dropped`).
//
// After a replay the disk must not append in the same epoch: it drains the
// replayed records to segments and resets (epoch + 1) first. Otherwise
// records of an unacknowledged request past next_seq, left by the crash,
// could line up behind new ones and be read as their continuation.
//
// Invariants of a decoded record: seq >= 1; version >= 1; logical block <
// shape.logical_blocks; request_first_seq <= seq < request_first_seq +
// request_blocks; durable seq < request_first_seq; a data record's data is
// shape's block bytes; a trim record has trim_blocks >= 1, logical_block +
// trim_blocks <= shape.logical_blocks, and empty data.
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_LLD_NVRAM_LOG_H_
#define VLD_CORE_LLD_NVRAM_LOG_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/lld/lld_shape.h"
#include "core/util/mac.h"

namespace vld {

inline constexpr uint32_t kNvramHeaderSlotBytes = 512;
inline constexpr uint32_t kNvramRecordsOffsetBytes = 2 * kNvramHeaderSlotBytes;
inline constexpr uint32_t kNvramPackedHeaderBytes = 64;   // format_version 2
inline constexpr uint32_t kNvramSectorHeaderBytes = 512;  // format_version 3

struct NvramHeader {
  uint64_t epoch = 1;      // > 0, +1 per reset; slot = epoch % 2
  uint64_t first_seq = 1;  // > 0, seq of record 0 in this epoch
  bool operator==(const NvramHeader&) const = default;
};

// One record to append: a block, or a trim (trim_blocks > 0, data empty).
struct NvramBlock {
  uint32_t logical_block = 0;
  uint64_t version = 0;
  std::span<const unsigned char> data;  // block bytes; empty for a trim
  uint32_t trim_blocks = 0;  // > 0: a trim of [logical_block, logical_block + trim_blocks)
  // data_checksum(data, logical_block) if the caller has it (its LogEntry
  // does), so that a write's block is not read twice; nullopt:
  // encode_nvram_request computes it. REQUIRES: the checksum of `data`.
  std::optional<uint32_t> checksum;
};

struct NvramRecord {
  uint64_t seq = 0;
  uint32_t logical_block = 0;
  uint64_t version = 0;
  std::vector<unsigned char> data;  // block bytes; empty for a trim
  uint32_t trim_blocks = 0;         // > 0: a trim of [logical_block, logical_block + trim_blocks)
  bool operator==(const NvramRecord&) const = default;
};

// A vouched record whose header is authentic but whose block fails its
// checksum (see Damage above).
struct NvramDamagedRecord {
  uint64_t seq = 0;
  uint32_t logical_block = 0;
  uint64_t version = 0;
  bool operator==(const NvramDamagedRecord&) const = default;
};

struct NvramReplay {
  NvramHeader header;
  std::vector<NvramRecord> records;  // in seq order: first_seq, first_seq + 1, ..
  uint64_t next_seq = 1;             // seq (and so, record index) of the next append
  // Records of whole, vouched requests that are not in `records`.
  std::vector<NvramDamagedRecord> damaged;
  // Non-empty: a vouched record cannot be read at all (what, where).
  std::string damage;
  // The newest header slot failed and was rebuilt from its epoch's records.
  bool header_rebuilt = false;
  // Records of the newest request that the walk read and dropped: it was
  // cut short (never acknowledged), or damaged where nothing can tell the
  // two apart.
  uint64_t dropped = 0;
};

// Bytes of one record (header + block), and how many fit in region_bytes.
uint64_t nvram_record_bytes(const LldShape& shape);
inline uint64_t nvram_record_header_bytes(const LldShape& shape) {
  return shape.nvram_header_sector() ? kNvramSectorHeaderBytes : kNvramPackedHeaderBytes;
}
uint64_t nvram_capacity_records(uint64_t region_bytes, const LldShape& shape);
// Offset within the region of the record with seq. REQUIRES: seq >= h.first_seq.
uint64_t nvram_record_offset(const NvramHeader& h, uint64_t seq, const LldShape& shape);
// Offset within the region of header h's slot.
uint64_t nvram_header_offset(const NvramHeader& h);

// One header slot (512 bytes). REQUIRES: epoch > 0, first_seq > 0.
std::vector<unsigned char> encode_nvram_header(const NvramHeader& h, const MacKey& key);
std::optional<NvramHeader> decode_nvram_header(std::span<const unsigned char> slot,
                                               const MacKey& key);

// The bytes of one request, records seqs first_seq .. first_seq + n - 1, to
// be written at nvram_record_offset(h, first_seq). durable_seq: every
// record up to it is synced (a request's end, or h.first_seq - 1).
// REQUIRES: 1 <= n; each version > 0; a data block's data is shape's block
// bytes and its logical block in range; a trim's data is empty and its
// range within shape.logical_blocks; first_seq >= h.first_seq; h.first_seq
// - 1 <= durable_seq < first_seq, and in format_version 2 durable_seq =
// first_seq - 1. The caller checks that the request fits: seq first_seq + n
// - 1 < h.first_seq + nvram_capacity_records (else drain first).
std::vector<unsigned char> encode_nvram_request(const NvramHeader& h, uint64_t first_seq,
                                                std::span<const NvramBlock> blocks,
                                                uint64_t durable_seq, const LldShape& shape,
                                                const MacKey& key);

// What recovery replays from the region's bytes; nullopt if neither header
// slot is valid and no record tells the epoch. REQUIRES: shape.valid().
std::optional<NvramReplay> replay_nvram(std::span<const unsigned char> region, const MacKey& key,
                                        const LldShape& shape);

}  // namespace vld

#endif  // VLD_CORE_LLD_NVRAM_LOG_H_
