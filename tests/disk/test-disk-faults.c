// SPDX-License-Identifier: MIT
/*
 * test-disk-faults - the lab disk daemon's fault rules (flushkit-diskd,
 * disk/fault.h) and fkfault's stack on it: the control protocol on the
 * bare image (model ram, no write cache), the edges of rule matching,
 * then ext4 and xfs (loop device with and without direct I/O) over the
 * daemon, checking what the KERNEL does with a failed data write:
 *
 * 1. fsync() returns EIO (ENOSPC for an ENOSPC fault: loop turns the
 *    errno into BLK_STS_NOSPC and the file system passes it up).
 * 2. A second fsync() on the same descriptor returns 0: the error is
 *    reported once per open file description (errseq_t, Linux >= 4.13).
 *    Another descriptor opened BEFORE the error also gets it once; one
 *    opened AFTER it gets 0.  This is why flushkit keeps fsync errors
 *    sticky itself: whoever retries an fsync is told "success".
 * 3. The failed pages are marked clean and keep the NEW data: a read
 *    through the page cache returns data that is not on the disk; once
 *    the cache is dropped the OLD data comes back.
 * 4. Reads of a failed range return EIO once the page cache is dropped;
 *    after "clear" everything works again.
 * 5. FIEMAP: delalloc data has no block address (fkt_fiemap -ENODATA)
 *    until written back; fallocate'd (unwritten) extents have one.
 *
 * Rule matching (test_rules): a range rule fails a request that
 * overlaps [OFF, OFF+LEN) by one byte and no request that only touches
 * its edges; LEN 0 runs to the end of the image; an "after" rule counts
 * only the requests of its kinds; the first matching rule's errno wins
 * and the rules behind it do not see the request;
 * an "f" rule fails the FUSE flush of a close too; several lines go in
 * one write; a wrong line is refused (EINVAL) and adds nothing.
 *
 * Orphan cleanup (test_orphan): a child with ext4 mounted on a stack
 * dies by SIGKILL; the daemon (--orphan-cleanup, its parent-death
 * signal) unmounts the ext4 and itself and exits within 10 s.
 *
 * fkfault fails the test if the daemon does not exit with status 0
 * after its unmount (a crash or a sanitizer's report).  Skips (77) when
 * not root, without /dev/fuse, loop devices or flushkit-diskd.
 */
#include "fkfault.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_BYTES (256 * 1024)

static char buf[FILE_BYTES], want[FILE_BYTES];

static int fsync_err(int fd)
{
	return fsync(fd) == 0 ? 0 : errno;
}

static void fill(char *p, char c)
{
	memset(p, c, FILE_BYTES);
}

static int pwrite_all(int fd, const char *p, size_t len, off_t off)
{
	return pwrite(fd, p, len, off) == (ssize_t)len ? 0 : -1;
}

