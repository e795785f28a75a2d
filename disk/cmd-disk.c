// SPDX-License-Identifier: MIT
/*
 * cmd-disk.c - `flushkit disk`: the lab disk, a modelled block device
 * (a loop device with direct I/O on the image of flushkit-diskd, a FUSE
 * daemon whose replies follow a timing model; disk/labdisk.h).
 *
 *   flushkit disk create --model=MODEL [--size SIZE] [--slowdown K]
 *                        [--backing FILE] [--no-write-cache] [--name N]
 *                        [--write-log FILE [--write-log-max SIZE]]
 *   flushkit disk list
 *   flushkit disk stats DEV [--json]
 *   flushkit disk cut DEV [--mode=drop|subset|reorder] [--seed N]
 *   flushkit disk poweron DEV
 *   flushkit disk fault DEV RULE...
 *   flushkit disk destroy DEV|--all
 *   flushkit disk cleanup
 *   flushkit disk replay LOG [--to-flush N | --to-entry N | --to-mark M]
 *                        [--subset [--seed S]] IMAGE-OUT
 *   flushkit disk replay LOG --list
 *
 * replay is a subcommand, not a test helper: a failed replay trial
 * prints its point and seed, and a person rebuilds that image with it
 * to mount and look at (the tests call the same code, disk/wlog.c).
 * DEV is /dev/loopN or the disk's name.  Exit 0, 1 (failure), 2 (usage,
 * a bad model or option).
 */
#include "cli.h"
#include "labdisk.h"
#include "model.h"
#include "wlog.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit disk create --model=MODEL [--size SIZE] "
		"[--slowdown K]\n"
		"                            [--backing FILE] "
		"[--no-write-cache] [--name N]\n"
		"                            [--write-log FILE "
		"[--write-log-max SIZE]]\n"
		"       flushkit disk list\n"
		"       flushkit disk stats DEV [--json]\n"
		"       flushkit disk cut DEV [--mode=drop|subset|reorder] "
		"[--seed N]\n"
		"       flushkit disk poweron DEV\n"
		"       flushkit disk fault DEV RULE...\n"
		"       flushkit disk destroy DEV|--all\n"
		"       flushkit disk cleanup\n"
		"       flushkit disk replay LOG [--to-flush N | --to-entry N "
		"| --to-mark M]\n"
		"                            [--subset [--seed S]] "
		"IMAGE-OUT\n"
		"       flushkit disk replay LOG --list\n\n"
		"A modelled block device: a loop device (direct I/O) on the "
		"image of\nflushkit-diskd, a FUSE daemon that answers each "
		"request when its timing\nmodel says it completes; RAM-backed "
		"(a memfd) unless --backing.\n"
		"create prints the device (/dev/loopN).  DEV: /dev/loopN or "
		"the disk's name.\n\n"
		"  --model=MODEL     ");
	for (size_t i = 0; disk_model_at(i); i++)
		fprintf(f, "%s%s", i ? ", " : "", disk_model_at(i)->name);
	fprintf(f,
		" (throttle:BPS:IOPS)\n"
		"  --size SIZE       the disk's size (default 4G)\n"
		"  --slowdown K      every model time K times longer\n"
		"  --backing FILE    the durable image in FILE, not in RAM\n"
		"  --no-write-cache  write-through: a write is durable when "
		"done\n"
		"  --name N          the disk's name (default disk0, disk1, "
		"...)\n"
		"  --write-log FILE  log every write, FLUSH and mark to FILE "
		"(0600, new)\n"
		"  --write-log-max SIZE  the log's bound (default 256M); "
		"full: it ends\n"
		"  --to-flush N      replay: the image at the N-th FLUSH "
		"(default: all)\n"
		"  --to-entry N      replay: after the log's first N "
		"entries\n"
		"  --to-mark M       replay: up to the mark M (ctl "
		"\"log mark M\")\n"
		"  --subset          replay: the writes after the last FLUSH "
		"before the\n"
		"                    point as a random subset of their 4 KiB "
		"blocks\n"
		"  --seed S          replay --subset: its seed (default: the "
		"clock; printed)\n"
		"  --list            replay: print the entries\n"
		"  --mode=MODE       cut: drop (lose every unflushed block, "
		"default),\n"
		"                    subset (keep a random subset), reorder "
		"(a random\n"
		"                    prefix of the cached writes in a random "
		"order)\n"
		"  --seed N          cut: the random choice (default: the "
		"clock; printed)\n"
		"  --json            stats as a JSON object\n\n"
		"RULE (fault): fail OPS ERR OFF LEN | after N OPS ERR | all "
		"OPS ERR |\n"
		"              clear | reset (OPS: r, w, f; ERR: EIO, ENOSPC, "
		"...).\n"
		"Each RULE argument with a space is one line; else all "
		"arguments form one.\n");
}

