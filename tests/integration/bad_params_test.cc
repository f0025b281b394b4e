// Every bad parameter makes nbdkit exit nonzero at start-up with one error
// line naming the parameter, and leaves the image as it was (or absent).
#include <gtest/gtest.h>
#include <libnbd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

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

TEST(BadParameters, UnknownGeometry) {
  ExpectRejectedOnNewFile({"size=16M", "geometry=foo"}, "geometry", {"geometry=foo"});
  ExpectRejectedOnImage({"geometry=foo"}, "geometry", {"geometry=foo"});
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
  ExpectCleanFailure(run_nbdkit({"file=" + file}), "file", {"not a vld image"});
  EXPECT_EQ(file_fingerprint(file), before) << "the file changed";
  // size= does not make it one either.
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=16M"}), "file", {"not a vld image"});
  EXPECT_EQ(file_fingerprint(file), before) << "the file changed";
}

TEST(BadParameters, UnwritablePath) {
  ExpectCleanFailure(run_nbdkit({"file=/proc/vld-test.img", "size=16M"}), "file",
                     {"/proc/vld-test.img"});
  EXPECT_FALSE(Exists("/proc/vld-test.img"));

  TempDir dir;
  const std::string file = dir.file("no/such/dir/disk.img");
  ExpectCleanFailure(run_nbdkit({"file=" + file, "size=16M"}), "file", {file});
  EXPECT_FALSE(Exists(file));
}

// The stats file's directory is checked at start-up (issue 13), before the
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
// fragmented them (core/image.h: vld_block_capacity) is refused at
// creation, naming the spare= (or block=) that would do.
TEST(BadParameters, SpareTooSmallOrBlockTooBigForVld) {
  ExpectRejectedOnNewFile({"size=64M", "geometry=hp97560", "spare=10", "mode=vld"}, "spare",
                          {"spare=10 is too little", "use spare=12 or more"});
  ExpectRejectedOnNewFile({"size=64M", "geometry=hp97560", "block=64K", "mode=vld"}, "block",
                          {"block=65536 does not fit a track", "use block=32768 or less"});
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
  ExpectRejectedOnNewFile({"size=abc"}, "size", {"size=abc"});
  ExpectRejectedOnImage({"size=abc"}, "size", {"size=abc"});
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
