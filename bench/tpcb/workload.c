// SPDX-License-Identifier: MIT
/*
 * workload.c - the TPC-B (sort of) workload on the page store: schema,
 * load, transaction, consistency sums and the data directory's safe
 * removal.  See workload.h for the layout and the interface routines.
 *
 * The transaction follows pgbench's builtin script (pgbench.c,
 * "tpcb-like"): aid, tid, bid uniform over the scaled ranges, delta
 * uniform in [-5000, 5000]; the three balance updates, the account
 * balance read and the history insert form one write batch, so one
 * commit makes all of them durable or none.
 */
#include "workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tpcb_put_i64(void *p, int64_t v)
{
	uint64_t u = (uint64_t)v;
	unsigned char *c = p;
	for (int i = 0; i < 8; i++)
		c[i] = (unsigned char)(u >> (8 * i));
}

int64_t tpcb_get_i64(const void *p)
{
	const unsigned char *c = p;
	uint64_t u = 0;
	for (int i = 0; i < 8; i++)
		u |= (uint64_t)c[i] << (8 * i);
	return (int64_t)u;
}

/* ---- random numbers (xoshiro256**, Blackman & Vigna 2018) ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void tpcb_rng_seed(struct tpcb_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t tpcb_rng_next(struct tpcb_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

int64_t tpcb_rng_range(struct tpcb_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)(hi - lo) + 1;
	/* Lemire's nearly-divisionless method would do; the modulo bias of
	 * a 64-bit draw over spans of at most millions is below 1e-12. */
	return lo + (int64_t)(tpcb_rng_next(r) % span);
}

