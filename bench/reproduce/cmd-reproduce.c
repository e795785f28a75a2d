// SPDX-License-Identifier: MIT
/*
 * cmd-reproduce.c - "flushkit reproduce 000|001|002|003|004|all": each
 * seed experiment (the 2009-2016 writeback documents this project
 * reproduces) run the way its seed ran it, on emulated disks, with the
 * seed's published figures beside ours (docs/reproduce.md).
 *
 * For each seed: one or more disks (bench/lib/disk.h: lab disks of the
 * --device model, or of the seed's own kind of disk) in a locked run
 * directory, the existing
 * benchmarks run as children (/proc/self/exe with an argv array: no
 * shell), their result files in RESULTS/NNN/, and then
 *   RESULTS/NNN/table.md, table.html  the seed's figures beside ours:
 *       for each metric the seed's before/after, the direction of effect
 *       the seed reports, ours (AVG, STDDEV, n) on each side, our marker
 *       (fk_stats_compare: + / - beyond 2 sigma, 0 noise, ? one run) and
 *       whether ours shows the seed's direction;
 *   RESULTS/NNN/report/          "flushkit report" of its result files;
 * and for "all" RESULTS/index.html with every table and plot.
 *
 * The experiments (sizes full / --quick):
 *   000  TPC-B, many clients, -P 1, alternating runs on one database,
 *        writeback hints every 256 KiB on every side: A = the seed's
 *        "before", the pre-4.4 kernel's WB_SYNC_ALL hint, which waited
 *        for the range's pages already under writeback and then
 *        started the rest without waiting for it
 *        (checkpoint_flush_wait=before: WAIT_BEFORE | WRITE); B =
 *        SYNC_FILE_RANGE_WRITE alone (the seed's patched kernel); and a
 *        third configuration that is not the seed's, C = hints that
 *        also wait for their own writes (checkpoint_flush_wait=all:
 *        WAIT_BEFORE | WRITE | WAIT_AFTER), reported in a table of its
 *        own against B and not counted as a seed effect; every other
 *        knob equal.  With
 *        PostgreSQL 15 installed, its peer on the same disk: pgbench
 *        of the same shape, checkpoint_flush_after 0 vs 256kB, its own
 *        table after the store's ("the PostgreSQL peer" below).
 *   001  fs_mark's shape on xfs: many threads, 4 KiB files, -S 1 vs
 *        batched fsync, from empty memory (its file system remounted)
 *        and with the page cache holding clean pages.
 *   002  bench series over scales x clients, the database several times
 *        shared_buffers, the server of 2010 (--flush=naive): fsync
 *        request queue compaction off vs on; the queue's fill over time.
 *   003  copy a database-like tree (a fresh initdb data directory with
 *        pgbench data when PostgreSQL 15 is installed, else a generated
 *        one of the same shape): fsync per file vs early writeback,
 *        delayed fsync and POSIX_FADV_DONTNEED; block-layer write counts
 *        of the loop device from tracefs block events (else
 *        /sys/block/loopN/stat) and Dirty/Writeback sampled by
 *        "flushkit monitor".
 *   004  bench sync --methods=base,patched: the pre- and post-2011 orders
 *        of sync(2), emulated per file system, on ext4, xfs, btrfs,
 *        ext3 x 1, 2, 4 file systems.
 * Each experiment's file (000.c ... 004.c) opens with the seed's setup
 * and our mapping of it; docs/reproduce.md has the same, one line each.
 *
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE: the running child's process group is sent
 * SIGTERM, the experiment stops, a PostgreSQL server is stopped and its
 * cluster removed, the disks are destroyed (umount, lab disk or loop
 * device removed) and the exit status is 1.
 */
#include "reproduce.h"

/* ---- driver ---------------------------------------------------------- */

static const char *const seed_names[5] = {
    "000 sync_file_range with WB_SYNC_NONE", "001 many fsyncs in flight",
    "002 fsync request queue compaction",
    "003 delayed fsync + DONTNEED in a bulk copy",
    "004 sync ordering; syncfs per file system"};

/* The device of each seed when --device is not given: the seeds' own
 * kinds of disk (000 ran on a Samsung 840 EVO, 001 on SSDs, 002 on
 * disks and SSDs, 003 and 004 on spinning disks; docs/reproduce.md). */
