// Debug flags (nbdkit -v -D vld.FLAG=N, nbdkit-vld-plugin(1) DEBUG FLAGS):
// each flag makes the lines the man page promises, at its level, and no
// flag makes none. nbdkit runs in the foreground, so its stderr (where
// nbdkit_debug writes) is the harness's error file.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <chrono>
#include <random>
#include <regex>
#include <thread>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kBlock = 4096;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

bool matches(const std::string& text, const std::string& pattern) {
  return std::regex_search(text, std::regex(pattern));
}

// A FUA write of block 0, a three-block write at block 64 (map piece 2),
// a flush, and a trim of block 0: every kind of placement.
void small_workload(nbd_handle* h) {
  write_bytes(h, 0, pattern_bytes(0, kBlock, 1), LIBNBD_CMD_FLAG_FUA);
  write_bytes(h, 64 * kBlock, pattern_bytes(64 * kBlock, 3 * kBlock, 1));
  check_nbd(nbd_flush(h, 0), "nbd_flush");
  check_nbd(nbd_trim(h, kBlock, 0, 0), "nbd_trim");
}

// Runs small_workload on a new 16 MiB vld disk with `options` before the
// plugin; returns nbdkit's stderr after a clean stop.
std::string run_small_workload(const std::vector<std::string>& options) {
  TempDir dir;
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "latency=none"},
                      options);
  {
    NbdHandle h = server.connect();
    small_workload(h.get());
  }
  EXPECT_EQ(server.stop(), 0);
  return server.stderr_text();
}

TEST(DebugFlags, AllocatorAndLogSayWhereEachPieceWentAndEachRecord) {
  const std::string err =
      run_small_workload({"-v", "-D", "vld.allocator=1", "-D", "vld.log=1"});
  // Places are cylinder/head/sector+sectors: a 4 KiB block is 8 sectors,
  // its map sector 1.
  EXPECT_TRUE(matches(err, R"(debug: allocator: write: block 0 at \d+/\d+/\d+\+8; map piece 0 )"
                           R"(at \d+/\d+/\d+\+1; planned [a-z ,()]+, \d+ sectors passed; locate )"
                           R"([0-9.]+ us \(seek [0-9.]+, head switch [0-9.]+, rotation )"
                           R"([0-9.]+\), transfer [0-9.]+ us; window cylinders \d+\+\d+)"))
      << err;
  EXPECT_TRUE(matches(err, R"(debug: allocator: write: block 64 at [0-9/+]+, block 65 at )"
                           R"([0-9/+]+, block 66 at [0-9/+]+; map piece 2 at)"))
      << err;
  EXPECT_TRUE(has(err, "debug: allocator: unmap: unmapped 1 blocks; map piece 0 at")) << err;
  EXPECT_TRUE(matches(err, R"(debug: log: record 2 \(open\): in use, slot 0, durable seq 0)"))
      << err;
  EXPECT_TRUE(matches(err, R"(debug: log: checkpoint 1: \d+ map sectors as one group)")) << err;
  EXPECT_TRUE(matches(err, R"(debug: log: record \d+ \(clean close\): clean, slot [01], )"
                           R"(durable seq \d+, next seq \d+, root piece 0 seq \d+ at psn \d+)"))
      << err;
  // Level 1 of log=: records and checkpoints, not every group.
  EXPECT_FALSE(has(err, "debug: log: group seq")) << err;
  EXPECT_FALSE(has(err, "debug: compactor:")) << err;
  EXPECT_FALSE(has(err, "debug: recovery:")) << err;
}

