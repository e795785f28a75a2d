// SPDX-License-Identifier: MIT
/*
 * cmd-monitor.c - "flushkit monitor": watch Dirty, Writeback and the
 * block-layer counts of the disks under some paths, until interrupted or
 * until a command exits, then print a blktrace-like summary.
 *
 *   flushkit monitor [--interval MS] [--csv|--json|--prometheus[=FILE]]
 *                    [--path P]... [-- COMMAND ARGS]
 *
 * Samples go to stdout: a table (the default, on a terminal and on a
 * pipe alike, as iostat and vmstat), CSV, JSON lines
 * ({"type":"monitor",...}, the result-file schema of docs/report.md, with
 * the wall clock and each disk's %util and write await added), or the
 * Prometheus text exposition format.  --prometheus=FILE instead rewrites
 * FILE (temp file + rename, as node_exporter's textfile collector wants)
 * at every sample, and stdout keeps the table.  The summary goes to
 * stdout after a table, as a final {"type":"summary"} line with --json,
 * and to stderr with --csv and --prometheus (so stdout stays one table,
 * or scrapeable).
 *
 * Per interval, as iostat -x: %util = io_ticks (ms the disk had I/O in
 * flight) / interval, w_await = write_ticks / writes completed.
 *
 * COMMAND is started with fork + execvp of the given argv (no shell).
 * Signals: SIGINT, SIGTERM and SIGCHLD are blocked and taken with
 * sigtimedwait, which also times the samples.  Without a command,
 * SIGINT/SIGTERM end the run (exit 0).  With one, SIGTERM and a SIGINT
 * sent with kill(1) are forwarded to it (a terminal's ^C reaches it
 * directly), and the run ends when it exits: its exit status is passed
 * on, 128+N if signal N killed it.
 */
#include "child.h"
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_PROM };

struct summary {
	uint64_t peak_dirty_kb, peak_writeback_kb;
	double writeback_nonzero_s;
	size_t samples;
};

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: flushkit monitor [--interval MS] "
	       "[--csv|--json|--prometheus[=FILE]]\n"
	       "                        [--path P]... [-- COMMAND ARGS]\n"
	       "       flushkit monitor [OPTIONS] INTERVAL [COUNT]\n\n"
	       "Sample Dirty and Writeback (/proc/meminfo), the dirty "
	       "thresholds (/proc/vmstat)\nand the block-layer counts "
	       "(/sys/block/DEV/stat) of the disks under each\npath, until "
	       "interrupted or until COMMAND exits; then print a summary.\n\n"
	       "  -i, --interval MS   sample every MS milliseconds (default "
	       "1000, min 100;\n"
	       "                      a suffix is allowed: 2s, 500ms)\n"
	       "      --csv           samples as CSV (summary on stderr)\n"
	       "      --json          samples and summary as JSON lines\n"
	       "      --prometheus    samples in Prometheus' text format "
	       "(summary on stderr)\n"
	       "      --prometheus=FILE\n"
	       "                      rewrite FILE in that format at every "
	       "sample (for\n"
	       "                      node_exporter's textfile collector); "
	       "stdout keeps\n"
	       "                      the table\n"
	       "The default output, on a terminal or not, is a table: wall "
	       "clock (UTC),\nDirty and Writeback, and for each disk "
	       "writes/s, merged writes/s, MB/s\nwritten, write await (ms), "
	       "flushes/s, requests in flight and %%util.\n\n"
	       "  INTERVAL [COUNT]    as iostat: sample every INTERVAL seconds "
	       "(0.1 or more),\n"
	       "                      COUNT times (default: until "
	       "interrupted)\n"
	       "  -p, --path P        watch the disks under P (repeatable; "
	       "default .)\n"
	       "  -h, --help          this help\n\n"
	       "Exit status: COMMAND's (128+N if killed by signal N), else 0;"
	       "\n1 on failure, 2 on usage errors.\n");
}

/* Digits with an optional fraction: an INTERVAL or COUNT operand. */
static int is_number(const char *s)
{
	int digits = 0;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digits = 1;
		else if (*s != '.')
			return 0;
	}
	return digits;
}

