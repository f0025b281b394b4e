#include "plugin/options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "core/lld/cleaner_policy.h"
#include "core/vld/compactor.h"
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

template <typename T>
std::optional<T> parse_uint(std::string_view v) {
  T x{};
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || p != v.data() + v.size() || v.empty()) return std::nullopt;
  return x;
}

std::optional<double> parse_double(std::string_view v) {
  std::string str(v);
  char* end = nullptr;
  double x = std::strtod(str.c_str(), &end);
  if (str.empty() || *end != '\0' || !std::isfinite(x) || x < 0) return std::nullopt;
  return x;
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  auto n = parse_uint<uint64_t>(text.substr(0, digits));
  if (!n) return std::nullopt;
  std::string_view suffix = text.substr(digits);
  int shift = 0;
  if (suffix.empty() || suffix == "b" || suffix == "B") shift = 0;
  else {
    switch (suffix[0]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: return std::nullopt;
    }
    std::string_view rest = suffix.substr(1);
    if (!(rest.empty() || rest == "B" || rest == "iB")) return std::nullopt;
  }
  if (shift && *n > (UINT64_MAX >> shift)) return std::nullopt;
  return *n << shift;
}

namespace {

std::optional<bool> on_off(std::string_view v) {
  if (v == "on" || v == "1" || v == "true") return true;
  if (v == "off" || v == "0" || v == "false") return false;
  return std::nullopt;
}

const ParameterDoc* find_parameter(std::string_view key) {
  for (const ParameterDoc& p : kParameters)
    if (key == p.key) return &p;
  return nullptr;
}

// Reads v by the rule: "" and *out filled, or why not (only the reason,
// without "key=value: ", which the caller adds).
std::string read_value(const ValueRule& rule, std::string_view v, ParameterValue* out) {
  out->text = v;
  const std::string expected = rule.expected;
  switch (rule.kind) {
    case ValueKind::kText:
    case ValueKind::kNonEmpty:
      return "";
    case ValueKind::kSize:
    case ValueKind::kWholeNumber: {
      auto x = rule.kind == ValueKind::kSize ? parse_size(v) : parse_uint<uint64_t>(v);
      if (!x || *x < rule.min || *x > rule.max) return expected;
      out->number = *x;
      return "";
    }
    case ValueKind::kMicroseconds: {
      // Bounded here, not only by the geometry's check: a larger double
      // would overflow the nanosecond count it becomes (sim_us).
      auto x = parse_double(v);
      if (!x || *x > 1e6) return expected;
      out->real = *x;
      return "";
    }
    case ValueKind::kOnOff: {
      auto x = on_off(v);
      if (!x) return expected;
      out->on = *x;
      return "";
    }
    case ValueKind::kPreset:
      return find_preset(v) ? "" : expected + join_presets();
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

std::string set_option(PluginOptions* o, std::string_view key, std::string_view v) {
  const ParameterDoc* p = find_parameter(key);
  if (!p) return "unknown parameter '" + s(key) + "'; see nbdkit vld --help for the list";
  if (p->rule.kind == ValueKind::kNonEmpty && v.empty())
    return s(key) + "= " + p->rule.expected;
  ParameterValue value;
  std::string why = read_value(p->rule, v, &value);
  if (why.empty() && !p->store(*o, value)) why = p->rule.expected;
  if (!why.empty()) return s(key) + "=" + s(v) + ": " + why;
  return "";
}

namespace {

// The geometry the options describe: preset plus overrides, skews derived.
std::string resolve_geometry(const PluginOptions& o, DriveGeometry* g) {
  *g = *find_preset(o.geometry.value_or(kDefaultGeometry));
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
  if (std::string why = lld_only(o, out->mode, /*new_image=*/true); !why.empty()) return why;
  out->segment_bytes = o.segment_bytes.value_or(kDefaultSegmentBytes);
  out->nvram_bytes = o.nvram_bytes.value_or(kDefaultNvramBytes);
  return "";
}

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
  if (o.geometry && *o.geometry != g.name) return conflict("geometry", *o.geometry, g.name);
  if (o.mode && *o.mode != sb.mode)
    return conflict("mode", mode_name(*o.mode), mode_name(sb.mode));
  if (o.block_bytes && *o.block_bytes != sb.block_bytes)
    return conflict("block", num(*o.block_bytes), num(sb.block_bytes));
  if (o.spare_percent && *o.spare_percent != sb.spare_percent)
    return conflict("spare", num(*o.spare_percent), num(sb.spare_percent));
  if (o.sectors_per_track && *o.sectors_per_track != g.sectors_per_track)
    return conflict("sectors_per_track", num(*o.sectors_per_track), num(g.sectors_per_track));
  if (o.tracks_per_cylinder && *o.tracks_per_cylinder != g.tracks_per_cylinder)
    return conflict("tracks_per_cylinder", num(*o.tracks_per_cylinder),
                    num(g.tracks_per_cylinder));
  if (o.cylinders && *o.cylinders != g.cylinders)
    return conflict("cylinders", num(*o.cylinders), num(g.cylinders));
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
