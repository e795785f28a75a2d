// SPDX-License-Identifier: MIT
/*
 * tree_sync.c - fk_tree_sync: make every file and directory under some
 * paths durable, by one of three methods.
 *
 * Interface routine: fk_tree_sync (include/flushkit.h, section tree).
 *
 *  - FK_SYNC_FSYNC: one walk; each regular file opened (after lstat said
 *    S_ISREG, O_NOFOLLOW) and fsynced, each directory fsynced after its
 *    contents.  What rsync --fsync and PostgreSQL before 9.5 did.
 *
 *  - FK_SYNC_TWOPASS: PostgreSQL's SyncDataDirectory (fd.c,
 *    9.5+ with pre_sync_fname): pass 1 walks the tree and starts
 *    writeback of every regular file with sync_file_range(
 *    SYNC_FILE_RANGE_WRITE) over the whole file, through struct
 *    fk_writeback (sorted, merged, fadvise fallback); pass 2 walks again
 *    and fsyncs every file, then every directory after its contents.  By
 *    the time pass 2 waits on the first file, the device is already busy
 *    with all of them.  Every hint of pass 1 is issued before the first
 *    fsync of pass 2.  The descriptor opened in pass 1 is kept open in
 *    the run's fdmap (up to fk_fd_window()) and reused by pass 2, so
 *    a writeback error cannot be lost by inode eviction in between.
 *
 *  - FK_SYNC_AUTO (the default, fk_tree_opts_init): pass 1 of twopass
 *    measuring each file's dirty + writeback pages (cachestat) and
 *    holding the hints; then a sweep (one syncfs per file system and
 *    each file's own writeback error through its kept descriptor) when
 *    the tree holds at least half of the system's dirty data
 *    (fk_sweep_wins), else the hints and pass 2 of twopass.
 *
 *  - FK_SYNC_SYNCFS: one walk (opening no file) to find every distinct
 *    st_dev under the paths (struct fk_fsset of tree.h, which cp
 *    --method=syncfs uses too), then one syncfs(2) per file system.  Before
 *    Linux 5.8 syncfs did not return writeback errors, so on such a
 *    kernel a warning is reported once.
 *
 * In every method: an inode is synced once per run whatever its number
 * of names; failures follow the policy of tree_common.c (sticky, never
 * retried; vanished entries are warnings; unsupported directory fsync
 * gives -FK_EDEGRADED).
 */
#include "sys.h"
#include "tree.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- twopass, pass 1: start writeback of every regular file ---- */

/* A hint auto holds back until it has chosen. */
struct held_hint {
	int fd; /* kept in the fd map */
	uint64_t size;
};

struct hint_pass {
	struct fk_fdmap *m;
	const struct fk_tree_fsync_opts *o;
	struct fk_tree_stats *st;
	struct fk_writeback *wb;
	int result;
	int hint_warned;
	/* auto: what the tree holds of the system's dirty data, and the
	 * file systems a sweep would syncfs */
	struct fk_fsset *fs;
	uint64_t tree_pages;
	int unmeasured;		/* no cachestat, or a file system not added */
	struct held_hint *held; /* auto: hints of kept descriptors, until
				 * it has chosen */
	size_t nr_held, alloc_held;
	uint64_t progress_ns;
};

static void hint_failed(struct hint_pass *p, const char *path, int err)
{
	/* A hint that failed is not a durability failure (pass 2's fsync
	 * is), but say so once. */
	if (p->hint_warned++)
		return;
	fk_tree_report(p->o, p->st, FK_REPORT_WARNING, "sync_file_range", path,
		       err);
}

