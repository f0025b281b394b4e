// VldDisk: the virtual log disk (paper 001, section 4.2), mode=vld.
//
// Every write goes to the free sectors the head reaches soonest
// (EagerAllocator), together with the map sectors of the pieces of the
// indirection map it changes, in one command and usually one rotational
// pass. The map lives in memory (8 bytes per block: MapEntry) and on disk as
// the virtual log (VirtualLog, map_sector.h); nothing is written at a fixed
// location per request.
//
// Freeing (paper 003 rule 2, paper 002 delayed freeing): a replaced data
// block or map sector is reused only after the next log record. By then the
// map sectors that no longer point to it are durable (the record is written
// after a sync), and recovery, which starts from the newest record, never
// looks at it again. Until then recovery may need it: it walks the record's
// tree through replaced map sectors, and it checks the data of every request
// written since the record, including requests whose blocks were rewritten
// later. (Freeing data at the next sync instead, which soft updates' rule 2
// alone allows, made recovery reject flushed requests whose data a later
// flushed request had replaced and a third had reused: found by
// VldDisk.UncleanReopenRecoversEverythingOnTheImage.) Nothing written since
// the last record is reused before the next one, which is also what lets
// recovery tell a lost write from a recycled one.
//
// Log records (map_sector.h) are written when the cylinder window is used up
// or too many replaced map sectors wait, and at open and clean close. Each
// costs the drive a trip to the system track. A record may name a scan set,
// the few cylinders of the window that recovery reads first (scan_set.h);
// a map sector due beyond it waits for a record naming the whole window.
//
// Running out of room for whole blocks: repack() packs a
// fragmented track onto an empty reserve track when no free run holds a
// block; idle_step() does it ahead of need once such runs are scarce.
//
// Compaction (paper 001, sections 2.3 and 4.2): in idle time, idle_step()
// empties one track at a time, chosen by the Compactor inside the cylinder
// window (where the next writes go, and where recovery looks for new map
// sectors): it reads the track into the track buffer, then moves each live
// block, and each live map sector, by hole-plugging, one block per step, each
// move an ordinary map update (a group under the crash contract whose data
// is unchanged, so a crash keeps either copy); then a log record frees the
// old copies and the track is empty. While a track is being emptied no
// placement uses it. A step starts only if the idle period is expected to
// outlast it, a victim only if the period is expected to outlast all of it;
// a victim whose moves ran long is closed by its record (cut short), never
// left half-emptied for the next burst; after the record the head goes back
// to where it was (docs/compaction.md section 2a).
//
// Crash contract (docs/crash-contract.md, clauses 1-8): after any crash
// the image opens without help; every write acknowledged with FUA or before
// a completed flush reads back; every request up to the maximum size reads
// back all old or all new; recovering gives the same state however often a
// crash cuts it. The rule that keeps the last: recovery never writes over
// what recovery from the same record reads (Impl::write_checkpoint). A failed
// backing-store write leaves the disk as if the request had not been made
// (Impl::apply, Impl::abandon_group); after a failed sync the disk stops
// (FailStopStore).
//
// Debug lines (core/util/trace.h, the plugin's -D vld.FLAG=N): the
// allocator channel describes each placement, log each record and
// checkpoint (2: each group), compactor each victim, recovery each open.
//
// The disk's state and steps are private (VldDisk::Impl, vld_disk_impl.h);
// this header is what callers may use.
//
// Thread-safety: not thread-safe (see Disk).
#ifndef VLD_CORE_VLD_VLD_DISK_H_
#define VLD_CORE_VLD_VLD_DISK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/disk.h"
#include "core/store/backing_store.h"
#include "core/vld/compactor.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/free_space_map.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery_report.h"
#include "core/vld/virtual_log.h"
#include "core/vld/vld_options.h"
#include "core/vld/vld_report.h"

namespace vld {

class VldDisk final : public Disk {
 public:
  // Opens (and, after an unclean stop, recovers) a vld image; recovery reads
  // through the track buffer unless track_buffer is false (track_buffer=).
  VldDisk(std::unique_ptr<BackingStore> store, const Superblock& sb, VldOptions options = {},
          bool track_buffer = true);
  ~VldDisk() override;

