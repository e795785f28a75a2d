// SPDX-License-Identifier: MIT
/*
 * test-fsyncq-removed.c - files removed or renamed while their fsync
 * request is queued, with real files and real
 * unlink/rename (no fault injection):
 *
 * The queue (struct fk_fsyncq keeps ids, no descriptors; the sync
 * callback decides how a file is reached):
 *  1. a callback that reopens by path: the file deleted from outside
 *     while queued -> the round fails with -ENOENT, sticky (not counted
 *     as synced, the id stays pending, the callback is not called again);
 *  2. a callback that fsyncs a descriptor kept since the write: the file
 *     renamed while queued -> the fsync of the inode succeeds (right:
 *     the data followed the descriptor);
 *  3. the owner's own drop, forget BEFORE unlink: no error, the callback
 *     is never called for it; forget + unlink while its sync runs: the
 *     result is ignored ("missing"), no error; the batched round
 *     (begin/take/complete) likewise;
 *  4. no crash or hang: a writer thread registering, a dropper thread
 *     forgetting then unlinking, rounds reopening by path, for a while:
 *     never an error, and after the last round nothing live is pending.
 * The store (which never drops files itself: no forget needed):
 *  5. a table segment removed from outside while its page write's fsync
 *     request is pending: the checkpoint fails with -ENOENT, the store
 *     stops, the log names base/T.S; renamed away: the same; replaced by
 *     another file of that name: -ESTALE.  After the renamed segment is
 *     put back, a reopen recovers every acknowledged commit.
 */
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[4096];

static void path_of(char *out, size_t len, uint64_t id)
{
	snprintf(out, len, "%s/f%llu", dir, (unsigned long long)id);
}

static void make_file(uint64_t id)
{
	char p[4200];
	path_of(p, sizeof(p), id);
	CHECK_EQ(fkt_write_file(p, 8192, (unsigned)id), 0);
}

static struct fk_fsyncq_stats stats(struct fk_fsyncq *q)
{
	struct fk_fsyncq_stats st;
	fk_fsyncq_get_stats(q, &st);
	return st;
}

/* Reopen by path, fsync, close (what a store without kept descriptors,
 * or PostgreSQL's md.c after closing a segment, does). */
static atomic_uint path_calls;

static int sync_by_path(void *arg, uint64_t id)
{
	(void)arg;
	char p[4200];
	path_of(p, sizeof(p), id);
	atomic_fetch_add(&path_calls, 1);
	int fd = open(p, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = fsync(fd) ? -errno : 0;
	close(fd);
	return r;
}

static void test_deleted_by_path(void)
{
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(16, 1, &q), 0);
	for (uint64_t id = 1; id <= 3; id++) {
		make_file(id);
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	}
	char p[4200];
	path_of(p, sizeof(p), 2);
	CHECK_EQ(unlink(p), 0); /* from outside: nobody forgot it */
	atomic_store(&path_calls, 0);
	CHECK_EQ(fk_fsyncq_process(q, sync_by_path, NULL, NULL, NULL), -ENOENT);
	CHECK_EQ(atomic_load(&path_calls), 2); /* 1 ok, 2 failed: stop */
	struct fk_fsyncq_stats st = stats(q);
	CHECK_EQ(st.error, -ENOENT);
	CHECK_EQ(st.synced, 1);
	CHECK_EQ(st.missing, 0);
	CHECK_EQ(st.pending, 2); /* 2 and 3 */
	/* Sticky: never retried, even once the name exists again. */
	make_file(2);
	CHECK_EQ(fk_fsyncq_process(q, sync_by_path, NULL, NULL, NULL), -ENOENT);
	CHECK_EQ(atomic_load(&path_calls), 2);
	fk_fsyncq_destroy(q);
}

/* A descriptor kept since the write, per id. */
static int kept_fd[16];

