// SPDX-License-Identifier: MIT
/*
 * labdisk.c - start, find, control and remove lab disks (see labdisk.h).
 *
 * Interface routines: labdisk_create, labdisk_open, labdisk_ctl,
 * labdisk_stats, labdisk_stat, labdisk_destroy, labdisk_list,
 * labdisk_cleanup_stale, labdisk_daemon_path.
 *
 * Teardown order (each layer pins the one below): file systems mounted
 * from the loop device, the loop device (LOOP_CLR_FD), the FUSE mount
 * (EBUSY while the loop device still holds the image: retried), the
 * daemon (it exits when its mount goes; SIGKILL if it does not within
 * 5 s and the lock is still its).
 *
 * Invariants:
 * 1. A registry directory with a held lock has a live daemon serving
 *    DIR/fuse.
 * 2. info exists only once the loop device is attached, and names it.
 */
#include "labdisk.h"
#include "cli.h"
#include "model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DISKD_NAME "flushkit-diskd"

static int try_exec(char *path, size_t cap, const char *fmt, const char *a,
		    const char *b)
{
	int n = snprintf(path, cap, fmt, a, b);
	return n > 0 && (size_t)n < cap && access(path, X_OK) == 0;
}

int labdisk_daemon_path(char *path, size_t cap)
{
	const char *env = getenv("FLUSHKIT_DISKD");
	if (env && *env) {
		if (try_exec(path, cap, "%s%s", env, ""))
			return 0;
		cli_error("disk: FLUSHKIT_DISKD '%s' is not an executable",
			  env);
		return -ENOENT;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			slash[1] = 0;
			if (try_exec(path, cap, "%s%s", self, DISKD_NAME) ||
			    try_exec(path, cap, "%s../%s", self, DISKD_NAME) ||
			    try_exec(path, cap, "%s../../%s", self, DISKD_NAME))
				return 0;
#ifdef FK_PRELOAD_RELDIR
			if (try_exec(path, cap, "%s../%s/" DISKD_NAME, self,
				     FK_PRELOAD_RELDIR))
				return 0;
#endif
		}
	}
#ifdef FK_DISKD_INSTALLED
	if (try_exec(path, cap, "%s%s", FK_DISKD_INSTALLED, ""))
		return 0;
#endif
	cli_error("disk: cannot find " DISKD_NAME
		  " next to flushkit or installed (FLUSHKIT_DISKD)");
	return -ENOENT;
}

/* ---- registry ---- */

static void dir_paths(struct labdisk *d, const char *name)
{
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->dir, sizeof(d->dir), "%s/%s", LABDISK_ROOT, name);
	snprintf(d->ctl, sizeof(d->ctl), "%s/fuse/ctl", d->dir);
	snprintf(d->image, sizeof(d->image), "%s/fuse/image", d->dir);
}

/* 1 if the lock is held (by a live daemon), 0 if free, -errno. */
static int lock_held(const char *dir)
{
	char p[300];
	snprintf(p, sizeof(p), "%s/lock", dir);
	int fd = open(p, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0
		: errno == EWOULDBLOCK		  ? 1
						  : -errno;
	close(fd);
	return r;
}

static int read_info(struct labdisk *d)
{
	char p[300], line[512];
	snprintf(p, sizeof(p), "%s/info", d->dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp++ = 0;
		if (!strcmp(line, "pid"))
			d->pid = (pid_t)atol(sp);
		else if (!strcmp(line, "loop"))
			snprintf(d->dev, sizeof(d->dev), "%s", sp);
		else if (!strcmp(line, "model"))
			snprintf(d->model, sizeof(d->model), "%s", sp);
		else if (!strcmp(line, "size"))
			d->size = strtoull(sp, NULL, 10);
		else if (!strcmp(line, "part") &&
			 d->nr_parts < LABDISK_MAX_PARTS)
			snprintf(d->parts[d->nr_parts++], sizeof(d->parts[0]),
				 "%s", sp);
	}
	fclose(f);
	return 0;
}

static int load(const char *name, struct labdisk *d)
{
	memset(d, 0, sizeof(*d));
	dir_paths(d, name);
	int r = read_info(d);
	int h = lock_held(d->dir);
	d->alive = h == 1;
	return r;
}

/* ---- loop devices and mounts ---- */

static int sysfs_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)cap, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* The loop devices whose backing file is @image (the disk's own and its
 * parts, recorded or not), as "/dev/loopN" into @devs.  The count. */
