// vld-inspect: an offline look inside a vld image, and fsck for it.
//
//   vld-inspect IMAGE               what the image holds: geometry, sizes, mode,
//                                   clean or not, utilization, the map and the
//                                   virtual log, free space, the log record's
//                                   window, and what recovery would read to
//                                   open it
//   vld-inspect --check IMAGE       a full consistency check (fsck): every map
//                                   sector authenticates, every mapping is on
//                                   the platters, no physical sector is claimed
//                                   twice, the free map agrees with what an
//                                   opened disk computes, every data block
//                                   matches its checksum
//   --json                          one JSON object on stdout instead of text
//   --layout FILE.png               a picture of the platters: one cell per
//                                   track, coloured by how much live data it
//                                   holds; a caption on stdout says its scale
//
// Why: the image is the drive's platters, and what is on them (where the log
// tail is, how full each track is, whether a crash left anything behind)
// otherwise shows only through a running server's statistics. vld-inspect
// answers offline, and --check is the crash contract's promise (5) -- no
// physical block mapped twice, the free map agrees -- checked on a real
// image, together with every checksum the format keeps.
//
// A damaged image: the record's tree is also walked here independently of
// recover(), so that a map sector that fails its MAC is named (recover()
// either refuses the image or, in older cores, drops the piece silently);
// when recover() refuses, the report and the check go on with what the walk
// could read. After a crash, requests newer than the record that recovery
// rolls back are notes, not errors: the crash contract allows them.
//
// Read-only by construction: the image is opened O_RDONLY with a shared
// flock (FileBackingStore::open(path, readonly=true)), so an image a server
// is serving (it holds the exclusive lock) is refused, and nothing here can
// write to it. What an opened disk would compute (the free map, a second
// recovery) comes from a VldDisk built on an OverlayStore: reads come from the
// image, the writes of opening (a log record, a checkpoint) stay in memory.
//
// Exit codes, as fsck(8): 0 no errors, 4 errors left uncorrected (--check
// found damage; vld-inspect never repairs), 8 operational error (cannot
// open, not a vld image, locked, cannot write the PNG), 16 usage error.
#include <png.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/store/backing_store.h"
#include "core/image.h"
#include "core/vld/eager_allocator.h"
#include "core/image_format.h"
#include "core/vld/log_walk.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery.h"
#include "core/util/error.h"
#include "core/util/units.h"
#include "core/vld/virtual_log.h"
#include "core/store/overlay_store.h"
#include "core/vld/vld_disk.h"

namespace vld {
namespace {

using json = nlohmann::json;

// fsck(8) exit codes.
constexpr int kExitClean = 0;
constexpr int kExitUncorrected = 4;
constexpr int kExitOperational = 8;
constexpr int kExitUsage = 16;

// A bad input or a failed operation: one line for the user, then exit 8.
struct Failure {
  std::string message;
};
[[noreturn]] void fail(const std::string& message) { throw Failure{message}; }

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * fraction);
  return buf;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// ---- opening ---------------------------------------------------------------

struct OpenedImage {
  std::string path;
  std::unique_ptr<FileBackingStore> store;
  Superblock sb;
  uint64_t file_bytes = 0;
  struct stat st {};
};

// Opens path read-only (shared lock) and reads its superblock; every way
// this can fail is a one-line Failure saying what to do.
OpenedImage open_read_only(const std::string& path) {
  OpenedImage img;
  img.path = path;
  if (::stat(path.c_str(), &img.st) != 0) {
    if (errno == ENOENT) fail(path + ": no such file; give the path of a vld image");
    fail(path + ": cannot stat it (" + std::strerror(errno) + ")");
  }
  if (S_ISDIR(img.st.st_mode))
    fail(path + " is a directory; give the path of a vld image file");
  if (!S_ISREG(img.st.st_mode))
    fail(path + " is not a regular file; give the path of a vld image file");
  try {
    img.store = FileBackingStore::open(path, /*readonly=*/true);
  } catch (const Error& e) {
    if (e.err() == EBUSY) fail(path + " is in use by a running server (locked); stop it first");
    if (e.err() == EACCES) fail(path + ": permission denied; run as a user who can read it");
    fail(e.what());
  }
  img.file_bytes = img.store->size_bytes();
  if (img.file_bytes < kSuperblockBytes)
    fail(path + " is not a vld image (" + std::to_string(img.file_bytes) +
         " bytes, too small for a superblock); give the path of an image the vld plugin made");
  std::array<unsigned char, kSuperblockBytes> bytes;
  img.store->read(0, std::as_writable_bytes(std::span(bytes)));
  std::string why;
  switch (decode_superblock(bytes.data(), &img.sb, &why)) {
    case DecodeResult::kOk: break;
    case DecodeResult::kNotVld:
      fail(path + " is not a vld image (no VLDIMAGE magic at offset 0); give the path of an "
                  "image the vld plugin made");
    case DecodeResult::kDamagedStart:
      fail(path + ": the superblock is damaged (no VLDIMAGE magic, but a vld superblock's "
                  "checksum at byte 4088); without it nothing on the image can be located");
    case DecodeResult::kBadChecksum:
      fail(path + ": the superblock is damaged (checksum mismatch); without it nothing on the "
                  "image can be located");
    case DecodeResult::kUnsupportedVersion:
      fail(path + " was made by a different vld format version; inspect it with that vld's "
                  "vld-inspect");
    case DecodeResult::kInvalid:
      fail(path + ": the superblock is invalid (" + why + "); the image cannot be read");
  }
  if (img.file_bytes < img.sb.image_bytes())
    fail(path + " is truncated: " + std::to_string(img.file_bytes) + " bytes, its superblock " +
         "needs " + std::to_string(img.sb.image_bytes()) + "; was it copied in part?");
  return img;
}

// ---- what an opened disk would compute, without writing ---------------------

// ---- what the image holds ---------------------------------------------------

// One bit per physical sector.
class SectorBitmap {
 public:
  explicit SectorBitmap(uint64_t sectors) : bits_((sectors + 63) / 64) {}
  bool test(uint64_t psn) const { return bits_[psn / 64] >> (psn % 64) & 1; }
  // Sets the bit; returns whether it was set already.
  bool test_and_set(uint64_t psn) {
    const uint64_t bit = uint64_t{1} << (psn % 64);
    const bool was = bits_[psn / 64] & bit;
    bits_[psn / 64] |= bit;
    return was;
  }

