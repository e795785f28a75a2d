// SPDX-License-Identifier: MIT
/*
 * 000.c - seed 000, sync_file_range with WB_SYNC_NONE (Andres Freund,
 * pgsql-hackers 2016: checkpoint flushing on a Samsung 840 EVO 1TB).
 *
 * The seed: pgbench TPC-B, many clients, -P 1, PostgreSQL's checkpointer
 * hinting writeback every checkpoint_flush_after; kernel before 4.4
 * (sync_file_range(SYNC_FILE_RANGE_WRITE) did WB_SYNC_ALL writeback of
 * the range: it waited for pages already under writeback, then returned)
 * against the patched kernel (SYNC_FILE_RANGE_WRITE is WB_SYNC_NONE).
 * The seed's figures: tps 7872 -> 9369, latency stddev 35.4 -> 24.4 ms.
 *
 * Ours, configuration by configuration (on the ssd model by default):
 *   seed's old kernel  -> A: bench tpcb --checkpoint-flush-after=256kB
 *                         --checkpoint-flush-wait=before
 *                         (WAIT_BEFORE | WRITE: wait for the range's pages
 *                         under writeback, start the rest, do not wait)
 *   seed's new kernel  -> B: --checkpoint-flush-wait=off (WRITE alone)
 *   (not the seed's)   -> C: --checkpoint-flush-wait=all (WAIT_BEFORE |
 *                         WRITE | WAIT_AFTER), its own table against B,
 *                         not counted as a seed effect
 *   every other knob equal: -s 20 -c 16 -T 30 -P 1 --flush=smooth
 *   --shared-buffers=256MB --checkpoint-timeout=15s, runs alternating on
 *   one database, 3 rounds, then A B rounds up to 9 a side as the
 *   spread of the first 3 asks (runs_for_effect).  With PostgreSQL 15
 * installed, the peer on the same disk: checkpoint_flush_after 0 vs 256kB (the
 * real database cannot choose the kernel's wait; its table is after the
 * store's).
 */
#include "reproduce.h"

/* ---- 000: sync_file_range with WB_SYNC_NONE ------------------------- */

/* The seed's 000 rows: store and peer tables alike. */
static const struct {
	const char *label, *key, *sa, *sb;
	char dir;
} rows_000[] = {
    {"transactions", "transactions", "7873859", "9370637", '+'},
    {"latency average (ms)", "lat_avg_ms", "6.094", "5.119", '-'},
    {"latency stddev (ms)", "lat_stddev_ms", "35.376", "24.423", '-'},
    {"tps", "tps", "7871.887", "9369.212", '+'},
    {"worst second (tps)", "worst_second_tps", "—", "497.0", '?'},
    {"max latency (ms)", "lat_max_ms", "—", "—", '?'},
};

/* The rows of 000 and the worst progress seconds of each side. */
static void table_000(struct table *t, const char *da, const char *db)
{
	table_head(t, "before", "after");
	for (size_t i = 0; i < sizeof(rows_000) / sizeof(rows_000[0]); i++) {
		struct vals va, vb;
		summary_vals(da, rows_000[i].key, &va);
		summary_vals(db, rows_000[i].key, &vb);
		table_row(t, rows_000[i].label, rows_000[i].sa, rows_000[i].sb,
			  rows_000[i].dir, &va, &vb);
	}
	table_end(t);
	for (int s = 0; s < 2; s++) {
		struct collect col;
		memset(&col, 0, sizeof(col));
		collect_dir(s ? db : da, &col);
		table_note(t,
			   "\nWorst progress seconds of %s (seed, after: "
			   "\"progress: 871.0 s, 497.0 tps, lat 89.598 ms "
			   "stddev 308.398\"):",
			   s ? "B" : "A");
		for (int i = 0; i < col.nworst; i++)
			table_note(t,
				   "    progress: %.1f s, %.1f tps, lat %.3f "
				   "ms stddev %.3f",
				   col.worst_t[i], col.worst_tps[i],
				   col.worst_lat[i], col.worst_sd[i]);
	}
}

