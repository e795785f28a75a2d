// SPDX-License-Identifier: MIT
/*
 * hdd.c - the "hdd" model: a 7200 rpm SATA desktop disk of 2012-2016,
 * after the Seagate Barracuda 7200.14 1 TB (ST1000DM003: one 1 TB
 * platter, 64 MB cache, NCQ), the kind of disk the seeds' test machines
 * had (the seeds name no model; 000 ran on an SSD, 001-004 on "a disk").
 *
 * Published figures it is calibrated on (docs/disk.md has the table):
 *   - 7200 rpm: a revolution is 8.33 ms, average rotational latency
 *     4.16 ms (every 7200 rpm data sheet);
 *   - average seek 8.5 ms read, 9.5 ms write (Seagate Barracuda 7200.14
 *     product manual, from knowledge: no internet here; the 2 TB
 *     model's "average access time of 8.5ms" is quoted by ITProPortal's
 *     preview, 2013);
 *   - max sustained data rate OD 210 MB/s (Seagate's BarraCuda 1 TB
 *     data sheet, quoted by zaro.info); "average transfer rate 156 MB/s"
 *     (the 2 TB 7200.14, ITProPortal);
 *   - 64 MB multisegmented cache; SATA 6 Gb/s.
 *
 * What is modelled.  One actuator.  The device's span is the whole
 * stroke whatever its size (a 4 GiB lab disk seeks like a full 1 TB
 * disk under a full-span workload).  Bytes map onto HDD_ZONES zones of
 * equal capacity, outer first, whose bytes per track fall with the
 * radius (rate = OD rate * sqrt(1 - p (1 - k^2)), p the fraction of the
 * capacity before the zone, k the inner/outer radius ratio).  Seek time
 * from the track distance d of T tracks: 0 for d = 0, else
 * t2t + (full - t2t) * sqrt(d / T), plus a write settle for writes.
 * Rotation is positional: the platter's angle is time mod revolution
 * and a byte's angle is its offset in its track, so a request that
 * starts where the head is (sequential, sorted) waits for nothing.
 * NCQ: up to 32 commands in the drive, more wait in the host queue; the
 * head serves the queued reads and the oldest HDD_DESTAGE_WINDOW cached
 * writes in shortest-positioning-time-first order (with an age limit on
 * reads).  Track readahead after a read: the head goes on reading into
 * the buffer while idle, up to HDD_READAHEAD bytes, and a read that
 * starts there is served from it.
 *
 * Write cache (volatile, HDD_CACHE bytes).  A write is DONE when its
 * data crossed the link into the cache, DURABLE when the head wrote it;
 * a write that does not fit waits (in arrival order).  Overlapping
 * writes reach the medium in arrival order: a cached write is not
 * destaged while an older one overlapping it is still in the cache
 * (invariant H1), so the daemon, which applies DURABLE events in order,
 * never lets old data cover new.  FLUSH CACHE is a non-queued ATA
 * command: it waits until every command before it is DONE, holds every
 * command after it, and completes when no write that was in the cache
 * when it started is left (H2, which gives M2), plus HDD_FLUSH_NS.
 * With the cache off a write is DONE and DURABLE when the head wrote it.
 *
 * Requests: the model owns a request from submit to its DONE; after it
 * only its pointer is kept, to report DURABLE (the caller keeps the
 * request until then).  Events are produced in time order by
 * run_until(), which submit calls too (they wait in the outbox).
 */
#include "evlist.h"
#include "outbox.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameters: Seagate Barracuda 7200.14 1 TB (see above) ---- */
#define HDD_RPM 7200
#define HDD_OD_BPS 210e6     /* max sustained, outer zone */
#define HDD_RADIUS_RATIO 0.5 /* inner/outer data radius: ID ~105 MB/s */
#define HDD_ZONES 16
#define HDD_SEEK_T2T_NS 1000000ull     /* track to track, settle included */
#define HDD_SEEK_FULL_NS 15000000ull   /* full stroke; random avg 8.5 ms */
#define HDD_WRITE_SETTLE_NS 1000000ull /* write avg seek 9.5 ms */
#define HDD_CMD_NS 100000ull	       /* command overhead (firmware) */
#define HDD_LINK_BPS 600e6	       /* SATA 6 Gb/s, 8b/10b */
#define HDD_NCQ 32
#define HDD_CACHE (64ull << 20)
#define HDD_DESTAGE_WINDOW 32 /* cached writes the scheduler looks at */
#define HDD_READAHEAD (1ull << 20)
#define HDD_READ_AGE_NS 500000000ull	 /* a read older is served first */
#define HDD_FLUSH_NS 100000ull		 /* FLUSH CACHE's own cost */
#define HDD_MODEL_BYTES 1000204886016ull /* the 1 TB disk, for stats */

