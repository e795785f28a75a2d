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
 *        shared_buffers: fsync request queue compaction off vs on.
 *   003  copy a database-like tree (a fresh initdb data directory with
 *        pgbench data when PostgreSQL 15 is installed, else a generated
 *        one of the same shape): fsync per file vs early writeback,
 *        delayed fsync and POSIX_FADV_DONTNEED; block-layer write counts
 *        of the loop device from tracefs block events (else
 *        /sys/block/loopN/stat) and Dirty/Writeback sampled by
 *        "flushkit monitor".
 *   004  bench sync: sync(2) vs syncfs vs flushkit sync on ext4, xfs,
 *        btrfs, ext3 x 1, 2, 4 file systems.
 *
 * SIGINT/SIGTERM/SIGHUP/SIGPIPE: the running child's process group is sent
 * SIGTERM, the experiment stops, a PostgreSQL server is stopped and its
 * cluster removed, the disks are destroyed (umount, lab disk or loop
 * device removed) and the exit status is 1.
 */
#include "child.h"
#include "cli.h"
#include "disk.h"
#include "reader.h"
#include "results.h"
#include "seed-sync.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_VALS 1024

struct ctx {
	const char *results;
	struct disk_profile prof; /* this seed's (run_seed sets it) */
	int device_given;	  /* --device: prof for every seed */
	int quick;
	unsigned runs; /* 0: each seed's default */
	char run_dir[1024];
	char seed_dir[2048]; /* RESULTS/NNN */
};

static volatile sig_atomic_t stop, stop_sig;
static volatile pid_t child_pgid;

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE (stdout is a pipe whose reader left, as
 * in "| head -1"): stop at the next step and clean up.  A handler, not
 * SIG_IGN, so the children start with SIGPIPE at its default (exec
 * resets handled signals, not ignored ones). */
static void on_signal(int sig)
{
	stop = 1;
	if (!stop_sig)
		stop_sig = sig;
	if (child_pgid > 0)
		kill(-child_pgid, SIGTERM);
}

/* ---- children -------------------------------------------------------- */

/*
 * Run "flushkit ARGS..." (/proc/self/exe; @argv[0] is "flushkit") in
 * its own process group (child.h), stdin /dev/null, stdout and stderr
 * into @log (truncated), the command line appended to commands.txt in
 * @log's directory.  Returns its exit status, 128+N if killed by signal N,
 * -EINTR if we were told to stop, or -errno.  The one place children are
 * spawned here.
 */
static int run_flushkit(const char *log, const struct child_argv *a)
{
	if (stop)
		return -EINTR;
	int rc = child_argv_check(a);
	if (rc) {
		cli_error("'flushkit %s': its argument list: %s",
			  a->n > 1 ? a->v[1] : "", strerror(-rc));
		return rc;
	}
	char *const *argv = a->v;
	/* The command, for the record: DIR/commands.txt next to the log. */
	char cmds[2400];
	const char *slash = strrchr(log, '/');
	snprintf(cmds, sizeof(cmds), "%.*s/commands.txt",
		 slash ? (int)(slash - log) : 1, slash ? log : ".");
	FILE *cf = fopen(cmds, "ae");
	if (cf) {
		fprintf(cf, "%s:", log);
		for (int i = 0; argv[i]; i++)
			fprintf(cf, " %s", argv[i]);
		fprintf(cf, "\n");
		fclose(cf);
	}
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
					CHILD_SIGDFL | CHILD_SETPGID |
					CHILD_PDEATHSIG | CHILD_EXEC_MSG,
			       .out_path = log};
	pid_t pid;
	rc = child_start("/proc/self/exe", argv, &o, &pid);
	if (rc) {
		cli_error("run 'flushkit %s': %s", argv[1], strerror(-rc));
		return rc;
	}
	child_pgid = pid;
	if (stop)
		kill(-pid, SIGTERM);
	rc = child_wait(pid, 0);
	child_pgid = 0;
	if (stop)
		return -EINTR;
	if (rc)
		cli_error("'flushkit %s %s' failed with status %d; see '%s'",
			  argv[1], argv[2] ? argv[2] : "", rc, log);
	return rc;
}

/* run_flushkit of @a, its log SEED_DIR/@logname; @a is released (empty
 * for the next command). */
static int run_args(struct ctx *c, const char *logname, struct child_argv *a)
{
	char log[2200];
	snprintf(log, sizeof(log), "%s/%s", c->seed_dir, logname);
	int rc = run_flushkit(log, a);
	child_argv_release(a);
	return rc;
}

/*
 * "flushkit monitor --json -- COMMAND" writes its JSON lines and
 * COMMAND's output to one file: keep the result lines ({"type": ...)
 * in @path, append the rest to @log.
 */
static void split_jsonl(const char *path, const char *log)
{
	char tmp[2500];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *in = fopen(path, "re"), *out = fopen(tmp, "we"),
	     *lg = fopen(log, "ae");
	if (in && out && lg) {
		char *line = NULL;
		size_t cap = 0;
		while (getline(&line, &cap, in) > 0)
			fputs(line, strncmp(line, "{\"type\":", 8) ? lg : out);
		free(line);
	}
	if (in)
		fclose(in);
	if (lg)
		fclose(lg);
	if (out && !fclose(out))
		rename(tmp, path);
}

/* ---- small helpers --------------------------------------------------- */

static double now_s(void)
{
	return (double)fk_now_ns() / 1e9;
}

static int mkdir_p1(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST) {
		int e = errno;
		cli_error("mkdir '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

static int syncfs_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = syncfs(fd) ? -errno : 0;
	close(fd);
	if (r)
		cli_error("syncfs '%s': %s", path, strerror(-r));
	return r;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* Block-layer write counts of loop device minor @min. */
struct blk_counts {
	double writes, merges, kib;
};

static void blk_read(const struct disk *d, struct blk_counts *b)
{
	char path[128], buf[512];
	memset(b, 0, sizeof(*b));
	snprintf(path, sizeof(path), "/sys/block/loop%u/stat", d->min);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	unsigned long long f[11] = {0};
	sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
	       &f[3], &f[4], &f[5], &f[6]);
	b->writes = (double)f[4];
	b->merges = (double)f[5];
	b->kib = (double)f[6] / 2;
}

/*
 * Block-layer events from tracefs, blktrace's counts without blktrace:
 * tracefs mounted in the run directory (RUN/tracefs: removed with the
 * run, a killed run's by disk_cleanup_stale), an instance of its own
 * (instances/flushkit-PID: its own buffer, nobody else's tracing
 * disturbed), the block events of one device only (filter "dev == N"):
 *   block_bio_queue                   writes queued (blktrace Q)
 *   block_bio_backmerge, _frontmerge  write merges (M, F)
 *   block_rq_insert                   requests inserted (I)
 *   block_rq_issue                    write dispatches (D)
 *   block_rq_complete                 writes completed (C), their KiB
 * counting the events whose RWBS has a W.  Where any step fails the
 * caller falls back to /sys/block/loopN/stat.
 */
static const char *const trace_events[] = {
    "block_bio_queue", "block_bio_backmerge", "block_bio_frontmerge",
    "block_rq_insert", "block_rq_issue",      "block_rq_complete"};
#define NR_TRACE_EVENTS (sizeof(trace_events) / sizeof(trace_events[0]))

struct trace {
	char mnt[1100];	 /* RUN/tracefs, mounted */
	char inst[1300]; /* MNT/instances/flushkit-PID, made */
	int mounted, made;
	char why[2048]; /* why not, when setup failed */
};

struct trace_counts {
	double ev[NR_TRACE_EVENTS];
	double kib;  /* of the completed writes */
	double lost; /* events the buffer overran */
};

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = strlen(val);
	int r = write(fd, val, n) == (ssize_t)n ? 0 : -errno;
	if (close(fd) && !r)
		r = -errno;
	return r;
}

static void trace_stop(struct trace *t)
{
	if (t->made) {
		char p[1500];
		for (size_t i = 0; i < NR_TRACE_EVENTS; i++) {
			snprintf(p, sizeof(p), "%s/events/block/%s/enable",
				 t->inst, trace_events[i]);
			write_str(p, "0");
		}
		if (rmdir(t->inst))
			cli_warn("rmdir '%s': %s", t->inst, strerror(errno));
		t->made = 0;
	}
	if (t->mounted) {
		if (umount2(t->mnt, 0))
			umount2(t->mnt, MNT_DETACH);
		rmdir(t->mnt);
		t->mounted = 0;
	}
}

static int trace_start(struct trace *t, const char *run_dir,
		       const struct disk *d)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->mnt, sizeof(t->mnt), "%s/tracefs", run_dir);
	if (mkdir(t->mnt, 0700) && errno != EEXIST) {
		snprintf(t->why, sizeof(t->why), "mkdir '%s': %s", t->mnt,
			 strerror(errno));
		return -EIO;
	}
	if (mount("nodev", t->mnt, "tracefs", 0, NULL)) {
		snprintf(t->why, sizeof(t->why), "mount tracefs on '%s': %s",
			 t->mnt, strerror(errno));
		rmdir(t->mnt);
		return -EIO;
	}
	t->mounted = 1;
	snprintf(t->inst, sizeof(t->inst), "%s/instances/flushkit-%d", t->mnt,
		 (int)getpid());
	if (mkdir(t->inst, 0700)) {
		snprintf(t->why, sizeof(t->why), "mkdir '%s': %s", t->inst,
			 strerror(errno));
		trace_stop(t);
		return -EIO;
	}
	t->made = 1;
	char p[1500], v[64];
	int r = 0;
	snprintf(p, sizeof(p), "%s/buffer_size_kb", t->inst);
	r = write_str(p, "16384");
	/* The kernel's dev_t of the loop device: MKDEV = maj << 20 | min. */
	snprintf(v, sizeof(v), "dev == %u", (d->maj << 20) | d->min);
	for (size_t i = 0; i < NR_TRACE_EVENTS && !r; i++) {
		snprintf(p, sizeof(p), "%s/events/block/%s/filter", t->inst,
			 trace_events[i]);
		r = write_str(p, v);
		snprintf(p, sizeof(p), "%s/events/block/%s/enable", t->inst,
			 trace_events[i]);
		if (!r)
			r = write_str(p, "1");
	}
	if (r) {
		snprintf(t->why, sizeof(t->why), "write '%s': %s", p,
			 strerror(-r));
		trace_stop(t);
		return -EIO;
	}
	return 0;
}

