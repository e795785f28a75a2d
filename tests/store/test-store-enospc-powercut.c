// SPDX-License-Identifier: MIT
/*
 * test-store-enospc-powercut.c - power cuts on a full file system: every
 * acknowledged commit survives a power cut (FS_IOC_GOINGDOWN without a
 * log flush, fkloop) taken while the file system is full, and the
 * recovery after it runs on the still-full file system.
 *
 * On a small loop-mounted ext4 (mkfs -m 0) and an xfs, one TPC-B store,
 * the file system filled by a ballast file (fkt_fs_fill), these steps
 * in a row, each ending with a power cut, an unmount and a mount, an
 * open on the same (still full) file system and the check of every
 * commit acknowledged so far (fkacks.h: at its history row, the sums):
 *  1. two processes: with 3 MiB left, a child commits until the WAL
 *     has no room
 *     (-ENOSPC), writing each acknowledged commit to a file outside the
 *     file system, and goes on trying; meanwhile an open from the
 *     parent fails with -EBUSY; the power is cut under the child, which
 *     is then killed (-9).
 *  2. recovery on the full file system (the end-of-recovery checkpoint
 *     may be deferred, C8); commits while full, until -ENOSPC; cut.
 *  3. a checkpoint asked for on the full file system fails with
 *     -ENOSPC (the store not stopped); cut while the checkpointer keeps
 *     retrying it.
 *  4. the ballast deleted: commits go on (retried after 10 ms while
 *     -ENOSPC, for up to 20 s), a checkpoint completes; cut.
 * Then a clean close and reopen, checked again.
 *
 * Needs root and loop devices (else skip).  FK_TEST_SEED fixes the
 * transactions drawn; FK_ENOSPC_FS=ext4|xfs runs one file system.
 */
#include "fkacks.h"
#include "fkloop.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct fkt_fs fs;
static char store_dir[700], ballast[700], ackfile[700];
static unsigned seed;
static struct fkt_acks acks;

static void store_opts(struct fk_store_opts *o, int create)
{
	fkt_full_store_opts(o, 8u << 20, 0);
	if (!create)
		o->create_mode = FK_STORE_OPEN_EXISTING;
}

static int store_error(struct fk_store *s)
{
	struct fk_store_stats st;
	fk_store_get_stats(s, &st);
	return st.error;
}

/* Power cut with @s (may be NULL) still open: the close fails. */
static void power_cut(struct fk_store **s, const char *step)
{
	fkt_acks_power_cut(&fs, s);
	printf("%s %s: power cut\n", fs.type, step);
}

/* Open on the file system as it is (full), and check. */
static struct fk_store *reopen(const char *step)
{
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	char when[128];
	store_opts(&o, 0);
	fkt_store_log_clear();
	int r = fk_store_open(store_dir, &o, &s);
	printf("%s %s: open after the power cut: %s\n", fs.type, step,
	       r ? fk_strerror(r) : "ok");
	CHECK_EQ(r, 0);
	if (r) {
		fprintf(stderr, "store log:\n%s", fkt_store_log_text());
		return NULL;
	}
	snprintf(when, sizeof(when), "%s %s: after recovery", fs.type, step);
	fkt_acks_verify(&acks, s, when);
	CHECK_EQ(store_error(s), 0);
	return s;
}

/* Step 1: the child's commits until no room, then on. */
static void child(void)
{
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	struct tpcb_tables t;
	struct tpcb_rng rng;
	struct fk_batch b;
	store_opts(&o, 0);
	tpcb_rng_seed(&rng, seed);
	fk_batch_init(&b);
	if (fk_store_open(store_dir, &o, &s) || tpcb_open(s, &t))
		_exit(2);
	fkt_acks_init(&acks, 1);
	if (fkt_acks_record(&acks, ackfile))
		_exit(2);
	/* Tell the parent the store is open. */
	if (write(1, "o", 1) != 1)
		_exit(2);
	for (;;) {
		int r = fkt_acks_txn(&acks, s, &t, &rng, &b);
		if (r == -ENOSPC)
			usleep(1000);
		else if (r)
			_exit(r == -EIO || r == -FK_ESTOPPED ? 0 : 3);
	}
}

