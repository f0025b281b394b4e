// Backing-store faults (docs/crash-contract.md, "When the backing file
// fails"): EIO and ENOSPC from the image's write,
// fdatasync and hole punching, injected one at a time (core/store/fault_store.h)
// into every call a workload makes, in both modes, on a roomy disk and on a
// full one (where writes go through repacks).
//
// What must hold (docs/crash-contract.md, "When the backing file fails"):
//   - the failing request reports an error, never success;
//   - afterwards every block outside it reads what was acknowledged, and its
//     own blocks read old or new (never garbage, never another block's);
//     after a failed sync whose writes the kernel dropped, a block may fail
//     with EIO instead, but never read wrong data;
//   - vld's in-memory state stays consistent (check_consistency);
//   - after a failed sync, no later write or flush succeeds until restart;
//   - a restart (kill -9: the image as the page cache holds it) and a power
//     cut (the image as the last successful sync left it) both open, and
//     every block reads its durable content or something written after it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <random>
#include <set>

#include "core/disk.h"
#include "core/store/fault_store.h"
#include "core/modes/mode_image.h"
#include "core/modes/mode_report.h"
#include "core/util/checksum.h"
#include "core/util/error.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "tests/unit/test_superblock.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
using Bytes = std::vector<std::byte>;

uint64_t hash_of(const std::byte* p) { return checksum64(p, kBlock, 0xfa17ULL); }

// nvram_bytes: mode=lld's nvram= (0: none); its segments are one track,
// so 1-4 block requests often span two segment writes.
Superblock small_superblock(DiskMode mode, uint64_t export_bytes, uint32_t spare_percent,
                            uint64_t nvram_bytes = 0) {
  FormatOptions o;
  o.mode = mode;
  o.segment_bytes = 32 * 1024;
  o.nvram_bytes = nvram_bytes;
  o.export_bytes = export_bytes;
  o.block_bytes = kBlock;
  o.spare_percent = spare_percent;
  o.geometry = test::small_st19101_geometry();
  Superblock sb = plan_image_unchecked(o);  // tiny, tightly packed disks
  sb.platter_offset = 4096;
  return sb;
}

// deltas: a delta checkpoint once two pieces are scattered, spread a piece
// a request (vld_disk_checkpoint.cc), so that faults land in its groups.
DiskOptions small_options(bool deltas = false) {
  DiskOptions d;
  d.vld.window_cylinders = 2;
  d.vld.retired_limit = 8;  // records often: faults land in them too
  if (deltas) {
    d.vld.checkpoint_every_map_sectors = 2;
    d.vld.checkpoint_group_pieces = 1;
  }
  return d;
}

// A formatted image in memory, a FaultyStore over it, and a disk on that.
struct FaultyDisk {
  FaultyDisk(DiskMode mode, uint64_t export_bytes, uint32_t spare_percent, uint64_t nvram_bytes = 0,
             const DiskOptions& options = small_options())
      : sb(small_superblock(mode, export_bytes, spare_percent, nvram_bytes)),
        mem(sb.image_bytes()),
        faulty(format()) {
    disk = make_disk(std::make_unique<ProxyStore>(faulty), sb, options);
  }
  MemoryBackingStore& format() {
    auto enc = encode_superblock(sb);
    mem.write(0, std::as_bytes(std::span(enc)));
    format_store(mem, sb);
    return mem;
  }
  Superblock sb;
  MemoryBackingStore mem;
  FaultyStore faulty;
  std::unique_ptr<Disk> disk;
};

// What each block may read. acked: the content of the newest request that
// succeeded; failed: contents of requests that failed since (a failed
// request leaves its blocks old or new, and new may stay). durable: what a
// power cut must keep; since: everything written to the block after that,
// which a crash may or may not show.
struct BlockModel {
  uint64_t acked = 0, durable = 0;
  std::set<uint64_t> failed, since;
  // strict: failed writes, which may show after a crash only if the disk
  // stopped (it could not void them; docs/crash-contract.md clause 7).
  std::set<uint64_t> voided;
  // inplace: a failed write may leave the block part old, part new (each
  // sector either), as a conventional disk does, until it is rewritten.
  bool torn = false;
};