  // Writes the empty log of a new image (its first record, clean).
  static void format(BackingStore& store, const Superblock& sb);

  const Superblock& superblock() const override;
  const DriveModel& drive() const override;
  void set_track_buffer(bool on) override;

  Completion read(uint64_t offset, std::span<std::byte> out, SimTime start) override;
  // Reads: to the first mapped block of the range, through the map (a
  // 4 KiB read is one block). Writes: 0, no opinion; eager writing places
  // them near wherever the head is, so any order costs about the same.
  SimDuration positioning_estimate(bool write, uint64_t offset, uint64_t len,
                                   SimTime start) const override;
  Completion write(uint64_t offset, std::span<const std::byte> data, bool fua,
                   SimTime start) override;
  // Every map entry holds its block's checksum (recovery checks a group's
  // data by it, map_sector.h).
  bool takes_write_checksums() const override { return true; }
  Completion write_with_checksums(uint64_t offset, std::span<const std::byte> data, bool fua,
                                  SimTime start, BlockChecksums sums) override;
  Completion flush(SimTime start) override;
  Completion trim(uint64_t offset, uint64_t len, bool fua, SimTime start) override;
  Completion zero(uint64_t offset, uint64_t len, ZeroFlags flags, SimTime start) override;
  void extents(uint64_t offset, uint64_t len, const ExtentFn& fn) override;
  // One group of map sectors (cyclic commit) for the whole ARU, then a sync.
  Completion commit_group(std::span<const GroupBlock> blocks, SimTime start) override;
  // An ARU's blocks go by eager writing as they are written (paper 000:
  // "the allocation is global"), mapped by nothing until the commit's group.
  bool places_shadow() const override { return true; }
  Completion place_shadow(std::span<const GroupBlock> blocks, SimTime start,
                          std::vector<uint64_t>* tokens) override;
  void drop_shadow(uint64_t token) override;
  // One compaction (or repack) step, if it is expected to end by
  // `idle_ends`; a victim only if all of it is (docs/compaction.md).
  // With compaction done (or off), a delta checkpoint of what is scattered
  // (vld_disk_checkpoint.cc) is a step too.
  using Disk::idle_step;
  std::optional<Completion> idle_step(SimTime start, SimTime idle_ends) override;
  uint64_t live_blocks() const override;
  // A request is one group: all its new copies must find room while the
  // old copies of every export block still hold theirs. A small disk's
  // spare is less than 32 MiB.
  uint64_t max_atomic_write_bytes() const override;
  void close() override;

  // The sections of mode=vld's ModeReport (Disk::mode_report): "vld",
  // "compactor" and "recovery".
  VldReport report() const;
  CompactorReport compactor_report() const;
  const RecoveryReport& recovery() const;

  // The disk's parts, read-only, for vld-inspect, vld-bench and the tests.
  const std::vector<MapEntry>& map() const;
  const VldStats& vld_stats() const;
  const EagerAllocator& allocator() const;
  const FreeSpaceMap& free_space() const;
  const Compactor& compactor() const;
  const VirtualLog& virtual_log() const;
  // Bytes of what live_on reads: the per-track lists of data blocks and of
  // live map sectors.
  uint64_t track_lists_bytes() const;
  // The track being emptied, if any.
  std::optional<uint32_t> compaction_victim() const;
  // The data blocks and the live map sectors (their pieces) on a track,
  // each in ascending order, appended: from the per-track lists,
  // O(what the track holds), never a scan of the map.
  void live_on(uint32_t track, std::vector<uint64_t>* blocks, std::vector<uint32_t>* pieces) const;
  // One repack now, as a write that finds no free run for a block does
  // (false: no reserve, or nothing worth moving): for vld-bench scan and
  // the tests, which time it and check what it leaves.
  bool repack_now(SimTime start);
  // Crash contract (5): every allocated sector is accounted for exactly once
  // (system track, live data, live, replaced or pending map sectors, data
  // waiting to be freed), and the tree reaches every live piece. "" or what
  // is wrong.
  std::string check_consistency() const override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vld

#endif  // VLD_CORE_VLD_VLD_DISK_H_
