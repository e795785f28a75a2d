// SPDX-License-Identifier: MIT
/*
 * cmd-bench-neighbor.c - "flushkit bench neighbor": the noisy-neighbour
 * benchmark (docs/neighbor.md).  A victim database, "flushkit bench
 * tpcb" on the page store (a child of /proc/self/exe) or PostgreSQL 15
 * with pgbench (a cluster of its own in DIR/pg, see "the PostgreSQL
 * victim's cluster" below) at a fixed rate or at full speed, shares a
 * file system with a neighbour, a real
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
 *
 * Every child is started by child.h (fork + execvp of a fixed argument
 * array, no shell).  What is changed on the machine (bdi knobs, the
 * blkio group, loop devices of --device) is undone after each run and
 * on every exit path: a normal end, an error, SIGINT, SIGTERM, SIGHUP (the
 * handler only sets a flag; the main loop, polling every 0.2 s, kills
 * the children's process groups and restores).  What a SIGKILL leaves
 * (no handler runs) the next run undoes from this run's record (see
 * "killed runs" below), as "bench neighbor --cleanup" does alone.
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
 */
#include "child.h"
#include "cli.h"
#include "disk.h"
#include "reader.h"
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/magic.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

enum { V_RATE, V_FULL, V_PG_RATE, V_PG_FULL, NR_VICTIMS };
enum { N_STREAM, N_TREE, NR_NEIGHBORS };
enum {
	C_PLAIN,
	C_EXEC,
	C_NOCACHE,
	C_STRICT,
	C_BLKIO,
	C_EXEC_IDLE,
	C_IONICE,
	NR_CONFIGS
};
/* the default: the configurations of the aims */
#define DEFAULT_CONFIGS                                                        \
	(1u << C_PLAIN | 1u << C_EXEC | 1u << C_NOCACHE | 1u << C_STRICT |     \
	 1u << C_BLKIO)

static const char *const victim_names[NR_VICTIMS] = {"rate", "full", "pg-rate",
						     "pg-full"};
#define IS_PG(v) ((v) == V_PG_RATE || (v) == V_PG_FULL)
#define IS_RATE(v) ((v) == V_RATE || (v) == V_PG_RATE)
#define PG_VICTIMS (1u << V_PG_RATE | 1u << V_PG_FULL)
static const char *const neighbor_names[NR_NEIGHBORS] = {"stream", "tree"};
static const char *const config_names[NR_CONFIGS] = {
    "plain", "exec", "nocache", "strict", "blkio", "exec-idle", "ionice"};

#define MAX_EXEC_OPTS 8
#define MAX_ROUNDS 100

struct opts {
	const char *dir;
	const char *results;
	unsigned victims, neighbors, configs; /* bit masks */
	uint64_t rounds, duration_s, delay_s, rate, clients, scale;
	uint64_t stream_bytes; /* 0: from the dirty limits */
	const char *tree_src;
	uint64_t bdi_max_bytes, blkio_bps;
	struct disk_profile device;
	const char *exec_opts[MAX_EXEC_OPTS];
	size_t nr_exec_opts;
	int quick;
};

/* One run's figures (NAN: not measured). */
struct row {
	int done;
	double tps, p50, p99, p999, max, stall, nb_wall, nb_drain, dirty_mib,
	    wb_mib;
	int nb_status, v_status;
};
#define NR_METRICS 10
/* The neighbour's data counts as written back once the machine's Dirty +
 * Writeback is back within this of its level at the neighbour's start. */
#define DRAIN_SLACK_KB (32.0 * 1024)

static struct row rows[NR_VICTIMS][NR_NEIGHBORS][NR_CONFIGS][MAX_ROUNDS];

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

/* ---- what the machine had before: restored on every exit path ------- */

/* The record of what this run changed, for the next run if this one is
 * killed (see "killed runs" below). */
static int state_save(void);

/* The bdi of the file system under test and its knobs. */
static char bdi[128];
static char bdi_saved_strict[32], bdi_saved_ratio[32];
static const char *bdi_ratio_knob = "max_ratio";
static int bdi_changed;

/* The blkio child group, while it exists. */
static char cgroup[256];

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = n < 0 ? -errno : 0;
	close(fd);
	if (e)
		return e;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

static int write_small(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(val);
	ssize_t n = write(fd, val, len);
	int e = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) && !e)
		e = -errno;
	return e;
}

static int bdi_knob(const char *knob, char *path, size_t len)
{
	return snprintf(path, len, "%s/%s", bdi, knob) >= (int)len
		   ? -ENAMETOOLONG
		   : 0;
}

/* Restore strict_limit and max_ratio(_fine) (max_bytes follows the
 * ratio: the kernel keeps one limit).  Prints what could not be. */
static int bdi_restore(void)
{
	if (!bdi_changed)
		return 0;
	char p[256];
	int e = 0, r;
	bdi_knob(bdi_ratio_knob, p, sizeof(p));
	if ((r = write_small(p, bdi_saved_ratio))) {
		cli_error("bench neighbor: restore '%s' to %s: %s", p,
			  bdi_saved_ratio, strerror(-r));
		e = r;
	}
	bdi_knob("strict_limit", p, sizeof(p));
	if ((r = write_small(p, bdi_saved_strict))) {
		cli_error("bench neighbor: restore '%s' to %s: %s", p,
			  bdi_saved_strict, strerror(-r));
		e = r;
	}
	bdi_changed = 0;
	state_save();
	return e;
}

static int bdi_set(uint64_t max_bytes)
{
	char p[256], v[32];
	int e;
	bdi_knob("strict_limit", p, sizeof(p));
	if ((e = read_small(p, bdi_saved_strict, sizeof(bdi_saved_strict))))
		return e;
	bdi_knob(bdi_ratio_knob, p, sizeof(p));
	if ((e = read_small(p, bdi_saved_ratio, sizeof(bdi_saved_ratio))))
		return e;
	/* recorded before the first write: a SIGKILL from here on
	 * leaves what the next run restores */
	bdi_changed = 1;
	if ((e = state_save())) {
		bdi_changed = 0;
		return e;
	}
	bdi_knob("max_bytes", p, sizeof(p));
	snprintf(v, sizeof(v), "%llu", (unsigned long long)max_bytes);
	if ((e = write_small(p, v))) {
		cli_error("bench neighbor: write '%s': %s", p, strerror(-e));
		bdi_restore();
		return e;
	}
	bdi_knob("strict_limit", p, sizeof(p));
	if ((e = write_small(p, "1"))) {
		cli_error("bench neighbor: write '%s': %s", p, strerror(-e));
		bdi_restore();
		return e;
	}
	return 0;
}

