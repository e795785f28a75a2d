// SPDX-License-Identifier: MIT
/*
 * bufpool.c - the buffer pool: shared_buffers / 8 KiB page buffers, a
 * hash table from (table, block) to buffer, pins, per-buffer content
 * locks, clock-sweep replacement, and page write-out under the WAL rule.
 * Modelled on PostgreSQL's bufmgr.c / freelist.c / buf_table.c.
 *
 * Interface routines: fk_bufpool_init/destroy, fk_buf_pin/unpin,
 * fk_buf_pin_if, fk_buf_mark_dirty, fk_buf_flush,
 * fk_bufpool_collect_dirty, fk_bufpool_forget_table.
 *
 * Invariants:
 *  B1. A buffer's tag (table, block) is in the hash chain of its bucket
 *      iff the buffer is tagged; the tag changes only with both bucket
 *      partition locks and the header mutex held, and only while the
 *      changing thread holds the only pin (refcount == 1) and the buffer
 *      is not dirty.
 *  B2. A pinned buffer (refcount > 0) is never retagged or evicted; the
 *      content lock may be taken only while pinned.  Page bytes change
 *      only under the exclusive content lock.
 *  B3. BUF_DIRTY is set under the exclusive content lock (before the WAL
 *      record of the change is inserted, so a checkpoint whose redo
 *      point follows that record sees the buffer dirty), and cleared
 *      only by the writer that wrote the page, if no change happened
 *      meanwhile (BUF_JUST_DIRTIED), after the write and its fsync
 *      request were done.
 *  B4. At most one write of a buffer is in flight (BUF_IO); a page is
 *      written from a copy taken under the shared content lock, and
 *      only after the WAL up to the copy's page LSN is durable (the WAL
 *      rule).  The copy gets its CRC-32C at write-out.
 *  B5. A written page is registered in the fsync request queue before
 *      BUF_DIRTY is cleared; if the queue is full and compaction frees
 *      nothing, the writer fsyncs the segment itself (a "backend
 *      fsync"); a failed fsync stops the store.
 *  B6. A page read from disk is used only if its CRC-32C and identity
 *      (table, block) check out, or it is all zero (never written) and
 *      holds none of the rows its table counts (in recovery: none of
 *      the rows durable at the last checkpoint, S7); otherwise the pin
 *      fails with -FK_ECORRUPT.
 *  B7. A failed page write (ENOSPC for a block of a growing or sparse
 *      segment, EIO) leaves the buffer dirty and fails only its caller
 *      (the commit that needed the buffer: nothing applied; or the
 *      checkpoint, C8); the store goes on.  A pin whose dirty victim
 *      finds no space (ENOSPC, EDQUOT) tries other victims, so reads
 *      and commits go on from clean buffers while the file system is
 *      full; it fails with that error after nbuf such victims.  A page
 *      left half written on disk is rewritten later, or restored from
 *      its full-page image by recovery (it was changed after the redo
 *      point).
 */
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_USAGE 5u

static uint32_t bucket_of(const struct fk_store *s, uint32_t table,
			  uint32_t block)
{
	uint64_t h = ((uint64_t)table << 32 | block) * 0x9E3779B97F4A7C15ull;
	return (uint32_t)((h >> 29) % s->nr_buckets);
}

static pthread_mutex_t *part_of(struct fk_store *s, uint32_t bucket)
{
	return &s->part_mu[bucket % FK_BUF_PARTITIONS];
}

int fk_bufpool_init(struct fk_store *s)
{
	uint64_t n = s->o.shared_buffers_bytes / FK_PAGE_SIZE;
	if (n < 64)
		n = 64;
	if (n > (1u << 30))
		return -EINVAL;
	s->nbuf = (uint32_t)n;
	s->nr_buckets = s->nbuf * 2 + 1;
	s->bufs = calloc(s->nbuf, sizeof(*s->bufs));
	s->hash_heads = calloc(s->nr_buckets, sizeof(*s->hash_heads));
	if (posix_memalign((void **)&s->pages, 4096,
			   (size_t)s->nbuf * FK_PAGE_SIZE))
		s->pages = NULL;
	if (!s->bufs || !s->hash_heads || !s->pages)
		return -ENOMEM;
	for (uint32_t i = 0; i < FK_BUF_PARTITIONS; i++)
		pthread_mutex_init(&s->part_mu[i], NULL);
	for (uint32_t i = 0; i < s->nbuf; i++) {
		struct fk_buf *b = &s->bufs[i];
		pthread_mutex_init(&b->mu, NULL);
		pthread_cond_init(&b->cv, NULL);
		pthread_rwlock_init(&b->content, NULL);
		b->page = s->pages + (size_t)i * FK_PAGE_SIZE;
	}
	return 0;
}

