// Large sparse mode=vld images for the benchmarks that need one (scan,
// recovery): the drive given as many cylinders as the export needs, a file
// in a directory of its own that go when the ScratchImage does, and the
// random blocks their workloads write.
//
// Thread-safety: values; one owner each.
#ifndef VLD_TOOLS_BENCH_SCRATCH_IMAGE_H_
#define VLD_TOOLS_BENCH_SCRATCH_IMAGE_H_

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>

#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/util/error.h"
#include "tools/bench/bench_geometry.h"

namespace vld {

// The drive: the preset, with as many cylinders as the export needs at the
// default spare (25%).
inline Superblock plan_large_vld(const std::string& geometry, uint64_t export_bytes) {
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = export_bytes;
  o.geometry = bench_geometry(geometry);
  o.geometry.cylinders = std::max(
      o.geometry.cylinders, cylinders_needed(o.geometry, o.export_bytes, o.block_bytes, 25));
  return plan_image(o);
}

// A block's bytes from the workload's generator, 8 at a time (the writes of
// scan and recovery; their seeds' results depend on this order).
// REQUIRES: data.size() is a multiple of 8.
inline void fill_random(std::span<std::byte> data, std::mt19937_64& rng) {
  for (size_t k = 0; k < data.size(); k += 8) {
    const uint64_t x = rng();
    std::copy_n(reinterpret_cast<const std::byte*>(&x), 8, data.begin() + k);
  }
}

// A new image path in a new directory under `parent`; both go when it does.
struct ScratchImage {
  std::string dir, path;
  ScratchImage(const std::string& parent, const std::string& who) {
    std::string tmpl = parent + "/vld-bench-" + who + "-XXXXXX";
    if (!mkdtemp(tmpl.data()))
      throw Error("vld-bench " + who + ": cannot make a directory in " + parent +
                      ": choose another with --dir",
                  EIO);
    dir = tmpl;
    path = dir + "/disk.img";
  }
  ~ScratchImage() {
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
  ScratchImage(const ScratchImage&) = delete;
  ScratchImage& operator=(const ScratchImage&) = delete;
};

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_SCRATCH_IMAGE_H_
