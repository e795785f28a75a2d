// SPDX-License-Identifier: MIT
/*
 * output.c - bench tpcb's output on stdout: the text summary (pgbench
 * 15's layout line for line, then flushkit's own lines) and --json.
 */
#include "tpcb.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void tpcb_print_check(const struct results *res)
{
	const struct tpcb_sums *s = &res->sums;
	printf("sum of account balances: %" PRId64 "\n", s->accounts);
	printf("sum of teller balances: %" PRId64 "\n", s->tellers);
	printf("sum of branch balances: %" PRId64 "\n", s->branches);
	printf("sum of history deltas: %" PRId64 " (%" PRIu64 " rows)\n",
	       s->history, s->history_rows);
	printf("consistency check: %s\n", res->check_ok ? "OK" : "FAILED");
}

/* The checkpoint sync phase's backend: as the run's last checkpoint
 * reported it, else what --sync-io resolves to on this machine. */
const char *tpcb_sync_io_used(struct run *r)
{
	pthread_mutex_lock(&r->ckpt_lock);
	const char *s = r->ckpt_sync_io;
	pthread_mutex_unlock(&r->ckpt_lock);
	if (!s)
		s = r->probed_sync_io;
	return s ? s : fk_sync_io_name(r->opts.sync_io);
}

/* Set r->probed_sync_io: the backend the open store chose for its
 * checkpoints' sync phase (fk_store_stats.sync_io). */
void tpcb_probe_sync_io(struct run *r)
{
	struct fk_store_stats st;
	fk_store_get_stats(r->store, &st);
	r->probed_sync_io = fk_sync_io_name(st.sync_io);
}

/*
 * The "duration:" line: the time the run really ran.  pgbench prints
 * the -T it was given; that is the time run only when the run was not
 * stopped early and did not overrun.  An early stop names its cause.
 */
static void print_duration(const struct run *r, const struct results *res)
{
	if (r->stopped_by[0] && r->duration_s)
		printf("duration: %.1f s (of %" PRIu64
		       " s requested: stopped by %s)\n",
		       res->elapsed_s, r->duration_s, r->stopped_by);
	else if (r->stopped_by[0])
		printf("duration: %.1f s (stopped by %s)\n", res->elapsed_s,
		       r->stopped_by);
	else if (fabs(res->elapsed_s - (double)r->duration_s) < 0.5)
		printf("duration: %" PRIu64 " s\n", r->duration_s);
	else
		printf("duration: %.1f s (of %" PRIu64 " s requested)\n",
		       res->elapsed_s, r->duration_s);
}

/* Script @k's figures summed over the clients, in @out. */
static void script_sum(const struct run *r, int k, struct script_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; r->clients && i < r->nclients; i++) {
		const struct script_stats *ss = &r->clients[i].ss[k];
		out->cnt += ss->cnt;
		out->failed += ss->failed;
		out->lat_sum += ss->lat_sum;
		out->lat_sumsq += ss->lat_sumsq;
		for (int s = 0; s < TPCB_MAX_STEPS; s++) {
			out->step_ns[s] += ss->step_ns[s];
			out->step_failed[s] += ss->step_failed[s];
		}
	}
}

/* -r: pgbench's "statement latencies in milliseconds and failures". */
static void print_steps(const struct run *r, int k, const char *prefix)
{
	struct script_stats ss;
	const struct tpcb_script *sc = &tpcb_scripts[r->scripts[k].id];
	script_sum(r, k, &ss);
	printf("%sstatement latencies in milliseconds and failures:\n", prefix);
	for (int s = 0; s < sc->nr_steps; s++)
		printf("   %11.3f  %10" PRIu64 "  %s\n",
		       ss.cnt ? (double)ss.step_ns[s] / 1e6 / (double)ss.cnt
			      : 0.0,
		       ss.step_failed[s], sc->steps[s]);
}