static int cgroup_remove(void)
{
	if (!cgroup[0])
		return 0;
	int e = 0;
	/* the neighbour has exited (or been killed and reaped): empty */
	for (int i = 0; i < 50; i++) {
		if (!rmdir(cgroup) || errno == ENOENT) {
			cgroup[0] = '\0';
			state_save();
			return 0;
		}
		e = -errno;
		if (e != -EBUSY)
			break;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	cli_error("bench neighbor: rmdir '%s': %s", cgroup, strerror(-e));
	return e;
}

/* The blkio child group of this run (one per benchmark process). */
static const char *cgroup_path(void)
{
	static char p[256];
	snprintf(p, sizeof(p), "/sys/fs/cgroup/blkio/flushkit-neighbor-%d",
		 (int)getpid());
	return p;
}

static int cgroup_make(unsigned maj, unsigned min, uint64_t bps)
{
	snprintf(cgroup, sizeof(cgroup), "%s", cgroup_path());
	int se = state_save(); /* before the group exists */
	if (se) {
		cgroup[0] = '\0';
		return se;
	}
	if (mkdir(cgroup, 0755) && errno != EEXIST) {
		int e = -errno;
		cli_error("bench neighbor: mkdir '%s': %s", cgroup,
			  strerror(-e));
		cgroup[0] = '\0';
		return e;
	}
	char p[320], v[64];
	snprintf(p, sizeof(p), "%s/blkio.throttle.write_bps_device", cgroup);
	snprintf(v, sizeof(v), "%u:%u %llu", maj, min, (unsigned long long)bps);
	int e = write_small(p, v);
	if (e) {
		cli_error("bench neighbor: write '%s' to '%s': %s", v, p,
			  strerror(-e));
		cgroup_remove();
	}
	return e;
}

static void restore_all(void)
{
	bdi_restore();
	cgroup_remove();
}

/* "flushkit bench neighbor --in-cgroup=DIR -- PROG ARGS": join the blkio
 * group DIR, then exec PROG (so the neighbour's first write is in it). */
static int in_cgroup_exec(const char *dir, char **argv)
{
	char p[512], v[32];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	int e = write_small(p, v);
	if (e) {
		cli_error("bench neighbor: write '%s': %s", p, strerror(-e));
		return 126;
	}
	execvp(argv[0], argv);
	cli_error("bench neighbor: exec '%s': %s", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* ---- helpers ----------------------------------------------------------- */

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_epoch(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* Dirty and Writeback of /proc/meminfo, KiB. */
static void meminfo(double *dirty_kb, double *wb_kb)
{
	*dirty_kb = *wb_kb = NAN;
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return;
	char line[256];
	double v;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Dirty: %lf", &v) == 1)
			*dirty_kb = v;
		else if (sscanf(line, "Writeback: %lf", &v) == 1)
			*wb_kb = v;
	}
	fclose(f);
}

static uint64_t meminfo_total_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return 0;
	char line[256];
	unsigned long long v = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* The dirty limit: vm.dirty_bytes, else vm.dirty_ratio of MemTotal (the
 * kernel takes the ratio of the memory available to the page cache, a
 * little less: an upper bound). */
static uint64_t dirty_limit_bytes(void)
{
	char b[64];
	unsigned long long v;
	if (!read_small("/proc/sys/vm/dirty_bytes", b, sizeof(b)) &&
	    sscanf(b, "%llu", &v) == 1 && v)
		return v;
	if (read_small("/proc/sys/vm/dirty_ratio", b, sizeof(b)) ||
	    sscanf(b, "%llu", &v) != 1)
		v = 20;
	return meminfo_total_kb() * 1024 / 100 * v;
}

/* The whole disk's MAJ:MIN for the file system of @path (the bdi and
 * the blkio throttles are per disk, not per partition). */
static int path_disk(const char *path, unsigned *maj, unsigned *min)
{
	struct stat st;
	if (stat(path, &st))
		return -errno;
	*maj = major(st.st_dev);
	*min = minor(st.st_dev);
	char p[128], b[64];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition", *maj, *min);
	if (access(p, F_OK))
		return 0;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../dev", *maj, *min);
	if (!read_small(p, b, sizeof(b)))
		sscanf(b, "%u:%u", maj, min);
	return 0;
}

/* rm -rf @path (a child with a fixed argument array). */
static void remove_tree(const char *path)
{
	char *argv[] = {"rm", "-rf", "--", (char *)path, NULL};
	struct child_opts o = {.flags = CHILD_STDIN_NULL};
	child_run("rm", argv, &o);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted @v. */
static double pct(const double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	size_t k = (size_t)ceil(q * (double)n);
	return v[k ? k - 1 : 0];
}

struct lat_set {
	double *lat_ms, *end;
	size_t n, alloc;
};

static int lat_add(struct lat_set *s, double end, double lat_ms)
{
	if (s->n == s->alloc) {
		size_t na = s->alloc ? s->alloc * 2 : 65536;
		double *a = realloc(s->lat_ms, na * sizeof(double));
		if (!a)
			return -ENOMEM;
		s->lat_ms = a;
		double *b = realloc(s->end, na * sizeof(double));
		if (!b)
			return -ENOMEM;
		s->end = b;
		s->alloc = na;
	}
	s->lat_ms[s->n] = lat_ms;
	s->end[s->n++] = end;
	return 0;
}

/* Read the pgbench-format logs RUN/txlog.* (end time epoch, latency). */
static int read_txlogs(const char *run, struct lat_set *s, char *names,
		       size_t names_len)
{
	DIR *d = opendir(run);
	if (!d)
		return -errno;
	struct dirent *de;
	int e = 0;
	names[0] = '\0';
	while (!e && (de = readdir(d))) {
		if (strncmp(de->d_name, "txlog.", 6))
			continue;
		size_t l = strlen(names);
		snprintf(names + l, names_len - l, "%s%s", l ? " " : "",
			 de->d_name);
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", run, de->d_name);
		FILE *f = fopen(path, "re");
		if (!f) {
			e = -errno;
			break;
		}
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			long client, xact, script;
			double lat_us, ep, us;
			if (sscanf(line, "%ld %ld %lf %ld %lf %lf", &client,
				   &xact, &lat_us, &script, &ep, &us) != 6)
				continue;
			if ((e = lat_add(s, ep + us / 1e6, lat_us / 1000.0)))
				break;
		}
		fclose(f);
	}
	closedir(d);
	return e;
}

/* The victim's result file in @dir (the only *.jsonl there). */
static int find_result(const char *dir, char *path, size_t len)
{
	char **names;
	size_t nr;
	int e = results_list(dir, &names, &nr);
	if (e)
		return e;
	if (!nr) {
		results_list_free(names, nr);
		return -ENOENT;
	}
	snprintf(path, len, "%s/%s", dir, names[nr - 1]);
	results_list_free(names, nr);
	return 0;
}

/* ---- the PostgreSQL victim's cluster ---------------------------------- */

#define PG_BIN "/usr/lib/postgresql/15/bin"
#define PG_PORT "54329" /* on a private socket directory, no TCP */

/*
 * One cluster for the whole benchmark: initdb'ed in DIR/pg on the file
 * system under test, its postmaster our child (its own process group,
 * SIGTERM when we die), its socket in a private directory under /tmp,
 * pgbench's per-transaction logs in a private directory on /dev/shm
 * (not on the disk under test; moved into the run's directory after
 * each run).  pg_stop stops it (fast shutdown) and removes all three on
 * every exit path.  As root the server runs as the user postgres.
 */
static struct {
	pid_t pid; /* the postmaster, or -1 */
	int made;  /* the directories below exist */
	char data[1100], sock[64], logs[64];
	int setuid;
	uid_t uid;
	gid_t gid;
	char version[80];
} pg = {.pid = -1};

/* Why the PostgreSQL victims cannot run here, or NULL. */
static const char *pg_why(char *buf, size_t len)
{
	static const char *const progs[] = {"initdb", "postgres", "pgbench",
					    "pg_isready", "psql"};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/%s", PG_BIN, progs[i]);
		if (access(p, X_OK)) {
			snprintf(buf, len,
				 "no %s (Debian package postgresql-15)", p);
			return buf;
		}
	}
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("postgres");
		if (!pw) {
			snprintf(buf, len,
				 "no user postgres (PostgreSQL refuses to run "
				 "as root)");
			return buf;
		}
		pg.setuid = 1;
		pg.uid = pw->pw_uid;
		pg.gid = pw->pw_gid;
	}
	return NULL;
}

static int pg_chown(const char *path)
{
	if (pg.setuid && chown(path, pg.uid, pg.gid)) {
		int e = -errno;
		cli_error("bench neighbor: chown '%s' to postgres: %s", path,
			  strerror(-e));
		return e;
	}
	return 0;
}

/* A PostgreSQL client program, as ourselves (the socket is ours), its
 * output into @out_path. */
static int pg_client(char **argv, const char *cwd, const char *out_path)
{
	char prog[128];
	snprintf(prog, sizeof(prog), "%s/%s", PG_BIN, argv[0]);
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
					CHILD_SIGDFL | CHILD_PDEATHSIG |
					(out_path ? 0 : CHILD_STDOUT_NULL),
			       .cwd = cwd,
			       .out_path = out_path};
	return child_run(prog, argv, &o);
}

/* Stop the postmaster (fast shutdown, then immediate, then SIGKILL of
 * its process group) and remove the cluster, socket and log
 * directories.  Returns 0 or -1 (printed). */
static int pg_stop(void)
{
	int e = 0;
	if (pg.pid > 0) {
		static const int sigs[] = {SIGINT, SIGQUIT, SIGKILL};
		static const int waits[] = {300, 100, 100}; /* 0.1 s */
		int r = -EAGAIN;
		for (int i = 0; i < 3 && r == -EAGAIN; i++) {
			if (i == 2)
				kill(-pg.pid, SIGKILL);
			else
				kill(pg.pid, sigs[i]);
			for (int k = 0; k < waits[i] && r == -EAGAIN; k++) {
				r = child_wait(pg.pid, 1);
				if (r == -EAGAIN)
					sleep_s(0.1);
			}
			if (i && r != -EAGAIN)
				cli_error("bench neighbor: PostgreSQL did not "
					  "stop on SIGINT: %s sent",
					  i == 1 ? "SIGQUIT" : "SIGKILL");
		}
		/* backends of an immediate shutdown: the group */
		kill(-pg.pid, SIGKILL);
		pg.pid = -1;
	}
	if (pg.made) {
		const char *dirs[] = {pg.data, pg.sock, pg.logs};
		for (size_t i = 0; i < 3; i++) {
			if (!dirs[i][0])
				continue;
			remove_tree(dirs[i]);
			if (!access(dirs[i], F_OK)) {
				cli_error("bench neighbor: could not remove "
					  "'%s'",
					  dirs[i]);
				e = -1;
			}
		}
		pg.made = 0;
		state_save();
	}
	return e;
}