static int open_dev(const char *which, struct labdisk *d)
{
	int r = labdisk_open(which, d);
	if (r)
		return r;
	if (!d->alive) {
		cli_error("disk: %s: its daemon is gone (flushkit disk "
			  "cleanup)",
			  which);
		return -ENOTCONN;
	}
	return 0;
}

static int do_create(int argc, char **argv)
{
	enum {
		O_MODEL = 256,
		O_SIZE,
		O_SLOW,
		O_BACK,
		O_NOWC,
		O_NAME,
		O_WLOG,
		O_WLOG_MAX,
		O_HELP
	};
	static const struct option opts[] = {
	    {"model", required_argument, NULL, O_MODEL},
	    {"size", required_argument, NULL, O_SIZE},
	    {"slowdown", required_argument, NULL, O_SLOW},
	    {"backing", required_argument, NULL, O_BACK},
	    {"no-write-cache", no_argument, NULL, O_NOWC},
	    {"name", required_argument, NULL, O_NAME},
	    {"write-log", required_argument, NULL, O_WLOG},
	    {"write-log-max", required_argument, NULL, O_WLOG_MAX},
	    {"help", no_argument, NULL, O_HELP},
	    {NULL, 0, NULL, 0}};
	struct labdisk_opts o = {0};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case O_MODEL:
			o.model = optarg;
			break;
		case O_SIZE:
			if (cli_parse_size(optarg, &o.size) || !o.size) {
				return cli_bad_value("disk create", "--size",
						     optarg, "a size > 0");
			}
			break;
		case O_SLOW:
			if (cli_parse_decimal(optarg, &o.slowdown) ||
			    !(o.slowdown > 0)) {
				return cli_bad_value("disk create",
						     "--slowdown", optarg,
						     "a number > 0");
			}
			break;
		case O_BACK:
			o.backing = optarg;
			break;
		case O_NOWC:
			o.no_write_cache = 1;
			break;
		case O_NAME:
			o.name = optarg;
			break;
		case O_WLOG:
			o.write_log = optarg;
			break;
		case O_WLOG_MAX:
			if (cli_parse_size(optarg, &o.write_log_max) ||
			    o.write_log_max < 4096)
				return cli_bad_value("disk create",
						     "--write-log-max", optarg,
						     "a size >= 4K");
			break;
		case O_HELP:
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("disk create", c, argv, opts);
		}
	}
	if (optind != argc)
		return cli_usage_error("disk create", "extra operand '%s'",
				       argv[optind]);
	if (!o.model)
		return cli_usage_error("disk create", "--model is required");
	if (o.write_log_max && !o.write_log)
		return cli_usage_error("disk create",
				       "--write-log-max without --write-log");
	/* The disk's refusals are usage errors of this command line. */
	struct labdisk_refusal why;
	uint64_t size = o.size || o.backing ? o.size : LABDISK_DEFAULT_SIZE;
	int r = labdisk_check(&o, size, &why);
	if (r == -ENOMEM) {
		cli_error("disk create: %s %s: %s", why.opt, why.val, why.hint);
		return FK_EXIT_FAILURE;
	}
	if (r)
		return cli_bad_value("disk create", why.opt, why.val, "%s",
				     why.hint);
	struct labdisk d;
	r = labdisk_create(&o, &d);
	if (r == -EINVAL)
		return FK_EXIT_USAGE;
	if (r)
		return FK_EXIT_FAILURE;
	printf("%s\n", d.dev);
	return FK_EXIT_OK;
}

