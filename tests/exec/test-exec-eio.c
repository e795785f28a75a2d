// SPDX-License-Identifier: MIT
/*
 * test-exec-eio.c - the shim's waits never eat a writeback error: a
 * program whose writes fail in writeback still gets EIO from its own
 * fsync under the shim.
 *
 * sync_file_range's WAIT flags check and advance the writeback error
 * cursor of the struct file they are called on, so a shim that waited on
 * the program's descriptor would take the EIO and the program's fsync
 * would return 0.  The shim's waits start writeback without waiting
 * (SYNC_FILE_RANGE_WRITE) and poll cachestat(2), which consumes no error
 * (shim.c).  Here: ext4 on the lab disk daemon (flushkit-diskd, model
 * ram; fkfault.h), a file whose blocks fail every write with EIO, and a
 * child (this program with --child) that overwrites 4 MiB of it and
 * fsyncs, plain and under the shim with tiny thresholds (so it hints and
 * waits, and its waits meet the error).  The child's fsync must fail with
 * EIO both times; the shim's counters must show waits.  Needs root,
 * /dev/fuse, loop devices (else 77).
 */
#include "fkfault.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024 * 1024)

static int child(const char *path)
{
	char *buf = malloc(64 * 1024);
	memset(buf, 'e', 64 * 1024);
	int fd = open(path, O_WRONLY), bad = fd < 0;
	for (off_t off = 0; !bad && off < 4 * MiB; off += 64 * 1024)
		bad = pwrite(fd, buf, 64 * 1024, off) != 64 * 1024;
	free(buf);
	if (bad)
		return 2;
	errno = 0;
	int r = fsync(fd);
	int e = errno;
	printf("child fsync: %d (%s)\n", r, r ? strerror(e) : "ok");
	close(fd);
	return r == -1 && e == EIO ? 0 : 3;
}

static int run(const char *self, const char *path, char **env)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (char **e = env; e && *e; e++)
			putenv(*e);
		execl(self, self, "--child", path, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * A file with allocated blocks whose first 1 MiB fails every write from
 * now on.  Only the head fails: the shim waits for the oldest ranges, so
 * the error is met by its waits, and the fsync's own writeback of the
 * tail succeeds: a shim that consumed the error would leave the fsync
 * returning 0.
 */
static void prepare(struct fkt_stack *st, const char *path)
{
	struct fkt_extent ext[8];
	CHECK_EQ(fkt_write_file(path, 4 * MiB, 1), 0);
	int fd = open(path, O_RDWR);
	CHECK_EQ(fsync(fd), 0);
	close(fd);
	/* The head may lie in more than one extent (ext4 splits the
	 * allocation when writeback starts while the file is written, as
	 * it did on a loaded CI machine): fail each extent's part of it. */
	int n = fkt_fiemap(path, 0, ext, 8);
	CHECK(n > 0 && ext[0].file_off == 0);
	uint64_t covered = 0;
	for (int i = 0; i < n && ext[i].file_off < MiB; i++) {
		uint64_t len = ext[i].len;
		if (ext[i].file_off + len > MiB)
			len = MiB - ext[i].file_off;
		CHECK_EQ(fkt_dev_fail_range(&st->dev, FKT_OP_WRITE, EIO,
					    ext[i].dev_off, len),
			 0);
		covered += len;
	}
	CHECK_EQ(covered, (uint64_t)MiB);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child(argv[2]);

	char self[PATH_MAX], so[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	snprintf(so, sizeof(so), "%s", self);
	strcpy(strrchr(so, '/'), "/../libflushkit-preload.so");
	if (access(so, R_OK)) {
		fprintf(stderr, "FAIL: no shim at %s\n", so);
		return 1;
	}

	struct fkt_stack st;
	int r = fkt_stack_create(&st, "ext4", 64 * MiB, 0);
	if (r == 77)
		SKIP("needs root, /dev/fuse and loop devices");
	CHECK_EQ(r, 0);
	if (r)
		return fkt_done();

	char p1[PATH_MAX], p2[PATH_MAX], stats[PATH_MAX];
	snprintf(p1, sizeof(p1), "%s/plain", st.fs.mnt);
	snprintf(p2, sizeof(p2), "%s/shim", st.fs.mnt);
	snprintf(stats, sizeof(stats), "%s/stats", fkt_tmpdir());

	prepare(&st, p1);
	printf("plain:\n");
	CHECK_EQ(run(self, p1, NULL), 0);
	fkt_dev_clear(&st.dev);

	prepare(&st, p2);
	char env_so[PATH_MAX + 80], env_st[PATH_MAX + 40];
	snprintf(env_so, sizeof(env_so), "LD_PRELOAD=%s", so);
	snprintf(env_st, sizeof(env_st), "FLUSHKIT_STATS=%s", stats);
	char *env[] = {env_so,
		       "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0",
		       "FLUSHKIT_FLUSH_AFTER=65536",
		       "FLUSHKIT_MAX_DIRTY=131072",
		       env_st,
		       NULL};
	printf("under the shim:\n");
	CHECK_EQ(run(self, p2, env), 0);
	struct fkt_dev_counters c;
	CHECK_EQ(fkt_dev_counters(&st.dev, &c), 0);
	printf("write faults %llu\n", (unsigned long long)c.write_faults);
	CHECK(c.write_faults > 0);
	fkt_dev_clear(&st.dev);

	size_t len;
	char *s = fkt_read_file(stats, &len);
	CHECK(s != NULL);
	if (s) {
		printf("shim: %s", s);
		CHECK(strstr(s, " waits=0 ") == NULL);
		CHECK(strstr(s, " hints=0 ") == NULL);
	}
	free(s);
	fkt_stack_destroy(&st);
	return fkt_done();
}
