#include "tools/bench/scan_bench.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/modes/mode_image.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "tools/bench/scratch_image.h"

namespace vld {
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// VmRSS and VmHWM of this process, in MiB.
nlohmann::json memory_now() {
  std::ifstream in("/proc/self/status");
  nlohmann::json j;
  for (std::string line; std::getline(in, line);)
    for (const char* key : {"VmRSS", "VmHWM"})
      if (line.rfind(std::string(key) + ":", 0) == 0)
        j[key] = std::stod(line.substr(line.find(':') + 1)) / 1024.0;
  return j;
}

// Random 4 KiB writes, back to back; returns when the last ends, and the
// last block written in *last.
SimTime write_randomly(VldDisk& disk, const ScanBenchSpec& spec, SimTime t, uint64_t* last) {
  std::mt19937_64 rng(spec.seed);
  const uint64_t blocks = spec.export_bytes / 4096;
  std::vector<std::byte> data(4096);
  for (uint64_t i = 0; i < spec.writes; ++i) {
    fill_random(data, rng);
    *last = rng() % blocks;
    t = disk.write(*last * 4096, data, /*fua=*/false, t).end;
  }
  return t;
}

// live_on of the track holding the most recently written block: median and
// max of spec.repeats calls.
nlohmann::json time_live_on(const VldDisk& disk, uint32_t track, uint32_t repeats) {
  std::vector<double> us;
  size_t found = 0;
  for (uint32_t r = 0; r < std::max(repeats, 1u); ++r) {
    std::vector<uint64_t> blocks;
    std::vector<uint32_t> pieces;
    const auto t0 = Clock::now();
    disk.live_on(track, &blocks, &pieces);
    us.push_back(us_since(t0));
    found = blocks.size() + pieces.size();
  }
  std::sort(us.begin(), us.end());
  return {{"median", us[us.size() / 2]}, {"max", us.back()}, {"items_found", found}};
}

// A track's blocks found without the per-track lists: every map entry
// looked at.
double time_map_scan(const VldDisk& disk, uint32_t track) {
  const DriveGeometry& g = disk.superblock().geometry;
  const uint64_t first = g.track_first_psn(track), end = first + g.track_sectors(track);
  const auto t0 = Clock::now();
  size_t n = 0;
  for (const MapEntry& e : disk.map()) n += e.mapped() && e.psn() >= first && e.psn() < end;
  const double us = us_since(t0);
  if (n == 0) std::cerr << "vld-bench scan: the scan found nothing on track " << track << "\n";
  return us;
}

}  // namespace

int cmd_scan(const ScanBenchSpec& spec) {
  const Superblock sb = plan_large_vld(spec.geometry, spec.export_bytes);
  ScratchImage image(spec.dir, "scan");
  nlohmann::json j{{"experiment", "scan"}, {"export_bytes", spec.export_bytes},
                   {"cylinders", sb.simulated_cylinders}, {"writes", spec.writes}};
  j["rss_mib"]["start"] = memory_now();
  auto t0 = Clock::now();
  VldDisk disk(create_image(image.path, sb), sb);
  j["open_ms"] = us_since(t0) / 1000;
  j["rss_mib"]["opened"] = memory_now();
  t0 = Clock::now();
  uint64_t last = 0;
  SimTime t = write_randomly(disk, spec, kSimEpoch, &last);
  j["writes_s"] = us_since(t0) / 1e6;
  j["rss_mib"]["written"] = memory_now();
  j["track_lists_mib"] = static_cast<double>(disk.track_lists_bytes()) / (1 << 20);

  const uint32_t track =
      sb.geometry.track_of_psn(disk.map()[last].psn());
  j["track"] = track;
  j["live_on_us"] = time_live_on(disk, track, spec.repeats);
  j["map_scan_us"] = time_map_scan(disk, track);
  t0 = Clock::now();
  const bool repacked = disk.repack_now(t);
  j["repack_us"] = us_since(t0);
  j["repacked"] = repacked;
  j["repack_blocks_moved"] = disk.vld_stats().repack_blocks_moved;
  std::cout << j.dump() << std::endl;
  return 0;
}

}  // namespace vld
