// SPDX-License-Identifier: MIT
/*
 * test-cut-fsync-batch.c - fk_fsync_batch alone under power cuts that
 * lose the disk's write cache (tests/lib/fkcut.h: a lab disk, ram model,
 * write cache on), ext4, xfs and btrfs, with the io_uring and the thread
 * backends.
 *
 * A directory holds NR_FILES files of FILE_BLOCKS 4 KiB blocks, made
 * durable first (round 0).  A forked child then runs NR_ROUNDS rounds;
 * round r rewrites every block of every file with round r's stamp,
 * creates a new file "nR" (round r's blocks), and hands one
 * fk_fsync_batch_run all of it: an fsync or fdatasync (alternately) of
 * each file, an fsync of the new file and one of the directory (its
 * name).  Each request whose result is 0 is reported to the parent over
 * a pipe as durable ("ack": file i at round r; the new file nR once both
 * its fsync and the directory's returned 0).  On the first error the
 * child stops.
 *
 * The cut: the first trial of each backend runs uncut to the end and
 * counts the disk's FLUSHes (F), then is cut right after; trial k > 0
 * arms the cut at FLUSH 1 + (k - 1) * F / (trials - 1) of its run (the
 * disk loses its cache as that FLUSH arrives: "cut MODE SEED flush N"),
 * so the cuts step through the run from its first FLUSH to its last.
 * After the remount (the file system's recovery), every promise of the
 * batch must hold: each block of file i carries a round >= the last
 * round acknowledged for it (a subset or reordered cache may keep parts
 * of later rounds, never older ones), every block is one a round wrote
 * (stamp and fill checked), and every acknowledged nR exists with all
 * of round r's blocks.
 *
 * The negative control (FK_CUT_FLUSH=ignore): the disk acknowledges
 * every FLUSH without making anything durable while the child runs, the
 * child runs uncut to the end, then a drop cut: the acknowledged rounds
 * must be lost in most trials (the suite: at least 3 of 4 trials that
 * had an ack; it prints the rate).
 *
 * FK_TRIALS (default 8): trials per backend per file system;
 * FK_TEST_SEED; FK_CUTBATCH_FS ("ext4,xfs,btrfs"); FK_CUTBATCH_IO
 * ("uring,threads").  Needs root, /dev/fuse, loop devices and
 * flushkit-diskd (77 otherwise); a backend that cannot be set up
 * (io_uring refused) is said and skipped.  Prints "trials: N, failed: F"
 * and "acknowledged: A, lost: L".
 */
#include "fkcut.h"
#include "fkloop.h"
#include "fktest.h"
#include "fktorture.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_FILES 16
#define FILE_BLOCKS 4
#define BLOCK 4096
#define SECTOR 512
#define NR_ROUNDS 12

/* One acknowledgement from the child. */
struct ack {
	uint32_t kind; /* 0: file @file at @round; 1: new file n@round */
	uint32_t file;
	uint32_t round;
};

static struct fkt_fs cur;
static uint64_t rng;
static int control;
static unsigned nr_trials, nr_failed;
static unsigned long long nr_acked, nr_lost;
static unsigned long long nr_torn; /* blocks of mixed rounds (allowed) */
static unsigned control_trials, control_lost; /* with an ack / lost one */

static uint64_t rnd(void)
{
	return fkt_rnd(&rng);
}

/* The disk's FLUSH count (0 if unknown). */
static uint64_t disk_flushes(void)
{
	char *text = NULL, *v = NULL;
	if (cur.cut && !labdisk_stats(&cur.cut->disk, &text))
		v = labdisk_stat(text, "fsyncs");
	uint64_t n = v ? strtoull(v, NULL, 10) : 0;
	free(v);
	free(text);
	return n;
}

/* Block @b of file @f at round @r: SECTOR-byte sectors, each a stamp
 * line, then a fill that depends on all four (a block may be torn at a
 * sector boundary: ext4 takes 1 KiB blocks on a disk this small, so a
 * 4 KiB page can span two of the disk's 4 KiB cache blocks, and a cut
 * may keep one of them; only a write not acknowledged may be torn). */