 private:
  std::vector<uint64_t> bits_;
};

// A log record slot as found.
struct RecordSlot {
  enum class State { kValid, kEmpty, kInvalid } state = State::kEmpty;
  std::optional<LogRecord> record;
};
const char* slot_state_name(RecordSlot::State s) {
  switch (s) {
    case RecordSlot::State::kValid: return "valid";
    case RecordSlot::State::kEmpty: return "empty";
    case RecordSlot::State::kInvalid: return "invalid";
  }
  return "?";
}

// A mapped block that does not lie on the platters' data area.
struct BadMapping {
  uint64_t block;
  uint64_t psn;
};

// The log record's tree as far as it can be read, walked as recover() walks
// it (newest first; a pointer to a piece already met is dropped unread), but
// noting what it cannot read instead of stopping or silently dropping it: in a
// consistent image every pointer the walk follows leads to the live version
// of its piece (nothing the record's tree reaches is recycled before the next
// record), so one that does not authenticate, or holds another seq, is
// damage, and the pieces below it are lost.
struct TreeWalk {
  std::vector<MapEntry> map;   // per logical block
  std::vector<LogNode> nodes;  // per piece (psn, seq; no children)
  uint64_t walked = 0;         // map sectors read
  json problems = json::array();  // {"kind", "message", "psn", "piece", "seq"}
};

TreeWalk walk_tree(BackingStore& store, const Superblock& sb, const LogRecord& r) {
  const VldLayout L(sb);
  const uint64_t sectors = uint64_t{L.tracks} * L.spt;
  TreeWalk w;
  w.map.assign(L.blocks, MapEntry{});
  w.nodes.assign(L.pieces, LogNode{});
  if (!r.has_root) return w;
  auto problem = [&](const char* kind, const std::string& message, const LogWalkStep& n) {
    w.problems.push_back(
        {{"kind", kind}, {"message", message}, {"psn", n.psn}, {"piece", n.piece}, {"seq", n.seq}});
  };
  std::optional<MapSector> m;  // the sector the walk is at
  walk_log_tree(r.root, static_cast<uint32_t>(L.pieces), [&](const LogWalkStep& n) {
    const std::string from = !n.parent_psn
                                 ? std::string("the log record (it is the log tail)")
                                 : "the map sector at psn " + std::to_string(*n.parent_psn);
    if (n.piece >= L.pieces) {
      problem("map_tree", "a pointer in " + from + " names piece " + std::to_string(n.piece) +
                              ", beyond the map's " + std::to_string(L.pieces) + " pieces", n);
      return LogWalkVisit{};
    }
    const uint64_t first = uint64_t{n.piece} * kEntriesPerPiece;
    const std::string what =
        "the map sector of piece " + std::to_string(n.piece) + " (blocks " +
        std::to_string(first) + ".." +
        std::to_string(std::min<uint64_t>(first + kEntriesPerPiece, L.blocks) - 1) + ", seq " +
        std::to_string(n.seq) + ") at psn " + std::to_string(n.psn) + ", pointed to by " + from;
    const std::string lost = ": recovery cannot locate its blocks nor any piece only it leads to";
    if (n.psn < L.spt || n.psn >= sectors) {
      problem("map_tree", what + ", lies off the platters' map area" + lost, n);
      return LogWalkVisit{};
    }
    SectorBytes b;
    store.read(L.byte_offset(n.psn), std::as_writable_bytes(std::span(b)));
    ++w.walked;
    m = decode_map_sector(b.data(), sb.secret);
    if (!m) {
      const bool magic = std::memcmp(b.data(), "VLMS", 4) == 0;
      problem("map_sector",
              what + (magic ? ", fails its MAC (damaged)" : ", is not a map sector (overwritten or damaged)") + lost,
              n);
      return LogWalkVisit{};
    }
    if (m->seq != n.seq || m->piece != n.piece) {
      problem("map_sector",
              what + ", holds piece " + std::to_string(m->piece) + " seq " +
                  std::to_string(m->seq) + " instead (recycled while still reachable)" + lost,
              n);
      return LogWalkVisit{};
    }
    w.nodes[n.piece].psn = n.psn;
    w.nodes[n.piece].seq = n.seq;
    for (uint32_t i = 0; i < kEntriesPerPiece; ++i)
      if (first + i < L.blocks) w.map[first + i] = m->entries[i];
    return LogWalkVisit{&*m};
  });
  return w;
}

// Everything the report, the check and the picture need. For mode=vld it
// comes from core's recover() (which only reads) and from claiming, sector
// by sector, what the recovered state uses -- as a VldDisk opening the image
// would mark its free map before writing anything: the system track, every
// mapped data block, every live map sector.
struct Inspection {
  const OpenedImage* img = nullptr;
  VldLayout layout;
  uint64_t sectors = 0;                // on the simulated platters
  uint64_t live_blocks = 0;            // mapped (vld) or holding data (inplace)
  std::vector<uint32_t> live_sectors;  // per track: sectors of live data
  std::vector<uint32_t> used_sectors;  // per track: sectors in use (vld: data, map, system)
  uint32_t empty_tracks = 0;
  uint64_t free_sectors = 0;           // vld only
  uint64_t free_block_holes = 0;       // vld: blocks the free runs can hold side by side

  // mode=vld only.
  std::array<RecordSlot, VldLayout::kRecordSlots> slots;
  std::optional<uint32_t> newest_slot;
  TreeWalk walk;                       // the record's tree, read independently
  RecoveredState state;                // recover()'s, or the walk's if recovery refuses
  std::optional<std::string> recovery_error;  // why recover() refuses to open the image
  uint64_t live_pieces = 0;
  std::optional<SectorBitmap> data_claims;  // system track + mapped data blocks
  std::optional<SectorBitmap> map_claims;   // live map sectors
  std::vector<BadMapping> bad_mappings;     // outside the platters or on the system track
  std::vector<uint64_t> double_claims;      // sectors claimed twice (first few)
  uint64_t double_claim_count = 0;

  explicit Inspection(const OpenedImage& i) : img(&i), layout(i.sb) {
    sectors = uint64_t{layout.tracks} * layout.spt;
  }
  bool vld() const { return img->sb.mode == DiskMode::kVld; }
  double utilization() const {
    const uint64_t physical = img->sb.physical_blocks();
    return physical ? static_cast<double>(live_blocks) / static_cast<double>(physical) : 0.0;
  }
  const LogRecord& record() const { return state.record; }
  Chs chs(uint64_t psn) const { return img->sb.geometry.chs_of(psn); }
};

constexpr size_t kMaxDoubleClaimsKept = 64;

void claim(Inspection& in, SectorBitmap& bits, uint64_t psn) {
  const bool taken = in.data_claims->test(psn) || in.map_claims->test(psn);
  bits.test_and_set(psn);
  if (!taken) return;
  if (in.double_claims.size() < kMaxDoubleClaimsKept) in.double_claims.push_back(psn);
  ++in.double_claim_count;
}

// How many data blocks the free runs of track t hold side by side (runs wrap
// past the track's end): free sectors in runs shorter than a block are no use
// to data, only to map sectors.
uint64_t block_holes(const Inspection& in, uint32_t t) {
  const VldLayout& L = in.layout;
  const uint64_t base = uint64_t{t} * L.spt;
  auto used = [&](uint32_t s) { return in.data_claims->test(base + s) || in.map_claims->test(base + s); };
  uint32_t start = 0;
  while (start < L.spt && !used(start)) ++start;
  if (start == L.spt) return L.spt / L.block_sectors;  // an empty track
  uint64_t holes = 0;
  uint32_t run = 0;
  for (uint32_t i = 1; i <= L.spt; ++i) {  // from just after a used sector, once round
    if (used((start + i) % L.spt)) {
      holes += run / L.block_sectors;
      run = 0;
    } else {
      ++run;
    }
  }
  return holes;
}

// Percent done of long work (blocks checked, tracks scanned) on stderr, only on a terminal and only when
// there is enough to check for it to matter.
class Progress {
 public:
  static constexpr uint64_t kMinBytes = uint64_t{256} << 20;
  Progress(std::string what, uint64_t total, uint64_t bytes)
      : what_(std::move(what)), total_(total), on_(isatty(STDERR_FILENO) && bytes >= kMinBytes) {}
  ~Progress() {
    if (on_ && shown_ >= 0) std::fprintf(stderr, "\r%*s\r", 72, "");
  }
  void advance(uint64_t n) {
    done_ += n;
    if (!on_ || total_ == 0) return;
    const int pct = static_cast<int>(100 * done_ / total_);
    if (pct == shown_) return;
    shown_ = pct;
    std::fprintf(stderr, "\rvld-inspect: %s %3d%% (%llu/%llu)", what_.c_str(), pct,
                 static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_));
    std::fflush(stderr);
  }

 private:
  std::string what_;
  uint64_t total_, done_ = 0;
  bool on_;
  int shown_ = -1;
};

