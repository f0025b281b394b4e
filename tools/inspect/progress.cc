#include "tools/inspect/progress.h"

#include <unistd.h>

#include <utility>

namespace vld::inspect {

ProgressOutput ProgressOutput::standard_error() { return {stderr, isatty(STDERR_FILENO) == 1}; }

Progress::Progress(std::string what, uint64_t total, uint64_t bytes, ProgressOutput output)
    : what_(std::move(what)),
      total_(total),
      file_(output.file),
      on_(output.terminal && bytes >= kMinBytes) {}

Progress::~Progress() {
  if (on_ && shown_ >= 0) {
    std::fprintf(file_, "\r%*s\r", 72, "");
    std::fflush(file_);
  }
}

void Progress::advance(uint64_t n) {
  done_ += n;
  if (!on_ || total_ == 0) return;
  const int pct = static_cast<int>(100 * done_ / total_);
  if (pct == shown_) return;
  shown_ = pct;
  std::fprintf(file_, "\rvld-inspect: %s %3d%% (%llu/%llu)", what_.c_str(), pct,
               static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_));
  std::fflush(file_);
}

}  // namespace vld::inspect