/* Empty the instance's buffer (before a measured step). */
static int trace_clear(struct trace *t)
{
	char p[1500];
	snprintf(p, sizeof(p), "%s/trace", t->inst);
	return write_str(p, "");
}

/* Count the write events in the buffer since trace_clear. */
static int trace_count(struct trace *t, struct trace_counts *c)
{
	char p[1500];
	memset(c, 0, sizeof(*c));
	snprintf(p, sizeof(p), "%s/trace", t->inst);
	FILE *f = fopen(p, "re");
	if (!f)
		return -errno;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		for (size_t i = 0; i < NR_TRACE_EVENTS; i++) {
			char key[48];
			snprintf(key, sizeof(key), " %s: ", trace_events[i]);
			char *at = strstr(line, key);
			if (!at)
				continue;
			unsigned ma, mi;
			char rwbs[16];
			if (sscanf(at + strlen(key), "%u,%u %15s", &ma, &mi,
				   rwbs) != 3 ||
			    !strchr(rwbs, 'W'))
				break;
			c->ev[i]++;
			char *plus = strstr(at, " + ");
			unsigned long long sect;
			if (!strcmp(trace_events[i], "block_rq_complete") &&
			    plus && sscanf(plus + 3, "%llu", &sect) == 1)
				c->kib += (double)sect / 2;
			break;
		}
	}
	free(line);
	fclose(f);
	/* Lost events: the per-CPU "overrun" counts. */
	for (int cpu = 0; cpu < 1024; cpu++) {
		snprintf(p, sizeof(p), "%s/per_cpu/cpu%d/stats", t->inst, cpu);
		FILE *st = fopen(p, "re");
		if (!st)
			break;
		char l[256];
		unsigned long long n;
		while (fgets(l, sizeof(l), st))
			if (sscanf(l, "overrun: %llu", &n) == 1)
				c->lost += (double)n;
		fclose(st);
	}
	return 0;
}

/* ---- reading result files -------------------------------------------- */

struct vals {
	double v[MAX_VALS];
	size_t n;
};

static void vals_add(struct vals *s, double v)
{
	if (s->n < MAX_VALS && isfinite(v))
		s->v[s->n++] = v;
}

struct collect {
	const char *type, *key;
	/* bench sync files: only those whose settings match */
	const char *fs, *method;
	int count;
	struct vals *out;
	/* progress lines: the worst seconds */
	double worst_tps[5], worst_t[5], worst_lat[5], worst_sd[5];
	int nworst;
};

static void worst_add(struct collect *c, const struct result_progress *p)
{
	double tps = p->tps;
	if (!isfinite(tps))
		return;
	int n = c->nworst, i;
	if (n == 5 && tps >= c->worst_tps[4])
		return;
	if (n < 5)
		n = ++c->nworst;
	for (i = n - 1; i > 0 && c->worst_tps[i - 1] > tps; i--) {
		c->worst_tps[i] = c->worst_tps[i - 1];
		c->worst_t[i] = c->worst_t[i - 1];
		c->worst_lat[i] = c->worst_lat[i - 1];
		c->worst_sd[i] = c->worst_sd[i - 1];
	}
	c->worst_tps[i] = tps;
	c->worst_t[i] = p->t_s;
	c->worst_lat[i] = p->lat_avg_ms;
	c->worst_sd[i] = p->lat_stddev_ms;
}

/* One result file (reader.h) through @c. */
static void collect_run(struct collect *c, const struct result_run *r)
{
	char why[256];
	if (c->fs) {
		const char *fs = result_str(r->settings, "fs");
		const char *m = result_str(r->settings, "method");
		if (!fs || !m || strcmp(fs, c->fs) || strcmp(m, c->method) ||
		    (int)result_num(r->settings, "fs_count", 0) != c->count)
			return;
	}
	if (!c->key) { /* the worst progress seconds */
		for (size_t i = 0; i < r->nr_prog; i++)
			worst_add(c, &r->prog[i]);
		return;
	}
	if (!strcmp(c->type, "summary")) {
		if (!result_run_refused(r, why, sizeof(why)))
			vals_add(c->out, result_num(r->summary, c->key, NAN));
		return;
	}
	size_t n = r->runs ? json_object_array_length(r->runs) : 0;
	for (size_t i = 0; i < n; i++)
		vals_add(c->out,
			 result_num(json_object_array_get_idx(r->runs, i),
				    c->key, NAN));
}

/* Every result file in @dir through @c. */
static void collect_dir(const char *dir, struct collect *c)
{
	char **names;
	size_t nr;
	if (results_list(dir, &names, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		char path[4096];
		struct result_run r;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!result_run_load(path, &r))
			collect_run(c, &r);
		result_run_release(&r);
	}
	results_list_free(names, nr);
}

static void summary_vals(const char *dir, const char *key, struct vals *out)
{
	struct collect c;
	memset(&c, 0, sizeof(c));
	memset(out, 0, sizeof(*out));
	c.type = "summary";
	c.key = key;
	c.out = out;
	collect_dir(dir, &c);
}

/* ---- the tables ------------------------------------------------------ */

struct table {
	FILE *md, *html;
	int rows, shown, with_effect;
};

/* Open the seed's table.md and table.html with fopen @mode ("we" a new
 * table, "ae" one more after it) and write @title's heading. */
static int table_open_mode(struct ctx *c, struct table *t, const char *title,
			   const char *cmd_a, const char *cmd_b,
			   const char *mode)
{
	char path[2200];
	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/table.md", c->seed_dir);
	t->md = fopen(path, mode);
	snprintf(path, sizeof(path), "%s/table.html", c->seed_dir);
	t->html = fopen(path, mode);
	if (!t->md || !t->html) {
		int e = errno;
		cli_error("create '%s': %s", path, strerror(e));
		if (t->md)
			fclose(t->md);
		if (t->html)
			fclose(t->html);
		return -e;
	}
	char dev[256];
	disk_profile_describe(&c->prof, dev, sizeof(dev));
	fprintf(t->md, "%s### %s\n\nDevice: %s.  A: %s.  B: %s.\n\n",
		mode[0] == 'a' ? "\n" : "", title, dev, cmd_a, cmd_b);
	fprintf(t->html,
		"<h2>%s</h2>\n<p>Device: %s.  A: <code>%s"
		"</code>.  B: <code>%s</code>.</p>\n",
		title, dev, cmd_a, cmd_b);
	return 0;
}

static int table_open(struct ctx *c, struct table *t, const char *title,
		      const char *cmd_a, const char *cmd_b)
{
	return table_open_mode(c, t, title, cmd_a, cmd_b, "we");
}

static void table_head(struct table *t, const char *seed_a, const char *seed_b)
{
	fprintf(t->md,
		"| metric | seed %s | seed %s | seed's effect | ours A | "
		"ours B | ours (2σ) | shown |\n"
		"|---|---|---|---|---|---|---|---|\n",
		seed_a, seed_b);
	fprintf(t->html,
		"<table border=\"1\" cellpadding=\"3\"><tr><th>metric</th>"
		"<th>seed %s</th><th>seed %s</th><th>seed's effect</th>"
		"<th>ours A</th><th>ours B</th><th>ours (2&sigma;)</th>"
		"<th>shown</th></tr>\n",
		seed_a, seed_b);
}

static void table_end(struct table *t)
{
	fprintf(t->md, "\n");
	fprintf(t->html, "</table>\n");
}

static void fmt_side(const struct fk_stats_summary *s, char *buf, size_t len)
{
	if (!s->n)
		snprintf(buf, len, "(no runs)");
	else if (s->n == 1)
		snprintf(buf, len, "%.4g (n=1)", s->mean);
	else
		snprintf(buf, len, "%.4g ± %.2g (n=%zu)", s->mean, s->stddev,
			 (size_t)s->n);
}

/* One row: the seed's two figures (text, "—" if not published), the
 * seed's direction (+, -, 0; '?' none), our two sides.  Returns our
 * marker. */
static int table_row(struct table *t, const char *label, const char *seed_a,
		     const char *seed_b, char seed_dir, const struct vals *a,
		     const struct vals *b)
{
	struct fk_stats_summary sa, sb;
	fk_stats_summarize(a->v, a->n, &sa);
	fk_stats_summarize(b->v, b->n, &sb);
	int m = a->n && b->n ? fk_stats_compare(&sa, &sb, NULL) : '?';
	const char *shown = "—";
	if (seed_dir == '+' || seed_dir == '-') {
		t->with_effect++;
		shown = m == '?'	? "? (too few runs)"
			: m == seed_dir ? "yes"
					: "no";
		if (m == seed_dir)
			t->shown++;
	}
	char ta[96], tb[96];
	fmt_side(&sa, ta, sizeof(ta));
	fmt_side(&sb, tb, sizeof(tb));
	char dir[2] = {seed_dir == '?' ? '\0' : seed_dir, 0};
	fprintf(t->md, "| %s | %s | %s | %s | %s | %s | %c | %s |\n", label,
		seed_a, seed_b, dir[0] ? dir : "—", ta, tb, m, shown);
	fprintf(t->html,
		"<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
		"<td>%s</td><td>%c</td><td>%s</td></tr>\n",
		label, seed_a, seed_b, dir[0] ? dir : "&mdash;", ta, tb, m,
		shown);
	t->rows++;
	return m;
}

static void table_note(struct table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void table_note(struct table *t, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(t->md, "%s\n", buf);
	fprintf(t->html, "<pre>%s</pre>\n", buf);
}

/* The count of seed effects shown, by @who (NULL: ours), and close. */
static void table_close_as(struct table *t, const char *who)
{
	table_note(t, "\nSeed effects shown%s%s at 2σ: %d of %d.",
		   who ? " by " : "", who ? who : "", t->shown, t->with_effect);
	fclose(t->md);
	fclose(t->html);
	printf("  seed effects shown%s%s at 2 sigma: %d of %d\n",
	       who ? " by " : "", who ? who : "", t->shown, t->with_effect);
}

static void table_close(struct table *t)
{
	table_close_as(t, NULL);
}

/*
 * "flushkit report" of the result files in the directories @dirs.  0 when
 * it ran (a report that failed is printed, and the seed's tables stand)
 * or we were told to stop; -errno when it could not run at all (its
 * argument list could not be built: no report of a partial file list).
 */
static int make_report(struct ctx *c, const char *const *dirs, int nr)
{
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "flushkit");
	child_argv_add(&a, "report");
	for (int i = 0; i < nr; i++) {
		DIR *d = opendir(dirs[i]);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t l = strlen(e->d_name);
			if (l > 6 && !strcmp(e->d_name + l - 6, ".jsonl"))
				child_argv_add(&a, "%s/%s", dirs[i], e->d_name);
		}
		closedir(d);
	}
	child_argv_add(&a, "-o");
	child_argv_add(&a, "%s/report", c->seed_dir);
	int rc = run_args(c, "report.log", &a);
	return rc < 0 && rc != -EINTR ? rc : 0;
}

