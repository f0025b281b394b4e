// The crash harness of mode=vld, mode=lld and (for ARUs) mode=inplace: a
// workload driver that runs a Disk (VldDisk, LldDisk with or without NVRAM,
// or InplaceDisk; RigConfig::mode) on a
// RecordingStore and keeps a model of what every request wrote, an oracle
// that decides whether a recovered image is one the crash contract allows,
// and the per-crash-state check of all five clauses of the contract.
//
// The crash contract (docs/crash-contract.md, core/vld/vld_disk.h). After any crash, where every
// backing-store write before the last completed sync survives and any subset
// of the later ones survives, each whole at 4 KiB (or torn at 512 bytes):
//   (1) the image opens without help;
//   (2) every write acknowledged with FUA or before a completed flush reads
//       back exactly;
//   (3) every write request reads back entirely old or entirely new: never a
//       mix, never another block's data, never garbage;
//   (4) recovering twice gives the same state;
//   (5) no physical block is mapped twice and the free map agrees.
//
// The oracle (clauses 2 and 3). A crash state is allowed iff there is a set S
// of "surviving" requests such that
//   - S holds every durable write request: completed, and FUA or followed by
//     a completed flush (or clean close); with durable acknowledgements
//     (RigConfig::durable_at_ack: mode=lld with NVRAM, which fdatasyncs each
//     write, trim and zero into the NVRAM region, or past it into segments,
//     before it replies) every completed write, trim and zero;
//   - S holds only issued requests: those with at least one backing-store
//     event before the crash point (the request in flight counts);
//   - every logical block reads as the content the newest request in S that
//     touched it left there, or zeros if no request in S touched it.
// A request's content for a block is what the live (never crashed) disk held
// in that block right after the request: for a partial-block write the
// merged block (the disk's read-modify-write), for a zero request zeros (or
// the merged block), for a trim zeros. That is "all old or all new" per
// request, at block granularity, with old meaning any older allowed state.
//
// mode=inplace updates in place, so an ordinary write or zero is atomic per
// block only where the crash states are whole 4 KiB units and the writes
// whole blocks (RigConfig::block_units): there each block of it is its own
// unit, and its tests check ordinary writes at 4 KiB only and write whole
// blocks; an ARU commit stays one unit over all its blocks, torn or not.
//
// Trims are advisory ("a request that trimmed reads back zeros or old"): each
// block a trim covers is its own one-block unit, never required to be
// durable, except with durable acknowledgements, where a completed trim is
// required like a write. Write and write-zeroes requests are atomic units
// over all their blocks and durable as above.
//
// Deciding whether S exists: every write carries data unique to (request,
// byte offset), never zero, so a block showing non-zero content names the one
// unit on top of it: that unit is in S and every later unit touching the
// block is not. Blocks showing zeros are ambiguous (initial state, a trim, a
// zero request): they are solved by enumeration over the few free units that
// could be on top of them, after the forced ones. Every conclusion the oracle
// draws follows from the contract alone; it does not assume the virtual
// log's stronger per-piece ordering.
//
// Beyond contents, mode=vld's recovered map() must be the same on every
// recovery of the same image (clause 4); mode=lld exposes no map, so there
// clause 4 compares contents, and clause 5 is check_consistency() (map,
// segment usage and log head agree), which every open runs.
//
// Thread-safety: Rig is built single-threaded; afterwards its const methods
// (materialize, check) may run concurrently from several threads.
#ifndef VLD_TESTS_UNIT_CRASH_ORACLE_H_
#define VLD_TESTS_UNIT_CRASH_ORACLE_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/store/backing_store.h"
#include "core/store/crash_store.h"
#include "core/store/fault_store.h"
#include "core/modes/mode_image.h"
#include "core/image_format.h"
#include "core/vld/map_sector.h"
#include "core/util/checksum.h"
#include "core/util/error.h"
#include "core/lld/lld_disk.h"
#include "core/vld/vld_disk.h"
#include "geometry/presets.h"
#include "tests/unit/aru_test_util.h"

namespace vld::crash {

using Bytes = std::vector<std::byte>;
using G = RecordingStore::Granularity;

// The block of most rigs (RigConfig::block_bytes), and of the hand-made
// states of CrashOracle.*.
inline constexpr uint64_t kBlock = 4096;

inline const char* gran_name(G g) { return g == G::k4K ? "4K" : "512(torn)"; }

// ---- stores ----------------------------------------------------------------

// A store that owns an image given by value (no extra copy, unlike as_store).
class VectorStore final : public BackingStore {
 public:
  explicit VectorStore(Bytes bytes) : b_(std::move(bytes)) {}
  uint64_t size_bytes() const override { return b_.size(); }
  void read(uint64_t offset, std::span<std::byte> out) override {
    check(offset, out.size());
    if (!out.empty()) std::memcpy(out.data(), b_.data() + offset, out.size());
  }
  void write(uint64_t offset, std::span<const std::byte> data) override {
    check(offset, data.size());
    if (!data.empty()) std::memcpy(b_.data() + offset, data.data(), data.size());
  }
  void discard(uint64_t offset, uint64_t len) override {
    check(offset, len);
    if (len) std::memset(b_.data() + offset, 0, len);
  }
  void sync() override {}
  void for_each_data_range(uint64_t offset, uint64_t len,
                           const std::function<void(uint64_t, uint64_t)>& fn) override {
    check(offset, len);
    if (len) fn(offset, len);
  }

 private:
  void check(uint64_t offset, uint64_t len) const {
    if (offset > b_.size() || len > b_.size() - offset) throw Error("vector store: out of range", EIO);
  }
  Bytes b_;
};

// ---- configuration -----------------------------------------------------------

struct RigConfig {
  uint64_t export_bytes = 256 * 1024;
  std::string preset = "st19101";
  // A small custom geometry keeps images tiny; 0: the preset's own.
  uint32_t sectors_per_track = 64;
  uint32_t tracks_per_cylinder = 4;
  uint32_t spare_percent = 25;
  // Where the platters start in the image. The format allows any multiple of
  // 512 from 4 KiB (decode_superblock); 4 KiB instead of the default 1 MiB
  // keeps each materialized image small (materialize and every open copy the
  // whole image), and is still 4 KiB-aligned, so the crash units are the same.
  uint64_t platter_offset = 4096;
  VldOptions vld = [] {
    VldOptions o;
    o.window_cylinders = 1;
    o.retired_limit = 2;
    return o;
  }();

