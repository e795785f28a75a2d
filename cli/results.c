// SPDX-License-Identifier: MIT
/*
 * results.c - benchmark result files (JSON lines): the writer
 * (results_open ... results_summary, results_close), the monitor sampler
 * thread that appends to them, and the one reader of the format
 * (results_read, results_failed) that report, compare and bench series
 * use; results_default_dir, the one name of a command's default output
 * directory (results/BENCH-YYYYMMDD-HHMMSS).  See results.h for the interface
 * and docs/report.md for the schema.
 *
 * Invariants of struct result_file:
 *  1. every line is written whole under @lock, then flushed, so lines
 *     from the benchmark and from the sampler thread never interleave;
 *  2. @err is the first write error and is returned by results_close;
 *  3. the sampler thread runs iff @mon_running; it is joined before
 *     the file is closed.
 */
#include "results.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

struct result_file {
	FILE *f;
	char *path;
	pthread_mutex_t lock;
	uint64_t start_ns; /* CLOCK_MONOTONIC of t_s = 0 */
	int err;

	/* the sampler thread */
	pthread_t thread;
	pthread_cond_t cond; /* signalled to stop */
	int mon_running, mon_stop;
	uint64_t interval_ms;
	struct fk_monitor *mon;
};

static int write_clock(struct result_file *rf);

static char **cmd_argv; /* results_set_command */
static int cmd_argc;

void results_set_command(int argc, char **argv)
{
	cmd_argc = argc;
	cmd_argv = argv;
}

/* @s as one shell word: as is when it is plain, else single-quoted. */
static void shell_word(char **buf, size_t *len, size_t *cap, const char *s)
{
	int plain = *s != '\0';
	for (const char *c = s; *c; c++)
		if (!strchr(
			"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			"0123456789_@%+=:,./-",
			*c))
			plain = 0;
	size_t need = *len + 4 * strlen(s) + 4;
	if (need > *cap) {
		size_t n = need * 2;
		char *p = realloc(*buf, n);
		if (!p)
			return;
		*buf = p;
		*cap = n;
	}
	char *o = *buf + *len;
	if (*len)
		*o++ = ' ';
	if (plain) {
		o += sprintf(o, "%s", s);
	} else {
		*o++ = '\'';
		for (const char *c = s; *c; c++) {
			if (*c == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *c;
			}
		}
		*o++ = '\'';
		*o = '\0';
	}
	*len = (size_t)(o - *buf);
}

/* The "flushkit" line: the version and the command line of the run. */
static int write_origin(struct result_file *rf)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "version",
			       json_object_new_string(fk_version()));
	if (cmd_argv) {
		struct json_object *a = json_object_new_array();
		char *buf = NULL;
		size_t len = 0, cap = 0;
		for (int i = 0; i < cmd_argc; i++) {
			json_object_array_add(
			    a, json_object_new_string(cmd_argv[i]));
			shell_word(&buf, &len, &cap,
				   i == 0 ? "flushkit" : cmd_argv[i]);
		}
		json_object_object_add(o, "command",
				       json_object_new_string(buf ? buf : ""));
		json_object_object_add(o, "argv", a);
		free(buf);
	}
	return results_write(rf, "flushkit", o);
}

void results_json_print(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, RESULTS_JSON_FLAGS));
}

int results_label_key(const char *key)
{
	static const char *skip[] = {
	    "type", "latency_log", "aggregate_log", "data_dir", "log_prefix",
	    "seed", "results",	   "path",	    "paths",	"start_time",
	    NULL};
	for (int i = 0; skip[i]; i++)
		if (!strcmp(key, skip[i]))
			return 0;
	return 1;
}

/* YYYYMMDD-HHMMSS of now, local time: the stamp of every result name. */
static void local_stamp(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(buf, len, "%Y%m%d-%H%M%S", &tm);
}