static int hint_entry(void *arg, const struct fk_walk_entry *e)
{
	struct hint_pass *p = arg;
	mode_t t = e->st.st_mode;
	if (!S_ISREG(t)) {
		if (S_ISLNK(t))
			p->st->symlinks++;
		else
			p->st->specials++;
		return 0; /* never opened */
	}
	if (fk_tree_count(p->m, p->st, &e->st))
		return 0; /* another name of an inode already hinted */
	int fd = fk_tree_open_counted(p->m, e, e->path, p->o, p->st);
	if (fd < 0) {
		if (fd != -ENOENT)
			p->result = fk_tree_result(p->result, fd);
		return 0;
	}
	fk_fdmap_set_flags(p->m, e->st.st_dev, e->st.st_ino, FK_INODE_HINTED);
	if (p->fs) {
		/* Before the hint turns dirty pages into writeback ones:
		 * both count. */
		int64_t pg = fk_dirty_pages_fd(fd);
		if (pg < 0)
			p->unmeasured = 1;
		else
			p->tree_pages += (uint64_t)pg;
		if (!fk_fsset_has(p->fs, e->st.st_dev))
			p->unmeasured = 1; /* a lone file on its own fs */
	}
	int kept = fk_fdmap_put(p->m, e->st.st_dev, e->st.st_ino, fd, 0);
	if (e->st.st_size > 0 && p->fs && kept == 0 &&
	    p->nr_held == p->alloc_held) {
		size_t n = p->alloc_held ? p->alloc_held * 2 : 1024;
		struct held_hint *h = realloc(p->held, n * sizeof(*h));
		if (h) {
			p->held = h;
			p->alloc_held = n;
		}
	}
	if (e->st.st_size > 0 && p->fs && kept == 0 &&
	    p->nr_held < p->alloc_held) {
		/* auto: held until it has chosen (a sweep needs none). */
		p->held[p->nr_held++] =
		    (struct held_hint){fd, (uint64_t)e->st.st_size};
	} else if (e->st.st_size > 0) {
		int r =
		    fk_writeback_note(p->wb, fd, 0, (uint64_t)e->st.st_size);
		if (r < 0)
			hint_failed(p, e->path, r);
	}
	if (kept != 0) {
		/* Over budget: issue what is pending for this fd before
		 * closing it; pass 2 will reopen the file. */
		int r = fk_writeback_issue_fd(p->wb, fd);
		if (r < 0)
			hint_failed(p, e->path, r);
		fk_writeback_forget(p->wb, fd);
		fk_sys.close(fd);
	}
	fk_tree_progress(p->o, p->st, &p->progress_ns, 0);
	return 0;
}

static int hint_dir_pre(void *arg, const struct fk_walk_entry *e)
{
	struct hint_pass *p = arg;
	/* Seen before in this run (overlapping paths): already walked. */
	if (fk_tree_count(p->m, p->st, &e->st))
		return 1;
	if (p->fs && !fk_fsset_has(p->fs, e->st.st_dev)) {
		int fd = fk_sys.openat(e->fd, ".",
				       O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
		if (fd < 0 || fk_fsset_add(p->fs, e->st.st_dev, fd, e->path))
			p->unmeasured = 1; /* no sweep then */
	}
	return 0;
}

static int hint_error(void *arg, const char *op, const char *path, int err)
{
	struct hint_pass *p = arg;
	int r = fk_tree_walk_error(p->m, p->o, p->st, op, path, err);
	if (r == -ENOMEM)
		return r;
	p->result = fk_tree_result(p->result, r);
	return 0;
}

static int hint_tree(const char *root, struct hint_pass *p)
{
	static const struct fk_walk_ops ops = {
	    .dir_pre = hint_dir_pre,
	    .entry = hint_entry,
	    .error = hint_error,
	};
	int r = fk_walk(AT_FDCWD, root, &ops, p);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		fk_fdmap_note_path(p->m, "stat", root);
		fk_tree_report(p->o, p->st, FK_REPORT_ERROR, "stat", root, r);
		p->result = fk_tree_result(p->result, r);
	}
	return 0;
}

static int sync_twopass(const char *const *paths, size_t nr_paths,
			struct fk_fdmap *m, const struct fk_tree_opts *to,
			const struct fk_tree_fsync_opts *o,
			struct fk_tree_stats *st)
{
	struct fk_writeback wb;
	/* flush_after_bytes 0: no hints (writeback.c invariant 3), as for
	 * fk_tree_copy and the store's checkpoint_flush_after_bytes.  auto
	 * holds the hints of kept descriptors until it has chosen: a sweep
	 * needs none (the syncfs writes it all, and each hint would run the
	 * file system's writepages on this thread). */
	fk_writeback_init(&wb, to->flush_after_bytes);
	struct hint_pass p = {.m = m, .o = o, .st = st, .wb = &wb};
	int result = 0;
	if (to->sync_method == FK_SYNC_AUTO && fk_fsset_create(&p.fs) < 0)
		return -ENOMEM;

