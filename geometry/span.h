// Span: a disk on a chosen band of a drive's cylinders (span=, "short
// stroking"). A drive's time to seek depends only on the distance moved
// (SeekCurve), and its recording only on the cylinder's zone, so the band
// of cylinders [first, last] of a drive is itself a drive: last - first + 1
// cylinders whose zone table is the drive's clipped to the band and shifted
// down by `first` (span_of). Every mode, layout and DriveModel then works
// on the band's geometry unchanged, and the image holds the band's
// platters only, however large the drive. docs/geometry.md, "Span
// (short-stroking)", says what a span models and what it does not.
//
// A span is given as text (SpanSpec) and resolved against the drive's
// cylinder count (CylinderSpan):
//   FIRST-LAST  drive cylinders, inclusive (0 is the outermost)
//   N           the outermost N cylinders: 0 to N-1
//   P%-Q%       cylinders [floor(P*C/100), floor(Q*C/100)) of a drive of C
//               cylinders, percent from the outer edge (fractions allowed),
//               so spans 0%-50% and 50%-100% split the drive exactly
//   P%          0%-P%
//
// Thread-safety: immutable values and pure functions.
#ifndef VLD_GEOMETRY_SPAN_H_
#define VLD_GEOMETRY_SPAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "geometry/drive_geometry.h"

namespace vld {

// Drive cylinders first..last, inclusive. Invariant: first <= last.
struct CylinderSpan {
  uint32_t first = 0;
  uint32_t last = 0;
  uint32_t cylinders() const { return last - first + 1; }
  std::string to_string() const;  // "FIRST-LAST", the form span= takes
  bool operator==(const CylinderSpan&) const = default;
};

// What span= says, before the drive is known.
class SpanSpec {
 public:
  // nullopt if `text` is none of the forms above, or empty (Q% <= P%, or
  // LAST < FIRST, or N 0, or a percent above 100).
  static std::optional<SpanSpec> parse(std::string_view text);

  // The cylinders on a drive of `drive_cylinders` named `drive_name`;
  // nullopt and *error (one line, without "span=...: ") when the span ends
  // beyond the drive or a percent span holds no whole cylinder.
  std::optional<CylinderSpan> resolve(uint32_t drive_cylinders, const std::string& drive_name,
                                      std::string* error) const;

  const std::string& text() const { return text_; }
  bool operator==(const SpanSpec&) const = default;

 private:
  std::string text_;
  bool percent_ = false;
  double first_percent_ = 0, last_percent_ = 0;  // percent_
  uint32_t first_ = 0, last_ = 0;                // !percent_
};

// The band [span.first, span.last] of `drive` as a drive of its own: the
// same name, heads, rpm, times and seek curve; span.cylinders() cylinders;
// a zoned drive's zones clipped to the band and shifted down by span.first,
// each with its own sectors per track and skews (a zone clipped at its
// start begins, like every zone, at angular slot 0). Cylinder c of the
// band records as the drive's cylinder span.first + c.
// REQUIRES: drive.check() is "", span.last < drive.cylinders.
DriveGeometry span_of(const DriveGeometry& drive, CylinderSpan span);

}  // namespace vld

#endif  // VLD_GEOMETRY_SPAN_H_
