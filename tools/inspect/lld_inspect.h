// mode=lld in vld-inspect: what an lld image holds, its check, its report.
//
// An lld image is read by the disk itself: an LldDisk opened on an overlay
// of the image (core/store/overlay_store.h) recovers it in memory exactly
// as a server would (checkpoint, roll-forward, NVRAM replay) and writes
// nothing to the file. Its report, its self-check and the copy of every
// mapped block (each read checks its checksum) are what the tool shows.
//
// Thread-safety: none needed (vld-inspect is single-threaded).
#ifndef VLD_TOOLS_INSPECT_LLD_INSPECT_H_
#define VLD_TOOLS_INSPECT_LLD_INSPECT_H_

#include <nlohmann/json.hpp>
#include <ostream>

#include "tools/inspect/check.h"
#include "tools/inspect/inspection.h"

namespace vld::inspect {

// Fills in.lld, in.live_blocks and the per-track counts (segment copies of
// live blocks; the system area counts as used). Never throws for a damaged
// image: in.lld.open_error says why it cannot be opened.
void inspect_lld(Inspection& in);

// --check: the image opens, the disk agrees with itself, every mapped block
// matches its checksum.
void check_lld(const Inspection& in, Findings& findings);

void add_lld_json(const Inspection& in, nlohmann::json& j);
void print_lld(const Inspection& in, std::ostream& out);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_LLD_INSPECT_H_
