#include "core/lld/lld_plan.h"

#include <algorithm>

#include "core/lld/lld_layout.h"

namespace vld {

uint32_t lld_platter_cylinders(const FormatOptions& o, uint32_t base) {
  const DriveGeometry& g = o.geometry;
  const uint64_t least = lld_cylinders_needed(g, o.export_bytes, o.block_bytes, o.segment_bytes,
                                              o.nvram_bytes);
  if (std::max<uint64_t>(base, least) > g.cylinders)
    return static_cast<uint32_t>(std::max<uint64_t>(base, least));
  const uint64_t system_tracks =
      lld_system_area_tracks(g, o.export_bytes, o.block_bytes, o.segment_bytes, o.nvram_bytes);
  const uint64_t system_cylinders =
      (system_tracks + g.tracks_per_cylinder - 1) / g.tracks_per_cylinder;
  const uint64_t cyl = std::max<uint64_t>(base + system_cylinders, least);
  return static_cast<uint32_t>(std::min<uint64_t>(cyl, UINT32_MAX));
}

void plan_lld(const FormatOptions& o, uint32_t cylinders, Superblock* sb) {
  plan_lld_layout(o.geometry, cylinders, o.export_bytes, o.block_bytes, o.segment_bytes,
                  o.nvram_bytes);
  sb->segment_bytes = o.segment_bytes;
  sb->nvram_bytes = o.nvram_bytes;
}

}  // namespace vld
