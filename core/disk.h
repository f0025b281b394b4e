// Disk: a logical block device on a simulated drive, one per disk mode.
//
// A Disk turns each client request into physical sector accesses on its
// DriveModel and real bytes in its BackingStore, and says what the request
// cost in simulated time. mode=inplace (InplaceDisk) maps logical sector n to
// physical sector n; mode=vld (the virtual log disk) places every block
// eagerly and keeps an indirection map. Callers see the same interface.
//
// Every implementation keeps docs/crash-contract.md; what it needs from a
// Disk is clause 2: when write() with fua, or flush(), returns, that write
// (for flush: every write that returned before it) is on stable storage.
//
// Thread-safety: not thread-safe, but for sync_through(). DiskController
// serialises requests, as the one actuator of a real drive does.
#ifndef VLD_CORE_DISK_H_
#define VLD_CORE_DISK_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/idle_gap_predictor.h"
#include "core/image_format.h"
#include "geometry/drive_model.h"
#include "geometry/sim_time.h"

namespace vld {

// Every mode's report (core/modes/mode_report.h, above the modes).
struct ModeReport;

struct Completion {
  SimTime end;
  ServiceBreakdown service;
  uint64_t physical_blocks_written = 0;
  uint64_t physical_blocks_read = 0;
  uint32_t syncs = 0;  // backing-store syncs (fdatasync) this request made
  // Group commit (set_group_commit): nonzero if the request's data is
  // written but not yet durable; it is acknowledged only once
  // sync_through(sync_ticket) has returned.
  uint64_t sync_ticket = 0;
};

struct ZeroFlags {
  bool may_trim = false;  // the client allows holes (no NBD_CMD_FLAG_NO_HOLE)
  bool fua = false;
  bool fast = false;      // NBD_CMD_FLAG_FAST_ZERO: fail with ENOTSUP if slow
};

// One block of an atomic group (an ARU's commit, core/aru/aru_session.h):
// its new contents, or nullptr for zeros (the block may become a hole).
// shadow_token: where Disk::place_shadow already wrote `data` (0: nowhere).
struct GroupBlock {
  uint64_t block;         // export block, in block_bytes units
  const std::byte* data;  // block_bytes bytes, or nullptr
  uint64_t shadow_token = 0;
};

// The data checksums (core/util/checksum.h, data_checksum) of a write's
// whole blocks, computed by DiskController before it takes the lock that
// serialises requests. A block's checksum depends on its bytes and its
// number alone, never on the disk's state, so hashing it need not hold up
// the drive's one actuator. sums[i] is block first_block + i's; a block
// outside them (a partial block, merged with its old contents under the
// lock) the disk hashes itself.
struct BlockChecksums {
  uint64_t first_block = 0;
  std::span<const uint32_t> sums;  // empty: none given

  // Block `block`'s checksum, if given.
  std::optional<uint32_t> of(uint64_t block) const {
    if (block < first_block || block - first_block >= sums.size()) return std::nullopt;
    return sums[block - first_block];
  }
};

enum class ExtentType { kData, kHole };  // a hole reads as zeros
using ExtentFn = std::function<void(uint64_t offset, uint64_t len, ExtentType type)>;

// The whole blocks of block_bytes inside [offset, offset+len): [*first,
// *end), empty (first == end) if there are none. Trims deallocate only these.
inline void whole_blocks(uint64_t offset, uint64_t len, uint64_t block_bytes, uint64_t* first,
                         uint64_t* end) {
  *first = (offset + block_bytes - 1) / block_bytes;
  *end = std::max(*first, (offset + len) / block_bytes);
}

// Reports [offset, offset+len) to fn as maximal runs of blocks of
// block_bytes that are all live (data) or all not (holes).
template <typename IsLive>
void emit_block_extents(uint64_t offset, uint64_t len, uint64_t block_bytes, IsLive is_live,
                        const ExtentFn& fn) {
  uint64_t pos = offset;
  const uint64_t end = offset + len;
  while (pos < end) {
    const bool live = is_live(pos / block_bytes);
    uint64_t b = pos / block_bytes + 1;
    while (b * block_bytes < end && is_live(b) == live) ++b;
    const uint64_t run_end = std::min(end, b * block_bytes);
    fn(pos, run_end - pos, live ? ExtentType::kData : ExtentType::kHole);
    pos = run_end;
  }
}

// Copies the blocks of `blocks` (a std::map from block to a value whose
// contents bytes_of gives: block_bytes bytes, or empty for zeros) over the
// bytes of [offset, offset + out.size()) in out; other bytes stay as they
// are. An ARU's shadow over committed data, and mode=inplace's stranded
// group over the platters, are read through it.
template <typename BlockMap, typename BytesOf>
void overlay_blocks(const BlockMap& blocks, uint64_t block_bytes, uint64_t offset,
                    std::span<std::byte> out, BytesOf bytes_of) {
  const uint64_t end = offset + out.size();
  for (auto it = blocks.lower_bound(offset / block_bytes);
       it != blocks.end() && it->first * block_bytes < end; ++it) {
    const uint64_t b = it->first;
    const uint64_t lo = std::max(offset, b * block_bytes);
    const uint64_t hi = std::min(end, (b + 1) * block_bytes);
    std::byte* dst = out.data() + (lo - offset);
    const std::vector<std::byte>& bytes = bytes_of(it->second);
    if (bytes.empty())
      std::fill(dst, dst + (hi - lo), std::byte{0});
    else
      std::copy_n(bytes.data() + (lo - b * block_bytes), hi - lo, dst);
  }
}

class Disk {
 public:
  virtual ~Disk() = default;

