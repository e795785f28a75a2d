// SPDX-License-Identifier: MIT
/*
 * cmd-bench-fsmark.c - "flushkit bench fsmark": fs_mark's small-file
 * create + write + fsync benchmark, plus batched fsync.
 *
 * Reproduces fs_mark 3.3 (Ric Wheeler's file-system benchmark): each of
 * -t threads creates -n files of -s bytes in the -d directory (thread i
 * in directory i % number-of-directories), written -w bytes per write(2),
 * made durable by the -S method (fs_mark's 0-6), -L times; one line of
 * fs_mark's table per loop (FSUse%, Count, Size, Files/sec, App
 * Overhead, and with -v min/avg/max microseconds of each system call).
 * flushkit adds two methods that use struct fk_fsync_batch:
 *   -S batch    write all files of a thread (descriptors kept open), then
 *               fsync them with --jobs in flight (--sync-io,
 *               --jobs, old name --queue-depth), then close;
 *   -S twopass  the same with a first pass of writeback hints
 *               (sync_file_range(SYNC_FILE_RANGE_WRITE)) through the batch.
 * Then wall time, user and system CPU time (getrusage) and the write
 * IOPS and MB/s of the devices under the directories from
 * /sys/block/DEV/stat.  --json prints the same as one JSON object.
 *
 * Each run also writes a result file (bench/lib/results.h, docs/report.md)
 * into --results DIR (default results/; --no-results: none): settings,
 * environment, monitor samples of the disks under the directories, one
 * "progress" line per second (tps = files completed per second, latency
 * = a file's time from its create to its completion: closed and, by its
 * method, synced), and the summary.  A progress thread takes the
 * threads' interval counters (each under its thread's lock) every
 * second.
 *
 * All file I/O goes through the syscall table (cli_sys) so tests can
 * trace the order of writes and fsyncs and inject faults.  A failed
 * create, write, fsync or close is reported with its path and makes the
 * command exit 1; the other files still complete.
 *
 * Interface routine: cmd_bench_fsmark(argc, argv).
 */
#include "cli-sys.h"
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

enum {
	M_NONE = 0,	    /* fs_mark -S 0 */
	M_FSYNC = 1,	    /* fsync before close */
	M_SYNC_FSYNC1 = 2,  /* sync(), then one fsync */
	M_POST_REVERSE = 3, /* fsync each file after the loop, reverse */
	M_SYNC_POST_REVERSE = 4,
	M_POST = 5, /* fsync every file after the loop */
	M_SYNC_POST = 6,
	M_BATCH = 7,   /* flushkit: batched fsync */
	M_TWOPASS = 8, /* flushkit: hints, then batched fsync */
};

static const char *const method_desc[] = {
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
};

static const char *const method_name[] = {
    "0", "1", "2", "3", "4", "5", "6", "batch", "twopass",
};

enum { L_CREAT, L_WRITE, L_FSYNC, L_SYNC, L_CLOSE, L_UNLINK, NR_LAT };
static const char *const lat_name[NR_LAT] = {
    "CREAT", "WRITE", "FSYNC", "SYNC", "CLOSE", "UNLINK",
};

struct lat {
	uint64_t n, min_ns, max_ns, sum_ns;
};

/* Files completed in a progress interval (under fsm_thread.lock). */
struct interval {
	uint64_t cnt;
	double lat_sum, lat_sumsq, lat_max; /* microseconds */
};

struct fsm;

/* fs_mark 3.3's limits and defaults (fs_mark.h). */
#define FSM_MAX_THREADS 64
#define FSM_MAX_FILES 1000000
#define FSM_NAME_MAX 128	     /* FILENAME_SIZE */
#define FSM_MAX_IO_BUFFER (1u << 20) /* MAX_IO_BUFFER_SIZE */
#define FSM_SECS_PER_SUBDIR 180	     /* -D without -N: time hash */

struct fsm_thread {
	struct fsm *f;
	unsigned id;
	const char *dir;
	int dirfd;
	struct fk_fsync_batch *batch;
	char (*names)[FSM_NAME_MAX + 1];
	uint32_t *sub; /* each file's subdirectory (-D), else 0 */
	int *subfd;    /* -D: the subdirectories, opened; else NULL */
	uint32_t cur_sub, in_sub; /* -D: where the next file goes */
	uint64_t sub_since_s;	  /* -D without -N: when cur_sub began */
	int *fds;
	struct fk_fsync_req *reqs;
	uint32_t rng;
	uint64_t *born_ns;   /* each file's create start */
	struct fk_hist hist; /* per-file latency, us, all loops */
	int hist_ok;
	pthread_mutex_t lock;
	struct interval iv; /* under lock */
	/* one loop */
	struct lat lat[NR_LAT];
	uint64_t syscall_ns; /* time in file-writing system calls */
	uint64_t start_ns, end_ns;
	uint64_t overhead_ns; /* elapsed - syscall_ns, before unlinks */
	unsigned created;
	unsigned errors;
	char first_error[256]; /* the thread's first error, as printed */
};

