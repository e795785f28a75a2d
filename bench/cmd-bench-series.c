// SPDX-License-Identifier: MIT
/*
 * cmd-bench-series.c - "flushkit bench series": bench tpcb over a grid
 * of scales and client counts for two configurations, as pgbench-tools
 * (Greg Smith) ran pgbench series for the 2010 compacted-fsync study
 * (docs/series.md).
 *
 * For each scale, each configuration gets its own data directory,
 * initialized with "bench tpcb -i -s SCALE" and the configuration's
 * arguments.  Then for each client count, --runs times, one run of
 * each configuration, alternating (A B, then B A, ...), each a child
 * "flushkit bench tpcb -c N -T S -P 1 ..." started with fork + execv of
 * /proc/self/exe and an argv array (no shell; --config-a/--config-b
 * strings are split on blanks, never interpreted).  Each run's result
 * file goes to DIR/sSCALE-cCLIENTS-{a,b}/, so "flushkit compare" takes
 * two such directories as the two sides; series finds it there (the one
 * result file the run added to the directory, results_list), not in the
 * child's log.  At the end: DIR/series.csv
 * (the classic layout), DIR/series-stats.csv (with standard deviations
 * and the +/-/0/? markers of fk_stats_compare), DIR/index.html (every
 * run, linked to its result file and log), and a table on stdout.
 */
#include "child.h"
#include "cli.h"
#include "html.h"
#include "knobs.h"
#include "reader.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST 32
#define MAX_ARGS 64

struct config {
	const char *name; /* "a" or "b" */
	const char *text; /* as given, for people */
	char *buf;	  /* split copy */
	char *argv[MAX_ARGS];
	int argc;
};

struct run {
	uint64_t scale, clients;
	int cfg; /* 0: a, 1: b */
	int nr;	 /* 1.. within the cell */
	int ok;
	double tps, lat_max_ms;
	char result[512]; /* relative to DIR, "" if none */
	char log[256];	  /* relative to DIR */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* A list of positive integers (--scales, --clients): cli.h's one list
 * parser, at most MAX_LIST. */
static int parse_list(const char *s, uint64_t *out, int *nr, uint64_t *dup)
{
	return cli_parse_u64_list(s, out, MAX_LIST, nr, dup);
}

static int split_config(struct config *c)
{
	char *save = NULL;
	c->buf = strdup(c->text);
	if (!c->buf)
		return -ENOMEM;
	c->argc = 0;
	for (char *t = strtok_r(c->buf, " \t\n", &save); t;
	     t = strtok_r(NULL, " \t\n", &save)) {
		if (c->argc == MAX_ARGS - 1)
			return -E2BIG;
		c->argv[c->argc++] = t;
	}
	c->argv[c->argc] = NULL;
	return 0;
}

/*
 * Run /proc/self/exe with @argv (NULL-terminated), stdin from /dev/null,
 * stdout and stderr to @log_path (created 0644, truncated).  Returns the
 * exit status, 128+N if killed by signal N, or -errno if it could not be
 * started.
 */
static int run_child(char *const *argv, const char *log_path)
{
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT,
			       .out_path = log_path};
	return child_run("/proc/self/exe", argv, &o);
}

/*
 * The result file a child wrote into @rdir: the one name results_list
 * finds there now that was not among @before (@nr_before names, listed
 * before the child started), as "RDIR/NAME" into @out.  Returns 1, or 0
 * (and a message) if there is none or more than one.
 */
static int new_result(const char *rdir, char **before, size_t nr_before,
		      char *out, size_t len)
{
	char **now;
	size_t nr_now, found = 0;
	int e = results_list(rdir, &now, &nr_now);
	if (e) {
		cli_error("series: open '%s': %s", rdir, strerror(-e));
		return 0;
	}
	for (size_t i = 0; i < nr_now; i++) {
		int old = 0;
		for (size_t j = 0; j < nr_before && !old; j++)
			old = !strcmp(now[i], before[j]);
		if (!old && !found++ &&
		    (size_t)snprintf(out, len, "%s/%s", rdir, now[i]) >= len) {
			cli_error("series: '%s/%s': %s", rdir, now[i],
				  strerror(ENAMETOOLONG));
			results_list_free(now, nr_now);
			out[0] = 0;
			return 0;
		}
	}
	results_list_free(now, nr_now);
	if (found != 1) {
		cli_error("series: '%s': %s new result file", rdir,
			  found ? "more than one" : "no");
		out[0] = 0;
	}
	return found == 1;
}

