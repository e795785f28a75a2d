// SPDX-License-Identifier: MIT
/*
 * tree_copy.c - fk_tree_copy(): copy a tree with cp -a semantics and
 * make the copy durable.  This file holds the design (below), the copy
 * context, the walker callbacks, setting up the destination and the
 * entry points; the other phases are in tree_copy_file.c, _links.c,
 * _meta.c, _durable.c and _prefetch.c (tree_copy.h lists what each
 * holds).
 *
 * The copy phase walks the source with fk_walk() (openat/fstatat/getdents
 * relative to directory descriptors, so no PATH_MAX limit) and recreates
 * every entry relative to an open descriptor of the matching destination
 * directory:
 *  - regular files: copy_file_range(2), falling back to pread/pwrite on
 *    EXDEV, ENOSYS, EINVAL or EOPNOTSUPP; a file with fewer allocated
 *    blocks than its size is copied segment by segment with
 *    SEEK_DATA/SEEK_HOLE so that its holes stay holes;
 *  - directories (mkdirat), symlinks (readlinkat/symlinkat, dangling ones
 *    too), FIFOs, sockets and devices (mknodat; never opened);
 *  - hard links: the first name of a source inode with st_nlink > 1 is
 *    copied and its destination path, relative to the directory the
 *    sources are copied into (the top's parent), is remembered under the
 *    source's (st_dev, st_ino) in one map for every source of the call
 *    (fk_tree_copy_sources, as cp -a SRC... DIR); later names become
 *    linkat() of it, while the first copy is still the inode made and
 *    the source name the inode copied (struct link_map).  A remembered
 *    path longer than PATH_MAX is resolved one component at a time with
 *    openat(O_PATH).
 *  - read-ahead: the walk opens the next regular files of the directory
 *    being copied and starts their reads (walk.h readahead_bytes,
 *    COPY_READAHEAD_BYTES and an eighth of the descriptor window ahead),
 *    and copy_regular takes the descriptor (or that open's error) from
 *    the entry: each source file is opened once, and a cold source's
 *    reads overlap the copy instead of waiting one file at a time;
 *  - metadata after content: owner (when root), xattrs (best effort),
 *    mode, then timestamps; a directory's after everything below it.  A
 *    regular file's timestamps wait until its data is durable, a
 *    directory's until its entries are (see times_pass): an incomplete
 *    file never carries its source's size and mtime, nor a directory
 *    missing names its source's mtime, even after a power cut.
 * New files are created 0600 and directories 0700 (never group/world
 * accessible while incomplete) and get the source's mode only once their
 * content is in place, so 0000 and 0444 sources copy fine.
 *
 * The durability phase depends on the method (enum fk_copy_method):
 *  - FK_COPY_FSYNC_EACH: fsync each file right after writing it, and each
 *    directory after its contents (the baseline, as rsync --fsync);
 *  - FK_COPY_DELAYED: fsync every file, then every directory bottom-up,
 *    once the whole copy is done (fk_tree_fsync_pass);
 *  - FK_COPY_WRITEBACK (default): as delayed, but start writeback of
 *    written data every flush_after_bytes while copying
 *    (sync_file_range(SYNC_FILE_RANGE_WRITE) through struct fk_writeback),
 *    so the final fsyncs find little dirty data;
 *  - FK_COPY_SYNCFS: one syncfs(2) of each file system the copy wrote
 *    to: the destination's, and any mounted on a directory inside it
 *    (struct fk_fsset of tree.h, as sync --method=syncfs).
 * In every method the destination's parent directory is fsynced last, so
 * the new top-level name is durable.  Before it, times_pass sets each
 * copied file's and directory's times (its data or entries are durable
 * by then) and makes them durable: an fsync of each (each inode is
 * fsynced twice: data or entries, then times), or with FK_COPY_SYNCFS a
 * second syncfs.
 *
 * Descriptors of written files and directories are kept open until their
 * fsync while the descriptor budget allows (the fd map of tree.h): a
 * writeback error can be lost if the inode is evicted between close and
 * reopen.
 *
 * Errors: a failed fsync is reported with its path, recorded, never
 * retried, and makes the copy fail.  ENOSPC/EDQUOT while writing stops the
 * copy at once; the file being written is left in place, incomplete (mode
 * 0600, shorter than its source), and reported as "copy stopped,
 * incomplete file".  An unreadable source entry is reported and skipped;
 * the rest is copied and the copy fails at the end.  A source entry that
 * vanished during the walk is counted and warned about; a copied file
 * gone from (or replaced in) the destination before it was durable is
 * an error (invariant 8).
 *
 * Invariants of a copy run (struct copy_ctx):
 *  1. A destination file exists with mode 0600 (a directory 0700) until
 *     its content, owner and xattrs are in place; only then does it get
 *     the source's mode, then its times.
 *  2. A directory's mode is set in dir_post, after every entry below it
 *     was created, so creating entries does not change it; its times
 *     only in times_pass, after the fsync that made its entries durable
 *     (or the syncfs), then it is fsynced again.  Set in dir_post, they
 *     could reach the disk before its names: btrfs makes a directory's
 *     inode durable with the fsync of a file in it (its log tree)
 *     without the names not fsynced yet, and a power cut during the copy
 *     left directories with their source's mtime and names missing
 *     (tests/cut/t-cut-cp-dir-times.sh).
 *  3. levels[d].fd is the open destination directory matching the source
 *     directory at depth d while the walk is below it, else -1; entries
 *     at depth d + 1 are created relative to it and nothing else.  At
 *     most FK_WALK_MAX_DIR_FDS levels below the top are open: past it
 *     the shallowest open one (never the parent of the deepest) is
 *     closed (levels[d].closed), and opened again through ".." of its
 *     child, checked to be the same inode, in the child's dir_post,
 *     before anything is created in it again.
 *  9. A directory any of whose entries could not be copied (an error
 *     reported for it, or for something below it) is incomplete
 *     (levels[d].incomplete, passed up to its parent): it gets its
 *     source's mode but keeps its creation time, so that a time
 *     comparison never takes it for complete.
 *  4. A descriptor with pending writeback ranges is never closed with
 *     them: it is kept in the fd map until its fsync, or its ranges are
 *     issued (fk_writeback_issue) before close.
 *  5. Once c->stop is set (ENOSPC, ENOMEM) nothing more is created,
 *     written or fsynced.
 *  6. The destination's parent directory is the last thing fsynced.
 *  7. A regular file's times are set only after its data is durable
 *     (its fsync or the syncfs returned 0); a file whose fsync failed,
 *     or a copy that stopped, keeps its creation time.
 *  8. The copy succeeds only if every regular file it wrote is still,
 *     after the data fsyncs, the inode (st_dev, st_ino) it wrote at the
 *     name it gave it: times_pass looks each one up by that identity,
 *     and one removed, renamed or replaced by someone else is an error
 *     naming its path.  The final fsync pass walks the destination by
 *     name, so it alone never notices a file that is not there.
 *
 * Interface: fk_tree_copy(), fk_tree_copy_sources() (include/flushkit.h,
 * section tree).
 */
