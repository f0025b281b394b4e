#include "tools/inspect/layout_grid.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/image_format.h"
#include "core/util/units.h"

namespace vld::inspect {
namespace {

using json = nlohmann::json;

// Counts each cell's sectors by class: counts[(row * columns + column) *
// classes + class].
std::vector<uint64_t> count_cells(const Inspection& in, const LayoutGrid& grid,
                                  const TrackClassifier& classifier, ProgressOutput output) {
  const size_t n_classes = classifier.classes.size();
  std::vector<uint64_t> counts(size_t{grid.rows} * grid.columns * n_classes, 0);
  const DriveGeometry& geometry = in.img->sb.geometry;
  const uint32_t tracks = grid.cylinders * grid.heads;
  Progress progress("layout: counting sectors", tracks, in.sectors * kSectorBytes, output);
  std::vector<uint8_t> classes(grid.sectors_per_track);
  // The band of each slot of a track of `spt` sectors: no division per
  // sector, and made again only where a zone changes the track size.
  std::vector<uint32_t> band_of_slot;
  uint32_t spt = 0;
  for (uint32_t t = 0; t < tracks; ++t) {
    progress.advance(1);
    if (const uint32_t n = in.layout.track_sectors(t); n != spt) {
      spt = n;
      band_of_slot.resize(spt);
      for (uint32_t slot = 0; slot < spt; ++slot) band_of_slot[slot] = grid.row_of(0, slot, spt);
    }
    const uint32_t cylinder = t / grid.heads, head = t % grid.heads;
    const size_t column = cylinder / grid.cylinders_per_column;
    uint32_t slot = geometry.angular_slot(Chs{cylinder, head, 0});  // sector 0's
    classifier.classify(t, classes);
    for (uint32_t s = 0; s < spt; ++s) {
      const size_t row = size_t{head} * grid.bands + band_of_slot[slot];
      ++counts[(row * grid.columns + column) * n_classes + classes[s]];
      slot = slot + 1 == spt ? 0 : slot + 1;
    }
  }
  return counts;
}

// Each cell's dominant class and its share (see layout_grid.h).
void pick_dominant(LayoutGrid& grid, const std::vector<uint64_t>& counts) {
  const size_t n_classes = grid.classes.size(), cells = size_t{grid.rows} * grid.columns;
  grid.cell_class.assign(cells, 0);
  grid.cell_percent.assign(cells, 0);
  grid.class_sectors.assign(n_classes, 0);
  grid.class_cells.assign(n_classes, 0);
  for (size_t cell = 0; cell < cells; ++cell) {
    const uint64_t* n = &counts[cell * n_classes];
    uint64_t total = 0;
    size_t best = 0;
    auto beats = [&](size_t k) {
      if (grid.classes[k].background != grid.classes[best].background)
        return n[k] > 0 && (!grid.classes[k].background || n[best] == 0);
      return n[k] > n[best];
    };
    for (size_t k = 0; k < n_classes; ++k) {
      total += n[k];
      grid.class_sectors[k] += n[k];
      if (k != best && beats(k)) best = k;
    }
    grid.cell_class[cell] = static_cast<uint8_t>(best);
    grid.cell_percent[cell] = static_cast<uint8_t>(total ? (200 * n[best] + total) / (2 * total) : 0);
    ++grid.class_cells[best];
  }
}

std::string percent_text(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

json title_json(const Inspection& in) {
  const Superblock& sb = in.img->sb;
  const std::string name = std::filesystem::path(in.img->path).filename().string();
  const std::string text = name + ": mode=" + mode_name(sb.mode) + " on " + sb.geometry.name + ", " +
                           human_bytes(sb.export_bytes) + " exported, utilization " +
                           percent_text(in.utilization());
  return {{"text", text},
          {"image", in.img->path},
          {"mode", mode_name(sb.mode)},
          {"drive", sb.geometry.name},
          {"export_bytes", sb.export_bytes},
          {"utilization", in.utilization()}};
}

std::string plural(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The axes and the scale, in the drive's units.
void add_axes_and_scale(const LayoutGrid& grid, json& j) {
  const double degrees = 360.0 / grid.bands;
  char band[64];
  std::snprintf(band, sizeof band, "%g°", degrees);
  const std::string y_label =
      grid.bands == 1 ? std::string("head (one row per head)")
                      : "head (each head's row split by angle: " + std::to_string(grid.bands) +
                            " bands of " + band + ", 0° at the top)";
  j["axes"] = {{"x", {{"label", "cylinder"}, {"unit", "cylinder"}, {"min", 0}, {"max", grid.cylinders}}},
               {"y", {{"label", y_label}, {"unit", "head"}, {"heads", grid.heads},
                      {"bands_per_head", grid.bands}, {"degrees_per_band", degrees}}}};
  const uint64_t sectors_per_band = (grid.sectors_per_track + grid.bands - 1) / grid.bands;
  j["scale"] = {
      {"text", "1 column = " + plural(grid.cylinders_per_column, "cylinder", "cylinders") +
                   ", 1 row = " + (grid.bands == 1 ? std::string("one head's track")
                                                    : std::string(band) + " of one head's track") +
                   "; a cell holds up to " +
                   std::to_string(sectors_per_band * grid.cylinders_per_column) + " sectors (" +
                   std::to_string(grid.columns) + " x " + std::to_string(grid.rows) + " cells)"},
      {"cylinders_per_column", grid.cylinders_per_column},
      {"bands_per_head", grid.bands},
      {"max_sectors_per_cell", sectors_per_band * grid.cylinders_per_column}};
}

json legend_json(const LayoutGrid& grid) {
  json legend = json::array();
  for (size_t k = 0; k < grid.classes.size(); ++k) {
    const SectorClass& c = grid.classes[k];
    legend.push_back({{"index", k},
                      {"name", c.name},
                      {"colour", c.colour},
                      {"background", c.background},
                      {"description", c.description},
                      {"sectors", grid.class_sectors[k]},
                      {"cells", grid.class_cells[k]}});
  }
  return legend;
}

// A mark framing the cell of (cylinder, head, angular slot).
json cell_mark(const Inspection& in, const LayoutGrid& grid, const std::string& name,
               const char* colour, uint32_t cylinder, uint32_t head, uint32_t slot) {
  const uint32_t spt = in.layout.track_sectors(cylinder * in.layout.heads + head);
  return {{"kind", "cell"},
          {"name", name},
          {"colour", colour},
          {"cylinder", cylinder},
          {"head", head},
          {"angle_deg", 360.0 * slot / spt},
          {"column", cylinder / grid.cylinders_per_column},
          {"row", grid.row_of(head, slot, spt)}};
}

// mode=vld with a log record: the log tail, the head's last position and
// the record's window (cylinder ranges, wrapping past the last cylinder).
json marks_json(const Inspection& in, const LayoutGrid& grid) {
  json marks = json::array();
  if (!in.vld() || !in.newest_slot) return marks;
  const LogRecord& record = in.record();
  const DriveGeometry& geometry = in.img->sb.geometry;
  if (record.has_root && record.root.psn < in.sectors) {
    const Chs tail = in.chs(record.root.psn);
    marks.push_back(cell_mark(in, grid, "log tail (the record's root map sector)", "#e377c2",
                              tail.cylinder, tail.head, geometry.angular_slot(tail)));
  }
  const uint32_t cylinder = std::min(record.head_cylinder, grid.cylinders - 1);
  const uint32_t head = std::min(record.head, grid.heads - 1);
  json head_mark = cell_mark(in, grid, "head's last position", "#d62728", cylinder, head, 0);
  head_mark["row"] = head * grid.bands;  // the record says no angle: the head's whole row
  head_mark["rows"] = grid.bands;
  head_mark.erase("angle_deg");
  marks.push_back(head_mark);
  const uint32_t n = std::min(record.window_cylinders, grid.cylinders);
  json ranges = json::array();
  const uint32_t first = record.window_first % grid.cylinders;
  const uint32_t end = first + n;  // exclusive, may pass the last cylinder
  ranges.push_back({first, std::min(end, grid.cylinders)});
  if (end > grid.cylinders) ranges.push_back({0, end - grid.cylinders});
  marks.push_back({{"kind", "cylinders"},
                   {"name", "log record's window (recovery scans it)"},
                   {"colour", "#9467bd"},
                   {"ranges", ranges}});
  return marks;
}

// The cells, row by row.
void add_cells(const LayoutGrid& grid, json& j) {
  json cls = json::array(), pct = json::array();
  for (uint32_t r = 0; r < grid.rows; ++r) {
    const auto first = grid.cell_class.begin() + size_t{r} * grid.columns;
    const auto first_pct = grid.cell_percent.begin() + size_t{r} * grid.columns;
    cls.push_back(std::vector<uint8_t>(first, first + grid.columns));
    pct.push_back(std::vector<uint8_t>(first_pct, first_pct + grid.columns));
  }
  j["grid"] = {{"columns", grid.columns},
               {"rows", grid.rows},
               {"class", std::move(cls)},
               {"percent", std::move(pct)}};
}

}  // namespace

LayoutGrid::LayoutGrid(uint32_t cylinder_count, uint32_t head_count, uint32_t max_spt,
                       uint32_t min_spt)
    : cylinders(cylinder_count),
      heads(head_count),
      sectors_per_track(max_spt),
      min_sectors_per_track(min_spt ? min_spt : max_spt) {
  cylinders_per_column = std::max<uint32_t>(1, (cylinders + kMaxColumns - 1) / kMaxColumns);
  columns = (cylinders + cylinders_per_column - 1) / cylinders_per_column;
  bands = std::clamp<uint32_t>(kMaxRows / std::max<uint32_t>(heads, 1), 1, kMaxBandsPerHead);
  // A sector a band at least, on the smallest track too.
  bands = std::min(bands, std::max<uint32_t>(min_sectors_per_track, 1));
  rows = heads * bands;
}

LayoutGrid build_layout_grid(const Inspection& in, ProgressOutput progress) {
  const DriveGeometry& g = in.layout.geometry;
  LayoutGrid grid(in.layout.cylinders, in.layout.heads, g.max_sectors_per_track(),
                  g.min_sectors_per_track());
  TrackClassifier classifier = classifier_for(in);
  grid.classes = classifier.classes;
  pick_dominant(grid, count_cells(in, grid, classifier, progress));
  return grid;
}

json layout_json(const Inspection& in, const LayoutGrid& grid) {
  json j;
  j["schema"] = "vld-inspect layout 1";
  j["title"] = title_json(in);
  j["drive"] = {{"cylinders", grid.cylinders},
                {"heads", grid.heads},
                {"sectors_per_track", grid.sectors_per_track}};
  if (in.layout.geometry.zoned()) {  // sectors_per_track is then the largest track's
    j["drive"]["min_sectors_per_track"] = grid.min_sectors_per_track;
    j["drive"]["zones"] = in.layout.geometry.zone_count();
  }
  add_axes_and_scale(grid, j);
  j["cell_rule"] =
      "a cell's colour is the class with the most sectors in it (a background class only if "
      "the cell holds nothing else); the paler, the smaller that class's share of the cell";
  j["legend"] = legend_json(grid);
  j["marks"] = marks_json(in, grid);
  j["notes"] = json::array({"the superblock lies in the image file before the platters "
                            "(bytes 0-4095), on no track: it has no cell"});
  add_cells(grid, j);
  // As the layout object had them before the grid (report.h).
  j["columns"] = grid.columns;
  j["cylinders_per_column"] = grid.cylinders_per_column;
  return j;
}

}  // namespace vld::inspect
