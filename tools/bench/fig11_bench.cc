#include "tools/bench/fig11_bench.h"

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "stats/mode_report_json.h"
#include "tools/bench/stats_recorder.h"

namespace vld {
namespace {

using json = nlohmann::json;

json run_bursts(const DiskSpec& spec, const Superblock& sb, const std::vector<std::byte>& image,
                DiskOptions options, const BurstSpec& bs, double idle_ms) {
  auto ctl = open_copy(sb, image, options);
  stats_recorder().watch(*ctl, "compactor=" + std::string(options.vld.compactor.enabled
                                                              ? policy_name(options.vld.compactor.policy)
                                                              : "off") +
                                   " idle_ms=" + json(idle_ms).dump());
  const BurstTotals t = burst_loop(*ctl, region_blocks(sb, spec.util), spec, bs, idle_ms, nullptr);
  stats_recorder().finish(*ctl);
  const ModeReport& before = t.before;
  const uint64_t n = t.n;
  const ModeReport after = ctl->mode_report();
  json j = burst_json(t, bs, idle_ms);
  j["utilization"] = ctl->utilization();
  if (after.vld) j["fragmented_free_fraction_end"] = after.vld->fragmented_free_fraction();
  if (after.compactor && before.compactor) {
    const CompactorReport& a = *after.compactor;
    const CompactorReport& b = *before.compactor;
    const double client = static_cast<double>(n);  // one block each
    const double data = static_cast<double>(a.data_blocks_written) -
                        static_cast<double>(b.data_blocks_written);
    const double maps = static_cast<double>(a.map_sectors_written) -
                        static_cast<double>(b.map_sectors_written);
    j["compactor"] = {
        {"enabled", a.enabled},
        {"policy", policy_name(a.policy)},
        {"tracks_compacted", a.stats.tracks_compacted - b.stats.tracks_compacted},
        {"blocks_moved", a.stats.blocks_moved - b.stats.blocks_moved},
        {"empty_tracks_end", a.empty_tracks},
        {"busy_ms", a.busy_ms() - b.busy_ms()},
        {"write_amplification", client > 0 ? data / client : 0.0},
        {"write_amplification_with_map", client > 0 ? (data + maps / 8.0) / client : 0.0},
        {"tracks_cut_short", a.stats.tracks_cut_short - b.stats.tracks_cut_short},
        {"steps_declined", a.stats.steps_declined - b.stats.steps_declined},
    };
  }
  if (after.vld && before.vld) {
    // Records (window moves, and the compactor's: one per victim) and
    // repacks (no free run held a block; idle ones counted apart).
    const VldStats& a = after.vld->stats;
    const VldStats& b = before.vld->stats;
    j["vld"] = {{"records", a.records_written - b.records_written},
                {"record_ms", to_ms(a.record_time - b.record_time)},
                {"repacks", a.repacks - b.repacks},
                {"idle_repacks", a.idle_repacks - b.idle_repacks}};
  }
  return j;
}

}  // namespace

int cmd_fig11(const DiskSpec& spec, const BurstSpec& bs) {
  const Superblock sb = plan(spec, DiskMode::kVld);
  DiskOptions options;
  const std::vector<std::byte> image = prepared_image(spec, sb, options);
  std::vector<std::pair<bool, std::string>> runs;
  std::string list = bs.policies;
  for (size_t pos = 0; pos <= list.size();) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    runs.emplace_back(true, list.substr(pos, comma - pos));
    pos = comma + 1;
  }
  if (bs.compare_off) runs.emplace_back(false, "");
  for (const auto& [on, policy] : runs) {
    DiskOptions o = options;
    apply_spec(spec, o.vld);
    o.vld.compactor.enabled = on;
    o.vld.compactor.seed = spec.seed;
    if (on) {
      auto p = parse_compaction_policy(policy);
      if (!p) throw Error("--policies: unknown policy '" + policy + "'; use fewest-live, cost-benefit or random", EINVAL);
      o.vld.compactor.policy = *p;
    }
    for (double idle : bs.idle_ms) {
      json j = run_bursts(spec, sb, image, o, bs, idle);
      j["experiment"] = "fig11";
      j["disk"] = disk_json(spec, sb);
      j["compactor_on"] = on;
      j["policy"] = on ? policy : "off";
      std::cout << j.dump() << std::endl;
    }
  }
  return 0;
}

}  // namespace vld
