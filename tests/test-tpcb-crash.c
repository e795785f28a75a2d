// SPDX-License-Identifier: MIT
/*
 * test-tpcb-crash.c - recovery after kill -9 under the TPC-B workload.
 *
 * A child process opens a small store (scale 1, 1 MiB of shared
 * buffers so backends evict and write pages, a 200 ms checkpoint
 * timeout so checkpoints run all the time) and runs the TPC-B
 * transaction from four threads; after each fk_store_commit returns it
 * writes the acknowledged transaction (txid, aid, delta, history row) to
 * a pipe.  The parent kills it with SIGKILL at a random moment (now and
 * then before the first commit, that is during open or recovery),
 * reads every acknowledgement that reached the pipe, reopens the store
 * (crash recovery) and checks:
 *   1. every acknowledged transaction is in history at the row its
 *      commit returned, with its txid, aid and delta;
 *   2. no history row was acknowledged twice;
 *   3. the TPC-B sums are equal (accounts = tellers = branches =
 *      history deltas): no partial transaction survived.
 * 20 rounds (CI too: the whole test takes a few seconds), or 5 with
 * FK_TEST_QUICK=1.  FK_TEST_SEED fixes
 * the random kill moments.
 */
#include "workload.h"
#include "fktest.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NCLIENTS 4

struct ack {
	uint64_t txid;
	int64_t aid, delta;
	uint64_t hrow;
};

static struct fk_store_opts opts;
static const char *dir;

/* ---- the child ---- */

struct child_client {
	int id, round, fd;
	struct fk_store *s;
	const struct tpcb_tables *t;
};

static void *child_client(void *arg)
{
	struct child_client *c = arg;
	struct tpcb_rng rng;
	struct fk_batch b;
	struct tpcb_txn x;

	tpcb_rng_seed(&rng, (uint64_t)getpid() * 131 + (uint64_t)c->id);
	fk_batch_init(&b);
	for (uint64_t seq = 0;; seq++) {
		tpcb_txn_draw(c->t, &rng, &x);
		x.txid =
		    ((uint64_t)c->round << 48) | ((uint64_t)c->id << 40) | seq;
		int ret = tpcb_txn_commit(c->s, c->t, &b, &x);
		if (ret) {
			fprintf(stderr, "child: commit: %s\n",
				fk_strerror(ret));
			_exit(3);
		}
		struct ack a = {.txid = x.txid,
				.aid = x.aid,
				.delta = x.delta,
				.hrow = x.hrow};
		/* Smaller than PIPE_BUF: written whole or not at all. */
		if (write(c->fd, &a, sizeof(a)) != (ssize_t)sizeof(a))
			_exit(4);
	}
	return NULL;
}

static void child_main(int round, int fd)
{
	struct fk_store *s;
	struct tpcb_tables t;
	struct child_client cl[NCLIENTS];
	pthread_t th[NCLIENTS];

	int ret = fk_store_open(dir, &opts, &s);
	if (ret) {
		fprintf(stderr, "child: open: %s\n", fk_strerror(ret));
		_exit(2);
	}
	if ((ret = tpcb_open(s, &t))) {
		fprintf(stderr, "child: tables: %s\n", fk_strerror(ret));
		_exit(2);
	}
	for (int i = 0; i < NCLIENTS; i++) {
		cl[i] = (struct child_client){
		    .id = i, .round = round, .fd = fd, .s = s, .t = &t};
		if (pthread_create(&th[i], NULL, child_client, &cl[i]))
			_exit(2);
	}
	for (;;)
		pause();
}

/* ---- the parent ---- */

static struct ack *acks;
static size_t nr_acks, alloc_acks;

