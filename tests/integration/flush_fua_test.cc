// Flush and FUA reach the plugin as such (FUA is native, not emulated by
// nbdkit with an extra flush), counted in the stats file written at exit.
#include <gtest/gtest.h>
#include <libnbd.h>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

class FlushAndFua : public ::testing::TestWithParam<const char*> {};

TEST_P(FlushAndFua, ReachThePluginAndAreCounted) {
  constexpr int K = 7, F = 5, L = 3;  // plain writes, FUA writes, flushes
  const std::string mode = GetParam();
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=none",
                                      "statsfile=" + stats},
                                     mode));
  NbdHandle h = server.connect();
  ASSERT_EQ(nbd_can_fua(h.get()), 1);
  int op = 0;
  for (int i = 0; i < K; ++i, ++op)
    write_bytes(h.get(), op * 65536, pattern_bytes(op * 65536, 8192, 1));
  for (int i = 0; i < F; ++i, ++op)
    write_bytes(h.get(), op * 65536, pattern_bytes(op * 65536, 8192, 1), LIBNBD_CMD_FLAG_FUA);
  for (int i = 0; i < L; ++i) check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();

  nlohmann::json j = read_json(stats);
  SCOPED_TRACE(j.dump(2));
  const auto& r = j.at("requests");
  EXPECT_EQ(j.at("mode").get<std::string>(), mode_stat_name(mode));
  EXPECT_EQ(r.at("write").get<int64_t>(), K + F);
  EXPECT_EQ(r.at("write_fua").get<int64_t>(), F);
  EXPECT_EQ(r.at("flush").get<int64_t>(), L);
  EXPECT_EQ(r.at("errors").get<int64_t>(), 0);
  if (acks_are_durable(mode)) {
    // Every write is appended to the NVRAM and synced before its reply, FUA
    // or not; a flush then has nothing left to make durable.
    EXPECT_EQ(j.at("backing_syncs").get<int64_t>(), K + F);
    EXPECT_EQ(j.at("lld").at("nvram_records_written").get<int64_t>(), (K + F) * 2);
  } else if (is_lld(mode)) {
    // nvram=0: plain writes wait in the open segment's memory copy; each FUA
    // write and each flush writes it out and syncs once.
    EXPECT_EQ(j.at("backing_syncs").get<int64_t>(), F + L);
  } else {
    EXPECT_GE(j.at("backing_syncs").get<int64_t>(), F + L);  // one fdatasync each
  }
  EXPECT_EQ(j.at("bytes_written").get<int64_t>(), (K + F) * 8192);
  EXPECT_EQ(j.at("latency").get<std::string>(), "none");
}

INSTANTIATE_TEST_SUITE_P(Modes, FlushAndFua, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
