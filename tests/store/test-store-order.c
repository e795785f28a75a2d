// SPDX-License-Identifier: MIT
/*
 * test-store-order.c - the page store's durability orderings, checked
 * on the calls it makes through the syscall table (fktest tracing):
 *  1. the WAL rule: every page write to base/ comes after an
 *     fdatasync/fsync of the WAL that covers the page's LSN;
 *  2. every table segment written before a CHECKPOINT record was
 *     fsynced after that write and before the record was written;
 *  3. the checkpoint record is durable before the control file names
 *     it; control.tmp is fsynced before the rename to control, and the
 *     data directory is fsynced after the rename (catalog likewise);
 *  4. a table segment file created is followed by an fsync of base/
 *     before the next checkpoint record (its name must be durable
 *     before a checkpoint relies on pages written into it).
 * Committers run concurrently (so some pages are evicted while their
 * records are not yet durable), with few buffers so that backends
 * evict dirty pages; checkpoints are requested while none runs (no
 * time-triggered ones).  The sync phase uses the thread-pool backend
 * (its fsyncs go through the syscall table, several in flight).
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROW 200
#define NACC 3000
#define WALSEG (256u << 10)
#define MAXCALLS (1u << 20)
#define THREADS 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static ssize_t (*traced_pwrite)(int, const void *, size_t, off_t);
static int (*traced_fsync)(int), (*traced_fdatasync)(int);
static int (*traced_rename)(int, const char *, int, const char *);
/* Per trace index: page LSN + 1 of a base/ page write (the page LSN is
 * the end of the last record that changed it), or 1 if a WAL write
 * contains a CHECKPOINT record. */
static uint64_t *note, *pw_note;
static size_t nr_notes;

static void fd_path(int fd, char *out, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, len - 1);
	out[n < 0 ? 0 : n] = 0;
}

static int wal_segno(const char *path, uint64_t *segno)
{
	const char *p = strstr(path, "/wal/");
	if (!p || strlen(p + 5) != 16)
		return 0;
	char *end;
	*segno = strtoull(p + 5, &end, 16);
	return !*end;
}

static ssize_t my_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	char path[512];
	uint64_t v = 0, segno;
	fd_path(fd, path, sizeof(path));
	if (strstr(path, "/base/")) {
		v = PAGE_LSN(buf) + 1;
	} else if (wal_segno(path, &segno)) {
		/* Look for a CHECKPOINT record at each aligned position. */
		for (size_t i = 0; i + FK_WAL_REC_HDR <= len; i += 8) {
			uint64_t lsn = segno * WALSEG + (uint64_t)off + i;
			const struct fk_wal_rec *r =
			    (const void *)((const uint8_t *)buf + i);
			if (r->type == FK_WAL_CHECKPOINT &&
			    fk_wal_rec_check(r, len - i, lsn, 0) > 0)
				v = 1;
		}
	}
	/* Every pwrite passes here under @mu, so the k-th pwrite of the
	 * trace is the k-th note. */
	pthread_mutex_lock(&mu);
	ssize_t n = traced_pwrite(fd, buf, len, off);
	if (nr_notes < MAXCALLS)
		pw_note[nr_notes++] = v;
	pthread_mutex_unlock(&mu);
	return n;
}

static int my_fsync(int fd)
{
	pthread_mutex_lock(&mu);
	int r = traced_fsync(fd);
	pthread_mutex_unlock(&mu);
	return r;
}

/* While closed, WAL syncs wait (outside the recording mutex). */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_closed, gate_waiting;

static int my_fdatasync(int fd)
{
	char path[512];
	fd_path(fd, path, sizeof(path));
	pthread_mutex_lock(&gate_mu);
	while (gate_closed && strstr(path, "/wal/")) {
		gate_waiting = 1;
		pthread_cond_broadcast(&gate_cv);
		pthread_cond_wait(&gate_cv, &gate_mu);
	}
	pthread_mutex_unlock(&gate_mu);
	pthread_mutex_lock(&mu);
	int r = traced_fdatasync(fd);
	pthread_mutex_unlock(&mu);
	return r;
}