/* pgbench's per-script sections (more than one script). */
static void print_scripts(const struct run *r, const struct results *res)
{
	for (int k = 0; k < r->nr_scripts; k++) {
		struct script_stats ss;
		script_sum(r, k, &ss);
		uint64_t all = ss.cnt + ss.failed;
		double n = (double)ss.cnt, avg = n ? ss.lat_sum / n : 0;
		double var = n ? ss.lat_sumsq / n - avg * avg : 0;
		printf("SQL script %d: %s\n", k + 1,
		       tpcb_scripts[r->scripts[k].id].desc);
		printf(" - weight: %" PRIu64 " (targets %.1f%% of total)\n",
		       r->scripts[k].weight,
		       100.0 * (double)r->scripts[k].weight /
			   (double)r->total_weight);
		printf(" - %" PRIu64 " transactions (%.1f%% of total, tps = "
		       "%f)\n",
		       ss.cnt, res->cnt ? 100.0 * n / (double)res->cnt : 0.0,
		       res->elapsed_s > 0 ? n / res->elapsed_s : 0.0);
		printf(" - number of failed transactions: %" PRIu64
		       " (%.3f%%)\n",
		       ss.failed,
		       all ? 100.0 * (double)ss.failed / (double)all : 0.0);
		printf(" - latency average = %.3f ms\n", avg / 1000.0);
		printf(" - latency stddev = %.3f ms\n",
		       var > 0 ? sqrt(var) / 1000.0 : 0.0);
		if (r->report_steps)
			print_steps(r, k, " - ");
	}
}

/* The stall ratio's lines: over the window, then during and outside
 * the checkpoints, or that no checkpoint ran in the window. */
static void print_stall(const struct results_stall *st)
{
	if (isnan(st->ratio)) {
		printf("stall ratio = n/a (no full second after the %zu-s "
		       "warm-up)\n",
		       st->warmup_s);
		return;
	}
	printf("stall ratio = %.3f (worst one-second tps %.0f, median %.*f, "
	       "over %zu s after a %zu-s warm-up)\n",
	       st->ratio, st->worst, is_whole(st->median) ? 0 : 1, st->median,
	       st->seconds, st->warmup_s);
	if (!st->ckpt_seconds) {
		printf("stall ratio during checkpoints = n/a (no checkpoint "
		       "ran in the %zu-s window: the stall ratio above says "
		       "nothing about checkpoints)\n",
		       st->seconds);
		return;
	}
	printf("stall ratio during checkpoints = %.3f (worst %.0f tps, %zu "
	       "of the %zu s)",
	       st->ratio_ckpt, st->worst_ckpt, st->ckpt_seconds, st->seconds);
	if (isnan(st->ratio_outside))
		printf(", outside = n/a (a checkpoint ran in every second)\n");
	else
		printf(", outside = %.3f (worst %.0f tps)\n", st->ratio_outside,
		       st->worst_outside);
}

