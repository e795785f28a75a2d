// SPDX-License-Identifier: MIT
/*
 * test-store-log-limit.c - the condensing of repeated failure lines
 * (struct fk_log_limit, core.c) on known instants (the clock is passed
 * in, so nothing here depends on timing): the first failure logged in
 * full; repeats only counted, with one summary line per interval
 * giving their number; a change of errno or operation, or a forced
 * line, logged in full after the summary of what was counted; the
 * first success after failures logged once with the count, and the
 * next failure a new first one.  test-store-enospc-log checks the same
 * on a real full file system, through the checkpointer.
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>

#define S 1000000000ull

static char out[2][FK_LOG_LINE];

static int fail(struct fk_log_limit *l, uint64_t now, int err, const char *what,
		int force)
{
	return fk_log_limit_failed(l, now, err, what, force, "FULL LINE", out);
}

static void test_repeats(void)
{
	struct fk_log_limit l = {.subject = "checkpoint"};
	const uint64_t t0 = 1000 * S;

	CHECK_EQ(fail(&l, t0, -ENOSPC, "writing base/2.0", 0), 1);
	CHECK(!strcmp(out[0], "FULL LINE"));
	/* One a second for 59 s: counted, nothing logged. */
	for (int i = 1; i < 60; i++)
		CHECK_EQ(fail(&l, t0 + (uint64_t)i * S, -ENOSPC,
			      "writing base/2.0", 0),
			 0);
	/* The 60th second: one summary line with the count. */
	CHECK_EQ(fail(&l, t0 + 60 * S, -ENOSPC, "writing base/2.0", 0), 1);
	CHECK(!strcmp(out[0], "checkpoint failed 60 more times in 60.0 s: "
			      "No space left on device (writing base/2.0)"));
	/* The next interval starts there. */
	CHECK_EQ(fail(&l, t0 + 61 * S, -ENOSPC, "writing base/2.0", 0), 0);
	CHECK_EQ(fail(&l, t0 + 119 * S, -ENOSPC, "writing base/2.0", 0), 0);
	CHECK_EQ(fail(&l, t0 + 120 * S, -ENOSPC, "writing base/2.0", 0), 1);
	CHECK(strstr(out[0], "failed 3 more times in 60.0 s") != NULL);
	CHECK_EQ(l.failures, 64);

	/* Recovered: one line with the whole row's count. */
	CHECK_EQ(fk_log_limit_ok(&l, t0 + 125 * S, out[0]), 1);
	CHECK(!strcmp(out[0], "checkpoint ok again after 64 failures in "
			      "125.0 s (the last: No space left on device "
			      "(writing base/2.0))"));
	CHECK_EQ(fk_log_limit_ok(&l, t0 + 126 * S, out[0]), 0);
	/* A new row starts in full. */
	CHECK_EQ(fail(&l, t0 + 200 * S, -ENOSPC, "writing base/2.0", 0), 1);
	CHECK(!strcmp(out[0], "FULL LINE"));
}

static void test_change(void)
{
	struct fk_log_limit l = {.subject = "checkpoint"};
	const uint64_t t0 = 5 * S;

	CHECK_EQ(fail(&l, t0, -ENOSPC, "writing base/2.0", 0), 1);
	CHECK_EQ(fail(&l, t0 + S, -ENOSPC, "writing base/2.0", 0), 0);
	CHECK_EQ(fail(&l, t0 + 2 * S, -ENOSPC, "writing base/2.0", 0), 0);
	/* Another path: what was counted, then the new one in full. */
	CHECK_EQ(fail(&l, t0 + 3 * S, -ENOSPC, "replacing control", 0), 2);
	CHECK(!strcmp(out[0], "checkpoint failed 2 more times in 3.0 s: "
			      "No space left on device (writing base/2.0)"));
	CHECK(!strcmp(out[1], "FULL LINE"));
	/* Another errno, nothing counted in between: only the line. */
	CHECK_EQ(fail(&l, t0 + 4 * S, -EDQUOT, "replacing control", 0), 1);
	CHECK(!strcmp(out[0], "FULL LINE"));
	CHECK_EQ(fail(&l, t0 + 5 * S, -EDQUOT, "replacing control", 0), 0);
	/* Forced (a caller waits for it): the summary, then the line. */
	CHECK_EQ(fail(&l, t0 + 6 * S, -EDQUOT, "replacing control", 1), 2);
	CHECK(strstr(out[0], "failed 1 more time in 2.0 s: ") != NULL);
	CHECK(!strcmp(out[1], "FULL LINE"));
	CHECK_EQ(fail(&l, t0 + 7 * S, -EDQUOT, "replacing control", 0), 0);
	CHECK_EQ(fk_log_limit_ok(&l, t0 + 8 * S, out[0]), 1);
	CHECK(strstr(out[0], "ok again after 8 failures in 8.0 s, 1 of them "
			     "not logged (the last: ") != NULL);
}

static void test_interval(void)
{
	/* A shorter interval; the clock going backwards logs nothing. */
	struct fk_log_limit l = {.subject = "WAL segment creation",
				 .interval_ns = 10 * S};
	CHECK_EQ(fail(&l, 50 * S, -ENOSPC, "w", 0), 1);
	CHECK_EQ(fail(&l, 40 * S, -ENOSPC, "w", 0), 0);
	CHECK_EQ(fail(&l, 59 * S, -ENOSPC, "w", 0), 0);
	CHECK_EQ(fail(&l, 60 * S, -ENOSPC, "w", 0), 1);
	CHECK(!strcmp(out[0], "WAL segment creation failed 3 more times in "
			      "10.0 s: No space left on device (w)"));
}

int main(void)
{
	test_repeats();
	test_change();
	test_interval();
	return fkt_done();
}