static int my_rename(int a, const char *b, int c, const char *d)
{
	pthread_mutex_lock(&mu);
	int r = traced_rename(a, b, c, d);
	pthread_mutex_unlock(&mu);
	return r;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy(row, &rowno, 8);
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int is_sync(const struct fkt_call *c)
{
	return !strcmp(c->op, "fsync") || !strcmp(c->op, "fdatasync");
}

static struct fk_store *s;
static uint32_t acc, hist;

static void *one_commit(void *arg)
{
	struct fk_batch b;
	(void)arg;
	fk_batch_init(&b);
	fk_batch_add_i64(&b, acc, 17, 8, 1, NULL);
	CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	fk_batch_release(&b);
	return NULL;
}

static void *checkpoint(void *arg)
{
	(void)arg;
	CHECK_EQ(fk_store_checkpoint(s), 0);
	return NULL;
}

static void *committer(void *arg)
{
	uint64_t t = (uint64_t)(uintptr_t)arg;
	struct fk_batch b;
	fk_batch_init(&b);
	for (uint64_t i = 0; i < 150; i++) {
		uint8_t h[ROW] = {0};
		fk_batch_reset(&b);
		fk_batch_add_i64(&b, acc, (i * 7919 + t * 1000) % NACC, 8, 1,
				 NULL);
		fk_batch_append(&b, hist, h, NULL);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	}
	fk_batch_release(&b);
	return NULL;
}

int main(void)
{
	char dir[4200];
	struct fk_store_opts o;
	snprintf(dir, sizeof(dir), "%s/db", fkt_tmpdir());
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 512 << 10; /* 64 buffers */
	o.segment_bytes = 256 << 10;
	o.wal_segment_bytes = WALSEG;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 40;
	o.sync_io = FK_SYNC_IO_THREADS;
	o.sync_jobs = 4;
	note = calloc(MAXCALLS, sizeof(*note));
	pw_note = calloc(MAXCALLS, sizeof(*pw_note));

	fkt_trace_start();
	traced_pwrite = fk_sys.pwrite;
	traced_fsync = fk_sys.fsync;
	traced_fdatasync = fk_sys.fdatasync;
	traced_rename = fk_sys.renameat;
	fk_sys.pwrite = my_pwrite;
	fk_sys.fsync = my_fsync;
	fk_sys.fdatasync = my_fdatasync;
	fk_sys.renameat = my_rename;

	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return fkt_done();
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &acc), 0);
	CHECK_EQ(fk_store_create_table(s, "history", ROW, &hist), 0);
	CHECK_EQ(fk_store_bulk_load(s, acc, NACC, fill, NULL), 0);
	/* A commit whose WAL sync is held back, and a checkpoint that
	 * wants to write its page meanwhile: the page write must wait. */
	pthread_t ta, tc;
	gate_closed = 1;
	pthread_create(&ta, NULL, one_commit, NULL);
	pthread_mutex_lock(&gate_mu);
	while (!gate_waiting)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
	pthread_create(&tc, NULL, checkpoint, NULL);
	usleep(200 * 1000);
	pthread_mutex_lock(&gate_mu);
	gate_closed = 0;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
	pthread_join(ta, NULL);
	pthread_join(tc, NULL);

	for (int round = 0; round < 3; round++) {
		/* Concurrent committers (commits not yet durable while
		 * others evict), then a checkpoint with nothing running. */
		pthread_t th[THREADS];
		for (uintptr_t t = 0; t < THREADS; t++)
			pthread_create(&th[t], NULL, committer, (void *)t);
		for (int t = 0; t < THREADS; t++)
			pthread_join(th[t], NULL);
		CHECK_EQ(fk_store_checkpoint(s), 0);
	}
	struct fk_store_stats ss;
	fk_store_get_stats(s, &ss);
	CHECK(ss.buffers_backend > 0);
	CHECK(ss.buffers_checkpoint > 0);
	CHECK_EQ(fk_store_close(s), 0);
	fk_sys.pwrite = traced_pwrite; /* stop annotating */

	size_t n = fkt_trace_count(), kk = 0;
	CHECK(n < MAXCALLS);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(fkt_trace_get(i)->op, "pwrite"))
			note[i] = kk < nr_notes ? pw_note[kk++] : 0;
	CHECK_EQ(kk, nr_notes);

	/* 1. The WAL rule. */
	uint64_t written[64] = {0}, durable = 0;
	size_t page_writes = 0, violations = 0;
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		uint64_t segno;
		if (wal_segno(c->path, &segno) && segno < 64) {
			if (!strcmp(c->op, "pwrite") && c->ret >= 0 &&
			    segno * WALSEG + c->off + c->len > written[segno])
				written[segno] =
				    segno * WALSEG + c->off + c->len;
			if (is_sync(c) && written[segno] > durable)
				durable = written[segno];
		}
		if (!strcmp(c->op, "pwrite") && strstr(c->path, "/base/")) {
			uint64_t lsn = note[i] - 1;
			page_writes++;
			if (lsn && durable < lsn) {
				violations++;
				fprintf(stderr,
					"page write %zu (LSN %llu) "
					"before WAL durable (%llu)\n",
					i, (unsigned long long)lsn,
					(unsigned long long)durable);
			}
		}
	}
	CHECK(page_writes > 100);
	CHECK_EQ(violations, 0);

	/* 2. Segments fsynced after their writes, before the record. */
	size_t ckpts = 0;
	violations = 0;
	for (size_t i = 0; i < n; i++) {
		if (note[i] != 1 || strstr(fkt_trace_get(i)->path, "/base/"))
			continue;
		ckpts++;
		for (size_t j = 0; j < i; j++) {
			const struct fkt_call *p = fkt_trace_get(j);
			if (strcmp(p->op, "pwrite") ||
			    !strstr(p->path, "/base/"))
				continue;
			size_t k;
			for (k = j + 1; k < i; k++) {
				const struct fkt_call *f = fkt_trace_get(k);
				if (is_sync(f) && !strcmp(f->path, p->path))
					break;
			}
			if (k == i)
				violations++;
		}
	}
	CHECK(ckpts >= 6); /* init, bulk load, 4 requested, shutdown */
	CHECK_EQ(violations, 0);

	/* 3. Checkpoint record durable, then control.tmp fsync, rename,
	 * directory fsync. */
	size_t renames = 0;
	long prev = -1;
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		int is_ctl = ends_with(c->path, "/control");
		if (strcmp(c->op, "rename") ||
		    !(is_ctl || ends_with(c->path, "/catalog")))
			continue;
		renames++;
		const char *tmp = is_ctl ? "/control.tmp" : "/catalog.tmp";
		long f = fkt_trace_find("fsync", tmp, (size_t)(prev + 1));
		CHECK(f >= 0 && f < (long)i);
		long d = fkt_trace_find("fsync", dir, i + 1);
		CHECK(d > (long)i);
		if (d > (long)i)
			CHECK(ends_with(fkt_trace_get((size_t)d)->path, "/db"));
		if (is_ctl) {
			/* The last WAL write with a checkpoint record before
			 * this rename, and a WAL sync after it. */
			long w = -1;
			for (long j = (long)i - 1; j >= 0 && w < 0; j--)
				if (note[j] == 1 &&
				    !strstr(fkt_trace_get((size_t)j)->path,
					    "/base/"))
					w = j;
			CHECK(w >= 0);
			long sy = -1;
			for (long j = w + 1; j < (long)i && sy < 0; j++) {
				const struct fkt_call *x =
				    fkt_trace_get((size_t)j);
				if (is_sync(x) && strstr(x->path, "/wal/"))
					sy = j;
			}
			CHECK(sy > w);
		}
		prev = (long)i;
	}
	CHECK(renames >= 7);

	/* 4. A created segment's name is durable before the next
	 * checkpoint record. */
	size_t created = 0;
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (strcmp(c->op, "open") || c->ret < 0 ||
		    !strstr(c->path, "/base/") || !(c->off & O_CREAT))
			continue;
		created++;
		long f = fkt_trace_find("fsync", "/db/base", i + 1);
		long w = -1;
		for (size_t j = i + 1; j < n && w < 0; j++)
			if (note[j] == 1 &&
			    !strstr(fkt_trace_get(j)->path, "/base/"))
				w = (long)j;
		CHECK(f > (long)i);
		CHECK(w < 0 || f < w);
	}
	CHECK(created >= 2); /* accounts and history */
	if (fkt_failures)
		fkt_trace_dump(stderr);
	fkt_trace_stop();
	free(note);
	free(pw_note);
	return fkt_done();
}