static int parse_interval(const char *s, uint64_t *ms)
{
	if (!cli_parse_u64(s, ms))
		return 0;
	return cli_parse_duration_ms(s, ms);
}

/* CSV header or row from the JSON sample: memory columns, then each
 * disk's counters prefixed with its name ("vda_write_ios"). */
static const char *mem_keys[] = {
    "t_s",
    "interval_s",
    "dirty_kb",
    "writeback_kb",
    "cached_kb",
    "mem_available_kb",
    "dirty_threshold_kb",
    "dirty_background_threshold_kb",
    "epoch_s",
    "time",
};

static void print_csv(struct json_object *o, int header)
{
	int col = 0;
	for (size_t i = 0; i < sizeof(mem_keys) / sizeof(mem_keys[0]); i++) {
		struct json_object *v;
		if (!json_object_object_get_ex(o, mem_keys[i], &v))
			continue;
		if (col++)
			putchar(',');
		if (header)
			fputs(mem_keys[i], stdout);
		else if (json_object_is_type(v, json_type_string))
			fputs(json_object_get_string(v), stdout);
		else if (json_object_is_type(v, json_type_double))
			printf("%.3f", json_object_get_double(v));
		else
			printf("%lld", (long long)json_object_get_int64(v));
	}
	struct json_object *devs;
	if (json_object_object_get_ex(o, "devices", &devs)) {
		for (size_t d = 0; d < json_object_array_length(devs); d++) {
			struct json_object *dj = json_object_array_get_idx(devs,
									   d),
					   *nm;
			json_object_object_get_ex(dj, "name", &nm);
			json_object_object_foreach(dj, key, val)
			{
				if (!strcmp(key, "name") ||
				    !strcmp(key, "backing_of"))
					continue;
				putchar(',');
				if (header)
					printf("%s_%s",
					       json_object_get_string(nm), key);
				else if (json_object_is_type(val,
							     json_type_double))
					printf("%.3f",
					       json_object_get_double(val));
				else
					printf("%lld",
					       (long long)json_object_get_int64(
						   val));
			}
		}
	}
	putchar('\n');
}

static int64_t geti(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v)
						     : 0;
}

static double getd(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v)
						     : 0;
}

/* The wall clock of a sample as ISO 8601 UTC with milliseconds
 * ("2026-12-01T10:30:01.123Z"). */
static void iso8601(uint64_t realtime_ns, char *buf, size_t len)
{
	time_t sec = (time_t)(realtime_ns / 1000000000ull);
	unsigned ms = (unsigned)(realtime_ns % 1000000000ull / 1000000ull);
	struct tm tm;
	gmtime_r(&sec, &tm);
	size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03uZ", ms);
}

/* What a monitor sample adds to the result-file sample: the wall clock,
 * and for each disk iostat -x's %util and write await of the interval
 * (0 for the first sample, whose interval is 0). */
static void decorate(struct json_object *o, const struct fk_monitor_sample *s)
{
	char when[40];
	iso8601(s->realtime_ns, when, sizeof(when));
	json_object_object_add(
	    o, "epoch_s", results_json_double((double)s->realtime_ns / 1e9, 3));
	json_object_object_add(o, "time", json_object_new_string(when));
	double iv_ms = getd(o, "interval_s") * 1000.0;
	struct json_object *devs;
	if (!json_object_object_get_ex(o, "devices", &devs))
		return;
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		int64_t ios = geti(d, "write_ios");
		double util =
		    iv_ms > 0 ? 100.0 * (double)geti(d, "io_ticks_ms") / iv_ms
			      : 0;
		if (util > 100.0) /* io_ticks is jiffy-granular */
			util = 100.0;
		json_object_object_add(d, "util_pct",
				       results_json_double(util, 1));
		json_object_object_add(
		    d, "w_await_ms",
		    results_json_double(
			ios ? (double)geti(d, "write_ticks_ms") / (double)ios
			    : 0,
			3));
	}
}

