// SPDX-License-Identifier: MIT
/*
 * test-sys.c - the syscall table returns -errno, retries nothing into
 * success, and can be replaced for tracing and fault injection.
 */
#include "fktest.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int main(void)
{
	const char *dir = fkt_tmpdir();
	int dfd = fk_sys.openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0);
	CHECK(dfd >= 0);

	/* Errors come back as -errno. */
	CHECK_EQ(fk_sys.openat(dfd, "missing", O_RDONLY, 0), -ENOENT);
	CHECK_EQ(fk_sys.fsync(-1), -EBADF);

	int fd = fk_sys.openat(dfd, "f", O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(fk_pwrite_all(fd, "hello", 5, 0), 0);
	char buf[8] = {0};
	CHECK_EQ(fk_pread_all(fd, buf, sizeof(buf), 0), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);

	/* Tracing records calls with their paths, in order. */
	fkt_trace_start();
	CHECK_EQ(fk_sys.fdatasync(fd), 0);
	CHECK_EQ(fk_sys.fsync(fd), 0);
	CHECK_EQ(fk_sys.fsync(dfd), 0);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 2);
	CHECK_EQ(fkt_trace_find("fdatasync", "/f", 0), 0);
	CHECK_EQ(fkt_trace_find("fsync", "/f", 0), 1);

	/* An injected fault fires on the chosen call only. */
	fkt_fault_set("fsync", "/f", 2, -EIO);
	CHECK_EQ(fk_sys.fsync(fd), 0);
	CHECK_EQ(fk_sys.fsync(fd), -EIO);
	CHECK_EQ(fk_sys.fsync(fd), 0);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK(fk_sys.fsync == fk_sys_default.fsync);

	fk_sys.close(fd);
	fk_sys.close(dfd);
	return fkt_done();
}