class Model {
 public:
  // strict: a failed write leaves no trace, live or after a crash.
  Model(uint64_t blocks, bool update_in_place, bool strict)
      : b_(blocks), in_place_(update_in_place), strict_(strict) {
    Bytes z(kBlock);
    for (BlockModel& m : b_) m.acked = m.durable = hash_of(z.data());
  }
  const BlockModel& at(uint64_t block) const { return b_[block]; }
  uint64_t blocks() const { return b_.size(); }
  // lenient: a failed request that may show anyway (a trim).
  void wrote(uint64_t block, uint64_t h, bool ok, bool fua, bool lenient = false) {
    BlockModel& m = b_[block];
    if (!ok && strict_ && !lenient) {
      m.voided.insert(h);
      return;
    }
    m.since.insert(h);
    if (!ok) {
      m.failed.insert(h);
      m.torn = in_place_;
      return;
    }
    m.acked = h;
    m.failed.clear();
    m.torn = false;
    if (fua) {
      m.durable = h;
      m.since.clear();
    }
  }
  // A trim may leave the old contents (it is advisory).
  void trimmed(uint64_t block, uint64_t zero_hash, bool ok) {
    const uint64_t old = b_[block].acked;
    wrote(block, zero_hash, ok, false, /*lenient=*/true);
    b_[block].failed.insert(old);
    b_[block].since.insert(old);
  }
  void flushed() {
    for (BlockModel& m : b_) {
      m.durable = m.acked;
      m.since = m.failed;
    }
  }
  bool live_allowed(uint64_t b, uint64_t h) const {
    return h == b_[b].acked || b_[b].failed.count(h) || b_[b].torn;
  }
  // "" if hash h is one block b may show after a crash; stopped: the disk
  // stopped taking writes before it.
  std::string crash_allowed(uint64_t b, uint64_t h, bool stopped) const {
    const BlockModel& m = b_[b];
    if (h == m.durable || m.since.count(h) || live_allowed(b, h)) return "";
    if (stopped && m.voided.count(h)) return "";
    if (in_place_ && !m.since.empty()) return "";  // a torn in-place write since
    return "block " + std::to_string(b) + " reads neither its durable content nor anything "
           "written after it";
  }

 private:
  std::vector<BlockModel> b_;
  bool in_place_;
  bool strict_;
};

// Bytes unique to (request, block), none all-zero.
Bytes block_data(uint64_t req, uint64_t block) {
  Bytes out(kBlock);
  std::mt19937_64 rng(req * 1000003 + block);
  for (size_t i = 0; i < kBlock; i += 8) {
    uint64_t v = rng() | 1;
    std::memcpy(out.data() + i, &v, 8);
  }
  return out;
}

struct Scenario {
  DiskMode mode;
  bool full;  // spare=5, every block written first: repacks
  FaultyStore::Fault fault;
  uint64_t nvram_bytes = 0;  // mode=lld
  bool deltas = false;       // mode=vld: small_options(true)
  std::string name() const {
    static const char* ops[] = {"write", "fdatasync", "discard"};
    std::string n = std::string(mode_name(mode)) +
                    (mode == DiskMode::kLld ? " nvram=" + std::to_string(nvram_bytes) : "") +
                    (full ? " full" : "") + (deltas ? " deltas" : "") +
                    ", " + ops[static_cast<int>(fault.op)] + " fault #" +
                    std::to_string(fault.nth) + (fault.err == ENOSPC ? " ENOSPC" : " EIO") +
                    (fault.sticky ? " sticky" : "") + (fault.torn_bytes ? " torn" : "") +
                    (fault.drop_on_failed_sync ? " dropping" : "");
    return n;
  }
};

struct Outcome {
  std::string problem;  // "" if every check held
  uint64_t failed_requests = 0, stopped = 0, faults = 0;
  uint64_t deltas = 0;  // vld's delta checkpoints finished with the fault armed
};

// One scenario: a fixed workload (seeded), the fault armed after the setup,
// then what the live disk reads and what a restart and a power cut recover.
class ScenarioRun {
 public:
  explicit ScenarioRun(const Scenario& sc)
      : sc_(sc),
        fd_(sc.mode, 512 * 1024, sc.full ? 5 : 25, sc.nvram_bytes, small_options(sc.deltas)),
        blocks_(sc.full ? 120 : fd_.sb.export_bytes / kBlock),  // 120: all a full disk holds
        model_(fd_.sb.export_bytes / kBlock, sc.mode == DiskMode::kInplace, strict(sc)) {}

  // Whether a failed write must leave no trace: its blocks keep reading
  // their old contents, live and after a crash (clause 7). Not in
  // mode=inplace (part old, part new), nor after a failed sync, which
  // cannot take back what it did not sync.
  static bool strict(const Scenario& sc) {
    return sc.mode != DiskMode::kInplace && sc.fault.op == FaultyStore::Op::kWrite;
  }

