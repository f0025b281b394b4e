#include "tools/bench/fig10_bench.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/lld/cleaner_policy.h"
#include "core/lld/lld_disk.h"
#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "stats/mode_report_json.h"
#include "tools/bench/fill.h"
#include "tools/bench/stats_recorder.h"
#include "tools/bench/sync_update.h"
#include "tools/bench/update_picker.h"

namespace vld {

using json = nlohmann::json;

Superblock plan_lld(const DiskSpec& spec, const LldSpec& ls) {
  FormatOptions format = disk_format(spec, DiskMode::kLld);
  format.segment_bytes = ls.segment_bytes;
  format.nvram_bytes = ls.nvram_bytes;
  return plan_image(format);
}

DiskOptions lld_options(const LldSpec& ls) {
  DiskOptions o;
  auto policy = parse_cleaner_policy(ls.cleaner_policy);
  if (!policy) throw Error("--cleaner-policy: unknown policy '" + ls.cleaner_policy + "'; use greedy or cost-benefit", EINVAL);
  o.lld.cleaner_policy = *policy;
  o.lld.partial_percent = ls.partial_percent;
  return o;
}

std::vector<std::byte> prepared_lld_image(const DiskSpec& spec, const LldSpec& ls, const Superblock& sb,
                                          json* warm) {
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  MemoryBackingStore* raw = store.get();
  DiskController ctl(make_disk(std::move(store), sb, lld_options(ls)));
  const uint64_t region = region_blocks(sb, spec.util);
  fill_in_order(ctl, region, std::span(bench_payload()));
  const LldReport filled = *ctl.mode_report().lld;
  const uint64_t capacity = uint64_t{filled.segment_count} * filled.blocks_per_segment;
  const uint64_t writes = spec.warmup_writes ? spec.warmup_writes
                                             : static_cast<uint64_t>(std::ceil(ls.warm_passes * static_cast<double>(capacity)));
  std::mt19937_64 rng(spec.seed ^ 0x5eed);
  UpdatePicker pick(region, spec.hot_cold);
  for (uint64_t i = 0; i < writes; ++i) sync_update(ctl, pick(rng), std::nullopt);
  *warm = *ctl.mode_report().lld;
  (*warm)["writes"] = writes;
  ctl.close();
  return raw->take_bytes();  // the disk is closed: hand the image on
}

namespace {

// The counters of an lld report (docs/stats.md) that a run adds to.
constexpr const char* kLldCounters[] = {
    "segment_writes", "partial_writes", "segments_closed", "client_blocks_written", "segments_cleaned",
    "segments_freed", "cleaner_blocks_moved", "cleaner_sectors_read", "idle_cleans", "checkpoints",
    "nvram_records_written", "nvram_drains", "nvram_stalls", "refused_requests", "nvram_ms",
    "segment_write_ms", "cleaning_ms", "checkpoint_ms", "nvram_stall_ms"};

// sum + (b - a) over the counters (sum may be empty: zeros).
json add_lld_delta(json sum, const ModeReport& a, const ModeReport& b) {
  const json ja = *a.lld, jb = *b.lld;
  for (const char* k : kLldCounters)
    sum[k] = sum.value(k, 0.0) + jb.at(k).get<double>() - ja.at(k).get<double>();
  return sum;
}

json run_lld_bursts(const DiskSpec& spec, const Superblock& sb, const std::vector<std::byte>& image,
                    const LldSpec& ls, const BurstSpec& bs, double idle_ms) {
  auto ctl = open_copy(sb, image, lld_options(ls));
  stats_recorder().watch(*ctl, "idle_ms=" + json(idle_ms).dump());
  json idle = json::object();
  const BurstTotals t = burst_loop(*ctl, region_blocks(sb, spec.util), spec, bs, idle_ms,
                                   [&idle](const ModeReport& a, const ModeReport& b) {
                                     idle = add_lld_delta(idle, a, b);
                                   });
  stats_recorder().finish(*ctl);
  const ModeReport after = ctl->mode_report();
  json j = burst_json(t, bs, idle_ms);
  j["idle_busy_ms"] = to_ms(t.idle_busy);
  j["utilization"] = ctl->utilization();
  j["disk_utilization"] = static_cast<double>(after.lld->live_blocks) /
                          static_cast<double>(sb.physical_blocks() - nvram_region_blocks(sb));
  j["lld"] = add_lld_delta(json::object(), t.before, after);  // the measured bursts and their idle time
  j["lld_idle"] = idle;                                       // the idle intervals alone
  j["free_segments_end"] = after.lld->free_segments;
  j["nvram_used_records_end"] = after.lld->nvram_used_records;
  return j;
}

json lld_disk_json(const DiskSpec& spec, const Superblock& sb, const LldSpec& ls, const LldReport& r) {
  json d = disk_json(spec, sb);
  d.update({{"mode", "lld"},
            {"spare", spec.spare_percent},
            {"segment_bytes", ls.segment_bytes},
            {"nvram_bytes", ls.nvram_bytes},
            {"cleaner_policy", ls.cleaner_policy},
            {"partial_percent", ls.partial_percent},
            {"segment_count", r.segment_count},
            {"segment_sectors", r.segment_sectors},
            {"blocks_per_segment", r.blocks_per_segment},
            {"nvram_capacity_records", r.nvram_capacity_records},
            {"nvram_region_blocks", nvram_region_blocks(sb)},
            {"region_blocks", region_blocks(sb, spec.util)}});
  return d;
}

}  // namespace

int cmd_fig10(const DiskSpec& spec, const BurstSpec& bs, const LldSpec& ls) {
  const Superblock sb = plan_lld(spec, ls);
  json warm;
  const std::vector<std::byte> image = prepared_lld_image(spec, ls, sb, &warm);
  const LldReport shape = *open_copy(sb, image, lld_options(ls))->mode_report().lld;
  const json disk = lld_disk_json(spec, sb, ls, shape);
  for (double idle : bs.idle_ms) {
    json j = run_lld_bursts(spec, sb, image, ls, bs, idle);
    j["experiment"] = "fig10";
    j["disk"] = disk;
    j["warmup"] = warm;
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

}  // namespace vld
