#include "plugin/options.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/lld/cleaner_policy.h"
#include "core/vld/compactor.h"
#include "geometry/drive_file.h"
#include "geometry/presets.h"
#include "plugin/parameters.h"

namespace vld {

namespace {

std::string s(std::string_view v) { return std::string(v); }

std::string join_presets() {
  std::string out;
  for (const auto& n : preset_names()) out += (out.empty() ? "" : "|") + n;
  return out;
}

const ParameterDoc* find_parameter(std::string_view key) {
  for (const ParameterDoc& p : kParameters)
    if (key == p.key) return &p;
  return nullptr;
}

// What a value that is not of its kind's form is (the problem, before
// "; " + the rule's expected).
constexpr const char* kNotASize =
    "not a size (bytes: a whole number, optionally with one suffix: s for 512-byte sectors, "
    "or K, M, G, T, P, E for powers of 1024)";
constexpr const char* kNotAWholeNumber =
    "not a whole number (decimal, 0x hexadecimal or 0 octal)";
constexpr const char* kNotABoolean = "not a boolean";
// Only if nbdkit refused what check_* accepted; nbdkit has said why.
constexpr const char* kRefusedByNbdkit = "refused by nbdkit";

// A size as one would write it: "64K", "1G", "1000 bytes".
std::string size_text(uint64_t n) {
  static constexpr char kSuffixes[] = "KMGTPE";
  for (int i = 5; i >= 0; --i) {
    const int shift = 10 * (i + 1);
    if (n != 0 && n % (uint64_t{1} << shift) == 0)
      return std::to_string(n >> shift) + kSuffixes[i];
  }
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

// The problem with a value read as x from `text` that is not within [min,
// max], or "". Shows x when the text does not (0x10, 1K, 010).
std::string out_of_range(uint64_t x, const std::string& text, uint64_t min, uint64_t max,
                         bool size) {
  if (x >= min && x <= max) return "";
  const auto bound = [size](uint64_t b) { return size ? size_text(b) : std::to_string(b); };
  std::string is;
  if (text != std::to_string(x)) is = std::to_string(x) + (size ? " bytes; " : "; ");
  return x < min ? "too small (" + is + "at least " + bound(min) + ")"
                 : "too large (" + is + "at most " + bound(max) + ")";
}

// The problem of a value the check refused ("" for kOk).
std::string check_problem(ValueCheck c, const char* malformed, const std::string& too_large) {
  switch (c) {
    case ValueCheck::kOk: return "";
    case ValueCheck::kMalformed: return malformed;
    case ValueCheck::kNegative: return "negative";
    case ValueCheck::kTooLarge: return "too large (" + too_large + ")";
  }
  return malformed;
}

// Each reader returns "" with *out filled, or the problem.

std::string read_size(const ValueRule& rule, const std::string& v, const ValueParsers& parsers,
                      ParameterValue* out) {
  const uint64_t max = std::min(rule.max, kMaxNbdkitSize);
  const std::string problem =
      check_problem(check_size(v).check, kNotASize, "at most " + size_text(max));
  if (!problem.empty()) return problem;
  const int64_t x = parsers.parse_size(v.c_str());
  if (x < 0) return kRefusedByNbdkit;
  out->number = static_cast<uint64_t>(x);
  return out_of_range(out->number, v, rule.min, max, /*size=*/true);
}

std::string read_whole_number(const char* key, const ValueRule& rule, const std::string& v,
                              const ValueParsers& parsers, ParameterValue* out) {
  const std::string problem = check_problem(check_uint64(v).check, kNotAWholeNumber,
                                            "at most " + std::to_string(rule.max));
  if (!problem.empty()) return problem;
  if (parsers.parse_uint64_t(key, v.c_str(), &out->number) != 0) return kRefusedByNbdkit;
  return out_of_range(out->number, v, rule.min, rule.max, /*size=*/false);
}

std::string read_bool(const std::string& v, const ValueParsers& parsers, ParameterValue* out) {
  if (!check_bool(v)) return kNotABoolean;
  const int b = parsers.parse_bool(v.c_str());
  if (b < 0) return kRefusedByNbdkit;
  out->on = b != 0;
  return "";
}

// nbdkit 1.32 has no parser for fractions: strtod, from 0 to 1 s. Bounded
// here, not only by the geometry's check: a larger double would overflow
// the nanosecond count it becomes (sim_us).
std::string read_microseconds(const std::string& v, ParameterValue* out) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || std::isnan(x))
    return "not a number (microseconds, fractions allowed)";
  if (x < 0) return "negative";
  if (x > 1e6) return "too large (at most 1000000)";
  out->real = x;
  return "";
}

// Reads v by p's rule: "" and *out filled, or why not (without "key=value: ",
// which the caller adds).
std::string read_value(const ParameterDoc& p, const std::string& v, const ValueParsers& parsers,
                       ParameterValue* out) {
  const ValueRule& rule = p.rule;
  const std::string expected = rule.expected;
  const auto with_expected = [&](const std::string& problem) {
    return problem.empty() ? problem : problem + "; " + expected;
  };
  switch (rule.kind) {
    case ValueKind::kText:
    case ValueKind::kNonEmpty:
      return "";
    case ValueKind::kSize:
      return with_expected(read_size(rule, v, parsers, out));
    case ValueKind::kWholeNumber:
      return with_expected(read_whole_number(p.key, rule, v, parsers, out));
    case ValueKind::kMicroseconds:
      return with_expected(read_microseconds(v, out));
    case ValueKind::kOnOff:
      return with_expected(read_bool(v, parsers, out));
    case ValueKind::kPreset: {
      if (!names_drive_file(v)) return find_preset(v) ? "" : expected + join_presets();
      std::string why;
      return load_drive(v, &why) ? "" : why;
    }
    case ValueKind::kSeekCurve: {
      std::string why;
      out->seek = SeekCurve::parse(v, &why);
      return out->seek ? "" : why + expected;
    }
    case ValueKind::kCompactionPolicy:
      out->policy = parse_compaction_policy(v);
      return out->policy ? "" : expected;
    case ValueKind::kCleanerPolicy:
      out->cleaner = parse_cleaner_policy(v);
      return out->cleaner ? "" : expected;
  }
  return expected;
}

}  // namespace

