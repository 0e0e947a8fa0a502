/*
 * fsync_delay.c — LD_PRELOAD library for bench/run: adds a fixed delay to every durable-write
 * call of the process it is loaded into, and counts those calls.
 *
 * What is delayed and counted (each kind separately):
 *   - fsync(), fdatasync(), syncfs();
 *   - sync_file_range() when its flags contain SYNC_FILE_RANGE_WAIT_AFTER (without it the
 *     call only starts writeback: counted apart, not delayed);
 *   - write(), pwrite(), pwrite64(), writev(), pwritev(), pwritev64(), pwritev2() on a
 *     descriptor whose file status flags contain O_DSYNC (O_SYNC implies O_DSYNC): one count
 *     and one delay per call that wrote at least one byte.
 * The delay is FSYNC_DELAY_US microseconds (environment, read once at load; 0 or unset: no
 * delay, counting only), slept AFTER the real call returned, on the calling thread, holding
 * no lock of ours: concurrent syncs overlap as concurrent slow syncs on a real device would.
 *
 * Descriptor bookkeeping: a byte per descriptor (fds below FD_TRACK_MAX; higher ones are never
 * treated as O_DSYNC) set from the flags given to open/open64/openat/openat64/creat (and the
 * glibc fortify variants __open_2 & co.), refreshed from the kernel (F_GETFL) after
 * fcntl(F_SETFL), copied by dup/dup2/dup3/fcntl(F_DUPFD[_CLOEXEC]) and cleared by close.
 * Linux ignores O_DSYNC/O_SYNC in F_SETFL, so asking the kernel keeps the table exact.
 *
 * Publication: when FSYNC_COUNT_FILE names a file, the counters live in a MAP_SHARED mapping of
 * that file (created and sized on load; existing counts are kept, so several processes — or a
 * restarted server — add into one file). Each counter is a naturally aligned uint64_t updated
 * with an atomic add, so a reader sees every count as soon as the call returns, from any
 * process, without signals or rewrites; a crash of the process loses nothing already counted.
 * Without FSYNC_COUNT_FILE the counters are process-local (still delaying).
 *
 * Record layout (little-endian, 128 bytes = 16 uint64, see struct counters): magic "FSYNCDLY",
 * version 1, delay_us, then the counters named there, in that order. bench/lib/bench.py reads
 * it (COUNTER_FIELDS there must list the same names in the same order).
 *
 * Real functions are looked up with dlsym(RTLD_NEXT, ...), lazily and idempotently (a race
 * stores the same pointer twice), so calls made before our constructor ran still work.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define FD_TRACK_MAX (1 << 20)
#define MAGIC 0x594c44434e595346ULL /* "FSYNCDLY" little-endian */

struct counters {
	uint64_t magic;
	uint64_t version;
	uint64_t delay_us;
	uint64_t fsync;             /* fsync() */
	uint64_t fdatasync;         /* fdatasync() */
	uint64_t syncfs;            /* syncfs() */
	uint64_t sfr_wait;          /* sync_file_range() with WAIT_AFTER (delayed) */
	uint64_t sfr_nowait;        /* sync_file_range() without WAIT_AFTER (not delayed) */
	uint64_t dsync_writes;      /* writes on O_DSYNC/O_SYNC descriptors (delayed) */
	uint64_t dsync_bytes;       /* bytes of those writes */
	uint64_t sync_ns;           /* wall time inside the real sync calls (not the delay) */
	uint64_t delayed_calls;     /* calls that slept the delay */
	uint64_t slept_ns;          /* wall time actually slept (the effective injected delay) */
	uint64_t reserved[3];
};

static struct counters local_counters;
static struct counters *C = &local_counters;
static unsigned char dsync_fd[FD_TRACK_MAX];
static uint64_t delay_us;

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);
typedef int (*creat_fn)(const char *, mode_t);
typedef int (*fd_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*fcntl_fn)(int, int, ...);
typedef int (*sfr_fn)(int, off64_t, off64_t, unsigned int);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwrite64_fn)(int, const void *, size_t, off64_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*pwritev64_fn)(int, const struct iovec *, int, off64_t);
typedef ssize_t (*pwritev2_fn)(int, const struct iovec *, int, off_t, int);

static void *real(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	}
	return p;
}
#define REAL(type, name)                                                                   \
	static void *slot_##name;                                                          \
	type real_##name = (type)real(&slot_##name, #name)

static void add(uint64_t *c, uint64_t v) { __atomic_fetch_add(c, v, __ATOMIC_RELAXED); }

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void delay(void)
{
	if (!delay_us)
		return;
	add(&C->delayed_calls, 1);
	/* Absolute deadline: an interrupted sleep resumes without drifting. */
	uint64_t t0 = now_ns();
	uint64_t end = t0 + delay_us * 1000ULL;
	struct timespec ts = {(time_t)(end / 1000000000ULL), (long)(end % 1000000000ULL)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
	}
	add(&C->slept_ns, now_ns() - t0);
}

