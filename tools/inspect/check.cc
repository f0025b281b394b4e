#include "tools/inspect/check.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <span>

#include "core/util/checksum.h"
#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/store/overlay_store.h"
#include "core/util/error.h"
#include "core/vld/eager_allocator.h"
#include "core/vld/vld_disk.h"
#include "tools/inspect/exit_codes.h"
#include "tools/inspect/lld_inspect.h"
#include "tools/inspect/progress.h"

namespace vld::inspect {
namespace {

using json = nlohmann::json;

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string where(const Inspection& in, uint64_t psn) {
  Chs c = in.chs(psn);
  return "psn " + std::to_string(psn) + ", cylinder " + std::to_string(c.cylinder) + " head " +
         std::to_string(c.head) + " sector " + std::to_string(c.sector);
}

// Whether a slot lacks a valid record for a reason other than damage: an
// image made by a vld before both slots were written at format time, and
// never opened since (its one record is generation 1).
bool never_written_slot(const Inspection& in, uint32_t s) {
  return in.slots[s].state == RecordSlot::State::kEmpty && in.newest_slot &&
         in.slots[*in.newest_slot].record->generation <= 1;
}

// Whether every block is sure to fit once writes fragment the tracks (a
// note: vld creates no image whose spare= is too small for that; an image
// from an older vld may have one).
void check_capacity(const Inspection& in, Findings& findings) {
  const uint64_t cap = vld_block_capacity(in.img->sb);
  if (cap < in.layout.blocks)
    findings.notes.push_back("only " + std::to_string(cap) + " of the " + std::to_string(in.layout.blocks) +
                             " blocks are sure to fit once writes fragment the tracks (spare=" +
                             std::to_string(in.img->sb.spare_percent) +
                             " is too small; vld refuses it when it creates an image): writes may fail with "
                             "ENOSPC near full; copy the data to an image with a larger spare=");
}

// The log records: both valid (format writes both, a crash never tears
// one), and the newest's fields in range.
void check_records(const Inspection& in, Findings& findings) {
  for (uint32_t s = 0; s < VldLayout::kRecordSlots; ++s)
    if (in.slots[s].state != RecordSlot::State::kValid && in.newest_slot &&
        !never_written_slot(in, s))
      findings.error("record", "log record slot " + std::to_string(s) + " (physical sector " +
                                   std::to_string(s) + ") holds no valid record: it is damaged, and "
                                   "slot " + std::to_string(*in.newest_slot) +
                                   " may be the older record, so recovery scans the whole disk "
                                   "(full-scan); serving the image rewrites both slots",
                     {{"slot", s}});
  if (!in.newest_slot) {
    findings.error("record", "neither log record slot holds a valid record: they are damaged; "
                             "recovery scans the whole disk for the newest whole map (full-scan), and "
                             "serving the image rewrites both slots");
    return;
  }
  const LogRecord& record = in.record();
  const VldLayout& layout = in.layout;
  bool ok = true;
  auto bad = [&](const std::string& what) {
    findings.error("record", "the log record (generation " + std::to_string(record.generation) + ") " + what);
    ok = false;
  };
  if (record.window_first >= layout.cylinders)
    bad("names window cylinder " + std::to_string(record.window_first) + ", beyond the " +
        std::to_string(layout.cylinders) + " simulated cylinders");
  if (record.head_cylinder >= layout.cylinders || record.head >= layout.heads)
    bad("puts the head at cylinder " + std::to_string(record.head_cylinder) + " head " +
        std::to_string(record.head) + ", off the platters");
  if (record.next_seq <= record.durable_seq) bad("has next_seq <= durable_seq");
  if (record.has_root && (layout.on_system_track(record.root.psn) || record.root.psn >= in.sectors ||
                          record.root.piece >= layout.pieces))
    bad("has its root (the log tail) at psn " + std::to_string(record.root.psn) + " piece " +
        std::to_string(record.root.piece) + ", off the platters' map area");
  if (ok) findings.passed.push_back("log record: generation " + std::to_string(record.generation) + " in slot " +
                                    std::to_string(*in.newest_slot) + ", fields in range");
}

// The tree walk's findings (inspect_vld walked it).
void check_tree(const Inspection& in, Findings& findings) {
  if (!in.newest_slot || !in.record().has_root) return;
  // With a slot damaged the surviving record may be the older one, whose
  // tree later writes may rightly have reused: recovery does not use it.
  if (in.state.report.method == "full-scan") return;
  for (const json& p : in.walk.problems) {
    json extra = p;
    extra.erase("kind");
    extra.erase("message");
    findings.error(p["kind"].get<std::string>(), p["message"].get<std::string>(), extra);
  }
  if (in.walk.problems.empty())
    findings.passed.push_back("map tree: " + std::to_string(in.walk.walked) +
                              " map sectors walked from the log tail, every pointer followed leads to "
                              "an authentic map sector");
}

// Every live map sector of the recovered state, read again: it authenticates,
// is the version recovery took, and says what the recovered map says.
void check_live_map_sectors(const Inspection& in, Findings& findings) {
  const VldLayout& layout = in.layout;
  const uint64_t errors_before = findings.error_count;
  for (uint32_t p = 0; p < layout.pieces; ++p) {
    const LogNode& node = in.state.nodes[p];
    if (!node.seq) continue;
    ++findings.map_sectors_checked;
    json at = {{"psn", node.psn}, {"piece", p}, {"seq", node.seq}};
    if (node.psn >= in.sectors) {
      findings.error("map_sector", "piece " + std::to_string(p) + " lives at psn " + std::to_string(node.psn) +
                                       ", off the platters",
                     at);
      continue;
    }
    SectorBytes bytes;
    in.img->store->read(layout.byte_offset(node.psn), std::as_writable_bytes(std::span(bytes)));
    auto sector = decode_map_sector(bytes.data(), in.img->sb.secret);
    const std::string what = "the live map sector of piece " + std::to_string(p) + " at " + where(in, node.psn);
    if (!sector) {
      findings.error("map_sector", what + " does not authenticate", at);
      continue;
    }
    if (sector->piece != p || sector->seq != node.seq) {
      findings.error("map_sector", what + " holds piece " + std::to_string(sector->piece) + " seq " +
                                       std::to_string(sector->seq) + ", not seq " + std::to_string(node.seq),
                     at);
      continue;
    }
    for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
      const uint64_t block = uint64_t{p} * kEntriesPerPiece + i;
      if (block < layout.blocks && !(sector->entries[i] == in.state.map[block])) {
        findings.error("map_sector", what + " disagrees with the recovered map at block " + std::to_string(block), at);
        break;
      }
    }
  }
  if (findings.error_count == errors_before)
    findings.passed.push_back("map sectors: all " + std::to_string(findings.map_sectors_checked) +
                              " live map sectors authenticate (MAC) and hold what recovery took");
}

// Crash contract clause 5, first half: every mapping on the platters, no
// physical sector claimed twice.
void check_claims(const Inspection& in, Findings& findings) {
  const VldLayout& layout = in.layout;
  for (const BadMapping& mapping : in.bad_mappings)
    findings.error("mapping_range",
                   "logical block " + std::to_string(mapping.block) + " maps to psn " + std::to_string(mapping.psn) +
                       (layout.on_system_track(mapping.psn) ? ", on the system track (log records)"
                                      : ", beyond the " + std::to_string(in.sectors) + " sectors of the platters"),
                   {{"block", mapping.block}, {"psn", mapping.psn}});
  // Who claims a doubly claimed sector (a second pass, for the first few).
  for (uint64_t psn : in.double_claims) {
    std::vector<std::string> owners;
    if (layout.on_system_track(psn)) owners.push_back("the system track");
    for (uint64_t b = 0; b < in.state.map.size(); ++b) {
      const MapEntry& e = in.state.map[b];
      if (!e.mapped() || layout.on_system_track(e.psn()) || e.psn() >= in.sectors) continue;
      for (const SectorRun& run : extent_runs(extent_at(e.psn(), layout.block_sectors, layout.geometry), layout.geometry))
        if (psn >= run.first_psn && psn < run.first_psn + run.count) owners.push_back("block " + std::to_string(b));
    }
    for (uint32_t p = 0; p < layout.pieces; ++p)
      if (in.state.nodes[p].seq && in.state.nodes[p].psn == psn)
        owners.push_back("the map sector of piece " + std::to_string(p));
    std::string list;
    for (size_t i = 0; i < owners.size(); ++i) list += (i ? (i + 1 == owners.size() ? " and " : ", ") : "") + owners[i];
    findings.error("double_claim", "physical sector " + where(in, psn) + " is claimed by " + list,
                   {{"psn", psn}});
  }
  if (in.double_claim_count > in.double_claims.size())
    findings.error("double_claim", std::to_string(in.double_claim_count - in.double_claims.size()) +
                                       " more physical sectors are claimed twice");
  if (in.bad_mappings.empty() && in.double_claim_count == 0)
    findings.passed.push_back("mappings: " + std::to_string(in.live_blocks) +
                              " mapped blocks, all on the platters; no physical sector claimed twice");
}

// Crash contract clauses 4 and 5, second half: a VldDisk opened on the image (on
// an overlay: its writes stay in memory) recovers the same map, finds itself
// consistent, and its free map is the one the recovered state implies.
void check_opened_disk(const Inspection& in, Findings& findings) {
  const VldLayout& layout = in.layout;
  std::unique_ptr<VldDisk> disk;
  try {
    disk = std::make_unique<VldDisk>(std::make_unique<OverlayStore>(*in.img->store), in.img->sb);
  } catch (const Error& e) {
    findings.error("open", std::string("opening the image as the server would fails: ") + e.what());
    findings.free_map_agrees = false;
    return;
  }
  const uint64_t errors_before = findings.error_count;
  if (disk->map() != in.state.map)
    findings.error("recovery", "recovering twice does not give the same map (crash contract clause 4)");
  if (disk->live_blocks() != in.live_blocks)
    findings.error("free_map", "an opened disk counts " + std::to_string(disk->live_blocks()) +
                                   " live blocks, the recovered map " + std::to_string(in.live_blocks));
  if (std::string why = disk->check_consistency(); !why.empty())
    findings.error("free_map", "an opened disk finds itself inconsistent: " + why);
  // The sectors an opened disk marks used against the recovered state's
  // claims. After a clean stop (or an unclean one with nothing newer than the
  // record) they are the same; otherwise opening writes a checkpoint, a fresh
  // copy of every live map sector, elsewhere: then the data (and the system
  // track) must match and the rest be exactly that checkpoint.
  const FreeSpaceMap& free = disk->free_space();
  const bool checkpointed = in.state.needs_checkpoint;
  const uint64_t disk_map_sectors = disk->mode_report().vld->live_map_sectors;
  uint64_t mismatches = 0, extra = 0;
  for (uint32_t t = 0; t < layout.tracks; ++t) {
    const uint64_t first = layout.track_first_psn(t);
    for (uint32_t s = 0; s < free.sectors_on(t); ++s) {
      const uint64_t psn = first + s;
      const bool used = !free.is_free(t, s);
      const bool data = in.data_claims->test(psn), map = in.map_claims->test(psn);
      bool agrees = true;
      if (!checkpointed) {
        agrees = used == (data || map);
      } else {
        agrees = !data || used;
        if (used && !data) ++extra;
      }
      if (agrees) continue;
      if (++mismatches <= 20)
        findings.error("free_map", "free map disagrees at " + where(in, psn) + ": the recovered state " +
                                       (data || map ? "uses it" : "leaves it free") + ", an opened disk marks it " +
                                       (used ? "used" : "free"),
                       {{"psn", psn}});
    }
  }
  if (mismatches > 20)
    findings.error("free_map", std::to_string(mismatches - 20) + " more sectors where the free maps disagree");
  if (checkpointed && extra != disk_map_sectors)
    findings.error("free_map", "an opened disk uses " + std::to_string(extra) +
                                   " sectors beyond the recovered data, but its checkpoint has " +
                                   std::to_string(disk_map_sectors) + " map sectors");
  findings.free_map_agrees = findings.error_count == errors_before;
  if (*findings.free_map_agrees)
    findings.passed.push_back("free map: agrees with what an opened disk computes (" +
                              std::to_string(disk->free_space().free_sectors()) + " free sectors, " +
                              std::to_string(disk->free_space().empty_tracks()) + " empty tracks" +
                              (checkpointed ? ", after the checkpoint opening would write)" : ")"));
}

// Every mapped block read back against the checksum its map entry keeps,
// a track at a time in platter order.
void check_data(const Inspection& in, Findings& findings) {
  const VldLayout& layout = in.layout;
  const Superblock& sb = in.img->sb;
  std::vector<std::vector<uint64_t>> by_track(layout.tracks);  // logical blocks per track
  uint64_t total = 0;
  for (uint64_t b = 0; b < in.state.map.size(); ++b) {
    const MapEntry& e = in.state.map[b];
    // Mappings off the platters or on the system track: reported already.
    if (!e.mapped() || layout.on_system_track(e.psn()) || e.psn() >= in.sectors) continue;
    by_track[layout.track_of(e.psn())].push_back(b);
    ++total;
  }
  Progress progress("checking data blocks", total, total * sb.block_bytes);
  std::vector<std::byte> track(size_t{layout.max_track_sectors()} * kSectorBytes);
  std::vector<std::byte> block(sb.block_bytes);
  const uint64_t errors_before = findings.checksum_mismatches;
  for (uint32_t t = 0; t < layout.tracks; ++t) {
    if (by_track[t].empty()) continue;
    const uint64_t track_first = layout.track_first_psn(t);
    const uint32_t spt = layout.track_sectors(t);
    in.img->store->read(layout.byte_offset(track_first),
                        std::span(track).first(size_t{spt} * kSectorBytes));
    for (uint64_t b : by_track[t]) {
      const MapEntry& e = in.state.map[b];
      // The block's sectors in the order written, wrapping past the track's end.
      const uint32_t first = static_cast<uint32_t>(e.psn() - track_first);
      for (uint32_t i = 0; i < layout.block_sectors; ++i)
        std::memcpy(block.data() + size_t{i} * kSectorBytes,
                    track.data() + size_t{(first + i) % spt} * kSectorBytes, kSectorBytes);
      const uint32_t sum = data_checksum(block.data(), block.size(), b);
      ++findings.blocks_checked;
      if (sum != e.checksum) {
        ++findings.checksum_mismatches;
        findings.error("data_checksum",
                       "logical block " + std::to_string(b) + " at " + where(in, e.psn()) +
                           ": data checksum mismatch (its map entry says " + hex32(e.checksum) +
                           ", the data has " + hex32(sum) + "); a read of it fails with EIO",
                       {{"block", b}, {"psn", e.psn()}});
      }
    }
    progress.advance(by_track[t].size());
  }
  if (findings.checksum_mismatches == errors_before)
    findings.passed.push_back("data: " + std::to_string(findings.blocks_checked) +
                              " mapped blocks read, every checksum matches");
}

}  // namespace

