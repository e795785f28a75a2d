// SPDX-License-Identifier: MIT
/*
 * result-file.c - bench fsmark's result file (cli/results.h):
 * settings, the progress thread's one-second lines, the summary.
 */
#include "cli-sys.h"
#include "cli.h"
#include "fsmark.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* ---- progress lines of the result file ---- */

/* Write the "progress" line of [@begin_ns, @end_ns) and note its files
 * in f->per_sec when it is a full second.  The last, partial interval
 * (!@full) is written whenever it holds files, however short, so every
 * completed file is in exactly one line (a run shorter than 100 ms has
 * only that line); an empty one shorter than 100 ms is left out. */
static void progress_line(struct fsm *f, uint64_t begin_ns, uint64_t end_ns,
			  int full)
{
	struct interval sum = {0};
	for (unsigned i = 0; i < f->threads; i++) {
		struct fsm_thread *t = &f->th[i];
		pthread_mutex_lock(&t->lock);
		sum.cnt += t->iv.cnt;
		sum.lat_sum += t->iv.lat_sum;
		sum.lat_sumsq += t->iv.lat_sumsq;
		if (t->iv.lat_max > sum.lat_max)
			sum.lat_max = t->iv.lat_max;
		memset(&t->iv, 0, sizeof(t->iv));
		pthread_mutex_unlock(&t->lock);
	}
	double n = (double)sum.cnt, len_s = (double)(end_ns - begin_ns) / 1e9;
	if (!full && !sum.cnt && len_s < 0.1)
		return;
	double avg = n ? sum.lat_sum / n : 0;
	double var = n ? sum.lat_sumsq / n - avg * avg : 0;
	results_progress(f->rf, results_mono_s(f->rf, end_ns),
			 len_s > 0 ? n / len_s : 0, avg / 1000.0,
			 var > 0 ? sqrt(var) / 1000.0 : 0,
			 sum.lat_max / 1000.0);
	if (!full)
		return;
	if (f->nr_sec == f->alloc_sec) {
		size_t a = f->alloc_sec ? 2 * f->alloc_sec : 64;
		uint32_t *p = realloc(f->per_sec, a * sizeof(*p));
		if (!p)
			return;
		f->per_sec = p;
		f->alloc_sec = a;
	}
	f->per_sec[f->nr_sec++] = (uint32_t)sum.cnt;
}

/* One "progress" line per second until fsm.prog_stop, then one for the
 * last partial second (see progress_line). */
static void *progress_main(void *arg)
{
	struct fsm *f = arg;
	uint64_t last = f->prog_start_ns, next = last + 1000000000ull;
	pthread_mutex_lock(&f->prog_lock);
	for (;;) {
		struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
				      .tv_nsec = (long)(next % 1000000000ull)};
		while (!f->prog_stop &&
		       pthread_cond_timedwait(&f->prog_cond, &f->prog_lock,
					      &ts) != ETIMEDOUT)
			;
		if (f->prog_stop)
			break;
		pthread_mutex_unlock(&f->prog_lock);
		progress_line(f, last, next, 1);
		last = next;
		next += 1000000000ull;
		pthread_mutex_lock(&f->prog_lock);
	}
	pthread_mutex_unlock(&f->prog_lock);
	uint64_t now = fk_now_ns();
	if (now > last)
		progress_line(f, last, now, 0);
	return NULL;
}

static int progress_start(struct fsm *f)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->prog_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&f->prog_lock, NULL);
	f->prog_start_ns = fk_now_ns();
	int e = pthread_create(&f->prog_thread, NULL, progress_main, f);
	if (e) {
		pthread_cond_destroy(&f->prog_cond);
		pthread_mutex_destroy(&f->prog_lock);
		return -e;
	}
	f->prog_running = 1;
	return 0;
}

void fsm_progress_stop(struct fsm *f)
{
	if (!f->prog_running)
		return;
	pthread_mutex_lock(&f->prog_lock);
	f->prog_stop = 1;
	pthread_cond_signal(&f->prog_cond);
	pthread_mutex_unlock(&f->prog_lock);
	pthread_join(f->prog_thread, NULL);
	pthread_cond_destroy(&f->prog_cond);
	pthread_mutex_destroy(&f->prog_lock);
	f->prog_running = 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* ---- the result file ---- */

static void rdbl(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, results_json_double(v, 6));
}

