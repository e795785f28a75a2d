// SPDX-License-Identifier: MIT
/*
 * tree_copy.c - fk_tree_copy(): copy a tree with cp -a semantics and
 * make the copy durable.
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

#define COPY_CHUNK_BYTES (1u << 20) /* largest single copy call */
/* Source bytes read ahead of the file being copied (walk.h). */
#define COPY_READAHEAD_BYTES (32u << 20)
/* Source bytes read ahead across directories (tree_copy_prefetch.c). */
#define COPY_PREFETCH_BYTES (64u << 20)
/* Descriptors the prefetcher holds at most, and the window it needs. */
#define COPY_PREFETCH_FDS 3
#define COPY_PREFETCH_MIN_AHEAD_FDS 8

/* ---- a growable string ---- */

struct sbuf {
	char *buf;
	size_t len, alloc;
};

static int sbuf_grow(struct sbuf *s, size_t extra)
{
	if (s->len + extra + 1 <= s->alloc)
		return 0;
	size_t n = s->alloc ? s->alloc : 256;
	while (n < s->len + extra + 1)
		n *= 2;
	char *p = realloc(s->buf, n);
	if (!p)
		return -ENOMEM;
	s->buf = p;
	s->alloc = n;
	return 0;
}

static int sbuf_add(struct sbuf *s, const char *str, size_t len)
{
	int r = sbuf_grow(s, len);
	if (r)
		return r;
	memcpy(s->buf + s->len, str, len);
	s->len += len;
	s->buf[s->len] = 0;
	return 0;
}

static void sbuf_truncate(struct sbuf *s, size_t len)
{
	s->len = len;
	if (s->buf)
		s->buf[len] = 0;
}

/* ---- hard-link map: source (dev, ino) -> destination path ---- */

/*
 * Hard links: the first copy of a source inode on each destination
 * mount.  Keyed by (source dev, source ino, destination mount: its
 * mount id, or its device without statx, dst_dev_of): a file system
 * mounted inside the destination, or a bind mount of the same one, cannot
 * hold a link to a copy on the outer mount (EXDEV), so its names of the
 * inode link to the first copy made on it, and each destination mount
 * keeps the source's link structure among the names it holds.
 *
 * One map serves every source of a call (fk_tree_copy_sources): its
 * paths are relative to the directory the sources are copied into (the
 * parent of each source's top), so a name under one source links to the
 * first copy made under another, as with cp -a.  A later name is linked
 * only while both ends are still what the map says (try_hardlink): the
 * source name the same inode (its birth time, where statx has one, also
 * tells a new inode given a freed number from the one copied), and the
 * first copy the destination inode the copy made (copy_dev, copy_ino),
 * not one someone put at its name since.
 */
struct link_slot {
	dev_t dev;
	ino_t ino;
	dev_t dst_dev;
	dev_t copy_dev; /* the first copy: its destination inode */
	ino_t copy_ino;
	struct statx_timestamp btime; /* the source inode's birth */
	unsigned src;		      /* the source that made the copy */
	unsigned char has_btime;      /* btime is known */
	unsigned char stale;	      /* the first copy (or the source inode
				       * it was made of) is gone: the next
				       * copy of a name of it replaces it */
	char relpath[];		      /* relative to the directory the
				       * sources are copied into */
};

/* The map: open addressing over pointers to malloc'd slots (one
 * allocation each, the path inline), at most half full; about 100
 * bytes per inode with more than one link. */
struct link_map {
	struct link_slot **slots;
	size_t nr, alloc; /* alloc is a power of two */
	dev_t *mounts;	  /* the destination mounts (dst_dev) seen */
	size_t nr_mounts;
	unsigned src; /* the source being copied (index) */
	/* durable[i]: source i's copy returned 0 or -FK_EDEGRADED, so each
	 * file it copied was fsynced (or synced by a syncfs) */
	unsigned char *durable;
	/* The non-directories the sources so far made at the top (cp's
	 * "just-created"): a later source never replaces one. */
	struct made_top {
		dev_t dev;
		ino_t ino;
	} * made;
	size_t nr_made;
};

/* Remember the top @st a source made (best effort: without memory, the
 * next source with the same name replaces it, as before). */
static void link_made(struct link_map *m, const struct stat *st)
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

static struct link_slot *link_find(const struct link_map *m, dev_t dev,
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
		    link_find(m, dev, ino, m->mounts[i]))
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

static void link_map_release(struct link_map *m)
{
	for (size_t i = 0; i < m->alloc; i++)
		free(m->slots[i]);
	free(m->slots);
	free(m->mounts);
	free(m->durable);
	free(m->made);
	memset(m, 0, sizeof(*m));
}

/* ---- the copy context ---- */

/* A copied regular file whose times are set once its data is durable. */
struct pending_times {
	dev_t dev; /* the destination inode */
	ino_t ino;
	struct timespec ts[2]; /* the source's atime, mtime */
	char *relpath;	       /* relative to the top; NULL: the top */
	int is_dir;	       /* a directory (invariant 2) */
};

/* One level of the destination directory stack. */
struct dst_level {
	int fd;		/* the destination directory, or -1 */
	int skip;	/* subtree not copied (error or into-itself) */
	int closed;	/* fd closed to bound the window (invariant 3) */
	int incomplete; /* something below was not copied */
	dev_t dev;	/* the destination directory's identity */
	ino_t ino;
	size_t rel_len; /* length of relpath for this level */
	int old_mode;	/* merged into: its mode before (for
			 * FK_COPY_NO_MODE); created: -1 */
};

struct copy_ctx {
	const struct fk_tree_opts *o;
	struct fk_tree_fsync_opts fo; /* reporting, for tree.h helpers */
	struct fk_tree_stats *st;
	int method;
	int is_root; /* euid 0: copy owners */

	int dst_parent_fd;	  /* directory that holds the top */
	const char *dst_name;	  /* top's name in dst_parent_fd */
	const char *dst_display;  /* top as the user should see it */
	char *dst_parent_display; /* its parent, for messages */
	int top_fd;		  /* destination top directory (or -1) */
	dev_t top_dev;
	ino_t top_ino;
	int top_is_dir;
	size_t src_root_len; /* strlen of the root's display path */
	dev_t src_dev;	     /* the source root's file system (-x) */

	struct dst_level *levels;
	size_t nr_levels;
	int nr_open_levels;	/* levels[d].fd >= 0, d > 0 */
	int depth_now;		/* deepest level being copied into, or -1 */
	struct fk_fsset *fsset; /* syncfs: the file systems written to */

	struct sbuf relpath;	     /* current directory relative to top */
	struct sbuf dpath;	     /* display path of the current dst entry */
	struct link_map *links;	     /* shared by all sources of one call */
	struct pending_times *times; /* files whose times wait (inv. 7) */
	size_t nr_times, alloc_times;
	struct fk_fdmap *fdmap; /* kept descriptors until fsync */
	struct fk_writeback wb;
	int use_wb;
	int keep_fds;	     /* writeback, delayed, auto: the fd map keeps */
	int times_by_syncfs; /* times made durable by a syncfs, not fsyncs */
	uint64_t tree_pages; /* auto: dirty + writeback pages written */
	int no_cfr;	     /* copy_file_range unusable: read/write */
	struct fk_prefetch *prefetch; /* read-ahead across directories */
	uint64_t src_pos; /* bytes of regular files visited (prefetch) */
	char *buf;	  /* read/write fallback buffer */