Findings check(const Inspection& in) {
  Findings findings;
  if (in.is_lld()) {
    check_lld(in, findings);
    return findings;
  }
  if (!in.vld()) {
    findings.passed.push_back("superblock: valid; mode=inplace keeps no map, log or checksums");
    // A committed record not voided is no damage: a crash came between an
    // ARU's commit point and the void, and the next open replays it.
    findings.passed.push_back(
        in.inplace.pending
            ? "redo journal: record " + std::to_string(in.inplace.pending->seq) + " commits " +
                  std::to_string(in.inplace.pending->blocks.size()) +
                  " blocks and is not voided yet; the next writable open replays it"
            : "redo journal: no record to replay");
    return findings;
  }
  check_records(in, findings);
  check_capacity(in, findings);
  check_tree(in, findings);
  check_live_map_sectors(in, findings);
  check_claims(in, findings);
  if (in.recovery_error) {
    findings.error("recovery", "recovery refuses to open the image, so no server can serve it: " +
                                   *in.recovery_error);
    findings.notes.push_back("free map comparison skipped, and the rest checked on the record's tree as "
                             "far as it could be read: recovery refuses the image");
  } else if (in.bad_mappings.empty() && in.double_claim_count == 0) {
    check_opened_disk(in, findings);
  } else {
    findings.notes.push_back("free map comparison skipped: the map itself is inconsistent (above), and "
                             "a server would refuse to open the image");
  }
  check_data(in, findings);
  const RecoveryReport& rep = in.state.report;
  if (rep.groups_rejected)
    findings.notes.push_back("recovery would roll back " + std::to_string(rep.groups_rejected) +
                             " of the " + std::to_string(rep.groups_accepted + rep.groups_rejected) +
                             " requests newer than the record: incomplete when the server stopped, as a crash "
                             "leaves writes that were not yet durable");
  if (in.newest_slot && !in.record().clean)
    findings.notes.push_back("unclean: the server did not stop cleanly; the next open recovers (" +
                             rep.method + ")" +
                             (in.state.needs_checkpoint ? " and writes a checkpoint" : ""));
  return findings;
}

