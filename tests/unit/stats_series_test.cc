// The time series (docs/stats.md): DiskController's intervals, taken by the
// caller (the plugin, on wall time) or ended by simulated time (vld-bench),
// and their JSON lines. Time is injected: the in-place disk in memory runs
// requests back to back (no arrival) or from given arrival times, so every
// interval's counts are exact.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/disk_controller.h"
#include "core/inplace/inplace_disk.h"
#include "core/store/backing_store.h"
#include "plugin/options.h"
#include "stats/stats_json.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kExport = 1 << 20;
constexpr uint64_t kBlock = 4096;

std::unique_ptr<DiskController> controller() {
  Superblock sb = test::st19101_superblock(DiskMode::kInplace, kExport);
  auto s = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  return std::make_unique<DiskController>(std::make_unique<InplaceDisk>(std::move(s), sb));
}

SimTime at_ms(int64_t ms) { return kSimEpoch + std::chrono::milliseconds(ms); }

uint64_t histogram_total(const nlohmann::json& latency) {
  uint64_t n = 0;
  for (const auto& b : latency["histogram"]) n += b[2].get<uint64_t>();
  return n;
}

// Two intervals taken by the caller, with known requests in each.
TEST(StatsSeries, TakenIntervalsCountTheirOwnRequests) {
  auto dc = controller();
  std::vector<std::byte> data(128 * 1024, std::byte{7});
  dc->start_intervals(kSimEpoch);
  for (int i = 0; i < 3; ++i) dc->write(i * kBlock, std::span(data).first(kBlock), false, {});
  for (int i = 0; i < 2; ++i) dc->read(0, std::span(data).first(64 * 1024), {});
  const SimTime mid = dc->busy_until();
  const IntervalStats one = dc->take_interval(std::nullopt);
  dc->write(0, data, true, {});  // 128 KiB: larger
  dc->flush({});
  const IntervalStats two = dc->take_interval(std::nullopt);

  EXPECT_EQ(one.number, 1u);
  EXPECT_EQ(one.start, kSimEpoch);
  EXPECT_EQ(one.end, mid);
  EXPECT_EQ(one.activity.requests.write, 3u);
  EXPECT_EQ(one.activity.requests.read, 2u);
  EXPECT_EQ(one.activity.write_by_size[0].count(), 3u);  // 4k
  EXPECT_EQ(one.activity.read_by_size[1].count(), 2u);   // 64k
  EXPECT_EQ(one.activity.bytes_read, 2 * 64 * 1024u);
  EXPECT_EQ(two.number, 2u);
  EXPECT_EQ(two.start, mid);
  EXPECT_EQ(two.end, dc->busy_until());
  EXPECT_EQ(two.activity.requests.write, 1u);
  EXPECT_EQ(two.activity.requests.write_fua, 1u);
  EXPECT_EQ(two.activity.requests.flush, 1u);
  EXPECT_EQ(two.activity.requests.read, 0u);
  EXPECT_EQ(two.activity.write_by_size[2].count(), 1u);  // larger
  EXPECT_EQ(two.totals.requests.write, 4u);
  EXPECT_EQ(two.totals.requests.read, 2u);
  // Back to back from time zero: the two intervals' busy time is the run's.
  EXPECT_EQ(one.activity.busy + two.activity.busy, two.totals.busy);
  EXPECT_EQ(two.totals.busy, two.end - kSimEpoch);
  EXPECT_EQ(dc->stats().write_by_size[0].count(), 3u);
  EXPECT_EQ(dc->stats().write_by_size[2].count(), 1u);
}

