/* SPDX-License-Identifier: MIT */
/*
 * test-eio-lib.h - what test-eio-wal.c and test-eio-checkpoint.c share:
 * the page store running TPC-B from several threads on a real ext4 or xfs
 * whose device is the image of the lab disk daemon (flushkit-diskd, model
 * ram; tests/lib/fkfault.h), so the I/O errors the store sees are the
 * kernel's own (failed writeback, pages marked clean, the error reported
 * once per descriptor), and the checks after a restart.
 *
 *   eio_setup()        the stack, the store (TPC-B scale 1), a probe of
 *                      the kernel's behaviour printed as evidence
 *   eio_open/close     open the store with the trial's options
 *   eio_run_start/_wait  client threads committing TPC-B transactions;
 *                      each records what its commits returned
 *   eio_check_run()    the running store's side: some commit got the
 *                      error, no commit returned 0 after its thread saw
 *                      an error, later ones all failed with -FK_ESTOPPED
 *                      or that error, every acknowledged commit lies
 *                      below the WAL flush position the store stopped at
 *   eio_verify()       reopen (recovery) and check: every acknowledged
 *                      commit at its history row; no txid twice; every
 *                      history row is an acknowledged commit or one whose
 *                      commit returned an error (never a phantom); the
 *                      TPC-B sums agree (no partial transaction)
 *
 * Header-only: each test program includes it once.  Not thread-safe
 * except the client threads' recording (under run.mu).
 */
#ifndef TEST_EIO_LIB_H
#define TEST_EIO_LIB_H

#include "fkfault.h"
#include "fktest.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EIO_CLIENTS 4
/* A client goes on this many commits after its first error, each of
 * which must fail too (sticky). */
#define EIO_AFTER_ERROR 5

struct eio_ack {
	uint64_t txid;
	int64_t aid, delta;
	uint64_t hrow, lsn;
};

struct eio_ctx {
	const char *fstype;
	struct fkt_stack st;
	char dir[700]; /* the store, on the inner fs */
	struct fk_store_opts opts;
	struct fk_store *s;
	struct tpcb_tables t;
	unsigned seed;
	/* every commit acknowledged since the store was made */
	struct eio_ack *acks;
	size_t nr_acks, alloc_acks;
	/* txids of every commit that returned an error */
	uint64_t *failed;
	size_t nr_failed, alloc_failed;
};

struct eio_run;
struct eio_client {
	struct eio_run *run;
	int id;
	pthread_t th;
	int first_err;	       /* 0 until a commit fails */
	unsigned errors;       /* commits that failed */
	unsigned ok_after_err; /* commits that returned 0 after that */
	unsigned odd_err;      /* later errors neither ESTOPPED nor first */
};

struct eio_run {
	struct eio_ctx *c;
	unsigned trial;
	pthread_mutex_t mu;
	atomic_uint acks; /* acknowledged in this run */
	atomic_int stop;
	struct eio_client cl[EIO_CLIENTS];
};

static __attribute__((unused)) uint64_t eio_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void eio_push_ack(struct eio_ctx *c, const struct eio_ack *a)
{
	if (c->nr_acks == c->alloc_acks) {
		c->alloc_acks = c->alloc_acks ? 2 * c->alloc_acks : 4096;
		c->acks = realloc(c->acks, c->alloc_acks * sizeof(*c->acks));
		if (!c->acks)
			abort();
	}
	c->acks[c->nr_acks++] = *a;
}

static void eio_push_failed(struct eio_ctx *c, uint64_t txid)
{
	if (c->nr_failed == c->alloc_failed) {
		c->alloc_failed = c->alloc_failed ? 2 * c->alloc_failed : 1024;
		c->failed =
		    realloc(c->failed, c->alloc_failed * sizeof(*c->failed));
		if (!c->failed)
			abort();
	}
	c->failed[c->nr_failed++] = txid;
}