/* One pgbench run of the 000 peer with checkpoint_flush_after @fa, its
 * result file (bench/peers/tpcb-pg-result.py) into @dir; logs named
 * after @tag ("pg-a-1"). */
static int peer_000_run(struct ctx *c, struct pg *p, const char *fa,
			const char *dir, const char *tag, int scale,
			int clients, int secs, const char *sb, const char *cpt)
{
	char set[64];
	snprintf(set, sizeof(set),
		 "ALTER SYSTEM SET checkpoint_flush_after "
		 "= '%s'",
		 fa);
	const char *const prep[] = {set, "SELECT pg_reload_conf()",
				    "CHECKPOINT", NULL};
	char before[1024], after[1024];
	int rc = pg_sql(p, prep, NULL, 0);
	if (!rc)
		rc = pg_stats(p, before, sizeof(before));
	if (rc)
		return rc;
	/* pgbench's per-transaction logs (the max latency): in the run
	 * directory, not on the disk under test; removed after each run. */
	char logs[1200], slog[1300];
	snprintf(logs, sizeof(logs), "%s/pglog", c->run_dir);
	rm_tree(logs);
	if (mkdir(logs, 0700)) {
		cli_error("mkdir '%s': %s", logs, strerror(errno));
		return -EIO;
	}
	snprintf(slog, sizeof(slog), "%s/server.log", p->data);
	struct stat st;
	off_t off = stat(slog, &st) ? 0 : st.st_size;
	int jobs = clients < 2 ? 1 : 2;
	struct child_argv a = CHILD_ARGV_INIT;
	pg_client_argv(p, &a, "pgbench");
	child_argv_add(&a, "-c");
	child_argv_add(&a, "%d", clients);
	child_argv_add(&a, "-j");
	child_argv_add(&a, "%d", jobs);
	child_argv_add(&a, "-T");
	child_argv_add(&a, "%d", secs);
	child_argv_add(&a, "-P");
	child_argv_add(&a, "1");
	child_argv_add(&a, "-l");
	child_argv_add(&a, "--log-prefix=%s/pgbench_log", logs);
	child_argv_add(&a, "postgres");
	char out[128], err[128];
	snprintf(out, sizeof(out), "%s.out", tag);
	snprintf(err, sizeof(err), "%s.log", tag);
	double t0 = wall_s();
	rc = pg_exec(p, &a, 0, 1, out, err, NULL, 0);
	double t1 = wall_s();
	child_argv_release(&a);
	if (!rc)
		rc = pg_stats(p, after, sizeof(after));
	char srv[2400];
	snprintf(srv, sizeof(srv), "%s/%s.server.log", c->seed_dir, tag);
	copy_tail(slog, off, srv);
	if (rc) {
		rm_tree(logs);
		return rc;
	}
	child_argv_add(&a, "python3");
	child_argv_add(&a, "%s", p->script);
	child_argv_add(&a, "--out");
	child_argv_add(&a, "%s/tpcb-%s.jsonl", dir, tag);
	child_argv_add(&a, "--pgbench-out");
	child_argv_add(&a, "%s/%s", c->seed_dir, out);
	child_argv_add(&a, "--pgbench-err");
	child_argv_add(&a, "%s/%s", c->seed_dir, err);
	child_argv_add(&a, "--logs");
	child_argv_add(&a, "%s", logs);
	child_argv_add(&a, "--server-log");
	child_argv_add(&a, "%s", srv);
	child_argv_add(&a, "--stats-before");
	child_argv_add(&a, "%s", before);
	child_argv_add(&a, "--stats-after");
	child_argv_add(&a, "%s", after);
	child_argv_add(&a, "--t0");
	child_argv_add(&a, "%.6f", t0);
	child_argv_add(&a, "--t1");
	child_argv_add(&a, "%.6f", t1);
	child_argv_add(&a, "--version");
	child_argv_add(&a, "%s", p->version);
	child_argv_add(&a, "--command");
	child_argv_add(&a, "pgbench -c %d -j %d -T %d -P 1 -l", clients, jobs,
		       secs);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "scale=%d", scale);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "clients=%d", clients);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "duration_s=%d", secs);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "progress_s=1");
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "shared_buffers=%s", sb);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "checkpoint_timeout=%s", cpt);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "checkpoint_flush_after=%s", fa);
	char rlog[160];
	snprintf(rlog, sizeof(rlog), "%s.result.log", tag);
	rc = pg_exec(p, &a, 0, 1, rlog, NULL, NULL, 0);
	child_argv_release(&a);
	rm_tree(logs); /* the per-transaction logs are large */
	return rc;
}

