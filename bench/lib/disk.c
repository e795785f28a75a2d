// SPDX-License-Identifier: MIT
/*
 * disk.c - the benchmarks' disks: lab disks (disk/labdisk.h) or native
 * loop devices, mkfs, mounts and their cleanup (see disk.h for the
 * design and the devices).
 *
 * Interface routines: disk_profile_parse, disk_profile_arg,
 * disk_profile_describe, disk_run_dir_create, disk_cleanup_stale,
 * disk_create, disk_create_part, disk_destroy, disk_destroy_all,
 * disk_remount, disk_loop_attach, disk_loop_detach,
 * disk_loop_detach_file, disk_mkfs (through child.h).
 */
#include "disk.h"
#include "child.h"
#include "cli.h"
#include "labdisk.h"
#include "model.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLKIO "/sys/fs/cgroup/blkio/"
#define BPS_FILE BLKIO "blkio.throttle.write_bps_device"
#define IOPS_FILE BLKIO "blkio.throttle.write_iops_device"
#define LOOP_MAJOR_NR 7
#define MAX_REG 64
/* The registry names of the lab disks made here. */
#define LAB_PREFIX "fkrun-"

static struct disk *reg[MAX_REG];
static int lock_fd = -1;

/* One ",KEY[=VALUE]" suffix of a lab device.  0 or -EINVAL. */
static int parse_suffix(const char *opt, size_t len, struct disk_profile *p)
{
	char buf[32];
	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, opt, len);
	buf[len] = 0;
	if (!strcmp(buf, "no-write-cache")) {
		p->no_write_cache = 1;
		return 0;
	}
	if (!strncmp(buf, "slowdown=", 9))
		return cli_parse_decimal(buf + 9, &p->slowdown) ||
			       !(p->slowdown >= 1) || p->slowdown > 1e6
			   ? -EINVAL
			   : 0;
	return -EINVAL;
}

int disk_profile_parse(const char *s, struct disk_profile *p)
{
	memset(p, 0, sizeof(*p));
	p->slowdown = 1;
	if (strlen(s) >= sizeof(p->name))
		return -EINVAL;
	strcpy(p->name, s);
	size_t base = strcspn(s, ",");
	if (base == 6 && !strncmp(s, "native", 6))
		return s[base] ? -EINVAL
			       : 0; /* no suffixes: nothing modelled */
	/* The former "BPS:IOPS" is throttle:BPS:IOPS. */
	int synonym = s[0] >= '0' && s[0] <= '9';
	if ((size_t)snprintf(p->model, sizeof(p->model), "%s%.*s",
			     synonym ? "throttle:" : "", (int)base,
			     s) >= sizeof(p->model))
		return -EINVAL;
	const char *arg;
	const struct disk_model *m = disk_model_find(p->model, &arg);
	if (!m)
		return -EINVAL;
	if (m == &disk_model_throttle) {
		if (!arg ||
		    disk_throttle_parse(arg, &p->write_bps, &p->write_iops))
			return -EINVAL;
	} else {
		if (arg)
			return -EINVAL;
		p->write_bps = m->nominal_write_bps;
		p->write_iops = m->nominal_write_iops;
	}
	p->imitates = m->imitates;
	for (const char *o = s + base; *o == ',';) {
		size_t n = strcspn(o + 1, ",");
		if (!n || parse_suffix(o + 1, n, p))
			return -EINVAL;
		o += n + 1;
	}
	/* The axes it limits, before the slowdown divides them. */
	int lim_bps = p->write_bps != 0, lim_iops = p->write_iops != 0;
	p->write_bps = (uint64_t)((double)p->write_bps / p->slowdown);
	p->write_iops = (uint64_t)((double)p->write_iops / p->slowdown);
	/* Below the floor it would stall every sync(2) on the machine
	 * (disk.h). */
	if ((lim_bps && p->write_bps < DISK_MIN_WRITE_BPS) ||
	    (lim_iops && p->write_iops < DISK_MIN_WRITE_IOPS))
		return -ERANGE;
	return 0;
}

