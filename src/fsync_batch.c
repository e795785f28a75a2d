// SPDX-License-Identifier: MIT
/*
 * fsync_batch.c - many fsync / fdatasync / writeback-hint requests in
 * flight at once, with per-request results.
 *
 * What it is for: a file-creation workload, a tree sync's second pass or
 * a checkpoint's sync phase has hundreds or thousands of files to flush.
 * Flushing them one after the other leaves a fast device idle between
 * flushes; keeping queue_depth of them in flight lets the device and the
 * file system's journal batch them (the asynchronous-fsync work of 2014).
 *
 * Interface routines (see include/flushkit.h, SECTION fsync_batch):
 *   fk_fsync_batch_opts_init, fk_fsync_batch_create,
 *   fk_fsync_batch_destroy, fk_fsync_batch_backend, fk_fsync_batch_run,
 *   fk_fsync_batch_error, fk_fsync_batch_get_stats, fk_fsync_many,
 *   fk_fsync_submit, fk_fsync_reap, fk_fsync_outstanding
 *   (fk_sync_io_name and fk_sync_io_parse are in names.c).
 * Test hooks: src/fsync_batch.h.
 *
 * Backends:
 *   uring       one ring of queue_depth entries per batch, created by
 *               fk_fsync_batch_create; requests become IORING_OP_FSYNC or
 *               IORING_OP_SYNC_FILE_RANGE SQEs (a range longer than
 *               FK_URING_SFR_MAX_BYTES becomes several SQEs: the SQE's
 *               len is 32 bits);
 *   threads     min(queue_depth, nr) workers per run (the caller is one
 *               of them) take requests in array order from a shared
 *               cursor and call fk_sys.fsync / .fdatasync /
 *               .sync_file_range;
 *   sequential  the same loop on the calling thread alone.
 *
 * Why the batch does not write: io_uring could take a write and an fsync
 * linked with IOSQE_IO_LINK, but a link only chains SQEs of the same
 * submission, SQEs submitted separately run in any order, and the fsync
 * opcode does not wait for writes in flight on the file.  A request is
 * therefore issued only for data already written: the caller's
 * write()/pwrite() returned before fk_fsync_batch_run was called.
 *
 * Invariants:
 *  1. At most queue_depth requests (uring: SQEs) are in flight; the ring
 *     has at least queue_depth SQ entries and twice that CQ entries, so
 *     io_uring_get_sqe never fails and the CQ never overflows.
 *  2. A request is issued at most once per run, and only if its file
 *     (st_dev, st_ino) has no error yet: in this run, or recorded in the
 *     batch's failed-file set by an earlier run.  Nothing is retried.
 *  3. The first error of a file is its error for good: at the end of a
 *     run every request of a failed file reports it, and the file joins
 *     the batch's failed set.  The first error of the batch (completion
 *     order) is kept in first_error and returned by every later run.
 *  4. Each request ends in state DONE with result/issued/latency set,
 *     whatever happened to the others.
 *
 * Request states within a run:
 *   PENDING --issue--> STARTED --last piece completes--> DONE
 *   PENDING --invalid / file failed--> DONE (issued = 0)
 * If io_uring fails at submit (not per request), the ring is drained and
 * destroyed, STARTED requests that never reached the kernel go back to
 * PENDING, and the rest of the run (and of the batch) uses threads.
 */
#include "fsync_batch.h"
#include "flushkit.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef FK_HAVE_LIBURING
#include <liburing.h>
#endif

enum { ST_PENDING = 0, ST_STARTED = 1, ST_DONE = 2 };

#define NO_FILE SIZE_MAX

struct failed_file {
	dev_t dev;
	ino_t ino;
	int err;
};

struct async;

struct fk_fsync_batch {
	int backend; /* FK_SYNC_IO_URING/THREADS/SEQUENTIAL */
	uint32_t queue_depth;
	int first_error; /* sticky, invariant 3 */
	struct fk_fsync_batch_stats st;
	struct failed_file *failed; /* sticky per file, invariant 3 */
	size_t nr_failed, alloc_failed;
#ifdef FK_HAVE_LIBURING
	int have_ring;
	struct io_uring ring;
#endif
	struct async *as; /* fk_fsync_submit/_reap state, NULL until used */
};

struct file_state {
	dev_t dev;
	ino_t ino;
	int err; /* first error of the file */
};

/* One run of fk_fsync_batch_run. */
struct run {
	struct fk_fsync_batch *b;
	struct fk_fsync_req *reqs;
	size_t nr;
	size_t *file_of;      /* request -> files[] index or NO_FILE */
	unsigned char *state; /* ST_* */
	struct file_state *files;
	size_t nr_files;
	/* thread pool */
	pthread_mutex_t lock;
	size_t next;
	uint32_t in_flight;
};

/* ---- hooks ---- */

#ifdef FK_HAVE_LIBURING
int (*fk_uring_queue_init)(unsigned entries, struct io_uring *ring,
			   unsigned flags) = io_uring_queue_init;
