// SPDX-License-Identifier: MIT
/*
 * test-store-crash.c - crash recovery after kill -9: a child process
 * runs 4 committer threads (add to an account, append a history row
 * naming the transaction) and reports each transaction id on a pipe
 * once its commit returned; the parent kills it at a random moment,
 * reopens the store (recovery), and checks that every acknowledged
 * transaction is in the history and that the account balances sum to
 * the history's deltas.  10 rounds with small segments and buffers, so
 * checkpoints, WAL recycling and evictions happen while being killed.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <poll.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROW 64
#define NACC 5000
#define ROUNDS 10
#define THREADS 4

static char dir[4200];
static int pipe_w;
static struct fk_store *cs;
static uint32_t acc, hist;

static struct fk_store_opts opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 512 << 10;
	o.segment_bytes = 128 << 10;
	o.wal_segment_bytes = 256 << 10;
	o.max_wal_size_bytes = 2 << 20;
	o.checkpoint_timeout_ms = 300;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, ROW);
}

static void *child_worker(void *arg)
{
	uint64_t txid = (uint64_t)(uintptr_t)arg;
	struct fk_batch b;
	fk_batch_init(&b);
	uint32_t x = (uint32_t)txid * 2654435761u + 7;
	for (;; txid += THREADS) {
		uint8_t h[ROW] = {0};
		x = x * 1103515245u + 12345u;
		uint64_t a = (x >> 8) % NACC;
		int64_t delta = (int64_t)(x % 10001) - 5000;
		memcpy(h, &txid, 8);
		memcpy(h + 8, &a, 8);
		memcpy(h + 16, &delta, 8);
		fk_batch_reset(&b);
		fk_batch_add_i64(&b, acc, a, 0, delta, NULL);
		fk_batch_append(&b, hist, h, NULL);
		if (fk_store_commit(cs, &b, NULL))
			_exit(3);
		if (write(pipe_w, &txid, 8) != 8)
			_exit(4);
	}
	return NULL;
}

static void child(uint64_t base)
{
	struct fk_store_opts o = opts();
	if (fk_store_open(dir, &o, &cs))
		_exit(2);
	fk_store_table(cs, "accounts", &acc, NULL);
	fk_store_table(cs, "history", &hist, NULL);
	pthread_t th[THREADS];
	for (uintptr_t i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, child_worker,
			       (void *)(uintptr_t)(base + i));
	pause();
	_exit(0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	uint64_t *acked = NULL;
	size_t nacked = 0, alloc = 0;

	snprintf(dir, sizeof(dir), "%s/db", fkt_tmpdir());
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return fkt_done();
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &acc), 0);
	CHECK_EQ(fk_store_create_table(s, "history", ROW, &hist), 0);
	CHECK_EQ(fk_store_bulk_load(s, acc, NACC, fill, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);

	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (int round = 0; round < ROUNDS; round++) {
		int pfd[2];
		CHECK_EQ(pipe(pfd), 0);
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			pipe_w = pfd[1];
			child((uint64_t)(round + 1) << 32);
		}
		close(pfd[1]);
		/* Read acknowledgements until the kill moment. */
		uint64_t kill_at =
		    fk_now_ns() + (uint64_t)(50 + rand() % 400) * 1000000ull;
		int killed = 0;
		for (;;) {
			if (!killed && fk_now_ns() >= kill_at) {
				kill(pid, SIGKILL);
				killed = 1;
			}
			uint64_t id;
			struct pollfd pf = {.fd = pfd[0], .events = POLLIN};
			if (poll(&pf, 1, 10) == 0)
				continue;
			ssize_t n = read(pfd[0], &id, 8);
			if (n == 8) {
				if (nacked == alloc) {
					alloc = alloc ? alloc * 2 : 4096;
					acked = realloc(acked,
							alloc * sizeof(*acked));
				}
				acked[nacked++] = id;
				continue;
			}
			break; /* EOF: the child is dead */
		}
		close(pfd[0]);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

		/* Recover and check. */
		s = NULL;
		int r = fk_store_open(dir, &o, &s);
		CHECK_EQ(r, 0);
		if (r)
			break;
		struct fk_store_stats ss;
		fk_store_get_stats(s, &ss);
		uint64_t rows;
		CHECK_EQ(fk_store_table_rows(s, hist, &rows), 0);
		uint64_t *seen = malloc((rows + 1) * sizeof(*seen));
		int64_t hsum = 0, asum = 0;
		uint8_t row[ROW];
		for (uint64_t i = 0; i < rows; i++) {
			CHECK_EQ(fk_store_read(s, hist, i, row), 0);
			int64_t d;
			memcpy(&seen[i], row, 8);
			memcpy(&d, row + 16, 8);
			hsum += d;
		}
		for (uint64_t i = 0; i < NACC; i++) {
			CHECK_EQ(fk_store_read(s, acc, i, row), 0);
			int64_t v;
			memcpy(&v, row, 8);
			asum += v;
		}
		CHECK_EQ(asum, hsum);
		qsort(seen, rows, sizeof(*seen), cmp_u64);
		size_t missing = 0;
		for (size_t i = 0; i < nacked; i++)
			if (!bsearch(&acked[i], seen, rows, sizeof(*seen),
				     cmp_u64))
				missing++;
		CHECK_EQ(missing, 0);
		/* No duplicates, no holes (zero rows). */
		for (uint64_t i = 1; i < rows; i++)
			CHECK(seen[i] != seen[i - 1]);
		if (rows)
			CHECK(seen[0] != 0);
		printf("round %d: %zu acknowledged, %llu rows, recovery "
		       "%llu records in %llu ms\n",
		       round, nacked, (unsigned long long)rows,
		       (unsigned long long)ss.recovery_records,
		       (unsigned long long)ss.recovery_ms);
		free(seen);
		CHECK_EQ(fk_store_close(s), 0);
		if (fkt_failures)
			break;
	}
	free(acked);
	return fkt_done();
}
