// SPDX-License-Identifier: MIT
/*
 * store.c - the page store's public face: options and presets, open
 * (creating, or recovering through recovery.c), close, reads, commit,
 * bulk load, statistics, destroy.
 *
 * Data directory:
 *   control        control file: geometry, state (clean / in
 *                  production), last checkpoint and redo LSNs, row
 *                  counts per table; CRC-32C; replaced atomically
 *   catalog        tables (id, name, row size); CRC-32C; replaced
 *                  atomically
 *   wal/SEGNO      WAL segments (see wal.c)
 *   base/T.S       segment S of table T: blocks [S*bps, (S+1)*bps)
 *   lock           empty; its OFD lock is held by the open store (S8);
 *                  created 0600 with the store, never removed
 * "Replaced atomically" is: write NAME.tmp, fsync it, rename it over
 * NAME, fsync the directory.
 *
 * The store's other rooms, each calling only those below it (the
 * layering is drawn in store-int.h): core.c (log, sticky stop, table
 * segment descriptors), control.c (the control file, the catalog and
 * its tables), batch.c (write batches), recovery.c (recovery at open),
 * and the WAL, buffer pool and checkpointer.  The invariants S1-S9
 * below are the store's as a whole; each room cites those it keeps.
 *
 * Interface routines: fk_store_opts_init, fk_store_opts_preset,
 * fk_store_open, fk_store_close, fk_store_destroy, fk_store_read,
 * fk_store_commit, fk_store_checkpoint, fk_store_bulk_load,
 * fk_store_get_stats, fk_store_get_fsyncq_stats.
 *
 * Invariants:
 *  S1. A commit is one COMMIT record; its pages are pinned in (table,
 *      block) order and locked exclusively in buffer-index order (after
 *      the append mutexes of its append tables, in table order), marked
 *      dirty, the record
 *      inserted, then the changes applied and the page LSNs set, all
 *      before any page lock is released (PostgreSQL's critical section
 *      around XLogInsert).  It returns 0 only once the record is
 *      durable.
 *  S2. A page's first change after the redo point logs its full image
 *      (full_page_writes): PAGE_LSN <= redo LSN, decided under the
 *      insert lock, where the redo LSN is set.
 *  S3. Append row numbers are assigned under the table's append mutex
 *      and published (rows) under the insert lock right after the
 *      record is inserted, so rows never counts a row whose record
 *      follows a checkpoint record that recorded it.
 *  S4. After a sticky error nothing changes a page or writes a file:
 *      commits return -FK_ESTOPPED before inserting, and page writes
 *      fail the WAL rule's flush.
 *  S5. A page's LSN is the END of the last record that changed it.
 *      Recovery replays every valid record from the redo LSN: full-page
 *      images always restore their page; ops apply only to pages whose
 *      LSN is older than the record's end (decided once per page per
 *      record), which then becomes the page LSN; every page a record
 *      touches is marked dirty, changed or not (a cached page may never
 *      have reached the disk: a failed write-back leaves it clean);
 *      then the WAL is cut at the first invalid record and an
 *      end-of-recovery checkpoint makes the result durable.
 *  S6. Running out of space (ENOSPC, EDQUOT) is not sticky: where it
 *      can happen - creating a WAL segment (W8), evicting a page to a
 *      block not yet allocated (B7), a checkpoint's page writes (C8),
 *      writing control.tmp or catalog.tmp (write_durable) - nothing
 *      has been applied or made to depend on the failed write, so the
 *      call fails with -ENOSPC and the store goes on; once space is
 *      freed the same handle works again.  Failed fsyncs stay sticky
 *      (S4), as does an ENOSPC from a WAL write (W4, W8).  The log line
 *      of an ENOSPC creating a WAL segment or in a bulk load gives the
 *      file system's free and total space, what was needed and what the
 *      WAL takes (fk_store_space_facts).  A new store creates its
 *      FK_STORE_WAL_MIN_SEGMENTS WAL segments before its control file,
 *      so one whose file system cannot hold its WAL is never created.
 *      An end-of-recovery checkpoint that meets ENOSPC does not fail
 *      the open (recovery.c, defer_checkpoint): the WAL keeps what was
 *      replayed until a later checkpoint, retried by the checkpointer,
 *      completes; a commit that meets ENOSPC asks for one at once.
 *  S7. A table segment is created (and base/ fsynced) for a page about
 *      to be read or written, before the control file counts a row in
 *      it: a commit pins (reads) its pages before its rows are counted,
 *      a bulk load writes before it counts, and the end-of-recovery
 *      checkpoint writes every replayed page before the control file.
 *      So at open every segment holding rows the control
 *      file counts exists, and is long enough for the rows whose pages
 *      the last checkpoint made durable (rows_durable: the count less
 *      the rows appended between its redo point and its record); one
 *      missing or short fails fk_store_open with -FK_ECORRUPT, naming
 *      it (check_segments), and is never recreated empty.  Only
 *      segments past those may be created by recovery.
 *  S8. One store handle per data directory: fk_store_open takes the
 *      OFD write lock (fcntl F_OFD_SETLK, no wait) on DIR/lock before it
 *      reads anything but names, and before it writes anything, the lock
 *      file itself aside (lock_and_classify); a held lock fails the open
 *      with -EBUSY and nothing changed.  The lock belongs to the open
 *      file description, so a second open from the same process (any
 *      thread) conflicts too, and the kernel drops it with the last
 *      descriptor (exit, kill -9): never stale.  store_free closes it
 *      last, after every other descriptor and every write of the handle.
 *      The lock file is never removed (fk_store_destroy keeps it).
 *      Since anyone can unlink or replace a name, the directory itself
 *      is locked too, first: flock(LOCK_EX | LOCK_NB) of a descriptor of
 *      its own (also per open file description, also dropped by the
 *      kernel), so a lock file removed or replaced under a live store
 *      still leaves every other opener -EBUSY.  fk_store_destroy removes
 *      under the same lock.
 *  S9. Under that lock, a directory is classified by names only
 *      (dir_state): a control file is a store; none, and no catalog and
 *      nothing in base/ or wal/, is no store (created only if the create
 *      mode allows: FK_STORE_OPEN_EXISTING, the default, fails -ENOENT
 *      and creates nothing, not even the lock file or DIR); a catalog or
 *      table or WAL segments without a control file is a store that lost
 *      it: -FK_ECORRUPT, logged naming 'control', nothing written.  The
 *      control file is written last at creation (the "init" checkpoint)
 *      and removed first by fk_store_destroy, so neither an interrupted
 *      creation past its first WAL segment nor an interrupted destroy
 *      ever opens as a new, empty store; a creation that fails
 *      (returns an error) removes what it made, under the lock, so only
 *      one cut short by a crash leaves such a directory (nothing in it
 *      was acknowledged: remove it).  base/ and wal/ are created
 *      only with a new store; either missing from a store is
 *      -FK_ECORRUPT.
 */