/*
 * Evidence of what the kernel does on this stack, on a scratch file:
 * write and fsync it (blocks allocated), fail its blocks, overwrite:
 * the first fsync must fail (else the stack injects nothing and the
 * test would prove nothing), a second fsync on the same descriptor
 * returns 0, a read returns the NEW bytes from the page cache, and the
 * device has the OLD ones (read after dropping the cache).
 */
static void eio_probe_kernel(struct eio_ctx *c)
{
	char path[800];
	char buf[4096], got[4096];
	snprintf(path, sizeof(path), "%s/probe", c->st.fs.mnt);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	memset(buf, 'o', sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, sizeof(buf), 0), (long long)sizeof(buf));
	CHECK_EQ(fsync(fd), 0);
	int n = fkt_dev_fail_file(&c->st.dev, path, FKT_OP_WRITE, EIO);
	CHECK(n > 0);
	memset(buf, 'N', sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, sizeof(buf), 0), (long long)sizeof(buf));
	int e1 = fsync(fd) ? errno : 0;
	int e2 = fsync(fd) ? errno : 0;
	CHECK_EQ(pread(fd, got, sizeof(got), 0), (long long)sizeof(got));
	char cached = got[0];
	CHECK_EQ(fkt_dev_clear(&c->st.dev), 0);
	CHECK_EQ(fkt_drop_file_cache(path), 0);
	CHECK_EQ(pread(fd, got, sizeof(got), 0), (long long)sizeof(got));
	char disk = got[0];
	close(fd);
	unlink(path);
	printf("kernel (%s over flushkit-diskd): write-back of a failed block: "
	       "fsync %s, fsync again %s; read after it: '%c' (%s); "
	       "after dropping the cache: '%c' (%s)\n",
	       c->fstype, e1 ? strerror(e1) : "0", e2 ? strerror(e2) : "0",
	       cached,
	       cached == 'N' ? "new bytes kept in the page cache" : "old", disk,
	       disk == 'o' ? "the old bytes on the device" : "new");
	CHECK_EQ(e1, EIO); /* the premise of every check that follows */
}

static void eio_fill_opts(struct eio_ctx *c, const char *preset)
{
	fk_store_opts_init(&c->opts);
	c->opts.create_mode = FK_STORE_CREATE_IF_MISSING;
	fk_store_opts_preset(&c->opts, preset);
	c->opts.shared_buffers_bytes = 2u << 20; /* backends evict */
	c->opts.segment_bytes = 16u << 20;	 /* accounts in one file */
	c->opts.wal_segment_bytes = 1u << 20;
	c->opts.max_wal_size_bytes = 64u << 20;
	c->opts.checkpoint_timeout_ms = 3600 * 1000;
}

static int eio_open(struct eio_ctx *c)
{
	int r = fk_store_open(c->dir, &c->opts, &c->s);
	if (r) {
		fprintf(stderr, "open %s: %s\n", c->dir, fk_strerror(r));
		c->s = NULL;
		return r;
	}
	r = tpcb_open(c->s, &c->t);
	CHECK_EQ(r, 0);
	return r;
}

/*
 * Make the stack and a TPC-B store of scale 1 on it, closed.  Returns
 * 0, 77 (skip) or -1.
 */
static int eio_setup(struct eio_ctx *c, const char *fstype)
{
	memset(c, 0, sizeof(*c));
	c->fstype = fstype;
	const char *env = getenv("FK_TEST_SEED");
	c->seed = env ? (unsigned)strtoul(env, NULL, 10)
		      : (unsigned)time(NULL) ^ (unsigned)getpid();
	srand(c->seed);
	uint64_t size = !strcmp(fstype, "xfs") ? 320ull << 20 : 96ull << 20;
	int r = fkt_stack_create(&c->st, fstype, size, 0);
	if (r)
		return r == 77 ? 77 : -1;
	snprintf(c->dir, sizeof(c->dir), "%s/store", c->st.fs.mnt);
	eio_probe_kernel(c);
	eio_fill_opts(c, "smooth");
	r = fk_store_open(c->dir, &c->opts, &c->s);
	CHECK_EQ(r, 0);
	if (r)
		return -1;
	r = tpcb_create(c->s, 1, &c->t, NULL, NULL);
	CHECK_EQ(r, 0);
	CHECK_EQ(fk_store_close(c->s), 0);
	c->s = NULL;
	return r ? -1 : 0;
}

