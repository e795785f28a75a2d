// SPDX-License-Identifier: MIT
/*
 * wlog.c - the lab disk's write log and its replay (see wlog.h).
 */
#include "wlog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WLOG_BLOCK 4096u

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int wlog_open(struct wlog_writer *w, const char *path, uint64_t size,
	      uint64_t max)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (max < 4096) {
		fprintf(stderr,
			"flushkit-diskd: write log maximum %" PRIu64
			" bytes: below 4096\n",
			max);
		return -EINVAL;
	}
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, "flushkit-diskd: write log '%s': %s\n", path,
			strerror(e));
		return -e;
	}
	unsigned char hdr[WLOG_HDR_BYTES] = {0};
	memcpy(hdr, WLOG_MAGIC, 8);
	memcpy(hdr + 8, &size, 8);
	int r = write_all(fd, hdr, sizeof(hdr));
	if (r) {
		fprintf(stderr, "flushkit-diskd: write log '%s': %s\n", path,
			strerror(-r));
		close(fd);
		unlink(path);
		return r;
	}
	w->fd = fd;
	w->max = max;
	w->bytes = WLOG_HDR_BYTES;
	return 0;
}

static int put(struct wlog_writer *w, enum wlog_type type, uint64_t off,
	       const void *data, uint64_t len)
{
	struct wlog_ent e = {.magic = WLOG_ENT_MAGIC,
			     .type = (uint32_t)type,
			     .seq = w->seq,
			     .off = off,
			     .len = len};
	int r = write_all(w->fd, &e, sizeof(e));
	if (!r && len)
		r = write_all(w->fd, data, (size_t)len);
	if (r) {
		w->err = -r;
		w->ended = 1;
		fprintf(stderr,
			"flushkit-diskd: write log: %s at entry %" PRIu64
			": the log ends there\n",
			strerror(-r), w->seq);
		return r;
	}
	w->seq++;
	w->bytes += sizeof(e) + len;
	return 0;
}

int wlog_append(struct wlog_writer *w, enum wlog_type type, uint64_t off,
		const void *data, uint64_t len)
{
	if (w->fd < 0)
		return 0;
	if (w->ended)
		return w->full ? -ENOSPC : 0;
	/* Room for this entry and the FULL that would end the log. */
	uint64_t need = 2 * sizeof(struct wlog_ent) + len;
	if (w->bytes + need > w->max) {
		put(w, WLOG_FULL, 0, NULL, 0);
		w->ended = 1;
		w->full = 1;
		fprintf(stderr,
			"flushkit-diskd: write log full: %" PRIu64
			" bytes of at most %" PRIu64 " after %" PRIu64
			" entries; the log ends there (the disk goes on; "
			"give a larger --write-log-max)\n",
			w->bytes, w->max, w->seq);
		return -ENOSPC;
	}
	int r = put(w, type, off, data, len);
	if (!r && type == WLOG_CUT)
		w->ended = 1;
	return r;
}

/* ---- reading ---- */

