// SPDX-License-Identifier: MIT
/*
 * test-exec-cover.c - every write path the shim claims is covered:
 * write, pwrite, writev, pwritev, stdio (fwrite + fprintf), copy_file_range,
 * sendfile, splice, 8 writer threads, a fork child, a fork + exec child,
 * a posix_spawn child and a vfork + exec child.
 *
 * Each writer (this program with --writer MODE) writes 16 MiB to a file
 * and then, with the file still open (no close-time hint yet), asks the
 * kernel how much of it is dirty: cachestat(2).  Under the shim
 * (flush-after 1 MiB, no max-dirty: hints only) at most 2 MiB may be
 * (one flush-after, one located-position step, one stdio buffer);
 * without it all 16 MiB are (far below this machine's background dirty
 * limit, and younger than dirty_expire).  Both are checked, so a path
 * the shim missed fails, and so does a machine where the check means
 * nothing.  Skips (77) without cachestat or on tmpfs.
 */
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MiB (1024 * 1024)
#define TOTAL (16 * MiB)
#define LIMIT (2 * MiB)
#define NR_cachestat 451

struct cs_range {
	uint64_t off, len;
};
struct cs {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted,
	    nr_recently_evicted;
};

static char self[PATH_MAX];
static const char *dir;
static char buf[64 * 1024];

static long dirty_bytes(int fd)
{
	struct cs_range r = {0, 0};
	struct cs c;
	if (syscall(NR_cachestat, fd, &r, &c, 0) < 0)
		return -1;
	return (long)c.nr_dirty * 4096;
}

/* 0 if @fd's file has at most LIMIT dirty, else 1 (printed). */
static int judge(const char *mode, int fd)
{
	long d = dirty_bytes(fd);
	printf("%-16s dirty %ld KiB\n", mode, d / 1024);
	return d >= 0 && d <= LIMIT ? 0 : 1;
}

static int open_out(const char *name)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
}

static int open_src(void)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/src", dir);
	return open(p, O_RDONLY);
}

struct thr {
	int idx, ret;
};

static void *thread_writer(void *arg)
{
	struct thr *t = arg;
	char name[32];
	snprintf(name, sizeof(name), "thread%d", t->idx);
	int fd = open_out(name);
	for (off_t off = 0; off < TOTAL / 4; off += 16384)
		if (pwrite(fd, buf, 16384, off) != 16384)
			t->ret = 1;
	t->ret |= judge(name, fd);
	close(fd);
	return NULL;
}

static int run_self(const char *mode);

