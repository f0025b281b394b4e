#include <gtest/gtest.h>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

TEST(Smoke, ServesTheAdvertisedSize) {
  TempDir dir;
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "latency=none"});
  NbdHandle h = server.connect();
  EXPECT_EQ(nbd_get_size(h.get()), 16 << 20);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0);
}

}  // namespace
}  // namespace vld::test
