// SPDX-License-Identifier: MIT
/*
 * test-wal-tail.c - a torn or stale WAL tail (docs/durability.md,
 * "How the tests check it", 8).
 *
 * A store runs commits in a child that exits without closing (a crash),
 * with checkpoints on the way so WAL segments are recycled.  Then, on a
 * copy of that data directory per variant, the tail of the WAL is
 * damaged:
 *   - truncated at EVERY byte offset of the last records;
 *   - overwritten with zeros from every such offset;
 *   - overwritten with random bytes from every such offset;
 *   - overwritten with old, CRC-valid records of a recycled segment,
 *     copied to where the next record would start, or at the same
 *     offset (a recycled segment whose new content stops there): they
 *     must be rejected by their LSN, not by their CRC (checked: the
 *     stale record verifies at its own LSN);
 *   - the next segment (which the last records reached) replaced by a
 *     recycled segment: rejected by its header's segment number, and,
 *     with a header forged to name the right segment, by the LSNs;
 *   - a store whose last records reached the next segment, damaged in
 *     the segment before (records after the damage that carry their
 *     true LSN survive in the next segment): after recovery cut the WAL
 *     there, new commits of the same size land on the same positions
 *     and must not bring the old records back (regression: the cut used
 *     to zero only the later segment's header).
 * After each variant: recovery ends exactly at the last intact commit
 * (every commit whose record is wholly intact and before the damage is
 * present, nothing after it: row counts, every history row, every
 * account's count and last writer), the store accepts new commits, and
 * after another crash a second recovery gives that result plus the new
 * commits.
 *
 * fsync and fdatasync are no-ops here (through the syscall table): the
 * damage is made in the files, the crash is a process exit, and the
 * page cache is what the next open reads.  Every byte offset of the
 * last 3 records is tried for truncation; zeros and random bytes every
 * 5th offset plus record boundaries, the cross-segment case every 11th
 * (every offset with FK_TRIALS >= 2).  FK_TEST_SEED fixes the random
 * bytes.  The data directories go to /dev/shm unless TMPDIR is set.
 */
#include "fktest.h"
#include "store-int.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 64
#define NACC 300
#define WALSEG 65536u
#define TAIL 3 /* records damaged byte by byte */

static char base[4096];
static int full;
/* Truncation offsets: every byte, except in sanitizer builds (each
 * variant forks and opens the store three times; ASan makes that ten
 * times slower), where every 4th and the bytes around each record
 * boundary, unless FK_TRIALS >= 2. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
static unsigned trunc_step = 1, other_step = 5, cross_step = 11;
static unsigned seed;
static unsigned variants, failed_variants;

static int nosync(int fd)
{
	(void)fd;
	return 0;
}

static struct fk_store_opts opts(int fpw)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	o.shared_buffers_bytes = 64 * FK_PAGE_SIZE; /* the minimum */
	o.segment_bytes = 1 << 20;
	o.wal_segment_bytes = WALSEG;
	o.checkpoint_timeout_ms = 3600000;
	o.full_page_writes = fpw;
	/* Whole full-page images: the WAL must fill segments fast enough
	 * to be recycled (stale records), and the record sizes and
	 * positions below assume 8200-byte images (smooth's default
	 * compresses them; test-torture-wal-compression covers that). */
	o.wal_compression = FK_WAL_COMPRESSION_OFF;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy((uint8_t *)row + 8, &rowno, 8);
}

/* Commit number @i: add 1 to account i*53 % NACC, store i at its offset
 * 24 (last writer), append history row {i}. */
static int commit_one(struct fk_store *s, struct fk_batch *b, uint64_t i,
		      uint64_t *end)
{
	uint8_t h[ROW] = {0};
	memcpy(h, &i, 8);
	fk_batch_reset(b);
	fk_batch_add_i64(b, 1, i * 53 % NACC, 0, 1, NULL);
	fk_batch_set(b, 1, i * 53 % NACC, 24, &i, 8);
	fk_batch_append_copy(b, 2, h, ROW, NULL);
	return fk_store_commit(s, b, end);
}

