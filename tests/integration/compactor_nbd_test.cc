// The idle-time compactor over NBD: with latency=sleep it starts after
// compactor_quiet_ms of no requests (or of the open), empties tracks, and
// every byte still reads back, before and after a restart; with
// latency=none it never runs.
// mode=lld's idle work (its cleaner, and the drain of its NVRAM) likewise.
// The waits here are for a condition (the stats file says the compactor
// emptied a track and has no victim in progress), with a deadline, never a
// fixed sleep.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <chrono>
#include <thread>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kBlock = 4096;

// The stats file once `done(json)` holds, or the last one seen at the deadline.
template <typename Pred>
nlohmann::json wait_for_stats(const std::string& path, Pred done, std::chrono::seconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  nlohmann::json j;
  for (;;) {
    try {
      j = read_json(path);
      if (done(j)) return j;
    } catch (const std::exception&) {
      // not written yet
    }
    if (std::chrono::steady_clock::now() > until) return j;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the writer's period is 1 s
  }
}

void expect_contents(nbd_handle* h, const std::vector<std::vector<uint8_t>>& want) {
  ASSERT_EQ(contents_difference(h, want), "");
}

// Serves img again with latency=none (no idle work): every block reads
// `want`, and the server stops cleanly; *stats_json is its final stats.
void reopen_with_latency_none(const TempDir& dir, const std::string& img,
                              const std::string& stats,
                              const std::vector<std::vector<uint8_t>>& want,
                              nlohmann::json* stats_json) {
  NbdkitServer server(dir, {"file=" + img, "latency=none", "statsfile=" + stats});
  NbdHandle h = server.connect();
  expect_contents(h.get(), want);
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  *stats_json = read_json(stats);
}

TEST(CompactorOverNbd, RunsInIdleTimeWithLatencySleepAndKeepsEveryByte) {
  TempDir dir;
  const std::string img = dir.file("disk.img"), stats = dir.file("stats.json");
  // 8 MiB export, 5% spare: about 80% of the platters hold the data below.
  const uint64_t blocks = 8 * 1024 * 1024 / kBlock * 80 / 100;
  std::vector<std::vector<uint8_t>> want;
  {
    NbdkitServer server(dir, {"file=" + img, "size=8M", "spare=5", "latency=sleep",
                              "compactor_quiet_ms=20", "statsfile=" + stats});
    NbdHandle h = server.connect();
    want = fill_and_fragment(h.get(), blocks);
    nlohmann::json j = wait_for_stats(
        stats,
        [](const nlohmann::json& s) {
          const auto& c = s.at("compactor");
          return c.at("tracks_compacted").get<uint64_t>() >= 1 && c.at("victim").is_null();
        },
        std::chrono::seconds(60));
    SCOPED_TRACE(j.dump(2));
    const auto& c = j.at("compactor");
    ASSERT_GE(c.at("tracks_compacted").get<uint64_t>(), 1u) << "the compactor never emptied a track";
    EXPECT_GT(c.at("blocks_moved").get<uint64_t>(), 0u);
    EXPECT_GT(c.at("idle_steps").get<uint64_t>(), 0u);
    EXPECT_EQ(c.at("policy").get<std::string>(), "fewest-live");
    EXPECT_GT(c.at("write_amplification").get<double>(), 1.0);  // moves are physical writes
    EXPECT_EQ(j.at("requests").at("errors").get<uint64_t>(), 0u);
    expect_contents(h.get(), want);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  // Restart without the compactor running (latency=none): the same bytes,
  // and the image opened cleanly.
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(reopen_with_latency_none(dir, img, stats, want, &j));
  SCOPED_TRACE(j.dump(2));
  EXPECT_TRUE(j.at("recovery").at("clean").get<bool>());
  // With latency=none no idle time is ever granted over NBD.
  EXPECT_EQ(j.at("compactor").at("idle_steps").get<uint64_t>(), 0u);
  EXPECT_EQ(j.at("compactor").at("tracks_compacted").get<uint64_t>(), 0u);
}

// An existing image is served read-only until the first writable
// connection, yet the drive is idle from the open: the idle time before the
// first connection counts. A freshly opened aged image, left idle, has
// compacted tracks before its first request is served; a server stopped
// right after that request (well within compactor_quiet_ms) has had no
// other idle time. With -r the same idle time writes nothing.
TEST(CompactorOverNbd, IdleTimeSinceTheOpenCountsBeforeTheFirstRequest) {
  TempDir dir;
  const std::string img = dir.file("disk.img"), stats = dir.file("stats.json");
  const uint64_t blocks = 8 * 1024 * 1024 / kBlock * 80 / 100;
  std::vector<std::vector<uint8_t>> want;
  {
    NbdkitServer server(dir, {"file=" + img, "size=8M", "spare=5", "latency=none",
                              "compactor=off"});
    NbdHandle h = server.connect();
    want = fill_and_fragment(h.get(), blocks);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  const std::vector<std::string> params{"file=" + img, "latency=sleep", "compactor=on",
                                        "compactor_quiet_ms=300", "statsfile=" + stats};
  const auto idle = std::chrono::milliseconds(1500);  // the scenario: no client yet
  {
    // nbdkit -r: the drive is idle as long, and the image stays as it was.
    const std::string before = file_fingerprint(img);
    NbdkitServer server(dir, params, {"-r"});
    std::this_thread::sleep_for(idle);
    NbdHandle h = server.connect();
    expect_contents(h.get(), want);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
    EXPECT_EQ(file_fingerprint(img), before) << "a read-only server wrote the image";
    EXPECT_EQ(read_json(stats).at("idle_steps").get<uint64_t>(), 0u);
  }
  NbdkitServer server(dir, params);
  std::this_thread::sleep_for(idle);
  NbdHandle h = server.connect();
  write_bytes(h.get(), 0, want[0]);  // the first request
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  nlohmann::json j = read_json(stats);
  SCOPED_TRACE(j.dump(2));
  EXPECT_EQ(j.at("requests").at("write").get<uint64_t>(), 1u);
  EXPECT_GT(j.at("idle_steps").get<uint64_t>(), 0u) << "no idle work before the first request";
  EXPECT_GE(j.at("compactor").at("tracks_compacted").get<uint64_t>(), 1u);
  EXPECT_EQ(j.at("requests").at("errors").get<uint64_t>(), 0u);
  nlohmann::json after;
  ASSERT_NO_FATAL_FAILURE(reopen_with_latency_none(dir, img, stats, want, &after));
}

TEST(CompactorOverNbd, OffMeansNoIdleWork) {
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=8M", "spare=5",
                            "latency=sleep", "compactor=off",
                            "statsfile=" + stats});
  NbdHandle h = server.connect();
  auto want = fill_and_fragment(h.get(), 8 * 1024 * 1024 / kBlock * 80 / 100);
  expect_contents(h.get(), want);
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  // compactor=off starts no idle worker at all: the final stats say so.
  nlohmann::json j = read_json(stats);
  SCOPED_TRACE(j.dump(2));
  EXPECT_FALSE(j.at("compactor").at("enabled").get<bool>());
  EXPECT_EQ(j.at("compactor").at("idle_steps").get<uint64_t>(), 0u);
  EXPECT_EQ(j.at("compactor").at("blocks_moved").get<uint64_t>(), 0u);
}

