#include "core/inplace/inplace_disk.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "core/util/error.h"
#include "core/util/host_phases.h"

namespace vld {

InplaceDisk::InplaceDisk(std::unique_ptr<BackingStore> store, const Superblock& sb)
    : store_(FailStopStore::wrap(std::move(store))),
      sb_(sb),
      drive_(sb.geometry, sb.simulated_cylinders),
      live_((sb.export_bytes / sb.block_bytes + 63) / 64, 0),
      journal_(sb) {
  rebuild_live_map();
  recover();
}

SectorRun InplaceDisk::covering_run(uint64_t offset, uint64_t len) {
  uint64_t first = offset / kSectorBytes;
  uint64_t end = (offset + len + kSectorBytes - 1) / kSectorBytes;
  return SectorRun{first, static_cast<uint32_t>(end - first)};
}

uint64_t InplaceDisk::blocks_covering(uint64_t offset, uint64_t len) const {
  if (len == 0) return 0;
  return (offset + len - 1) / sb_.block_bytes - offset / sb_.block_bytes + 1;
}

void InplaceDisk::set_live(uint64_t first, uint64_t end, bool live) {
  for (uint64_t b = first; b < end; ++b) {
    uint64_t& word = live_[b / 64];
    uint64_t bit = uint64_t{1} << (b % 64);
    if (((word & bit) != 0) == live) continue;
    word ^= bit;
    live_blocks_ += live ? 1 : -1;
  }
}

void InplaceDisk::rebuild_live_map() {
  const uint64_t bs = sb_.block_bytes;
  store_->for_each_data_range(sb_.platter_offset, sb_.export_bytes, [&](uint64_t off, uint64_t len) {
    uint64_t rel = off - sb_.platter_offset;
    set_live(rel / bs, (rel + len + bs - 1) / bs, true);
  });
}

Completion InplaceDisk::read(uint64_t offset, std::span<std::byte> out, SimTime start) {
  assert(offset + out.size() <= sb_.export_bytes);  // the controller checked the range
  store_->read(sb_.platter_offset + offset, out);
  if (!stranded_.empty()) patch_stranded(offset, out);
  SectorRun run = covering_run(offset, out.size());
  Access a = drive_.read(std::span(&run, 1), start);
  return Completion{a.end, a.breakdown, 0, blocks_covering(offset, out.size())};
}

SimDuration InplaceDisk::positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                              SimTime start) const {
  if (len == 0) return SimDuration{0};
  const SectorRun run = covering_run(offset, len);
  return drive_.estimate(std::span(&run, 1), start, write ? Transfer::kWrite : Transfer::kRead)
      .breakdown.locate();
}

Completion InplaceDisk::write(uint64_t offset, std::span<const std::byte> data, bool fua,
                              SimTime start) {
  assert(offset + data.size() <= sb_.export_bytes);  // the controller checked the range
  store_->check();
  // Bytes map one to one, so a write that is not sector-aligned needs no
  // read-modify-write in the backing file; the drive still pays for whole
  // sectors.
  // Live first: a write that fails part way may have changed the blocks,
  // and extents() must never call data a hole.
  const uint64_t bs = sb_.block_bytes;
  set_live(offset / bs, (offset + data.size() + bs - 1) / bs, true);
  {
    HostPhaseTimer io_timer(HostPhase::kStoreIo);
    store_->write(sb_.platter_offset + offset, data);
  }
  const bool voided = fua && sync_after_void();
  SectorRun run = covering_run(offset, data.size());
  Access a = with_void(drive_.access(std::span(&run, 1), start), voided);
  return Completion{a.end, a.breakdown, blocks_covering(offset, data.size()), 0, fua ? 1u : 0u};
}

