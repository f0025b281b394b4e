// The progress line of a replay on stderr: requests served, trace time
// reached, requests per second of host time, how far through the file, and
// the time left at that rate. Only when stderr is a terminal; erased at the
// end, so the summary on stdout starts on a clean screen.
//
// Thread-safety: one per replay, on its thread.
#ifndef VLD_TOOLS_BENCH_REPLAY_PROGRESS_H_
#define VLD_TOOLS_BENCH_REPLAY_PROGRESS_H_

#include <chrono>
#include <cstdint>

#include "tools/trace/trace_reader.h"

namespace vld {

class ReplayProgress {
 public:
  explicit ReplayProgress(const TraceReader& reader);
  // After each request: requests served so far, the trace time reached (us).
  // Cheap: looks at the clock once per 4096 calls.
  void tick(uint64_t requests, double trace_time_us);
  // Erases the line.
  void done();

 private:
  void show(uint64_t requests, double trace_time_us);

  const TraceReader& reader_;
  bool on_;
  bool shown_ = false;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_REPLAY_PROGRESS_H_
