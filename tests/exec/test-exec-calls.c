// SPDX-License-Identifier: MIT
/*
 * test-exec-calls.c - the preload shim changes nothing a program sees.
 *
 * The same child (this program with --child) runs twice on fresh,
 * identical directories: once plain, once with libflushkit-preload.so
 * preloaded with tiny thresholds (4 KiB flush-after, 16 KiB max-dirty,
 * drop-cache: every path of the shim runs: hints, waits, drops).  Each
 * intercepted call's return value and errno go into a transcript (also
 * the descriptor numbers open returns and lseek's SEEK_CUR after each
 * write).  Both transcripts and every output file must be byte-
 * identical.  Cases: write, pwrite, writev, pwritev, pwritev2 (offset
 * -1, RWF_APPEND), O_APPEND pwrite, ftruncate, fsync, fdatasync, stdio
 * (fprintf, fwrite, fputs, fputc, fclose), copy_file_range, sendfile,
 * splice, dup2 onto a written descriptor; a short write and EFBIG
 * (RLIMIT_FSIZE), EINTR and EAGAIN (a full pipe), EBADF (closed, -1,
 * read-only), and ENOSPC on a 16 MiB ext4 (fkloop, root; a fresh file
 * system per run).  The shim's own counters must show hints, waits and
 * drops in the preloaded run, so the comparison is not vacuous.
 */
#include "fkloop.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024 * 1024)

static FILE *tr; /* the transcript */

/* errno is recorded after every call, success or not: 0 is set before
 * it, and libc leaves it alone on success, so must the shim. */
static void rec_errno(const char *what, long long ret, int err)
{
	fprintf(tr, "%s: %lld errno %d\n", what, ret, err);
}

#define rec(what, call)                                                        \
	do {                                                                   \
		errno = 0;                                                     \
		long long r_ = (long long)(call);                              \
		rec_errno(what, r_, errno);                                    \
	} while (0)

static void rec_pos(const char *what, int fd)
{
	char buf[96];
	snprintf(buf, sizeof(buf), "%s pos", what);
	rec(buf, (long long)lseek(fd, 0, SEEK_CUR));
}

