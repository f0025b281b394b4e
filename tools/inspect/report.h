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
// (One exception: the "layout" object, once only with --layout, lost the
// pixel sizes and the caption of the hand-drawn PNG when vld-plot took over
// the drawing; it kept path, columns and cylinders_per_column.)
//
// Thread-safety: functions of their arguments.
#ifndef VLD_TOOLS_INSPECT_REPORT_H_
#define VLD_TOOLS_INSPECT_REPORT_H_

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "tools/inspect/inspection.h"

namespace vld::inspect {

// REQUIRES: inspect(in) done.
nlohmann::json report_json(const Inspection& in);
void print_report(const Inspection& in, std::ostream& out);

// j as text: indented by two, but every array of plain numbers on one line
// (a layout grid's row is one line of up to 1000 numbers, not 1000 lines).
std::string json_text(const nlohmann::json& j);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_REPORT_H_
