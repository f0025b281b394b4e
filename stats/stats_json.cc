#include "stats/stats_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "core/util/error.h"
#include "stats/mode_report_json.h"

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

// latency_json and the non-empty buckets of the fixed scheme
// (UsBuckets), each [low_us, high_us, count].
nlohmann::json histogram_json(const LatencyHistogram& h) {
  nlohmann::json j = latency_json(h);
  nlohmann::json buckets = nlohmann::json::array();
  for (const HistogramBucket& b : h.buckets_us()) buckets.push_back({b.low_us, b.high_us, b.count});
  j["histogram"] = std::move(buckets);
  return j;
}

nlohmann::json by_size_json(const std::array<LatencyHistogram, kSizeClasses>& h) {
  nlohmann::json j = nlohmann::json::object();
  for (int c = 0; c < kSizeClasses; ++c)
    j[size_class_name(static_cast<SizeClass>(c))] = histogram_json(h[c]);
  return j;
}

nlohmann::json geometry_json(const Superblock& sb) {
  const DriveGeometry& g = sb.geometry;
  nlohmann::json j = {
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
  // A zoned drive's zones, a write settle and a span: only where there is
  // one, so that a single-zone drive's stats are as they always were.
  if (g.write_settle.count() > 0) j["write_settle_us"] = to_us(g.write_settle);
  // span=: the geometry above is the band's; which of the drive's cylinders.
  if (sb.spanned())
    j["span"] = {{"first_cylinder", sb.span().first},
                 {"last_cylinder", sb.span().last},
                 {"drive_cylinders", sb.drive_cylinders}};
  if (g.zoned()) {
    nlohmann::json zones = nlohmann::json::array();
    for (const Zone& z : g.zones)
      zones.push_back({{"first_cylinder", z.first_cylinder},
                       {"sectors_per_track", z.sectors_per_track},
                       {"track_skew_sectors", z.track_skew_sectors},
                       {"cylinder_skew_sectors", z.cylinder_skew_sectors}});
    j["zones"] = zones;
  }
  return j;
}

nlohmann::json requests_json(const RequestCounts& r) {
  return {{"read", r.read},   {"write", r.write},     {"write_fua", r.write_fua},
          {"flush", r.flush}, {"trim", r.trim},       {"zero", r.zero},
          {"extents", r.extents}, {"errors", r.errors}};
}

nlohmann::json aru_json(const AruCounts& a) {
  return {{"commits", a.commits},
          {"blocks_committed", a.blocks_committed},
          {"aborts", a.aborts},
          {"blocks_aborted", a.blocks_aborted},
          {"shadow_requests", a.shadow_requests},
          {"shadow_bytes", a.shadow_bytes},
          {"blocks_placed", a.blocks_placed},
          {"commit_latency_us", latency_json(a.commit_latency)}};
}

nlohmann::json sched_json(const SchedCounts& q, SchedPolicy policy) {
  return {{"policy", sched_policy_name(policy)},
          {"picks", q.picks},
          {"reordered", q.reordered},
          {"aged", q.aged},
          {"mean_queue_depth",
           q.picks ? static_cast<double>(q.queue_depth_sum) / static_cast<double>(q.picks) : 0.0},
          {"max_queue_depth", q.max_queue_depth}};
}

nlohmann::json breakdown_json(const DiskStats& s) {
  const double writes = s.requests.write ? static_cast<double>(s.requests.write) : 1.0;
  auto mean_us = [&](SimDuration d) { return to_us(d) / writes; };
  const ServiceBreakdown& b = s.write_breakdown_sum;
  return {{"overhead", mean_us(b.overhead)},
          {"seek", mean_us(b.seek)},
          {"head_switch", mean_us(b.head_switch)},
          {"rotation", mean_us(b.rotation)},
          {"transfer", mean_us(b.transfer)}};
}

// An Activity's counters: the keys of an interval line's "totals" that the
// stats file and the line itself also have.
void add_counters(nlohmann::json& j, const Activity& a) {
  j["requests"] = requests_json(a.requests);
  j["physical_writes"] = a.physical_writes;
  j["physical_reads"] = a.physical_reads;
  j["bytes_written"] = a.bytes_written;
  j["bytes_read"] = a.bytes_read;
  j["backing_syncs"] = a.backing_syncs;
  j["busy_us"] = to_us(a.busy);
  j["idle_steps"] = a.idle_steps;
  j["idle_busy_us"] = to_us(a.idle_busy);
}

// The keys an Activity has in both the stats file and an interval's line.
void add_activity(nlohmann::json& j, const Activity& a) {
  add_counters(j, a);
  j["write_latency_us"] = histogram_json(a.write_latency);
  j["read_latency_us"] = histogram_json(a.read_latency);
  j["flush_latency_us"] = histogram_json(a.flush_latency);
  j["write_by_size_us"] = by_size_json(a.write_by_size);
  j["read_by_size_us"] = by_size_json(a.read_by_size);
}

// Cumulative counters of an interval line's "totals" (docs/stats.md).
nlohmann::json totals_json(const IntervalStats& i) {
  nlohmann::json j;
  add_counters(j, i.totals);
  j["simulated_time_us"] = to_us(i.totals.now - kSimEpoch);
  j["utilization"] = i.utilization;
  j.update(nlohmann::json(*i.mode));
  // What opening the image did is the same in every line: in the stats
  // file only (its lld alias too).
  j.erase("recovery");
  if (j.contains("lld")) j["lld"].erase("recovery");
  return j;
}

}  // namespace