int results_default_dir(const char *bench, char *buf, size_t len)
{
	char stamp[32];
	local_stamp(stamp, sizeof(stamp));
	mkdir("results", 0755);
	int n = snprintf(buf, len, "results/%s-%s", bench, stamp);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int results_open(const char *dir, const char *bench, struct result_file **out)
{
	if (!dir)
		dir = "results";
	/* --results a/b: b and a missing a are created (the default
	 * results/ too), as bench fsmark's -d. */
	int me = cli_mkdir_parents(dir, 0755, NULL);
	if (me)
		return me;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;

	char stamp[32], name[128];
	local_stamp(stamp, sizeof(stamp));
	int fd = -1;
	for (int i = 0; i < 100 && fd < 0; i++) {
		if (i == 0)
			snprintf(name, sizeof(name), "%s-%s-%ld.jsonl", bench,
				 stamp, (long)getpid());
		else
			snprintf(name, sizeof(name), "%s-%s-%ld-%d.jsonl",
				 bench, stamp, (long)getpid(), i);
		fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	int e = errno;
	close(dfd);
	if (fd < 0)
		return -e;

	struct result_file *rf = calloc(1, sizeof(*rf));
	size_t plen = strlen(dir) + strlen(name) + 2;
	char *path = malloc(plen);
	FILE *f = fdopen(fd, "w");
	if (!rf || !path || !f) {
		if (f)
			fclose(f);
		else
			close(fd);
		free(rf);
		free(path);
		return -ENOMEM;
	}
	snprintf(path, plen, "%s/%s", dir, name);
	rf->f = f;
	rf->path = path;
	rf->start_ns = fk_now_ns();
	pthread_mutex_init(&rf->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&rf->cond, &ca);
	pthread_condattr_destroy(&ca);
	write_origin(rf);
	write_clock(rf);
	*out = rf;
	return 0;
}

const char *results_path(const struct result_file *rf)
{
	return rf->path;
}

/* A "clock" line: the wall-clock time of t_s = 0, to line up logs that
 * carry epoch times (pgbench's per-transaction log). */
static int write_clock(struct result_file *rf)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct json_object *o = json_object_new_object();
	json_object_object_add(
	    o, "epoch_s",
	    results_json_double((double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
				6));
	return results_write(rf, "clock", o);
}

void results_reset_clock(struct result_file *rf)
{
	pthread_mutex_lock(&rf->lock);
	rf->start_ns = fk_now_ns();
	pthread_mutex_unlock(&rf->lock);
	write_clock(rf);
}

double results_mono_s(struct result_file *rf, uint64_t t_ns)
{
	pthread_mutex_lock(&rf->lock);
	uint64_t s = rf->start_ns;
	pthread_mutex_unlock(&rf->lock);
	return ((double)t_ns - (double)s) / 1e9;
}

double results_elapsed_s(struct result_file *rf)
{
	return results_mono_s(rf, fk_now_ns());
}

int results_write(struct result_file *rf, const char *type,
		  struct json_object *obj)
{
	struct json_object *line = json_object_new_object();
	json_object_object_add(line, "type", json_object_new_string(type));
	if (obj) {
		json_object_object_foreach(obj, key, val)
		    json_object_object_add(line, key, json_object_get(val));
		json_object_put(obj);
	}
	const char *s =
	    json_object_to_json_string_ext(line, RESULTS_JSON_FLAGS);
	pthread_mutex_lock(&rf->lock);
	int r = 0;
	if (fputs(s, rf->f) == EOF || fputc('\n', rf->f) == EOF ||
	    fflush(rf->f) == EOF)
		r = errno ? -errno : -EIO;
	if (r && !rf->err)
		rf->err = r;
	pthread_mutex_unlock(&rf->lock);
	json_object_put(line);
	return r;
}

int results_summary(struct result_file *rf, struct json_object *obj,
		    const char *error)
{
	if (!obj)
		obj = json_object_new_object();
	json_object_object_add(obj, "status",
			       json_object_new_string(error ? "failed" : "ok"));
	if (error)
		json_object_object_add(obj, "error",
				       json_object_new_string(error));
	else
		json_object_object_del(obj, "error");
	return results_write(rf, "summary", obj);
}

struct json_object *results_json_double(double v, int decimals)
{
	char buf[64];
	if (isnan(v) || isinf(v))
		return NULL;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	/* trim trailing zeros, keeping one decimal ("2.0") */
	char *dot = strchr(buf, '.');
	if (dot) {
		char *e = buf + strlen(buf) - 1;
		while (e > dot + 1 && *e == '0')
			*e-- = '\0';
	}
	return json_object_new_double_s(v, buf);
}

static struct json_object *jd(double v)
{
	return results_json_double(v, 6);
}

static struct json_object *ji(int64_t v)
{
	return json_object_new_int64(v);
}

int results_progress(struct result_file *rf, double t_s, double tps,
		     double lat_avg_ms, double lat_stddev_ms, double lat_max_ms)
{
	return results_progress_ex(rf, t_s, tps, lat_avg_ms, lat_stddev_ms,
				   lat_max_ms, NULL);
}

int results_progress_ex(struct result_file *rf, double t_s, double tps,
			double lat_avg_ms, double lat_stddev_ms,
			double lat_max_ms, struct json_object *extra)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "t_s", jd(t_s));
	json_object_object_add(o, "tps", jd(tps));
	json_object_object_add(o, "lat_avg_ms", jd(lat_avg_ms));
	json_object_object_add(o, "lat_stddev_ms", jd(lat_stddev_ms));
	if (lat_max_ms >= 0)
		json_object_object_add(o, "lat_max_ms", jd(lat_max_ms));
	if (extra) {
		json_object_object_foreach(extra, key, val)
		    json_object_object_add(o, key, json_object_get(val));
		json_object_put(extra);
	}
	return results_write(rf, "progress", o);
}

