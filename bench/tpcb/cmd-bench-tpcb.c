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
 * (cli/results.h, docs/report.md) into --results DIR (default
 * results/): its settings and environment, one "progress" line per
 * second (whatever -P says), the monitor sampler's lines, one
 * "checkpoint" line per checkpoint of the run, and the "summary".
 *
 * The files by concern are listed in tpcb.h; this one holds the
 * command: the store callbacks, -i (the tables' load), the run and
 * --check.
 *
 * Threads: the main thread opens the store, starts the clients, prints
 * progress and joins them; the store's checkpointer thread calls
 * on_checkpoint, which prints and records under ckpt_lock (also the
 * result file's checkpoint lines: run.rf is set and cleared under that
 * lock).  Clients share only the stop flag and their interval counters
 * (each under its client's lock).
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

/* ---- store callbacks ---- */

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
	e->at_s = r->start_ns
		      ? (double)(int64_t)(fk_now_ns() - r->start_ns) / 1e9
		      : 0.0;
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

	/* Checked and removed under the store's lock in one call; its
	 * progress line only once it succeeded, so a refused -i (a busy
	 * store, a directory not ours) says nothing it did not do. */
	ret = tpcb_datadir_reset(r->data_dir);
	if (!ret)
		fprintf(stderr, "dropping old tables...\n");
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
	if (r->use_log && tpcb_open_logs(r)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	tpcb_probe_sync_io(r);
	if (r->results_dir && tpcb_open_results(r)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}

	fk_store_get_stats(r->store, &res.st0);
	r->backend_fsyncs0 = res.st0.backend_fsyncs;
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
		ret = pthread_create(&c->thread, NULL, tpcb_client_main, c);
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
				tpcb_sleep_until_ns(t);
			}
			int all_done = atomic_load(&r->finished) == r->nclients;
			now = fk_now_ns();
			if (now >= rnext) {
				tpcb_result_interval(r, rlast, rnext);
				rlast = rnext;
				rnext += 1000000000ull;
			}
			if (now >= next) {
				tpcb_progress_report(
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
		tpcb_result_interval(r, rlast, end_ns);
	if (r->rf)
		results_monitor_stop(r->rf);
	if (tpcb_collect(r, &res, end_ns)) {
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
		tpcb_print_json(r, &res, 1);
	else
		tpcb_print_summary(r, &res);
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
			tpcb_print_json(r, &res, 0);
		else
			tpcb_print_check(&res);
	}
	if (res.check_done && !res.check_ok)
		status = FK_EXIT_FAILURE;
	struct result_file *rf = tpcb_detach_results(r);
	if (close_store(r)) {
		status = FK_EXIT_FAILURE;
		if (!r->failure[0])
			snprintf(r->failure, sizeof(r->failure),
				 "close store '%s' failed", r->data_dir);
	}
	/* After the close: a store that cannot shut down cleanly fails the
	 * run, and its result file says so. */
	if (rf && summarize)
		results_summary(rf, tpcb_summary_json(r, &res, status),
				r->failure[0] ? r->failure : NULL);
	if (tpcb_close_results(r, rf))
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
	if (tpcb_close_logs(r))
		status = FK_EXIT_FAILURE;
	if (r->log_paths) {
		for (int i = 0; i < r->nthreads; i++)
			free(r->log_paths[i]);
		free(r->log_paths);
	}
	free(res.series);
	return status;
}

/*
 * --device: the run on a fresh ext4 on its own disk (a lab disk of that
 * model, or a loop device for native; bench/lib/disk.h), where no other
 * program's I/O enters: made, loaded at -s as -i loads, run, removed.
 * Its size: the tables (about 16 MiB a scale unit, doubled for the
 * file system and growth), the WAL (max_wal_size and the segments made
 * ahead) and 1 GiB; a lab disk keeps only the blocks written in RAM.
 */
static int run_on_device(struct run *r)
{
	char dir[1024] = "";
	struct disk d;
	int status = FK_EXIT_FAILURE, made = 0;
	memset(&d, 0, sizeof(d));
	if (geteuid()) {
		cli_error("bench tpcb: --device=%s needs root (lab disks, loop "
			  "devices, mkfs, mount)",
			  r->device.name);
		return FK_EXIT_FAILURE;
	}
	uint64_t wal =
	    r->opts.max_wal_size_bytes + 4 * (r->opts.wal_segment_bytes
						  ? r->opts.wal_segment_bytes
						  : 16ull << 20);
	uint64_t bytes = (1ull << 30) + r->scale * (32ull << 20) + 2 * wal;
	if (disk_run_dir_create(dir, sizeof(dir)))
		goto out;
	if (disk_create(&d, dir, "tpcb", "ext4", bytes, &r->device))
		goto out;
	made = 1;
	snprintf(r->device_dir, sizeof(r->device_dir), "%s/data", d.mnt);
	fprintf(stderr, "device: %s, ext4 on %s (%.1f GiB) mounted on %s\n",
		r->device.name, d.dev, (double)bytes / (1 << 30), d.mnt);
	r->data_dir = r->device_dir;
	int log_ckpt = r->log_checkpoints;
	r->init = 1;
	status = do_init(r);
	r->init = 0;
	r->log_checkpoints = log_ckpt;
	if (status == FK_EXIT_OK)
		status = do_run(r);
out:
	if (made && disk_destroy(&d))
		status = FK_EXIT_FAILURE;
	if (dir[0])
		disk_run_dir_remove(dir);
	return status;
}

int cmd_bench_tpcb(int argc, char **argv)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	int ret = tpcb_parse_args(&r, argc, argv);
	if (ret >= 0)
		return ret;
	pthread_mutex_init(&r.ckpt_lock, NULL);
	ret = r.has_device ? run_on_device(&r)
	      : r.init	   ? do_init(&r)
			   : do_run(&r);
	pthread_mutex_destroy(&r.ckpt_lock);
	free(r.ckpts);
	return ret;
}
