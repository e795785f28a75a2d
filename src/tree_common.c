// SPDX-License-Identifier: MIT
/*
 * tree_common.c - the durability layer shared by tree sync and tree copy:
 * the run's inode table with kept descriptors (struct fk_fdmap), the
 * error policy of one fsync, and the final fsync pass over a tree.
 *
 * Interface routines (see tree.h): fk_fd_window, fk_fdmap_create,
 * fk_fdmap_destroy, fk_fdmap_put, fk_fdmap_take, fk_fdmap_nr_fds,
 * fk_fdmap_flags, fk_fdmap_set_flags, fk_fdmap_note_path,
 * fk_tree_report, fk_tree_result, fk_tree_progress, fk_tree_fsync_fd,
 * fk_tree_fsync_done, fk_tree_open_file, fk_tree_fsync_pass,
 * fk_tree_batch_create, fk_kernel_before, fk_fsset_create,
 * fk_fsset_add, fk_fsset_has, fk_fsset_syncfs, fk_fsset_destroy; and the
 * public fk_tree_opts_init.
 *
 * struct fk_fdmap is an open-addressing hash table keyed by (st_dev,
 * st_ino).  Invariants:
 *  1. At most one slot per (dev, ino); slots are never removed, so an
 *     inode's flags live for the whole run (a failed fsync stays failed).
 *  2. nr_fds == number of slots with fd >= 0 <= max_fds; every kept fd
 *     is owned by the map until fk_fdmap_take returns it, and is closed
 *     by fk_fdmap_destroy otherwise.
 *  3. The table is at most half full (grown by doubling).
 *
 * A batched pass (struct pass with o->batch) holds pending files and
 * directories.  Invariants:
 *  4. An inode is pending at most once (flagged QUEUED when queued, and
 *     a QUEUED inode is never queued again); every pending descriptor is
 *     owned by the pass and closed by the flush that fsyncs it.
 *  5. A pending directory's descendants are all pending or done (the
 *     walk is post-order), and a flush fsyncs files first, then
 *     directories deepest first: a directory after its contents.
 *  6. Pending plus kept descriptors stay within the pass's budget
 *     (fk_fd_window() when it starts plus the descriptors kept then;
 *     plus the one being opened), and nothing is pending when the pass
 *     returns.
 *
 * The descriptor window (fk_fd_window) is the one answer to "how many
 * more descriptors may this pass open": the RLIMIT_NOFILE soft limit,
 * minus the descriptors open now (counted in /proc/self/fd), minus
 * FK_FD_RESERVE for what every pass also holds (the walker's directory
 * window, the copy's destination window, a source and a destination
 * file, the caller's own).  Every pass of tree sync and tree copy sizes
 * its kept, pending or batched descriptors from it.
 */
#include "sys.h"
#include "tree.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define FD_WINDOW_MAX 65536
#define PROGRESS_INTERVAL_NS 100000000ull

struct slot {
	dev_t dev;
	ino_t ino;
	int fd;		/* kept descriptor or -1 */
	unsigned flags; /* enum fk_inode_flags */
	int used;
};

struct noted_path {
	struct noted_path *next;
	char path[];
};

struct fk_fdmap {
	struct slot *slots;
	size_t nr_slots; /* power of two */
	size_t nr_used;
	size_t nr_fds, max_fds;
	dev_t *degraded_devs; /* file systems already warned about */
	size_t nr_degraded;
	struct noted_path *noted;
};

/* fk_tree_stats_add: flushkit.h's comment. */
void fk_tree_stats_add(struct fk_tree_stats *sum,
		       const struct fk_tree_stats *st)
{
	sum->files += st->files;
	sum->dirs += st->dirs;
	sum->symlinks += st->symlinks;
	sum->specials += st->specials;
	sum->hardlinks += st->hardlinks;
	sum->bytes += st->bytes;
	sum->vanished += st->vanished;
	sum->errors += st->errors;
	sum->warnings += st->warnings;
	sum->fsync_calls += st->fsync_calls;
	sum->dir_fsync_calls += st->dir_fsync_calls;
	sum->syncfs_calls += st->syncfs_calls;
	sum->writeback_ranges += st->writeback_ranges;
	sum->writeback_bytes += st->writeback_bytes;
	sum->walk_ns += st->walk_ns;
	sum->writeback_ns += st->writeback_ns;
	sum->fsync_ns += st->fsync_ns;
	sum->total_ns += st->total_ns;
	sum->degraded |= st->degraded;
	if (st->sync_io) {
		sum->sync_io = st->sync_io;
		sum->sync_jobs = st->sync_jobs;
	}
	sum->skipped += st->skipped;
	sum->skipped_bytes += st->skipped_bytes;
	sum->reflinks += st->reflinks;
}