int results_checkpoint(struct result_file *rf,
		       const struct fk_checkpoint_info *ci)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(
	    o, "reason", json_object_new_string(ci->reason ? ci->reason : ""));
	json_object_object_add(o, "start_s",
			       jd(results_mono_s(rf, ci->start_ns)));
	json_object_object_add(o, "end_s", jd(results_mono_s(rf, ci->end_ns)));
	json_object_object_add(o, "buffers", ji((int64_t)ci->buffers_written));
	json_object_object_add(o, "write_s", jd((double)ci->write_ms / 1e3));
	json_object_object_add(o, "sync_s", jd((double)ci->sync_ms / 1e3));
	json_object_object_add(o, "total_s", jd((double)ci->total_ms / 1e3));
	json_object_object_add(o, "files", ji((int64_t)ci->files_synced));
	json_object_object_add(o, "longest_s",
			       jd((double)ci->longest_sync_ms / 1e3));
	json_object_object_add(o, "average_s",
			       jd((double)ci->average_sync_ms / 1e3));
	json_object_object_add(o, "writeback_kb",
			       ji((int64_t)(ci->writeback_bytes / 1024)));
	json_object_object_add(o, "error", ji(ci->error));
	return results_write(rf, "checkpoint", o);
}

/* ---- environment ------------------------------------------------------- */

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *device_json(const struct fk_blockdev *d,
				       const struct fk_blockdev_env *e)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "name", jstr(d->name));
	if (d->part[0])
		json_object_object_add(o, "partition", jstr(d->part));
	if (d->backing_of[0])
		json_object_object_add(o, "backing_of", jstr(d->backing_of));
	json_object_object_add(o, "scheduler", jstr(e->scheduler));
	json_object_object_add(o, "write_cache", jstr(e->write_cache));
	if (e->rotational >= 0)
		json_object_object_add(o, "rotational",
				       json_object_new_boolean(e->rotational));
	return o;
}

struct json_object *results_env_json(const char *const *paths, size_t nr_paths)
{
	struct fk_monitor_env env;
	struct json_object *o = json_object_new_object();
	fk_monitor_env(NULL, &env);
	json_object_object_add(o, "kernel", jstr(env.kernel_release));
	json_object_object_add(o, "kernel_version", jstr(env.kernel_version));
	struct utsname u;
	if (!uname(&u)) {
		json_object_object_add(o, "hostname", jstr(u.nodename));
		json_object_object_add(o, "machine", jstr(u.machine));
	}
	json_object_object_add(o, "cpus", ji(sysconf(_SC_NPROCESSORS_ONLN)));
	struct fk_meminfo mi;
	if (!fk_meminfo_read(NULL, &mi))
		json_object_object_add(o, "mem_total_kb",
				       ji((int64_t)mi.mem_total_kb));
	struct json_object *sc = json_object_new_object();
	json_object_object_add(sc, "vm.dirty_ratio", ji(env.dirty_ratio));
	json_object_object_add(sc, "vm.dirty_background_ratio",
			       ji(env.dirty_background_ratio));
	json_object_object_add(sc, "vm.dirty_bytes", ji(env.dirty_bytes));
	json_object_object_add(sc, "vm.dirty_background_bytes",
			       ji(env.dirty_background_bytes));
	json_object_object_add(sc, "vm.dirty_expire_centisecs",
			       ji(env.dirty_expire_centisecs));
	json_object_object_add(sc, "vm.dirty_writeback_centisecs",
			       ji(env.dirty_writeback_centisecs));
	json_object_object_add(o, "sysctl", sc);

	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < nr_paths; i++) {
		struct json_object *p = json_object_new_object();
		json_object_object_add(p, "path", jstr(paths[i]));
		int r = fk_monitor_env(paths[i], &env);
		if (r) {
			json_object_object_add(p, "error",
					       jstr(fk_strerror(r)));
			json_object_array_add(arr, p);
			continue;
		}
		json_object_object_add(p, "fs_type", jstr(env.fs_type));
		json_object_object_add(p, "mount_point", jstr(env.mount_point));
		json_object_object_add(p, "mount_source",
				       jstr(env.mount_source));
		json_object_object_add(p, "mount_options",
				       jstr(env.mount_options));
		json_object_object_add(p, "super_options",
				       jstr(env.super_options));
		struct json_object *devs = json_object_new_array();
		for (size_t d = 0; d < env.nr_devices; d++)
			json_object_array_add(
			    devs, device_json(&env.devs[d], &env.dev_env[d]));
		json_object_object_add(p, "devices", devs);
		json_object_array_add(arr, p);
	}
	json_object_object_add(o, "paths", arr);
	return o;
}

