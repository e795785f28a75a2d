// SPDX-License-Identifier: MIT
/*
 * faultdev - a FUSE file system with ONE image file whose reads, writes
 * and fsyncs fail on demand, for the durability tests (EIO, ENOSPC).  Put a
 * loop device on the image and a real ext4 or xfs on the loop device:
 * a failed image write becomes a failed bio, so the inner file system
 * meets a real block-layer I/O error and the kernel's own writeback-error
 * rules apply (page marked clean, error kept in the mapping's errseq,
 * fsync reports it once per open file description).
 *
 *   faultdev [-f] [--ready-fd=N] [--cache] [--orphan-cleanup]
 *            BACKING MOUNTPOINT
 *
 * MOUNTPOINT/image   the image: reads and writes go to BACKING (pread,
 *                    pwrite), fsync/fdatasync to fsync/fdatasync(BACKING),
 *                    truncate and fallocate pass through;
 * MOUNTPOINT/ctl     the control file (text lines, below).
 *
 * -f            stay in the foreground (default: daemonize once mounted,
 *               so `faultdev B M && losetup ... M/image` is race-free);
 * --ready-fd=N  write "ready\n" to descriptor N and close it once the
 *               mount exists (for a parent that runs faultdev with -f);
 * --orphan-cleanup  on SIGUSR1 (fkfault sets it as the parent-death
 *               signal), unmount every file system mounted from a loop
 *               device on our image, wait for the loop devices to go
 *               (autoclear), unmount MOUNTPOINT and exit: a test killed
 *               with SIGKILL leaves no mounts behind.  Done while the
 *               FUSE loop still serves, since the inner unmount writes
 *               its journal through us;
 * --cache       let the kernel cache the image (default: FOPEN_DIRECT_IO,
 *               every read and write of the image reaches faultdev, so a
 *               read fault cannot be hidden by FUSE's page cache and a
 *               write is never left dirty in it).
 *
 * Control protocol: write one or more lines to ctl (one write() per
 * command batch; a bad line fails the write with EINVAL):
 *
 *   fail OPS ERR OFF LEN   every OPS request overlapping image bytes
 *                          [OFF, OFF+LEN) fails with ERR (LEN 0: to the
 *                          end; fsync requests ignore the range)
 *   after N OPS ERR        the next N OPS requests succeed, every later
 *                          one fails with ERR
 *   all OPS ERR            = after 0 OPS ERR: fail everything from now on
 *   clear                  remove every rule
 *   reset                  zero the counters
 *
 * OPS is a set of letters: r (read), w (write), f (fsync, fdatasync and
 * flush); e.g. "w", "rw", "rwf".  ERR is EIO, ENOSPC, EROFS, EDQUOT or a
 * positive errno number.  A failing request fails as a whole and nothing
 * of it is written (a disk that fails a write leaves the sectors in an
 * unknown state; "unchanged" is one such state).
 *
 * Reading ctl gives "NAME VALUE" lines: reads writes fsyncs flushes
 * read_bytes write_bytes faults read_faults write_faults fsync_faults
 * rules, then one "rule ..." line per rule in force.
 *
 * What the kernel does with it (measured on Linux 6.18, ext4 and xfs;
 * test-faultdev, test-eio-* check it on every run):
 * - A failed image write fails the loop device's bio, with and without
 *   `losetup --direct-io=on` (FUSE files accept O_DIRECT: the loop
 *   device's sysfs loop/dio reads 1), with and without --cache.  -EIO
 *   becomes BLK_STS_IOERR ("I/O error, dev loopN ... op WRITE"), -ENOSPC
 *   becomes BLK_STS_NOSPC ("critical space allocation error") and the
 *   inner fsync returns ENOSPC, not EIO.
 * - ext4 and xfs then mark the pages clean (the NEW data stays in the
 *   page cache and is read back from it; after POSIX_FADV_DONTNEED the
 *   OLD data comes back from the disk) and record the error in the
 *   mapping's errseq: fsync returns the error once per open file
 *   description (each descriptor open before the error gets it once; a
 *   second fsync on it, or one on a descriptor opened after the error
 *   was seen, returns 0).  Two fsyncs of one descriptor in flight at
 *   once: one gets EIO, the other 0.
 * - sync_file_range(SYNC_FILE_RANGE_WRITE) only starts the (failing)
 *   writeback; with SYNC_FILE_RANGE_WAIT_AFTER it returns EIO and the
 *   next fsync on that descriptor returns 0.
 * - Reads: a failed read fails the bio (pread EIO) once the inner page
 *   cache no longer has the page; readahead reads around it separately.
 *   Without FOPEN_DIRECT_IO (--cache) FUSE may answer reads from its own
 *   cache, so read faults need the default mode.
 * - REQ_OP_FLUSH / FUA from the inner file system becomes vfs_fsync on
 *   the image, i.e. a FUSE FSYNC: "f" rules fail the inner journal's
 *   cache flushes (the journal then aborts: the file system goes
 *   read-only, a different kind of test).
 *
 * Threads: the multi-threaded FUSE loop; the rules and counters are
 * behind one mutex, pread/pwrite run outside it.
 *
 * Invariants:
 * 1. A request matched by a rule touches nothing in BACKING.
 * 2. Every image request is counted once, and once more as a fault if
 *    it failed because of a rule.
 * 3. An "after" rule's remaining count decreases only on requests it
 *    matches, never below 0.
 */
