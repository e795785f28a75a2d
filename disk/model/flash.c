// SPDX-License-Identifier: MIT
/*
 * flash.c - the flash-drive engine of the ssd and nvme models (the
 * design and its invariants F1-F3 are in flash.h).
 *
 * Interface routines: flash_create, flash_destroy, flash_submit,
 * flash_advance, flash_stats.
 */
#include "flash.h"
#include "evlist.h"
#include "outbox.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NS 1000000000.0
#define MAX_CORES 8

/* A write in the buffer stream: bytes [b0, b1) of it. */
struct fent {
	uint64_t b0, b1, len;
	struct dreq *r;
	int wt; /* write-through: DONE with DURABLE */
	struct fent *next;
};

/* A page program in progress: stream bytes [s, e). */
struct prog {
	uint64_t s, e, end_ns;
};

struct flash {
	struct flash_par p;
	uint64_t bytes, now;
	int write_cache;

	struct dreq *fifo, *fifo_tail; /* host queue, via m_next */
	unsigned qn;		       /* commands in the drive, not DONE */
	struct dreq *wq, *wq_tail;     /* writes waiting for buffer room */
	struct dreq *barrier;	       /* the active non-queued flush */
	struct dreq *fl, *fl_tail;     /* flushes waiting; target in
					* m_start_ns (F2) */
	struct evlist pend;	       /* DONE at a known time */

	uint64_t core_free[MAX_CORES];
	uint64_t *die_free, *ch_free;
	uint64_t link_free[2]; /* [0] host to drive, [1] drive to host */

	struct fent *eh, *et; /* the buffer stream, arrival order */
	uint64_t in_bytes;    /* stream bytes in the buffer so far */
	uint64_t disp;	      /* stream bytes given to programs */
	uint64_t used;	      /* buffer bytes reserved, not DURABLE */
	uint64_t cached;      /* of DONE writes, not DURABLE */
	struct prog *prog;
	unsigned nprog, rr;

	uint64_t slc_used;
	int idle;
	uint64_t idle_since, busy_since;

	struct outbox out;
	struct disk_model_stats st;
};

static uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t bytes_ns(uint64_t len, double bps)
{
	return (uint64_t)((double)len * NS / bps);
}

static void emit(struct flash *m, struct dreq *r, enum dreq_ev ev)
{
	outbox_put(&m->out, r, ev, m->now);
}

static void done_at(struct flash *m, struct dreq *r, uint64_t t)
{
	r->m_done_ns = t > m->now ? t : m->now + 1;
	evlist_insert(&m->pend, r);
}

/* A controller core for a command arriving at @t; returns when its
 * processing ends. */
static uint64_t core_take(struct flash *m, uint64_t t, uint64_t cost)
{
	unsigned c = 0;
	for (unsigned i = 1; i < m->p.ctrl_cores; i++)
		if (m->core_free[i] < m->core_free[c])
			c = i;
	uint64_t s = max64(t, m->core_free[c]);
	m->core_free[c] = s + cost;
	return s + cost;
}

static uint64_t link_take(struct flash *m, int dir, uint64_t t, uint64_t len)
{
	int l = m->p.half_duplex ? 0 : dir;
	uint64_t s = max64(t, m->link_free[l]);
	m->link_free[l] = s + bytes_ns(len, m->p.link_bps);
	return m->link_free[l];
}

/* A read: its pages on their dies (striped by LBA), their channels,
 * then the link.  Everything is placed now (reads go before programs
 * not yet started). */
static void read_issue(struct flash *m, struct dreq *r)
{
	const struct flash_par *p = &m->p;
	uint64_t t = core_take(m, m->now, p->ctrl_read_ns) + p->lat_read_ns;
	uint64_t first = UINT64_MAX, last = t;
	uint64_t off = r->off, end = r->off + r->len;
	while (off < end) {
		uint64_t pg = off / p->page_bytes;
		uint64_t n = (pg + 1) * p->page_bytes - off;
		if (n > end - off)
			n = end - off;
		unsigned d = (unsigned)(pg % p->dies), c = d % p->channels;
		uint64_t de = max64(t, m->die_free[d]) + p->t_read_ns;
		m->die_free[d] = de;
		uint64_t ce = max64(de, m->ch_free[c]) + bytes_ns(n, p->ch_bps);
		m->ch_free[c] = ce;
		first = ce < first ? ce : first;
		last = ce > last ? ce : last;
		off += n;
	}
	if (first == UINT64_MAX)
		first = t;
	/* The link streams from the first page on, not before the last. */
	uint64_t le = link_take(m, 1, first, r->len);
	uint64_t tail =
	    last + bytes_ns(r->len < p->page_bytes ? r->len : p->page_bytes,
			    p->link_bps);
	done_at(m, r, max64(le, tail));
}

static uint64_t frontier(const struct flash *m)
{
	uint64_t f = m->disp;
	for (unsigned i = 0; i < m->nprog; i++)
		if (m->prog[i].s < f)
			f = m->prog[i].s;
	return f;
}

