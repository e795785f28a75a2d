// SPDX-License-Identifier: MIT
/*
 * test-store-sync-io.c - the checkpoint's sync phase with each backend
 * of opts.sync_io (sequential, threads, io_uring), sync_jobs 4, over 21
 * table segments:
 *  - every segment written by a checkpoint is fsynced exactly once by
 *    it, after its last page write and before the WAL write carrying
 *    the CHECKPOINT record, and no segment is fsynced after the record
 *    by that checkpoint;
 *  - in flight: 1 fsync at a time (sequential), 2..4 (threads, io_uring);
 *  - on_checkpoint reports the backend and the files;
 *  - a spread (paced) sync phase, time-triggered, with threads: the
 *    same orderings over several steps of 4 files;
 *  - after close and reopen every committed change is there;
 *  - io_uring refused at setup (-EPERM through the setup hook): a forced
 *    FK_SYNC_IO_URING fails fk_store_open with it, FK_SYNC_IO_AUTO falls
 *    back to threads and says so in on_checkpoint.
 * Events come from the syscall table (pwrite, fsync) and, for io_uring,
 * whose fsyncs bypass it, from the ring's submit and CQE hooks
 * (src/fsync_batch.h).  Skips the io_uring part where it is refused.
 */
#include "fktest.h"
#include "fsync_batch.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define ROW 100
#define NACC 13000 /* 161 pages of 81 rows */
#define NSEG 21	   /* of 8 pages (64 KiB) */
#define WALSEG (256u << 10)
#define JOBS 4
#define MAXEV 100000

enum { EV_WRITE = 1, EV_START, EV_END, EV_RECORD };

struct ev {
	int kind;
	int seg; /* table segment, -1 for EV_RECORD */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct ev evs[MAXEV];
static size_t nev;
static int in_flight, max_in_flight, wait_for_overlap;

static void add_ev(int kind, int seg)
{
	if (nev < MAXEV)
		evs[nev++] = (struct ev){kind, seg};
}

/* Segment number of a table-1 segment descriptor, or -1. */
static int fd_seg(int fd)
{
	char link[64], path[512];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n < 0 ? 0 : n] = 0;
	const char *p = strstr(path, "/base/1.");
	return p ? atoi(p + 8) : -1;
}

static int wal_segno(int fd, uint64_t *segno)
{
	char link[64], path[512];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	path[n < 0 ? 0 : n] = 0;
	const char *p = strstr(path, "/wal/");
	if (!p || strlen(p + 5) != 16)
		return 0;
	char *end;
	*segno = strtoull(p + 5, &end, 16);
	return !*end;
}

static ssize_t my_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	int seg = fd_seg(fd), rec = 0;
	uint64_t segno;
	if (seg < 0 && wal_segno(fd, &segno)) {
		for (size_t i = 0; i + FK_WAL_REC_HDR <= len; i += 8) {
			const struct fk_wal_rec *r =
			    (const void *)((const uint8_t *)buf + i);
			if (r->type == FK_WAL_CHECKPOINT &&
			    fk_wal_rec_check(r, len - i,
					     segno * WALSEG + (uint64_t)off + i,
					     0) > 0)
				rec = 1;
		}
	}
	/* Noted before the call: a record is durable only later. */
	pthread_mutex_lock(&mu);
	if (seg >= 0)
		add_ev(EV_WRITE, seg);
	if (rec)
		add_ev(EV_RECORD, -1);
	pthread_mutex_unlock(&mu);
	return fk_sys_default.pwrite(fd, buf, len, off);
}

static void fsync_start(int seg)
{
	pthread_mutex_lock(&mu);
	add_ev(EV_START, seg);
	if (++in_flight > max_in_flight)
		max_in_flight = in_flight;
	pthread_cond_broadcast(&cv);
	/* Threads: give a second fsync the chance to join (bounded), so
	 * that overlap is seen if the backend allows it. */
	if (wait_for_overlap) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (in_flight < 2 &&
		       pthread_cond_timedwait(&cv, &mu, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&mu);
}

static void fsync_end(int seg)
{
	pthread_mutex_lock(&mu);
	add_ev(EV_END, seg);
	in_flight--;
	pthread_mutex_unlock(&mu);
}

static int my_fsync(int fd)
{
	int seg = fd_seg(fd);
	if (seg < 0)
		return fk_sys_default.fsync(fd);
	fsync_start(seg);
	int r = fk_sys_default.fsync(fd);
	fsync_end(seg);
	return r;
}

static void on_submit(const struct fk_fsync_req *req, size_t index)
{
	(void)index;
	int seg = fd_seg(req->fd);
	if (seg >= 0)
		fsync_start(seg);
}

static int on_cqe(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)index;
	int seg = fd_seg(req->fd);
	if (seg >= 0)
		fsync_end(seg);
	return res;
}

static uint64_t time_files, time_max_files, time_ckpts;
static char last_sync_io[16];
static uint64_t last_files;

