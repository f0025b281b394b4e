// Zoned drives: the zone accessors, the drive model on zone boundaries, drive
// files, and the superblock's zone table.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "core/image_format.h"
#include "core/modes/mode_image.h"
#include "geometry/drive_file.h"
#include "geometry/drive_model.h"
#include "geometry/presets.h"

namespace vld {
namespace {

// Three zones of 4 cylinders x 3 heads: 40, 32 and 24 sectors per track.
DriveGeometry three_zones() {
  DriveGeometry g;
  g.name = "three-zones";
  g.tracks_per_cylinder = 3;
  g.cylinders = 12;
  g.rpm = 6000;
  g.head_switch = sim_ms(0.5);
  g.controller_overhead = sim_ms(0.1);
  g.seek = SeekCurve(1.0, 0.1, 5, 1.2, 0.05);
  g.zones = {Zone{0, 40, 0, 0, 0}, Zone{4, 32, 0, 0, 0}, Zone{8, 24, 0, 0, 0}};
  g.number_zones();
  g.derive_skews();
  return g;
}

TEST(ZonedGeometry, NumbersSectorsZoneByZone) {
  const DriveGeometry g = three_zones();
  ASSERT_EQ(g.check(), "");
  EXPECT_EQ(g.zones[1].first_psn, 4u * 3 * 40);
  EXPECT_EQ(g.zones[2].first_psn, 4u * 3 * 40 + 4u * 3 * 32);
  EXPECT_EQ(g.sectors_in_cylinders(12), 4u * 3 * (40 + 32 + 24));
  EXPECT_EQ(g.max_sectors_per_track(), 40u);
  EXPECT_EQ(g.min_sectors_per_track(), 24u);
  // Every sector round-trips through CHS, and tracks are contiguous.
  uint64_t psn = 0;
  for (uint32_t track = 0; track < 36; ++track) {
    EXPECT_EQ(g.track_first_psn(track), psn);
    const uint32_t spt = g.track_sectors(track);
    EXPECT_EQ(spt, track < 12 ? 40u : track < 24 ? 32u : 24u);
    for (uint32_t s = 0; s < spt; ++s, ++psn) {
      const Chs c = g.chs_of(psn);
      ASSERT_EQ(c.cylinder * 3 + c.head, track);
      ASSERT_EQ(c.sector, s);
      ASSERT_EQ(g.psn_of(c), psn);
      ASSERT_EQ(g.track_of_psn(psn), track);
    }
  }
}

TEST(ZonedGeometry, SkewsAreEachZonesAndStartAtSlotZeroInEachZone) {
  const DriveGeometry g = three_zones();
  for (uint32_t i = 0; i < 3; ++i) {
    const Zone z = g.zones[i];
    // A head switch of 0.5 ms at 10 ms per revolution: ceil(spt / 20).
    EXPECT_EQ(z.track_skew_sectors, (z.sectors_per_track + 19) / 20) << i;
    EXPECT_EQ(g.angular_slot(Chs{z.first_cylinder, 0, 0}), 0u) << i;
    EXPECT_EQ(g.angular_slot(Chs{z.first_cylinder, 1, 0}), z.track_skew_sectors) << i;
  }
}

TEST(ZonedGeometry, SequentialReadLosesNoRevolutionInsideAZone) {
  const DriveGeometry g = three_zones();
  DriveModel m(g, g.cylinders);
  for (uint32_t i = 0; i < 3; ++i) {
    const Zone z = g.zones[i];
    m.set_head(HeadPosition{z.first_cylinder, 0});
    const uint64_t first = g.cylinder_first_psn(z.first_cylinder);
    const SectorRun cylinder{first, static_cast<uint32_t>(3 * z.sectors_per_track)};
    const Access a = m.estimate({&cylinder, 1}, kSimEpoch, Transfer::kRead);
    // Three revolutions of transfer; waiting, only for the first sector and
    // the two head switches' skews: no revolution lost.
    EXPECT_EQ(a.breakdown.transfer, m.transfer_time(3 * z.sectors_per_track, z.sectors_per_track));
    EXPECT_LT(a.breakdown.rotation + a.breakdown.head_switch,
              g.revolution() + m.transfer_time(2 * z.track_skew_sectors, z.sectors_per_track))
        << "zone " << i;
  }
}

TEST(ZonedGeometry, WriteSettleIsChargedOnlyOnWritesThatSeek) {
  DriveGeometry g = three_zones();
  g.write_settle = sim_us(300);
  DriveModel m(g, g.cylinders);
  const SectorRun far{g.cylinder_first_psn(9), 8};
  const SectorRun here{0, 8};
  const Access r = m.estimate({&far, 1}, kSimEpoch, Transfer::kRead);
  const Access w = m.estimate({&far, 1}, kSimEpoch, Transfer::kWrite);
  EXPECT_EQ(w.breakdown.seek - r.breakdown.seek, sim_us(300));
  const Access w0 = m.estimate({&here, 1}, kSimEpoch, Transfer::kWrite);
  EXPECT_EQ(w0.breakdown.seek, SimDuration{0});
}

TEST(ZonedGeometry, CheckNamesTheBadZone) {
  DriveGeometry g = three_zones();
  g.zones[1].first_cylinder = 9;  // after zone 2's
  g.number_zones();
  EXPECT_NE(g.check().find("zone 1"), std::string::npos) << g.check();
  g = three_zones();
  g.zones[2].sectors_per_track = 4;
  g.number_zones();
  EXPECT_NE(g.check().find("zone 2: sectors_per_track=4"), std::string::npos) << g.check();
  g = three_zones();
  g.zones[0].first_psn = 1;
  EXPECT_NE(g.check().find("first_psn"), std::string::npos);
  g = three_zones();
  g.sectors_per_track = 40;  // both forms at once
  EXPECT_NE(g.check().find("zoned drive"), std::string::npos);
}

constexpr const char* kDriveFile = R"(# a small zoned drive
name        three-zones
heads       3
cylinders   12
rpm         6000
head_switch_us 500
overhead_us 100
seek        1,0.1,5,1.2,0.05
zone 0 40
zone 4 32   # middle
zone 8 24
)";

TEST(DriveFile, ParsesZonesAndDerivesSkews) {
  std::string why;
  auto g = parse_drive_file(kDriveFile, "small.drive", &why);
  ASSERT_TRUE(g) << why;
  EXPECT_EQ(*g, three_zones());
}

TEST(DriveFile, GivenSkewsAreKept) {
  std::string text = R"(name s
heads 2
cylinders 10
rpm 7200
seek 1,0.1,5,1.2,0.05
write_settle_us 250
zone 0 100 7 9
zone 5 80 6 8
)";
  std::string why;
  auto g = parse_drive_file(text, "s.drive", &why);
  ASSERT_TRUE(g) << why;
  EXPECT_EQ(g->zones[1].track_skew_sectors, 6u);
  EXPECT_EQ(g->zones[1].cylinder_skew_sectors, 8u);
  EXPECT_EQ(g->write_settle, sim_us(250));
}

