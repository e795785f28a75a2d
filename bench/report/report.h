/* SPDX-License-Identifier: MIT */
/*
 * report.h - "flushkit report"'s own header: one run as the report sees
 * it, the plots drawn, and the routines its files share.  The files, by
 * step (the command itself: cmd.c's banner; docs/report.md):
 *   cmd.c     the command: options, operands, reading each result, the
 *             steps in order
 *   page.c    DIR/index.html: summary table, figures, each run's details
 *   plot.c    DIR/plots.gp, the terminal, running gnuplot
 *   labels.c  each run's label and colour; the sanitizing of strings
 *   data.c    DIR/data/rN-*.dat, and the file helpers the others write with
 * Calls go down this list, never up (t-layers.sh).
 */
#ifndef FK_REPORT_H
#define FK_REPORT_H

#include "reader.h"

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

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

/* What write_script drew, for the page. */
struct plot_set {
	int tps, latency, dirty, io, scatter;
	const char *ext;
	int bg_thresh_shown;  /* the line is on the Dirty plot */
	double bg_thresh_mib; /* NAN if unknown */
};

/* page.c */
int report_write_html(int dfd, const struct run *runs, size_t nr,
		      const struct plot_set *ps, const char *gp_note);

/* plot.c */
int report_write_script(int dfd, const struct run *runs, size_t nr,
			const char *terminal, struct plot_set *ps);
int report_run_gnuplot(const char *dir, const char *script);
const char *report_pick_terminal(int dfd, const char *dir, int want_svg,
				 const char **ext);

/* labels.c */
void report_make_labels(struct run *runs, size_t nr);
void report_sanitize(char *s);
int report_label_worthy(const char *key);
const char *report_value_text(struct json_object *v, char *buf, size_t len);

/* data.c */
int report_write_data(struct run *r, int ddfd, size_t i);
int report_write_file_at(int dfd, const char *name, FILE **out);
int report_close_file(FILE *f);

#endif
