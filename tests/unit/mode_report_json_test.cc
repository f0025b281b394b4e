// plugin/mode_report_json.h: mode=lld's "lld" section, as docs/stats.md
// documents it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/mode_report.h"
#include "plugin/mode_report_json.h"

namespace vld {
namespace {

// Every field a distinct value, so that a swap shows.
LldReport unusual_lld_report() {
  LldReport r;
  LldStats& s = r.stats;
  s.segment_writes = 1;
  s.partial_writes = 2;
  s.segments_closed = 3;
  s.client_blocks_written = 400;
  s.summary_sectors_written = 5;
  s.segments_cleaned = 6;
  s.segments_freed = 7;
  s.cleaner_blocks_moved = 100;
  s.cleaner_sectors_read = 9;
  s.idle_cleans = 10;
  s.checkpoints = 11;
  s.checkpoint_sectors_written = 12;
  s.nvram_records_written = 13;
  s.nvram_drains = 14;
  s.nvram_bypasses = 15;
  s.nvram_stalls = 16;
  s.refused_requests = 17;
  s.nvram_time = SimDuration{1'500'000};          // 1.5 ms
  s.segment_write_time = SimDuration{2'000'000};  // 2 ms
  s.cleaning_time = SimDuration{3'250'000};
  s.checkpoint_time = SimDuration{4'000'000};
  s.nvram_stall_time = SimDuration{500'000};
  LldRecoveryReport& v = r.recovery;
  v.clean = true;
  v.checkpoint_generation = 21;
  v.writes_rolled_forward = 22;
  v.writes_discarded = 23;
  v.nvram_records_replayed = 24;
  v.sectors_read = 25;
  v.simulated_ms = 26.5;
  v.stopped_because = "seq gap";
  v.nvram_records_dropped = 27;
  v.damage = "NVRAM record seq 5 (block 7) fails its data checksum";
  r.segment_count = 31;
  r.segment_sectors = 1024;
  r.blocks_per_segment = 127;
  r.free_segments = 33;
  r.live_blocks = 34;
  r.nvram_capacity_records = 35;
  r.nvram_used_records = 36;
  r.nvram_buffered_blocks = 37;
  r.partial_percent = 75;
  r.cleaner_policy = "cost-benefit";
  r.nvram_us = 20.5;
  return r;
}

TEST(LldReportJson, EveryFieldUnderItsKey) {
  const nlohmann::json j = unusual_lld_report();
  EXPECT_EQ(j["segment_writes"], 1);
  EXPECT_EQ(j["partial_writes"], 2);
  EXPECT_EQ(j["segments_closed"], 3);
  EXPECT_EQ(j["client_blocks_written"], 400);
  EXPECT_EQ(j["summary_sectors_written"], 5);
  EXPECT_EQ(j["segments_cleaned"], 6);
  EXPECT_EQ(j["segments_freed"], 7);
  EXPECT_EQ(j["cleaner_blocks_moved"], 100);
  EXPECT_EQ(j["cleaner_sectors_read"], 9);
  EXPECT_EQ(j["idle_cleans"], 10);
  EXPECT_EQ(j["checkpoints"], 11);
  EXPECT_EQ(j["checkpoint_sectors_written"], 12);
  EXPECT_EQ(j["nvram_records_written"], 13);
  EXPECT_EQ(j["nvram_drains"], 14);
  EXPECT_EQ(j["nvram_bypasses"], 15);
  EXPECT_EQ(j["nvram_stalls"], 16);
  EXPECT_EQ(j["refused_requests"], 17);
  EXPECT_DOUBLE_EQ(j["nvram_ms"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["segment_write_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["cleaning_ms"].get<double>(), 3.25);
  EXPECT_DOUBLE_EQ(j["checkpoint_ms"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["nvram_stall_ms"].get<double>(), 0.5);
  const nlohmann::json& v = j["recovery"];
  EXPECT_EQ(v["clean"], true);
  EXPECT_EQ(v["checkpoint_generation"], 21);
  EXPECT_EQ(v["writes_rolled_forward"], 22);
  EXPECT_EQ(v["writes_discarded"], 23);
  EXPECT_EQ(v["nvram_records_replayed"], 24);
  EXPECT_EQ(v["sectors_read"], 25);
  EXPECT_DOUBLE_EQ(v["simulated_ms"].get<double>(), 26.5);
  EXPECT_EQ(v["stopped_because"], "seq gap");
  EXPECT_EQ(v["nvram_records_dropped"], 27);
  EXPECT_EQ(v["damage"], "NVRAM record seq 5 (block 7) fails its data checksum");
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(j["segment_count"], 31);
  EXPECT_EQ(j["segment_sectors"], 1024);
  EXPECT_EQ(j["blocks_per_segment"], 127);
  EXPECT_EQ(j["free_segments"], 33);
  EXPECT_EQ(j["live_blocks"], 34);
  EXPECT_EQ(j["nvram_capacity_records"], 35);
  EXPECT_EQ(j["nvram_used_records"], 36);
  EXPECT_EQ(j["nvram_buffered_blocks"], 37);
  EXPECT_EQ(j["partial_percent"], 75);
  EXPECT_EQ(j["cleaner_policy"], "cost-benefit");
  EXPECT_DOUBLE_EQ(j["nvram_us"].get<double>(), 20.5);
  EXPECT_DOUBLE_EQ(j["write_amplification"].get<double>(), 1.25);  // (400 + 100) / 400
  // 17 counters, 5 times, recovery, 11 state fields, write amplification.
  EXPECT_EQ(j.size(), 17u + 5 + 1 + 11 + 1);
}

TEST(LldReportJson, IsTheLldSectionOfAModeReport) {
  ModeReport r;
  EXPECT_EQ(nlohmann::json(r), nlohmann::json::object());
  r.lld = unusual_lld_report();
  const nlohmann::json j = r;
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j["lld"], nlohmann::json(*r.lld));
  // No writes yet: no amplification to speak of.
  EXPECT_EQ(nlohmann::json(LldReport{})["write_amplification"], 0.0);
}

}  // namespace
}  // namespace vld