// mode=lld with latency=sleep: once no request has come for
// compactor_quiet_ms the disk drains its NVRAM into segments (with NVRAM)
// and cleans the segments the random updates left partly dead, one segment
// a step; every byte reads back, before and after a restart.
class CleanerOverNbd : public ::testing::TestWithParam<const char*> {};

TEST_P(CleanerOverNbd, RunsInIdleTimeWithLatencySleepAndKeepsEveryByte) {
  const std::string mode = GetParam();
  TempDir dir;
  const std::string img = dir.file("disk.img"), stats = dir.file("stats.json");
  const uint64_t blocks = 8 * 1024 * 1024 / kBlock * 80 / 100;
  std::vector<std::vector<uint8_t>> want;
  {
    NbdkitServer server(dir, with_mode({"file=" + img, "size=8M", "latency=sleep",
                                        "compactor_quiet_ms=20", "statsfile=" + stats},
                                       mode));
    NbdHandle h = server.connect();
    want = fill_and_fragment(h.get(), blocks);
    nlohmann::json j = wait_for_stats(
        stats,
        [](const nlohmann::json& s) {
          const auto& l = s.at("lld");
          return l.at("idle_cleans").get<uint64_t>() >= 1 &&
                 l.at("nvram_buffered_blocks").get<uint64_t>() == 0;
        },
        std::chrono::seconds(60));
    SCOPED_TRACE(j.dump(2));
    const auto& l = j.at("lld");
    ASSERT_GE(l.at("idle_cleans").get<uint64_t>(), 1u) << "the cleaner never ran in idle time";
    EXPECT_EQ(l.at("nvram_buffered_blocks").get<uint64_t>(), 0u) << "the NVRAM was not drained";
    EXPECT_EQ(l.at("nvram_used_records").get<uint64_t>(), 0u);
    EXPECT_GT(l.at("cleaner_blocks_moved").get<uint64_t>(), 0u);
    EXPECT_GT(l.at("write_amplification").get<double>(), 1.0);  // moves are physical writes
    EXPECT_EQ(j.at("requests").at("errors").get<uint64_t>(), 0u);
    expect_contents(h.get(), want);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  // Restart with latency=none: the same bytes, the image opened cleanly, and
  // no idle work.
  nlohmann::json j;
  ASSERT_NO_FATAL_FAILURE(reopen_with_latency_none(dir, img, stats, want, &j));
  SCOPED_TRACE(j.dump(2));
  EXPECT_TRUE(j.at("recovery").at("clean").get<bool>());
  EXPECT_EQ(j.at("lld").at("idle_cleans").get<uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, CleanerOverNbd, ::testing::Values("lld", "lld_nvram0"), ModeName);

}  // namespace
}  // namespace vld::test
