// vld-bench's options shared by its subcommands: an unknown drive preset is
// a one-line error naming it, and nothing on stdout, whichever experiment
// was asked for (fig2, scan and recovery once died of a division by zero
// instead); fig2's own options likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

TEST(BenchOptions, AnUnknownGeometryIsOneLineInEverySubcommand) {
  TempDir dir;
  for (const char* sub : {"fig2", "fig10", "fig11", "table2", "fill", "aru", "qd", "scan",
                          "recovery", "best-case", "hostcpu"}) {
    const ProgramRun r = run_program(dir, VLD_BENCH_PATH, {sub, "--geometry", "st19102"});
    EXPECT_EQ(r.exit_code, 1) << sub << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << sub << ": " << r.err;
    EXPECT_NE(r.err.find("--geometry st19102: unknown; choose one of"), std::string::npos)
        << sub << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << sub << ": " << r.out;
  }
}

TEST(BenchOptions, Fig2RefusesWritesThatCannotBePlacedWithOneLine) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sectors", "0"}, "--sectors"},       // divided by zero once
      {{"--sectors", "257"}, "--sectors"},     // "a bug in the sizing" once
      {{"--threshold", "100"}, "--threshold"},
      {{"--threshold", "-5"}, "--threshold"},
      {{"--writes", "0"}, "--writes"},
  };
  for (const auto& [args, named] : cases) {
    std::vector<std::string> a{"fig2"};
    a.insert(a.end(), args.begin(), args.end());
    const ProgramRun r = run_program(dir, VLD_BENCH_PATH, a);
    EXPECT_EQ(r.exit_code, 1) << named << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// A count of nothing to measure is refused, not printed as zeros (scan
// once crashed on it), and the parser's own errors are one line too.
TEST(BenchOptions, CountsOfZeroAndOutOfRangeValuesGetOneLine) {
  TempDir dir;
  const std::vector<std::vector<std::string>> cases = {
      {"fig11", "--bursts", "0"},          {"fig11", "--burst", "0"},
      {"fig10", "--bursts", "0"},          {"table2", "--writes", "0"},
      {"aru", "--record-blocks", "1,0"},   {"aru", "--records", "0"},
      {"qd", "--requests", "0"},           {"scan", "--writes", "0"},
      {"scan", "--repeats", "0"},          {"fig11", "--util", "100"},
      {"fill", "--points", "0"},
  };
  for (const std::vector<std::string>& a : cases) {
    const ProgramRun r = run_program(dir, VLD_BENCH_PATH, a);
    EXPECT_NE(r.exit_code, 0) << a[0] << " " << a[1] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(a[1]), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// A misspelt subcommand is named, with the ones there are (CLI11 alone
// said only "A subcommand is required").
TEST(BenchOptions, AnUnknownSubcommandIsNamedWithTheOnesThereAre) {
  TempDir dir;
  for (const std::vector<std::string>& a :
       {std::vector<std::string>{"fig8"}, {"--debug", "log", "tabel2", "--writes", "5"}}) {
    const std::string named = a.size() == 1 ? a[0] : a[2];
    const ProgramRun r = run_program(dir, VLD_BENCH_PATH, a);
    EXPECT_EQ(r.exit_code, 106) << named << ": " << r.err;  // CLI11's RequiredError
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("no subcommand '" + named + "' (use one of fig10, fig11, table2"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const ProgramRun none = run_program(dir, VLD_BENCH_PATH, {});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("A subcommand is required"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace vld::test
