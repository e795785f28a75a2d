// SPDX-License-Identifier: MIT
/*
 * test-tree-powercut.c - flushkit cp and flushkit
 * sync under power cuts, on loop-mounted ext4 and xfs (root only; 77
 * otherwise).
 *
 * A source tree (nested directories, small, empty, large and sparse
 * files, symlinks, dangling ones too, hard links, varied modes, owners,
 * mtimes with nanoseconds, a user.* xattr) is made once on the disk under
 * fkt_tmpdir().  Then, on each file system, per method:
 *
 *  cp-after   `flushkit cp --method=M SRC MNT/tN` (tN made durable
 *             first; the copy is MNT/tN/src), power cut right after it
 *             exited 0: after the remount the copy must equal the source
 *             exactly (names, types, content, size, mode, owner, mtime,
 *             symlink targets, hard links, xattrs, no extra names).
 *
 *  cp-during  the same command, power cut at a random moment while it
 *             runs (FS_IOC_GOINGDOWN NOLOGFLUSH first, then SIGKILL, then
 *             the remount).  If it had exited 0 before the cut, as
 *             cp-after.  Otherwise the incomplete copy must be
 *             DETECTABLE, which for flushkit cp means:
 *               1. a copied regular file that carries its source's size
 *                  and mtime (the rsync quick check) has its source's
 *                  content in full: an incomplete file never looks
 *                  complete to a size+mtime comparison;
 *               2. a copied directory that carries its source's mtime
 *                  has every name of its source;
 *               3. no name the source does not have; no file group- or
 *                  world-accessible with a mode other than 0600 or the
 *                  source's; symlinks present have the right target;
 *               4. running the same `flushkit cp` again exits 0 and,
 *                  after another power cut, the copy is exact (as
 *                  cp-after).
 *
 *  regression (deterministic, in-process fk_tree_copy, method delayed,
 *             sequential fsyncs): the fsync of one sparse file with a
 *             trailing hole fails (EIO injected through the syscall
 *             table: the real call is not made), the other fsyncs commit
 *             the journal, then a power cut.  That file must not look
 *             complete.  Before tree_copy.c set times only after data
 *             durability (invariant 7), ext4 kept it at its full size
 *             and its source's mtime, all zeros.
 *
 *  sync-after the source is copied to MNT/sN/tree with plain writes
 *             (cp -a: no fsync, new directories), then
 *             `flushkit sync --method=M MNT/sN` (sN made durable first:
 *             sync makes what is under PATH durable, not PATH's name),
 *             power cut after exit 0: MNT/sN/tree must equal the source.
 *
 *  nested     a second file system (a small ext4) is mounted on the
 *             directory MNT/nN/src/d0 of the destination before the copy
 *             (MNT/nN/src made durable first), so the copy of SRC/d0
 *             lands on it; `flushkit cp --method=M SRC MNT/nN`, then a
 *             power cut of both file systems (inner and outer
 *             FS_IOC_GOINGDOWN NOLOGFLUSH, unmount both, mount both):
 *             the copy must equal the source exactly, the files on the
 *             inner file system included.  Likewise for `flushkit sync
 *             --method=M MNT/nN` over a tree written with cp -a across
 *             the same kind of mount.  A method that syncs only the
 *             file system of its destination loses the inner files.
 *             With FK_CUT=disk the inner file system is a second lab
 *             disk; the cut after exit 0 takes both disks, the inner or
 *             the outer one in turn, and each cp trial has a second run
 *             cut at a FLUSH of one of the disks (in turn) while it
 *             runs: detectable, then cp again and a cut of both: exact.
 *
 * Methods: cp auto (the command's default), writeback, delayed,
 * fsync-each, syncfs; the auto, writeback and delayed trials rotate
 * --sync-io through auto, threads and sequential.  sync auto (the
 * default), twopass, fsync, syncfs.
 *
 * FK_TRIALS (default 1): trials per method per kind per file system.
 * FK_TREECUT_KINDS ("regression,cp,sync,nested", the default) chooses
 * the kinds of trials.
 * FK_TEST_SEED fixes the source tree and the cut moments.  FK_TREECUT_FS
 * ("ext4", "xfs" or "ext4,xfs", the default) chooses the file systems.
 * FK_CUT=disk puts each file system on a lab disk (fkcut.h: ram, write
 * cache) whose power cut loses the unflushed cache (FK_CUT_MODE drop,
 * subset, reorder, mixed: the default), btrfs included (the default
 * FK_TREECUT_FS is then "ext4,xfs,btrfs"); half the cuts during a run
 * are then at the disk's N-th FLUSH.  FK_CUT_FLUSH=ignore is the
 * negative control: the disk ignores FLUSH while each command runs, so
 * the "cut after" trials must lose data.
 * The built command is $FLUSHKIT, else /proc/self/exe/../../flushkit.
 * Prints "trials: N, failed: F" at the end.
 */
#include "fkcut.h"
#include "fkloop.h"
#include "fktest.h"
#include "fktorture.h"
#include "flushkit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define XATTR_NAME "user.fktest"

/* Short enough that a path built from them fits PATH_MAX. */
static char flushkit[PATH_MAX];
static char src_root[1024]; /* .../src */
static char logdir[1024];
static uint64_t rng;
static char sparse_name[64];	/* a sparse file at the source's top */
static struct fkt_fs cur_fs;	/* cleaned up at exit */
static struct fkt_fs cur_inner; /* mounted inside cur_fs (nested) */
static pid_t cur_child = -1;

/* ---- small helpers ---- */

static uint64_t rnd(void)
{
	return fkt_rnd(&rng);
}

