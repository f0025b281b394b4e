// EagerAllocator: where the head can write next, soonest (paper 001, 2 and 4.2).
//
// For each piece of a command (a data block of block_sectors, a map sector
// of one), in order, the allocator picks the free run that the head reaches
// soonest from where the previous piece ended: the rest of the current track,
// the other tracks of the cylinder (a head switch), or other cylinders of the
// window (a seek), on either side of the head: a one-cylinder seek costs what
// a head switch costs (st19101: 0.5 ms each), so the cylinder behind offers
// as many cheap candidates as the one ahead. (Section 4.2 seeks one way,
// ascending, so the head is never trapped behind a full region; here the
// window does that: it moves on when spent, and recovery reads all of it,
// whichever way the head went. AllocatorPolicy::one_way_seeks restores the
// sweep: at 80% it costs 8% more per write, docs/benchmarks.md section 11.)
// A command's pieces thus
// land back to back in one rotational pass wherever free space allows: a map
// sector right behind its data costs one sector time. Because freed data
// leaves holes of exactly one block, the allocator also tries the whole
// command as one run and keeps whichever plan ends sooner.
//
// Policy (section 2.3 and 4.2): while a fill track is below the fill
// threshold, pieces go there, unless the nearest empty track is sooner (a
// head switch beats waiting most of a revolution for the track's last
// hole); then that empty track becomes the fill track. When no empty track
// is left, every piece goes to the nearest free run (the greedy algorithm of
// section 2.2).
//
// All choices are limited to a window of cylinders (VldDisk's recovery
// bound: only the window needs scanning after a crash).
//
// The compactor (paper 001, section 4.2) places differently: it plugs holes.
// PlaceMode::kHolePlug puts each piece in the nearest free run of a track
// that already holds data, never in an empty track (making empty tracks is
// the point of compacting) and never on the excluded track (the one being
// emptied, which no placement of any mode may use meanwhile).
//
// The reserve track (VldDisk's last resort against running out of room for
// whole blocks, see VldDisk::repack) is an empty track no placement uses
// except PlaceMode::kRepack, which packs a fragmented track's blocks onto it
// back to back, and puts map sectors in the nearest free run elsewhere.
//
// Thread-safety: not thread-safe; owned by VldDisk under the controller lock.
#ifndef VLD_CORE_VLD_EAGER_ALLOCATOR_H_
#define VLD_CORE_VLD_EAGER_ALLOCATOR_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/vld/cylinder_starts.h"
#include "core/vld/free_space_map.h"
#include "geometry/drive_model.h"

