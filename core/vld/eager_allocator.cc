#include "core/vld/eager_allocator.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace vld {

EagerAllocator::EagerAllocator(const DriveModel& drive, FreeSpaceMap& free_space,
                               AllocatorPolicy policy)
    : drive_(drive),
      free_(free_space),
      policy_(policy),
      revolution_ns_(drive.geometry().revolution().count()),
      max_spt_(drive.geometry().max_sectors_per_track()),
      cylinder_starts_(free_space, drive.simulated_cylinders(),
                       drive.geometry().tracks_per_cylinder, max_spt_) {
  const DriveGeometry& g = drive.geometry();
  const uint32_t cylinders = drive.simulated_cylinders();
  moves_.reserve(cylinders);
  shapes_.reserve(cylinders);
  for (uint32_t d = 0; d < cylinders; ++d)
    moves_.push_back(Moves{g.seek.time(d), move_time_uncached({0, 0}, {d, 0}),
                           move_time_uncached({0, 0}, {d, 1})});
  for (uint32_t c = 0; c < cylinders; ++c) {
    shapes_.push_back(shape_of(c));
    // The searches take a track's sectors and sector 0 from its cylinder's shape.
    assert(c * g.tracks_per_cylinder >= free_.tracks() ||
           shapes_[c].spt == free_.sectors_on(c * g.tracks_per_cylinder));
    assert(shapes_[c].offset_of(g.tracks_per_cylinder - 1) ==
           g.angular_slot(Chs{c, g.tracks_per_cylinder - 1, 0}));
  }
}

CylinderShape EagerAllocator::shape_of(uint32_t cylinder) const {
  if (cylinder < shapes_.size()) return shapes_[cylinder];
  const DriveGeometry& g = drive_.geometry();
  const Zone zone = g.zone(g.zone_index_of_cylinder(cylinder));
  return CylinderShape{g.angular_slot(Chs{cylinder, 0, 0}), zone.sectors_per_track,
                       zone.track_skew_sectors % zone.sectors_per_track};
}

std::optional<EagerAllocator::Choice> EagerAllocator::on_track(
    uint32_t track, uint32_t len, HeadPosition from, SimTime at,
    std::optional<SimDuration> limit) const {
  const DriveGeometry& g = drive_.geometry();
  HeadPosition to{track / g.tracks_per_cylinder, track % g.tracks_per_cylinder};
  const SimDuration move_time = move_time_to(from, to);
  return on_track_at(track, len, move_time, at + move_time,
                     g.angular_slot(Chs{to.cylinder, to.head, 0}), limit);
}

std::optional<EagerAllocator::Choice> EagerAllocator::on_track_at(
    uint32_t track, uint32_t len, SimDuration move_time, SimTime arrive, uint32_t offset,
    std::optional<SimDuration> limit) const {
  const uint32_t spt = free_.sectors_on(track);
  const Approach a = approach_within(move_time, arrive, limit, spt);
  if (!a.reachable) return std::nullopt;
  return run_from(track, len, a, offset, spt);
}

uint32_t EagerAllocator::max_skipped_by(SimDuration limit, SimDuration move_time,
                                        uint32_t spt) const {
  // A run s sectors round waits at least s sector times less the on-time
  // slack (and a nanosecond of rounding): past this many it would be
  // reached after `limit`. A margin of one sector more, never less.
  return static_cast<uint32_t>(std::min<int64_t>(
      ((limit - move_time).count() + kOnTimeSlackNs + 1) * spt / revolution_ns_ + 1,
      UINT32_MAX));
}

EagerAllocator::Approach EagerAllocator::approach_within(SimDuration move_time, SimTime arrive,
                                                         std::optional<SimDuration> limit,
                                                         uint32_t spt) const {
  Approach a{move_time, arrive, !(limit && move_time > *limit), 0, 0, 0, 0};
  if (!a.reachable) return a;
  // The platter's phase on arrival and the slot under the head then, once
  // for every track the move reaches.
  a.phase = drive_.phase_units(arrive, spt);
  a.slot = drive_.next_slot_at_phase(a.phase, spt);
  assert(a.slot < spt);  // so run_from's first sector is one of the track's
  set_reach(limit, spt, &a);
  return a;
}

