// SPDX-License-Identifier: MIT
/*
 * fktorture.c - the crash torture harness (see fktorture.h): TPC-B in a
 * child process, one fault per trial (kill -9, power cut, or a crash in
 * the middle of recovery), recovery and verification in another child,
 * the database kept across trials.
 *
 * Process structure of a trial (the parent never opens the store except
 * to make it afresh, so it survives any crash of the store):
 *   workload child  opens the store, runs TPC-B from NCLIENTS threads,
 *                   writes each acknowledged commit (struct ack) to a
 *                   pipe; killed by the parent.
 *   interrupt child (recovery faults) opens the store with the syscall
 *                   table hooked: at the N-th state-changing call it
 *                   reports where it is (struct irq_msg) and kills
 *                   itself (after a goingdown for a power cut).
 *   verify child    opens the store (recovery), checks every
 *                   acknowledgement and the TPC-B sums, exits 0 or 1.
 */
#include "fktorture.h"
#include "fkcut.h"
#include "fkloop.h"
#include "fktest.h"
#include "sys.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NCLIENTS 4

/* An acknowledged commit, as the workload child writes it to the pipe
 * (smaller than PIPE_BUF: written whole or not at all). */
struct ack {
	uint64_t txid;
	int64_t aid, delta;
	uint64_t hrow;
};

/* What an interrupt child reports before it dies. */
enum { IRQ_CALL = 1, IRQ_OPENED = 2, IRQ_OPEN_FAILED = 3 };
enum { PHASE_REPLAY = 0, PHASE_END = 1 };
struct irq_msg {
	uint32_t kind;		 /* IRQ_* */
	uint32_t phase;		 /* PHASE_*, for IRQ_CALL */
	uint64_t calls;		 /* calls counted so far */
	uint64_t calls_replay;	 /* calls before the cut (IRQ_OPENED) */
	uint64_t calls_end_sync; /* non-write calls from the cut on */
	uint64_t elapsed_us;	 /* since the open began */
	int32_t err;		 /* IRQ_OPEN_FAILED */
	char what[68];		 /* "pwrite wal/0000000000000003" */
};

/* ---- state of a run ---- */

static const struct fkt_torture_opts *O;
static struct fkt_torture_result *R;
static struct fkt_fs fs;
static int have_fs;
static char store_dir[PATH_MAX];
static struct tpcb_rng rng; /* the parent's choices */
static unsigned trial_no;   /* 1-based, for messages */
static uint64_t txid_epoch; /* distinct txids per child */
static struct ack *acks;    /* since the database was made */
static size_t nr_acks, alloc_acks;
static volatile sig_atomic_t interrupted;
/* Size of a whole recovery, learnt from reopens that finished: calls
 * before the cut (the replay), calls from the cut on (the cut and the
 * end-of-recovery checkpoint), milliseconds. */
static uint64_t est_replay_calls = 1000, est_end_calls = 200;
static uint64_t est_end_sync_calls = 30; /* without the writes */
static uint64_t est_open_ms = 150;

static uint64_t now_ms(void)
{
	return fk_now_ns() / 1000000u;
}

static uint64_t rnd(uint64_t n)
{
	return n ? tpcb_rng_next(&rng) % n : 0;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr,
		"FAIL seed %llu trial %u (%s): ", (unsigned long long)O->seed,
		trial_no, fkt_torture_fault_name(O->fault));
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void store_opts(struct fk_store_opts *so, int long_wal)
{
	fk_store_opts_init(so);
	so->create_mode = FK_STORE_CREATE_IF_MISSING;
	int naive = O->preset == FKT_PRESET_NAIVE ||
		    (O->preset == FKT_PRESET_BOTH && trial_no % 2);
	fk_store_opts_preset(so, naive ? "naive" : "smooth");
	so->wal_compression = O->wal_compression;
	so->shared_buffers_bytes = 1u << 20; /* backends evict */
	so->segment_bytes = 1u << 20;
	so->wal_segment_bytes = 1u << 20;
	if (long_wal) {
		/* No checkpoint during the run: recovery replays all of it. */
		so->max_wal_size_bytes = 256u << 20;
		so->checkpoint_timeout_ms = 3600 * 1000;
	} else {
		so->max_wal_size_bytes = 8u << 20;
		so->checkpoint_timeout_ms = 200;
	}
}

