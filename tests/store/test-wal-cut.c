// SPDX-License-Identifier: MIT
/*
 * test-wal-cut.c - the WAL cut inside one segment (torn or stale WAL tail;
 * wal.c invariant W10: "the cut segment is zeroed from the cut on").
 *
 * A store commits NCOMMIT records of one size S (one 64-byte history
 * append each, no full-page images) into one WAL segment and crashes
 * (a child exits without closing).  Then one record in the MIDDLE of
 * that segment is damaged (a payload byte, its CRC field, or its LSN
 * field), while the records after it in the same segment stay intact.
 *
 * First recovery: must stop at the damaged record (the intact ones
 * after it follow a bad record: lost) and cut the WAL there.  It writes
 * its end-of-recovery checkpoint record at the cut point; a child then
 * commits a filler (a SET of a length chosen so the next record starts
 * exactly where an old record of size S did) and one more commit of
 * size S, and crashes.  Its last record then ends exactly where an old,
 * CRC-valid record carrying its true LSN and a prev-LSN equal to that
 * last record's LSN starts (checked on a copy taken before the damage):
 * if the cut had not zeroed the rest of the segment, the second
 * recovery would replay it and the old commits after it.
 *
 * Checks: after the first recovery exactly commits 0 .. k-1 (k: the
 * damaged one); on disk after the second crash the old record's bytes
 * no longer verify at its position; after the second recovery exactly
 * commits 0 .. k-1, the filler and the new commit.
 *
 * fsync is real; the data directories go to /dev/shm unless TMPDIR is
 * set (tmpfs: the page cache is the device).  "trials: N, failed: F"
 * at the end.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define HROW 64	 /* history row bytes */
#define PROW 256 /* pad row bytes: the filler's SET */
#define WALSEG 65536u
#define NCOMMIT 60
#define NEW_TAG 1000000u

static char base[4096];
static unsigned trials, failed_trials;

static struct fk_store_opts opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 64 * FK_PAGE_SIZE;
	o.segment_bytes = 1 << 20;
	o.wal_segment_bytes = WALSEG;
	o.checkpoint_timeout_ms = 3600000;
	o.full_page_writes = 0; /* every commit the same size */
	o.sync_io = FK_SYNC_IO_SEQUENTIAL;
	return o;
}

static void fill_pad(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, PROW);
}

/* Commit @tag: append history row {tag}.  *@end: LSN past it. */
static int commit_hist(struct fk_store *s, struct fk_batch *b, uint64_t tag,
		       uint64_t *end)
{
	uint8_t h[HROW] = {0};
	memcpy(h, &tag, 8);
	fk_batch_reset(b);
	fk_batch_append_copy(b, 1, h, HROW, NULL);
	return fk_store_commit(s, b, end);
}

/* History holds exactly tags 0 .. @n - 1, then @extra (if not ~0). */
static int verify(struct fk_store *s, uint64_t n, uint64_t extra,
		  const char *what)
{
	uint64_t rows = 0, want = n + (extra != ~0ull);
	uint8_t row[HROW];
	if (fk_store_table_rows(s, 1, &rows) || rows != want) {
		fprintf(stderr, "%s: %llu history rows, expected %llu\n", what,
			(unsigned long long)rows, (unsigned long long)want);
		return 1;
	}
	for (uint64_t i = 0; i < want; i++) {
		uint64_t v = ~0ull, exp = i < n ? i : extra;
		int r = fk_store_read(s, 1, i, row);
		memcpy(&v, row, 8);
		if (r || v != exp) {
			fprintf(stderr,
				"%s: history row %llu: %d, %llu "
				"(expected %llu)\n",
				what, (unsigned long long)i, r,
				(unsigned long long)v, (unsigned long long)exp);
			return 1;
		}
	}
	return 0;
}

static void seg_path(char *out, size_t len, const char *dir, uint64_t segno)
{
	int n = snprintf(out, len, "%s/wal/%016llX", dir,
			 (unsigned long long)segno);
	if (n < 0 || (size_t)n >= len)
		exit(1);
}

static int read_seg(const char *dir, uint64_t segno, uint8_t *buf)
{
	char p[4300];
	size_t len = 0;
	seg_path(p, sizeof(p), dir, segno);
	char *d = fkt_read_file(p, &len);
	memset(buf, 0, WALSEG);
	if (d)
		memcpy(buf, d, len < WALSEG ? len : WALSEG);
	free(d);
	return d && len == WALSEG ? 0 : -1;
}

