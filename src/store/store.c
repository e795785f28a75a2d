// SPDX-License-Identifier: MIT
/*
 * store.c - the page store's public face: options and presets, open
 * (creating or recovering), close, the catalog and control files,
 * tables, reads, write batches, commit, bulk load, statistics.
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
 * Interface routines: every fk_store_* and fk_batch_* function of
 * include/flushkit.h; internally fk_store_log, fk_store_stop,
 * fk_store_space_facts, fk_store_seg_fd, fk_store_write_control, and
 * the pure decoders
 * fk_control_decode and fk_catalog_decode (fuzzed in tests/fuzz/).
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
 *      still leaves every other opener -EBUSY.  fk_store_destroy removes under the same
 *      lock.
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

#define CTL_MAGIC 0x54434b46u	/* "FKCT" */
#define CAT_MAGIC 0x54414b46u	/* "FKAT" */
#define FMT_VERSION 1u
enum { STATE_CLEAN = 1, STATE_PRODUCTION = 2 };

struct cat_entry {
	uint32_t id, row_bytes;
	char name[64];
};

struct batch_op {
	uint8_t kind;
	uint32_t table;
	uint64_t row;
	uint32_t off, len;
	size_t data_off;	/* in the batch's data, unless ext */
	const void *ext;	/* fk_batch_append: the caller's row */
	void *result;		/* int64_t * (ADD) or uint64_t * (APPEND) */
};

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
		return 0;
	}
	if (!strcmp(flush, "naive")) {
		o->checkpoint_sorted = 0;
		o->checkpoint_flush_after_bytes = 0;
		o->checkpoint_sync_spread_ms = 0;
		o->fsyncq_compaction = 0;
		o->sync_io = FK_SYNC_IO_SEQUENTIAL;
		return 0;
	}
	return -EINVAL;
}

/* ---- logging and errors ---- */

