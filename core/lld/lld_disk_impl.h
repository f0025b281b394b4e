// LldDisk::Impl: the state and the steps of mode=lld; lld_disk.h says what
// the disk promises. The members are split over files by job:
//   lld_disk.cc        client requests: read, write, trim, zero, flush
//   lld_log_writer.cc  segment writes at the log head, checkpoints
//   lld_cleaner.cc     the segment cleaner, idle-time work
//   lld_nvram.cc       the NVRAM region: append, drain, reset
//   lld_open.cc        format, open and recovery, report, consistency
//   lld_aru.cc         atomic recovery units: commit_group
//
// Thread-safety: not thread-safe (see Disk); DiskController serialises.
// sync_through() alone runs beside requests: it touches only
// nvram_commit_ (thread-safe) and store_->sync_file().
#ifndef VLD_CORE_LLD_LLD_DISK_IMPL_H_
#define VLD_CORE_LLD_LLD_DISK_IMPL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/lld/checkpoint.h"
#include "core/lld/checkpoint_sectors.h"
#include "core/lld/lld_disk.h"
#include "core/lld/lld_layout.h"
#include "core/lld/nvram_log.h"
#include "core/lld/pending_log.h"
#include "core/lld/segment_summary.h"
#include "core/lld/segment_usage.h"
#include "core/store/backing_store.h"
#include "core/store/group_commit.h"

namespace vld {

// Client writes and drains clean below this many free segments: one to
// open when the log's segment closes, one for the cleaner's moves.
inline constexpr uint32_t kCleanerLowSegments = 2;
// The cleaner then works until this many more are free (or no victim
// helps), so that one checkpoint frees a batch of segments: a checkpoint
// writes the whole block map (checkpoint.h).
inline constexpr uint32_t kCleanerBatchSegments = 8;

// Where a request's time goes, step by step.
struct LldClock {
  explicit LldClock(SimTime start) : now(start) {}

  SimTime now;
  ServiceBreakdown breakdown;
  uint64_t blocks_written = 0;  // physical data blocks
  uint64_t blocks_read = 0;
  uint32_t syncs = 0;
  uint64_t sync_ticket = 0;  // group commit: the NVRAM seq to make durable (Completion)

  void add(const Access& a) {
    breakdown += a.breakdown;
    now = a.end;
  }
  // Memory time (NVRAM copies): no mechanism moves; counted as transfer.
  void spend(SimDuration d) {
    breakdown.transfer += d;
    now += d;
  }
  Completion done() const {
    return {now, breakdown, blocks_written, blocks_read, syncs, sync_ticket};
  }
};

class LldDisk::Impl {
 public:
  Impl(std::unique_ptr<BackingStore> store, const Superblock& sb, LldOptions options,
       bool track_buffer);
  static void format(BackingStore& store, const Superblock& sb);

  const Superblock& superblock() const { return sb_; }
  const DriveModel& drive() const { return drive_; }
  void set_track_buffer(bool on) { drive_.set_track_buffer(on); }

