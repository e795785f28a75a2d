// SPDX-License-Identifier: MIT
/*
 * fkloop.c - loop-mounted ext4/xfs/btrfs images with power cuts
 * (see fkloop.h).  mkfs and the loop detach are bench/lib/disk.c's;
 * truncate and mount -o loop go through fkt_sh with paths the tests
 * chose themselves (never user input).
 */
#include "fkloop.h"
#include "disk.h"
#include "fkcut.h"
#include "fktest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

/* linux/fs.h has FS_IOC_GOINGDOWN only since 6.x headers; same number as
 * XFS_IOC_GOINGDOWN and EXT4_IOC_SHUTDOWN. */
#ifndef FS_IOC_GOINGDOWN
#define FS_IOC_GOINGDOWN _IOR('X', 125, uint32_t)
#endif

static int copy_str(char *dst, size_t cap, const char *src)
{
	if (strlen(src) >= cap)
		return -1;
	strcpy(dst, src);
	return 0;
}

int fkt_mkfs(const char *type, const char *path)
{
	if (strcmp(type, "ext4") && strcmp(type, "xfs") &&
	    strcmp(type, "btrfs"))
		return -1;
	/* One mkfs for the tree: bench/lib/disk.c (no shell). */
	int r = disk_mkfs(type, path);
	if (r == -ENOENT)
		return 77;
	if (r) {
		/* xfs needs 300 MiB: a too-small image is a caller bug. */
		fprintf(stderr, "fkloop: mkfs.%s %s failed\n", type, path);
		return -1;
	}
	return 0;
}

int fkt_fs_create(struct fkt_fs *fs, const char *type, const char *img,
		  uint64_t size_bytes, const char *mnt)
{
	memset(fs, 0, sizeof(*fs));
	if (!fkt_is_root())
		return 77;
	if (access("/dev/loop-control", F_OK) != 0)
		return 77;
	if (copy_str(fs->type, sizeof(fs->type), type) ||
	    copy_str(fs->img, sizeof(fs->img), img) ||
	    copy_str(fs->mnt, sizeof(fs->mnt), mnt))
		return -1;
	if (fkt_sh("truncate -s %llu '%s'", (unsigned long long)size_bytes,
		   img) != 0)
		return -1;
	int r = fkt_mkfs(type, img);
	if (r) {
		unlink(img);
		return r;
	}
	mkdir(mnt, 0755);
	if (fkt_fs_mount(fs) != 0) {
		unlink(img);
		return 77; /* no loop devices in this container */
	}
	return 0;
}

int fkt_fs_mount(struct fkt_fs *fs)
{
	if (fs->mounted)
		return 0;
	if (fs->cut && fkt_cut_restore(fs))
		return -1;
	if (fs->blkdev[0]) {
		if (fkt_sh("mount -t %s%s%s '%s' '%s'", fs->type,
			   fs->opts[0] ? " -o " : "", fs->opts, fs->blkdev,
			   fs->mnt) != 0) {
			fprintf(stderr, "fkloop: mount %s on %s failed\n",
				fs->blkdev, fs->mnt);
			return -1;
		}
		fs->mounted = 1;
		return 0;
	}
	if (fkt_sh("mount -t %s -o loop%s%s '%s' '%s'", fs->type,
		   fs->opts[0] ? "," : "", fs->opts, fs->img, fs->mnt) != 0) {
		fprintf(stderr, "fkloop: mount %s on %s failed\n", fs->img,
			fs->mnt);
		return -1;
	}
	fs->mounted = 1;
	return 0;
}

/* Print the processes with a descriptor or cwd under @mnt (why an
 * unmount is EBUSY). */
static void show_users(const char *mnt)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	size_t ml = strlen(mnt);
	unsigned shown = 0;
	struct dirent *de;
	while ((de = readdir(d)) && shown < 10) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		char fdd[300], link[600], target[4096];
		snprintf(fdd, sizeof(fdd), "/proc/%s/fd", de->d_name);
		DIR *f = opendir(fdd);
		int hit = 0;
		struct dirent *fe;
		while (f && (fe = readdir(f)) && !hit) {
			snprintf(link, sizeof(link), "%s/%s", fdd, fe->d_name);
			ssize_t n = readlink(link, target, sizeof(target) - 1);
			if (n > 0) {
				target[n] = 0;
				hit = !strncmp(target, mnt, ml);
			}
		}
		if (f)
			closedir(f);
		if (hit) {
			char comm[64] = "?", cp[300];
			snprintf(cp, sizeof(cp), "/proc/%s/comm", de->d_name);
			FILE *c = fopen(cp, "r");
			if (c) {
				if (fgets(comm, sizeof(comm), c))
					comm[strcspn(comm, "\n")] = 0;
				fclose(c);
			}
			fprintf(stderr, "fkloop:   pid %s (%s) holds %s\n",
				de->d_name, comm, target);
			shown++;
		}
	}
	closedir(d);
	if (!shown)
		fprintf(stderr, "fkloop:   no process holds a file there "
				"(the kernel does)\n");
}