/* initdb DIR/pg, start the postmaster, wait until it accepts
 * connections.  Returns 0, -EINTR (a stop signal), or -1 (printed). */
static int pg_start(const char *dir, const char *out, uint64_t clients)
{
	char log[1100], b[1100];
	snprintf(pg.data, sizeof(pg.data), "%s/pg", dir);
	snprintf(pg.sock, sizeof(pg.sock), "/tmp/flushkit-neighbor-pg.XXXXXX");
	snprintf(pg.logs, sizeof(pg.logs),
		 "/dev/shm/flushkit-neighbor-txlog.XXXXXX");
	remove_tree(pg.data);
	pg.made = 1;
	if (!mkdtemp(pg.sock) || !mkdtemp(pg.logs)) {
		cli_error("bench neighbor: mkdtemp '%s': %s",
			  access(pg.sock, F_OK) ? pg.sock : pg.logs,
			  strerror(errno));
		return -1;
	}
	if (state_save())
		return -1;
	if (mkdir(pg.data, 0700)) {
		cli_error("bench neighbor: mkdir '%s': %s", pg.data,
			  strerror(errno));
		return -1;
	}
	if (pg_chown(pg.data) || pg_chown(pg.sock))
		return -1;

	char *vargv[] = {"postgres", "--version", NULL};
	struct child_opts vo = {.flags = CHILD_STDIN_NULL,
				.capture = pg.version,
				.capture_len = sizeof(pg.version)};
	snprintf(b, sizeof(b), "%s/postgres", PG_BIN);
	child_run(b, vargv, &vo);
	pg.version[strcspn(pg.version, "\n")] = '\0';

	/* initdb --no-sync: the runs start after a CHECKPOINT and a
	 * syncfs of the file system anyway */
	snprintf(log, sizeof(log), "%s/pg-initdb.log", out);
	snprintf(b, sizeof(b), "%s/initdb", PG_BIN);
	char *iargv[] = {"initdb",   "-D", pg.data, "-A",	 "trust", "-U",
			 "postgres", "-E", "UTF8",  "--no-sync", NULL};
	int flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT | CHILD_SIGDFL |
		    CHILD_PDEATHSIG | (pg.setuid ? CHILD_SETUID : 0);
	struct child_opts io = {.flags = flags,
				.cwd = pg.sock, /* one the server's user
						   can enter */
				.out_path = log,
				.uid = pg.uid,
				.gid = pg.gid};
	int st = child_run(b, iargv, &io);
	if (stop_sig)
		return -EINTR;
	if (st) {
		cli_error("bench neighbor: initdb '%s' failed (status %d): "
			  "see '%s'",
			  pg.data, st, log);
		return -1;
	}

	char sockopt[96], conns[64];
	snprintf(sockopt, sizeof(sockopt), "unix_socket_directories=%s",
		 pg.sock);
	snprintf(conns, sizeof(conns), "max_connections=%llu",
		 (unsigned long long)clients + 10);
	snprintf(log, sizeof(log), "%s/pg-server.log", out);
	snprintf(b, sizeof(b), "%s/postgres", PG_BIN);
	char *sargv[] = {"postgres",
			 "-D",
			 pg.data,
			 "-p",
			 PG_PORT,
			 "-c",
			 "listen_addresses=",
			 "-c",
			 sockopt,
			 "-c",
			 conns,
			 "-c",
			 "log_checkpoints=on",
			 "-c",
			 "log_line_prefix=%m [%p] ",
			 "-c",
			 "log_timezone=UTC",
			 NULL};
	io.flags |= CHILD_SETPGID;
	int e = child_start(b, sargv, &io, &pg.pid);
	if (e) {
		cli_error("bench neighbor: start PostgreSQL: %s", strerror(-e));
		return -1;
	}
	char *rargv[] = {"pg_isready", "-q",	"-h", pg.sock,
			 "-p",	       PG_PORT, NULL};
	for (int i = 0; i < 600; i++) {
		if (stop_sig)
			return -EINTR;
		int r = child_wait(pg.pid, 1);
		if (r != -EAGAIN) {
			pg.pid = -1;
			cli_error("bench neighbor: PostgreSQL exited (status "
				  "%d) at its start: see '%s'",
				  r, log);
			return -1;
		}
		if (!pg_client(rargv, NULL, NULL))
			return 0;
		sleep_s(0.1);
	}
	cli_error("bench neighbor: PostgreSQL accepted no connection in "
		  "60 s: see '%s'",
		  log);
	return -1;
}

/* Move pgbench's per-transaction logs of one run from the tmpfs to
 * @run as txlog.* (its latency scatter for report).  Returns 0 or
 * -errno. */
static int pg_move_logs(const char *run)
{
	DIR *d = opendir(pg.logs);
	if (!d)
		return -errno;
	struct dirent *de;
	int e = 0;
	while (!e && (de = readdir(d))) {
		if (strncmp(de->d_name, "txlog.", 6))
			continue;
		char from[1200], to[2000];
		snprintf(from, sizeof(from), "%s/%s", pg.logs, de->d_name);
		snprintf(to, sizeof(to), "%s/%s", run, de->d_name);
		int in = open(from, O_RDONLY | O_CLOEXEC);
		int o =
		    open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (in < 0 || o < 0)
			e = -errno;
		char buf[65536];
		ssize_t n;
		while (!e && (n = read(in, buf, sizeof(buf))) != 0) {
			if (n < 0 || write(o, buf, (size_t)n) != n)
				e = n < 0 ? -errno : -EIO;
		}
		if (o >= 0 && close(o) && !e)
			e = -errno;
		if (in >= 0)
			close(in);
		unlink(from);
	}
	closedir(d);
	return e;
}

/* pgbench's -P lines ("progress: 5.0 s, 398.0 tps, lat 2.411 ms stddev
 * 0.893, ...") from @path into @rf, moved by @off seconds. */
static void pg_copy_progress(struct result_file *rf, const char *path,
			     double off)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		double t, tps, lat, sd;
		if (sscanf(line,
			   "progress: %lf s, %lf tps, lat %lf ms stddev %lf",
			   &t, &tps, &lat, &sd) == 4)
			results_progress(rf, t + off, tps, lat, sd, -1);
	}
	fclose(f);
}

/* ---- killed runs ------------------------------------------------------ */

/*
 * A SIGKILL (or a crash) runs no cleanup: the bdi knobs stay strict, the
 * blkio group stays, the PostgreSQL cluster stays on the disk.  So each
 * run keeps a record of what it changed, written before each change and
 * rewritten after each undo, in STATE_DIR/PID.state (root-only, on
 * /run: a reboot resets the knobs and the record together), a file it
 * holds flock()ed for as long as it runs.  At the start of every run
 * (and with --cleanup alone) a record nobody holds locked is a killed
 * run's: what it names is restored or removed and said so on stderr,
 * then the record is deleted.  Lines "KEY VALUE" (the value the rest of
 * the line): pid, bdi (the /sys/class/bdi directory), bdi_strict_limit,
 * bdi_ratio_knob, bdi_ratio (the values before), blkio (the group),
 * pg_data, pg_sock, pg_logs (the cluster's directories).
 */
#define STATE_DIR "/run/flushkit-neighbor"

static int state_fd = -1;
static char state_file[128];

/* Open and lock this run's record (root only: without root nothing a
 * killed run could leave is changed but the cluster, which stays then).
 * 0 or -errno (printed). */
static int state_open(void)
{
	if (geteuid())
		return 0;
	if (mkdir(STATE_DIR, 0700) && errno != EEXIST) {
		int e = -errno;
		cli_error("bench neighbor: mkdir '%s': %s", STATE_DIR,
			  strerror(-e));
		return e;
	}
	/* made under another name, locked, then renamed: no other run
	 * ever sees it unlocked */
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s/%d.new", STATE_DIR, (int)getpid());
	snprintf(state_file, sizeof(state_file), "%s/%d.state", STATE_DIR,
		 (int)getpid());
	state_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (state_fd < 0 || flock(state_fd, LOCK_EX | LOCK_NB) ||
	    rename(tmp, state_file)) {
		int e = -errno;
		cli_error("bench neighbor: create '%s': %s", state_file,
			  strerror(-e));
		if (state_fd >= 0) {
			close(state_fd);
			unlink(tmp);
		}
		state_fd = -1;
		state_file[0] = '\0';
		return e;
	}
	return 0;
}

