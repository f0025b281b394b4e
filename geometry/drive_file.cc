#include "geometry/drive_file.h"

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include "geometry/presets.h"

namespace vld {

namespace {

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  return words;
}

template <typename T>
bool number(std::string_view word, T* out) {
  auto r = std::from_chars(word.data(), word.data() + word.size(), *out);
  return r.ec == std::errc() && r.ptr == word.data() + word.size();
}

// What the lines say, before it is checked as a whole.
struct DriveText {
  DriveGeometry g;
  bool has_spt = false, has_seek = false, has_rpm = false, has_heads = false,
       has_cylinders = false;
  int skews_given = -1;  // unknown until the first zone line: 0 or 1
};

using Words = std::vector<std::string_view>;

// "key VALUE" with one number into *out: "" or what is wrong.
template <typename T>
std::string one_number(const Words& w, T* out, const char* expected) {
  if (w.size() != 2 || !number(w[1], out)) return std::string(w[0]) + " takes " + expected;
  return "";
}

// head_switch_us, overhead_us, write_settle_us: microseconds into *out.
std::string read_duration(const Words& w, SimDuration* out) {
  double us = 0;
  if (std::string why = one_number(w, &us, "microseconds, e.g. 176 or 0.5"); !why.empty())
    return why;
  if (!(us >= 0 && us <= 1e6)) return std::string(w[0]) + " must be from 0 to 1000000";
  *out = sim_us(us);
  return "";
}

std::string read_seek(const Words& w, DriveText* d) {
  if (w.size() != 2) return "seek takes a,b,boundary,c,e";
  std::string why;
  auto curve = SeekCurve::parse(w[1], &why);
  if (!curve) return "seek: " + why;
  d->g.seek = *curve;
  d->has_seek = true;
  return "";
}

std::string read_zone(const Words& w, DriveText* d) {
  static const char* kForm = "FIRST_CYLINDER SECTORS_PER_TRACK [TRACK_SKEW CYLINDER_SKEW]";
  if (w.size() != 3 && w.size() != 5) return std::string("zone takes ") + kForm;
  const int skews = w.size() == 5 ? 1 : 0;
  if (d->skews_given >= 0 && d->skews_given != skews)
    return "give skews on every zone line or on none";
  d->skews_given = skews;
  Zone z;
  if (!number(w[1], &z.first_cylinder) || !number(w[2], &z.sectors_per_track) ||
      (skews && (!number(w[3], &z.track_skew_sectors) || !number(w[4], &z.cylinder_skew_sectors))))
    return std::string("zone takes whole numbers: ") + kForm;
  d->g.zones.push_back(z);
  return "";
}

// One line's words into *d: "" or what is wrong (without FILE:LINE).
std::string read_line(const Words& w, DriveText* d) {
  const std::string_view key = w[0];
  DriveGeometry& g = d->g;
  if (key == "name") {
    if (w.size() != 2 || w[1].size() > 31) return "name takes one word of at most 31 bytes";
    g.name = std::string(w[1]);
    return "";
  }
  static const char* kWhole = "a whole number";
  if (key == "heads") return d->has_heads = true, one_number(w, &g.tracks_per_cylinder, kWhole);
  if (key == "cylinders") return d->has_cylinders = true, one_number(w, &g.cylinders, kWhole);
  if (key == "rpm") return d->has_rpm = true, one_number(w, &g.rpm, kWhole);
  if (key == "sectors_per_track")
    return d->has_spt = true, one_number(w, &g.sectors_per_track, kWhole);
  if (key == "head_switch_us") return read_duration(w, &g.head_switch);
  if (key == "overhead_us") return read_duration(w, &g.controller_overhead);
  if (key == "write_settle_us") return read_duration(w, &g.write_settle);
  if (key == "seek") return read_seek(w, d);
  if (key == "zone") return read_zone(w, d);
  return "unknown setting '" + std::string(key) +
         "'; expected name, heads, cylinders, rpm, head_switch_us, overhead_us, "
         "write_settle_us, seek, sectors_per_track or zone";
}

// What the whole file lacks, or "".
std::string missing(const DriveText& d) {
  if (d.g.name.empty()) return "no name line";
  if (!d.has_heads) return "no heads line";
  if (!d.has_cylinders) return "no cylinders line";
  if (!d.has_rpm) return "no rpm line";
  if (!d.has_seek) return "no seek line (seek=a,b,boundary,c,e)";
  if (d.has_spt == !d.g.zones.empty())
    return "give either one sectors_per_track line or zone lines, not both or neither";
  return "";
}

}  // namespace

std::optional<DriveGeometry> parse_drive_file(std::string_view text, std::string_view file_name,
                                              std::string* error) {
  DriveText d;
  size_t line_no = 0;
  for (size_t pos = 0; pos <= text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    line = line.substr(0, line.find('#'));
    const auto words = words_of(line);
    if (words.empty()) continue;
    if (std::string why = read_line(words, &d); !why.empty()) {
      *error = std::string(file_name) + ":" + std::to_string(line_no) + ": " + why;
      return std::nullopt;
    }
  }
  auto fail = [&](const std::string& why) {
    *error = std::string(file_name) + ": " + why;
    return std::nullopt;
  };
  if (std::string why = missing(d); !why.empty()) return fail(why);
  DriveGeometry g = d.g;
  // A bad order of zones is the check's to name; number_zones needs one.
  bool ascending = g.zones.empty() || g.zones.back().first_cylinder < g.cylinders;
  for (size_t i = 1; i < g.zones.size(); ++i)
    ascending = ascending && g.zones[i - 1].first_cylinder < g.zones[i].first_cylinder;
  if (!ascending)
    return fail("zones must start at ascending cylinders, each below cylinders=" +
                std::to_string(g.cylinders));
  g.number_zones();
  if (d.skews_given != 1) {
    if (std::string why = g.check(); !why.empty()) return fail(why);  // before deriving
    g.derive_skews();
  }
  if (std::string why = g.check(); !why.empty()) return fail(why);
  return g;
}

bool names_drive_file(std::string_view value) {
  return value.find('/') != std::string_view::npos ||
         (value.size() > 6 && value.substr(value.size() - 6) == ".drive");
}

std::optional<DriveGeometry> load_drive(std::string_view preset_or_file, std::string* error) {
  if (!names_drive_file(preset_or_file)) {
    if (auto g = find_preset(preset_or_file)) return g;
    *error = "unknown geometry '" + std::string(preset_or_file) + "'; choose one of " +
             preset_names_joined(", ") + ", or a drive file (a path, or NAME.drive)";
    return std::nullopt;
  }
  std::ifstream in{std::string(preset_or_file)};
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    *error = std::string(preset_or_file) + ": cannot read the drive file";
    return std::nullopt;
  }
  return parse_drive_file(text.str(), preset_or_file, error);
}

}  // namespace vld