/* ---- the PostgreSQL peer --------------------------------------------- */

/*
 * A private PostgreSQL 15 cluster on a seed's disk.  initdb as user
 * postgres (runuser(1)) into a directory of the disk; the server listens
 * on a unix socket in the run directory only (RUN/pgsock-NAME: no TCP
 * port, so two runs never meet); stopped ("pg_ctl stop -m fast") and its
 * directories removed when the seed ends, on an error and after a stop
 * signal (pg_release; pg_stop_all before a disk is destroyed and at
 * exit).  Before initdb the data directory is named in the record
 * RUN/NAME.pgcluster, so that the server of a run killed with SIGKILL
 * is found: pg_cleanup_stale, before the disks' own cleanup at the next
 * start and in --cleanup, stops the server of every record in a run
 * directory whose lock nobody holds (immediate shutdown, SIGQUIT, then
 * SIGKILL), once its working directory shows it is that cluster's.
 * PostgreSQL's programs get none of our descriptors (CHILD_CLOSEFDS): a
 * server holding the run lock would make a killed run look alive for as
 * long as the server runs.  PG_BIN (environment) overrides
 * /usr/lib/postgresql/15/bin, as in bench/peers/tpcb.sh.
 */
#define PG_PORT 54329

struct pg {
	char bin[512];
	char data[1200];   /* the data directory, on the seed's disk */
	char sock[1200];   /* RUN/pgsock-NAME */
	char rec[1200];	   /* RUN/NAME.pgcluster */
	char logdir[2200]; /* the step logs (the seed's directory) */
	char version[128]; /* "postgres (PostgreSQL) 15.x" */
	char script[1200]; /* bench/peers/tpcb-pg-result.py */
	uid_t uid;
	gid_t gid;
	int registered, made, started;
};

static struct pg *pg_active[2];

static const char *pg_bin(void)
{
	const char *b = getenv("PG_BIN");
	return b && *b ? b : "/usr/lib/postgresql/15/bin";
}

/* bench/peers/tpcb-pg-result.py of the tree the binary was built in
 * (BUILD/flushkit: BUILD/../bench/peers), or the installed copy
 * (BIN/../share/flushkit/peers).  0 or -ENOENT. */
static int pg_find_script(char *path, size_t len)
{
	char exe[1024];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	static const char *const rel[] = {"/../bench/peers", "/bench/peers",
					  "/../share/flushkit/peers"};
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(path, len, "%s%s/tpcb-pg-result.py", exe, rel[i]);
		if (!access(path, R_OK))
			return 0;
	}
	return -ENOENT;
}

/*
 * Can the peer run here?  1 yes; 0 PostgreSQL 15 is not installed
 * (@why says what is missing); -1 installed but something else is
 * missing (@why).
 */
static int pg_available(char *why, size_t len)
{
	static const char *const progs[] = {"initdb", "pg_ctl", "postgres",
					    "pgbench", "psql"};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char p[700];
		snprintf(p, sizeof(p), "%s/%s", pg_bin(), progs[i]);
		if (access(p, X_OK)) {
			snprintf(why, len, "no %s", p);
			return 0;
		}
	}
	char s[1200];
	if (!getpwnam("postgres"))
		snprintf(why, len, "no user postgres");
	else if (!disk_in_path("runuser"))
		snprintf(why, len, "no runuser in PATH");
	else if (!disk_in_path("python3"))
		snprintf(why, len, "no python3 in PATH");
	else if (pg_find_script(s, sizeof(s)))
		snprintf(why, len,
			 "no bench/peers/tpcb-pg-result.py beside the "
			 "flushkit binary's directory");
	else
		return 1;
	return -1;
}

/* The command, for the record: LOGDIR/commands.txt. */
static void record_command(const char *log, char *const *argv)
{
	char cmds[2400];
	const char *slash = strrchr(log, '/');
	snprintf(cmds, sizeof(cmds), "%.*s/commands.txt",
		 slash ? (int)(slash - log) : 1, slash ? log : ".");
	FILE *cf = fopen(cmds, "ae");
	if (!cf)
		return;
	fprintf(cf, "%s:", log);
	for (int i = 0; argv[i]; i++)
		fprintf(cf, " %s", argv[i]);
	fprintf(cf, "\n");
	fclose(cf);
}

/*
 * Run @a (a->v[0] the program's path) for the peer: as user postgres
 * when @as_pg (runuser -u postgres --), its own process group, stdin
 * /dev/null, none of our descriptors, stdout into LOGDIR/@out (or
 * @cap, @caplen when @cap), stderr into LOGDIR/@err (NULL: with
 * stdout; with @cap: into LOGDIR/@out).  @stoppable: not started after
 * a stop signal, and sent it (a step of the experiment); else it runs
 * whatever (a server's stop).  Returns its status, -EINTR (stopped) or
 * -errno; a failure is printed naming the program and the log.
 */
static int pg_exec(struct pg *p, struct child_argv *a, int as_pg, int stoppable,
		   const char *out, const char *err, char *cap, size_t caplen)
{
	if (stoppable && stop)
		return -EINTR;
	struct child_argv r = CHILD_ARGV_INIT;
	char *const *argv = a->v;
	int rc = child_argv_check(a);
	if (!rc && as_pg) {
		child_argv_add(&r, "runuser");
		child_argv_add(&r, "-u");
		child_argv_add(&r, "postgres");
		child_argv_add(&r, "--");
		for (int i = 0; i < a->n; i++)
			child_argv_add(&r, "%s", a->v[i]);
		argv = r.v;
		rc = child_argv_check(&r);
	}
	if (rc) {
		cli_error("'%s': its argument list: %s", a->n ? a->v[0] : "",
			  strerror(-rc));
		child_argv_release(&r);
		return rc;
	}
	char olog[2400], elog[2400];
	snprintf(olog, sizeof(olog), "%s/%s", p->logdir, out);
	if (err)
		snprintf(elog, sizeof(elog), "%s/%s", p->logdir, err);
	record_command(olog, argv);
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_SIGDFL |
					CHILD_SETPGID | CHILD_PDEATHSIG |
					CHILD_EXEC_MSG | CHILD_CLOSEFDS};
	if (cap) {
		o.capture = cap;
		o.capture_len = caplen;
		o.err_path = olog;
		rc = child_run(argv[0], argv, &o);
	} else {
		o.out_path = olog;
		if (err)
			o.err_path = elog;
		else
			o.flags |= CHILD_STDERR_OUT;
		pid_t pid;
		rc = child_start(argv[0], argv, &o, &pid);
		if (!rc) {
			if (stoppable) {
				child_pgid = pid;
				if (stop)
					kill(-pid, SIGTERM);
			}
			rc = child_wait(pid, 0);
			if (stoppable)
				child_pgid = 0;
		}
	}
	const char *name = strrchr(a->v[0], '/');
	name = name ? name + 1 : a->v[0];
	if (stoppable && stop)
		rc = -EINTR;
	else if (rc < 0)
		cli_error("run '%s': %s", a->v[0], strerror(-rc));
	else if (rc)
		cli_error("'%s' failed with status %d; see '%s'", name, rc,
			  err && !cap ? elog : olog);
	child_argv_release(&r);
	return rc;
}

/* Stop the postmaster of data directory @data, not through pg_ctl (a
 * killed run's, or one pg_ctl could not stop): its pid from
 * postmaster.pid, taken only if that process's working directory is
 * @data (the postmaster's is its data directory); SIGQUIT (immediate
 * shutdown), after 10 s SIGKILL.  1 if a server was stopped, 0 if none
 * runs, -EBUSY if it would not go. */
static int pg_kill_postmaster(const char *data)
{
	char path[1300], real[PATH_MAX], cwd[PATH_MAX], link[64];
	snprintf(path, sizeof(path), "%s/postmaster.pid", data);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	long pid = 0;
	int ok = fscanf(f, "%ld", &pid) == 1 && pid > 1;
	fclose(f);
	if (!ok || !realpath(data, real))
		return 0;
	snprintf(link, sizeof(link), "/proc/%ld/cwd", pid);
	ssize_t n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return 0;
	cwd[n] = 0;
	if (strcmp(cwd, real))
		return 0; /* the pid is another process's now */
	kill((pid_t)pid, SIGQUIT);
	for (int i = 0; i < 150; i++) {
		if (kill((pid_t)pid, 0) && errno == ESRCH)
			return 1;
		if (i == 100)
			kill((pid_t)pid, SIGKILL);
		usleep(100000);
	}
	cli_error("PostgreSQL server %ld of '%s' does not stop", pid, data);
	return -EBUSY;
}

/* Stop @p's server if it runs (pg_ctl stop -m fast, else
 * pg_kill_postmaster).  0 or -errno. */
static int pg_stop(struct pg *p)
{
	if (!p->started)
		return 0;
	char pidf[1300];
	snprintf(pidf, sizeof(pidf), "%s/postmaster.pid", p->data);
	int rc = 0;
	/* A start cut short by a stop signal (pg_ctl killed, the server
	 * it forked still coming up): its postmaster.pid comes soon. */
	for (int i = 0; i < 30 && access(pidf, F_OK); i++)
		usleep(100000);
	if (!access(pidf, F_OK)) {
		struct child_argv a = CHILD_ARGV_INIT;
		child_argv_add(&a, "%s/pg_ctl", p->bin);
		child_argv_add(&a, "-D");
		child_argv_add(&a, "%s", p->data);
		child_argv_add(&a, "-m");
		child_argv_add(&a, "fast");
		child_argv_add(&a, "-w");
		child_argv_add(&a, "-t");
		child_argv_add(&a, "60");
		child_argv_add(&a, "stop");
		rc = pg_exec(p, &a, 1, 0, "pg-stop.log", NULL, NULL, 0);
		child_argv_release(&a);
		if (rc && pg_kill_postmaster(p->data) >= 0)
			rc = 0;
	}
	p->started = 0;
	return rc;
}

/* Stop @p's server and remove its data directory, socket directory and
 * record.  0 or -errno (the server would not stop). */
static int pg_release(struct pg *p)
{
	int rc = pg_stop(p);
	if (!rc && p->made) {
		rm_tree(p->data);
		rm_tree(p->sock);
		p->made = 0;
	}
	if (!rc && p->rec[0])
		unlink(p->rec);
	for (int i = 0; i < 2; i++)
		if (pg_active[i] == p && !rc)
			pg_active[i] = NULL;
	return rc;
}

