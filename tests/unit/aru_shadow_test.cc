// AruShadow (core/aru/aru_shadow.h) against a byte model: whatever writes,
// zeroes and trims an ARU takes, its overlay on committed data reads as the
// model does, its group holds exactly the blocks it changed, and a request
// it refuses changes nothing.
#include "core/aru/aru_shadow.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "core/util/error.h"

namespace vld {
namespace {

constexpr uint32_t kBs = 4096;
constexpr uint64_t kBlocks = 64;
constexpr uint64_t kBytes = kBs * kBlocks;

std::vector<std::byte> bytes_of(uint64_t seed, size_t len) {
  std::vector<std::byte> v(len);
  std::mt19937_64 rng(seed);
  for (auto& b : v) b = std::byte(1 + rng() % 255);
  return v;
}

class AruShadowModel : public ::testing::Test {
 protected:
  AruShadowModel() : committed_(bytes_of(1, kBytes)), model_(committed_) {}
  AruShadow::ReadBase base() {
    return [this](uint64_t b, std::span<std::byte> out) {
      ++base_reads_;
      std::memcpy(out.data(), committed_.data() + b * kBs, kBs);
    };
  }
  std::vector<std::byte> view(const AruShadow& s) const {
    std::vector<std::byte> v = committed_;
    s.overlay(0, v);
    return v;
  }
  std::vector<std::byte> committed_, model_;
  int base_reads_ = 0;
};

TEST_F(AruShadowModel, ReadsAsTheModelAfterRandomRequests) {
  AruShadow s(kBs, kBytes, kBytes);
  std::mt19937_64 rng(7);
  std::set<uint64_t> changed;
  for (int i = 0; i < 2000; ++i) {
    const uint64_t off = 512 * (rng() % (kBytes / 512));
    const uint64_t len = std::min<uint64_t>(512 * (1 + rng() % 24), kBytes - off);
    const unsigned op = rng() % 3;
    if (op == 0) {
      auto d = bytes_of(100 + i, len);
      s.write(off, d, base());
      std::memcpy(model_.data() + off, d.data(), len);
    } else if (op == 1) {
      s.zero(off, len, base());
      std::memset(model_.data() + off, 0, len);
    } else {
      s.trim(off, len);  // whole blocks only
      uint64_t first = 0, end = 0;
      whole_blocks(off, len, kBs, &first, &end);
      std::memset(model_.data() + first * kBs, 0, (end - first) * kBs);
      for (uint64_t b = first; b < end; ++b) changed.insert(b);
    }
    if (op != 2)
      for (uint64_t b = off / kBs; b <= (off + len - 1) / kBs; ++b) changed.insert(b);
    ASSERT_EQ(view(s), model_) << "after request " << i;
  }
  // The group: exactly the changed blocks, sorted, each with the model's bytes.
  const std::vector<GroupBlock> g = s.group();
  ASSERT_EQ(g.size(), changed.size());
  auto it = changed.begin();
  for (const GroupBlock& gb : g) {
    ASSERT_EQ(gb.block, *it++);
    const std::byte* want = model_.data() + gb.block * kBs;
    if (gb.data)
      EXPECT_EQ(std::memcmp(gb.data, want, kBs), 0) << "block " << gb.block;
    else
      EXPECT_TRUE(std::all_of(want, want + kBs, [](std::byte b) { return b == std::byte{0}; }));
  }
  EXPECT_EQ(s.bytes(), changed.size() * kBs);
}

TEST_F(AruShadowModel, PartialBlocksMergeCommittedDataOnceWholeBlocksNever) {
  AruShadow s(kBs, kBytes, kBytes);
  s.write(0, bytes_of(2, 2 * kBs), base());
  EXPECT_EQ(base_reads_, 0) << "a whole block needs no committed data";
  s.write(5 * kBs + 512, bytes_of(3, 1024), base());
  EXPECT_EQ(base_reads_, 1);
  s.write(5 * kBs + 2048, bytes_of(4, 512), base());
  EXPECT_EQ(base_reads_, 1) << "a block the ARU holds is merged in memory";
  s.zero(9 * kBs, kBs, base());
  s.write(9 * kBs + 512, bytes_of(5, 512), base());
  EXPECT_EQ(base_reads_, 1) << "a zeroed block reads as zeros, not committed data";
}

TEST_F(AruShadowModel, PastMaxBytesIsENOSPCAndChangesNothing) {
  AruShadow s(kBs, kBytes, 4 * kBs);
  s.write(0, bytes_of(2, 3 * kBs), base());
  const std::vector<std::byte> before = view(s);
  for (int op = 0; op < 3; ++op) {
    try {
      if (op == 0) s.write(2 * kBs, bytes_of(3, 3 * kBs), base());  // 2 new blocks, 1 fits
      if (op == 1) s.zero(10 * kBs + 512, 2 * kBs, base());
      if (op == 2) s.trim(20 * kBs, 2 * kBs);
      ADD_FAILURE() << "request " << op << " past aru_max was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOSPC);
      EXPECT_NE(std::string(e.what()).find("aru_max=16384"), std::string::npos) << e.what();
    }
    EXPECT_EQ(view(s), before);
    EXPECT_EQ(s.blocks(), 3u);
  }
  s.write(0, bytes_of(4, kBs), base());  // blocks it holds still change
  s.write(3 * kBs, bytes_of(5, kBs), base());  // and the last one fits
  EXPECT_EQ(s.bytes(), 4u * kBs);
}

TEST_F(AruShadowModel, AFailedReadOfCommittedDataChangesNothing) {
  AruShadow s(kBs, kBytes, kBytes);
  s.write(0, bytes_of(2, kBs), base());
  const std::vector<std::byte> before = view(s);
  int reads = 0;
  auto failing = [&](uint64_t, std::span<std::byte>) {
    if (++reads == 2) throw Error("injected read failure", EIO);
  };
  // Partial at both ends: the second edge's read fails.
  EXPECT_THROW(s.write(4 * kBs + 512, bytes_of(3, 3 * kBs), failing), Error);
  EXPECT_EQ(view(s), before);
  EXPECT_EQ(s.blocks(), 1u);
}

TEST_F(AruShadowModel, OutsideTheExportIsEINVAL) {
  AruShadow s(kBs, kBytes, kBytes);
  try {
    s.write(kBytes - 512, bytes_of(2, 1024), base());
    ADD_FAILURE() << "a write past the end was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL);
  }
  EXPECT_TRUE(s.empty());
}

}  // namespace
}  // namespace vld
