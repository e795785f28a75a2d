// SPDX-License-Identifier: MIT
/*
 * test-monitor-results.c - result files (cli/results.h): a benchmark's
 * lines and the sampler thread's "monitor" lines land whole, one JSON
 * object per line, with the documented fields; the file name has the
 * documented shape and is never reused; t_s follows results_reset_clock;
 * and "flushkit report" turns the file into a page (when gnuplot is
 * installed).
 */
#include "cli.h"
#include "fktest.h"
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int has(struct json_object *o, const char *key)
{
	return json_object_object_get_ex(o, key, NULL);
}

int main(void)
{
	const char *t = fkt_tmpdir();
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/results", t);
	const char *paths[] = {t};

	struct result_file *rf, *rf2;
	CHECK_EQ(results_open(dir, "tpcb", &rf), 0);
	CHECK_EQ(results_open(dir, "tpcb", &rf2), 0); /* same second */
	CHECK(strcmp(results_path(rf), results_path(rf2)) != 0);
	CHECK_EQ(results_close(rf2), 0);

	/* DIR/tpcb-YYYYMMDD-HHMMSS-PID.jsonl */
	regex_t re;
	char pat[PATH_MAX + 64];
	snprintf(pat, sizeof(pat), "^%s/tpcb-[0-9]{8}-[0-9]{6}-%ld\\.jsonl$",
		 dir, (long)getpid());
	CHECK_EQ(regcomp(&re, pat, REG_EXTENDED | REG_NOSUB), 0);
	CHECK_EQ(regexec(&re, results_path(rf), 0, NULL, 0), 0);
	regfree(&re);
	struct stat st;
	CHECK_EQ(stat(results_path(rf), &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0644);

	struct json_object *set = json_object_new_object();
	json_object_object_add(set, "flush", json_object_new_string("smooth"));
	json_object_object_add(set, "clients", json_object_new_int(8));
	CHECK_EQ(results_write(rf, "settings", set), 0);
	CHECK_EQ(results_env(rf, paths, 1), 0);
	sleep_ms(50);
	results_reset_clock(rf);
	CHECK(results_elapsed_s(rf) < 1.0);
	CHECK_EQ(results_monitor_start(rf, paths, 1, 50), -EINVAL);
	CHECK_EQ(results_monitor_start(rf, paths, 1, 100), 0);
	CHECK_EQ(results_monitor_start(rf, paths, 1, 100), -EBUSY);
	for (int i = 1; i <= 3; i++) {
		sleep_ms(120);
		CHECK_EQ(results_progress(rf, results_elapsed_s(rf), 1000.0 + i,
					  2.5, 0.5, 9.0),
			 0);
	}
	struct fk_checkpoint_info ci = {
	    .reason = "time",
	    .start_ns = 0,
	    .end_ns = 0,
	    .buffers_written = 1234,
	    .write_ms = 1500,
	    .sync_ms = 250,
	    .total_ms = 1750,
	    .files_synced = 7,
	    .longest_sync_ms = 90,
	};
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ci.end_ns =
	    (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	ci.start_ns = ci.end_ns - 1750000000ull;
	CHECK_EQ(results_checkpoint(rf, &ci), 0);
	results_monitor_stop(rf);
	results_monitor_stop(rf); /* idempotent */
	struct json_object *sum = json_object_new_object();
	json_object_object_add(sum, "tps", json_object_new_double(1002.0));
	CHECK_EQ(results_write(rf, "summary", sum), 0);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", results_path(rf));
	CHECK_EQ(results_close(rf), 0);

	/* read it back */
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return fkt_done();
	char *line = NULL;
	size_t cap = 0;
	int n_settings = 0, n_env = 0, n_mon = 0, n_prog = 0, n_ck = 0,
	    n_sum = 0, n_clock = 0, bad = 0;
	double last_mon_t = -1e9;
	while (getline(&line, &cap, f) > 0) {
		struct json_object *o = json_tokener_parse(line);
		if (!o) {
			bad++;
			fprintf(stderr, "unparsable line: %s", line);
			continue;
		}
		struct json_object *ty;
		CHECK(json_object_object_get_ex(o, "type", &ty));
		const char *type = json_object_get_string(ty);
		if (!strcmp(type, "settings")) {
			n_settings++;
			CHECK(has(o, "flush") && has(o, "clients"));
			CHECK_EQ(n_env + n_mon + n_prog, 0);
		} else if (!strcmp(type, "env")) {
			n_env++;
			struct json_object *p, *p0;
			CHECK(has(o, "kernel") && has(o, "sysctl"));
			CHECK(json_object_object_get_ex(o, "paths", &p));
			p0 = json_object_array_get_idx(p, 0);
			CHECK(p0 && has(p0, "fs_type") &&
			      has(p0, "mount_options") && has(p0, "devices"));
		} else if (!strcmp(type, "monitor")) {
			n_mon++;
			CHECK(has(o, "t_s") && has(o, "interval_s") &&
			      has(o, "dirty_kb") && has(o, "writeback_kb"));
			struct json_object *v;
			json_object_object_get_ex(o, "t_s", &v);
			double ts = json_object_get_double(v);
			CHECK(ts > last_mon_t);
			CHECK(ts > -0.5 && ts < 30);
			last_mon_t = ts;
			if (has(o, "dev"))
				CHECK(has(o, "write_ios") &&
				      has(o, "write_kb") && has(o, "devices"));
		} else if (!strcmp(type, "progress")) {
			n_prog++;
			CHECK(has(o, "t_s") && has(o, "tps") &&
			      has(o, "lat_avg_ms") && has(o, "lat_max_ms"));
		} else if (!strcmp(type, "checkpoint")) {
			n_ck++;
			struct json_object *v;
			CHECK(json_object_object_get_ex(o, "total_s", &v) &&
			      json_object_get_double(v) == 1.75);
			CHECK(json_object_object_get_ex(o, "buffers", &v) &&
			      json_object_get_int64(v) == 1234);
			double s0 = 0, s1 = 0;
			if (json_object_object_get_ex(o, "start_s", &v))
				s0 = json_object_get_double(v);
			if (json_object_object_get_ex(o, "end_s", &v))
				s1 = json_object_get_double(v);
			CHECK(s1 - s0 > 1.749 && s1 - s0 < 1.751);
			CHECK(s1 > 0.3 && s1 < 30); /* after the reset */
		} else if (!strcmp(type, "summary")) {
			n_sum++;
		} else if (!strcmp(type, "clock")) {
			n_clock++;
			CHECK(has(o, "epoch_s"));
		}
		json_object_put(o);
	}
	free(line);
	fclose(f);
	CHECK_EQ(bad, 0);
	CHECK_EQ(n_settings, 1);
	CHECK_EQ(n_env, 1);
	CHECK_EQ(n_clock, 2); /* at open and at the reset */
	CHECK(n_mon >= 3);    /* first, every 100 ms, last */
	CHECK_EQ(n_prog, 3);
	CHECK_EQ(n_ck, 1);
	CHECK_EQ(n_sum, 1);

	/* results_open on a path that is a file fails cleanly */
	char file[PATH_MAX + 8];
	snprintf(file, sizeof(file), "%s/plain", t);
	CHECK_EQ(fkt_write_file(file, 10, 1), 0);
	CHECK(results_open(file, "x", &rf) < 0);

	/* the report reads it */
	if (fkt_sh("command -v gnuplot >/dev/null") == 0) {
		char out[PATH_MAX + 8], html[PATH_MAX + 32];
		snprintf(out, sizeof(out), "%s/rep", t);
		char *argv[] = {"report", path, "-o", out, NULL};
		CHECK_EQ(cmd_report(4, argv), 0);
		snprintf(html, sizeof(html), "%s/index.html", out);
		char *h = fkt_read_file(html, NULL);
		CHECK(h && strstr(h, "flush=smooth") && strstr(h, "tps.png") &&
		      strstr(h, "dirty.png"));
		free(h);
	}
	return fkt_done();
}
