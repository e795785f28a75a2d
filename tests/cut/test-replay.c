// SPDX-License-Identifier: MIT
/*
 * test-replay.c - logged write replay (dm-log-writes' method): a short
 * workload per promise runs on a lab disk with a write log (flushkit
 * disk --write-log, disk/wlog.h); then the image is rebuilt at EVERY
 * FLUSH boundary and at N random points between two flushes (the writes
 * after the last FLUSH as a seeded random subset of their blocks),
 * mounted (the file system's own recovery), and the promise checked.
 *
 * The acknowledgement is tied to the log by a mark: right after a call
 * acknowledged (fk_fsync_batch_run returned 0, durable-replace exited
 * 0) the workload writes "log mark ack:K" to the disk's ctl, so the
 * mark is logged after every request the call waited for (the daemon
 * logs each request as it arrives, under its lock, and the call only
 * returned after its FLUSH completed).  At a replay point P, ack:K
 * before P means K was acknowledged before the state P: it must hold.
 *
 *  batch    round K writes 4 new files (32 KiB, a pattern of K and the
 *           file) and fsyncs them and their directory with one
 *           fk_fsync_batch_run; ack:K.  Check: every file of every
 *           round <= the last ack present and complete.
 *  replace  examples/durable-replace FILE TEXT-K, K = 0..; ack:K on exit
 *           0.  Check: FILE holds exactly TEXT-J with J the last ack or
 *           the one in flight (J+1): the old or the new, never neither.
 *  store    the page store (WAL, checkpoints): 256 accounts bulk-loaded
 *           before "ready"; commit K adds 1 to account K % 128 and to
 *           account 128 + K % 128 and appends a history row (one
 *           fk_store_commit), ack:K when it returned 0; a checkpoint
 *           after commit 20.  Check: the store opens (recovery), the two
 *           halves' sums and the history's rows are one count C (no
 *           commit in part), and C > the last ack (every acknowledged
 *           commit present; commits are sequential, so a prefix).
 *  cp       a source tree (6 files, one in a subdirectory) made before
 *           "ready"; `flushkit cp SRC DST-K`, K = 0..; ack:K on exit 0
 *           (cp's "the copy is durable").  Check: every file of every
 *           copy <= the last ack present with the source's content.
 *  control  (negative) the batch workload with its fsyncs skipped; its
 *           marks promise what was not made durable, so replay must find
 *           an acknowledged file missing or incomplete at some point
 *           (the test fails if it does not: the harness could not fail).
 *  control-store  (negative) the store workload on a disk that ignores
 *           FLUSH after "ready" (ctl "flush ignore": the log holds no
 *           FLUSH from there): replay must find an acknowledged commit
 *           lost (or a store that does not open) at some point.
 *
 * Points before the mark "ready" (mkfs, mount and a syncfs done) are
 * not checked.  Every point, its entry and its subset seed are printed
 * for a failure; `flushkit disk replay LOG --to-entry P [--subset
 * --seed S]` rebuilds it (FK_REPLAY_KEEP=1 keeps the logs, printed).
 *
 * Env: FK_TEST_SEED (default: the clock; printed), FK_REPLAY_POINTS random
 * points per workload (default 16), FK_REPLAY_FS (default "ext4 xfs
 * btrfs": each that has a mkfs here).
 * Needs root, /dev/fuse, loop devices, flushkit-diskd (77 otherwise).
 */
#include "fkcut.h"
#include "fkloop.h"
#include "fktest.h"
#include "flushkit.h"
#include "labdisk.h"
#include "wlog.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 6
#define FILES 4
#define FILE_BYTES 32768
#define REPLACES 5
#define COPIES 4
#define COMMITS 40
#define ACCOUNTS 256
#define ROW 64
#define CP_FILES 6

static uint64_t rng;
static struct labdisk disk;
static int disk_alive;
static struct fkt_fs replay_fs; /* the replayed image, mounted */
static char replace_bin[PATH_MAX], flushkit_bin[PATH_MAX];
static unsigned nr_failed;

