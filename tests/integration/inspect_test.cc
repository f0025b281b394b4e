// vld-inspect (tools/inspect/) on images the real plugin wrote under
// nbdkit:
//   - the report (--json) says what was written: mode, clean or not (a clean
//     stop, a kill -9), live blocks, the log since the record;
//   - --check exits 0 on a good image, clean or unclean; 4 on a flipped byte
//     in a data block (naming the block) and on a damaged map sector (the log
//     tail, or a sector below it); 8 on a missing file, a file that is not an
//     image, a truncated image, and an image a running server holds (locked);
//     16 on a usage error; every refusal is one line on stderr;
//   - --json's "layout" section has the title, axes, scale and a legend
//     entry for every class a cell shows, counts adding up to the cells and
//     the sectors, at 16 MiB (a column per cylinder) and 9 GiB (cylinders
//     aggregated), in every mode; --layout writes a PNG (through vld-plot)
//     and, off a terminal, no progress on stderr; on a pseudo-terminal,
//     percentages and an erased line;
//   - mode=inplace images report what applies; mode=lld images are read
//     through the disk recovered in memory (report, check, picture);
//   - the image is byte-identical after every invocation.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/util/checksum.h"
#include "geometry/presets.h"
#include "tests/integration/nbdkit_harness.h"

extern char** environ;

namespace vld::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr uint64_t kBlk = 4096;

using InspectRun = ProgramRun;

// Runs vld-inspect with args, stdout and stderr to files (not a terminal:
// no progress bar).
InspectRun inspect(const TempDir& dir, const std::vector<std::string>& args) {
  return run_program(dir, VLD_INSPECT_PATH, args);
}

json inspect_json(const TempDir& dir, std::vector<std::string> args, int want_exit = 0) {
  args.insert(args.begin(), "--json");
  InspectRun r = inspect(dir, args);
  EXPECT_EQ(r.exit_code, want_exit) << r.err;
  return json::parse(r.out);  // exactly one object, or this throws
}

// The file's bytes, fingerprinted without reading its holes (a 9 GiB image
// is mostly hole): data ranges, their offsets and contents.
std::string fingerprint(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd == -1) return "missing";
  struct stat st;
  ::fstat(fd, &st);
  uint64_t h = static_cast<uint64_t>(st.st_size);
  std::vector<char> buf(1 << 20);
  off_t pos = 0;
  while (pos < st.st_size) {
    off_t data = ::lseek(fd, pos, SEEK_DATA);
    if (data == -1) break;  // ENXIO: no data after pos
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    for (off_t o = data; o < hole;) {
      ssize_t n = ::pread(fd, buf.data(), std::min<off_t>(buf.size(), hole - o), o);
      if (n <= 0) break;
      h = checksum64(buf.data(), static_cast<size_t>(n), h ^ static_cast<uint64_t>(o));
      o += n;
    }
    pos = hole;
  }
  ::close(fd);
  return std::to_string(st.st_size) + ":" + std::to_string(h);
}

// Runs vld-inspect and expects the image untouched by it.
InspectRun inspect_unchanged(const TempDir& dir, const std::string& image, const std::vector<std::string>& args) {
  const std::string before = fingerprint(image);
  InspectRun r = inspect(dir, args);
  EXPECT_EQ(fingerprint(image), before) << "vld-inspect changed " << image;
  return r;
}

bool one_line(const std::string& s) {
  return !s.empty() && s.back() == '\n' && std::count(s.begin(), s.end(), '\n') == 1;
}

enum class Stop { kClean, kKill9 };

// A new image: the blocks written (4 KiB each, pattern_bytes with seed 7),
// flushed, then the server stopped cleanly or killed.
void make_image(const TempDir& dir, const std::string& image, const std::string& size,
                const std::vector<uint64_t>& blocks, Stop stop, const std::string& mode = "vld") {
  NbdkitServer server(dir, {"file=" + image, "size=" + size, "mode=" + mode, "latency=none"});
  {
    NbdHandle h = server.connect();
    for (uint64_t b : blocks) write_bytes(h.get(), b * kBlk, pattern_bytes(b * kBlk, kBlk, 7));
    check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
    if (stop == Stop::kClean) nbd_shutdown(h.get(), 0);
  }
  if (stop == Stop::kClean)
    ASSERT_EQ(server.stop(), 0);
  else
    server.kill9();
}

