// Flush and FUA reach the plugin as such (FUA is native, not emulated by
// nbdkit with an extra flush), counted in the stats file written at exit.
#include <gtest/gtest.h>
#include <libnbd.h>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

TEST(FlushAndFua, ReachThePluginAndAreCounted) {
  constexpr int K = 7, F = 5, L = 3;  // plain writes, FUA writes, flushes
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "latency=none",
                            "statsfile=" + stats});
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
  EXPECT_EQ(r.at("write").get<int64_t>(), K + F);
  EXPECT_EQ(r.at("write_fua").get<int64_t>(), F);
  EXPECT_EQ(r.at("flush").get<int64_t>(), L);
  EXPECT_EQ(r.at("errors").get<int64_t>(), 0);
  EXPECT_GE(j.at("backing_syncs").get<int64_t>(), F + L);  // one fdatasync each
  EXPECT_EQ(j.at("bytes_written").get<int64_t>(), (K + F) * 8192);
  EXPECT_EQ(j.at("latency").get<std::string>(), "none");
}

}  // namespace
}  // namespace vld::test
