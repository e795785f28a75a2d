/* SPDX-License-Identifier: MIT */
/*
 * tree_copy.h - what the parts of fk_tree_copy() share (internal; the
 * public interface is flushkit.h's fk_tree_copy and fk_tree_copy_sources):
 * the copy context (struct copy_ctx), the hard-link map, the growable
 * string, and the functions one part calls in another.  The parts, in
 * the order a copy meets them (each file's own comment says more):
 *   tree_copy.c          the context, the walker callbacks, setting up
 *                        the destination, the entry points; the design
 *                        and its invariants (top comment)
 *   tree_copy_file.c     regular files (data, sparse, reflink), symlinks
 *                        and special files, cp -l/-s/--copy-contents
 *   tree_copy_links.c    the hard-link map and linking later names
 *   tree_copy_meta.c     owner, mode, xattrs; what is in the way
 *                        (same file, backup); the fsync of one file
 *   tree_copy_update.c   an existing destination left as it is
 *                        (--update, -n)
 *   tree_copy_durable.c  the durability phase: times pass, fsync or
 *                        syncfs, the destination's parent last
 *   tree_copy_prefetch.c the read-ahead thread across directories
 *   tree_copy_report.c   errors, cp's refusals, progress, cp -v (the
 *                        lowest part: it calls no other)
 * Functions here are global in the objects (fk_copy_ names, so a program
 * linking libflushkit.a meets no bare name) but not exported from
 * libflushkit.so (src/libflushkit.map).
 */
#ifndef FK_TREE_COPY_H
#define FK_TREE_COPY_H
#include "flushkit.h"
#include "tree.h"
#include "walk.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static inline int sbuf_grow(struct sbuf *s, size_t extra)
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

static inline int sbuf_add(struct sbuf *s, const char *str, size_t len)
{
	int r = sbuf_grow(s, len);
	if (r)
		return r;
	memcpy(s->buf + s->len, str, len);
	s->len += len;
	s->buf[s->len] = 0;
	return 0;
}

static inline void sbuf_truncate(struct sbuf *s, size_t len)
{
	s->len = len;
	if (s->buf)
		s->buf[len] = 0;
}

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

enum copy_fail {
	FAIL_NONE,
	FAIL_SRC, /* reading the source failed: skip this file */
	FAIL_DST, /* writing the destination failed: stop */
};

/* The words cp's refusals are reported with (tree_copy_report.c; refuse()
 * maps them to enum fk_copy_refusal by address). */
extern const char fk_copy_same_file_op[], fk_copy_dangling_op[],
    fk_copy_just_created_symlink_op[], fk_copy_just_created_op[],
    fk_copy_into_self_op[], fk_copy_backup_is_src_op[], fk_copy_link_op[],
    fk_copy_symlink_op[];

/* tree_copy_report.c */
void fk_copy_report(struct copy_ctx *c, int level, const char *op,
		    const char *path, int err);
void fk_copy_refuse(struct copy_ctx *c, const char *op, const char *src,
		    const char *dst, int err);
void fk_copy_progress(struct copy_ctx *c);
void fk_copy_copied(struct copy_ctx *c, const struct fk_walk_entry *e,
		    const char *dpath);
int fk_copy_is_space_err(int err);

/* tree_copy_meta.c */
void fk_copy_symlink_xattrs(struct copy_ctx *c, int sdir, const char *sname,
			    int ddir, const char *dname, const char *path);
int fk_copy_set_meta_fd(struct copy_ctx *c, int sfd, int dfd,
			const struct stat *s, const char *path, int set_times);
void fk_copy_set_meta_at(struct copy_ctx *c, int ddir, const char *name,
			 const struct stat *s, const char *path);
int fk_copy_same_inode(const struct stat *a, const struct stat *b);
unsigned fk_copy_existing_flags(const struct copy_ctx *c);
int fk_copy_existing_ok(int sdir, const char *sname, const struct stat *s,
			int ddir, const char *dname, const struct stat *d,
			unsigned flags, const char **what);
int fk_copy_remove_existing(struct copy_ctx *c, const struct fk_walk_entry *e,
			    int ddir, const char *name, const char *dpath,
			    struct stat *ds);
int fk_copy_fsync_now(struct copy_ctx *c, int fd, int is_dir, const char *path);
void fk_copy_release_fd(struct copy_ctx *c, int fd, const struct stat *ds,
			int is_dir, const char *path);

/* tree_copy_file.c */
void fk_copy_defer_times(struct copy_ctx *c, const struct fk_walk_entry *e,
			 const char *name, const struct stat *ds,
			 const struct stat *s, const char *dpath);
int fk_copy_open_source(const struct copy_ctx *c,
			const struct fk_walk_entry *e);
int fk_copy_regular(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		    const char *name, const char *dpath);
int fk_copy_symlink(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		    const char *name, const char *dpath);
int fk_copy_special(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		    const char *name, const char *dpath);
int fk_copy_link_entry(struct copy_ctx *c, const struct fk_walk_entry *e,
		       int ddir, const char *name, const char *dpath);
int fk_copy_stream(struct copy_ctx *c, const struct fk_walk_entry *e, int ddir,
		   const char *name, const char *dpath);
int fk_copy_ask_overwrite(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath);

/* tree_copy_links.c */
void fk_copy_link_made(struct link_map *m, const struct stat *st);
struct link_slot *fk_copy_link_find(const struct link_map *m, dev_t dev,
				    ino_t ino, dev_t dst_dev);
void fk_copy_link_map_release(struct link_map *m);
int fk_copy_resolve_relpath(int base, const char *relpath, const char **rest);
dev_t fk_copy_dst_dev_of(int ddir);
int fk_copy_try_hardlink(struct copy_ctx *c, const struct fk_walk_entry *e,
			 int ddir, const char *name, const char *dpath);
void fk_copy_remember_link(struct copy_ctx *c, const struct fk_walk_entry *e,
			   int ddir, const char *name, const char *dpath);

/* tree_copy_update.c */
int fk_copy_keep_existing(struct copy_ctx *c, const struct fk_walk_entry *e,
			  int ddir, const char *name, const char *dpath);

/* tree_copy_durable.c */
int fk_copy_durability_phase(struct copy_ctx *c);

#endif
