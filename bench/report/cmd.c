// SPDX-License-Identifier: MIT
/*
 * report/cmd.c - "flushkit report RESULT... -o DIR": one static HTML page
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
 *
 * This file: the options, the operands (a directory stands for its
 * *.jsonl), reading each result, and the steps in order (report.h names
 * the files of each step).
 */
#include "cli.h"
#include "report.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	report_sanitize(r->d.dev); /* goes into the script */
	return 0;
}

static void free_run(struct run *r)
{
	result_run_release(&r->d);
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
	report_make_labels(runs, nr);

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
		e = report_write_data(&runs[i], ddfd, i);
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
	const char *term = report_pick_terminal(dfd, out, svg, &ext);
	ps.ext = ext;
	if (!term) {
		note = "gnuplot was not found or has no png/svg terminal "
		       "(Debian: apt-get install gnuplot-nox).";
		cli_warn("%s", note);
	} else if ((e = report_write_script(dfd, runs, nr, term, &ps))) {
		cli_error("write '%s/plots.gp': %s", out, strerror(-e));
		ret = FK_EXIT_FAILURE;
	} else {
		int r = report_run_gnuplot(out, "plots.gp");
		if (r) {
			cli_error(
			    "gnuplot failed (exit %d); see '%s/gnuplot.log'", r,
			    out);
			note = "gnuplot failed; see gnuplot.log.";
			ret = FK_EXIT_FAILURE;
		}
	}
	e = report_write_html(dfd, runs, nr, &ps, note);
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