nlohmann::json histogram_scheme_json() {
  return {{"unit", "us"},
          {"sub_buckets", 1 << UsBuckets::kSubBits},
          {"linear_below_us", uint64_t{2} << UsBuckets::kSubBits}};
}

nlohmann::json host_phases_json(const HostPhaseTotals& t) {
  const double per = t.writes ? 1.0 / static_cast<double>(t.writes) : 0.0;
  nlohmann::json sum = nlohmann::json::object();
  nlohmann::json per_write = nlohmann::json::object();
  auto add = [&](const char* name, uint64_t ns) {
    sum[name] = static_cast<double>(ns) / 1000.0;
    per_write[name] = static_cast<double>(ns) / 1000.0 * per;
  };
  for (size_t i = 0; i < kHostPhaseCount; ++i)
    add(host_phase_name(static_cast<HostPhase>(i)), t.phase_ns[i]);
  add("other", t.other_ns());
  add("total", t.total_ns);
  return {{"writes", t.writes}, {"requests", t.requests}, {"sum", sum}, {"per_write", per_write}};
}

nlohmann::json stats_to_json(const DiskController& c, LatencyMode latency) {
  const DiskStats s = c.stats();
  const Superblock& sb = c.superblock();

  nlohmann::json j;
  j["mode"] = mode_name(sb.mode);
  j["latency"] = latency == LatencyMode::kSleep ? "sleep" : "none";
  j["geometry"] = geometry_json(sb);
  j["histogram_scheme"] = histogram_scheme_json();
  add_activity(j, s);
  j["aru"] = aru_json(s.aru);
  j["queue_wait_us"] = latency_json(s.queue_wait);
  j["sched"] = sched_json(s.sched, c.sched_policy());
  j["breakdown_us"] = breakdown_json(s);
  j["utilization"] = c.utilization();
  j["simulated_time_us"] = to_us(s.now - kSimEpoch);
  j.update(nlohmann::json(c.mode_report()));
  if (j.contains("compactor")) {
    j["compactor"]["idle_steps"] = s.idle_steps;
    j["compactor"]["preempt_wait_us"] = latency_json(s.preempt_wait);
  }
  return j;
}