static void disk_cleanup(void)
{
	if (disk_alive) {
		labdisk_destroy(&disk);
		disk_alive = 0;
	}
}

static void pattern(char *buf, unsigned round, unsigned file)
{
	for (size_t i = 0; i < FILE_BYTES; i++)
		buf[i] = (char)('a' + (round * 7 + file * 3 + i / 512) % 26);
}

static void replace_text(char *buf, size_t cap, unsigned k)
{
	size_t n = 0;
	buf[0] = 0;
	while (n + 16 < cap && n < 3000)
		n += (size_t)snprintf(buf + n, cap - n, "version %u. ", k);
}

static int mark(const char *fmt, unsigned k)
{
	char line[96];
	snprintf(line, sizeof(line), "log mark ");
	snprintf(line + strlen(line), sizeof(line) - strlen(line), fmt, k);
	strcat(line, "\n");
	int r = labdisk_ctl(&disk, line);
	if (r)
		fprintf(stderr, "  ctl '%s': %s\n", line, strerror(-r));
	return r;
}

/* ---- workloads (on the live disk, mounted at @mnt) ---- */

/* Run @argv (stdout to /dev/null): 0 if it exited 0, else -1. */
static int run_quiet(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int nul = open("/dev/null", O_WRONLY);
		if (nul >= 0)
			dup2(nul, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return 0;
}

static int run_batch(const char *mnt, int skip_fsync)
{
	struct fk_fsync_batch *b = NULL;
	if (!skip_fsync && fk_fsync_batch_create(NULL, &b))
		return -1;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	if (strlen(mnt) > 1024)
		return -1;
	snprintf(dir, sizeof(dir), "%s/batch", mnt);
	if (mkdir(dir, 0700))
		return -1;
	static char buf[FILE_BYTES];
	int r = 0;
	for (unsigned k = 0; k < ROUNDS && !r; k++) {
		struct fk_fsync_req reqs[FILES + 1];
		int fds[FILES + 1];
		memset(reqs, 0, sizeof(reqs));
		for (unsigned f = 0; f < FILES; f++) {
			snprintf(path, sizeof(path), "%s/r%u-f%u", dir, k, f);
			fds[f] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			pattern(buf, k, f);
			if (fds[f] < 0 ||
			    write(fds[f], buf, FILE_BYTES) != FILE_BYTES)
				r = -1;
			reqs[f].fd = fds[f];
			reqs[f].op = FK_FSYNC_OP_FSYNC;
		}
		fds[FILES] = open(dir, O_RDONLY | O_DIRECTORY);
		reqs[FILES].fd = fds[FILES];
		reqs[FILES].op = FK_FSYNC_OP_FSYNC;
		if (!r && !skip_fsync) {
			int e = fk_fsync_batch_run(b, reqs, FILES + 1);
			if (e) {
				fprintf(stderr, "  fk_fsync_batch_run: %s\n",
					strerror(-e));
				r = -1;
			}
		}
		for (unsigned f = 0; f <= FILES; f++)
			if (fds[f] >= 0)
				close(fds[f]);
		if (!r)
			r = mark("ack:%u", k);
	}
	fk_fsync_batch_destroy(b);
	return r;
}

static int run_replace(const char *mnt)
{
	char file[PATH_MAX], text[3100];
	if (strlen(mnt) > 1024)
		return -1;
	snprintf(file, sizeof(file), "%s/control-file", mnt);
	for (unsigned k = 0; k < REPLACES; k++) {
		replace_text(text, sizeof(text), k);
		char *argv[] = {replace_bin, file, text, NULL};
		if (run_quiet(argv)) {
			fprintf(stderr, "  durable-replace %u failed\n", k);
			return -1;
		}
		if (mark("ack:%u", k))
			return -1;
	}
	return 0;
}

static struct fk_store_opts store_opts(int create)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.create_mode =
	    create ? FK_STORE_CREATE_IF_MISSING : FK_STORE_OPEN_EXISTING;
	o.shared_buffers_bytes = 1 << 20;
	o.segment_bytes = 256 * 1024;
	o.wal_segment_bytes = 1 << 20;
	o.max_wal_size_bytes = 8 << 20;
	return o;
}