static int do_list(void)
{
	struct labdisk *v;
	int n = labdisk_list(&v);
	if (n < 0) {
		cli_error("disk list: read '%s': %s", LABDISK_ROOT,
			  strerror(-n));
		return FK_EXIT_FAILURE;
	}
	if (n)
		printf("%-10s %-12s %-24s %10s %8s %s\n", "NAME", "DEVICE",
		       "MODEL", "SIZE", "PID", "STATE");
	for (int i = 0; i < n; i++) {
		char sz[32];
		printf("%-10s %-12s %-24s %10s %8ld %s\n", v[i].name,
		       v[i].dev[0] ? v[i].dev : "-",
		       v[i].model[0] ? v[i].model : "-",
		       cli_human_bytes(v[i].size, sz, sizeof(sz)),
		       (long)v[i].pid, v[i].alive ? "alive" : "stale");
	}
	free(v);
	return FK_EXIT_OK;
}

/* "the daemon was the bottleneck": more than 1% of the replies went
 * out over 1 ms after their model time. */
static void warn_late(const char *text)
{
	char *v = labdisk_stat(text, "late_over_1ms");
	char *r = labdisk_stat(text, "replies");
	if (v && r && strtoull(v, NULL, 10) * 100 > strtoull(r, NULL, 10))
		cli_warn("disk: %s of %s replies went out more than 1 ms late:"
			 " the daemon was the bottleneck (try --slowdown)",
			 v, r);
	free(v);
	free(r);
}

static int do_stats(int argc, char **argv)
{
	int json = 0;
	const char *which = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (argv[i][0] == '-' && argv[i][1] == '-')
			return cli_usage_error(
			    "disk stats", "unrecognized option '%s'", argv[i]);
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error(
			    "disk stats", "invalid option -- '%c'", argv[i][1]);
		else if (which)
			return cli_usage_error("disk stats",
					       "extra operand '%s'", argv[i]);
		else
			which = argv[i];
	}
	if (!which)
		return cli_usage_error("disk stats", "missing DEV operand");
	struct labdisk d;
	char *text;
	if (open_dev(which, &d) || labdisk_stats(&d, &text))
		return FK_EXIT_FAILURE;
	if (!json) {
		printf("name %s\ndevice %s\n%s", d.name, d.dev, text);
		warn_late(text);
		free(text);
		return FK_EXIT_OK;
	}
	struct json_object *o = json_object_new_object();
	struct json_object *rules = json_object_new_array();
	json_object_object_add(o, "name", json_object_new_string(d.name));
	json_object_object_add(o, "device", json_object_new_string(d.dev));
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp++ = 0;
		if (!strcmp(line, "rule")) {
			json_object_array_add(rules,
					      json_object_new_string(sp));
			continue;
		}
		char *end;
		errno = 0;
		unsigned long long u = strtoull(sp, &end, 10);
		if (!*end && *sp && !errno && *sp != '-') {
			json_object_object_add(o, line,
					       json_object_new_uint64(u));
			continue;
		}
		double x;
		if (!cli_parse_decimal(sp, &x))
			json_object_object_add(o, line,
					       json_object_new_double(x));
		else
			json_object_object_add(o, line,
					       json_object_new_string(sp));
	}
	json_object_object_add(o, "rule_list", rules);
	printf("%s\n", json_object_to_json_string_ext(
			   o, JSON_C_TO_STRING_PRETTY |
				  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	free(text);
	return FK_EXIT_OK;
}

static int do_cut(int argc, char **argv)
{
	enum { O_MODE = 256, O_SEED };
	static const struct option opts[] = {
	    {"mode", required_argument, NULL, O_MODE},
	    {"seed", required_argument, NULL, O_SEED},
	    {NULL, 0, NULL, 0}};
	const char *mode = "drop", *seed = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if (c == O_MODE)
			mode = optarg;
		else if (c == O_SEED)
			seed = optarg;
		else
			return cli_option_error("disk cut", c, argv, opts);
	}
	uint64_t s;
	if (strcmp(mode, "drop") && strcmp(mode, "subset") &&
	    strcmp(mode, "reorder")) {
		return cli_bad_value("disk cut", "--mode", mode,
				     "drop, subset or reorder");
	}
	if (seed && cli_parse_u64(seed, &s))
		return cli_bad_value("disk cut", "--seed", seed,
				     "a whole number");
	if (optind >= argc)
		return cli_usage_error("disk cut", "missing DEV operand");
	if (optind < argc - 1)
		return cli_usage_error("disk cut", "extra operand '%s'",
				       argv[optind + 1]);
	struct labdisk d;
	if (open_dev(argv[optind], &d))
		return FK_EXIT_FAILURE;
	char line[96];
	if (seed)
		snprintf(line, sizeof(line), "cut %s %" PRIu64 "\n", mode, s);
	else
		snprintf(line, sizeof(line), "cut %s\n", mode);
	char *text;
	if (labdisk_ctl(&d, line) || labdisk_stats(&d, &text))
		return FK_EXIT_FAILURE;
	char *sd = labdisk_stat(text, "cut_seed");
	char *k = labdisk_stat(text, "cut_kept_blocks");
	char *l = labdisk_stat(text, "cut_lost_blocks");
	printf("cut %s: mode %s seed %s, %s cached blocks kept, %s lost\n",
	       d.dev, mode, sd ? sd : "?", k ? k : "?", l ? l : "?");
	free(sd);
	free(k);
	free(l);
	free(text);
	return FK_EXIT_OK;
}

