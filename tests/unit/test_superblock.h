// The superblock of a small test disk on the Seagate ST19101 (paper 001,
// Table 1), 4 KiB blocks unless asked: what most unit tests format. Tests that need a
// smaller drive (fewer sectors per track) build their own FormatOptions.
#ifndef VLD_TESTS_UNIT_TEST_SUPERBLOCK_H_
#define VLD_TESTS_UNIT_TEST_SUPERBLOCK_H_

#include <cstdint>

#include "core/modes/mode_image.h"
#include "geometry/presets.h"

namespace vld::test {

inline Superblock st19101_superblock(DiskMode mode, uint64_t export_bytes,
                                     uint32_t spare_percent = 25, uint32_t block_bytes = 4096) {
  FormatOptions o;
  o.mode = mode;
  o.export_bytes = export_bytes;
  o.block_bytes = block_bytes;
  o.spare_percent = spare_percent;
  o.geometry = *find_preset("st19101");
  return plan_image(o);
}

// An ST19101 cut down to 64 sectors a track and 4 tracks a cylinder: a
// disk of a few hundred KiB spans several cylinders, and its tracks fill
// and fragment after a few dozen writes.
inline DriveGeometry small_st19101_geometry() {
  DriveGeometry g = *find_preset("st19101");
  g.sectors_per_track = 64;
  g.tracks_per_cylinder = 4;
  g.derive_skews();
  return g;
}

}  // namespace vld::test

#endif  // VLD_TESTS_UNIT_TEST_SUPERBLOCK_H_
