// TrackLists: which items (logical blocks, or map pieces) lie on each track,
// kept up to date as items move, so that compaction and repack find what a
// track holds, and how much, without scanning the whole map (at 1 TiB such
// a scan costs 0.2-0.5 s of CPU on a request's path: docs/scale.md,
// section 2).
// VldDisk keeps two: the data blocks the map points into each track, and
// the pieces whose live map sector is on it (VldDisk::live_on).
//
// Layout: one list per track, threaded through arrays indexed by item:
// head_[track] is the track's first item and next_[item] the one after it
// (kNone ends a list; an item on no track is in no list). count_[track] is
// the list's length. Adding is O(1); removing walks the track's list, at
// most what one track holds (st19101: 31 blocks of 4 KiB), unless the lists
// are doubly linked (prev_), which pieces are: a track of map sectors holds
// up to 256 of them, and a checkpoint moves every piece.
//
// Memory, per GiB exported (4 KiB blocks, st19101, spare=25: 262,144
// blocks, 8192 pieces, ~10,300 tracks): blocks 4 bytes each (1.00 MiB) +
// 8 per track (0.08 MiB); pieces 8 bytes each (0.06 MiB) + 8 per track
// (0.08 MiB): 1.2 MiB in all, beside the map's 2.0.
//
// Why every track and 4 bytes a block, when memory is tight (point 2 asks
// for 2.5 MiB per GiB in all): a list for a bounded set of tracks (the
// cylinder window, where the compactor picks victims) would have to be
// filled by a scan of the map whenever the set moves, and it moves with
// every window the compactor's sweep visits and every repack (whose victim
// may be any track): the very scan this replaces. Any exact answer for
// every track needs about log2(blocks / blocks-per-track) bits per live
// block (which of the export's blocks lie on the track: ~23 bits at 1 TiB),
// so 32 bits is within 40% of what any encoding could do. The honest
// alternative is the scan. (docs/scale.md has the measured numbers.)
//
// Thread-safety: not thread-safe; owned by VldDisk under the controller lock.
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
  TrackLists(uint32_t tracks, uint64_t items, bool doubly_linked);

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
  std::vector<uint32_t> next_, prev_;   // per item; prev_ empty unless doubly linked
};

}  // namespace vld

#endif  // VLD_CORE_VLD_TRACK_LISTS_H_