#else
static int no_uring(unsigned entries, struct io_uring *ring, unsigned flags)
{
	(void)entries;
	(void)ring;
	(void)flags;
	return -ENOSYS;
}
int (*fk_uring_queue_init)(unsigned entries, struct io_uring *ring,
			   unsigned flags) = no_uring;
#endif
void (*fk_uring_submit_hook)(const struct fk_fsync_req *req, size_t index);
int (*fk_uring_cqe_hook)(const struct fk_fsync_req *req, size_t index, int res);
int (*fk_uring_submit_fault)(unsigned queued);

void fk_uring_hooks_reset(void)
{
#ifdef FK_HAVE_LIBURING
	fk_uring_queue_init = io_uring_queue_init;
#else
	fk_uring_queue_init = no_uring;
#endif
	fk_uring_submit_hook = NULL;
	fk_uring_cqe_hook = NULL;
	fk_uring_submit_fault = NULL;
}

int fk_fsync_batch_have_uring(void)
{
#ifdef FK_HAVE_LIBURING
	return 1;
#else
	return 0;
#endif
}

/* ---- options (the names of enum fk_sync_io are in names.c) ---- */

void fk_fsync_batch_opts_init(struct fk_fsync_batch_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sync_io = FK_SYNC_IO_AUTO;
	o->queue_depth = FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH;
}

/* ---- io_uring setup ---- */

#ifdef FK_HAVE_LIBURING
static int uring_setup(struct fk_fsync_batch *b)
{
	int err = fk_uring_queue_init(b->queue_depth, &b->ring, 0);
	if (err > 0)
		err = -err;
	if (err)
		return err;
	/* Kernels before 5.6 cannot be probed; they do have both opcodes
	 * if they have io_uring at all from 5.2 on. */
	struct io_uring_probe *p = io_uring_get_probe_ring(&b->ring);
	if (p) {
		if (!io_uring_opcode_supported(p, IORING_OP_FSYNC) ||
		    !io_uring_opcode_supported(p, IORING_OP_SYNC_FILE_RANGE))
			err = -EOPNOTSUPP;
		io_uring_free_probe(p);
	}
	if (err) {
		io_uring_queue_exit(&b->ring);
		return err;
	}
	/* fsync runs in io-wq's bounded workers, by default at most
	 * 4 x CPUs per ring: allow queue_depth of them (5.15+; older
	 * kernels keep their limit, which is not an error). */
	unsigned workers[2] = {b->queue_depth, 0};
	io_uring_register_iowq_max_workers(&b->ring, workers);
	b->have_ring = 1;
	return 0;
}

static void uring_teardown(struct fk_fsync_batch *b)
{
	if (b->have_ring) {
		io_uring_queue_exit(&b->ring);
		b->have_ring = 0;
	}
}
#else
static int uring_setup(struct fk_fsync_batch *b)
{
	/* Goes through the hook so tests see the same path either way. */
	int err = fk_uring_queue_init(b->queue_depth, NULL, 0);
	return err ? err : -ENOSYS;
}

static void uring_teardown(struct fk_fsync_batch *b)
{
	(void)b;
}
#endif

int fk_fsync_batch_create(const struct fk_fsync_batch_opts *o,
			  struct fk_fsync_batch **out)
{
	struct fk_fsync_batch_opts def;
	if (!o) {
		fk_fsync_batch_opts_init(&def);
		o = &def;
	}
	if (!out || o->sync_io < FK_SYNC_IO_AUTO ||
	    o->sync_io > FK_SYNC_IO_SEQUENTIAL || o->queue_depth < 1 ||
	    o->queue_depth > FK_FSYNC_BATCH_MAX_QUEUE_DEPTH)
		return -EINVAL;
	struct fk_fsync_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->queue_depth = o->queue_depth;
	b->backend = o->sync_io;
	if (b->backend == FK_SYNC_IO_AUTO && b->queue_depth == 1)
		b->backend = FK_SYNC_IO_SEQUENTIAL;
	if (b->backend == FK_SYNC_IO_AUTO || b->backend == FK_SYNC_IO_URING) {
		int err = uring_setup(b);
		if (err && b->backend == FK_SYNC_IO_URING) {
			free(b);
			return err;
		}
		b->st.uring_error = err;
		b->backend = err ? FK_SYNC_IO_THREADS : FK_SYNC_IO_URING;
	}
	*out = b;
	return 0;
}

static void async_destroy(struct fk_fsync_batch *b);

void fk_fsync_batch_destroy(struct fk_fsync_batch *b)
{
	if (!b)
		return;
	async_destroy(b);
	uring_teardown(b);
	free(b->failed);
	free(b);
}

int fk_fsync_batch_backend(const struct fk_fsync_batch *b)
{
	return b->backend;
}

int fk_fsync_batch_error(const struct fk_fsync_batch *b)
{
	return b->first_error;
}

