// The stats file's "recovery" and "checksum_failures" in every mode
// (docs/stats.md, "Recovery and checksums in every mode"): one reader,
// asking the same keys, learns what each mode's open read and decided, and
// whether its reads were checked, after a new image, a clean stop and a
// kill -9. A key a mode cannot fill says so (null), never goes missing.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

using json = nlohmann::json;

constexpr uint64_t kBlk = 4096;

// What the open did, as the mode says it: the method it names.
std::string expected_method(const std::string& mode, bool after_kill) {
  if (mode == "vld") return after_kill ? "record+window" : "clean-walk";
  if (mode == "lld") return "checkpoint+roll-forward+nvram";
  if (mode == "lld_nvram0") return "checkpoint+roll-forward";
  return "redo-journal";
}

// The keys every mode's recovery has, with values that make sense for
// `mode`; and checksum_failures, counted (0 here) or null (inplace).
void expect_common_recovery(const json& stats, const std::string& mode, bool after_kill) {
  SCOPED_TRACE(stats.dump(1));
  ASSERT_TRUE(stats.contains("recovery"));
  const json& rec = stats.at("recovery");
  if (mode == "inplace") {
    // No ARU was in flight at the kill: nothing tells a crash from a clean stop.
    EXPECT_TRUE(rec.at("clean").is_null());
  } else {
    EXPECT_EQ(rec.at("clean"), !after_kill);
  }
  EXPECT_EQ(rec.at("method"), expected_method(mode, after_kill));
  EXPECT_GT(rec.at("sectors_read").get<uint64_t>(), 0u);
  EXPECT_GT(rec.at("simulated_ms").get<double>(), 0.0);
  EXPECT_GE(rec.at("wall_ms").get<double>(), 0.0);
  EXPECT_EQ(rec.at("damage"), "");
  ASSERT_TRUE(stats.contains("checksum_failures"));
  if (mode == "inplace") {
    EXPECT_TRUE(stats.at("checksum_failures").is_null()) << "inplace checks no checksum";
  } else {
    EXPECT_EQ(stats.at("checksum_failures"), 0);
  }
  if (is_lld(mode)) {
    EXPECT_EQ(stats.at("lld").at("recovery"), rec) << "lld.recovery is the same object";
  }
}

// The series' last line: cumulative checksum failures, no recovery.
void expect_series_totals(const std::string& stats_path, const json& stats) {
  std::ifstream in(stats_path + ".jsonl");
  std::string line, last;
  while (std::getline(in, line)) last = line;
  ASSERT_FALSE(last.empty()) << "no time series beside " << stats_path;
  const json totals = json::parse(last).at("totals");
  EXPECT_EQ(totals.at("checksum_failures"), stats.at("checksum_failures"));
  EXPECT_FALSE(totals.contains("recovery"));
  if (totals.contains("lld")) {
    EXPECT_FALSE(totals.at("lld").contains("recovery"));
  }
}

// A server on `image` with its own stats file; writes `blocks` blocks from
// `first` (FUA, so that they are durable in every mode), then stops
// cleanly or is killed. Returns the stats file's path.
std::string serve(const TempDir& dir, const std::string& image, std::vector<std::string> params,
                  const std::string& name, uint64_t first, uint64_t blocks, bool kill) {
  const std::string stats = dir.file(name + ".json");
  params.insert(params.begin(), {"file=" + image, "latency=none", "statsfile=" + stats});
  NbdkitServer server(dir, params);
  {
    NbdHandle h = server.connect();
    for (uint64_t b = first; b < first + blocks; ++b)
      write_bytes(h.get(), b * kBlk, pattern_bytes(b * kBlk, kBlk, 3), LIBNBD_CMD_FLAG_FUA);
    if (kill) {
      server.kill9();
      return stats;
    }
    nbd_shutdown(h.get(), 0);
  }
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  return stats;
}

class StatsRecovery : public ::testing::TestWithParam<const char*> {};

TEST_P(StatsRecovery, EveryOpenReportsTheSameKeys) {
  const std::string mode = GetParam();
  TempDir dir;
  const std::string image = dir.file("disk.img");

  const std::string made = serve(dir, image, with_mode({"size=16M"}, mode), "made", 0, 16, false);
  {
    SCOPED_TRACE("a new image");
    const json j = read_json(made);
    EXPECT_EQ(j.at("mode"), mode_stat_name(mode));
    expect_common_recovery(j, mode, /*after_kill=*/false);
  }
  const std::string again = serve(dir, image, {}, "again", 16, 16, false);
  {
    SCOPED_TRACE("after a clean stop");
    const json j = read_json(again);
    expect_common_recovery(j, mode, /*after_kill=*/false);
    expect_series_totals(again, j);
  }
  serve(dir, image, {}, "killed", 32, 16, /*kill=*/true);
  const std::string after = serve(dir, image, {}, "after", 0, 0, false);
  {
    SCOPED_TRACE("after kill -9");
    const json j = read_json(after);
    expect_common_recovery(j, mode, /*after_kill=*/true);
    expect_series_totals(after, j);
    const json& rec = j.at("recovery");
    // Each mode's own keys, beside the common ones.
    if (mode == "vld") {
      EXPECT_GT(rec.at("map_sectors_walked").get<uint64_t>(), 0u);
    } else if (mode == "lld") {
      // The killed run's writes, in the NVRAM only.
      EXPECT_GT(rec.at("nvram_records_replayed").get<uint64_t>(), 0u);
    } else if (mode == "lld_nvram0") {
      EXPECT_GT(rec.at("writes_rolled_forward").get<uint64_t>(), 0u);  // the FUA writes
    } else {
      EXPECT_EQ(rec.at("records_replayed"), 0);
      EXPECT_EQ(rec.at("blocks_replayed"), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, StatsRecovery, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
