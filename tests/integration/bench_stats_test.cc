// vld-bench --stats PATH --stats-interval S (tools/bench/stats_recorder.h):
// each measured disk's statistics in the stats file's schema, and its time
// series by simulated time. The schema is checked against the plugin's own
// stats file for the same mode (the same keys, plus "bench"), and the
// counts against what vld-bench says it did.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

using json = nlohmann::json;

// Runs vld-bench with args; its stdout's lines as JSON.
std::vector<json> bench(const TempDir& dir, const std::vector<std::string>& args) {
  const ProgramRun r = run_program(dir, VLD_BENCH_PATH, args);
  EXPECT_EQ(r.exit_code, 0) << "vld-bench failed: " << r.err;
  std::vector<json> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
  return lines;
}

std::vector<json> read_lines(const std::string& path) {
  std::vector<json> lines;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) lines.push_back(json::parse(l));
  return lines;
}

std::set<std::string> keys(const json& j) {
  std::set<std::string> k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

uint64_t histogram_total(const json& latency) {
  uint64_t n = 0;
  for (const auto& b : latency.at("histogram")) n += b.at(2).get<uint64_t>();
  return n;
}

// The plugin's stats file for a new disk of `mode`, served and stopped.
json plugin_stats(const TempDir& dir, const std::string& mode) {
  const std::string stats = dir.file(mode + "-plugin.json");
  NbdkitServer server(dir, {"file=" + dir.file(mode + ".img"), "size=16M", "mode=" + mode,
                            "latency=none", "statsfile=" + stats, "stats_interval=0"});
  { NbdHandle h = server.connect(); }
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  return read_json(stats);
}

TEST(BenchStats, Table2WritesTheStatsFileSchemaAndASeriesThatAddsUp) {
  constexpr uint64_t kWrites = 300;
  TempDir dir;
  const std::string path = dir.file("t2.json");
  const std::vector<json> out =
      bench(dir, {"table2", "--writes", std::to_string(kWrites), "--size", "32M", "--seed", "1",
                  "--stats", path, "--stats-interval", "0.2"});
  ASSERT_EQ(out.size(), 2u);  // vld, then inplace
  const std::string files[] = {path, dir.file("t2.2.json")};
  for (size_t d = 0; d < 2; ++d) {
    const std::string mode = out[d].at("mode");
    SCOPED_TRACE(mode);
    const json j = read_json(files[d]);
    std::set<std::string> want = keys(plugin_stats(dir, mode));
    want.insert("bench");
    EXPECT_EQ(keys(j), want);
    EXPECT_EQ(j.at("bench").at("command"), "table2");
    EXPECT_EQ(j.at("bench").at("label"), "mode=" + mode);
    EXPECT_EQ(j.at("bench").at("disk"), d + 1);
    EXPECT_EQ(j.at("requests").at("write"), kWrites);  // write + flush per update
    EXPECT_EQ(j.at("requests").at("flush"), kWrites);
    EXPECT_EQ(j.at("write_by_size_us").at("4k").at("count"), kWrites);
    EXPECT_EQ(histogram_total(j.at("write_latency_us")), kWrites);
    EXPECT_NEAR(j.at("write_latency_us").at("mean").get<double>(),
                out[d].at("mean_us").get<double>(), 1e-6);  // no queueing: the same time

    const std::vector<json> lines = read_lines(files[d] + ".jsonl");
    ASSERT_GE(lines.size(), 2u);
    uint64_t writes = 0, steps = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      EXPECT_EQ(lines[i].at("interval"), i + 1);
      EXPECT_TRUE(lines[i].at("wall_start").is_null());
      if (i > 0) {
        EXPECT_GE(lines[i].at("sim_start_us"), lines[i - 1].at("sim_end_us"));
      }
      writes += lines[i].at("requests").at("write").get<uint64_t>();
      steps += lines[i].at("idle_steps").get<uint64_t>();
      EXPECT_EQ(histogram_total(lines[i].at("write_latency_us")),
                lines[i].at("write_latency_us").at("count"));
    }
    EXPECT_EQ(writes, kWrites);
    EXPECT_EQ(steps, j.at("idle_steps"));
    EXPECT_EQ(steps, out[d].value("compaction_steps", uint64_t{0}));  // vld compacts first
    EXPECT_EQ(lines.back().at("totals").at("requests"), j.at("requests"));
  }
}

// --size takes the plugin's forms (nbdkit_parse_size's): 65536 sectors of
// 512 bytes are 32 MiB.
TEST(BenchStats, SizeInSectorsAsThePluginTakesIt) {
  TempDir dir;
  const std::vector<json> lines = bench(dir, {"table2", "--writes", "10", "--size", "65536s"});
  ASSERT_FALSE(lines.empty());
  for (const json& l : lines) EXPECT_EQ(l.at("disk").at("export_bytes"), 32u << 20);
}

}  // namespace
}  // namespace vld::test
