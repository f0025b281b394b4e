#include "tools/inspect/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace vld::inspect {

Progress::Progress(std::string what, uint64_t total, uint64_t bytes)
    : what_(std::move(what)), total_(total), on_(isatty(STDERR_FILENO) && bytes >= kMinBytes) {}

Progress::~Progress() {
  if (on_ && shown_ >= 0) std::fprintf(stderr, "\r%*s\r", 72, "");
}

void Progress::advance(uint64_t n) {
  done_ += n;
  if (!on_ || total_ == 0) return;
  const int pct = static_cast<int>(100 * done_ / total_);
  if (pct == shown_) return;
  shown_ = pct;
  std::fprintf(stderr, "\rvld-inspect: %s %3d%% (%llu/%llu)", what_.c_str(), pct,
               static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_));
  std::fflush(stderr);
}

}  // namespace vld::inspect