  // The disk mode: vld (the default) or lld.
  DiskMode mode = DiskMode::kVld;
  // The disk's block (block=): the oracle's logical blocks are the disk's,
  // so that a request is atomic over the blocks the disk maps.
  uint64_t block_bytes = kBlock;
  // 0: the preset's. mode=lld sizes its checkpoint slots for as many
  // segments as all the drive's cylinders could hold, and plan_image adds
  // that system area to the platters: a few cylinders keep it (and the
  // image) small, and the segments few, so that the cleaner has to run.
  uint32_t cylinders = 0;
  // mode=lld's format parameters (segment=, nvram=). 32 KiB is one track of
  // the 64-sector custom geometry: 7 blocks and a summary sector a segment.
  // 64 KiB of NVRAM holds 15 records of 4 KiB blocks.
  uint64_t segment_bytes = 32 * 1024;
  uint64_t nvram_bytes = 64 * 1024;
  LldOptions lld;
  // Requests may fail: a FaultyStore sits between the disk and the
  // recording (Rig::arm), and a request the disk refuses (ENOSPC) or fails
  // is recorded as failed instead of ending the test. A failed request must
  // leave no trace in any crash state (docs/crash-contract.md, clause 7),
  // unless the disk stopped during it.
  bool failures = false;
  // The image's format_version (0: the newest of its mode).
  uint32_t format_version = 0;
  // Group commit (Disk::set_group_commit): a request that leaves its sync
  // to the caller is acknowledged only at the next Rig::sync_group, which
  // syncs once for all of them.
  bool group_commit = false;

  // Each block of an ordinary write or zero is its own unit of the oracle:
  // mode=inplace writes in place, so a crash can keep some of a request's
  // blocks and not others. (Atomic per block only for whole-block writes
  // and 4 KiB crash states; within a block, a torn sector or a partial
  // write mixes old and new, which the oracle does not model.)
  bool block_units() const { return mode == DiskMode::kInplace; }
  // Every completed write, trim and zero is durable at its reply: mode=lld
  // with NVRAM (lld_disk.h). Otherwise flush, FUA and a clean close are the
  // durability points.
  bool durable_at_ack() const { return mode == DiskMode::kLld && nvram_bytes > 0; }
  DiskOptions disk_options() const {
    DiskOptions o;
    o.vld = vld;
    o.lld = lld;
    return o;
  }
};

inline Superblock make_superblock(const RigConfig& c) {
  FormatOptions o;
  o.mode = c.mode;
  o.export_bytes = c.export_bytes;
  o.block_bytes = static_cast<uint32_t>(c.block_bytes);
  o.spare_percent = c.spare_percent;
  o.segment_bytes = c.segment_bytes;
  o.nvram_bytes = c.nvram_bytes;
  DriveGeometry g = *find_preset(c.preset);
  if (c.sectors_per_track) g.sectors_per_track = c.sectors_per_track;
  if (c.tracks_per_cylinder) g.tracks_per_cylinder = c.tracks_per_cylinder;
  if (c.cylinders) g.cylinders = c.cylinders;
  g.derive_skews();
  o.geometry = g;
  Superblock sb = plan_image_unchecked(o);  // tiny, tightly packed disks
  sb.platter_offset = c.platter_offset;
  sb.format_version = c.format_version;
  return sb;
}

// The disk the config's mode names, on store (opening recovers it).
inline std::unique_ptr<Disk> open_disk(std::unique_ptr<BackingStore> store, const Superblock& sb,
                                       const RigConfig& c) {
  return make_disk(std::move(store), sb, c.disk_options());
}

// A block's content as a hash: zero_hash() for zeros, whatever the block's
// size, so that "reads as zeros" needs no size; never that for other bytes.
inline uint64_t zero_hash() { return 0; }
inline uint64_t hash_block(const std::byte* p, uint64_t len = kBlock) {
  if (std::all_of(p, p + len, [](std::byte b) { return b == std::byte{0}; })) return zero_hash();
  const uint64_t h = checksum64(p, len, 0x5eedULL);
  return h == zero_hash() ? 1 : h;
}

// Bytes unique to (seed, request, disk offset), none zero.
inline Bytes request_data(uint64_t seed, size_t req, uint64_t offset, size_t len) {
  Bytes out(len);
  for (size_t i = 0; i < len; ++i) {
    uint64_t pos = offset + i;
    uint64_t z = (pos / 8) * 0x9e3779b97f4a7c15ULL + seed * 0xd1b54a32d192ed03ULL +
                 (req + 1) * 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    auto b = static_cast<uint8_t>(z >> (8 * (pos % 8)));
    out[i] = std::byte{b == 0 ? uint8_t{0xa5} : b};
  }
  return out;
}

// ---- the workload and its model ------------------------------------------------

struct Request {
  // kCommit: an ARU's commit (Disk::commit_group), a flush that also makes
  // its own blocks one atomic unit, durable when it completes.
  // kPlace: an ARU's blocks placed before its commit (Disk::place_shadow),
  // a pseudo-request with no units, like kIdle.
  enum class Op { kOpen, kWrite, kTrim, kZero, kFlush, kClose, kIdle, kCommit, kPlace };
  Op op = Op::kWrite;
  uint64_t offset = 0, len = 0;
  bool fua = false, may_trim = false;
  size_t ev_begin = 0, ev_end = 0;  // its backing-store events [begin, end)
  std::vector<size_t> units;        // oracle units (see Rig::Unit)
  bool failed = false;              // the disk threw (RigConfig::failures)

