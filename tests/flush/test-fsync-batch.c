// SPDX-License-Identifier: MIT
/*
 * test-fsync-batch.c - the thread-pool and sequential backends of
 * struct fk_fsync_batch, and the fallback when io_uring is refused.
 *
 *  - every request issued once, with the right system call and range,
 *    results per request, cookies untouched; batches larger than the
 *    queue depth; never more than queue_depth in flight, and the pool
 *    really reaches queue_depth;
 *  - invalid requests fail alone;
 *  - one injected EIO among many: that file's requests report it, the
 *    rest complete; the error is sticky for the file (another descriptor
 *    of it, a later run) and for the batch;
 *  - io_uring setup refused with EPERM, ENOSYS, ENOMEM: AUTO falls back
 *    to threads with identical results, a forced "uring" fails.
 */
#include "fktest.h"
#include "fsync_batch.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define NR_FILES 300

static int fds[NR_FILES];

static void make_files(const char *dir)
{
	char path[4200];
	for (int i = 0; i < NR_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%03d", dir, i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		CHECK(fds[i] >= 0);
		char buf[4096];
		memset(buf, 'a' + i % 26, sizeof(buf));
		CHECK(pwrite(fds[i], buf, sizeof(buf), 0) ==
		      (ssize_t)sizeof(buf));
	}
}

static void fill(struct fk_fsync_req *r, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].fd = fds[i % NR_FILES];
		r[i].op = (int)(i % 3);
		r[i].offset = (i % 3 == 2) ? 512 * (i % 5) : 0;
		r[i].length = (i % 3 == 2) ? 4096 * (i % 4) : 0;
		r[i].cookie = i * 7 + 1;
		r[i].result = 12345; /* must be overwritten */
	}
}

/* ---- concurrency probe: fsync wrapper that waits for company ---- */

static pthread_mutex_t cl = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned inside, max_inside, target, calls;
static int (*traced_fsync)(int);

static int waiting_fsync(int fd)
{
	pthread_mutex_lock(&cl);
	inside++;
	calls++;
	if (inside > max_inside)
		max_inside = inside;
	pthread_cond_broadcast(&cv);
	/* The first calls wait (up to 5 s) until @target are inside at
	 * once: a pool that runs them one by one shows max_inside 1. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	while (calls <= target && max_inside < target)
		if (pthread_cond_timedwait(&cv, &cl, &ts))
			break;
	pthread_mutex_unlock(&cl);
	int r = traced_fsync(fd);
	pthread_mutex_lock(&cl);
	inside--;
	pthread_mutex_unlock(&cl);
	return r;
}

static void test_backend(int io, uint32_t qd)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = io;
	o.queue_depth = qd;
	struct fk_fsync_batch *b;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	CHECK_EQ(fk_fsync_batch_backend(b), io);

	size_t nr = 2 * NR_FILES; /* each file twice: fsync after hint */
	struct fk_fsync_req *r = calloc(nr, sizeof(*r));
	fill(r, nr);
	fkt_trace_start();
	traced_fsync = fk_sys.fsync;
	fk_sys.fsync = waiting_fsync;
	inside = max_inside = calls = 0;
	target = io == FK_SYNC_IO_THREADS ? qd : 1;
	CHECK_EQ(fk_fsync_batch_run(b, r, nr), 0);
	fkt_trace_stop();

	size_t want[3] = {0, 0, 0};
	for (size_t i = 0; i < nr; i++) {
		CHECK_EQ(r[i].result, 0);
		CHECK_EQ(r[i].issued, 1);
		CHECK_EQ(r[i].cookie, i * 7 + 1);
		CHECK_EQ(r[i].fd, fds[i % NR_FILES]);
		want[r[i].op]++;
	}
	CHECK_EQ(fkt_trace_nr("fsync", NULL), want[0]);
	CHECK_EQ(fkt_trace_nr("fdatasync", NULL), want[1]);
	CHECK_EQ(fkt_trace_nr("sync_file_range", NULL), want[2]);
	/* Each hint with its own range. */
	for (size_t k = 0; k < fkt_trace_count(); k++) {
		const struct fkt_call *c = fkt_trace_get(k);
		if (strcmp(c->op, "sync_file_range"))
			continue;
		int found = 0;
		for (size_t i = 0; i < nr && !found; i++)
			found = r[i].op == FK_FSYNC_OP_WRITEBACK &&
				r[i].fd == c->fd && r[i].offset == c->off &&
				r[i].length == c->len;
		CHECK(found);
	}
	struct fk_fsync_batch_stats st;
	fk_fsync_batch_get_stats(b, &st);
	CHECK_EQ(st.requests, nr);
	CHECK_EQ(st.issued, nr);
	CHECK_EQ(st.calls, nr);
	CHECK_EQ(st.errors, 0);
	CHECK(st.max_in_flight <= qd);
	CHECK(max_inside <= qd);
	if (io == FK_SYNC_IO_THREADS)
		CHECK_EQ(max_inside, qd);
	else
		CHECK_EQ(max_inside, 1);
	CHECK_EQ(fk_fsync_batch_error(b), 0);

	/* Invalid requests fail alone. */
	fill(r, 10);
	r[3].fd = -1;
	r[5].op = 9;
	r[8].op = FK_FSYNC_OP_WRITEBACK;
	r[8].offset = 1;
	r[8].length = INT64_MAX;
	CHECK_EQ(fk_fsync_batch_run(b, r, 10), -EBADF);
	for (size_t i = 0; i < 10; i++) {
		int want_err = i == 3		    ? -EBADF
			       : (i == 5 || i == 8) ? -EINVAL
						    : 0;
		CHECK_EQ(r[i].result, want_err);
		CHECK_EQ(r[i].issued, want_err == 0);
	}
	CHECK_EQ(fk_fsync_batch_run(b, NULL, 0), -EBADF); /* sticky */
	free(r);
	fk_fsync_batch_destroy(b);
}

