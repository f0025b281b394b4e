// SeekCurve: time to move the actuator across d cylinders.
//
// The two-piece form of Ruemmler & Wilkes, "An introduction to disk drive
// modeling" (IEEE Computer 27(3), 1994), which they fitted to the HP97560:
//
//   seek(0) = 0
//   seek(d) = a + b * sqrt(d)   for 1 <= d < boundary  (acceleration-limited)
//   seek(d) = c + e * d         for d >= boundary      (coast at top speed)
//
// all in milliseconds. Settling is included; head switch is not (a seek and
// a head switch overlap, see DriveModel).
//
// Thread-safety: immutable value.
#ifndef VLD_GEOMETRY_SEEK_CURVE_H_
#define VLD_GEOMETRY_SEEK_CURVE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "geometry/sim_time.h"

namespace vld {

class SeekCurve {
 public:
  SeekCurve() = default;
  SeekCurve(double a_ms, double b_ms, uint32_t boundary_cylinders, double c_ms,
            double e_ms);

  // Parses "a,b,boundary,c,e" (the form `seek=` takes). Returns nullopt and
  // sets *error on malformed or non-monotonic input.
  static std::optional<SeekCurve> parse(std::string_view text, std::string* error);

  SimDuration time(uint32_t distance_cylinders) const;
  double time_ms(uint32_t distance_cylinders) const;

  // Why a curve is unusable ("" if it is fine): negative terms or a seek that
  // gets shorter as the distance grows, up to max_distance.
  std::string check(uint32_t max_distance_cylinders) const;

  std::string to_string() const;  // the `seek=` form, round-trips via parse()

  double a_ms() const { return a_ms_; }
  double b_ms() const { return b_ms_; }
  uint32_t boundary_cylinders() const { return boundary_; }
  double c_ms() const { return c_ms_; }
  double e_ms() const { return e_ms_; }

  bool operator==(const SeekCurve&) const = default;

 private:
  double a_ms_ = 0, b_ms_ = 0;
  uint32_t boundary_ = 1;
  double c_ms_ = 0, e_ms_ = 0;
};

}  // namespace vld

#endif  // VLD_GEOMETRY_SEEK_CURVE_H_
