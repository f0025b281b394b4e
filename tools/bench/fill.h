// What the in-process benchmarks share: a preset's image format, the bytes
// they write, and filling a disk's first blocks.
//
// Thread-safety: as DiskController; bench_payload() is safe to call from
// any thread.
#ifndef VLD_TOOLS_BENCH_FILL_H_
#define VLD_TOOLS_BENCH_FILL_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <span>

#include <string>
#include <vector>

#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/util/error.h"
#include "tools/bench/bench_geometry.h"

namespace vld {

// The format of a `mode` image of `export_bytes` in 4 KiB blocks on the
// drive preset `geometry` (bench_geometry); the caller sets the rest
// (spare, NVRAM).
inline FormatOptions preset_format(const std::string& geometry, DiskMode mode,
                                   uint64_t export_bytes) {
  FormatOptions f;
  f.mode = mode;
  f.export_bytes = export_bytes;
  f.block_bytes = 4096;
  f.geometry = bench_geometry(geometry);
  return f;
}

// 1 MiB whose content does not matter, but is not all zeros (writes of
// zeros could be told apart from data by nothing, but read back as holes).
inline const std::vector<std::byte>& bench_payload() {
  static const std::vector<std::byte> v = [] {
    std::vector<std::byte> b(1 << 20);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>(i * 131 % 251 + 1);
    return b;
  }();
  return v;
}

// A sample's median, 99th percentile and largest value: the elements at
// n / 2 and n * 99 / 100 of the sorted sample, and its last; zeros if empty.
struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
};
inline Percentiles percentiles(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 99 / 100], v.back()};
}

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