/* The store holds exactly commits 0 .. @n - 1. */
static int verify_store(struct fk_store *s, uint64_t n, const char *what)
{
	uint64_t rows = 0;
	uint8_t row[ROW];
	int bad = 0;
	if (fk_store_table_rows(s, 2, &rows) || rows != n) {
		fprintf(stderr, "%s: %llu history rows, expected %llu\n", what,
			(unsigned long long)rows, (unsigned long long)n);
		return 1;
	}
	for (uint64_t i = 0; i < n && !bad; i++) {
		uint64_t v = ~0ull;
		int r = fk_store_read(s, 2, i, row);
		memcpy(&v, row, 8);
		if (r || v != i) {
			fprintf(stderr, "%s: history row %llu: %d, %llu\n",
				what, (unsigned long long)i, r,
				(unsigned long long)v);
			bad = 1;
		}
	}
	for (uint64_t a = 0; a < NACC && !bad; a++) {
		int64_t cnt = 0, v;
		uint64_t last = 0, id, lw;
		for (uint64_t j = 0; j < n; j++)
			if (j * 53 % NACC == a)
				cnt++, last = j;
		int r = fk_store_read(s, 1, a, row);
		memcpy(&v, row, 8);
		memcpy(&id, row + 8, 8);
		memcpy(&lw, row + 24, 8);
		if (r || v != cnt || id != a || lw != last) {
			fprintf(stderr,
				"%s: account %llu: %d, count %lld "
				"(expected %lld), last %llu (expected %llu)\n",
				what, (unsigned long long)a, r, (long long)v,
				(long long)cnt, (unsigned long long)lw,
				(unsigned long long)last);
			bad = 1;
		}
	}
	return bad;
}

/* ---- files ---- */

/* snprintf for paths: a path that does not fit ends the test. */
__attribute__((format(printf, 3, 4))) static void pathf(char *out, size_t len,
							const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "path too long: %s\n", out);
		exit(1);
	}
}

static void path2(char *out, size_t len, const char *dir, const char *rel)
{
	pathf(out, len, "%s/%s", dir, rel);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *d = fkt_read_file(from, &len);
	CHECK(d != NULL);
	int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (d && fd >= 0)
		CHECK_EQ(write(fd, d, len), len);
	if (fd >= 0)
		close(fd);
	free(d);
}

static void copy_dir(const char *from, const char *to)
{
	char a[4300], b[4300];
	static const char *const subs[] = {"base", "wal"};
	fkt_rm_rf(to);
	CHECK_EQ(mkdir(to, 0700), 0);
	path2(a, sizeof(a), from, "control");
	path2(b, sizeof(b), to, "control");
	copy_file(a, b);
	path2(a, sizeof(a), from, "catalog");
	path2(b, sizeof(b), to, "catalog");
	copy_file(a, b);
	for (int i = 0; i < 2; i++) {
		path2(a, sizeof(a), from, subs[i]);
		path2(b, sizeof(b), to, subs[i]);
		CHECK_EQ(mkdir(b, 0700), 0);
		DIR *d = opendir(a);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char x[4600], y[4600];
			if (de->d_name[0] == '.')
				continue;
			pathf(x, sizeof(x), "%s/%s", a, de->d_name);
			pathf(y, sizeof(y), "%s/%s", b, de->d_name);
			copy_file(x, y);
		}
		if (d)
			closedir(d);
	}
}

static void seg_path(char *out, size_t len, const char *dir, uint64_t segno)
{
	pathf(out, len, "%s/wal/%016llX", dir, (unsigned long long)segno);
}

/* Read segment @segno of @dir (zero-filled to WALSEG; absent: zeros).
 * Returns its length on disk, -1 if absent. */
static long read_seg(const char *dir, uint64_t segno, uint8_t *buf)
{
	char p[4300];
	size_t len;
	seg_path(p, sizeof(p), dir, segno);
	memset(buf, 0, WALSEG);
	char *d = fkt_read_file(p, &len);
	if (!d)
		return -1;
	memcpy(buf, d, len < WALSEG ? len : WALSEG);
	free(d);
	return (long)len;
}

static void write_seg(const char *dir, uint64_t segno, const uint8_t *buf,
		      size_t len)
{
	char p[4300];
	seg_path(p, sizeof(p), dir, segno);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_EQ(write(fd, buf, len), len);
		close(fd);
	}
}

/* ---- the WAL as written ---- */

