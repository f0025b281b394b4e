// Damage to real images: bits flipped and sectors zeroed in the superblock,
// the log record slots, live map sectors and data blocks of images made by a
// VldDisk (closed cleanly, and taken without close: an unclean stop).
//
// Media damage is outside the crash model (docs/crash-contract.md), so the
// contract here is the one of issue "fuzzing and corruption": opening the
// damaged image either recovers exactly what was written, or refuses with
// an Error whose message names what is damaged, leaving the image byte for
// byte as it was; a data block whose checksum fails is an I/O error (EIO)
// naming the block, never garbage; other blocks read fine. Every case
// prints what happened, and the run ends with the whole table
// (docs/corruption.md sums it up, with the known gaps the tests pin).
//
// The images are tiny (the crash harness's geometry: 64 sectors x 4 heads,
// platters 4 KiB into the image) so each case copies and opens one in
// microseconds.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/vld/map_sector.h"
#include "core/vld/recovery.h"
#include "core/util/checksum.h"
#include "core/util/coding.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

using Bytes = std::vector<std::byte>;
constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExport = 512 * 1024;  // 128 blocks, 4 map pieces

Superblock small_superblock() {
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = kExport;
  o.block_bytes = kBlock;
  o.spare_percent = 25;
  o.geometry = test::small_st19101_geometry();
  Superblock sb = plan_image(o);
  sb.platter_offset = 4096;
  return sb;
}

Bytes block_data(uint64_t block, uint64_t version) {
  std::mt19937_64 rng(block * 1000003 + version);
  Bytes v(kBlock);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);  // never zero
  return v;
}

// A real image and what each of its blocks must read back.
struct Image {
  Superblock sb;
  Bytes bytes;
  std::vector<Bytes> expect;  // per block; all written, so none are zeros
  bool clean = false;
};

// Every block written (in runs of 1..4 blocks), then rounds of overwrites,
// so that the platters hold replaced map sectors and several records. Every
// write is flushed: all of it is durable. clean: closed; otherwise the bytes
// as they are before close (the unclean stop), with the last writes made
// after the last log record (candidates for recovery's window scan).
Image make_image(bool clean) {
  Image img;
  img.sb = small_superblock();
  img.clean = clean;
  MemoryBackingStore mem(img.sb.image_bytes());
  format_store(mem, img.sb);
  VldOptions opt;
  opt.window_cylinders = 2;
  opt.retired_limit = 8;
  VldDisk d(std::make_unique<ProxyStore>(mem), img.sb, opt);
  const uint64_t blocks = kExport / kBlock;
  img.expect.assign(blocks, Bytes(kBlock));
  SimTime now = kSimEpoch;
  std::mt19937_64 rng(7);
  uint64_t version = 1;
  auto write = [&](uint64_t b, uint64_t n) {
    Bytes data;
    for (uint64_t i = 0; i < n; ++i) {
      img.expect[b + i] = block_data(b + i, version);
      data.insert(data.end(), img.expect[b + i].begin(), img.expect[b + i].end());
    }
    ++version;
    now = d.write(b * kBlock, data, false, now).end;
  };
  for (uint64_t b = 0; b < blocks;) {
    uint64_t n = std::min<uint64_t>(blocks - b, 1 + rng() % 4);
    write(b, n);
    b += n;
  }
  now = d.flush(now).end;
  for (int i = 0; i < 60; ++i) {
    uint64_t b = rng() % blocks;
    write(b, std::min<uint64_t>(blocks - b, 1 + rng() % 2));
    if (i % 5 == 4) now = d.flush(now).end;
  }
  // End with at least three flushed writes after the last record.
  for (int since = 0; since < 3;) {
    const uint64_t records = d.vld_stats().records_written;
    uint64_t b = rng() % blocks;
    write(b, 1);
    now = d.flush(now).end;
    since = d.vld_stats().records_written == records ? since + 1 : 0;
  }
  now = d.flush(now).end;
  if (clean) d.close();
  img.bytes = mem.bytes();
  return img;
}

const Image& clean_image() {
  static const Image img = make_image(true);
  return img;
}
const Image& unclean_image() {
  static const Image img = make_image(false);
  return img;
}

// ---- where things are on an image ------------------------------------------