#include "tree_copy.h"
#include "flushkit.h"
#include "sys.h"
#include "tree.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <unistd.h>

/* ---- the copy context ---- */

/* Display path of the destination of @e (in c->dpath). */
static const char *dst_path(struct copy_ctx *c, const struct fk_walk_entry *e)
{
	sbuf_truncate(&c->dpath, 0);
	if (sbuf_add(&c->dpath, c->dst_display, strlen(c->dst_display)))
		return e->path;
	if (e->depth > 0) {
		size_t n = strlen(e->path);
		const char *rest =
		    n >= c->src_root_len ? e->path + c->src_root_len : "";
		while (*rest == '/' && c->dpath.len &&
		       c->dpath.buf[c->dpath.len - 1] == '/')
			rest++;
		if (*rest != '/' && c->dpath.len &&
		    c->dpath.buf[c->dpath.len - 1] != '/')
			sbuf_add(&c->dpath, "/", 1);
		if (sbuf_add(&c->dpath, rest, strlen(rest)))
			return e->path;
	}
	return c->dpath.buf;
}

/* The destination directory of @e and @e's name in it. */
static int dst_dir(struct copy_ctx *c, const struct fk_walk_entry *e,
		   const char **name)
{
	if (e->depth == 0) {
		*name = c->dst_name;
		return c->dst_parent_fd;
	}
	*name = e->name;
	if ((size_t)e->depth > c->nr_levels)
		return -1;
	const struct dst_level *l = &c->levels[e->depth - 1];
	return l->skip ? -1 : l->fd;
}

/* ---- walker callbacks ---- */

static int grow_levels(struct copy_ctx *c, size_t depth)
{
	if (depth < c->nr_levels)
		return 0;
	size_t n = c->nr_levels ? c->nr_levels * 2 : 16;
	while (n <= depth)
		n *= 2;
	struct dst_level *l = realloc(c->levels, n * sizeof(*l));
	if (!l)
		return -ENOMEM;
	for (size_t i = c->nr_levels; i < n; i++)
		l[i] = (struct dst_level){.fd = -1, .skip = 1};
	c->levels = l;
	c->nr_levels = n;
	return 0;
}

/* Invariant 3: close the shallowest open level above the parent of
 * @depth while more than FK_WALK_MAX_DIR_FDS are open. */
static void bound_levels(struct copy_ctx *c, int depth)
{
	for (int d = 1;
	     c->nr_open_levels > FK_WALK_MAX_DIR_FDS && d < depth - 1; d++) {
		struct dst_level *l = &c->levels[d];
		if (l->fd < 0)
			continue;
		fk_sys.close(l->fd);
		l->fd = -1;
		l->closed = 1;
		c->nr_open_levels--;
	}
}