  virtual const Superblock& superblock() const = 0;
  virtual const DriveModel& drive() const = 0;
  // track_buffer= (DriveModel): reads through the drive's read-ahead buffer.
  virtual void set_track_buffer(bool on) = 0;
  uint64_t export_bytes() const { return superblock().export_bytes; }
  uint32_t block_bytes() const { return superblock().block_bytes; }
  DiskMode mode() const { return superblock().mode; }

  // Requests start at `start` (the drive is idle then) and lie inside the
  // export; DiskController checks both.
  virtual Completion read(uint64_t offset, std::span<std::byte> out, SimTime start) = 0;
  virtual Completion write(uint64_t offset, std::span<const std::byte> data, bool fua,
                           SimTime start) = 0;
  // Whether write_with_checksums uses the checksums it is given (mode=vld,
  // whose map entries hold them). Only then does DiskController compute
  // them, outside its lock. The same for every disk of one image.
  virtual bool takes_write_checksums() const { return false; }
  // write(), given the data checksums of the request's whole blocks
  // (whole_blocks); the disk uses them instead of hashing those blocks
  // under the lock. Other modes write as write() (mode=lld keeps
  // checksums too, and hashes under the lock).
  // REQUIRES: each of sums is data_checksum of its block's bytes in
  // `data` and its block number; sums cover only whole blocks of the write.
  virtual Completion write_with_checksums(uint64_t offset, std::span<const std::byte> data,
                                          bool fua, SimTime start, BlockChecksums /*sums*/) {
    return write(offset, data, fua, start);
  }
  virtual Completion flush(SimTime start) = 0;
  virtual Completion trim(uint64_t offset, uint64_t len, bool fua, SimTime start) = 0;
  // Throws Error(ENOTSUP) if flags.fast and zeroing would cost media time.
  virtual Completion zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) = 0;
  virtual void extents(uint64_t offset, uint64_t len, const ExtentFn& fn) = 0;
  // The longest write, zero or trim request, in bytes and at any
  // alignment, for which this disk keeps its promises whatever its state
  // (docs/crash-contract.md, clause 3 where the mode makes it); the plugin
  // advertises no more. mode=vld may find no room for a longer one on a
  // full disk; mode=lld commits it in pieces when its free segments cannot
  // take it beside the live blocks. UINT64_MAX: no limit of the mode's own
  // (mode=inplace, which promises no request more than its blocks).
  virtual uint64_t max_atomic_write_bytes() const { return UINT64_MAX; }
  // EndARU + Flush (paper 000 section 4, "atomic recovery units"; docs/aru.md):
  // writes `blocks` as one atomic, durable unit. When it returns, every
  // block reads new and is on stable storage, and so is every write that
  // returned before it (as flush()). A crash at any point before that
  // leaves either every block new or none (docs/crash-contract.md, clause
  // 9). If it throws, none of them is applied and nothing committed before
  // is touched.
  // REQUIRES: blocks non-empty, sorted by block, no block twice, each
  // inside the export.
  virtual Completion commit_group(std::span<const GroupBlock> blocks, SimTime start) = 0;
  // The most blocks commit_group can ever take at once, and what bounds it
  // ("" if nothing but free space does): mode=inplace's redo journal.
  // AruSession refuses to grow an ARU past it, so the refusal comes at the
  // write (the ARU stays open) and not at the commit.
  virtual uint64_t max_group_blocks() const { return UINT64_MAX; }
  // Modes that place an ARU's blocks as they are written (mode=vld: "the
  // allocation is global", paper 000), before any commit: place_shadow
  // writes `blocks` (each with data) to free sectors now, mapped by
  // nothing, and gives a token per block, which commit_group then takes as
  // the block's data, written; drop_shadow gives a token's sectors back
  // (the ARU aborted, or changed the block again). An uncommitted token is
  // nothing to recovery: a crash frees its sectors. Other modes keep the
  // ARU in memory until the commit (places_shadow() false).
  virtual bool places_shadow() const { return false; }
  // REQUIRES: places_shadow(); every block has data.
  virtual Completion place_shadow(std::span<const GroupBlock> /*blocks*/, SimTime start,
                                  std::vector<uint64_t>* /*tokens*/) {
    assert(false && "place_shadow on a mode that does not place shadow blocks");
    return Completion{start, {}};
  }
  // REQUIRES: token from place_shadow, not committed or dropped.
  virtual void drop_shadow(uint64_t /*token*/) {
    assert(false && "drop_shadow on a mode that does not place shadow blocks");
  }
  virtual std::string max_group_why() const { return ""; }