	int first_err; /* first error (sticky) */
	int stop;      /* fatal: stop the walk (ENOSPC, ENOMEM) */
	uint64_t start_ns;
	uint64_t inline_fsync_ns; /* fsync-each: fsyncs while copying */
	uint64_t last_progress_ns;
	mode_t umask;		/* FK_COPY_NO_MODE: the process's umask */
	unsigned long link_tmp; /* link_entry's temporary names */
	int keep_mode;		/* FK_COPY_NO_MODE: the mode of what the entry
				 * replaces or merges into, or -1 */
};

static void report(struct copy_ctx *c, int level, const char *op,
		   const char *path, int err)
{
	if (level == FK_REPORT_ERROR && !c->first_err)
		c->first_err = err;
	fk_tree_report(&c->fo, c->st, level, op, path, err);
}

/* The words existing_ok and the checks below report cp's refusals
 * with, and their enum fk_copy_refusal. */
static const char same_file_op[] = "same file as the source",
		  dangling_op[] = "not writing through dangling symlink",
		  just_created_symlink_op[] =
		      "will not copy through just-created symlink",
		  just_created_op[] = "will not overwrite just-created",
		  into_self_op[] = "cannot copy a directory into itself",
		  backup_is_src_op[] = "backing up would destroy the source",
		  link_op[] = "cannot create hard link",
		  symlink_op[] = "cannot create symbolic link";

/* Report an error for the copy of @src to @dst (both display paths):
 * one of cp's refusals through the caller's fk_refused_fn if it has
 * one, else (and for any other @op) as report() for @dst. */
static void refuse(struct copy_ctx *c, const char *op, const char *src,
		   const char *dst, int err)
{
	int kind = op == same_file_op  ? FK_COPY_REFUSED_SAME_FILE
		   : op == dangling_op ? FK_COPY_REFUSED_DANGLING
		   : op == just_created_symlink_op
		       ? FK_COPY_REFUSED_JUST_CREATED_SYMLINK
		   : op == just_created_op  ? FK_COPY_REFUSED_JUST_CREATED
		   : op == into_self_op	    ? FK_COPY_REFUSED_INTO_SELF
		   : op == backup_is_src_op ? FK_COPY_REFUSED_BACKUP_IS_SOURCE
		   : op == link_op	    ? FK_COPY_REFUSED_LINK
		   : op == symlink_op	    ? FK_COPY_REFUSED_SYMLINK
					    : 0;
	if (!kind || !c->o->refused) {
		report(c, FK_REPORT_ERROR, op, dst, err);
		return;
	}
	if (!c->first_err)
		c->first_err = err;
	c->st->errors++;
	c->o->refused(c->o->refused_arg, kind, op, src, dst, err);
}

static void progress(struct copy_ctx *c)
{
	if (!c->o->progress)
		return;
	c->st->walk_ns = fk_now_ns() - c->start_ns - c->inline_fsync_ns;
	fk_tree_progress(&c->fo, c->st, &c->last_progress_ns, 0);
}

/* cp -v: @e was created at @dpath. */
static void copied(struct copy_ctx *c, const struct fk_walk_entry *e,
		   const char *dpath)
{
	if (c->o->copied)
		c->o->copied(c->o->copied_arg, e->path, dpath);
}