  static Request make(Op op, uint64_t offset = 0, uint64_t len = 0, bool fua = false,
                      bool may_trim = false) {
    Request r;
    r.op = op;
    r.offset = offset;
    r.len = len;
    r.fua = fua;
    r.may_trim = may_trim;
    return r;
  }
  bool barrier() const { return op == Op::kFlush || op == Op::kClose || op == Op::kCommit; }
  std::string describe(size_t index, uint64_t block = kBlock) const {
    static const char* names[] = {"open",  "write", "trim",       "zero",
                                  "flush", "close", "idle",  "ARU commit", "ARU placement"};
    std::ostringstream s;
    s << "#" << index << " " << names[static_cast<int>(op)];
    if (op == Op::kCommit) s << " of " << len / block << " blocks from " << offset / block;
    if (op == Op::kWrite || op == Op::kTrim || op == Op::kZero) {
      s << " [" << offset << ",+" << len << ") blocks " << offset / block << ".."
        << (offset + len - 1) / block;
      if (fua) s << " FUA";
      if (op == Op::kZero) s << (may_trim ? " may_trim" : " no_hole");
    }
    s << " events [" << ev_begin << "," << ev_end << ")";
    if (failed) s << " (failed)";
    return s.str();
  }
};

class Rig {
 public:
  // One atomic unit of the oracle: a write/zero request, or one block of a
  // trim. effects: (block, content hash) in block order.
  struct Unit {
    size_t req;
    bool may_be_required;  // durable once the request is
    std::vector<std::pair<uint64_t, uint64_t>> effects;
    // Its request failed: absent from every crash state, unless the disk
    // stopped during the request (then either).
    bool must_be_absent = false;
  };

  Rig(const RigConfig& cfg, uint64_t seed)
      : cfg_(cfg), seed_(seed), sb_(make_superblock(cfg)), bs_(cfg.block_bytes),
        blocks_(cfg.export_bytes / bs_), live_(cfg.export_bytes), hist_(blocks_) {
    Bytes base(sb_.image_bytes());
    auto enc = encode_superblock(sb_);
    std::memcpy(base.data(), enc.data(), enc.size());
    rec_ = std::make_unique<RecordingStore>(std::move(base));
    if (sb_.mode == DiskMode::kLld) {
      LldDisk::format(*rec_, sb_);
      rec_->sync();  // as format_store does: a crash state never has half a format
    } else if (sb_.mode == DiskMode::kInplace) {
      rec_->sync();  // nothing on the platters: its journal area is all zeros
    } else {
      VldDisk::format(*rec_, sb_);  // syncs
    }
    format_end_ = rec_->events();
    if (cfg_.failures) faulty_ = std::make_unique<FaultyStore>(*rec_, /*keep_synced_image=*/false);
    open();
  }

  const Superblock& sb() const { return sb_; }
  const RigConfig& config() const { return cfg_; }
  const RecordingStore& rec() const { return *rec_; }
  Disk& disk() { return *disk_; }
  // The disk as its mode's class. REQUIRES: the config's mode.
  VldDisk& vld_disk() { return dynamic_cast<VldDisk&>(*disk_); }
  LldDisk& lld_disk() { return dynamic_cast<LldDisk&>(*disk_); }
  uint64_t blocks() const { return blocks_; }
  uint64_t block_bytes() const { return bs_; }
  size_t format_end() const { return format_end_; }
  const std::vector<Request>& requests() const { return reqs_; }
  const std::vector<Unit>& units() const { return units_; }
  const Bytes& live() const { return live_; }
  // Fails calls of the store from now on (RigConfig::failures), and how
  // many it failed so far.
  void arm(const FaultyStore::Fault& f) { faulty_->arm(f); }
  void disarm() { faulty_->disarm(); }
  uint64_t injected_faults() const { return faulty_ ? faulty_->failures() : 0; }
  // The disk stopped taking writes (a failed fdatasync, or a write that
  // could not be voided); the first request it refused for that.
  bool stopped() const { return first_stopped_req_ != SIZE_MAX; }
  size_t failed_requests() const {
    return std::count_if(reqs_.begin(), reqs_.end(), [](const Request& r) { return r.failed; });
  }

  // ---- requests (each starts when the previous one completed) ----
  void write(uint64_t offset, uint64_t len, bool fua) {
    Request r = Request::make(Request::Op::kWrite, offset, len, fua);
    const size_t id = reqs_.size();
    Bytes data = request_data(seed_, id, offset, len);
    run(r, [&] { return disk_->write(offset, data, fua, now_); });
    Bytes before = r.failed ? live_ : Bytes();
    std::memcpy(live_.data() + offset, data.data(), len);
    add_request_units(r, id, first_block(offset), last_block(offset, len));
    if (r.failed) live_ = std::move(before);
    reqs_.push_back(std::move(r));
  }
  void trim(uint64_t offset, uint64_t len, bool fua) {
    Request r = Request::make(Request::Op::kTrim, offset, len, fua);
    const size_t id = reqs_.size();
    run(r, [&] { return disk_->trim(offset, len, fua, now_); });
    for (uint64_t b = (offset + bs_ - 1) / bs_; (b + 1) * bs_ <= offset + len; ++b) {
      if (!r.failed) std::memset(live_.data() + b * bs_, 0, bs_);
      r.units.push_back(units_.size());
      units_.push_back(Unit{id, cfg_.durable_at_ack() && !r.failed, {{b, zero_hash()}}, r.failed});
      hist_[b].push_back({r.units.back(), zero_hash()});
    }
    reqs_.push_back(std::move(r));
  }
  void zero(uint64_t offset, uint64_t len, bool may_trim, bool fua) {
    Request r = Request::make(Request::Op::kZero, offset, len, fua, may_trim);
    const size_t id = reqs_.size();
    run(r, [&] { return disk_->zero(offset, len, ZeroFlags{may_trim, fua, false}, now_); });
    Bytes before = r.failed ? live_ : Bytes();
    std::memset(live_.data() + offset, 0, len);
    add_request_units(r, id, first_block(offset), last_block(offset, len));
    if (r.failed) live_ = std::move(before);
    reqs_.push_back(std::move(r));
  }
  // An ARU's commit (Disk::commit_group): `group` (sorted, distinct; data
  // nullptr for zeros) as one atomic unit that is durable once the commit
  // completes (it is FUA and a flush at once). Its data must be unique to
  // it, as request_data's is (e.g. request_data(seed, id) with an id no
  // request of the rig has).
  void commit_group(std::span<const GroupBlock> group) {
    Request r = Request::make(Request::Op::kCommit, group.front().block * bs_,
                              group.size() * bs_, /*fua=*/true);
    const size_t id = reqs_.size();
    run(r, [&] { return disk_->commit_group(group, now_); });
    Bytes before = r.failed ? live_ : Bytes();
    test::apply_group(group, live_.data(), bs_);
    std::vector<uint64_t> blocks;
    for (const GroupBlock& g : group) blocks.push_back(g.block);
    add_group_unit(r, id, blocks);
    if (r.failed) live_ = std::move(before);
    reqs_.push_back(std::move(r));
  }
  // The same with data of this request's own (zeros where `zeros` says).
  void commit_group(const std::vector<uint64_t>& blocks, const std::vector<bool>& zeros = {}) {
    const size_t id = reqs_.size();
    std::vector<Bytes> data;
    std::vector<GroupBlock> group;
    data.reserve(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      const bool zero = i < zeros.size() && zeros[i];
      data.push_back(zero ? Bytes() : request_data(seed_, id, blocks[i] * bs_, bs_));
      group.push_back(GroupBlock{blocks[i], zero ? nullptr : data.back().data()});
    }
    commit_group(group);
  }
  // An ARU's blocks placed before its commit (Disk::place_shadow, mode=vld),
  // recorded as a pseudo-request with no units (as idle() is): no block a
  // client reads changes, so every crash state must still be one the
  // requests allow, with none of the placed data in it.
  std::vector<uint64_t> place_shadow(std::span<const GroupBlock> blocks) {
    Request r = Request::make(Request::Op::kPlace);
    std::vector<uint64_t> tokens;
    run(r, [&] { return disk_->place_shadow(blocks, now_, &tokens); });
    reqs_.push_back(std::move(r));
    return tokens;
  }
  void drop_shadow(uint64_t token) { disk_->drop_shadow(token); }
  // Reads committed data from the live disk (what an ARU merges with).
  void read_committed(uint64_t offset, std::span<std::byte> out) { disk_->read(offset, out, now_); }
  void flush() {
    Request r = Request::make(Request::Op::kFlush);
    run(r, [&] { return disk_->flush(now_); });
    if (r.failed) r.op = Request::Op::kIdle;  // a failed flush is no barrier
    reqs_.push_back(std::move(r));
  }
  // Idle time: up to `steps` idle steps (vld: compaction moves and repacks,
  // and the log record that ends a track; lld: NVRAM drain a segment at a
  // time, cleaning, checkpoints), recorded as one pseudo-request with no
  // units: a step changes no content, so every crash state must still be
  // one the client's requests allow. Returns the steps run. With `period`,
  // the idle period is expected to end that long after it begins
  // (Disk::idle_step's idle_ends): the disk declines steps that would not
  // end by then.
  size_t idle(size_t steps, std::optional<SimDuration> period = std::nullopt) {
    Request r = Request::make(Request::Op::kIdle);
    r.ev_begin = rec_->events();
    const SimTime ends = period ? now_ + *period : kUnknownIdleEnd;
    size_t n = 0;
    for (; n < steps; ++n) {
      std::optional<Completion> c;
      try {
        c = disk_->idle_step(now_, ends);
      } catch (const Error&) {
        if (!cfg_.failures) throw;
        break;  // the next request reports it (docs/crash-contract.md, clause 6)
      }
      if (!c) break;
      now_ = c->end;
    }
    r.ev_end = rec_->events();
    reqs_.push_back(std::move(r));
    return n;
  }

