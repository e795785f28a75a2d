// SPDX-License-Identifier: MIT
/*
 * walk.c - walk a directory tree relative to directory descriptors.
 *
 * Interface routines: fk_walk() (see walk.h).
 *
 * Each directory is opened with openat(parent_fd, name, O_DIRECTORY |
 * O_NOFOLLOW), read whole with getdents64, its entries sorted by inode
 * number, and each entry lstat'ed with fstatat(AT_SYMLINK_NOFOLLOW)
 * before any callback sees it.  Only directories are opened here; what
 * a callback opens is its own business (and it must not open special
 * files, which it can tell from e->st).
 *
 * Directories are opened O_NOATIME where the kernel allows it (the
 * caller owns them, or has CAP_FOWNER; else without): reading one must
 * not change its access time (a copy whose times were just set, a tree
 * being synced).
 *
 * Invariants:
 *  1. No path passed to a system call has more than one component
 *     (except the root as given by the caller, and ".."), so depth is
 *     unlimited by PATH_MAX; at most FK_WALK_MAX_DIR_FDS directory
 *     descriptors of the walk are open at a time, whatever the depth:
 *     past it, the descriptor of the shallowest open ancestor (never the
 *     parent of the deepest) is closed, and an ancestor is opened again
 *     through ".." of its child, and checked to be the same (st_dev,
 *     st_ino), before anything needs it (a walk whose ancestor was moved
 *     away meanwhile stops with -ESTALE, reported as "reopen").
 *  2. A symlink is never followed: directories are opened O_NOFOLLOW
 *     and their identity is checked against the lstat result.
 *  3. dir_post of a directory runs after every callback for entries
 *     below it.
 *  4. With ops->readahead_bytes, the regular files of the directory
 *     being walked are opened and read ahead of their entry callbacks
 *     (read_ahead): only DT_REG entries up to the next directory, at
 *     most readahead_fds (<= FK_WALK_READAHEAD_FDS) descriptors held
 *     and readahead_bytes bytes ahead of the entry being visited.  Each
 *     file is opened once: its callback gets the descriptor (e->fd, if
 *     the lstat before the callback still names that inode) or the
 *     open's error (e->open_err), and the walker closes it after the
 *     callback (or when the walk aborts).  The reads of a cold source
 *     then overlap the copy of the files before them instead of
 *     waiting one file at a time.
 */
#include "walk.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct dent {
	uint64_t ino;
	size_t name_off;
	unsigned char type; /* d_type (DT_UNKNOWN on some file systems) */
	int fd;		    /* opened ahead (walker's), or -1 */
	dev_t fdev;	    /* its fstat: what the entry must still be */
	ino_t fino;
	int open_err;	/* that open's -errno, or 0 */
	uint64_t ahead; /* bytes read ahead for it, not yet visited */
};

struct dirlist {
	struct dent *ents;
	size_t nr, alloc;
	char *names;
	size_t names_len, names_alloc;
};

/* The kernel's struct linux_dirent64. */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int dirlist_add(struct dirlist *l, uint64_t ino, unsigned char type,
		       const char *name)
{
	size_t len = strlen(name) + 1;
	if (l->nr == l->alloc) {
		size_t n = l->alloc ? l->alloc * 2 : 64;
		struct dent *p = realloc(l->ents, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->ents = p;
		l->alloc = n;
	}
	if (l->names_len + len > l->names_alloc) {
		size_t n = l->names_alloc ? l->names_alloc * 2 : 4096;
		while (n < l->names_len + len)
			n *= 2;
		char *p = realloc(l->names, n);
		if (!p)
			return -ENOMEM;
		l->names = p;
		l->names_alloc = n;
	}
	memcpy(l->names + l->names_len, name, len);
	l->ents[l->nr].ino = ino;
	l->ents[l->nr].name_off = l->names_len;
	l->ents[l->nr].type = type;
	l->ents[l->nr].fd = -1;
	l->ents[l->nr].open_err = 0;
	l->ents[l->nr].ahead = 0;
	l->nr++;
	l->names_len += len;
	return 0;
}

static int cmp_ino(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Read every entry of the directory open at @fd except "." and "..". */
static int read_dir(int fd, struct dirlist *l)
{
	char buf[32768] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = fk_sys.getdents64(fd, buf, sizeof(buf));
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			off += d->d_reclen;
			const char *nm = d->d_name;
			if (nm[0] == '.' &&
			    (nm[1] == 0 || (nm[1] == '.' && nm[2] == 0)))
				continue;
			int r = dirlist_add(l, d->d_ino, d->d_type, nm);
			if (r)
				return r;
		}
	}
	if (l->nr > 1)
		qsort(l->ents, l->nr, sizeof(*l->ents), cmp_ino);
	return 0;
}

