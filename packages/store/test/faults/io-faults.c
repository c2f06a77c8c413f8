/*
 * io-faults: an LD_PRELOAD shim that fails the k-th file operation on the files a test names,
 * below SQLite (better-sqlite3 links libc dynamically, so its reads, writes, syncs and
 * truncates come through here). Used by packages/store/test/store-sqlite-faults.test.ts.
 *
 * Environment:
 *   KURA_FAULT_MATCH  substring of the paths to count and fail (e.g. "/kura.db": the database,
 *                     its WAL, shared-memory and journal files); other files pass untouched
 *   KURA_FAULT_AT     1-based index of the operation to fail among the matching ones; 0: none
 *   KURA_FAULT_KIND   what the fault is (write-like operations; others always get EIO):
 *                       eio    EIO once
 *                       enospc ENOSPC once
 *                       short  half the bytes written and reported, then ENOSPC on the next
 *                              write to that file (a partial write, as a full disk gives)
 *                       full   ENOSPC from then on: every later write fails (disk full)
 *
 * It prints to stderr "kura-fault: injected <errno> in <op> on <path> (op k)" when it fails an
 * operation, and "kura-fault: ops <n>" when the process exits, so a test can count a clean
 * run's operations and enumerate k over them. Thread-safe: SQLite runs on the main thread and
 * on the checkpointer's worker thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static const char *match;
static long fault_at;
static char kind[16] = "eio";
static long ops;
static volatile int disk_full;
static volatile int short_fd = -1;

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_unlink)(const char *);

#define RESOLVE(name) \
  if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name)

__attribute__((constructor)) static void init(void) {
  match = getenv("KURA_FAULT_MATCH");
  const char *at = getenv("KURA_FAULT_AT");
  fault_at = at ? atol(at) : 0;
  const char *k = getenv("KURA_FAULT_KIND");
  if (k) snprintf(kind, sizeof kind, "%s", k);
  RESOLVE(write);
}

static void say(const char *line) {
  RESOLVE(write);
  real_write(2, line, strlen(line));
}

__attribute__((destructor)) static void report(void) {
  long n = __atomic_load_n(&ops, __ATOMIC_SEQ_CST);
  if (!match || n == 0) return; /* processes that touched no matching file say nothing */
  char line[64];
  snprintf(line, sizeof line, "kura-fault: ops %ld\n", n);
  say(line);
}

static int path_of_fd(int fd, char *buf, size_t size) {
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, buf, size - 1);
  if (n < 0) return 0;
  buf[n] = 0;
  return 1;
}

/*
 * Counts an operation on `path` if it matches; returns the errno to fail it with, or 0.
 * `writes` marks operations that add bytes, which the disk-full and short-write kinds affect.
 */
static int tick(const char *op, const char *path, int writes) {
  if (!match || !path || !strstr(path, match)) return 0;
  long n = __atomic_add_fetch(&ops, 1, __ATOMIC_SEQ_CST);
  if (writes && disk_full) return ENOSPC;
  if (n != fault_at) return 0;
  int err = EIO;
  if (writes && strcmp(kind, "eio") != 0) err = ENOSPC;
  if (writes && strcmp(kind, "full") == 0) disk_full = 1;
  char line[PATH_MAX + 128];
  snprintf(line, sizeof line, "kura-fault: injected %s in %s on %s (op %ld, %s)\n", err == EIO ? "EIO" : "ENOSPC", op, path, n,
           writes ? kind : "eio");
  say(line);
  return err;
}

static int tick_fd(const char *op, int fd, int writes) {
  if (!match || fd <= 2) return 0;
  char path[PATH_MAX];
  if (!path_of_fd(fd, path, sizeof path)) return 0;
  return tick(op, path, writes);
}

/*
 * Decides a write-like call: returns the errno to fail it with, or 0 and the bytes it may
 * write in *count. A "short" fault writes half and reports it (SQLite, like most callers, then
 * writes the rest), and that next write fails with ENOSPC.
 */
static int write_fault(const char *op, int fd, size_t *count) {
  if (short_fd == fd) {
    short_fd = -1;
    return ENOSPC;
  }
  int err = tick_fd(op, fd, 1);
  if (err && strcmp(kind, "short") == 0 && !disk_full && *count > 1) {
    short_fd = fd;
    *count /= 2;
    return 0;
  }
  return err;
}

/* Any other operation: EIO when it is the k-th. */
static int fail_fd(const char *op, int fd) {
  int err = tick_fd(op, fd, 0);
  if (err) errno = err;
  return err;
}

ssize_t write(int fd, const void *buf, size_t count) {
  RESOLVE(write);
  int err = write_fault("write", fd, &count);
  if (err) return errno = err, -1;
  return real_write(fd, buf, count);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  RESOLVE(pwrite);
  int err = write_fault("pwrite", fd, &count);
  if (err) return errno = err, -1;
  return real_pwrite(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
  RESOLVE(pwrite64);
  int err = write_fault("pwrite64", fd, &count);
  if (err) return errno = err, -1;
  return real_pwrite64(fd, buf, count, offset);
}

ssize_t read(int fd, void *buf, size_t count) {
  RESOLVE(read);
  return fail_fd("read", fd) ? -1 : real_read(fd, buf, count);
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset) {
  RESOLVE(pread);
  return fail_fd("pread", fd) ? -1 : real_pread(fd, buf, count, offset);
}

ssize_t pread64(int fd, void *buf, size_t count, off_t offset) {
  RESOLVE(pread64);
  return fail_fd("pread64", fd) ? -1 : real_pread64(fd, buf, count, offset);
}

int fsync(int fd) {
  RESOLVE(fsync);
  return fail_fd("fsync", fd) ? -1 : real_fsync(fd);
}

int fdatasync(int fd) {
  RESOLVE(fdatasync);
  return fail_fd("fdatasync", fd) ? -1 : real_fdatasync(fd);
}

int ftruncate(int fd, off_t length) {
  RESOLVE(ftruncate);
  return fail_fd("ftruncate", fd) ? -1 : real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) {
  RESOLVE(ftruncate64);
  return fail_fd("ftruncate64", fd) ? -1 : real_ftruncate64(fd, length);
}

int unlink(const char *path) {
  RESOLVE(unlink);
  int err = tick("unlink", path, 0);
  if (err) {
    errno = err;
    return -1;
  }
  return real_unlink(path);
}
