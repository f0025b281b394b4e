// Zoned drives through nbdkit, in every mode (modes.h): a drive file whose
// zones the export spans, and a validated zoned preset. What a client
// writes it reads back, after idle-time work, a clean restart and a kill -9
// (whatever the crash contract keeps: everything flushed); the image and
// the stats file carry the zone table.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

// Four zones, the outermost large enough for mode=lld's system area (its
// 6.1 MB NVRAM region), the others 5 cylinders x 4 heads: a 16 MiB export
// with the default spare reaches into the fourth in every mode.
constexpr const char* kDrive = R"(name four-zones
heads 4
cylinders 400
rpm 7200
head_switch_us 400
overhead_us 100
seek 1,0.1,50,2,0.01
zone 0 256
zone 15 224
zone 20 192
zone 25 160
)";

std::string write_drive_file(const TempDir& dir) {
  const std::string path = dir.file("four-zones.drive");
  std::ofstream(path) << kDrive;
  return path;
}

class Zoned : public ::testing::TestWithParam<const char*> {};

TEST_P(Zoned, DataSurvivesIdleWorkRestartAndKillAcrossZones) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  std::vector<std::vector<uint8_t>> want;
  {
    NbdkitServer server(dir, with_mode({"file=" + image, "size=16M", "latency=none",
                                        "geometry=" + write_drive_file(dir),
                                        "statsfile=" + dir.file("stats.json")},
                                       GetParam()));
    NbdHandle h = server.connect();
    want = fill_and_fragment(h.get(), 16 << 8);  // every block of the export
    ASSERT_EQ(contents_difference(h.get(), want), "");
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
    const std::string stats = slurp(dir.file("stats.json"));
    const size_t table = stats.find("\"zones\"");
    ASSERT_NE(table, std::string::npos);
    const std::string zone_table = stats.substr(table, stats.find(']', table) - table);
    size_t zones = 0;
    for (size_t at = zone_table.find("\"first_cylinder\""); at != std::string::npos;
         at = zone_table.find("\"first_cylinder\"", at + 1))
      ++zones;
    EXPECT_EQ(zones, 4u) << stats.substr(0, 600);
  }
  {
    NbdkitServer server(dir, {"file=" + image, "latency=none"});
    NbdHandle h = server.connect();
    ASSERT_EQ(contents_difference(h.get(), want), "");
    // More flushed updates, then a crash: the flushed state survives.
    std::vector<uint8_t> block = pattern_bytes(0, 4096, 77);
    for (uint64_t b = 0; b < want.size(); b += 37) {
      write_bytes(h.get(), b * 4096, block);
      want[b] = block;
    }
    ASSERT_EQ(nbd_flush(h.get(), 0), 0) << nbd_get_error();
    server.kill9();
  }
  NbdkitServer server(dir, {"file=" + image, "latency=none"});
  NbdHandle h = server.connect();
  EXPECT_EQ(contents_difference(h.get(), want), "");
}

TEST_P(Zoned, AValidatedZonedPresetServesAndReopens) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  std::vector<std::vector<uint8_t>> want;
  {
    NbdkitServer server(dir, with_mode({"file=" + image, "size=32M", "latency=none",
                                        "geometry=cheetah9lp"},
                                       GetParam()));
    NbdHandle h = server.connect();
    want = fill_and_fragment(h.get(), 512);
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
  NbdkitServer server(dir, {"file=" + image, "geometry=cheetah9lp", "latency=none"});
  NbdHandle h = server.connect();
  EXPECT_EQ(contents_difference(h.get(), want), "");
}

INSTANTIATE_TEST_SUITE_P(Modes, Zoned, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
