// TrackBuffer: the drive's read-ahead buffer, one track deep (paper 001,
// section 4.2, "the interaction between eager writing and the disk track
// buffer read-ahead algorithm").
//
// Eager writing means that data read sequentially by logical address need
// not lie at increasing physical addresses: a file written randomly and then
// read in order visits sectors of a track in any rotational order. A buffer
// that keeps only sectors from the current request onward (the Dartmouth
// simulator's) throws away exactly the sectors the next request wants. The
// paper's fix, modelled here: as soon as the head reaches a track to read,
// the drive reads every sector that passes under it into the buffer, and
// keeps them until another track is read; a request whose sectors are all
// in the buffer costs no media time.
//
// The buffer holds sector numbers of one track (not angular slots). Writes do
// not discard it: the drive writes through, so buffered sectors stay
// coherent.
//
// Thread-safety: not thread-safe; owned by DriveModel.
#ifndef VLD_GEOMETRY_TRACK_BUFFER_H_
#define VLD_GEOMETRY_TRACK_BUFFER_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <vector>

namespace vld {

class TrackBuffer {
 public:
  // max_sectors_per_track: the longest track of the drive (its outer zone's).
  explicit TrackBuffer(uint32_t max_sectors_per_track)
      : bits_((max_sectors_per_track + 63) / 64, 0) {}

  std::optional<uint32_t> track() const { return track_; }
  // Empties the buffer and dedicates it to `track`, which has `sectors`.
  // REQUIRES: sectors <= the constructor's max_sectors_per_track.
  void start(uint32_t track, uint32_t sectors) {
    assert(sectors <= bits_.size() * 64);
    track_ = track;
    spt_ = sectors;
    std::fill(bits_.begin(), bits_.end(), 0);
    count_ = 0;
  }
  void clear() {
    track_.reset();
    std::fill(bits_.begin(), bits_.end(), 0);
    count_ = 0;
  }
  bool has(uint32_t sector) const { return bits_[sector / 64] >> (sector % 64) & 1; }
  void add(uint32_t sector) {
    uint64_t& w = bits_[sector / 64];
    const uint64_t bit = uint64_t{1} << (sector % 64);
    if (!(w & bit)) {
      w |= bit;
      ++count_;
    }
  }
  bool full() const { return track_ && count_ == spt_; }
  // Whether sectors [first, first + count) of `track` (no wrap) are all here.
  bool has_all(uint32_t track, uint32_t first, uint32_t count) const {
    if (track_ != track) return false;
    if (full()) return true;
    for (uint32_t s = first; s < first + count; ++s)
      if (!has(s)) return false;
    return true;
  }

 private:
  uint32_t spt_ = 0;  // the buffered track's sectors
  std::optional<uint32_t> track_;
  std::vector<uint64_t> bits_;
  uint32_t count_ = 0;
};

}  // namespace vld

#endif  // VLD_GEOMETRY_TRACK_BUFFER_H_
