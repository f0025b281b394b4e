// Damaged images through the real plugin (tests/unit/corruption_test.cc has
// every case in-process; these check what a client and an operator see):
// a data block whose checksum fails is an NBD I/O error (EIO) for reads that
// touch it, its neighbours read fine, and nbdkit's log names the block; a
// damaged live map sector or superblock makes nbdkit refuse to start with a
// message naming the damage, leaving the image untouched. mode=lld: a
// damaged block in a segment is EIO for the reads that touch it; a damaged
// newest checkpoint falls back to the older one and rolls forward, losing
// nothing; both checkpoint slots, or the NVRAM header, damaged make nbdkit
// refuse the image untouched.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/modes/mode_image.h"
#include "core/lld/lld_layout.h"
#include "core/vld/map_sector.h"
#include "core/vld/vld_disk.h"
#include "core/vld/vld_layout.h"
#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

constexpr uint64_t kBlock = 4096;

std::vector<std::byte> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(c.size());
  std::memcpy(out.data(), c.data(), c.size());
  return out;
}

void flip_bit_in_file(const std::string& path, uint64_t offset, int bit) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ (1 << bit));
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
  ASSERT_TRUE(f.good());
}

void zero_file_range(const std::string& path, uint64_t offset, uint64_t len) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(static_cast<std::streamoff>(offset));
  const std::vector<char> zeros(len);
  f.write(zeros.data(), static_cast<std::streamsize>(len));
  ASSERT_TRUE(f.good());
}

// A 4 MiB image whose first 64 blocks hold pattern_bytes(0, 256 KiB, 5),
// made and cleanly closed by a server.
std::string make_image(const TempDir& dir) {
  const std::string file = dir.file("disk.img");
  NbdkitServer server(dir, {"file=" + file, "size=4M", "latency=none"});
  NbdHandle h = server.connect();
  write_bytes(h.get(), 0, pattern_bytes(0, 64 * kBlock, 5));
  check_nbd(nbd_flush(h.get(), 0), "flush");
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  return file;
}

// Where things are: opened in memory, on a copy of the file's bytes.
struct Layout {
  Superblock sb;
  uint64_t block_psn = 0;   // of logical block `block`
  uint64_t root_psn = 0;    // the newest record's root map sector
};
Layout layout_of(const std::string& file, uint64_t block) {
  Layout l;
  MemoryBackingStore probe(read_file(file));
  l.sb = read_superblock(probe, file);
  std::optional<LogRecord> newest;
  for (uint64_t slot = 0; slot < VldLayout::kRecordSlots; ++slot) {
    const auto& b = probe.bytes();
    auto r = decode_log_record(
        reinterpret_cast<const unsigned char*>(b.data()) + l.sb.platter_offset + slot * kSectorBytes,
        l.sb.secret);
    if (r && (!newest || r->generation > newest->generation)) newest = r;
  }
  EXPECT_TRUE(newest && newest->has_root);
  if (newest) l.root_psn = newest->root.psn;
  VldDisk d(std::make_unique<MemoryBackingStore>(probe.bytes()), l.sb);
  EXPECT_TRUE(d.map()[block].mapped());
  l.block_psn = d.map()[block].psn();
  return l;
}

// Block 10 of a disk written with `want` is damaged: a read of it, and one
// across it, fails whole with EIO; its neighbours, and everything else,
// read back.
void expect_block_10_damaged(nbd_handle* h, const std::vector<uint8_t>& want) {
  std::vector<uint8_t> buf(kBlock);
  EXPECT_EQ(nbd_pread(h, buf.data(), kBlock, 10 * kBlock, 0), -1) << "damaged block served";
  EXPECT_EQ(nbd_get_errno(), EIO) << nbd_get_error();
  std::vector<uint8_t> span(3 * kBlock);
  EXPECT_EQ(nbd_pread(h, span.data(), span.size(), 9 * kBlock, 0), -1);
  EXPECT_EQ(nbd_get_errno(), EIO);
  for (uint64_t b : {uint64_t{0}, uint64_t{9}, uint64_t{11}, uint64_t{63}}) {
    auto got = read_bytes(h, b * kBlock, kBlock);
    EXPECT_EQ(first_difference(got, std::vector<uint8_t>(want.begin() + b * kBlock,
                                                         want.begin() + (b + 1) * kBlock),
                               b * kBlock),
              "")
        << "block " << b;
  }
}

TEST(CorruptionOverNbd, DamagedDataBlockIsAnIoErrorForTheClient) {
  TempDir dir;
  const std::string file = make_image(dir);
  const Layout l = layout_of(file, 10);
  flip_bit_in_file(file, l.sb.platter_offset + l.block_psn * kSectorBytes + 100, 5);

  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + file, "latency=none", "statsfile=" + stats});
  NbdHandle h = server.connect();
  expect_block_10_damaged(h.get(), pattern_bytes(0, 64 * kBlock, 5));
  // Rewriting the whole block repairs it.
  const auto fresh = pattern_bytes(10 * kBlock, kBlock, 77);
  write_bytes(h.get(), 10 * kBlock, fresh, LIBNBD_CMD_FLAG_FUA);
  EXPECT_EQ(read_bytes(h.get(), 10 * kBlock, kBlock), fresh);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0);
  EXPECT_NE(server.stderr_text().find("data block 10 "), std::string::npos) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("checksum"), std::string::npos) << server.stderr_text();
  // The two reads that touched it, where every mode counts them (and in
  // the vld section's alias).
  const nlohmann::json j = read_json(stats);
  EXPECT_EQ(j.at("checksum_failures"), 2);
  EXPECT_EQ(j.at("vld").at("checksum_failures"), 2);
}

