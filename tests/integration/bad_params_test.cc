// Every bad parameter makes nbdkit exit nonzero at start-up with one error
// line naming the parameter, and leaves the image as it was (or absent).
#include <gtest/gtest.h>
#include <libnbd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "geometry/presets.h"
#include "plugin/parameters.h"
#include "tests/integration/nbdkit_harness.h"
#include "tests/parameter_values.h"

namespace vld::test {
namespace {

std::vector<std::string> NonEmptyLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) out.push_back(line);
  return out;
}

// Checks a start-up failure: nonzero exit, at most two non-empty lines of
// stderr, exactly one error line naming `param`, and every needle present.
void ExpectCleanFailure(const RunResult& r, const std::string& param,
                        const std::vector<std::string>& needles) {
  SCOPED_TRACE("nbdkit stderr:\n" + r.stderr_text);
  EXPECT_NE(r.exit_code, 0);
  auto lines = NonEmptyLines(r.stderr_text);
  EXPECT_GE(lines.size(), 1u) << "no error message at all";
  EXPECT_LE(lines.size(), 2u) << "the error should be one line";
  int naming = 0;
  for (const auto& l : lines)
    if (l.find("error") != std::string::npos && l.find(param) != std::string::npos) ++naming;
  EXPECT_EQ(naming, 1) << "want exactly one error line naming '" << param << "'";
  for (const auto& n : needles)
    EXPECT_NE(r.stderr_text.find(n), std::string::npos) << "message lacks '" << n << "'";
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

// A 4 MiB image with some data in it, made and cleanly closed by a server.
std::string MakeImage(const TempDir& dir) {
  const std::string file = dir.file("disk.img");
  NbdkitServer server(dir, {"file=" + file, "size=4M", "latency=none"});
  NbdHandle h = server.connect();
  write_bytes(h.get(), 8192, pattern_bytes(8192, 64 << 10, 9));
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  return file;
}

// Runs nbdkit with params on an existing image; the image must not change.
void ExpectRejectedOnImage(const std::vector<std::string>& extra, const std::string& param,
                           const std::vector<std::string>& needles) {
  TempDir dir;
  const std::string file = MakeImage(dir);
  const std::string before = file_fingerprint(file);
  ASSERT_NE(before, "missing");
  std::vector<std::string> params = {"file=" + file};
  params.insert(params.end(), extra.begin(), extra.end());
  ExpectCleanFailure(run_nbdkit(params), param, needles);
  EXPECT_EQ(file_fingerprint(file), before) << "the image changed";
}

// A 4 MiB mode=lld image (segment=1M, nvram=2M), made through core/: a
// server cannot serve mode=lld yet, but it checks parameters against the
// image before opening the disk.
std::string MakeLldImage(const TempDir& dir) {
  const std::string file = dir.file("lld.img");
  FormatOptions o;
  o.mode = DiskMode::kLld;
  o.export_bytes = 4 << 20;
  o.geometry = *find_preset("st19101");
  o.segment_bytes = 1 << 20;
  o.nvram_bytes = 2 << 20;
  create_image(file, plan_image(o));
  return file;
}

// As ExpectRejectedOnImage, on MakeLldImage's image.
void ExpectRejectedOnLldImage(const std::vector<std::string>& extra, const std::string& param,
                              const std::vector<std::string>& needles) {
  TempDir dir;
  const std::string file = MakeLldImage(dir);
  const std::string before = file_fingerprint(file);
  std::vector<std::string> params = {"file=" + file};
  params.insert(params.end(), extra.begin(), extra.end());
  ExpectCleanFailure(run_nbdkit(params), param, needles);
  EXPECT_EQ(file_fingerprint(file), before) << "the image changed";
}

// Runs nbdkit with params and a file that does not exist; it must not appear.
void ExpectRejectedOnNewFile(const std::vector<std::string>& extra, const std::string& param,
                             const std::vector<std::string>& needles) {
  TempDir dir;
  const std::string file = dir.file("new.img");
  std::vector<std::string> params = {"file=" + file};
  params.insert(params.end(), extra.begin(), extra.end());
  ExpectCleanFailure(run_nbdkit(params), param, needles);
  EXPECT_FALSE(Exists(file)) << file << " was created";
}

// tests/parameter_values.h, read by the real nbdkit's parsers: every bad
// value stops nbdkit with exactly one line, which names the parameter and
// the value and says what is wrong and what is accepted; the image it was
// given stays as it was.
TEST(BadParameters, EveryBadValueInTheTable) {
  TempDir dir;
  const std::string file = MakeImage(dir);
  const std::string before = file_fingerprint(file);
  for (const BadValue& b : kBadValues) {
    const std::string kv = std::string(b.key) + "=" + b.value;
    SCOPED_TRACE(kv);
    const RunResult r = run_nbdkit({"file=" + file, kv});
    EXPECT_NE(r.exit_code, 0);
    const std::vector<std::string> lines = NonEmptyLines(r.stderr_text);
    ASSERT_EQ(lines.size(), 1u) << "want one line:\n" << r.stderr_text;
    EXPECT_NE(lines[0].find("error"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("vld: " + kv), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(b.problem), std::string::npos) << lines[0];
  }
  EXPECT_EQ(file_fingerprint(file), before) << "the image changed";
}

// The table's good values of run-time parameters, read by the real nbdkit:
// each is taken on an existing image (format-time ones are in
// NbdkitForms.ReachTheImage, as most would conflict with the image).
TEST(GoodParameters, EveryRunTimeValueInTheTable) {
  TempDir dir;
  const std::string file = MakeImage(dir);
  for (const GoodValue& g : kGoodValues) {
    const ParameterDoc* p = nullptr;
    for (const ParameterDoc& d : kParameters)
      if (std::string(d.key) == g.key) p = &d;
    ASSERT_NE(p, nullptr) << g.key;
    if (p->group != ParameterGroup::kRunTime) continue;
    const std::string kv = std::string(g.key) + "=" +
                           (std::string(g.key) == "statsfile" ? dir.file("s.json") : g.value);
    const RunResult r = run_nbdkit({"file=" + file, kv});
    EXPECT_EQ(r.exit_code, 0) << kv << ":\n" << r.stderr_text;
  }
}

// nbdkit's forms of sizes, numbers and booleans, as every plugin takes
// them, make the image they say: 8192 sectors, a block of 8 sectors, hex
// and octal numbers, booleans in any case.
TEST(NbdkitForms, ReachTheImage) {
  TempDir dir;
  const std::string file = dir.file("forms.img");
  const RunResult r =
      run_nbdkit({"file=" + file, "size=8192s", "block=8s", "spare=0x32", "tracks_per_cylinder=010",
                  "window=0x20", "fill=075", "track_buffer=No", "compactor=YES", "seed=+7",
                  "latency=none"});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  auto store = FileBackingStore::open(file, /*readonly=*/true);
  const Superblock sb = read_superblock(*store, file);
  EXPECT_EQ(sb.export_bytes, 4u << 20);
  EXPECT_EQ(sb.block_bytes, 4096u);
  EXPECT_EQ(sb.spare_percent, 50u);
  EXPECT_EQ(sb.geometry.tracks_per_cylinder, 8u);
}

TEST(BadParameters, UnknownGeometry) {
  ExpectRejectedOnNewFile({"size=16M", "geometry=foo"}, "geometry", {"geometry=foo"});
  ExpectRejectedOnImage({"geometry=foo"}, "geometry", {"geometry=foo"});
}

// Values each parse but the drive they make is out of range: the line
// names the value given beside the range.
TEST(BadParameters, GeometryOutOfRangeNamesTheValue) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=16M", "sectors_per_track=7"}),
                     "sectors_per_track", {"sectors_per_track=7 must be between 8"});
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=16M", "cylinders=20000000"}), "cylinders",
                     {"cylinders=20000000 must be between 1 and 10000000"});
  EXPECT_FALSE(Exists(file));
}