static void run(void)
{
	struct fk_store_opts o;
	struct fk_store *s = NULL;
	struct tpcb_tables t;
	struct tpcb_rng rng;
	struct fk_batch b;
	int r;

	store_opts(&o, 1);
	CHECK_EQ(fk_store_open(store_dir, &o, &s), 0);
	if (!s)
		return;
	CHECK_EQ(tpcb_create(s, 1, &t, NULL, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);
	s = NULL;
	/* Full but for 3 MiB, which the child's WAL takes. */
	char reserve[800];
	snprintf(reserve, sizeof(reserve), "%s/reserve", fs.mnt);
	int rfd = open(reserve, O_WRONLY | O_CREAT, 0600);
	CHECK(rfd >= 0 && fallocate(rfd, 0, 0, 3 << 20) == 0);
	if (rfd >= 0)
		close(rfd);
	uint64_t bal = fkt_fs_fill(ballast);
	CHECK(bal > 0);
	CHECK_EQ(fkt_fs_unfill(&fs, reserve), 0);

	/* 1: two processes. */
	int pfd[2];
	CHECK_EQ(pipe(pfd), 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], 1);
		child();
	}
	close(pfd[1]);
	char c = 0;
	CHECK_EQ(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	/* Until the child's WAL has no room (the ack file stops growing
	 * for a second), at most 60 s. */
	size_t last = 0, n = 0;
	for (int i = 0, still = 0; i < 600 && still < 10; i++) {
		usleep(100000);
		CHECK_EQ(fkt_acks_load(&acks, ackfile), 0);
		n = acks.n;
		still = n == last ? still + 1 : 0;
		last = n;
	}
	store_opts(&o, 0);
	struct fk_store *other = NULL;
	CHECK_EQ(fk_store_open(store_dir, &o, &other), -EBUSY);
	CHECK_EQ(fkt_fs_goingdown(&fs, FKT_GOINGDOWN_NOLOGFLUSH), 0);
	kill(pid, SIGKILL);
	int st = 0;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK_EQ(fkt_fs_umount(&fs), 0);
	CHECK_EQ(fkt_fs_mount(&fs), 0);
	CHECK_EQ(fkt_acks_load(&acks, ackfile), 0);
	printf("%s 1: the child's commits acknowledged: %zu; power cut\n",
	       fs.type, acks.n);
	CHECK(acks.n > 1000);
	acks.next_txid = 10000000;
	s = reopen("1");
	if (!s)
		return;

	/* 2: commits on the full file system, until ENOSPC. */
	tpcb_rng_seed(&rng, seed + 1);
	fk_batch_init(&b);
	CHECK_EQ(tpcb_open(s, &t), 0);
	size_t before = acks.n;
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 20000);
	printf("%s 2: %zu commits on the full fs, then: %s\n", fs.type,
	       acks.n - before, fk_strerror(r));
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(store_error(s), 0);
	power_cut(&s, "2");
	s = reopen("2");
	if (!s)
		goto out;

	/* 3: a checkpoint on the full file system. */
	CHECK_EQ(tpcb_open(s, &t), 0);
	r = fk_store_checkpoint(s);
	printf("%s 3: checkpoint on the full fs: %s\n", fs.type,
	       fk_strerror(r));
	CHECK(r == -ENOSPC || r == 0);
	CHECK_EQ(store_error(s), 0);
	r = fkt_acks_until_error(&acks, s, &t, &rng, &b, 20000);
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(fk_store_checkpoint(s), -ENOSPC);
	CHECK_EQ(store_error(s), 0);
	usleep(1500000); /* the checkpointer retries it */
	power_cut(&s, "3");
	s = reopen("3");
	if (!s)
		goto out;

	/* 4: space freed; commits go on. */
	CHECK_EQ(tpcb_open(s, &t), 0);
	CHECK_EQ(fkt_fs_unfill(&fs, ballast), 0);
	int waits = 0;
	int ok =
	    fkt_acks_through_enospc(&acks, s, &t, &rng, &b, 300, 2000, &waits);
	printf("%s 4: space freed: %d commits ok (%d waits for space)\n",
	       fs.type, ok, waits);
	CHECK_EQ(ok, 300);
	CHECK_EQ(fk_store_checkpoint(s), 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(fkt_acks_txn(&acks, s, &t, &rng, &b), 0);
	power_cut(&s, "4");
	s = reopen("4");
	if (!s)
		goto out;
	CHECK_EQ(fk_store_close(s), 0);
	s = NULL;
	store_opts(&o, 0);
	char when[64];
	snprintf(when, sizeof(when), "%s: after a clean reopen", fs.type);
	fkt_acks_reopen_check(&acks, store_dir, &o, when);
out:
	fk_batch_release(&b);
}

static void run_fs(const char *type, uint64_t bytes)
{
	if (fkt_fs_create_or_skip(&fs, type, type, bytes))
		return;
	snprintf(store_dir, sizeof(store_dir), "%s/store", fs.mnt);
	snprintf(ballast, sizeof(ballast), "%s/ballast", fs.mnt);
	snprintf(ackfile, sizeof(ackfile), "%s/acks-%s", fkt_tmpdir(), type);
	fkt_acks_init(&acks, 1);
	run();
	fkt_acks_release(&acks);
	fkt_fs_destroy(&fs);
}

int main(void)
{
	seed = fkt_full_test_start(&fs);
	const char *only = getenv("FK_ENOSPC_FS");
	if (!only || !strcmp(only, "ext4"))
		run_fs("ext4", 32ull << 20);
	if (!fkt_failures && (!only || !strcmp(only, "xfs")))
		run_fs("xfs", 300ull << 20);
	return fkt_done();
}