/* Invariant 3: open level @depth - 1 again through ".." of @fd (level
 * @depth) if it was closed.  Returns 0 or -errno (reported; the copy
 * stops: nothing more can be created where it belongs). */
static int reopen_level(struct copy_ctx *c, int depth, int fd,
			const char *dpath)
{
	if (depth < 2 || !c->levels[depth - 1].closed)
		return 0;
	struct dst_level *up = &c->levels[depth - 1];
	int ufd =
	    fk_sys.openat(fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
	struct stat now;
	int r = ufd < 0 ? ufd : fk_sys.fstat(ufd, &now);
	if (r == 0 && (now.st_dev != up->dev || now.st_ino != up->ino))
		r = -ESTALE; /* moved away by someone else */
	if (r < 0) {
		if (ufd >= 0)
			fk_sys.close(ufd);
		fk_copy_report(c, FK_REPORT_ERROR, "reopen the directory above",
			       dpath, r);
		c->stop = r;
		return r;
	}
	up->fd = ufd;
	up->closed = 0;
	c->nr_open_levels++;
	return 0;
}

/* Invariant 9: the directory holding the entries at @depth misses one. */
static void mark_incomplete(struct copy_ctx *c, int depth)
{
	if (depth >= 0 && (size_t)depth < c->nr_levels)
		c->levels[depth].incomplete = 1;
}

static int dir_pre(struct copy_ctx *c, const struct fk_walk_entry *e);

static int on_dir_pre(void *arg, const struct fk_walk_entry *e)
{
	struct copy_ctx *c = arg;
	uint64_t errors = c->st->errors;
	int r = dir_pre(c, e);
	/* Not created, or not as its source: its parent is incomplete. */
	if (c->st->errors != errors)
		mark_incomplete(c, e->depth - 1);
	return r;
}

static int dir_pre(struct copy_ctx *c, const struct fk_walk_entry *e)
{
	if (e->depth == 0) {
		c->src_root_len = strlen(e->path);
		c->src_dev = e->st.st_dev;
	}
	if (grow_levels(c, (size_t)e->depth))
		return -ENOMEM;
	struct dst_level *lv = &c->levels[e->depth];
	*lv =
	    (struct dst_level){.fd = -1, .skip = 1, .rel_len = c->relpath.len};

	const char *name;
	int ddir = dst_dir(c, e, &name);
	if (ddir < 0 && e->depth > 0)
		return 1; /* parent was not copied */
	const char *dpath = dst_path(c, e);

	/* Do not copy the destination into itself (cp -a dir dir/sub). */
	if (c->top_fd >= 0 && e->st.st_dev == c->top_dev &&
	    e->st.st_ino == c->top_ino) {
		fk_copy_refuse(c, fk_copy_into_self_op, e->path, dpath,
			       -EINVAL);
		return 1;
	}

	int r = fk_sys.mkdirat(ddir, name, 0700);
	int created = r == 0;
	if (r == -EEXIST) {
		struct stat s;
		r = fk_sys.fstatat(ddir, name, &s, AT_SYMLINK_NOFOLLOW);
		if (r == 0 && !S_ISDIR(s.st_mode))
			r = -ENOTDIR; /* cannot overwrite non-directory */
	}
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "mkdir", dpath, r);
		if (fk_copy_is_space_err(r)) {
			c->stop = r;
			return r;
		}
		return 1;
	}
	int fd =
	    fk_sys.openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
	if (fd < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "open", dpath, fd);
		return 1;
	}
	struct stat ds;
	r = fk_sys.fstat(fd, &ds);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "stat", dpath, r);
		fk_sys.close(fd);
		return e->depth == 0 ? r : 1;
	}
	c->st->dirs++;
	lv->fd = fd;
	lv->skip = 0;
	lv->dev = ds.st_dev;
	lv->ino = ds.st_ino;
	lv->old_mode = created ? -1 : (int)(ds.st_mode & 07777);
	c->depth_now = e->depth;
	if (c->fsset && !fk_fsset_has(c->fsset, ds.st_dev)) {
		/* syncfs: a file system the copy writes to (the top's, or
		 * one mounted on this directory). */
		int sfd = fk_sys.openat(fd, ".", O_RDONLY | O_DIRECTORY, 0);
		r = sfd < 0 ? sfd
			    : fk_fsset_add(c->fsset, ds.st_dev, sfd, dpath);
		if (r < 0) {
			fk_copy_report(c, FK_REPORT_ERROR, "open", dpath, r);
			c->stop = r;
			return r;
		}
	}
	if (e->depth == 0) {
		c->top_fd = fd;
		c->top_dev = ds.st_dev;
		c->top_ino = ds.st_ino;
		c->top_is_dir = 1;
	} else {
		c->nr_open_levels++;
		bound_levels(c, e->depth);
		if (c->relpath.len)
			sbuf_add(&c->relpath, "/", 1);
		if (sbuf_add(&c->relpath, name, strlen(name)))
			return -ENOMEM;
	}
	if (created) /* cp -v says nothing of a directory merged into */
		fk_copy_copied(c, e, dpath);
	fk_copy_progress(c);
	/* cp -x: the mount point is copied, not what is mounted on it. */
	if ((c->o->copy_flags & FK_COPY_ONE_FS) && e->depth > 0 &&
	    e->st.st_dev != c->src_dev)
		return 1;
	return 0;
}

