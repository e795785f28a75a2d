// SPDX-License-Identifier: MIT
/*
 * tree_copy_update.c - an existing destination file and --update /
 * --no-clobber (enum fk_copy_update): whether it is left as it is, and
 * when it is, that it is still made durable and keeps its hard links
 * (cp -a -u).  Part of fk_tree_copy (tree_copy.c); above the parts it
 * asks (file, links, meta).
 */
#include "flushkit.h"
#include "sys.h"
#include "tree.h"
#include "tree_copy.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- existing destination files (enum fk_copy_update) ---- */

/* 1 if the regular files @a and @b have the same content, 0 if not,
 * -errno if one could not be read. */
static int same_content(struct copy_ctx *c, int a, int b)
{
	if (!c->buf) {
		c->buf = malloc(COPY_CHUNK_BYTES);
		if (!c->buf)
			return -ENOMEM;
	}
	size_t half = COPY_CHUNK_BYTES / 2;
	for (off_t off = 0;;) {
		ssize_t n = fk_sys.pread(a, c->buf, half, off);
		if (n < 0)
			return (int)n;
		ssize_t m = 0;
		while (m < n) {
			ssize_t k = fk_sys.pread(b, c->buf + half + m,
						 (size_t)(n - m), off + m);
			if (k < 0)
				return (int)k;
			if (k == 0)
				break;
			m += k;
		}
		if (m != n || memcmp(c->buf, c->buf + half, (size_t)n))
			return 0;
		if (n == 0)
			return 1;
		off += n;
	}
}

/*
 * Whether the destination @name in @ddir, in the way of the source
 * entry @e, is left as it is (o->update).  Returns 1 if it is (counted
 * in st->skipped; a regular file is still made durable with the copy,
 * and with FK_COPY_UPDATE_DIFFERENT gets the source's times), 0 if @e
 * is to be copied over it, <0 to stop.
 */
int fk_copy_keep_existing(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath)
{
	int update = c->o->update;
	if (update == FK_COPY_UPDATE_ALL)
		return 0;
	struct stat ds;
	if (fk_sys.fstatat(ddir, name, &ds, AT_SYMLINK_NOFOLLOW) < 0 ||
	    S_ISDIR(ds.st_mode))
		return 0; /* nothing there, or an error for the copy */
	const struct stat *s = &e->st;
	/* cp -u: another name of a source inode copied (or left) in this
	 * run is linked to that copy, even over a newer file. */
	if (update == FK_COPY_UPDATE_OLDER && s->st_nlink > 1 &&
	    fk_copy_link_find(c->links, s->st_dev, s->st_ino,
			      fk_copy_dst_dev_of(ddir)))
		return 0;
	if (update == FK_COPY_UPDATE_OLDER &&
	    (ds.st_mtim.tv_sec < s->st_mtim.tv_sec ||
	     (ds.st_mtim.tv_sec == s->st_mtim.tv_sec &&
	      ds.st_mtim.tv_nsec < s->st_mtim.tv_nsec)))
		return 0;
	int fd = -1;
	if (update == FK_COPY_UPDATE_DIFFERENT) {
		/* Another name of an inode copied in this run: linked. */
		if (!S_ISREG(s->st_mode) || !S_ISREG(ds.st_mode) ||
		    ds.st_size != s->st_size ||
		    (s->st_nlink > 1 &&
		     fk_copy_link_find(c->links, s->st_dev, s->st_ino,
				       fk_copy_dst_dev_of(ddir))))
			return 0;
		if (c->o->copy_flags & FK_COPY_CHECKSUM) {
			int sfd = fk_copy_open_source(c, e);
			if (sfd < 0)
				return 0; /* copy_regular reports it */
			fd = fk_sys.openat(ddir, name,
					   O_RDONLY | O_NOFOLLOW | O_NOCTTY, 0);
			int same = fd < 0 ? 0 : same_content(c, sfd, fd);
			fk_sys.close(sfd);
			if (same <= 0) {
				if (fd >= 0)
					fk_sys.close(fd);
				return 0;
			}
		} else if (ds.st_mtim.tv_sec != s->st_mtim.tv_sec ||
			   ds.st_mtim.tv_nsec != s->st_mtim.tv_nsec) {
			return 0;
		}
	}
	c->st->skipped++;
	if (S_ISREG(ds.st_mode))
		c->st->skipped_bytes += (uint64_t)ds.st_size;
	/* A destination left as it was by --update=none holds other
	 * content: the source's other names must not be linked to it (cp -n
	 * copies them on their own).  One found equal (resume) or newer
	 * (--update=older, cp -u) stands for the source, as in cp -u. */
	if (update != FK_COPY_UPDATE_NONE)
		fk_copy_remember_link(c, e, ddir, name, dpath);
	if (!S_ISREG(ds.st_mode))
		return 1;
	/* Part of the copy: durable with it.  The fsync pass of writeback
	 * and delayed walks the destination, syncfs syncs it all;
	 * fsync-each fsyncs it here. */
	if (c->method == FK_COPY_FSYNC_EACH ||
	    update == FK_COPY_UPDATE_DIFFERENT) {
		if (fd < 0)
			fd = fk_sys.openat(ddir, name,
					   O_RDONLY | O_NOFOLLOW | O_NOCTTY, 0);
		if (fd < 0) {
			fk_copy_report(c, FK_REPORT_ERROR, "open", dpath, fd);
			return 1;
		}
		if (c->method == FK_COPY_FSYNC_EACH)
			fk_copy_fsync_now(c, fd, 0, dpath);
		/* Resume: the whole of the source's times (atime too),
		 * set once its data is durable, as for a copied file. */
		if (update == FK_COPY_UPDATE_DIFFERENT &&
		    fk_sys.fstat(fd, &ds) == 0)
			fk_copy_defer_times(c, e, name, &ds, s, dpath);
		fk_copy_release_fd(c, fd, &ds, 0, dpath);
	} else if (fd >= 0) {
		fk_sys.close(fd);
	}
	return c->stop ? c->stop : 1;
}