uint64_t sector_offset(const Superblock& sb, uint64_t psn) { return sb.platter_offset + psn * kSectorBytes; }

const unsigned char* at(const Bytes& b, uint64_t offset) {
  return reinterpret_cast<const unsigned char*>(b.data()) + offset;
}

struct Records {
  std::optional<LogRecord> slot[2];
  int newest() const {
    if (!slot[0]) return 1;
    if (!slot[1]) return 0;
    return slot[0]->generation > slot[1]->generation ? 0 : 1;
  }
};
Records records_of(const Image& img) {
  Records r;
  for (int s = 0; s < 2; ++s) r.slot[s] = decode_log_record(at(img.bytes, sector_offset(img.sb, s)), img.sb.secret);
  return r;
}

struct FoundSector {
  uint64_t psn;
  MapSector m;
};
// Every valid map sector on the platters.
std::vector<FoundSector> map_sectors_of(const Image& img) {
  std::vector<FoundSector> v;
  const uint64_t sectors = uint64_t{img.sb.simulated_cylinders} * img.sb.geometry.sectors_per_cylinder();
  for (uint64_t psn = img.sb.geometry.sectors_per_track; psn < sectors; ++psn)
    if (auto m = decode_map_sector(at(img.bytes, sector_offset(img.sb, psn)), img.sb.secret))
      v.push_back({psn, *m});
  return v;
}

// The live version of each piece in the tree of the newest record (the
// newest version reachable from its root: the walk's first meeting).
std::map<uint32_t, FoundSector> live_tree_of(const Image& img) {
  const Records r = records_of(img);
  const LogRecord& rec = *r.slot[r.newest()];
  std::map<uint64_t, FoundSector> by_seq;
  for (const FoundSector& f : map_sectors_of(img)) by_seq.emplace(f.m.seq, f);
  std::map<uint32_t, FoundSector> live;
  std::set<uint64_t> frontier{rec.root.seq};
  while (!frontier.empty()) {
    uint64_t seq = *frontier.rbegin();
    frontier.erase(seq);
    auto it = by_seq.find(seq);
    if (it == by_seq.end() || live.count(it->second.m.piece)) continue;
    live.emplace(it->second.m.piece, it->second);
    for (uint16_t i = 0; i < it->second.m.pointer_count; ++i)
      if (!live.count(it->second.m.pointers[i].piece)) frontier.insert(it->second.m.pointers[i].seq);
  }
  return live;
}

// The physical sector of a block, by the map of a disk opened on a copy.
uint64_t psn_of_block(const Image& img, uint64_t block) {
  MemoryBackingStore copy(img.bytes);
  VldDisk d(std::make_unique<ProxyStore>(copy), img.sb);
  EXPECT_TRUE(d.map()[block].mapped());
  return d.map()[block].psn();
}

// ---- damage ------------------------------------------------------------------

void flip_bit(Bytes& b, uint64_t offset, int bit = 0) { b[offset] ^= std::byte(1u << bit); }
void zero_range(Bytes& b, uint64_t offset, uint64_t len) {
  std::fill(b.begin() + offset, b.begin() + offset + len, std::byte{0});
}

// Whether `got` is what some earlier write put in block b (make_image's
// versions are below 1000), or zeros: the block as it was before its first
// write.
bool is_older_version(uint64_t b, const Bytes& got) {
  if (std::all_of(got.begin(), got.end(), [](std::byte x) { return x == std::byte{0}; })) return true;
  for (uint64_t v = 1; v < 1000; ++v)
    if (got == block_data(b, v)) return true;
  return false;
}

// ---- opening and what it gave -------------------------------------------------

struct Outcome {
  bool opened = false;
  std::string error;  // refused: the message
  int err = 0;
  bool untouched = false;  // refused: the image is byte-identical
  std::string method;      // opened: recovery method
  // wrong: neither its data nor EIO; older: of those, the ones that read
  // an older version of the same block (a durable write lost, not garbage).
  std::vector<uint64_t> exact, eio, wrong, older;
  std::string eio_message;  // the first EIO's message
  std::string consistency;

