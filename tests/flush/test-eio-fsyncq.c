// SPDX-License-Identifier: MIT
/*
 * test-eio-fsyncq - several fsync requests
 * de-duplicated onto one fsync by the fsync request queue (compaction of
 * a full queue, absorption into the pending set, a file known under two
 * ids in a batched round) and that ONE fsync fails with a real EIO:
 * every request it covered gets the error.  The queue has no per-request
 * waiters, so "gets the error" means: the round that ran the fsync
 * returns -EIO, nothing covered by it counts as synced, the file stays
 * pending, the error is sticky (every later round and the requests
 * registered after it see it) and the fsync is never retried, although
 * the kernel would now answer 0 to a retry (the data is not on disk).
 *
 * Stack: ext4 (and xfs) over the lab disk daemon (flushkit-diskd, model
 * ram; fkfault.h).
 *  1. fk_fsyncq_process: file X registered 12 times into a queue of 4
 *     (compacted), between two good files; afterwards, with the device
 *     working again, a retried fsync would say 0 while the covered
 *     writes are not on disk (read back after dropping the cache).
 *  2. X written and registered again WHILE its fsync runs (absorbed:
 *     "redirtied" in flight), and that fsync fails.
 *  3. A batched round (begin/take/fk_fsync_batch_run/complete), io_uring
 *     and threads: X under two ids, both on one descriptor; the batch
 *     issues one fsync of X per descriptor, the kernel reports EIO once;
 *     both ids get it.
 */
#include "fkfault.h"
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 65536
#define MAX_IDS 8

static char buf[CHUNK];

struct files {
	struct fkt_stack *st;
	int fd[MAX_IDS];     /* by file id; -1 = none */
	int calls[MAX_IDS];  /* sync callbacks per id */
	uint64_t x_id;	     /* the failing file, for case 2 */
	struct fk_fsyncq *q; /* case 2: register from the callback */
	int redirty;
};

