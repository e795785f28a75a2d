// SPDX-License-Identifier: MIT
/*
 * tree_copy_durable.c - the durability phase of a copy: every file's
 * and directory's data and entries durable (fsync pass or syncfs of each
 * file system written), then the times pass (each copied inode's times
 * set once its data or entries are durable, then made durable), the
 * destination's parent directory last.  Part of fk_tree_copy
 * (tree_copy.c's top comment: the methods and invariants 7 and 8).
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

/* ---- the durability phase ---- */

/* Files opened at a time by times_pass, at most (fewer if fk_fd_window
 * says so). */
#define TIMES_CHUNK 256

static int syncfs_all(struct copy_ctx *c);

/* Display path of a file of times_pass (in c->dpath). */
static const char *times_path(struct copy_ctx *c, const struct pending_times *p)
{
	if (!p->relpath)
		return c->dst_display;
	sbuf_truncate(&c->dpath, 0);
	size_t dl = strlen(c->dst_display);
	if (sbuf_add(&c->dpath, c->dst_display, dl) ||
	    (dl && c->dst_display[dl - 1] != '/' &&
	     sbuf_add(&c->dpath, "/", 1)) ||
	    sbuf_add(&c->dpath, p->relpath, strlen(p->relpath)))
		return p->relpath;
	return c->dpath.buf;
}

/*
 * Open the copied file @p at the name the copy gave it, for its times.
 * Returns the fd; -ENOENT if nothing is at that name any more, -ESTALE
 * if another inode is (invariant 8: both are failures of the copy); or
 * another -errno.
 */