json check_json(const Findings& findings) {
  return {{"status", findings.error_count ? "errors" : "clean"},
          {"exit_code", findings.error_count ? kExitUncorrected : kExitClean},
          {"error_count", findings.error_count},
          {"errors", findings.errors},
          {"notes", findings.notes},
          {"map_sectors_checked", findings.map_sectors_checked},
          {"blocks_checked", findings.blocks_checked},
          {"checksum_mismatches", findings.checksum_mismatches},
          {"free_map_agrees", findings.free_map_agrees ? json(*findings.free_map_agrees) : json(nullptr)}};
}

void print_check(const Inspection& in, const Findings& findings, std::ostream& out) {
  const char* state = in.is_lld()                                             ? "lld"
                      : !in.vld() ? "inplace"
                      : !in.newest_slot ? "no log record"
                      : in.record().clean ? "clean shutdown" : "unclean shutdown";
  out << "vld-inspect: checking " << in.img->path << " (mode=" << mode_name(in.img->sb.mode)
      << ", " << state << ")\n";
  for (const std::string& p : findings.passed) out << "  ok     " << p << "\n";
  constexpr size_t kPrinted = 50;
  for (size_t i = 0; i < findings.errors.size() && i < kPrinted; ++i)
    out << "  ERROR  " << findings.errors[i]["message"].get<std::string>() << "\n";
  if (findings.error_count > kPrinted)
    out << "  ... and " << findings.error_count - kPrinted << " more errors (--json lists "
        << Findings::kMaxListed << ")\n";
  for (const std::string& n : findings.notes) out << "  note   " << n << "\n";
  out << in.img->path << ": ";
  if (findings.error_count == 0) {
    out << "clean";
  } else {
    out << findings.error_count << (findings.error_count == 1 ? " error" : " errors")
        << " left uncorrected (vld-inspect never writes)";
  }
  if (in.is_lld()) out << ", " << findings.blocks_checked << " blocks checked";
  if (in.vld())
    out << ", " << findings.blocks_checked << " data blocks and " << findings.map_sectors_checked
        << " map sectors checked";
  out << "\n";
}

}  // namespace vld::inspect
