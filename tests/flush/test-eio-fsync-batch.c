// SPDX-License-Identifier: MIT
/*
 * test-eio-fsync-batch - a real EIO inside a batched fsync
 * (struct fk_fsync_batch, fk_fsync_many), with io_uring
 * and with the thread pool (and one at a time): every request of a file
 * whose flush failed gets the error, the other files' requests succeed,
 * and the error stays with the file in later runs without any retry.
 * The same through fk_fsync_submit / fk_fsync_reap (each request
 * submitted as soon as its file is rewritten, all reaped in one call):
 * every request of a failed file is reaped with the error.
 *
 * Stack: ext4 (and xfs) over the lab disk daemon (flushkit-diskd, model
 * ram; fkfault.h).  NR_FILES files are written and fsynced (blocks
 * allocated), then rewritten; the blocks of two of them fail.  The run
 * has one FSYNC request per file, plus a second request for a failed file
 * on the SAME descriptor and one for the other failed file on ANOTHER
 * descriptor (opened before the error).
 *
 * Kernel behaviour that makes the per-file stickiness necessary: the
 * mapping's error is reported once per open file description.  Two
 * fsyncs of one descriptor in flight at once (io_uring, threads): one
 * gets EIO, the other 0.  After the run a plain fsync of the failed
 * file's descriptor returns 0 although its data never reached the disk.
 */
#include "fkfault.h"
#include "fktest.h"
#include "flushkit.h"
#include "fsync_batch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NR_FILES 8
#define FILE_BYTES (128 * 1024)
#define BAD_A 2 /* failed file, second request on the same fd */
#define BAD_B 5 /* failed file, second request on another fd */

static char buf[FILE_BYTES];

/* What the kernel itself answered, per descriptor (io_uring: the CQE hook,
 * threads: the call trace through the syscall table). */
#define MAX_FD 1024
static int raw_eio[MAX_FD], raw_ok[MAX_FD];

static int cqe_hook(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)index;
	if (req->fd >= 0 && req->fd < MAX_FD) {
		if (res == -EIO)
			__atomic_add_fetch(&raw_eio[req->fd], 1,
					   __ATOMIC_RELAXED);
		else if (res == 0)
			__atomic_add_fetch(&raw_ok[req->fd], 1,
					   __ATOMIC_RELAXED);
	}
	return res;
}

static void raw_from_trace(void)
{
	for (size_t i = 0; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (strcmp(c->op, "fsync") && strcmp(c->op, "fdatasync"))
			continue;
		if (c->fd < 0 || c->fd >= MAX_FD)
			continue;
		if (c->ret == -EIO)
			raw_eio[c->fd]++;
		else if (c->ret == 0)
			raw_ok[c->fd]++;
	}
}

static void rewrite(int fd, char c)
{
	memset(buf, c, sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, FILE_BYTES, 0), FILE_BYTES);
}

