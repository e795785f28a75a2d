// SPDX-License-Identifier: MIT
/*
 * table.c - bench fsmark's output: fs_mark's table (its header, one line
 * per loop, the spread over loops) and the same as JSON.
 */
#include "cli-sys.h"
#include "cli.h"
#include "fsmark.h"

#include <math.h>
#include <string.h>
#include <sys/statfs.h>

/* ---- output ---- */

void fsm_jint(json_object *o, const char *key, int64_t v)
{
	json_object_object_add(o, key, json_object_new_int64(v));
}

void fsm_jdbl(json_object *o, const char *key, double v)
{
	json_object_object_add(o, key, results_json_double(v, 3));
}

void fsm_jstr(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static json_object *lat_json(const struct lat *l)
{
	json_object *o = json_object_new_object();
	fsm_jint(o, "count", (int64_t)l->n);
	fsm_jint(o, "min_us", (int64_t)(l->min_ns / 1000));
	fsm_jint(o, "avg_us", l->n ? (int64_t)(l->sum_ns / l->n / 1000) : 0);
	fsm_jint(o, "max_us", (int64_t)(l->max_ns / 1000));
	return o;
}

/* Min, average or max (@which 0, 1, 2) of @l in microseconds. */
static unsigned long long lat_us(const struct lat *l, int which)
{
	if (which == 0)
		return l->min_ns / 1000;
	if (which == 2)
		return l->max_ns / 1000;
	return l->n ? l->sum_ns / l->n / 1000 : 0;
}

/* One row of fs_mark's table, or one object of the JSON "loops". */
void fsm_emit_row(const struct fsm *f, unsigned use_pct, uint64_t count,
		  double fps, double secs, uint64_t overhead_ns,
		  const struct lat *lat, json_object *jloops)
{
	if (f->json) {
		json_object *o = json_object_new_object();
		fsm_jint(o, "fs_use_pct", use_pct);
		fsm_jint(o, "count", (int64_t)count);
		fsm_jint(o, "size", (int64_t)f->size);
		fsm_jdbl(o, "files_per_sec", fps);
		fsm_jint(o, "app_overhead_us", (int64_t)(overhead_ns / 1000));
		fsm_jdbl(o, "seconds", secs);
		for (int l = 0; l < NR_LAT; l++) {
			char key[16];
			snprintf(key, sizeof(key), "%s", fsm_lat_name[l]);
			for (char *p = key; *p; p++)
				*p = (char)(*p - 'A' + 'a');
			json_object_object_add(o, key, lat_json(&lat[l]));
		}
		json_object_array_add(jloops, o);
		return;
	}
	for (FILE *o = stdout; o; o = o == stdout ? f->log : NULL) {
		fprintf(o, "%6u%13llu%13llu%13.1f%17llu", use_pct,
			(unsigned long long)count, (unsigned long long)f->size,
			fps, (unsigned long long)(overhead_ns / 1000));
		for (int l = 0; f->verbose && l < NR_LAT; l++)
			fprintf(o, "%9llu%9llu%9llu", lat_us(&lat[l], 0),
				lat_us(&lat[l], 1), lat_us(&lat[l], 2));
		fprintf(o, "\n");
		fflush(o);
	}
}

/* -L: the run-to-run spread of Files/sec over the loops. */
void fsm_print_spread(const struct fsm *f, const double *fps, unsigned n)
{
	if (n < 2)
		return;
	double sum = 0, sq = 0, lo = fps[0], hi = fps[0];
	for (unsigned i = 0; i < n; i++) {
		sum += fps[i];
		sq += fps[i] * fps[i];
		lo = fps[i] < lo ? fps[i] : lo;
		hi = fps[i] > hi ? fps[i] : hi;
	}
	double avg = sum / n, var = (sq - n * avg * avg) / (n - 1);
	double sd = var > 0 ? sqrt(var) : 0;
	for (FILE *o = stdout; o; o = o == stdout ? f->log : NULL)
		fprintf(o,
			"\n# Files/sec over %u loops: avg %.1f, stddev %.1f "
			"(%.1f%%), min %.1f, max %.1f\n",
			n, avg, sd, avg > 0 ? 100.0 * sd / avg : 0.0, lo, hi);
}

static void print_header_to(FILE *out, const struct fsm *f, int argc,
			    char **argv, const char *backend);

void fsm_print_header(const struct fsm *f, int argc, char **argv,
		      const char *backend)
{
	print_header_to(stdout, f, argc, argv, backend);
	if (f->log)
		print_header_to(f->log, f, argc, argv, backend);
}

/* The header of fs_mark's table, on @out. */
static void print_header_to(FILE *out, const struct fsm *f, int argc,
			    char **argv, const char *backend)
{
#define printf(...) fprintf(out, __VA_ARGS__)
	printf("\n# ");
	for (int i = 0; i < argc; i++)
		printf(" %s", i == 0 ? "flushkit bench fsmark" : argv[i]);
	printf("\n#\tflushkit %s, %u thread(s)\n", fk_version(), f->threads);
	printf("#\tSync method: %s\n", fsm_method_desc[f->method]);
	if (f->method >= M_BATCH)
		printf("#\tSync io: %s, %u jobs (fsyncs in flight) per "
		       "thread\n",
		       backend, f->bopts.queue_depth);
	if (f->subdirs)
		printf("#\tDirectories:  %s across %u subdirectories with %u "
		       "%s.\n",
		       f->per_subdir ? "Round Robin between directories"
				     : "Time based hash between directories",
		       f->subdirs,
		       f->per_subdir ? f->per_subdir : FSM_SECS_PER_SUBDIR,
		       f->per_subdir ? "files per subdirectory"
				     : "seconds per subdirectory");
	else
		printf("#\tDirectories:  no subdirectories used\n");
	printf("#\tFile names: %u bytes long, (%u initial bytes of time stamp "
	       "with %u random bytes at end of name)\n",
	       f->name_len, f->name_len - f->rand_len, f->rand_len);
	printf("#\tFiles info: size %llu bytes, written with an IO size of "
	       "%llu bytes per write\n",
	       (unsigned long long)f->size, (unsigned long long)f->write_size);
	printf("#\tApp overhead is time in microseconds spent in the test not "
	       "doing file writing related system calls.\n");
	if (f->verbose)
		printf("#\tAll system call times are reported in "
		       "microseconds.\n");
	printf("\n%6s%13s%13s%13s%17s", "FSUse%", "Count", "Size", "Files/sec",
	       "App Overhead");
	if (f->verbose) {
		for (int l = 0; l < NR_LAT; l++) {
			char h[32];
			snprintf(h, sizeof(h), "%s (Min/Avg/Max)",
				 fsm_lat_name[l]);
			printf("%27s", h);
		}
	}
	printf("\n");
	fflush(out);
#undef printf
}