static int state_put(char *buf, size_t len, size_t *n, const char *key,
		     const char *val)
{
	if (strchr(val, '\n'))
		return -EINVAL; /* a path with a newline: not recordable */
	int w = snprintf(buf + *n, len - *n, "%s %s\n", key, val);
	if (w < 0 || (size_t)w >= len - *n)
		return -ENAMETOOLONG;
	*n += (size_t)w;
	return 0;
}

/* Rewrite the record from what is changed now.  0, or -errno (printed);
 * without a record (not root) 0 when nothing needs one. */
static int state_save(void)
{
	if (state_fd < 0)
		return bdi_changed || cgroup[0] ? -EBADF : 0;
	char buf[8192], pid[32];
	size_t n = 0;
	int e;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	e = state_put(buf, sizeof(buf), &n, "pid", pid);
	if (!e && bdi_changed)
		e = state_put(buf, sizeof(buf), &n, "bdi", bdi) ||
			    state_put(buf, sizeof(buf), &n, "bdi_strict_limit",
				      bdi_saved_strict) ||
			    state_put(buf, sizeof(buf), &n, "bdi_ratio_knob",
				      bdi_ratio_knob) ||
			    state_put(buf, sizeof(buf), &n, "bdi_ratio",
				      bdi_saved_ratio)
			? -ENAMETOOLONG
			: 0;
	if (!e && cgroup[0])
		e = state_put(buf, sizeof(buf), &n, "blkio", cgroup);
	if (!e && pg.made)
		e = state_put(buf, sizeof(buf), &n, "pg_data", pg.data) ||
			    state_put(buf, sizeof(buf), &n, "pg_sock",
				      pg.sock) ||
			    state_put(buf, sizeof(buf), &n, "pg_logs", pg.logs)
			? -EINVAL
			: 0;
	if (!e && (ftruncate(state_fd, 0) ||
		   pwrite(state_fd, buf, n, 0) != (ssize_t)n))
		e = -errno;
	if (e)
		cli_error("bench neighbor: record what is changed in '%s': %s",
			  state_file, strerror(-e));
	return e;
}

/* The run ends: nothing left to record. */
static void state_close(void)
{
	if (state_fd < 0)
		return;
	if (!bdi_changed && !cgroup[0] && !pg.made)
		unlink(state_file);
	close(state_fd);
	state_fd = -1;
}

static int has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Stop a postmaster a killed run left in @data (its postmaster.pid,
 * checked to be a process working in @data), SIGQUIT then SIGKILL. */
static void stale_postmaster(const char *data)
{
	char p[1200], b[64], cwd[1200];
	snprintf(p, sizeof(p), "%s/postmaster.pid", data);
	if (read_small(p, b, sizeof(b)))
		return;
	int pid = atoi(b);
	if (pid <= 1)
		return;
	snprintf(p, sizeof(p), "/proc/%d/cwd", pid);
	ssize_t n = readlink(p, cwd, sizeof(cwd) - 1);
	if (n < 0)
		return;
	cwd[n] = '\0';
	if (strcmp(cwd, data))
		return; /* another process has that pid now */
	kill(pid, SIGQUIT);
	for (int i = 0; i < 100 && !kill(pid, 0); i++)
		sleep_s(0.05);
	if (!kill(pid, 0))
		kill(pid, SIGKILL);
	for (int i = 0; i < 100 && !kill(pid, 0); i++)
		sleep_s(0.05);
	fprintf(stderr,
		"flushkit: bench neighbor: stopped PostgreSQL (pid %d) left "
		"by a killed run\n",
		pid);
}

/* Undo what the killed run of record @path left.  The count undone. */
static int stale_undo(const char *path, int fd)
{
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 0;
	}
	char line[1300], pid[32] = "?", bdir[256] = "", sl[32] = "",
			 knob[32] = "", ratio[32] = "";
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "pid"))
			snprintf(pid, sizeof(pid), "%s", v);
		else if (!strcmp(line, "bdi") &&
			 has_prefix(v, "/sys/class/bdi/"))
			snprintf(bdir, sizeof(bdir), "%s", v);
		else if (!strcmp(line, "bdi_strict_limit"))
			snprintf(sl, sizeof(sl), "%s", v);
		else if (!strcmp(line, "bdi_ratio_knob") &&
			 (!strcmp(v, "max_ratio") ||
			  !strcmp(v, "max_ratio_fine")))
			snprintf(knob, sizeof(knob), "%s", v);
		else if (!strcmp(line, "bdi_ratio"))
			snprintf(ratio, sizeof(ratio), "%s", v);
		else if (!strcmp(line, "blkio") &&
			 has_prefix(v, "/sys/fs/cgroup/blkio/"
				       "flushkit-neighbor-")) {
			/* its members first (a neighbour still running) */
			char p[512], b[4096];
			snprintf(p, sizeof(p), "%s/cgroup.procs", v);
			if (!read_small(p, b, sizeof(b))) {
				FILE *pf = fopen(p, "re");
				int m;
				while (pf && fscanf(pf, "%d", &m) == 1)
					if (m > 1)
						kill(m, SIGKILL);
				if (pf)
					fclose(pf);
			}
			int ok = 0;
			for (int i = 0; i < 50 && !ok; i++) {
				ok = !rmdir(v) || errno == ENOENT;
				if (!ok)
					sleep_s(0.02);
			}
			if (ok)
				fprintf(stderr,
					"flushkit: bench neighbor: removed "
					"blkio group %s left by a killed run "
					"(pid %s)\n",
					v, pid);
			else
				cli_error("bench neighbor: rmdir '%s' (left by "
					  "a killed run): %s",
					  v, strerror(errno));
			n++;
		} else if (!strcmp(line, "pg_data") && v[0] == '/') {
			stale_postmaster(v);
			remove_tree(v);
			fprintf(stderr,
				"flushkit: bench neighbor: removed the "
				"PostgreSQL cluster %s left by a killed run "
				"(pid %s)\n",
				v, pid);
			n++;
		} else if ((!strcmp(line, "pg_sock") &&
			    has_prefix(v, "/tmp/flushkit-neighbor-pg.")) ||
			   (!strcmp(line, "pg_logs") &&
			    has_prefix(v,
				       "/dev/shm/flushkit-neighbor-txlog."))) {
			remove_tree(v);
			n++;
		}
	}
	if (bdir[0] && sl[0] && knob[0] && ratio[0]) {
		char p[320];
		snprintf(p, sizeof(p), "%s/%s", bdir, knob);
		int e = write_small(p, ratio);
		snprintf(p, sizeof(p), "%s/strict_limit", bdir);
		if (!e)
			e = write_small(p, sl);
		if (e)
			cli_error("bench neighbor: restore '%s' (left by a "
				  "killed run): %s",
				  p, strerror(-e));
		else
			fprintf(stderr,
				"flushkit: bench neighbor: restored bdi %s "
				"strict_limit %s %s %s left by a killed run "
				"(pid %s)\n",
				bdir + strlen("/sys/class/bdi/"), sl, knob,
				ratio, pid);
		n++;
	}
	unlink(path);
	fclose(f);
	return n;
}

/* Undo what killed runs left (every record nobody holds locked).  The
 * count undone. */
static int state_cleanup_stale(void)
{
	DIR *d = opendir(STATE_DIR);
	if (!d)
		return 0;
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 7 || strcmp(de->d_name + l - 6, ".state"))
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", STATE_DIR, de->d_name);
		if (!strcmp(p, state_file))
			continue;
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			close(fd); /* a live run's */
			continue;
		}
		n += stale_undo(p, fd);
	}
	closedir(d);
	return n;
}

/*
 * The bdi is one run's at a time: a run with strict runs holds
 * STATE_DIR/bdi-MAJ:MIN.lock flock()ed (its pid inside) from before it
 * reads the bdi's knobs to its exit.  Two at once would each save the
 * other's live strict values as the ones to restore, and each one's
 * restore would undo the other's strict_limit mid-run.  Once held, the
 * records of killed runs are undone again: one that held the bdi and
 * was killed after this run's first cleanup has left it strict.  0, or
 * -errno (printed; -EWOULDBLOCK: another run holds it).
 */