struct rec {
	uint64_t lsn;
	uint32_t len;
	uint8_t type;
	long commit; /* commit number, -1: not a commit */
};

struct prep {
	char dir[4200];
	uint64_t ends[512]; /* end LSN of each acknowledged commit */
	int n;
	struct rec recs[512];
	int nrec;
};

static int read_control(const char *dir, struct fk_control *c)
{
	char p[4300];
	size_t len;
	path2(p, sizeof(p), dir, "control");
	char *d = fkt_read_file(p, &len);
	int r = d ? fk_control_decode(c, d, len) : -ENOENT;
	free(d);
	return r;
}

/* Walk the WAL from the redo LSN as recovery does; list the records. */
static void list_records(struct prep *p)
{
	static uint8_t seg[WALSEG];
	struct fk_control c;
	uint64_t loaded = UINT64_MAX, prev = 0;
	int ok = 0;
	CHECK_EQ(read_control(p->dir, &c), 0);
	p->nrec = 0;
	for (uint64_t pos = c.redo_lsn; p->nrec < 512;) {
		uint64_t segno = pos / WALSEG, off = pos % WALSEG;
		if (segno != loaded) {
			read_seg(p->dir, segno, seg);
			loaded = segno;
			ok = fk_wal_seg_check(seg, segno, WALSEG) == 0;
		}
		if (!ok)
			break;
		if (off < FK_WAL_SEG_HDR) {
			pos = segno * WALSEG + FK_WAL_SEG_HDR;
			continue;
		}
		if (WALSEG - off < FK_WAL_REC_HDR) {
			pos = (segno + 1) * WALSEG;
			continue;
		}
		long n = fk_wal_rec_check(seg + off, WALSEG - off, pos, prev);
		if (n < 0)
			break;
		struct rec *r = &p->recs[p->nrec++];
		r->lsn = pos;
		r->len = (uint32_t)n;
		r->type = seg[off + 4];
		r->commit = -1;
		for (int i = 0; i < p->n && r->type == FK_WAL_COMMIT; i++)
			if (p->ends[i] == pos + FK_WAL_ALIGN((uint64_t)n))
				r->commit = i;
		prev = pos;
		pos += FK_WAL_ALIGN((uint64_t)n);
	}
	/* Every acknowledged commit since the redo point is in the list. */
	int last = -1;
	for (int i = 0; i < p->nrec; i++)
		if (p->recs[i].commit >= 0) {
			CHECK_EQ(p->recs[i].commit,
				 last + 1 > 0 ? last + 1 : p->recs[i].commit);
			last = (int)p->recs[i].commit;
		}
	CHECK_EQ(last, p->n - 1);
}

/*
 * Make a crashed store in p->dir: create it (two tables, accounts bulk
 * loaded), close it; then a child commits (a checkpoint before every
 * @ckpt_every-th commit, if set) and exits without closing.  It stops
 * after @n commits, or, if @cross, once @cross commits lie in the
 * segment after the one its first commit went to.  Lists the records.
 */
