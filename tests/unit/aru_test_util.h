// What the ARU tests share: the image a committed group leaves.
#ifndef VLD_TESTS_UNIT_ARU_TEST_UTIL_H_
#define VLD_TESTS_UNIT_ARU_TEST_UTIL_H_

#include <cstring>
#include <span>

#include "core/disk.h"

namespace vld::test {

// Writes `group` into `image` (the export's bytes) as its commit leaves it:
// each block's data, or zeros where it has none.
inline void apply_group(std::span<const GroupBlock> group, std::byte* image, uint64_t block_bytes) {
  for (const GroupBlock& g : group) {
    std::byte* dst = image + g.block * block_bytes;
    if (g.data)
      std::memcpy(dst, g.data, block_bytes);
    else
      std::memset(dst, 0, block_bytes);
  }
}

}  // namespace vld::test

#endif  // VLD_TESTS_UNIT_ARU_TEST_UTIL_H_