void fk_fsync_batch_get_stats(const struct fk_fsync_batch *b,
			      struct fk_fsync_batch_stats *st)
{
	*st = b->st;
}

/* ---- the run: preparation, issue policy, completion ---- */

static void note_error(struct run *r, int err)
{
	if (err && !r->b->first_error)
		r->b->first_error = err;
}

struct key {
	dev_t dev;
	ino_t ino;
	size_t idx;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int failed_lookup(const struct fk_fsync_batch *b, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < b->nr_failed; i++)
		if (b->failed[i].dev == dev && b->failed[i].ino == ino)
			return b->failed[i].err;
	return 0;
}

static int failed_add(struct fk_fsync_batch *b, dev_t dev, ino_t ino, int err)
{
	if (failed_lookup(b, dev, ino))
		return 0;
	if (b->nr_failed == b->alloc_failed) {
		size_t n = b->alloc_failed ? b->alloc_failed * 2 : 16;
		void *p = realloc(b->failed, n * sizeof(*b->failed));
		if (!p)
			return -ENOMEM;
		b->failed = p;
		b->alloc_failed = n;
	}
	b->failed[b->nr_failed++] = (struct failed_file){dev, ino, err};
	return 0;
}

/* Validate each request and group them by file (invariant 2). */
static int prepare(struct run *r)
{
	struct key *keys = malloc((r->nr ? r->nr : 1) * sizeof(*keys));
	r->file_of = malloc((r->nr ? r->nr : 1) * sizeof(*r->file_of));
	r->state = calloc(r->nr ? r->nr : 1, 1);
	r->files = malloc((r->nr ? r->nr : 1) * sizeof(*r->files));
	if (!keys || !r->file_of || !r->state || !r->files) {
		free(keys);
		return -ENOMEM;
	}
	size_t nr_keys = 0;
	for (size_t i = 0; i < r->nr; i++) {
		struct fk_fsync_req *q = &r->reqs[i];
		q->result = 0;
		q->issued = 0;
		q->latency_ns = 0;
		r->file_of[i] = NO_FILE;
		int err = 0;
		if (q->op < FK_FSYNC_OP_FSYNC || q->op > FK_FSYNC_OP_WRITEBACK)
			err = -EINVAL;
		else if (q->op == FK_FSYNC_OP_WRITEBACK &&
			 (q->offset > INT64_MAX ||
			  q->length > INT64_MAX - q->offset))
			err = -EINVAL;
		struct stat st;
		if (!err)
			err = fk_sys.fstat(q->fd, &st);
		if (err) {
			q->result = err;
			r->state[i] = ST_DONE;
			note_error(r, err);
			continue;
		}
		keys[nr_keys++] = (struct key){st.st_dev, st.st_ino, i};
	}
	qsort(keys, nr_keys, sizeof(*keys), key_cmp);
	r->nr_files = 0;
	for (size_t k = 0; k < nr_keys; k++) {
		if (k == 0 || keys[k].dev != keys[k - 1].dev ||
		    keys[k].ino != keys[k - 1].ino) {
			struct file_state *f = &r->files[r->nr_files++];
			f->dev = keys[k].dev;
			f->ino = keys[k].ino;
			f->err = failed_lookup(r->b, f->dev, f->ino);
		}
		r->file_of[keys[k].idx] = r->nr_files - 1;
	}
	free(keys);
	return 0;
}

/*
 * May request @i be issued now?  Only a PENDING request whose file has
 * no error yet; one whose file failed is DONE without being issued.
 * Called with the run's lock held by the thread pool.
 */
static int may_issue(struct run *r, size_t i)
{
	if (r->state[i] != ST_PENDING)
		return 0;
	const struct file_state *f = &r->files[r->file_of[i]];
	if (f->err) {
		r->reqs[i].result = f->err;
		r->state[i] = ST_DONE;
		return 0;
	}
	r->state[i] = ST_STARTED;
	return 1;
}

static void complete(struct run *r, size_t i, int res, uint64_t lat_ns)
{
	struct fk_fsync_req *q = &r->reqs[i];
	q->result = res < 0 ? res : 0;
	q->issued = 1;
	q->latency_ns = lat_ns;
	r->state[i] = ST_DONE;
	r->b->st.issued++;
	if (res < 0) {
		struct file_state *f = &r->files[r->file_of[i]];
		if (!f->err)
			f->err = res;
		note_error(r, res);
	}
}

/* Invariant 3: a failed file's error is every request's result. */
static int finish(struct run *r)
{
	int err = 0;
	for (size_t i = 0; i < r->nr; i++) {
		struct fk_fsync_req *q = &r->reqs[i];
		size_t f = r->file_of[i];
		if (f != NO_FILE && r->files[f].err) {
			q->result = r->files[f].err;
			if (!q->issued)
				r->b->st.skipped++;
		}
		if (q->result)
			r->b->st.errors++;
	}
	for (size_t f = 0; f < r->nr_files; f++)
		if (r->files[f].err && !err)
			err = failed_add(r->b, r->files[f].dev, r->files[f].ino,
					 r->files[f].err);
	return err;
}

