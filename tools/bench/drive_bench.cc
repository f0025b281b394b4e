#include "tools/bench/drive_bench.h"

#include <algorithm>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "geometry/drive_model.h"
#include "tools/bench/bench_geometry.h"
#include "tools/bench/breakdown_json.h"

namespace vld {

using json = nlohmann::json;

namespace {

// The q-quantile of sorted service times, in microseconds.
double quantile_us(const std::vector<SimDuration>& sorted, double q) {
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(q * sorted.size()));
  return to_us(sorted[i]);
}

json random_workload(const DriveGeometry& g, const DiskSpec& spec, const DriveBenchSpec& d,
                     bool write) {
  DriveModel drive(g, g.cylinders);
  std::mt19937_64 rng(spec.seed);
  const uint64_t blocks = drive.simulated_sectors() / d.request_sectors;
  std::uniform_int_distribution<uint64_t> block(0, blocks - 1);
  std::vector<SimDuration> service;
  ServiceBreakdown sum;
  SimDuration total{};
  SimTime t = kSimEpoch;
  for (uint64_t i = 0; i < d.requests; ++i) {
    t += sim_ms(d.gap_ms);
    const SectorRun run{block(rng) * d.request_sectors, d.request_sectors};
    const Access a = write ? drive.access({&run, 1}, t) : drive.read({&run, 1}, t);
    service.push_back(a.end - t);
    sum += a.breakdown;
    total += a.end - t;
    t = a.end;
  }
  std::sort(service.begin(), service.end());
  return {{"experiment", "drive"},
          {"geometry", g.name},
          {"workload", write ? "random-write" : "random-read"},
          {"requests", d.requests},
          {"request_sectors", d.request_sectors},
          {"gap_ms", d.gap_ms},
          {"mean_us", mean_us(total, d.requests)},
          {"p50_us", quantile_us(service, 0.50)},
          {"p90_us", quantile_us(service, 0.90)},
          {"p99_us", quantile_us(service, 0.99)},
          {"breakdown_us", breakdown_json(sum, d.requests)}};
}

// The zone table's streaming rate: a cylinder's sectors pass in its
// tracks' revolutions plus the skews each track and cylinder switch passes
// over (MB/s, 10^6 bytes).
double table_rate_mb_s(const DriveGeometry& g, const Zone& z) {
  const double sectors = double(z.sectors_per_track) * g.tracks_per_cylinder;
  const double slots =
      sectors + double(g.tracks_per_cylinder - 1) * z.track_skew_sectors + z.cylinder_skew_sectors;
  const double rev_s = static_cast<double>(g.revolution().count()) / 1e9;
  return sectors * kSectorBytes / (slots / z.sectors_per_track * rev_s) / 1e6;
}

json sequential_zone(const DriveGeometry& g, uint32_t index, uint32_t cylinders,
                     Transfer transfer) {
  const Zone z = g.zone(index);
  const uint32_t end = index + 1 < g.zone_count() ? g.zone(index + 1).first_cylinder : g.cylinders;
  // n whole cylinders and the first sector after them, inside the zone:
  // the stream is timed from its first sector to the start of the next
  // cylinder's, so it passes every track and cylinder switch it would in a
  // longer stream, the last cylinder switch included.
  const uint32_t zone_cylinders = end - z.first_cylinder;
  const uint32_t n = std::min(cylinders, std::max(1u, zone_cylinders - 1));
  const bool next_sector = n < zone_cylinders;
  DriveModel drive(g, g.cylinders);
  drive.set_head(HeadPosition{z.first_cylinder, 0});
  const uint64_t first = g.cylinder_first_psn(z.first_cylinder);
  const uint64_t sectors = g.cylinder_first_psn(z.first_cylinder + n) - first;
  const SectorRun whole{first, static_cast<uint32_t>(sectors + (next_sector ? 1 : 0))};
  const SectorRun one{first, 1};
  const Access a = drive.estimate({&whole, 1}, kSimEpoch, transfer);
  const Access first_sector = drive.estimate({&one, 1}, kSimEpoch, transfer);
  SimDuration streaming =
      a.end - kSimEpoch - a.breakdown.overhead - first_sector.breakdown.rotation;
  if (next_sector) streaming -= drive.transfer_time(1, z.sectors_per_track);
  const double rate = double(sectors) * kSectorBytes / (to_ms(streaming) / 1e3) / 1e6;
  return {{"experiment", "drive"},
          {"geometry", g.name},
          {"workload", transfer == Transfer::kRead ? "sequential-read" : "sequential-write"},
          {"zone", index},
          {"first_cylinder", z.first_cylinder},
          {"cylinders", n},
          {"sectors_per_track", z.sectors_per_track},
          {"mb_per_s", rate},
          {"table_mb_per_s", table_rate_mb_s(g, z)}};
}

}  // namespace

int cmd_drive(const DiskSpec& spec, const DriveBenchSpec& d) {
  const DriveGeometry g = bench_geometry(spec.geometry);
  if (d.requests == 0) throw Error("drive: --requests must be at least 1", EINVAL);
  if (d.request_sectors == 0 || d.request_sectors > g.min_sectors_per_track())
    throw Error("drive: --request-sectors must be 1 to " +
                    std::to_string(g.min_sectors_per_track()) + " (the shortest track)",
                EINVAL);
  if (!(d.gap_ms >= 0 && d.gap_ms <= 60'000))
    throw Error("drive: --gap-ms must be from 0 to 60000", EINVAL);
  if (d.sequential_cylinders == 0)
    throw Error("drive: --sequential-cylinders must be at least 1", EINVAL);
  std::cout << random_workload(g, spec, d, /*write=*/false).dump() << "\n";
  std::cout << random_workload(g, spec, d, /*write=*/true).dump() << "\n";
  for (Transfer transfer : {Transfer::kRead, Transfer::kWrite})
    for (uint32_t i = 0; i < g.zone_count(); ++i)
      std::cout << sequential_zone(g, i, d.sequential_cylinders, transfer).dump() << "\n";
  std::cout.flush();
  return 0;
}

}  // namespace vld
