// SPDX-License-Identifier: MIT
/*
 * tree_copy_links.c - hard links in a copy: the map from a source
 * inode to its first copy on each destination mount, and the linkat()
 * of every later name, made only while both ends are still what the
 * map says.  Part of fk_tree_copy (tree_copy.c).
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

/* ---- hard-link map: source (dev, ino) -> destination path ---- */

/* Remember the top @st a source made (best effort: without memory, the
 * next source with the same name replaces it, as before). */
void fk_copy_link_made(struct link_map *m, const struct stat *st)
{
	struct made_top *p = realloc(m->made, (m->nr_made + 1) * sizeof(*p));
	if (!p)
		return;
	m->made = p;
	m->made[m->nr_made].dev = st->st_dev;
	m->made[m->nr_made++].ino = st->st_ino;
}

static size_t link_hash(dev_t dev, ino_t ino, dev_t dst_dev)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)dev * 0xc2b2ae3d27d4eb4full;
	h ^= (uint64_t)dst_dev * 0x165667b19e3779f9ull;
	return (size_t)(h ^ (h >> 29));
}

/* The place of (@dev, @ino, @dst_dev) in the table: its slot, or the
 * empty place where it would go (*place NULL); NULL if the table is
 * empty. */
static struct link_slot **link_place(const struct link_map *m, dev_t dev,
				     ino_t ino, dev_t dst_dev)
{
	if (!m->alloc)
		return NULL;
	for (size_t i = link_hash(dev, ino, dst_dev) & (m->alloc - 1);;
	     i = (i + 1) & (m->alloc - 1)) {
		struct link_slot *s = m->slots[i];
		if (!s ||
		    (s->dev == dev && s->ino == ino && s->dst_dev == dst_dev))
			return &m->slots[i];
	}
}

struct link_slot *fk_copy_link_find(const struct link_map *m, dev_t dev,
				    ino_t ino, dev_t dst_dev)
{
	struct link_slot **p = link_place(m, dev, ino, dst_dev);
	return p ? *p : NULL;
}

/* Whether the source inode (@dev, @ino) was copied onto another
 * destination mount than @dst_dev. */
static int link_elsewhere(const struct link_map *m, dev_t dev, ino_t ino,
			  dev_t dst_dev)
{
	for (size_t i = 0; i < m->nr_mounts; i++)
		if (m->mounts[i] != dst_dev &&
		    fk_copy_link_find(m, dev, ino, m->mounts[i]))
			return 1;
	return 0;
}

/* Put a copy of @key with the path @relpath in the map, in place of the
 * slot of the same (dev, ino, dst_dev) if there is one. */
static int link_put(struct link_map *m, const struct link_slot *key,
		    const char *relpath)
{
	size_t len = strlen(relpath);
	struct link_slot *n = malloc(sizeof(*n) + len + 1);
	if (!n)
		return -ENOMEM;
	*n = *key;
	memcpy(n->relpath, relpath, len + 1);
	struct link_slot **p = link_place(m, key->dev, key->ino, key->dst_dev);
	if (p && *p) {
		free(*p);
		*p = n;
		return 0;
	}
	size_t i;
	for (i = 0; i < m->nr_mounts && m->mounts[i] != key->dst_dev; i++)
		;
	if (i == m->nr_mounts) {
		dev_t *mounts =
		    realloc(m->mounts, (m->nr_mounts + 1) * sizeof(*mounts));
		if (!mounts) {
			free(n);
			return -ENOMEM;
		}
		m->mounts = mounts;
		m->mounts[m->nr_mounts++] = key->dst_dev;
	}
	if ((m->nr + 1) * 2 > m->alloc) {
		size_t na = m->alloc ? m->alloc * 2 : 64;
		struct link_slot **ns = calloc(na, sizeof(*ns));
		if (!ns) {
			free(n);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->alloc; j++) {
			struct link_slot *s = m->slots[j];
			if (!s)
				continue;
			size_t k =
			    link_hash(s->dev, s->ino, s->dst_dev) & (na - 1);
			while (ns[k])
				k = (k + 1) & (na - 1);
			ns[k] = s;
		}
		free(m->slots);
		m->slots = ns;
		m->alloc = na;
		p = link_place(m, key->dev, key->ino, key->dst_dev);
	}
	*p = n;
	m->nr++;
	return 0;
}

void fk_copy_link_map_release(struct link_map *m)
{
	for (size_t i = 0; i < m->alloc; i++)
		free(m->slots[i]);
	free(m->slots);
	free(m->mounts);
	free(m->durable);
	free(m->made);
	memset(m, 0, sizeof(*m));
}

/* ---- hard links ---- */

/*
 * The directory that holds the path @relpath (relative to the directory
 * @base) and the rest of the path in it (*@rest): @base itself while
 * @relpath is shorter than PATH_MAX, else resolved one component at a
 * time with openat(O_PATH).  Returns the directory (close it if it is not
 * @base) or -errno.
 */