/*
 * 000's peer: PostgreSQL 15 + pgbench on the same disk, the store runs'
 * scale, clients, duration, -P 1 and shared_buffers; A =
 * checkpoint_flush_after 0 (no writeback hints), B = 256kB (PostgreSQL
 * 15's default: sync_file_range(SYNC_FILE_RANGE_WRITE) every 256 KiB of
 * checkpoint writes), alternating as the store's sides.  Its table is
 * appended to 000's.  Returns 0, -EINTR or -errno; *@ran whether the
 * table was written.
 */
static int peer_000(struct ctx *c, struct disk *d, unsigned runs, int scale,
		    int clients, int secs, const char *sb, int *ran)
{
	char why[1400];
	*ran = 0;
	int av = pg_available(why, sizeof(why));
	if (av <= 0) {
		if (av == 0)
			printf("000 peer: PostgreSQL 15 not installed, left "
			       "out\n");
		else
			printf("000 peer: PostgreSQL 15 left out: %s\n", why);
		fflush(stdout);
		return 0;
	}
	/* PostgreSQL's minimum checkpoint_timeout is 30 s (the store
	 * runs' is shorter). */
	const char *cpt = "30s";
	char l_sb[96], l_conn[64];
	snprintf(l_sb, sizeof(l_sb), "shared_buffers = '%s'", sb);
	snprintf(l_conn, sizeof(l_conn), "max_connections = %d", clients + 10);
	const char *const lines[] = {l_sb, "checkpoint_timeout = '30s'",
				     "log_checkpoints = on", l_conn, NULL};
	char da[2300], db[2300], data[1200];
	snprintf(da, sizeof(da), "%s/pg-a", c->seed_dir);
	snprintf(db, sizeof(db), "%s/pg-b", c->seed_dir);
	snprintf(data, sizeof(data), "%s/pg", d->mnt);
	if (mkdir_p1(da) || mkdir_p1(db))
		return -EIO;
	printf("000 peer: PostgreSQL 15, pgbench -s %d -c %d -T %d\n", scale,
	       clients, secs);
	fflush(stdout);
	struct pg p;
	int rc = pg_init(&p, c, "seed000", data, c->seed_dir, lines);
	if (!rc)
		rc = pg_pgbench_init(&p, scale);
	for (unsigned r = 0; r < 2 * runs && !rc; r++) {
		int side = (r % 2) ^ ((r / 2) % 2); /* A B B A A B ... */
		char tag[32];
		snprintf(tag, sizeof(tag), "pg-%c-%u", side ? 'b' : 'a',
			 r / 2 + 1);
		rc = peer_000_run(c, &p, side ? "256kB" : "0", side ? db : da,
				  tag, scale, clients, secs, sb, cpt);
	}
	int rr = pg_release(&p);
	if (rc || rr)
		return rc ? rc : rr;

	struct table t;
	char cmd[400], ta[512], tb[512];
	snprintf(cmd, sizeof(cmd),
		 "%s, pgbench -s %d -c %d -T %d -P 1, shared_buffers=%s, "
		 "checkpoint_timeout=%s",
		 p.version, scale, clients, secs, sb, cpt);
	snprintf(ta, sizeof(ta), "%s, checkpoint_flush_after=0", cmd);
	snprintf(tb, sizeof(tb), "%s, checkpoint_flush_after=256kB", cmd);
	if (table_open_mode(c, &t, "000 peer: PostgreSQL 15", ta, tb, "ae"))
		return -EIO;
	table_000(&t, da, db);
	table_note(&t, "\nPostgreSQL has no hint that waits: A is no "
		       "writeback hint at all, B its sync_file_range("
		       "SYNC_FILE_RANGE_WRITE) every 256 KiB of checkpoint "
		       "writes.  Its checkpoint_timeout cannot be below 30 "
		       "s.");
	table_close_as(&t, "PostgreSQL");
	*ran = 1;
	return 0;
}

