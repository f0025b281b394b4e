// VldLayout: where mode=vld keeps things on the platters, derived from the
// superblock (core/image_format.h): the record slots on system track 0, the
// blocks and pieces of the map, and the byte offset of each sector.
//
// Invariants: tracks == cylinders * heads; pieces == ceil(blocks /
// kEntriesPerPiece); psn 0 and 1 (the record slots) never hold a map sector
// or data.
//
// Thread-safety: plain values.
#ifndef VLD_CORE_VLD_VLD_LAYOUT_H_
#define VLD_CORE_VLD_VLD_LAYOUT_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/image_format.h"
#include "core/vld/map_sector.h"

namespace vld {

// Layout facts recovery, VldDisk and vld-inspect share. Tracks need not
// hold the same number of sectors (a zoned drive, geometry/drive_geometry.h):
// every question about a track's sectors goes through the helpers below,
// asked once per track, not once per sector.
struct VldLayout {
  explicit VldLayout(const Superblock& sb)
      : geometry(sb.geometry),
        heads(sb.geometry.tracks_per_cylinder),
        cylinders(sb.simulated_cylinders),
        tracks(sb.simulated_cylinders * sb.geometry.tracks_per_cylinder),
        block_sectors(sb.block_bytes / kSectorBytes),
        blocks(sb.export_bytes / sb.block_bytes),
        pieces((sb.export_bytes / sb.block_bytes + kEntriesPerPiece - 1) / kEntriesPerPiece),
        platter_offset(sb.platter_offset) {}
  DriveGeometry geometry;
  uint32_t heads, cylinders, tracks;
  uint32_t block_sectors;
  uint64_t blocks, pieces;
  uint64_t platter_offset;
  static constexpr uint32_t kRecordSlots = 2;  // psn 0 and 1, on system track 0
  uint64_t byte_offset(uint64_t psn) const { return platter_offset + psn * kSectorBytes; }

  // Sectors of track t, and the PSN of its sector 0. REQUIRES: t < tracks.
  uint32_t track_sectors(uint32_t t) const { return geometry.track_sectors(t); }
  uint64_t track_first_psn(uint32_t t) const { return geometry.track_first_psn(t); }
  // The track a PSN is on, and its sector there. REQUIRES: psn < platter_sectors().
  uint32_t track_of(uint64_t psn) const { return geometry.track_of_psn(psn); }
  uint32_t sector_of(uint64_t psn) const {
    return static_cast<uint32_t>(psn - track_first_psn(track_of(psn)));
  }
  // Every sector of the simulated cylinders: PSNs [0, platter_sectors()).
  uint64_t platter_sectors() const { return geometry.sectors_in_cylinders(cylinders); }
  // Whether psn is on system track 0 (log records, never a block or map sector).
  bool on_system_track(uint64_t psn) const { return psn < track_sectors(0); }
  // Sectors of each track, for FreeSpaceMap.
  std::vector<uint32_t> track_sizes() const;
  // The most sectors any track holds (the outermost zone's).
  uint32_t max_track_sectors() const { return geometry.max_sectors_per_track(); }

  // The blocks the platters hold however writes have fragmented the
  // tracks: every track but system track 0 and the repack reserve, each
  // with the whole blocks that fit after one sector of crumbs, less two map
  // sectors a piece (its live version and one retired). The reserve may be
  // any track, so the count leaves out the track holding the most. Creation
  // checks the export against it (check_vld_fillable); what is left beyond
  // the export bounds one request (VldDisk::max_atomic_write_bytes).
  uint64_t block_capacity() const;
};

// `pieces` and the pieces of the logical blocks block_of(item) of `items`,
// ascending and each once: the map sectors that a group writing those
// blocks and rewriting those pieces touches. (A projection, not a
// std::views::transform: clang, which the sanitizer build uses, rejects
// libstdc++ 12's views.)
// Replaces *touched's contents (reusing its buffer).
template <typename Items, typename BlockOf>
void touched_pieces(std::span<const uint32_t> pieces, const Items& items, BlockOf block_of,
                    std::vector<uint32_t>* touched) {
  touched->assign(pieces.begin(), pieces.end());
  for (const auto& item : items) touched->push_back(piece_of(block_of(item)));
  std::sort(touched->begin(), touched->end());
  touched->erase(std::unique(touched->begin(), touched->end()), touched->end());
}
template <typename Items, typename BlockOf>
std::vector<uint32_t> touched_pieces(std::span<const uint32_t> pieces, const Items& items,
                                     BlockOf block_of) {
  std::vector<uint32_t> touched;
  touched_pieces(pieces, items, block_of, &touched);
  return touched;
}

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_LAYOUT_H_
