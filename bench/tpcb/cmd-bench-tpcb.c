// SPDX-License-Identifier: MIT
/*
 * cmd-bench-tpcb.c - "flushkit bench tpcb": pgbench's TPC-B (sort of) on
 * the embedded page store.
 *
 *   flushkit bench tpcb -i -s SCALE [--data-dir DIR] [store knobs]
 *   flushkit bench tpcb [-c N] [-T S | -t N] [-P S] [-R TPS] [-L MS]
 *                       [-l] [--json] [--check] [--results DIR]
 *                       [--sync-io IO] [--jobs N] [store knobs]
 *   flushkit bench tpcb --check
 *
 * Each client is a thread with its own random generator running the
 * transaction of workload.c against one shared store.  Latency of a
 * transaction runs from its start (its scheduled start with -R) to the
 * return of fk_store_commit.  The output follows pgbench 15: the
 * summary, "progress:" lines on stderr with -P, the per-transaction log
 * with -l; plus latency percentiles, the store's checkpoint lines (as
 * PostgreSQL's log_checkpoints), checkpoint and backend-write counts and
 * the "stall ratio": the worst one-second tps divided by the median
 * one-second tps, over every full second of the run.
 *
 * Every run (not -i, not --check alone) also writes a result file
 * (bench/lib/results.h, docs/report.md) into --results DIR (default
 * results/): its settings and environment, one "progress" line per
 * second (whatever -P says), the monitor sampler's lines, one
 * "checkpoint" line per checkpoint of the run, and the "summary".
 *
 * Threads: the main thread opens the store, starts the clients, prints
 * progress and joins them; the store's checkpointer thread calls
 * on_checkpoint, which prints and records under ckpt_lock (also the
 * result file's checkpoint lines: run.rf is set and cleared under that
 * lock).  Clients share only the stop flag and their interval counters
 * (each under its client's lock).
 */
#include "workload.h"
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_DATA_DIR "tpcb-data"
#define DEFAULT_XACTS 10

/* Interval counters, swapped out by the main thread: IV_PRINT for -P,
 * IV_RESULT for the result file's one-second progress lines. */
struct interval {
	uint64_t cnt, skipped, failed;
	double lat_sum, lat_sumsq, lag_sum, lat_max; /* microseconds */
};

enum { IV_PRINT, IV_RESULT, NR_IV };

#define MAX_SCRIPTS 128 /* as pgbench's MAX_SCRIPTS */

/* One script of the run (-b NAME@WEIGHT, -S, -N; tpcb-like if none). */
struct script_use {
	int id; /* enum tpcb_script_id */
	uint64_t weight;
};

/* A client's figures for one script. */
struct script_stats {
	uint64_t cnt, failed;
	double lat_sum, lat_sumsq; /* microseconds */
	uint64_t step_ns[TPCB_MAX_STEPS];
	uint64_t step_failed[TPCB_MAX_STEPS]; /* where the failed ones failed */
};

/* --aggregate-interval: one interval of a log file (microseconds). */
struct agg {
	int64_t start_s; /* epoch seconds */
	uint64_t cnt, skipped;
	double sum, sum2, min, max;
	double lag_sum, lag_sum2, lag_min, lag_max;
};

/*
 * A pgbench thread (-j): the clients it serves share its log file
 * (pgbench_log.PID, pgbench_log.PID.N), its sampling generator and its
 * aggregate, all under @lock.  Every client still runs on its own OS
 * thread, as the store's calls block; -j decides the grouping only.
 */
struct tgroup {
	FILE *log;
	char *path; /* as opened (relative to the current directory) */
	pthread_mutex_t lock;
	struct tpcb_rng sample_rng;
	struct agg agg;
	int lock_ok;
};

struct client {
	int id;
	pthread_t thread;
	struct run *run;
	struct tpcb_rng rng;
	struct fk_hist hist;
	int hist_ok;
	uint64_t cnt, skipped, late;
	double lat_sum, lat_sumsq, lag_sum, lag_max; /* microseconds */
	uint64_t end_ns;
	uint32_t *per_sec; /* commits completed in each second */
	size_t nr_sec, alloc_sec;
	struct tgroup *grp;	 /* -l: this client's thread's log */
	struct script_stats *ss; /* one per script of the run */
	int error;
	pthread_mutex_t lock;
	struct interval iv[NR_IV];
};

struct ckpt_event {
	double at_s; /* completion, seconds since the run started */
	struct fk_checkpoint_info ci;
	char reason[16];
};

struct run {
	/* options */
	int init;
	uint64_t scale;
	int nclients, nthreads;
	uint64_t duration_s; /* -T; 0 if -t */
	uint64_t nxacts;     /* -t per client; 0 if -T */
	uint64_t progress_s;
	int use_log;
	const char *log_prefix;
	const char *query_mode; /* -M: shown, as pgbench; no queries here */
	struct script_use scripts[MAX_SCRIPTS];
	int nr_scripts;
	uint64_t total_weight;
	int report_steps;	/* -r */
	int progress_timestamp; /* --progress-timestamp */
	uint64_t agg_interval_s;
	double sample_rate;    /* 0: every transaction */
	struct tgroup *groups; /* nthreads of them, with -l */
	double rate; /* -R, tps over all clients; 0 = none */
	double latency_limit_ms;
	int json;
	int check;
	int log_checkpoints;
	const char *data_dir;
	const char *flush;
	uint64_t seed;
	struct fk_store_opts opts;
	uint64_t knobs_given; /* bit (OPT_x - OPT_SHARED_BUFFERS) */
	uint64_t nbuffers;
	const char *results_dir; /* NULL: no result file */
	char **log_paths; /* -l: relative to the result file, per thread */

	/* state */
	struct fk_store *store;
	struct tpcb_tables tables;
	struct client *clients;
	uint64_t start_ns;
	atomic_int stop;
	atomic_int finished; /* clients that returned */
	double conn_ms;

	pthread_mutex_t ckpt_lock;
	struct ckpt_event *ckpts;
	size_t nr_ckpts, alloc_ckpts;
	struct result_file *rf;	    /* under ckpt_lock for on_checkpoint */
	const char *ckpt_sync_io;   /* backend of the run's last checkpoint */
	const char *probed_sync_io; /* what sync_io resolves to here */

	/* Why the run failed (the first reason, as printed), "" if it did
	 * not; stopped_by: the error that ended the clients early. */
	char failure[256];
	char stopped_by[256];
};

/* Print a failure of the run (cli_error) and keep the first as its
 * reason; @stopped: it also ended the clients before -T or -t. */
static void __attribute__((format(printf, 3, 4)))
run_failed(struct run *r, int stopped, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_error("%s", msg);
	if (!r->failure[0])
		snprintf(r->failure, sizeof(r->failure), "%s", msg);
	if (stopped && !r->stopped_by[0])
		snprintf(r->stopped_by, sizeof(r->stopped_by), "%s", msg);
}

static void sleep_until_ns(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
			      .tv_nsec = (long)(t % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flushkit bench tpcb -i [-s SCALE] [OPTIONS]\n"
	    "       flushkit bench tpcb [OPTIONS]\n"
	    "       flushkit bench tpcb --check [--data-dir DIR]\n"
	    "\n"
	    "pgbench's TPC-B (sort of) on flushkit's page store.\n"
	    "\n"
	    "initialization:\n"
	    "  -i, --initialize         create and load the tables\n"
	    "  -s, --scale=N            scaling factor (default 1)\n"
	    "\n"
	    "benchmarking:\n"
	    "  -c, --client=N           concurrent clients (default 1)\n"
	    "  -j N                     pgbench's threads: the clients are "
	    "dealt out to N\n"
	    "                           groups, one -l log file each "
	    "(default 1)\n"
	    "  -b, --builtin=NAME[@W]   add builtin script tpcb-like, "
	    "simple-update or\n"
	    "                           select-only with weight W (default "
	    "1); -b list\n"
	    "  -N, --skip-some-updates  -b simple-update\n"
	    "  -S, --select-only        -b select-only\n"
	    "  -M, --protocol=simple|extended|prepared  shown (no SQL "
	    "here)\n"
	    "  -n, --no-vacuum          accepted (nothing to vacuum)\n"
	    "  -r, --report-per-command per-statement latencies\n"
	    "  -T, --time=S             run for S seconds\n"
	    "  -t, --transactions=N     transactions per client (default 10)\n"
	    "  -P, --progress=S         progress report every S seconds\n"
	    "  -R, --rate=TPS           target rate (Poisson schedule)\n"
	    "  -L, --latency-limit=MS   count (with -R: skip) late "
	    "transactions\n"
	    "  -l, --log                per-transaction log "
	    "pgbench_log.PID[.N]\n"
	    "      --log-prefix=P       log file prefix (default pgbench_log)\n"
	    "      --aggregate-interval=S  -l logs one line per S seconds\n"
	    "      --sampling-rate=F    -l logs that fraction of "
	    "transactions\n"
	    "      --progress-timestamp -P lines carry Unix epoch times\n"
	    "      --random-seed=SEED   integer, \"time\" (default) or "
	    "\"rand\"\n"
	    "      --check              verify the TPC-B sums (alone: only "
	    "check)\n"
	    "      --json               print the results as one JSON object\n"
	    "      --results=DIR        write the result file there (default "
	    "results)\n"
	    "      --no-results         write no result file\n"
	    "\n"
	    "store:\n"
	    "      --data-dir=DIR       default ./" DEFAULT_DATA_DIR "\n"
	    "      --flush=naive|smooth flushing preset (default smooth)\n"
	    "      --shared-buffers=SIZE --checkpoint-timeout=DUR\n"
	    "      --max-wal-size=SIZE  --checkpoint-completion-target=F\n"
	    "      --checkpoint-flush-after=SIZE --checkpoint-sorted=on|off\n"
	    "      --checkpoint-sync-spread=DUR --fsyncq-compaction=on|off\n"
	    "      --full-page-writes=on|off\n"
	    "      --wal-sync-method=fdatasync|fsync|open_datasync\n"
	    "      --segment-size=SIZE  --wal-segment-size=SIZE\n"
	    "      --wal-compression=off|lz4|zstd  compress full-page images "
	    "in the WAL\n"
	    "                           (default off)\n"
	    "      --sync-io=auto|uring|threads|sequential  how the checkpoint "
	    "sync phase\n"
	    "                           issues its fsyncs (default: the "
	    "preset's)\n"
	    "      --jobs=N             fsyncs in flight at most in that phase "
	    "(default 32)\n"
	    "      --log-checkpoints[=on|off] checkpoint lines on stderr "
	    "(default on)\n");
}

/* ---- option parsing ---- */

enum {
	OPT_JSON = 256,
	OPT_CHECK,
	OPT_DATA_DIR,
	OPT_FLUSH,
	OPT_LOG_PREFIX,
	OPT_SEED,
	OPT_RESULTS,
	OPT_NO_RESULTS,
	OPT_PROGRESS_TS,
	OPT_AGG_INTERVAL,
	OPT_SAMPLING_RATE,
	OPT_SHARED_BUFFERS, /* the store knobs: from here to OPT_SYNC_JOBS */
	OPT_CKPT_TIMEOUT,
	OPT_MAX_WAL,
	OPT_CKPT_TARGET,
	OPT_CKPT_FLUSH_AFTER,
	OPT_CKPT_SORTED,
	OPT_CKPT_SYNC_SPREAD,
	OPT_FSYNCQ_COMPACTION,
	OPT_FPW,
	OPT_WAL_SYNC,
	OPT_SEGMENT,
	OPT_WAL_SEGMENT,
	OPT_WAL_COMPRESSION,
	OPT_SYNC_IO,
	OPT_SYNC_JOBS,
	OPT_LOG_CKPT,
};