/* The control protocol on the bare image (no loop device). */
static void test_protocol(void)
{
	struct fkt_dev d;
	int r = fkt_dev_start(&d, 1 << 20, NULL);
	if (r == 77)
		SKIP("needs root, /dev/fuse and flushkit-diskd");
	CHECK_EQ(r, 0);
	if (r)
		return;
	int fd = open(d.image, O_RDWR);
	CHECK(fd >= 0);
	char b[4096];
	memset(b, 'x', sizeof(b));

	/* after N: N successes, then failures with the chosen errno. */
	CHECK_EQ(fkt_dev_fail_after(&d, FKT_OP_WRITE, ENOSPC, 2), 0);
	CHECK_EQ(pwrite(fd, b, sizeof(b), 0), (ssize_t)sizeof(b));
	CHECK_EQ(pwrite(fd, b, sizeof(b), 4096), (ssize_t)sizeof(b));
	errno = 0;
	CHECK_EQ(pwrite(fd, b, sizeof(b), 8192), -1);
	CHECK_EQ(errno, ENOSPC);
	CHECK_EQ(pread(fd, b, sizeof(b), 0), (ssize_t)sizeof(b));
	CHECK_EQ(fsync_err(fd), 0);
	CHECK_EQ(fkt_dev_clear(&d), 0);

	/* range rules: reads only, the overlapping request only. */
	CHECK_EQ(fkt_dev_fail_range(&d, FKT_OP_READ, EIO, 10000, 100), 0);
	errno = 0;
	CHECK_EQ(pread(fd, b, sizeof(b), 8192), -1); /* 8192..12287 */
	CHECK_EQ(errno, EIO);
	CHECK_EQ(pread(fd, b, sizeof(b), 12288), (ssize_t)sizeof(b));
	CHECK_EQ(pwrite(fd, b, sizeof(b), 8192), (ssize_t)sizeof(b));

	/* fsync rules; "all" fails everything of its kinds. */
	CHECK_EQ(fkt_dev_fail_after(&d, FKT_OP_FSYNC, EIO, 0), 0);
	CHECK_EQ(fsync_err(fd), EIO);
	CHECK_EQ(fkt_dev_fail_after(&d, FKT_OP_ALL, EIO, 0), 0);
	CHECK_EQ(pwrite(fd, b, sizeof(b), 0), -1);

	struct fkt_dev_counters c;
	CHECK_EQ(fkt_dev_counters(&d, &c), 0);
	CHECK_EQ(c.rules, 3);
	CHECK_EQ(c.writes, 5);
	CHECK_EQ(c.write_faults, 2);
	CHECK_EQ(c.write_bytes, 3 * 4096);
	CHECK_EQ(c.read_faults, 1);
	CHECK_EQ(c.fsync_faults, 1);

	CHECK_EQ(fkt_dev_clear(&d), 0);
	CHECK_EQ(pwrite(fd, b, sizeof(b), 0), (ssize_t)sizeof(b));
	CHECK_EQ(fsync_err(fd), 0);
	CHECK_EQ(fkt_dev_reset_counters(&d), 0);
	CHECK_EQ(fkt_dev_counters(&d, &c), 0);
	CHECK_EQ(c.writes + c.faults + c.rules, 0);

	/* A bad control line is refused. */
	int cfd = open(d.ctl, O_WRONLY);
	CHECK(cfd >= 0);
	errno = 0;
	CHECK_EQ(write(cfd, "fail x EIO 0 0\n", 15), -1);
	CHECK_EQ(errno, EINVAL);
	close(cfd);
	close(fd);
	fkt_dev_stop(&d);
}

static int ctl_write(struct fkt_dev *d, const char *text)
{
	int fd = open(d->ctl, O_WRONLY);
	if (fd < 0)
		return errno;
	ssize_t n = write(fd, text, strlen(text));
	int e = n == (ssize_t)strlen(text) ? 0 : n < 0 ? errno : EIO;
	close(fd);
	return e;
}

/* 0 if the request of @len bytes at @off passed, else its errno. */
static int wr(int fd, const char *b, size_t len, off_t off)
{
	return pwrite(fd, b, len, off) == (ssize_t)len ? 0 : errno;
}

static int rd(int fd, char *b, size_t len, off_t off)
{
	return pread(fd, b, len, off) == (ssize_t)len ? 0 : errno;
}

