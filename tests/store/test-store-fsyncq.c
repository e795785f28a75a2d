// SPDX-License-Identifier: MIT
/*
 * test-store-fsyncq.c - backends that evict dirty pages register fsync
 * requests; a backend fsyncs a segment itself ("backend fsync") only
 * when the queue is full and compaction frees nothing:
 *  - 2 segment files, queue capacity 4, compaction on: duplicates are
 *    compacted away, no backend fsync;
 *  - the same with compaction off (the naive preset): backend fsyncs;
 *  - 64 segment files, capacity 4, compaction on: the queue is full of
 *    distinct files, compaction frees nothing, backend fsyncs.
 * Every backend fsync shows up in the trace as an fsync of a table
 * segment while no checkpoint runs.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>

#define ROW 4000   /* 2 rows per page */
#define NROWS 2048 /* 1024 pages, 8 MiB: 16x the buffers */

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, ROW);
}

/* 0 when the store ran and *@backend_fsyncs, *@compactions are set;
 * -1 when it could not be opened (a failed CHECK already; nothing set). */
static int run(const char *base, const char *name, uint64_t seg_bytes,
	       int compaction, uint64_t *backend_fsyncs, uint64_t *compactions)
{
	char dir[4200];
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	uint32_t t;

	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 512 << 10; /* 64 buffers */
	o.segment_bytes = seg_bytes;
	o.wal_segment_bytes = 4 << 20;
	o.checkpoint_timeout_ms = 3600 * 1000;
	o.max_wal_size_bytes = 1ull << 40;
	o.fsyncq_capacity = 4;
	o.fsyncq_compaction = compaction;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return -1;
	CHECK_EQ(fk_store_create_table(s, "t", ROW, &t), 0);
	CHECK_EQ(fk_store_bulk_load(s, t, NROWS, fill, NULL), 0);
	struct fk_store_stats st0, st1;
	fk_store_get_stats(s, &st0);

	fkt_trace_start();
	struct fk_batch b;
	fk_batch_init(&b);
	for (uint64_t i = 0; i < 600; i++) {
		fk_batch_reset(&b);
		fk_batch_add_i64(&b, t, (i * 1031) % NROWS, 0, 1, NULL);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
	}
	fk_batch_release(&b);
	fk_store_get_stats(s, &st1);
	size_t fsyncs = 0;
	for (size_t i = 0; i < fkt_trace_count(); i++) {
		const struct fkt_call *c = fkt_trace_get(i);
		if (!strcmp(c->op, "fsync") && strstr(c->path, "/base/"))
			fsyncs++;
	}
	fkt_trace_stop();
	CHECK_EQ(st1.checkpoints, st0.checkpoints); /* none ran */
	CHECK(st1.buffers_backend - st0.buffers_backend > 100);
	*backend_fsyncs = st1.backend_fsyncs - st0.backend_fsyncs;
	*compactions = st1.fsyncq_compactions - st0.fsyncq_compactions;
	CHECK_EQ(fsyncs, *backend_fsyncs);
	CHECK_EQ(fk_store_close(s), 0);
	printf("%s: %llu backend writes, %llu backend fsyncs, %llu "
	       "compactions\n",
	       name,
	       (unsigned long long)(st1.buffers_backend - st0.buffers_backend),
	       (unsigned long long)*backend_fsyncs,
	       (unsigned long long)*compactions);
	return 0;
}

int main(void)
{
	const char *base = fkt_tmpdir();
	uint64_t bf, comp;

	if (run(base, "compact", 4 << 20, 1, &bf, &comp) == 0) {
		CHECK_EQ(bf, 0);
		CHECK(comp > 0);
	}
	if (run(base, "naive", 4 << 20, 0, &bf, &comp) == 0) {
		CHECK(bf > 0);
		CHECK_EQ(comp, 0);
	}
	if (run(base, "distinct", 128 << 10, 1, &bf, &comp) == 0) {
		CHECK(bf > 0);
		CHECK(comp > 0);
	}
	return fkt_done();
}
