/* SPDX-License-Identifier: MIT */
/*
 * tpcb.h - bench tpcb's own header: the run (options and state), its
 * clients, and the routines its files share.  The files, by concern:
 *   cmd-bench-tpcb.c  the command: store callbacks, -i, the run, --check
 *   options.c         option parsing and --help
 *   knobs.[ch]        the store knob table
 *   clients.c         the client threads, per-second counts, intervals
 *                     (-P lines, the result file's progress lines) and
 *                     the run's totals (collect)
 *   output.c          the text summary (pgbench's layout) and --json
 *   result-file.c     the result file (settings, summary) and -l logs
 *   workload.[ch]     the TPC-B tables and transactions
 * Calls go one way, down this list: cmd-bench-tpcb.c calls all the
 * others; result-file.c calls clients.c (the -l aggregates), output.c,
 * knobs and workload; clients.c, options.c and output.c call only knobs
 * and workload (t-layers.sh checks that no file calls back up).
 * See cmd-bench-tpcb.c for the threads and what they share.
 */
#ifndef FK_TPCB_H
#define FK_TPCB_H

#include "cli.h"
#include "disk.h"
#include "knobs.h"
#include "reader.h"
#include "results.h"
#include "workload.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

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
	int max_tries;		/* --max-tries, shown; 1 by default */
	int progress_timestamp; /* --progress-timestamp */
	uint64_t agg_interval_s;
	double sample_rate;    /* 0: every transaction */
	struct tgroup *groups; /* nthreads of them, with -l */
	double rate;	       /* -R, tps over all clients; 0 = none */
	double latency_limit_ms;
	int json;
	int check;
	int log_checkpoints;
	const char *data_dir;
	struct disk_profile device; /* --device: the run's own disk */
	int has_device;
	char device_dir[1100]; /* its data directory */
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
	uint64_t backend_fsyncs0; /* fk_store_stats' at the run's start */

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

/* The run's totals (collect). */
struct results {
	uint64_t cnt, skipped, late, failed;
	double lat_avg_ms, lat_std_ms, lag_avg_ms, lag_max_ms;
	double elapsed_s, tps;
	uint64_t p50, p90, p99, p999, max; /* microseconds */
	uint32_t *series;		   /* commits per second */
	size_t nr_series; /* seconds recorded (last may be partial) */
	size_t full_secs;
	struct results_stall stall; /* of the full seconds, marked with
				     * the checkpoints that ran in them */
	struct fk_store_stats st0, st1;
	int check_done, check_ok;
	struct tpcb_sums sums;
};

static inline double ms_to_s(uint64_t ms)
{
	return (double)ms / 1000.0;
}

/* Whether @v is a whole number (a median of an odd count of seconds). */
static inline int is_whole(double v)
{
	return v == floor(v);
}

/* --json numbers: milliseconds, seconds and rates to 3 decimals */
static inline struct json_object *jdouble(double v)
{
	return results_json_double(v, 3);
}

static inline struct json_object *jint(uint64_t v)
{
	return json_object_new_int64((int64_t)v);
}

/* options.c: parse @argv into @r; -1 to go on, else an exit status
 * (the message printed). */
int tpcb_parse_args(struct run *r, int argc, char **argv);

/* clients.c */
void tpcb_sleep_until_ns(uint64_t t);
void tpcb_agg_print(FILE *f, const struct agg *a);
void tpcb_agg_reset(struct agg *a, int64_t start_s);
int tpcb_collect(struct run *r, struct results *res, uint64_t end_ns);
int tpcb_ckpt_during(struct run *r, uint64_t begin_ns, uint64_t end_ns);
void tpcb_progress_report(struct run *r, double at_s, double interval_s);
void tpcb_result_interval(struct run *r, uint64_t begin_ns, uint64_t end_ns);
void *tpcb_client_main(void *arg);

/* output.c */
void tpcb_print_check(const struct results *res);
void tpcb_print_json(struct run *r, const struct results *res, int ran);
void tpcb_print_summary(struct run *r, const struct results *res);
void tpcb_probe_sync_io(struct run *r);
const char *tpcb_sync_io_used(struct run *r);

/* result-file.c */
int tpcb_close_logs(struct run *r);
int tpcb_close_results(struct run *r, struct result_file *rf);
struct result_file *tpcb_detach_results(struct run *r);
int tpcb_open_logs(struct run *r);
int tpcb_open_results(struct run *r);
struct json_object *tpcb_summary_json(struct run *r, const struct results *res,
				      int status);

#endif