std::optional<SimDuration> EagerAllocator::bound_of(const Search& s) {
  // The best so far bounds the search once found (its locate may lie past
  // the limit by the margin of max_skipped_by: it still replaces it).
  return s.best ? std::optional(s.best->locate) : s.limit;
}

EagerAllocator::Approach EagerAllocator::approach(const Search& s, SimDuration move_time,
                                                  uint32_t spt) const {
  return approach_within(move_time, s.at + move_time, bound_of(s), spt);
}

void EagerAllocator::bound(const Search& s, uint32_t spt, Approach* a) const {
  if (!a->reachable) return;  // a bound only tightens
  const std::optional<SimDuration> limit = bound_of(s);
  a->reachable = !(limit && a->move > *limit);
  if (a->reachable) set_reach(limit, spt, a);
}

void EagerAllocator::set_reach(std::optional<SimDuration> limit, uint32_t spt,
                               Approach* a) const {
  assert(a->reachable);
  a->max_skipped = limit ? max_skipped_by(*limit, a->move, spt) : UINT32_MAX;
  a->span = std::min(a->max_skipped, spt - 1) + 1;
  assert(a->span >= 1 && a->span <= spt);  // FreeSpaceMap::first_run_within's window
}

std::optional<EagerAllocator::Choice> EagerAllocator::run_from(uint32_t track, uint32_t len,
                                                               const Approach& a,
                                                               uint32_t offset,
                                                               uint32_t spt) const {
  assert(a.reachable);
  // The sector under the head on arrival, and the run's angular slot: both
  // offset by the track's skew (no division: this is every search's path).
  const uint32_t first = a.slot >= offset ? a.slot - offset : a.slot + spt - offset;
  auto run = free_.first_run_within(track, len, first, a.span);
  if (!run) return std::nullopt;
  const uint32_t run_slot = run->sector + offset >= spt ? run->sector + offset - spt
                                                        : run->sector + offset;
  return Choice{Extent{track, run->sector, len},
                a.move + drive_.rotational_wait_at_phase(a.phase, run_slot, spt)};
}

SimDuration EagerAllocator::transfer_time_on(uint32_t track, uint32_t sectors) const {
  return drive_.transfer_time(sectors, free_.sectors_on(track));
}

SimDuration EagerAllocator::fastest_transfer_time(uint32_t sectors) const {
  return drive_.transfer_time(sectors, max_spt_);
}

SimDuration EagerAllocator::move_time_to(HeadPosition from, HeadPosition to) const {
  const uint32_t d = from.cylinder > to.cylinder ? from.cylinder - to.cylinder
                                                 : to.cylinder - from.cylinder;
  if (d >= moves_.size()) return move_time_uncached(from, to);
  return from.head == to.head ? moves_[d].same_head : moves_[d].other_head;
}

SimDuration EagerAllocator::move_time_uncached(HeadPosition from, HeadPosition to) const {
  const ServiceBreakdown move = drive_.reposition(from, to);
  return move.seek + move.head_switch + drive_.write_settle(from, to);
}

SimDuration EagerAllocator::seek_time(uint32_t d) const {
  return d < moves_.size() ? moves_[d].seek : drive_.geometry().seek.time(d);
}

bool EagerAllocator::beyond(SimDuration earliest, const std::optional<Choice>& best, bool or_tie,
                            std::optional<SimDuration> limit) {
  if (best && (earliest > best->locate || (or_tie && earliest == best->locate))) return true;
  return limit && earliest > *limit;
}

