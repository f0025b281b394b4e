// VldDisk, compaction: emptying tracks so that eager writing finds empty
// tracks again (paper 001, sections 2.3 and 4.2). idle_step() moves one
// live block or map sector per step off a victim track into holes
// elsewhere; repack() packs a fragmented track onto the empty reserve
// track when no free run holds a block. The class, its invariants and its
// thread contract: vld_disk.h.
#include "core/util/checksum.h"
#include "core/vld/vld_disk_impl.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/util/error.h"
#include "core/util/trace.h"

namespace vld {

// ---- compaction -----------------------------------------------------------

std::optional<uint32_t> VldDisk::Impl::compaction_victim() const {
  if (!victim_) return std::nullopt;
  return victim_->track;
}

bool VldDisk::Impl::choose_victim(SimTime now) {
  // Every track of the window that holds data: the candidates, and the
  // holes their blocks can go to.
  std::vector<TrackCensus>& census = census_;  // reused: asked at every idle step
  census.clear();
  const std::optional<uint32_t> fill = alloc_.fill_track();
  for (uint32_t k = 0; k < window_.count; ++k) {
    const uint32_t c = (window_.first + k) % layout_.cylinders;
    for (uint32_t h = 0; h < layout_.heads; ++h) {
      const uint32_t t = c * layout_.heads + h;
      if (t == 0 || free_.is_empty(t)) continue;  // the system track; empty ones
      if (shadow_on_track_[t]) continue;  // an ARU's placed blocks stay put
      census.push_back(TrackCensus{t, free_.sectors_on(t),
                                   free_.sectors_on(t) - free_.free_sectors(t),
                                   free_.holes_for(t, layout_.block_sectors), track_written_[t],
                                   t != fill});
    }
  }
  std::optional<uint32_t> track = compactor_.choose(census, now);
  if (!track) {
    VLD_TRACE(kCompactor, 1,
              "nothing to compact among {} tracks with data in cylinders {}+{}: idle until "
              "the next write",
              census.size(), window_.first, window_.count);
    return false;
  }
  Victim v;
  v.track = *track;
  v.at_start = compactor_.stats();
  live_on(*track, &v.blocks, &v.pieces);
  VLD_TRACE(kCompactor, 1,
            "victim track {} (cylinder {} head {}), {}: {} of {} sectors in use, {} data blocks "
            "and {} map sectors to move; chosen from {} tracks with data in cylinders {}+{}",
            v.track, v.track / layout_.heads, v.track % layout_.heads,
            policy_name(compactor_.options().policy),
            free_.sectors_on(v.track) - free_.free_sectors(v.track), free_.sectors_on(v.track),
            v.blocks.size(), v.pieces.size(), census.size(), window_.first,
            window_.count);
  victim_ = std::move(v);
  alloc_.set_excluded_track(*track);
  return true;
}

// One thing off the victim: false if there is nothing left to move, or a
// move found no hole (the victim is then given up).
bool VldDisk::Impl::move_next(ServiceClock& clock) {
  Victim& v = *victim_;
  const uint64_t victim_first = layout_.track_first_psn(v.track);
  const uint64_t victim_end = victim_first + free_.sectors_on(v.track);
  const auto on_victim = [&](uint64_t psn) { return psn >= victim_first && psn < victim_end; };
  while (v.next_block < v.blocks.size()) {
    const uint64_t b = v.blocks[v.next_block++];
    if (!map_[b].mapped() || !on_victim(map_[b].psn())) continue;  // rewritten meanwhile
    if (!v.read) {
      // The paper's compactor "reads the current track": one revolution
      // puts all of it in the track buffer, so each move reads for free.
      const SimTime before = clock.now;
      read_track(v.track, clock);
      compactor_.costs().read_track.observe(clock.now - before);
      v.read = true;
    }
    const SimTime before = clock.now;
    std::vector<std::byte> data(sb_.block_bytes);
    read_block(b, data.data(), clock);
    std::vector<Update> u{Update{b, data.data()}};
    if (!apply(u, {}, /*fua=*/false, clock, PlaceMode::kHolePlug)) {
      VLD_TRACE(kCompactor, 1, "no hole in the window takes block {} of track {}", b, v.track);
      end_victim(clock, VictimEnd::kNoHole);
      return true;
    }
    compactor_.costs().move.observe(clock.now - before);
    ++compactor_.stats().blocks_moved;
    return true;
  }
  while (v.next_piece < v.pieces.size()) {
    const uint32_t p = v.pieces[v.next_piece++];
    const LogNode& n = log_.node(p);
    if (!n.seq || !on_victim(n.psn)) continue;  // rewritten by a move or a write
    const SimTime before = clock.now;
    std::vector<Update> none;
    if (!apply(none, std::span(&p, 1), /*fua=*/false, clock, PlaceMode::kHolePlug)) {
      VLD_TRACE(kCompactor, 1, "no hole in the window takes map piece {} of track {}", p,
                v.track);
      end_victim(clock, VictimEnd::kNoHole);
      return true;
    }
    compactor_.costs().move.observe(clock.now - before);
    ++compactor_.stats().map_sectors_moved;
    return true;
  }
  return false;
}

size_t VldDisk::Impl::Victim::moves_left() const {
  return (blocks.size() - next_block) + (pieces.size() - next_piece);
}

void VldDisk::Impl::drop_victim() {
  // Nothing was moved off it: no record needed.
  assert(victim_ && victim_->next_block == 0 && victim_->next_piece == 0);
  alloc_.set_excluded_track(std::nullopt);
  victim_.reset();
}

void VldDisk::Impl::record_and_return(ServiceClock& clock, std::optional<CylinderWindow> next_window,
                                const char* why, HeadPosition to) {
  write_record(false, clock, next_window, why, RecordKind::kOrdinary,
               std::span(&to.cylinder, 1));
  // The record leaves the head on the system track, a long seek from the
  // window where the next burst's writes go: go back while still idle
  // (Figure 11: otherwise every burst's first write pays that seek, 2.3 ms
  // on st19101, and the burst's p99 rises above no idle at all).
  const ServiceBreakdown back = drive_.reposition(drive_.head(), to);
  drive_.set_head(to);
  clock.now += back.total();
  clock.breakdown += back;
}

void VldDisk::Impl::end_victim(ServiceClock& clock, VictimEnd how) {
  const bool emptied = how == VictimEnd::kEmptied;
  // The record makes the moves durable and frees the old copies (and
  // whatever else waited on the track): the track is empty, or (cut short)
  // holds only what was not moved yet, and placement may use it again.
  const SimTime before = clock.now;
  record_and_return(clock, std::nullopt, "compaction", drive_.head());
  compactor_.costs().record.observe(clock.now - before);
  if (trace::enabled(trace::Channel::kCompactor)) {
    const CompactorStats& now = compactor_.stats();
    trace::emit(trace::Channel::kCompactor,
                "track {} {}: moved {} data blocks and {} map sectors in {} steps; {} empty "
                "tracks",
                victim_->track,
                emptied ? "emptied" : how == VictimEnd::kCutShort ? "cut short" : "given up",
                now.blocks_moved - victim_->at_start.blocks_moved,
                now.map_sectors_moved - victim_->at_start.map_sectors_moved,
                now.steps - victim_->at_start.steps + 1, free_.empty_tracks());
  }
  if (emptied) {
    ++compactor_.stats().tracks_compacted;
  } else if (how == VictimEnd::kCutShort) {
    ++compactor_.stats().tracks_cut_short;  // not settled: the next idle time goes on
  } else {
    ++compactor_.stats().tracks_abandoned;
    compaction_settled_ = true;  // no hole left: wait for writes to change things
  }
  alloc_.set_excluded_track(std::nullopt);
  victim_.reset();
}

void VldDisk::Impl::next_compaction_window(ServiceClock& clock) {
  // Compaction works in the window (its moves are writes, which recovery
  // must find there), so on its own it empties only the window's tracks:
  // 82 of them on a 256 MiB st19101 disk at 80%, which the next 2,000
  // writes use up before the window moves on into cylinders nobody
  // compacted (docs/benchmarks.md section 11: Table 2 fell from 13x to 6x).
  // So the compactor sweeps: window after window, one log record each, then
  // back to where the writes were, whose window was compacted first; when
  // the writes have spent it, the window moves on ahead of the head, into
  // cylinders compacted too.
  assert(sweep_pending());
  if (windows_compacted_ + 1 < windows_on_disk()) {
    if (windows_compacted_ == 0) {
      sweep_home_ = window_.first;
      sweep_head_ = drive_.head();
    }
    ++windows_compacted_;
    write_record(false, clock, window_at(window_.first + options_.window_cylinders),
                 "compaction: the next window");
    return;
  }
  record_and_return(clock, window_at(*sweep_home_), "compaction: back to the writes", sweep_head_);
  sweep_home_.reset();
}

uint32_t VldDisk::Impl::windows_on_disk() const {
  const uint32_t width = options_.window_cylinders;
  return (layout_.cylinders + width - 1) / width;
}

bool VldDisk::Impl::sweep_pending() const {
  if (windows_on_disk() <= 1) return false;
  return windows_compacted_ + 1 < windows_on_disk() ||
         (sweep_home_ && window_.first != *sweep_home_);
}


// Whether a step predicted to take `cost` ends by `idle_ends`.
static bool fits(SimTime start, SimTime idle_ends, SimDuration cost) {
  return idle_ends == kUnknownIdleEnd || (idle_ends >= start && idle_ends - start >= cost);
}

std::optional<Completion> VldDisk::Impl::idle_checkpoint(SimTime start, SimTime idle_ends) {
  // Idle-time work belongs to the compactor (compactor=off: idle time does
  // nothing), and compaction goes first: its moves scatter map sectors too.
  // A few scattered pieces are not worth a record's trip.
  // One under way (spread over requests) is finished here whatever its size.
  const uint32_t every = options_.checkpoint_every_map_sectors;
  if (every == 0) return std::nullopt;
  if (!delta_.active && scattered_pieces_.size() < std::max<uint32_t>(1, every / 8))
    return std::nullopt;
  if (!compactor_.options().enabled || !compaction_settled_ || victim_ || next_reserve_)
    return std::nullopt;
  // The groups go into holes near the head, about a pass per track they
  // fill (the smallest tracks: the most passes); a worst-case record and
  // the way back to the head after it.
  const DriveGeometry& g = drive_.geometry();
  const uint64_t sectors = delta_.active
                               ? delta_.todo.size() - delta_.done + scattered_pieces_.size()
                               : scattered_pieces_.size() * 3 / 2;
  const uint64_t passes = 2 + 2 * sectors / g.min_sectors_per_track();
  const SimDuration cost = g.revolution() * static_cast<int64_t>(passes) +
                           2 * compactor_.costs().record.max();
  if (!fits(start, idle_ends, cost)) return std::nullopt;
  ServiceClock clock{start, {}, true, 0, 0};
  const HeadPosition home = drive_.head();
  if (!delta_.active) begin_delta();
  if (!advance_delta(clock, PlaceMode::kHolePlug, SIZE_MAX)) {
    if (clock.now == start) return std::nullopt;
    return finish(clock);  // given up part way (no room): what it wrote took time
  }
  ++stats_.idle_delta_checkpoints;
  record_and_return(clock, std::nullopt, "idle delta checkpoint", home);
  return finish(clock);
}

std::optional<Completion> VldDisk::Impl::idle_step(SimTime start, SimTime idle_ends) {
  return store_->run_own_work("idle-time compaction", [&] { return idle_work(start, idle_ends); });
}

std::optional<Completion> VldDisk::Impl::idle_work(SimTime start, SimTime idle_ends) {
  if (auto done = idle_checkpoint(start, idle_ends)) return done;
  if (!compactor_.options().enabled || compaction_settled_) return std::nullopt;
  const CompactionCosts& cost = compactor_.costs();
  const auto declined = [this]() -> std::optional<Completion> {
    ++compactor_.stats().steps_declined;
    return std::nullopt;
  };
  // The drive's own work: no host command, so no controller overhead.
  ServiceClock clock{start, {}, true, 0, 0};
  if (next_reserve_) {
    // The last repack's victim keeps the excluded track until a record
    // frees it: idle time writes that record first.
    if (!fits(start, idle_ends, cost.record.max())) return declined();
    write_record(false, clock, std::nullopt, "repack: the last victim freed");
    return finish(clock);
  }
  if (!victim_ && block_runs_scarce()) {
    // Few free runs hold a block, and hole-plugging needs them: repack now,
    // so that the next writes need not (each repack is one step).
    if (!fits(start, idle_ends, cost.repack.max())) return declined();
    if (repack(clock, RepackFor::kIdle)) {
      compactor_.costs().repack.observe(clock.now - start);
      ++stats_.idle_repacks;
      ++compactor_.stats().steps;
      compactor_.stats().busy += clock.now - start;
      return finish(clock);
    }
    if (clock.now > start) return finish(clock);  // it wrote a record, found nothing to move
  }
  if (!victim_) {
    if (!choose_victim(start)) {
      if (!sweep_pending()) {
        compaction_settled_ = true;
        return std::nullopt;
      }
      // Nothing left in this window: on to the next one (a record).
      if (!fits(start, idle_ends, cost.record.max())) return declined();
      next_compaction_window(clock);
      ++compactor_.stats().steps;
      compactor_.stats().busy += clock.now - start;
      return finish(clock);
    }
    // A victim only if the idle time is expected to empty all of it: a
    // track half-emptied when the burst comes is kept out of placement and
    // its moved blocks hold holes twice until the record (docs/compaction.md,
    // section 2a).
    if (!fits(start, idle_ends, cost.whole_track(victim_->moves_left(), false))) {
      drop_victim();
      return declined();
    }
  } else if (!fits(start, idle_ends,
                   victim_->moves_left() > 0 ? cost.next_move() : cost.record.max())) {
    // The moves took longer than predicted: rather than leave the track
    // half-emptied for the next burst, close it with the record (the moved
    // blocks' old copies are freed and placement may use the track), if
    // that fits; a later idle period chooses a victim afresh.
    if (victim_->moves_left() == 0 || !fits(start, idle_ends, cost.record.max()))
      return declined();
    end_victim(clock, VictimEnd::kCutShort);
    ++compactor_.stats().steps;
    compactor_.stats().busy += clock.now - start;
    return finish(clock);
  }
  if (!move_next(clock)) end_victim(clock, VictimEnd::kEmptied);
  ++compactor_.stats().steps;
  compactor_.stats().busy += clock.now - start;
  return finish(clock);
}

// ---- running out of room for whole blocks ------------------------------------

bool VldDisk::Impl::block_runs_scarce() const {
  // Fewer tracks with a free run that holds a block than the largest track
  // holds blocks (an empty track counts for all it holds), the reserve
  // aside. The longest run is cached per track, so this costs one look per
  // track.
  const uint32_t enough = layout_.max_track_sectors() / layout_.block_sectors;
  uint32_t runs = 0;
  for (uint32_t t = 1; t < layout_.tracks && runs < enough; ++t) {
    if (!alloc_.usable(t)) continue;
    if (free_.is_empty(t)) runs += free_.sectors_on(t) / layout_.block_sectors;
    else if (free_.longest_free_run(t) >= layout_.block_sectors) ++runs;
  }
  return runs < enough;
}

void VldDisk::Impl::choose_reserve() {
  // The last empty track: far from where a new image's writes begin, so the
  // reserve changes nothing until the disk fills.
  alloc_.set_reserved_track(std::nullopt);
  for (uint32_t t = layout_.tracks; t-- > 1;)
    if (free_.is_empty(t) && alloc_.usable(t)) {
      alloc_.set_reserved_track(t);
      break;
    }
  VLD_TRACE(kAllocator, 1, "reserve track: {}",
            alloc_.reserved_track() ? std::to_string(*alloc_.reserved_track()) : "none (no empty track)");
}

std::vector<std::pair<uint32_t, uint32_t>> VldDisk::Impl::repack_victims(uint32_t reserve) const {
  // Victims in order of the free sectors they would turn into one run;
  // worth it only if the run left on the reserve after the blocks holds a
  // block (the move's map sectors go elsewhere): otherwise repacking could
  // go round the tracks for ever.
  std::vector<std::pair<uint32_t, uint32_t>> by_free;  // (free sectors, track)
  for (uint32_t t = 1; t < layout_.tracks; ++t)
    if (t != reserve && !free_.is_empty(t) && shadow_on_track_[t] == 0 &&
        free_.free_sectors(t) >= layout_.block_sectors &&
        (blocks_on_.count(t) + 1) * layout_.block_sectors <= free_.sectors_on(reserve))
      by_free.emplace_back(free_.free_sectors(t), t);
  std::sort(by_free.begin(), by_free.end(), std::greater<>());
  return by_free;
}

bool VldDisk::Impl::repack_gains(uint32_t track, uint32_t reserve, std::span<const uint64_t> blocks,
                           std::span<const uint32_t> pieces) const {
  // The move's group rewrites the map sector of every piece it touches
  // (its blocks' and those whose map sector is on the track), plus a relay
  // or two, and they may land on the reserve beside the blocks. Unless the
  // run left there holds more blocks than the victim's runs hold now,
  // repacking gains nothing, and the next idle step would pick the track it
  // just filled and move the same blocks back (found on a small disk: a
  // record and a revolution every step, for ever). A write that finds no
  // room cannot be this choosy: it takes a run that holds one block, and a
  // write is placed between any two of its repacks.
  const size_t touched = touched_pieces(pieces, blocks, [](uint64_t b) { return b; }).size();
  constexpr uint64_t kRelays = 2;
  const uint64_t used = blocks.size() * layout_.block_sectors + touched + kRelays;
  const uint32_t room = free_.sectors_on(reserve);
  if (used >= room) return false;
  const uint64_t holds_after = (room - used) / layout_.block_sectors;
  return holds_after > free_.holes_for(track, layout_.block_sectors);
}

bool VldDisk::Impl::repack_now(SimTime start) {
  ServiceClock clock = begin(start);
  return repack(clock);
}

bool VldDisk::Impl::repack(ServiceClock& clock, RepackFor why) {
  // One track at a time is kept out of placement: give up the compactor's
  // (its record also frees the last repack's victim, if one waits).
  if (victim_) end_victim(clock, VictimEnd::kNoHole);
  // The last repack's victim is the reserve once a record frees its old
  // copies, and the moves go to the reserve, so the window must hold it:
  // one record does both. It also frees whatever else waited, so the free
  // counts below are true.
  if (next_reserve_)
    write_record(false, clock, window_at(*next_reserve_ / layout_.heads),
                 "repack: the last victim freed");
  const std::optional<uint32_t> reserve = alloc_.reserved_track();
  if (!reserve || !free_.is_empty(*reserve)) return false;
  if (!window_.contains(*reserve / layout_.heads, layout_.cylinders))
    write_record(false, clock, window_at(*reserve / layout_.heads),
                 "repack: window to the reserve");

  for (const auto& [free_sectors, track] : repack_victims(*reserve)) {
    std::vector<uint64_t> blocks;
    std::vector<uint32_t> pieces;
    live_on(track, &blocks, &pieces);
    if (why == RepackFor::kIdle && !repack_gains(track, *reserve, blocks, pieces)) continue;
    // Read the whole track (one revolution); a block that fails its
    // checksum is not moved (a new checksum would hide the damage): try
    // the next track.
    const SimTime started = clock.now;
    read_track(track, clock);
    std::vector<std::vector<std::byte>> data(blocks.size(), std::vector<std::byte>(sb_.block_bytes));
    bool damaged = false;
    for (size_t i = 0; i < blocks.size() && !damaged; ++i) {
      store_read(extent_of(map_[blocks[i]]), data[i].data());
      damaged = data_checksum(data[i].data(), sb_.block_bytes, blocks[i]) != map_[blocks[i]].checksum;
    }
    if (damaged) {
      VLD_TRACE(kAllocator, 1, "repack: track {} holds a damaged block; not moving it", track);
      continue;
    }
    std::vector<Update> updates;
    for (size_t i = 0; i < blocks.size(); ++i) updates.push_back(Update{blocks[i], data[i].data()});
    alloc_.set_excluded_track(track);
    bool moved = false;
    try {
      moved = apply(updates, pieces, /*fua=*/false, clock, PlaceMode::kRepack);
    } catch (const Error&) {
      alloc_.set_excluded_track(std::nullopt);  // as before the repack
      throw;
    }
    if (!moved) {
      alloc_.set_excluded_track(std::nullopt);
      return false;
    }
    // The reserve now holds the victim's blocks, and the victim (still
    // excluded from placement) is empty once the next record frees their
    // old copies: it is the next reserve (write_record).
    alloc_.set_reserved_track(std::nullopt);
    next_reserve_ = track;
    ++stats_.repacks;
    stats_.repack_blocks_moved += blocks.size();
    stats_.repack_time += clock.now - started;
    VLD_TRACE(kAllocator, 1,
              "repacked track {} ({} free sectors in runs shorter than a block) onto reserve "
              "track {}: {} data blocks, {} map pieces; {} sectors free in one run there; "
              "{:.1f} us",
              track, free_sectors, *reserve, blocks.size(), pieces.size(),
              free_.free_sectors(*reserve), to_us(clock.now - started));
    return true;
  }
  return false;
}

}  // namespace vld
