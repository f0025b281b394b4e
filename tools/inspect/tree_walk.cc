#include "tools/inspect/tree_walk.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "core/vld/log_walk.h"
#include "core/vld/recovery.h"

namespace vld::inspect {

TreeWalk walk_tree(BackingStore& store, const Superblock& sb, const LogRecord& record) {
  const VldLayout layout(sb);
  const uint64_t sectors = layout.platter_sectors();
  TreeWalk walk;
  walk.map.assign(layout.blocks, MapEntry{});
  walk.nodes.assign(layout.pieces, LogNode{});
  if (!record.has_root) return walk;
  auto problem = [&](const char* kind, const std::string& message, const LogWalkStep& step) {
    walk.problems.push_back(
        {{"kind", kind}, {"message", message}, {"psn", step.psn}, {"piece", step.piece}, {"seq", step.seq}});
  };
  std::optional<MapSector> sector;  // the sector the walk is at
  walk_log_tree(record.root, static_cast<uint32_t>(layout.pieces), [&](const LogWalkStep& step) {
    const std::string from = !step.parent_psn
                                 ? std::string("the log record (it is the log tail)")
                                 : "the map sector at psn " + std::to_string(*step.parent_psn);
    if (step.piece >= layout.pieces) {
      problem("map_tree", "a pointer in " + from + " names piece " + std::to_string(step.piece) +
                              ", beyond the map's " + std::to_string(layout.pieces) + " pieces", step);
      return LogWalkVisit{};
    }
    const uint64_t first = uint64_t{step.piece} * kEntriesPerPiece;
    const std::string what =
        "the map sector of piece " + std::to_string(step.piece) + " (blocks " +
        std::to_string(first) + ".." +
        std::to_string(std::min<uint64_t>(first + kEntriesPerPiece, layout.blocks) - 1) + ", seq " +
        std::to_string(step.seq) + ") at psn " + std::to_string(step.psn) + ", pointed to by " + from;
    const std::string lost = ": recovery cannot locate its blocks nor any piece only it leads to";
    if (layout.on_system_track(step.psn) || step.psn >= sectors) {
      problem("map_tree", what + ", lies off the platters' map area" + lost, step);
      return LogWalkVisit{};
    }
    SectorBytes bytes;
    store.read(layout.byte_offset(step.psn), std::as_writable_bytes(std::span(bytes)));
    ++walk.walked;
    sector = decode_map_sector(bytes.data(), sb.secret);
    if (!sector) {
      const bool magic = std::memcmp(bytes.data(), "VLMS", 4) == 0;
      problem("map_sector",
              what + (magic ? ", fails its MAC (damaged)" : ", is not a map sector (overwritten or damaged)") + lost,
              step);
      return LogWalkVisit{};
    }
    if (sector->seq != step.seq || sector->piece != step.piece) {
      problem("map_sector",
              what + ", holds piece " + std::to_string(sector->piece) + " seq " +
                  std::to_string(sector->seq) + " instead (recycled while still reachable)" + lost,
              step);
      return LogWalkVisit{};
    }
    walk.nodes[step.piece].psn = step.psn;
    walk.nodes[step.piece].seq = step.seq;
    for (uint32_t i = 0; i < kEntriesPerPiece; ++i)
      if (first + i < layout.blocks) walk.map[first + i] = sector->entries[i];
    return LogWalkVisit{&*sector};
  });
  return walk;
}

}  // namespace vld::inspect
