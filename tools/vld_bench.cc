// vld-bench: paper 001's idle-time and technology experiments, and block-trace
// replay, in-process.
//
// The NBD benchmarks (scripts/bench-fig8, ...) measure what a client sees;
// these need something NBD cannot say: "the drive is idle for 200 ms now".
// vld-bench drives core/ directly through DiskController, grants idle time
// with DiskController::idle_until, and runs on simulated time only, so every
// number is a deterministic function of the arguments (and --seed).
// Each subcommand prints one JSON object per line per point; the scripts
// (scripts/bench-fig2, bench-fig11, bench-table2) tabulate and plot them.
// One file per experiment under tools/bench/; this file only wires the
// command line to them.
//
//   fig2    locate time of writes into initially empty tracks against the
//           track-switch threshold (section 2.3, model (5)/(13);
//           tools/bench/fig2_bench.h)
//   fig10   the same bursts on the log-structured disk (mode=lld) with NVRAM:
//           its idle time drains the buffer and cleans segments (section 5.5;
//           tools/bench/fig10_bench.h)
//   fig11   bursts of random 4 KiB synchronous updates with idle intervals
//           between them, compactor on or off (section 5.5;
//           tools/bench/fig11_bench.h)
//   table2  random 4 KiB synchronous updates at 80% measured right after
//           compaction, vld beside inplace, with the breakdown (section 5.4;
//           tools/bench/table2_bench.h)
//   aru     atomic record updates of 1-64 blocks: a client's redo journal on
//           the default export against an ARU, per mode
//           (tools/bench/aru_bench.h)
//   qd      random 4 KiB writes or reads at queue depth 1, 4, 16, the drive
//           ordering its queue by fifo or sptf (tools/bench/qd_bench.h)
//   scan    host time of one live_on and one repack on a large sparse image
//           (tools/bench/scan_bench.h)
//   recovery  simulated time of a clean open and of one after a crash on a
//           large sparse image (tools/bench/recovery_bench.h)
//   best-case  the same updates' service time with no idle time if free
//           space were ideal: command-sized holes at random, drawn afresh
//           for each write (tools/bench/best_case_bench.h)
//   replay  a block trace (fio iolog, blkparse, nbdkit's log filter, MSR
//           Cambridge) on one mode, open or closed loop, with the stats
//           file's output (tools/bench/replay_bench.h, docs/traces.md)
//   drive   the drive model alone: random 4 KiB reads and writes one at a
//           time, and each zone's sequential rate, as a drive validation
//           measures them (tools/bench/drive_bench.h, docs/geometry.md)
//   hostcpu this host's time per random 4 KiB synchronous write, by phase
//           (allocator, map, checksum, store I/O, stats, other), per mode
//           (tools/bench/hostcpu_bench.h, core/util/host_phases.h)
//   fill    every block of a new disk written once, 4 KiB at a time, back to
//           back (as with latency=none), in order or shuffled: the write
//           time as the disk fills, and the repacks that keep the last
//           blocks writable (VldDisk::repack), vld beside inplace
//           (tools/bench/fill_bench.h)
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdint>
#include <exception>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/error.h"
#include "core/util/trace.h"
#include "geometry/presets.h"
#include "params/nbdkit_values.h"
#include "tools/bench/aru_bench.h"
#include "tools/bench/best_case_bench.h"
#include "tools/bench/bursts.h"
#include "tools/bench/disk_spec.h"
#include "tools/bench/fig10_bench.h"
#include "tools/bench/fig11_bench.h"
#include "tools/bench/drive_bench.h"
#include "tools/bench/fig2_bench.h"
#include "tools/bench/fill_bench.h"
#include "tools/bench/hostcpu_bench.h"
#include "tools/bench/qd_bench.h"
#include "tools/bench/recovery_bench.h"
#include "tools/bench/replay_bench.h"
#include "tools/bench/scan_bench.h"
#include "tools/bench/stats_recorder.h"
#include "tools/bench/table2_bench.h"
#include "tools/bench/update_picker.h"