static int is_space_err(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

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

/* ---- metadata ---- */

#define ACL_ACCESS "system.posix_acl_access"
#define ACL_DEFAULT "system.posix_acl_default"

/*
 * A new file or directory in a directory with a default ACL inherits
 * ACL entries (named users and groups) the source never had: cp -a
 * leaves none.  Drop the ones the source does not have: an access ACL
 * becomes the minimal one of @mode (which the kernel stores as no ACL
 * at all), a default ACL an empty one (removed).  Best effort.
 */
static void drop_inherited_acls(int dfd, mode_t mode, int has_access,
				int has_default)
{
	if (!has_access && fk_sys.fgetxattr(dfd, ACL_ACCESS, NULL, 0) > 0) {
		/* struct posix_acl_xattr_header + 3 entries, little
		 * endian: USER_OBJ, GROUP_OBJ, OTHER, id undefined. */
		unsigned char a[4 + 3 * 8] = {2, 0, 0, 0};
		static const unsigned char tags[3] = {0x01, 0x04, 0x20};
		for (int i = 0; i < 3; i++) {
			unsigned char *e = a + 4 + i * 8;
			e[0] = tags[i];
			e[2] = (unsigned char)((mode >> (6 - 3 * i)) & 7);
			memset(e + 4, 0xff, 4);
		}
		fk_sys.fsetxattr(dfd, ACL_ACCESS, a, sizeof(a), 0);
	}
	if (!has_default && fk_sys.fgetxattr(dfd, ACL_DEFAULT, NULL, 0) > 0) {
		static const unsigned char empty[4] = {2, 0, 0, 0};
		fk_sys.fsetxattr(dfd, ACL_DEFAULT, empty, sizeof(empty), 0);
	}
}

/* Copy extended attributes from @sfd to @dfd; best effort.  @mode: the
 * source's. */
static void copy_xattrs(struct copy_ctx *c, int sfd, int dfd, mode_t mode,
			const char *path)
{
	char small[1024];
	char *list = small;
	int has_access = 0, has_default = 0;
	if (c->o->copy_flags & FK_COPY_NO_XATTR)
		return;
	ssize_t n = fk_sys.flistxattr(sfd, list, sizeof(small));
	if (n == -ERANGE) {
		n = fk_sys.flistxattr(sfd, NULL, 0);
		if (n > 0) {
			list = malloc((size_t)n);
			if (!list)
				return;
			n = fk_sys.flistxattr(sfd, list, (size_t)n);
		}
	}
	if (n <= 0)
		goto out; /* none, or not supported: nothing to copy */
	char *val = NULL;
	size_t val_alloc = 0;
	for (char *name = list; name < list + n; name += strlen(name) + 1) {
		has_access |= !strcmp(name, ACL_ACCESS);
		has_default |= !strcmp(name, ACL_DEFAULT);
		ssize_t len = fk_sys.fgetxattr(sfd, name, NULL, 0);
		if (len < 0)
			continue;
		if ((size_t)len + 1 > val_alloc) {
			char *p = realloc(val, (size_t)len + 1);
			if (!p) {
				/* Not all names seen: leave ACLs alone. */
				has_access = has_default = 1;
				break;
			}
			val = p;
			val_alloc = (size_t)len + 1;
		}
		len = fk_sys.fgetxattr(sfd, name, val, val_alloc);
		if (len < 0)
			continue;
		int r = fk_sys.fsetxattr(dfd, name, val, (size_t)len, 0);
		/* Namespaces we may not write (trusted.*, security.* as
		 * non-root) and file systems without xattrs are skipped
		 * silently, as cp -a does. */
		if (r < 0 && r != -EPERM && r != -EACCES && r != -ENOTSUP &&
		    r != -EOPNOTSUPP)
			report(c, FK_REPORT_WARNING, "setxattr", path, r);
	}
	free(val);
out:
	if (list != small)
		free(list);
	drop_inherited_acls(dfd, mode, has_access, has_default);
}

/*
 * Copy the extended attributes of the symlink @sname in @sdir to the
 * new symlink @dname in @ddir (@path for messages), as cp -a does
 * (trusted.* and security.* set with setfattr -h); best effort, as
 * copy_xattrs.  A symlink cannot be opened for its xattrs (O_PATH
 * descriptors refuse them), so it is named through its directory's
 * descriptor, /proc/self/fd/N/NAME, with the l*xattr calls: the
 * directory is the one the copy holds, the last component is never
 * followed.  Without /proc nothing is copied.
 */
static void copy_symlink_xattrs(struct copy_ctx *c, int sdir, const char *sname,
				int ddir, const char *dname, const char *path)
{
	char sp[64 + NAME_MAX], dp[64 + NAME_MAX];
	if (c->o->copy_flags & FK_COPY_NO_XATTR)
		return;
	if (snprintf(sp, sizeof(sp), "/proc/self/fd/%d/%s", sdir, sname) >=
		(int)sizeof(sp) ||
	    snprintf(dp, sizeof(dp), "/proc/self/fd/%d/%s", ddir, dname) >=
		(int)sizeof(dp))
		return;
	ssize_t n = llistxattr(sp, NULL, 0);
	if (n <= 0)
		return; /* none, not supported, or no /proc */
	char *list = malloc((size_t)n), *val = NULL;
	size_t val_alloc = 0;
	n = list ? llistxattr(sp, list, (size_t)n) : -1;
	for (char *name = list; n > 0 && name < list + n;
	     name += strlen(name) + 1) {
		ssize_t len = lgetxattr(sp, name, NULL, 0);
		if (len < 0)
			continue;
		if ((size_t)len + 1 > val_alloc) {
			char *v = realloc(val, (size_t)len + 1);
			if (!v)
				break;
			val = v;
			val_alloc = (size_t)len + 1;
		}
		len = lgetxattr(sp, name, val, val_alloc);
		if (len < 0)
			continue;
		if (lsetxattr(dp, name, val, (size_t)len, 0) < 0 &&
		    errno != EPERM && errno != EACCES && errno != ENOTSUP &&
		    errno != EOPNOTSUPP)
			report(c, FK_REPORT_WARNING, "setxattr", path, -errno);
	}
	free(val);
	free(list);
}

/*
 * The owner of a copy could not be set to its source's (chown failed
 * with @err; @gid_r is the result of then setting the group alone).
 * As root that is an error; as anyone else it is expected, as for
 * cp -a: the copy is the user's, in the source's group where the user
 * is a member of it (@gid_r 0), else the user's.  Either way a copy
 * that is not its source's owner's must not carry the source's
 * set-user-ID, set-group-ID or sticky bits (cp -a clears them too):
 * returns @mode without them.
 */
static mode_t owner_failed(struct copy_ctx *c, int err, const char *path,
			   mode_t mode, int gid_r)
{
	(void)gid_r; /* the group is kept if it could be; never an error */
	if (c->is_root)
		report(c, FK_REPORT_ERROR, "chown", path, err);
	return mode & ~(mode_t)(S_ISUID | S_ISGID | S_ISVTX);
}

/*
 * The mode a copy gets: its source's; with FK_COPY_NO_MODE (cp
 * --no-preserve=mode) that of what it replaces or merges into
 * (c->keep_mode, as cp leaves an existing file's mode), else a new
 * entry's default less the umask (0777 for directories and sockets,
 * 0666 for the rest, as cp).  With FK_COPY_NO_OWNER (the copy is its
 * copier's) the set-ID bits are dropped: no copy is set-user-ID or
 * set-group-ID to the identity of whoever copied it.
 */
static mode_t meta_mode(struct copy_ctx *c, const struct stat *s)
{
	mode_t mode = s->st_mode & 07777;
	if (c->o->copy_flags & FK_COPY_NO_MODE)
		mode = c->keep_mode >= 0 ? (mode_t)c->keep_mode
		       : S_ISDIR(s->st_mode) || S_ISSOCK(s->st_mode)
			   ? 0777 & ~c->umask
			   : 0666 & ~c->umask;
	if (c->o->copy_flags & FK_COPY_NO_OWNER)
		mode &= ~(mode_t)(S_ISUID | S_ISGID);
	return mode;
}

/* Owner, xattrs, mode, and with @set_times the times of an open
 * destination file or directory.  The owner is always tried: as
 * non-root a chown to oneself and one of one's groups succeeds (cp -a
 * keeps the group then), anything else fails (owner_failed). */
static int set_meta_fd(struct copy_ctx *c, int sfd, int dfd,
		       const struct stat *s, const char *path, int set_times)
{
	mode_t mode = meta_mode(c, s);
	int r = c->o->copy_flags & FK_COPY_NO_OWNER
		    ? 0
		    : fk_sys.fchown(dfd, s->st_uid, s->st_gid);
	if (r < 0)
		mode = owner_failed(c, r, path, mode,
				    fk_sys.fchown(dfd, (uid_t)-1, s->st_gid));
	if (sfd >= 0)
		copy_xattrs(c, sfd, dfd, s->st_mode, path);
	/* After chown, which clears set-user-ID and set-group-ID. */
	r = fk_sys.fchmod(dfd, mode);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "chmod", path, r);
		return r;
	}
	if (!set_times || (c->o->copy_flags & FK_COPY_NO_TIMES))
		return 0;
	struct timespec ts[2] = {s->st_atim, s->st_mtim};
	r = fk_sys.futimens(dfd, ts);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "utimens", path, r);
		return r;
	}
	return 0;
}

