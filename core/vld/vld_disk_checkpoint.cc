// VldDisk: delta checkpoints, which bound what recovery after a crash walks
// (issue 17; docs/scale.md, docs/format.md "log record").
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
// piece order: a rotation), as one group placed eagerly, and a log record
// names it. Its group is laid down in the order the walk (newest first)
// reads it back, one pass. The rotation bounds how far the live map
// sectors spread over older checkpoint groups: every piece is rewritten at
// least once per turn of the rotation, so the live versions lie in the
// groups of the last turn, which hold at most 3x the live pieces.
// Recovery after a crash then walks checkpoint groups (laid down in walk
// order) and at most checkpoint_every scattered map sectors, plus those of
// the request that made the checkpoint due.
//
// Crash safety: a delta is an ordinary group (cyclic commit) of unchanged
// pieces placed in the window: a crash before its record leaves it to
// recovery's window scan, which takes it whole or not at all, and either
// way the map is the same. The versions it replaces are retired, freed
// only after the record, like any request's.
#include "core/vld/vld_disk.h"

#include <algorithm>
#include <cassert>

#include "core/util/error.h"
#include "core/util/trace.h"

namespace vld {

void VldDisk::note_scattered(std::span<const PlannedNode> group) {
  for (const PlannedNode& n : group) note_scattered_piece(n.piece);
}

void VldDisk::note_scattered_piece(uint32_t piece) {
  if (scattered_[piece]) return;
  scattered_[piece] = 1;
  scattered_pieces_.push_back(piece);
}

void VldDisk::reset_scattered(uint64_t checkpoint_seq, SimTime now) {
  for (uint32_t p : scattered_pieces_) scattered_[p] = 0;
  scattered_pieces_.clear();
  checkpoint_seq_ = checkpoint_seq;
  last_checkpoint_at_ = now;
}

bool VldDisk::checkpoint_due(SimTime now) const {
  const uint32_t every = options_.checkpoint_every_map_sectors;
  if (every == 0 || scattered_pieces_.empty()) return false;
  if (scattered_pieces_.size() >= every) return true;
  return options_.checkpoint_every_s > 0 &&
         now - last_checkpoint_at_ >= sim_ms(options_.checkpoint_every_s * 1e3);
}

void VldDisk::add_rotation(std::vector<uint32_t>* pieces) {
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

bool VldDisk::write_delta_checkpoint(ServiceClock& clock) {
  const SimTime from = clock.now;
  std::vector<uint32_t> pieces = scattered_pieces_;
  add_rotation(&pieces);
  const uint64_t first_seq = log_.next_seq();
  if (!pieces.empty()) {
    // Into holes near the head, as compaction moves go: map sectors use the
    // runs too short for a block, and the empty tracks stay empty.
    std::vector<Update> none;
    try {
      if (!apply(none, pieces, /*fua=*/false, clock, PlaceMode::kHolePlug, /*checkpoint=*/true))
        apply(none, pieces, /*fua=*/false, clock, PlaceMode::kEager, /*checkpoint=*/true);
    } catch (const Error& e) {
      // No room for it: the pieces stay scattered. Any other error is the
      // store's, and the request that made the checkpoint due reports it.
      if (e.err() != ENOSPC) throw;
      VLD_TRACE(kLog, 1, "delta checkpoint skipped: {}", e.what());
      return false;
    }
  }
  const uint64_t written = log_.next_seq() - first_seq;
  ++stats_.delta_checkpoints;
  stats_.checkpoint_map_sectors += written;
  stats_.checkpoint_time += clock.now - from;
  VLD_TRACE(kLog, 1, "delta checkpoint {}: {} scattered and {} rotated pieces, {} map sectors "
            "(relays included), seq {}-{}; {:.1f} us", stats_.delta_checkpoints,
            scattered_pieces_.size(), pieces.size() - scattered_pieces_.size(), written, first_seq,
            log_.next_seq() - 1, to_us(clock.now - from));
  reset_scattered(log_.next_seq() - 1, clock.now);
  return true;
}

}  // namespace vld