static const struct option long_opts[] = {
    {"initialize", no_argument, NULL, 'i'},
    {"scale", required_argument, NULL, 's'},
    {"client", required_argument, NULL, 'c'},
    {"jobs", required_argument, NULL, OPT_SYNC_JOBS},
    {"sync-io", required_argument, NULL, OPT_SYNC_IO},
    {"results", required_argument, NULL, OPT_RESULTS},
    {"no-results", no_argument, NULL, OPT_NO_RESULTS},
    {"time", required_argument, NULL, 'T'},
    {"transactions", required_argument, NULL, 't'},
    {"progress", required_argument, NULL, 'P'},
    {"rate", required_argument, NULL, 'R'},
    {"latency-limit", required_argument, NULL, 'L'},
    {"log", no_argument, NULL, 'l'},
    {"builtin", required_argument, NULL, 'b'},
    {"skip-some-updates", no_argument, NULL, 'N'},
    {"select-only", no_argument, NULL, 'S'},
    {"protocol", required_argument, NULL, 'M'},
    {"no-vacuum", no_argument, NULL, 'n'},
    {"report-per-command", no_argument, NULL, 'r'},
    {"progress-timestamp", no_argument, NULL, OPT_PROGRESS_TS},
    {"aggregate-interval", required_argument, NULL, OPT_AGG_INTERVAL},
    {"sampling-rate", required_argument, NULL, OPT_SAMPLING_RATE},
    {"help", no_argument, NULL, 'h'},
    {"log-prefix", required_argument, NULL, OPT_LOG_PREFIX},
    {"random-seed", required_argument, NULL, OPT_SEED},
    {"json", no_argument, NULL, OPT_JSON},
    {"check", no_argument, NULL, OPT_CHECK},
    {"data-dir", required_argument, NULL, OPT_DATA_DIR},
    {"flush", required_argument, NULL, OPT_FLUSH},
    {"shared-buffers", required_argument, NULL, OPT_SHARED_BUFFERS},
    {"checkpoint-timeout", required_argument, NULL, OPT_CKPT_TIMEOUT},
    {"max-wal-size", required_argument, NULL, OPT_MAX_WAL},
    {"checkpoint-completion-target", required_argument, NULL, OPT_CKPT_TARGET},
    {"checkpoint-flush-after", required_argument, NULL, OPT_CKPT_FLUSH_AFTER},
    {"checkpoint-sorted", required_argument, NULL, OPT_CKPT_SORTED},
    {"checkpoint-sync-spread", required_argument, NULL, OPT_CKPT_SYNC_SPREAD},
    {"fsyncq-compaction", required_argument, NULL, OPT_FSYNCQ_COMPACTION},
    {"full-page-writes", required_argument, NULL, OPT_FPW},
    {"wal-sync-method", required_argument, NULL, OPT_WAL_SYNC},
    {"segment-size", required_argument, NULL, OPT_SEGMENT},
    {"wal-segment-size", required_argument, NULL, OPT_WAL_SEGMENT},
    {"wal-compression", required_argument, NULL, OPT_WAL_COMPRESSION},
    {"log-checkpoints", optional_argument, NULL, OPT_LOG_CKPT},
    {NULL, 0, NULL, 0},
};

/* A store knob given on the command line, applied after the preset. */
struct knob {
	int opt;
	const char *val;
};

static int parse_bool(const char *s, int *out)
{
	if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1") ||
	    !strcmp(s, "yes"))
		*out = 1;
	else if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0") ||
		 !strcmp(s, "no"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

static int apply_knob(struct fk_store_opts *o, const struct knob *k)
{
	uint64_t u;
	double d;
	int b, ret = 0;
	switch (k->opt) {
	case OPT_SHARED_BUFFERS:
		ret = cli_parse_size(k->val, &u);
		if (!ret && u < 16 * FK_PAGE_SIZE)
			ret = -EINVAL;
		o->shared_buffers_bytes = u;
		break;
	case OPT_CKPT_TIMEOUT:
		ret = cli_parse_duration_ms(k->val, &o->checkpoint_timeout_ms);
		if (!ret && !o->checkpoint_timeout_ms)
			ret = -EINVAL;
		break;
	case OPT_MAX_WAL:
		ret = cli_parse_size(k->val, &o->max_wal_size_bytes);
		break;
	case OPT_CKPT_TARGET:
		ret = parse_double(k->val, &d);
		if (!ret && d > 1.0)
			ret = -EINVAL;
		o->checkpoint_completion_target = d;
		break;
	case OPT_CKPT_FLUSH_AFTER:
		ret = cli_parse_size(k->val, &o->checkpoint_flush_after_bytes);
		break;
	case OPT_CKPT_SORTED:
		ret = parse_bool(k->val, &b);
		o->checkpoint_sorted = b;
		break;
	case OPT_CKPT_SYNC_SPREAD:
		ret = cli_parse_duration_ms(k->val,
					    &o->checkpoint_sync_spread_ms);
		break;
	case OPT_FSYNCQ_COMPACTION:
		ret = parse_bool(k->val, &b);
		o->fsyncq_compaction = b;
		break;
	case OPT_FPW:
		ret = parse_bool(k->val, &b);
		o->full_page_writes = b;
		break;
	case OPT_WAL_SYNC:
		if (!strcmp(k->val, "fdatasync"))
			o->wal_sync_method = FK_WAL_FDATASYNC;
		else if (!strcmp(k->val, "fsync"))
			o->wal_sync_method = FK_WAL_FSYNC;
		else if (!strcmp(k->val, "open_datasync"))
			o->wal_sync_method = FK_WAL_OPEN_DATASYNC;
		else
			ret = -EINVAL;
		break;
	case OPT_SEGMENT:
		ret = cli_parse_size(k->val, &o->segment_bytes);
		if (!ret && (o->segment_bytes < FK_PAGE_SIZE ||
			     o->segment_bytes % FK_PAGE_SIZE))
			ret = -EINVAL;
		break;
	case OPT_WAL_SEGMENT:
		ret = cli_parse_size(k->val, &o->wal_segment_bytes);
		if (!ret && o->wal_segment_bytes < 64 * 1024)
			ret = -EINVAL;
		break;
	case OPT_WAL_COMPRESSION:
		ret = fk_wal_compression_parse(k->val);
		if (ret >= 0) {
			o->wal_compression = ret;
			ret = 0;
		}
		break;
	case OPT_SYNC_IO:
		ret = fk_sync_io_parse(k->val);
		if (ret >= 0) {
			o->sync_io = ret;
			ret = 0;
		}
		break;
	case OPT_SYNC_JOBS:
		ret = cli_parse_u64(k->val, &u);
		if (!ret && (u < 1 || u > FK_FSYNC_BATCH_MAX_QUEUE_DEPTH))
			ret = -EINVAL;
		o->sync_jobs = (uint32_t)u;
		break;
	}
	return ret;
}

static const char *knob_name(int opt)
{
	for (size_t i = 0; long_opts[i].name; i++)
		if (long_opts[i].val == opt)
			return long_opts[i].name;
	return "?";
}

static int parse_pos_int(const char *s, uint64_t *out, uint64_t max)
{
	return cli_parse_u64(s, out) || *out < 1 || *out > max ? -EINVAL : 0;
}

static void list_builtins(void)
{
	fprintf(stderr, "Available builtin scripts:\n");
	for (int i = 0; i < TPCB_NR_SCRIPTS; i++)
		fprintf(stderr, "  %13s: %s\n", tpcb_scripts[i].name,
			tpcb_scripts[i].desc);
	fprintf(stderr, "\n");
}

/*
 * -b NAME[@WEIGHT], -S, -N: add a script, as pgbench's addScript.
 * Returns -1 to go on, or an exit status (the message printed).
 */
static int add_script(struct run *r, const char *arg)
{
	char name[64];
	uint64_t w = 1;
	const char *at = strrchr(arg, '@');
	size_t n = at ? (size_t)(at - arg) : strlen(arg);
	if (!strcmp(arg, "list")) {
		list_builtins();
		return FK_EXIT_OK;
	}
	if (at) {
		if (cli_parse_u64(at + 1, &w)) {
			cli_error("bench tpcb: invalid weight specification: "
				  "%s",
				  at);
			return FK_EXIT_USAGE;
		}
		if (w > INT32_MAX) {
			cli_error("bench tpcb: weight specification out of "
				  "range (0 .. %d): %" PRIu64,
				  INT32_MAX, w);
			return FK_EXIT_USAGE;
		}
	}
	snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), arg);
	int id = tpcb_script_find(name);
	if (id == -EEXIST) {
		int k = 0;
		for (int i = 0; i < TPCB_NR_SCRIPTS; i++)
			k += !strncmp(tpcb_scripts[i].name, name, strlen(name));
		cli_error("bench tpcb: ambiguous builtin name: %d builtin "
			  "scripts found for prefix \"%s\"",
			  k, name);
		list_builtins();
		return FK_EXIT_USAGE;
	}
	if (id < 0) {
		cli_error("bench tpcb: no builtin script found for name "
			  "\"%s\"",
			  name);
		list_builtins();
		return FK_EXIT_USAGE;
	}
	if (r->nr_scripts == MAX_SCRIPTS) {
		cli_error("bench tpcb: at most %d SQL scripts are allowed",
			  MAX_SCRIPTS);
		return FK_EXIT_USAGE;
	}
	r->scripts[r->nr_scripts].id = id;
	r->scripts[r->nr_scripts++].weight = w;
	r->total_weight += w;
	return -1;
}