#define FUSE_USE_VERSION 312
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define OP_READ 1u
#define OP_WRITE 2u
#define OP_FSYNC 4u
#define MAX_RULES 256

struct rule {
	unsigned ops;
	int err;	   /* positive errno */
	int is_after;	   /* 1: "after" rule, else a range rule */
	uint64_t off, len; /* range rule; len 0 = to the end */
	uint64_t left;	   /* after rule: successes left */
};

struct counters {
	uint64_t reads, writes, fsyncs, flushes;
	uint64_t read_bytes, write_bytes;
	uint64_t faults, read_faults, write_faults, fsync_faults;
};

static struct {
	int fd; /* BACKING */
	int cache;
	pthread_mutex_t lock;
	struct rule rules[MAX_RULES];
	int nrules;
	struct counters c;
} dev = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static const char IMAGE[] = "/image";
static const char CTL[] = "/ctl";

/* Count the request and return the errno (> 0) it must fail with, or 0. */
static int account(unsigned op, uint64_t off, uint64_t len)
{
	int err = 0;
	pthread_mutex_lock(&dev.lock);
	for (int i = 0; i < dev.nrules && !err; i++) {
		struct rule *r = &dev.rules[i];
		if (!(r->ops & op))
			continue;
		if (r->is_after) {
			if (r->left > 0)
				r->left--;
			else
				err = r->err;
		} else if (op == OP_FSYNC) {
			err = r->err;
		} else if (off + len > r->off &&
			   (r->len == 0 || off < r->off + r->len)) {
			err = r->err;
		}
	}
	if (op == OP_READ) {
		dev.c.reads++;
		if (!err)
			dev.c.read_bytes += len;
	} else if (op == OP_WRITE) {
		dev.c.writes++;
		if (!err)
			dev.c.write_bytes += len;
	}
	if (err) {
		dev.c.faults++;
		if (op == OP_READ)
			dev.c.read_faults++;
		else if (op == OP_WRITE)
			dev.c.write_faults++;
		else
			dev.c.fsync_faults++;
	}
	pthread_mutex_unlock(&dev.lock);
	return err;
}

static int parse_ops(const char *s, unsigned *ops)
{
	*ops = 0;
	for (; *s; s++) {
		if (*s == 'r')
			*ops |= OP_READ;
		else if (*s == 'w')
			*ops |= OP_WRITE;
		else if (*s == 'f')
			*ops |= OP_FSYNC;
		else
			return -1;
	}
	return *ops ? 0 : -1;
}

static int parse_err(const char *s, int *err)
{
	static const struct {
		const char *name;
		int err;
	} names[] = {{"EIO", EIO},
		     {"ENOSPC", ENOSPC},
		     {"EROFS", EROFS},
		     {"EDQUOT", EDQUOT}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name)) {
			*err = names[i].err;
			return 0;
		}
	char *end;
	long v = strtol(s, &end, 10);
	if (*s && !*end && v > 0 && v < 4096) {
		*err = (int)v;
		return 0;
	}
	return -1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-')
		return -1;
	*v = x;
	return 0;
}