__attribute__((constructor)) static void fsync_delay_init(void)
{
	int saved = errno;
	const char *d = getenv("FSYNC_DELAY_US");
	if (d && *d)
		delay_us = strtoull(d, NULL, 10);
	local_counters.magic = MAGIC;
	local_counters.version = 1;
	local_counters.delay_us = delay_us;
	const char *path = getenv("FSYNC_COUNT_FILE");
	if (path && *path) {
		/* Raw syscalls: our own open/close wrappers must not see the counter file. */
		int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			struct stat st;
			if (fstat(fd, &st) == 0 && st.st_size < (off_t)sizeof(struct counters))
				(void)ftruncate(fd, sizeof(struct counters));
			void *m = mmap(NULL, sizeof(struct counters), PROT_READ | PROT_WRITE, MAP_SHARED,
				       fd, 0);
			syscall(SYS_close, fd);
			if (m != MAP_FAILED) {
				struct counters *mc = m;
				uint64_t expect = 0;
				/* First process to map a fresh file writes the header. */
				if (__atomic_compare_exchange_n(&mc->magic, &expect, MAGIC, 0, __ATOMIC_ACQ_REL,
								__ATOMIC_ACQUIRE)) {
					mc->version = 1;
				}
				__atomic_store_n(&mc->delay_us, delay_us, __ATOMIC_RELAXED);
				C = mc;
			}
		}
	}
	errno = saved;
}

/* ---- descriptor table ---- */

static void track_open(int fd, int flags)
{
	if (fd >= 0 && fd < FD_TRACK_MAX)
		__atomic_store_n(&dsync_fd[fd], (flags & O_DSYNC) ? 1 : 0, __ATOMIC_RELAXED);
}

static void track_copy(int from, int to)
{
	if (to < 0 || to >= FD_TRACK_MAX)
		return;
	unsigned char v = (from >= 0 && from < FD_TRACK_MAX) ? __atomic_load_n(&dsync_fd[from], __ATOMIC_RELAXED) : 0;
	__atomic_store_n(&dsync_fd[to], v, __ATOMIC_RELAXED);
}

static int is_dsync(int fd)
{
	return fd >= 0 && fd < FD_TRACK_MAX && __atomic_load_n(&dsync_fd[fd], __ATOMIC_RELAXED);
}

static mode_t va_mode(int flags, va_list ap)
{
	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
		return (mode_t)va_arg(ap, int);
	return 0;
}

int open(const char *path, int flags, ...)
{
	REAL(open_fn, open);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = va_mode(flags, ap);
	va_end(ap);
	int fd = real_open(path, flags, mode);
	track_open(fd, flags);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	REAL(open_fn, open64);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = va_mode(flags, ap);
	va_end(ap);
	int fd = real_open64(path, flags, mode);
	track_open(fd, flags);
	return fd;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat_fn, openat);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = va_mode(flags, ap);
	va_end(ap);
	int fd = real_openat(dirfd, path, flags, mode);
	track_open(fd, flags);
	return fd;
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	REAL(openat_fn, openat64);
	va_list ap;
	va_start(ap, flags);
	mode_t mode = va_mode(flags, ap);
	va_end(ap);
	int fd = real_openat64(dirfd, path, flags, mode);
	track_open(fd, flags);
	return fd;
}

int __open_2(const char *path, int flags)
{
	REAL(open2_fn, __open_2);
	int fd = real___open_2(path, flags);
	track_open(fd, flags);
	return fd;
}

int __open64_2(const char *path, int flags)
{
	REAL(open2_fn, __open64_2);
	int fd = real___open64_2(path, flags);
	track_open(fd, flags);
	return fd;
}

int __openat_2(int dirfd, const char *path, int flags)
{
	REAL(openat2_fn, __openat_2);
	int fd = real___openat_2(dirfd, path, flags);
	track_open(fd, flags);
	return fd;
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	REAL(openat2_fn, __openat64_2);
	int fd = real___openat64_2(dirfd, path, flags);
	track_open(fd, flags);
	return fd;
}

int creat(const char *path, mode_t mode)
{
	REAL(creat_fn, creat);
	int fd = real_creat(path, mode);
	track_open(fd, 0);
	return fd;
}

int creat64(const char *path, mode_t mode)
{
	REAL(creat_fn, creat64);
	int fd = real_creat64(path, mode);
	track_open(fd, 0);
	return fd;
}

int close(int fd)
{
	REAL(fd_fn, close);
	track_open(fd, 0);
	return real_close(fd);
}

int dup(int fd)
{
	REAL(fd_fn, dup);
	int r = real_dup(fd);
	if (r >= 0)
		track_copy(fd, r);
	return r;
}

int dup2(int fd, int to)
{
	REAL(dup2_fn, dup2);
	int r = real_dup2(fd, to);
	if (r >= 0)
		track_copy(fd, r);
	return r;
}

