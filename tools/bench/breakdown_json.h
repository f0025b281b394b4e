// A service-time breakdown as vld-bench prints it: the mean of each part
// per request, in microseconds ("breakdown_us" of every subcommand's JSON).
//
// Thread-safety: pure functions.
#ifndef VLD_TOOLS_BENCH_BREAKDOWN_JSON_H_
#define VLD_TOOLS_BENCH_BREAKDOWN_JSON_H_

#include <cstdint>

#include <nlohmann/json.hpp>

#include "geometry/drive_model.h"
#include "geometry/sim_time.h"

namespace vld {

// total / n in microseconds; 0 for no requests.
inline double mean_us(SimDuration total, uint64_t n) { return n ? to_us(total) / n : 0.0; }

// The parts of `b`, summed over n requests, each as a mean per request.
inline nlohmann::json breakdown_json(const ServiceBreakdown& b, uint64_t n) {
  return {{"overhead", mean_us(b.overhead, n)},
          {"seek", mean_us(b.seek, n)},
          {"head_switch", mean_us(b.head_switch, n)},
          {"rotation", mean_us(b.rotation, n)},
          {"transfer", mean_us(b.transfer, n)},
          {"locate", mean_us(b.locate(), n)}};
}

}  // namespace vld

#endif  // VLD_TOOLS_BENCH_BREAKDOWN_JSON_H_
