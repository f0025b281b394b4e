// SegmentSummary: what mode=lld writes at the head of every segment write,
// naming each data block in that write. The byte layout is in
// docs/format.md, "mode=lld / Segment summary"; this header must agree.
//
// A segment (LldShape::segment_sectors, 512 KiB by default: paper 001,
// section 4.4) is filled in memory and written in one sequential transfer.
// A sync below the partial-segment threshold writes a *partial segment*:
// the blocks gathered since the segment's last write, appended after it.
// Each write, full or partial, is
//
//   [summary: summary_sectors(n) sectors][block 0] .. [block n-1]
//
// starting at sector first_sector of the segment. The summary *leads* the
// write, as in Sprite LFS (one summary block per partial segment, at its
// start), not trailing it as in paper 000's Figure 3 where a segment is only
// ever written whole. Leading, the position of every write's summary is
// known before reading it: the checkpoint names where the next write goes,
// and each summary says where the one after it goes (the same segment right
// after its blocks, or next_segment's sector 0 once it closes the segment),
// so roll-forward walks writes without scanning. A torn write is caught by
// the per-block data checksums, whichever sectors the crash lost.
//
// Invariants of a decoded summary: seq > 0 and strictly increasing over all
// writes, +1 per write (roll-forward stops at the first gap); 1 <= blocks <=
// max_blocks_per_write(shape); the write fits in its segment; each logical
// block appears at most once and has version > 0.
//
// The summary's size depends on its block count: a small sync costs one
// sector (up to 29 blocks), a full 512 KiB segment of 4 KiB blocks five.
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

struct SummaryEntry {
  uint32_t logical_block = 0;
  uint32_t checksum = 0;  // data_checksum(block, logical_block), core/vld/map_sector.h
  uint64_t version = 0;   // +1 per write of this logical block; 0: never written
  bool operator==(const SummaryEntry&) const = default;
};

struct SegmentSummary {
  uint32_t segment = 0;
  uint64_t seq = 0;
  uint32_t first_sector = 0;  // of this write (its summary) within the segment
  uint32_t next_segment = 0;  // where the log goes once this segment is closed
  bool closes_segment = false;  // no write follows in this segment
  std::vector<SummaryEntry> blocks;
  bool operator==(const SegmentSummary&) const = default;

  // Sector (within the segment) where the write after this one starts.
  uint32_t end_sector(const LldShape& shape) const;
};

// Sectors of the summary of a write of block_count blocks.
uint32_t summary_sectors(uint32_t block_count);
// The most blocks one write (a whole segment) can hold with its summary.
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
