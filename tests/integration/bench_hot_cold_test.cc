// vld-bench --hot-cold (tools/bench/update_picker.h): Sprite LFS's
// hot-and-cold workload beside paper 001's uniform random updates. These
// check that the updates go where the option says (the NVRAM of mode=lld
// absorbs the rewrites of a small hot set, so far fewer blocks reach the
// segments), that the uniform default draws as it always has (the published
// Figure 8 and 10 runs repeat), and that bad values get one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"
#include "tools/bench/update_picker.h"

namespace vld::test {
namespace {

using json = nlohmann::json;

// One fig10 point with no idle time on an 8 MiB lld disk half full: 12
// bursts of 256 updates, two NVRAM drains of 1,466 records.
json fig10_point(const TempDir& dir, std::vector<std::string> extra) {
  std::vector<std::string> args{"fig10", "--size", "8M", "--util", "50", "--idle-ms", "0",
                                "--bursts", "12", "--warm-bursts", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProgramRun r = run_program(dir, VLD_BENCH_PATH, args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  return json::parse(line);
}

double lld(const json& point, const char* counter) {
  return point.at("lld").at(counter).get<double>();
}

TEST(BenchHotCold, TheNvramAbsorbsTheHotSetsRewrites) {
  TempDir dir;
  const json uniform = fig10_point(dir, {});
  const json hot = fig10_point(dir, {"--hot-cold", "90/10"});
  ASSERT_EQ(uniform.at("disk").at("region_blocks").get<uint64_t>(), 1552u);
  const double records = uniform.at("disk").at("nvram_capacity_records").get<double>();
  ASSERT_EQ(records, 1323.0);
  for (const json* j : {&uniform, &hot}) ASSERT_EQ(lld(*j, "nvram_drains"), 2.0);
  // Uniform: a drain of 1,323 records over 1,552 blocks holds
  // 1552 * (1 - e^(-1323/1552)) = 890 distinct blocks on average.
  EXPECT_GT(lld(uniform, "client_blocks_written"), 2 * 800.0);
  // 90/10: the 155 hot blocks take 90% of the records, so a drain holds
  // them and at most the 10% of its records that went cold: 155 + 133.
  EXPECT_LT(lld(hot, "client_blocks_written"), 2 * (155.0 + 133.0));
  EXPECT_GT(lld(hot, "client_blocks_written"), 2 * 155.0);
  EXPECT_EQ(hot.at("disk").at("hot_writes_percent").get<double>(), 90.0);
  EXPECT_EQ(hot.at("disk").at("hot_blocks_percent").get<double>(), 10.0);
  EXPECT_FALSE(uniform.at("disk").contains("hot_writes_percent"));
}

// The uniform picker draws as std::uniform_int_distribution(0, region - 1)
// on the same generator, so the published uniform runs repeat unchanged.
TEST(BenchHotCold, UniformDrawsAsTheDistributionAlways) {
  std::mt19937_64 a(7), b(7);
  UpdatePicker pick(55321, HotCold{});
  std::uniform_int_distribution<uint64_t> all(0, 55320);
  EXPECT_EQ(pick.hot_blocks(), 0u);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(pick(a), all(b)) << i;
}

TEST(BenchHotCold, HotAndColdSplitsTheUpdatesAsAsked) {
  std::mt19937_64 rng(1);
  UpdatePicker pick(1000, parse_hot_cold("90/10"));
  ASSERT_EQ(pick.hot_blocks(), 100u);
  std::vector<int> seen(1000);
  int hot = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const uint64_t b = pick(rng);
    ASSERT_LT(b, 1000u);
    ++seen[b];
    hot += b < 100;
  }
  EXPECT_NEAR(hot, 0.9 * n, 0.01 * n);
  // Uniform within each group: every block drawn; a hot block 900 times on
  // average, a cold one 100000 * 0.1 / 900 = 11.1 times.
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 0), 0);
  EXPECT_GT(*std::min_element(seen.begin(), seen.begin() + 100), 700);
  EXPECT_LT(*std::max_element(seen.begin() + 100, seen.end()), 40);
}

TEST(BenchHotCold, BadValuesGetOneLineNamingTheOption) {
  TempDir dir;
  for (const char* sub : {"fig10", "fig11", "table2"}) {
    for (const char* bad : {"90", "100/10", "90/0", "9x/10", "/", "-5/10"}) {
      const ProgramRun r = run_program(dir, VLD_BENCH_PATH, {sub, "--hot-cold", bad});
      EXPECT_EQ(r.exit_code, 1) << sub << " " << bad << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find(std::string("--hot-cold ") + bad + ": expected WRITES/BLOCKS"),
                std::string::npos)
          << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
}

}  // namespace
}  // namespace vld::test
