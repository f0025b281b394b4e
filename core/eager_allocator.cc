#include "core/eager_allocator.h"

#include <cmath>

namespace vld {

EagerAllocator::EagerAllocator(const DriveModel& drive, FreeSpaceMap& free_space,
                               AllocatorPolicy policy)
    : drive_(drive), free_(free_space), policy_(policy) {}

uint32_t EagerAllocator::sector_under_head(uint32_t cylinder, uint32_t head, SimTime at) const {
  const DriveGeometry& g = drive_.geometry();
  const uint32_t spt = g.sectors_per_track;
  uint32_t slot = drive_.next_slot(at);
  uint32_t offset = g.angular_slot(Chs{cylinder, head, 0});  // slot of sector 0
  return (slot + spt - offset) % spt;
}

std::optional<EagerAllocator::Choice> EagerAllocator::on_track(uint32_t track, uint32_t len,
                                                               HeadPosition from,
                                                               SimTime at) const {
  const DriveGeometry& g = drive_.geometry();
  HeadPosition to{track / g.tracks_per_cylinder, track % g.tracks_per_cylinder};
  ServiceBreakdown move = drive_.reposition(from, to);
  SimTime arrive = at + move.seek + move.head_switch;
  uint32_t first = sector_under_head(to.cylinder, to.head, arrive);
  auto run = free_.first_free_run(track, first, len);
  if (!run) return std::nullopt;
  SimDuration wait =
      drive_.rotational_wait(arrive, g.angular_slot(Chs{to.cylinder, to.head, run->sector}));
  return Choice{Extent{track, run->sector, len}, move.seek + move.head_switch + wait};
}

std::optional<EagerAllocator::Choice> EagerAllocator::nearest(uint32_t len, HeadPosition head,
                                                              SimTime at,
                                                              const CylinderWindow& window) const {
  const DriveGeometry& g = drive_.geometry();
  const uint32_t cylinders = drive_.simulated_cylinders();
  std::optional<Choice> best;
  // Cylinders ahead of the head, one way, wrapping; inside the window. A
  // cylinder d away costs at least seek(d), so stop once that exceeds the
  // best found.
  for (uint32_t d = 0; d < cylinders; ++d) {
    uint32_t c = (head.cylinder + d) % cylinders;
    if (!window.contains(c, cylinders)) {
      if (d == 0) continue;  // head outside the window: look ahead for it
      if (best) break;
      continue;
    }
    if (best && d > 0 && g.seek.time(d) >= best->locate) break;
    for (uint32_t h = 0; h < g.tracks_per_cylinder; ++h) {
      uint32_t track = c * g.tracks_per_cylinder + h;
      if (free_.free_sectors(track) < len) continue;
      auto choice = on_track(track, len, head, at);
      if (choice && (!best || choice->locate < best->locate)) best = choice;
    }
  }
  return best;
}

std::optional<uint32_t> EagerAllocator::nearest_empty_track(HeadPosition head, SimTime at,
                                                            const CylinderWindow& window) const {
  if (free_.empty_tracks() == 0) return std::nullopt;
  const DriveGeometry& g = drive_.geometry();
  const uint32_t cylinders = drive_.simulated_cylinders();
  std::optional<uint32_t> best;
  SimDuration best_cost{};
  for (uint32_t d = 0; d < cylinders; ++d) {
    uint32_t c = (head.cylinder + d) % cylinders;
    if (!window.contains(c, cylinders)) {
      if (best) break;
      continue;
    }
    if (best && d > 0 && g.seek.time(d) >= best_cost) break;
    for (uint32_t h = 0; h < g.tracks_per_cylinder; ++h) {
      uint32_t track = c * g.tracks_per_cylinder + h;
      if (!free_.is_empty(track)) continue;
      // An empty track can be written from wherever the head lands on it.
      ServiceBreakdown move = drive_.reposition(head, HeadPosition{c, h});
      SimDuration cost = move.seek + move.head_switch;
      if (!best || cost < best_cost) {
        best = track;
        best_cost = cost;
      }
    }
  }
  (void)at;
  return best;
}

bool EagerAllocator::fill_track_usable(uint32_t len, const CylinderWindow& window) const {
  if (!fill_track_) return false;
  const DriveGeometry& g = drive_.geometry();
  uint32_t track = *fill_track_;
  if (!window.contains(track / g.tracks_per_cylinder, drive_.simulated_cylinders())) return false;
  double used = 1.0 - static_cast<double>(free_.free_sectors(track)) / g.sectors_per_track;
  // Below the threshold, and the piece still fits somewhere on the track.
  return used < policy_.fill_fraction && free_.free_sectors(track) >= len;
}

std::optional<std::vector<Extent>> EagerAllocator::place(std::span<const uint32_t> piece_sectors,
                                                         HeadPosition head, SimTime start,
                                                         const CylinderWindow& window) {
  SimTime greedy_end;
  auto greedy = place_greedy(piece_sectors, head, start, window, &greedy_end);
  if (piece_sectors.size() < 2) return greedy;
  // The whole command in one run, if that ends sooner: data and its map
  // sectors back to back in one pass, rather than the data in the nearest
  // hole and the map sector wherever the next free sector is. Freed data
  // leaves holes of exactly one block, so the greedy plan often pays a
  // second locate for the map.
  uint32_t total = 0;
  for (uint32_t len : piece_sectors) total += len;
  if (total > drive_.geometry().sectors_per_track) return greedy;
  if (greedy)
    for (const Extent& e : *greedy) free_.release(e.track, e.sector, e.sectors);
  auto one = nearest(total, head, start, window);
  if (one && (!greedy || start + one->locate + drive_.transfer_time(total) < greedy_end)) {
    std::vector<Extent> out;
    const uint32_t spt = drive_.geometry().sectors_per_track;
    uint32_t sector = one->extent.sector;
    for (uint32_t len : piece_sectors) {
      out.push_back(Extent{one->extent.track, sector, len});
      sector = (sector + len) % spt;
    }
    free_.allocate(one->extent.track, one->extent.sector, total);
    ++stats_.contiguous_commands;
    return out;
  }
  if (greedy)
    for (const Extent& e : *greedy) free_.allocate(e.track, e.sector, e.sectors);
  return greedy;
}

std::optional<std::vector<Extent>> EagerAllocator::place_greedy(
    std::span<const uint32_t> piece_sectors, HeadPosition head, SimTime start,
    const CylinderWindow& window, SimTime* end) {
  const DriveGeometry& g = drive_.geometry();
  std::vector<Extent> out;
  SimTime t = start;
  auto undo = [&] {
    for (const Extent& e : out) free_.release(e.track, e.sector, e.sectors);
  };
  for (uint32_t len : piece_sectors) {
    std::optional<Choice> choice;
    // The fill track, while it is below the threshold and the piece fits in
    // one of its free runs (the holes the head passes during a command's
    // overhead fit map sectors, not data: a track with no run long enough
    // is full for this piece).
    // Moving to the nearest empty track wins when it is sooner: the
    // threshold is the most a track is filled, not a reason to wait a
    // revolution for its last hole.
    if (fill_track_usable(len, window)) choice = on_track(*fill_track_, len, head, t);
    std::optional<Choice> fresh;
    std::optional<uint32_t> empty = nearest_empty_track(head, t, window);
    if (empty) fresh = on_track(*empty, len, head, t);
    if (fresh && (!choice || fresh->locate < choice->locate)) {
      choice = fresh;
      fill_track_ = empty;
      ++stats_.fill_switches;
    }
    if (!choice) {
      choice = nearest(len, head, t, window);
      if (choice) ++stats_.greedy_pieces;
    }
    if (!choice) {
      undo();
      return std::nullopt;
    }
    const Extent& e = choice->extent;
    free_.allocate(e.track, e.sector, e.sectors);
    out.push_back(e);
    ++stats_.pieces;
    stats_.skipped_sectors += static_cast<uint64_t>(
        std::llround(to_us(choice->locate) * 1e3 / g.sector_time_ns()));
    head = HeadPosition{e.track / g.tracks_per_cylinder, e.track % g.tracks_per_cylinder};
    t += choice->locate + drive_.transfer_time(e.sectors);
  }
  *end = t;
  return out;
}

std::vector<SectorRun> EagerAllocator::runs(std::span<const Extent> extents) const {
  const uint32_t spt = drive_.geometry().sectors_per_track;
  std::vector<SectorRun> out;
  for (const Extent& e : extents) {
    uint64_t base = uint64_t{e.track} * spt;
    uint32_t first = std::min(e.sectors, spt - e.sector);
    out.push_back(SectorRun{base + e.sector, first});
    if (first < e.sectors) out.push_back(SectorRun{base, e.sectors - first});
  }
  return out;
}

}  // namespace vld