/* Returns -1 to go on, or an exit status. */
static int parse_args(struct run *r, int argc, char **argv)
{
	struct knob knobs[32];
	size_t nr_knobs = 0;
	int have_scale = 0, have_run = 0, have_init_bad = 0;
	uint64_t u;
	int c;

	r->nclients = 1;
	r->scale = 1;
	r->data_dir = DEFAULT_DATA_DIR;
	r->flush = "smooth";
	r->log_prefix = "pgbench_log";
	r->query_mode = "simple";
	r->nthreads = 1;
	r->log_checkpoints = 1;
	r->results_dir = "results";
	r->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);

	optind = 0; /* GNU: full re-initialization (tests call us twice) */
	opterr = 0;
	int li = -1;
	while ((c = getopt_long(argc, argv, ":is:c:j:T:t:P:R:L:lhb:NSM:nr",
				long_opts, &li)) != -1) {
		switch (c) {
		case 'i':
			r->init = 1;
			break;
		case 's':
			if (parse_pos_int(optarg, &r->scale, 1000000))
				goto bad_value;
			have_scale = 1;
			break;
		case 'c':
			if (parse_pos_int(optarg, &u, 4096))
				goto bad_value;
			r->nclients = (int)u;
			have_run = have_init_bad = 1;
			break;
		case 'j':
			if (parse_pos_int(optarg, &u, 4096)) {
				cli_error("bench tpcb: invalid number of "
					  "threads: \"%s\"",
					  optarg);
				return FK_EXIT_USAGE;
			}
			r->nthreads = (int)u;
			have_run = have_init_bad = 1;
			break;
		case 'T':
			if (parse_pos_int(optarg, &r->duration_s, 100000000))
				goto bad_value;
			have_run = have_init_bad = 1;
			break;
		case 't':
			if (parse_pos_int(optarg, &r->nxacts, UINT32_MAX))
				goto bad_value;
			have_run = have_init_bad = 1;
			break;
		case 'P':
			if (parse_pos_int(optarg, &r->progress_s, 100000))
				goto bad_value;
			have_run = have_init_bad = 1;
			break;
		case 'R':
			if (parse_double(optarg, &r->rate) || r->rate <= 0)
				goto bad_value;
			have_run = have_init_bad = 1;
			break;
		case 'L':
			if (parse_double(optarg, &r->latency_limit_ms) ||
			    r->latency_limit_ms <= 0)
				goto bad_value;
			have_run = have_init_bad = 1;
			break;
		case 'l':
			r->use_log = 1;
			have_run = have_init_bad = 1;
			break;
		case 'b':
		case 'N':
		case 'S': {
			int e = add_script(r, c == 'b'	 ? optarg
					      : c == 'N' ? "simple-update"
							 : "select-only");
			if (e >= 0)
				return e;
			have_run = have_init_bad = 1;
			break;
		}
		case 'M':
			if (strcmp(optarg, "simple") &&
			    strcmp(optarg, "extended") &&
			    strcmp(optarg, "prepared")) {
				cli_error("bench tpcb: invalid query mode "
					  "(-M): \"%s\"",
					  optarg);
				return FK_EXIT_USAGE;
			}
			r->query_mode = optarg;
			have_init_bad = 1;
			break;
		case 'n':
			break; /* no vacuum: nothing to vacuum here */
		case 'r':
			r->report_steps = 1;
			have_run = have_init_bad = 1;
			break;
		case OPT_PROGRESS_TS:
			r->progress_timestamp = 1;
			have_init_bad = 1;
			break;
		case OPT_AGG_INTERVAL:
			if (parse_pos_int(optarg, &r->agg_interval_s,
					  INT32_MAX)) {
				cli_error("bench tpcb: invalid number of "
					  "seconds for aggregation: \"%s\"",
					  optarg);
				return FK_EXIT_USAGE;
			}
			have_run = have_init_bad = 1;
			break;
		case OPT_SAMPLING_RATE:
			if (parse_double(optarg, &r->sample_rate) ||
			    r->sample_rate <= 0.0 || r->sample_rate > 1.0) {
				cli_error("bench tpcb: invalid sampling rate: "
					  "\"%s\"",
					  optarg);
				return FK_EXIT_USAGE;
			}
			have_run = have_init_bad = 1;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		case OPT_LOG_PREFIX:
			r->log_prefix = optarg;
			have_init_bad = 1;
			break;
		case OPT_SEED:
			if (!strcmp(optarg, "time"))
				break;
			if (!strcmp(optarg, "rand")) {
				/* pgbench's "rand": a strong random seed */
				if (getrandom(&r->seed, sizeof(r->seed), 0) !=
				    (ssize_t)sizeof(r->seed)) {
					cli_error("bench tpcb: cannot seed "
						  "random: %s",
						  strerror(errno));
					return FK_EXIT_FAILURE;
				}
				break;
			}
			if (cli_parse_u64(optarg, &r->seed))
				goto bad_value;
			break;
		case OPT_JSON:
			r->json = 1;
			have_init_bad = 1;
			break;
		case OPT_CHECK:
			r->check = 1;
			have_init_bad = 1;
			break;
		case OPT_DATA_DIR:
			if (!*optarg)
				goto bad_value;
			r->data_dir = optarg;
			break;
		case OPT_RESULTS:
			if (!*optarg)
				goto bad_value;
			r->results_dir = optarg;
			break;
		case OPT_NO_RESULTS:
			r->results_dir = NULL;
			break;
		case OPT_FLUSH:
			if (strcmp(optarg, "naive") && strcmp(optarg, "smooth"))
				goto bad_value;
			r->flush = optarg;
			break;
		case OPT_LOG_CKPT:
			if (optarg && parse_bool(optarg, &r->log_checkpoints))
				goto bad_value;
			if (!optarg)
				r->log_checkpoints = 1;
			break;
		case ':':
			cli_error("bench tpcb: option '%s' needs a value",
				  argv[optind - 1]);
			usage(stderr);
			return FK_EXIT_USAGE;
		case '?':
			cli_error("bench tpcb: unknown option '%s'",
				  argv[optind - 1]);
			usage(stderr);
			return FK_EXIT_USAGE;
		default:
			if (nr_knobs == sizeof(knobs) / sizeof(knobs[0])) {
				cli_error("bench tpcb: too many options");
				return FK_EXIT_USAGE;
			}
			knobs[nr_knobs].opt = c;
			knobs[nr_knobs++].val = optarg;
			r->knobs_given |= 1ull << (c - OPT_SHARED_BUFFERS);
			break;
		}
		li = -1;
		continue;
	bad_value:
		if (li >= 0)
			cli_error("bench tpcb: invalid value '%s' for option "
				  "'--%s'",
				  optarg ? optarg : "", long_opts[li].name);
		else
			cli_error("bench tpcb: invalid value '%s' for option "
				  "'-%c'",
				  optarg ? optarg : "", c);
		return FK_EXIT_USAGE;
	}
	if (optind < argc) {
		cli_error("bench tpcb: unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return FK_EXIT_USAGE;
	}
	if (r->duration_s && r->nxacts) {
		cli_error("bench tpcb: specify either a number of transactions "
			  "(-t) or a duration (-T), not both");
		return FK_EXIT_USAGE;
	}
	if (r->init && have_init_bad) {
		cli_error("bench tpcb: -i takes only -s, --data-dir and store "
			  "options");
		return FK_EXIT_USAGE;
	}
	if (!r->init && have_scale)
		cli_warn("scale option ignored, using the size of the "
			 "branches table");
	if (!r->init && !have_run && r->check)
		r->check = 2; /* check only */
	else if (!r->init && !r->duration_s && !r->nxacts)
		r->nxacts = DEFAULT_XACTS;
	/* As pgbench: never more threads than clients. */
	if (r->nthreads > r->nclients)
		r->nthreads = r->nclients;
	if (r->sample_rate > 0 && !r->use_log) {
		cli_error("bench tpcb: log sampling (--sampling-rate) is "
			  "allowed only when logging transactions (-l)");
		return FK_EXIT_USAGE;
	}
	if (r->sample_rate > 0 && r->agg_interval_s) {
		cli_error("bench tpcb: log sampling (--sampling-rate) and "
			  "aggregation (--aggregate-interval) cannot be used "
			  "at the same time");
		return FK_EXIT_USAGE;
	}
	if (r->agg_interval_s && !r->use_log) {
		cli_error("bench tpcb: log aggregation is allowed only when "
			  "actually logging transactions");
		return FK_EXIT_USAGE;
	}
	if (r->agg_interval_s && r->duration_s &&
	    r->agg_interval_s > r->duration_s) {
		cli_error("bench tpcb: number of seconds for aggregation "
			  "(%" PRIu64 ") must not be higher than test duration "
			  "(%" PRIu64 ")",
			  r->agg_interval_s, r->duration_s);
		return FK_EXIT_USAGE;
	}
	if (r->agg_interval_s && r->duration_s &&
	    r->duration_s % r->agg_interval_s) {
		cli_error("bench tpcb: duration (%" PRIu64 ") must be a "
			  "multiple of aggregation interval (%" PRIu64 ")",
			  r->duration_s, r->agg_interval_s);
		return FK_EXIT_USAGE;
	}
	if (!r->nr_scripts && !r->init)
		add_script(r, "tpcb-like");
	if (r->nr_scripts && !r->total_weight) {
		cli_error("bench tpcb: total script weight must not be zero");
		return FK_EXIT_USAGE;
	}
	if (r->check) {
		for (int i = 0; i < r->nr_scripts; i++)
			if (r->scripts[i].id == TPCB_SCRIPT_SIMPLE_UPDATE) {
				cli_error("bench tpcb: --check compares the "
					  "teller and branch sums, which "
					  "simple-update (-N) leaves alone");
				return FK_EXIT_USAGE;
			}
	}

	fk_store_opts_init(&r->opts);
	if (fk_store_opts_preset(&r->opts, r->flush)) {
		cli_error("bench tpcb: unknown flush preset '%s'", r->flush);
		return FK_EXIT_USAGE;
	}
	for (size_t i = 0; i < nr_knobs; i++) {
		if (apply_knob(&r->opts, &knobs[i])) {
			cli_error("bench tpcb: invalid value '%s' for option "
				  "'--%s'",
				  knobs[i].val, knob_name(knobs[i].opt));
			return FK_EXIT_USAGE;
		}
	}
	r->nbuffers = r->opts.shared_buffers_bytes / FK_PAGE_SIZE;
	return -1;
}

/* ---- store callbacks ---- */

static double ms_to_s(uint64_t ms)
{
	return (double)ms / 1000.0;
}

static void on_checkpoint(void *arg, const struct fk_checkpoint_info *ci)
{
	struct run *r = arg;
	pthread_mutex_lock(&r->ckpt_lock);
	if (r->log_checkpoints) {
		if (ci->error)
			fprintf(stderr, "checkpoint failed: %s\n",
				fk_strerror(ci->error));
		else
			fprintf(stderr,
				"checkpoint complete: wrote %" PRIu64
				" buffers (%.1f%%); write=%.3f s, sync=%.3f s, "
				"total=%.3f s; sync files=%" PRIu64
				", longest=%.3f s, average=%.3f s\n",
				ci->buffers_written,
				r->nbuffers
				    ? 100.0 * (double)ci->buffers_written /
					  (double)r->nbuffers
				    : 0.0,
				ms_to_s(ci->write_ms), ms_to_s(ci->sync_ms),
				ms_to_s(ci->total_ms), ci->files_synced,
				ms_to_s(ci->longest_sync_ms),
				ms_to_s(ci->average_sync_ms));
	}
	if (r->rf) {
		results_checkpoint(r->rf, ci);
		if (ci->sync_io && !ci->error)
			r->ckpt_sync_io = ci->sync_io;
	}
	if (r->nr_ckpts == r->alloc_ckpts) {
		size_t n = r->alloc_ckpts ? 2 * r->alloc_ckpts : 16;
		struct ckpt_event *e = realloc(r->ckpts, n * sizeof(*e));
		if (!e)
			goto out;
		r->ckpts = e;
		r->alloc_ckpts = n;
	}
	struct ckpt_event *e = &r->ckpts[r->nr_ckpts++];
	e->ci = *ci;
	snprintf(e->reason, sizeof(e->reason), "%s",
		 ci->reason ? ci->reason : "");
	e->ci.reason = NULL;
	e->at_s =
	    r->start_ns ? (double)(int64_t)(fk_now_ns() - r->start_ns) / 1e9 : 0.0;
out:
	pthread_mutex_unlock(&r->ckpt_lock);
}

/* Store log lines (recovery, errors) on stderr; its checkpoint lines are
 * printed by on_checkpoint instead. */
static void on_log(void *arg, const char *line)
{
	(void)arg;
	if (!strncmp(line, "checkpoint ", 11))
		return;
	fprintf(stderr, "flushkit: store: %s\n", line);
}

static int open_store(struct run *r)
{
	r->opts.on_checkpoint = on_checkpoint;
	r->opts.on_checkpoint_arg = r;
	r->opts.log = on_log;
	r->opts.log_arg = r;
	/* -i creates (its data directory was just emptied: a store there
	 * now is somebody else's); a run or a check never does. */
	r->opts.create_mode =
	    r->init ? FK_STORE_CREATE_NEW : FK_STORE_OPEN_EXISTING;
	int ret = fk_store_open(r->data_dir, &r->opts, &r->store);
	if (ret == -EBUSY)
		cli_error("data directory '%s' is in use by another process "
			  "(its lock file '%s/lock' is held); nothing was "
			  "changed",
			  r->data_dir, r->data_dir);
	else if (ret == -ENOENT && !r->init)
		cli_error("no store in '%s'; create one with 'flushkit bench "
			  "tpcb -i --data-dir %s'",
			  r->data_dir, r->data_dir);
	else if (ret == -FK_ECORRUPT)
		cli_error("the store in '%s' is damaged (the store's messages "
			  "above say what is wrong); it was not changed. "
			  "Restore it from a copy: 'flushkit bench tpcb -i' "
			  "would replace it with a new one",
			  r->data_dir);
	else if (ret == -ENOTSUP && r->opts.wal_compression)
		cli_error("--wal-compression=%s: this flushkit was built "
			  "without lib%s",
			  fk_wal_compression_name(r->opts.wal_compression),
			  fk_wal_compression_name(r->opts.wal_compression));
	else if (ret)
		cli_error("open store '%s': %s", r->data_dir, fk_strerror(ret));
	if (ret)
		r->store = NULL;
	return ret;
}

static int close_store(struct run *r)
{
	if (!r->store)
		return 0;
	int ret = fk_store_close(r->store);
	r->store = NULL;
	if (ret)
		cli_error("close store '%s': %s", r->data_dir,
			  fk_strerror(ret));
	return ret;
}

/* ---- initialization ---- */

struct init_progress {
	uint64_t start_ns;
};

static void load_progress(void *arg, uint64_t done, uint64_t total)
{
	struct init_progress *p = arg;
	double el = (double)(fk_now_ns() - p->start_ns) / 1e9;
	double rem = done ? el * (double)(total - done) / (double)done : 0;
	fprintf(stderr,
		"%" PRIu64 " of %" PRIu64
		" tuples (%d%%) done (elapsed %.2f s, "
		"remaining %.2f s)\n",
		done, total, (int)(100 * done / total), el, rem);
}

/*
 * After an ENOSPC of -i: the store's log line above gave the free space
 * and what the WAL takes; say what the WAL needs at least and the
 * option that shrinks it.
 */
