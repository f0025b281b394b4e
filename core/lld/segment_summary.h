// SegmentSummary: what mode=lld writes at the head of every segment write,
// naming each data block and each trim in that write. The byte layout is in
// docs/format.md, "mode=lld / Segment summary"; this header must agree.
//
// A segment (LldShape::segment_sectors, 512 KiB by default: paper 001,
// section 4.4) is filled in memory and written in one sequential transfer.
// A sync below the partial-segment threshold writes a *partial segment*:
// the entries gathered since the segment's last write, appended after it.
// Each write, full or partial, is
//
//   [summary: summary_sectors(n) sectors][block 0] .. [block d-1]
//
// starting at sector first_sector of the segment: n entries, d of them data
// entries (data_blocks()), whose blocks follow the summary in entry order.
// A *trim entry* (trim_blocks > 0) records that logical blocks
// [logical_block, logical_block + trim_blocks) were trimmed at version; no
// block follows for it. A write holds at least one entry; a trim-only write
// is a summary alone.
//
// The summary *leads* the write, as in Sprite LFS (one summary block per
// partial segment, at its start), not trailing it as in paper 000's Figure 3
// where a segment is only ever written whole. Leading, the position of every write's summary is
// known before reading it: the checkpoint names where the next write goes,
// and each summary says where the one after it goes (the same segment right
// after its blocks, or next_segment's sector 0 once it closes the segment),
// so roll-forward walks writes without scanning. A torn write is caught by
// the per-block data checksums, whichever sectors the crash lost.
//
// Requests that span writes: a request's entries may not all fit in the
// write (the segment fills, or a request exceeds max_blocks_per_write). A
// write with `continues` set says that the request whose entries end it
// goes on in the next write; roll-forward applies such a write only together
// with the writes after it up to and including the next one without the
// flag, so a request is recovered whole or not at all. A write may both
// close its segment and continue: the rest of the request is then at
// next_segment's sector 0. (Drains of the NVRAM never set the flag: the
// NVRAM region keeps its requests whole until the drain is durable.)
//
// Invariants of a decoded summary: seq > 0 and strictly increasing over all
// writes, +1 per write (roll-forward stops at the first gap); 1 <= entries;
// the summary and the whole write fit in the segment from first_sector (so
// data_blocks() <= max_blocks_per_write(shape)); every version is in
// [1, 2^63); a data entry's logical block < shape.logical_blocks; a trim
// entry has trim_blocks >= 1, its range within shape.logical_blocks, and
// checksum 0. A logical block may appear more than once (with nvram=0 one
// write may carry two versions of a block): later entries win.
//
// The summary's size depends on its entry count: a small sync costs one
// sector (up to 29 entries), a full 512 KiB segment of 4 KiB blocks five.
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_LLD_SEGMENT_SUMMARY_H_
#define VLD_CORE_LLD_SEGMENT_SUMMARY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/lld/lld_shape.h"
#include "core/util/mac.h"

namespace vld {

inline constexpr uint32_t kSummaryHeaderBytes = 32;
inline constexpr uint32_t kSummaryEntryBytes = 16;
inline constexpr uint32_t kSummaryClosesSegment = 1;  // flags bit 0
inline constexpr uint32_t kSummaryContinues = 2;      // flags bit 1
// Bit 63 of an entry's version field marks a trim entry; versions stay below it.
inline constexpr uint64_t kSummaryTrimBit = uint64_t{1} << 63;

struct SummaryEntry {
  uint32_t logical_block = 0;
  // data_checksum(block, logical_block), core/util/checksum.h; unused (0) in a trim.
  uint32_t checksum = 0;
  uint64_t version = 0;  // in [1, 2^63): higher is newer, per logical block
  // > 0: a trim of [logical_block, logical_block + trim_blocks); no block follows.
  uint32_t trim_blocks = 0;
  bool operator==(const SummaryEntry&) const = default;
};

struct SegmentSummary {
  uint32_t segment = 0;
  uint64_t seq = 0;
  uint32_t first_sector = 0;  // of this write (its summary) within the segment
  uint32_t next_segment = 0;  // where the log goes once this segment is closed
  bool closes_segment = false;  // no write follows in this segment
  bool continues = false;       // the request ending this write goes on in the next write
  std::vector<SummaryEntry> blocks;  // the entries, data and trim, in write order
  bool operator==(const SegmentSummary&) const = default;

  // Entries with trim_blocks == 0: the blocks that follow the summary.
  uint32_t data_blocks() const;
  // Sector (within the segment) where the write after this one would start:
  // first_sector + summary_sectors(entries) + data_blocks() x block_sectors.
  uint32_t end_sector(const LldShape& shape) const;
};

// Sectors of the summary of a write of `entries` entries.
uint32_t summary_sectors(uint32_t entries);
// Sectors of a whole write: its summary, then data_blocks blocks.
// REQUIRES: data_blocks <= entries.
uint64_t write_sectors(uint32_t entries, uint32_t data_blocks, const LldShape& shape);
// The most data blocks one write (a whole segment) can hold with its summary.
// REQUIRES: shape.valid().
uint32_t max_blocks_per_write(const LldShape& shape);

// REQUIRES: s is valid for shape (asserted). Returns summary_sectors(n) * 512 bytes.
std::vector<unsigned char> encode_segment_summary(const SegmentSummary& s, const LldShape& shape,
                                                  const MacKey& key);
// bytes: from the summary's first sector on (the rest of the segment will
// do). nullopt unless the magic and the MAC are right and the fields make
// sense for shape.
std::optional<SegmentSummary> decode_segment_summary(std::span<const unsigned char> bytes,
                                                     const LldShape& shape, const MacKey& key);

}  // namespace vld

#endif  // VLD_CORE_LLD_SEGMENT_SUMMARY_H_