static void add_ack(const struct ack *a)
{
	if (nr_acks == alloc_acks) {
		alloc_acks = alloc_acks ? 2 * alloc_acks : 4096;
		acks = realloc(acks, alloc_acks * sizeof(*acks));
		if (!acks) {
			perror("realloc");
			exit(1);
		}
	}
	acks[nr_acks++] = *a;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Read acknowledgements until @deadline_ms (0: until EOF).  Returns the
 * number read.  A partial record at EOF cannot happen (atomic writes). */
static size_t read_acks(int fd, uint64_t deadline_ms, size_t stop_after)
{
	static unsigned char buf[sizeof(struct ack) * 256];
	static size_t have;
	size_t got = 0;
	for (;;) {
		int timeout = -1;
		if (deadline_ms) {
			uint64_t now = now_ms();
			if (now >= deadline_ms)
				return got;
			timeout = (int)(deadline_ms - now);
		}
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int n = poll(&p, 1, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got;
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return got; /* EOF: the child is gone */
		have += (size_t)r;
		size_t whole = have / sizeof(struct ack);
		for (size_t i = 0; i < whole; i++) {
			struct ack a;
			memcpy(&a, buf + i * sizeof(a), sizeof(a));
			add_ack(&a);
			got++;
		}
		memmove(buf, buf + whole * sizeof(struct ack),
			have - whole * sizeof(struct ack));
		have -= whole * sizeof(struct ack);
		if (stop_after && got >= stop_after)
			return got;
	}
}

static int cmp_hrow(const void *a, const void *b)
{
	const struct ack *x = a, *y = b;
	return x->hrow < y->hrow ? -1 : x->hrow > y->hrow;
}

static void verify(int round)
{
	struct fk_store *s;
	struct tpcb_tables t;
	struct tpcb_sums sums;
	struct fk_store_stats st;

	int ret = fk_store_open(dir, &opts, &s);
	CHECK_EQ(ret, 0);
	if (ret) {
		fprintf(stderr, "round %d: reopen: %s\n", round,
			fk_strerror(ret));
		exit(fkt_done());
	}
	fk_store_get_stats(s, &st);
	CHECK_EQ(tpcb_open(s, &t), 0);
	CHECK_EQ(t.scale, 1);

	/* 1, 2: every acknowledged transaction at its row, once. */
	if (nr_acks)
		qsort(acks, nr_acks, sizeof(*acks), cmp_hrow);
	size_t bad = 0;
	for (size_t i = 0; i < nr_acks; i++) {
		struct tpcb_txn x;
		const struct ack *a = &acks[i];
		if (i && acks[i - 1].hrow == a->hrow) {
			fprintf(stderr,
				"round %d: history row %llu "
				"acknowledged twice\n",
				round, (unsigned long long)a->hrow);
			bad++;
			continue;
		}
		ret = tpcb_history_read(s, &t, a->hrow, &x);
		if (ret || x.txid != a->txid || x.aid != a->aid ||
		    x.delta != a->delta) {
			if (bad < 5)
				fprintf(stderr,
					"round %d: acknowledged txid %llx "
					"(aid %lld delta %lld) not at history "
					"row %llu: %s txid %llx aid %lld\n",
					round, (unsigned long long)a->txid,
					(long long)a->aid, (long long)a->delta,
					(unsigned long long)a->hrow,
					ret ? fk_strerror(ret) : "found",
					(unsigned long long)x.txid,
					(long long)x.aid);
			bad++;
		}
	}
	CHECK_EQ(bad, 0);

	/* 3: the TPC-B consistency conditions. */
	ret = tpcb_sums(s, &t, &sums);
	CHECK_EQ(ret, 0);
	CHECK(sums.history_rows >= nr_acks);
	if (!tpcb_sums_ok(&sums)) {
		fprintf(stderr,
			"round %d: sums differ: accounts %lld tellers %lld "
			"branches %lld history %lld (%llu rows)\n",
			round, (long long)sums.accounts,
			(long long)sums.tellers, (long long)sums.branches,
			(long long)sums.history,
			(unsigned long long)sums.history_rows);
		fkt_failures++;
	}
	printf("round %2d: %zu acknowledged, %llu history rows, recovery "
	       "%llu ms (%llu records), sums %lld\n",
	       round, nr_acks, (unsigned long long)sums.history_rows,
	       (unsigned long long)st.recovery_ms,
	       (unsigned long long)st.recovery_records,
	       (long long)sums.accounts);
	CHECK_EQ(fk_store_close(s), 0);
}

int main(void)
{
	const char *q = getenv("FK_TEST_QUICK");
	int rounds = q && *q && strcmp(q, "0") ? 5 : 20;
	const char *seed_env = getenv("FK_TEST_SEED");
	unsigned seed = seed_env ? (unsigned)strtoul(seed_env, NULL, 10)
				 : (unsigned)time(NULL) ^ (unsigned)getpid();
	printf("seed %u (FK_TEST_SEED), %d rounds\n", seed, rounds);
	srand(seed);

	static char path[4096];
	snprintf(path, sizeof(path), "%s/store", fkt_tmpdir());
	dir = path;
	fk_store_opts_init(&opts);
	opts.create_mode = FK_STORE_CREATE_IF_MISSING;
	opts.shared_buffers_bytes = 1u << 20;
	opts.segment_bytes = 1u << 20;
	opts.wal_segment_bytes = 1u << 20;
	opts.max_wal_size_bytes = 8u << 20;
	opts.checkpoint_timeout_ms = 200;

	/* Load scale 1 and close cleanly: the base every round starts on. */
	struct fk_store *s;
	struct tpcb_tables t;
	int ret = fk_store_open(dir, &opts, &s);
	CHECK_EQ(ret, 0);
	if (ret)
		return fkt_done();
	CHECK_EQ(tpcb_create(s, 1, &t, NULL, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);
	if (fkt_failures)
		return fkt_done();

	signal(SIGPIPE, SIG_IGN);
	for (int round = 1; round <= rounds && !fkt_failures; round++) {
		int p[2];
		if (pipe(p)) {
			perror("pipe");
			return 1;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			close(p[0]);
			child_main(round, p[1]);
		}
		close(p[1]);
		/* Most rounds: kill 20..400 ms into the commits.  One in
		 * five: kill within 30 ms of the fork, during open or
		 * recovery. */
		if (rand() % 5 == 0) {
			read_acks(p[0], now_ms() + (uint64_t)(rand() % 30), 0);
		} else {
			/* wait for the first commit (up to 10 s) */
			read_acks(p[0], now_ms() + 10000, 1);
			read_acks(p[0],
				  now_ms() + 20 + (uint64_t)(rand() % 380), 0);
		}
		kill(pid, SIGKILL);
		read_acks(p[0], 0, 0); /* what reached the pipe */
		close(p[0]);
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
			fprintf(stderr,
				"round %d: child exited with status "
				"%d before the kill\n",
				round,
				WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			fkt_failures++;
		}
		verify(round);
	}
	free(acks);
	return fkt_done();
}