struct fsm {
	const char **dirs;
	size_t nr_dirs;
	unsigned threads, files, loops;
	uint64_t size, write_size;
	int keep, method, verbose, json;
	unsigned subdirs, per_subdir; /* -D, -N (0: none) */
	unsigned name_len, rand_len;  /* -p, -r */
	int fill;	      /* -F: loop until the file system is full */
	int full;	      /* __atomic: a thread met ENOSPC or EDQUOT */
	const char *log_name; /* -l: also append the table there */
	FILE *log;
	struct fk_fsync_batch_opts bopts;
	size_t fd_chunk; /* files a thread keeps open at once */
	char *buf;
	struct fsm_thread *th;
	const char *results_dir; /* NULL: no result file */
	struct result_file *rf;
	/* the progress thread (with a result file) */
	pthread_t prog_thread;
	pthread_mutex_t prog_lock;
	pthread_cond_t prog_cond;
	int prog_stop, prog_running;
	uint64_t prog_start_ns;
	uint32_t *per_sec; /* files completed in each full second */
	size_t nr_sec, alloc_sec;
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

static void lat_merge(struct lat *d, const struct lat *s)
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

static void *thread_main(void *arg)
{
	thread_loop(arg);
	return NULL;
}

/* ---- progress lines of the result file ---- */

/* Write the "progress" line of [@begin_ns, @end_ns) and note its files
 * in f->per_sec when it is a full second.  The last, partial interval
 * (!@full) is written whenever it holds files, however short, so every
 * completed file is in exactly one line (a run shorter than 100 ms has
 * only that line); an empty one shorter than 100 ms is left out. */
static void progress_line(struct fsm *f, uint64_t begin_ns, uint64_t end_ns,
			  int full)
{
	struct interval sum = {0};
	for (unsigned i = 0; i < f->threads; i++) {
		struct fsm_thread *t = &f->th[i];
		pthread_mutex_lock(&t->lock);
		sum.cnt += t->iv.cnt;
		sum.lat_sum += t->iv.lat_sum;
		sum.lat_sumsq += t->iv.lat_sumsq;
		if (t->iv.lat_max > sum.lat_max)
			sum.lat_max = t->iv.lat_max;
		memset(&t->iv, 0, sizeof(t->iv));
		pthread_mutex_unlock(&t->lock);
	}
	double n = (double)sum.cnt, len_s = (double)(end_ns - begin_ns) / 1e9;
	if (!full && !sum.cnt && len_s < 0.1)
		return;
	double avg = n ? sum.lat_sum / n : 0;
	double var = n ? sum.lat_sumsq / n - avg * avg : 0;
	results_progress(f->rf, results_mono_s(f->rf, end_ns),
			 len_s > 0 ? n / len_s : 0, avg / 1000.0,
			 var > 0 ? sqrt(var) / 1000.0 : 0,
			 sum.lat_max / 1000.0);
	if (!full)
		return;
	if (f->nr_sec == f->alloc_sec) {
		size_t a = f->alloc_sec ? 2 * f->alloc_sec : 64;
		uint32_t *p = realloc(f->per_sec, a * sizeof(*p));
		if (!p)
			return;
		f->per_sec = p;
		f->alloc_sec = a;
	}
	f->per_sec[f->nr_sec++] = (uint32_t)sum.cnt;
}

/* One "progress" line per second until fsm.prog_stop, then one for the
 * last partial second (see progress_line). */
static void *progress_main(void *arg)
{
	struct fsm *f = arg;
	uint64_t last = f->prog_start_ns, next = last + 1000000000ull;
	pthread_mutex_lock(&f->prog_lock);
	for (;;) {
		struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
				      .tv_nsec = (long)(next % 1000000000ull)};
		while (!f->prog_stop &&
		       pthread_cond_timedwait(&f->prog_cond, &f->prog_lock,
					      &ts) != ETIMEDOUT)
			;
		if (f->prog_stop)
			break;
		pthread_mutex_unlock(&f->prog_lock);
		progress_line(f, last, next, 1);
		last = next;
		next += 1000000000ull;
		pthread_mutex_lock(&f->prog_lock);
	}
	pthread_mutex_unlock(&f->prog_lock);
	uint64_t now = fk_now_ns();
	if (now > last)
		progress_line(f, last, now, 0);
	return NULL;
}

static int progress_start(struct fsm *f)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->prog_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&f->prog_lock, NULL);
	f->prog_start_ns = fk_now_ns();
	int e = pthread_create(&f->prog_thread, NULL, progress_main, f);
	if (e) {
		pthread_cond_destroy(&f->prog_cond);
		pthread_mutex_destroy(&f->prog_lock);
		return -e;
	}
	f->prog_running = 1;
	return 0;
}

static void progress_stop(struct fsm *f)
{
	if (!f->prog_running)
		return;
	pthread_mutex_lock(&f->prog_lock);
	f->prog_stop = 1;
	pthread_cond_signal(&f->prog_cond);
	pthread_mutex_unlock(&f->prog_lock);
	pthread_join(f->prog_thread, NULL);
	pthread_cond_destroy(&f->prog_cond);
	pthread_mutex_destroy(&f->prog_lock);
	f->prog_running = 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* ---- device statistics ---- */

struct dev_stat {
	dev_t dev;
	char name[128];
	int ok;
	char why[512];
	uint64_t writes0, sectors0, writes1, sectors1;
};

/* Find /sys/block/DEV/stat for st_dev (a partition's parent disk). */
static void dev_resolve(struct dev_stat *d)
{
	char link[128], real[PATH_MAX], path[PATH_MAX + 32];
	if (major(d->dev) == 0) {
		snprintf(d->why, sizeof(d->why),
			 "st_dev %u:%u is not a block device", major(d->dev),
			 minor(d->dev));
		return;
	}
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(d->dev),
		 minor(d->dev));
	if (!realpath(link, real)) {
		snprintf(d->why, sizeof(d->why), "%.200s: %.200s", link,
			 strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0) {
		char *slash = strrchr(real, '/');
		if (slash)
			*slash = 0;
	}
	const char *base = strrchr(real, '/');
	snprintf(d->name, sizeof(d->name), "%.100s", base ? base + 1 : real);
	d->ok = 1;
}

static int dev_read(struct dev_stat *d, uint64_t *writes, uint64_t *sectors)
{
	char path[192];
	snprintf(path, sizeof(path), "/sys/block/%.100s/stat", d->name);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(d->why, sizeof(d->why), "%.200s: %.200s", path,
			 strerror(errno));
		d->ok = 0;
		return -1;
	}
	unsigned long long v[7];
	int n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		       &v[2], &v[3], &v[4], &v[5], &v[6]);
	fclose(fp);
	if (n != 7) {
		snprintf(d->why, sizeof(d->why), "%.200s: unexpected format",
			 path);
		d->ok = 0;
		return -1;
	}
	*writes = v[4];
	*sectors = v[6];
	return 0;
}

/* ---- options ---- */