void fk_bufpool_destroy(struct fk_store *s)
{
	if (s->bufs) {
		for (uint32_t i = 0; i < s->nbuf; i++) {
			pthread_mutex_destroy(&s->bufs[i].mu);
			pthread_cond_destroy(&s->bufs[i].cv);
			pthread_rwlock_destroy(&s->bufs[i].content);
		}
		for (uint32_t i = 0; i < FK_BUF_PARTITIONS; i++)
			pthread_mutex_destroy(&s->part_mu[i]);
	}
	free(s->bufs);
	free(s->hash_heads);
	free(s->pages);
	s->bufs = NULL;
	s->hash_heads = NULL;
	s->pages = NULL;
}

/* Under the partition lock of @bucket. */
static int hash_find(struct fk_store *s, uint32_t bucket, uint32_t table,
		     uint32_t block)
{
	for (uint32_t i = s->hash_heads[bucket]; i;
	     i = s->bufs[i - 1].hash_next)
		if (s->bufs[i - 1].table == table &&
		    s->bufs[i - 1].block == block)
			return (int)(i - 1);
	return -1;
}

static void hash_remove(struct fk_store *s, uint32_t bucket, int idx)
{
	uint32_t *pp = &s->hash_heads[bucket];
	while (*pp && *pp != (uint32_t)idx + 1)
		pp = &s->bufs[*pp - 1].hash_next;
	if (*pp)
		*pp = s->bufs[idx].hash_next;
	s->bufs[idx].hash_next = 0;
}

static void hash_insert(struct fk_store *s, uint32_t bucket, int idx)
{
	s->bufs[idx].hash_next = s->hash_heads[bucket];
	s->hash_heads[bucket] = (uint32_t)idx + 1;
}

void fk_buf_unpin(struct fk_store *s, int idx)
{
	struct fk_buf *b = &s->bufs[idx];
	pthread_mutex_lock(&b->mu);
	b->refcount--;
	pthread_mutex_unlock(&b->mu);
}

void fk_buf_mark_dirty(struct fk_store *s, int idx)
{
	struct fk_buf *b = &s->bufs[idx];
	pthread_mutex_lock(&b->mu);
	b->flags |= BUF_DIRTY | BUF_JUST_DIRTIED;
	pthread_mutex_unlock(&b->mu);
}

/* Read the page of the freshly tagged buffer @idx from its segment. */
static int read_page(struct fk_store *s, int idx)
{
	struct fk_buf *b = &s->bufs[idx];
	uint32_t seg = b->block / s->blocks_per_seg;
	uint64_t off = (uint64_t)(b->block % s->blocks_per_seg) * FK_PAGE_SIZE;
	int fd = fk_store_seg_fd(s, b->table, seg);
	if (fd < 0)
		return fd;
	ssize_t n = fk_pread_all(fd, b->page, FK_PAGE_SIZE, off);
	if (n < 0)
		return (int)n;
	if ((size_t)n < FK_PAGE_SIZE)
		memset(b->page + n, 0, FK_PAGE_SIZE - (size_t)n);
	int zero = 1;
	for (size_t i = 0; i < FK_PAGE_SIZE && zero; i += 8) {
		uint64_t w;
		memcpy(&w, b->page + i, 8);
		zero = !w;
	}
	int r = fk_page_verify(b->page, b->table, b->block);
	/*
	 * B6: all zero means "never written" only past the table's rows.
	 * A block that holds counted rows was written (bulk load, or
	 * eviction and checkpoints before its buffer was dropped; after
	 * recovery, the end-of-recovery checkpoint), so zeros there are a
	 * lost or zeroed block: reading it as empty rows would hand out
	 * zeros and a commit would write them back with a valid CRC
	 * (test-torn-page, "zeroed").  Recovery itself may meet such a
	 * page legitimately (rows counted at the checkpoint whose page was
	 * first written after it), and replays it; but not below the rows
	 * whose pages were durable at that checkpoint (rows_durable, S7).
	 */
	if (!r && zero) {
		struct fk_table *t = &s->tables[b->table];
		uint64_t rows =
		    s->recovering ? t->rows_durable
				  : __atomic_load_n(&t->rows, __ATOMIC_ACQUIRE);
		if (t->rows_per_page &&
		    (uint64_t)b->block * t->rows_per_page < rows)
			r = -FK_ECORRUPT;
	}
	return r;
}

/*
 * Clock sweep (PostgreSQL's StrategyGetBuffer): advance the hand,
 * decrementing usage counts, until an unpinned buffer with usage 0 is
 * found; return it pinned.
 */
