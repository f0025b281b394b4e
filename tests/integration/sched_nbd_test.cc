// sched=sptf over NBD with latency=sleep: requests in flight together queue
// in the controller and are chosen there, and the data is right. The order
// itself is wall-time dependent (which request reaches the drive when), so
// it is pinned in tests/unit/command_queue_controller_test.cc, not here.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <random>
#include <vector>

#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr int kInFlight = 16;
constexpr uint64_t kBlock = 4096;

TEST(SchedNbd, SptfQueuesRequestsInFlightTogetherAndServesThemAll) {
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=64M", "mode=inplace",
                            "latency=sleep", "sched=sptf", "statsfile=" + stats});
  NbdHandle h = server.connect();
  std::mt19937_64 rng(16);
  std::vector<uint64_t> offsets;
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < kInFlight; ++i) {
    // One block in each sixteenth of the disk: distinct, scattered.
    offsets.push_back(i * (4ull << 20) + rng() % 1024 * kBlock);
    data.push_back(pattern_bytes(offsets.back(), kBlock, 3));
  }
  for (int i = 0; i < kInFlight; ++i)  // all sent before any reply comes
    check_nbd(nbd_aio_pwrite(h.get(), data[i].data(), kBlock, offsets[i],
                             NBD_NULL_COMPLETION, 0),
              "nbd_aio_pwrite");
  while (nbd_aio_in_flight(h.get()) > 0) check_nbd(nbd_poll(h.get(), -1), "nbd_poll");
  for (int i = 0; i < kInFlight; ++i)
    EXPECT_EQ(first_difference(read_bytes(h.get(), offsets[i], kBlock), data[i], offsets[i]), "");
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();

  const nlohmann::json s = read_json(stats);
  SCOPED_TRACE(s["sched"].dump());
  EXPECT_EQ(s["sched"]["policy"], "sptf");
  // Every write and read was chosen from the queue; the first write took
  // milliseconds of drive time, so the others queued behind it.
  EXPECT_EQ(s["sched"]["picks"].get<uint64_t>(), 2u * kInFlight);
  EXPECT_GE(s["sched"]["max_queue_depth"].get<uint64_t>(), 2u);
  EXPECT_LE(s["sched"]["reordered"].get<uint64_t>(), s["sched"]["picks"].get<uint64_t>());
}

TEST(SchedNbd, FifoIsTheDefaultAndQueuesNothingInTheController) {
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + dir.file("disk.img"), "size=16M", "mode=inplace",
                            "latency=sleep", "statsfile=" + stats});
  NbdHandle h = server.connect();
  write_bytes(h.get(), 0, pattern_bytes(0, kBlock, 4));
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  const nlohmann::json s = read_json(stats);
  EXPECT_EQ(s["sched"]["policy"], "fifo");
  EXPECT_EQ(s["sched"]["picks"].get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace vld::test