TEST(BadParameters, UnknownSchedPolicy) {
  ExpectRejectedOnNewFile({"size=16M", "sched=bogus"}, "sched", {"sched=bogus", "fifo", "sptf"});
  ExpectRejectedOnImage({"sched=bogus"}, "sched", {"sched=bogus"});
}

TEST(BadParameters, SchedAgingOutOfRange) {
  ExpectRejectedOnNewFile({"size=16M", "sched_aging_ms=0"}, "sched_aging_ms",
                          {"sched_aging_ms=0", "1 to 10000"});
}

TEST(BadParameters, SizeMissingForANewImage) {
  ExpectRejectedOnNewFile({"latency=none"}, "size", {"size="});
}

TEST(BadParameters, SizeConflictsWithTheImage) {
  ExpectRejectedOnImage({"size=8M"}, "size", {"size", "conflicts"});
}

TEST(BadParameters, GeometryConflictsWithTheImage) {
  ExpectRejectedOnImage({"geometry=hp97560"}, "geometry", {"geometry", "conflicts"});
}

TEST(BadParameters, FileIsNotAVldImage) {
  TempDir dir;
  const std::string file = dir.file("random.bin");
  {
    std::mt19937_64 rng(42);
    std::vector<char> bytes(1 << 20);
    for (auto& b : bytes) b = static_cast<char>(rng());
    std::ofstream(file, std::ios::binary).write(bytes.data(), bytes.size());
  }
  const std::string before = file_fingerprint(file);
  ASSERT_NE(before, "missing");
  ExpectCleanFailure(run_nbdkit({"file=" + file}), "file", {"not an image of the vld plugin"});
  EXPECT_EQ(file_fingerprint(file), before) << "the file changed";
  // size= does not make it one either.
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=16M"}), "file", {"not an image of the vld plugin"});
  EXPECT_EQ(file_fingerprint(file), before) << "the file changed";
}

