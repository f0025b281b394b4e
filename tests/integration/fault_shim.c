// fault_shim: an LD_PRELOAD library for nbdkit that makes the vld backing
// image fail the way a real file can: a pwrite, a hole punch or an
// fdatasync of the image returns EIO or ENOSPC (backing_fault_test.cc).
// nbdkit's error filter cannot do this: it fails NBD requests, above the
// plugin, so the plugin's handling of its own file's errors goes untested.
//
// Environment (without the first two every call passes straight through):
//   VLD_FAULT_IMAGE  the image's path exactly as the plugin opens it (the
//                    plugin makes it absolute); other files pass through.
//   VLD_FAULT_PLAN   a file holding the plan, one line:
//                      <op> <skip> <errno> <once|sticky> [drop|short]
//                    op is pwrite, punch or sync (fdatasync and fsync);
//                    skip calls of op pass, then the next fails with errno
//                    (EIO or ENOSPC) and writes nothing; with sticky every
//                    later call of op fails too. drop (sync only): the failed
//                    sync also takes back every write and punch since the
//                    last completed sync, as a kernel that drops the dirty
//                    pages it could not write back may. short (pwrite only):
//                    the failing call writes the first half of its buffer
//                    (whole 512-byte sectors) and returns that count, and the
//                    next pwrite fails, as a file system filling up does.
//                    "none" disarms.
//                    The shim rereads the plan when the file changes (the
//                    test replaces it with a rename), and counts afresh.
//   VLD_FAULT_FIRED  optional: a line "<op> <errno>" is appended to it for
//                    every call the shim fails, so that a test can tell an
//                    injected failure from one that never happened.
#define _GNU_SOURCE
#include <linux/falloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../shim/interpose.h"

enum op { OP_NONE, OP_PWRITE, OP_PUNCH, OP_SYNC };
static const char* const op_names[] = {"none", "pwrite", "punch", "sync"};

struct plan {
  enum op op;
  long skip;
  int err;
  bool sticky, drop, short_write;
};

// What a dropped sync takes back: the old bytes of one write or punch.
struct undo {
  off_t offset;
  size_t len;
  unsigned char* old;
};

// mu guards everything below: nbdkit calls the plugin from several threads.
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int image_fds[16];  // the writable fds of the image, n_image_fds of them
static int n_image_fds = 0;
static struct plan plan;
static struct stat plan_seen;  // the plan file's identity when last read
static long calls = 0;         // calls of plan.op since the plan was read
static bool short_pending = false;  // a short write happened: the next pwrite fails
static struct undo* undos = NULL;
static size_t n_undos = 0, cap_undos = 0;

static void die(const char* what) {
  fprintf(stderr, "fault_shim: %s: %s\n", what, strerror(errno));
  abort();  // a test whose faults silently did not happen would lie
}

// REQUIRES: mu held.
static bool is_image_fd(int fd) {
  for (int i = 0; i < n_image_fds; ++i)
    if (image_fds[i] == fd) return true;
  return false;
}

// REQUIRES: mu held. Rereads the plan if its file changed since last time.
static void refresh_plan(void) {
  const char* path = getenv("VLD_FAULT_PLAN");
  struct stat st;
  if (!path || stat(path, &st) != 0) {
    plan.op = OP_NONE;
    return;
  }
  if (st.st_ino == plan_seen.st_ino && st.st_mtim.tv_sec == plan_seen.st_mtim.tv_sec &&
      st.st_mtim.tv_nsec == plan_seen.st_mtim.tv_nsec && st.st_size == plan_seen.st_size)
    return;
  plan_seen = st;
  calls = 0;
  short_pending = false;
  memset(&plan, 0, sizeof plan);
  FILE* f = fopen(path, "re");
  if (!f) die(path);
  char op[16] = "", err[16] = "", mode[16] = "", extra[16] = "";
  int n = fscanf(f, "%15s %ld %15s %15s %15s", op, &plan.skip, err, mode, extra);
  fclose(f);
  if (strcmp(op, "none") == 0) return;
  for (int i = OP_PWRITE; i <= OP_SYNC; ++i)
    if (strcmp(op, op_names[i]) == 0) plan.op = (enum op)i;
  plan.err = strcmp(err, "ENOSPC") == 0 ? ENOSPC : strcmp(err, "EIO") == 0 ? EIO : 0;
  plan.sticky = strcmp(mode, "sticky") == 0;
  plan.drop = strcmp(extra, "drop") == 0;
  plan.short_write = strcmp(extra, "short") == 0;
  if (n < 4 || plan.op == OP_NONE || plan.err == 0 || (!plan.sticky && strcmp(mode, "once")) ||
      (n == 5 && !(plan.drop && plan.op == OP_SYNC) && !(plan.short_write && plan.op == OP_PWRITE))) {
    errno = EINVAL;
    die("bad plan: want <pwrite|punch|sync> <skip> <EIO|ENOSPC> <once|sticky> [drop|short]");
  }
}