static int do_simple_ctl(const char *which, const char *line)
{
	struct labdisk d;
	if (open_dev(which, &d) || labdisk_ctl(&d, line))
		return FK_EXIT_FAILURE;
	return FK_EXIT_OK;
}

static int do_fault(int argc, char **argv)
{
	if (argc < 3)
		return cli_usage_error("disk fault", "missing %s operand",
				       argc < 2 ? "DEV" : "RULE");
	int lines = 0;
	for (int i = 2; i < argc; i++)
		lines |= strchr(argv[i], ' ') != NULL;
	size_t len = 2;
	for (int i = 2; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *text = calloc(1, len);
	if (!text)
		return FK_EXIT_FAILURE;
	for (int i = 2; i < argc; i++) {
		strcat(text, argv[i]);
		strcat(text, lines || i == argc - 1 ? "\n" : " ");
	}
	int r = do_simple_ctl(argv[1], text);
	free(text);
	return r;
}

static int do_destroy(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("disk destroy",
				       "missing DEV operand (or --all)");
	if (argc > 2)
		return cli_usage_error("disk destroy", "extra operand '%s'",
				       argv[2]);
	int bad = 0;
	if (!strcmp(argv[1], "--all")) {
		struct labdisk *v;
		int n = labdisk_list(&v);
		if (n < 0)
			return FK_EXIT_FAILURE;
		for (int i = 0; i < n; i++)
			bad |= labdisk_destroy(&v[i]) != 0;
		free(v);
		return bad ? FK_EXIT_FAILURE : FK_EXIT_OK;
	}
	struct labdisk d;
	if (labdisk_open(argv[1], &d))
		return FK_EXIT_FAILURE;
	return labdisk_destroy(&d) ? FK_EXIT_FAILURE : FK_EXIT_OK;
}

static int replay_list(const struct wlog *l)
{
	printf("%-8s %-13s %14s %10s %s\n", "ENTRY", "TYPE", "OFFSET", "LENGTH",
	       "MARK");
	for (size_t i = 0; i < l->n; i++) {
		const struct wlog_rec *r = &l->v[i];
		printf("%-8zu %-13s %14" PRIu64 " %10" PRIu64 " %s\n", i,
		       wlog_type_name(r->type), r->off, r->len,
		       r->type == WLOG_MARK ? r->mark : "");
	}
	printf("%zu entries, %zu flushes, image %" PRIu64 " bytes%s%s\n", l->n,
	       l->flushes, l->size,
	       l->full ? "; the log is full (it ends before the disk did)" : "",
	       l->cut ? "; it ends at a power cut" : "");
	return FK_EXIT_OK;
}

static int do_replay(int argc, char **argv)
{
	enum { O_FLUSH = 256, O_ENTRY, O_MARK, O_SUBSET, O_SEED, O_LIST };
	static const struct option opts[] = {
	    {"to-flush", required_argument, NULL, O_FLUSH},
	    {"to-entry", required_argument, NULL, O_ENTRY},
	    {"to-mark", required_argument, NULL, O_MARK},
	    {"subset", no_argument, NULL, O_SUBSET},
	    {"seed", required_argument, NULL, O_SEED},
	    {"list", no_argument, NULL, O_LIST},
	    {NULL, 0, NULL, 0}};
	uint64_t to_flush = 0, to_entry = 0, seed = 0;
	const char *to_mark = NULL;
	int points = 0, subset = 0, seed_given = 0, list = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case O_FLUSH:
			if (cli_parse_u64(optarg, &to_flush) || !to_flush)
				return cli_bad_value("disk replay",
						     "--to-flush", optarg,
						     "a count >= 1");
			points++;
			break;
		case O_ENTRY:
			if (cli_parse_u64(optarg, &to_entry))
				return cli_bad_value("disk replay",
						     "--to-entry", optarg,
						     "an entry count");
			points++;
			break;
		case O_MARK:
			to_mark = optarg;
			points++;
			break;
		case O_SUBSET:
			subset = 1;
			break;
		case O_SEED:
			if (cli_parse_u64(optarg, &seed) || !seed)
				return cli_bad_value("disk replay", "--seed",
						     optarg, "a number >= 1");
			seed_given = 1;
			break;
		case O_LIST:
			list = 1;
			break;
		default:
			return cli_option_error("disk replay", c, argv, opts);
		}
	}
	if (points > 1)
		return cli_usage_error("disk replay",
				       "--to-flush, --to-entry and --to-mark "
				       "exclude each other");
	if (seed_given && !subset)
		return cli_usage_error("disk replay",
				       "--seed without --subset");
	if (optind >= argc)
		return cli_usage_error("disk replay", "missing LOG operand");
	const char *path = argv[optind];
	const char *out = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (list && (out || points || subset))
		return cli_usage_error("disk replay", "--list takes LOG alone");
	if (!list && !out)
		return cli_usage_error("disk replay",
				       "missing IMAGE-OUT operand");
	if (optind + 2 < argc)
		return cli_usage_error("disk replay", "extra operand '%s'",
				       argv[optind + 2]);
	struct wlog l;
	char err[512];
	if (wlog_load(&l, path, err, sizeof(err))) {
		cli_error("disk replay: %s", err);
		return FK_EXIT_FAILURE;
	}
	if (list) {
		int r = replay_list(&l);
		wlog_close(&l);
		return r;
	}
	size_t p = l.n;
	if (to_flush) {
		p = wlog_flush_point(&l, (size_t)to_flush);
		if (p == (size_t)-1) {
			cli_error("disk replay: '%s' has %zu flushes, not "
				  "%" PRIu64 "%s",
				  path, l.flushes, to_flush,
				  l.full ? " (the log is full: it ends before "
					   "the disk did; --write-log-max)"
					 : "");
			wlog_close(&l);
			return FK_EXIT_FAILURE;
		}
	} else if (points && to_mark) {
		p = wlog_mark_point(&l, to_mark);
		if (p == (size_t)-1) {
			cli_error("disk replay: '%s' has no mark '%s'%s", path,
				  to_mark,
				  l.full ? " (the log is full: it ends before "
					   "the disk did; --write-log-max)"
					 : "");
			wlog_close(&l);
			return FK_EXIT_FAILURE;
		}
	} else if (points) {
		if (to_entry > l.n) {
			cli_error("disk replay: '%s' has %zu entries, not "
				  "%" PRIu64 "%s",
				  path, l.n, to_entry,
				  l.full ? " (the log is full: it ends before "
					   "the disk did; --write-log-max)"
					 : "");
			wlog_close(&l);
			return FK_EXIT_FAILURE;
		}
		p = (size_t)to_entry;
	} else if (l.full) {
		fprintf(stderr,
			"flushkit: disk replay: warning: '%s' is full: the "
			"image is the disk's at the log's end, not at the "
			"disk's\n",
			path);
	}
	if (subset && !seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000000000ull +
			(uint64_t)ts.tv_nsec) |
		       1;
	}
	int fd = open(out, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0) {
		cli_error("disk replay: '%s': %s", out,
			  errno == EINVAL ? "not a regular file"
					  : strerror(errno));
		wlog_close(&l);
		return FK_EXIT_FAILURE;
	}
	int r = wlog_replay(&l, p, subset ? seed : 0, fd, err, sizeof(err));
	if (!r && fsync(fd)) {
		r = -errno;
		snprintf(err, sizeof(err), "fsync: %s", strerror(errno));
	}
	if (close(fd) && !r) {
		r = -errno;
		snprintf(err, sizeof(err), "close: %s", strerror(errno));
	}
	if (r) {
		cli_error("disk replay: '%s': %s", out, err);
		wlog_close(&l);
		return FK_EXIT_FAILURE;
	}
	size_t f = wlog_last_flush(&l, p), k = 0;
	for (size_t i = 0; f != (size_t)-1 && i <= f; i++)
		k += l.v[i].type == WLOG_FLUSH;
	printf("%s: point %zu of %zu entries, after flush %zu of %zu", out, p,
	       l.n, k, l.flushes);
	if (subset)
		printf("; writes after it as a subset, seed %" PRIu64, seed);
	printf("\n");
	wlog_close(&l);
	return FK_EXIT_OK;
}

