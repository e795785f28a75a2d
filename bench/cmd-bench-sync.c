// SPDX-License-Identifier: MIT
/*
 * cmd-bench-sync.c - "flushkit bench sync": the sync(2) timing study
 * (docs/bench-sync.md).
 *
 * The 2011 study of sync(2) on Linux (the sync livelock and
 * "sync should only wait for its own data" discussions) timed sync with
 * nothing to write, with small files being created, and with one large
 * file being written, on 1, 2 and 4 file systems, and marked each
 * difference +/-/0 by two standard deviations.  This does the same for
 * five ways to make data durable (--methods): sync(2), one syncfs(2) per
 * file system, flushkit's two-pass tree sync (fk_tree_sync,
 * FK_SYNC_TWOPASS) over the written trees, and "base" and "patched": the
 * orders of sync(2) before and after the study's series, emulated on
 * our file systems in user space (do_sync_base below).
 *
 * For each file system type and count: disks of --device (a lab disk
 * per file system, or a native loop device on a sparse image), mkfs.TYPE,
 * mount; then
 * --runs times, for each method (the order rotating from run to run):
 *   1. empty: --empty-syncs calls with nothing to write, total time;
 *   2. small: per file system a writer process creating 40 KB files,
 *      sleep 3 s, then time one sync while the writers go on;
 *   3. big: per file system a writer process writing one large file,
 *      sleep 5 s, then time one sync while the writers go on.
 * Writers are killed after the sync, their files removed and everything
 * synced (untimed) before the next test.  Then umount, loop detach, and
 * the images removed: also after an error, SIGINT, SIGTERM, SIGHUP (which
 * stop the benchmark at the next step).
 *
 * The file systems are disks of bench/lib/disk.h (a lab disk of the
 * --device model, or a native loop device; mkfs.* as a child with a
 * fixed argument array, mount(2)).  Four file systems sit two to a disk,
 * as the 2011 study had them: on a lab device two disks, each holding
 * two file systems on parts of its image that share its one model
 * (disk_create_part); native disks have nothing to share.
 *
 * Results: a table per type and count on stdout, and one result file per
 * (type, count, method) with a "run" line per run and a "summary" line,
 * for "flushkit compare" and "flushkit report".
 */
#include "child.h"
#include "cli.h"
#include "disk.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FS 4
#define MAX_TYPES 8
#define NR_METHODS 5
#define NR_TESTS 3
#define SMALL_FILE_BYTES (40 * 1024)
#define CHUNK_BYTES (1024 * 1024)

enum { M_SYNC, M_SYNCFS, M_FLUSHKIT, M_BASE, M_PATCHED };
static const char *const method_names[NR_METHODS] = {
    "sync", "syncfs", "flushkit", "base", "patched"};
static const char *const method_titles[NR_METHODS] = {
    "sync(2)", "syncfs", "flushkit sync", "BASE order", "PATCHED order"};
static const char *const test_keys[NR_TESTS] = {"empty_sync_total_s",
						"small_sync_s", "big_sync_s"};

struct fsinst {
	struct disk d;
	const char *mnt;
	char data[1100];
};

struct opts {
	const char *types[MAX_TYPES];
	int nr_types;
	uint64_t counts[3];
	int nr_counts;
	uint64_t runs, empty_syncs, image_bytes, big_bytes, small_limit_bytes;
	double sleep_scale;
	const char *dir, *results;
	int no_results;
	unsigned methods; /* --methods: bit 1 << M_* */
	struct disk_profile device;
};

/* What one writer child has written, in shared memory. */
struct wstat {
	volatile uint64_t bytes, files;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	return (double)fk_now_ns() / 1e9;
}

/* Sleep @s seconds, returning early when stopped. */
static void sleep_s(double s)
{
	double end = now_s() + s;
	while (!stop) {
		double left = end - now_s();
		if (left <= 0)
			break;
		struct timespec ts = {(time_t)left,
				      (long)((left - floor(left)) * 1e9)};
		nanosleep(&ts, NULL);
	}
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	if (ftw->level > 0)
		remove(path);
	return 0;
}

