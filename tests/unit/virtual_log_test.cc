// VirtualLog (core/vld/virtual_log.h): plan/commit on random workloads and on
// the adversarial hot/cold pattern. After every commit the tree must pass
// check(), and, independently of check(), a recovery-style walk over the
// pointers "written to disk" (what pointers() returned) from the newest map
// sector must reach the current version of every live piece.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/vld/map_sector.h"
#include "core/vld/virtual_log.h"

namespace vld {
namespace {

struct Written {
  uint32_t piece;
  uint64_t seq;
  std::vector<LogPointer> pointers;
};

class Harness {
 public:
  explicit Harness(uint32_t pieces) : log(pieces), cur_psn_(pieces, 0), cur_seq_(pieces, 0) {}

  // Plans, "writes" and commits one request touching `pieces` (distinct),
  // checking everything on the way.
  void write(const std::vector<uint32_t>& pieces) {
    SCOPED_TRACE("request " + std::to_string(requests_));
    ++requests_;
    const uint64_t first_seq = log.next_seq();
    std::vector<PlannedNode> group = log.plan(pieces);
    ASSERT_GE(group.size(), pieces.size());
    const size_t relays = group.size() - pieces.size();
    std::set<uint32_t> in_group;
    for (size_t i = 0; i < group.size(); ++i) {
      const PlannedNode& n = group[i];
      EXPECT_EQ(n.seq, first_seq + i);
      EXPECT_TRUE(in_group.insert(n.piece).second) << "piece " << n.piece << " twice in a group";
      EXPECT_EQ(n.prev_seq, cur_seq_[n.piece]);
      EXPECT_EQ(n.points_to_previous, i > 0);
      EXPECT_LE(n.adopt.size() + (n.points_to_previous ? 1 : 0), kMaxPointers);
      // Relays first, then the request's own pieces in order.
      if (i < relays) {
        EXPECT_TRUE(n.relay);
        EXPECT_NE(cur_seq_[n.piece], 0u) << "a relay is a copy of a live piece";
      } else {
        EXPECT_FALSE(n.relay);
        EXPECT_EQ(n.piece, pieces[i - relays]);
      }
      for (const ChildRef& c : n.adopt) {
        EXPECT_TRUE(log.live(c)) << "adopts a dead node";
        EXPECT_EQ(std::count_if(group.begin(), group.end(),
                                [&](const PlannedNode& g) { return g.piece == c.piece; }),
                  0)
            << "adopts a piece the group rewrites";
      }
    }
    relay_nodes_ += relays;
    if (relays > 0) ++relay_requests_;

    std::vector<uint32_t> psns(group.size());
    for (uint32_t& p : psns) p = next_psn_++;
    for (size_t i = 0; i < group.size(); ++i) {
      std::vector<LogPointer> ptrs = log.pointers(group, i, psns);
      EXPECT_LE(ptrs.size(), kMaxPointers);
      max_pointers_ = std::max(max_pointers_, ptrs.size());
      for (const LogPointer& p : ptrs) EXPECT_LT(p.seq, group[i].seq) << "pointer forward";
      if (i > 0) {
        ASSERT_FALSE(ptrs.empty());
        EXPECT_EQ(ptrs.front().psn, psns[i - 1]);
        EXPECT_EQ(ptrs.front().seq, group[i - 1].seq);
      }
      disk_[psns[i]] = Written{group[i].piece, group[i].seq, ptrs};
    }

    std::vector<uint32_t> expect_replaced;
    for (const PlannedNode& n : group)
      if (cur_seq_[n.piece] != 0) expect_replaced.push_back(cur_psn_[n.piece]);
    std::vector<uint32_t> replaced = log.commit(group, psns);
    EXPECT_EQ(replaced, expect_replaced);

    for (size_t i = 0; i < group.size(); ++i) {
      if (cur_seq_[group[i].piece] == 0) ++live_;
      cur_psn_[group[i].piece] = psns[i];
      cur_seq_[group[i].piece] = group[i].seq;
    }
    root_ = LogPointer{psns.back(), group.back().seq};
    EXPECT_EQ(log.next_seq(), group.back().seq + 1);
    ASSERT_TRUE(log.root().has_value());
    EXPECT_EQ(*log.root(), group.back().piece);
    EXPECT_FALSE(group.back().relay);
    EXPECT_EQ(log.live_nodes(), live_);
    for (const PlannedNode& n : group) {
      EXPECT_EQ(log.node(n.piece).psn, cur_psn_[n.piece]);
      EXPECT_EQ(log.node(n.piece).seq, cur_seq_[n.piece]);
    }
    const std::string why = log.check();
    ASSERT_EQ(why, "");
    walk();
  }