/* One control line; 0 or -EINVAL/-ENOSPC.  Called with dev.lock held. */
static int control_line(char *line)
{
	char *tok[6];
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(line, " \t\r", &save); t && n < 6;
	     t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	if (n == 0)
		return 0;
	if (!strcmp(tok[0], "clear") && n == 1) {
		dev.nrules = 0;
		return 0;
	}
	if (!strcmp(tok[0], "reset") && n == 1) {
		memset(&dev.c, 0, sizeof(dev.c));
		return 0;
	}
	struct rule r = {0};
	if (!strcmp(tok[0], "fail") && n == 5) {
		if (parse_ops(tok[1], &r.ops) || parse_err(tok[2], &r.err) ||
		    parse_u64(tok[3], &r.off) || parse_u64(tok[4], &r.len))
			return -EINVAL;
	} else if (!strcmp(tok[0], "after") && n == 4) {
		r.is_after = 1;
		if (parse_u64(tok[1], &r.left) || parse_ops(tok[2], &r.ops) ||
		    parse_err(tok[3], &r.err))
			return -EINVAL;
	} else if (!strcmp(tok[0], "all") && n == 3) {
		r.is_after = 1;
		if (parse_ops(tok[1], &r.ops) || parse_err(tok[2], &r.err))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (dev.nrules == MAX_RULES)
		return -ENOSPC;
	dev.rules[dev.nrules++] = r;
	return 0;
}

static int control(const char *buf, size_t len)
{
	char *copy = strndup(buf, len);
	if (!copy)
		return -ENOMEM;
	int r = 0;
	char *save = NULL;
	pthread_mutex_lock(&dev.lock);
	for (char *line = strtok_r(copy, "\n", &save); line && !r;
	     line = strtok_r(NULL, "\n", &save))
		r = control_line(line);
	pthread_mutex_unlock(&dev.lock);
	free(copy);
	return r;
}

static void ops_str(unsigned ops, char *s)
{
	if (ops & OP_READ)
		*s++ = 'r';
	if (ops & OP_WRITE)
		*s++ = 'w';
	if (ops & OP_FSYNC)
		*s++ = 'f';
	*s = 0;
}

/* The status text; caller frees. */
static char *status(size_t *len)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	pthread_mutex_lock(&dev.lock);
	struct counters c = dev.c;
	fprintf(f,
		"reads %" PRIu64 "\nwrites %" PRIu64 "\nfsyncs %" PRIu64
		"\nflushes %" PRIu64 "\nread_bytes %" PRIu64
		"\nwrite_bytes %" PRIu64 "\nfaults %" PRIu64
		"\nread_faults %" PRIu64 "\nwrite_faults %" PRIu64
		"\nfsync_faults %" PRIu64 "\nrules %d\n",
		c.reads, c.writes, c.fsyncs, c.flushes, c.read_bytes,
		c.write_bytes, c.faults, c.read_faults, c.write_faults,
		c.fsync_faults, dev.nrules);
	for (int i = 0; i < dev.nrules; i++) {
		struct rule *r = &dev.rules[i];
		char ops[4];
		ops_str(r->ops, ops);
		if (r->is_after)
			fprintf(f, "rule after %" PRIu64 " %s %d\n", r->left,
				ops, r->err);
		else
			fprintf(f, "rule fail %s %d %" PRIu64 " %" PRIu64 "\n",
				ops, r->err, r->off, r->len);
	}
	pthread_mutex_unlock(&dev.lock);
	fclose(f);
	*len = size;
	return text;
}

static void *fd_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 0;
	cfg->entry_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->negative_timeout = 0;
	/* Direct I/O on the image unless --cache (see the banner). */
	cfg->direct_io = !dev.cache;
	return NULL;
}

static int fd_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (!strcmp(path, IMAGE)) {
		struct stat b;
		if (fstat(dev.fd, &b) != 0)
			return -errno;
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = b.st_size;
		st->st_blocks = b.st_blocks;
		st->st_mtim = b.st_mtim;
		st->st_ctim = b.st_ctim;
		return 0;
	}
	if (!strcmp(path, CTL)) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		return 0;
	}
	return -ENOENT;
}

static int fd_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, IMAGE + 1, NULL, 0, 0);
	fill(buf, CTL + 1, NULL, 0, 0);
	return 0;
}

static int fd_open(const char *path, struct fuse_file_info *fi)
{
	if (!strcmp(path, CTL)) {
		fi->direct_io = 1; /* size 0, content made on read */
		return 0;
	}
	if (!strcmp(path, IMAGE)) {
		fi->direct_io = !dev.cache;
		return 0;
	}
	return -ENOENT;
}