static void eio_teardown(struct eio_ctx *c)
{
	fkt_stack_destroy(&c->st);
	free(c->acks);
	free(c->failed);
	c->acks = NULL;
	c->failed = NULL;
}

/* ---- the client threads ---- */

static void *eio_client_main(void *arg)
{
	struct eio_client *cl = arg;
	struct eio_run *run = cl->run;
	struct eio_ctx *c = run->c;
	struct tpcb_rng rng;
	struct fk_batch b;
	struct tpcb_txn x;
	unsigned after = 0;

	tpcb_rng_seed(&rng, (uint64_t)c->seed * 1000003u +
				(uint64_t)run->trial * 131u + (uint64_t)cl->id);
	fk_batch_init(&b);
	for (uint64_t seq = 0; !atomic_load(&run->stop); seq++) {
		tpcb_txn_draw(&c->t, &rng, &x);
		x.txid = ((uint64_t)(run->trial + 1) << 48) |
			 ((uint64_t)cl->id << 40) | seq;
		int r = tpcb_txn_commit(c->s, &c->t, &b, &x);
		pthread_mutex_lock(&run->mu);
		if (!r) {
			struct eio_ack a = {.txid = x.txid,
					    .aid = x.aid,
					    .delta = x.delta,
					    .hrow = x.hrow,
					    .lsn = x.lsn};
			eio_push_ack(c, &a);
			if (cl->first_err)
				cl->ok_after_err++;
		} else {
			eio_push_failed(c, x.txid);
			if (!cl->first_err)
				cl->first_err = r;
			else if (r != -FK_ESTOPPED && r != cl->first_err)
				cl->odd_err++;
			cl->errors++;
		}
		pthread_mutex_unlock(&run->mu);
		if (!r)
			atomic_fetch_add(&run->acks, 1);
		else if (++after > EIO_AFTER_ERROR)
			break;
	}
	fk_batch_release(&b);
	return NULL;
}

static void eio_run_start(struct eio_run *run, struct eio_ctx *c,
			  unsigned trial)
{
	memset(run, 0, sizeof(*run));
	run->c = c;
	run->trial = trial;
	pthread_mutex_init(&run->mu, NULL);
	for (int i = 0; i < EIO_CLIENTS; i++) {
		run->cl[i].run = run;
		run->cl[i].id = i;
		if (pthread_create(&run->cl[i].th, NULL, eio_client_main,
				   &run->cl[i])) {
			perror("pthread_create");
			exit(1);
		}
	}
}

/* Wait until @n commits of this run were acknowledged (or @ms passed).
 * Returns 1 if they were. */
static int eio_run_wait_acks(struct eio_run *run, unsigned n, uint64_t ms)
{
	uint64_t end = eio_now_ms() + ms;
	while (atomic_load(&run->acks) < n) {
		if (eio_now_ms() > end)
			return 0;
		usleep(2000);
	}
	return 1;
}

/* Wait for the clients to end by themselves (each after its errors);
 * after @ms tell them to stop.  Returns 1 if they ended by themselves. */
static int eio_run_join(struct eio_run *run, uint64_t ms)
{
	uint64_t end = eio_now_ms() + ms;
	int self = 1;
	for (;;) {
		int all = 1;
		for (int i = 0; i < EIO_CLIENTS; i++) {
			pthread_mutex_lock(&run->mu);
			if (run->cl[i].errors <= EIO_AFTER_ERROR)
				all = 0;
			pthread_mutex_unlock(&run->mu);
		}
		if (all)
			break;
		if (eio_now_ms() > end) {
			self = 0;
			break;
		}
		usleep(5000);
	}
	atomic_store(&run->stop, 1);
	for (int i = 0; i < EIO_CLIENTS; i++)
		pthread_join(run->cl[i].th, NULL);
	pthread_mutex_destroy(&run->mu);
	return self;
}