static void prepare(struct prep *p, const char *name, int fpw, int n,
		    int ckpt_every, int cross)
{
	struct fk_store_opts o = opts(fpw);
	struct fk_store *s = NULL;
	uint32_t acc, hist;
	int pfd[2];

	pathf(p->dir, sizeof(p->dir), "%s/%s", base, name);
	CHECK_EQ(fk_store_open(p->dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &acc), 0);
	CHECK_EQ(fk_store_create_table(s, "history", ROW, &hist), 0);
	CHECK(acc == 1 && hist == 2);
	CHECK_EQ(fk_store_bulk_load(s, acc, NACC, fill, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);

	CHECK_EQ(pipe(pfd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_batch b;
		uint64_t end, start_seg = 0;
		int in_new = 0;
		close(pfd[0]);
		if (fk_store_open(p->dir, &o, &s))
			_exit(2);
		fk_batch_init(&b);
		for (int i = 0; i < n; i++) {
			if (ckpt_every && i && i % ckpt_every == 0 &&
			    fk_store_checkpoint(s))
				_exit(3);
			if (commit_one(s, &b, (uint64_t)i, &end))
				_exit(4);
			if (write(pfd[1], &end, 8) != 8)
				_exit(5);
			/* @cross: stop once @cross commits lie wholly in
			 * the segment after the first one's. */
			if (cross) {
				if (!start_seg)
					start_seg = (end - 1) / WALSEG;
				if ((end - 1) / WALSEG > start_seg &&
				    ++in_new == cross)
					break;
			}
		}
		_exit(0); /* crash: no close */
	}
	close(pfd[1]);
	p->n = 0;
	while (p->n < 512 && read(pfd[0], &p->ends[p->n], 8) == 8)
		p->n++;
	close(pfd[0]);
	int st;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	list_records(p);
	printf("%s: %d commits, %d records since the redo point, WAL end "
	       "%llu\n",
	       name, p->n, p->nrec, (unsigned long long)p->ends[p->n - 1]);
}

/* ---- variants ---- */

/* Commits expected after damage: those before the first record whose
 * bytes changed (a PAD: its header), given the damaged segment @d of
 * number @segno and the original @o. */
static long expect_commits(const struct prep *p, uint64_t segno,
			   const uint8_t *o, const uint8_t *d)
{
	long c = 0;
	for (int i = 0; i < p->nrec; i++) {
		const struct rec *r = &p->recs[i];
		if (r->lsn / WALSEG == segno) {
			uint32_t len =
			    r->type == FK_WAL_PAD ? FK_WAL_REC_HDR : r->len;
			uint64_t off = r->lsn % WALSEG;
			if (memcmp(o + off, d + off, len))
				return c;
		} else if (r->lsn / WALSEG > segno) {
			/* Past the damaged segment: reached only if the
			 * segment's tail is intact, which the damage ruled
			 * out for the callers that set @segno. */
		}
		if (r->commit >= 0)
			c = r->commit + 1;
	}
	return c;
}

/*
 * Recover @dir, expecting @n commits; then in a child commit @more more
 * (negative: commit until -@more commits lie in WAL segment
 * @until_seg) and crash; recover again expecting those too.  Returns 0
 * or 1.
 */
static int check_recovery(const char *dir, int fpw, long n, int more,
			  uint64_t until_seg, const char *what)
{
	struct fk_store_opts o = opts(fpw);
	char w2[512];
	int st, bad = 0, pfd[2];
	long done = 0;
	if (pipe(pfd))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store *s = NULL;
		struct fk_batch b;
		uint64_t end = 0;
		int in_seg = 0;
		close(pfd[0]);
		int r = fk_store_open(dir, &o, &s);
		if (r) {
			fprintf(stderr, "%s: open: %s\n", what, fk_strerror(r));
			_exit(1);
		}
		if (verify_store(s, (uint64_t)n, what))
			_exit(1);
		fk_batch_init(&b);
		for (long i = 0; more >= 0 ? i < more : in_seg < -more; i++) {
			if (commit_one(s, &b, (uint64_t)(n + i), &end) ||
			    i > 100000)
				_exit(2);
			if (write(pfd[1], &end, 8) != 8)
				_exit(3);
			in_seg += (end - 1) / WALSEG == until_seg;
		}
		_exit(0); /* crash again */
	}
	close(pfd[1]);
	uint64_t end;
	while (read(pfd[0], &end, 8) == 8)
		done++;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s: first recovery failed (status %d)\n", what,
			st);
		return 1;
	}
	struct fk_store *s = NULL;
	int r = fk_store_open(dir, &o, &s);
	snprintf(w2, sizeof(w2), "%s, second recovery after %ld new commits",
		 what, done);
	if (r) {
		fprintf(stderr, "%s: open: %s\n", w2, fk_strerror(r));
		return 1;
	}
	bad = verify_store(s, (uint64_t)(n + done), w2);
	if (fk_store_close(s))
		bad = 1;
	return bad;
}

/* One variant: copy @p, let @damage change segment @segno (buffer of
 * WALSEG bytes, *len the length to write back), recover and check. */
