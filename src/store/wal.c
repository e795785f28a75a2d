// SPDX-License-Identifier: MIT
/*
 * wal.c - the write-ahead log at run time: insertion, group commit,
 * segment files, and the reader used by recovery.
 *
 * The WAL is one stream of bytes; an LSN is a byte position in it.
 * Segment file wal/%016llX (its segment number, hex) holds LSNs
 * [segno * seg_bytes, (segno + 1) * seg_bytes) and begins with a
 * 32-byte segment header (magic, segno, start LSN, CRC) that is part of
 * the stream.  Records are 8-byte aligned, never span segments (a PAD
 * record, or a tail shorter than a record header, fills the rest).
 *
 * Interface routines: fk_wal_init/destroy, fk_wal_insert (under
 * insert_mu), fk_wal_need_segment + fk_wal_ensure_segment
 * (preallocation), fk_wal_flush (group commit), fk_wal_recycle,
 * fk_wal_scan_dir, fk_wal_cut, fk_wal_reader_init/read/release.
 *
 * Invariants:
 *  W1. flush_lsn <= write_lsn <= insert_lsn; all three only grow while
 *      the store runs.  Every byte below insert_lsn (as published with
 *      release semantics) is in the WAL buffer or already written.
 *  W2. The WAL buffer maps LSN x to walbuf[x % walbuf_size]; an
 *      inserter never overwrites bytes not yet written: it first makes
 *      insert_end - write_lsn <= walbuf_size (flushing if need be).
 *  W3. At most one flusher runs (flusher_active, under flush_mu); it
 *      writes [write_lsn, insert_lsn) and syncs it (fdatasync, fsync, or
 *      O_DSYNC writes), then publishes write_lsn = flush_lsn and wakes
 *      every waiter: one sync serves every commit inserted before it
 *      started (group commit, as PostgreSQL's XLogFlush).
 *  W4. A failed WAL write or sync stops the store (sticky error); no
 *      waiter whose LSN was not covered by a successful sync returns 0,
 *      and nothing is ever retried.
 *  W5. A record is inserted only into a segment file that already
 *      exists at full size and was fsynced (fk_wal_need_segment is
 *      checked under insert_mu before any page is changed), so WAL
 *      ENOSPC surfaces before a commit is applied.
 *  W6. A record is valid only if its length is sane, its LSN field is
 *      its position, its prev-LSN field is the previous record's LSN,
 *      its CRC matches, and its segment's header names this segment:
 *      stale records in a recycled segment fail the LSN and header
 *      checks, not only the CRC.
 *  W7. Segments [wal_oldest_seg, wal_highest_seg] exist; those wholly
 *      before the last checkpoint's redo LSN are renamed to new numbers
 *      past the highest (recycled) or unlinked.
 *  W8. Segments are zero-filled (not fallocated: unwritten extents
 *      would need a metadata change at each first write) and fsynced
 *      before they get their name, so on ext4 and xfs a WAL write never
 *      needs a new block: ENOSPC can only come from creating a segment,
 *      before anything is inserted, and is not sticky (the commit or
 *      checkpoint that needed it fails, the next one tries again).  An
 *      fsync failing while making one stops the store.  An ENOSPC from
 *      a WAL write (a copy-on-write file system) is a WAL write failure
 *      (W4): sticky, because the record is already applied in memory.
 *  W9. Recovery replays only WAL bytes the DEVICE has: each segment is
 *      fdatasynced, then read with O_DIRECT (or after dropping its clean
 *      cached pages), never from page-cache pages whose write-back
 *      failed (load_seg).
 *  W10. After fk_wal_cut no record past the cut point is left with its
 *      true LSN: the cut segment is zeroed from the cut on, and a later
 *      segment whose header names it is zeroed whole (body durable
 *      before the header); other later segments lose their header.
 *  W11. The WAL never needs more segments than its file system could
 *      hold: once creating one meets ENOSPC (or EDQUOT), the
 *      checkpoint trigger (wal_trigger_bytes) is lowered, for the
 *      handle's life, so that a checkpoint recycles the segments the
 *      WAL has before it needs another (wal_room_reached); recycling
 *      (W7) then keeps, and preallocation makes, no more than that
 *      trigger allows ahead, and freed space is left to others.
 */
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t zeros[65536];

