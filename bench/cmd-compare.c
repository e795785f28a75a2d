// SPDX-License-Identifier: MIT
/*
 * cmd-compare.c - "flushkit compare A B": the means and standard
 * deviations of two sets of repeated benchmark runs, metric by metric,
 * with a marker saying whether B differs from A by more than the noise
 * (docs/compare.md).
 *
 * A side is a result file or a directory of them (every *.jsonl in it,
 * not recursively).  A file contributes its "run" lines, one run each
 * (bench sync writes one file per method with a line per run), or, if
 * it has none, its last "summary" line as one run (bench tpcb, bench
 * fsmark: one file per run).  Every numeric member of those lines is a
 * metric; the ones both sides have are compared with fk_stats_compare.
 * Each side is labelled by the settings its runs have alike and the
 * other side's runs do not ("flush=naive" against "flush=smooth"), not
 * only by its path.
 * Output: a plain table (the layout of the 2011 sync(2) study: AVG
 * STDDEV AVG STDDEV change (marker)), --csv or --json.
 */
#include "cli.h"
#include "reader.h"
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RULE_TEXT                                                              \
	"+ / -: B above / below A by more than 2*sqrt(sA^2/nA + sB^2/nB); "    \
	"0: within that (noise); ?: a side has one run, no verdict"

/* One metric: its values on each side, in the order the runs were read. */
struct metric {
	char *name;
	double *v[2];
	size_t nr[2], alloc[2];
};

/* A file taken into a side: its bytes' FNV-1a hash and size, to know
 * a second copy of it (a result file copied, linked or named twice). */
struct taken {
	uint64_t hash, size;
	char *name;
};

struct side {
	const char *path;
	struct taken *taken;
	size_t nr_taken;
	size_t copies; /* files left out as copies of one taken */
	/* the settings every run of the side has alike (key: value text;
	 * a key whose runs differ maps to NULL), and the label made of
	 * those that differ from the other side's */
	struct json_object *settings;
	int nr_settings_files;
	char label[256];
	size_t runs; /* run lines + summary lines taken */
	size_t files;
	size_t failed; /* files of failed runs left out */
};

struct compare {
	struct metric *m;
	size_t nr_m, alloc_m;
	struct side side[2];
};

static struct metric *metric_get(struct compare *c, const char *name)
{
	for (size_t i = 0; i < c->nr_m; i++)
		if (!strcmp(c->m[i].name, name))
			return &c->m[i];
	if (c->nr_m == c->alloc_m) {
		size_t n = c->alloc_m ? c->alloc_m * 2 : 32;
		struct metric *p = realloc(c->m, n * sizeof(*p));
		if (!p)
			return NULL;
		c->m = p;
		c->alloc_m = n;
	}
	struct metric *m = &c->m[c->nr_m];
	memset(m, 0, sizeof(*m));
	m->name = strdup(name);
	if (!m->name)
		return NULL;
	c->nr_m++;
	return m;
}

