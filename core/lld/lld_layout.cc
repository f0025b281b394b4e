// The placement rules are described in lld_layout.h and docs/format.md,
// "mode=lld / Placement".
#include "core/lld/lld_layout.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "core/lld/checkpoint.h"
#include "core/lld/nvram_log.h"
#include "core/lld/segment_summary.h"
#include "core/util/error.h"

namespace vld {
namespace {

constexpr uint32_t kMaxBlockBytes = 64 * 1024;

[[noreturn]] void refuse(const std::string& message) { throw Error(message, EINVAL); }

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The sectors per track the system area and the segment rounding use: the
// outermost zone's, where the system area lies (tracks from 0) and where a
// single-zone drive's one zone is.
uint32_t outer_spt(const DriveGeometry& g) { return g.zone(0).sectors_per_track; }

// What the layout is planned from, once checked.
struct LldParams {
  uint32_t block_sectors = 0;
  uint64_t logical_blocks = 0;
  uint32_t segment_sectors = 0;
  uint64_t nvram_bytes = 0;
  uint32_t format_version = kLldFormatVersion;
};

LldShape shape_for(const LldParams& p, uint64_t segment_count, uint64_t platter_sectors) {
  LldShape s;
  s.segment_sectors = p.segment_sectors;
  s.block_sectors = p.block_sectors;
  s.segment_count = static_cast<uint32_t>(segment_count);
  s.logical_blocks = static_cast<uint32_t>(p.logical_blocks);
  s.platter_sectors = platter_sectors;
  s.format_version = p.format_version;
  return s;
}

// Whole tracks of the system area: each checkpoint slot sized for a table of
// segment_bound segments (an upper bound of the real count, so the real
// slot fits), then the NVRAM region.
struct SystemArea {
  uint64_t slot_tracks = 0;
  uint64_t nvram_tracks = 0;
  uint64_t tracks() const { return 2 * slot_tracks + nvram_tracks; }
};

SystemArea system_area(const LldParams& p, uint32_t spt, uint64_t segment_bound) {
  LldShape bound = shape_for(p, segment_bound, 1);
  SystemArea a;
  a.slot_tracks = ceil_div(checkpoint_slot_sectors(bound), spt);
  a.nvram_tracks = ceil_div(ceil_div(p.nvram_bytes, kSectorBytes), spt);
  return a;
}

// Segments that fit on `cylinders` cylinders after the system area.
uint64_t segments_fitting(const DriveGeometry& g, uint64_t cylinders, const LldParams& p) {
  const uint64_t platter = g.sectors_in_cylinders(static_cast<uint32_t>(
      std::min<uint64_t>(cylinders, g.cylinders)));
  const uint64_t system =
      system_area(p, outer_spt(g), platter / p.segment_sectors).tracks() * outer_spt(g);
  return platter > system ? (platter - system) / p.segment_sectors : 0;
}

uint32_t blocks_per_segment(const LldParams& p) {
  return max_blocks_per_write(shape_for(p, 1, 1));
}

uint64_t min_segments(const LldParams& p) {
  return lld_min_segments(p.logical_blocks, blocks_per_segment(p));
}

uint32_t cylinders_needed(const DriveGeometry& g, const LldParams& p) {
  const uint64_t need = min_segments(p);
  // At least as many as the outermost cylinders' sectors need; then one
  // more at a time. Beyond the drive, more cylinders of its innermost size.
  const uint64_t outer = uint64_t{outer_spt(g)} * g.tracks_per_cylinder;
  uint64_t c = std::max<uint64_t>(1, ceil_div(need * p.segment_sectors, outer));
  while (c <= g.cylinders && segments_fitting(g, c, p) < need) ++c;
  return static_cast<uint32_t>(c);
}

// Everything but simulated_cylinders; throws with what will do.
LldParams check_params(const DriveGeometry& g, uint64_t export_bytes, uint32_t block_bytes,
                       uint64_t segment_bytes, uint64_t nvram_bytes,
                       uint32_t format_version = kLldFormatVersion) {
  if (block_bytes < kSectorBytes || block_bytes > kMaxBlockBytes || block_bytes % kSectorBytes)
    refuse(fmt::format("block_bytes={}: mode=lld needs a multiple of 512 from 512 to 65536; 4096 "
                       "will do", block_bytes));
  LldParams p;
  p.block_sectors = block_bytes / kSectorBytes;
  p.logical_blocks = export_bytes / block_bytes;
  p.nvram_bytes = nvram_bytes;
  p.format_version = format_version;
  if (p.logical_blocks == 0 || p.logical_blocks > UINT32_MAX)
    refuse(fmt::format("export size {} holds {} blocks of {} bytes; mode=lld needs 1 .. 2^32 - 1; "
                       "a size of at least {} will do", export_bytes, p.logical_blocks,
                       block_bytes, block_bytes));
  const uint64_t min_segment = uint64_t{block_bytes} + kSectorBytes;
  if (segment_bytes < min_segment)
    refuse(fmt::format("segment={} is smaller than one {}-byte block plus its 512-byte summary; "
                       "segment=512K (at least {}) will do", segment_bytes, block_bytes,
                       min_segment));
  p.segment_sectors = lld_segment_sectors(g, segment_bytes, block_bytes);
  const uint64_t header_bytes = nvram_record_bytes(shape_for(p, 1, 1)) - block_bytes;
  const uint64_t min_nvram = kNvramRecordsOffsetBytes + header_bytes + block_bytes;
  if (nvram_bytes != 0 && nvram_bytes < min_nvram)
    refuse(fmt::format("nvram={} holds no record of a {}-byte block (two 512-byte header slots, "
                       "then {} + {} per record); nvram=6100000, the paper's 6.1 MB (at least "
                       "{}), will do, or nvram=0 for no NVRAM (writes go straight to segments)",
                       nvram_bytes, block_bytes, header_bytes, block_bytes, min_nvram));
  return p;
}

void check_cylinders(const DriveGeometry& g, uint32_t cylinders, const LldParams& p) {
  if (cylinders == 0 || cylinders > g.cylinders)
    refuse(fmt::format("simulated_cylinders={} is outside {}'s 1 .. {} cylinders; {} will do",
                       cylinders, g.name, g.cylinders, cylinders_needed(g, p)));
  const uint64_t platter = g.sectors_in_cylinders(cylinders);
  if (platter > UINT32_MAX)
    refuse(fmt::format("simulated_cylinders={} gives {} sectors, more than the block map's u32 "
                       "psn + 1 can name (2^32 - 1); a smaller export will do", cylinders,
                       platter));
  const uint64_t have = segments_fitting(g, cylinders, p);
  const uint64_t need = min_segments(p);
  if (have < need)
    refuse(fmt::format("simulated_cylinders={} holds {} segments of {} sectors after the system "
                       "area; the export ({} blocks, {} per segment) and the cleaner's {} clean "
                       "segments need {}; simulated_cylinders={} will do", cylinders, have,
                       p.segment_sectors, p.logical_blocks, blocks_per_segment(p),
                       kLldCleanerReserveSegments, need, cylinders_needed(g, p)));
}

}  // namespace

uint64_t LldLayout::segment_first_psn(uint32_t segment) const {
  assert(segment < segment_count);
  return segments_first_psn + uint64_t{segment} * segment_sectors;
}

std::optional<SegmentSector> LldLayout::segment_of(uint64_t psn) const {
  if (psn < segments_first_psn) return std::nullopt;
  const uint64_t rel = psn - segments_first_psn;
  const uint64_t segment = rel / segment_sectors;
  if (segment >= segment_count) return std::nullopt;
  return SegmentSector{static_cast<uint32_t>(segment), static_cast<uint32_t>(rel % segment_sectors)};
}

uint64_t LldLayout::capacity_blocks() const {
  return uint64_t{segment_count} * max_blocks_per_write(shape);
}

uint32_t lld_segment_sectors(const DriveGeometry& g, uint64_t segment_bytes, uint32_t block_bytes) {
  const uint64_t spt = outer_spt(g);
  assert(spt > 0);
  const uint64_t asked = segment_bytes / kSectorBytes;
  if (2 * asked < spt) return static_cast<uint32_t>(asked);  // under half a track: as asked
  const uint64_t floor_tracks = ceil_div(1 + block_bytes / kSectorBytes, spt);
  const uint64_t tracks = std::max((asked + spt / 2) / spt, floor_tracks);
  return static_cast<uint32_t>(std::min<uint64_t>(tracks * spt, UINT32_MAX / spt * spt));
}

uint64_t lld_min_segments(uint64_t logical_blocks, uint32_t blocks_per_segment) {
  assert(blocks_per_segment > 0);
  return ceil_div(logical_blocks, blocks_per_segment) + kLldCleanerReserveSegments;
}

uint64_t lld_system_area_tracks(const DriveGeometry& g, uint64_t export_bytes,
                                uint32_t block_bytes, uint64_t segment_bytes,
                                uint64_t nvram_bytes) {
  const LldParams p = check_params(g, export_bytes, block_bytes, segment_bytes, nvram_bytes);
  // As plan_lld_layout computes it on all of g's cylinders (capped where the
  // planner would refuse more sectors: a bound only needs to be no smaller).
  const uint64_t platter = std::min<uint64_t>(g.sectors_in_cylinders(g.cylinders), UINT32_MAX);
  return system_area(p, outer_spt(g), platter / p.segment_sectors).tracks();
}

uint32_t lld_cylinders_needed(const DriveGeometry& g, uint64_t export_bytes, uint32_t block_bytes,
                              uint64_t segment_bytes, uint64_t nvram_bytes) {
  return cylinders_needed(g, check_params(g, export_bytes, block_bytes, segment_bytes, nvram_bytes));
}

LldLayout plan_lld_layout(const DriveGeometry& g, uint32_t simulated_cylinders,
                          uint64_t export_bytes, uint32_t block_bytes, uint64_t segment_bytes,
                          uint64_t nvram_bytes, uint32_t format_version) {
  const LldParams p =
      check_params(g, export_bytes, block_bytes, segment_bytes, nvram_bytes, format_version);
  check_cylinders(g, simulated_cylinders, p);
  LldLayout l;
  const uint32_t spt = outer_spt(g);
  l.sectors_per_track = spt;
  l.platter_sectors = g.sectors_in_cylinders(simulated_cylinders);
  const SystemArea a = system_area(p, spt, l.platter_sectors / p.segment_sectors);
  l.system_tracks = a.tracks();
  if (g.zoned() && l.system_tracks > uint64_t{g.zones.size() > 1 ? g.zones[1].first_cylinder
                                                                    : g.cylinders} *
                                         g.tracks_per_cylinder)
    refuse(fmt::format("the system area ({} tracks) does not fit {}'s outermost zone; a smaller "
                       "nvram= or segment= will do", l.system_tracks, g.name));
  l.segments_first_psn = l.system_tracks * spt;
  l.segment_sectors = p.segment_sectors;
  l.segment_count =
      static_cast<uint32_t>((l.platter_sectors - l.segments_first_psn) / p.segment_sectors);
  // On a zoned drive a segment is a run of sectors across tracks of
  // different sizes: aligned to tracks only in the outermost zone.
  l.segments_track_aligned = !g.zoned() && p.segment_sectors % spt == 0;
  l.shape = shape_for(p, l.segment_count, l.platter_sectors);
  const uint64_t slot_sectors = checkpoint_slot_sectors(l.shape);
  assert(slot_sectors <= a.slot_tracks * spt);
  for (uint64_t i = 0; i < 2; ++i) l.checkpoint[i] = {i * a.slot_tracks * spt, slot_sectors};
  l.nvram = {2 * a.slot_tracks * spt, ceil_div(nvram_bytes, kSectorBytes)};
  l.nvram_bytes = nvram_bytes;
  l.nvram_records = nvram_capacity_records(nvram_bytes, l.shape);
  assert(l.shape.valid() && l.segment_count >= min_segments(p));
  return l;
}

}  // namespace vld
