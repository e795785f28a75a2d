// SPDX-License-Identifier: MIT
/*
 * tree_copy_file.c - the copy of one non-directory entry: a regular
 * file's data (copy_file_range, pread/pwrite fallback, SEEK_DATA/HOLE
 * for sparse files, FICLONE), creating or writing into what is at the
 * destination, symlinks and special files, and cp's other ways to
 * copy (-l, -s, --copy-contents, -i's question).  Part of fk_tree_copy
 * (tree_copy.c's top comment has the design and its invariants).
 */
#include "flushkit.h"
#include "sys.h"
#include "tree.h"
#include "tree_copy.h"
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

/* ---- regular files ---- */

/*
 * Remember the times of the copied file @e (destination inode @ds, source
 * stat @s) for times_pass.  Out of memory stops the copy (invariant 5).
 */
void fk_copy_defer_times(struct copy_ctx *c, const struct fk_walk_entry *e,
			 const char *name, const struct stat *ds,
			 const struct stat *s, const char *dpath)
{
	if (c->o->copy_flags & FK_COPY_NO_TIMES)
		return; /* the copy keeps its own times */
	if (c->nr_times == c->alloc_times) {
		size_t n = c->alloc_times ? c->alloc_times * 2 : 64;
		struct pending_times *t = realloc(c->times, n * sizeof(*t));
		if (!t)
			goto nomem;
		c->times = t;
		c->alloc_times = n;
	}
	struct pending_times *p = &c->times[c->nr_times];
	p->dev = ds->st_dev;
	p->ino = ds->st_ino;
	p->ts[0] = s->st_atim;
	p->ts[1] = s->st_mtim;
	p->relpath = NULL;
	p->is_dir = S_ISDIR(ds->st_mode);
	if (e->depth > 0) {
		size_t dl = c->relpath.len, nl = strlen(name);
		p->relpath = malloc(dl + nl + 2);
		if (!p->relpath)
			goto nomem;
		if (dl) { /* c->relpath.buf may be NULL when empty */
			memcpy(p->relpath, c->relpath.buf, dl);
			p->relpath[dl++] = '/';
		}
		memcpy(p->relpath + dl, name, nl + 1);
	}
	c->nr_times++;
	return;
nomem:
	fk_copy_report(c, FK_REPORT_ERROR, "copy", dpath, -ENOMEM);
	c->stop = -ENOMEM;
}

/* Sparse-always: the unit of zero detection, bytes. */
#define SPARSE_BLOCK 4096

/*
 * Write the @n bytes of c->buf at @off of @dfd.  With
 * FK_COPY_SPARSE_ALWAYS, runs of all-zero SPARSE_BLOCKs (aligned to
 * @off) are not written: they stay holes.  0 or -errno.
 */
static int write_data(struct copy_ctx *c, int dfd, size_t n, uint64_t off)
{
	if (c->o->sparse != FK_COPY_SPARSE_ALWAYS)
		return fk_pwrite_all(dfd, c->buf, n, off);
	static const char zero[SPARSE_BLOCK];
	size_t run = 0, pos = 0; /* [run, pos): data to write */
	while (pos < n) {
		size_t blk = n - pos < SPARSE_BLOCK ? n - pos : SPARSE_BLOCK;
		if (!memcmp(c->buf + pos, zero, blk)) {
			if (pos > run) {
				int r = fk_pwrite_all(dfd, c->buf + run,
						      pos - run, off + run);
				if (r < 0)
					return r;
			}
			run = pos + blk;
		}
		pos += blk;
	}
	return pos > run
		   ? fk_pwrite_all(dfd, c->buf + run, pos - run, off + run)
		   : 0;
}

/*
 * Copy [@off, @off + @len) from @sfd to @dfd.  *@end receives the offset
 * reached (short if the source shrank).  Returns 0 or -errno with *@fail
 * saying which side failed.
 */