// 150 distinct blocks over several map pieces, 10 of them written twice.
std::vector<uint64_t> some_blocks() {
  std::vector<uint64_t> v;
  for (uint64_t b = 0; b < 100; ++b) v.push_back(b);
  for (uint64_t b = 1000; b < 1050; ++b) v.push_back(b);
  for (uint64_t b = 0; b < 10; ++b) v.push_back(b);
  return v;
}
constexpr uint64_t kDistinct = 150;

void flip_byte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
  ASSERT_TRUE(f.good()) << "could not damage " << path;
}

uint32_t be32(const std::string& s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

// A PNG (drawn by vld-plot), and the layout section names it.
void expect_png(const std::string& path, const json& layout) {
  const std::string png = slurp(path);
  ASSERT_GE(png.size(), 33u) << path;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(be32(png, 8), 13u);  // IHDR length
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_GE(be32(png, 16), 600u);  // a picture with room for its text
  EXPECT_EQ(png.substr(png.size() - 8, 4), "IEND");
  EXPECT_EQ(layout["path"], path);
}

// The names of the legend's entries that colour at least one cell.
std::set<std::string> drawn_classes(const json& layout) {
  std::set<std::string> names;
  for (const json& e : layout["legend"])
    if (e["cells"].get<uint64_t>() > 0) names.insert(e["name"].get<std::string>());
  return names;
}

// The --json "layout" section of report j: title, axes with units, scale,
// a legend entry for every class a cell has, whose counts add up to the
// cells and to the platters' sectors.
void expect_layout_section(const json& j) {
  const json& l = j["layout"];
  ASSERT_TRUE(l.is_object()) << j.dump(1).substr(0, 2000);
  EXPECT_EQ(l["schema"], "vld-inspect layout 1");
  EXPECT_EQ(l["title"]["mode"], j["mode"]);
  EXPECT_EQ(l["title"]["drive"], j["geometry"]["name"]);
  EXPECT_EQ(l["title"]["image"], j["image"]);
  EXPECT_DOUBLE_EQ(l["title"]["utilization"].get<double>(), j["utilization"].get<double>());
  EXPECT_NE(l["title"]["text"].get<std::string>().find("utilization"), std::string::npos);
  EXPECT_EQ(l["axes"]["x"]["unit"], "cylinder");
  EXPECT_EQ(l["axes"]["x"]["max"], j["geometry"]["simulated_cylinders"]);
  EXPECT_EQ(l["axes"]["y"]["unit"], "head");
  EXPECT_EQ(l["axes"]["y"]["heads"], j["geometry"]["tracks_per_cylinder"]);
  EXPECT_NE(l["scale"]["text"].get<std::string>().find("1 column = "), std::string::npos);
  const json& g = l["grid"];
  const uint64_t rows = g["rows"], columns = g["columns"];
  EXPECT_EQ(rows, l["axes"]["y"]["heads"].get<uint64_t>() * l["axes"]["y"]["bands_per_head"].get<uint64_t>());
  EXPECT_LE(columns, 1000u);
  ASSERT_EQ(g["class"].size(), rows);
  ASSERT_EQ(g["percent"].size(), rows);
  std::map<uint64_t, uint64_t> cells_of;
  for (uint64_t r = 0; r < rows; ++r) {
    ASSERT_EQ(g["class"][r].size(), columns);
    for (uint64_t c = 0; c < columns; ++c) {
      ++cells_of[g["class"][r][c].get<uint64_t>()];
      EXPECT_LE(g["percent"][r][c].get<uint64_t>(), 100u);
    }
  }
  uint64_t cells = 0, sectors = 0;
  for (uint64_t k = 0; k < l["legend"].size(); ++k) {
    const json& e = l["legend"][k];
    EXPECT_EQ(e["index"], k);
    EXPECT_FALSE(e["name"].get<std::string>().empty());
    EXPECT_EQ(e["colour"].get<std::string>().size(), 7u) << e;
    EXPECT_EQ(e["cells"].get<uint64_t>(), cells_of[k]) << e;
    cells += e["cells"].get<uint64_t>();
    sectors += e["sectors"].get<uint64_t>();
  }
  EXPECT_EQ(cells_of.rbegin()->first < l["legend"].size(), true) << "a cell's class has no entry";
  EXPECT_EQ(cells, rows * columns);
  EXPECT_EQ(sectors, j["tracks"].get<uint64_t>() * j["geometry"]["sectors_per_track"].get<uint64_t>());
}

TEST(Inspect, ReportsACleanImage) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean);
  const std::string before = fingerprint(image);
  json j = inspect_json(dir, {image});
  EXPECT_EQ(j["mode"], "vld");
  EXPECT_EQ(j["clean"], true);
  EXPECT_EQ(j["export_bytes"], 16u << 20);
  EXPECT_EQ(j["live_blocks"], kDistinct);
  EXPECT_EQ(j["map"]["mapped_blocks"], kDistinct);
  EXPECT_GE(j["map"]["live_pieces"].get<uint64_t>(), 5u);  // blocks 0..99 and 1000..1049
  EXPECT_DOUBLE_EQ(j["utilization"].get<double>(),
                   double(kDistinct) / j["physical_blocks"].get<double>());
  EXPECT_EQ(j["record"]["clean"], true);
  EXPECT_FALSE(j["record"]["root"].is_null());
  EXPECT_GT(j["record"]["next_seq"].get<uint64_t>(), j["record"]["durable_seq"].get<uint64_t>());
  EXPECT_EQ(j["log_since_record"]["map_sectors"], 0u);
  EXPECT_EQ(j["recovery"]["method"], "clean-walk");
  EXPECT_EQ(j["recovery"]["map_sectors_walked"], j["map"]["live_pieces"]);
  EXPECT_GT(j["empty_tracks"].get<uint64_t>(), 0u);
  EXPECT_EQ(fingerprint(image), before);

  InspectRun text = inspect_unchanged(dir, image, {image});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("state        clean"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("150 live blocks"), std::string::npos) << text.out;
  EXPECT_EQ(text.err, "");
}