/* Owner, mode, times of a symlink or special file, by name. */
static void set_meta_at(struct copy_ctx *c, int ddir, const char *name,
			const struct stat *s, const char *path)
{
	int is_lnk = S_ISLNK(s->st_mode);
	mode_t mode = meta_mode(c, s);
	int r = c->o->copy_flags & FK_COPY_NO_OWNER
		    ? 0
		    : fk_sys.fchownat(ddir, name, s->st_uid, s->st_gid,
				      AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		mode = owner_failed(c, r, path, mode,
				    fk_sys.fchownat(ddir, name, (uid_t)-1,
						    s->st_gid,
						    AT_SYMLINK_NOFOLLOW));
	if (!is_lnk) {
		/* Never follow a symlink: the name was created by mknodat,
		 * but in a directory others can write it may have been
		 * replaced since (the chmod must not land elsewhere). */
		r = fk_sys.fchmodat(ddir, name, mode, AT_SYMLINK_NOFOLLOW);
		if (r == -EOPNOTSUPP || r == -ENOTSUP) {
			/* glibc refuses a symlink with EOPNOTSUPP, and says
			 * the same when /proc is not mounted: tell apart. */
			struct stat now;
			r = fk_sys.fstatat(ddir, name, &now,
					   AT_SYMLINK_NOFOLLOW);
			if (r == 0 && S_ISLNK(now.st_mode))
				r = -ELOOP;
			else if (r == 0)
				r = fk_sys.fchmodat(ddir, name, mode, 0);
		}
		if (r < 0)
			report(c, FK_REPORT_ERROR, "chmod", path, r);
	}
	if (c->o->copy_flags & FK_COPY_NO_TIMES)
		return;
	struct timespec ts[2] = {s->st_atim, s->st_mtim};
	r = fk_sys.utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		report(c, FK_REPORT_ERROR, "utimens", path, r);
}

/* Whether @a and @b are one inode. */
static int same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether @aname in the directory @adir and @bname in @bdir are one
 * directory entry (coreutils' same_name: the same name in the same
 * directory). */
static int same_entry_at(int adir, const char *aname, int bdir,
			 const char *bname)
{
	struct stat a, b;
	return !strcmp(aname, bname) && fk_sys.fstat(adir, &a) == 0 &&
	       fk_sys.fstat(bdir, &b) == 0 && same_inode(&a, &b);
}

/*
 * cp -a's checks of an existing destination @dname in @ddir (its lstat
 * @d) in the way of the non-directory source @sname in @sdir (its lstat
 * @s): coreutils' same_file_ok for a copy that never follows symlinks,
 * and its refusal to write through a dangling symlink.  Returns 0 if the
 * copy may replace it; 1 if there is nothing to do (@sname and @dname
 * are two hard links of one symlink: cp -a leaves them, exit 0); or
 * -errno with *@what, the words of the error to report for @dname:
 *  - -EEXIST "same file as the source": @s and @d are one directory
 *    entry; or one inode (two hard links, unless FK_COPY_REMOVE_DEST);
 *    or one of them is a symlink to the other (without
 *    FK_COPY_REMOVE_DEST a destination symlink to the source too).
 *    Copying would remove the data it copies ("cp symlink foo" with
 *    symlink -> foo would leave foo -> foo);
 *  - -ENOENT "not writing through dangling symlink": a regular file
 *    onto a symlink to nothing (without FK_COPY_REMOVE_DEST);
 *  - -ELOOP "stat": onto a symlink loop, without FK_COPY_FORCE or
 *    FK_COPY_REMOVE_DEST (cp -f replaces it).
 */
/* existing_ok's flags: enum fk_copy_flags, and CP_BACKUP when what is
 * replaced is backed up first (struct fk_tree_opts.backup). */
#define CP_BACKUP (1u << 31)
static unsigned existing_flags(const struct copy_ctx *c)
{
	return c->o->copy_flags | (c->o->backup ? CP_BACKUP : 0);
}

static int existing_ok(int sdir, const char *sname, const struct stat *s,
		       int ddir, const char *dname, const struct stat *d,
		       unsigned flags, const char **what)
{
	int rm = !!(flags & FK_COPY_REMOVE_DEST);
	int same = same_inode(s, d);
	*what = same_file_op;
	if ((flags & FK_COPY_LINK) && same)
		return 1; /* cp -l: it is a link of the source already */
	if (flags & CP_BACKUP) {
		/* The backup keeps what is replaced: only one entry that is
		 * both is refused (the backup would rename the source). */
		return same_entry_at(sdir, sname, ddir, dname) ? -EEXIST : 0;
	}
	if (S_ISLNK(s->st_mode) && S_ISLNK(d->st_mode)) {
		/* Two symlinks: the new one replaces the old, unless they
		 * are one entry, or one inode (nothing to do). */
		if (same_entry_at(sdir, sname, ddir, dname))
			return -EEXIST;
		return same ? 1 : 0;
	}
	if (rm && S_ISLNK(d->st_mode))
		return 0; /* the symlink is removed, never followed */
	if (rm && same && d->st_nlink > 1 &&
	    !same_entry_at(sdir, sname, ddir, dname))
		return 0; /* another link of it: removed, then copied */
	if (!S_ISLNK(s->st_mode) && !S_ISLNK(d->st_mode))
		return same ? -EEXIST : 0;
	if ((flags & FK_COPY_SYMLINK) && S_ISLNK(d->st_mode))
		return 0; /* cp -s: a symlink is made anew */
	/* One is a symlink: what does each name stand for? */
	struct stat ts = *s, td = *d;
	int sr = S_ISLNK(s->st_mode) ? fk_sys.fstatat(sdir, sname, &ts, 0) : 0;
	int dr = S_ISLNK(d->st_mode) ? fk_sys.fstatat(ddir, dname, &td, 0) : 0;
	if (sr == 0 && dr == 0 && same_inode(&ts, &td) &&
	    (flags & FK_COPY_LINK))
		/* cp -l: a symlink to the source is replaced by a link of
		 * it; the file a source symlink names is left as it is (a
		 * link of the symlink in its place would lose its data). */
		return S_ISLNK(d->st_mode) ? 0 : 1;
	if (sr == 0 && dr == 0 && same_inode(&ts, &td))
		return -EEXIST;
	if (S_ISREG(s->st_mode) && S_ISLNK(d->st_mode) && !rm) {
		if (dr == -ENOENT) {
			*what = dangling_op;
			return -ENOENT;
		}
		if (dr == -ELOOP && !(flags & FK_COPY_FORCE)) {
			*what = "stat";
			return -ELOOP;
		}
	}
	return 0;
}

/*
 * cp --backup: rename the existing non-directory @name in @ddir (@dpath,
 * its lstat @ds), in the way of the source entry @e, to its backup name
 * (fk_copy_backup_name), and make the backup durable before anything takes
 * the name: an fsync of the backup (a regular file: its data is what the
 * backup keeps), then of @ddir (the rename).  So a power cut at any
 * point leaves the original under one of its two names.  Refused (cp's
 * words) when the backup name is the source itself (cp --b=simple a~ a
 * would replace a~ with a, then copy it onto a); a numbered backup
 * never replaces an existing name (-EEXIST if one appeared since the
 * directory was read).  Returns 0 if the name is free, 1 if the entry
 * is done with (an error reported).
 */
static int make_backup(struct copy_ctx *c, const struct fk_walk_entry *e,
		       int ddir, const char *name, const char *dpath,
		       const struct stat *ds)
{
	char *bname = NULL;
	int numbered, r;
	r = fk_copy_backup_name(ddir, name, c->o->backup, c->o->backup_suffix,
				&bname, &numbered);
	struct stat bs;
	int there = r == 0 &&
		    fk_sys.fstatat(ddir, bname, &bs, AT_SYMLINK_NOFOLLOW) == 0;
	if (there && !numbered && same_inode(&bs, &e->st)) {
		refuse(c, backup_is_src_op, e->path, dpath, -EEXIST);
		free(bname);
		return 1;
	}
	if (r == 0 && there && numbered)
		r = -EEXIST;
	if (r == 0)
		r = fk_sys.renameat(ddir, name, ddir, bname);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "cannot backup", dpath, r);
		free(bname);
		return 1;
	}
	if (S_ISREG(ds->st_mode)) {
		int fd = fk_sys.openat(
		    ddir, bname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK,
		    0);
		/* Not marked synced in the fd map (the pass would skip it);
		 * a failure is (never retried). */
		r = fd < 0 ? fd
			   : fk_tree_fsync_fd(NULL, fd, ds->st_dev, ds->st_ino,
					      0, dpath, &c->fo, c->st);
		if (r < 0 && fd >= 0)
			fk_fdmap_set_flags(c->fdmap, ds->st_dev, ds->st_ino,
					   FK_INODE_FAILED);
		if (fd >= 0)
			fk_sys.close(fd);
		else
			report(c, FK_REPORT_ERROR, "open backup", dpath, r);
	}
	if (r == 0) {
		struct stat dd;
		r = fk_sys.fstat(ddir, &dd);
		if (r == 0)
			r = fk_tree_fsync_fd(NULL, ddir, dd.st_dev, dd.st_ino,
					     1, dpath, &c->fo, c->st);
		if (r < 0 && r != -FK_EDEGRADED)
			fk_fdmap_set_flags(c->fdmap, dd.st_dev, dd.st_ino,
					   FK_INODE_FAILED);
		if (r == -FK_EDEGRADED)
			r = 0; /* said, and the copy's result says it */
	}
	free(bname);
	if (r < 0) {
		/* The backup is not known durable: the original's name is
		 * not reused (reported; the copy fails). */
		if (!c->first_err)
			c->first_err = r;
		return 1;
	}
	return 0;
}

