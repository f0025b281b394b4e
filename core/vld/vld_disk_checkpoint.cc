// VldDisk: delta checkpoints, which bound what recovery after a crash walks
// (docs/scale.md, section 0; docs/format.md, "Log record").
//
// Eager writing scatters map sectors: every request writes its pieces'
// new versions wherever the head is. A clean close rewrites every live
// piece as one compact group (checkpoint(), paper 001 section 3.3's
// "periodically, we write the entire inode map to the disk contiguously"),
// so the next open reads the map in the order it was laid down. After a
// crash there is no such group: recovery walks the versions the requests
// since the last checkpoint scattered, one rotation each, and at 4 GiB
// that took 31 s against 1.3 s for a clean open (docs/benchmarks.md,
// section 4). A full checkpoint now and then does not scale: at 1 TiB it
// is 8 M map sectors.
//
// So once checkpoint_every pieces are scattered (or checkpoint_s seconds
// after the last checkpoint, or in idle time), a delta checkpoint rewrites
// just those pieces, plus the next turn of the others (half as many, in
// piece order: a rotation), in groups of a track's worth placed in holes
// near the head, and a log record names them. The walk (newest first)
// reads each group back to front, which the track buffer serves in about
// a pass per track. The rotation bounds how far the live map sectors
// spread over older checkpoint groups: every piece is rewritten at least
// once per turn, so the live versions lie in the groups of the last turn,
// which hold at most 3x the live pieces. Recovery after a crash then walks
// checkpoint groups and at most checkpoint_every scattered map sectors,
// plus those scattered while a delta is under way (one or two a request).
//
// A delta is not written on the path of the request that made it due
// alone: at 80% full, with no empty track, its groups go into holes at
// about a pass per track, and a 1 GiB st19101 disk's delta of 6,144 map
// sectors held that one write for 0.75 s (docs/scale.md, section 0b). So
// that request and each one after it write one group (a track's worth of
// pieces), and the request that writes the last also rewrites the pieces
// requests scattered meanwhile: their live versions are older than the
// delta's last seq, which the record names as checkpoint_seq, and every
// live map sector at or below it must be in a checkpoint group. Idle time
// writes whatever is left at once.
//
// Crash safety: each group is an ordinary group (cyclic commit) of
// unchanged pieces placed in the window: a crash before the record leaves
// them to recovery's window scan, which takes each whole or not at all,
// and either way the map is the same. The versions they replace are
// retired, freed only after the record, like any request's.
#include "core/vld/vld_disk_impl.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "core/util/error.h"
#include "core/util/trace.h"