/* F2: flushes whose target is programmed complete after flush_ns. */
static void flush_check(struct flash *m)
{
	uint64_t f = frontier(m);
	while (m->fl && m->fl->m_start_ns <= f) {
		struct dreq *r = fifo_pop(&m->fl, &m->fl_tail);
		done_at(m, r, m->now + m->p.flush_ns);
	}
}

static void admit(struct flash *m)
{
	const struct flash_par *p = &m->p;
	while (m->fifo && !m->barrier && m->qn < p->queue_depth) {
		struct dreq *r = m->fifo;
		if (r->op == DREQ_FLUSH && p->flush_barrier && m->qn)
			break; /* non-queued: the queue drains first */
		fifo_pop(&m->fifo, &m->fifo_tail);
		m->qn++;
		if (r->op == DREQ_READ) {
			read_issue(m, r);
		} else if (r->op == DREQ_WRITE) {
			fifo_push(&m->wq, &m->wq_tail, r);
		} else {
			if (p->flush_barrier)
				m->barrier = r;
			r->m_start_ns = m->in_bytes; /* F2 */
			fifo_push(&m->fl, &m->fl_tail, r);
			flush_check(m);
		}
	}
	/* Writes into the buffer, in order (F1), while they fit. */
	while (m->wq) {
		struct dreq *r = m->wq;
		if (m->used && m->used + r->len > p->cache_bytes)
			break;
		fifo_pop(&m->wq, &m->wq_tail);
		m->used += r->len;
		uint64_t t = core_take(m, m->now, p->ctrl_write_ns);
		t = link_take(m, 0, t, r->len) + p->lat_write_ns;
		done_at(m, r, t);
	}
}

/* Program buffered data on every free die. */
static void program(struct flash *m)
{
	const struct flash_par *p = &m->p;
	while (m->disp < m->in_bytes && m->nprog < p->dies) {
		unsigned d = p->dies;
		for (unsigned i = 0; i < p->dies; i++) {
			unsigned j = (m->rr + i) % p->dies;
			if (m->die_free[j] <= m->now) {
				d = j;
				break;
			}
		}
		if (d == p->dies)
			return;
		m->rr = (d + 1) % p->dies;
		uint64_t n = m->in_bytes - m->disp;
		/* A page holds page_bytes of the stream; a part page when
		 * that is all there is. */
		uint64_t room = p->page_bytes - m->disp % p->page_bytes;
		if (n > room)
			n = room;
		uint64_t tp = p->t_prog_tlc_ns;
		if (m->slc_used + n <= p->slc_bytes) {
			m->slc_used += n;
			tp = p->t_prog_slc_ns;
		}
		unsigned c = d % p->channels;
		uint64_t ce =
		    max64(m->now, m->ch_free[c]) + bytes_ns(n, p->ch_bps);
		m->ch_free[c] = ce;
		m->die_free[d] = ce + tp;
		m->prog[m->nprog++] =
		    (struct prog){m->disp, m->disp + n, ce + tp};
		m->disp += n;
	}
}

static void prog_complete(struct flash *m, unsigned i)
{
	m->prog[i] = m->prog[--m->nprog];
	uint64_t f = frontier(m);
	while (m->eh && m->eh->b1 <= f) { /* F1 */
		struct fent *e = m->eh;
		m->eh = e->next;
		if (!m->eh)
			m->et = NULL;
		emit(m, e->r, DREQ_EV_DURABLE);
		if (e->wt) {
			m->qn--;
			m->st.queued--;
			emit(m, e->r, DREQ_EV_DONE);
		} else {
			m->cached -= e->len;
		}
		m->used -= e->len;
		free(e);
	}
	flush_check(m);
}

static void pend_complete(struct flash *m, struct dreq *r)
{
	if (r->op == DREQ_FLUSH) {
		if (m->barrier == r)
			m->barrier = NULL;
		m->qn--;
		m->st.queued--;
		emit(m, r, DREQ_EV_DONE);
		return;
	}
	if (r->op == DREQ_READ) {
		m->qn--;
		m->st.queued--;
		emit(m, r, DREQ_EV_DONE);
		return;
	}
	/* A write's data is in the buffer. */
	struct fent *e = calloc(1, sizeof(*e));
	if (!e) {
		m->out.oom = 1; /* advance aborts: M1 would break */
		return;
	}
	e->b0 = m->in_bytes;
	e->b1 = m->in_bytes += r->len;
	e->len = r->len;
	e->r = r;
	e->wt = !m->write_cache;
	if (m->et)
		m->et->next = e;
	else
		m->eh = e;
	m->et = e;
	if (r->len && m->eh != e && e->b0 % m->p.page_bytes)
		m->st.merged++; /* shares a page with the write before */
	if (!e->wt) {
		m->cached += r->len;
		m->qn--;
		m->st.queued--;
		emit(m, r, DREQ_EV_DONE);
	}
	if (!r->len) /* nothing to program: durable at once */
		prog_complete(m, m->nprog++); /* with a dummy slot */
}

