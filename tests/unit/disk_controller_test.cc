// DiskController: range checks, the two latency modes (back to back, or
// from arrival with queueing), statistics, shutdown, and the read-only to
// writable switch (make_writable), over an InplaceDisk in memory.
// (Idle steps and preemption are tested with the compactor, compactor_test.cc.)
#include "core/disk_controller.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <future>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/inplace/inplace_disk.h"
#include "core/store/backing_store.h"
#include "core/store/fault_store.h"
#include "core/util/error.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kExport = 1 << 20;  // 256 blocks of 4 KiB
constexpr uint64_t kBlock = 4096;
constexpr int64_t kOverheadNs = 100'000;  // st19101, Table 1

Superblock small_superblock() { return test::st19101_superblock(DiskMode::kInplace, kExport); }

SimTime at_ns(int64_t ns) { return kSimEpoch + SimDuration{ns}; }

std::vector<std::byte> pattern(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng() % 255 + 1);  // never zero
  return v;
}

// A new in-place disk on an image in memory.
std::unique_ptr<Disk> memory_inplace(const Superblock& sb) {
  return std::make_unique<InplaceDisk>(std::make_unique<MemoryBackingStore>(sb.image_bytes()), sb);
}

std::unique_ptr<DiskController> controller(MemoryBackingStore** store = nullptr) {
  Superblock sb = small_superblock();
  auto s = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  if (store) *store = s.get();
  return std::make_unique<DiskController>(std::make_unique<InplaceDisk>(std::move(s), sb));
}

template <typename F>
void expect_error(int err, F f, const char* what) {
  try {
    f();
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), err) << what << ": " << e.what();
  }
}

TEST(DiskController, OutOfRangeRequestsFailWithEinval) {
  auto dc = controller();
  std::vector<std::byte> buf(kBlock);
  expect_error(EINVAL, [&] { dc->write(kExport - 512, buf, false, std::nullopt); }, "write");
  expect_error(EINVAL, [&] { dc->read(kExport, buf, std::nullopt); }, "read at end");
  expect_error(EINVAL, [&] { dc->read(kExport + 1, std::span(buf).first(0), std::nullopt); },
               "empty read past end");
  expect_error(EINVAL, [&] { dc->trim(0, kExport + 1, false, std::nullopt); }, "trim");
  expect_error(EINVAL, [&] { dc->zero(kExport - 1, 2, ZeroFlags{}, std::nullopt); }, "zero");
  expect_error(EINVAL, [&] { dc->extents(1, kExport, [](uint64_t, uint64_t, ExtentType) {}); },
               "extents");
  // An offset near 2^64 must not wrap around.
  expect_error(EINVAL, [&] { dc->read(UINT64_MAX - 100, buf, std::nullopt); }, "wrap");
  expect_error(EINVAL, [&] { dc->trim(UINT64_MAX - 100, 200, false, std::nullopt); }, "wrap");
  // Nothing was served.
  DiskStats st = dc->stats();
  EXPECT_EQ(st.requests.read + st.requests.write + st.requests.trim + st.requests.zero, 0u);
  EXPECT_EQ(st.busy.count(), 0);
  // The last byte, and an empty request at the end, are fine.
  EXPECT_NO_THROW(dc->write(kExport - 1, std::span(buf).first(1), false, std::nullopt));
  EXPECT_NO_THROW(dc->read(kExport, std::span(buf).first(0), std::nullopt));
}

TEST(DiskController, LatencyNoneRunsRequestsBackToBack) {
  auto dc = controller();
  auto data = pattern(kBlock, 14);
  std::mt19937_64 rng(15);
  SimTime prev_end = kSimEpoch;
  SimDuration busy{};
  for (int i = 0; i < 50; ++i) {
    RequestTiming t = dc->write((rng() % (kExport / kBlock)) * kBlock, data, false, std::nullopt);
    EXPECT_EQ(t.start, prev_end) << i;
    EXPECT_EQ(t.queued.count(), 0);
    EXPECT_EQ(t.end - t.start, t.service.total());
    EXPECT_GT(t.end, t.start);
    busy += t.end - t.start;
    prev_end = t.end;
  }
  RequestTiming f = dc->flush(std::nullopt);
  EXPECT_EQ(f.start, prev_end);
  EXPECT_EQ((f.end - f.start).count(), kOverheadNs);
  busy += f.end - f.start;
  DiskStats st = dc->stats();
  EXPECT_EQ(st.busy, busy);
  EXPECT_EQ(st.now, f.end);
  EXPECT_EQ(st.queue_wait.max_ns(), 0);
}

