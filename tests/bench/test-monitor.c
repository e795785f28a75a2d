// SPDX-License-Identifier: MIT
/*
 * test-monitor.c - the monitor module: parsing /proc/meminfo, /proc/vmstat
 * and /sys/block/DEV/stat from fixed sample files (17-, 15- and 11-field
 * kernels), mountinfo lookup, device resolution in a fake sysfs tree
 * (partition -> disk, loop -> backing disk, anonymous st_dev -> mount
 * source), and the live sampler and environment snapshot.
 */
#include "fktest.h"
#include "monitor.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

static char data_dir[PATH_MAX];

static const char *data(const char *name)
{
	static char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", data_dir, name);
	return p;
}

static void test_meminfo(void)
{
	struct fk_meminfo mi;
	CHECK_EQ(fk_meminfo_read(data("meminfo-6.1"), &mi), 0);
	CHECK_EQ(mi.mem_total_kb, 8000000);
	CHECK_EQ(mi.mem_available_kb, 3500000);
	CHECK_EQ(mi.cached_kb, 2000000); /* not SwapCached */
	CHECK_EQ(mi.dirty_kb, 123456);
	CHECK_EQ(mi.writeback_kb, 7890); /* not WritebackTmp */
	CHECK_EQ(fk_meminfo_parse("MemTotal: 5 kB\nFoo: 1 kB\n", &mi), -EINVAL);
	CHECK_EQ(fk_meminfo_parse("Writeback: 7 kB\n", &mi), 0);
	CHECK_EQ(mi.writeback_kb, 7);
	CHECK_EQ(mi.dirty_kb, 0);
	CHECK_EQ(fk_meminfo_read(data("no-such-file"), &mi), -ENOENT);
}

static void test_vmstat(void)
{
	struct fk_vmstat vm;
	CHECK_EQ(fk_vmstat_read(data("vmstat-6.1"), &vm), 0);
	CHECK_EQ(vm.nr_dirty, 30864);
	CHECK_EQ(vm.nr_writeback, 1972);
	CHECK_EQ(vm.nr_dirty_threshold, 171234);
	CHECK_EQ(vm.nr_dirty_background_threshold, 85512);
	/* nr_dirtied is not nr_dirty */
	CHECK_EQ(fk_vmstat_parse("nr_dirtied 5\nnr_writeback 2\n", &vm),
		 -EINVAL);
}

static void test_blkstat(void)
{
	struct fk_blkstat b;
	CHECK_EQ(fk_blkstat_read(data("stat-17-linux6.1"), &b), 0);
	CHECK_EQ(b.nr_fields, 17);
	CHECK_EQ(b.read_ios, 38877);
	CHECK_EQ(b.write_ios, 13436);
	CHECK_EQ(b.write_merges, 7736);
	CHECK_EQ(b.write_sectors, 897040);
	CHECK_EQ(b.write_ticks_ms, 2891);
	CHECK_EQ(b.in_flight, 0);
	CHECK_EQ(b.io_ticks_ms, 8364);
	CHECK_EQ(b.time_in_queue_ms, 20960);
	CHECK_EQ(b.discard_sectors, 124608);
	CHECK_EQ(b.flush_ios, 2034);
	CHECK_EQ(b.flush_ticks_ms, 71);

	CHECK_EQ(fk_blkstat_read(data("stat-15-linux4.19"), &b), 0);
	CHECK_EQ(b.nr_fields, 15);
	CHECK_EQ(b.write_ios, 1040811);
	CHECK_EQ(b.write_sectors, 53320560);
	CHECK_EQ(b.in_flight, 2);
	CHECK_EQ(b.flush_ios, 0);

	CHECK_EQ(fk_blkstat_read(data("stat-11-linux3.10"), &b), 0);
	CHECK_EQ(b.nr_fields, 11);
	CHECK_EQ(b.write_ios, 88213);
	CHECK_EQ(b.write_merges, 41500);
	CHECK_EQ(b.time_in_queue_ms, 533220);
	CHECK_EQ(b.discard_ios, 0);

	CHECK_EQ(fk_blkstat_read(data("stat-bad"), &b), -EINVAL);
	CHECK_EQ(fk_blkstat_read(NULL, &b), -EINVAL);
}