namespace vld {
namespace {

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
  HostCpuSpec hostcpu;
  bool table2_uncompacted = false;
  std::vector<double> fig2_thresholds = {0, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90};
  uint32_t fig2_sectors = 1;
  uint64_t fig2_writes = 20000;
  bool fig2_strict = false;
  DriveBenchSpec drive;
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
  ReplaySpec replay;
  std::string replay_size = "256M";
  std::string replay_nvram = "6100000";
  double replay_util_pct = 0;
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
  CLI::App* replay;
  CLI::App* drive;
  CLI::App* hostcpu;
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

// --span, as the plugin's span=; the caller says what it excludes.
CLI::Option* add_span_option(CLI::App* command, std::string& span) {
  return command
      ->add_option("--span", span,
                   "the drive cylinders the platters are, as the plugin's span=: FIRST-LAST, "
                   "the outermost N, or P%-Q% of the drive's from the outer edge (e.g. "
                   "90%-100%); the whole band is platters, so not with --spare (default: the "
                   "outermost cylinders the export and the spare need)")
      ->check(check_span_text);
}

// The options of a disk that is filled and updated (fig11, table2).
void add_disk_options(CLI::App* command, BenchOptions& options) {
  add_stats_options(command, options);
  DiskSpec& spec = options.disk;
  command->add_option("--geometry", spec.geometry, "drive preset: " + preset_names_joined(", "))
      ->capture_default_str();
  command->add_option("--size", options.size, "export size, as the plugin's size=: 256M, 1G, 131072s")
      ->capture_default_str();
  auto* spare =
      command->add_option("--spare", spec.spare_percent, "spare platter percent")->capture_default_str();
  add_span_option(command, spec.span)->excludes(spare);
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
                    "vld: seek only ahead of the head, one way as section 4.2 sweeps "
                    "(the default seeks either way)");
  command->add_flag("--keep-dry-window", spec.keep_dry_window,
                    "vld: keep a window whose empty tracks are used up until its free space is "
                    "spent (the default moves it on to one around the head that has some)");
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
  table2->add_flag("--uncompacted", options.table2_uncompacted,
                   "also measure vld without the compactor's run (\"compacted\": false)");
  return table2;
}

CLI::App* add_hostcpu(CLI::App& app, BenchOptions& options) {
  auto* hostcpu = app.add_subcommand(
      "hostcpu", "this host's time per random synchronous 4 KiB write, by phase, per mode "
                 "(JSON on stdout, a table on stderr)");
  add_disk_options(hostcpu, options);
  HostCpuSpec& h = options.hostcpu;
  hostcpu->add_option("--modes", h.modes, "vld, lld, inplace")
      ->delimiter(',')
      ->capture_default_str();
  hostcpu->add_option("--writes", h.writes, "measured updates per mode")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  hostcpu->add_option("--segment", options.segment, "lld: segment size (segment=)")
      ->capture_default_str();
  hostcpu->add_option("--nvram", options.nvram, "lld: NVRAM buffer (nvram=; 0: none)")
      ->capture_default_str();
  hostcpu->add_option("--warm-passes", options.lld.warm_passes,
                      "lld: warm-up updates, x the blocks the segments hold")
      ->capture_default_str();
  return hostcpu;
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

CLI::App* add_drive(CLI::App& app, BenchOptions& options) {
  auto* drive = app.add_subcommand(
      "drive", "the drive model alone: random 4 KiB reads and writes one at a time, and each "
               "zone's sequential rate");
  drive->add_option("--geometry", options.disk.geometry,
                    "drive preset (" + preset_names_joined(", ") + ") or drive file")
      ->capture_default_str();
  drive->add_option("--requests", options.drive.requests, "requests per random workload")
      ->capture_default_str();
  drive->add_option("--gap-ms", options.drive.gap_ms, "idle time before each random request")
      ->capture_default_str();
  drive->add_option("--request-sectors", options.drive.request_sectors,
                    "sectors per random request (8: 4 KiB)")
      ->capture_default_str();
  drive->add_option("--sequential-cylinders", options.drive.sequential_cylinders,
                    "cylinders read from each zone's first, in one command")
      ->capture_default_str();
  drive->add_option("--seed", options.disk.seed)->capture_default_str();
  return drive;
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
                                        "an ARU, per mode");
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
                                      "ordered by fifo or sptf");
  QdBenchSpec& q = options.qd;
  add_drive_options(qd, q.geometry, options.qd_size);
  add_span_option(qd, q.span);
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
                                          "the size needs");
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
                                             "crash, on a large sparse image");
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
                                             "each write");
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

