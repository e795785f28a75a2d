// SPDX-License-Identifier: MIT
/*
 * fktest.c - shared test helpers: temp dirs, files, call tracing and
 * fault injection through the syscall table (see fktest.h).
 */
#include "fktest.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int fkt_failures;
static char tmpdir[PATH_MAX];

int fkt_done(void)
{
	return fkt_failures ? 1 : 0;
}

/* Remove everything below the directory open at @dfd (no PATH_MAX limit). */
static void rm_below(int dfd)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		int sub = openat(dirfd(d), de->d_name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (sub >= 0) {
			fchmod(sub, 0700);
			rm_below(sub);
		}
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

int fkt_rm_rf(const char *path)
{
	if (unlink(path) == 0)
		return 0;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	rm_below(fd);
	return rmdir(path) == 0 ? 0 : -errno;
}

static void cleanup_tmpdir(void)
{
	if (tmpdir[0] && !getenv("FKT_KEEP"))
		fkt_rm_rf(tmpdir);
}

const char *fkt_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");
		if (!base)
			base = "/var/tmp";
		snprintf(tmpdir, sizeof(tmpdir), "%s/fktest.XXXXXX", base);
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(1);
		}
		atexit(cleanup_tmpdir);
	}
	return tmpdir;
}

int fkt_write_file(const char *path, uint64_t len, unsigned seed)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	char buf[65536];
	uint64_t done = 0;
	uint32_t x = seed * 2654435761u + 1;
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? (size_t)(len - done)
						    : sizeof(buf);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (char)x;
		}
		if (write(fd, buf, n) != (ssize_t)n) {
			int e = -errno;
			close(fd);
			return e ? e : -EIO;
		}
		done += n;
	}
	close(fd);
	return 0;
}

char *fkt_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);
	size_t r;
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int fkt_is_root(void)
{
	return geteuid() == 0;
}

