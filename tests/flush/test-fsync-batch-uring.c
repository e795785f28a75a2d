// SPDX-License-Identifier: MIT
/*
 * test-fsync-batch-uring.c - the io_uring backend of struct
 * fk_fsync_batch.  Skips (77) where the kernel refuses io_uring.
 *
 *  - batches larger than the ring (queue depth 4 and 8 -> rings of 4
 *    and 8 entries) complete, each request issued once (submit hook),
 *    never more than queue_depth in flight;
 *  - a writeback range over 4 GiB is split into SQEs of at most
 *    FK_URING_SFR_MAX_BYTES;
 *  - faults injected at the ring level (the CQE hook turns one
 *    request's res into -EIO): that request and the other descriptor of
 *    its file report -EIO, the rest complete, later runs skip the file,
 *    and the results equal the thread pool's with the same fault
 *    injected through the syscall table;
 *  - a ring-level failure (io_uring_enter fails) mid-run: the rest of
 *    the run and the batch continue on threads, each request once.
 */
#include "fktest.h"
#include "fsync_batch.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#define NR_FILES 200

static int fds[NR_FILES];
static size_t submitted[3 * NR_FILES];
static size_t nr_submitted;

static void on_submit(const struct fk_fsync_req *req, size_t index)
{
	(void)req;
	submitted[nr_submitted++ % (3 * NR_FILES)] = index;
}

static int eio_fd = -1;
static int on_cqe(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)index;
	return req->fd == eio_fd && req->op != FK_FSYNC_OP_WRITEBACK ? -EIO
								     : res;
}

static void fill(struct fk_fsync_req *r, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = fds[i % NR_FILES];
		r[i].op = (int)(i % 3);
		r[i].offset = (i % 3 == 2) ? 4096 * (i % 5) : 0;
		r[i].length = (i % 3 == 2) ? 4096 * (i % 4) : 0;
		r[i].cookie = ~(uint64_t)i;
	}
}

static void test_many(uint32_t qd)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	o.queue_depth = qd;
	struct fk_fsync_batch *b;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	CHECK_EQ(fk_fsync_batch_backend(b), FK_SYNC_IO_URING);
	size_t nr = 3 * NR_FILES;
	struct fk_fsync_req *r = calloc(nr, sizeof(*r));
	fill(r, nr);
	nr_submitted = 0;
	fk_uring_submit_hook = on_submit;
	CHECK_EQ(fk_fsync_batch_run(b, r, nr), 0);
	fk_uring_submit_hook = NULL;
	CHECK_EQ(nr_submitted, nr);
	for (size_t i = 0; i < nr; i++) {
		CHECK_EQ(r[i].result, 0);
		CHECK_EQ(r[i].issued, 1);
		CHECK_EQ(r[i].cookie, ~(uint64_t)i);
		CHECK(r[i].latency_ns > 0);
		/* Issued in array order, each once. */
		CHECK_EQ(submitted[i], i);
	}
	struct fk_fsync_batch_stats st;
	fk_fsync_batch_get_stats(b, &st);
	CHECK_EQ(st.calls, nr);
	CHECK_EQ(st.issued, nr);
	CHECK(st.max_in_flight <= qd);
	CHECK(st.max_in_flight >= 1);
	free(r);
	fk_fsync_batch_destroy(b);
}

static void test_split(void)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	o.queue_depth = 2; /* fewer slots than pieces */
	struct fk_fsync_batch *b;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	const uint64_t m = FK_URING_SFR_MAX_BYTES;
	struct {
		uint64_t off, len, sqes;
	} cases[] = {
	    {0, 0, 1},		 {0, m, 1},	   {4096, m + 1, 2},
	    {0, 10ull << 30, 3}, {8192, 3 * m, 3},
	};
	uint64_t calls = 0;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct fk_fsync_req r = {
		    .fd = fds[0],
		    .op = FK_FSYNC_OP_WRITEBACK,
		    .offset = cases[c].off,
		    .length = cases[c].len,
		};
		CHECK_EQ(fk_fsync_batch_run(b, &r, 1), 0);
		CHECK_EQ(r.result, 0);
		struct fk_fsync_batch_stats st;
		fk_fsync_batch_get_stats(b, &st);
		CHECK_EQ(st.calls - calls, cases[c].sqes);
		calls = st.calls;
	}
	fk_fsync_batch_destroy(b);
}

static unsigned submits, completions;
static int fail_third_submit(unsigned queued)
{
	(void)queued;
	return ++submits == 3 ? -EFAULT : 0;
}

static int count_cqe(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)req;
	(void)index;
	completions++;
	return res;
}

/*
 * io_uring_enter fails at the ring level in the middle of a run: what
 * reached the kernel completes, the rest is issued by threads, each
 * request exactly once, and the batch goes on with threads.
 */
