// SPDX-License-Identifier: MIT
/*
 * 002.c - seed 002, fsync request queue compaction (Greg Smith,
 * pgsql-hackers 2011: "Spread checkpoint sync", pgbench at scale 500 and
 * 1000, 16-256 clients, on disks).
 *
 * The seed: when the checkpointer's fsync request queue is full, each
 * backend that writes a dirty buffer fsyncs the file itself; the patch
 * compacts the queue (drops duplicate requests) instead.  Set #5 (the
 * unmodified server) against set #6 (compaction): zero backend fsyncs,
 * tps +14% at scale 500 and +8% at 1000.
 *
 * Ours (on the hdd model by default):
 *   unmodified server (9.1dev, 2010) -> A: bench series --scales=20,40
 *                          --clients=32 -T 180 --runs=3 with --flush=naive (the
 *                          server of the time: unsorted checkpoint writes,
 *                          no writeback hints, one fsync after the other,
 *                          no compaction) --shared-buffers=8MB
 *                          --checkpoint-timeout=15s
 *   compacted fsync      -> B: the same with --fsyncq-compaction=on, the
 *                          patch's one change
 *   the seed's database several times shared_buffers -> ours 36-72 times
 *   (290 and 580 MB against 8 MB: 1024 buffers, the queue's capacity).
 * The seed's effect needs a queue that really fills: the progress lines'
 * fsyncq_queued / fsyncq_capacity give the share of seconds it ran full,
 * a row of its own per cell beside the backend fsyncs.  (With --flush=
 * smooth, the earlier mapping, writeback hints and the spread sync kept
 * the checkpointer absorbing: tens of backend fsyncs in 45 s, against
 * 774 in 40 s with naive at scale 40, 32 clients, on hdd.)
 */
#include "reproduce.h"

/* ---- 002: fsync request queue compaction ----------------------------- */

/* Per result file (one run) of @dir: the share of its progress
 * seconds whose fsync request queue was full (fsyncq_queued >=
 * fsyncq_capacity) into @full; the seconds with the queue's fill known
 * into *@secs (0: the lines carry no fill). */