/*
 * Make room for a new non-directory, the copy of the source entry @e,
 * at @name in @ddir (@dpath): cp -a replaces an existing file, after
 * existing_ok's checks.  Returns 0 if it was removed (or is gone);
 * 1 if the entry is done with: existing_ok refused (reported: the
 * same file, a dangling symlink, a loop) or found nothing to do; or
 * -errno (-EISDIR if a directory is in the way).  Into *@ds (if not
 * NULL) the lstat of what was there.
 */
static int remove_existing(struct copy_ctx *c, const struct fk_walk_entry *e,
			   int ddir, const char *name, const char *dpath,
			   struct stat *ds)
{
	struct stat s;
	int r = fk_sys.fstatat(ddir, name, &s, AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		return r;
	if (ds)
		*ds = s;
	if (S_ISDIR(s.st_mode))
		return -EISDIR;
	const char *what;
	r = existing_ok(e->dirfd, e->name, &e->st, ddir, name, &s,
			existing_flags(c), &what);
	if (r < 0)
		refuse(c, what, e->path, dpath, r);
	if (r)
		return 1;
	if (c->o->backup)
		return make_backup(c, e, ddir, name, dpath, &s);
	/* cp --attributes-only writes no data: nothing is removed to make
	 * room, unless --remove-destination. */
	if ((c->o->copy_flags & (FK_COPY_ATTR_ONLY | FK_COPY_REMOVE_DEST)) ==
	    FK_COPY_ATTR_ONLY)
		return -EEXIST;
	return fk_sys.unlinkat(ddir, name, 0);
}

/* ---- durability of one file ---- */

/* fsync one destination file or directory now (fsync-each). */
static int fsync_now(struct copy_ctx *c, int fd, int is_dir, const char *path)
{
	struct stat s;
	int r = fk_sys.fstat(fd, &s);
	if (r < 0)
		memset(&s, 0, sizeof(s));
	/* Reports, counts, marks the inode failed (never retried). */
	uint64_t t0 = fk_now_ns();
	r = fk_tree_fsync_fd(c->fdmap, fd, s.st_dev, s.st_ino, is_dir, path,
			     &c->fo, c->st);
	c->inline_fsync_ns += fk_now_ns() - t0;
	if (r < 0 && r != -FK_EDEGRADED && !c->first_err)
		c->first_err = r;
	return r;
}

/*
 * Done writing @fd (a destination file or directory): keep it open in
 * the fd map for the final fsync where the budget allows, else close it.
 */
static void release_fd(struct copy_ctx *c, int fd, const struct stat *ds,
		       int is_dir, const char *path)
{
	if (c->keep_fds) {
		if (!is_dir && c->method == FK_COPY_AUTO) {
			/* What a syncfs would write of ours (cachestat);
			 * without cachestat, what was written. */
			int64_t pg = fk_dirty_pages_fd(fd);
			c->tree_pages +=
			    pg >= 0 ? (uint64_t)pg
				    : ((uint64_t)ds->st_size + 4095) / 4096;
		}
		if (fk_fdmap_put(c->fdmap, ds->st_dev, ds->st_ino, fd,
				 is_dir) == 0)
			return;
		/* Not kept: pending hints name this descriptor. */
		if (c->use_wb && !is_dir)
			fk_writeback_issue(&c->wb);
	}
	if (c->use_wb && !is_dir)
		fk_writeback_forget(&c->wb, fd);
	int r = fk_sys.close(fd);
	if (r < 0)
		report(c, FK_REPORT_ERROR, "close", path, r);
}

static void remember_link(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath);

/* ---- regular files ---- */

/*
 * Remember the times of the copied file @e (destination inode @ds, source
 * stat @s) for times_pass.  Out of memory stops the copy (invariant 5).
 */
static void defer_times(struct copy_ctx *c, const struct fk_walk_entry *e,
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
	report(c, FK_REPORT_ERROR, "copy", dpath, -ENOMEM);
	c->stop = -ENOMEM;
}

enum copy_fail {
	FAIL_NONE,
	FAIL_SRC, /* reading the source failed: skip this file */
	FAIL_DST, /* writing the destination failed: stop */
};

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
				if (is_space_err((int)n))
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
		progress(c);
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
static int open_source(const struct copy_ctx *c, const struct fk_walk_entry *e)
{
	if (!deref_entry(c, e))
		return fk_tree_open_file(e->dirfd, e->name, &e->st);
	int fd = fk_sys.openat(e->dirfd, e->name,
			       O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	struct stat now;
	if (fd >= 0 && (fk_sys.fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) ||
			!same_inode(&now, &e->st))) {
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
	int r = existing_ok(e->dirfd, e->name, &e->st, ddir, name, ds,
			    existing_flags(c), &what);
	if (r < 0)
		refuse(c, what, e->path, dpath, r);
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
	r = remove_existing(c, e, ddir, name, dpath, &ds);
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
			report(c, FK_REPORT_ERROR, "read", e->path, (int)n);
			return (int)n;
		}
		if (n == 0)
			break;
		for (ssize_t w = 0; w < n;) {
			ssize_t k =
			    fk_sys.write(dfd, c->buf + w, (size_t)(n - w));
			if (k < 0) {
				report(c, FK_REPORT_ERROR, "write", dpath,
				       (int)k);
				return (int)k;
			}
			w += k;
		}
		off += n;
		c->st->bytes += (uint64_t)n;
		progress(c);
	}
	struct stat ds;
	int r = fk_sys.fstat(dfd, &ds);
	if (r == 0 && S_ISBLK(ds.st_mode)) {
		r = fk_sys.fsync(dfd);
		c->st->fsync_calls++;
		if (r < 0)
			report(c, FK_REPORT_ERROR, "fsync", dpath, r);
	}
	return r;
}