  // Called with the disk before each clean close, e.g. to keep counters
  // that the next open starts again.
  void before_close(std::function<void(Disk&)> fn) { before_close_ = std::move(fn); }

  // Group commit: the sync that acknowledges the requests served since the
  // last one (Disk::sync_through), their end moved to after it (requests in
  // flight together): a crash before it may keep any of them, each whole.
  // Returns the syncs it made (0 if one the disk made meanwhile covered
  // them: a drain's).
  uint32_t sync_group() {
    if (awaiting_sync_.empty()) return 0;
    const uint32_t n = disk_->sync_through(sync_ticket_);
    for (size_t id : awaiting_sync_) reqs_[id].ev_end = rec_->events();
    awaiting_sync_.clear();
    return n;
  }

  // A clean close (a barrier like a flush) and a reopen on the same store.
  void close_and_reopen() {
    sync_group();  // the controller's close waits for the syncs in flight
    if (before_close_) before_close_(*disk_);
    Request r = Request::make(Request::Op::kClose);
    r.ev_begin = rec_->events();
    bool closed = true;
    try {
      disk_->close();
    } catch (const Error&) {
      if (!cfg_.failures) throw;
      r.op = Request::Op::kIdle;  // a failed close is no barrier: as a crash
      closed = false;
    }
    r.ev_end = rec_->events();
    reqs_.push_back(std::move(r));
    disk_.reset();
    open();
    if (!closed) adopt_recovered_state();
  }

  // After an open that followed a crash (a failed close): writes not yet
  // durable may be lost. What the disk reads must be a state the oracle
  // allows; it is the model from now on.
  void adopt_recovered_state() {
    Bytes got(live_.size());
    disk_->read(0, got, now_);
    std::vector<uint64_t> hashes(blocks_);
    for (uint64_t b = 0; b < blocks_; ++b) hashes[b] = hash_block(got.data() + b * bs_, bs_);
    if (std::string why = check(rec_->events(), hashes); !why.empty())
      throw std::runtime_error("the open after a failed close reads a state the contract does "
                               "not allow:" + why);
    live_ = std::move(got);
    // Writes after the last barrier before the crash were not durable, and
    // a later flush does not make them so: the crash kept them or not.
    size_t barrier = 0;
    for (size_t i = 0; i < reqs_.size(); ++i)
      if (reqs_[i].barrier()) barrier = i;
    if (!cfg_.durable_at_ack())
      for (Unit& u : units_)
        if (u.req > barrier && !reqs_[u.req].fua) u.may_be_required = false;
  }

  // "" if the live disk reads back the model exactly.
  std::string check_live() {
    Bytes got(live_.size());
    disk_->read(0, got, now_);
    for (uint64_t b = 0; b < blocks_; ++b)
      if (std::memcmp(got.data() + b * bs_, live_.data() + b * bs_, bs_) != 0)
        return "live disk differs from the model at block " + std::to_string(b) + ": it reads " +
               content_name(hash_block(got.data() + b * bs_, bs_)) + ", the model " +
               content_name(hash_block(live_.data() + b * bs_, bs_));
    if (std::string why = disk_->check_consistency(); !why.empty()) return "live disk: " + why;
    return "";
  }

  // ---- the oracle ----

  // Requests issued at crash point p: a prefix of reqs_.
  size_t issued_requests(size_t p) const {
    size_t n = 0;
    while (n < reqs_.size()) {
      const Request& r = reqs_[n];
      bool issued = r.ev_begin < p || (r.ev_begin == r.ev_end && r.ev_end <= p);
      if (!issued) break;
      ++n;
    }
    return n;
  }

