// SPDX-License-Identifier: MIT
/*
 * test-probe.c - fk_probe_sync_file_range: classification of errors,
 * known no-op file systems, and the per-file-system cache.  Run on the
 * test directory's file system: where that is a no-op one (ZFS) the
 * checks of the real call say "not checked" (there is no call to see),
 * as does the "ext4 and xfs work" check elsewhere.
 */
#include "fktest.h"
#include "probe.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define EXT4_MAGIC 0xEF53
#define XFS_MAGIC 0x58465342
#define ZFS_MAGIC 0x2fc12fc2

static int fake_zfs(int fd, struct statfs *st)
{
	int r = fk_sys_default.fstatfs(fd, st);
	st->f_type = ZFS_MAGIC;
	return r;
}

static int fstatfs_calls;
static int count_fstatfs(int fd, struct statfs *st)
{
	__atomic_add_fetch(&fstatfs_calls, 1, __ATOMIC_SEQ_CST);
	return fk_sys_default.fstatfs(fd, st);
}

static int file_fd;
/* The answer for file_fd's file system, from test_first_probe. */
static int real_answer;

static void *probe_thread(void *arg)
{
	int *out = arg;
	int first = fk_probe_sync_file_range(file_fd);
	for (int i = 0; i < 200; i++) {
		if (fk_probe_sync_file_range(file_fd) != first) {
			*out = -1000; /* disagreement */
			return NULL;
		}
	}
	*out = first;
	return NULL;
}

/* Probe with sync_file_range failing with @err; expect @want. */
static void probe_with_fault(int fd, int err, int want)
{
	fk_probe_reset();
	fkt_trace_start();
	fkt_fault_set("sync_file_range", NULL, 0, err);
	CHECK_EQ(fk_probe_sync_file_range(fd), want);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	fkt_trace_stop();
}

/* A descriptor that cannot be examined. */
static void test_bad_fd(void)
{
	CHECK_EQ(fk_probe_sync_file_range(-1), -EBADF);
}

/* First probe: one sync_file_range call that starts no writeback (one
 * byte at end of file, never length 0 = "to EOF"); then cached. */
static void test_first_probe(void)
{
	int fd = file_fd;
	struct statfs sfs;
	CHECK_EQ(fk_sys.fstatfs(fd, &sfs), 0);
	fk_probe_reset();
	fkt_trace_start();
	int r = fk_probe_sync_file_range(fd);
	real_answer = r;
	CHECK(r == FK_SFR_WORKS || r == FK_SFR_NOOP || r == FK_SFR_UNSUPPORTED);
	if (sfs.f_type == EXT4_MAGIC || sfs.f_type == XFS_MAGIC)
		CHECK_EQ(r, FK_SFR_WORKS);
	else
		printf("not checked: ext4 and xfs answer FK_SFR_WORKS (the "
		       "test directory is on f_type 0x%llx)\n",
		       (unsigned long long)sfs.f_type);
	if (r != FK_SFR_NOOP) {
		CHECK_EQ(fkt_trace_nr("sync_file_range", "/f"), 1);
		long i = fkt_trace_find("sync_file_range", "/f", 0);
		CHECK(i >= 0);
		if (i >= 0) {
			CHECK_EQ(fkt_trace_get((size_t)i)->off, 10000);
			CHECK_EQ(fkt_trace_get((size_t)i)->len, 1);
		}
	} else {
		printf("not checked: the probe's one-byte sync_file_range "
		       "call (a no-op file system: no call is made)\n");
	}
	/* Cached: no further call for the same file system. */
	CHECK_EQ(fk_probe_sync_file_range(fd), r);
	CHECK_EQ(fk_probe_sync_file_range(fd), r);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL),
		 r == FK_SFR_NOOP ? 0 : 1);
	fkt_trace_stop();
}

/* The errors that mean "unsupported", and their answer is cached. */
static void test_unsupported_errors(void)
{
	int fd = file_fd;
	probe_with_fault(fd, -ENOSYS, FK_SFR_UNSUPPORTED);
	probe_with_fault(fd, -EINVAL, FK_SFR_UNSUPPORTED);
	probe_with_fault(fd, -ESPIPE, FK_SFR_UNSUPPORTED);
	/* ... and the answer is cached: no call at all now. */
	fkt_trace_start();
	CHECK_EQ(fk_probe_sync_file_range(fd), FK_SFR_UNSUPPORTED);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	fkt_trace_stop();
}