static int bdi_lock_fd = -1;

static int bdi_lock(void)
{
	const char *mm = bdi + strlen("/sys/class/bdi/");
	char p[256], who[32] = "?";
	snprintf(p, sizeof(p), "%s/bdi-%s.lock", STATE_DIR, mm);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int e = errno;
		cli_error("bench neighbor: create '%s': %s", p, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;
		if (e == EWOULDBLOCK) {
			ssize_t n = pread(fd, who, sizeof(who) - 1, 0);
			who[n > 0 ? n : 0] = '\0';
			who[strcspn(who, "\n")] = '\0';
			cli_error("bench neighbor: bdi %s is in use by another "
				  "bench neighbor run (pid %s), whose strict "
				  "runs change its knobs: wait for it to end, "
				  "or use another --dir or --device",
				  mm, who[0] ? who : "?");
		} else {
			cli_error("bench neighbor: flock '%s': %s", p,
				  strerror(e));
		}
		close(fd);
		return -e;
	}
	int w = snprintf(who, sizeof(who), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, who, (size_t)w, 0) != w) {
		int e = errno;
		cli_error("bench neighbor: write '%s': %s", p, strerror(e));
		close(fd);
		return -e;
	}
	bdi_lock_fd = fd; /* released at exit */
	state_cleanup_stale();
	return 0;
}

/*
 * A --dir is one run's at a time: the victim's data, the neighbour's
 * output and the PostgreSQL cluster live in it under fixed names, so a
 * second run there would remove and overwrite the first one's mid-run.
 * DIR/.flushkit-neighbor.lock (created 0600 through the directory's
 * descriptor, no symlink followed) is flock()ed, its pid inside, until
 * dir_unlock removes it at exit.  A lock taken on a file its holder
 * removed meanwhile is no lock: after the flock the file must still be
 * the one at the name (st_dev, st_ino), else it is opened again.  0, or
 * -errno (printed; -EWOULDBLOCK: another run holds it).
 */
static const char dir_lock_name[] = ".flushkit-neighbor.lock";
static int dir_lock_fd = -1, dir_lock_dfd = -1;

static int dir_lock(const char *dir)
{
	const char *name = dir_lock_name;
	char who[32] = "";
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		cli_error("bench neighbor: open '%s': %s", dir, strerror(e));
		return -e;
	}
	for (int tries = 0;; tries++) {
		int e, fd = openat(dfd, name,
				   O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				   0600);
		if (fd < 0) {
			e = errno;
			cli_error("bench neighbor: create '%s/%s': %s", dir,
				  name, strerror(e));
			close(dfd);
			return -e;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			e = errno;
			if (e == EWOULDBLOCK) {
				ssize_t n = pread(fd, who, sizeof(who) - 1, 0);
				who[n > 0 ? n : 0] = '\0';
				who[strcspn(who, "\n")] = '\0';
				cli_error(
				    "bench neighbor: '%s' is in use by "
				    "another bench neighbor run (pid %s), "
				    "whose data, neighbour and PostgreSQL "
				    "cluster live there: wait for it to "
				    "end, or use another --dir",
				    dir, who[0] ? who : "?");
			} else {
				cli_error("bench neighbor: flock '%s/%s': %s",
					  dir, name, strerror(e));
			}
			close(fd);
			close(dfd);
			return -e;
		}
		struct stat held, named;
		if (fstat(fd, &held) ||
		    fstatat(dfd, name, &named, AT_SYMLINK_NOFOLLOW) ||
		    held.st_dev != named.st_dev ||
		    held.st_ino != named.st_ino) {
			/* its holder removed it between our open and
			 * flock: take the one at the name now */
			close(fd);
			if (tries < 100)
				continue;
			cli_error("bench neighbor: '%s/%s' keeps being "
				  "replaced: another run is starting and "
				  "ending there",
				  dir, name);
			close(dfd);
			return -EBUSY;
		}
		int w = snprintf(who, sizeof(who), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) || pwrite(fd, who, (size_t)w, 0) != w) {
			e = errno;
			cli_error("bench neighbor: write '%s/%s': %s", dir,
				  name, strerror(e));
			close(fd);
			close(dfd);
			return -e;
		}
		dir_lock_fd = fd;
		dir_lock_dfd = dfd;
		return 0;
	}
}

/* Remove the lock file while still holding it, then release it (before
 * the file system it is on is unmounted). */
static void dir_unlock(void)
{
	if (dir_lock_fd < 0)
		return;
	unlinkat(dir_lock_dfd, dir_lock_name, 0);
	close(dir_lock_fd);
	close(dir_lock_dfd);
	dir_lock_fd = dir_lock_dfd = -1;
}

/* ---- one run ----------------------------------------------------------- */

struct env {
	const struct opts *op;
	char dir[1024];		      /* the file system under test */
	char out[1024];		      /* the results directory */
	unsigned maj, min;	      /* its disk */
	const char *skip[NR_CONFIGS]; /* why a configuration cannot run */
	char skip_buf[NR_CONFIGS][320];
	uint64_t stream_bytes;
	FILE *tsv;
};

/* The neighbour's argv (into @argv, strings in @buf). */
static void neighbor_argv(const struct env *env, int kind, char **argv,
			  char (*buf)[1100])
{
	if (kind == N_STREAM) {
		snprintf(buf[0], sizeof(buf[0]), "of=%s/nb/stream", env->dir);
		snprintf(buf[1], sizeof(buf[1]), "count=%llu",
			 (unsigned long long)(env->stream_bytes >> 20));
		char *a[] = {"dd",   "if=/dev/zero", buf[0], "bs=1M",
			     buf[1], "status=none",  NULL};
		memcpy(argv, a, sizeof(a));
	} else {
		snprintf(buf[0], sizeof(buf[0]), "%s/nb/tree", env->dir);
		char *a[] = {"cp",   "-a", "--", (char *)env->op->tree_src,
			     buf[0], NULL};
		memcpy(argv, a, sizeof(a));
	}
}

static void kill_group(pid_t pid)
{
	if (pid > 0) {
		kill(-pid, SIGTERM);
		child_wait(pid, 0);
	}
}

static struct json_object *jd(double v, int dec)
{
	return results_json_double(v, dec);
}

/* Copy the victim's progress and checkpoint lines into @rf, moved by
 * @off seconds (the victim's clock started later than ours). */
static void copy_victim(struct result_file *rf, const struct result_run *v,
			double off)
{
	for (size_t k = 0; k < v->nr_prog; k++) {
		const struct result_progress *p = &v->prog[k];
		results_progress(rf, p->t_s + off, p->tps, p->lat_avg_ms,
				 p->lat_stddev_ms,
				 isnan(p->lat_max_ms) ? -1 : p->lat_max_ms);
	}
	for (size_t k = 0; k < v->nr_ck; k++) {
		const struct result_checkpoint *c = &v->ck[k];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "start_s", jd(c->start_s + off, 3));
		json_object_object_add(o, "end_s", jd(c->end_s + off, 3));
		json_object_object_add(o, "write_s", jd(c->write_s, 3));
		json_object_object_add(o, "sync_s", jd(c->sync_s, 3));
		json_object_object_add(o, "total_s", jd(c->total_s, 3));
		json_object_object_add(o, "longest_s", jd(c->longest_s, 3));
		json_object_object_add(o, "buffers",
				       json_object_new_int64(c->buffers));
		json_object_object_add(o, "files",
				       json_object_new_int64(c->files));
		results_write(rf, "checkpoint", o);
	}
}

/*
 * One victim run with neighbour @kind under @config in round @round.
 * Returns 0 (the figures in @row), -EINTR when a signal stopped it, or
 * -1 when it could not run (printed).
 */