/* Every cluster of this run (before its disk goes, and at exit). */
static void pg_stop_all(void)
{
	for (int i = 0; i < 2; i++)
		if (pg_active[i])
			pg_release(pg_active[i]);
}

/*
 * The PostgreSQL servers that killed runs left: for each run directory
 * under DISK_ROOT whose lock nobody holds, the server of each of its
 * *.pgcluster records (pg_kill_postmaster).  Before disk_cleanup_stale,
 * which cannot unmount a disk a server still uses.  Count stopped.
 */
static int pg_cleanup_stale(void)
{
	DIR *dir = opendir(DISK_ROOT);
	if (!dir)
		return 0;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "run-", 4))
			continue;
		char path[1024], lock[1100];
		snprintf(path, sizeof(path), DISK_ROOT "/%s", e->d_name);
		snprintf(lock, sizeof(lock), "%s/lock", path);
		int fd = open(lock, O_RDWR | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB)) {
			if (fd >= 0)
				close(fd); /* a live run (or one starting) */
			continue;
		}
		DIR *rd = opendir(path);
		struct dirent *r;
		while (rd && (r = readdir(rd))) {
			size_t n = strlen(r->d_name);
			if (n < 11 || strcmp(r->d_name + n - 10, ".pgcluster"))
				continue;
			char rec[1400], data[1200];
			snprintf(rec, sizeof(rec), "%s/%s", path, r->d_name);
			FILE *f = fopen(rec, "re");
			if (!f)
				continue;
			if (fgets(data, sizeof(data), f)) {
				data[strcspn(data, "\n")] = 0;
				if (pg_kill_postmaster(data) > 0)
					count++;
			}
			fclose(f);
		}
		if (rd)
			closedir(rd);
		close(fd);
	}
	closedir(dir);
	return count;
}

/* Append @lines (NULL-terminated) to DATA/postgresql.conf. */
static int pg_conf(struct pg *p, const char *const *lines)
{
	char path[1300];
	snprintf(path, sizeof(path), "%s/postgresql.conf", p->data);
	FILE *f = fopen(path, "ae");
	if (!f) {
		int e = errno;
		cli_error("open '%s': %s", path, strerror(e));
		return -e;
	}
	fprintf(f,
		"# flushkit reproduce\nlisten_addresses = ''\nport = %d\n"
		"unix_socket_directories = '%s'\nlog_line_prefix = '%%m "
		"[%%p] '\nlog_timezone = 'UTC'\n",
		PG_PORT, p->sock);
	for (int i = 0; lines && lines[i]; i++)
		fprintf(f, "%s\n", lines[i]);
	if (fclose(f)) {
		int e = errno;
		cli_error("write '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

static int chown_dir(const char *path, const struct pg *p)
{
	if (mkdir(path, 0700) && errno != EEXIST) {
		int e = errno;
		cli_error("mkdir '%s': %s", path, strerror(e));
		return -e;
	}
	if (chown(path, p->uid, p->gid)) {
		int e = errno;
		cli_error("chown '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/*
 * A new cluster @name in @data (on a seed's disk) with @lines in its
 * postgresql.conf, its server started; step logs into @logdir.  The
 * run directory and DISK_ROOT become 0711 (user postgres must reach
 * the disk below them; nothing in them can be listed).  0, -EINTR or
 * -errno; on failure the caller still calls pg_release.
 */
static int pg_init(struct pg *p, struct ctx *c, const char *name,
		   const char *data, const char *logdir,
		   const char *const *lines)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->bin, sizeof(p->bin), "%s", pg_bin());
	snprintf(p->data, sizeof(p->data), "%s", data);
	snprintf(p->sock, sizeof(p->sock), "%s/pgsock-%s", c->run_dir, name);
	snprintf(p->logdir, sizeof(p->logdir), "%s", logdir);
	if (pg_find_script(p->script, sizeof(p->script)))
		return -ENOENT;
	struct passwd *pw = getpwnam("postgres");
	if (!pw)
		return -ENOENT;
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	for (int i = 0; i < 2; i++)
		if (!pg_active[i]) {
			pg_active[i] = p;
			break;
		}
	if (chmod(DISK_ROOT, 0711) || chmod(c->run_dir, 0711)) {
		int e = errno;
		cli_error("chmod '%s': %s", c->run_dir, strerror(e));
		return -e;
	}
	/* The record first: a run killed from here on leaves it. */
	snprintf(p->rec, sizeof(p->rec), "%s/%s.pgcluster", c->run_dir, name);
	FILE *f = fopen(p->rec, "we");
	if (!f || fprintf(f, "%s\n", p->data) < 0 || fclose(f)) {
		int e = errno;
		cli_error("create '%s': %s", p->rec, strerror(e));
		return -e;
	}
	p->made = 1;
	int rc = chown_dir(p->data, p);
	if (!rc)
		rc = chown_dir(p->sock, p);
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "%s/postgres", p->bin);
	child_argv_add(&a, "--version");
	if (!rc) {
		rc = pg_exec(p, &a, 0, 1, "pg-version.log", NULL, p->version,
			     sizeof(p->version));
		p->version[strcspn(p->version, "\n")] = 0;
	}
	child_argv_release(&a);
	child_argv_add(&a, "%s/initdb", p->bin);
	child_argv_add(&a, "-D");
	child_argv_add(&a, "%s", p->data);
	child_argv_add(&a, "-A");
	child_argv_add(&a, "trust");
	child_argv_add(&a, "-U");
	child_argv_add(&a, "postgres");
	child_argv_add(&a, "--locale=C");
	child_argv_add(&a, "-E");
	child_argv_add(&a, "UTF8");
	child_argv_add(&a, "-N"); /* the caller syncs the file system */
	if (!rc)
		rc = pg_exec(p, &a, 1, 1, "pg-initdb.log", NULL, NULL, 0);
	child_argv_release(&a);
	if (!rc)
		rc = pg_conf(p, lines);
	child_argv_add(&a, "%s/pg_ctl", p->bin);
	child_argv_add(&a, "-D");
	child_argv_add(&a, "%s", p->data);
	child_argv_add(&a, "-l");
	child_argv_add(&a, "%s/server.log", p->data);
	child_argv_add(&a, "-w");
	child_argv_add(&a, "-t");
	child_argv_add(&a, "120");
	child_argv_add(&a, "start");
	if (!rc) {
		p->started = 1; /* from here pg_stop stops it */
		rc = pg_exec(p, &a, 1, 1, "pg-start.log", NULL, NULL, 0);
	}
	child_argv_release(&a);
	return rc;
}

/* The head of a step run under "flushkit monitor --json -i MS -p PATH --
 * /proc/self/exe": the step's own arguments follow. */
static void monitor_argv(struct child_argv *a, unsigned interval_ms,
			 const char *path)
{
	child_argv_add(a, "flushkit");
	child_argv_add(a, "monitor");
	child_argv_add(a, "--json");
	child_argv_add(a, "-i");
	child_argv_add(a, "%u", interval_ms);
	child_argv_add(a, "-p");
	child_argv_add(a, "%s", path);
	child_argv_add(a, "--");
	child_argv_add(a, "/proc/self/exe");
}

/* "BIN/@prog -h SOCK -p PORT -U postgres" into @a: a client of the
 * cluster over its socket (psql, pgbench). */
static void pg_client_argv(const struct pg *p, struct child_argv *a,
			   const char *prog)
{
	child_argv_add(a, "%s/%s", p->bin, prog);
	child_argv_add(a, "-h");
	child_argv_add(a, "%s", p->sock);
	child_argv_add(a, "-p");
	child_argv_add(a, "%d", PG_PORT);
	child_argv_add(a, "-U");
	child_argv_add(a, "postgres");
}

/* psql -c SQL for each of @sql (NULL-terminated), as postgres over the
 * socket; the last one's output (unaligned, tuples only) into @cap. */
static int pg_sql(struct pg *p, const char *const *sql, char *cap,
		  size_t caplen)
{
	struct child_argv a = CHILD_ARGV_INIT;
	pg_client_argv(p, &a, "psql");
	child_argv_add(&a, "-X");
	child_argv_add(&a, "-q");
	child_argv_add(&a, "-At");
	child_argv_add(&a, "-v");
	child_argv_add(&a, "ON_ERROR_STOP=1");
	for (int i = 0; sql[i]; i++) {
		child_argv_add(&a, "-c");
		child_argv_add(&a, "%s", sql[i]);
	}
	child_argv_add(&a, "postgres");
	char dummy[256];
	int rc = pg_exec(p, &a, 0, 1, "pg-psql.log", NULL, cap ? cap : dummy,
			 cap ? caplen : sizeof(dummy));
	child_argv_release(&a);
	if (!rc && cap)
		cap[strcspn(cap, "\n")] = 0;
	return rc;
}

/* pgbench -i -s @scale into the cluster. */
static int pg_pgbench_init(struct pg *p, int scale)
{
	struct child_argv a = CHILD_ARGV_INIT;
	pg_client_argv(p, &a, "pgbench");
	child_argv_add(&a, "-i");
	child_argv_add(&a, "-q");
	child_argv_add(&a, "-s");
	child_argv_add(&a, "%d", scale);
	child_argv_add(&a, "postgres");
	int rc = pg_exec(p, &a, 0, 1, "pg-pgbench-init.log", NULL, NULL, 0);
	child_argv_release(&a);
	return rc;
}

/* The counters a result file records, as one JSON object (as
 * bench/peers/tpcb.sh's). */
static int pg_stats(struct pg *p, char *buf, size_t len)
{
	static const char *const q[] = {
	    "SELECT json_build_object('buffers_backend_fsync', "
	    "b.buffers_backend_fsync, 'buffers_backend', b.buffers_backend, "
	    "'buffers_checkpoint', b.buffers_checkpoint, 'checkpoints', "
	    "b.checkpoints_timed + b.checkpoints_req, 'wal_fpi', w.wal_fpi, "
	    "'wal_bytes', w.wal_bytes, 'wal_sync', w.wal_sync) FROM "
	    "pg_stat_bgwriter b, pg_stat_wal w",
	    NULL};
	return pg_sql(p, q, buf, len);
}

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copy @from's bytes after @off to @to (a run's lines of the server
 * log). */
static void copy_tail(const char *from, off_t off, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[65536];
	ssize_t n;
	if (in >= 0 && out >= 0 && lseek(in, off, SEEK_SET) == off)
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

/* ---- 000: sync_file_range with WB_SYNC_NONE ------------------------- */

/* The seed's 000 rows: store and peer tables alike. */
static const struct {
	const char *label, *key, *sa, *sb;
	char dir;
} rows_000[] = {
    {"transactions", "transactions", "7873859", "9370637", '+'},
    {"latency average (ms)", "lat_avg_ms", "6.094", "5.119", '-'},
    {"latency stddev (ms)", "lat_stddev_ms", "35.376", "24.423", '-'},
    {"tps", "tps", "7871.887", "9369.212", '+'},
    {"worst second (tps)", "worst_second_tps", "—", "497.0", '?'},
    {"max latency (ms)", "lat_max_ms", "—", "—", '?'},
};

/* The rows of 000 and the worst progress seconds of each side. */
static void table_000(struct table *t, const char *da, const char *db)
{
	table_head(t, "before", "after");
	for (size_t i = 0; i < sizeof(rows_000) / sizeof(rows_000[0]); i++) {
		struct vals va, vb;
		summary_vals(da, rows_000[i].key, &va);
		summary_vals(db, rows_000[i].key, &vb);
		table_row(t, rows_000[i].label, rows_000[i].sa, rows_000[i].sb,
			  rows_000[i].dir, &va, &vb);
	}
	table_end(t);
	for (int s = 0; s < 2; s++) {
		struct collect col;
		memset(&col, 0, sizeof(col));
		collect_dir(s ? db : da, &col);
		table_note(t,
			   "\nWorst progress seconds of %s (seed, after: "
			   "\"progress: 871.0 s, 497.0 tps, lat 89.598 ms "
			   "stddev 308.398\"):",
			   s ? "B" : "A");
		for (int i = 0; i < col.nworst; i++)
			table_note(t,
				   "    progress: %.1f s, %.1f tps, lat %.3f "
				   "ms stddev %.3f",
				   col.worst_t[i], col.worst_tps[i],
				   col.worst_lat[i], col.worst_sd[i]);
	}
}

/* One pgbench run of the 000 peer with checkpoint_flush_after @fa, its
 * result file (bench/peers/tpcb-pg-result.py) into @dir; logs named
 * after @tag ("pg-a-1"). */
static int peer_000_run(struct ctx *c, struct pg *p, const char *fa,
			const char *dir, const char *tag, int scale,
			int clients, int secs, const char *sb, const char *cpt)
{
	char set[64];
	snprintf(set, sizeof(set),
		 "ALTER SYSTEM SET checkpoint_flush_after "
		 "= '%s'",
		 fa);
	const char *const prep[] = {set, "SELECT pg_reload_conf()",
				    "CHECKPOINT", NULL};
	char before[1024], after[1024];
	int rc = pg_sql(p, prep, NULL, 0);
	if (!rc)
		rc = pg_stats(p, before, sizeof(before));
	if (rc)
		return rc;
	/* pgbench's per-transaction logs (the max latency): in the run
	 * directory, not on the disk under test; removed after each run. */
	char logs[1200], slog[1300];
	snprintf(logs, sizeof(logs), "%s/pglog", c->run_dir);
	rm_tree(logs);
	if (mkdir(logs, 0700)) {
		cli_error("mkdir '%s': %s", logs, strerror(errno));
		return -EIO;
	}
	snprintf(slog, sizeof(slog), "%s/server.log", p->data);
	struct stat st;
	off_t off = stat(slog, &st) ? 0 : st.st_size;
	int jobs = clients < 2 ? 1 : 2;
	struct child_argv a = CHILD_ARGV_INIT;
	pg_client_argv(p, &a, "pgbench");
	child_argv_add(&a, "-c");
	child_argv_add(&a, "%d", clients);
	child_argv_add(&a, "-j");
	child_argv_add(&a, "%d", jobs);
	child_argv_add(&a, "-T");
	child_argv_add(&a, "%d", secs);
	child_argv_add(&a, "-P");
	child_argv_add(&a, "1");
	child_argv_add(&a, "-l");
	child_argv_add(&a, "--log-prefix=%s/pgbench_log", logs);
	child_argv_add(&a, "postgres");
	char out[128], err[128];
	snprintf(out, sizeof(out), "%s.out", tag);
	snprintf(err, sizeof(err), "%s.log", tag);
	double t0 = wall_s();
	rc = pg_exec(p, &a, 0, 1, out, err, NULL, 0);
	double t1 = wall_s();
	child_argv_release(&a);
	if (!rc)
		rc = pg_stats(p, after, sizeof(after));
	char srv[2400];
	snprintf(srv, sizeof(srv), "%s/%s.server.log", c->seed_dir, tag);
	copy_tail(slog, off, srv);
	if (rc) {
		rm_tree(logs);
		return rc;
	}
	child_argv_add(&a, "python3");
	child_argv_add(&a, "%s", p->script);
	child_argv_add(&a, "--out");
	child_argv_add(&a, "%s/tpcb-%s.jsonl", dir, tag);
	child_argv_add(&a, "--pgbench-out");
	child_argv_add(&a, "%s/%s", c->seed_dir, out);
	child_argv_add(&a, "--pgbench-err");
	child_argv_add(&a, "%s/%s", c->seed_dir, err);
	child_argv_add(&a, "--logs");
	child_argv_add(&a, "%s", logs);
	child_argv_add(&a, "--server-log");
	child_argv_add(&a, "%s", srv);
	child_argv_add(&a, "--stats-before");
	child_argv_add(&a, "%s", before);
	child_argv_add(&a, "--stats-after");
	child_argv_add(&a, "%s", after);
	child_argv_add(&a, "--t0");
	child_argv_add(&a, "%.6f", t0);
	child_argv_add(&a, "--t1");
	child_argv_add(&a, "%.6f", t1);
	child_argv_add(&a, "--version");
	child_argv_add(&a, "%s", p->version);
	child_argv_add(&a, "--command");
	child_argv_add(&a, "pgbench -c %d -j %d -T %d -P 1 -l", clients, jobs,
		       secs);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "scale=%d", scale);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "clients=%d", clients);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "duration_s=%d", secs);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "progress_s=1");
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "shared_buffers=%s", sb);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "checkpoint_timeout=%s", cpt);
	child_argv_add(&a, "--setting");
	child_argv_add(&a, "checkpoint_flush_after=%s", fa);
	char rlog[160];
	snprintf(rlog, sizeof(rlog), "%s.result.log", tag);
	rc = pg_exec(p, &a, 0, 1, rlog, NULL, NULL, 0);
	child_argv_release(&a);
	rm_tree(logs); /* the per-transaction logs are large */
	return rc;
}

