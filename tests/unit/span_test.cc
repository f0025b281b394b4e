// Spans (geometry/span.h): span= parsed and resolved against a drive, and
// span_of, the band of cylinders as a drive of its own.
#include <gtest/gtest.h>

#include <string>

#include "geometry/presets.h"
#include "geometry/span.h"

namespace vld {
namespace {

// Four zones of 10 cylinders x 2 heads, skews as measured (not derived).
DriveGeometry four_zones() {
  DriveGeometry g;
  g.name = "four-zones";
  g.tracks_per_cylinder = 2;
  g.cylinders = 40;
  g.rpm = 7200;
  g.head_switch = sim_ms(0.3);
  g.controller_overhead = sim_ms(0.1);
  g.seek = SeekCurve(1.0, 0.1, 5, 1.2, 0.05);
  g.zones = {Zone{0, 64, 5, 9, 0}, Zone{10, 56, 4, 8, 0}, Zone{20, 48, 3, 7, 0},
             Zone{30, 40, 2, 6, 0}};
  g.number_zones();
  return g;
}

CylinderSpan resolve(std::string_view text, uint32_t drive_cylinders) {
  auto spec = SpanSpec::parse(text);
  EXPECT_TRUE(spec) << text;
  std::string why;
  auto span = spec->resolve(drive_cylinders, "drive", &why);
  EXPECT_TRUE(span) << text << ": " << why;
  return span.value_or(CylinderSpan{});
}

TEST(Span, ParsesEachForm) {
  EXPECT_EQ(resolve("0-9999", 147620), (CylinderSpan{0, 9999}));
  EXPECT_EQ(resolve("100-100", 147620), (CylinderSpan{100, 100}));
  EXPECT_EQ(resolve("20000", 147620), (CylinderSpan{0, 19999}));
  EXPECT_EQ(resolve("90%-100%", 1000), (CylinderSpan{900, 999}));
  EXPECT_EQ(resolve("10%", 1962), (CylinderSpan{0, 195}));
  EXPECT_EQ(resolve("0%-50%", 1962), (CylinderSpan{0, 980}));
  EXPECT_EQ(resolve("50%-100%", 1962), (CylinderSpan{981, 1961}));
  EXPECT_EQ(resolve("99.5%-100%", 1000), (CylinderSpan{995, 999}));
  EXPECT_EQ(CylinderSpan({900, 999}).to_string(), "900-999");
  EXPECT_EQ(CylinderSpan({900, 999}).cylinders(), 100u);
}

TEST(Span, RefusesWhatIsNoSpan) {
  for (const char* bad : {"", "-", "0", "10-5", "a-b", "1-", "-5", "5%-5%", "50%-10%",
                          "0-10%", "101%", "1.%", ".5%", "%", "1e3", "4294967296", "1 - 2",
                          "10%-", "0x10"})
    EXPECT_FALSE(SpanSpec::parse(bad)) << bad;
}

TEST(Span, RefusesASpanBeyondTheDriveOrOfNoCylinder) {
  std::string why;
  EXPECT_FALSE(SpanSpec::parse("0-400000")->resolve(147620, "savvio10k4", &why));
  EXPECT_EQ(why, "reaches past the drive: the savvio10k4 has 147620 cylinders (0-147619); "
                 "choose cylinders within them");
  EXPECT_FALSE(SpanSpec::parse("0%-0.01%")->resolve(100, "tiny", &why));
  EXPECT_EQ(why, "holds no whole cylinder: the tiny has 100 cylinders (0-99); widen the span");
}

TEST(Span, ASingleZoneBandIsTheDriveWithFewerCylinders) {
  const DriveGeometry drive = *find_preset("savvio10k4");
  const DriveGeometry band = span_of(drive, {1000, 20999});
  EXPECT_EQ(band.check(), "");
  DriveGeometry expected = drive;
  expected.cylinders = 20000;
  EXPECT_EQ(band, expected);
}

TEST(Span, AZonedBandClipsAndShiftsTheZoneTable) {
  const DriveGeometry drive = four_zones();
  ASSERT_EQ(drive.check(), "");
  const CylinderSpan span{15, 34};
  const DriveGeometry band = span_of(drive, span);
  ASSERT_EQ(band.check(), "");
  EXPECT_EQ(band.cylinders, 20u);
  ASSERT_EQ(band.zones.size(), 3u);
  EXPECT_EQ(band.zones[0], (Zone{0, 56, 4, 8, 0}));
  EXPECT_EQ(band.zones[1], (Zone{5, 48, 3, 7, 5u * 2 * 56}));
  EXPECT_EQ(band.zones[2], (Zone{15, 40, 2, 6, 5u * 2 * 56 + 10u * 2 * 48}));
  for (uint32_t c = 0; c < band.cylinders; ++c) {
    const Zone b = band.zone(band.zone_index_of_cylinder(c));
    const Zone d = drive.zone(drive.zone_index_of_cylinder(span.first + c));
    EXPECT_EQ(b.sectors_per_track, d.sectors_per_track) << c;
    EXPECT_EQ(b.track_skew_sectors, d.track_skew_sectors) << c;
    EXPECT_EQ(b.cylinder_skew_sectors, d.cylinder_skew_sectors) << c;
    EXPECT_EQ(band.cylinder_sectors(c), drive.cylinder_sectors(span.first + c)) << c;
  }
  EXPECT_EQ(band.sectors_in_cylinders(band.cylinders),
            drive.cylinder_first_psn(span.last + 1) - drive.cylinder_first_psn(span.first));
  EXPECT_EQ(band.seek, drive.seek);
  EXPECT_EQ(band.name, drive.name);
}

TEST(Span, ABandInsideOneZoneIsOneZone) {
  const DriveGeometry band = span_of(four_zones(), {32, 39});
  ASSERT_EQ(band.check(), "");
  ASSERT_EQ(band.zones.size(), 1u);
  EXPECT_EQ(band.zones[0], (Zone{0, 40, 2, 6, 0}));
  EXPECT_EQ(band.cylinders, 8u);
}

TEST(Span, TheWholeDriveIsTheDrive) {
  const DriveGeometry drive = four_zones();
  EXPECT_EQ(span_of(drive, {0, drive.cylinders - 1}), drive);
}

}  // namespace
}  // namespace vld