// Flattened, as consider_cylinder (below) is: one call per cylinder
// looked at otherwise.
[[gnu::flatten]] std::optional<EagerAllocator::Choice> EagerAllocator::nearest(
    uint32_t len, HeadPosition head, SimTime at, const CylinderWindow& window, bool skip_empty,
    std::optional<SimDuration> limit) const {
  const DriveGeometry& g = drive_.geometry();
  const uint32_t cylinders = drive_.simulated_cylinders();
  // With the head outside the window, or one way, the search's own stops
  // can miss the soonest run (past the window's end on one side, it stops
  // before reaching the other; one way, seek(d) does not bound the
  // cylinders behind the head, met at d past half the disk and nearer than
  // d). A limit, by changing when a best is first found, could then change
  // which run it returns: no limit then. Otherwise the search returns the
  // soonest run of the window, and with a limit the same if that is soon
  // enough.
  const bool head_in_window = window.contains(head.cylinder, cylinders);
  if (policy_.one_way_seeks || !head_in_window) limit.reset();
  // The soonest run; ties (sectors at the same angle on several tracks are
  // reached at the same time) go to the nearest cylinder ahead, then the
  // lowest head, whatever order the tracks are looked at in.
  Search s{len, head, at, skip_empty, limit, std::nullopt, 0};
  // The head's own track first: every other one costs at least a head
  // switch or a seek to reach, which prunes most of the search (a map
  // sector after its data usually finds a free sector a few sectors on).
  if (head_in_window) {
    const CylinderShape shape = shape_of(head.cylinder);
    const Approach here = approach(s, SimDuration{0}, shape.spt);
    if (here.reachable)
      consider(s, head.cylinder * g.tracks_per_cylinder + head.head, head.head, here,
               shape.offset_of(head.head), shape.spt);
  }
  // Cylinders d away, ahead of the head and (unless one_way_seeks) behind
  // it, wrapping; inside the window. A cylinder d away costs at least
  // seek(d): stop once that is no better.
  WindowCoverage covered(window, cylinders);
  for (uint32_t d = 0; d < cylinders && !covered.all(); ++d) {
    if (d == 0) {
      // Other tracks here cost a head switch first; one may still tie the
      // head's track (and win on a lower head), so skip only if strictly worse.
      if (!head_in_window) continue;
      if (beyond(g.head_switch, s.best, /*or_tie=*/false, limit)) {
        covered.visit();  // the head's cylinder: nothing there can win
        continue;
      }
    } else if (beyond(seek_time(d), s.best, /*or_tie=*/true, limit)) {
      break;
    }
    bool in_window = false;
    for (uint32_t c : cylinders_at(head.cylinder, d)) {
      if (c == kNoCylinder || !window.contains(c, cylinders)) continue;
      in_window = true;
      covered.visit();
      consider_cylinder(s, c, d);
    }
    if (!in_window && d > 0 && s.best) break;  // past the window's ends
  }
  return s.best;
}

// Flattened: for each track it looks at, the calls to consider,
// run_from and the run lookup cost as much as their work.
[[gnu::flatten]] void EagerAllocator::consider_cylinder(Search& s, uint32_t c,
                                                        uint32_t d) const {
  const uint32_t heads = drive_.geometry().tracks_per_cylinder;
  const CylinderShape shape = shape_of(c);
  const uint32_t spt = shape.spt;
  const uint32_t own = s.head.head;
  const uint32_t first_track = c * heads;
  const uint64_t first_rank = uint64_t{d} * heads;
  // Every head but the current one costs the same move, so what the head
  // finds on arrival (the slot under it, how far round a run may lie) is
  // worked out once per move, not per track, and again only when the best
  // so far tightens the bound. Ties go by rank whatever the order the
  // tracks are looked at in, so the head's own track (reached without a
  // head switch; on the head's own cylinder nearest() looked first) comes
  // before the others.
  Approach other = approach(s, move_time_to(s.head, HeadPosition{c, own == 0 ? 1u : 0u}), spt);
  if (d > 0) {
    Approach same = approach(s, move_time_to(s.head, HeadPosition{c, own}), spt);
    if (same.reachable &&
        consider(s, first_track + own, first_rank + own, same, shape.offset_of(own), spt))
      bound(s, spt, &other);
  }
  // The other heads by angular slot (CylinderStarts), for runs longer than
  // a sector: a map sector's search mostly stops on the head's own track
  // or cylinder after a few heads, cheaper than turning the starts of all
  // (docs/benchmarks.md section 25).
  if (other.reachable && s.len > 1 && all_eligible(s, first_track)) {
    consider_other_heads(s, c, first_rank, shape, other);
    return;
  }
  // Else head by head. Each head's skew adds the zone's track skew to the
  // one before. A bound only tightens: once the move is past it, no track
  // here can win.
  uint32_t offset = shape.offset0;
  assert(offset < spt && shape.track_skew < spt);  // so every head's offset is below spt
  for (uint32_t h = 0; h < heads && other.reachable; ++h) {
    if (h != own && consider(s, first_track + h, first_rank + h, other, offset, spt))
      bound(s, spt, &other);
    offset += shape.track_skew;
    if (offset >= spt) offset -= spt;
  }
}