TEST(DiskController, LatencySleepStartsAtArrivalOrQueues) {
  auto dc = controller();
  // Flushes cost exactly the overhead, 100 us.
  RequestTiming a = dc->flush(at_ns(1'000'000));  // idle drive: starts on arrival
  EXPECT_EQ(a.start, at_ns(1'000'000));
  EXPECT_EQ(a.end, at_ns(1'100'000));
  EXPECT_EQ(a.queued.count(), 0);
  RequestTiming b = dc->flush(at_ns(5'000'000));  // after the drive went idle
  EXPECT_EQ(b.start, at_ns(5'000'000));
  EXPECT_EQ(b.end, at_ns(5'100'000));
  EXPECT_EQ(b.queued.count(), 0);
  RequestTiming c = dc->flush(at_ns(5'040'000));  // while busy: queued 60 us
  EXPECT_EQ(c.start, at_ns(5'100'000));
  EXPECT_EQ(c.end, at_ns(5'200'000));
  EXPECT_EQ(c.queued.count(), 60'000);
  RequestTiming d = dc->flush(at_ns(5'000'000));  // arrived long before: queued 200 us
  EXPECT_EQ(d.start, at_ns(5'200'000));
  EXPECT_EQ(d.queued.count(), 200'000);
  RequestTiming e = dc->flush(at_ns(5'300'000));  // exactly at busy_until
  EXPECT_EQ(e.start, at_ns(5'300'000));
  EXPECT_EQ(e.queued.count(), 0);

  // A write arriving mid-flight: start = busy_until, end = start + service.
  auto data = pattern(kBlock, 16);
  RequestTiming w = dc->write(0, data, false, at_ns(5'350'000));
  EXPECT_EQ(w.start, at_ns(5'400'000));
  EXPECT_EQ(w.queued.count(), 50'000);
  EXPECT_EQ(w.end - w.start, w.service.total());

  DiskStats st = dc->stats();
  EXPECT_EQ(st.queue_wait.count(), 6u);
  EXPECT_EQ(st.queue_wait.max_ns(), 200'000);
  EXPECT_DOUBLE_EQ(st.queue_wait.mean_ns(), (60'000 + 200'000 + 50'000) / 6.0);
  EXPECT_EQ(st.busy.count(), 5 * 100'000 + (w.end - w.start).count());
}

TEST(DiskController, StatsCountEachCommand) {
  MemoryBackingStore* store = nullptr;
  auto dc = controller(&store);
  auto data = pattern(3 * kBlock, 17);
  std::vector<std::byte> out(2 * kBlock);
  dc->write(0, data, false, std::nullopt);
  dc->write(3 * kBlock, std::span(data).first(kBlock), true, std::nullopt);
  dc->write(100, std::span(data).first(10), true, std::nullopt);
  dc->read(0, out, std::nullopt);
  dc->read(kBlock, std::span(out).first(100), std::nullopt);
  dc->read(kBlock, std::span(out).first(100), std::nullopt);
  dc->flush(std::nullopt);
  dc->trim(0, kBlock, false, std::nullopt);
  ZeroFlags z;
  dc->zero(8 * kBlock, 2 * kBlock, z, std::nullopt);
  z.may_trim = z.fast = true;
  dc->zero(10 * kBlock, kBlock, z, std::nullopt);
  z.may_trim = false;
  EXPECT_THROW(dc->zero(12 * kBlock, kBlock, z, std::nullopt), Error);  // ENOTSUP
  dc->extents(0, kExport, [](uint64_t, uint64_t, ExtentType) {});

  DiskStats st = dc->stats();
  EXPECT_EQ(st.requests.write, 3u);
  EXPECT_EQ(st.requests.write_fua, 2u);
  EXPECT_EQ(st.requests.read, 3u);
  EXPECT_EQ(st.requests.flush, 1u);
  EXPECT_EQ(st.requests.trim, 1u);
  EXPECT_EQ(st.requests.zero, 2u);
  EXPECT_EQ(st.requests.extents, 1u);
  EXPECT_EQ(st.requests.errors, 1u);
  EXPECT_EQ(st.bytes_written, 3 * kBlock + kBlock + 10);
  EXPECT_EQ(st.bytes_read, 2 * kBlock + 200);
  EXPECT_EQ(st.physical_writes, 3u + 1u + 1u + 2u);  // + the allocated zeros
  EXPECT_EQ(st.physical_reads, 2u + 1u + 1u);
  EXPECT_EQ(st.backing_syncs, 3u);  // two FUA writes and a flush
  EXPECT_EQ(store->syncs(), 3u);
  EXPECT_EQ(st.write_latency.count(), 3u);
  EXPECT_EQ(st.read_latency.count(), 3u);
  EXPECT_EQ(st.flush_latency.count(), 1u);
  EXPECT_EQ(st.flush_latency.max_ns(), kOverheadNs);
  EXPECT_EQ(st.write_breakdown_sum.overhead.count(), 3 * kOverheadNs);
  EXPECT_EQ(st.busy, st.now - kSimEpoch);  // back to back from time zero
  // Utilization: the memory store starts with every export block live; the
  // trim and the fast zero removed two.
  EXPECT_DOUBLE_EQ(dc->utilization(),
                   static_cast<double>(kExport / kBlock - 2) /
                       static_cast<double>(dc->superblock().physical_blocks()));
}

TEST(DiskController, ClosedDiskRefusesRequests) {
  MemoryBackingStore* store = nullptr;
  auto dc = controller(&store);
  dc->close();
  EXPECT_EQ(store->syncs(), 1u);
  dc->close();  // idempotent
  EXPECT_EQ(store->syncs(), 1u);
  std::vector<std::byte> buf(512);
  expect_error(ESHUTDOWN, [&] { dc->read(0, buf, std::nullopt); }, "read after close");
  expect_error(ESHUTDOWN, [&] { dc->flush(std::nullopt); }, "flush after close");
}

// The first writable connection: the read-only disk is replaced by the
// writable one, once; a failure puts a read-only disk back and rethrows.
TEST(DiskController, MakeWritableSwitchesOnceAndFallsBackOnFailure) {
  Superblock sb = small_superblock();
  auto open_inplace = [&] { return memory_inplace(sb); };
  DiskController dc(open_inplace(), /*read_only=*/true);
  ASSERT_TRUE(dc.read_only());
  int writable_opens = 0, read_only_opens = 0;
  auto fail = [&]() -> std::unique_ptr<Disk> {
    ++writable_opens;
    throw Error("the image cannot be written", EIO);
  };
  auto reopen = [&]() -> std::unique_ptr<Disk> {
    ++read_only_opens;
    return open_inplace();
  };
  expect_error(EIO, [&] { dc.make_writable(fail, reopen); }, "failing open");
  EXPECT_EQ(writable_opens, 1);
  EXPECT_EQ(read_only_opens, 1) << "no read-only disk was put back";
  EXPECT_TRUE(dc.read_only());
  std::vector<std::byte> buf(kBlock);
  EXPECT_NO_THROW(dc.read(0, buf, std::nullopt)) << "the read-only disk does not serve";

  auto open = [&]() -> std::unique_ptr<Disk> {
    ++writable_opens;
    return open_inplace();
  };
  dc.make_writable(open, reopen);
  EXPECT_EQ(writable_opens, 2);
  EXPECT_FALSE(dc.read_only());
  dc.make_writable(open, reopen);  // writable already: a no-op
  EXPECT_EQ(writable_opens, 2);
  EXPECT_EQ(read_only_opens, 1);
  const std::vector<std::byte> data = pattern(kBlock, 3);
  dc.write(0, data, true, std::nullopt);
  dc.read(0, buf, std::nullopt);
  EXPECT_EQ(buf, data);
}

// While make_writable swaps the disks (under the lock, with no disk in
// place while the writable one opens), other threads still ask what does
// not change with the swap: the stats writer the superblock, a read-only
// connection the export size and its requests' range checks. They get the
// answers of the image as opened, not a disk being torn down (before, this
// test crashed: superblock() read the null disk).
TEST(DiskController, TheSuperblockAndRangeChecksNeedNoDiskDuringTheSwitch) {
  Superblock sb = small_superblock();
  auto open_inplace = [&] { return memory_inplace(sb); };
  DiskController dc(open_inplace(), /*read_only=*/true);
  std::promise<void> opening, asked;
  std::thread other([&] {
    opening.get_future().wait();  // make_writable holds the lock, no disk in place
    EXPECT_EQ(dc.superblock().export_bytes, kExport);
    EXPECT_EQ(dc.superblock().geometry.name, sb.geometry.name);
    std::vector<std::byte> buf(512);
    expect_error(EINVAL, [&] { dc.read(kExport, buf, std::nullopt); }, "read past the end");
    asked.set_value();
  });
  dc.make_writable(
      [&]() -> std::unique_ptr<Disk> {
        opening.set_value();
        asked.get_future().wait();
        return open_inplace();
      },
      open_inplace);
  other.join();
  EXPECT_FALSE(dc.read_only());
}

// The writable open must find the image the read-only one served: the
// superblock is answered without the lock on that promise.
TEST(DiskController, MakeWritableRefusesAnImageWhoseSuperblockChanged) {
  Superblock sb = small_superblock();
  Superblock other_sb = test::st19101_superblock(DiskMode::kInplace, 2 * kExport);
  DiskController dc(memory_inplace(sb), /*read_only=*/true);
  expect_error(EIO,
               [&] {
                 dc.make_writable([&] { return memory_inplace(other_sb); },
                                  [&] { return memory_inplace(sb); });
               },
               "a different image");
  EXPECT_TRUE(dc.read_only());
  EXPECT_EQ(dc.superblock().export_bytes, kExport);
  std::vector<std::byte> buf(512);
  EXPECT_NO_THROW(dc.read(kExport - 512, buf, std::nullopt)) << "the served image is back";

  // The read-only reopen finds the other image too: nothing of the served
  // image is left to serve, and the other one's size is not ours.
  expect_error(EIO,
               [&] {
                 dc.make_writable([&] { return memory_inplace(other_sb); },
                                  [&] { return memory_inplace(other_sb); });
               },
               "a different image, twice");
  expect_error(ESHUTDOWN, [&] { dc.read(0, buf, std::nullopt); }, "read after both opens");
}

// If the read-only disk cannot be put back either, the controller is shut
// down (every request fails) instead of serving without a disk.
TEST(DiskController, MakeWritableShutsDownWhenNeitherOpenWorks) {
  Superblock sb = small_superblock();
  DiskController dc(memory_inplace(sb), /*read_only=*/true);
  auto fail = [&]() -> std::unique_ptr<Disk> { throw Error("the image cannot be written", EIO); };
  auto fail_too = [&]() -> std::unique_ptr<Disk> { throw Error("nor read", ENOENT); };
  expect_error(EIO, [&] { dc.make_writable(fail, fail_too); }, "both opens fail");
  std::vector<std::byte> buf(512);
  expect_error(ESHUTDOWN, [&] { dc.read(0, buf, std::nullopt); }, "read without a disk");
  expect_error(ESHUTDOWN, [&] { dc.mode_report(); }, "mode report without a disk");
  expect_error(ESHUTDOWN, [&] { dc.utilization(); }, "utilization without a disk");
  EXPECT_EQ(dc.superblock().export_bytes, kExport);
  dc.close();  // nothing to close: no crash
}

// A request that fails in the disk counts as an error, takes no simulated
// time, and leaves the drive's clock where it was.
TEST(DiskController, AFailedRequestCostsNoTime) {
  Superblock sb = small_superblock();
  MemoryBackingStore image(sb.image_bytes());
  auto faulty = std::make_unique<FaultyStore>(image);
  FaultyStore* faults = faulty.get();
  DiskController dc(std::make_unique<InplaceDisk>(std::move(faulty), sb));
  const std::vector<std::byte> data = pattern(kBlock, 4);
  RequestTiming w = dc.write(0, data, false, std::nullopt);
  faults->arm(FaultyStore::Fault{.op = FaultyStore::Op::kSync, .nth = 0});
  expect_error(EIO, [&] { dc.flush(std::nullopt); }, "flush");
  ASSERT_EQ(faults->failures(), 1u);
  DiskStats st = dc.stats();
  EXPECT_EQ(st.requests.errors, 1u);
  EXPECT_EQ(st.requests.flush, 0u) << "a failed flush was counted as served";
  EXPECT_EQ(dc.busy_until(), w.end);
  EXPECT_EQ(st.busy, w.end - w.start);
}

}  // namespace
}  // namespace vld
