#include "tools/bench/fig2_bench.h"

#include <algorithm>
#include <iostream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/free_space_map.h"
#include "geometry/drive_model.h"
#include "tools/bench/bench_geometry.h"
#include "tools/bench/breakdown_json.h"

namespace vld {

using json = nlohmann::json;

int cmd_fig2(const DiskSpec& spec, const std::vector<double>& thresholds, uint32_t sectors,
             uint64_t writes, bool strict) {
  const DriveGeometry g = single_zone_geometry(spec.geometry, "fig2");
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

}  // namespace vld