static int on_dir_post(void *arg, const struct fk_walk_entry *e)
{
	struct copy_ctx *c = arg;
	if ((size_t)e->depth >= c->nr_levels)
		return c->stop;
	struct dst_level *lv = &c->levels[e->depth];
	sbuf_truncate(&c->relpath, lv->rel_len);
	if (lv->skip || lv->fd < 0 || c->stop)
		return c->stop;
	c->depth_now = e->depth - 1;
	int fd = lv->fd;
	const char *dpath = dst_path(c, e);
	if (reopen_level(c, e->depth, fd, dpath) < 0)
		return c->stop;
	/* Its times wait for its entries to be durable (invariant 2);
	 * invariant 9: an incomplete directory keeps its creation time. */
	uint64_t errors = c->st->errors;
	c->keep_mode = lv->old_mode;
	fk_copy_set_meta_fd(c, e->fd, fd, &e->st, dpath, 0);
	struct stat ds;
	int sr = fk_sys.fstat(fd, &ds);
	if (sr < 0)
		fk_copy_report(c, FK_REPORT_ERROR, "stat", dpath, sr);
	if (lv->incomplete || c->st->errors != errors)
		mark_incomplete(c, e->depth - 1);
	else
		fk_copy_defer_times(c, e, e->name, &ds, &e->st, dpath);
	if (c->method == FK_COPY_FSYNC_EACH)
		fk_copy_fsync_now(c, fd, 1, dpath);
	if (e->depth == 0)
		return c->stop; /* the top stays open until the end */
	lv->fd = -1;
	c->nr_open_levels--;
	if (sr == 0)
		fk_copy_release_fd(c, fd, &ds, 1, dpath);
	else
		fk_sys.close(fd);
	return c->stop;
}

static int on_entry(void *arg, const struct fk_walk_entry *e)
{
	struct copy_ctx *c = arg;
	if (e->depth == 0)
		c->src_root_len = strlen(e->path);
	if (S_ISREG(e->st.st_mode)) {
		/* Where the copy is, for the read-ahead across directories. */
		fk_prefetch_reached(c->prefetch, c->src_pos);
		c->src_pos += (uint64_t)e->st.st_size;
	}
	const char *name;
	int ddir = dst_dir(c, e, &name);
	if (ddir < 0)
		return 0; /* parent was not copied */
	const char *dpath = dst_path(c, e);
	uint64_t errors = c->st->errors;
	unsigned f = c->o->copy_flags;
	c->keep_mode = -1;
	int r = fk_copy_keep_existing(c, e, ddir, name, dpath);
	if (r == 0)
		r = fk_copy_ask_overwrite(c, e, ddir, name, dpath);
	if (r == 0 && (f & (FK_COPY_LINK | FK_COPY_SYMLINK))) {
		r = fk_copy_link_entry(c, e, ddir, name, dpath);
		r = r < 0 ? r : 1;
	}
	if (r == 0)
		r = fk_copy_try_hardlink(c, e, ddir, name, dpath);
	if (r == 0) {
		mode_t t = e->st.st_mode & S_IFMT;
		if (t == S_IFREG)
			r = fk_copy_regular(c, e, ddir, name, dpath);
		else if ((f & FK_COPY_CONTENTS) &&
			 (t == S_IFIFO || t == S_IFCHR || t == S_IFBLK))
			r = fk_copy_stream(c, e, ddir, name, dpath);
		else if (t == S_IFLNK)
			r = fk_copy_symlink(c, e, ddir, name, dpath);
		else
			r = fk_copy_special(c, e, ddir, name, dpath);
	} else if (r > 0) {
		r = 0;
	}
	/* Invariant 9: not copied, or not as its source. */
	if (c->st->errors != errors)
		mark_incomplete(c, e->depth - 1);
	fk_copy_progress(c);
	return r;
}

static int on_error(void *arg, const char *op, const char *path, int err)
{
	struct copy_ctx *c = arg;
	if (err == -ENOENT && strcmp(op, "cannot stat")) {
		c->st->vanished++;
		fk_copy_report(c, FK_REPORT_WARNING, "vanished", path, err);
	} else {
		fk_copy_report(c, FK_REPORT_ERROR, op, path, err);
		/* Invariant 9: an entry of the directory being copied into
		 * (or its own listing) could not be read. */
		mark_incomplete(c, c->depth_now);
	}
	return 0;
}

/* ---- setting up the destination ---- */

/* Copy of the last component of @path (trailing slashes ignored). */
static char *base_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	return strndup(path + b, n - b);
}

