/* SPDX-License-Identifier: MIT */
/*
 * outbox.h - the events a simulating model (hdd, ssd, nvme) has produced
 * but not yet reported.  Those models run their simulation forward in
 * submit (to the arrival time) as well as in advance, and submit has no
 * callback: what happened meanwhile waits here, in the order it
 * happened (nondecreasing time, M3), until the next advance reports it.
 */
#ifndef FK_DISK_OUTBOX_H
#define FK_DISK_OUTBOX_H

#include "model.h"

#include <stdlib.h>

struct outbox_ev {
	struct dreq *r;
	enum dreq_ev ev;
	uint64_t at_ns;
};

struct outbox {
	struct outbox_ev *ev;
	size_t n, cap;
	int oom; /* an event could not be stored (reported by advance) */
};

/* Keep one event; on allocation failure the event is lost and oom set
 * (the caller aborts: a model that loses an event breaks M1). */
static inline void outbox_put(struct outbox *o, struct dreq *r, enum dreq_ev ev,
			      uint64_t at_ns)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 64;
		struct outbox_ev *p = realloc(o->ev, cap * sizeof(*p));
		if (!p) {
			o->oom = 1;
			return;
		}
		o->ev = p;
		o->cap = cap;
	}
	o->ev[o->n++] = (struct outbox_ev){r, ev, at_ns};
}

/* Report everything kept, in order. */
static inline void outbox_flush(struct outbox *o, dreq_event_fn fn, void *ctx)
{
	if (o->oom)
		abort();
	for (size_t i = 0; i < o->n; i++)
		fn(ctx, o->ev[i].r, o->ev[i].ev, o->ev[i].at_ns);
	o->n = 0;
}

static inline void outbox_release(struct outbox *o)
{
	free(o->ev);
	o->ev = NULL;
	o->n = o->cap = 0;
}

#endif
