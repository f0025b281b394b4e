// LldDisk: mode=lld, the log-structured logical disk with an NVRAM write
// buffer and a segment cleaner: paper 001's "LFS" (section 4.4), paper
// 000's LLD. docs/format.md ("mode=lld") has the on-disk format and
// docs/crash-contract.md what it promises.
//
// Writes never update in place. Each client block gets a new version
// (one counter for the disk) and goes
//   - with NVRAM (nvram= > 0): into the NVRAM region (records appended and
//     fdatasynced before the reply: the write is durable at once), and into
//     the in-memory buffer. When the region is full the buffer is drained
//     wholly into segments (the paper: "we do not flush to disk until the
//     buffer cache is full"), and the region is reset;
//   - without (nvram=0): into the open segment's memory copy, written out
//     when it fills, and by flush and FUA under the partial-segment rule
//     (partial=, LLD's 75%): at or above the threshold the segment is
//     written as full and closed, below it the blocks are appended as a
//     partial write and the segment stays open.
// A segment write is [summary][blocks] at the log head (segment_summary.h).
//
// Invariants (check_consistency walks them):
//   - map_[b] names the newest copy of b in a segment, or none (zeros);
//     a block whose newest version is buffered or pending is read from there;
//   - a segment's live count is the number of map entries pointing into it;
//   - a segment freed by the cleaner or emptied by overwrites becomes free
//     only when a durable checkpoint no longer counts a block in it, so
//     roll-forward from the newest checkpoint never meets a reused segment;
//   - the pending tail (nvram=0) holds whole requests whenever no request
//     is being served: a request cut across segment writes is written to its
//     end before it returns (summaries flag the cut, roll-forward applies
//     the pieces together).
//
// Thread-safety: not thread-safe (see Disk).
#ifndef VLD_CORE_LLD_LLD_DISK_H_
#define VLD_CORE_LLD_LLD_DISK_H_

#include <memory>

#include "core/disk.h"
#include "core/lld/cleaner_policy.h"
#include "core/lld/lld_layout.h"
#include "core/lld/lld_options.h"
#include "core/lld/lld_report.h"
#include "core/lld/segment_usage.h"
#include "core/store/backing_store.h"

namespace vld {

class LldDisk final : public Disk {
 public:
  // Opens an lld image: reads the newest checkpoint, rolls forward through
  // the segment writes after it and replays the NVRAM region. When the
  // store is writable, recovery then checkpoints and drains the replayed
  // NVRAM blocks before the disk serves.
  LldDisk(std::unique_ptr<BackingStore> store, const Superblock& sb, LldOptions options = {},
          bool track_buffer = true);
  ~LldDisk() override;

  // Writes the structures of an empty disk: checkpoint slot 0 (generation
  // 1, clean) and the NVRAM header of epoch 1. REQUIRES: sb.mode == kLld.
  static void format(BackingStore& store, const Superblock& sb);

  const Superblock& superblock() const override;
  const DriveModel& drive() const override;
  void set_track_buffer(bool on) override;

  Completion read(uint64_t offset, std::span<std::byte> out, SimTime start) override;
  Completion write(uint64_t offset, std::span<const std::byte> data, bool fua,
                   SimTime start) override;
  Completion flush(SimTime start) override;
  Completion trim(uint64_t offset, uint64_t len, bool fua, SimTime start) override;
  Completion zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) override;
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn) override;
  Completion commit_group(std::span<const GroupBlock> blocks, SimTime start) override;
  // What the free segments take whole once cleaning has packed every
  // export block: with a small spare, less than the plugin's 32 MiB.
  uint64_t max_atomic_write_bytes() const override;
  // One step of idle-time work, one drive command expected to end by
  // idle_ends: a write of the NVRAM buffer into segments, the read of a
  // victim, a write of its live blocks, or a checkpoint freeing victims.
  using Disk::idle_step;
  std::optional<Completion> idle_step(SimTime start, SimTime idle_ends) override;
  uint64_t live_blocks() const override;
  void close() override;
  void set_group_commit(bool on) override;
  uint32_t sync_through(uint64_t ticket) override;
  void group_sync_failed() override;
  std::string check_consistency() const override;

  // mode=lld's section of ModeReport (Disk::mode_report): "lld".
  LldReport report() const;
  // Where the platters hold what (tools: vld-inspect draws and checks it).
  const LldLayout& layout() const;
  // The first sector of block's newest copy in a segment; nullopt if the
  // segments hold none (never written, trimmed, or only in the buffer).
  std::optional<uint64_t> segment_psn(uint32_t block) const;
  // Free, open or full (segment_usage.h). REQUIRES: segment < layout().segment_count.
  SegmentState segment_state(uint32_t segment) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_DISK_H_