/* The edges of rule matching (see the banner). */
static void test_rules(void)
{
	struct fkt_dev d;
	int r = fkt_dev_start(&d, 1 << 20, NULL);
	if (r == 77)
		SKIP("needs root, /dev/fuse and flushkit-diskd");
	CHECK_EQ(r, 0);
	if (r)
		return;
	/* The disk fkfault asked for: model ram, no write cache. */
	char *text = fkt_read_file(d.ctl, NULL);
	CHECK(text && strstr(text, "\nmodel ram\n"));
	CHECK(text && strstr(text, "\nwrite_cache 0\n"));
	CHECK(text && strstr(text, "\nsize 1048576\n"));
	free(text);

	int fd = open(d.image, O_RDWR);
	CHECK(fd >= 0);
	char b[8192];
	memset(b, 'r', sizeof(b));

	/* Range [8192, 12288): touching its edges is no overlap, one byte
	 * in is. */
	CHECK_EQ(fkt_dev_fail_range(&d, FKT_OP_WRITE, EIO, 8192, 4096), 0);
	CHECK_EQ(wr(fd, b, 4096, 4096), 0);   /* ends at OFF */
	CHECK_EQ(wr(fd, b, 4096, 12288), 0);  /* starts at OFF+LEN */
	CHECK_EQ(wr(fd, b, 4097, 4096), EIO); /* one byte in, at the start */
	CHECK_EQ(wr(fd, b, 1, 12287), EIO);   /* the last byte */
	CHECK_EQ(wr(fd, b, 8192, 6144), EIO); /* straddles, fails whole */
	CHECK_EQ(rd(fd, b, 4096, 8192), 0);   /* w only: reads pass */
	CHECK_EQ(fsync_err(fd), 0);	      /* and fsyncs */
	CHECK_EQ(fkt_dev_clear(&d), 0);
	/* A failed write touched nothing: the bytes at 8192 are still the
	 * zeros of the sparse backing file. */
	CHECK_EQ(rd(fd, b, 4096, 8192), 0);
	CHECK(b[0] == 0 && b[4095] == 0);
	memset(b, 'r', sizeof(b));

	/* LEN 0: from OFF to the end of the image. */
	CHECK_EQ(fkt_dev_fail_range(&d, FKT_OP_READ, EIO, (1 << 20) - 4096, 0),
		 0);
	CHECK_EQ(rd(fd, b, 4096, (1 << 20) - 8192), 0);
	CHECK_EQ(rd(fd, b, 4096, (1 << 20) - 4096), EIO);
	CHECK_EQ(fkt_dev_clear(&d), 0);

	/* after N counts its own kinds only: reads do not use up a write
	 * rule's successes. */
	CHECK_EQ(fkt_dev_fail_after(&d, FKT_OP_WRITE, EIO, 1), 0);
	CHECK_EQ(rd(fd, b, 4096, 0), 0);
	CHECK_EQ(rd(fd, b, 4096, 0), 0);
	CHECK_EQ(wr(fd, b, 4096, 0), 0);
	CHECK_EQ(wr(fd, b, 4096, 0), EIO);
	CHECK_EQ(wr(fd, b, 4096, 0), EIO);
	text = fkt_read_file(d.ctl, NULL);
	CHECK(text && strstr(text, "\nrule after 0 w 5\n"));
	free(text);
	CHECK_EQ(fkt_dev_clear(&d), 0);

	/* The first matching rule's errno wins; errno by number, several
	 * lines in one write. */
	CHECK_EQ(ctl_write(&d, "fail w 28 0 4096\nfail w EIO 0 0\n"), 0);
	CHECK_EQ(wr(fd, b, 4096, 0), ENOSPC);
	CHECK_EQ(wr(fd, b, 4096, 4096), EIO);
	CHECK_EQ(fkt_dev_clear(&d), 0);
	/* An "after" rule before the failing rule counts the request as a
	 * success of its own; one behind it does not see it. */
	CHECK_EQ(ctl_write(&d, "after 1 w EIO\nfail w ENOSPC 0 0\n"
			       "after 1 w EROFS\n"),
		 0);
	CHECK_EQ(wr(fd, b, 4096, 0), ENOSPC); /* EIO rule: 1 -> 0 */
	CHECK_EQ(wr(fd, b, 4096, 0), EIO);
	text = fkt_read_file(d.ctl, NULL);
	CHECK(text && strstr(text, "\nrule after 1 w 30\n"));
	free(text);
	CHECK_EQ(fkt_dev_clear(&d), 0);

	/* An f rule fails fsync and the flush of a close of the image. */
	CHECK_EQ(ctl_write(&d, "all f EROFS\n"), 0);
	CHECK_EQ(fsync_err(fd), EROFS);
	int fd2 = open(d.image, O_RDWR);
	CHECK(fd2 >= 0);
	errno = 0;
	CHECK_EQ(close(fd2), -1);
	CHECK_EQ(errno, EROFS);
	CHECK_EQ(wr(fd, b, 4096, 0), 0); /* writes are not f */
	struct fkt_dev_counters c;
	CHECK_EQ(fkt_dev_counters(&d, &c), 0);
	CHECK(c.fsyncs >= 1 && c.flushes >= 1);
	CHECK(c.fsync_faults >= 2);
	CHECK_EQ(fkt_dev_clear(&d), 0);

	/* Wrong lines are refused and add no rule; one bad line of a batch
	 * fails the write. */
	static const char *bad[] = {
	    "fail w EIO 0\n",	 "fail w EIO 0 0 9\n",
	    "fail q EIO 0 0\n",	 "fail w EFOO 0 0\n",
	    "fail w EIO -1 0\n", "after w 1 EIO\n",
	    "after 1 w\n",	 "all w\n",
	    "all w EIO x\n",	 "clear now\n",
	    "reset all\n",	 "explode\n",
	    "fail w 0 0 0\n",	 "fail  EIO 0 0\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int e = ctl_write(&d, bad[i]);
		if (e != EINVAL)
			fprintf(stderr, "ctl line '%.*s': %s\n",
				(int)strlen(bad[i]) - 1, bad[i], strerror(e));
		CHECK_EQ(e, EINVAL);
	}
	CHECK_EQ(fkt_dev_counters(&d, &c), 0);
	CHECK_EQ(c.rules, 0);
	CHECK_EQ(wr(fd, b, 4096, 0), 0);
	close(fd);
	fkt_dev_stop(&d);
}

