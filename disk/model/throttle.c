// SPDX-License-Identifier: MIT
/*
 * throttle.c - the "throttle:BPS:IOPS" model: what the cgroup v1 blkio
 * write throttle made of a loop device before flushkit disk existed,
 * kept to compare against.  One FIFO for writes: each write waits for
 * the one before it and then takes max(len / BPS, 1 / IOPS); a limit of
 * 0 is no limit on that axis.  Reads are not throttled (the old
 * profiles throttled writes only) and a flush completes when the writes
 * before it have.  No volatile cache: a write is durable when it
 * completes.  Like blkio it counts each request before any merge; unlike
 * blkio it has no host disk below it (the image is in RAM), so the only
 * cost is the throttle's.
 *
 * The old names map onto it: the old --device=hdd was throttle:150M:150,
 * the old ssd throttle:500M:50000 (docs/disk.md).
 *
 * Interface: disk_model_throttle; disk_throttle_parse, the one parser
 * of a "BPS:IOPS" value in the tree (bench/lib/disk.c uses it too).
 */
#include "evlist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_count(const char *s, const char *end, uint64_t mult,
		       uint64_t *out)
{
	uint64_t v = 0;
	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v && mult > UINT64_MAX / v)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

/* BPS: digits with an optional decimal suffix k/K, M or G (10^3, 10^6,
 * 10^9), then optionally "B" or "B/s"; IOPS: digits.  0 = no limit on
 * that axis, not both. */
int disk_throttle_parse(const char *s, uint64_t *bps, uint64_t *iops)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	if (!colon)
		return -EINVAL;
	const char *e = colon;
	if (e - s >= 3 && !strncmp(e - 3, "B/s", 3))
		e -= 3;
	else if (e - s >= 1 && e[-1] == 'B')
		e -= 1;
	uint64_t mult = 1;
	if (e > s) {
		switch (e[-1]) {
		case 'k':
		case 'K':
			mult = 1000;
			e--;
			break;
		case 'M':
			mult = 1000 * 1000;
			e--;
			break;
		case 'G':
			mult = 1000 * 1000 * 1000;
			e--;
			break;
		}
	}
	if (parse_count(s, e, mult, bps) ||
	    parse_count(colon + 1, colon + 1 + strlen(colon + 1), 1, iops))
		return -EINVAL;
	if (!*bps && !*iops)
		return -EINVAL;
	return 0;
}

struct throttle {
	uint64_t bps, iops;
	uint64_t write_free_ns; /* when the FIFO's last write completes */
	struct evlist due;
	struct disk_model_stats st;
};

static void *throttle_create(uint64_t bytes, const char *arg, int write_cache,
			     int *err)
{
	(void)bytes;
	(void)write_cache;
	uint64_t bps, iops;
	if (disk_throttle_parse(arg, &bps, &iops)) {
		*err = EINVAL;
		return NULL;
	}
	struct throttle *m = calloc(1, sizeof(*m));
	if (!m) {
		*err = ENOMEM;
		return NULL;
	}
	m->bps = bps;
	m->iops = iops;
	return m;
}

static void throttle_destroy(void *m)
{
	free(m);
}

static void throttle_submit(void *mp, struct dreq *r)
{
	struct throttle *m = mp;
	if (r->op == DREQ_WRITE) {
		uint64_t t = 0;
		if (m->bps)
			t = (uint64_t)((double)r->len * 1e9 / (double)m->bps);
		if (m->iops && 1000000000ull / m->iops > t)
			t = 1000000000ull / m->iops;
		uint64_t start = m->write_free_ns > r->arrive_ns
				     ? m->write_free_ns
				     : r->arrive_ns;
		r->m_start_ns = start;
		r->m_done_ns = start + t;
		m->write_free_ns = r->m_done_ns;
		m->st.busy_ns += t;
	} else if (r->op == DREQ_FLUSH) {
		r->m_start_ns = r->arrive_ns;
		r->m_done_ns = m->write_free_ns > r->arrive_ns
				   ? m->write_free_ns
				   : r->arrive_ns;
	} else {
		r->m_start_ns = r->m_done_ns = r->arrive_ns;
	}
	evlist_insert(&m->due, r);
}

static uint64_t throttle_advance(void *mp, uint64_t now, dreq_event_fn fn,
				 void *ctx)
{
	struct throttle *m = mp;
	return evlist_advance(&m->due, now, fn, ctx);
}

static void throttle_stats(void *mp, struct disk_model_stats *out)
{
	struct throttle *m = mp;
	*out = m->st;
	out->queued = m->due.n;
}

const struct disk_model disk_model_throttle = {
    .name = "throttle",
    .imitates = "the cgroup v1 blkio write throttle (one FIFO, writes only)",
    /* its arguments (disk_throttle_parse): set by the caller */
    .nominal_write_bps = 0,
    .nominal_write_iops = 0,
    .create = throttle_create,
    .destroy = throttle_destroy,
    .submit = throttle_submit,
    .advance = throttle_advance,
    .stats = throttle_stats,
};
