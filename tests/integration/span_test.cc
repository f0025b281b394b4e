// span= through nbdkit, in every mode (modes.h): a disk on a band of
// cylinders in the middle of a large zoned drive, across one of its zone
// boundaries. What a client writes survives a restart; the image file
// holds the band only; the stats file and vld-inspect name the band; a restart with
// another span, or spare= beside span=, is refused with one line.
#include <gtest/gtest.h>
#include <libnbd.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

// 300,000 cylinders of 4 heads (about 100 GiB), four zones. The span
// below starts 20 cylinders before the second zone: 100 cylinders, about
// 46 MiB, room for a 16 MiB export and mode=lld's 6.1 MB NVRAM.
constexpr const char* kDrive = R"(name large-four-zones
heads 4
cylinders 300000
rpm 7200
head_switch_us 400
overhead_us 100
seek 1,0.05,10000,5.5,0.00005
zone 0 256
zone 100000 224
zone 200000 192
zone 250000 160
)";
constexpr const char* kSpan = "span=99980-100079";

std::string write_drive_file(const TempDir& dir) {
  const std::string path = dir.file("large.drive");
  std::ofstream(path) << kDrive;
  return path;
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

class Span : public ::testing::TestWithParam<const char*> {};

TEST_P(Span, ABandOfALargeDriveServesReopensAndSaysWhichCylinders) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  const std::string drive = write_drive_file(dir);
  std::vector<std::vector<uint8_t>> want;
  {
    NbdkitServer server(dir, with_mode({"file=" + image, "size=16M", "latency=none",
                                        "geometry=" + drive, kSpan,
                                        "statsfile=" + dir.file("stats.json")},
                                       GetParam()));
    NbdHandle h = server.connect();
    want = fill_and_fragment(h.get(), 1024);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  const nlohmann::json geometry = read_json(dir.file("stats.json"))["geometry"];
  EXPECT_EQ(geometry["span"],
            (nlohmann::json{{"first_cylinder", 99980},
                            {"last_cylinder", 100079},
                            {"drive_cylinders", 300000}}))
      << geometry.dump();
  EXPECT_EQ(geometry["cylinders"], 100);
  EXPECT_EQ(geometry["simulated_cylinders"], 100);
  ASSERT_EQ(geometry["zones"].size(), 2u) << geometry.dump();
  EXPECT_EQ(geometry["zones"][1]["first_cylinder"], 20);
  // The band's platters only: 20 cylinders of 256 sectors a track and 80
  // of 224, 4 heads; the drive's would be about 100 GiB.
  const uint64_t band_bytes = (20ull * 256 + 80ull * 224) * 4 * 512;
  EXPECT_EQ(file_size(image), (1ull << 20) + band_bytes);
  EXPECT_EQ(geometry["platter_bytes"], band_bytes);
  {  // vld-inspect checks the band's image and names the band.
    const ProgramRun check = run_program(dir, VLD_INSPECT_PATH, {"--check", image});
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    const ProgramRun report = run_program(dir, VLD_INSPECT_PATH, {"--json", image});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    EXPECT_EQ(nlohmann::json::parse(report.out)["geometry"]["span"], geometry["span"]);
  }
  {  // The image knows its band: no span= needed, the same one agrees.
    NbdkitServer server(dir, {"file=" + image, "latency=none"});
    NbdHandle h = server.connect();
    EXPECT_EQ(contents_difference(h.get(), want), "");
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  NbdkitServer server(dir, {"file=" + image, "latency=none", kSpan, "cylinders=300000"});
  NbdHandle h = server.connect();
  EXPECT_EQ(contents_difference(h.get(), want), "");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Modes, Span, ::testing::ValuesIn(kAllModes), ModeName);

// The one line of a refused start, after nbdkit's "error: " and the
// plugin's "vld: ".
std::string refusal(const RunResult& r) {
  EXPECT_NE(r.exit_code, 0);
  const size_t at = r.stderr_text.find("error: ");
  if (at == std::string::npos) return r.stderr_text;
  std::string line = r.stderr_text.substr(at + 7);
  line = line.substr(0, line.find('\n'));
  return line.starts_with("vld: ") ? line.substr(5) : line;
}

TEST(SpanRefusals, AnotherSpanOnReopenAndSpareBesideSpan) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  {
    NbdkitServer server(dir, {"file=" + image, "size=4M", "latency=none", "geometry=savvio10k4",
                              "span=147000-147099"});
    NbdHandle h = server.connect();
    write_bytes(h.get(), 0, pattern_bytes(0, 4096, 3));
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  // 100 cylinders of 6 tracks of 1323 sectors: 388 MiB, of the drive's 571 GiB.
  EXPECT_EQ(file_size(image), (1ull << 20) + 100ull * 6 * 1323 * 512);
  const std::string before = file_fingerprint(image);
  EXPECT_EQ(refusal(run_nbdkit({"file=" + image, "span=0-99"})),
            "span=0-99 conflicts with file=" + image +
                ", which has span=147000-147099; drop span= to use the image as it is, or give "
                "a new file=");
  EXPECT_EQ(refusal(run_nbdkit({"file=" + image, "spare=25"})),
            "spare=25 does not apply to file=" + image +
                ", whose platters are span=147000-147099; drop spare=");
  EXPECT_EQ(file_fingerprint(image), before) << "a refused start changed the image";
  EXPECT_EQ(refusal(run_nbdkit({"file=" + dir.file("new.img"), "size=4M", "spare=10",
                                "span=0-99"})),
            "spare=10 does not apply beside span=0-99: the span's cylinders are all platters; "
            "drop spare= or span=");
  EXPECT_EQ(refusal(run_nbdkit({"file=" + dir.file("new.img"), "size=4M", "span=0-7000"})),
            "span=0-7000: reaches past the drive: the st19101 has 6962 cylinders (0-6961); "
            "choose cylinders within them");
  EXPECT_EQ(refusal(run_nbdkit({"file=" + dir.file("new.img"), "size=64M", "span=0-9"})),
            "size=64 MiB and its metadata need 33 cylinders but span=0-9 has 10; widen span= or "
            "lower size=");
}

}  // namespace
}  // namespace vld::test
