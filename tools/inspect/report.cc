#include "tools/inspect/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/modes/mode_image.h"
#include "core/util/units.h"
#include "stats/mode_report_json.h"
#include "tools/inspect/lld_inspect.h"

namespace vld::inspect {
namespace {

using json = nlohmann::json;

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

json chs_json(const Chs& c) {
  return {{"cylinder", c.cylinder}, {"head", c.head}, {"sector", c.sector}};
}

// A zoned drive's sectors_per_track is its largest track's; its zones
// follow, outermost first.
json geometry_json(const Superblock& sb) {
  const DriveGeometry& geometry = sb.geometry;
  json j = {{"name", geometry.name},
            {"sectors_per_track", geometry.max_sectors_per_track()},
            {"tracks_per_cylinder", geometry.tracks_per_cylinder},
            {"cylinders", geometry.cylinders},
            {"simulated_cylinders", sb.simulated_cylinders},
            {"rpm", geometry.rpm},
            {"revolution_us", to_us(geometry.revolution())}};
  if (sb.spanned())  // the geometry is the band's (geometry/span.h)
    j["span"] = {{"first_cylinder", sb.span().first},
                 {"last_cylinder", sb.span().last},
                 {"drive_cylinders", sb.drive_cylinders}};
  if (!geometry.zoned()) return j;
  j["min_sectors_per_track"] = geometry.min_sectors_per_track();
  json zones = json::array();
  for (const Zone& z : geometry.zones)
    zones.push_back({{"first_cylinder", z.first_cylinder},
                     {"sectors_per_track", z.sectors_per_track},
                     {"track_skew_sectors", z.track_skew_sectors},
                     {"cylinder_skew_sectors", z.cylinder_skew_sectors},
                     {"first_psn", z.first_psn}});
  j["zones"] = std::move(zones);
  return j;
}

// What every image has: the file, its geometry and sizes, how full it is.
json image_json(const Inspection& in) {
  const Superblock& sb = in.img->sb;
  json j;
  j["image"] = in.img->path;
  j["file_bytes"] = in.img->file_bytes;
  j["mode"] = mode_name(sb.mode);
  j["geometry"] = geometry_json(sb);
  j["export_bytes"] = sb.export_bytes;
  j["platter_bytes"] = sb.platter_bytes();
  j["image_bytes"] = sb.image_bytes();
  j["platter_offset"] = sb.platter_offset;
  j["block_bytes"] = sb.block_bytes;
  j["spare_percent"] = sb.spare_percent;
  j["logical_blocks"] = in.layout.blocks;
  j["physical_blocks"] = sb.physical_blocks();
  if (in.vld()) {
    // Whether every block can be written however the tracks fragment
    // (core/vld/vld_plan.h); images made before vld checked this at creation may not.
    j["block_capacity"] = vld_block_capacity(sb);
    j["every_block_writable"] = vld_block_capacity(sb) >= in.layout.blocks;
  }
  j["live_blocks"] = in.live_blocks;
  j["utilization"] = in.utilization();
  j["tracks"] = in.layout.tracks;
  j["empty_tracks"] = in.empty_tracks;
  return j;
}

json record_slots_json(const Inspection& in) {
  json slots = json::array();
  for (uint32_t s = 0; s < VldLayout::kRecordSlots; ++s) {
    json o = {{"slot", s}, {"state", slot_state_name(in.slots[s].state)}};
    if (in.slots[s].record) o["generation"] = in.slots[s].record->generation;
    slots.push_back(o);
  }
  return slots;
}

// The newest log record, or null when neither slot holds one.
json record_json(const Inspection& in) {
  if (!in.newest_slot) return nullptr;
  const LogRecord& record = in.record();
  json rec = {{"slot", *in.newest_slot},
              {"generation", record.generation},
              {"clean", record.clean},
              {"durable_seq", record.durable_seq},
              {"next_seq", record.next_seq},
              {"window", {{"first_cylinder", record.window_first}, {"cylinders", record.window_cylinders}}},
              {"head", {{"cylinder", record.head_cylinder}, {"head", record.head}}}};
  if (record.has_root) {
    json root = {{"psn", record.root.psn}, {"seq", record.root.seq}, {"piece", record.root.piece},
                 {"track", in.layout.track_of(record.root.psn)}};
    root.update(chs_json(in.chs(record.root.psn)));
    rec["root"] = root;
  } else {
    rec["root"] = nullptr;
  }
  return rec;
}

// The stats file's recovery section, and what only an inspection knows.
json recovery_json(const Inspection& in) {
  json j = in.state.report;
  j["needs_checkpoint"] = in.state.needs_checkpoint;
  if (in.recovery_error) j["error"] = *in.recovery_error;
  return j;
}

// mode=vld: free space, the log records, the map, the log since the
// record, and what recovery would do.
void add_vld_json(const Inspection& in, json& j) {
  const RecoveryReport& rep = in.state.report;
  j["free_sectors"] = in.free_sectors;
  j["free_bytes"] = in.free_sectors * kSectorBytes;
  j["free_block_holes"] = in.free_block_holes;
  j["clean"] = in.newest_slot && in.record().clean;
  j["record_slots"] = record_slots_json(in);
  j["record"] = record_json(in);
  j["map"] = {{"pieces", in.layout.pieces},
              {"live_pieces", in.live_pieces},
              {"mapped_blocks", in.live_blocks}};
  j["log_since_record"] = {{"map_sectors", rep.candidates},
                           {"groups", rep.groups_accepted + rep.groups_rejected},
                           {"groups_accepted", rep.groups_accepted},
                           {"groups_rejected", rep.groups_rejected}};
  j["recovery"] = recovery_json(in);
}

// "256" on a single-zone drive; "3 zones of 256 to 192" on a zoned one.
std::string sectors_per_track_text(const DriveGeometry& g) {
  if (!g.zoned()) return std::to_string(g.sectors_per_track);
  return std::to_string(g.zone_count()) + " zones of " + std::to_string(g.max_sectors_per_track()) +
         " to " + std::to_string(g.min_sectors_per_track());
}

// The zone table, outermost first: the first cylinder of each and its
// sectors per track.
void print_zones(const DriveGeometry& g, std::ostream& out) {
  out << "  zones        ";
  for (uint32_t i = 0; i < g.zone_count(); ++i)
    out << (i ? ", " : "from cylinder ") << g.zones[i].first_cylinder << ": "
        << g.zones[i].sectors_per_track << (i ? "" : " sectors/track");
  out << "\n";
}

// The lines every image has: what it is, geometry, sizes, utilization.
void print_image(const Inspection& in, std::ostream& out) {
  const Superblock& sb = in.img->sb;
  const DriveGeometry& geometry = sb.geometry;
  const VldLayout& layout = in.layout;
  out << in.img->path << ": mode=" << mode_name(sb.mode) << " disk ("
      << mode_description(sb.mode) << "), " << human_bytes(sb.export_bytes)
      << " exported; an image of the vld plugin, format version " << sb.version() << "\n";
  out << "  geometry     " << geometry.name << ": " << sectors_per_track_text(geometry)
      << " sectors/track, " << geometry.tracks_per_cylinder << " heads, "
      << sb.simulated_cylinders << " of " << geometry.cylinders << " cylinders simulated ("
      << layout.tracks << " tracks), " << geometry.rpm << " rpm\n";
  if (sb.spanned())
    out << "  span         span=" << sb.span().to_string() << ": these " << geometry.cylinders
        << " cylinders of the drive's " << sb.drive_cylinders << " (the geometry is theirs)\n";
  if (geometry.zoned()) print_zones(geometry, out);
  out << "  sizes        export " << sb.export_bytes << " bytes (" << layout.blocks << " blocks of "
      << sb.block_bytes << "), platters " << sb.platter_bytes() << " bytes ("
      << sb.physical_blocks() << " physical blocks, spare " << sb.spare_percent
      << "%), image file " << in.img->file_bytes << " bytes\n";
  if (in.vld() && vld_block_capacity(sb) < layout.blocks)
    out << "  capacity     only " << vld_block_capacity(sb) << " of the " << layout.blocks
        << " blocks are sure to fit once writes fragment the tracks: spare=" << sb.spare_percent
        << " is too small (made before vld refused it); writes may fail with ENOSPC near full\n";
  out << "  utilization  " << percent(in.utilization()) << ": " << in.live_blocks
      << " live blocks of " << sb.physical_blocks() << " physical"
      << (in.vld()      ? ""
          : in.is_lld() ? " (blocks with a copy in a segment)"
                        : " (blocks holding data in the backing file)")
      << "\n";
}

// The newest record: clean or not, and the log newer than it.
void print_state(const Inspection& in, std::ostream& out) {
  const LogRecord& record = in.record();
  const RecoveryReport& rep = in.state.report;
  if (!in.newest_slot) {
    out << "  state        no valid log record in either slot: recovery would scan the whole "
           "disk\n";
    return;
  }
  out << "  state        " << (record.clean ? "clean" : "unclean")
      << " (newest log record: generation " << record.generation << ", slot " << *in.newest_slot
      << (record.clean ? ", written by a clean shutdown)"
                       : ", written while serving: the server did not stop cleanly)")
      << "\n";
  out << "  log          durable_seq " << record.durable_seq << ", next_seq " << record.next_seq
      << "; " << rep.candidates << " map sectors in " << rep.groups_accepted + rep.groups_rejected
      << " groups newer than the record";
  if (!record.clean)
    out << " (" << rep.groups_accepted << " accepted, " << rep.groups_rejected
        << " rolled back by recovery)";
  out << "\n";
}

// The record's window, the head, and the log tail.
void print_window(const Inspection& in, std::ostream& out) {
  if (!in.newest_slot) return;
  const LogRecord& record = in.record();
  const VldLayout& layout = in.layout;
  out << "  window       cylinders " << record.window_first << ".."
      << (record.window_first + record.window_cylinders + layout.cylinders - 1) % layout.cylinders
      << " (" << record.window_cylinders << "); head last at cylinder " << record.head_cylinder
      << " head " << record.head << "\n";
  if (record.has_root) {
    Chs c = in.chs(record.root.psn);
    out << "  log tail     psn " << record.root.psn << " (cylinder " << c.cylinder << " head "
        << c.head << " sector " << c.sector << "): piece " << record.root.piece << " seq "
        << record.root.seq << "\n";
  } else {
    out << "  log tail     none (nothing written yet)\n";
  }
}

// What recovery would read to open the image, or why it refuses; and a
// warning when the map is inconsistent.
void print_recovery(const Inspection& in, std::ostream& out) {
  const RecoveryReport& rep = in.state.report;
  if (in.recovery_error) {
    out << "  recovery     REFUSES to open the image: " << *in.recovery_error
        << " (the figures above come from the record's tree as far as it could be read; run "
           "vld-inspect --check)\n";
    return;
  }
  out << "  recovery     " << rep.method << ": would read " << rep.sectors_read << " sectors";
  if (rep.tracks_scanned) out << " (" << rep.tracks_scanned << " whole tracks)";
  out << ", " << rep.map_sectors_walked << " map sectors walked, ";
  char ms[64];
  std::snprintf(ms, sizeof ms, "%.1f ms simulated (%.1f ms here)", rep.simulated_ms, rep.wall_ms);
  out << ms;
  if (in.state.needs_checkpoint) out << "; then write a checkpoint of " << in.live_pieces << " map sectors";
  out << "\n";
  if (!in.bad_mappings.empty() || in.double_claim_count)
    out << "  WARNING      " << in.bad_mappings.size() << " mappings off the platters, "
        << in.double_claim_count << " sectors claimed twice: run vld-inspect --check\n";
}

// mode=vld: everything after utilization.
void print_vld(const Inspection& in, std::ostream& out) {
  const VldLayout& layout = in.layout;
  print_state(in, out);
  out << "  map          " << in.live_pieces << " of " << layout.pieces << " pieces live ("
      << in.live_pieces << " live map sectors), " << in.live_blocks << " mapped blocks\n";
  print_window(in, out);
  out << "  free space   " << in.free_sectors << " free sectors ("
      << human_bytes(in.free_sectors * kSectorBytes) << ", "
      << percent(static_cast<double>(in.free_sectors) / static_cast<double>(in.sectors))
      << "), room for " << in.free_block_holes << " blocks in runs of " << layout.block_sectors
      << "; " << in.empty_tracks << " of " << layout.tracks << " tracks empty\n";
  print_recovery(in, out);
}

// mode=inplace's ARU redo journal (docs/format.md): never used, voided, or
// a committed record the next writable open replays.
void print_redo_journal(const Inspection& in, std::ostream& out) {
  const auto& ip = in.inplace;
  out << "  redo journal " << human_bytes(ip.journal_bytes) << " past the export; ";
  if (ip.pending)
    out << "record " << ip.pending->seq << " commits " << ip.pending->blocks.size()
        << " blocks (an ARU) and is not voided: the next writable open writes them home again\n";
  else if (ip.last_seq)
    out << "empty (record " << ip.last_seq << ", the last, is voided or was never committed)\n";
  else
    out << "never used\n";
}

json redo_journal_json(const Inspection& in) {
  const auto& ip = in.inplace;
  json j = {{"bytes", ip.journal_bytes}, {"last_seq", ip.last_seq}};
  j["pending_blocks"] = ip.pending ? json(ip.pending->blocks.size()) : json(nullptr);
  return j;
}

}  // namespace

json report_json(const Inspection& in) {
  json j = image_json(in);
  if (in.vld())
    add_vld_json(in, j);
  else if (in.is_lld())
    add_lld_json(in, j);
  else {
    j["utilization_source"] = "data ranges of the backing file";
    j["redo_journal"] = redo_journal_json(in);
  }
  return j;
}

void print_report(const Inspection& in, std::ostream& out) {
  print_image(in, out);
  if (in.vld()) {
    print_vld(in, out);
    return;
  }
  if (in.is_lld()) {
    print_lld(in, out);
    return;
  }
  out << "  tracks       " << in.empty_tracks << " of " << in.layout.tracks
      << " tracks hold no data\n";
  print_redo_journal(in, out);
  out << "  (mode=inplace keeps no map or log: logical sector n is physical sector n; its "
         "only recovery state is the ARU redo journal)\n";
}

namespace {

// The end of the array of plain numbers opening at text[open], or npos if
// it holds anything else (strings, objects, arrays).
size_t number_array_end(const std::string& text, size_t open) {
  for (size_t k = open + 1; k < text.size(); ++k) {
    const char c = text[k];
    if (c == ']') return k;
    if (!std::isdigit(static_cast<unsigned char>(c)) && !std::strchr(" \n,-+.eE", c))
      return std::string::npos;
  }
  return std::string::npos;
}

// The end of the string opening at text[open] (its closing quote).
size_t string_end(const std::string& text, size_t open) {
  size_t k = open + 1;
  while (k < text.size() && text[k] != '"') k += text[k] == '\\' ? 2 : 1;
  return k;
}

}  // namespace

std::string json_text(const nlohmann::json& j) {
  const std::string pretty = j.dump(2);
  std::string out;
  out.reserve(pretty.size());
  for (size_t i = 0; i < pretty.size(); ++i) {
    if (pretty[i] == '"') {
      const size_t end = std::min(string_end(pretty, i), pretty.size() - 1);
      out.append(pretty, i, end - i + 1);
      i = end;
      continue;
    }
    const size_t end = pretty[i] == '[' ? number_array_end(pretty, i) : std::string::npos;
    if (end == std::string::npos) {
      out += pretty[i];
      continue;
    }
    out += '[';
    for (size_t k = i + 1; k < end; ++k) {
      if (pretty[k] == ' ' || pretty[k] == '\n') continue;
      out += pretty[k];
      if (pretty[k] == ',') out += ' ';
    }
    out += ']';
    i = end;
  }
  return out;
}

}  // namespace vld::inspect