#include "store-int.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/* ---- options ---- */

void fk_store_opts_init(struct fk_store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->shared_buffers_bytes = 128ull << 20;
	o->segment_bytes = 64ull << 20;
	o->wal_segment_bytes = 16ull << 20;
	o->max_wal_size_bytes = 1ull << 30;
	o->checkpoint_timeout_ms = 300000;
	o->checkpoint_completion_target = 0.9;
	o->full_page_writes = 1;
	o->wal_sync_method = FK_WAL_FDATASYNC;
	fk_store_opts_preset(o, "smooth");
}

int fk_store_opts_preset(struct fk_store_opts *o, const char *flush)
{
	if (!flush || !strcmp(flush, "smooth")) {
		o->checkpoint_sorted = 1;
		o->checkpoint_flush_after_bytes =
		    FK_WRITEBACK_DEFAULT_FLUSH_AFTER;
		o->checkpoint_sync_spread_ms = FK_SYNC_SPREAD_AUTO;
		o->fsyncq_compaction = 1;
		o->sync_io = FK_SYNC_IO_AUTO;
		/* The burst of full-page images after each redo point is
		 * the WAL's largest load: compressed (lz4, else zstd) it
		 * takes a fraction of the bytes (docs/tpcb.md). */
		o->wal_compression =
		    fk_fpi_method_available(FK_WAL_COMPRESSION_LZ4)
			? FK_WAL_COMPRESSION_LZ4
		    : fk_fpi_method_available(FK_WAL_COMPRESSION_ZSTD)
			? FK_WAL_COMPRESSION_ZSTD
			: FK_WAL_COMPRESSION_OFF;
		return 0;
	}
	if (!strcmp(flush, "naive")) {
		o->checkpoint_sorted = 0;
		o->checkpoint_flush_after_bytes = 0;
		o->checkpoint_sync_spread_ms = 0;
		o->fsyncq_compaction = 0;
		o->sync_io = FK_SYNC_IO_SEQUENTIAL;
		o->wal_compression = FK_WAL_COMPRESSION_OFF;
		return 0;
	}
	return -EINVAL;
}

/* ---- reading ---- */

int fk_store_read(struct fk_store *s, uint32_t table, uint64_t row, void *buf)
{
	int r = fk_store_stopped(s);
	if (r)
		return r;
	struct fk_table *t = fk_store_get_table(s, table);
	if (!t || !buf)
		return t ? -EINVAL : -ENOENT;
	if (row >= __atomic_load_n(&t->rows, __ATOMIC_ACQUIRE))
		return -ERANGE;
	int idx = fk_buf_pin(s, table, (uint32_t)(row / t->rows_per_page),
			     FK_PIN_READ);
	if (idx < 0)
		return idx;
	struct fk_buf *b = &s->bufs[idx];
	pthread_rwlock_rdlock(&b->content);
	memcpy(buf, fk_row_ptr(t, b->page, row), t->row_bytes);
	pthread_rwlock_unlock(&b->content);
	fk_buf_unpin(s, idx);
	return 0;
}

/* ---- commit ---- */

/*
 * fk_store_commit in its phases, each a function of one struct commit:
 * validate the batch, assign append rows (S3), collect its pages, pin and
 * lock them (S1), encode the ops, assemble and insert the COMMIT record
 * (full-page images decided against the redo LSN, S2), apply the ops and
 * set the page LSNs (S1, S5), release; then the WAL-volume checkpoint
 * request and group commit.
 */

struct cpage {
	uint32_t table, block;
	int idx;
	int fpi;
};

struct commit {
	struct fk_store *s;
	struct fk_batch *b;
	struct fk_batch_op *ops;
	size_t nops;
	uint64_t next_row[FK_STORE_MAX_TABLES + 1];
	uint8_t appends[FK_STORE_MAX_TABLES + 1];
	int appends_locked; /* the append mutexes of appends[] held */
	int pages_locked;   /* content locks of pg[] held */
	struct cpage *pg;   /* sorted by (table, block), distinct */
	size_t npg;
	int *lockord; /* pg[].idx in buffer-index order */
	struct fk_iovec *iov;
	uint8_t *opbuf; /* commit header, then the ops */
	uint8_t *zbuf;	/* packed images (wal_compression), one
			 * FK_WAL_FPI_PACKED_MAX slot per page */
	size_t oplen;
	size_t nfpi;	  /* full-page images in the record */
	size_t fpi_bytes; /* the bytes they take in it */
	uint64_t end;	  /* the record's end: page LSN, flush target */
};

static int cmp_cpage(const void *a, const void *b)
{
	const struct cpage *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int find_cpage(const struct cpage *pg, size_t n, uint32_t table,
		      uint32_t block)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pg[mid].table < table ||
		    (pg[mid].table == table && pg[mid].block < block))
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo;
}

static uint64_t max_record(const struct fk_store *s)
{
	uint64_t m = s->wal_seg_bytes - FK_WAL_SEG_HDR;
	if (m > s->walbuf_size / 2)
		m = s->walbuf_size / 2;
	return m;
}

static const void *op_data(const struct fk_batch *b,
			   const struct fk_batch_op *op)
{
	if (op->ext)
		return op->ext;
	return (const uint8_t *)b->data + op->data_off;
}

/* The bytes an op's data takes in the record: an append's row is the
 * table's row size (fk_batch_append does not know it). */
static uint32_t op_len(const struct fk_store *s, const struct fk_batch_op *op)
{
	return op->kind == FK_OP_APPEND ? s->tables[op->table].row_bytes
					: op->len;
}

/* Every op names a table, fits its row and (but appends) an existing
 * row; sizes the ops part of the payload.  0, -ENOENT, -EINVAL, -ERANGE. */