void inspect_vld(Inspection& in) {
  BackingStore& store = *in.img->store;
  const Superblock& sb = in.img->sb;
  const VldLayout& L = in.layout;

  for (uint32_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
    SectorBytes b;
    store.read(L.byte_offset(slot), std::as_writable_bytes(std::span(b)));
    RecordSlot& s = in.slots[slot];
    s.record = decode_log_record(b.data(), sb.secret);
    s.state = s.record ? RecordSlot::State::kValid
              : std::all_of(b.begin(), b.end(), [](unsigned char c) { return c == 0; })
                  ? RecordSlot::State::kEmpty
                  : RecordSlot::State::kInvalid;
    if (s.record &&
        (!in.newest_slot || s.record->generation > in.slots[*in.newest_slot].record->generation))
      in.newest_slot = slot;
  }

  const LogRecord newest = in.newest_slot ? *in.slots[*in.newest_slot].record : LogRecord{};
  in.walk = walk_tree(store, sb, newest);
  try {
    std::unique_ptr<Progress> scanning;  // a full scan after damage reads every track
    in.state = recover(store, sb, /*track_buffer=*/true, [&](uint64_t done, uint64_t total) {
      if (!scanning)
        scanning = std::make_unique<Progress>("recovery: reading tracks", total,
                                              total * L.spt * kSectorBytes);
      scanning->advance(1);
      (void)done;
    });
  } catch (const Error& e) {
    // A damaged image recovery refuses (a server would not open it): go on
    // with what the walk could read.
    in.recovery_error = e.what();
    in.state = RecoveredState{};
    in.state.map = in.walk.map;
    in.state.nodes = in.walk.nodes;
    in.state.record = newest;
    in.state.report.method = "refused";
  }

  in.data_claims.emplace(in.sectors);
  in.map_claims.emplace(in.sectors);
  for (uint32_t s = 0; s < L.spt; ++s) in.data_claims->test_and_set(s);  // the system track
  in.live_sectors.assign(L.tracks, 0);
  for (uint64_t b = 0; b < in.state.map.size(); ++b) {
    const MapEntry& e = in.state.map[b];
    if (!e.mapped()) continue;
    ++in.live_blocks;
    if (e.psn() < L.spt || e.psn() >= in.sectors) {
      in.bad_mappings.push_back(BadMapping{b, e.psn()});
      continue;
    }
    const Extent x = extent_at(e.psn(), L.block_sectors, L.spt);
    in.live_sectors[x.track] += x.sectors;
    for (const SectorRun& r : extent_runs(x, L.spt))
      for (uint64_t p = r.first_psn; p < r.first_psn + r.count; ++p) claim(in, *in.data_claims, p);
  }
  for (const LogNode& n : in.state.nodes) {
    if (!n.seq) continue;
    ++in.live_pieces;
    if (n.psn < in.sectors) claim(in, *in.map_claims, n.psn);
  }

  in.used_sectors.assign(L.tracks, 0);
  for (uint32_t t = 0; t < L.tracks; ++t) {
    uint32_t used = 0;
    for (uint64_t p = uint64_t{t} * L.spt; p < uint64_t{t + 1} * L.spt; ++p)
      used += in.data_claims->test(p) || in.map_claims->test(p);
    in.used_sectors[t] = used;
    in.free_sectors += L.spt - used;
    if (used == 0) ++in.empty_tracks;
    in.free_block_holes += block_holes(in, t);
  }
}

// mode=inplace: logical sector n is physical sector n; what holds data is
// what the backing file holds (trimmed and never-written blocks are holes),
// as InplaceDisk counts it.
void inspect_inplace(Inspection& in) {
  const Superblock& sb = in.img->sb;
  const VldLayout& L = in.layout;
  in.live_sectors.assign(L.tracks, 0);
  std::vector<uint64_t> live((sb.export_bytes / sb.block_bytes + 63) / 64, 0);
  in.img->store->for_each_data_range(sb.platter_offset, sb.export_bytes, [&](uint64_t off,
                                                                             uint64_t len) {
    const uint64_t rel = off - sb.platter_offset;
    for (uint64_t b = rel / sb.block_bytes; b < (rel + len + sb.block_bytes - 1) / sb.block_bytes;
         ++b)
      live[b / 64] |= uint64_t{1} << (b % 64);
    for (uint64_t s = rel / kSectorBytes; s < (rel + len + kSectorBytes - 1) / kSectorBytes; ++s)
      ++in.live_sectors[s / L.spt];
  });
  for (uint64_t w : live) in.live_blocks += static_cast<uint64_t>(__builtin_popcountll(w));
  in.used_sectors = in.live_sectors;
  for (uint32_t t = 0; t < L.tracks; ++t)
    if (in.live_sectors[t] == 0) ++in.empty_tracks;
}

// ---- the report ---------------------------------------------------------------

json chs_json(const Chs& c) {
  return {{"cylinder", c.cylinder}, {"head", c.head}, {"sector", c.sector}};
}

json report_json(const Inspection& in) {
  const Superblock& sb = in.img->sb;
  const DriveGeometry& g = sb.geometry;
  json j;
  j["image"] = in.img->path;
  j["file_bytes"] = in.img->file_bytes;
  j["mode"] = mode_name(sb.mode);
  j["geometry"] = {{"name", g.name},
                   {"sectors_per_track", g.sectors_per_track},
                   {"tracks_per_cylinder", g.tracks_per_cylinder},
                   {"cylinders", g.cylinders},
                   {"simulated_cylinders", sb.simulated_cylinders},
                   {"rpm", g.rpm},
                   {"revolution_us", to_us(g.revolution())}};
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
    // (core/image.h); images made before vld checked this at creation may not.
    j["block_capacity"] = vld_block_capacity(sb);
    j["every_block_writable"] = vld_block_capacity(sb) >= in.layout.blocks;
  }
  j["live_blocks"] = in.live_blocks;
  j["utilization"] = in.utilization();
  j["tracks"] = in.layout.tracks;
  j["empty_tracks"] = in.empty_tracks;
  if (!in.vld()) {
    j["utilization_source"] = "data ranges of the backing file";
    return j;
  }
  const LogRecord& r = in.record();
  const RecoveryReport& rep = in.state.report;
  j["free_sectors"] = in.free_sectors;
  j["free_bytes"] = in.free_sectors * kSectorBytes;
  j["free_block_holes"] = in.free_block_holes;
  j["clean"] = in.newest_slot && r.clean;
  json slots = json::array();
  for (uint32_t s = 0; s < VldLayout::kRecordSlots; ++s) {
    json o = {{"slot", s}, {"state", slot_state_name(in.slots[s].state)}};
    if (in.slots[s].record) o["generation"] = in.slots[s].record->generation;
    slots.push_back(o);
  }
  j["record_slots"] = slots;
  if (in.newest_slot) {
    json rec = {{"slot", *in.newest_slot},
                {"generation", r.generation},
                {"clean", r.clean},
                {"durable_seq", r.durable_seq},
                {"next_seq", r.next_seq},
                {"window", {{"first_cylinder", r.window_first}, {"cylinders", r.window_cylinders}}},
                {"head", {{"cylinder", r.head_cylinder}, {"head", r.head}}}};
    if (r.has_root) {
      json root = {{"psn", r.root.psn}, {"seq", r.root.seq}, {"piece", r.root.piece},
                   {"track", r.root.psn / in.layout.spt}};
      root.update(chs_json(in.chs(r.root.psn)));
      rec["root"] = root;
    } else {
      rec["root"] = nullptr;
    }
    j["record"] = rec;
  } else {
    j["record"] = nullptr;
  }
  j["map"] = {{"pieces", in.layout.pieces},
              {"live_pieces", in.live_pieces},
              {"mapped_blocks", in.live_blocks}};
  j["log_since_record"] = {{"map_sectors", rep.candidates},
                           {"groups", rep.groups_accepted + rep.groups_rejected},
                           {"groups_accepted", rep.groups_accepted},
                           {"groups_rejected", rep.groups_rejected}};
  j["recovery"] = {{"clean", rep.clean},
                   {"method", rep.method},
                   {"sectors_read", rep.sectors_read},
                   {"simulated_ms", rep.simulated_ms},
                   {"wall_ms", rep.wall_ms},
                   {"map_sectors_walked", rep.map_sectors_walked},
                   {"tracks_scanned", rep.tracks_scanned},
                   {"candidates", rep.candidates},
                   {"groups_accepted", rep.groups_accepted},
                   {"groups_rejected", rep.groups_rejected},
                   {"data_blocks_checked", rep.data_blocks_checked},
                   {"needs_checkpoint", in.state.needs_checkpoint}};
  if (in.recovery_error) j["recovery"]["error"] = *in.recovery_error;
  return j;
}