static int copy_range(struct copy_ctx *c, int sfd, int dfd, uint64_t off,
		      uint64_t len, uint64_t *end, enum copy_fail *fail,
		      int *no_cfr)
{
	uint64_t chunk = COPY_CHUNK_BYTES;
	if (c->use_wb && c->o->flush_after_bytes >= 65536 &&
	    c->o->flush_after_bytes < chunk)
		chunk = c->o->flush_after_bytes;
	while (len > 0) {
		size_t want = len < chunk ? (size_t)len : (size_t)chunk;
		ssize_t n;
		if (!*no_cfr && !c->no_cfr) {
			off_t in = (off_t)off, out = (off_t)off;
			n = fk_sys.copy_file_range(sfd, &in, dfd, &out, want,
						   0);
			if (n == -EXDEV || n == -ENOSYS || n == -EINVAL ||
			    n == -EOPNOTSUPP || n == -ENOTSUP) {
				if (n == -ENOSYS)
					c->no_cfr = 1;
				*no_cfr = 1;
				continue;
			}
			if (n == 0) {
				/* Not EOF until a read says so: procfs and
				 * others return 0 for content they have
				 * (coreutils copy.c does the same).  The
				 * rest of this file is read and written. */
				*no_cfr = 1;
				continue;
			}
			if (n < 0) {
				*fail = FAIL_DST;
				if (n == -EIO || n == -EBADF)
					*fail = FAIL_SRC;
				if (fk_copy_is_space_err((int)n))
					*fail = FAIL_DST;
				return (int)n;
			}
		} else {
			if (!c->buf) {
				c->buf = malloc(COPY_CHUNK_BYTES);
				if (!c->buf) {
					*fail = FAIL_DST;
					return -ENOMEM;
				}
			}
			n = fk_sys.pread(sfd, c->buf, want, (off_t)off);
			if (n < 0) {
				*fail = FAIL_SRC;
				return (int)n;
			}
			if (n > 0) {
				int r = write_data(c, dfd, (size_t)n, off);
				if (r < 0) {
					*fail = FAIL_DST;
					return r;
				}
			}
		}
		if (n == 0)
			break; /* the source shrank */
		if (c->use_wb) {
			int r =
			    fk_writeback_note(&c->wb, dfd, off, (uint64_t)n);
			if (r == -ENOMEM) {
				*fail = FAIL_DST;
				return r;
			}
		}
		off += (uint64_t)n;
		len -= (uint64_t)n;
		c->st->bytes += (uint64_t)n;
		fk_copy_progress(c);
	}
	*end = off;
	if (c->o->sparse == FK_COPY_SPARSE_ALWAYS && off > 0) {
		/* Trailing zeros were not written: the size still counts. */
		struct stat ds;
		int r = fk_sys.fstat(dfd, &ds);
		if (r == 0 && (uint64_t)ds.st_size < off)
			r = fk_sys.ftruncate(dfd, (off_t)off);
		if (r < 0) {
			*fail = FAIL_DST;
			return r;
		}
	}
	return 0;
}

#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif

/*
 * Whether the st_size of @sfd (stat @s) may say nothing of its content:
 * 0 (procfs, FUSE), or any size for a file without blocks on a pseudo
 * file system (sysfs says 4096 whatever an attribute holds; procfs,
 * debugfs, tracefs, configfs, securityfs, cgroup, bpf and FUSE files
 * may say more or less than a read gives).  fstatfs is asked only of a
 * nonempty file without blocks, which real files seldom are.
 */
static int size_may_lie(int sfd, const struct stat *s)
{
	struct statfs sf;
	if (s->st_size == 0)
		return 1;
	if (s->st_blocks || fk_sys.fstatfs(sfd, &sf))
		return 0;
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case CONFIGFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case FUSE_SUPER_MAGIC:
		return 1;
	}
	return 0;
}

/*
 * Copy the content of @sfd (described by @s) to @dfd, keeping holes.
 * What is copied is what reads return, never more: a source whose
 * st_size may lie (size_may_lie: 0, or a pseudo file system's) is read
 * to EOF, as coreutils does, so a sysfs or procfs file holding more than
 * its st_size is not cut there, and one whose reads end before st_size
 * is copied up to there, not padded to st_size.  Returns 0 or -errno
 * with *@fail set.
 */
static int copy_data(struct copy_ctx *c, int sfd, int dfd, const struct stat *s,
		     enum copy_fail *fail)
{
	uint64_t size = (uint64_t)s->st_size, end = 0, off = 0;
	int no_cfr = 0, r;
	int sparse = size > 0 && (uint64_t)s->st_blocks * 512 < size &&
		     c->o->sparse != FK_COPY_SPARSE_NEVER;

	if (size_may_lie(sfd, s))
		return copy_range(c, sfd, dfd, 0, UINT64_MAX, &end, fail,
				  &no_cfr);

