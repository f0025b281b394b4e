#include "tools/bench/table2_bench.h"

#include <chrono>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stats/mode_report_json.h"
#include "tools/bench/breakdown_json.h"
#include "tools/bench/fill.h"
#include "tools/bench/stats_recorder.h"
#include "tools/bench/sync_update.h"
#include "tools/bench/update_picker.h"

namespace vld {

using json = nlohmann::json;

namespace {

// One measured disk: `mode`'s prepared image, for vld idle until its
// compactor has nothing left to do when `compact`, then `writes` random
// synchronous updates over the region.
json measure(const DiskSpec& spec, DiskMode mode, bool compact, uint64_t writes) {
  const Superblock sb = plan(spec, mode);
  DiskOptions options;
  apply_spec(spec, options.vld);
  const std::vector<std::byte> image = prepared_image(spec, sb, options);
  auto ctl = open_copy(sb, image, options);
  stats_recorder().watch(*ctl, std::string("mode=") + mode_name(mode));
  json j;
  j["experiment"] = "table2";
  j["disk"] = disk_json(spec, sb);
  j["mode"] = mode_name(mode);
  if (mode == DiskMode::kVld && !compact) j["compacted"] = false;
  if (mode == DiskMode::kVld && compact) {
    // Idle until the compactor has nothing left to do (section 5.4's
    // footnote: "measured immediately after running a compactor").
    uint64_t steps = ctl->idle_until(kSimEpoch + std::chrono::hours(24 * 365));
    j["compaction_steps"] = steps;
    const ModeReport compacted = ctl->mode_report();
    j["compactor_after"] = *compacted.compactor;
    j["fragmented_free_fraction_start"] = compacted.vld->fragmented_free_fraction();
  }
  const uint64_t region = region_blocks(sb, spec.util);
  std::mt19937_64 rng(spec.seed);
  UpdatePicker pick(region, spec.hot_cold);
  SimDuration total{};
  ServiceBreakdown service;
  double host_us = 0;
  std::vector<double> lat;
  for (uint64_t i = 0; i < writes; ++i) {
    Update u = sync_update(*ctl, pick(rng), std::nullopt);
    total += u.latency;
    service += u.service;
    host_us += u.host_us;
    lat.push_back(to_us(u.latency));
  }
  const Percentiles p = percentiles(lat);
  j["writes"] = writes;
  j["mean_us"] = mean_us(total, writes);
  j["p50_us"] = p.p50;
  j["p99_us"] = p.p99;
  j["breakdown_us"] = breakdown_json(service, writes);
  j["host_us_per_write"] = host_us / static_cast<double>(writes);  // wall time, this machine
  // In place, a reopened in-memory image counts every export block as
  // live (it cannot tell written zeros from holes): report the region.
  j["utilization"] = mode == DiskMode::kVld
                         ? ctl->utilization()
                         : static_cast<double>(region) / static_cast<double>(sb.physical_blocks());
  if (mode == DiskMode::kVld) {
    const ModeReport x = ctl->mode_report();
    j["map_update_us"] = x.vld->map_update_us();
    j["empty_tracks_end"] = x.compactor->empty_tracks;
    j["repacks"] = x.vld->stats.repacks;
    j["fragmented_free_fraction_end"] = x.vld->fragmented_free_fraction();
  }
  stats_recorder().finish(*ctl);
  return j;
}

}  // namespace

int cmd_table2(const DiskSpec& spec, uint64_t writes, bool uncompacted) {
  std::cout << measure(spec, DiskMode::kVld, true, writes).dump() << std::endl;
  if (uncompacted) std::cout << measure(spec, DiskMode::kVld, false, writes).dump() << std::endl;
  std::cout << measure(spec, DiskMode::kInplace, false, writes).dump() << std::endl;
  return 0;
}

}  // namespace vld