bool EagerAllocator::consider(Search& s, uint32_t track, uint64_t rank, const Approach& a,
                              uint32_t offset, uint32_t spt) const {
  // Runs reached after the best so far (or the limit) cannot win: not
  // looked for. A track the head reaches only after that is passed over
  // (a.reachable, which the caller checks) before its start bitmap is
  // asked for (after a change, built from its free bits).
  assert(a.reachable);
  if (!usable(track)) return false;
  if (s.skip_empty && free_.is_empty(track)) return false;
  auto choice = run_from(track, s.len, a, offset, spt);
  return choice && offer(s, *choice, rank);
}

bool EagerAllocator::offer(Search& s, const Choice& choice, uint64_t rank) {
  if (s.best && !(choice.locate < s.best->locate ||
                  (choice.locate == s.best->locate && rank < s.best_rank)))
    return false;
  s.best = choice;
  s.best_rank = rank;
  return true;
}

bool EagerAllocator::all_eligible(const Search& s, uint32_t first_track) const {
  const uint32_t heads = drive_.geometry().tracks_per_cylinder;
  auto here = [&](std::optional<uint32_t> t) { return t && *t - first_track < heads; };
  if (here(excluded_) || here(reserved_)) return false;
  return !s.skip_empty || !free_.any_empty(first_track, heads);
}

void EagerAllocator::consider_other_heads(Search& s, uint32_t c, uint64_t first_rank,
                                          const CylinderShape& shape, const Approach& a) const {
  assert(a.reachable);
  const uint32_t heads = drive_.geometry().tracks_per_cylinder;
  const uint32_t spt = shape.spt;
  const uint64_t* slots = cylinder_starts_.slots(c, s.len, shape);
  // The slots the head passes within the bound, from the one under it on
  // arrival: the first set one is the soonest run here, as every track's
  // own first run within the window is (consider, head by head).
  uint32_t from = a.slot, span = a.span;
  while (auto hit = track_bits::first_in_window(slots, /*invert=*/false, spt, from, span)) {
    // The lowest head there but the head's own: ties go to the lower rank.
    uint32_t offset = shape.offset0;
    for (uint32_t h = 0; h < heads; ++h) {
      const uint32_t track = c * heads + h;
      if (h != s.head.head && cylinder_starts_.starts_at(track, s.len, hit->at, offset, spt)) {
        const uint32_t sector = hit->at >= offset ? hit->at - offset : hit->at + spt - offset;
        offer(s, Choice{Extent{track, sector, s.len},
                        a.move + drive_.rotational_wait_at_phase(a.phase, hit->at, spt)},
              first_rank + h);
        return;
      }
      offset += shape.track_skew;
      if (offset >= spt) offset -= spt;
    }
    // Only the head's own track starts a run there (its own move, looked
    // at before): on past it.
    if (hit->skipped + 1 >= span) return;
    from = hit->at + 1 == spt ? 0 : hit->at + 1;
    span -= hit->skipped + 1;
  }
}

std::array<uint32_t, 2> EagerAllocator::cylinders_at(uint32_t cylinder, uint32_t d) const {
  const uint32_t cylinders = drive_.simulated_cylinders();
  // REQUIRES: cylinder, d < cylinders (no division: every search's path).
  assert(cylinder < cylinders && d < cylinders);
  const uint32_t ahead = cylinder + d >= cylinders ? cylinder + d - cylinders : cylinder + d;
  const uint32_t behind = cylinder >= d ? cylinder - d : cylinder + cylinders - d;
  // Ahead first: it wins ties. Behind only if it is another cylinder.
  if (d == 0 || policy_.one_way_seeks || behind == ahead) return {ahead, kNoCylinder};
  return {ahead, behind};
}