/*
 * The running store after the fault: every client got an error, the
 * first one of some client is @err (if @need_err; else each first
 * error may be -FK_ESTOPPED: nobody waited on a WAL flush), every later one
 * -FK_ESTOPPED or that error, no commit returned 0 after its client saw an
 * error, the store is stopped with @err, and every commit acknowledged in this
 * run (acks from index @first_ack on) ends at or below the flush position the
 * store stopped at.
 */
static void eio_check_run(struct eio_run *run, size_t first_ack, int err,
			  int need_err)
{
	struct eio_ctx *c = run->c;
	struct fk_store_stats ss;
	int got_err = 0;
	for (int i = 0; i < EIO_CLIENTS; i++) {
		const struct eio_client *cl = &run->cl[i];
		CHECK(cl->first_err == err || cl->first_err == -FK_ESTOPPED);
		if (cl->first_err == err)
			got_err = 1;
		CHECK_EQ(cl->ok_after_err, 0);
		CHECK_EQ(cl->odd_err, 0);
	}
	if (need_err)
		CHECK(got_err);
	fk_store_get_stats(c->s, &ss);
	CHECK_EQ(ss.error, err);
	size_t beyond = 0;
	for (size_t i = first_ack; i < c->nr_acks; i++)
		if (c->acks[i].lsn > ss.flush_lsn)
			beyond++;
	CHECK_EQ(beyond, 0);
	/* Sticky: nothing is tried again, however long we wait. */
	usleep(100 * 1000);
	struct fk_batch b;
	struct tpcb_txn x;
	struct tpcb_rng rng;
	tpcb_rng_seed(&rng, 1);
	fk_batch_init(&b);
	tpcb_txn_draw(&c->t, &rng, &x);
	x.txid = 0;
	CHECK_EQ(tpcb_txn_commit(c->s, &c->t, &b, &x), -FK_ESTOPPED);
	fk_batch_release(&b);
	CHECK_EQ(fk_store_checkpoint(c->s), -FK_ESTOPPED);
	struct fk_store_stats s2;
	fk_store_get_stats(c->s, &s2);
	CHECK_EQ(s2.wal_flushes, ss.wal_flushes);
	CHECK_EQ(s2.flush_lsn, ss.flush_lsn);
	CHECK_EQ(s2.checkpoints, ss.checkpoints);
	printf("  run: %u acknowledged, then %s; WAL flushed to %llu, "
	       "%llu WAL syncs, not one more\n",
	       atomic_load(&run->acks), fk_strerror(err),
	       (unsigned long long)ss.flush_lsn,
	       (unsigned long long)ss.wal_flushes);
}

/* ---- verification after a restart ---- */

static int eio_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static int eio_cmp_ack_txid(const void *a, const void *b)
{
	return eio_cmp_u64(&((const struct eio_ack *)a)->txid,
			   &((const struct eio_ack *)b)->txid);
}

/*
 * Reopen the store (recovery), check it against what the clients were
 * told, close it cleanly.  *@unacked (may be NULL) receives how many
 * commits that returned an error are in history.  Returns 0 if the
 * store opened.
 */
