// The crash harness for atomic recovery units (docs/aru.md), in every mode.
//
// The workload runs several connections' ARUs at once, each an AruShadow
// as the plugin's AruSession keeps it: writes (whole and partial blocks,
// merged with committed data), zeroes and trims into the shadow; commits
// of 1 to 64 blocks, each one Disk::commit_group; aborts (the shadow
// dropped); and, between them, ordinary requests on the default export
// (writes, FUA writes, flushes). The oracle (crash_oracle.h) takes each
// commit as one atomic unit over all its blocks that must be there once the
// commit completed, and each completed commit as a flush. So at every crash
// state checked:
//   - each ARU is all or nothing (an aborted one is nothing: it never
//     reached the disk, and recovery must not find any of it);
//   - every ARU whose commit completed is all there, with every write
//     acknowledged before it;
//   - recovery cut by a crash, and cut again, still agrees (clause 4), and
//     the recovered state is consistent (clause 5).
//
// mode=inplace updates ordinary writes in place, atomic only per block and
// only at 4 KiB (crash_oracle.h, RigConfig::block_units): its tests run
// either whole-block ordinary writes with 4 KiB crash states, or no
// ordinary writes with torn 512-byte states (AruMix).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <random>

#include "core/aru/aru_shadow.h"
#include "tests/unit/crash_oracle.h"

namespace vld::crash {
namespace {

// Data of the ARUs' own, unique per (write, offset): ids far above any
// request index of the rig.
constexpr uint64_t kShadowIdBase = 1'000'000;

struct AruTally {
  uint64_t commits = 0, blocks_committed = 0, largest = 0, aborts = 0, shadow_ops = 0;
};

// One connection's ARU on the rig: an AruShadow over the rig's committed data.
// On a disk that places an ARU's blocks as they are written (mode=vld), the
// placements go through the rig, recorded.
class Connection final : public AruShadow::Placer {
 public:
  explicit Connection(Rig& rig) : rig_(rig), shadow_(kBlock, rig.sb().export_bytes, 64 * kBlock) {
    if (rig.disk().places_shadow()) shadow_.set_placer(this);
  }
  ~Connection() override { shadow_.clear(); }
  std::vector<uint64_t> place(std::span<const GroupBlock> blocks) override {
    return rig_.place_shadow(blocks);
  }
  void drop(uint64_t token) override { rig_.drop_shadow(token); }

  bool write(uint64_t offset, uint64_t len, uint64_t id) {
    Bytes data = request_data(0xa2u, kShadowIdBase + id, offset, len);
    return attempt([&] { shadow_.write(offset, data, base()); });
  }
  bool zero(uint64_t offset, uint64_t len) {
    return attempt([&] { shadow_.zero(offset, len, base()); });
  }
  bool trim(uint64_t offset, uint64_t len) {
    return attempt([&] { shadow_.trim(offset, len); });
  }
  void commit(AruTally& t) {
    if (shadow_.empty()) {
      rig_.flush();  // an empty ARU commits as a flush
      return;
    }
    ++t.commits;
    t.blocks_committed += shadow_.blocks();
    t.largest = std::max<uint64_t>(t.largest, shadow_.blocks());
    rig_.commit_group(shadow_.group());
    shadow_.committed();
  }
  void abort(AruTally& t) {
    if (!shadow_.empty()) ++t.aborts;
    shadow_.clear();
  }
  size_t blocks() const { return shadow_.blocks(); }

