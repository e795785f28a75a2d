// SPDX-License-Identifier: MIT
/*
 * test-exec-fds.c - the preload shim holds no descriptor of its own: a
 * program's descriptor table, its numbers and its limits are the same
 * with and without `flushkit exec`.
 *
 * Each case is this program with --child CASE, run plain and under
 * `flushkit exec --flush-after 64k --max-dirty 256k --stats=FILE` in a
 * fresh directory.  A writer thread writes 1 MiB blocks to "big" (fd 3)
 * while max-dirty is exceeded at every write, so the shim waits at every
 * write; meanwhile the main thread:
 *   race  - close_range(4, ~0U, 0), opens "probe" and preads it: a
 *           descriptor of the shim's closed by the program, and its
 *           number reused, must not make the program's pread fail with
 *           EBADF nor name another file;
 *   limit - at RLIMIT_NOFILE 5 opens and closes "probe": never EMFILE,
 *           always fd 4;
 *   fork  - forks children that list /proc/self/fd: no descriptor beyond
 *           0-3 (and the listing's own);
 *   exec  - execs `ls -l /proc/self/fd`'s equivalent (this program with
 *           --list): no inherited descriptor beyond 0-3;
 *   small - writes 8 bytes and exits without a close: the stats line
 *           says bytes_written=8;
 *   nocachestat - cachestat(2) made to fail with ENOSYS (a seccomp
 *           filter, as on a kernel before 6.5): the same data, no wait,
 *           every wait counted in waits_skipped.
 * Each child prints its findings; the plain and the shim transcripts
 * must be identical, and "big" byte-identical.  The stats file must show
 * waits in the shim run, so the comparison is not vacuous.
 */
#include "fktest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024 * 1024)
#define BLOCKS 120 /* truncated every 50: 20 MiB at the end */

static _Atomic int stop; /* set by the writer when done */
static const char *self;

static void *writer(void *arg)
{
	static char buf[MiB];
	(void)arg;
	memset(buf, 'a', sizeof(buf));
	for (int i = 0; i < BLOCKS; i++) {
		if (write(3, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			printf("write %d: %s\n", i, strerror(errno));
		if (i % 50 == 49 && (ftruncate(3, 0) || lseek(3, 0, SEEK_SET)))
			printf("truncate: %s\n", strerror(errno));
	}
	stop = 1;
	return NULL;
}

/* Descriptors open in this process other than 0-3 and @skip.  No
 * allocation (getdents64 into a stack buffer): it runs in the child of
 * a fork made while the writer thread runs, where malloc may find an
 * allocator lock that thread held at fork. */
static int extra_fds(int skip, char *names, size_t cap)
{
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = 0;
	char buf[4096];
	long got;
	if (dfd < 0)
		return -1;
	names[0] = 0;
	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long pos = 0; pos < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + pos);
			pos += e->d_reclen;
			if (e->d_name[0] == '.')
				continue;
			int fd = atoi(e->d_name);
			if (fd <= 3 || fd == dfd || fd == skip)
				continue;
			n++;
			size_t l = strlen(names);
			snprintf(names + l, cap - l, " %d", fd);
		}
	}
	close(dfd);
	return got < 0 ? -1 : n;
}

static int child_list(void)
{
	char names[256];
	int n = extra_fds(-1, names, sizeof(names));
	if (n)
		printf("exec child holds %d extra fd:%s\n", n, names);
	return n ? 1 : 0;
}

