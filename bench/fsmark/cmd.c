// SPDX-License-Identifier: MIT
/*
 * cmd.c - "flushkit bench fsmark": fs_mark's small-file
 * create + write + fsync benchmark, plus batched fsync.
 *
 * Reproduces fs_mark 3.3 (Ric Wheeler's file-system benchmark): each of
 * -t threads creates -n files of -s bytes in the -d directory (thread i
 * in directory i % number-of-directories), written -w bytes per write(2),
 * made durable by the -S method (fs_mark's 0-6), -L times; one line of
 * fs_mark's table per loop (FSUse%, Count, Size, Files/sec, App
 * Overhead, and with -v min/avg/max microseconds of each system call).
 * flushkit adds two methods that use struct fk_fsync_batch:
 *   -S batch    write all files of a thread (descriptors kept open), then
 *               fsync them with --jobs in flight (--sync-io,
 *               --jobs, old name --queue-depth), then close;
 *   -S twopass  the same with a first pass of writeback hints
 *               (sync_file_range(SYNC_FILE_RANGE_WRITE)) through the batch.
 * Then wall time, user and system CPU time (getrusage) and the write
 * IOPS and MB/s of the devices under the directories from
 * /sys/block/DEV/stat.  --json prints the same as one JSON object.
 *
 * Each run also writes a result file (cli/results.h, docs/report.md)
 * into --results DIR (default results/; --no-results: none): settings,
 * environment, monitor samples of the disks under the directories, one
 * "progress" line per second (tps = files completed per second, latency
 * = a file's time from its create to its completion: closed and, by its
 * method, synced), and the summary.  A progress thread takes the
 * threads' interval counters (each under its thread's lock) every
 * second.
 *
 * All file I/O goes through the syscall table (cli_sys) so tests can
 * trace the order of writes and fsyncs and inject faults.  A failed
 * create, write, fsync or close is reported with its path and makes the
 * command exit 1; the other files still complete.
 *
 * Interface routine: cmd_bench_fsmark(argc, argv).  The files of the
 * command: fsmark.h.
 */
