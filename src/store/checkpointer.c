// SPDX-License-Identifier: MIT
/*
 * checkpointer.c - the checkpointer thread and the checkpoint procedure,
 * after PostgreSQL's checkpointer.c (CheckpointerMain, CreateCheckPoint,
 * BufferSync, CheckpointWriteDelay, ProcessSyncRequests).
 *
 * A checkpoint: (1) note the redo LSN under the WAL insert lock (from
 * then on a page's first change logs a full-page image); (2) collect the
 * dirty buffers, sort them by (table, segment, block) if
 * checkpoint_sorted; (3) write each one still dirty (WAL rule first),
 * with sync_file_range writeback hints every checkpoint_flush_after
 * bytes, paced by a struct fk_pacer to finish at completion_target of
 * the interval by time and by WAL volume; (4) the sync phase: absorb and
 * compact the fsync request queue and fsync each file once, with up to
 * sync_jobs fsyncs in flight (struct fk_fsync_batch: io_uring, a thread
 * pool or one at a time, opts.sync_io); back-to-back as one batch, or
 * spread over checkpoint_sync_spread_ms (bounded by the rest of the
 * interval and by the WAL left before the next checkpoint is due) in
 * paced steps of sync_jobs files (one file for the sequential backend,
 * PostgreSQL's way); (5) insert the CHECKPOINT
 * record and flush the WAL; (6) write the control file (temporary,
 * fsync, rename, fsync directory); (7) recycle WAL before the redo LSN.
 *
 * Owns its writeback hints (s->ckpt_wb): set up once at open by
 * fk_ckpt_init with opts.checkpoint_flush_after_bytes, handed to
 * fk_buf_flush for each page a checkpoint writes, issued at the end of
 * the write phase; nobody else notes into it or changes its setting.
 *
 * Interface routines: fk_ckpt_init, fk_ckpt_release,
 * fk_ckpt_start_thread, fk_ckpt_stop_thread, fk_checkpoint_run,
 * fk_ckpt_request_wait, fk_ckpt_wal_nudge, fk_ckpt_space_nudge,
 * fk_ckpt_wal_advanced.
 *
 * Invariants:
 *  C1. Checkpoints run one at a time: in the checkpointer thread while
 *      it runs, else in the thread that opens or closes the store.
 *  C2. Every buffer dirty at the redo point is written (or found clean)
 *      before the sync phase, and every file written before the sync
 *      phase has an fsync request (B5) that the sync phase absorbs.
 *  C3. The CHECKPOINT record is inserted only after every data file
 *      fsync succeeded, and the control file names it only after the
 *      WAL up to its end is durable; so the control file's redo LSN
 *      never passes a change that is not on disk.
 *  C4. A failed data-file fsync fails the checkpoint, stops the store
 *      (sticky), and leaves the control file and the WAL untouched.
 *  C5. Pacing sleeps only between buffers or files, holding no lock,
 *      and stops when a shutdown or an immediate checkpoint is asked.
 *  C6. WAL segments are recycled only after the control file with the
 *      new redo LSN is durable.
 *  C7. In the sync phase each file of the round is fsynced at most once
 *      (fk_fsyncq_take hands each id out once per round), every fsync
 *      of a step has completed before the step's results are recorded,
 *      and a file leaves the pending set only on success (C9 included):
 *      so the CHECKPOINT record (C3) follows every file's fsync.
 *  C8. Running out of space is not a durability failure: an ENOSPC
 *      writing a page (a block of a sparse or growing segment), making
 *      the WAL segment for the CHECKPOINT record, or writing the
 *      control file's temporary copy fails the checkpoint (redo pointer
 *      and WAL unchanged, the pages stay dirty) without stopping the
 *      store; the next checkpoint does it all again.  Any failed fsync
 *      on the way (data file, WAL, new segment, control file,
 *      directory) stops the store (C4).  Its log line names what failed
 *      (operation and path); retries that fail the same way are
 *      counted, not logged (s->ckpt_log, core.c's condensed failure
 *      lines), and the first success after them says so.
 *  C9. The sync phase fsyncs a segment through the descriptor the
 *      store keeps open, then checks that base/T.S still names that
 *      inode: a segment removed (or renamed) behind the store's back
 *      fails the sync with -ENOENT (-ESTALE if another file took its
 *      name) and stops the store, instead of a checkpoint that
 *      "succeeds" with the data in an unlinked inode.
 */
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>