const char *wlog_type_name(uint32_t type)
{
	static const char *const names[] = {"?",   "WRITE", "FLUSH",
					    "FUA", "MARK",  "FLUSH_IGNORED",
					    "CUT", "FULL"};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

void wlog_close(struct wlog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	free(l->v);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

int wlog_load(struct wlog *l, const char *path, char *err, size_t cap)
{
	memset(l, 0, sizeof(*l));
	l->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l->fd < 0) {
		int e = errno;
		snprintf(err, cap, "'%s': %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	unsigned char hdr[WLOG_HDR_BYTES];
	if (fstat(l->fd, &st) || st.st_size < (off_t)WLOG_HDR_BYTES ||
	    pread_all(l->fd, hdr, sizeof(hdr), 0) ||
	    memcmp(hdr, WLOG_MAGIC, 8)) {
		snprintf(err, cap, "'%s': not a flushkit write log", path);
		wlog_close(l);
		return -EINVAL;
	}
	memcpy(&l->size, hdr + 8, 8);
	uint64_t pos = WLOG_HDR_BYTES, end = (uint64_t)st.st_size;
	size_t cap_v = 0;
	while (pos < end) {
		struct wlog_ent e;
		if (end - pos < sizeof(e) ||
		    pread_all(l->fd, &e, sizeof(e), pos) ||
		    e.magic != WLOG_ENT_MAGIC || e.seq != l->n ||
		    e.len > end - pos - sizeof(e) || e.type < WLOG_WRITE ||
		    e.type > WLOG_FULL ||
		    ((e.type == WLOG_WRITE || e.type == WLOG_FUA) &&
		     (e.off > l->size || e.len > l->size - e.off))) {
			snprintf(err, cap,
				 "'%s': entry %zu at byte %" PRIu64
				 " is torn or not an entry",
				 path, l->n, pos);
			wlog_close(l);
			return -EINVAL;
		}
		if (l->n == cap_v) {
			cap_v = cap_v ? cap_v * 2 : 1024;
			struct wlog_rec *v = realloc(l->v, cap_v * sizeof(*v));
			if (!v) {
				snprintf(err, cap, "out of memory");
				wlog_close(l);
				return -ENOMEM;
			}
			l->v = v;
		}
		struct wlog_rec *r = &l->v[l->n++];
		memset(r, 0, sizeof(*r));
		r->type = e.type;
		r->off = e.off;
		r->len = e.len;
		r->pos = pos + sizeof(e);
		if (e.type == WLOG_MARK) {
			size_t k = e.len < WLOG_MARK_MAX ? (size_t)e.len
							 : WLOG_MARK_MAX;
			if (pread_all(l->fd, r->mark, k, r->pos)) {
				snprintf(err, cap, "'%s': read error", path);
				wlog_close(l);
				return -EIO;
			}
		}
		l->flushes += e.type == WLOG_FLUSH;
		l->full |= e.type == WLOG_FULL;
		l->cut |= e.type == WLOG_CUT;
		pos = r->pos + e.len;
	}
	return 0;
}

size_t wlog_flush_point(const struct wlog *l, size_t k)
{
	for (size_t i = 0; i < l->n && k; i++)
		if (l->v[i].type == WLOG_FLUSH && --k == 0)
			return i + 1;
	return (size_t)-1;
}

size_t wlog_mark_point(const struct wlog *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].type == WLOG_MARK && !strcmp(l->v[i].mark, name))
			return i + 1;
	return (size_t)-1;
}

size_t wlog_last_flush(const struct wlog *l, size_t p)
{
	if (p > l->n)
		p = l->n;
	while (p--)
		if (l->v[p].type == WLOG_FLUSH)
			return p;
	return (size_t)-1;
}

/* splitmix64 (Steele, Lea, Flood 2014) of the seed and the block: one
 * coin per block, the same for every write of it. */
static int keep_block(uint64_t seed, uint64_t block)
{
	uint64_t z = seed + (block + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (int)(z & 1);
}

static int apply(const struct wlog *l, const struct wlog_rec *r, int fd,
		 uint64_t subset_seed, char **buf, size_t *bcap)
{
	if (*bcap < r->len) {
		char *b = realloc(*buf, (size_t)r->len);
		if (!b)
			return -ENOMEM;
		*buf = b;
		*bcap = (size_t)r->len;
	}
	int e = pread_all(l->fd, *buf, (size_t)r->len, r->pos);
	if (e)
		return e;
	if (!subset_seed)
		return pwrite_all(fd, *buf, (size_t)r->len, r->off);
	/* Block by block, each kept or not by its coin. */
	uint64_t o = r->off, end = r->off + r->len;
	while (o < end) {
		uint64_t bend = (o / WLOG_BLOCK + 1) * WLOG_BLOCK;
		if (bend > end)
			bend = end;
		if (keep_block(subset_seed, o / WLOG_BLOCK)) {
			e = pwrite_all(fd, *buf + (o - r->off),
				       (size_t)(bend - o), o);
			if (e)
				return e;
		}
		o = bend;
	}
	return 0;
}

int wlog_replay(const struct wlog *l, size_t p, uint64_t subset_seed, int fd,
		char *err, size_t cap)
{
	if (p > l->n) {
		snprintf(err, cap, "point %zu: the log has %zu entries", p,
			 l->n);
		return -ERANGE;
	}
	if (ftruncate(fd, 0) || ftruncate(fd, (off_t)l->size)) {
		int e = errno;
		snprintf(err, cap, "image: truncate: %s", strerror(e));
		return -e;
	}
	size_t f = wlog_last_flush(l, p);
	char *buf = NULL;
	size_t bcap = 0;
	int r = 0;
	for (size_t i = 0; i < p && !r; i++) {
		const struct wlog_rec *e = &l->v[i];
		if (e->type != WLOG_WRITE && e->type != WLOG_FUA)
			continue;
		int durable = (f != (size_t)-1 && i < f) || e->type == WLOG_FUA;
		r = apply(l, e, fd, durable ? 0 : subset_seed, &buf, &bcap);
		if (r)
			snprintf(err, cap, "entry %zu: %s", i, strerror(-r));
	}
	free(buf);
	return r;
}
