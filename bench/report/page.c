// SPDX-License-Identifier: MIT
/*
 * report/page.c - DIR/index.html: the plots, the summary table and each
 * run's settings, environment and checkpoints.  Nothing on the page
 * refers to the network.
 */
#include "cli.h"
#include "html.h"
#include "report.h"
#include "results.h"

#include <math.h>
#include <string.h>
#include <time.h>

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
		if (!report_label_worthy(key) || !val ||
		    json_object_is_type(val, json_type_object) ||
		    json_object_is_type(val, json_type_array))
			continue;
		char a[128], b[128];
		report_value_text(val, a, sizeof(a));
		int same = 1;
		for (size_t j = 1; j < nr && same; j++) {
			struct json_object *vj = NULL;
			if (runs[j].d.settings)
				json_object_object_get_ex(runs[j].d.settings,
							  key, &vj);
			same = !strcmp(a, report_value_text(vj, b, sizeof(b)));
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
			report_sanitize(sio);
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
		html_text(f, report_value_text(val, buf, sizeof(buf)));
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

int report_write_html(int dfd, const struct run *runs, size_t nr,
		      const struct plot_set *ps, const char *gp_note)
{
	FILE *f;
	int e = report_write_file_at(dfd, "index.html", &f);
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
	return report_close_file(f);
}