/* tps and lat_max_ms of the summary line of a result file.  0 (and a
 * message) if it has none, is not a result file or is a failed run's. */
static int read_summary(const char *path, double *tps, double *lat_max_ms)
{
	struct result_run r;
	char why[512];
	int found = 0;
	int e = result_run_load(path, &r);
	if (e)
		cli_error("series: %s",
			  r.info.why[0] ? r.info.why : strerror(-e));
	else if (result_run_refused(&r, why, sizeof(why)))
		cli_error("series: '%s': %s", path, why);
	else {
		*tps = result_num(r.summary, "tps", NAN);
		*lat_max_ms = result_num(r.summary, "lat_max_ms", NAN);
		found = 1;
	}
	result_run_release(&r);
	return found;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

struct cell {
	uint64_t scale, clients;
	struct fk_stats_summary tps[2], lat[2];
};

static void cell_stats(const struct run *runs, size_t nr, struct cell *c)
{
	for (int k = 0; k < 2; k++) {
		double t[256], l[256];
		size_t n = 0;
		for (size_t i = 0; i < nr && n < 256; i++) {
			const struct run *r = &runs[i];
			if (r->scale != c->scale || r->clients != c->clients ||
			    r->cfg != k || !r->ok)
				continue;
			t[n] = r->tps;
			l[n] = r->lat_max_ms;
			n++;
		}
		fk_stats_summarize(t, n, &c->tps[k]);
		fk_stats_summarize(l, n, &c->lat[k]);
	}
}

static void csv_num(FILE *f, const struct fk_stats_summary *s, int decimals)
{
	if (s->n)
		fprintf(f, "%.*f", decimals, s->mean);
}

static int write_outputs(const char *dir, const struct config *cfg,
			 const struct run *runs, size_t nr_runs,
			 struct cell *cells, size_t nr_cells, uint64_t dur_s)
{
	char path[4096];
	int err = 0;

	snprintf(path, sizeof(path), "%s/series.csv", dir);
	FILE *csv = fopen(path, "we");
	snprintf(path, sizeof(path), "%s/series-stats.csv", dir);
	FILE *st = fopen(path, "we");
	snprintf(path, sizeof(path), "%s/index.html", dir);
	FILE *html = fopen(path, "we");
	if (!csv || !st || !html) {
		err = -errno;
		goto out;
	}
	fprintf(csv, "scale,clients,tps_a,max_latency_a,tps_b,max_latency_b,"
		     "tps_gain,pct_gain\n");
	fprintf(st, "scale,clients,n_a,tps_a,tps_stddev_a,max_latency_a,"
		    "max_latency_stddev_a,n_b,tps_b,tps_stddev_b,max_latency_b,"
		    "max_latency_stddev_b,tps_marker,max_latency_marker\n");
	for (size_t i = 0; i < nr_cells; i++) {
		struct cell *c = &cells[i];
		fprintf(csv, "%llu,%llu,", (unsigned long long)c->scale,
			(unsigned long long)c->clients);
		csv_num(csv, &c->tps[0], 1);
		fputc(',', csv);
		csv_num(csv, &c->lat[0], 3);
		fputc(',', csv);
		csv_num(csv, &c->tps[1], 1);
		fputc(',', csv);
		csv_num(csv, &c->lat[1], 3);
		fputc(',', csv);
		if (c->tps[0].n && c->tps[1].n) {
			double g = c->tps[1].mean - c->tps[0].mean;
			fprintf(csv, "%.1f,", g);
			if (c->tps[0].mean > 0)
				fprintf(csv, "%.1f", 100 * g / c->tps[0].mean);
		} else
			fputc(',', csv);
		fputc('\n', csv);

		fprintf(st, "%llu,%llu", (unsigned long long)c->scale,
			(unsigned long long)c->clients);
		for (int k = 0; k < 2; k++) {
			fprintf(st, ",%llu", (unsigned long long)c->tps[k].n);
			if (c->tps[k].n) /* no run of this side succeeded:
					  * no figures, not zeros */
				fprintf(st, ",%.3f,%.3f,%.3f,%.3f",
					c->tps[k].mean, c->tps[k].stddev,
					c->lat[k].mean, c->lat[k].stddev);
			else
				fprintf(st, ",,,,");
		}
		fprintf(st, ",%c,%c\n",
			fk_stats_compare(&c->tps[0], &c->tps[1], NULL),
			fk_stats_compare(&c->lat[0], &c->lat[1], NULL));
	}

	fprintf(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		      "<title>flushkit bench series</title>\n<style>body{"
		      "font-family:sans-serif;margin:2em}table{border-"
		      "collapse:collapse}td,th{border:1px solid #ccc;padding:"
		      "2px 8px;text-align:right}</style></head><body>\n"
		      "<h1>flushkit bench series</h1>\n<p>");
	for (int k = 0; k < 2; k++) {
		fprintf(html, "Configuration %s: <code>", cfg[k].name);
		html_text(html, cfg[k].text);
		fprintf(html, "</code><br>\n");
	}
	fprintf(html,
		"Each run %llu s.  <a href=\"series.csv\">series.csv"
		"</a>, <a href=\"series-stats.csv\">series-stats.csv"
		"</a> (standard deviations and +/-/0/? markers, see "
		"flushkit compare).</p>\n<table>\n<tr><th>#</th><th>"
		"scale</th><th>clients</th><th>config</th><th>run</th>"
		"<th>tps</th><th>max latency (ms)</th><th>result file"
		"</th><th>log</th></tr>\n",
		(unsigned long long)dur_s);
	for (size_t i = 0; i < nr_runs; i++) {
		const struct run *r = &runs[i];
		fprintf(html,
			"<tr><td>%zu</td><td>%llu</td><td>%llu</td>"
			"<td>%s</td><td>%d</td>",
			i + 1, (unsigned long long)r->scale,
			(unsigned long long)r->clients, cfg[r->cfg].name,
			r->nr);
		if (r->ok)
			fprintf(html, "<td>%.1f</td><td>%.3f</td>", r->tps,
				r->lat_max_ms);
		else
			fprintf(html, "<td>failed</td><td></td>");
		fprintf(html, "<td>");
		if (r->result[0]) {
			fprintf(html, "<a href=\"");
			html_href(html, r->result);
			fprintf(html, "\">");
			html_text(html, r->result);
			fprintf(html, "</a>");
		}
		fprintf(html, "</td><td><a href=\"");
		html_href(html, r->log);
		fprintf(html, "\">log</a></td></tr>\n");
	}
	fprintf(html, "</table>\n</body></html>\n");
out:
	if (csv && fclose(csv) && !err)
		err = -errno;
	if (st && fclose(st) && !err)
		err = -errno;
	if (html && fclose(html) && !err)
		err = -errno;
	return err;
}

static void print_table(const struct config *cfg, const struct cell *cells,
			size_t nr)
{
	printf("A: %s\nB: %s\n\n", cfg[0].text, cfg[1].text);
	printf("%5s %7s  %9s %8s %10s  %9s %8s %10s  %7s  %s\n", "scale",
	       "clients", "tps A", "STDDEV", "max ms A", "tps B", "STDDEV",
	       "max ms B", "gain", "(tps, max)");
	for (size_t i = 0; i < nr; i++) {
		const struct cell *c = &cells[i];
		if (!c->tps[0].n || !c->tps[1].n) {
			/* every run of a side failed: say so, no 0 tps and
			 * no -100% gain */
			printf("%5llu %7llu  ", (unsigned long long)c->scale,
			       (unsigned long long)c->clients);
			for (int k = 0; k < 2; k++) {
				if (c->tps[k].n)
					printf("%9.1f %8.1f %10.3f  ",
					       c->tps[k].mean, c->tps[k].stddev,
					       c->lat[k].mean);
				else
					printf("%9s %8s %10s  ", "failed", "",
					       "");
			}
			printf("%7s  (? ?)\n", "-");
			continue;
		}
		double g = c->tps[0].mean > 0
			       ? 100 * (c->tps[1].mean - c->tps[0].mean) /
				     c->tps[0].mean
			       : NAN;
		printf("%5llu %7llu  %9.1f %8.1f %10.3f  %9.1f %8.1f %10.3f  "
		       "%+6.1f%%  (%c %c)\n",
		       (unsigned long long)c->scale,
		       (unsigned long long)c->clients, c->tps[0].mean,
		       c->tps[0].stddev, c->lat[0].mean, c->tps[1].mean,
		       c->tps[1].stddev, c->lat[1].mean, g,
		       fk_stats_compare(&c->tps[0], &c->tps[1], NULL),
		       fk_stats_compare(&c->lat[0], &c->lat[1], NULL));
	}
	printf("\n(+ / - / 0 / ?: B against A beyond 2*sqrt(sA^2/nA + "
	       "sB^2/nB), see 'flushkit compare')\n");
}

/*
 * The bench tpcb options the series sets itself for every run, with the
 * series option that says what they say.  One of them in --config-a or
 * --config-b would silently make that side run another shape (its
 * clients, its duration) than the cell says, or re-initialize or
 * redirect its data or results: refused.
 */
static const struct {
	const char *tpcb, *series;
} owned[] = {
    {"initialize", "each data directory is initialized by the series"},
    {"scale", "--scales"},
    {"client", "--clients"},
    {"time", "--time"},
    {"transactions", "--time (every run lasts --time seconds)"},
    {"progress", "the series runs with -P 1"},
    {"data-dir", "--data-dir"},
    {"results", "--results"},
    {"no-results", "--results (the series reads each run's result file)"},
    {"help", "flushkit bench tpcb --help"},
};

/* Each word of @cfg that sets an option the series owns: a message
 * naming it.  Returns how many. */
static int series_owned_options(const struct config *cfg)
{
	int bad = 0;
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < cfg[k].argc; j++) {
			const char *names[8];
			int n = tpcb_option_names(cfg[k].argv[j], names, 8);
			for (int i = 0; i < n; i++)
				for (size_t o = 0;
				     o < sizeof(owned) / sizeof(owned[0]); o++)
					if (!strcmp(names[i], owned[o].tpcb)) {
						fprintf(
						    stderr,
						    "flushkit bench series: "
						    "--config-%s: '%s' "
						    "(--%s) is set by "
						    "the series: %s\n",
						    cfg[k].name, cfg[k].argv[j],
						    names[i], owned[o].series);
						bad++;
					}
		}
	return bad;
}

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: flushkit bench series [OPTIONS]\n\n"
	       "Run bench tpcb over scales x client counts for two "
	       "configurations, each\ncell --runs times, alternating the "
	       "configurations; write DIR/series.csv,\nDIR/series-stats.csv "
	       "and DIR/index.html.\n\n"
	       "  --scales=LIST       scales (default 1,5)\n"
	       "  --clients=LIST      client counts (default 1,4,8)\n"
	       "  -T, --time=S        seconds per run (default 60)\n"
	       "  --runs=N            runs per cell and configuration "
	       "(default 3)\n"
	       "  --config-a=ARGS     bench tpcb options of A (default "
	       "\"--flush=naive\")\n"
	       "  --config-b=ARGS     bench tpcb options of B (default "
	       "\"--flush=smooth\")\n"
	       "                      split on blanks, no quoting, no shell;\n"
	       "                      not -i, -s, -c, -T, -t, -P, --data-dir,\n"
	       "                      --results: the series sets those\n"
	       "  --results=DIR       output directory (default "
	       "results/series-YYYYMMDD-HHMMSS)\n"
	       "  --data-dir=DIR      data directories go under DIR "
	       "(default RESULTS/data)\n"
	       "  --keep-data         do not remove the data directories\n");
}