static int add_ack(const struct ack *a)
{
	if (nr_acks == alloc_acks) {
		size_t n = alloc_acks ? 2 * alloc_acks : 65536;
		struct ack *p = realloc(acks, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		acks = p;
		alloc_acks = n;
	}
	acks[nr_acks++] = *a;
	return 0;
}

/* ---- the workload child ---- */

struct client {
	int id, fd;
	uint64_t epoch;
	struct fk_store *s;
	const struct tpcb_tables *t;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct tpcb_rng r;
	struct fk_batch b;
	struct tpcb_txn x;

	tpcb_rng_seed(&r, O->seed ^ (c->epoch * 0x9E3779B97F4A7C15ull) ^
			      (uint64_t)c->id);
	fk_batch_init(&b);
	for (uint64_t seq = 0;; seq++) {
		tpcb_txn_draw(c->t, &r, &x);
		x.txid = (c->epoch << 40) | ((uint64_t)c->id << 32) | seq;
		int ret = tpcb_txn_commit(c->s, c->t, &b, &x);
		if (ret) {
			/* Expected after a power cut; the parent decides. */
			if (O->verbose)
				fprintf(stderr, "workload: commit: %s\n",
					fk_strerror(ret));
			_exit(3);
		}
		struct ack a = {.txid = x.txid,
				.aid = x.aid,
				.delta = x.delta,
				.hrow = x.hrow};
		if (write(c->fd, &a, sizeof(a)) != (ssize_t)sizeof(a))
			_exit(4);
	}
	return NULL;
}

/* ---- cut points of the workload child (cut_disk) ---- */

static int wl_point;	  /* FKT_POINT_*; TIMED: the parent cuts */
static uint64_t wl_at;	  /* cut at the wl_at-th matching call */
static uint64_t wl_count; /* matching calls so far */
static struct fk_sys_ops wl_real;

static const char *fd_name(int fd, char *buf, size_t len);

/* After a call of @op on @fd returned 0: cut if it is the chosen one. */
static void wl_after(int point, const char *op, int fd, const char *path)
{
	char name[PATH_MAX];
	if (wl_point != point)
		return;
	if (point == FKT_POINT_CHECKPOINT &&
	    !strncmp(fd_name(fd, name, sizeof(name)), "wal", 3))
		return; /* a WAL fsync: not the checkpoint's */
	if (__atomic_add_fetch(&wl_count, 1, __ATOMIC_SEQ_CST) != wl_at)
		return;
	printf("trial %u: cut after %s %s%s%s (#%llu)\n", trial_no, op,
	       fd_name(fd, name, sizeof(name)), path ? "/" : "",
	       path ? path : "", (unsigned long long)wl_at);
	fkt_fs_goingdown(&fs, FKT_GOINGDOWN_NOLOGFLUSH);
}

static int w_fsync(int fd)
{
	int r = wl_real.fsync(fd);
	if (!r) {
		wl_after(FKT_POINT_FSYNC, "fsync", fd, NULL);
		wl_after(FKT_POINT_CHECKPOINT, "fsync", fd, NULL);
	}
	return r;
}

static int w_fdatasync(int fd)
{
	int r = wl_real.fdatasync(fd);
	if (!r) {
		wl_after(FKT_POINT_FSYNC, "fdatasync", fd, NULL);
		wl_after(FKT_POINT_CHECKPOINT, "fdatasync", fd, NULL);
	}
	return r;
}

static int w_renameat(int ofd, const char *op, int nfd, const char *np)
{
	int r = wl_real.renameat(ofd, op, nfd, np);
	if (!r)
		wl_after(FKT_POINT_RENAME, "renameat", nfd, np);
	return r;
}

static void workload_main(int fd, int long_wal)
{
	struct fk_store_opts so;
	struct fk_store *s;
	struct tpcb_tables t;
	struct client cl[NCLIENTS];
	pthread_t th[NCLIENTS];

	if (wl_point != FKT_POINT_TIMED && wl_point != FKT_POINT_FLUSH) {
		wl_real = fk_sys;
		fk_sys.fsync = w_fsync;
		fk_sys.fdatasync = w_fdatasync;
		fk_sys.renameat = w_renameat;
	}
	store_opts(&so, long_wal);
	int ret = fk_store_open(store_dir, &so, &s);
	if (ret) {
		fprintf(stderr, "workload: open: %s\n", fk_strerror(ret));
		_exit(2);
	}
	if ((ret = tpcb_open(s, &t))) {
		fprintf(stderr, "workload: tables: %s\n", fk_strerror(ret));
		_exit(2);
	}
	for (int i = 0; i < NCLIENTS; i++) {
		cl[i] = (struct client){
		    .id = i, .fd = fd, .epoch = txid_epoch, .s = s, .t = &t};
		if (pthread_create(&th[i], NULL, client_main, &cl[i]))
			_exit(2);
	}
	for (;;)
		pause();
}

/* ---- acknowledgements from the pipe ---- */

static unsigned char ackbuf[sizeof(struct ack) * 256];
static size_t ackbuf_have;

/* Read acknowledgements until @deadline_ms (0: until EOF) or until
 * @stop_after were read (0: no limit).  Returns how many were read. */
static size_t read_acks(int fd, uint64_t deadline_ms, size_t stop_after)
{
	size_t got = 0;
	for (;;) {
		int timeout = -1;
		if (deadline_ms) {
			uint64_t now = now_ms();
			if (now >= deadline_ms)
				return got;
			timeout = (int)(deadline_ms - now);
		}
		if (interrupted && deadline_ms)
			return got;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		ssize_t r = read(fd, ackbuf + ackbuf_have,
				 sizeof(ackbuf) - ackbuf_have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return got; /* EOF: the child is gone */
		ackbuf_have += (size_t)r;
		size_t whole = ackbuf_have / sizeof(struct ack);
		for (size_t i = 0; i < whole; i++) {
			struct ack a;
			memcpy(&a, ackbuf + i * sizeof(a), sizeof(a));
			if (add_ack(&a)) {
				fprintf(stderr, "torture: out of memory\n");
				exit(1);
			}
			got++;
		}
		memmove(ackbuf, ackbuf + whole * sizeof(struct ack),
			ackbuf_have - whole * sizeof(struct ack));
		ackbuf_have -= whole * sizeof(struct ack);
		if (stop_after && got >= stop_after)
			return got;
	}
}

/* ---- processes and the file system ---- */

static pid_t spawn(int *rfd, void (*fn)(int fd, int arg), int arg)
{
	int p[2];
	if (pipe(p)) {
		perror("torture: pipe");
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		perror("torture: fork");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		fn(p[1], arg);
		_exit(0);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

static int reap(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static const char *status_str(int status)
{
	static char buf[64];
	if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "killed by signal %d",
			 WTERMSIG(status));
	else
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	return buf;
}

static int cut_by_child; /* the last cut_power found the disk cut */
static size_t cut_acks;	 /* commits acknowledged by the trial's cut
			  * workload */

/* The power cut's first half: the file system drops everything not yet
 * durable, while the store's processes still run. */
static int cut_power(void)
{
	int r = fkt_fs_goingdown(&fs, FKT_GOINGDOWN_NOLOGFLUSH);
	/* xfs says EIO if it is shut down already (by an interrupt child
	 * that cut the power itself just before our timer fired); a lab
	 * disk says 1 (a child cut it: at its chosen point). */
	if (r == -EIO)
		r = 0;
	if (r == 1) {
		cut_by_child = 1;
		r = 0;
	}
	if (r)
		fprintf(stderr, "torture: FS_IOC_GOINGDOWN: %s\n",
			strerror(-r));
	return r;
}

/* Its second half, once every process using the file system is gone:
 * unmount, mount again (journal replay). */
static int restore_power(void)
{
	if (fkt_fs_umount(&fs) || fkt_fs_mount(&fs))
		return -1;
	return 0;
}

static int is_powercut(void)
{
	return O->fault == FKT_FAULT_POWERCUT ||
	       O->fault == FKT_FAULT_RECOVERY_POWERCUT;
}

/* ---- a fresh database ---- */

static int make_database(void)
{
	struct fk_store_opts so;
	struct fk_store *s;
	struct tpcb_tables t;

	int r = fkt_rm_rf(store_dir);
	if (r && r != -ENOENT) {
		fprintf(stderr, "torture: remove %s: %s\n", store_dir,
			strerror(-r));
		return -1;
	}
	store_opts(&so, 0);
	r = fk_store_open(store_dir, &so, &s);
	if (r) {
		fprintf(stderr, "torture: create %s: %s\n", store_dir,
			fk_strerror(r));
		return -1;
	}
	r = tpcb_create(s, 1, &t, NULL, NULL);
	int rc = fk_store_close(s);
	if (r || rc) {
		fprintf(stderr, "torture: load: %s\n", fk_strerror(r ? r : rc));
		return -1;
	}
	nr_acks = 0;
	return 0;
}

/* ---- the verify child ---- */

struct hist_row {
	uint64_t txid;
	int64_t aid, delta;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int sum_rows(struct fk_store *s, uint32_t table, uint64_t rows,
		    int64_t *sum)
{
	unsigned char row[TPCB_ROW_BYTES];
	int64_t total = 0;
	for (uint64_t i = 0; i < rows; i++) {
		int r = fk_store_read(s, table, i, row);
		if (r)
			return r;
		total += tpcb_get_i64(row + TPCB_OFF_BALANCE);
	}
	*sum = total;
	return 0;
}

/* Exit status: 0 verified, 1 a check failed. */
static void verify_main(int fd, int close_it)
{
	struct fk_store_opts so;
	struct fk_store *s;
	struct fk_store_stats st;
	struct tpcb_tables t;
	unsigned bad = 0;

	(void)fd;
	store_opts(&so, 0);
	int r = fk_store_open(store_dir, &so, &s);
	if (r) {
		fail("reopen (recovery): %s", fk_strerror(r));
		_exit(1);
	}
	fk_store_get_stats(s, &st);
	if ((r = tpcb_open(s, &t)) || t.scale != 1) {
		fail("tables after recovery: %s, scale %llu", fk_strerror(r),
		     (unsigned long long)t.scale);
		_exit(1);
	}

	/* Every history row. */
	uint64_t hrows;
	fk_store_table_rows(s, t.history, &hrows);
	struct hist_row *h = malloc((hrows + 1) * sizeof(*h));
	uint64_t *txids = malloc((hrows + 1) * sizeof(*txids));
	unsigned char *seen = calloc(hrows + 1, 1);
	if (!h || !txids || !seen) {
		fail("out of memory for %llu history rows",
		     (unsigned long long)hrows);
		_exit(1);
	}
	int64_t hsum = 0;
	for (uint64_t i = 0; i < hrows; i++) {
		struct tpcb_txn x;
		r = tpcb_history_read(s, &t, i, &x);
		if (r) {
			fail("history row %llu: %s", (unsigned long long)i,
			     fk_strerror(r));
			_exit(1);
		}
		h[i] = (struct hist_row){x.txid, x.aid, x.delta};
		txids[i] = x.txid;
		hsum += x.delta;
	}

	/* 1. Every acknowledged commit at its row; 2. acknowledged once. */
	for (size_t i = 0; i < nr_acks; i++) {
		const struct ack *a = &acks[i];
		if (a->hrow >= hrows) {
			if (bad++ < 5)
				fail("acknowledged txid %llx (aid %lld delta "
				     "%lld) at history row %llu, but history "
				     "has %llu rows",
				     (unsigned long long)a->txid,
				     (long long)a->aid, (long long)a->delta,
				     (unsigned long long)a->hrow,
				     (unsigned long long)hrows);
			continue;
		}
		if (seen[a->hrow]++) {
			if (bad++ < 5)
				fail("history row %llu acknowledged twice",
				     (unsigned long long)a->hrow);
			continue;
		}
		const struct hist_row *x = &h[a->hrow];
		if (x->txid != a->txid || x->aid != a->aid ||
		    x->delta != a->delta) {
			if (bad++ < 5)
				fail("acknowledged txid %llx (aid %lld delta "
				     "%lld) not at history row %llu: txid "
				     "%llx aid %lld delta %lld there",
				     (unsigned long long)a->txid,
				     (long long)a->aid, (long long)a->delta,
				     (unsigned long long)a->hrow,
				     (unsigned long long)x->txid,
				     (long long)x->aid, (long long)x->delta);
		}
	}
	/* No transaction twice in history. */
	qsort(txids, hrows, sizeof(*txids), cmp_u64);
	for (uint64_t i = 1; i < hrows; i++)
		if (txids[i] == txids[i - 1] && bad++ < 5)
			fail("txid %llx twice in history",
			     (unsigned long long)txids[i]);

	/* 3. The TPC-B consistency conditions. */
	struct tpcb_sums sums = {.history = hsum, .history_rows = hrows};
	if ((r = sum_rows(s, t.accounts, TPCB_NACCOUNTS, &sums.accounts)) ||
	    (r = sum_rows(s, t.tellers, TPCB_NTELLERS, &sums.tellers)) ||
	    (r = sum_rows(s, t.branches, TPCB_NBRANCHES, &sums.branches))) {
		fail("reading balances: %s", fk_strerror(r));
		_exit(1);
	}
	if (!tpcb_sums_ok(&sums)) {
		bad++;
		fail("sums differ: accounts %lld tellers %lld branches %lld "
		     "history %lld (%llu rows)",
		     (long long)sums.accounts, (long long)sums.tellers,
		     (long long)sums.branches, (long long)sums.history,
		     (unsigned long long)hrows);
	}
	if (O->verbose)
		printf("trial %u: %zu acknowledged, %llu history rows, "
		       "recovery %llu ms (%llu records), sums %lld, %s\n",
		       trial_no, nr_acks, (unsigned long long)hrows,
		       (unsigned long long)st.recovery_ms,
		       (unsigned long long)st.recovery_records,
		       (long long)sums.accounts,
		       close_it ? "closed" : "left open (crash)");
	if (close_it && !bad && (r = fk_store_close(s))) {
		fail("close after recovery: %s", fk_strerror(r));
		bad++;
	}
	fflush(NULL);
	_exit(bad ? 1 : 0);
}

/* 0 verified, 1 failed. */
static int verify(void)
{
	int fd;
	int close_it = (int)rnd(2); /* drawn always: same seed, same run */
	if (O->always_close)
		close_it = 1;
	pid_t pid = spawn(&fd, verify_main, close_it);
	if (pid < 0)
		return 1;
	char c;
	while (read(fd, &c, 1) > 0)
		;
	close(fd);
	int status = reap(pid);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		if (status >= 0 &&
		    !(WIFEXITED(status) && WEXITSTATUS(status) == 1))
			fail("verifier %s", status_str(status));
		return 1;
	}
	return 0;
}

/* ---- one workload run ended by a fault: 0, or 1 (failed) ---- */

static void workload_child(int fd, int long_wal)
{
	workload_main(fd, long_wal);
}

static int run_workload(int long_wal, int cut)
{
	int fd, no_commit = 0;
	size_t before = nr_acks;
	txid_epoch++;
	ackbuf_have = 0;
	wl_point = FKT_POINT_TIMED;
	if (cut && O->cut_disk) {
		/* Half the cuts at a chosen point; the N-th WAL fsync, the
		 * N-th checkpoint fsync, the N-th rename (a checkpoint's
		 * control file). */
		uint64_t pick = rnd(8);
		wl_point = pick < 2   ? FKT_POINT_TIMED
			   : pick < 5 ? FKT_POINT_FLUSH
				      : (int)(pick - 4);
		wl_at = wl_point == FKT_POINT_FSYNC	   ? 1 + rnd(200)
			: wl_point == FKT_POINT_CHECKPOINT ? 1 + rnd(30)
			: wl_point == FKT_POINT_FLUSH	   ? 1 + rnd(400)
							   : 1 + rnd(3);
		wl_count = 0;
		R->point_asked[wl_point]++;
		if (fkt_cut_window(&fs))
			return -1;
		if (wl_point == FKT_POINT_FLUSH &&
		    fkt_cut_arm_flush(&fs, wl_at))
			return -1;
	}
	cut_by_child = 0;
	pid_t pid = spawn(&fd, workload_child, long_wal);
	if (pid < 0)
		return 1;
	if (wl_point != FKT_POINT_TIMED) {
		/* Until the cut (the child's commits then fail: EOF), else
		 * the parent cuts after 4 s. */
		read_acks(fd, now_ms() + 4000, 0);
	} else if (!long_wal && rnd(5) == 0) {
		/* During open (or its recovery). */
		read_acks(fd, now_ms() + rnd(30), 0);
	} else {
		read_acks(fd, now_ms() + 10000, 1);
		if (nr_acks == before && !interrupted) {
			fail("no commit within 10 s");
			no_commit = 1;
		}
		uint64_t ms = long_wal ? 150 + rnd(450) : 20 + rnd(380);
		read_acks(fd, now_ms() + ms, 0);
	}
	int bad = 0;
	if (cut && cut_power()) {
		kill(pid, SIGKILL);
		read_acks(fd, 0, 0);
		close(fd);
		reap(pid);
		return -1;
	}
	kill(pid, SIGKILL);
	read_acks(fd, 0, 0);
	close(fd);
	int status = reap(pid);
	int expected = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	/* After a power cut, commits fail (exit 3) or the open did (2). */
	if (cut && WIFEXITED(status) &&
	    (WEXITSTATUS(status) == 2 || WEXITSTATUS(status) == 3))
		expected = 1;
	if (!expected) {
		fail("workload child %s before the fault", status_str(status));
		bad = 1;
	}
	if (cut && O->cut_disk && (wl_point == FKT_POINT_TIMED || cut_by_child))
		R->point_hit[wl_point]++;
	if (cut && restore_power())
		return -1;
	R->acks += nr_acks - before;
	if (cut)
		cut_acks = nr_acks - before;
	if (no_commit)
		bad = 1;
	if (O->verbose)
		printf("trial %u: workload acknowledged %zu commits\n",
		       trial_no, nr_acks - before);
	return bad;
}

/* ---- the interrupt child: recovery cut at the N-th call ---- */

static struct fk_sys_ops real_sys;
static uint64_t irq_at; /* 0: never */
/* What irq_at counts: every call; every call from the cut on; from the
 * cut on, every call but pwrite/write (fsyncs, renames, creations: the
 * few steps of the checkpoint's sync phase, control file and WAL
 * recycling, which a count over all calls would seldom hit). */
enum { COUNT_ALL = 0, COUNT_FROM_CUT = 1, COUNT_SYNC_FROM_CUT = 2 };
static int irq_rel;
static uint64_t irq_calls, irq_calls_replay, irq_calls_end_sync;
static int irq_fd;
static int irq_phase;
static uint64_t irq_t0_ns;

static const char *fd_name(int fd, char *buf, size_t len)
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n < 0) {
		snprintf(buf, len, "fd %d", fd);
		return buf;
	}
	path[n] = 0;
	size_t sl = strlen(store_dir);
	const char *rel = path;
	if (!strncmp(path, store_dir, sl))
		rel = path + sl + (path[sl] == '/');
	snprintf(buf, len, "%s", *rel ? rel : ".");
	return buf;
}

static void irq_send(uint32_t kind, const char *what, int err)
{
	struct irq_msg m;
	memset(&m, 0, sizeof(m));
	m.kind = kind;
	m.phase = (uint32_t)irq_phase;
	m.calls = __atomic_load_n(&irq_calls, __ATOMIC_SEQ_CST);
	m.calls_replay = irq_calls_replay;
	m.calls_end_sync = irq_calls_end_sync;
	m.elapsed_us = (fk_now_ns() - irq_t0_ns) / 1000u;
	m.err = err;
	snprintf(m.what, sizeof(m.what), "%s", what ? what : "");
	if (write(irq_fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(5);
}

/* Cut the power (first: once the parent has the report, it may kill
 * us at any moment), report, die. */
static void irq_die(uint32_t kind, const char *what)
{
	if (is_powercut())
		fkt_fs_goingdown(&fs, FKT_GOINGDOWN_NOLOGFLUSH);
	irq_send(kind, what, 0);
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}

/* Count a state-changing call on @fd (or at @dirfd/@path); die before
 * it if it is the chosen one. */
static void irq_hit(const char *op, int fd, const char *path)
{
	char name[PATH_MAX];
	/* The first WAL write of a recovery is the cut (fk_wal_cut); the
	 * end-of-recovery checkpoint follows it. */
	if (irq_phase == PHASE_REPLAY && fd >= 0 &&
	    (!strcmp(op, "pwrite") || !strcmp(op, "write")) &&
	    !strncmp(fd_name(fd, name, sizeof(name)), "wal/", 4)) {
		irq_calls_replay = irq_calls;
		irq_phase = PHASE_END;
	}
	uint64_t n = __atomic_add_fetch(&irq_calls, 1, __ATOMIC_SEQ_CST);
	int write_op = !strcmp(op, "pwrite") || !strcmp(op, "write");
	uint64_t ns = 0;
	if (irq_phase == PHASE_END && !write_op)
		ns = __atomic_add_fetch(&irq_calls_end_sync, 1,
					__ATOMIC_SEQ_CST);
	if (irq_rel == COUNT_FROM_CUT) {
		if (irq_phase != PHASE_END || n - irq_calls_replay != irq_at)
			return;
	} else if (irq_rel == COUNT_SYNC_FROM_CUT) {
		if (!ns || ns != irq_at)
			return;
	} else if (n != irq_at) {
		return;
	}
	char what[PATH_MAX + 32];
	if (path)
		snprintf(what, sizeof(what), "%s %s/%s", op,
			 fd_name(fd, name, sizeof(name)), path);
	else
		snprintf(what, sizeof(what), "%s %s", op,
			 fd_name(fd, name, sizeof(name)));
	irq_die(IRQ_CALL, what);
}

static ssize_t h_pwrite(int fd, const void *b, size_t n, off_t off)
{
	irq_hit("pwrite", fd, NULL);
	return real_sys.pwrite(fd, b, n, off);
}

static ssize_t h_write(int fd, const void *b, size_t n)
{
	irq_hit("write", fd, NULL);
	return real_sys.write(fd, b, n);
}

static int h_fsync(int fd)
{
	irq_hit("fsync", fd, NULL);
	return real_sys.fsync(fd);
}

static int h_fdatasync(int fd)
{
	irq_hit("fdatasync", fd, NULL);
	return real_sys.fdatasync(fd);
}

static int h_renameat(int ofd, const char *op, int nfd, const char *np)
{
	irq_hit("renameat", ofd, op);
	return real_sys.renameat(ofd, op, nfd, np);
}

static int h_unlinkat(int dfd, const char *p, int flags)
{
	irq_hit("unlinkat", dfd, p);
	return real_sys.unlinkat(dfd, p, flags);
}

static int h_ftruncate(int fd, off_t len)
{
	irq_hit("ftruncate", fd, NULL);
	return real_sys.ftruncate(fd, len);
}

static int h_fallocate(int fd, int mode, off_t off, off_t len)
{
	irq_hit("fallocate", fd, NULL);
	return real_sys.fallocate(fd, mode, off, len);
}

static int h_openat(int dfd, const char *p, int flags, mode_t mode)
{
	if (flags & (O_CREAT | O_TRUNC))
		irq_hit("openat", dfd, p);
	return real_sys.openat(dfd, p, flags, mode);
}

static int h_mkdirat(int dfd, const char *p, mode_t mode)
{
	irq_hit("mkdirat", dfd, p);
	return real_sys.mkdirat(dfd, p, mode);
}

/* Dies at call irq_at (from the cut if irq_rel; 0: by the parent's
 * timer). */
static void interrupt_main(int fd, int arg)
{
	struct fk_store_opts so;
	struct fk_store *s;

	(void)arg;
	irq_fd = fd;
	real_sys = fk_sys;
	fk_sys.pwrite = h_pwrite;
	fk_sys.write = h_write;
	fk_sys.fsync = h_fsync;
	fk_sys.fdatasync = h_fdatasync;
	fk_sys.renameat = h_renameat;
	fk_sys.unlinkat = h_unlinkat;
	fk_sys.ftruncate = h_ftruncate;
	fk_sys.fallocate = h_fallocate;
	fk_sys.openat = h_openat;
	fk_sys.mkdirat = h_mkdirat;
	store_opts(&so, 0);
	irq_t0_ns = fk_now_ns();
	int r = fk_store_open(store_dir, &so, &s);
	if (r) {
		irq_send(IRQ_OPEN_FAILED, "open", r);
		_exit(2);
	}
	/* Recovered: crash right after the open (the end-of-recovery
	 * checkpoint must have made everything durable). */
	irq_at = 0;
	irq_die(IRQ_OPENED, "opened");
}

/*
 * One interrupted reopen: 0, 1 (failed) or -1 (fatal).  Where, one in
 * four each: at a random time within a whole recovery's duration; at a
 * call drawn over the whole recovery; over the cut and end-of-recovery
 * checkpoint (counted from the cut); over the calls of those that are
 * not writes.
 */
static int run_interrupt(void)
{
	int fd;
	uint64_t pick = rnd(8);
	int timed = pick < 2;
	irq_rel = pick < 4   ? COUNT_ALL
		  : pick < 6 ? COUNT_FROM_CUT
			     : COUNT_SYNC_FROM_CUT;
	irq_at = timed			     ? 0
		 : irq_rel == COUNT_FROM_CUT ? 1 + rnd(est_end_calls)
		 : irq_rel == COUNT_SYNC_FROM_CUT
		     ? 1 + rnd(est_end_sync_calls)
		     : 1 + rnd(est_replay_calls + est_end_calls);
	irq_calls = irq_calls_replay = irq_calls_end_sync = 0;
	irq_phase = PHASE_REPLAY;
	pid_t pid = spawn(&fd, interrupt_main, 0);
	if (pid < 0)
		return -1;
	struct irq_msg m;
	memset(&m, 0, sizeof(m));
	size_t have = 0;
	int bad = 0;
	uint64_t delay_ms = timed ? rnd(est_open_ms + 1) : 0;
	uint64_t deadline = now_ms() + (timed ? delay_ms : 120000);
	for (;;) {
		uint64_t now = now_ms();
		if (now >= deadline)
			break;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, (int)(deadline - now));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		ssize_t r = read(fd, (char *)&m + have, sizeof(m) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		if (have == sizeof(m))
			break;
	}
	if (!have && !timed && !interrupted) {
		fail("reopen with a crash at call %llu%s: no report in 120 s "
		     "(hung?)",
		     (unsigned long long)irq_at,
		     irq_rel == COUNT_FROM_CUT ? " from the cut"
		     : irq_rel == COUNT_SYNC_FROM_CUT
			 ? " (not a write) from the cut"
			 : "");
		bad = 1;
	}
	/* The child may still run (timed, or hung): cut and kill.  With a
	 * report it has cut the power itself already. */
	if (is_powercut() && have != sizeof(m) && cut_power()) {
		kill(pid, SIGKILL);
		close(fd);
		reap(pid);
		return -1;
	}
	kill(pid, SIGKILL);
	close(fd);
	int status = reap(pid);
	int got = have == sizeof(m);
	/* A power cut by the timer may come first: the open then fails
	 * with EIO (the file system is shut down), before the kill. */
	int cut_first =
	    timed && is_powercut() &&
	    (!got || (m.kind == IRQ_OPEN_FAILED && m.err == -EIO)) &&
	    WIFEXITED(status) && WEXITSTATUS(status) == 2;
	if (cut_first) {
		/* expected */
	} else if (got && m.kind == IRQ_OPEN_FAILED) {
		fail("recovery failed: %s", fk_strerror(m.err));
		bad = 1;
	} else if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
		fail("interrupt child %s", status_str(status));
		bad = 1;
	}
	if (is_powercut() && restore_power())
		return -1;
	R->interrupts++;
	if (got && m.kind == IRQ_OPENED) {
		R->after_open++;
		/* A whole recovery: learn its size for the next picks. */
		if (m.calls_replay) {
			est_replay_calls = m.calls_replay;
			est_end_calls = m.calls - m.calls_replay;
			est_end_sync_calls = m.calls_end_sync + 1;
		}
		est_open_ms = m.elapsed_us / 1000 + 1;
	} else if (timed) {
		R->timed++;
	} else if (got && m.phase == PHASE_REPLAY) {
		R->in_replay++;
		/* Killed late in a replay longer than we thought. */
		if (4 * m.calls > 3 * est_replay_calls)
			est_replay_calls = est_replay_calls * 3 / 2;
	} else if (got) {
		R->in_end++;
	}
	if (O->verbose) {
		if (timed)
			printf("trial %u: reopen cut after %llu ms%s\n",
			       trial_no, (unsigned long long)delay_ms,
			       got ? " - recovery finished first" : "");
		else
			printf("trial %u: reopen cut before call %llu%s: %s "
			       "(%s, %llu ms)\n",
			       trial_no, (unsigned long long)irq_at,
			       irq_rel == COUNT_FROM_CUT ? " from the cut"
			       : irq_rel == COUNT_SYNC_FROM_CUT
				   ? " (not a write) from the cut"
				   : "",
			       got ? m.what : "?",
			       !got		      ? "no report"
			       : m.kind == IRQ_OPENED ? "recovery finished"
			       : m.phase == PHASE_END ? "end of recovery"
						      : "replay",
			       (unsigned long long)(m.elapsed_us / 1000));
	}
	return bad;
}

/* ---- trials ---- */

static int trial(void)
{
	int recovery = O->fault == FKT_FAULT_RECOVERY_KILL ||
		       O->fault == FKT_FAULT_RECOVERY_POWERCUT;
	int r, bad = 0;
	/*
	 * Power cuts, one trial in three: a kill -9 first, so the next
	 * open recovers from pages the killed process wrote but never
	 * fsynced (still in the page cache: recovery must not trust them
	 * as durable), then the power cut.  For power cuts during
	 * recovery, the long WAL ends with a kill -9 and only the
	 * interrupted reopens cut the power.
	 */
	int kill_first = is_powercut() && rnd(3) == 0;
	if (kill_first && !recovery) {
		r = run_workload(0, 0);
		if (r < 0)
			return r;
		bad = r;
	}
	r = run_workload(recovery, is_powercut() && !(kill_first && recovery));
	if (r < 0)
		return r;
	bad |= r;
	if (recovery && !bad) {
		unsigned n = 1 + (unsigned)rnd(
				     O->max_interrupts ? O->max_interrupts : 1);
		for (unsigned i = 0; i < n && !bad && !interrupted; i++) {
			r = run_interrupt();
			if (r < 0)
				return r;
			bad = r;
		}
	}
	if (interrupted)
		return bad;
	return verify() || bad;
}

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void cleanup_fs(void)
{
	if (have_fs)
		fkt_fs_destroy(&fs);
	have_fs = 0;
}

void fkt_torture_opts_init(struct fkt_torture_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fault = FKT_FAULT_KILL;
	o->trials = 10;
	o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	o->preset = FKT_PRESET_BOTH;
	o->max_interrupts = 3;
	o->max_history_rows = 150000;
	o->fs_bytes = 400ull << 20;
}

static const char *const fault_names[] = {"kill", "powercut", "recovery-kill",
					  "recovery-powercut"};

int fkt_torture_fault_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, fault_names[i]))
			return i;
	return -1;
}

