// TrackLists: which items (mode=vld's map pieces) lie on each track, kept
// up to date as items move, so that compaction and repack find what a
// track holds, and how much, without scanning every log node (docs/scale.md,
// section 2). VldDisk keeps the pieces whose live map sector is on each
// track (VldDisk::live_on); its data blocks are in TrackSlots
// (core/vld/track_slots.h), one slot per block-sized piece of a track,
// which would cost a slot per sector here.
//
// Layout: one doubly linked list per track, threaded through arrays
// indexed by item: head_[track] is the track's first item, next_[item] and
// prev_[item] its neighbours (kNone ends a list; an item on no track is in
// no list). count_[track] is the list's length. Adding and removing are
// O(1): a track of map sectors holds up to 256 of them, and a checkpoint
// moves every piece.
//
// Memory, per GiB exported (st19101, spare=25: 8192 pieces, ~10,300
// tracks): 8 bytes a piece (0.06 MiB) + 8 a track (0.08 MiB).
//
// Thread-safety: not thread-safe; owned by VirtualLog under the controller lock.
#ifndef VLD_CORE_VLD_TRACK_LISTS_H_
#define VLD_CORE_VLD_TRACK_LISTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vld {

class TrackLists {
 public:
  // items: ids 0 .. items-1, all < kNone (item ids are 32-bit: blocks and
  // pieces of an image are fewer than its 2^32 - 1 sectors).
  TrackLists(uint32_t tracks, uint64_t items);

  static constexpr uint32_t kNone = UINT32_MAX;

  // REQUIRES: item is on no track.
  void add(uint32_t track, uint32_t item);
  // REQUIRES: item is on `track`.
  void remove(uint32_t track, uint32_t item);
  uint32_t count(uint32_t track) const { return count_[track]; }
  // Appends the track's items to *out, in no particular order.
  void items(uint32_t track, std::vector<uint32_t>* out) const;
  // Bytes of the arrays (capacity), for docs/scale.md and the stats.
  uint64_t memory_bytes() const;

  // Debug check against the truth: track_of(item) is the track the item
  // should be on (nullopt: none). "" or what is wrong. O(items + tracks).
  std::string check(const std::function<std::optional<uint32_t>(uint32_t)>& track_of) const;

 private:
  std::vector<uint32_t> head_, count_;  // per track
  std::vector<uint32_t> next_, prev_;   // per item
};

}  // namespace vld

#endif  // VLD_CORE_VLD_TRACK_LISTS_H_