static int metric_add(struct metric *m, int s, double v)
{
	if (m->nr[s] == m->alloc[s]) {
		size_t n = m->alloc[s] ? m->alloc[s] * 2 : 16;
		double *p = realloc(m->v[s], n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		m->v[s] = p;
		m->alloc[s] = n;
	}
	m->v[s][m->nr[s]++] = v;
	return 0;
}

/* Every numeric member (not booleans, not null) of @run as one run. */
static int add_run(struct compare *c, int s, struct json_object *run)
{
	json_object_object_foreach(run, key, val)
	{
		if (!strcmp(key, "run")) /* a run line's number */
			continue;
		enum json_type t = json_object_get_type(val);
		if (t != json_type_int && t != json_type_double)
			continue;
		struct metric *m = metric_get(c, key);
		if (!m || metric_add(m, s, json_object_get_double(val)))
			return -ENOMEM;
	}
	c->side[s].runs++;
	return 0;
}

/* A settings value as label text: strings as they are, else JSON. */
static const char *value_text(struct json_object *v)
{
	return json_object_is_type(v, json_type_string)
		   ? json_object_get_string(v)
		   : json_object_to_json_string_ext(v, RESULTS_JSON_FLAGS);
}

/* Fold the settings line @st of one file into side @sd's settings:
 * keep what all its files have alike. */
static void merge_settings(struct side *sd, struct json_object *st)
{
	if (!sd->settings)
		sd->settings = json_object_new_object();
	struct json_object *acc = sd->settings;
	json_object_object_foreach(st, key, val)
	{
		if (!results_label_key(key) || !val ||
		    json_object_is_type(val, json_type_object) ||
		    json_object_is_type(val, json_type_array))
			continue;
		struct json_object *have;
		const char *txt = value_text(val);
		if (!sd->nr_settings_files)
			json_object_object_add(acc, key,
					       json_object_new_string(txt));
		else if (json_object_object_get_ex(acc, key, &have) && have &&
			 strcmp(json_object_get_string(have), txt))
			json_object_object_add(acc, key, NULL); /* mixed */
		else if (!json_object_object_get_ex(acc, key, &have))
			json_object_object_add(acc, key, NULL);
	}
	/* keys this file lacks are not alike either */
	json_object_object_foreach(acc, k2, v2)
	{
		struct json_object *x;
		if (v2 && !json_object_object_get_ex(st, k2, &x))
			json_object_object_add(acc, k2, NULL);
	}
	sd->nr_settings_files++;
}

/* Label each side by the settings it has alike and that differ from
 * the other side's ("flush=naive" against "flush=smooth"); a side with
 * no such setting (or without settings lines) gets "". */
static void make_labels(struct compare *c)
{
	for (int s = 0; s < 2; s++) {
		struct side *me = &c->side[s], *other = &c->side[!s];
		size_t len = 0;
		me->label[0] = '\0';
		if (!me->settings || !other->settings)
			continue;
		json_object_object_foreach(me->settings, key, val)
		{
			struct json_object *ov = NULL;
			int in_other = json_object_object_get_ex(
			    other->settings, key, &ov);
			if (!val || (in_other && !ov))
				continue; /* mixed within a side */
			if (in_other && !strcmp(json_object_get_string(val),
						json_object_get_string(ov)))
				continue;
			int n = snprintf(
			    me->label + len, sizeof(me->label) - len, "%s%s=%s",
			    len ? " " : "", key, json_object_get_string(val));
			if (n < 0 || (size_t)n >= sizeof(me->label) - len) {
				me->label[len] = '\0';
				break;
			}
			len += (size_t)n;
		}
		/* what only the other side sets: "key=-" here */
		json_object_object_foreach(other->settings, k2, v2)
		{
			struct json_object *mv;
			if (!v2 ||
			    json_object_object_get_ex(me->settings, k2, &mv))
				continue;
			int n =
			    snprintf(me->label + len, sizeof(me->label) - len,
				     "%s%s=-", len ? " " : "", k2);
			if (n < 0 || (size_t)n >= sizeof(me->label) - len) {
				me->label[len] = '\0';
				break;
			}
			len += (size_t)n;
		}
	}
}

/* FNV-1a over the bytes of @path, and its size.  0 or -errno. */
static int file_digest(const char *path, uint64_t *hash, uint64_t *size)
{
	FILE *f = fopen(path, "rbe");
	unsigned char buf[65536];
	uint64_t h = 14695981039346656037ull, n = 0;
	size_t got;
	if (!f)
		return -errno;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < got; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
		n += got;
	}
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	*hash = h;
	*size = n;
	return err;
}

/*
 * Whether @path has the same bytes as a file side @s took already (a
 * copy: two copies of one run are one run, not two): warn naming both
 * and return 1.  Else remember it and return 0; -errno if it cannot be
 * read (printed).
 */
