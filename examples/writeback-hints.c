// SPDX-License-Identifier: MIT
/*
 * writeback-hints.c - write a big file with early writeback hints, then
 * make it durable.
 *
 * Without hints the kernel keeps every written page dirty until its
 * flusher threads or the final fsync write it back, and that fsync then
 * stalls every other writer behind a burst of I/O.  struct fk_writeback
 * starts writeback of what was written every flush_after_bytes
 * (sync_file_range(SYNC_FILE_RANGE_WRITE)), so the fsync at the end has
 * little left to do.  The hints are never a durability promise: only
 * the fsync is.
 *
 *   usage: writeback-hints FILE [MIB]
 */
#include <flushkit.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: writeback-hints FILE [MIB]\n");
		return 2;
	}
	const char *path = argv[1];
	uint64_t mib = argc == 3 ? strtoull(argv[2], NULL, 10) : 8;
	static char buf[64 * 1024];
	memset(buf, 'x', sizeof(buf));

	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "writeback-hints: open '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	struct fk_writeback wb;
	fk_writeback_init(&wb, FK_WRITEBACK_DEFAULT_FLUSH_AFTER);
	uint64_t off = 0;
	for (uint64_t i = 0; i < mib * 16; i++) {
		ssize_t n = pwrite(fd, buf, sizeof(buf), (off_t)off);
		if (n != (ssize_t)sizeof(buf)) {
			fprintf(stderr, "writeback-hints: write '%s': %s\n",
				path, n < 0 ? strerror(errno) : "short write");
			fk_writeback_release(&wb);
			close(fd);
			return 1;
		}
		/* A hint's error is a warning of what fsync will say. */
		int r = fk_writeback_note(&wb, fd, off, (uint64_t)n);
		if (r)
			fprintf(stderr,
				"writeback-hints: warning: "
				"sync_file_range '%s': %s\n",
				path, fk_strerror(r));
		off += (uint64_t)n;
	}
	fk_writeback_issue_fd(&wb, fd);
	uint64_t t0 = fk_now_ns();
	int status = 0;
	if (fsync(fd)) {
		fprintf(stderr, "writeback-hints: fsync '%s': %s\n", path,
			strerror(errno));
		status = 1;
	}
	uint64_t fsync_us = (fk_now_ns() - t0) / 1000;
	if (close(fd) && !status) {
		fprintf(stderr, "writeback-hints: close '%s': %s\n", path,
			strerror(errno));
		status = 1;
	}
	printf("wrote %" PRIu64 " bytes; writeback started for %" PRIu64
	       " bytes in %" PRIu64 " ranges (%" PRIu64
	       " sync_file_range calls); final fsync %" PRIu64 " us: %s\n",
	       off, wb.bytes_issued, wb.ranges_issued, wb.calls_sfr, fsync_us,
	       status ? "FAILED" : "durable");
	fk_writeback_release(&wb);
	return status;
}