static int eio_verify(struct eio_ctx *c, const char *label, size_t *unacked)
{
	struct fk_store_stats st;
	struct tpcb_sums sums;
	int r = eio_open(c);
	CHECK_EQ(r, 0);
	if (r)
		return r;
	fk_store_get_stats(c->s, &st);

	/* every acknowledged commit at its history row */
	size_t bad = 0;
	for (size_t i = 0; i < c->nr_acks; i++) {
		const struct eio_ack *a = &c->acks[i];
		struct tpcb_txn x;
		memset(&x, 0, sizeof(x));
		r = tpcb_history_read(c->s, &c->t, a->hrow, &x);
		if (r || x.txid != a->txid || x.aid != a->aid ||
		    x.delta != a->delta) {
			if (bad++ < 5)
				fprintf(stderr,
					"%s: acknowledged txid %llx lost: "
					"history row %llu: %s txid %llx\n",
					label, (unsigned long long)a->txid,
					(unsigned long long)a->hrow,
					r ? fk_strerror(r) : "holds",
					(unsigned long long)x.txid);
		}
	}
	CHECK_EQ(bad, 0);

	/* every history row acknowledged or attempted, none twice */
	uint64_t rows = 0;
	CHECK_EQ(fk_store_table_rows(c->s, c->t.history, &rows), 0);
	uint64_t *tx = malloc((rows + 1) * sizeof(*tx));
	struct eio_ack *byid = malloc((c->nr_acks + 1) * sizeof(*byid));
	if (!tx || !byid)
		abort();
	size_t ntx = 0;
	for (uint64_t i = 0; i < rows; i++) {
		struct tpcb_txn x;
		r = tpcb_history_read(c->s, &c->t, i, &x);
		CHECK_EQ(r, 0);
		if (!r)
			tx[ntx++] = x.txid;
	}
	memcpy(byid, c->acks, c->nr_acks * sizeof(*byid));
	qsort(byid, c->nr_acks, sizeof(*byid), eio_cmp_ack_txid);
	qsort(c->failed, c->nr_failed, sizeof(*c->failed), eio_cmp_u64);
	qsort(tx, ntx, sizeof(*tx), eio_cmp_u64);
	size_t dup = 0, phantom = 0, failed_present = 0;
	for (size_t i = 0; i < ntx; i++) {
		if (i && tx[i] == tx[i - 1]) {
			dup++;
			continue;
		}
		struct eio_ack key = {.txid = tx[i]};
		if (bsearch(&key, byid, c->nr_acks, sizeof(*byid),
			    eio_cmp_ack_txid))
			continue;
		if (bsearch(&tx[i], c->failed, c->nr_failed, sizeof(*c->failed),
			    eio_cmp_u64))
			failed_present++;
		else
			phantom++;
	}
	CHECK_EQ(dup, 0);
	CHECK_EQ(phantom, 0);
	free(tx);
	free(byid);

	/* no partial transaction */
	r = tpcb_sums(c->s, &c->t, &sums);
	CHECK_EQ(r, 0);
	if (!r && !tpcb_sums_ok(&sums)) {
		fprintf(stderr,
			"%s: TPC-B sums differ: accounts %lld tellers %lld "
			"branches %lld history %lld (%llu rows)\n",
			label, (long long)sums.accounts,
			(long long)sums.tellers, (long long)sums.branches,
			(long long)sums.history,
			(unsigned long long)sums.history_rows);
		fkt_failures++;
	}
	printf("  %s: recovery replayed %llu records; %zu acknowledged "
	       "commits all present; %zu of %zu failed commits present "
	       "(allowed: their WAL may have reached the disk); sums %s\n",
	       label, (unsigned long long)st.recovery_records, c->nr_acks,
	       failed_present, c->nr_failed,
	       !r && tpcb_sums_ok(&sums) ? "agree" : "DIFFER");
	if (unacked)
		*unacked = failed_present;
	CHECK_EQ(fk_store_close(c->s), 0);
	c->s = NULL;
	return 0;
}

/*
 * Evidence that the page cache holds bytes the device does not: the
 * number of 4 KiB blocks of file @path whose cached content (a buffered
 * read) differs from the device's (an O_DIRECT read).  -1 on error.
 */
