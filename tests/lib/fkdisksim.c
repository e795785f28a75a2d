// SPDX-License-Identifier: MIT
/*
 * fkdisksim.c - a closed-loop workload in simulated time on a lab-disk
 * model, with the model contract M1-M4 checked on every event (see
 * fkdisksim.h and disk/model.h).
 */
#include "fkdisksim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sreq {
	struct dreq r;
	int done, durable, slot, end_flush;
	uint64_t done_at, done_call, durable_at, durable_call;
	uint64_t *must; /* M2: writes DONE, not DURABLE, at submit */
	size_t nmust;
	struct sreq *nd_next, *nd_prev; /* the DONE, not DURABLE list */
};

struct sim {
	const struct fkds_opts *o;
	struct fkds_res *res;
	const struct disk_model *dm;
	void *m;
	uint64_t now, last_at, call, next_id, issued, seq_off, rng;
	uint64_t outstanding; /* submitted, not DONE */
	char *durable;	      /* by id */
	uint64_t nid;
	struct sreq *nd; /* DONE, not DURABLE */
	uint64_t nnd;
	int *ready, *last_write; /* slots whose request is DONE */
	unsigned nready;
	int end_flush_issued;
	double lat_sum, flush_sum;
};

#define VIOL(s, ...)                                                           \
	do {                                                                   \
		if ((s)->res->violations++ < 20) {                             \
			fprintf(stderr, "%s: contract: ", (s)->dm->name);      \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
		}                                                              \
	} while (0)

static void hash(struct sim *s, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		s->res->trace_hash ^= (v >> (8 * i)) & 0xff;
		s->res->trace_hash *= 0x100000001b3ull;
	}
}

static uint64_t rnd(struct sim *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545F4914F6CDD1Dull;
}

static void nd_del(struct sim *s, struct sreq *q)
{
	if (q->nd_prev)
		q->nd_prev->nd_next = q->nd_next;
	else
		s->nd = q->nd_next;
	if (q->nd_next)
		q->nd_next->nd_prev = q->nd_prev;
	s->nnd--;
}

static void maybe_free(struct sreq *q)
{
	if (q->done && (q->r.op != DREQ_WRITE || q->durable)) {
		free(q->must);
		free(q);
	}
}

static void on_event(void *ctx, struct dreq *r, enum dreq_ev ev, uint64_t at)
{
	struct sim *s = ctx;
	struct sreq *q = (struct sreq *)r;
	const struct fkds_opts *o = s->o;
	if (at > s->now)
		VIOL(s, "M3: event at %llu after advance(%llu)",
		     (unsigned long long)at, (unsigned long long)s->now);
	if (at < s->last_at)
		VIOL(s, "M3: event at %llu before an earlier one at %llu",
		     (unsigned long long)at, (unsigned long long)s->last_at);
	s->last_at = at;
	hash(s, r->id);
	hash(s, (uint64_t)ev);
	hash(s, at);
	if (ev == DREQ_EV_DURABLE) {
		if (r->op != DREQ_WRITE || q->durable) {
			VIOL(s, "M1: DURABLE of id %llu (%s)",
			     (unsigned long long)r->id,
			     q->durable ? "twice" : "not a write");
			return;
		}
		if (at < r->arrive_ns)
			VIOL(s, "M1: id %llu DURABLE at %llu before arrival",
			     (unsigned long long)r->id, (unsigned long long)at);
		q->durable = 1;
		q->durable_at = at;
		q->durable_call = s->call;
		s->durable[r->id] = 1;
		if (q->done) {
			nd_del(s, q);
			s->res->wt_mismatch++;
		}
		maybe_free(q);
		return;
	}
	if (q->done) {
		VIOL(s, "M1: DONE twice, id %llu", (unsigned long long)r->id);
		return;
	}
	q->done = 1;
	q->done_at = at;
	q->done_call = s->call;
	s->outstanding--;
	if (r->op == DREQ_WRITE) {
		if (q->durable) {
			if (q->durable_call != s->call)
				VIOL(s,
				     "M1: id %llu DURABLE before DONE in "
				     "another advance call",
				     (unsigned long long)r->id);
			if (q->durable_at != at)
				s->res->wt_mismatch++;
		} else {
			q->nd_prev = NULL;
			q->nd_next = s->nd;
			if (s->nd)
				s->nd->nd_prev = q;
			s->nd = q;
			s->nnd++;
		}
	}
	if (r->op == DREQ_FLUSH) {
		for (size_t i = 0; i < q->nmust; i++)
			if (!s->durable[q->must[i]])
				VIOL(s,
				     "M2: flush id %llu DONE before write %llu "
				     "(DONE before it) is DURABLE",
				     (unsigned long long)r->id,
				     (unsigned long long)q->must[i]);
		uint64_t lat = at - r->arrive_ns;
		if (q->end_flush) {
			s->res->flush_end_ns = lat;
		} else {
			s->res->flushes++;
			s->flush_sum += (double)lat;
			if (lat > s->res->flush_max_ns)
				s->res->flush_max_ns = lat;
		}
	} else {
		struct fkds_res *res = s->res;
		res->done++;
		res->bytes += r->len;
		s->lat_sum += (double)(at - r->arrive_ns);
		if (res->done == o->warm)
			res->t_warm_ns = at;
		res->t_last_ns = at;
		while (o->bucket_bytes &&
		       res->nbucket < res->bytes / o->bucket_bytes) {
			uint64_t *p = realloc(res->bucket_ns,
					      (res->nbucket + 1) * sizeof(*p));
			if (!p)
				break;
			res->bucket_ns = p;
			p[res->nbucket++] = at;
		}
	}
	if (!q->end_flush)
		s->ready[s->nready++] = q->slot;
	maybe_free(q);
}