static uint64_t rnd_below(uint64_t n)
{
	return fkt_rnd_below(&rng, n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void find_flushkit(void)
{
	const char *env = getenv("FLUSHKIT");
	if (env && *env) {
		snprintf(flushkit, sizeof(flushkit), "%s", env);
		return;
	}
	/* BUILD/tests/test-tree-powercut -> BUILD/flushkit */
	char self[1024];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		SKIP("cannot read /proc/self/exe");
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(flushkit, sizeof(flushkit), "%s/flushkit", self);
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	int r = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return r;
}

/* mkdir @dir in the mounted file system and make its name durable. */
static int make_durable_dir(const char *mnt, const char *dir)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -errno;
	int r = fsync_path(dir);
	if (!r)
		r = fsync_path(mnt);
	return r;
}

/* Remove a finished trial's tree and make that durable (so a later power
 * cut does not bring it back and fill the image). */
static void drop_tree(const char *mnt, const char *dir)
{
	fkt_rm_rf(dir);
	int fd = open(mnt, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
}

/* ---- the source tree ---- */

static struct timespec rnd_time(void)
{
	struct timespec t;
	/* 2001 .. 2020, nanoseconds (never "now": a copy's creation time
	 * can never be mistaken for the source's). */
	t.tv_sec = 1000000000 + (time_t)rnd_below(600000000);
	t.tv_nsec = (long)rnd_below(1000000000);
	return t;
}

static void set_times_at(int dfd, const char *name)
{
	struct timespec ts[2] = {rnd_time(), rnd_time()};
	if (utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) != 0) {
		perror("utimensat");
		fkt_failures++;
	}
}

static void write_pattern(int fd, uint64_t off, uint64_t len, unsigned seed)
{
	char buf[65536];
	while (len > 0) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		for (size_t i = 0; i < n; i++) {
			uint64_t x = off + i;
			buf[i] =
			    (char)((x * 2654435761u) >> 13 ^ seed ^ (x >> 12));
		}
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
			perror("pwrite");
			fkt_failures++;
			return;
		}
		off += n;
		len -= n;
	}
}

struct gen {
	char files[512][PATH_MAX / 4]; /* regular files made (for links) */
	size_t nr_files;
	unsigned nr_sparse, nr_large, nr_links, nr_symlinks, nr_dirs;
	uint64_t bytes;
};

static const mode_t file_modes[] = {0644, 0600, 0755, 0444,
				    0640, 0400, 0700, 0664};
static const mode_t dir_modes[] = {0755, 0750, 0700, 0711, 0775};

static void make_file(struct gen *g, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		perror(path);
		fkt_failures++;
		return;
	}
	unsigned seed = (unsigned)rnd();
	uint64_t kind = rnd_below(100), size = 0;
	if (kind < 8) {
		size = 0; /* empty */
	} else if (kind < 55) {
		size = 1 + rnd_below(4096); /* tiny */
		write_pattern(fd, 0, size, seed);
	} else if (kind < 88) {
		size = 4096 + rnd_below(120000); /* small */
		write_pattern(fd, 0, size, seed);
	} else if (kind < 97 || g->nr_large >= 3) {
		/* Sparse with a trailing hole: data, hole, data, hole. */
		uint64_t a = 4096 + rnd_below(60000);
		uint64_t b = 1048576 + rnd_below(4) * 4096;
		uint64_t bl = 4096 + rnd_below(60000);
		size = b + bl + 1048576 + rnd_below(1048576);
		write_pattern(fd, 0, a, seed);
		write_pattern(fd, b, bl, seed);
		if (ftruncate(fd, (off_t)size) != 0)
			fkt_failures++;
		g->nr_sparse++;
		const char *slash = strrchr(path, '/');
		if (!sparse_name[0] && slash &&
		    strlen(slash + 1) < sizeof(sparse_name))
			strcpy(sparse_name, slash + 1);
		g->bytes += a + bl;
		size = 0;
	} else {
		size = 2 * 1048576 + rnd_below(4 * 1048576); /* large */
		write_pattern(fd, 0, size, seed);
		g->nr_large++;
	}
	g->bytes += size;
	if (rnd_below(10) == 0 &&
	    fsetxattr(fd, XATTR_NAME, path, strlen(path), 0) != 0)
		perror("fsetxattr");
	if (rnd_below(6) == 0 && fchown(fd, 1000 + (uid_t)rnd_below(3000),
					1000 + (gid_t)rnd_below(3000)) != 0)
		perror("fchown");
	fchmod(
	    fd,
	    file_modes[rnd_below(sizeof(file_modes) / sizeof(file_modes[0]))]);
	close(fd);
	if (g->nr_files < sizeof(g->files) / sizeof(g->files[0]) &&
	    strlen(path) < sizeof(g->files[0]))
		strcpy(g->files[g->nr_files++], path);
}

static void make_dir(struct gen *g, const char *dir, int depth)
{
	char p[PATH_MAX];
	unsigned nfiles = 4 + (unsigned)rnd_below(depth == 0 ? 10 : 18);
	for (unsigned i = 0; i < nfiles; i++) {
		snprintf(p, sizeof(p), "%s/f%u", dir, i);
		make_file(g, p);
	}
	/* An all-hole file and a large file somewhere near the top. */
	if (depth == 1 && g->nr_dirs % 3 == 0) {
		snprintf(p, sizeof(p), "%s/hole", dir);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0640);
		if (fd >= 0) {
			if (ftruncate(fd, 1048576 + (off_t)rnd_below(99999)))
				fkt_failures++;
			close(fd);
		}
	}
	unsigned nsyml = (unsigned)rnd_below(3);
	for (unsigned i = 0; i < nsyml; i++) {
		snprintf(p, sizeof(p), "%s/l%u", dir, i);
		const char *target =
		    rnd_below(3) == 0 ? "../no/such/target" : "f0";
		if (symlink(target, p) == 0)
			g->nr_symlinks++;
	}
	if (g->nr_files > 4 && rnd_below(2) == 0) {
		/* A hard link to a file made earlier, maybe elsewhere. */
		snprintf(p, sizeof(p), "%s/h%u", dir, g->nr_links);
		if (link(g->files[rnd_below(g->nr_files)], p) == 0)
			g->nr_links++;
	}
	/* 3-5 directories at the top, fewer below, down to depth 3. */
	unsigned nsub = depth == 0  ? 3 + (unsigned)rnd_below(3)
			: depth < 3 ? (unsigned)rnd_below(4 - (unsigned)depth)
				    : 0;
	for (unsigned i = 0; i < nsub; i++) {
		snprintf(p, sizeof(p), "%s/d%u", dir, i);
		if (mkdir(p, 0700) != 0) {
			fkt_failures++;
			continue;
		}
		g->nr_dirs++;
		make_dir(g, p, depth + 1);
	}
	/* Times last (a directory's after its contents), modes too. */
	DIR *d = opendir(dir);
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		set_times_at(dfd, de->d_name);
	}
	closedir(d);
	if (depth > 0)
		chmod(dir, dir_modes[rnd_below(sizeof(dir_modes) /
					       sizeof(dir_modes[0]))]);
}

