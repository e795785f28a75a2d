// SPDX-License-Identifier: MIT
/*
 * test-fsync-submit.c - fk_fsync_submit / fk_fsync_reap /
 * fk_fsync_outstanding on every backend (io_uring where the kernel
 * allows it, threads, sequential):
 *
 *  - more requests than the queue depth, written and submitted one file
 *    at a time: submit says -EAGAIN exactly when queue_depth are
 *    outstanding, every request is reaped exactly once with its cookie,
 *    result 0, issued, and outstanding counts down to 0; reap with
 *    wait_nr 0 never blocks (returns what has completed);
 *  - argument errors (-EINVAL), a closed descriptor (-EBADF) are not
 *    taken: nothing outstanding; fk_fsync_batch_run refuses (-EBUSY)
 *    while requests are outstanding and works again after;
 *  - an injected EIO (threads, sequential: through the syscall table;
 *    io_uring: the CQE hook): that request is reaped with -EIO, the
 *    others with 0; a later request of the same file (another
 *    descriptor) is not issued and reports -EIO; the batch's error is
 *    -EIO and a later fk_fsync_batch_run of the file skips it too;
 *  - io_uring: a submission the ring refuses (io_uring_enter fails) is
 *    not taken (-EIO returned, nothing outstanding, the request never
 *    reaped), and the next submissions work;
 *  - destroying a batch with requests outstanding waits for them.
 */
#include "fktest.h"
#include "fsync_batch.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#define NR_FILES 100
#define QD 8

static int eio_fd = -1;
static int on_cqe(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)index;
	return req->fd == eio_fd ? -EIO : res;
}

static int fail_next;
static int submit_fault(unsigned queued)
{
	(void)queued;
	if (fail_next) {
		fail_next = 0;
		return -EIO;
	}
	return 0;
}

static int open_file(const char *tag, int sync_io, int i)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s-%s-%d", fkt_tmpdir(), tag,
		 fk_sync_io_name(sync_io), i);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	char buf[4096];
	memset(buf, 'a' + i % 26, sizeof(buf));
	CHECK_EQ(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	return fd;
}

static struct fk_fsync_batch *make(int sync_io)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = sync_io;
	o.queue_depth = QD;
	struct fk_fsync_batch *b = NULL;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	if (b)
		CHECK_EQ(fk_fsync_batch_backend(b), sync_io);
	return b;
}

/* Reap and check: each request once, result as @want_eio says. */
static unsigned seen[NR_FILES];
static size_t reap_some(struct fk_fsync_batch *b, size_t wait, int bad)
{
	struct fk_fsync_req *done[QD];
	long n = fk_fsync_reap(b, done, QD, wait);
	CHECK(n >= 0);
	CHECK(n >= (long)(wait < QD ? wait : QD) || n >= 0);
	for (long k = 0; k < n; k++) {
		size_t i = (size_t)done[k]->cookie;
		CHECK(i < NR_FILES);
		seen[i]++;
		CHECK_EQ(done[k]->result, (int)i == bad ? -EIO : 0);
		CHECK_EQ(done[k]->issued, 1);
		if (done[k]->result == 0)
			CHECK(done[k]->latency_ns > 0);
	}
	return (size_t)n;
}