static void wal_space_hint(struct run *r)
{
	uint64_t seg = r->opts.wal_segment_bytes, small = 1u << 20;
	char a[32], b[32], c[32];
	cli_human_bytes(seg, a, sizeof(a));
	cli_human_bytes(FK_STORE_WAL_MIN_SEGMENTS * seg, b, sizeof(b));
	if (seg > small) {
		cli_human_bytes(FK_STORE_WAL_MIN_SEGMENTS * small, c,
				sizeof(c));
		cli_error("scale %" PRIu64 " does not fit in '%s' with WAL "
			  "segments of %s: the WAL takes at least %u of them "
			  "(%s) besides the tables; use smaller ones: "
			  "--wal-segment-size=1MB (the WAL then takes %s)",
			  r->scale, r->data_dir, a, FK_STORE_WAL_MIN_SEGMENTS,
			  b, c);
	} else {
		cli_error("scale %" PRIu64 " does not fit in '%s': the "
			  "tables and at least %u WAL segments of %s (%s) "
			  "need more space; use a smaller scale (-s) or a "
			  "larger file system",
			  r->scale, r->data_dir, FK_STORE_WAL_MIN_SEGMENTS, a,
			  b);
	}
}

static int do_init(struct run *r)
{
	uint64_t t0 = fk_now_ns(), t1, t2, t3, t4;
	int ret;

	fprintf(stderr, "dropping old tables...\n");
	ret = tpcb_datadir_reset(r->data_dir);
	if (ret == -EEXIST) {
		cli_error("'%s' exists and is not a tpcb data directory; "
			  "refusing to remove it",
			  r->data_dir);
		return FK_EXIT_FAILURE;
	}
	if (ret == -EBUSY) {
		cli_error("data directory '%s' is in use by another process "
			  "(its lock file '%s/lock' is held); nothing was "
			  "changed",
			  r->data_dir, r->data_dir);
		return FK_EXIT_FAILURE;
	}
	if (ret) {
		cli_error("remove '%s': %s", r->data_dir, fk_strerror(ret));
		return FK_EXIT_FAILURE;
	}
	t1 = fk_now_ns();
	fprintf(stderr, "creating tables...\n");
	ret = tpcb_datadir_mark(r->data_dir, r->scale);
	if (ret) {
		cli_error("create '%s': %s", r->data_dir, fk_strerror(ret));
		return FK_EXIT_FAILURE;
	}
	r->log_checkpoints = 0; /* the shutdown checkpoint is noise */
	ret = open_store(r);
	if (ret == -ENOSPC)
		wal_space_hint(r);
	if (ret)
		return FK_EXIT_FAILURE;
	t2 = fk_now_ns();
	fprintf(stderr, "generating data (client-side)...\n");
	struct init_progress p = {.start_ns = t2};
	ret = tpcb_create(r->store, r->scale, &r->tables, load_progress, &p);
	if (ret) {
		cli_error("load '%s': %s", r->data_dir, fk_strerror(ret));
		if (ret == -ENOSPC)
			wal_space_hint(r);
		close_store(r);
		return FK_EXIT_FAILURE;
	}
	t3 = fk_now_ns();
	if (close_store(r))
		return FK_EXIT_FAILURE;
	t4 = fk_now_ns();
	fprintf(stderr,
		"done in %.2f s (drop tables %.2f s, create tables %.2f s, "
		"client-side generate %.2f s, checkpoint %.2f s).\n",
		(double)(t4 - t0) / 1e9, (double)(t1 - t0) / 1e9,
		(double)(t2 - t1) / 1e9, (double)(t3 - t2) / 1e9,
		(double)(t4 - t3) / 1e9);
	return FK_EXIT_OK;
}

/* ---- the clients ---- */

static int note_second(struct client *c, uint64_t end_ns)
{
	uint64_t start = c->run->start_ns;
	size_t sec =
	    end_ns > start ? (size_t)((end_ns - start) / 1000000000ull) : 0;
	if (sec >= c->alloc_sec) {
		size_t n = c->alloc_sec ? c->alloc_sec : 64;
		while (n <= sec)
			n *= 2;
		uint32_t *p = realloc(c->per_sec, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + c->alloc_sec, 0, (n - c->alloc_sec) * sizeof(*p));
		c->per_sec = p;
		c->alloc_sec = n;
	}
	c->per_sec[sec]++;
	if (sec + 1 > c->nr_sec)
		c->nr_sec = sec + 1;
	return 0;
}

/* Write the aggregate @a of a log file (pgbench 15's layout: interval
 * start, count, latency sum, sum of squares, min, max, the same four of
 * the schedule lag, skipped, retried, retries, serialization and
 * deadlock failures; microseconds). */
static void agg_print(FILE *f, const struct agg *a)
{
	fprintf(f, "%" PRId64 " %" PRIu64 " %.0f %.0f %.0f %.0f", a->start_s,
		a->cnt, a->sum, a->sum2, a->cnt ? a->min : 0,
		a->cnt ? a->max : 0);
	fprintf(f, " %.0f %.0f %.0f %.0f %" PRIu64 " 0 0 0 0\n", a->lag_sum,
		a->lag_sum2, a->cnt ? a->lag_min : 0, a->cnt ? a->lag_max : 0,
		a->skipped);
}

static void agg_reset(struct agg *a, int64_t start_s)
{
	memset(a, 0, sizeof(*a));
	a->start_s = start_s;
}

/* One transaction into the client's thread's log: a line (pgbench's
 * "client_id transaction_no time script_no time_epoch time_us
 * [schedule_lag]"), or into the current aggregate. */
static void log_txn(struct client *c, uint64_t no, int script, double lat_us,
		    int skipped, double lag_us)
{
	struct run *r = c->run;
	struct tgroup *g = c->grp;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&g->lock);
	if (r->agg_interval_s) {
		struct agg *a = &g->agg;
		while (a->start_s + (int64_t)r->agg_interval_s <=
		       (int64_t)ts.tv_sec) {
			agg_print(g->log, a);
			agg_reset(a, a->start_s + (int64_t)r->agg_interval_s);
		}
		if (skipped) {
			a->skipped++;
		} else {
			if (!a->cnt || lat_us < a->min)
				a->min = lat_us;
			if (!a->cnt || lat_us > a->max)
				a->max = lat_us;
			if (!a->cnt || lag_us < a->lag_min)
				a->lag_min = lag_us;
			if (!a->cnt || lag_us > a->lag_max)
				a->lag_max = lag_us;
			a->cnt++;
			a->sum += lat_us;
			a->sum2 += lat_us * lat_us;
			a->lag_sum += lag_us;
			a->lag_sum2 += lag_us * lag_us;
		}
		pthread_mutex_unlock(&g->lock);
		return;
	}
	if (r->sample_rate > 0 &&
	    tpcb_rng_double(&g->sample_rng) > r->sample_rate) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	if (skipped)
		fprintf(g->log, "%d %" PRIu64 " skipped %d %lld %ld", c->id, no,
			script, (long long)ts.tv_sec, ts.tv_nsec / 1000);
	else
		fprintf(g->log, "%d %" PRIu64 " %.0f %d %lld %ld", c->id, no,
			lat_us, script, (long long)ts.tv_sec,
			ts.tv_nsec / 1000);
	if (r->rate > 0)
		fprintf(g->log, " %.0f", lag_us);
	fputc('\n', g->log);
	pthread_mutex_unlock(&g->lock);
}

/* pgbench's chooseScript: a weighted draw. */
static int choose_script(struct client *c)
{
	struct run *r = c->run;
	if (r->nr_scripts == 1)
		return 0;
	int64_t w = tpcb_rng_range(&c->rng, 0, (int64_t)r->total_weight - 1);
	int i = 0;
	do
		w -= (int64_t)r->scripts[i++].weight;
	while (w >= 0);
	return i - 1;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct run *r = c->run;
	struct fk_batch b;
	struct tpcb_txn x;
	uint64_t end_ns = r->duration_s
			      ? r->start_ns + r->duration_s * 1000000000ull
			      : UINT64_MAX;
	/* -R: mean microseconds between this client's transactions. */
	double throttle_us = r->rate > 0 ? 1e6 * r->nclients / r->rate : 0;
	double limit_us = r->latency_limit_ms * 1000.0;
	uint64_t sched_ns = r->start_ns;
	uint64_t done = 0; /* transactions run or skipped */

	fk_batch_init(&b);
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		if (r->nxacts && done >= r->nxacts)
			break;
		uint64_t t_start;
		double lag_us = 0;
		if (throttle_us > 0) {
			double wait =
			    -log(tpcb_rng_double(&c->rng)) * throttle_us;
			sched_ns += (uint64_t)(wait * 1000.0);
			if (sched_ns >= end_ns)
				break;
			uint64_t now = fk_now_ns();
			/* -T is over, though the schedule is not: the store
			 * fell behind it.  Stop, as pgbench does (its
			 * timer_exceeded); working off the backlog would
			 * run past -T, and skipping it would count
			 * transactions after the end. */
			if (now >= end_ns)
				break;
			/* pgbench: skip transactions already later than the
			 * latency limit, moving the schedule on. */
			if (limit_us > 0 &&
			    (double)(int64_t)(now - sched_ns) / 1000.0 >
				limit_us &&
			    now > sched_ns) {
				done++;
				c->skipped++;
				pthread_mutex_lock(&c->lock);
				c->iv[IV_PRINT].skipped++;
				c->iv[IV_RESULT].skipped++;
				pthread_mutex_unlock(&c->lock);
				if (c->grp)
					log_txn(c, done, choose_script(c), 0, 1,
						0);
				continue;
			}
			if (now < sched_ns)
				sleep_until_ns(sched_ns);
			t_start = sched_ns;
			uint64_t actual = fk_now_ns();
			lag_us = (double)(actual - sched_ns) / 1000.0;
		} else {
			t_start = fk_now_ns();
			if (t_start >= end_ns)
				break;
		}
		int si = choose_script(c);
		struct script_stats *ss = &c->ss[si];
		x.txid = ((uint64_t)c->id << 40) | done;
		int ret = tpcb_script_run(r->store, &r->tables, &b,
					  r->scripts[si].id, &c->rng, &x,
					  r->report_steps ? ss->step_ns : NULL);
		uint64_t t_end = fk_now_ns();
		if (ret) {
			ss->failed++;
			if (x.step >= 0 && x.step < TPCB_MAX_STEPS)
				ss->step_failed[x.step]++;
			pthread_mutex_lock(&c->lock);
			for (int k = 0; k < NR_IV; k++)
				c->iv[k].failed++;
			pthread_mutex_unlock(&c->lock);
			c->error = ret;
			atomic_store(&r->stop, 1);
			break;
		}
		done++;
		double lat_us = (double)(t_end - t_start) / 1000.0;
		c->cnt++;
		ss->cnt++;
		ss->lat_sum += lat_us;
		ss->lat_sumsq += lat_us * lat_us;
		c->lat_sum += lat_us;
		c->lat_sumsq += lat_us * lat_us;
		c->lag_sum += lag_us;
		if (lag_us > c->lag_max)
			c->lag_max = lag_us;
		if (limit_us > 0 && lat_us > limit_us)
			c->late++;
		fk_hist_add(&c->hist, (uint64_t)(lat_us + 0.5));
		if (note_second(c, t_end)) {
			c->error = -ENOMEM;
			atomic_store(&r->stop, 1);
			break;
		}
		pthread_mutex_lock(&c->lock);
		for (int k = 0; k < NR_IV; k++) {
			struct interval *iv = &c->iv[k];
			iv->cnt++;
			iv->lat_sum += lat_us;
			iv->lat_sumsq += lat_us * lat_us;
			iv->lag_sum += lag_us;
			if (lat_us > iv->lat_max)
				iv->lat_max = lat_us;
		}
		pthread_mutex_unlock(&c->lock);
		if (c->grp)
			log_txn(c, done, si, lat_us, 0, lag_us);
	}
	c->end_ns = fk_now_ns();
	fk_batch_release(&b);
	atomic_fetch_add(&r->finished, 1);
	return NULL;
}

/* ---- results ---- */

