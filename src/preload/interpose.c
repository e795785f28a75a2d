// SPDX-License-Identifier: MIT
/*
 * interpose.c - the libc functions libflushkit-preload.so replaces.
 *
 * Each one calls the next definition (dlsym(RTLD_NEXT): libc, or a
 * sanitizer's interceptor), keeps its result and errno, and only then,
 * on success, tells shim.c what was written (shim.h: the calls that
 * close a descriptor tell it just before).  errno is restored before
 * returning, so the program sees exactly what libc returned (P1 of
 * shim.c).  A thread already inside the shim passes straight through
 * (shim_enter).
 *
 * Covered: write, pwrite, writev, pwritev, pwritev2 (and the *64
 * names), copy_file_range, sendfile, splice, ftruncate, fsync,
 * fdatasync; stdio output (fwrite, fputs, fputc, putc, puts, putchar,
 * printf and fprintf families, fclose); and the calls that create,
 * replace or close descriptors (open*, creat*, fopen*, freopen*, dup*,
 * fcntl, close, close_range, closefrom), so a reused descriptor number
 * starts fresh.  Not covered: mmap stores, io_uring, AIO, and stdio's
 * inline putc_unlocked fast path (documented in docs/exec.md).
 *
 * Compiled without _FILE_OFFSET_BITS=64 so that pwrite and pwrite64 are
 * the two distinct symbols programs call (the header would rename one).
 */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_APPEND
#define RWF_APPEND 0x10
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Not in every glibc's headers. */
int fcntl64(int fd, int cmd, ...);
int close_range(unsigned int first, unsigned int last, int flags);
void closefrom(int lowfd);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __printf_chk(int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);

/* The next definition of @name, resolved once (at load time by
 * resolve_all, or at the first call made before it). */
#define REAL(name) ((__typeof__(&name))resolve(&real_##name, #name))
#define DECLARE_REAL(name) static void *real_##name

static void *resolve(void **slot, const char *name)
{
	void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (!p) {
		p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	}
	return p;
}

/* Run @work after the real call, errno kept (P1, P3). */
#define AFTER(work)                                                            \
	do {                                                                   \
		int saved_errno_ = errno;                                      \
		if (shim_enter()) {                                            \
			work;                                                  \
			shim_leave();                                          \
		}                                                              \
		errno = saved_errno_;                                          \
	} while (0)
#define BEFORE(work) AFTER(work)

/* No real function (an older libc): fail as an unknown system call. */
#define NO_REAL(name, ret)                                                     \
	do {                                                                   \
		if (!REAL(name)) {                                             \
			errno = ENOSYS;                                        \
			return ret;                                            \
		}                                                              \
	} while (0)

DECLARE_REAL(write);
DECLARE_REAL(pwrite);
DECLARE_REAL(pwrite64);
DECLARE_REAL(writev);
DECLARE_REAL(pwritev);
DECLARE_REAL(pwritev64);
DECLARE_REAL(pwritev2);
DECLARE_REAL(pwritev64v2);
DECLARE_REAL(copy_file_range);
DECLARE_REAL(sendfile);
DECLARE_REAL(sendfile64);
DECLARE_REAL(splice);
DECLARE_REAL(ftruncate);
DECLARE_REAL(ftruncate64);
DECLARE_REAL(fsync);
DECLARE_REAL(fdatasync);
DECLARE_REAL(close);
DECLARE_REAL(close_range);
DECLARE_REAL(closefrom);
DECLARE_REAL(dup);
DECLARE_REAL(dup2);
DECLARE_REAL(dup3);
DECLARE_REAL(fcntl);
DECLARE_REAL(fcntl64);
DECLARE_REAL(open);
DECLARE_REAL(open64);
DECLARE_REAL(openat);
DECLARE_REAL(openat64);
DECLARE_REAL(creat);
DECLARE_REAL(creat64);
DECLARE_REAL(__open_2);
DECLARE_REAL(__open64_2);
DECLARE_REAL(__openat_2);
DECLARE_REAL(__openat64_2);
DECLARE_REAL(fopen);
DECLARE_REAL(fopen64);
DECLARE_REAL(freopen);
DECLARE_REAL(freopen64);
DECLARE_REAL(fclose);
DECLARE_REAL(fwrite);
DECLARE_REAL(fwrite_unlocked);
DECLARE_REAL(fputs);
DECLARE_REAL(fputs_unlocked);
DECLARE_REAL(fputc);
DECLARE_REAL(putc);
DECLARE_REAL(puts);
DECLARE_REAL(putchar);
DECLARE_REAL(vfprintf);
DECLARE_REAL(vprintf);
DECLARE_REAL(__vfprintf_chk);
DECLARE_REAL(__vprintf_chk);

/* ---- writes ---- */

