// SPDX-License-Identifier: MIT
/*
 * thread.c - bench fsmark's methods (-S, fs_mark's 0-6, batch, twopass)
 * and its threads: each creates, writes and syncs its files, timing
 * each system call.
 */
#include "cli-sys.h"
#include "cli.h"
#include "fsmark.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const fsm_method_desc[] = {
    "NO SYNC: Test does not issue sync() or fsync() calls.",
    "INBAND FSYNC: fsync() per file in write loop.",
    "SYNC & FSYNC: sync() after write loop and 1 fsync() at the end.",
    "POST: Reopen and fsync() each file in reverse order after main write "
    "loop.",
    "SYNC POST REVERSE: sync() then reopen and fsync() each file in reverse "
    "order after main write loop.",
    "POST: Reopen and fsync() each file in order after main write loop.",
    "SYNC POST: sync() then reopen and fsync() each file in order after main "
    "write loop.",
    "BATCH: write all files, then fsync() them with many in flight.",
    "TWOPASS: write all files, writeback hints for all, then fsync() them with "
    "many in flight.",
    "ASYNC: fsync() each file as soon as it is written, many in flight, while "
    "the next files are written.",
};
const char *const fsm_method_name[] = {
    "0", "1", "2", "3", "4", "5", "6", "batch", "twopass", "async",
};
const char *const fsm_lat_name[NR_LAT] = {
    "CREAT", "WRITE", "FSYNC", "SYNC", "CLOSE", "UNLINK",
};

static void lat_add(struct lat *l, uint64_t ns)
{
	if (!l->n || ns < l->min_ns)
		l->min_ns = ns;
	if (ns > l->max_ns)
		l->max_ns = ns;
	l->n++;
	l->sum_ns += ns;
}

