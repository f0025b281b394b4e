// stats/mode_report_json.h: mode=lld's "lld" section, and the "recovery"
// and "checksum_failures" every mode has, as docs/stats.md documents them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "core/modes/mode_report.h"
#include "stats/mode_report_json.h"

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
  s.checkpoint_folds = 19;
  s.nvram_records_written = 13;
  s.nvram_drains = 14;
  s.nvram_bypasses = 15;
  s.nvram_stalls = 16;
  s.refused_requests = 17;
  s.checksum_failures = 18;
  s.nvram_time = SimDuration{1'500'000};          // 1.5 ms
  s.segment_write_time = SimDuration{2'000'000};  // 2 ms
  s.cleaning_time = SimDuration{3'250'000};
  s.checkpoint_time = SimDuration{4'000'000};
  s.nvram_stall_time = SimDuration{500'000};
  LldRecoveryReport& v = r.recovery;
  v.clean = true;
  v.method = "checkpoint+roll-forward+nvram";
  v.checkpoint_generation = 21;
  v.writes_rolled_forward = 22;
  v.writes_discarded = 23;
  v.nvram_records_replayed = 24;
  v.sectors_read = 25;
  v.simulated_ms = 26.5;
  v.wall_ms = 27.5;
  v.stopped_because = "seq gap";
  v.nvram_records_dropped = 28;
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
  EXPECT_EQ(j.at("segment_writes"), 1);
  EXPECT_EQ(j.at("partial_writes"), 2);
  EXPECT_EQ(j.at("segments_closed"), 3);
  EXPECT_EQ(j.at("client_blocks_written"), 400);
  EXPECT_EQ(j.at("summary_sectors_written"), 5);
  EXPECT_EQ(j.at("segments_cleaned"), 6);
  EXPECT_EQ(j.at("segments_freed"), 7);
  EXPECT_EQ(j.at("cleaner_blocks_moved"), 100);
  EXPECT_EQ(j.at("cleaner_sectors_read"), 9);
  EXPECT_EQ(j.at("idle_cleans"), 10);
  EXPECT_EQ(j.at("checkpoints"), 11);
  EXPECT_EQ(j.at("checkpoint_sectors_written"), 12);
  EXPECT_EQ(j.at("checkpoint_folds"), 19);
  EXPECT_EQ(j.at("nvram_records_written"), 13);
  EXPECT_EQ(j.at("nvram_drains"), 14);
  EXPECT_EQ(j.at("nvram_bypasses"), 15);
  EXPECT_EQ(j.at("nvram_stalls"), 16);
  EXPECT_EQ(j.at("refused_requests"), 17);
  EXPECT_DOUBLE_EQ(j.at("nvram_ms").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j.at("segment_write_ms").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j.at("cleaning_ms").get<double>(), 3.25);
  EXPECT_DOUBLE_EQ(j.at("checkpoint_ms").get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j.at("nvram_stall_ms").get<double>(), 0.5);
  const nlohmann::json& v = j.at("recovery");
  EXPECT_EQ(v.at("clean"), true);
  EXPECT_EQ(v.at("method"), "checkpoint+roll-forward+nvram");
  EXPECT_EQ(v.at("checkpoint_generation"), 21);
  EXPECT_EQ(v.at("writes_rolled_forward"), 22);
  EXPECT_EQ(v.at("writes_discarded"), 23);
  EXPECT_EQ(v.at("nvram_records_replayed"), 24);
  EXPECT_EQ(v.at("sectors_read"), 25);
  EXPECT_DOUBLE_EQ(v.at("simulated_ms").get<double>(), 26.5);
  EXPECT_DOUBLE_EQ(v.at("wall_ms").get<double>(), 27.5);
  EXPECT_EQ(v.at("damage"), "NVRAM record seq 5 (block 7) fails its data checksum");
  EXPECT_EQ(v.at("nvram_records_dropped"), 28);
  EXPECT_EQ(v.at("stopped_because"), "seq gap");
  EXPECT_EQ(v.size(), 12u);
  // The failures are the top level's "checksum_failures" (see below), not the section's.
  EXPECT_FALSE(j.contains("checksum_failures"));
  EXPECT_EQ(j.at("segment_count"), 31);
  EXPECT_EQ(j.at("segment_sectors"), 1024);
  EXPECT_EQ(j.at("blocks_per_segment"), 127);
  EXPECT_EQ(j.at("free_segments"), 33);
  EXPECT_EQ(j.at("live_blocks"), 34);
  EXPECT_EQ(j.at("nvram_capacity_records"), 35);
  EXPECT_EQ(j.at("nvram_used_records"), 36);
  EXPECT_EQ(j.at("nvram_buffered_blocks"), 37);
  EXPECT_EQ(j.at("partial_percent"), 75);
  EXPECT_EQ(j.at("cleaner_policy"), "cost-benefit");
  EXPECT_DOUBLE_EQ(j.at("nvram_us").get<double>(), 20.5);
  EXPECT_DOUBLE_EQ(j.at("write_amplification").get<double>(), 1.25);  // (400 + 100) / 400
  // 18 counters, 5 times, recovery, 11 state fields, write amplification.
  EXPECT_EQ(j.size(), 18u + 5 + 1 + 11 + 1);
}

