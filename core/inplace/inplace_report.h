// InplaceRecoveryReport: what opening a mode=inplace image read and did:
// its redo journal checked, and a committed record a crash left replayed
// (redo_journal.h). The stats file's "recovery" (docs/stats.md), in the
// keys every mode shares; stats/mode_report_json.h serialises it.
//
// A clean close voids the journal's record before its last sync
// (redo_journal.h, invariant (3)), so a committed record found at open
// means the last run did not close cleanly. No record proves nothing: the
// mode keeps no mark of a clean close, and a crash with no atomic
// recovery unit in flight leaves nothing behind to tell it by.
//
// Thread-safety: a value; copy it freely.
#ifndef VLD_CORE_INPLACE_INPLACE_REPORT_H_
#define VLD_CORE_INPLACE_INPLACE_REPORT_H_

#include <cstdint>
#include <optional>

namespace vld {

struct InplaceRecoveryReport {
  // false: a committed record was replayed; unset: nothing to replay, and
  // whether the last run closed cleanly is not known (see above).
  std::optional<bool> clean;
  uint64_t sectors_read = 0;      // the journal's header, and its record if one was there
  double simulated_ms = 0;        // those reads and the replay, on the modelled drive
  double wall_ms = 0;             // the same, on this host
  uint64_t records_replayed = 0;  // 0 or 1: the journal holds one record at a time
  uint64_t blocks_replayed = 0;   // the blocks that record wrote at home again
};

}  // namespace vld

#endif  // VLD_CORE_INPLACE_INPLACE_REPORT_H_