static int one_run(struct env *env, int vmode, int kind, int config,
		   unsigned round, struct row *row)
{
	const struct opts *op = env->op;
	char run[1400], path[1600], data[1100], nbdir[1100];
	int ret = -1;
	snprintf(run, sizeof(run), "%s/%s-%s-%s-r%u", env->out,
		 victim_names[vmode], neighbor_names[kind],
		 config_names[config], round + 1);
	snprintf(data, sizeof(data), "%s/tpcb", env->dir);
	snprintf(nbdir, sizeof(nbdir), "%s/nb", env->dir);
	if (mkdir(run, 0755) && errno != EEXIST) {
		cli_error("bench neighbor: mkdir '%s': %s", run,
			  strerror(errno));
		return -1;
	}
	remove_tree(data);
	remove_tree(nbdir);
	if (mkdir(nbdir, 0755)) {
		cli_error("bench neighbor: mkdir '%s': %s", nbdir,
			  strerror(errno));
		return -1;
	}

	/* the victim's tables, then everything on disk before it starts */
	char scale[32], clients[32], dur[32], rate[32], logp[1500], vres[1500];
	snprintf(scale, sizeof(scale), "%llu", (unsigned long long)op->scale);
	snprintf(clients, sizeof(clients), "%llu",
		 (unsigned long long)op->clients);
	snprintf(dur, sizeof(dur), "%llu", (unsigned long long)op->duration_s);
	snprintf(rate, sizeof(rate), "%llu", (unsigned long long)op->rate);
	snprintf(logp, sizeof(logp), "%s/txlog", run);
	snprintf(vres, sizeof(vres), "%s/victim", run);
	if (!IS_PG(vmode))
		mkdir(vres, 0755);
	char *init[] = {"flushkit", "bench",	  "tpcb", "-i",		  "-s",
			scale,	    "--data-dir", data,	  "--no-results", NULL};
	struct child_opts io = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
					 CHILD_SIGDFL | CHILD_PDEATHSIG,
				.cwd = run,
				.out_path = "init.log"};
	int st;
	if (IS_PG(vmode)) {
		/* pgbench -i recreates the tables; the CHECKPOINT writes
		 * them out, as the store's init ends with one */
		char *pinit[] = {"pgbench", "-i",	"-s",	    scale,
				 "-h",	    pg.sock,	"-p",	    PG_PORT,
				 "-U",	    "postgres", "postgres", NULL};
		char *ck[] = {"psql",	  "-X", "-q",	      "-h",
			      pg.sock,	  "-p", PG_PORT,      "-U",
			      "postgres", "-c", "CHECKPOINT", "postgres",
			      NULL};
		st = pg_client(pinit, run, "init.log");
		if (!st && !stop_sig)
			st = pg_client(ck, run, "checkpoint.log");
	} else {
		st = child_run("/proc/self/exe", init, &io);
	}
	if (stop_sig)
		return -EINTR;
	if (st) {
		cli_error("bench neighbor: victim init failed (status %d): "
			  "see '%s/init.log'",
			  st, run);
		return -1;
	}
	int dfd = open(env->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		syncfs(dfd);
		close(dfd);
	}
	if (stop_sig)
		return -EINTR;

	struct result_file *rf;
	int e = results_open(run, "neighbor", &rf);
	if (e) {
		cli_error("bench neighbor: open '%s': %s", run, strerror(-e));
		return -1;
	}
	char *vargv[24];
	size_t vn = 0;
	char *vfixed[] = {
	    "flushkit",	  "bench", "tpcb",	"-c", clients,	      "-T",
	    dur,	  "-P",	   "1",		"-l", "--log-prefix", logp,
	    "--data-dir", data,	   "--results", vres};
	for (size_t i = 0; i < sizeof(vfixed) / sizeof(vfixed[0]); i++)
		vargv[vn++] = vfixed[i];
	char vprog[128] = "/proc/self/exe";
	if (IS_PG(vmode)) {
		snprintf(vprog, sizeof(vprog), "%s/pgbench", PG_BIN);
		snprintf(logp, sizeof(logp), "--log-prefix=%s/txlog", pg.logs);
		char *pfixed[] = {
		    "pgbench",	"-h", pg.sock, "-p", PG_PORT, "-U",
		    "postgres", "-c", clients, "-j", clients, "-T",
		    dur,	"-P", "1",     "-l", logp};
		vn = 0;
		for (size_t i = 0; i < sizeof(pfixed) / sizeof(pfixed[0]); i++)
			vargv[vn++] = pfixed[i];
	}
	if (IS_RATE(vmode)) {
		vargv[vn++] = "-R";
		vargv[vn++] = rate;
	}
	if (IS_PG(vmode))
		vargv[vn++] = "postgres"; /* the database, last */
	vargv[vn] = NULL;

	char *nargv[32], nbuf[2][1100], stats[1500];
	char *nb[12];
	neighbor_argv(env, kind, nb, nbuf);
	size_t nn = 0;
	const char *prog = nb[0];
	char incg[400];
	switch (config) {
	case C_EXEC:
	case C_EXEC_IDLE:
		snprintf(stats, sizeof(stats), "--stats=%s/exec-stats", run);
		nargv[nn++] = "flushkit";
		nargv[nn++] = "exec";
		nargv[nn++] = stats;
		if (config == C_EXEC_IDLE)
			nargv[nn++] = "--ioprio=idle";
		for (size_t i = 0; i < op->nr_exec_opts; i++)
			nargv[nn++] = (char *)op->exec_opts[i];
		nargv[nn++] = "--";
		prog = "/proc/self/exe";
		break;
	case C_NOCACHE:
		nargv[nn++] = "nocache";
		prog = "nocache";
		break;
	case C_IONICE:
		/* the control: an I/O priority alone does not reach the
		 * flusher's writeback of the neighbour's pages */
		nargv[nn++] = "ionice";
		nargv[nn++] = "-c";
		nargv[nn++] = "3";
		prog = "ionice";
		break;
	case C_BLKIO:
		snprintf(incg, sizeof(incg), "--in-cgroup=%s", cgroup_path());
		nargv[nn++] = "flushkit";
		nargv[nn++] = "bench";
		nargv[nn++] = "neighbor";
		nargv[nn++] = incg;
		nargv[nn++] = "--";
		prog = "/proc/self/exe";
		break;
	}
	for (size_t i = 0; nb[i]; i++)
		nargv[nn++] = nb[i];
	nargv[nn] = NULL;

	/* settings: what tells the runs apart first */
	struct json_object *s = json_object_new_object();
	json_object_object_add(s, "victim",
			       json_object_new_string(victim_names[vmode]));
	json_object_object_add(s, "neighbor",
			       json_object_new_string(neighbor_names[kind]));
	json_object_object_add(s, "config",
			       json_object_new_string(config_names[config]));
	json_object_object_add(s, "round", json_object_new_int(round + 1));
	json_object_object_add(s, "device",
			       json_object_new_string(op->device.name));
	json_object_object_add(s, "dir", json_object_new_string(env->dir));
	json_object_object_add(s, "clients",
			       json_object_new_int64(op->clients));
	json_object_object_add(s, "scale", json_object_new_int64(op->scale));
	json_object_object_add(s, "duration_s",
			       json_object_new_int64(op->duration_s));
	json_object_object_add(s, "neighbor_delay_s",
			       json_object_new_int64(op->delay_s));
	json_object_object_add(
	    s, "victim_program",
	    json_object_new_string(IS_PG(vmode) ? pg.version
						: "flushkit bench tpcb"));
	if (IS_RATE(vmode))
		json_object_object_add(s, "rate",
				       json_object_new_int64(op->rate));
	struct json_object *na = json_object_new_array();
	for (size_t i = 0; nargv[i]; i++)
		json_object_array_add(na, json_object_new_string(nargv[i]));
	json_object_object_add(s, "neighbor_argv", na);
	if (config == C_STRICT)
		json_object_object_add(
		    s, "bdi_max_bytes",
		    json_object_new_int64(op->bdi_max_bytes));
	if (config == C_BLKIO)
		json_object_object_add(s, "blkio_write_bps",
				       json_object_new_int64(op->blkio_bps));

	const char *paths[] = {env->dir};
	results_env(rf, paths, 1);
	results_reset_clock(rf);
	double epoch0 = now_epoch(), mono0 = now_mono();
	results_monitor_start(rf, paths, 1, 1000);

	pid_t vpid = -1, npid = -1;
	struct child_opts vo = {.flags = CHILD_STDIN_NULL | CHILD_SIGDFL |
					 CHILD_SETPGID | CHILD_PDEATHSIG,
				.cwd = run,
				.out_path = "victim.out",
				.err_path = "victim.err"};
	double vstart = now_epoch();
	if ((e = child_start(vprog, vargv, &vo, &vpid))) {
		cli_error("bench neighbor: start the victim: %s", strerror(-e));
		json_object_put(s);
		results_summary(rf, NULL, "the victim could not start");
		results_close(rf);
		return -1;
	}
	double nb0 = NAN, nb1 = NAN, v1 = NAN, nb0_mono = NAN;
	int vst = -1, nst = -1;
	double peak_d = 0, peak_w = 0, base_dw = NAN, drained = NAN;
	char err[2048] = "";
	while (vpid > 0 || npid > 0 || isnan(nb0)) {
		if (stop_sig) {
			ret = -EINTR;
			break;
		}
		double t = now_mono() - mono0;
		if (isnan(nb0) && t >= (double)op->delay_s) {
			int ce = 0;
			if (config == C_STRICT)
				ce = bdi_set(op->bdi_max_bytes);
			if (config == C_BLKIO)
				ce = cgroup_make(env->maj, env->min,
						 op->blkio_bps);
			struct child_opts no = {
			    .flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
				     CHILD_SIGDFL | CHILD_SETPGID |
				     CHILD_PDEATHSIG | CHILD_EXEC_MSG,
			    .cwd = run,
			    .out_path = "neighbor.out"};
			double d0, w0;
			meminfo(&d0, &w0);
			base_dw = d0 + w0;
			if (!ce)
				ce = child_start(prog, nargv, &no, &npid);
			nb0 = now_epoch();
			nb0_mono = now_mono();
			if (ce) {
				snprintf(err, sizeof(err),
					 "the neighbour could not start: %s",
					 strerror(-ce));
				restore_all();
				nb1 = nb0;
				if (vpid < 0)
					break;
			}
		}
		if (!isnan(nb0) && (npid > 0 || vpid > 0)) {
			double d, w;
			meminfo(&d, &w);
			if (d > peak_d)
				peak_d = d;
			if (w > peak_w)
				peak_w = w;
			/* written back: after its exit, the first sample
			 * back near the level at its start */
			if (!isnan(nb1) && isnan(drained) &&
			    d + w <= base_dw + DRAIN_SLACK_KB)
				drained = now_epoch();
		}
		if (npid > 0) {
			int r = child_wait(npid, 1);
			if (r != -EAGAIN) {
				nst = r;
				npid = -1;
				nb1 = now_epoch();
				(void)nb0_mono;
				restore_all();
			}
		}
		if (vpid > 0) {
			int r = child_wait(vpid, 1);
			if (r != -EAGAIN) {
				vst = r;
				vpid = -1;
				v1 = now_epoch();
			}
		}
		if (vpid < 0 && isnan(nb0)) {
			snprintf(err, sizeof(err),
				 "the victim ended (status %d) before the "
				 "neighbour's start",
				 vst);
			break;
		}
		if (vpid > 0 || npid > 0 || isnan(nb0))
			sleep_s(0.2);
	}
	kill_group(npid);
	kill_group(vpid);
	restore_all();
	results_monitor_stop(rf);
	if (ret == -EINTR) {
		json_object_put(s);
		results_summary(rf, NULL, "stopped by a signal");
		results_close(rf);
		return ret;
	}

	/* the victim's result and logs */
	struct lat_set ls = {0};
	char logs[1024];
	e = IS_PG(vmode) ? pg_move_logs(run) : 0;
	if (!e)
		e = read_txlogs(run, &ls, logs, sizeof(logs));
	else
		logs[0] = '\0';
	struct json_object *ll = json_object_new_array();
	char *save = NULL;
	for (char *t = strtok_r(logs, " ", &save); t;
	     t = strtok_r(NULL, " ", &save))
		json_object_array_add(ll, json_object_new_string(t));
	json_object_object_add(s, "latency_log", ll);
	results_write(rf, "settings", s);
	struct result_run vr;
	memset(&vr, 0, sizeof(vr));
	if (IS_PG(vmode)) {
		snprintf(path, sizeof(path), "%s/victim.err", run);
		pg_copy_progress(rf, path, vstart - epoch0);
	} else if (!find_result(vres, path, sizeof(path)) &&
		   !result_run_load(path, &vr) && vr.epoch_s > 0) {
		copy_victim(rf, &vr, vr.epoch_s - epoch0);
	}
	result_run_release(&vr);

	if (!err[0] && vst != 0)
		snprintf(err, sizeof(err),
			 "the victim failed (status %d): see '%s/victim.err'",
			 vst, run);
	if (!err[0] && nst != 0)
		snprintf(err, sizeof(err),
			 "the neighbour failed (status %d): see "
			 "'%s/neighbor.out'",
			 nst, run);
	if (!err[0] && e)
		snprintf(err, sizeof(err), "read the transaction logs: %s",
			 strerror(-e));

	/* the window: the neighbour's start to the victim's last
	 * transaction (or its end) */
	double last = 0;
	for (size_t i = 0; i < ls.n; i++)
		if (ls.end[i] > last)
			last = ls.end[i];
	double w1 = ls.n && last < v1 ? last : v1;
	size_t nw = 0;
	double *wl = malloc((ls.n ? ls.n : 1) * sizeof(double));
	size_t nsec = w1 > nb0 ? (size_t)(w1 - nb0) : 0;
	double *secs = calloc(nsec ? nsec : 1, sizeof(double));
	if (!wl || !secs) {
		snprintf(err, sizeof(err), "out of memory");
		nsec = 0;
	} else {
		for (size_t i = 0; i < ls.n; i++) {
			if (ls.end[i] < nb0 || ls.end[i] > w1)
				continue;
			wl[nw++] = ls.lat_ms[i];
			size_t k = (size_t)(ls.end[i] - nb0);
			if (k < nsec)
				secs[k]++;
		}
	}
	if (wl)
		qsort(wl, nw, sizeof(double), cmp_double);
	row->tps = w1 > nb0 ? (double)nw / (w1 - nb0) : NAN;
	row->p50 = wl ? pct(wl, nw, 0.5) : NAN;
	row->p99 = wl ? pct(wl, nw, 0.99) : NAN;
	row->p999 = wl ? pct(wl, nw, 0.999) : NAN;
	row->max = wl && nw ? wl[nw - 1] : NAN;
	/* One second is no stall ratio (its worst is its median). */
	row->stall = secs && nsec >= 2
			 ? results_stall_ratio(secs, nsec, NULL, NULL)
			 : NAN;
	row->nb_wall = nb1 - nb0;
	row->nb_drain = !isnan(drained) && drained <= w1 ? drained - nb0 : NAN;
	row->dirty_mib = peak_d / 1024;
	row->wb_mib = peak_w / 1024;
	row->nb_status = nst;
	row->v_status = vst;
	row->done = !err[0];
	free(wl);
	free(secs);
	free(ls.lat_ms);
	free(ls.end);

	struct json_object *w = json_object_new_object();
	/* the one window: what the summary is measured over is what
	 * report shades; the neighbour's exit inside it is neighbor_end_s */
	json_object_object_add(w, "start_s", jd(nb0 - epoch0, 3));
	json_object_object_add(w, "end_s", jd(w1 - epoch0, 3));
	json_object_object_add(w, "neighbor_end_s", jd(nb1 - epoch0, 3));
	char what[64];
	snprintf(what, sizeof(what), "%s (%s)", neighbor_names[kind],
		 config_names[config]);
	json_object_object_add(w, "what", json_object_new_string(what));
	results_write(rf, "window", w);

	struct json_object *sum = json_object_new_object();
	json_object_object_add(sum, "tps", jd(row->tps, 1));
	json_object_object_add(sum, "lat_p50_ms", jd(row->p50, 3));
	json_object_object_add(sum, "lat_p99_ms", jd(row->p99, 3));
	json_object_object_add(sum, "lat_p999_ms", jd(row->p999, 3));
	json_object_object_add(sum, "lat_max_ms", jd(row->max, 3));
	json_object_object_add(sum, "stall_ratio", jd(row->stall, 3));
	json_object_object_add(sum, "neighbor_wall_s", jd(row->nb_wall, 2));
	json_object_object_add(sum, "neighbor_drain_s", jd(row->nb_drain, 2));
	json_object_object_add(sum, "neighbor_status",
			       json_object_new_int(nst));
	json_object_object_add(sum, "victim_status", json_object_new_int(vst));
	json_object_object_add(sum, "peak_dirty_kb", jd(peak_d, 0));
	json_object_object_add(sum, "peak_writeback_kb", jd(peak_w, 0));
	json_object_object_add(sum, "transactions",
			       json_object_new_int64((int64_t)nw));
	results_summary(rf, sum, err[0] ? err : NULL);
	e = results_close(rf);
	if (e && !err[0])
		snprintf(err, sizeof(err), "write the result file: %s",
			 strerror(-e));

	/* Not drained before the victim ended: "-", as in the tables. */
	char drained_s[32];
	if (isnan(row->nb_drain))
		snprintf(drained_s, sizeof(drained_s), "%6s", "-");
	else
		snprintf(drained_s, sizeof(drained_s), "%6.1f", row->nb_drain);
	printf("%-4s %-6s %-7s r%-2u tps %8.1f  p50 %7.2f  p99 %8.2f  "
	       "p99.9 %8.2f  max %8.2f ms  stall %.3f  neighbour %6.1f s  "
	       "drained %s s  dirty %5.0f  wb %4.0f MiB%s%s\n",
	       victim_names[vmode], neighbor_names[kind], config_names[config],
	       round + 1, row->tps, row->p50, row->p99, row->p999, row->max,
	       row->stall, row->nb_wall, drained_s, row->dirty_mib, row->wb_mib,
	       err[0] ? "  FAILED: " : "", err);
	fflush(stdout);
	if (env->tsv) {
		fprintf(env->tsv,
			"%s\t%s\t%s\t%u\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t"
			"%.2f\t%.2f\t%.0f\t%.0f\t%s\n",
			victim_names[vmode], neighbor_names[kind],
			config_names[config], round + 1, row->tps, row->p50,
			row->p99, row->p999, row->max, row->stall, row->nb_wall,
			row->nb_drain, row->dirty_mib, row->wb_mib,
			err[0] ? "failed" : "ok");
		fflush(env->tsv);
	}
	remove_tree(nbdir);
	remove_tree(data);
	return 0;
}

