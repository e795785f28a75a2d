// SPDX-License-Identifier: MIT
/*
 * cmd.c - "flushkit bench neighbor": the noisy-neighbour
 * benchmark (docs/neighbor.md).  A victim database, "flushkit bench
 * tpcb" on the page store (a child of /proc/self/exe) or PostgreSQL 15
 * with pgbench (a cluster of its own in DIR/pg, see pg.c) at a fixed
 * rate or at full speed, shares a file system with a neighbour, a real
 * unmodified program (Debian's dd or cp -a), that starts
 * --neighbor-delay seconds into the victim's run.  The neighbour runs
 * under each configuration in turn, alternated in rounds (the order
 * rotated each round):
 *
 *   plain    the neighbour as it is
 *   exec     flushkit exec [--exec-opt...] -- NEIGHBOUR
 *   nocache  nocache NEIGHBOUR (Debian's nocache)
 *   strict   the device's bdi with strict_limit=1 and max_bytes set for
 *            the neighbour's run (machine-wide for that device)
 *   blkio    the neighbour in a cgroup v1 blkio child group with a
 *            write_bps throttle on the device
 *   exec-idle  flushkit exec --ioprio=idle (not in the default list)
 *   ionice   ionice -c 3 NEIGHBOUR, no shim: the control of exec-idle
 *            (not in the default list)
 *   exec-pace  flushkit exec --pace=50 (not in the default list)
 *   exec-hint-idle  flushkit exec --hint-ioprio=idle (not in the
 *            default list)
 *   exec-small  flushkit exec --small-budget=8M (not in the default list)
 *
 * Every child is started by child.h (fork + execvp of a fixed argument
 * array, no shell).  What is changed on the machine (bdi knobs, the
 * blkio group, loop devices of --device) is undone after each run and
 * on every exit path: a normal end, an error, SIGINT, SIGTERM, SIGHUP (the
 * handler only sets a flag; the main loop, polling every 0.2 s, kills
 * the children's process groups and restores).  What a SIGKILL leaves
 * (no handler runs) the next run undoes from this run's record (see
 * records.c), as "bench neighbor --cleanup" does alone.
 *
 * Measured per run over the neighbour's window (from the neighbour's
 * start to the end of the victim's last transaction: the writeback a
 * neighbour leaves behind hurts after it exits too): the victim's tps,
 * latency p50/p99/p99.9/max (nearest rank, from the per-transaction
 * logs), the stall ratio (results_stall_ratio over the window's full
 * seconds), the neighbour's wall time, the time until its data was
 * written back (from its start to the first sample after its exit with
 * the machine's Dirty + Writeback within DRAIN_SLACK_KB of the level at
 * its start: a program that ends when the page cache has its data is
 * not done with the disk), and the peak Dirty and Writeback of
 * /proc/meminfo sampled every 0.2 s.  Each run writes one result file
 * RUN/neighbor-*.jsonl for "flushkit report": the victim's progress and
 * checkpoints on this file's clock, the monitor samples, a "window"
 * line (start_s/end_s: the window the summary is measured over, which
 * report shades; neighbor_end_s the neighbour's exit) and the summary.  The
 * table (stdout, DIR/table.md, DIR/runs.tsv) gives per configuration the mean
 * and min-max over rounds, and the ratios to plain of the same round.
 *
 * The files of the command: neighbor.h.
 */
#include "child.h"
#include "cli.h"
#include "disk.h"
#include "neighbor.h"
#include "results.h"

#include <errno.h>
#include <getopt.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

static void on_signal(int sig)
{
	nb_stop_sig = sig;
}