#define NS 1000000000.0

/* A write on its way to the medium: in the cache (cache on) or queued
 * for the head (write-through). */
struct hce {
	uint64_t off, len, seq, born_ns;
	struct dreq *r;
	int wt;	   /* write-through: DONE with DURABLE */
	int in_op; /* the head is writing it */
	struct hce *next, *prev;
};

struct zone {
	uint64_t start, bytes, bpt, first_track;
};

enum hop { OP_NONE, OP_READ, OP_WRITE };

struct hdd {
	uint64_t bytes, now;
	int write_cache;
	uint64_t rev_ns;
	struct zone zone[HDD_ZONES];
	uint64_t tracks;

	/* Host queue (beyond NCQ, or behind a flush): FIFO via m_next. */
	struct dreq *fifo, *fifo_tail;
	unsigned ncq_n;		  /* commands in the drive, not DONE */
	struct dreq *rd[HDD_NCQ]; /* reads waiting for the head */
	unsigned rd_n;
	struct dreq *wq, *wq_tail; /* writes waiting for cache space */
	struct dreq *flush;	   /* the active FLUSH CACHE */
	uint64_t flush_seq;	   /* H2: done when no hce seq <= this */
	struct evlist pend;	   /* DONE at a known time */

	struct hce *ch, *ct; /* media write set, arrival order */
	uint64_t hce_n, seq;
	uint64_t reserved; /* cache bytes taken (in flight + cached) */
	uint64_t cached;   /* cache bytes of DONE, not DURABLE writes */

	/* The head. */
	enum hop op;
	struct dreq *op_r;
	struct hce *op_e;
	uint64_t op_end, head_off, head_t;
	int ra; /* reading ahead from head_off since head_t */
	uint64_t link_free;

	struct outbox out;
	struct disk_model_stats st;
};

/* ---- geometry ---- */

static void geometry(struct hdd *m)
{
	double k2 = HDD_RADIUS_RATIO * HDD_RADIUS_RATIO;
	uint64_t zb = m->bytes / HDD_ZONES, start = 0, track = 0;
	m->rev_ns = (uint64_t)(60.0 * NS / HDD_RPM);
	for (int z = 0; z < HDD_ZONES; z++) {
		double p = (z + 0.5) / HDD_ZONES;
		double bps = HDD_OD_BPS * sqrt(1.0 - p * (1.0 - k2));
		struct zone *zn = &m->zone[z];
		zn->start = start;
		zn->bytes = z == HDD_ZONES - 1 ? m->bytes - start : zb;
		zn->bpt = (uint64_t)(bps * (double)m->rev_ns / NS);
		zn->first_track = track;
		track += (zn->bytes + zn->bpt - 1) / zn->bpt;
		start += zn->bytes;
	}
	m->tracks = track ? track : 1;
}

static const struct zone *zone_of(const struct hdd *m, uint64_t off)
{
	uint64_t zb = m->bytes / HDD_ZONES;
	uint64_t z = zb ? off / zb : 0;
	if (z >= HDD_ZONES)
		z = HDD_ZONES - 1;
	return &m->zone[z];
}

static uint64_t track_of(const struct hdd *m, uint64_t off)
{
	const struct zone *z = zone_of(m, off);
	return z->first_track + (off - z->start) / z->bpt;
}

/* The byte's angle, as the time into a revolution it passes the head. */
static uint64_t angle_ns(const struct hdd *m, uint64_t off)
{
	const struct zone *z = zone_of(m, off);
	uint64_t in = (off - z->start) % z->bpt;
	return (uint64_t)((double)in * (double)m->rev_ns / (double)z->bpt);
}