/* Copy of all but the last component of @path ("." if none). */
static char *dir_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n == 0)
		return strdup(".");
	return strndup(path, n);
}

/*
 * 1 if the directory open at @dirfd is the directory @src or below it:
 * walks up through ".." (O_PATH, so unreadable ancestors are fine) to
 * the root.  0 if not or if an ancestor cannot be examined (the walk's
 * own check in on_dir_pre still applies), -ENOMEM never.
 */
static int dir_is_under(int dirfd, const struct stat *src)
{
	int fd = fk_sys.openat(dirfd, ".", O_PATH | O_DIRECTORY, 0);
	int found = 0;
	for (int level = 0; fd >= 0 && level < 4096; level++) {
		struct stat s;
		if (fk_sys.fstat(fd, &s) < 0)
			break;
		if (s.st_dev == src->st_dev && s.st_ino == src->st_ino) {
			found = 1;
			break;
		}
		int up = fk_sys.openat(fd, "..", O_PATH | O_DIRECTORY, 0);
		struct stat us;
		int top = up < 0 || fk_sys.fstat(up, &us) < 0 ||
			  (us.st_dev == s.st_dev && us.st_ino == s.st_ino);
		fk_sys.close(fd);
		fd = up;
		if (top)
			break;
	}
	if (fd >= 0)
		fk_sys.close(fd);
	return found;
}

/* Whether the destination @d is one that an earlier source of this call
 * created (struct link_map, made). */
static int made_earlier(const struct copy_ctx *c, const struct stat *d)
{
	for (size_t i = 0; i < c->links->nr_made; i++)
		if (c->links->made[i].dev == d->st_dev &&
		    c->links->made[i].ino == d->st_ino)
			return 1;
	return 0;
}

/*
 * The checks of resolve_dst for the non-directory source @src (lstat
 * @ss) whose copy would replace the non-directory @name (lstat @ds) in
 * the directory @dfd (@display): existing_ok's, and cp's refusal to
 * replace what an earlier source of the same call just created (two
 * sources with one basename: the second would destroy the first's
 * copy, or write through the symlink it made).  With
 * FK_COPY_UPDATE_NONE nothing is checked: nothing is replaced.  Returns
 * 0 to go on, 1 if there is nothing to do, or -errno (reported).
 */
static int top_existing_ok(struct copy_ctx *c, const char *src,
			   const struct stat *ss, int dfd, const char *name,
			   const struct stat *ds, const char *display)
{
	if (c->o->update == FK_COPY_UPDATE_NONE)
		return 0;
	if (made_earlier(c, ds)) {
		fk_copy_refuse(c,
			       S_ISLNK(ds->st_mode)
				   ? fk_copy_just_created_symlink_op
				   : fk_copy_just_created_op,
			       src, display, -EEXIST);
		return -EEXIST;
	}
	char *sdir_name = dir_name(src), *sname = base_name(src);
	int sdir = sdir_name ? fk_sys.openat(AT_FDCWD, sdir_name,
					     O_PATH | O_DIRECTORY, 0)
			     : -ENOMEM;
	const char *what = "open";
	int r = sdir < 0 ? sdir : !sname ? -ENOMEM : 0;
	if (r == 0)
		r = fk_copy_existing_ok(sdir, sname, ss, dfd, name, ds,
					fk_copy_existing_flags(c), &what);
	if (sdir >= 0)
		fk_sys.close(sdir);
	free(sdir_name);
	free(sname);
	if (r < 0)
		fk_copy_refuse(c, what, src, display, r);
	return r;
}

/*
 * Resolve where the copy goes, cp-style: an existing directory @dst
 * receives @dst/basename(@src); otherwise @dst itself is the copy.
 * Sets c->dst_parent_fd, c->dst_name, c->dst_display (allocated in
 * *@name_out / *@display_out).
 */
