// SPDX-License-Identifier: MIT
/*
 * cmd-report.c - "flushkit report RESULT... -o DIR": one static HTML page
 * with gnuplot plots from benchmark result files (docs/report.md).
 *
 * Steps: read each result file (JSON lines, results.h); label each run by
 * the settings that differ between the runs ("flush=naive"); write the
 * series as whitespace-separated data files in DIR/data/; write
 * DIR/plots.gp and run gnuplot on it (fork + execvp, cwd DIR, no shell;
 * every string put into the script is ours or sanitized to a safe
 * alphabet); write DIR/index.html with the plots, a summary table and
 * each run's settings, environment and checkpoints.  Nothing on the page
 * refers to the network.
 *
 * Plots (x: seconds since the run's start; shaded: checkpoints, in the
 * run's colour, and hatched grey a neighbour's active window, the
 * "window" line of bench neighbor): tps; latency average (solid) and max
 * (dashed); Dirty and Writeback; write IOPS; write MiB/s; and a latency scatter
 * from pgbench-format per-transaction logs when a result names them.
 */
#include "child.h"
#include "cli.h"
#include "html.h"
#include "knobs.h"
#include "reader.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SCATTER_POINTS 200000
#define LANE_HEIGHT 0.035 /* checkpoint strip, fraction of the plot */

struct run {
	const char *path;
	char label[160];
	const char *color;
	struct result_run d; /* the file, read (reader.h) */
	int has_scatter;
	size_t bad_lines;
};

static void sanitize(char *s);

/*
 * Read the result file r->path.  Only results are drawn: a file that is
 * not a result file, a run without a summary (killed, crashed, still
 * running) and a failed run (results_failed) are refused.  Returns 0 or
 * -1 (one message printed, naming the file).
 */
static int read_run(struct run *r)
{
	int e = result_run_load(r->path, &r->d);
	if (e) {
		cli_error("report: %s",
			  r->d.info.why[0] ? r->d.info.why : strerror(-e));
		return -1;
	}
	if (r->d.info.torn_line) {
		r->bad_lines++;
		cli_warn("%s:%zu: not a JSON object, skipped (the last line: "
			 "a run cut off while writing it?)",
			 r->path, r->d.info.torn_line);
	}
	char why[512];
	if (!r->d.summary) {
		cli_error("report: '%s': no summary line: the run did not "
			  "finish (killed, crashed or still running); it is "
			  "not a result",
			  r->path);
		return -1;
	}
	if (result_run_refused(&r->d, why, sizeof(why))) {
		cli_error("report: '%s': %s; its figures are not a result",
			  r->path, why);
		return -1;
	}
	sanitize(r->d.dev); /* goes into the script */
	return 0;
}

static void free_run(struct run *r)
{
	result_run_release(&r->d);
}

/* ---- labels and colours --------------------------------------------- */

/* Settings that name files or seeds, not strategies: never in labels. */
static int label_worthy(const char *key)
{
	return results_label_key(key);
}

/* Keep what is safe in gnuplot single-quoted strings and HTML. */
static void sanitize(char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr(" =._,:/+-()%#", c)))
			*s = '_';
	}
}

static const char *value_text(struct json_object *v, char *buf, size_t len)
{
	if (!v)
		return "-";
	if (json_object_is_type(v, json_type_string))
		snprintf(buf, len, "%s", json_object_get_string(v));
	else
		snprintf(
		    buf, len, "%s",
		    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	return buf;
}

static void base_name(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	snprintf(buf, len, "%s", b ? b + 1 : path);
	char *dot = strstr(buf, ".jsonl");
	if (dot)
		*dot = '\0';
}

/* Where a differing settings key goes in a label: "flush", then bench
 * tpcb's store knobs (knobs.h) in table order, then everything else. */
static size_t label_rank(const char *key)
{
	if (!strcmp(key, "flush"))
		return 0;
	const struct tpcb_knob *k = tpcb_knob_by_key(key);
	return k ? 1 + (size_t)(k - tpcb_knobs) : TPCB_MAX_KNOBS + 1;
}

static void make_labels(struct run *runs, size_t nr)
{
	/* keys of any run's settings whose values differ between runs */
	const char *keys[16];
	size_t nr_keys = 0;
	for (size_t i = 0; i < nr && nr > 1; i++) {
		if (!runs[i].d.settings)
			continue;
		json_object_object_foreach(runs[i].d.settings, key, val)
		{
			/* objects and arrays (tpcb's "store") are for the
			 * run's details, not for labels */
			if (!label_worthy(key) || nr_keys >= 16 || !val ||
			    json_object_is_type(val, json_type_object) ||
			    json_object_is_type(val, json_type_array))
				continue;
			int seen = 0;
			for (size_t k = 0; k < nr_keys; k++)
				seen |= !strcmp(keys[k], key);
			if (seen)
				continue;
			char a[128], b[128];
			struct json_object *v0 = NULL, *vj = NULL;
			if (runs[0].d.settings)
				json_object_object_get_ex(runs[0].d.settings,
							  key, &v0);
			value_text(v0, a, sizeof(a));
			for (size_t j = 1; j < nr; j++) {
				vj = NULL;
				if (runs[j].d.settings)
					json_object_object_get_ex(
					    runs[j].d.settings, key, &vj);
				if (strcmp(a, value_text(vj, b, sizeof(b)))) {
					keys[nr_keys++] = key;
					break;
				}
			}
		}
	}
	for (size_t i = 0; i < nr; i++) {
		struct run *r = &runs[i];
		char v[128];
		size_t len = 0;
		r->label[0] = '\0';
		/* "flush" first (it is what the page is usually about), then
		 * the store knobs in their table's order, then the rest as
		 * they came: the first three go into the label */
		for (size_t k = 1; k < nr_keys; k++)
			for (size_t m = k; m > 0 && label_rank(keys[m]) <
							label_rank(keys[m - 1]);
			     m--) {
				const char *t = keys[m];
				keys[m] = keys[m - 1];
				keys[m - 1] = t;
			}
		for (size_t k = 0; k < nr_keys && k < 3; k++) {
			struct json_object *val = NULL;
			if (r->d.settings)
				json_object_object_get_ex(r->d.settings,
							  keys[k], &val);
			len += (size_t)snprintf(
			    r->label + len, sizeof(r->label) - len, "%s%s=%s",
			    len ? " " : "", keys[k],
			    value_text(val, v, sizeof(v)));
			if (len >= sizeof(r->label))
				len = sizeof(r->label) - 1;
		}
		if (!len) {
			const char *flush = result_str(r->d.settings, "flush");
			if (flush)
				snprintf(r->label, sizeof(r->label), "flush=%s",
					 flush);
			else
				base_name(r->path, r->label, sizeof(r->label));
		}
		sanitize(r->label);
	}
	/* identical labels (repeated runs): number them */
	for (size_t i = 0; i < nr; i++) {
		int dup = 0, idx = 0;
		for (size_t j = 0; j < nr; j++) {
			if (!strcmp(runs[i].label, runs[j].label)) {
				dup++;
				if (j < i)
					idx++;
			}
		}
		if (dup > 1) {
			size_t l = strlen(runs[i].label);
			if (l + 12 < sizeof(runs[i].label))
				snprintf(runs[i].label + l,
					 sizeof(runs[i].label) - l, " #%d",
					 idx + 1);
		}
	}
	/* Colours: naive red, smooth blue, the rest from a palette. */
	static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c",
					"#ff7f0e", "#9467bd", "#8c564b",
					"#e377c2", "#17becf"};
	int reserved = 0;
	for (size_t i = 0; i < nr; i++) {
		const char *flush = result_str(runs[i].d.settings, "flush");
		if (flush && !strcmp(flush, "smooth"))
			runs[i].color = palette[0];
		else if (flush && !strcmp(flush, "naive"))
			runs[i].color = palette[1];
		reserved |= runs[i].color != NULL;
	}
	/* the others: the rest of the palette (all of it if no run is
	 * naive or smooth) */
	size_t next = reserved ? 2 : 0;
	for (size_t i = 0; i < nr; i++)
		if (!runs[i].color)
			runs[i].color = palette[next++ % 8];
}