static void variant(const struct prep *p, const char *what, uint64_t segno,
		    void (*damage)(uint8_t *seg, size_t *len, void *arg),
		    void *arg, long expect, int more, uint64_t until_seg,
		    int fpw)
{
	static uint8_t o[WALSEG], d[WALSEG];
	char work[4300];
	pathf(work, sizeof(work), "%s/work", base);
	copy_dir(p->dir, work);
	long l = read_seg(work, segno, o);
	CHECK(l == WALSEG);
	memcpy(d, o, WALSEG);
	size_t len = WALSEG;
	damage(d, &len, arg);
	write_seg(work, segno, d, len);
	if (len < WALSEG)
		memset(d + len, 0, WALSEG - len);
	if (expect < 0)
		expect = expect_commits(p, segno, o, d);
	variants++;
	if (check_recovery(work, fpw, expect, more, until_seg, what)) {
		failed_variants++;
		fkt_failures++;
		fprintf(stderr, "FAILED variant: %s (expected %ld commits)\n",
			what, expect);
	}
}

struct at {
	size_t off, to;
	const uint8_t *src;
};

static void d_truncate(uint8_t *seg, size_t *len, void *arg)
{
	(void)seg;
	*len = ((struct at *)arg)->off;
}

static void d_zero(uint8_t *seg, size_t *len, void *arg)
{
	struct at *a = arg;
	(void)len;
	memset(seg + a->off, 0, WALSEG - a->off);
}

static void d_random(uint8_t *seg, size_t *len, void *arg)
{
	struct at *a = arg;
	(void)len;
	for (size_t i = a->off; i < a->to; i++)
		seg[i] = (uint8_t)rand_r(&seed);
}

/* Copy a->src[0 .. WALSEG - a->off) to seg at a->off (bounded). */
static void d_copy(uint8_t *seg, size_t *len, void *arg)
{
	struct at *a = arg;
	(void)len;
	memcpy(seg + a->off, a->src, a->to - a->off);
}

static void d_replace(uint8_t *seg, size_t *len, void *arg)
{
	(void)len;
	memcpy(seg, ((struct at *)arg)->src, WALSEG);
}

/* Is @lsn tried: all offsets (full), else every @step-th and the 3
 * bytes around each record boundary. */
static int try_offset(const struct prep *p, uint64_t lsn, unsigned step)
{
	if (full || lsn % step == 0)
		return 1;
	for (int i = 0; i < p->nrec; i++) {
		uint64_t b = p->recs[i].lsn;
		if (lsn + 1 >= b && lsn <= b + 1)
			return 1;
	}
	return 0;
}

/* The store of test_torn_tail and test_stale_records, with full-page
 * images: checkpoints every 10 commits recycle segments; the last 3
 * records are small (no full-page image) and in one segment. */
static struct prep main_p;

static void prepare_main(void)
{
	prepare(&main_p, "main", 1, 60, 10, 0);
	CHECK(main_p.nrec > TAIL);
	for (int i = main_p.nrec - TAIL; i < main_p.nrec; i++)
		CHECK(main_p.recs[i].len < 1024);
}

/* The tail: truncation, zeros and random bytes at every offset of the
 * last TAIL records (which lie in one segment). */
static void test_torn_tail(void)
{
	const struct prep *p = &main_p;
	const int fpw = 1;
	const struct rec *first = &p->recs[p->nrec - TAIL];
	const struct rec *last = &p->recs[p->nrec - 1];
	uint64_t segno = first->lsn / WALSEG;
	uint64_t from = first->lsn, to = last->lsn + last->len;
	char what[128];
	CHECK_EQ((to - 1) / WALSEG, segno);
	for (uint64_t lsn = from; lsn <= to; lsn++) {
		struct at a = {lsn % WALSEG, 0, NULL};
		snprintf(what, sizeof(what), "truncate at %llu",
			 (unsigned long long)lsn);
		if (try_offset(p, lsn, trunc_step))
			variant(p, what, segno, d_truncate, &a, -1, 2, 0, fpw);
		if (!try_offset(p, lsn, other_step))
			continue;
		snprintf(what, sizeof(what), "zeros from %llu",
			 (unsigned long long)lsn);
		variant(p, what, segno, d_zero, &a, -1, 2, 0, fpw);
		a.to =
		    (to % WALSEG) + 64 < WALSEG ? (to % WALSEG) + 64 : WALSEG;
		if (a.to <= a.off)
			a.to = a.off + 1;
		snprintf(what, sizeof(what), "random bytes from %llu",
			 (unsigned long long)lsn);
		variant(p, what, segno, d_random, &a, -1, 2, 0, fpw);
	}
}