static void test_mountinfo(void)
{
	char *buf;
	struct fk_mount m;
	CHECK(fk_read_text(AT_FDCWD, data("mountinfo"), 1 << 20, &buf) > 0);
	if (!buf)
		return;
	CHECK_EQ(fk_mountinfo_find(buf, 254, 2, "/var/tmp/fk.x/db", &m), 0);
	CHECK(!strcmp(m.mount_point, "/var/tmp"));
	CHECK(!strcmp(m.fs_type, "xfs"));
	CHECK(!strcmp(m.mount_options, "rw,noatime"));
	CHECK(!strcmp(m.super_options, "rw,attr2,inode64,logbufs=8,noquota"));
	CHECK(!strcmp(m.source, "/dev/vda2"));

	/* a bind mount of the same device, with an escaped space */
	CHECK_EQ(fk_mountinfo_find(buf, 254, 2, "/srv/bench data/x", &m), 0);
	CHECK(!strcmp(m.mount_point, "/srv/bench data"));
	CHECK(!strcmp(m.root, "/bench"));
	CHECK(!strcmp(m.mount_options, "ro,nosuid,noatime"));

	/* "/var/tmpfoo" is not under "/var/tmp" */
	CHECK_EQ(fk_mountinfo_find(buf, 254, 1, "/var/tmpfoo", &m), 0);
	CHECK(!strcmp(m.mount_point, "/"));
	CHECK(!strcmp(m.fs_type, "ext4"));

	/* unknown device: longest prefix of any mount */
	CHECK_EQ(fk_mountinfo_find(buf, 9, 9, "/tmp/a", &m), 0);
	CHECK(!strcmp(m.fs_type, "tmpfs"));
	/* no path: the device's line */
	CHECK_EQ(fk_mountinfo_find(buf, 0, 45, NULL, &m), 0);
	CHECK(!strcmp(m.source, "/dev/vdc"));
	CHECK_EQ(fk_mountinfo_find(buf, 9, 9, NULL, &m), -ENOENT);
	free(buf);
}

/* Any block device node under /dev, for the anonymous-st_dev case. */
static int find_block_node(char *path, size_t len, struct stat *st)
{
	DIR *d = opendir("/dev");
	struct dirent *de;
	int found = 0;
	while (d && !found && (de = readdir(d))) {
		snprintf(path, len, "/dev/%s", de->d_name);
		if (!stat(path, st) && S_ISBLK(st->st_mode) &&
		    major(st->st_rdev) != 0)
			found = 1;
	}
	if (d)
		closedir(d);
	return found;
}