static const char *const seed_device[5] = {"ssd", "ssd", "hdd", "hdd", "hdd"};

static int run_seed(struct ctx *c, int n, double *dur)
{
	snprintf(c->seed_dir, sizeof(c->seed_dir), "%s/%03d", c->results, n);
	if (mkdir_p1(c->seed_dir))
		return -EIO;
	if (!c->device_given &&
	    disk_profile_parse(seed_device[n], &c->prof)) /* cannot fail */
		return -EINVAL;
	printf("seed %s (--device=%s%s%s)\n", seed_names[n], c->prof.name,
	       c->device_given ? "" : ", the seed's kind of disk",
	       c->quick ? ", --quick" : "");
	fflush(stdout);
	double t0 = now_s();
	struct disk d;
	int rc = 0;
	memset(&d, 0, sizeof(d));
	d.loop_fd = -1;
	if (n != 4) {
		const char *type = "ext4";
		if (n == 1 && disk_in_path("mkfs.xfs"))
			type = "xfs"; /* the seed's file system */
		char name[16];
		snprintf(name, sizeof(name), "seed%03d", n);
		rc = disk_create(&d, c->run_dir, name, type,
				 c->quick ? (400u << 20) : (8ull << 30),
				 &c->prof);
	}
	if (!rc) {
		switch (n) {
		case 0:
			rc = seed_000(c, &d);
			break;
		case 1:
			rc = seed_001(c, &d);
			break;
		case 2:
			rc = seed_002(c, &d);
			break;
		case 3:
			rc = seed_003(c, &d);
			break;
		case 4:
			rc = seed_004(c);
			break;
		}
	}
	pg_stop_all(); /* a server keeps its disk busy */
	if (n != 4 && disk_destroy(&d) && !rc)
		rc = -EIO;
	*dur = now_s() - t0;
	if (!rc) {
		/* the duration line of the table */
		char path[2200];
		snprintf(path, sizeof(path), "%s/table.md", c->seed_dir);
		FILE *f = fopen(path, "ae");
		if (f) {
			fprintf(f, "Seed run took %.0f s.\n", *dur);
			fclose(f);
		}
	}
	return rc;
}

/* RESULTS/index.html: every table and plot. */
static int write_index(struct ctx *c, const int *done, const double *dur)
{
	char path[2200];
	snprintf(path, sizeof(path), "%s/index.html", c->results);
	FILE *f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		"<title>flushkit reproduce</title></head><body>\n"
		"<h1>flushkit reproduce: the seeds' figures beside ours"
		"</h1>\n<p>Device %s.  Each table: the seed's "
		"published figures, its direction of effect, ours (AVG "
		"&plusmn; STDDEV, n) and our 2&sigma; marker.</p>\n",
		c->device_given ? c->prof.name
				: "per seed, the seed's kind of disk (see "
				  "each table)");
	for (int n = 0; n < 5; n++) {
		if (!done[n])
			continue;
		char p[2400];
		snprintf(p, sizeof(p), "%s/%03d/table.html", c->results, n);
		FILE *t = fopen(p, "re");
		if (t) {
			char buf[4096];
			size_t k;
			while ((k = fread(buf, 1, sizeof(buf), t)) > 0)
				fwrite(buf, 1, k, f);
			fclose(t);
		}
		fprintf(f,
			"<p>Run time %.0f s.  <a href=\"%03d/report/"
			"index.html\">All plots and the summary of %03d"
			"</a>.</p>\n",
			dur[n], n, n);
		snprintf(p, sizeof(p), "%s/%03d/report", c->results, n);
		DIR *d = opendir(p);
		if (d) {
			struct dirent *e;
			while ((e = readdir(d))) {
				size_t l = strlen(e->d_name);
				if (l > 4 &&
				    (!strcmp(e->d_name + l - 4, ".png") ||
				     !strcmp(e->d_name + l - 4, ".svg")))
					fprintf(f,
						"<img src=\"%03d/report/%s\" "
						"alt=\"%s\" width=\"480\">\n",
						n, e->d_name, e->d_name);
			}
			closedir(d);
		}
	}
	fprintf(f, "</body></html>\n");
	return fclose(f) ? -errno : 0;
}