int fkt_fs_umount(struct fkt_fs *fs)
{
	if (!fs->mounted)
		return 0;
	/* A process that just exited may still hold the mount for a moment
	 * (its files are closed asynchronously): retry a few times; a file
	 * system that died under a cut at the disk (btrfs: its io_uring
	 * and transaction work meeting EIO) can take longer. */
	int tries = fs->cut ? 300 : 50;
	for (int i = 0; i < tries; i++) {
		if (umount(fs->mnt) == 0) {
			fs->mounted = 0;
			/* mount -o loop sets autoclear: the loop device goes
			 * away with the last unmount. */
			return 0;
		}
		if (errno != EBUSY)
			break;
		usleep(100 * 1000);
	}
	int err = errno;
	fprintf(stderr, "fkloop: umount %s: %s\n", fs->mnt, strerror(err));
	if (err == EBUSY)
		show_users(fs->mnt);
	return -1;
}

int fkt_fs_goingdown(struct fkt_fs *fs, uint32_t how)
{
	if (fs->cut && how == FKT_GOINGDOWN_NOLOGFLUSH)
		return fkt_cut_power(fs);
	int fd = open(fs->mnt, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	int r = ioctl(fd, FS_IOC_GOINGDOWN, &how) == 0 ? 0 : -errno;
	close(fd);
	return r;
}

int fkt_fs_power_cut(struct fkt_fs *fs)
{
	int r = fkt_fs_goingdown(fs, FKT_GOINGDOWN_NOLOGFLUSH);
	if (r < 0) {
		fprintf(stderr, "fkloop: FS_IOC_GOINGDOWN on %s: %s\n", fs->mnt,
			strerror(-r));
		return -1;
	}
	if (fkt_fs_umount(fs) != 0)
		return -1;
	return fkt_fs_mount(fs);
}

void fkt_fs_destroy(struct fkt_fs *fs)
{
	if (fs->mounted && fkt_fs_umount(fs) != 0)
		umount2(fs->mnt, MNT_DETACH);
	fs->mounted = 0;
	fkt_cut_destroy(fs);
	if (fs->img[0]) {
		/* Detach a loop device left behind by a failed autoclear. */
		disk_loop_detach_file(fs->img);
		unlink(fs->img);
	}
	if (fs->mnt[0])
		rmdir(fs->mnt);
}

int fkt_fill_fd(int fd, uint64_t len, char c)
{
	char buf[64 * 1024];
	memset(buf, c, sizeof(buf));
	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		size_t n =
		    len - off < sizeof(buf) ? (size_t)(len - off) : sizeof(buf);
		ssize_t w = pwrite(fd, buf, n, (off_t)off);
		if (w < 0)
			return -errno;
		if ((size_t)w != n)
			return -EIO;
	}
	return 0;
}

int fkt_make_file(const char *path, uint64_t len, char c)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	int r = fkt_fill_fd(fd, len, c);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

uint64_t fkt_fs_fill(const char *path)
{
	static const char junk[512];
	struct stat sb;
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0)
		return 0;
	uint64_t off = fstat(fd, &sb) ? 0 : (uint64_t)sb.st_size, before;
	do {
		before = off;
		for (uint64_t chunk = 1ull << 30; chunk >= 4096;) {
			if (fallocate(fd, 0, (off_t)off, (off_t)chunk) == 0)
				off += chunk;
			else if (errno == ENOSPC)
				chunk /= 2;
			else
				break;
		}
		for (;;) {
			ssize_t n = pwrite(fd, junk, sizeof(junk), (off_t)off);
			if (n <= 0)
				break;
			off += (uint64_t)n;
		}
		fsync(fd);
		syncfs(fd);
	} while (off != before);
	close(fd);
	return off;
}

int fkt_fs_create_tmp(struct fkt_fs *fs, const char *type, const char *name,
		      uint64_t size_bytes)
{
	char img[512], mnt[512];
	if (snprintf(img, sizeof(img), "%s/%s.img", fkt_tmpdir(), name) >=
		(int)sizeof(img) ||
	    snprintf(mnt, sizeof(mnt), "%s/mnt-%s", fkt_tmpdir(), name) >=
		(int)sizeof(mnt))
		return -1;
	return fkt_fs_create(fs, type, img, size_bytes, mnt);
}

static struct fkt_fs *guarded;

static void guard_exit(void)
{
	if (guarded)
		fkt_fs_destroy(guarded);
}

static void guard_signal(int sig)
{
	(void)sig;
	if (guarded && guarded->mounted)
		umount2(guarded->mnt, MNT_DETACH);
	_exit(1);
}

void fkt_fs_guard(struct fkt_fs *fs)
{
	static int installed;
	guarded = fs;
	if (installed)
		return;
	installed = 1;
	fkt_tmpdir(); /* its removal is registered first: it runs last */
	atexit(guard_exit);
	signal(SIGINT, guard_signal);
	signal(SIGTERM, guard_signal);
}

int fkt_fs_unfill(struct fkt_fs *fs, const char *path)
{
	int r = unlink(path) ? -errno : 0;
	int fd = open(fs->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
	return r;
}

int fkt_fs_create_or_skip(struct fkt_fs *fs, const char *type, const char *name,
			  uint64_t size_bytes)
{
	int r = fkt_fs_create_tmp(fs, type, name, size_bytes);
	if (r == 77)
		SKIP("needs root and loop devices");
	CHECK_EQ(r, 0);
	return r ? -1 : 0;
}

double fkt_fs_free_mib(const struct fkt_fs *fs)
{
	struct statfs sf;
	if (statfs(fs->mnt, &sf))
		return -1;
	return (double)sf.f_bavail * (double)sf.f_bsize / 1048576.0;
}
