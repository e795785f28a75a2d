/* SPDX-License-Identifier: MIT */
/*
 * neighbor.h - "flushkit bench neighbor"'s own header: the options, the
 * configurations, one run's figures, and the routines its files share.
 * The files, by concern (the benchmark itself: cmd.c's banner):
 *   cmd.c      the command: options, setup, the rounds, every exit path
 *   run.c      one run: victim, neighbour, the window and its figures
 *   table.c    the table over rounds and the ratios to plain
 *   config.c   the victims, neighbours and configurations; which cannot
 *              run here (find_skips)
 *   locks.c    one run per bdi (strict) and one per --dir
 *   pg.c       the PostgreSQL victim's cluster
 *   knobs.c    the bdi knobs and the blkio group, and their restore
 *   records.c  what this run changed and its record for a SIGKILL; the
 *              undo of what a killed run's record names
 *   measure.c  the stop flag, clocks, /proc/meminfo and sysfs reads, the
 *              disk of a path, latency logs
 * Calls go down this list, never up (t-layers.sh): cmd.c calls them
 * all, measure.c none of them; records.c holds the state of what the run
 * changed (bdi knobs, blkio group, cluster) and its record, which
 * knobs.c and pg.c update before each change.
 */
#ifndef FK_NEIGHBOR_H
#define FK_NEIGHBOR_H

#include "disk.h"
#include "results.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

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
	C_EXEC_PACE,
	C_EXEC_HINT_IDLE,
	C_EXEC_SMALL,
	NR_CONFIGS
};
/* the default: the configurations of the aims */
#define DEFAULT_CONFIGS                                                        \
	(1u << C_PLAIN | 1u << C_EXEC | 1u << C_NOCACHE | 1u << C_STRICT |     \
	 1u << C_BLKIO)

extern const char *const nb_victim_names[NR_VICTIMS];
#define IS_PG(v) ((v) == V_PG_RATE || (v) == V_PG_FULL)
#define IS_RATE(v) ((v) == V_RATE || (v) == V_PG_RATE)
#define PG_VICTIMS (1u << V_PG_RATE | 1u << V_PG_FULL)
extern const char *const nb_neighbor_names[NR_NEIGHBORS];
extern const char *const nb_config_names[NR_CONFIGS];

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
	const char *scheduler; /* --scheduler: NULL leaves the disk's */
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

struct lat_set {
	double *lat_ms, *end;
	size_t n, alloc;
};

/* config.c */
void nb_find_skips(struct env *env);

/* run.c */
int nb_one_run(struct env *env, int vmode, int kind, int config, unsigned round,
	       struct row *row);

/* table.c: the figures of every run and their table */
extern struct row nb_rows[NR_VICTIMS][NR_NEIGHBORS][NR_CONFIGS][MAX_ROUNDS];
void nb_print_table(FILE *f, const struct env *env);

/* pg.c */
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
struct nb_pg {
	pid_t pid; /* the postmaster, or -1 */
	int made;  /* the directories below exist */
	char data[1100], sock[64], logs[64];
	int setuid;
	uid_t uid;
	gid_t gid;
	char version[80];
};
extern struct nb_pg nb_pg; /* records.c: recorded while it exists */
const char *nb_pg_why(char *buf, size_t len);
int nb_pg_client(char **argv, const char *cwd, const char *out_path);
int nb_pg_stop(void);
int nb_pg_start(const char *dir, const char *out, uint64_t clients);
int nb_pg_move_logs(const char *run);
void nb_pg_copy_progress(struct result_file *rf, const char *path, double off);

/* knobs.c; the bdi of the file system under test and its saved knobs,
 * the blkio child group while it exists (defined in records.c, which
 * records them) */
extern char nb_bdi[128];
extern char nb_bdi_saved_strict[32], nb_bdi_saved_ratio[32];
extern const char *nb_bdi_ratio_knob;
extern int nb_bdi_changed;
extern char nb_cgroup[256];
/* --scheduler: the disk's queue/scheduler file while it is changed ("":
 * not changed) and the scheduler it had before */
extern char nb_sched_path[128], nb_sched_saved[32];
int nb_sched_name_ok(const char *name);
int nb_sched_current(const char *path, char *name, size_t len);
int nb_sched_set(unsigned maj, unsigned min, const char *name);
int nb_sched_restore(void);
int nb_read_small(const char *path, char *buf, size_t len);
int nb_write_small(const char *path, const char *val);
int nb_bdi_knob(const char *knob, char *path, size_t len);
int nb_bdi_set(uint64_t max_bytes);
const char *nb_cgroup_path(void);
int nb_cgroup_make(unsigned maj, unsigned min, uint64_t bps);
void nb_restore_all(void);
int nb_in_cgroup_exec(const char *dir, char **argv);

/* records.c: the record of what this run changed, for the next run if
 * this one is killed */
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
 * pg_data, pg_sock, pg_logs (the cluster's directories), sched (the
 * disk's queue/scheduler file) and sched_saved (its scheduler before).
 */
#define STATE_DIR "/run/flushkit-neighbor"
int nb_state_open(void);
int nb_state_save(void);
void nb_state_close(void);
int nb_state_cleanup_stale(void);

/* locks.c */
extern int nb_dir_lock_fd;
int nb_bdi_lock(void);
int nb_dir_lock(const char *dir);
void nb_dir_unlock(void);

/* measure.c: the stop signal caught (0: none), and the helpers */
extern volatile sig_atomic_t nb_stop_sig;
double nb_now_mono(void);
double nb_now_epoch(void);
void nb_sleep_s(double s);
void nb_meminfo(double *dirty_kb, double *wb_kb);
uint64_t nb_dirty_limit_bytes(void);
int nb_path_disk(const char *path, unsigned *maj, unsigned *min);
void nb_remove_tree(const char *path);
int nb_cmp_double(const void *a, const void *b);
double nb_pct(const double *v, size_t n, double q);
int nb_read_txlogs(const char *run, struct lat_set *s, char *names,
		   size_t names_len);
int nb_find_result(const char *dir, char *path, size_t len);

#endif