  std::string summary() const {
    char buf[512];
    if (!opened) {
      std::snprintf(buf, sizeof buf, "refused (%s%s): %s", err == EIO ? "EIO" : std::to_string(err).c_str(),
                    untouched ? ", image untouched" : ", IMAGE WRITTEN", error.c_str());
      return buf;
    }
    std::string s = "opened (" + method + "): " + std::to_string(exact.size()) + " blocks exact";
    if (!eio.empty()) {
      s += ", EIO on block";
      for (uint64_t b : eio) s += " " + std::to_string(b);
    }
    if (!older.empty())
      s += ", " + std::to_string(older.size()) + " blocks read an OLDER VERSION (lost writes)";
    if (wrong.size() > older.size())
      s += ", GARBAGE on " + std::to_string(wrong.size() - older.size()) + " blocks";
    return s;
  }
};

std::vector<std::string>& table() {
  static std::vector<std::string> t;
  return t;
}

// Opens the damaged bytes as the plugin does (read_superblock, then the
// disk: recovery) and reads every block back on its own.
Outcome open_damaged(const Image& img, const Bytes& damaged, const std::string& what) {
  Outcome o;
  MemoryBackingStore mem(damaged);
  std::unique_ptr<VldDisk> d;
  try {
    Superblock sb = read_superblock(mem, "damaged.img");
    d = std::make_unique<VldDisk>(std::make_unique<ProxyStore>(mem), sb);
    o.opened = true;
  } catch (const Error& e) {
    o.error = e.what();
    o.err = e.err();
    o.untouched = mem.bytes() == damaged;
  }
  if (o.opened) {
    o.method = d->recovery().method;
    o.consistency = d->check_consistency();
    for (uint64_t b = 0; b < img.expect.size(); ++b) {
      Bytes got(kBlock);
      try {
        d->read(b * kBlock, got, kSimEpoch);
        if (got == img.expect[b]) {
          o.exact.push_back(b);
        } else {
          o.wrong.push_back(b);
          if (is_older_version(b, got)) o.older.push_back(b);
        }
      } catch (const Error& e) {
        if (o.eio_message.empty()) o.eio_message = e.what();
        EXPECT_EQ(e.err(), EIO) << e.what();
        o.eio.push_back(b);
      }
    }
  }
  table().push_back("| " + what + " | " + o.summary() + " |");
  std::printf("  %s -> %s\n", what.c_str(), o.summary().c_str());
  return o;
}

void expect_exact(const Outcome& o) {
  EXPECT_TRUE(o.opened) << o.error;
  EXPECT_TRUE(o.wrong.empty()) << o.summary();
  EXPECT_TRUE(o.eio.empty()) << o.summary();
  EXPECT_EQ(o.consistency, "");
}

void expect_refused(const Outcome& o, const std::string& names) {
  ASSERT_FALSE(o.opened) << "opened: " << o.summary();
  EXPECT_TRUE(o.untouched) << "a refused open wrote to the image";
  EXPECT_NE(o.error.find(names), std::string::npos) << "message: " << o.error;
}

// Never garbage: whatever opened reads back exactly or fails with EIO.
void expect_no_wrong_data(const Outcome& o) {
  EXPECT_TRUE(o.wrong.empty()) << o.summary();
  if (o.opened) {
    EXPECT_EQ(o.consistency, "");
  }
}

// The weaker promise where recovery cannot know better (see the cases):
// every block reads its data, an older version of itself (a lost write,
// reported), or EIO; never another block's data, never garbage.
void expect_no_garbage(const Outcome& o) {
  EXPECT_EQ(o.wrong, o.older) << o.summary();
  if (o.opened) {
    EXPECT_EQ(o.consistency, "");
  }
}

class Corruption : public ::testing::TestWithParam<bool> {
 protected:
  const Image& img() const { return GetParam() ? clean_image() : unclean_image(); }
  std::string name(const std::string& what) const {
    return std::string(GetParam() ? "clean" : "unclean") + " image, " + what;
  }
};

// ---- the undamaged images ------------------------------------------------------

TEST_P(Corruption, UndamagedImageRecoversExactly) {
  Outcome o = open_damaged(img(), img().bytes, name("no damage"));
  expect_exact(o);
  EXPECT_EQ(o.method, GetParam() ? "clean-walk" : "record+window");
}

// ---- superblock ----------------------------------------------------------------