static void usage(FILE *f)
{
	fputs(
	    "usage: flushkit bench neighbor [OPTIONS]\n\n"
	    "A victim (bench tpcb on the page store, or PostgreSQL 15 +\n"
	    "pgbench when installed) next to a neighbour\n"
	    "(dd of N GiB, cp -a of a tree) that starts --neighbor-delay\n"
	    "seconds into its run, the neighbour under each configuration,\n"
	    "alternated in rounds; victim latency and tps in the "
	    "neighbour's\n"
	    "window, the neighbour's wall time and time until its data was\n"
	    "written back, peak Dirty/Writeback.\n\n"
	    "options:\n"
	    "  --victim=LIST          of rate,full (bench tpcb at -R --rate,\n"
	    "                         at full speed), pg-rate,pg-full\n"
	    "                         (PostgreSQL 15 + pgbench, the same;\n"
	    "                         skipped if not installed); default all\n"
	    "  --neighbor=stream,tree the neighbours (default stream,tree)\n"
	    "  --config=LIST          of plain,exec,nocache,strict,blkio\n"
	    "                         (the default; plain is always run),\n"
	    "                         exec-idle (exec --ioprio=idle), ionice\n"
	    "                         (ionice -c 3, no shim), exec-pace\n"
	    "                         (exec --pace=50), exec-hint-idle\n"
	    "                         (exec --hint-ioprio=idle), exec-small\n"
	    "                         (exec --small-budget=8M)\n"
	    "  --rounds=N             rounds, order rotated (default 3)\n"
	    "  -T, --duration=S       victim seconds (default 60)\n"
	    "  --neighbor-delay=S     neighbour's start (default 10)\n"
	    "  -R, --rate=TPS         the rate victim's rate (default 400)\n"
	    "  -c, --clients=N        victim clients (default 4)\n"
	    "  -s, --scale=N          victim scale (default 10)\n"
	    "  --stream-size=SIZE     the stream's bytes (default 3x the\n"
	    "                         dirty limit, in whole MiB)\n"
	    "  --tree-src=DIR         what cp -a copies (default /usr/share)\n"
	    "  --exec-opt=OPT         an option for flushkit exec (repeat)\n"
	    "  --bdi-max-bytes=SIZE   strict: the bdi's max_bytes (64M)\n"
	    "  --blkio-bps=SIZE       blkio: write bytes/s (default 100M)\n"
	    "  --device=DEVICE        native (default): the file system of\n"
	    "                         --dir; hdd, ssd, nvme, ram,\n"
	    "                         throttle:BPS:IOPS (or BPS:IOPS): ext4\n"
	    "                         on a lab disk of that model (root;\n"
	    "                         ,slowdown=K ,no-write-cache)\n"
	    "  --scheduler=NAME       the disk's I/O scheduler for the\n"
	    "                         whole run (root; mq-deadline, bfq,\n"
	    "                         kyber, none; restored at the end)\n"
	    "  --dir=DIR              the file system under test\n"
	    "                         (default /var/tmp/flushkit-neighbor)\n"
	    "  --results=DIR          default results/neighbor-DATE\n"
	    "  --quick                tiny sizes, one round (the tests)\n"
	    "  --cleanup              (alone) only undo what killed runs\n"
	    "                         left (bdi knobs, blkio groups, the\n"
	    "                         PostgreSQL cluster; every run does\n"
	    "                         it first)\n",
	    f);
}

static int parse_list(const char *s, const char *const *names, int n,
		      unsigned *mask)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	*mask = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int i;
		for (i = 0; i < n && strcmp(t, names[i]); i++)
			;
		if (i == n)
			return -EINVAL;
		*mask |= 1u << i;
	}
	return *mask ? 0 : -EINVAL;
}

static int parse_secs(const char *s, uint64_t *out)
{
	uint64_t ms;
	if (cli_parse_duration_ms(s, &ms) || ms % 1000)
		return -EINVAL;
	*out = ms / 1000;
	return 0;
}