  // "" if the block contents (hash per logical block) are an allowed state
  // at crash point p, else what is wrong.
  std::string check(size_t p, const std::vector<uint64_t>& got) const;

  // Describes content with this hash: zeros, or which request wrote it where.
  std::string content_name(uint64_t h) const {
    if (h == zero_hash()) return "zeros";
    auto it = by_hash_.find(h);
    if (it == by_hash_.end()) return "content no request ever wrote anywhere";
    const auto& [u, b] = it->second;
    return "content of " + reqs_[units_[u].req].describe(units_[u].req, bs_) + " for block " +
           std::to_string(b);
  }

 private:
  // The oracle's steps (check()): units that acknowledgements require, then
  // what each block's contents decide, then the blocks that read as zeros,
  // which more than one set of surviving units may explain.
  struct Verdicts;
  struct ZeroBlock {
    uint64_t b;
    size_t from, n;  // F_b = hist_[b][from, n): the units that may be on top
  };
  std::string unit_name(size_t u) const;
  void force(Verdicts& v, size_t u, int8_t to, const std::string& reason) const;
  size_t issued_on(uint64_t b, size_t issued_units) const;  // hist_[b]'s issued prefix
  void require_acknowledged(Verdicts& v, size_t p, size_t nreq) const;
  std::vector<uint64_t> decide_blocks(Verdicts& v, const std::vector<uint64_t>& got) const;
  bool zero_block_ok(const Verdicts& v, const ZeroBlock& a, uint64_t want) const;
  void decide_zero_blocks(Verdicts& v, const std::vector<uint64_t>& got,
                          const std::vector<uint64_t>& ambiguous) const;
  std::string explain_zero_blocks(const Verdicts& v, const std::vector<uint64_t>& got,
                                  const std::vector<ZeroBlock>& amb) const;

  // The failed request the disk stopped during: the last failed one before
  // the first it refused because it had stopped (+ 1: an index bound).
  size_t first_failed_before_stop() const {
    for (size_t i = first_stopped_req_; i-- > 0;)
      if (reqs_[i].failed) return i + 1;
    return 0;
  }

  uint64_t first_block(uint64_t offset) const { return offset / bs_; }
  uint64_t last_block(uint64_t offset, uint64_t len) const { return (offset + len - 1) / bs_; }

  // With RigConfig::failures an open that fails (its recovery's writes)
  // is tried again with the fault gone, as the plugin's next connection
  // does once the backing file works again.
  void open() {
    for (;;) {
      Request r = Request::make(Request::Op::kOpen);
      r.ev_begin = rec_->events();
      BackingStore& store = faulty_ ? static_cast<BackingStore&>(*faulty_) : *rec_;
      try {
        disk_ = open_disk(std::make_unique<ProxyStore>(store), sb_, cfg_);
        disk_->set_group_commit(cfg_.group_commit);
      } catch (const Error&) {
        if (!cfg_.failures) throw;
        r.failed = true;
        faulty_->disarm();
      }
      r.ev_end = rec_->events();
      reqs_.push_back(std::move(r));
      if (disk_) return;
    }
  }

  // Runs one request; with RigConfig::failures a throw marks it failed.
  template <typename Fn>
  void run(Request& r, Fn&& fn) {
    r.ev_begin = rec_->events();
    try {
      const Completion c = fn();
      now_ = c.end;
      if (c.sync_ticket) {  // the caller pushes r next: its index is reqs_.size()
        awaiting_sync_.push_back(reqs_.size());
        sync_ticket_ = std::max(sync_ticket_, c.sync_ticket);
      }
    } catch (const Error& e) {
      if (!cfg_.failures) throw;
      r.failed = true;
      if (!stopped() && std::string(e.what()).find("takes no more writes") != std::string::npos)
        first_stopped_req_ = reqs_.size();
    }
    r.ev_end = rec_->events();
  }

  // A write's or zero's units: one over all its blocks, or one per block
  // (RigConfig::block_units).
  void add_request_units(Request& r, size_t id, uint64_t first, uint64_t last) {
    std::vector<uint64_t> blocks;
    for (uint64_t b = first; b <= last; ++b) {
      if (cfg_.block_units())
        add_group_unit(r, id, {b});
      else
        blocks.push_back(b);
    }
    if (!blocks.empty()) add_group_unit(r, id, blocks);
  }
  void add_group_unit(Request& r, size_t id, const std::vector<uint64_t>& blocks) {
    Unit u{id, !r.failed, {}, r.failed};
    const size_t ui = units_.size();
    for (uint64_t b : blocks) {
      uint64_t h = hash_block(live_.data() + b * bs_, bs_);
      u.effects.push_back({b, h});
      hist_[b].push_back({ui, h});
      if (h != zero_hash()) by_hash_.emplace(h, std::pair{ui, b});
    }
    r.units.push_back(ui);
    units_.push_back(std::move(u));
  }

