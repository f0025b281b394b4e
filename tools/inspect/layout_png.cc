#include "tools/inspect/layout_png.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "tools/inspect/canvas.h"
#include "tools/inspect/colormap.h"

namespace vld::inspect {
namespace {

constexpr Rgb kEmptyTrack{200, 200, 200};
constexpr Rgb kSystemTrack{0, 0, 0};
constexpr Rgb kHeadMark{228, 26, 28};   // red
constexpr Rgb kTailMark{231, 41, 210};  // magenta
constexpr Rgb kWindowBar{31, 120, 180}; // blue
constexpr Rgb kAxis{120, 120, 120};

// A legend swatch: a colour, drawn filled or (frame_only) as a frame
// round a mid-viridis square.
struct Swatch {
  Rgb color;
  bool frame_only;
};

// The cells: mean live fraction of the column's tracks of that head.
void paint_cells(const Inspection& in, const LayoutPlan& plan, Canvas& canvas) {
  const VldLayout& layout = in.layout;
  const bool separate_columns = plan.cell_width_px >= 4, separate_rows = plan.row_height_px >= 6;
  const uint32_t paint_w = plan.cell_width_px - (separate_columns ? 1 : 0);
  const uint32_t paint_h = plan.row_height_px - (separate_rows ? 1 : 0);
  for (uint32_t col = 0; col < plan.columns; ++col) {
    const uint32_t c0 = col * plan.cylinders_per_column;
    const uint32_t c1 = std::min(c0 + plan.cylinders_per_column, layout.cylinders);
    for (uint32_t h = 0; h < layout.heads; ++h) {
      uint64_t live = 0, tracks = 0;
      bool all_empty = true, system = false;
      for (uint32_t c = c0; c < c1; ++c) {
        const uint32_t t = c * layout.heads + h;
        if ((in.vld() && t == 0) || (in.is_lld() && t < in.lld.system_tracks)) {
          system = true;
          continue;
        }
        live += in.live_sectors[t];
        ++tracks;
        all_empty = all_empty && in.used_sectors[t] == 0;
      }
      Rgb color = system ? kSystemTrack
                  : all_empty ? kEmptyTrack
                              : viridis(double(live) / double(tracks * layout.spt));
      canvas.fill(plan.cell_x(col), plan.cell_y(h), paint_w, paint_h, color);
    }
  }
  // Cylinder ticks above the grid.
  for (uint64_t c = 0; c < layout.cylinders; c += plan.tick_every_cylinders)
    canvas.fill(plan.cell_x(plan.column_of(static_cast<uint32_t>(c))), plan.grid_y - 6, 1, 5, kAxis);
}

// How to read the grid: its axes, its scale, its colours.
std::string grid_caption(const Inspection& in, const LayoutPlan& plan, const std::string& path) {
  const VldLayout& layout = in.layout;
  std::string caption;
  const std::string k = std::to_string(plan.cylinders_per_column);
  caption += "layout: " + path + ", " + std::to_string(plan.width) + "x" +
             std::to_string(plan.height) + " px. Across: cylinders 0.." +
             std::to_string(layout.cylinders - 1) + ", ";
  if (plan.cylinders_per_column == 1)
    caption += "one column of " + std::to_string(plan.cell_width_px) + " px per cylinder";
  else
    caption += std::to_string(plan.columns) + " columns of " + k + " cylinders each (" +
               std::to_string(plan.cell_width_px) + " px per column; a cell is the mean of its " +
               k + " tracks)";
  caption += "; grey ticks above every " +
             (plan.tick_every_cylinders == 1 ? std::string("cylinder")
                                             : std::to_string(plan.tick_every_cylinders) + " cylinders") +
             ". Down: heads 0.." + std::to_string(layout.heads - 1) + ", " +
             std::to_string(plan.row_height_px) + " px each. Colour: live data sectors / " +
             std::to_string(layout.spt) +
             " sectors per track, viridis from dark purple (0%) to yellow (100%), as the "
             "legend bar below the grid (ticks at 0, 25, 50, 75, 100%). Light grey: empty track "
             "(no data, no map sectors" +
             (plan.cylinders_per_column > 1 ? ", every track of the cell" : std::string()) + ").";
  return caption;
}

// A frame round the cell of (cylinder, head), frame_offset_px out from it,
// and triangles pointing at it from the top edge (at y = top_px) and the
// left edge (at x = left_px).
void mark_cell(const LayoutPlan& plan, Canvas& canvas, uint32_t cylinder, uint32_t head,
               int64_t frame_offset_px, int64_t top_px, int64_t left_px, Rgb color) {
  const uint32_t col = plan.column_of(cylinder);
  canvas.frame(plan.cell_x(col) - frame_offset_px, plan.cell_y(head) - frame_offset_px,
               plan.cell_width_px + 2 * frame_offset_px, plan.row_height_px + 2 * frame_offset_px,
               3, color);
  canvas.triangle_down(plan.cell_x(col) + plan.cell_width_px / 2, top_px, 7, color);
  canvas.triangle_right(left_px, plan.cell_y(head) + plan.row_height_px / 2, 7, color);
}

// mode=vld with a log record: the record's window (a blue bar under the
// grid, wrapping), the log tail, then the head (its marks drawn on top).
// Returns their caption.
std::string mark_record(const Inspection& in, const LayoutPlan& plan, Canvas& canvas) {
  const VldLayout& layout = in.layout;
  const LogRecord& record = in.record();
  std::string caption;
  for (uint32_t i = 0; i < std::min(record.window_cylinders, layout.cylinders); ++i) {
    const uint32_t c = (record.window_first + i) % layout.cylinders;
    canvas.fill(plan.cell_x(plan.column_of(c)), plan.window_bar_y, plan.cell_width_px, 6, kWindowBar);
  }
  if (record.has_root && record.root.psn < in.sectors) {
    const Chs tail = in.chs(record.root.psn);
    mark_cell(plan, canvas, tail.cylinder, tail.head, /*frame_offset_px=*/3, /*top_px=*/1,
              /*left_px=*/2, kTailMark);
    caption += " Magenta frame and triangles: the log tail, the record's root map sector "
               "(cylinder " + std::to_string(tail.cylinder) + ", head " + std::to_string(tail.head) + ").";
  }
  const uint32_t head_cylinder = std::min(record.head_cylinder, layout.cylinders - 1);
  const uint32_t head = std::min(record.head, layout.heads - 1);
  mark_cell(plan, canvas, head_cylinder, head, /*frame_offset_px=*/0, /*top_px=*/12,
            /*left_px=*/12, kHeadMark);
  caption += " Red frame and triangles: the head's last position (cylinder " +
             std::to_string(record.head_cylinder) + ", head " + std::to_string(record.head) +
             "). Blue bar under the grid: the record's window (cylinders " +
             std::to_string(record.window_first) + ".." +
             std::to_string((record.window_first + record.window_cylinders + layout.cylinders - 1) %
                            layout.cylinders) +
             ").";
  return caption;
}

// The legend: the colour bar with its ticks, then the swatches.
void paint_legend(const LayoutPlan& plan, Canvas& canvas, const std::vector<Swatch>& swatches) {
  const uint32_t y = plan.legend_y;
  for (uint32_t x = 0; x < LayoutPlan::kColorbarPx; ++x)
    canvas.fill(plan.grid_x + x, y, 1, LayoutPlan::kSwatchPx, viridis(x / double(LayoutPlan::kColorbarPx - 1)));
  for (int q = 0; q <= 4; ++q)
    canvas.fill(plan.grid_x + q * (LayoutPlan::kColorbarPx - 1) / 4, y + LayoutPlan::kSwatchPx, 1, 6, kSystemTrack);
  int64_t x = plan.grid_x + LayoutPlan::kColorbarPx + LayoutPlan::kGapPx;
  for (const Swatch& swatch : swatches) {
    if (swatch.frame_only) {
      canvas.fill(x, y, LayoutPlan::kSwatchPx, LayoutPlan::kSwatchPx, viridis(0.5));
      canvas.frame(x + 2, y + 2, LayoutPlan::kSwatchPx - 4, LayoutPlan::kSwatchPx - 4, 2, swatch.color);
    } else {
      canvas.fill(x, y, LayoutPlan::kSwatchPx, LayoutPlan::kSwatchPx, swatch.color);
    }
    x += LayoutPlan::kSwatchPx + LayoutPlan::kGapPx;
  }
}

}  // namespace

LayoutPlan::LayoutPlan(uint32_t cylinder_count, uint32_t head_count)
    : cylinders(cylinder_count), heads(head_count) {
  cylinders_per_column = (cylinders + kMaxColumns - 1) / kMaxColumns;
  columns = (cylinders + cylinders_per_column - 1) / cylinders_per_column;
  cell_width_px = std::clamp<uint32_t>(kTargetGridWidthPx / columns, 1, 48);
  row_height_px = std::clamp<uint32_t>(kTargetGridHeightPx / heads, 8, 32);
  grid_x = kLeftPx;
  grid_y = kTopPx;
  grid_w = columns * cell_width_px;
  grid_h = heads * row_height_px;
  window_bar_y = grid_y + grid_h + 4;
  legend_y = window_bar_y + 6 + 16;
  const uint32_t legend_w = kColorbarPx + 6 * (kSwatchPx + kGapPx);
  width = grid_x + std::max(grid_w, legend_w) + kRightPx;
  height = legend_y + kSwatchPx + 8 + 12;
  // Axis ticks at least 40 px apart, every 1, 2 or 5 x 10^n cylinders.
  const double px_per_cylinder = double(cell_width_px) / cylinders_per_column;
  tick_every_cylinders = 1;
  for (uint64_t p = 1;; p *= 10) {
    for (uint64_t m : {1, 2, 5})
      if (m * p * px_per_cylinder >= 40) {
        tick_every_cylinders = static_cast<uint32_t>(m * p);
        return;
      }
  }
}

LayoutResult draw_layout(const Inspection& in, const std::string& path) {
  LayoutPlan plan(in.layout.cylinders, in.layout.heads);
  Canvas canvas(plan.width, plan.height);
  paint_cells(in, plan, canvas);
  std::string caption = grid_caption(in, plan, path);
  std::vector<Swatch> swatches = {{kEmptyTrack, false}};
  if (in.is_lld()) {
    caption += " Black: the system area (checkpoint slots, NVRAM region); the segments follow.";
    swatches.push_back({kSystemTrack, false});
  }
  if (in.vld()) {
    caption += " Black: the system track (log records).";
    swatches.push_back({kSystemTrack, false});
    if (in.newest_slot) {
      caption += mark_record(in, plan, canvas);
      swatches.push_back({kHeadMark, true});
      swatches.push_back({kTailMark, true});
      swatches.push_back({kWindowBar, false});
    }
  }
  paint_legend(plan, canvas, swatches);
  caption += " Legend, left to right: the colour bar, then swatches for empty track";
  if (in.is_lld()) caption += ", system area";
  if (in.vld()) {
    caption += ", system track";
    if (in.newest_slot) caption += ", head, log tail, window";
  }
  caption += ".";
  write_png(path, canvas);
  return {plan, caption};
}

nlohmann::json layout_json(const LayoutResult& result, const std::string& path) {
  const LayoutPlan& plan = result.plan;
  return {{"path", path},
          {"width_px", plan.width},
          {"height_px", plan.height},
          {"columns", plan.columns},
          {"cylinders_per_column", plan.cylinders_per_column},
          {"cell_width_px", plan.cell_width_px},
          {"row_height_px", plan.row_height_px},
          {"tick_every_cylinders", plan.tick_every_cylinders},
          {"caption", result.caption}};
}

}  // namespace vld::inspect