/*
 * 000's peer: PostgreSQL 15 + pgbench on the same disk, the store runs'
 * scale, clients, duration, -P 1 and shared_buffers; A =
 * checkpoint_flush_after 0 (no writeback hints), B = 256kB (PostgreSQL
 * 15's default: sync_file_range(SYNC_FILE_RANGE_WRITE) every 256 KiB of
 * checkpoint writes), alternating as the store's sides.  Its table is
 * appended to 000's.  Returns 0, -EINTR or -errno; *@ran whether the
 * table was written.
 */
static int peer_000(struct ctx *c, struct disk *d, unsigned runs, int scale,
		    int clients, int secs, const char *sb, int *ran)
{
	char why[1400];
	*ran = 0;
	int av = pg_available(why, sizeof(why));
	if (av <= 0) {
		if (av == 0)
			printf("000 peer: PostgreSQL 15 not installed, left "
			       "out\n");
		else
			printf("000 peer: PostgreSQL 15 left out: %s\n", why);
		fflush(stdout);
		return 0;
	}
	/* PostgreSQL's minimum checkpoint_timeout is 30 s (the store
	 * runs' is shorter). */
	const char *cpt = "30s";
	char l_sb[96], l_conn[64];
	snprintf(l_sb, sizeof(l_sb), "shared_buffers = '%s'", sb);
	snprintf(l_conn, sizeof(l_conn), "max_connections = %d", clients + 10);
	const char *const lines[] = {l_sb, "checkpoint_timeout = '30s'",
				     "log_checkpoints = on", l_conn, NULL};
	char da[2300], db[2300], data[1200];
	snprintf(da, sizeof(da), "%s/pg-a", c->seed_dir);
	snprintf(db, sizeof(db), "%s/pg-b", c->seed_dir);
	snprintf(data, sizeof(data), "%s/pg", d->mnt);
	if (mkdir_p1(da) || mkdir_p1(db))
		return -EIO;
	printf("000 peer: PostgreSQL 15, pgbench -s %d -c %d -T %d\n", scale,
	       clients, secs);
	fflush(stdout);
	struct pg p;
	int rc = pg_init(&p, c, "seed000", data, c->seed_dir, lines);
	if (!rc)
		rc = pg_pgbench_init(&p, scale);
	for (unsigned r = 0; r < 2 * runs && !rc; r++) {
		int side = (r % 2) ^ ((r / 2) % 2); /* A B B A A B ... */
		char tag[32];
		snprintf(tag, sizeof(tag), "pg-%c-%u", side ? 'b' : 'a',
			 r / 2 + 1);
		rc = peer_000_run(c, &p, side ? "256kB" : "0", side ? db : da,
				  tag, scale, clients, secs, sb, cpt);
	}
	int rr = pg_release(&p);
	if (rc || rr)
		return rc ? rc : rr;

	struct table t;
	char cmd[400], ta[512], tb[512];
	snprintf(cmd, sizeof(cmd),
		 "%s, pgbench -s %d -c %d -T %d -P 1, shared_buffers=%s, "
		 "checkpoint_timeout=%s",
		 p.version, scale, clients, secs, sb, cpt);
	snprintf(ta, sizeof(ta), "%s, checkpoint_flush_after=0", cmd);
	snprintf(tb, sizeof(tb), "%s, checkpoint_flush_after=256kB", cmd);
	if (table_open_mode(c, &t, "000 peer: PostgreSQL 15", ta, tb, "ae"))
		return -EIO;
	table_000(&t, da, db);
	table_note(&t, "\nPostgreSQL has no hint that waits: A is no "
		       "writeback hint at all, B its sync_file_range("
		       "SYNC_FILE_RANGE_WRITE) every 256 KiB of checkpoint "
		       "writes.  Its checkpoint_timeout cannot be below 30 "
		       "s.");
	table_close_as(&t, "PostgreSQL");
	*ran = 1;
	return 0;
}