static int fd_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	(void)fi;
	if (!strcmp(path, CTL)) {
		size_t len;
		char *text = status(&len);
		if (!text)
			return -ENOMEM;
		size_t n = 0;
		if ((size_t)off < len) {
			n = len - (size_t)off < size ? len - (size_t)off : size;
			memcpy(buf, text + off, n);
		}
		free(text);
		return (int)n;
	}
	if (strcmp(path, IMAGE))
		return -ENOENT;
	int err = account(OP_READ, (uint64_t)off, size);
	if (err)
		return -err;
	ssize_t n = pread(dev.fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int fd_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)fi;
	if (!strcmp(path, CTL)) {
		int r = control(buf, size);
		return r < 0 ? r : (int)size;
	}
	if (strcmp(path, IMAGE))
		return -ENOENT;
	int err = account(OP_WRITE, (uint64_t)off, size);
	if (err)
		return -err;
	size_t done = 0;
	while (done < size) {
		ssize_t n =
		    pwrite(dev.fd, buf + done, size - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return done ? (int)done : -errno;
		}
		done += (size_t)n;
	}
	return (int)done;
}

static int fd_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, IMAGE))
		return 0;
	pthread_mutex_lock(&dev.lock);
	dev.c.fsyncs++;
	pthread_mutex_unlock(&dev.lock);
	int err = account(OP_FSYNC, 0, 0);
	if (err)
		return -err;
	int r = datasync ? fdatasync(dev.fd) : fsync(dev.fd);
	return r ? -errno : 0;
}

static int fd_flush(const char *path, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, IMAGE))
		return 0;
	pthread_mutex_lock(&dev.lock);
	dev.c.flushes++;
	pthread_mutex_unlock(&dev.lock);
	int err = account(OP_FSYNC, 0, 0);
	return err ? -err : 0;
}

static int fd_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, IMAGE))
		return strcmp(path, CTL) ? -ENOENT : 0; /* O_TRUNC of ctl */
	return ftruncate(dev.fd, size) ? -errno : 0;
}

static int fd_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, IMAGE))
		return -EOPNOTSUPP;
	return fallocate(dev.fd, mode, off, len) ? -errno : 0;
}

static int fd_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)path;
	(void)mode;
	(void)fi;
	return 0;
}

static int fd_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	(void)path;
	(void)tv;
	(void)fi;
	return 0;
}

static const struct fuse_operations ops = {
    .init = fd_init,
    .getattr = fd_getattr,
    .readdir = fd_readdir,
    .open = fd_open,
    .read = fd_read,
    .write = fd_write,
    .fsync = fd_fsync,
    .flush = fd_flush,
    .truncate = fd_truncate,
    .fallocate = fd_fallocate,
    .chmod = fd_chmod,
    .utimens = fd_utimens,
};

/* ---- --orphan-cleanup ---- */

static const char *mountpoint;

/* The mount points (from /proc/self/mountinfo) of file systems on block
 * device @majmin ("7:3"): unmount each, lazily if it stays busy. */
static void umount_dev(const char *majmin)
{
	for (int pass = 0; pass < 8; pass++) {
		FILE *f = fopen("/proc/self/mountinfo", "r");
		if (!f)
			return;
		char line[4096], mp[4096] = "";
		while (fgets(line, sizeof(line), f)) {
			char devno[64], m[4096];
			if (sscanf(line, "%*s %*s %63s %*s %4095s", devno, m) ==
				2 &&
			    !strcmp(devno, majmin)) {
				strcpy(mp, m); /* the last (topmost) one */
			}
		}
		fclose(f);
		if (!mp[0])
			return;
		int ok = 0;
		for (int i = 0; i < 50 && !ok; i++) {
			ok = umount2(mp, 0) == 0;
			if (!ok && errno != EBUSY)
				break;
			if (!ok)
				usleep(100 * 1000);
		}
		if (!ok)
			umount2(mp, MNT_DETACH);
		fprintf(stderr, "faultdev: orphaned: unmounted %s\n", mp);
	}
}