int cmd_bench_series(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"scales", required_argument, NULL, 'S'},
	    {"clients", required_argument, NULL, 'c'},
	    {"time", required_argument, NULL, 'T'},
	    {"runs", required_argument, NULL, 'r'},
	    {"config-a", required_argument, NULL, 'A'},
	    {"config-b", required_argument, NULL, 'B'},
	    {"results", required_argument, NULL, 'o'},
	    {"data-dir", required_argument, NULL, 'D'},
	    {"keep-data", no_argument, NULL, 'K'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t scales[MAX_LIST], clients[MAX_LIST], dur_s = 60, runs_n = 3;
	int nr_scales = 0, nr_clients = 0, keep = 0, c;
	const char *dir = NULL, *data = NULL;
	struct config cfg[2] = {{"a", "--flush=naive", NULL, {NULL}, 0},
				{"b", "--flush=smooth", NULL, {NULL}, 0}};
	char dirbuf[128], databuf[1200];

	uint64_t dup = 0;
	parse_list("1,5", scales, &nr_scales, &dup);
	parse_list("1,4,8", clients, &nr_clients, &dup);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":T:h", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'S':
			bad = parse_list(optarg, scales, &nr_scales, &dup);
			break;
		case 'c':
			bad = parse_list(optarg, clients, &nr_clients, &dup);
			break;
		case 'T':
			bad = cli_parse_u64(optarg, &dur_s) || !dur_s;
			break;
		case 'r':
			bad = cli_parse_u64(optarg, &runs_n) || !runs_n ||
			      runs_n > 100;
			break;
		case 'A':
			cfg[0].text = optarg;
			break;
		case 'B':
			cfg[1].text = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'D':
			data = optarg;
			break;
		case 'K':
			keep = 1;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("bench series", c, argv, opts);
		}
		if (bad) {
			const char *opt = c == 'T'   ? "--time"
					  : c == 'r' ? "--runs"
					  : c == 'S' ? "--scales"
						     : "--clients";
			if (bad == -EEXIST)
				return cli_bad_value(
				    "bench series", opt, optarg,
				    "%llu is given twice: each cell once",
				    (unsigned long long)dup);
			if (bad == -E2BIG)
				return cli_bad_value(
				    "bench series", opt, optarg,
				    "more than %d values", MAX_LIST);
			if (c == 'S' || c == 'c')
				return cli_bad_value(
				    "bench series", opt, optarg,
				    "a comma-separated list of positive "
				    "integers, no empty element");
			return cli_bad_value("bench series", opt, optarg,
					     c == 'r' ? "1..100"
						      : "a positive number "
							"of seconds");
		}
	}
	if (optind != argc)
		return cli_usage_error("bench series", "extra operand '%s'",
				       argv[optind]);
	for (int k = 0; k < 2; k++)
		if (split_config(&cfg[k])) {
			free(cfg[0].buf);
			free(cfg[1].buf);
			return cli_usage_error("bench series",
					       "--config-%s: too many "
					       "arguments",
					       cfg[k].name);
		}
	for (int k = 0; k < 2; k++)
		for (int j = 0; j < cfg[k].argc; j++)
			if (tpcb_option_known(cfg[k].argv[j])) {
				int e = cli_usage_error(
				    "bench series",
				    "--config-%s: '%s' is not an option of "
				    "bench tpcb (see 'flushkit bench tpcb "
				    "--help')",
				    cfg[k].name, cfg[k].argv[j]);
				free(cfg[0].buf);
				free(cfg[1].buf);
				return e;
			}
	if (series_owned_options(cfg)) {
		free(cfg[0].buf);
		free(cfg[1].buf);
		return cli_usage_try("bench series");
	}
	if ((dir && strlen(dir) > 1024) || (data && strlen(data) > 1024))
		return cli_usage_error("bench series", "--results and "
						       "--data-dir: at most "
						       "1024 bytes");
	if (!dir) {
		results_default_dir("series", dirbuf, sizeof(dirbuf));
		dir = dirbuf;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		cli_error("mkdir '%s': %s", dir, strerror(errno));
		return FK_EXIT_FAILURE;
	}
	if (!data) {
		snprintf(databuf, sizeof(databuf), "%s/data", dir);
		data = databuf;
	}
	if (mkdir(data, 0700) && errno != EEXIST) {
		cli_error("mkdir '%s': %s", data, strerror(errno));
		return FK_EXIT_FAILURE;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	size_t max_runs = (size_t)nr_scales * nr_clients * runs_n * 2;
	struct run *runs = calloc(max_runs, sizeof(*runs));
	struct cell *cells =
	    calloc((size_t)nr_scales * nr_clients, sizeof(*cells));
	size_t nr_runs = 0, nr_cells = 0;
	int failed = 0;
	if (!runs || !cells) {
		cli_error("%s", strerror(ENOMEM));
		free(runs);
		free(cells);
		return FK_EXIT_FAILURE;
	}

	char s_scale[32], s_clients[32], s_dur[32];
	char ddir[2][4096], rdir[4096], logp[4096], logrel[256];
	char *av[MAX_ARGS + 24];
	snprintf(s_dur, sizeof(s_dur), "%llu", (unsigned long long)dur_s);
	for (int si = 0; si < nr_scales && !interrupted; si++) {
		snprintf(s_scale, sizeof(s_scale), "%llu",
			 (unsigned long long)scales[si]);
		int init_ok[2] = {0, 0};
		for (int k = 0; k < 2 && !interrupted; k++) {
			snprintf(ddir[k], sizeof(ddir[k]), "%s/s%s-%s", data,
				 s_scale, cfg[k].name);
			nftw(ddir[k], rm_entry, 16, FTW_DEPTH | FTW_PHYS);
			snprintf(logp, sizeof(logp), "%s/init-s%s-%s.log", dir,
				 s_scale, cfg[k].name);
			for (int with_cfg = 1; with_cfg >= 0; with_cfg--) {
				int n = 0;
				av[n++] = "flushkit";
				av[n++] = "bench";
				av[n++] = "tpcb";
				av[n++] = "-i";
				av[n++] = "-s";
				av[n++] = s_scale;
				av[n++] = "--data-dir";
				av[n++] = ddir[k];
				for (int j = 0; with_cfg && j < cfg[k].argc;
				     j++)
					av[n++] = cfg[k].argv[j];
				av[n] = NULL;
				fprintf(stderr, "series: init scale %s (%s)\n",
					s_scale, cfg[k].name);
				int rc = run_child(av, logp);
				if (rc == 0) {
					init_ok[k] = 1;
					break;
				}
				/* -i refuses run-only options (-R): retry
				 * with the store defaults. */
				if (rc != FK_EXIT_USAGE || !cfg[k].argc)
					break;
			}
			if (!init_ok[k]) {
				cli_error("init of scale %s (%s) failed, see "
					  "'%s'",
					  s_scale, cfg[k].name, logp);
				failed = 1;
			}
		}
		for (int ci = 0; ci < nr_clients && !interrupted; ci++) {
			struct cell *cell = &cells[nr_cells++];
			cell->scale = scales[si];
			cell->clients = clients[ci];
			snprintf(s_clients, sizeof(s_clients), "%llu",
				 (unsigned long long)clients[ci]);
			for (uint64_t r = 0; r < runs_n && !interrupted; r++) {
				for (int o = 0; o < 2 && !interrupted; o++) {
					/* A B, then B A: neither goes
					 * always first. */
					int k = (int)(r & 1) ? 1 - o : o;
					struct run *run = &runs[nr_runs++];
					run->scale = scales[si];
					run->clients = clients[ci];
					run->cfg = k;
					run->nr = (int)r + 1;
					if (!init_ok[k]) {
						snprintf(run->log,
							 sizeof(run->log),
							 "init-s%s-%s.log",
							 s_scale, cfg[k].name);
						continue;
					}
					snprintf(rdir, sizeof(rdir),
						 "%s/s%s-c%s-%s", dir, s_scale,
						 s_clients, cfg[k].name);
					snprintf(logrel, sizeof(logrel),
						 "s%s-c%s-%s/run-%llu.log",
						 s_scale, s_clients,
						 cfg[k].name,
						 (unsigned long long)r + 1);
					snprintf(run->log, sizeof(run->log),
						 "%s", logrel);
					if (mkdir(rdir, 0755) &&
					    errno != EEXIST) {
						cli_error("mkdir '%s': %s",
							  rdir,
							  strerror(errno));
						failed = 1;
						continue;
					}
					snprintf(logp, sizeof(logp), "%s/%s",
						 dir, logrel);
					int n = 0;
					av[n++] = "flushkit";
					av[n++] = "bench";
					av[n++] = "tpcb";
					av[n++] = "-c";
					av[n++] = s_clients;
					av[n++] = "-T";
					av[n++] = s_dur;
					av[n++] = "-P";
					av[n++] = "1";
					av[n++] = "--data-dir";
					av[n++] = ddir[k];
					av[n++] = "--results";
					av[n++] = rdir;
					for (int j = 0; j < cfg[k].argc; j++)
						av[n++] = cfg[k].argv[j];
					av[n] = NULL;
					fprintf(stderr,
						"series: scale %s, %s clients, "
						"%s, run %llu/%llu\n",
						s_scale, s_clients, cfg[k].name,
						(unsigned long long)r + 1,
						(unsigned long long)runs_n);
					char **before = NULL;
					size_t nr_before = 0;
					int le = results_list(rdir, &before,
							      &nr_before);
					int rc = le ? le : run_child(av, logp);
					char res[4096] = "";
					if (rc == 0 &&
					    new_result(rdir, before, nr_before,
						       res, sizeof(res)) &&
					    read_summary(res, &run->tps,
							 &run->lat_max_ms))
						run->ok = 1;
					else {
						cli_error(
						    "run failed (exit %d),"
						    " see '%s'",
						    rc, logp);
						failed = 1;
					}
					results_list_free(before, nr_before);
					/* The result file relative to DIR. */
					size_t dl = strlen(dir);
					if (res[0] && !strncmp(res, dir, dl) &&
					    res[dl] == '/')
						snprintf(run->result,
							 sizeof(run->result),
							 "%s", res + dl + 1);
				}
			}
			cell_stats(runs, nr_runs, cell);
		}
	}
	if (!keep)
		for (int si = 0; si < nr_scales; si++)
			for (int k = 0; k < 2; k++) {
				snprintf(ddir[k], sizeof(ddir[k]),
					 "%s/s%llu-%s", data,
					 (unsigned long long)scales[si],
					 cfg[k].name);
				nftw(ddir[k], rm_entry, 16,
				     FTW_DEPTH | FTW_PHYS);
			}
	if (!keep && data == databuf)
		rmdir(data);

	int err =
	    write_outputs(dir, cfg, runs, nr_runs, cells, nr_cells, dur_s);
	if (err) {
		cli_error("write '%s': %s", dir, strerror(-err));
		failed = 1;
	}
	print_table(cfg, cells, nr_cells);
	fprintf(stderr, "series: %s/series.csv, %s/index.html\n", dir, dir);
	if (interrupted) {
		cli_error("interrupted");
		failed = 1;
	}
	free(runs);
	free(cells);
	free(cfg[0].buf);
	free(cfg[1].buf);
	return failed ? FK_EXIT_FAILURE : FK_EXIT_OK;
}