static void test_ring_failure(void)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	o.queue_depth = 8;
	struct fk_fsync_batch *b;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	size_t nr = NR_FILES;
	struct fk_fsync_req *r = calloc(nr, sizeof(*r));
	fill(r, nr);
	submits = completions = 0;
	fk_uring_submit_fault = fail_third_submit;
	fk_uring_cqe_hook = count_cqe;
	fkt_trace_start();
	CHECK_EQ(fk_fsync_batch_run(b, r, nr), 0);
	size_t by_threads = fkt_trace_nr("fsync", NULL) +
			    fkt_trace_nr("fdatasync", NULL) +
			    fkt_trace_nr("sync_file_range", NULL);
	fkt_trace_stop();
	fk_uring_hooks_reset();
	CHECK(completions > 0);
	CHECK(by_threads > 0);
	CHECK_EQ(completions + by_threads, nr);
	for (size_t i = 0; i < nr; i++) {
		CHECK_EQ(r[i].result, 0);
		CHECK_EQ(r[i].issued, 1);
	}
	CHECK_EQ(fk_fsync_batch_backend(b), FK_SYNC_IO_THREADS);
	struct fk_fsync_batch_stats st;
	fk_fsync_batch_get_stats(b, &st);
	CHECK_EQ(st.uring_error, -EFAULT);
	CHECK_EQ(fk_fsync_batch_run(b, r, 10), 0);
	free(r);
	fk_fsync_batch_destroy(b);
}

/* Results of a run with an EIO on file 77, as a string. */
static void signature(int io, char *sig, size_t n)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = io;
	o.queue_depth = 16;
	struct fk_fsync_batch *b;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	struct fk_fsync_req r[NR_FILES + 1];
	fill(r, NR_FILES);
	for (size_t i = 0; i < NR_FILES; i++)
		r[i].op = FK_FSYNC_OP_FSYNC;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[77]);
	int fd2 = open(path, O_RDONLY);
	r[NR_FILES] = r[77];
	r[NR_FILES].fd = fd2;
	if (io == FK_SYNC_IO_URING) {
		eio_fd = fds[77];
		fk_uring_cqe_hook = on_cqe;
	} else {
		fkt_trace_start();
		fkt_fault_set("fsync", "/f077", 0, -EIO);
	}
	int ret = fk_fsync_batch_run(b, r, NR_FILES + 1);
	fk_uring_cqe_hook = NULL;
	fkt_trace_stop();
	size_t at = (size_t)snprintf(sig, n, "%d:", ret);
	for (size_t i = 0; i <= NR_FILES && at + 8 < n; i++)
		at += (size_t)snprintf(sig + at, n - at, "%d,", r[i].result);
	CHECK_EQ(r[77].issued, 1);
	CHECK_EQ(r[77].result, -EIO);
	CHECK_EQ(r[NR_FILES].result, -EIO);
	for (size_t i = 0; i < NR_FILES; i++)
		if (i != 77)
			CHECK_EQ(r[i].result, 0);
	/* A later run does not issue the failed file again. */
	nr_submitted = 0;
	fk_uring_submit_hook = on_submit;
	CHECK_EQ(fk_fsync_batch_run(b, &r[77], 1), -EIO);
	fk_uring_submit_hook = NULL;
	CHECK_EQ(r[77].issued, 0);
	CHECK_EQ(r[77].result, -EIO);
	if (io == FK_SYNC_IO_URING)
		CHECK_EQ(nr_submitted, 0);
	close(fd2);
	fk_fsync_batch_destroy(b);
}

int main(void)
{
	if (!fk_fsync_batch_have_uring())
		SKIP("built without liburing");
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	struct fk_fsync_batch *b;
	int err = fk_fsync_batch_create(&o, &b);
	if (err)
		SKIP("io_uring refused: %s", fk_strerror(err));
	fk_fsync_batch_destroy(b);
	o.sync_io = FK_SYNC_IO_AUTO;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	CHECK_EQ(fk_fsync_batch_backend(b), FK_SYNC_IO_URING);
	fk_fsync_batch_destroy(b);

	const char *dir = fkt_tmpdir();
	char path[4200];
	for (int i = 0; i < NR_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%03d", dir, i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fds[i] >= 0);
		char buf[8192];
		memset(buf, 'x', sizeof(buf));
		CHECK(pwrite(fds[i], buf, sizeof(buf), 0) ==
		      (ssize_t)sizeof(buf));
	}
	test_many(4);
	test_many(8);
	test_split();
	test_ring_failure();

	char sig_u[8192], sig_t[8192];
	signature(FK_SYNC_IO_URING, sig_u, sizeof(sig_u));
	signature(FK_SYNC_IO_THREADS, sig_t, sizeof(sig_t));
	if (strcmp(sig_u, sig_t)) {
		fprintf(stderr, "uring:   %s\nthreads: %s\n", sig_u, sig_t);
		CHECK(0);
	}
	for (int i = 0; i < NR_FILES; i++)
		close(fds[i]);
	return fkt_done();
}
