// Canvas: an RGB picture in memory, with the few shapes the layout picture
// draws (filled rectangles, frames, triangles), and write_png to save it.
//
// Invariants: the canvas starts white; drawing is clipped to it, so shapes
// may lie partly (or wholly) outside.
//
// Thread-safety: thread-compatible (external synchronization to draw).
#ifndef VLD_TOOLS_INSPECT_CANVAS_H_
#define VLD_TOOLS_INSPECT_CANVAS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/inspect/colormap.h"

namespace vld::inspect {

class Canvas {
 public:
  Canvas(uint32_t width_px, uint32_t height_px);
  uint32_t width() const { return width_px_; }
  uint32_t height() const { return height_px_; }
  // Row y as width() RGB triples.
  const uint8_t* row(uint32_t y) const { return rgb_.data() + size_t{y} * width_px_ * 3; }

  void fill(int64_t x, int64_t y, int64_t w, int64_t h, Rgb c);
  // A frame of thickness t drawn outside the rectangle (x, y, w, h).
  void frame(int64_t x, int64_t y, int64_t w, int64_t h, int64_t t, Rgb c);
  // A triangle pointing down (tip at (x, y + size - 1)) or right (tip at (x + size - 1, y)).
  void triangle_down(int64_t x, int64_t y, int64_t size, Rgb c);
  void triangle_right(int64_t x, int64_t y, int64_t size, Rgb c);

 private:
  uint32_t width_px_, height_px_;
  std::vector<uint8_t> rgb_;
};

// Writes the canvas to path as an 8-bit RGB PNG. On failure removes what it
// wrote and throws vld::Error saying so ("--layout PATH: ...").
void write_png(const std::string& path, const Canvas& canvas);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_CANVAS_H_
