// Trim, zero (with and without NO_HOLE, fast or not) and block status, as
// core/inplace/inplace_disk.h defines them: whole blocks are deallocated and read as
// zeros; partial edges of a trim are left alone, those of a zero are written.
// In every mode (modes.h).
#include <gtest/gtest.h>
#include <libnbd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kBlock = 4096;
constexpr uint64_t kSize = 16 << 20;

// The client's model of the disk: what every byte should read as.
class Shadow {
 public:
  explicit Shadow(uint64_t size) : bytes_(size, 0) {}
  void write(uint64_t off, const std::vector<uint8_t>& d) {
    std::memcpy(bytes_.data() + off, d.data(), d.size());
  }
  void zero(uint64_t off, uint64_t len) { std::memset(bytes_.data() + off, 0, len); }
  std::vector<uint8_t> range(uint64_t off, uint64_t len) const {
    return {bytes_.begin() + off, bytes_.begin() + off + len};
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Reads [off, off+len) and compares it with the shadow.
std::string Mismatch(nbd_handle* h, const Shadow& s, uint64_t off, uint64_t len) {
  return first_difference(read_bytes(h, off, len), s.range(off, len), off);
}

bool AllZero(const std::vector<uint8_t>& v) {
  for (uint8_t b : v)
    if (b) return false;
  return true;
}

class TrimZero : public ::testing::TestWithParam<const char*> {};

TEST_P(TrimZero, ReadBackAsZeros) {
  TempDir dir;
  NbdkitServer server(
      dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=none"}, GetParam()));
  NbdHandle conn = server.connect();
  nbd_handle* h = conn.get();
  Shadow shadow(kSize);

  auto data = pattern_bytes(0, 1 << 20, 5);
  write_bytes(h, 0, data);
  shadow.write(0, data);

  // Trim of an aligned 4 KiB-multiple range.
  check_nbd(nbd_trim(h, 32 * kKiB, 64 * kKiB, 0), "nbd_trim");
  shadow.zero(64 * kKiB, 32 * kKiB);
  EXPECT_TRUE(AllZero(read_bytes(h, 64 * kKiB, 32 * kKiB)));
  EXPECT_EQ(Mismatch(h, shadow, 60 * kKiB, 40 * kKiB), "") << "trim touched its neighbours";

  // Zero without NO_HOLE (the server may trim), aligned and unaligned.
  check_nbd(nbd_zero(h, 16 * kKiB, 192 * kKiB, 0), "nbd_zero aligned");
  shadow.zero(192 * kKiB, 16 * kKiB);
  check_nbd(nbd_zero(h, 10 * kKiB, 320 * kKiB + 512, 0), "nbd_zero unaligned");
  shadow.zero(320 * kKiB + 512, 10 * kKiB);
  EXPECT_TRUE(AllZero(read_bytes(h, 192 * kKiB, 16 * kKiB)));
  EXPECT_TRUE(AllZero(read_bytes(h, 320 * kKiB + 512, 10 * kKiB)));
  EXPECT_EQ(Mismatch(h, shadow, 188 * kKiB, 24 * kKiB), "");
  EXPECT_EQ(Mismatch(h, shadow, 316 * kKiB, 20 * kKiB), "");

  // Zero with NO_HOLE: allocated zeros.
  check_nbd(nbd_zero(h, 8 * kKiB, 256 * kKiB + 512, LIBNBD_CMD_FLAG_NO_HOLE), "nbd_zero NO_HOLE");
  shadow.zero(256 * kKiB + 512, 8 * kKiB);
  EXPECT_TRUE(AllZero(read_bytes(h, 256 * kKiB + 512, 8 * kKiB)));
  EXPECT_EQ(Mismatch(h, shadow, 252 * kKiB, 16 * kKiB), "");

  // Fast zero of an aligned range may deallocate: it is fast, so it succeeds.
  ASSERT_EQ(nbd_can_fast_zero(h), 1);
  EXPECT_EQ(nbd_zero(h, 16 * kKiB, 384 * kKiB, LIBNBD_CMD_FLAG_FAST_ZERO), 0) << nbd_get_error();
  shadow.zero(384 * kKiB, 16 * kKiB);
  EXPECT_TRUE(AllZero(read_bytes(h, 384 * kKiB, 16 * kKiB)));

  // Fast zero with NO_HOLE means writing the media: ENOTSUP, data untouched.
  EXPECT_EQ(nbd_zero(h, 16 * kKiB, 512 * kKiB, LIBNBD_CMD_FLAG_FAST_ZERO | LIBNBD_CMD_FLAG_NO_HOLE),
            -1);
  EXPECT_EQ(nbd_get_errno(), ENOTSUP) << nbd_get_error();
  EXPECT_EQ(Mismatch(h, shadow, 512 * kKiB, 16 * kKiB), "") << "failed fast zero changed data";

  // So does a fast zero that is not block-aligned (its edges need writing).
  EXPECT_EQ(nbd_zero(h, 4 * kKiB, 600 * kKiB + 512, LIBNBD_CMD_FLAG_FAST_ZERO), -1);
  EXPECT_EQ(nbd_get_errno(), ENOTSUP) << nbd_get_error();
  EXPECT_EQ(Mismatch(h, shadow, 596 * kKiB, 12 * kKiB), "") << "failed fast zero changed data";

  // The connection survives, and the whole written area is as modelled.
  EXPECT_EQ(nbd_aio_is_ready(h), 1);
  EXPECT_EQ(Mismatch(h, shadow, 0, 2 << 20), "");
  nbd_shutdown(h, 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  // A declined fast zero is an answer, not an error: nothing was logged.
  EXPECT_EQ(server.stderr_text().find("error"), std::string::npos) << server.stderr_text();
}

// Writes 1 MiB to a new image, optionally trims half of it, stops the server
// and returns the stats file, written after the clean stop. mode=lld with
// NVRAM counts as live only blocks in its segments; its clean stop drains
// the NVRAM's blocks and trims into them, so the stats count everything.
nlohmann::json StatsAfter(const TempDir& dir, const std::string& name, bool trim,
                          const std::string& mode) {
  const std::string stats = dir.file(name + ".json");
  const std::string file = dir.file(name + ".img");
  NbdkitServer server(
      dir, with_mode({"file=" + file, "size=16M", "latency=none", "statsfile=" + stats}, mode));
  NbdHandle h = server.connect();
  write_bytes(h.get(), 0, pattern_bytes(0, 1 << 20, 6));
  if (trim) check_nbd(nbd_trim(h.get(), 512 * kKiB, 0, 0), "nbd_trim");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  nlohmann::json j = read_json(stats);
  if (acks_are_durable(mode)) {
    EXPECT_EQ(j.at("lld").at("nvram_buffered_blocks").get<int64_t>(), 0) << "not drained at the stop";
  }
  return j;
}

TEST_P(TrimZero, TrimLowersUtilization) {
  TempDir dir;
  nlohmann::json written = StatsAfter(dir, "written", false, GetParam());
  nlohmann::json trimmed = StatsAfter(dir, "trimmed", true, GetParam());
  SCOPED_TRACE("written: " + written.dump() + "\ntrimmed: " + trimmed.dump());
  EXPECT_EQ(trimmed.at("requests").at("trim").get<int64_t>(), 1);
  const double u_written = written.at("utilization").get<double>();
  const double u_trimmed = trimmed.at("utilization").get<double>();
  EXPECT_GT(u_written, 0.0);
  EXPECT_LT(u_trimmed, u_written);
  // 128 of 256 live blocks were trimmed: the same platters, half the use.
  EXPECT_DOUBLE_EQ(u_trimmed * 2, u_written);
}

// Block status, one state per block: 0 for data, HOLE|ZERO for a hole.
// Fails (via *err) if an extent is not block-aligned or the disk is not
// covered.
std::vector<uint32_t> BlockStates(nbd_handle* h, uint64_t size, std::string* err) {
  constexpr uint32_t kUnset = 0xffffffff;
  struct Ctx {
    std::vector<uint32_t> states;
    uint64_t end = 0;
    std::string err;
  } ctx;
  ctx.states.assign(size / kBlock, kUnset);
  auto cb = [](void* ud, const char* meta, uint64_t offset, uint32_t* entries, size_t n,
               int*) -> int {
    auto* c = static_cast<Ctx*>(ud);
    if (std::strcmp(meta, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0) return 0;
    uint64_t pos = offset;
    for (size_t i = 0; i + 1 < n; i += 2) {
      const uint64_t len = entries[i];
      if (pos % kBlock || (len % kBlock && pos + len != c->states.size() * kBlock))
        c->err += "extent [" + std::to_string(pos) + ", +" + std::to_string(len) +
                  ") is not block-aligned; ";
      for (uint64_t b = pos / kBlock; b < (pos + len) / kBlock && b < c->states.size(); ++b)
        c->states[b] = entries[i + 1];
      pos += len;
    }
    c->end = pos;
    return 0;
  };
  for (uint64_t off = 0; off < size;) {
    ctx.end = off;
    if (nbd_block_status(h, size - off, off, nbd_extent_callback{cb, &ctx, nullptr}, 0) == -1) {
      *err = std::string("nbd_block_status: ") + nbd_get_error();
      return {};
    }
    if (ctx.end <= off) {
      *err = "nbd_block_status made no progress at " + std::to_string(off);
      return {};
    }
    off = ctx.end;
  }
  for (size_t b = 0; b < ctx.states.size(); ++b)
    if (ctx.states[b] == kUnset) ctx.err += "block " + std::to_string(b) + " not reported; ";
  *err = ctx.err;
  return ctx.states;
}

// Which blocks should hold data after ApplyExtentWorkload on a disk of the
// given mode.
std::vector<bool> ApplyExtentWorkload(nbd_handle* h, const std::string& mode) {
  std::vector<bool> live(kSize / kBlock, false);
  auto write_blocks = [&](uint64_t first, uint64_t count) {
    write_bytes(h, first * kBlock, pattern_bytes(first * kBlock, count * kBlock, 7));
    for (uint64_t b = first; b < first + count; ++b) live[b] = true;
  };
  auto hole = [&](uint64_t first, uint64_t count) {
    for (uint64_t b = first; b < first + count; ++b) live[b] = false;
  };
  write_blocks(0, 10);
  write_blocks(100, 100);
  write_blocks(1000, 1);
  write_blocks(1002, 1);
  write_blocks(2048, 53);
  write_blocks(kSize / kBlock - 1, 1);  // the last block
  // A sub-block write makes its block data.
  write_bytes(h, 3000 * kBlock + 1024, pattern_bytes(0, 512, 8));
  live[3000] = true;

  check_nbd(nbd_trim(h, 10 * kBlock, 150 * kBlock, 0), "trim 150..159");
  hole(150, 10);
  check_nbd(nbd_trim(h, 2 * kBlock, 0, 0), "trim 0..1");
  hole(0, 2);
  // A trim covering no whole block is advisory: nothing changes.
  check_nbd(nbd_trim(h, kBlock, 1000 * kBlock + 512, 0), "partial trim");
  // Zero that may trim, aligned: holes.
  check_nbd(nbd_zero(h, 10 * kBlock, 2050 * kBlock, 0), "zero 2050..2059");
  hole(2050, 10);
  // Zero that may trim, unaligned, over unwritten space: the whole block in
  // the middle is a hole. The in-place and log-structured disks write zeros
  // into the edges (data); the virtual log disk leaves never-written edge
  // blocks unmapped, as they already read as zeros.
  check_nbd(nbd_zero(h, 2 * kBlock, 3500 * kBlock + 2048, 0), "zero unaligned");
  live[3500] = mode != "vld";
  live[3502] = mode != "vld";
  // Zero with NO_HOLE over unwritten space: allocated zeros (data).
  check_nbd(nbd_zero(h, kBlock, 500 * kBlock, LIBNBD_CMD_FLAG_NO_HOLE), "zero NO_HOLE 500");
  live[500] = true;
  return live;
}

std::string CompareStates(const std::vector<uint32_t>& got, const std::vector<bool>& live) {
  const uint32_t kHole = LIBNBD_STATE_HOLE | LIBNBD_STATE_ZERO;
  std::string out;
  int shown = 0;
  for (size_t b = 0; b < live.size() && b < got.size(); ++b) {
    uint32_t want = live[b] ? 0 : kHole;
    if (got[b] == want) continue;
    if (++shown <= 10)
      out += "block " + std::to_string(b) + ": state " + std::to_string(got[b]) + ", want " +
             std::to_string(want) + "; ";
  }
  if (shown > 10) out += std::to_string(shown) + " blocks differ in all";
  return out;
}

class Extents : public ::testing::TestWithParam<const char*> {};

TEST_P(Extents, HolesExactlyWhereNothingIsWrittenOrItWasTrimmed) {
  const std::string mode = GetParam();
  TempDir dir;
  NbdkitServer server(
      dir, with_mode({"file=" + dir.file("disk.img"), "size=16M", "latency=none"}, mode));
  NbdHandle h = connect_with_meta_context(server, LIBNBD_CONTEXT_BASE_ALLOCATION);
  ASSERT_EQ(nbd_can_meta_context(h.get(), LIBNBD_CONTEXT_BASE_ALLOCATION), 1);

  // A new disk is one hole.
  std::string err;
  auto fresh = BlockStates(h.get(), kSize, &err);
  ASSERT_EQ(err, "");
  EXPECT_EQ(CompareStates(fresh, std::vector<bool>(kSize / kBlock, false)), "");

  std::vector<bool> live = ApplyExtentWorkload(h.get(), mode);
  auto states = BlockStates(h.get(), kSize, &err);
  ASSERT_EQ(err, "");
  EXPECT_EQ(CompareStates(states, live), "");

  // Holes read as zeros.
  for (uint64_t b : {0, 1, 10, 99, 150, 159, 1001, 2050, 2059, 3501, 4000})
    EXPECT_TRUE(AllZero(read_bytes(h.get(), b * kBlock, kBlock))) << "block " << b;
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

// The map of live blocks is rebuilt on open: from the backing file's holes
// (inplace), from the virtual log (vld), from the checkpoint, the segments
// written after it and the NVRAM's records (lld).
TEST_P(Extents, SurviveARestart) {
  const std::string mode = GetParam();
  TempDir dir;
  const std::string file = dir.file("disk.img");
  std::vector<bool> live;
  {
    NbdkitServer server(dir, with_mode({"file=" + file, "size=16M", "latency=none"}, mode));
    NbdHandle h = server.connect();
    live = ApplyExtentWorkload(h.get(), mode);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  NbdkitServer server(dir, {"file=" + file, "latency=none"});
  NbdHandle h = connect_with_meta_context(server, LIBNBD_CONTEXT_BASE_ALLOCATION);
  std::string err;
  auto states = BlockStates(h.get(), kSize, &err);
  ASSERT_EQ(err, "");
  EXPECT_EQ(CompareStates(states, live), "");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Modes, TrimZero, ::testing::ValuesIn(kAllModes), ModeName);
INSTANTIATE_TEST_SUITE_P(Modes, Extents, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