#define PACE_STEP_NS 100000000ull /* sleep at most 100 ms at a time */

static int cmp_dirty(const void *a, const void *b)
{
	const struct fk_dirty *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return 0;
}

/*
 * WAL segment preallocation: keep segments made ahead of the insert
 * position, so committers never create one themselves (a zero-fill and
 * fsync of a whole segment while holding page locks and the append
 * mutexes every other committer waits for).  At least WAL_AHEAD; when
 * the WAL grows faster (the burst of full-page images after a redo
 * point), as many as it filled in the last PREALLOC_WINDOW_NS, bounded
 * by half the WAL a checkpoint may take and by the free space (never
 * more than a quarter of it: a full file system keeps the old bound).
 * Committers ask for it as they enter a segment (fk_ckpt_wal_advanced),
 * so the checkpointer does not wait for its next poll.
 */
#define WAL_AHEAD (FK_STORE_WAL_MIN_SEGMENTS - 1)
#define PREALLOC_WINDOW_NS 1000000000ull

/* The segments to keep ahead of the insert segment @cur, now @now. */
static uint64_t prealloc_ahead(struct fk_store *s, uint64_t cur, uint64_t now)
{
	if (!s->prealloc_t0_ns || cur < s->prealloc_seg0) {
		s->prealloc_t0_ns = now;
		s->prealloc_seg0 = cur;
	}
	if (now - s->prealloc_t0_ns >= PREALLOC_WINDOW_NS) {
		/* Segments entered in the window just ended. */
		s->prealloc_rate = cur - s->prealloc_seg0;
		s->prealloc_t0_ns = now;
		s->prealloc_seg0 = cur;
	}
	uint64_t extra = s->prealloc_rate;
	if (cur - s->prealloc_seg0 > extra)
		extra = cur - s->prealloc_seg0; /* this window so far */
	uint64_t cap =
	    __atomic_load_n(&s->wal_trigger_bytes, __ATOMIC_ACQUIRE) /
	    s->wal_seg_bytes / 2;
	if (extra > cap)
		extra = cap;
	if (extra) {
		struct statfs sf;
		uint64_t avail = 0;
		if (!fk_sys.fstatfs(s->waldirfd, &sf))
			avail = (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize;
		uint64_t room = avail / 4 / s->wal_seg_bytes;
		if (extra > room)
			extra = room;
	}
	return WAL_AHEAD + extra;
}

/* Make the segments prealloc_ahead asks for.  0 or the creation error. */
static int wal_prealloc(struct fk_store *s)
{
	if (fk_store_error(s))
		return 0;
	uint64_t cur = __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE) /
		       s->wal_seg_bytes;
	uint64_t want = cur + prealloc_ahead(s, cur, fk_now_ns());
	__atomic_store_n(&s->prealloc_want, want, __ATOMIC_RELEASE);
	if (__atomic_load_n(&s->wal_highest_seg, __ATOMIC_ACQUIRE) >= want)
		return 0;
	return fk_wal_ensure_segment(s, want);
}