int results_env(struct result_file *rf, const char *const *paths,
		size_t nr_paths)
{
	return results_write(rf, "env", results_env_json(paths, nr_paths));
}

/* ---- monitor samples ---------------------------------------------------- */

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : 0; /* a counter reset counts as 0 */
}

static void add_dev_counters(struct json_object *o, const struct fk_blkstat *a,
			     const struct fk_blkstat *b)
{
	if (!a)
		a = b; /* the first sample: differences 0 */
	json_object_object_add(o, "write_ios",
			       ji((int64_t)delta(a->write_ios, b->write_ios)));
	json_object_object_add(
	    o, "write_merges",
	    ji((int64_t)delta(a->write_merges, b->write_merges)));
	json_object_object_add(
	    o, "write_kb",
	    ji((int64_t)(delta(a->write_sectors, b->write_sectors) / 2)));
	json_object_object_add(
	    o, "write_ticks_ms",
	    ji((int64_t)delta(a->write_ticks_ms, b->write_ticks_ms)));
	json_object_object_add(o, "read_ios",
			       ji((int64_t)delta(a->read_ios, b->read_ios)));
	json_object_object_add(
	    o, "read_kb",
	    ji((int64_t)(delta(a->read_sectors, b->read_sectors) / 2)));
	if (b->nr_fields >= 17)
		json_object_object_add(
		    o, "flush_ios",
		    ji((int64_t)delta(a->flush_ios, b->flush_ios)));
	json_object_object_add(o, "in_flight", ji((int64_t)b->in_flight));
	json_object_object_add(
	    o, "io_ticks_ms",
	    ji((int64_t)delta(a->io_ticks_ms, b->io_ticks_ms)));
}

struct json_object *results_sample_json(const struct fk_monitor *m,
					const struct fk_monitor_sample *prev,
					const struct fk_monitor_sample *cur,
					double t_s)
{
	struct json_object *o = json_object_new_object();
	uint64_t page_kb = (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
	json_object_object_add(o, "t_s", results_json_double(t_s, 3));
	json_object_object_add(
	    o, "interval_s",
	    results_json_double(
		prev ? (double)(cur->time_ns - prev->time_ns) / 1e9 : 0.0, 3));
	json_object_object_add(o, "dirty_kb", ji((int64_t)cur->mem.dirty_kb));
	json_object_object_add(o, "writeback_kb",
			       ji((int64_t)cur->mem.writeback_kb));
	json_object_object_add(o, "cached_kb", ji((int64_t)cur->mem.cached_kb));
	json_object_object_add(o, "mem_available_kb",
			       ji((int64_t)cur->mem.mem_available_kb));
	json_object_object_add(
	    o, "dirty_threshold_kb",
	    ji((int64_t)(cur->vm.nr_dirty_threshold * page_kb)));
	json_object_object_add(
	    o, "dirty_background_threshold_kb",
	    ji((int64_t)(cur->vm.nr_dirty_background_threshold * page_kb)));
	if (cur->nr_devices == 0)
		return o;
	/* The first disk's counters at the top level, for plotting. */
	json_object_object_add(o, "dev", jstr(fk_monitor_device(m, 0)->name));
	add_dev_counters(o, prev ? &prev->dev[0] : NULL, &cur->dev[0]);
	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < cur->nr_devices; i++) {
		const struct fk_blockdev *d = fk_monitor_device(m, i);
		struct json_object *dj = json_object_new_object();
		json_object_object_add(dj, "name", jstr(d->name));
		if (d->backing_of[0])
			json_object_object_add(dj, "backing_of",
					       jstr(d->backing_of));
		add_dev_counters(dj, prev ? &prev->dev[i] : NULL, &cur->dev[i]);
		json_object_array_add(arr, dj);
	}
	json_object_object_add(o, "devices", arr);
	return o;
}