/* ---- data files --------------------------------------------------------- */

static int write_file_at(int dfd, const char *name, FILE **out)
{
	int fd =
	    openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	*out = fdopen(fd, "w");
	if (!*out) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

static int close_file(FILE *f)
{
	int bad = ferror(f);
	if (fclose(f) == EOF || bad)
		return -EIO;
	return 0;
}

static void put_num(FILE *f, double v)
{
	if (isnan(v))
		fputs(" NaN", f);
	else
		fprintf(f, " %.6g", v);
}

/* Read the pgbench-format logs named by the run's "latency_log" setting
 * (a string or array of strings; relative to the result file's
 * directory) into data/rN-latency.dat as "t_s latency_ms". */
static int write_scatter(struct run *r, int ddfd, size_t i)
{
	struct json_object *v;
	if (!r->d.settings ||
	    !json_object_object_get_ex(r->d.settings, "latency_log", &v) || !v)
		return 0;
	size_t nr_logs = json_object_is_type(v, json_type_array)
			     ? json_object_array_length(v)
			     : 1;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", r->path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[1] = '\0';
	else
		dir[0] = '\0';

	/* first pass: count lines, to thin out huge logs evenly */
	size_t total = 0;
	for (int pass = 0; pass < 2; pass++) {
		FILE *out = NULL;
		char name[64];
		size_t step =
		    total > MAX_SCATTER_POINTS
			? (total + MAX_SCATTER_POINTS - 1) / MAX_SCATTER_POINTS
			: 1;
		size_t seen = 0;
		if (pass == 1) {
			snprintf(name, sizeof(name), "r%zu-latency.dat", i + 1);
			int e = write_file_at(ddfd, name, &out);
			if (e)
				return e;
			fprintf(out,
				"# t_s latency_ms (every %zu. transaction"
				" of %zu)\n",
				step, total);
		}
		for (size_t l = 0; l < nr_logs; l++) {
			struct json_object *p =
			    json_object_is_type(v, json_type_array)
				? json_object_array_get_idx(v, l)
				: v;
			if (!p || !json_object_is_type(p, json_type_string))
				continue;
			const char *lp = json_object_get_string(p);
			char path[8192];
			snprintf(path, sizeof(path), "%s%s",
				 lp[0] == '/' ? "" : dir, lp);
			FILE *f = fopen(path, "re");
			if (!f) {
				if (pass == 0)
					cli_warn("open '%s': %s (latency "
						 "scatter)",
						 path, strerror(errno));
				continue;
			}
			char line[512];
			while (fgets(line, sizeof(line), f)) {
				long client, xact, script;
				double lat_us, ep, us;
				if (sscanf(line, "%ld %ld %lf %ld %lf %lf",
					   &client, &xact, &lat_us, &script,
					   &ep, &us) != 6)
					continue;
				if (pass == 0) {
					total++;
					continue;
				}
				if (seen++ % step)
					continue;
				double t = ep + us / 1e6;
				/* without a clock line: first log line */
				if (r->d.epoch_s <= 0)
					r->d.epoch_s = t;
				fprintf(out, "%.6f %.3f\n", t - r->d.epoch_s,
					lat_us / 1000.0);
			}
			fclose(f);
		}
		if (pass == 1) {
			int e = close_file(out);
			if (e)
				return e;
		}
	}
	r->has_scatter = total > 0;
	return 0;
}

static int write_data(struct run *r, int ddfd, size_t i)
{
	char name[64];
	FILE *f;
	int e;
	if (r->d.nr_prog) {
		snprintf(name, sizeof(name), "r%zu-progress.dat", i + 1);
		if ((e = write_file_at(ddfd, name, &f)))
			return e;
		fprintf(f,
			"# %s\n# t_s tps lat_avg_ms lat_stddev_ms "
			"lat_max_ms\n",
			r->label);
		for (size_t k = 0; k < r->d.nr_prog; k++) {
			const struct result_progress *p = &r->d.prog[k];
			fprintf(f, "%.3f", p->t_s);
			put_num(f, p->tps);
			put_num(f, p->lat_avg_ms);
			put_num(f, p->lat_stddev_ms);
			put_num(f, p->lat_max_ms);
			fputc('\n', f);
		}
		if ((e = close_file(f)))
			return e;
	}
	if (r->d.nr_mon) {
		snprintf(name, sizeof(name), "r%zu-monitor.dat", i + 1);
		if ((e = write_file_at(ddfd, name, &f)))
			return e;
		fprintf(f,
			"# %s (disk %s)\n# t_s dirty_mib writeback_mib "
			"dirty_threshold_mib dirty_bg_threshold_mib "
			"write_iops write_mib_s\n",
			r->label, r->d.dev[0] ? r->d.dev : "none");
		for (size_t k = 0; k < r->d.nr_mon; k++) {
			const struct result_monitor *m = &r->d.mon[k];
			fprintf(f, "%.3f", m->t_s);
			put_num(f, m->dirty_kb / 1024);
			put_num(f, m->writeback_kb / 1024);
			put_num(f, m->dirty_threshold_kb / 1024);
			put_num(f, m->dirty_background_threshold_kb / 1024);
			int rate = m->interval_s > 0;
			put_num(f, rate ? m->write_ios / m->interval_s : NAN);
			put_num(f, rate ? m->write_kb / 1024 / m->interval_s
					: NAN);
			fputc('\n', f);
		}
		if ((e = close_file(f)))
			return e;
	}
	if (r->d.nr_ck) {
		snprintf(name, sizeof(name), "r%zu-checkpoints.dat", i + 1);
		if ((e = write_file_at(ddfd, name, &f)))
			return e;
		fprintf(f, "# %s\n# start_s end_s write_s sync_s buffers\n",
			r->label);
		for (size_t k = 0; k < r->d.nr_ck; k++) {
			const struct result_checkpoint *c = &r->d.ck[k];
			fprintf(f, "%.3f %.3f", c->start_s, c->end_s);
			put_num(f, c->write_s);
			put_num(f, c->sync_s);
			fprintf(f, " %lld\n", (long long)c->buffers);
		}
		if ((e = close_file(f)))
			return e;
	}
	return write_scatter(r, ddfd, i);
}

/* ---- gnuplot ----------------------------------------------------------- */

/*
 * Checkpoints as gnuplot rectangles: a light full-height span, and a
 * solid strip in the run's own lane at the top of the plot (lanes keep
 * the runs apart where the spans of two runs overlap and their colours
 * mix).  "set offsets" in the script leaves room above the data for the
 * lanes.
 */
static void gp_checkpoints(FILE *g, const struct run *runs, size_t nr)
{
	fputs("unset object\n", g);
	int obj = 1, lane = 0;
	for (size_t i = 0; i < nr; i++) {
		if (!runs[i].d.nr_ck)
			continue;
		double top = 1.0 - LANE_HEIGHT * lane, bot = top - LANE_HEIGHT;
		for (size_t k = 0; k < runs[i].d.nr_ck; k++) {
			const struct result_checkpoint *c = &runs[i].d.ck[k];
			if (isnan(c->start_s) || isnan(c->end_s))
				continue;
			fprintf(g,
				"set object %d rect from %.3f, graph 0 to "
				"%.3f, graph 1 behind fc rgb '%s' fs "
				"transparent solid 0.08 noborder\n",
				obj++, c->start_s, c->end_s, runs[i].color);
			fprintf(g,
				"set object %d rect from %.3f, graph %.3f to "
				"%.3f, graph %.3f front fc rgb '%s' fs "
				"transparent solid 0.7 noborder\n",
				obj++, c->start_s, bot + 0.004, c->end_s,
				top - 0.004, runs[i].color);
		}
		lane++;
	}
	/* a neighbour's active window (bench neighbor): hatched grey */
	for (size_t i = 0; i < nr; i++)
		if (runs[i].d.has_window)
			fprintf(g,
				"set object %d rect from %.3f, graph 0 to "
				"%.3f, graph 1 behind fc rgb '#707070' fs "
				"transparent pattern 4 border rgb '#707070'\n",
				obj++, runs[i].d.window_start_s,
				runs[i].d.window_end_s);
}

/* Key entries for the shaded spans. */
static void gp_ck_keys(FILE *g, const struct run *runs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (runs[i].d.nr_ck)
			fprintf(g,
				", keyentry with boxes fc rgb '%s' fs "
				"transparent solid 0.7 noborder title "
				"'checkpoints (%s)'",
				runs[i].color, runs[i].label);
	for (size_t i = 0; i < nr; i++)
		if (runs[i].d.has_window)
			fprintf(g,
				", keyentry with boxes fc rgb '#707070' fs "
				"transparent pattern 4 title 'neighbour "
				"(%s)'",
				runs[i].label);
}

/*
 * The latency scatter.  Several runs' clouds drawn over one another
 * hide each other (the last one covers the dense band), so with more
 * than one run each gets its own panel, stacked, on the same x and y
 * ranges (gnuplot's stats over every run's data).
 */
static void gp_scatter(FILE *g, const struct run *runs, size_t nr,
		       const char *terminal, const char *ext, int lanes)
{
	size_t ns = 0;
	for (size_t i = 0; i < nr; i++)
		ns += runs[i].has_scatter;
	if (ns == 1) {
		for (size_t i = 0; i < nr; i++) {
			if (!runs[i].has_scatter)
				continue;
			gp_checkpoints(g, runs, nr);
			fprintf(g,
				"set output 'scatter.%s'\n"
				"set title 'Latency of each transaction "
				"(per-transaction log)'\n"
				"set ylabel 'latency (ms, log scale)'\n"
				"set logscale y\nset yrange [*:*]\n"
				"plot 'data/r%zu-latency.dat' using 1:2 with "
				"points pt 7 ps 0.25 lc rgb '%s' title '%s'",
				ext, i + 1, runs[i].color, runs[i].label);
			gp_ck_keys(g, runs + i, 1);
			fputs("\nunset logscale y\n", g);
		}
		return;
	}
	/* the terminal again, taller: one 300-pixel panel per run */
	const char *size = strstr(terminal, "size 1100,400");
	if (size)
		fprintf(g, "%.*ssize 1100,%zu%s\n", (int)(size - terminal),
			terminal, 60 + 300 * ns,
			size + strlen("size 1100,400"));
	fputs("ymin = 1e300\nymax = 0\n", g);
	for (size_t i = 0; i < nr; i++)
		if (runs[i].has_scatter)
			fprintf(g,
				"stats 'data/r%zu-latency.dat' using 2 "
				"nooutput prefix 'S%zu'\n"
				"ymin = S%zu_min < ymin ? S%zu_min : ymin\n"
				"ymax = S%zu_max > ymax ? S%zu_max : ymax\n",
				i + 1, i + 1, i + 1, i + 1, i + 1, i + 1);
	fprintf(g,
		"ymin = ymin > 0.001 ? ymin : 0.001\n"
		"ymax = ymax > ymin ? ymax : 10 * ymin\n"
		"set output 'scatter.%s'\n"
		"set multiplot layout %zu,1 title 'Latency of each "
		"transaction (per-transaction log), one panel per run'\n"
		"set ylabel 'latency (ms, log scale)'\n"
		"set logscale y\n"
		"set yrange [10**floor(log10(ymin)):10**ceil(log10(ymax))]\n",
		ext, ns);
	if (lanes)
		fprintf(g, "set offsets 0, 0, graph %.3f, 0\n",
			LANE_HEIGHT + 0.02);
	for (size_t i = 0; i < nr; i++) {
		if (!runs[i].has_scatter)
			continue;
		gp_checkpoints(g, runs + i, 1);
		fprintf(g,
			"unset title\n"
			"plot 'data/r%zu-latency.dat' using 1:2 with points "
			"pt 7 ps 0.25 lc rgb '%s' title '%s'",
			i + 1, runs[i].color, runs[i].label);
		gp_ck_keys(g, runs + i, 1);
		fputs("\n", g);
	}
	fputs("unset multiplot\nunset logscale y\nset yrange [*:*]\n", g);
	if (lanes)
		fprintf(g, "set offsets 0, 0, graph %.3f, 0\n",
			LANE_HEIGHT * lanes + 0.02);
	fprintf(g, "%s\n", terminal);
}

struct plot_set {
	int tps, latency, dirty, io, scatter;
	const char *ext;
	int bg_thresh_shown;  /* the line is on the Dirty plot */
	double bg_thresh_mib; /* NAN if unknown */
};

static int write_script(int dfd, const struct run *runs, size_t nr,
			const char *terminal, struct plot_set *ps)
{
	FILE *g;
	int e = write_file_at(dfd, "plots.gp", &g);
	if (e)
		return e;
	double xmin = INFINITY, xmax = -INFINITY;
	for (size_t i = 0; i < nr; i++) {
		for (size_t k = 0; k < runs[i].d.nr_prog; k++) {
			xmin = fmin(xmin, runs[i].d.prog[k].t_s);
			xmax = fmax(xmax, runs[i].d.prog[k].t_s);
			ps->tps = 1;
			ps->latency = 1;
		}
		for (size_t k = 0; k < runs[i].d.nr_mon; k++) {
			xmin = fmin(xmin, runs[i].d.mon[k].t_s);
			xmax = fmax(xmax, runs[i].d.mon[k].t_s);
			ps->dirty = 1;
			if (!isnan(runs[i].d.mon[k].write_ios))
				ps->io = 1;
		}
		if (runs[i].has_scatter)
			ps->scatter = 1;
	}
	if (xmin < 0)
		xmin = 0; /* monitor samples before the run */
	fprintf(g,
		"# generated by flushkit report; run: gnuplot plots.gp\n"
		"%s\n"
		"set datafile missing 'NaN'\n"
		"set grid lc rgb '#dddddd'\n"
		"set border lc rgb '#555555'\n"
		"set key outside top center horizontal samplen 2 "
		"font ',9'\n"
		"set xlabel 'time since start of run (s)'\n"
		"set tics nomirror\n"
		"set style fill transparent solid 0.13 noborder\n",
		terminal);
	if (xmax > xmin)
		fprintf(g, "set xrange [%.3f:%.3f]\n", xmin, xmax);
	int lanes = 0;
	for (size_t i = 0; i < nr; i++)
		lanes += runs[i].d.nr_ck > 0;
	if (lanes) /* room above the data for the checkpoint lanes */
		fprintf(g, "set offsets 0, 0, graph %.3f, 0\n",
			LANE_HEIGHT * lanes + 0.02);

	if (ps->tps) {
		/* fsmark counts files, not transactions (its "tps_unit") */
		int files = nr > 0;
		for (size_t i = 0; i < nr; i++) {
			const char *u =
			    result_str(runs[i].d.settings, "tps_unit");
			files &= u && !strcmp(u, "files/s");
		}
		gp_checkpoints(g, runs, nr);
		fprintf(g,
			"set output 'tps.%s'\n"
			"set title 'Throughput per progress interval'\n"
			"set ylabel '%s per second'\n"
			"set yrange [0:*]\nplot ",
			ps->ext, files ? "files" : "transactions");
		int first = 1;
		for (size_t i = 0; i < nr; i++) {
			if (!runs[i].d.nr_prog)
				continue;
			fprintf(g,
				"%s'data/r%zu-progress.dat' using 1:2 with "
				"lines lw 1.5 lc rgb '%s' title '%s'",
				first ? "" : ", ", i + 1, runs[i].color,
				runs[i].label);
			first = 0;
		}
		gp_ck_keys(g, runs, nr);
		fputs("\n", g);
	}
	if (ps->latency) {
		gp_checkpoints(g, runs, nr);
		fprintf(g,
			"set output 'latency.%s'\n"
			"set title 'Latency per progress interval: average "
			"(solid), maximum (dashed)'\n"
			"set ylabel 'latency (ms, log scale)'\n"
			"set logscale y\nset yrange [*:*]\nplot ",
			ps->ext);
		int first = 1;
		for (size_t i = 0; i < nr; i++) {
			if (!runs[i].d.nr_prog)
				continue;
			fprintf(g,
				"%s'data/r%zu-progress.dat' using 1:($3 > 0 "
				"? $3 : NaN) with lines lw 1.5 lc rgb '%s' "
				"title '%s avg'",
				first ? "" : ", ", i + 1, runs[i].color,
				runs[i].label);
			first = 0;
			if (runs[i].d.has_lat_max)
				fprintf(g,
					", 'data/r%zu-progress.dat' using "
					"1:($5 > 0 ? $5 : NaN) with lines "
					"dt 2 lw 1 lc rgb '%s' title '%s "
					"max'",
					i + 1, runs[i].color, runs[i].label);
		}
		gp_ck_keys(g, runs, nr);
		fputs("\nunset logscale y\n", g);
	}
	if (ps->dirty) {
		gp_checkpoints(g, runs, nr);
		fprintf(g,
			"set output 'dirty.%s'\n"
			"set title 'Page cache: Dirty (solid) and Writeback "
			"(dashed), /proc/meminfo'\n"
			"set ylabel 'MiB'\nset yrange [0:*]\nplot ",
			ps->ext);
		int first = 1;
		for (size_t i = 0; i < nr; i++) {
			if (!runs[i].d.nr_mon)
				continue;
			fprintf(g,
				"%s'data/r%zu-monitor.dat' using 1:2 with "
				"lines lw 1.5 lc rgb '%s' title '%s "
				"Dirty', 'data/r%zu-monitor.dat' using 1:3 "
				"with lines dt 2 lw 1.5 lc rgb '%s' title "
				"'%s Writeback'",
				first ? "" : ", ", i + 1, runs[i].color,
				runs[i].label, i + 1, runs[i].color,
				runs[i].label);
			first = 0;
		}
		/* The background threshold of the first run, where the
		 * flusher threads start writing back, unless it would squash
		 * the curves (it is then in the caption). */
		double peak = 0, bg = NAN;
		for (size_t i = 0; i < nr; i++)
			for (size_t k = 0; k < runs[i].d.nr_mon; k++) {
				const struct result_monitor *m =
				    &runs[i].d.mon[k];
				peak = fmax(peak,
					    fmax(m->dirty_kb, m->writeback_kb));
				if (isnan(bg))
					bg = m->dirty_background_threshold_kb;
			}
		ps->bg_thresh_mib = bg / 1024;
		ps->bg_thresh_shown = !isnan(bg) && bg <= 1.5 * peak;
		for (size_t i = 0; i < nr && ps->bg_thresh_shown; i++)
			if (runs[i].d.nr_mon) {
				fprintf(g,
					", 'data/r%zu-monitor.dat' using "
					"1:5 with lines dt 3 lw 2 lc rgb "
					"'#555555' title 'dirty background "
					"threshold'",
					i + 1);
				break;
			}
		gp_ck_keys(g, runs, nr);
		fputs("\n", g);
	}
	if (ps->io) {
		static const struct {
			const char *file, *title, *ylabel;
			int col;
		} io[] = {
		    {"iops", "Write requests completed per second",
		     "write IOPS", 6},
		    {"mbps", "Data written per second", "MiB/s", 7},
		};
		for (int k = 0; k < 2; k++) {
			gp_checkpoints(g, runs, nr);
			fprintf(g,
				"set output '%s.%s'\n"
				"set title '%s (/sys/block/DEV/stat)'\n"
				"set ylabel '%s'\nset yrange [0:*]\nplot ",
				io[k].file, ps->ext, io[k].title, io[k].ylabel);
			int first = 1;
			for (size_t i = 0; i < nr; i++) {
				if (!runs[i].d.nr_mon || !runs[i].d.dev[0])
					continue;
				fprintf(g,
					"%s'data/r%zu-monitor.dat' using "
					"1:%d with fsteps lw 1.5 lc rgb '%s' "
					"title '%s (%s)'",
					first ? "" : ", ", i + 1, io[k].col,
					runs[i].color, runs[i].label,
					runs[i].d.dev);
				first = 0;
			}
			gp_ck_keys(g, runs, nr);
			fputs("\n", g);
		}
	}
	if (ps->scatter)
		gp_scatter(g, runs, nr, terminal, ps->ext, lanes);
	fputs("unset output\n", g);
	return close_file(g);
}

/* Run gnuplot SCRIPT in directory @dir, its output in DIR/gnuplot.log.
 * Returns the exit status, or -errno if it could not run. */
static int run_gnuplot(const char *dir, const char *script)
{
	char *argv[] = {"gnuplot", (char *)script, NULL};
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT,
			       .cwd = dir,
			       .out_path = "gnuplot.log"};
	return child_run("gnuplot", argv, &o);
}