void fk_ckpt_wal_advanced(struct fk_store *s, uint64_t end)
{
	uint64_t seg = end / s->wal_seg_bytes;
	uint64_t asked = __atomic_load_n(&s->prealloc_asked, __ATOMIC_ACQUIRE);
	if (seg <= asked || !s->ckpt_thread_running)
		return;
	if (!__atomic_compare_exchange_n(&s->prealloc_asked, &asked, seg, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return; /* another committer asks for it */
	pthread_mutex_lock(&s->ckpt_mu);
	s->ckpt_prealloc = 1;
	pthread_cond_broadcast(&s->ckpt_cv);
	pthread_mutex_unlock(&s->ckpt_mu);
}

/* Sleep up to @ns on the checkpointer's condition variable (a request
 * or shutdown wakes it), preallocating WAL first.  Returns nonzero if
 * pacing should stop. */
static int pace_sleep(struct fk_store *s, uint64_t ns)
{
	struct timespec ts;
	int stop;
	wal_prealloc(s);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t t =
	    (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + ns;
	ts.tv_sec = (time_t)(t / 1000000000ull);
	ts.tv_nsec = (long)(t % 1000000000ull);
	pthread_mutex_lock(&s->ckpt_mu);
	s->ckpt_prealloc = 0;
	stop = s->ckpt_shutdown ||
	       (s->ckpt_flags & (CKPT_REQ_IMMEDIATE | CKPT_REQ_REQUESTED));
	if (!stop) {
		pthread_cond_timedwait(&s->ckpt_cv, &s->ckpt_mu, &ts);
		stop =
		    s->ckpt_shutdown ||
		    (s->ckpt_flags & (CKPT_REQ_IMMEDIATE | CKPT_REQ_REQUESTED));
	}
	pthread_mutex_unlock(&s->ckpt_mu);
	return stop;
}

/* Sleep until the pacer says the fraction @done of the sync phase is
 * on time; *@paced drops to 0 when pacing must stop (C5). */
static void sync_pace(struct fk_store *s, struct fk_pacer *pacer, double done,
		      int *paced)
{
	while (*paced) {
		uint64_t ns = fk_pacer_delay_ns(
		    pacer, done,
		    __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE),
		    PACE_STEP_NS);
		if (!ns)
			break;
		if (pace_sleep(s, ns))
			*paced = 0;
	}
}

/*
 * C9: after the fsync of segment @id through its kept descriptor @fd,
 * does base/T.S still name that inode?  0, -ENOENT (removed), -ESTALE
 * (another file has the name), or the fstat error; logged.
 */
static int still_named(struct fk_store *s, uint64_t id, int fd)
{
	struct stat a, b;
	char name[32];
	snprintf(name, sizeof(name), "%u.%u", (uint32_t)(id >> 32),
		 (uint32_t)id);
	int r = fk_sys.fstat(fd, &a);
	if (!r)
		r = fk_sys.fstatat(s->basefd, name, &b, AT_SYMLINK_NOFOLLOW);
	if (!r && (a.st_dev != b.st_dev || a.st_ino != b.st_ino))
		r = -ESTALE;
	if (r)
		fk_store_log(s,
			     "base/%s was removed or renamed while its "
			     "fsync was pending: %s",
			     name, fk_strerror(r));
	return r;
}

/*
 * The sync phase (4): fsync every file of the fsync request queue's
 * round once, through the store's struct fk_fsync_batch (C7).
 * Back-to-back (not @paced): the whole round is one batch, sync_jobs
 * fsyncs in flight.  Spread: steps of sync_jobs files (one with the
 * sequential backend, as PostgreSQL's one fsync at a time), each step
 * one batch, and before each step but the first, a sleep until the
 * pacer says the fraction of files done is on time.
 * Fills @ci's files_synced, longest/average_sync_ms and sync_io.
 * Returns 0 or the first error: a failed fsync (sticky in the queue, C4)
 * or -ENOMEM / a segment's open error (then not every file is synced).
 */
static int sync_phase(struct fk_store *s, struct fk_pacer *pacer, int paced,
		      struct fk_checkpoint_info *ci)
{
	uint64_t *ids = NULL;
	int *res = NULL;
	struct fk_fsync_req *reqs = NULL;
	uint64_t files = 0, total_ns = 0, longest_ns = 0;
	int r = fk_fsyncq_begin(s->fsq);
	if (r < 0)
		return r;
	size_t total = (size_t)r, done = 0;
	int seq = fk_fsync_batch_backend(s->fsb) == FK_SYNC_IO_SEQUENTIAL;
	size_t step = !paced ? total : seq ? 1 : s->sync_jobs;
	if (step == 0)
		step = 1;
	ids = malloc(step * sizeof(*ids));
	res = malloc(step * sizeof(*res));
	reqs = malloc(step * sizeof(*reqs));
	r = 0;
	if (!ids || !res || !reqs) {
		r = -ENOMEM;
		goto out;
	}
	for (;;) {
		if (done && done < total)
			sync_pace(s, pacer, (double)done / (double)total,
				  &paced);
		long n = fk_fsyncq_take(s->fsq, ids, step);
		if (n <= 0) {
			r = (int)n;
			break;
		}
		/* The store never drops a table or a segment file, so it
		 * never needs fk_fsyncq_forget: an id of an unknown table
		 * is a bug, and its -ENOENT fails the round (fsyncq: only a
		 * forgotten id may be gone). */
		size_t nreq = 0;
		for (size_t k = 0; k < (size_t)n; k++) {
			uint32_t table = (uint32_t)(ids[k] >> 32);
			uint32_t seg = (uint32_t)ids[k];
			res[k] = -ENOENT;
			if (table == 0 || table > FK_STORE_MAX_TABLES ||
			    !s->tables[table].id)
				continue;
			int fd = fk_store_seg_fd(s, table, seg);
			if (fd < 0) {
				res[k] = fd;
				fk_store_log(s, "open of base/%u.%u failed: %s",
					     table, seg, fk_strerror(fd));
				continue;
			}
			res[k] = 0;
			reqs[nreq] = (struct fk_fsync_req){
			    .fd = fd,
			    .op = FK_FSYNC_OP_FSYNC,
			    .cookie = k,
			};
			nreq++;
		}
		int br = nreq ? fk_fsync_batch_run(s->fsb, reqs, nreq) : 0;
		/* Complete what has a result; a request neither issued nor
		 * failed (the run had no memory) stays pending. */
		size_t nc = 0, unknown = 0;
		for (size_t k = 0, j = 0; k < (size_t)n; k++) {
			if (j < nreq && reqs[j].cookie == k) {
				const struct fk_fsync_req *q = &reqs[j++];
				if (!q->issued && !q->result) {
					unknown++;
					continue;
				}
				res[k] = q->result;
				if (q->issued) {
					files++;
					total_ns += q->latency_ns;
					if (q->latency_ns > longest_ns)
						longest_ns = q->latency_ns;
				}
				if (q->result)
					fk_store_log(s,
						     "fsync of base/%u.%u "
						     "failed: %s",
						     (uint32_t)(ids[k] >> 32),
						     (uint32_t)ids[k],
						     fk_strerror(q->result));
				else if (q->issued)
					res[k] = still_named(s, ids[k], q->fd);
			}
			ids[nc] = ids[k];
			res[nc] = res[k];
			nc++;
		}
		r = fk_fsyncq_complete(s->fsq, ids, res, nc);
		if (!r && unknown)
			r = br ? br : -EIO;
		if (r)
			break;
		done += (size_t)n;
	}
out:
	fk_fsyncq_end(s->fsq);
	free(ids);
	free(res);
	free(reqs);
	ci->files_synced = files;
	ci->longest_sync_ms = longest_ns / 1000000u;
	ci->average_sync_ms = files ? total_ns / files / 1000000u : 0;
	ci->sync_io = fk_sync_io_name(fk_fsync_batch_backend(s->fsb));
	return r;
}

/*
 * The checkpoint's log line (as PostgreSQL's log_checkpoints), through
 * s->ckpt_log: a failure names what failed (@what: the operation and
 * path); one that repeats the last (the same errno and operation: the
 * checkpointer retries every second on a full file system, C8) is
 * counted, not logged, unless @force (a caller waits for this very
 * checkpoint); the first success after failures says so.
 */
static void ckpt_report(struct fk_store *s, const struct fk_checkpoint_info *ci,
			const char *what, int force)
{
	char line[FK_LOG_LINE], out[2][FK_LOG_LINE];
	int r = ci->error, n;
	snprintf(line, sizeof(line),
		 "checkpoint %s: wrote %llu buffers; write=%.3f s, "
		 "sync=%.3f s, total=%.3f s; sync files=%llu (%s), "
		 "longest=%.3f s, average=%.3f s; %llu WAL segments "
		 "recycled, %llu removed%s%s%s%s%s",
		 ci->reason, (unsigned long long)ci->buffers_written,
		 ci->write_ms / 1e3, ci->sync_ms / 1e3, ci->total_ms / 1e3,
		 (unsigned long long)ci->files_synced, ci->sync_io,
		 ci->longest_sync_ms / 1e3, ci->average_sync_ms / 1e3,
		 (unsigned long long)ci->wal_segments_recycled,
		 (unsigned long long)ci->wal_segments_removed,
		 r ? "; FAILED: " : "", r ? fk_strerror(r) : "", r ? " (" : "",
		 r ? what : "", r ? ")" : "");
	if (r) {
		n = fk_log_limit_failed(&s->ckpt_log, ci->end_ns, r, what,
					force, line, out);
		for (int i = 0; i < n; i++)
			fk_store_log(s, "%s", out[i]);
		return;
	}
	fk_store_log(s, "%s", line);
	if (fk_log_limit_ok(&s->ckpt_log, ci->end_ns, out[0]))
		fk_store_log(s, "%s", out[0]);
}

int fk_checkpoint_run(struct fk_store *s, const char *reason, int flags,
		      int shutdown)
{
	struct fk_checkpoint_info ci;
	struct fk_wal_ckpt ck;
	struct fk_dirty *dirty = NULL;
	char what[96] = "the store is stopped";
	int r = 0;

	memset(&ci, 0, sizeof(ci));
	memset(&ck, 0, sizeof(ck));
	ci.reason = reason;
	ci.sync_io = fk_sync_io_name(fk_fsync_batch_backend(s->fsb));
	ci.start_ns = fk_now_ns();
	__atomic_store_n(&s->ckpt_running_ns, ci.start_ns, __ATOMIC_RELEASE);
	pthread_mutex_lock(&s->ckpt_mu);
	uint64_t number = ++s->ckpt_started;
	pthread_mutex_unlock(&s->ckpt_mu);

	r = fk_store_error(s);
	if (r)
		goto out;

	/* (1) the redo point. */
	pthread_mutex_lock(&s->insert_mu);
	uint64_t redo = s->insert_lsn;
	__atomic_store_n(&s->redo_lsn, redo, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->insert_mu);
	ci.redo_lsn = redo;

	/* (2) collect and sort. */
	dirty = malloc((size_t)s->nbuf * sizeof(*dirty));
	if (!dirty) {
		r = -ENOMEM;
		snprintf(what, sizeof(what), "the list of dirty buffers");
		goto out;
	}
	size_t n = fk_bufpool_collect_dirty(s, dirty);
	if (s->o.checkpoint_sorted)
		qsort(dirty, n, sizeof(*dirty), cmp_dirty);

	/* (3) write, paced. */
	int paced =
	    !shutdown && !(flags & CKPT_REQ_IMMEDIATE) && !s->recovering;
	struct fk_pacer pacer;
	uint64_t budget_ns =
	    (uint64_t)((double)s->o.checkpoint_timeout_ms * 1e6 *
		       s->o.checkpoint_completion_target);
	uint64_t trigger =
	    __atomic_load_n(&s->wal_trigger_bytes, __ATOMIC_ACQUIRE);
	uint64_t wal_budget =
	    (uint64_t)((double)trigger * s->o.checkpoint_completion_target);
	fk_pacer_start(&pacer, budget_ns, redo, wal_budget);
	uint64_t wb0 = s->ckpt_wb.bytes_issued;
	for (size_t i = 0; i < n; i++) {
		if (fk_buf_pin_if(s, (int)dirty[i].idx, dirty[i].table,
				  dirty[i].block) == 0) {
			r = fk_buf_flush(s, (int)dirty[i].idx,
					 FK_WRITER_CHECKPOINTER, &s->ckpt_wb);
			fk_buf_unpin(s, (int)dirty[i].idx);
			if (r < 0) {
				snprintf(what, sizeof(what),
					 "writing block %u of base/%u.%u",
					 dirty[i].block, dirty[i].table,
					 dirty[i].block / s->blocks_per_seg);
				goto out;
			}
			if (r > 0)
				ci.buffers_written++;
			r = 0;
		}
		if ((i & 31) == 31)
			fk_fsyncq_absorb(s->fsq);
		while (paced) {
			uint64_t ns = fk_pacer_delay_ns(
			    &pacer, (double)(i + 1) / (double)n,
			    __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE),
			    PACE_STEP_NS);
			if (!ns)
				break;
			if (pace_sleep(s, ns))
				paced = 0;
		}
	}
	fk_writeback_issue(&s->ckpt_wb);
	ci.writeback_bytes = s->ckpt_wb.bytes_issued - wb0;
	if (s->ckpt_wb.wait && s->ckpt_wb.first_error) {
		/* A waiting hint consumed the file's writeback error: its
		 * fsync would return 0, so this is the fsync's failure (C4). */
		r = s->ckpt_wb.first_error;
		fk_store_stop(s, r,
			      "waiting writeback hint of a table segment");
		snprintf(what, sizeof(what), "writeback of a table segment");
		goto out;
	}
	uint64_t t_write = fk_now_ns();
	ci.write_ms = (t_write - ci.start_ns) / 1000000u;
	__atomic_add_fetch(&s->st.buffers_checkpoint, ci.buffers_written,
			   __ATOMIC_RELAXED);

	/* (4) sync phase. */
	/* The spread budget, bounded by what is left of the checkpoint
	 * interval, and by the WAL left before the next checkpoint. */
	struct fk_pacer sync_pacer;
	uint64_t spread_ns = s->o.checkpoint_sync_spread_ms * 1000000ull;
	uint64_t interval_end =
	    ci.start_ns + s->o.checkpoint_timeout_ms * 1000000ull;
	if (t_write + spread_ns > interval_end)
		spread_ns = interval_end > t_write ? interval_end - t_write : 0;
	uint64_t wal_now = __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE);
	uint64_t wal_left =
	    redo + trigger > wal_now ? redo + trigger - wal_now : 1;
	fk_pacer_start(&sync_pacer, spread_ns, wal_now, wal_left);
	r = sync_phase(s, &sync_pacer,
		       paced && s->o.checkpoint_sync_spread_ms > 0, &ci);
	uint64_t t_sync = fk_now_ns();
	ci.sync_ms = (t_sync - t_write) / 1000000u;
	if (r) {
		fk_store_stop(s, r, "fsync of a table segment (checkpoint)");
		snprintf(what, sizeof(what), "fsync of a table segment");
		goto out;
	}
	struct fk_fsyncq_stats fst;
	fk_fsyncq_get_stats(s->fsq, &fst);
	__atomic_store_n(&s->st.fsyncq_compactions, fst.compactions,
			 __ATOMIC_RELAXED);

	/* (5) the checkpoint record, durable. */
	ck.redo_lsn = redo;
	uint64_t end, lsn;
	for (;;) {
		pthread_mutex_lock(&s->insert_mu);
		uint64_t need =
		    fk_wal_need_segment(s, FK_WAL_REC_HDR + sizeof(ck));
		if (!need)
			break;
		pthread_mutex_unlock(&s->insert_mu);
		/* No segment for the record (ENOSPC): the checkpoint fails,
		 * the redo pointer stays, nothing is lost; the next one tries
		 * again (W8; an fsync failure there stopped the store). */
		r = fk_wal_ensure_segment(s, need);
		if (r) {
			snprintf(what, sizeof(what),
				 "creating wal/%016llX for the record",
				 (unsigned long long)need);
			goto out;
		}
	}
	for (uint32_t t = 1; t <= FK_STORE_MAX_TABLES; t++)
		ck.rows[t] =
		    __atomic_load_n(&s->tables[t].rows, __ATOMIC_ACQUIRE);
	struct fk_iovec iov = {&ck, sizeof(ck)};
	lsn = fk_wal_insert(s, FK_WAL_CHECKPOINT, &iov, 1,
			    fk_wal_payload_crc(&ck, sizeof(ck)), &end);
	pthread_mutex_unlock(&s->insert_mu);
	r = fk_wal_flush(s, end);
	if (r) {
		snprintf(what, sizeof(what), "flushing the WAL");
		goto out;
	}

	/* (6) the control file. */
	s->ckpt_lsn = lsn;
	/* C8: fk_store_write_control stops the store itself if an fsync
	 * (or the rename) failed; an ENOSPC writing the temporary file
	 * only fails this checkpoint. */
	r = fk_store_write_control(s, shutdown, &ck);
	if (r) {
		snprintf(what, sizeof(what), "replacing control (control.tmp)");
		goto out;
	}
	s->last_ckpt_end_lsn = end;

	/* (7) recycle WAL.  The checkpoint itself is durable by now; a
	 * failed fsync of wal/ after the renames still fails the call
	 * (and has stopped the store), so its caller hears of it. */
	r = fk_wal_recycle(s, redo, &ci.wal_segments_recycled,
			   &ci.wal_segments_removed);
	if (r) {
		snprintf(what, sizeof(what), "recycling wal/");
		goto out;
	}
	__atomic_add_fetch(&s->st.checkpoints, 1, __ATOMIC_RELAXED);
out:
	free(dirty);
	ci.end_ns = fk_now_ns();
	ci.total_ms = (ci.end_ns - ci.start_ns) / 1000000u;
	ci.error = r;
	/* Report before waking waiters: they may look at the report. */
	ckpt_report(s, &ci, what, (flags & CKPT_REQ_REQUESTED) || shutdown);
	if (s->o.on_checkpoint)
		s->o.on_checkpoint(s->o.on_checkpoint_arg, &ci);
	/* After the callback: a reader sees the checkpoint running until
	 * its event is recorded, never neither. */
	__atomic_store_n(&s->ckpt_running_ns, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&s->ckpt_mu);
	s->ckpt_done = number;
	s->ckpt_result = r;
	s->last_ckpt_ns = ci.start_ns;
	pthread_cond_broadcast(&s->ckpt_cv);
	pthread_mutex_unlock(&s->ckpt_mu);
	return r;
}