static void zero_row(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	(void)rowno;
	memset(row, 0, ROW);
}

static struct fk_store *live_store;
static uint32_t t_acc, t_hist;

/* Before "ready": the store, its tables, the accounts loaded. */
static int make_store(const char *mnt)
{
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/db", mnt);
	struct fk_store_opts o = store_opts(1);
	if (fk_store_open(dir, &o, &live_store) ||
	    fk_store_create_table(live_store, "acc", ROW, &t_acc) ||
	    fk_store_create_table(live_store, "hist", ROW, &t_hist) ||
	    fk_store_bulk_load(live_store, t_acc, ACCOUNTS, zero_row, NULL) ||
	    fk_store_checkpoint(live_store))
		return -1;
	return 0;
}

static int run_store(void)
{
	struct fk_batch b;
	fk_batch_init(&b);
	int r = 0;
	for (unsigned k = 0; k < COMMITS && !r; k++) {
		uint8_t h[ROW] = {0};
		memcpy(h, &k, sizeof(k));
		fk_batch_reset(&b);
		int e = fk_batch_add_i64(&b, t_acc, k % 128, 0, 1, NULL);
		if (!e)
			e = fk_batch_add_i64(&b, t_acc, 128 + k % 128, 0, 1,
					     NULL);
		if (!e)
			e = fk_batch_append(&b, t_hist, h, NULL);
		if (!e)
			e = fk_store_commit(live_store, &b, NULL);
		if (e) {
			fprintf(stderr, "  commit %u: %s\n", k, strerror(-e));
			r = -1;
			break;
		}
		r = mark("ack:%u", k);
		if (!r && k == 20 && fk_store_checkpoint(live_store))
			r = -1;
	}
	fk_batch_release(&b);
	if (fk_store_close(live_store) && !r)
		r = -1;
	live_store = NULL;
	return r;
}

static unsigned check_store(const char *mnt, int acked, char *why, size_t cap)
{
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/db", mnt);
	struct fk_store_opts o = store_opts(0);
	struct fk_store *st = NULL;
	int e = fk_store_open(dir, &o, &st);
	if (e) {
		snprintf(why, cap, "the store does not open: %s", strerror(-e));
		return 1;
	}
	uint32_t acc, hist;
	int64_t lo = 0, hi = 0;
	uint64_t rows = 0;
	e = fk_store_table(st, "acc", &acc, NULL);
	if (!e)
		e = fk_store_table(st, "hist", &hist, NULL);
	if (!e)
		e = fk_store_table_rows(st, hist, &rows);
	for (uint64_t i = 0; i < ACCOUNTS && !e; i++) {
		uint8_t row[ROW];
		int64_t v;
		e = fk_store_read(st, acc, i, row);
		memcpy(&v, row, sizeof(v));
		*(i < 128 ? &lo : &hi) += v;
	}
	fk_store_close(st);
	if (e) {
		snprintf(why, cap, "reading the store: %s", strerror(-e));
		return 1;
	}
	if (lo != hi || (uint64_t)lo != rows) {
		snprintf(why, cap,
			 "a commit in part: sums %" PRId64 " and %" PRId64
			 ", %" PRIu64 " history rows",
			 lo, hi, rows);
		return 1;
	}
	if (rows < (uint64_t)acked + 1) {
		snprintf(why, cap,
			 "%" PRIu64 " commits, %d acknowledged: lost %" PRIu64,
			 rows, acked + 1, (uint64_t)acked + 1 - rows);
		return (unsigned)((uint64_t)acked + 1 - rows);
	}
	return 0;
}