std::string set_option(PluginOptions* o, std::string_view key, std::string_view v,
                       const ValueParsers& parsers) {
  const ParameterDoc* p = find_parameter(key);
  if (!p) return "unknown parameter '" + s(key) + "'; see nbdkit vld --help for the list";
  if (p->rule.kind == ValueKind::kNonEmpty && v.empty())
    return s(key) + "= " + p->rule.expected;
  const std::string text(v);
  ParameterValue value;
  value.text = v;
  std::string why = read_value(*p, text, parsers, &value);
  if (why.empty() && !p->store(*o, value)) why = p->rule.expected;
  if (!why.empty()) return s(key) + "=" + text + ": " + why;
  return "";
}

std::string set_option(PluginOptions* o, std::string_view key, std::string_view v) {
  return set_option(o, key, v, builtin_parsers());
}

namespace {

// A zoned drive's overrides: sectors_per_track= has no meaning (each zone
// has its own); rpm=, head_switch_us= and seek= move every zone's skews,
// which are derived afresh.
std::string resolve_zoned(const PluginOptions& o, DriveGeometry* g) {
  if (o.sectors_per_track)
    return "sectors_per_track=" + std::to_string(*o.sectors_per_track) + " applies to a "
           "single-zone drive, and geometry=" + g->name + " has " +
           std::to_string(g->zones.size()) + " zones; drop sectors_per_track= or use a drive "
           "file with the zones you want";
  if (o.tracks_per_cylinder) g->tracks_per_cylinder = *o.tracks_per_cylinder;
  if (o.cylinders) g->cylinders = *o.cylinders;
  if (o.overhead_us) g->controller_overhead = sim_us(*o.overhead_us);
  const bool moves_skews = o.rpm || o.head_switch_us || o.seek;
  if (o.rpm) g->rpm = *o.rpm;
  if (o.head_switch_us) g->head_switch = sim_us(*o.head_switch_us);
  if (o.seek) g->seek = *o.seek;
  if (!g->zones.empty() && g->zones.back().first_cylinder >= g->cylinders)
    return "geometry: cylinders=" + std::to_string(g->cylinders) + " ends before the last "
           "zone of geometry=" + g->name + " (at cylinder " +
           std::to_string(g->zones.back().first_cylinder) + "); give more cylinders";
  g->number_zones();
  if (std::string why = g->check(); !why.empty()) return "geometry: " + why;
  if (moves_skews) g->derive_skews();
  return "";
}

// The geometry the options describe: preset plus overrides, skews derived.
std::string resolve_geometry(const PluginOptions& o, DriveGeometry* g) {
  std::string why;
  auto drive = load_drive(o.geometry.value_or(kDefaultGeometry), &why);
  if (!drive) return "geometry=" + o.geometry.value_or(kDefaultGeometry) + ": " + why;
  *g = *drive;
  if (g->zoned()) return resolve_zoned(o, g);
  if (o.sectors_per_track) g->sectors_per_track = *o.sectors_per_track;
  if (o.tracks_per_cylinder) g->tracks_per_cylinder = *o.tracks_per_cylinder;
  if (o.cylinders) g->cylinders = *o.cylinders;
  if (o.rpm) g->rpm = *o.rpm;
  if (o.head_switch_us) g->head_switch = sim_us(*o.head_switch_us);
  if (o.overhead_us) g->controller_overhead = sim_us(*o.overhead_us);
  if (o.seek) g->seek = *o.seek;
  if (std::string why = g->check(); !why.empty()) return "geometry: " + why;
  g->derive_skews();
  return "";
}

}  // namespace