	while (sparse && off < size) {
		off_t data = fk_sys.lseek(sfd, (off_t)off, SEEK_DATA);
		if (data == -ENXIO) {
			off = size; /* a hole up to the end */
			break;
		}
		if (data < 0) {
			sparse = 0; /* SEEK_DATA unsupported: copy all */
			break;
		}
		off_t hole = fk_sys.lseek(sfd, data, SEEK_HOLE);
		if (hole < 0) {
			sparse = 0;
			off = (uint64_t)data;
			break;
		}
		r = copy_range(c, sfd, dfd, (uint64_t)data,
			       (uint64_t)(hole - data), &end, fail, &no_cfr);
		if (r < 0)
			return r;
		if (end < (uint64_t)hole)
			return 0; /* the source shrank */
		off = (uint64_t)hole;
	}
	if (!sparse) {
		r = copy_range(c, sfd, dfd, off, size - off, &end, fail,
			       &no_cfr);
		if (r < 0)
			return r;
		/* Grown sources are copied as of the stat. */
		if (end < size)
			return 0;
		off = end;
	}
	if (off >= size && end < size) {
		/* Trailing hole (or an all-hole file): set the size. */
		r = fk_sys.ftruncate(dfd, (off_t)size);
		if (r < 0) {
			*fail = FAIL_DST;
			return r;
		}
	}
	return 0;
}

/*
 * Clone the whole of @sfd into the new, empty @dfd with FICLONE (the
 * file systems share the extents: xfs with reflink, btrfs).  Returns 0,
 * or -errno (-EOPNOTSUPP, -EXDEV, -EINVAL, ...) with @dfd still empty;
 * -ENOTSUP without trying for --reflink=never and for sources whose
 * size may lie (size_may_lie: procfs, sysfs).
 */
static int clone_data(struct copy_ctx *c, int sfd, int dfd,
		      const struct stat *s)
{
	if (c->o->reflink == FK_COPY_REFLINK_NEVER ||
	    c->o->sparse != FK_COPY_SPARSE_AUTO || size_may_lie(sfd, s))
		return -ENOTSUP;
	return fk_sys.ioctl(dfd, FICLONE, (void *)(intptr_t)sfd);
}

/*
 * Create the copy of the regular file @e at @name in @ddir.  Returns its
 * descriptor, or -errno; *@done is set if there is nothing to write
 * (remove_existing returned 1).  An existing FIFO or device in the way
 * is written into, as cp -a does (without FK_COPY_REMOVE_DEST): its
 * descriptor is returned with *@into set, and nothing is created.
 */
/* Whether the source entry @e was reached through a symlink it names
 * (cp -L; cp -H for the source itself): its names are followed. */
static int deref_entry(const struct copy_ctx *c, const struct fk_walk_entry *e)
{
	unsigned f = c->o->copy_flags;
	return (f & FK_COPY_DEREF) || ((f & FK_COPY_DEREF_ARGS) && !e->depth);
}

/* Open the regular source file @e for reading, checked to be the inode
 * the walk saw (fk_tree_open_file; a followed symlink is opened through
 * it, then checked the same way). */
int fk_copy_open_source(const struct copy_ctx *c, const struct fk_walk_entry *e)
{
	if (!deref_entry(c, e))
		return fk_tree_open_file(e->dirfd, e->name, &e->st);
	int fd = fk_sys.openat(e->dirfd, e->name,
			       O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	struct stat now;
	if (fd >= 0 && (fk_sys.fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) ||
			!fk_copy_same_inode(&now, &e->st))) {
		fk_sys.close(fd);
		return -ENOENT; /* replaced since the walk's stat */
	}
	return fd;
}

/*
 * cp --attributes-only onto the existing regular file @name (its lstat
 * @ds): after existing_ok's checks it is opened as it is, its data
 * kept (nothing is removed: no data is written), for its attributes.
 */