int seed_000(struct ctx *c, struct disk *d)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 3;
	int scale = c->quick ? 1 : 20, clients = c->quick ? 4 : 16;
	/* The checkpoint's writes dominate: 256 MB of shared buffers hold
	 * most of the 290 MB database, so the checkpointer writes 15-24k
	 * buffers a 30-s run and the backends none (with 32 MB: 497 against
	 * 239 555).  30-s runs, more of them (the sizing below): the spread
	 * is the shared CPU's, from run to run. */
	int secs = c->quick ? 4 : 30;
	const char *sb = c->quick ? "2MB" : "256MB";
	const char *cpt = c->quick ? "2s" : "15s";
	char da[2200], db[2200], dc[2200];
	snprintf(da, sizeof(da), "%s/a", c->seed_dir);
	snprintf(db, sizeof(db), "%s/b", c->seed_dir);
	snprintf(dc, sizeof(dc), "%s/c", c->seed_dir);
	if (mkdir_p1(da) || mkdir_p1(db) || mkdir_p1(dc))
		return -EIO;
	/* The three sides' hint waits and result directories. */
	static const char *const wait_000[3] = {"before", "off", "all"};
	const char *const dir_000[3] = {da, db, dc};
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "flushkit");
	child_argv_add(&a, "bench");
	child_argv_add(&a, "tpcb");
	child_argv_add(&a, "-i");
	child_argv_add(&a, "-s");
	child_argv_add(&a, "%d", scale);
	child_argv_add(&a, "--data-dir=%s/db", d->mnt);
	child_argv_add(&a, "--shared-buffers=%s", sb);
	child_argv_add(&a, "--no-results");
	int rc = run_args(c, "init.log", &a);
	/*
	 * Run sizing from the measured spread (an internal pilot: runs_for_
	 * effect, table.c): after the first @runs rounds, the runs a side
	 * that would let 2σ call the seed's own effects (tps +19.0%,
	 * latency stddev -31.0%) at the spread of A and B so far; more
	 * rounds up to @cap.  --runs fixes the count, --quick runs no more.
	 */
	unsigned total = runs, cap = c->runs || c->quick ? runs : 3 * runs;
	unsigned end = 3 * runs; /* the steps: 3 a round, then 2 */
	for (unsigned r = 0; r < end && !rc; r++) {
		/* A B C, C B A, A B C ...: B beside A and C in every round,
		 * each first as often as last.  The rounds the sizing adds
		 * are A B, B A ... (C counts no seed effect). */
		int side;
		unsigned round;
		if (r < 3 * runs) {
			side = (r / 3) % 2 ? 2 - (int)(r % 3) : (int)(r % 3);
			round = r / 3;
		} else {
			unsigned x = r - 3 * runs;
			side = ((x / 2) % 2) ^ (int)(x % 2);
			round = runs + x / 2;
		}
		child_argv_add(&a, "flushkit");
		child_argv_add(&a, "bench");
		child_argv_add(&a, "tpcb");
		child_argv_add(&a, "-c");
		child_argv_add(&a, "%d", clients);
		child_argv_add(&a, "-j");
		child_argv_add(&a, "%d", clients < 2 ? 1 : 2);
		child_argv_add(&a, "-T");
		child_argv_add(&a, "%d", secs);
		child_argv_add(&a, "-P");
		child_argv_add(&a, "1");
		child_argv_add(&a, "--data-dir=%s/db", d->mnt);
		child_argv_add(&a, "--flush=smooth");
		child_argv_add(&a, "--shared-buffers=%s", sb);
		child_argv_add(&a, "--checkpoint-timeout=%s", cpt);
		child_argv_add(&a, "--checkpoint-flush-after=256kB");
		child_argv_add(&a, "--checkpoint-flush-wait=%s",
			       wait_000[side]);
		child_argv_add(&a, "--log-checkpoints=off");
		child_argv_add(&a, "--results=%s", dir_000[side]);
		char logname[64];
		snprintf(logname, sizeof(logname), "%c-%u.log", 'a' + side,
			 round + 1);
		rc = run_args(c, logname, &a);
		if (rc || r + 1 != 3 * runs || total >= cap)
			continue;
		struct vals va, vb;
		unsigned need = 0;
		static const struct {
			const char *key;
			double rel;
		} eff[] = {{"tps", 9369.212 / 7871.887 - 1},
			   {"lat_stddev_ms", 24.423 / 35.376 - 1}};
		for (size_t i = 0; i < sizeof(eff) / sizeof(eff[0]); i++) {
			summary_vals(da, eff[i].key, &va);
			summary_vals(db, eff[i].key, &vb);
			struct fk_stats_summary s;
			fk_stats_summarize(va.v, va.n, &s);
			unsigned n =
			    runs_for_effect(&va, &vb, eff[i].rel * s.mean);
			if (n > need)
				need = n;
		}
		unsigned next = need > cap ? cap : need;
		printf("000: after %u runs a side, the seed's effects need %u "
		       "a side at this spread; running %u\n",
		       total, need, next > total ? next : total);
		fflush(stdout);
		if (next > total) {
			end += 2 * (next - total);
			total = next;
		}
	}
	if (rc)
		return rc;

	struct table t;
	char cmd[400];
	snprintf(cmd, sizeof(cmd),
		 "bench tpcb -s %d -c %d -T %d -P 1 --flush=smooth "
		 "--shared-buffers=%s --checkpoint-timeout=%s "
		 "--checkpoint-flush-after=256kB",
		 scale, clients, secs, sb, cpt);
	char ta[512], tb[512], tc[512];
	snprintf(ta, sizeof(ta), "%s --checkpoint-flush-wait=before", cmd);
	snprintf(tb, sizeof(tb), "%s --checkpoint-flush-wait=off", cmd);
	snprintf(tc, sizeof(tc), "%s --checkpoint-flush-wait=all", cmd);
	if (table_open(c, &t, "000: sync_file_range with WB_SYNC_NONE (TPC-B)",
		       ta, tb))
		return -EIO;
	table_000(&t, da, db);
	table_close(&t);
	if (table_open_mode(c, &t,
			    "000, a third configuration (not the seed's): "
			    "hints that wait for their own writes too",
			    tc, tb, "ae"))
		return -EIO;
	table_note(&t, "No kernel made the plain call wait for its own "
		       "writes: this is every checkpoint write made "
		       "synchronous, beside B; no seed figure, no seed "
		       "effect counted.\n");
	table_head(&t, "—", "—");
	for (size_t i = 0; i < sizeof(rows_000) / sizeof(rows_000[0]); i++) {
		struct vals vc, vb;
		summary_vals(dc, rows_000[i].key, &vc);
		summary_vals(db, rows_000[i].key, &vb);
		table_row(&t, rows_000[i].label, "—", "—", '?', &vc, &vb);
	}
	table_end(&t);
	fclose(t.md);
	fclose(t.html);
	int ran;
	rc = peer_000(c, d, total, scale, clients, secs, sb, &ran);
	if (rc)
		return rc;
	char pa[2300], pb[2300];
	snprintf(pa, sizeof(pa), "%s/pg-a", c->seed_dir);
	snprintf(pb, sizeof(pb), "%s/pg-b", c->seed_dir);
	const char *dirs[] = {da, db, dc, pa, pb};
	return make_report(c, dirs, ran ? 5 : 3);
}