static int resolve_dst(struct copy_ctx *c, const char *src, const char *dst,
		       char **name_out, char **display_out)
{
	struct stat ss, ds;
	int r = fk_sys.fstatat(AT_FDCWD, src, &ss,
			       c->o->copy_flags &
				       (FK_COPY_DEREF | FK_COPY_DEREF_ARGS)
				   ? 0
				   : AT_SYMLINK_NOFOLLOW);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "stat", src, r);
		return r;
	}
	char *parent = NULL, *name = NULL, *display = NULL;
	r = fk_sys.fstatat(AT_FDCWD, dst, &ds, 0);
	if (r == -ELOOP) /* a symlink loop: in the way, not a directory */
		r = fk_sys.fstatat(AT_FDCWD, dst, &ds, AT_SYMLINK_NOFOLLOW);
	int no_target = c->o->copy_flags & FK_COPY_NO_TARGET_DIR;
	if (r == 0 && S_ISDIR(ds.st_mode) && no_target &&
	    !S_ISDIR(ss.st_mode)) {
		/* cp -T f dir */
		fk_copy_report(c, FK_REPORT_ERROR,
			       "cannot overwrite directory with non-directory",
			       dst, -EISDIR);
		return -EISDIR;
	}
	if (r == 0 && S_ISDIR(ds.st_mode) && !no_target) {
		name = base_name(src);
		if (!name)
			return -ENOMEM;
		if (!strcmp(name, "/") || !strcmp(name, "..")) {
			/* cp -a / d, cp -a .. d: the contents go into d,
			 * as for cp -a . d. */
			free(name);
			name = strdup(".");
		}
		parent = strdup(dst);
		size_t dl = strlen(dst);
		display = malloc(dl + strlen(name ? name : "") + 2);
		if (!name || !parent || !display) {
			r = -ENOMEM;
			goto fail;
		}
		sprintf(display, "%s%s%s", dst,
			dl && dst[dl - 1] == '/' ? "" : "/", name);
	} else if (r == 0 || r == -ENOENT) {
		if (r == 0 && S_ISDIR(ss.st_mode) && !S_ISDIR(ds.st_mode)) {
			fk_copy_report(c, FK_REPORT_ERROR,
				       "cannot overwrite non-directory", dst,
				       -ENOTDIR);
			return -ENOTDIR;
		}
		size_t dl = strlen(dst);
		if (!S_ISDIR(ss.st_mode) && dl && dst[dl - 1] == '/') {
			/* cp -a f new/: a trailing slash names a directory,
			 * never the copy of a file. */
			fk_copy_report(c, FK_REPORT_ERROR, "create", dst,
				       -ENOTDIR);
			return -ENOTDIR;
		}
		name = base_name(dst);
		parent = dir_name(dst);
		display = strdup(dst);
		if (!name || !parent || !display) {
			r = -ENOMEM;
			goto fail;
		}
	} else {
		fk_copy_report(c, FK_REPORT_ERROR, "stat", dst, r);
		return r;
	}
	r = fk_sys.openat(AT_FDCWD, parent, O_RDONLY | O_DIRECTORY, 0);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "open", parent, r);
		goto fail;
	}
	c->dst_parent_fd = r;
	c->dst_parent_display = parent;
	/* cp: cannot copy a directory into itself.  Refused before anything
	 * is created (the walk would otherwise copy all but the new top). */
	if (S_ISDIR(ss.st_mode) && dir_is_under(r, &ss)) {
		fk_copy_refuse(c, fk_copy_into_self_op, src, display, -EINVAL);
		free(name);
		free(display);
		return -EINVAL;
	}
	/* A non-directory in the way of a non-directory source: cp -a's
	 * checks, before anything is created or removed. */
	int x = 0;
	if (!S_ISDIR(ss.st_mode) &&
	    fk_sys.fstatat(r, name, &ds, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(ds.st_mode))
		x = top_existing_ok(c, src, &ss, r, name, &ds, display);
	if (x) {
		free(name);
		free(display);
		return x;
	}
	*name_out = name;
	*display_out = display;
	c->dst_name = name;
	c->dst_display = display;
	return 0;
fail:
	free(parent);
	free(name);
	free(display);
	return r;
}

/* Whether @o is a valid set of fk_tree_copy options. */
static int copy_opts_valid(const struct fk_tree_opts *o)
{
	return (unsigned int)o->copy_method <= FK_COPY_AUTO &&
	       o->update >= FK_COPY_UPDATE_ALL &&
	       o->update <= FK_COPY_UPDATE_DIFFERENT &&
	       o->reflink >= FK_COPY_REFLINK_AUTO &&
	       o->reflink <= FK_COPY_REFLINK_NEVER &&
	       o->sparse >= FK_COPY_SPARSE_AUTO &&
	       o->sparse <= FK_COPY_SPARSE_NEVER &&
	       (o->reflink != FK_COPY_REFLINK_ALWAYS ||
		o->sparse == FK_COPY_SPARSE_AUTO) &&
	       !(o->copy_flags &
		 ~(unsigned int)(FK_COPY_NO_TARGET_DIR | FK_COPY_ONE_FS |
				 FK_COPY_CHECKSUM | FK_COPY_REMOVE_DEST |
				 FK_COPY_FORCE | FK_COPY_LINK |
				 FK_COPY_SYMLINK | FK_COPY_DEREF |
				 FK_COPY_DEREF_ARGS | FK_COPY_ATTR_ONLY |
				 FK_COPY_NO_MODE | FK_COPY_NO_OWNER |
				 FK_COPY_NO_TIMES | FK_COPY_NO_LINKS |
				 FK_COPY_NO_XATTR | FK_COPY_CONTENTS)) &&
	       (o->copy_flags & (FK_COPY_LINK | FK_COPY_SYMLINK)) !=
		   (FK_COPY_LINK | FK_COPY_SYMLINK) &&
	       o->backup >= FK_COPY_BACKUP_NONE &&
	       o->backup <= FK_COPY_BACKUP_EXISTING;
}