static void orphan_cleanup(void)
{
	char image[PATH_MAX];
	snprintf(image, sizeof(image), "%s%s", mountpoint, IMAGE);
	DIR *d = opendir("/sys/block");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, "loop", 4))
				continue;
			char p[512], bf[PATH_MAX] = "", majmin[64] = "";
			snprintf(p, sizeof(p),
				 "/sys/block/%s/loop/backing_file", de->d_name);
			FILE *f = fopen(p, "r");
			if (!f)
				continue;
			if (!fgets(bf, sizeof(bf), f))
				bf[0] = 0;
			fclose(f);
			bf[strcspn(bf, "\n")] = 0;
			if (strcmp(bf, image))
				continue;
			snprintf(p, sizeof(p), "/sys/block/%s/dev", de->d_name);
			f = fopen(p, "r");
			if (f && fgets(majmin, sizeof(majmin), f)) {
				majmin[strcspn(majmin, "\n")] = 0;
				umount_dev(majmin);
			}
			if (f)
				fclose(f);
		}
		closedir(d);
	}
	/* The loop devices (autoclear) let go of the image shortly after
	 * their last unmount; then FUSE can be unmounted, which ends the
	 * FUSE loop with ENODEV. */
	for (int i = 0; i < 100; i++) {
		if (umount2(mountpoint, 0) == 0 || errno != EBUSY)
			return;
		usleep(50 * 1000);
	}
	umount2(mountpoint, MNT_DETACH);
}

static void *orphan_watch(void *arg)
{
	sigset_t *set = arg;
	int sig;
	if (sigwait(set, &sig) == 0)
		orphan_cleanup();
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: faultdev [-f] [--ready-fd=N] [--cache] "
			"[--orphan-cleanup] BACKING MOUNTPOINT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int foreground = 0, ready_fd = -1, orphan = 0;
	const char *backing = NULL, *mnt = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-f"))
			foreground = 1;
		else if (!strncmp(argv[i], "--ready-fd=", 11))
			ready_fd = atoi(argv[i] + 11);
		else if (!strcmp(argv[i], "--cache"))
			dev.cache = 1;
		else if (!strcmp(argv[i], "--orphan-cleanup"))
			orphan = 1;
		else if (argv[i][0] == '-')
			usage();
		else if (!backing)
			backing = argv[i];
		else if (!mnt)
			mnt = argv[i];
		else
			usage();
	}
	if (!backing || !mnt)
		usage();
	dev.fd = open(backing, O_RDWR | O_CLOEXEC);
	if (dev.fd < 0) {
		fprintf(stderr, "faultdev: open %s: %s\n", backing,
			strerror(errno));
		return 1;
	}

	/* allow_other: the loop driver's worker and other users reach the
	 * image; as root no fuse.conf entry is needed for it. */
	char *fargv[] = {argv[0], "-o",
			 getuid() == 0 ? "allow_other,fsname=faultdev,"
					 "subtype=faultdev"
				       : "fsname=faultdev,subtype=faultdev",
			 NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse *f = fuse_new(&args, &ops, sizeof(ops), NULL);
	if (!f)
		return 1;
	if (fuse_mount(f, mnt) != 0) {
		fuse_destroy(f);
		return 1;
	}
	/* The mount exists from here on: requests to it queue until the loop
	 * below answers them, so a waiter may use it as soon as it hears. */
	if (!foreground && fuse_daemonize(0) != 0) {
		fuse_unmount(f);
		fuse_destroy(f);
		return 1;
	}
	if (ready_fd >= 0) {
		if (write(ready_fd, "ready\n", 6) != 6)
			perror("faultdev: ready fd");
		close(ready_fd);
	}
	mountpoint = mnt;
	static sigset_t usr1;
	pthread_t watcher;
	if (orphan) {
		/* Blocked in every thread (the FUSE workers inherit the
		 * mask), taken by the watcher alone. */
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		if (pthread_create(&watcher, NULL, orphan_watch, &usr1) != 0)
			orphan = 0;
		else
			pthread_detach(watcher);
		/* The parent may have died before it could tell us. */
		if (getppid() == 1)
			kill(getpid(), SIGUSR1);
	}
	struct fuse_session *se = fuse_get_session(f);
	if (fuse_set_signal_handlers(se) != 0) {
		fuse_unmount(f);
		fuse_destroy(f);
		return 1;
	}
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, 16);
	int r = fuse_loop_mt(f, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_remove_signal_handlers(se);
	fuse_unmount(f);
	fuse_destroy(f);
	close(dev.fd);
	return r ? 1 : 0;
}