  // Returns what went wrong ("" in .problem if every check held).
  Outcome run(uint64_t seed) {
    // Setup: every block written and flushed (a full disk is full).
    for (uint64_t b = 0; b < blocks_; ++b) write(b, 1, false);
    if (!flush()) return Outcome{"setup flush failed"};
    fd_.faulty.arm(sc_.fault);
    const uint64_t deltas_before = delta_checkpoints();
    Outcome out;
    if (std::string why = workload(seed, &out); !why.empty()) return Outcome{why};
    out.deltas = delta_checkpoints() - deltas_before;
    if (std::string why = fd_.disk->check_consistency(); !why.empty())
      return Outcome{"live disk inconsistent: " + why};
    if (std::string why = check_live_reads(); !why.empty()) return Outcome{why};
    if (std::string why = check_restarts(); !why.empty()) return Outcome{why};
    return out;
  }

 private:
  bool write(uint64_t first, uint64_t n, bool fua) {
    Bytes data(n * kBlock);
    ++req_;
    for (uint64_t i = 0; i < n; ++i) {
      Bytes d = block_data(req_, first + i);
      std::memcpy(data.data() + i * kBlock, d.data(), kBlock);
    }
    bool ok = true;
    try {
      now_ = fd_.disk->write(first * kBlock, data, fua, now_).end;
    } catch (const Error& e) {
      ok = false;
      saw_error(e);
    }
    for (uint64_t i = 0; i < n; ++i)
      model_.wrote(first + i, hash_of(data.data() + i * kBlock), ok, fua);
    return ok;
  }
  bool trim(uint64_t first, uint64_t n) {
    ++req_;
    bool ok = true;
    try {
      now_ = fd_.disk->trim(first * kBlock, n * kBlock, false, now_).end;
    } catch (const Error& e) {
      ok = false;
      saw_error(e);
    }
    Bytes z(kBlock);
    for (uint64_t i = 0; i < n; ++i) model_.trimmed(first + i, hash_of(z.data()), ok);
    return ok;
  }
  bool flush() {
    try {
      now_ = fd_.disk->flush(now_).end;
      model_.flushed();
      return true;
    } catch (const Error& e) {
      saw_error(e);
      return false;
    }
  }
  void saw_error(const Error& e) {
    if (std::string(e.what()).find("takes no more writes") != std::string::npos) stopped_ = true;
  }

  // 60 seeded writes, flushes and trims with the fault armed, and a flush; counts into
  // *out. "" or what went wrong.
  std::string workload(uint64_t seed, Outcome* out) {
    std::mt19937_64 rng(seed);
    bool stopped = false;
    for (int i = 0; i <= 60; ++i) {
      // The last is a flush: if the request before it stopped the disk, it
      // says so (stopped_).
      const unsigned op = i == 60 ? 6 : rng() % 10;
      const uint64_t first = rng() % blocks_, n = 1 + rng() % std::min<uint64_t>(4, blocks_ - first);
      bool ok;
      if (op < 6) ok = write(first, n, op == 0);
      else if (op < 8) ok = flush();
      else ok = trim(first, n);
      if (!ok) ++out->failed_requests;
      if (fd_.faulty.failures() && sc_.fault.op == FaultyStore::Op::kSync) {
        if (sc_.fault.drop_on_failed_sync) dropped_ = true;
        // No write or flush may succeed after a failed sync.
        if (ok && stopped) return "a request succeeded after a failed fdatasync";
        stopped = true;
      }
    }
    out->faults = fd_.faulty.failures();
    if (stopped) ++out->stopped;
    return "";
  }

  // Live reads: acknowledged content; a failed request's blocks old or new.
  std::string check_live_reads() {
    Bytes got(kBlock);
    for (uint64_t b = 0; b < model_.blocks(); ++b) {
      try {
        now_ = fd_.disk->read(b * kBlock, got, now_).end;
      } catch (const Error& e) {
        if (dropped_) continue;  // the page cache lost it: EIO, not a lie
        return "live read of block " + std::to_string(b) + " fails: " + e.what();
      }
      const uint64_t h = hash_of(got.data());
      if (model_.live_allowed(b, h)) continue;
      if (dropped_ && model_.crash_allowed(b, h, stopped_).empty()) continue;
      return "live read of block " + std::to_string(b) + " is neither what was "
             "acknowledged nor what a failed request wrote";
    }
    return "";
  }

