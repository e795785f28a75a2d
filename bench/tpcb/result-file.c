// SPDX-License-Identifier: MIT
/*
 * result-file.c - bench tpcb's result file (cli/results.h): its
 * "settings" line (the run's options and every store knob of the knob
 * table) and "summary" line, opening and closing it, and the -l
 * per-transaction logs it names.
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

/* ---- the result file ---- */

/*
 * The "settings" line: the run's options and every store knob.  The
 * knobs the flush preset sets (sorted writes, writeback hints, sync
 * spread, queue compaction, sync_io) are top-level fields only when
 * given on the command line, so that a naive and a smooth run are
 * labelled "flush=naive" and "flush=smooth" by flushkit report, not by
 * each knob the preset changes; all of them are in "store", as used.
 */
static struct json_object *settings_json(struct run *r)
{
	const struct fk_store_opts *o = &r->opts;
	struct json_object *j = json_object_new_object(), *st;
#define S(k, v) json_object_object_add(j, k, json_object_new_string(v))
#define I(k, v) json_object_object_add(j, k, jint(v))
#define GIVEN(i) (r->knobs_given & (1ull << (i)))
	S("bench", "tpcb");
	S("flush", r->flush);
	I("scale", r->tables.scale);
	I("clients", (uint64_t)r->nclients);
	I("threads", (uint64_t)r->nthreads);
	if (r->duration_s)
		I("duration_s", r->duration_s);
	else
		I("transactions_per_client", r->nxacts);
	if (r->progress_s)
		I("progress_s", r->progress_s);
	if (r->rate > 0)
		json_object_object_add(j, "rate",
				       results_json_double(r->rate, 3));
	if (r->latency_limit_ms > 0)
		json_object_object_add(
		    j, "latency_limit_ms",
		    results_json_double(r->latency_limit_ms, 3));
	for (size_t i = 0; i < tpcb_nr_knobs; i++) {
		const struct tpcb_knob *k = &tpcb_knobs[i];
		if (k->show == KNOB_SHOW_ALWAYS ||
		    (k->show == KNOB_SHOW_GIVEN && GIVEN(i)))
			json_object_object_add(j, k->key, tpcb_knob_json(k, o));
	}
	S("data_dir", r->data_dir);
	if (r->has_device)
		S("device", r->device.name);
	I("seed", r->seed);

	st = json_object_new_object();
	for (size_t i = 0; i < tpcb_nr_knobs; i++)
		json_object_object_add(st, tpcb_knobs[i].store_key,
				       tpcb_knob_store_json(&tpcb_knobs[i], o));
	json_object_object_add(st, "fsyncq_capacity", jint(o->fsyncq_capacity));
	json_object_object_add(j, "store", st);
	S("query_mode", r->query_mode);
	if (r->nr_scripts > 1 || r->scripts[0].id != TPCB_SCRIPT_TPCB_LIKE) {
		struct json_object *a = json_object_new_array();
		for (int i = 0; i < r->nr_scripts; i++) {
			char w[96];
			snprintf(w, sizeof(w), "%s@%" PRIu64,
				 tpcb_scripts[r->scripts[i].id].name,
				 r->scripts[i].weight);
			json_object_array_add(a, json_object_new_string(w));
		}
		json_object_object_add(j, "scripts", a);
	}
	if (r->sample_rate > 0)
		json_object_object_add(j, "sampling_rate",
				       results_json_double(r->sample_rate, 6));
	if (r->agg_interval_s)
		I("aggregate_interval_s", r->agg_interval_s);
	if (r->log_paths) {
		/* per-transaction logs are what report plots; aggregate
		 * logs have another layout */
		struct json_object *a = json_object_new_array();
		for (int i = 0; i < r->nthreads; i++)
			json_object_array_add(
			    a, json_object_new_string(r->log_paths[i]));
		json_object_object_add(
		    j, r->agg_interval_s ? "aggregate_log" : "latency_log", a);
	}
#undef S
#undef I
#undef GIVEN
	return j;
}

/* The "summary" line: what flushkit report reads (tps, lat_avg_ms,
 * lat_p99_ms, lat_max_ms, stall_ratio, checkpoints, backend_fsyncs,
 * duration_s) and the rest of the run's totals. */