TEST(BadParameters, UnwritablePath) {
  ExpectCleanFailure(run_nbdkit({"file=/proc/vld-test.img", "size=16M"}), "file",
                     {"/proc/vld-test.img"});
  EXPECT_FALSE(Exists("/proc/vld-test.img"));

  TempDir dir;
  const std::string file = dir.file("no/such/dir/disk.img");
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=16M"}), "file",
                     {file, "existing directory"});
  EXPECT_FALSE(Exists(file));

  // A dangling symbolic link: O_EXCL says "File exists", which it does not.
  const std::string link = dir.file("dangling");
  ASSERT_EQ(::symlink(dir.file("nowhere").c_str(), link.c_str()), 0);
  ExpectCleanFailure(run_nbdkit({"file=" + link, "size=16M"}), "file",
                     {"symbolic link to a missing file"});
  EXPECT_FALSE(Exists(dir.file("nowhere")));
}

// The stats file's directory is checked at start-up (docs/stats.md), before the
// image is created: one line naming statsfile and the errno text.
TEST(BadParameters, StatsFileInAMissingOrReadOnlyDirectory) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=4M",
                                 "statsfile=" + dir.file("no/such/dir/stats.json")}),
                     "statsfile", {"No such file or directory"});
  EXPECT_FALSE(Exists(file)) << "the image must not be created";
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=4M", "statsfile=/proc/vld-stats.json"}),
                     "statsfile", {"/proc/vld-stats.json"});
  EXPECT_FALSE(Exists(file));
}

// The time series' file too, and a refused start leaves an old series as
// it was (stats_interval=0 needs no series file at all).
TEST(BadParameters, StatsSeriesFileThatCannotBeWritten) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  const std::string stats = dir.file("s.json");
  ASSERT_EQ(::mkdir((stats + ".jsonl").c_str(), 0755), 0);  // a directory in its way
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=4M", "statsfile=" + stats}), "statsfile",
                     {"s.json.jsonl", "is a directory", "stats_interval=0"});
  EXPECT_FALSE(Exists(file)) << "the image must not be created";
  const RunResult ok = run_nbdkit({"file=" + file, "size=4M", "statsfile=" + stats,
                                   "stats_interval=0"});
  EXPECT_EQ(ok.exit_code, 0) << ok.stderr_text;
}

// The stats writer renames over PATH, truncates PATH.tmp and empties
// PATH.jsonl: none of them may be the image (under -r too, which must
// change no byte of it), a device, a directory or a link. Each is refused
// in one line before anything is touched.
TEST(BadParameters, StatsFileThatIsTheImageOrNotAFile) {
  TempDir dir;
  const std::string file = MakeImage(dir);
  const std::string before = file_fingerprint(file);
  const std::string series = dir.file("s.jsonl");  // an image that statsfile=s's series would be
  std::filesystem::copy_file(file, series);
  ASSERT_EQ(::link(file.c_str(), dir.file("hard").c_str()), 0);
  ASSERT_EQ(::symlink(file.c_str(), dir.file("soft").c_str()), 0);
  ASSERT_EQ(::mkdir(dir.file("d").c_str(), 0755), 0);
  struct Case {
    std::string image, stats, why;
  };
  const std::vector<Case> cases = {{file, file, "is the image"},
                                   {series, dir.file("s"), "is the image"},
                                   {file, dir.file("hard"), "hard link"},
                                   {file, dir.file("soft"), "symbolic link"},
                                   {file, dir.file("d"), "is a directory"},
                                   {file, "/dev/null", "not a regular file"}};
  for (const Case& c : cases)
    for (const char* ro : {"", "-r"}) {
      SCOPED_TRACE(c.stats + " " + ro);
      std::vector<std::string> args = {"file=" + c.image, "statsfile=" + c.stats};
      if (*ro) args.insert(args.begin(), ro);
      ExpectCleanFailure(run_nbdkit(args), "statsfile", {c.why});
      EXPECT_EQ(file_fingerprint(c.image), before) << "the image changed";
    }
}

