// SPDX-License-Identifier: MIT
/*
 * test-monitor-loop.c - device resolution and sampling on a real loop
 * device (root only; skips with 77 otherwise): a file system on
 * /dev/loopN resolves to loopN and then to the disk holding the image,
 * the environment names ext4 and the loop device, and an fsync of a file
 * on it moves loopN's write counters.  The loop device is always
 * detached and the mount removed, also when a check fails.
 */
#include "fktest.h"
#include "monitor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char loopdev[64];
static char mnt[PATH_MAX];
static int mounted;

static void cleanup(void)
{
	if (mounted)
		fkt_sh("umount '%s'", mnt);
	if (loopdev[0])
		fkt_sh("losetup -d '%s'", loopdev);
}

int main(void)
{
	if (!fkt_is_root())
		SKIP("needs root for losetup and mount");
	if (fkt_sh("command -v losetup >/dev/null && command -v mkfs.ext4 "
		   ">/dev/null"))
		SKIP("losetup or mkfs.ext4 missing");
	const char *t = fkt_tmpdir();
	char img[PATH_MAX], out[PATH_MAX + 16];
	snprintf(img, sizeof(img), "%s/disk.img", t);
	snprintf(mnt, sizeof(mnt), "%s/mnt", t);
	snprintf(out, sizeof(out), "%s/loopdev", t);
	atexit(cleanup);

	if (fkt_sh("truncate -s 32M '%s' && losetup -f --show '%s' >'%s'", img,
		   img, out))
		SKIP("no free loop device");
	char *dev = fkt_read_file(out, NULL);
	if (!dev)
		SKIP("losetup printed nothing");
	dev[strcspn(dev, "\n")] = '\0';
	snprintf(loopdev, sizeof(loopdev), "%s", dev);
	free(dev);
	if (fkt_sh("mkfs.ext4 -q -F '%s' && mkdir -p '%s' && mount '%s' '%s'",
		   loopdev, mnt, loopdev, mnt))
		SKIP("cannot make or mount ext4 on %s", loopdev);
	mounted = 1;

	const char *name = strrchr(loopdev, '/') + 1;
	struct stat ist;
	CHECK_EQ(stat(img, &ist), 0);
	struct fk_blockdev img_disk[4];
	int ni = fk_blockdev_resolve(img, img_disk, 4);

	struct fk_blockdev d[FK_MONITOR_MAX_DEVICES];
	int n = fk_blockdev_resolve(mnt, d, FK_MONITOR_MAX_DEVICES);
	fprintf(stderr, "%s resolves to %d disks:", mnt, n);
	for (int i = 0; i < n; i++)
		fprintf(stderr, " %s%s%s", d[i].name,
			d[i].backing_of[0] ? " backing " : "", d[i].backing_of);
	fputc('\n', stderr);
	CHECK(n >= 1);
	if (n >= 1) {
		CHECK(!strcmp(d[0].name, name));
		CHECK_EQ(d[0].major, 7);
		CHECK(!strcmp(d[0].part, ""));
	}
	/* The image lives on a disk too (unless /var/tmp is tmpfs): the
	 * loop device's second entry is that disk. */
	CHECK_EQ(n, 1 + (ni > 0 ? 1 : 0));
	if (ni > 0 && n == 2) {
		CHECK(!strcmp(d[1].name, img_disk[0].name));
		CHECK(!strcmp(d[1].backing_of, name));
	}

	struct fk_monitor_env env;
	CHECK_EQ(fk_monitor_env(mnt, &env), 0);
	CHECK(!strcmp(env.fs_type, "ext4"));
	char real[PATH_MAX];
	CHECK(realpath(mnt, real) != NULL);
	CHECK(!strcmp(env.mount_point, real));
	CHECK(!strcmp(env.mount_source, loopdev));
	CHECK_EQ(env.nr_devices, (size_t)n);
	if (env.nr_devices)
		CHECK(!strcmp(env.dev_env[0].name, name));

	/* An fsync'ed write on the loop file system is counted on loopN. */
	struct fk_monitor *m;
	struct fk_monitor_sample a, b;
	CHECK_EQ(fk_monitor_create(&m), 0);
	CHECK_EQ(fk_monitor_add_path(m, mnt), n);
	CHECK_EQ(fk_monitor_sample(m, &a), 0);
	char f[PATH_MAX + 8];
	snprintf(f, sizeof(f), "%s/f", mnt);
	CHECK_EQ(fkt_write_file(f, 1 << 20, 3), 0);
	int fd = open(f, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_EQ(fsync(fd), 0);
	close(fd);
	CHECK_EQ(fk_monitor_sample(m, &b), 0);
	CHECK(b.dev[0].write_ios > a.dev[0].write_ios);
	/* at least the 1 MiB of data, in 512-byte sectors */
	CHECK(b.dev[0].write_sectors - a.dev[0].write_sectors >= 2048);
	fk_monitor_destroy(m);
	return fkt_done();
}