/* The best terminal this gnuplot has: pngcairo, png, or svg. */
static const char *pick_terminal(int dfd, const char *dir, int want_svg,
				 const char **ext)
{
	static const struct {
		const char *name, *set, *ext;
	} terms[] = {
	    {"pngcairo",
	     "set terminal pngcairo size 1100,400 "
	     "font 'Sans,10' noenhanced",
	     "png"},
	    {"png", "set terminal png size 1100,400 noenhanced", "png"},
	    {"svg",
	     "set terminal svg size 1100,400 font 'Sans,11' "
	     "noenhanced background '#ffffff'",
	     "svg"},
	};
	for (size_t i = want_svg ? 2 : 0; i < 3; i++) {
		FILE *f;
		if (write_file_at(dfd, "probe.gp", &f))
			break;
		fprintf(f, "%s\n", terms[i].set);
		if (close_file(f))
			break;
		int r = run_gnuplot(dir, "probe.gp");
		unlinkat(dfd, "probe.gp", 0);
		if (r == 127 || r < 0)
			return NULL; /* no gnuplot at all */
		if (r == 0) {
			*ext = terms[i].ext;
			return terms[i].set;
		}
	}
	return NULL;
}

/* ---- HTML -------------------------------------------------------------- */

static void html_num(FILE *f, double v, const char *fmt, int computed)
{
	if (isnan(v)) {
		fputs("<td class=na>&ndash;</td>", f);
		return;
	}
	fputs("<td>", f);
	fprintf(f, fmt, v);
	if (computed)
		fputs("<sup title=\"computed from the progress lines\">*</sup>",
		      f);
	fputs("</td>", f);
}