static int loops_of(const char *image, char (*devs)[32], int max)
{
	int n = 0;
	DIR *dd = opendir("/sys/block");
	if (!dd)
		return 0;
	struct dirent *de;
	while ((de = readdir(dd)) && n < max) {
		if (strncmp(de->d_name, "loop", 4))
			continue;
		char p[512], bf[PATH_MAX];
		snprintf(p, sizeof(p), "/sys/block/%s/loop/backing_file",
			 de->d_name);
		if (sysfs_line(p, bf, sizeof(bf)) == 0 && !strcmp(bf, image))
			snprintf(devs[n++], 32, "/dev/%.20s", de->d_name);
	}
	closedir(dd);
	return n;
}

/* Unmount every file system on block device @dev (the topmost first);
 * lazily when @lazy or when it stays busy.  The count or -errno. */
static int umount_dev(const char *dev, int lazy)
{
	struct stat st;
	if (stat(dev, &st) != 0 || !S_ISBLK(st.st_mode))
		return 0;
	char majmin[32];
	snprintf(majmin, sizeof(majmin), "%u:%u", major(st.st_rdev),
		 minor(st.st_rdev));
	int count = 0;
	for (int pass = 0; pass < 16; pass++) {
		FILE *f = fopen("/proc/self/mountinfo", "r");
		if (!f)
			return -errno;
		char line[4096], mp[4096] = "";
		while (fgets(line, sizeof(line), f)) {
			char devno[64], m[4096];
			if (sscanf(line, "%*s %*s %63s %*s %4095s", devno, m) ==
				2 &&
			    !strcmp(devno, majmin))
				snprintf(mp, sizeof(mp), "%s", m);
		}
		fclose(f);
		if (!mp[0])
			return count;
		int ok = lazy && umount2(mp, MNT_DETACH) == 0;
		for (int i = 0; i < 50 && !ok; i++) {
			ok = umount2(mp, 0) == 0;
			if (!ok && errno != EBUSY)
				break;
			if (!ok)
				usleep(100 * 1000);
		}
		/* EINVAL: not mounted any more (the daemon's orphan cleanup
		 * may unmount it at the same time). */
		if (!ok && errno != EINVAL && errno != ENOENT &&
		    umount2(mp, MNT_DETACH) != 0 && errno != EINVAL) {
			int e = errno;
			cli_error("disk: umount '%s' (on %s): %s", mp, dev,
				  strerror(e));
			return -e;
		}
		count++;
	}
	return count;
}

static int loop_detach(const char *dev)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		cli_error("disk: open '%s': %s", dev, strerror(e));
		return -e;
	}
	int r = 0;
	if (ioctl(fd, LOOP_CLR_FD, 0) != 0 && errno != ENXIO) {
		r = -errno;
		cli_error("disk: detach '%s' (LOOP_CLR_FD): %s", dev,
			  strerror(-r));
	}
	close(fd);
	return r;
}

/* Unmount the FUSE mount DIR/fuse, retrying while the loop device lets
 * go of the image; lazily at last (or at once when @lazy). */