TEST_P(Corruption, SuperblockBitFlipsAreRefusedByTheChecksum) {
  const struct {
    const char* field;
    uint64_t offset;
  } fields[] = {{"magic", 3},          {"format version", 8}, {"mode", 12},
                {"export size", 17},   {"block size", 25},    {"cylinders", 33},
                {"sectors/track", 36}, {"secret", 150},       {"platter offset", 177},
                {"zero padding", 2000}, {"checksum", 4090}};
  for (const auto& f : fields) {
    Bytes b = img().bytes;
    flip_bit(b, f.offset, 3);
    Outcome o = open_damaged(img(), b, name(std::string("superblock: bit flipped in ") + f.field));
    if (std::string(f.field) == "magic")
      expect_refused(o, "damaged superblock (no VLDIMAGE magic, but a vld superblock's checksum");
    else
      expect_refused(o, "damaged superblock (checksum mismatch)");
    EXPECT_EQ(o.err, EIO);
  }
}

TEST_P(Corruption, ZeroedSuperblockIsRefused) {
  for (uint64_t len : {uint64_t{kSectorBytes}, kSuperblockBytes}) {
    Bytes b = img().bytes;
    zero_range(b, 0, len);
    Outcome o = open_damaged(img(), b, name("superblock: first " + std::to_string(len) + " bytes zeroed"));
    if (len == kSectorBytes) {
      // The magic is gone, but the checksum at its end shows what it was.
      expect_refused(o, "damaged superblock (no VLDIMAGE magic");
      EXPECT_EQ(o.err, EIO);
    } else {
      // Nothing left to tell it from a file that never was an image:
      // refused as such, untouched.
      expect_refused(o, "not an image of the vld plugin");
      EXPECT_EQ(o.err, EINVAL);
    }
  }
  // Only its last sector (padding and checksum) zeroed: the checksum fails.
  Bytes b = img().bytes;
  zero_range(b, kSuperblockBytes - kSectorBytes, kSectorBytes);
  expect_refused(open_damaged(img(), b, name("superblock: last sector zeroed")),
                 "damaged superblock (checksum mismatch)");
}

// A superblock whose checksum was recomputed (crafted, or damaged and
// "repaired" by hand) is checked field by field. Found by the fuzzer: a
// controller overhead of 7e18 ns overflowed simulated time (UBSan).
TEST_P(Corruption, ResealedSuperblockWithAbsurdFieldsIsRefused) {
  const struct {
    const char* what;
    uint64_t offset;
    uint64_t value;
    bool is64;
    const char* names;
  } cases[] = {
      {"controller overhead 7e18 ns", 72, 7277817002125788832ull, true, "overhead_us"},
      {"head switch 2^62 ns", 64, uint64_t{1} << 62, true, "head_switch_us"},
      {"seek slope 1e6 ms per cylinder", 104, 0x412e848000000000ull /* 1e6 */, true,
       "the longest seek"},
      {"seek term NaN", 88, 0x7ff8000000000000ull, true, "seek"},
      {"export larger than the platters", 16, uint64_t{1} << 40, true, "export size"},
      {"block size 3000", 24, 3000, false, "block size"},
      {"platter offset 100", 176, 100, true, "platter offset"},
      {"no simulated cylinders", 32, 0, false, "simulated cylinders"},
  };
  for (const auto& c : cases) {
    Bytes b = img().bytes;
    auto* p = reinterpret_cast<unsigned char*>(b.data());
    if (c.is64)
      encode_fixed64(p + c.offset, c.value);
    else
      encode_fixed32(p + c.offset, static_cast<uint32_t>(c.value));
    encode_fixed64(p + kSuperblockBytes - 8, checksum64(p, kSuperblockBytes - 8));
    Outcome o = open_damaged(img(), b, name(std::string("superblock resealed with ") + c.what));
    expect_refused(o, "invalid superblock");
    EXPECT_NE(o.error.find(c.names), std::string::npos) << o.error;
  }
}

// ---- log records ------------------------------------------------------------------

// Both slots hold a valid record on every image (VldDisk::format writes
// both), so a slot that does not is damaged, and the other may be the older
// record: writes since the newer one may lie outside its window, and may
// have reused sectors its tree points to. Recovery trusts neither and scans
// the whole disk for the newest map whose tree is whole (recovery.h), then
// writes two records, so the next open trusts the records again.
Bytes records_healed_after_open(const Image& img, const Bytes& damaged) {
  MemoryBackingStore mem(damaged);
  { VldDisk d(std::make_unique<ProxyStore>(mem), img.sb); }
  return mem.bytes();
}