struct json_object *tpcb_summary_json(struct run *r, const struct results *res,
				      int status)
{
	const struct fk_store_stats *a = &res->st0, *b = &res->st1;
	struct json_object *j = json_object_new_object();
#define D(k, v, dec) json_object_object_add(j, k, results_json_double(v, dec))
#define I(k, v) json_object_object_add(j, k, jint(v))
	D("tps", res->tps, 3);
	I("transactions", res->cnt);
	I("failed", res->failed);
	if (r->rate > 0 && r->latency_limit_ms > 0)
		I("skipped", res->skipped);
	if (r->latency_limit_ms > 0)
		I("late", res->late);
	if (r->rate > 0) {
		D("lag_avg_ms", res->lag_avg_ms, 3);
		D("lag_max_ms", res->lag_max_ms, 3);
	}
	D("duration_s", res->elapsed_s, 3);
	D("lat_avg_ms", res->lat_avg_ms, 3);
	D("lat_stddev_ms", res->lat_std_ms, 3);
	D("lat_p50_ms", (double)res->p50 / 1000, 3);
	D("lat_p90_ms", (double)res->p90 / 1000, 3);
	D("lat_p99_ms", (double)res->p99 / 1000, 3);
	D("lat_p999_ms", (double)res->p999 / 1000, 3);
	D("lat_max_ms", (double)res->max / 1000, 3);
	results_stall_json(j, &res->stall);
	I("checkpoints", b->checkpoints - a->checkpoints);
	I("buffers_checkpoint", b->buffers_checkpoint - a->buffers_checkpoint);
	I("buffers_backend", b->buffers_backend - a->buffers_backend);
	I("backend_fsyncs", b->backend_fsyncs - a->backend_fsyncs);
	I("fsyncq_compactions", b->fsyncq_compactions - a->fsyncq_compactions);
	I("wal_bytes", b->wal_bytes - a->wal_bytes);
	I("wal_flushes", b->wal_flushes - a->wal_flushes);
	I("wal_fpi", b->wal_fpi - a->wal_fpi);
	I("wal_fpi_bytes", b->wal_fpi_bytes - a->wal_fpi_bytes);
	json_object_object_add(j, "sync_io",
			       json_object_new_string(tpcb_sync_io_used(r)));
	I("sync_jobs", tpcb_sync_jobs(&r->opts));
	D("connection_time_ms", r->conn_ms, 3);
	if (res->check_done)
		json_object_object_add(j, "check_ok",
				       json_object_new_boolean(res->check_ok));
	if (b->error)
		json_object_object_add(
		    j, "store_error",
		    json_object_new_string(fk_strerror(b->error)));
	if (r->stopped_by[0])
		json_object_object_add(j, "stopped_by",
				       json_object_new_string(r->stopped_by));
	I("exit_status", (uint64_t)status);
#undef D
#undef I
	return j;
}

static int set_log_paths(struct run *r);

/* Open the result file and write its settings and env lines.  Returns
 * 0 or -1 (reported). */
int tpcb_open_results(struct run *r)
{
	struct result_file *rf;
	int ret = results_open(r->results_dir, "tpcb", &rf);
	if (ret) {
		cli_error("open '%s': %s", r->results_dir, fk_strerror(ret));
		return -1;
	}
	if (r->groups && (ret = set_log_paths(r))) {
		cli_error("open '%s': %s", r->results_dir, fk_strerror(ret));
		results_close(rf);
		return -1;
	}
	results_write(rf, "settings", settings_json(r));
	const char *paths[] = {r->data_dir};
	results_env(rf, paths, 1);
	pthread_mutex_lock(&r->ckpt_lock);
	r->rf = rf;
	pthread_mutex_unlock(&r->ckpt_lock);
	return 0;
}

/* Stop recording checkpoints (the store's shutdown checkpoint is not
 * part of the run); returns the result file or NULL. */
struct result_file *tpcb_detach_results(struct run *r)
{
	pthread_mutex_lock(&r->ckpt_lock);
	struct result_file *rf = r->rf;
	r->rf = NULL;
	pthread_mutex_unlock(&r->ckpt_lock);
	return rf;
}

/* Close the result file, then say where it is (the last line on
 * stderr).  Returns 0 or -1 (reported). */