static int is_copy(struct compare *c, int s, const char *path, const char *name)
{
	struct side *sd = &c->side[s];
	uint64_t h, size;
	int err = file_digest(path, &h, &size);
	if (err) {
		cli_error("read '%s': %s", name, strerror(-err));
		return err;
	}
	for (size_t i = 0; i < sd->nr_taken; i++)
		if (sd->taken[i].hash == h && sd->taken[i].size == size) {
			char *q = cli_path_quote(sd->taken[i].name);
			cli_warn("compare: '%s' has the same content as '%s': "
				 "one run, counted once",
				 name, q ? q : sd->taken[i].name);
			free(q);
			sd->copies++;
			return 1;
		}
	struct taken *p =
	    realloc(sd->taken, (sd->nr_taken + 1) * sizeof(*sd->taken));
	if (!p)
		return -ENOMEM;
	sd->taken = p;
	p[sd->nr_taken] = (struct taken){h, size, strdup(path)};
	if (!p[sd->nr_taken].name)
		return -ENOMEM;
	sd->nr_taken++;
	return 0;
}

/*
 * Take the runs of the result file @path into side @s.  A failed run
 * (results_failed) is no result: named on the command line (@named) it
 * is an error; found in a directory it is left out, with a warning,
 * and counted in the side's header.  A file that is not a result file
 * is an error.  Returns 0 or -errno (printed).
 */
static int load_file(struct compare *c, int s, const char *path, int named)
{
	struct result_run fl;
	int err = result_run_load(path, &fl);
	char *q = cli_path_quote(path);
	const char *name = q ? q : path;
	char why[512];
	int copy = 0;
	if (err) {
		cli_error("compare: %s",
			  fl.info.why[0] ? fl.info.why : strerror(-err));
	} else if ((copy = is_copy(c, s, path, name)) != 0) {
		err = copy < 0 ? copy : 0;
	} else if (fl.summary && results_failed(fl.summary, why, sizeof(why))) {
		if (named) {
			cli_error("compare: '%s': a failed run (%s); its "
				  "figures are not a result",
				  name, why);
			err = -EINVAL;
		} else {
			cli_warn("compare: '%s': a failed run (%s), left out",
				 name, why);
			c->side[s].failed++;
		}
	} else {
		if (fl.info.torn_line)
			cli_warn("'%s': line %zu is not a JSON object (a torn "
				 "last line), skipped",
				 name, fl.info.torn_line);
		size_t n = json_object_array_length(fl.runs);
		for (size_t i = 0; i < n && !err; i++)
			err = add_run(c, s,
				      json_object_array_get_idx(fl.runs, i));
		if (!err && !n && fl.summary)
			err = add_run(c, s, fl.summary);
		if (!err && fl.settings)
			merge_settings(&c->side[s], fl.settings);
		if (err)
			cli_error("read '%s': %s", name, strerror(-err));
		else if (!n && !fl.summary)
			cli_warn("'%s': no run or summary line", name);
	}
	result_run_release(&fl);
	free(q);
	if (copy <= 0)
		c->side[s].files++;
	return err;
}

static int load_side(struct compare *c, int s, const char *path)
{
	struct stat st;
	c->side[s].path = path;
	if (stat(path, &st)) {
		int e = errno;
		char *q = cli_path_quote(path);
		cli_error("stat '%s': %s", q ? q : path, strerror(e));
		free(q);
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		int err = load_file(c, s, path, 1);
		if (err)
			return err;
	} else {
		char **names;
		size_t n;
		int err = results_list(path, &names, &n);
		if (err) {
			char *q = cli_path_quote(path);
			cli_error("open '%s': %s", q ? q : path,
				  strerror(-err));
			free(q);
			return err;
		}
		for (size_t i = 0; i < n && !err; i++) {
			size_t len = strlen(path) + strlen(names[i]) + 2;
			char *p = malloc(len);
			if (!p)
				err = -ENOMEM;
			else {
				snprintf(p, len, "%s/%s", path, names[i]);
				err = load_file(c, s, p, 0);
			}
			free(p);
		}
		results_list_free(names, n);
		if (err)
			return err;
	}
	if (!c->side[s].runs) {
		char *q = cli_path_quote(path);
		if (c->side[s].failed)
			cli_error("'%s': no runs: its %zu result file%s %s of "
				  "failed runs",
				  q ? q : path, c->side[s].failed,
				  c->side[s].failed == 1 ? "" : "s",
				  c->side[s].failed == 1 ? "is that" : "are");
		else
			cli_error("'%s': no runs (no \"run\" or \"summary\" "
				  "line in any *.jsonl result file)",
				  q ? q : path);
		free(q);
		return -ENOENT;
	}
	return 0;
}