int disk_profile_arg(const char *cmd, const char *opt, const char *s,
		     struct disk_profile *p)
{
	int r = disk_profile_parse(s, p);
	if (r == -ERANGE)
		cli_bad_value(cmd, opt, s,
			      "below the floor of %llu B/s and %llu write "
			      "IOPS: a slower disk stalls every sync(2) on the "
			      "machine; see docs/disk.md",
			      (unsigned long long)DISK_MIN_WRITE_BPS,
			      (unsigned long long)DISK_MIN_WRITE_IOPS);
	else if (r)
		cli_bad_value(cmd, opt, s,
			      "%s; BPS in bytes/s with k, M or G = 10^3, 10^6, "
			      "10^9, IOPS a count, 0 = no limit",
			      DISK_DEVICES);
	return r;
}

void disk_profile_describe(const struct disk_profile *p, char *buf, size_t len)
{
	if (!disk_profile_is_lab(p)) {
		snprintf(buf, len, "%s (this machine's disk, nothing modelled)",
			 p ? p->name : "native");
		return;
	}
	if (!p->write_bps && !p->write_iops) { /* ram: no timing */
		snprintf(buf, len, "%s (%s)", p->name, p->imitates);
		return;
	}
	char bps[32] = "no write limit", iops[32] = "no IOPS limit";
	if (p->write_bps)
		snprintf(bps, sizeof(bps), "write %.0f MB/s",
			 (double)p->write_bps / 1e6);
	if (p->write_iops)
		snprintf(iops, sizeof(iops), "%" PRIu64 " write IOPS",
			 p->write_iops);
	snprintf(buf, len, "%s (modelled %s; %s, %s%s)", p->name, p->imitates,
		 bps, iops, p->slowdown > 1 ? ", after the slowdown" : "");
}

/* The former profiles' blkio throttles, reset when a stale run of an
 * older flushkit recorded one (reset_recorded_throttles). */
#define BLKIO "/sys/fs/cgroup/blkio/"
#define BPS_FILE BLKIO "blkio.throttle.write_bps_device"
#define IOPS_FILE BLKIO "blkio.throttle.write_iops_device"

static int throttle_supported(void)
{
	return access(BPS_FILE, W_OK) == 0 && access(IOPS_FILE, W_OK) == 0;
}

static int write_rule(const char *file, unsigned maj, unsigned min, uint64_t v)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char line[64];
	int n = snprintf(line, sizeof(line), "%u:%u %llu\n", maj, min,
			 (unsigned long long)v);
	int r = write(fd, line, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return r;
}

/* Remove the limits of MAJ:MIN. */
static int throttle_reset(unsigned maj, unsigned min)
{
	int r = write_rule(BPS_FILE, maj, min, 0);
	int r2 = write_rule(IOPS_FILE, maj, min, 0);
	if (r || r2)
		cli_error("write '%u:%u 0' to %s: %s", maj, min,
			  r ? BPS_FILE : IOPS_FILE, strerror(-(r ? r : r2)));
	return r ? r : r2;
}

int disk_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	if (!path)
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (n && !access(buf, X_OK))
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

int disk_mkfs(const char *type, const char *dev)
{
	char mkfs[32];
	char *argv[8];
	int n = 0;
	if (strcmp(type, "ext4") && strcmp(type, "ext3") &&
	    strcmp(type, "xfs") && strcmp(type, "btrfs"))
		return -EINVAL;
	snprintf(mkfs, sizeof(mkfs), "mkfs.%s", type);
	if (!disk_in_path(mkfs))
		return -ENOENT;
	argv[n++] = mkfs;
	argv[n++] = "-q";
	if (!strncmp(type, "ext", 3)) {
		argv[n++] = "-F";
		argv[n++] = "-m"; /* no root reserve: ENOSPC comes for real */
		argv[n++] = "0";
	} else {
		argv[n++] = "-f";
	}
	argv[n++] = (char *)dev;
	argv[n] = NULL;
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDOUT_NULL |
					CHILD_SIGDFL};
	int rc = child_run(argv[0], argv, &o);
	if (rc) {
		if (rc < 0)
			cli_error("%s '%s': %s", mkfs, dev, strerror(-rc));
		else
			cli_error("%s '%s': exit status %d", mkfs, dev, rc);
		return -EIO;
	}
	return 0;
}

