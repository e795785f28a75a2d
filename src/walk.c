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
 * Invariants:
 *  1. No path passed to a system call has more than one component
 *     (except the root as given by the caller), so depth is unlimited
 *     by PATH_MAX; open descriptors are bounded by the depth.
 *  2. A symlink is never followed: directories are opened O_NOFOLLOW
 *     and their identity is checked against the lstat result.
 *  3. dir_post of a directory runs after every callback for entries
 *     below it.
 */
#include "walk.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct dent {
	uint64_t ino;
	size_t name_off;
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

static int dirlist_add(struct dirlist *l, uint64_t ino, const char *name)
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
			int r = dirlist_add(l, d->d_ino, nm);
			if (r)
				return r;
		}
	}
	if (l->nr > 1)
		qsort(l->ents, l->nr, sizeof(*l->ents), cmp_ino);
	return 0;
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

static int visit(int dirfd, const char *name, const char *path,
		 const struct stat *st, int depth,
		 const struct fk_walk_ops *ops, void *arg)
{
	struct fk_walk_entry e = {
		.dirfd = dirfd,
		.name = name,
		.path = path,
		.st = *st,
		.depth = depth,
		.fd = -1,
	};

	if (!S_ISDIR(st->st_mode))
		return ops->entry ? ops->entry(arg, &e) : 0;

	int fd = fk_sys.openat(dirfd, name,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY,
			       0);
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
	e.st = now;
	e.fd = fd;

	int pre = ops->dir_pre ? ops->dir_pre(arg, &e) : 0;
	if (pre < 0) {
		fk_sys.close(fd);
		return pre;
	}
	r = 0;
	if (pre == 0) {
		struct dirlist l = {0};
		r = read_dir(fd, &l);
		if (r < 0)
			r = report(ops, arg, "getdents", path, r);
		for (size_t i = 0; r >= 0 && i < l.nr; i++) {
			const char *child = l.names + l.ents[i].name_off;
			char *cpath = join(path, child);
			if (!cpath) {
				r = -ENOMEM;
				break;
			}
			struct stat cst;
			int s = fk_sys.fstatat(fd, child, &cst,
					       AT_SYMLINK_NOFOLLOW);
			if (s < 0)
				r = report(ops, arg, "stat", cpath, s);
			else
				r = visit(fd, child, cpath, &cst, depth + 1,
					  ops, arg);
			free(cpath);
		}
		free(l.ents);
		free(l.names);
	}
	if (r >= 0 && ops->dir_post)
		r = ops->dir_post(arg, &e);
	fk_sys.close(fd);
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
	/* Strip trailing slashes, but keep "/" itself. */
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
	int r = fk_sys.fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW);
	if (r == 0) {
		/* Display paths start from the root as the user gave it. */
		char *path = strdup(root);
		size_t pl = path ? strlen(path) : 0;
		while (pl > 1 && path[pl - 1] == '/')
			path[--pl] = 0;
		r = path ? visit(pfd, name, path, &st, 0, ops, arg) : -ENOMEM;
		free(path);
	}
	fk_sys.close(pfd);
	free(copy);
	return r;
}
