// SPDX-License-Identifier: MIT
/*
 * 003.c - seed 003, delayed fsync + DONTNEED in a bulk copy (Andres
 * Freund, pgsql-hackers 2009: "Faster CREATE DATABASE by delaying fsync",
 * blktrace of createdb's copy of a template database on a disk).
 *
 * The seed: createdb copying ~30 MB of relation files, fsync after each
 * file (OLD) against writeback started early (sync_file_range), the
 * fsyncs delayed to the end and posix_fadvise(POSIX_FADV_DONTNEED)
 * (New); blktrace: writes queued 7854 -> 1716, write dispatches 1926 ->
 * 324, writes completed 2362 -> 550, write merges 5492 -> 1166.
 *
 * Ours (on the hdd model by default):
 *   OLD (fsync per file)  -> A: flushkit cp --method=fsync-each of a
 *                            database-like tree (a fresh initdb data
 *                            directory with pgbench data when PostgreSQL
 *                            15 is installed, else a generated one)
 *   New (delayed fsync + early writeback + DONTNEED) -> B: flushkit cp
 *                            --method=writeback --drop-cache (writeback
 *                            started early, the fsyncs delayed to one
 *                            pass, POSIX_FADV_DONTNEED)
 *   blktrace's counts   -> tracefs block events of the device (else
 *                            /sys/block/loopN/stat); Dirty/Writeback
 *                            sampled by "flushkit monitor" as Greg Smith
 *                            asked.
 */
#include "reproduce.h"

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
int seed_003(struct ctx *c, struct disk *d)
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