static int copy_regular(struct copy_ctx *c, const struct fk_walk_entry *e,
			int ddir, const char *name, const char *dpath)
{
	/* Opened (and read) ahead by the walk, or its open's error: each
	 * source file is opened once. */
	int sfd = e->fd;
	if (sfd < 0)
		sfd = e->open_err ? e->open_err : open_source(c, e);
	if (sfd < 0) {
		if (sfd == -ENOENT) {
			c->st->vanished++;
			report(c, FK_REPORT_WARNING, "vanished", e->path, sfd);
		} else {
			report(c, FK_REPORT_ERROR, "open", e->path, sfd);
		}
		return 0;
	}
	struct stat s;
	int r = fk_sys.fstat(sfd, &s);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "stat", e->path, r);
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
			report(c, FK_REPORT_ERROR, "close", dpath, r);
		else
			copied(c, e, dpath);
		goto out_src;
	}
	if (dfd < 0) {
		report(c, FK_REPORT_ERROR, "create", dpath, dfd);
		if (is_space_err(dfd))
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
		report(c, FK_REPORT_ERROR, "clone (FICLONE)", dpath, r);
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
			report(c, FK_REPORT_ERROR, "read", e->path, r);
		} else {
			report(c, FK_REPORT_ERROR,
			       "copy stopped, incomplete file", dpath, r);
			c->stop = r;
		}
		if (c->use_wb)
			fk_writeback_forget(&c->wb, dfd);
		fk_sys.close(dfd);
		goto out_src;
	}
	/* Not the times yet: they wait for the data to be durable
	 * (defer_times, times_pass). */
	set_meta_fd(c, sfd, dfd, &s, dpath, 0);

	/*
	 * fsync-each: the data is durable now, so the times may be set at
	 * once (invariant 7): a run killed later leaves this file looking
	 * complete, and --resume leaves it.  times_pass still sets them
	 * again and makes them durable with the second fsync.
	 */
	if (c->method == FK_COPY_FSYNC_EACH &&
	    fsync_now(c, dfd, 0, dpath) == 0 &&
	    !(c->o->copy_flags & FK_COPY_NO_TIMES)) {
		struct timespec ts[2] = {s.st_atim, s.st_mtim};
		(void)fk_sys.futimens(dfd, ts); /* else times_pass reports */
	}
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
	remember_link(c, e, ddir, name, dpath);
	copied(c, e, dpath);

	struct stat ds;
	r = fk_sys.fstat(dfd, &ds);
	if (r == 0)
		defer_times(c, e, name, &ds, &s, dpath);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "stat", dpath, r);
		if (c->use_wb)
			fk_writeback_issue(&c->wb);
		if (c->use_wb)
			fk_writeback_forget(&c->wb, dfd);
		fk_sys.close(dfd);
	} else {
		release_fd(c, dfd, &ds, 0, dpath);
	}
out_src:
	if (sfd != e->fd) /* the walk's own is closed by the walk */
		fk_sys.close(sfd);
	return c->stop;
}

/* ---- hard links ---- */

/*
 * The directory that holds the path @relpath (relative to the directory
 * @base) and the rest of the path in it (*@rest): @base itself while
 * @relpath is shorter than PATH_MAX, else resolved one component at a
 * time with openat(O_PATH).  Returns the directory (close it if it is not
 * @base) or -errno.
 */
static int resolve_relpath(int base, const char *relpath, const char **rest)
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
	int dir = resolve_relpath(c->dst_parent_fd, relpath, &rest);
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
static dev_t dst_dev_of(int ddir)
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
static int try_hardlink(struct copy_ctx *c, const struct fk_walk_entry *e,
			int ddir, const char *name, const char *dpath)
{
	if (!links_kept(c, e))
		return 0;
	dev_t ddev = dst_dev_of(ddir);
	struct link_slot *first =
	    link_find(c->links, e->st.st_dev, e->st.st_ino, ddev);
	if (!first || first->stale) {
		if (!first &&
		    link_elsewhere(c->links, e->st.st_dev, e->st.st_ino, ddev))
			/* Copied onto another destination file system
			 * already: this name starts the inode's copy on this
			 * one. */
			report(c, FK_REPORT_WARNING,
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
		r = remove_existing(c, e, ddir, name, dpath, NULL);
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
		report(c, FK_REPORT_WARNING,
		       r == -ENOENT ? "hard link target gone from the "
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
		report(c, FK_REPORT_WARNING,
		       "hard link across file systems, copied as a separate "
		       "file",
		       dpath, r);
		return 0;
	}
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "link", dpath, r);
		if (is_space_err(r))
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
	copied(c, e, dpath);
	return 1;
}

/* Remember @e's copy @name in @ddir as the first copy of its source
 * inode on @ddir's mount (or as the new one, in place of a stale one). */
static void remember_link(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath)
{
	if (!links_kept(c, e))
		return;
	dev_t ddev = dst_dev_of(ddir);
	struct link_slot *old =
	    link_find(c->links, e->st.st_dev, e->st.st_ino, ddev);
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
		report(c, FK_REPORT_WARNING, "remember hard link", dpath,
		       -ENOMEM);
	free(p.buf);
}

/* ---- symlinks and special files ---- */

static int copy_symlink(struct copy_ctx *c, const struct fk_walk_entry *e,
			int ddir, const char *name, const char *dpath)
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
			report(c, FK_REPORT_WARNING, "vanished", e->path,
			       -ENOENT);
		} else {
			report(c, FK_REPORT_ERROR, "readlink", e->path, (int)n);
		}
		free(target);
		return 0;
	}
	target[n] = 0;
	int r = fk_sys.symlinkat(target, ddir, name);
	if (r == -EEXIST) {
		r = remove_existing(c, e, ddir, name, dpath, NULL);
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
		report(c, FK_REPORT_ERROR, "symlink", dpath, r);
		if (is_space_err(r))
			c->stop = r;
		return c->stop;
	}
	c->st->symlinks++;
	copy_symlink_xattrs(c, e->dirfd, e->name, ddir, name, dpath);
	set_meta_at(c, ddir, name, &e->st, dpath);
	remember_link(c, e, ddir, name, dpath);
	copied(c, e, dpath);
	return 0;
}