std::optional<uint32_t> EagerAllocator::nearest_empty_track(HeadPosition head,
                                                            const CylinderWindow& window) const {
  const uint64_t version = free_.empty_version();
  const std::optional<EmptyTrackMemo>& m = empty_memo_;
  if (!m || m->empty_version != version || m->head != head || m->window != window ||
      m->excluded != excluded_ || m->reserved != reserved_)
    empty_memo_ = EmptyTrackMemo{version, head, window, excluded_, reserved_,
                                 find_nearest_empty_track(head, window)};
  return empty_memo_->track;
}

std::optional<uint32_t> EagerAllocator::find_nearest_empty_track(
    HeadPosition head, const CylinderWindow& window) const {
  if (usable_empty_tracks(window) == 0) return std::nullopt;
  const DriveGeometry& g = drive_.geometry();
  const uint32_t cylinders = drive_.simulated_cylinders();
  std::optional<uint32_t> best;
  SimDuration best_cost{};
  WindowCoverage covered(window, cylinders);
  for (uint32_t d = 0; d < cylinders && !covered.all(); ++d) {
    if (best && d > 0 && seek_time(d) >= best_cost) break;
    bool in_window = false;
    for (uint32_t c : cylinders_at(head.cylinder, d)) {
      if (c == kNoCylinder || !window.contains(c, cylinders)) continue;
      in_window = true;
      covered.visit();
      if (!free_.any_empty(c * g.tracks_per_cylinder, g.tracks_per_cylinder)) continue;
      for (uint32_t h = 0; h < g.tracks_per_cylinder; ++h) {
        uint32_t track = c * g.tracks_per_cylinder + h;
        if (!free_.is_empty(track) || !usable(track)) continue;
        // An empty track can be written from wherever the head lands on it.
        SimDuration cost = move_time_to(head, HeadPosition{c, h});
        if (!best || cost < best_cost) {
          best = track;
          best_cost = cost;
        }
      }
    }
    if (!in_window && best) break;  // past the window's ends
  }
  return best;
}

uint32_t EagerAllocator::usable_empty_tracks(const CylinderWindow& window) const {
  const uint64_t version = free_.empty_version();
  for (const std::optional<EmptyCountMemo>& m : empty_count_memo_)
    if (m && m->empty_version == version && m->window == window && m->excluded == excluded_ &&
        m->reserved == reserved_)
      return m->count;
  const uint32_t n = count_usable_empty_tracks(window);
  empty_count_memo_[1] = empty_count_memo_[0];
  empty_count_memo_[0] = EmptyCountMemo{version, window, excluded_, reserved_, n};
  return n;
}

uint32_t EagerAllocator::count_usable_empty_tracks(const CylinderWindow& window) const {
  // At 80% a window often has none left but the reserve: every write's
  // policy asks, and a search over the window's cylinders would find
  // nothing (docs/benchmarks.md section 3b).
  const uint32_t heads = drive_.geometry().tracks_per_cylinder;
  const uint32_t cylinders = drive_.simulated_cylinders();
  uint32_t n = 0;
  for (const CylinderWindow::TrackRange& r : window.track_ranges(cylinders, heads))
    n += free_.count_empty(r.first, r.count);
  auto counted = [&](std::optional<uint32_t> t) {
    return t && free_.is_empty(*t) && window.contains(*t / heads, cylinders);
  };
  if (counted(excluded_)) --n;
  if (reserved_ != excluded_ && counted(reserved_)) --n;
  return n;
}

bool EagerAllocator::fill_track_usable(std::optional<uint32_t> fill, uint32_t len,
                                       const CylinderWindow& window) const {
  if (!fill || !usable(*fill)) return false;
  const DriveGeometry& g = drive_.geometry();
  uint32_t track = *fill;
  if (!window.contains(track / g.tracks_per_cylinder, drive_.simulated_cylinders())) return false;
  double used = 1.0 - static_cast<double>(free_.free_sectors(track)) / free_.sectors_on(track);
  // Below the threshold, and the piece still fits somewhere on the track.
  return used < policy_.fill_fraction && free_.free_sectors(track) >= len;
}

