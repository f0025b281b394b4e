// FileBackingStore's flock (core/store/backing_store.h): a server's exclusive lock
// keeps out a second server and any reader; read-only opens (vld-inspect)
// share theirs with each other but keep a server out; a read-only open
// cannot write.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/store/backing_store.h"
#include "core/util/error.h"

namespace vld {
namespace {

class BackingStoreLock : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    path_ = std::string(base && *base ? base : "/tmp") + "/vld-lock-test-" +
            std::to_string(::getpid()) + ".img";
    ::unlink(path_.c_str());
    FileBackingStore::create(path_, 1 << 20);  // closed again: unlocked
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  int open_errno(bool readonly) {
    try {
      FileBackingStore::open(path_, readonly);
      return 0;
    } catch (const Error& e) {
      return e.err();
    }
  }
  std::string path_;
};

TEST_F(BackingStoreLock, AServerKeepsOutServersAndReaders) {
  auto server = FileBackingStore::open(path_, /*readonly=*/false);
  EXPECT_EQ(open_errno(false), EBUSY);
  EXPECT_EQ(open_errno(true), EBUSY);
  server.reset();
  EXPECT_EQ(open_errno(true), 0);
}

TEST_F(BackingStoreLock, ReadersShareAndKeepOutAServer) {
  auto a = FileBackingStore::open(path_, /*readonly=*/true);
  auto b = FileBackingStore::open(path_, /*readonly=*/true);
  EXPECT_EQ(open_errno(false), EBUSY);
  a.reset();
  b.reset();
  EXPECT_EQ(open_errno(false), 0);
}

// flock drops the old lock before it tries the new one, so a conversion
// refused with LOCK_NB leaves no lock at all: make_exclusive must take its
// shared lock back, or a second server could write under a first that
// still serves the image read-only.
TEST_F(BackingStoreLock, AConversionRefusedKeepsTheSharedLock) {
  ImageLock first(path_);
  ImageLock second(path_);
  try {
    first.make_exclusive();
    FAIL() << "a conversion beside another reader must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EBUSY);
  }
  EXPECT_FALSE(first.exclusive());
  try {
    second.make_exclusive();
    FAIL() << "the first lock must still be held, shared";
  } catch (const Error& e) {
    EXPECT_EQ(e.err(), EBUSY);
  }
  EXPECT_EQ(open_errno(true), 0) << "readers still share it";
}

TEST_F(BackingStoreLock, AReadOnlyOpenCannotWrite) {
  auto r = FileBackingStore::open(path_, /*readonly=*/true);
  std::vector<std::byte> zeros(512);
  EXPECT_THROW(r->write(0, zeros), Error);
  std::vector<std::byte> out(512);
  r->read(0, out);
}

}  // namespace
}  // namespace vld