// An ARU's commit: the redo journal's record, a sync (the commit point),
// the home writes, a sync (redo_journal.h, invariants (1)-(3)); the record
// is voided later, by the next sync of another request (sync_after_void)
// or overwritten by the next commit's record, whichever comes first: back
// to back commits pay no void at all. Charged as the drive would do it:
// the record as one sequential access to the journal area, each sync a
// command, the home blocks as one command visiting them in block order.
Completion InplaceDisk::commit_group(std::span<const GroupBlock> blocks, SimTime start) {
  store_->check();
  assert(!blocks.empty());
  const uint64_t data_blocks = static_cast<uint64_t>(
      std::count_if(blocks.begin(), blocks.end(), [](const GroupBlock& g) { return g.data; }));
  const uint64_t need = journal_.record_bytes(blocks.size(), data_blocks);
  if (need > journal_.capacity())
    throw Error(fmt::format("an atomic recovery unit of {} blocks needs {} bytes of mode=inplace's "
                            "redo journal, which holds {} (the platters past the export); commit "
                            "fewer blocks at once",
                            blocks.size(), need, journal_.capacity()),
                ENOSPC);
  Clock clock{start};
  const uint64_t seq = next_seq_++;
  write_record(journal_.encode(blocks, seq), seq, clock);
  // Past the commit point. A failed home write is undone if it can be
  // (roll_back): the commit then fails having applied nothing, and the
  // disk serves on. Otherwise, and if the last sync fails, the group is
  // durable in the record: the disk stops (no later write may become
  // durable while the record is valid, invariant (3)), the next open
  // replays it, and until then reads see it from stranded_.
  const Undo undo = undo_of(blocks);
  try {
    write_home(blocks, clock);
  } catch (const Error& e) {
    const RollBack r = roll_back(blocks, undo, seq);
    if (r != RollBack::kCommitted) throw;  // kUndecided: the store stopped the disk
    strand(blocks, e);
    return clock.done();
  }
  try {
    sync(clock);
    void_pending_ = seq;
  } catch (const Error& e) {
    strand(blocks, e);
  }
  return clock.done();
}

uint64_t InplaceDisk::max_group_blocks() const {
  uint64_t n = journal_.capacity() / sb_.block_bytes;
  while (n > 0 && journal_.record_bytes(n, n) > journal_.capacity()) --n;
  return n;
}

std::string InplaceDisk::max_group_why() const {
  return "the redo journal of this mode=inplace image (" + std::to_string(journal_.capacity()) +
         " bytes, the platters past the export)";
}

// The blocks' contents before the commit: what roll_back puts back. (The
// simulator's own bookkeeping against backing-store faults, not a drive
// operation: it costs no simulated time.)
InplaceDisk::Undo InplaceDisk::undo_of(std::span<const GroupBlock> blocks) const {
  const uint64_t bs = sb_.block_bytes;
  Undo u{std::vector<std::byte>(blocks.size() * bs), {}};
  for (size_t i = 0; i < blocks.size(); ++i) {
    u.live.push_back(is_live(blocks[i].block));
    if (u.live.back())
      store_->read(sb_.platter_offset + blocks[i].block * bs, std::span(u.bytes).subspan(i * bs, bs));
  }
  return u;
}

// After a failed home write: the old contents back, a sync (home is old
// again, durably), the record voided, a sync (it will never be replayed).
// A crash before the second sync replays the record: all new, which a
// failed request may read back after a crash. kCommitted if it failed
// before the void was written: the record is durable and valid, so the
// group is committed; kUndecided if at or after it: either may survive.
InplaceDisk::RollBack InplaceDisk::roll_back(std::span<const GroupBlock> blocks, const Undo& undo,
                                             uint64_t seq) {
  const uint64_t bs = sb_.block_bytes;
  try {
    for (size_t i = 0; i < blocks.size(); ++i) {
      const uint64_t b = blocks[i].block;
      if (undo.live[i]) {
        set_live(b, b + 1, true);
        store_->write(sb_.platter_offset + b * bs, std::span(undo.bytes).subspan(i * bs, bs));
      } else {
        store_->discard(sb_.platter_offset + b * bs, bs);
        set_live(b, b + 1, false);
      }
    }
    store_->sync();
  } catch (const Error&) {
    return RollBack::kCommitted;
  }
  try {
    write_void(seq);
    store_->sync();
  } catch (const Error& e) {
    store_->stop(std::string("a failed atomic recovery unit's redo record could not be voided (") +
                 e.what() + ")");
    return RollBack::kUndecided;
  }
  return RollBack::kUndone;
}

// The group is committed but not all home: stop the disk, keep the group
// for reads until the next open replays it.
void InplaceDisk::strand(std::span<const GroupBlock> blocks, const Error& e) {
  for (const GroupBlock& g : blocks)
    stranded_[g.block] = g.data ? std::vector<std::byte>(g.data, g.data + sb_.block_bytes)
                                : std::vector<std::byte>();
  store_->stop(std::string("an atomic recovery unit committed in the redo journal could not be "
                           "written home (") + e.what() + ")");
}

// The commit point: the record written, then synced. If the write fails,
// the record may still have landed whole, and a later sync would make a
// commit that failed durable: its header is voided first (and the disk
// stopped if even that fails). If the sync fails, the store stops the
// disk; the record may or may not be durable, so after a restart the group
// reads all new or all old, like any request a failed flush covered.
// Either way the record (or its void) replaces the previous record's
// header, so that one needs no void of its own any more.
void InplaceDisk::write_record(const std::vector<std::byte>& record, uint64_t seq, Clock& clock) {
  void_pending_.reset();
  try {
    store_->write(sb_.platter_offset + journal_.offset(), record);
  } catch (const Error& e) {
    try {
      write_void(seq);
    } catch (const Error& e2) {
      store_->stop(std::string("a redo journal record that failed (") + e.what() +
                   ") could not be voided (" + e2.what() + ")");
    }
    throw;
  }
  SectorRun run = covering_run(journal_.offset(), record.size());
  clock.add(drive_.access(std::span(&run, 1), clock.now));
  clock.written += blocks_covering(journal_.offset(), record.size());
  sync(clock);
}

