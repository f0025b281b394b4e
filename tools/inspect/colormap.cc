#include "tools/inspect/colormap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace vld::inspect {

Rgb viridis(double x) {
  static constexpr std::array<Rgb, 9> kStops = {{{68, 1, 84},
                                                 {72, 40, 120},
                                                 {62, 73, 137},
                                                 {49, 104, 142},
                                                 {38, 130, 142},
                                                 {31, 158, 137},
                                                 {53, 183, 121},
                                                 {110, 206, 88},
                                                 {253, 231, 37}}};
  x = std::clamp(x, 0.0, 1.0) * (kStops.size() - 1);
  const size_t i = std::min<size_t>(static_cast<size_t>(x), kStops.size() - 2);
  const double t = x - static_cast<double>(i);
  auto mix = [&](uint8_t a, uint8_t b) {
    return static_cast<uint8_t>(std::lround(a + (b - a) * t));
  };
  return {mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g),
          mix(kStops[i].b, kStops[i + 1].b)};
}

}  // namespace vld::inspect