int fk_copy_resolve_relpath(int base, const char *relpath, const char **rest)
{
	*rest = relpath;
	if (strlen(relpath) < PATH_MAX)
		return base;

	int dir = base;
	const char *p = relpath;
	for (;;) {
		const char *slash = strchr(p, '/');
		if (!slash)
			break;
		char *comp = strndup(p, (size_t)(slash - p));
		if (!comp) {
			dir = -ENOMEM;
			break;
		}
		int next = fk_sys.openat(dir, comp,
					 O_PATH | O_DIRECTORY | O_NOFOLLOW, 0);
		free(comp);
		if (dir != base)
			fk_sys.close(dir);
		dir = next;
		if (dir < 0)
			break;
		p = slash + 1;
	}
	*rest = p;
	return dir;
}

/* linkat() the remembered first copy @relpath (relative to the directory
 * the sources are copied into, struct link_map) as @name in @ddir. */
static int link_relpath(struct copy_ctx *c, const char *relpath, int ddir,
			const char *name)
{
	const char *rest;
	int dir = fk_copy_resolve_relpath(c->dst_parent_fd, relpath, &rest);
	if (dir < 0)
		return dir;
	int r = fk_sys.linkat(dir, rest, ddir, name, 0);
	if (dir != c->dst_parent_fd)
		fk_sys.close(dir);
	return r;
}

/* The mount the destination directory @ddir is on, as a hard-link key:
 * its mount id (statx STATX_MNT_ID, bit 63 set), since linkat(2) fails
 * with EXDEV across any mount, a bind mount of the same file system
 * (same st_dev) too; its device where statx cannot tell (before Linux
 * 5.8); 0 if both fail (then a link is tried and its error reported). */
dev_t fk_copy_dst_dev_of(int ddir)
{
	struct statx stx;
	struct stat st;
	if (fk_sys.fstatx(ddir, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID))
		return (dev_t)(stx.stx_mnt_id | 1ull << 63);
	return fk_sys.fstat(ddir, &st) == 0 ? st.st_dev : 0;
}

/*
 * The birth time of the source entry @e (statx STATX_BTIME) into *@bt,
 * through the walker's descriptor of it or an O_PATH one (which opens
 * nothing: no FIFO or device is opened).  Returns 0; -ESTALE if the
 * name is another inode than the walker's lstat said; -ENODATA where
 * the file system or kernel keeps no birth time; or the -errno of the
 * open or statx.
 */
static int src_birth(const struct fk_walk_entry *e, struct statx_timestamp *bt)
{
	int fd = e->fd;
	if (fd < 0)
		fd = fk_sys.openat(e->dirfd, e->name, O_PATH | O_NOFOLLOW, 0);
	if (fd < 0)
		return fd;
	struct statx stx;
	int r = fk_sys.fstatx(fd, STATX_INO | STATX_BTIME, &stx);
	if (fd != e->fd)
		fk_sys.close(fd);
	if (r < 0)
		return r;
	if (stx.stx_ino != (uint64_t)e->st.st_ino)
		return -ESTALE;
	if (!(stx.stx_mask & STATX_BTIME))
		return -ENODATA;
	*bt = stx.stx_btime;
	return 0;
}

/*
 * Whether @e's copy takes part in the link map: a non-directory with
 * other names, unless FK_COPY_NO_LINKS; with FK_COPY_DEREF or
 * FK_COPY_DEREF_ARGS every one (two symlinks followed to one file, or a
 * symlink and its target, are names of one inode: cp -L keeps them one).
 */
static int links_kept(const struct copy_ctx *c, const struct fk_walk_entry *e)
{
	unsigned f = c->o->copy_flags;
	return !(f & FK_COPY_NO_LINKS) && !S_ISDIR(e->st.st_mode) &&
	       (e->st.st_nlink > 1 ||
		(f & (FK_COPY_DEREF | FK_COPY_DEREF_ARGS)));
}

/*
 * If @e is another name of an inode already copied onto the file system
 * of @ddir, link it.  Returns 1 if linked, 0 if it must be copied, <0 to
 * stop.  It is copied, and the map's entry marked stale so that its copy
 * takes the entry over, when the first copy is no longer there (removed
 * or replaced by someone else: the new name would hold other content)
 * or when @e is not the inode that was copied (born later: the number
 * of a removed inode, given again).
 */