  // Clean recovery's walk (core/vld/recovery.cc), re-derived: newest seq first;
  // the first version met of a piece is its newest, and only its pointers
  // are followed. Every live piece must come out at its current seq.
  void walk() {
    std::priority_queue<std::pair<uint64_t, uint32_t>> frontier;
    std::set<uint64_t> visited;
    std::vector<uint64_t> got(cur_seq_.size(), 0);
    frontier.push({root_.seq, root_.psn});
    while (!frontier.empty()) {
      auto [seq, psn] = frontier.top();
      frontier.pop();
      if (!visited.insert(seq).second) continue;
      auto it = disk_.find(psn);
      ASSERT_NE(it, disk_.end());
      ASSERT_EQ(it->second.seq, seq);  // psns are never reused here
      if (got[it->second.piece] != 0) continue;
      got[it->second.piece] = seq;
      for (const LogPointer& p : it->second.pointers) frontier.push({p.seq, p.psn});
    }
    for (uint32_t p = 0; p < cur_seq_.size(); ++p)
      ASSERT_EQ(got[p], cur_seq_[p]) << "piece " << p << " lost by the walk";
  }

  VirtualLog log;
  uint64_t relay_nodes() const { return relay_nodes_; }
  uint64_t relay_requests() const { return relay_requests_; }
  size_t max_pointers() const { return max_pointers_; }
  uint64_t requests() const { return requests_; }

 private:
  std::vector<uint32_t> cur_psn_;
  std::vector<uint64_t> cur_seq_;
  std::unordered_map<uint32_t, Written> disk_;
  LogPointer root_;
  uint32_t next_psn_ = 1000;
  uint64_t live_ = 0;
  uint64_t relay_nodes_ = 0, relay_requests_ = 0, requests_ = 0;
  size_t max_pointers_ = 0;
};

TEST(VirtualLog, EmptyLogChecksAndFirstWrite) {
  Harness h(8);
  EXPECT_EQ(h.log.check(), "");
  EXPECT_FALSE(h.log.root().has_value());
  EXPECT_EQ(h.log.next_seq(), 1u);
  auto g = h.log.plan(std::vector<uint32_t>{5});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].piece, 5u);
  EXPECT_EQ(g[0].seq, 1u);
  EXPECT_EQ(g[0].prev_seq, 0u);
  EXPECT_TRUE(g[0].adopt.empty());
  h.write({5});
  h.write({5});  // replaces itself: adopts nothing, replaces the first psn
  h.write({2, 7});
  EXPECT_EQ(h.log.live_nodes(), 3u);
}

TEST(VirtualLog, CheckCatchesBrokenTrees) {
  VirtualLog log(4);
  log.set_node(0, 10, 5, {ChildRef{1, 3}});
  log.set_node(1, 11, 3, {});
  log.set_node(2, 12, 4, {});  // nobody points to it
  log.set_root(0);
  log.set_next_seq(6);
  EXPECT_NE(log.check(), "");
  log.set_node(0, 10, 5, {ChildRef{1, 3}, ChildRef{2, 4}});
  EXPECT_EQ(log.check(), "");
  log.set_node(1, 11, 3, {ChildRef{2, 4}});  // 2 reached twice, and forward in time
  EXPECT_NE(log.check(), "");
  log.set_node(1, 11, 3, {ChildRef{2, 2}});  // a dead pointer is ignored
  EXPECT_EQ(log.check(), "");
  log.set_root(std::nullopt);
  EXPECT_NE(log.check(), "");  // live nodes, no root
}

