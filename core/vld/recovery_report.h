// RecoveryReport: what opening a vld image read and decided (recovery.h
// says how). A plain value: the stats file and vld-inspect serialise it
// (stats/mode_report_json.h).
//
// Thread-safety: a value; copy it freely.
#ifndef VLD_CORE_VLD_RECOVERY_REPORT_H_
#define VLD_CORE_VLD_RECOVERY_REPORT_H_

#include <cstdint>
#include <string>

namespace vld {

struct RecoveryReport {
  bool clean = false;
  std::string method;          // "clean-walk", "record+window", "full-scan"
  uint64_t sectors_read = 0;
  double simulated_ms = 0;     // those reads on the modelled drive
  double wall_ms = 0;
  uint64_t map_sectors_walked = 0;
  // Of those, the ones a request (or a move) wrote since the newest
  // checkpoint (the record's checkpoint_seq): read one rotation each, not in
  // a checkpoint group's pass; delta checkpoints bound them (vld_disk.h).
  uint64_t scattered_walked = 0;
  // The tracks those map sectors lie on. However the walk ordered its
  // reads, each track costs a visit: a head switch or seek and part of a
  // revolution (docs/scale.md, section 0c, "The walk's floor").
  uint64_t tracks_walked = 0;
  uint64_t tracks_scanned = 0;
  uint64_t candidates = 0;     // map sectors newer than the record (full scan: all found)
  uint64_t groups_accepted = 0;  // full scan: the root taken (1)
  uint64_t groups_rejected = 0;  // full scan: newer roots whose tree was not whole
  uint64_t data_blocks_checked = 0;
  uint64_t data_blocks_read = 0;  // of those, read on their own (not in the window scan)
  std::string damage;          // what made recovery scan the whole disk ("" if nothing)
};

}  // namespace vld

#endif  // VLD_CORE_VLD_RECOVERY_REPORT_H_
