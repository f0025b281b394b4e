// WriteGather and BackingStore::write_gather (core/store/write_gather.h,
// backing_store.h): runs of pieces that lie back to back in the image are
// one write_gather each, in the order added; a store that keeps the
// default sees each piece as a write() of its own; a file gets the same
// bytes as from write() of each; a failing run counts as begun.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/store/backing_store.h"
#include "core/store/write_gather.h"
#include "core/util/error.h"

namespace vld {
namespace {

std::vector<std::byte> bytes(size_t n, int seed) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte(static_cast<unsigned char>(seed + i * 7));
  return b;
}

// Records the calls it gets; fails the write_gather at `fail_at` (offset).
class CallLog final : public BackingStore {
 public:
  explicit CallLog(bool gathers) : mem_(1 << 16), gathers_(gathers) {}
  uint64_t size_bytes() const override { return mem_.size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override { mem_.read(offset, out); }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    writes.emplace_back(offset, data.size());
    mem_.write(offset, data);
  }
  void write_gather(uint64_t offset, std::span<const std::span<const std::byte>> pieces,
                    size_t* begun) override {
    if (!gathers_) return BackingStore::write_gather(offset, pieces, begun);
    gathered.emplace_back(offset, pieces.size());
    *begun = pieces.size();
    if (offset == fail_at) throw Error("injected", 5);
    for (const auto& p : pieces) {
      mem_.write(offset, p);
      offset += p.size();
    }
  }
  void discard(uint64_t offset, uint64_t len) override { mem_.discard(offset, len); }
  void sync() override {}
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    mem_.for_each_data_range(offset, len, fn);
  }

  std::vector<std::pair<uint64_t, size_t>> writes;    // (offset, bytes)
  std::vector<std::pair<uint64_t, size_t>> gathered;  // (offset, pieces)
  uint64_t fail_at = ~uint64_t{0};

 private:
  MemoryBackingStore mem_;
  bool gathers_;
};

// Keeps the default write_gather; its write() at `fail_at` throws.
class FailOnce final : public BackingStore {
 public:
  FailOnce(BackingStore& s, uint64_t fail_at) : s_(s), fail_at_(fail_at) {}
  uint64_t size_bytes() const override { return s_.size_bytes(); }
  void read(uint64_t offset, std::span<std::byte> out) override { s_.read(offset, out); }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    if (offset == fail_at_) throw Error("injected", 5);
    s_.write(offset, data);
  }
  void discard(uint64_t offset, uint64_t len) override { s_.discard(offset, len); }
  void sync() override {}
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    s_.for_each_data_range(offset, len, fn);
  }

 private:
  BackingStore& s_;
  uint64_t fail_at_;
};

TEST(WriteGather, OneCallPerRunOfAdjacentPiecesInOrder) {
  const auto data = bytes(4096, 1), map = bytes(512, 2), other = bytes(512, 3);
  CallLog store(/*gathers=*/true);
  WriteGather g;
  g.add(8192, data);
  g.add(8192 + 4096, map);  // right behind the data: same run
  g.add(512, other);        // elsewhere: a run of its own
  size_t begun = 0;
  g.flush(store, &begun);
  EXPECT_EQ(begun, 3u);
  EXPECT_EQ(g.size(), 0u);
  EXPECT_EQ(store.gathered, (std::vector<std::pair<uint64_t, size_t>>{{8192, 2}, {512, 1}}));
  std::vector<std::byte> got(4096 + 512);
  store.read(8192, got);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), got.begin()));
  EXPECT_TRUE(std::equal(map.begin(), map.end(), got.begin() + 4096));
}

TEST(WriteGather, TheDefaultIsAWriteOfEachPiece) {
  const auto a = bytes(1024, 4), b = bytes(512, 5);
  CallLog store(/*gathers=*/false);
  WriteGather g;
  g.add(0, a);
  g.add(1024, b);
  size_t begun = 0;
  g.flush(store, &begun);
  EXPECT_EQ(store.writes, (std::vector<std::pair<uint64_t, size_t>>{{0, 1024}, {1024, 512}}));
}

// A store that writes piece by piece knows which one failed: the pieces
// after it were not begun (a data block's failure voids no map sector).
TEST(WriteGather, APieceByPieceStoreTellsWhichPieceFailed) {
  const auto a = bytes(512, 11), b = bytes(512, 12);
  MemoryBackingStore mem(4096);
  FailOnce store(mem, 512);
  WriteGather g;
  g.add(0, a);
  g.add(512, b);
  g.add(1024, b);
  size_t begun = 0;
  EXPECT_THROW(g.flush(store, &begun), Error);
  EXPECT_EQ(begun, 2u);
}

TEST(WriteGather, AFailedRunCountsAsBegunAndIsForgotten) {
  const auto a = bytes(512, 6), b = bytes(512, 7), c = bytes(512, 8);
  CallLog store(/*gathers=*/true);
  store.fail_at = 4096;
  WriteGather g;
  g.add(0, a);
  g.add(4096, b);
  g.add(4096 + 512, c);
  size_t begun = 0;
  EXPECT_THROW(g.flush(store, &begun), Error);
  EXPECT_EQ(begun, 3u) << "the failed run's pieces may have landed";
  EXPECT_EQ(g.size(), 0u);
}

TEST(WriteGather, AFileGetsTheBytesOfEachPiece) {
  const char* base = std::getenv("TMPDIR");
  const std::string path = std::string(base && *base ? base : "/tmp") + "/vld-gather-test-" +
                           std::to_string(::getpid()) + ".img";
  ::unlink(path.c_str());
  {
    auto f = FileBackingStore::create(path, 1 << 20);
    const auto whole = bytes(3 * 4096, 9);  // three pieces adjacent in memory too
    const auto map = bytes(512, 10);
    std::vector<std::span<const std::byte>> pieces;
    for (size_t i = 0; i < 3; ++i) pieces.push_back(std::span(whole).subspan(i * 4096, 4096));
    pieces.push_back(map);
    pieces.push_back({});  // nothing: skipped
    size_t begun = 0;
    f->write_gather(65536, pieces, &begun);
    EXPECT_EQ(begun, pieces.size());
    std::vector<std::byte> got(whole.size() + map.size());
    f->read(65536, got);
    EXPECT_TRUE(std::equal(whole.begin(), whole.end(), got.begin()));
    EXPECT_TRUE(std::equal(map.begin(), map.end(), got.begin() + whole.size()));
    // More pieces than one pwritev takes (IOV_MAX): the rest follow.
    std::vector<std::vector<std::byte>> many;
    for (int i = 0; i < 1500; ++i) many.push_back(bytes(512, i));
    std::vector<std::span<const std::byte>> spans(many.begin(), many.end());
    f->write_gather(0, spans, &begun);
    std::vector<std::byte> sector(512);
    for (int i : {0, 1023, 1024, 1499}) {
      f->read(uint64_t(i) * 512, sector);
      EXPECT_EQ(sector, many[i]) << "piece " << i;
    }
  }
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace vld