/* ENOSYS means the kernel lacks the call: every file system. */
static void test_enosys_everywhere(void)
{
	fk_probe_reset();
	CHECK_EQ(fk_probe_sfr_classify(-ENOSYS), FK_SFR_UNSUPPORTED);
	dev_t dev = 0;
	CHECK_EQ(fk_probe_sfr_lookup(file_fd, &dev), FK_SFR_UNSUPPORTED);
}

/* Another error is this call's failure, not the file system's
 * property: returned, not cached. */
static void test_other_error_not_cached(void)
{
	int fd = file_fd;
	fk_probe_reset();
	fkt_trace_start();
	fkt_fault_set("sync_file_range", NULL, 1, -EIO);
	CHECK_EQ(fk_probe_sync_file_range(fd), -EIO);
	fkt_fault_clear();
	CHECK_EQ(fk_probe_sync_file_range(fd), real_answer);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 2);
	fkt_trace_stop();
	CHECK_EQ(fk_probe_sfr_classify(-EIO), -1);
	CHECK_EQ(fk_probe_sfr_classify(0), FK_SFR_WORKS);
}

/* A known no-op file system (ZFS by f_type): no call is made. */
static void test_noop_fs(void)
{
	int fd = file_fd;
	dev_t dev = 0;
	fk_probe_reset();
	fkt_trace_start();
	fk_sys.fstatfs = fake_zfs;
	CHECK_EQ(fk_probe_sync_file_range(fd), FK_SFR_NOOP);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), 0);
	fk_probe_reset();
	CHECK_EQ(fk_probe_sfr_lookup(fd, &dev), FK_SFR_NOOP);
	fkt_trace_stop();
}

/* The cache is per file system: a pipe (pipefs) is unsupported (ESPIPE)
 * and does not change the answer for the file. */
static void test_per_fs_cache(void)
{
	int fd = file_fd;
	fk_probe_reset();
	int p[2];
	CHECK_EQ(pipe(p), 0);
	CHECK_EQ(fk_probe_sync_file_range(p[0]), FK_SFR_UNSUPPORTED);
	CHECK_EQ(fk_probe_sync_file_range(fd), real_answer);
	CHECK_EQ(fk_probe_sync_file_range(p[1]), FK_SFR_UNSUPPORTED);
	close(p[0]);
	close(p[1]);
}

/* lookup: unknown until a real call teaches the cache. */
static void test_lookup_learn(void)
{
	int fd = file_fd;
	dev_t dev = 0;
	fk_probe_reset();
	if (real_answer != FK_SFR_NOOP) {
		CHECK_EQ(fk_probe_sfr_lookup(fd, &dev), FK_SFR_UNKNOWN);
		fk_probe_sfr_learn(dev, FK_SFR_UNSUPPORTED);
		CHECK_EQ(fk_probe_sfr_lookup(fd, &dev), FK_SFR_UNSUPPORTED);
		CHECK_EQ(fk_probe_sync_file_range(fd), FK_SFR_UNSUPPORTED);
	} else {
		printf("not checked: lookup is unknown until a real call "
		       "teaches the cache (a no-op file system is known "
		       "without a call)\n");
	}
	CHECK_EQ(fk_probe_sfr_lookup(-1, &dev), -EBADF);
}

/* Thread-safe: concurrent probes agree, and the file system type is
 * looked at a bounded number of times (once per racing miss). */
static void test_threads(void)
{
	fk_probe_reset();
	fk_sys.fstatfs = count_fstatfs;
	pthread_t th[4];
	int res[4];
	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, probe_thread, &res[i]),
			 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(res[i], real_answer);
	}
	CHECK(fstatfs_calls >= 1 && fstatfs_calls <= 4);
	fk_sys_reset();
}

int main(void)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/f", fkt_tmpdir());
	CHECK_EQ(fkt_write_file(path, 10000, 1), 0);
	int fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	if (fd < 0)
		return fkt_done();
	file_fd = fd;

	test_bad_fd();
	test_first_probe();
	test_unsupported_errors();
	test_enosys_everywhere();
	test_other_error_not_cached();
	test_noop_fs();
	test_per_fs_cache();
	test_lookup_learn();
	test_threads();

	close(fd);
	fk_probe_reset();
	return fkt_done();
}