  // Restart after kill -9 (the image as it is), and after a power cut (the
  // image as the last successful sync left it).
  std::string check_restarts() {
    fd_.faulty.disarm();
    const Bytes as_is(fd_.mem.bytes()), synced = fd_.faulty.synced_image();
    fd_.disk.reset();
    for (const Bytes* img : {&as_is, &synced})
      if (std::string why = check_reopened(*img, img == &as_is); !why.empty()) return why;
    return "";
  }
  std::string check_reopened(const Bytes& image, bool as_is) const {
    const char* what = as_is ? "restart" : "power cut";
    std::unique_ptr<Disk> d2;
    try {
      d2 = make_disk(std::make_unique<MemoryBackingStore>(image), fd_.sb,
                     small_options(sc_.deltas));
    } catch (const Error& e) {
      return std::string(what) + ": the image does not open: " + e.what();
    }
    Bytes got(kBlock);
    for (uint64_t b = 0; b < model_.blocks(); ++b) {
      try {
        d2->read(b * kBlock, got, kSimEpoch);
      } catch (const Error& e) {
        return std::string(what) + ": block " + std::to_string(b) + " fails: " + e.what();
      }
      const uint64_t h = hash_of(got.data());
      if (std::string why = model_.crash_allowed(b, h, stopped_); !why.empty())
        return std::string(what) + ": " + why;
      // kill -9 with the page cache intact keeps every acknowledged write,
      // except in lld without NVRAM, which gathers writes in memory until a
      // flush or FUA (docs/crash-contract.md, mode=lld).
      const bool acked_in_image = sc_.mode != DiskMode::kLld || sc_.nvram_bytes > 0;
      if (as_is && acked_in_image && !dropped_ && !model_.live_allowed(b, h))
        return "restart: block " + std::to_string(b) + " lost an acknowledged write";
    }
    return "";
  }

  uint64_t delta_checkpoints() const {
    const ModeReport r = fd_.disk->mode_report();
    return r.vld ? r.vld->stats.delta_checkpoints : 0;
  }

  const Scenario& sc_;
  FaultyDisk fd_;
  const uint64_t blocks_;  // the blocks the workload writes
  Model model_;
  SimTime now_ = kSimEpoch;
  uint64_t req_ = 0;
  bool dropped_ = false;  // a failed sync took back writes (the page cache lost them)
  bool stopped_ = false;  // the disk stopped taking writes (seen by a request)
};

Outcome run_scenario(const Scenario& sc, uint64_t seed) { return ScenarioRun(sc).run(seed); }

struct Totals {
  uint64_t scenarios = 0, faults = 0, failed_requests = 0, stopped = 0, deltas = 0;
};

void sweep(DiskMode mode, bool full, FaultyStore::Op op, Totals& t, uint64_t nvram_bytes = 0,
           bool deltas = false) {
  for (int err : {EIO, ENOSPC})
    for (bool sticky : {false, true})
      for (uint64_t nth = 0; nth < 48; nth += (op == FaultyStore::Op::kSync ? 1 : 3)) {
        FaultyStore::Fault f;
        f.op = op;
        f.nth = nth;
        f.err = err;
        f.sticky = sticky;
        f.torn_bytes = (nth % 2) ? 512 : 0;
        f.drop_on_failed_sync = op == FaultyStore::Op::kSync && nth % 2 == 0;
        const Scenario sc{mode, full, f, nvram_bytes, deltas};
        Outcome o = run_scenario(sc, 1000 + nth);
        ++t.scenarios;
        t.faults += o.faults;
        t.failed_requests += o.failed_requests;
        t.stopped += o.stopped;
        t.deltas += o.deltas;
        ASSERT_EQ(o.problem, "") << sc.name();
        if (o.faults) {
          EXPECT_GE(o.failed_requests, 1u) << sc.name() << ": a fault was hidden";
        }
      }
}

void report(const char* what, const Totals& t) {
  std::cout << "[ faults   ] " << what << ": " << t.scenarios << " scenarios, " << t.faults
            << " injected faults, " << t.failed_requests << " requests failed, " << t.stopped
            << " disks stopped by a failed fdatasync" << std::endl;
}

TEST(BackingFaults, VldWriteFaults) {
  Totals t;
  sweep(DiskMode::kVld, false, FaultyStore::Op::kWrite, t);
  sweep(DiskMode::kVld, true, FaultyStore::Op::kWrite, t);
  report("vld write", t);
  EXPECT_GT(t.faults, 100u);
}

TEST(BackingFaults, VldSyncFaults) {
  Totals t;
  sweep(DiskMode::kVld, false, FaultyStore::Op::kSync, t);
  sweep(DiskMode::kVld, true, FaultyStore::Op::kSync, t);
  report("vld fdatasync", t);
  EXPECT_GT(t.stopped, 100u);
}

// Delta checkpoints spread over the requests, a group each: a fault in a
// group's map sectors, or the fdatasync after it, is the request's error
// like any other. A full file system's ENOSPC in a group was once taken for
// the platters having no room: the delta was given up and no request failed.
TEST(BackingFaults, VldFaultsInSpreadDeltas) {
  Totals t;
  for (bool full : {false, true}) {
    sweep(DiskMode::kVld, full, FaultyStore::Op::kWrite, t, 0, /*deltas=*/true);
    sweep(DiskMode::kVld, full, FaultyStore::Op::kSync, t, 0, /*deltas=*/true);
  }
  report("vld with spread deltas", t);
  std::cout << "[ faults   ] ... " << t.deltas << " delta checkpoints finished with a fault armed"
            << std::endl;
  EXPECT_GT(t.faults, 100u);
  EXPECT_GT(t.deltas, 1000u);
}