/* Write zeros over [@from, @to) of @fd.  0 or -errno. */
static int write_zeros(int fd, uint64_t from, uint64_t to)
{
	int r = 0;
	for (uint64_t off = from; off < to && !r; off += sizeof(zeros)) {
		uint64_t n = to - off;
		if (n > sizeof(zeros))
			n = sizeof(zeros);
		r = fk_pwrite_all(fd, zeros, n, off);
	}
	return r;
}

static void seg_name(char *out, size_t len, uint64_t segno)
{
	snprintf(out, len, "%016llX", (unsigned long long)segno);
}

int fk_wal_init(struct fk_store *s)
{
	s->walbuf_size = s->wal_seg_bytes;
	if (s->walbuf_size < (1u << 20))
		s->walbuf_size = 1u << 20;
	if (s->walbuf_size > (16u << 20))
		s->walbuf_size = 16u << 20;
	s->walbuf = malloc(s->walbuf_size);
	if (!s->walbuf)
		return -ENOMEM;
	s->wal_wfd = -1;
	s->wal_wseg = UINT64_MAX;
	pthread_mutex_init(&s->insert_mu, NULL);
	pthread_mutex_init(&s->flush_mu, NULL);
	pthread_cond_init(&s->flush_cv, NULL);
	pthread_mutex_init(&s->seg_mu, NULL);
	s->seg_log.subject = "WAL segment creation";
	return 0;
}

void fk_wal_destroy(struct fk_store *s)
{
	if (s->wal_wfd >= 0)
		fk_sys.close(s->wal_wfd);
	s->wal_wfd = -1;
	free(s->walbuf);
	s->walbuf = NULL;
	pthread_mutex_destroy(&s->insert_mu);
	pthread_mutex_destroy(&s->flush_mu);
	pthread_cond_destroy(&s->flush_cv);
	pthread_mutex_destroy(&s->seg_mu);
}

/* ---- segment files ---- */