ssize_t write(int fd, const void *buf, size_t len)
{
	ssize_t r = REAL(write)(fd, buf, len);
	if (r > 0)
		AFTER(shim_written(fd, SHIM_POS, (uint64_t)r));
	return r;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	ssize_t r = REAL(pwrite)(fd, buf, len, off);
	if (r > 0)
		AFTER(shim_written(fd, (uint64_t)off, (uint64_t)r));
	return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	ssize_t r = REAL(pwrite64)(fd, buf, len, off);
	if (r > 0)
		AFTER(shim_written(fd, (uint64_t)off, (uint64_t)r));
	return r;
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	ssize_t r = REAL(writev)(fd, iov, n);
	if (r > 0)
		AFTER(shim_written(fd, SHIM_POS, (uint64_t)r));
	return r;
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	ssize_t r = REAL(pwritev)(fd, iov, n, off);
	if (r > 0)
		AFTER(shim_written(fd, (uint64_t)off, (uint64_t)r));
	return r;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off64_t off)
{
	ssize_t r = REAL(pwritev64)(fd, iov, n, off);
	if (r > 0)
		AFTER(shim_written(fd, (uint64_t)off, (uint64_t)r));
	return r;
}

/* pwritev2: offset -1 is the file position; RWF_APPEND the end. */
static uint64_t v2_offset(off64_t off, int flags)
{
	if (flags & RWF_APPEND)
		return SHIM_APPEND;
	return off == -1 ? SHIM_POS : (uint64_t)off;
}

ssize_t pwritev2(int fd, const struct iovec *iov, int n, off_t off, int flags)
{
	NO_REAL(pwritev2, -1);
	ssize_t r = REAL(pwritev2)(fd, iov, n, off, flags);
	if (r > 0)
		AFTER(shim_written(fd, v2_offset(off, flags), (uint64_t)r));
	return r;
}

ssize_t pwritev64v2(int fd, const struct iovec *iov, int n, off64_t off,
		    int flags)
{
	NO_REAL(pwritev64v2, -1);
	ssize_t r = REAL(pwritev64v2)(fd, iov, n, off, flags);
	if (r > 0)
		AFTER(shim_written(fd, v2_offset(off, flags), (uint64_t)r));
	return r;
}

ssize_t copy_file_range(int in, off64_t *off_in, int out, off64_t *off_out,
			size_t len, unsigned int flags)
{
	NO_REAL(copy_file_range, -1);
	ssize_t r = REAL(copy_file_range)(in, off_in, out, off_out, len, flags);
	if (r > 0)
		AFTER(shim_written(
		    out, off_out ? (uint64_t)(*off_out - r) : SHIM_POS,
		    (uint64_t)r));
	return r;
}

ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	ssize_t r = REAL(sendfile)(out, in, off, count);
	if (r > 0)
		AFTER(shim_written(out, SHIM_POS, (uint64_t)r));
	return r;
}

ssize_t sendfile64(int out, int in, off64_t *off, size_t count)
{
	ssize_t r = REAL(sendfile64)(out, in, off, count);
	if (r > 0)
		AFTER(shim_written(out, SHIM_POS, (uint64_t)r));
	return r;
}

ssize_t splice(int in, off64_t *off_in, int out, off64_t *off_out, size_t len,
	       unsigned int flags)
{
	ssize_t r = REAL(splice)(in, off_in, out, off_out, len, flags);
	if (r > 0)
		AFTER(shim_written(
		    out, off_out ? (uint64_t)(*off_out - r) : SHIM_POS,
		    (uint64_t)r));
	return r;
}

int ftruncate(int fd, off_t len)
{
	int r = REAL(ftruncate)(fd, len);
	if (r == 0)
		AFTER(shim_truncated(fd, (uint64_t)len));
	return r;
}

int ftruncate64(int fd, off64_t len)
{
	int r = REAL(ftruncate64)(fd, len);
	if (r == 0)
		AFTER(shim_truncated(fd, (uint64_t)len));
	return r;
}

int fsync(int fd)
{
	int r = REAL(fsync)(fd);
	if (r == 0)
		AFTER(shim_synced(fd));
	return r;
}

int fdatasync(int fd)
{
	int r = REAL(fdatasync)(fd);
	if (r == 0)
		AFTER(shim_synced(fd));
	return r;
}

/* ---- descriptors ---- */

int close(int fd)
{
	BEFORE(shim_release(fd, 1));
	return REAL(close)(fd);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	NO_REAL(close_range, -1);
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		BEFORE(shim_release_range(first, last));
	return REAL(close_range)(first, last, flags);
}

void closefrom(int lowfd)
{
	if (!REAL(closefrom))
		return;
	if (lowfd >= 0)
		BEFORE(shim_release_range((unsigned)lowfd, ~0u));
	REAL(closefrom)(lowfd);
}

