// LldDisk::commit_group (mode=lld's atomic recovery units, docs/aru.md; the
// design is in core/lld/lld_aru.cc): scattered blocks and zeros read back,
// with and without NVRAM and past the NVRAM's size, through clean and
// unclean reopens; a group that cannot fit whole fails with ENOSPC and
// changes nothing; a failed backing write applies nothing, and the image
// then holds the group all old or all new. Crash states are the crash
// harness's (aru_crash_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "core/modes/mode_image.h"
#include "core/lld/lld_disk.h"
#include "core/store/backing_store.h"
#include "core/store/fault_store.h"
#include "core/util/error.h"
#include "geometry/presets.h"
#include "tests/unit/aru_test_util.h"
#include "tests/unit/lld_test_util.h"

namespace vld {
namespace {

constexpr uint64_t kBlock = 4096;
using Bytes = std::vector<std::byte>;

struct AruConfig {
  uint64_t export_bytes = 4 << 20;     // 1024 blocks
  uint64_t segment_bytes = 64 * 1024;  // 15 blocks a segment
  uint64_t nvram_bytes = 256 * 1024;   // 62 records of 4 KiB
  uint32_t spare_percent = 25;
  // A small custom geometry (64 sectors a track, 4 tracks a cylinder) and
  // no checks: as few segments as the layout allows, a full disk.
  bool tight = false;
};

AruConfig no_nvram(AruConfig c = {}) {
  c.nvram_bytes = 0;
  return c;
}

Superblock superblock_of(const AruConfig& c) {
  FormatOptions o =
      test::lld_format_options(c.export_bytes, c.spare_percent, c.segment_bytes, c.nvram_bytes);
  if (!c.tight) return plan_image(o);
  o.geometry.sectors_per_track = 64;
  o.geometry.tracks_per_cylinder = 4;
  o.geometry.derive_skews();
  return plan_image_unchecked(o);
}

// An lld disk on an in-memory image behind a FaultyStore (disarmed unless
// a test arms it), and a model of what every block must read.
class AruRig {
 public:
  explicit AruRig(AruConfig c = {}) : sb_(superblock_of(c)), mem_(sb_.image_bytes()) {
    format_store(mem_, sb_);
    faulty_ = std::make_unique<FaultyStore>(mem_);
    model_.assign(c.export_bytes, std::byte{0});
    open();
  }

  void open() { disk_ = std::make_unique<LldDisk>(std::make_unique<ProxyStore>(*faulty_), sb_); }
  void stop_and_reopen() {  // no close(): as after kill -9 (the memory copy is lost)
    disk_.reset();
    open();
  }
  void close_and_reopen() {
    disk_->close();
    stop_and_reopen();
  }

  Bytes fresh_block() {
    Bytes d(kBlock);
    for (auto& b : d) b = static_cast<std::byte>(rng_() % 255 + 1);
    return d;
  }
  void write(uint64_t block, uint64_t n = 1, bool fua = false) {
    Bytes data(n * kBlock);
    for (auto& b : data) b = static_cast<std::byte>(rng_() % 255 + 1);
    now_ = disk_->write(block * kBlock, data, fua, now_).end;
    std::memcpy(model_.data() + block * kBlock, data.data(), data.size());
  }
  void flush() { now_ = disk_->flush(now_).end; }

  // The group's contents: new data, or zeros where `zero` says.
  struct Group {
    std::vector<Bytes> data;
    std::vector<GroupBlock> blocks;
  };
  Group group(const std::vector<uint64_t>& blocks, const std::vector<uint64_t>& zeros = {}) {
    Group g;
    g.data.reserve(blocks.size());
    for (uint64_t b : blocks) {
      const bool zero = std::count(zeros.begin(), zeros.end(), b) > 0;
      g.data.push_back(zero ? Bytes() : fresh_block());
      g.blocks.push_back(GroupBlock{b, zero ? nullptr : g.data.back().data()});
    }
    return g;
  }
  // Commits g; the model follows only if it succeeds.
  Completion commit(const Group& g) {
    Completion done = disk_->commit_group(g.blocks, now_);
    now_ = done.end;
    test::apply_group(g.blocks, model_.data(), kBlock);
    return done;
  }

  Bytes read_block(uint64_t block) {
    Bytes out(kBlock);
    now_ = disk_->read(block * kBlock, out, now_).end;
    return out;
  }
  void expect_model() {
    for (uint64_t b = 0; b < model_.size() / kBlock; ++b)
      ASSERT_EQ(0, std::memcmp(read_block(b).data(), model_.data() + b * kBlock, kBlock))
          << "block " << b;
    EXPECT_EQ(disk_->check_consistency(), "");
  }

