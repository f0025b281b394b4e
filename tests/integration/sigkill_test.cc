// SIGKILL of the real server in the middle of a workload (mode=vld, also
// with delta checkpoints every few requests, mode=lld with and without
// NVRAM, and mode=inplace), then a restart on the same image,
// checked from the client (the crash contract, docs/crash-contract.md):
//   - the image opens again without help, and the new server's stats file
//     says recovery.clean == false (mode=inplace reports no recovery);
//   - every write acknowledged with FUA, or before an acknowledged flush,
//     reads back; with mode=lld's NVRAM every acknowledged write does,
//     flushed or not (it is in the NVRAM region, synced, before its reply);
//   - every write request reads back all old or all new: each 4 KiB block
//     shows the data of a request that wrote it, or what it held before the
//     cycle; a request shown in one of its blocks is shown in all of them
//     (unless a later surviving request covers them); no block shows another
//     block's data or garbage. mode=inplace promises no atomic requests:
//     there each block on its own shows its newest durable write or a
//     later one, never garbage.
// Several kill cycles on one image, each from a fixed seed: synchronous
// random 4-64 KiB writes (some FUA) and flushes, then a batch of writes issued
// asynchronously and the kill as soon as the first of them is acknowledged,
// so some are still in flight (those whose reply the client had taken before
// the kill count as acknowledged). Finally a clean stop and restart, after
// which everything acknowledged reads back and recovery.clean == true.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/util/checksum.h"
#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kSize = 16 << 20;
constexpr uint64_t kBlk = 4096;
constexpr uint64_t kBlocks = kSize / kBlk;

uint64_t hash_block(const uint8_t* p) { return checksum64(p, kBlk, 0x51c); }

std::vector<uint64_t> read_hashes(nbd_handle* h) {
  std::vector<uint64_t> out;
  out.reserve(kBlocks);
  constexpr uint64_t kChunk = 1 << 20;
  for (uint64_t off = 0; off < kSize; off += kChunk) {
    std::vector<uint8_t> d = read_bytes(h, off, kChunk);
    for (uint64_t i = 0; i < kChunk; i += kBlk) out.push_back(hash_block(d.data() + i));
  }
  return out;
}

// One kill cycle: what the disk held before it (block hashes), the writes of
// the cycle in order, and who wrote what.
class Cycle {
 public:
  struct Req {
    uint64_t offset = 0, len = 0;
    bool fua = false;
    bool async = false;
    bool acked = false;
    bool durable = false;
    int64_t cookie = 0;         // of an asynchronous write
    std::vector<uint8_t> data;  // kept alive for asynchronous writes
    std::string describe(size_t i) const {
      return "#" + std::to_string(i) + (async ? " async" : "") + " write blocks " +
             std::to_string(offset / kBlk) + ".." + std::to_string((offset + len - 1) / kBlk) +
             (fua ? " FUA" : "") + (durable ? " (durable)" : acked ? " (acked)" : " (in flight)");
    }
  };

  // names: content hash -> which write of which cycle wrote it, shared by the
  // cycles so that data come back from an earlier cycle is named.
  Cycle(int index, std::vector<uint64_t> before,
        std::unordered_map<uint64_t, std::string>* names)
      : index_(index), before_(std::move(before)), writers_(kBlocks), names_(names) {
    reqs_.reserve(1024);  // references and buffers handed out stay put
  }

  Req& add(uint64_t offset, uint64_t len, bool fua, bool async, uint64_t seed) {
    Req r;
    r.offset = offset;
    r.len = len;
    r.fua = fua;
    r.async = async;
    r.data = pattern_bytes(offset, len, seed);
    const size_t id = reqs_.size();
    for (uint64_t b = offset / kBlk; b < (offset + len) / kBlk; ++b) {
      writers_[b].push_back(id);
      (*names_)[hash_block(r.data.data() + (b * kBlk - offset))] =
          "the data of cycle " + std::to_string(index_) + "'s " + r.describe(id) + " for block " +
          std::to_string(b);
    }
    reqs_.push_back(std::move(r));
    return reqs_.back();
  }
  // An acknowledged flush: everything acknowledged before it is durable.
  void flushed() {
    for (Req& r : reqs_)
      if (r.acked) r.durable = true;
  }
  std::vector<Req>& reqs() { return reqs_; }

