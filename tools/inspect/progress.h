// Progress: percent done of long work (blocks checked, tracks scanned) on
// stderr, only on a terminal and only when there is enough to do for it to
// matter (kMinBytes). The line is erased when the Progress is destroyed, so
// the report that follows starts on a clean line.
//
// Thread-safety: none (one per piece of work, on one thread).
#ifndef VLD_TOOLS_INSPECT_PROGRESS_H_
#define VLD_TOOLS_INSPECT_PROGRESS_H_

#include <cstdint>
#include <string>

namespace vld::inspect {

class Progress {
 public:
  static constexpr uint64_t kMinBytes = uint64_t{256} << 20;
  // total: units of work (advance() counts them); bytes: how much it reads.
  Progress(std::string what, uint64_t total, uint64_t bytes);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(uint64_t n);

 private:
  std::string what_;
  uint64_t total_, done_ = 0;
  bool on_;
  int shown_ = -1;  // the percentage last printed; -1: none yet
};

}  // namespace vld::inspect

#endif  // VLD_TOOLS_INSPECT_PROGRESS_H_