static void usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: flushkit bench fsmark -d DIR [-d DIR...] [OPTIONS]\n"
	    "\n"
	    "fs_mark-compatible small-file benchmark: create, write and sync "
	    "files.\n"
	    "\n"
	    "  -d DIR          directory, created with its parents if "
	    "missing\n"
	    "                  (repeatable; thread i uses DIR number i %% N)\n"
	    "  -t N            threads, a multiple of the -d count (default: "
	    "that)\n"
	    "  -n N            files per thread per loop (default 1000)\n"
	    "  -s BYTES        file size (default 51200)\n"
	    "  -w BYTES        bytes per write() (default 16384)\n"
	    "  -D N            N subdirectories 00, 01, ... in each directory\n"
	    "  -N N            N files in each subdirectory in turn (with -D)\n"
	    "  -L N            loops (default 1); keeps the files, as fs_mark\n"
	    "  -F              loop until the file system is full (keeps the "
	    "files)\n"
	    "  -k              keep files after each loop (default: unlink "
	    "them)\n"
	    "  -l FILE         also append the table to FILE\n"
	    "  -p N            file name length (default 40, at most 128)\n"
	    "  -r N            random characters at the end of names (default "
	    "24)\n"
	    "  -S METHOD       0 no sync, 1 fsync before close (default), 2 "
	    "sync then\n"
	    "                  one fsync, 3 post-reverse fsync, 4 sync + "
	    "post-reverse\n"
	    "                  fsync, 5 post fsync, 6 sync + post fsync;\n"
	    "                  batch: write all, then batched fsync;\n"
	    "                  twopass: write all, writeback hints, batched "
	    "fsync\n"
	    "  --sync-io=IO    batch backend: auto (default), uring, threads, "
	    "sequential\n"
	    "  --jobs N        fsyncs in flight per thread (default 32)\n"
	    "  --queue-depth N the old name of --jobs (kept for scripts)\n"
	    "  -v              min/avg/max microseconds of each system call\n"
	    "  --json          print the results as JSON\n"
	    "  --results=DIR   write the result file there (default results)\n"
	    "  --no-results    write no result file\n"
	    "  -h, --help      this help\n"
	    "\n"
	    "Exit status: 0 ok, 1 an I/O error (reported on stderr), 2 "
	    "usage.\n");
}

static int parse_opts(struct fsm *f, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"sync-io", required_argument, NULL, 'I'},
	    {"jobs", required_argument, NULL, 'Q'},
	    {"queue-depth", required_argument, NULL, 'Q'}, /* old name */
	    {"json", no_argument, NULL, 'J'},
	    {"results", required_argument, NULL, 256},
	    {"no-results", no_argument, NULL, 257},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, threads_given = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:d:t:n:s:w:L:kS:vhD:N:Fl:p:r:",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (f->nr_dirs >= FSM_MAX_THREADS) {
				cli_usage_error("bench fsmark",
						"Max number of threads "
						"(and directories) is %d",
						FSM_MAX_THREADS);
				return -1;
			}
			if (strlen(optarg) >= PATH_MAX - FSM_NAME_MAX - 8) {
				cli_usage_error(
				    "bench fsmark",
				    "%s directory pathname "
				    "too long (must be less than %d "
				    "bytes)",
				    optarg, PATH_MAX - FSM_NAME_MAX - 8);
				return -1;
			}
			f->dirs[f->nr_dirs++] = optarg;
			break;
		case 't':
		case 'n':
		case 'L':
		case 'D':
		case 'N':
		case 'p':
		case 'r':
			if (cli_parse_u64(optarg, &v) || (v < 1 && c != 'r') ||
			    v > 1000000000) {
				cli_usage_error("bench fsmark",
						"invalid value '%s' for -%c",
						optarg, c);
				return -1;
			}
			if (c == 't' && v > FSM_MAX_THREADS) {
				cli_usage_error("bench fsmark",
						"Max threads is %d",
						FSM_MAX_THREADS);
				return -1;
			}
			if (c == 'n' && v > FSM_MAX_FILES) {
				cli_usage_error("bench fsmark",
						"Max files is %d",
						FSM_MAX_FILES);
				return -1;
			}
			if (c == 'D' && v < 2) {
				cli_usage_error("bench fsmark",
						"Number of subdirs "
						"needs to be greater than 1");
				return -1;
			}
			if ((c == 'p' || c == 'r') && v > FSM_NAME_MAX) {
				cli_usage_error("bench fsmark",
						"Max filename size is "
						"%d",
						FSM_NAME_MAX);
				return -1;
			}
			if (c == 'D' && v > 4096) {
				cli_bad_value("bench fsmark", "-D", optarg,
					      "at most 4096");
				return -1;
			}
			if (c == 't') {
				f->threads = (unsigned)v;
				threads_given = 1;
			} else if (c == 'n') {
				f->files = (unsigned)v;
			} else if (c == 'L') {
				f->loops = (unsigned)v;
				f->keep = 1; /* as fs_mark: -L keeps files */
			} else if (c == 'D') {
				f->subdirs = (unsigned)v;
			} else if (c == 'N') {
				f->per_subdir = (unsigned)v;
			} else if (c == 'p') {
				f->name_len = (unsigned)v;
			} else {
				f->rand_len = (unsigned)v;
			}
			break;
		case 'F':
			f->fill = 1;
			f->keep = 1; /* as fs_mark: hard to fill otherwise */
			break;
		case 'l':
			if (!*optarg) {
				cli_bad_value("bench fsmark", "-l", "",
					      "a file name");
				return -1;
			}
			f->log_name = optarg;
			break;
		case 's':
		case 'w':
			if (cli_parse_size(optarg, &v) || (c == 'w' && v < 1)) {
				cli_usage_error("bench fsmark",
						"invalid value '%s' for -%c",
						optarg, c);
				return -1;
			}
			if (c == 'w' && v > FSM_MAX_IO_BUFFER) {
				cli_usage_error("bench fsmark",
						"MAX IO buffer size is "
						"%u",
						FSM_MAX_IO_BUFFER);
				return -1;
			}
			if (c == 's')
				f->size = v;
			else
				f->write_size = v;
			break;
		case 'k':
			f->keep = 1;
			break;
		case 'S':
			f->method = -1;
			for (int m = 0; m <= M_TWOPASS; m++)
				if (!strcmp(optarg, method_name[m]))
					f->method = m;
			if (f->method < 0) {
				cli_bad_value("bench fsmark", "-S", optarg,
					      "0-6, batch or twopass");
				return -1;
			}
			break;
		case 'v':
			f->verbose = 1;
			break;
		case 'I': {
			int io = cli_parse_sync_io(optarg);
			if (io < 0) {
				cli_bad_sync_io("bench fsmark", optarg);
				return -1;
			}
			f->bopts.sync_io = io;
			break;
		}
		case 'Q':
			if (cli_parse_jobs(optarg, &f->bopts.queue_depth)) {
				cli_bad_jobs("bench fsmark", optarg);
				return -1;
			}
			break;
		case 'J':
			f->json = 1;
			break;
		case 256:
			if (!*optarg) {
				cli_bad_value("bench fsmark", "--results", "",
					      "a directory");
				return -1;
			}
			f->results_dir = optarg;
			break;
		case 257:
			f->results_dir = NULL;
			break;
		case 'h':
			return 1;
		default:
			cli_option_error("bench fsmark", c, argv, longopts);
			return -1;
		}
	}
	if (optind < argc) {
		cli_usage_error("bench fsmark", "extra operand '%s'",
				argv[optind]);
		return -1;
	}
	if (!f->nr_dirs) {
		cli_usage_error("bench fsmark",
				"Must specify at least one directory "
				"with -d switch");
		return -1;
	}
	if (!f->subdirs && f->per_subdir) {
		cli_usage_error(
		    "bench fsmark",
		    "Must specify at more than 1 "
		    "subdirectory with -D switch for -N num_per_subdir "
		    "to make sense");
		return -1;
	}
	if (f->rand_len > f->name_len) {
		cli_usage_error("bench fsmark",
				"-r %u random bytes do not fit in "
				"-p %u byte names",
				f->rand_len, f->name_len);
		return -1;
	}
	/* fs_mark: at least one thread per directory, and the same number
	 * in each */
	if (!threads_given || f->nr_dirs > f->threads)
		f->threads = (unsigned)f->nr_dirs;
	else if (f->threads % f->nr_dirs) {
		cli_usage_error(
		    "bench fsmark",
		    "Threads (%u) must be an even multiple "
		    "the number of directories (%zu) and less than %d ",
		    f->threads, f->nr_dirs, FSM_MAX_THREADS);
		return -1;
	}
	return 0;
}