static int open_file(struct fkt_stack *st, const char *name)
{
	char path[720];
	snprintf(path, sizeof(path), "%s/%s", st->fs.mnt, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	memset(buf, 'a', sizeof(buf));
	for (int k = 0; k < 16; k++)
		CHECK_EQ(pwrite(fd, buf, CHUNK, (off_t)k * CHUNK), CHUNK);
	CHECK_EQ(fsync(fd), 0); /* blocks allocated, on disk */
	return fd;
}

static void fail_fd(struct fkt_stack *st, const char *name)
{
	char path[720];
	snprintf(path, sizeof(path), "%s/%s", st->fs.mnt, name);
	CHECK(fkt_dev_fail_file(&st->dev, path, FKT_OP_WRITE, EIO) >= 1);
}

static void write_chunk(int fd, int k, char c)
{
	memset(buf, c, sizeof(buf));
	CHECK_EQ(pwrite(fd, buf, CHUNK, (off_t)(k % 16) * CHUNK), CHUNK);
}

static int sync_cb(void *arg, uint64_t id)
{
	struct files *f = arg;
	if (id >= MAX_IDS || f->fd[id] < 0)
		return -EBADF;
	f->calls[id]++;
	if (f->redirty && id == f->x_id) {
		/* A writer changes X while its fsync is about to run and asks
		 * for another fsync; the checkpointer absorbs it now. */
		write_chunk(f->fd[id], 3, 'r');
		CHECK_EQ(fk_fsyncq_register(f->q, id), 0);
		CHECK(fk_fsyncq_absorb(f->q) >= 1);
	}
	return fsync(f->fd[id]) == 0 ? 0 : -errno;
}

static void close_all(struct files *f)
{
	for (int i = 0; i < MAX_IDS; i++)
		if (f->fd[i] >= 0) {
			/* ids may share a descriptor */
			for (int j = i + 1; j < MAX_IDS; j++)
				if (f->fd[j] == f->fd[i])
					f->fd[j] = -1;
			close(f->fd[i]);
			f->fd[i] = -1;
		}
}

/* 1: compaction and absorption fold 12 requests onto one failing fsync. */
static void test_process(struct fkt_stack *st)
{
	struct files f;
	memset(&f, 0, sizeof(f));
	memset(f.fd, -1, sizeof(f.fd));
	f.st = st;
	f.fd[1] = open_file(st, "p1");
	f.fd[2] = open_file(st, "p2"); /* X */
	f.fd[3] = open_file(st, "p3");
	fail_fd(st, "p2");
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(4, 1, &q), 0);

	write_chunk(f.fd[1], 0, 'b');
	CHECK_EQ(fk_fsyncq_register(q, 1), 0);
	for (int k = 0; k < 12; k++) {
		write_chunk(f.fd[2], k, 'b');
		CHECK_EQ(fk_fsyncq_register(q, 2), 0);
	}
	write_chunk(f.fd[3], 0, 'b');
	CHECK_EQ(fk_fsyncq_register(q, 3), 0);
	struct fk_fsyncq_stats s;
	fk_fsyncq_get_stats(q, &s);
	CHECK_EQ(s.registered, 14);
	CHECK(s.compactions >= 1);
	CHECK(s.compacted >= 9);
	CHECK_EQ(s.backend_fsyncs, 0);

	CHECK_EQ(fk_fsyncq_process(q, sync_cb, &f, NULL, NULL), -EIO);
	CHECK_EQ(f.calls[1], 1);
	CHECK_EQ(f.calls[2], 1); /* one fsync for the 12 requests */
	CHECK_EQ(f.calls[3], 0); /* the round stopped at the failure */
	fk_fsyncq_get_stats(q, &s);
	CHECK_EQ(s.error, -EIO);
	CHECK_EQ(s.synced, 1);
	CHECK_EQ(s.pending, 2);

	/* Sticky: later rounds, also after new requests, fail at once. */
	CHECK_EQ(fk_fsyncq_process(q, sync_cb, &f, NULL, NULL), -EIO);
	write_chunk(f.fd[2], 0, 'c');
	CHECK_EQ(fk_fsyncq_register(q, 2), 0);
	CHECK_EQ(fk_fsyncq_process(q, sync_cb, &f, NULL, NULL), -EIO);
	CHECK_EQ(fk_fsyncq_begin(q), -EIO);
	CHECK_EQ(f.calls[2], 1); /* never retried */
	CHECK_EQ(f.calls[3], 0);
	/* What a retry would have said once the device works again: 0
	 * (the newest write goes out fine)... */
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	CHECK_EQ(fsync(f.fd[2]), 0);
	/* ...while the writes covered by the failed fsync are not on disk:
	 * their pages were marked clean, and the disk has the old data. */
	char path[720];
	snprintf(path, sizeof(path), "%s/p2", st->fs.mnt);
	CHECK_EQ(fkt_drop_file_cache(path), 0);
	char c = 0;
	CHECK_EQ(pread(f.fd[2], &c, 1, 5 * CHUNK), 1);
	CHECK_EQ(c, 'a');
	CHECK_EQ(pread(f.fd[2], &c, 1, 0), 1);
	CHECK_EQ(c, 'c');
	fk_fsyncq_destroy(q);
	close_all(&f);
}

/* 2: a request absorbed while X's fsync runs, and that fsync fails. */
static void test_redirtied(struct fkt_stack *st)
{
	struct files f;
	memset(&f, 0, sizeof(f));
	memset(f.fd, -1, sizeof(f.fd));
	f.st = st;
	f.fd[4] = open_file(st, "r4"); /* X */
	f.fd[5] = open_file(st, "r5");
	fail_fd(st, "r4");
	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(16, 1, &q), 0);
	f.q = q;
	f.x_id = 4;
	f.redirty = 1;
	write_chunk(f.fd[4], 0, 'b');
	CHECK_EQ(fk_fsyncq_register(q, 4), 0);
	write_chunk(f.fd[5], 0, 'b');
	CHECK_EQ(fk_fsyncq_register(q, 5), 0);

	CHECK_EQ(fk_fsyncq_process(q, sync_cb, &f, NULL, NULL), -EIO);
	f.redirty = 0;
	CHECK_EQ(f.calls[4], 1);
	CHECK_EQ(f.calls[5], 0);
	struct fk_fsyncq_stats s;
	fk_fsyncq_get_stats(q, &s);
	CHECK_EQ(s.error, -EIO);
	CHECK_EQ(s.synced, 0);
	CHECK_EQ(s.pending, 2); /* X (both requests) and 5 */
	CHECK_EQ(fk_fsyncq_process(q, sync_cb, &f, NULL, NULL), -EIO);
	CHECK_EQ(f.calls[4], 1);
	fk_fsyncq_destroy(q);
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	close_all(&f);
}