void tpcb_print_summary(struct run *r, const struct results *res)
{
	const struct fk_store_stats *a = &res->st0, *b = &res->st1;
	uint64_t total = res->cnt + res->skipped + res->failed;
	/* pgbench's layout first, line for line; flushkit's own lines
	 * (storage, percentiles, stall ratio, checkpoints) after it */
	printf("flushkit bench tpcb (flushkit %s)\n", fk_version());
	printf("transaction type: %s\n",
	       r->nr_scripts > 1 ? "multiple scripts"
				 : tpcb_scripts[r->scripts[0].id].desc);
	printf("scaling factor: %" PRIu64 "\n", r->tables.scale);
	printf("query mode: %s\n", r->query_mode);
	printf("number of clients: %d\n", r->nclients);
	printf("number of threads: %d\n", r->nthreads);
	printf("maximum number of tries: %d\n",
	       r->max_tries ? r->max_tries : 1);
	if (r->duration_s) {
		print_duration(r, res);
		printf("number of transactions actually processed: %" PRIu64
		       "\n",
		       res->cnt);
	} else {
		printf("number of transactions per client: %" PRIu64 "\n",
		       r->nxacts);
		printf("number of transactions actually processed: %" PRIu64
		       "/%" PRIu64 "\n",
		       res->cnt, r->nxacts * (uint64_t)r->nclients);
		if (r->stopped_by[0])
			print_duration(r, res);
	}
	printf("number of failed transactions: %" PRIu64 " (%.3f%%)\n",
	       res->failed,
	       total ? 100.0 * (double)res->failed / (double)total : 0.0);
	if (r->rate > 0 && r->latency_limit_ms > 0)
		printf("number of transactions skipped: %" PRIu64 " (%.3f%%)\n",
		       res->skipped,
		       total ? 100.0 * (double)res->skipped / (double)total
			     : 0.0);
	if (r->latency_limit_ms > 0)
		printf(
		    "number of transactions above the %.1f ms latency limit: "
		    "%" PRIu64 "/%" PRIu64 " (%.3f%%)\n",
		    r->latency_limit_ms, res->late, res->cnt,
		    res->cnt ? 100.0 * (double)res->late / (double)res->cnt
			     : 0.0);
	if (r->progress_s || r->rate > 0 || r->latency_limit_ms > 0) {
		printf("latency average = %.3f ms\n", res->lat_avg_ms);
		printf("latency stddev = %.3f ms\n", res->lat_std_ms);
	} else {
		/* as pgbench: from the run time, without measurements */
		printf("latency average = %.3f ms\n",
		       res->cnt ? 1000.0 * res->elapsed_s * r->nclients /
				      (double)res->cnt
				: 0.0);
	}
	if (r->rate > 0)
		printf("rate limit schedule lag: avg %.3f (max %.3f) ms\n",
		       res->lag_avg_ms, res->lag_max_ms);
	printf("initial connection time = %.3f ms\n", r->conn_ms);
	printf("tps = %f (without initial connection time)\n", res->tps);
	if (r->nr_scripts > 1)
		print_scripts(r, res);
	else if (r->report_steps)
		print_steps(r, 0, "");
	printf("storage: flushkit page store (flush=%s)\n", r->flush);
	if (!strcmp(tpcb_sync_io_used(r), "sequential"))
		printf("checkpoint sync: sequential, one fsync at a time\n");
	else
		printf("checkpoint sync: %s, up to %u fsyncs in flight\n",
		       tpcb_sync_io_used(r), tpcb_sync_jobs(&r->opts));
	printf("latency percentiles: p50 = %.3f ms, p90 = %.3f ms, "
	       "p99 = %.3f ms, p99.9 = %.3f ms, max = %.3f ms\n",
	       (double)res->p50 / 1000, (double)res->p90 / 1000,
	       (double)res->p99 / 1000, (double)res->p999 / 1000,
	       (double)res->max / 1000);
	print_stall(&res->stall);
	printf("checkpoints: %" PRIu64 "\n", b->checkpoints - a->checkpoints);
	printf("buffers written: checkpoint %" PRIu64 ", backend %" PRIu64 "\n",
	       b->buffers_checkpoint - a->buffers_checkpoint,
	       b->buffers_backend - a->buffers_backend);
	printf("backend fsyncs: %" PRIu64 "\n",
	       b->backend_fsyncs - a->backend_fsyncs);
	printf("full-page images: %" PRIu64 ", %.1f MiB of WAL "
	       "(wal_compression %s)\n",
	       b->wal_fpi - a->wal_fpi,
	       (double)(b->wal_fpi_bytes - a->wal_fpi_bytes) / 1048576.0,
	       fk_wal_compression_name(r->opts.wal_compression));
	if (res->check_done)
		tpcb_print_check(res);
}

static void json_check(struct json_object *o, const struct results *res)
{
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "accounts",
			       jint((uint64_t)res->sums.accounts));
	json_object_object_add(c, "tellers", jint((uint64_t)res->sums.tellers));
	json_object_object_add(c, "branches",
			       jint((uint64_t)res->sums.branches));
	json_object_object_add(c, "history", jint((uint64_t)res->sums.history));
	json_object_object_add(c, "history_rows", jint(res->sums.history_rows));
	json_object_object_add(c, "ok", json_object_new_boolean(res->check_ok));
	json_object_object_add(o, "check", c);
}