/* ---- output ---- */

static void jint(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

static void jdbl(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, results_json_double(v, 3));
}

static void jstr(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static json_object *lat_json(const struct lat *l)
{
	json_object *o = json_object_new_object();
	jint(o, "count", (int64_t)l->n);
	jint(o, "min_us", (int64_t)(l->min_ns / 1000));
	jint(o, "avg_us", l->n ? (int64_t)(l->sum_ns / l->n / 1000) : 0);
	jint(o, "max_us", (int64_t)(l->max_ns / 1000));
	return o;
}

/* Min, average or max (@which 0, 1, 2) of @l in microseconds. */
static unsigned long long lat_us(const struct lat *l, int which)
{
	if (which == 0)
		return l->min_ns / 1000;
	if (which == 2)
		return l->max_ns / 1000;
	return l->n ? l->sum_ns / l->n / 1000 : 0;
}

/* One row of fs_mark's table, or one object of the JSON "loops". */
static void emit_row(const struct fsm *f, unsigned use_pct, uint64_t count,
		     double fps, double secs, uint64_t overhead_ns,
		     const struct lat *lat, json_object *jloops)
{
	if (f->json) {
		json_object *o = json_object_new_object();
		jint(o, "fs_use_pct", use_pct);
		jint(o, "count", (int64_t)count);
		jint(o, "size", (int64_t)f->size);
		jdbl(o, "files_per_sec", fps);
		jint(o, "app_overhead_us", (int64_t)(overhead_ns / 1000));
		jdbl(o, "seconds", secs);
		for (int l = 0; l < NR_LAT; l++) {
			char key[16];
			snprintf(key, sizeof(key), "%s", lat_name[l]);
			for (char *p = key; *p; p++)
				*p = (char)(*p - 'A' + 'a');
			json_object_object_add(o, key, lat_json(&lat[l]));
		}
		json_object_array_add(jloops, o);
		return;
	}
	for (FILE *o = stdout; o; o = o == stdout ? f->log : NULL) {
		fprintf(o, "%6u%13llu%13llu%13.1f%17llu", use_pct,
			(unsigned long long)count, (unsigned long long)f->size,
			fps, (unsigned long long)(overhead_ns / 1000));
		for (int l = 0; f->verbose && l < NR_LAT; l++)
			fprintf(o, "%9llu%9llu%9llu", lat_us(&lat[l], 0),
				lat_us(&lat[l], 1), lat_us(&lat[l], 2));
		fprintf(o, "\n");
		fflush(o);
	}
}

/* -L: the run-to-run spread of Files/sec over the loops. */
static void print_spread(const struct fsm *f, const double *fps, unsigned n)
{
	if (n < 2)
		return;
	double sum = 0, sq = 0, lo = fps[0], hi = fps[0];
	for (unsigned i = 0; i < n; i++) {
		sum += fps[i];
		sq += fps[i] * fps[i];
		lo = fps[i] < lo ? fps[i] : lo;
		hi = fps[i] > hi ? fps[i] : hi;
	}
	double avg = sum / n, var = (sq - n * avg * avg) / (n - 1);
	double sd = var > 0 ? sqrt(var) : 0;
	for (FILE *o = stdout; o; o = o == stdout ? f->log : NULL)
		fprintf(o,
			"\n# Files/sec over %u loops: avg %.1f, stddev %.1f "
			"(%.1f%%), min %.1f, max %.1f\n",
			n, avg, sd, avg > 0 ? 100.0 * sd / avg : 0.0, lo, hi);
}

static void print_header_to(FILE *out, const struct fsm *f, int argc,
			    char **argv, const char *backend);

static void print_header(const struct fsm *f, int argc, char **argv,
			 const char *backend)
{
	print_header_to(stdout, f, argc, argv, backend);
	if (f->log)
		print_header_to(f->log, f, argc, argv, backend);
}

/* The header of fs_mark's table, on @out. */
static void print_header_to(FILE *out, const struct fsm *f, int argc,
			    char **argv, const char *backend)
{
#define printf(...) fprintf(out, __VA_ARGS__)
	printf("\n# ");
	for (int i = 0; i < argc; i++)
		printf(" %s", i == 0 ? "flushkit bench fsmark" : argv[i]);
	printf("\n#\tflushkit %s, %u thread(s)\n", fk_version(), f->threads);
	printf("#\tSync method: %s\n", method_desc[f->method]);
	if (f->method >= M_BATCH)
		printf("#\tSync io: %s, %u jobs (fsyncs in flight) per "
		       "thread\n",
		       backend, f->bopts.queue_depth);
	if (f->subdirs)
		printf("#\tDirectories:  %s across %u subdirectories with %u "
		       "%s.\n",
		       f->per_subdir ? "Round Robin between directories"
				     : "Time based hash between directories",
		       f->subdirs,
		       f->per_subdir ? f->per_subdir : FSM_SECS_PER_SUBDIR,
		       f->per_subdir ? "files per subdirectory"
				     : "seconds per subdirectory");
	else
		printf("#\tDirectories:  no subdirectories used\n");
	printf("#\tFile names: %u bytes long, (%u initial bytes of time stamp "
	       "with %u random bytes at end of name)\n",
	       f->name_len, f->name_len - f->rand_len, f->rand_len);
	printf("#\tFiles info: size %llu bytes, written with an IO size of "
	       "%llu bytes per write\n",
	       (unsigned long long)f->size, (unsigned long long)f->write_size);
	printf("#\tApp overhead is time in microseconds spent in the test not "
	       "doing file writing related system calls.\n");
	if (f->verbose)
		printf("#\tAll system call times are reported in "
		       "microseconds.\n");
	printf("\n%6s%13s%13s%13s%17s", "FSUse%", "Count", "Size", "Files/sec",
	       "App Overhead");
	if (f->verbose) {
		for (int l = 0; l < NR_LAT; l++) {
			char h[32];
			snprintf(h, sizeof(h), "%s (Min/Avg/Max)", lat_name[l]);
			printf("%27s", h);
		}
	}
	printf("\n");
	fflush(out);
#undef printf
}

/* ---- the command ---- */

/* Create directory @name under @dfd if missing (as fs_mark: not its
 * parents).  @shown: the path for messages.  Returns 0 or -errno
 * (printed). */
static int make_dir(int dfd, const char *name, const char *shown)
{
	int err = cli_sys.mkdirat(dfd, name, 0755);
	if (err && err != -EEXIST) {
		cli_error("mkdir '%s': %s", shown, fk_strerror(err));
		return err;
	}
	return 0;
}

/* -D: create and open the subdirectories 00, 01, ... of @t's
 * directory.  Returns 0 or -errno (printed). */
static int open_subdirs(struct fsm_thread *t)
{
	unsigned n = t->f->subdirs;
	t->subfd = malloc(n * sizeof(*t->subfd));
	if (!t->subfd)
		return -ENOMEM;
	for (unsigned k = 0; k < n; k++)
		t->subfd[k] = -1;
	for (unsigned k = 0; k < n; k++) {
		char name[16], shown[PATH_MAX + 16];
		snprintf(name, sizeof(name), "%02x", k);
		snprintf(shown, sizeof(shown), "%s/%s", t->dir, name);
		int err = make_dir(t->dirfd, name, shown);
		if (err)
			return err;
		t->subfd[k] = cli_sys.openat(
		    t->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
		if (t->subfd[k] < 0) {
			cli_error("open '%s': %s", shown,
				  fk_strerror(t->subfd[k]));
			return t->subfd[k];
		}
	}
	return 0;
}

static int fsm_setup(struct fsm *f, const char **backend)
{
	/* Batch methods keep a thread's files open until their fsync. */
	struct rlimit rl;
	size_t budget = 1000;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 128)
			budget = (size_t)(rl.rlim_cur - 128);
		else if (rl.rlim_cur == RLIM_INFINITY)
			budget = 1u << 20;
	}
	f->fd_chunk = budget / f->threads;
	if (f->fd_chunk < 1)
		f->fd_chunk = 1;
	if (f->fd_chunk > f->files)
		f->fd_chunk = f->files;
	f->buf = malloc(f->write_size);
	f->th = calloc(f->threads, sizeof(*f->th));
	if (!f->buf || !f->th)
		return -ENOMEM;
	for (size_t i = 0; i < f->write_size; i++)
		f->buf[i] = (char)('a' + i % 26);
	for (unsigned i = 0; i < f->threads; i++) {
		struct fsm_thread *t = &f->th[i];
		t->f = f;
		t->id = i;
		t->dir = f->dirs[i % f->nr_dirs];
		t->dirfd = -1;
		t->rng = (uint32_t)(fk_now_ns() ^ (i * 2654435761u) ^
				    ((uint32_t)getpid() << 16)) |
			 1;
		t->names = calloc(f->files, sizeof(*t->names));
		t->fds = calloc(f->files, sizeof(*t->fds));
		t->reqs = calloc(f->fd_chunk, sizeof(*t->reqs));
		t->born_ns = calloc(f->files, sizeof(*t->born_ns));
		t->sub = calloc(f->files, sizeof(*t->sub));
		pthread_mutex_init(&t->lock, NULL);
		if (!t->names || !t->fds || !t->reqs || !t->born_ns ||
		    !t->sub || fk_hist_init(&t->hist))
			return -ENOMEM;
		t->hist_ok = 1;
		const char *failed = t->dir;
		int err = cli_mkdir_parents(t->dir, 0755, &failed);
		if (err) {
			cli_error("mkdir '%s': %s", failed, fk_strerror(err));
			return err;
		}
		t->dirfd =
		    cli_sys.openat(AT_FDCWD, t->dir, O_RDONLY | O_DIRECTORY, 0);
		if (t->dirfd < 0) {
			cli_error("open '%s': %s", t->dir,
				  fk_strerror(t->dirfd));
			return t->dirfd;
		}
		if (f->subdirs && (err = open_subdirs(t)))
			return err;
		if (f->method >= M_BATCH) {
			err = fk_fsync_batch_create(&f->bopts, &t->batch);
			if (err) {
				cli_error("cannot set up --sync-io=%s: %s",
					  fk_sync_io_name(f->bopts.sync_io),
					  fk_strerror(err));
				return err;
			}
			*backend =
			    fk_sync_io_name(fk_fsync_batch_backend(t->batch));
		}
	}
	return 0;
}