static int open_for_attrs(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath,
			  const struct stat *ds, int *done)
{
	const char *what;
	int r = fk_copy_existing_ok(e->dirfd, e->name, &e->st, ddir, name, ds,
				    fk_copy_existing_flags(c), &what);
	if (r < 0)
		fk_copy_refuse(c, what, e->path, dpath, r);
	if (r) {
		*done = 1;
		return -EEXIST;
	}
	if (!S_ISLNK(ds->st_mode)) {
		c->keep_mode = (int)(ds->st_mode & 07777);
		return fk_sys.openat(ddir, name,
				     O_WRONLY | O_NOFOLLOW | O_NOCTTY, 0);
	}
	/* A symlink to a regular file: its target gets the attributes, as
	 * cp --attributes-only writes through it; anything else it names
	 * (swapped in since the stat, or never a regular file) is not
	 * touched. */
	int fd = fk_sys.openat(ddir, name, O_WRONLY | O_NOCTTY | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	struct stat ts;
	r = fk_sys.fstat(fd, &ts);
	if (r == 0 && !S_ISREG(ts.st_mode))
		r = -EEXIST;
	if (r < 0) {
		fk_sys.close(fd);
		return r;
	}
	c->keep_mode = (int)(ts.st_mode & 07777);
	return fd;
}

static int create_file(struct copy_ctx *c, const struct fk_walk_entry *e,
		       int ddir, const char *name, const char *dpath, int *done,
		       int *into)
{
	int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY;
	*done = *into = 0;
	int fd = fk_sys.openat(ddir, name, flags, 0600);
	if (fd != -EEXIST)
		return fd;
	struct stat ds, ts;
	int r = fk_sys.fstatat(ddir, name, &ds, AT_SYMLINK_NOFOLLOW);
	if (r == 0 &&
	    (c->o->copy_flags & (FK_COPY_ATTR_ONLY | FK_COPY_REMOVE_DEST)) ==
		FK_COPY_ATTR_ONLY &&
	    !c->o->backup &&
	    (S_ISREG(ds.st_mode) ||
	     (S_ISLNK(ds.st_mode) && fk_sys.fstatat(ddir, name, &ts, 0) == 0 &&
	      S_ISREG(ts.st_mode))))
		return open_for_attrs(c, e, ddir, name, dpath, &ds, done);
	if (r == 0 && !(c->o->copy_flags & FK_COPY_REMOVE_DEST) &&
	    !c->o->backup &&
	    (S_ISFIFO(ds.st_mode) || S_ISCHR(ds.st_mode) ||
	     S_ISBLK(ds.st_mode))) {
		/* Blocks until a FIFO has a reader, as with cp. */
		fd = fk_sys.openat(ddir, name, O_WRONLY | O_NOFOLLOW | O_NOCTTY,
				   0);
		*into = fd >= 0;
		return fd;
	}
	r = fk_copy_remove_existing(c, e, ddir, name, dpath, &ds);
	if (r == 1) {
		*done = 1;
		return -EEXIST;
	}
	if (r < 0 && r != -ENOENT)
		return r == -EISDIR ? -EEXIST : r;
	if (S_ISREG(ds.st_mode)) /* --no-preserve=mode: its mode stays */
		c->keep_mode = (int)(ds.st_mode & 07777);
	return fk_sys.openat(ddir, name, flags, 0600);
}

/*
 * A written file's owner, xattrs and mode, once its data is in place;
 * not the times yet: they wait for the data to be durable (defer_times,
 * times_pass).  fsync-each: the data is durable after fsync_now, so the
 * times may be set at once (invariant 7): a run killed later leaves
 * this file looking complete, and --resume leaves it.  times_pass still
 * sets them again and makes them durable with the second fsync.
 */
static void meta_after_data(struct copy_ctx *c, int sfd, int dfd,
			    const struct stat *s, const char *dpath)
{
	fk_copy_set_meta_fd(c, sfd, dfd, s, dpath, 0);
	if (c->method == FK_COPY_FSYNC_EACH &&
	    fk_copy_fsync_now(c, dfd, 0, dpath) == 0 &&
	    !(c->o->copy_flags & FK_COPY_NO_TIMES)) {
		struct timespec ts[2] = {s->st_atim, s->st_mtim};
		(void)fk_sys.futimens(dfd, ts); /* else times_pass reports */
	}
}

/*
 * Write the whole of @sfd into the FIFO or device @dfd (create_file's
 * *into), read and write from the start, as cp does: no offsets (a
 * FIFO has none), no holes.  A block device is fsynced: its data is
 * the copy's, made durable (a FIFO or character device has nothing to
 * make durable).  Returns 0 or -errno, reported.
 */
static int copy_into(struct copy_ctx *c, const struct fk_walk_entry *e, int sfd,
		     int dfd, const char *dpath)
{
	if (!c->buf) {
		c->buf = malloc(COPY_CHUNK_BYTES);
		if (!c->buf)
			return -ENOMEM;
	}
	for (off_t off = 0;;) {
		ssize_t n = fk_sys.pread(sfd, c->buf, COPY_CHUNK_BYTES, off);
		if (n < 0) {
			fk_copy_report(c, FK_REPORT_ERROR, "read", e->path,
				       (int)n);
			return (int)n;
		}
		if (n == 0)
			break;
		for (ssize_t w = 0; w < n;) {
			ssize_t k =
			    fk_sys.write(dfd, c->buf + w, (size_t)(n - w));
			if (k < 0) {
				fk_copy_report(c, FK_REPORT_ERROR, "write",
					       dpath, (int)k);
				return (int)k;
			}
			w += k;
		}
		off += n;
		c->st->bytes += (uint64_t)n;
		fk_copy_progress(c);
	}
	struct stat ds;
	int r = fk_sys.fstat(dfd, &ds);
	if (r == 0 && S_ISBLK(ds.st_mode)) {
		r = fk_sys.fsync(dfd);
		c->st->fsync_calls++;
		if (r < 0)
			fk_copy_report(c, FK_REPORT_ERROR, "fsync", dpath, r);
	}
	return r;
}

int fk_copy_regular(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		    const char *name, const char *dpath)
{
	/* Opened (and read) ahead by the walk, or its open's error: each
	 * source file is opened once. */
	int sfd = e->fd;
	if (sfd < 0)
		sfd = e->open_err ? e->open_err : fk_copy_open_source(c, e);
	if (sfd < 0) {
		if (sfd == -ENOENT) {
			c->st->vanished++;
			fk_copy_report(c, FK_REPORT_WARNING, "vanished",
				       e->path, sfd);
		} else {
			fk_copy_report(c, FK_REPORT_ERROR, "open", e->path,
				       sfd);
		}
		return 0;
	}
	struct stat s;
	int r = fk_sys.fstat(sfd, &s);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "stat", e->path, r);
		goto out_src;
	}

	int done, into;
	int dfd = create_file(c, e, ddir, name, dpath, &done, &into);
	if (done)
		goto out_src;
	if (into) {
		/* A FIFO or device: its content, nothing else. */
		c->st->files++;
		copy_into(c, e, sfd, dfd, dpath);
		r = fk_sys.close(dfd);
		if (r < 0)
			fk_copy_report(c, FK_REPORT_ERROR, "close", dpath, r);
		else
			fk_copy_copied(c, e, dpath);
		goto out_src;
	}
	if (dfd < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "create", dpath, dfd);
		if (fk_copy_is_space_err(dfd))
			c->stop = dfd;
		goto out_src;
	}
	c->st->files++;

	enum copy_fail fail = FAIL_NONE;
	int attrs_only = !!(c->o->copy_flags & FK_COPY_ATTR_ONLY);
	r = attrs_only ? 0 : clone_data(c, sfd, dfd, &s);
	if (attrs_only) {
		/* The attributes alone (an existing file keeps its data). */
	} else if (r == 0) {
		c->st->reflinks++;
		c->st->bytes += (uint64_t)s.st_size;
	} else if (c->o->reflink == FK_COPY_REFLINK_ALWAYS) {
		fk_copy_report(c, FK_REPORT_ERROR, "clone (FICLONE)", dpath, r);
		fk_sys.close(dfd);
		/* Nothing of it was written: not left in the way. */
		fk_sys.unlinkat(ddir, name, 0);
		c->st->files--;
		goto out_src;
	} else {
		r = copy_data(c, sfd, dfd, &s, &fail);
	}
	if (r < 0) {
		if (fail == FAIL_SRC) {
			fk_copy_report(c, FK_REPORT_ERROR, "read", e->path, r);
		} else {
			fk_copy_report(c, FK_REPORT_ERROR,
				       "copy stopped, incomplete file", dpath,
				       r);
			c->stop = r;
		}
		if (c->use_wb)
			fk_writeback_forget(&c->wb, dfd);
		fk_sys.close(dfd);
		goto out_src;
	}
	meta_after_data(c, sfd, dfd, &s, dpath);
	if (c->o->drop_cache) {
		/*
		 * The source's pages are clean: drop them now.  The
		 * destination's are dropped once clean: here after the
		 * fsync of fsync-each, else by the final fsync pass.
		 */
		fk_sys.fadvise(sfd, 0, 0, POSIX_FADV_DONTNEED);
		if (c->method == FK_COPY_FSYNC_EACH)
			fk_sys.fadvise(dfd, 0, 0, POSIX_FADV_DONTNEED);
	}
	fk_copy_remember_link(c, e, ddir, name, dpath);
	fk_copy_copied(c, e, dpath);

	struct stat ds;
	r = fk_sys.fstat(dfd, &ds);
	if (r == 0)
		fk_copy_defer_times(c, e, name, &ds, &s, dpath);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "stat", dpath, r);
		if (c->use_wb)
			fk_writeback_issue(&c->wb);
		if (c->use_wb)
			fk_writeback_forget(&c->wb, dfd);
		fk_sys.close(dfd);
	} else {
		fk_copy_release_fd(c, dfd, &ds, 0, dpath);
	}