  RigConfig cfg_;
  uint64_t seed_;
  Superblock sb_;
  uint64_t bs_;  // the disk's block: the oracle's unit of content
  uint64_t blocks_;
  std::unique_ptr<RecordingStore> rec_;
  std::unique_ptr<FaultyStore> faulty_;  // RigConfig::failures: over rec_
  size_t first_stopped_req_ = SIZE_MAX;   // stopped()
  std::unique_ptr<Disk> disk_;
  std::vector<size_t> awaiting_sync_;  // requests served, not yet acknowledged (group commit)
  uint64_t sync_ticket_ = 0;           // the highest ticket among them
  std::function<void(Disk&)> before_close_;
  size_t format_end_ = 0;
  SimTime now_ = kSimEpoch;
  Bytes live_;
  std::vector<Request> reqs_;
  std::vector<Unit> units_;
  // Per logical block: (unit, content hash) of every unit touching it, in
  // order.
  std::vector<std::vector<std::pair<size_t, uint64_t>>> hist_;
  std::unordered_map<uint64_t, std::pair<size_t, uint64_t>> by_hash_;
};

// The oracle's working state at one crash point: what it has decided about
// each issued unit (kIn: its effects must show, kOut: they must not, kFree:
// either), why, and the contradictions found so far.
struct Rig::Verdicts {
  enum : int8_t { kFree = 0, kIn = 1, kOut = -1 };
  explicit Verdicts(size_t issued_units) : st(issued_units, kFree), why(issued_units) {}
  size_t issued() const { return st.size(); }
  std::vector<int8_t> st;
  std::vector<std::string> why;
  std::vector<std::string> problems;
};

inline std::string Rig::unit_name(size_t u) const {
  return reqs_[units_[u].req].describe(units_[u].req, bs_);
}

inline void Rig::force(Verdicts& v, size_t u, int8_t to, const std::string& reason) const {
  if (v.st[u] == to) return;
  if (v.st[u] == Verdicts::kFree) {
    v.st[u] = to;
    v.why[u] = reason;
    return;
  }
  const bool in = to == Verdicts::kIn;
  v.problems.push_back("unit of " + unit_name(u) + " must be " + (in ? "present" : "absent") +
                       " (" + reason + ") and " + (in ? "absent" : "present") + " (" +
                       v.why[u] + ")");
}

inline size_t Rig::issued_on(uint64_t b, size_t issued_units) const {
  const auto& h = hist_[b];
  size_t n = 0;
  while (n < h.size() && h[n].first < issued_units) ++n;
  return n;
}

inline void Rig::require_acknowledged(Verdicts& v, size_t p, size_t nreq) const {
  // The last barrier (flush, clean close) complete at p.
  size_t barrier = 0;
  bool have_barrier = false;
  for (size_t i = 0; i < nreq; ++i)
    if (reqs_[i].barrier() && reqs_[i].ev_end <= p) barrier = i, have_barrier = true;
  for (size_t u = 0; u < v.issued(); ++u) {
    const Request& r = reqs_[units_[u].req];
    // A failed request left nothing once its error was returned, unless the
    // disk stopped during it (the last failed request before the first one
    // the stop refused). A crash during it is a crash during any request in
    // flight: its client never heard back, so either outcome is allowed.
    if (units_[u].must_be_absent && r.ev_end <= p &&
        !(stopped() && units_[u].req + 1 == first_failed_before_stop()))
      force(v, u, Verdicts::kOut, "its request failed");
    if (!units_[u].may_be_required || r.ev_end > p) continue;
    // Units belong to writes, trims and zeros only: with durable
    // acknowledgements each completed one is its own barrier.
    const bool acked = cfg_.durable_at_ack();
    if (r.fua || acked || (have_barrier && units_[u].req < barrier))
      force(v, u, Verdicts::kIn,
            r.fua   ? "acknowledged with FUA"
            : acked ? "acknowledged, and acknowledgements are durable (NVRAM)"
                    : "acknowledged before a completed flush");
  }
}

inline std::vector<uint64_t> Rig::decide_blocks(Verdicts& v, const std::vector<uint64_t>& got) const {
  std::vector<uint64_t> ambiguous;
  for (uint64_t b = 0; b < blocks_; ++b) {
    const auto& h = hist_[b];
    const size_t n = issued_on(b, v.issued());
    std::vector<size_t> cands;
    for (size_t j = 0; j < n; ++j)
      if (h[j].second == got[b]) cands.push_back(j);
    const bool bottom = got[b] == zero_hash();  // never written
    if (cands.empty() && !bottom) {
      std::string s = "block " + std::to_string(b) + " holds " + content_name(got[b]) +
                      "; allowed: zeros";
      for (size_t j = 0; j < n; ++j) s += " | " + content_name(h[j].second);
      v.problems.push_back(s);
      continue;
    }
    if (cands.size() + (bottom ? 1 : 0) != 1) {
      ambiguous.push_back(b);
      continue;
    }
    // One unit (or the initial state) is on top of block b.
    size_t top_j = 0;
    if (!cands.empty()) {
      top_j = cands[0];
      force(v, h[top_j].first, Verdicts::kIn, "block " + std::to_string(b) + " shows its data");
      ++top_j;
    }
    for (size_t j = top_j; j < n; ++j)
      force(v, h[j].first, Verdicts::kOut,
            "block " + std::to_string(b) + " shows older " + content_name(got[b]));
  }
  return ambiguous;
}

inline bool Rig::zero_block_ok(const Verdicts& v, const ZeroBlock& a, uint64_t want) const {
  const auto& h = hist_[a.b];
  size_t top = a.n;  // the newest unit of F_b that is in
  for (size_t j = a.n; j-- > a.from;)
    if (v.st[h[j].first] == Verdicts::kIn) {
      top = j;
      break;
    }
  // A free one-block unit newer than that may be the top instead.
  for (size_t j = top == a.n ? a.from : top + 1; j < a.n; ++j)
    if (v.st[h[j].first] == Verdicts::kFree && units_[h[j].first].effects.size() == 1 &&
        h[j].second == want)
      return true;
  if (top != a.n) return h[top].second == want;
  return (a.from > 0 ? h[a.from - 1].second : zero_hash()) == want;
}

inline void Rig::decide_zero_blocks(Verdicts& v, const std::vector<uint64_t>& got,
                                    const std::vector<uint64_t>& ambiguous) const {
  // Block b's top is decided among F_b, the units on b newer than the
  // newest unit forced in on b (older ones are under it). Units forced out
  // are out. A free unit being in never breaks a block with non-zero
  // content: there every free unit is older than the forced top. A free
  // one-block unit (a trim block, a one-block write or zero) matters to its
  // block alone and is chosen per block; the free multi-block units couple
  // blocks and are enumerated.
  std::vector<ZeroBlock> amb;
  std::vector<size_t> rel;
  for (uint64_t b : ambiguous) {
    const auto& h = hist_[b];
    const size_t n = issued_on(b, v.issued());
    size_t from = 0;
    for (size_t j = 0; j < n; ++j)
      if (v.st[h[j].first] == Verdicts::kIn) from = j + 1;
    amb.push_back(ZeroBlock{b, from, n});
    for (size_t j = from; j < n; ++j)
      if (v.st[h[j].first] == Verdicts::kFree && units_[h[j].first].effects.size() > 1)
        rel.push_back(h[j].first);
  }
  std::sort(rel.begin(), rel.end());
  rel.erase(std::unique(rel.begin(), rel.end()), rel.end());
  auto all_ok = [&] {
    return std::all_of(amb.begin(), amb.end(),
                       [&](const ZeroBlock& a) { return zero_block_ok(v, a, got[a.b]); });
  };
  if (rel.size() > 20) {
    v.problems.push_back("oracle: too many free multi-block units (" +
                         std::to_string(rel.size()) + ") to decide the zero blocks");
    return;
  }
  for (uint64_t mask = 0; mask < (uint64_t{1} << rel.size()); ++mask) {
    for (size_t i = 0; i < rel.size(); ++i)
      v.st[rel[i]] = (mask >> i & 1) ? Verdicts::kIn : Verdicts::kOut;
    if (all_ok()) return;
  }
  for (size_t u : rel) v.st[u] = Verdicts::kFree;
  v.problems.push_back(explain_zero_blocks(v, got, amb));
}

inline std::string Rig::explain_zero_blocks(const Verdicts& v, const std::vector<uint64_t>& got,
                                            const std::vector<ZeroBlock>& amb) const {
  std::string s = "no set of surviving requests explains the blocks that read as zeros:";
  for (const ZeroBlock& a : amb) {
    if (zero_block_ok(v, a, got[a.b])) continue;
    s += " block " + std::to_string(a.b) + " (" + content_name(got[a.b]) + "; units on it:";
    for (size_t j = 0; j < a.n; ++j) {
      const size_t u = hist_[a.b][j].first;
      s += " " + unit_name(u) +
           (v.st[u] == Verdicts::kIn ? "[in]" : v.st[u] == Verdicts::kOut ? "[out]" : "[free]");
    }
    s += ")";
  }
  return s;
}

inline std::string Rig::check(size_t p, const std::vector<uint64_t>& got) const {
  const size_t nreq = issued_requests(p);
  size_t nu = 0;  // issued units: a prefix of units_
  while (nu < units_.size() && units_[nu].req < nreq) ++nu;
  Verdicts v(nu);
  require_acknowledged(v, p, nreq);
  const std::vector<uint64_t> ambiguous = decide_blocks(v, got);
  if (v.problems.empty() && !ambiguous.empty()) decide_zero_blocks(v, got, ambiguous);
  if (v.problems.empty()) return "";
  std::string out;
  for (size_t i = 0; i < v.problems.size() && i < 6; ++i) out += "\n    " + v.problems[i];
  if (v.problems.size() > 6) out += "\n    ... " + std::to_string(v.problems.size() - 6) + " more";
  return out;
}

// ---- checking one crash state --------------------------------------------------

struct Reading {
  Bytes data;
  std::vector<MapEntry> map;  // mode=vld only
};

// Opens a disk, reads the whole export. Throws on failure (the message says
// which clause).
inline Reading open_and_read(std::unique_ptr<BackingStore> store, const Rig& rig,
                             const char* what, std::unique_ptr<Disk>* owner = nullptr) {
  std::unique_ptr<Disk> d;
  try {
    d = open_disk(std::move(store), rig.sb(), rig.config());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("(1) ") + what + " does not open: " + e.what());
  }
  if (std::string why = d->check_consistency(); !why.empty())
    throw std::runtime_error(std::string("(5) ") + what + ": check_consistency: " + why);
  Reading r;
  r.data.resize(rig.sb().export_bytes);
  try {
    d->read(0, r.data, kSimEpoch);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("(3) ") + what + ": reading fails (garbage): " + e.what());
  }
  if (const auto* v = dynamic_cast<const VldDisk*>(d.get())) r.map = v->map();
  if (owner) *owner = std::move(d);
  return r;
}