void print_report(const Inspection& in, std::ostream& out) {
  const Superblock& sb = in.img->sb;
  const DriveGeometry& g = sb.geometry;
  const VldLayout& L = in.layout;
  out << in.img->path << ": vld image, mode=" << mode_name(sb.mode) << ", "
      << human_bytes(sb.export_bytes) << " exported\n";
  out << "  geometry     " << g.name << ": " << g.sectors_per_track << " sectors/track, "
      << g.tracks_per_cylinder << " heads, " << sb.simulated_cylinders << " of " << g.cylinders
      << " cylinders simulated (" << L.tracks << " tracks), " << g.rpm << " rpm\n";
  out << "  sizes        export " << sb.export_bytes << " bytes (" << L.blocks << " blocks of "
      << sb.block_bytes << "), platters " << sb.platter_bytes() << " bytes ("
      << sb.physical_blocks() << " physical blocks, spare " << sb.spare_percent
      << "%), image file " << in.img->file_bytes << " bytes\n";
  if (in.vld() && vld_block_capacity(sb) < L.blocks)
    out << "  capacity     only " << vld_block_capacity(sb) << " of the " << L.blocks
        << " blocks are sure to fit once writes fragment the tracks: spare=" << sb.spare_percent
        << " is too small (made before vld refused it); writes may fail with ENOSPC near full\n";
  out << "  utilization  " << percent(in.utilization()) << ": " << in.live_blocks
      << " live blocks of " << sb.physical_blocks() << " physical"
      << (in.vld() ? "" : " (blocks holding data in the backing file)") << "\n";
  if (!in.vld()) {
    out << "  tracks       " << in.empty_tracks << " of " << L.tracks
        << " tracks hold no data\n";
    out << "  (mode=inplace keeps no map, log or recovery state: logical sector n is "
           "physical sector n)\n";
    return;
  }
  const LogRecord& r = in.record();
  const RecoveryReport& rep = in.state.report;
  if (!in.newest_slot) {
    out << "  state        no valid log record in either slot: recovery would scan the whole "
           "disk\n";
  } else {
    out << "  state        " << (r.clean ? "clean" : "unclean")
        << " (newest log record: generation " << r.generation << ", slot " << *in.newest_slot
        << (r.clean ? ", written by a clean shutdown)"
                    : ", written while serving: the server did not stop cleanly)")
        << "\n";
    out << "  log          durable_seq " << r.durable_seq << ", next_seq " << r.next_seq << "; "
        << rep.candidates << " map sectors in " << rep.groups_accepted + rep.groups_rejected
        << " groups newer than the record";
    if (!r.clean)
      out << " (" << rep.groups_accepted << " accepted, " << rep.groups_rejected
          << " rolled back by recovery)";
    out << "\n";
  }
  out << "  map          " << in.live_pieces << " of " << L.pieces << " pieces live ("
      << in.live_pieces << " live map sectors), " << in.live_blocks << " mapped blocks\n";
  if (in.newest_slot) {
    out << "  window       cylinders " << r.window_first << ".."
        << (r.window_first + r.window_cylinders + L.cylinders - 1) % L.cylinders << " ("
        << r.window_cylinders << "); head last at cylinder " << r.head_cylinder << " head "
        << r.head << "\n";
    if (r.has_root) {
      Chs c = in.chs(r.root.psn);
      out << "  log tail     psn " << r.root.psn << " (cylinder " << c.cylinder << " head "
          << c.head << " sector " << c.sector << "): piece " << r.root.piece << " seq "
          << r.root.seq << "\n";
    } else {
      out << "  log tail     none (nothing written yet)\n";
    }
  }
  out << "  free space   " << in.free_sectors << " free sectors (" << human_bytes(in.free_sectors * kSectorBytes)
      << ", " << percent(static_cast<double>(in.free_sectors) / static_cast<double>(in.sectors))
      << "), room for " << in.free_block_holes << " blocks in runs of " << L.block_sectors
      << "; " << in.empty_tracks << " of " << L.tracks << " tracks empty\n";
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

// ---- the check ------------------------------------------------------------------

struct Findings {
  static constexpr size_t kMaxListed = 1000;
  json errors = json::array();  // the first kMaxListed
  uint64_t error_count = 0;
  std::vector<std::string> notes;
  std::vector<std::string> passed;  // one line per check that found nothing wrong
  uint64_t map_sectors_checked = 0;
  uint64_t blocks_checked = 0;
  uint64_t checksum_mismatches = 0;
  std::optional<bool> free_map_agrees;

  void error(const std::string& kind, const std::string& message, json extra = json::object()) {
    ++error_count;
    if (errors.size() >= kMaxListed) return;
    extra["kind"] = kind;
    extra["message"] = message;
    errors.push_back(extra);
  }
};

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

// The log records: both valid (format writes both, a crash never tears
// one), and the newest's fields in range.
void check_capacity(const Inspection& in, Findings& f) {
  const uint64_t cap = vld_block_capacity(in.img->sb);
  if (cap < in.layout.blocks)
    f.notes.push_back("only " + std::to_string(cap) + " of the " + std::to_string(in.layout.blocks) +
                      " blocks are sure to fit once writes fragment the tracks (spare=" +
                      std::to_string(in.img->sb.spare_percent) +
                      " is too small; vld now refuses it for new images): writes may fail with "
                      "ENOSPC near full; copy the data to an image with a larger spare=");
}

void check_records(const Inspection& in, Findings& f) {
  for (uint32_t s = 0; s < VldLayout::kRecordSlots; ++s)
    if (in.slots[s].state != RecordSlot::State::kValid && in.newest_slot &&
        !never_written_slot(in, s))
      f.error("record", "log record slot " + std::to_string(s) + " (physical sector " +
                            std::to_string(s) + ") holds no valid record: it is damaged, and "
                            "slot " + std::to_string(*in.newest_slot) +
                            " may be the older record, so recovery scans the whole disk "
                            "(full-scan); serving the image rewrites both slots",
              {{"slot", s}});
  if (!in.newest_slot) {
    f.error("record", "neither log record slot holds a valid record: they are damaged; "
                      "recovery scans the whole disk for the newest whole map (full-scan), and "
                      "serving the image rewrites both slots");
    return;
  }
  const LogRecord& r = in.record();
  const VldLayout& L = in.layout;
  bool ok = true;
  auto bad = [&](const std::string& what) {
    f.error("record", "the log record (generation " + std::to_string(r.generation) + ") " + what);
    ok = false;
  };
  if (r.window_first >= L.cylinders)
    bad("names window cylinder " + std::to_string(r.window_first) + ", beyond the " +
        std::to_string(L.cylinders) + " simulated cylinders");
  if (r.head_cylinder >= L.cylinders || r.head >= L.heads)
    bad("puts the head at cylinder " + std::to_string(r.head_cylinder) + " head " +
        std::to_string(r.head) + ", off the platters");
  if (r.next_seq <= r.durable_seq) bad("has next_seq <= durable_seq");
  if (r.has_root && (r.root.psn < L.spt || r.root.psn >= in.sectors || r.root.piece >= L.pieces))
    bad("has its root (the log tail) at psn " + std::to_string(r.root.psn) + " piece " +
        std::to_string(r.root.piece) + ", off the platters' map area");
  if (ok) f.passed.push_back("log record: generation " + std::to_string(r.generation) + " in slot " +
                             std::to_string(*in.newest_slot) + ", fields in range");
}

// The tree walk's findings (inspect_vld walked it).
void check_tree(const Inspection& in, Findings& f) {
  if (!in.newest_slot || !in.record().has_root) return;
  // With a slot damaged the surviving record may be the older one, whose
  // tree later writes may rightly have reused: recovery does not use it.
  if (in.state.report.method == "full-scan") return;
  for (const json& p : in.walk.problems) {
    json extra = p;
    extra.erase("kind");
    extra.erase("message");
    f.error(p["kind"].get<std::string>(), p["message"].get<std::string>(), extra);
  }
  if (in.walk.problems.empty())
    f.passed.push_back("map tree: " + std::to_string(in.walk.walked) +
                       " map sectors walked from the log tail, every pointer followed leads to "
                       "an authentic map sector");
}

// Every live map sector of the recovered state, read again: it authenticates,
// is the version recovery took, and says what the recovered map says.
void check_live_map_sectors(const Inspection& in, Findings& f) {
  const VldLayout& L = in.layout;
  const uint64_t errors_before = f.error_count;
  for (uint32_t p = 0; p < L.pieces; ++p) {
    const LogNode& n = in.state.nodes[p];
    if (!n.seq) continue;
    ++f.map_sectors_checked;
    json at = {{"psn", n.psn}, {"piece", p}, {"seq", n.seq}};
    if (n.psn >= in.sectors) {
      f.error("map_sector", "piece " + std::to_string(p) + " lives at psn " + std::to_string(n.psn) +
                                ", off the platters",
              at);
      continue;
    }
    SectorBytes b;
    in.img->store->read(L.byte_offset(n.psn), std::as_writable_bytes(std::span(b)));
    auto m = decode_map_sector(b.data(), in.img->sb.secret);
    const std::string what = "the live map sector of piece " + std::to_string(p) + " at " + where(in, n.psn);
    if (!m) {
      f.error("map_sector", what + " does not authenticate", at);
      continue;
    }
    if (m->piece != p || m->seq != n.seq) {
      f.error("map_sector", what + " holds piece " + std::to_string(m->piece) + " seq " +
                                std::to_string(m->seq) + ", not seq " + std::to_string(n.seq),
              at);
      continue;
    }
    for (uint32_t i = 0; i < kEntriesPerPiece; ++i) {
      const uint64_t block = uint64_t{p} * kEntriesPerPiece + i;
      if (block < L.blocks && !(m->entries[i] == in.state.map[block])) {
        f.error("map_sector", what + " disagrees with the recovered map at block " + std::to_string(block), at);
        break;
      }
    }
  }
  if (f.error_count == errors_before)
    f.passed.push_back("map sectors: all " + std::to_string(f.map_sectors_checked) +
                       " live map sectors authenticate (MAC) and hold what recovery took");
}

// Crash contract (5), first half: every mapping on the platters, no
// physical sector claimed twice.
void check_claims(const Inspection& in, Findings& f) {
  const VldLayout& L = in.layout;
  for (const BadMapping& m : in.bad_mappings)
    f.error("mapping_range",
            "logical block " + std::to_string(m.block) + " maps to psn " + std::to_string(m.psn) +
                (m.psn < L.spt ? ", on the system track (log records)"
                               : ", beyond the " + std::to_string(in.sectors) + " sectors of the platters"),
            {{"block", m.block}, {"psn", m.psn}});
  // Who claims a doubly claimed sector (a second pass, for the first few).
  for (uint64_t psn : in.double_claims) {
    std::vector<std::string> owners;
    if (psn < L.spt) owners.push_back("the system track");
    for (uint64_t b = 0; b < in.state.map.size(); ++b) {
      const MapEntry& e = in.state.map[b];
      if (!e.mapped() || e.psn() < L.spt || e.psn() >= in.sectors) continue;
      for (const SectorRun& r : extent_runs(extent_at(e.psn(), L.block_sectors, L.spt), L.spt))
        if (psn >= r.first_psn && psn < r.first_psn + r.count) owners.push_back("block " + std::to_string(b));
    }
    for (uint32_t p = 0; p < L.pieces; ++p)
      if (in.state.nodes[p].seq && in.state.nodes[p].psn == psn)
        owners.push_back("the map sector of piece " + std::to_string(p));
    std::string list;
    for (size_t i = 0; i < owners.size(); ++i) list += (i ? (i + 1 == owners.size() ? " and " : ", ") : "") + owners[i];
    f.error("double_claim", "physical sector " + where(in, psn) + " is claimed by " + list,
            {{"psn", psn}});
  }
  if (in.double_claim_count > in.double_claims.size())
    f.error("double_claim", std::to_string(in.double_claim_count - in.double_claims.size()) +
                                " more physical sectors are claimed twice");
  if (in.bad_mappings.empty() && in.double_claim_count == 0)
    f.passed.push_back("mappings: " + std::to_string(in.live_blocks) +
                       " mapped blocks, all on the platters; no physical sector claimed twice");
}

// Crash contract (4) and (5), second half: a VldDisk opened on the image (on
// an overlay: its writes stay in memory) recovers the same map, finds itself
// consistent, and its free map is the one the recovered state implies.
void check_opened_disk(const Inspection& in, Findings& f) {
  const VldLayout& L = in.layout;
  std::unique_ptr<VldDisk> disk;
  try {
    disk = std::make_unique<VldDisk>(std::make_unique<OverlayStore>(*in.img->store), in.img->sb);
  } catch (const Error& e) {
    f.error("open", std::string("opening the image as the server would fails: ") + e.what());
    f.free_map_agrees = false;
    return;
  }
  const uint64_t errors_before = f.error_count;
  if (disk->map() != in.state.map)
    f.error("recovery", "recovering twice does not give the same map (crash contract (4))");
  if (disk->live_blocks() != in.live_blocks)
    f.error("free_map", "an opened disk counts " + std::to_string(disk->live_blocks()) +
                            " live blocks, the recovered map " + std::to_string(in.live_blocks));
  if (std::string why = disk->check_consistency(); !why.empty())
    f.error("free_map", "an opened disk finds itself inconsistent: " + why);
  // The sectors an opened disk marks used against the recovered state's
  // claims. After a clean stop (or an unclean one with nothing newer than the
  // record) they are the same; otherwise opening writes a checkpoint, a fresh
  // copy of every live map sector, elsewhere: then the data (and the system
  // track) must match and the rest be exactly that checkpoint.
  const FreeSpaceMap& free = disk->free_space();
  const bool checkpointed = in.state.needs_checkpoint;
  const uint64_t disk_map_sectors = disk->extra_stats()["vld"]["live_map_sectors"].get<uint64_t>();
  uint64_t mismatches = 0, extra = 0;
  for (uint32_t t = 0; t < L.tracks; ++t) {
    for (uint32_t s = 0; s < L.spt; ++s) {
      const uint64_t psn = uint64_t{t} * L.spt + s;
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
        f.error("free_map", "free map disagrees at " + where(in, psn) + ": the recovered state " +
                                (data || map ? "uses it" : "leaves it free") + ", an opened disk marks it " +
                                (used ? "used" : "free"),
                {{"psn", psn}});
    }
  }
  if (mismatches > 20)
    f.error("free_map", std::to_string(mismatches - 20) + " more sectors where the free maps disagree");
  if (checkpointed && extra != disk_map_sectors)
    f.error("free_map", "an opened disk uses " + std::to_string(extra) +
                            " sectors beyond the recovered data, but its checkpoint has " +
                            std::to_string(disk_map_sectors) + " map sectors");
  f.free_map_agrees = f.error_count == errors_before;
  if (*f.free_map_agrees)
    f.passed.push_back("free map: agrees with what an opened disk computes (" +
                       std::to_string(disk->free_space().free_sectors()) + " free sectors, " +
                       std::to_string(disk->free_space().empty_tracks()) + " empty tracks" +
                       (checkpointed ? ", after the checkpoint opening would write)" : ")"));
}

// Every mapped block read back against the checksum its map entry keeps,
// a track at a time in platter order.
void check_data(const Inspection& in, Findings& f) {
  const VldLayout& L = in.layout;
  const Superblock& sb = in.img->sb;
  std::vector<std::vector<uint64_t>> by_track(L.tracks);  // logical blocks per track
  uint64_t total = 0;
  for (uint64_t b = 0; b < in.state.map.size(); ++b) {
    const MapEntry& e = in.state.map[b];
    if (!e.mapped() || e.psn() < L.spt || e.psn() >= in.sectors) continue;  // reported already
    by_track[e.psn() / L.spt].push_back(b);
    ++total;
  }
  Progress progress("checking data blocks", total, total * sb.block_bytes);
  std::vector<std::byte> track(size_t{L.spt} * kSectorBytes);
  std::vector<std::byte> block(sb.block_bytes);
  const uint64_t errors_before = f.checksum_mismatches;
  for (uint32_t t = 0; t < L.tracks; ++t) {
    if (by_track[t].empty()) continue;
    in.img->store->read(L.byte_offset(uint64_t{t} * L.spt), std::span(track));
    for (uint64_t b : by_track[t]) {
      const MapEntry& e = in.state.map[b];
      // The block's sectors in the order written, wrapping past the track's end.
      const uint32_t first = static_cast<uint32_t>(e.psn() % L.spt);
      for (uint32_t i = 0; i < L.block_sectors; ++i)
        std::memcpy(block.data() + size_t{i} * kSectorBytes,
                    track.data() + size_t{(first + i) % L.spt} * kSectorBytes, kSectorBytes);
      const uint32_t sum = data_checksum(block.data(), block.size(), b);
      ++f.blocks_checked;
      if (sum != e.checksum) {
        ++f.checksum_mismatches;
        f.error("data_checksum",
                "logical block " + std::to_string(b) + " at " + where(in, e.psn()) +
                    ": data checksum mismatch (its map entry says " + hex32(e.checksum) +
                    ", the data has " + hex32(sum) + "); a read of it fails with EIO",
                {{"block", b}, {"psn", e.psn()}});
      }
    }
    progress.advance(by_track[t].size());
  }
  if (f.checksum_mismatches == errors_before)
    f.passed.push_back("data: " + std::to_string(f.blocks_checked) +
                       " mapped blocks read, every checksum matches");
}

Findings check(const Inspection& in) {
  Findings f;
  if (!in.vld()) {
    f.passed.push_back("superblock: valid; mode=inplace keeps no map, log or checksums, so "
                       "there is nothing more to check");
    return f;
  }
  check_records(in, f);
  check_capacity(in, f);
  check_tree(in, f);
  check_live_map_sectors(in, f);
  check_claims(in, f);
  if (in.recovery_error) {
    f.error("recovery", "recovery refuses to open the image, so no server can serve it: " +
                            *in.recovery_error);
    f.notes.push_back("free map comparison skipped, and the rest checked on the record's tree as "
                      "far as it could be read: recovery refuses the image");
  } else if (in.bad_mappings.empty() && in.double_claim_count == 0) {
    check_opened_disk(in, f);
  } else {
    f.notes.push_back("free map comparison skipped: the map itself is inconsistent (above), and "
                      "a server would refuse to open the image");
  }
  check_data(in, f);
  const RecoveryReport& rep = in.state.report;
  if (rep.groups_rejected)
    f.notes.push_back("recovery would roll back " + std::to_string(rep.groups_rejected) +
                      " of the " + std::to_string(rep.groups_accepted + rep.groups_rejected) +
                      " requests newer than the record: incomplete when the server stopped, as a crash "
                      "leaves writes that were not yet durable");
  if (in.newest_slot && !in.record().clean)
    f.notes.push_back("unclean: the server did not stop cleanly; the next open recovers (" +
                      rep.method + ")" +
                      (in.state.needs_checkpoint ? " and writes a checkpoint" : ""));
  return f;
}

json check_json(const Findings& f) {
  return {{"status", f.error_count ? "errors" : "clean"},
          {"exit_code", f.error_count ? kExitUncorrected : kExitClean},
          {"error_count", f.error_count},
          {"errors", f.errors},
          {"notes", f.notes},
          {"map_sectors_checked", f.map_sectors_checked},
          {"blocks_checked", f.blocks_checked},
          {"checksum_mismatches", f.checksum_mismatches},
          {"free_map_agrees", f.free_map_agrees ? json(*f.free_map_agrees) : json(nullptr)}};
}

void print_check(const Inspection& in, const Findings& f, std::ostream& out) {
  const char* state = !in.vld() ? "inplace"
                      : !in.newest_slot ? "no log record"
                      : in.record().clean ? "clean shutdown" : "unclean shutdown";
  out << "vld-inspect: checking " << in.img->path << " (mode=" << mode_name(in.img->sb.mode)
      << ", " << state << ")\n";
  for (const std::string& p : f.passed) out << "  ok     " << p << "\n";
  constexpr size_t kPrinted = 50;
  for (size_t i = 0; i < f.errors.size() && i < kPrinted; ++i)
    out << "  ERROR  " << f.errors[i]["message"].get<std::string>() << "\n";
  if (f.error_count > kPrinted)
    out << "  ... and " << f.error_count - kPrinted << " more errors (--json lists "
        << Findings::kMaxListed << ")\n";
  for (const std::string& n : f.notes) out << "  note   " << n << "\n";
  out << in.img->path << ": ";
  if (f.error_count == 0) {
    out << "clean";
  } else {
    out << f.error_count << (f.error_count == 1 ? " error" : " errors")
        << " left uncorrected (vld-inspect never writes)";
  }
  if (in.vld())
    out << ", " << f.blocks_checked << " data blocks and " << f.map_sectors_checked
        << " map sectors checked";
  out << "\n";
}

// ---- the picture ------------------------------------------------------------------

struct Rgb {
  uint8_t r, g, b;
};

// matplotlib's viridis at 0, 1/8, ..., 1: sequential, and still ordered in
// grey scale.
Rgb viridis(double x) {
  static constexpr std::array<Rgb, 9> kStops = {{{68, 1, 84},
                                                 {72, 40, 120},
                                                 {62, 73, 137},
                                                 {49, 104, 142},
                                                 {38, 130, 142},
                                                 {31, 158, 137},
                                                 {53, 183, 121},
                                                 {110, 206, 88},
                                                 {253, 231, 37}}};
  x = std::clamp(x, 0.0, 1.0) * (kStops.size() - 1);
  const size_t i = std::min<size_t>(static_cast<size_t>(x), kStops.size() - 2);
  const double t = x - static_cast<double>(i);
  auto mix = [&](uint8_t a, uint8_t b) {
    return static_cast<uint8_t>(std::lround(a + (b - a) * t));
  };
  return {mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g),
          mix(kStops[i].b, kStops[i + 1].b)};
}

constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kEmptyTrack{200, 200, 200};
constexpr Rgb kSystemTrack{0, 0, 0};
constexpr Rgb kHeadMark{228, 26, 28};   // red
constexpr Rgb kTailMark{231, 41, 210};  // magenta
constexpr Rgb kWindowBar{31, 120, 180}; // blue
constexpr Rgb kAxis{120, 120, 120};

class Canvas {
 public:
  Canvas(uint32_t w, uint32_t h) : w_(w), h_(h), rgb_(size_t{w} * h * 3, 255) {}
  uint32_t width() const { return w_; }
  uint32_t height() const { return h_; }
  const uint8_t* row(uint32_t y) const { return rgb_.data() + size_t{y} * w_ * 3; }
  void fill(int64_t x, int64_t y, int64_t w, int64_t h, Rgb c) {
    for (int64_t yy = std::max<int64_t>(y, 0); yy < std::min<int64_t>(y + h, h_); ++yy)
      for (int64_t xx = std::max<int64_t>(x, 0); xx < std::min<int64_t>(x + w, w_); ++xx) {
        uint8_t* p = rgb_.data() + (size_t(yy) * w_ + size_t(xx)) * 3;
        p[0] = c.r, p[1] = c.g, p[2] = c.b;
      }
  }
  // A frame of thickness t drawn outside the rectangle (x, y, w, h).
  void frame(int64_t x, int64_t y, int64_t w, int64_t h, int64_t t, Rgb c) {
    fill(x - t, y - t, w + 2 * t, t, c);
    fill(x - t, y + h, w + 2 * t, t, c);
    fill(x - t, y, t, h, c);
    fill(x + w, y, t, h, c);
  }
  // A triangle pointing down (tip at (x, y + size - 1)) or right (tip at (x + size - 1, y)).
  void triangle_down(int64_t x, int64_t y, int64_t size, Rgb c) {
    for (int64_t i = 0; i < size; ++i) fill(x - (size - 1 - i), y + i, 2 * (size - 1 - i) + 1, 1, c);
  }
  void triangle_right(int64_t x, int64_t y, int64_t size, Rgb c) {
    for (int64_t i = 0; i < size; ++i) fill(x + i, y - (size - 1 - i), 1, 2 * (size - 1 - i) + 1, c);
  }