static char *pattern(size_t len, unsigned seed)
{
	char *p = malloc(len);
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(seed + i * 31 + (i >> 12));
	return p;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void cases_basic(const char *d)
{
	char path[PATH_MAX];
	char *big = pattern(3 * MiB, 1);

	snprintf(path, sizeof(path), "%s/a", d);
	int fd = -1;
	rec("open a", fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	rec("write 3M", write(fd, big, 3 * MiB));
	rec_pos("write 3M", fd);
	rec("write 100", write(fd, big + 7, 100));
	rec_pos("write 100", fd);
	rec("pwrite 8k@10M", pwrite(fd, big, 8192, 10 * MiB));
	rec_pos("pwrite", fd);
	struct iovec iov[3] = {{big, 5000}, {big + 9000, 70000}, {big, 1}};
	rec("writev", writev(fd, iov, 3));
	rec_pos("writev", fd);
	rec("pwritev@5M", pwritev(fd, iov, 3, 5 * MiB));
	rec("pwritev2 -1", pwritev2(fd, iov, 2, -1, 0));
	rec_pos("pwritev2", fd);
	rec("ftruncate 12M", ftruncate(fd, 12 * MiB));
	rec("ftruncate 9M", ftruncate(fd, 9 * MiB));
	rec("fsync", fsync(fd));
	rec("write after fsync", write(fd, big, 2 * MiB));
	rec("fdatasync", fdatasync(fd));
	int fd2 = -1;
	rec("open a ro", fd2 = open(path, O_RDONLY));
	rec("write ro EBADF", write(fd2, big, 10));
	rec("pwrite ro EBADF", pwrite(fd2, big, 10, 0));
	/* dup2 onto the written descriptor closes it: the shim releases
	 * it first, and the new one is a read-only file. */
	rec("dup2", dup2(fd2, fd));
	rec("write dup2'd EBADF", write(fd, big, 10));
	rec("close dup", close(fd));
	rec("close ro", close(fd2));
	rec("write closed EBADF", write(fd, big, 10));
	rec("write -1 EBADF", write(-1, big, 10));
	rec("pwrite -1 EBADF", pwrite(-1, big, 10, 0));
	rec("writev -1 EBADF", writev(-1, iov, 1));
	rec("fsync -1 EBADF", fsync(-1));
	rec("close -1 EBADF", close(-1));
	rec("pwrite EINVAL", pwrite(1000000, big, 10, -5));

	/* O_APPEND: Linux appends even a pwrite, whatever its offset. */
	snprintf(path, sizeof(path), "%s/b", d);
	fd = -1;
	rec("open b append",
	    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600));
	for (int i = 0; i < 40; i++)
		rec("append write", write(fd, big + i, 50000));
	rec("append pwrite@0", pwrite(fd, big, 4096, 0));
	rec("pwritev2 RWF_APPEND", pwritev2(fd, iov, 1, 0, RWF_APPEND));
	rec_pos("append", fd);
	rec("close b", close(fd));

	/* copy_file_range, sendfile, splice into files. */
	snprintf(path, sizeof(path), "%s/a", d);
	int in = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/c", d);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	rec("copy_file_range pos",
	    copy_file_range(in, NULL, out, NULL, 4 * MiB, 0));
	loff_t oi = 1000, oo = 6 * MiB;
	rec("copy_file_range off",
	    copy_file_range(in, &oi, out, &oo, 2 * MiB, 0));
	rec("copy_file_range off_out", (long long)oo);
	rec_pos("copy_file_range", out);
	off_t so = 0;
	rec("sendfile", sendfile(out, in, &so, 3 * MiB));
	rec_pos("sendfile", out);
	int p[2];
	rec("pipe", pipe(p));
	rec("write pipe", write(p[1], big, 60000));
	loff_t po = 20 * MiB;
	rec("splice off", splice(p[0], NULL, out, &po, 60000, 0));
	rec("splice off_out", (long long)po);
	rec("write pipe 2", write(p[1], big, 30000));
	rec("splice pos", splice(p[0], NULL, out, NULL, 30000, 0));
	rec_pos("splice", out);
	rec("close c", close(out));
	rec("close a", close(in));

	/* EAGAIN and EINTR on a full pipe (left alone by the shim, but
	 * still through its write). */
	int fl = fcntl(p[1], F_GETFL);
	rec("fcntl nonblock", fcntl(p[1], F_SETFL, fl | O_NONBLOCK));
	long long filled = 0;
	ssize_t w;
	errno = 0;
	while ((w = write(p[1], big, 4096)) > 0)
		filled += w;
	rec_errno("write full pipe EAGAIN", w, errno);
	rec("pipe filled", filled);
	rec("fcntl block", fcntl(p[1], F_SETFL, fl));
	struct sigaction sa = {.sa_handler = on_alarm}; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {.it_value = {0, 50000}};
	setitimer(ITIMER_REAL, &it, NULL);
	rec("write full pipe EINTR", write(p[1], big, 4096));
	close(p[0]);
	close(p[1]);

	/* A short write, then EFBIG: RLIMIT_FSIZE. */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old, lim = {MiB + 100, RLIM_INFINITY};
	getrlimit(RLIMIT_FSIZE, &old);
	lim.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &lim);
	snprintf(path, sizeof(path), "%s/e", d);
	fd = -1;
	rec("open e", fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	rec("write short", write(fd, big, 2 * MiB));
	rec("write EFBIG", write(fd, big, 2 * MiB));
	rec("pwrite EFBIG", pwrite(fd, big, 10, 2 * MiB));
	rec("close e", close(fd));
	setrlimit(RLIMIT_FSIZE, &old);

	/* stdio. */
	snprintf(path, sizeof(path), "%s/s", d);
	FILE *f = fopen(path, "w");
	rec("fopen s", f ? fileno(f) : -1);
	for (int i = 0; i < 100000; i++)
		if (fprintf(f, "line %d of the stdio case\n", i) < 0)
			rec("fprintf", -1);
	rec("fwrite", (long long)fwrite(big, 1, 2 * MiB, f));
	rec("fputs", fputs("fputs line\n", f));
	rec("fputc", fputc('z', f));
	rec("putc", putc('y', f));
	rec("ftell", ftell(f));
	rec("fclose s", fclose(f));

	/* A stream with no descriptor: the shim's fileno fails (EBADF),
	 * the program must still see errno as libc left it. */
	char mem[256];
	FILE *m = fmemopen(mem, sizeof(mem), "w");
	rec("fmemopen fwrite", (long long)fwrite("hello", 1, 5, m));
	rec("fmemopen fprintf", fprintf(m, "%d", 42));
	rec("fmemopen fputs", fputs("x", m));
	rec("fmemopen fclose", fclose(m));
	free(big);
}