std::optional<EagerAllocator::Choice> EagerAllocator::choose(uint32_t len, HeadPosition head,
                                                             SimTime t,
                                                             const CylinderWindow& window,
                                                             std::optional<uint32_t>* fill,
                                                             bool* greedy, PlaceMode mode,
                                                             std::optional<SimDuration> limit) const {
  if (mode == PlaceMode::kHolePlug) {
    return nearest(len, head, t, window, /*skip_empty=*/true, limit);
  }
  if (mode == PlaceMode::kRepack) {
    // Blocks onto the reserve track from wherever the head lands, each right
    // behind the one before: the track ends with one free run, the room the
    // repack was for. Map sectors (one sector) go to the nearest free run
    // elsewhere: the short runs the repack is about take them, and the
    // reserve's run stays whole.
    if (len == 1)
      if (auto c = nearest(len, head, t, window)) return c;
    if (reserved_)
      if (auto c = on_track(*reserved_, len, head, t)) return c;
    return nearest(len, head, t, window);
  }
  // The fill track, while it is below the threshold and the piece fits in
  // one of its free runs; but moving to the nearest empty track wins when it
  // is sooner: the threshold is the most a track is filled, not a reason to
  // wait a revolution for its last hole.
  std::optional<Choice> choice;
  if (fill_track_usable(*fill, len, window)) choice = on_track(**fill, len, head, t);
  std::optional<uint32_t> empty = nearest_empty_track(head, window);
  std::optional<Choice> fresh;
  if (empty) fresh = on_track(*empty, len, head, t);
  if (fresh && (!choice || (policy_.switch_when_sooner && fresh->locate < choice->locate))) {
    *fill = empty;
    return fresh;
  }
  if (choice) return choice;
  // No empty track left (or none that can take the piece): greedy.
  fill->reset();
  *greedy = true;
  return nearest(len, head, t, window, /*skip_empty=*/false, limit);
}

void EagerAllocator::allocate_all(std::span<const Extent> extents) {
  for (const Extent& e : extents) free_.allocate(e.track, e.sector, e.sectors);
}

void EagerAllocator::release_all(std::span<const Extent> extents) {
  for (const Extent& e : extents) free_.release(e.track, e.sector, e.sectors);
}

void EagerAllocator::count(AllocatorStats& stats, size_t pieces, const Choice& choice,
                           bool greedy) const {
  stats.pieces += pieces;
  if (greedy) stats.greedy_pieces += pieces;
  // DriveGeometry::sector_time_ns(track), from the track's sectors here
  // (the geometry's: the constructor checks each cylinder's).
  const double sector_ns =
      static_cast<double>(revolution_ns_) / free_.sectors_on(choice.extent.track);
  stats.skipped_sectors +=
      static_cast<uint64_t>(std::llround(static_cast<double>(choice.locate.count()) / sector_ns));
}

std::optional<std::vector<Extent>> EagerAllocator::place(std::span<const uint32_t> piece_sectors,
                                                         HeadPosition head, SimTime start,
                                                         const CylinderWindow& window,
                                                         std::vector<size_t>* time_order,
                                                         PlaceMode mode) {
  std::vector<Extent> out;
  if (!place_into(&out, piece_sectors, head, start, window, time_order, mode)) return std::nullopt;
  return out;
}

