// SPDX-License-Identifier: MIT
/*
 * options.c - bench tpcb's option parsing (pgbench's options, the run's
 * own, and the store knobs of knobs.c) and its --help.
 */
#include "tpcb.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flushkit bench tpcb -i [-s SCALE] [OPTIONS] [DBNAME]\n"
	    "       flushkit bench tpcb [OPTIONS] [DBNAME]\n"
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
	    "  -v, --vacuum-all         accepted (nothing to vacuum)\n"
	    "  -q, --quiet              accepted (-i prints no per-row "
	    "progress)\n"
	    "  -C, --connect            accepted, ignored with a note: the "
	    "store is\n"
	    "                           embedded, there is no connection to "
	    "make\n"
	    "      --max-tries=N        shown as pgbench's; the store has no "
	    "serialization\n"
	    "                           failures, so nothing is retried\n"
	    "  -f, -D                   refused: custom SQL scripts and their "
	    "variables\n"
	    "                           need SQL (use -b)\n"
	    "  DBNAME                   accepted, ignored with a note (the "
	    "data is --data-dir)\n"
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
	    "      --device=DEVICE      run on a fresh ext4 on its own disk: "
	    "load -s\n"
	    "                           SCALE there (as -i), run, remove "
	    "it; hdd, ssd,\n"
	    "                           nvme, ram (lab disks), native, "
	    "throttle:BPS:IOPS\n"
	    "      --flush=naive|smooth flushing preset (default smooth)\n"
	    "      --log-checkpoints[=on|off] checkpoint lines on stderr "
	    "(default on)\n"
	    "      (--jobs below is not pgbench's --jobs, which is -j here: "
	    "it is the\n"
	    "      checkpoint's fsyncs in flight, as --jobs of flushkit sync "
	    "and cp)\n");
	tpcb_knobs_help(f);
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
	OPT_LOG_CKPT,
	OPT_MAX_TRIES,
	OPT_DEVICE,
	OPT_KNOB = 512, /* store knob i of tpcb_knobs: OPT_KNOB + i */
};

/* The options but the store knobs (tpcb_knobs), which long_opts() adds. */
static const struct option base_opts[] = {
    {"initialize", no_argument, NULL, 'i'},
    {"scale", required_argument, NULL, 's'},
    {"client", required_argument, NULL, 'c'},
    {"results", required_argument, NULL, OPT_RESULTS},
    {"no-results", no_argument, NULL, OPT_NO_RESULTS},
    {"device", required_argument, NULL, OPT_DEVICE},
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
    {"vacuum-all", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"connect", no_argument, NULL, 'C'},
    {"max-tries", required_argument, NULL, OPT_MAX_TRIES},
    {"file", required_argument, NULL, 'f'},
    {"define", required_argument, NULL, 'D'},
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
    {"log-checkpoints", optional_argument, NULL, OPT_LOG_CKPT},
};

#define NR_BASE_OPTS (sizeof(base_opts) / sizeof(base_opts[0]))
#define SHORT_OPTS ":is:c:j:T:t:P:R:L:lhb:NSM:nrvqCf:D:"

int tpcb_option_known(const char *word)
{
	if (word[0] != '-' || !word[1])
		return 0; /* a value */
	if (word[1] != '-')
		return word[1] != ':' && strchr(SHORT_OPTS, word[1]) ? 0
								     : -EINVAL;
	const char *name = word + 2;
	size_t n = strcspn(name, "=");
	if (tpcb_knob_by_option(name))
		return 0;
	for (size_t i = 0; i < NR_BASE_OPTS; i++)
		if (strlen(base_opts[i].name) == n &&
		    !strncmp(base_opts[i].name, name, n))
			return 0;
	return -EINVAL;
}

int tpcb_option_names(const char *word, const char **names, int max)
{
	int n = 0;
	if (word[0] != '-' || !word[1] || tpcb_option_known(word))
		return 0;
	if (word[1] == '-') {
		const char *name = word + 2;
		size_t len = strcspn(name, "=");
		const struct tpcb_knob *k = tpcb_knob_by_option(name);
		if (k && max > 0)
			names[n++] = k->option;
		for (size_t i = 0; !k && i < NR_BASE_OPTS && n < max; i++)
			if (strlen(base_opts[i].name) == len &&
			    !strncmp(base_opts[i].name, name, len))
				names[n++] = base_opts[i].name;
		return n;
	}
	/* A bundle: options up to the first that takes a value. */
	for (const char *p = word + 1; *p && n < max; p++) {
		const char *o = strchr(SHORT_OPTS, *p);
		if (*p == ':' || !o)
			break;
		for (size_t i = 0; i < NR_BASE_OPTS; i++)
			if (base_opts[i].val == *p) {
				names[n++] = base_opts[i].name;
				break;
			}
		if (o[1] == ':')
			break;
	}
	return n;
}

