/* SPDX-License-Identifier: MIT */
/*
 * store-int.h - private declarations shared by the page store's modules.
 *
 * The store is split into, from the bottom up (a module calls only the
 * ones listed before it: no circle):
 *   crc32c.c        fk_crc32c(): CRC-32C (Castagnoli), SSE4.2 or tables
 *   compress.c      full-page image compression (lz4, zstd)
 *   format.c        page, WAL record, segment header and commit payload
 *                   formats, applying an op to a page (pure functions,
 *                   unit-tested on their own)
 *   batch.c         write batches (struct fk_batch): no store state
 *   core.c          the log, the sticky stop, the space facts, the
 *                   table segment descriptors
 *   wal.c           the WAL at run time: insertion into the WAL buffer,
 *                   group-commit flush, segment files, the recovery reader
 *   control.c       the control file, the catalog and its tables
 *   bufpool.c       the buffer pool: mapping, pins, clock sweep, write-out
 *   checkpointer.c  the checkpointer thread and the checkpoint procedure
 *   recovery.c      recovery at open: segment checks, redo, WAL cut
 *   store.c         the face: options, open/close, read, commit, bulk
 *                   load, statistics, destroy
 *
 * Lock order (a thread only takes locks further down this list while
 * holding ones above it):
 *   1. table append mutexes, ascending table id (commit)
 *   2. buffer content locks, ascending buffer index (a pinned buffer
 *      keeps its page, so this is a fixed total order)
 *   3. insert_mu (WAL insert lock)
 *   4. seg_mu (WAL segment files)
 *   5. flush_mu (group commit), files_mu, partition mutexes, buffer
 *      header mutexes, ckpt_mu - leaf locks, never held across I/O
 *      except seg_mu (segment creation) and files_mu (open).
 *
 * All on-disk integers are in host byte order; the formats are defined
 * for little-endian hosts only (checked at compile time).
 */
#ifndef FK_STORE_INT_H
#define FK_STORE_INT_H

#include "flushkit.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the page store's on-disk formats are little-endian"
#endif

/* ---- CRC-32C ---- */

/* CRC-32C (Castagnoli, reflected, init/xorout ~0) of @len bytes,
 * continuing from @crc (0 to start).  Thread-safe, no I/O. */
uint32_t fk_crc32c(uint32_t crc, const void *data, size_t len);
/* Tests: 1 forces the table method, 0 restores detection. */
void fk_crc32c_force_sw(int sw);

/* ---- full-page image compression (compress.c) ---- */

/* 1 if this build has @method (enum fk_wal_compression; OFF: always). */
int fk_fpi_method_available(int method);
/* Compress the page @page by @method into @out (room for FK_PAGE_SIZE
 * - 1 bytes): the compressed length, or 0 when it would not be smaller
 * (or the method is OFF or missing).  No I/O. */
size_t fk_fpi_compress(int method, const uint8_t *page, uint8_t *out);
/* Decompress @len bytes at @in into the page @page: 0, -FK_ECORRUPT (not
 * exactly one page), -ENOTSUP (method missing from this build),
 * -ENOMEM.  No I/O. */
int fk_fpi_decompress(int method, const uint8_t *in, size_t len, uint8_t *page);

/* ---- pages ---- */

#define FK_PAGE_HDR                                                            \
	24u /* lsn u64, crc u32, table u32, block u32,                         \
	     * nrows u16, flags u16 */
#define PAGE_LSN(p) (*(uint64_t *)(void *)(p))

void fk_page_init(uint8_t *page, uint32_t table, uint32_t block);
/* Set the page CRC (over the page with the crc field zero). */
void fk_page_set_crc(uint8_t *page);
/* 0 if the page is valid for (table, block), or all zero (then it is
 * initialized); -FK_ECORRUPT otherwise. */
int fk_page_verify(uint8_t *page, uint32_t table, uint32_t block);

/* ---- WAL formats (format.c) ---- */