static int sync_kept(void *arg, uint64_t id)
{
	(void)arg;
	return fsync(kept_fd[id]) ? -errno : 0;
}

static void test_renamed_kept_fd(void)
{
	struct fk_fsyncq *q;
	char p[4200], to[4200];
	CHECK_EQ(fk_fsyncq_create(16, 1, &q), 0);
	for (uint64_t id = 1; id <= 3; id++) {
		make_file(id);
		path_of(p, sizeof(p), id);
		kept_fd[id] = open(p, O_RDWR | O_CLOEXEC);
		CHECK(kept_fd[id] >= 0);
		CHECK(pwrite(kept_fd[id], "new", 3, 0) == 3);
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	}
	path_of(p, sizeof(p), 2);
	snprintf(to, sizeof(to), "%s/renamed", dir);
	CHECK_EQ(rename(p, to), 0);
	CHECK_EQ(fk_fsyncq_process(q, sync_kept, NULL, NULL, NULL), 0);
	CHECK_EQ(stats(q).synced, 3);
	CHECK_EQ(stats(q).error, 0);
	/* The data went with the inode. */
	char *c = fkt_read_file(to, NULL);
	CHECK(c && !memcmp(c, "new", 3));
	free(c);
	for (uint64_t id = 1; id <= 3; id++)
		close(kept_fd[id]);
	fk_fsyncq_destroy(q);
}

/* The owner's drop: forget, then unlink. */
struct drop_during {
	struct fk_fsyncq *q;
	uint64_t victim;
};

static int sync_dropping(void *arg, uint64_t id)
{
	struct drop_during *d = arg;
	if (id == d->victim) {
		char p[4200];
		path_of(p, sizeof(p), id);
		fk_fsyncq_forget(d->q, id);
		CHECK_EQ(unlink(p), 0);
	}
	return sync_by_path(NULL, id); /* the victim: -ENOENT */
}

static void test_owner_drop(void)
{
	struct fk_fsyncq *q;
	char p[4200];
	CHECK_EQ(fk_fsyncq_create(16, 1, &q), 0);
	for (uint64_t id = 1; id <= 4; id++) {
		make_file(id);
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	}
	/* Before the round: never synced. */
	fk_fsyncq_forget(q, 1);
	path_of(p, sizeof(p), 1);
	CHECK_EQ(unlink(p), 0);
	/* During its own sync (dropped while in flight): ignored. */
	struct drop_during d = {q, 3};
	atomic_store(&path_calls, 0);
	CHECK_EQ(fk_fsyncq_process(q, sync_dropping, &d, NULL, NULL), 0);
	CHECK_EQ(atomic_load(&path_calls), 3); /* 2, 3, 4 */
	struct fk_fsyncq_stats st = stats(q);
	CHECK_EQ(st.error, 0);
	CHECK_EQ(st.synced, 2);
	CHECK_EQ(st.missing, 1);
	CHECK_EQ(st.forgotten, 2); /* 1 pending, 3 pending and in flight */
	CHECK_EQ(st.pending, 0);

	/* The batched round: one id dropped by its owner while in flight,
	 * one deleted from outside. */
	for (uint64_t id = 5; id <= 7; id++) {
		make_file(id);
		CHECK_EQ(fk_fsyncq_register(q, id), 0);
	}
	uint64_t ids[8];
	int res[8];
	CHECK_EQ(fk_fsyncq_begin(q), 3);
	CHECK_EQ(fk_fsyncq_take(q, ids, 8), 3);
	fk_fsyncq_forget(q, 5);
	path_of(p, sizeof(p), 5);
	CHECK_EQ(unlink(p), 0);
	path_of(p, sizeof(p), 6);
	CHECK_EQ(unlink(p), 0);
	for (int i = 0; i < 3; i++)
		res[i] = sync_by_path(NULL, ids[i]);
	CHECK_EQ(res[0], -ENOENT);
	CHECK_EQ(res[1], -ENOENT);
	CHECK_EQ(res[2], 0);
	CHECK_EQ(fk_fsyncq_complete(q, ids, res, 3), -ENOENT);
	fk_fsyncq_end(q);
	st = stats(q);
	CHECK_EQ(st.error, -ENOENT);
	CHECK_EQ(st.missing, 2); /* 3 and 5 */
	CHECK_EQ(st.synced, 3);	 /* 2, 4, 7 */
	CHECK_EQ(st.pending, 1); /* 6 */
	fk_fsyncq_destroy(q);
}

