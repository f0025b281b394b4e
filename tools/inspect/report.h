// The report: what an inspected image holds -- geometry, sizes, mode, clean
// or not, utilization, the map and the virtual log, free space, the log
// record's window, and what recovery would read to open it -- as text for a
// person (print_report) or as one JSON object (report_json).
//
// The JSON keys and the text lines are an interface (tests and scripts read
// them): keys are only ever added. mode=inplace has no map or log, so its
// report stops after the tracks and its one piece of recovery state, the
// ARU redo journal ("redo_journal": bytes, last_seq, pending_blocks: the
// blocks of a committed record the next writable open replays, or null).
//
// Thread-safety: functions of their arguments.
#ifndef VLD_TOOLS_INSPECT_REPORT_H_
#define VLD_TOOLS_INSPECT_REPORT_H_

#include <nlohmann/json.hpp>
#include <ostream>

#include "tools/inspect/inspection.h"

namespace vld::inspect {

// REQUIRES: inspect(in) done.
nlohmann::json report_json(const Inspection& in);
void print_report(const Inspection& in, std::ostream& out);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_REPORT_H_