TEST(DriveFile, EveryMistakeIsOneLineNamingFileAndLine) {
  const std::string base = "name x\nheads 2\ncylinders 10\nrpm 7200\nseek 1,0.1,5,1.2,0.05\n";
  const std::array<std::pair<std::string, std::string>, 8> cases{{
      {base + "zone 0 100\nzone 5 80 6 8\n", "x.drive:7: give skews on every zone line or on none"},
      {base + "zone 0 abc\n", "x.drive:6: zone takes whole numbers"},
      {base + "rpm fast\n", "x.drive:6: rpm takes a whole number"},
      {base + "sectors 100\n", "x.drive:6: unknown setting 'sectors'"},
      {base + "zone 3 100\n", "x.drive: the first zone must start at cylinder 0"},
      {base + "zone 0 100\nzone 12 90\n", "x.drive: zones must start at ascending cylinders"},
      {base + "zone 0 100\nsectors_per_track 100\n", "x.drive: give either one sectors_per_track"},
      {"heads 2\n", "x.drive: no name line"},
  }};
  for (const auto& [text, want] : cases) {
    std::string why;
    EXPECT_FALSE(parse_drive_file(text, "x.drive", &why)) << text;
    EXPECT_EQ(why.rfind(want, 0), 0u) << "got: " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

TEST(DriveFile, LoadDriveTellsPresetsFromFiles) {
  std::string why;
  EXPECT_TRUE(load_drive("atlas10k", &why));
  EXPECT_FALSE(load_drive("atlas", &why));
  EXPECT_NE(why.find("choose one of"), std::string::npos);
  EXPECT_FALSE(load_drive("/nonexistent/x.drive", &why));
  EXPECT_EQ(why, "/nonexistent/x.drive: cannot read the drive file");
  EXPECT_TRUE(names_drive_file("x.drive"));
  EXPECT_TRUE(names_drive_file("./atlas10k"));
  EXPECT_FALSE(names_drive_file("atlas10k"));
}

TEST(ZonedSuperblock, RoundTripsTheZoneTableAndWriteSettle) {
  FormatOptions o;
  o.export_bytes = 64 << 20;
  o.mode = DiskMode::kVld;
  o.geometry = *find_preset("atlas10k");
  Superblock sb = plan_image(o);
  auto bytes = encode_superblock(sb);
  Superblock back;
  std::string why;
  ASSERT_EQ(decode_superblock(bytes.data(), &back, &why), DecodeResult::kOk) << why;
  EXPECT_EQ(back.geometry, sb.geometry);
  EXPECT_EQ(back.geometry.zones.size(), 24u);
  EXPECT_EQ(back.geometry.write_settle, sim_ms(0.487));
  // A build without zones reads sectors_per_track 0 and refuses the image.
  EXPECT_EQ(bytes[36] | bytes[37] | bytes[38] | bytes[39], 0);
}

TEST(ZonedSuperblock, SingleZoneLeavesTheZoneTableBytesZero) {
  FormatOptions o;
  o.export_bytes = 64 << 20;
  o.geometry = *find_preset("st19101");
  auto bytes = encode_superblock(plan_image(o));
  for (size_t i = 248; i < 4088; ++i) ASSERT_EQ(bytes[i], 0) << i;
}

TEST(ZonedSuperblock, PlansTheOutermostCylindersThatHoldTheExport) {
  FormatOptions o;
  o.export_bytes = 256 << 20;
  o.geometry = *find_preset("atlas10k");
  const Superblock sb = plan_image(o);
  const DriveGeometry& g = sb.geometry;
  EXPECT_GE(sb.platter_bytes(), o.export_bytes);
  EXPECT_LT(g.bytes_in_cylinders(sb.simulated_cylinders - 1),
            g.bytes_in_cylinders(sb.simulated_cylinders));
  EXPECT_EQ(sb.platter_bytes(), g.bytes_in_cylinders(sb.simulated_cylinders));
}

}  // namespace
}  // namespace vld