/* 4: concurrent writers, owner drops and rounds. */
#define NFILES 64u
static pthread_mutex_t file_mu[NFILES];
static int alive[NFILES];
static atomic_int stop_threads;

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *writer(void *arg)
{
	struct fk_fsyncq *q = arg;
	unsigned s = 1;
	while (!atomic_load(&stop_threads)) {
		uint64_t id = 100 + rnd(&s) % NFILES;
		pthread_mutex_lock(&file_mu[id - 100]);
		char p[4200];
		path_of(p, sizeof(p), id);
		int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0) {
			if (pwrite(fd, p, 16, 0) != 16)
				fkt_failures++;
			close(fd);
			alive[id - 100] = 1;
			if (fk_fsyncq_register(q, id) == -EAGAIN) {
				/* a backend fsync, by path */
				if (sync_by_path(NULL, id))
					fkt_failures++;
			}
		}
		pthread_mutex_unlock(&file_mu[id - 100]);
	}
	return NULL;
}

static void *dropper(void *arg)
{
	struct fk_fsyncq *q = arg;
	unsigned s = 2;
	while (!atomic_load(&stop_threads)) {
		uint64_t id = 100 + rnd(&s) % NFILES;
		pthread_mutex_lock(&file_mu[id - 100]);
		if (alive[id - 100]) {
			char p[4200];
			path_of(p, sizeof(p), id);
			fk_fsyncq_forget(q, id); /* first ... */
			if (unlink(p))		 /* ... then unlink */
				fkt_failures++;
			alive[id - 100] = 0;
		}
		pthread_mutex_unlock(&file_mu[id - 100]);
		usleep(50);
	}
	return NULL;
}

static void test_concurrent_drops(void)
{
	struct fk_fsyncq *q;
	pthread_t w, d;
	CHECK_EQ(fk_fsyncq_create(8, 1, &q), 0);
	for (unsigned i = 0; i < NFILES; i++)
		pthread_mutex_init(&file_mu[i], NULL);
	atomic_store(&stop_threads, 0);
	CHECK_EQ(pthread_create(&w, NULL, writer, q), 0);
	CHECK_EQ(pthread_create(&d, NULL, dropper, q), 0);
	int rounds = 0, err = 0;
	for (; rounds < 400 && !err; rounds++) {
		err = fk_fsyncq_process(q, sync_by_path, NULL, NULL, NULL);
		usleep(200);
	}
	atomic_store(&stop_threads, 1);
	pthread_join(w, NULL);
	pthread_join(d, NULL);
	CHECK_EQ(err, 0);
	CHECK_EQ(fk_fsyncq_process(q, sync_by_path, NULL, NULL, NULL), 0);
	struct fk_fsyncq_stats st = stats(q);
	printf("concurrent: %d rounds, %llu registered, %llu synced, %llu "
	       "forgotten, %llu missing (dropped in flight), %llu backend "
	       "fsyncs\n",
	       rounds, (unsigned long long)st.registered,
	       (unsigned long long)st.synced, (unsigned long long)st.forgotten,
	       (unsigned long long)st.missing,
	       (unsigned long long)st.backend_fsyncs);
	CHECK_EQ(st.error, 0);
	CHECK_EQ(st.pending, 0);
	CHECK(st.synced > 0 && st.forgotten > 0);
	fk_fsyncq_destroy(q);
}