/* A recycled segment in p->dir: its header is valid but names an older
 * segment number than its file name.  Returns its file's number, its
 * content in @buf. */
static uint64_t find_recycled(const struct prep *p, uint8_t *buf, uint64_t *old)
{
	for (uint64_t sn = 1; sn < 4096; sn++) {
		if (read_seg(p->dir, sn, buf) != WALSEG)
			continue;
		struct fk_wal_seg h;
		memcpy(&h, buf, sizeof(h));
		if (h.segno < sn &&
		    fk_wal_seg_check(buf, h.segno, WALSEG) == 0) {
			*old = h.segno;
			return sn;
		}
	}
	return 0;
}

/* Records of a recycled segment where the last records start: valid
 * CRCs, wrong LSNs; never replayed. */
static void test_stale_records(void)
{
	const struct prep *p = &main_p;
	const int fpw = 1;
	static uint8_t r[WALSEG];
	uint64_t old = 0;
	char what[160];
	uint64_t rs = find_recycled(p, r, &old);
	CHECK(rs != 0);
	if (!rs)
		return;
	printf("recycled segment %llu holds old segment %llu\n",
	       (unsigned long long)rs, (unsigned long long)old);
	/* Its first record is valid - CRC included - at its own LSN. */
	uint64_t old_lsn = old * WALSEG + FK_WAL_SEG_HDR;
	long n = fk_wal_rec_check(r + FK_WAL_SEG_HDR, WALSEG - FK_WAL_SEG_HDR,
				  old_lsn, 0);
	CHECK(n > 0);
	for (int k = TAIL; k >= 1; k--) {
		const struct rec *at = &p->recs[p->nrec - k];
		uint64_t segno = at->lsn / WALSEG, off = at->lsn % WALSEG;
		long expect = at->commit; /* commits before it */
		/* Old records where this one starts: CRC fine, LSN not. */
		struct at a = {off, WALSEG, r + FK_WAL_SEG_HDR};
		if (WALSEG - off > WALSEG - FK_WAL_SEG_HDR)
			a.to = off + WALSEG - FK_WAL_SEG_HDR;
		/* Room for the stale record here, and only its LSN (and
		 * prev LSN) tell it apart. */
		CHECK(fk_wal_rec_check(r + FK_WAL_SEG_HDR, a.to - off, old_lsn,
				       0) > 0);
		CHECK(fk_wal_rec_check(r + FK_WAL_SEG_HDR, a.to - off, at->lsn,
				       0) < 0);
		snprintf(what, sizeof(what),
			 "stale records of segment %llu at %llu",
			 (unsigned long long)old, (unsigned long long)at->lsn);
		variant(p, what, segno, d_copy, &a, expect, 2, 0, fpw);
		/* The recycled file's own bytes from the same offset. */
		a.src = r + off;
		a.to = WALSEG;
		snprintf(what, sizeof(what),
			 "recycled segment content from offset %llu",
			 (unsigned long long)off);
		variant(p, what, segno, d_copy, &a, expect, 2, 0, fpw);
	}
}

/* The last records reached the next segment: replace that segment by
 * an older one (the segment before it, as a recycled file would hold:
 * a valid header of another number), by the same with a header forged
 * to name the right segment (its records' LSNs are still old), and
 * damage the segment before while the next one holds good records. */