static int seed_000(struct ctx *c, struct disk *d)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 3;
	int scale = c->quick ? 1 : 20, clients = c->quick ? 4 : 16;
	int secs = c->quick ? 4 : 60;
	const char *sb = c->quick ? "2MB" : "32MB";
	const char *cpt = c->quick ? "2s" : "15s";
	char da[2200], db[2200], dc[2200];
	snprintf(da, sizeof(da), "%s/a", c->seed_dir);
	snprintf(db, sizeof(db), "%s/b", c->seed_dir);
	snprintf(dc, sizeof(dc), "%s/c", c->seed_dir);
	if (mkdir_p1(da) || mkdir_p1(db) || mkdir_p1(dc))
		return -EIO;
	/* The three sides' hint waits and result directories. */
	static const char *const wait_000[3] = {"before", "off", "all"};
	const char *const dir_000[3] = {da, db, dc};
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "flushkit");
	child_argv_add(&a, "bench");
	child_argv_add(&a, "tpcb");
	child_argv_add(&a, "-i");
	child_argv_add(&a, "-s");
	child_argv_add(&a, "%d", scale);
	child_argv_add(&a, "--data-dir=%s/db", d->mnt);
	child_argv_add(&a, "--shared-buffers=%s", sb);
	child_argv_add(&a, "--no-results");
	int rc = run_args(c, "init.log", &a);
	for (unsigned r = 0; r < 3 * runs && !rc; r++) {
		/* A B C, C B A, A B C ...: B beside A and C in every round,
		 * each first as often as last. */
		int side = (r / 3) % 2 ? 2 - (int)(r % 3) : (int)(r % 3);
		child_argv_add(&a, "flushkit");
		child_argv_add(&a, "bench");
		child_argv_add(&a, "tpcb");
		child_argv_add(&a, "-c");
		child_argv_add(&a, "%d", clients);
		child_argv_add(&a, "-j");
		child_argv_add(&a, "%d", clients < 2 ? 1 : 2);
		child_argv_add(&a, "-T");
		child_argv_add(&a, "%d", secs);
		child_argv_add(&a, "-P");
		child_argv_add(&a, "1");
		child_argv_add(&a, "--data-dir=%s/db", d->mnt);
		child_argv_add(&a, "--flush=smooth");
		child_argv_add(&a, "--shared-buffers=%s", sb);
		child_argv_add(&a, "--checkpoint-timeout=%s", cpt);
		child_argv_add(&a, "--checkpoint-flush-after=256kB");
		child_argv_add(&a, "--checkpoint-flush-wait=%s",
			       wait_000[side]);
		child_argv_add(&a, "--log-checkpoints=off");
		child_argv_add(&a, "--results=%s", dir_000[side]);
		char logname[64];
		snprintf(logname, sizeof(logname), "%c-%u.log", 'a' + side,
			 r / 3 + 1);
		rc = run_args(c, logname, &a);
	}
	if (rc)
		return rc;

	struct table t;
	char cmd[400];
	snprintf(cmd, sizeof(cmd),
		 "bench tpcb -s %d -c %d -T %d -P 1 --flush=smooth "
		 "--shared-buffers=%s --checkpoint-timeout=%s "
		 "--checkpoint-flush-after=256kB",
		 scale, clients, secs, sb, cpt);
	char ta[512], tb[512], tc[512];
	snprintf(ta, sizeof(ta), "%s --checkpoint-flush-wait=before", cmd);
	snprintf(tb, sizeof(tb), "%s --checkpoint-flush-wait=off", cmd);
	snprintf(tc, sizeof(tc), "%s --checkpoint-flush-wait=all", cmd);
	if (table_open(c, &t, "000: sync_file_range with WB_SYNC_NONE (TPC-B)",
		       ta, tb))
		return -EIO;
	table_000(&t, da, db);
	table_close(&t);
	if (table_open_mode(c, &t,
			    "000, a third configuration (not the seed's): "
			    "hints that wait for their own writes too",
			    tc, tb, "ae"))
		return -EIO;
	table_note(&t, "No kernel made the plain call wait for its own "
		       "writes: this is every checkpoint write made "
		       "synchronous, beside B; no seed figure, no seed "
		       "effect counted.\n");
	table_head(&t, "—", "—");
	for (size_t i = 0; i < sizeof(rows_000) / sizeof(rows_000[0]); i++) {
		struct vals vc, vb;
		summary_vals(dc, rows_000[i].key, &vc);
		summary_vals(db, rows_000[i].key, &vb);
		table_row(&t, rows_000[i].label, "—", "—", '?', &vc, &vb);
	}
	table_end(&t);
	fclose(t.md);
	fclose(t.html);
	int ran;
	rc = peer_000(c, d, runs, scale, clients, secs, sb, &ran);
	if (rc)
		return rc;
	char pa[2300], pb[2300];
	snprintf(pa, sizeof(pa), "%s/pg-a", c->seed_dir);
	snprintf(pb, sizeof(pb), "%s/pg-b", c->seed_dir);
	const char *dirs[] = {da, db, dc, pa, pb};
	return make_report(c, dirs, ran ? 5 : 3);
}

/* ---- 001: many fsyncs in flight -------------------------------------- */

static int seed_001(struct ctx *c, struct disk *d)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 5;
	int threads = c->quick ? 4 : 16, files = c->quick ? 25 : 100;
	uint64_t fill = c->quick ? (16u << 20) : (1024u << 20);
	static const char *const cond[2] = {"cold", "warm"};
	struct vals iops[2][2], wall[2][2];
	memset(iops, 0, sizeof(iops));
	memset(wall, 0, sizeof(wall));

	/* The clean pages for "warm": a file written and fsynced once,
	 * read back into the page cache before each warm run. */
	char fillpath[1200];
	snprintf(fillpath, sizeof(fillpath), "%s/clean-pages", d->mnt);
	int fd = open(fillpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	static char buf[1 << 20];
	memset(buf, 0x6b, sizeof(buf));
	for (uint64_t off = 0; off < fill; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	if (fsync(fd)) {
		cli_error("fsync '%s': %s", fillpath, strerror(errno));
		close(fd);
		return -EIO;
	}
	close(fd); /* the remounts need the file system unused */

	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		for (unsigned r = 0; r < 2 * runs && !rc; r++) {
			int side = (r % 2) ^ ((r / 2) % 2);
			char dir[2300], fsd[1200];
			snprintf(dir, sizeof(dir), "%s/%s-%c", c->seed_dir,
				 cond[k], side ? 'b' : 'a');
			if (mkdir_p1(dir)) {
				rc = -EIO;
				break;
			}
			snprintf(fsd, sizeof(fsd), "%s/fsm", d->mnt);
			rm_tree(fsd);
			/* From empty memory: this file system's pages out of
			 * the page cache (a remount; a global drop_caches
			 * would empty everyone's on a shared machine). */
			if (disk_remount(d)) {
				rc = -EIO;
				break;
			}
			if (k == 1) {
				fd = open(fillpath, O_RDONLY | O_CLOEXEC);
				while (fd >= 0 &&
				       read(fd, buf, sizeof(buf)) > 0)
					;
				if (fd >= 0)
					close(fd);
			}
			struct child_argv a = CHILD_ARGV_INIT;
			child_argv_add(&a, "flushkit");
			child_argv_add(&a, "bench");
			child_argv_add(&a, "fsmark");
			child_argv_add(&a, "-d");
			child_argv_add(&a, "%s", fsd);
			child_argv_add(&a, "-t");
			child_argv_add(&a, "%d", threads);
			child_argv_add(&a, "-n");
			child_argv_add(&a, "%d", files);
			child_argv_add(&a, "-s");
			child_argv_add(&a, "4096");
			child_argv_add(&a, "-S");
			child_argv_add(&a, "%s", side ? "batch" : "1");
			child_argv_add(&a, "-k");
			child_argv_add(&a, "--results=%s", dir);
			struct blk_counts b0, b1;
			blk_read(d, &b0);
			double t0 = now_s();
			char logname[64];
			snprintf(logname, sizeof(logname), "%s-%c-%u.log",
				 cond[k], side ? 'b' : 'a', r / 2 + 1);
			rc = run_args(c, logname, &a);
			double dt = now_s() - t0;
			blk_read(d, &b1);
			vals_add(&iops[k][side], (b1.writes - b0.writes) / dt);
			vals_add(&wall[k][side], dt);
		}
	}
	unlink(fillpath);
	if (rc)
		return rc;

	struct table t;
	char ta[256], tb[256];
	snprintf(ta, sizeof(ta),
		 "bench fsmark -t %d -n %d -s 4096 -k -S 1 (on xfs)", threads,
		 files);
	snprintf(tb, sizeof(tb), "the same with -S batch");
	if (table_open(c, &t, "001: many fsyncs in flight (fs_mark)", ta, tb))
		return -EIO;
	for (int k = 0; k < 2; k++) {
		char da[2300], db[2300];
		snprintf(da, sizeof(da), "%s/%s-a", c->seed_dir, cond[k]);
		snprintf(db, sizeof(db), "%s/%s-b", c->seed_dir, cond[k]);
		table_note(&t, "%s",
			   k ? "\nWith the page cache holding clean "
			       "pages (warm):\n"
			     : "From empty memory (cold: the file "
			       "system remounted before each run):\n");
		table_head(&t, "A", "B (aio fsync, 6 runs)");
		struct vals va, vb;
		table_row(&t, "wall time (s)", "—",
			  k ? "~225 (3m45s)" : "190-298 (3m10s-4m58s)", '-',
			  &wall[k][0], &wall[k][1]);
		summary_vals(da, "sys_s", &va);
		summary_vals(db, "sys_s", &vb);
		table_row(&t, "sys time (s)", "—", "672-766", '?', &va, &vb);
		table_row(&t, "write IOPS", "—", "30,000-85,000", '+',
			  &iops[k][0], &iops[k][1]);
		summary_vals(da, "tps", &va);
		summary_vals(db, "tps", &vb);
		table_row(&t, "files/s", "—", "13,500-21,000", '+', &va, &vb);
		table_end(&t);
		struct fk_stats_summary sa, sb;
		fk_stats_summarize(va.v, va.n, &sa);
		fk_stats_summarize(vb.v, vb.n, &sb);
		table_note(&t,
			   "Run-to-run spread of files/s (stddev/mean): A "
			   "%.1f%%, B %.1f%% (seed: %.1f%% over its 6 runs).",
			   sa.mean ? 100 * sa.stddev / sa.mean : NAN,
			   sb.mean ? 100 * sb.stddev / sb.mean : NAN, 17.2);
	}
	char d1[2300], d2[2300];
	snprintf(d1, sizeof(d1), "%s/cold-a", c->seed_dir);
	snprintf(d2, sizeof(d2), "%s/cold-b", c->seed_dir);
	const char *dirs[] = {d1, d2};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}

