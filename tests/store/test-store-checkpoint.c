// SPDX-License-Identifier: MIT
/*
 * test-store-checkpoint.c - what a checkpoint does, by preset:
 *  - smooth: the checkpoint's page writes are in (table, segment, block)
 *    order, writeback hints (sync_file_range) are issued, each written
 *    segment is fsynced exactly once;
 *  - naive: no writeback hints, writes in buffer order (not sorted for
 *    this workload), fsyncs one at a time (sequential); smooth batches
 *    them (sync_io auto; run here with threads, traceable);
 *  - on_checkpoint reports what happened (reason, buffers, files);
 *  - checkpoints are triggered by WAL volume ("wal") and by
 *    checkpoint_timeout ("time"), and WAL segments before the redo point
 *    are recycled or removed, so the WAL directory stays bounded.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROW 100
#define NACC 40000 /* 494 pages, 4 segments of 1 MiB */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct fk_checkpoint_info last;
static int nr_time, nr_wal, nr_req;
static uint64_t recycled;

static void on_ckpt(void *arg, const struct fk_checkpoint_info *ci)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	last = *ci;
	if (!strcmp(ci->reason, "time"))
		nr_time++;
	if (!strcmp(ci->reason, "wal"))
		nr_wal++;
	if (!strcmp(ci->reason, "requested"))
		nr_req++;
	recycled += ci->wal_segments_recycled + ci->wal_segments_removed;
	pthread_mutex_unlock(&mu);
}

static void logline(void *arg, const char *line)
{
	(void)arg;
	printf("log: %s\n", line);
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, ROW);
}

/* A counter updated by on_ckpt, read under its mutex. */
static uint64_t locked(const void *p, int is_int)
{
	pthread_mutex_lock(&mu);
	uint64_t v =
	    is_int ? (uint64_t) * (const int *)p : *(const uint64_t *)p;
	pthread_mutex_unlock(&mu);
	return v;
}

static struct fk_store_opts opts(const char *preset)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	CHECK_EQ(fk_store_opts_preset(&o, preset), 0);
	o.shared_buffers_bytes = 8 << 20; /* everything fits */
	o.segment_bytes = 1 << 20;
	o.wal_segment_bytes = 256 << 10;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 40;
	/* Whole full-page images: the WAL-volume checkpoints below need
	 * the WAL to grow fast (smooth compresses them by default). */
	o.wal_compression = FK_WAL_COMPRESSION_OFF;
	o.on_checkpoint = on_ckpt;
	return o;
}

static void touch(struct fk_store *s, uint32_t t, int n, uint64_t seed)
{
	struct fk_batch b;
	fk_batch_init(&b);
	for (int i = 0; i < n; i++) {
		fk_batch_reset(&b);
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		fk_batch_add_i64(&b, t, (seed >> 33) % NACC, 0, 1, NULL);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	}
	fk_batch_release(&b);
}

