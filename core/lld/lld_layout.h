// LldLayout: where mode=lld's pieces sit on the simulated platters, planned
// from the geometry and the format-time parameters (docs/format.md,
// "mode=lld / Placement"). A pure planning function, plan_lld_layout; the
// LldShape the record code checks against is built from the layout, so the
// two agree by construction.
//
//   track 0 ..                                             platter end
//   [checkpoint slot 0][checkpoint slot 1][NVRAM][seg 0][seg 1] .. [seg S-1][tail]
//   \________ system area: whole tracks from cylinder 0 _______/
//
// Each system region starts on a track's sector 0 and takes whole tracks.
// Segments follow contiguously from the first track after the system area.
// nvram=0 means no NVRAM (writes go straight into segments): the region is
// empty, {the psn where it would start, 0 sectors}, takes no track, and
// holds no record; the segments then start on the track after checkpoint
// slot 1's tracks.
//
// Segment size rule (lld_segment_sectors): the requested segment= bytes,
// rounded to the nearest whole number of tracks (a half rounds up), but no
// fewer tracks than hold one block and a one-sector summary. When the
// request is under half a track (a track larger than twice the segment) the
// segment keeps the requested size exactly and is not track-aligned: rounding
// it up to a track would inflate it more than 2x. st19101 (256 sectors):
// 512 KiB = 4 tracks exactly; hp97560 (72): 14 tracks = 1008 sectors (504
// KiB); savvio10k4 (1323): 1 track = 1323 sectors (661.5 KiB).
//
// Cleaner reserve: the segments must hold the export with
// lld_min_segments = ceil(logical blocks / max_blocks_per_write) +
// kLldCleanerReserveSegments, see there.
//
// Invariants of a planned layout: the regions are disjoint, in the order
// drawn, and lie within simulated_cylinders; shape.valid(); shape.segment_count
// == segment_count >= lld_min_segments; checkpoint extents are exactly
// checkpoint_slot_sectors(shape) long; nvram.sectors == ceil(nvram_bytes / 512)
// (0 with nvram=0); platter sectors <= 2^32 - 1 (the block map stores psn + 1
// as a u32).
//
// Thread-safety: plain values and pure functions.
#ifndef VLD_CORE_LLD_LLD_LAYOUT_H_
#define VLD_CORE_LLD_LLD_LAYOUT_H_

#include <array>
#include <cstdint>
#include <optional>

#include "core/lld/lld_shape.h"
#include "geometry/drive_geometry.h"

namespace vld {

// Two clean segments beyond what the export fills: the log's open segment,
// whose unwritten tail holds no live block until it is closed, and one clean
// segment the cleaner copies a victim's live blocks into before the victim
// can be freed (Sprite LFS's cleaner too must write before it frees).
// With fewer, a full export could leave the cleaner no room to make progress.
inline constexpr uint32_t kLldCleanerReserveSegments = 2;

struct LldExtent {
  uint64_t first_psn = 0;
  uint64_t sectors = 0;
  uint64_t end_psn() const { return first_psn + sectors; }  // one past the last
  bool operator==(const LldExtent&) const = default;
};

struct SegmentSector {
  uint32_t segment = 0;
  uint32_t sector = 0;  // within the segment
  bool operator==(const SegmentSector&) const = default;
};

struct LldLayout {
  uint32_t sectors_per_track = 0;           // the outermost zone's: the system area's tracks
  uint64_t platter_sectors = 0;             // of the simulated cylinders
  std::array<LldExtent, 2> checkpoint;      // slot i; each starts a track
  LldExtent nvram;                          // ceil(nvram_bytes / 512) sectors; starts a track
  uint64_t nvram_bytes = 0;                 // the region's size as asked (nvram=; 0: none)
  uint64_t nvram_records = 0;               // nvram_capacity_records(nvram_bytes); 0 if none
  uint64_t system_tracks = 0;               // tracks [0, system_tracks) hold the above
  uint64_t segments_first_psn = 0;          // system_tracks x sectors_per_track
  uint32_t segment_sectors = 0;
  uint32_t segment_count = 0;
  bool segments_track_aligned = false;      // segment_sectors is a whole number of tracks
  LldShape shape;

  uint64_t segment_first_psn(uint32_t segment) const;  // REQUIRES: segment < segment_count
  // Which segment psn lies in, and where; nullopt in the system area or the
  // unused tail after the last segment.
  std::optional<SegmentSector> segment_of(uint64_t psn) const;
  // Blocks the segments hold, at max_blocks_per_write each.
  uint64_t capacity_blocks() const;
};

// The rounding rule above, in the outermost zone's tracks.
uint32_t lld_segment_sectors(const DriveGeometry& g, uint64_t segment_bytes, uint32_t block_bytes);

// ceil(logical_blocks / blocks_per_segment) + kLldCleanerReserveSegments.
uint64_t lld_min_segments(uint64_t logical_blocks, uint32_t blocks_per_segment);

// Throws Error(EINVAL), one line naming the parameter and what will do, if:
// block_bytes is not a multiple of 512 in [512, 64 KiB]; the export holds no
// block; segment_bytes is under one block plus a summary sector; nvram_bytes
// is not 0 (no NVRAM) and holds no record (two header slots + one record of
// 64 + block bytes); simulated_cylinders is 0 or more than g.cylinders, or
// gives more than 2^32 - 1 sectors; or the segments left after the system
// area are fewer than lld_min_segments. format_version: the image's
// (Superblock::version()), which sets the NVRAM's record size.
LldLayout plan_lld_layout(const DriveGeometry& g, uint32_t simulated_cylinders,
                          uint64_t export_bytes, uint32_t block_bytes, uint64_t segment_bytes,
                          uint64_t nvram_bytes, uint32_t format_version = kLldFormatVersion);

// The fewest simulated cylinders plan_lld_layout accepts for these
// parameters (what its refusal suggests). REQUIRES: the parameters other
// than simulated_cylinders are acceptable.
uint32_t lld_cylinders_needed(const DriveGeometry& g, uint64_t export_bytes, uint32_t block_bytes,
                              uint64_t segment_bytes, uint64_t nvram_bytes);

// The system area's tracks (LldLayout::system_tracks) as plan_lld_layout
// computes them with all of g.cylinders simulated (their sectors capped at
// 2^32 - 1, the most the planner accepts), for a caller that
// must know them before choosing simulated_cylinders. Exact for all
// cylinders; for fewer it is an upper bound: each checkpoint slot is sized
// for the segments the platters could hold (12 bytes a segment), so fewer
// cylinders can mean shorter slots (st19101, 64 MiB export: 3 tracks a
// slot on the 37 cylinders it needs, 6 on all 6962). The NVRAM's tracks do
// not depend on the cylinders. Throws as plan_lld_layout does for the
// parameters other than simulated_cylinders.
uint64_t lld_system_area_tracks(const DriveGeometry& g, uint64_t export_bytes,
                                uint32_t block_bytes, uint64_t segment_bytes,
                                uint64_t nvram_bytes);

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_LAYOUT_H_
