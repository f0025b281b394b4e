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
// Thread-safety: not thread-safe; owned by VldDisk under the controller lock.
#ifndef VLD_CORE_VLD_COMPACTOR_H_
#define VLD_CORE_VLD_COMPACTOR_H_

#include <cstdint>
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
};

class Compactor {
 public:
  Compactor(CompactorOptions options, uint32_t sectors_per_track, uint32_t block_sectors);

  const CompactorOptions& options() const { return options_; }
  // The next victim among `tracks` (every track of the region that holds
  // data), or nullopt when none qualifies.
  std::optional<uint32_t> choose(std::span<const TrackCensus> tracks, SimTime now);

  CompactorStats& stats() { return stats_; }
  const CompactorStats& stats() const { return stats_; }

 private:
  bool qualifies(const TrackCensus& t, uint64_t holes_elsewhere) const;
  double score(const TrackCensus& t, SimTime now) const;  // higher is better

  CompactorOptions options_;
  uint32_t spt_;
  uint32_t block_sectors_;
  std::mt19937_64 rng_;
  CompactorStats stats_;
};

}  // namespace vld

#endif  // VLD_CORE_VLD_COMPACTOR_H_
