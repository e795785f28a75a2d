// SPDX-License-Identifier: MIT
/*
 * report/plot.c - DIR/plots.gp, the gnuplot script (every string put
 * into it is ours or sanitized: labels.c), the terminal this gnuplot
 * has, and running gnuplot (fork + execvp, cwd DIR, no shell).
 */
#include "child.h"
#include "report.h"
#include "results.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

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

int report_write_script(int dfd, const struct run *runs, size_t nr,
			const char *terminal, struct plot_set *ps)
{
	FILE *g;
	int e = report_write_file_at(dfd, "plots.gp", &g);
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
	return report_close_file(g);
}

/* Run gnuplot SCRIPT in directory @dir, its output in DIR/gnuplot.log.
 * Returns the exit status, or -errno if it could not run. */
int report_run_gnuplot(const char *dir, const char *script)
{
	char *argv[] = {"gnuplot", (char *)script, NULL};
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT,
			       .cwd = dir,
			       .out_path = "gnuplot.log"};
	return child_run("gnuplot", argv, &o);
}

/* The best terminal this gnuplot has: pngcairo, png, or svg. */
const char *report_pick_terminal(int dfd, const char *dir, int want_svg,
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
		if (report_write_file_at(dfd, "probe.gp", &f))
			break;
		fprintf(f, "%s\n", terms[i].set);
		if (report_close_file(f))
			break;
		int r = report_run_gnuplot(dir, "probe.gp");
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