int dup(int fd)
{
	int r = REAL(dup)(fd);
	if (r >= 0)
		AFTER(shim_new_fd(r));
	return r;
}

int dup2(int fd, int fd2)
{
	if (fd != fd2)
		BEFORE(shim_release(fd2, 1));
	int r = REAL(dup2)(fd, fd2);
	if (r >= 0 && fd != fd2)
		AFTER(shim_new_fd(r));
	return r;
}

int dup3(int fd, int fd2, int flags)
{
	if (fd != fd2)
		BEFORE(shim_release(fd2, 1));
	int r = REAL(dup3)(fd, fd2, flags);
	if (r >= 0)
		AFTER(shim_new_fd(r));
	return r;
}

static void after_fcntl(int fd, int cmd, int r)
{
	if (r < 0)
		return;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		AFTER(shim_new_fd(r));
	else if (cmd == F_SETFL)
		/* O_DIRECT or O_APPEND may have changed: classify again. */
		AFTER(shim_release(fd, 0));
}

/* glibc's own fcntl reads its third argument as a pointer-sized word
 * whatever the command; so does this one, and passes it on. */
int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	int r = REAL(fcntl)(fd, cmd, arg);
	after_fcntl(fd, cmd, r);
	return r;
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	NO_REAL(fcntl64, -1);
	int r = REAL(fcntl64)(fd, cmd, arg);
	after_fcntl(fd, cmd, r);
	return r;
}

/* As glibc's __OPEN_NEEDS_MODE: a mode argument follows. */
static int needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define OPEN_MODE(flags, last)                                                 \
	mode_t mode = 0;                                                       \
	if (needs_mode(flags)) {                                               \
		va_list ap;                                                    \
		va_start(ap, last);                                            \
		mode = (mode_t)va_arg(ap, int);                                \
		va_end(ap);                                                    \
	}

static int new_fd(int r)
{
	if (r >= 0)
		AFTER(shim_new_fd(r));
	return r;
}

int open(const char *path, int flags, ...)
{
	OPEN_MODE(flags, flags);
	return new_fd(REAL(open)(path, flags, mode));
}

int open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags, flags);
	return new_fd(REAL(open64)(path, flags, mode));
}

int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags, flags);
	return new_fd(REAL(openat)(dirfd, path, flags, mode));
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags, flags);
	return new_fd(REAL(openat64)(dirfd, path, flags, mode));
}

int creat(const char *path, mode_t mode)
{
	return new_fd(REAL(creat)(path, mode));
}

int creat64(const char *path, mode_t mode)
{
	return new_fd(REAL(creat64)(path, mode));
}

int __open_2(const char *path, int flags)
{
	NO_REAL(__open_2, -1);
	return new_fd(REAL(__open_2)(path, flags));
}

int __open64_2(const char *path, int flags)
{
	NO_REAL(__open64_2, -1);
	return new_fd(REAL(__open64_2)(path, flags));
}

int __openat_2(int dirfd, const char *path, int flags)
{
	NO_REAL(__openat_2, -1);
	return new_fd(REAL(__openat_2)(dirfd, path, flags));
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	NO_REAL(__openat64_2, -1);
	return new_fd(REAL(__openat64_2)(dirfd, path, flags));
}

/* ---- stdio ---- */

/* The descriptor of @f, or -1 (fileno may set errno: AFTER restores). */
static int stream_fd(FILE *f)
{
	return f ? fileno(f) : -1;
}

static FILE *new_stream(FILE *f)
{
	if (f)
		AFTER(shim_new_fd(stream_fd(f)));
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	return new_stream(REAL(fopen)(path, mode));
}

FILE *fopen64(const char *path, const char *mode)
{
	return new_stream(REAL(fopen64)(path, mode));
}

FILE *freopen(const char *path, const char *mode, FILE *f)
{
	BEFORE(shim_release(stream_fd(f), 1));
	return new_stream(REAL(freopen)(path, mode, f));
}

FILE *freopen64(const char *path, const char *mode, FILE *f)
{
	BEFORE(shim_release(stream_fd(f), 1));
	return new_stream(REAL(freopen64)(path, mode, f));
}

int fclose(FILE *f)
{
	/* The stream's last buffer is written by the real fclose, after
	 * this: it goes unhinted (at most one buffer per file). */
	BEFORE(shim_release(stream_fd(f), 1));
	return REAL(fclose)(f);
}

#define STDIO_AFTER(f, bytes) AFTER(shim_stdio_written(stream_fd(f), (bytes)))

size_t fwrite(const void *p, size_t size, size_t n, FILE *f)
{
	size_t r = REAL(fwrite)(p, size, n, f);
	if (r > 0)
		STDIO_AFTER(f, (uint64_t)r * size);
	return r;
}