void fk_tree_opts_init(struct fk_tree_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sync_method = FK_SYNC_AUTO;
	o->copy_method = FK_COPY_AUTO;
	o->flush_after_bytes = FK_WRITEBACK_DEFAULT_FLUSH_AFTER;
}

static int count_fd_entry(void *arg, const char *name, unsigned char type)
{
	(void)name;
	(void)type;
	++*(long *)arg;
	return 0;
}

/* The number of descriptors open in this process (/proc/self/fd less
 * the one reading it), or -errno if /proc cannot tell. */
static long count_open_fds(void)
{
	int fd = fk_sys.openat(AT_FDCWD, "/proc/self/fd",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	long n = 0;
	int r = fk_dirents(fd, count_fd_entry, &n);
	fk_sys.close(fd);
	if (r < 0)
		return r;
	return n > 0 ? n - 1 : 0;
}

size_t fk_fd_window(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	long open_now = count_open_fds();
	if (open_now < 0)
		open_now = 16; /* no /proc: assume a few */
	if (rl.rlim_cur == RLIM_INFINITY)
		return FD_WINDOW_MAX;
	rlim_t used = (rlim_t)open_now + FK_FD_RESERVE;
	if (rl.rlim_cur <= used)
		return 0;
	rlim_t n = rl.rlim_cur - used;
	return n > FD_WINDOW_MAX ? FD_WINDOW_MAX : (size_t)n;
}

int fk_tree_fd_check(const struct fk_tree_fsync_opts *o,
		     struct fk_tree_stats *st, const char *path)
{
	if (fk_fd_window() > 0)
		return 0;
	struct rlimit rl;
	long open_now = count_open_fds();
	char op[160];
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = 0;
	snprintf(op, sizeof(op),
		 "file descriptor limit too low (ulimit -n %llu, %ld open, "
		 "at least %ld needed)",
		 (unsigned long long)rl.rlim_cur, open_now,
		 (open_now > 0 ? open_now : 0) + FK_FD_RESERVE + 1);
	fk_tree_report(o, st, FK_REPORT_ERROR, op, path, -EMFILE);
	return -EMFILE;
}

static uint64_t hash(dev_t dev, ino_t ino)
{
	/* splitmix64 finalizer over both keys */
	uint64_t x = (uint64_t)ino ^ ((uint64_t)dev * 0x9e3779b97f4a7c15ull);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

int fk_fdmap_create(size_t max_fds, struct fk_fdmap **out)
{
	struct fk_fdmap *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->nr_slots = 1024;
	m->slots = calloc(m->nr_slots, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return -ENOMEM;
	}
	m->max_fds = max_fds;
	*out = m;
	return 0;
}

void fk_fdmap_destroy(struct fk_fdmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_slots; i++)
		if (m->slots[i].used && m->slots[i].fd >= 0)
			fk_sys.close(m->slots[i].fd);
	while (m->noted) {
		struct noted_path *n = m->noted;
		m->noted = n->next;
		free(n);
	}
	free(m->degraded_devs);
	free(m->slots);
	free(m);
}

static struct slot *lookup(const struct fk_fdmap *m, dev_t dev, ino_t ino)
{
	size_t mask = m->nr_slots - 1;
	for (size_t i = hash(dev, ino) & mask;; i = (i + 1) & mask) {
		struct slot *s = &m->slots[i];
		if (!s->used)
			return s;
		if (s->dev == dev && s->ino == ino)
			return s;
	}
}

static int grow(struct fk_fdmap *m)
{
	struct slot *old = m->slots;
	size_t nr_old = m->nr_slots;
	struct slot *n = calloc(nr_old * 2, sizeof(*n));
	if (!n)
		return -ENOMEM;
	m->slots = n;
	m->nr_slots = nr_old * 2;
	for (size_t i = 0; i < nr_old; i++)
		if (old[i].used)
			*lookup(m, old[i].dev, old[i].ino) = old[i];
	free(old);
	return 0;
}

/* The slot of an inode, created if missing; NULL on ENOMEM. */
static struct slot *get_slot(struct fk_fdmap *m, dev_t dev, ino_t ino)
{
	struct slot *s = lookup(m, dev, ino);
	if (s->used)
		return s;
	if ((m->nr_used + 1) * 2 > m->nr_slots) {
		if (grow(m))
			return NULL;
		s = lookup(m, dev, ino);
	}
	s->used = 1;
	s->dev = dev;
	s->ino = ino;
	s->fd = -1;
	s->flags = 0;
	m->nr_used++;
	return s;
}

int fk_fdmap_put(struct fk_fdmap *m, dev_t dev, ino_t ino, int fd, int is_dir)
{
	(void)is_dir; /* kept alike; the pass fsyncs through either */
	if (m->nr_fds >= m->max_fds)
		return 1;
	struct slot *s = get_slot(m, dev, ino);
	if (!s)
		return -ENOMEM;
	if (s->fd >= 0)
		return 1;
	s->fd = fd;
	m->nr_fds++;
	return 0;
}

int fk_fdmap_take(struct fk_fdmap *m, dev_t dev, ino_t ino)
{
	struct slot *s = lookup(m, dev, ino);
	if (!s->used || s->fd < 0)
		return -1;
	int fd = s->fd;
	s->fd = -1;
	m->nr_fds--;
	return fd;
}

size_t fk_fdmap_nr_fds(const struct fk_fdmap *m)
{
	return m->nr_fds;
}

unsigned fk_fdmap_flags(const struct fk_fdmap *m, dev_t dev, ino_t ino)
{
	const struct slot *s = lookup(m, dev, ino);
	return s->used ? s->flags : 0;
}

int fk_fdmap_set_flags(struct fk_fdmap *m, dev_t dev, ino_t ino, unsigned flags)
{
	struct slot *s = get_slot(m, dev, ino);
	if (!s)
		return -ENOMEM;
	s->flags |= flags;
	return 0;
}

int fk_fdmap_note_path(struct fk_fdmap *m, const char *op, const char *path)
{
	size_t lo = strlen(op), lp = strlen(path);
	for (struct noted_path *n = m->noted; n; n = n->next)
		if (!strncmp(n->path, op, lo) && n->path[lo] == ' ' &&
		    !strcmp(n->path + lo + 1, path))
			return 1;
	struct noted_path *n = malloc(sizeof(*n) + lo + lp + 2);
	if (!n)
		return -ENOMEM;
	memcpy(n->path, op, lo);
	n->path[lo] = ' ';
	memcpy(n->path + lo + 1, path, lp + 1);
	n->next = m->noted;
	m->noted = n;
	return 0;
}

/* 1 the first time a degraded directory fsync is seen on @dev. */
static int first_degraded(struct fk_fdmap *m, dev_t dev)
{
	if (!m)
		return 1;
	for (size_t i = 0; i < m->nr_degraded; i++)
		if (m->degraded_devs[i] == dev)
			return 0;
	dev_t *p = realloc(m->degraded_devs, (m->nr_degraded + 1) * sizeof(*p));
	if (!p)
		return 1;
	p[m->nr_degraded++] = dev;
	m->degraded_devs = p;
	return 1;
}

void fk_tree_report(const struct fk_tree_fsync_opts *o,
		    struct fk_tree_stats *st, int level, const char *op,
		    const char *path, int err)
{
	if (level == FK_REPORT_ERROR)
		st->errors++;
	else
		st->warnings++;
	if (o && o->report)
		o->report(o->report_arg, level, op, path, err);
}

int fk_tree_result(int cur, int r)
{
	if (r >= 0 || (cur < 0 && cur != -FK_EDEGRADED))
		return cur;
	if (r == -FK_EDEGRADED)
		return cur < 0 ? cur : r;
	return r;
}

void fk_tree_progress(const struct fk_tree_fsync_opts *o,
		      const struct fk_tree_stats *st, uint64_t *last_ns,
		      int force)
{
	if (!o || !o->progress)
		return;
	uint64_t now = fk_now_ns();
	if (!force && *last_ns && now - *last_ns < PROGRESS_INTERVAL_NS)
		return;
	if (!*last_ns && !force) {
		/* First call starts the clock: no output for short runs. */
		*last_ns = now;
		return;
	}
	*last_ns = now;
	o->progress(o->progress_arg, st);
}

int fk_tree_fsync_fd(struct fk_fdmap *m, int fd, dev_t dev, ino_t ino,
		     int is_dir, const char *path,
		     const struct fk_tree_fsync_opts *o,
		     struct fk_tree_stats *st)
{
	int r = fk_sys.fsync(fd);
	if (is_dir)
		st->dir_fsync_calls++;
	else
		st->fsync_calls++;
	return fk_tree_fsync_done(m, r, dev, ino, is_dir, path, o, st);
}

int fk_tree_fsync_done(struct fk_fdmap *m, int r, dev_t dev, ino_t ino,
		       int is_dir, const char *path,
		       const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st)
{
	if (r == 0) {
		if (m)
			fk_fdmap_set_flags(m, dev, ino, FK_INODE_SYNCED);
		return 0;
	}
	if ((is_dir && (r == -EINVAL || r == -ENOTSUP || r == -EOPNOTSUPP)) ||
	    (!is_dir && r == -EINVAL)) {
		/* CIFS, some FUSE, sysfs: the directory cannot be fsynced;
		 * procfs: the file cannot (EINVAL: "does not support
		 * synchronization").  Not a failure of the operation, but
		 * the result is weaker. */
		st->degraded = 1;
		if (m)
			fk_fdmap_set_flags(m, dev, ino, FK_INODE_DEGRADED);
		if (first_degraded(m, dev))
			fk_tree_report(o, st, FK_REPORT_WARNING, "fsync", path,
				       is_dir ? -FK_EDEGRADED : r);
		return -FK_EDEGRADED;
	}
	/* Sticky: reported once, never retried, never reopened. */
	if (m)
		fk_fdmap_set_flags(m, dev, ino, FK_INODE_FAILED);
	fk_tree_report(o, st, FK_REPORT_ERROR, "fsync", path, r);
	return r;
}

int fk_tree_open_file(int dirfd, const char *name, const struct stat *want)
{
	int fd = fk_sys.openat(
	    dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0);
	if (fd == -ELOOP)
		return -ENOENT; /* replaced by a symlink after the lstat */
	if (fd < 0)
		return fd;
	struct stat now;
	int r = fk_sys.fstat(fd, &now);
	if (r == 0 && (!S_ISREG(now.st_mode) || now.st_dev != want->st_dev ||
		       now.st_ino != want->st_ino))
		r = -ENOENT; /* replaced between lstat and open */
	if (r < 0) {
		fk_sys.close(fd);
		return r;
	}
	return fd;
}

int fk_kernel_before(const char *release, int major, int minor)
{
	char *end;
	if (!release)
		return -EINVAL;
	long a = strtol(release, &end, 10);
	if (end == release || *end != '.')
		return -EINVAL;
	const char *p = end + 1;
	long b = strtol(p, &end, 10);
	if (end == p)
		return -EINVAL;
	return a < major || (a == major && b < minor);
}

int fk_tree_count(struct fk_fdmap *m, struct fk_tree_stats *st,
		  const struct stat *est)
{
	unsigned f = fk_fdmap_flags(m, est->st_dev, est->st_ino);
	if (f & FK_INODE_SEEN) {
		if (S_ISREG(est->st_mode))
			st->hardlinks++;
		return 1;
	}
	fk_fdmap_set_flags(m, est->st_dev, est->st_ino, FK_INODE_SEEN);
	if (S_ISREG(est->st_mode)) {
		st->files++;
		st->bytes += (uint64_t)est->st_size;
	} else if (S_ISDIR(est->st_mode)) {
		st->dirs++;
	}
	return 0;
}

/*
 * Report an entry that vanished (ENOENT between getdents and use), once
 * per inode when it is known (@st non-NULL), else once per path.
 */
static void vanished(struct fk_fdmap *m, const struct fk_tree_fsync_opts *o,
		     struct fk_tree_stats *st, const char *op, const char *path,
		     const struct stat *est)
{
	if (est) {
		unsigned f = fk_fdmap_flags(m, est->st_dev, est->st_ino);
		if (f & FK_INODE_VANISHED)
			return;
		fk_fdmap_set_flags(m, est->st_dev, est->st_ino,
				   FK_INODE_VANISHED);
	} else if (fk_fdmap_note_path(m, op, path) == 1) {
		return;
	}
	st->vanished++;
	fk_tree_report(o, st, FK_REPORT_WARNING, op, path, -ENOENT);
}

int fk_tree_walk_error(struct fk_fdmap *m, const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st, const char *op,
		       const char *path, int err)
{
	if (err == -ENOENT) {
		vanished(m, o, st, op, path, NULL);
		return 0;
	}
	if (err == -ENOMEM)
		return err;
	/* An earlier pass of this run already reported it. */
	if (fk_fdmap_note_path(m, op, path) == 1)
		return err;
	fk_tree_report(o, st, FK_REPORT_ERROR, op, path, err);
	return err;
}

int fk_tree_open_counted(struct fk_fdmap *m, const struct fk_walk_entry *e,
			 const char *path, const struct fk_tree_fsync_opts *o,
			 struct fk_tree_stats *st)
{
	int fd = fk_tree_open_file(e->dirfd, e->name, &e->st);
	if (fd >= 0)
		return fd;
	if (fd == -ENOENT) {
		vanished(m, o, st, "open", path, &e->st);
		return fd;
	}
	fk_fdmap_set_flags(m, e->st.st_dev, e->st.st_ino, FK_INODE_FAILED);
	fk_tree_report(o, st, FK_REPORT_ERROR, "open", path, fd);
	return fd;
}

/* ---- the fsync pass ---- */

/* A file or directory waiting for its fsync in a batched pass. */
struct pending {
	int fd; /* owned until the flush closes it */
	dev_t dev;
	ino_t ino;
	int depth;  /* walker depth (directories) */
	size_t seq; /* arrival order, for a stable sort */
	char *path; /* as reported; owned */
};

struct pending_list {
	struct pending *v;
	size_t nr, alloc;
};

struct pass {
	struct fk_fdmap *m;
	const struct fk_tree_fsync_opts *o;
	struct fk_tree_stats *st;
	size_t root_len;     /* of the walker's display root */
	const char *display; /* replaces it in reports; NULL: none */
	int result;
	int nomem;
	uint64_t progress_ns;
	/* batched (o->batch != NULL) */
	struct pending_list files, dirs;
	size_t budget; /* fk_fdmap_budget(), at least 1 */
	size_t seq;
	struct fk_fsync_req *reqs;
	size_t alloc_reqs;
};

/* The path to report for walker path @path (free with put_path). */
static char *get_path(struct pass *p, const char *path)
{
	if (!p->display)
		return (char *)path;
	size_t wl = strlen(path);
	const char *rest = path + (wl >= p->root_len ? p->root_len : wl);
	size_t dl = strlen(p->display), rl = strlen(rest);
	int slash = rl && rest[0] != '/' && dl && p->display[dl - 1] != '/';
	char *out = malloc(dl + slash + rl + 1);
	if (!out)
		return (char *)path;
	memcpy(out, p->display, dl);
	if (slash)
		out[dl] = '/';
	memcpy(out + dl + slash, rest, rl + 1);
	return out;
}

static void put_path(const char *shown, const char *path)
{
	if (shown != path)
		free((char *)shown);
}

static void count_entry(struct pass *p, const struct stat *st)
{
	if (p->o->flags & FK_PASS_COUNT)
		fk_tree_count(p->m, p->st, st);
}

static int pass_error(void *arg, const char *op, const char *path, int err)
{
	struct pass *p = arg;
	char *shown = get_path(p, path);
	int r = fk_tree_walk_error(p->m, p->o, p->st, op, shown, err);
	put_path(shown, path);
	if (r == -ENOMEM)
		return r;
	p->result = fk_tree_result(p->result, r);
	return 0;
}

/* Directories deepest first; arrival order within a depth. */
static int cmp_depth(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * fsync @nr pending entries as one batch, apply the policy to each
 * result, close their descriptors.  If the batch cannot run (ENOMEM,
 * before issuing anything), the same fsyncs are made one at a time.
 */
static void run_batch(struct pass *p, struct pending *v, size_t nr, int is_dir)
{
	if (!nr)
		return;
	if (nr > p->alloc_reqs) {
		struct fk_fsync_req *n = realloc(p->reqs, nr * sizeof(*n));
		if (n) {
			p->reqs = n;
			p->alloc_reqs = nr;
		}
	}
	int batched = nr <= p->alloc_reqs;
	if (batched) {
		memset(p->reqs, 0, nr * sizeof(*p->reqs));
		for (size_t i = 0; i < nr; i++) {
			p->reqs[i].fd = v[i].fd;
			p->reqs[i].op = FK_FSYNC_OP_FSYNC;
		}
		/* Its return value is the batch's first error, sticky over
		 * runs: the per-request results are what count here. */
		if (fk_fsync_batch_run(p->o->batch, p->reqs, nr) == -ENOMEM)
			batched = 0;
	}
	for (size_t i = 0; i < nr; i++) {
		struct pending *e = &v[i];
		int r;
		if (batched) {
			if (p->reqs[i].issued) {
				if (is_dir)
					p->st->dir_fsync_calls++;
				else
					p->st->fsync_calls++;
			}
			r = fk_tree_fsync_done(p->m, p->reqs[i].result, e->dev,
					       e->ino, is_dir, e->path, p->o,
					       p->st);
		} else {
			r = fk_tree_fsync_fd(p->m, e->fd, e->dev, e->ino,
					     is_dir, e->path, p->o, p->st);
		}
		/* Written back and durable: the cache may go (cp
		 * --drop-cache).  A hint; its errors do not matter. */
		if (r == 0 && !is_dir && p->o->drop_cache)
			fk_sys.fadvise(e->fd, 0, 0, POSIX_FADV_DONTNEED);
		fk_sys.close(e->fd);
		free(e->path);
		p->result = fk_tree_result(p->result, r);
	}
}

/* fsync everything pending: files, then directories bottom-up. */
static void flush(struct pass *p)
{
	run_batch(p, p->files.v, p->files.nr, 0);
	p->files.nr = 0;
	struct pending *d = p->dirs.v;
	size_t nr = p->dirs.nr;
	if (nr > 1)
		qsort(d, nr, sizeof(*d), cmp_depth);
	for (size_t i = 0; i < nr;) {
		size_t j = i + 1;
		while (j < nr && d[j].depth == d[i].depth)
			j++;
		run_batch(p, d + i, j - i, 1);
		i = j;
	}
	p->dirs.nr = 0;
	fk_tree_progress(p->o, p->st, &p->progress_ns, 0);
}

/* Flush first if the descriptors pending and kept reach the budget. */
static void make_room(struct pass *p)
{
	size_t pending = p->files.nr + p->dirs.nr;
	if (pending && pending + fk_fdmap_nr_fds(p->m) >= p->budget)
		flush(p);
}

/*
 * Queue @fd (owned now) for inode (@dev, @ino).  Returns 0, or -ENOMEM
 * (then @fd and @path are still the caller's).
 */
static int queue(struct pass *p, struct pending_list *l, int fd, dev_t dev,
		 ino_t ino, int depth, const char *path)
{
	if (l->nr == l->alloc) {
		size_t n = l->alloc ? l->alloc * 2 : 256;
		struct pending *v = realloc(l->v, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->alloc = n;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	l->v[l->nr++] = (struct pending){
	    .fd = fd,
	    .dev = dev,
	    .ino = ino,
	    .depth = depth,
	    .seq = p->seq++,
	    .path = copy,
	};
	fk_fdmap_set_flags(p->m, dev, ino, FK_INODE_QUEUED);
	return 0;
}

#define FILE_DONE (FK_INODE_SYNCED | FK_INODE_FAILED | FK_INODE_QUEUED)
#define DIR_DONE                                                               \
	(FK_INODE_SYNCED | FK_INODE_FAILED | FK_INODE_DEGRADED |               \
	 FK_INODE_QUEUED)

/* FK_PASS_CHECK: @fd's own writeback error since it was opened (the
 * data is durable already); the fsync policy's flags and reports. */
static int check_fd(struct pass *p, int fd, const struct fk_walk_entry *e,
		    const char *shown)
{
	int r = fk_sys.sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_AFTER);
	if (r == 0) {
		fk_fdmap_set_flags(p->m, e->st.st_dev, e->st.st_ino,
				   FK_INODE_SYNCED);
		return 0;
	}
	fk_fdmap_set_flags(p->m, e->st.st_dev, e->st.st_ino, FK_INODE_FAILED);
	fk_tree_report(p->o, p->st, FK_REPORT_ERROR, "writeback", shown, r);
	return r;
}

static void pass_file(struct pass *p, const struct fk_walk_entry *e)
{
	unsigned f = fk_fdmap_flags(p->m, e->st.st_dev, e->st.st_ino);
	if (f & FILE_DONE)
		return;
	char *shown = get_path(p, e->path);
	int fd = fk_fdmap_take(p->m, e->st.st_dev, e->st.st_ino);
	if (fd < 0) {
		if (p->o->batch)
			make_room(p);
		fd = fk_tree_open_counted(p->m, e, shown, p->o, p->st);
	}
	int r = fd;
	if (fd >= 0 && p->o->batch &&
	    queue(p, &p->files, fd, e->st.st_dev, e->st.st_ino, e->depth,
		  shown) == 0) {
		put_path(shown, e->path);
		if (p->files.nr + p->dirs.nr >= p->budget)
			flush(p);
		return;
	}
	if (fd >= 0 && (p->o->flags & FK_PASS_CHECK)) {
		r = check_fd(p, fd, e, shown);
		if (r == 0 && p->o->drop_cache)
			fk_sys.fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		fk_sys.close(fd);
	} else if (fd >= 0) {
		/* Unbatched (or no memory to queue it): now. */
		r = fk_tree_fsync_fd(p->m, fd, e->st.st_dev, e->st.st_ino, 0,
				     shown, p->o, p->st);
		if (r == 0 && p->o->drop_cache)
			fk_sys.fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		fk_sys.close(fd);
	}
	if (r != -ENOENT)
		p->result = fk_tree_result(p->result, r);
	put_path(shown, e->path);
}

static int pass_entry(void *arg, const struct fk_walk_entry *e)
{
	struct pass *p = arg;
	mode_t t = e->st.st_mode;
	if (S_ISREG(t)) {
		count_entry(p, &e->st);
		pass_file(p, e);
		fk_tree_progress(p->o, p->st, &p->progress_ns, 0);
	} else if (p->o->flags & FK_PASS_COUNT) {
		/* Symlinks and special files: counted, never opened. */
		if (S_ISLNK(t))
			p->st->symlinks++;
		else
			p->st->specials++;
	}
	return 0;
}

static int pass_dir_pre(void *arg, const struct fk_walk_entry *e)
{
	struct pass *p = arg;
	unsigned f = fk_fdmap_flags(p->m, e->st.st_dev, e->st.st_ino);
	/* Done earlier in this run (overlapping paths): skip the subtree. */
	if (f & DIR_DONE)
		return 1;
	count_entry(p, &e->st);
	return 0;
}

/* Queue directory @e (its kept descriptor @kept, or a new one on "."):
 * 0, or -1 if it must be fsynced now. */
static int queue_dir(struct pass *p, const struct fk_walk_entry *e, int kept,
		     const char *shown)
{
	int fd = kept;
	if (fd < 0) {
		make_room(p);
		fd = fk_sys.openat(e->fd, ".",
				   O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
		if (fd < 0)
			return -1;
	}
	if (queue(p, &p->dirs, fd, e->st.st_dev, e->st.st_ino, e->depth,
		  shown) < 0) {
		if (fd != kept)
			fk_sys.close(fd);
		return -1;
	}
	if (p->files.nr + p->dirs.nr >= p->budget)
		flush(p);
	return 0;
}

static int pass_dir_post(void *arg, const struct fk_walk_entry *e)
{
	struct pass *p = arg;
	unsigned f = fk_fdmap_flags(p->m, e->st.st_dev, e->st.st_ino);
	int kept = fk_fdmap_take(p->m, e->st.st_dev, e->st.st_ino);
	if (!(f & DIR_DONE) && (p->o->flags & FK_PASS_CHECK)) {
		/* Committed by the syncfs. */
		fk_fdmap_set_flags(p->m, e->st.st_dev, e->st.st_ino,
				   FK_INODE_SYNCED);
	} else if (!(f & DIR_DONE)) {
		char *shown = get_path(p, e->path);
		if (p->o->batch && queue_dir(p, e, kept, shown) == 0) {
			put_path(shown, e->path);
			return 0; /* the kept descriptor went with it */
		}
		/* Not queued (no memory, no descriptor): its contents
		 * first, then it, now. */
		if (p->o->batch)
			flush(p);
		int r = fk_tree_fsync_fd(p->m, kept >= 0 ? kept : e->fd,
					 e->st.st_dev, e->st.st_ino, 1, shown,
					 p->o, p->st);
		put_path(shown, e->path);
		p->result = fk_tree_result(p->result, r);
	}
	if (kept >= 0)
		fk_sys.close(kept);
	fk_tree_progress(p->o, p->st, &p->progress_ns, 0);
	return 0;
}

int fk_tree_batch_create(const struct fk_tree_opts *to,
			 struct fk_tree_stats *st, struct fk_fsync_batch **out)
{
	struct fk_fsync_batch_opts bo;
	fk_fsync_batch_opts_init(&bo);
	bo.sync_io = to->sync_io;
	if (to->sync_jobs)
		bo.queue_depth = to->sync_jobs;
	int r = fk_fsync_batch_create(&bo, out);
	if (r < 0)
		return r;
	st->sync_io = fk_fsync_batch_backend(*out);
	/* Sequential has one in flight, whatever the queue depth. */
	st->sync_jobs =
	    st->sync_io == FK_SYNC_IO_SEQUENTIAL ? 1 : bo.queue_depth;
	return 0;
}

int fk_tree_fsync_pass(int at_fd, const char *root, const char *display,
		       struct fk_fdmap *m, const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st)
{
	static const struct fk_walk_ops ops = {
	    .dir_pre = pass_dir_pre,
	    .dir_post = pass_dir_post,
	    .entry = pass_entry,
	    .error = pass_error,
	};
	size_t len = strlen(root);
	while (len > 1 && root[len - 1] == '/')
		len--;
	struct pass p = {
	    .m = m,
	    .o = o,
	    .st = st,
	    .root_len = len,
	    .display = display && strcmp(display, root) ? display : NULL,
	};
	if (o->batch) {
		/* The window now, plus what is kept (already open). */
		p.budget = fk_fd_window() + fk_fdmap_nr_fds(m);
		if (!p.budget)
			p.budget = 1;
	}
	int r = fk_walk(at_fd, root, &ops, &p);
	/* Whatever stopped the walk, what was collected is fsynced. */
	flush(&p);
	free(p.files.v);
	free(p.dirs.v);
	free(p.reqs);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		/* The root itself could not be examined: an error even when
		 * it is ENOENT (the caller named it), reported once a run. */
		const char *shown = display ? display : root;
		if (fk_fdmap_note_path(m, "stat", shown) != 1)
			fk_tree_report(o, st, FK_REPORT_ERROR, "stat", shown,
				       r);
		return fk_tree_result(p.result, r);
	}
	return p.result;
}

/* ---- the file systems of a run, for syncfs ---- */

struct fk_fsset;
static int grow_fsset(struct fk_fsset *s);

struct fsdev {
	dev_t dev;
	int fd;	    /* a directory (or file) on it, for syncfs */
	char *path; /* for messages */
};

struct fk_fsset {
	struct fsdev *devs;
	size_t nr, alloc;
};

int fk_fsset_create(struct fk_fsset **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void fk_fsset_destroy(struct fk_fsset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr; i++) {
		fk_sys.close(s->devs[i].fd);
		free(s->devs[i].path);
	}
	free(s->devs);
	free(s);
}

int fk_fsset_has(const struct fk_fsset *s, dev_t dev)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->devs[i].dev == dev)
			return 1;
	return 0;
}

int fk_fsset_add(struct fk_fsset *s, dev_t dev, int fd, const char *path)
{
	if (fk_fsset_has(s, dev)) {
		fk_sys.close(fd);
		return 1;
	}
	char *copy = strdup(path);
	if (!copy || (s->nr == s->alloc && !grow_fsset(s))) {
		free(copy);
		fk_sys.close(fd);
		return -ENOMEM;
	}
	s->devs[s->nr++] = (struct fsdev){.dev = dev, .fd = fd, .path = copy};
	return 0;
}

int fk_fsset_syncfs(struct fk_fsset *s, const struct fk_tree_fsync_opts *o,
		    struct fk_tree_stats *st)
{
	int result = 0;
	for (size_t i = 0; i < s->nr; i++) {
		int r = fk_sys.syncfs(s->devs[i].fd);
		st->syncfs_calls++;
		if (r < 0) {
			fk_tree_report(o, st, FK_REPORT_ERROR, "syncfs",
				       s->devs[i].path, r);
			result = fk_tree_result(result, r);
		}
	}
	return result;
}

int fk_fsset_sweep(struct fk_fsset *s, struct fk_tree_stats *st)
{
	int result = 0;
	for (size_t i = 0; i < s->nr; i++) {
		int r = fk_sys.syncfs(s->devs[i].fd);
		st->syncfs_calls++;
		if (r < 0 && !result)
			result = r;
	}
	return result;
}

int64_t fk_dirty_pages_fd(int fd)
{
	struct fk_cachestat cs;
	int r = fk_sys.cachestat(fd, &cs);
	if (r < 0)
		return r;
	return (int64_t)(cs.nr_dirty + cs.nr_writeback);
}

/* /proc/meminfo's Dirty + Writeback, pages; -errno. */
static int64_t system_dirty_pages(void)
{
	char buf[8192];
	int fd =
	    fk_sys.openat(AT_FDCWD, "/proc/meminfo", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	ssize_t n = fk_sys.read(fd, buf, sizeof(buf) - 1);
	fk_sys.close(fd);
	if (n <= 0)
		return n < 0 ? n : -EIO;
	buf[n] = 0;
	uint64_t kib = 0;
	int found = 0;
	static const char *const keys[] = {"\nDirty:", "\nWriteback:"};
	for (size_t i = 0; i < 2; i++) {
		const char *at = strstr(buf, keys[i]);
		if (!at)
			continue;
		kib += strtoull(at + strlen(keys[i]), NULL, 10);
		found++;
	}
	if (!found)
		return -EIO;
	long page = sysconf(_SC_PAGESIZE);
	return (int64_t)(kib * 1024 / (uint64_t)(page > 0 ? page : 4096));
}

int fk_sweep_wins(uint64_t tree_pages)
{
	int64_t sys = system_dirty_pages();
	if (sys < 0)
		return 0;
	return tree_pages * 2 >= (uint64_t)sys;
}

size_t fk_fsset_nr(const struct fk_fsset *s)
{
	return s->nr;
}

static int grow_fsset(struct fk_fsset *s)
{
	size_t n = s->alloc ? s->alloc * 2 : 4;
	struct fsdev *d = realloc(s->devs, n * sizeof(*d));
	if (!d)
		return 0;
	s->devs = d;
	s->alloc = n;
	return 1;
}
