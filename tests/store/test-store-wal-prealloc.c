// SPDX-License-Identifier: MIT
/*
 * test-store-wal-prealloc.c - WAL segments are made ahead of the
 * committers while the checkpointer runs, also when the WAL grows
 * faster than a segment a second (the burst of full-page images after
 * a redo point): a committer entering a new segment wakes the
 * checkpointer, which keeps as many segments ahead as the WAL filled in
 * the last second.  A committer that finds no segment made has to
 * create one itself (zero-fill and fsync a whole segment) while it
 * holds its pages and the append mutexes every other committer waits
 * for; here that must stay rare: at most a tenth of the segments the
 * run makes.  Segment creation is seen through the system-call table
 * (the temporary file "segtemp" of wal.c), with the thread that made
 * it.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ROW 100
#define NACC 200000 /* 2470 pages */
#define PAGES_PER_COMMIT 4

static pthread_t committer;
static int created_by_committer, created_by_others;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int (*real_openat)(int, const char *, int, mode_t);

static int counting_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	if (!strcmp(path, "segtemp")) {
		pthread_mutex_lock(&mu);
		if (pthread_equal(pthread_self(), committer))
			created_by_committer++;
		else
			created_by_others++;
		pthread_mutex_unlock(&mu);
	}
	return real_openat(dirfd, path, flags, mode);
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, ROW);
}

int main(void)
{
	char dir[4200];
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	uint32_t t;

	snprintf(dir, sizeof(dir), "%s/store", fkt_tmpdir());
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 32 << 20; /* no evictions */
	o.segment_bytes = 64 << 20;
	o.wal_segment_bytes = 256 << 10;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 30; /* no checkpoint by volume */
	o.wal_compression = FK_WAL_COMPRESSION_OFF; /* 8 KiB per image */
	/* The table is swapped before the open and back after the close,
	 * while no store thread calls through it. */
	committer = pthread_self();
	real_openat = fk_sys.openat;
	fk_sys.openat = counting_openat;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return fkt_done();
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &t), 0);
	CHECK_EQ(fk_store_bulk_load(s, t, NACC, fill, NULL), 0);
	uint32_t rows_per_page = (FK_PAGE_SIZE - FK_PAGE_HDR) / ROW;
	uint64_t pages = NACC / rows_per_page;

	/* Count from here: the open and the load made segments too. */
	pthread_mutex_lock(&mu);
	created_by_committer = created_by_others = 0;
	pthread_mutex_unlock(&mu);
	/* Each commit changes PAGES_PER_COMMIT pages not changed since the
	 * bulk load's checkpoint: about 33 KiB of full-page images, eight
	 * commits a segment; a pause after each keeps it to tens of
	 * segments a second, which the checkpointer can make. */
	struct fk_batch b;
	fk_batch_init(&b);
	uint64_t t0 = fk_now_ns(), commits = 0;
	for (uint64_t p = 0; p + PAGES_PER_COMMIT <= pages;
	     p += PAGES_PER_COMMIT) {
		fk_batch_reset(&b);
		for (int k = 0; k < PAGES_PER_COMMIT; k++)
			CHECK_EQ(fk_batch_add_i64(
				     &b, t, (p + (uint64_t)k) * rows_per_page,
				     0, 1, NULL),
				 0);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
		commits++;
		usleep(3000);
	}
	double secs = (double)(fk_now_ns() - t0) / 1e9;
	fk_batch_release(&b);
	struct fk_store_stats st;
	fk_store_get_stats(s, &st);
	pthread_mutex_lock(&mu);
	int by_committer = created_by_committer, by_others = created_by_others;
	pthread_mutex_unlock(&mu);
	int segs = by_committer + by_others;
	printf("%llu commits, %.1f MiB of WAL in %.2f s (%.1f segments/s); "
	       "segments made: %d, by the committer %d, by the checkpointer "
	       "%d\n",
	       (unsigned long long)commits, fk_mib(st.wal_bytes), secs,
	       (double)st.wal_bytes / (double)o.wal_segment_bytes / secs, segs,
	       by_committer, by_others);
	CHECK(st.wal_bytes > 40 * o.wal_segment_bytes);
	CHECK(segs >= 30);
	CHECK(by_committer * 10 <= segs);
	CHECK_EQ(fk_store_close(s), 0);
	fk_sys.openat = real_openat;
	return fkt_done();
}