/* The cp source's file @i, relative. */
static void cp_name(char *buf, size_t cap, unsigned i)
{
	snprintf(buf, cap, i == CP_FILES - 1 ? "sub/f%u" : "f%u", i);
}

/* Before "ready": the source tree (made durable by its syncfs). */
static int make_cp_source(const char *mnt)
{
	char path[PATH_MAX + 64], name[32];
	static char buf[FILE_BYTES];
	snprintf(path, sizeof(path), "%s/src", mnt);
	if (mkdir(path, 0700))
		return -1;
	snprintf(path, sizeof(path), "%s/src/sub", mnt);
	if (mkdir(path, 0700))
		return -1;
	for (unsigned i = 0; i < CP_FILES; i++) {
		cp_name(name, sizeof(name), i);
		snprintf(path, sizeof(path), "%s/src/%s", mnt, name);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		pattern(buf, 100 + i, i);
		size_t len = FILE_BYTES - i * 1000;
		if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

static int run_cp(const char *mnt)
{
	char src[PATH_MAX], dst[PATH_MAX + 16];
	if (strlen(mnt) > 1024)
		return -1;
	snprintf(src, sizeof(src), "%s/src", mnt);
	for (unsigned k = 0; k < COPIES; k++) {
		snprintf(dst, sizeof(dst), "%s/dst-%u", mnt, k);
		char *argv[] = {flushkit_bin, "cp", "-a", src, dst, NULL};
		if (run_quiet(argv)) {
			fprintf(stderr, "  flushkit cp %u failed\n", k);
			return -1;
		}
		if (mark("ack:%u", k))
			return -1;
	}
	return 0;
}

/* ---- checks (on the replayed image, mounted at replay_fs.mnt) ---- */

/* Missing or incomplete acknowledged files: their count. */
static unsigned check_batch(const char *mnt, int acked, char *why, size_t cap)
{
	static char want[FILE_BYTES], got[FILE_BYTES + 1];
	unsigned bad = 0;
	for (int k = 0; k <= acked; k++)
		for (unsigned f = 0; f < FILES; f++) {
			char path[PATH_MAX + 32];
			snprintf(path, sizeof(path), "%s/batch/r%d-f%u", mnt, k,
				 f);
			int fd = open(path, O_RDONLY);
			ssize_t n = fd >= 0 ? read(fd, got, sizeof(got)) : -1;
			if (fd >= 0)
				close(fd);
			pattern(want, (unsigned)k, f);
			if (n != FILE_BYTES || memcmp(got, want, FILE_BYTES)) {
				if (!bad)
					snprintf(
					    why, cap,
					    "r%d-f%u (acknowledged) %s", k, f,
					    fd < 0 ? "missing" : "incomplete");
				bad++;
			}
		}
	return bad;
}

static unsigned check_cp(const char *mnt, int acked, char *why, size_t cap)
{
	static char want[FILE_BYTES], got[FILE_BYTES + 1];
	unsigned bad = 0;
	for (int k = 0; k <= acked; k++)
		for (unsigned i = 0; i < CP_FILES; i++) {
			char path[PATH_MAX + 64], name[32];
			cp_name(name, sizeof(name), i);
			snprintf(path, sizeof(path), "%s/dst-%d/%s", mnt, k,
				 name);
			int fd = open(path, O_RDONLY);
			ssize_t n = fd >= 0 ? read(fd, got, sizeof(got)) : -1;
			if (fd >= 0)
				close(fd);
			pattern(want, 100 + i, i);
			size_t len = FILE_BYTES - i * 1000;
			if (n != (ssize_t)len || memcmp(got, want, len)) {
				if (!bad)
					snprintf(why, cap,
						 "dst-%d/%s (cp exited 0) %s",
						 k, name,
						 fd < 0 ? "missing"
							: "incomplete");
				bad++;
			}
		}
	return bad;
}

static unsigned check_replace(const char *mnt, int acked, char *why, size_t cap)
{
	char path[PATH_MAX + 32], got[4096], want[3100];
	snprintf(path, sizeof(path), "%s/control-file", mnt);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, got, sizeof(got) - 1) : -1;
	if (fd >= 0)
		close(fd);
	for (int j = acked; j <= acked + 1 && j < REPLACES && n >= 0; j++) {
		replace_text(want, sizeof(want), (unsigned)j);
		if ((size_t)n == strlen(want) && !memcmp(got, want, (size_t)n))
			return 0;
	}
	snprintf(why, cap,
		 "control-file %s: neither version %d (acknowledged) nor "
		 "%d",
		 fd < 0 ? "missing" : "holds another text", acked, acked + 1);
	return 1;
}

/* ---- replay ---- */

enum wl { WL_BATCH, WL_REPLACE, WL_CP, WL_STORE, WL_CONTROL, WL_STORE_CONTROL };
static const char *const wl_names[] = {"batch", "replace", "cp",
				       "store", "control", "control-store"};

static int acked_at(const struct wlog *l, size_t p)
{
	int a = -1;
	for (size_t i = 0; i < p && i < l->n; i++)
		if (l->v[i].type == WLOG_MARK &&
		    !strncmp(l->v[i].mark, "ack:", 4))
			a = atoi(l->v[i].mark + 4);
	return a;
}

struct tally {
	unsigned points, flush_points, random_points, failed, lost;
};

/* Rebuild @p, mount, check.  1: the promise broke, 0: held, -1: error. */
static int check_point(const struct wlog *l, enum wl w, const char *type,
		       size_t p, uint64_t seed, struct tally *t)
{
	char err[512], why[256] = "";
	int fd = open(replay_fs.img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || wlog_replay(l, p, seed, fd, err, sizeof(err))) {
		fprintf(stderr, "  replay point %zu: %s\n", p,
			fd < 0 ? strerror(errno) : err);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	int acked = acked_at(l, p);
	t->points++;
	if (fkt_fs_mount(&replay_fs)) {
		fprintf(stderr,
			"  %s %s: point %zu seed %" PRIu64
			": the image does not mount\n",
			type, wl_names[w], p, seed);
		return 1;
	}
	unsigned bad = 0;
	if (acked >= 0)
		bad = w == WL_REPLACE ? check_replace(replay_fs.mnt, acked, why,
						      sizeof(why))
		      : w == WL_STORE || w == WL_STORE_CONTROL
			  ? check_store(replay_fs.mnt, acked, why, sizeof(why))
		      : w == WL_CP
			  ? check_cp(replay_fs.mnt, acked, why, sizeof(why))
			  : check_batch(replay_fs.mnt, acked, why, sizeof(why));
	fkt_fs_umount(&replay_fs);
	if (bad && w != WL_CONTROL && w != WL_STORE_CONTROL)
		fprintf(stderr,
			"  %s %s: point %zu seed %" PRIu64 " (ack:%d): %s\n",
			type, wl_names[w], p, seed, acked, why);
	t->lost += bad;
	return bad ? 1 : 0;
}

static int replay_all(const char *logpath, enum wl w, const char *type,
		      unsigned nrandom, struct tally *t)
{
	struct wlog l;
	char err[512];
	if (wlog_load(&l, logpath, err, sizeof(err))) {
		fprintf(stderr, "  %s\n", err);
		return -1;
	}
	if (l.full) {
		fprintf(stderr, "  %s: the write log is full\n", logpath);
		wlog_close(&l);
		return -1;
	}
	size_t start = wlog_mark_point(&l, "ready");
	if (start == (size_t)-1) {
		fprintf(stderr, "  %s: no 'ready' mark\n", logpath);
		wlog_close(&l);
		return -1;
	}
	int r = 0;
	/* Every FLUSH boundary from the last one before ready (syncfs's:
	 * the setup durable there) on. */
	size_t *fp = calloc(l.flushes + 2, sizeof(*fp)), nf = 0;
	size_t f0 = wlog_last_flush(&l, start);
	if (f0 != (size_t)-1)
		fp[nf++] = f0 + 1;
	for (size_t i = start; i < l.n; i++)
		if (l.v[i].type == WLOG_FLUSH)
			fp[nf++] = i + 1;
	for (size_t i = 0; i < nf && r >= 0; i++) {
		int c = check_point(&l, w, type, fp[i], 0, t);
		t->flush_points += c >= 0;
		if (c > 0)
			t->failed++;
		if (c < 0)
			r = -1;
	}
	/* Random points between two flushes (or after the last one). */
	/* Random points between two flushes (or after the last one): in
	 * the windows that hold at least one entry besides their FLUSH. */
	size_t *win = calloc(nf + 1, sizeof(*win)), nw = 0;
	for (size_t k = 0; k < nf; k++) {
		size_t hi = k + 1 < nf ? fp[k + 1] - 1 : l.n;
		if (hi > fp[k])
			win[nw++] = k;
	}
	for (unsigned i = 0; i < nrandom && nw && r >= 0; i++) {
		size_t k = win[fkt_rnd_below(&rng, nw)];
		size_t lo = fp[k], hi = k + 1 < nf ? fp[k + 1] - 1 : l.n;
		/* A point in (lo, hi]: after lo's FLUSH, some of the
		 * window's entries before it. */
		size_t p = lo + 1 + (size_t)fkt_rnd_below(&rng, hi - lo);
		uint64_t seed = fkt_rnd(&rng) | 1;
		int c = check_point(&l, w, type, p, seed, t);
		t->random_points += c >= 0;
		if (c > 0)
			t->failed++;
		if (c < 0)
			r = -1;
	}
	free(win);
	free(fp);
	wlog_close(&l);
	return r;
}

/* One workload on a fresh logged disk, then its replay.  0, 77, -1. */
static int trial(const char *type, enum wl w, unsigned nrandom, struct tally *t)
{
	char logpath[PATH_MAX], mnt[1024];
	snprintf(logpath, sizeof(logpath), "%s/%s-%s.wlog", fkt_tmpdir(), type,
		 wl_names[w]);
	snprintf(mnt, sizeof(mnt), "%s/live", fkt_tmpdir());
	unlink(logpath);
	mkdir(mnt, 0700);
	struct labdisk_opts o = {.model = "ram",
				 .size = 320ull << 20,
				 .write_log = logpath,
				 .write_log_max = 512ull << 20,
				 .orphan_cleanup = 1};
	if (labdisk_create(&o, &disk))
		return -1;
	disk_alive = 1;
	int r = fkt_mkfs(type, disk.dev);
	if (r) {
		disk_cleanup();
		return r == 77 ? 77 : -1;
	}
	if (mount(disk.dev, mnt, type, 0, NULL)) {
		fprintf(stderr, "  mount %s: %s\n", type, strerror(errno));
		disk_cleanup();
		return -1;
	}
	if (w == WL_CP && make_cp_source(mnt))
		r = -1;
	if ((w == WL_STORE || w == WL_STORE_CONTROL) && make_store(mnt))
		r = -1;
	int dfd = open(mnt, O_RDONLY | O_DIRECTORY);
	if (r || dfd < 0 || syncfs(dfd) || mark("ready%.0u", 0))
		r = -1;
	if (dfd >= 0)
		close(dfd);
	if (!r)
		r = w == WL_REPLACE ? run_replace(mnt)
		    : w == WL_CP    ? run_cp(mnt)
		    : w == WL_STORE ? run_store()
		    : w == WL_STORE_CONTROL
			? (labdisk_ctl(&disk, "flush ignore\n") ? -1
								: run_store())
			: run_batch(mnt, w == WL_CONTROL);
	if (umount(mnt) && !r) {
		fprintf(stderr, "  umount: %s\n", strerror(errno));
		r = -1;
	}
	disk_cleanup();
	if (r)
		return -1;
	r = replay_all(logpath, w, type, nrandom, t);
	if (getenv("FK_REPLAY_KEEP"))
		printf("  kept %s\n", logpath);
	else
		unlink(logpath);
	return r;
}

int main(void)
{
	if (geteuid() != 0)
		SKIP("needs root");
	if (access("/dev/fuse", R_OK | W_OK))
		SKIP("no /dev/fuse");
	char daemon[PATH_MAX];
	if (labdisk_daemon_path(daemon, sizeof(daemon)))
		SKIP("flushkit-diskd not built");
	char self[1024];
	ssize_t sn = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sn <= 0)
		SKIP("cannot read /proc/self/exe");
	self[sn] = 0;
	*strrchr(self, '/') = 0;
	snprintf(replace_bin, sizeof(replace_bin), "%s/tools/durable-replace",
		 self);
	if (access(replace_bin, X_OK))
		SKIP("durable-replace not built");
	snprintf(flushkit_bin, sizeof(flushkit_bin), "%s/../flushkit", self);
	if (access(flushkit_bin, X_OK))
		SKIP("flushkit not built");
	uint64_t seed = fkt_cut_seed_env();
	fkt_rnd_seed(&rng, seed);
	const char *pe = getenv("FK_REPLAY_POINTS");
	unsigned nrandom = pe && *pe ? (unsigned)atoi(pe) : 16;
	const char *fsl = getenv("FK_REPLAY_FS");
	char fslist[128];
	snprintf(fslist, sizeof(fslist), "%s",
		 fsl && *fsl ? fsl : "ext4 xfs btrfs");
	printf("test-replay: seed %" PRIu64 ", %u random points per "
	       "workload\n",
	       seed, nrandom);
	snprintf(replay_fs.img, sizeof(replay_fs.img), "%s/replayed.img",
		 fkt_tmpdir());
	snprintf(replay_fs.mnt, sizeof(replay_fs.mnt), "%s/replayed",
		 fkt_tmpdir());
	mkdir(replay_fs.mnt, 0700);
	atexit(disk_cleanup);
	static struct fkt_fs *const cleanup_fss[] = {&replay_fs};
	fkt_cleanup_at_exit(cleanup_fss, 1, NULL);
	unsigned types_run = 0, trials = 0, failed = 0;
	char *save = NULL;
	for (char *type = strtok_r(fslist, " ", &save); type;
	     type = strtok_r(NULL, " ", &save)) {
		snprintf(replay_fs.type, sizeof(replay_fs.type), "%s", type);
		for (int w = WL_BATCH; w <= WL_STORE_CONTROL; w++) {
			struct tally t = {0};
			int r = trial(type, (enum wl)w, nrandom, &t);
			if (r == 77) {
				printf("  %-5s: no mkfs.%s, skipped\n", type,
				       type);
				break;
			}
			types_run += w == WL_BATCH;
			printf(
			    "  %-5s %-7s: %u points (%u flush boundaries, "
			    "%u random), %u broke the promise, %u acknowledged "
			    "items lost%s\n",
			    type, wl_names[w], t.points, t.flush_points,
			    t.random_points, t.failed, t.lost,
			    r ? " (ERROR)" : "");
			if (r) {
				nr_failed++;
				continue;
			}
			if (w == WL_CONTROL || w == WL_STORE_CONTROL) {
				/* The harness must catch the missing fsync. */
				if (!t.failed) {
					fprintf(stderr,
						"  %s control: no point lost "
						"an unsynced, acknowledged "
						"file: replay cannot fail\n",
						type);
					nr_failed++;
				}
			} else {
				trials += t.points;
				failed += t.failed;
				if (t.failed || !t.flush_points)
					nr_failed++;
			}
		}
	}
	if (!types_run)
		SKIP("no file system to test");
	printf("trials: %u, failed: %u (replay points of the promises; the "
	       "control apart)\n",
	       trials, failed);
	printf("test-replay: seed %" PRIu64 ": %s\n", seed,
	       nr_failed ? "FAILED" : "ok");
	return nr_failed ? 1 : 0;
}
