#include "core/vld/vld_plan.h"

#include <fmt/format.h>

#include "core/util/error.h"
#include "core/vld/vld_layout.h"

namespace vld {

namespace {

// A span too narrow for mode=vld to write every block (the span's platters
// are all of it, so no spare= helps): names the narrowest span from the
// same first cylinder that is wide enough.
[[noreturn]] void refuse_narrow_span(const FormatOptions& o, const Superblock& sb,
                                     uint64_t blocks) {
  const CylinderSpan span = sb.span();
  const auto capacity_of = [&](uint32_t cylinders) {
    Superblock wider = sb;
    wider.geometry = span_of(o.geometry, {span.first, span.first + cylinders - 1});
    wider.simulated_cylinders = cylinders;
    return vld_block_capacity(wider);
  };
  const std::string head = fmt::format(
      "span={} is too narrow for mode=vld with block={}: its {} cylinders could hold only {} of "
      "the export's {} blocks once writes have fragmented them",
      span.to_string(), o.block_bytes, span.cylinders(), vld_block_capacity(sb), blocks);
  uint32_t lo = span.cylinders() + 1, hi = sb.drive_cylinders - span.first;
  if (lo > hi || capacity_of(hi) < blocks)
    throw Error(head + ", and no span from cylinder " + std::to_string(span.first) +
                    " is wide enough; lower size= or start span= further out",
                EINVAL);
  while (lo < hi) {  // the capacity grows with the span
    const uint32_t mid = lo + (hi - lo) / 2;
    if (capacity_of(mid) >= blocks) hi = mid;
    else lo = mid + 1;
  }
  throw Error(fmt::format("{}; widen it to at least {} cylinders (span={}-{}) or lower size=",
                          head, lo, span.first, span.first + lo - 1),
              EINVAL);
}

}  // namespace

uint64_t vld_block_capacity(const Superblock& sb) { return VldLayout(sb).block_capacity(); }

void check_vld_fillable(const FormatOptions& o, const Superblock& sb) {
  const uint64_t blocks = sb.export_bytes / sb.block_bytes;
  if (sb.mode != DiskMode::kVld || vld_block_capacity(sb) >= blocks) return;
  // A block on the largest track: inner zones' tracks may hold none.
  const DriveGeometry& g = sb.geometry;  // a span's band, else o.geometry
  const uint32_t spt = g.max_sectors_per_track();
  if (o.block_bytes / kSectorBytes > spt - 1) {
    uint32_t fits = kSectorBytes;
    while (fits * 2 / kSectorBytes <= spt - 1) fits *= 2;
    throw Error(fmt::format("block={} does not fit a track of the {} ({} sectors) beside a map "
                            "sector, and mode=vld keeps each block on one track; use block={} "
                            "or less",
                            o.block_bytes, g.name, spt, fits),
                EINVAL);
  }
  if (sb.spanned()) refuse_narrow_span(o, sb, blocks);
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
