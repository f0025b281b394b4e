#include "geometry/span.h"

#include <cassert>
#include <charconv>
#include <cmath>

namespace vld {

namespace {

// A whole number of at most 10 digits that fits 32 bits.
std::optional<uint32_t> parse_cylinder(std::string_view t) {
  if (t.empty() || t.size() > 10) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || v > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(v);
}

// "P%" with P from 0 to 100: digits, optionally a point and more digits.
std::optional<double> parse_percent(std::string_view t) {
  if (t.size() < 2 || t.back() != '%') return std::nullopt;
  t.remove_suffix(1);
  size_t digits = 0, points = 0;
  for (char c : t) {
    if (c >= '0' && c <= '9') ++digits;
    else if (c == '.') ++points;
    else return std::nullopt;
  }
  if (digits == 0 || points > 1 || t.front() == '.' || t.back() == '.' || t.size() > 20)
    return std::nullopt;
  const double p = std::stod(std::string(t));
  if (p > 100) return std::nullopt;
  return p;
}

// The first cylinder at or beyond `percent` of `cylinders`.
uint32_t cylinder_at(double percent, uint32_t cylinders) {
  return static_cast<uint32_t>(std::floor(percent * cylinders / 100.0));
}

}  // namespace

std::string CylinderSpan::to_string() const {
  return std::to_string(first) + "-" + std::to_string(last);
}

std::optional<SpanSpec> SpanSpec::parse(std::string_view text) {
  SpanSpec s;
  s.text_ = std::string(text);
  const size_t dash = text.find('-');
  const std::string_view a = text.substr(0, dash);
  const std::string_view b = dash == std::string_view::npos ? "" : text.substr(dash + 1);
  if (!a.empty() && a.back() == '%') {
    s.percent_ = true;
    auto p = parse_percent(a);
    auto q = dash == std::string_view::npos ? p : parse_percent(b);
    if (dash == std::string_view::npos) p = 0.0;
    if (!p || !q || *q <= *p) return std::nullopt;
    s.first_percent_ = *p;
    s.last_percent_ = *q;
    return s;
  }
  auto f = parse_cylinder(a);
  if (dash == std::string_view::npos) {
    if (!f || *f == 0) return std::nullopt;
    s.first_ = 0;
    s.last_ = *f - 1;
    return s;
  }
  auto l = parse_cylinder(b);
  if (!f || !l || *l < *f) return std::nullopt;
  s.first_ = *f;
  s.last_ = *l;
  return s;
}

std::optional<CylinderSpan> SpanSpec::resolve(uint32_t drive_cylinders,
                                              const std::string& drive_name,
                                              std::string* error) const {
  const std::string drive = "the " + drive_name + " has " + std::to_string(drive_cylinders) +
                            " cylinders (0-" + std::to_string(drive_cylinders - 1) + ")";
  if (percent_) {
    const uint32_t first = cylinder_at(first_percent_, drive_cylinders);
    const uint32_t end = cylinder_at(last_percent_, drive_cylinders);
    if (end <= first) {
      *error = "holds no whole cylinder: " + drive + "; widen the span";
      return std::nullopt;
    }
    return CylinderSpan{first, end - 1};
  }
  if (last_ >= drive_cylinders) {
    *error = "reaches past the drive: " + drive + "; choose cylinders within them";
    return std::nullopt;
  }
  return CylinderSpan{first_, last_};
}

DriveGeometry span_of(const DriveGeometry& drive, CylinderSpan span) {
  assert(span.first <= span.last && span.last < drive.cylinders);
  DriveGeometry band = drive;
  band.cylinders = span.cylinders();
  if (!drive.zoned()) return band;
  band.zones.clear();
  const uint32_t first_zone = drive.zone_index_of_cylinder(span.first);
  const uint32_t last_zone = drive.zone_index_of_cylinder(span.last);
  for (uint32_t i = first_zone; i <= last_zone; ++i) {
    Zone z = drive.zones[i];
    z.first_cylinder = i == first_zone ? 0 : z.first_cylinder - span.first;
    band.zones.push_back(z);
  }
  band.number_zones();
  assert(band.check().empty());
  return band;
}

}  // namespace vld