static int create_segment(struct fk_store *s, uint64_t segno)
{
	char name[32];
	int fd = fk_sys.openat(s->waldirfd, "segtemp",
			       O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fd;
	/* Write zeros rather than fallocate: later overwrites then need no
	 * metadata change, so fdatasync stays cheap (as PostgreSQL's
	 * XLogFileInit). */
	int r = write_zeros(fd, 0, s->wal_seg_bytes);
	/* W8: a failed write (ENOSPC, EDQUOT) changes nothing anybody
	 * relies on: the temporary file goes and the caller may try again
	 * once space is freed.  A failed fsync is never retried (a new
	 * segtemp would "succeed" where the kernel may have dropped
	 * pages): it stops the store. */
	int synced = 0;
	if (!r) {
		r = fk_sys.fsync(fd);
		synced = 1;
	}
	int rc = fk_sys.close(fd);
	if (!r)
		r = rc;
	if (r && synced)
		fk_store_stop(s, r, "fsync of a new WAL segment");
	seg_name(name, sizeof(name), segno);
	if (!r)
		r = fk_sys.renameat(s->waldirfd, "segtemp", s->waldirfd, name);
	if (r) {
		fk_sys.unlinkat(s->waldirfd, "segtemp", 0);
		return r;
	}
	/* Renamed: the name may or may not be durable now; making a new
	 * segtemp and fsyncing the directory again would retry a failed
	 * fsync into success. */
	r = fk_sys.fsync(s->waldirfd);
	if (r)
		fk_store_stop(s, r, "fsync of the WAL directory");
	return r;
}

/*
 * Every commit that needs the segment, the checkpointer's preallocation
 * (every second) and the checkpoint record ask for it again while the
 * file system stays full: the failure is logged through seg_log (the
 * first in full, then condensed; a line when a creation works again).
 */
/*
 * W11: the WAL met ENOSPC (or EDQUOT) making a segment: its file
 * system holds no more than the segments it has, whatever
 * max_wal_size says.  Lower the checkpoint trigger so that the WAL
 * from the redo point on, plus what a checkpoint adds while it runs
 * (completion_target of the trigger) and the segments kept ahead,
 * fits in those segments: checkpoints by WAL volume then recycle them
 * before the WAL needs another, and space freed later stays for the
 * tables and the file system's other users instead of being taken by
 * the WAL until the next ENOSPC (by when the checkpoint that could
 * recycle the WAL finds no block for its pages).  Under seg_mu.
 * Returns 1 and the line to log if the trigger was lowered.
 */
static int wal_room_reached(struct fk_store *s, char *line, size_t len)
{
	uint64_t seg = s->wal_seg_bytes;
	uint64_t nseg = s->wal_highest_seg >= s->wal_oldest_seg
			    ? s->wal_highest_seg - s->wal_oldest_seg + 1
			    : 0;
	uint64_t room = nseg * seg;
	/* The segments kept ahead and the one being filled. */
	uint64_t margin = (uint64_t)(FK_STORE_WAL_MIN_SEGMENTS + 1) * seg;
	uint64_t trigger =
	    room > margin
		? (uint64_t)((double)(room - margin) /
			     (1.0 + s->o.checkpoint_completion_target))
		: seg;
	if (trigger < seg)
		trigger = seg;
	uint64_t was = __atomic_load_n(&s->wal_trigger_bytes, __ATOMIC_ACQUIRE);
	if (trigger >= was)
		return 0;
	__atomic_store_n(&s->wal_trigger_bytes, trigger, __ATOMIC_RELEASE);
	snprintf(line, len,
		 "the WAL stays within the %.1f MiB it takes (%llu segments): "
		 "its file system has no room for another; checkpoints now "
		 "start every %.1f MiB of WAL (was %.1f MiB) while the store "
		 "is open",
		 fk_mib(room), (unsigned long long)nseg, fk_mib(trigger),
		 fk_mib(was));
	return 1;
}

int fk_wal_ensure_segment(struct fk_store *s, uint64_t segno)
{
	char facts[320], line[FK_LOG_LINE], out[2][FK_LOG_LINE];
	char room[FK_LOG_LINE];
	int r = 0, nout = 0, room_line = 0;
	pthread_mutex_lock(&s->seg_mu);
	while (s->wal_highest_seg < segno) {
		r = create_segment(s, s->wal_highest_seg + 1);
		if (r)
			break;
		__atomic_store_n(&s->wal_highest_seg, s->wal_highest_seg + 1,
				 __ATOMIC_RELEASE);
	}
	/* Under seg_mu, as the creation's own system calls. */
	if (r) {
		char name[32];
		seg_name(name, sizeof(name), s->wal_highest_seg + 1);
		if (r == -ENOSPC || r == -EDQUOT) {
			room_line = wal_room_reached(s, room, sizeof(room));
			fk_store_space_facts(s, facts, sizeof(facts));
			snprintf(line, sizeof(line),
				 "cannot create WAL segment: %s (it needs %llu "
				 "bytes): wal/%s; %s",
				 fk_strerror(r),
				 (unsigned long long)s->wal_seg_bytes, name,
				 facts);
		} else {
			snprintf(line, sizeof(line),
				 "cannot create WAL segment: %s (wal/%s)",
				 fk_strerror(r), name);
		}
		/* The number changes as the WAL moves on: the condensed
		 * lines name the errno and the directory. */
		nout = fk_log_limit_failed(&s->seg_log, fk_now_ns(), r,
					   "creating a segment in wal/", 0,
					   line, out);
	} else {
		nout = fk_log_limit_ok(&s->seg_log, fk_now_ns(), out[0]);
	}
	pthread_mutex_unlock(&s->seg_mu);
	for (int i = 0; i < nout; i++)
		fk_store_log(s, "%s", out[i]);
	if (room_line)
		fk_store_log(s, "%s", room);
	return r;
}

int fk_wal_scan_dir(struct fk_store *s)
{
	char buf[8192];
	int fd = fk_sys.openat(s->waldirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (;;) {
		ssize_t n = fk_sys.getdents64(fd, buf, sizeof(buf));
		if (n < 0) {
			fk_sys.close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			uint16_t reclen;
			memcpy(&reclen, buf + off + 16, 2);
			const char *name = buf + off + 19;
			off += reclen;
			if (strlen(name) != 16)
				continue;
			char *end;
			unsigned long long v = strtoull(name, &end, 16);
			if (*end)
				continue;
			if (v < lo)
				lo = v;
			if (v > hi)
				hi = v;
		}
	}
	fk_sys.close(fd);
	if (lo == UINT64_MAX)
		lo = 1, hi = 0; /* none: [1, 0] is empty */
	s->wal_oldest_seg = lo;
	s->wal_highest_seg = hi;
	return 0;
}

int fk_wal_recycle(struct fk_store *s, uint64_t redo_lsn, uint64_t *recycled,
		   uint64_t *removed)
{
	char from[32], to[32];
	uint64_t redo_seg = redo_lsn / s->wal_seg_bytes;
	uint64_t cur_seg = __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE) /
			   s->wal_seg_bytes;
	uint64_t keep =
	    __atomic_load_n(&s->wal_trigger_bytes, __ATOMIC_ACQUIRE) /
		s->wal_seg_bytes +
	    1;
	int any = 0;

	if (keep < 2)
		keep = 2;
	pthread_mutex_lock(&s->seg_mu);
	while (s->wal_oldest_seg < redo_seg &&
	       s->wal_oldest_seg <= s->wal_highest_seg) {
		uint64_t seg = s->wal_oldest_seg;
		seg_name(from, sizeof(from), seg);
		int r;
		if (s->wal_highest_seg < cur_seg + keep) {
			seg_name(to, sizeof(to), s->wal_highest_seg + 1);
			r = fk_sys.renameat(s->waldirfd, from, s->waldirfd, to);
			if (!r) {
				__atomic_store_n(&s->wal_highest_seg,
						 s->wal_highest_seg + 1,
						 __ATOMIC_RELEASE);
				(*recycled)++;
			}
		} else {
			r = fk_sys.unlinkat(s->waldirfd, from, 0);
			if (!r)
				(*removed)++;
		}
		if (r && r != -ENOENT) {
			fk_store_log(s, "cannot recycle WAL segment %s: %s",
				     from, fk_strerror(r));
			break;
		}
		s->wal_oldest_seg++;
		any = 1;
	}
	int err = 0;
	if (any) {
		err = fk_sys.fsync(s->waldirfd);
		if (err)
			fk_store_stop(s, err, "fsync of the WAL directory");
	}
	pthread_mutex_unlock(&s->seg_mu);
	return err;
}

/* ---- insertion ---- */

/* Where a record of aligned length @alen inserted at @pos lands: returns
 * its LSN; *@pad is the PAD needed first (0, or bytes to the next
 * segment), *@end the new insert position. */
static uint64_t place(const struct fk_store *s, uint64_t pos, uint64_t alen,
		      uint64_t *end)
{
	uint64_t seg = s->wal_seg_bytes;
	uint64_t off = pos % seg;
	if (off == 0)
		pos += FK_WAL_SEG_HDR, off = FK_WAL_SEG_HDR;
	if (seg - off < alen) {
		pos += seg - off;
		pos += FK_WAL_SEG_HDR;
	}
	*end = pos + alen;
	return pos;
}

uint64_t fk_wal_need_segment(struct fk_store *s, size_t len)
{
	uint64_t end;
	place(s, s->insert_lsn, FK_WAL_ALIGN(len), &end);
	uint64_t segno = (end - 1) / s->wal_seg_bytes;
	if (segno > __atomic_load_n(&s->wal_highest_seg, __ATOMIC_ACQUIRE))
		return segno;
	return 0;
}

/* Copy @len bytes (NULL: zeros) into the WAL buffer at LSN @lsn. */
static void buf_put(struct fk_store *s, uint64_t lsn, const void *data,
		    size_t len)
{
	const uint8_t *p = data;
	while (len) {
		uint64_t bo = lsn % s->walbuf_size;
		size_t n = len;
		if (n > s->walbuf_size - bo)
			n = (size_t)(s->walbuf_size - bo);
		if (p) {
			memcpy(s->walbuf + bo, p, n);
			p += n;
		} else {
			memset(s->walbuf + bo, 0, n);
		}
		lsn += n;
		len -= n;
	}
}

static void put_seg_hdr(struct fk_store *s, uint64_t pos)
{
	struct fk_wal_seg h;
	fk_wal_seg_fill(&h, pos / s->wal_seg_bytes, s->wal_seg_bytes);
	buf_put(s, pos, &h, sizeof(h));
}

uint64_t fk_wal_insert(struct fk_store *s, uint8_t type,
		       const struct fk_iovec *parts, int nparts,
		       uint32_t payload_crc, uint64_t *endp)
{
	size_t len = FK_WAL_REC_HDR;
	for (int i = 0; i < nparts; i++)
		len += parts[i].len;
	uint64_t alen = FK_WAL_ALIGN(len);
	uint64_t pos = s->insert_lsn, end;
	uint64_t lsn = place(s, pos, alen, &end);

	/* W2: room in the buffer. */
	if (end - __atomic_load_n(&s->write_lsn, __ATOMIC_ACQUIRE) >
	    s->walbuf_size)
		fk_wal_flush(s, pos);
	/* If that failed the store is stopped; the record is still copied
	 * (it can never become durable, and nobody waits successfully). */

	uint64_t seg = s->wal_seg_bytes;
	if (pos % seg == 0) {
		put_seg_hdr(s, pos);
		pos += FK_WAL_SEG_HDR;
	}
	if (pos != lsn) {
		/* Fill the rest of the segment. */
		uint64_t rem = seg - pos % seg;
		if (rem >= FK_WAL_REC_HDR) {
			struct fk_wal_rec h;
			fk_wal_rec_fill(&h, (uint32_t)rem, FK_WAL_PAD, pos,
					s->prev_lsn, 0);
			buf_put(s, pos, &h, sizeof(h));
			buf_put(s, pos + FK_WAL_REC_HDR, NULL,
				rem - FK_WAL_REC_HDR);
			s->prev_lsn = pos;
		} else {
			buf_put(s, pos, NULL, rem);
		}
		pos += rem;
		put_seg_hdr(s, pos);
		pos += FK_WAL_SEG_HDR;
	}
	struct fk_wal_rec h;
	fk_wal_rec_fill(&h, (uint32_t)len, type, lsn, s->prev_lsn, payload_crc);
	buf_put(s, lsn, &h, sizeof(h));
	uint64_t at = lsn + FK_WAL_REC_HDR;
	for (int i = 0; i < nparts; i++) {
		buf_put(s, at, parts[i].base, parts[i].len);
		at += parts[i].len;
	}
	buf_put(s, at, NULL, (size_t)(end - at));
	s->prev_lsn = lsn;
	__atomic_add_fetch(&s->st.wal_bytes, end - s->insert_lsn,
			   __ATOMIC_RELAXED);
	__atomic_store_n(&s->insert_lsn, end, __ATOMIC_RELEASE);
	*endp = end;
	return lsn;
}

/* ---- writing and syncing (group commit) ---- */

static int wal_sync_fd(struct fk_store *s, int fd)
{
	uint64_t t0 = fk_now_ns();
	int r;
	__atomic_add_fetch(&s->st.wal_flushes, 1, __ATOMIC_RELAXED);
	switch (s->o.wal_sync_method) {
	case FK_WAL_FSYNC:
		r = fk_sys.fsync(fd);
		break;
	case FK_WAL_OPEN_DATASYNC:
		r = 0; /* every write was O_DSYNC */
		break;
	default:
		r = fk_sys.fdatasync(fd);
		break;
	}
	__atomic_add_fetch(&s->st.wal_sync_ns, fk_now_ns() - t0,
			   __ATOMIC_RELAXED);
	return r;
}

static int wal_open_seg(struct fk_store *s, uint64_t segno)
{
	char name[32];
	int flags = O_RDWR;
	if (s->o.wal_sync_method == FK_WAL_OPEN_DATASYNC)
		flags |= O_DSYNC;
	seg_name(name, sizeof(name), segno);
	return fk_sys.openat(s->waldirfd, name, flags, 0);
}

/* Write [start, end) from the buffer and make it durable.  Only the
 * active flusher calls this (W3). */
static int wal_write_sync(struct fk_store *s, uint64_t start, uint64_t end)
{
	uint64_t seg = s->wal_seg_bytes, lsn = start;
	int r, unsynced = 0;

	while (lsn < end) {
		uint64_t segno = lsn / seg, off = lsn % seg;
		uint64_t n = end - lsn;
		if (n > seg - off)
			n = seg - off;
		uint64_t bo = lsn % s->walbuf_size;
		if (n > s->walbuf_size - bo)
			n = s->walbuf_size - bo;
		if (segno != s->wal_wseg) {
			if (s->wal_wfd >= 0) {
				if (unsynced) {
					r = wal_sync_fd(s, s->wal_wfd);
					if (r)
						return r;
					unsynced = 0;
				}
				fk_sys.close(s->wal_wfd);
				s->wal_wfd = -1;
			}
			s->wal_wseg = UINT64_MAX;
			r = wal_open_seg(s, segno);
			if (r < 0)
				return r;
			s->wal_wfd = r;
			s->wal_wseg = segno;
		}
		uint64_t t0 = fk_now_ns();
		r = fk_pwrite_all(s->wal_wfd, s->walbuf + bo, (size_t)n, off);
		__atomic_add_fetch(&s->st.wal_write_ns, fk_now_ns() - t0,
				   __ATOMIC_RELAXED);
		if (r)
			return r;
		unsynced = 1;
		lsn += n;
	}
	if (unsynced)
		return wal_sync_fd(s, s->wal_wfd);
	return 0;
}

int fk_wal_flush(struct fk_store *s, uint64_t upto)
{
	int r = 0;
	/* Recovery fdatasyncs each segment before replaying it, so every
	 * record being replayed is durable already. */
	if (s->recovering)
		return 0;
	if (__atomic_load_n(&s->flush_lsn, __ATOMIC_ACQUIRE) >= upto)
		return 0;
	pthread_mutex_lock(&s->flush_mu);
	for (;;) {
		if (s->flush_lsn >= upto)
			break;
		r = fk_store_error(s);
		if (r)
			break;
		if (s->flusher_active) {
			pthread_cond_wait(&s->flush_cv, &s->flush_mu);
			continue;
		}
		s->flusher_active = 1;
		uint64_t start = s->write_lsn;
		uint64_t target =
		    __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE);
		pthread_mutex_unlock(&s->flush_mu);
		r = wal_write_sync(s, start, target);
		pthread_mutex_lock(&s->flush_mu);
		s->flusher_active = 0;
		if (r) {
			pthread_mutex_unlock(&s->flush_mu);
			fk_store_stop(s, r, "WAL write or sync");
			pthread_mutex_lock(&s->flush_mu);
			pthread_cond_broadcast(&s->flush_cv);
			break;
		}
		__atomic_store_n(&s->write_lsn, target, __ATOMIC_RELEASE);
		__atomic_store_n(&s->flush_lsn, target, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&s->flush_cv);
	}
	pthread_mutex_unlock(&s->flush_mu);
	return r;
}