const char *fkt_torture_fault_name(int fault)
{
	return fault >= 0 && fault < 4 ? fault_names[fault] : "?";
}

const char *fkt_torture_point_name(int point)
{
	static const char *const names[] = {"timed", "fsync", "checkpoint",
					    "rename", "flush"};
	return point >= 0 && point < 5 ? names[point] : "?";
}

unsigned fkt_torture_trials_env(unsigned dflt)
{
	const char *e = getenv("FK_TRIALS");
	if (e && *e) {
		unsigned long v = strtoul(e, NULL, 10);
		if (v > 0 && v < UINT_MAX)
			return (unsigned)v;
	}
	return dflt;
}

int fkt_torture_run(const struct fkt_torture_opts *o,
		    struct fkt_torture_result *res)
{
	static char mnt[PATH_MAX], img[PATH_MAX];
	const char *work = o->dir ? o->dir : fkt_tmpdir();
	uint64_t t0 = fk_now_ns();
	int ret = 0;

	O = o;
	R = res;
	memset(res, 0, sizeof(*res));
	tpcb_rng_seed(&rng, o->seed);
	interrupted = 0;
	trial_no = 0;
	est_replay_calls = 1000;
	est_end_calls = 200;
	est_end_sync_calls = 30;
	est_open_ms = 150;
	if (is_powercut() && !o->fs_type) {
		fprintf(stderr, "torture: a power cut needs --fs\n");
		return -1;
	}
	if (is_powercut() && !o->cut_disk && o->fs_type &&
	    !strcmp(o->fs_type, "btrfs")) {
		fprintf(stderr, "torture: btrfs refuses FS_IOC_GOINGDOWN: "
				"its power cuts need the lab disk (--cut "
				"disk)\n");
		return -1;
	}
	printf("torture: %s%s%s%s, %u trials, seed %llu, preset "
	       "%s%s%s%s%s\n",
	       fkt_torture_fault_name(o->fault),
	       o->cut_disk ? " at the disk (cache lost, mode " : "",
	       o->cut_disk ? (o->cut_mode ? o->cut_mode : "mixed") : "",
	       o->cut_disk ? (o->flush_ignore ? ", FLUSH ignored: negative "
						"control)"
					      : ")")
			   : "",
	       o->trials, (unsigned long long)o->seed,
	       o->preset == FKT_PRESET_NAIVE	? "naive"
	       : o->preset == FKT_PRESET_SMOOTH ? "smooth"
						: "naive/smooth",
	       o->fs_type ? " on " : "", o->fs_type ? o->fs_type : "",
	       o->wal_compression ? ", wal_compression " : "",
	       o->wal_compression ? fk_wal_compression_name(o->wal_compression)
				  : "");
	if (o->fs_type) {
		snprintf(img, sizeof(img), "%s/torture-%s.img", work,
			 o->fs_type);
		snprintf(mnt, sizeof(mnt), "%s/torture-%s.mnt", work,
			 o->fs_type);
		int r;
		if (o->cut_disk) {
			struct fkt_cut_opts co = {.mode = o->cut_mode,
						  .flush_ignore =
						      o->flush_ignore,
						  .seed = o->seed};
			r = fkt_fs_create_cut(&fs, o->fs_type, o->fs_bytes, mnt,
					      &co);
		} else {
			r = fkt_fs_create(&fs, o->fs_type, img, o->fs_bytes,
					  mnt);
		}
		if (r == 77)
			return 77;
		if (r) {
			fprintf(stderr, "torture: cannot make %s on %s\n",
				o->fs_type, img);
			return -1;
		}
		have_fs = 1;
		atexit(cleanup_fs);
		if (snprintf(store_dir, sizeof(store_dir), "%s/store", mnt) >=
		    (int)sizeof(store_dir))
			return -1;
	} else if (snprintf(store_dir, sizeof(store_dir), "%s/torture-store",
			    work) >= (int)sizeof(store_dir)) {
		return -1;
	}
	struct sigaction sa, old_int, old_term, old_pipe;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);

	if (make_database()) {
		ret = -1;
		goto out;
	}
	for (unsigned i = 1; i <= o->trials && !interrupted; i++) {
		trial_no = i;
		cut_acks = 0;
		int r = trial();
		if (cut_acks) {
			res->acked_trials++;
			res->acked_failed += r != 0;
		}
		if (interrupted)
			break;
		if (r < 0) {
			fail("the fault or the file system could not be "
			     "handled; stopping");
			res->trials++;
			res->failed++;
			break;
		}
		res->trials++;
		if (r) {
			res->failed++;
			fprintf(stderr,
				"trial %u failed: replay with --seed "
				"%llu (the database is made afresh)\n",
				i, (unsigned long long)o->seed);
		}
		if (r || nr_acks > o->max_history_rows) {
			if (make_database()) {
				res->failed++;
				break;
			}
		}
		if (!o->verbose && i % 50 == 0)
			printf("... %u trials, %u failed\n", res->trials,
			       res->failed);
	}
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (have_fs) {
		fkt_rm_rf(store_dir);
		cleanup_fs();
	} else {
		fkt_rm_rf(store_dir);
	}
	free(acks);
	acks = NULL;
	nr_acks = alloc_acks = 0;
	res->elapsed_s = (double)(fk_now_ns() - t0) / 1e9;
	if (o->fault == FKT_FAULT_RECOVERY_KILL ||
	    o->fault == FKT_FAULT_RECOVERY_POWERCUT)
		printf("reopens cut: %u (at a call in the replay %u, in the "
		       "cut or end-of-recovery checkpoint %u, after the open "
		       "%u, at a random time %u)\n",
		       res->interrupts, res->in_replay, res->in_end,
		       res->after_open, res->timed);
	if (o->cut_disk && is_powercut())
		printf(
		    "workload cuts at the disk: %u at a random moment, %u/%u "
		    "at the N-th FLUSH, %u/%u right after a WAL fsync, "
		    "%u/%u mid-checkpoint, %u/%u after a rename "
		    "(made/asked; the rest cut by the timer)\n",
		    res->point_hit[0], res->point_hit[4], res->point_asked[4],
		    res->point_hit[1], res->point_asked[1], res->point_hit[2],
		    res->point_asked[2], res->point_hit[3],
		    res->point_asked[3]);
	if (o->cut_disk)
		printf(
		    "trials whose cut workload acknowledged a commit: %u, of "
		    "them failed: "
		    "%u\n",
		    res->acked_trials, res->acked_failed);
	if (interrupted)
		printf("interrupted\n");
	printf("trials: %u, failed: %u (%.1f s)\n", res->trials, res->failed,
	       res->elapsed_s);
	fflush(stdout);
	return ret;
}