static int copy_special(struct copy_ctx *c, const struct fk_walk_entry *e,
			int ddir, const char *name, const char *dpath)
{
	/* Never opened: recreated from the walker's lstat. */
	mode_t mode = (e->st.st_mode & S_IFMT) | (e->st.st_mode & 0600);
	int r = fk_sys.mknodat(ddir, name, mode, e->st.st_rdev);
	if (r == -EEXIST) {
		r = remove_existing(c, e, ddir, name, dpath, NULL);
		if (r == 1)
			return 0; /* refused (reported), or nothing to do */
		if (r == 0)
			r = fk_sys.mknodat(ddir, name, mode, e->st.st_rdev);
		else if (r == -EISDIR)
			r = -EEXIST;
	}
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "mknod", dpath, r);
		if (is_space_err(r))
			c->stop = r;
		return c->stop;
	}
	c->st->specials++;
	set_meta_at(c, ddir, name, &e->st, dpath);
	remember_link(c, e, ddir, name, dpath);
	copied(c, e, dpath);
	return 0;
}

/* ---- cp's other ways to copy: -l, -s, --copy-contents ---- */

/* Whether the directory @ddir is the working directory (cp -s makes a
 * relative symlink only there, where it names its source). */
static int in_cwd(int ddir)
{
	struct stat d, w;
	return fk_sys.fstat(ddir, &d) != 0 ||
	       fk_sys.fstatat(AT_FDCWD, ".", &w, 0) != 0 || same_inode(&d, &w);
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
static int link_entry(struct copy_ctx *c, const struct fk_walk_entry *e,
		      int ddir, const char *name, const char *dpath)
{
	unsigned f = c->o->copy_flags;
	int sym = !!(f & FK_COPY_SYMLINK);
	const char *op = sym ? symlink_op : link_op;
	if (sym && e->path[0] != '/' && !in_cwd(ddir)) {
		report(c, FK_REPORT_ERROR,
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
			x = existing_ok(e->dirfd, e->name, &e->st, ddir, name,
					&ds, existing_flags(c), &what);
			if (x < 0)
				refuse(c, what, e->path, dpath, x);
			if (x)
				return 0; /* a link of it already, or refused */
		}
		if (replace && (f & FK_COPY_REMOVE_DEST)) {
			/* As GNU: the name goes first, whatever follows. */
			x = remove_existing(c, e, ddir, name, dpath, NULL);
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
				x = remove_existing(c, e, ddir, name, dpath,
						    NULL);
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
		refuse(c, op, e->path, dpath, r);
		if (is_space_err(r))
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
			report(c, FK_REPORT_ERROR, "chown", dpath, r);
		struct timespec ts[2] = {e->st.st_atim, e->st.st_mtim};
		if (!(f & FK_COPY_NO_TIMES) &&
		    (r = fk_sys.utimensat(ddir, name, ts,
					  AT_SYMLINK_NOFOLLOW)) < 0)
			report(c, FK_REPORT_ERROR, "utimens", dpath, r);
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
				report(c, FK_REPORT_ERROR, "open", dpath, fd);
			} else {
				fsync_now(c, fd, 0, dpath);
				fk_sys.close(fd);
			}
		}
	}
	copied(c, e, dpath);
	return c->stop;
}

/*
 * cp --copy-contents: the FIFO or device @e is read to EOF (a FIFO's
 * open waits for a writer, as cp's) into a new regular file, made
 * durable as a copied file: its fsync (fsync-each here, else the final
 * pass), then its times.  Returns 0 or <0 to stop.
 */
static int copy_stream(struct copy_ctx *c, const struct fk_walk_entry *e,
		       int ddir, const char *name, const char *dpath)
{
	int sfd = fk_sys.openat(
	    e->dirfd, e->name,
	    O_RDONLY | O_NOCTTY | (deref_entry(c, e) ? 0 : O_NOFOLLOW), 0);
	struct stat s;
	if (sfd >= 0 &&
	    (fk_sys.fstat(sfd, &s) < 0 || !same_inode(&s, &e->st))) {
		fk_sys.close(sfd);
		sfd = -ENOENT;
	}
	if (sfd < 0) {
		report(c, FK_REPORT_ERROR, "open", e->path, sfd);
		return 0;
	}
	int done, into, r = 0;
	int dfd = create_file(c, e, ddir, name, dpath, &done, &into);
	if (done)
		goto out;
	if (dfd < 0) {
		report(c, FK_REPORT_ERROR, "create", dpath, dfd);
		if (is_space_err(dfd))
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
				report(c, FK_REPORT_ERROR, "read", e->path,
				       (int)n);
			r = (int)n;
			break;
		}
		r = into
			? (fk_sys.write(dfd, c->buf, (size_t)n) == n ? 0 : -EIO)
			: fk_pwrite_all(dfd, c->buf, (size_t)n, off);
		if (r < 0) {
			report(c, FK_REPORT_ERROR,
			       "copy stopped, incomplete file", dpath, r);
			c->stop = r;
			break;
		}
		off += (uint64_t)n;
		c->st->bytes += (uint64_t)n;
		progress(c);
	}
	if (r < 0 || into) {
		fk_sys.close(dfd);
		goto out;
	}
	set_meta_fd(c, sfd, dfd, &s, dpath, 0);
	if (c->method == FK_COPY_FSYNC_EACH &&
	    fsync_now(c, dfd, 0, dpath) == 0 &&
	    !(c->o->copy_flags & FK_COPY_NO_TIMES)) {
		struct timespec ts[2] = {s.st_atim, s.st_mtim};
		(void)fk_sys.futimens(dfd, ts); /* else times_pass reports */
	}
	copied(c, e, dpath);
	struct stat ds;
	r = fk_sys.fstat(dfd, &ds);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "stat", dpath, r);
		fk_sys.close(dfd);
	} else {
		defer_times(c, e, name, &ds, &s, dpath);
		release_fd(c, dfd, &ds, 0, dpath);
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
static int ask_overwrite(struct copy_ctx *c, const struct fk_walk_entry *e,
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
static int keep_existing(struct copy_ctx *c, const struct fk_walk_entry *e,
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
	    link_find(c->links, s->st_dev, s->st_ino, dst_dev_of(ddir)))
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
		    (s->st_nlink > 1 && link_find(c->links, s->st_dev,
						  s->st_ino, dst_dev_of(ddir))))
			return 0;
		if (c->o->copy_flags & FK_COPY_CHECKSUM) {
			int sfd = open_source(c, e);
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
		remember_link(c, e, ddir, name, dpath);
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
			report(c, FK_REPORT_ERROR, "open", dpath, fd);
			return 1;
		}
		if (c->method == FK_COPY_FSYNC_EACH)
			fsync_now(c, fd, 0, dpath);
		/* Resume: the whole of the source's times (atime too),
		 * set once its data is durable, as for a copied file. */
		if (update == FK_COPY_UPDATE_DIFFERENT &&
		    fk_sys.fstat(fd, &ds) == 0)
			defer_times(c, e, name, &ds, s, dpath);
		release_fd(c, fd, &ds, 0, dpath);
	} else if (fd >= 0) {
		fk_sys.close(fd);
	}
	return c->stop ? c->stop : 1;
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
		report(c, FK_REPORT_ERROR, "reopen the directory above", dpath,
		       r);
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
		refuse(c, into_self_op, e->path, dpath, -EINVAL);
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
		report(c, FK_REPORT_ERROR, "mkdir", dpath, r);
		if (is_space_err(r)) {
			c->stop = r;
			return r;
		}
		return 1;
	}
	int fd =
	    fk_sys.openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
	if (fd < 0) {
		report(c, FK_REPORT_ERROR, "open", dpath, fd);
		return 1;
	}
	struct stat ds;
	r = fk_sys.fstat(fd, &ds);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "stat", dpath, r);
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
			report(c, FK_REPORT_ERROR, "open", dpath, r);
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
		copied(c, e, dpath);
	progress(c);
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
	set_meta_fd(c, e->fd, fd, &e->st, dpath, 0);
	struct stat ds;
	int sr = fk_sys.fstat(fd, &ds);
	if (sr < 0)
		report(c, FK_REPORT_ERROR, "stat", dpath, sr);
	if (lv->incomplete || c->st->errors != errors)
		mark_incomplete(c, e->depth - 1);
	else
		defer_times(c, e, e->name, &ds, &e->st, dpath);
	if (c->method == FK_COPY_FSYNC_EACH)
		fsync_now(c, fd, 1, dpath);
	if (e->depth == 0)
		return c->stop; /* the top stays open until the end */
	lv->fd = -1;
	c->nr_open_levels--;
	if (sr == 0)
		release_fd(c, fd, &ds, 1, dpath);
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
	int r = keep_existing(c, e, ddir, name, dpath);
	if (r == 0)
		r = ask_overwrite(c, e, ddir, name, dpath);
	if (r == 0 && (f & (FK_COPY_LINK | FK_COPY_SYMLINK))) {
		r = link_entry(c, e, ddir, name, dpath);
		r = r < 0 ? r : 1;
	}
	if (r == 0)
		r = try_hardlink(c, e, ddir, name, dpath);
	if (r == 0) {
		mode_t t = e->st.st_mode & S_IFMT;
		if (t == S_IFREG)
			r = copy_regular(c, e, ddir, name, dpath);
		else if ((f & FK_COPY_CONTENTS) &&
			 (t == S_IFIFO || t == S_IFCHR || t == S_IFBLK))
			r = copy_stream(c, e, ddir, name, dpath);
		else if (t == S_IFLNK)
			r = copy_symlink(c, e, ddir, name, dpath);
		else
			r = copy_special(c, e, ddir, name, dpath);
	} else if (r > 0) {
		r = 0;
	}
	/* Invariant 9: not copied, or not as its source. */
	if (c->st->errors != errors)
		mark_incomplete(c, e->depth - 1);
	progress(c);
	return r;
}