/* ---- threads and sequential ---- */

static int do_call(const struct fk_fsync_req *q)
{
	switch (q->op) {
	case FK_FSYNC_OP_FSYNC:
		return fk_sys.fsync(q->fd);
	case FK_FSYNC_OP_FDATASYNC:
		return fk_sys.fdatasync(q->fd);
	default:
		return fk_sys.sync_file_range(q->fd, (off_t)q->offset,
					      (off_t)q->length,
					      SYNC_FILE_RANGE_WRITE);
	}
}

static void *worker(void *arg)
{
	struct run *r = arg;
	pthread_mutex_lock(&r->lock);
	while (r->next < r->nr) {
		size_t i = r->next++;
		if (!may_issue(r, i))
			continue;
		if (++r->in_flight > r->b->st.max_in_flight)
			r->b->st.max_in_flight = r->in_flight;
		r->b->st.calls++;
		pthread_mutex_unlock(&r->lock);
		uint64_t t0 = fk_now_ns();
		int res = do_call(&r->reqs[i]);
		uint64_t lat = fk_now_ns() - t0;
		pthread_mutex_lock(&r->lock);
		r->in_flight--;
		complete(r, i, res, lat);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void run_threads(struct run *r, uint32_t nthreads)
{
	size_t want = r->nr < nthreads ? r->nr : nthreads;
	pthread_t *tids = NULL;
	size_t started = 0;
	r->next = 0;
	r->in_flight = 0;
	if (want > 1)
		tids = malloc((want - 1) * sizeof(*tids));
	/* If threads cannot be had, fewer (or only the caller) work. */
	for (size_t t = 0; tids && t + 1 < want; t++) {
		if (pthread_create(&tids[t], NULL, worker, r))
			break;
		started++;
	}
	worker(r);
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(tids);
}

/* ---- io_uring ---- */

#ifdef FK_HAVE_LIBURING
struct slot {
	uint64_t start_ns;
	uint32_t pieces; /* SQEs not yet completed */
	int err;	 /* first error among the pieces */
};

static void uring_reap(struct run *r, struct slot *slots, unsigned *inflight,
		       size_t *started)
{
	struct io_uring *ring = &r->b->ring;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	uint64_t now = fk_now_ns();
	io_uring_for_each_cqe(ring, head, cqe)
	{
		size_t i = (size_t)io_uring_cqe_get_data64(cqe);
		int res = cqe->res;
		seen++;
		if (fk_uring_cqe_hook)
			res = fk_uring_cqe_hook(&r->reqs[i], i, res);
		struct slot *s = &slots[i];
		if (res < 0 && !s->err)
			s->err = res;
		if (--s->pieces == 0 && r->state[i] == ST_STARTED) {
			complete(r, i, s->err, now - s->start_ns);
			(*started)--;
		}
	}
	io_uring_cq_advance(ring, seen);
	*inflight -= seen;
}

static int submit_and_wait(struct io_uring *ring, unsigned queued)
{
	if (fk_uring_submit_fault) {
		int err = fk_uring_submit_fault(queued);
		if (err < 0)
			return err; /* as if io_uring_enter(2) failed */
	}
	return io_uring_submit_and_wait(ring, 1);
}

/*
 * Returns 0 when every request is DONE, or the -errno of a ring-level
 * failure after which the ring is drained and the caller finishes the
 * run with threads.
 */
static int run_uring(struct run *r)
{
	struct fk_fsync_batch *b = r->b;
	struct io_uring *ring = &b->ring;
	struct slot *slots = calloc(r->nr ? r->nr : 1, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	size_t next = 0, cur = NO_FILE, started = 0;
	uint64_t cur_off = 0, cur_left = 0;
	unsigned inflight = 0, queued = 0;
	int fatal = 0;

	for (;;) {
		/* Fill the SQ up to queue_depth SQEs in flight (inv. 1). */
		while (inflight + queued < b->queue_depth) {
			if (cur == NO_FILE) {
				while (next < r->nr && !may_issue(r, next))
					next++;
				if (next == r->nr)
					break;
				cur = next++;
				struct fk_fsync_req *q = &r->reqs[cur];
				struct slot *s = &slots[cur];
				s->start_ns = fk_now_ns();
				s->pieces = 1;
				cur_off = q->offset;
				cur_left = q->length;
				if (q->op == FK_FSYNC_OP_WRITEBACK && cur_left)
					s->pieces =
					    (uint32_t)((cur_left +
							FK_URING_SFR_MAX_BYTES -
							1) /
						       FK_URING_SFR_MAX_BYTES);
				started++;
				if (started > b->st.max_in_flight)
					b->st.max_in_flight = (uint32_t)started;
				if (fk_uring_submit_hook)
					fk_uring_submit_hook(q, cur);
			}
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
			if (!sqe)
				break;
			struct fk_fsync_req *q = &r->reqs[cur];
			int last = 1;
			if (q->op == FK_FSYNC_OP_WRITEBACK) {
				uint64_t len = cur_left;
				if (len > FK_URING_SFR_MAX_BYTES)
					len = FK_URING_SFR_MAX_BYTES;
				io_uring_prep_sync_file_range(
				    sqe, q->fd, (unsigned)len, cur_off,
				    SYNC_FILE_RANGE_WRITE);
				cur_off += len;
				cur_left -= len;
				last = cur_left == 0;
			} else {
				io_uring_prep_fsync(
				    sqe, q->fd,
				    q->op == FK_FSYNC_OP_FDATASYNC
					? IORING_FSYNC_DATASYNC
					: 0);
			}
			io_uring_sqe_set_data64(sqe, cur);
			queued++;
			b->st.calls++;
			if (last)
				cur = NO_FILE;
		}
		if (inflight + queued == 0)
			break;
		int ret;
		if (queued)
			ret = submit_and_wait(ring, queued);
		else {
			struct io_uring_cqe *cqe;
			ret = io_uring_wait_cqe(ring, &cqe);
		}
		if (ret == -EINTR)
			continue;
		if (ret < 0 && (ret == -EAGAIN || ret == -EBUSY) && inflight) {
			struct io_uring_cqe *cqe;
			io_uring_wait_cqe(ring, &cqe);
		} else if (ret < 0) {
			fatal = ret;
			break;
		} else if (queued) {
			queued -= (unsigned)ret;
			inflight += (unsigned)ret;
		}
		uring_reap(r, slots, &inflight, &started);
	}
	if (fatal) {
		/* Drain what reached the kernel; the queued rest never did. */
		while (inflight) {
			struct io_uring_cqe *cqe;
			int ret = io_uring_wait_cqe(ring, &cqe);
			if (ret < 0 && ret != -EINTR)
				break;
			uring_reap(r, slots, &inflight, &started);
		}
		for (size_t i = 0; i < r->nr; i++) {
			if (r->state[i] != ST_STARTED)
				continue;
			if (inflight) {
				/* Lost track of in-flight SQEs: report, do
				 * not reissue (invariant 2). */
				complete(r, i, fatal, 0);
			} else if (slots[i].err) {
				complete(r, i, slots[i].err, 0);
			} else {
				/* Never reached the kernel (or a hint
				 * partly did): issue it with threads. */
				r->state[i] = ST_PENDING;
			}
		}
		uring_teardown(b);
		b->backend = FK_SYNC_IO_THREADS;
		b->st.uring_error = fatal;
	}
	free(slots);
	return fatal;
}
#endif

int fk_fsync_batch_run(struct fk_fsync_batch *b, struct fk_fsync_req *reqs,
		       size_t nr)
{
	if (!b || (!reqs && nr))
		return -EINVAL;
	if (fk_fsync_outstanding(b))
		return -EBUSY; /* the ring's CQEs would be mixed up */
	struct run r = {.b = b, .reqs = reqs, .nr = nr};
	int err = prepare(&r);
	if (err)
		goto out;
	b->st.requests += nr;
	pthread_mutex_init(&r.lock, NULL);
	int use_threads = b->backend == FK_SYNC_IO_THREADS;
#ifdef FK_HAVE_LIBURING
	/* Requests io_uring could not take (no memory for its slots, a
	 * ring-level failure) are still PENDING: threads finish them. */
	if (b->backend == FK_SYNC_IO_URING && run_uring(&r))
		use_threads = 1;
#endif
	if (use_threads)
		run_threads(&r, b->queue_depth);
	else if (b->backend == FK_SYNC_IO_SEQUENTIAL)
		run_threads(&r, 1);
	pthread_mutex_destroy(&r.lock);
	err = finish(&r);
out:
	free(r.file_of);
	free(r.state);
	free(r.files);
	return err ? err : b->first_error;
}

int fk_fsync_many(const struct fk_fsync_batch_opts *o,
		  struct fk_fsync_req *reqs, size_t nr, int *backend)
{
	struct fk_fsync_batch *b;
	int err = fk_fsync_batch_create(o, &b);
	if (err)
		return err;
	if (backend)
		*backend = b->backend;
	err = fk_fsync_batch_run(b, reqs, nr);
	fk_fsync_batch_destroy(b);
	return err;
}

/* ---- submit / reap: requests in flight while the caller works on ----
 *
 * State (struct async, made at the first fk_fsync_submit):
 *   slots[queue_depth]   one per outstanding request (submitted, not yet
 *                        reaped): the caller's request, its file, its
 *                        issue time and raw result;
 *   free_slots           the slot numbers not in use (a stack);
 *   done                 a FIFO of slots whose request completed, not yet
 *                        handed back by fk_fsync_reap;
 *   pend                 (threads) a FIFO of slots for the workers.
 * Invariants:
 *  A1. outstanding = slots in use <= queue_depth; every one of them is
 *      in exactly one place: in the kernel (uring SQE or a worker's
 *      call), in pend, or in done.
 *  A2. uring: user_data of an async SQE is its slot number, or
 *      ASYNC_NOP for an SQE turned into a no-op after a failed submit;
 *      the ring has >= queue_depth SQ and 2 x queue_depth CQ entries,
 *      so with <= queue_depth SQEs in flight the CQ never overflows.
 *  A3. Only the caller's thread (fk_fsync_submit/_reap) touches the
 *      batch's failed-file set and first_error; workers only fill
 *      slot->res and move the slot from pend to done, under lock.
 *  A4. A file's first error is sticky as in fk_fsync_batch_run: a
 *      request of a file already failed is not issued, and a request
 *      reaped in the same or a later call than a failed request of its
 *      file reports that error.
 */

#define ASYNC_NOP UINT64_MAX

struct aslot {
	struct fk_fsync_req *req;
	dev_t dev;
	ino_t ino;
	uint64_t start_ns;
	int res;    /* the call's result, 0 or -errno */
	int issued; /* reached the kernel */
};

struct async {
	uint32_t depth;
	struct aslot *slots;
	uint32_t *free_slots, nr_free;
	uint32_t *done, done_head, nr_done; /* FIFO of depth entries */
	uint32_t *pend, pend_head, nr_pend; /* FIFO of depth entries */
	uint32_t outstanding;
	uint32_t in_kernel; /* issued and not completed (max_in_flight) */
	/* threads backend */
	pthread_mutex_t lock;
	pthread_cond_t work_cv, done_cv;
	pthread_t *workers;
	uint32_t nr_workers, idle;
	uint32_t reaper_waiting; /* fk_fsync_reap asleep on done_cv */
	int stop;
};

static void fifo_push(uint32_t *q, uint32_t head, uint32_t *nr, uint32_t depth,
		      uint32_t v)
{
	q[(head + *nr) % depth] = v;
	(*nr)++;
}

static uint32_t fifo_pop(const uint32_t *q, uint32_t *head, uint32_t *nr,
			 uint32_t depth)
{
	uint32_t v = q[*head];
	*head = (*head + 1) % depth;
	(*nr)--;
	return v;
}

static struct async *async_get(struct fk_fsync_batch *b)
{
	if (b->as)
		return b->as;
	struct async *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->depth = b->queue_depth;
	a->slots = calloc(a->depth, sizeof(*a->slots));
	a->free_slots = malloc(a->depth * sizeof(uint32_t));
	a->done = malloc(a->depth * sizeof(uint32_t));
	a->pend = malloc(a->depth * sizeof(uint32_t));
	a->workers = calloc(a->depth, sizeof(*a->workers));
	if (!a->slots || !a->free_slots || !a->done || !a->pend ||
	    !a->workers) {
		free(a->slots);
		free(a->free_slots);
		free(a->done);
		free(a->pend);
		free(a->workers);
		free(a);
		return NULL;
	}
	for (uint32_t i = 0; i < a->depth; i++)
		a->free_slots[i] = a->depth - 1 - i;
	a->nr_free = a->depth;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work_cv, NULL);
	pthread_cond_init(&a->done_cv, NULL);
	b->as = a;
	return a;
}

/* A worker of the threads backend: take a slot from pend, make the
 * call, put the slot on done (invariant A3). */
static void *async_worker(void *arg)
{
	struct async *a = arg;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->nr_pend && !a->stop) {
			a->idle++;
			pthread_cond_wait(&a->work_cv, &a->lock);
			a->idle--;
		}
		if (!a->nr_pend)
			break; /* stop, and nothing left to do */
		uint32_t s =
		    fifo_pop(a->pend, &a->pend_head, &a->nr_pend, a->depth);
		struct aslot *sl = &a->slots[s];
		pthread_mutex_unlock(&a->lock);
		sl->start_ns = fk_now_ns();
		int res = do_call(sl->req);
		pthread_mutex_lock(&a->lock);
		sl->res = res < 0 ? res : 0;
		sl->issued = 1;
		sl->start_ns = fk_now_ns() - sl->start_ns; /* now latency */
		a->in_kernel--;
		fifo_push(a->done, a->done_head, &a->nr_done, a->depth, s);
		/* A wakeup only for a reaper that sleeps: a context switch
		 * per completion is what the workers cost most. */
		if (a->reaper_waiting)
			pthread_cond_signal(&a->done_cv);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static void async_destroy(struct fk_fsync_batch *b)
{
	struct async *a = b->as;
	if (!a)
		return;
	/* Requests still outstanding complete first (uring: the ring's
	 * exit waits for them; threads: the workers drain pend). */
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_broadcast(&a->work_cv);
	pthread_mutex_unlock(&a->lock);
	for (uint32_t i = 0; i < a->nr_workers; i++)
		pthread_join(a->workers[i], NULL);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->work_cv);
	pthread_cond_destroy(&a->done_cv);
	free(a->slots);
	free(a->free_slots);
	free(a->done);
	free(a->pend);
	free(a->workers);
	free(a);
	b->as = NULL;
}

/* Slot @s completed (or was never issued): queue it for the reaper. */
static void async_done(struct async *a, uint32_t s)
{
	pthread_mutex_lock(&a->lock);
	fifo_push(a->done, a->done_head, &a->nr_done, a->depth, s);
	pthread_mutex_unlock(&a->lock);
}

static void async_free_slot(struct async *a, uint32_t s)
{
	a->slots[s].req = NULL;
	a->free_slots[a->nr_free++] = s;
}

#ifdef FK_HAVE_LIBURING
/* Move the ring's completions of async requests onto done. */
static void async_uring_collect(struct fk_fsync_batch *b, struct async *a)
{
	struct io_uring *ring = &b->ring;
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	uint64_t now = fk_now_ns();
	io_uring_for_each_cqe(ring, head, cqe)
	{
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		seen++;
		if (ud == ASYNC_NOP)
			continue;
		uint32_t s = (uint32_t)ud;
		struct aslot *sl = &a->slots[s];
		int res = cqe->res;
		if (fk_uring_cqe_hook)
			res = fk_uring_cqe_hook(sl->req, s, res);
		sl->res = res < 0 ? res : 0;
		sl->issued = 1;
		sl->start_ns = now - sl->start_ns; /* now latency */
		a->in_kernel--;
		async_done(a, s);
	}
	io_uring_cq_advance(ring, seen);
}

/* Issue slot @s as one SQE and submit it.  0, or the ring's -errno with
 * the SQE turned into a no-op (nothing of the request reached the
 * kernel). */
static int async_uring_issue(struct fk_fsync_batch *b, struct async *a,
			     uint32_t s)
{
	struct io_uring *ring = &b->ring;
	struct aslot *sl = &a->slots[s];
	const struct fk_fsync_req *q = sl->req;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	if (!sqe) {
		/* Only no-ops left by a failed submit can be queued. */
		io_uring_submit(ring);
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			return -EBUSY;
	}
	if (q->op == FK_FSYNC_OP_WRITEBACK)
		io_uring_prep_sync_file_range(sqe, q->fd, (unsigned)q->length,
					      q->offset, SYNC_FILE_RANGE_WRITE);
	else
		io_uring_prep_fsync(
		    sqe, q->fd,
		    q->op == FK_FSYNC_OP_FDATASYNC ? IORING_FSYNC_DATASYNC : 0);
	io_uring_sqe_set_data64(sqe, s);
	if (fk_uring_submit_hook)
		fk_uring_submit_hook(q, s);
	sl->start_ns = fk_now_ns();
	for (;;) {
		int ret = fk_uring_submit_fault ? fk_uring_submit_fault(1) : 0;
		if (ret >= 0)
			ret = io_uring_submit(ring);
		if (ret > 0)
			return 0;
		if (ret == -EINTR)
			continue;
		if ((ret == -EAGAIN || ret == -EBUSY) && a->in_kernel) {
			/* Wait for a completion (left in the CQ), retry. */
			struct io_uring_cqe *cqe;
			io_uring_wait_cqe(ring, &cqe);
			continue;
		}
		/* The SQE is still in the SQ: make it harmless, as the
		 * descriptor may be closed before the next submit. */
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, ASYNC_NOP);
		return ret < 0 ? ret : -EIO;
	}
}
#endif

