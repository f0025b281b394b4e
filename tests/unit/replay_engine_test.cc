// The replay engine (tools/bench/replay_engine.h): address maps, sync
// policies, and the arrival of each request in open and closed loop, on
// small in-memory disks whose service times the tests read back from the
// drive itself.
#include "tools/bench/replay_engine.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/util/error.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<DiskController> new_disk(DiskMode mode) {
  const Superblock sb = test::st19101_superblock(mode, 16ull << 20);
  auto store = std::make_unique<MemoryBackingStore>(sb.image_bytes());
  format_store(*store, sb);
  return std::make_unique<DiskController>(make_disk(std::move(store), sb));
}

TraceRequest write_at(uint64_t offset, std::optional<double> time_us, bool fua = false) {
  TraceRequest q;
  q.op = TraceOp::kWrite;
  q.offset_bytes = offset;
  q.len_bytes = 4096;
  q.fua = fua;
  q.time_us = time_us;
  q.line = 1;
  return q;
}

// One parsed line of the requests CSV.
struct CsvLine {
  std::string op;
  int64_t arrival_ns, start_ns, service_ns, latency_ns;
};

std::vector<CsvLine> read_csv(std::FILE* f) {
  std::rewind(f);
  std::vector<CsvLine> lines;
  char op[16];
  unsigned long long index, line, offset, len;
  int fua;
  long long a, s, sv, l;
  while (std::fscanf(f, "%llu,%llu,%15[^,],%llu,%llu,%d,%lld,%lld,%lld,%lld\n", &index, &line, op,
                     &offset, &len, &fua, &a, &s, &sv, &l) == 10)
    lines.push_back({op, a, s, sv, l});
  return lines;
}

TEST(ReplayAddressMap, NoneRefusesARequestBeyondTheExportNamingMap) {
  AddressMap m(AddressMap::Kind::kNone, 1 << 20, 0);
  EXPECT_EQ(m.map(4096, 4096, "t", 3), 4096u);
  EXPECT_EQ(m.map((1 << 20) - 4096, 4096, "t", 3), (1u << 20) - 4096);
  try {
    m.map((1 << 20) - 512, 4096, "t.log", 7);
    FAIL() << "a request past the end was mapped";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EINVAL);
    EXPECT_EQ(std::string(e.what()),
              "t.log:7: bytes 1048064+4096 lie beyond the export (1048576 bytes); give --map fold "
              "or --map scale, or a larger --size");
  }
}

TEST(ReplayAddressMap, FoldTakesTheOffsetModuloTheExportAndKeepsTheRequestWhole) {
  AddressMap m(AddressMap::Kind::kFold, 1 << 20, 0);
  EXPECT_EQ(m.map((3u << 20) + 8192, 4096, "t", 1), 8192u);
  EXPECT_EQ(m.map((1u << 20) - 1024, 4096, "t", 1), (1u << 20) - 4096);  // clamped, not split
  EXPECT_EQ(m.map((1u << 20) + 700, 512, "t", 1), 512u);                 // 512-byte aligned
}

TEST(ReplayAddressMap, ScaleMapsTheTraceSpanOntoTheExport) {
  AddressMap m(AddressMap::Kind::kScale, 1 << 20, 4 << 20);
  EXPECT_EQ(m.map(0, 4096, "t", 1), 0u);
  EXPECT_EQ(m.map(2 << 20, 4096, "t", 1), 512u * 1024);
  EXPECT_EQ(m.map((4u << 20) - 4096, 4096, "t", 1), (1u << 20) - 4096);
  // Terabyte traces do not overflow.
  AddressMap big(AddressMap::Kind::kScale, 1ull << 30, 1ull << 42);
  EXPECT_EQ(big.map(1ull << 41, 4096, "t", 1), 1ull << 29);
}