out_src:
	if (sfd != e->fd) /* the walk's own is closed by the walk */
		fk_sys.close(sfd);
	return c->stop;
}

/* ---- symlinks and special files ---- */

int fk_copy_symlink(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		    const char *name, const char *dpath)
{
	size_t alloc = e->st.st_size > 0 ? (size_t)e->st.st_size + 1 : 256;
	char *target = NULL;
	ssize_t n;
	for (;;) {
		char *p = realloc(target, alloc);
		if (!p) {
			free(target);
			c->stop = -ENOMEM;
			return c->stop;
		}
		target = p;
		n = fk_sys.readlinkat(e->dirfd, e->name, target, alloc);
		if (n < 0 || (size_t)n < alloc)
			break;
		alloc *= 2; /* the link grew: retry */
	}
	if (n < 0) {
		if (n == -ENOENT || n == -EINVAL) {
			c->st->vanished++;
			fk_copy_report(c, FK_REPORT_WARNING, "vanished",
				       e->path, -ENOENT);
		} else {
			fk_copy_report(c, FK_REPORT_ERROR, "readlink", e->path,
				       (int)n);
		}
		free(target);
		return 0;
	}
	target[n] = 0;
	int r = fk_sys.symlinkat(target, ddir, name);
	if (r == -EEXIST) {
		r = fk_copy_remove_existing(c, e, ddir, name, dpath, NULL);
		if (r == 1) {
			free(target);
			return 0; /* refused (reported), or nothing to do */
		}
		if (r == 0)
			r = fk_sys.symlinkat(target, ddir, name);
		else if (r == -EISDIR)
			r = -EEXIST;
	}
	free(target);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "symlink", dpath, r);
		if (fk_copy_is_space_err(r))
			c->stop = r;
		return c->stop;
	}
	c->st->symlinks++;
	fk_copy_symlink_xattrs(c, e->dirfd, e->name, ddir, name, dpath);
	fk_copy_set_meta_at(c, ddir, name, &e->st, dpath);
	fk_copy_remember_link(c, e, ddir, name, dpath);
	fk_copy_copied(c, e, dpath);
	return 0;
}