static int clock_victim(struct fk_store *s)
{
	uint64_t tries = (uint64_t)s->nbuf * (MAX_USAGE + 2);
	while (tries--) {
		uint32_t i =
		    __atomic_fetch_add(&s->clock_hand, 1, __ATOMIC_RELAXED) %
		    s->nbuf;
		struct fk_buf *b = &s->bufs[i];
		pthread_mutex_lock(&b->mu);
		if (b->refcount == 0 && !(b->flags & BUF_IO)) {
			if (b->usage > 0) {
				b->usage--;
			} else {
				b->refcount = 1;
				pthread_mutex_unlock(&b->mu);
				return (int)i;
			}
		}
		pthread_mutex_unlock(&b->mu);
	}
	return -ENOBUFS;
}

int fk_buf_pin(struct fk_store *s, uint32_t table, uint32_t block, int mode)
{
	uint32_t bk = bucket_of(s, table, block);
	pthread_mutex_t *pm = part_of(s, bk);
	uint32_t nospc = 0; /* dirty victims that found no space (B7) */

	for (;;) {
		int r = fk_store_error(s);
		if (r)
			return r;
		pthread_mutex_lock(pm);
		int idx = hash_find(s, bk, table, block);
		if (idx >= 0) {
			struct fk_buf *b = &s->bufs[idx];
			pthread_mutex_lock(&b->mu);
			b->refcount++;
			if (b->usage < MAX_USAGE)
				b->usage++;
			pthread_mutex_unlock(pm);
			while ((b->flags & BUF_IO) && !(b->flags & BUF_VALID))
				pthread_cond_wait(&b->cv, &b->mu);
			int valid = b->flags & BUF_VALID;
			pthread_mutex_unlock(&b->mu);
			if (valid)
				return idx;
			/* The read failed; its reader untagged it.  Retry. */
			fk_buf_unpin(s, idx);
			continue;
		}
		pthread_mutex_unlock(pm);

		/* Not cached: find a victim, write it if dirty. */
		int v = clock_victim(s);
		if (v < 0)
			return v;
		struct fk_buf *vb = &s->bufs[v];
		pthread_mutex_lock(&vb->mu);
		int dirty = vb->flags & BUF_DIRTY;
		pthread_mutex_unlock(&vb->mu);
		if (dirty) {
			r = fk_buf_flush(s, v, FK_WRITER_BACKEND, NULL);
			if (r < 0) {
				fk_buf_unpin(s, v);
				/* B7: no block for it (a full file system,
				 * e.g. after recovery put off its checkpoint):
				 * it stays dirty, another victim may be
				 * clean.  Out of space only when a whole
				 * sweep's worth found none. */
				if ((r == -ENOSPC || r == -EDQUOT) &&
				    ++nospc < s->nbuf)
					continue;
				return r;
			}
			if (r > 0)
				__atomic_add_fetch(&s->st.buffers_backend, 1,
						   __ATOMIC_RELAXED);
		}

		/* Retag under both partition locks (B1), in address order. */
		uint32_t obk =
		    vb->table ? bucket_of(s, vb->table, vb->block) : bk;
		pthread_mutex_t *opm = part_of(s, obk);
		if (opm < pm) {
			pthread_mutex_lock(opm);
			pthread_mutex_lock(pm);
		} else {
			pthread_mutex_lock(pm);
			if (opm != pm)
				pthread_mutex_lock(opm);
		}
		pthread_mutex_lock(&vb->mu);
		int ok = vb->refcount == 1 && !(vb->flags & BUF_DIRTY) &&
			 hash_find(s, bk, table, block) < 0;
		if (ok) {
			if (vb->table)
				hash_remove(s, obk, v);
			vb->table = table;
			vb->block = block;
			vb->flags = BUF_IO;
			vb->usage = 1;
			hash_insert(s, bk, v);
		}
		pthread_mutex_unlock(&vb->mu);
		if (opm != pm)
			pthread_mutex_unlock(opm);
		pthread_mutex_unlock(pm);
		if (!ok) {
			fk_buf_unpin(s, v);
			continue;
		}

		/* We own the new buffer's I/O; others wait on BUF_IO. */
		if (mode == FK_PIN_NOREAD) {
			fk_page_init(vb->page, table, block);
			r = 0;
		} else {
			r = read_page(s, v);
		}
		pthread_mutex_lock(pm);
		pthread_mutex_lock(&vb->mu);
		if (r) {
			hash_remove(s, bk, v);
			vb->table = 0;
			vb->block = 0;
			vb->flags = 0;
			vb->usage = 0;
		} else {
			vb->flags = BUF_VALID;
		}
		pthread_cond_broadcast(&vb->cv);
		pthread_mutex_unlock(&vb->mu);
		pthread_mutex_unlock(pm);
		if (r) {
			fk_buf_unpin(s, v);
			return r;
		}
		return v;
	}
}

