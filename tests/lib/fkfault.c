// SPDX-License-Identifier: MIT
/*
 * fkfault.c - the lab disk daemon (flushkit-diskd, model ram, no write
 * cache), loop device and inner file system for the I/O error tests
 * (see fkfault.h; the control protocol is in disk/fault.h).
 *
 * Interface routines: fkt_dev_start/stop, fkt_dev_fail_range,
 * fkt_dev_fail_after, fkt_dev_fail_file, fkt_dev_clear, fkt_dev_counters,
 * fkt_dev_reset_counters, fkt_dev_wait_faults,
 * fkt_stack_create/mount/umount/destroy, fkt_fiemap, fkt_drop_file_cache.
 *
 * Teardown order matters (each layer pins the one below): inner fs
 * unmount, loop device release (autoclear on the last close), FUSE
 * unmount (EBUSY while the loop device still holds the image: retried),
 * daemon exit.  Every live daemon and stack is remembered and torn
 * down by an atexit handler registered AFTER fkt_tmpdir()'s, so it runs
 * before the temp dir is removed (removing a dir with a live mount below
 * would delete the inner file system's files instead).
 *
 * Invariants:
 * 1. A registered daemon has a live FUSE mount or a pending stop.
 * 2. A stack's loop_fd >= 0 exactly while its loop device is configured.
 */
#include "fkfault.h"
#include "fktest.h"
#include "labdisk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LIVE 16

static struct fkt_dev *live_devs[MAX_LIVE];
static struct fkt_stack *live_stacks[MAX_LIVE];
static int exit_registered;

static void teardown_all(void)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_stacks[i])
			fkt_stack_destroy(live_stacks[i]);
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_devs[i])
			fkt_dev_stop(live_devs[i]);
}

static void on_signal(int sig)
{
	/* A test killed by its timeout (SIGTERM), ^C or a crash still
	 * removes its mounts (else the inner fs stays mounted on a loop
	 * device whose FUSE daemon is gone).  Not async-signal-safe;
	 * acceptable in a test that is dying anyway.  Then die of the
	 * signal, so the runner sees what happened. */
	teardown_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void remember(void **table, void *p)
{
	if (!exit_registered) {
		fkt_tmpdir(); /* its atexit first, so ours runs before */
		atexit(teardown_all);
		struct sigaction sa = {.sa_handler = on_signal};
		int sigs[] = {SIGTERM, SIGINT,	SIGHUP,
			      SIGABRT, SIGSEGV, SIGBUS};
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct sigaction old;
			if (sigaction(sigs[i], NULL, &old) == 0 &&
			    old.sa_handler == SIG_DFL)
				sigaction(sigs[i], &sa, NULL);
		}
		exit_registered = 1;
	}
	for (int i = 0; i < MAX_LIVE; i++)
		if (table[i] == p)
			return;
	for (int i = 0; i < MAX_LIVE; i++)
		if (!table[i]) {
			table[i] = p;
			return;
		}
}

static void forget(void **table, void *p)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (table[i] == p)
			table[i] = NULL;
}

/* The daemon: $FK_FAULTDEV (the old name, kept as an alias), else
 * labdisk_daemon_path's search ($FLUSHKIT_DISKD, flushkit-diskd beside
 * the test or one directory up: BUILD/tests/test-x ->
 * BUILD/flushkit-diskd, then the installed one). */
static int find_diskd(char *path, size_t cap)
{
	const char *env = getenv("FK_FAULTDEV");
	if (env && *env) {
		snprintf(path, cap, "%s", env);
		return access(path, X_OK) == 0 ? 0 : -1;
	}
	return labdisk_daemon_path(path, cap) == 0 ? 0 : -1;
}