static void fsm_release(struct fsm *f)
{
	for (unsigned i = 0; f->th && i < f->threads; i++) {
		struct fsm_thread *t = &f->th[i];
		if (t->dirfd >= 0)
			cli_sys.close(t->dirfd);
		for (unsigned k = 0; t->subfd && k < f->subdirs; k++)
			if (t->subfd[k] >= 0)
				cli_sys.close(t->subfd[k]);
		free(t->subfd);
		free(t->sub);
		fk_fsync_batch_destroy(t->batch);
		free(t->names);
		free(t->fds);
		free(t->reqs);
		free(t->born_ns);
		if (t->hist_ok)
			fk_hist_release(&t->hist);
		if (t->f)
			pthread_mutex_destroy(&t->lock);
	}
	free(f->th);
	free(f->buf);
	free(f->per_sec);
}

/* -F: whether each thread's file system has room for another loop of
 * its files (fs_mark's check_space); says so when not. */
static int space_for_loop(const struct fsm *f)
{
	for (unsigned i = 0; i < f->threads; i++) {
		struct statfs sf;
		if (cli_sys.fstatfs(f->th[i].dirfd, &sf))
			continue;
		if ((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize <
		    f->size * f->files) {
			printf("Insufficient free space in %s to create %u new "
			       "files, exiting\n",
			       f->th[i].dir, f->files);
			return 0;
		}
	}
	return 1;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* ---- the result file ---- */

static void rdbl(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, results_json_double(v, 6));
}

static json_object *settings_json(const struct fsm *f)
{
	json_object *o = json_object_new_object();
	jstr(o, "bench", "fsmark");
	jstr(o, "sync_method", method_name[f->method]);
	if (f->method >= M_BATCH) {
		jstr(o, "sync_io", fk_sync_io_name(f->bopts.sync_io));
		jint(o, "sync_jobs", (int64_t)f->bopts.queue_depth);
	}
	jint(o, "threads", (int64_t)f->threads);
	jint(o, "files_per_thread", (int64_t)f->files);
	jint(o, "size", (int64_t)f->size);
	jint(o, "write_size", (int64_t)f->write_size);
	jint(o, "loops", (int64_t)f->loops);
	json_object_object_add(o, "keep", json_object_new_boolean(f->keep));
	if (f->subdirs) {
		jint(o, "subdirs", (int64_t)f->subdirs);
		if (f->per_subdir)
			jint(o, "files_per_subdir", (int64_t)f->per_subdir);
	}
	if (f->name_len != 40 || f->rand_len != 24) {
		jint(o, "name_len", (int64_t)f->name_len);
		jint(o, "rand_len", (int64_t)f->rand_len);
	}
	if (f->fill)
		json_object_object_add(o, "fill", json_object_new_boolean(1));
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < f->nr_dirs; i++)
		json_object_array_add(a, json_object_new_string(f->dirs[i]));
	json_object_object_add(o, "paths", a);
	jstr(o, "tps_unit", "files/s");
	return o;
}