TEST(DebugFlags, LogLevelTwoAlsoShowsEveryMapSectorGroup) {
  const std::string err = run_small_workload({"-v", "-D", "vld.log=2"});
  EXPECT_TRUE(has(err, "debug: log: group seq 1-1: piece 0 (replaces seq 0) at psn ")) << err;
  // Block 64 is in piece 2 (32 map entries a piece); the trim of block 0
  // replaces the version of piece 0 that the first write made.
  EXPECT_TRUE(has(err, "debug: log: group seq 2-2: piece 2 (replaces seq 0) at psn ")) << err;
  EXPECT_TRUE(has(err, "debug: log: group seq 3-3: piece 0 (replaces seq 1) at psn ")) << err;
  EXPECT_FALSE(has(err, "debug: allocator:")) << err;
}

TEST(DebugFlags, WithoutFlagsVerboseOutputHasNoTraceLines) {
  const std::string err = run_small_workload({"-v"});
  ASSERT_TRUE(has(err, "debug: ")) << err;  // -v works
  for (const char* flag : {"allocator", "log", "compactor", "recovery"})
    EXPECT_FALSE(has(err, std::string("debug: ") + flag + ": ")) << flag << "\n" << err;
}

TEST(DebugFlags, RecoverySaysHowTheImageWasOpened) {
  TempDir dir;
  const std::string img = dir.file("disk.img");
  {
    NbdkitServer server(dir, {"file=" + img, "size=16M", "latency=none"});
    NbdHandle h = server.connect();
    for (uint64_t b = 0; b < 8; ++b)
      write_bytes(h.get(), b * 16 * kBlock, pattern_bytes(b * 16 * kBlock, kBlock, 2),
                  LIBNBD_CMD_FLAG_FUA);
    server.kill9();  // unclean: the record says "in use"
  }
  std::string err;
  {
    // A writable connection: until one, the image is only read, and the
    // recovery that writes its result runs when it comes.
    NbdkitServer server(dir, {"file=" + img, "latency=none"}, {"-v", "-D", "vld.recovery=1"});
    NbdHandle h = server.connect();
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0);
    err = server.stderr_text();
  }
  EXPECT_TRUE(matches(err, R"(debug: recovery: unclean open by record\+window: record \d+ )"
                           R"(\(durable seq \d+, window cylinders \d+\+\d+\); read \d+ sectors)"))
      << err;
  // The eight FUA writes are newer than the record written at open, all
  // whole: they extend its tree (no checkpoint).
  EXPECT_TRUE(matches(err, R"(debug: recovery: \d+ map sectors newer than the record: 8 )"
                           R"(requests accepted, 0 rolled back; 8 data blocks checked )"
                           R"(\(\d+ read on their own\); they extend the record's tree)"))
      << err;
  EXPECT_TRUE(has(err, "debug: recovery: serving 8 live blocks of ")) << err;
  {
    NbdkitServer server(dir, {"file=" + img}, {"-v", "-D", "vld.recovery=1"});
    EXPECT_EQ(server.stop(), 0);
    err = server.stderr_text();
  }
  EXPECT_TRUE(has(err, "debug: recovery: clean open by clean-walk: ")) << err;
  EXPECT_FALSE(has(err, "map sectors newer than the record")) << err;
}

