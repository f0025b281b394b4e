// vld-bench recovery (tools/bench/recovery_bench.h): a clean open, a crash
// and the unclean open after it, as the recovery reports say, and a bench
// that cleans up after itself. What the numbers mean is recovery's own
// tests' business (VldDisk.Unclean*, VldCheckpoint.*); these check that the
// bench runs the experiment it describes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

using json = nlohmann::json;

// vld-bench recovery on a 64 MiB st19101 disk, with `extra` options; its
// one line of JSON. The image goes in a directory of its own, which must
// be empty again afterwards.
json recovery_bench(const TempDir& dir, std::vector<std::string> extra) {
  const std::string images = dir.file("images");
  ::mkdir(images.c_str(), 0700);
  std::vector<std::string> args{"recovery", "--size", "64M", "--warm", "3000", "--dir", images};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProgramRun r = run_program(dir, VLD_BENCH_PATH, args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(images)) << "the bench left its image behind";
  return json::parse(r.out);
}

TEST(BenchRecovery, ACleanOpenWalksTheMapAndTheCrashLosesNoFlushedWrite) {
  TempDir dir;
  const json j = recovery_bench(dir, {"--crash-writes", "300"});
  const json& c = j.at("clean");
  EXPECT_TRUE(c.at("clean").get<bool>());
  EXPECT_EQ(c.at("method"), "clean-walk");
  EXPECT_GT(c.at("map_sectors_walked").get<uint64_t>(), 0u);
  EXPECT_EQ(c.at("tracks_scanned"), 0);

  const json& u = j.at("unclean");
  EXPECT_FALSE(u.at("clean").get<bool>());
  EXPECT_EQ(u.at("method"), "record+window");
  EXPECT_GT(u.at("tracks_scanned").get<uint64_t>(), 0u);
  // Every write was flushed: each one since the last record is a request
  // (a group of candidate map sectors) that recovery finds and accepts, and
  // none is rolled back.
  const uint64_t accepted = u.at("groups_accepted").get<uint64_t>();
  EXPECT_GE(accepted, 1u);
  EXPECT_LE(accepted, 300u);
  EXPECT_GE(u.at("candidates").get<uint64_t>(), accepted);
  EXPECT_EQ(u.at("groups_rejected"), 0);
  EXPECT_EQ(u.at("map_sectors_walked"), c.at("map_sectors_walked"));

  EXPECT_EQ(j.at("crash_phase").at("writes"), 300);
  EXPECT_GT(j.at("crash_phase").at("mean_write_and_flush_us").get<double>(), 0);
  EXPECT_DOUBLE_EQ(j.at("unclean_over_clean").get<double>(),
                   u.at("simulated_ms").get<double>() / c.at("simulated_ms").get<double>());
}

// A two-cylinder window makes records (and so scattered map sectors) come
// often on a small disk.
TEST(BenchRecovery, SimulatedResultsRepeatAndCheckpointEveryBoundsTheScatteredWalk) {
  TempDir dir;
  const std::vector<std::string> small_window{"--crash-writes", "1000", "--window", "2",
                                              "--checkpoint-s", "0"};
  auto with = [&](const std::string& every) {
    std::vector<std::string> a = small_window;
    a.insert(a.end(), {"--checkpoint-every", every});
    return recovery_bench(dir, a);
  };
  const json never = with("0");
  const json again = with("0");
  EXPECT_EQ(never.at("unclean").at("simulated_ms"), again.at("unclean").at("simulated_ms"));
  EXPECT_EQ(never.at("crash_phase"), again.at("crash_phase"));
  EXPECT_EQ(never.at("crash_phase").at("delta_checkpoints"), 0);

  ASSERT_GT(never.at("unclean").at("scattered_walked").get<uint64_t>(), 17u) << "precondition";

  // At most checkpoint_every, and the pieces of the request that made the
  // delta due (one: a 4 KiB write).
  const json often = with("16");
  EXPECT_GE(often.at("crash_phase").at("delta_checkpoints").get<uint64_t>(), 1u);
  EXPECT_LE(often.at("unclean").at("scattered_walked").get<uint64_t>(), 17u);
}

TEST(BenchRecovery, ABadDirectoryIsOneLineAndNoImage) {
  TempDir dir;
  const ProgramRun r = run_program(dir, VLD_BENCH_PATH,
                                   {"recovery", "--size", "64M", "--dir", dir.file("missing")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot make a directory in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--dir"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace vld::test