TEST(ReplaySyncPolicy, ParsesWritesEveryNAndNone) {
  EXPECT_EQ(parse_sync_policy("writes")->kind, SyncPolicy::Kind::kWrites);
  EXPECT_EQ(parse_sync_policy("none")->kind, SyncPolicy::Kind::kNone);
  EXPECT_EQ(parse_sync_policy("every=8")->every_writes, 8u);
  EXPECT_EQ(parse_sync_policy("every=8")->name(), "every=8");
  EXPECT_FALSE(parse_sync_policy("every=0"));
  EXPECT_FALSE(parse_sync_policy("every=x"));
  EXPECT_FALSE(parse_sync_policy("always"));
}

TEST(ReplayOpenLoop, EachRequestArrivesAtItsTraceTimeAndWaitsOnlyForABusyDrive) {
  auto ctl = new_disk(DiskMode::kInplace);
  std::FILE* csv = std::tmpfile();
  ReplayOptions o;
  o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
  o.requests_csv = csv;
  const SimTime origin = ctl->busy_until();
  Replayer r(*ctl, o);
  r.serve(write_at(0, 0.0));
  r.serve(write_at(8 << 20, 1.0));         // arrives while the first is served: waits
  r.serve(write_at(4096, 100000.0, true));  // 100 ms later: the drive is idle by then
  const std::vector<CsvLine> lines = read_csv(csv);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].arrival_ns, origin.time_since_epoch().count());
  EXPECT_EQ(lines[1].arrival_ns, lines[0].arrival_ns + 1000);
  EXPECT_EQ(lines[1].start_ns, lines[0].start_ns + lines[0].service_ns);  // waited for the first
  EXPECT_GT(lines[1].latency_ns, lines[1].service_ns);
  EXPECT_EQ(lines[2].arrival_ns, lines[0].arrival_ns + 100'000'000);
  EXPECT_EQ(lines[2].start_ns, lines[2].arrival_ns);  // no wait
  EXPECT_EQ(lines[2].latency_ns, lines[2].service_ns);
  EXPECT_EQ(r.counts().writes, 3u);
  EXPECT_EQ(r.latency().count(), 3u);
  EXPECT_EQ(r.elapsed().count(), lines[2].start_ns + lines[2].service_ns - lines[0].arrival_ns);
  EXPECT_EQ(ctl->stats().requests.write_fua, 1u);  // FUA as recorded
  std::fclose(csv);
}

// The idle work of an open-loop replay follows the plugin's idle worker:
// none in gaps shorter than the quiet time, and some in a long gap once the
// quiet time has passed.
TEST(ReplayOpenLoop, IdleWorkWaitsForTheQuietTimeAsThePluginsWorkerDoes) {
  for (const int64_t quiet_ms : {50, 60'000}) {
    SCOPED_TRACE(quiet_ms);
    auto ctl = new_disk(DiskMode::kVld);
    ReplayOptions o;
    o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
    o.quiet = std::chrono::milliseconds(quiet_ms);
    Replayer r(*ctl, o);
    double t_us = 0;
    for (uint64_t i = 0; i < 3000; ++i, t_us += 20'000)  // 20 ms apart: shorter than 50
      r.serve(write_at(i * 7919 % 2048 * 4096, t_us));
    EXPECT_EQ(ctl->stats().idle_steps, 0u);
    r.serve(write_at(0, t_us + 30e6));  // 30 s later
    if (quiet_ms == 50) EXPECT_GT(ctl->stats().idle_steps, 0u);
    else EXPECT_EQ(ctl->stats().idle_steps, 0u);
  }
}

TEST(ReplayOpenLoop, ATraceWithoutTimesIsRefusedNamingClosedLoop) {
  auto ctl = new_disk(DiskMode::kInplace);
  ReplayOptions o;
  o.trace = "t.iolog";
  o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
  Replayer r(*ctl, o);
  try {
    r.serve(write_at(0, std::nullopt));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t.iolog:1: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--closed-loop"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ctl->stats().requests.write, 0u);
}

TEST(ReplayClosedLoop, AtDepthOneEachRequestStartsWhenThePreviousEnded) {
  auto ctl = new_disk(DiskMode::kVld);
  std::FILE* csv = std::tmpfile();
  ReplayOptions o;
  o.closed_loop = true;
  o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
  o.requests_csv = csv;
  Replayer r(*ctl, o);
  for (uint64_t i = 0; i < 20; ++i) r.serve(write_at(i * 7 * 4096 % (8 << 20), 1e9 * i));
  const std::vector<CsvLine> lines = read_csv(csv);
  ASSERT_EQ(lines.size(), 20u);
  for (size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].arrival_ns, lines[i - 1].start_ns + lines[i - 1].service_ns) << i;
    EXPECT_EQ(lines[i].start_ns, lines[i].arrival_ns) << i;  // trace times are ignored
  }
  EXPECT_EQ(ctl->stats().idle_steps, 0u);
  std::fclose(csv);
}

TEST(ReplayClosedLoop, AtDepthFourEachRequestArrivesWhenTheFourthBeforeItCompleted) {
  auto ctl = new_disk(DiskMode::kInplace);
  std::FILE* csv = std::tmpfile();
  ReplayOptions o;
  o.closed_loop = true;
  o.qd = 4;
  o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
  o.requests_csv = csv;
  Replayer r(*ctl, o);
  for (uint64_t i = 0; i < 12; ++i) r.serve(write_at(i * 977 * 4096 % (16 << 20), std::nullopt));
  const std::vector<CsvLine> lines = read_csv(csv);
  ASSERT_EQ(lines.size(), 12u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(lines[i].arrival_ns, lines[0].arrival_ns);
  for (size_t i = 4; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].arrival_ns, lines[i - 4].start_ns + lines[i - 4].service_ns) << i;
    EXPECT_EQ(lines[i].start_ns, lines[i - 1].start_ns + lines[i - 1].service_ns) << i;  // in order
  }
  std::fclose(csv);
}