TEST_P(Corruption, OneDamagedRecordSlotRecoversExactlyByAFullScan) {
  const Records r = records_of(img());
  ASSERT_TRUE(r.slot[0] && r.slot[1]) << "both slots written";
  const int newest = r.newest();
  for (int slot : {newest, 1 - newest}) {
    const std::string which = slot == newest ? "newest" : "older";
    for (bool zero : {false, true}) {
      Bytes b = img().bytes;
      if (zero)
        zero_range(b, sector_offset(img().sb, slot), kSectorBytes);
      else
        flip_bit(b, sector_offset(img().sb, slot) + 20, 1);  // durable_seq
      Outcome o = open_damaged(img(), b, name("log record, " + which + " slot " + (zero ? "zeroed" : "bit flipped")));
      expect_exact(o);
      EXPECT_EQ(o.method, "full-scan");
      const Records healed = records_of(Image{img().sb, records_healed_after_open(img(), b), {}, false});
      EXPECT_TRUE(healed.slot[0] && healed.slot[1]) << "a damaged slot was left damaged";
    }
  }
}

TEST_P(Corruption, BothRecordSlotsDamagedRecoverExactlyByAFullScan) {
  for (bool zero : {false, true}) {
    Bytes b = img().bytes;
    for (int slot = 0; slot < 2; ++slot) {
      if (zero)
        zero_range(b, sector_offset(img().sb, slot), kSectorBytes);
      else
        flip_bit(b, sector_offset(img().sb, slot) + 20, 1);
    }
    Outcome o = open_damaged(img(), b, name(std::string("both log record slots ") + (zero ? "zeroed" : "bit flipped")));
    expect_exact(o);
    EXPECT_EQ(o.method, "full-scan");
  }
}

// Both slots and a live map sector damaged: the newest tree is not whole.
// Older trees that still are (their map sectors not yet reused) hold older
// versions of some blocks; a flushed write that a later map sector vouches
// for (synced_back) must not be lost for them, so recovery refuses, naming
// the damage. Only the clean image's closing checkpoint, which changes no
// block, may be given up for the tree it replaced.
TEST_P(Corruption, BothRecordSlotsAndALiveMapSectorDamagedRecoverExactlyOrRefuse) {
  for (const auto& [piece, f] : live_tree_of(img())) {
    Bytes b = img().bytes;
    for (int slot = 0; slot < 2; ++slot) zero_range(b, sector_offset(img().sb, slot), kSectorBytes);
    zero_range(b, sector_offset(img().sb, f.psn), kSectorBytes);
    Outcome o = open_damaged(img(), b,
                             name("both log record slots and the live map sector of piece " +
                                  std::to_string(piece) + " zeroed"));
    if (o.opened) {
      expect_exact(o);
    } else {
      expect_refused(o, "both log record slots");
      EXPECT_NE(o.error.find("map sector of piece"), std::string::npos) << o.error;
    }
  }
}

// ---- map sectors ---------------------------------------------------------------------

// A live map sector of the newest record's tree, damaged: its piece's map
// is gone, and with it every piece reachable only through it. Recovery
// cannot rebuild it (the older versions of the piece may have been reused),
// so it must refuse, naming the damage, rather than serve the piece's blocks
// as zeros.
TEST_P(Corruption, DamagedLiveMapSectorIsRefusedNotReadAsZeros) {
  const auto live = live_tree_of(img());
  ASSERT_EQ(live.size(), kExport / kBlock / kEntriesPerPiece);
  const Records r = records_of(img());
  const uint64_t root_seq = r.slot[r.newest()]->root.seq;
  for (const auto& [piece, f] : live) {
    const bool is_root = f.m.seq == root_seq;
    for (bool zero : {false, true}) {
      Bytes b = img().bytes;
      if (zero)
        zero_range(b, sector_offset(img().sb, f.psn), kSectorBytes);
      else
        flip_bit(b, sector_offset(img().sb, f.psn) + kMapEntriesAt + 8 * 3, 0);  // entry 3's psn
      Outcome o = open_damaged(
          img(), b,
          name("live map sector of piece " + std::to_string(piece) + (is_root ? " (the root)" : "") +
               (zero ? " zeroed" : " bit flipped")));
      expect_refused(o, "image damaged: the map sector of piece " + std::to_string(piece) + " ");
      EXPECT_NE(o.error.find("at physical sector " + std::to_string(f.psn) + " "), std::string::npos)
          << o.error;
      EXPECT_EQ(o.err, EIO);
    }
  }
}

