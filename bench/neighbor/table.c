// SPDX-License-Identifier: MIT
/*
 * table.c - bench neighbor's table: per configuration the mean and
 * min-max over rounds, and the ratios to plain of the same round.
 */
#include "neighbor.h"

#include <math.h>
#include <string.h>

/* The figures of every run (cmd.c runs them, one_run fills each). */
struct row nb_rows[NR_VICTIMS][NR_NEIGHBORS][NR_CONFIGS][MAX_ROUNDS];

static double metric(const struct row *r, int m)
{
	const double v[NR_METRICS] = {
	    r->tps,   r->p50,	  r->p99,      r->p999,	     r->max,
	    r->stall, r->nb_wall, r->nb_drain, r->dirty_mib, r->wb_mib};
	return v[m];
}

static const char *const metric_names[NR_METRICS] = {
    "tps",   "p50 ms",	  "p99 ms",	  "p99.9 ms",	    "max ms",
    "stall", "nb wall s", "nb drained s", "peak Dirty MiB", "peak WB MiB"};

/* "mean [min-max]" of @v[0..n) into @buf. */
static const char *spread(const double *v, size_t n, int dec, char *buf,
			  size_t len)
{
	double sum = 0, lo = INFINITY, hi = -INFINITY;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i]))
			continue;
		sum += v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
		k++;
	}
	if (!k)
		snprintf(buf, len, "-");
	else if (k == 1)
		snprintf(buf, len, "%.*f", dec, sum);
	else
		snprintf(buf, len, "%.*f [%.*f-%.*f]", dec, sum / (double)k,
			 dec, lo, dec, hi);
	return buf;
}

void nb_print_table(FILE *f, const struct env *env)
{
	const struct opts *op = env->op;
	static const int dec[NR_METRICS] = {1, 2, 2, 2, 2, 3, 1, 1, 0, 0};
	static const int ratio_m[] = {0, 3, 4, 6, 7, 5};
	char b[96], devdesc[256];
	disk_profile_describe(&op->device, devdesc, sizeof(devdesc));
	for (int v = 0; v < NR_VICTIMS; v++) {
		if (!(op->victims & 1u << v))
			continue;
		for (int k = 0; k < NR_NEIGHBORS; k++) {
			if (!(op->neighbors & 1u << k))
				continue;
			fprintf(f,
				"\n### victim %s, neighbour %s (device %s, "
				"%llu round%s: mean [min-max])\n\n| config |",
				nb_victim_names[v], nb_neighbor_names[k],
				devdesc, (unsigned long long)op->rounds,
				op->rounds == 1 ? "" : "s");
			for (int m = 0; m < NR_METRICS; m++)
				fprintf(f, " %s |", metric_names[m]);
			fputs("\n|---|", f);
			for (int m = 0; m < NR_METRICS; m++)
				fputs("---|", f);
			fputc('\n', f);
			for (int c = 0; c < NR_CONFIGS; c++) {
				if (!(op->configs & 1u << c))
					continue;
				fprintf(f, "| %s |", nb_config_names[c]);
				if (env->skip[c]) {
					fprintf(f, " skipped: %s |\n",
						env->skip[c]);
					continue;
				}
				double vals[MAX_ROUNDS];
				for (int m = 0; m < NR_METRICS; m++) {
					size_t n = 0;
					for (unsigned r = 0; r < op->rounds;
					     r++) {
						const struct row *x =
						    &nb_rows[v][k][c][r];
						if (x->done)
							vals[n++] =
							    metric(x, m);
					}
					fprintf(f, " %s |",
						spread(vals, n, dec[m], b,
						       sizeof(b)));
				}
				fputc('\n', f);
			}
			/* no configuration besides plain ran: no ratio
			 * table (a header without rows) */
			int others = 0;
			for (int c = 1; c < NR_CONFIGS; c++)
				if ((op->configs & 1u << c) && !env->skip[c])
					others++;
			if (!others) {
				fputs("\nno ratio to plain: no other "
				      "configuration ran\n",
				      f);
				continue;
			}
			fputs("\nratio to plain in the same round:\n\n| "
			      "config |",
			      f);
			for (size_t m = 0; m < sizeof(ratio_m) / sizeof(int);
			     m++)
				fprintf(f, " %s |", metric_names[ratio_m[m]]);
			fputs("\n|---|", f);
			for (size_t m = 0; m < sizeof(ratio_m) / sizeof(int);
			     m++)
				fputs("---|", f);
			fputc('\n', f);
			for (int c = 1; c < NR_CONFIGS; c++) {
				if (!(op->configs & 1u << c) || env->skip[c])
					continue;
				fprintf(f, "| %s/plain |", nb_config_names[c]);
				for (size_t m = 0;
				     m < sizeof(ratio_m) / sizeof(int); m++) {
					double vals[MAX_ROUNDS];
					size_t n = 0;
					for (unsigned r = 0; r < op->rounds;
					     r++) {
						const struct row *x =
						    &nb_rows[v][k][c][r];
						const struct row *p =
						    &nb_rows[v][k][C_PLAIN][r];
						/* a 0 of plain (a stall
						 * ratio): no ratio */
						if (x->done && p->done &&
						    metric(p, ratio_m[m]) > 0)
							vals[n++] =
							    metric(x,
								   ratio_m[m]) /
							    metric(p,
								   ratio_m[m]);
					}
					fprintf(
					    f, " %s |",
					    spread(vals, n, 2, b, sizeof(b)));
				}
				fputc('\n', f);
			}
		}
	}
}
