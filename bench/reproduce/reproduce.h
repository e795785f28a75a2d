/* SPDX-License-Identifier: MIT */
/*
 * reproduce.h - private to bench/reproduce/: the context of a run, the
 * shared structures and the functions one file of "flushkit reproduce"
 * calls in another (run.c, table.c, peer-pg.c, 000.c ... 004.c,
 * cmd-reproduce.c).
 */
#ifndef FK_REPRODUCE_H
#define FK_REPRODUCE_H

#include "child.h"
#include "cli.h"
#include "disk.h"
#include "reader.h"
#include "results.h"

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

#define PG_PORT 54329 /* the PostgreSQL peer's port (socket name) */

struct vals {
	double v[MAX_VALS];
	size_t n;
};

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

/* Block-layer write counts of loop device minor @min. */
struct blk_counts {
	double writes, merges, kib;
};

struct table {
	FILE *md, *html;
	int rows, shown, with_effect;
};

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

/* run.c */
extern volatile sig_atomic_t stop, stop_sig;
extern volatile pid_t child_pgid;
void on_signal(int sig);
/* --progress (or stderr a terminal): run_flushkit says on stderr when
 * each step starts and how long it took. */
extern int reproduce_progress;
int run_flushkit(const char *log, const struct child_argv *a);
int run_args(struct ctx *c, const char *logname, struct child_argv *a);
void split_jsonl(const char *path, const char *log);
double now_s(void);
int mkdir_p1(const char *path);
int syncfs_path(const char *path);
void rm_tree(const char *path);
void blk_read(const struct disk *d, struct blk_counts *b);
void monitor_argv(struct child_argv *a, unsigned interval_ms, const char *path);

/* table.c: reading result files, the tables, the report */
void vals_add(struct vals *s, double v);
void collect_dir(const char *dir, struct collect *c);
void summary_vals(const char *dir, const char *key, struct vals *out);
int table_open_mode(struct ctx *c, struct table *t, const char *title,
		    const char *cmd_a, const char *cmd_b, const char *mode);
int table_open(struct ctx *c, struct table *t, const char *title,
	       const char *cmd_a, const char *cmd_b);
void table_head(struct table *t, const char *seed_a, const char *seed_b);
void table_end(struct table *t);
int table_row(struct table *t, const char *label, const char *seed_a,
	      const char *seed_b, char seed_dir, const struct vals *a,
	      const struct vals *b);
unsigned runs_for_effect(const struct vals *a, const struct vals *b,
			 double effect);
void table_note(struct table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void table_close_as(struct table *t, const char *who);
void table_close(struct table *t);
int make_report(struct ctx *c, const char *const *dirs, int nr);

/* peer-pg.c: the PostgreSQL peer */
int pg_available(char *why, size_t len);
int pg_exec(struct pg *p, struct child_argv *a, int as_pg, int stoppable,
	    const char *out, const char *err, char *cap, size_t caplen);
int pg_stop(struct pg *p);
int pg_release(struct pg *p);
void pg_stop_all(void);
int pg_cleanup_stale(void);
int pg_init(struct pg *p, struct ctx *c, const char *name, const char *data,
	    const char *logdir, const char *const *lines);
void pg_client_argv(const struct pg *p, struct child_argv *a, const char *prog);
int pg_sql(struct pg *p, const char *const *sql, char *cap, size_t caplen);
int pg_pgbench_init(struct pg *p, int scale);
int pg_stats(struct pg *p, char *buf, size_t len);
double wall_s(void);
void copy_tail(const char *from, off_t off, const char *to);

/* the experiments (000.c ... 004.c) */
int seed_000(struct ctx *c, struct disk *d);
int seed_001(struct ctx *c, struct disk *d);
int seed_002(struct ctx *c, struct disk *d);
int seed_003(struct ctx *c, struct disk *d);
int seed_004(struct ctx *c);

#endif