// Each data block written at home, each zero block discarded (it reads as
// zeros and may become a hole, as zero() with may_trim leaves it). Live
// first for data, as write() does; not live only once discarded.
void InplaceDisk::write_home(std::span<const GroupBlock> blocks, Clock& clock) {
  const uint64_t bs = sb_.block_bytes;
  const uint32_t block_sectors = static_cast<uint32_t>(bs / kSectorBytes);
  std::vector<SectorRun> runs;
  for (const GroupBlock& g : blocks) {
    if (!g.data) {
      store_->discard(sb_.platter_offset + g.block * bs, bs);
      set_live(g.block, g.block + 1, false);
      continue;
    }
    set_live(g.block, g.block + 1, true);
    store_->write(sb_.platter_offset + g.block * bs, std::span(g.data, bs));
    ++clock.written;
    const uint64_t psn = g.block * bs / kSectorBytes;
    if (!runs.empty() && runs.back().first_psn + runs.back().count == psn)
      runs.back().count += block_sectors;
    else
      runs.push_back(SectorRun{psn, block_sectors});
  }
  clock.add(runs.empty() ? drive_.command_only(clock.now) : drive_.access(runs, clock.now));
}

void InplaceDisk::write_void(uint64_t seq) {
  const auto v = journal_.void_sector(seq);
  store_->write(sb_.platter_offset + journal_.offset(), v);
}

// Every sync but commit_group's own: the record the last commit left
// valid is voided first (invariant (3)), so nothing written after that
// commit becomes durable while a replay could still undo it. If the void
// fails, the request fails before its sync, and the next one tries again.
bool InplaceDisk::sync_after_void() {
  HostPhaseTimer phase_timer(HostPhase::kStoreIo);
  const bool voiding = void_pending_.has_value();
  if (voiding) {
    write_void(*void_pending_);
    void_pending_.reset();
  }
  store_->sync();
  return voiding;
}

// The void's one-sector write at the journal, after `a`, inside the same
// command (no overhead of its own).
Access InplaceDisk::with_void(Access a, bool voided) {
  if (!voided) return a;
  SectorRun run = covering_run(journal_.offset(), kSectorBytes);
  Access v = drive_.access(std::span(&run, 1), a.end, /*charge_overhead=*/false);
  a.end = v.end;
  a.breakdown += v.breakdown;
  return a;
}

void InplaceDisk::sync(Clock& clock) {
  store_->sync();
  ++clock.syncs;
  clock.add(drive_.command_only(clock.now));
}

// A committed record means its commit point passed and its home writes
// may not all be there: write them all (again), sync, void it. A crash
// anywhere in this leaves the record valid, so the next open does the
// same; a read-only open does it on its OverlayStore, in memory.
//
// The time it takes is reported (recovery_), not charged: the served
// requests start at the drive's time zero. The journal's read is an
// estimate, so an open with nothing to replay leaves the head where a new
// drive has it and the requests' times do not depend on it.
void InplaceDisk::recover() {
  const auto wall_start = std::chrono::steady_clock::now();
  uint64_t last_seq = 0, read_bytes = 0;
  std::optional<RedoJournal::Record> r = journal_.read(*store_, &last_seq, &read_bytes);
  next_seq_ = last_seq + 1;
  Clock clock{kSimEpoch};
  if (read_bytes > 0) {
    const SectorRun run = covering_run(journal_.offset(), read_bytes);
    clock.add(drive_.estimate(std::span(&run, 1), clock.now, Transfer::kRead));
  }
  recovery_.sectors_read = read_bytes / kSectorBytes;
  if (r) {
    std::vector<GroupBlock> group;
    const std::byte* data = r->data.data();
    for (size_t i = 0; i < r->blocks.size(); ++i) {
      group.push_back(GroupBlock{r->blocks[i], r->zero[i] ? nullptr : data});
      if (!r->zero[i]) data += sb_.block_bytes;
    }
    write_home(group, clock);
    sync(clock);
    write_void(r->seq);
    clock.add(with_void(drive_.command_only(clock.now), /*voided=*/true));
    recovery_.clean = false;  // a clean close voids the record (redo_journal.h, (3))
    recovery_.records_replayed = 1;
    recovery_.blocks_replayed = r->blocks.size();
  }
  recovery_.simulated_ms = to_ms(clock.now - kSimEpoch);
  recovery_.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start)
          .count();
}

