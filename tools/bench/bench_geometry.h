// The drive preset a vld-bench subcommand's --geometry names, or the
// one-line error every subcommand gives for a name that is none.
//
// Thread-safety: a pure function.
#ifndef VLD_TOOLS_BENCH_BENCH_GEOMETRY_H_
#define VLD_TOOLS_BENCH_BENCH_GEOMETRY_H_

#include <cerrno>
#include <string>

#include "core/util/error.h"
#include "geometry/drive_file.h"
#include "geometry/drive_geometry.h"
#include "geometry/presets.h"

namespace vld {

// The preset `geometry` (skews derived, as find_preset gives them), or the
// drive file it names (geometry/drive_file.h). Throws Error(EINVAL) naming
// the presets if there is no such preset, or the file's error.
inline DriveGeometry bench_geometry(const std::string& geometry) {
  if (names_drive_file(geometry)) {
    std::string why;
    auto g = load_drive(geometry, &why);
    if (!g) throw Error("--geometry " + why, EINVAL);
    return *g;
  }
  auto g = find_preset(geometry);
  if (!g)
    throw Error("--geometry " + geometry + ": unknown; choose one of " + preset_names_joined(", ") +
                    ", or a drive file (a path, or NAME.drive)",
                EINVAL);
  return *g;
}

// As bench_geometry, for an experiment of a single-zone model (paper 001's
// sections 2 and 4: one number of sectors per track). Throws Error(EINVAL)
// for a zoned drive.
inline DriveGeometry single_zone_geometry(const std::string& geometry, const char* experiment) {
  DriveGeometry g = bench_geometry(geometry);
  if (g.zoned())
    throw Error(std::string(experiment) + ": --geometry " + geometry + " has " +
                    std::to_string(g.zone_count()) + " zones, and this experiment models one "
                    "(paper 001's single-zone analysis); choose a single-zone drive such as "
                    "st19101",
                EINVAL);
  return g;
}

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_BENCH_GEOMETRY_H_