CLI::App* add_replay(CLI::App& app, BenchOptions& options) {
  auto* rp = app.add_subcommand("replay", "a block trace replayed on one disk mode in simulated "
                                          "time: fio iolog v2/v3, blkparse, nbdkit's log filter, "
                                          "MSR-Cambridge CSV");
  ReplaySpec& r = options.replay;
  rp->add_option("trace", r.trace, "the trace file (gzip or not), or - for standard input")
      ->required();
  rp->add_option("--format", r.format, "auto, fio-v2, fio-v3, blkparse, nbdkit-log, msr")
      ->capture_default_str();
  auto* image = rp->add_option("--image", r.image,
                               "start from a copy (in memory) of this image; it is never written");
  rp->add_option("--mode", r.mode, "vld, inplace or lld")->capture_default_str()->excludes(image);
  rp->add_option("--nvram", options.replay_nvram, "mode=lld's NVRAM (nvram=; 0: none)")
      ->capture_default_str()
      ->excludes(image);
  rp->add_option("--geometry", r.disk.geometry, "drive preset: " + preset_names_joined(", "))
      ->capture_default_str()
      ->excludes(image);
  rp->add_option("--size", options.replay_size, "export size, as the plugin's size=")
      ->capture_default_str()
      ->excludes(image);
  auto* spare = rp->add_option("--spare", r.disk.spare_percent,
                               "platter room beyond the export and the map, percent (spare=)")
                    ->capture_default_str()
                    ->excludes(image);
  add_span_option(rp, r.disk.span)->excludes(spare)->excludes(image);
  rp->add_option("--util", options.replay_util_pct,
                 "age the new disk first: this percent of its blocks filled, then updated at "
                 "random (0: a new, empty disk)")
      ->check(CLI::Range(0.0, 95.0))
      ->capture_default_str()
      ->excludes(image);
  rp->add_option("--seed", r.disk.seed, "the aging's seed")->capture_default_str();
  rp->add_flag("--closed-loop", r.closed_loop,
               "each request arrives when the --qd-th before it completed (default: at its "
               "trace time, gaps idle)");
  rp->add_option("--qd", r.qd, "requests outstanding in a closed loop")->capture_default_str();
  rp->add_option("--quiet-ms", r.quiet_ms,
                 "open loop: idle time before the compactor or cleaner works, as the plugin's "
                 "compactor_quiet_ms=")
      ->check(CLI::Range(0u, 3600000u))
      ->capture_default_str();
  rp->add_option("--sync", r.sync, "for traces without flushes (msr): writes (each FUA), every=N "
                                   "(a flush after N writes) or none")
      ->capture_default_str();
  rp->add_option("--map", r.map, "a trace beyond the export: none (an error), fold (modulo the "
                                 "export) or scale (the trace's span onto the export)")
      ->capture_default_str();
  rp->add_flag("--skip-bad", r.skip_bad, "count malformed lines and go on (default: stop at the first)");
  rp->add_option("--requests", r.requests_path,
                 "write each drive command's simulated times to this CSV (as -D vld.requests=1)");
  add_stats_options(rp, options);
  return rp;
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

// The subcommands whose options are their own (aru, qd, scan, recovery,
// best-case, replay), or nullopt for another.
std::optional<int> run_own_spec(BenchOptions& options, const Subcommands& sub) {
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
  if (*sub.replay) {
    ReplaySpec& r = options.replay;
    r.disk.export_bytes = parse_size("--size", options.replay_size);
    r.disk.util = options.replay_util_pct / 100.0;
    r.nvram_bytes = options.replay_nvram == "0" ? 0 : parse_size("--nvram", options.replay_nvram);
    return cmd_replay(r);
  }
  return std::nullopt;
}

// Runs the subcommand given. Throws vld::Error on a bad option value.
int run(BenchOptions options, const Subcommands& sub) {
  DiskSpec& spec = options.disk;
  spec.export_bytes = parse_size("--size", options.size);
  spec.util = options.util_pct / 100.0;
  spec.fill = options.fill_pct / 100.0;
  options.bursts.compare_off = !options.no_off;
  spec.hot_cold = parse_hot_cold(options.hot_cold);
  for (const CLI::App* c : {sub.fig10, sub.fig11, sub.table2, sub.fill, sub.replay, sub.hostcpu})
    if (*c) stats_recorder().configure(c->get_name(), options.stats_path, options.stats_interval_s);
  if (*sub.fig10 || *sub.hostcpu) {
    options.lld.segment_bytes = parse_size("--segment", options.segment);
    options.lld.nvram_bytes = options.nvram == "0" ? 0 : parse_size("--nvram", options.nvram);
    if (*sub.hostcpu) return cmd_hostcpu(spec, options.lld, options.hostcpu);
    return cmd_fig10(spec, options.bursts, options.lld);
  }
  if (*sub.fig11) return cmd_fig11(spec, options.bursts);
  if (auto status = run_own_spec(options, sub)) return *status;
  if (*sub.table2) return cmd_table2(spec, options.table2_writes, options.table2_uncompacted);
  if (*sub.drive) return cmd_drive(spec, options.drive);
  if (*sub.fig2) return cmd_fig2(spec, options.fig2_thresholds, options.fig2_sectors, options.fig2_writes, options.fig2_strict);
  if (*sub.fill) {
    spec.spare_percent = options.fill_spare;
    return cmd_fill(spec, options.fill);
  }
  return 0;
}

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
  CLI::App app{"vld-bench: paper 001's idle-time and technology experiments, and the replay "
               "of block traces, in-process and deterministic (simulated time only). One JSON "
               "object per line per point.",
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
                        add_recovery(app, options), add_best_case(app, options),
                        add_replay(app, options), add_drive(app, options),
                        add_hostcpu(app, options)};
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