bool EagerAllocator::place_into(std::vector<Extent>* out, std::span<const uint32_t> piece_sectors,
                                HeadPosition head, SimTime start, const CylinderWindow& window,
                                std::vector<size_t>* time_order, PlaceMode mode) {
  // Plan A: piece by piece, each where the head gets soonest after the
  // previous one. Plan B: the whole command as one run, chosen by the same
  // policy: data and its map sectors back to back in one pass. Freed data
  // leaves holes of exactly one block, so plan A often pays a second locate
  // for the map sector. Keep whichever ends sooner.
  Plan& a = plan_a_;
  plan_from_here(piece_sectors, head, start, window, mode, std::nullopt, &a);
  if (time_order) piece_order(piece_sectors.size(), time_order);
  // If plan A is already one back-to-back run, plan B (one run) cannot end
  // sooner: it cannot start before A's first piece. Plan C still can, by a
  // sector: a lone free sector just before the same hole takes the map.
  const bool a_is_one_run = a.placed && back_to_back(a.extents);
  // Plan C only for a caller that asks for the order: one transferring the
  // extents in piece order would lose a revolution.
  if (a.placed && time_order) try_small_first(piece_sectors, head, start, window, mode, &a, time_order);
  if (piece_sectors.size() >= 2 && !a_is_one_run &&
      try_one_run(piece_sectors, head, start, window, mode, a, time_order, out))
    return true;
  if (!a.placed) return false;
  fill_track_ = a.fill;
  stats_ = a.stats;
  assert(in_window(a.extents, window));
  out->assign(a.extents.begin(), a.extents.end());
  return true;
}

bool EagerAllocator::in_window(std::span<const Extent> extents,
                               const CylinderWindow& window) const {
  const uint32_t heads = drive_.geometry().tracks_per_cylinder;
  return std::all_of(extents.begin(), extents.end(), [&](const Extent& e) {
    return window.contains(e.track / heads, drive_.simulated_cylinders());
  });
}

void EagerAllocator::piece_order(size_t pieces, std::vector<size_t>* order) {
  order->resize(pieces);
  for (size_t i = 0; i < pieces; ++i) (*order)[i] = i;
}

void EagerAllocator::plan_from_here(std::span<const uint32_t> piece_sectors, HeadPosition head,
                                    SimTime start, const CylinderWindow& window, PlaceMode mode,
                                    std::optional<SimTime> deadline, Plan* p) {
  p->fill = fill_track_;
  p->stats = stats_;
  p->placed = plan_pieces(piece_sectors, head, start, window, &p->fill, &p->stats, &p->end, mode,
                          deadline, &p->extents);
}

void EagerAllocator::try_small_first(std::span<const uint32_t> piece_sectors, HeadPosition head,
                                     SimTime start, const CylinderWindow& window, PlaceMode mode,
                                     Plan* a, std::vector<size_t>* time_order) {
  assert(a->placed && a != &plan_c_);
  // The small pieces (map sectors) first, then the rest: the head often
  // passes a lone free sector on its way to the next hole big enough for a
  // block, and a map sector written there costs one sector time.
  // Sizes already in order: plan A already is plan C (the stable sort
  // below would leave the pieces as they are).
  if (std::is_sorted(piece_sectors.begin(), piece_sectors.end())) return;
  std::vector<size_t>& order_c = order_c_;
  piece_order(piece_sectors.size(), &order_c);
  // By size, ties in piece order: a stable sort's order, without the
  // buffer std::stable_sort allocates on every call.
  std::sort(order_c.begin(), order_c.end(), [&](size_t x, size_t y) {
    return piece_sectors[x] < piece_sectors[y] || (piece_sectors[x] == piece_sectors[y] && x < y);
  });
  sizes_c_.clear();
  for (size_t i : order_c) sizes_c_.push_back(piece_sectors[i]);
  release_all(a->extents);
  // Only a plan C that ends before plan A is kept: its searches stop there.
  Plan& c = plan_c_;
  plan_from_here(sizes_c_, head, start, window, mode, a->end, &c);
  if (!c.placed || !(c.end < a->end)) {
    if (c.placed) release_all(c.extents);
    allocate_all(a->extents);
    return;
  }
  // Plan C replaces A, its extents back in piece order.
  a->extents.resize(piece_sectors.size());
  for (size_t k = 0; k < order_c.size(); ++k) a->extents[order_c[k]] = c.extents[k];
  a->end = c.end;
  a->fill = c.fill;
  a->stats = c.stats;
  ++a->stats.small_first_commands;
  *time_order = order_c;
}

