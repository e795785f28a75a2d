// SPDX-License-Identifier: MIT
/*
 * core.c - the page store's lowest layer: the services every other
 * module of the store calls and which call none of them back.  Below
 * wal.c, bufpool.c, control.c and checkpointer.c, above crc32c.c and
 * format.c, so the store's modules call downwards only (the layering is
 * drawn in store-int.h).
 *
 * Owns: the log line (fk_store_log: opts.log, never printed), the
 * sticky stop (fk_store_stop: the first error wins and every waiter of
 * the group commit and of the checkpointer is woken, S4), the space
 * facts an ENOSPC log line gives (fk_store_space_facts), and the table
 * segment descriptors (fk_store_seg_fd: base/T.S opened on first use,
 * created with base/ fsynced, S7; kept open until close).
 *
 * Owns also the condensing of failure lines that repeat
 * (fk_log_limit_failed, fk_log_limit_ok: pure, the callers hold the
 * state and log the lines).
 *
 * Interface routines: fk_store_log, fk_store_stop, fk_store_space_facts,
 * fk_log_limit_failed, fk_log_limit_ok, fk_store_seg_fd.
 */
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

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

/* ---- condensed failure lines ---- */

static double secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* "SUBJECT failed N more times in T s: ERR (WHAT)" for the failures
 * not logged since the last line, into @out; starts a new interval. */
static void limit_summary(struct fk_log_limit *l, uint64_t now_ns, char *out)
{
	snprintf(out, FK_LOG_LINE,
		 "%s failed %llu more time%s in %.1f s: %s (%s)", l->subject,
		 (unsigned long long)l->suppressed,
		 l->suppressed == 1 ? "" : "s",
		 secs(now_ns > l->line_ns ? now_ns - l->line_ns : 0),
		 fk_strerror(l->err), l->what);
	l->suppressed = 0;
	l->line_ns = now_ns;
}

int fk_log_limit_failed(struct fk_log_limit *l, uint64_t now_ns, int err,
			const char *what, int force, const char *line,
			char out[2][FK_LOG_LINE])
{
	uint64_t interval = l->interval_ns ? l->interval_ns : FK_LOG_REPEAT_NS;
	int n = 0;
	if (l->failures++ == 0) {
		l->first_ns = now_ns;
		l->suppressed = 0;
		force = 1;
	} else if (err != l->err || strcmp(what, l->what) != 0) {
		force = 1; /* changed: what was counted is the old one's */
	}
	if (force) {
		if (l->suppressed)
			limit_summary(l, now_ns, out[n++]);
		snprintf(out[n++], FK_LOG_LINE, "%s", line);
		l->line_ns = now_ns;
	} else {
		l->suppressed++;
	}
	l->err = err;
	snprintf(l->what, sizeof(l->what), "%s", what);
	if (!force && now_ns >= l->line_ns && now_ns - l->line_ns >= interval)
		limit_summary(l, now_ns, out[n++]);
	return n;
}

int fk_log_limit_ok(struct fk_log_limit *l, uint64_t now_ns,
		    char out[FK_LOG_LINE])
{
	if (!l->failures)
		return 0;
	char unlogged[64] = "";
	if (l->suppressed)
		snprintf(unlogged, sizeof(unlogged),
			 ", %llu of them not logged",
			 (unsigned long long)l->suppressed);
	snprintf(out, FK_LOG_LINE,
		 "%s ok again after %llu failure%s in %.1f s%s (the last: %s "
		 "(%s))",
		 l->subject, (unsigned long long)l->failures,
		 l->failures == 1 ? "" : "s",
		 secs(now_ns > l->first_ns ? now_ns - l->first_ns : 0),
		 unlogged, fk_strerror(l->err), l->what);
	l->failures = 0;
	l->suppressed = 0;
	return 1;
}

void fk_store_space_facts(struct fk_store *s, char *buf, size_t len)
{
	struct statfs sf;
	uint64_t lo = __atomic_load_n(&s->wal_oldest_seg, __ATOMIC_ACQUIRE);
	uint64_t hi = __atomic_load_n(&s->wal_highest_seg, __ATOMIC_ACQUIRE);
	uint64_t nseg = hi >= lo ? hi - lo + 1 : 0;
	int n = 0;
	if (!fk_sys.fstatfs(s->dirfd, &sf))
		n = snprintf(
		    buf, len,
		    "the file system of the data directory has "
		    "%.1f MiB free of %.1f MiB; ",
		    fk_mib((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize),
		    fk_mib((uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize));
	if (n < 0 || (size_t)n >= len)
		n = 0;
	snprintf(buf + n, len - (size_t)n,
		 "the WAL takes %.1f MiB (%llu segments of %.1f MiB, "
		 "wal_segment_bytes; it keeps at least %u)",
		 fk_mib(nseg * s->wal_seg_bytes), (unsigned long long)nseg,
		 fk_mib(s->wal_seg_bytes), FK_STORE_WAL_MIN_SEGMENTS);
}

/* ---- table segment descriptors ---- */

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
					fk_store_stop(
					    s, r,
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