static void print_table(struct json_object *o, size_t line)
{
	struct json_object *devs = NULL;
	json_object_object_get_ex(o, "devices", &devs);
	size_t nr = devs ? json_object_array_length(devs) : 0;
	if (line % 20 == 0) {
		printf("%-24s %8s %10s %10s", "time", "t_s", "Dirty_KiB",
		       "Wback_KiB");
		if (nr)
			printf("  %-8s %8s %7s %8s %8s %7s %5s %6s", "disk",
			       "w/s", "wmrg/s", "wMB/s", "w_await", "flush/s",
			       "infl", "%util");
		putchar('\n');
	}
	struct json_object *tv;
	json_object_object_get_ex(o, "time", &tv);
	printf("%-24s %8.1f %10lld %10lld",
	       tv ? json_object_get_string(tv) : "", getd(o, "t_s"),
	       (long long)geti(o, "dirty_kb"),
	       (long long)geti(o, "writeback_kb"));
	double iv = getd(o, "interval_s");
	for (size_t i = 0; i < nr; i++) {
		struct json_object *d = json_object_array_get_idx(devs, i), *nm;
		json_object_object_get_ex(d, "name", &nm);
		if (i)
			printf("\n%-24s %8s %10s %10s", "", "", "", "");
		printf("  %-8s", json_object_get_string(nm));
		if (iv > 0) {
			int64_t ios = geti(d, "write_ios");
			printf(" %8.1f %7.1f %8.2f", (double)ios / iv,
			       (double)geti(d, "write_merges") / iv,
			       (double)geti(d, "write_kb") / 1024.0 / iv);
			if (ios)
				printf(" %8.2f", getd(d, "w_await_ms"));
			else
				printf(" %8s", "-");
			if (json_object_object_get_ex(d, "flush_ios", NULL))
				printf(" %7.1f",
				       (double)geti(d, "flush_ios") / iv);
			else
				printf(" %7s", "n/a");
			printf(" %5lld %6.1f", (long long)geti(d, "in_flight"),
			       getd(d, "util_pct"));
		} else {
			printf(" %8s %7s %8s %8s %7s %5lld %6s", "-", "-", "-",
			       "-", "-", (long long)geti(d, "in_flight"), "-");
		}
	}
	putchar('\n');
	fflush(stdout);
}

/* ---- Prometheus text exposition format (version 0.0.4) ----
 * Gauges from /proc/meminfo and /proc/vmstat in bytes; each disk's
 * /sys/block/DEV/stat as cumulative counters named as node_exporter's
 * node_disk_* (so dashboards carry over), labelled device="DEV". */

static void prom_family(FILE *f, const char *name, const char *type,
			const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
}