/* The loop device numbered @n as "/dev/loopN" and its numbers. */
static void loop_name(struct disk *d, int n)
{
	snprintf(d->dev, sizeof(d->dev), "/dev/loop%d", n);
	d->maj = LOOP_MAJOR_NR;
	d->min = (unsigned)n;
}

int disk_loop_attach(const char *img, struct disk *d)
{
	int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		int e = errno;
		cli_error("open '/dev/loop-control': %s", strerror(e));
		return -e;
	}
	int file = open(img, O_RDWR | O_CLOEXEC);
	if (file < 0) {
		int e = errno;
		close(ctl);
		cli_error("open '%s': %s", img, strerror(e));
		return -e;
	}
	int err = -EBUSY;
	/* Another user may take the free device between the two calls. */
	for (int tries = 0; tries < 20; tries++) {
		int n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			err = -errno;
			break;
		}
		char path[64];
		snprintf(path, sizeof(path), "/dev/loop%d", n);
		int lfd = open(path, O_RDWR | O_CLOEXEC);
		if (lfd < 0) {
			err = -errno;
			continue;
		}
		struct loop_config cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)file;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		snprintf((char *)cfg.info.lo_file_name,
			 sizeof(cfg.info.lo_file_name), "%s", img);
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			loop_name(d, n);
			d->loop_fd = lfd;
			d->looped = 1;
			err = 0;
			break;
		}
		err = -errno;
		close(lfd);
		if (err != -EBUSY)
			break;
	}
	close(file);
	close(ctl);
	if (err)
		cli_error("attach a loop device to '%s': %s", img,
			  strerror(-err));
	return err;
}

/* Is loop device @n attached?  Its backing file into @buf if so. */
static int loop_backing(int n, char *buf, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/block/loop%d/loop/backing_file", n);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t r = read(fd, buf, len - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 1;
}

static int loop_clear(int n)
{
	char path[64];
	snprintf(path, sizeof(path), "/dev/loop%d", n);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = ioctl(fd, LOOP_CLR_FD, 0) ? -errno : 0;
	close(fd);
	return r == -ENXIO ? 0 : r;
}

int disk_loop_detach(struct disk *d)
{
	if (!d->looped)
		return 0;
	int r = ioctl(d->loop_fd, LOOP_CLR_FD, 0) ? -errno : 0;
	close(d->loop_fd);
	d->loop_fd = -1;
	if (r == -ENXIO)
		r = 0;
	/* Autoclear finishes the detach on the last close: check. */
	char buf[1024];
	for (int i = 0; i < 50 && loop_backing((int)d->min, buf, sizeof(buf));
	     i++)
		usleep(20000);
	if (loop_backing((int)d->min, buf, sizeof(buf)) &&
	    !strcmp(buf, d->img)) {
		cli_error("detach '%s': %s", d->dev, strerror(r ? -r : EBUSY));
		return r ? r : -EBUSY;
	}
	d->looped = 0;
	return 0;
}

/* Call @fn(n) for every loop device with a backing file (prefix @pre
 * when @prefix, else exactly @pre).  Returns the count of 0 returns. */
static int each_loop(const char *pre, int prefix, int (*fn)(int))
{
	DIR *dir = opendir("/sys/block");
	if (!dir)
		return -errno;
	struct dirent *e;
	int count = 0;
	size_t plen = strlen(pre);
	while ((e = readdir(dir))) {
		int n;
		char buf[1024];
		if (sscanf(e->d_name, "loop%d", &n) != 1 ||
		    !loop_backing(n, buf, sizeof(buf)))
			continue;
		if (prefix ? strncmp(buf, pre, plen) : strcmp(buf, pre))
			continue;
		if (fn(n) == 0)
			count++;
	}
	closedir(dir);
	return count;
}

int disk_loop_detach_file(const char *img)
{
	return each_loop(img, 0, loop_clear);
}

static void reg_add(struct disk *d)
{
	for (int i = 0; i < MAX_REG; i++)
		if (!reg[i]) {
			reg[i] = d;
			d->registered = 1;
			return;
		}
}