static void queue_full_share(const char *dir, struct vals *full, double *secs)
{
	char **names;
	size_t nr;
	memset(full, 0, sizeof(*full));
	*secs = 0;
	if (results_list(dir, &names, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		char *line = NULL;
		size_t cap = 0;
		double n = 0, nfull = 0;
		while (getline(&line, &cap, f) > 0) {
			if (!strstr(line, "\"fsyncq_queued\""))
				continue;
			struct json_object *o = json_tokener_parse(line), *q,
					   *k, *ty;
			if (o && json_object_object_get_ex(o, "type", &ty) &&
			    !strcmp(json_object_get_string(ty), "progress") &&
			    json_object_object_get_ex(o, "fsyncq_queued", &q) &&
			    json_object_object_get_ex(o, "fsyncq_capacity",
						      &k)) {
				n++;
				if (json_object_get_int64(q) >=
				    json_object_get_int64(k))
					nfull++;
			}
			json_object_put(o);
		}
		free(line);
		fclose(f);
		if (n) {
			vals_add(full, nfull / n);
			*secs += n;
		}
	}
	results_list_free(names, nr);
}

int seed_002(struct ctx *c, struct disk *d)
{
	/* Sized so that the queue really fills (thousands of backend
	 * fsyncs a run without compaction): 8 MB of shared buffers (1024
	 * buffers, the queue's capacity) under 290 and 580 MB, 32 clients
	 * (at 16 clients and scale 40 the queue never filled in 60 s), 180
	 * s a run (1274 backend fsyncs in 60 s at scale 20 on hdd), 3 runs
	 * a side (the tps spread of 60-s runs was 5-27%). */
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 3;
	const char *scales = c->quick ? "1" : "20,40";
	const char *clients = c->quick ? "4" : "32";
	int secs = c->quick ? 4 : 180;
	const char *common =
	    c->quick ? "--flush=naive --shared-buffers=1MB "
		       "--checkpoint-timeout=2s --log-checkpoints=off"
		     : "--flush=naive --shared-buffers=8MB "
		       "--checkpoint-timeout=15s --log-checkpoints=off";
	char sdir[2300];
	snprintf(sdir, sizeof(sdir), "%s/series", c->seed_dir);
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "flushkit");
	child_argv_add(&a, "bench");
	child_argv_add(&a, "series");
	child_argv_add(&a, "--scales=%s", scales);
	child_argv_add(&a, "--clients=%s", clients);
	child_argv_add(&a, "-T");
	child_argv_add(&a, "%d", secs);
	child_argv_add(&a, "--runs=%u", runs);
	child_argv_add(&a, "--config-a=%s --fsyncq-compaction=off", common);
	child_argv_add(&a, "--config-b=%s --fsyncq-compaction=on", common);
	child_argv_add(&a, "--results=%s", sdir);
	child_argv_add(&a, "--data-dir=%s/series", d->mnt);
	int rc = run_args(c, "series.log", &a);
	if (rc)
		return rc;

	struct table t;
	char ta[512], tb[512];
	snprintf(ta, sizeof(ta),
		 "bench series --scales=%s --clients=%s -T %d "
		 "with %s --fsyncq-compaction=off",
		 scales, clients, secs, common);
	snprintf(tb, sizeof(tb), "the same with --fsyncq-compaction=on");
	if (table_open(c, &t, "002: fsync request queue compaction (series)",
		       ta, tb))
		return -EIO;
	table_head(&t, "unmodified", "compacted");
	char csv[2300];
	snprintf(csv, sizeof(csv), "%s/seed-layout.csv", c->seed_dir);
	FILE *f = fopen(csv, "we");
	if (!f)
		return -errno;
	fprintf(f, ",,\"Unmodified\",,\"Compacted Fsync\",,,\n"
		   "\"scale\",\"clients\",\"tps\",\"max_latency\",\"tps\","
		   "\"max_latency\",\"TPS Gain\",\"%% Gain\"\n");
	char sc[64], cl[64];
	snprintf(sc, sizeof(sc), "%s", scales);
	char *s1 = NULL, *s2 = NULL;
	for (char *s = strtok_r(sc, ",", &s1); s;
	     s = strtok_r(NULL, ",", &s1)) {
		snprintf(cl, sizeof(cl), "%s", clients);
		for (char *k = strtok_r(cl, ",", &s2); k;
		     k = strtok_r(NULL, ",", &s2)) {
			char da[2600], db[2600], label[128];
			snprintf(da, sizeof(da), "%s/s%s-c%s-a", sdir, s, k);
			snprintf(db, sizeof(db), "%s/s%s-c%s-b", sdir, s, k);
			struct vals va, vb, la, lb, fa, fb;
			summary_vals(da, "tps", &va);
			summary_vals(db, "tps", &vb);
			summary_vals(da, "lat_max_ms", &la);
			summary_vals(db, "lat_max_ms", &lb);
			summary_vals(da, "backend_fsyncs", &fa);
			summary_vals(db, "backend_fsyncs", &fb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: tps", s, k);
			table_row(&t, label, "306-632", "321-747", '+', &va,
				  &vb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: max latency (ms)", s,
				 k);
			table_row(&t, label, "17963-80589", "17116-83232", '0',
				  &la, &lb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: backend fsyncs", s, k);
			table_row(&t, label, "many", "0", '-', &fa, &fb);
			struct vals qa, qb;
			double qsa, qsb;
			queue_full_share(da, &qa, &qsa);
			queue_full_share(db, &qb, &qsb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: seconds with the fsync "
				 "queue full (share)",
				 s, k);
			table_row(&t, label, "—", "—", '?', &qa, &qb);
			struct fk_stats_summary A, B, LA, LB;
			fk_stats_summarize(va.v, va.n, &A);
			fk_stats_summarize(vb.v, vb.n, &B);
			fk_stats_summarize(la.v, la.n, &LA);
			fk_stats_summarize(lb.v, lb.n, &LB);
			fprintf(
			    f, "%s,%s,%.0f,%.2f,%.0f,%.2f,%.0f,%.1f%%\n", s, k,
			    A.mean, LA.mean, B.mean, LB.mean, B.mean - A.mean,
			    A.mean ? 100 * (B.mean - A.mean) / A.mean : NAN);
		}
	}
	fclose(f);
	table_end(&t);
	table_note(&t, "\nThe queue's fill over time: the progress lines' "
		       "fsyncq_queued against fsyncq_capacity (the number of "
		       "buffers) each second; \"full\" is a second that ended "
		       "with the queue full, where a backend's write without "
		       "room becomes a backend fsync (A) or a compaction (B).  "
		       "The seed did not publish the queue's fill (its "
		       "direction: —).");
	table_note(&t, "\nThe seed's CSV (scale 500 and 1000, 16-256 clients):"
		       " average gain 14%% at 500, 8%% at 1000; ours in the "
		       "same layout: seed-layout.csv.");
	FILE *in = fopen(csv, "re");
	if (in) {
		char line[512];
		while (fgets(line, sizeof(line), in)) {
			line[strcspn(line, "\n")] = 0;
			table_note(&t, "    %s", line);
		}
		fclose(in);
	}
	char d1[2600], d2[2600];
	snprintf(d1, sizeof(d1), "%s/s%.*s-c%.*s-a", sdir,
		 (int)strcspn(scales, ","), scales, (int)strcspn(clients, ","),
		 clients);
	snprintf(d2, sizeof(d2), "%s/s%.*s-c%.*s-b", sdir,
		 (int)strcspn(scales, ","), scales, (int)strcspn(clients, ","),
		 clients);
	const char *dirs[] = {d1, d2};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}