static uint64_t xfer_ns(const struct hdd *m, uint64_t off, uint64_t len)
{
	const struct zone *z = zone_of(m, off);
	return (uint64_t)((double)len * (double)m->rev_ns / (double)z->bpt);
}

static uint64_t link_ns(uint64_t len)
{
	return (uint64_t)((double)len * NS / HDD_LINK_BPS);
}

static uint64_t seek_ns(const struct hdd *m, uint64_t from, uint64_t to,
			int write)
{
	uint64_t a = track_of(m, from), b = track_of(m, to);
	uint64_t d = a > b ? a - b : b - a;
	if (!d)
		return 0;
	double x = (double)d / (double)m->tracks;
	return HDD_SEEK_T2T_NS +
	       (uint64_t)((double)(HDD_SEEK_FULL_NS - HDD_SEEK_T2T_NS) *
			  sqrt(x)) +
	       (write ? HDD_WRITE_SETTLE_NS : 0);
}

/* Where readahead has got to at @t (the head's position while idle). */
static uint64_t ra_end(const struct hdd *m, uint64_t t)
{
	if (!m->ra)
		return m->head_off;
	const struct zone *z = zone_of(m, m->head_off);
	uint64_t got = (uint64_t)((double)(t - m->head_t) * (double)z->bpt /
				  (double)m->rev_ns);
	if (got > HDD_READAHEAD)
		got = HDD_READAHEAD;
	if (m->head_off + got > m->bytes)
		got = m->bytes - m->head_off;
	return m->head_off + got;
}

/*
 * Positioning time (command, seek, rotation) of an access at @off
 * starting at @t.  A continuation of the head's last transfer (or of
 * readahead in progress) costs nothing: the platter is where it is
 * needed and the transfer goes on.
 */
static uint64_t position_ns(const struct hdd *m, uint64_t off, int write,
			    uint64_t t)
{
	if (m->head_t == t && off == m->head_off)
		return 0;
	if (!write && m->ra && off >= m->head_off && off <= ra_end(m, t))
		return 0;
	uint64_t from = m->ra ? ra_end(m, t) : m->head_off;
	uint64_t at = t + HDD_CMD_NS + seek_ns(m, from, off, write);
	uint64_t want = angle_ns(m, off), is = at % m->rev_ns;
	uint64_t wait = (want + m->rev_ns - is) % m->rev_ns;
	return at - t + wait;
}

/* ---- lists ---- */

static struct hce *hce_add(struct hdd *m, struct dreq *r, int wt)
{
	struct hce *e = calloc(1, sizeof(*e));
	if (!e) {
		m->out.oom = 1; /* advance aborts: M1 would break */
		return NULL;
	}
	e->off = r->off;
	e->len = r->len;
	e->r = r;
	e->wt = wt;
	e->seq = ++m->seq;
	e->born_ns = m->now;
	e->prev = m->ct;
	if (m->ct)
		m->ct->next = e;
	else
		m->ch = e;
	m->ct = e;
	m->hce_n++;
	return e;
}

static void hce_del(struct hdd *m, struct hce *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		m->ch = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		m->ct = e->prev;
	m->hce_n--;
	free(e);
}

/* H1: no older write in the set overlaps @e. */
static int hce_eligible(const struct hce *e)
{
	for (const struct hce *o = e->prev; o; o = o->prev)
		if (o->off < e->off + e->len && e->off < o->off + o->len)
			return 0;
	return 1;
}

/* ---- the simulation ---- */

static void emit(struct hdd *m, struct dreq *r, enum dreq_ev ev)
{
	outbox_put(&m->out, r, ev, m->now);
}

static void done_at(struct hdd *m, struct dreq *r, uint64_t t)
{
	r->m_done_ns = t;
	evlist_insert(&m->pend, r);
}

/* H2: the active flush may complete once the set holds no write that
 * was cached when it started. */
static void flush_check(struct hdd *m)
{
	if (!m->flush || m->flush->m_state)
		return;
	if (m->ch && m->ch->seq <= m->flush_seq)
		return;
	m->flush->m_state = 1; /* completing */
	done_at(m, m->flush, m->now + HDD_FLUSH_NS);
}