/*
 * A --results DIR given by the user: a directory that is empty, or one
 * to create.  A reused directory would mix two invocations' result
 * files in the plots and their commands in commands.txt, so a
 * non-empty one is refused (reproduce never removes what is there).
 * Checked before anything runs.  0, or the exit status.
 */
static int results_dir_check(const char *dir)
{
	struct stat st;
	if (stat(dir, &st)) {
		if (errno != ENOENT)
			return cli_usage_error("reproduce",
					       "--results '%s': %s", dir,
					       strerror(errno));
		if (mkdir(dir, 0755)) {
			cli_error("--results: mkdir '%s': %s", dir,
				  strerror(errno));
			return FK_EXIT_FAILURE;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return cli_usage_error("reproduce",
				       "--results '%s': not a directory", dir);
	DIR *d = opendir(dir);
	if (!d) {
		cli_error("--results: open '%s': %s", dir, strerror(errno));
		return FK_EXIT_FAILURE;
	}
	struct dirent *e;
	int empty = 1;
	while (empty && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	if (!empty)
		return cli_usage_error("reproduce",
				       "--results '%s': not empty (a reused "
				       "directory would mix two runs' results "
				       "and commands): give a new or empty "
				       "directory",
				       dir);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit reproduce 000|001|002|003|004|all "
		"[OPTIONS]   (root only)\n"
		"       flushkit reproduce --cleanup\n\n"
		"Run a seed experiment the way its seed ran it, on emulated "
		"disks (lab\ndisks, flushkit disk: modelled devices in RAM), "
		"and write the seed's figures\nbeside ours.\n\n"
		"  --device=DEVICE   hdd, ssd, nvme, ram (lab disks of that "
		"model),\n"
		"                    throttle:BPS:IOPS (or BPS:IOPS; the "
		"former blkio profile,\n"
		"                    at least 1M:10), native (this machine's "
		"disk); optionally\n"
		"                    ,slowdown=K ,no-write-cache.  Default: "
		"each seed's kind of\n"
		"                    disk (000 and 001 ssd, 002-004 hdd)\n"
		"  --quick           tiny sizes: every experiment in a few "
		"minutes\n"
		"  --runs=N          runs per side (default: each seed's)\n"
		"  --progress        a line on stderr as each step starts and "
		"ends\n"
		"                    (default when stderr is a terminal)\n"
		"  --results=DIR     output, a new or empty directory "
		"(default\n"
		"                    results/reproduce-YYYYMMDD-HHMMSS)\n"
		"  --cleanup         (alone) only remove what killed runs "
		"left: mounts,\n"
		"                    loop devices, lab disks of " DISK_ROOT "\n"
		"  -h, --help        this help\n\n"
		"Writes DIR/NNN/table.md and table.html for each seed, "
		"DIR/NNN/report/ (plots),\nand DIR/index.html.  See "
		"docs/reproduce.md.\n");
}

int cmd_reproduce(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"device", required_argument, NULL, 'D'},
	    {"quick", no_argument, NULL, 'q'},
	    {"runs", required_argument, NULL, 'r'},
	    {"results", required_argument, NULL, 'o'},
	    {"cleanup", no_argument, NULL, 'C'},
	    {"progress", no_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct ctx c;
	int opt, cleanup = 0, others = 0;
	memset(&c, 0, sizeof(c));
	disk_profile_parse("hdd", &c.prof); /* see seed_device */
	reproduce_progress = isatty(STDERR_FILENO);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", lopts, NULL)) != -1) {
		uint64_t u;
		if (opt == 'D' || opt == 'q' || opt == 'r' || opt == 'o')
			others++;
		switch (opt) {
		case 'D':
			if (disk_profile_arg("reproduce", "--device", optarg,
					     &c.prof))
				return FK_EXIT_USAGE;
			c.device_given = 1;
			break;
		case 'q':
			c.quick = 1;
			break;
		case 'p':
			reproduce_progress = 1;
			break;
		case 'C':
			cleanup = 1;
			break;
		case 'r':
			if (cli_parse_u64(optarg, &u) || u < 1 || u > 1000) {
				return cli_bad_value("reproduce", "--runs",
						     optarg, "1..1000");
			}
			c.runs = (unsigned)u;
			break;
		case 'o':
			c.results = optarg;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("reproduce", opt, argv, lopts);
		}
	}
	if (cleanup && (optind != argc || others))
		return cli_usage_error("reproduce",
				       "--cleanup only removes what killed "
				       "runs left: give it alone (no seed, "
				       "no other option)");
	if (cleanup) {
		if (geteuid() != 0) {
			cli_error("reproduce --cleanup needs root");
			return FK_EXIT_FAILURE;
		}
		int k = pg_cleanup_stale();
		int n = disk_cleanup_stale();
		printf("removed %d leftovers of killed runs under %s\n",
		       (n < 0 ? 0 : n) + k, DISK_ROOT);
		return n < 0 ? FK_EXIT_FAILURE : FK_EXIT_OK;
	}
	if (optind >= argc)
		return cli_usage_error("reproduce", "missing SEED operand");
	if (optind + 1 < argc)
		return cli_usage_error("reproduce", "extra operand '%s'",
				       argv[optind + 1]);
	int want[5] = {0};
	const char *which = argv[optind];
	if (!strcmp(which, "all")) {
		for (int i = 0; i < 5; i++)
			want[i] = 1;
	} else if (strlen(which) == 3 && !strncmp(which, "00", 2) &&
		   which[2] >= '0' && which[2] <= '4') {
		want[which[2] - '0'] = 1;
	} else {
		return cli_usage_error("reproduce",
				       "'%s' is not a seed (000, 001, 002, "
				       "003, 004 or all)",
				       which);
	}
	if (geteuid() != 0) {
		cli_error("reproduce needs root: it makes lab disks, loop "
			  "devices, file systems and mounts");
		return FK_EXIT_FAILURE;
	}
	if (access("/dev/loop-control", F_OK)) {
		cli_error("no /dev/loop-control: no loop devices here");
		return FK_EXIT_FAILURE;
	}
	char defdir[128];
	if (c.results) {
		int rr = results_dir_check(c.results);
		if (rr)
			return rr;
	} else {
		results_default_dir("reproduce", defdir, sizeof(defdir));
		/* Two runs started in the same second get a directory each
		 * (the second one's name carries its PID). */
		if (mkdir(defdir, 0755) && errno == EEXIST) {
			size_t n = strlen(defdir);
			snprintf(defdir + n, sizeof(defdir) - n, "-%d",
				 (int)getpid());
		}
		c.results = defdir;
	}
	if (mkdir_p1(c.results))
		return FK_EXIT_FAILURE;

	struct stop_signals saved;
	stop_signals_catch(&saved, on_signal, 1);
	stop = 0;
	stop_sig = 0;
	/* A killed run's PostgreSQL server first: its disk is busy while
	 * it runs. */
	int k = pg_cleanup_stale();
	if (k > 0)
		cli_warn("stopped %d PostgreSQL servers of killed runs", k);
	if (disk_run_dir_create(c.run_dir, sizeof(c.run_dir)))
		return FK_EXIT_FAILURE;
	/* After disk_run_dir_create's: atexit runs it first. */
	atexit(pg_stop_all);

	int err = 0, done[5] = {0};
	double dur[5] = {0}, t0 = now_s();
	for (int n = 0; n < 5 && !stop; n++) {
		if (!want[n])
			continue;
		int rc = run_seed(&c, n, &dur[n]);
		if (rc) {
			if (!stop)
				cli_error("seed %03d failed; see %s/%03d/*.log",
					  n, c.results, n);
			err = 1;
		} else {
			done[n] = 1;
			printf("  table: %s/%03d/table.md\n", c.results, n);
		}
		fflush(stdout);
	}
	disk_destroy_all();
	disk_run_dir_remove(c.run_dir);
	if (stop) {
		if (stop_sig == SIGPIPE)
			cli_error("stdout closed (broken pipe): stopped; "
				  "mounts, loop devices and lab disks "
				  "removed");
		else
			cli_error("interrupted; mounts, loop devices and "
				  "lab disks removed");
		stop_signals_restore(&saved);
		return FK_EXIT_FAILURE;
	}
	if (write_index(&c, done, dur))
		err = 1;
	printf("report: %s/index.html (%.0f s in all)\n", c.results,
	       now_s() - t0);
	fflush(stdout);
	stop_signals_restore(&saved);
	return err ? FK_EXIT_FAILURE : FK_EXIT_OK;
}