/* ---- 002: fsync request queue compaction ----------------------------- */

static int seed_002(struct ctx *c, struct disk *d)
{
	unsigned runs = c->runs ? c->runs : 2;
	const char *scales = c->quick ? "1" : "20,40";
	const char *clients = c->quick ? "4" : "16,32";
	int secs = c->quick ? 4 : 45;
	const char *common =
	    c->quick ? "--flush=smooth --shared-buffers=1MB "
		       "--checkpoint-timeout=2s --log-checkpoints=off"
		     : "--flush=smooth --shared-buffers=16MB "
		       "--checkpoint-timeout=15s --log-checkpoints=off";
	char sdir[2300];
	snprintf(sdir, sizeof(sdir), "%s/series", c->seed_dir);
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "flushkit");
	child_argv_add(&a, "bench");
	child_argv_add(&a, "series");
	child_argv_add(&a, "--scales=%s", scales);
	child_argv_add(&a, "--clients=%s", clients);
	child_argv_add(&a, "-T");
	child_argv_add(&a, "%d", secs);
	child_argv_add(&a, "--runs=%u", runs);
	child_argv_add(&a, "--config-a=%s --fsyncq-compaction=off", common);
	child_argv_add(&a, "--config-b=%s --fsyncq-compaction=on", common);
	child_argv_add(&a, "--results=%s", sdir);
	child_argv_add(&a, "--data-dir=%s/series", d->mnt);
	int rc = run_args(c, "series.log", &a);
	if (rc)
		return rc;

	struct table t;
	char ta[512], tb[512];
	snprintf(ta, sizeof(ta),
		 "bench series --scales=%s --clients=%s -T %d "
		 "with %s --fsyncq-compaction=off",
		 scales, clients, secs, common);
	snprintf(tb, sizeof(tb), "the same with --fsyncq-compaction=on");
	if (table_open(c, &t, "002: fsync request queue compaction (series)",
		       ta, tb))
		return -EIO;
	table_head(&t, "unmodified", "compacted");
	char csv[2300];
	snprintf(csv, sizeof(csv), "%s/seed-layout.csv", c->seed_dir);
	FILE *f = fopen(csv, "we");
	if (!f)
		return -errno;
	fprintf(f, ",,\"Unmodified\",,\"Compacted Fsync\",,,\n"
		   "\"scale\",\"clients\",\"tps\",\"max_latency\",\"tps\","
		   "\"max_latency\",\"TPS Gain\",\"%% Gain\"\n");
	char sc[64], cl[64];
	snprintf(sc, sizeof(sc), "%s", scales);
	char *s1 = NULL, *s2 = NULL;
	for (char *s = strtok_r(sc, ",", &s1); s;
	     s = strtok_r(NULL, ",", &s1)) {
		snprintf(cl, sizeof(cl), "%s", clients);
		for (char *k = strtok_r(cl, ",", &s2); k;
		     k = strtok_r(NULL, ",", &s2)) {
			char da[2600], db[2600], label[128];
			snprintf(da, sizeof(da), "%s/s%s-c%s-a", sdir, s, k);
			snprintf(db, sizeof(db), "%s/s%s-c%s-b", sdir, s, k);
			struct vals va, vb, la, lb, fa, fb;
			summary_vals(da, "tps", &va);
			summary_vals(db, "tps", &vb);
			summary_vals(da, "lat_max_ms", &la);
			summary_vals(db, "lat_max_ms", &lb);
			summary_vals(da, "backend_fsyncs", &fa);
			summary_vals(db, "backend_fsyncs", &fb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: tps", s, k);
			table_row(&t, label, "306-632", "321-747", '+', &va,
				  &vb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: max latency (ms)", s,
				 k);
			table_row(&t, label, "17963-80589", "17116-83232", '0',
				  &la, &lb);
			snprintf(label, sizeof(label),
				 "scale %s, %s clients: backend fsyncs", s, k);
			table_row(&t, label, "many", "0", '-', &fa, &fb);
			struct fk_stats_summary A, B, LA, LB;
			fk_stats_summarize(va.v, va.n, &A);
			fk_stats_summarize(vb.v, vb.n, &B);
			fk_stats_summarize(la.v, la.n, &LA);
			fk_stats_summarize(lb.v, lb.n, &LB);
			fprintf(
			    f, "%s,%s,%.0f,%.2f,%.0f,%.2f,%.0f,%.1f%%\n", s, k,
			    A.mean, LA.mean, B.mean, LB.mean, B.mean - A.mean,
			    A.mean ? 100 * (B.mean - A.mean) / A.mean : NAN);
		}
	}
	fclose(f);
	table_end(&t);
	table_note(&t, "\nThe seed's CSV (scale 500 and 1000, 16-256 clients):"
		       " average gain 14%% at 500, 8%% at 1000; ours in the "
		       "same layout: seed-layout.csv.");
	FILE *in = fopen(csv, "re");
	if (in) {
		char line[512];
		while (fgets(line, sizeof(line), in)) {
			line[strcspn(line, "\n")] = 0;
			table_note(&t, "    %s", line);
		}
		fclose(in);
	}
	char d1[2600], d2[2600];
	snprintf(d1, sizeof(d1), "%s/s%.*s-c%.*s-a", sdir,
		 (int)strcspn(scales, ","), scales, (int)strcspn(clients, ","),
		 clients);
	snprintf(d2, sizeof(d2), "%s/s%.*s-c%.*s-b", sdir,
		 (int)strcspn(scales, ","), scales, (int)strcspn(clients, ","),
		 clients);
	const char *dirs[] = {d1, d2};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}

/* ---- 003: delayed fsync + DONTNEED in a bulk copy -------------------- */

/* A tree of a fresh PostgreSQL data directory's shape: three databases
 * of ~300 relation files (most 8-16 KiB, some up to 1 MiB), global/,
 * and one 16 MiB WAL segment.  About 30 MiB, as the seed's copy. */
static int make_db_tree(const char *root, int quick)
{
	static char buf[1 << 20];
	memset(buf, 0x3c, sizeof(buf));
	const char *dirs[] = {"",	 "/base",   "/base/1", "/base/4",
			      "/base/5", "/global", "/pg_wal"};
	char path[1400];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		if (mkdir_p1(path))
			return -EIO;
	}
	unsigned seed = 17;
	int per_db = quick ? 60 : 300;
	for (int db = 0; db < 4; db++) {
		const char *sub = db == 3   ? "global"
				  : db == 0 ? "base/1"
				  : db == 1 ? "base/4"
					    : "base/5";
		int nfiles = db == 3 ? per_db / 5 : per_db;
		for (int i = 0; i < nfiles; i++) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = (seed >> 16) % 100;
			size_t size = r < 70   ? 8192
				      : r < 90 ? 16384
				      : r < 98 ? 131072
					       : 1048576;
			snprintf(path, sizeof(path), "%s/%s/%d", root, sub,
				 1200 + i);
			int fd =
			    open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				 0600);
			if (fd < 0 || write(fd, buf, size) != (ssize_t)size) {
				cli_error("write '%s': %s", path,
					  strerror(errno));
				if (fd >= 0)
					close(fd);
				return -EIO;
			}
			close(fd);
		}
	}
	snprintf(path, sizeof(path), "%s/pg_wal/000000010000000000000001",
		 root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	for (int i = 0; i < (quick ? 1 : 16); i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	close(fd);
	return 0;
}

/* 003's runs and table: copies of the tree @src (@tree says what it
 * is). */
static int seed_003_copy(struct ctx *c, struct disk *d, const char *src,
			 const char *tree)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 5;
	char dst[1200];
	snprintf(dst, sizeof(dst), "%s/copy", d->mnt);
	struct vals wall[2], wr[2], mg[2], q[2], kib[2];
	memset(wall, 0, sizeof(wall));
	memset(wr, 0, sizeof(wr));
	memset(mg, 0, sizeof(mg));
	memset(q, 0, sizeof(q));
	memset(kib, 0, sizeof(kib));
	char sd[2][2300];
	for (int s = 0; s < 2; s++) {
		snprintf(sd[s], sizeof(sd[s]), "%s/%c", c->seed_dir,
			 s ? 'b' : 'a');
		if (mkdir_p1(sd[s]))
			return -EIO;
	}
	struct vals disp[2], ins[2];
	memset(disp, 0, sizeof(disp));
	memset(ins, 0, sizeof(ins));
	double lost = 0;
	struct trace tr;
	int traced = trace_start(&tr, c->run_dir, d) == 0;
	int rc = 0;
	for (unsigned r = 0; r < 2 * runs && !rc; r++) {
		int side = (r % 2) ^ ((r / 2) % 2);
		rm_tree(dst);
		syncfs_path(d->mnt);
		if (traced && trace_clear(&tr)) {
			snprintf(tr.why, sizeof(tr.why), "clear the buffer");
			trace_stop(&tr);
			traced = 0;
			if (r) { /* the sides must be counted one way */
				cli_error("tracefs failed after run %u", r);
				rc = -EIO;
				break;
			}
		}
		struct child_argv a = CHILD_ARGV_INIT;
		monitor_argv(&a, 100, d->mnt);
		child_argv_add(&a, "cp");
		if (side) {
			child_argv_add(&a, "--method=writeback");
			child_argv_add(&a, "--drop-cache");
		} else {
			child_argv_add(&a, "--method=fsync-each");
		}
		child_argv_add(&a, "%s", src);
		child_argv_add(&a, "%s", dst);
		char log[2400];
		snprintf(log, sizeof(log), "%s/monitor-%u.jsonl", sd[side],
			 r / 2 + 1);
		struct blk_counts b0, b1;
		blk_read(d, &b0);
		double t0 = now_s();
		rc = run_flushkit(log, &a);
		child_argv_release(&a);
		double dt = now_s() - t0;
		char cplog[2400];
		snprintf(cplog, sizeof(cplog), "%s/cp.log", c->seed_dir);
		split_jsonl(log, cplog);
		blk_read(d, &b1);
		vals_add(&wall[side], dt);
		struct trace_counts tc;
		if (traced && !trace_count(&tr, &tc)) {
			vals_add(&q[side], tc.ev[0]);
			vals_add(&mg[side], tc.ev[1] + tc.ev[2]);
			vals_add(&ins[side], tc.ev[3]);
			vals_add(&disp[side], tc.ev[4]);
			vals_add(&wr[side], tc.ev[5]);
			vals_add(&kib[side], tc.kib);
			lost += tc.lost;
			continue;
		}
		if (traced) {
			cli_error("read the tracefs buffer of '%s'", tr.inst);
			rc = -EIO;
			break;
		}
		vals_add(&wr[side], b1.writes - b0.writes);
		vals_add(&mg[side], b1.merges - b0.merges);
		vals_add(&q[side],
			 b1.writes - b0.writes + b1.merges - b0.merges);
		vals_add(&kib[side], b1.kib - b0.kib);
	}
	if (traced)
		trace_stop(&tr);
	rm_tree(dst);
	if (rc)
		return rc;
	struct table t;
	if (table_open(c, &t, "003: delayed fsync + DONTNEED in a bulk copy",
		       "flushkit cp --method=fsync-each TEMPLATE COPY",
		       "flushkit cp --method=writeback --drop-cache TEMPLATE "
		       "COPY"))
		return -EIO;
	table_head(&t, "OLD", "New");
	table_row(&t, "copy wall time (s)", "—", "—", '-', &wall[0], &wall[1]);
	table_row(&t,
		  traced ? "writes queued (block_bio_queue)"
			 : "writes queued (completed + merged)",
		  "7854", "1716", '-', &q[0], &q[1]);
	table_row(&t, "write merges", "5492", "1166", '-', &mg[0], &mg[1]);
	if (traced) {
		table_row(&t, "write requests inserted (block_rq_insert)", "—",
			  "—", '?', &ins[0], &ins[1]);
		table_row(&t, "write dispatches (block_rq_issue)", "1926",
			  "324", '-', &disp[0], &disp[1]);
	}
	table_row(&t, "writes completed", "2362", "550", '-', &wr[0], &wr[1]);
	table_row(&t, "KiB written", "29672", "5960", '-', &kib[0], &kib[1]);
	table_end(&t);
	if (traced)
		table_note(&t,
			   "Block-layer counts: tracefs block events of the "
			   "loop device (block_bio_queue, block_bio_backmerge "
			   "+ block_bio_frontmerge, block_rq_insert, "
			   "block_rq_issue, block_rq_complete, writes only; "
			   "KiB from block_rq_complete), in an instance of "
			   "our own; events lost to buffer overruns: %.0f.  "
			   "The tree: %s (%s).",
			   lost, src, tree);
	else
		table_note(&t,
			   "Block-layer counts are those of the loop device "
			   "(/sys/block/loopN/stat: tracefs block events "
			   "could not be used here: %s; the seed's blktrace "
			   "\"dispatches\" have no counter in stat).  The "
			   "tree: %s (%s).",
			   tr.why, src, tree);
	const char *dirs[] = {sd[0], sd[1]};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}