static void *ckpt_main(void *arg)
{
	struct fk_store *s = arg;
	uint64_t retry_ns = 0;	     /* WAL preallocation failed: wait */
	uint64_t space_retry_ns = 0; /* a checkpoint found no space (C8) */
	pthread_mutex_lock(&s->ckpt_mu);
	while (!s->ckpt_shutdown) {
		uint64_t now = fk_now_ns();
		uint64_t timeout_ns = s->o.checkpoint_timeout_ms * 1000000ull;
		uint64_t due = s->last_ckpt_ns + timeout_ns;
		int flags = s->ckpt_flags;
		if (space_retry_ns && now >= space_retry_ns)
			flags |= CKPT_REQ_WAL | CKPT_REQ_IMMEDIATE;
		if (fk_store_error(s) && !(flags & CKPT_REQ_REQUESTED)) {
			/* Stopped: nothing to write; only answer requests
			 * (with the error), wait for shutdown. */
			s->ckpt_flags = 0;
			pthread_cond_wait(&s->ckpt_cv, &s->ckpt_mu);
			continue;
		}
		if (flags || now >= due) {
			s->ckpt_flags = 0;
			pthread_mutex_unlock(&s->ckpt_mu);
			const char *reason = (flags & CKPT_REQ_REQUESTED)
						 ? "requested"
					     : (flags & CKPT_REQ_WAL) ? "wal"
								      : "time";
			if (!flags &&
			    __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE) ==
				s->last_ckpt_end_lsn) {
				/* Nothing happened: skip, as PostgreSQL
				 * skips idle checkpoints. */
				pthread_mutex_lock(&s->ckpt_mu);
				s->last_ckpt_ns = now;
				continue;
			}
			int r = fk_checkpoint_run(s, reason, flags, 0);
			/* C8: one that found no space is tried again every
			 * second, so space freed lets the WAL be recycled
			 * (a WAL that filled its file system blocks every
			 * commit until then) without waiting for the
			 * timeout or a request. */
			space_retry_ns = 0;
			if ((r == -ENOSPC || r == -EDQUOT) &&
			    !fk_store_error(s))
				space_retry_ns = fk_now_ns() + 1000000000ull;
			pthread_mutex_lock(&s->ckpt_mu);
			continue;
		}
		/* Keep WAL segments ready ahead of the insert position:
		 * at every poll, and at once when a committer entering a
		 * segment asks (fk_ckpt_wal_advanced). */
		int asked = s->ckpt_prealloc;
		s->ckpt_prealloc = 0;
		if (!fk_store_error(s) && now >= retry_ns &&
		    (asked ||
		     __atomic_load_n(&s->wal_highest_seg, __ATOMIC_ACQUIRE) <
			 __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE) /
				 s->wal_seg_bytes +
			     WAL_AHEAD)) {
			pthread_mutex_unlock(&s->ckpt_mu);
			/* On failure (ENOSPC) try again in a second; a
			 * commit that needs the segment fails cleanly. */
			if (wal_prealloc(s))
				retry_ns = now + 1000000000ull;
			pthread_mutex_lock(&s->ckpt_mu);
			continue;
		}
		uint64_t wait = due - now;
		if (wait > 1000000000ull)
			wait = 1000000000ull;
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull +
			     (uint64_t)ts.tv_nsec + wait;
		ts.tv_sec = (time_t)(t / 1000000000ull);
		ts.tv_nsec = (long)(t % 1000000000ull);
		pthread_cond_timedwait(&s->ckpt_cv, &s->ckpt_mu, &ts);
	}
	pthread_mutex_unlock(&s->ckpt_mu);
	return NULL;
}