/* One injected EIO among many requests. */
static void test_eio(int io)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = io;
	o.queue_depth = 8;
	struct fk_fsync_batch *b;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	size_t nr = NR_FILES + 1;
	struct fk_fsync_req *r = calloc(nr, sizeof(*r));
	fill(r, NR_FILES);
	for (size_t i = 0; i < NR_FILES; i++)
		r[i].op = FK_FSYNC_OP_FSYNC;
	/* The same file through another descriptor, last in the batch. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[117]);
	int fd2 = open(path, O_RDONLY);
	CHECK(fd2 >= 0);
	r[NR_FILES] = r[117];
	r[NR_FILES].fd = fd2;
	r[NR_FILES].cookie = 999;

	fkt_trace_start();
	fkt_fault_set("fsync", "/f117", 1, -EIO);
	CHECK_EQ(fk_fsync_batch_run(b, r, nr), -EIO);
	CHECK_EQ(fkt_fault_fired(), 1);
	for (size_t i = 0; i < NR_FILES; i++) {
		CHECK_EQ(r[i].result, i == 117 ? -EIO : 0);
		CHECK_EQ(r[i].issued, 1);
	}
	/* Sticky for the file: its other descriptor reports the error;
	 * sequentially it is never issued after the failure. */
	CHECK_EQ(r[NR_FILES].result, -EIO);
	if (io == FK_SYNC_IO_SEQUENTIAL) {
		CHECK_EQ(r[NR_FILES].issued, 0);
		CHECK_EQ(fkt_trace_nr("fsync", "/f117"), 1);
	}
	CHECK_EQ(fkt_trace_nr("fsync", NULL), NR_FILES + r[NR_FILES].issued);
	CHECK_EQ(fk_fsync_batch_error(b), -EIO);

	/* A later run: the failed file is not issued again, the others
	 * are; the batch stays failed. */
	fkt_fault_clear();
	fkt_trace_start();
	fill(r, 20);
	for (size_t i = 0; i < 20; i++)
		r[i].op = FK_FSYNC_OP_FSYNC;
	r[7].fd = fds[117];
	r[8].fd = fd2;
	CHECK_EQ(fk_fsync_batch_run(b, r, 20), -EIO);
	for (size_t i = 0; i < 20; i++) {
		int failed = i == 7 || i == 8;
		CHECK_EQ(r[i].result, failed ? -EIO : 0);
		CHECK_EQ(r[i].issued, !failed);
	}
	CHECK_EQ(fkt_trace_nr("fsync", "/f117"), 0);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 18);
	struct fk_fsync_batch_stats st;
	fk_fsync_batch_get_stats(b, &st);
	CHECK_EQ(st.skipped, 2 + (r[NR_FILES].issued ? 0 : 1));
	fkt_trace_stop();
	close(fd2);
	free(r);
	fk_fsync_batch_destroy(b);
}

static int refuse_err;
static int refuse(unsigned entries, struct io_uring *ring, unsigned flags)
{
	(void)entries;
	(void)ring;
	(void)flags;
	return refuse_err;
}

