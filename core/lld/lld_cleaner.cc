// The segment cleaner of mode=lld and its idle-time work (LldDisk::Impl;
// lld_disk_impl.h). Paper 001 sections 3.4 and 5.5; Sprite LFS section 3.
//
// Cleaning a victim reads the whole segment through the drive model (as
// Sprite LFS does), writes its live blocks at the log head and leaves it
// empty. Empty segments are freed only by the next checkpoint
// (write_checkpoint): until the checkpoint is durable, recovery may still
// roll forward through them. The cleaner runs
//   - before a request when fewer than the request needs (plus one spare)
//     are free, and during an NVRAM drain below kCleanerLowSegments;
//   - in idle time (idle_step), one drive command per step, each expected
//     to end before the next request arrives: a victim's read, then writes
//     of its live blocks, as many per write as the idle period holds (see
//     "idle time" below).
#include <algorithm>
#include <cassert>
#include <iterator>

#include "core/lld/lld_disk_impl.h"
#include "core/util/error.h"
#include "core/util/host_phases.h"

namespace vld {

namespace {

// Idle-time cleaning leaves segments at least this full alone: moving a
// nearly full segment frees almost nothing, and would churn for ever.
constexpr uint32_t kIdleVictimMaxLivePercent = 90;

// Sectors of one write of k moved blocks (each a data entry).
uint32_t move_sectors(size_t k, const LldShape& shape) {
  return static_cast<uint32_t>(
      write_sectors(static_cast<uint32_t>(k), static_cast<uint32_t>(k), shape));
}

}  // namespace

uint32_t LldDisk::Impl::segments_for_entries(size_t entries) const {
  // Each closed segment takes at least blocks_per_write_ entries, except the
  // open one, which may be nearly full already.
  return static_cast<uint32_t>((entries + blocks_per_write_ - 1) / blocks_per_write_) + 1;
}

size_t LldDisk::Impl::group_capacity_entries() const {
  // What the open segment's room holds, and whole free segments beyond; it
  // leaves one free segment after the group (two when there were two), so
  // every close finds a segment to open and the cleaner room to move into.
  const uint32_t free = usage_.free_count();
  if (free == 0) return 0;
  const uint32_t room = room_sectors();
  const uint32_t summary = summary_sectors(blocks_per_write_);
  const size_t room_entries = room > summary ? (room - summary) / shape_.block_sectors : 0;
  return room_entries + size_t{free >= 2 ? free - 2 : 0} * blocks_per_write_;
}

uint64_t LldDisk::Impl::atomic_write_blocks() const {
  // room_for_request refuses a request only when, after cleaning, the free
  // segments cannot take it beside the memory copy. Cleaning can always
  // pack the live blocks, every export block at worst, into the fewest
  // segments that hold them; group_capacity_entries then counts the other
  // segments but the two it leaves free, and the memory copy (nvram=0)
  // holds less than one segment's entries (the rest are written out). With
  // NVRAM a request up to the region's records is whole anyway (replay).
  // Pinned by LldAtomicWrites.* on full, aged disks.
  const uint64_t min_segments = lld_min_segments(shape_.logical_blocks, blocks_per_write_);
  assert(layout_.segment_count >= min_segments);  // the layout's own invariant
  const uint64_t spare = layout_.segment_count - (min_segments - kLldCleanerReserveSegments);
  // One segment more is kept back as a margin. Probing full aged disks of
  // 1 MiB and 64 MiB with a binary search for the shortest write that
  // found no room found at least 3 blocks more than the bound without it.
  const uint64_t kept_free = has_nvram() ? 3 : 4;  // and one for the memory copy
  uint64_t blocks = spare > kept_free ? (spare - kept_free) * blocks_per_write_ : 1;
  if (has_nvram()) blocks = std::max<uint64_t>(blocks, layout_.nvram_records);
  return blocks;
}

uint64_t LldDisk::Impl::atomic_write_bytes() const {
  // A request of n bytes at any alignment touches at most n / block + 1
  // blocks: one fewer than atomic_write_blocks, or one aligned block.
  return std::max<uint64_t>(atomic_write_blocks() - 1, 1) * block_bytes();
}

bool LldDisk::Impl::moves_fit(uint32_t victim, uint32_t reserve) const {
  return blocks_fit(usage_.usage(victim).live_blocks, room_sectors(), usage_.free_count(), reserve);
}

bool LldDisk::Impl::blocks_fit(uint32_t live, uint32_t room, uint32_t free,
                               uint32_t reserve) const {
  // As write_moves lays them out: the open segment's room, then whole
  // segments. Every segment it closes (full, or left without room for one
  // more block) opens a free one, so the closes must not outnumber the free
  // segments; moves that just fill the room need a free segment too.
  uint32_t closes = 0;
  while (live > 0) {
    uint32_t k = 0;
    while (k < live && move_sectors(k + 1, shape_) <= room) ++k;
    if (k == 0) return false;  // must_close_after keeps room for a block; never here
    live -= k;
    room -= move_sectors(k, shape_);
    if (live > 0 || room < 1 + shape_.block_sectors) {
      ++closes;
      room = shape_.segment_sectors;
    }
  }
  return closes + reserve <= free;
}

std::vector<LldDisk::Impl::VictimBlock> LldDisk::Impl::live_blocks_of(uint32_t victim) const {
  assert(usage_.state(victim) == SegmentState::kFull);
  const uint64_t first = layout_.segment_first_psn(victim);
  std::vector<uint32_t> blocks = segment_blocks_[victim];  // cleared when the segment is freed
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  std::vector<VictimBlock> live;
  for (uint32_t b : blocks) {
    const BlockMapEntry& m = map_[b];
    if (m.psn_plus_one == 0 || psn_of(m) < first || psn_of(m) >= first + shape_.segment_sectors)
      continue;
    VictimBlock v;
    v.psn = psn_of(m);
    v.entry.logical_block = b;
    v.entry.version = m.version;
    v.entry.checksum = m.checksum;
    live.push_back(std::move(v));
  }
  assert(live.size() == usage_.usage(victim).live_blocks);
  return live;
}

std::span<const unsigned char> LldDisk::Impl::read_victim_run(const SectorRun& run) {
  const size_t n = size_t{run.count} * kSectorBytes;
  if (victim_buffer_.size() < n) victim_buffer_.resize(n);
  const std::span<unsigned char> bytes(victim_buffer_.data(), n);
  store_->read(sb_.platter_offset + run.first_psn * kSectorBytes, std::as_writable_bytes(bytes));
  return bytes;
}

void LldDisk::Impl::fill_blocks(std::span<VictimBlock> blocks, const SectorRun& run,
                                std::span<const unsigned char> bytes) const {
  for (VictimBlock& v : blocks) {
    assert(v.psn >= run.first_psn && v.psn + shape_.block_sectors <= run.first_psn + run.count);
    const auto at = static_cast<ptrdiff_t>((v.psn - run.first_psn) * kSectorBytes);
    v.entry.data.assign(bytes.begin() + at, bytes.begin() + at + block_bytes());
  }
}

void LldDisk::Impl::clean_segment(uint32_t victim, LldClock& c) {
  assert(!in_group_ && usage_.state(victim) == SegmentState::kFull);
  std::vector<VictimBlock> live;
  if (idle_victim_ && idle_victim_->segment == victim && idle_victim_current()) {
    live = take_idle_victim(c);  // what idle time read is not read again
  } else {
    // The whole segment in one read, as Sprite LFS does.
    live = live_blocks_of(victim);
    const SectorRun whole{layout_.segment_first_psn(victim), shape_.segment_sectors};
    c.add(drive_.read(std::span(&whole, 1), c.now));
    stats_.cleaner_sectors_read += whole.count;
    fill_blocks(live, whole, read_victim_run(whole));
  }
  // The moves in block order.
  std::sort(live.begin(), live.end(), [](const VictimBlock& x, const VictimBlock& y) {
    return x.entry.logical_block < y.entry.logical_block;
  });
  std::vector<const LogEntry*> moves;
  for (const VictimBlock& v : live) moves.push_back(&v.entry);
  write_moves(moves, c);
  assert(usage_.usage(victim).live_blocks == 0);
  ++stats_.segments_cleaned;
  stats_.cleaner_blocks_moved += moves.size();
}

std::vector<LldDisk::Impl::VictimBlock> LldDisk::Impl::take_idle_victim(LldClock& c) {
  forget_moved_away();
  IdleVictim v = std::move(*idle_victim_);
  idle_victim_.reset();
  if (v.read < v.blocks.size()) {  // the rest in one run, as idle_read reads
    const uint64_t from = v.blocks[v.read].psn;
    const SectorRun run{from,
                        static_cast<uint32_t>(v.blocks.back().psn + shape_.block_sectors - from)};
    c.add(drive_.read(std::span(&run, 1), c.now));
    stats_.cleaner_sectors_read += run.count;
    fill_blocks(std::span(v.blocks).subspan(v.read), run, read_victim_run(run));
  }
  return {std::make_move_iterator(v.blocks.begin() + static_cast<ptrdiff_t>(v.next)),
          std::make_move_iterator(v.blocks.end())};
}

void LldDisk::Impl::write_moves(const std::vector<const LogEntry*>& moves, LldClock& c) {
  size_t i = 0;
  while (i < moves.size()) {
    // As many as fit the open segment's room; close it if more follow.
    const uint32_t room = room_sectors();
    size_t k = 0;
    while (i + k < moves.size() && move_sectors(k + 1, shape_) <= room) ++k;
    assert(k > 0);
    const std::vector<const LogEntry*> entries(moves.begin() + i, moves.begin() + i + k);
    const uint32_t sectors = move_sectors(k, shape_);
    const bool close = i + k < moves.size() || must_close_after(sectors);
    emit_write(entries, close, /*continues=*/false, c);
    i += k;
  }
}

bool LldDisk::Impl::clean_until(uint32_t target_free, LldClock& c, uint32_t must_free) {
  HostPhaseTimer phase_timer(HostPhase::kAllocator);
  assert(!in_group_);
  const SimTime before = c.now;
  // Twice the segments: a checkpoint in the loop (below) lets it clean
  // victims it had to pass over before.
  for (uint32_t guard = 0; guard < 2 * usage_.segment_count(); ++guard) {
    if (usage_.free_count() + usage_.empty_full_count() >= target_free) break;
    auto victim = pick_victim(usage_, options_.cleaner_policy, next_seq_, /*skip_empty=*/true);
    if (!victim) break;
    // No reserve: the checkpoint below frees every victim emptied. When the
    // moves no longer fit the free segments, the victims emptied so far do
    // once a checkpoint frees them: without this, a request could find the
    // live blocks far from packed and be split (atomic_write_blocks).
    if (!moves_fit(*victim, /*reserve=*/0)) {
      const uint32_t freed = usage_.free_count() + usage_.empty_full_count();
      if (freed >= must_free || usage_.empty_full_count() == 0) break;
      write_checkpoint(false, c);
      if (!moves_fit(*victim, /*reserve=*/0)) break;
    }
    clean_segment(*victim, c);
  }
  const bool freed = usage_.empty_full_count() > 0;
  if (freed) write_checkpoint(false, c);
  stats_.cleaning_time += c.now - before;
  return freed;
}

// ---- idle time ----------------------------------------------------------------
//
// Idle work must never make a request slower than no idle work at all: a
// step still under way when a request arrives delays it, and the cleaner
// "moves segment-sized data" (paper 001, section 5.5). So each step is one
// drive command whose end the drive model predicts from where the head is
// (DriveModel::estimate; a read is predicted without the track buffer, so
// never too early), and it starts only if it is expected to end by
// idle_ends (IdleGapPredictor). Writes at the log head take only as many
// blocks as end in time; cleaning a victim is a read, then writes of its
// live blocks, then, for a batch of victims, the checkpoint that frees them.
//
// Nor may it make later bursts slower by what it leaves behind: a few
// blocks moved in each short pause change which victims the request
// path's greedy cleaner meets and add partial writes, and gain little
// (the cleaner "moves segment-sized data", section 5.5). So a victim's
// moves begin only in a pause that holds a whole segment's write where the
// open segment lies, and with NVRAM the buffer drains only in such a
// pause: a few blocks drained early move where the region resets and
// every later drain falls. A shorter pause only reads victims; a read
// moves nothing and is kept for whichever cleaner takes the victim, and a
// victim read but not moved does not hold up the drain
// (docs/benchmarks.md, section 6a, has the rule measured against pauses
// with no idle work).

namespace {

// Whether work that would end at `end` ends by `idle_ends`.
bool ends_by(SimTime end, SimTime idle_ends) {
  return idle_ends == kUnknownIdleEnd || end <= idle_ends;
}

}  // namespace

std::optional<Completion> LldDisk::Impl::idle_step(SimTime start, SimTime idle_ends) {
  std::optional<Completion> step =
      store_->run_own_work("idle-time cleaning", [&] { return idle_work(start, idle_ends); });
  if (step) changed_since_open_ = true;
  return step;
}

std::optional<Completion> LldDisk::Impl::idle_work(SimTime start, SimTime idle_ends) {
  assert(!in_group_);
  LldClock c{start};
  // Point D of paper 001's Figure 10: idle time long enough writes the
  // buffered burst out, a write at a time, before it cleans; but a victim
  // whose moves began is finished first, and with too few free segments
  // to write into, cleaning comes first. A pause too short for a
  // segment's write only reads victims.
  const bool drain = has_nvram() && !pending_.empty();
  const bool room = usage_.free_count() >= kCleanerLowSegments;
  const bool moving = idle_victim_ && idle_victim_->next > 0;
  if (drain && room && !moving) {
    const bool did = pause_holds_a_segment_write(c.now, idle_ends)
                         ? idle_drain_write(idle_ends, c)
                         : idle_clean_step(0, /*reads_only=*/true, idle_ends, c);
    return did ? std::optional(c.done()) : std::nullopt;
  }
  // Idle cleaning checkpoints only now and then, so it must leave free what
  // the memory copy's writes (nvram=0) need when a flush or FUA forces them
  // out, as admitting a request does: a move takes the room they counted on.
  // While the NVRAM holds blocks, none: they are durable in the region, and
  // the drain cleans until it has room (clean_until, as the request path's
  // drain does); a victim left half-moved is always one whose other blocks
  // fit the free segments (idle_move_write), so the drain's cleaner can
  // finish it.
  const uint32_t reserve = drain ? 0 : segments_for_entries(pending_.live_entries());
  if (idle_clean_step(reserve, /*reads_only=*/false, idle_ends, c)) return c.done();
  // With room to drain, only a victim whose moves began came here: one let
  // go (its moves no longer fit) leaves the drain to go on.
  if (drain && room && !idle_victim_ && pause_holds_a_segment_write(c.now, idle_ends) &&
      idle_drain_write(idle_ends, c))
    return c.done();
  return std::nullopt;
}

bool LldDisk::Impl::idle_drain_write(SimTime idle_ends, LldClock& c) {
  const std::vector<const LogEntry*> chain = pending_chain();
  const auto [room_fits, k] = entries_that_fit(chain, c.now, idle_ends);
  // Only a write that fills the open segment or empties the buffer: a
  // few blocks at a time would each cost a summary sector and a partial
  // write, and a block written out early and then rewritten before the
  // region resets is written twice (and its first copy cleaned).
  if (k == 0 || (k < room_fits && k < chain.size())) return false;
  const std::vector<const LogEntry*> part(chain.begin(), chain.begin() + static_cast<ptrdiff_t>(k));
  uint32_t data = 0;
  for (const LogEntry* e : part) data += e->is_trim() ? 0 : 1;
  const auto sectors =
      static_cast<uint32_t>(write_sectors(static_cast<uint32_t>(k), data, shape_));
  // Closed only when full: the buffer goes on into the same segment next time.
  const bool close = must_close_after(sectors) || (k < chain.size() && k == room_fits);
  const SimTime before = c.now;
  emit_write(part, close, /*continues=*/false, c);  // each buffered entry ends its request
  stats_.client_blocks_written += data;
  for (size_t i = 0; i < k; ++i) pending_.pop_front();
  if (pending_.empty()) {
    sync(c);  // the segments hold every buffered block before the region forgets them
    nvram_reset(c);
  }
  stats_.segment_write_time += c.now - before;
  return true;
}

bool LldDisk::Impl::idle_clean_step(uint32_t reserve, bool reads_only, SimTime idle_ends,
                                    LldClock& c) {
  if (idle_victim_ && !idle_victim_current()) idle_victim_.reset();
  if (idle_victim_) {
    forget_moved_away();
    IdleVictim& v = *idle_victim_;
    if (v.next == v.blocks.size()) {
      finish_idle_victim();
    } else if (moves_fit(v.segment, reserve)) {
      if (v.next == v.read) return idle_read(idle_ends, c);
      // A victim's moves begin only in a pause that holds a segment's
      // worth of writing; once begun they go on a write at a time, and
      // the drain waits for them.
      if (v.next > 0 || (!reads_only && pause_holds_a_segment_write(c.now, idle_ends)))
        return idle_move_write(reserve, idle_ends, c);
      return false;
    }
  }
  // A checkpoint frees a batch of emptied victims; and room for the rest of
  // a victim whose moves the free segments no longer take (writes took them).
  if (usage_.empty_full_count() >= kCleanerBatchSegments ||
      (idle_victim_ && usage_.empty_full_count() > 0))
    return !reads_only && idle_checkpoint(idle_ends, c);
  idle_victim_.reset();  // its moves do not fit: the request path's cleaner finishes it
  auto victim = pick_victim(usage_, options_.cleaner_policy, next_seq_, /*skip_empty=*/true);
  if (victim && usage_.usage(*victim).live_blocks * 100 <=
                    uint64_t{kIdleVictimMaxLivePercent} * blocks_per_write_ &&
      moves_fit(*victim, reserve)) {
    IdleVictim v;
    v.segment = *victim;
    v.last_seq = usage_.usage(*victim).last_seq;
    v.blocks = live_blocks_of(*victim);
    std::sort(v.blocks.begin(), v.blocks.end(),
              [](const VictimBlock& x, const VictimBlock& y) { return x.psn < y.psn; });
    idle_victim_ = std::move(v);
    if (idle_read(idle_ends, c)) return true;
    idle_victim_.reset();  // not even one block's read fits: choose again next time
    return false;
  }
  if (usage_.empty_full_count() > 0 && !reads_only) return idle_checkpoint(idle_ends, c);
  return false;
}

void LldDisk::Impl::forget_moved_away() {
  // Blocks rewritten, trimmed or moved since they were listed stay where
  // they are; what was read of the others is kept.
  IdleVictim& v = *idle_victim_;
  size_t kept = v.next, read = v.next;
  for (size_t i = v.next; i < v.blocks.size(); ++i) {
    const VictimBlock& b = v.blocks[i];
    const BlockMapEntry& m = map_[b.entry.logical_block];
    if (m.psn_plus_one != b.psn + 1 || m.version != b.entry.version) continue;
    if (i < v.read) ++read;
    if (kept != i) v.blocks[kept] = std::move(v.blocks[i]);
    ++kept;
  }
  v.blocks.resize(kept);
  v.read = read;
  assert(v.blocks.size() - v.next == usage_.usage(v.segment).live_blocks);
}

bool LldDisk::Impl::idle_read(SimTime idle_ends, LldClock& c) {
  // From the next live block not read yet, one run over as many more as
  // end in time (the dead sectors between them passing under the head).
  IdleVictim& v = *idle_victim_;
  assert(v.read < v.blocks.size());
  const uint64_t from = v.blocks[v.read].psn;
  const auto run_to = [&](size_t end) {  // the run holding blocks [read, end)
    const uint64_t to = v.blocks[end - 1].psn + shape_.block_sectors;
    return SectorRun{from, static_cast<uint32_t>(to - from)};
  };
  const auto ends_in_time = [&](const SectorRun& run) {  // the read and the way back
    const SimTime end = drive_.estimate(std::span(&run, 1), c.now, Transfer::kRead).end;
    return ends_by(end + back_to_log_head(head_at(run.first_psn + run.count - 1)), idle_ends);
  };
  size_t lo = v.read, hi = v.blocks.size();
  if (idle_ends == kUnknownIdleEnd) lo = hi;
  while (lo < hi) {  // the most blocks whose read ends in time
    const size_t mid = (lo + hi + 1) / 2;
    if (ends_in_time(run_to(mid))) lo = mid;
    else hi = mid - 1;
  }
  if (lo == v.read) return false;
  const SimTime before = c.now;
  const SectorRun run = run_to(lo);
  c.add(drive_.read(std::span(&run, 1), c.now));
  stats_.cleaner_sectors_read += run.count;
  fill_blocks(std::span(v.blocks).subspan(v.read, lo - v.read), run, read_victim_run(run));
  v.read = lo;
  return_to_log_head(c);
  stats_.cleaning_time += c.now - before;
  return true;
}

HeadPosition LldDisk::Impl::head_at(uint64_t psn) const {
  const Chs chs = drive_.geometry().chs_of(psn);
  return HeadPosition{chs.cylinder, chs.head};
}

SimDuration LldDisk::Impl::back_to_log_head(HeadPosition from) const {
  const uint64_t log_head = layout_.segment_first_psn(*usage_.open_segment()) + head_sector_;
  return drive_.reposition(from, head_at(log_head)).total();
}

void LldDisk::Impl::return_to_log_head(LldClock& c) {
  // The next burst's writes go to the log head (with NVRAM, its drain):
  // the drive goes back there while still idle, as vld's compactor goes
  // back to the writes after its record.
  const HeadPosition to =
      head_at(layout_.segment_first_psn(*usage_.open_segment()) + head_sector_);
  const ServiceBreakdown back = drive_.reposition(drive_.head(), to);
  drive_.set_head(to);
  c.breakdown += back;
  c.now += back.total();
}

bool LldDisk::Impl::idle_move_write(uint32_t reserve, SimTime idle_ends, LldClock& c) {
  // The blocks read and not moved yet.
  IdleVictim& v = *idle_victim_;
  std::vector<const LogEntry*> chain;
  for (size_t i = v.next; i < v.read; ++i) chain.push_back(&v.blocks[i].entry);
  const size_t k = entries_that_fit(chain, c.now, idle_ends).second;
  if (k == 0) return false;
  const uint32_t sectors = move_sectors(k, shape_);
  const size_t left = v.blocks.size() - v.next - k;  // read or not
  // Closed when full, or when the room takes no more of them.
  const bool close =
      must_close_after(sectors) || (left > 0 && move_sectors(k + 1, shape_) > room_sectors());
  // A write shorter than the room leaves the rest a layout moves_fit did
  // not plan: it must still fit, leaving the reserve.
  const uint32_t room_after = close ? shape_.segment_sectors : room_sectors() - sectors;
  const uint32_t free_after = usage_.free_count() - (close ? 1 : 0);
  if (!blocks_fit(static_cast<uint32_t>(left), room_after, free_after, reserve)) return false;
  const SimTime before = c.now;
  chain.resize(k);
  emit_write(chain, close, /*continues=*/false, c);
  v.next += k;
  v.moved += k;
  stats_.cleaner_blocks_moved += k;
  stats_.cleaning_time += c.now - before;
  if (v.next == v.blocks.size()) finish_idle_victim();
  return true;
}

bool LldDisk::Impl::idle_checkpoint(SimTime idle_ends, LldClock& c) {
  // write_checkpoint's one drive command; then back.
  const std::vector<SectorRun> runs = checkpoint_runs();
  const SimTime end = drive_.estimate(runs, c.now, Transfer::kWrite).end;
  const uint64_t last = runs.back().first_psn + runs.back().count - 1;
  if (!ends_by(end + back_to_log_head(head_at(last)), idle_ends)) return false;
  const SimTime before = c.now;
  write_checkpoint(false, c);
  return_to_log_head(c);
  stats_.cleaning_time += c.now - before;
  return true;
}

bool LldDisk::Impl::pause_holds_a_segment_write(SimTime now, SimTime idle_ends) const {
  const SectorRun run{layout_.segment_first_psn(*usage_.open_segment()), shape_.segment_sectors};
  return ends_by(drive_.estimate(std::span(&run, 1), now, Transfer::kWrite).end, idle_ends);
}

bool LldDisk::Impl::idle_victim_current() const {
  const IdleVictim& v = *idle_victim_;
  return usage_.state(v.segment) == SegmentState::kFull &&
         usage_.usage(v.segment).last_seq == v.last_seq;
}

void LldDisk::Impl::finish_idle_victim() {
  assert(idle_victim_current() && usage_.usage(idle_victim_->segment).live_blocks == 0);
  if (idle_victim_->moved > 0) {  // else writes emptied it: nothing was cleaned
    ++stats_.segments_cleaned;
    ++stats_.idle_cleans;
  }
  idle_victim_.reset();
}

std::pair<size_t, size_t> LldDisk::Impl::entries_that_fit(
    const std::vector<const LogEntry*>& chain, SimTime start, SimTime idle_ends) const {
  // sectors[k]: a write of the first k entries.
  const uint32_t room = room_sectors();
  std::vector<uint64_t> sectors{0};
  uint32_t data = 0;
  for (size_t k = 0; k < chain.size(); ++k) {
    data += chain[k]->is_trim() ? 0 : 1;
    const uint64_t s = write_sectors(static_cast<uint32_t>(k + 1), data, shape_);
    if (s > room) break;
    sectors.push_back(s);
  }
  const size_t most = sectors.size() - 1;
  if (idle_ends == kUnknownIdleEnd) return {most, most};
  // The end grows with the sectors (the same start, the same place).
  size_t lo = 0, hi = most;
  while (lo < hi) {
    const size_t mid = (lo + hi + 1) / 2;
    if (log_write_end(sectors[mid], start) <= idle_ends) lo = mid;
    else hi = mid - 1;
  }
  return {most, lo};
}

SimTime LldDisk::Impl::log_write_end(uint64_t sectors, SimTime start) const {
  const SectorRun run{layout_.segment_first_psn(*usage_.open_segment()) + head_sector_,
                      static_cast<uint32_t>(sectors)};
  return drive_.estimate(std::span(&run, 1), start, Transfer::kWrite).end;
}

}  // namespace vld
