// SPDX-License-Identifier: MIT
/*
 * clients.c - bench tpcb's client threads (one per -c client, dealt out
 * to -j groups for the -l logs), their per-second commit counts and
 * interval counters (the -P lines and the result file's one-second
 * "progress" lines), and the run's totals (collect: percentiles, the
 * stall ratio of results_stall_ratio, its seconds marked with the
 * checkpoints that ran in them).
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

/* ---- the clients ---- */

/* Sleep until CLOCK_MONOTONIC @t ns (the clients' schedule under -R,
 * the main thread's -P and result intervals). */
void tpcb_sleep_until_ns(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull),
			      .tv_nsec = (long)(t % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

static int note_second(struct client *c, uint64_t end_ns)
{
	uint64_t start = c->run->start_ns;
	size_t sec =
	    end_ns > start ? (size_t)((end_ns - start) / 1000000000ull) : 0;
	if (sec >= c->alloc_sec) {
		size_t n = c->alloc_sec ? c->alloc_sec : 64;
		while (n <= sec)
			n *= 2;
		uint32_t *p = realloc(c->per_sec, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + c->alloc_sec, 0, (n - c->alloc_sec) * sizeof(*p));
		c->per_sec = p;
		c->alloc_sec = n;
	}
	c->per_sec[sec]++;
	if (sec + 1 > c->nr_sec)
		c->nr_sec = sec + 1;
	return 0;
}

/* Write the aggregate @a of a log file (pgbench 15's layout: interval
 * start, count, latency sum, sum of squares, min, max, the same four of
 * the schedule lag, skipped, retried, retries, serialization and
 * deadlock failures; microseconds). */
void tpcb_agg_print(FILE *f, const struct agg *a)
{
	fprintf(f, "%" PRId64 " %" PRIu64 " %.0f %.0f %.0f %.0f", a->start_s,
		a->cnt, a->sum, a->sum2, a->cnt ? a->min : 0,
		a->cnt ? a->max : 0);
	fprintf(f, " %.0f %.0f %.0f %.0f %" PRIu64 " 0 0 0 0\n", a->lag_sum,
		a->lag_sum2, a->cnt ? a->lag_min : 0, a->cnt ? a->lag_max : 0,
		a->skipped);
}

void tpcb_agg_reset(struct agg *a, int64_t start_s)
{
	memset(a, 0, sizeof(*a));
	a->start_s = start_s;
}

/* One transaction into the client's thread's log: a line (pgbench's
 * "client_id transaction_no time script_no time_epoch time_us
 * [schedule_lag]"), or into the current aggregate. */
static void log_txn(struct client *c, uint64_t no, int script, double lat_us,
		    int skipped, double lag_us)
{
	struct run *r = c->run;
	struct tgroup *g = c->grp;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&g->lock);
	if (r->agg_interval_s) {
		struct agg *a = &g->agg;
		while (a->start_s + (int64_t)r->agg_interval_s <=
		       (int64_t)ts.tv_sec) {
			tpcb_agg_print(g->log, a);
			tpcb_agg_reset(a,
				       a->start_s + (int64_t)r->agg_interval_s);
		}
		if (skipped) {
			a->skipped++;
		} else {
			if (!a->cnt || lat_us < a->min)
				a->min = lat_us;
			if (!a->cnt || lat_us > a->max)
				a->max = lat_us;
			if (!a->cnt || lag_us < a->lag_min)
				a->lag_min = lag_us;
			if (!a->cnt || lag_us > a->lag_max)
				a->lag_max = lag_us;
			a->cnt++;
			a->sum += lat_us;
			a->sum2 += lat_us * lat_us;
			a->lag_sum += lag_us;
			a->lag_sum2 += lag_us * lag_us;
		}
		pthread_mutex_unlock(&g->lock);
		return;
	}
	if (r->sample_rate > 0 &&
	    tpcb_rng_double(&g->sample_rng) > r->sample_rate) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	if (skipped)
		fprintf(g->log, "%d %" PRIu64 " skipped %d %lld %ld", c->id, no,
			script, (long long)ts.tv_sec, ts.tv_nsec / 1000);
	else
		fprintf(g->log, "%d %" PRIu64 " %.0f %d %lld %ld", c->id, no,
			lat_us, script, (long long)ts.tv_sec,
			ts.tv_nsec / 1000);
	if (r->rate > 0)
		fprintf(g->log, " %.0f", lag_us);
	fputc('\n', g->log);
	pthread_mutex_unlock(&g->lock);
}

