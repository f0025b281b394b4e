// SectorBitmap: one bit per physical sector of the simulated platters, for
// marking which sectors the recovered state claims.
//
// Invariant: a psn passed in is below the sector count it was made with
// (the caller checks; an out-of-range psn is undefined).
//
// Thread-safety: thread-compatible (external synchronization to write).
#ifndef VLD_TOOLS_INSPECT_SECTOR_BITMAP_H_
#define VLD_TOOLS_INSPECT_SECTOR_BITMAP_H_

#include <cstdint>
#include <vector>

namespace vld::inspect {

class SectorBitmap {
 public:
  explicit SectorBitmap(uint64_t sectors) : bits_((sectors + 63) / 64) {}
  bool test(uint64_t psn) const { return bits_[psn / 64] >> (psn % 64) & 1; }
  // Sets the bit; returns whether it was set already.
  bool test_and_set(uint64_t psn) {
    const uint64_t bit = uint64_t{1} << (psn % 64);
    const bool was = bits_[psn / 64] & bit;
    bits_[psn / 64] |= bit;
    return was;
  }

 private:
  std::vector<uint64_t> bits_;
};

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_SECTOR_BITMAP_H_
