// Parts of vld-inspect that need no image: Progress (tools/inspect/
// progress.h), the layout grid's shape (layout_grid.h), json_text (report.h):
//   - on a terminal, long work shows a percentage and erases its line at
//     the end; short work, and any work when the output is not a terminal,
//     writes nothing at all;
//   - the grid has at most kMaxColumns columns covering every cylinder, and
//     heads x bands rows, at most kMaxRows; row_of follows the angle;
//   - json_text puts arrays of numbers on one line, and nothing else
//     changes: it parses back to the same JSON, strings untouched.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tools/inspect/layout_grid.h"
#include "tools/inspect/progress.h"
#include "tools/inspect/report.h"

namespace vld::inspect {
namespace {

// What a Progress wrote to a temporary file.
std::string written(bool terminal, uint64_t total, uint64_t bytes) {
  std::FILE* f = std::tmpfile();
  {
    Progress p("checking", total, bytes, ProgressOutput{f, terminal});
    for (uint64_t i = 0; i < total; ++i) p.advance(1);
  }
  std::fflush(f);
  std::string out(static_cast<size_t>(std::ftell(f)), '\0');
  std::rewind(f);
  out.resize(std::fread(out.data(), 1, out.size(), f));
  std::fclose(f);
  return out;
}

TEST(InspectProgress, ShowsPercentagesOnATerminal) {
  const std::string out = written(true, 200, Progress::kMinBytes);
  EXPECT_NE(out.find("\rvld-inspect: checking   0% (1/200)"), std::string::npos) << out;
  EXPECT_NE(out.find("\rvld-inspect: checking  50% (100/200)"), std::string::npos) << out;
  EXPECT_NE(out.find("\rvld-inspect: checking 100% (200/200)"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 74), "\r" + std::string(72, ' ') + "\r") << "line erased";
}

TEST(InspectProgress, QuietOffATerminalAndForShortWork) {
  EXPECT_EQ(written(false, 200, Progress::kMinBytes), "");
  EXPECT_EQ(written(true, 200, Progress::kMinBytes - 1), "");
}

TEST(LayoutGridShape, SmallDriveOneColumnPerCylinder) {
  const LayoutGrid g(6, 16, 256);
  EXPECT_EQ(g.cylinders_per_column, 1u);
  EXPECT_EQ(g.columns, 6u);
  EXPECT_EQ(g.bands, 8u);  // 128 rows / 16 heads
  EXPECT_EQ(g.rows, 128u);
  EXPECT_EQ(g.row_of(0, 0, 256), 0u);
  EXPECT_EQ(g.row_of(0, 255, 256), 7u);
  EXPECT_EQ(g.row_of(3, 128, 256), 3 * 8 + 4u);
}

TEST(LayoutGridShape, LargeDriveAggregatesCylinders) {
  for (uint32_t cylinders : {1000u, 1001u, 6962u, 100000u}) {
    const LayoutGrid g(cylinders, 19, 72);
    EXPECT_LE(g.columns, LayoutGrid::kMaxColumns) << cylinders;
    EXPECT_GE(uint64_t{g.columns} * g.cylinders_per_column, cylinders);
    EXPECT_LT(uint64_t{g.columns - 1} * g.cylinders_per_column, cylinders);
    EXPECT_EQ(g.rows, 19 * g.bands);
    EXPECT_LE(g.rows, LayoutGrid::kMaxRows);
  }
  EXPECT_EQ(LayoutGrid(10, 200, 72).bands, 1u);  // more heads than rows: one band each
  EXPECT_EQ(LayoutGrid(10, 2, 4).bands, 4u);      // never more bands than sectors
}

// A zoned drive: a band is the same angle on every track, so a slot's row
// follows its fraction of its own track; no band is empty on the smallest.
TEST(LayoutGridShape, ZonedDriveBandsByEachTracksAngle) {
  const LayoutGrid g(6, 16, 256, 192);
  EXPECT_EQ(g.sectors_per_track, 256u);
  EXPECT_EQ(g.min_sectors_per_track, 192u);
  EXPECT_EQ(g.bands, 8u);
  EXPECT_EQ(g.row_of(0, 96, 192), 4u);   // half way round a 192-sector track
  EXPECT_EQ(g.row_of(0, 128, 256), 4u);  // and a 256-sector one
  EXPECT_EQ(g.row_of(2, 191, 192), 2 * 8 + 7u);
  EXPECT_EQ(LayoutGrid(10, 2, 256, 4).bands, 4u);  // bands by the smallest track
  EXPECT_EQ(LayoutGrid(10, 2, 256).min_sectors_per_track, 256u);
}

TEST(JsonText, NumberArraysOnOneLine) {
  const nlohmann::json j = {{"grid", {{"class", {{0, 1, 2}, {3, 4, 5}}}}},
                            {"name", "a [1, 2]\n \"[3,\n4]\""},
                            {"ranges", {{15, 41}, {0, 6}}},
                            {"mixed", {1, "two", 3.5}},
                            {"empty", nlohmann::json::array()},
                            {"neg", {-1, 2e9}}};
  const std::string text = json_text(j);
  EXPECT_EQ(nlohmann::json::parse(text), j);
  EXPECT_NE(text.find("\n      [0, 1, 2],\n      [3, 4, 5]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[-1, 2000000000.0]"), std::string::npos) << text;
  EXPECT_NE(text.find("\n    1,\n    \"two\","), std::string::npos) << text;  // not all numbers
}

}  // namespace
}  // namespace vld::inspect