int fk_copy_special(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		    const char *name, const char *dpath)
{
	/* Never opened: recreated from the walker's lstat. */
	mode_t mode = (e->st.st_mode & S_IFMT) | (e->st.st_mode & 0600);
	int r = fk_sys.mknodat(ddir, name, mode, e->st.st_rdev);
	if (r == -EEXIST) {
		r = fk_copy_remove_existing(c, e, ddir, name, dpath, NULL);
		if (r == 1)
			return 0; /* refused (reported), or nothing to do */
		if (r == 0)
			r = fk_sys.mknodat(ddir, name, mode, e->st.st_rdev);
		else if (r == -EISDIR)
			r = -EEXIST;
	}
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "mknod", dpath, r);
		if (fk_copy_is_space_err(r))
			c->stop = r;
		return c->stop;
	}
	c->st->specials++;
	fk_copy_set_meta_at(c, ddir, name, &e->st, dpath);
	fk_copy_remember_link(c, e, ddir, name, dpath);
	fk_copy_copied(c, e, dpath);
	return 0;
}

/* ---- cp's other ways to copy: -l, -s, --copy-contents ---- */

/* Whether the directory @ddir is the working directory (cp -s makes a
 * relative symlink only there, where it names its source). */
static int in_cwd(int ddir)
{
	struct stat d, w;
	return fk_sys.fstat(ddir, &d) != 0 ||
	       fk_sys.fstatat(AT_FDCWD, ".", &w, 0) != 0 ||
	       fk_copy_same_inode(&d, &w);
}

