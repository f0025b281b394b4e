// walk_log_tree: the virtual log tree walked newest first (paper 001,
// section 3.2), from a root pointer (a log record's, or any request's last
// map sector). The walk itself: what to do with each sector is the caller's
// (recovery reads it from disk and refuses damage; the full scan looks it up
// among the sectors it found; vld-inspect notes what it cannot read).
//
// Newest first, the first version of a piece met is its newest: its older
// versions' children were adopted by it (Figure 3b), so a pointer to a piece
// already taken is dropped unvisited, and so is a second pointer to a seq
// already visited. The walk thus visits exactly the live map sectors of a
// whole tree.
//
// Thread-safety: a function of its arguments.
#ifndef VLD_CORE_VLD_LOG_WALK_H_
#define VLD_CORE_VLD_LOG_WALK_H_

#include <cstdint>
#include <optional>
#include <queue>
#include <unordered_set>
#include <vector>

#include "core/vld/map_sector.h"

namespace vld {

// A pointer the walk follows. parent_psn: the map sector holding it
// (nullopt: the root, named from outside the tree).
struct LogWalkStep {
  uint64_t seq = 0;
  uint32_t psn = 0;
  uint32_t piece = 0;  // as the pointer names it: may be out of range
  std::optional<uint32_t> parent_psn;
  bool operator<(const LogWalkStep& o) const { return seq < o.seq; }
};

// What the visitor found at a step: the map sector there (the walk takes it
// as its piece's version and follows its pointers), nothing (the walk goes
// on without it), or a reason to stop.
struct LogWalkVisit {
  const MapSector* sector = nullptr;
  bool stop = false;
};

// Calls visit(const LogWalkStep&) -> LogWalkVisit for each pointer followed,
// highest seq first. A sector returned must be the one the step names (its
// piece and seq), which the visitor checks.
template <class Visit>
void walk_log_tree(const LogPointer& root, uint32_t pieces, Visit&& visit) {
  std::priority_queue<LogWalkStep> frontier;
  std::vector<uint8_t> taken(pieces, 0);
  std::unordered_set<uint64_t> visited;
  frontier.push(LogWalkStep{root.seq, root.psn, root.piece, std::nullopt});
  while (!frontier.empty()) {
    const LogWalkStep step = frontier.top();
    frontier.pop();
    if (step.piece < pieces && taken[step.piece]) continue;  // an older version
    if (!visited.insert(step.seq).second) continue;
    const LogWalkVisit v = visit(step);
    if (v.stop) return;
    if (!v.sector) continue;
    if (step.piece < pieces) taken[step.piece] = 1;
    for (uint16_t i = 0; i < v.sector->pointer_count; ++i) {
      const LogPointer& p = v.sector->pointers[i];
      frontier.push(LogWalkStep{p.seq, p.psn, p.piece, step.psn});
    }
  }
}

}  // namespace vld

#endif  // VLD_CORE_VLD_LOG_WALK_H_