namespace vld {

// A run of sectors on one track, wrapping past its end if need be.
struct Extent {
  uint32_t track = 0;
  uint32_t sector = 0;
  uint32_t sectors = 0;
  bool operator==(const Extent&) const = default;
};

// The one or two runs of physically consecutive sectors an extent occupies,
// in the order the head meets them: two when it wraps past the end of its
// track. The one place that knows how a wrapped extent splits.
// Iterate it directly (`for (const SectorRun& r : extent_runs(e, geometry))`):
// range-for keeps the temporary alive, a span taken from it would dangle.
struct ExtentRuns {
  std::array<SectorRun, 2> runs;
  size_t count = 1;
  const SectorRun* begin() const { return runs.data(); }
  const SectorRun* end() const { return runs.data() + count; }
  std::span<const SectorRun> span() const& { return {runs.data(), count}; }
  std::span<const SectorRun> span() const&& = delete;  // would dangle
};
inline ExtentRuns extent_runs(const Extent& e, const DriveGeometry& g) {
  const uint64_t base = g.track_first_psn(e.track);
  const uint32_t spt = g.track_sectors(e.track);
  const uint32_t first = std::min(e.sectors, spt - e.sector);
  ExtentRuns r;
  r.runs[0] = SectorRun{base + e.sector, first};
  if (first < e.sectors) {
    r.runs[1] = SectorRun{base, e.sectors - first};
    r.count = 2;
  }
  return r;
}
// The extent that starts at psn and holds `sectors` (wrapping in its track).
inline Extent extent_at(uint64_t psn, uint32_t sectors, const DriveGeometry& g) {
  const uint32_t track = g.track_of_psn(psn);
  return Extent{track, static_cast<uint32_t>(psn - g.track_first_psn(track)), sectors};
}

// Cylinders [first, first + count), wrapping at the last simulated cylinder.
struct CylinderWindow {
  uint32_t first = 0;
  uint32_t count = 0;
  bool contains(uint32_t cylinder, uint32_t cylinders) const {
    uint32_t d = cylinder >= first ? cylinder - first : cylinder + cylinders - first;
    return d < count;
  }
  // Its tracks as at most two runs of track numbers, [first, first +
  // count) each: it wraps at the last cylinder.
  using TrackRange = FreeSpaceMap::TrackRange;
  std::array<TrackRange, 2> track_ranges(uint32_t cylinders, uint32_t heads) const {
    const uint32_t width = std::min(count, cylinders);
    const uint32_t start = first % cylinders;
    const uint32_t before_wrap = std::min(width, cylinders - start);
    return {TrackRange{start * heads, before_wrap * heads},
            TrackRange{0, (width - before_wrap) * heads}};
  }
  bool operator==(const CylinderWindow&) const = default;
};

// Of the windows of `width` cylinders that hold `cylinder`, the one with the
// most empty tracks for which usable(track) holds; ties go to the later
// start, the last being the window that starts at `cylinder`.
template <typename Usable>
CylinderWindow roomiest_window(const FreeSpaceMap& free, uint32_t heads, uint32_t cylinders,
                               uint32_t width, uint32_t cylinder, Usable usable) {
  if (width >= cylinders) return CylinderWindow{cylinder % cylinders, width};
  // Empty tracks per cylinder from `cylinder - width + 1` on.
  const uint32_t first = (cylinder + cylinders - (width - 1)) % cylinders;
  std::vector<uint32_t> empty(2 * width - 1, 0);
  for (uint32_t k = 0; k < empty.size(); ++k) {
    const uint32_t c = (first + k) % cylinders;
    for (uint32_t h = 0; h < heads; ++h)
      if (const uint32_t t = c * heads + h; free.is_empty(t) && usable(t)) ++empty[k];
  }
  // Sliding sums over the windows starting at first + k, k = 0 .. width - 1.
  uint32_t sum = 0;
  for (uint32_t k = 0; k < width; ++k) sum += empty[k];
  uint32_t best = sum, best_k = 0;
  for (uint32_t k = 1; k < width; ++k) {
    sum += empty[k + width - 1] - empty[k - 1];
    if (sum >= best) {
      best = sum;
      best_k = k;
    }
  }
  return CylinderWindow{(first + best_k) % cylinders, width};
}

enum class PlaceMode { kEager, kHolePlug, kRepack };

struct AllocatorPolicy {
  double fill_fraction = 0.75;  // fill= : fill empty tracks to this, then switch
  // Leave the fill track for the nearest empty track whenever that is
  // sooner (the allocator as built). false: the paper's section 2.3 rule,
  // stay until the threshold whatever the wait (vld-bench fig2 --strict).
  bool switch_when_sooner = true;
  // Seek only ahead of the head, ascending and wrapping (section 4.2's
  // sweep; vld-bench's comparisons, docs/compaction.md section 2a). false:
  // either way.
  bool one_way_seeks = false;
};

struct AllocatorStats {
  uint64_t pieces = 0;
  uint64_t fill_switches = 0;      // times a new empty track became the fill track
  uint64_t greedy_pieces = 0;      // pieces placed with no empty track left
  uint64_t skipped_sectors = 0;    // rotational positions passed before pieces
  uint64_t contiguous_commands = 0; // commands placed as one run (data + map)
  uint64_t small_first_commands = 0; // map sectors placed first, on the way to the data
};

class EagerAllocator {
 public:
  EagerAllocator(const DriveModel& drive, FreeSpaceMap& free_space, AllocatorPolicy policy);