TEST(LldReportJson, IsTheLldSectionOfAModeReport) {
  ModeReport r;
  EXPECT_EQ(nlohmann::json(r), nlohmann::json::object());
  r.lld = unusual_lld_report();
  const nlohmann::json j = r;
  ASSERT_EQ(j.size(), 3u) << j.dump(1);
  EXPECT_EQ(j.at("lld"), nlohmann::json(*r.lld));
  // No writes yet: no amplification to speak of.
  EXPECT_EQ(nlohmann::json(LldReport{}).at("write_amplification"), 0.0);
}

// The keys every mode's "recovery" has, whatever else it says.
const std::set<std::string> kCommonRecoveryKeys = {"clean",        "method",  "sectors_read",
                                                   "simulated_ms", "wall_ms", "damage"};

void expect_common_recovery_keys(const nlohmann::json& recovery) {
  for (const std::string& k : kCommonRecoveryKeys)
    EXPECT_TRUE(recovery.contains(k)) << k << " missing from " << recovery.dump();
}

ModeReport vld_mode_report() {
  ModeReport r;
  r.vld = VldReport{};
  r.vld->stats.checksum_failures = 5;
  r.compactor = CompactorReport{};
  r.recovery = RecoveryReport{};
  r.recovery->clean = false;
  r.recovery->method = "record+window";
  r.recovery->sectors_read = 700;
  r.recovery->simulated_ms = 12.5;
  r.recovery->wall_ms = 3.25;
  r.recovery->map_sectors_walked = 40;
  r.recovery->tracks_walked = 3;
  return r;
}

ModeReport inplace_mode_report(std::optional<bool> clean) {
  ModeReport r;
  r.inplace_recovery = InplaceRecoveryReport{};
  r.inplace_recovery->clean = clean;
  r.inplace_recovery->sectors_read = 17;
  r.inplace_recovery->simulated_ms = 9.5;
  r.inplace_recovery->wall_ms = 0.75;
  const bool replayed = clean == false;  // only a replay tells an unclean stop
  r.inplace_recovery->records_replayed = replayed ? 1 : 0;
  r.inplace_recovery->blocks_replayed = replayed ? 3 : 0;
  return r;
}

// mode=lld: the top level's "recovery" is lld.recovery (kept there too,
// for the scripts that read it there), and its failures are counted.
TEST(ModeReportJson, LldRecoveryAndChecksumFailuresAtTheTopLevel) {
  ModeReport r;
  r.lld = unusual_lld_report();
  const nlohmann::json j = r;
  expect_common_recovery_keys(j.at("recovery"));
  EXPECT_EQ(j.at("recovery"), j.at("lld").at("recovery"));
  EXPECT_EQ(j.at("recovery").at("sectors_read"), 25);
  EXPECT_EQ(j.at("checksum_failures"), 18);
}

TEST(ModeReportJson, VldRecoveryAndChecksumFailuresAtTheTopLevel) {
  const nlohmann::json j = vld_mode_report();
  expect_common_recovery_keys(j.at("recovery"));
  EXPECT_EQ(j.at("recovery").at("clean"), false);
  EXPECT_EQ(j.at("recovery").at("method"), "record+window");
  EXPECT_EQ(j.at("recovery").at("sectors_read"), 700);
  EXPECT_DOUBLE_EQ(j.at("recovery").at("simulated_ms").get<double>(), 12.5);
  EXPECT_DOUBLE_EQ(j.at("recovery").at("wall_ms").get<double>(), 3.25);
  EXPECT_EQ(j.at("recovery").at("damage"), "");
  EXPECT_EQ(j.at("recovery").at("map_sectors_walked"), 40);
  EXPECT_EQ(j.at("recovery").at("tracks_walked"), 3);
  EXPECT_EQ(j.at("checksum_failures"), 5);
  EXPECT_EQ(j.at("vld").at("checksum_failures"), 5);  // the alias the vld section keeps
  EXPECT_EQ(j.size(), 4u) << j.dump(1);  // vld, compactor, recovery, checksum_failures
}

// mode=inplace: a recovery in the same keys (clean null: not known), and
// checksum_failures null, not 0: it keeps no checksums, so none was checked.
TEST(ModeReportJson, InplaceRecoveryAndNoChecksums) {
  const nlohmann::json quiet = inplace_mode_report(std::nullopt);
  ASSERT_EQ(quiet.size(), 2u) << quiet.dump(1);
  const nlohmann::json& rec = quiet.at("recovery");
  expect_common_recovery_keys(rec);
  EXPECT_TRUE(rec.at("clean").is_null());
  EXPECT_EQ(rec.at("method"), "redo-journal");
  EXPECT_EQ(rec.at("sectors_read"), 17);
  EXPECT_DOUBLE_EQ(rec.at("simulated_ms").get<double>(), 9.5);
  EXPECT_DOUBLE_EQ(rec.at("wall_ms").get<double>(), 0.75);
  EXPECT_EQ(rec.at("damage"), "");
  EXPECT_EQ(rec.at("records_replayed"), 0);
  EXPECT_EQ(rec.at("blocks_replayed"), 0);
  EXPECT_EQ(rec.size(), kCommonRecoveryKeys.size() + 2);
  ASSERT_TRUE(quiet.contains("checksum_failures"));
  EXPECT_TRUE(quiet.at("checksum_failures").is_null());

  const nlohmann::json replayed = inplace_mode_report(false);
  EXPECT_EQ(replayed.at("recovery").at("clean"), false);
  EXPECT_EQ(replayed.at("recovery").at("records_replayed"), 1);
  EXPECT_EQ(replayed.at("recovery").at("blocks_replayed"), 3);
}

}  // namespace
}  // namespace vld
