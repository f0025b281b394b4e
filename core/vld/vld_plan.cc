#include "core/vld/vld_plan.h"

#include <fmt/format.h>

#include "core/util/error.h"
#include "core/vld/vld_layout.h"

namespace vld {

uint64_t vld_block_capacity(const Superblock& sb) { return VldLayout(sb).block_capacity(); }

void check_vld_fillable(const FormatOptions& o, const Superblock& sb) {
  const uint64_t blocks = sb.export_bytes / sb.block_bytes;
  if (sb.mode != DiskMode::kVld || vld_block_capacity(sb) >= blocks) return;
  // A block on the largest track: inner zones' tracks may hold none.
  const uint32_t spt = o.geometry.max_sectors_per_track();
  if (o.block_bytes / kSectorBytes > spt - 1) {
    uint32_t fits = kSectorBytes;
    while (fits * 2 / kSectorBytes <= spt - 1) fits *= 2;
    throw Error(fmt::format("block={} does not fit a track of the {} ({} sectors) beside a map "
                            "sector, and mode=vld keeps each block on one track; use block={} "
                            "or less",
                            o.block_bytes, o.geometry.name, spt, fits),
                EINVAL);
  }
  Superblock bigger = sb;
  for (uint32_t spare = o.spare_percent + 1; spare <= 1000; ++spare) {
    bigger.simulated_cylinders = cylinders_needed(o.geometry, o.export_bytes, o.block_bytes, spare);
    if (vld_block_capacity(bigger) >= blocks)
      throw Error(fmt::format("spare={} is too little for mode=vld with block={} on the {}: the "
                              "platters could hold only {} of the export's {} blocks once "
                              "writes have fragmented them; use spare={} or more",
                              o.spare_percent, o.block_bytes, o.geometry.name,
                              vld_block_capacity(sb), blocks, spare),
                  EINVAL);
  }
  throw Error(fmt::format("spare={} is too little for mode=vld with block={} on the {}, and no "
                          "spare up to 1000 is enough; choose a larger block= or another geometry",
                          o.spare_percent, o.block_bytes, o.geometry.name),
              EINVAL);
}

}  // namespace vld
