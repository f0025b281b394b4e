#include "core/vld/vld_layout.h"

#include <algorithm>

namespace vld {

namespace {

// f(zone, its tracks within the simulated cylinders) for each zone that
// has any: a lookup per zone, not per track.
template <typename F>
void each_zone(const VldLayout& l, F f) {
  const DriveGeometry& g = l.geometry;
  for (uint32_t z = 0; z < g.zone_count(); ++z) {
    const Zone zone = g.zone(z);
    if (zone.first_cylinder >= l.cylinders) break;
    const uint32_t end = z + 1 < g.zone_count()
                             ? std::min(g.zone(z + 1).first_cylinder, l.cylinders)
                             : l.cylinders;
    f(zone, (end - zone.first_cylinder) * l.heads);
  }
}

}  // namespace

std::vector<uint32_t> VldLayout::track_sizes() const {
  std::vector<uint32_t> out;
  out.reserve(tracks);
  each_zone(*this, [&](const Zone& z, uint32_t zone_tracks) {
    out.insert(out.end(), zone_tracks, z.sectors_per_track);
  });
  return out;
}

uint64_t VldLayout::block_capacity() const {
  if (tracks <= 2) return 0;
  // Whole blocks after one sector of crumbs (plan_image asks for every
  // spare= it tries, so zone by zone).
  uint64_t raw = 0, largest = 0;
  each_zone(*this, [&](const Zone& z, uint32_t zone_tracks) {
    const uint64_t per_track = (z.sectors_per_track - 1) / block_sectors;
    raw += zone_tracks * per_track;
    largest = std::max(largest, per_track);
  });
  const uint64_t system = (track_sectors(0) - 1) / block_sectors;
  if (raw < system + largest) return 0;
  raw -= system + largest;  // the system track, and the reserve wherever it is
  const uint64_t map_blocks = (2 * pieces + block_sectors - 1) / block_sectors;
  return raw > map_blocks ? raw - map_blocks : 0;
}

}  // namespace vld