// Map sectors written after the newest record (an unclean image's window
// candidates). Recovery cannot tell a damaged one from one a crash never
// wrote, except where a later map sector vouches that it was flushed
// (synced_back): then it refuses, naming it. The image ends with flushed
// writes, each vouched for by the next; the newest is vouched for by none,
// so damage to it rolls its request back like a lost write (an older
// version is served, never garbage): the gap docs/corruption.md states.
struct Candidates {
  uint64_t durable = 0;
  std::vector<FoundSector> sorted;  // by seq
};
Candidates candidates_of(const Image& img) {
  Candidates c;
  const Records r = records_of(img);
  c.durable = r.slot[r.newest()]->durable_seq;
  for (const FoundSector& f : map_sectors_of(img))
    if (f.m.seq > c.durable) c.sorted.push_back(f);
  std::sort(c.sorted.begin(), c.sorted.end(), [](auto& a, auto& b) { return a.m.seq < b.m.seq; });
  return c;
}

TEST(Corruption, DamagedFlushedCandidateMapSectorIsRefused) {
  const Image& img = unclean_image();
  const Candidates c = candidates_of(img);
  ASSERT_GE(c.sorted.size(), 2u) << "the unclean image has too few writes after its last record";
  for (const FoundSector& f : c.sorted) {
    if (f.m.seq == c.sorted.back().m.seq) continue;  // the newest: below
    Bytes b = img.bytes;
    flip_bit(b, sector_offset(img.sb, f.psn) + 100, 4);
    Outcome o = open_damaged(img, b,
                             "unclean image, flushed map sector written after the record (seq " +
                                 std::to_string(f.m.seq - c.durable) + " of " +
                                 std::to_string(c.sorted.back().m.seq - c.durable) +
                                 ") bit flipped");
    expect_refused(o, "says seq");
    EXPECT_NE(o.error.find("no map sector with seq " + std::to_string(f.m.seq)), std::string::npos)
        << o.error;
    EXPECT_EQ(o.err, EIO);
  }
}

TEST(Corruption, DamagedNewestCandidateMapSectorRollsBackToTheOlderVersion) {
  const Image& img = unclean_image();
  const Candidates c = candidates_of(img);
  ASSERT_FALSE(c.sorted.empty());
  Bytes b = img.bytes;
  flip_bit(b, sector_offset(img.sb, c.sorted.back().psn) + 100, 4);
  Outcome o = open_damaged(img, b, "unclean image, newest map sector (vouched for by none) bit flipped");
  ASSERT_TRUE(o.opened) << o.error;
  EXPECT_TRUE(o.eio.empty()) << o.summary();
  expect_no_garbage(o);
  EXPECT_FALSE(o.older.empty()) << "the damaged request was kept?";
}

// ---- data blocks -------------------------------------------------------------------------