int fk_buf_pin_if(struct fk_store *s, int idx, uint32_t table, uint32_t block)
{
	struct fk_buf *b = &s->bufs[idx];
	int ok;
	pthread_mutex_lock(&b->mu);
	ok = b->table == table && b->block == block && (b->flags & BUF_VALID);
	if (ok)
		b->refcount++;
	pthread_mutex_unlock(&b->mu);
	return ok ? 0 : -ENOENT;
}

/* Make the written segment reach disk by the next checkpoint (B5). */
static int register_fsync(struct fk_store *s, uint32_t table, uint32_t seg,
			  int fd, int writer)
{
	uint64_t id = fk_file_id(table, seg);
	int r = fk_fsyncq_register(s->fsq, id);
	if (r != -EAGAIN)
		return r;
	if (writer != FK_WRITER_BACKEND) {
		/* The checkpointer (or recovery) drains the queue into its
		 * pending set, then the request surely fits. */
		fk_fsyncq_absorb(s->fsq);
		r = fk_fsyncq_register(s->fsq, id);
		if (r != -EAGAIN)
			return r;
	}
	/* Queue full and compaction freed nothing: fsync it ourselves. */
	__atomic_add_fetch(&s->st.backend_fsyncs, 1, __ATOMIC_RELAXED);
	r = fk_sys.fsync(fd);
	if (r)
		fk_store_stop(s, r, "fsync of a table segment (backend)");
	return r;
}

int fk_buf_flush(struct fk_store *s, int idx, int writer,
		 struct fk_writeback *wb)
{
	struct fk_buf *b = &s->bufs[idx];
	uint8_t copy[FK_PAGE_SIZE] __attribute__((aligned(16)));
	int r;

	pthread_rwlock_rdlock(&b->content);
	pthread_mutex_lock(&b->mu);
	while (b->flags & BUF_IO)
		pthread_cond_wait(&b->cv, &b->mu);
	if (!(b->flags & BUF_DIRTY) || !(b->flags & BUF_VALID)) {
		pthread_mutex_unlock(&b->mu);
		pthread_rwlock_unlock(&b->content);
		return 0;
	}
	b->flags |= BUF_IO;
	b->flags &= ~BUF_JUST_DIRTIED;
	uint32_t table = b->table, block = b->block;
	pthread_mutex_unlock(&b->mu);
	memcpy(copy, b->page, FK_PAGE_SIZE);
	pthread_rwlock_unlock(&b->content);

	/* B4: the WAL rule. */
	r = fk_wal_flush(s, PAGE_LSN(copy));
	uint32_t seg = block / s->blocks_per_seg;
	uint64_t off = (uint64_t)(block % s->blocks_per_seg) * FK_PAGE_SIZE;
	int fd = -1;
	if (!r) {
		fk_page_set_crc(copy);
		fd = fk_store_seg_fd(s, table, seg);
		r = fd < 0 ? fd : fk_pwrite_all(fd, copy, FK_PAGE_SIZE, off);
	}
	if (!r && wb)
		fk_writeback_note(wb, fd, off, FK_PAGE_SIZE);
	if (!r)
		r = register_fsync(s, table, seg, fd, writer);

	pthread_mutex_lock(&b->mu);
	if (!r && !(b->flags & BUF_JUST_DIRTIED))
		b->flags &= ~BUF_DIRTY;
	b->flags &= ~BUF_IO;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return r ? r : 1;
}

size_t fk_bufpool_collect_dirty(struct fk_store *s, struct fk_dirty *out)
{
	size_t n = 0;
	for (uint32_t i = 0; i < s->nbuf; i++) {
		struct fk_buf *b = &s->bufs[i];
		pthread_mutex_lock(&b->mu);
		if ((b->flags & (BUF_DIRTY | BUF_VALID)) ==
		    (BUF_DIRTY | BUF_VALID)) {
			out[n].table = b->table;
			out[n].block = b->block;
			out[n].idx = i;
			n++;
		}
		pthread_mutex_unlock(&b->mu);
	}
	return n;
}

void fk_bufpool_forget_table(struct fk_store *s, uint32_t table)
{
	for (uint32_t i = 0; i < s->nbuf; i++) {
		struct fk_buf *b = &s->bufs[i];
		if (__atomic_load_n(&b->table, __ATOMIC_RELAXED) != table)
			continue;
		uint32_t bk = bucket_of(s, b->table, b->block);
		pthread_mutex_t *pm = part_of(s, bk);
		pthread_mutex_lock(pm);
		pthread_mutex_lock(&b->mu);
		if (b->table == table && b->refcount == 0) {
			hash_remove(s, bk, (int)i);
			b->table = 0;
			b->block = 0;
			b->flags = 0;
			b->usage = 0;
		}
		pthread_mutex_unlock(&b->mu);
		pthread_mutex_unlock(pm);
	}
}