TEST(Inspect, ReportsAndChecksAnUncleanImage) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kKill9);
  const std::string before = fingerprint(image);
  json j = inspect_json(dir, {image});
  EXPECT_EQ(j["clean"], false);
  EXPECT_EQ(j["record"]["clean"], false);
  EXPECT_EQ(j["live_blocks"], kDistinct);  // every write was flushed
  EXPECT_EQ(j["recovery"]["method"], "record+window");
  EXPECT_GT(j["log_since_record"]["map_sectors"].get<uint64_t>(), 0u);
  EXPECT_GT(j["log_since_record"]["groups_accepted"].get<uint64_t>(), 0u);
  // Every request since the record is whole (kill -9 keeps them all): they
  // extend the record's tree, and opening would write just a record.
  EXPECT_EQ(j["recovery"]["needs_checkpoint"], false);

  json c = inspect_json(dir, {"--check", image});
  EXPECT_EQ(c["check"]["status"], "clean") << c["check"].dump(2);
  EXPECT_EQ(c["check"]["blocks_checked"], kDistinct);
  EXPECT_EQ(c["check"]["free_map_agrees"], true);
  EXPECT_EQ(fingerprint(image), before);
}

TEST(Inspect, CheckPassesOnAGoodImage) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean);
  InspectRun r = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(image + ": clean, 150 data blocks"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ERROR"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");  // no progress bar: stderr is not a terminal

  json j = inspect_json(dir, {"--check", image});
  EXPECT_EQ(j["check"]["error_count"], 0u);
  EXPECT_EQ(j["check"]["exit_code"], 0);
  EXPECT_EQ(j["check"]["blocks_checked"], kDistinct);
  EXPECT_EQ(j["check"]["map_sectors_checked"], j["map"]["live_pieces"]);
  EXPECT_EQ(j["check"]["free_map_agrees"], true);
}

TEST(Inspect, CheckNamesAFlippedByteInADataBlock) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean);
  // Block 77 was written once: its bytes are on the platters exactly once.
  const std::vector<uint8_t> want = pattern_bytes(77 * kBlk, kBlk, 7);
  const std::string bytes = slurp(image);
  const std::string needle(want.begin(), want.begin() + 64);
  const size_t at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(bytes.find(needle, at + 1), std::string::npos) << "block 77 is on the platters twice";
  flip_byte(image, at + 2000);

  InspectRun r = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("logical block 77 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 error left uncorrected"), std::string::npos) << r.out;

  json j = inspect_json(dir, {"--check", image}, 4);
  ASSERT_EQ(j["check"]["error_count"], 1u) << j["check"].dump(2);
  EXPECT_EQ(j["check"]["errors"][0]["kind"], "data_checksum");
  EXPECT_EQ(j["check"]["errors"][0]["block"], 77u);
  EXPECT_EQ(j["check"]["checksum_mismatches"], 1u);

  // The report alone does not read data blocks: it succeeds.
  EXPECT_EQ(inspect_unchanged(dir, image, {image}).exit_code, 0);
}