struct results {
	uint64_t cnt, skipped, late, failed;
	double lat_avg_ms, lat_std_ms, lag_avg_ms, lag_max_ms;
	double elapsed_s, tps;
	uint64_t p50, p90, p99, p999, max; /* microseconds */
	uint32_t *series;		   /* commits per second */
	size_t nr_series; /* seconds recorded (last may be partial) */
	size_t full_secs;
	double stall_ratio; /* < 0: not enough full seconds */
	uint32_t worst_sec, median_sec;
	struct fk_store_stats st0, st1;
	int check_done, check_ok;
	struct tpcb_sums sums;
};

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int collect(struct run *r, struct results *res, uint64_t end_ns)
{
	struct fk_hist all;
	double lat_sum = 0, lat_sumsq = 0, lag_sum = 0;
	int ret = fk_hist_init(&all);
	if (ret)
		return ret;
	res->nr_series = 0;
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		res->cnt += c->cnt;
		res->skipped += c->skipped;
		res->late += c->late;
		res->failed += c->error ? 1 : 0;
		lat_sum += c->lat_sum;
		lat_sumsq += c->lat_sumsq;
		lag_sum += c->lag_sum;
		if (c->lag_max / 1000.0 > res->lag_max_ms)
			res->lag_max_ms = c->lag_max / 1000.0;
		fk_hist_merge(&all, &c->hist);
		if (c->nr_sec > res->nr_series)
			res->nr_series = c->nr_sec;
	}
	res->elapsed_s = (double)(end_ns - r->start_ns) / 1e9;
	if (res->cnt) {
		double n = (double)res->cnt;
		res->lat_avg_ms = lat_sum / n / 1000.0;
		double var = lat_sumsq / n - (lat_sum / n) * (lat_sum / n);
		res->lat_std_ms = var > 0 ? sqrt(var) / 1000.0 : 0;
		res->lag_avg_ms = lag_sum / n / 1000.0;
	}
	res->tps = res->elapsed_s > 0 ? (double)res->cnt / res->elapsed_s : 0;
	res->p50 = fk_hist_percentile(&all, 50);
	res->p90 = fk_hist_percentile(&all, 90);
	res->p99 = fk_hist_percentile(&all, 99);
	res->p999 = fk_hist_percentile(&all, 99.9);
	res->max = all.count ? all.max_us : 0;
	fk_hist_release(&all);

	/* The one-second series: every second the run covered. */
	size_t full = (size_t)res->elapsed_s;
	if (res->nr_series < full + 1)
		res->nr_series = full + (res->elapsed_s > (double)full);
	res->series =
	    calloc(res->nr_series ? res->nr_series : 1, sizeof(*res->series));
	if (!res->series)
		return -ENOMEM;
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		for (size_t s = 0; s < c->nr_sec; s++)
			res->series[s] += c->per_sec[s];
	}
	res->full_secs = full < res->nr_series ? full : res->nr_series;
	res->stall_ratio = -1;
	if (res->full_secs >= 1) {
		uint32_t *sorted = malloc(res->full_secs * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, res->series, res->full_secs * sizeof(*sorted));
		qsort(sorted, res->full_secs, sizeof(*sorted), cmp_u32);
		res->worst_sec = sorted[0];
		size_t n = res->full_secs;
		res->median_sec = n % 2
				      ? sorted[n / 2]
				      : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
		res->stall_ratio = res->median_sec ? (double)res->worst_sec /
							 (double)res->median_sec
						   : 0.0;
		free(sorted);
	}
	return 0;
}

/* Take (and zero) the clients' interval counters @k, summed. */
static void take_interval(struct run *r, int k, struct interval *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		pthread_mutex_lock(&c->lock);
		struct interval *iv = &c->iv[k];
		sum->cnt += iv->cnt;
		sum->skipped += iv->skipped;
		sum->failed += iv->failed;
		sum->lat_sum += iv->lat_sum;
		sum->lat_sumsq += iv->lat_sumsq;
		sum->lag_sum += iv->lag_sum;
		if (iv->lat_max > sum->lat_max)
			sum->lat_max = iv->lat_max;
		memset(iv, 0, sizeof(*iv));
		pthread_mutex_unlock(&c->lock);
	}
}

/* Mean and standard deviation of an interval's latencies, us. */
static void interval_lat(const struct interval *iv, double *avg, double *sd)
{
	double n = (double)iv->cnt;
	double lat = n ? iv->lat_sum / n : 0;
	double var = n ? iv->lat_sumsq / n - lat * lat : 0;
	*avg = lat;
	*sd = var > 0 ? sqrt(var) : 0;
}

/* A "progress" line of the result file for the interval ending at
 * @end_ns (monotonic) that began at @begin_ns. */
static void result_interval(struct run *r, uint64_t begin_ns, uint64_t end_ns)
{
	struct interval sum;
	double lat, sd, len_s = (double)(end_ns - begin_ns) / 1e9;
	take_interval(r, IV_RESULT, &sum);
	interval_lat(&sum, &lat, &sd);
	results_progress(r->rf, results_mono_s(r->rf, end_ns),
			 len_s > 0 ? (double)sum.cnt / len_s : 0, lat / 1000.0,
			 sd / 1000.0, sum.cnt ? sum.lat_max / 1000.0 : 0);
}

static void progress_report(struct run *r, double at_s, double interval_s)
{
	struct interval sum;
	double lat, sd;
	take_interval(r, IV_PRINT, &sum);
	interval_lat(&sum, &lat, &sd);
	double n = (double)sum.cnt;
	char line[256], when[64];
	if (r->progress_timestamp) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(when, sizeof(when), "%.3f",
			 (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	} else {
		snprintf(when, sizeof(when), "%.1f", at_s);
	}
	int len = snprintf(line, sizeof(line),
			   "progress: %s s, %.1f tps, lat %.3f ms stddev %.3f, "
			   "%" PRIu64 " failed",
			   when, n / interval_s, lat / 1000.0, sd / 1000.0,
			   sum.failed);
	if (r->rate > 0) {
		len +=
		    snprintf(line + len, sizeof(line) - (size_t)len,
			     ", lag %.3f ms", n ? sum.lag_sum / n / 1000.0 : 0);
		if (r->latency_limit_ms > 0)
			snprintf(line + len, sizeof(line) - (size_t)len,
				 ", %" PRIu64 " skipped", sum.skipped);
	}
	fprintf(stderr, "%s\n", line);
}

static void print_check(const struct results *res)
{
	const struct tpcb_sums *s = &res->sums;
	printf("sum of account balances: %" PRId64 "\n", s->accounts);
	printf("sum of teller balances: %" PRId64 "\n", s->tellers);
	printf("sum of branch balances: %" PRId64 "\n", s->branches);
	printf("sum of history deltas: %" PRId64 " (%" PRIu64 " rows)\n",
	       s->history, s->history_rows);
	printf("consistency check: %s\n", res->check_ok ? "OK" : "FAILED");
}

/* The checkpoint sync phase's backend: as the run's last checkpoint
 * reported it, else what --sync-io resolves to on this machine. */
static const char *sync_io_used(struct run *r)
{
	pthread_mutex_lock(&r->ckpt_lock);
	const char *s = r->ckpt_sync_io;
	pthread_mutex_unlock(&r->ckpt_lock);
	if (!s)
		s = r->probed_sync_io;
	return s ? s : fk_sync_io_name(r->opts.sync_io);
}

static uint32_t sync_jobs(const struct run *r)
{
	return r->opts.sync_jobs ? r->opts.sync_jobs
				 : FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH;
}

/* Set r->probed_sync_io: the backend the open store chose for its
 * checkpoints' sync phase (fk_store_stats.sync_io). */
static void probe_sync_io(struct run *r)
{
	struct fk_store_stats st;
	fk_store_get_stats(r->store, &st);
	r->probed_sync_io = fk_sync_io_name(st.sync_io);
}

/*
 * The "duration:" line: the time the run really ran.  pgbench prints
 * the -T it was given; that is the time run only when the run was not
 * stopped early and did not overrun.  An early stop names its cause.
 */
static void print_duration(const struct run *r, const struct results *res)
{
	if (r->stopped_by[0] && r->duration_s)
		printf("duration: %.1f s (of %" PRIu64
		       " s requested: stopped by %s)\n",
		       res->elapsed_s, r->duration_s, r->stopped_by);
	else if (r->stopped_by[0])
		printf("duration: %.1f s (stopped by %s)\n", res->elapsed_s,
		       r->stopped_by);
	else if (fabs(res->elapsed_s - (double)r->duration_s) < 0.5)
		printf("duration: %" PRIu64 " s\n", r->duration_s);
	else
		printf("duration: %.1f s (of %" PRIu64 " s requested)\n",
		       res->elapsed_s, r->duration_s);
}

/* Script @k's figures summed over the clients, in @out. */
static void script_sum(const struct run *r, int k, struct script_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; r->clients && i < r->nclients; i++) {
		const struct script_stats *ss = &r->clients[i].ss[k];
		out->cnt += ss->cnt;
		out->failed += ss->failed;
		out->lat_sum += ss->lat_sum;
		out->lat_sumsq += ss->lat_sumsq;
		for (int s = 0; s < TPCB_MAX_STEPS; s++) {
			out->step_ns[s] += ss->step_ns[s];
			out->step_failed[s] += ss->step_failed[s];
		}
	}
}

/* -r: pgbench's "statement latencies in milliseconds and failures". */
static void print_steps(const struct run *r, int k, const char *prefix)
{
	struct script_stats ss;
	const struct tpcb_script *sc = &tpcb_scripts[r->scripts[k].id];
	script_sum(r, k, &ss);
	printf("%sstatement latencies in milliseconds and failures:\n", prefix);
	for (int s = 0; s < sc->nr_steps; s++)
		printf("   %11.3f  %10" PRIu64 "  %s\n",
		       ss.cnt ? (double)ss.step_ns[s] / 1e6 / (double)ss.cnt
			      : 0.0,
		       ss.step_failed[s],
		       sc->steps[s]);
}

/* pgbench's per-script sections (more than one script). */
static void print_scripts(const struct run *r, const struct results *res)
{
	for (int k = 0; k < r->nr_scripts; k++) {
		struct script_stats ss;
		script_sum(r, k, &ss);
		uint64_t all = ss.cnt + ss.failed;
		double n = (double)ss.cnt, avg = n ? ss.lat_sum / n : 0;
		double var = n ? ss.lat_sumsq / n - avg * avg : 0;
		printf("SQL script %d: %s\n", k + 1,
		       tpcb_scripts[r->scripts[k].id].desc);
		printf(" - weight: %" PRIu64 " (targets %.1f%% of total)\n",
		       r->scripts[k].weight,
		       100.0 * (double)r->scripts[k].weight /
			   (double)r->total_weight);
		printf(" - %" PRIu64 " transactions (%.1f%% of total, tps = "
		       "%f)\n",
		       ss.cnt, res->cnt ? 100.0 * n / (double)res->cnt : 0.0,
		       res->elapsed_s > 0 ? n / res->elapsed_s : 0.0);
		printf(" - number of failed transactions: %" PRIu64
		       " (%.3f%%)\n",
		       ss.failed,
		       all ? 100.0 * (double)ss.failed / (double)all : 0.0);
		printf(" - latency average = %.3f ms\n", avg / 1000.0);
		printf(" - latency stddev = %.3f ms\n",
		       var > 0 ? sqrt(var) / 1000.0 : 0.0);
		if (r->report_steps)
			print_steps(r, k, " - ");
	}
}