#define FK_WAL_MAGIC 0x4c574b46u /* "FKWL" */
#define FK_WAL_VERSION 1u
#define FK_WAL_SEG_HDR 32u
#define FK_WAL_REC_HDR 32u
/* In 64 bits: a u32 length near 4 GiB (a CRC-valid but corrupt op
 * length) must not wrap to 0 (found by tests/fuzz/fuzz-wal-record.c). */
#define FK_WAL_ALIGN(x) (((uint64_t)(x) + 7u) & ~(uint64_t)7u)

enum fk_wal_type {
	FK_WAL_PAD = 1,	       /* filler to the end of a segment */
	FK_WAL_COMMIT = 2,     /* one write batch */
	FK_WAL_CHECKPOINT = 3, /* payload: struct fk_wal_ckpt */
};

enum fk_wal_op_kind {
	FK_OP_SET = 1,
	FK_OP_ADD_I64 = 2,
	FK_OP_APPEND = 3,
};

/* Record header, 32 bytes, at an 8-byte aligned LSN. */
struct fk_wal_rec {
	uint32_t total_len; /* header + payload, unpadded */
	uint8_t type;
	uint8_t flags;
	uint16_t reserved;
	uint64_t lsn;	   /* where this record starts */
	uint64_t prev_lsn; /* where the previous record starts */
	uint32_t crc;	   /* CRC-32C of payload, then header (crc=0) */
	uint32_t reserved2;
};

/* Segment header, 32 bytes, at offset 0 of every segment. */
struct fk_wal_seg {
	uint32_t magic;
	uint32_t version;
	uint64_t segno;
	uint64_t start_lsn; /* segno * seg_bytes */
	uint32_t seg_bytes;
	uint32_t crc; /* CRC-32C of the first 28 bytes */
};

#define FK_STORE_MAX_TABLES 64u

struct fk_wal_ckpt {
	uint64_t redo_lsn;
	uint64_t rows[FK_STORE_MAX_TABLES + 1]; /* index = table id */
};

/* One op of a commit payload as decoded. */
struct fk_wal_op {
	uint8_t kind;
	uint32_t table;
	uint64_t row;
	uint32_t off, len;
	const uint8_t *data; /* len bytes (ADD_I64: 8-byte delta) */
};

/* Commit payload: u32 nr_fpi, u32 nr_ops, then nr_fpi x {u32 table,
 * u32 block, page[8192]}, then nr_ops x {u8 kind, u8 pad[3], u32 table,
 * u64 row, u32 off, u32 len, data[len] padded to 8}.
 * With FK_WAL_FPI_PACKED set in nr_fpi (the store's wal_compression is
 * not off; its other bits count the images), each image is instead
 * {u32 table, u32 block, u8 method, u8 pad[3], u32 stored_len,
 * stored[stored_len] padded to 8}: method an enum fk_wal_compression,
 * OFF with the page as it is (stored_len 8192), else the page
 * compressed (stored_len < 8192).  The record's CRC covers the stored
 * bytes; a compressed image must decompress to exactly one page whose
 * header names (table, block). */
#define FK_WAL_FPI_BYTES (8u + FK_PAGE_SIZE)
#define FK_WAL_FPI_PACKED 0x80000000u
#define FK_WAL_FPI_PACKED_HDR 16u
#define FK_WAL_FPI_PACKED_MAX (FK_WAL_FPI_PACKED_HDR + FK_PAGE_SIZE)
#define FK_WAL_OP_HDR 24u

void fk_wal_seg_fill(struct fk_wal_seg *h, uint64_t segno, uint64_t seg_bytes);
int fk_wal_seg_check(const void *buf, uint64_t segno, uint64_t seg_bytes);

/* CRC of a payload, to be finished by fk_wal_rec_fill. */
static inline uint32_t fk_wal_payload_crc(const void *payload, size_t len)
{
	return fk_crc32c(0, payload, len);
}
void fk_wal_rec_fill(struct fk_wal_rec *h, uint32_t total_len, uint8_t type,
		     uint64_t lsn, uint64_t prev_lsn, uint32_t payload_crc);
/*
 * Validate the record at @buf (@avail bytes readable): length sane and
 * within @avail, LSN equal to @lsn, prev LSN equal to @prev (unless
 * @prev is 0), CRC ok.  Returns total_len or -FK_ECORRUPT.
 */
