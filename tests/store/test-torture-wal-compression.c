// SPDX-License-Identifier: MIT
/*
 * test-torture-wal-compression.c - the crash torture harness (tests/lib/
 * fktorture.c) on stores whose full-page images are compressed
 * (fk_store_opts.wal_compression): kill -9 during TPC-B at random
 * moments with lz4, and reopens cut at the N-th state-changing call of
 * a long replay (recovery-kill) with zstd, a few trials each
 * (FK_TRIALS for more).  Every acknowledged commit must be found, none
 * twice, the TPC-B sums equal.  A method this build lacks is skipped.
 */
#include "fktest.h"
#include "fktorture.h"
#include "store-int.h"

static void run(int fault, int method, unsigned trials)
{
	struct fkt_torture_opts o;
	struct fkt_torture_result res;
	if (!fk_fpi_method_available(method)) {
		printf("%s: not in this build, not checked\n",
		       fk_wal_compression_name(method));
		return;
	}
	fkt_torture_opts_init(&o);
	o.fault = fault;
	o.wal_compression = method;
	o.trials = fkt_torture_trials_env(trials);
	const char *se = getenv("FK_TEST_SEED");
	if (se && *se)
		o.seed = strtoull(se, NULL, 10);
	CHECK_EQ(fkt_torture_run(&o, &res), 0);
	CHECK_EQ(res.trials, o.trials);
	CHECK_EQ(res.failed, 0);
	CHECK(res.acks > 0);
	if (fault == FKT_FAULT_RECOVERY_KILL)
		CHECK(res.interrupts > 0);
}

int main(void)
{
	run(FKT_FAULT_KILL, FK_WAL_COMPRESSION_LZ4, 6);
	run(FKT_FAULT_RECOVERY_KILL, FK_WAL_COMPRESSION_ZSTD, 3);
	return fkt_done();
}