  // "" if got (a hash per block, read after the restart) is allowed.
  std::string check(const std::vector<uint64_t>& got, size_t* survived_not_durable) const {
    std::vector<int> st(reqs_.size(), 0);  // 1 in, -1 out
    std::vector<std::string> why(reqs_.size());
    std::vector<std::string> problems;
    auto force = [&](size_t r, int v, const std::string& reason) {
      if (st[r] == v) return;
      if (st[r] == 0) {
        st[r] = v;
        why[r] = reason;
        return;
      }
      problems.push_back(reqs_[r].describe(r) + " must be " + (v > 0 ? "there" : "absent") + " (" +
                         reason + ") and " + (v > 0 ? "absent" : "there") + " (" + why[r] + ")");
    };
    for (size_t r = 0; r < reqs_.size(); ++r)
      if (reqs_[r].durable) force(r, 1, "acknowledged with FUA or before a flush");
    for (uint64_t b = 0; b < kBlocks; ++b) {
      const auto& ws = writers_[b];
      size_t top = ws.size();
      for (size_t j = 0; j < ws.size(); ++j)
        if (hash_block(reqs_[ws[j]].data.data() + (b * kBlk - reqs_[ws[j]].offset)) == got[b]) top = j;
      if (top < ws.size()) {
        force(ws[top], 1, "block " + std::to_string(b) + " shows it");
        for (size_t j = top + 1; j < ws.size(); ++j)
          force(ws[j], -1, "block " + std::to_string(b) + " shows an older write");
      } else if (got[b] == before_[b]) {
        for (size_t w : ws) force(w, -1, "block " + std::to_string(b) + " shows what it held before");
      } else {
        problems.push_back(unknown(b, got[b]));
      }
    }
    *survived_not_durable = 0;
    for (size_t r = 0; r < reqs_.size(); ++r)
      if (st[r] > 0 && !reqs_[r].durable) ++*survived_not_durable;
    return join(problems);
  }

  // The same for mode=inplace, which promises no atomic requests (a request
  // is written in place, block by block): each block on its own shows the
  // newest durable write of it or a later write of it; a block none of whose
  // writes is durable shows one of them or what it held before.
  std::string check_each_block(const std::vector<uint64_t>& got, size_t* survived_not_durable) const {
    std::vector<bool> shown(reqs_.size(), false);
    std::vector<std::string> problems;
    for (uint64_t b = 0; b < kBlocks; ++b) {
      const auto& ws = writers_[b];
      size_t top = ws.size(), durable = ws.size();
      for (size_t j = 0; j < ws.size(); ++j) {
        if (hash_block(reqs_[ws[j]].data.data() + (b * kBlk - reqs_[ws[j]].offset)) == got[b]) top = j;
        if (reqs_[ws[j]].durable) durable = j;
      }
      if (top < ws.size()) {
        shown[ws[top]] = true;
        if (durable < ws.size() && top < durable)
          problems.push_back("block " + std::to_string(b) + " shows " + reqs_[ws[top]].describe(ws[top]) +
                             ", older than the durable " + reqs_[ws[durable]].describe(ws[durable]));
      } else if (got[b] == before_[b]) {
        if (durable < ws.size())
          problems.push_back("block " + std::to_string(b) + " shows what it held before, not the durable " +
                             reqs_[ws[durable]].describe(ws[durable]));
      } else {
        problems.push_back(unknown(b, got[b]));
      }
    }
    *survived_not_durable = 0;
    for (size_t r = 0; r < reqs_.size(); ++r)
      if (shown[r] && !reqs_[r].durable) ++*survived_not_durable;
    return join(problems);
  }