int fk_copy_try_hardlink(struct copy_ctx *c, const struct fk_walk_entry *e,
			 int ddir, const char *name, const char *dpath)
{
	if (!links_kept(c, e))
		return 0;
	dev_t ddev = fk_copy_dst_dev_of(ddir);
	struct link_slot *first =
	    fk_copy_link_find(c->links, e->st.st_dev, e->st.st_ino, ddev);
	if (!first || first->stale) {
		if (!first &&
		    link_elsewhere(c->links, e->st.st_dev, e->st.st_ino, ddev))
			/* Copied onto another destination file system
			 * already: this name starts the inode's copy on this
			 * one. */
			fk_copy_report(
			    c, FK_REPORT_WARNING,
			    "hard link across file systems, copied as a "
			    "separate file",
			    dpath, -EXDEV);
		return 0;
	}
	struct statx_timestamp bt;
	if (first->has_btime && src_birth(e, &bt) == 0 &&
	    (bt.tv_sec != first->btime.tv_sec ||
	     bt.tv_nsec != first->btime.tv_nsec)) {
		/* Another inode, given the number of one copied earlier
		 * (whose names were removed since): not a link of it. */
		first->stale = 1;
		return 0;
	}
	int r = link_relpath(c, first->relpath, ddir, name);
	if (r == -EEXIST) {
		r = fk_copy_remove_existing(c, e, ddir, name, dpath, NULL);
		if (r == 1)
			return 1; /* refused (reported), or nothing to do */
		if (r == 0)
			r = link_relpath(c, first->relpath, ddir, name);
	}
	struct stat ls;
	if (r == 0 &&
	    (fk_sys.fstatat(ddir, name, &ls, AT_SYMLINK_NOFOLLOW) < 0 ||
	     ls.st_dev != first->copy_dev || ls.st_ino != first->copy_ino)) {
		/* Linked to what someone else put at the first copy's name:
		 * not ours, undone. */
		fk_sys.unlinkat(ddir, name, 0);
		r = -ESTALE;
	}
	if (r == -ENOENT || r == -ESTALE) {
		fk_copy_report(c, FK_REPORT_WARNING,
			       r == -ENOENT
				   ? "hard link target gone from the "
				     "destination, copied as a separate file"
				   : "hard link target replaced in the "
				     "destination, copied as a separate file",
			       dpath, r);
		first->stale = 1;
		return 0;
	}
	if (r == -EXDEV) {
		/* Another file system is mounted between the two names
		 * (e.g. the first copy lies under a mount on the same
		 * device): no link can reach it.  Copied as a file of its
		 * own, said once per name. */
		fk_copy_report(
		    c, FK_REPORT_WARNING,
		    "hard link across file systems, copied as a separate "
		    "file",
		    dpath, r);
		return 0;
	}
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "link", dpath, r);
		if (fk_copy_is_space_err(r))
			c->stop = r;
		return c->stop ? c->stop : 1;
	}
	/* A copy an earlier source made durable: the new name is durable
	 * with its directory's fsync; the inode needs no second fsync. */
	if (first->src != c->links->src && c->links->durable &&
	    c->links->durable[first->src])
		fk_fdmap_set_flags(c->fdmap, first->copy_dev, first->copy_ino,
				   FK_INODE_SYNCED);
	c->st->hardlinks++;
	fk_copy_copied(c, e, dpath);
	return 1;
}

/* Remember @e's copy @name in @ddir as the first copy of its source
 * inode on @ddir's mount (or as the new one, in place of a stale one). */
void fk_copy_remember_link(struct copy_ctx *c, const struct fk_walk_entry *e,
			   int ddir, const char *name, const char *dpath)
{
	if (!links_kept(c, e))
		return;
	dev_t ddev = fk_copy_dst_dev_of(ddir);
	struct link_slot *old =
	    fk_copy_link_find(c->links, e->st.st_dev, e->st.st_ino, ddev);
	if (old && !old->stale)
		return;
	struct stat ds;
	if (fk_sys.fstatat(ddir, name, &ds, AT_SYMLINK_NOFOLLOW) < 0)
		return; /* gone already: nothing to link to */
	struct link_slot key = {
	    .dev = e->st.st_dev,
	    .ino = e->st.st_ino,
	    .dst_dev = ddev,
	    .copy_dev = ds.st_dev,
	    .copy_ino = ds.st_ino,
	    .src = c->links->src,
	};
	key.has_btime = src_birth(e, &key.btime) == 0;
	/* Relative to the directory the sources are copied into (the
	 * top's parent): the top's name, then the path below it (a stale
	 * slot is taken over). */
	struct sbuf p = {0};
	int r = sbuf_add(&p, c->dst_name, strlen(c->dst_name));
	if (!r && e->depth > 0 && c->relpath.len)
		r = sbuf_add(&p, "/", 1) ||
		    sbuf_add(&p, c->relpath.buf, c->relpath.len);
	if (!r && e->depth > 0)
		r = sbuf_add(&p, "/", 1) || sbuf_add(&p, name, strlen(name));
	if (!r)
		r = link_put(c->links, &key, p.buf);
	if (r)
		fk_copy_report(c, FK_REPORT_WARNING, "remember hard link",
			       dpath, -ENOMEM);
	free(p.buf);
}