static int commit_validate(struct commit *c)
{
	c->oplen = 8;
	memset(c->appends, 0, sizeof(c->appends));
	for (size_t i = 0; i < c->nops; i++) {
		struct fk_batch_op *op = &c->ops[i];
		struct fk_table *t = fk_store_get_table(c->s, op->table);
		if (!t)
			return -ENOENT;
		if (op->kind == FK_OP_APPEND) {
			if (!op->ext && op->len != t->row_bytes)
				return -EINVAL;
			c->appends[op->table] = 1;
			c->oplen += fk_wal_op_size(t->row_bytes);
			continue;
		}
		if ((uint64_t)op->off + op->len > t->row_bytes)
			return -EINVAL;
		if (op->row >= __atomic_load_n(&t->rows, __ATOMIC_ACQUIRE))
			return -ERANGE;
		c->oplen += fk_wal_op_size(op->len);
	}
	return 0;
}

static int commit_alloc(struct commit *c)
{
	c->pg = malloc(c->nops * sizeof(*c->pg));
	c->lockord = malloc(c->nops * sizeof(*c->lockord));
	c->opbuf = malloc(c->oplen);
	c->iov = malloc((2 * c->nops + 2) * sizeof(*c->iov));
	if (c->s->o.wal_compression != FK_WAL_COMPRESSION_OFF &&
	    c->s->o.full_page_writes) {
		c->zbuf = malloc(c->nops * FK_WAL_FPI_PACKED_MAX);
		if (!c->zbuf)
			return -ENOMEM;
	}
	return c->pg && c->lockord && c->opbuf && c->iov ? 0 : -ENOMEM;
}

/* S3: append rows, under the append mutexes in table order (held until
 * commit_release, after the rows are published). */
static void commit_assign_rows(struct commit *c)
{
	struct fk_store *s = c->s;
	for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
		if (c->appends[t]) {
			pthread_mutex_lock(&s->tables[t].append_mu);
			c->next_row[t] = __atomic_load_n(&s->tables[t].rows,
							 __ATOMIC_ACQUIRE);
		}
	c->appends_locked = 1;
	for (size_t i = 0; i < c->nops; i++)
		if (c->ops[i].kind == FK_OP_APPEND)
			c->ops[i].row = c->next_row[c->ops[i].table]++;
}

/* The pages the ops touch, sorted and distinct. */
static void commit_collect_pages(struct commit *c)
{
	struct cpage *pg = c->pg;
	size_t npg = 0, k = 0;
	for (size_t i = 0; i < c->nops; i++) {
		struct fk_table *t = &c->s->tables[c->ops[i].table];
		pg[npg].table = c->ops[i].table;
		pg[npg].block = (uint32_t)(c->ops[i].row / t->rows_per_page);
		pg[npg].idx = -1;
		pg[npg].fpi = 0;
		npg++;
	}
	qsort(pg, npg, sizeof(*pg), cmp_cpage);
	for (size_t i = 0; i < npg; i++)
		if (!k || cmp_cpage(&pg[k - 1], &pg[i]))
			pg[k++] = pg[i];
	c->npg = k;
}

/* Pin in (table, block) order, then lock exclusively in buffer-index
 * order (S1).  0 or the pin's error (the pins taken stay in pg[]). */
static int commit_pin_lock(struct commit *c)
{
	struct fk_store *s = c->s;
	for (size_t i = 0; i < c->npg; i++) {
		int idx =
		    fk_buf_pin(s, c->pg[i].table, c->pg[i].block, FK_PIN_READ);
		if (idx < 0)
			return idx;
		c->pg[i].idx = idx;
	}
	/* Lock in buffer-index order: a total order on the lock objects
	 * themselves that never changes (pinned buffers keep their page),
	 * so it is deadlock-free like PostgreSQL's ordered page locks and
	 * also visibly so to ThreadSanitizer. */
	for (size_t i = 0; i < c->npg; i++)
		c->lockord[i] = c->pg[i].idx;
	qsort(c->lockord, c->npg, sizeof(*c->lockord), cmp_int);
	for (size_t i = 0; i < c->npg; i++)
		pthread_rwlock_wrlock(&s->bufs[c->lockord[i]].content);
	c->pages_locked = 1;
	return 0;
}

/* The ops part of the payload, after the 8-byte commit header. */
static void commit_encode_ops(struct commit *c)
{
	size_t at = 8;
	for (size_t i = 0; i < c->nops; i++) {
		struct fk_batch_op *op = &c->ops[i];
		at +=
		    fk_wal_put_op(c->opbuf + at, op->kind, op->table, op->row,
				  op->off, op_len(c->s, op), op_data(c->b, op));
	}
}

/*
 * The record's parts in c->iov for the redo LSN @redo (S2: a page not
 * changed since the redo point logs its full image): the commit header,
 * the images, the ops.  With wal_compression each image is packed
 * (compressed where that makes it smaller) into c->zbuf, under the page
 * locks the commit holds but not the WAL insert lock.  Sets *@n parts,
 * *@crc over them (so over the stored, compressed bytes) and *@total,
 * the record's length.
 */
static void commit_assemble(struct commit *c, uint64_t redo, int *n,
			    uint32_t *crc, size_t *total)
{
	struct fk_store *s = c->s;
	struct fk_iovec *iov = c->iov;
	int k = 1;
	uint32_t nr_fpi;
	*total = FK_WAL_REC_HDR + c->oplen;
	c->nfpi = 0;
	c->fpi_bytes = 0;
	for (size_t i = 0; i < c->npg; i++) {
		c->pg[i].fpi = s->o.full_page_writes &&
			       PAGE_LSN(s->bufs[c->pg[i].idx].page) <= redo;
		if (c->pg[i].fpi)
			c->nfpi++;
	}
	nr_fpi = (uint32_t)c->nfpi;
	if (c->zbuf && c->nfpi)
		nr_fpi |= FK_WAL_FPI_PACKED;
	fk_wal_put_commit_hdr(c->opbuf, nr_fpi, (uint32_t)c->nops);
	*crc = fk_crc32c(0, c->opbuf, 8);
	iov[0].base = c->opbuf;
	iov[0].len = 8;
	for (size_t i = 0; i < c->npg; i++) {
		if (!c->pg[i].fpi)
			continue;
		const uint8_t *page = s->bufs[c->pg[i].idx].page;
		if (nr_fpi & FK_WAL_FPI_PACKED) {
			uint8_t *z = c->zbuf + i * FK_WAL_FPI_PACKED_MAX;
			iov[k].base = z;
			iov[k].len = fk_wal_put_fpi_packed(
			    z, c->pg[i].table, c->pg[i].block,
			    s->o.wal_compression, page);
			*crc = fk_crc32c(*crc, z, iov[k].len);
			c->fpi_bytes += iov[k].len;
			k++;
			continue;
		}
		/* FPI headers live in pg[] itself: table, block, as the
		 * format wants (two u32, then the page). */
		iov[k].base = &c->pg[i].table;
		iov[k].len = 8;
		*crc = fk_crc32c(*crc, &c->pg[i].table, 8);
		k++;
		iov[k].base = page;
		iov[k].len = FK_PAGE_SIZE;
		*crc = fk_crc32c(*crc, page, FK_PAGE_SIZE);
		k++;
		c->fpi_bytes += FK_WAL_FPI_BYTES;
	}
	*total += c->fpi_bytes;
	iov[k].base = c->opbuf + 8;
	iov[k].len = c->oplen - 8;
	*crc = fk_crc32c(*crc, c->opbuf + 8, c->oplen - 8);
	k++;
	*n = k;
}

