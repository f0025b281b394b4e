#include "core/vld/virtual_log.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/util/error.h"

namespace vld {

bool VirtualLog::has_live_children(uint32_t piece) const {
  for (const ChildRef& c : nodes_[piece].children)
    if (live(c)) return true;
  return false;
}

std::optional<uint32_t> VirtualLog::find_leaf(std::span<const uint32_t> exclude_sorted) const {
  // Rare (only when a group overflows): a linear scan is fine.
  for (uint32_t p = 0; p < nodes_.size(); ++p) {
    if (nodes_[p].seq == 0 || std::binary_search(exclude_sorted.begin(), exclude_sorted.end(), p))
      continue;
    if (!has_live_children(p)) return p;
  }
  return std::nullopt;
}

void VirtualLog::plan(std::span<const uint32_t> pieces, std::vector<PlannedNode>* group) const {
  std::vector<uint32_t>& members = scratch_.members;
  std::vector<uint32_t>& relays = scratch_.relays;
  std::vector<ChildRef>& adopt = scratch_.adopt;
  members.assign(pieces.begin(), pieces.end());
  relays.clear();
  adopt.clear();
  auto in_group = [&](uint32_t p) {
    return std::find(members.begin(), members.end(), p) != members.end() ||
           std::find(relays.begin(), relays.end(), p) != relays.end();
  };

  // Everything the group must adopt: the old root and the live children of
  // every version it replaces, less the pieces it rewrites itself.
  auto add_children_of = [&](uint32_t p) {
    for (const ChildRef& c : nodes_[p].children)
      if (live(c) && !in_group(c.piece)) adopt.push_back(c);
  };
  for (uint32_t p : members) add_children_of(p);
  if (root_ && !in_group(*root_)) adopt.push_back(ChildRef{*root_, nodes_[*root_].seq});
  auto prune = [&] {
    adopt.erase(std::remove_if(adopt.begin(), adopt.end(),
                               [&](const ChildRef& c) { return in_group(c.piece); }),
                adopt.end());
  };

  // Member i (in seq order) points to member i-1 plus adopted nodes.
  auto capacity = [&] {
    size_t n = members.size() + relays.size();
    return n * kMaxPointers - (n - 1);
  };
  while (adopt.size() > capacity()) {
    // A leaf among those to adopt is the cheapest relay: it leaves the list.
    std::optional<uint32_t> leaf;
    for (const ChildRef& c : adopt) {
      if (!has_live_children(c.piece)) {
        leaf = c.piece;
        break;
      }
    }
    if (!leaf) {
      std::vector<uint32_t>& exclude = scratch_.exclude;
      exclude.assign(members.begin(), members.end());
      exclude.insert(exclude.end(), relays.begin(), relays.end());
      std::sort(exclude.begin(), exclude.end());
      leaf = find_leaf(exclude);
    }
    if (!leaf) throw Error("virtual log: no leaf to relay through (bug)", EIO);
    relays.push_back(*leaf);
    add_children_of(*leaf);  // a leaf has none; kept for clarity
    prune();
  }

  lay_out(group);
}

void VirtualLog::lay_out(std::vector<PlannedNode>* group) const {
  const std::vector<uint32_t>& members = scratch_.members;
  const std::vector<uint32_t>& relays = scratch_.relays;
  const std::vector<ChildRef>& adopt = scratch_.adopt;
  // Relays first: they only adopt, the request's own pieces follow, the
  // last member is the root. Nodes are overwritten in place: their adopt
  // lists keep their buffers.
  group->resize(relays.size() + members.size());
  uint64_t seq = next_seq_;
  size_t k = 0;
  auto add = [&](uint32_t p, bool relay) {
    PlannedNode& n = (*group)[k++];
    n.piece = p;
    n.seq = seq++;
    n.prev_seq = nodes_[p].seq;
    n.relay = relay;
    n.adopt.clear();
    n.points_to_previous = false;
  };
  for (uint32_t p : relays) add(p, true);
  for (uint32_t p : members) add(p, false);
  // Fill from the root down so the newest nodes carry the pointers.
  size_t next = 0;
  for (size_t i = group->size(); i-- > 0;) {
    PlannedNode& n = (*group)[i];
    n.points_to_previous = i > 0;
    size_t room = kMaxPointers - (n.points_to_previous ? 1 : 0);
    while (room > 0 && next < adopt.size()) {
      n.adopt.push_back(adopt[next++]);
      --room;
    }
  }
  if (next != adopt.size()) throw Error("virtual log: group overflow (bug)", EIO);
  assert(group->empty() || group->front().seq == next_seq_);  // seqs continue the log's
}

size_t VirtualLog::pointers(std::span<const PlannedNode> group, size_t i,
                            std::span<const uint32_t> member_psns,
                            std::span<LogPointer, kMaxPointers> out) const {
  size_t n = 0;
  const PlannedNode& node = group[i];
  assert(node.adopt.size() + (node.points_to_previous ? 1 : 0) <= kMaxPointers);  // plan's bound
  if (node.points_to_previous)
    out[n++] = LogPointer{member_psns[i - 1], group[i - 1].seq, group[i - 1].piece};
  for (const ChildRef& c : node.adopt) out[n++] = LogPointer{nodes_[c.piece].psn, c.seq, c.piece};
  return n;
}

void VirtualLog::commit(std::span<const PlannedNode> group, std::span<const uint32_t> member_psns,
                        std::vector<uint32_t>* replaced) {
  assert(group.size() == member_psns.size());
  for (size_t i = 0; i < group.size(); ++i) {
    const PlannedNode& n = group[i];
    LogNode& node = nodes_[n.piece];
    // Seqs strictly increase, within the group and over the log; a member
    // replaces exactly the version it was planned against.
    assert(n.seq >= next_seq_ && (i == 0 || n.seq == group[i - 1].seq + 1));
    assert(n.prev_seq == node.seq);
    assert(n.adopt.size() + (n.points_to_previous ? 1 : 0) <= kMaxPointers);
    if (node.seq != 0) replaced->push_back(node.psn);
    else ++live_nodes_;
    relist(n.piece, member_psns[i], n.seq);
    node.psn = member_psns[i];
    node.seq = n.seq;
    node.children = n.adopt;
    if (n.points_to_previous) node.children.push_back(ChildRef{group[i - 1].piece, group[i - 1].seq});
  }
  if (!group.empty()) {
    root_ = group.back().piece;
    next_seq_ = group.back().seq + 1;
  }
}

void VirtualLog::set_node(uint32_t piece, uint32_t psn, uint64_t seq,
                          std::vector<ChildRef> children) {
  relist(piece, psn, seq);
  LogNode& node = nodes_[piece];
  if (node.seq == 0 && seq != 0) ++live_nodes_;
  if (node.seq != 0 && seq == 0) --live_nodes_;
  node.psn = psn;
  node.seq = seq;
  node.children = std::move(children);
}

void VirtualLog::relist(uint32_t piece, uint32_t psn, uint64_t seq) {
  if (!tracked_) return;
  const LogNode& node = nodes_[piece];
  if (node.seq != 0) on_track_.remove(geometry_.track_of_psn(node.psn), piece);
  if (seq != 0) on_track_.add(geometry_.track_of_psn(psn), piece);
}

std::string VirtualLog::check() const {
  if (!root_) return live_nodes_ == 0 ? check_track_lists() : "live nodes but no root";
  std::vector<uint8_t> seen(nodes_.size(), 0);
  std::vector<uint32_t> stack{*root_};
  uint64_t reached = 0;
  while (!stack.empty()) {
    uint32_t p = stack.back();
    stack.pop_back();
    if (seen[p]++) return "piece " + std::to_string(p) + " reached twice";
    ++reached;
    for (const ChildRef& c : nodes_[p].children) {
      if (!live(c)) continue;
      if (c.seq >= nodes_[p].seq) return "pointer forward in time";
      stack.push_back(c.piece);
    }
  }
  if (reached != live_nodes_)
    return std::to_string(live_nodes_ - reached) + " live nodes unreachable from the root";
  return check_track_lists();
}

std::string VirtualLog::check_track_lists() const {
  if (!tracked_) return "";
  std::string why = on_track_.check([this](uint32_t p) -> std::optional<uint32_t> {
    if (nodes_[p].seq == 0) return std::nullopt;
    return geometry_.track_of_psn(nodes_[p].psn);
  });
  return why.empty() ? "" : "map sectors per track: " + why;
}

}  // namespace vld