// Random requests of one piece, many pieces with a hot set.
TEST(VirtualLog, RandomSinglePieceRequestsKeepTheTree) {
  for (uint32_t pieces : {5u, 64u, 400u}) {
    SCOPED_TRACE("pieces " + std::to_string(pieces));
    Harness h(pieces);
    std::mt19937_64 rng(pieces);
    std::uniform_int_distribution<uint32_t> any(0, pieces - 1);
    std::uniform_int_distribution<uint32_t> hot(0, std::max(1u, pieces / 16) - 1);
    for (int i = 0; i < 3000; ++i) {
      uint32_t p = (rng() % 4 == 0) ? any(rng) : hot(rng);
      h.write({p});
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_LE(h.max_pointers(), kMaxPointers);
    std::printf("single-piece, %u pieces: %llu requests, %llu with relays (%llu relay nodes), "
                "max pointers %zu\n",
                pieces, static_cast<unsigned long long>(h.requests()),
                static_cast<unsigned long long>(h.relay_requests()),
                static_cast<unsigned long long>(h.relay_nodes()), h.max_pointers());
  }
}

TEST(VirtualLog, RandomMultiPieceGroupsKeepTheTree) {
  for (uint32_t pieces : {12u, 200u}) {
    SCOPED_TRACE("pieces " + std::to_string(pieces));
    Harness h(pieces);
    std::mt19937_64 rng(1000 + pieces);
    for (int i = 0; i < 2000; ++i) {
      const uint32_t k = 1 + static_cast<uint32_t>(rng() % std::min<uint32_t>(pieces, 20));
      std::vector<uint32_t> all(pieces);
      for (uint32_t p = 0; p < pieces; ++p) all[p] = p;
      std::shuffle(all.begin(), all.end(), rng);
      std::vector<uint32_t> req(all.begin(), all.begin() + k);
      if (rng() % 2) std::sort(req.begin(), req.end());
      h.write(req);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_LE(h.max_pointers(), kMaxPointers);
    std::printf("multi-piece, %u pieces: %llu requests, %llu with relays (%llu relay nodes), "
                "max pointers %zu\n",
                pieces, static_cast<unsigned long long>(h.requests()),
                static_cast<unsigned long long>(h.relay_requests()),
                static_cast<unsigned long long>(h.relay_nodes()), h.max_pointers());
  }
}

// Hot piece H, then a never-written cold piece C_i, then H, then C_{i+1},
// ...: each new H adopts the previous root (the last C), so without relays
// H would collect one more pointer per round, without bound.
TEST(VirtualLog, HotColdPatternRelaysAndStaysBounded) {
  constexpr uint32_t kRounds = 600;
  Harness h(kRounds + 1);
  const uint32_t hot = 0;
  uint64_t first_relay_round = 0;
  for (uint32_t i = 0; i < kRounds; ++i) {
    const uint64_t before = h.relay_nodes();
    h.write({hot});
    if (::testing::Test::HasFatalFailure()) return;
    h.write({1 + i});
    if (::testing::Test::HasFatalFailure()) return;
    if (before == 0 && h.relay_nodes() > 0) first_relay_round = i;
  }
  std::printf("hot/cold, %u rounds: %llu requests, %llu with relays (%llu relay nodes), first in "
              "round %llu, max pointers %zu\n",
              kRounds, static_cast<unsigned long long>(h.requests()),
              static_cast<unsigned long long>(h.relay_requests()),
              static_cast<unsigned long long>(h.relay_nodes()),
              static_cast<unsigned long long>(first_relay_round), h.max_pointers());
  EXPECT_GT(h.relay_nodes(), 0u);
  EXPECT_LE(h.max_pointers(), kMaxPointers);
  // H's pointers: at most kMaxPointers on disk, and it cannot hold all the
  // cold pieces, so relays did the rest; the walk found all of them.
  EXPECT_LE(h.log.node(hot).children.size(), kMaxPointers);
  EXPECT_EQ(h.log.live_nodes(), kRounds + 1);
  // Relays are rare: at most one per request, amortised far less.
  EXPECT_LE(h.relay_nodes(), h.requests());
  // The 16th cold piece is the first H cannot hold beside the previous root.
  EXPECT_GE(first_relay_round, kMaxPointers - 2);
  EXPECT_LE(first_relay_round, kMaxPointers + 1);
}

}  // namespace
}  // namespace vld
