// statsfile=PATH with stats_interval=1: the time series in PATH.jsonl
// (docs/stats.md). Interval boundaries are wall time, so the test does not
// pick them: it does a first batch of requests, waits until a line shows
// an interval that ended after them, does a second batch, stops the server
// (which writes the last, partial interval), and checks what must hold
// wherever the boundaries fell: at least two lines, numbered in order,
// each interval starting where the one before ended, per-interval counts
// (and their histograms) adding up to the known totals, which the last
// line's totals and the stats file agree with.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

std::vector<nlohmann::json> read_lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

uint64_t histogram_total(const nlohmann::json& latency) {
  uint64_t n = 0;
  for (const auto& b : latency.at("histogram")) n += b.at(2).get<uint64_t>();
  return n;
}

// Sums a per-interval count over the lines.
uint64_t sum(const std::vector<nlohmann::json>& lines, const nlohmann::json::json_pointer& p) {
  uint64_t n = 0;
  for (const auto& l : lines) n += l.at(p).get<uint64_t>();
  return n;
}

TEST(StatsSeries, IntervalsAddUpToTheRequestsServed) {
  constexpr int kSmall = 5, kReads = 2, kLarge = 3, kFlushes = 1;
  TempDir dir;
  const std::string stats = dir.file("stats.json"), series = stats + ".jsonl";
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "mode=inplace",
                            "latency=none", "statsfile=" + stats, "stats_interval=1"});
  NbdHandle h = server.connect();
  for (int i = 0; i < kSmall; ++i) write_bytes(h.get(), i * 4096, pattern_bytes(i * 4096, 4096, 1));
  for (int i = 0; i < kReads; ++i) read_bytes(h.get(), 0, 65536);
  ASSERT_TRUE(NbdkitServer::eventually(
      [&] {
        const auto lines = read_lines(series);
        return !lines.empty() && lines.back().at("totals").at("requests").at("read") == kReads;
      },
      std::chrono::seconds(10)))
      << "no interval ended after the first batch";
  for (int i = 0; i < kLarge; ++i)
    write_bytes(h.get(), 1 << 20, pattern_bytes(1 << 20, 128 * 1024, 2));
  check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();

  const std::vector<nlohmann::json> lines = read_lines(series);
  ASSERT_GE(lines.size(), 2u);
  for (size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(lines[i].dump());
    EXPECT_EQ(lines[i].at("interval"), i + 1);
    EXPECT_LE(lines[i].at("wall_start").get<double>(), lines[i].at("wall_end").get<double>());
    EXPECT_LE(lines[i].at("sim_start_us").get<double>(), lines[i].at("sim_end_us").get<double>());
    if (i > 0) {
      EXPECT_EQ(lines[i].at("wall_start"), lines[i - 1].at("wall_end"));
      EXPECT_EQ(lines[i].at("sim_start_us"), lines[i - 1].at("sim_end_us"));
    }
    for (const char* op : {"read_latency_us", "write_latency_us", "flush_latency_us"})
      EXPECT_EQ(histogram_total(lines[i].at(op)), lines[i].at(op).at("count")) << op;
  }
  using P = nlohmann::json::json_pointer;
  EXPECT_EQ(sum(lines, P("/requests/write")), kSmall + kLarge);
  EXPECT_EQ(sum(lines, P("/requests/read")), kReads);
  EXPECT_EQ(sum(lines, P("/requests/flush")), kFlushes);
  EXPECT_EQ(sum(lines, P("/write_latency_us/count")), kSmall + kLarge);
  EXPECT_EQ(sum(lines, P("/write_by_size_us/4k/count")), kSmall);
  EXPECT_EQ(sum(lines, P("/write_by_size_us/larger/count")), kLarge);
  EXPECT_EQ(sum(lines, P("/read_by_size_us/64k/count")), kReads);
  EXPECT_EQ(sum(lines, P("/bytes_written")), kSmall * 4096 + kLarge * 128 * 1024);
  // An interval ended between the batches: its totals hold the first alone.
  bool between = false;
  for (const auto& l : lines)
    between |= l.at("totals").at("requests").at("read") == kReads &&
               l.at("totals").at("requests").at("write") == kSmall;
  EXPECT_TRUE(between);
  const nlohmann::json j = read_json(stats);
  EXPECT_EQ(lines.back().at("totals").at("requests"), j.at("requests"));
  EXPECT_EQ(lines.back().at("totals").at("physical_writes"), j.at("physical_writes"));
  EXPECT_EQ(histogram_total(j.at("write_latency_us")), kSmall + kLarge);
}

TEST(StatsSeries, IntervalZeroWritesNoSeries) {
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "latency=none",
                            "statsfile=" + stats, "stats_interval=0"});
  { NbdHandle h = server.connect(); }
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  EXPECT_TRUE(read_json(stats).contains("histogram_scheme"));
  EXPECT_FALSE(std::ifstream(stats + ".jsonl").good());
}

}  // namespace
}  // namespace vld::test