  // Places and allocates `piece_sectors` for one command whose mechanics begin
  // at `start` (after the controller overhead) with the head on `head`.
  // Returns the extents in piece order, or nullopt (allocating nothing) if
  // the window cannot hold them all. *time_order, if given, receives the
  // piece indices in the order the head passes them (transfer them so);
  // without it the extents are always in time order as given.
  std::optional<std::vector<Extent>> place(std::span<const uint32_t> piece_sectors,
                                           HeadPosition head, SimTime start,
                                           const CylinderWindow& window,
                                           std::vector<size_t>* time_order = nullptr,
                                           PlaceMode mode = PlaceMode::kEager);
  // The same into *out (replacing what it held); false: nothing placed
  // (*out then unspecified). Neither this nor the plans it tries allocate
  // heap memory once their buffers have grown: every write places.
  bool place_into(std::vector<Extent>* out, std::span<const uint32_t> piece_sectors,
                  HeadPosition head, SimTime start, const CylinderWindow& window,
                  std::vector<size_t>* time_order = nullptr, PlaceMode mode = PlaceMode::kEager);

  // The track being compacted: no placement uses it until reset.
  void set_excluded_track(std::optional<uint32_t> track) { excluded_ = track; }
  std::optional<uint32_t> excluded_track() const { return excluded_; }
  // The reserve track: only PlaceMode::kRepack places there.
  void set_reserved_track(std::optional<uint32_t> track) { reserved_ = track; }
  std::optional<uint32_t> reserved_track() const { return reserved_; }
  // Neither excluded nor reserved: ordinary placement may use it.
  bool usable(uint32_t track) const { return track != excluded_ && track != reserved_; }
  // The track being filled to the threshold, if any.
  std::optional<uint32_t> fill_track() const { return fill_track_; }
  // Empty tracks in the window that ordinary placement may use.
  uint32_t usable_empty_tracks(const CylinderWindow& window) const;

  // The same search for one piece without allocating or changing policy
  // state: the time from `at` (head on `head`) until a free run of `len`
  // sectors starts under the head, and where. For tests and models.
  struct Choice {
    Extent extent;
    SimDuration locate;  // seek or head switch + rotational wait
  };
  // skip_empty: only tracks that already hold data (hole-plugging).
  // limit: the caller wants no run reached later than at + limit; the
  // search may then return nullopt or a later run instead of it (it stops
  // short), but finds the same run whenever that one is reached by then.
  std::optional<Choice> nearest(uint32_t len, HeadPosition head, SimTime at,
                                const CylinderWindow& window, bool skip_empty = false,
                                std::optional<SimDuration> limit = std::nullopt) const;

  // The access that transfers `extents` in order (wrapped extents split).
  std::vector<SectorRun> runs(std::span<const Extent> extents) const;
  uint64_t psn(const Extent& e) const {
    return drive_.geometry().track_first_psn(e.track) + e.sector;
  }

  const AllocatorStats& stats() const { return stats_; }
  const AllocatorPolicy& policy() const { return policy_; }