void InplaceDisk::patch_stranded(uint64_t offset, std::span<std::byte> out) const {
  overlay_blocks(stranded_, sb_.block_bytes, offset, out,
                 [](const std::vector<std::byte>& b) -> const std::vector<std::byte>& { return b; });
}

std::string InplaceDisk::check_consistency() const {
  uint64_t bits = 0;
  for (uint64_t w : live_) bits += static_cast<uint64_t>(std::popcount(w));
  if (bits != live_blocks_)
    return fmt::format("the live map has {} blocks set but counts {}", bits, live_blocks_);
  if (store_->stopped()) return "";
  uint64_t last_seq = 0;
  if (auto r = journal_.read(*store_, &last_seq); r && r->seq != void_pending_)
    return fmt::format("the redo journal still holds committed record {} of {} blocks", r->seq,
                       r->blocks.size());
  if (last_seq >= next_seq_)
    return fmt::format("the redo journal holds seq {}, but the next is {}", last_seq, next_seq_);
  return "";
}

Completion InplaceDisk::flush(SimTime start) {
  store_->check();
  const bool voided = sync_after_void();
  Access a = with_void(drive_.command_only(start), voided);
  return Completion{a.end, a.breakdown, 0, 0, 1};
}

Completion InplaceDisk::trim(uint64_t offset, uint64_t len, bool fua, SimTime start) {
  store_->check();
  uint64_t first, end;
  whole_blocks(offset, len, block_bytes(), &first, &end);
  if (end > first) {
    const uint64_t bs = sb_.block_bytes;
    store_->discard(sb_.platter_offset + first * bs, (end - first) * bs);
    set_live(first, end, false);
  }
  const bool voided = fua && sync_after_void();
  Access a = with_void(drive_.command_only(start), voided);
  return Completion{a.end, a.breakdown, 0, 0, fua ? 1u : 0u};
}

void InplaceDisk::write_zeros(uint64_t offset, uint64_t len) {
  static const std::vector<std::byte> zeros(1 << 20);
  while (len > 0) {
    uint64_t n = std::min<uint64_t>(len, zeros.size());
    store_->write(sb_.platter_offset + offset, std::span(zeros.data(), n));
    offset += n;
    len -= n;
  }
}

Completion InplaceDisk::zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) {
  store_->check();
  const uint64_t bs = sb_.block_bytes;
  uint64_t first, end;
  whole_blocks(offset, len, block_bytes(), &first, &end);
  const bool aligned = first * bs == offset && end * bs == offset + len;
  if (flags.fast && !(flags.may_trim && aligned))
    throw Error("zeroing here means writing the media, which is not fast", ENOTSUP);

  if (!flags.may_trim) {
    // The client wants allocated zeros: an ordinary write of zeros.
    set_live(offset / bs, (offset + len + bs - 1) / bs, true);
    write_zeros(offset, len);
    const bool voided = flags.fua && sync_after_void();
    SectorRun run = covering_run(offset, len);
    Access a = with_void(drive_.access(std::span(&run, 1), start), voided);
    return Completion{a.end, a.breakdown, blocks_covering(offset, len), 0, flags.fua ? 1u : 0u};
  }

  // Deallocate the whole blocks; write zeros into the partial edges.
  std::vector<SectorRun> edges;
  uint64_t written = 0;
  auto zero_edge = [&](uint64_t from, uint64_t to) {
    if (to <= from) return;
    write_zeros(from, to - from);
    set_live(from / bs, (to + bs - 1) / bs, true);
    edges.push_back(covering_run(from, to - from));
    written += blocks_covering(from, to - from);
  };
  if (end > first) {
    zero_edge(offset, first * bs);
    store_->discard(sb_.platter_offset + first * bs, (end - first) * bs);
    set_live(first, end, false);
    zero_edge(end * bs, offset + len);
  } else {
    zero_edge(offset, offset + len);  // inside one block
  }
  const bool voided = flags.fua && sync_after_void();
  Access a = with_void(edges.empty() ? drive_.command_only(start) : drive_.access(edges, start),
                       voided);
  return Completion{a.end, a.breakdown, written, 0, flags.fua ? 1u : 0u};
}

void InplaceDisk::extents(uint64_t offset, uint64_t len, const ExtentFn& fn) {
  emit_block_extents(offset, len, sb_.block_bytes, [this](uint64_t b) { return is_live(b); }, fn);
}

void InplaceDisk::close() { sync_after_void(); }

}  // namespace vld