static int submit(struct sim *s, int slot, enum dreq_op op, uint64_t off,
		  uint64_t len, int end_flush)
{
	struct sreq *q = calloc(1, sizeof(*q));
	if (!q || s->next_id >= s->nid) {
		free(q);
		return -ENOMEM;
	}
	q->r.op = op;
	q->r.off = off;
	q->r.len = len;
	q->r.arrive_ns = s->now;
	q->r.id = s->next_id++;
	q->slot = slot;
	q->end_flush = end_flush;
	if (op == DREQ_FLUSH && s->nnd) {
		q->must = malloc(s->nnd * sizeof(*q->must));
		if (!q->must) {
			free(q);
			return -ENOMEM;
		}
		for (struct sreq *p = s->nd; p; p = p->nd_next)
			q->must[q->nmust++] = p->r.id;
		if (end_flush) {
			struct disk_model_stats st;
			s->dm->stats(s->m, &st);
			s->res->cache_at_flush = st.cache_bytes;
		}
	}
	s->outstanding++;
	s->dm->submit(s->m, &q->r);
	return 0;
}

/* The slot's next request, if any. */
static int issue(struct sim *s, int slot)
{
	const struct fkds_opts *o = s->o;
	if (o->fsync && s->last_write[slot]) {
		s->last_write[slot] = 0;
		return submit(s, slot, DREQ_FLUSH, 0, 0, 0);
	}
	if (s->issued >= o->nreq)
		return 0;
	s->issued++;
	uint64_t off;
	if (o->seq) {
		off = s->seq_off;
		s->seq_off += o->bs;
		if (s->seq_off + o->bs > o->span)
			s->seq_off = 0;
	} else {
		off = (rnd(s) % (o->span / o->bs)) * o->bs;
	}
	s->last_write[slot] = o->op == DREQ_WRITE;
	return submit(s, slot, o->op, off, o->bs, 0);
}

int fkds_run(const struct fkds_opts *o, struct fkds_res *res)
{
	struct sim s = {.o = o, .res = res, .dm = o->model};
	memset(res, 0, sizeof(*res));
	res->trace_hash = 0xcbf29ce484222325ull;
	int err = 0;
	s.m = o->model->create(o->dev_bytes, o->arg, o->write_cache, &err);
	if (!s.m) {
		fprintf(stderr, "%s: create: %s\n", o->model->name,
			strerror(err));
		return -EINVAL;
	}
	s.rng = o->seed ? o->seed : 1;
	s.next_id = 1;
	s.nid = 2 * o->nreq + 16;
	s.durable = calloc(s.nid, 1);
	s.ready = calloc(o->qd + 1, sizeof(*s.ready));
	s.last_write = calloc(o->qd + 1, sizeof(*s.last_write));
	int rc = 0;
	if (!s.durable || !s.ready || !s.last_write) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < o->qd && !rc; i++)
		rc = issue(&s, (int)i);
	while (!rc) {
		s.call++;
		s.nready = 0;
		uint64_t next = o->model->advance(s.m, s.now, on_event, &s);
		if (s.nready) {
			unsigned n = s.nready;
			int *slots = malloc(n * sizeof(*slots));
			if (!slots) {
				rc = -ENOMEM;
				break;
			}
			memcpy(slots, s.ready, n * sizeof(*slots));
			for (unsigned i = 0; i < n && !rc; i++)
				rc = issue(&s, slots[i]);
			free(slots);
			continue; /* submitted at now: ask again */
		}
		if (o->flush_at_end && !s.end_flush_issued &&
		    res->done == o->nreq && !s.outstanding) {
			s.end_flush_issued = 1;
			rc = submit(&s, 0, DREQ_FLUSH, 0, 0, 1);
			continue;
		}
		if (next <= s.now) {
			VIOL(&s, "M4: next event %llu not after now %llu",
			     (unsigned long long)next,
			     (unsigned long long)s.now);
			break;
		}
		if (next == UINT64_MAX) {
			if (s.outstanding || s.nnd)
				VIOL(&s,
				     "M4: idle with %llu not DONE, %llu not "
				     "DURABLE",
				     (unsigned long long)s.outstanding,
				     (unsigned long long)s.nnd);
			break;
		}
		if (next > 100000ull * 1000000000ull) {
			VIOL(&s, "runaway: virtual time past 1e5 s");
			break;
		}
		s.now = next;
	}
	res->t_idle_ns = s.now;
	uint64_t n = res->done > o->warm ? res->done - o->warm : 0;
	uint64_t t0 = o->warm ? res->t_warm_ns : 0;
	if (n && res->t_last_ns > t0) {
		double sec = (double)(res->t_last_ns - t0) / 1e9;
		res->iops = (double)n / sec;
		res->mbps = (double)n * (double)o->bs / sec / 1e6;
	}
	if (res->done)
		res->lat_mean_ns = s.lat_sum / (double)res->done;
	if (res->flushes)
		res->flush_mean_ns = s.flush_sum / (double)res->flushes;
	o->model->stats(s.m, &res->st);
out:
	/* Requests still held are leaked only on a contract breach. */
	o->model->destroy(s.m);
	free(s.durable);
	free(s.ready);
	free(s.last_write);
	return rc;
}

void fkds_res_release(struct fkds_res *res)
{
	free(res->bucket_ns);
	res->bucket_ns = NULL;
}
