// OpenProgress: what a long open is doing, on nbdkit's stderr (docs/scale.md:
// a clean open of a 1 TiB vld image walks a million map sectors; after a
// crash the window is scanned too). Quiet for opens under a second; then
// one line a second, and one when the open is done, in nbdkit's own
// "nbdkit: PLUGIN: ..." form, whether or not -v is given (nbdkit_debug
// would show nothing without it, and nbdkit_error is for errors).
//
// Thread-safety: one open at a time (the plugin opens under its lock).
#ifndef VLD_PLUGIN_OPEN_PROGRESS_H_
#define VLD_PLUGIN_OPEN_PROGRESS_H_

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/vld/recovery.h"

namespace vld {

class OpenProgress {
 public:
  // quiet_for: how long an open may take before it says anything (tests: 0).
  explicit OpenProgress(std::string file,
                        std::chrono::milliseconds quiet_for = std::chrono::seconds(1))
      : file_(std::move(file)), quiet_for_(quiet_for) {}
  ~OpenProgress() {
    if (printed_) std::fprintf(stderr, "nbdkit: vld: %s: opened in %.1f s\n", file_.c_str(), seconds());
  }
  OpenProgress(const OpenProgress&) = delete;
  OpenProgress& operator=(const OpenProgress&) = delete;

  // REQUIRES: *this outlives every open the callback is given to.
  ScanProgress callback() {
    return [this](std::string_view what, uint64_t done, uint64_t total) { report(what, done, total); };
  }

 private:
  using Clock = std::chrono::steady_clock;
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  void report(std::string_view what, uint64_t done, uint64_t total) {
    const Clock::time_point now = Clock::now();
    if (now - start_ < quiet_for_ || (printed_ && now - last_ < std::chrono::seconds(1))) return;
    last_ = now;
    printed_ = true;
    // The walk's total is the number of pieces: an upper bound.
    const bool walk = what.starts_with("walking");
    std::fprintf(stderr, "nbdkit: vld: %s: opening: %.*s: %llu of %s%llu %s (%.0f s)\n",
                 file_.c_str(), static_cast<int>(what.size()), what.data(),
                 static_cast<unsigned long long>(done), walk ? "at most " : "",
                 static_cast<unsigned long long>(total), walk ? "map sectors" : "tracks",
                 seconds());
  }

  const std::string file_;
  const std::chrono::milliseconds quiet_for_;
  const Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
  bool printed_ = false;
};

}  // namespace vld

#endif  // VLD_PLUGIN_OPEN_PROGRESS_H_