	uint64_t t0 = fk_now_ns();
	for (size_t i = 0; i < nr_paths; i++) {
		int r = hint_tree(paths[i], &p);
		if (r < 0) {
			result = r;
			break;
		}
	}
	/*
	 * auto: when the tree holds at least half of the system's dirty
	 * data, one syncfs of each of its file systems writes it in one
	 * sweep (what sync -f costs), and pass 2 only collects each
	 * file's own writeback error.  Else, or if a syncfs failed
	 * (perhaps for another program's file), the hints, then pass 2
	 * fsyncs each file.
	 */
	int sweep = p.fs && !p.unmeasured && p.tree_pages &&
		    fk_fsset_nr(p.fs) && result != -ENOMEM &&
		    fk_sweep_wins(p.tree_pages);
	uint64_t tw = fk_now_ns();
	if (sweep && fk_fsset_sweep(p.fs, st) != 0)
		sweep = 0; /* pass 2 fsyncs all */
	for (size_t i = 0; !sweep && i < p.nr_held; i++) {
		int hr =
		    fk_writeback_note(&wb, p.held[i].fd, 0, p.held[i].size);
		if (hr < 0)
			hint_failed(&p, nr_paths ? paths[0] : "", hr);
	}
	free(p.held);
	int r = fk_writeback_issue(&wb);
	if (r < 0)
		hint_failed(&p, nr_paths ? paths[0] : "", r);
	st->writeback_ranges = wb.ranges_issued;
	st->writeback_bytes = wb.bytes_issued;
	fk_writeback_release(&wb);
	uint64_t t1 = fk_now_ns();
	/* A sweep's syncfs is the fsync phase's. */
	st->writeback_ns = (sweep ? tw : t1) - t0;
	if (sweep)
		t1 = tw;
	result = fk_tree_result(result, p.result);
	if (result == -ENOMEM) {
		fk_fsset_destroy(p.fs);
		return result;
	}

	struct fk_tree_fsync_opts check = *o;
	const struct fk_tree_fsync_opts *po = o;
	if (sweep) {
		check.batch = NULL;
		check.flags |= FK_PASS_CHECK;
		po = &check;
	}
	fk_fsset_destroy(p.fs);
	for (size_t i = 0; i < nr_paths; i++) {
		r = fk_tree_fsync_pass(AT_FDCWD, paths[i], NULL, m, po, st);
		if (r == -ENOMEM)
			return r;
		result = fk_tree_result(result, r);
	}
	st->fsync_ns = fk_now_ns() - t1;
	return result;
}

/* ---- fsync: one pass ---- */

static int sync_fsync(const char *const *paths, size_t nr_paths,
		      struct fk_fdmap *m, const struct fk_tree_opts *to,
		      const struct fk_tree_fsync_opts *o,
		      struct fk_tree_stats *st)
{
	struct fk_tree_fsync_opts counting = *o;
	int result = 0;
	(void)to;
	counting.flags |= FK_PASS_COUNT;
	uint64_t t0 = fk_now_ns();
	for (size_t i = 0; i < nr_paths; i++) {
		int r = fk_tree_fsync_pass(AT_FDCWD, paths[i], NULL, m,
					   &counting, st);
		if (r == -ENOMEM)
			return r;
		result = fk_tree_result(result, r);
	}
	st->fsync_ns = fk_now_ns() - t0;
	return result;
}

/* ---- syncfs: one call per file system ---- */

struct fs_pass {
	struct fk_fdmap *m;
	const struct fk_tree_fsync_opts *o;
	struct fk_tree_stats *st;
	struct fk_fsset *fs;
	int result;
	int nomem;
	uint64_t progress_ns;
};

/* Remember file system @dev with a descriptor on it (taken over). */
static void add_dev(struct fs_pass *p, dev_t dev, int fd, const char *path)
{
	if (fk_fsset_add(p->fs, dev, fd, path) == -ENOMEM)
		p->nomem = 1;
}

static int known_dev(const struct fs_pass *p, dev_t dev)
{
	return fk_fsset_has(p->fs, dev);
}