/* --json: each script's figures, and with -r its statements' times. */
static struct json_object *scripts_json(const struct run *r)
{
	struct json_object *a = json_object_new_array();
	for (int k = 0; k < r->nr_scripts; k++) {
		const struct tpcb_script *sc = &tpcb_scripts[r->scripts[k].id];
		struct script_stats ss;
		script_sum(r, k, &ss);
		double n = (double)ss.cnt, avg = n ? ss.lat_sum / n : 0;
		double var = n ? ss.lat_sumsq / n - avg * avg : 0;
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "name",
				       json_object_new_string(sc->name));
		json_object_object_add(o, "weight", jint(r->scripts[k].weight));
		json_object_object_add(o, "transactions", jint(ss.cnt));
		json_object_object_add(o, "failed", jint(ss.failed));
		json_object_object_add(o, "latency_avg_ms",
				       jdouble(avg / 1000.0));
		json_object_object_add(
		    o, "latency_stddev_ms",
		    jdouble(var > 0 ? sqrt(var) / 1000.0 : 0.0));
		if (r->report_steps) {
			struct json_object *st = json_object_new_array();
			for (int i = 0; i < sc->nr_steps; i++) {
				struct json_object *e =
				    json_object_new_object();
				json_object_object_add(
				    e, "statement",
				    json_object_new_string(sc->steps[i]));
				json_object_object_add(
				    e, "latency_ms",
				    jdouble(n ? (double)ss.step_ns[i] / 1e6 / n
					      : 0.0));
				json_object_array_add(st, e);
			}
			json_object_object_add(o, "statements", st);
		}
		json_object_array_add(a, o);
	}
	return a;
}

