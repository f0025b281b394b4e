#include "geometry/drive_geometry.h"

#include <algorithm>
#include <cassert>
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

Zone DriveGeometry::zone(uint32_t index) const {
  if (zoned()) return zones[index];
  assert(index == 0);
  return Zone{0, sectors_per_track, track_skew_sectors, cylinder_skew_sectors, 0};
}

uint32_t DriveGeometry::zone_index_of_cylinder(uint32_t cylinder) const {
  if (!zoned()) return 0;
  // The last zone whose first cylinder is at or below `cylinder`.
  auto after = std::upper_bound(zones.begin(), zones.end(), cylinder,
                                [](uint32_t c, const Zone& z) { return c < z.first_cylinder; });
  assert(after != zones.begin());
  return static_cast<uint32_t>(after - zones.begin()) - 1;
}

Zone DriveGeometry::zone_of_track(uint32_t track) const {
  return zone(zone_index_of_cylinder(track / tracks_per_cylinder));
}

uint64_t DriveGeometry::cylinder_first_psn(uint32_t cylinder) const {
  const uint32_t index = cylinder >= cylinders && zoned()
                             ? static_cast<uint32_t>(zones.size()) - 1
                             : zone_index_of_cylinder(std::min(cylinder, cylinders - 1));
  const Zone z = zone(index);
  return z.first_psn +
         uint64_t{cylinder - z.first_cylinder} * tracks_per_cylinder * z.sectors_per_track;
}

uint64_t DriveGeometry::track_first_psn(uint32_t track) const {
  if (!zoned()) return uint64_t{track} * sectors_per_track;  // every placement asks
  const Zone z = zone_of_track(track);
  return z.first_psn +
         uint64_t{track - z.first_cylinder * tracks_per_cylinder} * z.sectors_per_track;
}

uint32_t DriveGeometry::track_of_psn(uint64_t psn) const {
  if (!zoned()) return static_cast<uint32_t>(psn / sectors_per_track);  // every placement asks
  const Chs c = chs_of(psn);
  return c.cylinder * tracks_per_cylinder + c.head;
}

uint32_t DriveGeometry::max_sectors_per_track() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < zone_count(); ++i) n = std::max(n, zone(i).sectors_per_track);
  return n;
}

uint32_t DriveGeometry::min_sectors_per_track() const {
  uint32_t n = UINT32_MAX;
  for (uint32_t i = 0; i < zone_count(); ++i) n = std::min(n, zone(i).sectors_per_track);
  return n;
}

double DriveGeometry::sector_time_ns(uint32_t track) const {
  return static_cast<double>(revolution().count()) / track_sectors(track);
}

double DriveGeometry::sector_time_ns() const {
  assert(!zoned());
  return static_cast<double>(revolution().count()) / sectors_per_track;
}

Chs DriveGeometry::chs_of(uint64_t psn) const {
  uint32_t index = 0;
  if (zoned()) {
    // The last zone whose first sector is at or below psn.
    auto after = std::upper_bound(zones.begin(), zones.end(), psn,
                                  [](uint64_t p, const Zone& z) { return p < z.first_psn; });
    index = static_cast<uint32_t>(after - zones.begin()) - 1;
  }
  const Zone z = zone(index);
  const uint64_t rel = psn - z.first_psn;
  Chs c;
  c.sector = static_cast<uint32_t>(rel % z.sectors_per_track);
  const uint64_t track = rel / z.sectors_per_track;
  c.head = static_cast<uint32_t>(track % tracks_per_cylinder);
  c.cylinder = z.first_cylinder + static_cast<uint32_t>(track / tracks_per_cylinder);
  return c;
}

uint64_t DriveGeometry::psn_of(Chs c) const {
  const Zone z = zone(zone_index_of_cylinder(c.cylinder));
  return z.first_psn +
         (uint64_t{c.cylinder - z.first_cylinder} * tracks_per_cylinder + c.head) *
             z.sectors_per_track +
         c.sector;
}

uint32_t DriveGeometry::angular_slot(Chs c) const {
  // Each head switch within a cylinder adds a track skew; each cylinder
  // adds (heads - 1) track skews and one cylinder skew, counted from the
  // zone's first cylinder.
  const Zone z = zone(zone_index_of_cylinder(c.cylinder));
  const uint64_t per_cylinder =
      uint64_t{tracks_per_cylinder - 1} * z.track_skew_sectors + z.cylinder_skew_sectors;
  const uint64_t offset = uint64_t{c.cylinder - z.first_cylinder} * per_cylinder +
                          uint64_t{c.head} * z.track_skew_sectors;
  return static_cast<uint32_t>((c.sector + offset) % z.sectors_per_track);
}

