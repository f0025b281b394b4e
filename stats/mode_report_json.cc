#include "stats/mode_report_json.h"

namespace vld {

namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The keys every mode's "recovery" has (docs/stats.md, "Recovery and
// checksums in every mode"); the mode's own keys follow them.
nlohmann::json recovery_common(nlohmann::json clean, const std::string& method,
                               uint64_t sectors_read, double simulated_ms, double wall_ms,
                               const std::string& damage) {
  return {{"clean", std::move(clean)},       {"method", method},
          {"sectors_read", sectors_read},    {"simulated_ms", simulated_ms},
          {"wall_ms", wall_ms},              {"damage", damage}};
}

}  // namespace

void to_json(nlohmann::json& j, const VldReport& r) {
  const VldStats& s = r.stats;
  const AllocatorStats& a = r.allocator;
  j = {
      {"data_blocks_written", s.data_blocks_written},
      {"map_sectors_written", s.map_sectors_written},
      {"relays", s.relays},
      {"map_update_us", r.map_update_us()},
      {"log_records_written", s.records_written},
      {"dry_window_moves", s.dry_window_moves},
      {"narrow_records", s.narrow_records},
      {"scan_set_widenings", s.scan_set_widenings},
      {"checkpoints", s.checkpoints},
      {"delta_checkpoints", s.delta_checkpoints},
      {"idle_delta_checkpoints", s.idle_delta_checkpoints},
      {"checkpoint_map_sectors", s.checkpoint_map_sectors},
      {"checkpoint_ms", to_ms(s.checkpoint_time)},
      {"log_record_us", r.log_record_us()},
      {"rmw_reads", s.rmw_reads},
      {"checksum_failures", s.checksum_failures},
      {"live_map_sectors", r.live_map_sectors},
      {"retired_map_sectors", r.retired_map_sectors},
      {"scattered_map_sectors", r.scattered_map_sectors},
      {"pending_data_frees", r.pending_data_frees},
      {"window", {{"first_cylinder", r.window.first}, {"cylinders", r.window.count}}},
      {"fill", r.fill},
      {"allocator",
       {{"pieces", a.pieces},
        {"contiguous_commands", a.contiguous_commands},
        {"small_first_commands", a.small_first_commands},
        {"fill_switches", a.fill_switches},
        {"greedy_pieces", a.greedy_pieces},
        {"mean_locate_sectors", r.mean_locate_sectors()}}},
      {"empty_tracks", r.empty_tracks},
      {"reserve_track", or_null(r.reserve_track)},
      {"free_sectors", r.free_sectors},
      {"block_holes", r.block_holes},
      {"fragmented_free_fraction", r.fragmented_free_fraction()},
      {"repacks", s.repacks},
      {"idle_repacks", s.idle_repacks},
      {"repack_blocks_moved", s.repack_blocks_moved},
      {"repack_ms", r.repack_ms()},
  };
}

void to_json(nlohmann::json& j, const CompactorReport& r) {
  const CompactorStats& c = r.stats;
  j = {
      {"enabled", r.enabled},
      {"policy", policy_name(r.policy)},
      {"tracks_compacted", c.tracks_compacted},
      {"tracks_abandoned", c.tracks_abandoned},
      {"tracks_cut_short", c.tracks_cut_short},
      {"steps_declined", c.steps_declined},
      {"blocks_moved", c.blocks_moved},
      {"map_sectors_moved", c.map_sectors_moved},
      {"steps", c.steps},
      {"busy_ms", r.busy_ms()},
      {"victim", or_null(r.victim)},
      {"empty_tracks", r.empty_tracks},
      {"write_amplification", r.write_amplification()},
      {"write_amplification_with_map", r.write_amplification_with_map()},
  };
}

void to_json(nlohmann::json& j, const RecoveryReport& r) {
  j = recovery_common(r.clean, r.method, r.sectors_read, r.simulated_ms, r.wall_ms, r.damage);
  j.update({{"map_sectors_walked", r.map_sectors_walked},
            {"scattered_walked", r.scattered_walked},
            {"tracks_walked", r.tracks_walked},
            {"data_blocks_read", r.data_blocks_read},
            {"tracks_scanned", r.tracks_scanned},
            {"candidates", r.candidates},
            {"groups_accepted", r.groups_accepted},
            {"groups_rejected", r.groups_rejected},
            {"data_blocks_checked", r.data_blocks_checked}});
}

