// Faults of the backing file, seen from an NBD client (crash contract,
// clauses 6 and 7 and "When the backing file fails"): the real plugin in a
// real nbdkit, with tests/integration/fault_shim.c preloaded so that the
// image's pwrite, hole punch or fdatasync returns EIO or ENOSPC on cue.
//   - the request the fault happened in fails, with the file's errno;
//   - a failed write costs that request only: the disk goes on, and in
//     mode=vld the failed request's blocks keep their old contents;
//   - after a failed fdatasync every later write, zero, trim and flush fails
//     with EIO and reads go on; nbdkit's log says to restart it;
//   - a restart recovers every acknowledged write, also when the failed sync
//     took back the writes since the last good one (the shim's "drop").
// Each test checks that the shim did fail a call (its "fired" file), so a
// test whose fault never happened fails instead of passing vacuously.
// mode=lld runs them with its NVRAM (every write is an NVRAM append and a
// sync, so every acknowledged write must survive, flushed or not; a flush
// syncs nothing) and with nvram=0 (a plain write usually stays in memory: a
// test that needs a request to reach the file makes it a FUA write).
#include <gtest/gtest.h>
#include <libnbd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kSlotBytes = 64 << 10;  // each request writes a slot of its own
constexpr uint64_t kBlk = 4096;

// A server whose image fails on cue: the plan file the shim reads, and the
// file it appends to whenever it fails a call.
class FaultyImage {
 public:
  explicit FaultyImage(const TempDir& dir)
      : dir_(dir), image_(dir.file("disk.img")), plan_(dir.file("plan")),
        fired_(dir.file("fired")) {
    disarm();
  }
  const std::string& image() const { return image_; }

  // latency=none unless `params` say otherwise: deterministic, with no
  // idle-time work.
  std::unique_ptr<NbdkitServer> serve(std::vector<std::string> params,
                                      std::vector<std::string> nbdkit_options = {}) const {
    params.insert(params.begin(), "file=" + image_);
    if (std::none_of(params.begin(), params.end(),
                     [](const std::string& p) { return p.starts_with("latency="); }))
      params.push_back("latency=none");
    return std::make_unique<NbdkitServer>(
        dir_, params, nbdkit_options,
        std::vector<std::string>{std::string("LD_PRELOAD=") + VLD_FAULT_SHIM_PATH,
                                 "VLD_FAULT_IMAGE=" + image_, "VLD_FAULT_PLAN=" + plan_,
                                 "VLD_FAULT_FIRED=" + fired_});
  }
  // The shim's plan, e.g. "pwrite 0 ENOSPC once"; replaced atomically.
  void arm(const std::string& plan) const {
    const std::string tmp = plan_ + ".tmp";
    std::ofstream(tmp) << plan << "\n";
    if (std::rename(tmp.c_str(), plan_.c_str()) != 0) throw std::runtime_error("rename " + tmp);
  }
  void disarm() const { arm("none"); }
  // How many calls the shim has failed so far.
  int fired() const {
    std::ifstream in(fired_);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

 private:
  const TempDir& dir_;
  std::string image_, plan_, fired_;
};

// 0, or the errno the server answered with.
int try_write(nbd_handle* h, uint64_t offset, const std::vector<uint8_t>& data,
              uint32_t flags = 0) {
  if (nbd_pwrite(h, data.data(), data.size(), offset, flags) == 0) return 0;
  return nbd_get_errno() ? nbd_get_errno() : -1;
}
int try_flush(nbd_handle* h) { return nbd_flush(h, 0) == 0 ? 0 : nbd_get_errno(); }

// What the client was told about each request it made, and so what it may
// read back. Requests write disjoint slots of an empty disk: "old" is zeros.
// A failed request reads all old or all new (a sync that failed after its
// writes may still have made it durable); with atomic_failures false
// (mode=inplace, clause 7) each of its blocks old or new. With acks_durable
// (mode=lld with NVRAM) an acknowledged write is durable at once.
class Ledger {
 public:
  enum class Fate { kFailed, kAcked, kDurable };
  explicit Ledger(bool atomic_failures, bool acks_durable = false)
      : atomic_failures_(atomic_failures), acks_durable_(acks_durable) {}
  // The promises of a mode (modes.h).
  static Ledger of(const std::string& mode) {
    return Ledger(/*atomic_failures=*/mode != "inplace", acks_are_durable(mode));
  }

