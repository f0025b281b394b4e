// vld-bench: paper 001's idle-time and technology experiments, in-process.
//
// The NBD benchmarks (scripts/bench-fig8, ...) measure what a client sees;
// these need something NBD cannot say: "the drive is idle for 200 ms now".
// vld-bench drives core/ directly through DiskController, grants idle time
// with DiskController::idle_until, and runs on simulated time only, so every
// number is a deterministic function of the arguments (and --seed).
// Each subcommand prints one JSON object per line per point; the scripts
// (scripts/bench-fig2, bench-fig11, bench-table2) tabulate and plot them.
//
//   fig2    locate time of writes into initially empty tracks against the
//           track-switch threshold (section 2.3, model (5)/(13))
//   fig10   the same bursts on the log-structured disk (mode=lld) with NVRAM:
//           its idle time drains the buffer and cleans segments (section 5.5)
//   fig11   bursts of random 4 KiB synchronous updates with idle intervals
//           between them, compactor on or off (section 5.5)
//   table2  random 4 KiB synchronous updates at 80% measured right after
//           compaction, vld beside inplace, with the breakdown (section 5.4)
//   aru     atomic record updates of 1-64 blocks: a client's redo journal on
//           the default export against an ARU, per mode (issue 15;
//           tools/bench/aru_bench.h)
//   qd      random 4 KiB writes or reads at queue depth 1, 4, 16, the drive
//           ordering its queue by fifo or sptf (issue 16;
//           tools/bench/qd_bench.h)
//   best-case  the same updates' service time with no idle time if free
//           space were ideal: command-sized holes at random, drawn afresh
//           for each write (issue 16; tools/bench/best_case_bench.h)
//   fill    every block of a new disk written once, 4 KiB at a time, back to
//           back (as with latency=none), in order or shuffled: the write
//           time as the disk fills, and the repacks that keep the last
//           blocks writable (VldDisk::repack), vld beside inplace
//
// Images live in memory (MemoryBackingStore): a prepared disk (filled,
// warmed up, cleanly closed) is snapshotted once and every point reopens a
// copy, so points differ only in what they vary.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/store/backing_store.h"
#include "core/disk_controller.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/free_space_map.h"
#include "core/modes/mode_image.h"
#include "core/lld/cleaner_policy.h"
#include "core/lld/lld_disk.h"
#include "core/util/error.h"
#include "core/util/trace.h"
#include "geometry/drive_model.h"
#include "geometry/presets.h"
#include "plugin/mode_report_json.h"
#include "plugin/nbdkit_values.h"
#include "tools/bench/aru_bench.h"
#include "tools/bench/stats_recorder.h"
#include "tools/bench/fill.h"
#include "tools/bench/qd_bench.h"
#include "tools/bench/recovery_bench.h"
#include "tools/bench/scan_bench.h"
#include "tools/bench/best_case_bench.h"
#include "tools/bench/update_picker.h"
#include "tools/bench/breakdown_json.h"

