// SPDX-License-Identifier: MIT
/*
 * test-fsync-batch-order.c - "flushkit bench fsmark" run in-process
 * with the syscall table traced:
 *
 *  - no fsync (nor writeback hint) of a file is issued before every
 *    write(2) of that file has returned, and no write follows it: for
 *    -S 1, batch (threads, sequential, io_uring), twopass and async
 *    (submit/reap: threads, sequential, io_uring); each file is fsynced
 *    exactly once;
 *  - one injected EIO among many fsyncs (through the table for threads,
 *    at the ring for io_uring): the other files are still fsynced and
 *    the command fails (exit 1);
 *  - io_uring refused at setup: --sync-io=auto runs on threads;
 *  - usage errors exit 2.
 *
 * The command's own calls (cli_sys: fs_mark's create, write, fsync,
 * close) are routed through the library's table (fk_sys), so the one
 * trace and the faults below see the tool's calls and the library's
 * batch alike.
 */
#include "cli-sys.h"
#include "cli.h"
#include "fktest.h"
#include "fsync_batch.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 1024

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static struct ino_state {
	ino_t ino;
	unsigned writes_busy; /* write() calls not yet returned */
	unsigned writes_done;
	unsigned syncs; /* fsync issued */
	unsigned hints;
} inos[MAX_FILES];
static size_t nr_inos;
static unsigned violations, uring_submits;

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_fsync)(int);
static int (*real_sfr)(int, off_t, off_t, unsigned int);

/* Called with lk held. */
static struct ino_state *state_of(int fd)
{
	struct stat st;
	if (fstat(fd, &st))
		return NULL;
	for (size_t i = 0; i < nr_inos; i++)
		if (inos[i].ino == st.st_ino)
			return &inos[i];
	if (nr_inos == MAX_FILES)
		return NULL;
	inos[nr_inos].ino = st.st_ino;
	return &inos[nr_inos++];
}

/* A flush of @fd is being issued: its writes must all have returned. */
static void check_issue(int fd, int hint)
{
	pthread_mutex_lock(&lk);
	struct ino_state *s = state_of(fd);
	if (!s || s->writes_busy || !s->writes_done) {
		fprintf(stderr,
			"flush of fd %d issued with %u writes busy, "
			"%u done\n",
			fd, s ? s->writes_busy : 0, s ? s->writes_done : 0);
		violations++;
	}
	if (s && hint)
		s->hints++;
	else if (s)
		s->syncs++;
	pthread_mutex_unlock(&lk);
}

static ssize_t w_write(int fd, const void *buf, size_t len)
{
	pthread_mutex_lock(&lk);
	struct ino_state *s = state_of(fd);
	if (s && (s->syncs || s->hints)) {
		fprintf(stderr, "write to fd %d after its flush\n", fd);
		violations++;
	}
	if (s)
		s->writes_busy++;
	pthread_mutex_unlock(&lk);
	ssize_t r = real_write(fd, buf, len);
	pthread_mutex_lock(&lk);
	if (s) {
		s->writes_busy--;
		s->writes_done++;
	}
	pthread_mutex_unlock(&lk);
	return r;
}

static int w_fsync(int fd)
{
	check_issue(fd, 0);
	return real_fsync(fd);
}

static int w_sfr(int fd, off_t off, off_t len, unsigned int flags)
{
	check_issue(fd, 1);
	return real_sfr(fd, off, len, flags);
}

static void on_submit(const struct fk_fsync_req *req, size_t index)
{
	(void)index;
	check_issue(req->fd, req->op == FK_FSYNC_OP_WRITEBACK);
	pthread_mutex_lock(&lk);
	uring_submits++;
	pthread_mutex_unlock(&lk);
}

static int on_cqe(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)req;
	return index == 5 ? -EIO : res;
}

/* -S async: index is the request's slot, not its place in a run; the
 * sixth completion fails instead. */