size_t fwrite_unlocked(const void *p, size_t size, size_t n, FILE *f)
{
	size_t r = REAL(fwrite_unlocked)(p, size, n, f);
	if (r > 0)
		STDIO_AFTER(f, (uint64_t)r * size);
	return r;
}

int fputs(const char *s, FILE *f)
{
	int r = REAL(fputs)(s, f);
	if (r >= 0)
		STDIO_AFTER(f, strlen(s));
	return r;
}

int fputs_unlocked(const char *s, FILE *f)
{
	int r = REAL(fputs_unlocked)(s, f);
	if (r >= 0)
		STDIO_AFTER(f, strlen(s));
	return r;
}

int fputc(int c, FILE *f)
{
	int r = REAL(fputc)(c, f);
	if (r != EOF)
		STDIO_AFTER(f, 1);
	return r;
}

int putc(int c, FILE *f)
{
	int r = REAL(putc)(c, f);
	if (r != EOF)
		STDIO_AFTER(f, 1);
	return r;
}

int puts(const char *s)
{
	int r = REAL(puts)(s);
	if (r >= 0)
		STDIO_AFTER(stdout, strlen(s) + 1);
	return r;
}

int putchar(int c)
{
	int r = REAL(putchar)(c);
	if (r != EOF)
		STDIO_AFTER(stdout, 1);
	return r;
}

int vfprintf(FILE *f, const char *fmt, va_list ap)
{
	int r = REAL(vfprintf)(f, fmt, ap);
	if (r > 0)
		STDIO_AFTER(f, (uint64_t)r);
	return r;
}

int fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(f, fmt, ap);
	va_end(ap);
	return r;
}

int vprintf(const char *fmt, va_list ap)
{
	int r = REAL(vprintf)(fmt, ap);
	if (r > 0)
		STDIO_AFTER(stdout, (uint64_t)r);
	return r;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vprintf(fmt, ap);
	va_end(ap);
	return r;
}

int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	NO_REAL(__vfprintf_chk, -1);
	int r = REAL(__vfprintf_chk)(f, flag, fmt, ap);
	if (r > 0)
		STDIO_AFTER(f, (uint64_t)r);
	return r;
}

int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vfprintf_chk(f, flag, fmt, ap);
	va_end(ap);
	return r;
}

int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	NO_REAL(__vprintf_chk, -1);
	int r = REAL(__vprintf_chk)(flag, fmt, ap);
	if (r > 0)
		STDIO_AFTER(stdout, (uint64_t)r);
	return r;
}

int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vprintf_chk(flag, fmt, ap);
	va_end(ap);
	return r;
}

/* Resolve every real function at load time, before any thread starts,
 * so the write path never calls dlsym (which may allocate). */
__attribute__((constructor(101))) static void resolve_all(void)
{
	int e = errno;
	(void)REAL(write);
	(void)REAL(pwrite);
	(void)REAL(pwrite64);
	(void)REAL(writev);
	(void)REAL(pwritev);
	(void)REAL(pwritev64);
	(void)REAL(pwritev2);
	(void)REAL(pwritev64v2);
	(void)REAL(copy_file_range);
	(void)REAL(sendfile);
	(void)REAL(sendfile64);
	(void)REAL(splice);
	(void)REAL(ftruncate);
	(void)REAL(ftruncate64);
	(void)REAL(fsync);
	(void)REAL(fdatasync);
	(void)REAL(close);
	(void)REAL(close_range);
	(void)REAL(closefrom);
	(void)REAL(dup);
	(void)REAL(dup2);
	(void)REAL(dup3);
	(void)REAL(fcntl);
	(void)REAL(fcntl64);
	(void)REAL(open);
	(void)REAL(open64);
	(void)REAL(openat);
	(void)REAL(openat64);
	(void)REAL(creat);
	(void)REAL(creat64);
	(void)REAL(__open_2);
	(void)REAL(__open64_2);
	(void)REAL(__openat_2);
	(void)REAL(__openat64_2);
	(void)REAL(fopen);
	(void)REAL(fopen64);
	(void)REAL(freopen);
	(void)REAL(freopen64);
	(void)REAL(fclose);
	(void)REAL(fwrite);
	(void)REAL(fwrite_unlocked);
	(void)REAL(fputs);
	(void)REAL(fputs_unlocked);
	(void)REAL(fputc);
	(void)REAL(putc);
	(void)REAL(puts);
	(void)REAL(putchar);
	(void)REAL(vfprintf);
	(void)REAL(vprintf);
	(void)REAL(__vfprintf_chk);
	(void)REAL(__vprintf_chk);
	errno = e;
}