/* pgbench's chooseScript: a weighted draw. */
static int choose_script(struct client *c)
{
	struct run *r = c->run;
	if (r->nr_scripts == 1)
		return 0;
	int64_t w = tpcb_rng_range(&c->rng, 0, (int64_t)r->total_weight - 1);
	int i = 0;
	do
		w -= (int64_t)r->scripts[i++].weight;
	while (w >= 0);
	return i - 1;
}

void *tpcb_client_main(void *arg)
{
	struct client *c = arg;
	struct run *r = c->run;
	struct fk_batch b;
	struct tpcb_txn x;
	uint64_t end_ns = r->duration_s
			      ? r->start_ns + r->duration_s * 1000000000ull
			      : UINT64_MAX;
	/* -R: mean microseconds between this client's transactions. */
	double throttle_us = r->rate > 0 ? 1e6 * r->nclients / r->rate : 0;
	double limit_us = r->latency_limit_ms * 1000.0;
	uint64_t sched_ns = r->start_ns;
	uint64_t done = 0; /* transactions run or skipped */

	fk_batch_init(&b);
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		if (r->nxacts && done >= r->nxacts)
			break;
		uint64_t t_start;
		double lag_us = 0;
		if (throttle_us > 0) {
			double wait =
			    -log(tpcb_rng_double(&c->rng)) * throttle_us;
			sched_ns += (uint64_t)(wait * 1000.0);
			if (sched_ns >= end_ns)
				break;
			uint64_t now = fk_now_ns();
			/* -T is over, though the schedule is not: the store
			 * fell behind it.  Stop, as pgbench does (its
			 * timer_exceeded); working off the backlog would
			 * run past -T, and skipping it would count
			 * transactions after the end. */
			if (now >= end_ns)
				break;
			/* pgbench: skip transactions already later than the
			 * latency limit, moving the schedule on. */
			if (limit_us > 0 &&
			    (double)(int64_t)(now - sched_ns) / 1000.0 >
				limit_us &&
			    now > sched_ns) {
				done++;
				c->skipped++;
				pthread_mutex_lock(&c->lock);
				c->iv[IV_PRINT].skipped++;
				c->iv[IV_RESULT].skipped++;
				pthread_mutex_unlock(&c->lock);
				if (c->grp)
					log_txn(c, done, choose_script(c), 0, 1,
						0);
				continue;
			}
			if (now < sched_ns)
				tpcb_sleep_until_ns(sched_ns);
			t_start = sched_ns;
			uint64_t actual = fk_now_ns();
			lag_us = (double)(actual - sched_ns) / 1000.0;
		} else {
			t_start = fk_now_ns();
			if (t_start >= end_ns)
				break;
		}
		int si = choose_script(c);
		struct script_stats *ss = &c->ss[si];
		x.txid = ((uint64_t)c->id << 40) | done;
		int ret = tpcb_script_run(r->store, &r->tables, &b,
					  r->scripts[si].id, &c->rng, &x,
					  r->report_steps ? ss->step_ns : NULL);
		uint64_t t_end = fk_now_ns();
		if (ret) {
			ss->failed++;
			if (x.step >= 0 && x.step < TPCB_MAX_STEPS)
				ss->step_failed[x.step]++;
			pthread_mutex_lock(&c->lock);
			for (int k = 0; k < NR_IV; k++)
				c->iv[k].failed++;
			pthread_mutex_unlock(&c->lock);
			c->error = ret;
			atomic_store(&r->stop, 1);
			break;
		}
		done++;
		double lat_us = (double)(t_end - t_start) / 1000.0;
		c->cnt++;
		ss->cnt++;
		ss->lat_sum += lat_us;
		ss->lat_sumsq += lat_us * lat_us;
		c->lat_sum += lat_us;
		c->lat_sumsq += lat_us * lat_us;
		c->lag_sum += lag_us;
		if (lag_us > c->lag_max)
			c->lag_max = lag_us;
		if (limit_us > 0 && lat_us > limit_us)
			c->late++;
		fk_hist_add(&c->hist, (uint64_t)(lat_us + 0.5));
		if (note_second(c, t_end)) {
			c->error = -ENOMEM;
			atomic_store(&r->stop, 1);
			break;
		}
		pthread_mutex_lock(&c->lock);
		for (int k = 0; k < NR_IV; k++) {
			struct interval *iv = &c->iv[k];
			iv->cnt++;
			iv->lat_sum += lat_us;
			iv->lat_sumsq += lat_us * lat_us;
			iv->lag_sum += lag_us;
			if (lat_us > iv->lat_max)
				iv->lat_max = lat_us;
		}
		pthread_mutex_unlock(&c->lock);
		if (c->grp)
			log_txn(c, done, si, lat_us, 0, lag_us);
	}
	c->end_ns = fk_now_ns();
	fk_batch_release(&b);
	atomic_fetch_add(&r->finished, 1);
	return NULL;
}

