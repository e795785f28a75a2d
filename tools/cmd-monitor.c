// SPDX-License-Identifier: MIT
/*
 * cmd-monitor.c - "flushkit monitor": watch Dirty, Writeback and the
 * block-layer counts of the disks under some paths, until interrupted or
 * until a command exits, then print a blktrace-like summary.
 *
 *   flushkit monitor [--interval MS] [--csv|--json] [--path P]...
 *                    [-- COMMAND ARGS]
 *
 * Samples go to stdout: CSV, JSON lines ({"type":"monitor",...}, the
 * result-file schema of docs/report.md), or a table when stdout is a
 * terminal.  The summary goes to stdout after a table, as a final
 * {"type":"summary"} line with --json, and to stderr with --csv (so the
 * CSV stays one table).
 *
 * COMMAND is started with fork + execvp of the given argv (no shell).
 * Signals: SIGINT, SIGTERM and SIGCHLD are blocked and taken with
 * sigtimedwait, which also times the samples.  Without a command,
 * SIGINT/SIGTERM end the run (exit 0).  With one, SIGTERM and a SIGINT
 * sent with kill(1) are forwarded to it (a terminal's ^C reaches it
 * directly), and the run ends when it exits: its exit status is passed
 * on, 128+N if signal N killed it.
 */
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum format { FMT_TABLE, FMT_CSV, FMT_JSON };

struct summary {
	uint64_t peak_dirty_kb, peak_writeback_kb;
	double writeback_nonzero_s;
	size_t samples;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit monitor [--interval MS] [--csv|--json] "
		"[--path P]... [-- COMMAND ARGS]\n\n"
		"Sample Dirty and Writeback (/proc/meminfo), the dirty "
		"thresholds (/proc/vmstat)\nand the block-layer counts "
		"(/sys/block/DEV/stat) of the disks under each\npath, until "
		"interrupted or until COMMAND exits; then print a summary.\n\n"
		"  -i, --interval MS   sample every MS milliseconds (default "
		"1000, min 100;\n"
		"                      a suffix is allowed: 2s, 500ms)\n"
		"      --csv           samples as CSV (summary on stderr)\n"
		"      --json          samples and summary as JSON lines\n"
		"  -p, --path P        watch the disks under P (repeatable; "
		"default .)\n"
		"  -h, --help          this help\n\n"
		"Exit status: COMMAND's (128+N if killed by signal N), else 0;"
		"\n1 on failure, 2 on usage errors.\n");
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