static void reg_del(struct disk *d)
{
	for (int i = 0; i < MAX_REG; i++)
		if (reg[i] == d)
			reg[i] = NULL;
	d->registered = 0;
}

static int do_umount(const char *mnt)
{
	/* A child that just exited may hold the mount for a moment. */
	for (int i = 0; i < 100; i++) {
		if (umount2(mnt, 0) == 0)
			return 0;
		if (errno == EINVAL || errno == ENOENT)
			return 0; /* not mounted */
		if (errno != EBUSY)
			break;
		usleep(100000);
	}
	int e = errno;
	cli_error("umount '%s': %s (detaching it lazily)", mnt, strerror(e));
	umount2(mnt, MNT_DETACH);
	return -e;
}

/* mkdir @d's mount point d->mnt and mount its file system of @type
 * there.  0 or -errno. */
static int mount_fs(struct disk *d, const char *type)
{
	int r = 0;
	if (mkdir(d->mnt, 0700)) {
		r = -errno;
		cli_error("mkdir '%s': %s", d->mnt, strerror(-r));
	} else {
		d->mnt_made = 1;
	}
	if (!r) {
		if (mount(d->dev, d->mnt, type, 0, NULL)) {
			r = -errno;
			cli_error("mount '%s' on '%s': %s", d->dev, d->mnt,
				  strerror(-r));
		} else {
			d->mounted = 1;
		}
	}
	return r;
}

/* mkfs.@type on d->dev, mounted on d->mnt (made).  0 or -errno. */
static int make_fs(struct disk *d, const char *type)
{
	int r = disk_mkfs(type, d->dev);
	if (r == -ENOENT)
		cli_error("mkfs.%s not found in PATH", type);
	return r ? r : mount_fs(d, type);
}

static void dev_numbers(struct disk *d)
{
	struct stat st;
	if (!stat(d->dev, &st) && S_ISBLK(st.st_mode)) {
		d->maj = major(st.st_rdev);
		d->min = minor(st.st_rdev);
	}
}

/* A lab disk of @prof for disk @name, named "fkrun-PID-NAME" after its
 * maker: disk_cleanup_stale removes the lab disks whose maker is gone
 * (their daemons outlive a killed run). */
static uint64_t mem_available(void)
{
	struct fk_meminfo m;
	return fk_meminfo_read(NULL, &m) ? 0 : m.mem_available_kb * 1024;
}

static int make_lab(struct disk *d, const char *name, uint64_t bytes,
		    const struct disk_profile *prof)
{
	char lname[64];
	snprintf(lname, sizeof(lname), LAB_PREFIX "%ld-%.40s", (long)getpid(),
		 name);
	/* A disk bigger than half the free memory keeps its image in
	 * DIR/NAME.img (sparse) instead of RAM: the model's timing
	 * stays, the host disk's writeback of the image comes back. */
	uint64_t avail = mem_available();
	const char *backing = NULL;
	if (avail && bytes > avail / 2) {
		int fd =
		    open(d->img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			int e = errno;
			cli_error("create '%s': %s", d->img, strerror(e));
			return -e;
		}
		close(fd);
		d->img_made = 1;
		backing = d->img;
		char a[32], b[32];
		cli_warn("a %s lab disk does not fit in half the free memory "
			 "(MemAvailable %s): its image is '%s'",
			 cli_human_bytes(bytes, a, sizeof(a)),
			 cli_human_bytes(avail, b, sizeof(b)), d->img);
	}
	struct labdisk_opts o = {
	    .backing = backing,
	    .model = prof->model,
	    .size = (bytes + 4095) & ~(uint64_t)4095,
	    .slowdown = prof->slowdown,
	    .no_write_cache = prof->no_write_cache,
	    .name = lname,
	    /* A killed maker's file systems go at once. */
	    .orphan_cleanup = 1,
	};
	int r = labdisk_create(&o, &d->lab);
	if (r)
		return r;
	d->lab_made = 1;
	snprintf(d->dev, sizeof(d->dev), "%s", d->lab.dev);
	if (!backing)
		snprintf(d->img, sizeof(d->img), "%s", d->lab.image);
	dev_numbers(d);
	return 0;
}