/* ---- end of recovery ---- */

int fk_wal_cut(struct fk_store *s, uint64_t end, uint64_t prev_lsn)
{
	char name[32];
	uint64_t seg = s->wal_seg_bytes, segno = end / seg;
	int r = 0;

	for (uint64_t n = segno; n <= s->wal_highest_seg && !r; n++) {
		if (n < s->wal_oldest_seg)
			continue;
		seg_name(name, sizeof(name), n);
		int fd = fk_sys.openat(s->waldirfd, name, O_RDWR, 0);
		if (fd == -ENOENT)
			continue;
		if (fd < 0)
			return fd;
		/* The cut segment: zero from the cut point to its end;
		 * later ones: zero the header, so no garbage after the cut
		 * can be replayed by a later recovery. */
		uint64_t from = n == segno ? end % seg : 0;
		uint64_t to = n == segno ? seg : FK_WAL_SEG_HDR;
		/*
		 * A later segment whose header names it (written beyond
		 * the cut, e.g. when the damage is not a torn tail) holds
		 * records with their true LSNs.  Once new WAL rewrites its
		 * header, one of them right after the new records (same
		 * positions when the records have the same sizes) would
		 * pass the LSN, prev-LSN and CRC checks and replay a lost
		 * commit (test-wal-tail, "next segment intact").  Zero its
		 * body too, and make that durable before the header goes,
		 * so a crash in between leaves a header that still asks
		 * for it.  Recycled segments carry an old number's header:
		 * their records fail the LSN check, the header suffices.
		 */
		if (n != segno) {
			struct fk_wal_seg h;
			ssize_t got = fk_pread_all(fd, &h, sizeof(h), 0);
			if (got == (ssize_t)sizeof(h) &&
			    fk_wal_seg_check(&h, n, seg) == 0) {
				r = write_zeros(fd, FK_WAL_SEG_HDR, seg);
				if (!r)
					r = fk_sys.fdatasync(fd);
			} else if (got < 0) {
				r = (int)got;
			}
		}
		if (!r)
			r = write_zeros(fd, from, to);
		if (!r)
			r = fk_sys.fdatasync(fd);
		fk_sys.close(fd);
	}
	if (r)
		return r;
	s->insert_lsn = s->write_lsn = s->flush_lsn = end;
	s->prev_lsn = prev_lsn;
	return 0;
}

