// vld-inspect's exit codes, as fsck(8)'s: 0 no errors, 4 errors left
// uncorrected (--check found damage; vld-inspect never repairs), 8
// operational error (cannot open, not an image of the vld plugin, locked, cannot write the
// PNG), 16 usage error. --check's JSON repeats the one it exits with.
#ifndef VLD_TOOLS_INSPECT_EXIT_CODES_H_
#define VLD_TOOLS_INSPECT_EXIT_CODES_H_

namespace vld::inspect {

constexpr int kExitClean = 0;
constexpr int kExitUncorrected = 4;
constexpr int kExitOperational = 8;
constexpr int kExitUsage = 16;

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_EXIT_CODES_H_