static void test_flow(int sync_io, int bad)
{
	fprintf(stderr, "-- %s%s\n", fk_sync_io_name(sync_io),
		bad >= 0 ? " with an EIO" : "");
	struct fk_fsync_batch *b = make(sync_io);
	if (!b)
		return;
	static struct fk_fsync_req req[NR_FILES];
	int fds[NR_FILES];
	memset(seen, 0, sizeof(seen));
	memset(req, 0, sizeof(req));
	size_t reaped = 0, eagain = 0;
	if (bad >= 0 && sync_io != FK_SYNC_IO_URING)
		/* the (bad+1)-th fsync issued is file @bad's: files are
		 * submitted in order and fsynced once each */
		fkt_fault_set("fsync", NULL, (unsigned)bad + 1, -EIO);
	for (int i = 0; i < NR_FILES; i++) {
		fds[i] = open_file("flow", sync_io, i);
		if (i == bad)
			eio_fd = fds[i];
		req[i].fd = fds[i];
		req[i].op = FK_FSYNC_OP_FSYNC;
		req[i].cookie = (uint64_t)i;
		int r;
		while ((r = fk_fsync_submit(b, &req[i])) == -EAGAIN) {
			eagain++;
			CHECK_EQ(fk_fsync_outstanding(b), QD);
			reaped += reap_some(b, 1, bad);
		}
		CHECK_EQ(r, 0);
		CHECK(fk_fsync_outstanding(b) <= QD);
		reaped += reap_some(b, 0, bad);
	}
	/* a closed descriptor and bad arguments are not taken */
	struct fk_fsync_req x = {.fd = -1, .op = FK_FSYNC_OP_FSYNC};
	size_t before = fk_fsync_outstanding(b);
	if (before < QD) {
		CHECK_EQ(fk_fsync_submit(b, &x), -EBADF);
		x.fd = fds[0];
		x.op = 7;
		CHECK_EQ(fk_fsync_submit(b, &x), -EINVAL);
		CHECK_EQ(fk_fsync_outstanding(b), before);
	}
	CHECK_EQ(fk_fsync_submit(NULL, &x), -EINVAL);
	CHECK_EQ(fk_fsync_submit(b, NULL), -EINVAL);
	CHECK_EQ(fk_fsync_reap(b, NULL, 1, 0), -EINVAL);
	if (fk_fsync_outstanding(b)) {
		struct fk_fsync_req r1 = {.fd = fds[1],
					  .op = FK_FSYNC_OP_FSYNC};
		CHECK_EQ(fk_fsync_batch_run(b, &r1, 1), -EBUSY);
	}
	while (fk_fsync_outstanding(b))
		reaped += reap_some(b, QD, bad);
	CHECK_EQ(fk_fsync_reap(b, NULL, 0, 1), 0);
	fkt_fault_clear();
	eio_fd = -1;
	CHECK_EQ(reaped, NR_FILES);
	for (int i = 0; i < NR_FILES; i++)
		CHECK_EQ(seen[i], 1);
	fprintf(stderr, "   %zu times -EAGAIN\n", eagain);
	struct fk_fsync_batch_stats st;
	fk_fsync_batch_get_stats(b, &st);
	CHECK_EQ(st.requests, NR_FILES);
	CHECK_EQ(st.issued, NR_FILES);
	CHECK(st.max_in_flight <= QD);
	CHECK_EQ(st.errors, bad >= 0 ? 1 : 0);
	CHECK_EQ(fk_fsync_batch_error(b), bad >= 0 ? -EIO : 0);
	if (bad >= 0) {
		/* The failed file through another descriptor: not issued,
		 * its error; a good file still works. */
		char p[4200];
		snprintf(p, sizeof(p), "%s/flow-%s-%d", fkt_tmpdir(),
			 fk_sync_io_name(sync_io), bad);
		int fd2 = open(p, O_RDONLY);
		CHECK(fd2 >= 0);
		struct fk_fsync_req a = {.fd = fd2,
					 .op = FK_FSYNC_OP_FDATASYNC,
					 .cookie = 1},
				    g = {.fd = fds[0],
					 .op = FK_FSYNC_OP_FSYNC,
					 .cookie = 2};
		CHECK_EQ(fk_fsync_submit(b, &a), 0);
		CHECK_EQ(fk_fsync_submit(b, &g), 0);
		struct fk_fsync_req *done[2];
		size_t got = 0;
		while (got < 2) {
			long n = fk_fsync_reap(b, done + got, 2 - got, 1);
			CHECK(n > 0);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		CHECK_EQ(a.result, -EIO);
		CHECK_EQ(a.issued, 0);
		CHECK_EQ(g.result, 0);
		CHECK_EQ(g.issued, 1);
		/* and the run knows the file too */
		struct fk_fsync_req r = {.fd = fd2, .op = FK_FSYNC_OP_FSYNC};
		CHECK_EQ(fk_fsync_batch_run(b, &r, 1), -EIO);
		CHECK_EQ(r.result, -EIO);
		CHECK_EQ(r.issued, 0);
		close(fd2);
	} else {
		struct fk_fsync_req r = {.fd = fds[2], .op = FK_FSYNC_OP_FSYNC};
		CHECK_EQ(fk_fsync_batch_run(b, &r, 1), 0);
		CHECK_EQ(r.issued, 1);
	}
	/* queue_depth outstanding, completed or not: -EAGAIN until reaped */
	for (int i = 0; i < QD; i++) {
		req[i] = (struct fk_fsync_req){.fd = fds[i],
					       .op = FK_FSYNC_OP_FSYNC,
					       .cookie = (uint64_t)i};
		CHECK_EQ(fk_fsync_submit(b, &req[i]), 0);
	}
	struct fk_fsync_req extra = {.fd = fds[QD], .op = FK_FSYNC_OP_FSYNC};
	CHECK_EQ(fk_fsync_submit(b, &extra), -EAGAIN);
	CHECK_EQ(fk_fsync_outstanding(b), QD);
	memset(seen, 0, sizeof(seen));
	size_t got = 0;
	while (got < QD) {
		size_t n = reap_some(b, QD, -1);
		if (!n)
			break;
		got += n;
	}
	CHECK_EQ(got, QD);
	for (int i = 0; i < QD; i++)
		CHECK_EQ(seen[i], 1);
	CHECK_EQ(fk_fsync_submit(b, &extra), 0);
	CHECK_EQ(reap_some(b, 1, -1), 1);
	/* destroy with requests outstanding: they complete first */
	for (int i = 0; i < QD; i++) {
		req[i] = (struct fk_fsync_req){.fd = fds[NR_FILES - 1 - i],
					       .op = FK_FSYNC_OP_FSYNC};
		CHECK_EQ(fk_fsync_submit(b, &req[i]), 0);
	}
	fk_fsync_batch_destroy(b);
	for (int i = 0; i < NR_FILES; i++)
		close(fds[i]);
}

static void test_ring_refuses(void)
{
	fprintf(stderr, "-- uring: a refused submission\n");
	struct fk_fsync_batch *b = make(FK_SYNC_IO_URING);
	if (!b)
		return;
	int fd = open_file("refuse", FK_SYNC_IO_URING, 0);
	struct fk_fsync_req a = {.fd = fd,
				 .op = FK_FSYNC_OP_FSYNC,
				 .cookie = 1},
			    c = {
				.fd = fd, .op = FK_FSYNC_OP_FSYNC, .cookie = 2};
	fk_uring_submit_fault = submit_fault;
	fail_next = 1;
	CHECK_EQ(fk_fsync_submit(b, &a), -EIO);
	CHECK_EQ(fk_fsync_outstanding(b), 0);
	CHECK_EQ(fk_fsync_submit(b, &c), 0);
	CHECK_EQ(fk_fsync_outstanding(b), 1);
	struct fk_fsync_req *done[4];
	long n = fk_fsync_reap(b, done, 4, 1);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK(done[0] == &c);
	CHECK_EQ(c.result, 0);
	CHECK_EQ(fk_fsync_outstanding(b), 0);
	/* the refused request's no-op never comes back as a request */
	CHECK_EQ(fk_fsync_reap(b, done, 4, 0), 0);
	CHECK_EQ(fk_fsync_batch_error(b), 0);
	fk_uring_hooks_reset();
	fk_fsync_batch_destroy(b);
	close(fd);
}

int main(void)
{
	int uring = 0;
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	struct fk_fsync_batch *b;
	int r = fk_fsync_batch_create(&o, &b);
	if (r == 0) {
		uring = 1;
		fk_fsync_batch_destroy(b);
	} else {
		fprintf(stderr, "io_uring refused (%s): its cases skipped\n",
			strerror(-r));
	}
	fkt_trace_start();
	static const int ios[] = {FK_SYNC_IO_URING, FK_SYNC_IO_THREADS,
				  FK_SYNC_IO_SEQUENTIAL};
	for (size_t k = 0; k < 3; k++) {
		if (ios[k] == FK_SYNC_IO_URING && !uring)
			continue;
		if (ios[k] == FK_SYNC_IO_URING)
			fk_uring_cqe_hook = on_cqe;
		test_flow(ios[k], -1);
		test_flow(ios[k], 37);
		fk_uring_hooks_reset();
	}
	if (uring)
		test_ring_refuses();
	fkt_trace_stop();
	return fkt_done();
}