static void test_cross_segment(void)
{
	static uint8_t r[WALSEG], forged[WALSEG];
	static struct prep cross_p;
	const struct prep *p = &cross_p;
	const int fpw = 0;
	char what[160];

	/* Without full-page images every commit has the same size, so a
	 * new history after a cut lands on the old positions. */
	prepare(&cross_p, "cross", 0, 4000, 0, 12);
	const struct rec *last = &p->recs[p->nrec - 1];
	uint64_t next = last->lsn / WALSEG, old = next - 1;
	int first_in_next = p->nrec;
	while (first_in_next > 0 &&
	       p->recs[first_in_next - 1].lsn / WALSEG == next)
		first_in_next--;
	CHECK(first_in_next > 0 && first_in_next < p->nrec);
	/* Commits wholly before the next segment. */
	long before = 0;
	for (int i = 0; i < first_in_next; i++)
		if (p->recs[i].commit >= 0)
			before = p->recs[i].commit + 1;

	CHECK_EQ(read_seg(p->dir, old, r), WALSEG);
	CHECK_EQ(fk_wal_seg_check(r, old, WALSEG), 0);
	struct at a = {0, 0, r};
	snprintf(what, sizeof(what), "segment %llu replaced by segment %llu",
		 (unsigned long long)next, (unsigned long long)old);
	variant(p, what, next, d_replace, &a, before, 2, 0, fpw);
	memcpy(forged, r, WALSEG);
	struct fk_wal_seg h;
	fk_wal_seg_fill(&h, next, WALSEG);
	memcpy(forged, &h, sizeof(h));
	CHECK_EQ(fk_wal_seg_check(forged, next, WALSEG), 0);
	a.src = forged;
	snprintf(what, sizeof(what),
		 "segment %llu replaced by segment %llu with a forged header",
		 (unsigned long long)next, (unsigned long long)old);
	variant(p, what, next, d_replace, &a, before, 2, 0, fpw);

	/* Damage in the segment before, at every offset of its last
	 * records; the new commits after recovery (one fewer than were
	 * lost) fill the same positions, so old records of the next
	 * segment that carry their true LSN sit right after them. */
	uint64_t prev_seg = next - 1;
	/* From 6 records back: the end-of-recovery checkpoint record then
	 * fits before the segment end, so the new commits in the next
	 * segment start where the old ones did. */
	int from = first_in_next - 6 > 0 ? first_in_next - 6 : 0;
	for (uint64_t lsn = p->recs[from].lsn; lsn < prev_seg * WALSEG + WALSEG;
	     lsn++) {
		if (!full && lsn % cross_step && lsn > p->recs[from].lsn + 40)
			continue;
		static uint8_t o[WALSEG];
		struct at a2 = {lsn % WALSEG, 0, NULL};
		/* Expected: commits before the first damaged record (a
		 * truncated record is intact if the bytes cut off were
		 * zero: the reader zero-fills a short segment). */
		read_seg(p->dir, prev_seg, o);
		long expect = 0;
		for (int i = 0; i < p->nrec; i++) {
			const struct rec *rc = &p->recs[i];
			uint32_t len =
			    rc->type == FK_WAL_PAD ? FK_WAL_REC_HDR : rc->len;
			if (rc->lsn / WALSEG == prev_seg &&
			    rc->lsn + len > lsn) {
				int zero = 1;
				for (uint64_t x = lsn; x < rc->lsn + len; x++)
					zero &= !o[x % WALSEG];
				if (!zero)
					break;
			}
			if (rc->commit >= 0)
				expect = rc->commit + 1;
		}
		snprintf(what, sizeof(what),
			 "truncate segment %llu at %llu, next segment intact",
			 (unsigned long long)prev_seg, (unsigned long long)lsn);
		variant(p, what, prev_seg, d_truncate, &a2, expect, -2, next,
			fpw);
	}
}

/* ThreadSanitizer sleeps a second in every exiting process (its
 * atexit_sleep_ms): a second per crashed child here.  Read by TSan
 * builds only; TSAN_OPTIONS still wins. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "atexit_sleep_ms=0";
}

int main(void)
{
	const char *t = getenv("FK_TRIALS");
	const char *sd = getenv("FK_TEST_SEED");

	full = t && atoi(t) >= 2;
	if (SANITIZED && !full)
		trunc_step = 4, other_step = 13, cross_step = 37;
	seed = sd ? (unsigned)strtoul(sd, NULL, 0) : (unsigned)getpid();
	printf("seed: %u (FK_TEST_SEED); offsets: %s\n", seed,
	       full ? "all"
	       : trunc_step == 1
		   ? "every byte truncated"
		   : "every 4th byte truncated (sanitizer build)");
	/* Thousands of small directories: tmpfs when there is one. */
	if (!getenv("TMPDIR") && access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 0);
	pathf(base, sizeof(base), "%s", fkt_tmpdir());
	fk_sys.fsync = nosync;
	fk_sys.fdatasync = nosync;

	prepare_main();
	test_torn_tail();
	test_stale_records();
	test_cross_segment();

	printf("trials: %u, failed: %u\n", variants, failed_variants);
	return fkt_done();
}