static void print_summary(struct run *r, const struct results *res)
{
	const struct fk_store_stats *a = &res->st0, *b = &res->st1;
	uint64_t total = res->cnt + res->skipped + res->failed;
	/* pgbench's layout first, line for line; flushkit's own lines
	 * (storage, percentiles, stall ratio, checkpoints) after it */
	printf("flushkit bench tpcb (flushkit %s)\n", fk_version());
	printf("transaction type: %s\n",
	       r->nr_scripts > 1 ? "multiple scripts"
				 : tpcb_scripts[r->scripts[0].id].desc);
	printf("scaling factor: %" PRIu64 "\n", r->tables.scale);
	printf("query mode: %s\n", r->query_mode);
	printf("number of clients: %d\n", r->nclients);
	printf("number of threads: %d\n", r->nthreads);
	printf("maximum number of tries: 1\n");
	if (r->duration_s) {
		print_duration(r, res);
		printf("number of transactions actually processed: %" PRIu64
		       "\n",
		       res->cnt);
	} else {
		printf("number of transactions per client: %" PRIu64 "\n",
		       r->nxacts);
		printf("number of transactions actually processed: %" PRIu64
		       "/%" PRIu64 "\n",
		       res->cnt, r->nxacts * (uint64_t)r->nclients);
		if (r->stopped_by[0])
			print_duration(r, res);
	}
	printf("number of failed transactions: %" PRIu64 " (%.3f%%)\n",
	       res->failed,
	       total ? 100.0 * (double)res->failed / (double)total : 0.0);
	if (r->rate > 0 && r->latency_limit_ms > 0)
		printf("number of transactions skipped: %" PRIu64 " (%.3f%%)\n",
		       res->skipped,
		       total ? 100.0 * (double)res->skipped / (double)total
			     : 0.0);
	if (r->latency_limit_ms > 0)
		printf(
		    "number of transactions above the %.1f ms latency limit: "
		    "%" PRIu64 "/%" PRIu64 " (%.3f%%)\n",
		    r->latency_limit_ms, res->late, res->cnt,
		    res->cnt ? 100.0 * (double)res->late / (double)res->cnt
			     : 0.0);
	if (r->progress_s || r->rate > 0 || r->latency_limit_ms > 0) {
		printf("latency average = %.3f ms\n", res->lat_avg_ms);
		printf("latency stddev = %.3f ms\n", res->lat_std_ms);
	} else {
		/* as pgbench: from the run time, without measurements */
		printf("latency average = %.3f ms\n",
		       res->cnt ? 1000.0 * res->elapsed_s * r->nclients /
				      (double)res->cnt
				: 0.0);
	}
	if (r->rate > 0)
		printf("rate limit schedule lag: avg %.3f (max %.3f) ms\n",
		       res->lag_avg_ms, res->lag_max_ms);
	printf("initial connection time = %.3f ms\n", r->conn_ms);
	printf("tps = %f (without initial connection time)\n", res->tps);
	if (r->nr_scripts > 1)
		print_scripts(r, res);
	else if (r->report_steps)
		print_steps(r, 0, "");
	printf("storage: flushkit page store (flush=%s)\n", r->flush);
	if (!strcmp(sync_io_used(r), "sequential"))
		printf("checkpoint sync: sequential, one fsync at a time\n");
	else
		printf("checkpoint sync: %s, up to %u fsyncs in flight\n",
		       sync_io_used(r), sync_jobs(r));
	printf("latency percentiles: p50 = %.3f ms, p90 = %.3f ms, "
	       "p99 = %.3f ms, p99.9 = %.3f ms, max = %.3f ms\n",
	       (double)res->p50 / 1000, (double)res->p90 / 1000,
	       (double)res->p99 / 1000, (double)res->p999 / 1000,
	       (double)res->max / 1000);
	if (res->stall_ratio >= 0)
		printf("stall ratio = %.3f (worst one-second tps %u, median "
		       "%u, over %zu s)\n",
		       res->stall_ratio, res->worst_sec, res->median_sec,
		       res->full_secs);
	else
		printf("stall ratio = n/a (run shorter than one second)\n");
	printf("checkpoints: %" PRIu64 "\n", b->checkpoints - a->checkpoints);
	printf("buffers written: checkpoint %" PRIu64 ", backend %" PRIu64 "\n",
	       b->buffers_checkpoint - a->buffers_checkpoint,
	       b->buffers_backend - a->buffers_backend);
	printf("backend fsyncs: %" PRIu64 "\n",
	       b->backend_fsyncs - a->backend_fsyncs);
	printf("full-page images: %" PRIu64 ", %.1f MiB of WAL "
	       "(wal_compression %s)\n",
	       b->wal_fpi - a->wal_fpi,
	       (double)(b->wal_fpi_bytes - a->wal_fpi_bytes) / 1048576.0,
	       fk_wal_compression_name(r->opts.wal_compression));
	if (res->check_done)
		print_check(res);
}

/* --json numbers: milliseconds, seconds and rates to 3 decimals */
static struct json_object *jdouble(double v)
{
	return results_json_double(v, 3);
}

static struct json_object *jint(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

static void json_check(struct json_object *o, const struct results *res)
{
	struct json_object *c = json_object_new_object();
	json_object_object_add(c, "accounts",
			       jint((uint64_t)res->sums.accounts));
	json_object_object_add(c, "tellers", jint((uint64_t)res->sums.tellers));
	json_object_object_add(c, "branches",
			       jint((uint64_t)res->sums.branches));
	json_object_object_add(c, "history", jint((uint64_t)res->sums.history));
	json_object_object_add(c, "history_rows", jint(res->sums.history_rows));
	json_object_object_add(c, "ok", json_object_new_boolean(res->check_ok));
	json_object_object_add(o, "check", c);
}

/* --json: each script's figures, and with -r its statements' times. */
static struct json_object *scripts_json(const struct run *r)
{
	struct json_object *a = json_object_new_array();
	for (int k = 0; k < r->nr_scripts; k++) {
		const struct tpcb_script *sc = &tpcb_scripts[r->scripts[k].id];
		struct script_stats ss;
		script_sum(r, k, &ss);
		double n = (double)ss.cnt, avg = n ? ss.lat_sum / n : 0;
		double var = n ? ss.lat_sumsq / n - avg * avg : 0;
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "name",
				       json_object_new_string(sc->name));
		json_object_object_add(o, "weight", jint(r->scripts[k].weight));
		json_object_object_add(o, "transactions", jint(ss.cnt));
		json_object_object_add(o, "failed", jint(ss.failed));
		json_object_object_add(o, "latency_avg_ms",
				       jdouble(avg / 1000.0));
		json_object_object_add(
		    o, "latency_stddev_ms",
		    jdouble(var > 0 ? sqrt(var) / 1000.0 : 0.0));
		if (r->report_steps) {
			struct json_object *st = json_object_new_array();
			for (int i = 0; i < sc->nr_steps; i++) {
				struct json_object *e =
				    json_object_new_object();
				json_object_object_add(
				    e, "statement",
				    json_object_new_string(sc->steps[i]));
				json_object_object_add(
				    e, "latency_ms",
				    jdouble(n ? (double)ss.step_ns[i] / 1e6 / n
					      : 0.0));
				json_object_array_add(st, e);
			}
			json_object_object_add(o, "statements", st);
		}
		json_object_array_add(a, o);
	}
	return a;
}

static void print_json(struct run *r, const struct results *res, int ran)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "transaction_type",
			       json_object_new_string("TPC-B (sort of)"));
	json_object_object_add(o, "scale", jint(r->tables.scale));
	json_object_object_add(o, "storage",
			       json_object_new_string("flushkit page store"));
	json_object_object_add(o, "flush", json_object_new_string(r->flush));
	json_object_object_add(o, "sync_io",
			       json_object_new_string(sync_io_used(r)));
	json_object_object_add(o, "sync_jobs", jint(sync_jobs(r)));
	if (ran) {
		const struct fk_store_stats *a = &res->st0, *b = &res->st1;
		json_object_object_add(o, "clients",
				       jint((uint64_t)r->nclients));
		json_object_object_add(o, "threads",
				       jint((uint64_t)r->nthreads));
		if (r->duration_s)
			json_object_object_add(o, "duration_s",
					       jint(r->duration_s));
		else
			json_object_object_add(o, "transactions_per_client",
					       jint(r->nxacts));
		json_object_object_add(o, "elapsed_s", jdouble(res->elapsed_s));
		json_object_object_add(
		    o, "status",
		    json_object_new_string(r->failure[0] ? "failed" : "ok"));
		if (r->failure[0])
			json_object_object_add(
			    o, "error", json_object_new_string(r->failure));
		if (r->stopped_by[0])
			json_object_object_add(
			    o, "stopped_by",
			    json_object_new_string(r->stopped_by));
		json_object_object_add(o, "transactions", jint(res->cnt));
		json_object_object_add(o, "failed", jint(res->failed));
		json_object_object_add(o, "query_mode",
				       json_object_new_string(r->query_mode));
		json_object_object_add(o, "scripts", scripts_json(r));
		json_object_object_add(o, "skipped", jint(res->skipped));
		if (r->latency_limit_ms > 0) {
			json_object_object_add(o, "latency_limit_ms",
					       jdouble(r->latency_limit_ms));
			json_object_object_add(o, "late", jint(res->late));
		}
		if (r->rate > 0) {
			json_object_object_add(o, "rate", jdouble(r->rate));
			json_object_object_add(o, "lag_avg_ms",
					       jdouble(res->lag_avg_ms));
			json_object_object_add(o, "lag_max_ms",
					       jdouble(res->lag_max_ms));
		}
		json_object_object_add(o, "latency_avg_ms",
				       jdouble(res->lat_avg_ms));
		json_object_object_add(o, "latency_stddev_ms",
				       jdouble(res->lat_std_ms));
		json_object_object_add(o, "connection_time_ms",
				       jdouble(r->conn_ms));
		json_object_object_add(o, "tps", jdouble(res->tps));
		struct json_object *p = json_object_new_object();
		json_object_object_add(p, "p50",
				       jdouble((double)res->p50 / 1000));
		json_object_object_add(p, "p90",
				       jdouble((double)res->p90 / 1000));
		json_object_object_add(p, "p99",
				       jdouble((double)res->p99 / 1000));
		json_object_object_add(p, "p99.9",
				       jdouble((double)res->p999 / 1000));
		json_object_object_add(p, "max",
				       jdouble((double)res->max / 1000));
		json_object_object_add(o, "latency_ms", p);
		json_object_object_add(
		    o, "stall_ratio",
		    res->stall_ratio >= 0 ? jdouble(res->stall_ratio) : NULL);
		json_object_object_add(o, "worst_second_tps",
				       jint(res->worst_sec));
		json_object_object_add(o, "median_second_tps",
				       jint(res->median_sec));
		struct json_object *ser = json_object_new_array();
		for (size_t i = 0; i < res->nr_series; i++)
			json_object_array_add(ser, jint(res->series[i]));
		json_object_object_add(o, "tps_series", ser);
		json_object_object_add(o, "tps_series_full_seconds",
				       jint(res->full_secs));
		struct json_object *ck = json_object_new_array();
		pthread_mutex_lock(&r->ckpt_lock);
		for (size_t i = 0; i < r->nr_ckpts; i++) {
			const struct ckpt_event *e = &r->ckpts[i];
			struct json_object *j = json_object_new_object();
			json_object_object_add(j, "at_s", jdouble(e->at_s));
			json_object_object_add(
			    j, "reason", json_object_new_string(e->reason));
			json_object_object_add(j, "buffers_written",
					       jint(e->ci.buffers_written));
			json_object_object_add(
			    j, "write_s", jdouble(ms_to_s(e->ci.write_ms)));
			json_object_object_add(j, "sync_s",
					       jdouble(ms_to_s(e->ci.sync_ms)));
			json_object_object_add(
			    j, "total_s", jdouble(ms_to_s(e->ci.total_ms)));
			json_object_object_add(j, "sync_files",
					       jint(e->ci.files_synced));
			json_object_object_add(
			    j, "longest_sync_s",
			    jdouble(ms_to_s(e->ci.longest_sync_ms)));
			json_object_object_add(
			    j, "average_sync_s",
			    jdouble(ms_to_s(e->ci.average_sync_ms)));
			json_object_object_add(j, "writeback_bytes",
					       jint(e->ci.writeback_bytes));
			if (e->ci.error)
				json_object_object_add(
				    j, "error",
				    json_object_new_string(
					fk_strerror(e->ci.error)));
			json_object_array_add(ck, j);
		}
		pthread_mutex_unlock(&r->ckpt_lock);
		json_object_object_add(o, "checkpoint_events", ck);
		json_object_object_add(o, "checkpoints",
				       jint(b->checkpoints - a->checkpoints));
		json_object_object_add(
		    o, "buffers_checkpoint",
		    jint(b->buffers_checkpoint - a->buffers_checkpoint));
		json_object_object_add(
		    o, "buffers_backend",
		    jint(b->buffers_backend - a->buffers_backend));
		json_object_object_add(
		    o, "backend_fsyncs",
		    jint(b->backend_fsyncs - a->backend_fsyncs));
		json_object_object_add(o, "wal_bytes",
				       jint(b->wal_bytes - a->wal_bytes));
		json_object_object_add(o, "wal_flushes",
				       jint(b->wal_flushes - a->wal_flushes));
	}
	if (res->check_done)
		json_check(o, res);
	results_json_print(o);
	json_object_put(o);
}

/* ---- the result file ---- */

