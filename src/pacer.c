// SPDX-License-Identifier: MIT
/*
 * pacer.c - spread a job with a deadline evenly over its budget.
 *
 * A checkpoint that writes every dirty buffer as fast as it can floods
 * the device and stalls every other writer; one that finishes just in
 * time keeps the I/O rate low and steady.  PostgreSQL 8.3 introduced
 * this as the spread checkpoint: after each buffer the checkpointer
 * asks IsCheckpointOnSchedule() whether the fraction of buffers written
 * is ahead of both the fraction of checkpoint_timeout elapsed and the
 * fraction of the WAL allowance used, and if so CheckpointWriteDelay()
 * naps (src/backend/postmaster/checkpointer.c).  Here the caller passes
 * a budget that already includes the completion target, and the pacer
 * computes how long the nap may last instead of napping 100 ms at a
 * time.
 *
 * Interface routines: fk_pacer_start(), fk_pacer_on_schedule(),
 * fk_pacer_delay_ns(), fk_pacer_sleep(); the _at variants in pacer.h
 * take the clock as an argument.
 *
 * A pacer has no hidden state: start_ns, budget_ns, wal_start,
 * wal_budget are set by start and only read afterwards; slept_ns is
 * only added to by fk_pacer_sleep.
 */
#include "pacer.h"
#include "sys.h"

#include <errno.h>
#include <time.h>

/* @progress as a number in [0, 1]; NaN counts as no progress. */
static double clamp01(double x)
{
	if (!(x > 0.0))
		return 0.0;
	return x > 1.0 ? 1.0 : x;
}

/* Fraction of the time budget used at @now_ns (may exceed 1). */
static double time_fraction(const struct fk_pacer *p, uint64_t now_ns)
{
	if (p->budget_ns == 0)
		return 1.0; /* no time at all: the deadline is now */
	if (now_ns <= p->start_ns)
		return 0.0;
	return (double)(now_ns - p->start_ns) / (double)p->budget_ns;
}

/* Fraction of the WAL budget used (may exceed 1); 0 if ignored. */
static double wal_fraction(const struct fk_pacer *p, uint64_t wal_now)
{
	if (p->wal_budget == 0 || wal_now <= p->wal_start)
		return 0.0;
	return (double)(wal_now - p->wal_start) / (double)p->wal_budget;
}

void fk_pacer_start_at(struct fk_pacer *p, uint64_t now_ns, uint64_t budget_ns,
		       uint64_t wal_now, uint64_t wal_budget)
{
	p->start_ns = now_ns;
	p->budget_ns = budget_ns;
	p->wal_start = wal_now;
	p->wal_budget = wal_budget;
	p->slept_ns = 0;
}

void fk_pacer_start(struct fk_pacer *p, uint64_t budget_ns, uint64_t wal_now,
		    uint64_t wal_budget)
{
	fk_pacer_start_at(p, fk_now_ns(), budget_ns, wal_now, wal_budget);
}

int fk_pacer_on_schedule_at(const struct fk_pacer *p, double progress,
			    uint64_t wal_now, uint64_t now_ns)
{
	progress = clamp01(progress);
	if (progress < wal_fraction(p, wal_now))
		return 0;
	if (progress < time_fraction(p, now_ns))
		return 0;
	return 1;
}

int fk_pacer_on_schedule(const struct fk_pacer *p, double progress,
			 uint64_t wal_now)
{
	return fk_pacer_on_schedule_at(p, progress, wal_now, fk_now_ns());
}

uint64_t fk_pacer_delay_ns_at(const struct fk_pacer *p, double progress,
			      uint64_t wal_now, uint64_t max_sleep_ns,
			      uint64_t now_ns)
{
	if (!fk_pacer_on_schedule_at(p, progress, wal_now, now_ns))
		return 0;
	/* The instant at which elapsed time equals progress. */
	uint64_t due =
	    p->start_ns + (uint64_t)(clamp01(progress) * (double)p->budget_ns);
	if (due <= now_ns)
		return 0;
	uint64_t d = due - now_ns;
	return d < max_sleep_ns ? d : max_sleep_ns;
}

uint64_t fk_pacer_delay_ns(const struct fk_pacer *p, double progress,
			   uint64_t wal_now, uint64_t max_sleep_ns)
{
	return fk_pacer_delay_ns_at(p, progress, wal_now, max_sleep_ns,
				    fk_now_ns());
}

uint64_t fk_pacer_sleep(struct fk_pacer *p, double progress, uint64_t wal_now,
			uint64_t max_sleep_ns)
{
	uint64_t d = fk_pacer_delay_ns(p, progress, wal_now, max_sleep_ns);
	if (d == 0)
		return 0;
	struct timespec ts = {
	    .tv_sec = (time_t)(d / 1000000000u),
	    .tv_nsec = (long)(d % 1000000000u),
	};
	/* Sleep the whole delay even if a signal interrupts it. */
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	p->slept_ns += d;
	return d;
}