/* Move commands from the host queue into the drive. */
static void admit(struct hdd *m)
{
	while (m->fifo && !m->flush && m->ncq_n < HDD_NCQ) {
		struct dreq *r = m->fifo;
		if (r->op == DREQ_FLUSH) {
			if (m->ncq_n) /* non-queued: the queue drains first */
				break;
			fifo_pop(&m->fifo, &m->fifo_tail);
			m->flush = r;
			r->m_state = 0;
			m->flush_seq = m->seq;
			flush_check(m);
			break;
		}
		fifo_pop(&m->fifo, &m->fifo_tail);
		m->ncq_n++;
		if (r->op == DREQ_READ) {
			m->rd[m->rd_n++] = r;
		} else if (m->write_cache) {
			fifo_push(&m->wq, &m->wq_tail, r);
		} else {
			hce_add(m, r, 1);
		}
	}
	/* Writes into the cache, in order, while they fit. */
	while (m->wq) {
		struct dreq *r = m->wq;
		if (m->reserved && m->reserved + r->len > HDD_CACHE)
			break;
		fifo_pop(&m->wq, &m->wq_tail);
		m->reserved += r->len;
		uint64_t s = m->link_free > m->now ? m->link_free : m->now;
		m->link_free = s + HDD_CMD_NS / 4 + link_ns(r->len);
		r->m_state = 1; /* in the cache at DONE */
		done_at(m, r, m->link_free);
	}
}

/* Start the head on the candidate that is positioned soonest. */
static void dispatch(struct hdd *m)
{
	if (m->op != OP_NONE)
		return;
	uint64_t t = m->now, best = UINT64_MAX;
	int bi = -1, aged = 0;
	struct hce *be = NULL;
	/* An old read is served first (firmware aging). */
	for (unsigned i = 0; i < m->rd_n; i++)
		if (t - m->rd[i]->arrive_ns > HDD_READ_AGE_NS) {
			bi = (int)i;
			best = position_ns(m, m->rd[i]->off, 0, t);
			aged = 1;
			break;
		}
	for (unsigned i = 0; !aged && i < m->rd_n; i++) {
		uint64_t c = position_ns(m, m->rd[i]->off, 0, t);
		if (c < best) {
			best = c;
			bi = (int)i;
		}
	}
	if (best && !aged) {
		unsigned n = 0;
		for (struct hce *e = m->ch; e && n < HDD_DESTAGE_WINDOW;
		     e = e->next, n++) {
			if (!hce_eligible(e))
				continue;
			uint64_t c = position_ns(m, e->off, 1, t);
			if (c < best) {
				best = c;
				be = e;
			}
		}
	}
	if (best == UINT64_MAX)
		return; /* nothing to do: readahead goes on */
	uint64_t off, len;
	if (be) {
		be->in_op = 1;
		m->op = OP_WRITE;
		m->op_e = be;
		off = be->off;
		len = be->len;
		if (be->wt) /* its data crosses the link first */
			best += link_ns(len);
	} else {
		struct dreq *r = m->rd[bi];
		m->rd[bi] = m->rd[--m->rd_n];
		m->op = OP_READ;
		m->op_r = r;
		off = r->off;
		len = r->len;
		if (!best && m->ra && off >= m->head_off &&
		    off <= ra_end(m, t)) {
			/* from the buffer, then from the medium */
			uint64_t have = ra_end(m, t);
			uint64_t end = off + len;
			len = end > have ? end - have : 0;
			off = end - len;
			if (!len)
				best = HDD_CMD_NS / 4 + link_ns(r->len);
		}
	}
	if (best)
		m->st.seeks++; /* a positioning (seek, rotation) */
	else
		m->st.merged++; /* went on from the last transfer */
	m->ra = 0;
	uint64_t x = len ? xfer_ns(m, off, len) : 0;
	m->op_end = t + best + x;
	if (m->op_end == t)
		m->op_end = t + 1; /* M4: an event strictly later */
	m->st.busy_ns += m->op_end - t;
	m->head_off = off + len;
}

