// SPDX-License-Identifier: MIT
/*
 * tree_copy_meta.c - an entry's metadata and what is in its way: owner,
 * mode, xattrs and ACLs after content; the same-file and cp refusal
 * checks on an existing destination, backups (--backup), removing what
 * is replaced; the fsync of one file (fsync-each) and keeping written
 * descriptors for the final pass.  The lowest part but report: file,
 * links, update and durable call it.  Part of fk_tree_copy
 * (tree_copy.c).
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
			fk_copy_report(c, FK_REPORT_WARNING, "setxattr", path,
				       r);
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
void fk_copy_symlink_xattrs(struct copy_ctx *c, int sdir, const char *sname,
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
			fk_copy_report(c, FK_REPORT_WARNING, "setxattr", path,
				       -errno);
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
		fk_copy_report(c, FK_REPORT_ERROR, "chown", path, err);
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
int fk_copy_set_meta_fd(struct copy_ctx *c, int sfd, int dfd,
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
		fk_copy_report(c, FK_REPORT_ERROR, "chmod", path, r);
		return r;
	}
	if (!set_times || (c->o->copy_flags & FK_COPY_NO_TIMES))
		return 0;
	struct timespec ts[2] = {s->st_atim, s->st_mtim};
	r = fk_sys.futimens(dfd, ts);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "utimens", path, r);
		return r;
	}
	return 0;
}

/* Owner, mode, times of a symlink or special file, by name. */
void fk_copy_set_meta_at(struct copy_ctx *c, int ddir, const char *name,
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
			fk_copy_report(c, FK_REPORT_ERROR, "chmod", path, r);
	}
	if (c->o->copy_flags & FK_COPY_NO_TIMES)
		return;
	struct timespec ts[2] = {s->st_atim, s->st_mtim};
	r = fk_sys.utimensat(ddir, name, ts, AT_SYMLINK_NOFOLLOW);
	if (r < 0)
		fk_copy_report(c, FK_REPORT_ERROR, "utimens", path, r);
}

/* Whether @a and @b are one inode. */
int fk_copy_same_inode(const struct stat *a, const struct stat *b)
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
	       fk_sys.fstat(bdir, &b) == 0 && fk_copy_same_inode(&a, &b);
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
unsigned fk_copy_existing_flags(const struct copy_ctx *c)
{
	return c->o->copy_flags | (c->o->backup ? CP_BACKUP : 0);
}

int fk_copy_existing_ok(int sdir, const char *sname, const struct stat *s,
			int ddir, const char *dname, const struct stat *d,
			unsigned flags, const char **what)
{
	int rm = !!(flags & FK_COPY_REMOVE_DEST);
	int same = fk_copy_same_inode(s, d);
	*what = fk_copy_same_file_op;
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
	if (sr == 0 && dr == 0 && fk_copy_same_inode(&ts, &td) &&
	    (flags & FK_COPY_LINK))
		/* cp -l: a symlink to the source is replaced by a link of
		 * it; the file a source symlink names is left as it is (a
		 * link of the symlink in its place would lose its data). */
		return S_ISLNK(d->st_mode) ? 0 : 1;
	if (sr == 0 && dr == 0 && fk_copy_same_inode(&ts, &td))
		return -EEXIST;
	if (S_ISREG(s->st_mode) && S_ISLNK(d->st_mode) && !rm) {
		if (dr == -ENOENT) {
			*what = fk_copy_dangling_op;
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
	if (there && !numbered && fk_copy_same_inode(&bs, &e->st)) {
		fk_copy_refuse(c, fk_copy_backup_is_src_op, e->path, dpath,
			       -EEXIST);
		free(bname);
		return 1;
	}
	if (r == 0 && there && numbered)
		r = -EEXIST;
	if (r == 0)
		r = fk_sys.renameat(ddir, name, ddir, bname);
	if (r < 0) {
		fk_copy_report(c, FK_REPORT_ERROR, "cannot backup", dpath, r);
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
			fk_copy_report(c, FK_REPORT_ERROR, "open backup", dpath,
				       r);
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
	if (r == 0 && c->o->backed_up) {
		/* The backup's display path: @dpath's directory and bname. */
		const char *slash = strrchr(dpath, '/');
		size_t dl = slash ? (size_t)(slash - dpath) + 1 : 0;
		char *bpath = malloc(dl + strlen(bname) + 1);
		if (bpath) {
			memcpy(bpath, dpath, dl);
			strcpy(bpath + dl, bname);
			c->o->backed_up(c->o->backed_up_arg, dpath, bpath);
			free(bpath);
		}
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
int fk_copy_remove_existing(struct copy_ctx *c, const struct fk_walk_entry *e,
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
	r = fk_copy_existing_ok(e->dirfd, e->name, &e->st, ddir, name, &s,
				fk_copy_existing_flags(c), &what);
	if (r < 0)
		fk_copy_refuse(c, what, e->path, dpath, r);
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
int fk_copy_fsync_now(struct copy_ctx *c, int fd, int is_dir, const char *path)
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
void fk_copy_release_fd(struct copy_ctx *c, int fd, const struct stat *ds,
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
		fk_copy_report(c, FK_REPORT_ERROR, "close", path, r);
}