static json_object *settings_json(const struct fsm *f)
{
	json_object *o = json_object_new_object();
	fsm_jstr(o, "bench", "fsmark");
	fsm_jstr(o, "sync_method", fsm_method_name[f->method]);
	if (f->method >= M_BATCH) {
		fsm_jstr(o, "sync_io", fk_sync_io_name(f->bopts.sync_io));
		fsm_jint(o, "sync_jobs", (int64_t)f->bopts.queue_depth);
	}
	fsm_jint(o, "threads", (int64_t)f->threads);
	fsm_jint(o, "files_per_thread", (int64_t)f->files);
	fsm_jint(o, "size", (int64_t)f->size);
	fsm_jint(o, "write_size", (int64_t)f->write_size);
	fsm_jint(o, "loops", (int64_t)f->loops);
	json_object_object_add(o, "keep", json_object_new_boolean(f->keep));
	if (f->subdirs) {
		fsm_jint(o, "subdirs", (int64_t)f->subdirs);
		if (f->per_subdir)
			fsm_jint(o, "files_per_subdir", (int64_t)f->per_subdir);
	}
	if (f->name_len != 40 || f->rand_len != 24) {
		fsm_jint(o, "name_len", (int64_t)f->name_len);
		fsm_jint(o, "rand_len", (int64_t)f->rand_len);
	}
	if (f->fill)
		json_object_object_add(o, "fill", json_object_new_boolean(1));
	json_object *a = json_object_new_array();
	for (size_t i = 0; i < f->nr_dirs; i++)
		json_object_array_add(a, json_object_new_string(f->dirs[i]));
	json_object_object_add(o, "paths", a);
	fsm_jstr(o, "tps_unit", "files/s");
	return o;
}

/* Open the result file, write settings and env, start the clock, the
 * monitor sampler and the progress thread.  Returns 0 or -1 (reported;
 * only a file that cannot be created is an error). */
int fsm_results_begin(struct fsm *f)
{
	int e = results_open(f->results_dir, "fsmark", &f->rf);
	if (e) {
		cli_error("open '%s': %s", f->results_dir, fk_strerror(e));
		f->rf = NULL;
		return -1;
	}
	results_write(f->rf, "settings", settings_json(f));
	results_env(f->rf, f->dirs, f->nr_dirs);
	results_reset_clock(f->rf);
	/* right after the clock: its intervals start at t_s = 0 */
	e = progress_start(f);
	if (e)
		cli_warn("no progress lines: %s", fk_strerror(e));
	e = results_monitor_start(f->rf, f->dirs, f->nr_dirs, 1000);
	if (e)
		cli_warn("no monitor samples: %s", fk_strerror(e));
	return 0;
}

/* The summary line; closes the file and prints its path on stderr.
 * Returns 0 or -1 (a write error, reported). */
int fsm_results_end(struct fsm *f, const char *backend, uint64_t files,
		    double run_s, double wall_s, double user_s, double sys_s,
		    unsigned errors, const char *failure,
		    const double *loop_fps, unsigned loops_done)
{
	fsm_progress_stop(f);
	results_monitor_stop(f->rf);
	struct fk_hist all;
	json_object *o = json_object_new_object();
	rdbl(o, "tps", run_s > 0 ? (double)files / run_s : 0);
	fsm_jint(o, "files", (int64_t)files);
	rdbl(o, "duration_s", wall_s);
	rdbl(o, "run_s", run_s);
	if (!fk_hist_init(&all)) {
		for (unsigned i = 0; i < f->threads; i++)
			fk_hist_merge(&all, &f->th[i].hist);
		rdbl(o, "lat_avg_ms", fk_hist_mean(&all) / 1000.0);
		rdbl(o, "lat_stddev_ms", fk_hist_stddev(&all) / 1000.0);
		static const struct {
			const char *key;
			double pct;
		} pc[] = {{"lat_p50_ms", 50},
			  {"lat_p90_ms", 90},
			  {"lat_p99_ms", 99},
			  {"lat_p999_ms", 99.9},
			  {"lat_max_ms", 100}};
		for (size_t k = 0; k < sizeof(pc) / sizeof(pc[0]); k++)
			rdbl(o, pc[k].key,
			     (double)fk_hist_percentile(&all, pc[k].pct) /
				 1000.0);
		fk_hist_release(&all);
	}
	if (f->nr_sec) {
		uint32_t *s = malloc(f->nr_sec * sizeof(*s));
		if (s) {
			memcpy(s, f->per_sec, f->nr_sec * sizeof(*s));
			qsort(s, f->nr_sec, sizeof(*s), cmp_u32);
			size_t n = f->nr_sec;
			uint32_t med =
			    n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
			rdbl(o, "stall_ratio",
			     med ? (double)s[0] / (double)med : 0.0);
			fsm_jint(o, "worst_second_tps", s[0]);
			fsm_jint(o, "median_second_tps", med);
			free(s);
		}
	} else {
		json_object_object_add(o, "stall_ratio", NULL);
	}
	fsm_jstr(o, "tps_unit", "files/s");
	if (loops_done > 1) {
		/* -L: Files/sec of each loop (the table's rows) */
		json_object *a = json_object_new_array();
		for (unsigned i = 0; i < loops_done; i++)
			json_object_array_add(
			    a, results_json_double(loop_fps[i], 1));
		json_object_object_add(o, "loop_files_per_sec", a);
	}
	fsm_jstr(o, "sync_io", backend);
	rdbl(o, "user_s", user_s);
	rdbl(o, "sys_s", sys_s);
	fsm_jint(o, "errors", errors);
	results_summary(f->rf, o, failure);
	char *path = strdup(results_path(f->rf));
	int e = results_close(f->rf);
	f->rf = NULL;
	fflush(stdout);
	if (e)
		cli_error("write '%s': %s", path ? path : f->results_dir,
			  fk_strerror(e));
	else if (path)
		fprintf(stderr, "result file: %s\n", path);
	free(path);
	return e ? -1 : 0;
}
