// Colours of the layout picture: RGB triples, and viridis, the colour map
// for a track's live fraction.
//
// viridis (matplotlib's, sampled at 0, 1/8, ..., 1 and interpolated) is
// sequential and still ordered in grey scale, so the picture reads printed
// in black and white too.
//
// Thread-safety: functions of their arguments.
#ifndef VLD_TOOLS_INSPECT_COLORMAP_H_
#define VLD_TOOLS_INSPECT_COLORMAP_H_

#include <cstdint>

namespace vld::inspect {

struct Rgb {
  uint8_t r, g, b;
};

// x in [0, 1] (clamped): dark purple at 0, yellow at 1.
Rgb viridis(double x);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_COLORMAP_H_
