// TrackSlots: the map inverted, per track: which logical block starts in
// each block-sized slot of each track, kept up to date as blocks move, so
// that compaction and repack find what a track holds, and how much,
// without scanning the whole map (at 1 TiB such a scan costs 0.2-0.5 s of
// CPU on a request's path: docs/scale.md, section 2).
//
// Layout: track t has ceil(sectors / block_sectors) slots, from
// first_slot_[t] on; a block that starts at sector s of t is in slot
// first_slot_[t] + s / block_sectors. No two blocks share a slot: blocks
// on a track do not overlap (one that wraps past the track's last sector
// included), so their starts lie at least block_sectors apart, and so do
// their slots' numbers. Adding and removing are O(1), one cache line; a
// track's blocks are one run of slots, in the order of their sectors.
//
// Why slots and not a list threaded through the blocks (4 bytes a block,
// one link each): removing from a singly linked list walks the track's
// list, and through nbdkit that walk is a cache miss per block passed
// (10% of the plugin's CPU per write at QD 16: docs/benchmarks.md, section
// 24); a second link would cost 4 bytes more a block. Slots cost 4 bytes
// per block-sized piece of the platters, free or not: 1.26 MiB per GiB
// exported on st19101 with spare=25, against 1.00 for the one link
// (docs/scale.md, section 3).
//
// Invariants: count_[t] is the number of slots of t holding a block; each
// block is in at most one slot (check()).
//
// Thread-safety: not thread-safe; owned by VldDisk under the controller lock.
#ifndef VLD_CORE_VLD_TRACK_SLOTS_H_
#define VLD_CORE_VLD_TRACK_SLOTS_H_

#include <cassert>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vld {

class TrackSlots {
 public:
  // sectors_of(t): the sectors of track t, for t < tracks.
  // REQUIRES: block_sectors >= 1; the platters' slots number below kNone.
  TrackSlots(uint32_t tracks, uint32_t block_sectors,
             const std::function<uint32_t(uint32_t)>& sectors_of);

  static constexpr uint32_t kNone = UINT32_MAX;  // a slot that holds no block

  // REQUIRES: block < kNone; no block starts in sector's slot of track.
  void add(uint32_t track, uint32_t sector, uint32_t block) {
    uint32_t& s = slot(track, sector);
    assert(block != kNone && s == kNone);
    s = block;
    ++count_[track];
  }
  // REQUIRES: `block` starts at `sector` of `track`.
  void remove(uint32_t track, uint32_t sector, uint32_t block) {
    uint32_t& s = slot(track, sector);
    assert(s == block && count_[track] > 0);
    (void)block;
    s = kNone;
    --count_[track];
  }
  uint32_t count(uint32_t track) const { return count_[track]; }
  // Appends the track's blocks to *out, in the order of their sectors.
  void items(uint32_t track, std::vector<uint32_t>* out) const;
  // Bytes of the arrays (capacity), for docs/scale.md and the stats.
  uint64_t memory_bytes() const;

  // Where a block starts: its track and sector there.
  struct Where {
    uint32_t track, sector;
  };
  // Debug check against the truth: where(b) for each block b < blocks is
  // where the map puts it (nullopt: nowhere). "" or what is wrong.
  // O(blocks + slots).
  std::string check(uint64_t blocks,
                    const std::function<std::optional<Where>(uint32_t)>& where) const;

 private:
  uint32_t& slot(uint32_t track, uint32_t sector) {
    assert(track + 1 < first_slot_.size() &&
           first_slot_[track] + sector / block_sectors_ < first_slot_[track + 1]);
    return slots_[first_slot_[track] + sector / block_sectors_];
  }

  uint32_t block_sectors_;
  std::vector<uint32_t> first_slot_;  // per track, and one past the last track's slots
  std::vector<uint32_t> count_;       // per track
  std::vector<uint32_t> slots_;       // per slot: the block that starts in it, or kNone
};

}  // namespace vld

#endif  // VLD_CORE_VLD_TRACK_SLOTS_H_