int tpcb_collect(struct run *r, struct results *res, uint64_t end_ns)
{
	struct fk_hist all;
	double lat_sum = 0, lat_sumsq = 0, lag_sum = 0;
	int ret = fk_hist_init(&all);
	if (ret)
		return ret;
	res->nr_series = 0;
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		res->cnt += c->cnt;
		res->skipped += c->skipped;
		res->late += c->late;
		res->failed += c->error ? 1 : 0;
		lat_sum += c->lat_sum;
		lat_sumsq += c->lat_sumsq;
		lag_sum += c->lag_sum;
		if (c->lag_max / 1000.0 > res->lag_max_ms)
			res->lag_max_ms = c->lag_max / 1000.0;
		fk_hist_merge(&all, &c->hist);
		if (c->nr_sec > res->nr_series)
			res->nr_series = c->nr_sec;
	}
	res->elapsed_s = (double)(end_ns - r->start_ns) / 1e9;
	if (res->cnt) {
		double n = (double)res->cnt;
		res->lat_avg_ms = lat_sum / n / 1000.0;
		double var = lat_sumsq / n - (lat_sum / n) * (lat_sum / n);
		res->lat_std_ms = var > 0 ? sqrt(var) / 1000.0 : 0;
		res->lag_avg_ms = lag_sum / n / 1000.0;
	}
	res->tps = res->elapsed_s > 0 ? (double)res->cnt / res->elapsed_s : 0;
	res->p50 = fk_hist_percentile(&all, 50);
	res->p90 = fk_hist_percentile(&all, 90);
	res->p99 = fk_hist_percentile(&all, 99);
	res->p999 = fk_hist_percentile(&all, 99.9);
	res->max = all.count ? all.max_us : 0;
	fk_hist_release(&all);

	/* The one-second series: every second the run covered. */
	size_t full = (size_t)res->elapsed_s;
	if (res->nr_series < full + 1)
		res->nr_series = full + (res->elapsed_s > (double)full);
	res->series =
	    calloc(res->nr_series ? res->nr_series : 1, sizeof(*res->series));
	if (!res->series)
		return -ENOMEM;
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		for (size_t s = 0; s < c->nr_sec; s++)
			res->series[s] += c->per_sec[s];
	}
	res->full_secs = full < res->nr_series ? full : res->nr_series;
	double *v = malloc((res->full_secs ? res->full_secs : 1) * sizeof(*v));
	unsigned char *ck = calloc(res->full_secs ? res->full_secs : 1, 1);
	int err = v && ck ? 0 : -ENOMEM;
	for (size_t i = 0; !err && i < res->full_secs; i++) {
		v[i] = res->series[i];
		uint64_t b = r->start_ns + i * 1000000000ull;
		ck[i] =
		    (unsigned char)tpcb_ckpt_during(r, b, b + 1000000000ull);
	}
	if (!err)
		err =
		    results_stall_ratio(v, ck, res->full_secs,
					RESULTS_STALL_WARMUP_RUN, &res->stall);
	free(v);
	free(ck);
	return err;
}

/*
 * Whether a checkpoint ran at some time in [@begin_ns, @end_ns): one
 * that completed during the run (its event's start and end), or the
 * one running now (fk_store_checkpoint_started_ns), which has run from
 * its start until now.
 */
int tpcb_ckpt_during(struct run *r, uint64_t begin_ns, uint64_t end_ns)
{
	uint64_t running = fk_store_checkpoint_started_ns(r->store);
	int in = running && running < end_ns;
	pthread_mutex_lock(&r->ckpt_lock);
	for (size_t i = 0; !in && i < r->nr_ckpts; i++) {
		const struct fk_checkpoint_info *ci = &r->ckpts[i].ci;
		in = ci->start_ns < end_ns && ci->end_ns > begin_ns;
	}
	pthread_mutex_unlock(&r->ckpt_lock);
	return in;
}