bool EagerAllocator::try_one_run(std::span<const uint32_t> piece_sectors, HeadPosition head,
                                 SimTime start, const CylinderWindow& window, PlaceMode mode,
                                 const Plan& a, std::vector<size_t>* time_order,
                                 std::vector<Extent>* out) {
  uint32_t total = 0;
  for (uint32_t len : piece_sectors) total += len;
  if (total > max_spt_) return false;
  // The soonest the run can pass under the head: on the fastest track.
  const SimDuration transfer = fastest_transfer_time(total);
  if (a.placed) release_all(a.extents);
  std::optional<uint32_t> fill_b = fill_track_;
  bool greedy_b = false;
  // Only a run that ends before plan A is taken: the search stops there.
  std::optional<SimDuration> limit;
  if (a.placed && mode != PlaceMode::kRepack) limit = a.end - start - transfer;
  auto b = choose(total, head, start, window, &fill_b, &greedy_b, mode, limit);
  if (!b || (a.placed && !(start + b->locate + transfer_time_on(b->extent.track, total) < a.end))) {
    if (a.placed) allocate_all(a.extents);
    return false;
  }
  out->clear();
  const uint32_t spt = free_.sectors_on(b->extent.track);
  uint32_t sector = b->extent.sector;
  for (uint32_t len : piece_sectors) {
    out->push_back(Extent{b->extent.track, sector, len});
    sector = (sector + len) % spt;
  }
  free_.allocate(b->extent.track, b->extent.sector, total);
  if (fill_b != fill_track_ && fill_b) ++stats_.fill_switches;
  fill_track_ = fill_b;
  ++stats_.contiguous_commands;
  if (time_order) piece_order(piece_sectors.size(), time_order);  // the run is in piece order
  count(stats_, piece_sectors.size(), *b, greedy_b);
  return true;
}

bool EagerAllocator::back_to_back(std::span<const Extent> extents) const {
  for (size_t i = 1; i < extents.size(); ++i) {
    const Extent& p = extents[i - 1];
    if (extents[i].track != p.track ||
        extents[i].sector != (p.sector + p.sectors) % free_.sectors_on(p.track))
      return false;
  }
  return true;
}

bool EagerAllocator::plan_pieces(std::span<const uint32_t> piece_sectors, HeadPosition head,
                                 SimTime start, const CylinderWindow& window,
                                 std::optional<uint32_t>* fill, AllocatorStats* stats,
                                 SimTime* end, PlaceMode mode, std::optional<SimTime> deadline,
                                 std::vector<Extent>* out) {
  const DriveGeometry& g = drive_.geometry();
  out->clear();
  SimTime t = start;
  uint32_t sectors_left = 0;  // to transfer from this piece on
  for (uint32_t len : piece_sectors) sectors_left += len;
  for (uint32_t len : piece_sectors) {
    std::optional<uint32_t> before = *fill;
    bool greedy = false;
    std::optional<SimDuration> limit;  // the latest locate that still meets the deadline
    if (deadline && mode != PlaceMode::kRepack) {
      limit = *deadline - t - fastest_transfer_time(sectors_left);
      if (*limit < SimDuration{0}) {
        release_all(*out);
        return false;
      }
    }
    std::optional<Choice> choice = choose(len, head, t, window, fill, &greedy, mode, limit);
    if (!choice) {
      release_all(*out);
      return false;
    }
    if (*fill && *fill != before) ++stats->fill_switches;
    count(*stats, 1, *choice, greedy);
    const Extent& e = choice->extent;
    free_.allocate(e.track, e.sector, e.sectors);
    out->push_back(e);
    head = HeadPosition{e.track / g.tracks_per_cylinder, e.track % g.tracks_per_cylinder};
    t += choice->locate + transfer_time_on(e.track, e.sectors);
    sectors_left -= len;
  }
  *end = t;
  return true;
}

std::vector<SectorRun> EagerAllocator::runs(std::span<const Extent> extents) const {
  std::vector<SectorRun> out;
  for (const Extent& e : extents)
    for (const SectorRun& r : extent_runs(e, drive_.geometry()))
      out.push_back(r);
  return out;
}

}  // namespace vld