/* Remove everything below @dir (not @dir itself). */
static void empty_dir(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static int data_dir(struct fsinst *f);

/* The file system @type number @i of a run: a disk (disk.h) in @base of
 * device @prof, or (@host not NULL) part @k of 2 of that lab disk, with
 * a data directory on it. */
static int fs_setup(struct fsinst *f, const char *base, const char *type, int i,
		    uint64_t image_bytes, const struct disk_profile *prof,
		    struct disk *host, unsigned k)
{
	char name[64];
	snprintf(name, sizeof(name), "%s-%d", type, i);
	/* A part: its loop device only; part 1 makes both file systems
	 * (disk_parts_make_fs: mkfs.btrfs refuses part 1 once part 0 is
	 * mounted). */
	int r = host ? disk_create_part(&f->d, host, k, 2, base, name, NULL)
		     : disk_create(&f->d, base, name, type, image_bytes, prof);
	if (r)
		return r;
	if (host && k == 0)
		return 0;
	if (host) {
		struct disk *const parts[2] = {&f[-1].d, &f->d};
		r = disk_parts_make_fs(parts, 2, type);
		if (!r)
			r = data_dir(f - 1);
		if (r)
			return r;
	}
	return data_dir(f);
}

/* The data directory DISK/data of file system @f, mounted. */
static int data_dir(struct fsinst *f)
{
	f->mnt = f->d.mnt;
	snprintf(f->data, sizeof(f->data), "%s/data", f->mnt);
	if (mkdir(f->data, 0700)) {
		cli_error("mkdir '%s': %s", f->data, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Undo whatever fs_setup did.  Returns 0 or -EIO if something stays. */
static int fs_teardown(struct fsinst *f)
{
	return disk_destroy(&f->d) ? -EIO : 0;
}

/* A writer child: small files of SMALL_FILE_BYTES, or one big file of
 * @big_bytes, in @dir, up to @limit_bytes; then it waits to be killed. */
static void writer(const char *dir, int big, uint64_t big_bytes,
		   uint64_t limit_bytes, struct wstat *ws)
{
	static char buf[CHUNK_BYTES];
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	/* A killed benchmark takes its writers along: they would hold
	 * its file systems busy (the next start's cleanup). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(buf, 0x5a, sizeof(buf));
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		_exit(1);
	if (big) {
		int fd = openat(dfd, "big",
				O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		while (fd >= 0 && ws->bytes < big_bytes) {
			ssize_t w = write(fd, buf, sizeof(buf));
			if (w <= 0)
				break;
			ws->bytes += (uint64_t)w;
		}
	} else {
		char name[32];
		while (ws->bytes + SMALL_FILE_BYTES <= limit_bytes) {
			snprintf(name, sizeof(name), "f%08llu",
				 (unsigned long long)ws->files);
			int fd = openat(dfd, name,
					O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
					0600);
			if (fd < 0)
				break;
			ssize_t w = write(fd, buf, SMALL_FILE_BYTES);
			close(fd);
			if (w != SMALL_FILE_BYTES)
				break;
			ws->bytes += (uint64_t)w;
			ws->files++;
		}
	}
	for (;;)
		pause();
}

/*
 * "base": sys_sync as it was before the 2011 series (fs/sync.c of Linux
 * 3.1), the study's BASE kernel:
 *   wakeup_flusher_threads(0);               every bdi, WB_SYNC_NONE
 *   for each super block in turn             sync_filesystems(0)
 *       writeback_inodes_sb(sb)              WB_SYNC_NONE, no wait for I/O
 *       ->sync_fs(sb, 0), __sync_blockdev(bdev, 0)
 *   for each super block in turn             sync_filesystems(1)
 *       sync_inodes_sb(sb)                   WB_SYNC_ALL, waits
 *       ->sync_fs(sb, 1), __sync_blockdev(bdev, 1)
 * (PATCHED, today's sync(2): one WB_SYNC_ALL pass over every super
 * block, then ->sync_fs nowait on all, then wait on all, then the block
 * devices.)  User space on our file systems only, in their order:
 *   pass 1, per file system: SYNC_FILE_RANGE_WRITE on every regular file
 *       (WB_SYNC_NONE writeback of its dirty pages since Linux 5.2, as
 *       writeback_inodes_sb's per inode); ->sync_fs(sb, 0) and the
 *       block device's nowait flush have no system call and are left out;
 *   pass 2, per file system: syncfs(2) (sync_filesystem: a WB_SYNC_NONE
 *       pass, ->sync_fs nowait, sync_inodes_sb, ->sync_fs wait, the block
 *       device: BASE's second pass for that super block, preceded by a
 *       repeat of its first).
 * "patched": the series' order (today's sync(2)) on our file systems
 * only, for a machine where sync(2) itself would also sync everyone
 * else's file systems:
 *   pass 1, per file system: SYNC_FILE_RANGE_WAIT_BEFORE | WRITE |
 *       WAIT_AFTER on every regular file (WB_SYNC_ALL writeback, waited
 *       for: sync_inodes_sb's pass, with no WB_SYNC_NONE pass before);
 *   pass 2, per file system: syncfs(2) (its page passes find nothing
 *       left: ->sync_fs nowait and wait, the block device).
 * Not emulated: wakeup_flusher_threads over every bdi (asynchronous, and
 * the other file systems of this machine are not the study's), the
 * inode metadata writeback of pass 1, quota sync, and PATCHED's
 * ->sync_fs nowait of every super block before the first wait.
 */
static const char *base_err_path;
static int base_err;

static unsigned base_flags;

static int base_start_one(const char *path, const struct stat *sb, int flag,
			  struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag != FTW_F)
		return 0;
	int fd = open(path, O_RDONLY | O_NOATIME | O_CLOEXEC);
	if (fd < 0)
		return 0; /* a file gone or unreadable: syncfs covers it */
	if (sync_file_range(fd, 0, 0, base_flags)) {
		base_err = -errno;
		base_err_path = path;
	}
	close(fd);
	return base_err ? 1 : 0;
}

static int do_sync_base(struct fsinst *fs, int nr, int patched)
{
	base_flags = patched
			 ? SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			       SYNC_FILE_RANGE_WAIT_AFTER
			 : SYNC_FILE_RANGE_WRITE;
	for (int i = 0; i < nr; i++) {
		base_err = 0;
		nftw(fs[i].mnt, base_start_one, 16, FTW_PHYS | FTW_MOUNT);
		if (base_err) {
			cli_error("sync_file_range(%s) '%s': %s",
				  patched ? "WAIT_BEFORE|WRITE|WAIT_AFTER"
					  : "WRITE",
				  base_err_path, strerror(-base_err));
			return base_err;
		}
	}
	for (int i = 0; i < nr; i++) {
		int fd = open(fs[i].mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || syncfs(fd)) {
			int e = errno;
			cli_error("syncfs '%s': %s", fs[i].mnt, strerror(e));
			if (fd >= 0)
				close(fd);
			return -e;
		}
		close(fd);
	}
	return 0;
}

static int do_sync(int method, struct fsinst *fs, int nr)
{
	if (method == M_BASE || method == M_PATCHED)
		return do_sync_base(fs, nr, method == M_PATCHED);
	if (method == M_SYNC) {
		sync();
		return 0;
	}
	if (method == M_SYNCFS) {
		for (int i = 0; i < nr; i++) {
			int fd =
			    open(fs[i].mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0 || syncfs(fd)) {
				int e = errno;
				cli_error("syncfs '%s': %s", fs[i].mnt,
					  strerror(e));
				if (fd >= 0)
					close(fd);
				return -e;
			}
			close(fd);
		}
		return 0;
	}
	const char *paths[MAX_FS];
	for (int i = 0; i < nr; i++)
		paths[i] = fs[i].data;
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.sync_method = FK_SYNC_TWOPASS;
	o.report = cli_report_path;
	int err = fk_tree_sync(paths, (size_t)nr, &o, NULL);
	return err == -FK_EDEGRADED ? 0 : err;
}

/* Kill the writers, remove their files, settle. */
static void writers_stop(pid_t *pids, struct fsinst *fs, int nr)
{
	for (int i = 0; i < nr; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (int i = 0; i < nr; i++)
		if (pids[i] > 0)
			while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
				;
	for (int i = 0; i < nr; i++) {
		pids[i] = 0;
		empty_dir(fs[i].data);
	}
	sync();
}

/*
 * One test with one method.  Returns the seconds timed (NAN on error)
 * and the bytes/files the writers had written when the sync started.
 */
static double one_test(const struct opts *op, int test, int method,
		       struct fsinst *fs, int nr, struct wstat *ws,
		       uint64_t *bytes, uint64_t *files)
{
	pid_t pids[MAX_FS] = {0};
	double t;
	int err = 0;

	*bytes = *files = 0;
	if (test == 0) {
		sync();
		t = now_s();
		for (uint64_t i = 0; i < op->empty_syncs && !err && !stop; i++)
			err = do_sync(method, fs, nr);
		t = now_s() - t;
		return err || stop ? NAN : t;
	}
	for (int i = 0; i < nr; i++) {
		ws[i].bytes = ws[i].files = 0;
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] == 0)
			writer(fs[i].data, test == 2, op->big_bytes,
			       op->small_limit_bytes, &ws[i]);
		if (pids[i] < 0) {
			cli_error("fork: %s", strerror(errno));
			writers_stop(pids, fs, nr);
			return NAN;
		}
	}
	sleep_s((test == 1 ? 3.0 : 5.0) * op->sleep_scale);
	for (int i = 0; i < nr; i++) {
		*bytes += ws[i].bytes;
		*files += ws[i].files;
	}
	t = now_s();
	if (!stop)
		err = do_sync(method, fs, nr);
	t = now_s() - t;
	writers_stop(pids, fs, nr);
	return err || stop ? NAN : t;
}

static struct json_object *
settings_json(const struct opts *op, const char *type, int count, int method)
{
	struct json_object *s = json_object_new_object();
	json_object_object_add(s, "bench", json_object_new_string("sync"));
	json_object_object_add(s, "fs", json_object_new_string(type));
	json_object_object_add(s, "fs_count", json_object_new_int(count));
	json_object_object_add(s, "device",
			       json_object_new_string(op->device.name));
	json_object_object_add(s, "method",
			       json_object_new_string(method_names[method]));
	json_object_object_add(s, "runs",
			       json_object_new_int64((int64_t)op->runs));
	json_object_object_add(s, "empty_syncs",
			       json_object_new_int64((int64_t)op->empty_syncs));
	json_object_object_add(s, "small_file_bytes",
			       json_object_new_int(SMALL_FILE_BYTES));
	json_object_object_add(
	    s, "small_limit_bytes",
	    json_object_new_int64((int64_t)op->small_limit_bytes));
	json_object_object_add(s, "big_bytes",
			       json_object_new_int64((int64_t)op->big_bytes));
	json_object_object_add(s, "image_bytes",
			       json_object_new_int64((int64_t)op->image_bytes));
	json_object_object_add(s, "sleep_scale",
			       results_json_double(op->sleep_scale, 3));
	return s;
}

/* Run every test of one file system type and count; print its table. */
static int bench_one(const struct opts *op, const char *base, const char *type,
		     int count, struct wstat *ws)
{
	struct fsinst fs[MAX_FS];
	struct result_file *rf[NR_METHODS] = {NULL};
	double *v[NR_METHODS][NR_TESTS];
	int err = 0;
	size_t nv = 0; /* complete runs */

	/* Four file systems sit two to a disk (as the 2011 study had them):
	 * on a lab device, two disks of twice the image, two file systems
	 * on each, sharing its model. */
	struct disk hosts[2];
	int nr_hosts = count == 4 && disk_profile_is_lab(&op->device) ? 2 : 0;
	memset(hosts, 0, sizeof(hosts));
	memset(fs, 0, sizeof(fs));
	memset(v, 0, sizeof(v));
	for (int m = 0; m < NR_METHODS; m++)
		for (int t = 0; t < NR_TESTS; t++) {
			v[m][t] = calloc(op->runs, sizeof(double));
			if (!v[m][t])
				err = -ENOMEM;
		}
	fprintf(stderr, "bench sync: %s x %d: setting up\n", type, count);
	for (int h = 0; h < nr_hosts && !err && !stop; h++) {
		char name[64];
		snprintf(name, sizeof(name), "%s-disk%d", type, h);
		err = disk_create(&hosts[h], base, name, NULL,
				  2 * op->image_bytes, &op->device);
	}
	for (int i = 0; i < count && !err && !stop; i++)
		err = fs_setup(&fs[i], base, type, i, op->image_bytes,
			       &op->device, nr_hosts ? &hosts[i / 2] : NULL,
			       (unsigned)i % 2);
	const char *paths[MAX_FS];
	for (int i = 0; i < count; i++)
		paths[i] = fs[i].data;
	for (int m = 0; m < NR_METHODS && !err && !stop && !op->no_results;
	     m++) {
		if (!(op->methods & (1u << m)))
			continue;
		char name[64];
		snprintf(name, sizeof(name), "sync-%s-%d-%s", type, count,
			 method_names[m]);
		err = results_open(op->results, name, &rf[m]);
		if (err) {
			cli_error("open '%s': %s",
				  op->results ? op->results : "results",
				  strerror(-err));
			break;
		}
		results_write(rf[m], "settings",
			      settings_json(op, type, count, m));
		results_env(rf[m], paths, (size_t)count);
		results_reset_clock(rf[m]);
	}

	for (uint64_t r = 0; r < op->runs && !err && !stop; r++) {
		for (int k = 0; k < NR_METHODS && !err && !stop; k++) {
			int m = (int)((k + r) % NR_METHODS);
			if (!(op->methods & (1u << m)))
				continue;
			struct json_object *line = json_object_new_object();
			json_object_object_add(
			    line, "run", json_object_new_int64((int64_t)r + 1));
			for (int t = 0; t < NR_TESTS && !stop; t++) {
				uint64_t bytes, files;
				fprintf(stderr,
					"bench sync: %s x %d, run %llu/%llu,"
					" %s, %s\n",
					type, count, (unsigned long long)r + 1,
					(unsigned long long)op->runs,
					method_titles[m], test_keys[t]);
				double s = one_test(op, t, m, fs, count, ws,
						    &bytes, &files);
				if (isnan(s) && !stop) {
					err = -EIO;
					break;
				}
				v[m][t][r] = s;
				json_object_object_add(
				    line, test_keys[t],
				    results_json_double(s, 6));
				if (t == 1) {
					json_object_object_add(
					    line, "small_files_at_sync",
					    json_object_new_int64(
						(int64_t)files));
					json_object_object_add(
					    line, "small_mb_at_sync",
					    results_json_double(
						(double)bytes / 1048576, 1));
				} else if (t == 2)
					json_object_object_add(
					    line, "big_mb_at_sync",
					    results_json_double(
						(double)bytes / 1048576, 1));
			}
			if (rf[m] && !stop && !err)
				results_write(rf[m], "run", line);
			else
				json_object_put(line);
		}
		if (!err && !stop)
			nv = r + 1;
	}

	/* The table, and the summary lines; markers against sync(2), or
	 * the first method given when it is not among them. */
	int m0 = 0;
	while (m0 < NR_METHODS - 1 && !(op->methods & (1u << m0)))
		m0++;
	struct fk_stats_summary s[NR_METHODS][NR_TESTS];
	for (int m = 0; m < NR_METHODS; m++)
		for (int t = 0; t < NR_TESTS; t++)
			fk_stats_summarize(v[m][t], nv, &s[m][t]);
	if (nv) {
		char devdesc[256];
		disk_profile_describe(&op->device, devdesc, sizeof(devdesc));
		printf("\n%s, %d file system%s%s, %zu run%s (marker: against "
		       "%s)\ndevice %s\n",
		       type, count, count > 1 ? "s" : "",
		       nr_hosts ? ", two to a disk" : "", nv, nv > 1 ? "s" : "",
		       method_titles[m0], devdesc);
		printf("%-22s", "");
		for (int m = 0; m < NR_METHODS; m++)
			if (op->methods & (1u << m))
				printf("  %19s%s", method_titles[m],
				       m != m0 ? "    " : "");
		printf("\n%-22s", "test (seconds)");
		for (int m = 0; m < NR_METHODS; m++)
			if (op->methods & (1u << m))
				printf("  %9s %9s%s", "AVG", "STDDEV",
				       m != m0 ? "    " : "");
		printf("\n");
		for (int t = 0; t < NR_TESTS; t++) {
			char label[40];
			if (t == 0)
				snprintf(label, sizeof(label),
					 "empty, %llu syncs",
					 (unsigned long long)op->empty_syncs);
			else
				snprintf(label, sizeof(label), "%s",
					 t == 1 ? "small files" : "big file");
			printf("%-22s", label);
			for (int m = 0; m < NR_METHODS; m++) {
				if (!(op->methods & (1u << m)))
					continue;
				printf("  %9.4f %9.4f", s[m][t].mean,
				       s[m][t].stddev);
				if (m != m0)
					printf(" (%c)",
					       fk_stats_compare(
						   &s[m0][t], &s[m][t], NULL));
			}
			printf("\n");
		}
		fflush(stdout);
	}
	for (int m = 0; m < NR_METHODS; m++) {
		if (!rf[m])
			continue;
		struct json_object *sum = json_object_new_object();
		json_object_object_add(sum, "runs",
				       json_object_new_int64((int64_t)nv));
		for (int t = 0; t < NR_TESTS; t++) {
			char key[64];
			json_object_object_add(
			    sum, test_keys[t],
			    results_json_double(nv ? s[m][t].mean : NAN, 6));
			snprintf(key, sizeof(key), "%s_stddev", test_keys[t]);
			json_object_object_add(
			    sum, key,
			    results_json_double(nv > 1 ? s[m][t].stddev : NAN,
						6));
		}
		results_write(rf[m], "summary", sum);
		fprintf(stderr, "result file: %s\n", results_path(rf[m]));
		int e = results_close(rf[m]);
		if (e && !err) {
			cli_error("write result file: %s", strerror(-e));
			err = e;
		}
	}
	for (int i = count - 1; i >= 0; i--)
		if (fs_teardown(&fs[i]) && !err)
			err = -EIO;
	for (int h = nr_hosts - 1; h >= 0; h--)
		if (disk_destroy(&hosts[h]) && !err)
			err = -EIO;
	for (int m = 0; m < NR_METHODS; m++)
		for (int t = 0; t < NR_TESTS; t++)
			free(v[m][t]);
	return err;
}

static void usage(FILE *f)
{
	fprintf(
	    f, "usage: flushkit bench sync [OPTIONS]   (root only)\n\n"
	       "Time sync(2), syncfs per file system and flushkit's two-pass "
	       "tree sync (or\nthe pre-2011 order of sync, emulated) on 1, "
	       "2 or 4 fresh file systems on loop\ndevices: with nothing to "
	       "write, while small files are created, and while a\nbig "
	       "file is written.\n\n"
	       "  --fs=LIST           file system types (default "
	       "ext4,xfs,btrfs)\n"
	       "  --fs-count=LIST     file systems at once: 1, 2, 4 "
	       "(default 1,2,4)\n"
	       "  --runs=N            runs (default 10)\n"
	       "  --methods=LIST      of sync, syncfs, flushkit, base, patched "
	       "(the pre- and\n"
	       "                      post-2011 orders of sync on these file "
	       "systems: per file\n"
	       "                      system writeback started (base) or "
	       "written and waited\n"
	       "                      for (patched), then per file system "
	       "syncfs); default\n"
	       "                      sync,syncfs,flushkit\n"
	       "  --empty-syncs=N     syncs with nothing to write (default "
	       "200)\n"
	       "  --big-size=SIZE     the big file (default 2G)\n"
	       "  --image-size=SIZE   each image file, sparse (default "
	       "big-size + 1G)\n"
	       "  --small-limit=SIZE  bytes each small-file writer writes "
	       "at most\n"
	       "                      (default a quarter of the image)\n"
	       "  --sleep-scale=F     multiply the 3 s and 5 s sleeps "
	       "(default 1)\n"
	       "  --dir=DIR           images and mount points go in a new "
	       "directory there\n"
	       "                      (default /var/tmp)\n"
	       "  --results=DIR       result files (default results)\n"
	       "  --no-results        write no result files\n"
	       "  --device=DEVICE     native (default: loop devices on "
	       "images in --dir),\n"
	       "                      hdd, ssd, nvme, ram, throttle:BPS:IOPS "
	       "(or BPS:IOPS):\n"
	       "                      lab disks of that model, "
	       ",slowdown=K ,no-write-cache\n"
	       "                      (docs/disk.md)\n");
}

static int parse_types(char *s, struct opts *op)
{
	char *save = NULL;
	op->nr_types = 0;
	for (char *t = strtok_r(s, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (strcmp(t, "ext4") && strcmp(t, "ext3") &&
		    strcmp(t, "xfs") && strcmp(t, "btrfs"))
			return -EINVAL;
		if (op->nr_types == MAX_TYPES)
			return -EINVAL;
		op->types[op->nr_types++] = t;
	}
	return op->nr_types ? 0 : -EINVAL;
}

static int parse_methods(char *s, struct opts *op)
{
	char *save = NULL;
	op->methods = 0;
	for (char *t = strtok_r(s, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		int m = 0;
		while (m < NR_METHODS && strcmp(t, method_names[m]))
			m++;
		if (m == NR_METHODS)
			return -EINVAL;
		op->methods |= 1u << m;
	}
	return op->methods ? 0 : -EINVAL;
}

static int parse_counts(char *s, struct opts *op)
{
	uint64_t v[3], dup;
	int n;
	op->nr_counts = 0;
	if (cli_parse_u64_list(s, v, 3, &n, &dup))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		if (v[i] != 1 && v[i] != 2 && v[i] != 4)
			return -EINVAL;
		op->counts[op->nr_counts++] = v[i];
	}
	return 0;
}

int cmd_bench_sync(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"fs", required_argument, NULL, 'f'},
	    {"fs-count", required_argument, NULL, 'n'},
	    {"runs", required_argument, NULL, 'r'},
	    {"methods", required_argument, NULL, 'm'},
	    {"empty-syncs", required_argument, NULL, 'e'},
	    {"big-size", required_argument, NULL, 'b'},
	    {"image-size", required_argument, NULL, 'i'},
	    {"small-limit", required_argument, NULL, 'l'},
	    {"sleep-scale", required_argument, NULL, 's'},
	    {"dir", required_argument, NULL, 'd'},
	    {"results", required_argument, NULL, 'o'},
	    {"no-results", no_argument, NULL, 'N'},
	    {"device", required_argument, NULL, 'D'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct opts op;
	char types_default[] = "ext4,xfs,btrfs", counts_default[] = "1,2,4";
	int c;

	memset(&op, 0, sizeof(op));
	disk_profile_parse("native", &op.device);
	op.runs = 10;
	op.empty_syncs = 200;
	op.big_bytes = 2ull << 30;
	op.sleep_scale = 1;
	op.dir = "/var/tmp";
	parse_types(types_default, &op);
	parse_counts(counts_default, &op);
	op.methods = 1u << M_SYNC | 1u << M_SYNCFS | 1u << M_FLUSHKIT;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lopts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'f':
			bad = parse_types(optarg, &op);
			break;
		case 'n':
			bad = parse_counts(optarg, &op);
			break;
		case 'r':
			bad = cli_parse_u64(optarg, &op.runs) || !op.runs ||
			      op.runs > 100000;
			break;
		case 'm':
			bad = parse_methods(optarg, &op);
			break;
		case 'e':
			bad = cli_parse_u64(optarg, &op.empty_syncs);
			break;
		case 'b':
			bad = cli_parse_size(optarg, &op.big_bytes) ||
			      !op.big_bytes;
			break;
		case 'i':
			bad = cli_parse_size(optarg, &op.image_bytes) ||
			      op.image_bytes < (64u << 20);
			break;
		case 'l':
			bad = cli_parse_size(optarg, &op.small_limit_bytes) ||
			      op.small_limit_bytes < SMALL_FILE_BYTES;
			break;
		case 's':
			bad = cli_parse_decimal(optarg, &op.sleep_scale) ||
			      op.sleep_scale > 100;
			break;
		case 'd':
			op.dir = optarg;
			break;
		case 'o':
			op.results = optarg;
			break;
		case 'N':
			op.no_results = 1;
			break;
		case 'D':
			if (disk_profile_arg("bench sync", "--device", optarg,
					     &op.device))
				return FK_EXIT_USAGE;
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("bench sync", c, argv, lopts);
		}
		if (bad) {
			char name[32] = "";
			for (int i = 0; lopts[i].name; i++)
				if (lopts[i].val == c)
					snprintf(name, sizeof(name), "--%s",
						 lopts[i].name);
			return cli_bad_value("bench sync", name, optarg, NULL);
		}
	}
	if (optind != argc)
		return cli_usage_error("bench sync", "extra operand '%s'",
				       argv[optind]);
	if (!op.image_bytes)
		op.image_bytes = op.big_bytes + (1ull << 30);
	/* The small-file writers stop at a quarter of the image (or at
	 * --small-limit, which cannot be more). */
	if (!op.small_limit_bytes || op.small_limit_bytes > op.image_bytes / 4)
		op.small_limit_bytes = op.image_bytes / 4;
	if (geteuid() != 0) {
		cli_error("bench sync needs root: it creates loop devices, "
			  "file systems and mounts");
		return FK_EXIT_FAILURE;
	}
	{
		/* Lab disks whose maker was killed (disk.h). */
		int n = disk_cleanup_stale();
		if (n > 0)
			cli_warn("removed %d leftovers of a killed run", n);
	}
	for (int i = 0; i < op.nr_types; i++) {
		char mkfs[32];
		snprintf(mkfs, sizeof(mkfs), "mkfs.%s", op.types[i]);
		if (!disk_in_path(mkfs)) {
			cli_error("'%s' not found in PATH (Debian: %s)", mkfs,
				  !strcmp(op.types[i], "ext4") ? "e2fsprogs"
				  : !strcmp(op.types[i], "xfs")
				      ? "xfsprogs"
				      : "btrfs-progs");
			return FK_EXIT_FAILURE;
		}
	}

	char base[4096];
	snprintf(base, sizeof(base), "%s/flushkit-bench-sync-XXXXXX", op.dir);
	if (strlen(op.dir) > 2000 || !mkdtemp(base)) {
		cli_error("mkdtemp '%s': %s", base, strerror(errno));
		return FK_EXIT_FAILURE;
	}
	struct wstat *ws =
	    mmap(NULL, sizeof(*ws) * MAX_FS, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ws == MAP_FAILED) {
		cli_error("mmap: %s", strerror(errno));
		rmdir(base);
		return FK_EXIT_FAILURE;
	}

	struct stop_signals saved;
	stop_signals_catch(&saved, on_signal, 0);
	stop = 0;

	int err = 0;
	for (int t = 0; t < op.nr_types && !err && !stop; t++)
		for (int n = 0; n < op.nr_counts && !err && !stop; n++)
			err = bench_one(&op, base, op.types[t],
					(int)op.counts[n], ws);

	munmap(ws, sizeof(*ws) * MAX_FS);
	if (rmdir(base))
		cli_warn("rmdir '%s': %s (left behind)", base, strerror(errno));
	stop_signals_restore(&saved);
	if (stop) {
		cli_error("interrupted; loop devices, mounts and images "
			  "removed");
		return FK_EXIT_FAILURE;
	}
	return err ? FK_EXIT_FAILURE : FK_EXIT_OK;
}
