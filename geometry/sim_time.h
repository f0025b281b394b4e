// Simulated time: the clock of the modelled drive.
//
// Simulated time is a std::chrono time_point on its own clock, SimClock, so it
// cannot be compared with or added to a wall-clock time_point by accident.
// The only bridge between the two is plugin/pacer.h, which says which is
// which. Durations are nanoseconds (SimDuration); one sector of an st19101
// passes under the head in 23,437.5 ns, so nanosecond resolution loses at
// most half a nanosecond per rounding.
//
// Thread-safety: plain values.
#ifndef VLD_GEOMETRY_SIM_TIME_H_
#define VLD_GEOMETRY_SIM_TIME_H_

#include <chrono>
#include <cmath>
#include <cstdint>

namespace vld {

struct SimClock {
  using rep = int64_t;
  using period = std::nano;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<SimClock>;
  static constexpr bool is_steady = true;
  // No now(): simulated time only advances when the drive model says so.
};

using SimDuration = SimClock::duration;
using SimTime = SimClock::time_point;

inline constexpr SimTime kSimEpoch{};

inline double to_us(SimDuration d) { return static_cast<double>(d.count()) / 1e3; }
inline double to_ms(SimDuration d) { return static_cast<double>(d.count()) / 1e6; }

// Rounds to the nearest nanosecond.
inline SimDuration sim_us(double us) {
  return SimDuration{static_cast<int64_t>(std::llround(us * 1e3))};
}
inline SimDuration sim_ms(double ms) {
  return SimDuration{static_cast<int64_t>(std::llround(ms * 1e6))};
}

}  // namespace vld

#endif  // VLD_GEOMETRY_SIM_TIME_H_
