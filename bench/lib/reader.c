// SPDX-License-Identifier: MIT
/*
 * reader.c - the one reader of benchmark result files: results_read's
 * lines into a struct result_run (result_run_load), the refusal of
 * what is not a result (result_run_refused), a result directory's
 * files (results_list), and the stall ratio (results_stall_ratio).
 * See reader.h for the interface and docs/report.md for the schema.
 */
#include "reader.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double result_num(struct json_object *o, const char *key, double def)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return def;
	if (!json_object_is_type(v, json_type_double) &&
	    !json_object_is_type(v, json_type_int))
		return def;
	return json_object_get_double(v);
}

const char *result_str(struct json_object *o, const char *key)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) || !v ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* Room for one more element in *@arr (*@alloc of @size, @nr used). */
static int grow(void **arr, size_t *alloc, size_t nr, size_t size)
{
	if (nr < *alloc)
		return 0;
	size_t n = *alloc ? *alloc * 2 : 64;
	void *p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*alloc = n;
	return 0;
}

static void keep(struct json_object **slot, struct json_object *o)
{
	json_object_put(*slot);
	*slot = json_object_get(o);
}

static int add_line(void *arg, const char *type, struct json_object *o)
{
	struct result_run *r = arg;
	if (!strcmp(type, "settings")) {
		if (!r->settings)
			r->settings = json_object_get(o);
	} else if (!strcmp(type, "env")) {
		keep(&r->env, o);
	} else if (!strcmp(type, "summary")) {
		keep(&r->summary, o);
	} else if (!strcmp(type, "run")) {
		if (json_object_array_add(r->runs, json_object_get(o)))
			return -ENOMEM;
	} else if (!strcmp(type, "window")) {
		const char *what = result_str(o, "what");
		r->window_start_s = result_num(o, "start_s", NAN);
		r->window_end_s = result_num(o, "end_s", NAN);
		r->has_window =
		    !isnan(r->window_start_s) && !isnan(r->window_end_s);
		snprintf(r->window_what, sizeof(r->window_what), "%s",
			 what ? what : "");
	} else if (!strcmp(type, "clock")) {
		r->epoch_s = result_num(o, "epoch_s", 0);
	} else if (!strcmp(type, "progress")) {
		if (grow((void **)&r->prog, &r->alloc_prog, r->nr_prog,
			 sizeof(*r->prog)))
			return -ENOMEM;
		struct result_progress *p = &r->prog[r->nr_prog++];
		p->t_s = result_num(o, "t_s", NAN);
		p->tps = result_num(o, "tps", NAN);
		p->lat_avg_ms = result_num(o, "lat_avg_ms", NAN);
		p->lat_stddev_ms = result_num(o, "lat_stddev_ms", NAN);
		p->lat_max_ms = result_num(o, "lat_max_ms", NAN);
		if (!isnan(p->lat_max_ms))
			r->has_lat_max = 1;
	} else if (!strcmp(type, "monitor")) {
		if (grow((void **)&r->mon, &r->alloc_mon, r->nr_mon,
			 sizeof(*r->mon)))
			return -ENOMEM;
		struct result_monitor *m = &r->mon[r->nr_mon++];
		m->t_s = result_num(o, "t_s", NAN);
		m->interval_s = result_num(o, "interval_s", 0);
		m->dirty_kb = result_num(o, "dirty_kb", NAN);
		m->writeback_kb = result_num(o, "writeback_kb", NAN);
		m->dirty_threshold_kb =
		    result_num(o, "dirty_threshold_kb", NAN);
		m->dirty_background_threshold_kb =
		    result_num(o, "dirty_background_threshold_kb", NAN);
		m->write_ios = result_num(o, "write_ios", NAN);
		m->write_kb = result_num(o, "write_kb", NAN);
		const char *dev = result_str(o, "dev");
		if (dev && !r->dev[0])
			snprintf(r->dev, sizeof(r->dev), "%s", dev);
	} else if (!strcmp(type, "checkpoint")) {
		if (grow((void **)&r->ck, &r->alloc_ck, r->nr_ck,
			 sizeof(*r->ck)))
			return -ENOMEM;
		struct result_checkpoint *c = &r->ck[r->nr_ck++];
		c->start_s = result_num(o, "start_s", NAN);
		c->end_s = result_num(o, "end_s", NAN);
		c->write_s = result_num(o, "write_s", NAN);
		c->sync_s = result_num(o, "sync_s", NAN);
		c->total_s = result_num(o, "total_s", NAN);
		c->longest_s = result_num(o, "longest_s", NAN);
		c->buffers = (int64_t)result_num(o, "buffers", -1);
		c->files = (int64_t)result_num(o, "files", -1);
	}
	return 0;
}

int result_run_load(const char *path, struct result_run *r)
{
	memset(r, 0, sizeof(*r));
	r->runs = json_object_new_array();
	if (!r->runs) {
		snprintf(r->info.why, sizeof(r->info.why), "read '%s': %s",
			 path, strerror(ENOMEM));
		return -ENOMEM;
	}
	return results_read(path, add_line, r, &r->info);
}

int result_run_refused(const struct result_run *r, char *why, size_t len)
{
	char reason[512];
	if (!r->summary) {
		snprintf(why, len, "no summary line");
		return 1;
	}
	if (results_failed(r->summary, reason, sizeof(reason))) {
		snprintf(why, len, "a failed run (%s)", reason);
		return 1;
	}
	return 0;
}

void result_run_release(struct result_run *r)
{
	json_object_put(r->settings);
	json_object_put(r->env);
	json_object_put(r->summary);
	json_object_put(r->runs);
	free(r->prog);
	free(r->mon);
	free(r->ck);
	memset(r, 0, sizeof(*r));
}

static int is_result_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);
	return d->d_name[0] != '.' && n > 6 &&
	       !strcmp(d->d_name + n - 6, ".jsonl");
}

int results_list(const char *dir, char ***names, size_t *nr)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, is_result_name, alphasort);
	if (n < 0)
		return -errno;
	char **out = calloc(n ? (size_t)n : 1, sizeof(*out));
	int err = out ? 0 : -ENOMEM;
	for (int i = 0; i < n; i++) {
		if (!err && !(out[i] = strdup(ents[i]->d_name)))
			err = -ENOMEM;
		free(ents[i]);
	}
	free(ents);
	if (err) {
		results_list_free(out, (size_t)n);
		return err;
	}
	*names = out;
	*nr = (size_t)n;
	return 0;
}

void results_list_free(char **names, size_t nr)
{
	for (size_t i = 0; names && i < nr; i++)
		free(names[i]);
	free(names);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double results_stall_ratio(const double *tps, size_t n, double *worst,
			   double *median)
{
	double w = NAN, med = NAN, ratio = NAN;
	double *v = n ? malloc(n * sizeof(*v)) : NULL;
	if (v) {
		memcpy(v, tps, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_double);
		w = v[0];
		med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
		ratio = med > 0 ? w / med : 0.0;
		free(v);
	}
	if (worst)
		*worst = w;
	if (median)
		*median = med;
	return ratio;
}