static void make_source(const char *top)
{
	static struct gen g;
	memset(&g, 0, sizeof(g));
	snprintf(src_root, sizeof(src_root), "%s/src", top);
	if (mkdir(src_root, 0755) != 0) {
		perror(src_root);
		exit(1);
	}
	/* At least three large and four sparse files, whatever the seed. */
	for (unsigned i = 0; g.nr_large < 3 || g.nr_sparse < 4; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/x%u", src_root, i);
		make_file(&g, p);
	}
	make_dir(&g, src_root, 0);
	struct timespec ts[2] = {rnd_time(), rnd_time()};
	utimensat(AT_FDCWD, src_root, ts, 0);
	printf("source: %zu files (%u large, %u sparse), %u dirs, %u "
	       "symlinks, %u hard links, %.1f MiB\n",
	       g.nr_files, g.nr_large, g.nr_sparse, g.nr_dirs + 1,
	       g.nr_symlinks, g.nr_links, (double)g.bytes / 1048576.0);
}

/* ---- comparing a copy with the source ---- */

struct cmp {
	int full;	   /* exact copy expected */
	unsigned problems; /* shown at most a few */
	unsigned files_complete, files_incomplete, files_missing;
	unsigned dirs_incomplete;
	/* hard links: source inode -> destination inode */
	struct {
		ino_t src, dst;
		dev_t dst_dev;
	} links[1024];
	size_t nr_links;
};

static void problem(struct cmp *c, const char *fmt, const char *path,
		    const char *detail)
{
	if (c->problems++ < 12)
		fprintf(stderr, "    %s: %s%s%s\n", fmt, path,
			detail ? " " : "", detail ? detail : "");
	fkt_failures++;
}

static int same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* 1 if the files have the same bytes, 0 if not, -1 on a read error. */
static int same_content(const char *a, const char *b, off_t size)
{
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	int same = fa >= 0 && fb >= 0 ? 1 : -1;
	static char ba[1 << 17], bb[1 << 17];
	for (off_t off = 0; same == 1 && off < size;) {
		ssize_t na = pread(fa, ba, sizeof(ba), off);
		ssize_t nb = pread(fb, bb, sizeof(bb), off);
		if (na < 0 || nb < 0)
			same = -1;
		else if (na != nb || memcmp(ba, bb, (size_t)na) != 0)
			same = 0;
		else if (na == 0)
			break;
		else
			off += na;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

static int same_xattr(const char *a, const char *b)
{
	char va[PATH_MAX], vb[PATH_MAX];
	ssize_t na = lgetxattr(a, XATTR_NAME, va, sizeof(va));
	ssize_t nb = lgetxattr(b, XATTR_NAME, vb, sizeof(vb));
	if (na < 0 && nb < 0)
		return 1;
	return na == nb && memcmp(va, vb, (size_t)na) == 0;
}

/*
 * Names of one source inode are one destination inode on each
 * destination file system: a link cannot cross a mount, so with another
 * file system mounted inside the destination (nested) flushkit cp makes
 * one copy per file system and links the names on each to it.  Not
 * checked for trees written by coreutils' cp (nested sync trials: cp -a
 * links the inner names to the outer copy, fails with EXDEV, and the
 * second cp copies them one by one): set while comparing those.
 */
static int links_not_ours;

static void check_link(struct cmp *c, const struct stat *ss,
		       const struct stat *ds, const char *path)
{
	if (ss->st_nlink < 2 || links_not_ours)
		return;
	for (size_t i = 0; i < c->nr_links; i++) {
		if (c->links[i].src != ss->st_ino ||
		    c->links[i].dst_dev != ds->st_dev)
			continue;
		if (c->links[i].dst != ds->st_ino)
			problem(c, "hard link not kept", path, NULL);
		return;
	}
	if (c->nr_links < sizeof(c->links) / sizeof(c->links[0])) {
		c->links[c->nr_links].src = ss->st_ino;
		c->links[c->nr_links].dst = ds->st_ino;
		c->links[c->nr_links].dst_dev = ds->st_dev;
		c->nr_links++;
	}
}

static void cmp_file(struct cmp *c, const char *sp, const char *dp,
		     const struct stat *ss, const struct stat *ds)
{
	int claims_complete =
	    ds->st_size == ss->st_size && same_time(&ds->st_mtim, &ss->st_mtim);
	mode_t sm = ss->st_mode & 07777, dm = ds->st_mode & 07777;
	if (!c->full) {
		/* Rule 3: 0600 while incomplete, else the source's. */
		if (dm != 0600 && dm != sm)
			problem(c, "mode neither 0600 nor the source's", dp,
				NULL);
		if (!claims_complete) {
			c->files_incomplete++;
			return; /* detectable: size or mtime differs */
		}
	} else {
		if (ds->st_size != ss->st_size)
			problem(c, "size differs", dp, NULL);
		if (!same_time(&ds->st_mtim, &ss->st_mtim))
			problem(c, "mtime differs", dp, NULL);
		if (dm != sm)
			problem(c, "mode differs", dp, NULL);
		if (ds->st_uid != ss->st_uid || ds->st_gid != ss->st_gid)
			problem(c, "owner differs", dp, NULL);
		if (!same_xattr(sp, dp))
			problem(c, "xattr differs", dp, NULL);
		check_link(c, ss, ds, dp);
	}
	/* Rule 1: size and mtime say complete: so must the content. */
	int same = same_content(sp, dp, ss->st_size);
	char detail[96];
	snprintf(detail, sizeof(detail), "(%lld bytes%s, %lld KiB allocated)",
		 (long long)ss->st_size,
		 (uint64_t)ss->st_blocks * 512 < (uint64_t)ss->st_size
		     ? ", sparse"
		     : "",
		 (long long)ds->st_blocks / 2);
	if (same != 1)
		problem(c,
			same < 0 ? "cannot read"
				 : (c->full ? "content differs"
					    : "INCOMPLETE FILE LOOKS "
					      "COMPLETE (size+mtime match, "
					      "content differs)"),
			dp, detail);
	else
		c->files_complete++;
}

static void cmp_tree(struct cmp *c, const char *sdir, const char *ddir)
{
	DIR *d = opendir(sdir);
	if (!d) {
		problem(c, "cannot open source dir", sdir, NULL);
		return;
	}
	unsigned src_names = 0, missing = 0;
	char first_missing[300] = "";
	struct dirent *de;
	char sp[PATH_MAX], dp[PATH_MAX];
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		src_names++;
		snprintf(sp, sizeof(sp), "%s/%s", sdir, de->d_name);
		snprintf(dp, sizeof(dp), "%s/%s", ddir, de->d_name);
		struct stat ss, ds;
		if (lstat(sp, &ss) != 0) {
			problem(c, "cannot stat source", sp, NULL);
			continue;
		}
		if (lstat(dp, &ds) != 0) {
			if (!missing++)
				snprintf(first_missing, sizeof(first_missing),
					 "%s (%s)", de->d_name,
					 S_ISREG(ss.st_mode)   ? "file"
					 : S_ISLNK(ss.st_mode) ? "symlink"
					 : S_ISDIR(ss.st_mode) ? "directory"
							       : "special");
			if (S_ISREG(ss.st_mode))
				c->files_missing++;
			if (c->full)
				problem(c, "missing", dp, NULL);
			continue;
		}
		if ((ss.st_mode & S_IFMT) != (ds.st_mode & S_IFMT)) {
			problem(c, "type differs", dp, NULL);
			continue;
		}
		if (S_ISREG(ss.st_mode)) {
			cmp_file(c, sp, dp, &ss, &ds);
		} else if (S_ISLNK(ss.st_mode)) {
			char ts[PATH_MAX], td[PATH_MAX];
			ssize_t a = readlink(sp, ts, sizeof(ts) - 1);
			ssize_t b = readlink(dp, td, sizeof(td) - 1);
			if (a < 0 || b != a || memcmp(ts, td, (size_t)a))
				problem(c, "symlink target differs", dp, NULL);
			if (c->full && !same_time(&ds.st_mtim, &ss.st_mtim))
				problem(c, "symlink mtime differs", dp, NULL);
		} else if (S_ISDIR(ss.st_mode)) {
			cmp_tree(c, sp, dp);
		}
	}
	closedir(d);

	/* Rule 3 / exactness: no name the source does not have. */
	unsigned dst_names = 0;
	d = opendir(ddir);
	if (!d) {
		problem(c, "cannot open copied dir", ddir, NULL);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		dst_names++;
		snprintf(sp, sizeof(sp), "%s/%s", sdir, de->d_name);
		struct stat ss;
		if (lstat(sp, &ss) != 0)
			problem(c, "name not in the source", ddir, de->d_name);
	}
	closedir(d);

	struct stat ss, ds;
	if (lstat(sdir, &ss) != 0 || lstat(ddir, &ds) != 0)
		return;
	int claims_complete = same_time(&ds.st_mtim, &ss.st_mtim);
	if (c->full) {
		if (!claims_complete)
			problem(c, "directory mtime differs", ddir, NULL);
		if ((ds.st_mode & 07777) != (ss.st_mode & 07777))
			problem(c, "directory mode differs", ddir, NULL);
		if (ds.st_uid != ss.st_uid || ds.st_gid != ss.st_gid)
			problem(c, "directory owner differs", ddir, NULL);
	} else if (missing) {
		c->dirs_incomplete++;
		/* Rule 2: a directory missing names must not carry its
		 * source's mtime. */
		if (claims_complete)
			problem(c,
				"INCOMPLETE DIRECTORY LOOKS COMPLETE "
				"(mtime matches, names missing)",
				ddir, NULL);
	}
	(void)dst_names;
}

/* Compare @dst with the source; returns the number of problems. */
static unsigned compare(const char *dst, int full, struct cmp *c)
{
	memset(c, 0, sizeof(*c));
	c->full = full;
	struct stat ds;
	if (lstat(dst, &ds) != 0) {
		if (full)
			problem(c, "missing", dst, NULL);
		return c->problems;
	}
	cmp_tree(c, src_root, dst);
	return c->problems;
}

/* ---- running flushkit ---- */

/* Start flushkit with @argv (argv[0] is ignored); output to @log. */
static pid_t start(char *const argv[], const char *log)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execv(flushkit, argv);
		_exit(127);
	}
	cur_child = pid;
	return pid;
}