int fkt_dev_start(struct fkt_dev *d, uint64_t size_bytes, const char *mkfs_type)
{
	static unsigned seq;
	memset(d, 0, sizeof(*d));
	if (!fkt_is_root() || access("/dev/fuse", R_OK | W_OK) != 0)
		return 77;
	char bin[PATH_MAX];
	if (find_diskd(bin, sizeof(bin)) != 0) {
		fprintf(stderr, "fkfault: no flushkit-diskd binary "
				"(FLUSHKIT_DISKD)\n");
		return 77;
	}
	if ((size_t)snprintf(d->dir, sizeof(d->dir), "%s/labdisk-%u",
			     fkt_tmpdir(), seq++) >= sizeof(d->dir) - 32) {
		fprintf(stderr, "fkfault: temp dir path too long\n");
		return -1;
	}
	snprintf(d->backing, sizeof(d->backing), "%s/backing.img", d->dir);
	snprintf(d->mnt, sizeof(d->mnt), "%s/fuse", d->dir);
	snprintf(d->image, sizeof(d->image), "%s/image", d->mnt);
	snprintf(d->ctl, sizeof(d->ctl), "%s/ctl", d->mnt);
	if (mkdir(d->dir, 0700) != 0 || mkdir(d->mnt, 0700) != 0) {
		perror("fkfault: mkdir");
		return -1;
	}
	int fd = open(d->backing, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size_bytes) != 0) {
		perror("fkfault: backing file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (mkfs_type) {
		int r = fkt_mkfs(mkfs_type, d->backing);
		if (r)
			return r;
	}

	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		/* If the test dies (even by SIGKILL), the daemon unmounts
		 * what is mounted on its image, then itself, and exits.  Its
		 * own session, so a SIGKILL to the test's process group (what
		 * `timeout -k` in tests/run.sh sends) does not kill it too
		 * before it can clean up. */
		setsid();
		prctl(PR_SET_PDEATHSIG, SIGUSR1);
		close(pipefd[0]);
		int wfd = dup(pipefd[1]); /* without O_CLOEXEC */
		char arg[32], backing[320];
		snprintf(arg, sizeof(arg), "--ready-fd=%d", wfd);
		snprintf(backing, sizeof(backing), "--backing=%s", d->backing);
		/* Model ram without a write cache: every request completes at
		 * once and a completed write is durable, so only the rules
		 * fail anything (no data is lost at an unmount or a cut of
		 * the inner fs). */
		execl(bin, "flushkit-diskd", "-f", "--orphan-cleanup", arg,
		      "--model=ram", "--no-write-cache", backing, d->mnt,
		      (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	char buf[16] = {0};
	ssize_t n;
	do
		n = read(pipefd[0], buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n <= 0 || strncmp(buf, "ready", 5)) {
		/* The daemon exited before mounting (its reason on
		 * stderr). */
		int st;
		waitpid(pid, &st, 0);
		fprintf(stderr, "fkfault: flushkit-diskd did not start\n");
		return 77;
	}
	d->pid = pid;
	d->mounted = 1;
	remember((void **)live_devs, d);
	/* First request: waits for FUSE_INIT to complete. */
	struct stat st;
	if (stat(d->image, &st) != 0) {
		perror("fkfault: stat image");
		fkt_dev_stop(d);
		return -1;
	}
	return 0;
}

void fkt_dev_stop(struct fkt_dev *d)
{
	int clean_umount = 0;
	if (d->mounted) {
		int done = 0;
		/* The loop device may release the image a moment after the
		 * inner unmount (autoclear): retry while busy. */
		for (int i = 0; i < 100 && !done; i++) {
			if (umount2(d->mnt, 0) == 0)
				done = 1;
			else if (errno == EBUSY)
				usleep(50 * 1000);
			else
				break;
		}
		if (!done) {
			fprintf(stderr, "fkfault: umount %s: %s (detaching)\n",
				d->mnt, strerror(errno));
			umount2(d->mnt, MNT_DETACH);
		}
		clean_umount = done;
		d->mounted = 0;
	}
	if (d->pid > 0) {
		/* Unmounted: its loop sees ENODEV and it exits by itself,
		 * with status 0.  After a clean unmount anything else (a
		 * crash, a sanitizer's report, no exit within 5 s) is a
		 * daemon bug and fails the test. */
		int st = 0;
		int gone = 0;
		for (int i = 0; i < 250 && !gone; i++) {
			pid_t r = waitpid(d->pid, &st, WNOHANG);
			if (r == d->pid)
				gone = 1;
			else if (r < 0 && errno == ECHILD)
				gone = 2; /* reaped elsewhere: status unknown */
			else
				usleep(20 * 1000);
		}
		if (!gone) {
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &st, 0);
			if (clean_umount) {
				fprintf(stderr,
					"fkfault: flushkit-diskd %d did not "
					"exit after its unmount: killed\n",
					(int)d->pid);
				fkt_failures++;
			}
		} else if (gone == 1 && clean_umount &&
			   !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			if (WIFSIGNALED(st))
				fprintf(stderr,
					"fkfault: flushkit-diskd %d died of "
					"signal %d\n",
					(int)d->pid, WTERMSIG(st));
			else
				fprintf(stderr,
					"fkfault: flushkit-diskd %d exited "
					"with status %d\n",
					(int)d->pid, WEXITSTATUS(st));
			fkt_failures++;
		}
		d->pid = 0;
	}
	if (d->dir[0] && !getenv("FKT_KEEP"))
		fkt_rm_rf(d->dir);
	forget((void **)live_devs, d);
}

static int ctl_write(struct fkt_dev *d, const char *text)
{
	int fd = open(d->ctl, O_WRONLY);
	if (fd < 0)
		return -errno;
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	int r = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

static void ops_str(unsigned ops, char *s)
{
	if (ops & FKT_OP_READ)
		*s++ = 'r';
	if (ops & FKT_OP_WRITE)
		*s++ = 'w';
	if (ops & FKT_OP_FSYNC)
		*s++ = 'f';
	*s = 0;
}

int fkt_dev_fail_range(struct fkt_dev *d, unsigned ops, int err, uint64_t off,
		       uint64_t len)
{
	char o[4], line[128];
	ops_str(ops, o);
	if (!o[0] || err <= 0)
		return -EINVAL;
	snprintf(line, sizeof(line), "fail %s %d %" PRIu64 " %" PRIu64 "\n", o,
		 err, off, len);
	return ctl_write(d, line);
}

int fkt_dev_fail_after(struct fkt_dev *d, unsigned ops, int err, uint64_t n)
{
	char o[4], line[128];
	ops_str(ops, o);
	if (!o[0] || err <= 0)
		return -EINVAL;
	snprintf(line, sizeof(line), "after %" PRIu64 " %s %d\n", n, o, err);
	return ctl_write(d, line);
}

int fkt_dev_fail_file(struct fkt_dev *d, const char *path, unsigned ops,
		      int err)
{
	struct fkt_extent ext[256];
	int n = fkt_fiemap(path, 0, ext, sizeof(ext) / sizeof(ext[0]));
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int r =
		    fkt_dev_fail_range(d, ops, err, ext[i].dev_off, ext[i].len);
		if (r < 0)
			return r;
	}
	return n;
}

int fkt_dev_clear(struct fkt_dev *d)
{
	return ctl_write(d, "clear\n");
}

int fkt_dev_reset_counters(struct fkt_dev *d)
{
	return ctl_write(d, "reset\n");
}

int fkt_dev_counters(struct fkt_dev *d, struct fkt_dev_counters *c)
{
	memset(c, 0, sizeof(*c));
	FILE *f = fopen(d->ctl, "r");
	if (!f)
		return -errno;
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
#define F(x) {#x, offsetof(struct fkt_dev_counters, x)}
	    F(reads),	     F(writes),	      F(fsyncs), F(flushes),
	    F(read_bytes),   F(write_bytes),  F(faults), F(read_faults),
	    F(write_faults), F(fsync_faults), F(rules),
#undef F
	};
	char name[32];
	unsigned long long v;
	int seen = 0;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%31s %llu", name, &v) != 2)
			continue;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			if (!strcmp(name, fields[i].name)) {
				*(uint64_t *)((char *)c + fields[i].off) = v;
				seen++;
			}
	}
	fclose(f);
	return seen ? 0 : -EIO;
}