static int fuse_umount(const char *dir, int lazy)
{
	char mnt[300];
	snprintf(mnt, sizeof(mnt), "%s/fuse", dir);
	if (lazy)
		return umount2(mnt, MNT_DETACH) == 0 || errno == EINVAL
			   ? 0
			   : -errno;
	for (int i = 0; i < 100; i++) {
		if (umount2(mnt, 0) == 0 || errno == EINVAL || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			break;
		usleep(50 * 1000);
	}
	if (umount2(mnt, MNT_DETACH) == 0 || errno == EINVAL)
		return 0;
	int e = errno;
	cli_error("disk: umount '%s': %s", mnt, strerror(e));
	return -e;
}

static void remove_dir(const char *dir)
{
	static const char *const files[] = {"info", "info.new", "log", "lock",
					    ".lock"};
	char p[320];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	snprintf(p, sizeof(p), "%s/fuse", dir);
	rmdir(p);
	if (rmdir(dir) != 0 && errno != ENOENT)
		cli_error("disk: remove '%s': %s", dir, strerror(errno));
}

/* ---- create ---- */

static uint64_t mem_available(void)
{
	struct fk_meminfo m;
	return fk_meminfo_read(NULL, &m) ? 0 : m.mem_available_kb * 1024;
}

int labdisk_check(const struct labdisk_opts *o, uint64_t size,
		  struct labdisk_refusal *why)
{
	const char *arg;
	memset(why, 0, sizeof(*why));
	const struct disk_model *m = disk_model_find(o->model, &arg);
	if (!m) {
		size_t l = 0;
		for (size_t i = 0; disk_model_at(i) && l < sizeof(why->hint);
		     i++)
			l += (size_t)snprintf(
			    why->hint + l, sizeof(why->hint) - l, "%s%s",
			    i ? ", " : "", disk_model_at(i)->name);
		why->opt = "--model";
		why->val = o->model;
		return -EINVAL;
	}
	int err = 0;
	void *inst =
	    m->create(size ? size : 4096, arg, !o->no_write_cache, &err);
	if (!inst) {
		why->opt = "--model";
		why->val = o->model;
		snprintf(why->hint, sizeof(why->hint), "%s",
			 strerror(err ? err : EINVAL));
		return -EINVAL;
	}
	m->destroy(inst);
	if (size % 4096) {
		why->opt = "--size";
		snprintf(why->val_buf, sizeof(why->val_buf), "%" PRIu64, size);
		why->val = why->val_buf;
		snprintf(why->hint, sizeof(why->hint), "a multiple of 4 KiB");
		return -EINVAL;
	}
	if (o->write_log && o->backing) {
		why->opt = "--write-log";
		why->val = o->write_log;
		snprintf(why->hint, sizeof(why->hint),
			 "not with --backing (the replay starts from a "
			 "zeroed image)");
		return -EINVAL;
	}
	if (o->write_log_max && o->write_log_max < 4096) {
		why->opt = "--write-log-max";
		snprintf(why->val_buf, sizeof(why->val_buf), "%" PRIu64,
			 o->write_log_max);
		why->val = why->val_buf;
		snprintf(why->hint, sizeof(why->hint), "at least 4 KiB");
		return -EINVAL;
	}
	if (o->name && (!*o->name || strchr(o->name, '/') ||
			o->name[0] == '.' || strlen(o->name) > 60)) {
		why->opt = "--name";
		why->val = o->name;
		snprintf(why->hint, sizeof(why->hint),
			 "1 to 60 bytes, no '/', not starting with '.'");
		return -EINVAL;
	}
	if (!o->backing) {
		uint64_t avail = mem_available();
		if (avail && size > avail) {
			char a[32], b[32];
			why->opt = "--size";
			snprintf(why->val_buf, sizeof(why->val_buf), "%s",
				 cli_human_bytes(size, a, sizeof(a)));
			why->val = why->val_buf;
			snprintf(why->hint, sizeof(why->hint),
				 "it does not fit in memory: MemAvailable %s; "
				 "give a smaller --size or --backing FILE",
				 cli_human_bytes(avail, b, sizeof(b)));
			return -ENOMEM;
		}
	}
	return 0;
}

/* labdisk_check, said on stderr for a caller that is not a command
 * line (a benchmark's disk): "flushkit: disk: invalid value ...". */
static int check_opts(const struct labdisk_opts *o, uint64_t size)
{
	struct labdisk_refusal why;
	int r = labdisk_check(o, size, &why);
	if (r)
		cli_error("disk: invalid value '%s' for %s (%s)",
			  why.val ? why.val : "", why.opt, why.hint);
	return r;
}

static int make_dir(const struct labdisk_opts *o, struct labdisk *d)
{
	if (mkdir("/run", 0755) != 0 && errno != EEXIST)
		return -errno;
	if (mkdir(LABDISK_ROOT, 0700) != 0 && errno != EEXIST) {
		int e = errno;
		cli_error("disk: mkdir '%s': %s", LABDISK_ROOT, strerror(e));
		return -e;
	}
	char name[64];
	for (int i = 0; i < 1000; i++) {
		if (o->name)
			snprintf(name, sizeof(name), "%s", o->name);
		else
			snprintf(name, sizeof(name), "disk%d", i);
		memset(d, 0, sizeof(*d));
		dir_paths(d, name);
		if (mkdir(d->dir, 0700) == 0)
			return 0;
		int e = errno;
		if (e != EEXIST || o->name) {
			cli_error("disk: mkdir '%s': %s%s", d->dir, strerror(e),
				  e == EEXIST ? " (a disk of that name exists)"
					      : "");
			return -e;
		}
	}
	return -EEXIST;
}

static int write_info(const struct labdisk *d, const struct labdisk_opts *o)
{
	char p[320], q[320];
	snprintf(p, sizeof(p), "%s/info.new", d->dir);
	snprintf(q, sizeof(q), "%s/info", d->dir);
	FILE *f = fopen(p, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"name %s\npid %ld\nloop %s\nmodel %s\nsize %" PRIu64
		"\nslowdown %g\nwrite_cache %d\nbacking %s\n",
		d->name, (long)d->pid, d->dev, d->model, d->size,
		o->slowdown > 0 ? o->slowdown : 1.0, !o->no_write_cache,
		o->backing ? o->backing : "memfd");
	int r = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !r)
		r = -errno;
	if (!r && rename(p, q) != 0)
		r = -errno;
	if (r)
		cli_error("disk: write '%s': %s", q, strerror(-r));
	return r;
}