static void make_block(char *buf, unsigned f, unsigned r, unsigned b)
{
	for (unsigned q = 0; q < BLOCK / SECTOR; q++) {
		char *p = buf + q * SECTOR;
		int n = snprintf(
		    p, SECTOR, "fkbatch file %u round %u block %u sector %u\n",
		    f, r, b, q);
		for (size_t i = (size_t)n; i < SECTOR; i++)
			p[i] = (char)('a' + (f * 7 + r * 3 + b + q + i) % 26);
	}
}

/* The round of sector @q of block @b of file @f read back (@p), or -1
 * if it is not one a round wrote there. */
static int sector_round(const char *p, unsigned f, unsigned b, unsigned q)
{
	unsigned ff, r, bb, qq;
	char want[BLOCK];
	if (sscanf(p, "fkbatch file %u round %u block %u sector %u\n", &ff, &r,
		   &bb, &qq) != 4 ||
	    ff != f || bb != b || qq != q || r > NR_ROUNDS)
		return -1;
	make_block(want, f, r, b);
	return memcmp(p, want + q * SECTOR, SECTOR) ? -1 : (int)r;
}

/* The oldest round among the sectors of block @b of file @f (@buf), or
 * -1 if a sector is not one a round wrote; *@torn: rounds differ. */
static int block_round(const char *buf, unsigned f, unsigned b, int *torn)
{
	int min = NR_ROUNDS + 1, max = -1;
	for (unsigned q = 0; q < BLOCK / SECTOR; q++) {
		int r = sector_round(buf + q * SECTOR, f, b, q);
		if (r < 0)
			return -1;
		min = r < min ? r : min;
		max = r > max ? r : max;
	}
	*torn = min != max;
	return min;
}

static int write_file(int fd, unsigned f, unsigned r)
{
	char buf[BLOCK];
	for (unsigned b = 0; b < FILE_BLOCKS; b++) {
		make_block(buf, f, r, b);
		if (pwrite(fd, buf, BLOCK, (off_t)b * BLOCK) != BLOCK)
			return -1;
	}
	return 0;
}

/* The directory of a trial with its files at round 0, all durable. */
static int setup(const char *dir)
{
	if (mkdir(dir, 0700) != 0)
		return -1;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dfd < 0)
		return -1;
	int r = 0;
	for (unsigned f = 0; f < NR_FILES && !r; f++) {
		char name[32];
		snprintf(name, sizeof(name), "f%u", f);
		int fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL, 0600);
		r = fd < 0 || write_file(fd, f, 0) || fsync(fd) ? -1 : 0;
		if (fd >= 0)
			close(fd);
	}
	if (!r && (fsync(dfd) || syncfs(dfd)))
		r = -1;
	close(dfd);
	/* The trial's parent directory (the mount's root) too. */
	if (!r) {
		int mfd = open(cur.mnt, O_RDONLY | O_DIRECTORY);
		r = mfd < 0 || fsync(mfd) ? -1 : 0;
		if (mfd >= 0)
			close(mfd);
	}
	return r;
}

