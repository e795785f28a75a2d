/* SPDX-License-Identifier: MIT */
/*
 * fsmark.h - "flushkit bench fsmark"'s own header: the run (struct fsm),
 * its threads, and the routines its files share.  The files, by concern
 * (the benchmark itself: cmd.c's banner):
 *   cmd.c          the command: the loops, the totals, the devices' I/O
 *   options.c      fs_mark's options and --help
 *   thread.c       the methods (-S) and the threads that create, write
 *                  and sync the files
 *   setup.c        the directories, the buffers, the batches; the
 *                  devices under the directories (/sys/block/DEV/stat)
 *   table.c        fs_mark's table and --json
 *   result-file.c  the result file: settings, the progress thread's
 *                  lines, the summary
 */
#ifndef FK_FSMARK_H
#define FK_FSMARK_H

#include "results.h"

#include <flushkit.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum {
	M_NONE = 0,	    /* fs_mark -S 0 */
	M_FSYNC = 1,	    /* fsync before close */
	M_SYNC_FSYNC1 = 2,  /* sync(), then one fsync */
	M_POST_REVERSE = 3, /* fsync each file after the loop, reverse */
	M_SYNC_POST_REVERSE = 4,
	M_POST = 5, /* fsync every file after the loop */
	M_SYNC_POST = 6,
	M_BATCH = 7,   /* flushkit: batched fsync */
	M_TWOPASS = 8, /* flushkit: hints, then batched fsync */
	M_ASYNC = 9,   /* flushkit: asynchronous fsync (submit/reap) */
	M_LAST = M_ASYNC,
};

extern const char *const fsm_method_desc[];

extern const char *const fsm_method_name[];

enum { L_CREAT, L_WRITE, L_FSYNC, L_SYNC, L_CLOSE, L_UNLINK, NR_LAT };
extern const char *const fsm_lat_name[];

struct lat {
	uint64_t n, min_ns, max_ns, sum_ns;
};

/* Files completed in a progress interval (under fsm_thread.lock). */
struct interval {
	uint64_t cnt;
	double lat_sum, lat_sumsq, lat_max; /* microseconds */
};

struct fsm;

/* fs_mark 3.3's limits and defaults (fs_mark.h). */
#define FSM_MAX_THREADS 64
#define FSM_MAX_FILES 1000000
#define FSM_NAME_MAX 128	     /* FILENAME_SIZE */
#define FSM_MAX_IO_BUFFER (1u << 20) /* MAX_IO_BUFFER_SIZE */
#define FSM_SECS_PER_SUBDIR 180	     /* -D without -N: time hash */

struct fsm_thread {
	struct fsm *f;
	unsigned id;
	const char *dir;
	int dirfd;
	struct fk_fsync_batch *batch;
	char (*names)[FSM_NAME_MAX + 1];
	uint32_t *sub; /* each file's subdirectory (-D), else 0 */
	int *subfd;    /* -D: the subdirectories, opened; else NULL */
	uint32_t cur_sub, in_sub; /* -D: where the next file goes */
	uint64_t sub_since_s;	  /* -D without -N: when cur_sub began */
	int *fds;
	struct fk_fsync_req *reqs;
	size_t *free_reqs, nr_free_reqs; /* -S async: reqs[] not in use */
	int reap_failed;		 /* -S async: fk_fsync_reap failed */
	uint32_t rng;
	uint64_t *born_ns;   /* each file's create start */
	struct fk_hist hist; /* per-file latency, us, all loops */
	int hist_ok;
	pthread_mutex_t lock;
	struct interval iv; /* under lock */
	/* one loop */
	struct lat lat[NR_LAT];
	uint64_t syscall_ns; /* time in file-writing system calls */
	uint64_t start_ns, end_ns;
	uint64_t overhead_ns; /* elapsed - syscall_ns, before unlinks */
	unsigned created;
	unsigned errors;
	char first_error[256]; /* the thread's first error, as printed */
};

struct fsm {
	const char **dirs;
	size_t nr_dirs;
	unsigned threads, files, loops;
	uint64_t size, write_size;
	int keep, method, verbose, json;
	unsigned subdirs, per_subdir; /* -D, -N (0: none) */
	unsigned name_len, rand_len;  /* -p, -r */
	int fill;	      /* -F: loop until the file system is full */
	int full;	      /* __atomic: a thread met ENOSPC or EDQUOT */
	const char *log_name; /* -l: also append the table there */
	FILE *log;
	struct fk_fsync_batch_opts bopts;
	size_t fd_chunk; /* files a thread keeps open at once */
	char *buf;
	struct fsm_thread *th;
	const char *results_dir; /* NULL: no result file */
	struct result_file *rf;
	/* the progress thread (with a result file) */
	pthread_t prog_thread;
	pthread_mutex_t prog_lock;
	pthread_cond_t prog_cond;
	int prog_stop, prog_running;
	uint64_t prog_start_ns;
	uint32_t *per_sec; /* files completed in each full second */
	size_t nr_sec, alloc_sec;
};

struct dev_stat {
	dev_t dev;
	char name[128];
	int ok;
	char why[512];
	uint64_t writes0, sectors0, writes1, sectors1;
};

/* thread.c */
void fsm_lat_merge(struct lat *d, const struct lat *s);
void *fsm_thread_main(void *arg);

/* options.c */
void fsm_usage(FILE *fp);
int fsm_parse_opts(struct fsm *f, int argc, char **argv);

/* setup.c */
void fsm_dev_resolve(struct dev_stat *d);
int fsm_dev_read(struct dev_stat *d, uint64_t *writes, uint64_t *sectors);
int fsm_setup(struct fsm *f, const char **backend);
void fsm_release(struct fsm *f);
int fsm_space_for_loop(const struct fsm *f);

/* table.c */
void fsm_jint(json_object *o, const char *key, int64_t v);
void fsm_jdbl(json_object *o, const char *key, double v);
void fsm_jstr(json_object *o, const char *key, const char *v);
void fsm_emit_row(const struct fsm *f, unsigned use_pct, uint64_t count,
		  double fps, double secs, uint64_t overhead_ns,
		  const struct lat *lat, json_object *jloops);
void fsm_print_spread(const struct fsm *f, const double *fps, unsigned n);
void fsm_print_header(const struct fsm *f, int argc, char **argv,
		      const char *backend);

/* result-file.c */
void fsm_progress_stop(struct fsm *f);
int fsm_results_begin(struct fsm *f);
int fsm_results_end(struct fsm *f, const char *backend, uint64_t files,
		    double run_s, double wall_s, double user_s, double sys_s,
		    unsigned errors, const char *failure,
		    const double *loop_fps, unsigned loops_done);

#endif