static int child(const char *what)
{
	/* A clean table: 0, 1, 2 and big = 3. */
	syscall(SYS_close_range, 3, ~0U, 0);
	if (open("big", O_CREAT | O_WRONLY | O_TRUNC, 0644) != 3) {
		printf("open big: not fd 3\n");
		return 1;
	}
	if (!strcmp(what, "small")) {
		/* 8 bytes, then exit without a close: counted all the same.
		 * Nothing else written to a file (stdout, stderr closed). */
		close(1);
		close(2);
		exit(write(3, "12345678", 8) == 8 ? 0 : 1);
	}
	if (!strcmp(what, "limit")) {
		struct rlimit rl = {5, 5};
		if (setrlimit(RLIMIT_NOFILE, &rl)) {
			printf("setrlimit: %s\n", strerror(errno));
			return 1;
		}
	}
	pthread_t t;
	if (pthread_create(&t, NULL, writer, NULL))
		return 1;
	long ebadf = 0, other_file = 0, emfile = 0, not4 = 0, leaks = 0;
	long fails = 0, iters = 0;
	while (!stop) {
		iters++;
		if (!strcmp(what, "race")) {
			syscall(SYS_close_range, 4, ~0U, 0);
			int fd = open("probe", O_RDWR | O_CREAT, 0644);
			if (fd < 0) {
				fails++;
				continue;
			}
			for (int k = 0; k < 20; k++) {
				char c;
				if (pread(fd, &c, 1, 0) < 0) {
					ebadf += errno == EBADF;
					break;
				}
			}
			char p[64], l[PATH_MAX];
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
			ssize_t n = readlink(p, l, sizeof(l) - 1);
			if (n > 0) {
				l[n] = 0;
				if (!strstr(l, "/probe"))
					other_file++;
			}
			close(fd);
		} else if (!strcmp(what, "limit")) {
			int fd = open("probe", O_RDONLY | O_CREAT, 0644);
			if (fd < 0) {
				if (errno == EMFILE)
					emfile++;
				else
					fails++;
				continue;
			}
			if (fd != 4)
				not4++;
			close(fd);
		} else if (!strcmp(what, "fork")) {
			fflush(stdout);
			pid_t p = fork();
			if (p == 0) {
				char names[256];
				int n = extra_fds(-1, names, sizeof(names));
				_exit(n ? 1 : 0);
			}
			int st;
			if (p < 0 || waitpid(p, &st, 0) != p) {
				fails++;
				continue;
			}
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				leaks++;
		} else if (!strcmp(what, "nocachestat")) {
			usleep(1000);
		} else if (!strcmp(what, "exec")) {
			fflush(stdout);
			pid_t p = fork();
			if (p == 0) {
				execl(self, self, "--list", (char *)NULL);
				_exit(127);
			}
			int st;
			if (p < 0 || waitpid(p, &st, 0) != p) {
				fails++;
				continue;
			}
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				leaks++;
			if (leaks > 3)
				break; /* enough said */
		}
	}
	stop = 1;
	pthread_join(t, NULL);
	struct stat st;
	if (fstat(3, &st))
		printf("fstat big: %s\n", strerror(errno));
	printf("%s: ebadf=%ld other_file=%ld emfile=%ld not_fd4=%ld "
	       "fork_or_exec_children_with_extra_fd=%ld failures=%ld "
	       "big_size=%lld\n",
	       what, ebadf, other_file, emfile, not4, leaks, fails,
	       (long long)st.st_size);
	fprintf(stderr, "%s: %ld iterations\n", what, iters);
	return 0;
}

/* cachestat(2) fails with ENOSYS in this process and its children (a
 * kernel before 6.5, as the shim sees it). */
static int g_no_cachestat;