// Intervals of simulated time, 20 ms: requests start at 1 and 2 ms (the
// first interval), 45 ms (the third: the second had none and writes no
// line) and 71 ms (the fourth, ended by the caller).
TEST(StatsSeries, SimulatedTimeIntervalsEndAtTheirBoundaries) {
  auto dc = controller();
  std::vector<std::byte> data(kBlock, std::byte{1});
  std::vector<IntervalStats> lines;
  dc->set_interval_observer(kSimEpoch, std::chrono::milliseconds(20),
                            [&](const IntervalStats& i) { lines.push_back(i); });
  for (int64_t ms : {1, 2, 45, 71}) dc->write(0, data, false, at_ms(ms));
  lines.push_back(dc->take_interval(std::nullopt));

  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].start, at_ms(0));
  EXPECT_EQ(lines[0].end, at_ms(20));
  EXPECT_EQ(lines[0].activity.requests.write, 2u);
  EXPECT_EQ(lines[1].start, at_ms(40));
  EXPECT_EQ(lines[1].end, at_ms(60));
  EXPECT_EQ(lines[1].activity.requests.write, 1u);
  EXPECT_EQ(lines[1].totals.requests.write, 3u);
  EXPECT_EQ(lines[2].start, at_ms(60));
  EXPECT_EQ(lines[2].end, dc->busy_until());
  EXPECT_EQ(lines[2].activity.requests.write, 1u);
  EXPECT_EQ(lines[2].number, 3u);
}

// An interval's line: the documented keys, histograms that add up to the
// counts, and the wall span when there is one.
TEST(StatsSeries, IntervalLineHasTheDocumentedKeys) {
  auto dc = controller();
  std::vector<std::byte> data(2 * kBlock, std::byte{3});
  dc->start_intervals(kSimEpoch);
  dc->write(0, data, false, {});
  dc->read(0, std::span(data).first(kBlock), {});
  const nlohmann::json j =
      interval_to_json(dc->take_interval(std::nullopt), WallSpan{1000.0, 1001.0});
  for (const char* k : {"interval", "wall_start", "wall_end", "sim_start_us", "sim_end_us",
                        "requests", "write_latency_us", "read_latency_us", "flush_latency_us",
                        "write_by_size_us", "read_by_size_us", "physical_writes",
                        "physical_reads", "bytes_written", "bytes_read", "backing_syncs",
                        "busy_us", "idle_steps", "idle_busy_us", "totals"})
    EXPECT_TRUE(j.contains(k)) << k;
  for (const char* k : {"requests", "physical_writes", "utilization", "simulated_time_us",
                        "busy_us", "idle_steps"})
    EXPECT_TRUE(j["totals"].contains(k)) << k;
  EXPECT_EQ(j["wall_end"], 1001.0);
  EXPECT_EQ(j["write_latency_us"]["count"], 1);
  EXPECT_EQ(histogram_total(j["write_latency_us"]), 1u);
  EXPECT_EQ(histogram_total(j["write_by_size_us"]["64k"]), 1u);
  EXPECT_EQ(histogram_total(j["read_by_size_us"]["4k"]), 1u);
  EXPECT_EQ(j["read_latency_us"]["histogram"].size(), 1u);
  const auto& b = j["read_latency_us"]["histogram"][0];
  const double mean = j["read_latency_us"]["mean"];
  EXPECT_LE(b[0].get<double>(), mean);
  EXPECT_LT(mean, b[1].get<double>());
  EXPECT_TRUE(interval_to_json(dc->take_interval(std::nullopt), std::nullopt)["wall_start"]
                  .is_null());
}

// stats_interval= (plugin/parameters.h): whole seconds from 0 to a day.
TEST(StatsSeries, IntervalParameter) {
  PluginOptions o;
  EXPECT_EQ(o.stats_interval_s, 1u);
  EXPECT_EQ(set_option(&o, "stats_interval", "5"), "");
  EXPECT_EQ(o.stats_interval_s, 5u);
  EXPECT_EQ(set_option(&o, "stats_interval", "0"), "");
  EXPECT_EQ(o.stats_interval_s, 0u);
  for (const char* bad : {"-1", "86401", "1.5", "", "1s"})
    EXPECT_NE(set_option(&o, "stats_interval", bad), "") << bad;
}

}  // namespace
}  // namespace vld