static void print_prom(FILE *f, struct fk_monitor *m,
		       const struct fk_monitor_sample *s)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char when[40];
	iso8601(s->realtime_ns, when, sizeof(when));
	fprintf(f, "# flushkit monitor sample at %s\n", when);
	static const struct {
		const char *name, *help;
		size_t off;
		int pages;
	} mem[] = {
	    {"flushkit_dirty_bytes", "Dirty page cache (/proc/meminfo Dirty).",
	     offsetof(struct fk_monitor_sample, mem.dirty_kb), 0},
	    {"flushkit_writeback_bytes",
	     "Page cache under writeback (/proc/meminfo Writeback).",
	     offsetof(struct fk_monitor_sample, mem.writeback_kb), 0},
	    {"flushkit_cached_bytes", "Page cache (/proc/meminfo Cached).",
	     offsetof(struct fk_monitor_sample, mem.cached_kb), 0},
	    {"flushkit_mem_available_bytes",
	     "Memory available (/proc/meminfo MemAvailable).",
	     offsetof(struct fk_monitor_sample, mem.mem_available_kb), 0},
	    {"flushkit_dirty_threshold_bytes",
	     "Dirty data at which writers are throttled "
	     "(/proc/vmstat nr_dirty_threshold).",
	     offsetof(struct fk_monitor_sample, vm.nr_dirty_threshold), 1},
	    {"flushkit_dirty_background_threshold_bytes",
	     "Dirty data at which background writeback starts "
	     "(/proc/vmstat nr_dirty_background_threshold).",
	     offsetof(struct fk_monitor_sample,
		      vm.nr_dirty_background_threshold),
	     1},
	};
	for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
		uint64_t v;
		memcpy(&v, (const char *)s + mem[i].off, sizeof(v));
		prom_family(f, mem[i].name, "gauge", mem[i].help);
		fprintf(
		    f, "%s %llu\n", mem[i].name,
		    (unsigned long long)(mem[i].pages ? v * page : v * 1024));
	}
	static const struct {
		const char *name, *type, *help;
		size_t off;
		double scale; /* to the unit in the name */
		int need17;   /* flush counts: kernel >= 5.5 */
	} dev[] = {
	    {"flushkit_disk_writes_completed_total", "counter",
	     "Writes completed.", offsetof(struct fk_blkstat, write_ios), 1, 0},
	    {"flushkit_disk_writes_merged_total", "counter",
	     "Writes merged before they were issued.",
	     offsetof(struct fk_blkstat, write_merges), 1, 0},
	    {"flushkit_disk_written_bytes_total", "counter", "Bytes written.",
	     offsetof(struct fk_blkstat, write_sectors), 512, 0},
	    {"flushkit_disk_write_time_seconds_total", "counter",
	     "Time spent by writes (sum over requests).",
	     offsetof(struct fk_blkstat, write_ticks_ms), 0.001, 0},
	    {"flushkit_disk_reads_completed_total", "counter",
	     "Reads completed.", offsetof(struct fk_blkstat, read_ios), 1, 0},
	    {"flushkit_disk_read_bytes_total", "counter", "Bytes read.",
	     offsetof(struct fk_blkstat, read_sectors), 512, 0},
	    {"flushkit_disk_flush_requests_total", "counter",
	     "Flush (cache flush) requests completed.",
	     offsetof(struct fk_blkstat, flush_ios), 1, 1},
	    {"flushkit_disk_io_now", "gauge", "Requests in flight.",
	     offsetof(struct fk_blkstat, in_flight), 1, 0},
	    {"flushkit_disk_io_time_seconds_total", "counter",
	     "Time the disk had requests in flight (%util is its rate).",
	     offsetof(struct fk_blkstat, io_ticks_ms), 0.001, 0},
	};
	if (!s->nr_devices)
		return;
	for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++) {
		int header = 0;
		for (size_t d = 0; d < s->nr_devices; d++) {
			const struct fk_blkstat *b = &s->dev[d];
			if (dev[i].need17 && b->nr_fields < 17)
				continue;
			if (!header++)
				prom_family(f, dev[i].name, dev[i].type,
					    dev[i].help);
			uint64_t v;
			memcpy(&v, (const char *)b + dev[i].off, sizeof(v));
			fprintf(f, "%s{device=\"", dev[i].name);
			prom_label(f, fk_monitor_device(m, d)->name);
			if (dev[i].scale == 1)
				fprintf(f, "\"} %llu\n", (unsigned long long)v);
			else if (dev[i].scale > 1)
				fprintf(f, "\"} %.0f\n",
					(double)v * dev[i].scale);
			else
				fprintf(f, "\"} %.3f\n",
					(double)v * dev[i].scale);
		}
	}
}

/* --prometheus=FILE: its directory, held open, and the name in it. */
struct prom_file {
	int dirfd;
	const char *path, *base;
	char tmp[256];
	int warned;
};

static int prom_file_open(struct prom_file *p, const char *path)
{
	const char *slash = strrchr(path, '/');
	p->path = path;
	p->base = slash ? slash + 1 : path;
	p->warned = 0;
	if (!*p->base || strlen(p->base) + 6 > sizeof(p->tmp)) {
		cli_error("--prometheus: '%s' is not a file name", path);
		return -EINVAL;
	}
	snprintf(p->tmp, sizeof(p->tmp), ".%s.tmp", p->base);
	char dir[4096];
	if (slash) {
		size_t n = (size_t)(slash - path);
		if (n >= sizeof(dir)) {
			cli_error("--prometheus: '%s': name too long", path);
			return -ENAMETOOLONG;
		}
		memcpy(dir, path, n);
		dir[n ? n : 1] = 0;
		if (!n)
			dir[0] = '/';
	} else {
		strcpy(dir, ".");
	}
	p->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0) {
		int e = errno;
		cli_error("--prometheus: open directory '%s': %s", dir,
			  strerror(e));
		return -e;
	}
	return 0;
}

