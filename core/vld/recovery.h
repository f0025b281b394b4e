// Recovery: rebuilding the indirection map and the virtual log from disk.
//
// Clean (the newest log record says clean): walk the tree from the recorded
// tail, newest first, reading only map sectors (paper 001, section 3.2):
// the first version of a piece met is its newest.
//
// Unclean (kill -9, power cut): the newest valid log record is a checkpoint
// of a durable tree: every map sector with seq <= durable_seq is on stable
// storage and reachable from its root, and none of them has been recycled
// since (VldDisk frees replaced map sectors only after writing the next
// record). Every map sector written since lies in the record's cylinder
// window, and none of those has been recycled either. So recovery
//   1. walks the tree from the record's root (the base state),
//   2. reads every sector of the window's tracks and keeps the map sectors
//      (valid MAC) with seq > durable_seq: the candidates,
//   3. takes the candidates' groups (one per request) in seq order and
//      accepts a group only if all its members are present, each member
//      replaces exactly the version accepted so far for its piece (its
//      prev_seq; so nothing is built on a lost write), and every entry the
//      request wrote points at data whose checksum matches. Anything else is
//      rolled back: the request never happened.
//   4. refuses, naming it, if a request it rolled back was flushed: a map
//      sector written later says so (synced_back, map_sector.h), so the
//      request is damaged, not lost.
// A missing member is never mistaken for a recycled one, because nothing
// written after the record is recycled before the next record.
//
// Both slots always hold a valid record (VldDisk::format writes both), so a
// slot that does not is damaged, and the other may be the older record
// (writes since the newer one may lie outside its window, and may have
// reused sectors its tree points to). Then recovery trusts neither: it
// scans the whole disk (the paper's last resort) for authentic map sectors
// and takes the newest root (the last map sector of a request) whose tree
// is whole: every node there, and the data of every version written after
// the newest seq that anything vouches for (the surviving record's durable
// seq, or a synced_back) checks out. Roots older than that seq are never
// taken: a flushed write would be lost. A crash's torn requests are newer
// than it, so their roots fail and older ones are tried; if none from
// there on is whole, the image is damaged and recovery refuses, naming what
// the oldest root tried lacked. VldDisk then writes a checkpoint and two
// records, so the next open trusts the records again.
//
// Recovery reads and never writes; VldDisk writes the result (a checkpoint
// and a new record). Running it twice on the same image gives the same
// state, and so does running it on what a crash during VldDisk's writes
// left, because those writes never touch what recovery read
// (RecoveredState::protected_psns and protected_data_psns) and claim no
// horizon (the checkpoint starts a new seq epoch and vouches for nothing)
// until the new record is durable.
//
// Thread-safety: a function of the store's contents.
#ifndef VLD_CORE_VLD_RECOVERY_H_
#define VLD_CORE_VLD_RECOVERY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/backing_store.h"
#include "core/image_format.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery_report.h"
#include "core/vld/virtual_log.h"
#include "core/vld/vld_options.h"
#include "core/vld/vld_layout.h"

namespace vld {

struct RecoveredState {
  std::vector<MapEntry> map;   // per logical block
  std::vector<LogNode> nodes;  // per piece; children filled only if !needs_checkpoint
  std::optional<uint32_t> root;
  uint64_t next_seq = 1;
  LogRecord record;            // the record recovery started from
  bool needs_checkpoint = false;
  // What recovery from the record read to reach this state: the map
  // sectors it walked or scanned, and the first sector of every data block
  // a request since the record wrote (recovery checks their checksums, of
  // superseded and rolled-back requests too). A crash before a new record
  // replaces this one recovers from it again, reading all of these again,
  // so nothing may be written over them until then (crash contract clause
  // 4; see VldDisk::write_checkpoint).
  std::vector<uint32_t> protected_psns;
  std::vector<uint32_t> protected_data_psns;
  RecoveryReport report;
};

// How far an unclean recovery moves the seq counter on (see recover()).
inline constexpr uint64_t kRecoveryEpochGap = uint64_t{1} << 32;

// track_buffer: the drive reads through its track buffer (DriveModel), as
// it does when serving; sectors read from a track the walk just visited cost
// no media time.
RecoveredState recover(BackingStore& store, const Superblock& sb, bool track_buffer = true,
                       const ScanProgress& progress = {});

}  // namespace vld

#endif  // VLD_CORE_VLD_RECOVERY_H_