int fkt_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	if (st == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- store log capture ---- */

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char logbuf[1 << 16];
static size_t loglen;

void fkt_store_log(void *arg, const char *line)
{
	pthread_mutex_lock(&log_mu);
	size_t n = strlen(line);
	if (loglen + n + 2 < sizeof(logbuf)) {
		memcpy(logbuf + loglen, line, n);
		loglen += n;
		logbuf[loglen++] = '\n';
		logbuf[loglen] = 0;
	}
	pthread_mutex_unlock(&log_mu);
	if (arg)
		fprintf(stderr, "  store: %s\n", line);
}

int fkt_store_log_has(const char *s)
{
	pthread_mutex_lock(&log_mu);
	int r = strstr(logbuf, s) != NULL;
	pthread_mutex_unlock(&log_mu);
	return r;
}

int fkt_store_log_count(const char *s)
{
	int n = 0;
	pthread_mutex_lock(&log_mu);
	for (const char *p = logbuf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *hit = strstr(p, s);
		n += hit && hit + strlen(s) <= p + len;
		p += len + (nl ? 1 : 0);
	}
	pthread_mutex_unlock(&log_mu);
	return n;
}

char *fkt_store_log_copy(void)
{
	pthread_mutex_lock(&log_mu);
	char *p = strdup(logbuf);
	pthread_mutex_unlock(&log_mu);
	return p;
}

void fkt_store_log_clear(void)
{
	pthread_mutex_lock(&log_mu);
	loglen = 0;
	logbuf[0] = 0;
	pthread_mutex_unlock(&log_mu);
}

const char *fkt_store_log_text(void)
{
	return logbuf;
}

/* ---- tracing ---- */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fkt_call *calls;
static size_t nr_calls, alloc_calls;

static struct {
	char op[24];
	char suffix[256];
	int any_path;
	unsigned nth, seen, fired;
	int err;
	int active;
} fault;

static void fd_path(int fd, char *out, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, len - 1);
	if (n < 0)
		n = 0;
	out[n] = 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* Record a call; returns an injected error (negative) or 0 to go on. */
static int record(const char *op, int fd, const char *path, uint64_t off,
		  uint64_t len, size_t *idx)
{
	char p[512];
	if (path)
		snprintf(p, sizeof(p), "%s", path);
	else
		fd_path(fd, p, sizeof(p));
	pthread_mutex_lock(&trace_lock);
	if (nr_calls == alloc_calls) {
		alloc_calls = alloc_calls ? alloc_calls * 2 : 1024;
		calls = realloc(calls, alloc_calls * sizeof(*calls));
	}
	struct fkt_call *c = &calls[nr_calls];
	*idx = nr_calls++;
	memset(c, 0, sizeof(*c));
	snprintf(c->op, sizeof(c->op), "%s", op);
	snprintf(c->path, sizeof(c->path), "%s", p);
	c->fd = fd;
	c->off = off;
	c->len = len;
	int inject = 0;
	if (fault.active && strcmp(fault.op, op) == 0 &&
	    (fault.any_path || ends_with(p, fault.suffix))) {
		fault.seen++;
		if (fault.nth == 0 || fault.seen == fault.nth) {
			inject = fault.err;
			fault.fired++;
		}
	}
	if (inject)
		c->ret = inject;
	pthread_mutex_unlock(&trace_lock);
	return inject;
}

static void set_ret(size_t idx, long ret)
{
	pthread_mutex_lock(&trace_lock);
	calls[idx].ret = (int)ret;
	pthread_mutex_unlock(&trace_lock);
}

#define TRACED(op, fd, path, off, len, call)                                   \
	do {                                                                   \
		size_t idx_;                                                   \
		int e_ = record(op, fd, path, off, len, &idx_);                \
		if (e_)                                                        \
			return e_;                                             \
		long r_ = (long)(call);                                        \
		set_ret(idx_, r_);                                             \
		return r_;                                                     \
	} while (0)

static int t_fsync(int fd)
{
	TRACED("fsync", fd, NULL, 0, 0, fk_sys_default.fsync(fd));
}
static int t_fdatasync(int fd)
{
	TRACED("fdatasync", fd, NULL, 0, 0, fk_sys_default.fdatasync(fd));
}
static int t_sfr(int fd, off_t off, off_t len, unsigned int flags)
{
	TRACED("sync_file_range", fd, NULL, (uint64_t)off, (uint64_t)len,
	       fk_sys_default.sync_file_range(fd, off, len, flags));
}
static int t_fadvise(int fd, off_t off, off_t len, int advice)
{
	TRACED("fadvise", fd, NULL, (uint64_t)off, (uint64_t)len,
	       fk_sys_default.fadvise(fd, off, len, advice));
}
static int t_syncfs(int fd)
{
	TRACED("syncfs", fd, NULL, 0, 0, fk_sys_default.syncfs(fd));
}
static ssize_t t_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	TRACED("pwrite", fd, NULL, (uint64_t)off, len,
	       fk_sys_default.pwrite(fd, buf, len, off));
}
static ssize_t t_write(int fd, const void *buf, size_t len)
{
	TRACED("write", fd, NULL, 0, len, fk_sys_default.write(fd, buf, len));
}
static ssize_t t_cfr(int fd_in, off_t *off_in, int fd_out, off_t *off_out,
		     size_t len, unsigned int flags)
{
	TRACED("copy_file_range", fd_out, NULL,
	       off_out ? (uint64_t)*off_out : 0, len,
	       fk_sys_default.copy_file_range(fd_in, off_in, fd_out, off_out,
					      len, flags));
}
static int t_renameat(int olddirfd, const char *oldpath, int newdirfd,
		      const char *newpath)
{
	char dir[512], p[1100];
	fd_path(newdirfd, dir, sizeof(dir));
	snprintf(p, sizeof(p), "%s/%s", newdirfd == AT_FDCWD ? "." : dir,
		 newpath);
	TRACED("rename", newdirfd, p, 0, 0,
	       fk_sys_default.renameat(olddirfd, oldpath, newdirfd, newpath));
}
static int t_futimens(int fd, const struct timespec ts[2])
{
	TRACED("futimens", fd, NULL, 0, 0, fk_sys_default.futimens(fd, ts));
}
static int t_close(int fd)
{
	TRACED("close", fd, NULL, 0, 0, fk_sys_default.close(fd));
}
static int t_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	char dir[512], p[1100];
	if (path[0] == '/' || dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "%s", path);
	else {
		fd_path(dirfd, dir, sizeof(dir));
		snprintf(p, sizeof(p), "%s/%s", dir, path);
	}
	TRACED("open", -1, p, (uint64_t)flags, 0,
	       fk_sys_default.openat(dirfd, path, flags, mode));
}

void fkt_trace_start(void)
{
	pthread_mutex_lock(&trace_lock);
	nr_calls = 0;
	pthread_mutex_unlock(&trace_lock);
	fk_sys.fsync = t_fsync;
	fk_sys.fdatasync = t_fdatasync;
	fk_sys.sync_file_range = t_sfr;
	fk_sys.fadvise = t_fadvise;
	fk_sys.syncfs = t_syncfs;
	fk_sys.pwrite = t_pwrite;
	fk_sys.write = t_write;
	fk_sys.copy_file_range = t_cfr;
	fk_sys.renameat = t_renameat;
	fk_sys.close = t_close;
	fk_sys.futimens = t_futimens;
	fk_sys.openat = t_openat;
}