TEST(ReplaySync, WritesMakesEveryWriteFuaAndEveryNAddsAFlushAfterTheNthWrite) {
  for (const char* policy : {"writes", "every=3", "none"}) {
    auto ctl = new_disk(DiskMode::kInplace);
    ReplayOptions o;
    o.closed_loop = true;
    o.sync = *parse_sync_policy(policy);
    o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
    Replayer r(*ctl, o);
    for (uint64_t i = 0; i < 7; ++i) r.serve(write_at(i * 4096, std::nullopt));
    const DiskStats s = ctl->stats();
    SCOPED_TRACE(policy);
    EXPECT_EQ(s.requests.write, 7u);
    EXPECT_EQ(s.requests.write_fua, std::string(policy) == "writes" ? 7u : 0u);
    EXPECT_EQ(s.requests.flush, std::string(policy) == "every=3" ? 2u : 0u);
    EXPECT_EQ(r.counts().added_flushes, s.requests.flush);
    EXPECT_EQ(r.counts().requests, 7u);  // added flushes are not trace requests
  }
}

TEST(ReplayPreflush, AFlushGoesFirstAndTheWritesLatencyCountsFromItsArrival) {
  auto ctl = new_disk(DiskMode::kInplace);
  std::FILE* csv = std::tmpfile();
  ReplayOptions o;
  o.map = AddressMap(AddressMap::Kind::kNone, 16 << 20, 0);
  o.requests_csv = csv;
  Replayer r(*ctl, o);
  r.serve(write_at(0, 0.0));
  TraceRequest q = write_at(8192, 50000.0, true);
  q.preflush = true;
  r.serve(q);
  const std::vector<CsvLine> lines = read_csv(csv);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].op, "flush");
  EXPECT_EQ(lines[2].op, "write");
  EXPECT_EQ(lines[2].arrival_ns, lines[1].start_ns + lines[1].service_ns);
  EXPECT_EQ(r.counts().flushes, 0u);
  EXPECT_EQ(r.counts().added_flushes, 1u);
  const int64_t second = lines[2].start_ns + lines[2].service_ns - lines[1].arrival_ns;
  EXPECT_DOUBLE_EQ(r.latency(TraceOp::kWrite).mean_ns() * 2,
                   static_cast<double>(lines[0].latency_ns + second));
  std::fclose(csv);
}

}  // namespace
}  // namespace vld