static int open_copied(struct copy_ctx *c, const struct pending_times *p)
{
	const char *rest = c->dst_name;
	int dir = c->dst_parent_fd;
	if (p->relpath)
		dir = fk_copy_resolve_relpath(c->top_fd, p->relpath, &rest);
	if (dir < 0)
		return dir;
	struct stat want = {.st_dev = p->dev, .st_ino = p->ino}, now;
	int fd;
	if (p->is_dir) {
		fd = fk_sys.openat(dir, rest,
				   O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
		if (fd == -ELOOP || fd == -ENOTDIR)
			fd = -ESTALE; /* something else at its name */
		if (fd >= 0 &&
		    (fk_sys.fstat(fd, &now) < 0 || now.st_dev != want.st_dev ||
		     now.st_ino != want.st_ino)) {
			fk_sys.close(fd);
			fd = -ESTALE;
		}
	} else {
		fd = fk_tree_open_file(dir, rest, &want);
	}
	/* fk_tree_open_file says ENOENT for a replaced file too.  A
	 * symlink at the name is followed only to the very inode copied
	 * (--attributes-only gives a symlink's target the attributes). */
	if (!p->is_dir && fd == -ENOENT &&
	    fk_sys.fstatat(dir, rest, &now, AT_SYMLINK_NOFOLLOW) == 0) {
		fd = -ESTALE;
		if (S_ISLNK(now.st_mode) &&
		    (c->o->copy_flags & FK_COPY_ATTR_ONLY)) {
			fd = fk_sys.openat(dir, rest,
					   O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
			if (fd >= 0 && (fk_sys.fstat(fd, &now) < 0 ||
					now.st_dev != want.st_dev ||
					now.st_ino != want.st_ino)) {
				fk_sys.close(fd);
				fd = -ESTALE;
			} else if (fd < 0) {
				fd = -ESTALE;
			}
		}
	}
	if (dir != c->top_fd && dir != c->dst_parent_fd)
		fk_sys.close(dir);
	return fd;
}

/* fsync the @nr files of @fds (their times just set) and close them;
 * through @batch when there is one.  Returns the combined result. */
static int times_fsync(struct copy_ctx *c, const int *fds,
		       const struct pending_times *const *ps, size_t nr,
		       struct fk_fsync_batch *batch, struct fk_fsync_req *reqs)
{
	int result = 0, batched = 0;
	if (batch && reqs) {
		memset(reqs, 0, nr * sizeof(*reqs));
		for (size_t i = 0; i < nr; i++) {
			reqs[i].fd = fds[i];
			reqs[i].op = FK_FSYNC_OP_FSYNC;
		}
		/* Per-request results count, not the sticky batch result. */
		batched = fk_fsync_batch_run(batch, reqs, nr) != -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		const struct pending_times *p = ps[i];
		const char *path = times_path(c, p);
		int r;
		if (batched) {
			if (reqs[i].issued && p->is_dir)
				c->st->dir_fsync_calls++;
			else if (reqs[i].issued)
				c->st->fsync_calls++;
			r = fk_tree_fsync_done(c->fdmap, reqs[i].result, p->dev,
					       p->ino, p->is_dir, path, &c->fo,
					       c->st);
		} else {
			r = fk_tree_fsync_fd(c->fdmap, fds[i], p->dev, p->ino,
					     p->is_dir, path, &c->fo, c->st);
		}
		fk_sys.close(fds[i]);
		result = fk_tree_result(result, r);
	}
	return result;
}

/*
 * Set the times of every copied regular file, now that its data is
 * durable, and of every copied directory, now that its entries are
 * (invariant 2), and make them durable: an fsync of each file, or with
 * FK_COPY_SYNCFS one more syncfs of each file system written to (the
 * fsset).  Files are opened a window at a time (fk_fd_window(), at
 * most TIMES_CHUNK).  Invariant 7: a file
 * whose data fsync failed (FK_INODE_FAILED) is left with its creation
 * time, as are all files if the syncfs failed (@data_r < 0).  Invariant
 * 8: each file is opened at its name and checked to be the inode the
 * copy wrote; one that is not is reported as vanished (-ENOENT) or
 * replaced (-ESTALE).  One still there that the fsync pass did not meet
 * gets its data fsync here first.
 *
 * Why: the times are what marks a file complete (rsync's quick check
 * compares size and mtime, as do cp -u and make).  Set before the data
 * is durable, they can reach the disk first: ext4 journals the size an
 * ftruncate() gives a file with a trailing hole at once, while its
 * delayed-allocation data is written only at its fsync, so a power cut
 * in between left files of the right size and mtime full of zeros
 * (tests/tree/test-tree-powercut.c).  Returns 0 or the first error (each
 * reported).
 */
static int times_pass(struct copy_ctx *c, int data_r)
{
	int result = 0;
	int fds[TIMES_CHUNK];
	const struct pending_times *ps[TIMES_CHUNK];
	size_t nr = 0, chunk;
	struct fk_fsync_req *reqs = NULL;
	struct fk_fsync_batch *batch = c->fo.batch, *own = NULL;
	if (data_r < 0 && c->method == FK_COPY_SYNCFS)
		return 0; /* nothing known durable: no times */
	if (!batch && c->method == FK_COPY_FSYNC_EACH && c->nr_times) {
		/*
		 * fsync-each makes its data fsyncs one at a time (the
		 * baseline) and has no batch; but these fsyncs, one at a
		 * time, would each wait for a cache flush (ext4 flushes
		 * again for an inode whose change is already committed):
		 * 8041 files took 21 s instead of 3.  Threads (through
		 * fk_sys, like the rest of fsync-each) let them overlap.
		 */
		struct fk_fsync_batch_opts bo;
		fk_fsync_batch_opts_init(&bo);
		bo.sync_io = FK_SYNC_IO_THREADS;
		if (fk_fsync_batch_create(&bo, &own) == 0)
			batch = own;
	}
	/* After the batch is made: its descriptors are open by now. */
	chunk = fk_fd_window();
	if (chunk > TIMES_CHUNK)
		chunk = TIMES_CHUNK;
	if (!chunk)
		chunk = 1;
	if (batch)
		reqs = calloc(chunk, sizeof(*reqs));
	for (size_t i = 0; i < c->nr_times; i++) {
		const struct pending_times *p = &c->times[i];
		unsigned f = fk_fdmap_flags(c->fdmap, p->dev, p->ino);
		if (f & FK_INODE_FAILED)
			continue;
		int fd = open_copied(c, p);
		if (fd == -ENOENT || fd == -ESTALE) {
			/* Invariant 8: removed, renamed or replaced by
			 * someone else since it was written. */
			fk_copy_report(
			    c, FK_REPORT_ERROR,
			    p->is_dir
				? (fd == -ENOENT ? "copied directory vanished "
						   "from the destination"
						 : "copied directory replaced "
						   "in the destination")
			    : fd == -ENOENT
				? "copied file vanished from the destination"
				: "copied file replaced in the destination",
			    times_path(c, p), fd);
			result = fk_tree_result(result, fd);
			continue;
		}
		/* A directory whose fsync is refused (CIFS: degraded, said
		 * once) still gets its times. */
		unsigned done = FK_INODE_SYNCED;
		if (p->is_dir)
			done |= FK_INODE_DEGRADED;
		if (fd >= 0 && !c->times_by_syncfs && !(f & done)) {
			/*
			 * At its name, but the fsync pass did not meet it
			 * (moved away and back while the pass walked): its
			 * data (a directory: its entries) fsync now,
			 * through the descriptor that wrote it while it is
			 * kept.
			 */
			int kept = fk_fdmap_take(c->fdmap, p->dev, p->ino);
			int dr = fk_tree_fsync_fd(
			    c->fdmap, kept >= 0 ? kept : fd, p->dev, p->ino,
			    p->is_dir, times_path(c, p), &c->fo, c->st);
			if (kept >= 0)
				fk_sys.close(kept);
			if (dr < 0) {
				result = fk_tree_result(result, dr);
				fk_sys.close(fd);
				continue;
			}
		}
		int r = fd < 0 ? fd : fk_sys.futimens(fd, p->ts);
		if (r < 0) {
			/* Gone or replaced since (by someone else), or
			 * refused: the file keeps looking incomplete. */
			fk_copy_report(c, FK_REPORT_ERROR, "utimens",
				       times_path(c, p), r);
			result = fk_tree_result(result, r);
			if (fd >= 0)
				fk_sys.close(fd);
			continue;
		}
		if (c->times_by_syncfs) {
			fk_sys.close(fd);
			continue;
		}
		fds[nr] = fd;
		ps[nr++] = p;
		if (nr == chunk) {
			result = fk_tree_result(
			    result, times_fsync(c, fds, ps, nr, batch, reqs));
			nr = 0;
		}
	}
	if (nr)
		result = fk_tree_result(
		    result, times_fsync(c, fds, ps, nr, batch, reqs));
	free(reqs);
	fk_fsync_batch_destroy(own);
	if (c->times_by_syncfs && c->nr_times)
		result = fk_tree_result(result, syncfs_all(c));
	return result;
}

/* syncfs every file system the copy wrote to; errors reported (and the
 * first kept in c->first_err). */
static int syncfs_all(struct copy_ctx *c)
{
	uint64_t errors = c->st->errors;
	int r = fk_fsset_syncfs(c->fsset, &c->fo, c->st);
	if (r < 0 && c->st->errors != errors && !c->first_err)
		c->first_err = r;
	return r;
}

int fk_copy_durability_phase(struct copy_ctx *c)
{
	int r = 0;
	struct stat ps, ts;
	/* The top was never created (mkdir failed: EROFS, EACCES, ...;
	 * already reported): nothing to make durable, and no second error
	 * about it. */
	if (fk_sys.fstatat(c->dst_parent_fd, c->dst_name, &ts,
			   AT_SYMLINK_NOFOLLOW) == -ENOENT) {
		if (!c->first_err)
			fk_copy_report(c, FK_REPORT_ERROR, "copy",
				       c->dst_display, -ENOENT);
		return c->first_err;
	}
	if (fk_sys.fstat(c->dst_parent_fd, &ps) < 0)
		memset(&ps, 0, sizeof(ps));

	if (c->method == FK_COPY_SYNCFS) {
		struct utsname u;
		if (uname(&u) == 0 && fk_kernel_before(u.release, 5, 8) == 1)
			fk_copy_report(
			    c, FK_REPORT_WARNING,
			    "syncfs (kernels before 5.8 do not report its "
			    "errors)",
			    c->dst_display, 0);
		if (c->top_fd < 0) {
			/* A file copied: its directory's file system. */
			int fd = fk_sys.openat(c->dst_parent_fd, ".",
					       O_RDONLY | O_DIRECTORY, 0);
			r = fd < 0 ? fd
				   : fk_fsset_add(c->fsset, ps.st_dev, fd,
						  c->dst_display);
			if (r < 0) {
				fk_copy_report(c, FK_REPORT_ERROR, "open",
					       c->dst_parent_display, r);
				return r;
			}
		}
		/* Every file system written to: the destination's, and
		 * each one mounted inside it. */
		r = syncfs_all(c);
		/* The data is durable: now the times (invariant 7). */
		r = fk_tree_result(r, times_pass(c, r));
		/* The parent is covered unless it is another file system
		 * (the top is a mount point). */
		if (c->top_fd < 0 || fk_sys.fstat(c->top_fd, &ts) < 0 ||
		    ts.st_dev == ps.st_dev)
			return r;
	} else if (c->method == FK_COPY_AUTO && c->tree_pages &&
		   fk_fsset_nr(c->fsset) > 0 && fk_sweep_wins(c->tree_pages) &&
		   fk_fsset_sweep(c->fsset, c->st) == 0) {
		/* The copy is most of what is dirty: one syncfs of each
		 * file system written to writes it all in one sweep.  Then
		 * each file's own writeback error, through the descriptor
		 * that wrote it (errseq): a file that failed is named. */
		struct fk_tree_fsync_opts fo = c->fo;
		fo.batch = NULL;
		fo.flags |= FK_PASS_CHECK;
		r = fk_tree_fsync_pass(c->dst_parent_fd, c->dst_name,
				       c->dst_display, c->fdmap, &fo, c->st);
		/* Times, then one more syncfs for them (and the dirs'). */
		c->times_by_syncfs = 1;
		r = fk_tree_result(r, times_pass(c, r));
	} else if (c->method != FK_COPY_FSYNC_EACH) {
		/* writeback, delayed; auto when others' dirty data would
		 * make a sweep slow, or a syncfs failed (perhaps for another
		 * program's file): each file's fsync names its own error. */
		if (c->use_wb)
			fk_writeback_issue(&c->wb);
		/* Files (kept descriptors first), then directories bottom
		 * up, each inode once. */
		r = fk_tree_fsync_pass(c->dst_parent_fd, c->dst_name,
				       c->dst_display, c->fdmap, &c->fo, c->st);
		r = fk_tree_result(r, times_pass(c, r));
	} else {
		/* fsync-each: every file was fsynced while copying. */
		r = times_pass(c, 0);
	}
	/* The parent last: makes the top-level name durable. */
	int pr =
	    fk_tree_fsync_fd(c->fdmap, c->dst_parent_fd, ps.st_dev, ps.st_ino,
			     1, c->dst_parent_display, &c->fo, c->st);
	return fk_tree_result(r, pr);
}
