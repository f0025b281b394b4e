#include "tools/bench/best_case_bench.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/free_space_map.h"
#include "geometry/drive_model.h"
#include "tools/bench/bench_geometry.h"
#include "tools/bench/breakdown_json.h"

namespace vld {
namespace {

void check(const BestCaseSpec& spec, const DriveGeometry& g) {
  for (double u : spec.utils)
    if (!(u > 0 && u < 100))
      throw Error("best-case: --util " + std::to_string(u) + " is not a percentage in (0, 100)",
                  EINVAL);
  if (spec.hole_sectors == 0 || spec.hole_sectors > g.sectors_per_track)
    throw Error("best-case: --hole-sectors must be 1 to " + std::to_string(g.sectors_per_track) +
                    " (a track of " + g.name + ")", EINVAL);
  if (spec.window_cylinders < 3 || spec.window_cylinders > g.cylinders)
    throw Error("best-case: --window must be 3 to " + std::to_string(g.cylinders) + " cylinders",
                EINVAL);
  if (spec.writes == 0) throw Error("best-case: --writes must be at least 1", EINVAL);
}

// REQUIRES: every track of `free` the same size (a single-zone drive).
// Every track of `free` holds `holes_per_track` holes of `hole` sectors on
// average (the whole part on each, the fraction by chance), at distinct
// random slots of a grid with a random phase; the rest is in use.
void draw_free_space(FreeSpaceMap& free, uint32_t hole, double holes_per_track,
                     std::mt19937_64& rng) {
  const uint32_t spt = free.sectors_on(0), slots = spt / hole;
  const auto whole = static_cast<uint32_t>(holes_per_track);
  std::bernoulli_distribution one_more(holes_per_track - whole);
  std::uniform_int_distribution<uint32_t> phase(0, spt - slots * hole);
  std::vector<uint32_t> slot(slots);
  for (uint32_t t = 0; t < free.tracks(); ++t) {
    free.allocate(t, 0, spt);
    std::iota(slot.begin(), slot.end(), 0u);
    std::shuffle(slot.begin(), slot.end(), rng);
    const uint32_t holes = std::min(slots, whole + (one_more(rng) ? 1u : 0u));
    const uint32_t p = phase(rng);
    for (uint32_t k = 0; k < holes; ++k) free.release(t, p + slot[k] * hole, hole);
  }
}

struct Tally {
  ServiceBreakdown sum;
  uint64_t stayed = 0;  // commands served without leaving the head's track
  uint64_t free_sectors = 0;
};

// One command (a block and its map sector, as VldDisk places a 4 KiB
// write) on a freshly drawn map, from a random track of the middle
// cylinder at a random rotational position.
void place_one(const DriveGeometry& g, uint32_t cylinders, uint32_t hole, double holes_per_track,
               std::mt19937_64& rng, Tally* tally) {
  DriveModel drive(g, cylinders);
  FreeSpaceMap free(cylinders * g.tracks_per_cylinder, g.sectors_per_track);
  draw_free_space(free, hole, holes_per_track, rng);
  tally->free_sectors += free.free_sectors();
  const HeadPosition head{cylinders / 2, static_cast<uint32_t>(rng() % g.tracks_per_cylinder)};
  drive.set_head(head);
  const SimTime start = kSimEpoch + SimDuration{static_cast<int64_t>(
                                        rng() % static_cast<uint64_t>(g.revolution().count()))};
  EagerAllocator alloc(drive, free, AllocatorPolicy{});
  const std::vector<uint32_t> command = {8, 1};  // 4 KiB of data, one map sector
  std::vector<size_t> order;
  // The mechanics begin after the controller's overhead, as in VldDisk.
  auto extents = alloc.place(command, head, start + g.controller_overhead,
                             CylinderWindow{0, cylinders}, &order);
  if (!extents)
    throw Error("best-case: a write found no hole in the window (holes drawn at random); use a "
                "lower --util or a wider --window", ENOSPC);
  std::vector<Extent> in_time;
  for (size_t i : order) in_time.push_back((*extents)[i]);
  const uint32_t head_track = head.cylinder * g.tracks_per_cylinder + head.head;
  bool stayed = true;
  for (const Extent& e : in_time) stayed = stayed && e.track == head_track;
  tally->stayed += stayed;
  std::vector<SectorRun> runs = alloc.runs(in_time);
  tally->sum += drive.access(runs, start).breakdown;
}

}  // namespace

int cmd_best_case(const BestCaseSpec& spec) {
  const DriveGeometry g = single_zone_geometry(spec.geometry, "best-case");
  check(spec, g);
  std::mt19937_64 rng(spec.seed);
  for (double util : spec.utils) {
    const double holes_per_track = (1.0 - util / 100.0) * g.sectors_per_track / spec.hole_sectors;
    if (holes_per_track > g.sectors_per_track / spec.hole_sectors)
      throw Error("best-case: --util " + std::to_string(util) + " leaves more free space than "
                  "holes of " + std::to_string(spec.hole_sectors) + " sectors fill", EINVAL);
    Tally tally;
    for (uint64_t i = 0; i < spec.writes; ++i)
      place_one(g, spec.window_cylinders, spec.hole_sectors, holes_per_track, rng, &tally);
    const ServiceBreakdown& b = tally.sum;
    const uint64_t n = spec.writes;
    const double sectors = double(spec.window_cylinders) * g.sectors_per_cylinder() * n;
    nlohmann::json j;
    j["experiment"] = "best-case";
    j["geometry"] = spec.geometry;
    j["util_pct"] = util;
    j["hole_sectors"] = spec.hole_sectors;
    j["holes_per_track"] = holes_per_track;
    j["free_fraction"] = tally.free_sectors / sectors;
    j["window_cylinders"] = spec.window_cylinders;
    j["writes"] = n;
    j["mean_us"] = mean_us(b.total(), n);
    j["breakdown_us"] = breakdown_json(b, n);
    j["stayed_on_track"] = static_cast<double>(tally.stayed) / n;
    j["seed"] = spec.seed;
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

}  // namespace vld