/* PostgreSQL's units: "512MB", "256kB", "0". */
static const char *size_text(uint64_t b, char *buf, size_t len)
{
	static const struct {
		uint64_t mul;
		const char *unit;
	} u[] = {{1ull << 40, "TB"},
		 {1ull << 30, "GB"},
		 {1ull << 20, "MB"},
		 {1ull << 10, "kB"}};
	for (size_t i = 0; b && i < sizeof(u) / sizeof(u[0]); i++)
		if (b % u[i].mul == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", b / u[i].mul,
				 u[i].unit);
			return buf;
		}
	snprintf(buf, len, "%" PRIu64, b);
	return buf;
}

static const char *ms_text(uint64_t ms, char *buf, size_t len)
{
	if (ms == FK_SYNC_SPREAD_AUTO)
		snprintf(buf, len, "auto");
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%" PRIu64 "min", ms / 60000);
	else if (ms && ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
	return buf;
}

static const char *wal_sync_name(int m)
{
	return m == FK_WAL_FSYNC	   ? "fsync"
	       : m == FK_WAL_OPEN_DATASYNC ? "open_datasync"
					   : "fdatasync";
}

/*
 * The "settings" line: the run's options and every store knob.  The
 * knobs the flush preset sets (sorted writes, writeback hints, sync
 * spread, queue compaction, sync_io) are top-level fields only when
 * given on the command line, so that a naive and a smooth run are
 * labelled "flush=naive" and "flush=smooth" by flushkit report, not by
 * each knob the preset changes; all of them are in "store", as used.
 */
static struct json_object *settings_json(struct run *r)
{
	const struct fk_store_opts *o = &r->opts;
	struct json_object *j = json_object_new_object(), *st;
	char b[64];
#define S(k, v) json_object_object_add(j, k, json_object_new_string(v))
#define I(k, v) json_object_object_add(j, k, jint(v))
#define GIVEN(opt) (r->knobs_given & (1ull << ((opt)-OPT_SHARED_BUFFERS)))
	S("bench", "tpcb");
	S("flush", r->flush);
	I("scale", r->tables.scale);
	I("clients", (uint64_t)r->nclients);
	I("threads", (uint64_t)r->nthreads);
	if (r->duration_s)
		I("duration_s", r->duration_s);
	else
		I("transactions_per_client", r->nxacts);
	if (r->progress_s)
		I("progress_s", r->progress_s);
	if (r->rate > 0)
		json_object_object_add(j, "rate",
				       results_json_double(r->rate, 3));
	if (r->latency_limit_ms > 0)
		json_object_object_add(
		    j, "latency_limit_ms",
		    results_json_double(r->latency_limit_ms, 3));
	S("shared_buffers", size_text(o->shared_buffers_bytes, b, sizeof(b)));
	S("checkpoint_timeout",
	  ms_text(o->checkpoint_timeout_ms, b, sizeof(b)));
	S("max_wal_size", size_text(o->max_wal_size_bytes, b, sizeof(b)));
	json_object_object_add(
	    j, "checkpoint_completion_target",
	    results_json_double(o->checkpoint_completion_target, 3));
	if (GIVEN(OPT_CKPT_FLUSH_AFTER))
		S("checkpoint_flush_after",
		  size_text(o->checkpoint_flush_after_bytes, b, sizeof(b)));
	if (GIVEN(OPT_CKPT_SORTED))
		S("checkpoint_sorted", o->checkpoint_sorted ? "on" : "off");
	if (GIVEN(OPT_CKPT_SYNC_SPREAD))
		S("checkpoint_sync_spread",
		  ms_text(o->checkpoint_sync_spread_ms, b, sizeof(b)));
	if (GIVEN(OPT_FSYNCQ_COMPACTION))
		S("fsyncq_compaction", o->fsyncq_compaction ? "on" : "off");
	if (GIVEN(OPT_SYNC_IO))
		S("sync_io", fk_sync_io_name(o->sync_io));
	I("sync_jobs", sync_jobs(r));
	S("full_page_writes", o->full_page_writes ? "on" : "off");
	S("wal_sync_method", wal_sync_name(o->wal_sync_method));
	S("wal_compression", fk_wal_compression_name(o->wal_compression));
	S("data_dir", r->data_dir);
	I("seed", r->seed);

	st = json_object_new_object();
#define SI(k, v) json_object_object_add(st, k, jint(v))
	SI("shared_buffers_bytes", o->shared_buffers_bytes);
	SI("segment_bytes", o->segment_bytes);
	SI("wal_segment_bytes", o->wal_segment_bytes);
	SI("max_wal_size_bytes", o->max_wal_size_bytes);
	SI("checkpoint_timeout_ms", o->checkpoint_timeout_ms);
	json_object_object_add(
	    st, "checkpoint_completion_target",
	    results_json_double(o->checkpoint_completion_target, 3));
	SI("checkpoint_flush_after_bytes", o->checkpoint_flush_after_bytes);
	json_object_object_add(st, "checkpoint_sorted",
			       json_object_new_boolean(o->checkpoint_sorted));
	if (o->checkpoint_sync_spread_ms == FK_SYNC_SPREAD_AUTO)
		json_object_object_add(st, "checkpoint_sync_spread_ms",
				       json_object_new_string("auto"));
	else
		SI("checkpoint_sync_spread_ms", o->checkpoint_sync_spread_ms);
	json_object_object_add(st, "fsyncq_compaction",
			       json_object_new_boolean(o->fsyncq_compaction));
	SI("fsyncq_capacity", o->fsyncq_capacity);
	json_object_object_add(st, "full_page_writes",
			       json_object_new_boolean(o->full_page_writes));
	json_object_object_add(
	    st, "wal_sync_method",
	    json_object_new_string(wal_sync_name(o->wal_sync_method)));
	json_object_object_add(
	    st, "sync_io", json_object_new_string(fk_sync_io_name(o->sync_io)));
	json_object_object_add(st, "wal_compression",
			       json_object_new_string(fk_wal_compression_name(
				   o->wal_compression)));
	SI("sync_jobs", sync_jobs(r));
#undef SI
	json_object_object_add(j, "store", st);
	S("query_mode", r->query_mode);
	if (r->nr_scripts > 1 || r->scripts[0].id != TPCB_SCRIPT_TPCB_LIKE) {
		struct json_object *a = json_object_new_array();
		for (int i = 0; i < r->nr_scripts; i++) {
			char w[96];
			snprintf(w, sizeof(w), "%s@%" PRIu64,
				 tpcb_scripts[r->scripts[i].id].name,
				 r->scripts[i].weight);
			json_object_array_add(a, json_object_new_string(w));
		}
		json_object_object_add(j, "scripts", a);
	}
	if (r->sample_rate > 0)
		json_object_object_add(j, "sampling_rate",
				       results_json_double(r->sample_rate, 6));
	if (r->agg_interval_s)
		I("aggregate_interval_s", r->agg_interval_s);
	if (r->log_paths) {
		/* per-transaction logs are what report plots; aggregate
		 * logs have another layout */
		struct json_object *a = json_object_new_array();
		for (int i = 0; i < r->nthreads; i++)
			json_object_array_add(
			    a, json_object_new_string(r->log_paths[i]));
		json_object_object_add(
		    j, r->agg_interval_s ? "aggregate_log" : "latency_log", a);
	}
#undef S
#undef I
#undef GIVEN
	return j;
}

/* The "summary" line: what flushkit report reads (tps, lat_avg_ms,
 * lat_p99_ms, lat_max_ms, stall_ratio, checkpoints, backend_fsyncs,
 * duration_s) and the rest of the run's totals. */
static struct json_object *summary_json(struct run *r,
					const struct results *res, int status)
{
	const struct fk_store_stats *a = &res->st0, *b = &res->st1;
	struct json_object *j = json_object_new_object();
#define D(k, v, dec) json_object_object_add(j, k, results_json_double(v, dec))
#define I(k, v) json_object_object_add(j, k, jint(v))
	D("tps", res->tps, 3);
	I("transactions", res->cnt);
	I("failed", res->failed);
	if (r->rate > 0 && r->latency_limit_ms > 0)
		I("skipped", res->skipped);
	if (r->latency_limit_ms > 0)
		I("late", res->late);
	if (r->rate > 0) {
		D("lag_avg_ms", res->lag_avg_ms, 3);
		D("lag_max_ms", res->lag_max_ms, 3);
	}
	D("duration_s", res->elapsed_s, 3);
	D("lat_avg_ms", res->lat_avg_ms, 3);
	D("lat_stddev_ms", res->lat_std_ms, 3);
	D("lat_p50_ms", (double)res->p50 / 1000, 3);
	D("lat_p90_ms", (double)res->p90 / 1000, 3);
	D("lat_p99_ms", (double)res->p99 / 1000, 3);
	D("lat_p999_ms", (double)res->p999 / 1000, 3);
	D("lat_max_ms", (double)res->max / 1000, 3);
	if (res->stall_ratio >= 0) {
		D("stall_ratio", res->stall_ratio, 3);
		I("worst_second_tps", res->worst_sec);
		I("median_second_tps", res->median_sec);
	} else {
		json_object_object_add(j, "stall_ratio", NULL);
	}
	I("checkpoints", b->checkpoints - a->checkpoints);
	I("buffers_checkpoint", b->buffers_checkpoint - a->buffers_checkpoint);
	I("buffers_backend", b->buffers_backend - a->buffers_backend);
	I("backend_fsyncs", b->backend_fsyncs - a->backend_fsyncs);
	I("fsyncq_compactions", b->fsyncq_compactions - a->fsyncq_compactions);
	I("wal_bytes", b->wal_bytes - a->wal_bytes);
	I("wal_flushes", b->wal_flushes - a->wal_flushes);
	I("wal_fpi", b->wal_fpi - a->wal_fpi);
	I("wal_fpi_bytes", b->wal_fpi_bytes - a->wal_fpi_bytes);
	json_object_object_add(j, "sync_io",
			       json_object_new_string(sync_io_used(r)));
	I("sync_jobs", sync_jobs(r));
	D("connection_time_ms", r->conn_ms, 3);
	if (res->check_done)
		json_object_object_add(j, "check_ok",
				       json_object_new_boolean(res->check_ok));
	if (b->error)
		json_object_object_add(
		    j, "store_error",
		    json_object_new_string(fk_strerror(b->error)));
	if (r->stopped_by[0])
		json_object_object_add(j, "stopped_by",
				       json_object_new_string(r->stopped_by));
	I("exit_status", (uint64_t)status);
#undef D
#undef I
	return j;
}

static int set_log_paths(struct run *r);

/* Open the result file and write its settings and env lines.  Returns
 * 0 or -1 (reported). */
static int open_results(struct run *r)
{
	struct result_file *rf;
	int ret = results_open(r->results_dir, "tpcb", &rf);
	if (ret) {
		cli_error("open '%s': %s", r->results_dir, fk_strerror(ret));
		return -1;
	}
	if (r->groups && (ret = set_log_paths(r))) {
		cli_error("open '%s': %s", r->results_dir, fk_strerror(ret));
		results_close(rf);
		return -1;
	}
	results_write(rf, "settings", settings_json(r));
	const char *paths[] = {r->data_dir};
	results_env(rf, paths, 1);
	pthread_mutex_lock(&r->ckpt_lock);
	r->rf = rf;
	pthread_mutex_unlock(&r->ckpt_lock);
	return 0;
}

/* Stop recording checkpoints (the store's shutdown checkpoint is not
 * part of the run); returns the result file or NULL. */
static struct result_file *detach_results(struct run *r)
{
	pthread_mutex_lock(&r->ckpt_lock);
	struct result_file *rf = r->rf;
	r->rf = NULL;
	pthread_mutex_unlock(&r->ckpt_lock);
	return rf;
}

/* Close the result file, then say where it is (the last line on
 * stderr).  Returns 0 or -1 (reported). */
static int close_results(struct run *r, struct result_file *rf)
{
	if (!rf)
		return 0;
	char *path = strdup(results_path(rf));
	int ret = results_close(rf);
	fflush(stdout); /* the path comes last, after the summary */
	if (ret)
		cli_error("write '%s': %s", path ? path : r->results_dir,
			  fk_strerror(ret));
	else if (path)
		fprintf(stderr, "result file: %s\n", path);
	free(path);
	return ret ? -1 : 0;
}

/*
 * -l: one log file per thread, named as pgbench names them: PREFIX.PID
 * for thread 0, PREFIX.PID.N for thread N, in the current directory
 * unless the prefix says otherwise; the clients are dealt out to the
 * threads in blocks as pgbench deals them.
 */
static int open_logs(struct run *r)
{
	char name[4096];
	r->groups = calloc((size_t)r->nthreads, sizeof(*r->groups));
	if (!r->groups) {
		cli_error("out of memory");
		return -1;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int dealt = 0;
	for (int i = 0; i < r->nthreads; i++) {
		struct tgroup *g = &r->groups[i];
		pthread_mutex_init(&g->lock, NULL);
		g->lock_ok = 1;
		tpcb_rng_seed(&g->sample_rng, r->seed ^ (0x9e3779b97f4a7c15ull *
							 (uint64_t)(i + 1)));
		agg_reset(&g->agg, (int64_t)ts.tv_sec);
		if (i == 0)
			snprintf(name, sizeof(name), "%s.%d", r->log_prefix,
				 (int)getpid());
		else
			snprintf(name, sizeof(name), "%s.%d.%d", r->log_prefix,
				 (int)getpid(), i);
		g->path = strdup(name);
		int fd = open(
		    name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0644);
		g->log = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!g->log || !g->path) {
			cli_error("could not open logfile \"%s\": %s", name,
				  strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		int n = (r->nclients - dealt + r->nthreads - i - 1) /
			(r->nthreads - i);
		for (int k = 0; k < n; k++)
			r->clients[dealt + k].grp = g;
		dealt += n;
	}
	return 0;
}

/* The path of @to relative to the directory @from (both absolute and
 * canonical), in @out. */
static void relative_path(const char *from, const char *to, char *out,
			  size_t len)
{
	size_t common = 0, i = 0;
	/* the longest common prefix that ends at a component boundary */
	for (; from[i] && from[i] == to[i]; i++)
		if (from[i] == '/')
			common = i;
	if (!from[i] && (to[i] == '/' || !to[i]))
		common = i;
	size_t o = 0;
	out[0] = '\0';
	for (const char *p = from + common; *p; p++)
		if (*p == '/' && o + 4 < len) {
			memcpy(out + o, "../", 4);
			o += 3;
		}
	const char *rest = to + common;
	if (*rest == '/')
		rest++;
	snprintf(out + o, len - o, "%s", rest);
}

/* For the result file: each log's path relative to the directory of
 * the result file (what flushkit report reads them from), so that a
 * results folder copied together with its logs still plots. */
static int set_log_paths(struct run *r)
{
	char dir[PATH_MAX], log[PATH_MAX], rel[2 * PATH_MAX];
	if (!realpath(r->results_dir, dir))
		return -errno;
	r->log_paths = calloc((size_t)r->nthreads, sizeof(*r->log_paths));
	if (!r->log_paths)
		return -ENOMEM;
	for (int i = 0; i < r->nthreads; i++) {
		if (!realpath(r->groups[i].path, log))
			return -errno;
		if (!strcmp(dir, "/"))
			snprintf(rel, sizeof(rel), "%s", log + 1);
		else
			relative_path(dir, log, rel, sizeof(rel));
		if (!(r->log_paths[i] = strdup(rel)))
			return -ENOMEM;
	}
	return 0;
}

/* Close the -l logs, the last aggregate first.  Returns 0 or -1. */
static int close_logs(struct run *r)
{
	int ret = 0;
	for (int i = 0; r->groups && i < r->nthreads; i++) {
		struct tgroup *g = &r->groups[i];
		if (g->log && r->agg_interval_s && g->agg.cnt + g->agg.skipped)
			agg_print(g->log, &g->agg);
		if (g->log && fclose(g->log)) {
			cli_error("write '%s': %s", g->path, strerror(errno));
			ret = -1;
		}
		if (g->lock_ok)
			pthread_mutex_destroy(&g->lock);
		free(g->path);
	}
	free(r->groups);
	r->groups = NULL;
	return ret;
}

static int run_check(struct run *r, struct results *res)
{
	int ret = tpcb_sums(r->store, &r->tables, &res->sums);
	if (ret) {
		cli_error("check: read '%s': %s", r->data_dir,
			  fk_strerror(ret));
		return ret;
	}
	res->check_done = 1;
	res->check_ok = tpcb_sums_ok(&res->sums);
	return 0;
}

static int do_run(struct run *r)
{
	struct results res;
	int status = FK_EXIT_OK, ret, started = 0, summarize = 0;
	memset(&res, 0, sizeof(res));

	uint64_t t0 = fk_now_ns();
	if (open_store(r))
		return FK_EXIT_FAILURE;
	ret = tpcb_open(r->store, &r->tables);
	if (ret) {
		if (ret == -ENOENT)
			cli_error("'%s' has no tpcb tables; run 'flushkit "
				  "bench tpcb -i' first",
				  r->data_dir);
		else if (ret == -FK_ECORRUPT)
			cli_error("the tpcb tables in '%s' do not make a "
				  "complete database (a load with -i that did "
				  "not finish, or tables of another program): "
				  "their row sizes or counts fit no scale; "
				  "'flushkit bench tpcb -i' loads them anew",
				  r->data_dir);
		else
			cli_error("open tables in '%s': %s", r->data_dir,
				  fk_strerror(ret));
		close_store(r);
		return FK_EXIT_FAILURE;
	}
	r->conn_ms = (double)(fk_now_ns() - t0) / 1e6;

	if (r->check == 2) {
		if (run_check(r, &res))
			status = FK_EXIT_FAILURE;
		goto out;
	}

	r->clients = calloc((size_t)r->nclients, sizeof(*r->clients));
	if (!r->clients) {
		cli_error("out of memory");
		status = FK_EXIT_FAILURE;
		goto out;
	}
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		c->id = i;
		c->run = r;
		tpcb_rng_seed(&c->rng, r->seed + 0x632be59bd9b4e019ull *
						     (uint64_t)(i + 1));
		pthread_mutex_init(&c->lock, NULL);
		if (fk_hist_init(&c->hist)) {
			cli_error("out of memory");
			status = FK_EXIT_FAILURE;
			goto out;
		}
		c->hist_ok = 1;
		c->ss = calloc((size_t)r->nr_scripts, sizeof(*c->ss));
		if (!c->ss) {
			cli_error("out of memory");
			status = FK_EXIT_FAILURE;
			goto out;
		}
	}
	if (r->use_log && open_logs(r)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	probe_sync_io(r);
	if (r->results_dir && open_results(r)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}

	fk_store_get_stats(r->store, &res.st0);
	pthread_mutex_lock(&r->ckpt_lock);
	r->nr_ckpts = 0; /* only checkpoints of the run */
	r->ckpt_sync_io = NULL;
	if (r->rf)
		results_reset_clock(r->rf);
	r->start_ns = fk_now_ns();
	pthread_mutex_unlock(&r->ckpt_lock);
	if (r->rf) {
		const char *paths[] = {r->data_dir};
		ret = results_monitor_start(r->rf, paths, 1, 1000);
		if (ret)
			cli_warn("no monitor samples for '%s': %s", r->data_dir,
				 fk_strerror(ret));
	}
	for (; started < r->nclients; started++) {
		struct client *c = &r->clients[started];
		ret = pthread_create(&c->thread, NULL, client_main, c);
		if (ret) {
			run_failed(r, 1, "create client thread: %s",
				   strerror(ret));
			atomic_store(&r->stop, 1);
			status = FK_EXIT_FAILURE;
			break;
		}
	}
	/* -P lines every progress_s, result progress lines every second. */
	uint64_t rlast = r->start_ns;
	if ((r->progress_s || r->rf) && started == r->nclients) {
		uint64_t step = r->progress_s * 1000000000ull;
		uint64_t next = step ? r->start_ns + step : UINT64_MAX;
		uint64_t last = r->start_ns;
		uint64_t rnext =
		    r->rf ? r->start_ns + 1000000000ull : UINT64_MAX;
		for (;;) {
			/* Wake at least every 100 ms to notice the end. */
			uint64_t now = fk_now_ns();
			uint64_t due = next < rnext ? next : rnext;
			if (now < due) {
				uint64_t t = due - now > 100000000ull
						 ? now + 100000000ull
						 : due;
				sleep_until_ns(t);
			}
			int all_done = atomic_load(&r->finished) == r->nclients;
			now = fk_now_ns();
			if (now >= rnext) {
				result_interval(r, rlast, rnext);
				rlast = rnext;
				rnext += 1000000000ull;
			}
			if (now >= next) {
				progress_report(
				    r, (double)(next - r->start_ns) / 1e9,
				    (double)(next - last) / 1e9);
				last = next;
				next += step;
			}
			if (all_done || atomic_load(&r->stop))
				break;
		}
	}
	uint64_t end_ns = r->start_ns;
	for (int i = 0; i < started; i++) {
		struct client *c = &r->clients[i];
		pthread_join(c->thread, NULL);
		if (c->end_ns > end_ns)
			end_ns = c->end_ns;
		if (c->error) {
			run_failed(r, 1, "client %d: commit: %s", c->id,
				   fk_strerror(c->error));
			status = FK_EXIT_FAILURE;
		}
	}
	fk_store_get_stats(r->store, &res.st1);
	if (res.st1.error && status == FK_EXIT_OK) {
		run_failed(r, 0, "store '%s': %s", r->data_dir,
			   fk_strerror(res.st1.error));
		status = FK_EXIT_FAILURE;
	}
	/* The last, partial second, if it is long enough to be a rate. */
	if (r->rf && end_ns > rlast && end_ns - rlast >= 100000000ull)
		result_interval(r, rlast, end_ns);
	if (r->rf)
		results_monitor_stop(r->rf);
	if (collect(r, &res, end_ns)) {
		run_failed(r, 0, "out of memory");
		status = FK_EXIT_FAILURE;
		goto out;
	}
	if (r->check && status == FK_EXIT_OK && run_check(r, &res)) {
		if (!r->failure[0]) /* run_check printed why */
			snprintf(r->failure, sizeof(r->failure),
				 "check: read '%s' failed", r->data_dir);
		status = FK_EXIT_FAILURE;
	}
	if (res.check_done && !res.check_ok) {
		if (!r->failure[0])
			snprintf(r->failure, sizeof(r->failure),
				 "consistency check FAILED");
		status = FK_EXIT_FAILURE;
	}
	if (r->json)
		print_json(r, &res, 1);
	else
		print_summary(r, &res);
	fflush(stdout);
	if (r->stopped_by[0])
		cli_error("Run was aborted; the above results are incomplete.");
	else if (r->failure[0])
		cli_error("the run failed (%s); the above results are not a "
			  "result.",
			  r->failure);
	summarize = 1;
out:
	if (r->check == 2 && res.check_done) {
		if (r->json)
			print_json(r, &res, 0);
		else
			print_check(&res);
	}
	if (res.check_done && !res.check_ok)
		status = FK_EXIT_FAILURE;
	struct result_file *rf = detach_results(r);
	if (close_store(r)) {
		status = FK_EXIT_FAILURE;
		if (!r->failure[0])
			snprintf(r->failure, sizeof(r->failure),
				 "close store '%s' failed", r->data_dir);
	}
	/* After the close: a store that cannot shut down cleanly fails the
	 * run, and its result file says so. */
	if (rf && summarize)
		results_summary(rf, summary_json(r, &res, status),
				r->failure[0] ? r->failure : NULL);
	if (close_results(r, rf))
		status = FK_EXIT_FAILURE;
	if (r->clients) {
		for (int i = 0; i < r->nclients; i++) {
			struct client *c = &r->clients[i];
			free(c->ss);
			if (c->hist_ok)
				fk_hist_release(&c->hist);
			free(c->per_sec);
			pthread_mutex_destroy(&c->lock);
		}
		free(r->clients);
	}
	if (close_logs(r))
		status = FK_EXIT_FAILURE;
	if (r->log_paths) {
		for (int i = 0; i < r->nthreads; i++)
			free(r->log_paths[i]);
		free(r->log_paths);
	}
	free(res.series);
	return status;
}

int cmd_bench_tpcb(int argc, char **argv)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	int ret = parse_args(&r, argc, argv);
	if (ret >= 0)
		return ret;
	pthread_mutex_init(&r.ckpt_lock, NULL);
	ret = r.init ? do_init(&r) : do_run(&r);
	pthread_mutex_destroy(&r.ckpt_lock);
	free(r.ckpts);
	return ret;
}