inline std::string first_block_diff(const Bytes& a, const Bytes& b, uint64_t block) {
  for (size_t i = 0; i < a.size(); i += block)
    if (std::memcmp(a.data() + i, b.data() + i, block) != 0)
      return "block " + std::to_string(i / block);
  return "map entries only";
}

struct StateStats {
  std::atomic<uint64_t> verified{0};
  std::atomic<uint64_t> nested{0};         // crash states whose recovery was cut
  std::atomic<uint64_t> recovery_cuts{0};  // images a cut recovery left, each reopened
};

// The crash points that cut a recorded run at each of its barriers: right
// before each sync completes (every write since the previous sync pending,
// so the subsets cover every point between), and after the last event.
inline std::vector<size_t> barrier_points(const RecordingStore& r) {
  std::vector<size_t> points;
  for (size_t e = 0; e < r.events(); ++e)
    if (r.event(e).kind == RecordingStore::Event::Kind::kSync) points.push_back(e);
  points.push_back(r.events());
  return points;
}

// Recovery cut by a crash, and the recovery after it cut again (crash
// contract clause 4: "a crash during recovery recovers to the same
// contents", any number of times in a row). `rs` recorded the writes and
// syncs of one recovery of a crash image that reads `want`. At each of its
// barriers, `subsets` random subsets of the pending units survive, whole or
// torn; the image each leaves must open and read `want`. That second
// recovery is recorded too and cut once more at one of its barriers, and
// that image must open and read `want` as well. "" or the first problem.
inline std::string check_recovery_cuts(const Rig& rig, const RecordingStore& rs, const Bytes& want,
                                       uint64_t seed, StateStats& stats, unsigned subsets = 2) {
  std::mt19937_64 rng(seed);
  auto cut = [&](const RecordingStore& r, size_t q) {
    const G g = (rng() & 1) ? G::k4K : G::k512;
    std::vector<bool> s(r.pending_unit_count(q, g));
    const unsigned density = rng() % 3;  // mostly lost, coin flips, mostly kept
    for (size_t i = 0; i < s.size(); ++i)
      s[i] = density == 0 ? rng() % 8 == 0 : density == 1 ? (rng() & 1) : rng() % 8 != 0;
    return std::pair{r.materialize(q, s, g), g};
  };
  for (size_t q : barrier_points(rs)) {
    for (unsigned k = 0; k < subsets; ++k) {
      auto [img, g] = cut(rs, q);
      const std::string where = "recovery cut after its event " + std::to_string(q) + " of " +
                                std::to_string(rs.events()) + " (" + gran_name(g) + ")";
      RecordingStore rs2(std::move(img));
      Reading second = open_and_read(std::make_unique<ProxyStore>(rs2), rig,
                                     ("the image a " + where + " left").c_str());
      if (second.data != want)
        return "(4) the image a " + where + " left reads differently at " +
               first_block_diff(want, second.data, rig.block_bytes());
      stats.recovery_cuts.fetch_add(1, std::memory_order_relaxed);
      const std::vector<size_t> points2 = barrier_points(rs2);
      const size_t q2 = points2[rng() % points2.size()];
      auto [img2, g2] = cut(rs2, q2);
      Reading third = open_and_read(std::make_unique<VectorStore>(std::move(img2)), rig,
                                    ("the image left when the recovery after a " + where +
                                     " was cut too").c_str());
      if (third.data != want)
        return "(4) " + where + ", then the next recovery cut after its event " +
               std::to_string(q2) + " of " + std::to_string(rs2.events()) + " (" +
               gran_name(g2) + "): reads differently at " +
               first_block_diff(want, third.data, rig.block_bytes());
      stats.recovery_cuts.fetch_add(1, std::memory_order_relaxed);
    }
  }
  stats.nested.fetch_add(1, std::memory_order_relaxed);
  return "";
}