static void print_log(const char *dir)
{
	char p[320], line[512];
	snprintf(p, sizeof(p), "%s/log", dir);
	FILE *f = fopen(p, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "%s", line);
	fclose(f);
}

/* Attach a free loop device to d->image, direct I/O (checked), on the
 * bytes [@off, @off + @len) (0, 0: all of it); its name into @dev. */
static int loop_attach(struct labdisk *d, uint64_t off, uint64_t len, char *dev,
		       size_t cap)
{
	int img = open(d->image, O_RDWR | O_CLOEXEC);
	if (img < 0) {
		int e = errno;
		cli_error("disk: open '%s': %s", d->image, strerror(e));
		return -e;
	}
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		int e = errno;
		cli_error("disk: open '/dev/loop-control': %s", strerror(e));
		close(img);
		return -e;
	}
	int r = -EBUSY;
	for (int tries = 0; tries < 20 && r == -EBUSY; tries++) {
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			r = -errno;
			cli_error("disk: LOOP_CTL_GET_FREE: %s", strerror(-r));
			break;
		}
		snprintf(dev, cap, "/dev/loop%d", nr);
		int lfd = open(dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			r = -errno;
			cli_error("disk: open '%s': %s", dev, strerror(-r));
			break;
		}
		struct loop_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)img;
		cfg.info.lo_flags = LO_FLAGS_DIRECT_IO;
		cfg.info.lo_offset = off;
		cfg.info.lo_sizelimit = len;
		snprintf((char *)cfg.info.lo_file_name,
			 sizeof(cfg.info.lo_file_name), "%.63s", d->image);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0)
			r = 0;
		else if ((r = -errno) != -EBUSY)
			cli_error("disk: LOOP_CONFIGURE '%s' on '%s': %s", dev,
				  d->image, strerror(-r));
		close(lfd);
	}
	close(ctl);
	close(img);
	if (r) {
		dev[0] = 0;
		return r;
	}
	char p[128], v[16] = "";
	snprintf(p, sizeof(p), "/sys/block/%s/loop/dio", dev + 5);
	if (sysfs_line(p, v, sizeof(v)) != 0 || v[0] != '1') {
		cli_error("disk: %s: the loop device refused direct I/O (%s)",
			  dev, p);
		loop_detach(dev);
		dev[0] = 0;
		return -EOPNOTSUPP;
	}
	return 0;
}