/* base_opts, then one option per row of the knob table, then the end. */
static const struct option *long_opts(void)
{
	static struct option all[NR_BASE_OPTS + TPCB_MAX_KNOBS + 1];
	size_t n = 0;
	for (size_t i = 0; i < NR_BASE_OPTS; i++)
		all[n++] = base_opts[i];
	for (size_t i = 0; i < tpcb_nr_knobs; i++)
		all[n++] =
		    (struct option){tpcb_knobs[i].option, required_argument,
				    NULL, OPT_KNOB + (int)i};
	all[n] = (struct option){NULL, 0, NULL, 0};
	return all;
}

/* A store knob given on the command line, applied after the preset. */
struct knob {
	const struct tpcb_knob *k;
	const char *val;
};

static int parse_double(const char *s, double *out)
{
	return cli_parse_decimal(s, out);
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
			return cli_usage_error("bench tpcb",
					       "invalid weight specification: "
					       "%s",
					       at);
		}
		if (w > INT32_MAX) {
			return cli_usage_error("bench tpcb",
					       "weight specification out of "
					       "range (0 .. %d): %" PRIu64,
					       INT32_MAX, w);
		}
	}
	snprintf(name, sizeof(name), "%.*s", (int)(n < 63 ? n : 63), arg);
	int id = tpcb_script_find(name);
	if (id == -EEXIST) {
		int k = 0;
		for (int i = 0; i < TPCB_NR_SCRIPTS; i++)
			k += !strncmp(tpcb_scripts[i].name, name, strlen(name));
		/* pgbench's list of the builtins between the two lines of
		 * a usage error. */
		fprintf(stderr,
			"flushkit bench tpcb: ambiguous builtin name: %d "
			"builtin scripts found for prefix \"%s\"\n",
			k, name);
		list_builtins();
		return cli_usage_try("bench tpcb");
	}
	if (id < 0) {
		fprintf(stderr,
			"flushkit bench tpcb: no builtin script found for "
			"name \"%s\"\n",
			name);
		list_builtins();
		return cli_usage_try("bench tpcb");
	}
	if (r->nr_scripts == MAX_SCRIPTS) {
		return cli_usage_error("bench tpcb",
				       "at most %d SQL scripts are allowed",
				       MAX_SCRIPTS);
	}
	r->scripts[r->nr_scripts].id = id;
	r->scripts[r->nr_scripts++].weight = w;
	r->total_weight += w;
	return -1;
}