static int disk_names(struct disk *d, const char *dir, const char *name,
		      const char *type)
{
	memset(d, 0, sizeof(*d));
	d->loop_fd = -1;
	if ((type && strlen(type) >= sizeof(d->type)) ||
	    (size_t)snprintf(d->img, sizeof(d->img), "%s/%s.img", dir, name) >=
		sizeof(d->img) ||
	    (size_t)snprintf(d->mnt, sizeof(d->mnt), "%s/%s", dir, name) >=
		sizeof(d->mnt))
		return -ENAMETOOLONG;
	snprintf(d->type, sizeof(d->type), "%s", type ? type : "");
	return 0;
}

int disk_create(struct disk *d, const char *dir, const char *name,
		const char *type, uint64_t bytes,
		const struct disk_profile *prof)
{
	int r = disk_names(d, dir, name, type);
	if (r)
		return r;
	if (!type && !disk_profile_is_lab(prof))
		return -EINVAL; /* a host is a lab disk */
	reg_add(d);
	if (disk_profile_is_lab(prof)) {
		r = make_lab(d, name, bytes, prof);
		if (!r && type)
			r = make_fs(d, type);
		if (r)
			disk_destroy(d);
		return r;
	}
	int fd = open(d->img, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;
		cli_error("create '%s': %s", d->img, strerror(e));
		reg_del(d);
		return -e;
	}
	d->img_made = 1;
	if (ftruncate(fd, (off_t)bytes)) {
		int e = errno;
		close(fd);
		cli_error("truncate '%s': %s", d->img, strerror(e));
		disk_destroy(d);
		return -e;
	}
	close(fd);
	r = disk_loop_attach(d->img, d);
	if (!r)
		r = make_fs(d, type);
	if (r)
		disk_destroy(d);
	return r;
}

int disk_create_part(struct disk *d, struct disk *host, unsigned k, unsigned n,
		     const char *dir, const char *name, const char *type)
{
	if (!host->lab_made || !n || k >= n)
		return -EINVAL;
	int r = disk_names(d, dir, name, type);
	if (r)
		return r;
	uint64_t part = (host->lab.size / n) & ~(uint64_t)4095;
	r = labdisk_attach_part(&host->lab, part * k, part, d->dev,
				sizeof(d->dev));
	if (r)
		return r;
	d->part = 1;
	snprintf(d->img, sizeof(d->img), "%s", host->lab.image);
	dev_numbers(d);
	reg_add(d);
	if (!type)
		return 0;
	r = make_fs(d, type);
	if (r)
		disk_destroy(d);
	return r;
}

int disk_parts_make_fs(struct disk *const *parts, unsigned n, const char *type)
{
	int r = 0;
	for (unsigned i = 0; i < n && !r; i++) {
		r = disk_mkfs(type, parts[i]->dev);
		if (r == -ENOENT)
			cli_error("mkfs.%s not found in PATH", type);
	}
	for (unsigned i = 0; i < n && !r; i++) {
		snprintf(parts[i]->type, sizeof(parts[i]->type), "%s", type);
		r = mount_fs(parts[i], type);
	}
	return r;
}

int disk_remount(struct disk *d)
{
	if (!d->mounted)
		return -EINVAL;
	if (do_umount(d->mnt))
		return -EBUSY;
	d->mounted = 0;
	if (mount(d->dev, d->mnt, d->type, 0, NULL)) {
		int e = errno;
		cli_error("mount '%s' on '%s': %s", d->dev, d->mnt,
			  strerror(e));
		return -e;
	}
	d->mounted = 1;
	return 0;
}

int disk_destroy(struct disk *d)
{
	int err = 0;
	if (d->mounted) {
		if (do_umount(d->mnt))
			err = -EIO;
		d->mounted = 0;
	}
	if (d->mnt_made) {
		rmdir(d->mnt);
		d->mnt_made = 0;
	}
	/* A part's loop device goes with its host (labdisk_destroy). */
	if (d->lab_made) {
		if (labdisk_destroy(&d->lab))
			err = -EIO;
		d->lab_made = 0;
	}
	if (d->looped && disk_loop_detach(d))
		err = -EIO;
	if (d->img_made && !d->looped) {
		if (unlink(d->img) && errno != ENOENT)
			cli_warn("unlink '%s': %s", d->img, strerror(errno));
		d->img_made = 0;
	}
	if (!err)
		reg_del(d);
	return err;
}

