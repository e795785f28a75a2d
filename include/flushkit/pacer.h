/* SPDX-License-Identifier: MIT */
/*
 * flushkit/pacer.h - section 5 of <flushkit.h>, pacer:
 * struct fk_pacer: spreading work over time.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_PACER_H
#define FLUSHKIT_PACER_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/pacer.h>"
#endif

/* ===================================================================
 * 5. Pacer
 * =================================================================== */

/* SECTION pacer */
/*
 * struct fk_pacer - is a job with a deadline ahead of schedule?
 *
 * A job (a checkpoint's write phase, a spread sync phase, a rate-limited
 * copy) must finish a unit of work within @budget_ns and, optionally,
 * before @wal_budget more bytes of WAL are written.  After each step the
 * caller reports its progress fraction; the pacer says how long to sleep
 * so that progress tracks elapsed time and WAL.  From PostgreSQL's
 * IsCheckpointOnSchedule and CheckpointWriteDelay (checkpointer.c, the
 * spread checkpoints of 8.3).  To pace as PostgreSQL does, pass
 * budget_ns = checkpoint_completion_target x checkpoint interval and
 * wal_budget = checkpoint_completion_target x the WAL volume that
 * triggers the next checkpoint.
 *
 * Caller-allocated; no resources, so no _release.  The functions only
 * read CLOCK_MONOTONIC (fk_pacer_sleep also sleeps); no I/O.  Not
 * thread-safe: one pacer per job (the const functions may be called
 * from several threads at once).
 */
struct fk_pacer {
	uint64_t start_ns, budget_ns;	/* CLOCK_MONOTONIC ns, ns */
	uint64_t wal_start, wal_budget; /* bytes; wal_budget 0 = ignore */
	uint64_t slept_ns;		/* total slept in fk_pacer_sleep */
};

/*
 * fk_pacer_start - start a job now.
 * @budget_ns: time the whole job should take, ns; 0 means "no time":
 *      never ahead of schedule until progress reaches 1.
 * @wal_now: the WAL position now, bytes (any monotonic byte counter).
 * @wal_budget: WAL bytes the job may span; 0 ignores WAL.
 * Resets slept_ns.  Cannot fail.
 */
FK_API void fk_pacer_start(struct fk_pacer *p, uint64_t budget_ns,
			   uint64_t wal_now, uint64_t wal_budget);

/*
 * fk_pacer_on_schedule - is the job ahead of schedule?
 * @progress: fraction of the work done, 0..1 (clamped; NaN counts as 0).
 * @wal_now: the WAL position now, bytes (ignored if wal_budget is 0).
 * Returns 1 if @progress >= the fraction of budget_ns elapsed AND
 * >= the fraction of wal_budget written since start, else 0.
 */
FK_API int fk_pacer_on_schedule(const struct fk_pacer *p, double progress,
				uint64_t wal_now);

/*
 * fk_pacer_delay_ns - how long to sleep now so that progress does not
 * run ahead of time.
 * @progress, @wal_now: as for fk_pacer_on_schedule.
 * @max_sleep_ns: cap on the result, ns (e.g. 100 ms, so the caller can
 *      absorb fsync requests or notice shutdown between naps).
 * Returns, in ns, the time until the elapsed fraction of budget_ns
 * equals @progress, at most @max_sleep_ns; 0 when behind schedule by
 * time or by WAL (if WAL is ahead of progress, sleeping would only make
 * the job later).  Does not sleep.
 */
FK_API uint64_t fk_pacer_delay_ns(const struct fk_pacer *p, double progress,
				  uint64_t wal_now, uint64_t max_sleep_ns);

/*
 * fk_pacer_sleep - sleep for fk_pacer_delay_ns(...) (resumed after
 * signals) and add it to slept_ns.  Returns the ns slept (0 if behind).
 * Blocks.  Callers that must wake early (shutdown, a checkpoint
 * request) should wait on their own condition variable for
 * fk_pacer_delay_ns instead.
 */
FK_API uint64_t fk_pacer_sleep(struct fk_pacer *p, double progress,
			       uint64_t wal_now, uint64_t max_sleep_ns);

#endif /* FLUSHKIT_PACER_H */