static void on_ckpt(void *arg, const struct fk_checkpoint_info *ci)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	CHECK_EQ(ci->error, 0);
	CHECK(ci->sync_io != NULL);
	snprintf(last_sync_io, sizeof(last_sync_io), "%s",
		 ci->sync_io ? ci->sync_io : "");
	last_files = ci->files_synced;
	if (!strcmp(ci->reason, "time")) {
		time_ckpts++;
		time_files += ci->files_synced;
		if (ci->files_synced > time_max_files)
			time_max_files = ci->files_synced;
	}
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy(row, &rowno, 8);
}

/*
 * Check the event log checkpoint by checkpoint (each window ends at a
 * CHECKPOINT record).  Returns the number of segments fsynced in the
 * windows that wrote pages.
 */
static size_t check_events(void)
{
	size_t from = 0, synced = 0, records = 0;
	for (size_t i = 0; i < nev; i++) {
		if (evs[i].kind != EV_RECORD)
			continue;
		records++;
		for (int seg = 0; seg < NSEG; seg++) {
			long last_write = -1, start = -1, end = -1;
			int starts = 0, ends = 0;
			for (size_t j = from; j < i; j++) {
				if (evs[j].seg != seg)
					continue;
				if (evs[j].kind == EV_WRITE)
					last_write = (long)j;
				if (evs[j].kind == EV_START) {
					starts++;
					start = (long)j;
				}
				if (evs[j].kind == EV_END) {
					ends++;
					end = (long)j;
				}
			}
			if (last_write < 0 && !starts)
				continue;
			/* Written: fsynced once, after the write, done
			 * before the record. */
			CHECK_EQ(starts, 1);
			CHECK_EQ(ends, 1);
			CHECK(start > last_write);
			CHECK(end > start);
			synced++;
		}
		from = i + 1;
	}
	CHECK(records > 0);
	return synced;
}

static void reset_events(void)
{
	pthread_mutex_lock(&mu);
	nev = 0;
	in_flight = max_in_flight = 0;
	pthread_mutex_unlock(&mu);
}

static void dirty_all(struct fk_store *s, uint32_t t, int64_t d)
{
	struct fk_batch b;
	fk_batch_init(&b);
	for (uint64_t row = 0; row < NACC; row += 81) {
		fk_batch_reset(&b);
		fk_batch_add_i64(&b, t, row, 8, d, NULL);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	}
	fk_batch_release(&b);
}

static void check_data(const char *dir, int64_t d)
{
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	uint32_t t;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(fk_store_table(s, "t", &t, NULL), 0);
	for (uint64_t row = 0; row < NACC; row += 81) {
		uint8_t buf[ROW];
		int64_t v = 0;
		CHECK_EQ(fk_store_read(s, t, row, buf), 0);
		memcpy(&v, buf + 8, 8);
		CHECK_EQ(v, d);
	}
	CHECK_EQ(fk_store_close(s), 0);
}

static struct fk_store_opts opts(int sync_io)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 8 << 20; /* no evictions */
	o.segment_bytes = 64 << 10;
	o.wal_segment_bytes = WALSEG;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 40;
	o.sync_io = sync_io;
	o.sync_jobs = JOBS;
	o.on_checkpoint = on_ckpt;
	return o;
}

/* Back-to-back: a requested checkpoint, all segments in one batch. */
static void run_immediate(const char *base, int sync_io)
{
	char dir[4200];
	struct fk_store_opts o = opts(sync_io);
	struct fk_store *s = NULL;
	uint32_t t;
	const char *name = fk_sync_io_name(sync_io);
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &t), 0);
	CHECK_EQ(t, 1);
	CHECK_EQ(fk_store_bulk_load(s, t, NACC, fill, NULL), 0);

	reset_events();
	wait_for_overlap = sync_io == FK_SYNC_IO_THREADS;
	fk_sys.pwrite = my_pwrite;
	fk_sys.fsync = my_fsync;
	fk_uring_submit_hook = on_submit;
	fk_uring_cqe_hook = on_cqe;
	dirty_all(s, t, 3);
	CHECK_EQ(fk_store_checkpoint(s), 0);
	pthread_mutex_lock(&mu);
	CHECK(!strcmp(last_sync_io, name));
	CHECK_EQ(last_files, NSEG);
	pthread_mutex_unlock(&mu);
	CHECK_EQ(fk_store_close(s), 0);
	fk_sys_reset();
	fk_uring_hooks_reset();
	wait_for_overlap = 0;

	CHECK_EQ(check_events(), NSEG);
	CHECK_EQ(in_flight, 0);
	if (sync_io == FK_SYNC_IO_SEQUENTIAL)
		CHECK_EQ(max_in_flight, 1);
	else
		CHECK(max_in_flight >= 2 && max_in_flight <= JOBS);
	printf("%s: %zu events, at most %d fsyncs in flight\n", name, nev,
	       max_in_flight);
	check_data(dir, 3);
}

