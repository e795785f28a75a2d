/* SPDX-License-Identifier: MIT */
/*
 * pacer.h - private interface of the pacer (see pacer.c): the same
 * functions as the public ones, with the clock passed in, so callers
 * that already read the clock and tests (which must not depend on
 * timing) can drive a pacer through any sequence of instants.
 *
 * Private to the library and its tests.
 */
#ifndef FK_PACER_H
#define FK_PACER_H

#include <stdint.h>

#include "flushkit.h"

/* fk_pacer_start with start time @now_ns (fk_now_ns clock). */
void fk_pacer_start_at(struct fk_pacer *p, uint64_t now_ns, uint64_t budget_ns,
		       uint64_t wal_now, uint64_t wal_budget);
/* fk_pacer_on_schedule as seen at @now_ns. */
int fk_pacer_on_schedule_at(const struct fk_pacer *p, double progress,
			    uint64_t wal_now, uint64_t now_ns);
/* fk_pacer_delay_ns as seen at @now_ns. */
uint64_t fk_pacer_delay_ns_at(const struct fk_pacer *p, double progress,
			      uint64_t wal_now, uint64_t max_sleep_ns,
			      uint64_t now_ns);

#endif