static unsigned nr_cqes; /* the fsmark threads reap at once: atomic */
static int on_cqe_sixth(const struct fk_fsync_req *req, size_t index, int res)
{
	(void)req;
	(void)index;
	return __atomic_add_fetch(&nr_cqes, 1, __ATOMIC_RELAXED) == 6 ? -EIO
								      : res;
}

static int refuse(unsigned entries, struct io_uring *ring, unsigned flags)
{
	(void)entries;
	(void)ring;
	(void)flags;
	return -EPERM;
}

static int r_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	return fk_sys.openat(dirfd, path, flags, mode);
}

static int r_close(int fd)
{
	return fk_sys.close(fd);
}

static ssize_t r_write(int fd, const void *buf, size_t len)
{
	return fk_sys.write(fd, buf, len);
}

static int r_fsync(int fd)
{
	return fk_sys.fsync(fd);
}

static void route_cli_sys(void)
{
	cli_sys.openat = r_openat;
	cli_sys.close = r_close;
	cli_sys.write = r_write;
	cli_sys.fsync = r_fsync;
}

static void trace_on(void)
{
	nr_inos = 0;
	memset(inos, 0, sizeof(inos));
	violations = 0;
	uring_submits = 0;
	fkt_trace_start();
	real_write = fk_sys.write;
	real_fsync = fk_sys.fsync;
	real_sfr = fk_sys.sync_file_range;
	fk_sys.write = w_write;
	fk_sys.fsync = w_fsync;
	fk_sys.sync_file_range = w_sfr;
}

static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	struct dirent *de;
	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static char out_path[4200];

/* Run the command with its stdout in out_path; returns its status. */
static int run(const char *dir, const char *args)
{
	char buf[1024], *argv[64];
	int argc = 0;
	snprintf(buf, sizeof(buf), "fsmark --no-results -d %s %s", dir, args);
	for (char *p = strtok(buf, " "); p && argc < 63; p = strtok(NULL, " "))
		argv[argc++] = p;
	argv[argc] = NULL;
	fflush(stdout);
	int saved = dup(1);
	int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 1);
	close(fd);
	int rc = cmd_bench_fsmark(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	return rc;
}

static const char *newdir(void)
{
	static char d[4200];
	static int n;
	snprintf(d, sizeof(d), "%s/run%d", fkt_tmpdir(), n++);
	CHECK_EQ(mkdir(d, 0700), 0);
	return d;
}

/* Each of @files files written, then flushed once, never early. */
static void check_order(const char *what, size_t files, int hints)
{
	size_t synced = 0;
	for (size_t i = 0; i < nr_inos; i++) {
		if (!inos[i].writes_done)
			continue; /* the directory, stdout, ... */
		synced++;
		CHECK_EQ(inos[i].syncs, 1);
		CHECK_EQ(inos[i].hints, hints);
	}
	CHECK_EQ(synced, files);
	if (violations)
		fprintf(stderr, "%s: %u ordering violations\n", what,
			violations);
	CHECK_EQ(violations, 0);
}