/* Open the result file, write settings and env, start the clock, the
 * monitor sampler and the progress thread.  Returns 0 or -1 (reported;
 * only a file that cannot be created is an error). */
static int results_begin(struct fsm *f)
{
	int e = results_open(f->results_dir, "fsmark", &f->rf);
	if (e) {
		cli_error("open '%s': %s", f->results_dir, fk_strerror(e));
		f->rf = NULL;
		return -1;
	}
	results_write(f->rf, "settings", settings_json(f));
	results_env(f->rf, f->dirs, f->nr_dirs);
	results_reset_clock(f->rf);
	/* right after the clock: its intervals start at t_s = 0 */
	e = progress_start(f);
	if (e)
		cli_warn("no progress lines: %s", fk_strerror(e));
	e = results_monitor_start(f->rf, f->dirs, f->nr_dirs, 1000);
	if (e)
		cli_warn("no monitor samples: %s", fk_strerror(e));
	return 0;
}

/* The summary line; closes the file and prints its path on stderr.
 * Returns 0 or -1 (a write error, reported). */
static int results_end(struct fsm *f, const char *backend, uint64_t files,
		       double run_s, double wall_s, double user_s, double sys_s,
		       unsigned errors, const char *failure,
		       const double *loop_fps, unsigned loops_done)
{
	progress_stop(f);
	results_monitor_stop(f->rf);
	struct fk_hist all;
	json_object *o = json_object_new_object();
	rdbl(o, "tps", run_s > 0 ? (double)files / run_s : 0);
	jint(o, "files", (int64_t)files);
	rdbl(o, "duration_s", wall_s);
	rdbl(o, "run_s", run_s);
	if (!fk_hist_init(&all)) {
		for (unsigned i = 0; i < f->threads; i++)
			fk_hist_merge(&all, &f->th[i].hist);
		rdbl(o, "lat_avg_ms", fk_hist_mean(&all) / 1000.0);
		rdbl(o, "lat_stddev_ms", fk_hist_stddev(&all) / 1000.0);
		static const struct {
			const char *key;
			double pct;
		} pc[] = {{"lat_p50_ms", 50},
			  {"lat_p90_ms", 90},
			  {"lat_p99_ms", 99},
			  {"lat_p999_ms", 99.9},
			  {"lat_max_ms", 100}};
		for (size_t k = 0; k < sizeof(pc) / sizeof(pc[0]); k++)
			rdbl(o, pc[k].key,
			     (double)fk_hist_percentile(&all, pc[k].pct) /
				 1000.0);
		fk_hist_release(&all);
	}
	if (f->nr_sec) {
		uint32_t *s = malloc(f->nr_sec * sizeof(*s));
		if (s) {
			memcpy(s, f->per_sec, f->nr_sec * sizeof(*s));
			qsort(s, f->nr_sec, sizeof(*s), cmp_u32);
			size_t n = f->nr_sec;
			uint32_t med =
			    n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
			rdbl(o, "stall_ratio",
			     med ? (double)s[0] / (double)med : 0.0);
			jint(o, "worst_second_tps", s[0]);
			jint(o, "median_second_tps", med);
			free(s);
		}
	} else {
		json_object_object_add(o, "stall_ratio", NULL);
	}
	jstr(o, "tps_unit", "files/s");
	if (loops_done > 1) {
		/* -L: Files/sec of each loop (the table's rows) */
		json_object *a = json_object_new_array();
		for (unsigned i = 0; i < loops_done; i++)
			json_object_array_add(
			    a, results_json_double(loop_fps[i], 1));
		json_object_object_add(o, "loop_files_per_sec", a);
	}
	jstr(o, "sync_io", backend);
	rdbl(o, "user_s", user_s);
	rdbl(o, "sys_s", sys_s);
	jint(o, "errors", errors);
	results_summary(f->rf, o, failure);
	char *path = strdup(results_path(f->rf));
	int e = results_close(f->rf);
	f->rf = NULL;
	fflush(stdout);
	if (e)
		cli_error("write '%s': %s", path ? path : f->results_dir,
			  fk_strerror(e));
	else if (path)
		fprintf(stderr, "result file: %s\n", path);
	free(path);
	return e ? -1 : 0;
}

