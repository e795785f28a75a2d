// SPDX-License-Identifier: MIT
/*
 * fkacks.c - acknowledged TPC-B commits and their check (fkacks.h).
 */
#include "fkacks.h"
#include "fkloop.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void fkt_acks_init(struct fkt_acks *a, uint64_t first_txid)
{
	memset(a, 0, sizeof(*a));
	a->next_txid = first_txid;
	a->fd = -1;
}

void fkt_acks_release(struct fkt_acks *a)
{
	if (a->fd >= 0)
		close(a->fd);
	free(a->v);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

int fkt_acks_record(struct fkt_acks *a, const char *path)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return a->fd < 0 ? -errno : 0;
}

static int add(struct fkt_acks *a, const struct fkt_ack *k)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		struct fkt_ack *p = realloc(a->v, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = cap;
	}
	a->v[a->n++] = *k;
	return 0;
}

int fkt_acks_load(struct fkt_acks *a, const char *path)
{
	size_t len = 0;
	char *p = fkt_read_file(path, &len);
	if (!p) {
		int e = errno;
		return e ? -e : -EIO;
	}
	a->n = 0;
	int r = 0;
	for (size_t off = 0; !r && off + sizeof(struct fkt_ack) <= len;
	     off += sizeof(struct fkt_ack)) {
		struct fkt_ack k;
		memcpy(&k, p + off, sizeof(k));
		r = add(a, &k);
	}
	free(p);
	return r;
}

int fkt_acks_txn(struct fkt_acks *a, struct fk_store *s,
		 const struct tpcb_tables *t, struct tpcb_rng *rng,
		 struct fk_batch *b)
{
	struct tpcb_txn x;
	tpcb_txn_draw(t, rng, &x);
	x.txid = a->next_txid++;
	int r = tpcb_txn_commit(s, t, b, &x);
	if (r)
		return r;
	struct fkt_ack k = {x.txid, x.hrow, x.aid, x.delta};
	CHECK_EQ(add(a, &k), 0);
	if (a->fd >= 0)
		CHECK_EQ(write(a->fd, &k, sizeof(k)), (ssize_t)sizeof(k));
	return 0;
}

void fkt_acks_verify(const struct fkt_acks *a, struct fk_store *s,
		     const char *when)
{
	struct tpcb_tables t;
	struct tpcb_sums sums;
	size_t bad = 0;
	CHECK_EQ(tpcb_open(s, &t), 0);
	for (size_t i = 0; i < a->n; i++) {
		const struct fkt_ack *k = &a->v[i];
		struct tpcb_txn x;
		int r = tpcb_history_read(s, &t, k->hrow, &x);
		if (r || x.txid != k->txid || x.aid != k->aid ||
		    x.delta != k->delta) {
			if (bad++ < 5)
				fprintf(stderr,
					"%s: txid %llu not at history row "
					"%llu (%s)\n",
					when, (unsigned long long)k->txid,
					(unsigned long long)k->hrow,
					r ? fk_strerror(r) : "other row");
		}
	}
	CHECK_EQ(bad, 0);
	memset(&sums, 0, sizeof(sums));
	CHECK_EQ(tpcb_sums(s, &t, &sums), 0);
	CHECK(sums.history_rows >= a->n);
	CHECK(tpcb_sums_ok(&sums));
	printf("%s: %zu acknowledged, %llu history rows, sums %lld/%lld/"
	       "%lld/%lld (%s)\n",
	       when, a->n, (unsigned long long)sums.history_rows,
	       (long long)sums.accounts, (long long)sums.tellers,
	       (long long)sums.branches, (long long)sums.history,
	       tpcb_sums_ok(&sums) ? "hold" : "DO NOT HOLD");
}

void fkt_full_store_opts(struct fk_store_opts *o, uint64_t shared_buffers_bytes,
			 int print)
{
	fk_store_opts_init(o);
	o->create_mode = FK_STORE_CREATE_IF_MISSING;
	o->shared_buffers_bytes = shared_buffers_bytes;
	o->segment_bytes = 1u << 20;
	o->wal_segment_bytes = FKT_FULL_WAL_SEG;
	o->max_wal_size_bytes = 1ull << 30;
	o->checkpoint_timeout_ms = 3600000;
	o->log = fkt_store_log;
	o->log_arg = print ? stderr : NULL;
}

int fkt_acks_until_error(struct fkt_acks *a, struct fk_store *s,
			 const struct tpcb_tables *t, struct tpcb_rng *rng,
			 struct fk_batch *b, int max)
{
	int r = 0;
	for (int i = 0; i < max && !r; i++)
		r = fkt_acks_txn(a, s, t, rng, b);
	return r;
}

int fkt_acks_through_enospc(struct fkt_acks *a, struct fk_store *s,
			    const struct tpcb_tables *t, struct tpcb_rng *rng,
			    struct fk_batch *b, int want, int max_waits,
			    int *waits)
{
	int ok = 0, w = 0;
	while (ok < want && w < max_waits) {
		int r = fkt_acks_txn(a, s, t, rng, b);
		if (r == -ENOSPC) {
			w++;
			usleep(10000);
			continue;
		}
		CHECK_EQ(r, 0);
		if (r)
			break;
		ok++;
	}
	if (waits)
		*waits = w;
	return ok;
}

void fkt_acks_power_cut(struct fkt_fs *fs, struct fk_store **s)
{
	CHECK_EQ(fkt_fs_goingdown(fs, FKT_GOINGDOWN_NOLOGFLUSH), 0);
	if (*s)
		CHECK(fk_store_close(*s) != 0); /* the fs is down */
	*s = NULL;
	CHECK_EQ(fkt_fs_umount(fs), 0);
	CHECK_EQ(fkt_fs_mount(fs), 0);
}

struct fk_store *fkt_acks_open_verify(const struct fkt_acks *a, const char *dir,
				      const struct fk_store_opts *o,
				      const char *when)
{
	struct fk_store *s = NULL;
	int r = fk_store_open(dir, o, &s);
	CHECK_EQ(r, 0);
	if (r)
		return NULL;
	fkt_acks_verify(a, s, when);
	return s;
}

void fkt_acks_reopen_check(const struct fkt_acks *a, const char *dir,
			   const struct fk_store_opts *o, const char *when)
{
	struct fk_store *s = fkt_acks_open_verify(a, dir, o, when);
	if (s)
		CHECK_EQ(fk_store_close(s), 0);
}

unsigned fkt_full_test_start(struct fkt_fs *fs)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsigned seed = fkt_test_seed();
	if (!fkt_is_root())
		SKIP("needs root and loop devices");
	fkt_fs_guard(fs);
	return seed;
}