  // Writes slot `slot` (flags as nbd_pwrite) and records the answer.
  int write(nbd_handle* h, uint64_t slot, uint32_t flags = 0) {
    Req r{slot * kSlotBytes, pattern_bytes(slot * kSlotBytes, kSlotBytes, 7 + slot),
          Fate::kFailed};
    const int err = try_write(h, r.offset, r.data, flags);
    if (err == 0)
      r.fate = (flags & LIBNBD_CMD_FLAG_FUA) || acks_durable_ ? Fate::kDurable : Fate::kAcked;
    reqs_.push_back(std::move(r));
    return err;
  }
  int flush(nbd_handle* h) {
    const int err = try_flush(h);
    if (err == 0)
      for (Req& r : reqs_)
        if (r.fate == Fate::kAcked) r.fate = Fate::kDurable;
    return err;
  }
  // From now on acknowledged, unflushed writes may be gone (a failed sync
  // that dropped them, or a crash).
  void unflushed_may_be_lost() { lossy_ = true; }

  // "" if every request reads back as its fate allows, else what did not.
  // durable_only: read only durable requests (the others may read EIO).
  std::string check(nbd_handle* h, bool durable_only = false) const {
    std::string out;
    for (const Req& r : reqs_) {
      if (durable_only && r.fate != Fate::kDurable) continue;
      std::vector<uint8_t> got = read_bytes(h, r.offset, r.data.size());
      const std::string problem = judge(r, got);
      if (!problem.empty()) out += "\n  slot at " + std::to_string(r.offset) + ": " + problem;
    }
    return out;
  }
  size_t count(Fate f) const {
    size_t n = 0;
    for (const Req& r : reqs_) n += r.fate == f;
    return n;
  }

 private:
  struct Req {
    uint64_t offset;
    std::vector<uint8_t> data;
    Fate fate;
  };

  std::string judge(const Req& r, const std::vector<uint8_t>& got) const {
    const std::vector<uint8_t> old(got.size(), 0);
    if (got == r.data) return "";
    if (r.fate == Fate::kDurable) return "a durable write reads " + first_difference(got, r.data, r.offset);
    if (r.fate == Fate::kAcked && !lossy_) return "an acknowledged write is gone: " + first_difference(got, r.data, r.offset);
    if (got == old) return "";
    if (r.fate == Fate::kFailed && !atomic_failures_) {  // each block old or new
      for (size_t i = 0; i < got.size(); i += kBlk) {
        const bool is_new = std::equal(got.begin() + i, got.begin() + i + kBlk, r.data.begin() + i);
        const bool is_old = std::equal(got.begin() + i, got.begin() + i + kBlk, old.begin() + i);
        if (!is_new && !is_old) return "block " + std::to_string(i / kBlk) + " is neither old nor new";
      }
      return "";
    }
    return "reads neither all old nor all new: " + first_difference(got, r.data, r.offset);
  }