// The data block of a flushed request written after the newest record,
// damaged: a later map sector vouches the request was flushed, so recovery
// refuses, naming the block. The newest request's data, vouched for by
// none, is rolled back with its request, as for its map sector.
TEST(Corruption, DamagedDataOfARequestAfterTheRecordIsRefusedOrRolledBack) {
  const Image& img = unclean_image();
  const Candidates c = candidates_of(img);
  int refused = 0, rolled_back = 0;
  for (const FoundSector& f : c.sorted) {
    for (uint32_t e = 0; e < kEntriesPerPiece; ++e) {
      if (!(f.m.changed >> e & 1) || !f.m.entries[e].mapped()) continue;
      const uint64_t block = uint64_t{f.m.piece} * kEntriesPerPiece + e;
      Bytes b = img.bytes;
      flip_bit(b, sector_offset(img.sb, f.m.entries[e].psn()) + 7, 2);
      const bool newest = f.m.group_seq == c.sorted.back().m.group_seq;
      Outcome o = open_damaged(img, b,
                               "unclean image, data block " + std::to_string(block) +
                                   " of a request after the record" +
                                   (newest ? " (the newest)" : "") + ", bit flipped");
      if (newest) {
        ASSERT_TRUE(o.opened) << o.error;
        EXPECT_TRUE(o.eio.empty()) << o.summary();
        expect_no_garbage(o);
        EXPECT_NE(std::find(o.older.begin(), o.older.end(), block), o.older.end()) << o.summary();
        ++rolled_back;
      } else {
        expect_refused(o, fmt::format("data block {} at physical sector {} fails its checksum",
                                      block, f.m.entries[e].psn()));
        ++refused;
      }
    }
  }
  EXPECT_GE(refused, 1);
  EXPECT_GE(rolled_back, 1);
}

TEST_P(Corruption, DamagedDataBlockIsAnIoErrorNamingTheBlock) {
  const uint64_t blocks = kExport / kBlock;
  for (uint64_t blk : {uint64_t{0}, blocks / 2 + 3, blocks - 1}) {
    const uint64_t psn = psn_of_block(img(), blk);
    for (bool zero : {false, true}) {
      Bytes b = img().bytes;
      // The block's sectors may wrap within their track; its first sector
      // is enough.
      if (zero)
        zero_range(b, sector_offset(img().sb, psn), kSectorBytes);
      else
        flip_bit(b, sector_offset(img().sb, psn) + 123, 6);
      Outcome o = open_damaged(img(), b,
                               name("data block " + std::to_string(blk) + (zero ? " first sector zeroed" : " bit flipped")));
      if (!GetParam() && !o.opened) {
        // Unclean, and the block was written by a flushed request after the
        // record: refused, as above.
        expect_refused(o, "data block " + std::to_string(blk) + " ");
        continue;
      }
      ASSERT_TRUE(o.opened) << o.error;
      if (!GetParam() && o.eio.empty()) {
        // Unclean, and the block was written by the newest request, which
        // nothing vouches for: rolled back (an older version is served).
        expect_no_garbage(o);
        continue;
      }
      expect_no_wrong_data(o);
      EXPECT_EQ(o.eio, std::vector<uint64_t>{blk});
      EXPECT_EQ(o.exact.size(), blocks - 1);
      EXPECT_NE(o.eio_message.find("data block " + std::to_string(blk) + " "), std::string::npos)
          << o.eio_message;
      EXPECT_NE(o.eio_message.find("checksum"), std::string::npos) << o.eio_message;

      // A read that spans it fails whole (no partial buffer is served); a
      // partial write into it needs its old bytes and fails; a whole-block
      // write replaces it and the block reads back again.
      MemoryBackingStore mem(b);
      VldDisk d(std::make_unique<ProxyStore>(mem), img().sb);
      Bytes span(3 * kBlock);
      const uint64_t from = std::min(blk == 0 ? 0 : blk - 1, blocks - 3);  // in range
      EXPECT_THROW(d.read(from * kBlock, span, kSimEpoch), Error);
      Bytes part(100, std::byte{7});
      try {
        d.write(blk * kBlock + 10, part, false, kSimEpoch);
        ADD_FAILURE() << "a partial write into a damaged block succeeded";
      } catch (const Error& e) {
        EXPECT_EQ(e.err(), EIO);
      }
      const Bytes fresh = block_data(blk, 999);
      d.write(blk * kBlock, fresh, true, kSimEpoch);
      Bytes got(kBlock);
      d.read(blk * kBlock, got, kSimEpoch);
      EXPECT_EQ(got, fresh);
      EXPECT_GE(d.vld_stats().checksum_failures, 2u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Images, Corruption, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Clean" : "Unclean"; });

// The whole table, once, for docs and the report.
class TablePrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    if (table().empty()) return;
    std::printf("\ncorruption outcomes:\n| damage | outcome |\n|---|---|\n");
    for (const std::string& row : table()) std::printf("%s\n", row.c_str());
  }
};
const auto* const kTablePrinter = ::testing::AddGlobalTestEnvironment(new TablePrinter);

}  // namespace
}  // namespace vld
