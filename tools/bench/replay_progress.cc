#include "tools/bench/replay_progress.h"

#include <unistd.h>

#include <cstdio>

namespace vld {

ReplayProgress::ReplayProgress(const TraceReader& reader)
    : reader_(reader),
      on_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ReplayProgress::tick(uint64_t requests, double trace_time_us) {
  if (!on_ || (++calls_ & 4095) != 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(500)) return;
  last_ = now;
  show(requests, trace_time_us);
}

void ReplayProgress::show(uint64_t requests, double trace_time_us) {
  const double host_s = std::chrono::duration<double>(last_ - start_).count();
  const double rate = host_s > 0 ? static_cast<double>(requests) / host_s : 0;
  const double size = static_cast<double>(reader_.size_bytes());
  const double done = size > 0 ? static_cast<double>(reader_.position_bytes()) / size : 0;
  const double eta_s = done > 0 ? host_s * (1 - done) / done : 0;
  std::fprintf(stderr, "\rreplay: %llu requests, trace %.1f s, %.0f requests/s, %.0f%% of the "
                       "file, %.0f s left   ",
               static_cast<unsigned long long>(requests), trace_time_us / 1e6, rate, done * 100,
               eta_s);
  shown_ = true;
}

void ReplayProgress::done() {
  if (shown_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace vld
