// vld-bench best-case (tools/bench/best_case_bench.h): eager writing's
// service time when every write finds free space as kind as it can be.
// These check that the bench measures what it says: the free space it
// draws, a breakdown that adds up, the order that fuller tracks and
// smaller holes must give, repeatability, and one-line errors.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "geometry/presets.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

using json = nlohmann::json;

std::vector<json> best_case(const TempDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args{"best-case", "--window", "9"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProgramRun r = run_program(dir, VLD_BENCH_PATH, args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> points;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) points.push_back(json::parse(l));
  return points;
}

double us(const json& point, const char* part) {
  return point.at("breakdown_us").at(part).get<double>();
}

TEST(BenchBestCase, DrawsTheFreeSpaceAskedForAndItsBreakdownAddsUp) {
  TempDir dir;
  const std::vector<json> p = best_case(dir, {"--util", "80", "--writes", "300"});
  ASSERT_EQ(p.size(), 1u);
  const json& j = p[0];
  const DriveGeometry g = *find_preset("st19101");
  EXPECT_NEAR(j.at("free_fraction").get<double>(), 0.20, 0.01);
  EXPECT_DOUBLE_EQ(j.at("holes_per_track").get<double>(), 0.2 * g.sectors_per_track / 9);
  EXPECT_DOUBLE_EQ(us(j, "overhead"), to_us(g.controller_overhead));
  // A block and its map sector: at least nine sectors' transfer.
  EXPECT_GE(us(j, "transfer"), 9 * g.sector_time_ns() / 1e3 - 1e-6);
  EXPECT_NEAR(us(j, "locate"), us(j, "seek") + us(j, "head_switch") + us(j, "rotation"), 1e-6);
  EXPECT_NEAR(j.at("mean_us").get<double>(),
              us(j, "overhead") + us(j, "transfer") + us(j, "locate"), 1e-6);
  const double stayed = j.at("stayed_on_track").get<double>();
  EXPECT_GT(stayed, 0.0);
  EXPECT_LT(stayed, 1.0);
}

TEST(BenchBestCase, FullerTracksCostMoreAndTheSameSeedRepeats) {
  TempDir dir;
  const std::vector<std::string> args{"--util", "40,80,95", "--writes", "400", "--seed", "3"};
  const std::vector<json> p = best_case(dir, args);
  ASSERT_EQ(p.size(), 3u);
  for (size_t i = 1; i < p.size(); ++i) {
    EXPECT_GT(p[i].at("mean_us").get<double>(), p[i - 1].at("mean_us").get<double>()) << i;
    EXPECT_LT(p[i].at("stayed_on_track").get<double>(),
              p[i - 1].at("stayed_on_track").get<double>()) << i;
  }
  EXPECT_EQ(best_case(dir, args), p);
}

// With holes of a block only, the map sector needs a hole of its own (or
// breaks the next one): the cost of map sectors that no placement avoids.
TEST(BenchBestCase, BlockSizedHolesCostMoreThanCommandSizedOnes) {
  TempDir dir;
  const double nine = best_case(dir, {"--writes", "1000"})[0].at("mean_us").get<double>();
  const double eight =
      best_case(dir, {"--writes", "1000", "--hole-sectors", "8"})[0].at("mean_us").get<double>();
  EXPECT_GT(eight, nine);
}

TEST(BenchBestCase, BadOptionsGetOneLineNamingThem) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--util", "100"}, "--util"},
      {{"--util", "0"}, "--util"},
      {{"--hole-sectors", "0"}, "--hole-sectors"},
      {{"--hole-sectors", "257"}, "--hole-sectors"},
      {{"--window", "1"}, "--window"},
      {{"--writes", "0"}, "--writes"},
      {{"--geometry", "st19101", "--util", "1", "--hole-sectors", "200"}, "--util"},
  };
  for (const auto& [args, named] : cases) {
    std::vector<std::string> a{"best-case"};
    a.insert(a.end(), args.begin(), args.end());
    const ProgramRun r = run_program(dir, VLD_BENCH_PATH, a);
    EXPECT_EQ(r.exit_code, 1) << named;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace vld::test