static int wait_exit(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	cur_child = -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void show_log(const char *log)
{
	size_t len;
	char *s = fkt_read_file(log, &len);
	if (s) {
		fprintf(stderr, "    --- %s ---\n%s", log, s);
		free(s);
	}
}

/* ---- trials ---- */

struct method {
	const char *cmd; /* "cp" or "sync" */
	const char *name;
	int rotate_io; /* rotate --sync-io */
};

static const struct method cp_methods[] = {
    {"cp", "writeback", 1}, {"cp", "delayed", 1}, {"cp", "fsync-each", 0},
    {"cp", "syncfs", 0},    {"cp", "auto", 1},
};

static const struct method sync_methods[] = {
    {"sync", "twopass", 1},
    {"sync", "fsync", 0},
    {"sync", "syncfs", 0},
    {"sync", "auto", 1},
};

static const char *const sync_ios[] = {"auto", "threads", "sequential"};

static unsigned nr_trials, nr_failed, nr_trial_id;
static const char *kinds = "regression,cp,sync,nested";
static unsigned nr_cut_during, nr_cut_after_exit, nr_incomplete_seen;
/* FK_CUT=disk: the file systems on a lab disk (fkcut.h). */
static int use_disk;
static struct fkt_cut_opts cut_opts;
static uint64_t last_flushes = 64; /* FLUSHes of the last full cp run */
static unsigned nr_after_trials, nr_after_lost, nr_armed, nr_armed_hit;

/* The disk's FLUSH count (0 if not on a lab disk). */
static uint64_t disk_flushes(struct fkt_fs *fs)
{
	if (!fs->cut)
		return 0;
	char *text = NULL, *v = NULL;
	if (!labdisk_stats(&fs->cut->disk, &text))
		v = labdisk_stat(text, "fsyncs");
	uint64_t n = v ? strtoull(v, NULL, 10) : 0;
	free(v);
	free(text);
	return n;
}

/* Build argv for `flushkit CMD --method=M [--sync-io=IO] A [B]`. */
static void build_argv(char *argv[8], char bufs[3][64], const struct method *m,
		       unsigned trial, const char *a, const char *b)
{
	int n = 0;
	argv[n++] = "flushkit";
	argv[n++] = (char *)m->cmd;
	snprintf(bufs[0], 64, "--method=%s", m->name);
	argv[n++] = bufs[0];
	if (m->rotate_io) {
		snprintf(bufs[1], 64, "--sync-io=%s", sync_ios[trial % 3]);
		argv[n++] = bufs[1];
	}
	argv[n++] = (char *)a;
	if (b)
		argv[n++] = (char *)b;
	argv[n] = NULL;
}

static const char *io_of(const struct method *m, unsigned trial)
{
	return m->rotate_io ? sync_ios[trial % 3] : "-";
}

/*
 * cp: run to completion (@cut_ns == 0) or cut at @cut_ns after the start.
 * *@run_ns receives how long it ran.  Returns 0 if the trial passed.
 */
static int trial_cp(struct fkt_fs *fs, const struct method *m, unsigned trial,
		    uint64_t cut_ns, uint64_t *run_ns)
{
	unsigned id = ++nr_trial_id;
	int before = fkt_failures;
	char dir[1024], copy[PATH_MAX], log[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/t%u", fs->mnt, id);
	snprintf(copy, sizeof(copy), "%s/src", dir);
	snprintf(log, sizeof(log), "%s/trial%u.log", logdir, id);
	if (make_durable_dir(fs->mnt, dir) != 0) {
		fprintf(stderr, "    cannot make %s\n", dir);
		fkt_failures++;
		goto out;
	}
	char *argv[8], bufs[3][64];
	build_argv(argv, bufs, m, trial, src_root, dir);

	/* On a lab disk, half the cuts during a run are at its N-th FLUSH
	 * (the cache full), N drawn over the FLUSHes of a full run. */
	int armed = use_disk && cut_ns && rnd_below(2);
	if (armed) {
		uint64_t n = 1 + rnd_below(last_flushes);
		if (fkt_cut_arm_flush(fs, n) != 0) {
			fkt_failures++;
			goto out;
		}
		nr_armed++;
		printf("  (cut armed at FLUSH %llu of about %llu)\n",
		       (unsigned long long)n, (unsigned long long)last_flushes);
	}
	if (fkt_cut_window(fs) != 0) {
		fkt_failures++;
		goto out;
	}
	uint64_t f0 = disk_flushes(fs);
	uint64_t t0 = now_ns();
	pid_t pid = start(argv, log);
	int rc, cut_while_running = 0;
	if (armed) {
		rc = wait_exit(pid);
		int g = fkt_fs_goingdown(fs, FKT_GOINGDOWN_NOLOGFLUSH);
		CHECK(g == 0 || g == 1);
		if (g == 1) {
			cut_while_running = 1; /* at the armed FLUSH */
			nr_armed_hit++;
		}
	} else if (cut_ns) {
		struct timespec d = {(time_t)(cut_ns / 1000000000u),
				     (long)(cut_ns % 1000000000u)};
		while (nanosleep(&d, &d) != 0 && errno == EINTR)
			;
		int status;
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid) {
			cur_child = -1;
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		} else {
			/* The power cut first, then the process dies. */
			cut_while_running = 1;
			int g = fkt_fs_goingdown(fs, FKT_GOINGDOWN_NOLOGFLUSH);
			CHECK_EQ(g, 0);
			kill(pid, SIGKILL);
			rc = wait_exit(pid);
		}
	} else {
		rc = wait_exit(pid);
	}
	*run_ns = now_ns() - t0;
	if (!cut_ns && use_disk) {
		uint64_t f = disk_flushes(fs) - f0;
		last_flushes = f ? f : 1;
	}

	if (!cut_while_running) {
		if (rc != 0) {
			fprintf(stderr, "    flushkit cp exit %d\n", rc);
			show_log(log);
			fkt_failures++;
			goto out;
		}
		/* Cut right after the success. */
		if (fkt_fs_power_cut(fs) != 0) {
			fkt_failures++;
			goto out;
		}
		nr_cut_after_exit++;
	} else {
		if (fkt_fs_umount(fs) != 0 || fkt_fs_mount(fs) != 0) {
			fkt_failures++;
			goto out;
		}
		nr_cut_during++;
	}

	struct cmp c;
	/* Exit 0, even if the cut came just after it: complete.  (An fsync
	 * after the cut fails with EIO, so exit 0 means durable.) */
	int full = rc == 0;
	compare(copy, full, &c);
	printf("  %-5s %-4s %-10s %-10s %s: exit %d, %u files complete, "
	       "%u incomplete (detected), %u missing, %u dirs incomplete"
	       "%s\n",
	       fs->type, m->cmd, m->name, io_of(m, trial),
	       cut_ns ? "cut during" : "cut after ", rc, c.files_complete,
	       c.files_incomplete, c.files_missing, c.dirs_incomplete,
	       c.problems ? "  FAILED" : "");
	if (!full &&
	    (c.files_incomplete || c.files_missing || c.dirs_incomplete))
		nr_incomplete_seen++;
	if (full) {
		nr_after_trials++;
		nr_after_lost += c.problems != 0;
	}
	if (c.problems)
		show_log(log);

	if (!full) {
		/* Rule 4: the same command again completes the copy. */
		pid = start(argv, log);
		rc = wait_exit(pid);
		if (rc != 0) {
			fprintf(stderr, "    flushkit cp again: exit %d\n", rc);
			show_log(log);
			fkt_failures++;
			goto out;
		}
		if (fkt_fs_power_cut(fs) != 0) {
			fkt_failures++;
			goto out;
		}
		if (compare(copy, 1, &c)) {
			fprintf(stderr,
				"    after running cp again: %u "
				"problems\n",
				c.problems);
			show_log(log);
		}
	}
out:
	drop_tree(fs->mnt, dir);
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr, "  trial %u FAILED (%s %s %s on %s)\n", id,
			m->cmd, m->name, cut_ns ? "cut during" : "cut after",
			fs->type);
		return -1;
	}
	return 0;
}

