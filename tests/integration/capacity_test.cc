// mode=vld names physical sectors in 32 bits (core/image_format.h:
// kMaxPlatterSectors): nbdkit refuses to create an image whose platters
// would need more, with one line naming size= and what will do, and creates
// nothing; the largest image it accepts is served, and opens again.
//
// The geometry keeps the test light at 2 TiB of (sparse) platters: 4096
// sectors a track keeps the per-track arrays small (1M tracks), 64 KiB
// blocks and spare=1000 keep the map small (3M blocks, 24 MiB). The free
// bitmap is one bit per sector whatever the shape: 512 MiB at the limit.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

// 4096 sectors x 16 heads = 65536 sectors a cylinder: 65535 cylinders at
// most. With block=64K and spare=1000 this export needs exactly 65535; one
// block more needs 65536 (2^32 sectors).
constexpr uint64_t kLargest = 199810547712;  // 186.1 GiB
const std::vector<std::string> kShape = {"mode=vld",          "geometry=st19101",
                                         "sectors_per_track=4096", "cylinders=100000",
                                         "block=65536",       "spare=1000",
                                         "latency=none"};

std::vector<std::string> with(std::vector<std::string> params, const std::string& file,
                              uint64_t size) {
  params.push_back("file=" + file);
  params.push_back("size=" + std::to_string(size));
  return params;
}

TEST(Capacity, OneBlockPastTheAddressLimitIsRefusedAndNothingCreated) {
  TempDir dir;
  const std::string file = dir.file("over.img");
  const RunResult r = run_nbdkit(with(kShape, file, kLargest + 65536));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("size="), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("mode=vld addresses at most 2 TiB of platters"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("use size<=186G"), std::string::npos) << r.stderr_text;
  EXPECT_FALSE(std::ifstream(file).good()) << file << " was created";
}

TEST(Capacity, TheLargestAcceptedImageServesAndReopens) {
  TempDir dir;
  const std::string file = dir.file("largest.img");
  const std::vector<uint8_t> first = pattern_bytes(0, 65536, 1);
  const std::vector<uint8_t> last = pattern_bytes(kLargest - 65536, 65536, 2);
  {
    NbdkitServer server(dir, with(kShape, file, kLargest));
    NbdHandle h = server.connect();
    EXPECT_EQ(nbd_get_size(h.get()), static_cast<int64_t>(kLargest));
    check_nbd(nbd_pwrite(h.get(), first.data(), first.size(), 0, 0), "pwrite first");
    check_nbd(nbd_pwrite(h.get(), last.data(), last.size(), kLargest - 65536, 0), "pwrite last");
    check_nbd(nbd_flush(h.get(), 0), "flush");
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
  NbdkitServer again(dir, {"file=" + file, "latency=none"});
  NbdHandle h = again.connect();
  std::vector<uint8_t> buf(65536);
  check_nbd(nbd_pread(h.get(), buf.data(), buf.size(), 0, 0), "pread first");
  EXPECT_EQ(buf, first);
  check_nbd(nbd_pread(h.get(), buf.data(), buf.size(), kLargest - 65536, 0), "pread last");
  EXPECT_EQ(buf, last);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(again.stop(), 0) << again.stderr_text();
}

}  // namespace
}  // namespace vld::test