/*
 * Insert the COMMIT record: assembled against the redo LSN seen now,
 * rechecked under the insert lock (again if a checkpoint moved it); the
 * WAL segment made first if the record needs one (W5); the pages marked
 * dirty before the insert (B3) and the append rows published right
 * after it (S3).  0, -E2BIG, -FK_ESTOPPED or the segment's error.
 */
static int commit_insert(struct commit *c)
{
	struct fk_store *s = c->s;
	for (;;) {
		uint64_t redo = __atomic_load_n(&s->redo_lsn, __ATOMIC_ACQUIRE);
		uint32_t crc;
		size_t total;
		int n, r;
		commit_assemble(c, redo, &n, &crc, &total);
		if (total > max_record(s))
			return -E2BIG;

		pthread_mutex_lock(&s->insert_mu);
		r = fk_store_stopped(s);
		if (r) {
			pthread_mutex_unlock(&s->insert_mu);
			return r;
		}
		if (s->redo_lsn != redo) {
			pthread_mutex_unlock(&s->insert_mu);
			continue;
		}
		uint64_t need = fk_wal_need_segment(s, total);
		if (need) {
			/* W5: make the segment before changing anything,
			 * so ENOSPC fails the commit cleanly. */
			pthread_mutex_unlock(&s->insert_mu);
			r = fk_wal_ensure_segment(s, need);
			if (r)
				return r;
			continue;
		}
		for (size_t i = 0; i < c->npg; i++)
			fk_buf_mark_dirty(s, c->pg[i].idx);
		fk_wal_insert(s, FK_WAL_COMMIT, c->iov, n, crc, &c->end);
		for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
			if (c->appends[t])
				__atomic_store_n(&s->tables[t].rows,
						 c->next_row[t],
						 __ATOMIC_RELEASE);
		pthread_mutex_unlock(&s->insert_mu);
		return 0;
	}
}

/* Apply the ops, set the page LSNs (S1), count the commit. */
static void commit_apply(struct commit *c)
{
	struct fk_store *s = c->s;
	for (size_t i = 0; i < c->nops; i++) {
		struct fk_batch_op *op = &c->ops[i];
		struct fk_table *t = &s->tables[op->table];
		struct fk_wal_op wop = {
		    .kind = op->kind,
		    .table = op->table,
		    .row = op->row,
		    .off = op->off,
		    .len = op_len(s, op),
		    .data = op_data(c->b, op),
		};
		int j = find_cpage(c->pg, c->npg, op->table,
				   (uint32_t)(op->row / t->rows_per_page));
		fk_page_apply_op(t, s->bufs[c->pg[j].idx].page, &wop,
				 op->kind == FK_OP_ADD_I64 ? op->result : NULL);
		if (op->kind == FK_OP_APPEND && op->result)
			*(uint64_t *)op->result = op->row;
	}
	/* The page LSN is the record's END, as in PostgreSQL: flushing
	 * the WAL up to it covers the whole record (WAL rule). */
	for (size_t i = 0; i < c->npg; i++)
		PAGE_LSN(c->s->bufs[c->pg[i].idx].page) = c->end;
	__atomic_add_fetch(&s->st.commits, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->st.wal_fpi, c->nfpi, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->st.wal_fpi_bytes, c->fpi_bytes,
			   __ATOMIC_RELAXED);
}

/* Unlock the pages, unpin them, release the append mutexes, free. */
static void commit_release(struct commit *c)
{
	struct fk_store *s = c->s;
	if (c->pages_locked)
		for (size_t i = 0; i < c->npg; i++)
			pthread_rwlock_unlock(&s->bufs[c->pg[i].idx].content);
	for (size_t i = 0; i < c->npg; i++)
		if (c->pg[i].idx >= 0)
			fk_buf_unpin(s, c->pg[i].idx);
	if (c->appends_locked)
		for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
			if (c->appends[t])
				pthread_mutex_unlock(&s->tables[t].append_mu);
	free(c->pg);
	free(c->lockord);
	free(c->opbuf);
	free(c->iov);
	free(c->zbuf);
}

/* Checkpoint by WAL volume (PostgreSQL's XLogCheckpointNeeded): one
 * request per redo point. */
static void commit_nudge_checkpoint(struct commit *c)
{
	struct fk_store *s = c->s;
	uint64_t redo = __atomic_load_n(&s->redo_lsn, __ATOMIC_ACQUIRE);
	fk_ckpt_wal_advanced(s, c->end);
	if (c->end - redo >=
		__atomic_load_n(&s->wal_trigger_bytes, __ATOMIC_ACQUIRE) &&
	    __atomic_exchange_n(&s->wal_nudged_redo, redo, __ATOMIC_ACQ_REL) !=
		redo)
		fk_ckpt_wal_nudge(s);
}

int fk_store_commit(struct fk_store *s, struct fk_batch *b, uint64_t *lsnp)
{
	struct commit c;
	int r = fk_store_stopped(s);

	if (r)
		return r;
	if (!b)
		return -EINVAL;
	if (!b->nr_ops) {
		if (lsnp)
			*lsnp =
			    __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE);
		return 0;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.b = b;
	c.ops = b->ops;
	c.nops = b->nr_ops;
	r = commit_validate(&c);
	if (r)
		return r;
	r = commit_alloc(&c);
	if (!r) {
		commit_assign_rows(&c);
		commit_collect_pages(&c);
		r = commit_pin_lock(&c);
	}
	if (!r) {
		commit_encode_ops(&c);
		r = commit_insert(&c);
	}
	if (!r)
		commit_apply(&c);
	commit_release(&c);
	if (r == -ENOSPC || r == -EDQUOT) {
		/* No space for a WAL segment (W8) or a page's block (B7):
		 * a checkpoint lets the WAL before its redo point be
		 * reused, once per redo point (the checkpointer retries
		 * one that finds no space itself, C8). */
		uint64_t redo = __atomic_load_n(&s->redo_lsn, __ATOMIC_ACQUIRE);
		if (__atomic_exchange_n(&s->space_nudged_redo, redo,
					__ATOMIC_ACQ_REL) != redo)
			fk_ckpt_space_nudge(s);
	}
	if (r)
		return r;
	commit_nudge_checkpoint(&c);
	/* Group commit. */
	r = fk_wal_flush(s, c.end);
	if (!r && lsnp)
		*lsnp = c.end;
	return r;
}

