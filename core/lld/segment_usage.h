// SegmentUsageTable: mode=lld's in-memory segment usage table, per segment
// its live blocks, the seq of its newest write (its "age" for the cleaner)
// and its state. The persistent copy is the checkpoint's usage table
// (core/lld/checkpoint.h; docs/format.md, "mode=lld / Checkpoint slot").
//
// States and the transitions the disk drives:
//
//   free --open()--> open --close()--> full --free_segment()--> free
//
// Blocks are written only into the open segment (write_block); a block
// overwritten or trimmed anywhere is killed where its old copy lives
// (kill_block). A full segment is freed only once every block in it is
// dead: the cleaner rewrites its live blocks elsewhere first, each rewrite
// killing the old copy.
//
// After a crash or a restart the table is rebuilt from the checkpoint's
// usage rows (restore): the checkpoint records no states, so a segment with
// live blocks is full, the one the log was writing into is open, and every
// other is free (including full segments the cleaner had emptied but not
// yet freed). usage_table() gives the rows back for the next checkpoint.
//
// Invariants (each operation asserts its preconditions; consistent()
// checks them all):
// live_blocks <= capacity_blocks for every segment; a free segment has no
// live blocks; at most one segment is open; total_live_blocks() and
// free_count() equal the sums over the segments.
//
// Thread-safety: thread-compatible; the disk serialises access.
#ifndef VLD_CORE_LLD_SEGMENT_USAGE_H_
#define VLD_CORE_LLD_SEGMENT_USAGE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/lld/checkpoint.h"

namespace vld {

enum class SegmentState : uint8_t { kFree, kOpen, kFull };

class SegmentUsageTable {
 public:
  // All segments free. REQUIRES: segment_count > 0, capacity_blocks > 0.
  SegmentUsageTable(uint32_t segment_count, uint32_t capacity_blocks);

  // The table a checkpoint's usage rows describe: open_segment (if any) is
  // open whatever its live count; every other segment with live_blocks > 0
  // is full; every other is free. live_blocks and last_seq are copied as
  // they are (a free segment keeps a nonzero last_seq if its row had one).
  // REQUIRES: usage is not empty; every live_blocks <= capacity_blocks;
  // capacity_blocks > 0; open_segment < usage.size().
  static SegmentUsageTable restore(std::span<const SegmentUsage> usage, uint32_t capacity_blocks,
                                   std::optional<uint32_t> open_segment);

  uint32_t segment_count() const { return static_cast<uint32_t>(usage_.size()); }
  uint32_t capacity_blocks() const { return capacity_blocks_; }
  const SegmentUsage& usage(uint32_t segment) const { return usage_.at(segment); }
  SegmentState state(uint32_t segment) const { return state_.at(segment); }
  std::optional<uint32_t> open_segment() const { return open_; }
  uint32_t free_count() const { return free_count_; }
  uint64_t total_live_blocks() const { return total_live_blocks_; }

  // REQUIRES: segment is free and no segment is open.
  void open(uint32_t segment);
  // A block written into the open segment by the segment write with seq.
  // REQUIRES: segment is open; its live_blocks < capacity; seq >= its last_seq.
  void write_block(uint32_t segment, uint64_t seq);
  // REQUIRES: segment is open.
  void close(uint32_t segment);
  // The copy of a block in segment is dead (overwritten, trimmed, or moved
  // by the cleaner). REQUIRES: segment is open or full, live_blocks > 0.
  void kill_block(uint32_t segment);
  // After cleaning. REQUIRES: segment is full and live_blocks == 0.
  void free_segment(uint32_t segment);

  // The lowest-numbered free segment, if any (where the log goes next).
  std::optional<uint32_t> lowest_free() const { return free_at_or_after(0); }
  // The lowest-numbered free segment numbered first or above, if any.
  std::optional<uint32_t> free_at_or_after(uint32_t first) const;
  // Full segments with no live block: freed at the next checkpoint without
  // cleaning. A scan of every segment.
  uint32_t empty_full_count() const;
  // A copy of every segment's row, in segment order: the checkpoint's usage table.
  std::vector<SegmentUsage> usage_table() const { return usage_; }
  std::span<const SegmentUsage> rows() const { return usage_; }
  // True if every invariant above holds (a full scan: for tests and debug builds).
  bool consistent() const;

 private:
  std::vector<SegmentUsage> usage_;
  std::vector<SegmentState> state_;
  uint32_t capacity_blocks_;
  std::optional<uint32_t> open_;
  uint32_t free_count_;
  uint64_t total_live_blocks_ = 0;
};

}  // namespace vld

#endif  // VLD_CORE_LLD_SEGMENT_USAGE_H_