static void *sampler(void *arg)
{
	struct result_file *rf = arg;
	struct fk_monitor_sample s[2];
	int cur = 0, have_prev = 0;
	uint64_t next = fk_now_ns();

	pthread_mutex_lock(&rf->lock);
	for (;;) {
		int stopping = rf->mon_stop;
		pthread_mutex_unlock(&rf->lock);
		fk_monitor_sample(rf->mon, &s[cur]);
		struct json_object *o = results_sample_json(
		    rf->mon, have_prev ? &s[!cur] : NULL, &s[cur],
		    results_mono_s(rf, s[cur].time_ns));
		results_write(rf, "monitor", o);
		have_prev = 1;
		cur = !cur;
		pthread_mutex_lock(&rf->lock);
		if (stopping)
			break;
		next += rf->interval_ms * 1000000ull;
		struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ull),
				      .tv_nsec = (long)(next % 1000000000ull)};
		while (!rf->mon_stop &&
		       pthread_cond_timedwait(&rf->cond, &rf->lock, &ts) !=
			   ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&rf->lock);
	return NULL;
}

int results_monitor_start(struct result_file *rf, const char *const *paths,
			  size_t nr_paths, uint64_t interval_ms)
{
	if (interval_ms < 100)
		return -EINVAL;
	if (rf->mon_running)
		return -EBUSY;
	int r = fk_monitor_create(&rf->mon);
	if (r)
		return r;
	for (size_t i = 0; i < nr_paths; i++) {
		r = fk_monitor_add_path(rf->mon, paths[i]);
		if (r < 0) {
			fk_monitor_destroy(rf->mon);
			rf->mon = NULL;
			return r;
		}
	}
	rf->interval_ms = interval_ms;
	rf->mon_stop = 0;
	r = pthread_create(&rf->thread, NULL, sampler, rf);
	if (r) {
		fk_monitor_destroy(rf->mon);
		rf->mon = NULL;
		return -r;
	}
	rf->mon_running = 1;
	return 0;
}

void results_monitor_stop(struct result_file *rf)
{
	if (!rf->mon_running)
		return;
	pthread_mutex_lock(&rf->lock);
	rf->mon_stop = 1;
	pthread_cond_signal(&rf->cond);
	pthread_mutex_unlock(&rf->lock);
	pthread_join(rf->thread, NULL);
	rf->mon_running = 0;
	fk_monitor_destroy(rf->mon);
	rf->mon = NULL;
}

int results_close(struct result_file *rf)
{
	results_monitor_stop(rf);
	int r = rf->err;
	if (fflush(rf->f) == EOF && !r)
		r = -errno;
	if (fsync(fileno(rf->f)) && !r)
		r = -errno;
	if (fclose(rf->f) == EOF && !r)
		r = -errno;
	pthread_mutex_destroy(&rf->lock);
	pthread_cond_destroy(&rf->cond);
	free(rf->path);
	free(rf);
	return r;
}

/* ---- reading ------------------------------------------------------------ */

/* @line (@n bytes, no newline) as a result line: one JSON object with a
 * string "type" and nothing after it.  NULL if it is not one; *@why
 * says what it is instead. */