double tpcb_rng_double(struct tpcb_rng *r)
{
	/* 53 random bits, shifted into (0, 1]. */
	return ((double)(tpcb_rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

/* ---- schema and load ---- */

struct load_arg {
	uint64_t per_branch; /* rows per branch: 1, 10 or 100,000 */
	uint64_t total;
	tpcb_load_progress_fn progress;
	void *progress_arg;
};

static void fill_row(void *arg, uint64_t rowno, void *row)
{
	struct load_arg *a = arg;
	unsigned char *c = row;
	memset(c, ' ', TPCB_ROW_BYTES);
	tpcb_put_i64(c + TPCB_OFF_ID, (int64_t)rowno + 1);
	tpcb_put_i64(c + TPCB_OFF_BALANCE, 0);
	tpcb_put_i64(c + TPCB_OFF_BID, (int64_t)(rowno / a->per_branch) + 1);
	if (a->progress && ((rowno + 1) % 100000 == 0 || rowno + 1 == a->total))
		a->progress(a->progress_arg, rowno + 1, a->total);
}

int tpcb_create(struct fk_store *s, uint64_t scale, struct tpcb_tables *t,
		tpcb_load_progress_fn progress, void *progress_arg)
{
	int ret;
	if (scale < 1)
		return -EINVAL;
	if ((ret = fk_store_create_table(s, "branches", TPCB_ROW_BYTES,
					 &t->branches)) ||
	    (ret = fk_store_create_table(s, "tellers", TPCB_ROW_BYTES,
					 &t->tellers)) ||
	    (ret = fk_store_create_table(s, "accounts", TPCB_ROW_BYTES,
					 &t->accounts)) ||
	    (ret = fk_store_create_table(s, "history", TPCB_HISTORY_ROW_BYTES,
					 &t->history)))
		return ret;
	t->scale = scale;

	struct load_arg a = {.per_branch = 1, .total = scale * TPCB_NBRANCHES};
	ret = fk_store_bulk_load(s, t->branches, a.total, fill_row, &a);
	if (ret)
		return ret;
	a.per_branch = TPCB_NTELLERS;
	a.total = scale * TPCB_NTELLERS;
	ret = fk_store_bulk_load(s, t->tellers, a.total, fill_row, &a);
	if (ret)
		return ret;
	a.per_branch = TPCB_NACCOUNTS;
	a.total = scale * TPCB_NACCOUNTS;
	a.progress = progress;
	a.progress_arg = progress_arg;
	return fk_store_bulk_load(s, t->accounts, a.total, fill_row, &a);
}

/* Table @name's id into *@id; -FK_ECORRUPT unless its rows are
 * @row_bytes long; else fk_store_table's error. */
static int open_table(struct fk_store *s, const char *name, uint32_t *id,
		      uint32_t row_bytes)
{
	uint32_t rb;
	int ret = fk_store_table(s, name, id, &rb);
	if (ret)
		return ret;
	return rb == row_bytes ? 0 : -FK_ECORRUPT;
}

int tpcb_open(struct fk_store *s, struct tpcb_tables *t)
{
	uint64_t nb, nt, na;
	int ret;
	if ((ret = open_table(s, "branches", &t->branches, TPCB_ROW_BYTES)) ||
	    (ret = open_table(s, "tellers", &t->tellers, TPCB_ROW_BYTES)) ||
	    (ret = open_table(s, "accounts", &t->accounts, TPCB_ROW_BYTES)) ||
	    (ret =
		 open_table(s, "history", &t->history, TPCB_HISTORY_ROW_BYTES)))
		return ret;
	if ((ret = fk_store_table_rows(s, t->branches, &nb)) ||
	    (ret = fk_store_table_rows(s, t->tellers, &nt)) ||
	    (ret = fk_store_table_rows(s, t->accounts, &na)))
		return ret;
	if (nb < 1 || nt != nb * TPCB_NTELLERS || na != nb * TPCB_NACCOUNTS)
		return -FK_ECORRUPT;
	t->scale = nb;
	return 0;
}

/* ---- the transaction ---- */

void tpcb_txn_draw(const struct tpcb_tables *t, struct tpcb_rng *r,
		   struct tpcb_txn *x)
{
	x->aid = tpcb_rng_range(r, 1, (int64_t)(TPCB_NACCOUNTS * t->scale));
	x->tid = tpcb_rng_range(r, 1, (int64_t)(TPCB_NTELLERS * t->scale));
	x->bid = tpcb_rng_range(r, 1, (int64_t)(TPCB_NBRANCHES * t->scale));
	x->delta = tpcb_rng_range(r, -TPCB_MAX_DELTA, TPCB_MAX_DELTA);
}

/* The history row of @x (the one layout of TPCB_H_*), stamped now. */
static void history_row(unsigned char h[TPCB_HISTORY_ROW_BYTES],
			const struct tpcb_txn *x)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	memset(h, ' ', TPCB_HISTORY_ROW_BYTES);
	tpcb_put_i64(h + TPCB_H_TID, x->tid);
	tpcb_put_i64(h + TPCB_H_BID, x->bid);
	tpcb_put_i64(h + TPCB_H_AID, x->aid);
	tpcb_put_i64(h + TPCB_H_DELTA, x->delta);
	tpcb_put_i64(h + TPCB_H_MTIME,
		     (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000);
	tpcb_put_i64(h + TPCB_H_TXID, (int64_t)x->txid);
}

int tpcb_txn_commit(struct fk_store *s, const struct tpcb_tables *t,
		    struct fk_batch *b, struct tpcb_txn *x)
{
	unsigned char h[TPCB_HISTORY_ROW_BYTES];
	int ret;

	history_row(h, x);

	fk_batch_reset(b);
	if ((ret =
		 fk_batch_add_i64(b, t->accounts, (uint64_t)x->aid - 1,
				  TPCB_OFF_BALANCE, x->delta, &x->abalance)) ||
	    (ret = fk_batch_add_i64(b, t->tellers, (uint64_t)x->tid - 1,
				    TPCB_OFF_BALANCE, x->delta, NULL)) ||
	    (ret = fk_batch_add_i64(b, t->branches, (uint64_t)x->bid - 1,
				    TPCB_OFF_BALANCE, x->delta, NULL)) ||
	    (ret = fk_batch_append(b, t->history, h, &x->hrow)))
		return ret;
	return fk_store_commit(s, b, &x->lsn);
}

/* ---- consistency ---- */

static int sum_table(struct fk_store *s, uint32_t table, uint64_t rows,
		     uint32_t off, uint32_t row_bytes, int64_t *sum)
{
	unsigned char buf[TPCB_ROW_BYTES > TPCB_HISTORY_ROW_BYTES
			      ? TPCB_ROW_BYTES
			      : TPCB_HISTORY_ROW_BYTES];
	int64_t total = 0;
	(void)row_bytes;
	for (uint64_t r = 0; r < rows; r++) {
		int ret = fk_store_read(s, table, r, buf);
		if (ret)
			return ret;
		total += tpcb_get_i64(buf + off);
	}
	*sum = total;
	return 0;
}

int tpcb_sums(struct fk_store *s, const struct tpcb_tables *t,
	      struct tpcb_sums *sums)
{
	int ret;
	memset(sums, 0, sizeof(*sums));
	if ((ret = fk_store_table_rows(s, t->history, &sums->history_rows)))
		return ret;
	if ((ret = sum_table(s, t->accounts, t->scale * TPCB_NACCOUNTS,
			     TPCB_OFF_BALANCE, TPCB_ROW_BYTES,
			     &sums->accounts)) ||
	    (ret =
		 sum_table(s, t->tellers, t->scale * TPCB_NTELLERS,
			   TPCB_OFF_BALANCE, TPCB_ROW_BYTES, &sums->tellers)) ||
	    (ret =
		 sum_table(s, t->branches, t->scale * TPCB_NBRANCHES,
			   TPCB_OFF_BALANCE, TPCB_ROW_BYTES, &sums->branches)))
		return ret;
	return sum_table(s, t->history, sums->history_rows, TPCB_H_DELTA,
			 TPCB_HISTORY_ROW_BYTES, &sums->history);
}

int tpcb_sums_ok(const struct tpcb_sums *s)
{
	return s->accounts == s->tellers && s->tellers == s->branches &&
	       s->branches == s->history;
}

int tpcb_history_read(struct fk_store *s, const struct tpcb_tables *t,
		      uint64_t row, struct tpcb_txn *x)
{
	unsigned char h[TPCB_HISTORY_ROW_BYTES];
	int ret = fk_store_read(s, t->history, row, h);
	if (ret)
		return ret;
	x->tid = tpcb_get_i64(h + TPCB_H_TID);
	x->bid = tpcb_get_i64(h + TPCB_H_BID);
	x->aid = tpcb_get_i64(h + TPCB_H_AID);
	x->delta = tpcb_get_i64(h + TPCB_H_DELTA);
	x->txid = (uint64_t)tpcb_get_i64(h + TPCB_H_TXID);
	x->hrow = row;
	return 0;
}

/* ---- the data directory ---- */

int tpcb_datadir_mark(const char *dir, uint64_t scale)
{
	char text[96];
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	int fd =
	    openat(dfd, TPCB_MARKER,
		   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	int ret = 0;
	if (fd < 0) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	int n = snprintf(text, sizeof(text),
			 "flushkit tpcb data directory\nscale %llu\n",
			 (unsigned long long)scale);
	if (write(fd, text, (size_t)n) != n)
		ret = -EIO;
	if (!ret && fsync(fd))
		ret = -errno;
	close(fd);
	if (!ret && fsync(dfd))
		ret = -errno;
	close(dfd);
	return ret;
}

int tpcb_datadir_reset(const char *dir)
{
	struct stat st;
	if (lstat(dir, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* Refuse anything that is not ours, unless it is empty. */
	struct stat mst;
	if (fstatat(dfd, TPCB_MARKER, &mst, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISREG(mst.st_mode)) {
		DIR *d = fdopendir(dfd);
		if (!d) {
			close(dfd);
			return -ENOMEM;
		}
		struct dirent *e;
		int empty = 1;
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				empty = 0;
		closedir(d);
		return empty ? 0 : -EEXIST;
	}
	close(dfd);
	/* Under the store's lock: -EBUSY while a run has it open. */
	return fk_store_destroy(dir);
}

/* ---- pgbench's builtin scripts ---- */

static const char *const tpcb_like_steps[] = {
    "\\set aid random(1, 100000 * :scale)",
    "\\set bid random(1, 1 * :scale)",
    "\\set tid random(1, 10 * :scale)",
    "\\set delta random(-5000, 5000)",
    "BEGIN;",
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = "
    ":aid;",
    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
    "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = "
    ":tid;",
    "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = "
    ":bid;",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES "
    "(:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
    "END;",
};

static const char *const simple_update_steps[] = {
    "\\set aid random(1, 100000 * :scale)",
    "\\set bid random(1, 1 * :scale)",
    "\\set tid random(1, 10 * :scale)",
    "\\set delta random(-5000, 5000)",
    "BEGIN;",
    "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = "
    ":aid;",
    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
    "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES "
    "(:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);",
    "END;",
};

static const char *const select_only_steps[] = {
    "\\set aid random(1, 100000 * :scale)",
    "SELECT abalance FROM pgbench_accounts WHERE aid = :aid;",
};

const struct tpcb_script tpcb_scripts[TPCB_NR_SCRIPTS] = {
    {"tpcb-like", "<builtin: TPC-B (sort of)>", 11, tpcb_like_steps},
    {"simple-update", "<builtin: simple update>", 9, simple_update_steps},
    {"select-only", "<builtin: select only>", 2, select_only_steps},
};

int tpcb_script_find(const char *name)
{
	int found = -ENOENT;
	size_t n = strlen(name);
	for (int i = 0; i < TPCB_NR_SCRIPTS; i++) {
		if (!strcmp(tpcb_scripts[i].name, name))
			return i;
		if (n && !strncmp(tpcb_scripts[i].name, name, n))
			found = found == -ENOENT ? i : -EEXIST;
	}
	return found;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Close step @k: add the time since *@t to step_ns[k]. */
static void step_done(uint64_t *step_ns, int k, uint64_t *t)
{
	if (!step_ns)
		return;
	uint64_t now = mono_ns();
	step_ns[k] += now - *t;
	*t = now;
}

int tpcb_script_run(struct fk_store *s, const struct tpcb_tables *t,
		    struct fk_batch *b, int id, struct tpcb_rng *r,
		    struct tpcb_txn *x, uint64_t *step_ns)
{
	unsigned char row[TPCB_ROW_BYTES], h[TPCB_HISTORY_ROW_BYTES];
	uint64_t t0 = step_ns ? mono_ns() : 0;
	int k = 0, ret;

	x->aid = tpcb_rng_range(r, 1, (int64_t)(TPCB_NACCOUNTS * t->scale));
	step_done(step_ns, k++, &t0);
	x->step = k;
	if (id == TPCB_SCRIPT_SELECT_ONLY) {
		ret = fk_store_read(s, t->accounts, (uint64_t)x->aid - 1, row);
		if (!ret)
			x->abalance = tpcb_get_i64(row + TPCB_OFF_BALANCE);
		step_done(step_ns, k, &t0);
		return ret;
	}
	x->bid = tpcb_rng_range(r, 1, (int64_t)(TPCB_NBRANCHES * t->scale));
	step_done(step_ns, k++, &t0);
	x->tid = tpcb_rng_range(r, 1, (int64_t)(TPCB_NTELLERS * t->scale));
	step_done(step_ns, k++, &t0);
	x->delta = tpcb_rng_range(r, -TPCB_MAX_DELTA, TPCB_MAX_DELTA);
	step_done(step_ns, k++, &t0);
	fk_batch_reset(b); /* BEGIN */
	step_done(step_ns, k++, &t0);
	x->step = k;
	if ((ret = fk_batch_add_i64(b, t->accounts, (uint64_t)x->aid - 1,
				    TPCB_OFF_BALANCE, x->delta, &x->abalance)))
		return ret;
	step_done(step_ns, k++, &t0);
	x->step = k;
	if ((ret = fk_store_read(s, t->accounts, (uint64_t)x->aid - 1, row)))
		return ret;
	step_done(step_ns, k++, &t0);
	if (id == TPCB_SCRIPT_TPCB_LIKE) {
		x->step = k;
		if ((ret = fk_batch_add_i64(b, t->tellers, (uint64_t)x->tid - 1,
					    TPCB_OFF_BALANCE, x->delta, NULL)))
			return ret;
		step_done(step_ns, k++, &t0);
		x->step = k;
		if ((ret =
			 fk_batch_add_i64(b, t->branches, (uint64_t)x->bid - 1,
					  TPCB_OFF_BALANCE, x->delta, NULL)))
			return ret;
		step_done(step_ns, k++, &t0);
	}
	history_row(h, x);
	x->step = k;
	if ((ret = fk_batch_append(b, t->history, h, &x->hrow)))
		return ret;
	step_done(step_ns, k++, &t0);
	x->step = k;
	ret = fk_store_commit(s, b, &x->lsn); /* END */
	step_done(step_ns, k, &t0);
	return ret;
}