/* Returns 1 if the checkpoint's base/ writes were sorted. */
static int run_preset(const char *base, const char *preset, int sync_io,
		      size_t *sfr)
{
	char dir[4200];
	struct fk_store_opts o = opts(preset);
	CHECK_EQ(o.sync_io, strcmp(preset, "naive") ? FK_SYNC_IO_AUTO
						    : FK_SYNC_IO_SEQUENTIAL);
	o.sync_io = sync_io;
	struct fk_store *s = NULL;
	uint32_t t;
	snprintf(dir, sizeof(dir), "%s/%s", base, preset);
	/* Traced from before the open to after the close: the
	 * checkpointer thread makes WAL segments through the table at any
	 * time (fkt_trace_clear below keeps only the checkpoint's calls). */
	fkt_trace_start();
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s) {
		fkt_trace_stop();
		return -1;
	}
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &t), 0);
	CHECK_EQ(fk_store_bulk_load(s, t, NACC, fill, NULL), 0);
	/* Read every page in, in reverse, so buffer order differs from
	 * block order; then dirty pages in random order. */
	uint8_t row[ROW];
	for (uint64_t r = NACC; r-- > 0;)
		if (r % 81 == 0)
			CHECK_EQ(fk_store_read(s, t, r, row), 0);
	touch(s, t, 300, 42);
	fkt_trace_clear();
	CHECK_EQ(fk_store_checkpoint(s), 0);
	pthread_mutex_lock(&mu);
	CHECK(!strcmp(last.reason, "requested"));
	CHECK(last.buffers_written > 100);
	CHECK_EQ(last.files_synced, 4);
	CHECK_EQ(last.error, 0);
	CHECK(last.sync_io && !strcmp(last.sync_io, fk_sync_io_name(sync_io)));
	pthread_mutex_unlock(&mu);
	int sorted = 1;
	const struct fkt_call *prev = NULL;
	size_t writes = 0;
	for (size_t i = 0; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (strcmp(c->op, "pwrite") || !strstr(c->path, "/base/"))
			continue;
		writes++;
		if (prev &&
		    (strcmp(prev->path, c->path) > 0 ||
		     (!strcmp(prev->path, c->path) && prev->off > c->off)))
			sorted = 0;
		prev = c;
	}
	CHECK_EQ(writes, last.buffers_written);
	for (int seg = 0; seg < 4; seg++) {
		char suf[32];
		snprintf(suf, sizeof(suf), "/base/%u.%d", t, seg);
		CHECK_EQ(fkt_trace_nr("fsync", suf), 1);
	}
	*sfr = fkt_trace_nr("sync_file_range", NULL) +
	       fkt_trace_nr("fadvise", NULL);
	CHECK_EQ(fk_store_close(s), 0);
	fkt_trace_stop();
	return sorted;
}

static size_t count_wal(const char *dir)
{
	char p[4300];
	snprintf(p, sizeof(p), "%s/wal", dir);
	DIR *d = opendir(p);
	size_t n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (strlen(e->d_name) == 16)
			n++;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	const char *base = fkt_tmpdir();
	size_t sfr;

	CHECK_EQ(run_preset(base, "smooth", FK_SYNC_IO_THREADS, &sfr), 1);
	CHECK(sfr > 0);
	CHECK_EQ(run_preset(base, "naive", FK_SYNC_IO_SEQUENTIAL, &sfr), 0);
	CHECK_EQ(sfr, 0);

	/* Triggers and WAL recycling. */
	char dir[4200];
	struct fk_store_opts o = opts("smooth");
	struct fk_store *s = NULL;
	uint32_t t;
	snprintf(dir, sizeof(dir), "%s/triggers", base);
	o.max_wal_size_bytes = 2 << 20;
	o.checkpoint_completion_target = 0.5;
	o.log = logline;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return fkt_done();
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &t), 0);
	CHECK_EQ(fk_store_bulk_load(s, t, NACC, fill, NULL), 0);
	/* Full-page images make WAL fast: 2 MiB is soon reached. */
	for (int i = 0; i < 10; i++)
		touch(s, t, 500, (uint64_t)i);
	printf("wal %llu time %llu req %llu recycled %llu\n",
	       (unsigned long long)locked(&nr_wal, 1),
	       (unsigned long long)locked(&nr_time, 1),
	       (unsigned long long)locked(&nr_req, 1),
	       (unsigned long long)locked(&recycled, 0));
	CHECK(locked(&nr_wal, 1) >= 2);
	CHECK(locked(&recycled, 0) > 0);
	/* max_wal_size is soft (checkpoints lag behind a fast writer), but
	 * without recycling the directory would hold every segment. */
	struct fk_store_stats ss;
	fk_store_get_stats(s, &ss);
	size_t nwal = count_wal(dir);
	printf("WAL written %llu segments, %zu files\n",
	       (unsigned long long)(ss.wal_bytes / (256 << 10)), nwal);
	CHECK(ss.wal_bytes / (256 << 10) > 3 * nwal);
	CHECK(nwal <= 3 * (2 << 20) / (256 << 10) + 8);
	CHECK_EQ(fk_store_close(s), 0);

	o = opts("smooth");
	o.checkpoint_timeout_ms = 200;
	s = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return fkt_done();
	touch(s, t, 50, 7);
	for (int i = 0; i < 100 && !locked(&nr_time, 1); i++)
		usleep(50 * 1000);
	CHECK(locked(&nr_time, 1) >= 1);
	CHECK_EQ(fk_store_close(s), 0);
	return fkt_done();
}
