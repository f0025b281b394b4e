// Compactor: which track to empty next, in idle time (paper 001, sections
// 2.3 and 4.2).
//
// Eager writing slows down as tracks crowd: the head waits longer for a free
// run (model (2)-(4)). Filling *empty* tracks to a threshold instead keeps
// the locate time near model (5), provided something makes empty tracks. The
// compactor does, in idle time: it reads a track and eager-writes its live
// blocks into the holes of other tracks that hold data (hole-plugging, never
// into an empty track), leaving the track empty. VldDisk does the moving
// (VldDisk::idle_step); this class only chooses.
//
// The paper chose victims at random and left the policy open. Policies:
//   random        uniformly among the tracks that qualify (the paper's)
//   fewest-live   the track with the fewest used sectors: the fewest moves
//                 per empty track made (greedy, as LFS's greedy cleaner)
//   cost-benefit  LFS's (1 - u) * age / (1 + u): free space gained per
//                 sector moved, weighted by how long the track's data has
//                 stayed put (cold data, once packed, stays packed)
// A track qualifies if it holds data, has at least one block's worth of
// free sectors (emptying a full track gains nothing), is used to at most
// kMaxVictimUse, and its used sectors fit into the block-sized holes of the
// other tracks. Every move leaves one fewer track holding data, so
// compaction always ends.
//
// When to work (docs/compaction.md section 2a): compaction must never make
// the next request slower than no idle work at all. VldDisk starts a step
// only if the idle period is expected to outlast it (IdleGapPredictor),
// and a victim only if the period is expected to outlast the whole track:
// read, every move, and the record that frees the old copies. A track left
// half-emptied when a burst comes is the worst of both: kept out of
// placement, its moved blocks holding holes twice until the record
// (docs/compaction.md, Figure 11). CompactionCosts predicts those costs
// from the steps seen so far.
//
// Thread-safety: not thread-safe; owned by VldDisk under the controller lock.
#ifndef VLD_CORE_VLD_COMPACTOR_H_
#define VLD_CORE_VLD_COMPACTOR_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>

#include "geometry/sim_time.h"

namespace vld {

enum class CompactionPolicy { kRandom, kFewestLive, kCostBenefit };

std::optional<CompactionPolicy> parse_compaction_policy(std::string_view name);
const char* policy_name(CompactionPolicy p);

struct CompactorOptions {
  bool enabled = true;                                    // compactor=on|off
  CompactionPolicy policy = CompactionPolicy::kFewestLive; // compactor_policy=
  uint64_t seed = 0;                                      // seed= (random policy)
};

// A track beyond this fraction used is not worth emptying: its moves cost
// more than the writes its empty track then takes at a 75% fill.
inline constexpr double kMaxVictimUse = 0.9;

// One track of the region being compacted, as VldDisk sees it now.
struct TrackCensus {
  uint32_t track = 0;
  uint32_t sectors = 0;        // the track's (its zone's sectors per track)
  uint32_t used_sectors = 0;   // not free (live, or waiting to be freed)
  uint32_t block_holes = 0;    // blocks that fit into its free runs
  SimTime last_write{};        // when data was last placed on it
  bool may_be_victim = true;   // false: the fill track
};

struct CompactorStats {
  uint64_t tracks_compacted = 0;
  uint64_t tracks_abandoned = 0;  // a move found no hole: the rest stays
  uint64_t blocks_moved = 0;
  uint64_t map_sectors_moved = 0; // live map sectors rewritten off a victim
  uint64_t steps = 0;
  SimDuration busy{};             // simulated time spent compacting
  // Steps not started because the idle period was not expected to outlast
  // them, and victims closed by a record before they were empty (the rest
  // of a track whose moves took longer than predicted; chosen again later).
  uint64_t steps_declined = 0;
  uint64_t tracks_cut_short = 0;
};

// The durations of one kind of step, as seen lately. Before any is seen,
// `prior`: an upper bound from the drive's geometry.
class StepCosts {
 public:
  static constexpr size_t kHistory = 32;
  explicit StepCosts(SimDuration prior = {}) : prior_(prior) {}
  void observe(SimDuration d);
  bool empty() const { return seen_.empty(); }
  SimDuration mean() const;
  SimDuration max() const;

 private:
  std::deque<SimDuration> seen_;  // the last kHistory, oldest first
  SimDuration prior_;
};

// What compaction's steps cost (simulated), to decide whether one fits in
// the expected idle time.
struct CompactionCosts {
  StepCosts read_track;  // one revolution and the seek to it
  StepCosts move;        // one block or map sector hole-plugged
  StepCosts record;      // the log record that ends a victim (system track)
  StepCosts repack;      // a whole repack step
  // One-block client writes (mechanical time: locate and transfer): placed
  // as a move is, so before the first move they stand in for moves.
  StepCosts client_write;
  // Priors, upper bounds from the geometry: a full-stroke seek and one
  // revolution per platter pass (a move writes a data block and a map
  // sector; a repack reads, writes, and may write a record).
  static CompactionCosts from_drive(SimDuration revolution, SimDuration full_seek);
  // A move's mean and worst cost: the moves seen, else the one-block
  // writes seen (moves plug holes near the head as writes do), else the prior.
  SimDuration move_mean() const;
  SimDuration move_max() const;
  // Emptying a victim with `moves` things left on it: the sum of the moves
  // is predicted by their mean (over ~20 moves the errors average out) plus
  // one worst move's excess; the read (unless done) and the record by their
  // worst.
  SimDuration whole_track(size_t moves, bool read_done) const;
  // The next move of a victim, and the record after it: the worst seen.
  SimDuration next_move() const { return move_max() + record.max(); }
};

class Compactor {
 public:
  Compactor(CompactorOptions options, uint32_t block_sectors);

  const CompactorOptions& options() const { return options_; }
  // The next victim among `tracks` (every track of the region that holds
  // data), or nullopt when none qualifies.
  std::optional<uint32_t> choose(std::span<const TrackCensus> tracks, SimTime now);

  CompactorStats& stats() { return stats_; }
  const CompactorStats& stats() const { return stats_; }
  CompactionCosts& costs() { return costs_; }
  const CompactionCosts& costs() const { return costs_; }

 private:
  bool qualifies(const TrackCensus& t, uint64_t holes_elsewhere) const;
  double score(const TrackCensus& t, SimTime now) const;  // higher is better

  CompactorOptions options_;
  uint32_t block_sectors_;
  std::mt19937_64 rng_;
  CompactorStats stats_;
  CompactionCosts costs_;
};

}  // namespace vld

#endif  // VLD_CORE_VLD_COMPACTOR_H_