/* Results and issued flags of a run with one EIO, as a string. */
static void run_signature(struct fk_fsync_batch *b, char *sig, size_t n)
{
	struct fk_fsync_req r[100];
	fill(r, 100);
	for (size_t i = 0; i < 100; i++)
		r[i].op = (int)(i % 2); /* fsync, fdatasync */
	fkt_trace_start();
	fkt_fault_set("fdatasync", "/f043", 1, -EIO);
	int ret = fk_fsync_batch_run(b, r, 100);
	size_t at = (size_t)snprintf(sig, n, "%d:", ret);
	for (size_t i = 0; i < 100 && at + 8 < n; i++)
		at += (size_t)snprintf(sig + at, n - at, "%d/%d,", r[i].result,
				       r[i].issued);
	at += (size_t)snprintf(sig + at, n - at, " fsync=%zu fdatasync=%zu",
			       fkt_trace_nr("fsync", NULL),
			       fkt_trace_nr("fdatasync", NULL));
	fkt_trace_stop();
}

static void test_fallback(int err)
{
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.queue_depth = 8;
	struct fk_fsync_batch *b, *t;
	char sig_b[4096], sig_t[4096];

	refuse_err = err;
	fk_uring_queue_init = refuse;
	o.sync_io = FK_SYNC_IO_URING;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), err);
	o.sync_io = FK_SYNC_IO_AUTO;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	fk_uring_hooks_reset();
	CHECK_EQ(fk_fsync_batch_backend(b), FK_SYNC_IO_THREADS);
	struct fk_fsync_batch_stats st;
	fk_fsync_batch_get_stats(b, &st);
	CHECK_EQ(st.uring_error, err);

	o.sync_io = FK_SYNC_IO_THREADS;
	CHECK_EQ(fk_fsync_batch_create(&o, &t), 0);
	run_signature(b, sig_b, sizeof(sig_b));
	run_signature(t, sig_t, sizeof(sig_t));
	if (strcmp(sig_b, sig_t)) {
		fprintf(stderr, "fallback: %s\nthreads:  %s\n", sig_b, sig_t);
		CHECK(0);
	}
	CHECK(strstr(sig_b, "-5:") == sig_b);
	fk_fsync_batch_destroy(b);
	fk_fsync_batch_destroy(t);
}

int main(void)
{
	const char *dir = fkt_tmpdir();
	make_files(dir);

	CHECK_EQ(fk_sync_io_parse("uring"), FK_SYNC_IO_URING);
	CHECK_EQ(fk_sync_io_parse("threads"), FK_SYNC_IO_THREADS);
	CHECK_EQ(fk_sync_io_parse("sequential"), FK_SYNC_IO_SEQUENTIAL);
	CHECK_EQ(fk_sync_io_parse("auto"), FK_SYNC_IO_AUTO);
	CHECK_EQ(fk_sync_io_parse("bogus"), -EINVAL);
	CHECK(!strcmp(fk_sync_io_name(FK_SYNC_IO_THREADS), "threads"));
	struct fk_fsync_batch_opts o;
	struct fk_fsync_batch *b;
	fk_fsync_batch_opts_init(&o);
	o.queue_depth = 0;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), -EINVAL);
	o.queue_depth = FK_FSYNC_BATCH_MAX_QUEUE_DEPTH + 1;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), -EINVAL);
	o.queue_depth = 1;
	CHECK_EQ(fk_fsync_batch_create(&o, &b), 0);
	CHECK_EQ(fk_fsync_batch_backend(b), FK_SYNC_IO_SEQUENTIAL);
	fk_fsync_batch_destroy(b);

	test_backend(FK_SYNC_IO_THREADS, 8);
	test_backend(FK_SYNC_IO_THREADS, 1);
	test_backend(FK_SYNC_IO_SEQUENTIAL, 8);
	test_eio(FK_SYNC_IO_THREADS);
	test_eio(FK_SYNC_IO_SEQUENTIAL);
	test_fallback(-EPERM);
	test_fallback(-ENOSYS);
	test_fallback(-ENOMEM);

	/* The one-call form. */
	struct fk_fsync_req r[40];
	fill(r, 40);
	int used = -1;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_THREADS;
	CHECK_EQ(fk_fsync_many(&o, r, 40, &used), 0);
	CHECK_EQ(used, FK_SYNC_IO_THREADS);
	for (int i = 0; i < 40; i++)
		CHECK_EQ(r[i].result, 0);

	for (int i = 0; i < NR_FILES; i++)
		close(fds[i]);
	return fkt_done();
}