// A FIFO as file= is refused like any other file that is not regular, not
// waited on for a writer that never comes (its open would block).
TEST(BadParameters, FileIsAFifo) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ExpectCleanFailure(run_nbdkit({"file=" + fifo}), "file", {"not a regular file"});
  ExpectCleanFailure(run_nbdkit({"-r", "file=" + fifo}), "file", {"not a regular file"});
}

TEST(BadParameters, BadMode) {
  ExpectRejectedOnNewFile({"size=16M", "mode=lfs"}, "mode", {"mode=lfs"});
}

TEST(BadParameters, ModeConflictsWithTheImage) {
  ExpectRejectedOnImage({"mode=inplace"}, "mode", {"conflicts"});
}

TEST(BadParameters, BadFillAndWindow) {
  ExpectRejectedOnNewFile({"size=16M", "fill=0"}, "fill", {"fill=0"});
  ExpectRejectedOnNewFile({"size=16M", "fill=150"}, "fill", {"fill=150"});
  ExpectRejectedOnNewFile({"size=16M", "window=0"}, "window", {"window=0"});
}

// A vld disk whose platters could not hold every block once writes have
// fragmented them (core/vld/vld_plan.h: vld_block_capacity) is refused at
// creation, naming the spare= (or block=) that would do.
TEST(BadParameters, SpareTooSmallOrBlockTooBigForVld) {
  ExpectRejectedOnNewFile({"size=64M", "geometry=hp97560", "spare=10", "mode=vld"}, "spare",
                          {"spare=10 is too little", "use spare=12 or more"});
  ExpectRejectedOnNewFile({"size=64M", "geometry=hp97560", "block=64K", "mode=vld"}, "block",
                          {"block=65536 does not fit a track", "use block=32768 or less"});
}

TEST(BadParameters, BadLldValues) {
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "segment=abc"}, "segment", {"segment=abc"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "segment=0"}, "segment", {"segment=0"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "nvram=lots"}, "nvram", {"nvram=lots"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "partial=0"}, "partial", {"partial=0"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "partial=101"}, "partial", {"partial=101"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "cleaner_policy=fewest-live"},
                          "cleaner_policy", {"cleaner_policy=fewest-live", "greedy"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "nvram_us=-1"}, "nvram_us", {"nvram_us=-1"});
  ExpectRejectedOnLldImage({"partial=0"}, "partial", {"partial=0"});
  ExpectRejectedOnLldImage({"cleaner_policy=random"}, "cleaner_policy",
                           {"cleaner_policy=random"});
  ExpectRejectedOnLldImage({"nvram_us=x"}, "nvram_us", {"nvram_us=x"});
}

// Values the layout refuses (core/lld/lld_layout.h) are refused at start-up
// naming the parameter, with what will do; the file is not created.
TEST(BadParameters, LldLayoutRefusesSegmentNvramAndSize) {
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "segment=4K"}, "segment",
                          {"segment=4096 is smaller than one 4096-byte block", "will do"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "nvram=1000"}, "nvram",
                          {"nvram=1000", "will do"});
  ExpectRejectedOnNewFile({"size=16M", "mode=lld", "nvram=20G"}, "nvram",
                          {"cylinders", "6962", "nvram="});
  ExpectRejectedOnNewFile({"size=13G", "mode=lld"}, "size", {"size=", "cylinders", "6962"});
}

// segment= and nvram= are mode=lld's: with another mode they are refused
// (not silently ignored), on a new image and on an existing one.
TEST(BadParameters, SegmentAndNvramWithAnotherMode) {
  ExpectRejectedOnNewFile({"size=16M", "segment=512K"}, "segment",
                          {"applies to mode=lld only", "mode=vld", "give mode=lld"});
  ExpectRejectedOnNewFile({"size=16M", "mode=inplace", "nvram=0"}, "nvram",
                          {"applies to mode=lld only", "mode=inplace"});
  ExpectRejectedOnImage({"segment=512K"}, "segment", {"applies to mode=lld only", "mode=vld"});
  ExpectRejectedOnImage({"nvram=6100000"}, "nvram", {"applies to mode=lld only", "mode=vld"});
}