int labdisk_create(const struct labdisk_opts *o, struct labdisk *d)
{
	uint64_t size = o->size;
	if (!size && !o->backing)
		size = LABDISK_DEFAULT_SIZE;
	int r = check_opts(o, size);
	if (r)
		return r;
	char bin[PATH_MAX];
	if ((r = labdisk_daemon_path(bin, sizeof(bin))))
		return r;
	/* The log's path as the caller means it, whatever the daemon's
	 * working directory. */
	char wlog_abs[PATH_MAX] = "";
	if (o->write_log) {
		char cwd[PATH_MAX] = "";
		int rel = o->write_log[0] != '/';
		if ((rel && !getcwd(cwd, sizeof(cwd))) ||
		    (size_t)snprintf(wlog_abs, sizeof(wlog_abs), "%s%s%s", cwd,
				     rel ? "/" : "",
				     o->write_log) >= sizeof(wlog_abs)) {
			cli_error(
			    "disk: --write-log '%s': %s", o->write_log,
			    strerror(rel && !cwd[0] ? errno : ENAMETOOLONG));
			return -ENAMETOOLONG;
		}
	}
	labdisk_cleanup_stale();
	if ((r = make_dir(o, d)))
		return r;
	char p[320];
	snprintf(p, sizeof(p), "%s/fuse", d->dir);
	if (mkdir(p, 0700) != 0) {
		r = -errno;
		cli_error("disk: mkdir '%s': %s", p, strerror(-r));
		remove_dir(d->dir);
		return r;
	}
	/* The lock appears at its name already held: made as .lock, locked,
	 * then renamed, so a cleanup (labdisk_cleanup_stale, in another
	 * process) never finds it free between its creation and the flock
	 * and takes a disk being made for a stale one.  Without "lock" the
	 * directory counts as being made for 60 s. */
	char tmp[320];
	snprintf(tmp, sizeof(tmp), "%s/.lock", d->dir);
	snprintf(p, sizeof(p), "%s/lock", d->dir);
	int lock = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX) != 0 || rename(tmp, p) != 0) {
		r = -errno;
		cli_error("disk: lock '%s': %s", p, strerror(-r));
		if (lock >= 0)
			close(lock);
		remove_dir(d->dir);
		return r;
	}
	snprintf(p, sizeof(p), "%s/log", d->dir);
	int logfd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int pipefd[2];
	if (logfd < 0 || pipe2(pipefd, O_CLOEXEC) != 0) {
		r = -errno;
		cli_error("disk: log '%s' or pipe: %s", p, strerror(-r));
		if (logfd >= 0)
			close(logfd);
		close(lock);
		remove_dir(d->dir);
		return r;
	}
	/* The daemon's argv, fixed; numbers formatted here. */
	char a_ready[32], a_lock[32], a_model[160], a_size[48], a_slow[48],
	    a_back[PATH_MAX + 16], a_mnt[300], a_wlog[PATH_MAX + 16],
	    a_wlog_max[48];
	snprintf(a_wlog, sizeof(a_wlog), "--write-log=%s", wlog_abs);
	snprintf(a_wlog_max, sizeof(a_wlog_max), "--write-log-max=%" PRIu64,
		 o->write_log_max ? o->write_log_max : (uint64_t)256 << 20);
	snprintf(a_model, sizeof(a_model), "--model=%s", o->model);
	snprintf(a_size, sizeof(a_size), "--size=%" PRIu64, size);
	snprintf(a_slow, sizeof(a_slow), "--slowdown=%.17g",
		 o->slowdown > 0 ? o->slowdown : 1.0);
	snprintf(a_mnt, sizeof(a_mnt), "%s/fuse", d->dir);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		r = -errno;
		cli_error("disk: fork: %s", strerror(-r));
		close(pipefd[0]);
		close(pipefd[1]);
		close(logfd);
		close(lock);
		remove_dir(d->dir);
		return r;
	}
	if (pid == 0) {
		setsid();
		/* Only what it is given below: not the caller's other
		 * descriptors (a run's lock, which would keep it "alive"
		 * for as long as the daemon lives). */
		close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
		if (o->orphan_cleanup)
			prctl(PR_SET_PDEATHSIG, SIGUSR1);
		int wfd = dup(pipefd[1]); /* without O_CLOEXEC */
		int lfd = dup(lock);
		int nul = open("/dev/null", O_RDONLY);
		if (wfd < 0 || lfd < 0 || nul < 0 || dup2(nul, 0) < 0 ||
		    dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
			_exit(127);
		snprintf(a_ready, sizeof(a_ready), "--ready-fd=%d", wfd);
		snprintf(a_lock, sizeof(a_lock), "--lock-fd=%d", lfd);
		const char *argv[16];
		int n = 0;
		argv[n++] = DISKD_NAME;
		argv[n++] = "-f";
		argv[n++] = a_ready;
		argv[n++] = a_lock;
		if (o->orphan_cleanup)
			argv[n++] = "--orphan-cleanup";
		argv[n++] = a_model;
		if (o->size || !o->backing)
			argv[n++] = a_size;
		argv[n++] = a_slow;
		if (o->backing) {
			snprintf(a_back, sizeof(a_back), "--backing=%s",
				 o->backing);
			argv[n++] = a_back;
		}
		if (o->no_write_cache)
			argv[n++] = "--no-write-cache";
		if (o->write_log) {
			argv[n++] = a_wlog;
			argv[n++] = a_wlog_max;
		}
		argv[n++] = a_mnt;
		argv[n] = NULL;
		execv(bin, (char *const *)argv);
		fprintf(stderr, "flushkit: disk: exec '%s': %s\n", bin,
			strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	close(logfd);
	char buf[16] = {0};
	ssize_t n;
	do
		n = read(pipefd[0], buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	close(lock); /* the daemon holds it now */
	d->pid = pid;
	snprintf(d->model, sizeof(d->model), "%s", o->model);
	if (n <= 0 || strncmp(buf, "ready", 5)) {
		int st;
		waitpid(pid, &st, 0);
		cli_error("disk: %s did not start (exit %d); its log:", bin,
			  WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		print_log(d->dir);
		fuse_umount(d->dir, 1);
		remove_dir(d->dir);
		return WIFEXITED(st) && WEXITSTATUS(st) == 2 ? -EINVAL : -EIO;
	}
	struct stat st;
	if (stat(d->image, &st) != 0) { /* waits for FUSE_INIT */
		r = -errno;
		cli_error("disk: stat '%s': %s", d->image, strerror(-r));
		labdisk_destroy(d);
		return r;
	}
	d->size = (uint64_t)st.st_size;
	d->alive = 1;
	if ((r = loop_attach(d, 0, 0, d->dev, sizeof(d->dev))) ||
	    (r = write_info(d, o))) {
		labdisk_destroy(d);
		return r;
	}
	return 0;
}

int labdisk_attach_part(struct labdisk *d, uint64_t off, uint64_t len,
			char *dev, size_t cap)
{
	if (!len || off % 4096 || len % 4096 || off > d->size ||
	    len > d->size - off) {
		cli_error("disk: %s: part [%" PRIu64 ", +%" PRIu64
			  ") is not 4 KiB-aligned inside its %" PRIu64 " bytes",
			  d->name, off, len, d->size);
		return -EINVAL;
	}
	if (d->nr_parts >= LABDISK_MAX_PARTS) {
		cli_error("disk: %s: already %d parts", d->name, d->nr_parts);
		return -ENOSPC;
	}
	char p[320], q[320];
	snprintf(p, sizeof(p), "%s/info", d->dir);
	snprintf(q, sizeof(q), "%s/info.new", d->dir);
	FILE *in = fopen(p, "r");
	if (!in) {
		int e = errno;
		cli_error("disk: open '%s': %s", p, strerror(e));
		return -e;
	}
	char old[4096];
	size_t n = fread(old, 1, sizeof(old) - 1, in);
	fclose(in);
	old[n] = 0;
	int r = loop_attach(d, off, len, dev, cap);
	if (r)
		return r;
	/* Recorded after the attach; a loop device attached and not yet
	 * recorded is still found by its backing file (teardown). */
	FILE *f = fopen(q, "w");
	if (f) {
		fprintf(f, "%spart %s\n", old, dev);
		r = ferror(f) ? -EIO : 0;
		if (fclose(f) != 0 && !r)
			r = -errno;
		if (!r && rename(q, p) != 0)
			r = -errno;
	} else {
		r = -errno;
	}
	if (r) {
		cli_error("disk: write '%s': %s", p, strerror(-r));
		loop_detach(dev);
		dev[0] = 0;
		return r;
	}
	snprintf(d->parts[d->nr_parts++], sizeof(d->parts[0]), "%s", dev);
	return 0;
}

/* ---- the rest ---- */

int labdisk_open(const char *which, struct labdisk *d)
{
	if (strncmp(which, "/dev/", 5)) {
		if (strchr(which, '/') || which[0] == '.' || !*which) {
			cli_error("disk: '%s' is neither a disk name nor "
				  "/dev/loopN",
				  which);
			return -EINVAL;
		}
		int r = load(which, d);
		if (r == -ENOENT) {
			struct stat st;
			if (stat(d->dir, &st) == 0)
				return 0; /* being made, or half gone */
			cli_error("disk: no disk '%s' (in %s)", which,
				  LABDISK_ROOT);
		}
		return r;
	}
	struct labdisk *v;
	int n = labdisk_list(&v);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		int hit = !strcmp(v[i].dev, which);
		for (int k = 0; k < v[i].nr_parts && !hit; k++)
			hit = !strcmp(v[i].parts[k], which);
		if (hit) {
			*d = v[i];
			free(v);
			return 0;
		}
	}
	free(v);
	cli_error("disk: '%s' is no lab disk (flushkit disk list)", which);
	return -ENOENT;
}

int labdisk_ctl(const struct labdisk *d, const char *lines)
{
	int fd = open(d->ctl, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		cli_error("disk: open '%s': %s", d->ctl, strerror(e));
		return -e;
	}
	size_t len = strlen(lines);
	ssize_t n = write(fd, lines, len);
	int r = n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	if (r)
		cli_error("disk: write '%s' to '%s': %s", lines, d->ctl,
			  strerror(-r));
	return r;
}

int labdisk_stats(const struct labdisk *d, char **text)
{
	*text = NULL;
	int fd = open(d->ctl, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		cli_error("disk: open '%s': %s", d->ctl, strerror(e));
		return -e;
	}
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap);
	int r = 0;
	while (buf) {
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			cli_error("disk: read '%s': %s", d->ctl, strerror(-r));
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf)
		return -ENOMEM;
	if (r) {
		free(buf);
		return r;
	}
	buf[len] = 0;
	*text = buf;
	return 0;
}

char *labdisk_stat(const char *text, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = text; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t l = eol ? (size_t)(eol - p) : strlen(p);
		if (l > nl && !strncmp(p, name, nl) && p[nl] == ' ')
			return strndup(p + nl + 1, l - nl - 1);
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/* Take down what @d left: mounts, loop devices (its own and its parts:
 * every loop device on its image, so also one attached and not yet
 * recorded in info), FUSE mount, directory.
 * @lazy: the daemon is dead (stale): unmount lazily. */
static int teardown(struct labdisk *d, int lazy)
{
	int r = 0;
	char devs[LABDISK_MAX_PARTS + 1][32];
	/* Only loop devices still on this image (a number may be reused). */
	int n = loops_of(d->image, devs, LABDISK_MAX_PARTS + 1);
	for (int i = 0; i < n; i++) {
		int u = umount_dev(devs[i], lazy);
		if (u < 0 && !r)
			r = u;
	}
	for (int i = 0; i < n; i++) {
		int l = loop_detach(devs[i]);
		if (l && !r)
			r = l;
	}
	int f = fuse_umount(d->dir, lazy);
	if (f && !r)
		r = f;
	return r;
}

int labdisk_destroy(struct labdisk *d)
{
	int r = teardown(d, 0);
	/* The daemon exits when its mount goes: wait for its lock. */
	int held = 1;
	for (int i = 0; i < 100 && held == 1; i++) {
		held = lock_held(d->dir);
		if (held == 1)
			usleep(50 * 1000);
	}
	if (held == 1 && d->pid > 0) {
		char p[64], comm[64] = "";
		snprintf(p, sizeof(p), "/proc/%ld/comm", (long)d->pid);
		if (sysfs_line(p, comm, sizeof(comm)) == 0 &&
		    !strncmp(comm, "flushkit-diskd", 14)) {
			cli_warn("disk: %s: daemon %ld did not exit; killing "
				 "it",
				 d->name, (long)d->pid);
			kill(d->pid, SIGKILL);
			usleep(100 * 1000);
		}
	}
	/* Reap it if it is our child (labdisk_create in this process). */
	if (d->pid > 0)
		waitpid(d->pid, NULL, WNOHANG);
	remove_dir(d->dir);
	d->alive = 0;
	return r;
}

static int by_name(const void *a, const void *b)
{
	const struct labdisk *x = a, *y = b;
	return strcmp(x->name, y->name);
}

int labdisk_list(struct labdisk **v)
{
	*v = NULL;
	DIR *dd = opendir(LABDISK_ROOT);
	if (!dd)
		return errno == ENOENT ? 0 : -errno;
	int n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			struct labdisk *nv =
			    realloc(*v, (size_t)cap * sizeof(**v));
			if (!nv) {
				closedir(dd);
				free(*v);
				*v = NULL;
				return -ENOMEM;
			}
			*v = nv;
		}
		load(de->d_name, &(*v)[n]);
		n++;
	}
	closedir(dd);
	if (n)
		qsort(*v, (size_t)n, sizeof(**v), by_name);
	return n;
}

int labdisk_cleanup_stale(void)
{
	DIR *dd = opendir(LABDISK_ROOT);
	if (!dd)
		return errno == ENOENT ? 0 : -errno;
	int count = 0;
	struct dirent *de;
	while ((de = readdir(dd))) {
		if (de->d_name[0] == '.')
			continue;
		struct labdisk d;
		memset(&d, 0, sizeof(d));
		dir_paths(&d, de->d_name);
		char p[320];
		snprintf(p, sizeof(p), "%s/lock", d.dir);
		int fd = open(p, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			/* No lock yet: being made, unless it is old. */
			struct stat st;
			if (stat(d.dir, &st) != 0 ||
			    time(NULL) - st.st_mtime < 60)
				continue;
		} else if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			close(fd);
			continue; /* alive */
		}
		/* Held by us while we take it down. */
		read_info(&d);
		fprintf(stderr, "flushkit: disk: removing stale disk %s%s%s\n",
			d.name, d.dev[0] ? " on " : "", d.dev);
		teardown(&d, 1);
		remove_dir(d.dir);
		if (fd >= 0)
			close(fd);
		count++;
	}
	closedir(dd);
	return count;
}
