/* SPDX-License-Identifier: MIT */
/*
 * evlist.h - a list of requests ordered by their completion time, for
 * the models that know a request's completion when it is submitted
 * (ram, throttle).  Insertion is O(n) in what is in flight (at most the
 * loop device's queue depth, 128), removal from the head O(1).
 */
#ifndef FK_DISK_EVLIST_H
#define FK_DISK_EVLIST_H

#include "model.h"

struct evlist {
	struct dreq *head, *tail;
	uint64_t n;
};

/* Insert @r ordered by r->m_done_ns, after every request with the same
 * time (so equal times keep submission order). */
static inline void evlist_insert(struct evlist *l, struct dreq *r)
{
	struct dreq *p = l->tail;
	while (p && p->m_done_ns > r->m_done_ns)
		p = p->m_prev;
	r->m_prev = p;
	r->m_next = p ? p->m_next : l->head;
	if (r->m_next)
		r->m_next->m_prev = r;
	else
		l->tail = r;
	if (p)
		p->m_next = r;
	else
		l->head = r;
	l->n++;
}

static inline struct dreq *evlist_pop(struct evlist *l)
{
	struct dreq *r = l->head;
	if (!r)
		return NULL;
	l->head = r->m_next;
	if (l->head)
		l->head->m_prev = NULL;
	else
		l->tail = NULL;
	r->m_next = r->m_prev = NULL;
	l->n--;
	return r;
}

/* A singly linked FIFO of requests through m_next (head @h, tail @t):
 * the queues of the hdd and flash models. */
static inline void fifo_push(struct dreq **h, struct dreq **t, struct dreq *r)
{
	r->m_next = NULL;
	if (*t)
		(*t)->m_next = r;
	else
		*h = r;
	*t = r;
}

static inline struct dreq *fifo_pop(struct dreq **h, struct dreq **t)
{
	struct dreq *r = *h;
	if (r) {
		*h = r->m_next;
		if (!*h)
			*t = NULL;
		r->m_next = NULL;
	}
	return r;
}

/* Report DONE (and DURABLE for writes: these models have no volatile
 * cache) of every request due at @now; return the next due time. */
static inline uint64_t evlist_advance(struct evlist *l, uint64_t now,
				      dreq_event_fn fn, void *ctx)
{
	while (l->head && l->head->m_done_ns <= now) {
		struct dreq *r = evlist_pop(l);
		uint64_t at = r->m_done_ns;
		if (r->op == DREQ_WRITE)
			fn(ctx, r, DREQ_EV_DURABLE, at);
		fn(ctx, r, DREQ_EV_DONE, at);
	}
	return l->head ? l->head->m_done_ns : UINT64_MAX;
}

#endif