int fk_fsync_submit(struct fk_fsync_batch *b, struct fk_fsync_req *req)
{
	if (!b || !req)
		return -EINVAL;
	struct async *a = async_get(b);
	if (!a)
		return -ENOMEM;
	if (a->outstanding >= a->depth)
		return -EAGAIN;
	if (req->op < FK_FSYNC_OP_FSYNC || req->op > FK_FSYNC_OP_WRITEBACK ||
	    (req->op == FK_FSYNC_OP_WRITEBACK &&
	     (req->offset > INT64_MAX ||
	      req->length > INT64_MAX - req->offset)))
		return -EINVAL;
	struct stat st;
	int err = fk_sys.fstat(req->fd, &st);
	if (err)
		return err;
	req->result = 0;
	req->issued = 0;
	req->latency_ns = 0;
	uint32_t s = a->free_slots[--a->nr_free];
	struct aslot *sl = &a->slots[s];
	*sl = (struct aslot){.req = req, .dev = st.st_dev, .ino = st.st_ino};
	a->outstanding++;
	b->st.requests++;
	int failed = failed_lookup(b, st.st_dev, st.st_ino);
	if (failed) {
		/* Invariant A4: not issued, reported with the file's error. */
		sl->res = failed;
		async_done(a, s);
		return 0;
	}
	b->st.calls++;
	/* in_kernel under the lock: the threads backend's workers count
	 * their completions down under it. */
	pthread_mutex_lock(&a->lock);
	if (++a->in_kernel > b->st.max_in_flight)
		b->st.max_in_flight = a->in_kernel;
	pthread_mutex_unlock(&a->lock);
#ifdef FK_HAVE_LIBURING
	/* One SQE covers at most FK_URING_SFR_MAX_BYTES: a longer writeback
	 * hint is made on this thread (it only starts writeback). */
	if (b->backend == FK_SYNC_IO_URING &&
	    !(req->op == FK_FSYNC_OP_WRITEBACK &&
	      req->length > FK_URING_SFR_MAX_BYTES)) {
		err = async_uring_issue(b, a, s);
		if (err) {
			a->in_kernel--;
			a->outstanding--;
			b->st.requests--;
			b->st.calls--;
			async_free_slot(a, s);
		}
		return err;
	}
#endif
	if (b->backend == FK_SYNC_IO_THREADS) {
		pthread_mutex_lock(&a->lock);
		fifo_push(a->pend, a->pend_head, &a->nr_pend, a->depth, s);
		/* One worker per outstanding request at most (A1). */
		if (a->idle < a->nr_pend && a->nr_workers < a->depth &&
		    !pthread_create(&a->workers[a->nr_workers], NULL,
				    async_worker, a))
			a->nr_workers++;
		if (a->idle)
			pthread_cond_signal(&a->work_cv);
		pthread_mutex_unlock(&a->lock);
		if (a->nr_workers)
			return 0;
		/* No thread could be had: do it here (the request is on
		 * pend, so the worker loop's state stays right). */
		pthread_mutex_lock(&a->lock);
		fifo_pop(a->pend, &a->pend_head, &a->nr_pend, a->depth);
		pthread_mutex_unlock(&a->lock);
	}
	/* sequential (and the fallbacks above): the call, here and now */
	uint64_t t0 = fk_now_ns();
	int res = do_call(req);
	sl->res = res < 0 ? res : 0;
	sl->issued = 1;
	sl->start_ns = fk_now_ns() - t0;
	pthread_mutex_lock(&a->lock);
	a->in_kernel--;
	pthread_mutex_unlock(&a->lock);
	async_done(a, s);
	return 0;
}