static struct json_object *parse_line(const char *line, size_t n,
				      const char **why)
{
	struct json_tokener *tok = json_tokener_new();
	if (!tok) {
		*why = "out of memory";
		return NULL;
	}
	struct json_object *o = json_tokener_parse_ex(tok, line, (int)n);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || e != json_tokener_success) {
		json_object_put(o);
		*why = e == json_tokener_continue ? "a truncated JSON line"
						  : "not JSON";
		return NULL;
	}
	if (strspn(line + end, " \t\r") != n - end) {
		json_object_put(o);
		*why = "text after the JSON object";
		return NULL;
	}
	struct json_object *t;
	if (!json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, "type", &t) ||
	    !json_object_is_type(t, json_type_string)) {
		json_object_put(o);
		*why = "JSON, but not an object with a \"type\"";
		return NULL;
	}
	return o;
}

int results_read(const char *path,
		 int (*fn)(void *arg, const char *type,
			   struct json_object *line),
		 void *arg, struct results_read_info *info)
{
	memset(info, 0, sizeof(*info));
	char *q = cli_path_quote(path);
	const char *name = q ? q : path;
	FILE *f = fopen(path, "re");
	if (!f) {
		int e = errno;
		snprintf(info->why, sizeof(info->why), "open '%s': %s", name,
			 strerror(e));
		free(q);
		return -e;
	}
	char *line = NULL, *bad_why_line = NULL;
	size_t cap = 0, lineno = 0, bad_line = 0;
	const char *bad_why = NULL;
	ssize_t n;
	int ret = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		size_t len = (size_t)n;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (strspn(line, " \t\r") == len)
			continue;
		if (bad_line) {
			/* a bad line with more after it: not a torn end */
			break;
		}
		const char *why = NULL;
		struct json_object *o = parse_line(line, len, &why);
		if (!o) {
			bad_line = lineno;
			bad_why = why;
			free(bad_why_line);
			bad_why_line = strndup(line, 60);
			continue;
		}
		struct json_object *t;
		json_object_object_get_ex(o, "type", &t);
		info->lines++;
		ret = fn(arg, json_object_get_string(t), o);
		json_object_put(o);
		if (ret < 0)
			break;
		ret = 0;
	}
	if (!ret && ferror(f)) {
		/* getline left the read's errno (EISDIR for a directory) */
		int e = errno ? errno : EIO;
		ret = -e;
		snprintf(info->why, sizeof(info->why), "read '%s': %s", name,
			 strerror(e));
	}
	int more = n > 0; /* stopped at a line after a bad one */
	fclose(f);
	free(line);
	if (!ret && bad_line && (more || !info->lines)) {
		/* the first line, or one in the middle: not a result file */
		for (char *c = bad_why_line; c && *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		snprintf(
		    info->why, sizeof(info->why),
		    "%s:%zu: not a result file: %s, starting '%s%s' (a "
		    "result file has one JSON object with a \"type\" per "
		    "line; see docs/report.md)",
		    name, bad_line, bad_why, bad_why_line ? bad_why_line : "",
		    bad_why_line && strlen(bad_why_line) == 60 ? "..." : "");
		ret = -EINVAL;
	} else if (!ret && bad_line) {
		info->torn_line = bad_line;
	} else if (!ret && !info->lines) {
		snprintf(info->why, sizeof(info->why),
			 "%s: empty: not a result file (no result lines)",
			 name);
		ret = -EINVAL;
	}
	free(bad_why_line);
	free(q);
	return ret;
}

int results_failed(struct json_object *summary, char *why, size_t len)
{
	struct json_object *v;
	const char *err = NULL;
	if (json_object_object_get_ex(summary, "error", &v) &&
	    json_object_is_type(v, json_type_string))
		err = json_object_get_string(v);
	if (json_object_object_get_ex(summary, "status", &v)) {
		const char *s = json_object_is_type(v, json_type_string)
				    ? json_object_get_string(v)
				    : "";
		if (!strcmp(s, "ok"))
			return 0;
		snprintf(why, len, "%s: %s", *s ? s : "status not ok",
			 err ? err : "no error recorded");
		return 1;
	}
	/* files written before the status mark */
	if (json_object_object_get_ex(summary, "exit_status", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v)) {
		snprintf(why, len, "exit status %" PRId64 "%s%s",
			 json_object_get_int64(v), err ? ": " : "",
			 err ? err : "");
		return 1;
	}
	if (json_object_object_get_ex(summary, "errors", &v) &&
	    json_object_is_type(v, json_type_int) && json_object_get_int64(v)) {
		snprintf(why, len, "%" PRId64 " I/O error(s)",
			 json_object_get_int64(v));
		return 1;
	}
	return 0;
}