/* 3: a batched round; X is ids 2 and 5 on one descriptor. */
static void test_batched_round(struct fkt_stack *st, int sync_io)
{
	fprintf(stderr, "   batched round, %s\n", fk_sync_io_name(sync_io));
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = sync_io;
	o.queue_depth = 8;
	struct fk_fsync_batch *b;
	int r = fk_fsync_batch_create(&o, &b);
	if (r && sync_io == FK_SYNC_IO_URING) {
		fprintf(stderr, "no io_uring here (%s): skipped\n",
			strerror(-r));
		return;
	}
	CHECK_EQ(r, 0);
	if (r)
		return;
	struct files f;
	memset(&f, 0, sizeof(f));
	memset(f.fd, -1, sizeof(f.fd));
	char name[32];
	for (int id = 1; id <= 6; id++) {
		if (id == 5)
			continue;
		snprintf(name, sizeof(name), "b%d-%d", sync_io, id);
		f.fd[id] = open_file(st, name);
	}
	f.fd[5] = f.fd[2];
	snprintf(name, sizeof(name), "b%d-2", sync_io);
	fail_fd(st, name);

	struct fk_fsyncq *q;
	CHECK_EQ(fk_fsyncq_create(6, 1, &q), 0);
	for (int k = 0; k < 8; k++) {
		int id = k % 2 ? 2 : 5; /* X under both ids, many times */
		write_chunk(f.fd[id], k, 'b');
		CHECK_EQ(fk_fsyncq_register(q, (uint64_t)id), 0);
	}
	for (int id = 1; id <= 6; id++) {
		if (id == 2 || id == 5)
			continue;
		write_chunk(f.fd[id], 0, 'b');
		CHECK_EQ(fk_fsyncq_register(q, (uint64_t)id), 0);
	}
	struct fk_fsyncq_stats s;
	fk_fsyncq_get_stats(q, &s);
	CHECK(s.compactions >= 1);
	CHECK_EQ(s.backend_fsyncs, 0);
	CHECK_EQ(fk_fsyncq_begin(q), 6);
	uint64_t ids[8];
	CHECK_EQ(fk_fsyncq_take(q, ids, 8), 6);
	struct fk_fsync_req req[6];
	memset(req, 0, sizeof(req));
	for (int i = 0; i < 6; i++) {
		req[i].fd = f.fd[ids[i]];
		req[i].op = FK_FSYNC_OP_FSYNC;
		req[i].cookie = ids[i];
	}
	CHECK_EQ(fk_fsync_batch_run(b, req, 6), -EIO);
	int res[6], issued_x = 0;
	for (int i = 0; i < 6; i++) {
		res[i] = req[i].result;
		int bad = ids[i] == 2 || ids[i] == 5;
		CHECK_EQ(res[i], bad ? -EIO : 0);
		if (bad)
			issued_x += req[i].issued;
	}
	CHECK(issued_x >= 1);
	CHECK_EQ(fk_fsyncq_complete(q, ids, res, 6), -EIO);
	fk_fsyncq_end(q);
	fk_fsyncq_get_stats(q, &s);
	CHECK_EQ(s.error, -EIO);
	CHECK_EQ(s.synced, 4);
	CHECK_EQ(s.pending, 2); /* ids 2 and 5 */
	CHECK_EQ(fk_fsyncq_begin(q), -EIO);
	CHECK_EQ(fk_fsyncq_process(q, sync_cb, &f, NULL, NULL), -EIO);
	CHECK_EQ(f.calls[2] + f.calls[5], 0);
	fk_fsyncq_destroy(q);
	fk_fsync_batch_destroy(b);
	CHECK_EQ(fkt_dev_clear(&st->dev), 0);
	close_all(&f);
}

static void run(const char *type, uint64_t bytes)
{
	fprintf(stderr, "-- %s\n", type);
	struct fkt_stack st;
	int r = fkt_stack_create(&st, type, bytes, 0);
	if (r == 77)
		SKIP("needs root, /dev/fuse, loop devices, mkfs.%s", type);
	CHECK_EQ(r, 0);
	if (r)
		return;
	test_process(&st);
	test_redirtied(&st);
	test_batched_round(&st, FK_SYNC_IO_URING);
	test_batched_round(&st, FK_SYNC_IO_THREADS);
	fkt_stack_destroy(&st);
}

int main(void)
{
	run("ext4", 64 << 20);
	if (system("command -v mkfs.xfs >/dev/null 2>&1") == 0)
		run("xfs", 300 << 20);
	return fkt_done();
}
