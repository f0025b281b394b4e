// What the in-process benchmarks share: filling a disk's first blocks.
//
// Thread-safety: as DiskController.
#ifndef VLD_TOOLS_BENCH_FILL_H_
#define VLD_TOOLS_BENCH_FILL_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>

#include "core/disk_controller.h"

namespace vld {

// Writes 4 KiB blocks [0, blocks) in order, 256 at a time (1 MiB writes of
// `mib`'s bytes), then flushes: a region filled sequentially, as a file
// system's first copy-in would.
// REQUIRES: mib holds 1 MiB.
inline void fill_in_order(DiskController& ctl, uint64_t blocks, std::span<const std::byte> mib) {
  assert(mib.size() == 256 * 4096);
  for (uint64_t b = 0; b < blocks; b += 256) {
    const uint64_t n = std::min<uint64_t>(256, blocks - b);
    ctl.write(b * 4096, mib.first(n * 4096), false, std::nullopt);
  }
  ctl.flush(std::nullopt);
}

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_FILL_H_
