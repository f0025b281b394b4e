// VldDisk::Impl: the state and the steps of mode=vld; vld_disk.h says what
// the disk promises (its invariants, crash contract and thread contract).
// The members are split over files by concern:
//   vld_disk.cc             opening, log records, the write path, client
//                           requests (and VldDisk's forwarding to Impl)
//   vld_disk_compaction.cc  compaction moves and repack
//   vld_disk_checkpoint.cc  delta checkpoints
//   vld_disk_stats.cc       trace lines, consistency check, statistics
//
// The write path allocates nothing on the heap once its buffers have grown
// to the largest request seen (ApplyScratch, request_updates_, runs_),
// except the extents the allocator returns; it writes each run of data and
// map sectors that lies back to back in the image with one store call
// (gather_).
//
// Thread-safety: not thread-safe (see Disk); DiskController serialises.
#ifndef VLD_CORE_VLD_VLD_DISK_IMPL_H_
#define VLD_CORE_VLD_VLD_DISK_IMPL_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/disk.h"
#include "core/store/backing_store.h"
#include "core/store/write_gather.h"
#include "core/vld/compactor.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/free_space_map.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery.h"
#include "core/vld/scan_set.h"
#include "core/vld/track_slots.h"
#include "core/vld/virtual_log.h"
#include "core/vld/vld_disk.h"
#include "core/vld/vld_layout.h"
#include "core/vld/vld_options.h"
#include "core/vld/vld_report.h"

namespace vld {

class VldDisk::Impl {
 public:
  // VldDisk's operations (vld_disk.h says what each promises), which it
  // forwards here.
  Impl(std::unique_ptr<BackingStore> store, const Superblock& sb, VldOptions options,
       bool track_buffer);
  static void format(BackingStore& store, const Superblock& sb);

  const Superblock& superblock() const { return sb_; }
  const DriveModel& drive() const { return drive_; }
  void set_track_buffer(bool on) { drive_.set_track_buffer(on); }

