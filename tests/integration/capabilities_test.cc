// What the plugin advertises in the NBD handshake, as a client sees it.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <string>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr int64_t kMiB = 1 << 20;

// Every mode advertises the same, but for the largest request: the NBD
// surface does not depend on how the disk keeps its blocks, but mode=vld
// and mode=lld advertise no longer request than their spare takes whole
// beside a full export (Disk::max_atomic_write_bytes; clause 3), which on
// this 16 MiB disk is less than 32 MiB.
class Capabilities : public ::testing::TestWithParam<const char*> {};

TEST_P(Capabilities, AsAdvertised) {
  TempDir dir;
  NbdkitServer server(dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=none"},
                                     GetParam()));
  NbdHandle h = connect_with_meta_context(server, LIBNBD_CONTEXT_BASE_ALLOCATION);
  nbd_handle* nbd = h.get();

  EXPECT_EQ(nbd_get_size(nbd), 16 * kMiB);
  EXPECT_EQ(nbd_is_rotational(nbd), 1);
  EXPECT_EQ(nbd_is_read_only(nbd), 0);
  EXPECT_EQ(nbd_can_flush(nbd), 1);
  EXPECT_EQ(nbd_can_fua(nbd), 1);  // NBDKIT_FUA_NATIVE
  EXPECT_EQ(nbd_can_trim(nbd), 1);
  EXPECT_EQ(nbd_can_zero(nbd), 1);
  EXPECT_EQ(nbd_can_fast_zero(nbd), 1);
  EXPECT_EQ(nbd_can_multi_conn(nbd), 1);
  EXPECT_EQ(nbd_can_cache(nbd), 0);  // NBDKIT_CACHE_NONE
  // nbd_can_df is not checked: nbdkit advertises DF by itself whenever
  // structured replies are negotiated; the plugin has no say in it.

  EXPECT_EQ(nbd_get_block_size(nbd, LIBNBD_SIZE_MINIMUM), 512);
  EXPECT_EQ(nbd_get_block_size(nbd, LIBNBD_SIZE_PREFERRED), 4096);
  const int64_t max = nbd_get_block_size(nbd, LIBNBD_SIZE_MAXIMUM);
  if (is_lld(GetParam())) {
    // 4 MiB of spare segments, a few kept free.
    EXPECT_GE(max, 2 * kMiB);
    EXPECT_LT(max, 8 * kMiB);
  } else if (std::string(GetParam()) == "vld") {
    // A third of what the spare holds however fragmented.
    EXPECT_GE(max, 1 * kMiB);
    EXPECT_LT(max, 4 * kMiB);
  } else {
    EXPECT_EQ(max, 32 * kMiB);
  }
  EXPECT_EQ(max % 4096, 0);

  EXPECT_EQ(nbd_can_meta_context(nbd, LIBNBD_CONTEXT_BASE_ALLOCATION), 1);

  nbd_shutdown(nbd, 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

// The preferred block size is the image's block=, also when the image is
// reopened without block=.
TEST_P(Capabilities, PreferredBlockSizeIsTheImagesBlock) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  {
    NbdkitServer server(
        dir, with_mode({"file=" + file, "size=16M", "block=8192", "latency=none"}, GetParam()));
    NbdHandle h = server.connect();
    EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_MINIMUM), 512);
    EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_PREFERRED), 8192);
    EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_MAXIMUM) % 8192, 0);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  NbdkitServer server(dir, {"file=" + file, "latency=none"});
  NbdHandle h = server.connect();
  EXPECT_EQ(nbd_get_size(h.get()), 16 * kMiB);
  EXPECT_EQ(nbd_get_block_size(h.get(), LIBNBD_SIZE_PREFERRED), 8192);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

// A disk whose spare holds 32 MiB whole advertises it; a smaller spare
// advertises what it holds, at least a block, and the NBD client sees no
// more.
TEST(Capabilities, VldAndLldAdvertiseWhatTheirSpareTakesWhole) {
  TempDir dir;
  const auto max_of = [&](const std::vector<std::string>& params) {
    NbdkitServer server(dir, params);
    NbdHandle h = server.connect();
    const int64_t max = nbd_get_block_size(h.get(), LIBNBD_SIZE_MAXIMUM);
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
    return max;
  };
  for (const char* mode : {"mode=vld", "mode=lld"}) {
    EXPECT_EQ(max_of({"file=" + dir.file(std::string(mode + 5) + ".img"), "size=1G", mode,
                      "latency=none"}),
              32 * kMiB)
        << mode;
  }
  const int64_t small = max_of({"file=" + dir.file("small.img"), "size=16M", "spare=5",
                                "mode=lld", "nvram=0", "latency=none"});
  EXPECT_LT(small, 2 * kMiB);
  EXPECT_GE(small, 4096);
  EXPECT_EQ(small % 4096, 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, Capabilities, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
