// check: a full consistency check of an inspected image (fsck), never a
// repair. For mode=vld: both log records valid and in range; every map
// sector the record's tree reaches authenticates and holds the seq its
// pointer names; every live map sector holds what recovery took; every
// mapping lies on the platters and no physical sector is claimed twice (the
// crash contract's clause 5); a VldDisk opened on an overlay recovers
// the same map and computes the same free map (promises (4) and (5)); every
// mapped block matches its checksum.
//
// Errors are damage: any makes vld-inspect exit 4. Notes are what the crash
// contract allows (requests newer than the record rolled back after a
// crash) or what an older vld made (a too-small spare=): exit 0.
//
// Invariants of Findings: errors lists the first kMaxListed of error_count
// errors, each {"kind", "message", ...where}; free_map_agrees is unset when
// the comparison was skipped.
//
// Thread-safety: functions of their arguments (check reads the image).
#ifndef VLD_TOOLS_INSPECT_CHECK_H_
#define VLD_TOOLS_INSPECT_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tools/inspect/inspection.h"

namespace vld::inspect {

struct Findings {
  static constexpr size_t kMaxListed = 1000;
  nlohmann::json errors = nlohmann::json::array();  // the first kMaxListed
  uint64_t error_count = 0;
  std::vector<std::string> notes;
  std::vector<std::string> passed;  // one line per check that found nothing wrong
  uint64_t map_sectors_checked = 0;
  uint64_t blocks_checked = 0;
  uint64_t checksum_mismatches = 0;
  std::optional<bool> free_map_agrees;

  void error(const std::string& kind, const std::string& message,
             nlohmann::json extra = nlohmann::json::object()) {
    ++error_count;
    if (errors.size() >= kMaxListed) return;
    extra["kind"] = kind;
    extra["message"] = message;
    errors.push_back(extra);
  }
};

// REQUIRES: inspect(in) done. A failed read is core's vld::Error.
Findings check(const Inspection& in);

// The "check" object of --json, and --check's text.
nlohmann::json check_json(const Findings& findings);
void print_check(const Inspection& in, const Findings& findings, std::ostream& out);

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_CHECK_H_