int fkt_dev_wait_faults(struct fkt_dev *d, unsigned ops, uint64_t min,
			int timeout_ms)
{
	for (int waited = 0;; waited += 5) {
		struct fkt_dev_counters c;
		int r = fkt_dev_counters(d, &c);
		if (r)
			return r;
		uint64_t n = 0;
		if (ops & FKT_OP_READ)
			n += c.read_faults;
		if (ops & FKT_OP_WRITE)
			n += c.write_faults;
		if (ops & FKT_OP_FSYNC)
			n += c.fsync_faults;
		if (n >= min)
			return 0;
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		usleep(5000);
	}
}

/* Configure a free loop device on @image; returns its fd or -errno. */
static int loop_attach(const char *image, int dio, char *name, size_t cap)
{
	int img = open(image, O_RDWR | O_CLOEXEC);
	if (img < 0)
		return -errno;
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		close(img);
		return -errno;
	}
	int r = -EBUSY;
	for (int tries = 0; tries < 20 && r == -EBUSY; tries++) {
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			r = -errno;
			break;
		}
		snprintf(name, cap, "/dev/loop%d", nr);
		int lfd = open(name, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			r = -errno;
			break;
		}
		struct loop_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)img;
		/* AUTOCLEAR: the device goes with its last opener, so a test
		 * that dies leaves no loop device once its mount is gone. */
		cfg.info.lo_flags =
		    LO_FLAGS_AUTOCLEAR | (dio ? LO_FLAGS_DIRECT_IO : 0);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			r = lfd;
		} else {
			r = -errno; /* EBUSY: someone took it first */
			close(lfd);
		}
	}
	close(ctl);
	close(img);
	return r;
}