/* The scalar settings every run shares ("bench=tpcb scale=20 ..."), so
 * the reader knows what was compared without opening each run. */
static void common_settings(FILE *f, const struct run *runs, size_t nr)
{
	if (!nr || !runs[0].d.settings)
		return;
	int any = 0;
	json_object_object_foreach(runs[0].d.settings, key, val)
	{
		if (!label_worthy(key) || !val ||
		    json_object_is_type(val, json_type_object) ||
		    json_object_is_type(val, json_type_array))
			continue;
		char a[128], b[128];
		value_text(val, a, sizeof(a));
		int same = 1;
		for (size_t j = 1; j < nr && same; j++) {
			struct json_object *vj = NULL;
			if (runs[j].d.settings)
				json_object_object_get_ex(runs[j].d.settings,
							  key, &vj);
			same = !strcmp(a, value_text(vj, b, sizeof(b)));
		}
		if (!same)
			continue;
		fputs(any ? ", "
			  : (nr > 1 ? "<p class=meta>Same in every run: "
				    : "<p class=meta>Settings: "),
		      f);
		html_text(f, key);
		fputs("=", f);
		html_text(f, a);
		any = 1;
	}
	if (any)
		fputs(".</p>\n", f);
}

static void summary_table(FILE *f, const struct run *runs, size_t nr)
{
	fputs("<table class=sum><tr><th>run</th><th>tps</th>"
	      "<th>latency avg<br>(ms)</th><th>latency p99<br>(ms)</th>"
	      "<th>latency max<br>(ms)</th><th title=\"worst one-second "
	      "tps divided by the median one-second tps, after the "
	      "warm-up; 1 = no stalls\">stall ratio</th><th title=\"the "
	      "worst second a checkpoint ran in, over the same median\">"
	      "stall during<br>checkpoints</th><th title=\"the worst "
	      "second no checkpoint ran in, over the same median\">stall "
	      "outside</th><th>checkpoints</th><th>backend<br>fsyncs"
	      "</th><th title=\"how the checkpoint sync phase (fsmark: the "
	      "batch) issued its fsyncs\">sync<br>I/O</th>"
	      "<th>duration<br>(s)</th><th>peak Dirty<br>(MiB)</th>"
	      "<th>written<br>(MiB)</th></tr>\n",
	      f);
	int any_computed = 0;
	for (size_t i = 0; i < nr; i++) {
		const struct run *r = &runs[i];
		struct json_object *s = r->d.summary;
		fprintf(f,
			"<tr><td class=run><span class=sw style=\"background:"
			"%s\"></span>",
			r->color);
		html_text(f, r->label);
		fputs("</td>", f);
		double tps = result_num(s, "tps", NAN),
		       avg = result_num(s, "lat_avg_ms", NAN);
		double mx = result_num(s, "lat_max_ms", NAN);
		double stall = result_num(s, "stall_ratio", NAN);
		double ck = result_num(s, "checkpoints", NAN);
		int c_tps = 0, c_avg = 0, c_max = 0, c_stall = 0, c_ck = 0;
		if (isnan(tps) && r->d.nr_prog) {
			double sum = 0;
			for (size_t k = 0; k < r->d.nr_prog; k++)
				sum += r->d.prog[k].tps;
			tps = sum / (double)r->d.nr_prog;
			c_tps = 1;
		}
		if (isnan(avg) && r->d.nr_prog) {
			double sum = 0, w = 0;
			for (size_t k = 0; k < r->d.nr_prog; k++) {
				sum +=
				    r->d.prog[k].lat_avg_ms * r->d.prog[k].tps;
				w += r->d.prog[k].tps;
			}
			avg = w > 0 ? sum / w : NAN;
			c_avg = 1;
		}
		if (isnan(mx) && r->d.has_lat_max) {
			for (size_t k = 0; k < r->d.nr_prog; k++)
				if (isnan(mx) || r->d.prog[k].lat_max_ms > mx)
					mx = r->d.prog[k].lat_max_ms;
			c_max = 1;
		}
		double st_ck = result_num(s, "stall_ratio_checkpoint", NAN);
		double st_out = result_num(s, "stall_ratio_outside", NAN);
		double ck_secs = result_num(s, "checkpoint_seconds", NAN);
		struct json_object *sc;
		if (json_object_object_get_ex(s, "stall_computed", &sc) &&
		    json_object_get_boolean(sc)) {
			c_stall = !isnan(stall);
		}
		if (isnan(ck) && r->d.nr_ck) {
			ck = (double)r->d.nr_ck;
			c_ck = 1;
		}
		any_computed |= c_tps | c_avg | c_max | c_stall | c_ck;
		html_num(f, tps, "%.1f", c_tps);
		html_num(f, avg, "%.3f", c_avg);
		html_num(f, result_num(s, "lat_p99_ms", NAN), "%.3f", 0);
		html_num(f, mx, "%.3f", c_max);
		html_num(f, stall, "%.3f", c_stall);
		if (ck_secs == 0)
			fputs("<td class=na title=\"no checkpoint ran in the "
			      "window\">none</td>",
			      f);
		else
			html_num(f, st_ck, "%.3f", c_stall);
		html_num(f, st_out, "%.3f", c_stall);
		html_num(f, ck, "%.0f", c_ck);
		html_num(f, result_num(s, "backend_fsyncs", NAN), "%.0f", 0);
		const char *so = result_str(s, "sync_io");
		if (so) {
			char sio[32];
			snprintf(sio, sizeof(sio), "%s", so);
			sanitize(sio);
			fprintf(f, "<td>%s</td>", sio);
		} else {
			fputs("<td class=na>&ndash;</td>", f);
		}
		double dur = result_num(s, "duration_s", NAN);
		if (isnan(dur) && r->d.nr_prog)
			dur = r->d.prog[r->d.nr_prog - 1].t_s;
		html_num(f, dur, "%.0f", 0);
		/* from the monitor lines */
		double peak = NAN, written = NAN;
		for (size_t k = 0; k < r->d.nr_mon; k++) {
			const struct result_monitor *m = &r->d.mon[k];
			if (!isnan(m->dirty_kb))
				peak = isnan(peak) ? m->dirty_kb
						   : fmax(peak, m->dirty_kb);
			if (!isnan(m->write_kb))
				written = (isnan(written) ? 0 : written) +
					  m->write_kb;
		}
		html_num(f, peak / 1024, "%.0f", 0);
		html_num(f, written / 1024, "%.0f", 0);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (any_computed)
		fputs("<p class=note><sup>*</sup> not in the result's summary "
		      "line: computed from its progress (or checkpoint) "
		      "lines.</p>\n",
		      f);
}

static void kv_table(FILE *f, struct json_object *o, const char *skip)
{
	fputs("<table class=kv>", f);
	json_object_object_foreach(o, key, val)
	{
		char buf[512];
		if (skip && !strcmp(key, skip))
			continue;
		fputs("<tr><th>", f);
		html_text(f, key);
		fputs("</th><td>", f);
		html_text(f, value_text(val, buf, sizeof(buf)));
		fputs("</td></tr>", f);
	}
	fputs("</table>\n", f);
}

static void env_html(FILE *f, struct json_object *env)
{
	struct json_object *v, *paths;
	fputs("<table class=kv>", f);
	const char *kern = result_str(env, "kernel");
	if (kern) {
		fputs("<tr><th>kernel</th><td>", f);
		html_text(f, kern);
		fputs("</td></tr>", f);
	}
	if (json_object_object_get_ex(env, "cpus", &v)) {
		fprintf(f,
			"<tr><th>CPUs, memory</th><td>%lld, %.1f GiB</td>"
			"</tr>",
			(long long)json_object_get_int64(v),
			result_num(env, "mem_total_kb", 0) / 1048576.0);
	}
	if (json_object_object_get_ex(env, "sysctl", &v)) {
		json_object_object_foreach(v, key, val)
		{
			fputs("<tr><th>", f);
			html_text(f, key);
			fprintf(f, "</th><td>%lld</td></tr>",
				(long long)json_object_get_int64(val));
		}
	}
	if (json_object_object_get_ex(env, "paths", &paths)) {
		for (size_t i = 0; i < json_object_array_length(paths); i++) {
			struct json_object *p = json_object_array_get_idx(paths,
									  i),
					   *devs;
			fputs("<tr><th>", f);
			html_text(f, result_str(p, "path"));
			fputs("</th><td>", f);
			html_text(f, result_str(p, "fs_type"));
			fputs(" on ", f);
			html_text(f, result_str(p, "mount_source"));
			fputs(" at ", f);
			html_text(f, result_str(p, "mount_point"));
			fputs(" (", f);
			html_text(f, result_str(p, "mount_options"));
			fputs("; ", f);
			html_text(f, result_str(p, "super_options"));
			fputs(")", f);
			if (json_object_object_get_ex(p, "devices", &devs)) {
				for (size_t d = 0;
				     d < json_object_array_length(devs); d++) {
					struct json_object *dj =
					    json_object_array_get_idx(devs, d);
					fputs("<br>disk ", f);
					html_text(f, result_str(dj, "name"));
					if (result_str(dj, "backing_of")) {
						fputs(" (holds the backing file"
						      " of ",
						      f);
						html_text(
						    f, result_str(
							   dj, "backing_of"));
						fputs(")", f);
					}
					fputs(": scheduler ", f);
					html_text(f,
						  result_str(dj, "scheduler"));
					fputs(", write cache ", f);
					html_text(
					    f, result_str(dj, "write_cache"));
				}
			}
			fputs("</td></tr>", f);
		}
	}
	fputs("</table>\n", f);
}

static void ck_table(FILE *f, const struct run *r)
{
	fputs("<table class=ck><tr><th>start (s)</th><th>end (s)</th>"
	      "<th>buffers</th><th>write (s)</th><th>sync (s)</th>"
	      "<th>total (s)</th><th>files synced</th>"
	      "<th>longest sync (s)</th></tr>",
	      f);
	for (size_t k = 0; k < r->d.nr_ck; k++) {
		const struct result_checkpoint *c = &r->d.ck[k];
		fputs("<tr>", f);
		html_num(f, c->start_s, "%.1f", 0);
		html_num(f, c->end_s, "%.1f", 0);
		html_num(f, c->buffers < 0 ? NAN : (double)c->buffers, "%.0f",
			 0);
		html_num(f, c->write_s, "%.3f", 0);
		html_num(f, c->sync_s, "%.3f", 0);
		html_num(f, c->total_s, "%.3f", 0);
		html_num(f, c->files < 0 ? NAN : (double)c->files, "%.0f", 0);
		html_num(f, c->longest_s, "%.3f", 0);
		fputs("</tr>", f);
	}
	fputs("</table>\n", f);
}

static const char css[] =
    "body{font-family:sans-serif;max-width:1140px;margin:1em auto;"
    "padding:0 1em;color:#222}"
    "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;"
    "margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:.9em}"
    "th,td{padding:.25em .6em;border:1px solid #ddd}"
    "table.sum td{text-align:right}table.sum td.run{text-align:left;"
    "white-space:nowrap}th{background:#f3f3f3;font-weight:600}"
    "table.kv th{text-align:left}table.ck td{text-align:right}"
    ".sw{display:inline-block;width:.9em;height:.9em;margin-right:.4em;"
    "vertical-align:-.1em;border-radius:2px}"
    "td.na{color:#999;text-align:center}"
    "figure{margin:1em 0}figure img{width:100%;height:auto;"
    "border:1px solid #eee}"
    "figcaption{font-size:.85em;color:#555;margin-top:.2em}"
    ".note,.meta{font-size:.85em;color:#555}"
    "details{margin:.5em 0}summary{cursor:pointer;font-weight:600}"
    ".cols{display:flex;flex-wrap:wrap;gap:0 2em;align-items:flex-start}"
    "h3{font-size:1em;margin:.8em 0 .3em}";

static const struct {
	const char *file, *title, *caption;
} figures[] = {
    {"tps", "Throughput",
     "Transactions per second in each progress interval. Shaded spans "
     "are checkpoints (start to end), with a strip per run at the top in "
     "the run's colour: a strategy that stalls shows tps dropping inside "
     "or right after them."},
    {"latency", "Latency",
     "Average (solid) and, where recorded, maximum (dashed) latency of "
     "the transactions completed in each interval, log scale."},
    {"scatter", "Latency of every transaction",
     "One dot per transaction from the per-transaction log (thinned "
     "evenly if very large), at its completion time; with several runs, "
     "one panel per run on the same scales."},
    {"dirty", "Dirty and Writeback memory",
     "Dirty: page cache waiting to be written; Writeback: being written "
     "right now (/proc/meminfo), whole machine."},
    {"iops", "Write IOPS",
     "Write requests completed per second on the run's first disk "
     "(/sys/block/DEV/stat)."},
    {"mbps", "Write throughput",
     "MiB written per second on the run's first disk."},
};

static int write_html(int dfd, const struct run *runs, size_t nr,
		      const struct plot_set *ps, const char *gp_note)
{
	FILE *f;
	int e = write_file_at(dfd, "index.html", &f);
	if (e)
		return e;
	char stamp[64];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S %Z", &tm);
	fprintf(f,
		"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
		"<title>flushkit report</title><style>%s</style></head>"
		"<body>\n<h1>flushkit report</h1>\n<p class=meta>%zu "
		"run%s, generated %s by flushkit %s.</p>\n",
		css, nr, nr == 1 ? "" : "s", stamp, fk_version());
	if (gp_note) {
		fputs("<p class=note><b>Plots missing:</b> ", f);
		html_text(f, gp_note);
		fputs("</p>\n", f);
	}
	fputs("<h2>Summary</h2>\n", f);
	common_settings(f, runs, nr);
	summary_table(f, runs, nr);
	int on[] = {ps->tps,   ps->latency, ps->scatter,
		    ps->dirty, ps->io,	    ps->io};
	for (size_t k = 0; k < sizeof(figures) / sizeof(figures[0]); k++) {
		if (!on[k] || gp_note)
			continue;
		fprintf(f,
			"<h2>%s</h2>\n<figure><img src=\"%s.%s\" alt=\"%s\">"
			"<figcaption>%s",
			figures[k].title, figures[k].file, ps->ext,
			figures[k].title, figures[k].caption);
		if (!strcmp(figures[k].file, "dirty")) {
			if (ps->bg_thresh_shown)
				fputs(" The dotted line is the background "
				      "threshold, where the kernel's flusher "
				      "threads start writing back.",
				      f);
			else if (!isnan(ps->bg_thresh_mib))
				fprintf(f,
					" The background threshold, where "
					"the kernel's flusher threads start "
					"writing back, is %.0f MiB: off this "
					"scale.",
					ps->bg_thresh_mib);
		}
		fputs("</figcaption></figure>\n", f);
	}
	fputs("<h2>Runs</h2>\n", f);
	for (size_t i = 0; i < nr; i++) {
		const struct run *r = &runs[i];
		fprintf(f,
			"<details%s><summary><span class=sw style=\""
			"background:%s\"></span>",
			nr == 1 ? " open" : "", r->color);
		html_text(f, r->label);
		fputs(" &mdash; ", f);
		html_text(f, r->path);
		fputs("</summary>\n<div class=cols>", f);
		if (r->d.settings) {
			fputs("<div><h3>Settings</h3>\n", f);
			kv_table(f, r->d.settings, "type");
			fputs("</div>", f);
		}
		if (r->d.summary) {
			fputs("<div><h3>Summary line</h3>\n", f);
			kv_table(f, r->d.summary, "type");
			fputs("</div>", f);
		}
		if (r->d.env) {
			fputs("<div><h3>Environment</h3>\n", f);
			env_html(f, r->d.env);
			fputs("</div>", f);
		}
		if (r->d.nr_ck) {
			fputs("<div><h3>Checkpoints</h3>\n", f);
			ck_table(f, r);
			fputs("</div>", f);
		}
		fputs("</div></details>\n", f);
	}
	fputs("<p class=meta>Data files and the gnuplot script "
	      "(plots.gp) are beside this page; rerun "
	      "<code>gnuplot plots.gp</code> there to redraw.</p>\n"
	      "</body></html>\n",
	      f);
	return close_file(f);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit report RESULT... -o DIR [--svg]\n\n"
		"Write DIR/index.html with gnuplot plots of benchmark result "
		"files (JSON\nlines, as written by 'flushkit bench ... "
		"--results'): tps, latency, Dirty\nand Writeback, write IOPS "
		"and MiB/s over time with checkpoints shaded, and\na summary "
		"table.  Several results overlay on the same plots.  A RESULT "
		"that is a\n"
		"directory stands for every *.jsonl in it (as in compare).\n\n"
		"  -o, --output DIR   where to write the page (created)\n"
		"      --svg          SVG plots instead of PNG\n"
		"  -h, --help         this help\n");
}

