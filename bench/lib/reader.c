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

static int fill_stall(struct result_run *r);

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
		struct json_object *ck;
		p->checkpoint = -1;
		if (json_object_object_get_ex(o, "checkpoint", &ck) && ck)
			p->checkpoint = json_object_get_boolean(ck) ? 1 : 0;
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
	int e = results_read(path, add_line, r, &r->info);
	if (!e && fill_stall(r)) {
		snprintf(r->info.why, sizeof(r->info.why), "read '%s': %s",
			 path, strerror(ENOMEM));
		e = -ENOMEM;
	}
	return e;
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

size_t results_stall_warmup(size_t n)
{
	size_t w = (n + 9) / 10;
	return w < 1 ? 1 : w > 10 ? 10 : w;
}

void results_stall_mark(unsigned char *ckpt, size_t n, double start_s,
			double end_s)
{
	if (isnan(start_s) || isnan(end_s) || end_s < start_s)
		return;
	for (size_t i = 0; i < n; i++)
		if (start_s < (double)(i + 1) && end_s > (double)i)
			ckpt[i] = 1;
}

/* The worst of @v[0..@n) marked @want in @ckpt (every one for a NULL
 * @ckpt), NAN if none; *@nr how many. */
static double worst_of(const double *v, const unsigned char *ckpt, size_t n,
		       int want, size_t *nr)
{
	double w = NAN;
	*nr = 0;
	for (size_t i = 0; i < n; i++) {
		if (ckpt && !!ckpt[i] != want)
			continue;
		if (isnan(w) || v[i] < w)
			w = v[i];
		(*nr)++;
	}
	return w;
}

int results_stall_ratio(const double *tps, const unsigned char *ckpt, size_t n,
			size_t warmup_s, struct results_stall *st)
{
	memset(st, 0, sizeof(*st));
	st->ratio = st->worst = st->median = NAN;
	st->ratio_ckpt = st->worst_ckpt = NAN;
	st->ratio_outside = st->worst_outside = NAN;
	st->ckpt_known = ckpt != NULL;
	st->warmup_s = warmup_s == RESULTS_STALL_WARMUP_RUN
			   ? results_stall_warmup(n)
			   : warmup_s;
	if (n <= st->warmup_s)
		return 0;
	size_t m = n - st->warmup_s, k;
	const double *w = tps + st->warmup_s;
	double *v = malloc(m * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, w, m * sizeof(*v));
	qsort(v, m, sizeof(*v), cmp_double);
	double med = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
	free(v);
	st->seconds = m;
	st->median = med;
	st->worst = worst_of(w, NULL, m, 0, &k);
	st->ratio = med > 0 ? st->worst / med : 0.0;
	if (!ckpt)
		return 0;
	const unsigned char *c = ckpt + st->warmup_s;
	st->worst_ckpt = worst_of(w, c, m, 1, &st->ckpt_seconds);
	st->worst_outside = worst_of(w, c, m, 0, &k);
	if (!isnan(st->worst_ckpt))
		st->ratio_ckpt = med > 0 ? st->worst_ckpt / med : 0.0;
	if (!isnan(st->worst_outside))
		st->ratio_outside = med > 0 ? st->worst_outside / med : 0.0;
	return 0;
}

/* A one-second tps: an integer when whole, else one decimal; NULL
 * (JSON null) for NAN. */
static struct json_object *tps_json(double v)
{
	if (isnan(v))
		return NULL;
	return v == floor(v) ? json_object_new_int64((int64_t)v)
			     : results_json_double(v, 1);
}

static struct json_object *ratio_json(double v)
{
	return isnan(v) ? NULL : results_json_double(v, 3);
}

int results_stall_json(struct json_object *o, const struct results_stall *st)
{
	struct {
		const char *key;
		struct json_object *v;
		int want; /* a non-null value */
	} f[] = {
	    {"stall_ratio", ratio_json(st->ratio), !isnan(st->ratio)},
	    {"worst_second_tps", tps_json(st->worst), !isnan(st->worst)},
	    {"median_second_tps", tps_json(st->median), !isnan(st->median)},
	    {"stall_warmup_s", json_object_new_int64((int64_t)st->warmup_s), 1},
	    {"stall_seconds", json_object_new_int64((int64_t)st->seconds), 1},
	    {"checkpoint_seconds",
	     json_object_new_int64((int64_t)st->ckpt_seconds), 1},
	    {"stall_ratio_checkpoint", ratio_json(st->ratio_ckpt),
	     !isnan(st->ratio_ckpt)},
	    {"worst_second_tps_checkpoint", tps_json(st->worst_ckpt),
	     !isnan(st->worst_ckpt)},
	    {"stall_ratio_outside", ratio_json(st->ratio_outside),
	     !isnan(st->ratio_outside)},
	    {"worst_second_tps_outside", tps_json(st->worst_outside),
	     !isnan(st->worst_outside)},
	};
	int err = 0;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i].want && !f[i].v)
			err = -ENOMEM;
		if (err || (i >= 5 && !st->ckpt_known)) {
			json_object_put(f[i].v);
			continue;
		}
		if (json_object_object_add(o, f[i].key, f[i].v))
			err = -ENOMEM;
	}
	return err;
}

/* A summary without the stall figures (a peer's): computed from the
 * full one-second progress lines (see result_run_load). */
static int fill_stall(struct result_run *r)
{
	struct json_object *have;
	if (!r->summary ||
	    json_object_object_get_ex(r->summary, "stall_ratio", &have) ||
	    !r->nr_prog)
		return 0;
	double *v = malloc(r->nr_prog * sizeof(*v));
	unsigned char *c = calloc(r->nr_prog, 1);
	int err = -ENOMEM, marks = 1;
	size_t n = 0;
	if (!v || !c)
		goto out;
	double prev = NAN;
	for (size_t i = 0; i < r->nr_prog; i++) {
		const struct result_progress *p = &r->prog[i];
		if (isnan(p->t_s) || isnan(p->tps))
			continue;
		/* The first line's start is not written (a peer's clock may
		 * start before its first interval): one second if it ends
		 * a second or more after t_s = 0. */
		double len =
		    isnan(prev) ? (p->t_s >= 0.9 ? 1.0 : 0.0) : p->t_s - prev;
		prev = p->t_s;
		if (len < 0.9 || len > 1.1) /* not a one-second line */
			continue;
		if (p->checkpoint >= 0) {
			c[n] = (unsigned char)p->checkpoint;
		} else if (r->nr_ck) {
			for (size_t k = 0; k < r->nr_ck; k++)
				if (r->ck[k].start_s < p->t_s &&
				    r->ck[k].end_s > p->t_s - len)
					c[n] = 1;
		} else {
			marks = 0; /* neither marks nor checkpoint lines */
		}
		v[n++] = p->tps;
	}
	struct results_stall st;
	err = results_stall_ratio(v, marks ? c : NULL, n,
				  RESULTS_STALL_WARMUP_RUN, &st);
	if (!err)
		err = results_stall_json(r->summary, &st);
	if (!err && json_object_object_add(r->summary, "stall_computed",
					   json_object_new_boolean(1)))
		err = -ENOMEM;
out:
	free(v);
	free(c);
	return err;
}