/* The deterministic regression case (see the top of the file). */
static void trial_failed_fsync(struct fkt_fs *fs)
{
	unsigned id = ++nr_trial_id;
	int before = fkt_failures;
	char dir[1024], copy[1100], suffix[96];
	snprintf(dir, sizeof(dir), "%s/r%u", fs->mnt, id);
	snprintf(copy, sizeof(copy), "%s/src", dir);
	snprintf(suffix, sizeof(suffix), "/src/%s", sparse_name);
	if (make_durable_dir(fs->mnt, dir) != 0) {
		fkt_failures++;
		goto out;
	}
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.copy_method = FK_COPY_DELAYED;
	o.sync_io = FK_SYNC_IO_SEQUENTIAL; /* through fk_sys: injectable */
	struct fk_tree_stats st;
	fkt_trace_start();
	fkt_fault_set("fsync", suffix, 0, -EIO);
	int r = fk_tree_copy(src_root, dir, &o, &st);
	unsigned fired = fkt_fault_fired();
	fkt_fault_clear();
	fkt_trace_stop();
	CHECK_EQ(r, -EIO);
	CHECK_EQ(fired, 1); /* never retried */
	if (fkt_fs_power_cut(fs) != 0) {
		fkt_failures++;
		goto out;
	}
	struct cmp c;
	compare(copy, 0, &c);
	char sp[PATH_MAX], dp[PATH_MAX];
	snprintf(sp, sizeof(sp), "%s/%s", src_root, sparse_name);
	snprintf(dp, sizeof(dp), "%s/%s", copy, sparse_name);
	struct stat ss, ds;
	int there = stat(sp, &ss) == 0 && stat(dp, &ds) == 0;
	printf(
	    "  %-5s cp   delayed    sequential fsync EIO : %s %s, %u files "
	    "complete, %u incomplete (detected)%s\n",
	    fs->type, sparse_name,
	    !there				  ? "absent"
	    : ds.st_size != ss.st_size		  ? "short"
	    : same_time(&ds.st_mtim, &ss.st_mtim) ? "full size and mtime"
						  : "full size, not its mtime",
	    c.files_complete, c.files_incomplete, c.problems ? "  FAILED" : "");
out:
	drop_tree(fs->mnt, dir);
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr,
			"  trial %u FAILED (cp fsync EIO, power cut, "
			"on %s)\n",
			id, fs->type);
	}
}