/* Write 1 MiB chunks into a 16 MiB file system until it is full. */
static void cases_enospc(const char *mnt)
{
	char path[PATH_MAX];
	char *buf = pattern(MiB, 9);
	snprintf(path, sizeof(path), "%s/fill", mnt);
	int fd = -1;
	rec("open fill", fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
	long long total = 0;
	for (int i = 0; i < 64; i++) {
		errno = 0;
		ssize_t w = write(fd, buf, MiB);
		rec_errno("fill write", w, errno);
		if (w < 0)
			break;
		total += w;
	}
	rec("filled", total);
	rec("pwrite ENOSPC", pwrite(fd, buf, MiB, 40 * MiB));
	rec("fsync fill", fsync(fd));
	rec("close fill", close(fd));
	free(buf);
}

static int child(const char *dir, const char *mnt, const char *trpath)
{
	tr = fopen(trpath, "w");
	if (!tr)
		return 1;
	setvbuf(tr, NULL, _IOFBF, 1 << 16);
	cases_basic(dir);
	if (*mnt)
		cases_enospc(mnt);
	return fclose(tr) ? 1 : 0;
}

/* Run the child with @env (NULL-terminated "K=V" additions). */
static int run_child(const char *self, const char *dir, const char *mnt,
		     const char *trpath, char **env)
{
	pid_t pid = fork();
	if (pid == 0) {
		for (char **e = env; e && *e; e++)
			putenv(*e);
		execl(self, self, "--child", dir, mnt, trpath, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = fkt_read_file(a, &la), *y = fkt_read_file(b, &lb);
	int same = x && y && la == lb && !memcmp(x, y, la);
	if (!same)
		fprintf(stderr, "differ: %s (%zu bytes) and %s (%zu bytes)\n",
			a, x ? la : 0, b, y ? lb : 0);
	free(x);
	free(y);
	return same;
}

/* A fresh 16 MiB ext4 at @base/@name; "" in @mnt if none can be had. */
static void make_fs(struct fkt_fs *fs, const char *base, const char *name,
		    char *mnt, size_t len)
{
	char img[PATH_MAX], m[PATH_MAX];
	snprintf(img, sizeof(img), "%s/%s.img", base, name);
	snprintf(m, sizeof(m), "%s/%s", base, name);
	mnt[0] = 0;
	memset(fs, 0, sizeof(*fs));
	if (fkt_fs_create(fs, "ext4", img, 16 * MiB, m) == 0)
		snprintf(mnt, len, "%s", m);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--child"))
		return child(argv[2], argv[3], argv[4]);

	char self[PATH_MAX], so[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	snprintf(so, sizeof(so), "%s", self);
	*strrchr(so, '/') = 0;
	strcat(so, "/../libflushkit-preload.so");
	if (access(so, R_OK)) {
		fprintf(stderr, "FAIL: no shim at %s\n", so);
		return 1;
	}

	const char *t = fkt_tmpdir();
	char d1[PATH_MAX], d2[PATH_MAX], t1[PATH_MAX], t2[PATH_MAX];
	char stats[PATH_MAX], env_so[PATH_MAX + 80], env_st[PATH_MAX + 40];
	snprintf(d1, sizeof(d1), "%s/plain", t);
	snprintf(d2, sizeof(d2), "%s/shim", t);
	snprintf(t1, sizeof(t1), "%s/plain.tr", t);
	snprintf(t2, sizeof(t2), "%s/shim.tr", t);
	snprintf(stats, sizeof(stats), "%s/stats", t);
	mkdir(d1, 0700);
	mkdir(d2, 0700);

	struct fkt_fs fs1, fs2;
	char m1[PATH_MAX], m2[PATH_MAX];
	make_fs(&fs1, t, "fs1", m1, sizeof(m1));
	make_fs(&fs2, t, "fs2", m2, sizeof(m2));
	if (!m1[0] || !m2[0]) {
		printf("note: no loop file system (not root?): the ENOSPC "
		       "case is not run\n");
		m1[0] = m2[0] = 0;
	}

	CHECK_EQ(run_child(self, d1, m1, t1, NULL), 0);
	snprintf(env_so, sizeof(env_so), "LD_PRELOAD=%s", so);
	snprintf(env_st, sizeof(env_st), "FLUSHKIT_STATS=%s", stats);
	/* A sanitized build of this test: the shim is preloaded before the
	 * sanitizer runtime, which is fine for this use; say so to ASan. */
	char *env[] = {env_so,
		       "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0",
		       "FLUSHKIT_FLUSH_AFTER=4096",
		       "FLUSHKIT_MAX_DIRTY=16384",
		       "FLUSHKIT_DROP_CACHE=1",
		       env_st,
		       NULL};
	CHECK_EQ(run_child(self, d2, m2, t2, env), 0);

	CHECK(same_file(t1, t2));
	const char *files[] = {"a", "b", "c", "e", "s"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char a[PATH_MAX + 8], b[PATH_MAX + 8];
		snprintf(a, sizeof(a), "%s/%s", d1, files[i]);
		snprintf(b, sizeof(b), "%s/%s", d2, files[i]);
		CHECK(same_file(a, b));
	}
	if (m1[0]) {
		char a[PATH_MAX + 8], b[PATH_MAX + 8];
		snprintf(a, sizeof(a), "%s/fill", m1);
		snprintf(b, sizeof(b), "%s/fill", m2);
		CHECK(same_file(a, b));
		size_t len;
		char *x = fkt_read_file(t1, &len);
		CHECK(x && strstr(x, "errno 28")); /* ENOSPC was met */
		printf("ENOSPC case run on %s and %s\n", m1, m2);
		free(x);
	}

	/* The shim really acted in the second run. */
	size_t len;
	char *s = fkt_read_file(stats, &len);
	CHECK(s != NULL);
	if (s) {
		printf("shim: %s", s);
		CHECK(strstr(s, " hints=0 ") == NULL);
		CHECK(strstr(s, " waits=0 ") == NULL);
		CHECK(strstr(s, " drops=0 ") == NULL);
		CHECK(strstr(s, " ignored_notreg=0 ") == NULL); /* the pipe */
	}
	free(s);
	char *x = fkt_read_file(t2, &len);
	if (x)
		printf("transcript (%zu bytes), first lines:\n%.600s\n", len,
		       x);
	free(x);
	fkt_fs_destroy(&fs1);
	fkt_fs_destroy(&fs2);
	return fkt_done();
}