TEST(CorruptionOverNbd, DamagedLiveMapSectorIsRefusedAtStartup) {
  TempDir dir;
  const std::string file = make_image(dir);
  const Layout l = layout_of(file, 0);
  flip_bit_in_file(file, l.sb.platter_offset + l.root_psn * kSectorBytes + 60, 0);
  const std::string before = file_fingerprint(file);
  RunResult r = run_nbdkit({"file=" + file, "latency=none"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("image damaged: the map sector of piece"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("at physical sector " + std::to_string(l.root_psn)),
            std::string::npos)
      << r.stderr_text;
  EXPECT_EQ(file_fingerprint(file), before) << "a refused image was written";
}

class CorruptionOverNbdAnyMode : public ::testing::TestWithParam<const char*> {};

TEST_P(CorruptionOverNbdAnyMode, DamagedSuperblockIsRefusedAtStartup) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  {
    NbdkitServer server(dir, with_mode({"file=" + file, "size=4M", "latency=none"}, GetParam()));
    NbdHandle h = server.connect();
    write_bytes(h.get(), 0, pattern_bytes(0, 64 * kBlock, 5));
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(server.stop(), 0) << server.stderr_text();
  }
  flip_bit_in_file(file, 20, 3);  // export size
  const std::string before = file_fingerprint(file);
  RunResult r = run_nbdkit({"file=" + file, "latency=none"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("damaged superblock"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(file_fingerprint(file), before) << "a refused image was written";
}

INSTANTIATE_TEST_SUITE_P(Modes, CorruptionOverNbdAnyMode, ::testing::ValuesIn(kAllModes),
                         ModeName);

// ---- mode=lld

// Offsets in the file of every copy of `bytes` (4 KiB-aligned searches would
// miss NVRAM records, whose blocks follow a 64-byte header).
std::vector<uint64_t> find_all(const std::vector<std::byte>& file, const std::vector<uint8_t>& bytes) {
  std::vector<uint64_t> at;
  const auto* hay = reinterpret_cast<const uint8_t*>(file.data());
  for (uint64_t i = 0; i + bytes.size() <= file.size(); i += 64)
    if (std::memcmp(hay + i, bytes.data(), bytes.size()) == 0) at.push_back(i);
  return at;
}

struct LldPlaces {
  Superblock sb;
  LldLayout layout;
  uint64_t byte_of(uint64_t psn) const { return sb.platter_offset + psn * kSectorBytes; }
};
LldPlaces lld_places(const std::string& file) {
  MemoryBackingStore probe(read_file(file));
  LldPlaces p;
  p.sb = read_superblock(probe, file);
  p.layout = plan_lld_layout(p.sb.geometry, p.sb.simulated_cylinders, p.sb.export_bytes,
                             p.sb.block_bytes, p.sb.segment_bytes, p.sb.nvram_bytes, p.sb.version());
  return p;
}

// A 4 MiB lld image whose first 64 blocks hold pattern_bytes(0, 256 KiB, 5),
// cleanly stopped, then opened by a writable connection and stopped again
// (which drains the NVRAM, so that every block has its copy in a segment).
std::string make_lld_image(const TempDir& dir, const std::string& mode) {
  const std::string file = dir.file("disk.img");
  {
    NbdkitServer server(dir, with_mode({"file=" + file, "size=4M", "latency=none"}, mode));
    NbdHandle h = server.connect();
    write_bytes(h.get(), 0, pattern_bytes(0, 64 * kBlock, 5));
    check_nbd(nbd_flush(h.get(), 0), "flush");
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
  NbdkitServer server(dir, {"file=" + file, "latency=none"});
  NbdHandle h = server.connect();
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  return file;
}

class CorruptionOverNbdLld : public ::testing::TestWithParam<const char*> {};

TEST_P(CorruptionOverNbdLld, DamagedBlockInASegmentIsAnIoErrorForTheClient) {
  TempDir dir;
  const std::string file = make_lld_image(dir, GetParam());
  const auto want = pattern_bytes(0, 64 * kBlock, 5);
  const LldPlaces p = lld_places(file);
  // Every copy of block 10: the segment's, and an NVRAM record's the
  // region's reset made stale (damaging it changes nothing).
  const std::vector<uint8_t> block10(want.begin() + 10 * kBlock, want.begin() + 11 * kBlock);
  const std::vector<uint64_t> copies = find_all(read_file(file), block10);
  int in_segments = 0;
  for (uint64_t at : copies) {
    in_segments += at >= p.byte_of(p.layout.segments_first_psn);
    flip_bit_in_file(file, at + 100, 5);
  }
  ASSERT_EQ(in_segments, 1) << copies.size() << " copies of block 10";

  const std::string stats = dir.file("stats.json");
  NbdkitServer server(dir, {"file=" + file, "latency=none", "statsfile=" + stats});
  NbdHandle h = server.connect();
  expect_block_10_damaged(h.get(), want);
  // Rewriting the whole block repairs it, also across a restart.
  const auto fresh = pattern_bytes(10 * kBlock, kBlock, 77);
  write_bytes(h.get(), 10 * kBlock, fresh, LIBNBD_CMD_FLAG_FUA);
  EXPECT_EQ(read_bytes(h.get(), 10 * kBlock, kBlock), fresh);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0);
  EXPECT_NE(server.stderr_text().find("block 10 fails its checksum"), std::string::npos)
      << server.stderr_text();
  // The two reads that touched it, under the key mode=vld counts them by.
  EXPECT_EQ(read_json(stats).at("checksum_failures"), 2);
  NbdkitServer again(dir, {"file=" + file, "latency=none"});
  NbdHandle h2 = again.connect();
  EXPECT_EQ(read_bytes(h2.get(), 10 * kBlock, kBlock), fresh);
  nbd_shutdown(h2.get(), 0);
  EXPECT_EQ(again.stop(), 0) << again.stderr_text();
}

TEST_P(CorruptionOverNbdLld, DamagedNewestCheckpointFallsBackToTheOlderOne) {
  TempDir dir;
  const std::string file = make_lld_image(dir, GetParam());
  const LldPlaces p = lld_places(file);
  // Damage the slot a plain open picks, then check that the other one
  // (with the log after it) recovers every block.
  for (int slot = 0; slot < 2; ++slot) {
    SCOPED_TRACE("slot " + std::to_string(slot));
    TempDir copy;
    const std::string img = copy.file("disk.img");
    std::filesystem::copy_file(file, img);
    flip_bit_in_file(img, p.byte_of(p.layout.checkpoint[slot].first_psn) + 40, 2);
    const std::string stats = copy.file("stats.json");
    NbdkitServer server(copy, {"file=" + img, "latency=none", "statsfile=" + stats});
    NbdHandle h = server.connect();
    EXPECT_EQ(first_difference(read_bytes(h.get(), 0, 64 * kBlock), pattern_bytes(0, 64 * kBlock, 5)),
              "");
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0) << server.stderr_text();
  }
}

TEST_P(CorruptionOverNbdLld, BothCheckpointsDamagedIsRefusedAtStartup) {
  TempDir dir;
  const std::string file = make_lld_image(dir, GetParam());
  const LldPlaces p = lld_places(file);
  for (const LldExtent& slot : p.layout.checkpoint) flip_bit_in_file(file, p.byte_of(slot.first_psn) + 40, 2);
  const std::string before = file_fingerprint(file);
  RunResult r = run_nbdkit({"file=" + file, "latency=none"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("neither checkpoint slot is whole and authentic"), std::string::npos)
      << r.stderr_text;
  EXPECT_EQ(file_fingerprint(file), before) << "a refused image was written";
}

INSTANTIATE_TEST_SUITE_P(Modes, CorruptionOverNbdLld, ::testing::Values("lld", "lld_nvram0"),
                         ModeName);

// Both NVRAM header slots damaged: the records left in the region (here
// stale ones, already in segments) say the epoch, the header is rebuilt
// from them, and the image serves every block as written, logging the
// damage. With no authentic record either, nothing says which records
// count: refused, the image untouched.
TEST(CorruptionOverNbdLldNvram, DamagedNvramHeadersAreRebuiltOrRefused) {
  TempDir dir;
  const std::string file = make_lld_image(dir, "lld");
  const LldPlaces p = lld_places(file);
  ASSERT_GT(p.layout.nvram.sectors, 0u);
  const uint64_t region = p.byte_of(p.layout.nvram.first_psn);
  // Both header slots (512 bytes each at the region's start).
  for (int slot = 0; slot < 2; ++slot) flip_bit_in_file(file, region + slot * 512 + 8, 1);
  {
    NbdkitServer server(dir, {"file=" + file, "latency=none"});
    NbdHandle h = server.connect();
    EXPECT_EQ(first_difference(read_bytes(h.get(), 0, 64 * kBlock), pattern_bytes(0, 64 * kBlock, 5)),
              "");
    EXPECT_TRUE(server.stderr_shows("rebuilt from its records", std::chrono::seconds(5)))
        << server.stderr_text();
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(server.stop(), 0);
  }
  zero_file_range(file, region, p.layout.nvram.sectors * kSectorBytes);  // headers and records
  const std::string before = file_fingerprint(file);
  RunResult r = run_nbdkit({"file=" + file, "latency=none"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("the NVRAM region has no authentic header and no record"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_EQ(file_fingerprint(file), before) << "a refused image was written";
}

}  // namespace
}  // namespace vld::test