static void test_fs(const char *type, uint64_t bytes, unsigned flags, int err)
{
	fprintf(stderr, "-- %s%s, %s\n", type,
		flags & FKT_STACK_DIO ? " (loop direct I/O)" : "",
		strerror(err));
	struct fkt_stack st;
	int r = fkt_stack_create(&st, type, bytes, flags);
	if (r == 77)
		SKIP("needs root, /dev/fuse, loop devices, mkfs.%s", type);
	CHECK_EQ(r, 0);
	if (r)
		return;
	char path[700];
	snprintf(path, sizeof(path), "%s/f", st.fs.mnt);

	/* Old data, on disk (blocks allocated). */
	int a = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(a >= 0);
	fill(want, 'o');
	CHECK_EQ(pwrite_all(a, want, FILE_BYTES, 0), 0);
	CHECK_EQ(fsync_err(a), 0);
	int b = open(path, O_RDONLY); /* opened before the error */
	CHECK(b >= 0);

	struct fkt_extent ext[16];
	int n = fkt_fiemap(path, 0, ext, 16);
	CHECK(n >= 1);
	uint64_t total = 0;
	for (int i = 0; i < n; i++)
		total += ext[i].len;
	CHECK_EQ(total, FILE_BYTES);
	CHECK_EQ(fkt_dev_fail_file(&st.dev, path, FKT_OP_WRITE, err), n);

	/* New data, its writeback fails. */
	fill(buf, 'n');
	CHECK_EQ(pwrite_all(a, buf, FILE_BYTES, 0), 0);
	CHECK_EQ(fsync_err(a), err);
	CHECK_EQ(fsync_err(a), 0);   /* reported once per description */
	CHECK_EQ(fsync_err(b), err); /* b was open: it gets it, once */
	CHECK_EQ(fsync_err(b), 0);
	int c = open(path, O_RDONLY); /* opened after: nothing to report */
	CHECK(c >= 0);
	CHECK_EQ(fsync_err(c), 0);
	close(c);
	struct fkt_dev_counters cnt;
	CHECK_EQ(fkt_dev_counters(&st.dev, &cnt), 0);
	CHECK(cnt.write_faults >= 1);

	/* The clean page cache holds data the disk does not have. */
	CHECK_EQ(pread(a, buf, FILE_BYTES, 0), FILE_BYTES);
	CHECK(buf[0] == 'n' && buf[FILE_BYTES - 1] == 'n');
	CHECK_EQ(fkt_drop_file_cache(path), 0);
	CHECK_EQ(pread(a, buf, FILE_BYTES, 0), FILE_BYTES);
	CHECK(!memcmp(buf, want, FILE_BYTES)); /* old data is back */

	/* Reads of the failed range fail once they reach the device. */
	CHECK_EQ(fkt_dev_clear(&st.dev), 0);
	CHECK_EQ(
	    fkt_dev_fail_range(&st.dev, FKT_OP_READ, EIO, ext[0].dev_off, 4096),
	    0);
	CHECK_EQ(fkt_drop_file_cache(path), 0);
	errno = 0;
	CHECK_EQ(pread(a, buf, 4096, 0), -1);
	CHECK_EQ(errno, EIO);
	CHECK_EQ(fkt_dev_counters(&st.dev, &cnt), 0);
	CHECK(cnt.read_faults >= 1);

	/* Clear: writes and reads work again. */
	CHECK_EQ(fkt_dev_clear(&st.dev), 0);
	fill(want, 'c');
	CHECK_EQ(pwrite_all(a, want, FILE_BYTES, 0), 0);
	CHECK_EQ(fsync_err(a), 0);
	CHECK_EQ(fkt_drop_file_cache(path), 0);
	CHECK_EQ(pread(a, buf, FILE_BYTES, 0), FILE_BYTES);
	CHECK(!memcmp(buf, want, FILE_BYTES));
	close(a);
	close(b);

	/* FIEMAP: delayed allocation has no address until written back;
	 * fallocate gives unwritten extents an address at once. */
	char p2[720];
	snprintf(p2, sizeof(p2), "%s/delalloc", st.fs.mnt);
	CHECK_EQ(fkt_write_file(p2, 65536, 1), 0);
	CHECK_EQ(fkt_fiemap(p2, 0, ext, 16), -ENODATA);
	n = fkt_fiemap(p2, FKT_FIEMAP_SYNC, ext, 16);
	CHECK(n >= 1 && ext[0].len >= 65536 && !ext[0].unwritten);
	snprintf(p2, sizeof(p2), "%s/prealloc", st.fs.mnt);
	int pf = open(p2, O_RDWR | O_CREAT, 0600);
	CHECK(pf >= 0);
	CHECK_EQ(posix_fallocate(pf, 0, 65536), 0);
	close(pf);
	n = fkt_fiemap(p2, 0, ext, 16);
	CHECK(n >= 1 && ext[0].unwritten && ext[0].dev_off > 0);

	/* And the data survives a clean remount. */
	CHECK_EQ(fkt_stack_umount(&st), 0);
	CHECK_EQ(fkt_stack_mount(&st), 0);
	char *got = fkt_read_file(path, NULL);
	CHECK(got && !memcmp(got, want, FILE_BYTES));
	free(got);
	/* fkloop's power cut works on the stack (its own loop device). */
	CHECK_EQ(fkt_fs_power_cut(&st.fs), 0);
	got = fkt_read_file(path, NULL);
	CHECK(got && !memcmp(got, want, FILE_BYTES));
	free(got);
	fkt_stack_destroy(&st);
}

