// The host phase timers (core/util/host_phases.h): nothing is counted when
// they are off or outside a request, nested phases are exclusive, and a
// write through each mode's controller charges the phases its path has.
// Counts and shape only: no assertion on how long anything took.
#include "core/util/host_phases.h"

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <vector>

#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

// Work the clock can see (steady_clock ticks in nanoseconds or finer).
void busy() {
  volatile uint64_t x = 0;
  for (int i = 0; i < 20000; ++i) x = x + static_cast<uint64_t>(i);
}

// Switches the timers on for a test and off, and zeroed, after it.
class HostPhasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_phases::reset();
    host_phases::enable(true);
  }
  void TearDown() override {
    host_phases::enable(false);
    host_phases::reset();
  }
};

uint64_t ns(const HostPhaseTotals& t, HostPhase p) { return t.phase_ns[static_cast<size_t>(p)]; }

TEST_F(HostPhasesTest, OffCountsNothing) {
  host_phases::enable(false);
  {
    HostRequestTimer r(true, true);
    HostPhaseTimer a(HostPhase::kAllocator);
    busy();
  }
  const HostPhaseTotals t = host_phases::snapshot();
  EXPECT_EQ(t.writes, 0u);
  EXPECT_EQ(t.requests, 0u);
  EXPECT_EQ(t.total_ns, 0u);
  EXPECT_EQ(t.phases_ns(), 0u);
}

TEST_F(HostPhasesTest, APhaseOutsideARequestCountsNothing) {
  {
    HostPhaseTimer a(HostPhase::kChecksum);
    busy();
  }
  {
    HostRequestTimer read(false, false);  // not timed: a read
    HostPhaseTimer a(HostPhase::kChecksum);
    busy();
  }
  const HostPhaseTotals t = host_phases::snapshot();
  EXPECT_EQ(t.requests, 0u);
  EXPECT_EQ(t.phases_ns(), 0u);
}

TEST_F(HostPhasesTest, NestedPhasesAreExclusiveAndSumToNoMoreThanTheTotal) {
  {
    HostRequestTimer r(true, true);
    busy();  // other
    HostPhaseTimer a(HostPhase::kAllocator);
    busy();
    {
      HostPhaseTimer c(HostPhase::kChecksum);
      busy();
      HostRequestTimer nested(true, true);  // adds nothing of its own
    }
    busy();
  }
  {
    HostRequestTimer flush(true, false);
    HostPhaseTimer s(HostPhase::kStoreIo);
    busy();
  }
  const HostPhaseTotals t = host_phases::snapshot();
  EXPECT_EQ(t.writes, 1u);
  EXPECT_EQ(t.requests, 2u);
  EXPECT_GT(ns(t, HostPhase::kAllocator), 0u);
  EXPECT_GT(ns(t, HostPhase::kChecksum), 0u);
  EXPECT_GT(ns(t, HostPhase::kStoreIo), 0u);
  EXPECT_EQ(ns(t, HostPhase::kMap), 0u);
  EXPECT_EQ(ns(t, HostPhase::kStats), 0u);
  EXPECT_LE(t.phases_ns(), t.total_ns);
  EXPECT_GT(t.other_ns(), 0u);
  EXPECT_EQ(t.phases_ns() + t.other_ns(), t.total_ns);
}

TEST_F(HostPhasesTest, ResetZeroes) {
  {
    HostRequestTimer r(true, true);
    HostPhaseTimer a(HostPhase::kMap);
    busy();
  }
  host_phases::reset();
  const HostPhaseTotals t = host_phases::snapshot();
  EXPECT_EQ(t.writes, 0u);
  EXPECT_EQ(t.total_ns, 0u);
  EXPECT_EQ(t.phases_ns(), 0u);
}

TEST(HostPhaseNames, EachPhaseHasItsOwn) {
  EXPECT_STREQ(host_phase_name(HostPhase::kAllocator), "allocator");
  EXPECT_STREQ(host_phase_name(HostPhase::kMap), "map");
  EXPECT_STREQ(host_phase_name(HostPhase::kChecksum), "checksum");
  EXPECT_STREQ(host_phase_name(HostPhase::kStoreIo), "store_io");
  EXPECT_STREQ(host_phase_name(HostPhase::kStats), "stats");
}

// Writes and flushes 20 blocks of a new disk of `mode` with the timers on.
HostPhaseTotals twenty_sync_writes(DiskMode mode) {
  const Superblock sb = test::st19101_superblock(mode, 4 << 20);
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  DiskController ctl(make_disk(std::move(store), sb, DiskOptions{}));
  std::vector<std::byte> block(4096, std::byte{7});
  std::vector<std::byte> out(4096);
  for (uint64_t b = 0; b < 20; ++b) {
    ctl.write(b * 4096 * 7, block, false, std::nullopt);
    ctl.flush(std::nullopt);
    ctl.read(b * 4096 * 7, out, std::nullopt);  // not timed
  }
  return host_phases::snapshot();
}

TEST_F(HostPhasesTest, AVldWriteChargesEveryPhase) {
  const HostPhaseTotals t = twenty_sync_writes(DiskMode::kVld);
  EXPECT_EQ(t.writes, 20u);
  EXPECT_EQ(t.requests, 40u);
  for (size_t i = 0; i < kHostPhaseCount; ++i)
    EXPECT_GT(t.phase_ns[i], 0u) << host_phase_name(static_cast<HostPhase>(i));
  EXPECT_LE(t.phases_ns(), t.total_ns);
}

TEST_F(HostPhasesTest, AnLldWriteChargesEveryPhase) {
  const HostPhaseTotals t = twenty_sync_writes(DiskMode::kLld);
  EXPECT_EQ(t.writes, 20u);
  // The NVRAM record (map), its MAC and the block's checksum, its write and
  // sync; no segment is planned until the buffer drains.
  for (HostPhase p : {HostPhase::kMap, HostPhase::kChecksum, HostPhase::kStoreIo,
                      HostPhase::kStats})
    EXPECT_GT(ns(t, p), 0u) << host_phase_name(p);
  EXPECT_LE(t.phases_ns(), t.total_ns);
}

TEST_F(HostPhasesTest, AnInPlaceWriteHasNoAllocatorMapOrChecksum) {
  const HostPhaseTotals t = twenty_sync_writes(DiskMode::kInplace);
  EXPECT_EQ(t.writes, 20u);
  EXPECT_GT(ns(t, HostPhase::kStoreIo), 0u);
  EXPECT_GT(ns(t, HostPhase::kStats), 0u);
  EXPECT_EQ(ns(t, HostPhase::kAllocator), 0u);
  EXPECT_EQ(ns(t, HostPhase::kMap), 0u);
  EXPECT_EQ(ns(t, HostPhase::kChecksum), 0u);
  EXPECT_LE(t.phases_ns(), t.total_ns);
}

}  // namespace
}  // namespace vld