/*
 * cp -l and cp -s: the copy of the non-directory @e is a hard link of
 * it (linkat; the source symlink followed with FK_COPY_DEREF) or a
 * symlink to its path as given (symlinkat).  An existing name in the way
 * is replaced only with -f, --remove-destination, a backup or a yes to
 * -i (as cp; after remove_existing's checks), else "cannot create hard
 * link", -EEXIST; one that is a link of the source already is left.
 * Durable as what it is: the new name with its directory's fsync (the
 * final pass, or dir_post with fsync-each); a hard link's inode (its
 * link count) by the final pass's fsync of each regular file, or here
 * with fsync-each.  Returns 0 or <0 to stop.
 */
int fk_copy_link_entry(struct copy_ctx *c, const struct fk_walk_entry *e,
		       int ddir, const char *name, const char *dpath)
{
	unsigned f = c->o->copy_flags;
	int sym = !!(f & FK_COPY_SYMLINK);
	const char *op = sym ? fk_copy_symlink_op : fk_copy_link_op;
	if (sym && e->path[0] != '/' && !in_cwd(ddir)) {
		fk_copy_report(
		    c, FK_REPORT_ERROR,
		    "can make relative symbolic links only in current "
		    "directory",
		    dpath, -EXDEV);
		return 0;
	}
	int lflags = deref_entry(c, e) ? AT_SYMLINK_FOLLOW : 0;
	int r = sym ? fk_sys.symlinkat(e->path, ddir, name)
		    : fk_sys.linkat(e->dirfd, e->name, ddir, name, lflags);
	if (r == -EEXIST) {
		int replace = (f & (FK_COPY_FORCE | FK_COPY_REMOVE_DEST)) ||
			      c->o->backup || c->o->overwrite;
		struct stat ds;
		const char *what;
		int x = fk_sys.fstatat(ddir, name, &ds, AT_SYMLINK_NOFOLLOW);
		if (x == 0 && !S_ISDIR(ds.st_mode) && !replace) {
			x = fk_copy_existing_ok(
			    e->dirfd, e->name, &e->st, ddir, name, &ds,
			    fk_copy_existing_flags(c), &what);
			if (x < 0)
				fk_copy_refuse(c, what, e->path, dpath, x);
			if (x)
				return 0; /* a link of it already, or refused */
		}
		if (replace && (f & FK_COPY_REMOVE_DEST)) {
			/* As GNU: the name goes first, whatever follows. */
			x = fk_copy_remove_existing(c, e, ddir, name, dpath,
						    NULL);
			if (x == 1)
				return 0; /* refused (reported), or nothing */
			if (x == 0 || x == -ENOENT)
				r = sym ? fk_sys.symlinkat(e->path, ddir, name)
					: fk_sys.linkat(e->dirfd, e->name, ddir,
							name, lflags);
		} else if (replace) {
			/* -f, -b, -i: the new link is made under a name of
			 * our own first, so a link that cannot be made
			 * (EXDEV, EMLINK, EPERM) leaves the existing file
			 * and its name as they were (GNU keeps them too);
			 * then the existing one is removed or backed up and
			 * the link renamed over its name. */
			char tmp[64];
			snprintf(tmp, sizeof(tmp), ".flushkit-link.%ld.%lu",
				 (long)getpid(), (unsigned long)++c->link_tmp);
			r = sym ? fk_sys.symlinkat(e->path, ddir, tmp)
				: fk_sys.linkat(e->dirfd, e->name, ddir, tmp,
						lflags);
			if (r == 0) {
				x = fk_copy_remove_existing(c, e, ddir, name,
							    dpath, NULL);
				if (x == 0 || x == -ENOENT)
					r = fk_sys.renameat(ddir, tmp, ddir,
							    name);
				else
					r = x == 1 ? 0 : x;
				if (x == 1 || r < 0)
					fk_sys.unlinkat(ddir, tmp, 0);
				if (x == 1)
					return 0; /* refused (reported) */
			}
		}
	}
	if (r < 0) {
		fk_copy_refuse(c, op, e->path, dpath, r);
		if (fk_copy_is_space_err(r))
			c->stop = r;
		return c->stop;
	}
	if (sym) {
		/* As cp -as: the symlink gets its source's owner and times. */
		c->st->symlinks++;
		if (!(f & FK_COPY_NO_OWNER) &&
		    (r = fk_sys.fchownat(ddir, name, e->st.st_uid, e->st.st_gid,
					 AT_SYMLINK_NOFOLLOW)) < 0 &&
		    c->is_root)
			fk_copy_report(c, FK_REPORT_ERROR, "chown", dpath, r);
		struct timespec ts[2] = {e->st.st_atim, e->st.st_mtim};
		if (!(f & FK_COPY_NO_TIMES) &&
		    (r = fk_sys.utimensat(ddir, name, ts,
					  AT_SYMLINK_NOFOLLOW)) < 0)
			fk_copy_report(c, FK_REPORT_ERROR, "utimens", dpath, r);
	} else {
		c->st->hardlinks++;
	}
	if (!sym && c->method == FK_COPY_FSYNC_EACH) {
		struct stat ls;
		if (fk_sys.fstatat(ddir, name, &ls, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(ls.st_mode)) {
			int fd = fk_sys.openat(
			    ddir, name,
			    O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0);
			if (fd < 0) {
				fk_copy_report(c, FK_REPORT_ERROR, "open",
					       dpath, fd);
			} else {
				fk_copy_fsync_now(c, fd, 0, dpath);
				fk_sys.close(fd);
			}
		}
	}
	fk_copy_copied(c, e, dpath);
	return c->stop;
}

/*
 * cp --copy-contents: the FIFO or device @e is read to EOF (a FIFO's
 * open waits for a writer, as cp's) into a new regular file, made
 * durable as a copied file: its fsync (fsync-each here, else the final
 * pass), then its times.  Returns 0 or <0 to stop.
 */
int fk_copy_stream(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		   const char *name, const char *dpath)
{
	int sfd = fk_sys.openat(
	    e->dirfd, e->name,
	    O_RDONLY | O_NOCTTY | (deref_entry(c, e) ? 0 : O_NOFOLLOW), 0);
	struct stat s;
	if (sfd >= 0 &&
	    (fk_sys.fstat(sfd, &s) < 0 || !fk_copy_same_inode(&s, &e->st))) {
		fk_sys.close(sfd);
		sfd = -ENOENT;
	}
	if (sfd < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "open", e->path, sfd);
		return 0;
	}
	int done, into, r = 0;
	int dfd = create_file(c, e, ddir, name, dpath, &done, &into);
	if (done)
		goto out;
	if (dfd < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "create", dpath, dfd);
		if (fk_copy_is_space_err(dfd))
			c->stop = dfd;
		goto out;
	}
	c->st->files++;
	if (!c->buf && !(c->buf = malloc(COPY_CHUNK_BYTES))) {
		c->stop = -ENOMEM;
		fk_sys.close(dfd);
		goto out;
	}
	for (uint64_t off = 0; !(c->o->copy_flags & FK_COPY_ATTR_ONLY);) {
		ssize_t n = fk_sys.read(sfd, c->buf, COPY_CHUNK_BYTES);
		if (n <= 0) {
			if (n < 0)
				fk_copy_report(c, FK_REPORT_ERROR, "read",
					       e->path, (int)n);
			r = (int)n;
			break;
		}
		r = into
			? (fk_sys.write(dfd, c->buf, (size_t)n) == n ? 0 : -EIO)
			: fk_pwrite_all(dfd, c->buf, (size_t)n, off);
		if (r < 0) {
			fk_copy_report(c, FK_REPORT_ERROR,
				       "copy stopped, incomplete file", dpath,
				       r);
			c->stop = r;
			break;
		}
		off += (uint64_t)n;
		c->st->bytes += (uint64_t)n;
		fk_copy_progress(c);
	}
	if (r < 0 || into) {
		fk_sys.close(dfd);
		goto out;
	}
	meta_after_data(c, sfd, dfd, &s, dpath);
	fk_copy_copied(c, e, dpath);
	struct stat ds;
	r = fk_sys.fstat(dfd, &ds);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "stat", dpath, r);
		fk_sys.close(dfd);
	} else {
		fk_copy_defer_times(c, e, name, &ds, &s, dpath);
		fk_copy_release_fd(c, dfd, &ds, 0, dpath);
	}
out:
	fk_sys.close(sfd);
	return c->stop;
}

/*
 * cp -i: ask the caller (struct fk_tree_opts.overwrite) whether the
 * existing destination @name in @ddir, in the way of the non-directory
 * @e, is to be replaced.  Returns 0 to go on, 1 if it is left as it is
 * (counted in st->skipped).
 */
int fk_copy_ask_overwrite(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath)
{
	struct stat ds;
	if (!c->o->overwrite ||
	    fk_sys.fstatat(ddir, name, &ds, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (c->o->overwrite(c->o->overwrite_arg, e->path, dpath))
		return 0;
	c->st->skipped++;
	return 1;
}
