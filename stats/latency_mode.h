// Whether a server's replies wait for the simulated clock: the plugin's
// latency= parameter and the stats file's "latency" (docs/stats.md).
// kSleep: each reply waits for its simulated completion (docs/pacing.md);
// kNone: replies go as soon as they are simulated, the simulated clock
// running ahead of the wall clock (vld-bench, on simulated time only,
// records kNone).
//
// Thread-safety: a plain value.
#ifndef VLD_STATS_LATENCY_MODE_H_
#define VLD_STATS_LATENCY_MODE_H_

namespace vld {

enum class LatencyMode { kSleep, kNone };

}  // namespace vld

#endif  // VLD_STATS_LATENCY_MODE_H_
