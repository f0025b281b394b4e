// CylinderStarts: where, by angular slot, a cylinder's tracks start runs of
// free sectors.
//
// A search for the soonest free run (EagerAllocator, paper 001 section 2.2)
// reaches every track of a cylinder but the head's own by the same move: a
// seek to it, or a head switch on the head's cylinder. It arrives at one
// time, over one angular slot, on all of them; which track's run it meets
// first depends only on the run's angular slot (its first sector plus its
// track's skew). So the OR over the cylinder's tracks of their start
// bitmaps (FreeSpaceMap::start_bits), each turned by its track's skew,
// answers for all of them at once: the first set slot in the search's
// window is when the soonest run there passes under the head, and the
// tracks that start one at that slot are found by testing a bit of each.
//
// Invariant: bit a of slots(c, len, shape) is set iff some track h of
// cylinder c has a run of len free sectors (wrapping) starting at sector
// (a - shape.offset_of(h)) mod shape.spt; no bit at or past shape.spt.
//
// Two direct-mapped caches, each entry current while the versions it was
// made from (FreeSpaceMap::version, version_of) are the map's: a cylinder's
// slots, and each track's starts turned to angular slots. A write changes
// a few tracks near the head, several times over (the allocator's trial
// plans); the cylinder's slots are then ORed again from its tracks' turned
// starts, of which only the changed tracks' are turned again.
//
// Thread-safety: not thread-safe; owned by EagerAllocator (under VldDisk's
// lock), which it reads the FreeSpaceMap for.
#ifndef VLD_CORE_VLD_CYLINDER_STARTS_H_
#define VLD_CORE_VLD_CYLINDER_STARTS_H_

#include <cstdint>
#include <vector>

#include "core/vld/free_space_map.h"

namespace vld {

// Where a cylinder's tracks lie round the platter: its head 0's sector 0
// (angular slot), its tracks' sectors and the track skew (mod sectors) that
// each further head adds.
struct CylinderShape {
  uint32_t offset0;
  uint32_t spt;
  uint32_t track_skew;
  // Where head `head`'s sector 0 lies (DriveGeometry::angular_slot's answer:
  // EagerAllocator checks it for every simulated cylinder).
  uint32_t offset_of(uint32_t head) const {
    return static_cast<uint32_t>((offset0 + uint64_t{head} * track_skew) % spt);
  }
};

class CylinderStarts {
 public:
  // For `cylinders` cylinders of `heads` tracks each, tracks c * heads + h
  // of `free`, at most max_spt sectors on any.
  CylinderStarts(const FreeSpaceMap& free, uint32_t cylinders, uint32_t heads, uint32_t max_spt);

  // The cylinder's run starts of len sectors by angular slot (shape.spt
  // bits; see the invariant above). Valid until the next call of slots()
  // or the next change to the map.
  // REQUIRES: cylinder < cylinders, len >= 1, shape is the cylinder's.
  const uint64_t* slots(uint32_t cylinder, uint32_t len, const CylinderShape& shape) const {
    const size_t i = index(cylinder, len, cylinder_mask_);
    const Key& k = cylinder_keys_[i];
    if (k.len == len && k.at == cylinder &&
        k.version == free_.version_of(cylinder * heads_, heads_))
      return &cylinder_words_[i * words_];
    return or_tracks(i, cylinder, len, shape);
  }
  // Whether the track (head h of its cylinder, its sector 0 at angular
  // slot `offset`, of spt sectors) starts a run of len at slot a: the
  // track's turned starts, which slots() ORed.
  // REQUIRES: len >= 1, a < spt, offset and spt the track's.
  bool starts_at(uint32_t track, uint32_t len, uint32_t a, uint32_t offset, uint32_t spt) const {
    if (free_.free_sectors(track) < len) return false;
    const uint64_t* t = turned(track, len, offset, spt);
    return (t[a / 64] >> (a % 64) & 1) != 0;
  }

 private:
  // An entry's cylinder or track, length and version (0 len: empty).
  struct Key {
    uint32_t at = 0;
    uint32_t len = 0;
    uint64_t version = 0;
  };
  // A write's searches ask for a block (8 sectors at 4 KiB), the block and
  // its map sector as one run (9) and a map sector (1): distinct mod 3, so
  // a cylinder or track keeps an entry for each.
  static size_t index(uint32_t at, uint32_t len, size_t mask) {
    return (size_t{at} * 3 + len % 3) & mask;
  }
  // Cylinder entry i made current for (cylinder, len).
  const uint64_t* or_tracks(size_t i, uint32_t cylinder, uint32_t len,
                            const CylinderShape& shape) const;
  // The track's starts of len by angular slot, its sector 0 at slot
  // `offset`: its entry, turned again if the track changed since.
  // REQUIRES: 1 <= len <= the track's free sectors.
  const uint64_t* turned(uint32_t track, uint32_t len, uint32_t offset, uint32_t spt) const {
    const size_t i = index(track, len, track_mask_);
    const Key& k = track_keys_[i];
    if (k.len == len && k.at == track && k.version == free_.version(track))
      return &track_words_[i * words_];
    return turn(i, track, len, offset, spt);
  }
  // Track entry i made current for (track, len): the track's starts of len
  // by angular slot, its sector 0 at slot `offset`.
  const uint64_t* turn(size_t i, uint32_t track, uint32_t len, uint32_t offset,
                       uint32_t spt) const;

  const FreeSpaceMap& free_;
  const uint32_t heads_;
  const uint32_t words_;  // per entry: for the longest track
  static constexpr size_t kMaxCylinderEntries = 1024;
  static constexpr size_t kMaxTrackEntries = 4096;
  size_t cylinder_mask_;  // cylinder_keys_.size() - 1 (a power of two)
  size_t track_mask_;     // track_keys_.size() - 1
  mutable std::vector<Key> cylinder_keys_;
  mutable std::vector<uint64_t> cylinder_words_;  // words_ per entry
  mutable std::vector<Key> track_keys_;
  mutable std::vector<uint64_t> track_words_;     // words_ per entry
};

}  // namespace vld

#endif  // VLD_CORE_VLD_CYLINDER_STARTS_H_
