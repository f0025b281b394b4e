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

// Layout facts recovery, VldDisk and vld-inspect share.
struct VldLayout {
  explicit VldLayout(const Superblock& sb)
      : geometry(sb.geometry),
        spt(sb.geometry.sectors_per_track),
        heads(sb.geometry.tracks_per_cylinder),
        cylinders(sb.simulated_cylinders),
        tracks(sb.simulated_cylinders * sb.geometry.tracks_per_cylinder),
        block_sectors(sb.block_bytes / kSectorBytes),
        blocks(sb.export_bytes / sb.block_bytes),
        pieces((sb.export_bytes / sb.block_bytes + kEntriesPerPiece - 1) / kEntriesPerPiece),
        platter_offset(sb.platter_offset) {}
  DriveGeometry geometry;
  uint32_t spt, heads, cylinders, tracks;
  uint32_t block_sectors;
  uint64_t blocks, pieces;
  uint64_t platter_offset;
  static constexpr uint32_t kRecordSlots = 2;  // psn 0 and 1, on system track 0
  uint64_t byte_offset(uint64_t psn) const { return platter_offset + psn * kSectorBytes; }

  // The blocks the platters hold however writes have fragmented the
  // tracks: every track but system track 0 and the repack reserve, each
  // with the whole blocks that fit after one sector of crumbs, less two map
  // sectors a piece (its live version and one retired). Creation checks
  // the export against it (check_vld_fillable); what is left beyond the
  // export bounds one request (VldDisk::max_atomic_write_bytes).
  uint64_t block_capacity() const {
    const uint64_t per_track = (spt - 1) / block_sectors;
    if (tracks <= 2 || per_track == 0) return 0;
    const uint64_t raw = (uint64_t{tracks} - 2) * per_track;
    const uint64_t map_blocks = (2 * pieces + block_sectors - 1) / block_sectors;
    return raw > map_blocks ? raw - map_blocks : 0;
  }
};

// `pieces` and the pieces of the logical blocks block_of(item) of `items`,
// ascending and each once: the map sectors that a group writing those
// blocks and rewriting those pieces touches. (A projection, not a
// std::views::transform: clang, which the sanitizer build uses, rejects
// libstdc++ 12's views.)
template <typename Items, typename BlockOf>
std::vector<uint32_t> touched_pieces(std::span<const uint32_t> pieces, const Items& items,
                                     BlockOf block_of) {
  std::vector<uint32_t> touched(pieces.begin(), pieces.end());
  for (const auto& item : items) touched.push_back(piece_of(block_of(item)));
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  return touched;
}

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_LAYOUT_H_