  // The same, but a block may fail with EIO instead (its copy in the image
  // was dropped by a failed sync: the checksum catches it).
  void expect_model_or_eio() {
    for (uint64_t b = 0; b < model_.size() / kBlock; ++b) {
      try {
        ASSERT_EQ(0, std::memcmp(read_block(b).data(), model_.data() + b * kBlock, kBlock))
            << "block " << b;
      } catch (const Error& e) {
        ASSERT_EQ(e.err(), EIO) << e.what();
      }
    }
  }

  LldDisk& disk() { return *disk_; }
  LldStats stats() const { return disk_->report().stats; }
  FaultyStore& faulty() { return *faulty_; }
  MemoryBackingStore& mem() { return mem_; }
  const Superblock& sb() const { return sb_; }
  const Bytes& model() const { return model_; }

 private:
  Superblock sb_;
  MemoryBackingStore mem_;
  std::unique_ptr<FaultyStore> faulty_;
  std::unique_ptr<LldDisk> disk_;
  Bytes model_;
  std::mt19937_64 rng_{15};
  SimTime now_ = kSimEpoch;
};

TEST(LldAru, ScatteredBlocksReadBackWithNvram) {
  AruRig rig;
  rig.write(17);
  const Completion done = rig.commit(rig.group({3, 17, 200}));
  EXPECT_EQ(done.syncs, 1u);  // one NVRAM append: one request of 3 records
  EXPECT_EQ(rig.stats().nvram_records_written, 4u);
  EXPECT_EQ(rig.stats().segment_writes, 0u);
  rig.expect_model();
  rig.stop_and_reopen();  // replayed from the NVRAM region
  rig.expect_model();
  rig.close_and_reopen();
  rig.expect_model();
}

TEST(LldAru, ScatteredBlocksReadBackWithoutNvram) {
  AruRig rig(no_nvram());
  rig.write(5, 2);  // in the memory copy: the commit makes it durable too
  const Completion done = rig.commit(rig.group({3, 17, 200}));
  EXPECT_EQ(done.syncs, 1u);
  EXPECT_EQ(rig.stats().segment_writes, 1u);  // one write: the memory copy and the group
  EXPECT_EQ(rig.stats().client_blocks_written, 5u);
  rig.expect_model();
  rig.stop_and_reopen();
  rig.expect_model();
  rig.close_and_reopen();
  rig.expect_model();
}

TEST(LldAru, ZerosReadAsZerosAndShowAsHoles) {
  for (AruConfig c : {AruConfig{}, no_nvram()}) {
    AruRig rig(c);
    for (uint64_t b = 0; b < 40; b += 4) rig.write(b, 4);
    rig.flush();
    // 8 and 9 a run of zeros (one trim entry), 30 alone, 12 and 33 data.
    rig.commit(rig.group({8, 9, 12, 30, 33}, {8, 9, 30}));
    rig.expect_model();
    uint64_t hole_bytes = 0;
    rig.disk().extents(0, 40 * kBlock, [&](uint64_t, uint64_t len, ExtentType t) {
      if (t == ExtentType::kHole) hole_bytes += len;
    });
    EXPECT_EQ(hole_bytes, 3 * kBlock);
    rig.stop_and_reopen();
    rig.expect_model();
    rig.close_and_reopen();
    rig.expect_model();
  }
}

TEST(LldAru, AGroupLargerThanTheNvramGoesToSegmentsWhole) {
  AruRig rig;
  const uint64_t records = rig.disk().report().nvram_capacity_records;
  for (uint64_t b = 500; b < 510; ++b) rig.write(b);  // buffered: drained first
  std::vector<uint64_t> blocks;
  for (uint64_t i = 0; i < records + 40; ++i) blocks.push_back(i * 7 % 1024);
  std::sort(blocks.begin(), blocks.end());
  const Completion done = rig.commit(rig.group(blocks, {14, 21, 28}));
  const LldStats s = rig.stats();
  EXPECT_EQ(s.nvram_bypasses, 1u);
  EXPECT_EQ(s.nvram_drains, 1u);
  EXPECT_GT(s.segment_writes, 2u);  // a chain of writes (15 blocks a segment)
  EXPECT_EQ(s.refused_requests, 0u);
  EXPECT_GE(done.syncs, 1u);
  EXPECT_EQ(rig.disk().report().nvram_buffered_blocks, 0u);
  rig.expect_model();
  rig.stop_and_reopen();  // rolled forward from the segments
  rig.expect_model();
  EXPECT_EQ(rig.disk().report().recovery.writes_discarded, 0u);
  rig.close_and_reopen();
  rig.expect_model();
}

TEST(LldAru, ManyGroupsThroughTheCleanerAndReopens) {
  for (AruConfig c : {AruConfig{}, no_nvram()}) {
    AruRig rig(c);
    SCOPED_TRACE(testing::Message() << "nvram " << c.nvram_bytes);
    std::mt19937_64 rng(3);
    for (uint64_t b = 0; b < 800; b += 8) rig.write(b, 8);
    for (int i = 0; i < 300; ++i) {
      std::vector<uint64_t> blocks, zeros;
      for (uint64_t n = 1 + rng() % 90; blocks.size() < n;) blocks.push_back(rng() % 800);
      std::sort(blocks.begin(), blocks.end());
      blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
      for (uint64_t b : blocks)
        if (rng() % 10 == 0) zeros.push_back(b);
      rig.commit(rig.group(blocks, zeros));
      if (i % 3 == 0) {
        const uint64_t at = rng() % 800;
        rig.write(at, 1 + rng() % 3);
      }
      if (i % 97 == 0) {
        rig.flush();  // (nvram=0: the plain write above is in memory only)
        rig.stop_and_reopen();
      }
    }
    EXPECT_GT(rig.stats().segments_cleaned, 0u);
    EXPECT_EQ(rig.stats().refused_requests, 0u);
    rig.expect_model();
    rig.flush();
    rig.stop_and_reopen();
    rig.expect_model();
  }
}

// Every block written once: the segments hold the live data and a few
// segments more. A group of every block needs its new copies beside the
// old ones until it commits, which no cleaning can give.
void fill(AruRig& rig) {
  const uint64_t blocks = rig.model().size() / kBlock;
  for (uint64_t b = 0; b < blocks; b += 8) rig.write(b, 8);
  rig.flush();
}

TEST(LldAru, AGroupThatCannotFitWholeFailsWithEnospcAndChangesNothing) {
  for (AruConfig c : {AruConfig{}, no_nvram()}) {
    c.export_bytes = 1 << 20;  // 256 blocks
    c.spare_percent = 0;
    c.tight = true;
    AruRig rig(c);
    fill(rig);
    rig.write(3);  // unflushed (nvram=0), buffered (NVRAM): must stay
    std::vector<uint64_t> every(256);
    for (uint64_t b = 0; b < 256; ++b) every[b] = b;
    const AruRig::Group g = rig.group(every);
    const LldStats before = rig.stats();
    try {
      rig.commit(g);
      FAIL() << "a group of every block committed on a full disk";
    } catch (const Error& e) {
      EXPECT_EQ(e.err(), ENOSPC) << e.what();
    }
    if (c.nvram_bytes == 0) {
      // Nothing of the group: at most the memory copy's one block, written
      // out to make room (with NVRAM the buffer was drained first).
      EXPECT_LE(rig.stats().client_blocks_written, before.client_blocks_written + 1);
    }
    rig.expect_model();
    // The disk goes on: a group that fits commits, and all of it survives.
    rig.commit(rig.group({1, 100, 255}));
    rig.expect_model();
    rig.stop_and_reopen();
    rig.expect_model();
  }
}

// The image as a restart (kill -9: every write kept) or a power cut (only
// what the last successful sync covered) leaves it, opened: the group is
// all old or all new, and every other block as the model says (block
// `unflushed` may also read as never written).
void expect_whole_or_nothing(const AruRig& rig, const Bytes& model, const Bytes& image,
                             const AruRig::Group& g, uint64_t unflushed, const char* what) {
  LldDisk d(std::make_unique<MemoryBackingStore>(image), rig.sb());
  EXPECT_EQ(d.check_consistency(), "") << what;
  size_t only_new = 0, only_old = 0;
  const Bytes zeros(kBlock);
  Bytes got(kBlock);
  for (uint64_t b = 0; b < model.size() / kBlock; ++b) {
    d.read(b * kBlock, got, kSimEpoch);
    const bool old = std::memcmp(got.data(), model.data() + b * kBlock, kBlock) == 0;
    auto it = std::find_if(g.blocks.begin(), g.blocks.end(),
                           [&](const GroupBlock& x) { return x.block == b; });
    if (it == g.blocks.end()) {
      const bool lost = b == unflushed && std::memcmp(got.data(), zeros.data(), kBlock) == 0;
      ASSERT_TRUE(old || lost) << what << ": block " << b << " outside the group changed";
      continue;
    }
    const bool neu = std::memcmp(got.data(), it->data ? it->data : zeros.data(), kBlock) == 0;
    ASSERT_TRUE(old || neu) << what << ": block " << b << " is neither old nor new";
    only_new += neu && !old;
    only_old += old && !neu;
  }
  EXPECT_TRUE(only_new == 0 || only_old == 0)
      << what << ": " << only_new << " of the group's blocks are new, " << only_old << " old";
}

// One commit with `fault` armed: false if the fault did not hit it (the
// commit succeeded). Else it threw, nothing of it reads new; the disk
// either goes on (a later group commits) or has stopped (writes fail with
// EIO; always after a failed sync), and the image after a restart or a
// power cut holds the group whole or not at all.
bool run_fault(const AruConfig& c, size_t group_blocks, const FaultyStore::Fault& fault) {
  AruRig rig(c);
  for (uint64_t b = 0; b < 64; b += 4) rig.write(b, 4);
  rig.flush();
  rig.write(71);  // unflushed (nvram=0): written by the commit, or not
  std::vector<uint64_t> blocks;
  for (uint64_t i = 0; i < group_blocks; ++i) blocks.push_back(i * 3 % 250);
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  const AruRig::Group g = rig.group(blocks, {blocks[1]});
  rig.faulty().arm(fault);
  try {
    rig.commit(g);
    rig.faulty().disarm();
    return false;
  } catch (const Error&) {
  }
  EXPECT_GT(rig.faulty().failures(), 0u);
  rig.faulty().disarm();
  if (fault.drop_on_failed_sync)
    rig.expect_model_or_eio();  // reads of what the kernel dropped may fail
  else
    rig.expect_model();  // nothing applied, in memory either
  const Bytes model(rig.model()), as_is(rig.mem().bytes()), synced(rig.faulty().synced_image());
  bool stopped = false;
  try {
    rig.commit(rig.group({2, 90}));
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EIO) << e.what();
    stopped = true;
  }
  if (!stopped) rig.expect_model();
  if (fault.op == FaultyStore::Op::kSync) {
    EXPECT_TRUE(stopped);
  }
  expect_whole_or_nothing(rig, model, as_is, g, 71, "restart");
  expect_whole_or_nothing(rig, model, synced, g, 71, "power cut");
  return true;
}

TEST(LldAru, AFailedWriteAppliesNothing) {
  // Groups of 3 blocks (one NVRAM request) and 100 (more than the NVRAM
  // holds: a chain of 4 segment writes of 31 blocks, after a drain with
  // NVRAM), each write of the commit failing in turn, torn or not, once or
  // from then on.
  size_t cases = 0;
  for (AruConfig c : {AruConfig{}, no_nvram()}) {
    for (size_t n : {size_t{3}, size_t{100}}) {
      for (uint64_t nth = 0; nth < 12; ++nth) {
        for (bool sticky : {false, true}) {
          FaultyStore::Fault f;
          f.op = FaultyStore::Op::kWrite;
          f.nth = nth;
          f.sticky = sticky;
          f.torn_bytes = nth % 2 ? 0 : 2048;
          f.err = nth % 3 ? EIO : ENOSPC;
          SCOPED_TRACE(testing::Message() << "nvram " << c.nvram_bytes << ", " << n << " blocks, "
                                          << "write #" << nth << (sticky ? " sticky" : ""));
          cases += run_fault(c, n, f);
        }
      }
    }
  }
  EXPECT_GE(cases, 18u);
}

TEST(LldAru, AFailedSyncStopsTheDiskAndAppliesNothing) {
  for (AruConfig c : {AruConfig{}, no_nvram()}) {
    for (size_t n : {size_t{3}, size_t{100}}) {
      for (uint64_t nth : {0, 1, 2}) {
        for (bool drop : {false, true}) {
          FaultyStore::Fault f;
          f.op = FaultyStore::Op::kSync;
          f.nth = nth;
          f.drop_on_failed_sync = drop;
          SCOPED_TRACE(testing::Message() << "nvram " << c.nvram_bytes << ", " << n << " blocks, "
                                          << "sync #" << nth << (drop ? ", dropping" : ""));
          run_fault(c, n, f);
        }
      }
    }
  }
}

}  // namespace
}  // namespace vld
