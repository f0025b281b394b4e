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
//   - in idle time (idle_step), one victim per step: preemptible between
//     segments, as the issue asks and the paper's modified LLD does.
#include <algorithm>
#include <cassert>

#include "core/lld/lld_disk_impl.h"
#include "core/util/error.h"

namespace vld {

namespace {

// Idle-time cleaning leaves segments at least this full alone: moving a
// nearly full segment frees almost nothing, and would churn for ever.
constexpr uint32_t kIdleVictimMaxLivePercent = 90;

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
  // As write_moves lays them out: the open segment's room, then whole
  // segments. Every segment it closes (full, or left without room for one
  // more block) opens a free one, so the closes must not outnumber the free
  // segments; a victim whose moves just fill the room needs a free segment
  // too.
  uint32_t live = usage_.usage(victim).live_blocks;
  uint32_t room = room_sectors();
  uint32_t closes = 0;
  while (live > 0) {
    uint32_t k = 0;
    while (k < live && write_sectors(k + 1, k + 1, shape_) <= room) ++k;
    if (k == 0) return false;  // must_close_after keeps room for a block; never here
    live -= k;
    room -= static_cast<uint32_t>(write_sectors(k, k, shape_));
    if (live > 0 || room < 1 + shape_.block_sectors) {
      ++closes;
      room = shape_.segment_sectors;
    }
  }
  return closes + reserve <= usage_.free_count();
}

void LldDisk::Impl::clean_segment(uint32_t victim, LldClock& c) {
  assert(!in_group_ && usage_.state(victim) == SegmentState::kFull);
  const uint64_t first = layout_.segment_first_psn(victim);
  const SectorRun whole{first, shape_.segment_sectors};
  c.add(drive_.read(std::span(&whole, 1), c.now));
  stats_.cleaner_sectors_read += whole.count;
  const std::vector<unsigned char> bytes = read_sectors(first, whole.count);

  std::vector<uint32_t> blocks = segment_blocks_[victim];  // cleared when the segment is freed
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  std::vector<LogEntry> moves;
  for (uint32_t b : blocks) {
    const BlockMapEntry& m = map_[b];
    if (m.psn_plus_one == 0 || psn_of(m) < first || psn_of(m) >= first + whole.count) continue;
    const size_t at = (psn_of(m) - first) * kSectorBytes;
    LogEntry e;
    e.logical_block = b;
    e.version = m.version;
    e.checksum = m.checksum;
    e.data.assign(bytes.begin() + at, bytes.begin() + at + block_bytes());
    moves.push_back(std::move(e));
  }
  assert(moves.size() == usage_.usage(victim).live_blocks);
  write_moves(moves, c);
  assert(usage_.usage(victim).live_blocks == 0);
  ++stats_.segments_cleaned;
  stats_.cleaner_blocks_moved += moves.size();
}

void LldDisk::Impl::write_moves(const std::vector<LogEntry>& moves, LldClock& c) {
  size_t i = 0;
  while (i < moves.size()) {
    // As many as fit the open segment's room; close it if more follow.
    const uint32_t room = room_sectors();
    size_t k = 0;
    while (i + k < moves.size() &&
           write_sectors(static_cast<uint32_t>(k + 1), static_cast<uint32_t>(k + 1), shape_) <= room)
      ++k;
    assert(k > 0);
    std::vector<const LogEntry*> entries;
    for (size_t j = 0; j < k; ++j) entries.push_back(&moves[i + j]);
    const uint32_t sectors =
        static_cast<uint32_t>(write_sectors(static_cast<uint32_t>(k), static_cast<uint32_t>(k), shape_));
    const bool close = i + k < moves.size() || must_close_after(sectors);
    emit_write(entries, close, /*continues=*/false, c);
    i += k;
  }
}

bool LldDisk::Impl::clean_until(uint32_t target_free, LldClock& c, uint32_t must_free) {
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

std::optional<Completion> LldDisk::Impl::idle_step(SimTime start) {
  return store_->run_own_work("idle-time cleaning", [&] { return idle_work(start); });
}

std::optional<Completion> LldDisk::Impl::idle_work(SimTime start) {
  LldClock c{start};
  if (has_nvram() && !pending_.empty()) {
    // Point D of paper 001's Figure 10: idle time long enough writes the
    // buffered burst out, a segment at a time.
    const SimTime before = c.now;
    if (usage_.free_count() < kCleanerLowSegments)
      clean_until(kCleanerLowSegments + kCleanerBatchSegments, c);
    write_one(c);
    if (pending_.empty()) {
      sync(c);
      nvram_reset(c);
    }
    stats_.segment_write_time += c.now - before;
    return c.done();
  }
  auto victim = pick_victim(usage_, options_.cleaner_policy, next_seq_, /*skip_empty=*/true);
  // Idle cleaning checkpoints only now and then, so it must leave free what
  // the memory copy's writes (nvram=0) need when a flush or FUA forces them
  // out, as admitting a request does: a move takes the room they counted on.
  const uint32_t reserve = segments_for_entries(pending_.live_entries());
  if (victim && usage_.usage(*victim).live_blocks * 100 <=
                    uint64_t{kIdleVictimMaxLivePercent} * blocks_per_write_ &&
      moves_fit(*victim, reserve)) {
    const SimTime before = c.now;
    clean_segment(*victim, c);
    ++stats_.idle_cleans;
    if (usage_.empty_full_count() >= kCleanerBatchSegments) write_checkpoint(false, c);
    stats_.cleaning_time += c.now - before;
    return c.done();
  }
  if (usage_.empty_full_count() > 0) {
    const SimTime before = c.now;
    write_checkpoint(false, c);
    stats_.cleaning_time += c.now - before;
    return c.done();
  }
  return std::nullopt;
}

}  // namespace vld