TEST(Inspect, CheckFindsADamagedMapSector) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean);
  json j = inspect_json(dir, {image});
  const uint64_t platter = j["platter_offset"];
  const uint64_t root = j["record"]["root"]["psn"];
  // The log tail's first pointer (map_sector.h: pointer_count at 36, the
  // pointers from 304, psn first), to damage a sector below the tail.
  const std::string bytes = slurp(image);
  const std::string tail = bytes.substr(platter + root * 512, 512);
  ASSERT_EQ(tail.substr(0, 4), "VLMS");
  ASSERT_GE(uint8_t(tail[36]), 1) << "the log tail has no children";
  uint32_t child = 0;
  std::memcpy(&child, tail.data() + 304, 4);  // little-endian, as this host

  for (uint64_t psn : {root, uint64_t{child}}) {
    SCOPED_TRACE("damaged map sector at psn " + std::to_string(psn));
    const std::string copy = dir.file("damaged-" + std::to_string(psn) + ".img");
    fs::copy_file(image, copy);
    flip_byte(copy, platter + psn * 512 + 100);  // inside the entries
    InspectRun r = inspect_unchanged(dir, copy, {"--check", copy});
    EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
    EXPECT_NE(r.out.find("at psn " + std::to_string(psn)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fails its MAC"), std::string::npos) << r.out;
    json c = inspect_json(dir, {"--check", copy}, 4);
    bool named = false;
    for (const json& e : c["check"]["errors"])
      named = named || (e["kind"] == "map_sector" && e.value("psn", uint64_t{0}) == psn);
    EXPECT_TRUE(named) << c["check"].dump(2);
  }
}

// A damaged log record slot: --check names it (exit 4) and reports the
// full scan recovery would do; serving the image recovers every block by
// that scan and rewrites both slots, after which --check is clean.
TEST(Inspect, CheckNamesADamagedRecordSlotThatServingRepairs) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kKill9);
  json j = inspect_json(dir, {image});
  const uint64_t platter = j["platter_offset"];
  const uint64_t slot = j["record"]["slot"];  // the newest
  flip_byte(image, platter + slot * 512 + 20);  // its durable_seq

  InspectRun r = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("log record slot " + std::to_string(slot) + " (physical sector"),
            std::string::npos)
      << r.out;
  json c = inspect_json(dir, {image}, 0);
  EXPECT_EQ(c["recovery"]["method"], "full-scan");

  {
    NbdkitServer server(dir, {"file=" + image, "latency=none"});
    NbdHandle h = server.connect();
    for (uint64_t b : some_blocks())
      EXPECT_EQ(read_bytes(h.get(), b * kBlk, kBlk), pattern_bytes(b * kBlk, kBlk, 7)) << "block " << b;
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
    EXPECT_NE(server.stderr_text().find("image damaged: log record slot " + std::to_string(slot) +
                                        " (physical sector " + std::to_string(slot) +
                                        ") fails its MAC check; recovered by scanning the whole disk"),
              std::string::npos)
        << server.stderr_text();
  }
  InspectRun after = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
}

// An image made before vld refused spares too small for every block to be
// written (here made through core/, as the plugin no longer would): the
// report and --check say so, and --check still passes (nothing is damaged).
TEST(Inspect, SaysWhenNotEveryBlockIsSureToBeWritable) {
  TempDir dir;
  const std::string image = dir.file("tight.img");
  FormatOptions o;
  o.mode = DiskMode::kVld;
  o.export_bytes = 64ull << 20;
  o.geometry = *find_preset("hp97560");
  o.spare_percent = 5;
  create_image(image, plan_image_unchecked(o));  // as before the rule
  json j = inspect_json(dir, {image});
  EXPECT_EQ(j["every_block_writable"], false);
  EXPECT_LT(j["block_capacity"].get<uint64_t>(), j["logical_blocks"].get<uint64_t>());
  InspectRun r = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("spare=5 is too small"), std::string::npos) << r.out;

  const std::string roomy = dir.file("roomy.img");
  o.spare_percent = 25;
  create_image(roomy, plan_image(o));
  EXPECT_EQ(inspect_json(dir, {roomy})["every_block_writable"], true);
}