/* The child: the rounds, an ack on @out for each durable promise. */
static void child(const char *dir, int sync_io, int out)
{
	struct fk_fsync_batch_opts bo;
	fk_fsync_batch_opts_init(&bo);
	bo.sync_io = sync_io;
	struct fk_fsync_batch *b;
	if (fk_fsync_batch_create(&bo, &b) != 0)
		_exit(3);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	int fds[NR_FILES];
	for (unsigned f = 0; f < NR_FILES; f++) {
		char name[32];
		snprintf(name, sizeof(name), "f%u", f);
		fds[f] = dfd < 0 ? -1 : openat(dfd, name, O_RDWR);
		if (fds[f] < 0)
			_exit(4);
	}
	struct fk_fsync_req reqs[NR_FILES + 2];
	for (unsigned r = 1; r <= NR_ROUNDS; r++) {
		int bad = 0;
		for (unsigned f = 0; f < NR_FILES && !bad; f++)
			bad = write_file(fds[f], f, r);
		char name[32];
		snprintf(name, sizeof(name), "n%u", r);
		int nfd =
		    bad ? -1
			: openat(dfd, name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (nfd < 0 || write_file(nfd, NR_FILES + r, r))
			_exit(0); /* the cut: nothing more to promise */
		memset(reqs, 0, sizeof(reqs));
		for (unsigned f = 0; f < NR_FILES; f++) {
			reqs[f].fd = fds[f];
			reqs[f].op =
			    f % 2 ? FK_FSYNC_OP_FDATASYNC : FK_FSYNC_OP_FSYNC;
		}
		reqs[NR_FILES].fd = nfd;
		reqs[NR_FILES].op = FK_FSYNC_OP_FSYNC;
		reqs[NR_FILES + 1].fd = dfd;
		reqs[NR_FILES + 1].op = FK_FSYNC_OP_FSYNC;
		int rr = fk_fsync_batch_run(b, reqs, NR_FILES + 2);
		/* Each request that returned 0 is a promise, whatever the
		 * others returned. */
		for (unsigned f = 0; f < NR_FILES; f++) {
			struct ack a = {0, f, r};
			if (reqs[f].result == 0 &&
			    write(out, &a, sizeof(a)) != sizeof(a))
				_exit(5);
		}
		if (reqs[NR_FILES].result == 0 &&
		    reqs[NR_FILES + 1].result == 0) {
			struct ack a = {1, 0, r};
			if (write(out, &a, sizeof(a)) != sizeof(a))
				_exit(5);
		}
		close(nfd);
		if (rr != 0)
			_exit(0);
	}
	_exit(0);
}

/* Wait for @pid, SIGKILL after 120 s.  Its exit status (128+: killed). */
static int wait_child(pid_t pid)
{
	int st;
	for (int i = 0; i < 1200; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		struct timespec d = {0, 100 * 1000 * 1000};
		nanosleep(&d, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 128 + SIGKILL;
}

/* Check the trial's directory against the acks; returns the promises
 * broken (each printed). */
static unsigned check(const char *dir, const int *acked_file,
		      const int *acked_new, unsigned *nr_ack)
{
	unsigned lost = 0;
	char path[PATH_MAX + 32], buf[BLOCK];
	*nr_ack = 0;
	for (unsigned f = 0; f < NR_FILES; f++) {
		*nr_ack += acked_file[f] > 0;
		snprintf(path, sizeof(path), "%s/f%u", dir, f);
		int fd = open(path, O_RDONLY);
		if (fd < 0) {
			printf("    LOST: %s: %s\n", path, strerror(errno));
			lost++;
			continue;
		}
		for (unsigned b = 0; b < FILE_BLOCKS; b++) {
			int torn = 0;
			int r = pread(fd, buf, BLOCK, (off_t)b * BLOCK) == BLOCK
				    ? block_round(buf, f, b, &torn)
				    : -1;
			nr_torn += torn;
			if (r < acked_file[f]) {
				printf("    LOST: %s block %u: %s, round %d "
				       "was acknowledged\n",
				       path, b,
				       r < 0 ? "a sector no round wrote"
					     : "a sector of an older round",
				       acked_file[f]);
				lost++;
				break;
			}
		}
		close(fd);
	}
	for (unsigned r = 1; r <= NR_ROUNDS; r++) {
		if (!acked_new[r])
			continue;
		(*nr_ack)++;
		snprintf(path, sizeof(path), "%s/n%u", dir, r);
		int fd = open(path, O_RDONLY);
		struct stat st;
		int ok = fd >= 0 && fstat(fd, &st) == 0 &&
			 st.st_size == FILE_BLOCKS * BLOCK;
		for (unsigned b = 0; ok && b < FILE_BLOCKS; b++) {
			int torn = 0;
			ok = pread(fd, buf, BLOCK, (off_t)b * BLOCK) == BLOCK &&
			     block_round(buf, NR_FILES + r, b, &torn) ==
				 (int)r &&
			     !torn;
		}
		if (fd >= 0)
			close(fd);
		if (!ok) {
			printf("    LOST: %s (acknowledged: fsync and the "
			       "directory's fsync returned 0)\n",
			       path);
			lost++;
		}
	}
	return lost;
}

/*
 * One trial: @cut_at 0 runs to the end, then cuts (*@flushes gets the
 * run's FLUSHes); else the cut is armed at that FLUSH.
 */
static void trial(unsigned id, int sync_io, uint64_t cut_at, uint64_t *flushes)
{
	int before = fkt_failures;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/b%u", cur.mnt, id);
	if (setup(dir) != 0) {
		fprintf(stderr, "  cannot set up %s: %s\n", dir,
			strerror(errno));
		fkt_failures++;
		goto out;
	}
	if (cut_at && fkt_cut_arm_flush(&cur, cut_at) != 0) {
		fkt_failures++;
		goto out;
	}
	if (fkt_cut_window(&cur) != 0) {
		fkt_failures++;
		goto out;
	}
	int p[2];
	if (pipe(p) != 0) {
		fkt_failures++;
		goto out;
	}
	uint64_t f0 = disk_flushes();
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(dir, sync_io, p[1]);
	}
	close(p[1]);
	int rc = wait_child(pid);
	if (!cut_at && flushes)
		*flushes = disk_flushes() - f0;
	int acked_file[NR_FILES] = {0}, acked_new[NR_ROUNDS + 1] = {0};
	struct ack a;
	unsigned nr_msgs = 0;
	while (read(p[0], &a, sizeof(a)) == sizeof(a)) {
		nr_msgs++;
		if (a.kind == 0 && a.file < NR_FILES && a.round <= NR_ROUNDS &&
		    (int)a.round > acked_file[a.file])
			acked_file[a.file] = (int)a.round;
		else if (a.kind == 1 && a.round <= NR_ROUNDS)
			acked_new[a.round] = 1;
	}
	close(p[0]);
	if (rc != 0) {
		fprintf(stderr, "  child exit %d\n", rc);
		fkt_failures++;
	}
	/* The cut (at once if the armed FLUSH never came), then the
	 * file system's recovery. */
	int g = fkt_fs_goingdown(&cur, FKT_GOINGDOWN_NOLOGFLUSH);
	if (g < 0 || fkt_fs_umount(&cur) || fkt_fs_mount(&cur)) {
		fprintf(stderr, "  cut or remount failed\n");
		fkt_failures++;
		goto out;
	}
	unsigned nr_ack;
	unsigned lost = check(dir, acked_file, acked_new, &nr_ack);
	nr_acked += nr_msgs;
	unsigned last = 0;
	for (unsigned f = 0; f < NR_FILES; f++)
		if ((unsigned)acked_file[f] > last)
			last = (unsigned)acked_file[f];
	printf("  %-5s %-7s %s: %u requests acknowledged (up to round "
	       "%u of %u), %u promises lost%s\n",
	       cur.type, fk_sync_io_name(sync_io),
	       cut_at ? "cut at a FLUSH  " : "cut after the run", nr_msgs, last,
	       NR_ROUNDS, lost, lost && !control ? "  FAILED" : "");
	if (control) {
		/* Lost is what must happen: not a failure. */
		control_trials += nr_ack > 0;
		control_lost += nr_ack > 0 && lost > 0;
	} else {
		nr_lost += lost;
		if (lost)
			fkt_failures++;
	}
out:
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr, "  trial %u FAILED (%s, %s)\n", id, cur.type,
			fk_sync_io_name(sync_io));
	}
}