/* Spread: time-triggered checkpoints, paced sync phase, threads. */
static void run_spread(const char *base)
{
	char dir[4200];
	struct fk_store_opts o = opts(FK_SYNC_IO_THREADS);
	struct fk_store *s = NULL;
	uint32_t t;
	snprintf(dir, sizeof(dir), "%s/spread", base);
	o.checkpoint_timeout_ms = 400;
	o.checkpoint_sync_spread_ms = 100;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &t), 0);
	CHECK_EQ(fk_store_bulk_load(s, t, NACC, fill, NULL), 0);
	reset_events();
	fk_sys.pwrite = my_pwrite;
	fk_sys.fsync = my_fsync;
	pthread_mutex_lock(&mu);
	time_files = time_max_files = time_ckpts = 0;
	pthread_mutex_unlock(&mu);
	dirty_all(s, t, 7);
	/* Wait (bounded: 100 s) until time checkpoints synced every
	 * segment.  A slow disk can make dirty_all outlast the first time
	 * checkpoint's redo point; its pages dirtied after that point wait
	 * for the next time checkpoint, which the checkpointer skips as
	 * idle while no WAL follows the last CHECKPOINT record: so after
	 * each time checkpoint that left segments unsynced, commit a no-op
	 * change (+0) to make the next one due. */
	struct timespec until;
	uint64_t seen = 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 100;
	pthread_mutex_lock(&mu);
	while (time_files < NSEG) {
		if (time_ckpts > seen) {
			seen = time_ckpts;
			pthread_mutex_unlock(&mu);
			struct fk_batch b;
			fk_batch_init(&b);
			fk_batch_add_i64(&b, t, 0, 8, 0, NULL);
			CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
			fk_batch_release(&b);
			pthread_mutex_lock(&mu);
			continue;
		}
		if (pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT)
			break;
	}
	CHECK(time_files >= NSEG);
	CHECK(time_max_files > JOBS); /* several paced steps */
	pthread_mutex_unlock(&mu);
	CHECK_EQ(fk_store_close(s), 0);
	fk_sys_reset();
	CHECK(check_events() >= NSEG);
	CHECK(max_in_flight >= 1 && max_in_flight <= JOBS);
	printf("spread: %llu time checkpoints, most files %llu\n",
	       (unsigned long long)time_ckpts,
	       (unsigned long long)time_max_files);
	check_data(dir, 7);
}

static int refuse_uring(unsigned entries, struct io_uring *ring, unsigned flags)
{
	(void)entries;
	(void)ring;
	(void)flags;
	return -EPERM;
}

static void run_refused(const char *base)
{
	char dir[4200];
	struct fk_store_opts o = opts(FK_SYNC_IO_URING);
	struct fk_store *s = NULL;
	snprintf(dir, sizeof(dir), "%s/refused", base);
	fk_uring_queue_init = refuse_uring;
	CHECK_EQ(fk_store_open(dir, &o, &s), -EPERM);
	CHECK(s == NULL);
	o.sync_io = FK_SYNC_IO_AUTO;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	fk_uring_hooks_reset();
	if (!s)
		return;
	CHECK_EQ(fk_store_checkpoint(s), 0);
	pthread_mutex_lock(&mu);
	CHECK(!strcmp(last_sync_io, "threads"));
	pthread_mutex_unlock(&mu);
	CHECK_EQ(fk_store_close(s), 0);
}

int main(void)
{
	const char *base = fkt_tmpdir();
	struct fk_store_opts o;

	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	CHECK_EQ(o.sync_io, FK_SYNC_IO_AUTO);
	CHECK_EQ(o.sync_jobs, 0);
	CHECK_EQ(fk_store_opts_preset(&o, "naive"), 0);
	CHECK_EQ(o.sync_io, FK_SYNC_IO_SEQUENTIAL);
	o = opts(FK_SYNC_IO_THREADS);
	o.sync_jobs = FK_FSYNC_BATCH_MAX_QUEUE_DEPTH + 1;
	struct fk_store *s = NULL;
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/bad", base);
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);
	o.sync_jobs = 0;
	o.sync_io = 17;
	CHECK_EQ(fk_store_open(dir, &o, &s), -EINVAL);

	run_immediate(base, FK_SYNC_IO_SEQUENTIAL);
	run_immediate(base, FK_SYNC_IO_THREADS);
	run_spread(base);
	if (fk_fsync_batch_have_uring())
		run_refused(base);

	struct fk_fsync_batch_opts bo;
	struct fk_fsync_batch *b = NULL;
	fk_fsync_batch_opts_init(&bo);
	bo.sync_io = FK_SYNC_IO_URING;
	int err = fk_fsync_batch_create(&bo, &b);
	fk_fsync_batch_destroy(b);
	if (err)
		printf("io_uring refused (%s): not tested\n", fk_strerror(err));
	else
		run_immediate(base, FK_SYNC_IO_URING);
	return fkt_done();
}
