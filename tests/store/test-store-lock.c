// SPDX-License-Identifier: MIT
/*
 * test-store-lock.c - one opener per data directory (store invariant
 * S8): fk_store_open on a directory another open store holds fails with
 * -EBUSY, changes nothing on disk, and the lock dies with its holder.
 *
 * Regression: nothing stopped a second opener, which ran crash recovery
 * on the live store (cutting the WAL under the first one and rewriting
 * its control file): acknowledged commits were lost.
 *
 *  1. Two threads of one process open the same closed store at once, 20
 *     rounds: exactly one gets the store, the other -EBUSY and a log line
 *     naming the lock file.
 *  2. Two processes do the same, 10 rounds: exactly one wins.
 *  3. While a store is open (idle), an open from another thread and one
 *     from another process fail with -EBUSY and leave every file of the
 *     directory as it was (names, sizes, mtimes, contents).
 *  4. A child commits appends and reports each acknowledged one; while it
 *     runs an open fails with -EBUSY; then it is killed with SIGKILL in
 *     the middle of its commits: the next open succeeds (no stale lock)
 *     and recovery keeps every acknowledged row.
 *  5. The lock file removed, or replaced by a new file, while a store is
 *     open (a cleanup script, a restore, an operator who takes it for a
 *     stale pid file): an open from another thread and from another
 *     process still fail with -EBUSY, since the data directory itself is
 *     locked too; after the holder closes, the store opens again.
 *     Regression: the second opener created a new lock file, locked it,
 *     ran recovery on the live store and committed into it (both runs
 *     exited 0, acknowledged commits lost).
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 16

static char dir[4200];

static struct fk_store_opts opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.shared_buffers_bytes = 256 * FK_PAGE_SIZE;
	o.segment_bytes = 16 * FK_PAGE_SIZE;
	o.wal_segment_bytes = 256 << 10;
	o.checkpoint_timeout_ms = 3600000;
	o.log = fkt_store_log;
	return o;
}

static void setup(void)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "t", ROW, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);
}

/* ---- 1. two threads ---- */

static pthread_barrier_t bar;
struct opener {
	struct fk_store *s;
	int r;
};

static void *open_thread(void *arg)
{
	struct opener *op = arg;
	struct fk_store_opts o = opts();
	pthread_barrier_wait(&bar);
	op->r = fk_store_open(dir, &o, &op->s);
	return NULL;
}

static void test_two_threads(void)
{
	int bad = 0;
	for (int round = 0; round < 20; round++) {
		struct opener op[2];
		pthread_t th[2];
		memset(op, 0, sizeof(op));
		fkt_store_log_clear();
		pthread_barrier_init(&bar, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, open_thread, &op[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&bar);
		int won = (op[0].r == 0) + (op[1].r == 0);
		int busy = (op[0].r == -EBUSY) + (op[1].r == -EBUSY);
		if (won != 1 || busy != 1) {
			printf("threads round %d: open returned %d (%s) and "
			       "%d (%s)\n",
			       round, op[0].r, fk_strerror(op[0].r), op[1].r,
			       fk_strerror(op[1].r));
			bad++;
		} else if (!fkt_store_log_has("lock")) {
			printf("threads round %d: no log line names the lock "
			       "file:\n%s",
			       round, fkt_store_log_text());
			bad++;
		}
		for (int i = 0; i < 2; i++)
			if (op[i].s)
				CHECK_EQ(fk_store_close(op[i].s), 0);
	}
	printf("two threads: 20 rounds, %d with other than one winner and "
	       "one -EBUSY\n",
	       bad);
	CHECK_EQ(bad, 0);
}

/* ---- 2. two processes ---- */

/* Child: wait for the go pipe to close, open, report, wait for the
 * release pipe to close, close the store. */
static void open_child(int go, int rep, int rel)
{
	char c;
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	o.log = NULL;
	if (read(go, &c, 1) < 0)
		_exit(2);
	int r = fk_store_open(dir, &o, &s);
	if (write(rep, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	if (read(rel, &c, 1) < 0)
		_exit(2);
	if (s && fk_store_close(s))
		_exit(3);
	_exit(0);
}

static void test_two_processes(void)
{
	int bad = 0;
	for (int round = 0; round < 10; round++) {
		int go[2], rep[2], rel[2], res[2];
		pid_t pid[2];
		if (pipe(go) || pipe(rep) || pipe(rel))
			exit(1);
		for (int i = 0; i < 2; i++) {
			pid[i] = fork();
			if (pid[i] == 0) {
				close(go[1]);
				close(rep[0]);
				close(rel[1]);
				open_child(go[0], rep[1], rel[0]);
			}
		}
		close(go[0]);
		close(rep[1]);
		close(rel[0]);
		close(go[1]); /* both read EOF now: go */
		for (int i = 0; i < 2; i++)
			if (read(rep[0], &res[i], sizeof(res[i])) !=
			    sizeof(res[i]))
				res[i] = 1;
		close(rel[1]);
		close(rep[0]);
		for (int i = 0; i < 2; i++) {
			int st;
			waitpid(pid[i], &st, 0);
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		int won = (res[0] == 0) + (res[1] == 0);
		int busy = (res[0] == -EBUSY) + (res[1] == -EBUSY);
		if (won != 1 || busy != 1) {
			printf("processes round %d: open returned %d (%s) and "
			       "%d (%s)\n",
			       round, res[0], fk_strerror(res[0]), res[1],
			       fk_strerror(res[1]));
			bad++;
		}
	}
	printf("two processes: 10 rounds, %d with other than one winner and "
	       "one -EBUSY\n",
	       bad);
	CHECK_EQ(bad, 0);
}

/* ---- 3. a refused open changes nothing ---- */

static void test_held_unchanged(void)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL, *s2 = NULL;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return;
	char *before = fkt_dir_digest(dir);
	CHECK(before != NULL);

	/* Another thread: the same process, as fk_store_open itself. */
	struct opener op = {0};
	pthread_t th;
	pthread_barrier_init(&bar, NULL, 1);
	pthread_create(&th, NULL, open_thread, &op);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&bar);
	printf("held, other thread: open: %s\n", fk_strerror(op.r));
	CHECK_EQ(op.r, -EBUSY);
	CHECK(op.s == NULL);
	if (op.s)
		fk_store_close(op.s);
	/* The same thread. */
	CHECK_EQ(fk_store_open(dir, &o, &s2), -EBUSY);
	if (s2)
		fk_store_close(s2);

	/* Another process. */
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store *c = NULL;
		o.log = NULL;
		int r = fk_store_open(dir, &o, &c);
		_exit(r == -EBUSY ? 0 : 10);
	}
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	char *after = fkt_dir_digest(dir);
	CHECK(after != NULL);
	if (before && after && strcmp(before, after))
		printf("directory changed by refused opens:\nbefore:\n%s"
		       "after:\n%s",
		       before, after);
	CHECK(before && after && !strcmp(before, after));
	free(before);
	free(after);
	CHECK_EQ(fk_store_close(s), 0);
}

/* ---- 4. kill -9 of the holder ---- */

static void committer(int rep)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	struct fk_batch b;
	uint32_t id;
	o.log = NULL;
	if (fk_store_open(dir, &o, &s) || fk_store_table(s, "t", &id, NULL))
		_exit(2);
	fk_batch_init(&b);
	for (uint64_t i = 0;; i++) {
		uint8_t row[ROW] = {0};
		uint64_t no;
		memcpy(row, &i, 8);
		fk_batch_reset(&b);
		fk_batch_append(&b, id, row, &no);
		if (fk_store_commit(s, &b, NULL) || no != i)
			_exit(3);
		if (write(rep, &i, 8) != 8)
			_exit(4);
	}
}