 private:
  // What block b shows when it is neither its old contents nor a write of
  // this cycle: another write's data (named), zeros or garbage.
  std::string unknown(uint64_t b, uint64_t hash) const {
    auto it = names_->find(hash);
    const std::string what = it != names_->end() ? it->second
                             : hash == hash_block(std::vector<uint8_t>(kBlk, 0).data())
                                 ? std::string("zeros")
                                 : std::string("garbage");
    return "block " + std::to_string(b) + " shows " + what +
           ", not what it held before the cycle nor a write of this cycle";
  }
  static std::string join(const std::vector<std::string>& problems) {
    std::string out;
    for (size_t i = 0; i < problems.size() && i < 8; ++i) out += "\n  " + problems[i];
    if (problems.size() > 8) out += "\n  ... " + std::to_string(problems.size() - 8) + " more";
    return out;
  }

  int index_;
  std::vector<uint64_t> before_;
  std::vector<Req> reqs_;
  std::vector<std::vector<size_t>> writers_;
  std::unordered_map<uint64_t, std::string>* names_;
};

// Waits for the stats file the server writes right after it starts.
nlohmann::json wait_for_stats(const std::string& path) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("no stats file " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return read_json(path);
}

// The synchronous part of a cycle (requests of them), then the asynchronous
// batch and the kill. acks_durable: every acknowledged write is durable
// (mode=lld with NVRAM).
void run_and_kill(NbdkitServer& server, Cycle& cycle, std::mt19937_64& rng, uint64_t seed_base,
                  int requests, bool acks_durable) {
  auto pick = [&](uint64_t n) { return rng() % n; };
  NbdHandle h = server.connect();
  constexpr int kAsync = 32;
  const int kRequests = requests;
  uint64_t seed = seed_base;
  auto random_write = [&](bool async) -> Cycle::Req& {
    const uint64_t region = pick(3) == 0 ? 64 : kBlocks;  // a hot spot: overwrites
    const uint64_t blocks = 1 + pick(16);                 // 4-64 KiB
    const uint64_t first = pick(region - blocks + 1);
    return cycle.add(first * kBlk, blocks * kBlk, pick(4) == 0, async, ++seed);
  };
  for (int i = 0; i < kRequests; ++i) {
    if (pick(10) == 0) {
      check_nbd(nbd_flush(h.get(), 0), "nbd_flush");
      cycle.flushed();
      continue;
    }
    Cycle::Req& r = random_write(false);
    write_bytes(h.get(), r.offset, r.data, r.fua ? LIBNBD_CMD_FLAG_FUA : 0);
    r.acked = true;
    r.durable = r.fua || acks_durable;
  }
  // The batch: issued, not waited for; the kill comes when the first is done.
  // Requests in flight together may be executed in any order (NBD promises
  // none, and nbdkit's parallel threads do reorder them under load), so the
  // batch writes disjoint ranges: each request alone is then all old or all
  // new whatever the order.
  const uint64_t slot = kBlocks / kAsync;
  for (int i = 0; i < kAsync; ++i) {
    const uint64_t blocks = 1 + pick(std::min<uint64_t>(16, slot));
    const uint64_t first = i * slot + pick(slot - blocks + 1);
    Cycle::Req& r = cycle.add(first * kBlk, blocks * kBlk, pick(4) == 0, true, ++seed);
    r.cookie = nbd_aio_pwrite(h.get(), r.data.data(), r.len, r.offset, NBD_NULL_COMPLETION,
                              r.fua ? LIBNBD_CMD_FLAG_FUA : 0);
    check_nbd(r.cookie, "nbd_aio_pwrite");
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (nbd_aio_in_flight(h.get()) == kAsync && std::chrono::steady_clock::now() < deadline)
    check_nbd(nbd_poll(h.get(), 100), "nbd_poll");
  // The writes whose reply the client has taken are acknowledged: the kill
  // comes after.
  for (Cycle::Req& r : cycle.reqs()) {
    if (!r.async || nbd_aio_command_completed(h.get(), r.cookie) != 1) continue;
    r.acked = true;
    r.durable = r.fua || acks_durable;
  }
  server.kill9();
  // The handle goes before the buffers of its asynchronous writes.
  h.reset();
}

// What the stats file says recovery did, in a few words.
std::string describe_recovery(const std::string& mode, const nlohmann::json& rec) {
  if (mode == "inplace")
    return rec.at("records_replayed").dump() + " redo journal records replayed";
  if (is_lld(mode))
    return rec.at("writes_rolled_forward").dump() + " segment writes rolled forward, " +
           rec.at("writes_discarded").dump() + " discarded, " +
           rec.at("nvram_records_replayed").dump() + " NVRAM records replayed";
  return rec.at("method").get<std::string>() + ", " + rec.at("groups_accepted").dump() +
         " groups accepted, " + rec.at("groups_rejected").dump() + " rejected";
}

class Sigkill : public ::testing::TestWithParam<const char*> {};

// "vld_deltas": mode=vld with delta checkpoints every 8 scattered pieces
// and a 2-cylinder window (a record every few dozen writes), so that the
// kills land among deltas and records, and recovery walks at most 8
// scattered map sectors plus one request's group (16 KiB pieces: a 64 KiB
// write spans at most 2, a relay or two may join).
constexpr uint64_t kDeltaEvery = 8, kOneGroup = 4;

TEST_P(Sigkill, AcknowledgedWritesSurviveAndRequestsStayWhole) {
  const bool deltas = std::string(GetParam()) == "vld_deltas";
  const std::string mode = deltas ? "vld" : GetParam();
  // mode=inplace cannot tell a crash from a clean stop (no ARU is in
  // flight here), and has no atomic requests to check.
  const bool inplace = mode == "inplace";
  TempDir dir;
  const std::string image = dir.file("disk.img");
  std::mt19937_64 rng(20240603);
  std::vector<uint64_t> before(kBlocks, hash_block(std::vector<uint8_t>(kBlk, 0).data()));
  constexpr int kCycles = 4;
  std::vector<std::unique_ptr<Cycle>> cycles;
  std::unordered_map<uint64_t, std::string> names;
  for (int c = 0; c <= kCycles; ++c) {
    SCOPED_TRACE("cycle " + std::to_string(c));
    const std::string stats = dir.file("stats" + std::to_string(c) + ".json");
    std::vector<std::string> params = {"file=" + image, "latency=none", "statsfile=" + stats};
    if (deltas) {
      params.push_back("checkpoint_every=" + std::to_string(kDeltaEvery));
      params.push_back("window=2");
    }
    if (c == 0) {
      params.push_back("size=16M");
      params = with_mode(params, mode);
    }
    auto server = std::make_unique<NbdkitServer>(dir, params);
    nlohmann::json j = wait_for_stats(stats);
    if (c > 0) {
      // The previous cycle was killed: recovery, then the checks.
      const nlohmann::json& rec = j.at("recovery");
      if (inplace) {
        EXPECT_TRUE(rec.at("clean").is_null()) << rec.dump();
      } else {
        EXPECT_FALSE(rec.at("clean").get<bool>()) << rec.dump();
      }
      if (deltas) {
        EXPECT_LE(rec.at("scattered_walked").get<uint64_t>(), kDeltaEvery + kOneGroup) << rec.dump();
        std::cout << "[ sigkill  ] scattered map sectors walked: " << rec.at("scattered_walked")
                  << " of " << rec.at("map_sectors_walked") << std::endl;
      }
      {
        NbdHandle h = server->connect();
        std::vector<uint64_t> got = read_hashes(h.get());
        size_t survived = 0;
        std::string why = inplace ? cycles.back()->check_each_block(got, &survived)
                                  : cycles.back()->check(got, &survived);
        EXPECT_EQ(why, "") << "after the kill of cycle " << c - 1;
        size_t acked = 0, durable = 0;
        for (const auto& r : cycles.back()->reqs()) acked += r.acked, durable += r.durable;
        std::cout << "[ sigkill  ] cycle " << c - 1 << ": " << cycles.back()->reqs().size()
                  << " writes (" << acked << " acknowledged, " << durable << " durable), "
                  << survived << " not durable but survived; recovery: "
                  << describe_recovery(mode, rec) << std::endl;
        before = got;
        nbd_shutdown(h.get(), 0);
      }
    } else {
      EXPECT_EQ(j.at("mode").get<std::string>(), mode_stat_name(mode));
    }
    if (c == kCycles) {
      // Last: a clean stop and restart keeps exactly what was read.
      ASSERT_EQ(server->stop(), 0) << server->stderr_text();
      const std::string stats2 = dir.file("stats-clean.json");
      NbdkitServer again(dir, {"file=" + image, "latency=none", "statsfile=" + stats2});
      nlohmann::json j2 = wait_for_stats(stats2);
      if (!inplace) {
        EXPECT_TRUE(j2.at("recovery").at("clean").get<bool>()) << j2.at("recovery").dump();
      }
      NbdHandle h = again.connect();
      EXPECT_EQ(read_hashes(h.get()), before) << "a clean stop and restart changed the contents";
      nbd_shutdown(h.get(), 0);
      EXPECT_EQ(again.stop(), 0);
      break;
    }
    cycles.push_back(std::make_unique<Cycle>(c, before, &names));
    // mode=lld writes more, so that its log wraps around the platters and
    // the cleaner runs (and is killed) from the second cycle on: 400
    // requests a cycle write about 12 MiB, the platters hold about 23.
    run_and_kill(*server, *cycles.back(), rng, 1000 * (c + 1), is_lld(mode) ? 400 : 120,
                 acks_are_durable(mode));
  }
}

// mode=lld with NVRAM, specifically: without a single flush or FUA write,
// every acknowledged write, trim and zero reads back after kill -9, also
// those written while the NVRAM drained into segments (the workload writes
// more than the 6.1 MB buffer holds, so it fills and drains more than once).
TEST(SigkillLldNvram, EveryAcknowledgedRequestSurvivesWithoutAFlush) {
  TempDir dir;
  const std::string image = dir.file("disk.img"), stats = dir.file("stats.json");
  std::vector<uint8_t> shadow(kSize, 0);
  {
    NbdkitServer server(dir, with_mode({"file=" + image, "size=16M", "latency=none",
                                        "statsfile=" + stats},
                                       "lld"));
    NbdHandle h = server.connect();
    std::mt19937_64 rng(8086);
    uint64_t written = 0;
    for (int i = 0; written < 20 * (1 << 20); ++i) {
      const uint64_t len = (1 + rng() % 32) * 512 * (rng() % 4 == 0 ? 8 : 1);
      const uint64_t off = rng() % ((kSize - len) / 512) * 512;
      if (i % 50 == 49) {
        check_nbd(nbd_trim(h.get(), len, off, 0), "nbd_trim");
        // Only whole blocks are trimmed; the partial edges keep their data.
        const uint64_t first = (off + kBlk - 1) / kBlk * kBlk, end = (off + len) / kBlk * kBlk;
        if (end > first) std::fill(shadow.begin() + first, shadow.begin() + end, 0);
      } else if (i % 50 == 24) {
        check_nbd(nbd_zero(h.get(), len, off, 0), "nbd_zero");
        std::fill(shadow.begin() + off, shadow.begin() + off + len, 0);
      } else {
        std::vector<uint8_t> data = pattern_bytes(off, len, 5000 + i);
        write_bytes(h.get(), off, data);
        std::copy(data.begin(), data.end(), shadow.begin() + off);
        written += len;
      }
    }
    server.kill9();
  }
  NbdkitServer server(dir, {"file=" + image, "latency=none", "statsfile=" + stats});
  NbdHandle h = server.connect();
  for (uint64_t off = 0; off < kSize; off += 1 << 20) {
    std::vector<uint8_t> want(shadow.begin() + off, shadow.begin() + off + (1 << 20));
    ASSERT_EQ(first_difference(read_bytes(h.get(), off, 1 << 20), want, off), "")
        << "an acknowledged request was lost, or came back torn";
  }
  nbd_shutdown(h.get(), 0);
  ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  nlohmann::json j = read_json(stats);
  SCOPED_TRACE(j.dump(2));
  const nlohmann::json& rec = j.at("recovery");
  EXPECT_FALSE(rec.at("clean").get<bool>());
  EXPECT_GT(rec.at("nvram_records_replayed").get<int64_t>(), 0)
      << "nothing was left in the NVRAM at the kill: the test checked only segments";
}

INSTANTIATE_TEST_SUITE_P(Modes, Sigkill,
                         ::testing::Values("vld", "vld_deltas", "lld", "lld_nvram0", "inplace"),
                         ModeName);

}  // namespace
}  // namespace vld::test