namespace {

// The skews of a zone with `spt` sectors per track: a head switch, and a
// move to the next cylinder's first track (which also selects head 0, from
// the last head unless there is one): the head is ready after max(seek(1),
// head switch), as DriveModel::reposition() charges it, and a write also
// waits out the write settle after the seek; the skew covers that too, so
// that neither a read nor a write stream loses a revolution at a cylinder
// switch (DiskSim's measured skews do: atlas10k's 113 sectors are 2.03 ms,
// its seek(1) and settle 1.73 ms).
void derive_zone_skews(const DriveGeometry& g, uint32_t spt, uint32_t* track_skew,
                       uint32_t* cylinder_skew) {
  const double st = static_cast<double>(g.revolution().count()) / spt;
  *track_skew = static_cast<uint32_t>(std::ceil(static_cast<double>(g.head_switch.count()) / st));
  SimDuration cross = g.seek.time(1) + g.write_settle;
  if (g.tracks_per_cylinder > 1) cross = std::max(cross, g.head_switch);
  *cylinder_skew = static_cast<uint32_t>(std::ceil(static_cast<double>(cross.count()) / st));
  *track_skew %= spt;
  *cylinder_skew %= spt;
}

}  // namespace

void DriveGeometry::derive_skews() {
  if (!zoned()) {
    derive_zone_skews(*this, sectors_per_track, &track_skew_sectors, &cylinder_skew_sectors);
    return;
  }
  for (Zone& z : zones)
    derive_zone_skews(*this, z.sectors_per_track, &z.track_skew_sectors, &z.cylinder_skew_sectors);
}

void DriveGeometry::number_zones() {
  uint64_t psn = 0;
  for (size_t i = 0; i < zones.size(); ++i) {
    zones[i].first_psn = psn;
    const uint32_t end = i + 1 < zones.size() ? zones[i + 1].first_cylinder : cylinders;
    psn += uint64_t{end - zones[i].first_cylinder} * tracks_per_cylinder *
           zones[i].sectors_per_track;
  }
}

namespace {

std::string range(const std::string& name, uint64_t v, const char* bounds) {
  return name + "=" + std::to_string(v) + " must be between " + bounds;
}

// Why the zone table is unusable, or "".
std::string check_zones(const DriveGeometry& g) {
  if (g.sectors_per_track != 0 || g.track_skew_sectors != 0 || g.cylinder_skew_sectors != 0)
    return "a zoned drive has sectors_per_track and the skews in its zones, not beside them";
  if (g.zones.size() > kMaxZones)
    return range("zones", g.zones.size(), ("1 and " + std::to_string(kMaxZones)).c_str());
  if (g.zones[0].first_cylinder != 0) return "the first zone must start at cylinder 0";
  uint64_t psn = 0;
  for (size_t i = 0; i < g.zones.size(); ++i) {
    const Zone& z = g.zones[i];
    const std::string name = "zone " + std::to_string(i) + ": ";
    if (z.sectors_per_track < 8 || z.sectors_per_track > 1'000'000)
      return name + range("sectors_per_track", z.sectors_per_track, "8 and 1000000");
    if (z.track_skew_sectors >= z.sectors_per_track ||
        z.cylinder_skew_sectors >= z.sectors_per_track)
      return name + "skews must be below sectors_per_track (" +
             std::to_string(z.sectors_per_track) + ")";
    const uint32_t end = i + 1 < g.zones.size() ? g.zones[i + 1].first_cylinder : g.cylinders;
    if (end <= z.first_cylinder)
      return name + "first cylinders must ascend and stay below cylinders=" +
             std::to_string(g.cylinders);
    if (z.first_psn != psn) return name + "first_psn does not follow the zones before it";
    psn += uint64_t{end - z.first_cylinder} * g.tracks_per_cylinder * z.sectors_per_track;
  }
  return "";
}

}  // namespace

std::string DriveGeometry::check() const {
  // Each names the value found: from a parameter, or from a superblock.
  if (!zoned() && (sectors_per_track < 8 || sectors_per_track > 1'000'000))
    return range("sectors_per_track", sectors_per_track, "8 and 1000000");
  if (tracks_per_cylinder < 1 || tracks_per_cylinder > 1024)
    return range("tracks_per_cylinder", tracks_per_cylinder, "1 and 1024");
  if (cylinders < 1 || cylinders > 10'000'000)
    return range("cylinders", cylinders, "1 and 10000000");
  if (zoned())
    if (std::string why = check_zones(*this); !why.empty()) return why;
  if (rpm < 600 || rpm > 100'000) return range("rpm", rpm, "600 and 100000");
  // Upper bounds too: a superblock carries these, guarded only by its
  // checksum, and simulated time is int64 nanoseconds (found by
  // fuzz/open_image_fuzzer: overhead 7e18 ns overflowed the clock).
  if (head_switch.count() < 0 || head_switch.count() > kMaxFixedCostNs)
    return "head_switch_us must be from 0 to 1000000 (1 s)";
  if (controller_overhead.count() < 0 || controller_overhead.count() > kMaxFixedCostNs)
    return "overhead_us must be from 0 to 1000000 (1 s)";
  if (write_settle.count() < 0 || write_settle.count() > kMaxFixedCostNs)
    return "write_settle_us must be from 0 to 1000000 (1 s)";
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
