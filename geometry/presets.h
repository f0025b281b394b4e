// Named drive presets: geometry=hp97560|st19101|<modern>.
//
// Every number is from a published source named next to it in presets.cc and
// in docs/geometry.md. Thread-safety: pure functions.
#ifndef VLD_GEOMETRY_PRESETS_H_
#define VLD_GEOMETRY_PRESETS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "geometry/drive_geometry.h"

namespace vld {

// The preset's geometry with skews derived, or nullopt for an unknown name.
std::optional<DriveGeometry> find_preset(std::string_view name);
std::vector<std::string> preset_names();
// The names joined by `sep`, e.g. "hp97560, hp97560-rw, st19101, savvio10k4".
std::string preset_names_joined(std::string_view sep);

}  // namespace vld

#endif  // VLD_GEOMETRY_PRESETS_H_