static int deny_cachestat(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		     offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 451, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* Run @argv in @dir, its stdout into @out.  The exit status. */
static int run_in(const char *dir, char *const *argv, char **out)
{
	char of[PATH_MAX];
	snprintf(of, sizeof(of), "%s.out", dir);
	fflush(NULL);
	pid_t p = fork();
	if (p == 0) {
		int fd = open(of, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		char ef[PATH_MAX + 8];
		snprintf(ef, sizeof(ef), "%s.err", dir);
		int efd = open(ef, O_CREAT | O_WRONLY | O_TRUNC, 0600);
		if (fd < 0 || efd < 0 || dup2(fd, 1) < 0 || dup2(efd, 2) < 0 ||
		    chdir(dir))
			_exit(126);
		close(efd);
		if (g_no_cachestat && deny_cachestat())
			_exit(125);
		close(fd);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	size_t len;
	*out = fkt_read_file(of, &len);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static uint64_t stats_field(const char *path, const char *key)
{
	size_t len;
	char *s = fkt_read_file(path, &len);
	uint64_t sum = 0;
	char pat[64];
	snprintf(pat, sizeof(pat), " %s=", key);
	for (char *p = s; p && (p = strstr(p, pat)); p += strlen(pat))
		sum += strtoull(p + strlen(pat), NULL, 10);
	free(s);
	return sum;
}

static void one(const char *fk, const char *what)
{
	const char *t = fkt_tmpdir();
	char dp[PATH_MAX], ds[PATH_MAX], stats[PATH_MAX + 16];
	snprintf(dp, sizeof(dp), "%s/%s-plain", t, what);
	snprintf(ds, sizeof(ds), "%s/%s-shim", t, what);
	snprintf(stats, sizeof(stats), "%s.stats", ds);
	CHECK(mkdir(dp, 0700) == 0);
	CHECK(mkdir(ds, 0700) == 0);
	unlink(stats);
	char sarg[PATH_MAX + 32];
	snprintf(sarg, sizeof(sarg), "--stats=%s", stats);
	if (!strcmp(what, "nocachestat")) {
		/* --stats to flushkit exec's stderr: its summary too. */
		snprintf(sarg, sizeof(sarg), "--stats");
		snprintf(stats, sizeof(stats), "%s.err", ds);
	}

	char *plain[] = {(char *)self, "--child", (char *)what, NULL};
	char *shim[] = {(char *)fk, "exec",	   "--flush-after",
			"64k",	    "--max-dirty", "256k",
			sarg,	    "--",	   (char *)self,
			"--child",  (char *)what,  NULL};
	char *op = NULL, *os = NULL;
	/* A sanitized build of this test: the shim is preloaded before the
	 * sanitizer runtime, which is fine for this use; say so to ASan. */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
	CHECK(run_in(dp, plain, &op) == 0);
	CHECK(run_in(ds, shim, &os) == 0);
	printf("plain: %s", op ? op : "(none)\n");
	printf("shim:  %s", os ? os : "(none)\n");
	CHECK(op && os && !strcmp(op, os));
	uint64_t waits = stats_field(stats, "waits");
	uint64_t bytes = stats_field(stats, "bytes_written");
	printf("%s: shim waits %llu bytes_written %llu\n", what,
	       (unsigned long long)waits, (unsigned long long)bytes);
	uint64_t skipped = stats_field(stats, "waits_skipped");
	if (!strcmp(what, "small")) {
		CHECK(bytes == 8);
	} else if (!strcmp(what, "nocachestat")) {
		/* No cachestat: every wait skipped, and counted. */
		printf("nocachestat: waits_skipped %llu\n",
		       (unsigned long long)skipped);
		CHECK(waits == 0);
		CHECK(skipped > 0);
		size_t el;
		char *err = fkt_read_file(stats, &el);
		printf("%s", err ? err : "(no stderr)\n");
		CHECK(err && strstr(err, " waits skipped"));
		free(err);
	} else {
		CHECK(op &&
		      strstr(op, " ebadf=0 other_file=0 emfile=0 "
				 "not_fd4=0 "
				 "fork_or_exec_children_with_extra_fd=0 "));
		CHECK(waits > 0);
	}

	char b1[PATH_MAX + 8], b2[PATH_MAX + 8];
	snprintf(b1, sizeof(b1), "%s/big", dp);
	snprintf(b2, sizeof(b2), "%s/big", ds);
	size_t l1 = 0, l2 = 0;
	char *c1 = fkt_read_file(b1, &l1), *c2 = fkt_read_file(b2, &l2);
	CHECK(c1 && c2 && l1 == l2 && !memcmp(c1, c2, l1));
	free(c1);
	free(c2);
	free(op);
	free(os);
	fkt_rm_rf(dp);
	fkt_rm_rf(ds);
}

int main(int argc, char **argv)
{
	char selfbuf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", selfbuf, sizeof(selfbuf) - 16);
	if (n <= 0)
		return 1;
	selfbuf[n] = 0;
	self = selfbuf;
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return child_list();
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(argv[2]);

	const char *fk = getenv("FLUSHKIT");
	char fkbuf[PATH_MAX];
	if (!fk) {
		snprintf(fkbuf, sizeof(fkbuf), "%s", selfbuf);
		strcpy(strrchr(fkbuf, '/'), "/../flushkit");
		fk = fkbuf;
	}
	struct statfs sfs;
	if (statfs(fkt_tmpdir(), &sfs) == 0 &&
	    (sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC))
		SKIP("%s is tmpfs: the shim leaves it alone", fkt_tmpdir());
	const char *only = getenv("FK_TEST_CASE");
	const char *cases[] = {"race", "limit", "fork", "exec", "small"};
	for (int i = 0; i < 5; i++)
		if (!only || !strcmp(only, cases[i]))
			one(fk, cases[i]);
	if (!only || !strcmp(only, "nocachestat")) {
		g_no_cachestat = 1;
		one(fk, "nocachestat");
		g_no_cachestat = 0;
	}
	return fkt_done();
}