static void op_complete(struct hdd *m)
{
	m->head_t = m->now;
	if (m->op == OP_READ) {
		m->ncq_n--;
		emit(m, m->op_r, DREQ_EV_DONE);
		m->st.queued--;
		m->ra = 1;
	} else {
		struct hce *e = m->op_e;
		emit(m, e->r, DREQ_EV_DURABLE);
		if (e->wt) {
			m->ncq_n--;
			emit(m, e->r, DREQ_EV_DONE);
			m->st.queued--;
		} else {
			m->reserved -= e->len;
			m->cached -= e->len;
		}
		hce_del(m, e);
		flush_check(m);
	}
	m->op = OP_NONE;
	m->op_r = NULL;
	m->op_e = NULL;
}

static void pend_complete(struct hdd *m, struct dreq *r)
{
	if (r->op == DREQ_FLUSH) {
		m->flush = NULL;
		m->st.queued--;
		emit(m, r, DREQ_EV_DONE);
		return;
	}
	m->ncq_n--;
	m->st.queued--;
	if (r->op == DREQ_WRITE) {
		/* In the cache now: destage candidate from here on. */
		m->cached += r->len;
		emit(m, r, DREQ_EV_DONE);
		hce_add(m, r, 0);
		return;
	}
	emit(m, r, DREQ_EV_DONE); /* a read from the buffer */
}

static uint64_t next_ns(const struct hdd *m)
{
	uint64_t t = m->pend.head ? m->pend.head->m_done_ns : UINT64_MAX;
	if (m->op != OP_NONE && m->op_end < t)
		t = m->op_end;
	return t;
}

/* Process every internal event at or before @t, in time order. */
static void run_until(struct hdd *m, uint64_t t)
{
	for (;;) {
		uint64_t te = next_ns(m);
		if (te > t)
			break;
		m->now = te;
		if (m->op != OP_NONE && m->op_end == te &&
		    !(m->pend.head && m->pend.head->m_done_ns < te))
			op_complete(m);
		else
			pend_complete(m, evlist_pop(&m->pend));
		admit(m);
		dispatch(m);
	}
	if (t > m->now)
		m->now = t;
}

/* ---- interface ---- */

static void *hdd_create(uint64_t bytes, const char *arg, int write_cache,
			int *err)
{
	if ((arg && *arg) || bytes < (1u << 20)) {
		*err = EINVAL;
		return NULL;
	}
	struct hdd *m = calloc(1, sizeof(*m));
	if (!m) {
		*err = ENOMEM;
		return NULL;
	}
	m->bytes = bytes;
	m->write_cache = write_cache;
	geometry(m);
	m->st.cache_limit = write_cache ? HDD_CACHE : 0;
	return m;
}

static void hdd_destroy(void *mp)
{
	struct hdd *m = mp;
	while (m->ch)
		hce_del(m, m->ch);
	outbox_release(&m->out);
	free(m);
}

static void hdd_submit(void *mp, struct dreq *r)
{
	struct hdd *m = mp;
	run_until(m, r->arrive_ns);
	r->m_state = 0;
	r->m_next = r->m_prev = NULL;
	m->st.queued++;
	fifo_push(&m->fifo, &m->fifo_tail, r);
	admit(m);
	dispatch(m);
}

static uint64_t hdd_advance(void *mp, uint64_t now, dreq_event_fn fn, void *ctx)
{
	struct hdd *m = mp;
	run_until(m, now);
	outbox_flush(&m->out, fn, ctx);
	return next_ns(m);
}

static void hdd_stats(void *mp, struct disk_model_stats *out)
{
	struct hdd *m = mp;
	*out = m->st;
	out->cache_bytes = m->cached;
}

const struct disk_model disk_model_hdd = {
    .name = "hdd",
    .imitates = "7200 rpm SATA disk, 64 MB cache, NCQ (Seagate Barracuda "
		"7200.14 1 TB)",
    /* 210 MB/s outer zone; ~153 IOPS random past the cache */
    .nominal_write_bps = 210ull * 1000 * 1000,
    .nominal_write_iops = 150,
    .create = hdd_create,
    .destroy = hdd_destroy,
    .submit = hdd_submit,
    .advance = hdd_advance,
    .stats = hdd_stats,
};