void fk_store_log(struct fk_store *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	if (!s->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->o.log(s->o.log_arg, line);
}

void fk_store_stop(struct fk_store *s, int err, const char *what)
{
	int zero = 0;
	if (__atomic_compare_exchange_n(&s->error, &zero, err, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		fk_store_log(s, "store stopped: %s failed: %s", what,
			     fk_strerror(err));
	pthread_mutex_lock(&s->flush_mu);
	pthread_cond_broadcast(&s->flush_cv);
	pthread_mutex_unlock(&s->flush_mu);
	pthread_mutex_lock(&s->ckpt_mu);
	pthread_cond_broadcast(&s->ckpt_cv);
	pthread_mutex_unlock(&s->ckpt_mu);
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

void fk_store_space_facts(struct fk_store *s, char *buf, size_t len)
{
	struct statfs sf;
	uint64_t lo = __atomic_load_n(&s->wal_oldest_seg, __ATOMIC_ACQUIRE);
	uint64_t hi = __atomic_load_n(&s->wal_highest_seg, __ATOMIC_ACQUIRE);
	uint64_t nseg = hi >= lo ? hi - lo + 1 : 0;
	int n = 0;
	if (!fk_sys.fstatfs(s->dirfd, &sf))
		n = snprintf(buf, len,
			     "the file system of the data directory has "
			     "%.1f MiB free of %.1f MiB; ",
			     mib((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize),
			     mib((uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize));
	if (n < 0 || (size_t)n >= len)
		n = 0;
	snprintf(buf + n, len - (size_t)n,
		 "the WAL takes %.1f MiB (%llu segments of %.1f MiB, "
		 "wal_segment_bytes; it keeps at least %u)",
		 mib(nseg * s->wal_seg_bytes), (unsigned long long)nseg,
		 mib(s->wal_seg_bytes), FK_STORE_WAL_MIN_SEGMENTS);
}

static int stopped(struct fk_store *s)
{
	return fk_store_error(s) ? -FK_ESTOPPED : 0;
}

/* ---- files ---- */

int fk_store_seg_fd(struct fk_store *s, uint32_t table, uint32_t seg)
{
	struct fk_table *t = &s->tables[table];
	int fd;
	pthread_mutex_lock(&s->files_mu);
	if (seg >= t->nr_seg_fds) {
		size_t n = seg + 8;
		int *p = realloc(t->seg_fds, n * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&s->files_mu);
			return -ENOMEM;
		}
		for (size_t i = t->nr_seg_fds; i < n; i++)
			p[i] = -1;
		t->seg_fds = p;
		t->nr_seg_fds = n;
	}
	fd = t->seg_fds[seg];
	if (fd < 0) {
		char name[32];
		snprintf(name, sizeof(name), "%u.%u", table, seg);
		fd = fk_sys.openat(s->basefd, name, O_RDWR, 0);
		if (fd == -ENOENT) {
			/* A new segment: its name must be durable before any
			 * checkpoint relies on pages written into it, and a
			 * file's fsync does not promise its directory entry
			 * (btrfs, POSIX).  Segments are created once per
			 * segment_bytes, so fsync base/ right away; a failure
			 * is sticky like every failed fsync (S4). */
			fd = fk_sys.openat(s->basefd, name,
					   O_RDWR | O_CREAT | O_EXCL, 0600);
			if (fd >= 0) {
				int r = fk_sys.fsync(s->basefd);
				if (r < 0) {
					fk_sys.close(fd);
					pthread_mutex_unlock(&s->files_mu);
					fk_store_stop(s, r,
						      "fsync of the base directory");
					return r;
				}
			}
		}
		if (fd >= 0)
			t->seg_fds[seg] = fd;
	}
	pthread_mutex_unlock(&s->files_mu);
	return fd;
}

/*
 * Replace @name in @dirfd atomically and durably with @len bytes.
 * S6: a failure before any fsync (ENOSPC writing NAME.tmp, say) leaves
 * NAME as it was and removes NAME.tmp, so it can simply be tried again
 * once space is freed; a failed fsync (of NAME.tmp or of the directory
 * after the rename) stops the store, as it must never be retried into
 * success.
 */
static int write_durable(struct fk_store *s, int dirfd, const char *name,
			 const void *buf, size_t len)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	int fd = fk_sys.openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fd;
	int r = fk_pwrite_all(fd, buf, len, 0);
	int synced = 0;
	if (!r) {
		r = fk_sys.fsync(fd);
		synced = 1;
	}
	int rc = fk_sys.close(fd);
	if (!r)
		r = rc;
	if (r && synced) {
		char what[80];
		snprintf(what, sizeof(what), "fsync of %s", tmp);
		fk_store_stop(s, r, what);
	}
	if (!r)
		r = fk_sys.renameat(dirfd, tmp, dirfd, name);
	if (r) {
		fk_sys.unlinkat(dirfd, tmp, 0);
		return r;
	}
	r = fk_sys.fsync(dirfd);
	if (r)
		fk_store_stop(s, r, "fsync of the data directory");
	return r;
}

int fk_store_write_control(struct fk_store *s, int clean,
			   const struct fk_wal_ckpt *ck)
{
	struct fk_control c;
	memset(&c, 0, sizeof(c));
	c.magic = CTL_MAGIC;
	c.version = FMT_VERSION;
	c.state = clean ? STATE_CLEAN : STATE_PRODUCTION;
	c.checkpoint_lsn = s->ckpt_lsn;
	c.redo_lsn = ck->redo_lsn;
	c.wal_seg_bytes = s->wal_seg_bytes;
	c.seg_bytes = s->seg_bytes;
	memcpy(c.rows, ck->rows, sizeof(c.rows));
	c.crc = fk_crc32c(0, &c, offsetof(struct fk_control, crc));
	return write_durable(s, s->dirfd, "control", &c, sizeof(c));
}

int fk_control_decode(struct fk_control *c, const void *buf, size_t len)
{
	memset(c, 0, sizeof(*c));
	if (len != sizeof(*c))
		return -FK_ECORRUPT;
	memcpy(c, buf, sizeof(*c));
	if (c->magic != CTL_MAGIC || c->version != FMT_VERSION ||
	    c->crc != fk_crc32c(0, c, offsetof(struct fk_control, crc)))
		return -FK_ECORRUPT;
	/* The geometry divides every LSN and block number and sizes the
	 * WAL reader's buffer: a zero or absurd value that passed the CRC
	 * (found by tests/fuzz/fuzz-control.c) must not reach a division or
	 * a huge malloc.  Same bounds as check_opts applies at creation. */
	if ((c->state != STATE_CLEAN && c->state != STATE_PRODUCTION) ||
	    c->wal_seg_bytes < 65536 || c->wal_seg_bytes % 8192 ||
	    c->wal_seg_bytes > (1ull << 30) || !c->seg_bytes ||
	    c->seg_bytes % FK_PAGE_SIZE ||
	    c->seg_bytes / FK_PAGE_SIZE > UINT32_MAX)
		return -FK_ECORRUPT;
	return 0;
}

static int read_control(struct fk_store *s, struct fk_control *c)
{
	uint8_t buf[sizeof(*c) + 1];
	int fd = fk_sys.openat(s->dirfd, "control", O_RDONLY, 0);
	if (fd < 0)
		return fd;
	/* One byte more than the format: a longer file is corrupt too. */
	ssize_t n = fk_pread_all(fd, buf, sizeof(buf), 0);
	fk_sys.close(fd);
	if (n < 0)
		return (int)n;
	return fk_control_decode(c, buf, (size_t)n);
}

/* Under cat_mu (or single-threaded). */
static int write_catalog(struct fk_store *s)
{
	size_t n = 0, len;
	uint8_t *buf = malloc(16 + (FK_STORE_MAX_TABLES + 1) *
				   sizeof(struct cat_entry) + 4);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		struct fk_table *t = &s->tables[i];
		if (!t->id)
			continue;
		struct cat_entry e;
		memset(&e, 0, sizeof(e));
		e.id = t->id;
		e.row_bytes = t->row_bytes;
		memcpy(e.name, t->name, sizeof(e.name));
		memcpy(buf + 16 + n * sizeof(e), &e, sizeof(e));
		n++;
	}
	uint32_t hdr[4] = {CAT_MAGIC, FMT_VERSION, (uint32_t)n, 0};
	memcpy(buf, hdr, 16);
	len = 16 + n * sizeof(struct cat_entry);
	uint32_t crc = fk_crc32c(0, buf, len);
	memcpy(buf + len, &crc, 4);
	int r = write_durable(s, s->dirfd, "catalog", buf, len + 4);
	free(buf);
	return r;
}

static void table_setup(struct fk_table *t, uint32_t id, const char *name,
			uint32_t row_bytes)
{
	t->id = id;
	t->row_bytes = row_bytes;
	t->rows_per_page = (FK_PAGE_SIZE - FK_PAGE_HDR) / row_bytes;
	snprintf(t->name, sizeof(t->name), "%s", name);
}

int fk_catalog_decode(struct fk_store *s, const void *buf, size_t n)
{
	uint32_t hdr[4], crc;
	if (n < 20)
		return -FK_ECORRUPT;
	memcpy(hdr, buf, 16);
	if (hdr[0] != CAT_MAGIC || hdr[1] != FMT_VERSION ||
	    hdr[2] > FK_STORE_MAX_TABLES ||
	    n != 16 + hdr[2] * sizeof(struct cat_entry) + 4)
		return -FK_ECORRUPT;
	memcpy(&crc, (const uint8_t *)buf + n - 4, 4);
	if (crc != fk_crc32c(0, buf, n - 4))
		return -FK_ECORRUPT;
	for (uint32_t i = 0; i < hdr[2]; i++) {
		struct cat_entry e;
		memcpy(&e, (const uint8_t *)buf + 16 + i * sizeof(e),
		       sizeof(e));
		if (!e.id || e.id > FK_STORE_MAX_TABLES || !e.row_bytes ||
		    e.row_bytes > FK_PAGE_SIZE - FK_PAGE_HDR)
			return -FK_ECORRUPT;
		e.name[sizeof(e.name) - 1] = 0;
		table_setup(&s->tables[e.id], e.id, e.name, e.row_bytes);
	}
	return 0;
}

static int read_catalog(struct fk_store *s)
{
	size_t cap = 16 + (FK_STORE_MAX_TABLES + 1) *
			  sizeof(struct cat_entry) + 4;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int fd = fk_sys.openat(s->dirfd, "catalog", O_RDONLY, 0);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	ssize_t n = fk_pread_all(fd, buf, cap, 0);
	fk_sys.close(fd);
	int r = n < 0 ? (int)n : fk_catalog_decode(s, buf, (size_t)n);
	free(buf);
	return r;
}

/* ---- batches ---- */

void fk_batch_init(struct fk_batch *b)
{
	memset(b, 0, sizeof(*b));
}

void fk_batch_release(struct fk_batch *b)
{
	free(b->ops);
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void fk_batch_reset(struct fk_batch *b)
{
	b->nr_ops = 0;
	b->data_len = 0;
}

static int batch_add(struct fk_batch *b, uint8_t kind, uint32_t table,
		     uint64_t row, uint32_t off, const void *data,
		     uint32_t len, void *result)
{
	if (!b || (len && !data))
		return -EINVAL;
	if (b->nr_ops == b->alloc_ops) {
		size_t n = b->alloc_ops ? b->alloc_ops * 2 : 8;
		void *p = realloc(b->ops, n * sizeof(struct batch_op));
		if (!p)
			return -ENOMEM;
		b->ops = p;
		b->alloc_ops = n;
	}
	if (b->data_len + len > b->data_alloc) {
		size_t n = b->data_alloc ? b->data_alloc * 2 : 256;
		while (n < b->data_len + len)
			n *= 2;
		void *p = realloc(b->data, n);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->data_alloc = n;
	}
	struct batch_op *op = (struct batch_op *)b->ops + b->nr_ops++;
	op->kind = kind;
	op->table = table;
	op->row = row;
	op->off = off;
	op->len = len;
	op->data_off = b->data_len;
	op->ext = NULL;
	op->result = result;
	if (len)
		memcpy((uint8_t *)b->data + b->data_len, data, len);
	b->data_len += len;
	return 0;
}

int fk_batch_set(struct fk_batch *b, uint32_t table, uint64_t row,
		 uint32_t offset, const void *data, uint32_t len)
{
	if (!len)
		return -EINVAL;
	return batch_add(b, FK_OP_SET, table, row, offset, data, len, NULL);
}

int fk_batch_add_i64(struct fk_batch *b, uint32_t table, uint64_t row,
		     uint32_t offset, int64_t delta, int64_t *result)
{
	return batch_add(b, FK_OP_ADD_I64, table, row, offset, &delta, 8,
			 result);
}

int fk_batch_append(struct fk_batch *b, uint32_t table, const void *row,
		    uint64_t *rowno)
{
	/* The batch does not know the table's row size, so the row is
	 * read at commit (documented: it must stay valid until then). */
	if (!row)
		return -EINVAL;
	int r = batch_add(b, FK_OP_APPEND, table, 0, 0, row, 0, rowno);
	if (r)
		return r;
	struct batch_op *op = (struct batch_op *)b->ops + b->nr_ops - 1;
	op->len = UINT32_MAX;
	op->ext = row;
	return 0;
}

int fk_batch_append_copy(struct fk_batch *b, uint32_t table, const void *row,
			 uint32_t row_bytes, uint64_t *rowno)
{
	if (!row_bytes)
		return -EINVAL;
	return batch_add(b, FK_OP_APPEND, table, 0, 0, row, row_bytes, rowno);
}

/* ---- tables ---- */

static struct fk_table *get_table(struct fk_store *s, uint32_t id)
{
	if (id == 0 || id > FK_STORE_MAX_TABLES)
		return NULL;
	struct fk_table *t = &s->tables[id];
	return __atomic_load_n(&t->id, __ATOMIC_ACQUIRE) ? t : NULL;
}

int fk_store_create_table(struct fk_store *s, const char *name,
			  uint32_t row_bytes, uint32_t *id)
{
	if (!name || !*name || strlen(name) >= 64 || !row_bytes ||
	    row_bytes > FK_PAGE_SIZE - FK_PAGE_HDR)
		return -EINVAL;
	int r = stopped(s);
	if (r)
		return r;
	pthread_mutex_lock(&s->cat_mu);
	uint32_t free_id = 0;
	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		if (s->tables[i].id && !strcmp(s->tables[i].name, name)) {
			pthread_mutex_unlock(&s->cat_mu);
			return -EEXIST;
		}
		if (!s->tables[i].id && !free_id)
			free_id = i;
	}
	if (!free_id) {
		pthread_mutex_unlock(&s->cat_mu);
		return -ENOSPC;
	}
	struct fk_table *t = &s->tables[free_id];
	table_setup(t, 0, name, row_bytes);
	t->id = free_id;		/* for write_catalog */
	r = write_catalog(s);
	if (r) {
		t->id = 0;
	} else {
		__atomic_store_n(&t->rows, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&t->id, free_id, __ATOMIC_RELEASE);
		if (id)
			*id = free_id;
	}
	pthread_mutex_unlock(&s->cat_mu);
	return r;
}

int fk_store_table(struct fk_store *s, const char *name, uint32_t *id,
		   uint32_t *row_bytes)
{
	int r = -ENOENT;
	if (!name)
		return -EINVAL;
	pthread_mutex_lock(&s->cat_mu);
	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		if (s->tables[i].id && !strcmp(s->tables[i].name, name)) {
			if (id)
				*id = i;
			if (row_bytes)
				*row_bytes = s->tables[i].row_bytes;
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&s->cat_mu);
	return r;
}

int fk_store_table_rows(struct fk_store *s, uint32_t id, uint64_t *rows)
{
	struct fk_table *t = get_table(s, id);
	if (!t)
		return -ENOENT;
	*rows = __atomic_load_n(&t->rows, __ATOMIC_ACQUIRE);
	return 0;
}

/* ---- reading ---- */

static uint8_t *row_ptr(struct fk_table *t, uint8_t *page, uint64_t row)
{
	return page + FK_PAGE_HDR + (row % t->rows_per_page) * t->row_bytes;
}

int fk_store_read(struct fk_store *s, uint32_t table, uint64_t row, void *buf)
{
	int r = stopped(s);
	if (r)
		return r;
	struct fk_table *t = get_table(s, table);
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
	memcpy(buf, row_ptr(t, b->page, row), t->row_bytes);
	pthread_rwlock_unlock(&b->content);
	fk_buf_unpin(s, idx);
	return 0;
}

/* ---- applying ops (commit and redo) ---- */

static void apply_op(struct fk_table *t, uint8_t *page,
		     const struct fk_wal_op *op, int64_t *result)
{
	uint8_t *p = row_ptr(t, page, op->row);
	if (op->kind == FK_OP_ADD_I64) {
		int64_t v, d;
		memcpy(&v, p + op->off, 8);
		memcpy(&d, op->data, 8);
		v = (int64_t)((uint64_t)v + (uint64_t)d);
		memcpy(p + op->off, &v, 8);
		if (result)
			*result = v;
		return;
	}
	memcpy(p + op->off, op->data, op->len);
	if (op->kind == FK_OP_APPEND) {
		uint16_t nrows;
		uint32_t slot = (uint32_t)(op->row % t->rows_per_page) + 1;
		memcpy(&nrows, page + 20, 2);
		if (slot > nrows) {
			nrows = (uint16_t)slot;
			memcpy(page + 20, &nrows, 2);
		}
	}
}

/* ---- commit ---- */

struct cpage {
	uint32_t table, block;
	int idx;
	int fpi;
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

static const void *op_data(const struct fk_batch *b, const struct batch_op *op)
{
	if (op->ext)
		return op->ext;
	return (const uint8_t *)b->data + op->data_off;
}

int fk_store_commit(struct fk_store *s, struct fk_batch *b, uint64_t *lsnp)
{
	struct batch_op *ops = b ? b->ops : NULL;
	size_t nops = b ? b->nr_ops : 0;
	uint64_t next_row[FK_STORE_MAX_TABLES + 1];
	uint8_t appends[FK_STORE_MAX_TABLES + 1];
	struct cpage *pg = NULL;
	int *lockord = NULL;
	struct fk_iovec *iov = NULL;
	uint8_t *opbuf = NULL;
	size_t npg = 0, oplen = 8;
	int r = stopped(s);

	if (r)
		return r;
	if (!b)
		return -EINVAL;
	if (!nops) {
		if (lsnp)
			*lsnp = __atomic_load_n(&s->insert_lsn,
						__ATOMIC_ACQUIRE);
		return 0;
	}
	/* Validate. */
	memset(appends, 0, sizeof(appends));
	for (size_t i = 0; i < nops; i++) {
		struct batch_op *op = &ops[i];
		struct fk_table *t = get_table(s, op->table);
		if (!t)
			return -ENOENT;
		if (op->kind == FK_OP_APPEND) {
			if (!op->ext && op->len != t->row_bytes)
				return -EINVAL;
			appends[op->table] = 1;
			oplen += fk_wal_op_size(t->row_bytes);
			continue;
		}
		if ((uint64_t)op->off + op->len > t->row_bytes)
			return -EINVAL;
		if (op->row >= __atomic_load_n(&t->rows, __ATOMIC_ACQUIRE))
			return -ERANGE;
		oplen += fk_wal_op_size(op->len);
	}
	pg = malloc(nops * sizeof(*pg));
	lockord = malloc(nops * sizeof(*lockord));
	opbuf = malloc(oplen);
	iov = malloc((2 * nops + 2) * sizeof(*iov));
	if (!pg || !lockord || !opbuf || !iov) {
		r = -ENOMEM;
		goto out_free;
	}

	/* S3: append rows, under the append mutexes in table order. */
	for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
		if (appends[t]) {
			pthread_mutex_lock(&s->tables[t].append_mu);
			next_row[t] = __atomic_load_n(&s->tables[t].rows,
						      __ATOMIC_ACQUIRE);
		}
	for (size_t i = 0; i < nops; i++)
		if (ops[i].kind == FK_OP_APPEND)
			ops[i].row = next_row[ops[i].table]++;

	/* Pages, sorted and distinct. */
	for (size_t i = 0; i < nops; i++) {
		struct fk_table *t = &s->tables[ops[i].table];
		pg[npg].table = ops[i].table;
		pg[npg].block = (uint32_t)(ops[i].row / t->rows_per_page);
		pg[npg].idx = -1;
		pg[npg].fpi = 0;
		npg++;
	}
	qsort(pg, npg, sizeof(*pg), cmp_cpage);
	size_t k = 0;
	for (size_t i = 0; i < npg; i++)
		if (!k || cmp_cpage(&pg[k - 1], &pg[i]))
			pg[k++] = pg[i];
	npg = k;

	/* Pin, then lock in order (S1). */
	for (size_t i = 0; i < npg; i++) {
		int idx = fk_buf_pin(s, pg[i].table, pg[i].block, FK_PIN_READ);
		if (idx < 0) {
			r = idx;
			goto out_unpin;
		}
		pg[i].idx = idx;
	}
	/* Lock in buffer-index order: a total order on the lock objects
	 * themselves that never changes (pinned buffers keep their page),
	 * so it is deadlock-free like PostgreSQL's ordered page locks and
	 * also visibly so to ThreadSanitizer. */
	for (size_t i = 0; i < npg; i++)
		lockord[i] = pg[i].idx;
	qsort(lockord, npg, sizeof(*lockord), cmp_int);
	for (size_t i = 0; i < npg; i++)
		pthread_rwlock_wrlock(&s->bufs[lockord[i]].content);

	/* The ops part of the payload. */
	size_t at = 8;
	for (size_t i = 0; i < nops; i++) {
		struct batch_op *op = &ops[i];
		uint32_t len = op->kind == FK_OP_APPEND ?
			s->tables[op->table].row_bytes : op->len;
		at += fk_wal_put_op(opbuf + at, op->kind, op->table, op->row,
				    op->off, len, op_data(b, op));
	}

	uint64_t lsn, end;
	size_t nfpi;
	for (;;) {
		/* S2: decide full-page images against the redo LSN seen
		 * now; recheck it under the insert lock. */
		uint64_t redo = __atomic_load_n(&s->redo_lsn, __ATOMIC_ACQUIRE);
		int n = 1;
		size_t total = FK_WAL_REC_HDR + oplen;
		nfpi = 0;
		for (size_t i = 0; i < npg; i++) {
			pg[i].fpi = s->o.full_page_writes &&
				    PAGE_LSN(s->bufs[pg[i].idx].page) <= redo;
			if (pg[i].fpi)
				nfpi++;
		}
		fk_wal_put_commit_hdr(opbuf, (uint32_t)nfpi, (uint32_t)nops);
		uint32_t crc = fk_crc32c(0, opbuf, 8);
		iov[0].base = opbuf;
		iov[0].len = 8;
		/* FPI headers live in pg[] itself: table, block, as the
		 * format wants (two u32, then the page). */
		for (size_t i = 0; i < npg; i++) {
			if (!pg[i].fpi)
				continue;
			iov[n].base = &pg[i].table;
			iov[n].len = 8;
			crc = fk_crc32c(crc, &pg[i].table, 8);
			n++;
			iov[n].base = s->bufs[pg[i].idx].page;
			iov[n].len = FK_PAGE_SIZE;
			crc = fk_crc32c(crc, iov[n].base, FK_PAGE_SIZE);
			n++;
			total += FK_WAL_FPI_BYTES;
		}
		iov[n].base = opbuf + 8;
		iov[n].len = oplen - 8;
		crc = fk_crc32c(crc, opbuf + 8, oplen - 8);
		n++;
		if (total > max_record(s)) {
			r = -E2BIG;
			goto out_unlock;
		}

		pthread_mutex_lock(&s->insert_mu);
		r = stopped(s);
		if (r) {
			pthread_mutex_unlock(&s->insert_mu);
			goto out_unlock;
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
				goto out_unlock;
			continue;
		}
		for (size_t i = 0; i < npg; i++)
			fk_buf_mark_dirty(s, pg[i].idx);
		lsn = fk_wal_insert(s, FK_WAL_COMMIT, iov, n, crc, &end);
		for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
			if (appends[t])
				__atomic_store_n(&s->tables[t].rows,
						 next_row[t],
						 __ATOMIC_RELEASE);
		pthread_mutex_unlock(&s->insert_mu);
		break;
	}

	/* Apply, set page LSNs (S1). */
	for (size_t i = 0; i < nops; i++) {
		struct batch_op *op = &ops[i];
		struct fk_table *t = &s->tables[op->table];
		struct fk_wal_op wop = {
			.kind = op->kind,
			.table = op->table,
			.row = op->row,
			.off = op->off,
			.len = op->kind == FK_OP_APPEND ? t->row_bytes
							: op->len,
			.data = op_data(b, op),
		};
		int j = find_cpage(pg, npg, op->table,
				   (uint32_t)(op->row / t->rows_per_page));
		apply_op(t, s->bufs[pg[j].idx].page, &wop,
			 op->kind == FK_OP_ADD_I64 ? op->result : NULL);
		if (op->kind == FK_OP_APPEND && op->result)
			*(uint64_t *)op->result = op->row;
	}
	/* The page LSN is the record's END, as in PostgreSQL: flushing
	 * the WAL up to it covers the whole record (WAL rule). */
	(void)lsn;
	for (size_t i = 0; i < npg; i++)
		PAGE_LSN(s->bufs[pg[i].idx].page) = end;
	__atomic_add_fetch(&s->st.commits, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->st.wal_fpi, nfpi, __ATOMIC_RELAXED);
	r = 0;

out_unlock:
	for (size_t i = 0; i < npg; i++)
		pthread_rwlock_unlock(&s->bufs[pg[i].idx].content);
out_unpin:
	for (size_t i = 0; i < npg; i++)
		if (pg[i].idx >= 0)
			fk_buf_unpin(s, pg[i].idx);
	for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
		if (appends[t])
			pthread_mutex_unlock(&s->tables[t].append_mu);
out_free:
	free(pg);
	free(lockord);
	free(opbuf);
	free(iov);
	if (r)
		return r;

	/* Checkpoint by WAL volume (PostgreSQL's XLogCheckpointNeeded). */
	uint64_t redo = __atomic_load_n(&s->redo_lsn, __ATOMIC_ACQUIRE);
	if (end - redo >= s->wal_trigger_bytes &&
	    __atomic_exchange_n(&s->wal_nudged_redo, redo,
				__ATOMIC_ACQ_REL) != redo)
		fk_ckpt_wal_nudge(s);

	/* Group commit. */
	r = fk_wal_flush(s, end);
	if (!r && lsnp)
		*lsnp = end;
	return r;
}

int fk_store_checkpoint(struct fk_store *s)
{
	int r = stopped(s);
	if (r)
		return r;
	return fk_ckpt_request_wait(s, CKPT_REQ_IMMEDIATE);
}

/* ---- bulk load ---- */

int fk_store_bulk_load(struct fk_store *s, uint32_t table, uint64_t nrows,
		       void (*fill)(void *arg, uint64_t rowno, void *row),
		       void *arg)
{
	enum { CHUNK = 32 };	/* pages per write */
	struct fk_table *t = get_table(s, table);
	struct fk_writeback wb;
	uint8_t *buf = NULL;
	int r = stopped(s);

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
				fill(arg, row, row_ptr(t, p, row));
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
			     mib(npages * FK_PAGE_SIZE), fk_strerror(r),
			     mib(written), facts);
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

/* ---- table segments at open ---- */

/*
 * Per table, the rows whose pages were durable when the last checkpoint
 * completed (@rows): the control file's count less the rows appended
 * between its redo point and its CHECKPOINT record, whose pages that
 * checkpoint need not have written.  Appends are logged in row order
 * (S3: the append mutex is held across the insert), so that is the
 * first row appended in that WAL range; bulk-loaded rows are fsynced
 * before they are counted.  Reads the WAL from the redo LSN to the
 * checkpoint record with recover()'s reader @rd, which keeps the last
 * segment loaded: replay reads that range again, from memory when it is
 * within one segment (no second fdatasync and read).  Returns 0, or
 * -errno of a WAL read; if the WAL ends before the checkpoint record,
 * every bound is 0 and recover() reports the missing record.
 */
static int durable_rows(struct fk_store *s, const struct fk_control *ctl,
			struct fk_wal_reader *rd, uint64_t *rows)
{
	const struct fk_wal_rec *rec;
	uint64_t pos = ctl->redo_lsn, prev = 0, next;
	int r;
	for (uint32_t i = 0; i <= FK_STORE_MAX_TABLES; i++)
		rows[i] = i && s->tables[i].id ? ctl->rows[i] : 0;
	while ((r = fk_wal_read(rd, &pos, prev, &rec, &next)) > 0 &&
	       pos < ctl->checkpoint_lsn) {
		struct fk_wal_cursor c;
		struct fk_wal_op op;
		if (rec->type == FK_WAL_COMMIT &&
		    fk_wal_commit_begin(&c, (const uint8_t *)rec + FK_WAL_REC_HDR,
					rec->total_len - FK_WAL_REC_HDR) == 0)
			while (fk_wal_commit_next_op(&c, &op) > 0)
				if (op.kind == FK_OP_APPEND &&
				    op.table <= FK_STORE_MAX_TABLES &&
				    op.row < rows[op.table])
					rows[op.table] = op.row;
		prev = pos;
		pos = next;
	}
	if (r < 0)
		return r;
	if (r == 0 || pos != ctl->checkpoint_lsn)
		memset(rows, 0, (FK_STORE_MAX_TABLES + 1) * sizeof(*rows));
	return 0;
}

/*
 * S7: before recovery, every table segment the control file relies on
 * is there.  A segment holding rows the control file counts was created
 * (and base/ fsynced) when the first of those rows was pinned, before it
 * was counted, so it must exist; a segment holding rows whose pages were
 * durable at the checkpoint (durable_rows) must be at least long enough
 * for them.  A segment missing or short is a file lost or truncated from
 * outside: -FK_ECORRUPT with a log line naming it, never a new empty
 * file whose pages read as "never written".  Segments past those (new
 * after the checkpoint) may be missing: recovery creates them from the
 * WAL.  Sets each table's rows_durable.  Returns 0, -FK_ECORRUPT, or
 * -errno.
 */
static int check_segments(struct fk_store *s, const struct fk_control *ctl,
			  struct fk_wal_reader *rd)
{
	uint64_t durable[FK_STORE_MAX_TABLES + 1];
	int r = durable_rows(s, ctl, rd, durable);
	if (r)
		return r;
	for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++) {
		struct fk_table *tb = &s->tables[t];
		if (!tb->id || !tb->rows_per_page || !ctl->rows[t])
			continue;
		tb->rows_durable = durable[t];
		uint64_t rpp = tb->rows_per_page, bps = s->blocks_per_seg;
		uint64_t blocks = ctl->rows[t] / rpp + !!(ctl->rows[t] % rpp);
		uint64_t dblocks = durable[t] / rpp + !!(durable[t] % rpp);
		/* Stops at the first missing one: a corrupt row count
		 * never makes this loop long. */
		for (uint64_t seg = 0; seg <= (blocks - 1) / bps; seg++) {
			char name[48];
			struct stat st;
			snprintf(name, sizeof(name), "%u.%llu", t,
				 (unsigned long long)seg);
			r = fk_sys.fstatat(s->basefd, name, &st, 0);
			if (r == -ENOENT) {
				fk_store_log(s, "table segment base/%s is "
					     "missing: the control file "
					     "counts rows of table '%s' in "
					     "it (%llu rows)", name, tb->name,
					     (unsigned long long)ctl->rows[t]);
				return -FK_ECORRUPT;
			}
			if (r)
				return r;
			uint64_t first = seg * bps, need = 0;
			if (dblocks > first)
				need = (dblocks - first < bps ? dblocks - first
							       : bps) *
				       FK_PAGE_SIZE;
			if ((uint64_t)st.st_size < need) {
				fk_store_log(s, "table segment base/%s is %llu "
					     "bytes, shorter than the %llu "
					     "bytes of rows of table '%s' the "
					     "last checkpoint made durable in "
					     "it", name,
					     (unsigned long long)st.st_size,
					     (unsigned long long)need,
					     tb->name);
				return -FK_ECORRUPT;
			}
		}
	}
	return 0;
}

/* ---- recovery ---- */

/* Replay COMMIT @rec, which ends at @lsn (page LSNs are record ends). */
static int replay_commit(struct fk_store *s, const struct fk_wal_rec *rec,
			 uint64_t lsn)
{
	/* Recovery runs before any other thread of the store exists, so
	 * pins suffice: no content locks. */
	struct fk_wal_cursor c;
	struct cpage pgs[64];
	size_t npg = 0;
	int r = fk_wal_commit_begin(&c, (const uint8_t *)rec + FK_WAL_REC_HDR,
				    rec->total_len - FK_WAL_REC_HDR);
	if (r)
		return r;
	/* Full-page images always restore their page (S5). */
	for (;;) {
		uint32_t table, block;
		const uint8_t *img;
		r = fk_wal_commit_next_fpi(&c, &table, &block, &img);
		if (r <= 0)
			break;
		if (!get_table(s, table) || npg == 64)
			return -FK_ECORRUPT;
		int idx = fk_buf_pin(s, table, block, FK_PIN_NOREAD);
		if (idx < 0)
			return idx;
		memcpy(s->bufs[idx].page, img, FK_PAGE_SIZE);
		pgs[npg++] = (struct cpage){table, block, idx, 1};
	}
	struct fk_wal_op op;
	while (r >= 0 && (r = fk_wal_commit_next_op(&c, &op)) > 0) {
		struct fk_table *t = get_table(s, op.table);
		/* A row whose block number does not fit 32 bits cannot
		 * come from a commit; truncated, it would change another
		 * page (found by tests/fuzz/fuzz-recovery.c). */
		if (!t || (uint64_t)op.off + op.len > t->row_bytes ||
		    (op.kind == FK_OP_APPEND && op.len != t->row_bytes) ||
		    op.row / t->rows_per_page > UINT32_MAX) {
			r = -FK_ECORRUPT;
			break;
		}
		uint32_t block = (uint32_t)(op.row / t->rows_per_page);
		size_t j;
		for (j = 0; j < npg; j++)
			if (pgs[j].table == op.table && pgs[j].block == block)
				break;
		if (j == npg) {
			if (npg == 64) {
				r = -FK_ECORRUPT;
				break;
			}
			int idx = fk_buf_pin(s, op.table, block, FK_PIN_READ);
			if (idx < 0) {
				r = idx;
				break;
			}
				/* Decided once per page per record. */
			pgs[npg++] = (struct cpage){
				op.table, block, idx,
				PAGE_LSN(s->bufs[idx].page) < lsn};
		}
		if (pgs[j].fpi)
			apply_op(t, s->bufs[pgs[j].idx].page, &op, NULL);
		if (op.kind == FK_OP_APPEND && op.row >= t->rows)
			t->rows = op.row + 1;
	}
	for (size_t j = 0; j < npg; j++) {
		/* Dirty even when the change was there already (page LSN
		 * not older): the page may have come from the page cache,
		 * where a failed write-back left it clean but not on disk,
		 * and with full_page_writes off no image restores it.  The
		 * end-of-recovery checkpoint then writes it, so the redo
		 * pointer never passes a change that is only cached
		 * (test-eio-checkpoint). */
		if (r >= 0)
			fk_buf_mark_dirty(s, pgs[j].idx);
		if (pgs[j].fpi && r >= 0)
			PAGE_LSN(s->bufs[pgs[j].idx].page) = lsn;
		fk_buf_unpin(s, pgs[j].idx);
	}
	return r < 0 ? r : 0;
}

static int recover(struct fk_store *s, const struct fk_control *ctl)
{
	struct fk_wal_reader rd;
	const struct fk_wal_rec *rec;
	uint64_t pos = ctl->redo_lsn, prev = 0, next, records = 0;
	uint64_t t0 = fk_now_ns();
	int crashed = ctl->state != STATE_CLEAN, saw_ckpt = 0, r;

	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		struct fk_table *t = &s->tables[i];
		t->rows = t->id ? ctl->rows[i] : 0;
		/* Block numbers are 32 bits (as in replay_commit). */
		if (t->id && t->rows &&
		    (t->rows - 1) / t->rows_per_page > UINT32_MAX)
			return -FK_ECORRUPT;
	}
	s->redo_lsn = ctl->redo_lsn;
	s->ckpt_lsn = ctl->checkpoint_lsn;
	s->recovering = 1;
	if (crashed)
		fk_store_log(s, "database was not shut down cleanly; redo "
			     "starts at %llu",
			     (unsigned long long)ctl->redo_lsn);
	fk_wal_reader_init(&rd, s);
	/* S7: no lost or truncated segment silently recreated. */
	r = check_segments(s, ctl, &rd);
	if (r) {
		fk_wal_reader_release(&rd);
		goto out;
	}
	while ((r = fk_wal_read(&rd, &pos, prev, &rec, &next)) > 0) {
		if (pos == ctl->checkpoint_lsn) {
			struct fk_wal_ckpt ck;
			if (rec->type != FK_WAL_CHECKPOINT ||
			    rec->total_len != FK_WAL_REC_HDR + sizeof(ck)) {
				r = -FK_ECORRUPT;
				break;
			}
			memcpy(&ck, (const uint8_t *)rec + FK_WAL_REC_HDR,
			       sizeof(ck));
			if (ck.redo_lsn != ctl->redo_lsn) {
				r = -FK_ECORRUPT;
				break;
			}
			saw_ckpt = 1;
			s->last_ckpt_end_lsn = next;
		}
		if (rec->type == FK_WAL_COMMIT) {
			r = replay_commit(s, rec, next);
			if (r)
				break;
			records++;
		}
		prev = pos;
		pos = next;
	}
	fk_wal_reader_release(&rd);
	if (r < 0)
		goto out;
	if (!saw_ckpt) {
		fk_store_log(s, "checkpoint record at %llu not found",
			     (unsigned long long)ctl->checkpoint_lsn);
		r = -FK_ECORRUPT;
		goto out;
	}
	/* Cut the WAL at the first invalid record. */
	if (crashed || records) {
		r = fk_wal_cut(s, pos, prev);
	} else {
		s->insert_lsn = s->write_lsn = s->flush_lsn = pos;
		s->prev_lsn = prev;
	}
	if (r)
		goto out;
	s->recovering = 0;	/* the WAL is ours again: flushes are real */
	s->st.recovery_records = records;
	if (crashed || records) {
		fk_store_log(s, "redo done at %llu: %llu records replayed",
			     (unsigned long long)pos,
			     (unsigned long long)records);
		r = fk_checkpoint_run(s, "end-of-recovery", CKPT_REQ_IMMEDIATE,
				      0);
	} else {
		struct fk_wal_ckpt ck;
		memset(&ck, 0, sizeof(ck));
		ck.redo_lsn = ctl->redo_lsn;
		memcpy(ck.rows, ctl->rows, sizeof(ck.rows));
		r = fk_store_write_control(s, 0, &ck);
	}
out:
	s->recovering = 0;
	s->st.recovery_ms = (fk_now_ns() - t0) / 1000000u;
	if (crashed)
		fk_store_log(s, "recovery %s in %llu ms",
			     r ? "failed" : "complete",
			     (unsigned long long)s->st.recovery_ms);
	return r;
}

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
	fk_writeback_release(&s->wb);
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
	    o->sync_io < FK_SYNC_IO_AUTO ||
	    o->sync_io > FK_SYNC_IO_SEQUENTIAL ||
	    o->sync_jobs > FK_FSYNC_BATCH_MAX_QUEUE_DEPTH ||
	    o->create_mode < FK_STORE_OPEN_EXISTING ||
	    o->create_mode > FK_STORE_CREATE_NEW)
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
	if (s->o.checkpoint_sync_spread_ms == FK_SYNC_SPREAD_AUTO)
		s->o.checkpoint_sync_spread_ms = s->o.checkpoint_timeout_ms / 10;
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
	} else if ((r = read_control(s, &ctl))) {
		fk_store_log(s, "control file: %s", fk_strerror(r));
		goto fail;
	} else {
		existing = 1;
		/* The geometry is fixed when the store is created. */
		s->wal_seg_bytes = ctl.wal_seg_bytes;
		s->seg_bytes = ctl.seg_bytes;
	}
	s->blocks_per_seg = (uint32_t)(s->seg_bytes / FK_PAGE_SIZE);
	s->wal_trigger_bytes = (uint64_t)((double)s->o.max_wal_size_bytes /
					  (1.0 +
					   s->o.checkpoint_completion_target));
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
		int pfd = fk_sys.openat(s->dirfd, "..",
					O_RDONLY | O_DIRECTORY, 0);
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
	fk_writeback_init(&s->wb, s->o.checkpoint_flush_after_bytes);
	r = fk_wal_scan_dir(s);
	if (r)
		goto fail;
	if (fresh) {
		r = write_catalog(s);
		if (r)
			goto fail;
		/* The WAL starts at segment 1 (LSN 0 means "none"). */
		s->insert_lsn = s->write_lsn = s->flush_lsn =
			s->wal_seg_bytes;
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
		r = read_catalog(s);
		if (r == -ENOENT)
			fk_store_log(s, "catalog file 'catalog' is missing");
		if (!r)
			r = recover(s, &ctl);
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

void fk_store_get_stats(struct fk_store *s, struct fk_store_stats *st)
{
	st->commits = __atomic_load_n(&s->st.commits, __ATOMIC_RELAXED);
	st->wal_bytes = __atomic_load_n(&s->st.wal_bytes, __ATOMIC_RELAXED);
	st->wal_flushes = __atomic_load_n(&s->st.wal_flushes,
					  __ATOMIC_RELAXED);
	st->wal_fpi = __atomic_load_n(&s->st.wal_fpi, __ATOMIC_RELAXED);
	st->wal_write_ns = __atomic_load_n(&s->st.wal_write_ns,
					   __ATOMIC_RELAXED);
	st->wal_sync_ns = __atomic_load_n(&s->st.wal_sync_ns,
					  __ATOMIC_RELAXED);
	st->checkpoints = __atomic_load_n(&s->st.checkpoints,
					  __ATOMIC_RELAXED);
	st->buffers_checkpoint = __atomic_load_n(&s->st.buffers_checkpoint,
						 __ATOMIC_RELAXED);
	st->buffers_backend = __atomic_load_n(&s->st.buffers_backend,
					      __ATOMIC_RELAXED);
	st->backend_fsyncs = __atomic_load_n(&s->st.backend_fsyncs,
					     __ATOMIC_RELAXED);
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