/* Take (and zero) the clients' interval counters @k, summed. */
static void take_interval(struct run *r, int k, struct interval *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < r->nclients; i++) {
		struct client *c = &r->clients[i];
		pthread_mutex_lock(&c->lock);
		struct interval *iv = &c->iv[k];
		sum->cnt += iv->cnt;
		sum->skipped += iv->skipped;
		sum->failed += iv->failed;
		sum->lat_sum += iv->lat_sum;
		sum->lat_sumsq += iv->lat_sumsq;
		sum->lag_sum += iv->lag_sum;
		if (iv->lat_max > sum->lat_max)
			sum->lat_max = iv->lat_max;
		memset(iv, 0, sizeof(*iv));
		pthread_mutex_unlock(&c->lock);
	}
}

/* Mean and standard deviation of an interval's latencies, us. */
static void interval_lat(const struct interval *iv, double *avg, double *sd)
{
	double n = (double)iv->cnt;
	double lat = n ? iv->lat_sum / n : 0;
	double var = n ? iv->lat_sumsq / n - lat * lat : 0;
	*avg = lat;
	*sd = var > 0 ? sqrt(var) : 0;
}

/* A "progress" line of the result file for the interval ending at
 * @end_ns (monotonic) that began at @begin_ns. */
void tpcb_result_interval(struct run *r, uint64_t begin_ns, uint64_t end_ns)
{
	struct interval sum;
	double lat, sd, len_s = (double)(end_ns - begin_ns) / 1e9;
	take_interval(r, IV_RESULT, &sum);
	interval_lat(&sum, &lat, &sd);
	/* The fsync request queue's fill at the interval's end, and the
	 * backend fsyncs so far: how full the queue runs, and when. */
	struct fk_fsyncq_stats q;
	struct fk_store_stats st;
	fk_store_get_fsyncq_stats(r->store, &q);
	fk_store_get_stats(r->store, &st);
	struct json_object *x = json_object_new_object();
	json_object_object_add(x, "fsyncq_queued",
			       json_object_new_int64((int64_t)q.queued));
	json_object_object_add(
	    x, "fsyncq_capacity",
	    json_object_new_int64((int64_t)(r->opts.fsyncq_capacity
						? r->opts.fsyncq_capacity
						: r->nbuffers)));
	json_object_object_add(
	    x, "checkpoint",
	    json_object_new_boolean(tpcb_ckpt_during(r, begin_ns, end_ns)));
	json_object_object_add(
	    x, "backend_fsyncs",
	    json_object_new_int64(
		(int64_t)(st.backend_fsyncs - r->backend_fsyncs0)));
	results_progress_ex(r->rf, results_mono_s(r->rf, end_ns),
			    len_s > 0 ? (double)sum.cnt / len_s : 0,
			    lat / 1000.0, sd / 1000.0,
			    sum.cnt ? sum.lat_max / 1000.0 : 0, x);
}

void tpcb_progress_report(struct run *r, double at_s, double interval_s)
{
	struct interval sum;
	double lat, sd;
	take_interval(r, IV_PRINT, &sum);
	interval_lat(&sum, &lat, &sd);
	double n = (double)sum.cnt;
	char line[256], when[64];
	if (r->progress_timestamp) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(when, sizeof(when), "%.3f",
			 (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	} else {
		snprintf(when, sizeof(when), "%.1f", at_s);
	}
	int len = snprintf(line, sizeof(line),
			   "progress: %s s, %.1f tps, lat %.3f ms stddev %.3f, "
			   "%" PRIu64 " failed",
			   when, n / interval_s, lat / 1000.0, sd / 1000.0,
			   sum.failed);
	if (r->rate > 0) {
		len +=
		    snprintf(line + len, sizeof(line) - (size_t)len,
			     ", lag %.3f ms", n ? sum.lag_sum / n / 1000.0 : 0);
		if (r->latency_limit_ms > 0)
			snprintf(line + len, sizeof(line) - (size_t)len,
				 ", %" PRIu64 " skipped", sum.skipped);
	}
	fprintf(stderr, "%s\n", line);
}
