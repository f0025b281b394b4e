// walk_tree: the log record's tree as far as it can be read, walked
// independently of recover(), so that a map sector that fails its MAC is
// named (recover() refuses the image, and older cores dropped the piece
// silently).
//
// It walks as recover() walks (newest first; a pointer to a piece already
// met is dropped unread), but notes what it cannot read instead of stopping
// or dropping it: in a consistent image every pointer the walk follows leads
// to the live version of its piece (nothing the record's tree reaches is
// recycled before the next record), so one that does not authenticate, or
// holds another seq, is damage, and the pieces below it are lost.
//
// Invariants of a TreeWalk: map has one entry per logical block and nodes
// one per piece (unmapped / seq 0 where the walk did not reach); every
// problem is {"kind", "message", "psn", "piece", "seq"}.
//
// Thread-safety: a function of its arguments (reads the store).
#ifndef VLD_TOOLS_INSPECT_TREE_WALK_H_
#define VLD_TOOLS_INSPECT_TREE_WALK_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/image_format.h"
#include "core/store/backing_store.h"
#include "core/vld/map_sector.h"
#include "core/vld/virtual_log.h"

namespace vld::inspect {

struct TreeWalk {
  std::vector<MapEntry> map;   // per logical block
  std::vector<LogNode> nodes;  // per piece (psn, seq; no children)
  uint64_t walked = 0;         // map sectors read
  nlohmann::json problems = nlohmann::json::array();
};

TreeWalk walk_tree(BackingStore& store, const Superblock& sb, const LogRecord& record);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_TREE_WALK_H_