namespace {

// segment= and nvram= shape a mode=lld image only: with another mode, the
// error for the first of them given ("" if neither is).
std::string lld_only(const PluginOptions& o, DiskMode mode, bool new_image) {
  if (mode == DiskMode::kLld || (!o.segment_bytes && !o.nvram_bytes)) return "";
  const std::string key = o.segment_bytes ? "segment" : "nvram";
  const uint64_t value = o.segment_bytes ? *o.segment_bytes : *o.nvram_bytes;
  const std::string head = key + "=" + std::to_string(value) + " applies to mode=lld only, and ";
  if (new_image)
    return head + "the new image is mode=" + mode_name(mode) + "; give mode=lld or drop " + key +
           "=";
  return head + "file=" + o.file + " is a mode=" + mode_name(mode) + " image; drop " + key +
         "= to serve it";
}

// span= on a new image: its cylinders on out->geometry, the drive. The
// whole span is platters, so spare= has no meaning beside it.
std::string resolve_span(const PluginOptions& o, FormatOptions* out) {
  if (!o.span) return "";
  const std::string given = "span=" + o.span->text();
  if (o.spare_percent)
    return "spare=" + std::to_string(*o.spare_percent) + " does not apply beside " + given +
           ": the span's cylinders are all platters; drop spare= or span=";
  std::string why;
  out->span = o.span->resolve(out->geometry.cylinders, out->geometry.name, &why);
  return out->span ? "" : given + ": " + why;
}

}  // namespace

std::string format_options(const PluginOptions& o, FormatOptions* out) {
  if (!o.size_bytes)
    return "file=" + o.file + " does not exist and size= is missing; give size= (e.g. size=1G) "
           "to create it";
  if (std::string why = resolve_geometry(o, &out->geometry); !why.empty()) return why;
  out->mode = o.mode.value_or(kDefaultMode);
  out->export_bytes = *o.size_bytes;
  out->block_bytes = o.block_bytes.value_or(4096);
  out->spare_percent = o.spare_percent.value_or(25);
  if (std::string why = resolve_span(o, out); !why.empty()) return why;
  if (std::string why = lld_only(o, out->mode, /*new_image=*/true); !why.empty()) return why;
  out->segment_bytes = o.segment_bytes.value_or(kDefaultSegmentBytes);
  out->nvram_bytes = o.nvram_bytes.value_or(kDefaultNvramBytes);
  return "";
}

namespace {

// The name a geometry= value gives the drive: a preset's, or a drive file's
// name line ("" if the file cannot be read: then it matches no image).
std::string drive_name(const std::string& geometry) {
  if (!names_drive_file(geometry)) return geometry;
  std::string why;
  auto g = load_drive(geometry, &why);
  return g ? g->name : "";
}

// span= or spare= against an image's span ("" if they agree): span= must
// name the image's cylinders on its drive; spare= does not apply to a
// span's image, nor span= to an image without one.
std::string span_conflict(const PluginOptions& o, const Superblock& sb) {
  const std::string head = "file=" + o.file;
  if (sb.spanned() && o.spare_percent)
    return "spare=" + std::to_string(*o.spare_percent) + " does not apply to " + head +
           ", whose platters are span=" + sb.span().to_string() + "; drop spare=";
  if (!o.span) return "";
  const std::string given = "span=" + o.span->text();
  if (!sb.spanned())
    return given + " conflicts with " + head + ", which has no span (its platters are the " +
           "outermost " + std::to_string(sb.simulated_cylinders) + " cylinders); drop span= to "
           "use the image as it is, or give a new file=";
  std::string why;
  const std::optional<CylinderSpan> span =
      o.span->resolve(sb.drive_cylinders, sb.geometry.name, &why);
  if (span && *span == sb.span()) return "";
  const bool restate = span && span->to_string() != o.span->text();
  return given + (restate ? " (cylinders " + span->to_string() + ")" : "") + " conflicts with " +
         head + ", which has span=" + sb.span().to_string() + "; drop span= to use the image "
         "as it is, or give a new file=";
}

}  // namespace