/* Write the sample to a temp file beside FILE and rename it over FILE,
 * so a scraper never reads half a sample.  The new file gets the mode
 * of the one it replaces, 0600 if there is none.  Returns 0 or -errno. */
static int prom_file_write(struct prom_file *p, struct fk_monitor *m,
			   const struct fk_monitor_sample *s)
{
	struct stat st;
	mode_t mode = 0600;
	if (fstatat(p->dirfd, p->base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode))
		mode = st.st_mode & 07777;
	int fd =
	    openat(p->dirfd, p->tmp,
		   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	fchmod(fd, mode); /* the umask must not narrow a kept mode */
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		unlinkat(p->dirfd, p->tmp, 0);
		return -e;
	}
	print_prom(f, m, s);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		int e = errno ? errno : EIO;
		unlinkat(p->dirfd, p->tmp, 0);
		return -e;
	}
	if (renameat(p->dirfd, p->tmp, p->dirfd, p->base)) {
		int e = errno;
		unlinkat(p->dirfd, p->tmp, 0);
		return -e;
	}
	return 0;
}

/* The blktrace-like summary of each disk between the first and last
 * sample. */
static struct json_object *summary_json(struct fk_monitor *m,
					const struct fk_monitor_sample *a,
					const struct fk_monitor_sample *b,
					const struct summary *sum)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(
	    o, "duration_s",
	    results_json_double((double)(b->time_ns - a->time_ns) / 1e9, 3));
	json_object_object_add(o, "samples",
			       json_object_new_int64((int64_t)sum->samples));
	json_object_object_add(
	    o, "peak_dirty_kb",
	    json_object_new_int64((int64_t)sum->peak_dirty_kb));
	json_object_object_add(
	    o, "peak_writeback_kb",
	    json_object_new_int64((int64_t)sum->peak_writeback_kb));
	json_object_object_add(
	    o, "writeback_nonzero_s",
	    results_json_double(sum->writeback_nonzero_s, 3));
	struct json_object *arr = json_object_new_array();
	for (size_t i = 0; i < b->nr_devices; i++) {
		const struct fk_blkstat *x = &a->dev[i], *y = &b->dev[i];
		const struct fk_blockdev *d = fk_monitor_device(m, i);
		struct json_object *dj = json_object_new_object();
		uint64_t ios = y->write_ios - x->write_ios;
		uint64_t kb = (y->write_sectors - x->write_sectors) / 2;
		json_object_object_add(dj, "name",
				       json_object_new_string(d->name));
		if (d->backing_of[0])
			json_object_object_add(
			    dj, "backing_of",
			    json_object_new_string(d->backing_of));
		json_object_object_add(dj, "write_ios",
				       json_object_new_int64((int64_t)ios));
		json_object_object_add(
		    dj, "write_merges",
		    json_object_new_int64(
			(int64_t)(y->write_merges - x->write_merges)));
		json_object_object_add(dj, "write_kb",
				       json_object_new_int64((int64_t)kb));
		json_object_object_add(
		    dj, "avg_write_kb",
		    results_json_double(ios ? (double)kb / (double)ios : 0, 1));
		json_object_object_add(
		    dj, "avg_write_wait_ms",
		    results_json_double(
			ios ? (double)(y->write_ticks_ms - x->write_ticks_ms) /
				  (double)ios
			    : 0,
			3));
		json_object_object_add(
		    dj, "flush_ios",
		    y->nr_fields >= 17
			? json_object_new_int64(
			      (int64_t)(y->flush_ios - x->flush_ios))
			: NULL);
		json_object_object_add(dj, "stat_fields",
				       json_object_new_int(y->nr_fields));
		json_object_array_add(arr, dj);
	}
	json_object_object_add(o, "devices", arr);
	return o;
}