static void run_mode(struct fkt_stack *st, int sync_io, int one_call)
{
	fprintf(stderr, "   %s%s\n", fk_sync_io_name(sync_io),
		one_call == 1	? " (fk_fsync_many)"
		: one_call == 2 ? " (fk_fsync_submit/_reap)"
				: "");
	int async = one_call == 2;
	one_call = one_call == 1;
	int fd[NR_FILES], fd_b2;
	char path[NR_FILES][720];
	for (int i = 0; i < NR_FILES; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s-%d-%d", st->fs.mnt,
			 fk_sync_io_name(sync_io), async ? 2 : one_call, i);
		fd[i] = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fd[i] >= 0);
		rewrite(fd[i], 'a');
		CHECK_EQ(fsync(fd[i]), 0);
		/* A spacer after each file, removed below: the files' blocks
		 * are not adjacent, so the block layer cannot merge a good
		 * file's rewrite into one request with a failed file's (that
		 * request fails whole: a good file got EIO under load). */
		char sp[sizeof(path[0]) + 8];
		CHECK(snprintf(sp, sizeof(sp), "%s.spacer", path[i]) <
		      (int)sizeof(sp));
		int sfd = open(sp, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(sfd >= 0);
		rewrite(sfd, 's');
		CHECK_EQ(fsync(sfd), 0);
		close(sfd);
	}
	for (int i = 0; i < NR_FILES; i++) {
		char sp[sizeof(path[0]) + 8];
		CHECK(snprintf(sp, sizeof(sp), "%s.spacer", path[i]) <
		      (int)sizeof(sp));
		CHECK_EQ(unlink(sp), 0);
	}
	fd_b2 = open(path[BAD_B], O_RDONLY);
	CHECK(fd_b2 >= 0);
	CHECK_EQ(fkt_dev_reset_counters(&st->dev), 0);
	CHECK(fkt_dev_fail_file(&st->dev, path[BAD_A], FKT_OP_WRITE, EIO) >= 1);
	CHECK(fkt_dev_fail_file(&st->dev, path[BAD_B], FKT_OP_WRITE, EIO) >= 1);
	for (int i = 0; i < NR_FILES; i++)
		rewrite(fd[i], 'b');

	struct fk_fsync_req req[NR_FILES + 2];
	memset(req, 0, sizeof(req));
	for (int i = 0; i < NR_FILES; i++) {
		req[i].fd = fd[i];
		req[i].op = i % 2 ? FK_FSYNC_OP_FDATASYNC : FK_FSYNC_OP_FSYNC;
		req[i].cookie = (uint64_t)i;
	}
	req[NR_FILES] = (struct fk_fsync_req){
	    .fd = fd[BAD_A], .op = FK_FSYNC_OP_FSYNC, .cookie = BAD_A};
	req[NR_FILES + 1] = (struct fk_fsync_req){
	    .fd = fd_b2, .op = FK_FSYNC_OP_FSYNC, .cookie = BAD_B};
	size_t nr = NR_FILES + 2;
	memset(raw_eio, 0, sizeof(raw_eio));
	memset(raw_ok, 0, sizeof(raw_ok));
	fk_uring_cqe_hook = cqe_hook;
	if (sync_io != FK_SYNC_IO_URING)
		fkt_trace_start();

	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = sync_io;
	o.queue_depth = NR_FILES + 2;
	struct fk_fsync_batch *b = NULL;
	int r;
	if (async) {
		CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
		if (!b)
			return;
		for (size_t i = 0; i < nr; i++)
			CHECK_EQ(fk_fsync_submit(b, &req[i]), 0);
		struct fk_fsync_req *done[NR_FILES + 2];
		CHECK_EQ(fk_fsync_reap(b, done, nr, nr), (long)nr);
		CHECK_EQ(fk_fsync_outstanding(b), 0);
		r = fk_fsync_batch_error(b);
	} else if (one_call) {
		int backend = -1;
		r = fk_fsync_many(&o, req, nr, &backend);
		CHECK_EQ(backend, sync_io);
	} else {
		CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
		if (!b)
			return;
		CHECK_EQ(fk_fsync_batch_backend(b), sync_io);
		r = fk_fsync_batch_run(b, req, nr);
	}
	if (sync_io != FK_SYNC_IO_URING) {
		fkt_trace_stop();
		raw_from_trace();
	}
	fk_uring_cqe_hook = NULL;
	CHECK_EQ(r, -EIO);
	/* The kernel reports a writeback error once per open file
	 * description: never more than one EIO per descriptor, however
	 * many fsyncs of it ran. */
	fprintf(stderr,
		"      kernel: file %d fd %d: %d EIO, %d ok; "
		"file %d fds %d,%d: %d,%d EIO, %d,%d ok\n",
		BAD_A, fd[BAD_A], raw_eio[fd[BAD_A]], raw_ok[fd[BAD_A]], BAD_B,
		fd[BAD_B], fd_b2, raw_eio[fd[BAD_B]], raw_eio[fd_b2],
		raw_ok[fd[BAD_B]], raw_ok[fd_b2]);
	CHECK(raw_eio[fd[BAD_A]] <= 1);
	CHECK(raw_eio[fd[BAD_B]] <= 1 && raw_eio[fd_b2] <= 1);
	CHECK(raw_eio[fd[BAD_A]] + raw_eio[fd[BAD_B]] + raw_eio[fd_b2] >= 2);
	for (size_t i = 0; i < nr; i++) {
		int bad = req[i].cookie == BAD_A || req[i].cookie == BAD_B;
		if (req[i].result != (bad ? -EIO : 0))
			fprintf(stderr, "request %zu (file %llu): %d\n", i,
				(unsigned long long)req[i].cookie,
				req[i].result);
		CHECK_EQ(req[i].result, bad ? -EIO : 0);
	}
	struct fkt_dev_counters c;
	CHECK_EQ(fkt_dev_counters(&st->dev, &c), 0);
	CHECK(c.write_faults >= 2);

	/* The kernel already told the failed files' descriptors that were
	 * issued: a plain fsync now says 0 for data that is not on disk.
	 * fd_b2's request was issued only if it ran before (or with) the
	 * first one of its file failed; if not, the kernel still has the
	 * error for it. */
	CHECK_EQ(fsync(fd[BAD_A]), 0);
	CHECK_EQ(fsync(fd_b2) == 0, req[NR_FILES + 1].issued);
	if (b) {
		struct fk_fsync_batch_stats bs;
		fk_fsync_batch_get_stats(b, &bs);
		CHECK_EQ(bs.errors, 4);
		CHECK_EQ(fk_fsync_batch_error(b), -EIO);
		/* A later run of the batch: the failed file's request is
		 * answered from its sticky error, never issued again; a good
		 * file is issued and succeeds. */
		struct fk_fsync_req again[2] = {
		    {.fd = fd[BAD_A], .op = FK_FSYNC_OP_FSYNC},
		    {.fd = fd[0], .op = FK_FSYNC_OP_FSYNC},
		};
		CHECK_EQ(fk_fsync_batch_run(b, again, 2), -EIO);
		CHECK_EQ(again[0].result, -EIO);
		CHECK_EQ(again[0].issued, 0);
		CHECK_EQ(again[1].result, 0);
		CHECK_EQ(again[1].issued, 1);
		fk_fsync_batch_destroy(b);
	}
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	for (int i = 0; i < NR_FILES; i++)
		close(fd[i]);
	close(fd_b2);
}