TEST(BackingFaults, InplaceFaults) {
  Totals t;
  for (auto op : {FaultyStore::Op::kWrite, FaultyStore::Op::kSync, FaultyStore::Op::kDiscard})
    sweep(DiskMode::kInplace, false, op, t);
  report("inplace write, fdatasync, discard", t);
  EXPECT_GT(t.faults, 100u);
}

// mode=lld with NVRAM (every write synced into the region) and without
// (writes gather in the open segment's memory copy until a flush or FUA).
TEST(BackingFaults, LldFaults) {
  for (uint64_t nvram_bytes : {uint64_t{0}, uint64_t{64 * 1024}}) {
    Totals t;
    for (auto op : {FaultyStore::Op::kWrite, FaultyStore::Op::kSync})
      for (bool full : {false, true}) sweep(DiskMode::kLld, full, op, t, nvram_bytes);
    report(nvram_bytes ? "lld nvram write, fdatasync" : "lld nvram=0 write, fdatasync", t);
    EXPECT_GT(t.faults, 100u);
  }
}

// The fail-stop rule by itself: after one failed sync, the next flush fails
// too even though the store would now succeed, and says why.
TEST(BackingFaults, NoFlushSucceedsAfterAFailedSync) {
  for (DiskMode mode : {DiskMode::kVld, DiskMode::kInplace}) {
    FaultyDisk fd(mode, 256 * 1024, 25);
    FaultyStore& faulty = fd.faulty;
    std::unique_ptr<Disk>& disk = fd.disk;
    Bytes d = block_data(1, 0);
    disk->write(0, d, false, kSimEpoch);
    faulty.arm(FaultyStore::Fault{.op = FaultyStore::Op::kSync, .nth = 0});
    EXPECT_THROW(disk->flush(kSimEpoch), Error);
    faulty.disarm();
    try {
      disk->flush(kSimEpoch);
      ADD_FAILURE() << "a flush succeeded after a failed fdatasync";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), EIO);
      EXPECT_NE(std::string(e.what()).find("restart nbdkit"), std::string::npos) << e.what();
    }
    EXPECT_THROW(disk->write(0, d, true, kSimEpoch), Error);
    Bytes got(kBlock);
    disk->read(0, got, kSimEpoch);  // reads go on
    EXPECT_EQ(got, d);
  }
}

// The plugin hands every writable open of one image the same stop reason:
// a sync that failed in one open (a recovery, say) stops the next one too.
// The failed sync keeps its errno (ENOSPC here); a disk adopts the
// FailStopStore it is given instead of wrapping it again.
TEST(BackingFaults, AStopOutlivesTheOpenItHappenedIn) {
  MemoryBackingStore image(64 * 1024);
  const FailStopStore::StopReason why = std::make_shared<std::string>();
  {
    auto faulty = std::make_unique<FaultyStore>(image);
    faulty->arm(FaultyStore::Fault{.op = FaultyStore::Op::kSync, .nth = 0, .err = ENOSPC});
    FailStopStore first(std::move(faulty), why);
    try {
      first.sync();
      ADD_FAILURE() << "the injected sync fault did not fail the sync";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOSPC);
      EXPECT_NE(std::string(e.what()).find("restart nbdkit"), std::string::npos) << e.what();
    }
  }
  ASSERT_FALSE(why->empty());
  auto given = std::make_unique<FailStopStore>(std::make_unique<MemoryBackingStore>(64 * 1024), why);
  FailStopStore* given_ptr = given.get();
  std::unique_ptr<FailStopStore> second = FailStopStore::wrap(std::move(given));
  EXPECT_EQ(second.get(), given_ptr) << "a FailStopStore was wrapped in another";
  const std::byte b[512] = {};
  try {
    second->write(0, b);
    ADD_FAILURE() << "a write went through after a failed sync in an earlier open";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EIO);
    EXPECT_NE(std::string(e.what()).find("a sync of the image failed"), std::string::npos)
        << e.what();
  }
  std::byte out[512];
  EXPECT_NO_THROW(second->read(0, out));  // reads go on
  EXPECT_THROW(second->sync(), Error);
}