  Completion read(uint64_t offset, std::span<std::byte> out, SimTime start);
  Completion write(uint64_t offset, std::span<const std::byte> data, bool fua, SimTime start);
  Completion flush(SimTime start);
  Completion trim(uint64_t offset, uint64_t len, bool fua, SimTime start);
  Completion zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start);
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn);
  Completion commit_group(std::span<const GroupBlock> blocks, SimTime start);
  // Idle work that is expected to end by idle_ends (Disk::idle_step); an
  // error is the next request's to report too.
  std::optional<Completion> idle_step(SimTime start, SimTime idle_ends);
  uint64_t live_blocks() const { return usage_.total_live_blocks(); }
  // The most blocks a request may touch and always find room for whole
  // (room_for_request), whatever the state; and in bytes at any
  // alignment: Disk::max_atomic_write_bytes.
  uint64_t atomic_write_blocks() const;
  uint64_t atomic_write_bytes() const;
  void close();
  // Group commit of NVRAM appends (Disk::set_group_commit); format_version
  // 3 only: a version 2 record cannot say how far the region was synced.
  void set_group_commit(bool on) { group_commit_ = on && shape_.nvram_header_sector(); }
  uint32_t sync_through(uint64_t ticket);  // thread-safe (group_commit.h)
  void group_sync_failed();
  LldReport report() const;
  std::string check_consistency() const;
  const LldLayout& layout() const { return layout_; }
  SegmentState segment_state(uint32_t segment) const { return usage_.state(segment); }
  std::optional<uint64_t> segment_psn(uint32_t block) const {
    if (block >= map_.size() || map_[block].psn_plus_one == 0) return std::nullopt;
    return psn_of(map_[block]);
  }

 private:
  // ---- client requests (lld_disk.cc)
  bool has_nvram() const { return layout_.nvram_records > 0; }
  uint32_t block_bytes() const { return sb_.block_bytes; }
  // The block's newest contents: buffered, pending, in its segment, or zeros.
  // Reads from a segment are added to *runs (if given) for the drive.
  std::vector<unsigned char> current_block(uint32_t block, std::vector<SectorRun>* runs);
  std::vector<unsigned char> read_segment_copy(uint32_t block);
  LogEntry data_entry(uint32_t block, std::vector<unsigned char> bytes);
  LogEntry trim_entry(uint32_t first_block, uint32_t blocks);
  // The entries of writing data at offset (whole blocks; edges read, merged).
  std::vector<LogEntry> entries_for_write(uint64_t offset, std::span<const std::byte> data,
                                          LldClock& c);
  // Logs one client request (entries in order): NVRAM, or the open segment.
  // If it fails, what of it is still in memory is dropped (log_request).
  void submit(std::vector<LogEntry> entries, bool fua, LldClock& c);
  // The request to segments (log_to_segments), and with `durable` out and
  // synced; on a failure its entries still in pending_ are taken out, so
  // that no later flush writes a request that failed.
  void log_request(std::vector<LogEntry> entries, bool durable, LldClock& c);
  // The request into pending_ and out to segments as they fill, whole: it
  // is in the log before this returns, or still wholly in memory. Throws
  // ENOSPC, having written nothing of it, if room_for_request finds no
  // room for it.
  void log_to_segments(std::vector<LogEntry> entries, LldClock& c);
  // Cleans if the free segments are short; true if a chain of `entries`
  // (the memory copy's included) then fits.
  bool make_room(size_t entries, LldClock& c);
  // Makes room for a request of `entries` entries beside the memory copy,
  // writing the memory copy out if that helps; false if even then the clean
  // segments cannot take it whole. A request is never written in pieces.
  bool room_for_request(size_t entries, LldClock& c);
  // What a chain may add beside the memory copy's entries.
  size_t room_beside_pending() const;
  // nvram=0 and fua: the memory copy out and synced.
  Completion flush_if(bool fua, LldClock& c);

  // ---- the log head (lld_log_writer.cc)
  uint32_t room_sectors() const;
  // pending_'s live entries, in log order.
  std::vector<const LogEntry*> pending_chain() const;
  // The first segment write of write_pending(force=true), written and
  // applied; a failure changes nothing. False if pending_ is empty.
  // (Draining NVRAM, one write at a time: its entries each end a request.)
  bool write_one(LldClock& c);
  // pending_'s segment writes as plan_chain lays them out (with force all
  // of it; without, whole segments while the rest does not fit, and the
  // rest too if a request is left unfinished), written out all before any
  // is applied: a failure applies none of them, leaves pending_ as it was,
  // voids their seqs (void_chain) and throws.
  void write_pending(bool force, LldClock& c);
  // One segment write of entries at the log head, applied to the map.
  void emit_write(const std::vector<const LogEntry*>& entries, bool close, bool continues,
                  LldClock& c);
  // A segment write planned but not yet written: where it goes, its
  // summary and its bytes ([summary][blocks]). emit_write is plan_write,
  // write_out, apply_write; write_pending and an ARU's commit (lld_aru.cc)
  // write out all of their writes before they apply any.
  struct PlannedWrite {
    SegmentSummary summary;
    std::vector<const LogEntry*> entries;  // in summary order; owned by the caller
    std::vector<unsigned char> bytes;
    uint64_t psn = 0;  // of its first sector
    uint32_t sectors() const { return static_cast<uint32_t>(bytes.size() / kSectorBytes); }
  };
  // next_segment: where the log goes if the write closes its segment.
  PlannedWrite plan_write(std::vector<const LogEntry*> entries, uint32_t segment,
                          uint32_t head_sector, uint64_t seq, bool close, bool continues,
                          uint32_t next_segment) const;
  // The bytes into the image and the transfer through the drive model;
  // changes no state.
  void write_out(const PlannedWrite& w, LldClock& c);
  // A written write into the map, the usage table and the log head.
  // REQUIRES: w starts at the log head with seq next_seq_.
  void apply_write(const PlannedWrite& w, LldClock& c);
  // writes into the image in order; after a failure, void_chain and rethrow.
  void write_chain(const std::vector<PlannedWrite>& writes, LldClock& c);
  // writes (written) applied in order; returns how many entries they hold.
  size_t apply_chain(const std::vector<PlannedWrite>& writes, LldClock& c);
  // The segment writes of chain from the log head, at most max_writes,
  // opening free segments lowest first. whole: all of chain, the last write
  // not continuing; else what write_pending(force=false) writes (maybe
  // nothing). REQUIRES: !in_group_.
  std::vector<PlannedWrite> plan_chain(const std::vector<const LogEntry*>& chain, bool whole,
                                       size_t max_writes = SIZE_MAX) const;
  // After a failed write of a chain of `writes` writes: their seqs voided.
  void void_chain(size_t writes, LldClock& c);
  void apply_entry(const LogEntry& e, uint32_t segment, uint64_t psn, uint64_t seq);
  void kill_copy(uint32_t block);
  // Closes the open segment if the room left holds no block.
  bool must_close_after(uint32_t sectors_written) const;
  // Writes a checkpoint of the map and the usage table (sync, write, sync)
  // and frees the segments it shows empty.
  void write_checkpoint(bool clean, LldClock& c);
  // What the next checkpoint writes into its slot, with its incremental
  // checkpoints (versions 3, 4; checkpoint.h): the slot's stale table
  // sectors appended to its journal if they fit, else, with those the
  // journal holds, in place (a fold).
  struct CheckpointPlan {
    int slot = 0;                   // (checkpoint_generation_ + 1) % 2
    std::vector<uint32_t> sectors;  // the table sectors it writes, ascending
    bool append = false;            // into the journal, not in place
    uint32_t journal_used = 0;      // the journal sectors its record names
    std::vector<SectorRun> runs;    // the record's sector, then the rest ascending
  };
  CheckpointPlan plan_checkpoint() const;
  // cp (its position fields set) into slot cp.generation % 2 of the image,
  // with the tables as they stand; returns the sectors written. Version 2:
  // the whole slot; versions 3, 4: as `plan` says, and the record.
  std::vector<SectorRun> write_whole_checkpoint(Checkpoint& cp);
  void write_checkpoint_sectors(Checkpoint& cp, const CheckpointPlan& plan);
  // The sectors the next checkpoint writes, ascending (what it costs).
  std::vector<SectorRun> checkpoint_runs() const;
  void sync(LldClock& c);

  // ---- the cleaner (lld_cleaner.cc)
  // Cleans until target free segments (or no victim helps), then
  // checkpoints to free them. Returns true if anything was freed. Up to
  // must_free, it also checkpoints when the next victim's blocks do not fit
  // and goes on (a request that needs that many, atomic_write_blocks); past
  // it, it stops there, so that a write does not pay for the whole batch.
  bool clean_until(uint32_t target_free, LldClock& c, uint32_t must_free = 0);
  void clean_segment(uint32_t victim, LldClock& c);
  // A live block of a victim as read: the entry that moves it, and the
  // sector it was read from (the map must still name that copy to move it).
  struct VictimBlock {
    LogEntry entry;
    uint64_t psn = 0;
  };
  // The victim's live blocks, their data not read yet.
  std::vector<VictimBlock> live_blocks_of(uint32_t victim) const;
  // Copies each block's data out of `bytes`, the sectors of `run`.
  // REQUIRES: every block lies inside run.
  void fill_blocks(std::span<VictimBlock> blocks, const SectorRun& run,
                   std::span<const unsigned char> bytes) const;
  // The run's bytes from the image, in victim_buffer_: valid until the next
  // call. The cleaner reads a whole segment per victim; one buffer, grown
  // once, spares an allocation and its zeroing each time.
  std::span<const unsigned char> read_victim_run(const SectorRun& run);
  // The idle victim's blocks not moved yet, the ones not read yet read
  // now; the idle victim let go. REQUIRES: idle_victim_current().
  std::vector<VictimBlock> take_idle_victim(LldClock& c);
  // The moved blocks at the log head, closing segments as they fill.
  void write_moves(const std::vector<const LogEntry*>& moves, LldClock& c);
  // Whether a victim's live blocks fit the room and the free segments,
  // leaving `reserve` segments free: each write of them that closes a
  // segment opens a free one.
  bool moves_fit(uint32_t victim, uint32_t reserve) const;
  // The same for `live` blocks, with `room` sectors left in the open
  // segment and `free` free segments.
  bool blocks_fit(uint32_t live, uint32_t room, uint32_t free, uint32_t reserve) const;
  // ---- idle time (lld_cleaner.cc): steps that end by idle_ends
  // (kUnknownIdleEnd: any), each one drive command, or nothing (nullopt).
  std::optional<Completion> idle_work(SimTime start, SimTime idle_ends);
  // One write of the NVRAM buffer's oldest entries into the open segment.
  bool idle_drain_write(SimTime idle_ends, LldClock& c);
  // The next step of idle cleaning: a victim's next moves, a new victim
  // read, or a checkpoint that frees the victims emptied; `reserve` free
  // segments are left to the memory copy's writes.
  bool idle_clean_step(uint32_t reserve, bool reads_only, SimTime idle_ends, LldClock& c);
  // Reads the idle victim's next live blocks (one run); writes the read
  // ones at the log head, as many as end in time and leave the rest room.
  // REQUIRES: idle_victim_, with blocks not read (idle_read), or read and
  // not moved (idle_move_write).
  bool idle_read(SimTime idle_ends, LldClock& c);
  bool idle_move_write(uint32_t reserve, SimTime idle_ends, LldClock& c);
  // Drops the idle victim's blocks whose copy the map no longer names.
  // REQUIRES: idle_victim_current().
  void forget_moved_away();
  bool idle_checkpoint(SimTime idle_ends, LldClock& c);
  // Whether a whole segment written over the open segment's sectors from
  // `now` (the log head's cylinders) ends by idle_ends: the pause a
  // victim's first move needs without NVRAM (lld_cleaner.cc).
  bool pause_holds_a_segment_write(SimTime now, SimTime idle_ends) const;
  // Whether the idle victim's segment is the one chosen (not freed, and
  // maybe reused, since). REQUIRES: idle_victim_.
  bool idle_victim_current() const;
  // Counts the idle victim cleaned and lets it go. REQUIRES: it is
  // current and has no live block left.
  void finish_idle_victim();
  // Of chain's first entries, (the most one write at the log head takes, the
  // most of those whose write ends by idle_ends when it starts at `start`).
  std::pair<size_t, size_t> entries_that_fit(const std::vector<const LogEntry*>& chain,
                                             SimTime start, SimTime idle_ends) const;
  // One write of `sectors` at the log head, starting at `start`: its end.
  SimTime log_write_end(uint64_t sectors, SimTime start) const;
  // Where the head is over psn; the seek from `from` to the log head; and
  // that seek made (after an idle read or checkpoint).
  HeadPosition head_at(uint64_t psn) const;
  SimDuration back_to_log_head(HeadPosition from) const;
  void return_to_log_head(LldClock& c);
  // Entries a request of n entries may carry before the cleaner must run.
  size_t group_capacity_entries() const;
  uint32_t segments_for_entries(size_t entries) const;

  // ---- atomic recovery units (lld_aru.cc)
  // The group as one request's entries: a data entry per block, a trim
  // entry per run of consecutive zero blocks; only the last ends the request.
  std::vector<LogEntry> group_entries(std::span<const GroupBlock> blocks);
  // The memory copy and the group as one chain of segment writes: all
  // written, synced, and only then applied (and the memory copy emptied).
  // REQUIRES: room_for_request(group) was true; no buffered NVRAM entry.
  void commit_chain(const std::vector<LogEntry>& group, LldClock& c);

  // ---- NVRAM (lld_nvram.cc)
  // The entries as one request's records, written and synced; a failed
  // write is voided (void_nvram_request) before it throws.
  void nvram_append(const std::vector<LogEntry>& entries, LldClock& c);
  // After a failed append at region offset `at`: its first record zeroed and
  // synced, so that replay never takes the request, and a reset made due.
  // If that fails too, the disk stops.
  void void_nvram_request(uint64_t at, LldClock& c);
  // Writes the whole buffer into segments and resets the region.
  void drain(LldClock& c);
  void nvram_reset(LldClock& c);
  uint64_t nvram_free_records() const;
  uint64_t nvram_region_offset() const;
  SimDuration nvram_cost(size_t records) const;  // nvram_us= per 4 KiB

  // ---- open and recovery (lld_open.cc)
  // A segment write as roll-forward found it.
  struct RecoveredWrite {
    SegmentSummary summary;
    std::vector<unsigned char> data;  // its data blocks, in entry order
  };
  void recover();
  // The write with seq at (segment, sector) if it is there whole: an
  // authentic summary naming that place and seq, and every block matching
  // its checksum. Charges the reads to c.
  std::optional<RecoveredWrite> read_log_write(uint32_t segment, uint32_t sector, uint64_t seq,
                                               LldClock& c);
  void apply_recovered(const RecoveredWrite& w);
  // From the checkpoint's log head on, applying writes a request at a time
  // (a write with `continues` waits for the rest of its request).
  void roll_forward(LldClock& c);
  // The newer checkpoint whose record and tables are whole (else the
  // older's; nullopt if neither), and what the other slot holds stale:
  // both records are read, the newer slot's tables, and the older's unless
  // its record shows the same tables. Charges the reads to c.
  std::optional<Checkpoint> load_checkpoint(LldClock& c);
  // The slot the next checkpoint goes to (generations alternate).
  int next_checkpoint_slot() const { return static_cast<int>((checkpoint_generation_ + 1) % 2); }
  // NVRAM records newer than the segments' versions into the buffer.
  // Throws EIO, naming the record, if damage there costs an acknowledged
  // write (nvram_log.h, "Damage"). True if the region holds no record of
  // its epoch and its header is whole: nothing to drain or reset.
  bool replay_nvram_region(LldClock& c);
  // Throws unless each damaged record's block has a newer version.
  void check_damaged_records(const NvramReplay& replay);
  void replay_record(NvramRecord& r);
  // Damage recovery worked around, for the report (LldRecoveryReport::damage).
  void note_damage(const std::string& what);
  std::vector<unsigned char> read_sectors(uint64_t psn, uint64_t sectors);
  uint64_t psn_of(const BlockMapEntry& e) const { return uint64_t{e.psn_plus_one} - 1; }

  std::unique_ptr<FailStopStore> store_;  // stops the disk after a failed sync
  const Superblock sb_;
  const LldLayout layout_;
  const LldShape shape_;
  const MacKey key_;
  const LldOptions options_;
  const uint32_t blocks_per_write_;  // max_blocks_per_write(shape_)
  DriveModel drive_;

  std::vector<BlockMapEntry> map_;  // per logical block: its newest copy in a segment
  SegmentUsageTable usage_;
  // Which table sectors each checkpoint slot holds stale, and its journal
  // (format_versions 3, 4): every change to map_ and usage_ is touched here.
  CheckpointSectors cp_sectors_;
  // Per segment: logical blocks written into it since it was opened (a
  // block may be listed twice, or be dead now); the cleaner checks the map.
  std::vector<std::vector<uint32_t>> segment_blocks_;
  // read_victim_run's bytes: no state, only a buffer kept between victims.
  std::vector<unsigned char> victim_buffer_;
  uint32_t head_sector_ = 0;   // the next write's sector in the open segment
  uint64_t next_seq_ = 1;      // of the next segment write
  uint64_t next_version_ = 1;  // of the next block written or trimmed
  uint64_t checkpoint_generation_ = 0;
  bool in_group_ = false;  // the last write had `continues` set
  // Anything changed since the open: a request or idle work wrote, or the
  // open itself had to (a recovery). A close with nothing changed writes
  // nothing.
  bool changed_since_open_ = true;

  PendingLog pending_;     // NVRAM buffer, or the open segment's memory copy
  NvramHeader nvram_header_;
  uint64_t nvram_next_seq_ = 1;
  // An append or a reset failed: drain and reset before the next append.
  bool nvram_reset_due_ = false;
  // Appends leave their sync to the request's caller (sync_through).
  bool group_commit_ = false;
  // Which NVRAM seqs are written and which durable; thread-safe itself.
  GroupCommit nvram_commit_;

  // Idle-time cleaning spread over idle steps (lld_cleaner.cc): the
  // victim's live blocks read a run at a time and written at the log head,
  // as many per step as the idle period is expected to hold, so that a
  // request waits for at most one short drive command. A move is made only
  // while the map still names the copy that was read: a block rewritten,
  // trimmed or moved by the request path's cleaner meanwhile stays as it
  // is, and bytes read from a segment that was freed and reused since are
  // never written. Invariant: next <= read <= blocks.size().
  struct IdleVictim {
    uint32_t segment = 0;
    uint64_t last_seq = 0;  // the segment's when chosen: a reused one has another
    std::vector<VictimBlock> blocks;  // live when chosen, in psn order
    size_t read = 0;   // blocks before it hold their data
    size_t next = 0;   // blocks before it are moved
    size_t moved = 0;  // by idle steps (the others were rewritten meanwhile)
  };
  std::optional<IdleVictim> idle_victim_;

  LldStats stats_;
  LldRecoveryReport recovery_;
};

}  // namespace vld

#endif  // VLD_CORE_LLD_LLD_DISK_IMPL_H_