/* One row: the statistics of a metric both sides have. */
struct row {
	const char *name;
	struct fk_stats_summary a, b;
	double change_pct; /* NAN when A's mean is 0 */
	double threshold;  /* NAN when no verdict */
	int marker;	   /* 0 when a side lacks the metric */
};

/* A metric's row; one that a side's runs lack has no figures there (not
 * 0), no change and no verdict (marker 0). */
static void row_compute(const struct metric *m, struct row *r)
{
	r->name = m->name;
	fk_stats_summarize(m->v[0], m->nr[0], &r->a);
	fk_stats_summarize(m->v[1], m->nr[1], &r->b);
	if (!r->a.n || !r->b.n) {
		r->change_pct = r->threshold = NAN;
		r->marker = 0;
		return;
	}
	r->change_pct = r->a.mean != 0
			    ? (r->b.mean - r->a.mean) / fabs(r->a.mean) * 100
			    : NAN;
	r->marker = fk_stats_compare(&r->a, &r->b, &r->threshold);
}

/* A value with 4 significant digits, or all its integer digits from
 * 1000 on; no exponent between 1e-3 and 1e10 (at most 11 columns). */
static const char *fmt_num(double v, char *buf, size_t len)
{
	char e[32];
	if (fabs(v) >= 1000 && fabs(v) < 1e10) { /* all integer digits */
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	snprintf(e, sizeof(e), "%.3e", v); /* 4 digits first: 0.00999999 */
	v = strtod(e, NULL);		   /* is 0.01000, not 0.009999 */
	double a = fabs(v);
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (v == 0)
		snprintf(buf, len, "0");
	else if (a >= 1e-3 && a < 1e9) {
		int decimals = 3 - (int)floor(log10(a));
		snprintf(buf, len, "%.*f", decimals < 0 ? 0 : decimals, v);
	} else
		snprintf(buf, len, "%.4g", v);
	return buf;
}

static void print_table(const struct compare *c, const struct row *rows,
			size_t nr)
{
	char b1[32], b2[32], b3[32], b4[32], ch[32], mk[8];
	int unknown = 0, missing = 0;
	size_t w = 6;

	for (size_t i = 0; i < nr; i++)
		if (strlen(rows[i].name) > w)
			w = strlen(rows[i].name);
	for (int s = 0; s < 2; s++) {
		char *q = cli_path_quote(c->side[s].path);
		if (c->side[s].label[0])
			printf("%c: %s (%s, %zu run%s", 'A' + s,
			       c->side[s].label, q ? q : "?", c->side[s].runs,
			       c->side[s].runs == 1 ? "" : "s");
		else
			printf("%c: %s (%zu run%s", 'A' + s, q ? q : "?",
			       c->side[s].runs,
			       c->side[s].runs == 1 ? "" : "s");
		if (c->side[s].failed)
			printf("; %zu failed run%s left out", c->side[s].failed,
			       c->side[s].failed == 1 ? "" : "s");
		if (c->side[s].copies)
			printf("; %zu cop%s of a result file counted once",
			       c->side[s].copies,
			       c->side[s].copies == 1 ? "y" : "ies");
		printf(")\n");
		free(q);
	}
	printf("\n%-*s  %23s  %23s\n", (int)w, "", "A", "B");
	printf("%-*s  %11s %11s  %11s %11s  %8s\n", (int)w, "metric", "AVG",
	       "STDDEV", "AVG", "STDDEV", "change");
	for (size_t i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		if (isfinite(r->change_pct))
			snprintf(ch, sizeof(ch), "%+.1f%%", r->change_pct);
		else
			snprintf(ch, sizeof(ch), "-");
		if (r->marker)
			snprintf(mk, sizeof(mk), "(%c)", r->marker);
		else
			snprintf(mk, sizeof(mk), "n/a");
		printf("%-*s  %11s %11s  %11s %11s  %8s  %s\n", (int)w, r->name,
		       r->a.n ? fmt_num(r->a.mean, b1, sizeof(b1)) : "n/a",
		       r->a.n > 1    ? fmt_num(r->a.stddev, b2, sizeof(b2))
		       : r->a.n == 1 ? "-"
				     : "n/a",
		       r->b.n ? fmt_num(r->b.mean, b3, sizeof(b3)) : "n/a",
		       r->b.n > 1    ? fmt_num(r->b.stddev, b4, sizeof(b4))
		       : r->b.n == 1 ? "-"
				     : "n/a",
		       ch, mk);
		if (r->marker == FK_STATS_UNKNOWN)
			unknown = 1;
		if (!r->marker)
			missing = 1;
	}
	printf("\n(+) / (-): B above / below A by more than "
	       "2*sqrt(sA^2/nA + sB^2/nB);\n(0): within that, noise.\n");
	if (unknown)
		printf("(?): a side has only one run: it has no standard "
		       "deviation, so no verdict\n     is possible; repeat the "
		       "runs (2 or more per side).\n");
	if (missing)
		printf("n/a: the metric is not in that side's runs: nothing "
		       "to compare, no verdict.\n");
}

static void print_csv(const struct row *rows, size_t nr)
{
	printf("metric,n_a,avg_a,stddev_a,n_b,avg_b,stddev_b,change_pct,"
	       "threshold,marker\n");
	for (size_t i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		/* A side without the metric: n 0 and empty fields. */
		printf("%s,%llu,", r->name, (unsigned long long)r->a.n);
		if (r->a.n)
			printf("%.9g,%.9g", r->a.mean, r->a.stddev);
		else
			printf(",");
		printf(",%llu,", (unsigned long long)r->b.n);
		if (r->b.n)
			printf("%.9g,%.9g", r->b.mean, r->b.stddev);
		else
			printf(",");
		printf(",");
		if (isfinite(r->change_pct))
			printf("%.3f", r->change_pct);
		printf(",");
		if (isfinite(r->threshold))
			printf("%.9g", r->threshold);
		printf(",");
		if (r->marker)
			printf("%c", r->marker);
		printf("\n");
	}
}

static struct json_object *side_json(const struct fk_stats_summary *s)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "n", json_object_new_int64((int64_t)s->n));
	/* null, not 0, for a side without the metric */
	json_object_object_add(o, "avg",
			       s->n ? results_json_double(s->mean, 9) : NULL);
	json_object_object_add(o, "stddev",
			       s->n ? results_json_double(s->stddev, 9) : NULL);
	return o;
}

