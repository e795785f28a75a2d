// SPDX-License-Identifier: MIT
/*
 * test-store-stats-sync-io.c - fk_store_stats.sync_io and sync_jobs say
 * how the open store's checkpoints issue their fsyncs (what a client
 * such as "flushkit bench tpcb" prints before any checkpoint ran):
 *  - sync_io FK_SYNC_IO_SEQUENTIAL: SEQUENTIAL, 1 in flight, whatever
 *    sync_jobs asked;
 *  - FK_SYNC_IO_THREADS with sync_jobs 5: THREADS, 5;
 *  - FK_SYNC_IO_AUTO with sync_jobs 0: URING (where io_uring can be set
 *    up) or THREADS, FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH; never AUTO;
 *  - AUTO with io_uring refused at setup: THREADS;
 *  - the name agrees with what the store's next checkpoint reports in
 *    fk_checkpoint_info.sync_io.
 */
#include "fktest.h"
#include "fsync_batch.h"

#include <errno.h>
#include <string.h>

static char ckpt_sync_io[32];

static void on_ckpt(void *arg, const struct fk_checkpoint_info *ci)
{
	(void)arg;
	snprintf(ckpt_sync_io, sizeof(ckpt_sync_io), "%s", ci->sync_io);
}

/* Open a fresh store with @sync_io/@jobs; return its stats. */
static struct fk_store_stats open_stats(int sync_io, uint32_t jobs,
					int checkpoint)
{
	static int n;
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/s%d", fkt_tmpdir(), n++);
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 64 * FK_PAGE_SIZE;
	o.wal_segment_bytes = 256u << 10;
	o.segment_bytes = 64u << 10;
	o.sync_io = sync_io;
	o.sync_jobs = jobs;
	o.on_checkpoint = on_ckpt;
	struct fk_store *s = NULL;
	struct fk_store_stats st;
	memset(&st, 0xff, sizeof(st));
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return st;
	ckpt_sync_io[0] = 0;
	fk_store_get_stats(s, &st);
	if (checkpoint) {
		uint32_t t;
		CHECK_EQ(fk_store_create_table(s, "t", 100, &t), 0);
		struct fk_batch b;
		fk_batch_init(&b);
		char row[100] = {1};
		CHECK_EQ(fk_batch_append_copy(&b, t, row, sizeof(row), NULL),
			 0);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
		fk_batch_release(&b);
		CHECK_EQ(fk_store_checkpoint(s), 0);
		CHECK_EQ(strcmp(ckpt_sync_io, fk_sync_io_name(st.sync_io)), 0);
	}
	CHECK_EQ(fk_store_close(s), 0);
	return st;
}

static int refuse(unsigned entries, struct io_uring *ring, unsigned flags)
{
	(void)entries;
	(void)ring;
	(void)flags;
	return -EPERM;
}

int main(void)
{
	struct fk_store_stats st;

	st = open_stats(FK_SYNC_IO_SEQUENTIAL, 7, 1);
	CHECK_EQ(st.sync_io, FK_SYNC_IO_SEQUENTIAL);
	CHECK_EQ(st.sync_jobs, 1);

	st = open_stats(FK_SYNC_IO_THREADS, 5, 1);
	CHECK_EQ(st.sync_io, FK_SYNC_IO_THREADS);
	CHECK_EQ(st.sync_jobs, 5);

	st = open_stats(FK_SYNC_IO_AUTO, 0, 1);
	CHECK(st.sync_io == FK_SYNC_IO_URING ||
	      st.sync_io == FK_SYNC_IO_THREADS);
	CHECK_EQ(st.sync_jobs, FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH);
	fprintf(stderr, "auto resolves to %s here\n",
		fk_sync_io_name(st.sync_io));

	fk_uring_queue_init = refuse;
	st = open_stats(FK_SYNC_IO_AUTO, 0, 0);
	fk_uring_hooks_reset();
	CHECK_EQ(st.sync_io, FK_SYNC_IO_THREADS);
	CHECK_EQ(st.sync_jobs, FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH);
	return fkt_done();
}