// A vld write whose map sector write fails is voided by a log record, and
// the disk goes on: later writes to the same pieces survive a restart.
TEST(BackingFaults, VldGoesOnAfterAFailedMapSectorWrite) {
  FaultyDisk fd(DiskMode::kVld, 256 * 1024, 25);
  FaultyStore& faulty = fd.faulty;
  std::unique_ptr<Disk>& disk = fd.disk;
  const Superblock& sb = fd.sb;
  MemoryBackingStore& mem = fd.mem;
  auto& vd = static_cast<VldDisk&>(*disk);
  Bytes a = block_data(1, 3), b = block_data(2, 3), c = block_data(3, 3);
  disk->write(3 * kBlock, a, true, kSimEpoch);
  // The next request's map sector write fails after landing whole
  // (torn_bytes = all of it).
  const uint64_t records = vd.vld_stats().records_written;
  const uint64_t next_seq = vd.virtual_log().next_seq();
  faulty.arm(FaultyStore::Fault{
      .op = FaultyStore::Op::kWrite, .nth = 0, .torn_bytes = 512, .only_len = 512});
  EXPECT_THROW(disk->write(3 * kBlock, b, false, kSimEpoch), Error);
  faulty.disarm();
  EXPECT_EQ(vd.vld_stats().records_written, records + 1) << "a record voids the failed request";
  // Its map sector may be on the platter: its seq must never be used again,
  // or recovery could take it for the next request's.
  EXPECT_GT(vd.virtual_log().next_seq(), next_seq);
  EXPECT_EQ(vd.check_consistency(), "");
  Bytes got(kBlock);
  disk->read(3 * kBlock, got, kSimEpoch);
  EXPECT_EQ(got, a) << "the failed request reads old";
  disk->write(3 * kBlock, c, true, kSimEpoch);
  disk.reset();  // kill -9: no close
  auto d2 = make_disk(std::make_unique<MemoryBackingStore>(mem.bytes()), sb, small_options());
  d2->read(3 * kBlock, got, kSimEpoch);
  EXPECT_EQ(got, c) << "the write after the failed one survives the restart";
}

// The log record a vld request makes due is written after the request is
// committed. If it fails, the request stands (it reads new, live and after
// a crash); the next request reports the error before it changes anything;
// the record stays due and the one after writes it (crash contract clause
// 7, FailStopStore::defer).
TEST(BackingFaults, VldRecordFailureIsTheNextRequestsError) {
  // A dry run: the first FUA write that makes a record due, and how many
  // map sectors (512-byte writes, as the record is) it writes before it;
  // not the first write, which writes the "open" record before its own.
  uint64_t k = 0, map_sectors = 0;
  {
    FaultyDisk fd(DiskMode::kVld, 256 * 1024, 25);
    const auto& vd = static_cast<const VldDisk&>(*fd.disk);
    for (; k < 60; ++k) {
      const VldStats before = vd.vld_stats();
      fd.disk->write(k * kBlock, block_data(1, k), true, kSimEpoch);
      if (k > 0 && vd.vld_stats().records_written > before.records_written) {
        map_sectors = vd.vld_stats().map_sectors_written - before.map_sectors_written;
        break;
      }
    }
    ASSERT_LT(k, 60u) << "no write made a record due";
  }
  FaultyDisk fd(DiskMode::kVld, 256 * 1024, 25);
  std::unique_ptr<Disk>& disk = fd.disk;
  const auto& vd = static_cast<const VldDisk&>(*disk);
  for (uint64_t b = 0; b < k; ++b) disk->write(b * kBlock, block_data(1, b), true, kSimEpoch);
  const uint64_t records = vd.vld_stats().records_written;
  fd.faulty.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite, .nth = map_sectors,
                                   .only_len = 512});
  const Bytes a = block_data(1, k), b = block_data(2, 0);
  EXPECT_NO_THROW(disk->write(k * kBlock, a, true, kSimEpoch)) << "the committed request failed";
  ASSERT_EQ(fd.faulty.failures(), 1u) << "the fault missed the record";
  fd.faulty.disarm();
  EXPECT_EQ(vd.vld_stats().records_written, records);
  try {
    disk->write(0, b, true, kSimEpoch);
    ADD_FAILURE() << "the record's failure reached no request";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("this request changed nothing"), std::string::npos)
        << e.what();
  }
  Bytes got(kBlock);
  disk->read(0, got, kSimEpoch);
  EXPECT_EQ(got, block_data(1, 0)) << "the request that reported the error changed its block";
  disk->write(0, b, true, kSimEpoch);  // reported once: the next goes on
  EXPECT_EQ(vd.vld_stats().records_written, records + 1) << "the record did not stay due";
  EXPECT_EQ(disk->check_consistency(), "");
  const Bytes as_is(fd.mem.bytes()), synced = fd.faulty.synced_image();
  disk.reset();  // kill -9: no close
  for (const Bytes* image : {&as_is, &synced}) {
    auto d2 = make_disk(std::make_unique<MemoryBackingStore>(*image), fd.sb, small_options());
    d2->read(k * kBlock, got, kSimEpoch);
    EXPECT_EQ(got, a) << "the request whose record failed was lost";
    d2->read(0, got, kSimEpoch);
    EXPECT_EQ(got, b);
  }
}

