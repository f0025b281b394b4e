// profile=phases: the stats file's host_phases_us (docs/stats.md, "Host
// time by phase"): each write and flush timed, the phases and other
// summing to the total, the phases a mode=vld write goes through nonzero;
// and without profile= no such key. Counts and shape only, no timings.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <string>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr const char* kPhases[] = {"allocator", "map", "checksum", "store_io", "stats", "other"};

TEST(StatsHostPhases, ProfilePhasesTimesEachWriteAndFlushByPhase) {
  constexpr int kWrites = 20;
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "mode=vld",
                            "latency=none", "statsfile=" + stats, "stats_interval=0",
                            "profile=phases"});
  {
    NbdHandle h = server.connect();
    for (int i = 0; i < kWrites; ++i) {
      write_bytes(h.get(), i * 65536, pattern_bytes(i * 65536, 4096, 1));
      check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
    }
    read_bytes(h.get(), 0, 4096);  // not timed
    nbd_shutdown(h.get(), 0);
  }
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  const nlohmann::json j = read_json(stats).at("host_phases_us");
  SCOPED_TRACE(j.dump());
  EXPECT_EQ(j.at("writes"), kWrites);
  EXPECT_EQ(j.at("requests"), 2 * kWrites);
  for (const char* part : {"sum", "per_write"}) {
    const nlohmann::json& p = j.at(part);
    double phases = 0;
    for (const char* k : kPhases) {
      EXPECT_GT(p.at(k).get<double>(), 0.0) << part << "." << k;
      phases += p.at(k).get<double>();
    }
    EXPECT_NEAR(phases, p.at("total").get<double>(), 1e-6 * p.at("total").get<double>()) << part;
    EXPECT_EQ(p.size(), std::size(kPhases) + 1) << part;
  }
}

TEST(StatsHostPhases, WithoutProfileThereIsNoKey) {
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "latency=none",
                            "statsfile=" + stats, "stats_interval=0", "profile=none"});
  {
    NbdHandle h = server.connect();
    write_bytes(h.get(), 0, pattern_bytes(0, 4096, 1));
  }
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  EXPECT_FALSE(read_json(stats).contains("host_phases_us"));
}

}  // namespace
}  // namespace vld::test