namespace vld {

void VldDisk::Impl::note_scattered(std::span<const PlannedNode> group) {
  for (const PlannedNode& n : group) note_scattered_piece(n.piece);
}

void VldDisk::Impl::note_scattered_piece(uint32_t piece) {
  if (scattered_[piece]) return;
  scattered_[piece] = 1;
  scattered_pieces_.push_back(piece);
}

void VldDisk::Impl::reset_scattered(uint64_t checkpoint_seq, SimTime now) {
  for (uint32_t p : scattered_pieces_) scattered_[p] = 0;
  scattered_pieces_.clear();
  delta_ = DeltaInProgress{};  // a full checkpoint rewrote its pieces too
  checkpoint_seq_ = checkpoint_seq;
  last_checkpoint_at_ = now;
}

bool VldDisk::Impl::checkpoint_due(SimTime now) const {
  const uint32_t every = options_.checkpoint_every_map_sectors;
  if (every == 0 || delta_.active || scattered_pieces_.empty()) return false;
  if (scattered_pieces_.size() >= every) return true;
  return options_.checkpoint_every_s > 0 &&
         now - last_checkpoint_at_ >= sim_ms(options_.checkpoint_every_s * 1e3);
}

void VldDisk::Impl::add_rotation(std::vector<uint32_t>* pieces) {
  // Half as many older pieces as are scattered: each piece is rewritten at
  // least once per turn, while the turn adds only half to what a delta
  // costs. The turn skips pieces never written (a sparse image has many),
  // looking at a bounded number per delta so that a checkpoint never scans
  // the whole piece table on a request's path.
  const uint32_t turn = std::max<uint32_t>(1, static_cast<uint32_t>(scattered_pieces_.size() / 2));
  const uint32_t n = log_.pieces();
  const uint64_t look = std::min<uint64_t>(n, uint64_t{turn} * 8);
  uint32_t taken = 0;
  for (uint64_t i = 0; i < look && taken < turn; ++i) {
    const uint32_t p = rotation_cursor_;
    rotation_cursor_ = rotation_cursor_ + 1 == n ? 0 : rotation_cursor_ + 1;
    if (log_.node(p).seq == 0 || scattered_[p]) continue;
    pieces->push_back(p);
    ++taken;
  }
}

uint32_t VldDisk::Impl::delta_group_pieces() const {
  const uint32_t n = options_.checkpoint_group_pieces;
  return n ? n : layout_.geometry.min_sectors_per_track();
}

void VldDisk::Impl::begin_delta() {
  assert(!delta_.active && !scattered_pieces_.empty());
  delta_ = DeltaInProgress{};
  delta_.active = true;
  delta_.todo = scattered_pieces_;
  delta_.scattered = scattered_pieces_.size();
  add_rotation(&delta_.todo);
  // What requests scatter from now on is listed afresh: the delta's last
  // groups rewrite it (finish_delta).
  for (uint32_t p : scattered_pieces_) scattered_[p] = 0;
  scattered_pieces_.clear();
}

bool VldDisk::Impl::write_delta_groups(std::span<const uint32_t> pieces, ServiceClock& clock,
                                 PlaceMode mode, size_t* done) {
  // Groups of a track's worth, each right after the one before: one group
  // of thousands made planning quadratic and held megabytes of placement
  // state at once, and nothing needs the delta to be atomic (each group
  // rewrites unchanged pieces; the record after the last makes them
  // count). On a request's path eagerly, into the fill track (a pass per
  // track); in idle time, where time is free, into holes near the head as
  // compaction moves go, so that the empty tracks compaction made stay
  // empty. Either falls back to the other; false if neither has room.
  const PlaceMode other = mode == PlaceMode::kEager ? PlaceMode::kHolePlug : PlaceMode::kEager;
  const uint64_t first_seq = log_.next_seq();
  for (size_t from = 0; from < pieces.size();) {
    const std::span<const uint32_t> group =
        pieces.subspan(from, std::min<size_t>(delta_group_pieces(), pieces.size() - from));
    std::vector<Update> none;
    if (!apply(none, group, /*fua=*/false, clock, mode, /*checkpoint=*/true) &&
        !apply(none, group, /*fua=*/false, clock, other, /*checkpoint=*/true))
      return false;
    from += group.size();
    *done += group.size();
  }
  delta_.map_sectors += log_.next_seq() - first_seq;
  return true;
}

bool VldDisk::Impl::advance_delta(ServiceClock& clock, PlaceMode mode, size_t max_groups) {
  assert(delta_.active);
  const SimTime from = clock.now;
  const size_t group = delta_group_pieces(), left = delta_.todo.size() - delta_.done;
  const size_t n = max_groups > left / group ? left : max_groups * group;
  const uint64_t file_failures = store_->file_failures();
  std::string no_room;
  try {
    size_t meanwhile_done = 0;
    if (!write_delta_groups(std::span(delta_.todo).subspan(delta_.done, n), clock, mode,
                            &delta_.done))
      no_room = "neither placement has room for a group";
    // The pieces requests scattered while the delta went on have live map
    // sectors older than its last group: rewrite them too, so that every
    // live map sector at or below the record's checkpoint_seq is in a
    // checkpoint group (what reopening and recovery's count rely on). A
    // copy: a repack that placing a group needs scatters pieces too.
    else if (delta_.done == delta_.todo.size() &&
             !write_delta_groups(std::vector(scattered_pieces_), clock, mode, &meanwhile_done))
      no_room = "neither placement has room for a group";
  } catch (const Error& e) {
    // The platters' ENOSPC (no room for a group, or for a repack that
    // placing one needed) gives the delta up. Any other error is the
    // file's, ENOSPC included (a full file system: once taken for no room,
    // it gave the delta up and no client heard of it): the request that
    // made the group due reports it, and the group is tried again next time.
    if (e.err() != ENOSPC || store_->file_failures() != file_failures) {
      delta_.time += clock.now - from;
      throw;
    }
    no_room = e.what();
  }
  if (!no_room.empty()) {
    // Give the delta up: everything it was to rewrite is scattered again.
    VLD_TRACE(kLog, 1, "delta checkpoint given up after {} of {} pieces: {}", delta_.done,
              delta_.todo.size(), no_room);
    for (uint32_t p : delta_.todo) note_scattered_piece(p);
    delta_ = DeltaInProgress{};
    return false;
  }
  delta_.time += clock.now - from;
  if (delta_.done < delta_.todo.size()) return false;
  finish_delta(clock.now);
  return true;
}

void VldDisk::Impl::finish_delta(SimTime now) {
  ++stats_.delta_checkpoints;
  stats_.checkpoint_map_sectors += delta_.map_sectors;
  stats_.checkpoint_time += delta_.time;
  VLD_TRACE(kLog, 1, "delta checkpoint {}: {} scattered, {} rotated and {} meanwhile scattered "
            "pieces, {} map sectors (relays included), to seq {}; {:.1f} us",
            stats_.delta_checkpoints, delta_.scattered, delta_.todo.size() - delta_.scattered,
            scattered_pieces_.size(), delta_.map_sectors, log_.next_seq() - 1,
            to_us(delta_.time));
  reset_scattered(log_.next_seq() - 1, now);
}

}  // namespace vld