/* The process's umask, for FK_COPY_NO_MODE: read from /proc/self/status
 * (no umask(2) round trip, which would change it for other threads for
 * a moment); 022 if it cannot be read. */
static mode_t process_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned int m = 022;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	if (f)
		fclose(f);
	return (mode_t)(m & 0777);
}

/*
 * Copy one source @src to @dst and make it durable (the whole of
 * fk_tree_copy for one source).  @links is the hard-link map of the
 * call: the first copies of the inodes copied so far by this and the
 * earlier sources, relative to the directory they were copied into.
 * @st is zeroed and filled.  *@refused is set when no later source may
 * be tried: it failed before anything was done, in a way every later
 * source would fail the same (the descriptor limit, the fsync batch's
 * setup, no memory), said once; or its copy stopped (ENOSPC, EDQUOT,
 * ENOMEM), after which nothing more is written or fsynced in the call.
 */
static int copy_source(const char *src, const char *dst,
		       const struct fk_tree_opts *o, struct fk_tree_stats *st,
		       struct link_map *links, int *refused)
{
	char *name = NULL, *display = NULL;
	memset(st, 0, sizeof(*st));
	uint64_t t0 = fk_now_ns();
	struct copy_ctx c = {
	    .o = o,
	    .st = st,
	    .method = o->copy_method,
	    .is_root = geteuid() == 0,
	    .dst_parent_fd = -1,
	    .top_fd = -1,
	    .start_ns = t0,
	    .links = links,
	    .umask = process_umask(),
	    .keep_mode = -1,
	};
	c.fo.report = o->report;
	c.fo.report_arg = o->report_arg;
	c.fo.drop_cache = o->drop_cache;
	c.fo.progress = o->progress;
	c.fo.progress_arg = o->progress_arg;
	c.use_wb = c.method == FK_COPY_WRITEBACK && o->flush_after_bytes > 0;
	c.keep_fds = c.method == FK_COPY_WRITEBACK ||
		     c.method == FK_COPY_DELAYED || c.method == FK_COPY_AUTO;
	c.times_by_syncfs = c.method == FK_COPY_SYNCFS;
	c.depth_now = -1;
	/* --reflink=never: copy_file_range may share extents too. */
	c.no_cfr = o->reflink == FK_COPY_REFLINK_NEVER ||
		   o->sparse != FK_COPY_SPARSE_AUTO; /* holes as we say */
	fk_writeback_init(&c.wb, c.use_wb ? o->flush_after_bytes : 0);
	int r = 0;
	/* The final fsync phase is batched; fsync-each stays one at a time
	 * (the baseline), syncfs has none. */
	*refused = 1;
	if (c.keep_fds) {
		r = fk_tree_batch_create(o, st, &c.fo.batch);
		if (r < 0)
			goto out;
	}
	if (c.method == FK_COPY_SYNCFS || c.method == FK_COPY_AUTO) {
		r = fk_fsset_create(&c.fsset);
		if (r < 0)
			goto out;
	}
	/* After the batch: io_uring's ring is a descriptor too. */
	r = fk_tree_fd_check(&c.fo, st, src);
	if (r < 0)
		goto out;
	*refused = 0;
	/* Descriptors kept until their fsync: writeback and delayed; an
	 * eighth of the window (at most FK_WALK_READAHEAD_FDS) for the
	 * source files opened ahead. */
	size_t keep = fk_fd_window();
	size_t ahead_fds = keep / 8;
	if (ahead_fds > FK_WALK_READAHEAD_FDS)
		ahead_fds = FK_WALK_READAHEAD_FDS;
	keep -= ahead_fds;
	/* The read-ahead across directories: where the window has room. */
	int prefetch = ahead_fds >= COPY_PREFETCH_MIN_AHEAD_FDS;
	if (prefetch)
		keep -= COPY_PREFETCH_FDS;
	if (!c.keep_fds)
		keep = 0;
	r = fk_fdmap_create(keep, &c.fdmap);
	if (r < 0)
		goto out;

	r = resolve_dst(&c, src, dst, &name, &display);
	if (r == 1)
		r = 0; /* nothing to do: two links of one symlink */
	if (r < 0 || !c.dst_name)
		goto out;