static int fs_dir_pre(void *arg, const struct fk_walk_entry *e)
{
	struct fs_pass *p = arg;
	if (fk_tree_count(p->m, p->st, &e->st))
		return 1;
	if (!known_dev(p, e->st.st_dev)) {
		/* The walker owns e->fd; keep a descriptor of our own. */
		int fd = fk_sys.openat(e->fd, ".",
				       O_RDONLY | O_DIRECTORY | O_NOCTTY, 0);
		if (fd < 0) {
			int r = fk_tree_walk_error(p->m, p->o, p->st, "open",
						   e->path, fd);
			p->result = fk_tree_result(p->result, r);
		} else {
			add_dev(p, e->st.st_dev, fd, e->path);
		}
	}
	fk_tree_progress(p->o, p->st, &p->progress_ns, 0);
	return p->nomem ? -ENOMEM : 0;
}

static int fs_entry(void *arg, const struct fk_walk_entry *e)
{
	struct fs_pass *p = arg;
	mode_t t = e->st.st_mode;
	if (S_ISLNK(t)) {
		p->st->symlinks++;
	} else if (!S_ISREG(t)) {
		p->st->specials++;
	} else if (!fk_tree_count(p->m, p->st, &e->st) &&
		   !known_dev(p, e->st.st_dev)) {
		/* A regular file on a file system of its own (a bind-mounted
		 * file, or a file given as PATH).  Special files are never
		 * opened: their inode lives on their directory's file
		 * system, which the walk reaches anyway. */
		int fd = fk_tree_open_counted(p->m, e, e->path, p->o, p->st);
		if (fd >= 0)
			add_dev(p, e->st.st_dev, fd, e->path);
		else if (fd != -ENOENT)
			p->result = fk_tree_result(p->result, fd);
	}
	if (e->depth == 0 && !S_ISREG(t) && !known_dev(p, e->st.st_dev)) {
		/* PATH is a symlink or special file: sync the file system
		 * holding it, through its parent directory. */
		int fd = fk_sys.openat(e->dirfd, ".",
				       O_RDONLY | O_DIRECTORY | O_NOCTTY, 0);
		if (fd >= 0)
			add_dev(p, e->st.st_dev, fd, e->path);
	}
	fk_tree_progress(p->o, p->st, &p->progress_ns, 0);
	return p->nomem ? -ENOMEM : 0;
}

static int fs_error(void *arg, const char *op, const char *path, int err)
{
	struct fs_pass *p = arg;
	int r = fk_tree_walk_error(p->m, p->o, p->st, op, path, err);
	if (r == -ENOMEM)
		return r;
	p->result = fk_tree_result(p->result, r);
	return 0;
}

/* 1 if this kernel's syncfs does not report writeback errors (< 5.8). */
static int syncfs_loses_errors(void)
{
	struct utsname u;
	if (uname(&u) != 0)
		return 0;
	return fk_kernel_before(u.release, 5, 8) == 1;
}

static int sync_syncfs(const char *const *paths, size_t nr_paths,
		       struct fk_fdmap *m, const struct fk_tree_opts *to,
		       const struct fk_tree_fsync_opts *o,
		       struct fk_tree_stats *st)
{
	static const struct fk_walk_ops ops = {
	    .dir_pre = fs_dir_pre,
	    .entry = fs_entry,
	    .error = fs_error,
	};
	struct fs_pass p = {.m = m, .o = o, .st = st};
	int result = 0;
	(void)to;
	if (fk_fsset_create(&p.fs) < 0)
		return -ENOMEM;

	if (syncfs_loses_errors())
		fk_tree_report(o, st, FK_REPORT_WARNING,
			       "syncfs (kernels before 5.8 do not report its "
			       "errors)",
			       nr_paths ? paths[0] : "", -ENOTSUP);