static void test_resolve_fake_sysfs(void)
{
	const char *t = fkt_tmpdir();
	char sys[PATH_MAX], img[PATH_MAX], mi[PATH_MAX];
	struct stat st;
	struct fk_blockdev d[FK_MONITOR_MAX_DEVICES];

	snprintf(sys, sizeof(sys), "%s/sys", t);
	snprintf(img, sizeof(img), "%s/disk.img", t);
	snprintf(mi, sizeof(mi), "%s/mountinfo", t);
	CHECK_EQ(fkt_write_file(img, 4096, 1), 0);
	CHECK_EQ(stat(img, &st), 0);
	unsigned imaj = major(st.st_dev), imin = minor(st.st_dev);

	/* sdz (8:16) with partition sdz2 (8:18); loop5 (7:5) backed by
	 * disk.img, whose st_dev we map to sdz2 too. */
	CHECK_EQ(
	    fkt_sh("cd '%s' && mkdir -p sys/devices/pci/block/sdz/sdz2 "
		   "sys/devices/virtual/block/loop5/loop sys/dev/block "
		   "sys/block && echo 8:16 >sys/devices/pci/block/sdz/dev"
		   " && echo 2 >sys/devices/pci/block/sdz/sdz2/partition"
		   " && echo '%s' >sys/devices/virtual/block/loop5/loop/"
		   "backing_file"
		   " && ln -s ../../devices/pci/block/sdz/sdz2 "
		   "sys/dev/block/8:18"
		   " && ln -s ../../devices/pci/block/sdz sys/dev/block/8:16"
		   " && ln -s ../../devices/virtual/block/loop5 "
		   "sys/dev/block/7:5"
		   " && ln -s ../devices/virtual/block/loop5 sys/block/loop5"
		   " && ln -s ../devices/pci/block/sdz sys/block/sdz"
		   " && { [ -e sys/dev/block/%u:%u ] || ln -s "
		   "../../devices/pci/block/sdz/sdz2 sys/dev/block/%u:%u; }",
		   t, img, imaj, imin, imaj, imin),
	    0);

	/* a partition: the whole disk, and which partition */
	int n = fk_blockdev_resolve_dev(sys, mi, 8, 18, d, 8);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK(!strcmp(d[0].name, "sdz"));
		CHECK(!strcmp(d[0].part, "sdz2"));
		CHECK(!strcmp(d[0].backing_of, ""));
		CHECK_EQ(d[0].major, 8);
		CHECK_EQ(d[0].minor, 16);
	}
	/* a whole disk */
	n = fk_blockdev_resolve_dev(sys, mi, 8, 16, d, 8);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK(!strcmp(d[0].name, "sdz"));
		CHECK(!strcmp(d[0].part, ""));
	}
	/* a loop device: itself, then its backing file's disk */
	n = fk_blockdev_resolve_dev(sys, mi, 7, 5, d, 8);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK(!strcmp(d[0].name, "loop5"));
		CHECK_EQ(d[0].major, 7);
		CHECK(!strcmp(d[1].name, "sdz"));
		CHECK(!strcmp(d[1].backing_of, "loop5"));
	}
	CHECK_EQ(fk_blockdev_resolve_dev(sys, mi, 7, 5, d, 1), 1);
	/* not a block device in sysfs (tmpfs, NFS): nothing */
	CHECK_EQ(
	    fkt_sh("echo '60 1 0:77 / /mnt/x rw - tmpfs tmpfs rw' >'%s'", mi),
	    0);
	CHECK_EQ(fk_blockdev_resolve_dev(sys, mi, 0, 77, d, 8), 0);

	/* anonymous st_dev (btrfs): found through the mount source */
	char node[PATH_MAX];
	struct stat bst;
	if (!find_block_node(node, sizeof(node), &bst)) {
		fprintf(stderr,
			"no block device node: anonymous case skipped\n");
		return;
	}
	unsigned bmaj = major(bst.st_rdev), bmin = minor(bst.st_rdev);
	CHECK_EQ(fkt_sh("cd '%s' && mkdir -p sys/devices/virtual/block/anon1"
			" && ln -s ../../devices/virtual/block/anon1 "
			"sys/dev/block/%u:%u && echo '61 1 0:88 / /mnt/btr rw "
			"- btrfs %s rw,ssd' >'%s'",
			t, bmaj, bmin, node, mi),
		 0);
	n = fk_blockdev_resolve_dev(sys, mi, 0, 88, d, 8);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK(!strcmp(d[0].name, "anon1"));
		CHECK_EQ(d[0].major, bmaj);
		CHECK_EQ(d[0].minor, bmin);
	}
}

static void test_blockdev_env_fake(void)
{
	const char *t = fkt_tmpdir();
	char sys[PATH_MAX];
	struct fk_blockdev_env e;
	snprintf(sys, sizeof(sys), "%s/sys2", t);
	CHECK_EQ(
	    fkt_sh("mkdir -p '%s/block/sdq/queue' '%s/block/nv0/queue' "
		   "&& cd '%s/block' && echo 'mq-deadline kyber [bfq] none'"
		   " >sdq/queue/scheduler && echo 'write back' "
		   ">sdq/queue/write_cache && echo 1 >sdq/queue/rotational"
		   " && echo none >nv0/queue/scheduler",
		   sys, sys, sys),
	    0);
	fk_blockdev_env_read(sys, "sdq", &e);
	CHECK(!strcmp(e.scheduler, "bfq"));
	CHECK(!strcmp(e.write_cache, "write back"));
	CHECK_EQ(e.rotational, 1);
	fk_blockdev_env_read(sys, "nv0", &e);
	CHECK(!strcmp(e.scheduler, "none"));
	CHECK(!strcmp(e.write_cache, ""));
	CHECK_EQ(e.rotational, -1);
}

/* The live sampler: files kept open between samples, counters move
 * forward, errors come back as -errno. */