	struct fk_walk_ops ops = {
	    .dir_pre = on_dir_pre,
	    .dir_post = on_dir_post,
	    .entry = on_entry,
	    .error = on_error,
	    .readahead_bytes = ahead_fds ? COPY_READAHEAD_BYTES : 0,
	    .readahead_fds = ahead_fds,
	    .follow = o->copy_flags & FK_COPY_DEREF	   ? FK_WALK_FOLLOW_ALL
		      : o->copy_flags & FK_COPY_DEREF_ARGS ? FK_WALK_FOLLOW_ROOT
							   : 0,
	};
	if (prefetch && fk_prefetch_start(AT_FDCWD, src, COPY_PREFETCH_BYTES,
					  !!(o->copy_flags & FK_COPY_ONE_FS),
					  &c.prefetch) < 0)
		c.prefetch = NULL; /* a hint: the copy goes on without */
	r = fk_walk(AT_FDCWD, src, &ops, &c);
	fk_prefetch_stop(c.prefetch);
	c.prefetch = NULL;
	if (r < 0 && !c.stop) {
		c.stop = r;
		if (!c.first_err)
			fk_copy_report(&c, FK_REPORT_ERROR, "walk", src, r);
	}
	/* What this source made at the top, for the later ones'
	 * (top_existing_ok). */
	struct stat made;
	if (fk_sys.fstatat(c.dst_parent_fd, c.dst_name, &made,
			   AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(made.st_mode))
		fk_copy_link_made(links, &made);
	/* Close the destination directories left open by an abort. */
	for (size_t i = 1; i < c.nr_levels; i++)
		if (c.levels[i].fd >= 0)
			fk_sys.close(c.levels[i].fd);
	/* fsync-each interleaves its fsyncs with the copy: they count as
	 * fsync time, the rest as copy time. */
	uint64_t t1 = fk_now_ns();
	st->walk_ns = t1 - t0 - c.inline_fsync_ns;
	st->fsync_ns = c.inline_fsync_ns;

	if (c.stop) {
		/* Stopped (ENOSPC, ENOMEM): the partial copy is left as it
		 * is and not made durable, and no later source is copied. */
		r = c.stop;
		if (fk_copy_is_space_err(r) || r == -ENOMEM)
			*refused = 1;
	} else {
		int fr = fk_copy_durability_phase(&c);
		st->fsync_ns += fk_now_ns() - t1;
		r = fk_tree_result(c.first_err, fr);
		if (!r && st->degraded)
			r = -FK_EDEGRADED;
	}
out:
	if (c.top_fd >= 0)
		fk_sys.close(c.top_fd);
	if (c.dst_parent_fd >= 0)
		fk_sys.close(c.dst_parent_fd);
	fk_fdmap_destroy(c.fdmap);
	fk_fsset_destroy(c.fsset);
	fk_fsync_batch_destroy(c.fo.batch);
	free(name);
	free(display);
	free(c.dst_parent_display);
	st->writeback_ranges = c.wb.ranges_issued;
	st->writeback_bytes = c.wb.bytes_issued;
	fk_writeback_release(&c.wb);
	free(c.levels);
	free(c.relpath.buf);
	free(c.dpath.buf);
	free(c.buf);
	for (size_t i = 0; i < c.nr_times; i++)
		free(c.times[i].relpath);
	free(c.times);
	st->total_ns = fk_now_ns() - t0;
	return r;
}

int fk_tree_copy_sources(const char *const *srcs, size_t nr_srcs,
			 const char *dst, const struct fk_tree_opts *o,
			 struct fk_tree_stats *st)
{
	struct fk_tree_opts defaults;
	struct fk_tree_stats local, one;
	if (!o) {
		fk_tree_opts_init(&defaults);
		o = &defaults;
	}
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (!srcs || !nr_srcs || !dst || !copy_opts_valid(o) ||
	    (nr_srcs > 1 && (o->copy_flags & FK_COPY_NO_TARGET_DIR)))
		return -EINVAL;
	for (size_t i = 0; i < nr_srcs; i++)
		if (!srcs[i])
			return -EINVAL;
	if (nr_srcs > 1) {
		/* SRC... DIR: each source goes into DIR, which must be a
		 * directory (so that every copy's parent is DIR, where the
		 * link map's paths start). */
		struct stat ds;
		int r = fk_sys.fstatat(AT_FDCWD, dst, &ds, 0);
		if (r == 0 && !S_ISDIR(ds.st_mode))
			r = -ENOTDIR;
		if (r < 0) {
			struct fk_tree_fsync_opts fo = {
			    .report = o->report,
			    .report_arg = o->report_arg,
			};
			fk_tree_report(&fo, st, FK_REPORT_ERROR, "target", dst,
				       r);
			return r;
		}
	}
	/* One hard-link map for every source: two names of one inode
	 * under different sources stay one inode, as with cp -a. */
	struct link_map links = {0};
	links.durable = calloc(nr_srcs, 1);
	if (!links.durable)
		return -ENOMEM;
	int result = 0;
	int refused = 0;
	for (size_t i = 0; i < nr_srcs && !refused; i++) {
		links.src = (unsigned)i;
		int r = copy_source(srcs[i], dst, o, &one, &links, &refused);
		links.durable[i] = r == 0 || r == -FK_EDEGRADED;
		fk_tree_stats_add(st, &one);
		result = fk_tree_result(result, r);
	}
	fk_copy_link_map_release(&links);
	return result;
}

int fk_tree_copy(const char *src, const char *dst, const struct fk_tree_opts *o,
		 struct fk_tree_stats *st)
{
	return fk_tree_copy_sources(&src, 1, dst, o, st);
}