/*
 * Read-ahead of the regular files of a directory (ops->readahead_bytes):
 * entries [i + 1, next) were considered; those opened hold their
 * descriptor (fd >= 0) or the open's error (open_err) until visited.
 */
struct readahead {
	size_t next;	/* first entry not considered yet */
	size_t nr_fds;	/* descriptors held for entries not visited */
	uint64_t ahead; /* bytes started for entries not visited yet */
};

/*
 * Entry @i of @l is about to be visited: what was read ahead for it is
 * no longer ahead, and the regular files after it are opened
 * (O_RDONLY|O_NOFOLLOW|O_NOCTTY|O_NONBLOCK, as fk_tree_open_file; ELOOP
 * is -ENOENT) and read ahead (POSIX_FADV_WILLNEED on at most what the
 * byte budget has left) while fewer than @max_fds are held and fewer
 * than @budget bytes are ahead.  Only DT_REG entries are opened (never a
 * special file, never through a symlink), and the look-ahead stops at a
 * directory or an entry of unknown type: what is below it comes first.
 * An open that fails keeps its error for the entry (its callback takes
 * it as its own open's result: each file is opened once).
 */
static void read_ahead(int dfd, struct dirlist *l, size_t i,
		       struct readahead *ra, uint64_t budget, size_t max_fds)
{
	struct dent *cur = &l->ents[i];
	ra->ahead -= cur->ahead;
	cur->ahead = 0;
	if (cur->fd >= 0)
		ra->nr_fds--;
	if (ra->next <= i)
		ra->next = i + 1;
	/* Nothing after a directory is held while it is walked. */
	if (cur->type == DT_DIR || cur->type == DT_UNKNOWN)
		return;
	if (max_fds > FK_WALK_READAHEAD_FDS)
		max_fds = FK_WALK_READAHEAD_FDS;
	while (ra->next < l->nr && ra->nr_fds < max_fds && ra->ahead < budget) {
		struct dent *d = &l->ents[ra->next];
		if (d->type == DT_DIR || d->type == DT_UNKNOWN)
			break;
		ra->next++;
		if (d->type != DT_REG)
			continue;
		int fd = fk_sys.openat(
		    dfd, l->names + d->name_off,
		    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0);
		if (fd < 0) {
			d->open_err = fd == -ELOOP ? -ENOENT : fd;
			continue;
		}
		struct stat s;
		if (fk_sys.fstat(fd, &s) < 0 || !S_ISREG(s.st_mode) ||
		    s.st_ino != d->ino) {
			/* Replaced since getdents: the entry's callback
			 * opens what is there then. */
			fk_sys.close(fd);
			continue;
		}
		d->fd = fd;
		d->fdev = s.st_dev;
		d->fino = s.st_ino;
		ra->nr_fds++;
		if (s.st_size <= 0)
			continue;
		uint64_t n = (uint64_t)s.st_size;
		if (n > budget - ra->ahead)
			n = budget - ra->ahead;
		if (fk_sys.fadvise(fd, 0, (off_t)n, POSIX_FADV_WILLNEED) == 0) {
			d->ahead = n;
			ra->ahead += n;
		}
	}
}

/* Close what a read-ahead holds for entries from @i on (an aborted
 * walk). */
static void read_ahead_drop(struct dirlist *l, size_t i)
{
	for (; i < l->nr; i++)
		if (l->ents[i].fd >= 0) {
			fk_sys.close(l->ents[i].fd);
			l->ents[i].fd = -1;
		}
}

static char *join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, a);
	/* "/" + "usr" is "/usr", not "//usr". */
	size_t at = a;
	if (!(a > 0 && dir[a - 1] == '/'))
		p[at++] = '/';
	memcpy(p + at, name, b + 1);
	return p;
}

static int report(const struct fk_walk_ops *ops, void *arg, const char *op,
		  const char *path, int err)
{
	if (!ops->error)
		return err;
	return ops->error(arg, op, path, err);
}

/* The directories being walked, by depth. */
struct level {
	int fd; /* open, or -1 (closed to bound the window) */
	dev_t dev;
	ino_t ino;
	const char *path; /* display path (owned by its visit frame) */
};

struct walker {
	const struct fk_walk_ops *ops;
	void *arg;
	struct level *lv;
	size_t nr_lv;
	int nr_open; /* levels with fd >= 0 */
};

static int open_dir(int dirfd, const char *name, int follow)
{
	int flags =
	    O_RDONLY | O_DIRECTORY | O_NOCTTY | (follow ? 0 : O_NOFOLLOW);
	int fd = fk_sys.openat(dirfd, name, flags | O_NOATIME, 0);
	if (fd == -EPERM) /* not ours, no CAP_FOWNER */
		fd = fk_sys.openat(dirfd, name, flags, 0);
	return fd;
}