int cmd_bench_fsmark(int argc, char **argv)
{
	const char *dirs_buf[256];
	struct fsm f = {
	    .dirs = dirs_buf,
	    .threads = 1,
	    .files = 1000,
	    .loops = 1,
	    .size = 51200,
	    .write_size = 16384,
	    .method = M_FSYNC,
	    .name_len = 40,
	    .rand_len = 24,
	    .results_dir = "results",
	};
	fk_fsync_batch_opts_init(&f.bopts);
	if (argc > 257)
		return cli_usage_error("bench fsmark", "too many arguments");
	int r = parse_opts(&f, argc, argv);
	if (r > 0)
		usage(stdout);
	if (r)
		return r > 0 ? FK_EXIT_OK : FK_EXIT_USAGE;
	if (f.write_size > f.size && f.size)
		f.write_size = f.size;

	int status = FK_EXIT_OK;
	const char *backend = "-";
	json_object *jroot = NULL, *jloops = NULL;
	struct dev_stat devs[256];
	size_t nr_devs = 0;
	struct rusage ru0, ru1;
	uint64_t wall0 = 0, wall1 = 0, count = 0;
	double run_s = 0; /* the loops' seconds, as Files/sec counts */
	unsigned errors = 0;
	double *loop_fps = NULL;
	char failure[320] = ""; /* the first error of the run, as printed */

	if (fsm_setup(&f, &backend)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	if (f.log_name) {
		/* as fs_mark: appended to, so that runs accumulate */
		int lfd = open(f.log_name,
			       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		f.log = lfd >= 0 ? fdopen(lfd, "a") : NULL;
		if (!f.log) {
			cli_error("open '%s': %s", f.log_name, strerror(errno));
			if (lfd >= 0)
				close(lfd);
			status = FK_EXIT_FAILURE;
			goto out;
		}
	}
	for (size_t i = 0; i < f.nr_dirs; i++) {
		struct stat st;
		if (cli_sys.fstatat(AT_FDCWD, f.dirs[i], &st, 0))
			continue;
		size_t k;
		for (k = 0; k < nr_devs && devs[k].dev != st.st_dev; k++)
			;
		if (k < nr_devs)
			continue;
		memset(&devs[k], 0, sizeof(devs[k]));
		devs[k].dev = st.st_dev;
		dev_resolve(&devs[k]);
		nr_devs++;
	}
	if (f.json) {
		jroot = json_object_new_object();
		jloops = json_object_new_array();
		json_object_object_add(jroot, "loops", jloops);
	} else {
		print_header(&f, argc, argv, backend);
	}

	if (f.results_dir && results_begin(&f)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	for (size_t k = 0; k < nr_devs; k++)
		if (devs[k].ok)
			dev_read(&devs[k], &devs[k].writes0, &devs[k].sectors0);
	getrusage(RUSAGE_SELF, &ru0);
	wall0 = fk_now_ns();
	pthread_t *tids = calloc(f.threads, sizeof(*tids));
	if (!tids) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	loop_fps = calloc(f.fill ? 4096 : f.loops, sizeof(*loop_fps));
	unsigned loops_done = 0;
	if (!loop_fps) {
		free(tids);
		status = FK_EXIT_FAILURE;
		goto out;
	}
	for (unsigned loop = 0; (f.fill || loop < f.loops) && !errors; loop++) {
		unsigned started = 0;
		if (f.fill && (loop >= 4096 || !space_for_loop(&f)))
			break;
		for (unsigned i = 0; i < f.threads; i++) {
			struct fsm_thread *t = &f.th[i];
			memset(t->lat, 0, sizeof(t->lat));
			t->syscall_ns = 0;
			t->created = 0;
			if (pthread_create(&tids[i], NULL, thread_main, t)) {
				cli_error("cannot start thread %u", i);
				if (!errors++)
					snprintf(failure, sizeof(failure),
						 "cannot start thread %u", i);
				break;
			}
			started++;
		}
		uint64_t first = UINT64_MAX, last = 0, overhead_ns = 0;
		unsigned created = 0;
		struct lat lat[NR_LAT];
		memset(lat, 0, sizeof(lat));
		for (unsigned i = 0; i < started; i++) {
			struct fsm_thread *t = &f.th[i];
			pthread_join(tids[i], NULL);
			if (t->start_ns < first)
				first = t->start_ns;
			if (t->end_ns > last)
				last = t->end_ns;
			overhead_ns += t->overhead_ns;
			created += t->created;
			if (t->errors && !failure[0])
				snprintf(failure, sizeof(failure), "%s",
					 t->first_error);
			errors += t->errors;
			for (int l = 0; l < NR_LAT; l++)
				lat_merge(&lat[l], &t->lat[l]);
		}
		count += created;
		double secs = last > first ? (double)(last - first) / 1e9 : 0;
		run_s += secs;
		double fps = secs > 0 ? created / secs : 0;
		unsigned use_pct = 0;
		struct statfs sf;
		if (cli_sys.fstatfs(f.th[0].dirfd, &sf) == 0 && sf.f_blocks)
			use_pct = (unsigned)((sf.f_blocks - sf.f_bavail) * 100 /
					     sf.f_blocks);
		emit_row(&f, use_pct, count, fps, secs, overhead_ns, lat,
			 jloops);
		loop_fps[loops_done++] = fps;
	}
	free(tids);
	if (!f.json)
		print_spread(&f, loop_fps, loops_done);
	wall1 = fk_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	for (size_t k = 0; k < nr_devs; k++)
		if (devs[k].ok)
			dev_read(&devs[k], &devs[k].writes1, &devs[k].sectors1);

	double wall_s = (double)(wall1 - wall0) / 1e9;
	double user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	double sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	json_object *jdevs = f.json ? json_object_new_array() : NULL;
	if (!f.json)
		printf("\nWall time: %.3f s, user CPU: %.3f s, system CPU: "
		       "%.3f s\n",
		       wall_s, user_s, sys_s);
	for (size_t k = 0; k < nr_devs; k++) {
		struct dev_stat *d = &devs[k];
		uint64_t w = d->writes1 - d->writes0;
		double mb = (double)(d->sectors1 - d->sectors0) * 512 / 1e6;
		double iops = wall_s > 0 ? w / wall_s : 0;
		double mbs = wall_s > 0 ? mb / wall_s : 0;
		if (f.json) {
			json_object *o = json_object_new_object();
			char id[32];
			snprintf(id, sizeof(id), "%u:%u", major(d->dev),
				 minor(d->dev));
			jstr(o, "st_dev", id);
			if (d->ok) {
				jstr(o, "name", d->name);
				jint(o, "writes", (int64_t)w);
				jdbl(o, "write_iops", iops);
				jdbl(o, "write_mb_per_sec", mbs);
			} else {
				jstr(o, "unavailable", d->why);
			}
			json_object_array_add(jdevs, o);
		} else if (d->ok) {
			printf("Device %s: %llu write requests, %.1f write "
			       "IOPS, %.2f MB/s written (whole device)\n",
			       d->name, (unsigned long long)w, iops, mbs);
		} else {
			printf("Device statistics unavailable: %s\n", d->why);
		}
	}
	if (f.json) {
		jstr(jroot, "benchmark", "fsmark");
		jstr(jroot, "sync_method", method_name[f.method]);
		jstr(jroot, "sync_io", backend);
		jint(jroot, "sync_jobs", (int)f.bopts.queue_depth);
		/* the old name of sync_jobs, kept for scripts */
		jint(jroot, "queue_depth", (int)f.bopts.queue_depth);
		jint(jroot, "threads", (int)f.threads);
		jint(jroot, "files_per_thread", (int)f.files);
		jint(jroot, "size", (int64_t)f.size);
		jint(jroot, "write_size", (int64_t)f.write_size);
		json_object_object_add(jroot, "keep",
				       json_object_new_boolean(f.keep));
		jdbl(jroot, "wall_s", wall_s);
		jdbl(jroot, "user_s", user_s);
		jdbl(jroot, "sys_s", sys_s);
		json_object_object_add(jroot, "devices", jdevs);
		jint(jroot, "errors", (int)errors);
		if (loops_done > 1) {
			double sm = 0, sq = 0;
			for (unsigned i = 0; i < loops_done; i++) {
				sm += loop_fps[i];
				sq += loop_fps[i] * loop_fps[i];
			}
			double avg = sm / loops_done;
			double var =
			    (sq - loops_done * avg * avg) / (loops_done - 1);
			json_object_object_add(jroot, "files_per_sec_avg",
					       results_json_double(avg, 1));
			json_object_object_add(
			    jroot, "files_per_sec_stddev",
			    results_json_double(var > 0 ? sqrt(var) : 0, 1));
		}
		jstr(jroot, "status", errors ? "failed" : "ok");
		if (errors)
			jstr(jroot, "error", failure);
		results_json_print(jroot);
		json_object_put(jroot);
		jroot = NULL;
	}
	fflush(stdout);
	if (errors) {
		status = FK_EXIT_FAILURE;
		if (f.full)
			cli_error("the file system is full: stopped at the "
				  "first ENOSPC, as fs_mark");
		cli_error("Run was aborted after %u error%s (the first: %s); "
			  "the above results are incomplete.",
			  errors, errors == 1 ? "" : "s", failure);
	}
	if (f.rf &&
	    results_end(&f, backend, count, run_s, wall_s, user_s, sys_s,
			errors, errors ? failure : NULL, loop_fps, loops_done))
		status = FK_EXIT_FAILURE;
out:
	if (f.rf) {
		progress_stop(&f);
		results_close(f.rf);
	}
	if (jroot)
		json_object_put(jroot);
	fflush(stdout);
	if (f.log && fclose(f.log)) {
		cli_error("write '%s': %s", f.log_name, strerror(errno));
		status = FK_EXIT_FAILURE;
	}
	free(loop_fps);
	fsm_release(&f);
	return status;
}