 private:
  uint32_t w_, h_;
  std::vector<uint8_t> rgb_;
};

// Encodes the canvas as an 8-bit RGB PNG into f. libpng reports errors by
// longjmp, so nothing here has a destructor; false and *why on failure.
bool encode_png(FILE* f, const Canvas& c, const char** why) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) {
    *why = "libpng could not start";
    return false;
  }
  png_infop info = png_create_info_struct(png);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    *why = "libpng failed to encode";
    return false;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, c.width(), c.height(), 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (uint32_t y = 0; y < c.height(); ++y) png_write_row(png, const_cast<png_bytep>(c.row(y)));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

void write_png(const std::string& path, const Canvas& c) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f)
    fail("--layout " + path + ": cannot create it (" + std::strerror(errno) +
         "); give a writable path in an existing directory");
  const char* why = nullptr;
  const bool ok = encode_png(f, c, &why);
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) {
    ::unlink(path.c_str());
    fail("--layout " + path + ": " + (ok ? std::string(std::strerror(errno)) : why) +
         "; nothing was written");
  }
}

// How the platters map onto pixels: cylinders across (several to a column
// when they are more than kMaxColumns), heads down.
struct LayoutPlan {
  static constexpr uint32_t kMaxColumns = 1600;
  static constexpr uint32_t kTargetGridWidthPx = 1200;
  static constexpr uint32_t kTargetGridHeightPx = 400;
  static constexpr uint32_t kLeftPx = 24, kTopPx = 28, kRightPx = 16;
  static constexpr uint32_t kColorbarPx = 256, kSwatchPx = 14, kGapPx = 14;

