// SPDX-License-Identifier: MIT
/*
 * recovery.c - the page store's recovery at open, split from the face
 * (store.c) as PostgreSQL split xlogrecovery.c from xlog.c: from the
 * control file's redo LSN, check that every table segment the control
 * file relies on is there (S7), replay every valid COMMIT record (S5),
 * cut the WAL at the first invalid one and make the result durable by
 * an end-of-recovery checkpoint (or, after a clean shutdown with
 * nothing to replay, by marking the control file in production).
 *
 * Runs in the opening thread before the checkpointer thread exists, so
 * pins suffice: no content locks.
 *
 * Interface routine: fk_store_recover (called by fk_store_open).
 */
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* A page a replayed record touches; @apply: its ops are applied (a
 * full-page image restored it, or its LSN is older than the record). */
struct rpage {
	uint32_t table, block;
	int idx;
	int apply;
};

/* ---- table segments at open ---- */

/*
 * Per table, the rows whose pages were durable when the last checkpoint
 * completed (@rows): the control file's count less the rows appended
 * between its redo point and its CHECKPOINT record, whose pages that
 * checkpoint need not have written.  Appends are logged in row order
 * (S3: the append mutex is held across the insert), so that is the
 * first row appended in that WAL range; bulk-loaded rows are fsynced
 * before they are counted.  Reads the WAL from the redo LSN to the
 * checkpoint record with fk_store_recover()'s reader @rd, which keeps the last
 * segment loaded: replay reads that range again, from memory when it is
 * within one segment (no second fdatasync and read).  Returns 0, or
 * -errno of a WAL read; if the WAL ends before the checkpoint record,
 * every bound is 0 and fk_store_recover() reports the missing record.
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
		    fk_wal_commit_begin(&c,
					(const uint8_t *)rec + FK_WAL_REC_HDR,
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
				fk_store_log(s,
					     "table segment base/%s is "
					     "missing: the control file "
					     "counts rows of table '%s' in "
					     "it (%llu rows)",
					     name, tb->name,
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
				fk_store_log(
				    s,
				    "table segment base/%s is %llu "
				    "bytes, shorter than the %llu "
				    "bytes of rows of table '%s' the "
				    "last checkpoint made durable in "
				    "it",
				    name, (unsigned long long)st.st_size,
				    (unsigned long long)need, tb->name);
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
	struct rpage pgs[64];
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
		if (!fk_store_get_table(s, table) || npg == 64)
			return -FK_ECORRUPT;
		int idx = fk_buf_pin(s, table, block, FK_PIN_NOREAD);
		if (idx < 0)
			return idx;
		memcpy(s->bufs[idx].page, img, FK_PAGE_SIZE);
		pgs[npg++] = (struct rpage){table, block, idx, 1};
	}
	struct fk_wal_op op;
	while (r >= 0 && (r = fk_wal_commit_next_op(&c, &op)) > 0) {
		struct fk_table *t = fk_store_get_table(s, op.table);
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
			pgs[npg++] =
			    (struct rpage){op.table, block, idx,
					   PAGE_LSN(s->bufs[idx].page) < lsn};
		}
		if (pgs[j].apply)
			fk_page_apply_op(t, s->bufs[pgs[j].idx].page, &op,
					 NULL);
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
		if (pgs[j].apply && r >= 0)
			PAGE_LSN(s->bufs[pgs[j].idx].page) = lsn;
		fk_buf_unpin(s, pgs[j].idx);
	}
	return r < 0 ? r : 0;
}

/*
 * The end-of-recovery checkpoint met a full file system (@err: -ENOSPC
 * or -EDQUOT), typically because the WAL itself filled it: the pages it
 * replayed need blocks the file system no longer has, and the WAL
 * cannot be recycled before a checkpoint completes.  Failing the open
 * would leave a store no open can ever recover without space the user
 * may not be able to free (nothing but the store on the file system).
 * Nothing requires that checkpoint before the store runs: C8 makes a
 * failed checkpoint harmless (redo pointer, control file and WAL
 * unchanged, the replayed pages dirty in the buffer pool), the control
 * file still says "in production", so a crash before a later checkpoint
 * replays the same WAL again (S5: idempotent).  So the open succeeds:
 * reads see every replayed commit; a commit that needs a WAL segment
 * fails with -ENOSPC (W8) until space is freed; the checkpointer
 * retries the checkpoint (C8), and once one completes the WAL before
 * its redo point is recycled.  Returns 0.
 */
static int defer_checkpoint(struct fk_store *s, int err)
{
	char facts[320];
	fk_store_space_facts(s, facts, sizeof(facts));
	fk_store_log(s,
		     "end-of-recovery checkpoint deferred: %s; the store "
		     "opens with every replayed commit (the WAL keeps them "
		     "until a checkpoint completes); commits that need a "
		     "new WAL segment fail until space is freed: %s",
		     fk_strerror(err), facts);
	s->ckpt_flags |= CKPT_REQ_WAL | CKPT_REQ_IMMEDIATE;
	return 0;
}

int fk_store_recover(struct fk_store *s, const struct fk_control *ctl)
{
	struct fk_wal_reader rd;
	const struct fk_wal_rec *rec;
	uint64_t pos = ctl->redo_lsn, prev = 0, next, records = 0;
	uint64_t t0 = fk_now_ns();
	int crashed = ctl->state != FK_CONTROL_CLEAN, saw_ckpt = 0, r;

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
		fk_store_log(s,
			     "database was not shut down cleanly; redo "
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
			if (r) {
				fk_store_log(
				    s,
				    "redo of the COMMIT record at %llu "
				    "failed: %s%s",
				    (unsigned long long)pos, fk_strerror(r),
				    r == -ENOTSUP ? " (a full-page image "
						    "compressed by a method "
						    "this build lacks)"
						  : "");
				break;
			}
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
	s->recovering = 0; /* the WAL is ours again: flushes are real */
	s->st.recovery_records = records;
	if (crashed || records) {
		fk_store_log(s, "redo done at %llu: %llu records replayed",
			     (unsigned long long)pos,
			     (unsigned long long)records);
		r = fk_checkpoint_run(s, "end-of-recovery", CKPT_REQ_IMMEDIATE,
				      0);
		if ((r == -ENOSPC || r == -EDQUOT) && !fk_store_error(s))
			r = defer_checkpoint(s, r);
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
