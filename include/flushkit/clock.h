/* SPDX-License-Identifier: MIT */
/*
 * flushkit/clock.h - section 9 of <flushkit.h>, clock:
 * fk_now_ns.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_CLOCK_H
#define FLUSHKIT_CLOCK_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/clock.h>"
#endif

/* ===================================================================
 * 9. Clock
 * =================================================================== */

/* SECTION clock */
/*
 * fk_now_ns - the library's clock: CLOCK_MONOTONIC, in nanoseconds.
 *
 * The time base of every *_ns time point the library reports
 * (fk_checkpoint_info.start_ns and end_ns, fk_monitor_sample.time_ns,
 * fk_pacer.start_ns), so a caller can put its own events (transaction
 * latencies, progress lines) on the same axis and subtract.
 * Returns nanoseconds since an unspecified starting point (on Linux,
 * boot, not counting suspend); never fails (clock_gettime(2) of
 * CLOCK_MONOTONIC cannot fail with a valid clock and buffer).  Reads
 * the clock through the vDSO: no system call, no I/O, never blocks.
 * Thread-safe.
 */
FK_API uint64_t fk_now_ns(void);

#endif /* FLUSHKIT_CLOCK_H */