int cmd_disk(int argc, char **argv)
{
	if (argc < 2)
		return cli_usage_error("disk", "missing SUBCOMMAND operand");
	const char *sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") ||
	    !strcmp(sub, "help")) {
		usage(stdout);
		return FK_EXIT_OK;
	}
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return FK_EXIT_OK;
		}
	static const char *const subs[] = {
	    "create", "list",	 "stats",   "cut",    "poweron",
	    "fault",  "destroy", "cleanup", "replay", NULL};
	int known = 0;
	for (int i = 0; subs[i]; i++)
		known |= !strcmp(sub, subs[i]);
	if (!known)
		goto bad;	    /* a usage error, for root or not */
	if (!strcmp(sub, "replay")) /* files only: no root needed */
		return do_replay(argc - 1, argv + 1);
	if (geteuid() != 0 && strcmp(sub, "list")) {
		cli_error("disk %s: needs root (loop devices, mounts)", sub);
		return FK_EXIT_FAILURE;
	}
	if (!strcmp(sub, "create"))
		return do_create(argc - 1, argv + 1);
	if (!strcmp(sub, "list") && argc == 2)
		return do_list();
	if (!strcmp(sub, "stats"))
		return do_stats(argc - 1, argv + 1);
	if (!strcmp(sub, "cut"))
		return do_cut(argc - 1, argv + 1);
	if (!strcmp(sub, "poweron") && argc == 3)
		return do_simple_ctl(argv[2], "poweron\n");
	if (!strcmp(sub, "fault"))
		return do_fault(argc - 1, argv + 1);
	if (!strcmp(sub, "destroy"))
		return do_destroy(argc - 1, argv + 1);
	if (!strcmp(sub, "cleanup") && argc == 2) {
		int n = labdisk_cleanup_stale();
		if (n < 0) {
			cli_error("disk cleanup: %s: %s", LABDISK_ROOT,
				  strerror(-n));
			return FK_EXIT_FAILURE;
		}
		printf("%d stale disk%s removed\n", n, n == 1 ? "" : "s");
		return FK_EXIT_OK;
	}
	/* list, cleanup and poweron with the wrong operands. */
	if (!strcmp(sub, "list") || !strcmp(sub, "cleanup") ||
	    (!strcmp(sub, "poweron") && argc > 3)) {
		char cmd[16];
		snprintf(cmd, sizeof(cmd), "disk %s", sub);
		return cli_usage_error(cmd, "extra operand '%s'",
				       argv[!strcmp(sub, "poweron") ? 3 : 2]);
	}
	if (!strcmp(sub, "poweron"))
		return cli_usage_error("disk poweron", "missing DEV operand");
bad:
	if (sub[0] == '-' && sub[1] == '-')
		return cli_usage_error("disk", "unrecognized option '%s'", sub);
	if (sub[0] == '-' && sub[1])
		return cli_usage_error("disk", "invalid option -- '%c'",
				       sub[1]);
	return cli_usage_error("disk", "'%s' is not a disk subcommand", sub);
}