int fk_store_checkpoint(struct fk_store *s)
{
	int r = fk_store_stopped(s);
	if (r)
		return r;
	return fk_ckpt_request_wait(s, CKPT_REQ_IMMEDIATE);
}

/* ---- bulk load ---- */

int fk_store_bulk_load(struct fk_store *s, uint32_t table, uint64_t nrows,
		       void (*fill)(void *arg, uint64_t rowno, void *row),
		       void *arg)
{
	enum { CHUNK = 32 }; /* pages per write */
	struct fk_table *t = fk_store_get_table(s, table);
	struct fk_writeback wb;
	uint8_t *buf = NULL;
	int r = fk_store_stopped(s);

	if (r)
		return r;
	if (!t || !fill)
		return t ? -EINVAL : -ENOENT;
	pthread_mutex_lock(&t->append_mu);
	if (__atomic_load_n(&t->rows, __ATOMIC_ACQUIRE) != 0) {
		pthread_mutex_unlock(&t->append_mu);
		return -ENOTEMPTY;
	}
	fk_bufpool_forget_table(s, table);
	if (posix_memalign((void **)&buf, 4096, CHUNK * FK_PAGE_SIZE)) {
		pthread_mutex_unlock(&t->append_mu);
		return -ENOMEM;
	}
	fk_writeback_init(&wb, s->o.checkpoint_flush_after_bytes);
	uint64_t npages = (nrows + t->rows_per_page - 1) / t->rows_per_page;
	uint64_t row = 0, written = 0;
	uint32_t last_seg = UINT32_MAX;
	for (uint64_t blk = 0; blk < npages && !r;) {
		uint32_t seg = (uint32_t)(blk / s->blocks_per_seg);
		uint64_t first = blk;
		size_t n = 0;
		while (n < CHUNK && blk < npages &&
		       blk / s->blocks_per_seg == seg) {
			uint8_t *p = buf + n * FK_PAGE_SIZE;
			fk_page_init(p, table, (uint32_t)blk);
			uint16_t cnt = 0;
			for (; cnt < t->rows_per_page && row < nrows;
			     cnt++, row++)
				fill(arg, row, fk_row_ptr(t, p, row));
			memcpy(p + 20, &cnt, 2);
			fk_page_set_crc(p);
			n++;
			blk++;
		}
		int fd = fk_store_seg_fd(s, table, seg);
		if (fd < 0) {
			r = fd;
			break;
		}
		uint64_t off = (first % s->blocks_per_seg) * FK_PAGE_SIZE;
		r = fk_pwrite_all(fd, buf, n * FK_PAGE_SIZE, off);
		if (!r) {
			fk_writeback_note(&wb, fd, off, n * FK_PAGE_SIZE);
			written += n * FK_PAGE_SIZE;
		}
		last_seg = seg;
	}
	fk_writeback_issue(&wb);
	fk_writeback_release(&wb);
	free(buf);
	if (r == -ENOSPC || r == -EDQUOT) {
		char facts[320];
		fk_store_space_facts(s, facts, sizeof(facts));
		fk_store_log(s,
			     "bulk load of %llu rows into '%s' needs %.1f MiB "
			     "of table segments: %s after %.1f MiB; %s",
			     (unsigned long long)nrows, t->name,
			     fk_mib(npages * FK_PAGE_SIZE), fk_strerror(r),
			     fk_mib(written), facts);
	}
	/* Durable before the rows count says they exist. */
	for (uint32_t seg = 0; !r && last_seg != UINT32_MAX && seg <= last_seg;
	     seg++) {
		int fd = fk_store_seg_fd(s, table, seg);
		r = fd < 0 ? fd : fk_sys.fsync(fd);
		if (r && fd >= 0)
			fk_store_stop(s, r, "fsync of a bulk-loaded segment");
	}
	if (!r)
		__atomic_store_n(&t->rows, nrows, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&t->append_mu);
	/* The control file records the row count at a checkpoint. */
	if (!r)
		r = fk_ckpt_request_wait(s, CKPT_REQ_IMMEDIATE);
	return r;
}

/* ---- the data directory: its lock and what it holds ---- */
/* ---- the data directory: its lock and what it holds ---- */

#define LOCK_NAME "lock"

/*
 * Lock the data directory @dirfd for one store handle (S8): first a
 * flock of a descriptor of the directory itself, then the OFD write
 * lock of its lock file (created 0600 if @create), neither waiting.
 * Both belong to their open file descriptions: they conflict with every
 * other description's, in this process too, and go when the last
 * descriptor is closed (by the kernel at a kill -9).  The directory's
 * lock is what a removed or replaced lock file cannot undo.  Returns 0
 * with *@fd and *@dfd set, -EBUSY (held elsewhere), -ENOENT (no lock
 * file and !@create; nothing held) or the -errno of open, flock or fcntl.
 */
