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
// piece order: a rotation), in groups of a track's worth placed in holes
// near the head, and a log record names them. The walk (newest first)
// reads each group back to front, which the track buffer serves in about
// a pass per track. The rotation bounds how far the live map sectors
// spread over older checkpoint groups: every piece is rewritten at least
// once per turn, so the live versions lie in the groups of the last turn,
// which hold at most 3x the live pieces. Recovery after a crash then walks
// checkpoint groups and at most checkpoint_every scattered map sectors,
// plus those of the request that made the checkpoint due.
//
// Crash safety: each group is an ordinary group (cyclic commit) of
// unchanged pieces placed in the window: a crash before the record leaves
// them to recovery's window scan, which takes each whole or not at all,
// and either way the map is the same. The versions they replace are
// retired, freed only after the record, like any request's.
#include "core/vld/vld_disk.h"

#include <algorithm>

#include "core/util/error.h"
#include "core/util/trace.h"

namespace vld {

namespace {
// Pieces per group of a delta checkpoint: about a track of map sectors.
constexpr size_t kDeltaGroupPieces = 256;
}  // namespace

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

bool VldDisk::write_delta_checkpoint(ServiceClock& clock, PlaceMode mode) {
  const SimTime from = clock.now;
  std::vector<uint32_t> pieces = scattered_pieces_;
  const size_t scattered = pieces.size();
  add_rotation(&pieces);
  const uint64_t first_seq = log_.next_seq();
  // Groups of kDeltaGroupPieces, each placed right after the one before:
  // one group of thousands made planning quadratic and held megabytes of
  // placement state at once, and nothing needs the delta to be atomic (each
  // group rewrites unchanged pieces; the record after the last makes them
  // count). On a request's path eagerly, into the fill track (a pass per
  // track; on a 1 GiB disk 2.6 s for 100,000 map sectors against 5.0 s in
  // holes); in idle time, where time is free, into holes near the head as
  // compaction moves go, so that the empty tracks compaction made stay
  // empty. Either falls back to the other.
  const PlaceMode other = mode == PlaceMode::kEager ? PlaceMode::kHolePlug : PlaceMode::kEager;
  size_t done = 0;
  try {
    while (done < pieces.size()) {
      const size_t n = std::min(kDeltaGroupPieces, pieces.size() - done);
      const std::span<const uint32_t> group(pieces.data() + done, n);
      std::vector<Update> none;
      if (!apply(none, group, /*fua=*/false, clock, mode, /*checkpoint=*/true) &&
          !apply(none, group, /*fua=*/false, clock, other, /*checkpoint=*/true))
        break;  // no room either way (only kHolePlug declines): the rest stays scattered
      done += n;
    }
  } catch (const Error& e) {
    // No room: what is not rewritten stays scattered. Any other error is
    // the store's, and the request that made the checkpoint due reports it.
    if (e.err() != ENOSPC) throw;
    VLD_TRACE(kLog, 1, "delta checkpoint cut short after {} of {} pieces: {}", done,
              pieces.size(), e.what());
  }
  if (done == 0) return false;
  const std::vector<uint32_t> still(pieces.begin() + std::min(done, scattered),
                                    pieces.begin() + scattered);
  const uint64_t written = log_.next_seq() - first_seq;
  ++stats_.delta_checkpoints;
  stats_.checkpoint_map_sectors += written;
  stats_.checkpoint_time += clock.now - from;
  VLD_TRACE(kLog, 1, "delta checkpoint {}: {} scattered and {} rotated pieces, {} map sectors "
            "(relays included), seq {}-{}; {:.1f} us", stats_.delta_checkpoints, scattered,
            pieces.size() - scattered, written, first_seq, log_.next_seq() - 1,
            to_us(clock.now - from));
  reset_scattered(log_.next_seq() - 1, clock.now);
  for (uint32_t p : still) note_scattered_piece(p);
  return true;
}

}  // namespace vld
