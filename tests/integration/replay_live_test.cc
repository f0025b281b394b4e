// Replay equals live (docs/replay.md): requests captured with nbdkit's log
// filter in front of a latency=none server, replayed by vld-bench replay
// --closed-loop on a copy of the image the server started from, take the
// same simulated service time, request by request, as the server's
// -D vld.requests=1 lines say they took: equal, not close, since simulated
// time is a deterministic function of the requests.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kExportBytes = 32ull << 20;

struct Served {
  std::string op;
  uint64_t offset = 0, len = 0;
  int64_t service_ns = 0;
  bool operator==(const Served&) const = default;
};

std::ostream& operator<<(std::ostream& o, const Served& s) {
  return o << s.op << " " << s.offset << "+" << s.len << " " << s.service_ns << " ns";
}

// A client's mix, one request at a time: writes of 512 B to 64 KiB
// (partial blocks among them), FUA writes, reads, flushes, trims, zeroes.
void mixed_workload(nbd_handle* h, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 240; ++i) {
    const uint64_t len = uint64_t{512} << (rng() % 8);  // 512 B .. 64 KiB
    const uint64_t offset = rng() % ((kExportBytes - len) / 512) * 512;
    switch (rng() % 10) {
      case 0: check_nbd(nbd_flush(h, 0), "nbd_flush"); break;
      case 1: check_nbd(nbd_trim(h, kBlock, offset / kBlock * kBlock, 0), "nbd_trim"); break;
      case 2: check_nbd(nbd_zero(h, len, offset, 0), "nbd_zero"); break;
      case 3: case 4: (void)read_bytes(h, offset, len); break;
      case 5: write_bytes(h, offset, pattern_bytes(offset, len, i), LIBNBD_CMD_FLAG_FUA); break;
      default: write_bytes(h, offset, pattern_bytes(offset, len, i)); break;
    }
  }
}

// The plugin's -D vld.requests=1 lines.
std::vector<Served> served_live(const std::string& err) {
  static const std::regex line(
      R"(request: (\w+) offset=(\d+) len=(\d+) fua=\d start_ns=-?\d+ service_ns=(\d+))");
  std::vector<Served> out;
  for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[1], std::stoull((*it)[2]), std::stoull((*it)[3]), std::stoll((*it)[4])});
  return out;
}

// vld-bench replay --requests's CSV.
std::vector<Served> served_replay(const std::string& csv) {
  std::ifstream in(csv);
  std::string l;
  std::getline(in, l);  // header
  std::vector<Served> out;
  while (std::getline(in, l)) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    out.push_back({f.at(2), std::stoull(f.at(3)), std::stoull(f.at(4)), std::stoll(f.at(8))});
  }
  return out;
}

class ReplayLive : public ::testing::TestWithParam<const char*> {};

TEST_P(ReplayLive, ClosedLoopReplayOfACaptureTakesTheLiveServiceTimes) {
  TempDir dir;
  const std::string image = dir.file("disk.img"), start = dir.file("start.img");
  const std::vector<std::string> params = {"file=" + image, "latency=none"};
  {
    std::vector<std::string> create = with_mode(params, GetParam());
    create.push_back("size=32M");
    NbdkitServer server(dir, create);
    NbdHandle h = server.connect();
    fill_and_fragment(h.get(), 2048);  // a used disk, not a new one
    h.reset();
    ASSERT_EQ(server.stop(), 0);
  }
  std::filesystem::copy_file(image, start);
  std::vector<std::string> logged = params;
  logged.push_back("logfile=" + dir.file("capture.log"));
  NbdkitServer server(dir, logged, {"--filter=log", "-v", "-D", "vld.requests=1"});
  {
    NbdHandle h = server.connect();
    mixed_workload(h.get(), 7);
  }
  ASSERT_EQ(server.stop(), 0);
  const std::vector<Served> live = served_live(server.stderr_text());
  ASSERT_EQ(live.size(), 240u) << server.stderr_text();

  const ProgramRun r = run_program(dir, VLD_BENCH_PATH,
                                   {"replay", dir.file("capture.log"), "--image", start,
                                    "--closed-loop", "--requests", dir.file("replay.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Served> replayed = served_replay(dir.file("replay.csv"));
  ASSERT_EQ(replayed.size(), live.size());
  for (size_t i = 0; i < live.size(); ++i) ASSERT_EQ(replayed[i], live[i]) << "request " << i;
}

INSTANTIATE_TEST_SUITE_P(EveryMode, ReplayLive, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