TEST(Inspect, RefusesWhatIsNotAnImage) {
  TempDir dir;
  auto refused = [&](const std::vector<std::string>& args, int code, const std::string& says) {
    SCOPED_TRACE(args.back());
    InspectRun r = inspect(dir, args);
    EXPECT_EQ(r.exit_code, code) << r.out << r.err;
    EXPECT_TRUE(one_line(r.err)) << "not one line: " << r.err;
    EXPECT_EQ(r.err.rfind("vld-inspect: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  };
  refused({dir.file("missing.img")}, 8, "no such file");
  refused({"--check", dir.file("missing.img")}, 8, "no such file");
  refused({dir.path()}, 8, "is a directory");

  const std::string text = dir.file("notes.txt");
  std::ofstream(text) << std::string(100000, 'x');
  const std::string text_before = fingerprint(text);
  refused({"--check", text}, 8, "is not an image of the vld plugin");
  EXPECT_EQ(fingerprint(text), text_before);
  const std::string empty = dir.file("empty.img");
  std::ofstream(empty).close();
  refused({empty}, 8, "too small for a superblock");

  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", {1, 2, 3}, Stop::kClean);
  const std::string image_before = fingerprint(image);
  const std::string truncated = dir.file("truncated.img");
  fs::copy_file(image, truncated);
  fs::resize_file(truncated, 2 << 20);
  refused({"--check", truncated}, 8, "is truncated");
  const std::string bad_sb = dir.file("bad-superblock.img");
  fs::copy_file(image, bad_sb);
  flip_byte(bad_sb, 20);
  refused({bad_sb}, 8, "superblock is damaged");

  refused({"--layout", image, image}, 8, "is the image itself");
  refused({"--layout", dir.file("no/such/dir/x.png"), image}, 8, "cannot create it");
  EXPECT_EQ(fingerprint(image), image_before);

  refused({"--frobnicate", image}, 16, "--help");
  InspectRun none = inspect(dir, {});
  EXPECT_EQ(none.exit_code, 16);
  EXPECT_TRUE(one_line(none.err)) << none.err;
}

// mode=lld: the report, --check and --layout come from the disk recovered in
// memory. nvram=0 and one flush put the blocks in two segment writes
// (127 entries, then the rest), so block 50's place is known: the first
// segment, after a five-sector summary, 50 blocks in.
TEST(Inspect, ReportsChecksAndDrawsAnLldImage) {
  TempDir dir;
  const std::string image = dir.file("lld.img");
  {
    NbdkitServer server(dir, {"file=" + image, "size=16M", "mode=lld", "nvram=0", "latency=none"});
    NbdHandle h = server.connect();
    for (uint64_t b : some_blocks()) write_bytes(h.get(), b * kBlk, pattern_bytes(b * kBlk, kBlk, 7));
    check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0);
  }
  const std::string png = dir.file("lld.png");
  json j = inspect_json(dir, {"--layout", png, image});
  EXPECT_EQ(j["mode"], "lld");
  EXPECT_EQ(j["live_blocks"], kDistinct);
  EXPECT_EQ(j["lld"]["recovery"]["clean"], true);
  EXPECT_EQ(j["lld"]["consistent"], true);
  expect_layout_section(j);
  const std::set<std::string> drawn = drawn_classes(j["layout"]);
  for (const char* name : {"live data", "checkpoint slot", "free segment"})
    EXPECT_EQ(drawn.count(name), 1u) << name << " in " << j["layout"]["legend"].dump(1);
  expect_png(png, j["layout"]);
  json c = inspect_json(dir, {"--check", image});
  EXPECT_EQ(c["check"]["status"], "clean") << c["check"].dump(2);
  EXPECT_EQ(c["check"]["blocks_checked"], kDistinct);

  const uint64_t segments_first_psn = j["lld"]["system_tracks"].get<uint64_t>() * 256;
  flip_byte(image, (1u << 20) + (segments_first_psn + 5 + 50 * 8) * 512 + 100);
  InspectRun r = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("block 50 fails its checksum"), std::string::npos) << r.out;
}

// With NVRAM, writes acknowledged but never flushed are in the NVRAM region
// after a kill -9: the report says the open replays them, and they check.
TEST(Inspect, ReportsAnLldImageKilledWithWritesInNvram) {
  TempDir dir;
  const std::string image = dir.file("lld.img");
  {
    NbdkitServer server(dir, {"file=" + image, "size=16M", "mode=lld", "latency=none"});
    NbdHandle h = server.connect();
    for (uint64_t b : some_blocks()) write_bytes(h.get(), b * kBlk, pattern_bytes(b * kBlk, kBlk, 7));
    server.kill9();
  }
  json j = inspect_json(dir, {image});
  EXPECT_EQ(j["lld"]["recovery"]["clean"], false);
  EXPECT_EQ(j["lld"]["recovery"]["nvram_records_replayed"], kDistinct + 10);
  EXPECT_EQ(j["live_blocks"], kDistinct);  // the open drains the replay (in memory)
  json c = inspect_json(dir, {"--check", image});
  EXPECT_EQ(c["check"]["status"], "clean") << c["check"].dump(2);
}

// A damaged NVRAM record that later requests vouch for: --check names the
// record, and a server refuses the image, both leaving it as it was.
TEST(Inspect, CheckNamesADamagedNvramRecord) {
  TempDir dir;
  const std::string image = dir.file("lld.img");
  {
    NbdkitServer server(dir, {"file=" + image, "size=16M", "mode=lld", "latency=none"});
    NbdHandle h = server.connect();
    for (uint64_t b : some_blocks()) write_bytes(h.get(), b * kBlk, pattern_bytes(b * kBlk, kBlk, 7));
    server.kill9();
  }
  // Block 77 was written once, and is only in the NVRAM region: a byte of
  // its record's data flipped.
  const std::vector<uint8_t> want = pattern_bytes(77 * kBlk, kBlk, 7);
  const std::string bytes = slurp(image);
  const size_t at = bytes.find(std::string(want.begin(), want.begin() + 64));
  ASSERT_NE(at, std::string::npos);
  flip_byte(image, at + 100);

  InspectRun r = inspect_unchanged(dir, image, {"--check", image});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("NVRAM region is damaged: record seq "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(block 77, "), std::string::npos) << r.out;
  const std::string before = file_fingerprint(image);
  const RunResult served = run_nbdkit({"file=" + image, "latency=none"});
  EXPECT_NE(served.exit_code, 0);
  EXPECT_NE(served.stderr_text.find("record seq "), std::string::npos) << served.stderr_text;
  EXPECT_EQ(file_fingerprint(image), before) << "a refused image was written";
}

TEST(Inspect, RefusesAnImageInUse) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  NbdkitServer server(dir, {"file=" + image, "size=16M", "latency=none"});
  for (const char* check : {"", "--check"}) {
    std::vector<std::string> args = {image};
    if (*check) args.insert(args.begin(), check);
    InspectRun r = inspect(dir, args);
    EXPECT_EQ(r.exit_code, 8) << r.out << r.err;
    EXPECT_EQ(r.err, "vld-inspect: " + image +
                         " is in use by a running server (locked); stop it first\n");
    EXPECT_EQ(r.out, "");
  }
  ASSERT_EQ(server.stop(), 0);
  EXPECT_EQ(inspect_unchanged(dir, image, {"--check", image}).exit_code, 0);
}

// The report without the one thing in it that is not a function of the
// image: the host's time to walk the map ("6.4 ms simulated (0.1 ms here)").
std::string without_host_time(const std::string& report) {
  return std::regex_replace(report, std::regex(R"(\([0-9.]+ ms here\))"), "(- ms here)");
}

// A server opens an existing image read-only until its first writable
// connection, and writes nothing before it (crash contract clause 9): till
// then vld-inspect reads the image as it is on disk. From that connection
// on the server holds it, and vld-inspect refuses it.
TEST(Inspect, ReadsAnImageUntilAServerWritesIt) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean);
  const InspectRun offline = inspect_unchanged(dir, image, {image});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  NbdkitServer server(dir, {"file=" + image, "latency=none"});
  const InspectRun beside = inspect_unchanged(dir, image, {image});
  EXPECT_EQ(beside.exit_code, 0) << beside.err;
  EXPECT_EQ(without_host_time(beside.out), without_host_time(offline.out));
  NbdHandle h = server.connect();
  EXPECT_EQ(nbd_is_read_only(h.get()), 0);
  const InspectRun written = inspect(dir, {image});
  EXPECT_EQ(written.exit_code, 8) << written.out;
  EXPECT_NE(written.err.find("is in use by a running server"), std::string::npos) << written.err;
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST(Inspect, DrawsTheLayoutOfASmallImage) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean);
  const std::string png = dir.file("layout.png");
  const std::string before = fingerprint(image);
  json j = inspect_json(dir, {"--layout", png, image});
  EXPECT_EQ(fingerprint(image), before);
  expect_layout_section(j);
  const json& l = j["layout"];
  EXPECT_EQ(l["scale"]["cylinders_per_column"], 1u);
  EXPECT_EQ(l["grid"]["columns"], j["geometry"]["simulated_cylinders"]);
  EXPECT_EQ(l["axes"]["y"]["bands_per_head"], 8u);  // st19101's 16 heads, 8 angles each
  const std::set<std::string> want = {"free", "data", "log record"};
  const std::set<std::string> drawn = drawn_classes(l);
  EXPECT_TRUE(std::includes(drawn.begin(), drawn.end(), want.begin(), want.end()))
      << l["legend"].dump(1);
  std::set<std::string> marks;
  for (const json& m : l["marks"]) marks.insert(m["name"].get<std::string>());
  EXPECT_EQ(marks.size(), 3u) << l["marks"].dump(1);  // the log tail, the head, the window
  expect_png(png, l);

  // Without --layout, --json still holds the grid; text mode prints the scale.
  json plain = inspect_json(dir, {image});
  EXPECT_EQ(plain["layout"]["grid"], l["grid"]);
  EXPECT_FALSE(plain["layout"].contains("path"));
  InspectRun r = inspect_unchanged(dir, image, {"--layout", png, image});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("layout: " + png + ": 1 column = 1 cylinder,"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

// Off a terminal (stderr a file here) the long work of --check and --layout
// on a 9 GiB image shows no progress: stderr stays empty.
TEST(Inspect, DrawsAndChecksANineGigabyteImage) {
  TempDir dir;
  const std::string image = dir.file("big.img");
  std::vector<uint64_t> blocks;
  for (uint64_t b = 0; b < 64; ++b) blocks.push_back(b * 36000 + 5);  // spread over the export
  make_image(dir, image, "9G", blocks, Stop::kClean);
  const std::string png = dir.file("big.png");
  const std::string before = fingerprint(image);
  InspectRun r = inspect(dir, {"--json", "--check", "--layout", png, image});
  EXPECT_EQ(fingerprint(image), before);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "progress written off a terminal";
  json j = json::parse(r.out);
  EXPECT_EQ(j["live_blocks"], 64u);
  EXPECT_EQ(j["check"]["status"], "clean") << j["check"].dump(2);
  expect_layout_section(j);
  const json& l = j["layout"];
  const uint64_t cylinders = j["geometry"]["simulated_cylinders"];
  const uint64_t per_column = l["scale"]["cylinders_per_column"];
  EXPECT_GT(cylinders, 1000u);
  EXPECT_GT(per_column, 1u);
  EXPECT_GE(l["grid"]["columns"].get<uint64_t>() * per_column, cylinders);
  EXPECT_NE(l["scale"]["text"].get<std::string>().find("1 column = " + std::to_string(per_column) +
                                                       " cylinders"),
            std::string::npos);
  expect_png(png, l);
}

// Runs vld-inspect with stderr on a pseudo-terminal (stdout to a file);
// returns what it wrote on the terminal.
std::string inspect_on_terminal(const TempDir& dir, const std::vector<std::string>& args) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master == -1 || ::grantpt(master) != 0 || ::unlockpt(master) != 0)
    throw std::runtime_error(std::string("posix_openpt: ") + std::strerror(errno));
  const std::string slave = ::ptsname(master), out = dir.file("inspect.out");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, slave.c_str(), O_RDWR | O_NOCTTY, 0);
  std::vector<char*> argv{const_cast<char*>(VLD_INSPECT_PATH)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid;
  const int rc = posix_spawn(&pid, VLD_INSPECT_PATH, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  std::string terminal;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
    if (n > 0) terminal.append(buf, static_cast<size_t>(n));  // EIO: the child closed it
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << terminal;
  return terminal;
}

// On a terminal, the long work on a large image (platters over
// Progress::kMinBytes) shows percentages and leaves a clean line.
TEST(Inspect, ShowsProgressOnATerminal) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "384M", {1, 2, 3}, Stop::kClean);
  const std::string png = dir.file("disk.png");
  const std::string shown = inspect_on_terminal(dir, {"--check", "--layout", png, image});
  for (const char* what : {"vld-inspect: counting free space", "vld-inspect: layout: counting sectors"}) {
    EXPECT_NE(shown.find(what), std::string::npos) << shown;
  }
  EXPECT_NE(shown.find("100% ("), std::string::npos) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 1), "\r") << "the last line is erased";
  EXPECT_EQ(inspect(dir, {"--check", "--layout", png, image}).err, "") << "piped: quiet";
}