/* sync: plain-written tree under a durable directory, sync, cut. */
static int trial_sync(struct fkt_fs *fs, const struct method *m, unsigned trial)
{
	unsigned id = ++nr_trial_id;
	int before = fkt_failures;
	char dir[1024], tree[PATH_MAX], log[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/s%u", fs->mnt, id);
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(log, sizeof(log), "%s/trial%u.log", logdir, id);
	if (make_durable_dir(fs->mnt, dir) != 0) {
		fprintf(stderr, "    cannot make %s\n", dir);
		fkt_failures++;
		goto out;
	}
	/* Plain writes, new directories, nothing fsynced (cp -a: the
	 * paths are this test's own). */
	if (fkt_sh("cp -a '%s' '%s'", src_root, tree) != 0) {
		fprintf(stderr, "    cp -a failed\n");
		fkt_failures++;
		goto out;
	}
	char *argv[8], bufs[3][64];
	build_argv(argv, bufs, m, trial, dir, NULL);
	if (fkt_cut_window(fs) != 0) {
		fkt_failures++;
		goto out;
	}
	pid_t pid = start(argv, log);
	int rc = wait_exit(pid);
	if (rc != 0) {
		fprintf(stderr, "    flushkit sync exit %d\n", rc);
		show_log(log);
		fkt_failures++;
		goto out;
	}
	if (fkt_fs_power_cut(fs) != 0) {
		fkt_failures++;
		goto out;
	}
	struct cmp c;
	compare(tree, 1, &c);
	nr_after_trials++;
	nr_after_lost += c.problems != 0;
	printf("  %-5s %-4s %-10s %-10s cut after : exit %d, %u files "
	       "complete%s\n",
	       fs->type, m->cmd, m->name, io_of(m, trial), rc, c.files_complete,
	       c.problems ? "  FAILED" : "");
	if (c.problems)
		show_log(log);
out:
	drop_tree(fs->mnt, dir);
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr, "  trial %u FAILED (sync %s on %s)\n", id,
			m->name, fs->type);
		return -1;
	}
	return 0;
}

/*
 * Mount a new small ext4 (no lost+found: the comparison wants only the
 * source's names) on @at, a directory already durable on @fs.  Returns
 * 0, or -1 (counted as a failure).
 */
static int mount_inner(struct fkt_fs *fs, const char *at)
{
	char img[PATH_MAX], lf[PATH_MAX + 16];
	snprintf(img, sizeof(img), "%s/inner.img", logdir);
	int r;
	if (use_disk) {
		/* A second lab disk, its cuts drawn from another seed. */
		struct fkt_cut_opts o = cut_opts;
		o.seed ^= 0x9e3779b97f4a7c15ull * (nr_trial_id + 1);
		r = fkt_fs_create_cut(&cur_inner, "ext4", 64ull << 20, at, &o);
	} else {
		r = fkt_fs_create(&cur_inner, "ext4", img, 64ull << 20, at);
	}
	if (r != 0) {
		fprintf(stderr, "    cannot mount an ext4 on %s\n", at);
		fkt_failures++;
		return -1;
	}
	snprintf(lf, sizeof(lf), "%s/lost+found", at);
	rmdir(lf);
	int fd = open(at, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || syncfs(fd) != 0)
		fkt_failures++;
	if (fd >= 0)
		close(fd);
	(void)fs;
	return 0;
}

/* Which file systems a nested trial's power cut takes. */
#define CUT_INNER 1
#define CUT_OUTER 2
#define CUT_BOTH (CUT_INNER | CUT_OUTER)

static const char *cut_names[] = {"", "inner", "outer", "both"};

/*
 * A power cut of @fs and/or of the file system mounted inside it
 * (@which; one not cut is unmounted cleanly), then both mounted again.
 * With a lab disk armed at a FLUSH the cut may have come already (1 from
 * fkt_fs_goingdown).  Returns the CUT_ bits of the disks that were cut
 * already, or -1.
 */
static int power_cut_nested(struct fkt_fs *fs, int which)
{
	int a = which & CUT_INNER
		    ? fkt_fs_goingdown(&cur_inner, FKT_GOINGDOWN_NOLOGFLUSH)
		    : 0;
	int b = which & CUT_OUTER
		    ? fkt_fs_goingdown(fs, FKT_GOINGDOWN_NOLOGFLUSH)
		    : 0;
	CHECK(a == 0 || a == 1);
	CHECK(b == 0 || b == 1);
	if (fkt_fs_umount(&cur_inner) != 0 || fkt_fs_umount(fs) != 0 ||
	    fkt_fs_mount(fs) != 0 || fkt_fs_mount(&cur_inner) != 0)
		return -1;
	return (a == 1 ? CUT_INNER : 0) | (b == 1 ? CUT_OUTER : 0);
}

