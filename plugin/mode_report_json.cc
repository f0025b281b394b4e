#include "plugin/mode_report_json.h"

namespace vld {

namespace {

template <typename T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
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
      {"checkpoints", s.checkpoints},
      {"log_record_us", r.log_record_us()},
      {"rmw_reads", s.rmw_reads},
      {"checksum_failures", s.checksum_failures},
      {"live_map_sectors", r.live_map_sectors},
      {"retired_map_sectors", r.retired_map_sectors},
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
  j = {{"clean", r.clean},
       {"method", r.method},
       {"sectors_read", r.sectors_read},
       {"simulated_ms", r.simulated_ms},
       {"wall_ms", r.wall_ms},
       {"map_sectors_walked", r.map_sectors_walked},
       {"tracks_scanned", r.tracks_scanned},
       {"candidates", r.candidates},
       {"groups_accepted", r.groups_accepted},
       {"groups_rejected", r.groups_rejected},
       {"data_blocks_checked", r.data_blocks_checked},
       {"damage", r.damage}};
}

void to_json(nlohmann::json& j, const ModeReport& r) {
  j = nlohmann::json::object();
  if (r.vld) j["vld"] = *r.vld;
  if (r.compactor) j["compactor"] = *r.compactor;
  if (r.recovery) j["recovery"] = *r.recovery;
}

}  // namespace vld
