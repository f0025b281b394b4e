// interpose.h: the LD_PRELOAD plumbing the test shims share
// (tests/fs/powercut_shim.c, tests/integration/fault_shim.c): it exports
// open, open64, close, pwrite, pwrite64, pwritev, pwritev64, fallocate,
// fallocate64, fdatasync and fsync, finds the real ones with
// dlsym(RTLD_NEXT), and hands each call to the including shim's hooks,
// which decide what to do with the image:
//
//   static void shim_opened(const char* path, int flags, int fd);  // fd >= 0
//   static void shim_closing(int fd);
//   static ssize_t shim_pwrite(real_pwrite_fn real, int fd, const void* buf,
//                              size_t n, off_t off);
//   static int shim_fallocate(real_fallocate_fn real, int fd, int mode,
//                             off_t off, off_t len);
//   static int shim_sync(real_sync_fn real, int fd);  // fdatasync and fsync
//
// A pwritev is handed to shim_pwrite as the pwrites of its iovecs, one
// after the other (with real pwrite): a shim sees, counts and may fail each
// piece as if the caller had made those pwrites. A piece that fails fails
// the pwritev (-1 and its errno) with the pieces before it written, as a
// write that fails part way may leave it; a short piece ends it short (the
// bytes written so far), and the caller's retry of the rest meets the
// shim's next verdict.
//
// A hook that does not care calls real(...). Include it once, in a C file
// compiled with -shared -fPIC and linked with -ldl -lpthread.
#ifndef VLD_TESTS_SHIM_INTERPOSE_H_
#define VLD_TESTS_SHIM_INTERPOSE_H_

#ifndef _GNU_SOURCE
#error "define _GNU_SOURCE before any include"
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

typedef ssize_t (*real_pwrite_fn)(int, const void*, size_t, off_t);
typedef int (*real_fallocate_fn)(int, int, off_t, off_t);
typedef int (*real_sync_fn)(int);
typedef int (*real_open_fn)(const char*, int, ...);

static void shim_opened(const char* path, int flags, int fd);
static void shim_closing(int fd);
static ssize_t shim_pwrite(real_pwrite_fn real, int fd, const void* buf, size_t n, off_t off);
static int shim_fallocate(real_fallocate_fn real, int fd, int mode, off_t off, off_t len);
static int shim_sync(real_sync_fn real, int fd);

static real_open_fn real_open, real_open64;
static int (*real_close)(int);
static real_pwrite_fn real_pwrite, real_pwrite64;
static real_fallocate_fn real_fallocate, real_fallocate64;
static real_sync_fn real_fdatasync, real_fsync;

static void resolve(void) {
  if (real_open) return;
  real_open64 = (real_open_fn)dlsym(RTLD_NEXT, "open64");
  real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
  real_pwrite = (real_pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
  real_pwrite64 = (real_pwrite_fn)dlsym(RTLD_NEXT, "pwrite64");
  real_fallocate = (real_fallocate_fn)dlsym(RTLD_NEXT, "fallocate");
  real_fallocate64 = (real_fallocate_fn)dlsym(RTLD_NEXT, "fallocate64");
  real_fdatasync = (real_sync_fn)dlsym(RTLD_NEXT, "fdatasync");
  real_fsync = (real_sync_fn)dlsym(RTLD_NEXT, "fsync");
  real_open = (real_open_fn)dlsym(RTLD_NEXT, "open");  // last: resolve() tests it
}

__attribute__((constructor)) static void interpose_init(void) { resolve(); }

// What the file holds at [off, off+len) before a shim changes it, in a
// buffer to free(); past the end of the file, zeros. NULL (errno) on error.
static unsigned char* read_current(int fd, off_t off, size_t len) {
  unsigned char* out = (unsigned char*)calloc(1, len ? len : 1);
  if (!out) return NULL;
  size_t done = 0;
  while (done < len) {
    ssize_t r = pread(fd, out + done, len - done, off + (off_t)done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int saved = errno;
      free(out);
      errno = saved;
      return NULL;
    }
    if (r == 0) break;  // the end of the file: the rest stays zero
    done += (size_t)r;
  }
  return out;
}

static int interpose_open(real_open_fn fn, const char* path, int flags, va_list ap) {
  mode_t mode = 0;
  if (flags & (O_CREAT | __O_TMPFILE)) mode = (mode_t)va_arg(ap, int);
  int fd = fn(path, flags, mode);
  int saved = errno;
  if (fd >= 0) shim_opened(path, flags, fd);
  errno = saved;
  return fd;
}

int open(const char* path, int flags, ...) {
  resolve();
  va_list ap;
  va_start(ap, flags);
  int fd = interpose_open(real_open, path, flags, ap);
  va_end(ap);
  return fd;
}

int open64(const char* path, int flags, ...) {
  resolve();
  va_list ap;
  va_start(ap, flags);
  int fd = interpose_open(real_open64, path, flags, ap);
  va_end(ap);
  return fd;
}

int close(int fd) {
  resolve();
  if (fd >= 0) shim_closing(fd);
  return real_close(fd);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  resolve();
  return shim_pwrite(real_pwrite, fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  resolve();
  return shim_pwrite(real_pwrite64, fd, buf, n, off);
}

static ssize_t interpose_pwritev(real_pwrite_fn fn, int fd, const struct iovec* iov, int n,
                                 off_t off) {
  ssize_t done = 0;
  for (int i = 0; i < n; ++i) {
    const ssize_t r = shim_pwrite(fn, fd, iov[i].iov_base, iov[i].iov_len, off + done);
    if (r < 0) return -1;  // errno: the shim's (or the real call's)
    done += r;
    if ((size_t)r < iov[i].iov_len) break;
  }
  return done;
}

ssize_t pwritev(int fd, const struct iovec* iov, int n, off_t off) {
  resolve();
  return interpose_pwritev(real_pwrite, fd, iov, n, off);
}

ssize_t pwritev64(int fd, const struct iovec* iov, int n, off_t off) {
  resolve();
  return interpose_pwritev(real_pwrite64, fd, iov, n, off);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  resolve();
  return shim_fallocate(real_fallocate, fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len) {
  resolve();
  return shim_fallocate(real_fallocate64, fd, mode, off, len);
}

int fdatasync(int fd) {
  resolve();
  return shim_sync(real_fdatasync, fd);
}

int fsync(int fd) {
  resolve();
  return shim_sync(real_fsync, fd);
}

#endif  // VLD_TESTS_SHIM_INTERPOSE_H_