static void print_table(struct json_object *o, const char *dev, size_t line)
{
	if (line % 20 == 0) {
		printf("%8s %10s %10s", "time_s", "Dirty_KiB", "Wback_KiB");
		if (dev)
			printf("  %-8s %7s %7s %8s %8s %7s %5s", "disk", "w/s",
			       "wmrg/s", "wMB/s", "await_ms", "flush/s",
			       "infl");
		putchar('\n');
	}
	printf("%8.1f %10lld %10lld", getd(o, "t_s"),
	       (long long)geti(o, "dirty_kb"),
	       (long long)geti(o, "writeback_kb"));
	double iv = getd(o, "interval_s");
	if (dev) {
		int64_t ios = geti(o, "write_ios");
		printf("  %-8s", dev);
		if (iv > 0) {
			printf(" %7.1f %7.1f %8.2f", (double)ios / iv,
			       (double)geti(o, "write_merges") / iv,
			       (double)geti(o, "write_kb") / 1024.0 / iv);
			if (ios)
				printf(" %8.2f",
				       (double)geti(o, "write_ticks_ms") /
					   (double)ios);
			else
				printf(" %8s", "-");
			if (json_object_object_get_ex(o, "flush_ios", NULL))
				printf(" %7.1f",
				       (double)geti(o, "flush_ios") / iv);
			else
				printf(" %7s", "n/a");
		} else {
			printf(" %7s %7s %8s %8s %7s", "-", "-", "-", "-", "-");
		}
		printf(" %5lld", (long long)geti(o, "in_flight"));
	}
	putchar('\n');
	fflush(stdout);
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
	fprintf(f, "\nsummary over %.1f s (%lld samples):\n",
		getd(s, "duration_s"), (long long)geti(s, "samples"));
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

static void emit(enum format fmt, struct json_object *o, const char *dev,
		 size_t n)
{
	if (fmt == FMT_JSON) {
		struct json_object *line = json_object_new_object();
		json_object_object_add(line, "type",
				       json_object_new_string("monitor"));
		json_object_object_foreach(o, key, val)
		    json_object_object_add(line, key, json_object_get(val));
		puts(json_object_to_json_string_ext(line,
						    JSON_C_TO_STRING_PLAIN));
		json_object_put(line);
		fflush(stdout);
	} else if (fmt == FMT_CSV) {
		if (n == 0)
			print_csv(o, 1);
		print_csv(o, 0);
		fflush(stdout);
	} else {
		print_table(o, dev, n);
	}
}

int cmd_monitor(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"interval", required_argument, NULL, 'i'},
	    {"csv", no_argument, NULL, 'c'},
	    {"json", no_argument, NULL, 'j'},
	    {"path", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t interval_ms = 1000;
	enum format fmt = isatty(STDOUT_FILENO) ? FMT_TABLE : FMT_CSV;
	const char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t nr_paths = 0;
	int c, ret = FK_EXIT_OK;
	if (!paths)
		return FK_EXIT_FAILURE;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+i:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_interval(optarg, &interval_ms) ||
			    interval_ms < 100) {
				cli_error("--interval: '%s' is not a number of "
					  "milliseconds >= 100",
					  optarg);
				free(paths);
				return FK_EXIT_USAGE;
			}
			break;
		case 'c':
			fmt = FMT_CSV;
			break;
		case 'j':
			fmt = FMT_JSON;
			break;
		case 'p':
			paths[nr_paths++] = optarg;
			break;
		case 'h':
			usage(stdout);
			free(paths);
			return FK_EXIT_OK;
		default:
			usage(stderr);
			free(paths);
			return FK_EXIT_USAGE;
		}
	}
	char **cmd = optind < argc ? argv + optind : NULL;
	if (nr_paths == 0)
		paths[nr_paths++] = ".";

	struct fk_monitor *m;
	int r = fk_monitor_create(&m);
	if (r) {
		cli_error("monitor: %s", fk_strerror(r));
		free(paths);
		return FK_EXIT_FAILURE;
	}
	for (size_t i = 0; i < nr_paths; i++) {
		r = fk_monitor_add_path(m, paths[i]);
		if (r < 0) {
			cli_error("stat '%s': %s", paths[i], fk_strerror(r));
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
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			cli_error("fork: %s", strerror(errno));
			sigprocmask(SIG_SETMASK, &old, NULL);
			fk_monitor_destroy(m);
			return FK_EXIT_FAILURE;
		}
		if (pid == 0) {
			sigprocmask(SIG_SETMASK, &old, NULL);
			execvp(cmd[0], cmd);
			int e = errno;
			cli_error("exec '%s': %s", cmd[0], strerror(e));
			_exit(e == ENOENT ? 127 : 126);
		}
	}

	struct fk_monitor_sample s[3]; /* first, previous, current */
	struct summary sum = {0};
	const char *dev =
	    fk_monitor_nr_devices(m) ? fk_monitor_device(m, 0)->name : NULL;
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
		emit(fmt, o, dev, n);
		json_object_put(o);
		if (s[cur].mem.dirty_kb > sum.peak_dirty_kb)
			sum.peak_dirty_kb = s[cur].mem.dirty_kb;
		if (s[cur].mem.writeback_kb > sum.peak_writeback_kb)
			sum.peak_writeback_kb = s[cur].mem.writeback_kb;
		if (prev && s[cur].mem.writeback_kb > 0)
			sum.writeback_nonzero_s +=
			    (double)(s[cur].time_ns - prev->time_ns) / 1e9;
		sum.samples = ++n;
		cur = cur == 1 ? 2 : 1;

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
				    waitpid(pid, &status, WNOHANG) == pid) {
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
			emit(fmt, o, dev, n);
			json_object_put(o);
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
		if (WIFEXITED(status))
			ret = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			ret = 128 + WTERMSIG(status);
		json_object_object_add(so, "command_status",
				       json_object_new_int(ret));
	}
	if (fmt == FMT_JSON) {
		struct json_object *line = json_object_new_object();
		json_object_object_add(line, "type",
				       json_object_new_string("summary"));
		json_object_object_foreach(so, key, val)
		    json_object_object_add(line, key, json_object_get(val));
		puts(json_object_to_json_string_ext(line,
						    JSON_C_TO_STRING_PLAIN));
		json_object_put(line);
	} else {
		print_summary_text(fmt == FMT_CSV ? stderr : stdout, so);
	}
	json_object_put(so);
	fk_monitor_destroy(m);
	return ret;
}
