// powercut_shim: an LD_PRELOAD library for nbdkit that records, for the vld
// backing image only, every write and hole punch since the last completed
// fdatasync, so that a test can turn the image left by SIGKILL into the
// image a power cut could have left (crash_powercut_test.py).
//
// The crash model is the one of docs/crash-contract.md and
// core/store/crash_store.h: what completed before the last completed fdatasync
// survives; of what came after, any subset of 4 KiB (or 512-byte) units.
// SIGKILL alone leaves every completed pwrite in the image (the page cache
// survives a process); this log lets the test take writes back out.
//
// Environment: VLD_PC_IMAGE (the image path exactly as nbdkit opens it: the
// plugin makes it absolute), VLD_PC_LOG (the log file), VLD_PC_ARM
// (optional: the crash trigger's file, see maybe_crash). Without the first
// two, or for any other file, every call passes straight through.
//
// Log: records appended with one writev each, little-endian:
//   "VPCW" u32 kind (1 write, 2 punch) u64 offset u64 len, old[len],
//   then for kind 1 new[len].
// Each is appended before the image is changed, and the log is truncated to
// empty once an fdatasync (or fsync) of the image has returned 0, before the
// caller learns of it. A record cut short by the SIGKILL is incomplete
// (the reader drops it): its write had not been issued yet.
#define _GNU_SOURCE
#include <linux/falloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "../shim/interpose.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int img_fd = -1;
static int log_fd = -1;
static long pending = 0;  // records in the log (since the last completed sync)

static void die(const char* what) {
  fprintf(stderr, "powercut_shim: %s: %s\n", what, strerror(errno));
  abort();  // a silent gap in the log would make the test lie
}

static void shim_opened(const char* path, int flags, int fd) {
  (void)flags;
  const char* img = getenv("VLD_PC_IMAGE");
  const char* lp = getenv("VLD_PC_LOG");
  if (!img || !lp || strcmp(path, img) != 0) return;
  pthread_mutex_lock(&mu);
  img_fd = fd;
  if (log_fd < 0) {
    log_fd = real_open(lp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) die(lp);
  }
  pthread_mutex_unlock(&mu);
}

static void shim_closing(int fd) {
  pthread_mutex_lock(&mu);
  if (fd == img_fd) img_fd = -1;
  pthread_mutex_unlock(&mu);
}

static void write_all_v(struct iovec* iov, int n) {
  while (n > 0) {
    ssize_t r = writev(log_fd, iov, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      die("writev log");
    }
    while (n > 0 && (size_t)r >= iov->iov_len) {
      r -= (ssize_t)iov->iov_len;
      ++iov;
      --n;
    }
    if (n > 0) {
      iov->iov_base = (char*)iov->iov_base + r;
      iov->iov_len -= (size_t)r;
    }
  }
}

// Appends a record; the caller holds mu. newdata NULL: a punch.
static void record(uint32_t kind, off_t off, size_t len, const void* newdata) {
  unsigned char hdr[24];
  uint64_t o = (uint64_t)off, l = (uint64_t)len;
  memcpy(hdr, "VPCW", 4);
  memcpy(hdr + 4, &kind, 4);
  memcpy(hdr + 8, &o, 8);
  memcpy(hdr + 16, &l, 8);
  unsigned char* old = read_current(img_fd, off, len);
  if (!old) die("read the image's old bytes");
  struct iovec iov[3] = {{hdr, sizeof hdr}, {old, len}, {(void*)newdata, newdata ? len : 0}};
  write_all_v(iov, newdata ? 3 : 2);
  free(old);
  ++pending;
}

// The crash trigger: if the file VLD_PC_ARM exists and holds N, the next
// sync of the image that finds at least N writes pending since the last
// one kills the process (SIGKILL) before it syncs: the power fails with
// completed, acknowledged, not yet flushed writes in the drive's cache.
static void maybe_crash(void) {
  const char* arm = getenv("VLD_PC_ARM");
  if (!arm) return;
  FILE* f = fopen(arm, "re");
  if (!f) return;
  long n = -1;
  if (fscanf(f, "%ld", &n) != 1) n = -1;
  fclose(f);
  if (n >= 0 && pending >= n) kill(getpid(), SIGKILL);
}

static ssize_t shim_pwrite(real_pwrite_fn fn, int fd, const void* buf, size_t n, off_t off) {
  if (fd < 0 || fd != img_fd) return fn(fd, buf, n, off);
  pthread_mutex_lock(&mu);
  record(1, off, n, buf);
  ssize_t r = fn(fd, buf, n, off);
  int saved = errno;
  pthread_mutex_unlock(&mu);
  errno = saved;
  return r;
}

static int shim_fallocate(real_fallocate_fn fn, int fd, int mode, off_t off, off_t len) {
  if (fd < 0 || fd != img_fd || !(mode & FALLOC_FL_PUNCH_HOLE)) return fn(fd, mode, off, len);
  pthread_mutex_lock(&mu);
  record(2, off, (size_t)len, NULL);
  int r = fn(fd, mode, off, len);
  int saved = errno;
  pthread_mutex_unlock(&mu);
  errno = saved;
  return r;
}

static int shim_sync(real_sync_fn fn, int fd) {
  if (fd < 0 || fd != img_fd) return fn(fd);
  pthread_mutex_lock(&mu);
  maybe_crash();
  int r = fn(fd);
  int saved = errno;
  if (r == 0) {
    if (ftruncate(log_fd, 0) != 0) die("ftruncate log");
    pending = 0;
  }
  pthread_mutex_unlock(&mu);
  errno = saved;
  return r;
}