static void test_kill9(void)
{
	int rep[2];
	uint64_t acked = 0, v;
	if (pipe(rep))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		close(rep[0]);
		committer(rep[1]);
	}
	close(rep[1]);
	while (acked < 300 && read(rep[0], &v, 8) == 8)
		acked = v + 1;
	/* The holder is alive and committing: refused. */
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	int r = fk_store_open(dir, &o, &s);
	printf("holder alive (%llu acknowledged): open: %s\n",
	       (unsigned long long)acked, fk_strerror(r));
	CHECK_EQ(r, -EBUSY);
	if (s) {
		fk_store_close(s);
		s = NULL;
	}
	while (acked < 600 && read(rep[0], &v, 8) == 8)
		acked = v + 1;
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFSIGNALED(st));
	/* Acknowledgements still in the pipe count too. */
	while (read(rep[0], &v, 8) == 8)
		acked = v + 1;
	close(rep[0]);

	r = fk_store_open(dir, &o, &s);
	printf("holder killed (%llu acknowledged): open: %s\n",
	       (unsigned long long)acked, fk_strerror(r));
	CHECK_EQ(r, 0);
	if (!s)
		return;
	uint32_t id;
	uint64_t rows = 0, wrong = 0;
	CHECK_EQ(fk_store_table(s, "t", &id, NULL), 0);
	CHECK_EQ(fk_store_table_rows(s, id, &rows), 0);
	CHECK(rows >= acked);
	for (uint64_t i = 0; i < acked && i < rows; i++) {
		uint8_t row[ROW];
		if (fk_store_read(s, id, i, row) || memcmp(row, &i, 8))
			wrong++;
	}
	printf("after recovery: %llu rows, %llu acknowledged, %llu wrong\n",
	       (unsigned long long)rows, (unsigned long long)acked,
	       (unsigned long long)wrong);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(fk_store_close(s), 0);
}

/* ---- 5. the lock file unlinked or replaced under a live store ---- */

static int open_in_child(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store_opts o = opts();
		struct fk_store *s = NULL;
		int r = fk_store_open(dir, &o, &s);
		if (s)
			fk_store_close(s);
		_exit(r == -EBUSY ? 0 : r == 0 ? 1 : 2);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}

static void test_lock_file_removed(void)
{
	char lock[4300];
	snprintf(lock, sizeof(lock), "%s/lock", dir);
	for (int replace = 0; replace < 2; replace++) {
		struct fk_store_opts o = opts();
		struct fk_store *s = NULL, *s2 = NULL;
		CHECK_EQ(fk_store_open(dir, &o, &s), 0);
		if (!s)
			return;
		CHECK_EQ(unlink(lock), 0);
		if (replace) {
			FILE *f = fopen(lock, "w");
			CHECK(f != NULL);
			if (f)
				fclose(f);
		}
		int r = fk_store_open(dir, &o, &s2);
		printf("lock file %s under an open store: open: %s\n",
		       replace ? "replaced" : "removed", fk_strerror(r));
		CHECK_EQ(r, -EBUSY);
		if (s2)
			fk_store_close(s2);
		/* 0: -EBUSY in the child, 1: it opened the store */
		CHECK_EQ(open_in_child(), 0);
		CHECK_EQ(fk_store_close(s), 0);
		s = NULL;
		CHECK_EQ(fk_store_open(dir, &o, &s), 0);
		if (s)
			CHECK_EQ(fk_store_close(s), 0);
	}
}

int main(void)
{
	snprintf(dir, sizeof(dir), "%s/db", fkt_tmpdir());
	setup();
	test_two_threads();
	test_two_processes();
	test_held_unchanged();
	test_kill9();
	test_lock_file_removed();
	return fkt_done();
}