/* Is anything mounted at a path that starts with @prefix? */
static int mounted_under(const char *prefix)
{
	char *m = fkt_read_file("/proc/self/mountinfo", NULL);
	int hit = 0;
	for (char *line = m; line && *line && !hit;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char mp[4096];
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) == 1 &&
		    !strncmp(mp, prefix, strlen(prefix)))
			hit = 1;
		line = nl ? nl + 1 : line + strlen(line);
	}
	free(m);
	return hit;
}

/* --orphan-cleanup: a test killed by SIGKILL with ext4 mounted on the
 * daemon's loop device leaves no mount and no daemon behind. */
static void test_orphan(void)
{
	fprintf(stderr, "-- orphan cleanup\n");
	int p[2];
	CHECK_EQ(pipe(p), 0);
	fkt_tmpdir(); /* the child's stack goes into our temp dir */
	fflush(NULL);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child < 0)
		return;
	if (child == 0) {
		close(p[0]);
		static struct fkt_stack st;
		int r = fkt_stack_create(&st, "ext4", 64 << 20, 0);
		char msg[400] = "";
		if (r == 0) {
			char path[700];
			snprintf(path, sizeof(path), "%s/f", st.fs.mnt);
			fkt_write_file(path, 65536, 'k');
			snprintf(msg, sizeof(msg), "%d %s", (int)st.dev.pid,
				 st.dev.dir);
		}
		if (write(p[1], msg, strlen(msg) + 1) < 0)
			_exit(1);
		if (r)
			_exit(r == 77 ? 77 : 1);
		raise(SIGKILL); /* no atexit, no signal handler */
		_exit(1);
	}
	close(p[1]);
	char msg[400] = "";
	ssize_t n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	int status;
	waitpid(child, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		SKIP("needs root, /dev/fuse, loop devices, mkfs.ext4");
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	int pid = 0;
	char dir[300] = "";
	CHECK(n > 0 && sscanf(msg, "%d %299s", &pid, dir) == 2);
	if (!pid || !dir[0])
		return;
	int gone = 0;
	for (int i = 0; i < 200 && !gone; i++) {
		gone =
		    kill(pid, 0) != 0 && errno == ESRCH && !mounted_under(dir);
		if (!gone)
			usleep(50 * 1000);
	}
	if (!gone)
		fprintf(stderr, "daemon %d alive: %d, mounts under %s: %d\n",
			pid, kill(pid, 0) == 0, dir, mounted_under(dir));
	CHECK(gone);
	if (gone)
		fkt_rm_rf(dir);
}

int main(void)
{
	test_protocol();
	test_rules();
	test_fs("ext4", 64 << 20, 0, EIO);
	test_fs("ext4", 64 << 20, FKT_STACK_DIO, EIO);
	test_fs("ext4", 64 << 20, 0, ENOSPC);
	if (system("command -v mkfs.xfs >/dev/null 2>&1") == 0) {
		test_fs("xfs", 300 << 20, 0, EIO);
		test_fs("xfs", 300 << 20, FKT_STACK_DIO, ENOSPC);
	}
	test_orphan();
	return fkt_done();
}