nlohmann::json interval_to_json(const IntervalStats& i, std::optional<WallSpan> wall) {
  nlohmann::json j;
  j["interval"] = i.number;
  j["wall_start"] = wall ? nlohmann::json(wall->start_s) : nlohmann::json(nullptr);
  j["wall_end"] = wall ? nlohmann::json(wall->end_s) : nlohmann::json(nullptr);
  j["sim_start_us"] = to_us(i.start - kSimEpoch);
  j["sim_end_us"] = to_us(i.end - kSimEpoch);
  add_activity(j, i.activity);
  j["totals"] = totals_json(i);
  return j;
}

void append_jsonl(const std::string& path, const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd == -1) throw_errno(path + ": open");
  // One write(2) of the whole line: O_APPEND puts it at the end in one piece.
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    throw Error(path + ": cannot append a line (" + std::strerror(n < 0 ? err : ENOSPC) + ")",
                n < 0 ? err : ENOSPC);
}

namespace {

// One file the stats writer will replace, truncate or append to: refused
// unless it is absent or a regular file that is not the image.
// `or_else`: another way out, if there is one, as ", or ...".
void check_stats_target(const std::string& path, const std::string& target,
                        const std::string& image, const std::string& or_else = "") {
  const std::string head = "statsfile=" + path + (target == path ? "" : ": " + target);
  if (target == image)
    throw Error(head + " is the image file= serves; give the statistics another path" + or_else,
                EINVAL);
  struct stat st;
  if (::lstat(target.c_str(), &st) != 0) return;  // absent: the writer creates it
  if (S_ISLNK(st.st_mode))
    throw Error(head + " is a symbolic link; give the path of a regular file" + or_else, EINVAL);
  if (S_ISDIR(st.st_mode))
    throw Error(
        head + " is a directory; give a file's path, e.g. " + target + "/stats.json" + or_else,
        EISDIR);
  if (!S_ISREG(st.st_mode))
    throw Error(head + " is not a regular file (a device, FIFO or socket); give a file's path" +
                    or_else,
                EINVAL);
  struct stat img;
  if (::stat(image.c_str(), &img) == 0 && img.st_dev == st.st_dev && img.st_ino == st.st_ino)
    throw Error(head + " is the image file= serves (a hard link); give another path" + or_else,
                EINVAL);
}

}  // namespace

void check_stats_paths(const std::string& path, const std::string& image, bool series) {
  check_stats_target(path, path, image);
  check_stats_target(path, path + ".tmp", image);
  if (series) check_stats_target(path, path + ".jsonl", image, ", or stats_interval=0");
}

namespace {

// Opens `file` for writing and leaves it as it was: O_CREAT without
// O_TRUNC, so a refused start empties nothing of the last run, and a file
// made only for the test is removed again. Error: "statsfile=PATH: cannot
// write WHAT FILE (why); ADVICE".
void check_can_write(const std::string& path, const std::string& what, const std::string& file,
                     const char* advice) {
  struct stat st;
  const bool existed = ::stat(file.c_str(), &st) == 0;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd == -1)
    throw Error("statsfile=" + path + ": cannot write " + what + file + " (" +
                    std::strerror(errno) + "); " + advice,
                errno);
  ::close(fd);
  if (!existed) ::unlink(file.c_str());
}

}  // namespace

void check_stats_file_writable(const std::string& path) {
  check_can_write(path, "", path + ".tmp", "give a path in an existing, writable directory");
}

void start_series_file(const std::string& series, const std::string& what) {
  std::FILE* f = std::fopen(series.c_str(), "w");
  if (!f) throw_errno(what);
  std::fclose(f);
}

void check_series_file_writable(const std::string& path) {
  // The server empties the series once it starts.
  check_can_write(path, "its time series ", path + ".jsonl",
                  "give another statsfile= or stats_interval=0");
}

void write_stats_file(const std::string& path, const nlohmann::json& stats) {
  const std::string tmp = path + ".tmp";
  const std::string text = stats.dump(2) + "\n";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int err = errno;
  if (f && std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());  // no half-written file left behind
    throw Error("statsfile=" + path + ": cannot write " + tmp + " (" + std::strerror(err) +
                    "); free space there, or give another statsfile=",
                err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_errno("statsfile=" + path + ": rename");
}

}  // namespace vld
