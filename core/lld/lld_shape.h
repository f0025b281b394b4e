// LldShape: the sizes mode=lld's on-disk records are checked against, all
// fixed at format time (docs/format.md, "mode=lld"). Decoders refuse a
// record whose fields fall outside them; encoders assert they don't.
//
// Invariants: segment_sectors >= 1 + block_sectors (a segment holds at least
// one block and a one-sector summary); every count is > 0.
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_LLD_LLD_SHAPE_H_
#define VLD_CORE_LLD_LLD_SHAPE_H_

#include <cstdint>

namespace vld {

inline constexpr uint32_t kLldSectorBytes = 512;

struct LldShape {
  uint32_t segment_sectors = 1024;  // 512 KiB segments (paper 001, section 4.4)
  uint32_t block_sectors = 8;       // 4 KiB blocks
  uint32_t segment_count = 0;
  uint32_t logical_blocks = 0;  // export_bytes / block_bytes
  uint64_t platter_sectors = 0;

  bool valid() const {
    return segment_sectors >= 1 + block_sectors && block_sectors > 0 && segment_count > 0 &&
           logical_blocks > 0 && platter_sectors > 0;
  }
};

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_SHAPE_H_