// Checks clauses (1)-(5) on the image a crash at p leaves with the given
// surviving units. Returns "" or the problem. nested_seed != 0: recovery is
// cut too (check_recovery_cuts).
inline std::string check_state(const Rig& rig, size_t p, const std::vector<bool>& survives, G g,
                               uint64_t nested_seed, StateStats& stats) {
  Bytes img = rig.rec().materialize(p, survives, g);
  Bytes copy = img;
  try {
    // (1), (5), reads.
    RecordingStore rs(std::move(img));
    std::unique_ptr<Disk> d1;
    Reading first = open_and_read(std::make_unique<ProxyStore>(rs), rig, "the crash image", &d1);
    // (2), (3).
    std::vector<uint64_t> hashes(rig.blocks());
    const uint64_t bs = rig.block_bytes();
    for (uint64_t b = 0; b < rig.blocks(); ++b)
      hashes[b] = hash_block(first.data.data() + b * bs, bs);
    if (std::string why = rig.check(p, hashes); !why.empty())
      return "(2)/(3) contents not allowed:" + why;
    // (4) a copy of the crash image recovers to the same state.
    Reading second = open_and_read(std::make_unique<VectorStore>(std::move(copy)), rig,
                                   "a copy of the crash image");
    if (second.data != first.data)
      return "(4) recovering a copy of the crash image reads differently at " +
             first_block_diff(first.data, second.data, rig.block_bytes());
    if (second.map != first.map) return "(4) recovering a copy of the crash image gives another map()";
    // (4) crash right after the open, with nothing new written.
    d1.reset();
    Reading third = open_and_read(std::make_unique<VectorStore>(rs.contents()), rig,
                                  "the image as recovery left it");
    if (third.data != first.data)
      return "(4) reopening after recovery reads differently at " +
             first_block_diff(first.data, third.data, rig.block_bytes());
    // (4) crashes in the middle of recovery's own writes, twice in a row.
    if (nested_seed != 0)
      if (std::string why = check_recovery_cuts(rig, rs, first.data, nested_seed, stats);
          !why.empty())
        return why;
  } catch (const std::exception& e) {
    return e.what();
  }
  stats.verified.fetch_add(1, std::memory_order_relaxed);
  return "";
}

// ---- running many crash states ----------------------------------------------------

struct Job {
  size_t p;
  G g;
  enum class Kind { kMask, kRandom, kPrefix } kind;
  uint64_t arg;  // mask, seed, or prefix length
};

inline std::vector<bool> survivors_of(const Job& j, size_t k) {
  std::vector<bool> s(k, false);
  switch (j.kind) {
    case Job::Kind::kMask:
      for (size_t i = 0; i < k; ++i) s[i] = (j.arg >> i) & 1;
      break;
    case Job::Kind::kPrefix:
      for (size_t i = 0; i < k && i < j.arg; ++i) s[i] = true;
      break;
    case Job::Kind::kRandom: {
      std::mt19937_64 rng(j.arg);
      // Mixed densities: mostly-lost, coin flips, mostly-kept.
      const double pr[] = {0.1, 0.5, 0.5, 0.9};
      std::bernoulli_distribution keep(pr[rng() % 4]);
      for (size_t i = 0; i < k; ++i) s[i] = keep(rng);
      break;
    }
  }
  return s;
}

inline std::string describe_job(const Rig& rig, const Job& j, const std::vector<bool>& s) {
  std::ostringstream o;
  o << "crash after event " << j.p << " of " << rig.rec().events() << " (synced prefix "
    << rig.rec().synced_prefix(j.p) << "), " << gran_name(j.g) << ", " << s.size()
    << " pending units, surviving {";
  bool first = true;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i]) o << (first ? "" : ",") << i, first = false;
  o << "}";
  if (j.p > 0) {
    for (size_t i = 0; i < rig.requests().size(); ++i) {
      const Request& r = rig.requests()[i];
      if (r.ev_begin < j.p && j.p <= r.ev_end) {
        o << "; the crash came " << (j.p == r.ev_end ? "right after " : "during ")
          << r.describe(i);
        break;
      }
    }
  }
  return o.str();
}

struct RunResult {
  uint64_t verified = 0, nested = 0, recovery_cuts = 0, failures = 0;
  std::vector<std::string> messages;  // the first few failures
};

// Runs the jobs on `threads` threads. nested_every: do a nested crash (a
// crash during recovery) on every n-th job (0: never).
inline RunResult run_jobs(const Rig& rig, const std::vector<Job>& jobs, unsigned threads,
                          uint64_t nested_every, uint64_t seed) {
  StateStats stats;
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> failures{0};
  std::mutex mu;
  std::vector<std::string> messages;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      const Job& j = jobs[i];
      std::vector<bool> s = survivors_of(j, rig.rec().pending_unit_count(j.p, j.g));
      uint64_t nested_seed =
          nested_every && i % nested_every == 0 ? (seed * 0x9e3779b97f4a7c15ULL) ^ (i + 1) : 0;
      if (nested_seed == 0 && nested_every && i % nested_every == 0) nested_seed = 1;
      std::string why = check_state(rig, j.p, s, j.g, nested_seed, stats);
      if (!why.empty()) {
        failures.fetch_add(1);
        std::lock_guard lock(mu);
        if (messages.size() < 8) messages.push_back(describe_job(rig, j, s) + ":\n  " + why);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return RunResult{stats.verified.load(), stats.nested.load(), stats.recovery_cuts.load(),
                   failures.load(), messages};
}

inline unsigned harness_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return std::clamp(n, 1u, 4u);
}

}  // namespace vld::crash

#endif  // VLD_TESTS_UNIT_CRASH_ORACLE_H_