	uint64_t t0 = fk_now_ns();
	for (size_t i = 0; i < nr_paths && !p.nomem; i++) {
		int r = fk_walk(AT_FDCWD, paths[i], &ops, &p);
		if (r < 0 && r != -ENOMEM) {
			fk_tree_report(o, st, FK_REPORT_ERROR, "stat", paths[i],
				       r);
			result = fk_tree_result(result, r);
		}
	}
	uint64_t t1 = fk_now_ns();
	st->walk_ns = t1 - t0;
	result = fk_tree_result(result, p.result);
	if (!p.nomem)
		result = fk_tree_result(result, fk_fsset_syncfs(p.fs, o, st));
	fk_fsset_destroy(p.fs);
	st->fsync_ns = fk_now_ns() - t1;
	return p.nomem ? -ENOMEM : result;
}

int fk_tree_sync(const char *const *paths, size_t nr_paths,
		 const struct fk_tree_opts *o, struct fk_tree_stats *st)
{
	struct fk_tree_opts defaults;
	struct fk_tree_stats local;
	if (!o) {
		fk_tree_opts_init(&defaults);
		o = &defaults;
	}
	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	if (!paths || !nr_paths)
		return -EINVAL;
	for (size_t i = 0; i < nr_paths; i++)
		if (!paths[i] || !paths[i][0])
			return -EINVAL;

	int (*fn)(const char *const *, size_t, struct fk_fdmap *,
		  const struct fk_tree_opts *,
		  const struct fk_tree_fsync_opts *, struct fk_tree_stats *);
	size_t max_fds = 0;
	switch (o->sync_method) {
	case FK_SYNC_TWOPASS:
	case FK_SYNC_AUTO:
		fn = sync_twopass;
		break;
	case FK_SYNC_FSYNC:
		fn = sync_fsync;
		break;
	case FK_SYNC_SYNCFS:
		fn = sync_syncfs;
		break;
	default:
		return -EINVAL;
	}

	struct fk_tree_fsync_opts fo = {
	    .report = o->report,
	    .report_arg = o->report_arg,
	    .progress = o->progress,
	    .progress_arg = o->progress_arg,
	};

	/* A PATH that is a symlink to a directory is followed, as
	 * sync -f does; below it, nothing is. */
	char **walk_paths = calloc(nr_paths, sizeof(*walk_paths));
	if (!walk_paths)
		return -ENOMEM;
	int r = 0;
	for (size_t i = 0; i < nr_paths && !r; i++) {
		struct stat lst, fst;
		const char *p = paths[i];
		if (fk_sys.fstatat(AT_FDCWD, p, &lst, AT_SYMLINK_NOFOLLOW) ==
			0 &&
		    S_ISLNK(lst.st_mode) &&
		    fk_sys.fstatat(AT_FDCWD, p, &fst, 0) == 0 &&
		    S_ISDIR(fst.st_mode)) {
			size_t len = strlen(p);
			walk_paths[i] = malloc(len + 3);
			if (walk_paths[i]) {
				memcpy(walk_paths[i], p, len);
				memcpy(walk_paths[i] + len, "/.", 3);
			}
		} else {
			walk_paths[i] = strdup(p);
		}
		if (!walk_paths[i])
			r = -ENOMEM;
	}

	/* Pass 2 of twopass is batched; fsync stays one at a time (the
	 * baseline). */
	struct fk_fsync_batch *batch = NULL;
	int twopass =
	    o->sync_method == FK_SYNC_TWOPASS || o->sync_method == FK_SYNC_AUTO;
	if (!r && twopass) {
		r = fk_tree_batch_create(o, st, &batch);
		fo.batch = batch;
	}
	/* After the batch (io_uring's ring is a descriptor too). */
	if (!r)
		r = fk_tree_fd_check(&fo, st, paths[0]);
	if (!r && twopass)
		max_fds = fk_fd_window();
	struct fk_fdmap *m = NULL;
	if (!r)
		r = fk_fdmap_create(max_fds, &m);
	uint64_t t0 = fk_now_ns();
	if (!r)
		r = fn((const char *const *)walk_paths, nr_paths, m, o, &fo,
		       st);
	fk_fdmap_destroy(m);
	fk_fsync_batch_destroy(batch);
	for (size_t i = 0; i < nr_paths; i++)
		free(walk_paths[i]);
	free(walk_paths);
	st->total_ns = fk_now_ns() - t0;
	uint64_t last = 0;
	fk_tree_progress(&fo, st, &last, 1);
	if (r == 0 && st->degraded)
		r = -FK_EDEGRADED;
	return r;
}
