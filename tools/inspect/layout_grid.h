// LayoutGrid: the platters of an inspected image aggregated to a grid small
// enough to draw and to ship as JSON, and the "layout" section of --json
// that holds it with everything a drawing needs: the title's fields, the
// axes and their units, the scale, the legend (docs/inspect-layout.md has
// the schema; bench/vldplot/layout.py draws it).
//
// Columns are cylinders (cylinders_per_column of them each, so that there
// are at most kMaxColumns); rows are heads, each split into `bands` rows by
// angle (where a sector passes under the head, DriveGeometry::angular_slot,
// so the track and cylinder skews are taken into account, as a fraction of
// the track's own sectors: on a zoned drive a band covers the same angle
// on every track, more sectors on outer ones), kMaxRows rows at most (one
// row per head if there are more heads than that). Each cell
// counts its sectors by class (sector_classes.h) and keeps the dominant
// class -- the class with the most sectors among the non-background ones,
// or the background class with the most if the cell holds nothing else --
// and that class's share of the cell's sectors.
//
// Invariants after build_layout_grid: columns * cylinders_per_column >=
// cylinders > (columns - 1) * cylinders_per_column; rows == heads * bands;
// cell_class and cell_percent have rows * columns entries; class_sectors
// sums to the platters' sectors and class_cells to rows * columns.
//
// Thread-safety: functions of their arguments.
#ifndef VLD_TOOLS_INSPECT_LAYOUT_GRID_H_
#define VLD_TOOLS_INSPECT_LAYOUT_GRID_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "tools/inspect/inspection.h"
#include "tools/inspect/progress.h"
#include "tools/inspect/sector_classes.h"

namespace vld::inspect {

struct LayoutGrid {
  static constexpr uint32_t kMaxColumns = 1000;
  static constexpr uint32_t kMaxRows = 128;
  static constexpr uint32_t kMaxBandsPerHead = 8;

  uint32_t cylinders = 0, heads = 0;
  uint32_t sectors_per_track = 0;      // of the largest track (the outermost zone's)
  uint32_t min_sectors_per_track = 0;  // of the smallest (the innermost zone's)
  uint32_t cylinders_per_column = 1, columns = 0;
  uint32_t bands = 1, rows = 0;  // bands per head
  std::vector<SectorClass> classes;
  std::vector<uint8_t> cell_class;    // row-major: [row * columns + column]
  std::vector<uint8_t> cell_percent;  // the dominant class's share, 0..100
  std::vector<uint64_t> class_sectors, class_cells;

  // The grid's shape for a drive (no cells yet) whose tracks hold from
  // min_spt to max_spt sectors (0: every track max_spt).
  LayoutGrid(uint32_t cylinder_count, uint32_t head_count, uint32_t max_spt, uint32_t min_spt = 0);
  // The row of an angular slot of a track with track_sectors sectors.
  uint32_t row_of(uint32_t head, uint32_t angular_slot, uint32_t track_sectors) const {
    return head * bands + static_cast<uint32_t>(uint64_t{angular_slot} * bands / track_sectors);
  }
};

// Counts every sector of the platters (progress on a terminal: "layout").
// REQUIRES: inspect(in) done.
LayoutGrid build_layout_grid(const Inspection& in,
                             ProgressOutput progress = ProgressOutput::standard_error());

// The "layout" object of --json.
nlohmann::json layout_json(const Inspection& in, const LayoutGrid& grid);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_LAYOUT_GRID_H_