 private:
  AruShadow::ReadBase base() {
    return [this](uint64_t b, std::span<std::byte> out) { rig_.read_committed(b * kBlock, out); };
  }
  // A change past the ARU's 64 blocks is refused (ENOSPC) and changes nothing.
  template <typename Fn>
  bool attempt(Fn&& fn) {
    const size_t before = shadow_.blocks();
    try {
      fn();
      return true;
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOSPC);
      EXPECT_EQ(shadow_.blocks(), before);
      return false;
    }
  }
  Rig& rig_;
  AruShadow shadow_;
};

// What the workload does besides ARUs, and which crash states are checked.
// The defaults are those of mode=vld and mode=lld.
struct AruMix {
  bool ordinary_writes = true;    // writes on the default export
  bool whole_block_writes = false;  // ...and then only whole, aligned blocks
  // Every crash state at this granularity; nullopt: every third torn.
  std::optional<G> granularity;
};

void aru_workload(Rig& rig, std::mt19937_64& rng, size_t steps, size_t connections, AruTally& t,
                  const AruMix& mix = {}) {
  std::vector<std::unique_ptr<Connection>> conns;
  for (size_t i = 0; i < connections; ++i) conns.push_back(std::make_unique<Connection>(rig));
  const uint64_t blocks = rig.blocks();
  auto pick = [&](uint64_t n) { return rng() % n; };
  for (size_t i = 0; i < steps; ++i) {
    Connection& c = *conns[pick(conns.size())];
    const unsigned op = pick(100);
    const uint64_t region = pick(3) == 0 ? std::min<uint64_t>(blocks, 32) : blocks;  // overlaps
    const uint64_t first = pick(region);
    uint64_t len = std::min<uint64_t>(1 + (pick(4) == 0 ? pick(16) : pick(3)), blocks - first) * kBlock;
    uint64_t offset = first * kBlock;
    const uint64_t block_len = len;
    if (pick(4) == 0) {  // sector-aligned, not block-aligned: merged with committed data
      const uint64_t head = 512 * pick(8);
      offset += head;
      len = len > head + 512 ? len - head - 512 * pick(2) : 512;
    }
    if (op < 40) {
      t.shadow_ops += c.write(offset, len, i);
    } else if (op < 46) {
      t.shadow_ops += c.zero(offset, len);
    } else if (op < 50) {
      t.shadow_ops += c.trim(offset, len);
    } else if (op < 66) {
      c.commit(t);
    } else if (op < 72) {
      c.abort(t);
    } else if (op < 82) {
      const bool fua = pick(4) == 0;  // the default export, between commits
      if (mix.ordinary_writes && mix.whole_block_writes)
        rig.write(first * kBlock, block_len, fua);
      else if (mix.ordinary_writes)
        rig.write(offset, len, fua);
    } else if (op < 86) {
      rig.flush();
    } else if (op < 90) {
      rig.idle(1 + pick(4));  // compaction, cleaning, NVRAM drains
    } else if (op < 95) {
      // A large ARU: up to 64 blocks scattered over the disk, some zeros.
      std::vector<uint64_t> bs;
      for (uint64_t n = 1 + pick(64); bs.size() < n;) bs.push_back(pick(blocks));
      std::sort(bs.begin(), bs.end());
      bs.erase(std::unique(bs.begin(), bs.end()), bs.end());
      std::vector<bool> zeros;
      for (size_t k = 0; k < bs.size(); ++k) zeros.push_back(pick(8) == 0);
      ++t.commits;
      t.blocks_committed += bs.size();
      t.largest = std::max<uint64_t>(t.largest, bs.size());
      rig.commit_group(bs, zeros);
    } else if (op < 97) {
      for (auto& other : conns) other->abort(t);  // every client disconnects
      rig.close_and_reopen();
      ASSERT_EQ(rig.check_live(), "");
    }
  }
  for (auto& c : conns) c->abort(t);  // still open at the crash: aborted
}

// Runs the ARU workload on `config` and crashes it at `points` sampled
// points (exhaustive where few units are pending).
void run_aru(const char* name, const RigConfig& config, uint64_t seed, size_t steps,
             size_t points, uint64_t min_states, const AruMix& mix = {}) {
  auto t0 = std::chrono::steady_clock::now();
  Rig rig(config, seed);
  std::mt19937_64 rng(seed);
  AruTally t;
  // mode=lld refuses a request the clean segments cannot take whole
  // (LldStats::refused_requests, counted per open).
  LldStats lld_total;  // over the reopens
  auto add = [&lld_total](const LldStats& s) {
    lld_total.refused_requests += s.refused_requests;
    lld_total.segments_cleaned += s.segments_cleaned;
    lld_total.checkpoints += s.checkpoints;
    lld_total.nvram_bypasses += s.nvram_bypasses;
    lld_total.nvram_drains += s.nvram_drains;
  };
  const bool lld = config.mode == DiskMode::kLld;
  if (lld) rig.before_close([&](Disk& d) { add(dynamic_cast<LldDisk&>(d).report().stats); });
  aru_workload(rig, rng, steps, /*connections=*/3, t, mix);
  ASSERT_EQ(rig.check_live(), "");
  if (lld) {
    add(rig.lld_disk().report().stats);
    const LldReport r = rig.lld_disk().report();
    std::cout << "[ crash    ] " << name << ": " << rig.blocks() << " blocks, " << r.segment_count
              << " segments of " << r.blocks_per_segment << " blocks, "
              << r.nvram_capacity_records << " NVRAM records; " << lld_total.segments_cleaned
              << " segments cleaned, " << lld_total.checkpoints << " checkpoints, "
              << lld_total.nvram_drains << " NVRAM drains, " << lld_total.nvram_bypasses
              << " requests past the NVRAM, " << lld_total.refused_requests << " refused"
              << std::endl;
    ASSERT_EQ(lld_total.refused_requests, 0u)
        << "precondition: the disk must have room for every request whole";
    ASSERT_GT(lld_total.segments_cleaned, 0u) << "precondition: the cleaner must run";
  }
  ASSERT_GE(t.commits, steps / 10) << "the workload must commit ARUs";
  ASSERT_GE(t.largest, 32u) << "the workload must commit large ARUs";
  ASSERT_GT(t.aborts, 0u) << "the workload must abort ARUs";
  const RecordingStore& rec = rig.rec();
  std::vector<Job> jobs;
  const size_t span = rec.events() - rig.format_end() + 1;
  for (size_t i = 0; i < points; ++i) {
    const size_t p = rig.format_end() + rng() % span;
    const G g = mix.granularity ? *mix.granularity : (i % 3 == 2) ? G::k512 : G::k4K;
    const size_t k = rec.pending_unit_count(p, g);
    if (k <= 6) {
      for (uint64_t m = 0; m < (uint64_t{1} << k); ++m) jobs.push_back(Job{p, g, Job::Kind::kMask, m});
      continue;
    }
    jobs.push_back(Job{p, g, Job::Kind::kPrefix, rng() % (k + 1)});
    jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
    jobs.push_back(Job{p, g, Job::Kind::kRandom, rng()});
  }
  std::cout << "[ crash    ] " << name << ": " << rig.requests().size() << " requests, "
            << rec.events() << " events, " << rec.syncs() << " syncs; " << t.commits
            << " ARU commits (" << t.blocks_committed << " blocks, the largest " << t.largest
            << "), " << t.aborts << " aborts, " << t.shadow_ops << " shadow requests" << std::endl;
  RunResult r = run_jobs(rig, jobs, harness_threads(), /*nested_every=*/5, seed);
  std::cout << "[ crash    ] " << name << ": crash states verified: " << r.verified << " ("
            << r.nested << " with recovery cut), recovery-cut states verified: " << r.recovery_cuts
            << ", failures: " << r.failures << ", "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s" << std::endl;
  for (const std::string& m : r.messages) ADD_FAILURE() << name << ": " << m;
  EXPECT_EQ(r.failures, 0u);
  EXPECT_GE(r.verified, min_states);
}

RigConfig vld_aru_config() {
  RigConfig c;
  c.export_bytes = 1 << 20;  // 256 blocks, 8 map pieces: an ARU spans several
  c.vld.window_cylinders = 2;
  c.vld.retired_limit = 8;
  return c;
}

TEST(CrashHarness, AruVld) { run_aru("ARUs, mode=vld", vld_aru_config(), 91, 260, 900, 2500); }

// mode=lld (core/lld/lld_aru.cc): a commit up to the NVRAM's 15 records is
// one NVRAM request, a larger one (and every one with nvram=0) a continues
// chain of segment writes of 7 blocks. The disk has room for the largest
// group beside every live block (no request is split), and few enough
// segments that the cleaner runs.
RigConfig lld_aru_config(bool nvram) {
  RigConfig c;
  c.mode = DiskMode::kLld;
  c.export_bytes = 512 * 1024;  // 128 blocks
  c.spare_percent = 150;  // 44 (NVRAM) or 46 segments of 7 blocks: room for 64 twice
  c.cylinders = 24;
  c.segment_bytes = 32 * 1024;
  c.nvram_bytes = nvram ? 64 * 1024 : 0;
  return c;
}

TEST(CrashHarness, AruLld) {
  run_aru("ARUs, mode=lld nvram=64K", lld_aru_config(true), 93, 260, 900, 2500);
}
TEST(CrashHarness, AruLldNoNvram) {
  run_aru("ARUs, mode=lld nvram=0", lld_aru_config(false), 94, 260, 900, 2500);
}

// The redo journal past the export holds 96 blocks here: every ARU of the
// workload (at most 64 blocks) fits.
RigConfig inplace_aru_config() {
  RigConfig c;
  c.mode = DiskMode::kInplace;
  c.export_bytes = 1 << 20;  // 256 blocks
  return c;
}

// ARUs among whole-block ordinary writes (FUA or not) and flushes: every
// ARU all or nothing, no stale journal record replayed over a newer
// durable write; 4 KiB crash states, where in-place blocks are atomic.
TEST(CrashHarness, AruInplace) {
  run_aru("ARUs, mode=inplace, whole-block writes, 4K states", inplace_aru_config(), 93, 300, 900,
          4000, AruMix{.ordinary_writes = true, .whole_block_writes = true, .granularity = G::k4K});
}

// ARUs, aborts, flushes and reopens only, every crash state torn at 512
// bytes: the journal record, the home writes and the void may each be cut
// anywhere, and each ARU is still all or nothing.
TEST(CrashHarness, AruInplaceTorn512) {
  run_aru("ARUs, mode=inplace, torn 512-byte states", inplace_aru_config(), 95, 400, 1500, 3000,
          AruMix{.ordinary_writes = false, .granularity = G::k512});
}

}  // namespace
}  // namespace vld::crash