 private:
  // The policy's choice for one run of len sectors, given (and updating) a
  // fill track; *greedy says no empty track was used. limit: as nearest's,
  // for the searches whose result is returned as is (not kRepack's).
  std::optional<Choice> choose(uint32_t len, HeadPosition head, SimTime t,
                               const CylinderWindow& window, std::optional<uint32_t>* fill,
                               bool* greedy, PlaceMode mode,
                               std::optional<SimDuration> limit = std::nullopt) const;
  // A plan of place(): its extents (allocated, if placed), when its last
  // transfer ends, and the fill track and stats keeping it would leave.
  struct Plan {
    bool placed = false;
    std::vector<Extent> extents;
    SimTime end{};
    std::optional<uint32_t> fill;
    AllocatorStats stats;
  };
  // *order = 0, 1, ..., pieces - 1.
  static void piece_order(size_t pieces, std::vector<size_t>* order);
  // Plan A from the current fill track and stats, into *p (plan_pieces).
  // deadline: only a plan that ends by then is of use (plan_pieces).
  void plan_from_here(std::span<const uint32_t> piece_sectors, HeadPosition head, SimTime start,
                      const CylinderWindow& window, PlaceMode mode,
                      std::optional<SimTime> deadline, Plan* p);
  // Plan C of place(): the small pieces first. Replaces *a (and
  // *time_order) if it ends sooner; either way exactly the kept plan's
  // extents stay allocated. REQUIRES: a->placed, a is not &plan_c_.
  void try_small_first(std::span<const uint32_t> piece_sectors, HeadPosition head,
                       SimTime start, const CylinderWindow& window, PlaceMode mode, Plan* a,
                       std::vector<size_t>* time_order);
  // Plan B of place(): the whole command as one run, if it fits a track
  // and ends before plan A. Taken: into *out, allocated and counted in
  // place of A (whose extents are released). Not taken: false, A stays
  // allocated.
  bool try_one_run(std::span<const uint32_t> piece_sectors, HeadPosition head, SimTime start,
                   const CylinderWindow& window, PlaceMode mode, const Plan& a,
                   std::vector<size_t>* time_order, std::vector<Extent>* out);
  // Whether the extents follow each other on one track with no gap.
  bool back_to_back(std::span<const Extent> extents) const;
  // Plan A of place(): piece by piece into *out; allocates; false allocates
  // nothing. Updates *fill and counts into *stats as if the plan were kept.
  // With a deadline, a plan that cannot end by then may be given up
  // (false), or returned ending later: the caller then rejects it; one
  // that can is returned as without the deadline.
  bool plan_pieces(std::span<const uint32_t> piece_sectors, HeadPosition head, SimTime start,
                   const CylinderWindow& window, std::optional<uint32_t>* fill,
                   AllocatorStats* stats, SimTime* end, PlaceMode mode,
                   std::optional<SimTime> deadline, std::vector<Extent>* out);
  void allocate_all(std::span<const Extent> extents);
  void release_all(std::span<const Extent> extents);
  // Counts `pieces` placed by one choice.
  void count(AllocatorStats& stats, size_t pieces, const Choice& choice, bool greedy) const;
  // The soonest run of len sectors on `track` for a head at `from` at `at`;
  // with a limit, it may also be nullopt if that run is reached after
  // `limit` (the search stops short of it), never if it is reached by then.
  std::optional<Choice> on_track(uint32_t track, uint32_t len, HeadPosition from, SimTime at,
                                 std::optional<SimDuration> limit = std::nullopt) const;
  // The same for a head that reaches the track after move_time, at
  // `arrive`, the track's sector 0 lying at angular slot `offset`.
  std::optional<Choice> on_track_at(uint32_t track, uint32_t len, SimDuration move_time,
                                    SimTime arrive, uint32_t offset,
                                    std::optional<SimDuration> limit) const;
  // Time for `sectors` to pass under the head on `track`, and on the
  // drive's fastest (outermost) track: a bound for any track.
  SimDuration transfer_time_on(uint32_t track, uint32_t sectors) const;
  SimDuration fastest_transfer_time(uint32_t sectors) const;
  // Seek and head switch from `from` to `to` (DriveModel::reposition,
  // and the write settle), read from moves_ when it holds the distance.
  SimDuration move_time_to(HeadPosition from, HeadPosition to) const;
  SimDuration move_time_uncached(HeadPosition from, HeadPosition to) const;
  // seek.time(d), from moves_ when it holds d.
  SimDuration seek_time(uint32_t d) const;
  // One nearest() search: what it looks for, and the best run so far with
  // its rank (cylinders from the head x heads + head: ties go to the lower).
  struct Search {
    uint32_t len;
    HeadPosition head;
    SimTime at;
    bool skip_empty;
    std::optional<SimDuration> limit;
    std::optional<Choice> best;
    uint64_t best_rank;
  };
  // How a search's head reaches the tracks of one cylinder by one move
  // (to its own head's track, or to any other): what every track's test
  // there shares. reachable, max_skipped and span follow the search's
  // bound (the best so far, else its limit): bound() redoes them when it
  // tightens, and a bound only tightens, so an approach once out of reach
  // stays so.
  struct Approach {
    SimDuration move;
    SimTime arrive;         // the search's start + move
    bool reachable;         // move within the bound: the tracks are worth a look
    // If reachable: the platter's phase on arrival and the slot under the
    // head then (DriveModel::phase_units, next_slot_at_phase)...
    int64_t phase;
    uint32_t slot;
    // ...and how many sectors round a run may lie: max_skipped_by(bound,
    // move, spt), and as a window of sectors from the head's, at most the
    // track's (FreeSpaceMap::first_run_within).
    uint32_t max_skipped;
    uint32_t span;
  };
  // The approach by a move of move_time, arriving at `arrive`, to tracks
  // of spt sectors, within `limit` (none: any run).
  Approach approach_within(SimDuration move_time, SimTime arrive,
                           std::optional<SimDuration> limit, uint32_t spt) const;
  // What bounds s now: its best so far, else its limit.
  static std::optional<SimDuration> bound_of(const Search& s);
  // The approach by a move of move_time to tracks of spt sectors, bounded
  // as s now is; bound() brings *a up to s's bound.
  Approach approach(const Search& s, SimDuration move_time, uint32_t spt) const;
  void bound(const Search& s, uint32_t spt, Approach* a) const;
  // *a's max_skipped and span for `limit`. REQUIRES: a->reachable.
  void set_reach(std::optional<SimDuration> limit, uint32_t spt, Approach* a) const;
  // How many sectors round a run may lie and still be reached by `limit`
  // after `move_time` (a sector more, never less). REQUIRES: move_time <=
  // limit.
  uint32_t max_skipped_by(SimDuration limit, SimDuration move_time, uint32_t spt) const;
  // The soonest run of len sectors on `track` reached by `a`, its sector 0
  // at angular slot `offset`. REQUIRES: a.reachable, spt is the track's.
  std::optional<Choice> run_from(uint32_t track, uint32_t len, const Approach& a,
                                 uint32_t offset, uint32_t spt) const;
  // Looks at `track` (rank: cylinders from the head x heads + head),
  // reached by `a`, its sector 0 at angular slot `offset`: keeps its
  // soonest run if it beats the best; true if it did.
  // REQUIRES: a.reachable, spt is the track's sectors.
  bool consider(Search& s, uint32_t track, uint64_t rank, const Approach& a, uint32_t offset,
                uint32_t spt) const;
  // Looks at every track of cylinder c, d from the head (on the head's own
  // cylinder, every track but the head's).
  void consider_cylinder(Search& s, uint32_t c, uint32_t d) const;
  // Keeps `choice`, on a track of the given rank, if it beats the best so
  // far; true if it did.
  static bool offer(Search& s, const Choice& choice, uint64_t rank);
  // Whether every track of the cylinder from first_track on may take s's
  // run: then CylinderStarts answers for the cylinder's other heads.
  bool all_eligible(const Search& s, uint32_t first_track) const;
  // The soonest run on cylinder c's tracks but the head's own, all reached
  // by approach `a` (ranks first_rank + head), from its run starts by
  // angular slot: the same choice as considering them one by one.
  // REQUIRES: a.reachable, all_eligible(s, c's first track).
  void consider_other_heads(Search& s, uint32_t c, uint64_t first_rank,
                            const CylinderShape& shape, const Approach& a) const;
  // The cylinders d away from `cylinder` that a search looks at, ahead
  // first; kNoCylinder fills a slot with nothing to look at.
  static constexpr uint32_t kNoCylinder = UINT32_MAX;
  std::array<uint32_t, 2> cylinders_at(uint32_t cylinder, uint32_t d) const;
  // How many of the window's cylinders a search by cylinders_at has looked
  // at, so that it stops once it has seen them all: at 80% no empty track
  // may be left in the window, and the searches went on around the whole
  // disk, finding nothing (every cylinder outside the window is skipped).
  // Exact: cylinders_at(c, d) for d = 0, 1, ... meets no cylinder twice
  // before it has met all of them (ahead and behind meet halfway round),
  // and a track met again costs what it cost the first time, at a larger
  // d, so it never replaces the best found (ties go to the smaller d).
  class WindowCoverage {
   public:
    WindowCoverage(const CylinderWindow& window, uint32_t cylinders)
        : left_(std::min(window.count, cylinders)) {}
    void visit() {
      if (left_ > 0) --left_;
    }
    bool all() const { return left_ == 0; }