static int on_error(void *arg, const char *op, const char *path, int err)
{
	struct copy_ctx *c = arg;
	if (err == -ENOENT && strcmp(op, "cannot stat")) {
		c->st->vanished++;
		report(c, FK_REPORT_WARNING, "vanished", path, err);
	} else {
		report(c, FK_REPORT_ERROR, op, path, err);
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
		refuse(c,
		       S_ISLNK(ds->st_mode) ? just_created_symlink_op
					    : just_created_op,
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
		r = existing_ok(sdir, sname, ss, dfd, name, ds,
				existing_flags(c), &what);
	if (sdir >= 0)
		fk_sys.close(sdir);
	free(sdir_name);
	free(sname);
	if (r < 0)
		refuse(c, what, src, display, r);
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
		report(c, FK_REPORT_ERROR, "stat", src, r);
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
		report(c, FK_REPORT_ERROR,
		       "cannot overwrite directory with non-directory", dst,
		       -EISDIR);
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
			report(c, FK_REPORT_ERROR,
			       "cannot overwrite non-directory", dst, -ENOTDIR);
			return -ENOTDIR;
		}
		size_t dl = strlen(dst);
		if (!S_ISDIR(ss.st_mode) && dl && dst[dl - 1] == '/') {
			/* cp -a f new/: a trailing slash names a directory,
			 * never the copy of a file. */
			report(c, FK_REPORT_ERROR, "create", dst, -ENOTDIR);
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
		report(c, FK_REPORT_ERROR, "stat", dst, r);
		return r;
	}
	r = fk_sys.openat(AT_FDCWD, parent, O_RDONLY | O_DIRECTORY, 0);
	if (r < 0) {
		report(c, FK_REPORT_ERROR, "open", parent, r);
		goto fail;
	}
	c->dst_parent_fd = r;
	c->dst_parent_display = parent;
	/* cp: cannot copy a directory into itself.  Refused before anything
	 * is created (the walk would otherwise copy all but the new top). */
	if (S_ISDIR(ss.st_mode) && dir_is_under(r, &ss)) {
		refuse(c, into_self_op, src, display, -EINVAL);
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
		dir = resolve_relpath(c->top_fd, p->relpath, &rest);
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
			report(c, FK_REPORT_ERROR,
			       p->is_dir ? (fd == -ENOENT
						? "copied directory vanished "
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
			report(c, FK_REPORT_ERROR, "utimens", times_path(c, p),
			       r);
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

static int durability_phase(struct copy_ctx *c)
{
	int r = 0;
	struct stat ps, ts;
	/* The top was never created (mkdir failed: EROFS, EACCES, ...;
	 * already reported): nothing to make durable, and no second error
	 * about it. */
	if (fk_sys.fstatat(c->dst_parent_fd, c->dst_name, &ts,
			   AT_SYMLINK_NOFOLLOW) == -ENOENT) {
		if (!c->first_err)
			report(c, FK_REPORT_ERROR, "copy", c->dst_display,
			       -ENOENT);
		return c->first_err;
	}
	if (fk_sys.fstat(c->dst_parent_fd, &ps) < 0)
		memset(&ps, 0, sizeof(ps));

	if (c->method == FK_COPY_SYNCFS) {
		struct utsname u;
		if (uname(&u) == 0 && fk_kernel_before(u.release, 5, 8) == 1)
			report(c, FK_REPORT_WARNING,
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
				report(c, FK_REPORT_ERROR, "open",
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
			report(&c, FK_REPORT_ERROR, "walk", src, r);
	}
	/* What this source made at the top, for the later ones'
	 * (top_existing_ok). */
	struct stat made;
	if (fk_sys.fstatat(c.dst_parent_fd, c.dst_name, &made,
			   AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(made.st_mode))
		link_made(links, &made);
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
		if (is_space_err(r) || r == -ENOMEM)
			*refused = 1;
	} else {
		int fr = durability_phase(&c);
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
	link_map_release(&links);
	return result;
}

int fk_tree_copy(const char *src, const char *dst, const struct fk_tree_opts *o,
		 struct fk_tree_stats *st)
{
	return fk_tree_copy_sources(&src, 1, dst, o, st);
}