/* Keep at most FK_WALK_MAX_DIR_FDS levels open: close the shallowest
 * open one above the parent of @depth. */
static void bound_window(struct walker *w, int depth)
{
	for (int d = 0; w->nr_open > FK_WALK_MAX_DIR_FDS && d < depth - 1;
	     d++) {
		if (w->lv[d].fd < 0)
			continue;
		fk_sys.close(w->lv[d].fd);
		w->lv[d].fd = -1;
		w->nr_open--;
	}
}

/* Open level @depth - 1 again through ".." of level @depth if it was
 * closed.  Returns 0 or the walk's abort value. */
static int reopen_parent(struct walker *w, int depth)
{
	if (depth == 0 || w->lv[depth - 1].fd >= 0)
		return 0;
	struct level *up = &w->lv[depth - 1];
	int fd = open_dir(w->lv[depth].fd, "..", 0);
	struct stat now;
	int r = fd < 0 ? fd : fk_sys.fstat(fd, &now);
	if (r == 0 && (now.st_dev != up->dev || now.st_ino != up->ino))
		r = -ESTALE; /* moved away while we were below it */
	if (r < 0) {
		if (fd >= 0)
			fk_sys.close(fd);
		report(w->ops, w->arg, "reopen", up->path, r);
		return r;
	}
	up->fd = fd;
	w->nr_open++;
	return 0;
}

/* What a read-ahead opened for an entry (struct fk_walk_entry). */
struct opened {
	int fd;
	int err;
};

static int visit(struct walker *w, int dirfd, const char *name,
		 const char *path, const struct stat *st, int depth,
		 const struct opened *ahead)
{
	const struct fk_walk_ops *ops = w->ops;
	void *arg = w->arg;
	struct fk_walk_entry e = {
	    .dirfd = dirfd,
	    .name = name,
	    .path = path,
	    .st = *st,
	    .depth = depth,
	    .fd = -1,
	    .open_err = 0,
	};

	if (!S_ISDIR(st->st_mode)) {
		if (ahead && S_ISREG(st->st_mode)) {
			e.fd = ahead->fd;
			e.open_err = ahead->fd < 0 ? ahead->err : 0;
		}
		return ops->entry ? ops->entry(arg, &e) : 0;
	}

	int follow = ops->follow == FK_WALK_FOLLOW_ALL ||
		     (depth == 0 && ops->follow == FK_WALK_FOLLOW_ROOT);
	int fd = open_dir(dirfd, name, follow);
	if (fd < 0)
		return report(ops, arg, "open", path, fd);
	struct stat now;
	int r = fk_sys.fstat(fd, &now);
	if (r == 0 && (now.st_dev != st->st_dev || now.st_ino != st->st_ino))
		r = -ENOENT; /* replaced between lstat and open: vanished */
	if (r < 0) {
		fk_sys.close(fd);
		return report(ops, arg, "stat", path, r);
	}
	for (int d = 0; follow && d < depth; d++) {
		if (w->lv[d].dev == now.st_dev && w->lv[d].ino == now.st_ino) {
			/* A symlink to an ancestor: a cycle, never entered. */
			fk_sys.close(fd);
			return report(ops, arg, "cyclic directory", path,
				      -ELOOP);
		}
	}
	if ((size_t)depth >= w->nr_lv) {
		size_t n = w->nr_lv ? w->nr_lv * 2 : 16;
		struct level *lv = realloc(w->lv, n * sizeof(*lv));
		if (!lv) {
			fk_sys.close(fd);
			return -ENOMEM;
		}
		w->lv = lv;
		w->nr_lv = n;
	}
	w->lv[depth] = (struct level){
	    .fd = fd, .dev = now.st_dev, .ino = now.st_ino, .path = path};
	w->nr_open++;
	bound_window(w, depth);
	e.st = now;
	e.fd = fd;

	int pre = ops->dir_pre ? ops->dir_pre(arg, &e) : 0;
	r = pre < 0 ? pre : 0;
	if (pre == 0) {
		struct dirlist l = {0};
		r = read_dir(fd, &l);
		if (r < 0)
			r = report(ops, arg, "getdents", path, r);
		struct readahead ra = {0};
		size_t i;
		for (i = 0; r >= 0 && i < l.nr; i++) {
			struct dent *d = &l.ents[i];
			const char *child = l.names + d->name_off;
			if (ops->readahead_bytes)
				read_ahead(w->lv[depth].fd, &l, i, &ra,
					   ops->readahead_bytes,
					   ops->readahead_fds);
			char *cpath = join(path, child);
			if (!cpath) {
				r = -ENOMEM;
				break;
			}
			/* Not fd: closed and opened again (another number)
			 * while a deep child was walked. */
			int dfd = w->lv[depth].fd;
			struct stat cst;
			int s = fk_sys.fstatat(dfd, child, &cst,
					       ops->follow == FK_WALK_FOLLOW_ALL
						   ? 0
						   : AT_SYMLINK_NOFOLLOW);
			struct stat lst;
			if (s == -ENOENT && ops->follow == FK_WALK_FOLLOW_ALL &&
			    fk_sys.fstatat(dfd, child, &lst,
					   AT_SYMLINK_NOFOLLOW) == 0) {
				/* A dangling symlink, not a vanished entry. */
				r = report(ops, arg, "cannot stat", cpath, s);
			} else if (s < 0) {
				r = report(ops, arg, "stat", cpath, s);
			} else {
				struct opened op = {d->fd, d->open_err};
				if (d->fd >= 0 && (!S_ISREG(cst.st_mode) ||
						   cst.st_dev != d->fdev ||
						   cst.st_ino != d->fino)) {
					/* Replaced since: the callback
					 * opens what is there now. */
					op.fd = -1;
				}
				r = visit(w, dfd, child, cpath, &cst, depth + 1,
					  &op);
			}
			if (d->fd >= 0)
				fk_sys.close(d->fd);
			d->fd = -1;
			free(cpath);
		}
		read_ahead_drop(&l, i);
		free(l.ents);
		free(l.names);
	}
	/* Below us, our parent may have been closed: open it again before
	 * dir_post (whose e->dirfd it is) and our return (to our parent,
	 * which goes on with it). */
	if (r >= 0)
		r = reopen_parent(w, depth);
	if (depth > 0)
		e.dirfd = w->lv[depth - 1].fd;
	e.fd = w->lv[depth].fd;
	if (r >= 0 && pre >= 0 && ops->dir_post)
		r = ops->dir_post(arg, &e);
	fk_sys.close(e.fd);
	w->lv[depth].fd = -1;
	w->nr_open--;
	return r < 0 ? r : 0;
}