// damage: what recovery found and worked around exactly; an lld image it
// cannot read whole refuses to open.
void to_json(nlohmann::json& j, const LldRecoveryReport& r) {
  j = recovery_common(r.clean, r.method, r.sectors_read, r.simulated_ms, r.wall_ms, r.damage);
  j.update({{"checkpoint_generation", r.checkpoint_generation},
            {"writes_rolled_forward", r.writes_rolled_forward},
            {"writes_discarded", r.writes_discarded},
            {"nvram_records_replayed", r.nvram_records_replayed},
            {"nvram_records_dropped", r.nvram_records_dropped},
            {"stopped_because", r.stopped_because}});
}

// damage "": a journal record that fails its MAC is one a crash cut, never
// replayed (redo_journal.h); nothing else is read.
void to_json(nlohmann::json& j, const InplaceRecoveryReport& r) {
  j = recovery_common(or_null(r.clean), "redo-journal", r.sectors_read, r.simulated_ms,
                      r.wall_ms, "");
  j.update({{"records_replayed", r.records_replayed}, {"blocks_replayed", r.blocks_replayed}});
}

namespace {

// LldStats: its counters as they are, its times in ms.
nlohmann::json lld_stats_json(const LldStats& s) {
  return {
      {"segment_writes", s.segment_writes},
      {"partial_writes", s.partial_writes},
      {"segments_closed", s.segments_closed},
      {"client_blocks_written", s.client_blocks_written},
      {"summary_sectors_written", s.summary_sectors_written},
      {"segments_cleaned", s.segments_cleaned},
      {"segments_freed", s.segments_freed},
      {"cleaner_blocks_moved", s.cleaner_blocks_moved},
      {"cleaner_sectors_read", s.cleaner_sectors_read},
      {"idle_cleans", s.idle_cleans},
      {"checkpoints", s.checkpoints},
      {"checkpoint_sectors_written", s.checkpoint_sectors_written},
      {"checkpoint_folds", s.checkpoint_folds},
      {"nvram_records_written", s.nvram_records_written},
      {"nvram_drains", s.nvram_drains},
      {"nvram_bypasses", s.nvram_bypasses},
      {"nvram_stalls", s.nvram_stalls},
      {"refused_requests", s.refused_requests},
      {"nvram_ms", to_ms(s.nvram_time)},
      {"segment_write_ms", to_ms(s.segment_write_time)},
      {"cleaning_ms", to_ms(s.cleaning_time)},
      {"checkpoint_ms", to_ms(s.checkpoint_time)},
      {"nvram_stall_ms", to_ms(s.nvram_stall_time)},
  };
}

}  // namespace

void to_json(nlohmann::json& j, const LldReport& r) {
  j = lld_stats_json(r.stats);
  j.update({
      {"recovery", r.recovery},
      {"segment_count", r.segment_count},
      {"segment_sectors", r.segment_sectors},
      {"blocks_per_segment", r.blocks_per_segment},
      {"free_segments", r.free_segments},
      {"live_blocks", r.live_blocks},
      {"nvram_capacity_records", r.nvram_capacity_records},
      {"nvram_used_records", r.nvram_used_records},
      {"nvram_buffered_blocks", r.nvram_buffered_blocks},
      {"partial_percent", r.partial_percent},
      {"cleaner_policy", r.cleaner_policy},
      {"nvram_us", r.nvram_us},
      {"write_amplification", r.write_amplification()},
  });
}

void to_json(nlohmann::json& j, const ModeReport& r) {
  j = nlohmann::json::object();
  if (r.vld) j["vld"] = *r.vld;
  if (r.compactor) j["compactor"] = *r.compactor;
  if (r.lld) j["lld"] = *r.lld;
  if (r.recovery) j["recovery"] = *r.recovery;
  if (r.lld) j["recovery"] = r.lld->recovery;
  if (r.inplace_recovery) j["recovery"] = *r.inplace_recovery;
  // Reads whose block failed its data checksum: vld and lld check every
  // block they read; inplace has no checksum to check, and 0 would say
  // it had checked.
  if (r.vld) j["checksum_failures"] = r.vld->stats.checksum_failures;
  if (r.lld) j["checksum_failures"] = r.lld->stats.checksum_failures;
  if (r.inplace_recovery) j["checksum_failures"] = nullptr;
}

}  // namespace vld
