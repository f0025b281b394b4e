#include "core/vld/cylinder_starts.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "core/vld/track_bits.h"

namespace vld {

CylinderStarts::CylinderStarts(const FreeSpaceMap& free, uint32_t cylinders, uint32_t heads,
                               uint32_t max_spt)
    : free_(free),
      heads_(heads),
      words_((max_spt + 63) / 64),
      cylinder_mask_(std::min(std::bit_ceil(size_t{cylinders} * 3), kMaxCylinderEntries) - 1),
      track_mask_(std::min(std::bit_ceil(size_t{cylinders} * heads * 3), kMaxTrackEntries) - 1),
      cylinder_keys_(cylinder_mask_ + 1),
      cylinder_words_(cylinder_keys_.size() * words_, 0),
      track_keys_(track_mask_ + 1),
      track_words_(track_keys_.size() * words_, 0) {
  assert(heads_ >= 1 && max_spt >= 1);
}

const uint64_t* CylinderStarts::or_tracks(size_t i, uint32_t cylinder, uint32_t len,
                                          const CylinderShape& shape) const {
  const uint32_t spt = shape.spt;
  const uint32_t words = (spt + 63) / 64;
  assert(words <= words_ && shape.offset0 < spt && shape.track_skew < spt);
  uint64_t* out = &cylinder_words_[i * words_];
  std::fill(out, out + words, 0);
  const uint32_t first_track = cylinder * heads_;
  uint32_t offset = shape.offset0;  // head h's sector 0, by angular slot
  for (uint32_t h = 0; h < heads_; ++h) {
    const uint32_t track = first_track + h;
    assert(free_.sectors_on(track) == spt);
    if (free_.free_sectors(track) >= len) {
      const uint64_t* t = turned(track, len, offset, spt);  // mostly unchanged since
      uint32_t w = 0;
      for (; w + 4 <= words; w += 4) {  // four at a time: st19101's whole track
        out[w] |= t[w];
        out[w + 1] |= t[w + 1];
        out[w + 2] |= t[w + 2];
        out[w + 3] |= t[w + 3];
      }
      for (; w < words; ++w) out[w] |= t[w];
    }
    offset += shape.track_skew;
    if (offset >= spt) offset -= spt;
  }
  cylinder_keys_[i] = Key{cylinder, len, free_.version_of(first_track, heads_)};
  return out;
}

const uint64_t* CylinderStarts::turn(size_t i, uint32_t track, uint32_t len, uint32_t offset,
                                     uint32_t spt) const {
  uint64_t* out = &track_words_[i * words_];
  const uint32_t words = (spt + 63) / 64;
  const FreeSpaceMap::StartBits starts = free_.start_bits(track, len);
  // Slot a is sector (a - offset) mod spt: each word of slots from the
  // sectors that pass under it.
  uint32_t sector = offset == 0 ? 0 : spt - offset;  // under slot 0
  for (uint32_t w = 0; w < words; ++w) {
    const uint32_t n = std::min(64u, spt - w * 64);
    const uint64_t bits = track_bits::cyclic_bits(starts.words, spt, sector, n);
    out[w] = starts.invert ? ~bits & (n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1) : bits;
    sector += 64;
    if (sector >= spt) sector -= spt;
  }
  track_keys_[i] = Key{track, len, free_.version(track)};
  return out;
}

}  // namespace vld