long fk_wal_rec_check(const void *buf, size_t avail, uint64_t lsn,
		      uint64_t prev);

struct fk_wal_cursor {
	const uint8_t *p, *end;
	uint32_t nr_fpi, nr_ops, i_fpi, i_op;
	int packed; /* FK_WAL_FPI_PACKED */
	uint8_t img[FK_PAGE_SIZE] __attribute__((aligned(16)));
	/* a decompressed image */
};

int fk_wal_commit_begin(struct fk_wal_cursor *c, const void *payload,
			size_t len);
/* 1 and the next FPI (*@page valid until the next call: in the payload,
 * or decompressed into c->img), 0 when none is left, -FK_ECORRUPT, or
 * -ENOTSUP (compressed by a method this build lacks). */
int fk_wal_commit_next_fpi(struct fk_wal_cursor *c, uint32_t *table,
			   uint32_t *block, const uint8_t **page);
/* 1 and the next op (after all FPIs), 0 at end, -FK_ECORRUPT. */
int fk_wal_commit_next_op(struct fk_wal_cursor *c, struct fk_wal_op *op);
/* Encoders: return bytes written at @out. */
size_t fk_wal_put_commit_hdr(uint8_t *out, uint32_t nr_fpi, uint32_t nr_ops);
size_t fk_wal_put_fpi(uint8_t *out, uint32_t table, uint32_t block,
		      const uint8_t *page);
/* A packed image (FK_WAL_FPI_PACKED) of @page, compressed by @method
 * (enum fk_wal_compression) if that makes it smaller; @out has room
 * for FK_WAL_FPI_PACKED_MAX bytes. */
size_t fk_wal_put_fpi_packed(uint8_t *out, uint32_t table, uint32_t block,
			     int method, const uint8_t *page);
size_t fk_wal_put_op(uint8_t *out, uint8_t kind, uint32_t table, uint64_t row,
		     uint32_t off, uint32_t len, const void *data);
static inline size_t fk_wal_op_size(uint32_t len)
{
	return FK_WAL_OP_HDR + (size_t)FK_WAL_ALIGN(len);
}

/* ---- condensed failure lines (core.c) ---- */

/*
 * After the kernel's printk_ratelimit and its "N callbacks suppressed"
 * line: an operation that fails again and again (a checkpoint retried
 * every second on a full file system, the WAL segment every commit and
 * the preallocation need) logs its first failure in full (its own
 * line, with the path and errno), then again only when the errno or
 * the operation changes, or when forced (a caller waits for that very
 * result); the failures in between are counted, and at most once per
 * @interval_ns a line says how many there were: "SUBJECT failed N more
 * times in T s: ERR (WHAT)".  The first success after failures logs
 * "SUBJECT ok again after N failures in T s (the last: ERR (WHAT))".
 * Pure (the clock is passed in): the lines to log are handed back, so
 * a caller can decide under its lock and log after releasing it.  The
 * caller serialises the calls on one struct.
 */
#define FK_LOG_REPEAT_NS (60ull * 1000000000ull)
#define FK_LOG_LINE 512u
struct fk_log_limit {
	const char *subject;  /* "checkpoint", "WAL segment creation" */
	uint64_t interval_ns; /* between summary lines; 0: the default */
	uint64_t failures;    /* in a row, since the last success */
	uint64_t suppressed;  /* failures not logged since the last line */
	uint64_t first_ns;    /* the first failure in the row */
	uint64_t line_ns;     /* the last line logged */
	int err;	      /* the last failure's -errno */
	char what[128];	      /* the last failure's operation and path */
};
/* One failure (-errno @err of the operation @what, at @now_ns; @line
 * its full log line): puts the lines to log into @out (0, 1 or 2 of
 * them, in order) and returns how many.  @force: @line is logged
 * (after a summary of the ones not logged) whatever the interval. */
int fk_log_limit_failed(struct fk_log_limit *l, uint64_t now_ns, int err,
			const char *what, int force, const char *line,
			char out[2][FK_LOG_LINE]);
/* A success at @now_ns: 1 and the "ok again" line in @out after
 * failures (then the row is over), else 0. */