// Writes every block of `disk`, then twice as many random ones again (from
// *now on, seeded by `seed`), then flushes: tracks for idle work to empty,
// segments to clean. Returns each block's contents.
std::vector<Bytes> fill_and_rewrite(Disk& disk, uint64_t blocks, uint64_t seed, SimTime* now) {
  std::vector<Bytes> want(blocks, Bytes(kBlock));
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < 3 * blocks; ++i) {
    const uint64_t b = i < blocks ? i : rng() % blocks;
    want[b] = block_data(i, b);
    *now = disk.write(b * kBlock, want[b], false, *now).end;
  }
  *now = disk.flush(*now).end;
  return want;
}

// Fills a small disk, arms a one-shot fault at the nth write from now, and
// runs idle steps to the end of the idle work. Checks what
// IdleWorkGoesOnAfterAFailedStep says; returns whether the fault fired.
bool idle_fault_then_go_on(DiskMode mode, uint64_t nvram, uint64_t nth) {
  FaultyDisk fd(mode, 256 * 1024, 25, nvram);
  std::unique_ptr<Disk>& disk = fd.disk;
  const uint64_t blocks = fd.sb.export_bytes / kBlock;
  SimTime now = kSimEpoch;
  std::vector<Bytes> want = fill_and_rewrite(*disk, blocks, 7, &now);
  fd.faulty.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite, .nth = nth});
  int failed_steps = 0, steps = 0;
  for (bool done = false; !done; ++steps) {
    EXPECT_LT(steps, 5000) << "the idle work never ends";
    if (steps >= 5000) return false;
    try {
      const std::optional<Completion> c = disk->idle_step(now);
      done = !c.has_value();
      if (c) now = c->end;
    } catch (const Error&) {
      ++failed_steps;
    }
  }
  const bool fired = fd.faulty.failures() > 0;
  fd.faulty.disarm();
  EXPECT_EQ(failed_steps, fired ? 1 : 0) << "a one-shot fault failed more steps than one";
  EXPECT_EQ(disk->check_consistency(), "");
  // A power cut now may keep only what the last sync did.
  const Bytes synced = fd.faulty.synced_image();
  std::vector<Bytes> want_synced = want;
  if (fired) {
    try {
      disk->write(0, block_data(9999, 0), true, now);
      ADD_FAILURE() << "the idle step's failure reached no request";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("idle-time"), std::string::npos) << e.what();
    }
  }
  want[0] = block_data(10000, 0);
  now = disk->write(0, want[0], true, now).end;
  Bytes got(kBlock);
  for (uint64_t b = 0; b < blocks; ++b) {
    now = disk->read(b * kBlock, got, now).end;
    EXPECT_EQ(got, want[b]) << "live block " << b;
  }
  disk.reset();  // kill -9: no close
  const Bytes as_is(fd.mem.bytes());
  for (const auto& [image, expected, after] :
       {std::tuple{&as_is, &want, "after kill -9"}, {&synced, &want_synced, "after a power cut"}}) {
    auto d2 = make_disk(std::make_unique<MemoryBackingStore>(*image), fd.sb, small_options());
    for (uint64_t b = 0; b < blocks; ++b) {
      d2->read(b * kBlock, got, kSimEpoch);
      EXPECT_EQ(got, (*expected)[b]) << "block " << b << " " << after;
    }
  }
  return fired;
}