long fk_fsync_reap(struct fk_fsync_batch *b, struct fk_fsync_req **done,
		   size_t max, size_t wait_nr)
{
	if (!b || (!done && max))
		return -EINVAL;
	struct async *a = b->as;
	if (!a || !max)
		return 0;
	size_t want = wait_nr;
	if (want > max)
		want = max;
	if (want > a->outstanding)
		want = a->outstanding;
	for (;;) {
#ifdef FK_HAVE_LIBURING
		if (b->have_ring)
			async_uring_collect(b, a);
#endif
		pthread_mutex_lock(&a->lock);
		if (a->nr_done >= want) {
			pthread_mutex_unlock(&a->lock);
			break;
		}
#ifdef FK_HAVE_LIBURING
		if (b->backend == FK_SYNC_IO_URING) {
			pthread_mutex_unlock(&a->lock);
			struct io_uring_cqe *cqe;
			int ret = io_uring_wait_cqe(&b->ring, &cqe);
			if (ret < 0 && ret != -EINTR && ret != -EAGAIN)
				return ret;
			continue;
		}
#endif
		a->reaper_waiting++;
		pthread_cond_wait(&a->done_cv, &a->lock);
		a->reaper_waiting--;
		pthread_mutex_unlock(&a->lock);
	}
	/* Hand back up to @max, oldest completion first.  Their errors are
	 * recorded first, so that a request of a file reaped together with
	 * a failed one reports the failure (A4). */
	pthread_mutex_lock(&a->lock);
	size_t n = a->nr_done < max ? a->nr_done : max;
	uint32_t head = a->done_head;
	for (size_t k = 0; k < n; k++) {
		struct aslot *sl = &a->slots[a->done[(head + k) % a->depth]];
		if (sl->res && sl->issued) {
			failed_add(b, sl->dev, sl->ino, sl->res);
			if (!b->first_error)
				b->first_error = sl->res;
		}
	}
	for (size_t k = 0; k < n; k++) {
		uint32_t s =
		    fifo_pop(a->done, &a->done_head, &a->nr_done, a->depth);
		struct aslot *sl = &a->slots[s];
		struct fk_fsync_req *q = sl->req;
		int ferr = failed_lookup(b, sl->dev, sl->ino);
		q->issued = sl->issued;
		q->latency_ns = sl->issued ? sl->start_ns : 0;
		q->result = sl->res ? sl->res : ferr;
		if (sl->issued)
			b->st.issued++;
		else
			b->st.skipped++;
		if (q->result)
			b->st.errors++;
		done[k] = q;
		async_free_slot(a, s);
		a->outstanding--;
	}
	pthread_mutex_unlock(&a->lock);
	return (long)n;
}

size_t fk_fsync_outstanding(const struct fk_fsync_batch *b)
{
	return b && b->as ? b->as->outstanding : 0;
}