/* Returns -1 to go on, or an exit status. */
int tpcb_parse_args(struct run *r, int argc, char **argv)
{
	struct knob knobs[32];
	size_t nr_knobs = 0;
	int have_scale = 0, have_run = 0, have_init_bad = 0, connect_noted = 0;
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
	const struct option *lo = long_opts();
	while ((c = getopt_long(argc, argv, SHORT_OPTS, lo, &li)) != -1) {
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
				return cli_usage_error("bench tpcb",
						       "invalid number of "
						       "threads: \"%s\"",
						       optarg);
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
				return cli_usage_error("bench tpcb",
						       "invalid query mode "
						       "(-M): \"%s\"",
						       optarg);
			}
			r->query_mode = optarg;
			have_init_bad = 1;
			break;
		case 'n':
		case 'v':
			break; /* no vacuum: nothing to vacuum here */
		case 'q':
			break; /* -i prints no per-row progress anyway */
		case 'C':
			if (!connect_noted)
				cli_warn(
				    "bench tpcb: -C ignored: the page store "
				    "is embedded, there is no connection "
				    "to make per transaction");
			connect_noted = 1;
			have_run = have_init_bad = 1;
			break;
		case OPT_MAX_TRIES:
			if (parse_pos_int(optarg, &u, INT32_MAX))
				goto bad_value;
			r->max_tries = (int)u;
			have_run = have_init_bad = 1;
			break;
		case 'f':
		case 'D':
			return cli_usage_error(
			    "bench tpcb",
			    "-%c: custom SQL scripts (-f) and "
			    "their variables (-D) need SQL, and the page "
			    "store has none; its builtin scripts are -b "
			    "tpcb-like, simple-update (-N) and "
			    "select-only (-S)",
			    c);
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
				return cli_usage_error(
				    "bench tpcb",
				    "invalid number of "
				    "seconds for aggregation "
				    "(--aggregate-interval): \"%s\"",
				    optarg);
			}
			have_run = have_init_bad = 1;
			break;
		case OPT_SAMPLING_RATE:
			if (parse_double(optarg, &r->sample_rate) ||
			    r->sample_rate <= 0.0 || r->sample_rate > 1.0) {
				return cli_usage_error(
				    "bench tpcb",
				    "invalid sampling rate "
				    "(--sampling-rate, more than 0 and "
				    "at most 1): \"%s\"",
				    optarg);
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
		case OPT_DEVICE:
			if (disk_profile_arg("bench tpcb", "--device", optarg,
					     &r->device))
				return FK_EXIT_USAGE;
			r->has_device = 1;
			break;
		case OPT_FLUSH:
			if (strcmp(optarg, "naive") && strcmp(optarg, "smooth"))
				goto bad_value;
			r->flush = optarg;
			break;
		case OPT_LOG_CKPT:
			if (optarg &&
			    cli_parse_bool(optarg, &r->log_checkpoints))
				goto bad_value;
			if (!optarg)
				r->log_checkpoints = 1;
			break;
		case ':':
		case '?':
			return cli_option_error("bench tpcb", c, argv, lo);
		default:
			if (c < OPT_KNOB || c >= OPT_KNOB + (int)tpcb_nr_knobs)
				break; /* every option has its case */
			if (nr_knobs == sizeof(knobs) / sizeof(knobs[0])) {
				return cli_usage_error("bench tpcb",
						       "too many options");
			}
			knobs[nr_knobs].k = &tpcb_knobs[c - OPT_KNOB];
			knobs[nr_knobs++].val = optarg;
			r->knobs_given |= 1ull << (c - OPT_KNOB);
			break;
		}
		li = -1;
		continue;
	bad_value : {
		/* A block: a label cannot label a declaration before C23
		 * (clang refuses it; gcc took it as an extension). */
		char name[64];
		if (li >= 0)
			snprintf(name, sizeof(name), "--%s", lo[li].name);
		else
			snprintf(name, sizeof(name), "-%c", c);
		return cli_bad_value("bench tpcb", name, optarg, NULL);
	}
	}
	/* pgbench's trailing database name: no database here. */
	if (optind + 1 < argc) {
		return cli_usage_error("bench tpcb",
				       "too many command-line arguments (first "
				       "is \"%s\")",
				       argv[optind + 1]);
	}
	if (optind < argc)
		cli_warn("bench tpcb: database name '%s' ignored: the data is "
			 "in --data-dir",
			 argv[optind]);
	if (r->duration_s && r->nxacts) {
		return cli_usage_error(
		    "bench tpcb", "specify either a number of transactions "
				  "(-t) or a duration (-T), not both");
	}
	if (r->init && have_init_bad) {
		return cli_usage_error("bench tpcb",
				       "-i takes only -s, --data-dir and store "
				       "options");
	}
	if (r->has_device && (r->init || (!have_run && r->check))) {
		return cli_usage_error("bench tpcb",
				       "--device makes a store for one run "
				       "(loaded at -s, run, removed): not "
				       "with -i or --check alone");
	}
	if (!r->init && have_scale && !r->has_device)
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
		return cli_usage_error(
		    "bench tpcb",
		    "log sampling (--sampling-rate) is "
		    "allowed only when logging transactions (-l)");
	}
	if (r->sample_rate > 0 && r->agg_interval_s) {
		return cli_usage_error(
		    "bench tpcb",
		    "log sampling (--sampling-rate) and "
		    "aggregation (--aggregate-interval) cannot be used "
		    "at the same time");
	}
	if (r->agg_interval_s && !r->use_log) {
		return cli_usage_error("bench tpcb",
				       "log aggregation is allowed only when "
				       "actually logging transactions");
	}
	if (r->agg_interval_s && r->duration_s &&
	    r->agg_interval_s > r->duration_s) {
		return cli_usage_error(
		    "bench tpcb",
		    "number of seconds for aggregation "
		    "(%" PRIu64 ") must not be higher than test duration "
		    "(%" PRIu64 ")",
		    r->agg_interval_s, r->duration_s);
	}
	if (r->agg_interval_s && r->duration_s &&
	    r->duration_s % r->agg_interval_s) {
		return cli_usage_error(
		    "bench tpcb",
		    "duration (%" PRIu64 ") must be a "
		    "multiple of aggregation interval (%" PRIu64 ")",
		    r->duration_s, r->agg_interval_s);
	}
	if (!r->nr_scripts && !r->init)
		add_script(r, "tpcb-like");
	if (r->nr_scripts && !r->total_weight) {
		return cli_usage_error("bench tpcb",
				       "total script weight must not be zero");
	}
	if (r->check) {
		for (int i = 0; i < r->nr_scripts; i++)
			if (r->scripts[i].id == TPCB_SCRIPT_SIMPLE_UPDATE) {
				return cli_usage_error(
				    "bench tpcb",
				    "--check compares the "
				    "teller and branch sums, which "
				    "simple-update (-N) leaves alone");
			}
	}

	fk_store_opts_init(&r->opts);
	if (fk_store_opts_preset(&r->opts, r->flush)) {
		return cli_usage_error("bench tpcb",
				       "unknown flush preset '%s'", r->flush);
	}
	for (size_t i = 0; i < nr_knobs; i++) {
		const struct tpcb_knob *k = knobs[i].k;
		if (!tpcb_knob_apply(k, &r->opts, knobs[i].val))
			continue;
		char name[64];
		snprintf(name, sizeof(name), "--%s", k->option);
		if (k->kind == KNOB_SYNC_IO)
			return cli_bad_sync_io("bench tpcb", knobs[i].val);
		if (k->kind == KNOB_JOBS)
			return cli_bad_jobs("bench tpcb", knobs[i].val);
		return cli_bad_value("bench tpcb", name, knobs[i].val,
				     k->kind == KNOB_FRACTION
					 ? "a decimal number more than 0 and "
					   "at most 1"
					 : NULL);
	}
	r->nbuffers = r->opts.shared_buffers_bytes / FK_PAGE_SIZE;
	return -1;
}