void fkt_trace_clear(void)
{
	pthread_mutex_lock(&trace_lock);
	nr_calls = 0;
	pthread_mutex_unlock(&trace_lock);
}

void fkt_trace_stop(void)
{
	fk_sys_reset();
}

size_t fkt_trace_count(void)
{
	pthread_mutex_lock(&trace_lock);
	size_t n = nr_calls;
	pthread_mutex_unlock(&trace_lock);
	return n;
}

const struct fkt_call *fkt_trace_get(size_t i)
{
	return i < nr_calls ? &calls[i] : NULL;
}

long fkt_trace_find(const char *op, const char *suffix, size_t from)
{
	for (size_t i = from; i < nr_calls; i++)
		if (strcmp(calls[i].op, op) == 0 &&
		    (!suffix || ends_with(calls[i].path, suffix)))
			return (long)i;
	return -1;
}

size_t fkt_trace_nr(const char *op, const char *suffix)
{
	size_t n = 0;
	for (size_t i = 0; i < nr_calls; i++)
		if (strcmp(calls[i].op, op) == 0 &&
		    (!suffix || ends_with(calls[i].path, suffix)))
			n++;
	return n;
}

void fkt_trace_dump(FILE *f)
{
	for (size_t i = 0; i < nr_calls; i++)
		fprintf(f, "%5zu %-16s %s off=%llu len=%llu ret=%d\n", i,
			calls[i].op, calls[i].path,
			(unsigned long long)calls[i].off,
			(unsigned long long)calls[i].len, calls[i].ret);
}

void fkt_fault_set(const char *op, const char *suffix, unsigned nth, int err)
{
	pthread_mutex_lock(&trace_lock);
	memset(&fault, 0, sizeof(fault));
	snprintf(fault.op, sizeof(fault.op), "%s", op);
	if (suffix)
		snprintf(fault.suffix, sizeof(fault.suffix), "%s", suffix);
	else
		fault.any_path = 1;
	fault.nth = nth;
	fault.err = err;
	fault.active = 1;
	pthread_mutex_unlock(&trace_lock);
}

void fkt_fault_clear(void)
{
	pthread_mutex_lock(&trace_lock);
	fault.active = 0;
	pthread_mutex_unlock(&trace_lock);
}

unsigned fkt_fault_fired(void)
{
	/* Under the lock record() updates it with: a checkpointer or
	 * batch thread may be injecting while the test reads it. */
	pthread_mutex_lock(&trace_lock);
	unsigned n = fault.fired;
	pthread_mutex_unlock(&trace_lock);
	return n;
}

/* ---- directory listings ---- */

struct digest {
	char **lines;
	size_t n, cap;
};

static uint64_t fnv64_file(int dfd, const char *name)
{
	uint64_t h = 1469598103934665603ull;
	unsigned char buf[65536];
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ull;
	}
	close(fd);
	return h;
}