void disk_destroy_all(void)
{
	for (int i = MAX_REG - 1; i >= 0; i--)
		if (reg[i]) {
			struct disk *d = reg[i];
			disk_destroy(d);
			reg_del(d);
		}
}

/* ---- run directories and what killed runs left -------------------------- */

static int rm_tree_at(int dfd)
{
	DIR *dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return -errno;
	}
	struct dirent *e;
	while ((e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(dir), e->d_name, 0) == 0)
			continue;
		int sub =
		    openat(dirfd(dir), e->d_name,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			rm_tree_at(sub);
			unlinkat(dirfd(dir), e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(dir);
	return 0;
}

/* Unmount every mount point below @prefix (deepest first).  Count. */
static int umount_below(const char *prefix)
{
	int count = 0;
	size_t plen = strlen(prefix);
	for (int pass = 0; pass < 8; pass++) {
		FILE *f = fopen("/proc/self/mountinfo", "re");
		if (!f)
			return count;
		char line[4096], found[4096] = "";
		while (fgets(line, sizeof(line), f)) {
			char mp[4096];
			/* id parent maj:min root mountpoint ... */
			if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
				continue;
			if (!strncmp(mp, prefix, plen) &&
			    strlen(mp) > strlen(found))
				strcpy(found, mp);
		}
		fclose(f);
		if (!found[0])
			break;
		do_umount(found);
		count++;
	}
	return count;
}

/* Reset the write throttles a killed run of an older flushkit (whose
 * profiles were blkio throttles) recorded in its directory
 * @path (each IMG.throttle names one "MAJ:MIN") whose loop device is no
 * longer attached (one still attached to an image under @path was reset
 * when it was detached; one attached to another file is someone else's
 * now).  Throttles this code did not set are never touched.  Count. */
static int reset_recorded_throttles(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 9 || strcmp(e->d_name + n - 9, ".throttle"))
			continue;
		char rec[1400], buf[1024];
		snprintf(rec, sizeof(rec), "%s/%s", path, e->d_name);
		FILE *f = fopen(rec, "re");
		unsigned maj, min;
		int ok = f && fscanf(f, "%u:%u", &maj, &min) == 2;
		if (f)
			fclose(f);
		if (!ok || maj != LOOP_MAJOR_NR ||
		    loop_backing((int)min, buf, sizeof(buf)))
			continue;
		if (!throttle_reset(maj, min))
			count++;
	}
	closedir(d);
	return count;
}

/* Destroy the lab disks (LAB_PREFIX "PID-NAME") whose maker PID is
 * gone: their daemons outlive a killed run.  Count. */
static int destroy_orphan_labdisks(void)
{
	struct labdisk *v;
	int n = labdisk_list(&v), count = 0;
	for (int i = 0; i < n; i++) {
		long pid;
		if (sscanf(v[i].name, LAB_PREFIX "%ld-", &pid) != 1 ||
		    pid <= 0 || !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		if (!labdisk_destroy(&v[i]))
			count++;
	}
	if (n > 0)
		free(v);
	return count;
}

/* A killed run's tracefs instances (RUN/tracefs/instances/flushkit-*,
 * the mount still there): their buffers and enabled events go with
 * rmdir, before the mount does.  Count removed. */
static int remove_trace_instances(const char *run)
{
	char dir[1200];
	snprintf(dir, sizeof(dir), "%s/tracefs/instances", run);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "flushkit-", 9) &&
		    !unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR))
			count++;
	closedir(d);
	return count;
}

/* Remove DISK_ROOT/@name, a ".new-PID" directory whose process is gone
 * (it holds at most the lock file).  1 if removed, else 0. */
static int remove_new_dir(const char *name)
{
	char path[1024], lock[1100];
	snprintf(path, sizeof(path), DISK_ROOT "/%s", name);
	snprintf(lock, sizeof(lock), "%s/lock", path);
	unlink(lock);
	return rmdir(path) == 0;
}

