// SPDX-License-Identifier: MIT
/*
 * fsync-many.c - write many small files, then make them all durable in
 * one batch with many fsyncs in flight.
 *
 * One fsync at a time leaves a fast device idle between flushes.
 * fk_fsync_many keeps up to queue_depth fsyncs in flight (io_uring, or
 * a thread pool where io_uring is refused) and reports each file's
 * result: a failure of one file does not hide the others, and nothing
 * is retried.  Write everything first, wait for the writes, then fsync:
 * the batch takes files whose writes have completed.  The directory is
 * fsynced last, after the files, so the new names are durable too.
 *
 *   usage: fsync-many DIR [FILES]
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
		fprintf(stderr, "usage: fsync-many DIR [FILES]\n");
		return 2;
	}
	const char *dir = argv[1];
	size_t nr = argc == 3 ? strtoul(argv[2], NULL, 10) : 100;
	if (nr == 0 || nr > 100000) {
		fprintf(stderr, "fsync-many: FILES must be 1..100000\n");
		return 2;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "fsync-many: open '%s': %s\n", dir,
			strerror(errno));
		return 1;
	}
	struct fk_fsync_req *reqs = calloc(nr, sizeof(*reqs));
	if (!reqs)
		return 1;
	char name[64], data[4096];
	memset(data, 'f', sizeof(data));
	size_t opened = 0;
	int status = 0;
	for (size_t i = 0; i < nr; i++) {
		snprintf(name, sizeof(name), "file-%06zu", i);
		int fd = openat(dfd, name,
				O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 ||
		    write(fd, data, sizeof(data)) != (ssize_t)sizeof(data)) {
			fprintf(stderr, "fsync-many: write '%s/%s': %s\n", dir,
				name, strerror(errno));
			if (fd >= 0)
				close(fd);
			status = 1;
			break;
		}
		reqs[opened].fd = fd;
		reqs[opened].op = FK_FSYNC_OP_FSYNC;
		reqs[opened].cookie = i;
		opened++;
	}

	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o); /* auto backend, 32 in flight */
	int backend = FK_SYNC_IO_AUTO;
	uint64_t t0 = fk_now_ns();
	int r = fk_fsync_many(&o, reqs, opened, &backend);
	uint64_t t1 = fk_now_ns();
	if (r && !opened)
		fprintf(stderr, "fsync-many: %s\n", fk_strerror(r));
	size_t failed = 0;
	for (size_t i = 0; i < opened; i++) {
		if (reqs[i].result) {
			fprintf(
			    stderr,
			    "fsync-many: fsync '%s/file-%06" PRIu64 "': %s\n",
			    dir, reqs[i].cookie, fk_strerror(reqs[i].result));
			failed++;
		}
		close(reqs[i].fd);
	}
	if (r || failed)
		status = 1;
	/* The names: the directory after the files. */
	if (!status && fsync(dfd)) {
		fprintf(stderr, "fsync-many: fsync '%s': %s\n", dir,
			strerror(errno));
		status = 1;
	}
	close(dfd);
	printf("%zu files fsynced in one batch (%s), %zu failed, %.3f ms: %s\n",
	       opened, fk_sync_io_name(backend), failed, (t1 - t0) / 1e6,
	       status ? "FAILED" : "durable");
	free(reqs);
	return status;
}