static void free_paths(char **paths, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
}

/* The result files of the @n operands @args: a file stands for itself,
 * a directory for every *.jsonl in it (results_list: sorted, not
 * recursive).  A directory without one is an error.  0 (*@paths and
 * *@nr set) or -errno, printed. */
static int expand_results(char *const *args, size_t n, char ***paths,
			  size_t *nr)
{
	char **v = NULL;
	size_t k = 0, cap = 0;
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		struct stat st;
		char **names = NULL;
		size_t nn = 1;
		int dir = !stat(args[i], &st) && S_ISDIR(st.st_mode);
		if (dir) {
			err = results_list(args[i], &names, &nn);
			if (err) {
				cli_error("open '%s': %s", args[i],
					  strerror(-err));
				break;
			}
			if (!nn) {
				cli_error("report: '%s' holds no result file "
					  "(*.jsonl)",
					  args[i]);
				err = -ENOENT;
			}
		}
		for (size_t j = 0; j < nn && !err; j++) {
			if (k == cap) {
				size_t nc = cap ? 2 * cap : 16;
				char **nv = realloc(v, nc * sizeof(*v));
				if (!nv) {
					err = -ENOMEM;
					break;
				}
				v = nv;
				cap = nc;
			}
			if (dir ? asprintf(&v[k], "%s/%s", args[i], names[j]) <
				      0
				: !(v[k] = strdup(args[i]))) {
				err = -ENOMEM;
				break;
			}
			k++;
		}
		if (names)
			results_list_free(names, nn);
	}
	if (err) {
		if (err == -ENOMEM)
			cli_error("report: %s", strerror(ENOMEM));
		free_paths(v, k);
		return err;
	}
	*paths = v;
	*nr = k;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"svg", no_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	int svg = 0, c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 's':
			svg = 1;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("report", c, argv, opts);
		}
	}
	if (!out)
		return cli_usage_error("report", "-o DIR is required");
	if (optind >= argc)
		return cli_usage_error("report", "missing RESULT operand");
	/* A RESULT that is a directory stands for every *.jsonl in it, as
	 * in compare. */
	char **paths = NULL;
	size_t nr = 0;
	if (expand_results(argv + optind, (size_t)(argc - optind), &paths, &nr))
		return FK_EXIT_FAILURE;
	struct run *runs = calloc(nr, sizeof(*runs));
	if (!runs) {
		free_paths(paths, nr);
		return FK_EXIT_FAILURE;
	}
	int ret = FK_EXIT_OK;
	for (size_t i = 0; i < nr; i++) {
		runs[i].path = paths[i];
		if (read_run(&runs[i])) {
			ret = FK_EXIT_FAILURE;
			goto out;
		}
		if (!runs[i].d.nr_prog && !runs[i].d.nr_mon)
			cli_warn("'%s': no progress or monitor lines",
				 runs[i].path);
	}
	make_labels(runs, nr);

	if (mkdir(out, 0755) && errno != EEXIST) {
		cli_error("mkdir '%s': %s", out, strerror(errno));
		ret = FK_EXIT_FAILURE;
		goto out;
	}
	int dfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		cli_error("open '%s': %s", out, strerror(errno));
		ret = FK_EXIT_FAILURE;
		goto out;
	}
	if (mkdirat(dfd, "data", 0755) && errno != EEXIST) {
		cli_error("mkdir '%s/data': %s", out, strerror(errno));
		close(dfd);
		ret = FK_EXIT_FAILURE;
		goto out;
	}
	int ddfd = openat(dfd, "data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int e = ddfd < 0 ? -errno : 0;
	for (size_t i = 0; i < nr && !e; i++)
		e = write_data(&runs[i], ddfd, i);
	if (ddfd >= 0)
		close(ddfd);
	if (e) {
		cli_error("write '%s/data': %s", out, strerror(-e));
		close(dfd);
		ret = FK_EXIT_FAILURE;
		goto out;
	}

	struct plot_set ps = {.bg_thresh_mib = NAN};
	const char *ext = "png";
	const char *note = NULL;
	const char *term = pick_terminal(dfd, out, svg, &ext);
	ps.ext = ext;
	if (!term) {
		note = "gnuplot was not found or has no png/svg terminal "
		       "(Debian: apt-get install gnuplot-nox).";
		cli_warn("%s", note);
	} else if ((e = write_script(dfd, runs, nr, term, &ps))) {
		cli_error("write '%s/plots.gp': %s", out, strerror(-e));
		ret = FK_EXIT_FAILURE;
	} else {
		int r = run_gnuplot(out, "plots.gp");
		if (r) {
			cli_error(
			    "gnuplot failed (exit %d); see '%s/gnuplot.log'", r,
			    out);
			note = "gnuplot failed; see gnuplot.log.";
			ret = FK_EXIT_FAILURE;
		}
	}
	e = write_html(dfd, runs, nr, &ps, note);
	if (e) {
		cli_error("write '%s/index.html': %s", out, strerror(-e));
		ret = FK_EXIT_FAILURE;
	} else {
		printf("%s/index.html\n", out);
	}
	close(dfd);
out:
	for (size_t i = 0; i < nr; i++)
		free_run(&runs[i]);
	free(runs);
	free_paths(paths, nr);
	return ret;
}
