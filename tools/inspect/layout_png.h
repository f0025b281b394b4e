// draw_layout: a PNG picture of an inspected image's platters, and the
// caption that says how to read it.
//
// One cell per track: cylinders across (several to a column when there are
// more than LayoutPlan::kMaxColumns), heads down, coloured by the track's
// live data sectors / sectors per track (viridis; light grey for an empty
// track, black for vld's system track). For mode=vld with a log record, the
// log tail and the head's last position are framed and pointed at from the
// edges, and the record's window is a blue bar under the grid. A legend
// (colour bar, swatches) sits below.
//
// Invariants of a LayoutPlan: every cylinder falls in a column < columns;
// the grid and the legend lie inside width x height.
//
// Thread-safety: functions of their arguments (draw_layout writes path).
#ifndef VLD_TOOLS_INSPECT_LAYOUT_PNG_H_
#define VLD_TOOLS_INSPECT_LAYOUT_PNG_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/inspect/inspection.h"

namespace vld::inspect {

// How the platters map onto pixels.
struct LayoutPlan {
  static constexpr uint32_t kMaxColumns = 1600;
  static constexpr uint32_t kTargetGridWidthPx = 1200;
  static constexpr uint32_t kTargetGridHeightPx = 400;
  static constexpr uint32_t kLeftPx = 24, kTopPx = 28, kRightPx = 16;
  static constexpr uint32_t kColorbarPx = 256, kSwatchPx = 14, kGapPx = 14;

  uint32_t cylinders, heads;
  uint32_t cylinders_per_column, columns;
  uint32_t cell_width_px, row_height_px;
  uint32_t grid_x, grid_y, grid_w, grid_h;
  uint32_t window_bar_y, legend_y;
  uint32_t width, height;
  uint32_t tick_every_cylinders;

  LayoutPlan(uint32_t cylinder_count, uint32_t head_count);
  uint32_t column_of(uint32_t cylinder) const { return cylinder / cylinders_per_column; }
  int64_t cell_x(uint32_t column) const { return grid_x + int64_t{column} * cell_width_px; }
  int64_t cell_y(uint32_t head) const { return grid_y + int64_t{head} * row_height_px; }
};

struct LayoutResult {
  LayoutPlan plan;
  std::string caption;
};

// Draws the picture and writes it to path (throws vld::Error if it cannot).
// REQUIRES: inspect(in) done.
LayoutResult draw_layout(const Inspection& in, const std::string& path);

// The "layout" object of --json.
nlohmann::json layout_json(const LayoutResult& result, const std::string& path);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_LAYOUT_PNG_H_
