// SPDX-License-Identifier: MIT
/*
 * run.c - one run of bench neighbor: the victim, the neighbour under one
 * configuration, the window (from the neighbour's start to the victim's
 * last transaction) and its figures, the run's result file.
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
int nb_one_run(struct env *env, int vmode, int kind, int config, unsigned round,
	       struct row *row)
{
	const struct opts *op = env->op;
	char run[1400], path[1600], data[1100], nbdir[1100];
	int ret = -1;
	snprintf(run, sizeof(run), "%s/%s-%s-%s-r%u", env->out,
		 nb_victim_names[vmode], nb_neighbor_names[kind],
		 nb_config_names[config], round + 1);
	snprintf(data, sizeof(data), "%s/tpcb", env->dir);
	snprintf(nbdir, sizeof(nbdir), "%s/nb", env->dir);
	if (mkdir(run, 0755) && errno != EEXIST) {
		cli_error("bench neighbor: mkdir '%s': %s", run,
			  strerror(errno));
		return -1;
	}
	nb_remove_tree(data);
	nb_remove_tree(nbdir);
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
				 "-h",	    nb_pg.sock, "-p",	    PG_PORT,
				 "-U",	    "postgres", "postgres", NULL};
		char *ck[] = {"psql",	  "-X", "-q",	      "-h",
			      nb_pg.sock, "-p", PG_PORT,      "-U",
			      "postgres", "-c", "CHECKPOINT", "postgres",
			      NULL};
		st = nb_pg_client(pinit, run, "init.log");
		if (!st && !nb_stop_sig)
			st = nb_pg_client(ck, run, "checkpoint.log");
	} else {
		st = child_run("/proc/self/exe", init, &io);
	}
	if (nb_stop_sig)
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
	if (nb_stop_sig)
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
		snprintf(logp, sizeof(logp), "--log-prefix=%s/txlog",
			 nb_pg.logs);
		char *pfixed[] = {
		    "pgbench",	"-h", nb_pg.sock, "-p", PG_PORT, "-U",
		    "postgres", "-c", clients,	  "-j", clients, "-T",
		    dur,	"-P", "1",	  "-l", logp};
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
	case C_EXEC_PACE:
	case C_EXEC_HINT_IDLE:
	case C_EXEC_SMALL:
		snprintf(stats, sizeof(stats), "--stats=%s/exec-stats", run);
		nargv[nn++] = "flushkit";
		nargv[nn++] = "exec";
		nargv[nn++] = stats;
		if (config == C_EXEC_IDLE)
			nargv[nn++] = "--ioprio=idle";
		if (config == C_EXEC_PACE)
			nargv[nn++] = "--pace=50";
		if (config == C_EXEC_HINT_IDLE)
			nargv[nn++] = "--hint-ioprio=idle";
		if (config == C_EXEC_SMALL)
			nargv[nn++] = "--small-budget=8M";
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
		snprintf(incg, sizeof(incg), "--in-cgroup=%s",
			 nb_cgroup_path());
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
			       json_object_new_string(nb_victim_names[vmode]));
	json_object_object_add(s, "neighbor",
			       json_object_new_string(nb_neighbor_names[kind]));
	json_object_object_add(s, "config",
			       json_object_new_string(nb_config_names[config]));
	json_object_object_add(s, "round", json_object_new_int(round + 1));
	json_object_object_add(s, "device",
			       json_object_new_string(op->device.name));
	json_object_object_add(s, "dir", json_object_new_string(env->dir));
	{
		/* the disk's I/O scheduler (--scheduler, else its own) */
		char sp[128], sn[32];
		snprintf(sp, sizeof(sp), "/sys/dev/block/%u:%u/queue/scheduler",
			 env->maj, env->min);
		if (!nb_sched_current(sp, sn, sizeof(sn)))
			json_object_object_add(s, "scheduler",
					       json_object_new_string(sn));
	}
	json_object_object_add(s, "clients",
			       json_object_new_int64(op->clients));
	json_object_object_add(s, "scale", json_object_new_int64(op->scale));
	json_object_object_add(s, "duration_s",
			       json_object_new_int64(op->duration_s));
	json_object_object_add(s, "neighbor_delay_s",
			       json_object_new_int64(op->delay_s));
	json_object_object_add(
	    s, "victim_program",
	    json_object_new_string(IS_PG(vmode) ? nb_pg.version
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
	double epoch0 = nb_now_epoch(), mono0 = nb_now_mono();
	results_monitor_start(rf, paths, 1, 1000);

	pid_t vpid = -1, npid = -1;
	struct child_opts vo = {.flags = CHILD_STDIN_NULL | CHILD_SIGDFL |
					 CHILD_SETPGID | CHILD_PDEATHSIG,
				.cwd = run,
				.out_path = "victim.out",
				.err_path = "victim.err"};
	double vstart = nb_now_epoch();
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
		if (nb_stop_sig) {
			ret = -EINTR;
			break;
		}
		double t = nb_now_mono() - mono0;
		if (isnan(nb0) && t >= (double)op->delay_s) {
			int ce = 0;
			if (config == C_STRICT)
				ce = nb_bdi_set(op->bdi_max_bytes);
			if (config == C_BLKIO)
				ce = nb_cgroup_make(env->maj, env->min,
						    op->blkio_bps);
			struct child_opts no = {
			    .flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
				     CHILD_SIGDFL | CHILD_SETPGID |
				     CHILD_PDEATHSIG | CHILD_EXEC_MSG,
			    .cwd = run,
			    .out_path = "neighbor.out"};
			double d0, w0;
			nb_meminfo(&d0, &w0);
			base_dw = d0 + w0;
			if (!ce)
				ce = child_start(prog, nargv, &no, &npid);
			nb0 = nb_now_epoch();
			nb0_mono = nb_now_mono();
			if (ce) {
				snprintf(err, sizeof(err),
					 "the neighbour could not start: %s",
					 strerror(-ce));
				nb_restore_all();
				nb1 = nb0;
				if (vpid < 0)
					break;
			}
		}
		if (!isnan(nb0) && (npid > 0 || vpid > 0)) {
			double d, w;
			nb_meminfo(&d, &w);
			if (d > peak_d)
				peak_d = d;
			if (w > peak_w)
				peak_w = w;
			/* written back: after its exit, the first sample
			 * back near the level at its start */
			if (!isnan(nb1) && isnan(drained) &&
			    d + w <= base_dw + DRAIN_SLACK_KB)
				drained = nb_now_epoch();
		}
		if (npid > 0) {
			int r = child_wait(npid, 1);
			if (r != -EAGAIN) {
				nst = r;
				npid = -1;
				nb1 = nb_now_epoch();
				(void)nb0_mono;
				nb_restore_all();
			}
		}
		if (vpid > 0) {
			int r = child_wait(vpid, 1);
			if (r != -EAGAIN) {
				vst = r;
				vpid = -1;
				v1 = nb_now_epoch();
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
			nb_sleep_s(0.2);
	}
	kill_group(npid);
	kill_group(vpid);
	nb_restore_all();
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
	e = IS_PG(vmode) ? nb_pg_move_logs(run) : 0;
	if (!e)
		e = nb_read_txlogs(run, &ls, logs, sizeof(logs));
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
		nb_pg_copy_progress(rf, path, vstart - epoch0);
	} else if (!nb_find_result(vres, path, sizeof(path)) &&
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
		qsort(wl, nw, sizeof(double), nb_cmp_double);
	row->tps = w1 > nb0 ? (double)nw / (w1 - nb0) : NAN;
	row->p50 = wl ? nb_pct(wl, nw, 0.5) : NAN;
	row->p99 = wl ? nb_pct(wl, nw, 0.99) : NAN;
	row->p999 = wl ? nb_pct(wl, nw, 0.999) : NAN;
	row->max = wl && nw ? wl[nw - 1] : NAN;
	/* One second is no stall ratio (its worst is its median). */
	struct results_stall sr = {.ratio = NAN};
	if (secs && nsec >= 2 && results_stall_ratio(secs, NULL, nsec, 0, &sr))
		sr.ratio = NAN;
	row->stall = sr.ratio;
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
	snprintf(what, sizeof(what), "%s (%s)", nb_neighbor_names[kind],
		 nb_config_names[config]);
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
	       nb_victim_names[vmode], nb_neighbor_names[kind],
	       nb_config_names[config], round + 1, row->tps, row->p50, row->p99,
	       row->p999, row->max, row->stall, row->nb_wall, drained_s,
	       row->dirty_mib, row->wb_mib, err[0] ? "  FAILED: " : "", err);
	fflush(stdout);
	if (env->tsv) {
		fprintf(env->tsv,
			"%s\t%s\t%s\t%u\t%.1f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t"
			"%.2f\t%.2f\t%.0f\t%.0f\t%s\n",
			nb_victim_names[vmode], nb_neighbor_names[kind],
			nb_config_names[config], round + 1, row->tps, row->p50,
			row->p99, row->p999, row->max, row->stall, row->nb_wall,
			row->nb_drain, row->dirty_mib, row->wb_mib,
			err[0] ? "failed" : "ok");
		fflush(env->tsv);
	}
	nb_remove_tree(nbdir);
	nb_remove_tree(data);
	return 0;
}