static int writer(const char *mode)
{
	int fd = -1, r = 0;
	memset(buf, 'x', sizeof(buf));
	if (!strcmp(mode, "write")) {
		fd = open_out(mode);
		for (int i = 0; i < TOTAL / 4096; i++)
			r |= write(fd, buf, 4096) != 4096;
	} else if (!strcmp(mode, "pwrite")) {
		fd = open_out(mode);
		for (off_t o = 0; o < TOTAL; o += 8192)
			r |= pwrite(fd, buf, 8192, o) != 8192;
	} else if (!strcmp(mode, "writev") || !strcmp(mode, "pwritev")) {
		fd = open_out(mode);
		struct iovec iov[2] = {{buf, 3000}, {buf, 5192}};
		for (off_t o = 0; o < TOTAL; o += 8192)
			r |= (mode[0] == 'w' ? writev(fd, iov, 2)
					     : pwritev(fd, iov, 2, o)) != 8192;
	} else if (!strcmp(mode, "stdio")) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/stdio", dir);
		FILE *f = fopen(p, "w");
		for (int i = 0; i < TOTAL / 2 / 1000; i++)
			r |= fwrite(buf, 1, 1000, f) != 1000;
		while (ftell(f) < TOTAL)
			r |= fprintf(f, "%s %d\n", "a line of text", 12345) < 0;
		r |= judge(mode, fileno(f));
		fclose(f);
		return r;
	} else if (!strcmp(mode, "copy_file_range")) {
		int in = open_src();
		fd = open_out(mode);
		ssize_t n;
		while ((n = copy_file_range(in, NULL, fd, NULL, MiB / 4, 0)) >
		       0)
			;
		r |= n < 0;
		close(in);
	} else if (!strcmp(mode, "sendfile")) {
		int in = open_src();
		fd = open_out(mode);
		ssize_t n;
		while ((n = sendfile(fd, in, NULL, MiB / 4)) > 0)
			;
		r |= n < 0;
		close(in);
	} else if (!strcmp(mode, "splice")) {
		int p[2];
		r |= pipe(p);
		fd = open_out(mode);
		loff_t off = 0;
		while (off < TOTAL) {
			r |= write(p[1], buf, 65536) != 65536;
			ssize_t n = splice(p[0], NULL, fd, &off, 65536, 0);
			if (n <= 0) {
				r = 1;
				break;
			}
		}
		close(p[0]);
		close(p[1]);
	} else if (!strcmp(mode, "threads")) {
		pthread_t th[8];
		struct thr t[8];
		for (int i = 0; i < 8; i++) {
			t[i].idx = i;
			t[i].ret = 0;
			pthread_create(&th[i], NULL, thread_writer, &t[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			r |= t[i].ret;
		}
		return r;
	} else if (!strcmp(mode, "fork")) {
		/* The parent has a written file open when it forks. */
		int pfd = open_out("fork-parent");
		r |= write(pfd, buf, 4096) != 4096;
		pid_t pid = fork();
		if (pid == 0)
			_exit(writer("write"));
		int st;
		waitpid(pid, &st, 0);
		close(pfd);
		return !WIFEXITED(st) || WEXITSTATUS(st);
	} else if (!strcmp(mode, "forkexec") || !strcmp(mode, "spawn") ||
		   !strcmp(mode, "vfork")) {
		return run_self(mode);
	} else {
		return 2;
	}
	r |= judge(mode, fd);
	close(fd);
	return r;
}

/* Start this program as "--writer write" by fork+exec, posix_spawn or
 * vfork+exec (the environment, and so the preload, is inherited). */
static int run_self(const char *how)
{
	char *argv[] = {self, "--writer", (char *)dir, "write", NULL};
	pid_t pid;
	if (!strcmp(how, "spawn")) {
		if (posix_spawn(&pid, self, NULL, NULL, argv, environ))
			return 1;
	} else if (!strcmp(how, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execv(self, argv);
			_exit(127);
		}
	} else {
		pid = fork();
		if (pid == 0) {
			execv(self, argv);
			_exit(127);
		}
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

static int run(const char *mode, int shim, const char *so)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (shim) {
			setenv("LD_PRELOAD", so, 1);
			/* A sanitized build of this test: the shim comes
			 * before the runtime, fine for this use. */
			setenv("ASAN_OPTIONS",
			       "verify_asan_link_order=0:detect_leaks=0", 1);
			setenv("FLUSHKIT_FLUSH_AFTER", "1048576", 1);
			setenv("FLUSHKIT_MAX_DIRTY", "0", 1);
		}
		execl(self, self, "--writer", dir, mode, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	if (argc == 4 && !strcmp(argv[1], "--writer")) {
		dir = argv[2];
		return writer(argv[3]);
	}

	struct cs_range rg = {0, 0};
	struct cs c;
	if (syscall(NR_cachestat, 0, &rg, &c, 0) < 0 && errno == ENOSYS)
		SKIP("no cachestat(2) in this kernel");
	char so[PATH_MAX + 64];
	snprintf(so, sizeof(so), "%s", self);
	strcpy(strrchr(so, '/'), "/../libflushkit-preload.so");
	if (access(so, R_OK)) {
		fprintf(stderr, "FAIL: no shim at %s\n", so);
		return 1;
	}
	dir = fkt_tmpdir();
	struct statfs sfs;
	if (statfs(dir, &sfs) == 0 &&
	    (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC))
		SKIP("%s is tmpfs: no writeback", dir);

	/* The source of copy_file_range and sendfile: clean (fsynced). */
	char src[PATH_MAX];
	snprintf(src, sizeof(src), "%s/src", dir);
	CHECK_EQ(fkt_write_file(src, TOTAL, 3), 0);
	int sfd = open(src, O_RDONLY);
	CHECK_EQ(fsync(sfd), 0);
	close(sfd);

	const char *modes[] = {
	    "write",	       "pwrite",   "writev", "pwritev", "stdio",
	    "copy_file_range", "sendfile", "splice", "threads", "fork",
	    "forkexec",	       "spawn",	   "vfork"};
	size_t told = 0;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		printf("--- %s under the shim\n", modes[i]);
		fflush(stdout);
		int a = run(modes[i], 1, so);
		printf("--- %s plain\n", modes[i]);
		fflush(stdout);
		int b = run(modes[i], 0, so);
		if (a != 0)
			fprintf(stderr,
				"FAIL: %s: more than %d bytes dirty "
				"under the shim (exit %d)\n",
				modes[i], LIMIT, a);
		CHECK_EQ(a, 0);
		/* The plain run must go past the limit, else this mode's
		 * check cannot tell (someone's sync(2) or the flusher wrote
		 * it back first on a busy machine): said, not failed. */
		if (b == 1)
			told++;
		else if (b == 0)
			printf("not checked: %s: the plain run stayed within "
			       "%d bytes dirty (written back by others): the "
			       "check cannot tell here\n",
			       modes[i], LIMIT);
		else
			CHECK_EQ(b, 1);
		/* Leave nothing dirty for the next mode. */
		sync();
	}
	if (!told && !fkt_failures)
		SKIP("no plain run went past the limit: the check could "
		     "not tell anywhere");
	return fkt_done();
}