int dup3(int fd, int to, int flags)
{
	REAL(dup3_fn, dup3);
	int r = real_dup3(fd, to, flags);
	if (r >= 0)
		track_copy(fd, r);
	return r;
}

static int fcntl_common(fcntl_fn f, int fd, int cmd, va_list ap)
{
	/* Every fcntl command takes at most one argument, an int or a pointer. */
	void *arg = va_arg(ap, void *);
	int r = f(fd, cmd, arg);
	if (r >= 0) {
		if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
			track_copy(fd, r);
		} else if (cmd == F_SETFL) {
			int fl = f(fd, F_GETFL, 0);
			if (fl >= 0)
				track_open(fd, fl);
		}
	}
	return r;
}

int fcntl(int fd, int cmd, ...)
{
	REAL(fcntl_fn, fcntl);
	va_list ap;
	va_start(ap, cmd);
	int r = fcntl_common(real_fcntl, fd, cmd, ap);
	va_end(ap);
	return r;
}

int fcntl64(int fd, int cmd, ...)
{
	REAL(fcntl_fn, fcntl64);
	fcntl_fn f = real_fcntl64;
	if (!f) {
		REAL(fcntl_fn, fcntl);
		f = real_fcntl;
	}
	va_list ap;
	va_start(ap, cmd);
	int r = fcntl_common(f, fd, cmd, ap);
	va_end(ap);
	return r;
}

/* ---- syncs ---- */

#define TIMED_SYNC(counter, call)                                                          \
	do {                                                                               \
		uint64_t t0 = now_ns();                                                    \
		int r = (call);                                                            \
		int e = errno;                                                             \
		add(&C->sync_ns, now_ns() - t0);                                           \
		add(&C->counter, 1);                                                       \
		delay();                                                                   \
		errno = e;                                                                 \
		return r;                                                                  \
	} while (0)

int fsync(int fd)
{
	REAL(fd_fn, fsync);
	TIMED_SYNC(fsync, real_fsync(fd));
}

int fdatasync(int fd)
{
	REAL(fd_fn, fdatasync);
	TIMED_SYNC(fdatasync, real_fdatasync(fd));
}

int syncfs(int fd)
{
	REAL(fd_fn, syncfs);
	TIMED_SYNC(syncfs, real_syncfs(fd));
}

int sync_file_range(int fd, off64_t off, off64_t n, unsigned int flags)
{
	REAL(sfr_fn, sync_file_range);
	if (!(flags & SYNC_FILE_RANGE_WAIT_AFTER)) {
		add(&C->sfr_nowait, 1);
		return real_sync_file_range(fd, off, n, flags);
	}
	TIMED_SYNC(sfr_wait, real_sync_file_range(fd, off, n, flags));
}

/* ---- writes on O_DSYNC descriptors ---- */

static ssize_t after_write(int fd, ssize_t r, uint64_t t0)
{
	if (r > 0 && is_dsync(fd)) {
		int e = errno;
		add(&C->sync_ns, now_ns() - t0);
		add(&C->dsync_writes, 1);
		add(&C->dsync_bytes, (uint64_t)r);
		delay();
		errno = e;
	}
	return r;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write_fn, write);
	uint64_t t0 = is_dsync(fd) ? now_ns() : 0;
	return after_write(fd, real_write(fd, buf, n), t0);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(pwrite_fn, pwrite);
	uint64_t t0 = is_dsync(fd) ? now_ns() : 0;
	return after_write(fd, real_pwrite(fd, buf, n, off), t0);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	REAL(pwrite64_fn, pwrite64);
	uint64_t t0 = is_dsync(fd) ? now_ns() : 0;
	return after_write(fd, real_pwrite64(fd, buf, n, off), t0);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(writev_fn, writev);
	uint64_t t0 = is_dsync(fd) ? now_ns() : 0;
	return after_write(fd, real_writev(fd, iov, cnt), t0);
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(pwritev_fn, pwritev);
	uint64_t t0 = is_dsync(fd) ? now_ns() : 0;
	return after_write(fd, real_pwritev(fd, iov, cnt, off), t0);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	REAL(pwritev64_fn, pwritev64);
	uint64_t t0 = is_dsync(fd) ? now_ns() : 0;
	return after_write(fd, real_pwritev64(fd, iov, cnt, off), t0);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	REAL(pwritev2_fn, pwritev2);
	uint64_t t0 = now_ns();
	ssize_t r = real_pwritev2(fd, iov, cnt, off, flags);
	if (r > 0 && !is_dsync(fd) && (flags & (RWF_DSYNC | RWF_SYNC))) {
		/* Per-call O_DSYNC. */
		int e = errno;
		add(&C->sync_ns, now_ns() - t0);
		add(&C->dsync_writes, 1);
		add(&C->dsync_bytes, (uint64_t)r);
		delay();
		errno = e;
		return r;
	}
	return after_write(fd, r, t0);
}