/*
 * 003's tree: with PostgreSQL 15 installed a fresh initdb data directory
 * (as postgres, on the seed's disk) given table data by pgbench -i -s N
 * (-s 2: about the generated tree's size; --quick -s 1), its server
 * stopped (a clean shutdown checkpoint) before the copies; else the
 * generated tree of the same shape (make_db_tree).
 */
static int seed_003(struct ctx *c, struct disk *d)
{
	char src[1200], tree[1600], why[1400];
	snprintf(src, sizeof(src), "%s/template", d->mnt);
	struct pg p;
	int pgtree = pg_available(why, sizeof(why)) == 1, rc = 0;
	if (pgtree) {
		int scale = c->quick ? 1 : 2;
		rc = pg_init(&p, c, "seed003", src, c->seed_dir, NULL);
		if (!rc)
			rc = pg_pgbench_init(&p, scale);
		if (!rc)
			rc = pg_stop(&p);
		snprintf(tree, sizeof(tree),
			 "a fresh initdb data directory of %s with pgbench "
			 "-i -s %d, its server stopped",
			 p.version, scale);
	} else {
		rc = make_db_tree(src, c->quick) ? -EIO : 0;
		snprintf(tree, sizeof(tree),
			 "a generated PostgreSQL-like data directory; no "
			 "initdb tree: %s",
			 why);
	}
	printf("  the tree: %s\n", tree);
	fflush(stdout);
	if (!rc && syncfs_path(d->mnt))
		rc = -EIO;
	if (!rc)
		rc = seed_003_copy(c, d, src, tree);
	if (pgtree) {
		int rr = pg_release(&p);
		if (!rc)
			rc = rr;
	}
	return rc;
}

/* ---- 004: sync ordering; syncfs per file system ---------------------- */

static int seed_004(struct ctx *c)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 5;
	/*
	 * Test 2's writers run until the sync.  On a slow device (nominal
	 * write IOPS below 1000: hdd, a slow throttle) they are
	 * bounded, and the runs cut to 3, so that the 12 (type, count)
	 * cells fit the 2-hour budget of "all": the small-file writers stop
	 * after what the disk takes in about 5 s (IOPS x 5 s x 40 KB),
	 * where a quarter of the image (384 MiB) took 77 s to sync at 150
	 * IOPS (the blkio IOPS throttle counts each 40 KB write before it
	 * could merge).
	 */
	int slow = c->prof.write_iops && c->prof.write_iops < 1000;
	int empty_syncs = c->quick ? 4 : 200; /* test 1 (the seed's 200) */
	uint64_t small_limit = slow ? c->prof.write_iops * 5 * 40960 : 0;
	if (slow && !c->runs)
		runs = 3;
	char types[64] = "";
	const char *want[] = {"ext4", "xfs", "btrfs", "ext3"};
	for (int i = 0; i < (c->quick ? 1 : 4); i++) {
		char mk[32];
		snprintf(mk, sizeof(mk), "mkfs.%s", want[i]);
		if (!disk_in_path(mk)) {
			printf("  %s: no %s here, left out\n", want[i], mk);
			continue;
		}
		if (types[0])
			strcat(types, ",");
		strcat(types, want[i]);
	}
	const char *counts = c->quick ? "1,2" : "1,2,4";
	char ta[2300];
	struct child_argv a = CHILD_ARGV_INIT;
	/* Under "flushkit monitor": Dirty and Writeback over the run. */
	monitor_argv(&a, 500, c->run_dir);
	child_argv_add(&a, "bench");
	child_argv_add(&a, "sync");
	child_argv_add(&a, "--fs=%s", types);
	child_argv_add(&a, "--fs-count=%s", counts);
	child_argv_add(&a, "--runs=%u", runs);
	child_argv_add(&a, "--empty-syncs=%d", empty_syncs);
	if (small_limit)
		child_argv_add(&a, "--small-limit=%llu",
			       (unsigned long long)small_limit);
	child_argv_add(&a, "--big-size=%s", c->quick ? "16M" : "512M");
	child_argv_add(&a, "--image-size=%s", c->quick ? "320M" : "1536M");
	child_argv_add(&a, "--sleep-scale=%s", c->quick ? "0.05" : "1");
	child_argv_add(&a, "--device=%s", c->prof.name);
	child_argv_add(&a, "--dir=%s", c->run_dir);
	child_argv_add(&a, "--results=%s", c->seed_dir);
	char mon[2300], log[2300];
	snprintf(mon, sizeof(mon), "%s/monitor/monitor.jsonl", c->seed_dir);
	snprintf(log, sizeof(log), "%s/sync.log", c->seed_dir);
	snprintf(ta, sizeof(ta), "%s/monitor", c->seed_dir);
	if (mkdir_p1(ta)) {
		child_argv_release(&a);
		return -EIO;
	}
	int rc = run_flushkit(mon, &a);
	child_argv_release(&a);
	split_jsonl(mon, log);
	if (rc)
		return rc;
	struct table t;

	snprintf(ta, sizeof(ta), "sync(2), in bench sync --fs=%s --fs-count=%s",
		 types, counts);
	if (table_open(c, &t,
		       "004: sync ordering; syncfs per file system (bench "
		       "sync)",
		       ta,
		       "one syncfs per file system (first table), "
		       "flushkit sync (second)"))
		return -EIO;
	char test1[64];
	snprintf(test1, sizeof(test1), "test 1: %d syncs, nothing to write (s)",
		 empty_syncs);
	const char *const tests[] = {
	    test1, "test 2: sync while 40 KB files are written (s)",
	    "test 3: sync while a big file is written (s)"};
	static const char *const keys[] = {"empty_sync_total_s", "small_sync_s",
					   "big_sync_s"};
	for (int m = 1; m <= 2; m++) {
		table_note(&t, "\nB = %s:", m == 1 ? "syncfs" : "flushkit");
		table_head(&t, "BASE", "PATCHED");
		for (size_t i = 0; i < sizeof(seed_sync) / sizeof(seed_sync[0]);
		     i++) {
			const struct seed_sync_row *s = &seed_sync[i];
			if (!strstr(types, s->fs) ||
			    (s->count == 4 && c->quick))
				continue;
			struct vals va, vb;
			struct collect col;
			memset(&col, 0, sizeof(col));
			memset(&va, 0, sizeof(va));
			memset(&vb, 0, sizeof(vb));
			col.type = "run";
			col.key = keys[s->test - 1];
			col.fs = s->fs;
			col.count = s->count;
			col.method = "sync";
			col.out = &va;
			collect_dir(c->seed_dir, &col);
			col.method = m == 1 ? "syncfs" : "flushkit";
			col.out = &vb;
			collect_dir(c->seed_dir, &col);
			char label[160], sa[64], sb[64];
			snprintf(label, sizeof(label), "%s, %s, %d fs",
				 tests[s->test - 1], s->fs, s->count);
			snprintf(sa, sizeof(sa), "%.3f ± %.3f", s->base_avg,
				 s->base_sd);
			snprintf(sb, sizeof(sb), "%.3f ± %.3f", s->patched_avg,
				 s->patched_sd);
			table_row(&t, label, sa, sb, s->marker, &va, &vb);
		}
		table_end(&t);
	}
	table_note(&t, "BASE/PATCHED are the seed's kernels without and with "
		       "the sync reordering; ours are sync(2) against the "
		       "two ways to make each file system durable without "
		       "a global sync.  With 4 file systems two share a "
		       "disk: on a lab device, two loop devices on halves "
		       "of one lab disk, one model between them.");
	snprintf(ta, sizeof(ta), "%s/monitor", c->seed_dir);
	const char *dirs[] = {c->seed_dir, ta};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}

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
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct ctx c;
	int opt, cleanup = 0, others = 0;
	memset(&c, 0, sizeof(c));
	disk_profile_parse("hdd", &c.prof); /* see seed_device */
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
