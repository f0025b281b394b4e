// The superblock of a small test disk on the Seagate ST19101 (paper 001,
// Table 1), 4 KiB blocks: what most unit tests format. Tests that need a
// smaller drive (fewer sectors per track) build their own FormatOptions.
#ifndef VLD_TESTS_UNIT_TEST_SUPERBLOCK_H_
#define VLD_TESTS_UNIT_TEST_SUPERBLOCK_H_

#include <cstdint>

#include "core/image.h"
#include "geometry/presets.h"

namespace vld::test {

inline Superblock st19101_superblock(DiskMode mode, uint64_t export_bytes,
                                     uint32_t spare_percent = 25) {
  FormatOptions o;
  o.mode = mode;
  o.export_bytes = export_bytes;
  o.block_bytes = 4096;
  o.spare_percent = spare_percent;
  o.geometry = *find_preset("st19101");
  return plan_image(o);
}

}  // namespace vld::test

#endif  // VLD_TESTS_UNIT_TEST_SUPERBLOCK_H_