  uint32_t cylinders, heads;
  uint32_t cylinders_per_column, columns;
  uint32_t cell_width_px, row_height_px;
  uint32_t grid_x, grid_y, grid_w, grid_h;
  uint32_t window_bar_y, legend_y;
  uint32_t width, height;
  uint32_t tick_every_cylinders;

  LayoutPlan(uint32_t cyl, uint32_t hds) : cylinders(cyl), heads(hds) {
    cylinders_per_column = (cylinders + kMaxColumns - 1) / kMaxColumns;
    columns = (cylinders + cylinders_per_column - 1) / cylinders_per_column;
    cell_width_px = std::clamp<uint32_t>(kTargetGridWidthPx / columns, 1, 48);
    row_height_px = std::clamp<uint32_t>(kTargetGridHeightPx / heads, 8, 32);
    grid_x = kLeftPx;
    grid_y = kTopPx;
    grid_w = columns * cell_width_px;
    grid_h = heads * row_height_px;
    window_bar_y = grid_y + grid_h + 4;
    legend_y = window_bar_y + 6 + 16;
    const uint32_t legend_w = kColorbarPx + 6 * (kSwatchPx + kGapPx);
    width = grid_x + std::max(grid_w, legend_w) + kRightPx;
    height = legend_y + kSwatchPx + 8 + 12;
    // Axis ticks at least 40 px apart, every 1, 2 or 5 x 10^n cylinders.
    const double px_per_cylinder = double(cell_width_px) / cylinders_per_column;
    tick_every_cylinders = 1;
    for (uint64_t p = 1;; p *= 10) {
      for (uint64_t m : {1, 2, 5})
        if (m * p * px_per_cylinder >= 40) {
          tick_every_cylinders = static_cast<uint32_t>(m * p);
          return;
        }
    }
  }
  uint32_t column_of(uint32_t cylinder) const { return cylinder / cylinders_per_column; }
  int64_t cell_x(uint32_t column) const { return grid_x + int64_t{column} * cell_width_px; }
  int64_t cell_y(uint32_t head) const { return grid_y + int64_t{head} * row_height_px; }
};

struct LayoutResult {
  LayoutPlan plan;
  std::string caption;
};