static void print_summary_text(FILE *f, struct json_object *s)
{
	char b1[32], b2[32];
	long long samples = (long long)geti(s, "samples");
	fprintf(f, "\nsummary over %.1f s (%lld sample%s):\n",
		getd(s, "duration_s"), samples, samples == 1 ? "" : "s");
	fprintf(f, "  peak Dirty:                %s\n",
		cli_human_bytes((uint64_t)geti(s, "peak_dirty_kb") * 1024, b1,
				sizeof(b1)));
	fprintf(f, "  peak Writeback:            %s\n",
		cli_human_bytes((uint64_t)geti(s, "peak_writeback_kb") * 1024,
				b2, sizeof(b2)));
	fprintf(f, "  time with Writeback > 0:   %.1f s\n",
		getd(s, "writeback_nonzero_s"));
	struct json_object *devs;
	if (!json_object_object_get_ex(s, "devices", &devs))
		return;
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i), *v;
		struct json_object *bo;
		fprintf(
		    f, "  %s:\n",
		    json_object_get_string(json_object_object_get(d, "name")));
		if (json_object_object_get_ex(d, "backing_of", &bo))
			fprintf(f, "    (holds the backing file of %s)\n",
				json_object_get_string(bo));
		fprintf(f, "    writes completed:        %lld\n",
			(long long)geti(d, "write_ios"));
		fprintf(f, "    writes merged:           %lld\n",
			(long long)geti(d, "write_merges"));
		fprintf(f, "    KiB written:             %lld\n",
			(long long)geti(d, "write_kb"));
		fprintf(f, "    average write size:      %.1f KiB\n",
			getd(d, "avg_write_kb"));
		fprintf(f, "    average write wait:      %.2f ms\n",
			getd(d, "avg_write_wait_ms"));
		if (json_object_object_get_ex(d, "flush_ios", &v) && v)
			fprintf(f, "    flushes:                 %lld\n",
				(long long)json_object_get_int64(v));
		else
			fprintf(f,
				"    flushes:                 n/a (kernel's "
				"stat has %lld fields, flushes need 17)\n",
				(long long)geti(d, "stat_fields"));
	}
}

/* --prometheus=FILE at each sample: a failure is reported when it
 * starts and when it ends, not at every sample. */
static void prom_update(struct prom_file *p, struct fk_monitor *m,
			const struct fk_monitor_sample *s)
{
	if (p->dirfd < 0)
		return;
	int r = prom_file_write(p, m, s);
	if (r && !p->warned)
		cli_warn("--prometheus: write '%s': %s", p->path,
			 fk_strerror(r));
	else if (!r && p->warned)
		cli_warn("--prometheus: '%s' written again", p->path);
	p->warned = r != 0;
}