   private:
    uint32_t left_;  // window cylinders not looked at yet
  };
  // The usable empty track of the window the head reaches soonest. Every
  // piece of every plan of place() asks, mostly with the same head, window
  // and empty tracks: the last answer is kept for those.
  std::optional<uint32_t> nearest_empty_track(HeadPosition head,
                                              const CylinderWindow& window) const;
  std::optional<uint32_t> find_nearest_empty_track(HeadPosition head,
                                                   const CylinderWindow& window) const;
  // Whether a run reached no sooner than `earliest` can neither beat the
  // best so far (or_tie: nor tie it; a tie found later loses on rank) nor
  // be reached by the limit: a search stops or skips there.
  static bool beyond(SimDuration earliest, const std::optional<Choice>& best, bool or_tie,
                     std::optional<SimDuration> limit);
  bool fill_track_usable(std::optional<uint32_t> fill, uint32_t len,
                         const CylinderWindow& window) const;

  // Every extent lies in the window (the recovery bound): for asserts.
  bool in_window(std::span<const Extent> extents, const CylinderWindow& window) const;

  const DriveModel& drive_;
  FreeSpaceMap& free_;
  AllocatorPolicy policy_;
  std::optional<uint32_t> fill_track_;
  std::optional<uint32_t> excluded_;
  std::optional<uint32_t> reserved_;
  AllocatorStats stats_;
  // drive_.geometry().revolution(), a division, asked by every track a
  // search looks at.
  const int64_t revolution_ns_;
  const uint32_t max_spt_;  // the geometry's most sectors on a track (its fastest)
  // For each distance d below the simulated cylinders: seek(d), and the
  // move of d cylinders to the same head and to another. A move depends on
  // nothing else, and every search asks for each cylinder it looks at.
  struct Moves {
    SimDuration seek;
    SimDuration same_head;
    SimDuration other_head;
  };
  std::vector<Moves> moves_;
  // For each simulated cylinder, its shape: consider_cylinder's view of
  // its zone.
  std::vector<CylinderShape> shapes_;
  // Each simulated cylinder's run starts by angular slot, for the tracks a
  // search reaches by one move.
  CylinderStarts cylinder_starts_;
  // shapes_[c], or worked out for a cylinder past them.
  CylinderShape shape_of(uint32_t cylinder) const;
  // nearest_empty_track's last answer and all it depends on: the empty
  // tracks (by version), the head, the window and the unusable tracks.
  struct EmptyTrackMemo {
    uint64_t empty_version;
    HeadPosition head;
    CylinderWindow window;
    std::optional<uint32_t> excluded;
    std::optional<uint32_t> reserved;
    std::optional<uint32_t> track;
  };
  mutable std::optional<EmptyTrackMemo> empty_memo_;
  // usable_empty_tracks' last two answers and all they depend on (the
  // empty tracks, by version, the window and the unusable tracks). Each
  // write asks of its window (nearest_empty_track's first check, misses on
  // every new head) and of VldDisk's band around the head, mostly with the
  // empty tracks unchanged; [0] is the newer.
  struct EmptyCountMemo {
    uint64_t empty_version;
    CylinderWindow window;
    std::optional<uint32_t> excluded;
    std::optional<uint32_t> reserved;
    uint32_t count;
  };
  mutable std::array<std::optional<EmptyCountMemo>, 2> empty_count_memo_;
  uint32_t count_usable_empty_tracks(const CylinderWindow& window) const;
  // place()'s working space, kept between calls so that placing a write
  // does not allocate once it has grown (place is not reentrant).
  Plan plan_a_;
  Plan plan_c_;
  std::vector<size_t> order_c_;    // plan C's pieces: the small ones first
  std::vector<uint32_t> sizes_c_;  // their sectors, in that order
};

}  // namespace vld

#endif  // VLD_CORE_VLD_EAGER_ALLOCATOR_H_
