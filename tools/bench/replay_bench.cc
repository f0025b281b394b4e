#include "tools/bench/replay_bench.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "core/modes/mode_report.h"
#include "core/util/error.h"
#include "stats/mode_report_json.h"
#include "tools/bench/breakdown_json.h"
#include "tools/bench/replay_disk.h"
#include "tools/bench/replay_engine.h"
#include "tools/bench/replay_progress.h"
#include "tools/bench/stats_recorder.h"

namespace vld {
namespace {

using json = nlohmann::json;

// Set by SIGINT: the replay stops after the request in progress and writes
// what it measured.
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

TraceFormat format_of(const std::string& name) {
  if (auto f = parse_trace_format(name)) return *f;
  throw Error("--format " + name + ": unknown; choose auto, fio-v2, fio-v3, blkparse, "
              "nbdkit-log or msr", EINVAL);
}

// The end of the furthest request of the trace: --map scale's first pass.
uint64_t trace_extent_bytes(const ReplaySpec& spec) {
  if (spec.trace == "-")
    throw Error("--map scale reads the trace twice; give a file, not standard input", EINVAL);
  auto reader = open_trace(spec.trace, format_of(spec.format), spec.skip_bad);
  uint64_t extent = 0;
  TraceRequest q;
  while (reader->next(q)) extent = std::max(extent, q.offset_bytes + q.len_bytes);
  return extent;
}

SyncPolicy sync_of(const ReplaySpec& spec, const TraceReader& reader) {
  if (reader.records_sync()) return SyncPolicy{};  // recorded: --sync does not apply
  if (auto s = parse_sync_policy(spec.sync)) return *s;
  throw Error("--sync " + spec.sync + ": unknown; choose writes, every=N (N >= 1) or none",
              EINVAL);
}

ReplayOptions replay_options(const ReplaySpec& spec, const TraceReader& reader,
                             uint64_t export_bytes, std::FILE* csv) {
  const auto map = parse_address_map(spec.map);
  if (!map) throw Error("--map " + spec.map + ": unknown; choose none, fold or scale", EINVAL);
  if (spec.qd == 0) throw Error("--qd 0: give at least 1", EINVAL);
  if (spec.qd > 1 && !spec.closed_loop)
    throw Error("--qd " + std::to_string(spec.qd) + " applies to --closed-loop only; add "
                "--closed-loop, or leave --qd out to replay at the trace's times", EINVAL);
  ReplayOptions o;
  o.trace = spec.trace;
  o.closed_loop = spec.closed_loop;
  o.qd = spec.qd;
  o.quiet = std::chrono::milliseconds(spec.quiet_ms);
  o.sync = sync_of(spec, reader);
  const uint64_t extent = *map == AddressMap::Kind::kScale ? trace_extent_bytes(spec) : 0;
  o.map = AddressMap(*map, export_bytes, extent);
  o.requests_csv = csv;
  return o;
}

json latency_json(const LatencyHistogram& h) {
  return {{"count", h.count()},
          {"mean", h.mean_ns() / 1e3},
          {"p50", static_cast<double>(h.percentile_ns(0.50)) / 1e3},
          {"p99", static_cast<double>(h.percentile_ns(0.99)) / 1e3},
          {"max", static_cast<double>(h.max_ns()) / 1e3}};
}

json counts_json(const ReplayCounts& c) {
  return {{"requests", c.requests}, {"reads", c.reads},       {"writes", c.writes},
          {"flushes", c.flushes},   {"trims", c.trims},       {"zeroes", c.zeroes},
          {"added_flushes", c.added_flushes}, {"bytes_read", c.bytes_read},
          {"bytes_written", c.bytes_written}, {"errors", c.errors}};
}

// What the drive did: breakdown, write amplification, idle work, the mode's report.
json drive_json(const DiskController& ctl, uint64_t client_bytes_written) {
  const DiskStats s = ctl.stats();
  const ModeReport report = ctl.mode_report();
  const uint64_t block = ctl.superblock().block_bytes;
  const double client_blocks = static_cast<double>(client_bytes_written) / static_cast<double>(block);
  double nvram_us = 0;
  if (report.lld && s.requests.write > 0)
    nvram_us = json(*report.lld).value("nvram_ms", 0.0) * 1e3 / static_cast<double>(s.requests.write);
  return {{"breakdown_us", breakdown_json(s.write_breakdown_sum, s.requests.write)},
          {"nvram_us", nvram_us},
          {"physical_blocks_written", s.physical_writes},
          {"physical_blocks_read", s.physical_reads},
          {"write_amplification",
           client_blocks > 0 ? static_cast<double>(s.physical_writes) / client_blocks : 0.0},
          {"backing_syncs", s.backing_syncs},
          {"idle_steps", s.idle_steps},
          {"idle_busy_ms", to_ms(s.idle_busy)},
          {"mode_report", report}};
}

json summary_json(const ReplaySpec& spec, const TraceReader& reader, const ReplayOptions& o,
                  const ReplayDisk& disk, const Replayer& r, double host_s) {
  const double sim_s = to_us(r.elapsed()) / 1e6;
  const uint64_t n = r.counts().requests;
  json j = {{"experiment", "replay"},
            {"trace", spec.trace},
            {"format", trace_format_name(reader.format())},
            {"timing", o.closed_loop ? "closed-loop" : "open-loop"},
            {"qd", o.qd},
            {"quiet_ms", o.closed_loop ? json(nullptr) : json(spec.quiet_ms)},
            {"sync", o.sync.name()},
            {"map", address_map_name(o.map.kind())},
            {"mode", disk.disk.value("mode", spec.mode)},
            {"nvram_bytes", disk.disk.value("nvram_bytes", uint64_t{0})},
            {"disk", disk.disk},
            {"skipped_lines", reader.skipped_lines()},
            {"interrupted", g_interrupted != 0},
            {"sim_s", sim_s},
            // Open loop: the trace's span, and the drive's service time in
            // it; busy_s / trace_s above 1 means requests queued.
            {"trace_s", o.closed_loop ? json(nullptr) : json(r.trace_time_us() / 1e6)},
            {"busy_s", to_us(disk.ctl->stats().busy) / 1e6},
            {"host_s", host_s},
            {"requests_per_host_s", host_s > 0 ? static_cast<double>(n) / host_s : 0.0},
            {"iops", sim_s > 0 ? static_cast<double>(n) / sim_s : 0.0},
            {"latency_us", latency_json(r.latency())},
            {"read_latency_us", latency_json(r.latency(TraceOp::kRead))},
            {"write_latency_us", latency_json(r.latency(TraceOp::kWrite))},
            {"flush_latency_us", latency_json(r.latency(TraceOp::kFlush))}};
  j.update(counts_json(r.counts()));
  j.update(drive_json(*disk.ctl, r.counts().bytes_written));
  return j;
}

struct CsvFile {
  std::FILE* f = nullptr;
  ~CsvFile() {
    if (f) std::fclose(f);
  }
};

}  // namespace

int cmd_replay(const ReplaySpec& spec) {
  auto reader = open_trace(spec.trace, format_of(spec.format), spec.skip_bad);
  ReplayDisk disk = open_replay_disk(spec);
  CsvFile csv;
  if (!spec.requests_path.empty()) {
    csv.f = std::fopen(spec.requests_path.c_str(), "w");
    if (!csv.f) throw_errno("--requests " + spec.requests_path);
    std::fputs("index,line,op,offset_bytes,len_bytes,fua,arrival_ns,start_ns,service_ns,latency_ns\n", csv.f);
  }
  const ReplayOptions options =
      replay_options(spec, *reader, disk.ctl->superblock().export_bytes, csv.f);
  stats_recorder().watch(*disk.ctl, "mode=" + disk.disk.value("mode", spec.mode));
  Replayer replayer(*disk.ctl, options);
  ReplayProgress progress(*reader);
  std::signal(SIGINT, on_sigint);
  const auto host_start = std::chrono::steady_clock::now();
  TraceRequest q;
  while (!g_interrupted && reader->next(q)) {
    replayer.serve(q);
    progress.tick(replayer.counts().requests, replayer.trace_time_us());
  }
  const std::chrono::duration<double> host = std::chrono::steady_clock::now() - host_start;
  progress.done();
  std::signal(SIGINT, SIG_DFL);
  stats_recorder().finish(*disk.ctl);
  std::cout << summary_json(spec, *reader, options, disk, replayer, host.count()).dump()
            << std::endl;
  return g_interrupted ? 130 : 0;
}

}  // namespace vld
