// VirtualLog: the in-memory image of the on-disk virtual log tree.
//
// Every piece of the indirection map that has ever been written has one live
// map sector (its newest version); the tree of back pointers between live map
// sectors is rooted at the log tail, the newest map sector (paper 001,
// section 3.2). Invariant: every live node other than the root has exactly
// one live parent, a newer live node holding a pointer (psn, seq) to it.
//
// A request writes a group of map sectors with consecutive seqs; the last is
// the new root. When a piece's new version replaces its old one, the new
// version adopts the old one's live children (Figure 3b), so the old sector
// can be recycled without cutting anything off; the previous root is adopted
// too. A node holds at most kMaxPointers pointers: when a group cannot hold
// all it must adopt, it grows by relays, fresh copies of leaf pieces (live
// nodes with no live children) that adopt the overflow; a leaf has nothing
// to hand on, so superseding it is free of consequences.
//
// Pointers to nodes that have since been superseded are dead: a child
// reference is live only while the child piece's current seq is the one
// recorded.
//
// plan, pointers and commit fill buffers their caller keeps (and plan some
// of its own), so that a request's group costs no heap allocation once the
// buffers have grown to the largest group seen.
//
// Thread-safety: not thread-safe, not even plan() const (its scratch
// buffers); owned by VldDisk under the controller lock.
#ifndef VLD_CORE_VLD_VIRTUAL_LOG_H_
#define VLD_CORE_VLD_VIRTUAL_LOG_H_

#include <array>
#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <span>
#include <utility>
#include <vector>

#include "core/vld/map_sector.h"
#include "core/vld/track_lists.h"
#include "geometry/drive_geometry.h"

namespace vld {

struct ChildRef {
  uint32_t piece = 0;
  uint64_t seq = 0;
};

struct LogNode {
  uint32_t psn = 0;
  uint64_t seq = 0;  // 0: the piece has no map sector
  std::vector<ChildRef> children;
};

// One map sector of a planned group.
struct PlannedNode {
  uint32_t piece = 0;
  uint64_t seq = 0;
  uint64_t prev_seq = 0;
  bool relay = false;              // a copy written only to adopt pointers
  std::vector<ChildRef> adopt;     // older live nodes it points to
  bool points_to_previous = false; // also points to the group member before it
};

class VirtualLog {
 public:
  // Without tracks, it keeps no track lists.
  explicit VirtualLog(uint32_t pieces) : VirtualLog(pieces, 0, DriveGeometry{}) {}
  // With the tracks and the geometry that numbers their sectors, it also
  // keeps which pieces' live map sectors lie on each track (pieces_on).
  VirtualLog(uint32_t pieces, uint32_t tracks, DriveGeometry geometry)
      : nodes_(pieces),
        geometry_(std::move(geometry)),
        tracked_(tracks != 0),
        on_track_(tracks, tracks ? pieces : 0) {}

  uint32_t pieces() const { return static_cast<uint32_t>(nodes_.size()); }
  const LogNode& node(uint32_t piece) const { return nodes_[piece]; }
  bool live(const ChildRef& c) const { return nodes_[c.piece].seq == c.seq && c.seq != 0; }
  std::optional<uint32_t> root() const { return root_; }
  uint64_t next_seq() const { return next_seq_; }
  uint64_t live_nodes() const { return live_nodes_; }
  // Appends the pieces whose live map sector is on `track`, in no order.
  // REQUIRES: constructed with tracks.
  void pieces_on(uint32_t track, std::vector<uint32_t>* out) const {
    assert(tracked_);
    on_track_.items(track, out);
  }
  const TrackLists& track_lists() const { return on_track_; }

  // The group of map sectors a request touching `pieces` (distinct) writes,
  // relays included, with seqs from next_seq(); the last one is the new
  // root. Replaces *group's contents, reusing its nodes' buffers.
  void plan(std::span<const uint32_t> pieces, std::vector<PlannedNode>* group) const;
  std::vector<PlannedNode> plan(std::span<const uint32_t> pieces) const {
    std::vector<PlannedNode> group;
    plan(pieces, &group);
    return group;
  }

  // The pointers a planned node carries on disk, given where the group's
  // members were placed (member_psns[i] for group[i]): written to out,
  // their number returned.
  size_t pointers(std::span<const PlannedNode> group, size_t i,
                  std::span<const uint32_t> member_psns,
                  std::span<LogPointer, kMaxPointers> out) const;
  std::vector<LogPointer> pointers(std::span<const PlannedNode> group, size_t i,
                                   std::span<const uint32_t> member_psns) const {
    std::array<LogPointer, kMaxPointers> out;
    return std::vector<LogPointer>(out.begin(), out.begin() + pointers(group, i, member_psns, out));
  }

  // Installs the group as written. Appends to *replaced the psns of the
  // versions it replaced: they stay on disk until recycling is safe
  // (VldDisk decides).
  void commit(std::span<const PlannedNode> group, std::span<const uint32_t> member_psns,
              std::vector<uint32_t>* replaced);
  std::vector<uint32_t> commit(std::span<const PlannedNode> group,
                               std::span<const uint32_t> member_psns) {
    std::vector<uint32_t> replaced;
    commit(group, member_psns, &replaced);
    return replaced;
  }

  // Recovery: set state directly.
  void set_node(uint32_t piece, uint32_t psn, uint64_t seq, std::vector<ChildRef> children);
  void set_root(std::optional<uint32_t> piece) { root_ = piece; }
  void set_next_seq(uint64_t s) { next_seq_ = s; }

  // Debug check of the invariant: every live node reachable from the root
  // over live pointers exactly once. Returns "" or what is wrong.
  std::string check() const;
  // The same for pieces_on's lists: part of check().
  std::string check_track_lists() const;

 private:
  bool has_live_children(uint32_t piece) const;
  // plan()'s last step: *group from scratch_'s relays, members and nodes
  // to adopt.
  void lay_out(std::vector<PlannedNode>* group) const;
  std::optional<uint32_t> find_leaf(std::span<const uint32_t> exclude_sorted) const;

  // Moves a piece's entry in on_track_ from its node's psn to `psn`
  // (seq 0: on no track), before the node changes.
  void relist(uint32_t piece, uint32_t psn, uint64_t seq);

  std::vector<LogNode> nodes_;
  DriveGeometry geometry_;  // numbers the psns of on_track_
  bool tracked_;            // false: no on_track_
  TrackLists on_track_;    // pieces by the track of their live map sector
  std::optional<uint32_t> root_;
  uint64_t next_seq_ = 1;
  uint64_t live_nodes_ = 0;
  // plan()'s working lists, kept between calls (see the thread contract).
  struct PlanScratch {
    std::vector<uint32_t> members, relays, exclude;
    std::vector<ChildRef> adopt;
  };
  mutable PlanScratch scratch_;
};

}  // namespace vld

#endif  // VLD_CORE_VLD_VIRTUAL_LOG_H_