  // Command queueing (core/sched/command_queue.h): the positioning time
  // (seek + head switch + rotational wait) a read, or with `write` a
  // write, of [offset, offset+len) would pay if the drive started it at
  // `start` from where the head is now. Nothing moves. SimDuration{0} means
  // no opinion (the default): such commands keep their arrival order among
  // themselves. The track buffer is not consulted: a read it would hit is
  // estimated as if it went to the media.
  virtual SimDuration positioning_estimate(bool /*write*/, uint64_t /*offset*/, uint64_t /*len*/,
                                           SimTime /*start*/) const {
    return SimDuration{0};
  }

  // Idle time: one step of background work (the vld compactor) starting at
  // `start`, or nullopt if there is none. Each step is short (one block
  // move), so a request arriving meanwhile waits for at most one step.
  // `idle_ends` is when the idle period is expected to end
  // (IdleGapPredictor; kUnknownIdleEnd: no prediction): a mode may decline
  // (nullopt) a step it does not expect to finish by then.
  virtual std::optional<Completion> idle_step(SimTime /*start*/, SimTime /*idle_ends*/) {
    return std::nullopt;
  }
  std::optional<Completion> idle_step(SimTime start) { return idle_step(start, kUnknownIdleEnd); }

  // Physical blocks holding live client data, and all physical blocks on the
  // simulated platters: utilization is their ratio.
  virtual uint64_t live_blocks() const = 0;
  uint64_t physical_blocks() const { return superblock().physical_blocks(); }

  // Clean shutdown (the drive's power-down sequence): everything durable.
  // REQUIRES: no sync_through() running.
  virtual void close() = 0;

  // Group commit (core/store/group_commit.h): with it on, a request whose
  // last step is the backing store's sync may leave that step to its
  // caller, returning a Completion with a sync_ticket, so that requests in
  // flight share one sync. Only mode=lld's NVRAM appends do; a Disk that
  // never defers ignores it. Clause 2 holds for the caller: a request is
  // acknowledged after sync_through(its ticket) returns.
  virtual void set_group_commit(bool /*on*/) {}
  // Returns once the ticket's writes are durable; the syncs it made. May
  // be called without the lock that serialises requests, concurrently with
  // them (only this; thread-safe). Throws the failed sync's Error.
  virtual uint32_t sync_through(uint64_t /*ticket*/) { return 0; }
  // Under the requests' lock, after sync_through threw: the disk stops
  // (FailStopStore::note_failed_sync), once for the failed sync.
  virtual void group_sync_failed() {}

  // Mode-specific statistics for the stats file: the sections of this
  // disk's mode. Defined with ModeReport (core/modes/mode_report.cc), which
  // asks the mode's own class; the root knows no mode.
  ModeReport mode_report() const;
  // "" if the disk's in-memory state agrees with itself (mode=vld: map,
  // free space, log), else the first disagreement. Cost: a walk of the
  // whole state; the controller calls it after every request only in
  // builds with VLD_CHECK_EACH_REQUEST (Debug, sanitizers).
  virtual std::string check_consistency() const { return ""; }
};

}  // namespace vld

#endif  // VLD_CORE_DISK_H_