/* FLUSHes of the last uncut nested cp run on each disk (lab disks). */
static uint64_t nested_flushes[2] = {16, 16}; /* inner, outer */
static unsigned nr_nested_during, nr_nested_incomplete;

/*
 * nested (see the top of the file): cp (@m->cmd "cp") or sync of a tree
 * with another file system mounted on its directory d0, power cut of
 * both after exit 0.  On lab disks (FK_CUT=disk) the inner file system
 * is a second lab disk, and the cut after exit 0 takes both disks, the
 * inner or the outer one (in turn); with @during (cp only) the cut is
 * armed at the N-th FLUSH of one disk (inner or outer, in turn) while
 * cp runs, then both lose power: the copy must be exact if cp exited 0,
 * else detectable (rules 1-3), and cp run again must make it exact
 * through a cut of both (rule 4).
 */
static int trial_nested(struct fkt_fs *fs, const struct method *m,
			unsigned trial, int during)
{
	unsigned id = ++nr_trial_id;
	int before = fkt_failures, is_cp = !strcmp(m->cmd, "cp");
	char dir[1024], top[1100], at[1200], log[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s/n%u", fs->mnt, id);
	snprintf(top, sizeof(top), "%s/%s", dir, is_cp ? "src" : "tree");
	snprintf(at, sizeof(at), "%s/d0", top);
	snprintf(log, sizeof(log), "%s/trial%u.log", logdir, id);
	unsigned inner_files = 0;
	if (make_durable_dir(fs->mnt, dir) != 0 ||
	    make_durable_dir(dir, top) != 0 || make_durable_dir(top, at) != 0) {
		fprintf(stderr, "    cannot make %s\n", at);
		fkt_failures++;
		goto out;
	}
	if (mount_inner(fs, at) != 0)
		goto out;
	/* cp -a leaves out a hard link it cannot make across the mount
	 * (EXDEV, exit 1); the second cp adds those as files of their
	 * own. */
	if (!is_cp && (fkt_sh("cp -a '%s/.' '%s/' 2>/dev/null; "
			      "cp -an --no-preserve=links '%s/.' '%s/'",
			      src_root, top, src_root, top) != 0)) {
		fprintf(stderr, "    cp -a failed\n");
		fkt_failures++;
		goto out;
	}
	char *argv[8], bufs[3][64];
	build_argv(argv, bufs, m, trial, is_cp ? src_root : dir,
		   is_cp ? dir : NULL);
	int which = use_disk ? (int)(id % 3) + 1 : CUT_BOTH;
	struct fkt_fs *armed = NULL;
	if (during) {
		/* Inner, outer, ... by trial; N over the last run's FLUSHes
		 * of that disk. */
		static unsigned nr_armed_nested;
		int inner = nr_armed_nested++ % 2 == 0;
		armed = inner ? &cur_inner : fs;
		uint64_t n = 1 + rnd_below(nested_flushes[inner ? 0 : 1]);
		if (fkt_cut_arm_flush(armed, n) != 0) {
			fkt_failures++;
			goto out;
		}
		printf("  (cut armed at FLUSH %llu of about %llu of the %s "
		       "disk)\n",
		       (unsigned long long)n,
		       (unsigned long long)nested_flushes[inner ? 0 : 1],
		       inner ? "inner" : "outer");
		which = CUT_BOTH;
	}
	uint64_t fi = disk_flushes(&cur_inner), fo = disk_flushes(fs);
	pid_t pid = start(argv, log);
	int rc = wait_exit(pid);
	if (use_disk && !during && is_cp) {
		uint64_t a = disk_flushes(&cur_inner) - fi;
		uint64_t b = disk_flushes(fs) - fo;
		nested_flushes[0] = a ? a : 1;
		nested_flushes[1] = b ? b : 1;
	}
	if (rc != 0 && !during) {
		fprintf(stderr, "    flushkit %s exit %d\n", m->cmd, rc);
		show_log(log);
		fkt_failures++;
		goto out;
	}
	int pre = power_cut_nested(fs, which);
	if (pre < 0) {
		fkt_failures++;
		goto out;
	}
	struct cmp c;
	links_not_ours = !is_cp;
	if (during && rc != 0 && !pre) {
		/* Not the cut's doing. */
		fprintf(stderr, "    flushkit cp exit %d, no cut yet\n", rc);
		show_log(log);
		fkt_failures++;
		goto out;
	}
	if (during && rc != 0) {
		/* Cut before the end: the incomplete copy detectable,
		 * then cp again makes it exact (rule 4). */
		nr_nested_during++;
		compare(top, 0, &c);
		nr_nested_incomplete +=
		    c.files_incomplete || c.files_missing || c.dirs_incomplete;
		printf("  %-5s %-4s %-10s %-10s nested cut during (%s disk "
		       "armed): exit %d, %u files complete, %u incomplete "
		       "(detected), %u missing, %u dirs incomplete%s\n",
		       fs->type, m->cmd, m->name, io_of(m, trial),
		       armed == fs ? "outer" : "inner", rc, c.files_complete,
		       c.files_incomplete, c.files_missing, c.dirs_incomplete,
		       c.problems ? "  FAILED" : "");
		if (c.problems)
			show_log(log);
		pid = start(argv, log);
		rc = wait_exit(pid);
		if (rc != 0) {
			fprintf(stderr, "    flushkit cp again: exit %d\n", rc);
			show_log(log);
			fkt_failures++;
			goto out;
		}
		if (power_cut_nested(fs, CUT_BOTH) < 0) {
			fkt_failures++;
			goto out;
		}
	}
	compare(top, 1, &c);
	unsigned all = c.files_complete;
	/* How many of them are on the inner file system. */
	char src_d0[PATH_MAX + 8];
	snprintf(src_d0, sizeof(src_d0), "%s/d0", src_root);
	struct cmp ci;
	memset(&ci, 0, sizeof(ci));
	ci.full = 1;
	cmp_tree(&ci, src_d0, at);
	links_not_ours = 0;
	inner_files = ci.files_complete;
	printf("  %-5s %-4s %-10s %-10s nested cut (%s): exit %d, %u files "
	       "complete, %u of them on the inner file system%s\n",
	       fs->type, m->cmd, m->name, io_of(m, trial),
	       during ? "both, after cp again" : cut_names[which], rc, all,
	       inner_files, c.problems ? "  FAILED" : "");
	CHECK(inner_files > 0);
	if (c.problems)
		show_log(log);
out:
	fkt_fs_destroy(&cur_inner);
	drop_tree(fs->mnt, dir);
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr,
			"  trial %u FAILED (%s %s, nested mount, on %s)\n", id,
			m->cmd, m->name, fs->type);
		return -1;
	}
	return 0;
}