void tpcb_print_json(struct run *r, const struct results *res, int ran)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "transaction_type",
			       json_object_new_string("TPC-B (sort of)"));
	json_object_object_add(o, "scale", jint(r->tables.scale));
	json_object_object_add(o, "storage",
			       json_object_new_string("flushkit page store"));
	json_object_object_add(o, "flush", json_object_new_string(r->flush));
	json_object_object_add(o, "sync_io",
			       json_object_new_string(tpcb_sync_io_used(r)));
	json_object_object_add(o, "sync_jobs", jint(tpcb_sync_jobs(&r->opts)));
	if (ran) {
		const struct fk_store_stats *a = &res->st0, *b = &res->st1;
		json_object_object_add(o, "clients",
				       jint((uint64_t)r->nclients));
		json_object_object_add(o, "threads",
				       jint((uint64_t)r->nthreads));
		if (r->duration_s)
			json_object_object_add(o, "duration_s",
					       jint(r->duration_s));
		else
			json_object_object_add(o, "transactions_per_client",
					       jint(r->nxacts));
		json_object_object_add(o, "elapsed_s", jdouble(res->elapsed_s));
		json_object_object_add(
		    o, "status",
		    json_object_new_string(r->failure[0] ? "failed" : "ok"));
		if (r->failure[0])
			json_object_object_add(
			    o, "error", json_object_new_string(r->failure));
		if (r->stopped_by[0])
			json_object_object_add(
			    o, "stopped_by",
			    json_object_new_string(r->stopped_by));
		json_object_object_add(o, "transactions", jint(res->cnt));
		json_object_object_add(o, "failed", jint(res->failed));
		json_object_object_add(o, "query_mode",
				       json_object_new_string(r->query_mode));
		json_object_object_add(o, "scripts", scripts_json(r));
		json_object_object_add(o, "skipped", jint(res->skipped));
		if (r->latency_limit_ms > 0) {
			json_object_object_add(o, "latency_limit_ms",
					       jdouble(r->latency_limit_ms));
			json_object_object_add(o, "late", jint(res->late));
		}
		if (r->rate > 0) {
			json_object_object_add(o, "rate", jdouble(r->rate));
			json_object_object_add(o, "lag_avg_ms",
					       jdouble(res->lag_avg_ms));
			json_object_object_add(o, "lag_max_ms",
					       jdouble(res->lag_max_ms));
		}
		json_object_object_add(o, "latency_avg_ms",
				       jdouble(res->lat_avg_ms));
		json_object_object_add(o, "latency_stddev_ms",
				       jdouble(res->lat_std_ms));
		json_object_object_add(o, "connection_time_ms",
				       jdouble(r->conn_ms));
		json_object_object_add(o, "tps", jdouble(res->tps));
		struct json_object *p = json_object_new_object();
		json_object_object_add(p, "p50",
				       jdouble((double)res->p50 / 1000));
		json_object_object_add(p, "p90",
				       jdouble((double)res->p90 / 1000));
		json_object_object_add(p, "p99",
				       jdouble((double)res->p99 / 1000));
		json_object_object_add(p, "p99.9",
				       jdouble((double)res->p999 / 1000));
		json_object_object_add(p, "max",
				       jdouble((double)res->max / 1000));
		json_object_object_add(o, "latency_ms", p);
		results_stall_json(o, &res->stall);
		struct json_object *ser = json_object_new_array();
		for (size_t i = 0; i < res->nr_series; i++)
			json_object_array_add(ser, jint(res->series[i]));
		json_object_object_add(o, "tps_series", ser);
		json_object_object_add(o, "tps_series_full_seconds",
				       jint(res->full_secs));
		struct json_object *ck = json_object_new_array();
		pthread_mutex_lock(&r->ckpt_lock);
		for (size_t i = 0; i < r->nr_ckpts; i++) {
			const struct ckpt_event *e = &r->ckpts[i];
			struct json_object *j = json_object_new_object();
			json_object_object_add(j, "at_s", jdouble(e->at_s));
			json_object_object_add(
			    j, "reason", json_object_new_string(e->reason));
			json_object_object_add(j, "buffers_written",
					       jint(e->ci.buffers_written));
			json_object_object_add(
			    j, "write_s", jdouble(ms_to_s(e->ci.write_ms)));
			json_object_object_add(j, "sync_s",
					       jdouble(ms_to_s(e->ci.sync_ms)));
			json_object_object_add(
			    j, "total_s", jdouble(ms_to_s(e->ci.total_ms)));
			json_object_object_add(j, "sync_files",
					       jint(e->ci.files_synced));
			json_object_object_add(
			    j, "longest_sync_s",
			    jdouble(ms_to_s(e->ci.longest_sync_ms)));
			json_object_object_add(
			    j, "average_sync_s",
			    jdouble(ms_to_s(e->ci.average_sync_ms)));
			json_object_object_add(j, "writeback_bytes",
					       jint(e->ci.writeback_bytes));
			if (e->ci.error)
				json_object_object_add(
				    j, "error",
				    json_object_new_string(
					fk_strerror(e->ci.error)));
			json_object_array_add(ck, j);
		}
		pthread_mutex_unlock(&r->ckpt_lock);
		json_object_object_add(o, "checkpoint_events", ck);
		json_object_object_add(o, "checkpoints",
				       jint(b->checkpoints - a->checkpoints));
		json_object_object_add(
		    o, "buffers_checkpoint",
		    jint(b->buffers_checkpoint - a->buffers_checkpoint));
		json_object_object_add(
		    o, "buffers_backend",
		    jint(b->buffers_backend - a->buffers_backend));
		json_object_object_add(
		    o, "backend_fsyncs",
		    jint(b->backend_fsyncs - a->backend_fsyncs));
		json_object_object_add(o, "wal_bytes",
				       jint(b->wal_bytes - a->wal_bytes));
		json_object_object_add(o, "wal_flushes",
				       jint(b->wal_flushes - a->wal_flushes));
	}
	if (res->check_done)
		json_check(o, res);
	results_json_print(o);
	json_object_put(o);
}
