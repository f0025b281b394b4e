// Read-only serving (docs/crash-contract.md, clause 8): nbdkit -r serves an
// image without writing a byte of it, clean or after a kill -9, in every
// mode (mode=lld: also with acknowledged writes only in its NVRAM region,
// which a writable open would replay and drain); recovery runs in memory; a writer is refused while it is served;
// a later writable server still recovers the image in full.
#include <gtest/gtest.h>
#include <libnbd.h>

#include <cstdio>

#include "tests/integration/modes.h"
#include "tests/integration/nbdkit_harness.h"

namespace vld::test {
namespace {

void ServeReadOnlyAndCheck(const std::string& file, const std::vector<uint8_t>& want,
                           const TempDir& dir) {
  const std::string before = file_fingerprint(file);
  {
    NbdkitServer ro(dir, {"file=" + file, "latency=none"}, {"-r"});
    NbdHandle h = ro.connect();
    EXPECT_EQ(nbd_is_read_only(h.get()), 1);
    EXPECT_EQ(read_bytes(h.get(), 0, want.size()), want);
    // A writer cannot take the image while it is served read-only: a
    // second server starts (read-only until a writable connection), and
    // serves its writable connection read-only, as nbdkit's file plugin
    // does with a file it cannot open for writing, with the reason in its
    // log; its aru export, which must write, is refused.
    {
      TempDir dir2;
      NbdkitServer w(dir2, {"file=" + file, "latency=none"});
      NbdHandle h2 = w.connect();
      EXPECT_EQ(nbd_is_read_only(h2.get()), 1) << "a writer was let in";
      const std::vector<uint8_t> block(4096, 0x5a);
      EXPECT_EQ(nbd_pwrite(h2.get(), block.data(), block.size(), 0, 0), -1);
      EXPECT_EQ(read_bytes(h2.get(), 0, want.size()), want);
      nbd_handle* aru = nbd_create();
      nbd_set_export_name(aru, "aru");
      EXPECT_EQ(nbd_connect_unix(aru, w.socket().c_str()), -1) << "an ARU on a read-only disk";
      nbd_close(aru);
      nbd_shutdown(h2.get(), 0);
      w.stop();
      for (const char* says : {"is open elsewhere", "this connection is served read-only",
                               "export aru is not served"})
        EXPECT_NE(w.stderr_text().find(says), std::string::npos) << says << w.stderr_text();
      // A lock is not a damaged backing file: no advice to fix one.
      EXPECT_EQ(w.stderr_text().find("fix the backing file"), std::string::npos)
          << w.stderr_text();
    }
    nbd_shutdown(h.get(), 0);
    EXPECT_EQ(ro.stop(), 0) << ro.stderr_text();
  }
  EXPECT_EQ(file_fingerprint(file), before) << "nbdkit -r changed the image";
}

class ReadOnly : public ::testing::TestWithParam<const char*> {};

TEST_P(ReadOnly, CleanAndAfterKill9TheImageIsUntouched) {
  TempDir dir;
  const std::string file = dir.file("disk.img");
  std::vector<uint8_t> data = pattern_bytes(0, 256 << 10, 3);
  {
    NbdkitServer s(dir, with_mode({"file=" + file, "size=8M", "latency=none"}, GetParam()));
    NbdHandle h = s.connect();
    write_bytes(h.get(), 0, data);
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(s.stop(), 0) << s.stderr_text();
  }
  ServeReadOnlyAndCheck(file, data, dir);
  {
    // Unclean: flushed writes, then kill -9.
    NbdkitServer s(dir, with_mode({"file=" + file, "latency=none"}, GetParam()));
    NbdHandle h = s.connect();
    std::vector<uint8_t> more = pattern_bytes(64 << 10, 64 << 10, 4);
    write_bytes(h.get(), 64 << 10, more);
    ASSERT_EQ(nbd_flush(h.get(), 0), 0);
    std::copy(more.begin(), more.end(), data.begin() + (64 << 10));
    if (acks_are_durable(GetParam())) {
      // mode=lld with NVRAM: an acknowledged write needs no flush to survive.
      std::vector<uint8_t> unflushed = pattern_bytes(192 << 10, 32 << 10, 5);
      write_bytes(h.get(), 192 << 10, unflushed);
      std::copy(unflushed.begin(), unflushed.end(), data.begin() + (192 << 10));
    }
    s.kill9();
  }
  ServeReadOnlyAndCheck(file, data, dir);
  ServeReadOnlyAndCheck(file, data, dir);  // recovering in memory twice gives the same
  // A writable server recovers it for real and reads the same.
  NbdkitServer s(dir, with_mode({"file=" + file, "latency=none"}, GetParam()));
  NbdHandle h = s.connect();
  EXPECT_EQ(read_bytes(h.get(), 0, data.size()), data);
  nbd_shutdown(h.get(), 0);
  EXPECT_EQ(s.stop(), 0) << s.stderr_text();
}

// The image is unlocked between the read-only open and the first writable
// one. If another image has been put in its place meanwhile, the writable
// open refuses it before recovering it: an image left by a kill -9 keeps
// every byte (its recovery would have written a checkpoint and a record),
// and the next server recovers it as its own.
TEST_P(ReadOnly, AnImagePutInPlaceOfTheServedOneIsRefusedUntouched) {
  TempDir dir;
  const std::string file = dir.file("disk.img"), other = dir.file("other.img");
  const std::vector<uint8_t> data = pattern_bytes(0, 64 << 10, 6);
  {
    NbdkitServer s(dir, with_mode({"file=" + file, "size=8M", "latency=none"}, GetParam()));
    NbdHandle h = s.connect();
    nbd_shutdown(h.get(), 0);
    ASSERT_EQ(s.stop(), 0) << s.stderr_text();
  }
  {
    NbdkitServer s(dir, with_mode({"file=" + other, "size=8M", "latency=none"}, GetParam()));
    NbdHandle h = s.connect();
    write_bytes(h.get(), 0, data);
    ASSERT_EQ(nbd_flush(h.get(), 0), 0);
    s.kill9();
  }
  NbdkitServer s(dir, {"file=" + file, "latency=none"});  // serves disk.img read-only so far
  ASSERT_EQ(std::rename(other.c_str(), file.c_str()), 0);
  const std::string before = file_fingerprint(file);
  nbd_handle* h = nbd_create();
  EXPECT_EQ(nbd_connect_unix(h, s.socket().c_str()), -1) << "a writer was let in";
  nbd_close(h);
  s.stop();
  EXPECT_NE(s.stderr_text().find("the image changed while it was served read-only"),
            std::string::npos)
      << s.stderr_text();
  EXPECT_EQ(file_fingerprint(file), before) << "the other image was written to";
  NbdkitServer again(dir, {"file=" + file, "latency=none"});
  NbdHandle h2 = again.connect();
  EXPECT_EQ(read_bytes(h2.get(), 0, data.size()), data);
  nbd_shutdown(h2.get(), 0);
  EXPECT_EQ(again.stop(), 0) << again.stderr_text();
}

INSTANTIATE_TEST_SUITE_P(Modes, ReadOnly, ::testing::ValuesIn(kAllModes), ModeName);

}  // namespace
}  // namespace vld::test