int fk_log_limit_ok(struct fk_log_limit *l, uint64_t now_ns,
		    char out[FK_LOG_LINE]);

/* ---- the store ---- */

struct fk_table {
	uint32_t id; /* 0: slot unused */
	uint32_t row_bytes;
	uint32_t rows_per_page;
	char name[64];
	uint64_t rows;	       /* next row number; __atomic access */
	uint64_t rows_durable; /* rows whose pages were durable at the
				* last checkpoint (set at open, S7) */
	pthread_mutex_t append_mu;
	int *seg_fds; /* files_mu; -1 = not open */
	size_t nr_seg_fds;
};

enum {
	BUF_VALID = 1u,
	BUF_DIRTY = 2u,
	BUF_JUST_DIRTIED = 4u, /* dirtied while a write was in flight */
	BUF_IO = 8u,	       /* read or write in progress */
};

struct fk_buf {
	pthread_mutex_t mu; /* header: tag, flags, refcount, usage */
	pthread_cond_t cv;  /* BUF_IO cleared */
	pthread_rwlock_t content;
	uint32_t table; /* tag; 0 = unused */
	uint32_t block;
	uint32_t flags;
	uint32_t refcount;
	uint32_t usage;
	uint32_t hash_next; /* buffer index + 1, 0 = end; partition */
	uint8_t *page;
};

#define FK_BUF_PARTITIONS 128u

/* Who writes a buffer: decides the fsync-request fallback. */
enum fk_writer {
	FK_WRITER_BACKEND = 0,
	FK_WRITER_CHECKPOINTER = 1,
	FK_WRITER_RECOVERY = 2,
};

enum {
	CKPT_REQ_REQUESTED = 1, /* somebody waits for it */
	CKPT_REQ_WAL = 2,
	CKPT_REQ_IMMEDIATE = 4,
};

struct fk_store {
	int dirfd, basefd, waldirfd;
	/* Hold the data directory's locks (S8): the OFD lock of its lock
	 * file, and a flock of the directory itself; closed last. */
	int lockfd, dirlockfd;
	struct fk_store_opts o;
	uint64_t seg_bytes; /* table segment */
	uint32_t blocks_per_seg;
	uint64_t wal_seg_bytes;
	/* Checkpoint after this much WAL: max_wal/(1+target), lowered
	 * (never raised) to what the WAL's room on its file system
	 * allows once a segment creation met ENOSPC (wal.c, W11);
	 * __atomic. */
	uint64_t wal_trigger_bytes;
	int error; /* sticky; __atomic */

	/* catalog */
	pthread_mutex_t cat_mu;
	struct fk_table tables[FK_STORE_MAX_TABLES + 1];
	pthread_mutex_t files_mu;

	/* buffer pool */
	struct fk_buf *bufs;
	uint32_t nbuf;
	uint8_t *pages;
	uint32_t *hash_heads;
	uint32_t nr_buckets;
	pthread_mutex_t part_mu[FK_BUF_PARTITIONS];
	uint32_t clock_hand; /* __atomic */

	/* WAL */
	pthread_mutex_t insert_mu;
	uint64_t insert_lsn;	    /* __atomic: all bytes before copied */
	uint64_t prev_lsn;	    /* insert_mu */
	uint64_t redo_lsn;	    /* set under insert_mu; __atomic */
	uint64_t wal_nudged_redo;   /* WAL-volume request sent for it */
	uint64_t space_nudged_redo; /* out-of-space request sent for it */
	uint8_t *walbuf;
	uint64_t walbuf_size;
	pthread_mutex_t flush_mu;
	pthread_cond_t flush_cv;
	int flusher_active;
	uint64_t write_lsn, flush_lsn; /* flush_mu; __atomic reads */
	int wal_wfd;		       /* active flusher only */
	uint64_t wal_wseg;
	pthread_mutex_t seg_mu;
	uint64_t wal_oldest_seg, wal_highest_seg; /* seg_mu; __atomic */
	struct fk_log_limit seg_log; /* failed segment creations; seg_mu */