/* ---- 5: the store ---- */

enum { GONE_UNLINK, GONE_RENAME, GONE_REPLACE };

static void test_store(int how)
{
	static const char *names[] = {"unlinked", "renamed", "replaced"};
	char sdir[4200], seg[4300], away[4300];
	snprintf(sdir, sizeof(sdir), "%s/store-%d", dir, how);
	snprintf(seg, sizeof(seg), "%s/base/1.0", sdir);
	snprintf(away, sizeof(away), "%s/base/1.0.away", sdir);
	struct fk_store_opts o;
	struct fk_store *s;
	struct fk_batch b;
	uint32_t t;
	uint64_t row[8] = {0};
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.log = fkt_store_log;
	o.checkpoint_timeout_ms = 3600000;
	fkt_store_log_clear();
	CHECK_EQ(fk_store_open(sdir, &o, &s), 0);
	if (fkt_failures)
		return;
	CHECK_EQ(fk_store_create_table(s, "t", sizeof(row), &t), 0);
	fk_batch_init(&b);
	for (uint64_t i = 0; i < 100; i++) {
		row[0] = i;
		fk_batch_reset(&b);
		CHECK_EQ(fk_batch_append_copy(&b, t, row, sizeof(row), NULL),
			 0);
		CHECK_EQ(fk_store_commit(s, &b, NULL), 0);
		if (i == 49) /* base/1.0 exists and is clean */
			CHECK_EQ(fk_store_checkpoint(s), 0);
	}
	/* Pages dirty; the checkpoint will write them through the kept
	 * descriptor and queue the fsync; the name goes first. */
	if (how == GONE_UNLINK) {
		CHECK_EQ(unlink(seg), 0);
	} else {
		CHECK_EQ(rename(seg, away), 0);
		if (how == GONE_REPLACE)
			CHECK_EQ(fkt_write_file(seg, 8192, 7), 0);
	}
	int r = fk_store_checkpoint(s);
	int want = how == GONE_REPLACE ? -ESTALE : -ENOENT;
	printf("store, segment %s before the checkpoint: %s\n", names[how],
	       fk_strerror(r));
	CHECK_EQ(r, want);
	struct fk_store_stats st;
	fk_store_get_stats(s, &st);
	CHECK_EQ(st.error, want);
	CHECK(fkt_store_log_has("base/1.0 was removed or renamed while "
				"its fsync was pending"));
	row[0] = 1000;
	fk_batch_reset(&b);
	CHECK_EQ(fk_batch_append_copy(&b, t, row, sizeof(row), NULL), 0);
	CHECK_EQ(fk_store_commit(s, &b, NULL), -FK_ESTOPPED);
	CHECK_EQ(fk_store_close(s), want);
	fk_batch_release(&b);
	if (how == GONE_UNLINK)
		return; /* its pages older than the redo point are gone */
	/* Put it back: recovery replays from the old redo point. */
	CHECK_EQ(rename(away, seg), 0);
	CHECK_EQ(fk_store_open(sdir, &o, &s), 0);
	if (fkt_failures)
		return;
	uint64_t rows = 0;
	CHECK_EQ(fk_store_table_rows(s, t, &rows), 0);
	CHECK_EQ(rows, 100);
	for (uint64_t i = 0; i < rows; i++) {
		CHECK_EQ(fk_store_read(s, t, i, row), 0);
		CHECK_EQ(row[0], i);
	}
	CHECK_EQ(fk_store_close(s), 0);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	alarm(60); /* a hang fails (SIGALRM), never blocks the suite */
	snprintf(dir, sizeof(dir), "%s", fkt_tmpdir());
	test_deleted_by_path();
	test_renamed_kept_fd();
	test_owner_drop();
	test_concurrent_drops();
	test_store(GONE_UNLINK);
	test_store(GONE_RENAME);
	test_store(GONE_REPLACE);
	return fkt_done();
}
