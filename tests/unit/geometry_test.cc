// DriveGeometry, SeekCurve and the presets, against numbers worked out by
// hand from the published sources (paper 001 Table 1; Ruemmler & Wilkes 1994
// for the HP97560; the Savvio 10K.4 product manual; docs/geometry.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "geometry/drive_geometry.h"
#include "geometry/presets.h"
#include "geometry/seek_curve.h"
#include "geometry/sim_time.h"

namespace vld {
namespace {

DriveGeometry preset(const char* name) {
  auto g = find_preset(name);
  EXPECT_TRUE(g.has_value()) << name;
  return g.value_or(DriveGeometry{});
}

// ---------------------------------------------------------------- presets

TEST(Presets, NamesAreTheDocumented) {
  EXPECT_EQ(preset_names(), (std::vector<std::string>{"hp97560", "hp97560-rw", "st19101",
                                                      "savvio10k4", "atlas10k", "cheetah9lp", "hc310"}));
  for (const std::string& name : preset_names()) {
    auto g = find_preset(name);
    ASSERT_TRUE(g.has_value()) << name;
    EXPECT_EQ(g->check(), "") << name;
    EXPECT_EQ(g->name, name);
  }
  EXPECT_FALSE(find_preset("foo").has_value());
  EXPECT_FALSE(find_preset("").has_value());
  EXPECT_FALSE(find_preset("HP97560").has_value());
}

TEST(Presets, Hp97560MatchesTable1AndRuemmlerWilkes) {
  DriveGeometry g = preset("hp97560");
  EXPECT_EQ(g.name, "hp97560");
  EXPECT_EQ(g.sectors_per_track, 72u);    // Table 1: n
  EXPECT_EQ(g.tracks_per_cylinder, 19u);  // Table 1: t
  EXPECT_EQ(g.cylinders, 1962u);          // Ruemmler & Wilkes
  EXPECT_EQ(g.rpm, 4002u);                // Table 1
  EXPECT_EQ(g.head_switch.count(), 2'500'000);          // 2.5 ms
  EXPECT_EQ(g.controller_overhead.count(), 2'300'000);  // 2.3 ms
  EXPECT_EQ(g.seek, SeekCurve(3.24, 0.400, 383, 8.00, 0.008));
  EXPECT_EQ(g.check(), "");
}

TEST(Presets, St19101MatchesTable1) {
  DriveGeometry g = preset("st19101");
  EXPECT_EQ(g.name, "st19101");
  EXPECT_EQ(g.sectors_per_track, 256u);
  EXPECT_EQ(g.tracks_per_cylinder, 16u);
  EXPECT_EQ(g.cylinders, 6962u);
  EXPECT_EQ(g.rpm, 10000u);
  EXPECT_EQ(g.head_switch.count(), 500'000);          // 0.5 ms
  EXPECT_EQ(g.controller_overhead.count(), 100'000);  // 0.1 ms
  EXPECT_EQ(g.check(), "");
}

TEST(Presets, Hp97560RwIsRuemmlerAndWilkesSwitchAndOverhead) {
  DriveGeometry paper = preset("hp97560"), rw = preset("hp97560-rw");
  EXPECT_EQ(rw.name, "hp97560-rw");
  EXPECT_EQ(rw.head_switch.count(), 1'600'000);          // 1.6 ms, not paper 001's 2.5
  EXPECT_EQ(rw.controller_overhead.count(), 2'200'000);  // 2.2 ms, not 2.3
  EXPECT_EQ(rw.track_skew_sectors, 8u);                  // ceil(1.6 ms / 208,229 ns)
  // Everything else is the same drive.
  rw.name = paper.name;
  rw.head_switch = paper.head_switch;
  rw.controller_overhead = paper.controller_overhead;
  rw.derive_skews();
  EXPECT_EQ(rw, paper);
  EXPECT_EQ(preset("hp97560-rw").check(), "");
}

TEST(Presets, Savvio10k4MatchesProductManual) {
  DriveGeometry g = preset("savvio10k4");
  EXPECT_EQ(g.name, "savvio10k4");
  EXPECT_EQ(g.sectors_per_track, 1323u);  // 677,557 B/track / 512
  EXPECT_EQ(g.tracks_per_cylinder, 6u);
  EXPECT_EQ(g.cylinders, 147620u);
  EXPECT_EQ(g.rpm, 10000u);
  EXPECT_EQ(g.head_switch.count(), 560'000);
  EXPECT_EQ(g.controller_overhead.count(), 200'000);
  EXPECT_EQ(g.check(), "");
}

// ----------------------------------------------------------- revolution

TEST(DriveGeometry, OneRevolutionIsSixtyOverRpmSeconds) {
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    double exact_ns = 60e9 / g.rpm;
    EXPECT_NEAR(static_cast<double>(g.revolution().count()), exact_ns, 1.0) << name;
  }
  // By hand: 60e9 / 4002 = 14,992,503.75 ns; 60e9 / 10000 = 6,000,000 ns.
  EXPECT_NEAR(static_cast<double>(preset("hp97560").revolution().count()), 14'992'503.75, 1.0);
  EXPECT_EQ(preset("st19101").revolution().count(), 6'000'000);
  EXPECT_EQ(preset("savvio10k4").revolution().count(), 6'000'000);
}

TEST(DriveGeometry, SectorTimeIsRevolutionOverSectorsPerTrack) {
  EXPECT_DOUBLE_EQ(preset("st19101").sector_time_ns(), 23'437.5);  // 6 ms / 256
  EXPECT_NEAR(preset("hp97560").sector_time_ns(), 14'992'503.75 / 72, 0.02);
  EXPECT_NEAR(preset("savvio10k4").sector_time_ns(), 6e6 / 1323, 1e-6);
}

// ----------------------------------------------------------------- seek

TEST(SeekCurve, ZeroDistanceIsFree) {
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    EXPECT_EQ(g.seek.time(0).count(), 0) << name;
    EXPECT_EQ(g.seek.time_ms(0), 0.0) << name;
  }
}

TEST(SeekCurve, MonotonicOverTheWholeDrive) {
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    SimDuration prev = g.seek.time(0);
    int64_t drops = 0;
    uint32_t first_drop = 0;
    for (uint32_t d = 1; d < g.cylinders; ++d) {
      SimDuration t = g.seek.time(d);
      if (t < prev) {
        if (drops++ == 0) first_drop = d;
      }
      prev = t;
    }
    EXPECT_EQ(drops, 0) << name << ": seek time drops first at d=" << first_drop;
    EXPECT_GT(g.seek.time(1).count(), 0) << name;
  }
}

TEST(SeekCurve, Hp97560FollowsRuemmlerWilkes) {
  // 3.24 + 0.400 sqrt(d) ms for d < 383, 8.00 + 0.008 d ms above.
  SeekCurve s = preset("hp97560").seek;
  struct Point {
    uint32_t d;
    double ms;
  };
  const Point points[] = {
      {1, 3.64},                                // 3.24 + 0.4
      {4, 4.04},                                // 3.24 + 0.4 * 2
      {100, 7.24},                              // 3.24 + 0.4 * 10
      {382, 3.24 + 0.400 * 19.544820285692065}, // sqrt(382)
      {383, 11.064},                            // 8.00 + 0.008 * 383
      {1000, 16.0},                             // 8.00 + 8.00
      {1961, 23.688},                           // full stroke: 8.00 + 15.688
  };
  for (const Point& p : points) {
    EXPECT_NEAR(s.time_ms(p.d), p.ms, 1e-9) << "d=" << p.d;
    EXPECT_NEAR(static_cast<double>(s.time(p.d).count()), p.ms * 1e6, 1.0) << "d=" << p.d;
  }
  // The short piece at d = 382 is 11.0579 ms, the long piece starts at
  // 11.064 ms: the curve is continuous to 6 us at the boundary.
  EXPECT_NEAR(s.time_ms(383) - s.time_ms(382), 0.0061, 0.0001);
}

TEST(SeekCurve, St19101MinimumSeekIsTable1s) {
  SeekCurve s = preset("st19101").seek;
  EXPECT_NEAR(s.time_ms(1), 0.5, 0.001);  // Table 1: minimum seek 0.5 ms
  // docs/geometry.md: full stroke 10.80 ms (6961 cylinders).
  EXPECT_NEAR(s.time_ms(6961), 10.80, 0.01);
}

TEST(SeekCurve, Savvio10k4SingleTrackAndFullStrokeAreTheManuals) {
  SeekCurve s = preset("savvio10k4").seek;
  EXPECT_NEAR(s.time_ms(1), 0.56, 0.01);
  EXPECT_NEAR(s.time_ms(147619), 8.18, 0.01);
}

// Mean of seek(|x - y|) for x, y independent and uniform over C cylinders:
// P(d = 0) = 1/C, P(d) = 2 (C - d) / C^2.
double mean_random_seek_ms(const SeekCurve& s, uint32_t c) {
  double sum = 0;
  const double cc = static_cast<double>(c);
  for (uint32_t d = 1; d < c; ++d) sum += 2.0 * (cc - d) / (cc * cc) * s.time_ms(d);
  return sum;
}

TEST(SeekCurve, MeanRandomSeeksAreTheDocumentedOnes) {
  // docs/geometry.md: st19101 mean random seek 5.36 ms; the Savvio's mean over
  // uniformly random start and end cylinders is the manual's 4.4 ms average.
  EXPECT_NEAR(mean_random_seek_ms(preset("st19101").seek, 6962), 5.36, 0.01);
  EXPECT_NEAR(mean_random_seek_ms(preset("savvio10k4").seek, 147620), 4.4, 0.01);
}

TEST(SeekCurve, ParseAcceptsTheSeekForm) {
  std::string err;
  auto c = SeekCurve::parse("3.24,0.400,383,8.00,0.008", &err);
  ASSERT_TRUE(c.has_value()) << err;
  EXPECT_EQ(c->a_ms(), 3.24);
  EXPECT_EQ(c->b_ms(), 0.4);
  EXPECT_EQ(c->boundary_cylinders(), 383u);
  EXPECT_EQ(c->c_ms(), 8.0);
  EXPECT_EQ(c->e_ms(), 0.008);
  EXPECT_EQ(*c, preset("hp97560").seek);
  EXPECT_NEAR(c->time_ms(100), 7.24, 1e-9);
}

TEST(SeekCurve, ParseRejectsMalformedInput) {
  const char* bad[] = {
      "",                                // nothing
      "3.24,0.400,383,8.00",             // four numbers
      "3.24,0.400,383,8.00,0.008,1",     // six numbers
      "a,b,c,d,e",                       // letters
      "3.24,0.4x,383,8.00,0.008",        // letters after a number
      "3.24;0.400;383;8.00;0.008",       // wrong separator
      "-3.24,0.400,383,8.00,0.008",      // negative a
      "3.24,0.400,383,8.00,-0.008",      // negative e
      "3.24,0.400,0,8.00,0.008",         // boundary 0
      "3.24,0.400,383.5,8.00,0.008",     // fractional boundary
      "3.24,0.400,-383,8.00,0.008",      // negative boundary
      "nan,0.400,383,8.00,0.008",        // not finite
      "inf,0.400,383,8.00,0.008",        // not finite
      "5,1,10,0,0.001",                  // drops from 8 ms to 0.01 ms at d = 10
  };
  for (const char* text : bad) {
    std::string err;
    auto c = SeekCurve::parse(text, &err);
    EXPECT_FALSE(c.has_value()) << "accepted \"" << text << "\"";
    EXPECT_FALSE(err.empty()) << "no error for \"" << text << "\"";
  }
  std::string err;
  EXPECT_FALSE(SeekCurve::parse("5,1,10,0,0.001", &err).has_value());
  EXPECT_NE(err.find("drops"), std::string::npos) << err;
}

TEST(SeekCurve, CheckOnlyLooksUpToMaxDistance) {
  SeekCurve s(5, 1, 10, 0, 0.001);  // 8 ms at d = 9, 0.01 ms at d = 10
  EXPECT_EQ(s.check(9), "");
  EXPECT_NE(s.check(10), "");
  EXPECT_NE(SeekCurve(-1, 0, 1, 0, 0).check(100), "");
}

TEST(SeekCurve, ToStringRoundTripsThroughParse) {
  // seek_curve.h: to_string() is the `seek=` form and round-trips via parse().
  std::vector<SeekCurve> curves;
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) curves.push_back(preset(name).seek);
  // A user-given curve with more significant digits than %g keeps (6).
  std::string err;
  auto precise = SeekCurve::parse("0.28341234,0.21659,101,2.6815,0.0011657", &err);
  ASSERT_TRUE(precise.has_value()) << err;
  curves.push_back(*precise);
  for (const SeekCurve& c : curves) {
    std::string text = c.to_string();
    auto back = SeekCurve::parse(text, &err);
    ASSERT_TRUE(back.has_value()) << text << ": " << err;
    EXPECT_EQ(*back, c) << "\"" << text << "\" does not round-trip (a = " << c.a_ms() << ")";
  }
}

// --------------------------------------------------------------- skews

TEST(DriveGeometry, SkewsAreTheSmallestThatCoverSwitchAndOneCylinderSeek) {
  // By hand: st19101 sector = 23,437.5 ns; 0.5 ms / 23,437.5 = 21.33 -> 22;
  // seek(1) = 0.49999 ms -> 22.
  DriveGeometry st = preset("st19101");
  EXPECT_EQ(st.track_skew_sectors, 22u);
  EXPECT_EQ(st.cylinder_skew_sectors, 22u);
  // hp97560 sector = 14,992,503 / 72 = 208,229.2 ns; 2.5 ms -> 12.006 -> 13;
  // seek(1) = 3.64 ms -> 17.48 -> 18.
  DriveGeometry hp = preset("hp97560");
  EXPECT_EQ(hp.track_skew_sectors, 13u);
  EXPECT_EQ(hp.cylinder_skew_sectors, 18u);
  // savvio10k4 sector = 6e6 / 1323 = 4,535.15 ns; 0.56 ms -> 123.48 -> 124;
  // seek(1) = 0.56003 ms -> 123.49 -> 124.
  DriveGeometry sv = preset("savvio10k4");
  EXPECT_EQ(sv.track_skew_sectors, 124u);
  EXPECT_EQ(sv.cylinder_skew_sectors, 124u);

  for (const DriveGeometry& g : {st, hp, sv}) {
    double sector = 60e9 / g.rpm / g.sectors_per_track;
    double hs = static_cast<double>(g.head_switch.count());
    double s1 = g.seek.time_ms(1) * 1e6;
    EXPECT_GE(g.track_skew_sectors * sector, hs) << g.name;
    EXPECT_LT((g.track_skew_sectors - 1) * sector, hs) << g.name;
    EXPECT_GE(g.cylinder_skew_sectors * sector, s1 - 1) << g.name;
    EXPECT_LT((g.cylinder_skew_sectors - 1) * sector, s1) << g.name;
  }
}

// ------------------------------------------------------------ numbering

DriveGeometry small_geometry() {
  DriveGeometry g;
  g.name = "small";
  g.sectors_per_track = 10;
  g.tracks_per_cylinder = 3;
  g.cylinders = 50;
  g.rpm = 6000;
  g.track_skew_sectors = 2;
  g.cylinder_skew_sectors = 3;
  g.seek = SeekCurve(1, 0.1, 10, 1.3, 0.01);
  return g;
}

TEST(DriveGeometry, ChsOfKnownSectors) {
  DriveGeometry g = small_geometry();
  // psn = (cylinder * 3 + head) * 10 + sector
  EXPECT_EQ(g.chs_of(0), (Chs{0, 0, 0}));
  EXPECT_EQ(g.chs_of(9), (Chs{0, 0, 9}));
  EXPECT_EQ(g.chs_of(10), (Chs{0, 1, 0}));
  EXPECT_EQ(g.chs_of(29), (Chs{0, 2, 9}));
  EXPECT_EQ(g.chs_of(30), (Chs{1, 0, 0}));
  EXPECT_EQ(g.chs_of(157), (Chs{5, 0, 7}));
  EXPECT_EQ(g.psn_of(Chs{5, 0, 7}), 157u);
  EXPECT_EQ(g.psn_of(Chs{2, 1, 4}), 74u);

  DriveGeometry st = preset("st19101");  // 4096 sectors per cylinder
  EXPECT_EQ(st.chs_of(4095), (Chs{0, 15, 255}));
  EXPECT_EQ(st.chs_of(4096), (Chs{1, 0, 0}));
  EXPECT_EQ(st.chs_of(4096 * 1000 + 256 * 3 + 17), (Chs{1000, 3, 17}));
  EXPECT_EQ(st.sectors_per_cylinder(), 4096u);
  EXPECT_EQ(st.cylinder_bytes(), 2u * 1024 * 1024);
  EXPECT_EQ(st.track_bytes(), 131072u);
}

TEST(DriveGeometry, ChsAndPsnRoundTrip) {
  std::mt19937_64 rng(0x5eed);
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    const uint64_t total = g.sectors_per_cylinder() * g.cylinders;
    std::uniform_int_distribution<uint64_t> psn(0, total - 1);
    for (int i = 0; i < 10000; ++i) {
      uint64_t p = i == 0 ? 0 : i == 1 ? total - 1 : psn(rng);
      Chs c = g.chs_of(p);
      ASSERT_LT(c.sector, g.sectors_per_track) << name;
      ASSERT_LT(c.head, g.tracks_per_cylinder) << name;
      ASSERT_LT(c.cylinder, g.cylinders) << name;
      ASSERT_EQ(g.psn_of(c), p) << name;
      // And the documented formula, by hand.
      ASSERT_EQ((uint64_t{c.cylinder} * g.tracks_per_cylinder + c.head) * g.sectors_per_track +
                    c.sector,
                p);
    }
  }
}

TEST(DriveGeometry, AngularSlotAddsSkews) {
  DriveGeometry g = small_geometry();  // 10 sectors, 3 heads, skews 2 and 3
  // slot = (sector + cylinder * ((3 - 1) * 2 + 3) + head * 2) mod 10
  EXPECT_EQ(g.angular_slot({0, 0, 0}), 0u);
  EXPECT_EQ(g.angular_slot({0, 0, 9}), 9u);
  EXPECT_EQ(g.angular_slot({0, 1, 0}), 2u);
  EXPECT_EQ(g.angular_slot({0, 2, 9}), 3u);   // 9 + 4
  EXPECT_EQ(g.angular_slot({1, 0, 0}), 7u);   // 0 + 7
  EXPECT_EQ(g.angular_slot({1, 1, 5}), 4u);   // 5 + 7 + 2
  EXPECT_EQ(g.angular_slot({2, 0, 0}), 4u);   // 14
  EXPECT_EQ(g.angular_slot({10, 2, 3}), 7u);  // 3 + 70 + 4 = 77

  DriveGeometry none = g;
  none.track_skew_sectors = none.cylinder_skew_sectors = 0;
  EXPECT_EQ(none.angular_slot({7, 2, 6}), 6u);
}

TEST(DriveGeometry, SkewPutsTheNextTrackJustBehindTheSwitch) {
  // Last sector of a track at slot x: the next track's first sector is at
  // x + 1 + track skew (same cylinder) or x + 1 + cylinder skew (next one).
  for (const char* name : {"hp97560", "st19101", "savvio10k4"}) {
    DriveGeometry g = preset(name);
    const uint32_t n = g.sectors_per_track;
    for (uint32_t c : {0u, 1u, 37u, 1000u}) {
      for (uint32_t h = 0; h < g.tracks_per_cylinder; ++h) {
        uint32_t last = g.angular_slot({c, h, n - 1});
        Chs next = h + 1 < g.tracks_per_cylinder ? Chs{c, h + 1, 0} : Chs{c + 1, 0, 0};
        uint32_t skew = h + 1 < g.tracks_per_cylinder ? g.track_skew_sectors
                                                      : g.cylinder_skew_sectors;
        ASSERT_EQ(g.angular_slot(next), (last + 1 + skew) % n) << name << " c=" << c << " h=" << h;
        // Within a track, consecutive sectors are consecutive slots.
        ASSERT_EQ(g.angular_slot({c, h, 1}), (g.angular_slot({c, h, 0}) + 1) % n);
      }
    }
  }
}

TEST(DriveGeometry, CheckRejectsNonsense) {
  DriveGeometry g = small_geometry();
  EXPECT_EQ(g.check(), "");
  DriveGeometry b = g;
  b.sectors_per_track = 4;
  EXPECT_NE(b.check().find("sectors_per_track"), std::string::npos);
  b = g;
  b.tracks_per_cylinder = 0;
  EXPECT_NE(b.check().find("tracks_per_cylinder"), std::string::npos);
  b = g;
  b.rpm = 100;
  EXPECT_NE(b.check().find("rpm"), std::string::npos);
  b = g;
  b.cylinders = 0;
  EXPECT_NE(b.check().find("cylinders"), std::string::npos);
  b = g;
  b.seek = SeekCurve(5, 1, 10, 0, 0.001);
  EXPECT_NE(b.check().find("seek"), std::string::npos);
}

TEST(SimTime, ConversionsRoundToTheNanosecond) {
  EXPECT_EQ(sim_ms(0.49999).count(), 499'990);
  EXPECT_EQ(sim_us(23.4375).count(), 23'438);  // .5 ns rounds away from zero
  EXPECT_EQ(sim_ms(3.64).count(), 3'640'000);
  EXPECT_DOUBLE_EQ(to_us(SimDuration{1500}), 1.5);
  EXPECT_DOUBLE_EQ(to_ms(SimDuration{2'500'000}), 2.5);
}

}  // namespace
}  // namespace vld

namespace vld {
namespace {

TEST(SeekCurve, ParseRejectsTrailingCommaAndSpaces) {
  std::string err;
  EXPECT_FALSE(SeekCurve::parse("1,2,3,4,5,", &err).has_value());
  EXPECT_NE(err.find("trailing comma"), std::string::npos) << err;
  EXPECT_FALSE(SeekCurve::parse(" 1,2,3,4,5", &err).has_value());
  EXPECT_FALSE(SeekCurve::parse("1, 2,3,4,5", &err).has_value());
  EXPECT_TRUE(SeekCurve::parse("1,2,3,4,5", &err).has_value()) << err;
}

TEST(SeekCurve, PresetCurvesPrintAsTheirSourceNumbers) {
  EXPECT_EQ(find_preset("st19101")->seek.to_string(), "0.28341,0.21659,101,2.6815,0.0011657");
  EXPECT_EQ(find_preset("hp97560")->seek.to_string(), "3.24,0.4,383,8,0.008");
}

}  // namespace
}  // namespace vld