namespace vld {
namespace {

using json = nlohmann::json;

struct DiskSpec {
  std::string geometry = "st19101";
  double fill = 0.75;         // fill= of the vld disk
  uint32_t window = 0;        // window= (0: the default)
  double window_move = 0.85;  // VldOptions::window_move_fraction
  bool one_way_seeks = false; // VldOptions::one_way_seeks (the allocator before issue 16)
  bool keep_dry_window = false;  // !VldOptions::move_dry_window (the window rule before it)
  uint32_t checkpoint_every = VldOptions{}.checkpoint_every_map_sectors;  // checkpoint_every=
  uint64_t export_bytes = 256ull << 20;
  uint32_t spare_percent = 5;
  double util = 0.80;         // live data blocks / physical blocks after the fill
  uint64_t warmup_writes = 0; // random updates after the fill (0: one per region block / 2)
  uint64_t seed = 1;
  HotCold hot_cold;           // where the random updates go (uniform by default)
};

// The vld disk's settings a DiskSpec names.
void apply_spec(const DiskSpec& spec, VldOptions& vld) {
  vld.fill_fraction = spec.fill;
  vld.window_cylinders = spec.window;
  vld.window_move_fraction = spec.window_move;
  vld.one_way_seeks = spec.one_way_seeks;
  vld.move_dry_window = !spec.keep_dry_window;
  vld.checkpoint_every_map_sectors = spec.checkpoint_every;
}

FormatOptions format_options(const DiskSpec& spec, DiskMode mode) {
  FormatOptions format = preset_format(spec.geometry, mode, spec.export_bytes);
  format.spare_percent = spec.spare_percent;
  return format;
}

Superblock plan(const DiskSpec& spec, DiskMode mode) {
  return plan_image(format_options(spec, mode));
}

std::unique_ptr<DiskController> open_copy(const Superblock& sb, std::vector<std::byte> bytes,
                                          const DiskOptions& options) {
  auto store = std::make_unique<MemoryBackingStore>(std::move(bytes));
  return std::make_unique<DiskController>(make_disk(std::move(store), sb, options));
}

// The blocks of mode=lld's NVRAM region: whole tracks (core/lld/lld_layout.h).
// It stands for the paper's NVRAM buffer cache, memory, not disk.
uint64_t nvram_region_blocks(const Superblock& sb) {
  if (sb.mode != DiskMode::kLld || sb.nvram_bytes == 0) return 0;
  const uint64_t spt = sb.geometry.sectors_per_track;
  const uint64_t sectors = (sb.nvram_bytes + kSectorBytes - 1) / kSectorBytes;
  return (sectors + spt - 1) / spt * spt * kSectorBytes / sb.block_bytes;
}

// The region of logical blocks the workload updates: util x the disk's
// blocks (the physical blocks, less mode=lld's NVRAM region).
uint64_t region_blocks(const Superblock& sb, double util) {
  const uint64_t disk = sb.physical_blocks() - nvram_region_blocks(sb);
  uint64_t r = static_cast<uint64_t>(util * static_cast<double>(disk));
  return std::min(r, sb.export_bytes / sb.block_bytes);
}

struct Update {
  SimDuration latency;  // the write: from arrival (or start, back to back) to end
  SimDuration waited;   // of that, waiting for an idle step to end
  SimDuration sync_latency;  // the write and its flush: from the write's arrival to the flush's end
  ServiceBreakdown service;
  double host_us;       // wall time this host spent in the write (not simulated)
};

// One synchronous 4 KiB update (write, then flush, as fio --fsync=1 sends).
Update sync_update(DiskController& ctl, uint64_t block, std::optional<SimTime> arrival) {
  const auto& data = bench_payload();
  auto w0 = std::chrono::steady_clock::now();
  RequestTiming w = ctl.write(block * 4096, std::span(data.data(), 4096), false, arrival);
  auto w1 = std::chrono::steady_clock::now();
  const RequestTiming f = ctl.flush(std::nullopt);
  Update u;
  u.waited = w.queued;
  u.latency = w.end - w.start + w.queued;
  u.sync_latency = f.end - w.start + w.queued;
  u.service = w.service;
  u.host_us = std::chrono::duration<double, std::micro>(w1 - w0).count();
  return u;
}

// A prepared disk: the region filled with 1 MiB writes, then random
// updates so that free space is fragmented as in a steady state, closed
// cleanly; the image's bytes.
std::vector<std::byte> prepared_image(const DiskSpec& spec, const Superblock& sb,
                                      const DiskOptions& options) {
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  MemoryBackingStore* raw = store.get();
  DiskOptions no_compaction = options;
  no_compaction.vld.compactor.enabled = false;
  apply_spec(spec, no_compaction.vld);
  DiskController ctl(make_disk(std::move(store), sb, no_compaction));
  const uint64_t region = region_blocks(sb, spec.util);
  fill_in_order(ctl, region, std::span(bench_payload()));
  if (sb.mode == DiskMode::kVld) {
    std::mt19937_64 rng(spec.seed ^ 0x5eed);
    UpdatePicker pick(region, spec.hot_cold);
    uint64_t warm = spec.warmup_writes ? spec.warmup_writes : region / 2;
    for (uint64_t i = 0; i < warm; ++i) sync_update(ctl, pick(rng), std::nullopt);
  }
  ctl.close();
  return raw->bytes();  // ctl (and the store) outlive this copy
}

json disk_json(const DiskSpec& spec, const Superblock& sb) {
  json d = {{"geometry", spec.geometry},
          {"fill", spec.fill},
          {"export_bytes", sb.export_bytes},
          {"platter_bytes", sb.platter_bytes()},
          {"cylinders", sb.simulated_cylinders},
          {"util", spec.util},
          {"seed", spec.seed}};
  if (!spec.hot_cold.uniform()) {
    d["hot_writes_percent"] = spec.hot_cold.hot_writes_percent;
    d["hot_blocks_percent"] = spec.hot_cold.hot_blocks_percent;
  }
  return d;
}


// ---- fig11 ------------------------------------------------------------------

struct BurstSpec {
  uint64_t burst = 256;        // updates per burst
  std::vector<double> idle_ms; // idle interval after each burst, one point each
  uint64_t bursts = 40;        // measured bursts per point
  uint64_t warm_bursts = 5;    // bursts run first and not measured
  std::string policies = "fewest-live";
  bool compare_off = true;     // also run compactor=off
  bool idle_work = true;       // false: the pauses grant the disk no idle steps
};

// What the measured bursts of a point saw.
struct BurstTotals {
  SimDuration total{}, waited{}, worst_wait{}, idle_busy{};
  ServiceBreakdown service;
  uint64_t n = 0, preempted = 0;
  double host_us = 0;              // wall time this host spent in the measured updates
  std::vector<double> latency_us;  // per measured update: the write
  std::vector<double> sync_latency_us;  // the write and its flush
  SimDuration sync_total{};
  ModeReport before;               // at the start of the measured bursts
};

// Called around each measured idle interval with the reports before and after it.
using IdleHook = std::function<void(const ModeReport&, const ModeReport&)>;

// Warm-up bursts, then bs.bursts measured ones; after each burst an idle
// interval of idle_ms (simulated) granted to the disk's idle-time work (the
// vld compactor, the lld cleaner and NVRAM drain); the next burst arrives
// when it ends, and waits for a step in progress.
BurstTotals burst_loop(DiskController& ctl, uint64_t region, const DiskSpec& spec,
                       const BurstSpec& bs, double idle_ms, const IdleHook& hook) {
  std::mt19937_64 rng(spec.seed);
  UpdatePicker pick(region, spec.hot_cold);
  const SimDuration idle = sim_us(idle_ms * 1000.0);
  BurstTotals t;
  t.before = ctl.mode_report();
  // Every burst's first write has an arrival time, the first burst's too:
  // the drive predicts idle periods from arrivals (IdleGapPredictor), and
  // one burst without would leave the first idle period unpredicted.
  std::optional<SimTime> arrival = ctl.busy_until();
  for (uint64_t k = 0; k < bs.warm_bursts + bs.bursts; ++k) {
    const bool measured = k >= bs.warm_bursts;
    if (k == bs.warm_bursts) t.before = ctl.mode_report();
    for (uint64_t i = 0; i < bs.burst; ++i) {
      Update u = sync_update(ctl, pick(rng), i == 0 ? arrival : std::nullopt);
      if (!measured) continue;
      t.total += u.latency;
      t.waited += u.waited;
      t.service += u.service;
      t.worst_wait = std::max(t.worst_wait, u.waited);
      if (u.waited > SimDuration{0}) ++t.preempted;
      t.latency_us.push_back(to_us(u.latency));
      t.sync_latency_us.push_back(to_us(u.sync_latency));
      t.sync_total += u.sync_latency;
      t.host_us += u.host_us;
      ++t.n;
    }
    const SimTime burst_end = ctl.busy_until();
    const SimTime idle_end = burst_end + idle;
    if (!bs.idle_work) {
      // The control: the same pause, the drive sitting idle in it.
    } else if (measured && hook) {
      const ModeReport before_idle = ctl.mode_report();
      ctl.idle_until(idle_end);
      hook(before_idle, ctl.mode_report());
    } else {
      ctl.idle_until(idle_end);
    }
    if (measured) t.idle_busy += ctl.busy_until() - burst_end;
    arrival = idle_end;
  }
  return t;
}

json percentiles_json(const std::vector<double>& v) {
  const Percentiles p = percentiles(v);
  return {{"p50", p.p50}, {"p99", p.p99}, {"max", p.max}};
}

// The fields every burst point reports, from its totals: the mean and the
// percentiles (issue 16 asks Fig. 11 for the p99 as well as the mean).
json burst_json(const BurstTotals& t, const BurstSpec& bs, double idle_ms) {
  json j;
  j["idle_ms"] = idle_ms;
  j["burst"] = bs.burst;
  j["bursts"] = bs.bursts;
  j["idle_work"] = bs.idle_work;
  j["writes"] = t.n;
  j["mean_us"] = mean_us(t.total, t.n);
  j["latency_us"] = percentiles_json(t.latency_us);
  // With nvram=0 (and on vld and in place) the flush does the durable work.
  j["sync_mean_us"] = mean_us(t.sync_total, t.n);
  j["sync_latency_us"] = percentiles_json(t.sync_latency_us);
  j["breakdown_us"] = breakdown_json(t.service, t.n);
  j["preempted_writes"] = t.preempted;
  j["preempt_wait_mean_us"] = t.preempted ? to_us(t.waited) / t.preempted : 0.0;
  j["preempt_wait_max_us"] = to_us(t.worst_wait);
  j["host_us_per_write"] = t.n ? t.host_us / static_cast<double>(t.n) : 0.0;  // wall time, this machine
  return j;
}

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

// ---- fig10 ------------------------------------------------------------------

// mode=lld's parameters (the plugin's segment=, nvram=, cleaner_policy=,
// partial=) and its warm-up.
struct LldSpec {
  uint64_t segment_bytes = kDefaultSegmentBytes;
  uint64_t nvram_bytes = kDefaultNvramBytes;
  std::string cleaner_policy = "greedy";
  uint32_t partial_percent = 75;
  double warm_passes = 1.0;  // warm-up updates, x the blocks the segments hold
};

Superblock plan_lld(const DiskSpec& spec, const LldSpec& ls) {
  FormatOptions format = format_options(spec, DiskMode::kLld);
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

// An lld disk in a steady state: the region filled with 1 MiB writes, then
// random synchronous updates (no idle time) until the segments' capacity has
// been written warm_passes times over (or spec.warmup_writes), closed
// cleanly; the image's bytes and the warm-up's report.
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
  return raw->bytes();
}

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

// ---- table2 -----------------------------------------------------------------

int cmd_table2(const DiskSpec& spec, uint64_t writes) {
  for (DiskMode mode : {DiskMode::kVld, DiskMode::kInplace}) {
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
    if (mode == DiskMode::kVld) {
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
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

// ---- fig2 -------------------------------------------------------------------

// Writes of `sectors` arriving at random rotational positions, placed by the
// EagerAllocator on a disk whose tracks all start empty, filled to
// 1 - threshold before moving on. The mean locate time per write against the
// threshold (the percentage of free sectors reserved per track). strict:
// the paper's rule (stay on a track until the threshold); otherwise the
// allocator as built, which also leaves earlier when an empty track is
// sooner than the next free run.
int cmd_fig2(const DiskSpec& spec, const std::vector<double>& thresholds, uint32_t sectors,
             uint64_t writes, bool strict) {
  const DriveGeometry g = bench_geometry(spec.geometry);
  if (sectors == 0 || sectors > g.sectors_per_track)
    throw Error("fig2: --sectors must be 1 to " + std::to_string(g.sectors_per_track) +
                    " (a track of " + g.name + ")", EINVAL);
  for (double th : thresholds)
    if (!(th >= 0 && th < 100))
      throw Error("fig2: --threshold " + std::to_string(th) + " is not a percentage in [0, 100)",
                  EINVAL);
  if (writes == 0) throw Error("fig2: --writes must be at least 1", EINVAL);
  // Enough cylinders that the writes never run out of empty tracks.
  const uint64_t per_track = g.sectors_per_track / sectors;
  const uint32_t cylinders = static_cast<uint32_t>(
      writes / std::max<uint64_t>(1, per_track / 20) / g.tracks_per_cylinder + 4);
  for (double th : thresholds) {
    DriveModel drive(g, cylinders);
    FreeSpaceMap free(cylinders * g.tracks_per_cylinder, g.sectors_per_track);
    // A threshold of T% reserved is a fill of 100 - T (at least one piece).
    double fill = std::max(1.0 - th / 100.0, static_cast<double>(sectors) / g.sectors_per_track);
    EagerAllocator alloc(drive, free, AllocatorPolicy{fill, /*switch_when_sooner=*/!strict});
    std::mt19937_64 rng(spec.seed);
    std::uniform_int_distribution<int64_t> gap(0, g.revolution().count() - 1);
    SimTime t = kSimEpoch;
    SimDuration locate{}, switches{};
    uint64_t switched = 0;
    const CylinderWindow all{0, cylinders};
    const std::vector<uint32_t> piece{sectors};
    for (uint64_t i = 0; i < writes; ++i) {
      t += SimDuration{gap(rng)};  // arrives at a random rotational position
      HeadPosition before = drive.head();
      auto ext = alloc.place(piece, drive.head(), t, all);
      if (!ext) throw Error("fig2: ran out of space (a bug in the sizing)", ENOSPC);
      std::vector<SectorRun> runs = alloc.runs(*ext);
      Access a = drive.access(runs, t, /*charge_overhead=*/false);
      locate += a.breakdown.locate();
      if (!(drive.head() == before)) {
        ++switched;
        switches += a.breakdown.seek + a.breakdown.head_switch;
      }
      t = a.end;
    }
    json j;
    j["experiment"] = "fig2";
    j["geometry"] = spec.geometry;
    j["threshold_pct"] = th;
    j["fill"] = fill;
    j["sectors_per_write"] = sectors;
    j["writes"] = writes;
    j["mean_locate_us"] = mean_us(locate, writes);
    j["track_switches"] = switched;
    j["mean_switch_us"] = switched ? to_us(switches) / switched : 0.0;
    j["sectors_per_track"] = g.sectors_per_track;
    j["sector_us"] = g.sector_time_ns() / 1e3;
    j["head_switch_us"] = to_us(g.head_switch);
    j["policy"] = strict ? "strict" : "as-built";
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

// ---- fill -------------------------------------------------------------------

struct FillSpec {
  bool shuffled = false;
  uint64_t flush_every = 0;  // writes between flushes (0: none)
  uint32_t points = 20;      // one line per 1/points of the export
};

int cmd_fill(const DiskSpec& spec, const FillSpec& fs) {
  for (DiskMode mode : {DiskMode::kVld, DiskMode::kInplace}) {
    const Superblock sb = plan(spec, mode);
    auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
    format_store(*store, sb);
    DiskOptions options;
    apply_spec(spec, options.vld);
    DiskController ctl(make_disk(std::move(store), sb, options));
    stats_recorder().watch(ctl, std::string("mode=") + mode_name(mode));
    const uint64_t blocks = sb.export_bytes / 4096;
    std::vector<uint64_t> order(blocks);
    for (uint64_t b = 0; b < blocks; ++b) order[b] = b;
    if (fs.shuffled) std::shuffle(order.begin(), order.end(), std::mt19937_64(spec.seed));
    const auto& data = bench_payload();
    uint64_t done = 0, repacks_before = 0;
    double repack_ms_before = 0;
    for (uint32_t point = 1; point <= fs.points; ++point) {
      const uint64_t until = blocks * point / fs.points;
      SimDuration total{};
      std::vector<double> lat;
      for (; done < until; ++done) {
        RequestTiming w = ctl.write(order[done] * 4096, std::span(data.data(), 4096), false,
                                    std::nullopt);
        total += w.end - w.start;
        lat.push_back(to_us(w.end - w.start));
        if (fs.flush_every && (done + 1) % fs.flush_every == 0) ctl.flush(std::nullopt);
      }
      if (lat.empty()) continue;
      const Percentiles p = percentiles(lat);
      json j;
      j["experiment"] = "fill";
      j["disk"] = disk_json(spec, sb);
      j["mode"] = mode_name(mode);
      j["order"] = fs.shuffled ? "random" : "sequential";
      j["flush_every"] = fs.flush_every;
      j["written_pct"] = 100.0 * static_cast<double>(done) / static_cast<double>(blocks);
      // In place every export block counts as live: report what was written.
      j["utilization"] = mode == DiskMode::kVld ? ctl.utilization()
                                                : static_cast<double>(done) /
                                                      static_cast<double>(sb.physical_blocks());
      j["writes"] = lat.size();
      j["mean_us"] = mean_us(total, lat.size());
      j["p99_us"] = p.p99;
      j["max_us"] = p.max;
      if (mode == DiskMode::kVld) {
        const VldReport x = *ctl.mode_report().vld;
        const uint64_t repacks = x.stats.repacks;
        const double repack_ms = x.repack_ms();
        j["repacks"] = repacks - repacks_before;
        j["repack_ms"] = repack_ms - repack_ms_before;
        j["empty_tracks"] = x.empty_tracks;
        repacks_before = repacks;
        repack_ms_before = repack_ms;
      }
      std::cout << j.dump() << std::endl;
    }
    stats_recorder().finish(ctl);
  }
  return 0;
}

// What the command line sets, one field per option; the initial values are
// the defaults --help shows (CLI11 captures them when an option is added).
// disk, size, util_pct and fill_pct are shared by fig11 and table2 (and
// disk by all four subcommands).
struct BenchOptions {
  DiskSpec disk;
  std::string size = "256M";
  double util_pct = 80;
  double fill_pct = 75;
  BurstSpec bursts = [] {
    BurstSpec spec;
    spec.idle_ms = {0, 10, 20, 50, 100, 200, 500, 1000};
    return spec;
  }();
  bool no_off = false;
  uint64_t table2_writes = 5000;
  std::vector<double> fig2_thresholds = {0, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90};
  uint32_t fig2_sectors = 1;
  uint64_t fig2_writes = 20000;
  bool fig2_strict = false;
  FillSpec fill;
  uint32_t fill_spare = 25;
  LldSpec lld;
  std::string segment = "512K";
  std::string nvram = "6100000";
  AruBenchSpec aru;
  std::string aru_size = "256M";
  QdBenchSpec qd;
  std::string qd_size = "256M";
  ScanBenchSpec scan;
  std::string scan_size = "1T";
  RecoveryBenchSpec recovery;
  std::string recovery_size = "4G";
  BestCaseSpec best_case;
  double qd_util_pct = 50;
  std::string hot_cold;         // --hot-cold (tools/bench/update_picker.h)
  std::string stats_path;       // --stats (tools/bench/stats_recorder.h)
  double stats_interval_s = 1;  // --stats-interval
};

struct Subcommands {
  CLI::App* fig10;
  CLI::App* fig11;
  CLI::App* table2;
  CLI::App* fig2;
  CLI::App* fill;
  CLI::App* aru;
  CLI::App* qd;
  CLI::App* scan;
  CLI::App* recovery;
  CLI::App* best_case;
};

// --stats and --stats-interval (tools/bench/stats_recorder.h).
void add_stats_options(CLI::App* command, BenchOptions& options) {
  CLI::Option* stats = command->add_option(
      "--stats", options.stats_path,
      "write each measured disk's statistics as statsfile= does (PATH, "
      "PATH.2, ... before the extension; docs/stats.md)");
  command->add_option("--stats-interval", options.stats_interval_s,
                      "with --stats: a line of PATH.jsonl per this many simulated seconds "
                      "(0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->needs(stats);
}

// The options of a disk that is filled and updated (fig11, table2).
void add_disk_options(CLI::App* command, BenchOptions& options) {
  add_stats_options(command, options);
  DiskSpec& spec = options.disk;
  command->add_option("--geometry", spec.geometry, "drive preset: " + preset_names_joined(", "))
      ->capture_default_str();
  command->add_option("--size", options.size, "export size, as the plugin's size=: 256M, 1G, 131072s")
      ->capture_default_str();
  command->add_option("--spare", spec.spare_percent, "spare platter percent")->capture_default_str();
  command->add_option("--util", options.util_pct, "percent of physical blocks filled and updated")
      ->check(CLI::Range(1.0, 95.0))
      ->capture_default_str();
  command->add_option("--warmup", spec.warmup_writes,
                "random updates after the fill (default: half the region)");
  command->add_option("--seed", spec.seed, "workload seed")->capture_default_str();
  command->add_option("--hot-cold", options.hot_cold,
                      "WRITES/BLOCKS percents, Sprite LFS's hot-and-cold workload: 90/10 sends "
                      "90% of the random updates (the warm-up's too) to the region's first 10% "
                      "of blocks (default: uniform, as paper 001's Figure 8)");
  command->add_option("--fill", options.fill_pct, "vld: fill empty tracks to this percent (fill=)")
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  command->add_option("--window", spec.window, "vld: cylinder window (window=; 0: default)")
      ->capture_default_str();
  command->add_flag("--one-way-seeks", spec.one_way_seeks,
                    "vld: seek only ahead of the head (the allocator before issue 16)");
  command->add_flag("--keep-dry-window", spec.keep_dry_window,
                    "vld: keep a window whose empty tracks are used up until its free space is "
                    "spent (the window rule before 2026-11-28)");
  command->add_option("--window-move", spec.window_move,
                "vld: move the window when this fraction of its free space is left")
      ->capture_default_str();
  command->add_option("--checkpoint-every", spec.checkpoint_every,
                      "vld: delta checkpoint once this many map pieces are scattered "
                      "(checkpoint_every=; 0: never)")
      ->capture_default_str();
}

CLI::App* add_fig11(CLI::App& app, BenchOptions& options) {
  auto* fig11 = app.add_subcommand("fig11", "bursts of random synchronous updates, idle between");
  add_disk_options(fig11, options);
  BurstSpec& bs = options.bursts;
  fig11->add_option("--burst", bs.burst, "updates per burst")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fig11->add_option("--idle-ms", bs.idle_ms, "idle interval lengths, one point each")
      ->capture_default_str();
  fig11->add_option("--bursts", bs.bursts, "measured bursts per point")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fig11->add_option("--warm-bursts", bs.warm_bursts, "unmeasured bursts first")
      ->capture_default_str();
  fig11->add_option("--policies", bs.policies,
                    "compactor policies to run, comma-separated: fewest-live,cost-benefit,random")
      ->capture_default_str();
  fig11->add_flag("--no-off", options.no_off, "skip the compactor=off runs");
  return fig11;
}

CLI::App* add_fig10(CLI::App& app, BenchOptions& options) {
  auto* fig10 = app.add_subcommand("fig10", "bursts of random synchronous updates on mode=lld with "
                                            "NVRAM, idle between (the cleaner and the drain work then)");
  add_disk_options(fig10, options);
  BurstSpec& bs = options.bursts;
  fig10->add_option("--burst", bs.burst, "updates per burst")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fig10->add_option("--idle-ms", bs.idle_ms, "idle interval lengths, one point each")
      ->capture_default_str();
  fig10->add_option("--bursts", bs.bursts, "measured bursts per point")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  fig10->add_option("--warm-bursts", bs.warm_bursts, "unmeasured bursts first")->capture_default_str();
  fig10->add_flag("--no-idle-work", [&bs](int64_t) { bs.idle_work = false; },
                  "pauses in which the disk does no idle work (the control for what a pause alone "
                  "changes: where the platter is when the next burst comes)");
  LldSpec& ls = options.lld;
  fig10->add_option("--segment", options.segment, "segment size (segment=)")->capture_default_str();
  fig10->add_option("--nvram", options.nvram, "NVRAM buffer (nvram=; 0: none)")->capture_default_str();
  fig10->add_option("--cleaner-policy", ls.cleaner_policy, "greedy or cost-benefit")->capture_default_str();
  fig10->add_option("--partial", ls.partial_percent, "partial-segment threshold, percent (partial=)")
      ->capture_default_str();
  fig10->add_option("--warm-passes", ls.warm_passes,
                    "warm-up updates, x the blocks the segments hold (--warmup overrides)")
      ->capture_default_str();
  return fig10;
}

CLI::App* add_table2(CLI::App& app, BenchOptions& options) {
  auto* table2 = app.add_subcommand("table2", "80% random updates right after compaction, "
                                              "vld beside inplace");
  add_disk_options(table2, options);
  table2->add_option("--writes", options.table2_writes, "measured updates")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return table2;
}

CLI::App* add_fig2(CLI::App& app, BenchOptions& options) {
  auto* fig2 = app.add_subcommand("fig2", "locate time filling empty tracks vs the threshold");
  fig2->add_option("--geometry", options.disk.geometry)->capture_default_str();
  fig2->add_option("--threshold", options.fig2_thresholds, "percent of free sectors reserved per track")
      ->capture_default_str();
  fig2->add_option("--sectors", options.fig2_sectors, "sectors per write (1: the model's unit; 8: 4 KiB)")
      ->capture_default_str();
  fig2->add_option("--writes", options.fig2_writes, "writes per point")->capture_default_str();
  fig2->add_option("--seed", options.disk.seed)->capture_default_str();
  fig2->add_flag("--strict", options.fig2_strict,
                 "the paper's policy: stay on a track until the threshold, whatever the wait");
  return fig2;
}

CLI::App* add_fill(CLI::App& app, BenchOptions& options) {
  auto* fill = app.add_subcommand("fill", "every block of a new disk written once, back to back");
  fill->add_option("--geometry", options.disk.geometry, "drive preset: " + preset_names_joined(", "))
      ->capture_default_str();
  fill->add_option("--size", options.size, "export size, as the plugin's size=: 256M, 1G, 131072s")
      ->capture_default_str();
  fill->add_option("--spare", options.fill_spare, "spare platter percent (spare=)")->capture_default_str();
  fill->add_flag("--shuffled", options.fill.shuffled, "write the blocks in a random order (--seed)");
  fill->add_option("--flush-every", options.fill.flush_every, "writes between flushes (0: none)")
      ->capture_default_str();
  fill->add_option("--points", options.fill.points, "output lines, one per slice of the export")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  fill->add_option("--seed", options.disk.seed, "shuffle seed")->capture_default_str();
  add_stats_options(fill, options);
  return fill;
}

// --geometry and --size, as aru, qd and scan take them.
void add_drive_options(CLI::App* command, std::string& geometry, std::string& size) {
  command->add_option("--geometry", geometry, "drive preset: " + preset_names_joined(", "))
      ->capture_default_str();
  command->add_option("--size", size, "export size, as the plugin's size=: 256M, 1T, 131072s")
      ->capture_default_str();
}

CLI::App* add_aru(CLI::App& app, BenchOptions& options) {
  auto* aru = app.add_subcommand("aru", "atomic record updates: a client's redo journal against "
                                        "an ARU, per mode (issue 15)");
  AruBenchSpec& a = options.aru;
  add_drive_options(aru, a.geometry, options.aru_size);
  aru->add_option("--modes", a.modes, "vld, lld (default NVRAM), lld_nvram0, inplace")
      ->delimiter(',')
      ->capture_default_str();
  aru->add_option("--record-blocks", a.record_blocks, "blocks per record, one point each")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  aru->add_option("--records", a.records, "records updated per point")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  aru->add_option("--seed", a.seed, "workload seed")->capture_default_str();
  return aru;
}

CLI::App* add_qd(CLI::App& app, BenchOptions& options) {
  auto* qd = app.add_subcommand("qd", "random 4 KiB writes or reads at queue depth N, the queue "
                                      "ordered by fifo or sptf (issue 16)");
  QdBenchSpec& q = options.qd;
  add_drive_options(qd, q.geometry, options.qd_size);
  qd->add_option("--util", options.qd_util_pct, "percent of the export filled and then accessed")
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  qd->add_option("--modes", q.modes, "inplace, vld")->delimiter(',')->capture_default_str();
  qd->add_option("--rw", q.rw, "write, read")->delimiter(',')->capture_default_str();
  qd->add_option("--policies", q.policies, "fifo, sptf")->delimiter(',')->capture_default_str();
  qd->add_option("--depths", q.depths, "queue depths, one point each")
      ->delimiter(',')
      ->capture_default_str();
  qd->add_option("--requests", q.requests, "measured requests per point")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  qd->add_option("--aging-ms", q.aging_ms, "sptf's aging bound (sched_aging_ms=)")
      ->capture_default_str();
  qd->add_option("--seed", q.seed, "workload seed")->capture_default_str();
  return qd;
}

CLI::App* add_scan(CLI::App& app, BenchOptions& options) {
  auto* scan = app.add_subcommand("scan", "host time of one live_on and one repack on a large "
                                          "sparse image, the drive given as many cylinders as "
                                          "the size needs (issue 17, point 4)");
  ScanBenchSpec& s = options.scan;
  add_drive_options(scan, s.geometry, options.scan_size);
  scan->add_option("--writes", s.writes, "random 4 KiB writes before timing")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  scan->add_option("--repeats", s.repeats, "live_on calls timed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  scan->add_option("--dir", s.dir, "where the sparse image goes (removed after)")
      ->capture_default_str();
  scan->add_option("--seed", s.seed, "workload seed")->capture_default_str();
  return scan;
}

CLI::App* add_recovery(CLI::App& app, BenchOptions& options) {
  auto* rec = app.add_subcommand("recovery", "simulated time of a clean open and of one after a "
                                             "crash, on a large sparse image (issue 17, point 1)");
  RecoveryBenchSpec& r = options.recovery;
  add_drive_options(rec, r.geometry, options.recovery_size);
  rec->add_option("--warm", r.warm_writes, "random 4 KiB writes, each flushed, before the clean close")
      ->capture_default_str();
  rec->add_option("--crash-writes", r.crash_writes, "more, each flushed, between the clean open and the crash")
      ->capture_default_str();
  rec->add_option("--checkpoint-every", r.checkpoint_every, "as the plugin's checkpoint_every=")
      ->capture_default_str();
  rec->add_option("--checkpoint-s", r.checkpoint_s, "as the plugin's checkpoint_s=")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  rec->add_option("--window", r.window_cylinders, "as the plugin's window= (0: its default)")
      ->capture_default_str();
  rec->add_option("--dir", r.dir, "where the sparse image goes (removed after)")
      ->capture_default_str();
  rec->add_option("--seed", r.seed, "workload seed")->capture_default_str();
  return rec;
}

CLI::App* add_best_case(CLI::App& app, BenchOptions& options) {
  auto* bc = app.add_subcommand("best-case", "service time of a 4 KiB update with no idle time if "
                                             "free space were ideal: holes at random, fresh for "
                                             "each write (issue 16)");
  BestCaseSpec& b = options.best_case;
  bc->add_option("--geometry", b.geometry, "drive preset: " + preset_names_joined(", "))
      ->capture_default_str();
  bc->add_option("--util", b.utils, "percent of each track in use, one point each")
      ->delimiter(',')
      ->capture_default_str();
  bc->add_option("--hole-sectors", b.hole_sectors,
                 "sectors per free hole (9: a 4 KiB block and its map sector fit one)")
      ->capture_default_str();
  bc->add_option("--window", b.window_cylinders,
                 "cylinders the allocator may use, head in the middle")
      ->capture_default_str();
  bc->add_option("--writes", b.writes, "writes per point, each on a fresh map")
      ->capture_default_str();
  bc->add_option("--seed", b.seed)->capture_default_str();
  return bc;
}

// A size option read as the plugin reads size= (nbdkit_parse_size's forms:
// 256M, 1G, 131072s, 4096; K..E are powers of 1024), and at least 1 byte.
uint64_t parse_size(const char* option, const std::string& text) {
  const CheckedValue v = check_size(text);
  if (v.check == ValueCheck::kOk && v.value > 0) return v.value;
  throw Error(std::string(option) + " " + text + ": " +
                  (v.check == ValueCheck::kTooLarge ? "too large; " : "") +
                  "expected a size such as 256M, 1G or 131072s (512-byte sectors)",
              EINVAL);
}

// Runs the subcommand given. Throws vld::Error on a bad option value.
int run(BenchOptions options, const Subcommands& sub) {
  DiskSpec& spec = options.disk;
  spec.export_bytes = parse_size("--size", options.size);
  spec.util = options.util_pct / 100.0;
  spec.fill = options.fill_pct / 100.0;
  options.bursts.compare_off = !options.no_off;
  spec.hot_cold = parse_hot_cold(options.hot_cold);
  for (const CLI::App* c : {sub.fig10, sub.fig11, sub.table2, sub.fill})
    if (*c) stats_recorder().configure(c->get_name(), options.stats_path, options.stats_interval_s);
  if (*sub.fig10) {
    options.lld.segment_bytes = parse_size("--segment", options.segment);
    options.lld.nvram_bytes = options.nvram == "0" ? 0 : parse_size("--nvram", options.nvram);
    return cmd_fig10(spec, options.bursts, options.lld);
  }
  if (*sub.fig11) return cmd_fig11(spec, options.bursts);
  if (*sub.aru) {
    options.aru.export_bytes = parse_size("--size", options.aru_size);
    return cmd_aru(options.aru);
  }
  if (*sub.qd) {
    options.qd.export_bytes = parse_size("--size", options.qd_size);
    options.qd.util = options.qd_util_pct / 100.0;
    return cmd_qd(options.qd);
  }
  if (*sub.scan) {
    options.scan.export_bytes = parse_size("--size", options.scan_size);
    return cmd_scan(options.scan);
  }
  if (*sub.recovery) {
    options.recovery.export_bytes = parse_size("--size", options.recovery_size);
    return cmd_recovery(options.recovery);
  }
  if (*sub.best_case) return cmd_best_case(options.best_case);
  if (*sub.table2) return cmd_table2(spec, options.table2_writes);
  if (*sub.fig2) return cmd_fig2(spec, options.fig2_thresholds, options.fig2_sectors, options.fig2_writes, options.fig2_strict);
  if (*sub.fill) {
    spec.spare_percent = options.fill_spare;
    return cmd_fill(spec, options.fill);
  }
  return 0;
}

}  // namespace
}  // namespace vld

namespace vld {
namespace {

void trace_to_stderr(trace::Channel c, std::string_view line) {
  std::cerr << trace::channel_name(c) << ": " << line << "\n";
}

// --debug: each "CHANNEL" or "CHANNEL=LEVEL" sets a core trace channel's
// level (1 unless given), as nbdkit's -D vld.CHANNEL=LEVEL does for the
// plugin; lines go to stderr, so stdout stays one JSON object per line.
void enable_debug(const std::vector<std::string>& specs) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    int level = 1;
    if (eq != std::string::npos) {
      try {
        level = std::stoi(spec.substr(eq + 1));
      } catch (const std::exception&) {
        throw std::invalid_argument("--debug " + spec + ": the level must be a number, as in " +
                                    name + "=2");
      }
    }
    bool found = false;
    for (size_t i = 0; i < trace::kChannels; ++i) {
      const auto c = static_cast<trace::Channel>(i);
      if (name != trace::channel_name(c)) continue;
      trace::set_level(c, level);
      found = true;
    }
    if (!found)
      throw std::invalid_argument("--debug: no channel '" + name +
                                  "' (use allocator, log, compactor or recovery)");
  }
  if (!specs.empty()) trace::set_sink(trace_to_stderr);
}

}  // namespace
}  // namespace vld

int main(int argc, char** argv) {
  using namespace vld;
  CLI::App app{"vld-bench: paper 001's idle-time and technology experiments, in-process "
               "and deterministic (simulated time only). One JSON object per line per point.",
               "vld-bench"};
  app.set_version_flag("--version", "vld-bench " VLD_VERSION);
  app.require_subcommand(1);
  BenchOptions options;
  std::vector<std::string> debug;
  app.add_option("--debug", debug,
                 "core's debug lines on stderr, as the plugin's -D vld.CHANNEL=LEVEL: CHANNEL or "
                 "CHANNEL=LEVEL, comma-separated, of allocator (each write's placement and its "
                 "locate time), log, compactor, recovery")
      ->delimiter(',')
      ->allow_extra_args(false);  // one value per --debug: a subcommand's name is not a channel
  const Subcommands sub{add_fig10(app, options), add_fig11(app, options), add_table2(app, options),
                        add_fig2(app, options), add_fill(app, options), add_aru(app, options),
                        add_qd(app, options), add_scan(app, options),
                        add_recovery(app, options), add_best_case(app, options)};
  // One line, as every other error of vld-bench (CLI11's default adds a
  // second, "Run with --help"). A misspelt subcommand is left over as an
  // argument and CLI11 only says that one is required: name it instead.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    const std::vector<std::string> extra = a->remaining();
    if (a->get_subcommands().empty() && !extra.empty() && !extra[0].starts_with('-')) {
      std::string names;
      for (const CLI::App* sub : a->get_subcommands([](const CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      return "vld-bench: no subcommand '" + extra[0] + "' (use one of " + names + ")\n";
    }
    return "vld-bench: " + std::string(e.what()) + " (see vld-bench --help)\n";
  });
  CLI11_PARSE(app, argc, argv);
  try {
    enable_debug(debug);
    return run(options, sub);
  } catch (const std::exception& e) {
    std::cerr << "vld-bench: " << e.what() << "\n";
    return 1;
  }
}