void fk_ckpt_init(struct fk_store *s)
{
	fk_writeback_init(&s->ckpt_wb, s->o.checkpoint_flush_after_bytes);
	s->ckpt_log.subject = "checkpoint";
	s->ckpt_wb.wait = s->o.checkpoint_flush_wait;
}

void fk_ckpt_release(struct fk_store *s)
{
	fk_writeback_release(&s->ckpt_wb);
}

int fk_ckpt_start_thread(struct fk_store *s)
{
	s->ckpt_shutdown = 0;
	int r = pthread_create(&s->ckpt_thread, NULL, ckpt_main, s);
	if (r)
		return -r;
	s->ckpt_thread_running = 1;
	return 0;
}

void fk_ckpt_stop_thread(struct fk_store *s)
{
	if (!s->ckpt_thread_running)
		return;
	pthread_mutex_lock(&s->ckpt_mu);
	s->ckpt_shutdown = 1;
	pthread_cond_broadcast(&s->ckpt_cv);
	pthread_mutex_unlock(&s->ckpt_mu);
	pthread_join(s->ckpt_thread, NULL);
	s->ckpt_thread_running = 0;
}

int fk_ckpt_request_wait(struct fk_store *s, int flags)
{
	if (!s->ckpt_thread_running)
		return fk_checkpoint_run(s, "requested", flags, 0);
	pthread_mutex_lock(&s->ckpt_mu);
	uint64_t target = s->ckpt_started + 1;
	s->ckpt_flags |= CKPT_REQ_REQUESTED | flags;
	pthread_cond_broadcast(&s->ckpt_cv);
	while (s->ckpt_done < target && !s->ckpt_shutdown)
		pthread_cond_wait(&s->ckpt_cv, &s->ckpt_mu);
	int r = s->ckpt_done >= target ? s->ckpt_result : -FK_ESTOPPED;
	pthread_mutex_unlock(&s->ckpt_mu);
	return r;
}

void fk_ckpt_wal_nudge(struct fk_store *s)
{
	pthread_mutex_lock(&s->ckpt_mu);
	if (!(s->ckpt_flags & CKPT_REQ_WAL)) {
		s->ckpt_flags |= CKPT_REQ_WAL;
		pthread_cond_broadcast(&s->ckpt_cv);
	}
	pthread_mutex_unlock(&s->ckpt_mu);
}

/* A commit found no space (C8): an immediate checkpoint lets the WAL
 * before its redo point be reused. */
void fk_ckpt_space_nudge(struct fk_store *s)
{
	pthread_mutex_lock(&s->ckpt_mu);
	s->ckpt_flags |= CKPT_REQ_WAL | CKPT_REQ_IMMEDIATE;
	pthread_cond_broadcast(&s->ckpt_cv);
	pthread_mutex_unlock(&s->ckpt_mu);
}