int fk_walk(int at_fd, const char *root, const struct fk_walk_ops *ops,
	    void *arg)
{
	if (!root || !*root)
		return -ENOENT;
	size_t len = strlen(root);
	char *copy = strdup(root);
	if (!copy)
		return -ENOMEM;
	/* Strip trailing slashes, but keep "/" itself; a trailing slash
	 * after a symlink still follows it (below), as it does for stat. */
	int slashed = len > 1 && copy[len - 1] == '/';
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = 0;

	const char *parent, *name;
	char *slash = strrchr(copy, '/');
	if (!slash) {
		parent = ".";
		name = copy;
	} else if (slash == copy) {
		parent = "/";
		name = copy[1] ? copy + 1 : ".";
	} else {
		*slash = 0;
		parent = copy;
		name = slash + 1;
	}
	/* "dir/." and "dir/..": examine the directory itself. */
	int pfd;
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		pfd = fk_sys.openat(at_fd, root,
				    O_RDONLY | O_DIRECTORY | O_NOCTTY, 0);
		name = ".";
	} else {
		pfd = fk_sys.openat(at_fd, parent,
				    O_RDONLY | O_DIRECTORY | O_NOCTTY, 0);
	}
	if (pfd < 0) {
		free(copy);
		return pfd;
	}
	struct stat st;
	int r = fk_sys.fstatat(pfd, name, &st,
			       ops->follow ? 0 : AT_SYMLINK_NOFOLLOW);
	if (r == 0 && slashed && S_ISLNK(st.st_mode)) {
		/* "link/": the directory the symlink names is the root,
		 * examined as "dir/." is (ENOTDIR if it names no
		 * directory, as for stat). */
		fk_sys.close(pfd);
		pfd = fk_sys.openat(at_fd, root,
				    O_RDONLY | O_DIRECTORY | O_NOCTTY, 0);
		if (pfd < 0) {
			free(copy);
			return pfd;
		}
		name = ".";
		r = fk_sys.fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW);
	}
	if (r == 0) {
		/* Display paths start from the root as the user gave it. */
		char *path = strdup(root);
		size_t pl = path ? strlen(path) : 0;
		while (pl > 1 && path[pl - 1] == '/')
			path[--pl] = 0;
		struct walker w = {.ops = ops, .arg = arg};
		r = path ? visit(&w, pfd, name, path, &st, 0, NULL) : -ENOMEM;
		free(path);
		free(w.lv);
	}
	fk_sys.close(pfd);
	free(copy);
	return r;
}
