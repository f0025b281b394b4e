#include "geometry/seek_curve.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <vector>

namespace vld {

SeekCurve::SeekCurve(double a_ms, double b_ms, uint32_t boundary_cylinders, double c_ms,
                     double e_ms)
    : a_ms_(a_ms), b_ms_(b_ms), boundary_(boundary_cylinders), c_ms_(c_ms), e_ms_(e_ms) {}

double SeekCurve::time_ms(uint32_t d) const {
  if (d == 0) return 0.0;
  if (d < boundary_) return a_ms_ + b_ms_ * std::sqrt(static_cast<double>(d));
  return c_ms_ + e_ms_ * static_cast<double>(d);
}

SimDuration SeekCurve::time(uint32_t d) const { return sim_ms(time_ms(d)); }

std::string SeekCurve::check(uint32_t max_distance) const {
  // (!(x >= 0) is also true of NaN.)
  if (!(a_ms_ >= 0) || !(b_ms_ >= 0) || !(c_ms_ >= 0) || !(e_ms_ >= 0))
    return "every term must be >= 0";
  if (boundary_ < 1) return "the boundary must be >= 1 cylinder";
  // Both pieces are monotonic on their own; only the step at the boundary can
  // go backwards.
  if (boundary_ >= 2 && boundary_ <= max_distance &&
      time_ms(boundary_) + 1e-9 < time_ms(boundary_ - 1)) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "seek time drops at the boundary (%.3f ms at %u cylinders, "
                  "%.3f ms at %u)",
                  time_ms(boundary_ - 1), boundary_ - 1, time_ms(boundary_), boundary_);
    return buf;
  }
  return "";
}

std::string SeekCurve::to_string() const {
  // Shortest text that parses back to the same doubles (std::to_chars), so
  // the `seek=` form in messages and stats is exact, not rounded.
  std::string out;
  auto put = [&out](double x) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, r.ptr);
  };
  put(a_ms_);
  out += ',';
  put(b_ms_);
  out += ',' + std::to_string(boundary_) + ',';
  put(c_ms_);
  out += ',';
  put(e_ms_);
  return out;
}

std::optional<SeekCurve> SeekCurve::parse(std::string_view text, std::string* error) {
  std::vector<double> v;
  std::string s(text);
  const char* p = s.c_str();
  while (*p) {
    if (std::isspace(static_cast<unsigned char>(*p))) {
      *error = "expected five comma-separated numbers a,b,boundary,c,e without spaces";
      return std::nullopt;
    }
    char* end = nullptr;
    double x = std::strtod(p, &end);
    if (end == p || !std::isfinite(x)) {
      *error = "expected five numbers a,b,boundary,c,e (milliseconds, cylinders)";
      return std::nullopt;
    }
    v.push_back(x);
    p = end;
    if (*p == ',') {
      if (*++p == '\0') {
        *error = "trailing comma: expected five numbers a,b,boundary,c,e";
        return std::nullopt;
      }
    } else if (*p != '\0') {
      *error = "expected five comma-separated numbers a,b,boundary,c,e";
      return std::nullopt;
    }
  }
  if (v.size() != 5) {
    *error = "expected five numbers a,b,boundary,c,e, got " + std::to_string(v.size());
    return std::nullopt;
  }
  if (v[2] < 1 || v[2] != std::floor(v[2]) || v[2] > 1e9) {
    *error = "boundary (third number) must be a whole number of cylinders >= 1";
    return std::nullopt;
  }
  SeekCurve c(v[0], v[1], static_cast<uint32_t>(v[2]), v[3], v[4]);
  if (auto why = c.check(UINT32_MAX - 1); !why.empty()) {
    *error = why;
    return std::nullopt;
  }
  return c;
}

}  // namespace vld