// What the plan makes of one call: it passes, fails, or (the first failing
// pwrite of a "short" plan) writes part of its buffer before the next fails.
enum verdict { PASS, FAIL, FAIL_SHORT };

// REQUIRES: mu held. The verdict on this call of op; a failure is noted in
// VLD_FAULT_FIRED (the rest of a short write is the same failure).
static enum verdict verdict_for(enum op op) {
  refresh_plan();
  if (plan.op != op) return PASS;
  const long n = calls++;
  if (short_pending) {
    short_pending = false;  // the rest of a short write: it fails
    return FAIL;
  }
  if (n < plan.skip || (n > plan.skip && !plan.sticky)) return PASS;
  const char* fired = getenv("VLD_FAULT_FIRED");
  if (fired) {
    FILE* f = fopen(fired, "ae");
    if (!f) die(fired);
    fprintf(f, "%s %s\n", op_names[op], plan.err == ENOSPC ? "ENOSPC" : "EIO");
    fclose(f);
  }
  return n == plan.skip && plan.short_write ? FAIL_SHORT : FAIL;
}

// REQUIRES: mu held. Saves the old bytes of [offset, offset+len).
static void remember(int fd, off_t offset, size_t len) {
  if (n_undos == cap_undos) {
    cap_undos = cap_undos ? 2 * cap_undos : 64;
    undos = realloc(undos, cap_undos * sizeof *undos);
    if (!undos) die("realloc");
  }
  unsigned char* old = read_current(fd, offset, len);
  if (!old) die("read the image's old bytes");
  undos[n_undos++] = (struct undo){offset, len, old};
}

// REQUIRES: mu held. rollback: put the old bytes back, newest first.
static void forget_undos(int fd, bool rollback) {
  for (size_t i = n_undos; i-- > 0;) {
    if (rollback && real_pwrite(fd, undos[i].old, undos[i].len, undos[i].offset) !=
                        (ssize_t)undos[i].len)
      die("pwrite image (drop)");
    free(undos[i].old);
  }
  n_undos = 0;
}

static void shim_opened(const char* path, int flags, int fd) {
  const char* img = getenv("VLD_FAULT_IMAGE");
  if (!img || strcmp(path, img) != 0 || (flags & O_ACCMODE) == O_RDONLY) return;
  pthread_mutex_lock(&mu);
  if (n_image_fds == (int)(sizeof image_fds / sizeof image_fds[0])) die("too many image fds");
  image_fds[n_image_fds++] = fd;
  pthread_mutex_unlock(&mu);
}

static void shim_closing(int fd) {
  pthread_mutex_lock(&mu);
  for (int i = 0; i < n_image_fds; ++i)
    if (image_fds[i] == fd) image_fds[i] = image_fds[--n_image_fds];
  pthread_mutex_unlock(&mu);
}

static ssize_t shim_pwrite(real_pwrite_fn fn, int fd, const void* buf, size_t n, off_t off) {
  pthread_mutex_lock(&mu);
  ssize_t r;
  if (!is_image_fd(fd)) {
    pthread_mutex_unlock(&mu);
    return fn(fd, buf, n, off);
  }
  const enum verdict v = verdict_for(OP_PWRITE);
  const size_t part = (n / 2) & ~(size_t)511;  // whole sectors
  if (v == FAIL_SHORT && part > 0) {
    remember(fd, off, part);  // writes what fits, then the next call fails
    r = fn(fd, buf, part, off);
    short_pending = r > 0;
  } else if (v != PASS) {
    errno = plan.err;
    r = -1;
  } else {
    remember(fd, off, n);
    r = fn(fd, buf, n, off);
  }
  int saved = errno;
  pthread_mutex_unlock(&mu);
  errno = saved;
  return r;
}

static int shim_fallocate(real_fallocate_fn fn, int fd, int mode, off_t off, off_t len) {
  pthread_mutex_lock(&mu);
  int r;
  if (!is_image_fd(fd) || !(mode & FALLOC_FL_PUNCH_HOLE)) {
    pthread_mutex_unlock(&mu);
    return fn(fd, mode, off, len);
  }
  if (verdict_for(OP_PUNCH) != PASS) {
    errno = plan.err;
    r = -1;
  } else {
    remember(fd, off, (size_t)len);
    r = fn(fd, mode, off, len);
  }
  int saved = errno;
  pthread_mutex_unlock(&mu);
  errno = saved;
  return r;
}

static int shim_sync(real_sync_fn fn, int fd) {
  pthread_mutex_lock(&mu);
  if (!is_image_fd(fd)) {
    pthread_mutex_unlock(&mu);
    return fn(fd);
  }
  int r;
  if (verdict_for(OP_SYNC) != PASS) {
    forget_undos(fd, /*rollback=*/plan.drop);
    errno = plan.err;
    r = -1;
  } else {
    r = fn(fd);
    if (r == 0) forget_undos(fd, /*rollback=*/false);
  }
  int saved = errno;
  pthread_mutex_unlock(&mu);
  errno = saved;
  return r;
}