/* ---- reader ---- */

void fk_wal_reader_init(struct fk_wal_reader *r, struct fk_store *s)
{
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->segno = UINT64_MAX;
}

void fk_wal_reader_release(struct fk_wal_reader *r)
{
	free(r->seg);
	r->seg = NULL;
}

/*
 * Read segment @name whole into @buf (aligned) as it is on the DEVICE,
 * not as the page cache has it.  After a failed write-back the kernel
 * marks the pages clean but keeps their never-written bytes cached, and
 * once the error has been reported (to the flusher of the store that
 * stopped on it) an fdatasync through a new descriptor returns 0: a
 * cached read would replay records that are not on disk, and pages
 * written from them would get ahead of the WAL (a crash in the
 * end-of-recovery checkpoint then left one table with the change and
 * another without: test-eio-wal).  O_DIRECT where the file system
 * takes it; else drop the file's clean cached pages and read.
 * Returns bytes read or -errno.
 */
static ssize_t read_seg_uncached(struct fk_store *s, const char *name, int fd,
				 uint8_t *buf)
{
	int dfd = fk_sys.openat(s->waldirfd, name, O_RDONLY | O_DIRECT, 0);
	if (dfd >= 0) {
		ssize_t n = fk_pread_all(dfd, buf, s->wal_seg_bytes, 0);
		fk_sys.close(dfd);
		if (n != -EINVAL) /* EINVAL: an unaligned file size */
			return n;
	} else if (dfd != -EINVAL) {
		return dfd;
	}
	/* Advisory: tmpfs has no device; a file system without O_DIRECT
	 * drops clean pages (fdatasync left none dirty). */
	fk_sys.fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return fk_pread_all(fd, buf, s->wal_seg_bytes, 0);
}

