// InplaceDisk: the conventional update-in-place drive, the baseline.
//
// Logical byte offset x lives at physical sector x / 512, always: a write
// waits for its sectors to come round (paper 001, section 2.1: "it is
// difficult for an update-in-place system to avoid at least a half-rotation
// delay"). The drive has no volatile write cache: a write is on the platter
// when it completes, so a flush costs only the controller overhead (plus the
// backing store's fdatasync, which is real durability, not simulated time).
//
// Trim and zero-with-may-trim deallocate whole physical blocks: they read as
// zeros afterwards and cost one command, not media time; the parts of
// partial blocks at the edges of a trim are left alone (trim is advisory),
// those of a zero are written with zeros. Which blocks hold data is kept in
// a bitmap in memory, rebuilt on open from the backing file's holes.
//
// Atomic recovery units (commit_group) go through a redo journal on the
// platters past the export (redo_journal.h): the record, a sync (the commit
// point), the home writes, a sync; the record is voided by the next sync
// of any other request, or replaced by the next record. Opening an image
// replays a committed record a crash left (on an OverlayStore, in memory
// only). An image no ARU was ever committed on has an all-zero journal
// area and opens, reads and writes exactly as before.
//
// Thread-safety: not thread-safe (see Disk).
#ifndef VLD_CORE_INPLACE_INPLACE_DISK_H_
#define VLD_CORE_INPLACE_INPLACE_DISK_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/disk.h"
#include "core/inplace/inplace_report.h"
#include "core/inplace/redo_journal.h"
#include "core/util/error.h"

namespace vld {

class InplaceDisk final : public Disk {
 public:
  InplaceDisk(std::unique_ptr<BackingStore> store, const Superblock& sb);

  const Superblock& superblock() const override { return sb_; }
  const DriveModel& drive() const override { return drive_; }
  void set_track_buffer(bool on) override { drive_.set_track_buffer(on); }

  Completion read(uint64_t offset, std::span<std::byte> out, SimTime start) override;
  // Reads and writes alike: every sector has its fixed home.
  SimDuration positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                   SimTime start) const override;
  Completion write(uint64_t offset, std::span<const std::byte> data, bool fua,
                   SimTime start) override;
  Completion flush(SimTime start) override;
  Completion trim(uint64_t offset, uint64_t len, bool fua, SimTime start) override;
  Completion zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) override;
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn) override;
  Completion commit_group(std::span<const GroupBlock> blocks, SimTime start) override;
  uint64_t max_group_blocks() const override;  // what the redo journal holds
  std::string max_group_why() const override;
  uint64_t live_blocks() const override { return live_blocks_; }
  void close() override;
  // The open's recovery (inplace_report.h): mode=inplace's one section of
  // ModeReport (Disk::mode_report).
  const InplaceRecoveryReport& recovery_report() const { return recovery_; }
  // The live map's count agrees with its bits, and the redo journal holds
  // no record still to replay (unless the disk stopped).
  std::string check_consistency() const override;

  BackingStore& store() { return *store_; }

 private:
  // The sectors covering [offset, offset+len), as one run.
  static SectorRun covering_run(uint64_t offset, uint64_t len);
  uint64_t blocks_covering(uint64_t offset, uint64_t len) const;
  void set_live(uint64_t first_block, uint64_t end_block, bool live);
  bool is_live(uint64_t block) const { return (live_[block / 64] >> (block % 64)) & 1; }
  void rebuild_live_map();
  void write_zeros(uint64_t offset, uint64_t len);

  // A request's simulated time and counters as its steps add up.
  struct Clock {
    SimTime now;
    ServiceBreakdown breakdown{};
    uint64_t written = 0;  // physical blocks written
    uint32_t syncs = 0;
    void add(const Access& a) {
      now = a.end;
      breakdown += a.breakdown;
    }
    Completion done() const { return Completion{now, breakdown, written, 0, syncs}; }
  };
  // commit_group's steps (inplace_disk.cc says why in this order).
  void write_record(const std::vector<std::byte>& record, uint64_t seq, Clock& clock);
  void write_home(std::span<const GroupBlock> blocks, Clock& clock);
  struct Undo {
    std::vector<std::byte> bytes;  // per block, its old contents (if live)
    std::vector<bool> live;
  };
  Undo undo_of(std::span<const GroupBlock> blocks) const;
  enum class RollBack { kUndone, kCommitted, kUndecided };
  RollBack roll_back(std::span<const GroupBlock> blocks, const Undo& undo, uint64_t seq);
  void strand(std::span<const GroupBlock> blocks, const Error& e);
  void sync(Clock& clock);
  void write_void(uint64_t seq);
  // The store's sync for every request but commit_group (the .cc says why);
  // true if it wrote the void first, which with_void then charges.
  bool sync_after_void();
  Access with_void(Access a, bool voided);
  // Opening: replays a committed record a crash left in the journal.
  void recover();
  // Reads see the group kept in stranded_ (see there).
  void patch_stranded(uint64_t offset, std::span<std::byte> out) const;

  std::unique_ptr<FailStopStore> store_;  // stops the disk after a failed sync
  Superblock sb_;
  DriveModel drive_;
  std::vector<uint64_t> live_;  // one bit per export block
  uint64_t live_blocks_ = 0;
  RedoJournal journal_;
  uint64_t next_seq_ = 1;  // the next record's seq
  // The seq of a record whose group is home and synced, still valid on the
  // platters: voided before the next sync (invariant (3)).
  std::optional<uint64_t> void_pending_;
  InplaceRecoveryReport recovery_;  // what the open read and replayed
  // A group whose home writes failed after its commit point: the disk has
  // stopped, the journal holds it durably (the next open replays it), and
  // until then reads see it from here. Block -> contents (empty: zeros).
  std::map<uint64_t, std::vector<std::byte>> stranded_;
};

}  // namespace vld

#endif  // VLD_CORE_INPLACE_INPLACE_DISK_H_
