// Drive files: a drive described in a text file, for geometry=FILE.
//
// One setting per line, `#` to the end of a line is a comment:
//
//   name            atlas10k          (stored in the image, at most 31 bytes)
//   heads           6                 (tracks per cylinder)
//   cylinders       10042             (of the whole drive)
//   rpm             10025
//   head_switch_us  176
//   overhead_us     100               (controller overhead per command)
//   write_settle_us 487               (optional: added to a seek before a write)
//   seek            a,b,boundary,c,e  (SeekCurve, as the plugin's seek=)
//   zone FIRST_CYLINDER SECTORS_PER_TRACK [TRACK_SKEW CYLINDER_SKEW]
//
// Either one `sectors_per_track N` line (a single-zone drive) or one `zone`
// line per zone, outermost first, the first at cylinder 0. Skews are given
// on every zone line or on none; without them they are derived
// (DriveGeometry::derive_skews). docs/geometry.md describes the format.
//
// Thread-safety: pure functions.
#ifndef VLD_GEOMETRY_DRIVE_FILE_H_
#define VLD_GEOMETRY_DRIVE_FILE_H_

#include <optional>
#include <string>
#include <string_view>

#include "geometry/drive_geometry.h"

namespace vld {

// The drive `text` describes, checked; or nullopt and *error, one line:
// "FILE:LINE: what was wrong; what is expected" (file_name names it).
std::optional<DriveGeometry> parse_drive_file(std::string_view text, std::string_view file_name,
                                              std::string* error);

// A preset's name or a drive file's path: the preset if one has that name,
// else the file read and parsed. nullopt and *error if neither.
std::optional<DriveGeometry> load_drive(std::string_view preset_or_file, std::string* error);

// Whether `value` names a file rather than a preset: it has a '/' or ends
// in ".drive".
bool names_drive_file(std::string_view value);

}  // namespace vld

#endif  // VLD_GEOMETRY_DRIVE_FILE_H_