std::string conflicts_with_image(const PluginOptions& o, const Superblock& sb) {
  const DriveGeometry& g = sb.geometry;
  auto conflict = [&](const std::string& key, const std::string& given,
                      const std::string& image) {
    return key + "=" + given + " conflicts with file=" + o.file + ", which has " + key + "=" +
           image + "; drop " + key + "= to use the image as it is, or give a new file=";
  };
  auto num = [](auto x) { return std::to_string(x); };
  if (o.size_bytes && *o.size_bytes != sb.export_bytes)
    return conflict("size", num(*o.size_bytes), num(sb.export_bytes));
  if (o.geometry && drive_name(*o.geometry) != g.name)
    return conflict("geometry", *o.geometry, g.name);
  if (o.mode && *o.mode != sb.mode)
    return conflict("mode", mode_name(*o.mode), mode_name(sb.mode));
  if (o.block_bytes && *o.block_bytes != sb.block_bytes)
    return conflict("block", num(*o.block_bytes), num(sb.block_bytes));
  if (std::string why = span_conflict(o, sb); !why.empty()) return why;
  if (o.spare_percent && *o.spare_percent != sb.spare_percent)
    return conflict("spare", num(*o.spare_percent), num(sb.spare_percent));
  if (o.sectors_per_track && *o.sectors_per_track != g.sectors_per_track)
    return conflict("sectors_per_track", num(*o.sectors_per_track), num(g.sectors_per_track));
  if (o.tracks_per_cylinder && *o.tracks_per_cylinder != g.tracks_per_cylinder)
    return conflict("tracks_per_cylinder", num(*o.tracks_per_cylinder),
                    num(g.tracks_per_cylinder));
  // A span's geometry is its band's: the drive's cylinders are beside it.
  const uint32_t drive_cylinders = sb.spanned() ? sb.drive_cylinders : g.cylinders;
  if (o.cylinders && *o.cylinders != drive_cylinders)
    return conflict("cylinders", num(*o.cylinders), num(drive_cylinders));
  if (o.rpm && *o.rpm != g.rpm) return conflict("rpm", num(*o.rpm), num(g.rpm));
  if (o.head_switch_us && sim_us(*o.head_switch_us) != g.head_switch)
    return conflict("head_switch_us", num(*o.head_switch_us), num(to_us(g.head_switch)));
  if (o.overhead_us && sim_us(*o.overhead_us) != g.controller_overhead)
    return conflict("overhead_us", num(*o.overhead_us), num(to_us(g.controller_overhead)));
  if (o.seek && !(*o.seek == g.seek))
    return conflict("seek", o.seek->to_string(), g.seek.to_string());
  if (std::string why = lld_only(o, sb.mode, /*new_image=*/false); !why.empty()) return why;
  if (o.segment_bytes && *o.segment_bytes != sb.segment_bytes)
    return conflict("segment", num(*o.segment_bytes), num(sb.segment_bytes));
  if (o.nvram_bytes && *o.nvram_bytes != sb.nvram_bytes)
    return conflict("nvram", num(*o.nvram_bytes), num(sb.nvram_bytes));
  return "";
}

const char* config_help() {
  // Built once from the table; nbdkit reads it while registering the plugin.
  static const std::string text = [] {
    std::string out;
    for (const ParameterDoc& p : kParameters) {
      if (!out.empty()) out += '\n';
      std::string head = std::string(p.key) + "=" + p.value;
      head.resize(std::max(head.size() + 1, kHelpColumn), ' ');
      out += head;
      for (const char* c = p.help; *c; ++c) {
        out += *c;
        if (*c == '\n') out.append(kHelpColumn, ' ');
      }
    }
    return out;
  }();
  return text.c_str();
}

}  // namespace vld