// What an lld image recorded at format time may be repeated, not changed.
TEST(BadParameters, LldParametersConflictWithTheImage) {
  ExpectRejectedOnLldImage({"segment=512K"}, "segment",
                           {"segment=524288 conflicts", "segment=1048576"});
  ExpectRejectedOnLldImage({"nvram=0"}, "nvram", {"nvram=0 conflicts", "nvram=2097152"});
  ExpectRejectedOnLldImage({"mode=vld"}, "mode", {"mode=vld conflicts", "mode=lld"});
  ExpectRejectedOnImage({"mode=lld"}, "mode", {"mode=lld conflicts", "mode=vld"});
}

// partial=, cleaner_policy= and nvram_us= are run-time and mode=lld's:
// other modes ignore them, as mode=inplace ignores fill= and compactor=.
TEST(LldParameters, RunTimeOnesAreIgnoredByOtherModes) {
  TempDir dir;
  const std::string file = MakeImage(dir);
  RunResult r = run_nbdkit({"file=" + file, "latency=none", "partial=50",
                            "cleaner_policy=cost-benefit", "nvram_us=1.5"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
}

// `nbdkit vld ... mode=lld` creates an lld image: format_version 4 with
// segment= and nvram= recorded.
TEST(LldParameters, ModeLldCreatesAVersionFourImage) {
  TempDir dir;
  const std::string file = dir.file("x.img");
  run_nbdkit({"file=" + file, "size=64M", "mode=lld", "segment=512K", "nvram=6100000",
              "latency=none"});
  auto store = FileBackingStore::open(file, /*readonly=*/true);
  const Superblock sb = read_superblock(*store, file);
  EXPECT_EQ(sb.mode, DiskMode::kLld);
  EXPECT_EQ(sb.segment_bytes, 512u << 10);
  EXPECT_EQ(sb.nvram_bytes, 6'100'000u);
  EXPECT_EQ(sb.export_bytes, 64u << 20);
  std::ifstream in(file, std::ios::binary);
  unsigned char version[4] = {};
  in.seekg(8);
  in.read(reinterpret_cast<char*>(version), 4);
  EXPECT_EQ(version[0], 4);
}

TEST(BadParameters, UnknownParameter) {
  ExpectRejectedOnNewFile({"size=16M", "frobnicate=1"}, "frobnicate", {});
  ExpectRejectedOnImage({"frobnicate=1"}, "frobnicate", {});
}

TEST(BadParameters, BadLatency) {
  ExpectRejectedOnNewFile({"size=16M", "latency=fast"}, "latency", {"latency=fast"});
  ExpectRejectedOnImage({"latency=fast"}, "latency", {"latency=fast"});
}

TEST(BadParameters, BadSize) {
  ExpectRejectedOnNewFile({"size=abc"}, "size", {"size=abc", "not a size"});
  ExpectRejectedOnImage({"size=abc"}, "size", {"size=abc", "not a size"});
  // Out of range, not "not a size".
  ExpectRejectedOnNewFile({"size=0"}, "size", {"size=0: too small (at least 512 bytes)"});
  ExpectRejectedOnNewFile({"size=16E"}, "size", {"size=16E: too large (at most"});
}

TEST(BadParameters, MalformedSeek) {
  ExpectRejectedOnNewFile({"size=16M", "seek=1,2"}, "seek", {"seek=1,2"});
  ExpectRejectedOnImage({"seek=1,2,x"}, "seek", {"seek=1,2,x"});
}

// The image is flock()ed: a second server on it fails clearly, and the
// first one keeps serving.
TEST(SecondServer, FailsBecauseTheImageIsInUse) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  NbdkitServer a(dir, {"file=" + file, "size=4M", "latency=none"});
  NbdHandle h = a.connect();
  auto data = pattern_bytes(0, 64 << 10, 10);
  write_bytes(h.get(), 0, data);
  check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
  const std::string before = file_fingerprint(file);

  ExpectCleanFailure(run_nbdkit({"file=" + file, "latency=none"}), "file", {"in use"});
  EXPECT_EQ(file_fingerprint(file), before) << "the image changed";

  EXPECT_EQ(first_difference(read_bytes(h.get(), 0, data.size()), data), "");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(a.stop(), 0) << a.stderr_text();
}

}  // namespace
}  // namespace vld::test
