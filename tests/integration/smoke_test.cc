#include <gtest/gtest.h>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

class Smoke : public ::testing::TestWithParam<const char*> {};

TEST_P(Smoke, ServesTheAdvertisedSize) {
  TempDir dir;
  NbdkitServer server(dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=none"},
                                     GetParam()));
  NbdHandle h = server.connect();
  EXPECT_EQ(nbd_get_size(h.get()), 16 << 20);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, Smoke, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
