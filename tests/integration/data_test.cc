// The bytes a client writes are the bytes it reads: at random places, after
// a restart, across two connections, and with latency=sleep; in every mode
// (modes.h).
#include <gtest/gtest.h>
#include <libnbd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kSector = 512;
constexpr uint64_t kChunk = 4 << 20;  // whole-disk comparisons go in 4 MiB reads

// Reads the whole disk through h and compares it with shadow.
void ExpectDiskEquals(nbd_handle* h, const std::vector<uint8_t>& shadow) {
  for (uint64_t off = 0; off < shadow.size(); off += kChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, shadow.size() - off));
    std::vector<uint8_t> want(shadow.begin() + off, shadow.begin() + off + n);
    EXPECT_EQ(first_difference(read_bytes(h, off, n), want, off), "");
  }
}

class ReadAfterWrite : public ::testing::TestWithParam<const char*> {};
class Restart : public ::testing::TestWithParam<const char*> {};
class MultiConn : public ::testing::TestWithParam<const char*> {};
class LatencySleep : public ::testing::TestWithParam<const char*> {};

TEST_P(ReadAfterWrite, RandomSectorAlignedRequestsMatchAShadow) {
  constexpr uint64_t kSize = 32 << 20;
  constexpr uint64_t kMaxSectors = (256 << 10) / kSector;
  TempDir dir;
  NbdkitServer server(
      dir, with_mode({"file=" + dir.file("disk.img"), "size=32M", "latency=none"}, GetParam()));
  NbdHandle h = server.connect();
  ASSERT_EQ(nbd_get_size(h.get()), static_cast<int64_t>(kSize));

  std::vector<uint8_t> shadow(kSize, 0);  // a new disk reads as zeros
  std::mt19937_64 rng(0x5eed1234);
  std::uniform_int_distribution<uint64_t> sectors(1, kMaxSectors);
  std::uniform_int_distribution<int> byte(0, 255);
  int writes = 0, reads = 0;
  for (int i = 0; i < 400; ++i) {
    const uint64_t len = sectors(rng) * kSector;
    const uint64_t off =
        std::uniform_int_distribution<uint64_t>(0, (kSize - len) / kSector)(rng) * kSector;
    if (rng() % 5 < 3) {
      std::vector<uint8_t> data(len);
      for (auto& b : data) b = static_cast<uint8_t>(byte(rng));
      write_bytes(h.get(), off, data);
      std::memcpy(shadow.data() + off, data.data(), len);
      ++writes;
    } else {
      std::vector<uint8_t> want(shadow.begin() + off, shadow.begin() + off + len);
      ASSERT_EQ(first_difference(read_bytes(h.get(), off, len), want, off), "")
          << "request " << i << ": read of " << len << " bytes at " << off;
      ++reads;
    }
  }
  ASSERT_GT(writes, 100);
  ASSERT_GT(reads, 100);
  ExpectDiskEquals(h.get(), shadow);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

TEST_P(Restart, DataSurvivesACleanStop) {
  constexpr uint64_t kSize = 16 << 20;
  TempDir dir;
  const std::string file = dir.file("disk.img");
  std::vector<uint8_t> shadow(kSize, 0);
  {
    NbdkitServer server(dir, with_mode({"file=" + file, "size=16M", "latency=none"}, GetParam()));
    NbdHandle h = server.connect();
    // Scattered extents, aligned and not, including the first and last sector.
    const std::pair<uint64_t, uint64_t> extents[] = {
        {0, 4096}, {12800, 3 * 512}, {1 << 20, 300 << 10}, {7 << 20, 1 << 20},
        {kSize - 512, 512}};
    for (auto [off, len] : extents) {
      auto data = pattern_bytes(off, len, 3);
      write_bytes(h.get(), off, data);
      std::memcpy(shadow.data() + off, data.data(), len);
    }
    check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  {
    // Reopened without size=: the image says how big it is.
    NbdkitServer server(dir, {"file=" + file, "latency=none"});
    NbdHandle h = server.connect();
    ASSERT_EQ(nbd_get_size(h.get()), static_cast<int64_t>(kSize));
    ExpectDiskEquals(h.get(), shadow);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  {
    // size= equal to the image's is accepted.
    NbdkitServer server(dir, {"file=" + file, "size=16M", "latency=none"});
    NbdHandle h = server.connect();
    EXPECT_EQ(nbd_get_size(h.get()), static_cast<int64_t>(kSize));
    ExpectDiskEquals(h.get(), shadow);
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
}

TEST_P(MultiConn, TwoConnectionsSeeEachOthersWrites) {
  TempDir dir;
  NbdkitServer server(
      dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=none"}, GetParam()));
  NbdHandle a = server.connect();
  NbdHandle b = server.connect();  // both open at once
  ASSERT_EQ(nbd_aio_is_ready(a.get()), 1);
  ASSERT_EQ(nbd_aio_is_ready(b.get()), 1);
  EXPECT_EQ(nbd_can_multi_conn(a.get()), 1);
  EXPECT_EQ(nbd_can_multi_conn(b.get()), 1);

  // Written on A, read on B.
  auto one = pattern_bytes(1 << 20, 64 << 10, 11);
  write_bytes(a.get(), 1 << 20, one);
  EXPECT_EQ(first_difference(read_bytes(b.get(), 1 << 20, one.size()), one, 1 << 20), "");

  // Written on B, read on A.
  auto two = pattern_bytes(5 << 20, 8 << 10, 12);
  write_bytes(b.get(), 5 << 20, two);
  EXPECT_EQ(first_difference(read_bytes(a.get(), 5 << 20, two.size()), two, 5 << 20), "");

  // Written on A, flushed on B: both see it.
  auto three = pattern_bytes(9 << 20, 128 << 10, 13);
  write_bytes(a.get(), 9 << 20, three);
  check_nbd(nbd_flush(b.get(), 0), "nbd_flush on B");
  EXPECT_EQ(first_difference(read_bytes(a.get(), 9 << 20, three.size()), three, 9 << 20), "");
  EXPECT_EQ(first_difference(read_bytes(b.get(), 9 << 20, three.size()), three, 9 << 20), "");

  // Both connections are still usable and the server stops cleanly.
  EXPECT_EQ(nbd_aio_is_ready(a.get()), 1);
  EXPECT_EQ(nbd_aio_is_ready(b.get()), 1);
  nbd_shutdown(a.get(), 0);
  nbd_shutdown(b.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

// latency=sleep holds each reply until its simulated completion; it must still
// serve correct data. No timing is asserted.
TEST_P(LatencySleep, ServesCorrectData) {
  TempDir dir;
  NbdkitServer server(
      dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=sleep"}, GetParam()));
  NbdHandle h = server.connect();
  const uint64_t offsets[] = {0, 3 << 20, (15 << 20) + 4096};
  for (uint64_t off : offsets) {
    auto data = pattern_bytes(off, 16 << 10, 21);
    write_bytes(h.get(), off, data, off == 0 ? LIBNBD_CMD_FLAG_FUA : 0);
  }
  check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
  for (uint64_t off : offsets) {
    auto want = pattern_bytes(off, 16 << 10, 21);
    EXPECT_EQ(first_difference(read_bytes(h.get(), off, want.size()), want, off), "");
  }
  // Untouched space still reads as zeros.
  EXPECT_EQ(first_difference(read_bytes(h.get(), 8 << 20, 4096), std::vector<uint8_t>(4096, 0),
                             8 << 20),
            "");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Modes, ReadAfterWrite, ::testing::ValuesIn(kAllModes), ModeName);
INSTANTIATE_TEST_SUITE_P(Modes, Restart, ::testing::ValuesIn(kAllModes), ModeName);
INSTANTIATE_TEST_SUITE_P(Modes, MultiConn, ::testing::ValuesIn(kAllModes), ModeName);
INSTANTIATE_TEST_SUITE_P(Modes, LatencySleep, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
