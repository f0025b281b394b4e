// Damaged images through the real plugin (tests/unit/corruption_test.cc has
// every case in-process; these check what a client and an operator see):
// a data block whose checksum fails is an NBD I/O error (EIO) for reads that
// touch it, its neighbours read fine, and nbdkit's log names the block; a
// damaged live map sector or superblock makes nbdkit refuse to start with a
// message naming the damage, leaving the image untouched.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/image.h"
#include "core/vld/map_sector.h"
#include "core/vld/vld_disk.h"
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

TEST(CorruptionOverNbd, DamagedDataBlockIsAnIoErrorForTheClient) {
  TempDir dir;
  const std::string file = make_image(dir);
  const Layout l = layout_of(file, 10);
  flip_bit_in_file(file, l.sb.platter_offset + l.block_psn * kSectorBytes + 100, 5);

  NbdkitServer server(dir, {"file=" + file, "latency=none"});
  NbdHandle h = server.connect();
  const auto want = pattern_bytes(0, 64 * kBlock, 5);
  std::vector<uint8_t> buf(kBlock);
  EXPECT_EQ(nbd_pread(h.get(), buf.data(), kBlock, 10 * kBlock, 0), -1) << "damaged block served";
  EXPECT_EQ(nbd_get_errno(), EIO) << nbd_get_error();
  // A read across it fails whole.
  std::vector<uint8_t> span(3 * kBlock);
  EXPECT_EQ(nbd_pread(h.get(), span.data(), span.size(), 9 * kBlock, 0), -1);
  EXPECT_EQ(nbd_get_errno(), EIO);
  // Its neighbours, and everything else, read back.
  for (uint64_t b : {uint64_t{0}, uint64_t{9}, uint64_t{11}, uint64_t{63}}) {
    auto got = read_bytes(h.get(), b * kBlock, kBlock);
    EXPECT_EQ(first_difference(got, std::vector<uint8_t>(want.begin() + b * kBlock,
                                                         want.begin() + (b + 1) * kBlock),
                               b * kBlock),
              "")
        << "block " << b;
  }
  // Rewriting the whole block repairs it.
  const auto fresh = pattern_bytes(10 * kBlock, kBlock, 77);
  write_bytes(h.get(), 10 * kBlock, fresh, LIBNBD_CMD_FLAG_FUA);
  EXPECT_EQ(read_bytes(h.get(), 10 * kBlock, kBlock), fresh);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(server.stop(), 0);
  EXPECT_NE(server.stderr_text().find("data block 10 "), std::string::npos) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("checksum"), std::string::npos) << server.stderr_text();
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

TEST(CorruptionOverNbd, DamagedSuperblockIsRefusedAtStartup) {
  TempDir dir;
  const std::string file = make_image(dir);
  flip_bit_in_file(file, 20, 3);  // export size
  const std::string before = file_fingerprint(file);
  RunResult r = run_nbdkit({"file=" + file, "latency=none"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.stderr_text.find("damaged superblock"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(file_fingerprint(file), before) << "a refused image was written";
}

}  // namespace
}  // namespace vld::test