int tpcb_close_results(struct run *r, struct result_file *rf)
{
	if (!rf)
		return 0;
	char *path = strdup(results_path(rf));
	int ret = results_close(rf);
	fflush(stdout); /* the path comes last, after the summary */
	if (ret)
		cli_error("write '%s': %s", path ? path : r->results_dir,
			  fk_strerror(ret));
	else if (path)
		fprintf(stderr, "result file: %s\n", path);
	free(path);
	return ret ? -1 : 0;
}

/*
 * -l: one log file per thread, named as pgbench names them: PREFIX.PID
 * for thread 0, PREFIX.PID.N for thread N, in the current directory
 * unless the prefix says otherwise; the clients are dealt out to the
 * threads in blocks as pgbench deals them.
 */
int tpcb_open_logs(struct run *r)
{
	char name[4096];
	r->groups = calloc((size_t)r->nthreads, sizeof(*r->groups));
	if (!r->groups) {
		cli_error("out of memory");
		return -1;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int dealt = 0;
	for (int i = 0; i < r->nthreads; i++) {
		struct tgroup *g = &r->groups[i];
		pthread_mutex_init(&g->lock, NULL);
		g->lock_ok = 1;
		tpcb_rng_seed(&g->sample_rng, r->seed ^ (0x9e3779b97f4a7c15ull *
							 (uint64_t)(i + 1)));
		tpcb_agg_reset(&g->agg, (int64_t)ts.tv_sec);
		if (i == 0)
			snprintf(name, sizeof(name), "%s.%d", r->log_prefix,
				 (int)getpid());
		else
			snprintf(name, sizeof(name), "%s.%d.%d", r->log_prefix,
				 (int)getpid(), i);
		g->path = strdup(name);
		int fd = open(
		    name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0644);
		g->log = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!g->log || !g->path) {
			cli_error("could not open logfile \"%s\": %s", name,
				  strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		int n = (r->nclients - dealt + r->nthreads - i - 1) /
			(r->nthreads - i);
		for (int k = 0; k < n; k++)
			r->clients[dealt + k].grp = g;
		dealt += n;
	}
	return 0;
}

/* The path of @to relative to the directory @from (both absolute and
 * canonical), in @out. */
static void relative_path(const char *from, const char *to, char *out,
			  size_t len)
{
	size_t common = 0, i = 0;
	/* the longest common prefix that ends at a component boundary */
	for (; from[i] && from[i] == to[i]; i++)
		if (from[i] == '/')
			common = i;
	if (!from[i] && (to[i] == '/' || !to[i]))
		common = i;
	size_t o = 0;
	out[0] = '\0';
	for (const char *p = from + common; *p; p++)
		if (*p == '/' && o + 4 < len) {
			memcpy(out + o, "../", 4);
			o += 3;
		}
	const char *rest = to + common;
	if (*rest == '/')
		rest++;
	snprintf(out + o, len - o, "%s", rest);
}

/* For the result file: each log's path relative to the directory of
 * the result file (what flushkit report reads them from), so that a
 * results folder copied together with its logs still plots. */
static int set_log_paths(struct run *r)
{
	char dir[PATH_MAX], log[PATH_MAX], rel[2 * PATH_MAX];
	if (!realpath(r->results_dir, dir))
		return -errno;
	r->log_paths = calloc((size_t)r->nthreads, sizeof(*r->log_paths));
	if (!r->log_paths)
		return -ENOMEM;
	for (int i = 0; i < r->nthreads; i++) {
		if (!realpath(r->groups[i].path, log))
			return -errno;
		if (!strcmp(dir, "/"))
			snprintf(rel, sizeof(rel), "%s", log + 1);
		else
			relative_path(dir, log, rel, sizeof(rel));
		if (!(r->log_paths[i] = strdup(rel)))
			return -ENOMEM;
	}
	return 0;
}

/* Close the -l logs, the last aggregate first.  Returns 0 or -1. */
int tpcb_close_logs(struct run *r)
{
	int ret = 0;
	for (int i = 0; r->groups && i < r->nthreads; i++) {
		struct tgroup *g = &r->groups[i];
		if (g->log && r->agg_interval_s && g->agg.cnt + g->agg.skipped)
			tpcb_agg_print(g->log, &g->agg);
		if (g->log && fclose(g->log)) {
			cli_error("write '%s': %s", g->path, strerror(errno));
			ret = -1;
		}
		if (g->lock_ok)
			pthread_mutex_destroy(&g->lock);
		free(g->path);
	}
	free(r->groups);
	r->groups = NULL;
	return ret;
}
