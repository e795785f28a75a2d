// SPDX-License-Identifier: MIT
/*
 * report/data.c - the data files of DIR/data/: each run's progress,
 * monitor and checkpoint series and its latency scatter (from
 * pgbench-format per-transaction logs), whitespace-separated for
 * gnuplot; and the file helpers the other steps write with.
 */
#include "cli.h"
#include "report.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

int report_write_file_at(int dfd, const char *name, FILE **out)
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

int report_close_file(FILE *f)
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
			int e = report_write_file_at(ddfd, name, &out);
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
			int e = report_close_file(out);
			if (e)
				return e;
		}
	}
	r->has_scatter = total > 0;
	return 0;
}

int report_write_data(struct run *r, int ddfd, size_t i)
{
	char name[64];
	FILE *f;
	int e;
	if (r->d.nr_prog) {
		snprintf(name, sizeof(name), "r%zu-progress.dat", i + 1);
		if ((e = report_write_file_at(ddfd, name, &f)))
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
		if ((e = report_close_file(f)))
			return e;
	}
	if (r->d.nr_mon) {
		snprintf(name, sizeof(name), "r%zu-monitor.dat", i + 1);
		if ((e = report_write_file_at(ddfd, name, &f)))
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
		if ((e = report_close_file(f)))
			return e;
	}
	if (r->d.nr_ck) {
		snprintf(name, sizeof(name), "r%zu-checkpoints.dat", i + 1);
		if ((e = report_write_file_at(ddfd, name, &f)))
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
		if ((e = report_close_file(f)))
			return e;
	}
	return write_scatter(r, ddfd, i);
}