static void run(const char *type, uint64_t bytes, unsigned flags)
{
	fprintf(stderr, "-- %s%s\n", type,
		flags & FKT_STACK_DIO ? " (loop direct I/O)" : "");
	struct fkt_stack st;
	int r = fkt_stack_create(&st, type, bytes, flags);
	if (r == 77)
		SKIP("needs root, /dev/fuse, loop devices, mkfs.%s", type);
	CHECK_EQ(r, 0);
	if (r)
		return;
	struct fk_fsync_batch *b;
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	r = fk_fsync_batch_create(&o, &b);
	if (r == 0) {
		fk_fsync_batch_destroy(b);
		run_mode(&st, FK_SYNC_IO_URING, 0);
		run_mode(&st, FK_SYNC_IO_URING, 1);
		run_mode(&st, FK_SYNC_IO_URING, 2);
	} else {
		fprintf(stderr, "no io_uring here (%s): uring skipped\n",
			strerror(-r));
	}
	run_mode(&st, FK_SYNC_IO_THREADS, 0);
	run_mode(&st, FK_SYNC_IO_THREADS, 1);
	run_mode(&st, FK_SYNC_IO_THREADS, 2);
	run_mode(&st, FK_SYNC_IO_SEQUENTIAL, 0);
	run_mode(&st, FK_SYNC_IO_SEQUENTIAL, 2);
	fkt_stack_destroy(&st);
}

int main(void)
{
	run("ext4", 64 << 20, 0);
	if (system("command -v mkfs.xfs >/dev/null 2>&1") == 0)
		run("xfs", 300 << 20, 0);
	return fkt_done();
}