  Completion read(uint64_t offset, std::span<std::byte> out, SimTime start);
  SimDuration positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                   SimTime start) const;
  // sums: the whole blocks' data checksums, computed already (may be empty).
  Completion write(uint64_t offset, std::span<const std::byte> data, bool fua, SimTime start,
                   BlockChecksums sums);
  Completion flush(SimTime start);
  Completion trim(uint64_t offset, uint64_t len, bool fua, SimTime start);
  Completion zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start);
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn);
  Completion commit_group(std::span<const GroupBlock> blocks, SimTime start);
  Completion place_shadow(std::span<const GroupBlock> blocks, SimTime start,
                          std::vector<uint64_t>* tokens);
  void drop_shadow(uint64_t token);
  std::optional<Completion> idle_step(SimTime start, SimTime idle_ends);
  uint64_t live_blocks() const { return live_blocks_; }
  uint64_t max_atomic_write_bytes() const;
  void close();

  VldReport report() const;
  CompactorReport compactor_report() const;
  const RecoveryReport& recovery() const { return recovery_; }
  const std::vector<MapEntry>& map() const { return map_; }
  const VldStats& vld_stats() const { return stats_; }
  const EagerAllocator& allocator() const { return alloc_; }
  const FreeSpaceMap& free_space() const { return free_; }
  const Compactor& compactor() const { return compactor_; }
  const VirtualLog& virtual_log() const { return log_; }
  // blocks_on_ and the log's per-track lists.
  uint64_t track_lists_bytes() const {
    return blocks_on_.memory_bytes() + log_.track_lists().memory_bytes();
  }
  std::optional<uint32_t> compaction_victim() const;
  // From blocks_on_ and the log's per-track lists.
  void live_on(uint32_t track, std::vector<uint64_t>* blocks, std::vector<uint32_t>* pieces) const;
  bool repack_now(SimTime start);
  std::string check_consistency() const;

 private:
  // An image's store with what recovery found in it, before the disk's own
  // structures exist: recovery's working set (the map it builds, every
  // walked map sector's pointers) and those structures never coexist, so
  // opening peaks at about what the open disk holds (docs/scale.md,
  // section 3).
  struct Recovered {
    std::unique_ptr<FailStopStore> store;
    RecoveredState state;
  };
  static Recovered recover_image(std::unique_ptr<BackingStore> store, const Superblock& sb,
                                 const VldOptions& options, bool track_buffer);
  Impl(Recovered recovered, const Superblock& sb, VldOptions options, bool track_buffer);

  struct Update {
    uint64_t block;
    const std::byte* data;  // nullptr: unmap
    // An ARU's block place_shadow wrote already (data is its contents):
    // its map entry to be. nullptr: data is written now.
    const MapEntry* placed = nullptr;
    // data_checksum(data, block), if the caller computed it before the
    // request took the lock (BlockChecksums); nullopt: write_data hashes.
    std::optional<uint32_t> checksum = std::nullopt;
  };
  // An ARU's block placed before its commit (place_shadow), by token.
  struct ShadowCopy {
    uint64_t block;  // the export block it is a new version of
    MapEntry entry;  // where it is, and its checksum
  };
  // The simulated time and cost of serving one request (one drive command:
  // pre-reads for read-modify-write, then placement and writes), carried
  // through every step that moves the head or transfers.
  struct ServiceClock {
    SimTime now;                 // when the command's next mechanical step starts
    ServiceBreakdown breakdown;  // where the time went so far
    bool overhead_charged = false;
    uint64_t blocks_written = 0;  // physical data blocks written
    uint32_t syncs = 0;
  };

  // The track being emptied and what is still to move off it.
  struct Victim {
    uint32_t track = 0;
    std::vector<uint64_t> blocks;   // data blocks on it when chosen
    std::vector<uint32_t> pieces;   // map pieces whose live sector is on it
    size_t next_block = 0, next_piece = 0;
    bool read = false;              // the track is in the track buffer
    CompactorStats at_start;        // for the trace line when it ends
    // Blocks and map sectors not looked at yet (some may need no move).
    size_t moves_left() const;
  };
  // How a victim ends: emptied; a move found no hole (compaction settles);
  // or cut short because the idle period is ending (it does not settle).
  enum class VictimEnd { kEmptied, kNoHole, kCutShort };

  void install(RecoveredState& st);
  // The recovered tree as the log, if it is whole (false: it was extended
  // by requests since the record and is not; the log is left empty).
  // Throws if the record's own tree is broken.
  bool install_tree(RecoveredState& st);
  void write_checkpoint(RecoveredState& st);
  // ---- delta checkpoints (vld_disk_checkpoint.cc) ----
  // Pieces whose live map sector a request or a move just wrote: scattered
  // until the next checkpoint rewrites them.
  void note_scattered(std::span<const PlannedNode> group);
  void note_scattered_piece(uint32_t piece);
  // Whether a delta checkpoint is due at `now` (checkpoint_every_*).
  bool checkpoint_due(SimTime now) const;
  // A delta checkpoint is spread over the requests that follow the one
  // that made it due, a group (a track's worth of pieces) each, so that no
  // request waits for all of it (docs/scale.md, section 0b).
  // begin_delta takes the scattered pieces and the next turn of the rest
  // (add_rotation) as its work. REQUIRES: no delta under way, some scattered.
  void begin_delta();
  // Writes up to max_groups groups of the delta under way, placed by `mode`
  // (kEager or kHolePlug; the other if that finds no room); once its pieces
  // are done, also the pieces requests scattered meanwhile. true: the delta
  // is complete, and the caller writes the record next (the checkpoint
  // counts only then). On ENOSPC the delta is given up (false): its pieces
  // are scattered again. REQUIRES: a delta under way.
  bool advance_delta(ServiceClock& clock, PlaceMode mode, size_t max_groups);
  // Rewrites `pieces` unchanged, in groups of delta_group_pieces(), adding
  // each group's pieces to *done once it is written; false if neither
  // placement has room for one.
  bool write_delta_groups(std::span<const uint32_t> pieces, ServiceClock& clock, PlaceMode mode,
                          size_t* done);
  void finish_delta(SimTime now);
  uint32_t delta_group_pieces() const;
  // In idle time: a delta checkpoint and its record, the head back where
  // it was, if compaction has nothing to do and it fits before idle_ends.
  std::optional<Completion> idle_checkpoint(SimTime start, SimTime idle_ends);
  // idle_step's work; idle_step hands an error to the next request too.
  std::optional<Completion> idle_work(SimTime start, SimTime idle_ends);
  void add_rotation(std::vector<uint32_t>* pieces);
  // A full checkpoint has just rewritten every live piece, or the tree was
  // installed from disk: what is scattered starts from here.
  void reset_scattered(uint64_t checkpoint_seq, SimTime now);
  // Rewrites every live piece as one group forming a fresh, balanced tree.
  void checkpoint(ServiceClock& clock, bool retire_old);
  // Writes `updates` and a new version of every map piece they change (and
  // of `rewrite_pieces`, unchanged) as one group. PlaceMode::kEager never
  // fails (it moves the window, or throws ENOSPC); kHolePlug (a compaction
  // move) returns false, having written nothing, if no hole takes it.
  // If a write of the backing store fails, the request's state changes are
  // undone (map, free space) and the error is thrown: see abandon_group.
  // A delta checkpoint's group (checkpoint) is placed eagerly but is no
  // client write: it neither unsettles compaction nor is scattered, and
  // its caller writes the record.
  bool apply(std::span<const Update> updates, std::span<const uint32_t> rewrite_pieces, bool fua,
             ServiceClock& clock, PlaceMode mode = PlaceMode::kEager, bool checkpoint = false);
  // Where a request's data blocks and map sectors go, as apply() plans them.
  struct Placement {
    std::vector<PlannedNode> group;
    std::vector<Extent> extents;  // data blocks first, then group members
    size_t data_pieces = 0;
    std::vector<size_t> order;    // extents in the order the head meets them
    AllocatorStats alloc_before;
  };
  // What one apply() works in, kept between requests so that the write
  // path does not allocate once the buffers have grown. One per nesting
  // level (apply_scratch_[depth]): placing a group may repack, which
  // applies a group of its own while the outer one's buffers are in use.
  struct ApplyScratch {
    Placement placed;
    std::vector<uint32_t> pieces;       // map pieces the group touches
    std::vector<uint32_t> sizes;        // sectors of each piece to place
    std::vector<uint32_t> member_psns;  // where group member i went
    std::vector<std::pair<uint64_t, MapEntry>> replaced;  // (block, entry before)
    std::vector<Extent> in_time;        // extents in the order the head meets them
  };
  // The next nesting level's scratch, for as long as the lease lives.
  class ScratchLease {
   public:
    explicit ScratchLease(Impl& d);
    ~ScratchLease() { --depth_; }
    ScratchLease(const ScratchLease&) = delete;
    ScratchLease& operator=(const ScratchLease&) = delete;
    ApplyScratch& operator*() const { return *s_; }

   private:
    size_t& depth_;
    ApplyScratch* s_;
  };
  // Places `sizes` (data pieces first) near the head, moving the window
  // (a record) when it is full and repacking when free space is only in
  // runs too short for a block, after which replan() may change sizes.
  // The extents go to *ext (its buffer reused: every write places).
  // false: a move (mode != kEager) found no hole. Throws ENOSPC.
  bool allocate(std::vector<uint32_t>& sizes, size_t data_pieces,
                const std::function<void()>& replan, ServiceClock& clock, PlaceMode mode,
                std::vector<size_t>* order, std::vector<Extent>* ext);
  // Plans the group and allocates its sectors (moving the window, writing
  // records or repacking as needed) into s.placed, using s's buffers.
  // false: a move found no hole.
  bool place_group(std::span<const Update> updates, std::span<const uint32_t> rewrite_pieces,
                   ServiceClock& clock, PlaceMode mode, ApplyScratch& s);
  // apply()'s writes: s.placed's data blocks and map sectors, with map_
  // pointing at the new data (s.replaced: the entries before) and
  // s.member_psns where each group member went. If a write fails, map_ is
  // put back, the group abandoned (abandon_group) and the error rethrown.
  void write_group(std::span<const Update> updates, ApplyScratch& s, ServiceClock& clock);
  // Gathers the data blocks' writes (gather_) and points map_ at them,
  // remembering in `replaced` each entry it changed (to undo or to free).
  void write_data(std::span<const Update> updates, std::span<const Extent> ext,
                  std::vector<std::pair<uint64_t, MapEntry>>& replaced);
  // Encodes the group's map sectors from map_ into map_bytes_ and gathers
  // their writes after the data's.
  void write_map_sectors(std::span<const Update> updates, std::span<const PlannedNode> group,
                         std::span<const Extent> ext, size_t data_pieces,
                         std::span<const uint32_t> member_psns);
  // A request whose writes failed: its seqs are skipped, any map sector of
  // it that reached the platter is voided by a log record, and its sectors
  // are free again. If the record fails too, the disk stops (FailStopStore).
  void abandon_group(const Placement& placed, size_t map_sectors_written, ServiceClock& clock);
  void trace_group(std::span<const PlannedNode> group, std::span<const uint32_t> member_psns) const;
  // Compaction: picks the next victim (false: nothing worth doing), moves
  // one thing off it, finishes it.
  bool choose_victim(SimTime now);
  bool move_next(ServiceClock& clock);
  void end_victim(ServiceClock& clock, VictimEnd how);
  // Forgets a victim nothing was moved off yet (its whole track would not
  // fit in the idle time).
  void drop_victim();
  // With nothing left to compact in the window: moves it on to the next
  // cylinders (a log record), or back to where the sweep began once every
  // cylinder has been compacted. REQUIRES: sweep_pending().
  void next_compaction_window(ServiceClock& clock);
  // Writes a log record (write_record), then moves the head back to `to`
  // while the drive is still idle.
  void record_and_return(ServiceClock& clock, std::optional<CylinderWindow> next_window,
                         const char* why, HeadPosition to);
  bool sweep_pending() const;
  uint32_t windows_on_disk() const;  // windows of window= cylinders that cover the disk
  // A client write changed the free space: compaction starts over.
  void unsettle_compaction() {
    compaction_settled_ = false;
    windows_compacted_ = 0;
    sweep_home_.reset();
  }
  // Running out of room for whole blocks: every write leaves the few
  // sectors the head passes during the controller overhead free behind it,
  // too few for a block, so a disk filled by back-to-back writes runs out
  // of block-sized runs with a quarter of its free space left. An empty
  // reserve track, which only a repack uses, takes the blocks of the track
  // with the most such sectors, packed back to back (one group, so a crash
  // keeps either copy); the next record frees the old copies, and the
  // emptied track is the new reserve. false: no reserve, or nothing to gain.
  // A write (kForWrite) takes any victim whose packed blocks leave a run
  // that holds a block, as the capacity check counts on; idle time
  // (kForIdle) only one that gains room for good (repack_gains).
  enum class RepackFor { kWrite, kIdle };
  bool repack(ServiceClock& clock, RepackFor why = RepackFor::kWrite);
  // The tracks repack() may empty onto `reserve`, as (free sectors,
  // track), the most free sectors first.
  std::vector<std::pair<uint32_t, uint32_t>> repack_victims(uint32_t reserve) const;
  // Whether moving `blocks` (and the map sectors of `pieces`) of `track`
  // onto the empty reserve leaves a run there that holds more blocks than
  // the track's free runs hold now, even if those map sectors land there.
  bool repack_gains(uint32_t track, uint32_t reserve, std::span<const uint64_t> blocks,
                    std::span<const uint32_t> pieces) const;
  void choose_reserve();
  // Whether so few free runs hold a block that idle time should repack.
  bool block_runs_scarce() const;
  // Whether some usable track has a free run for the largest piece.
  bool could_fit_anywhere(std::span<const uint32_t> sizes) const;
  // The scan set the next record names, for window w (scan_set.h): around
  // the head and each of resume_cylinders.
  ScanSet record_scan_set(const CylinderWindow& w,
                          std::span<const uint32_t> resume_cylinders) const;
  // Adds `cylinder`, its neighbours, and the nearest cylinder with a usable
  // empty track on either side of it: where eager writing from there goes.
  void add_resume_point(ScanSet& s, uint32_t cylinder) const;
  // Grows the scan sets by a request's map sectors, once written.
  void note_map_sectors_written(std::span<const Extent> map_sectors, bool move);
  // The cylinder of the first map sector of a placement (the extents from
  // data_pieces on) outside the scan set, or nullopt if all lie in it.
  std::optional<uint32_t> beyond_scan_set(std::span<const Extent> ext, size_t data_pieces) const;
  // alloc_.place, kept to the scan set: a placement with a map sector
  // outside it stands, but a record naming a set around it comes first (the
  // whole window, when the widening credits are spent). Into *ext; false:
  // nothing placed.
  bool place_in_scan_set(std::vector<uint32_t>& sizes, size_t data_pieces, ServiceClock& clock,
                         PlaceMode mode, std::vector<size_t>* order, std::vector<Extent>* ext);
  // What a record is written for, as far as the widening credits care: a
  // widening spends them (place_in_scan_set), every other record earns one.
  enum class RecordKind { kOrdinary, kWidening };
  // why: what called for the record, for the log trace. resume_cylinders:
  // where the writes resume after it besides the head (the cylinder
  // record_and_return takes the head back to, or the map sectors of the
  // placement a widening is written for); its scan set covers them.
  void write_record(bool clean, ServiceClock& clock, std::optional<CylinderWindow> next_window,
                    const char* why, RecordKind kind = RecordKind::kOrdinary,
                    std::span<const uint32_t> resume_cylinders = {});
  // A clean record says the platters hold nothing since it, so recovery
  // trusts it whole. After a clean open it stays the newest until the first
  // group is written, which first writes an "open" record over it: a
  // read-only session leaves the image as it found it.
  // REQUIRES: called before a group's first store write.
  void leave_clean(ServiceClock& clock);
  void sync(ServiceClock& clock);
  // Unmapped, and the map piece saying so is on stable storage (or the
  // piece was never written): no crash can bring a mapping back.
  bool durably_unmapped(uint64_t block) const;
  void maybe_write_record(ServiceClock& clock);
  // maybe_write_record after a committed request, whose failure the next
  // request reports (FailStopStore::defer).
  void record_after_request(ServiceClock& clock);
  // window_ = w, and the free-space map watches its tracks.
  void set_window(const CylinderWindow& w);
  uint64_t window_free_sectors() const;
  // A command arriving at `start`: the controller overhead paid first.
  ServiceClock begin(SimTime start) const;
  CylinderWindow window_at(uint32_t cylinder) const;
  // Of the windows that hold `cylinder`, the one with the most empty tracks
  // (then the most free sectors; then the one starting at it): where a
  // spent window moves on to.
  CylinderWindow roomiest_window_around(uint32_t cylinder) const;
  // The roomiest window around the head, if the current one has no empty
  // track left that a write may use and that one has: where a window the
  // writes have dried of empty tracks moves on to.
  std::optional<CylinderWindow> window_with_empty_tracks() const;
  // Reads a mapped block (verifying it) into out; charges the access.
  void read_block(uint64_t block, std::byte* out, ServiceClock& clock);
  // The next of rmw_blocks_ (*used of them are taken; one more is now)
  // holding the block as it reads now (read, and counted, if mapped; zeros
  // if not): the start of a read-modify-write.
  std::vector<std::byte>& current_contents(uint64_t block, size_t* used, ServiceClock& clock);
  void charge(std::span<const Extent> extents, ServiceClock& clock);
  // runs_ = the access that transfers `extents` in order (EagerAllocator::
  // runs, into a buffer kept between requests).
  std::span<const SectorRun> runs_of(std::span<const Extent> extents);
  // What reading costs the drive, through its track buffer.
  void charge_read(std::span<const SectorRun> runs, ServiceClock& clock);
  // One revolution puts a whole track in the track buffer.
  void read_track(uint32_t track, ServiceClock& clock);
  Extent extent_of(const MapEntry& e) const;
  uint32_t track_of(const MapEntry& e) const { return layout_.track_of(e.psn()); }
  // The one sector at psn (a map sector), as a free_ extent.
  Extent sector_at(uint64_t psn) const { return extent_at(psn, 1, layout_.geometry); }
  // Frees the map sector at psn.
  void release_sector(uint64_t psn) {
    const Extent e = sector_at(psn);
    free_.release(e.track, e.sector, 1);
  }
  // map_[block] = e, keeping blocks_on_ in step.
  void set_map(uint64_t block, const MapEntry& e);
  void store_write(const Extent& e, const void* bytes);
  // store_write into gather_: written at its next flush.
  void gather_extent(const Extent& e, const void* bytes);
  void store_read(const Extent& e, void* bytes);
  void release_data(const MapEntry& e);
  Completion finish(ServiceClock& clock) const;
  // Trace lines (util/trace.h), written only when their channel is on.
  std::string where(const Extent& e) const;  // "cylinder/head/sector+sectors"
  void trace_placement(std::span<const Update> updates, std::span<const PlannedNode> group,
                       std::span<const Extent> ext, size_t data_pieces, bool move,
                       const ServiceBreakdown& before, const ServiceClock& clock,
                       const AllocatorStats& alloc_before) const;
  void trace_recovery(const RecoveredState& st) const;

  std::unique_ptr<FailStopStore> store_;  // stops the disk after a failed sync
  Superblock sb_;
  VldLayout layout_;
  VldOptions options_;
  DriveModel drive_;
  FreeSpaceMap free_;
  EagerAllocator alloc_;
  VirtualLog log_;
  std::vector<MapEntry> map_;   // changed only through set_map (and install)
  TrackSlots blocks_on_;        // map_ inverted: the blocks each track holds
  uint64_t live_blocks_ = 0;
  LogRecord record_;              // the newest record on disk
  CylinderWindow window_;        // changed only through set_window (free_ watches its tracks)
  uint64_t window_free_at_open_ = 0;
  // Where the map sectors written since the newest record may lie, grown by
  // each request's (scan_set.h); recovery reads only these cylinders.
  ScanSet scan_set_ = ScanSet::whole(CylinderWindow{0, 1}, 1);
  // The set the newest record would have named if narrow, grown the same
  // way: whether the writes since it kept to a narrow set.
  ScanSet calm_set_ = ScanSet::whole(CylinderWindow{0, 1}, 1);
  // Since the newest record: no compaction move or repack, and every map
  // sector within calm_set_ (before its own request's).
  bool interval_calm_ = true;
  // Calm record intervals in a row; two make the next record narrow (an
  // open starts calm).
  static constexpr uint32_t kCalmIntervalsBeforeNarrow = 2;
  uint32_t calm_intervals_ = kCalmIntervalsBeforeNarrow;
  // What pays for a widening record that names a narrow set: each record
  // written for another reason earns one credit (up to kMostWideningCredits)
  // and such a widening spends kWideningCost, so they come at most one per
  // two other records, each a trip to the system track; without the credit
  // the writes jump about, and the widening names the whole window.
  static constexpr uint32_t kWideningCost = 2;
  static constexpr uint32_t kMostWideningCredits = 2 * kWideningCost;
  uint32_t widening_credits_ = kMostWideningCredits;
  std::vector<Extent> pending_data_;   // freed when the next record is durable
  std::vector<uint32_t> retired_map_;  // freed when the next record is durable
  uint64_t synced_seq_ = 0;            // every map sector up to it is durable
  Compactor compactor_;
  std::optional<Victim> victim_;
  // The last repack's victim, waiting for a record to free its old copies;
  // then it is the reserve (until then no placement uses it).
  std::optional<uint32_t> next_reserve_;
  // Nothing left to compact (or a move found no hole): wait for a write.
  bool compaction_settled_ = false;
  std::vector<TrackCensus> census_;  // choose_victim's scratch space, kept between calls
  // The compactor's sweep since the last client write: windows whose
  // compaction is done, and where the window was when it began (the writes
  // come back there). See next_compaction_window().
  uint32_t windows_compacted_ = 0;
  std::optional<uint32_t> sweep_home_;
  HeadPosition sweep_head_;  // where the head was then: it goes back there
  std::vector<SimTime> track_written_;  // last client data placed, per track
  // Delta checkpoints: the pieces whose live map sector was written since
  // the last checkpoint (no duplicates: scattered_[p] says p is listed),
  // where the next turn of rewriting older pieces starts, and the newest
  // checkpoint group's last seq (records carry it; recovery counts what it
  // walks above it). Invariant: every live map sector not listed, here or
  // in delta_.todo, lies in a checkpoint group and has seq <= checkpoint_seq_.
  std::vector<uint32_t> scattered_pieces_;
  std::vector<uint8_t> scattered_;
  uint32_t rotation_cursor_ = 0;
  SimTime last_checkpoint_at_{};
  uint64_t checkpoint_seq_ = 0;
  // The delta checkpoint under way, if any: the pieces it rewrites (taken
  // off scattered_pieces_ when it began, so they are listed here until the
  // record), how many are done, and what it has cost so far.
  struct DeltaInProgress {
    bool active = false;
    std::vector<uint32_t> todo;
    size_t done = 0;
    size_t scattered = 0;  // of todo, those that were scattered (the rest: rotation)
    uint64_t map_sectors = 0;
    SimDuration time{};
  };
  DeltaInProgress delta_;
  // ARUs' placed, uncommitted blocks (place_shadow), by token: allocated,
  // mapped by nothing; a track holding any is no compaction or repack
  // victim (those move mapped blocks only, then free the track).
  std::map<uint64_t, ShadowCopy> shadow_;
  std::vector<uint32_t> shadow_on_track_;
  VldStats stats_;
  RecoveryReport recovery_;
  // Buffers kept between requests (the thread contract above): apply()'s,
  // one per nesting level; a client request's updates and read-modify-write
  // blocks (client requests do not nest); runs_of()'s.
  std::vector<std::unique_ptr<ApplyScratch>> apply_scratch_;
  size_t apply_depth_ = 0;
  std::vector<Update> request_updates_;
  std::vector<std::vector<std::byte>> rmw_blocks_;
  std::vector<SectorRun> runs_;
  // apply()'s writes, from its first gathered one to its flush (no nested
  // apply runs in between: nesting happens only while placing), and the
  // encoded map sectors they point into.
  WriteGather gather_;
  std::vector<SectorBytes> map_bytes_;
};

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_DISK_IMPL_H_
