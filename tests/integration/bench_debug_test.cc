// vld-bench --debug CHANNEL[=LEVEL],...: core's trace lines on stderr, as
// the plugin's -D vld.CHANNEL=LEVEL gives them to nbdkit_debug, with
// stdout still one JSON object per line; a channel it does not know is a
// one-line error and a nonzero exit.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(BenchDebug, PrintsEachWritesPlacementOnStderr) {
  TempDir dir;
  const ProgramRun r = run_program(
      dir, VLD_BENCH_PATH,
      {"--debug", "allocator,log", "table2", "--size", "16M", "--writes", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t writes = 0, log = 0;
  for (const std::string& l : lines_of(r.err)) {
    if (l.starts_with("allocator: write: block ")) {
      ++writes;
      EXPECT_NE(l.find(" locate "), std::string::npos) << l;
    } else if (l.starts_with("log: ")) {
      ++log;
    } else {
      EXPECT_TRUE(l.starts_with("allocator: ")) << "not a line of the channels asked for: " << l;
    }
  }
  // The fill, the compaction and the 20 measured updates in vld; in place
  // has no allocator.
  EXPECT_GE(writes, 20u);
  EXPECT_GT(log, 0u) << "no log record traced";
  const std::vector<std::string> out = lines_of(r.out);
  ASSERT_FALSE(out.empty());
  for (const std::string& l : out) EXPECT_TRUE(nlohmann::json::accept(l)) << "not JSON: " << l;
}

TEST(BenchDebug, AnUnknownChannelIsAOneLineError) {
  TempDir dir;
  for (const auto& [spec, says] :
       {std::pair{"nosuch", "no channel 'nosuch' (use allocator, log, compactor or recovery)"},
        std::pair{"log=x", "the level must be a number, as in log=2"}}) {
    const ProgramRun r = run_program(dir, VLD_BENCH_PATH,
                                     {"--debug", spec, "table2", "--size", "16M", "--writes", "1"});
    EXPECT_NE(r.exit_code, 0) << spec;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "it ran anyway";
  }
}

}  // namespace
}  // namespace vld::test
