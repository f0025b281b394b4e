#include "geometry/drive_geometry.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace vld {

namespace {
constexpr int64_t kMaxFixedCostNs = 1'000'000'000;
}  // namespace

SimDuration DriveGeometry::revolution() const {
  // 60 s / rpm, in ns; integer division loses < 1 ns per revolution.
  return SimDuration{60'000'000'000LL / rpm};
}

double DriveGeometry::sector_time_ns() const {
  return static_cast<double>(revolution().count()) / sectors_per_track;
}

Chs DriveGeometry::chs_of(uint64_t psn) const {
  Chs c;
  c.sector = static_cast<uint32_t>(psn % sectors_per_track);
  uint64_t track = psn / sectors_per_track;
  c.head = static_cast<uint32_t>(track % tracks_per_cylinder);
  c.cylinder = static_cast<uint32_t>(track / tracks_per_cylinder);
  return c;
}

uint64_t DriveGeometry::psn_of(Chs c) const {
  return (uint64_t{c.cylinder} * tracks_per_cylinder + c.head) * sectors_per_track + c.sector;
}

uint32_t DriveGeometry::angular_slot(Chs c) const {
  // Each head switch within a cylinder adds a track skew; each cylinder
  // adds (heads - 1) track skews and one cylinder skew.
  uint64_t per_cylinder =
      uint64_t{tracks_per_cylinder - 1} * track_skew_sectors + cylinder_skew_sectors;
  uint64_t offset = uint64_t{c.cylinder} * per_cylinder + uint64_t{c.head} * track_skew_sectors;
  return static_cast<uint32_t>((c.sector + offset) % sectors_per_track);
}

void DriveGeometry::derive_skews() {
  double st = sector_time_ns();
  track_skew_sectors =
      static_cast<uint32_t>(std::ceil(static_cast<double>(head_switch.count()) / st));
  // Crossing to the next cylinder also selects head 0 (from the last head
  // unless there is one): the head is ready after max(seek(1), head switch),
  // as DriveModel::reposition() charges it.
  SimDuration cross = seek.time(1);
  if (tracks_per_cylinder > 1) cross = std::max(cross, head_switch);
  cylinder_skew_sectors =
      static_cast<uint32_t>(std::ceil(static_cast<double>(cross.count()) / st));
  track_skew_sectors %= sectors_per_track;
  cylinder_skew_sectors %= sectors_per_track;
}

std::string DriveGeometry::check() const {
  // Each names the value found: from a parameter, or from a superblock.
  auto range = [](const char* name, uint64_t v, const char* bounds) {
    return std::string(name) + "=" + std::to_string(v) + " must be between " + bounds;
  };
  if (sectors_per_track < 8 || sectors_per_track > 1'000'000)
    return range("sectors_per_track", sectors_per_track, "8 and 1000000");
  if (tracks_per_cylinder < 1 || tracks_per_cylinder > 1024)
    return range("tracks_per_cylinder", tracks_per_cylinder, "1 and 1024");
  if (cylinders < 1 || cylinders > 10'000'000)
    return range("cylinders", cylinders, "1 and 10000000");
  if (rpm < 600 || rpm > 100'000) return range("rpm", rpm, "600 and 100000");
  // Upper bounds too: a superblock carries these, guarded only by its
  // checksum, and simulated time is int64 nanoseconds (found by
  // fuzz/open_image_fuzzer: overhead 7e18 ns overflowed the clock).
  if (head_switch.count() < 0 || head_switch.count() > kMaxFixedCostNs)
    return "head_switch_us must be from 0 to 1000000 (1 s)";
  if (controller_overhead.count() < 0 || controller_overhead.count() > kMaxFixedCostNs)
    return "overhead_us must be from 0 to 1000000 (1 s)";
  if (auto why = seek.check(cylinders); !why.empty()) return "seek curve: " + why;
  // The longest seek, across the drive, at most 10 s: no drive's is longer,
  // and a curve from a crafted superblock would overflow simulated time.
  // Each piece of the curve grows with the distance.
  double longest = seek.time_ms(cylinders);
  if (seek.boundary_cylinders() >= 2)
    longest = std::max(longest, seek.time_ms(std::min(cylinders, seek.boundary_cylinders() - 1)));
  if (!(longest <= 10'000.0)) return "seek curve: the longest seek must be at most 10000 ms";
  return "";
}

}  // namespace vld
