// GroupCommit (core/store/group_commit.h): requests written while a sync
// runs share the next one; a failed sync fails every request it left not
// durable. The threads meet at latches, not at sleeps: each test's order
// of events is fixed.
#include "core/store/group_commit.h"

#include <gtest/gtest.h>

#include "core/disk_controller.h"
#include "core/modes/mode_image.h"
#include "core/store/backing_store.h"
#include "geometry/presets.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace vld {
namespace {

// A latch the test opens once the state it waits for is reached.
class Gate {
 public:
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Ticket 1 leads a sync that holds until tickets 2-4 are written and their
// requests wait: one more sync covers all three. 4 requests, 2 syncs.
TEST(GroupCommit, RequestsWrittenDuringASyncShareTheNext) {
  GroupCommit gc;
  Gate first_sync_started, others_waiting;
  std::atomic<int> syncs{0};
  auto sync_file = [&] {
    if (syncs.fetch_add(1) == 0) {
      first_sync_started.open();
      others_waiting.wait();
    }
  };
  gc.wrote(1);
  std::vector<uint32_t> made(4);
  std::thread leader([&] { made[0] = gc.sync_through(1, sync_file); });
  first_sync_started.wait();
  EXPECT_EQ(gc.synced(), 0u);
  std::vector<std::thread> others;
  for (uint64_t t = 2; t <= 4; ++t) {
    gc.wrote(t);
    others.emplace_back([&, t] { made[t - 1] = gc.sync_through(t, sync_file); });
  }
  // The three wait for the running sync (not durable: it started before
  // they were written); let it end.
  EXPECT_EQ(gc.synced(), 0u);
  others_waiting.open();
  leader.join();
  for (std::thread& t : others) t.join();
  EXPECT_EQ(syncs.load(), 2);
  EXPECT_EQ(gc.synced(), 4u);
  EXPECT_EQ(made[0], 1u);
  EXPECT_EQ(made[1] + made[2] + made[3], 1u) << "one of the three led the second sync";
}

TEST(GroupCommit, ATicketAlreadyDurableNeedsNoSync) {
  GroupCommit gc(5);  // an open found 1..5 durable
  int syncs = 0;
  EXPECT_EQ(gc.sync_through(5, [&] { ++syncs; }), 0u);
  gc.wrote(7);
  gc.synced_all();  // a sync under the requests' lock (a drain) covered 6 and 7
  EXPECT_EQ(gc.sync_through(7, [&] { ++syncs; }), 0u);
  EXPECT_EQ(syncs, 0);
  gc.wrote(8);
  EXPECT_EQ(gc.sync_through(8, [&] { ++syncs; }), 1u);
  EXPECT_EQ(gc.synced(), 8u);
}

// A failed sync fails its leader and every request waiting for it, and the
// next ones too (the disk stops); the failure is taken once, to report.
TEST(GroupCommit, AFailedSyncFailsEveryRequestItLeftNotDurable) {
  GroupCommit gc;
  gc.wrote(1);
  gc.wrote(2);
  auto failing = [] { throw Error("fdatasync: Input/output error", EIO); };
  EXPECT_THROW(gc.sync_through(1, failing), Error);
  int syncs = 0;
  try {
    gc.sync_through(2, [&] { ++syncs; });
    ADD_FAILURE() << "a request after the failed sync was acknowledged";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EIO);
    EXPECT_NE(std::string(e.what()).find("fdatasync"), std::string::npos) << e.what();
  }
  EXPECT_EQ(syncs, 0);
  EXPECT_EQ(gc.synced(), 0u);
  ASSERT_TRUE(gc.take_failure().has_value());
  EXPECT_FALSE(gc.take_failure().has_value()) << "reported once";
}

// An image in memory whose first sync after arm() holds until `writes`
// more writes have reached it: the appends of the requests that come in
// while the first one's sync runs.
class HeldSyncStore final : public BackingStore {
 public:
  explicit HeldSyncStore(MemoryBackingStore& mem) : mem_(mem) {}
  uint64_t size_bytes() const override { return mem_.size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override { mem_.read(offset, out); }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(mu_);  // a sync may run beside it: the bytes are the writer's
    mem_.write(offset, data);
    ++writes_;
    cv_.notify_all();
  }
  void discard(uint64_t offset, uint64_t len) override { mem_.discard(offset, len); }
  void sync() override {
    std::unique_lock lock(mu_);
    ++syncs_;
    if (!held_) return;
    held_ = false;
    // Bounded, so that a controller that syncs under its lock (the others
    // never get to append) fails the test instead of hanging it.
    cv_.wait_for(lock, std::chrono::seconds(20), [&] { return writes_ >= release_at_; });
  }
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    mem_.for_each_data_range(offset, len, fn);
  }
  void arm(uint64_t writes) {
    std::lock_guard lock(mu_);
    held_ = true;
    release_at_ = writes_ + 1 + writes;  // the leader's own append, then theirs
  }
  uint64_t syncs() const {
    std::lock_guard lock(mu_);
    return syncs_;
  }

 private:
  MemoryBackingStore& mem_;
  mutable std::mutex mu_;  // guards the counters below and orders writes with a sync
  std::condition_variable cv_;
  uint64_t writes_ = 0, syncs_ = 0, release_at_ = 0;
  bool held_ = false;
};

// Through the controller, as the plugin serves: four writes in flight on a
// mode=lld disk with NVRAM, the first one's sync held until the other
// three have written their records; they share what follows. The second
// sync covers the second and third write at least (each request records
// what it wrote before the next takes the lock); whether it also covers
// the fourth depends on whether that one had said so when the sync began:
// 2 or 3 syncs for 4 writes, never 4. All four are in the image, and the
// stats count the syncs.
TEST(GroupCommit, FourWritesInFlightShareSyncsThroughTheController) {
  FormatOptions o;
  o.mode = DiskMode::kLld;
  o.export_bytes = 16 << 20;
  o.geometry = *find_preset("st19101");
  o.geometry.derive_skews();
  const Superblock sb = plan_image(o);
  MemoryBackingStore mem(sb.image_bytes());
  format_store(mem, sb);
  auto held = std::make_unique<HeldSyncStore>(mem);
  HeldSyncStore* store = held.get();
  DiskController ctl(make_disk(std::move(held), sb, DiskOptions{}));
  ctl.set_group_commit(true);
  const uint64_t syncs_before = ctl.stats().backing_syncs, store_before = store->syncs();
  auto block = [](int i) { return std::vector<std::byte>(4096, std::byte(i + 1)); };
  store->arm(3);
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i)
    writers.emplace_back([&, i] { ctl.write(uint64_t(i) * 4096, block(i), false, std::nullopt); });
  for (std::thread& t : writers) t.join();
  const uint64_t syncs = store->syncs() - store_before;
  EXPECT_GE(syncs, 2u);
  EXPECT_LE(syncs, 3u);
  EXPECT_EQ(ctl.stats().backing_syncs - syncs_before, syncs);
  EXPECT_EQ(ctl.stats().requests.write, 4u);
  EXPECT_EQ(ctl.stats().requests.errors, 0u);
  // kill -9 now: every acknowledged write is in the image.
  DiskController after(make_disk(std::make_unique<MemoryBackingStore>(mem.bytes()), sb, DiskOptions{}));
  for (int i = 0; i < 4; ++i) {
    std::vector<std::byte> got(4096);
    after.read(uint64_t(i) * 4096, got, std::nullopt);
    EXPECT_EQ(got, block(i)) << "write " << i;
  }
  ctl.close();
}

}  // namespace
}  // namespace vld