static void emit(enum format fmt, struct json_object *o, struct fk_monitor *m,
		 const struct fk_monitor_sample *smp, size_t n)
{
	if (fmt == FMT_JSON) {
		struct json_object *line = json_object_new_object();
		json_object_object_add(line, "type",
				       json_object_new_string("monitor"));
		json_object_object_foreach(o, key, val)
		    json_object_object_add(line, key, json_object_get(val));
		results_json_print(line);
		json_object_put(line);
		fflush(stdout);
	} else if (fmt == FMT_CSV) {
		if (n == 0)
			print_csv(o, 1);
		print_csv(o, 0);
		fflush(stdout);
	} else if (fmt == FMT_PROM) {
		if (n)
			putchar('\n');
		print_prom(stdout, m, smp);
		fflush(stdout);
	} else {
		print_table(o, n);
	}
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"interval", required_argument, NULL, 'i'},
	    {"csv", no_argument, NULL, 'c'},
	    {"json", no_argument, NULL, 'j'},
	    {"prometheus", optional_argument, NULL, 'P'},
	    {"path", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t interval_ms = 1000;
	enum format fmt = FMT_TABLE;
	const char *prom_path = NULL;
	struct prom_file pf = {.dirfd = -1};
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t nr_paths = 0;
	int c, ret = FK_EXIT_OK;
	if (!paths)
		return FK_EXIT_FAILURE;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:i:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_interval(optarg, &interval_ms) ||
			    interval_ms < 100) {
				free(paths);
				return cli_bad_value("monitor", "--interval",
						     optarg,
						     "milliseconds, at least "
						     "100");
			}
			break;
		case 'c':
			fmt = FMT_CSV;
			break;
		case 'j':
			fmt = FMT_JSON;
			break;
		case 'P':
			if (optarg && !*optarg) {
				free(paths);
				return cli_bad_value("monitor", "--prometheus",
						     "", "a file name");
			}
			if (optarg)
				prom_path = optarg;
			else
				fmt = FMT_PROM;
			break;
		case 'p':
			paths[nr_paths++] = optarg;
			break;
		case 'h':
			usage(stdout);
			free(paths);
			return FK_EXIT_OK;
		default:
			free(paths);
			return cli_option_error("monitor", c, argv, opts);
		}
	}
	/* iostat's habit: "monitor 1" samples every second and "monitor 1
	 * 5" five times; a COMMAND that is a number needs "--" before it. */
	uint64_t count = 0;
	int dashdash = optind > 1 && !strcmp(argv[optind - 1], "--");
	if (!dashdash && optind < argc && is_number(argv[optind])) {
		double sec;
		if (cli_parse_decimal(argv[optind], &sec) || sec < 0.1 ||
		    sec > 86400) {
			free(paths);
			return cli_usage_error(
			    "monitor",
			    "invalid INTERVAL '%s' (seconds, "
			    "0.1 to 86400)",
			    argv[optind]);
		}
		interval_ms = (uint64_t)(sec * 1000.0 + 0.5);
		optind++;
		if (optind < argc && is_number(argv[optind])) {
			if (cli_parse_u64(argv[optind], &count) || !count) {
				free(paths);
				return cli_usage_error("monitor",
						       "invalid COUNT '%s' (a "
						       "positive whole number)",
						       argv[optind]);
			}
			optind++;
		}
		if (optind < argc) {
			free(paths);
			return cli_usage_error("monitor",
					       "extra operand '%s' after "
					       "INTERVAL [COUNT] (a COMMAND "
					       "goes after '--')",
					       argv[optind]);
		}
	}
	char **cmd = optind < argc ? argv + optind : NULL;
	if (nr_paths == 0)
		paths[nr_paths++] = ".";

	if (prom_path && prom_file_open(&pf, prom_path)) {
		free(paths);
		return FK_EXIT_FAILURE;
	}
	struct fk_monitor *m;
	int r = fk_monitor_create(&m);
	if (r) {
		cli_error("monitor: %s", fk_strerror(r));
		if (pf.dirfd >= 0)
			close(pf.dirfd);
		free(paths);
		return FK_EXIT_FAILURE;
	}
	for (size_t i = 0; i < nr_paths; i++) {
		r = fk_monitor_add_path(m, paths[i]);
		if (r < 0) {
			cli_error("stat '%s': %s", paths[i], fk_strerror(r));
			if (pf.dirfd >= 0)
				close(pf.dirfd);
			fk_monitor_destroy(m);
			free(paths);
			return FK_EXIT_FAILURE;
		}
	}
	free(paths);
	if (fk_monitor_nr_devices(m) == 0)
		cli_warn("no block device under the given paths (tmpfs?): "
			 "sampling memory only");

	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, &old);

	pid_t pid = -1;
	if (cmd) {
		struct child_opts co = {.flags = CHILD_EXEC_MSG,
					.sigmask = &old};
		r = child_start(cmd[0], cmd, &co, &pid);
		if (r) {
			cli_error("fork: %s", strerror(-r));
			sigprocmask(SIG_SETMASK, &old, NULL);
			fk_monitor_destroy(m);
			return FK_EXIT_FAILURE;
		}
	}

	struct fk_monitor_sample s[3]; /* first, previous, current */
	struct summary sum = {0};
	int warned = 0, done = 0, status = 0;
	size_t n = 0;
	uint64_t t0 = 0;
	int cur = 1;

	while (!done) {
		/* sample and print */
		r = fk_monitor_sample(m, &s[cur]);
		if (r && !warned) {
			cli_warn("sample: %s", fk_strerror(r));
			warned = 1;
		}
		if (n == 0) {
			s[0] = s[cur];
			t0 = s[0].time_ns;
		}
		const struct fk_monitor_sample *prev =
		    n ? &s[cur == 1 ? 2 : 1] : NULL;
		double t_s = (double)(s[cur].time_ns - t0) / 1e9;
		struct json_object *o =
		    results_sample_json(m, prev, &s[cur], t_s);
		decorate(o, &s[cur]);
		emit(fmt, o, m, &s[cur], n);
		json_object_put(o);
		prom_update(&pf, m, &s[cur]);
		if (s[cur].mem.dirty_kb > sum.peak_dirty_kb)
			sum.peak_dirty_kb = s[cur].mem.dirty_kb;
		if (s[cur].mem.writeback_kb > sum.peak_writeback_kb)
			sum.peak_writeback_kb = s[cur].mem.writeback_kb;
		if (prev && s[cur].mem.writeback_kb > 0)
			sum.writeback_nonzero_s +=
			    (double)(s[cur].time_ns - prev->time_ns) / 1e9;
		sum.samples = ++n;
		cur = cur == 1 ? 2 : 1;
		if (count && n >= count)
			break;

		/* wait for the next tick, a signal or the command's exit */
		uint64_t next = t0 + n * interval_ms * 1000000ull;
		for (;;) {
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC, &now);
			uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull +
					  (uint64_t)now.tv_nsec;
			if (now_ns >= next)
				break;
			uint64_t wait = next - now_ns;
			struct timespec ts = {
			    .tv_sec = (time_t)(wait / 1000000000ull),
			    .tv_nsec = (long)(wait % 1000000000ull)};
			siginfo_t si;
			int sig = sigtimedwait(&set, &si, &ts);
			if (sig < 0)
				continue; /* timeout (EAGAIN) or EINTR */
			if (sig == SIGCHLD) {
				if (pid > 0 &&
				    (status = child_wait(pid, 1)) != -EAGAIN) {
					done = 1;
					break;
				}
				continue;
			}
			/* SIGINT or SIGTERM */
			if (pid <= 0) {
				done = 1;
				break;
			}
			if (sig == SIGTERM || si.si_code != SI_KERNEL)
				kill(pid, sig);
		}
		if (done) {
			/* one last sample at the end */
			done = 0;
			r = fk_monitor_sample(m, &s[cur]);
			prev = &s[cur == 1 ? 2 : 1];
			t_s = (double)(s[cur].time_ns - t0) / 1e9;
			o = results_sample_json(m, prev, &s[cur], t_s);
			decorate(o, &s[cur]);
			emit(fmt, o, m, &s[cur], n);
			json_object_put(o);
			prom_update(&pf, m, &s[cur]);
			if (s[cur].mem.dirty_kb > sum.peak_dirty_kb)
				sum.peak_dirty_kb = s[cur].mem.dirty_kb;
			if (s[cur].mem.writeback_kb > sum.peak_writeback_kb)
				sum.peak_writeback_kb = s[cur].mem.writeback_kb;
			if (s[cur].mem.writeback_kb > 0)
				sum.writeback_nonzero_s +=
				    (double)(s[cur].time_ns - prev->time_ns) /
				    1e9;
			sum.samples = ++n;
			break;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);

	const struct fk_monitor_sample *last = &s[cur];
	struct json_object *so = summary_json(m, &s[0], last, &sum);
	if (pid > 0) {
		ret = status < 0 ? FK_EXIT_FAILURE : status;
		json_object_object_add(so, "command_status",
				       json_object_new_int(ret));
	}
	if (fmt == FMT_JSON) {
		struct json_object *line = json_object_new_object();
		json_object_object_add(line, "type",
				       json_object_new_string("summary"));
		json_object_object_foreach(so, key, val)
		    json_object_object_add(line, key, json_object_get(val));
		results_json_print(line);
		json_object_put(line);
	} else {
		print_summary_text(fmt == FMT_TABLE ? stdout : stderr, so);
	}
	json_object_put(so);
	if (pf.dirfd >= 0)
		close(pf.dirfd);
	fk_monitor_destroy(m);
	return ret;
}