// Idle-time work (vld's compactor, lld's NVRAM drain and cleaner) answers
// to no request: when a write of it fails, the next request reports the
// error before it changes anything, once; every acknowledged write stays,
// live and after a restart (crash contract clause 6).
TEST(BackingFaults, AFailedIdleStepIsTheNextRequestsError) {
  // (mode, nvram bytes): lld with NVRAM drains it first; without, it cleans.
  for (auto [mode, nvram] : {std::pair{DiskMode::kVld, 0}, std::pair{DiskMode::kLld, 64 * 1024},
                             std::pair{DiskMode::kLld, 0}}) {
    SCOPED_TRACE(std::string(mode_name(mode)) + " nvram=" + std::to_string(nvram));
    FaultyDisk fd(mode, 256 * 1024, 25, nvram);
    std::unique_ptr<Disk>& disk = fd.disk;
    const uint64_t blocks = fd.sb.export_bytes / kBlock;
    SimTime now = kSimEpoch;
    std::vector<Bytes> want = fill_and_rewrite(*disk, blocks, 5, &now);
    fd.faulty.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite, .nth = 0, .sticky = true});
    bool failed = false;
    for (int step = 0; step < 1000 && !failed; ++step) {
      try {
        const std::optional<Completion> c = disk->idle_step(now);
        ASSERT_TRUE(c.has_value()) << "no idle work for the fault to fail";
        now = c->end;
      } catch (const Error&) {
        failed = true;
      }
    }
    ASSERT_TRUE(failed) << "no idle step wrote";
    fd.faulty.disarm();
    try {
      disk->write(0, block_data(9999, 0), true, now);
      ADD_FAILURE() << "the idle step's failure reached no request";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("idle-time"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("this request changed nothing"), std::string::npos);
    }
    want[0] = block_data(10000, 0);
    now = disk->write(0, want[0], true, now).end;  // reported once: the next goes on
    EXPECT_EQ(disk->check_consistency(), "");
    Bytes got(kBlock);
    for (uint64_t b = 0; b < blocks; ++b) {
      now = disk->read(b * kBlock, got, now).end;
      ASSERT_EQ(got, want[b]) << "live block " << b;
    }
    disk.reset();  // kill -9: no close
    auto d2 = make_disk(std::make_unique<MemoryBackingStore>(fd.mem.bytes()), fd.sb,
                        small_options());
    for (uint64_t b = 0; b < blocks; ++b) {
      d2->read(b * kBlock, got, kSimEpoch);
      ASSERT_EQ(got, want[b]) << "block " << b << " after a restart";
    }
  }
}

// A failed idle step leaves the disk able to go on, which is what the
// plugin's IdleWorker relies on when it tries again later: further steps
// finish the work, the next request reports the failure once, and every
// acknowledged block reads back, live, after kill -9, and from the image as
// the last sync left it (a power cut). The fault hits the n-th write of the
// idle work, so that it lands in each kind of step.
TEST(BackingFaults, IdleWorkGoesOnAfterAFailedStep) {
  for (auto [mode, nvram] : {std::pair{DiskMode::kVld, 0}, std::pair{DiskMode::kLld, 64 * 1024},
                             std::pair{DiskMode::kLld, 0}}) {
    int fired = 0;
    for (uint64_t nth : {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 17, 21, 27, 34}) {
      SCOPED_TRACE(fmt::format("{} nvram={} write fault #{}", mode_name(mode), nvram, nth));
      fired += idle_fault_then_go_on(mode, nvram, nth) ? 1 : 0;
      if (HasFatalFailure()) return;
    }
    // The idle work writes at least 9 times in each (vld: 9, lld: 21-26).
    EXPECT_GE(fired, 9) << mode_name(mode) << " nvram=" << nvram << ": too few faults hit";
  }
}

// mode=lld without NVRAM: a FUA write whose segment write fails after
// landing whole takes nothing with it. Its block keeps the flushed version,
// live, after the next flush and after a restart (its seq is voided, so
// roll-forward cannot take it), and the next write to it survives.
TEST(BackingFaults, LldGoesOnAfterAFailedSegmentWrite) {
  FaultyDisk fd(DiskMode::kLld, 256 * 1024, 25, /*nvram_bytes=*/0);
  std::unique_ptr<Disk>& disk = fd.disk;
  Bytes a = block_data(1, 3), b = block_data(2, 3), c = block_data(3, 3);
  disk->write(3 * kBlock, a, true, kSimEpoch);
  fd.faulty.arm(FaultyStore::Fault{.op = FaultyStore::Op::kWrite, .nth = 0, .torn_bytes = 1 << 20});
  EXPECT_THROW(disk->write(3 * kBlock, b, true, kSimEpoch), Error);
  EXPECT_EQ(fd.faulty.failures(), 1u);
  fd.faulty.disarm();
  EXPECT_EQ(disk->check_consistency(), "");
  Bytes got(kBlock);
  disk->read(3 * kBlock, got, kSimEpoch);
  EXPECT_EQ(got, a) << "the failed request reads new";
  disk->flush(kSimEpoch);  // nothing to write: the failed request stays at the log head
  const auto reopened = [&] {
    return make_disk(std::make_unique<MemoryBackingStore>(fd.mem.bytes()), fd.sb, small_options());
  };
  {
    auto d2 = reopened();  // kill -9: no close
    d2->read(3 * kBlock, got, kSimEpoch);
    EXPECT_EQ(got, a) << "the failed request came back after a restart";
  }
  disk->write(3 * kBlock, c, true, kSimEpoch);
  auto d3 = reopened();
  d3->read(3 * kBlock, got, kSimEpoch);
  EXPECT_EQ(got, c) << "the write after the failed one does not survive a restart";
}

}  // namespace
}  // namespace vld
