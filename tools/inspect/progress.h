// Progress: percent done of long work (blocks checked, tracks scanned, the
// layout grid counted) on stderr, only on a terminal and only when there is
// enough to do for it to matter (kMinBytes). The line is erased when the
// Progress is destroyed, so the report that follows starts on a clean line.
// When stderr is not a terminal (a pipe, a file, a test), nothing is
// written at all.
//
// Thread-safety: none (one per piece of work, on one thread).
#ifndef VLD_TOOLS_INSPECT_PROGRESS_H_
#define VLD_TOOLS_INSPECT_PROGRESS_H_

#include <cstdint>
#include <cstdio>
#include <string>

namespace vld::inspect {

// Where a Progress writes, and whether that is a terminal.
struct ProgressOutput {
  std::FILE* file;
  bool terminal;
  static ProgressOutput standard_error();  // stderr, isatty(2)
};

class Progress {
 public:
  static constexpr uint64_t kMinBytes = uint64_t{256} << 20;
  // total: units of work (advance() counts them); bytes: how much it reads
  // (or covers: the layout grid counts every sector of the platters).
  Progress(std::string what, uint64_t total, uint64_t bytes,
           ProgressOutput output = ProgressOutput::standard_error());
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(uint64_t n);

 private:
  std::string what_;
  uint64_t total_, done_ = 0;
  std::FILE* file_;
  bool on_;
  int shown_ = -1;  // the percentage last printed; -1: none yet
};

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_PROGRESS_H_