static void test_sampler_live(void)
{
	const char *t = fkt_tmpdir();
	struct fk_monitor *m;
	struct fk_monitor_sample a, b;
	CHECK_EQ(fk_monitor_create(&m), 0);
	int n = fk_monitor_add_path(m, t);
	CHECK(n >= 0);
	CHECK_EQ(fk_monitor_add_path(m, t), n); /* no duplicates */
	CHECK_EQ(fk_monitor_add_path(m, "/no/such/dir"), -ENOENT);
	CHECK_EQ(fk_monitor_nr_devices(m), (size_t)(n < 0 ? 0 : n));

	fkt_trace_start();
	CHECK_EQ(fk_monitor_sample(m, &a), 0);
	size_t opens = fkt_trace_nr("open", NULL);
	CHECK_EQ(opens, 2 + (size_t)n);
	CHECK_EQ(fkt_trace_nr("open", "/proc/meminfo"), 1);
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/f", t);
	CHECK_EQ(fkt_write_file(path, 1 << 20, 7), 0);
	CHECK_EQ(fk_monitor_sample(m, &b), 0);
	CHECK_EQ(fkt_trace_nr("open", NULL), opens); /* reread, not reopened */
	fkt_trace_stop();

	CHECK(a.mem.mem_total_kb > 0);
	CHECK(b.time_ns >= a.time_ns);
	CHECK(a.realtime_ns > 0);
	CHECK_EQ(a.nr_devices, (size_t)n);
	for (size_t i = 0; i < a.nr_devices; i++) {
		CHECK(a.dev[i].nr_fields >= 11);
		CHECK(b.dev[i].write_ios >= a.dev[i].write_ios);
		CHECK(b.dev[i].write_sectors >= a.dev[i].write_sectors);
	}
	for (int i = 0; i < n; i++)
		fprintf(stderr, "watching %s (%u:%u) writes %llu\n",
			fk_monitor_device(m, (size_t)i)->name,
			fk_monitor_device(m, (size_t)i)->major,
			fk_monitor_device(m, (size_t)i)->minor,
			(unsigned long long)b.dev[i].write_ios);
	if (n > 0) {
		const struct fk_blockdev *d = fk_monitor_device(m, 0);
		snprintf(path, sizeof(path), "/sys/block/%s/stat", d->name);
		CHECK(access(path, R_OK) == 0);
	}
	CHECK(fk_monitor_device(m, (size_t)n) == NULL);

	/* an injected EACCES on /proc/vmstat: the rest is still sampled */
	fk_monitor_destroy(m);
	CHECK_EQ(fk_monitor_create(&m), 0);
	fkt_trace_start();
	fkt_fault_set("open", "/proc/vmstat", 0, -EACCES);
	CHECK_EQ(fk_monitor_sample(m, &a), -EACCES);
	CHECK(a.mem.mem_total_kb > 0);
	CHECK_EQ(fkt_fault_fired(), 1);
	fkt_fault_clear();
	CHECK_EQ(fk_monitor_sample(m, &a), 0);
	fkt_trace_stop();
	fk_monitor_destroy(m);
}

static void test_env_live(void)
{
	const char *t = fkt_tmpdir();
	struct fk_monitor_env env;
	struct utsname u;
	CHECK_EQ(fk_monitor_env(t, &env), 0);
	CHECK_EQ(uname(&u), 0);
	CHECK(!strcmp(env.kernel_release, u.release));
	CHECK(env.kernel_version[0] != '\0');
	CHECK(env.dirty_ratio >= 0);
	CHECK(env.dirty_background_ratio >= 0);
	CHECK(env.dirty_expire_centisecs > 0);
	CHECK(env.fs_type[0] != '\0');
	CHECK(env.mount_options[0] != '\0');
	char real[PATH_MAX];
	CHECK(realpath(t, real) != NULL);
	size_t ml = strlen(env.mount_point);
	CHECK(!strcmp(env.mount_point, "/") ||
	      (!strncmp(env.mount_point, real, ml) &&
	       (real[ml] == '/' || real[ml] == '\0')));
	for (size_t i = 0; i < env.nr_devices; i++)
		CHECK(!strcmp(env.dev_env[i].name, env.devs[i].name));
	CHECK_EQ(fk_monitor_env("/no/such/path", &env), -ENOENT);
	CHECK(env.kernel_release[0] != '\0');
	CHECK_EQ(fk_monitor_env(NULL, &env), 0);
	CHECK_EQ(env.nr_devices, 0);
}

int main(void)
{
	const char *src = getenv("FK_SRC");
	if (src)
		snprintf(data_dir, sizeof(data_dir),
			 "%s/tests/bench/data/monitor", src);
	else {
		/* __FILE__ is absolute under CMake */
		snprintf(data_dir, sizeof(data_dir), "%s", __FILE__);
		char *slash = strrchr(data_dir, '/');
		if (slash)
			strcpy(slash, "/data/monitor");
	}
	test_meminfo();
	test_vmstat();
	test_blkstat();
	test_mountinfo();
	test_resolve_fake_sysfs();
	test_blockdev_env_fake();
	test_sampler_live();
	test_env_live();
	return fkt_done();
}