/* Load a segment whole and make it durable (recovery replays it, so
 * pages written from it must not get ahead of it: the WAL rule): first
 * fdatasync (a killed store's dirty pages reach the disk, or the error
 * is returned), then read what the device has. */
static int load_seg(struct fk_wal_reader *r, uint64_t segno)
{
	struct fk_store *s = r->s;
	char name[32];
	r->segno = segno;
	r->seg_ok = 0;
	if (!r->seg) {
		/* aligned for O_DIRECT */
		if (posix_memalign((void **)&r->seg, 4096, s->wal_seg_bytes)) {
			r->seg = NULL;
			return -ENOMEM;
		}
	}
	seg_name(name, sizeof(name), segno);
	int fd = fk_sys.openat(s->waldirfd, name, O_RDONLY, 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	int e = fk_sys.fdatasync(fd);
	ssize_t n = e ? 0 : read_seg_uncached(s, name, fd, r->seg);
	fk_sys.close(fd);
	if (!e && n < 0)
		e = (int)n;
	if (e)
		return e;
	if ((uint64_t)n < s->wal_seg_bytes)
		memset(r->seg + n, 0, s->wal_seg_bytes - (uint64_t)n);
	r->seg_ok = fk_wal_seg_check(r->seg, segno, s->wal_seg_bytes) == 0;
	return 0;
}

int fk_wal_read(struct fk_wal_reader *r, uint64_t *pos, uint64_t prev,
		const struct fk_wal_rec **rec, uint64_t *next)
{
	uint64_t seg = r->s->wal_seg_bytes, p = *pos;
	for (;;) {
		uint64_t segno = p / seg, off = p % seg;
		if (segno != r->segno) {
			int e = load_seg(r, segno);
			if (e)
				return e;
		}
		if (!r->seg_ok) {
			*pos = segno * seg;
			return 0;
		}
		if (off < FK_WAL_SEG_HDR) {
			p = segno * seg + FK_WAL_SEG_HDR;
			continue;
		}
		if (seg - off < FK_WAL_REC_HDR) {
			p = (segno + 1) * seg;
			continue;
		}
		long n = fk_wal_rec_check(r->seg + off, (size_t)(seg - off), p,
					  prev);
		if (n < 0) {
			*pos = p;
			return 0;
		}
		*rec = (const struct fk_wal_rec *)(void *)(r->seg + off);
		*pos = p;
		*next = p + FK_WAL_ALIGN((uint64_t)n);
		return 1;
	}
}