static int digest_dir(struct digest *g, int dfd, const char *rel)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -1;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		char path[PATH_MAX], line[PATH_MAX + 128];
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(path, sizeof(path), "%s%s%s", rel, *rel ? "/" : "",
			 de->d_name);
		uint64_t sum =
		    S_ISREG(st.st_mode) ? fnv64_file(dirfd(d), de->d_name) : 0;
		/* A directory's own size and mtime change with its entries,
		 * which the entries' lines already show; keep them too. */
		snprintf(line, sizeof(line), "%s %c %o %lld %lld.%09ld %016llx",
			 path, S_ISDIR(st.st_mode) ? 'd' : 'f',
			 (unsigned)st.st_mode & 07777, (long long)st.st_size,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			 (unsigned long long)sum);
		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 64;
			g->lines = realloc(g->lines, g->cap * sizeof(char *));
		}
		g->lines[g->n++] = strdup(line);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub >= 0)
				digest_dir(g, sub, path);
		}
	}
	closedir(d);
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *fkt_dir_digest(const char *dir)
{
	struct digest g = {0};
	struct stat st;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st)) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	char top[128];
	snprintf(top, sizeof(top), ". d %o %lld %lld.%09ld\n",
		 (unsigned)st.st_mode & 07777, (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	digest_dir(&g, dfd, "");
	if (g.n)
		qsort(g.lines, g.n, sizeof(char *), cmp_line);
	size_t len = strlen(top) + 1;
	for (size_t i = 0; i < g.n; i++)
		len += strlen(g.lines[i]) + 1;
	char *out = malloc(len), *p = out;
	p += sprintf(p, "%s", top);
	for (size_t i = 0; i < g.n; i++) {
		p += sprintf(p, "%s\n", g.lines[i]);
		free(g.lines[i]);
	}
	free(g.lines);
	return out;
}

int fkt_run_cmd(int (*fn)(int, char **), char *const *argv, char **out,
		char **err)
{
	char po[PATH_MAX + 16], pe[PATH_MAX + 16];
	int argc = 0;
	while (argv[argc])
		argc++;
	snprintf(po, sizeof(po), "%s/cmd.stdout", fkt_tmpdir());
	snprintf(pe, sizeof(pe), "%s/cmd.stderr", fkt_tmpdir());
	fflush(NULL);
	int so = dup(1), se = dup(2);
	int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (so < 0 || se < 0 || fo < 0 || fe < 0) {
		fprintf(stderr, "fkt_run_cmd: %s\n", strerror(errno));
		exit(1);
	}
	dup2(fo, 1);
	dup2(fe, 2);
	int ret = fn(argc, (char **)argv);
	fflush(NULL);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	*out = fkt_read_file(po, NULL);
	*err = fkt_read_file(pe, NULL);
	if (!*out)
		*out = strdup("");
	if (!*err)
		*err = strdup("");
	return ret;
}

struct json_object *fkt_result_summary(const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	struct json_object *sum = NULL;
	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		struct json_object *o = json_tokener_parse(line), *t;
		if (o && json_object_object_get_ex(o, "type", &t) &&
		    !strcmp(json_object_get_string(t), "summary")) {
			json_object_put(sum);
			sum = o;
		} else {
			json_object_put(o);
		}
	}
	free(line);
	fclose(f);
	return sum;
}

int fkt_only_result(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 6 && !strcmp(e->d_name + l - 6, ".jsonl")) {
			if (!n)
				snprintf(out, len, "%s/%s", dir, e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* @a0 and the rest of @ap up to NULL into @argv (at most @cap - 1, the
 * rest dropped), NULL-terminated; returns the count. */
static int collect_args(char **argv, int cap, const char *a0, va_list ap)
{
	int argc = 0;
	for (const char *a = a0; a && argc < cap - 1;
	     a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	return argc;
}

int fkt_run_cmd_err(int (*fn)(int, char **), const char *errfile,
		    const char *a0, ...)
{
	char *argv[32];
	va_list ap;
	va_start(ap, a0);
	int argc = collect_args(argv, 32, a0, ap);
	va_end(ap);
	fflush(NULL);
	int saved = -1, efd = -1;
	if (errfile) {
		saved = dup(2);
		efd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			   0600);
		CHECK(saved >= 0 && efd >= 0);
		dup2(efd, 2);
	}
	int ret = fn(argc, argv);
	fflush(NULL);
	if (errfile) {
		dup2(saved, 2);
		close(saved);
		close(efd);
	}
	return ret;
}

unsigned fkt_test_seed(void)
{
	const char *e = getenv("FK_TEST_SEED");
	unsigned seed = e ? (unsigned)strtoul(e, NULL, 10)
			  : (unsigned)time(NULL) ^ (unsigned)getpid();
	printf("seed %u (FK_TEST_SEED)\n", seed);
	return seed;
}

int fkt_run_cmdl(int (*fn)(int, char **), char **out, char **err,
		 const char *a0, ...)
{
	char *argv[40];
	va_list ap;
	va_start(ap, a0);
	collect_args(argv, 40, a0, ap);
	va_end(ap);
	free(*out);
	free(*err);
	*out = *err = NULL;
	return fkt_run_cmd(fn, argv, out, err);
}

const char *fkt_json_str(struct json_object *o, const char *k)
{
	struct json_object *v;
	return o && json_object_object_get_ex(o, k, &v) && v
		   ? json_object_get_string(v)
		   : "";
}

static void slurp(int fd, char *buf, size_t len)
{
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
}

int fkt_run_cmd_buf(int (*fn)(int, char **), int argc, const char **argv,
		    char *out, char *err, size_t len)
{
	char p1[PATH_MAX], p2[PATH_MAX];
	snprintf(p1, sizeof(p1), "%s/.out.XXXXXX", fkt_tmpdir());
	snprintf(p2, sizeof(p2), "%s/.err.XXXXXX", fkt_tmpdir());
	int fo = mkstemp(p1), fe = mkstemp(p2);
	unlink(p1);
	unlink(p2);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = fn(argc, (char **)argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(fo, out, len);
	slurp(fe, err, len);
	return rc;
}