int fkt_stack_create(struct fkt_stack *st, const char *type,
		     uint64_t size_bytes, unsigned flags)
{
	memset(st, 0, sizeof(*st));
	st->loop_fd = -1;
	st->flags = flags;
	if (!fkt_is_root() || access("/dev/loop-control", F_OK) != 0)
		return 77;
	int r = fkt_dev_start(&st->dev, size_bytes, type);
	if (r)
		return r;
	remember((void **)live_stacks, st);
	int lfd = loop_attach(st->dev.image, !!(flags & FKT_STACK_DIO),
			      st->loopdev, sizeof(st->loopdev));
	if (lfd < 0) {
		fprintf(stderr, "fkfault: loop device on %s: %s\n",
			st->dev.image, strerror(-lfd));
		fkt_stack_destroy(st);
		return 77;
	}
	st->loop_fd = lfd;
	if (flags & FKT_STACK_DIO) {
		char p[128];
		snprintf(p, sizeof(p), "/sys/block/%s/loop/dio",
			 st->loopdev + 5);
		char *v = fkt_read_file(p, NULL);
		int on = v && v[0] == '1';
		free(v);
		if (!on) {
			fprintf(stderr, "fkfault: %s: direct I/O refused\n",
				st->loopdev);
			fkt_stack_destroy(st);
			return -1;
		}
	}
	snprintf(st->fs.type, sizeof(st->fs.type), "%s", type);
	snprintf(st->fs.img, sizeof(st->fs.img), "%s", st->dev.image);
	snprintf(st->fs.mnt, sizeof(st->fs.mnt), "%s/mnt", st->dev.dir);
	snprintf(st->fs.blkdev, sizeof(st->fs.blkdev), "%s", st->loopdev);
	if (mkdir(st->fs.mnt, 0755) != 0 || fkt_fs_mount(&st->fs) != 0) {
		fkt_stack_destroy(st);
		return -1;
	}
	return 0;
}

int fkt_stack_umount(struct fkt_stack *st)
{
	return fkt_fs_umount(&st->fs);
}

int fkt_stack_mount(struct fkt_stack *st)
{
	return fkt_fs_mount(&st->fs);
}

void fkt_stack_destroy(struct fkt_stack *st)
{
	if (st->fs.mounted && fkt_fs_umount(&st->fs) != 0)
		umount2(st->fs.mnt, MNT_DETACH);
	st->fs.mounted = 0;
	if (st->loop_fd >= 0) {
		/* Last opener: autoclear detaches it (LOOP_CLR_FD as well, in
		 * case the flag was lost). */
		ioctl(st->loop_fd, LOOP_CLR_FD, 0);
		close(st->loop_fd);
		st->loop_fd = -1;
	}
	if (st->fs.mnt[0])
		rmdir(st->fs.mnt);
	fkt_dev_stop(&st->dev);
	forget((void **)live_stacks, st);
}

int fkt_fiemap(const char *path, unsigned flags, struct fkt_extent *ext,
	       size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	enum { BATCH = 128 };
	size_t size =
	    sizeof(struct fiemap) + BATCH * sizeof(struct fiemap_extent);
	struct fiemap *fm = malloc(size);
	if (!fm) {
		close(fd);
		return -ENOMEM;
	}
	size_t n = 0;
	uint64_t start = 0;
	int r = 0, last = 0;
	while (!last && !r) {
		memset(fm, 0, size);
		fm->fm_start = start;
		fm->fm_length = FIEMAP_MAX_OFFSET - start;
		fm->fm_flags = (flags & FKT_FIEMAP_SYNC) ? FIEMAP_FLAG_SYNC : 0;
		fm->fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
			r = -errno;
			break;
		}
		if (fm->fm_mapped_extents == 0)
			break;
		for (unsigned i = 0; i < fm->fm_mapped_extents && !r; i++) {
			struct fiemap_extent *e = &fm->fm_extents[i];
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				last = 1;
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags &
			    (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
			     FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
			     FIEMAP_EXTENT_NOT_ALIGNED)) {
				r = -ENODATA;
				break;
			}
			unsigned unw =
			    !!(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN);
			struct fkt_extent *prev = n ? &ext[n - 1] : NULL;
			if (prev && prev->unwritten == unw &&
			    prev->file_off + prev->len == e->fe_logical &&
			    prev->dev_off + prev->len == e->fe_physical) {
				prev->len += e->fe_length;
				continue;
			}
			if (n == max) {
				r = -E2BIG;
				break;
			}
			ext[n].file_off = e->fe_logical;
			ext[n].dev_off = e->fe_physical;
			ext[n].len = e->fe_length;
			ext[n].unwritten = unw;
			n++;
		}
	}
	free(fm);
	close(fd);
	return r ? r : (int)n;
}

int fkt_drop_file_cache(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return -r;
}