static void run_fs(const char *type, const char *top, unsigned trials)
{
	char img[PATH_MAX], mnt[PATH_MAX];
	snprintf(img, sizeof(img), "%s/%s.img", top, type);
	snprintf(mnt, sizeof(mnt), "%s/mnt-%s", top, type);
	/* xfs needs 300 MiB; a few copies of the source fit in either. */
	int r;
	if (use_disk)
		r = fkt_fs_create_cut(&cur_fs, type, 320ull << 20, mnt,
				      &cut_opts);
	else if (!strcmp(type, "btrfs")) {
		printf("btrfs: refuses FS_IOC_GOINGDOWN: its power cuts "
		       "need FK_CUT=disk, skipped\n");
		return;
	} else
		r = fkt_fs_create(&cur_fs, type, img, 320ull << 20, mnt);
	if (r == 77) {
		printf("%s: not available, skipped\n", type);
		return;
	}
	if (r != 0) {
		fprintf(stderr, "cannot make %s\n", type);
		fkt_failures++;
		return;
	}
	for (unsigned t = 0; strstr(kinds, "regression") && t < trials; t++)
		trial_failed_fsync(&cur_fs);
	for (size_t i = 0; i < sizeof(cp_methods) / sizeof(cp_methods[0]);
	     i++) {
		const struct method *m = &cp_methods[i];
		for (unsigned t = 0; strstr(kinds, "cp") && t < trials; t++) {
			uint64_t run_ns = 0, ignored;
			trial_cp(&cur_fs, m, t, 0, &run_ns);
			/* A random moment in (0, 1.2 x the full run]. */
			uint64_t cut = 1 + rnd_below(run_ns + run_ns / 5 + 1);
			trial_cp(&cur_fs, m, t, cut, &ignored);
		}
	}
	for (size_t i = 0; i < sizeof(sync_methods) / sizeof(sync_methods[0]);
	     i++)
		for (unsigned t = 0; strstr(kinds, "sync") && t < trials; t++)
			trial_sync(&cur_fs, &sync_methods[i], t);
	for (size_t i = 0; i < sizeof(cp_methods) / sizeof(cp_methods[0]); i++)
		for (unsigned t = 0; strstr(kinds, "nested") && t < trials;
		     t++) {
			trial_nested(&cur_fs, &cp_methods[i], t, 0);
			if (use_disk)
				trial_nested(&cur_fs, &cp_methods[i], t, 1);
		}
	for (size_t i = 0; i < sizeof(sync_methods) / sizeof(sync_methods[0]);
	     i++)
		for (unsigned t = 0; strstr(kinds, "nested") && t < trials; t++)
			trial_nested(&cur_fs, &sync_methods[i], t, 0);
	fkt_fs_destroy(&cur_fs);
}

int main(void)
{
	if (!fkt_is_root())
		SKIP("needs root (loop devices, FS_IOC_GOINGDOWN)");
	find_flushkit();
	if (access(flushkit, X_OK) != 0)
		SKIP("no flushkit command at %s", flushkit);

	uint64_t seed = fkt_cut_seed_env();
	fkt_rnd_seed(&rng, seed);
	unsigned trials = fkt_torture_trials_env(1);
	const char *k = getenv("FK_TREECUT_KINDS");
	if (k && *k)
		kinds = k;
	use_disk = fkt_cut_opts_env(&cut_opts, seed);
	if (use_disk < 0)
		return 2;
	const char *fss = getenv("FK_TREECUT_FS");
	if (!fss || !*fss)
		fss = use_disk ? "ext4,xfs,btrfs" : "ext4,xfs";
	if (use_disk)
		printf("power cuts at a lab disk that loses its write cache "
		       "(FK_CUT=disk), mode %s%s\n",
		       cut_opts.mode ? cut_opts.mode : "mixed",
		       cut_opts.flush_ignore
			   ? ", FLUSH ignored (negative control)"
			   : "");
	printf("seed: %llu (FK_TEST_SEED), trials per method: %u "
	       "(FK_TRIALS), file systems: %s, flushkit: %s\n",
	       (unsigned long long)seed, trials, fss, flushkit);

	static struct fkt_fs *const cleanup_fss[] = {&cur_inner, &cur_fs};
	fkt_cleanup_at_exit(cleanup_fss, 2, &cur_child);

	const char *top = fkt_tmpdir();
	snprintf(logdir, sizeof(logdir), "%s", top);
	make_source(top);
	fflush(stdout);

	uint64_t t0 = now_ns();
	if (strstr(fss, "ext4"))
		run_fs("ext4", top, trials);
	if (strstr(fss, "xfs"))
		run_fs("xfs", top, trials);
	if (strstr(fss, "btrfs"))
		run_fs("btrfs", top, trials);

	printf("cuts: %u right after exit 0, %u during a run (%u left an "
	       "incomplete copy, all detected unless FAILED above)\n",
	       nr_cut_after_exit, nr_cut_during, nr_incomplete_seen);
	printf("cut right after exit 0: %u trials, %u lost data\n",
	       nr_after_trials, nr_after_lost);
	if (use_disk)
		printf(
		    "cuts during a run armed at a FLUSH: %u, made there %u\n",
		    nr_armed, nr_armed_hit);
	if (use_disk && strstr(kinds, "nested"))
		printf("nested mounts on two lab disks: %u cp runs cut "
		       "during at a FLUSH of one disk (%u left an incomplete "
		       "copy, all detected unless FAILED above)\n",
		       nr_nested_during, nr_nested_incomplete);
	printf("time: %.1f s\n", (double)(now_ns() - t0) / 1e9);
	printf("trials: %u, failed: %u\n", nr_trials, nr_failed);
	return fkt_done();
}