	/* checkpointer */
	pthread_t ckpt_thread;
	int ckpt_thread_running;
	pthread_mutex_t ckpt_mu;
	pthread_cond_t ckpt_cv; /* CLOCK_MONOTONIC */
	int ckpt_flags;		/* CKPT_REQ_*, ckpt_mu */
	int ckpt_shutdown;
	uint64_t ckpt_started, ckpt_done; /* numbered by start */
	int ckpt_result;		  /* of ckpt_done */
	uint64_t last_ckpt_ns;
	/* fk_checkpoint_run: its start (fk_now_ns) while one runs, else 0;
	 * atomic (fk_store_checkpoint_started_ns reads it) */
	uint64_t ckpt_running_ns;
	/* WAL preallocation (checkpointer.c): a committer entering a
	 * segment past prealloc_asked (__atomic) sets ckpt_prealloc
	 * (ckpt_mu) and wakes the checkpointer; the rest is the
	 * checkpointer's own (C1): segments entered in the last window
	 * (prealloc_rate) since prealloc_t0_ns at prealloc_seg0, and the
	 * highest segment it last wanted (__atomic, for tests). */
	uint64_t prealloc_asked;
	int ckpt_prealloc;
	uint64_t prealloc_t0_ns, prealloc_seg0, prealloc_rate;
	uint64_t prealloc_want;
	uint64_t last_ckpt_end_lsn;   /* end of the last checkpoint record */
	uint64_t ckpt_lsn;	      /* last checkpoint record */
	struct fk_log_limit ckpt_log; /* failed checkpoints' lines (C1) */
	struct fk_fsyncq *fsq;
	/* The checkpointer's writeback hints: set up by fk_ckpt_init
	 * (checkpoint_flush_after_bytes, fixed for the handle's life),
	 * used only by checkpoints, which hand it to fk_buf_flush. */
	struct fk_writeback ckpt_wb;
	struct fk_fsync_batch *fsb; /* sync phase; checkpoints only (C1) */
	uint32_t sync_jobs;	    /* resolved queue depth */

	/* stats, __atomic */
	struct fk_store_stats st;
	int recovering;
};

/* Pages: a row's bytes in its page; @page holds block row / rows_per_page. */
static inline uint8_t *fk_row_ptr(const struct fk_table *t, uint8_t *page,
				  uint64_t row)
{
	return page + FK_PAGE_HDR + (row % t->rows_per_page) * t->row_bytes;
}
/* format.c: apply @op to @page (its row's page); an ADD_I64 stores the
 * sum in *@result (may be NULL); an APPEND raises the page's row count.
 * Pure; used by commit and by redo alike. */
void fk_page_apply_op(const struct fk_table *t, uint8_t *page,
		      const struct fk_wal_op *op, int64_t *result);

/* batch.c: one op of a struct fk_batch (b->ops). */
struct fk_batch_op {
	uint8_t kind; /* enum fk_wal_op_kind */
	uint32_t table;
	uint64_t row;	   /* APPEND: assigned at commit */
	uint32_t off, len; /* fk_batch_append: len UINT32_MAX */
	size_t data_off;   /* in the batch's data, unless ext */
	const void *ext;   /* fk_batch_append: the caller's row */
	void *result;	   /* int64_t * (ADD) or uint64_t * (APPEND) */
};