static int write_seg(const char *dir, uint64_t segno, const uint8_t *buf)
{
	char p[4300];
	seg_path(p, sizeof(p), dir, segno);
	int fd = open(p, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = pwrite(fd, buf, WALSEG, 0);
	close(fd);
	return n == WALSEG ? 0 : -1;
}

/* Make @dir: create the store, run NCOMMIT commits in a child that
 * crashes.  ends[i]: end LSN of commit i.  Returns 0 or 1. */
static int prepare(const char *dir, uint64_t *ends)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	uint32_t hist = 0, pad = 0;
	int pfd[2], st, n = 0;

	fkt_rm_rf(dir);
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		return 1;
	CHECK_EQ(fk_store_create_table(s, "history", HROW, &hist), 0);
	CHECK_EQ(fk_store_create_table(s, "pad", PROW, &pad), 0);
	CHECK(hist == 1 && pad == 2);
	CHECK_EQ(fk_store_bulk_load(s, pad, 1, fill_pad, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);

	CHECK_EQ(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_batch b;
		uint64_t end;
		close(pfd[0]);
		if (fk_store_open(dir, &o, &s))
			_exit(2);
		fk_batch_init(&b);
		for (uint64_t i = 0; i < NCOMMIT; i++) {
			if (commit_hist(s, &b, i, &end))
				_exit(3);
			if (write(pfd[1], &end, 8) != 8)
				_exit(4);
		}
		_exit(0); /* crash: no close */
	}
	close(pfd[1]);
	while (n < NCOMMIT && read(pfd[0], &ends[n], 8) == 8)
		n++;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(n, NCOMMIT);
	return n != NCOMMIT;
}

enum damage { D_PAYLOAD, D_CRC, D_LSN };
static const char *const damage_name[] = {"a payload byte", "the CRC field",
					  "the LSN field"};

/* One trial: damage commit @k of a fresh store in the way @how.
 * Returns 0 or 1. */
static int trial(int k, enum damage how)
{
	static uint8_t orig[WALSEG], seg[WALSEG];
	struct fk_store_opts o = opts();
	uint64_t ends[NCOMMIT];
	char dir[4200], what[160];
	int pfd[2], st;

	snprintf(what, sizeof(what), "commit %d of %d damaged in %s", k,
		 NCOMMIT, damage_name[how]);
	printf("%s\n", what);
	snprintf(dir, sizeof(dir), "%s/store", base);
	if (prepare(dir, ends))
		return 1;

	/* Every commit record is S bytes, the damaged one and the rest
	 * lie in one segment. */
	uint64_t S = ends[1] - ends[0];
	for (int i = 2; i < NCOMMIT; i++)
		CHECK_EQ(ends[i] - ends[i - 1], S);
	CHECK_EQ(S, FK_WAL_ALIGN(FK_WAL_REC_HDR + 8 + fk_wal_op_size(HROW)));
	uint64_t L = ends[k] - S, segno = L / WALSEG;
	CHECK_EQ((ends[NCOMMIT - 1] - 1) / WALSEG, segno);
	CHECK_EQ(read_seg(dir, segno, orig), 0);
	memcpy(seg, orig, WALSEG);
	/* Before the damage the record verifies, chained to its
	 * predecessor. */
	CHECK_EQ(
	    fk_wal_rec_check(orig + L % WALSEG, WALSEG - L % WALSEG, L, L - S),
	    (long)S);
	switch (how) {
	case D_PAYLOAD: /* the history row's tag */
		seg[L % WALSEG + S - HROW] ^= 0x10;
		break;
	case D_CRC:
		seg[L % WALSEG + offsetof(struct fk_wal_rec, crc)] ^= 1;
		break;
	case D_LSN:
		seg[L % WALSEG + offsetof(struct fk_wal_rec, lsn)] ^= 8;
		break;
	}
	CHECK(fk_wal_rec_check(seg + L % WALSEG, WALSEG - L % WALSEG, L,
			       L - S) < 0);
	CHECK_EQ(write_seg(dir, segno, seg), 0);

	/* First recovery, filler, one commit, crash.  The child reports
	 * the insert position after recovery and both end LSNs. */
	CHECK_EQ(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store *s = NULL;
		struct fk_batch b;
		uint64_t r3[3], end;
		uint8_t data[PROW];
		close(pfd[0]);
		if (fk_store_open(dir, &o, &s))
			_exit(2);
		if (verify(s, (uint64_t)k, ~0ull, "first recovery"))
			_exit(3);
		r3[0] = __atomic_load_n(&s->insert_lsn, __ATOMIC_ACQUIRE);
		/* The last new record must start at L + (j - 1) * S: the
		 * filler takes the room up to there. */
		uint64_t fixed = FK_WAL_REC_HDR + 8 + FK_WAL_OP_HDR, j = 1;
		while (L + (j - 1) * S < r3[0] + fixed + 8)
			j++;
		uint64_t flen = L + (j - 1) * S - r3[0] - fixed;
		if (flen > PROW || j >= (uint64_t)(NCOMMIT - k))
			_exit(4);
		memset(data, 0xa5, sizeof(data));
		fk_batch_init(&b);
		if (fk_batch_set(&b, 2, 0, 0, data, (uint32_t)flen) ||
		    fk_store_commit(s, &b, &r3[1]))
			_exit(5);
		if (commit_hist(s, &b, NEW_TAG, &end))
			_exit(6);
		r3[2] = end;
		if (write(pfd[1], r3, sizeof(r3)) != sizeof(r3))
			_exit(7);
		_exit(0); /* crash again */
	}
	close(pfd[1]);
	uint64_t r3[3] = {0, 0, 0};
	CHECK_EQ(read(pfd[0], r3, sizeof(r3)), sizeof(r3));
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s: first recovery child: status %d\n", what,
			st);
		return 1;
	}
	/* The new WAL ends exactly where old commit m (intact before the
	 * damage, its prev-LSN naming the new last record) starts. */
	uint64_t P = r3[2];
	CHECK(P > L && (P - L) % S == 0 && P - S == r3[1]);
	uint64_t m = (uint64_t)k + (P - L) / S;
	CHECK(m < NCOMMIT && ends[m] - S == P);
	CHECK_EQ(
	    fk_wal_rec_check(orig + P % WALSEG, WALSEG - P % WALSEG, P, P - S),
	    (long)(FK_WAL_REC_HDR + 8 + fk_wal_op_size(HROW)));
	printf("  cut at %llu, end-of-recovery WAL to %llu, new commits end "
	       "at %llu where old commit %llu starts\n",
	       (unsigned long long)L, (unsigned long long)r3[0],
	       (unsigned long long)P, (unsigned long long)m);
	/* W10: the old record is gone from the segment. */
	CHECK_EQ(read_seg(dir, segno, seg), 0);
	int stale = fk_wal_rec_check(seg + P % WALSEG, WALSEG - P % WALSEG, P,
				     P - S) > 0;
	if (stale)
		fprintf(stderr,
			"%s: old commit %llu still valid at %llu "
			"after the cut\n",
			what, (unsigned long long)m, (unsigned long long)P);

	/* Second recovery: commits 0 .. k-1 and the new one, no more. */
	struct fk_store *s = NULL;
	int bad = stale, r = fk_store_open(dir, &o, &s);
	if (r) {
		fprintf(stderr, "%s: second open: %s\n", what, fk_strerror(r));
		return 1;
	}
	bad |= verify(s, (uint64_t)k, NEW_TAG, "second recovery");
	uint8_t prow[PROW];
	CHECK_EQ(fk_store_read(s, 2, 0, prow), 0);
	uint64_t flen = r3[1] - r3[0] - (FK_WAL_REC_HDR + 8 + FK_WAL_OP_HDR);
	for (uint64_t i = 0; i < PROW; i++)
		if (prow[i] != (i < flen ? 0xa5 : 0)) {
			fprintf(stderr, "%s: pad byte %llu wrong\n", what,
				(unsigned long long)i);
			bad = 1;
			break;
		}
	if (fk_store_close(s))
		bad = 1;
	return bad;
}

int main(void)
{
	static const int ks[] = {20, 31, 40};

	if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 0);
	snprintf(base, sizeof(base), "%s", fkt_tmpdir());
	for (int i = 0; i < 3; i++) {
		int bad = trial(ks[i], (enum damage)i);
		trials++;
		if (bad) {
			failed_trials++;
			fkt_failures++;
			fprintf(stderr, "FAILED trial %u\n", trials);
		}
	}
	printf("trials: %u, failed: %u\n", trials, failed_trials);
	return fkt_done();
}