TEST(Inspect, ReportsAnInplaceImage) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  make_image(dir, image, "16M", some_blocks(), Stop::kClean, "inplace");
  const std::string png = dir.file("layout.png");
  const std::string before = fingerprint(image);
  json j = inspect_json(dir, {"--check", "--layout", png, image});
  EXPECT_EQ(fingerprint(image), before);
  EXPECT_EQ(j["mode"], "inplace");
  EXPECT_EQ(j["live_blocks"], kDistinct);
  EXPECT_FALSE(j.contains("clean"));
  EXPECT_FALSE(j.contains("recovery"));
  EXPECT_EQ(j["check"]["status"], "clean");
  expect_layout_section(j);
  EXPECT_EQ(drawn_classes(j["layout"]).count("ARU journal area"), 1u) << j["layout"]["legend"].dump(1);
  expect_png(png, j["layout"]);
  InspectRun r = inspect_unchanged(dir, image, {image});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("mode=inplace"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redo journal"), std::string::npos) << r.out;
  EXPECT_EQ(j["redo_journal"]["last_seq"], 0) << "an image never used with ARUs";
  EXPECT_TRUE(j["redo_journal"]["pending_blocks"].is_null());
}

// An ARU's commit on mode=inplace leaves its redo record committed until
// the next sync of another request voids it: killed then, the image holds
// a record the next open replays. vld-inspect says so (no damage), and
// after a writable open, that it is voided.
TEST(Inspect, ReportsAnInplaceRedoRecordWaitingForReplay) {
  TempDir dir;
  const std::string image = dir.file("disk.img");
  {
    NbdkitServer server(dir, {"file=" + image, "size=16M", "mode=inplace", "latency=none"});
    NbdHandle h(nbd_create());
    check_nbd(nbd_set_export_name(h.get(), "aru"), "nbd_set_export_name");
    check_nbd(nbd_connect_unix(h.get(), server.socket().c_str()), "nbd_connect_unix");
    for (uint64_t b : {3, 40, 41})
      write_bytes(h.get(), b * kBlk, pattern_bytes(b * kBlk, kBlk, 7));
    check_nbd(nbd_flush(h.get(), 0), "nbd_flush (commit)");
    server.kill9();
  }
  json j = inspect_json(dir, {"--check", image});
  EXPECT_EQ(j["redo_journal"]["pending_blocks"], 3) << j.dump(2);
  EXPECT_EQ(j["check"]["status"], "clean") << j["check"].dump(2);
  InspectRun r = inspect_unchanged(dir, image, {image});
  EXPECT_NE(r.out.find("commits 3 blocks (an ARU) and is not voided"), std::string::npos) << r.out;
  {
    NbdkitServer server(dir, {"file=" + image, "latency=none"});
    NbdHandle h = server.connect();  // writable: the replay, then the void
    EXPECT_EQ(first_difference(read_bytes(h.get(), 40 * kBlk, kBlk),
                               pattern_bytes(40 * kBlk, kBlk, 7), 40 * kBlk),
              "");
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  j = inspect_json(dir, {image});
  EXPECT_TRUE(j["redo_journal"]["pending_blocks"].is_null()) << j.dump(2);
  EXPECT_GE(j["redo_journal"]["last_seq"].get<uint64_t>(), 1u);
}

}  // namespace
}  // namespace vld::test