LayoutResult draw_layout(const Inspection& in, const std::string& path) {
  const VldLayout& L = in.layout;
  LayoutPlan plan(L.cylinders, L.heads);
  Canvas canvas(plan.width, plan.height);
  const bool separate_columns = plan.cell_width_px >= 4, separate_rows = plan.row_height_px >= 6;
  const uint32_t paint_w = plan.cell_width_px - (separate_columns ? 1 : 0);
  const uint32_t paint_h = plan.row_height_px - (separate_rows ? 1 : 0);

  // The cells: mean live fraction of the column's tracks of that head.
  for (uint32_t col = 0; col < plan.columns; ++col) {
    const uint32_t c0 = col * plan.cylinders_per_column;
    const uint32_t c1 = std::min(c0 + plan.cylinders_per_column, L.cylinders);
    for (uint32_t h = 0; h < L.heads; ++h) {
      uint64_t live = 0, tracks = 0;
      bool all_empty = true, system = false;
      for (uint32_t c = c0; c < c1; ++c) {
        const uint32_t t = c * L.heads + h;
        if (in.vld() && t == 0) {
          system = true;
          continue;
        }
        live += in.live_sectors[t];
        ++tracks;
        all_empty = all_empty && in.used_sectors[t] == 0;
      }
      Rgb color = system ? kSystemTrack
                  : all_empty ? kEmptyTrack
                              : viridis(double(live) / double(tracks * L.spt));
      canvas.fill(plan.cell_x(col), plan.cell_y(h), paint_w, paint_h, color);
    }
  }
  // Cylinder ticks above the grid.
  for (uint64_t c = 0; c < L.cylinders; c += plan.tick_every_cylinders)
    canvas.fill(plan.cell_x(plan.column_of(static_cast<uint32_t>(c))), plan.grid_y - 6, 1, 5, kAxis);

  std::string caption;
  const std::string k = std::to_string(plan.cylinders_per_column);
  caption += "layout: " + path + ", " + std::to_string(plan.width) + "x" +
             std::to_string(plan.height) + " px. Across: cylinders 0.." +
             std::to_string(L.cylinders - 1) + ", ";
  if (plan.cylinders_per_column == 1)
    caption += "one column of " + std::to_string(plan.cell_width_px) + " px per cylinder";
  else
    caption += std::to_string(plan.columns) + " columns of " + k + " cylinders each (" +
               std::to_string(plan.cell_width_px) + " px per column; a cell is the mean of its " +
               k + " tracks)";
  caption += "; grey ticks above every " +
             (plan.tick_every_cylinders == 1 ? std::string("cylinder")
                                             : std::to_string(plan.tick_every_cylinders) + " cylinders") +
             ". Down: heads 0.." + std::to_string(L.heads - 1) + ", " +
             std::to_string(plan.row_height_px) + " px each. Colour: live data sectors / " +
             std::to_string(L.spt) +
             " sectors per track, viridis from dark purple (0%) to yellow (100%), as the "
             "legend bar below the grid (ticks at 0, 25, 50, 75, 100%). Light grey: empty track "
             "(no data, no map sectors" +
             (plan.cylinders_per_column > 1 ? ", every track of the cell" : std::string()) + ").";

  std::vector<std::pair<Rgb, bool>> swatches = {{kEmptyTrack, false}};  // (colour, frame only)
  if (in.vld()) {
    caption += " Black: the system track (log records).";
    swatches.push_back({kSystemTrack, false});
    const LogRecord& r = in.record();
    if (in.newest_slot) {
      // The record's window: a blue bar under the grid (wrapping).
      for (uint32_t i = 0; i < std::min(r.window_cylinders, L.cylinders); ++i) {
        const uint32_t c = (r.window_first + i) % L.cylinders;
        canvas.fill(plan.cell_x(plan.column_of(c)), plan.window_bar_y, plan.cell_width_px, 6, kWindowBar);
      }
      // The log tail, then the head (the head's marks drawn on top).
      if (r.has_root && r.root.psn < in.sectors) {
        const Chs t = in.chs(r.root.psn);
        const uint32_t col = plan.column_of(t.cylinder);
        canvas.frame(plan.cell_x(col) - 3, plan.cell_y(t.head) - 3, plan.cell_width_px + 6,
                     plan.row_height_px + 6, 3, kTailMark);
        canvas.triangle_down(plan.cell_x(col) + plan.cell_width_px / 2, 1, 7, kTailMark);
        canvas.triangle_right(2, plan.cell_y(t.head) + plan.row_height_px / 2, 7, kTailMark);
        caption += " Magenta frame and triangles: the log tail, the record's root map sector "
                   "(cylinder " + std::to_string(t.cylinder) + ", head " + std::to_string(t.head) + ").";
      }
      const uint32_t hc = std::min(r.head_cylinder, L.cylinders - 1), hh = std::min(r.head, L.heads - 1);
      const uint32_t col = plan.column_of(hc);
      canvas.frame(plan.cell_x(col), plan.cell_y(hh), plan.cell_width_px, plan.row_height_px, 3, kHeadMark);
      canvas.triangle_down(plan.cell_x(col) + plan.cell_width_px / 2, 12, 7, kHeadMark);
      canvas.triangle_right(12, plan.cell_y(hh) + plan.row_height_px / 2, 7, kHeadMark);
      caption += " Red frame and triangles: the head's last position (cylinder " +
                 std::to_string(r.head_cylinder) + ", head " + std::to_string(r.head) +
                 "). Blue bar under the grid: the record's window (cylinders " +
                 std::to_string(r.window_first) + ".." +
                 std::to_string((r.window_first + r.window_cylinders + L.cylinders - 1) % L.cylinders) + ").";
      swatches.push_back({kHeadMark, true});
      swatches.push_back({kTailMark, true});
      swatches.push_back({kWindowBar, false});
    }
  }

  // The legend: the colour bar with its ticks, then the swatches.
  const uint32_t y = plan.legend_y;
  for (uint32_t x = 0; x < LayoutPlan::kColorbarPx; ++x)
    canvas.fill(plan.grid_x + x, y, 1, LayoutPlan::kSwatchPx, viridis(x / double(LayoutPlan::kColorbarPx - 1)));
  for (int q = 0; q <= 4; ++q)
    canvas.fill(plan.grid_x + q * (LayoutPlan::kColorbarPx - 1) / 4, y + LayoutPlan::kSwatchPx, 1, 6, kSystemTrack);
  int64_t x = plan.grid_x + LayoutPlan::kColorbarPx + LayoutPlan::kGapPx;
  for (auto [color, frame_only] : swatches) {
    if (frame_only) {
      canvas.fill(x, y, LayoutPlan::kSwatchPx, LayoutPlan::kSwatchPx, viridis(0.5));
      canvas.frame(x + 2, y + 2, LayoutPlan::kSwatchPx - 4, LayoutPlan::kSwatchPx - 4, 2, color);
    } else {
      canvas.fill(x, y, LayoutPlan::kSwatchPx, LayoutPlan::kSwatchPx, color);
    }
    x += LayoutPlan::kSwatchPx + LayoutPlan::kGapPx;
  }
  caption += " Legend, left to right: the colour bar, then swatches for empty track";
  if (in.vld()) {
    caption += ", system track";
    if (in.newest_slot) caption += ", head, log tail, window";
  }
  caption += ".";

  write_png(path, canvas);
  return {plan, caption};
}

json layout_json(const LayoutResult& l, const std::string& path) {
  return {{"path", path},
          {"width_px", l.plan.width},
          {"height_px", l.plan.height},
          {"columns", l.plan.columns},
          {"cylinders_per_column", l.plan.cylinders_per_column},
          {"cell_width_px", l.plan.cell_width_px},
          {"row_height_px", l.plan.row_height_px},
          {"tick_every_cylinders", l.plan.tick_every_cylinders},
          {"caption", l.caption}};
}

// ---- main -------------------------------------------------------------------------

struct Args {
  std::string image;
  bool check = false;
  bool json = false;
  std::string layout;
};

int run(const Args& args) {
  OpenedImage img = open_read_only(args.image);
  if (!args.layout.empty()) {
    struct stat st;
    if (::stat(args.layout.c_str(), &st) == 0 && st.st_dev == img.st.st_dev &&
        st.st_ino == img.st.st_ino)
      fail("--layout " + args.layout + " is the image itself; give another path for the PNG");
  }
  Inspection in(img);
  if (in.vld())
    inspect_vld(in);
  else
    inspect_inplace(in);

  std::optional<Findings> findings;
  if (args.check) findings = check(in);
  std::optional<LayoutResult> layout;
  if (!args.layout.empty()) layout = draw_layout(in, args.layout);

  if (args.json) {
    json j = report_json(in);
    if (layout) j["layout"] = layout_json(*layout, args.layout);
    if (findings) j["check"] = check_json(*findings);
    std::cout << j.dump(2) << "\n";
  } else {
    if (findings)
      print_check(in, *findings, std::cout);
    else
      print_report(in, std::cout);
    if (layout) std::cout << layout->caption << "\n";
  }
  std::cout.flush();
  if (!std::cout) fail("cannot write the report to standard output");
  return findings && findings->error_count ? kExitUncorrected : kExitClean;
}

}  // namespace
}  // namespace vld

int main(int argc, char** argv) {
  using namespace vld;
  CLI::App app{"vld-inspect: what a vld image holds, and an offline consistency check (fsck). "
               "Reads only: the image is opened read-only and never modified.",
               "vld-inspect"};
  app.footer(
      "Exit status (as fsck): 0 no errors, 4 --check found errors (left uncorrected), "
      "8 operational error (cannot open, not a vld image, in use by a server, cannot write the "
      "PNG), 16 usage error.");
  Args args;
  app.add_option("IMAGE", args.image, "the vld image (the file= of nbdkit-vld-plugin)")
      ->required();
  app.add_flag("--check", args.check,
               "full consistency check: map sector MACs, mappings in range, no sector claimed "
               "twice, the free map, every data checksum");
  app.add_flag("--json", args.json, "print one JSON object on stdout instead of text");
  app.add_option("--layout", args.layout,
                 "write a PNG picture of the platters (tracks coloured by live data) to FILE")
      ->type_name("FILE.png");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::cerr << "vld-inspect: " << what << "; see vld-inspect --help\n";
    return kExitUsage;
  }
  try {
    return run(args);
  } catch (const Failure& f) {
    std::cerr << "vld-inspect: " << f.message << "\n";
  } catch (const std::exception& e) {
    std::cerr << "vld-inspect: " << args.image << ": " << e.what() << "\n";
  }
  return kExitOperational;
}