static int print_json(const struct compare *c, const struct row *rows,
		      size_t nr)
{
	struct json_object *o = json_object_new_object();
	for (int s = 0; s < 2; s++) {
		struct json_object *so = json_object_new_object();
		char *u = cli_path_utf8(c->side[s].path);
		json_object_object_add(so, "path",
				       json_object_new_string(u ? u : ""));
		free(u);
		json_object_object_add(
		    so, "label", json_object_new_string(c->side[s].label));
		json_object_object_add(
		    so, "runs",
		    json_object_new_int64((int64_t)c->side[s].runs));
		json_object_object_add(
		    so, "files",
		    json_object_new_int64((int64_t)c->side[s].files));
		json_object_object_add(
		    so, "failed_runs_left_out",
		    json_object_new_int64((int64_t)c->side[s].failed));
		json_object_object_add(
		    so, "copies_counted_once",
		    json_object_new_int64((int64_t)c->side[s].copies));
		json_object_object_add(o, s ? "b" : "a", so);
	}
	json_object_object_add(o, "rule", json_object_new_string(RULE_TEXT));
	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < nr; i++) {
		const struct row *r = &rows[i];
		struct json_object *m = json_object_new_object();
		char mk[2] = {(char)r->marker, 0};
		json_object_object_add(m, "metric",
				       json_object_new_string(r->name));
		json_object_object_add(m, "a", side_json(&r->a));
		json_object_object_add(m, "b", side_json(&r->b));
		json_object_object_add(m, "change_pct",
				       results_json_double(r->change_pct, 3));
		json_object_object_add(m, "threshold",
				       results_json_double(r->threshold, 9));
		json_object_object_add(
		    m, "marker", r->marker ? json_object_new_string(mk) : NULL);
		json_object_array_add(arr, m);
	}
	json_object_object_add(o, "metrics", arr);
	results_json_print(o);
	json_object_put(o);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit compare [--csv | --json] A B\n\n"
		"Compare two sets of benchmark runs metric by metric.  A and "
		"B are result\nfiles or directories of them (every *.jsonl; "
		"one run per summary line,\nor per \"run\" line).  For each "
		"numeric metric both have: AVG and STDDEV\n(sample, n-1) of "
		"each side, the change from A to B in percent, and\n"
		"  +  B higher than A by more than 2*sqrt(sA^2/nA + sB^2/nB)\n"
		"  -  B lower than A by more than that\n"
		"  0  within that: noise\n"
		"  ?  a side has one run: no standard deviation, no verdict\n\n"
		"  --csv    comma-separated values\n"
		"  --json   one JSON object\n");
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"csv", no_argument, NULL, 'C'},
	    {"json", no_argument, NULL, 'J'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c, csv = 0, json = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			csv = 1;
			break;
		case 'J':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("compare", c, argv, opts);
		}
	}
	if (csv && json)
		return cli_usage_error("compare", "--csv and --json exclude "
						  "each other");
	if (argc - optind < 2)
		return cli_usage_error("compare", "missing %s",
				       argc - optind ? "B operand"
						     : "A and B operands");
	if (argc - optind > 2)
		return cli_usage_error("compare", "extra operand '%s'",
				       argv[optind + 2]);

	struct compare cmp;
	memset(&cmp, 0, sizeof(cmp));
	int rc = FK_EXIT_FAILURE;
	struct row *rows = NULL;
	if (load_side(&cmp, 0, argv[optind]) ||
	    load_side(&cmp, 1, argv[optind + 1]))
		goto out;

	rows = calloc(cmp.nr_m ? cmp.nr_m : 1, sizeof(*rows));
	if (!rows) {
		cli_error("%s", strerror(ENOMEM));
		goto out;
	}
	size_t nr = 0, common = 0;
	for (size_t i = 0; i < cmp.nr_m; i++) {
		row_compute(&cmp.m[i], &rows[nr++]);
		common += cmp.m[i].nr[0] && cmp.m[i].nr[1];
	}
	if (!common) {
		cli_error("A and B have no numeric metric in common");
		goto out;
	}
	make_labels(&cmp);
	if (csv)
		print_csv(rows, nr);
	else if (json)
		print_json(&cmp, rows, nr);
	else
		print_table(&cmp, rows, nr);
	rc = fflush(stdout) ? FK_EXIT_FAILURE : FK_EXIT_OK;
out:
	free(rows);
	for (size_t i = 0; i < cmp.nr_m; i++) {
		free(cmp.m[i].name);
		free(cmp.m[i].v[0]);
		free(cmp.m[i].v[1]);
	}
	free(cmp.m);
	for (int s = 0; s < 2; s++) {
		json_object_put(cmp.side[s].settings);
		for (size_t i = 0; i < cmp.side[s].nr_taken; i++)
			free(cmp.side[s].taken[i].name);
		free(cmp.side[s].taken);
	}
	return rc;
}