int main(void)
{
	if (!fkt_is_root())
		SKIP("needs root (lab disk, loop devices)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t seed = fkt_cut_seed_env();
	fkt_rnd_seed(&rng, seed);
	unsigned trials = fkt_torture_trials_env(8);
	const char *fss = getenv("FK_CUTBATCH_FS");
	if (!fss || !*fss)
		fss = "ext4,xfs,btrfs";
	const char *ios = getenv("FK_CUTBATCH_IO");
	if (!ios || !*ios)
		ios = "uring,threads";
	struct fkt_cut_opts co;
	if (fkt_cut_opts_env(&co, seed) < 0)
		return 2;
	control = co.flush_ignore;
	printf("seed: %llu (FK_TEST_SEED), trials: %u (FK_TRIALS) per "
	       "backend, file systems: %s, backends: %s%s\n",
	       (unsigned long long)seed, trials, fss, ios,
	       control ? ", FLUSH ignored (negative control)" : "");
	static struct fkt_fs *const cleanup_fss[] = {&cur};
	fkt_cleanup_at_exit(cleanup_fss, 1, NULL);
	static const char *const types[] = {"ext4", "xfs", "btrfs"};
	static const int backends[] = {FK_SYNC_IO_URING, FK_SYNC_IO_THREADS};
	int ran = 0;
	unsigned id = 0;
	for (int i = 0; i < 3; i++) {
		if (!strstr(fss, types[i]))
			continue;
		char mnt[PATH_MAX];
		snprintf(mnt, sizeof(mnt), "%s/mnt-%s", fkt_tmpdir(), types[i]);
		int r =
		    fkt_fs_create_cut(&cur, types[i], 320ull << 20, mnt, &co);
		if (r == 77) {
			printf("%s: not available, skipped\n", types[i]);
			continue;
		}
		CHECK_EQ(r, 0);
		if (r)
			continue;
		ran++;
		for (int k = 0; k < 2; k++) {
			int io = backends[k];
			if (!strstr(ios, fk_sync_io_name(io)))
				continue;
			struct fk_fsync_batch_opts bo;
			struct fk_fsync_batch *b;
			fk_fsync_batch_opts_init(&bo);
			bo.sync_io = io;
			int cr = fk_fsync_batch_create(&bo, &b);
			if (cr != 0) {
				printf("%s: backend %s not available (%s), "
				       "skipped\n",
				       types[i], fk_sync_io_name(io),
				       strerror(-cr));
				continue;
			}
			fk_fsync_batch_destroy(b);
			uint64_t flushes = 0;
			trial(++id, io, 0, &flushes);
			if (!flushes)
				flushes = 1;
			printf("  (%s %s: %llu FLUSHes in an uncut run)\n",
			       types[i], fk_sync_io_name(io),
			       (unsigned long long)flushes);
			for (unsigned n = 1; !control && n < trials; n++) {
				/* Evenly from the first FLUSH to the last,
				 * a random step's worth off each time. */
				uint64_t step = flushes / (trials - 1);
				uint64_t at = 1 + (n - 1) * step +
					      (step > 1 ? rnd() % step : 0);
				if (at > flushes)
					at = flushes;
				trial(++id, io, at, NULL);
			}
			for (unsigned n = 1; control && n < trials; n++)
				trial(++id, io, 0, NULL);
		}
		fkt_fs_destroy(&cur);
	}
	if (!ran)
		SKIP("no lab disk, loop devices or mkfs");
	printf("acknowledged: %llu, lost: %llu (blocks torn between an "
	       "acknowledged round and a later one, allowed: %llu)\n",
	       nr_acked, nr_lost, nr_torn);
	if (control) {
		printf("negative control: %u of %u trials with an "
		       "acknowledged request lost one\n",
		       control_lost, control_trials);
		CHECK(control_trials > 0);
		CHECK(4 * control_lost >= 3 * control_trials);
	}
	printf("trials: %u, failed: %u\n", nr_trials, nr_failed);
	return fkt_done();
}