int main(void)
{
	snprintf(out_path, sizeof(out_path), "%s/out.txt", fkt_tmpdir());
	route_cli_sys();
	const char *common = "-t 2 -n 40 -s 10000 -w 4096 -k";
	char args[256];
	const char *d;
	int uring_ok = 0;
	struct fk_fsync_batch *b;
	struct fk_fsync_batch_opts o;
	fk_fsync_batch_opts_init(&o);
	o.sync_io = FK_SYNC_IO_URING;
	if (fk_fsync_batch_create(&o, &b) == 0) {
		uring_ok = 1;
		fk_fsync_batch_destroy(b);
	} else {
		fprintf(stderr, "io_uring refused: its cases are skipped\n");
	}

	static const char *const modes[] = {
	    "-S 1",
	    "-S batch --sync-io=threads --queue-depth 4",
	    "-S batch --sync-io=sequential",
	    "-S twopass --sync-io=threads --queue-depth 3",
	    "-S batch --sync-io=uring --queue-depth 4",
	    "-S twopass --sync-io=uring --queue-depth 8",
	    "-S async --sync-io=threads --jobs 4",
	    "-S async --sync-io=sequential",
	    "-S async --sync-io=uring --jobs 4",
	};
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		int uring = strstr(modes[m], "uring") != NULL;
		if (uring && !uring_ok)
			continue;
		d = newdir();
		snprintf(args, sizeof(args), "%s %s", common, modes[m]);
		trace_on();
		if (uring)
			fk_uring_submit_hook = on_submit;
		CHECK_EQ(run(d, args), 0);
		fkt_trace_stop();
		fk_uring_hooks_reset();
		fprintf(stderr, "checking: %s\n", modes[m]);
		if (uring) {
			/* io_uring flushes bypass fk_sys: hook counts. */
			int twopass = strstr(modes[m], "twopass") != NULL;
			CHECK_EQ(uring_submits, 80 * (twopass ? 2 : 1));
			check_order(modes[m], 80, twopass);
		} else {
			check_order(modes[m], 80,
				    strstr(modes[m], "twopass") != NULL);
		}
		CHECK_EQ(count_files(d), 80);
	}

	/* One EIO among many: the rest are fsynced, the command fails. */
	d = newdir();
	snprintf(args, sizeof(args), "%s -S batch --sync-io=threads", common);
	fkt_trace_start();
	fkt_fault_set("fsync", NULL, 7, -EIO);
	CHECK_EQ(run(d, args), 1);
	CHECK_EQ(fkt_fault_fired(), 1);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 80);
	fkt_trace_stop();
	fkt_fault_clear();
	if (uring_ok) {
		d = newdir();
		snprintf(args, sizeof(args), "%s -S batch --sync-io=uring",
			 common);
		fk_uring_cqe_hook = on_cqe;
		CHECK_EQ(run(d, args), 1);
		fk_uring_hooks_reset();
		CHECK_EQ(count_files(d), 80);
	}
	/* -S async: one EIO among many: the file is reported (stderr), the
	 * others are fsynced, all are closed, the command fails. */
	d = newdir();
	snprintf(args, sizeof(args), "%s -S async --sync-io=threads --jobs 4",
		 common);
	fkt_trace_start();
	fkt_fault_set("fsync", NULL, 7, -EIO);
	CHECK_EQ(run(d, args), 1);
	CHECK_EQ(fkt_fault_fired(), 1);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 80);
	CHECK_EQ(fkt_trace_nr("close", NULL) >= 80, 1);
	fkt_trace_stop();
	fkt_fault_clear();
	if (uring_ok) {
		d = newdir();
		snprintf(args, sizeof(args),
			 "%s -S async --sync-io=uring --jobs 4", common);
		nr_cqes = 0;
		fk_uring_cqe_hook = on_cqe_sixth;
		CHECK_EQ(run(d, args), 1);
		fk_uring_hooks_reset();
		CHECK_EQ(count_files(d), 80);
	}
	/* -S 1 with an EIO also fails, and goes on with the other files. */
	d = newdir();
	fkt_trace_start();
	fkt_fault_set("fsync", NULL, 3, -EIO);
	CHECK_EQ(run(d, "-t 1 -n 10 -s 4096 -S 1"), 1);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), 10);
	fkt_trace_stop();
	fkt_fault_clear();

	/* io_uring refused: auto runs on threads. */
	d = newdir();
	fk_uring_queue_init = refuse;
	CHECK_EQ(run(d, "-t 1 -n 10 -s 4096 -S batch --sync-io=auto"), 0);
	char *out = fkt_read_file(out_path, NULL);
	CHECK(out && strstr(out, "Sync io: threads"));
	free(out);
	CHECK_EQ(run(d, "-t 1 -n 10 -s 4096 -S batch --sync-io=uring"), 1);
	fk_uring_hooks_reset();

	/* Usage errors. */
	CHECK_EQ(run(d, "-S 9"), 2);
	CHECK_EQ(run(d, "--queue-depth 0"), 2);
	CHECK_EQ(run(d, "--sync-io=bogus"), 2);
	CHECK_EQ(run(d, "-n 0"), 2);
	CHECK_EQ(run(d, "-q"), 2);
	return fkt_done();
}