TEST(DebugFlags, CompactorNamesItsVictimsAndTheTracksItEmptied) {
  TempDir dir;
  // 8 MiB at about 80% of the platters, fragmented by random updates (as in
  // compactor_test.cc), then idle: the compactor runs after 20 ms.
  const uint64_t blocks = 8 * 1024 * 1024 / kBlock * 80 / 100;
  NbdkitServer server(dir,
                      {"file=" + dir.file("disk.img"), "size=8M", "spare=5", "latency=sleep",
                       "compactor_quiet_ms=20"},
                      {"-v", "-D", "vld.compactor=1"});
  {
    NbdHandle h = server.connect();
    for (uint64_t b = 0; b < blocks; b += 64) {
      const uint64_t n = std::min<uint64_t>(64, blocks - b);
      write_bytes(h.get(), b * kBlock, pattern_bytes(b * kBlock, n * kBlock, 1));
    }
    std::mt19937_64 rng(7);
    for (int i = 0; i < 300; ++i) {
      const uint64_t b = rng() % blocks;
      write_bytes(h.get(), b * kBlock, pattern_bytes(b * kBlock, kBlock, 100 + i));
    }
    check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
  }
  const std::regex emptied(R"(debug: compactor: track \d+ emptied: moved \d+ data blocks and \d+ )"
                           R"(map sectors in \d+ steps; \d+ empty tracks)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string err = server.stderr_text();
  while (!std::regex_search(err, emptied) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    err = server.stderr_text();
  }
  EXPECT_TRUE(std::regex_search(err, emptied)) << err.substr(err.size() > 4000 ? err.size() - 4000 : 0);
  EXPECT_TRUE(matches(err, R"(debug: compactor: victim track \d+ \(cylinder \d+ head \d+\), )"
                           R"(fewest-live: \d+ of 256 sectors in use, \d+ data blocks and \d+ )"
                           R"(map sectors to move; chosen from \d+ tracks with data)"))
      << err.substr(0, 4000);
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace vld::test

namespace vld::test {
namespace {

// -D vld.aru=1: each ARU connection opened, each commit, each ARU dropped.
TEST(DebugFlags, RequestsGivesEachRequestItsSimulatedStartAndServiceTime) {
  const std::string err = run_small_workload({"-v", "-D", "vld.requests=1"});
  const std::regex line(R"(debug: request: (\w+) offset=(\d+) len=(\d+) fua=(\d) )"
                        R"(start_ns=(\d+) service_ns=(\d+))");
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator();
       ++it)
    found.push_back(*it);
  ASSERT_EQ(found.size(), 4u) << err;  // small_workload's four requests, in order
  EXPECT_EQ(found[0][1], "write");
  EXPECT_EQ(found[0][3], "4096");
  EXPECT_EQ(found[0][4], "1");
  EXPECT_EQ(found[1][2], std::to_string(64 * kBlock));
  EXPECT_EQ(found[1][3], std::to_string(3 * kBlock));
  EXPECT_EQ(found[2][1], "flush");
  EXPECT_EQ(found[3][1], "trim");
  // latency=none: each starts when the one before it ended.
  for (size_t i = 1; i < found.size(); ++i)
    EXPECT_EQ(std::stoll(found[i][5]), std::stoll(found[i - 1][5]) + std::stoll(found[i - 1][6]))
        << i;
  EXPECT_GT(std::stoll(found[0][6]), 0);
}

TEST(DebugFlags, AruSaysWhatEachAruConnectionDid) {
  TempDir dir;
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "latency=none"},
                      {"-v", "-D", "vld.aru=1"});
  {
    NbdHandle h(nbd_create());
    check_nbd(nbd_set_export_name(h.get(), "aru:journal"), "nbd_set_export_name");
    check_nbd(nbd_connect_unix(h.get(), server.socket().c_str()), "nbd_connect_unix");
    write_bytes(h.get(), 0, pattern_bytes(0, 2 * kBlock, 1));
    check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
    write_bytes(h.get(), 0, pattern_bytes(0, kBlock, 2));
    nbd_shutdown(h.get(), 0);
  }
  // The connection's close (which drops the ARU and says so) runs after the
  // disconnect returned; stopping at once could beat it.
  EXPECT_TRUE(server.stderr_shows("closed without a flush", std::chrono::seconds(10)));
  EXPECT_EQ(server.stop(), 0);
  const std::string err = server.stderr_text();
  EXPECT_TRUE(has(err, "debug: aru: export aru:journal: opened")) << err;
  EXPECT_TRUE(matches(err, R"(debug: aru: export aru:journal: committed 8192 bytes of shadow )"
                           R"(blocks in \d+ us \(simulated\))"))
      << err;
  EXPECT_TRUE(has(err, "debug: aru: export aru:journal: closed without a flush: 4096 bytes"))
      << err;
}

}  // namespace
}  // namespace vld::test