static int lock_dir(int dirfd, int create, int *fd, int *dfd)
{
	int dlfd = fk_sys.openat(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	if (dlfd < 0)
		return dlfd;
	int r = fk_sys.flock(dlfd, LOCK_EX | LOCK_NB);
	if (r == -EWOULDBLOCK)
		r = -EBUSY;
	if (r) {
		fk_sys.close(dlfd);
		return r;
	}
	int lfd =
	    fk_sys.openat(dirfd, LOCK_NAME,
			  O_RDWR | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
	if (lfd < 0) {
		fk_sys.close(dlfd);
		return lfd;
	}
	struct flock fl;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
	r = fk_sys.fcntl_lock(lfd, F_OFD_SETLK, &fl);
	if (r == -EAGAIN || r == -EACCES)
		r = -EBUSY;
	if (r) {
		fk_sys.close(lfd);
		fk_sys.close(dlfd);
		return r;
	}
	*fd = lfd;
	*dfd = dlfd;
	return 0;
}

/* 1 if @name exists in @dirfd, 0 if not, or -errno.  No I/O on it. */
static int has_entry(int dirfd, const char *name)
{
	struct stat st;
	int r = fk_sys.fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW);
	return r == 0 ? 1 : r == -ENOENT ? 0 : r;
}

static int found_one(void *arg, const char *name, unsigned char type)
{
	(void)arg;
	(void)name;
	(void)type;
	return 1;
}

/* 1 if the directory @name in @dirfd has an entry, 0 if it is empty or
 * absent, or -errno. */
static int has_entries(int dirfd, const char *name)
{
	int fd = fk_sys.openat(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	int found = fk_dirents(fd, found_one, NULL);
	fk_sys.close(fd);
	return found;
}

enum { DIR_NO_STORE, DIR_STORE, DIR_NO_CONTROL };

/*
 * What @dirfd holds, by names only (S9): a store (a control file), none
 * (no control file, catalog, nor entries in base/ or wal/), or a store
 * that lost its control file.  Or -errno.
 */
static int dir_state(int dirfd)
{
	int r = has_entry(dirfd, "control");
	if (r)
		return r < 0 ? r : DIR_STORE;
	if ((r = has_entry(dirfd, "catalog")) ||
	    (r = has_entries(dirfd, "base")) || (r = has_entries(dirfd, "wal")))
		return r < 0 ? r : DIR_NO_CONTROL;
	return DIR_NO_STORE;
}

/*
 * Take the data directory's lock for fk_store_open, then decide, under
 * it, what the open does (S8, S9): sets *@fresh to 1 for a new store.
 * Before the lock nothing is read but names, and the lock file is only
 * created where the open may go on (a store, or no store and a create
 * mode): a refused open leaves the directory as it was.
 */
static int lock_and_classify(struct fk_store *s, int *fresh)
{
	int mode = s->o.create_mode, st;
	int r = lock_dir(s->dirfd, 0, &s->lockfd, &s->dirlockfd);
	if (r == -ENOENT) {
		/* No lock file: no store yet, or one made before lock
		 * files. */
		st = dir_state(s->dirfd);
		if (st < 0)
			return st;
		if ((st == DIR_NO_STORE && mode != FK_STORE_OPEN_EXISTING) ||
		    (st == DIR_STORE && mode != FK_STORE_CREATE_NEW))
			r = lock_dir(s->dirfd, 1, &s->lockfd, &s->dirlockfd);
		else
			goto decide;
	}
	if (r == -EBUSY) {
		fk_store_log(s,
			     "data directory in use: its lock file '%s' is "
			     "held by another open store",
			     LOCK_NAME);
		return r;
	}
	if (r) {
		fk_store_log(s, "lock file '%s': %s", LOCK_NAME,
			     fk_strerror(r));
		return r;
	}
	st = dir_state(s->dirfd);
	if (st < 0)
		return st;
decide:
	switch (st) {
	case DIR_STORE:
		if (mode == FK_STORE_CREATE_NEW) {
			fk_store_log(s, "a store exists in the data "
					"directory (control file 'control')");
			return -EEXIST;
		}
		*fresh = 0;
		return 0;
	case DIR_NO_CONTROL:
		fk_store_log(s,
			     "control file 'control' is missing, but the data "
			     "directory holds a store (a catalog, table or "
			     "WAL segments): not opened as a new one");
		return -FK_ECORRUPT;
	default:
		if (mode == FK_STORE_OPEN_EXISTING) {
			fk_store_log(s, "no store in the data directory (no "
					"control file)");
			return -ENOENT;
		}
		*fresh = 1;
		return 0;
	}
}

/* ---- open and close ---- */

static int open_dir(int at, const char *name, int create)
{
	if (create) {
		int r = fk_sys.mkdirat(at, name, 0700);
		if (r && r != -EEXIST)
			return r;
	}
	return fk_sys.openat(at, name, O_RDONLY | O_DIRECTORY, 0);
}

static void store_free(struct fk_store *s)
{
	for (uint32_t i = 0; i <= FK_STORE_MAX_TABLES; i++) {
		struct fk_table *t = &s->tables[i];
		for (size_t j = 0; j < t->nr_seg_fds; j++)
			if (t->seg_fds[j] >= 0)
				fk_sys.close(t->seg_fds[j]);
		free(t->seg_fds);
		pthread_mutex_destroy(&t->append_mu);
	}
	fk_ckpt_release(s);
	fk_fsyncq_destroy(s->fsq);
	fk_fsync_batch_destroy(s->fsb);
	fk_bufpool_destroy(s);
	if (s->walbuf)
		fk_wal_destroy(s);
	if (s->basefd >= 0)
		fk_sys.close(s->basefd);
	if (s->waldirfd >= 0)
		fk_sys.close(s->waldirfd);
	if (s->dirfd >= 0)
		fk_sys.close(s->dirfd);
	/* Last: every write of this handle is done (S8). */
	if (s->lockfd >= 0)
		fk_sys.close(s->lockfd);
	if (s->dirlockfd >= 0)
		fk_sys.close(s->dirlockfd);
	pthread_mutex_destroy(&s->cat_mu);
	pthread_mutex_destroy(&s->files_mu);
	pthread_mutex_destroy(&s->ckpt_mu);
	pthread_cond_destroy(&s->ckpt_cv);
	free(s);
}

static int check_opts(const struct fk_store_opts *o)
{
	if (!o->segment_bytes || o->segment_bytes % FK_PAGE_SIZE ||
	    o->segment_bytes / FK_PAGE_SIZE > UINT32_MAX ||
	    o->wal_segment_bytes < 65536 || o->wal_segment_bytes % 8192 ||
	    o->wal_segment_bytes > (1ull << 30) ||
	    o->checkpoint_completion_target <= 0 ||
	    o->checkpoint_completion_target > 1 || o->wal_sync_method < 0 ||
	    o->wal_sync_method > 2 || !o->checkpoint_timeout_ms ||
	    o->wal_compression < FK_WAL_COMPRESSION_OFF ||
	    o->wal_compression > FK_WAL_COMPRESSION_ZSTD ||
	    o->sync_io < FK_SYNC_IO_AUTO ||
	    o->sync_io > FK_SYNC_IO_SEQUENTIAL ||
	    o->sync_jobs > FK_FSYNC_BATCH_MAX_QUEUE_DEPTH ||
	    o->create_mode < FK_STORE_OPEN_EXISTING ||
	    o->create_mode > FK_STORE_CREATE_NEW ||
	    o->checkpoint_flush_wait < FK_WRITEBACK_WAIT_NONE ||
	    o->checkpoint_flush_wait > FK_WRITEBACK_WAIT_BEFORE)
		return -EINVAL;
	return 0;
}

static int remove_store(int dfd);

int fk_store_open(const char *dir, const struct fk_store_opts *o,
		  struct fk_store **out)
{
	struct fk_store *s;
	struct fk_control ctl;
	pthread_condattr_t ca;
	int r, fresh = 0, existing = 0;

	if (!dir || !out)
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->dirfd = s->basefd = s->waldirfd = s->lockfd = s->dirlockfd = -1;
	if (o)
		s->o = *o;
	else
		fk_store_opts_init(&s->o);
	pthread_mutex_init(&s->cat_mu, NULL);
	pthread_mutex_init(&s->files_mu, NULL);
	pthread_mutex_init(&s->ckpt_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->ckpt_cv, &ca);
	pthread_condattr_destroy(&ca);
	for (uint32_t i = 0; i <= FK_STORE_MAX_TABLES; i++)
		pthread_mutex_init(&s->tables[i].append_mu, NULL);
	r = check_opts(&s->o);
	if (r)
		goto fail;
	if (!fk_fpi_method_available(s->o.wal_compression)) {
		const char *m = fk_wal_compression_name(s->o.wal_compression);
		fk_store_log(s,
			     "wal_compression=%s: this build of libflushkit "
			     "has no %s (built without lib%s)",
			     m, m, m);
		r = -ENOTSUP;
		goto fail;
	}
	if (s->o.checkpoint_sync_spread_ms == FK_SYNC_SPREAD_AUTO)
		s->o.checkpoint_sync_spread_ms =
		    s->o.checkpoint_timeout_ms / 10;
	/* The sync phase's batch, set up once: a forced io_uring that the
	 * kernel refuses fails the open here, not a checkpoint later. */
	struct fk_fsync_batch_opts bo;
	fk_fsync_batch_opts_init(&bo);
	bo.sync_io = s->o.sync_io;
	if (s->o.sync_jobs)
		bo.queue_depth = s->o.sync_jobs;
	s->sync_jobs = bo.queue_depth;
	r = fk_fsync_batch_create(&bo, &s->fsb);
	if (r)
		goto fail;

	r = s->dirfd =
	    open_dir(AT_FDCWD, dir, s->o.create_mode != FK_STORE_OPEN_EXISTING);
	if (r == -ENOENT)
		fk_store_log(s, "no store: the data directory does not exist");
	if (r < 0)
		goto fail;
	r = lock_and_classify(s, &fresh);
	if (r)
		goto fail;
	if (fresh) {
		s->wal_seg_bytes = s->o.wal_segment_bytes;
		s->seg_bytes = s->o.segment_bytes;
	} else if ((r = fk_control_read(s, &ctl))) {
		fk_store_log(s, "control file: %s", fk_strerror(r));
		goto fail;
	} else {
		existing = 1;
		/* The geometry is fixed when the store is created. */
		s->wal_seg_bytes = ctl.wal_seg_bytes;
		s->seg_bytes = ctl.seg_bytes;
	}
	s->blocks_per_seg = (uint32_t)(s->seg_bytes / FK_PAGE_SIZE);
	s->wal_trigger_bytes =
	    (uint64_t)((double)s->o.max_wal_size_bytes /
		       (1.0 + s->o.checkpoint_completion_target));
	if (s->wal_trigger_bytes < s->wal_seg_bytes)
		s->wal_trigger_bytes = s->wal_seg_bytes;
	/* A store's base/ and wal/ are made at its creation, before its
	 * control file: one missing later is damage, not made again. */
	r = s->basefd = open_dir(s->dirfd, "base", fresh);
	if (r >= 0)
		r = s->waldirfd = open_dir(s->dirfd, "wal", fresh);
	if (r == -ENOENT) {
		fk_store_log(s, "directory '%s/' is missing",
			     s->basefd < 0 ? "base" : "wal");
		r = -FK_ECORRUPT;
	}
	if (r < 0)
		goto fail;
	if (fresh) {
		/* The new directory's entries, and its own entry in its
		 * parent, durable. */
		r = fk_sys.fsync(s->dirfd);
		if (r)
			goto fail;
		int pfd =
		    fk_sys.openat(s->dirfd, "..", O_RDONLY | O_DIRECTORY, 0);
		if (pfd >= 0) {
			r = fk_sys.fsync(pfd);
			fk_sys.close(pfd);
			if (r)
				goto fail;
		}
	}
	r = fk_bufpool_init(s);
	if (r)
		goto fail;
	r = fk_wal_init(s);
	if (r)
		goto fail;
	r = fk_fsyncq_create(s->o.fsyncq_capacity ? s->o.fsyncq_capacity
						  : s->nbuf,
			     s->o.fsyncq_compaction, &s->fsq);
	if (r)
		goto fail;
	fk_ckpt_init(s);
	r = fk_wal_scan_dir(s);
	if (r)
		goto fail;
	if (fresh) {
		r = fk_catalog_write(s);
		if (r)
			goto fail;
		/* The WAL starts at segment 1 (LSN 0 means "none"). */
		s->insert_lsn = s->write_lsn = s->flush_lsn = s->wal_seg_bytes;
		if (s->wal_highest_seg < 1)
			s->wal_oldest_seg = 1;
		/* The WAL's whole footprint now: a new store whose file
		 * system cannot hold it fails here, saying so (the log line
		 * of fk_wal_ensure_segment), not at some later commit. */
		r = fk_wal_ensure_segment(s, FK_STORE_WAL_MIN_SEGMENTS);
		if (r)
			goto fail;
		r = fk_checkpoint_run(s, "init", CKPT_REQ_IMMEDIATE, 0);
	} else {
		r = fk_catalog_read(s);
		if (r == -ENOENT)
			fk_store_log(s, "catalog file 'catalog' is missing");
		if (!r)
			r = fk_store_recover(s, &ctl);
	}
	if (r)
		goto fail;
	s->last_ckpt_ns = fk_now_ns();
	r = fk_ckpt_start_thread(s);
	if (r)
		goto fail;
	*out = s;
	return 0;
fail:
	if (!r)
		r = -EIO;
	/* A store with its control file whose open then finds a file it
	 * needs missing (its catalog, a WAL segment the control file points
	 * into) is damaged (S9), never "no store": -ENOENT stays the answer
	 * for a directory that holds none. */
	if (existing && r == -ENOENT) {
		fk_store_log(s, "a file of the store is missing (see above): "
				"the data directory is damaged; nothing was "
				"changed");
		r = -FK_ECORRUPT;
	}
	/* A failed creation leaves no store behind, only the lock file
	 * (S9): a catalog or WAL segments without a control file would be
	 * refused as damaged by every later open.  Nothing in it was
	 * acknowledged. */
	if (fresh && s->lockfd >= 0)
		remove_store(s->dirfd);
	store_free(s);
	return r;
}

int fk_store_close(struct fk_store *s)
{
	if (!s)
		return 0;
	fk_ckpt_stop_thread(s);
	int r = fk_store_error(s);
	if (!r)
		r = fk_checkpoint_run(s, "shutdown", CKPT_REQ_IMMEDIATE, 1);
	if (!r)
		r = fk_store_error(s);
	store_free(s);
	return r;
}

struct unlink_pass {
	int fd, removed, err;
};

/* Unlink one non-directory entry; the first error is kept, the pass
 * goes on. */
static int unlink_entry(void *arg, const char *name, unsigned char type)
{
	struct unlink_pass *p = arg;
	if (type == DT_DIR)
		return 0;
	int u = fk_sys.unlinkat(p->fd, name, 0);
	if (!u)
		p->removed = 1;
	else if (u != -ENOENT && u != -EISDIR && !p->err)
		p->err = u;
	return 0;
}

/* Unlink every entry but directories in @dirfd's directory @name, then
 * the directory itself.  0 (also when absent), -ENOTEMPTY (it holds a
 * directory) or -errno. */
static int remove_subdir(int dirfd, const char *name)
{
	int fd = fk_sys.openat(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	struct unlink_pass p = {.fd = fd};
	do { /* again until a pass removes nothing: readdir during
	      * unlinks may skip entries */
		p.removed = 0;
		fk_sys.lseek(fd, 0, SEEK_SET);
		int g = fk_dirents(fd, unlink_entry, &p);
		if (g && !p.err)
			p.err = g;
	} while (!p.err && p.removed);
	int r = p.err;
	fk_sys.close(fd);
	if (!r)
		r = fk_sys.unlinkat(dirfd, name, AT_REMOVEDIR);
	if (r == -EEXIST)
		r = -ENOTEMPTY;
	return r == -ENOENT ? 0 : r;
}

/* Remove the store's files in @dfd, whose lock the caller holds. */
static int remove_store(int dfd)
{
	static const char *const files[] = {"control.tmp", "catalog",
					    "catalog.tmp"};
	/* The control file first, durably: from then on an open sees a
	 * damaged store (S9), never a new or an old one. */
	int r = fk_sys.unlinkat(dfd, "control", 0);
	if (r == -ENOENT)
		r = 0;
	if (!r)
		r = fk_sys.fsync(dfd);
	for (size_t i = 0; !r && i < sizeof(files) / sizeof(files[0]); i++) {
		r = fk_sys.unlinkat(dfd, files[i], 0);
		if (r == -ENOENT)
			r = 0;
	}
	if (!r)
		r = remove_subdir(dfd, "wal");
	if (!r)
		r = remove_subdir(dfd, "base");
	int rs = fk_sys.fsync(dfd);
	return r ? r : rs;
}

int fk_store_destroy(const char *dir)
{
	int dfd, lfd = -1, dlfd = -1, r;
	if (!dir)
		return -EINVAL;
	dfd = fk_sys.openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0);
	if (dfd < 0)
		return dfd;
	r = lock_dir(dfd, 1, &lfd, &dlfd);
	if (!r)
		r = remove_store(dfd);
	/* The lock file stays: removing it while held would let a new
	 * opener lock a new file next to a live one. */
	if (lfd >= 0)
		fk_sys.close(lfd);
	if (dlfd >= 0)
		fk_sys.close(dlfd);
	fk_sys.close(dfd);
	return r;
}

void fk_store_get_fsyncq_stats(struct fk_store *s, struct fk_fsyncq_stats *st)
{
	fk_fsyncq_get_stats(s->fsq, st);
}

uint64_t fk_store_checkpoint_started_ns(struct fk_store *s)
{
	return __atomic_load_n(&s->ckpt_running_ns, __ATOMIC_ACQUIRE);
}

void fk_store_get_stats(struct fk_store *s, struct fk_store_stats *st)
{
	st->commits = __atomic_load_n(&s->st.commits, __ATOMIC_RELAXED);
	st->wal_bytes = __atomic_load_n(&s->st.wal_bytes, __ATOMIC_RELAXED);
	st->wal_flushes = __atomic_load_n(&s->st.wal_flushes, __ATOMIC_RELAXED);
	st->wal_fpi = __atomic_load_n(&s->st.wal_fpi, __ATOMIC_RELAXED);
	st->wal_fpi_bytes =
	    __atomic_load_n(&s->st.wal_fpi_bytes, __ATOMIC_RELAXED);
	st->wal_write_ns =
	    __atomic_load_n(&s->st.wal_write_ns, __ATOMIC_RELAXED);
	st->wal_sync_ns = __atomic_load_n(&s->st.wal_sync_ns, __ATOMIC_RELAXED);
	st->checkpoints = __atomic_load_n(&s->st.checkpoints, __ATOMIC_RELAXED);
	st->buffers_checkpoint =
	    __atomic_load_n(&s->st.buffers_checkpoint, __ATOMIC_RELAXED);
	st->buffers_backend =
	    __atomic_load_n(&s->st.buffers_backend, __ATOMIC_RELAXED);
	st->backend_fsyncs =
	    __atomic_load_n(&s->st.backend_fsyncs, __ATOMIC_RELAXED);
	struct fk_fsyncq_stats fst;
	fk_fsyncq_get_stats(s->fsq, &fst);
	st->fsyncq_compactions = fst.compactions;
	st->recovery_ms = s->st.recovery_ms;
	st->recovery_records = s->st.recovery_records;
	st->insert_lsn = __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE);
	st->flush_lsn = __atomic_load_n(&s->flush_lsn, __ATOMIC_ACQUIRE);
	st->redo_lsn = __atomic_load_n(&s->redo_lsn, __ATOMIC_ACQUIRE);
	st->error = fk_store_error(s);
	st->sync_io = fk_fsync_batch_backend(s->fsb);
	st->sync_jobs = st->sync_io == FK_SYNC_IO_SEQUENTIAL ? 1 : s->sync_jobs;
}