static uint64_t next_ns(const struct flash *m, unsigned *pi)
{
	uint64_t t = m->pend.head ? m->pend.head->m_done_ns : UINT64_MAX;
	*pi = m->p.dies;
	for (unsigned i = 0; i < m->nprog; i++)
		if (m->prog[i].end_ns < t ||
		    (m->prog[i].end_ns == t && *pi == m->p.dies &&
		     !(m->pend.head && m->pend.head->m_done_ns == t))) {
			t = m->prog[i].end_ns;
			*pi = i;
		}
	return t;
}

static int is_idle(const struct flash *m)
{
	return !m->qn && !m->fifo && !m->nprog && !m->pend.head &&
	       m->disp == m->in_bytes;
}

static void run_until(struct flash *m, uint64_t t)
{
	for (;;) {
		unsigned pi;
		uint64_t te = next_ns(m, &pi);
		if (te > t)
			break;
		m->now = te;
		if (pi < m->p.dies)
			prog_complete(m, pi);
		else
			pend_complete(m, evlist_pop(&m->pend));
		admit(m);
		program(m);
		if (is_idle(m) && !m->idle) {
			m->idle = 1;
			m->idle_since = m->now;
			m->st.busy_ns += m->now - m->busy_since;
		}
	}
	if (t > m->now)
		m->now = t;
}

/* SLC drained into TLC while the drive was idle. */
static uint64_t slc_now(const struct flash *m, uint64_t t)
{
	if (!m->idle || t <= m->idle_since)
		return m->slc_used;
	double d = (double)(t - m->idle_since) * m->p.slc_drain_bps / NS;
	return d >= (double)m->slc_used ? 0 : m->slc_used - (uint64_t)d;
}

/* The model's argument: "slc=SIZE", SIZE digits with an optional K, M
 * or G (2^10, 2^20, 2^30), at least one page: the SLC buffer scaled
 * down, so that its run-out is seen in a short run (the calibration
 * through the real stack, docs/disk.md).  NULL or "": the table's. */
static int parse_arg(const char *arg, uint64_t page, uint64_t *slc)
{
	if (!arg || !*arg)
		return 0;
	if (strncmp(arg, "slc=", 4))
		return -EINVAL;
	const char *s = arg + 4;
	uint64_t v = 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	unsigned shift = 0;
	if (*s == 'K' || *s == 'k')
		shift = 10;
	else if (*s == 'M' || *s == 'm')
		shift = 20;
	else if (*s == 'G' || *s == 'g')
		shift = 30;
	if (shift)
		s++;
	if (*s || v > UINT64_MAX >> shift || (v << shift) < page)
		return -EINVAL;
	*slc = v << shift;
	return 0;
}

void *flash_create(const struct flash_par *p, uint64_t bytes, const char *arg,
		   int write_cache, int *err)
{
	uint64_t slc = p->slc_bytes;
	if (parse_arg(arg, p->page_bytes, &slc) || !bytes ||
	    p->ctrl_cores > MAX_CORES || !p->ctrl_cores || !p->dies ||
	    !p->channels || !p->page_bytes) {
		*err = EINVAL;
		return NULL;
	}
	struct flash *m = calloc(1, sizeof(*m));
	if (!m) {
		*err = ENOMEM;
		return NULL;
	}
	m->p = *p;
	m->p.slc_bytes = slc;
	m->bytes = bytes;
	m->write_cache = write_cache;
	m->die_free = calloc(p->dies, sizeof(*m->die_free));
	m->ch_free = calloc(p->channels, sizeof(*m->ch_free));
	m->prog = calloc(p->dies + 1, sizeof(*m->prog));
	if (!m->die_free || !m->ch_free || !m->prog) {
		flash_destroy(m);
		*err = ENOMEM;
		return NULL;
	}
	m->idle = 1;
	m->st.cache_limit = write_cache ? p->cache_bytes : 0;
	m->st.slc_limit = slc;
	return m;
}

void flash_destroy(void *mp)
{
	struct flash *m = mp;
	while (m->eh) {
		struct fent *e = m->eh;
		m->eh = e->next;
		free(e);
	}
	outbox_release(&m->out);
	free(m->die_free);
	free(m->ch_free);
	free(m->prog);
	free(m);
}

void flash_submit(void *mp, struct dreq *r)
{
	struct flash *m = mp;
	run_until(m, r->arrive_ns);
	if (m->idle) {
		m->slc_used = slc_now(m, m->now);
		m->idle = 0;
		m->busy_since = m->now;
	}
	r->m_state = 0;
	m->st.queued++;
	fifo_push(&m->fifo, &m->fifo_tail, r);
	admit(m);
	program(m);
}

uint64_t flash_advance(void *mp, uint64_t now, dreq_event_fn fn, void *ctx)
{
	struct flash *m = mp;
	unsigned pi;
	run_until(m, now);
	outbox_flush(&m->out, fn, ctx);
	return next_ns(m, &pi);
}

void flash_stats(void *mp, struct disk_model_stats *out)
{
	struct flash *m = mp;
	*out = m->st;
	out->cache_bytes = m->cached;
	out->slc_used = slc_now(m, m->now);
}