/* core.c */
void fk_store_log(struct fk_store *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Record a sticky error (first one wins) and wake every waiter. */
void fk_store_stop(struct fk_store *s, int err, const char *what);
/* The space facts an ENOSPC log line gives, into @buf: the file
 * system's free and total space (fstatfs of the data directory) and the
 * WAL's size in segments. */
void fk_store_space_facts(struct fk_store *s, char *buf, size_t len);
static inline int fk_store_error(struct fk_store *s)
{
	return __atomic_load_n(&s->error, __ATOMIC_ACQUIRE);
}
/* -FK_ESTOPPED once the store is stopped (S4), else 0. */
static inline int fk_store_stopped(struct fk_store *s)
{
	return fk_store_error(s) ? -FK_ESTOPPED : 0;
}
static inline double fk_mib(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}
/* The descriptor of table segment file (table, seg), opened on first
 * use (O_CREAT).  Returns fd or -errno.  Never closed until close. */
int fk_store_seg_fd(struct fk_store *s, uint32_t table, uint32_t seg);
static inline uint64_t fk_file_id(uint32_t table, uint32_t seg)
{
	return ((uint64_t)table << 32) | seg;
}

/* control.c */
/* The control file (576 bytes; docs/design.md). */
enum { FK_CONTROL_CLEAN = 1, FK_CONTROL_PRODUCTION = 2 };
struct fk_control {
	uint32_t magic, version;
	uint32_t state, pad; /* FK_CONTROL_* */
	uint64_t checkpoint_lsn, redo_lsn;
	uint64_t wal_seg_bytes, seg_bytes;
	uint64_t rows[FK_STORE_MAX_TABLES + 1];
	uint32_t crc, pad2;
};
/* Decode and check a whole control file of @len bytes (magic, version,
 * CRC, state, geometry).  0 or -FK_ECORRUPT.  Pure; fuzzed. */
int fk_control_decode(struct fk_control *c, const void *buf, size_t len);
/* Read and decode DIR/control.  0, -FK_ECORRUPT or -errno. */
int fk_control_read(struct fk_store *s, struct fk_control *c);
/* Replace the control file durably with the checkpoint @ck (s->ckpt_lsn
 * as its record), state clean if @clean.  0 or -errno (a failed fsync
 * stops the store; ENOSPC does not, S6). */
int fk_store_write_control(struct fk_store *s, int clean,
			   const struct fk_wal_ckpt *ck);
/* Decode and check a whole catalog file of @len bytes into
 * s->tables (only the tables it names are touched).  0 or
 * -FK_ECORRUPT.  No I/O; fuzzed. */
int fk_catalog_decode(struct fk_store *s, const void *buf, size_t len);
/* Replace the catalog durably with s->tables (under cat_mu, or single-
 * threaded); read it at open.  0 or -errno (read: or -FK_ECORRUPT). */
int fk_catalog_write(struct fk_store *s);
int fk_catalog_read(struct fk_store *s);
/* The table @id, or NULL if there is none. */
static inline struct fk_table *fk_store_get_table(struct fk_store *s,
						  uint32_t id)
{
	if (id == 0 || id > FK_STORE_MAX_TABLES)
		return NULL;
	struct fk_table *t = &s->tables[id];
	return __atomic_load_n(&t->id, __ATOMIC_ACQUIRE) ? t : NULL;
}

/* bufpool.c */
int fk_bufpool_init(struct fk_store *s);
void fk_bufpool_destroy(struct fk_store *s);
enum { FK_PIN_READ = 0, FK_PIN_NOREAD = 1 };
/* Pin page (table, block); reads it in (FK_PIN_READ) or leaves it for
 * the caller to overwrite (FK_PIN_NOREAD, zeroed if not cached).
 * Returns buffer index >= 0 or -errno / -FK_ECORRUPT / -ENOBUFS. */
int fk_buf_pin(struct fk_store *s, uint32_t table, uint32_t block, int mode);
void fk_buf_unpin(struct fk_store *s, int idx);
/* Set BUF_DIRTY|BUF_JUST_DIRTIED; caller holds the content lock
 * exclusively. */
void fk_buf_mark_dirty(struct fk_store *s, int idx);
/* Write buffer @idx if dirty (WAL rule first) as @writer (enum
 * fk_writer); the written range is noted in @wb for writeback hints
 * (NULL: none).  Caller holds a pin and no content lock.  Returns 1
 * written, 0 clean, -errno. */
int fk_buf_flush(struct fk_store *s, int idx, int writer,
		 struct fk_writeback *wb);
/* For the checkpointer: append (table, block, idx) of dirty buffers. */
struct fk_dirty {
	uint32_t table, block, idx;
};
size_t fk_bufpool_collect_dirty(struct fk_store *s, struct fk_dirty *out);
/* Pin buffer @idx if it still holds (table, block); 0 or -ENOENT. */
int fk_buf_pin_if(struct fk_store *s, int idx, uint32_t table, uint32_t block);
/* Drop all cached pages of @table (bulk load); none may be pinned. */
void fk_bufpool_forget_table(struct fk_store *s, uint32_t table);

/* wal.c */
int fk_wal_init(struct fk_store *s);
void fk_wal_destroy(struct fk_store *s);
/* Make WAL durable up to @upto.  Returns 0 or the sticky error. */
int fk_wal_flush(struct fk_store *s, uint64_t upto);
/* Under insert_mu: will a record of @len fit without a new segment?
 * Returns 0, or the segment number that must be created first. */
uint64_t fk_wal_need_segment(struct fk_store *s, size_t len);
/* Create segments up to @segno (zero-filled, fsynced).  Takes seg_mu. */
int fk_wal_ensure_segment(struct fk_store *s, uint64_t segno);
/*
 * Under insert_mu: copy a record (header + @nparts payload parts) into
 * the WAL buffer at the insert position.  @payload_crc covers the parts.
 * Returns the record's LSN (its end in *@end).
 */
struct fk_iovec {
	const void *base;
	size_t len;
};
uint64_t fk_wal_insert(struct fk_store *s, uint8_t type,
		       const struct fk_iovec *parts, int nparts,
		       uint32_t payload_crc, uint64_t *end);
/* Recycle or remove segments wholly before @redo_lsn.  Returns 0, or
 * the failed fsync of wal/ (the store is then stopped: sticky). */
int fk_wal_recycle(struct fk_store *s, uint64_t redo_lsn, uint64_t *recycled,
		   uint64_t *removed);
/* Scan wal/ for existing segments (open). */
int fk_wal_scan_dir(struct fk_store *s);
/* Open-time: zero the tail of the WAL after @end and invalidate later
 * segments; set insert/write/flush positions to @end. */
int fk_wal_cut(struct fk_store *s, uint64_t end, uint64_t prev_lsn);

struct fk_wal_reader {
	struct fk_store *s;
	uint64_t segno; /* loaded segment, UINT64_MAX: none */
	uint8_t *seg;
	int seg_ok;
};
void fk_wal_reader_init(struct fk_wal_reader *r, struct fk_store *s);
void fk_wal_reader_release(struct fk_wal_reader *r);
/*
 * Read the record at or after *@pos (skipping segment headers and
 * segment tails too short for a record).  On success returns 1, sets
 * *@rec (valid until the next call), *@pos to the record's LSN and
 * *@next past it.  Returns 0 at the end of valid WAL (*@pos is then the
 * cut point), or -errno on an I/O error.
 */
int fk_wal_read(struct fk_wal_reader *r, uint64_t *pos, uint64_t prev,
		const struct fk_wal_rec **rec, uint64_t *next);

/* checkpointer.c */
/* Open-time: the checkpointer's own state (its writeback hints, at
 * opts.checkpoint_flush_after_bytes); released by fk_ckpt_release. */
void fk_ckpt_init(struct fk_store *s);
void fk_ckpt_release(struct fk_store *s);
int fk_ckpt_start_thread(struct fk_store *s);
void fk_ckpt_stop_thread(struct fk_store *s);
/* Run one checkpoint in the calling thread. */
int fk_checkpoint_run(struct fk_store *s, const char *reason, int flags,
		      int shutdown);
/* Ask for a checkpoint and wait for one that started after the request. */
int fk_ckpt_request_wait(struct fk_store *s, int flags);
/* Nudge the checkpointer (WAL volume); never blocks. */
void fk_ckpt_wal_nudge(struct fk_store *s);
void fk_ckpt_space_nudge(struct fk_store *s);
/* A commit's record ends at @end: when that is in a segment no commit
 * has entered yet, wake the checkpointer to preallocate WAL segments
 * ahead (once per segment; cheap otherwise).  Any thread, no lock
 * held. */
void fk_ckpt_wal_advanced(struct fk_store *s, uint64_t end);

/* recovery.c */
/* Open-time recovery from the control file @ctl (read, with the
 * catalog): S5, S7.  0, -FK_ECORRUPT or -errno. */
int fk_store_recover(struct fk_store *s, const struct fk_control *ctl);

#endif