void fsm_lat_merge(struct lat *d, const struct lat *s)
{
	if (!s->n)
		return;
	if (!d->n || s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	d->n += s->n;
	d->sum_ns += s->sum_ns;
}

/* File @i is complete: count it for the progress lines. */
static void file_done(struct fsm_thread *t, size_t i)
{
	if (!t->f->rf)
		return;
	double us = (double)(fk_now_ns() - t->born_ns[i]) / 1000.0;
	if (t->hist_ok)
		fk_hist_add(&t->hist, (uint64_t)(us + 0.5));
	pthread_mutex_lock(&t->lock);
	t->iv.cnt++;
	t->iv.lat_sum += us;
	t->iv.lat_sumsq += us * us;
	if (us > t->iv.lat_max)
		t->iv.lat_max = us;
	pthread_mutex_unlock(&t->lock);
}

/* A failed call on file @i: print it with the file's path, keep the
 * thread's first. */
static void report(struct fsm_thread *t, const char *op, size_t i, int err)
{
	char sub[16] = "";
	if (t->f->subdirs)
		snprintf(sub, sizeof(sub), "%02x/", t->sub[i]);
	cli_error("%s '%s/%s%s': %s", op, t->dir, sub, t->names[i],
		  fk_strerror(err));
	/* As fs_mark, which exits at its first ENOSPC: no thread starts
	 * another file (each checks before it does), so one full file
	 * system is one error per thread at most, not one per file. */
	if (err == -ENOSPC || err == -EDQUOT)
		__atomic_store_n(&t->f->full, 1, __ATOMIC_RELEASE);
	if (!t->errors++)
		snprintf(t->first_error, sizeof(t->first_error),
			 "%s '%s/%s%s': %s", op, t->dir, sub, t->names[i],
			 fk_strerror(err));
}

/* Time one call into lat[@which] and the thread's system-call time. */
#define TIMED(t, which, expr)                                                  \
	({                                                                     \
		uint64_t t0_ = fk_now_ns();                                    \
		long r_ = (long)(expr);                                        \
		uint64_t d_ = fk_now_ns() - t0_;                               \
		lat_add(&(t)->lat[which], d_);                                 \
		(t)->syscall_ns += d_;                                         \
		r_;                                                            \
	})

static uint32_t rnd(struct fsm_thread *t)
{
	uint32_t x = t->rng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return t->rng = x;
}

/* fs_mark's names: -p bytes, the last -p minus -r hex digits of the
 * time stamp (padded with '~'), then -r random digits and capitals. */
static void make_name(struct fsm_thread *t, char *name)
{
	static const char set[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	unsigned seq_len = t->f->name_len - t->f->rand_len, n = 0;
	char seq[32];
	int len = snprintf(seq, sizeof(seq), "%lx", (unsigned long)time(NULL));
	unsigned skip = (unsigned)len > seq_len ? (unsigned)len - seq_len : 0;
	for (; n < seq_len && seq[skip + n]; n++)
		name[n] = seq[skip + n];
	for (; n < seq_len; n++)
		name[n] = '~';
	for (unsigned i = 0; i < t->f->rand_len; i++)
		name[n++] = set[rnd(t) % 36];
	name[n] = 0;
}

/* -D: the subdirectory of the next file, as fs_mark picks it: -N files
 * in each in turn, or (no -N) a new one every 180 seconds. */
static uint32_t next_subdir(struct fsm_thread *t)
{
	struct fsm *f = t->f;
	if (!f->subdirs)
		return 0;
	if (f->per_subdir) {
		if (t->in_sub >= f->per_subdir) {
			t->cur_sub = (t->cur_sub + 1) % f->subdirs;
			t->in_sub = 0;
		}
		t->in_sub++;
	} else {
		uint64_t now = (uint64_t)time(NULL);
		if (now - t->sub_since_s > FSM_SECS_PER_SUBDIR) {
			t->cur_sub = (t->cur_sub + 1) % f->subdirs;
			t->sub_since_s = now;
		}
	}
	return t->cur_sub;
}

/* The directory descriptor file @i lives in. */
static int file_dirfd(const struct fsm_thread *t, size_t i)
{
	return t->subfd ? t->subfd[t->sub[i]] : t->dirfd;
}

/* Create file @i and write it.  Returns the descriptor or -errno. */
static int create_write(struct fsm_thread *t, size_t i)
{
	struct fsm *f = t->f;
	int fd = -EEXIST;
	t->born_ns[i] = fk_now_ns();
	t->sub[i] = next_subdir(t);
	for (int tries = 0; fd == -EEXIST && tries < 16; tries++) {
		make_name(t, t->names[i]);
		fd = (int)TIMED(
		    t, L_CREAT,
		    cli_sys.openat(file_dirfd(t, i), t->names[i],
				   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
				   0600));
	}
	if (fd < 0) {
		report(t, "create", i, fd);
		t->names[i][0] = 0;
		return fd;
	}
	t->created++;
	uint64_t left = f->size, w0 = fk_now_ns();
	int err = 0;
	while (left && !err) {
		size_t n =
		    left < f->write_size ? (size_t)left : (size_t)f->write_size;
		ssize_t r = cli_sys.write(fd, f->buf, n);
		if (r < 0)
			err = (int)r;
		else if (r == 0)
			err = -ENOSPC;
		else
			left -= (uint64_t)r;
	}
	uint64_t wd = fk_now_ns() - w0;
	lat_add(&t->lat[L_WRITE], wd);
	t->syscall_ns += wd;
	if (err) {
		report(t, "write", i, err);
		TIMED(t, L_CLOSE, cli_sys.close(fd));
		return err;
	}
	return fd;
}

static void close_file(struct fsm_thread *t, size_t i, int fd)
{
	int err = (int)TIMED(t, L_CLOSE, cli_sys.close(fd));
	if (err)
		report(t, "close", i, err);
}

static void fsync_fd(struct fsm_thread *t, size_t i, int fd)
{
	int err = (int)TIMED(t, L_FSYNC, cli_sys.fsync(fd));
	if (err)
		report(t, "fsync", i, err);
}

/* fs_mark's post methods: reopen a written file and fsync it. */
static void reopen_fsync(struct fsm_thread *t, size_t i)
{
	if (!t->names[i][0])
		return;
	int fd = (int)TIMED(t, L_CREAT,
			    cli_sys.openat(file_dirfd(t, i), t->names[i],
					   O_RDONLY | O_NOFOLLOW, 0));
	if (fd < 0) {
		report(t, "open", i, fd);
		return;
	}
	fsync_fd(t, i, fd);
	close_file(t, i, fd);
}

/* Run one batch over files [lo, hi) kept open in t->fds. */
static void batch_pass(struct fsm_thread *t, size_t lo, size_t hi, int op)
{
	size_t nr = 0;
	for (size_t i = lo; i < hi; i++) {
		if (t->fds[i] < 0)
			continue;
		struct fk_fsync_req *q = &t->reqs[nr++];
		memset(q, 0, sizeof(*q));
		q->fd = t->fds[i];
		q->op = op;
		q->cookie = i;
	}
	uint64_t t0 = fk_now_ns();
	fk_fsync_batch_run(t->batch, t->reqs, nr);
	t->syscall_ns += fk_now_ns() - t0;
	for (size_t k = 0; k < nr; k++) {
		const struct fk_fsync_req *q = &t->reqs[k];
		if (op != FK_FSYNC_OP_WRITEBACK && q->issued)
			lat_add(&t->lat[L_FSYNC], q->latency_ns);
		/* A writeback hint that fails is reported too: it is a real
		 * I/O error, and the fsync that follows will say so. */
		if (q->result)
			report(t,
			       op == FK_FSYNC_OP_WRITEBACK ? "sync_file_range"
							   : "fsync",
			       q->cookie, q->result);
	}
}

/* Whether a thread met a full file system: start no other file. */
static int stopped(const struct fsm_thread *t)
{
	return __atomic_load_n(&t->f->full, __ATOMIC_ACQUIRE);
}

/* -S async: the requests fk_fsync_reap returned.  A file is complete
 * (closed, counted) only once its fsync returned 0; a failed one is
 * reported with its path and closed. */
static void async_reaped(struct fsm_thread *t, struct fk_fsync_req **done,
			 long n)
{
	for (long k = 0; k < n; k++) {
		struct fk_fsync_req *q = done[k];
		size_t i = (size_t)q->cookie;
		if (q->issued)
			lat_add(&t->lat[L_FSYNC], q->latency_ns);
		if (q->result)
			report(t, "fsync", i, q->result);
		close_file(t, i, q->fd);
		if (!q->result)
			file_done(t, i);
		t->free_reqs[t->nr_free_reqs++] = (size_t)(q - t->reqs);
	}
}

/* Reap what has completed; with @wait, at least one request. */
static void async_reap(struct fsm_thread *t, size_t wait)
{
	struct fk_fsync_req *done[64];
	uint64_t t0 = fk_now_ns();
	long n = fk_fsync_reap(t->batch, done, 64, wait);
	t->syscall_ns += fk_now_ns() - t0;
	if (n < 0) {
		/* The ring failed: nothing reaped; the requests still
		 * outstanding are lost to us.  Fail the run, loudly. */
		cli_error("reaping fsyncs in '%s': %s", t->dir,
			  fk_strerror((int)n));
		if (!t->errors++)
			snprintf(t->first_error, sizeof(t->first_error),
				 "reaping fsyncs in '%s': %s", t->dir,
				 fk_strerror((int)n));
		t->reap_failed = 1;
		return;
	}
	async_reaped(t, done, n);
}

/*
 * -S async: create and write file i, submit its fsync and go on with
 * file i+1 while it runs; completions are reaped as they come, at most
 * min(--jobs, fd_chunk) files open and in flight.  The fsync is
 * submitted only after the file's writes returned (fsync_batch.c).
 */
static void async_loop(struct fsm_thread *t, size_t n)
{
	struct fsm *f = t->f;
	t->nr_free_reqs = 0;
	for (size_t k = f->fd_chunk; k-- > 0;)
		t->free_reqs[t->nr_free_reqs++] = k;
	t->reap_failed = 0;
	for (size_t i = 0; i < n && !stopped(t) && !t->reap_failed; i++) {
		int fd = create_write(t, i);
		if (fd < 0)
			continue;
		while (!t->nr_free_reqs && !t->reap_failed)
			async_reap(t, 1);
		if (!t->nr_free_reqs) {
			close_file(t, i, fd);
			break;
		}
		struct fk_fsync_req *q =
		    &t->reqs[t->free_reqs[--t->nr_free_reqs]];
		memset(q, 0, sizeof(*q));
		q->fd = fd;
		q->op = FK_FSYNC_OP_FSYNC;
		q->cookie = i;
		uint64_t t0 = fk_now_ns();
		int err;
		while ((err = fk_fsync_submit(t->batch, q)) == -EAGAIN) {
			t->syscall_ns += fk_now_ns() - t0;
			async_reap(t, 1);
			t0 = fk_now_ns();
		}
		t->syscall_ns += fk_now_ns() - t0;
		if (err) {
			report(t, "fsync", i, err);
			close_file(t, i, fd);
			t->free_reqs[t->nr_free_reqs++] = (size_t)(q - t->reqs);
			continue;
		}
		async_reap(t, 0);
	}
	/* Drain.  After a failed reap the outstanding files stay open and
	 * uncounted: the run has failed. */
	while (fk_fsync_outstanding(t->batch) && !t->reap_failed)
		async_reap(t, 1);
}

static void thread_loop(struct fsm_thread *t)
{
	struct fsm *f = t->f;
	size_t n = f->files;
	/* as fs_mark's setup(): each loop starts at a subdirectory picked
	 * by the time, so that short runs do not all fill the first ones */
	t->sub_since_s = (uint64_t)time(NULL);
	t->cur_sub = f->subdirs ? (uint32_t)(t->sub_since_s % f->subdirs) : 0;
	t->in_sub = 0;
	/* A file this loop does not create (stopped) has no name: never
	 * the name a file of the last loop had. */
	for (size_t i = 0; i < n; i++)
		t->names[i][0] = 0;
	t->start_ns = fk_now_ns();
	switch (f->method) {
	case M_NONE:
	case M_FSYNC:
		for (size_t i = 0; i < n && !stopped(t); i++) {
			int fd = create_write(t, i);
			if (fd < 0)
				continue;
			if (f->method == M_FSYNC)
				fsync_fd(t, i, fd);
			close_file(t, i, fd);
			file_done(t, i);
		}
		break;
	case M_BATCH:
	case M_TWOPASS:
		for (size_t lo = 0; lo < n && !stopped(t); lo += f->fd_chunk) {
			size_t hi = lo + f->fd_chunk < n ? lo + f->fd_chunk : n;
			for (size_t i = lo; i < hi; i++)
				t->fds[i] =
				    stopped(t) ? -1 : create_write(t, i);
			/* Every write above has returned: only now may the
			 * fsyncs be issued (see fsync_batch.c). */
			if (f->method == M_TWOPASS)
				batch_pass(t, lo, hi, FK_FSYNC_OP_WRITEBACK);
			batch_pass(t, lo, hi, FK_FSYNC_OP_FSYNC);
			for (size_t i = lo; i < hi; i++)
				if (t->fds[i] >= 0) {
					close_file(t, i, t->fds[i]);
					file_done(t, i);
				}
		}
		break;
	case M_ASYNC:
		async_loop(t, n);
		break;
	default:
		for (size_t i = 0; i < n && !stopped(t); i++) {
			int fd = create_write(t, i);
			if (fd >= 0)
				close_file(t, i, fd);
		}
		if (f->method == M_SYNC_FSYNC1 ||
		    f->method == M_SYNC_POST_REVERSE ||
		    f->method == M_SYNC_POST)
			TIMED(t, L_SYNC, (cli_sys.sync(), 0));
		if (f->method == M_SYNC_FSYNC1 && n) {
			reopen_fsync(t, n - 1);
			for (size_t i = 0; i < n; i++)
				if (t->names[i][0])
					file_done(t, i);
		} else if (f->method == M_POST_REVERSE ||
			   f->method == M_SYNC_POST_REVERSE) {
			for (size_t i = n; i-- > 0;) {
				reopen_fsync(t, i);
				if (t->names[i][0])
					file_done(t, i);
			}
		} else if (f->method == M_POST || f->method == M_SYNC_POST) {
			for (size_t i = 0; i < n; i++) {
				reopen_fsync(t, i);
				if (t->names[i][0])
					file_done(t, i);
			}
		}
		break;
	}
	t->end_ns = fk_now_ns();
	t->overhead_ns = t->end_ns - t->start_ns > t->syscall_ns
			     ? t->end_ns - t->start_ns - t->syscall_ns
			     : 0;
	if (!f->keep) {
		for (size_t i = 0; i < n; i++) {
			if (!t->names[i][0])
				continue;
			int err = (int)TIMED(
			    t, L_UNLINK,
			    cli_sys.unlinkat(file_dirfd(t, i), t->names[i], 0));
			if (err)
				report(t, "unlink", i, err);
		}
	}
}

void *fsm_thread_main(void *arg)
{
	thread_loop(arg);
	return NULL;
}
