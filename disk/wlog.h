/* SPDX-License-Identifier: MIT */
/*
 * wlog.h - the lab disk's write log and its replay: dm-log-writes'
 * method (the kernel's Documentation/admin-guide/device-mapper/
 * log-writes.rst, xfstests' src/log-writes/replay-log), our own format
 * and code.
 *
 * The daemon (flushkit-diskd --write-log=FILE) appends one entry per
 * image request in the order it takes them (under its one lock, as each
 * arrives): every WRITE with its offset, length and data, every FLUSH
 * (only one that the disk honoured: an ignored FLUSH, ctl "flush
 * ignore", is logged as FLUSH_IGNORED and makes nothing durable), and
 * MARKs that a workload writes through ctl ("log mark NAME") right
 * after an acknowledgement (an fsync returned, a commit was
 * acknowledged).  A MARK's place in the log is the acknowledgement's:
 * every request the acknowledged operation waited for was logged before
 * it.  The loop device above the daemon turns a FUA write into a WRITE
 * and a FLUSH (it offers no FUA), so FUA entries never occur today; the
 * type exists and replays as a write durable on its own.  A power cut
 * ends the log (a CUT entry): what the disk holds after it is the cut's,
 * not the log's.
 *
 * File: the 32-byte header (magic "FKWLOG01", the image's size, 16
 * bytes zero), then entries: a 32-byte struct wlog_ent followed by its
 * len bytes of payload (a WRITE's data, a MARK's name).  Host byte
 * order.  Created 0600 with O_EXCL (never over an existing file).
 * Bounded: an entry that would take the file past its maximum is not
 * written; a FULL entry is, the log ends there, the daemon says so on
 * stderr ("write log full"), stat log_full becomes 1 and every later
 * ctl "log mark" fails with ENOSPC.  The disk itself goes on.
 *
 * Replay.  A replay point P (0 .. the number of entries) is the disk
 * as it could be after the entries before P: with F the last FLUSH
 * before P, every WRITE before F is applied in order (durable), each
 * FUA too; the WRITEs between F and P are what the cache held, applied
 * whole (subset seed 0: a prefix, dm-log-writes' replay) or as a random
 * subset of their 4 KiB blocks (seed != 0: each block either as it was
 * at F or with its newest data from (F, P), never in between: the
 * daemon's own subset cut, disk/cache.h).  The image starts as zeros:
 * the daemon refuses --write-log with --backing.
 */
#ifndef FK_DISK_WLOG_H
#define FK_DISK_WLOG_H

#include <stddef.h>
#include <stdint.h>

#define WLOG_MAGIC "FKWLOG01"
#define WLOG_ENT_MAGIC 0x45574b46u /* "FKWE" */
#define WLOG_HDR_BYTES 32u
#define WLOG_MARK_MAX 64u /* bytes of a MARK's name */

enum wlog_type {
	WLOG_WRITE = 1,
	WLOG_FLUSH = 2,
	WLOG_FUA = 3, /* a write durable on its own */
	WLOG_MARK = 4,
	WLOG_FLUSH_IGNORED = 5,
	WLOG_CUT = 6,
	WLOG_FULL = 7,
};

struct wlog_ent {
	uint32_t magic; /* WLOG_ENT_MAGIC */
	uint32_t type;	/* enum wlog_type */
	uint64_t seq;	/* 0, 1, 2, ... */
	uint64_t off;	/* bytes into the image (WRITE, FUA) */
	uint64_t len;	/* payload bytes that follow */
};

/* ---- writing (the daemon) ---- */

struct wlog_writer {
	int fd; /* -1: no log */
	uint64_t max, bytes, seq;
	int ended; /* full, cut or an I/O error of the log file */
	int full;
	int err; /* errno of a failed log write, 0 */
};

/* Create @path (O_EXCL, 0600) for an image of @size bytes, at most @max
 * bytes (>= 4 KiB).  0 or -errno (message printed). */
int wlog_open(struct wlog_writer *w, const char *path, uint64_t size,
	      uint64_t max);
/* Append one entry (no-op without a log or once it ended).  0, -ENOSPC
 * (the log is full now or was: a FULL entry ends it) or -errno. */
int wlog_append(struct wlog_writer *w, enum wlog_type type, uint64_t off,
		const void *data, uint64_t len);

/* ---- reading and replay (flushkit disk replay, the replay tests) ---- */

struct wlog_rec {
	uint32_t type;
	uint64_t off, len;
	uint64_t pos; /* of the payload in the file */
	char mark[WLOG_MARK_MAX + 1];
};

struct wlog {
	int fd;
	uint64_t size; /* the image's bytes */
	struct wlog_rec *v;
	size_t n;
	int full, cut; /* it ended with FULL / CUT */
	size_t flushes;
};

/* Read @path's entries (not their data).  0, or -errno with a message
 * in @err (a torn or foreign file is -EINVAL). */
int wlog_load(struct wlog *l, const char *path, char *err, size_t cap);
void wlog_close(struct wlog *l);
/* The entry index just after the @k-th FLUSH (1-based): the replay
 * point at that flush boundary.  (size_t)-1 if there are fewer. */
size_t wlog_flush_point(const struct wlog *l, size_t k);
/* The point just after the MARK named @name, (size_t)-1 if none. */
size_t wlog_mark_point(const struct wlog *l, const char *name);
/* The last FLUSH strictly before point @p ((size_t)-1: none). */
size_t wlog_last_flush(const struct wlog *l, size_t p);
/*
 * Write the image at replay point @p (see the banner; @subset_seed 0:
 * every write before @p) to @fd: truncated to 0 and to the image's size
 * first (a sparse file), then written.  0 or -errno (in @err).  Blocks.
 */
int wlog_replay(const struct wlog *l, size_t p, uint64_t subset_seed, int fd,
		char *err, size_t cap);
/* "WRITE", "FLUSH", ... */
const char *wlog_type_name(uint32_t type);

#endif
