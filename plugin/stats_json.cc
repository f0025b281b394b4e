#include "plugin/stats_json.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/util/error.h"
#include "plugin/mode_report_json.h"

namespace vld {

namespace {

nlohmann::json latency_json(const LatencyHistogram& h) {
  auto us = [](double ns) { return ns / 1e3; };
  return {{"count", h.count()},
          {"mean", us(h.mean_ns())},
          {"p50", us(static_cast<double>(h.percentile_ns(0.50)))},
          {"p99", us(static_cast<double>(h.percentile_ns(0.99)))},
          {"max", us(static_cast<double>(h.max_ns()))}};
}

}  // namespace

nlohmann::json stats_to_json(const DiskController& c, LatencyMode latency) {
  const DiskStats s = c.stats();
  const Superblock& sb = c.superblock();
  const DriveGeometry& g = sb.geometry;
  const double writes = s.requests.write ? static_cast<double>(s.requests.write) : 1.0;
  auto mean_us = [&](SimDuration d) { return to_us(d) / writes; };

  nlohmann::json j;
  j["mode"] = mode_name(sb.mode);
  j["latency"] = latency == LatencyMode::kSleep ? "sleep" : "none";
  j["geometry"] = {
      {"name", g.name},
      {"sectors_per_track", g.sectors_per_track},
      {"tracks_per_cylinder", g.tracks_per_cylinder},
      {"cylinders", g.cylinders},
      {"simulated_cylinders", sb.simulated_cylinders},
      {"rpm", g.rpm},
      {"revolution_us", to_us(g.revolution())},
      {"head_switch_us", to_us(g.head_switch)},
      {"overhead_us", to_us(g.controller_overhead)},
      {"seek", g.seek.to_string()},
      {"track_skew_sectors", g.track_skew_sectors},
      {"cylinder_skew_sectors", g.cylinder_skew_sectors},
      {"block_bytes", sb.block_bytes},
      {"export_bytes", sb.export_bytes},
      {"platter_bytes", sb.platter_bytes()},
  };
  j["requests"] = {{"read", s.requests.read},   {"write", s.requests.write},
                   {"write_fua", s.requests.write_fua}, {"flush", s.requests.flush},
                   {"trim", s.requests.trim},   {"zero", s.requests.zero},
                   {"extents", s.requests.extents}, {"errors", s.requests.errors}};
  j["aru"] = {{"commits", s.aru.commits},
              {"blocks_committed", s.aru.blocks_committed},
              {"aborts", s.aru.aborts},
              {"blocks_aborted", s.aru.blocks_aborted},
              {"shadow_requests", s.aru.shadow_requests},
              {"shadow_bytes", s.aru.shadow_bytes},
              {"blocks_placed", s.aru.blocks_placed},
              {"commit_latency_us", latency_json(s.aru.commit_latency)}};
  j["write_latency_us"] = latency_json(s.write_latency);
  j["read_latency_us"] = latency_json(s.read_latency);
  j["flush_latency_us"] = latency_json(s.flush_latency);
  j["queue_wait_us"] = latency_json(s.queue_wait);
  const SchedCounts& q = s.sched;
  j["sched"] = {{"policy", sched_policy_name(c.sched_policy())},
                {"picks", q.picks},
                {"reordered", q.reordered},
                {"aged", q.aged},
                {"mean_queue_depth",
                 q.picks ? static_cast<double>(q.queue_depth_sum) / static_cast<double>(q.picks)
                         : 0.0},
                {"max_queue_depth", q.max_queue_depth}};
  const ServiceBreakdown& b = s.write_breakdown_sum;
  j["breakdown_us"] = {{"overhead", mean_us(b.overhead)},
                       {"seek", mean_us(b.seek)},
                       {"head_switch", mean_us(b.head_switch)},
                       {"rotation", mean_us(b.rotation)},
                       {"transfer", mean_us(b.transfer)}};
  j["utilization"] = c.utilization();
  j["physical_writes"] = s.physical_writes;
  j["physical_reads"] = s.physical_reads;
  j["bytes_written"] = s.bytes_written;
  j["bytes_read"] = s.bytes_read;
  j["backing_syncs"] = s.backing_syncs;
  j["simulated_time_us"] = to_us(s.now - kSimEpoch);
  j["busy_us"] = to_us(s.busy);
  j.update(nlohmann::json(c.mode_report()));
  if (j.contains("compactor")) {
    j["compactor"]["idle_steps"] = s.idle_steps;
    j["compactor"]["preempt_wait_us"] = latency_json(s.preempt_wait);
  }
  return j;
}

void check_stats_file_writable(const std::string& path) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd == -1)
    throw Error("statsfile=" + path + ": cannot write " + tmp + " (" + std::strerror(errno) +
                    "); give a path in an existing, writable directory",
                errno);
  ::close(fd);
  ::unlink(tmp.c_str());
}

void write_stats_file(const std::string& path, const nlohmann::json& stats) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << stats.dump(2) << '\n';
    out.flush();
    if (!out) throw Error("statsfile=" + path + ": cannot write " + tmp, EIO);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_errno("statsfile=" + path + ": rename");
}

}  // namespace vld