  bool atomic_failures_;
  bool acks_durable_;
  bool lossy_ = false;
  std::vector<Req> reqs_;
};

bool is_vld(const std::string& mode) { return mode == "vld"; }
// mode=lld with nvram=0: a plain write may not reach the file at all.
bool writes_wait_in_memory(const std::string& mode) { return mode == "lld_nvram0"; }

// Restarts on the same image without the shim and checks what was promised.
void RestartAndCheck(const TempDir& dir, const FaultyImage& img, const Ledger& ledger) {
  NbdkitServer s(dir, {"file=" + img.image(), "latency=none"});
  NbdHandle h = s.connect();
  EXPECT_EQ(ledger.check(h.get()), "") << "after the restart";
  // And the restarted disk takes writes again.
  EXPECT_EQ(try_write(h.get(), 0, pattern_bytes(0, kBlk, 99), LIBNBD_CMD_FLAG_FUA), 0)
      << s.stderr_text();
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(s.stop(), 0) << s.stderr_text();
}

class FileFaults : public ::testing::TestWithParam<const char*> {};

// One failed pwrite: that request fails with the file's errno (ENOSPC from a
// full host file system, or EIO), the disk goes on, and nothing else moves.
// (mode=lld with nvram=0: the failing request is a FUA write, the first of
// them that reaches the file; its blocks stay in the open segment's memory
// copy and go out with the next write that does, so they read new.)
TEST_P(FileFaults, AFailedWriteFailsThatRequestOnly) {
  const std::string mode = GetParam();
  const uint32_t to_file = writes_wait_in_memory(mode) ? LIBNBD_CMD_FLAG_FUA : 0;
  for (const char* err : {"ENOSPC", "EIO"}) {
    SCOPED_TRACE(err);
    TempDir dir;
    FaultyImage img(dir);
    Ledger ledger = Ledger::of(mode);
    {
      auto s = img.serve(with_mode({"size=8M"}, mode));
      NbdHandle h = s->connect();
      ASSERT_EQ(ledger.write(h.get(), 1), 0);
      ASSERT_EQ(ledger.flush(h.get()), 0);
      img.arm(std::string("pwrite 0 ") + err + " once");
      EXPECT_EQ(ledger.write(h.get(), 2, to_file), std::string(err) == "EIO" ? EIO : ENOSPC);
      ASSERT_EQ(img.fired(), 1) << "the shim failed no write";
      EXPECT_EQ(ledger.write(h.get(), 3, LIBNBD_CMD_FLAG_FUA), 0) << s->stderr_text();
      EXPECT_EQ(ledger.write(h.get(), 4), 0);
      EXPECT_EQ(ledger.flush(h.get()), 0);
      EXPECT_EQ(ledger.check(h.get()), "") << "before the restart";
      if (is_vld(mode) || acks_are_durable(mode)) {
        // clause 7: the failed request's blocks keep their old contents
        EXPECT_EQ(read_bytes(h.get(), 2 * kSlotBytes, kSlotBytes),
                  std::vector<uint8_t>(kSlotBytes, 0));
      }
      nbd_shutdown(h.get(), 0);
      EXPECT_EQ(s->stop(), 0) << s->stderr_text();
      EXPECT_NE(s->stderr_text().find(err == std::string("EIO") ? "Input/output error"
                                                                : "No space left on device"),
                std::string::npos)
          << "nbdkit's log does not name the error:\n" << s->stderr_text();
    }
    RestartAndCheck(dir, img, ledger);
  }
}

// Every pwrite a request makes (data blocks, map sectors, and in mode=vld
// the log record that voids a failed request; mode=lld's NVRAM append, or
// with nvram=0 its segment writes) fails in turn, once or from then on;
// after each, the disk either goes on or has stopped, and a restart still
// reads every acknowledged write.
TEST_P(FileFaults, EachWriteOfARequestCanFail) {
  const std::string mode = GetParam();
  const uint32_t to_file = writes_wait_in_memory(mode) ? LIBNBD_CMD_FLAG_FUA : 0;
  // "short": the failing pwrite writes half its buffer and returns that
  // count, and the next one fails, as a host file system filling up does.
  for (const std::string how : {"EIO once", "EIO sticky", "ENOSPC once short"}) {
    SCOPED_TRACE(how);
    const int want_err = how.starts_with("ENOSPC") ? ENOSPC : EIO;
    const bool sticky = how.find("sticky") != std::string::npos;
    TempDir dir;
    FaultyImage img(dir);
    Ledger ledger = Ledger::of(mode);
    auto s = img.serve(with_mode({"size=16M"}, mode));
    NbdHandle h = s->connect();
    uint64_t slot = 0;
    ASSERT_EQ(ledger.write(h.get(), slot++, LIBNBD_CMD_FLAG_FUA), 0);
    int failed = 0;
    bool stopped = false;
    for (int k = 0; !stopped; ++k) {
      ASSERT_LT(k, 64) << "a 64 KiB request that makes 64 pwrites?";
      const int before = img.fired();
      img.arm("pwrite " + std::to_string(k) + " " + how);
      const int err = ledger.write(h.get(), slot++, (k % 2) ? LIBNBD_CMD_FLAG_FUA : to_file);
      const bool hit = img.fired() > before;
      // sticky: the request after the failed one meets the fault too.
      if (sticky && hit) {
        EXPECT_NE(ledger.write(h.get(), slot++, to_file), 0);
      }
      img.disarm();
      if (!hit) {
        EXPECT_EQ(err, 0) << "pwrite " << k << " did not fail, but the request did";
        break;  // the request makes k pwrites: all have failed in turn
      }
      EXPECT_EQ(err, want_err) << "pwrite " << k;
      ++failed;
      // The disk goes on, or has stopped (vld: the record that voids a
      // failed request could not be written; lld without NVRAM: the
      // checkpoint that voids a failed segment write; lld with NVRAM: the
      // zeroed record that voids a failed append) and says so on every
      // write.
      const int next = ledger.write(h.get(), slot++, LIBNBD_CMD_FLAG_FUA);
      stopped = next != 0;
      if (stopped) {
        EXPECT_EQ(next, EIO);
        EXPECT_TRUE(mode != "inplace" && sticky)
            << "one failed pwrite (" << k << ") stopped a " << mode << " disk";
        EXPECT_NE(s->stderr_text().find("restart nbdkit"), std::string::npos) << s->stderr_text();
      }
      EXPECT_EQ(ledger.check(h.get(), /*durable_only=*/stopped), "") << "after pwrite " << k;
    }
    // mode=vld writes a request's data blocks, then its map sector (and
    // more); mode=inplace writes a 64 KiB request with one pwrite, and so
    // does mode=lld (an NVRAM append, or a segment write).
    EXPECT_GE(failed, is_vld(mode) ? 2 : 1) << "the fault hit too few of a request's pwrites";
    std::cout << "[ info     ] " << mode << ", " << how << ": failed each of " << failed
              << " pwrites in turn" << (stopped ? "; the disk stopped" : "") << "\n";
    nbd_shutdown(h.get(), 0);
    s->stop();
    s.reset();
    ledger.unflushed_may_be_lost();  // a stopped disk could not close cleanly
    RestartAndCheck(dir, img, ledger);
  }
}

// A failed fdatasync (in a flush or in a FUA write) stops the disk: writes,
// zeroes, trims and flushes fail with EIO from then on, reads go on, and a
// restart reads every write acknowledged before the failure, also when the
// failed sync took back the writes since the last good one ("drop").
// mode=lld with NVRAM syncs in every write and never in a flush: there the
// failing sync is a plain write's.
void FailedSyncStopsTheDisk(const std::string& mode, bool in_fua, bool drop) {
  TempDir dir;
  FaultyImage img(dir);
  Ledger ledger = Ledger::of(mode);
  {
    auto s = img.serve(with_mode({"size=8M"}, mode));
    NbdHandle h = s->connect();
    ASSERT_EQ(ledger.write(h.get(), 1), 0);
    ASSERT_EQ(ledger.write(h.get(), 2, LIBNBD_CMD_FLAG_FUA), 0);
    ASSERT_EQ(ledger.write(h.get(), 3), 0);  // acknowledged, not yet durable (but with NVRAM)
    img.arm(std::string("sync 0 EIO once") + (drop ? " drop" : ""));
    if (in_fua) {
      EXPECT_EQ(ledger.write(h.get(), 4, LIBNBD_CMD_FLAG_FUA), EIO);
    } else if (acks_are_durable(mode)) {
      EXPECT_EQ(ledger.flush(h.get()), 0) << "a flush with everything in the NVRAM failed";
      EXPECT_EQ(img.fired(), 0) << "a flush synced with everything in the NVRAM";
      EXPECT_EQ(ledger.write(h.get(), 4), EIO);
    } else {
      EXPECT_EQ(ledger.flush(h.get()), EIO);
    }
    ASSERT_EQ(img.fired(), 1) << "the shim failed no sync";
    img.disarm();
    ledger.unflushed_may_be_lost();
    // Stopped: everything that writes or syncs fails, also now that the
    // file would take it.
    EXPECT_EQ(ledger.write(h.get(), 5), EIO);
    EXPECT_EQ(ledger.write(h.get(), 6, LIBNBD_CMD_FLAG_FUA), EIO);
    EXPECT_EQ(ledger.flush(h.get()), EIO);
    EXPECT_EQ(nbd_zero(h.get(), kBlk, 7 * kSlotBytes, 0), -1);
    EXPECT_EQ(nbd_get_errno(), EIO);
    EXPECT_EQ(nbd_trim(h.get(), kBlk, 8 * kSlotBytes, 0), -1);
    EXPECT_EQ(nbd_get_errno(), EIO);
    // Reads go on.
    EXPECT_EQ(ledger.check(h.get(), /*durable_only=*/true), "") << "while stopped";
    if (is_vld(mode)) {  // a dropped block fails its checksum: EIO, never old data
      std::vector<uint8_t> buf(kSlotBytes);
      const int rc = nbd_pread(h.get(), buf.data(), buf.size(), 3 * kSlotBytes, 0);
      if (rc == 0) EXPECT_EQ(buf, pattern_bytes(3 * kSlotBytes, kSlotBytes, 7 + 3));
      else EXPECT_EQ(nbd_get_errno(), EIO);
      EXPECT_EQ(rc == -1, drop) << "the dropped write should read EIO, the kept one its data";
    }
    EXPECT_NE(s->stderr_text().find("restart nbdkit"), std::string::npos) << s->stderr_text();
    nbd_shutdown(h.get(), 0);
    s->stop();
  }
  EXPECT_EQ(ledger.count(Ledger::Fate::kDurable), acks_are_durable(mode) ? 3u : 1u);
  RestartAndCheck(dir, img, ledger);
}

TEST_P(FileFaults, AFailedFlushStopsTheDisk) { FailedSyncStopsTheDisk(GetParam(), false, false); }
TEST_P(FileFaults, AFailedFuaSyncStopsTheDisk) { FailedSyncStopsTheDisk(GetParam(), true, false); }
TEST_P(FileFaults, AFailedSyncThatDropsWritesStopsTheDisk) {
  FailedSyncStopsTheDisk(GetParam(), false, true);
}

// mode=vld recovers at the first writable connection after a crash and
// writes its record then (after a kill -9 every request since the record is
// whole, so they extend its tree and no checkpoint is needed: a sync, the
// record, a sync); mode=lld writes its checkpoint then, which then also drains the
// NVRAM it replayed into segments and resets the NVRAM region. A fault
// there fails that connection and costs nothing. After a failed write the
// next connection recovers again; after a failed fdatasync no connection
// may write until nbdkit restarts (the page cache may hold writes the file
// does not). The restart recovers.
class FileFaultsInRecovery : public ::testing::TestWithParam<const char*> {};

// The faults to try in a recovery of the image FaultDuringRecovery makes.
std::vector<std::string> recovery_plans(const std::string& mode) {
  if (mode == "lld")
    // Recovery's pwrites: the checkpoint, the drained segment write, the
    // NVRAM header of the next epoch; its syncs: before and after the
    // checkpoint, after the segment write, after the header.
    return {"pwrite 0 EIO once", "pwrite 1 ENOSPC once short", "pwrite 2 EIO once",
            "sync 0 EIO once",   "sync 2 EIO once drop",       "sync 3 EIO once drop"};
  if (mode == "lld_nvram0")  // only the checkpoint, between two syncs
    return {"pwrite 0 EIO once", "pwrite 0 ENOSPC once short", "sync 0 EIO once",
            "sync 1 EIO once drop"};
  return {"pwrite 0 EIO once", "pwrite 0 ENOSPC once short", "sync 0 EIO once",
          "sync 1 EIO once drop"};
}

// A new 8 MiB image of `mode` with a FUA write, a flushed write and one
// acknowledged but never flushed, then kill -9: recovery has work to do.
void CrashWithWorkForRecovery(const FaultyImage& img, const std::string& mode, Ledger& ledger) {
  auto s = img.serve(with_mode({"size=8M"}, mode));
  NbdHandle h = s->connect();
  ASSERT_EQ(ledger.write(h.get(), 1, LIBNBD_CMD_FLAG_FUA), 0);
  ASSERT_EQ(ledger.write(h.get(), 2), 0);
  ASSERT_EQ(ledger.flush(h.get()), 0);
  ASSERT_EQ(ledger.write(h.get(), 3), 0);  // acknowledged, never flushed
  s->kill9();
  ledger.unflushed_may_be_lost();
}

TEST_P(FileFaultsInRecovery, AFaultDuringRecoveryCostsNothing) {
  const std::string mode = GetParam();
  for (const std::string& plan : recovery_plans(mode)) {
    SCOPED_TRACE(plan);
    const bool sync_failed = plan.starts_with("sync");
    TempDir dir;
    FaultyImage img(dir);
    Ledger ledger = Ledger::of(mode);
    CrashWithWorkForRecovery(img, mode, ledger);
    if (::testing::Test::HasFatalFailure()) return;
    img.arm(plan);
    {
      auto s = img.serve({});
      nbd_handle* first = nbd_create();
      EXPECT_EQ(nbd_connect_unix(first, s->socket().c_str()), -1) << "recovery's fault was lost";
      nbd_close(first);
      ASSERT_EQ(img.fired(), 1) << "recovery met no fault:\n" << s->stderr_text();
      const std::string log = s->stderr_text();
      EXPECT_NE(log.find(sync_failed ? "restart nbdkit" : "connect again"), std::string::npos)
          << "nbdkit's log does not say what to do:\n" << log;
      // The fault is gone (once); a second connection recovers again, or is
      // refused after a failed sync.
      nbd_handle* second = nbd_create();
      const bool connected = nbd_connect_unix(second, s->socket().c_str()) == 0;
      EXPECT_EQ(connected, !sync_failed) << s->stderr_text();
      if (connected) {
        EXPECT_EQ(ledger.check(second), "") << "after a second recovery";
      }
      nbd_close(second);
      s->stop();
    }
    img.disarm();
    RestartAndCheck(dir, img, ledger);
  }
}

// A file system that has filled up since the crash: recovery cannot write
// its record (or checkpoint), so no writable connection opens, and nbdkit's
// log says so in one line that names the way out; nbdkit -r, which writes
// nothing, serves every flushed write meanwhile.
TEST_P(FileFaultsInRecovery, AFullFileSystemStillServesReadOnly) {
  const std::string mode = GetParam();
  TempDir dir;
  FaultyImage img(dir);
  Ledger ledger = Ledger::of(mode);
  CrashWithWorkForRecovery(img, mode, ledger);
  if (HasFatalFailure()) return;
  img.arm("pwrite 0 ENOSPC sticky");
  {
    auto s = img.serve({});
    nbd_handle* h = nbd_create();
    EXPECT_EQ(nbd_connect_unix(h, s->socket().c_str()), -1) << "recovery wrote to a full file";
    nbd_close(h);
    ASSERT_GE(img.fired(), 1) << "recovery met no fault:\n" << s->stderr_text();
    const std::string log = s->stderr_text();
    EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
    EXPECT_NE(log.find("nbdkit -r serves it read-only"), std::string::npos) << log;
    s->stop();
  }
  const int fired = img.fired();
  {
    auto s = img.serve({}, {"-r"});
    NbdHandle h = s->connect();
    EXPECT_EQ(ledger.check(h.get()), "") << "read-only, on the full file system";
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(s->stop(), 0) << s->stderr_text();
  }
  EXPECT_EQ(img.fired(), fired) << "nbdkit -r wrote to the image";
  img.disarm();
  RestartAndCheck(dir, img, ledger);
}

// A fault while a new image is formatted: nbdkit does not start, says why
// and what to do, and leaves no half image behind (which the next start
// would refuse as not vld's); the next start creates the image.
TEST_P(FileFaults, AFaultWhileCreatingTheImageLeavesNoHalfImage) {
  const std::string mode = GetParam();
  for (const std::string plan : {"pwrite 0 ENOSPC once", "pwrite 0 EIO once short"}) {
    SCOPED_TRACE(plan);
    TempDir dir;
    FaultyImage img(dir);
    img.arm(plan);
    try {
      img.serve(with_mode({"size=8M"}, mode));
      ADD_FAILURE() << "nbdkit started on an image it could not write";
    } catch (const std::runtime_error& e) {
      const std::string log = e.what();
      EXPECT_NE(log.find("cannot create file=" + img.image()), std::string::npos) << log;
      EXPECT_NE(log.find("give another path"), std::string::npos) << log;
    }
    EXPECT_EQ(img.fired(), 1);
    EXPECT_FALSE(std::filesystem::exists(img.image())) << "a half image was left";
    img.disarm();
    Ledger ledger = Ledger::of(mode);
    {
      auto s = img.serve(with_mode({"size=8M"}, mode));
      NbdHandle h = s->connect();
      EXPECT_EQ(ledger.write(h.get(), 1, LIBNBD_CMD_FLAG_FUA), 0);
    }
    RestartAndCheck(dir, img, ledger);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, FileFaults, ::testing::ValuesIn(kAllModes), ModeName);
// mode=inplace writes nothing when it opens.
INSTANTIATE_TEST_SUITE_P(Modes, FileFaultsInRecovery,
                         ::testing::Values("vld", "lld", "lld_nvram0"), ModeName);

// Idle-time work answers to no request: when a write of the compactor
// (mode=vld, latency=sleep) fails, the next request fails with the error,
// once, changing nothing; the disk goes on, the compactor tries again a
// second later and goes on too, and every acknowledged write stays, live
// and after a restart.
TEST(FileFaultsIdle, AFailedCompactionWriteFailsTheNextRequest) {
  TempDir dir;
  FaultyImage img(dir);
  auto s = img.serve({"size=8M", "spare=5", "latency=sleep", "compactor_quiet_ms=20"});
  NbdHandle h = s->connect();
  // 80% of the blocks, then random updates: tracks for the compactor to empty.
  std::vector<std::vector<uint8_t>> want =
      fill_and_fragment(h.get(), 8 * 1024 * 1024 / kBlk * 80 / 100);
  img.arm("pwrite 0 EIO once");  // the next pwrite is the compactor's: no request comes
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (img.fired() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polls for the event
  ASSERT_EQ(img.fired(), 1) << "the compactor wrote nothing in 60 s\n" << s->stderr_text();
  img.disarm();
  const std::vector<uint8_t> other = pattern_bytes(0, kBlk, 9999);
  EXPECT_EQ(try_write(h.get(), 0, other, LIBNBD_CMD_FLAG_FUA), EIO)
      << "the compactor's failed write reached no request";
  EXPECT_EQ(read_bytes(h.get(), 0, kBlk), want[0]) << "the request that failed changed its block";
  want[1] = pattern_bytes(kBlk, kBlk, 10000);
  EXPECT_EQ(try_write(h.get(), kBlk, want[1], LIBNBD_CMD_FLAG_FUA), 0) << "reported once";
  // The next step the compactor tries, a second later, does work.
  EXPECT_TRUE(s->stderr_shows("vld: idle-time work going again", std::chrono::seconds(60)))
      << s->stderr_text();
  ASSERT_EQ(contents_difference(h.get(), want), "");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(s->stop(), 0) << s->stderr_text();
  for (const char* said : {"idle-time compaction failed", "trying again in 1 s"})
    EXPECT_NE(s->stderr_text().find(said), std::string::npos)
        << "nbdkit's log does not say \"" << said << "\":\n" << s->stderr_text();
  auto again = img.serve({});
  NbdHandle h2 = again->connect();
  ASSERT_EQ(contents_difference(h2.get(), want), "") << "after a restart";
  nbd_shutdown(h2.get(), 0);
  EXPECT_EQ(again->stop(), 0) << again->stderr_text();
}

// mode=inplace punches holes for trims: a failed punch fails the trim,
// which then leaves its range old (or zero), and the disk goes on.
TEST(FileFaultsInplace, AFailedHolePunchFailsTheTrim) {
  TempDir dir;
  FaultyImage img(dir);
  Ledger ledger(/*atomic_failures=*/false);
  auto s = img.serve({"size=8M", "mode=inplace"});
  NbdHandle h = s->connect();
  ASSERT_EQ(ledger.write(h.get(), 1, LIBNBD_CMD_FLAG_FUA), 0);
  const std::vector<uint8_t> two = pattern_bytes(2 * kSlotBytes, kSlotBytes, 5);
  ASSERT_EQ(try_write(h.get(), 2 * kSlotBytes, two, LIBNBD_CMD_FLAG_FUA), 0);
  img.arm("punch 0 EIO once");
  EXPECT_EQ(nbd_trim(h.get(), kSlotBytes, 2 * kSlotBytes, 0), -1);
  EXPECT_EQ(nbd_get_errno(), EIO);
  ASSERT_EQ(img.fired(), 1) << "the shim failed no hole punch";
  img.disarm();
  const std::vector<uint8_t> got = read_bytes(h.get(), 2 * kSlotBytes, kSlotBytes);
  EXPECT_TRUE(got == two || got == std::vector<uint8_t>(kSlotBytes, 0)) << "a failed trim tore";
  EXPECT_EQ(ledger.write(h.get(), 3, LIBNBD_CMD_FLAG_FUA), 0) << s->stderr_text();
  EXPECT_EQ(nbd_trim(h.get(), kSlotBytes, 2 * kSlotBytes, 0), 0) << nbd_get_error();
  EXPECT_EQ(ledger.check(h.get()), "");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(s->stop(), 0) << s->stderr_text();
  RestartAndCheck(dir, img, ledger);
}

}  // namespace
}  // namespace vld::test