/* ---- the table --------------------------------------------------------- */

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

static void print_table(FILE *f, const struct env *env)
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
				victim_names[v], neighbor_names[k], devdesc,
				(unsigned long long)op->rounds,
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
				fprintf(f, "| %s |", config_names[c]);
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
						    &rows[v][k][c][r];
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
				fprintf(f, "| %s/plain |", config_names[c]);
				for (size_t m = 0;
				     m < sizeof(ratio_m) / sizeof(int); m++) {
					double vals[MAX_ROUNDS];
					size_t n = 0;
					for (unsigned r = 0; r < op->rounds;
					     r++) {
						const struct row *x =
						    &rows[v][k][c][r];
						const struct row *p =
						    &rows[v][k][C_PLAIN][r];
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

/* ---- options ----------------------------------------------------------- */

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
	    "                         (ionice -c 3, no shim)\n"
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

/* Which configurations cannot run here, and why. */
static void find_skips(struct env *env)
{
	int root = geteuid() == 0;
	char p[256];
	if (!disk_in_path("ionice"))
		env->skip[C_IONICE] =
		    "not installed (no ionice in PATH: Debian package "
		    "util-linux)";
	if (!disk_in_path("nocache")) {
		env->skip[C_NOCACHE] =
		    "not installed (no nocache in PATH: Debian package "
		    "nocache)";
	}
	bdi_knob("strict_limit", p, sizeof(p));
	if (!root)
		env->skip[C_STRICT] = "needs root (writes the bdi's knobs)";
	else if (access(p, W_OK)) {
		snprintf(env->skip_buf[C_STRICT], sizeof(env->skip_buf[0]),
			 "no writable %s", p);
		env->skip[C_STRICT] = env->skip_buf[C_STRICT];
	}
	if (!root)
		env->skip[C_BLKIO] = "needs root (makes a blkio cgroup)";
	else if (access("/sys/fs/cgroup/blkio", W_OK))
		env->skip[C_BLKIO] =
		    "no cgroup v1 blkio at /sys/fs/cgroup/blkio";
}

int cmd_bench_neighbor(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "--in-cgroup=", 12) && argc > 3 &&
	    !strcmp(argv[2], "--"))
		return in_cgroup_exec(argv[1] + 12, argv + 3);

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
			bad = parse_list(optarg, victim_names, NR_VICTIMS,
					 &op.victims);
			set_victim = 1;
			break;
		case 'N':
			bad = parse_list(optarg, neighbor_names, NR_NEIGHBORS,
					 &op.neighbors);
			set_neighbor = 1;
			break;
		case 'C':
			bad = parse_list(optarg, config_names, NR_CONFIGS,
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
		int n = state_cleanup_stale();
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
	    op.stream_bytes ? op.stream_bytes & ~((1ull << 20) - 1)
			    : (3 * dirty_limit_bytes()) & ~((1ull << 20) - 1);

	int status = FK_EXIT_FAILURE;
	struct stop_signals saved;
	stop_signals_catch(&saved, on_signal, 0);
	struct disk d;
	char disk_dir[1024] = "";
	int have_disk = 0, made_out = 0;
	if (!geteuid()) {
		/* what killed runs left, before this run changes anything */
		state_cleanup_stale();
		if (state_open())
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
	if (path_disk(env.dir, &env.maj, &env.min)) {
		cli_error("bench neighbor: stat '%s': %s", env.dir,
			  strerror(errno));
		goto out;
	}
	snprintf(bdi, sizeof(bdi), "/sys/class/bdi/%u:%u", env.maj, env.min);
	{
		char p[256];
		bdi_knob("max_ratio_fine", p, sizeof(p));
		if (!access(p, F_OK))
			bdi_ratio_knob = "max_ratio_fine";
	}
	if (dir_lock(env.dir))
		goto out;
	find_skips(&env);
	if (!geteuid() && (op.configs & 1u << C_STRICT) &&
	    !env.skip[C_STRICT] && bdi_lock())
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
		bdi_knob("strict_limit", p, sizeof(p));
		read_small(p, sl, sizeof(sl));
		bdi_knob(bdi_ratio_knob, p, sizeof(p));
		read_small(p, mr, sizeof(mr));
		char hb[32];
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
		       bdi, sl, bdi_ratio_knob, mr);
	}
	for (int cfg = 0; cfg < NR_CONFIGS; cfg++)
		if ((op.configs & 1u << cfg) && env.skip[cfg])
			printf("skip %s: %s\n", config_names[cfg],
			       env.skip[cfg]);
	if (op.victims & PG_VICTIMS) {
		char why[256];
		if (pg_why(why, sizeof(why))) {
			printf("skip pgbench: %s\n", why);
			op.victims &= ~PG_VICTIMS;
		}
	}
	fflush(stdout);
	if (op.victims & PG_VICTIMS) {
		/* the server's user must reach DIR/pg: the run directory
		 * of --device and DISK_ROOT are 0700, made traversable
		 * (not listable) */
		if (pg.setuid && disk_dir[0]) {
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
		int pe = pg_start(env.dir, env.out, op.clients);
		if (pe == -EINTR) {
			cli_error("bench neighbor: stopped by signal %d",
				  (int)stop_sig);
			status = 128 + (int)stop_sig;
			goto out;
		}
		if (pe)
			goto out;
		printf("bench neighbor: victims pg-*: %s, cluster %s, socket "
		       "%s, logs %s\n",
		       pg.version, pg.data, pg.sock, pg.logs);
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
					int e = one_run(&env, v, k, cfg, r,
							&rows[v][k][cfg][r]);
					if (e == -EINTR) {
						stopped = 1;
						break;
					}
					if (e || !rows[v][k][cfg][r].done)
						failed = 1;
				}
			}
		}
	if (stopped) {
		cli_error("bench neighbor: stopped by signal %d; the "
			  "machine's knobs are restored",
			  (int)stop_sig);
		status = 128 + (int)stop_sig;
		goto out;
	}
	print_table(stdout, &env);
	char tp[1100];
	snprintf(tp, sizeof(tp), "%s/table.md", env.out);
	FILE *tf = fopen(tp, "we");
	if (tf) {
		print_table(tf, &env);
		if (fclose(tf))
			cli_error("bench neighbor: write '%s': %s", tp,
				  strerror(errno));
	}
	printf("\nresults in %s\n", env.out);
	status = failed ? FK_EXIT_FAILURE : FK_EXIT_OK;
out:
	if (pg_stop())
		status = FK_EXIT_FAILURE;
	restore_all();
	state_close();
	if (env.tsv)
		fclose(env.tsv);
	else if (made_out)
		rmdir(env.out);
	/* only a run that held the directory removes what is in it: a
	 * refused one would remove the holder's data mid-run */
	if (env.dir[0] && !have_disk && dir_lock_fd >= 0) {
		char p[1100];
		snprintf(p, sizeof(p), "%s/nb", env.dir);
		remove_tree(p);
		snprintf(p, sizeof(p), "%s/tpcb", env.dir);
		remove_tree(p);
	}
	dir_unlock();
	if (have_disk && disk_destroy(&d))
		status = FK_EXIT_FAILURE;
	if (disk_dir[0])
		disk_run_dir_remove(disk_dir);
	stop_signals_restore(&saved);
	return status;
}