#include "cli-sys.h"
#include "cli.h"
#include "fsmark.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int cmd_bench_fsmark(int argc, char **argv)
{
	const char *dirs_buf[256];
	struct fsm f = {
	    .dirs = dirs_buf,
	    .threads = 1,
	    .files = 1000,
	    .loops = 1,
	    .size = 51200,
	    .write_size = 16384,
	    .method = M_FSYNC,
	    .name_len = 40,
	    .rand_len = 24,
	    .results_dir = "results",
	};
	fk_fsync_batch_opts_init(&f.bopts);
	if (argc > 257)
		return cli_usage_error("bench fsmark", "too many arguments");
	int r = fsm_parse_opts(&f, argc, argv);
	if (r > 0)
		fsm_usage(stdout);
	if (r)
		return r > 0 ? FK_EXIT_OK : FK_EXIT_USAGE;
	if (f.write_size > f.size && f.size)
		f.write_size = f.size;

	int status = FK_EXIT_OK;
	const char *backend = "-";
	json_object *jroot = NULL, *jloops = NULL;
	struct dev_stat devs[256];
	size_t nr_devs = 0;
	struct rusage ru0, ru1;
	uint64_t wall0 = 0, wall1 = 0, count = 0;
	double run_s = 0; /* the loops' seconds, as Files/sec counts */
	unsigned errors = 0;
	double *loop_fps = NULL;
	char failure[320] = ""; /* the first error of the run, as printed */

	if (fsm_setup(&f, &backend)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	if (f.log_name) {
		/* as fs_mark: appended to, so that runs accumulate */
		int lfd = open(f.log_name,
			       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		f.log = lfd >= 0 ? fdopen(lfd, "a") : NULL;
		if (!f.log) {
			cli_error("open '%s': %s", f.log_name, strerror(errno));
			if (lfd >= 0)
				close(lfd);
			status = FK_EXIT_FAILURE;
			goto out;
		}
	}
	for (size_t i = 0; i < f.nr_dirs; i++) {
		struct stat st;
		if (cli_sys.fstatat(AT_FDCWD, f.dirs[i], &st, 0))
			continue;
		size_t k;
		for (k = 0; k < nr_devs && devs[k].dev != st.st_dev; k++)
			;
		if (k < nr_devs)
			continue;
		memset(&devs[k], 0, sizeof(devs[k]));
		devs[k].dev = st.st_dev;
		fsm_dev_resolve(&devs[k]);
		nr_devs++;
	}
	if (f.json) {
		jroot = json_object_new_object();
		jloops = json_object_new_array();
		json_object_object_add(jroot, "loops", jloops);
	} else {
		fsm_print_header(&f, argc, argv, backend);
	}

	if (f.results_dir && fsm_results_begin(&f)) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	for (size_t k = 0; k < nr_devs; k++)
		if (devs[k].ok)
			fsm_dev_read(&devs[k], &devs[k].writes0,
				     &devs[k].sectors0);
	getrusage(RUSAGE_SELF, &ru0);
	wall0 = fk_now_ns();
	pthread_t *tids = calloc(f.threads, sizeof(*tids));
	if (!tids) {
		status = FK_EXIT_FAILURE;
		goto out;
	}
	loop_fps = calloc(f.fill ? 4096 : f.loops, sizeof(*loop_fps));
	unsigned loops_done = 0;
	if (!loop_fps) {
		free(tids);
		status = FK_EXIT_FAILURE;
		goto out;
	}
	for (unsigned loop = 0; (f.fill || loop < f.loops) && !errors; loop++) {
		unsigned started = 0;
		if (f.fill && (loop >= 4096 || !fsm_space_for_loop(&f)))
			break;
		for (unsigned i = 0; i < f.threads; i++) {
			struct fsm_thread *t = &f.th[i];
			memset(t->lat, 0, sizeof(t->lat));
			t->syscall_ns = 0;
			t->created = 0;
			if (pthread_create(&tids[i], NULL, fsm_thread_main,
					   t)) {
				cli_error("cannot start thread %u", i);
				if (!errors++)
					snprintf(failure, sizeof(failure),
						 "cannot start thread %u", i);
				break;
			}
			started++;
		}
		uint64_t first = UINT64_MAX, last = 0, overhead_ns = 0;
		unsigned created = 0;
		struct lat lat[NR_LAT];
		memset(lat, 0, sizeof(lat));
		for (unsigned i = 0; i < started; i++) {
			struct fsm_thread *t = &f.th[i];
			pthread_join(tids[i], NULL);
			if (t->start_ns < first)
				first = t->start_ns;
			if (t->end_ns > last)
				last = t->end_ns;
			overhead_ns += t->overhead_ns;
			created += t->created;
			if (t->errors && !failure[0])
				snprintf(failure, sizeof(failure), "%s",
					 t->first_error);
			errors += t->errors;
			for (int l = 0; l < NR_LAT; l++)
				fsm_lat_merge(&lat[l], &t->lat[l]);
		}
		count += created;
		double secs = last > first ? (double)(last - first) / 1e9 : 0;
		run_s += secs;
		double fps = secs > 0 ? created / secs : 0;
		unsigned use_pct = 0;
		struct statfs sf;
		if (cli_sys.fstatfs(f.th[0].dirfd, &sf) == 0 && sf.f_blocks)
			use_pct = (unsigned)((sf.f_blocks - sf.f_bavail) * 100 /
					     sf.f_blocks);
		fsm_emit_row(&f, use_pct, count, fps, secs, overhead_ns, lat,
			     jloops);
		loop_fps[loops_done++] = fps;
	}
	free(tids);
	if (!f.json)
		fsm_print_spread(&f, loop_fps, loops_done);
	wall1 = fk_now_ns();
	getrusage(RUSAGE_SELF, &ru1);
	for (size_t k = 0; k < nr_devs; k++)
		if (devs[k].ok)
			fsm_dev_read(&devs[k], &devs[k].writes1,
				     &devs[k].sectors1);

	double wall_s = (double)(wall1 - wall0) / 1e9;
	double user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	double sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	json_object *jdevs = f.json ? json_object_new_array() : NULL;
	if (!f.json)
		printf("\nWall time: %.3f s, user CPU: %.3f s, system CPU: "
		       "%.3f s\n",
		       wall_s, user_s, sys_s);
	for (size_t k = 0; k < nr_devs; k++) {
		struct dev_stat *d = &devs[k];
		uint64_t w = d->writes1 - d->writes0;
		double mb = (double)(d->sectors1 - d->sectors0) * 512 / 1e6;
		double iops = wall_s > 0 ? w / wall_s : 0;
		double mbs = wall_s > 0 ? mb / wall_s : 0;
		if (f.json) {
			json_object *o = json_object_new_object();
			char id[32];
			snprintf(id, sizeof(id), "%u:%u", major(d->dev),
				 minor(d->dev));
			fsm_jstr(o, "st_dev", id);
			if (d->ok) {
				fsm_jstr(o, "name", d->name);
				fsm_jint(o, "writes", (int64_t)w);
				fsm_jdbl(o, "write_iops", iops);
				fsm_jdbl(o, "write_mb_per_sec", mbs);
			} else {
				fsm_jstr(o, "unavailable", d->why);
			}
			json_object_array_add(jdevs, o);
		} else if (d->ok) {
			printf("Device %s: %llu write requests, %.1f write "
			       "IOPS, %.2f MB/s written (whole device)\n",
			       d->name, (unsigned long long)w, iops, mbs);
		} else {
			printf("Device statistics unavailable: %s\n", d->why);
		}
	}
	if (f.json) {
		fsm_jstr(jroot, "benchmark", "fsmark");
		fsm_jstr(jroot, "sync_method", fsm_method_name[f.method]);
		fsm_jstr(jroot, "sync_io", backend);
		fsm_jint(jroot, "sync_jobs", (int)f.bopts.queue_depth);
		/* the old name of sync_jobs, kept for scripts */
		fsm_jint(jroot, "queue_depth", (int)f.bopts.queue_depth);
		fsm_jint(jroot, "threads", (int)f.threads);
		fsm_jint(jroot, "files_per_thread", (int)f.files);
		fsm_jint(jroot, "size", (int64_t)f.size);
		fsm_jint(jroot, "write_size", (int64_t)f.write_size);
		json_object_object_add(jroot, "keep",
				       json_object_new_boolean(f.keep));
		fsm_jdbl(jroot, "wall_s", wall_s);
		fsm_jdbl(jroot, "user_s", user_s);
		fsm_jdbl(jroot, "sys_s", sys_s);
		json_object_object_add(jroot, "devices", jdevs);
		fsm_jint(jroot, "errors", (int)errors);
		if (loops_done > 1) {
			double sm = 0, sq = 0;
			for (unsigned i = 0; i < loops_done; i++) {
				sm += loop_fps[i];
				sq += loop_fps[i] * loop_fps[i];
			}
			double avg = sm / loops_done;
			double var =
			    (sq - loops_done * avg * avg) / (loops_done - 1);
			json_object_object_add(jroot, "files_per_sec_avg",
					       results_json_double(avg, 1));
			json_object_object_add(
			    jroot, "files_per_sec_stddev",
			    results_json_double(var > 0 ? sqrt(var) : 0, 1));
		}
		fsm_jstr(jroot, "status", errors ? "failed" : "ok");
		if (errors)
			fsm_jstr(jroot, "error", failure);
		results_json_print(jroot);
		json_object_put(jroot);
		jroot = NULL;
	}
	fflush(stdout);
	if (errors) {
		status = FK_EXIT_FAILURE;
		if (f.full)
			cli_error("the file system is full: stopped at the "
				  "first ENOSPC, as fs_mark");
		cli_error("Run was aborted after %u error%s (the first: %s); "
			  "the above results are incomplete.",
			  errors, errors == 1 ? "" : "s", failure);
	}
	if (f.rf && fsm_results_end(&f, backend, count, run_s, wall_s, user_s,
				    sys_s, errors, errors ? failure : NULL,
				    loop_fps, loops_done))
		status = FK_EXIT_FAILURE;
out:
	if (f.rf) {
		fsm_progress_stop(&f);
		results_close(f.rf);
	}
	if (jroot)
		json_object_put(jroot);
	fflush(stdout);
	if (f.log && fclose(f.log)) {
		cli_error("write '%s': %s", f.log_name, strerror(errno));
		status = FK_EXIT_FAILURE;
	}
	free(loop_fps);
	fsm_release(&f);
	return status;
}