int cmd_bench_neighbor(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "--in-cgroup=", 12) && argc > 3 &&
	    !strcmp(argv[2], "--"))
		return nb_in_cgroup_exec(argv[1] + 12, argv + 3);

	static const struct option lopts[] = {
	    {"victim", required_argument, NULL, 'V'},
	    {"neighbor", required_argument, NULL, 'N'},
	    {"config", required_argument, NULL, 'C'},
	    {"rounds", required_argument, NULL, 'r'},
	    {"duration", required_argument, NULL, 'T'},
	    {"neighbor-delay", required_argument, NULL, 'd'},
	    {"rate", required_argument, NULL, 'R'},
	    {"clients", required_argument, NULL, 'c'},
	    {"scale", required_argument, NULL, 's'},
	    {"stream-size", required_argument, NULL, 'S'},
	    {"tree-src", required_argument, NULL, 't'},
	    {"exec-opt", required_argument, NULL, 'e'},
	    {"bdi-max-bytes", required_argument, NULL, 'm'},
	    {"blkio-bps", required_argument, NULL, 'b'},
	    {"device", required_argument, NULL, 'D'},
	    {"scheduler", required_argument, NULL, 'I'},
	    {"dir", required_argument, NULL, 'o'},
	    {"results", required_argument, NULL, 'O'},
	    {"quick", no_argument, NULL, 'q'},
	    {"cleanup", no_argument, NULL, 'K'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct opts op;
	int cleanup = 0;
	int set_victim = 0, set_neighbor = 0, set_rounds = 0, set_dur = 0,
	    set_delay = 0, set_scale = 0, set_tree = 0;
	memset(&op, 0, sizeof(op));
	op.victims = 1u << V_RATE | 1u << V_FULL | PG_VICTIMS;
	op.neighbors = 1u << N_STREAM | 1u << N_TREE;
	op.configs = DEFAULT_CONFIGS;
	op.rounds = 3;
	op.duration_s = 60;
	op.delay_s = 10;
	op.rate = 400;
	op.clients = 4;
	op.scale = 10;
	op.tree_src = "/usr/share";
	op.bdi_max_bytes = 64ull << 20;
	op.blkio_bps = 100ull << 20;
	op.dir = "/var/tmp/flushkit-neighbor";
	disk_profile_parse("native", &op.device);
	int c, li = -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hT:R:c:s:", lopts, &li)) != -1) {
		int bad = 0;
		char sopt[2] = {(char)c, 0};
		const char *oname = li >= 0 ? lopts[li].name : sopt;
		li = -1;
		switch (c) {
		case 'V':
			bad = parse_list(optarg, nb_victim_names, NR_VICTIMS,
					 &op.victims);
			set_victim = 1;
			break;
		case 'N':
			bad = parse_list(optarg, nb_neighbor_names,
					 NR_NEIGHBORS, &op.neighbors);
			set_neighbor = 1;
			break;
		case 'C':
			bad = parse_list(optarg, nb_config_names, NR_CONFIGS,
					 &op.configs);
			op.configs |= 1u << C_PLAIN;
			break;
		case 'r':
			bad = cli_parse_u64(optarg, &op.rounds) || !op.rounds ||
			      op.rounds > MAX_ROUNDS;
			set_rounds = 1;
			break;
		case 'T':
			bad = parse_secs(optarg, &op.duration_s) ||
			      !op.duration_s;
			set_dur = 1;
			break;
		case 'd':
			bad = parse_secs(optarg, &op.delay_s);
			set_delay = 1;
			break;
		case 'R':
			bad = cli_parse_u64(optarg, &op.rate) || !op.rate;
			break;
		case 'c':
			bad = cli_parse_u64(optarg, &op.clients) ||
			      !op.clients || op.clients > 1000;
			break;
		case 's':
			bad = cli_parse_u64(optarg, &op.scale) || !op.scale;
			set_scale = 1;
			break;
		case 'S':
			bad = cli_parse_size(optarg, &op.stream_bytes) ||
			      op.stream_bytes < (1u << 20);
			break;
		case 't':
			op.tree_src = optarg;
			set_tree = 1;
			break;
		case 'e':
			bad = op.nr_exec_opts == MAX_EXEC_OPTS ||
			      optarg[0] != '-';
			if (!bad)
				op.exec_opts[op.nr_exec_opts++] = optarg;
			break;
		case 'm':
			bad = cli_parse_size(optarg, &op.bdi_max_bytes) ||
			      !op.bdi_max_bytes;
			break;
		case 'b':
			bad = cli_parse_size(optarg, &op.blkio_bps) ||
			      op.blkio_bps < (1u << 20);
			break;
		case 'D':
			if (disk_profile_arg("bench neighbor", "--device",
					     optarg, &op.device))
				return FK_EXIT_USAGE;
			break;
		case 'I':
			bad = !nb_sched_name_ok(optarg);
			op.scheduler = optarg;
			break;
		case 'o':
			op.dir = optarg;
			break;
		case 'O':
			op.results = optarg;
			break;
		case 'q':
			op.quick = 1;
			break;
		case 'K':
			cleanup = 1;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("bench neighbor", c, argv,
						lopts);
		}
		if (bad) {
			char name[64];
			snprintf(name, sizeof(name), "%s%s",
				 strlen(oname) > 1 ? "--" : "-", oname);
			return cli_bad_value("bench neighbor", name, optarg,
					     NULL);
		}
	}
	if (optind < argc)
		return cli_usage_error("bench neighbor", "extra operand '%s'",
				       argv[optind]);
	if (cleanup) {
		if (argc != 2) {
			return cli_usage_error("bench neighbor",
					       "--cleanup only undoes what "
					       "killed runs left: give it "
					       "alone");
		}
		if (geteuid()) {
			cli_error("bench neighbor --cleanup needs root");
			return FK_EXIT_FAILURE;
		}
		int n = nb_state_cleanup_stale();
		if (!n)
			printf("bench neighbor: nothing left by killed runs\n");
		return FK_EXIT_OK;
	}
	if (op.quick) {
		if (!set_victim)
			op.victims = 1u << V_RATE;
		if (!set_neighbor)
			op.neighbors = 1u << N_STREAM;
		if (!set_rounds)
			op.rounds = 1;
		if (!set_dur)
			op.duration_s = 4;
		if (!set_delay)
			op.delay_s = 1;
		if (!set_scale)
			op.scale = 1;
		if (!op.stream_bytes)
			op.stream_bytes = 64ull << 20;
		if (!set_tree)
			op.tree_src = "/usr/share/zoneinfo";
	}
	if (op.delay_s >= op.duration_s) {
		return cli_usage_error("bench neighbor",
				       "--neighbor-delay (%llu s) must be "
				       "less than --duration (%llu s)",
				       (unsigned long long)op.delay_s,
				       (unsigned long long)op.duration_s);
	}

	struct env env;
	memset(&env, 0, sizeof(env));
	env.op = &op;
	env.stream_bytes =
	    op.stream_bytes
		? op.stream_bytes & ~((1ull << 20) - 1)
		: (3 * nb_dirty_limit_bytes()) & ~((1ull << 20) - 1);

	int status = FK_EXIT_FAILURE;
	struct stop_signals saved;
	stop_signals_catch(&saved, on_signal, 0);
	struct disk d;
	char disk_dir[1024] = "";
	int have_disk = 0, made_out = 0;
	if (!geteuid()) {
		/* what killed runs left, before this run changes anything */
		nb_state_cleanup_stale();
		if (nb_state_open())
			goto out;
	}

	if (op.results) {
		snprintf(env.out, sizeof(env.out), "%s", op.results);
	} else {
		results_default_dir("neighbor", env.out, sizeof(env.out));
	}
	/* first: a results directory that cannot be made (its parent
	 * missing, as mkdir(1) without -p) stops the benchmark before
	 * anything is created or run; made here, it is removed again if
	 * the setup fails before the first run (a --dir refused) */
	if (mkdir(env.out, 0755)) {
		if (errno != EEXIST) {
			cli_error("bench neighbor: mkdir '%s': %s", env.out,
				  strerror(errno));
			goto out;
		}
	} else {
		made_out = 1;
	}
	if (disk_profile_is_lab(&op.device)) {
		if (geteuid()) {
			cli_error("bench neighbor: --device=%s needs root "
				  "(lab disks, loop devices, mkfs, mount)",
				  op.device.name);
			goto out;
		}
		if (disk_run_dir_create(disk_dir, sizeof(disk_dir)))
			goto out;
		uint64_t img = env.stream_bytes * 2 + (8ull << 30);
		if (disk_create(&d, disk_dir, "fs", "ext4", img, &op.device))
			goto out;
		have_disk = 1;
		snprintf(env.dir, sizeof(env.dir), "%s", d.mnt);
	} else {
		snprintf(env.dir, sizeof(env.dir), "%s", op.dir);
		if (mkdir(env.dir, 0755) && errno != EEXIST) {
			cli_error("bench neighbor: mkdir '%s': %s", env.dir,
				  strerror(errno));
			goto out;
		}
		/* tmpfs and ramfs have no writeback: every configuration
		 * would measure nothing. */
		struct statfs sf;
		if (!statfs(env.dir, &sf) &&
		    (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)) {
			cli_error("bench neighbor: '%s' is on %s, which has no "
				  "writeback: nothing to measure (use a disk "
				  "file system or --device)",
				  env.dir,
				  sf.f_type == TMPFS_MAGIC ? "tmpfs" : "ramfs");
			goto out;
		}
	}
	if (nb_path_disk(env.dir, &env.maj, &env.min)) {
		cli_error("bench neighbor: stat '%s': %s", env.dir,
			  strerror(errno));
		goto out;
	}
	snprintf(nb_bdi, sizeof(nb_bdi), "/sys/class/bdi/%u:%u", env.maj,
		 env.min);
	{
		char p[256];
		nb_bdi_knob("max_ratio_fine", p, sizeof(p));
		if (!access(p, F_OK))
			nb_bdi_ratio_knob = "max_ratio_fine";
	}
	if (nb_dir_lock(env.dir))
		goto out;
	if (op.scheduler) {
		if (geteuid()) {
			cli_error("bench neighbor: --scheduler needs root "
				  "(the disk's queue/scheduler)");
			goto out;
		}
		if (nb_sched_set(env.maj, env.min, op.scheduler))
			goto out;
	}
	nb_find_skips(&env);
	if (!geteuid() && (op.configs & 1u << C_STRICT) &&
	    !env.skip[C_STRICT] && nb_bdi_lock())
		goto out;

	{
		/* the children run in their run directories */
		char *abs = realpath(env.out, NULL);
		if (abs) {
			snprintf(env.out, sizeof(env.out), "%s", abs);
			free(abs);
		}
		abs = realpath(env.dir, NULL);
		if (abs) {
			snprintf(env.dir, sizeof(env.dir), "%s", abs);
			free(abs);
		}
	}
	char tsvp[1100];
	snprintf(tsvp, sizeof(tsvp), "%s/runs.tsv", env.out);
	env.tsv = fopen(tsvp, "we");
	if (!env.tsv) {
		cli_error("bench neighbor: open '%s': %s", tsvp,
			  strerror(errno));
		goto out;
	}
	fputs("victim\tneighbor\tconfig\tround\ttps\tp50_ms\tp99_ms\tp999_ms\t"
	      "max_ms\tstall\tnb_wall_s\tnb_drain_s\tpeak_dirty_mib\tpeak_wb_"
	      "mib\tstatus\n",
	      env.tsv);

	{
		char p[256], sl[32] = "?", mr[32] = "?";
		nb_bdi_knob("strict_limit", p, sizeof(p));
		nb_read_small(p, sl, sizeof(sl));
		nb_bdi_knob(nb_bdi_ratio_knob, p, sizeof(p));
		nb_read_small(p, mr, sizeof(mr));
		char hb[32], sp[128], sn[32] = "?", wb[32] = "-";
		snprintf(sp, sizeof(sp), "/sys/dev/block/%u:%u/queue/scheduler",
			 env.maj, env.min);
		nb_sched_current(sp, sn, sizeof(sn));
		snprintf(sp, sizeof(sp),
			 "/sys/dev/block/%u:%u/queue/wbt_lat_usec", env.maj,
			 env.min);
		nb_read_small(sp, wb, sizeof(wb));
		printf("bench neighbor: disk %u:%u: scheduler %s%s%s%s, "
		       "wbt_lat_usec %s\n",
		       env.maj, env.min, sn,
		       nb_sched_path[0] ? " (restored to " : "",
		       nb_sched_path[0] ? nb_sched_saved : "",
		       nb_sched_path[0] ? " at the end)" : "", wb);
		printf("bench neighbor: dir %s (disk %u:%u, device %s), "
		       "stream %s, tree %s, victim %llu s (neighbour at "
		       "%llu s), %llu clients, scale %llu, rate %llu, %llu "
		       "round%s\n"
		       "bench neighbor: %s: strict_limit %s, %s %s (restored "
		       "after each strict run)\n",
		       env.dir, env.maj, env.min, op.device.name,
		       cli_human_bytes(env.stream_bytes, hb, sizeof(hb)),
		       op.tree_src, (unsigned long long)op.duration_s,
		       (unsigned long long)op.delay_s,
		       (unsigned long long)op.clients,
		       (unsigned long long)op.scale,
		       (unsigned long long)op.rate,
		       (unsigned long long)op.rounds, op.rounds == 1 ? "" : "s",
		       nb_bdi, sl, nb_bdi_ratio_knob, mr);
	}
	for (int cfg = 0; cfg < NR_CONFIGS; cfg++)
		if ((op.configs & 1u << cfg) && env.skip[cfg])
			printf("skip %s: %s\n", nb_config_names[cfg],
			       env.skip[cfg]);
	if (op.victims & PG_VICTIMS) {
		char why[256];
		if (nb_pg_why(why, sizeof(why))) {
			printf("skip pgbench: %s\n", why);
			op.victims &= ~PG_VICTIMS;
		}
	}
	fflush(stdout);
	if (op.victims & PG_VICTIMS) {
		/* the server's user must reach DIR/pg: the run directory
		 * of --device and DISK_ROOT are 0700, made traversable
		 * (not listable) */
		if (nb_pg.setuid && disk_dir[0]) {
			char parent[1024];
			snprintf(parent, sizeof(parent), "%s", disk_dir);
			char *sl = strrchr(parent, '/');
			if (sl)
				*sl = '\0';
			if (chmod(disk_dir, 0711) || chmod(parent, 0711)) {
				cli_error("bench neighbor: chmod '%s': %s",
					  disk_dir, strerror(errno));
				goto out;
			}
		}
		int pe = nb_pg_start(env.dir, env.out, op.clients);
		if (pe == -EINTR) {
			cli_error("bench neighbor: stopped by signal %d",
				  (int)nb_stop_sig);
			status = 128 + (int)nb_stop_sig;
			goto out;
		}
		if (pe)
			goto out;
		printf("bench neighbor: victims pg-*: %s, cluster %s, socket "
		       "%s, logs %s\n",
		       nb_pg.version, nb_pg.data, nb_pg.sock, nb_pg.logs);
		fflush(stdout);
	}

	int configs[NR_CONFIGS], nr = 0;
	for (int cfg = 0; cfg < NR_CONFIGS; cfg++)
		if ((op.configs & 1u << cfg) && !env.skip[cfg])
			configs[nr++] = cfg;
	int failed = 0, stopped = 0;
	for (unsigned r = 0; r < op.rounds && !stopped; r++)
		for (int v = 0; v < NR_VICTIMS && !stopped; v++) {
			if (!(op.victims & 1u << v))
				continue;
			for (int k = 0; k < NR_NEIGHBORS && !stopped; k++) {
				if (!(op.neighbors & 1u << k))
					continue;
				for (int i = 0; i < nr; i++) {
					int cfg = configs[(i + r) % nr];
					int e =
					    nb_one_run(&env, v, k, cfg, r,
						       &nb_rows[v][k][cfg][r]);
					if (e == -EINTR) {
						stopped = 1;
						break;
					}
					if (e || !nb_rows[v][k][cfg][r].done)
						failed = 1;
				}
			}
		}
	if (stopped) {
		cli_error("bench neighbor: stopped by signal %d; the "
			  "machine's knobs are restored",
			  (int)nb_stop_sig);
		status = 128 + (int)nb_stop_sig;
		goto out;
	}
	nb_print_table(stdout, &env);
	char tp[1100];
	snprintf(tp, sizeof(tp), "%s/table.md", env.out);
	FILE *tf = fopen(tp, "we");
	if (tf) {
		nb_print_table(tf, &env);
		if (fclose(tf))
			cli_error("bench neighbor: write '%s': %s", tp,
				  strerror(errno));
	}
	printf("\nresults in %s\n", env.out);
	status = failed ? FK_EXIT_FAILURE : FK_EXIT_OK;
out:
	if (nb_pg_stop())
		status = FK_EXIT_FAILURE;
	nb_restore_all();
	if (nb_sched_restore())
		status = FK_EXIT_FAILURE;
	nb_state_close();
	if (env.tsv)
		fclose(env.tsv);
	else if (made_out)
		rmdir(env.out);
	/* only a run that held the directory removes what is in it: a
	 * refused one would remove the holder's data mid-run */
	if (env.dir[0] && !have_disk && nb_dir_lock_fd >= 0) {
		char p[1100];
		snprintf(p, sizeof(p), "%s/nb", env.dir);
		nb_remove_tree(p);
		snprintf(p, sizeof(p), "%s/tpcb", env.dir);
		nb_remove_tree(p);
	}
	nb_dir_unlock();
	if (have_disk && disk_destroy(&d))
		status = FK_EXIT_FAILURE;
	if (disk_dir[0])
		disk_run_dir_remove(disk_dir);
	stop_signals_restore(&saved);
	return status;
}