int disk_cleanup_stale(void)
{
	DIR *dir = opendir(DISK_ROOT);
	int count = 0;
	if (dir) {
		struct dirent *e;
		while ((e = readdir(dir))) {
			long pid;
			if (sscanf(e->d_name, ".new-%ld", &pid) == 1) {
				/* A run directory in the making: its maker's
				 * until that process is gone. */
				if (kill((pid_t)pid, 0) && errno == ESRCH)
					count += remove_new_dir(e->d_name);
				continue;
			}
			if (strncmp(e->d_name, "run-", 4))
				continue;
			char path[1024], lock[1100];
			snprintf(path, sizeof(path), DISK_ROOT "/%s",
				 e->d_name);
			snprintf(lock, sizeof(lock), "%s/lock", path);
			int fd = open(lock, O_RDWR | O_CLOEXEC);
			if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
				close(fd); /* a live run */
				continue;
			}
			char prefix[1100];
			snprintf(prefix, sizeof(prefix), "%s/", path);
			count += remove_trace_instances(path);
			count += umount_below(prefix);
			int n = each_loop(prefix, 1, loop_clear);
			if (n > 0)
				count += n;
			if (throttle_supported())
				count += reset_recorded_throttles(path);
			int dfd = open(path, O_RDONLY | O_DIRECTORY |
						 O_NOFOLLOW | O_CLOEXEC);
			if (dfd >= 0)
				rm_tree_at(dfd);
			if (rmdir(path) == 0)
				count++;
			if (fd >= 0)
				close(fd);
		}
		closedir(dir);
	}
	int l = labdisk_cleanup_stale();
	if (l > 0)
		count += l;
	count += destroy_orphan_labdisks();
	return count;
}

int disk_run_dir_create(char *dir, size_t len)
{
	static int registered;
	if (mkdir("/var/tmp", 01777) && errno != EEXIST)
		return -errno;
	if (mkdir(DISK_ROOT, 0700) && errno != EEXIST) {
		int e = errno;
		cli_error("mkdir '%s': %s", DISK_ROOT, strerror(e));
		return -e;
	}
	int n = disk_cleanup_stale();
	if (n > 0)
		cli_warn("removed %d leftovers of a killed run under %s", n,
			 DISK_ROOT);
	if ((size_t)snprintf(dir, len, DISK_ROOT "/run-%ld", (long)getpid()) >=
	    len)
		return -ENAMETOOLONG;
	/* Atomic: the directory gets its locked lock file under a name
	 * disk_cleanup_stale never takes for a run (".new-PID"), and only
	 * then its run name.  A run-PID directory without a lock file is
	 * never one in the making. */
	char tmp[1024], lock[1100];
	snprintf(tmp, sizeof(tmp), DISK_ROOT "/.new-%ld", (long)getpid());
	if (mkdir(tmp, 0700) && errno != EEXIST) {
		int e = errno;
		cli_error("mkdir '%s': %s", tmp, strerror(e));
		return -e;
	}
	snprintf(lock, sizeof(lock), "%s/lock", tmp);
	if (lock_fd >= 0)
		close(lock_fd);
	/* Not O_CLOEXEC: the benchmark children hold the lock too, so a
	 * run is alive while any of them is. */
	lock_fd = open(lock, O_RDWR | O_CREAT, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		int e = errno;
		cli_error("lock '%s': %s", lock, strerror(e));
		rmdir(tmp);
		return -e;
	}
	if (rename(tmp, dir)) {
		int e = errno;
		cli_error("rename '%s' to '%s': %s", tmp, dir, strerror(e));
		unlink(lock);
		rmdir(tmp);
		return -e;
	}
	if (!registered) {
		atexit(disk_destroy_all);
		registered = 1;
	}
	return 0;
}

void disk_run_dir_remove(const char *dir)
{
	char lock[1100];
	snprintf(lock, sizeof(lock), "%s/lock", dir);
	unlink(lock);
	if (lock_fd >= 0) {
		close(lock_fd);
		lock_fd = -1;
	}
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd >= 0)
		rm_tree_at(dfd);
	if (rmdir(dir))
		cli_warn("rmdir '%s': %s (left behind)", dir, strerror(errno));
}