static __attribute__((unused)) long eio_cache_vs_disk(const char *path)
{
	enum { BLK = 4096, CHUNK = 64 * BLK };
	void *a = NULL, *b = NULL;
	long diff = -1;
	int fd = open(path, O_RDONLY);
	int dfd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0 || dfd < 0 || posix_memalign(&a, BLK, CHUNK) ||
	    posix_memalign(&b, BLK, CHUNK))
		goto out;
	diff = 0;
	for (off_t off = 0;; off += CHUNK) {
		ssize_t n = pread(dfd, a, CHUNK, off);
		ssize_t m = pread(fd, b, CHUNK, off);
		if (n <= 0 || m != n)
			break;
		for (ssize_t i = 0; i < n; i += BLK)
			if (memcmp((char *)a + i, (char *)b + i,
				   (size_t)(n - i < BLK ? n - i : BLK)))
				diff++;
	}
out:
	free(a);
	free(b);
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return diff;
}

/* Unmount and mount the inner file system: its page cache is gone. */
static void eio_remount(struct eio_ctx *c)
{
	CHECK_EQ(fkt_stack_umount(&c->st), 0);
	CHECK_EQ(fkt_stack_mount(&c->st), 0);
}

/* Number of trials: FK_TRIALS, else @dflt. */
static __attribute__((unused)) unsigned eio_trials(unsigned dflt)
{
	const char *e = getenv("FK_TRIALS");
	unsigned n = e ? (unsigned)strtoul(e, NULL, 10) : 0;
	return n ? n : dflt;
}

/* File systems to run on: FK_EIO_FS ("ext4", "xfs"), else both. */
static __attribute__((unused)) int eio_want_fs(const char *type)
{
	const char *e = getenv("FK_EIO_FS");
	return !e || !*e || strstr(e, type) != NULL;
}

/*
 * One file system of eio_main: set up the stack in @c, run @trial for
 * trials 1..@trials, then @last (if any) once, tear down.  Returns 0,
 * 77 (no stack here) or 1.
 */
static int eio_run_fs(struct eio_ctx *c, const char *type, unsigned trials,
		      int (*trial)(struct eio_ctx *, unsigned),
		      int (*last)(struct eio_ctx *), unsigned *ran,
		      unsigned *failed)
{
	int r = eio_setup(c, type);
	if (r == 77) {
		eio_teardown(c);
		return 77;
	}
	CHECK_EQ(r, 0);
	if (r) {
		eio_teardown(c);
		return 1;
	}
	printf("%s: seed %u (FK_TEST_SEED)\n", type, c->seed);
	for (unsigned n = 1; n <= trials; n++) {
		(*ran)++;
		if (trial(c, n))
			(*failed)++;
	}
	if (last) {
		(*ran)++;
		if (last(c))
			(*failed)++;
	}
	eio_teardown(c);
	return 0;
}

/*
 * The main of an EIO test: as root, on ext4 and xfs (FK_EIO_FS picks),
 * eio_run_fs with eio_trials(3) trials; prints "trials: N, failed: F".
 * Skips (77) when not root or when neither file system has a stack.
 */
static __attribute__((unused)) int
eio_main(struct eio_ctx *c, int (*trial)(struct eio_ctx *, unsigned),
	 int (*last)(struct eio_ctx *))
{
	unsigned trials = eio_trials(3), ran = 0, failed = 0;
	int any = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!fkt_is_root())
		SKIP("needs root (loop devices, FUSE)");
	const char *types[] = {"ext4", "xfs"};
	for (int i = 0; i < 2; i++) {
		if (!eio_want_fs(types[i]))
			continue;
		if (eio_run_fs(c, types[i], trials, trial, last, &ran,
			       &failed) == 77) {
			printf("%s: skipped (no FUSE, loop device or mkfs)\n",
			       types[i]);
			continue;
		}
		any = 1;
	}
	if (!any)
		SKIP("no flushkit-diskd stack (needs /dev/fuse, fusermount3, "
		     "loop devices)");
	printf("trials: %u, failed: %u\n", ran, failed);
	return fkt_done();
}

#endif
