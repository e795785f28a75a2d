// SPDX-License-Identifier: MIT
/*
 * setup.c - bench fsmark's setup: the directories (-d, -D), the buffer
 * and the fsync batches, released again; the devices under the
 * directories (/sys/block/DEV/stat).
 */
#include "cli-sys.h"
#include "cli.h"
#include "fsmark.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- device statistics ---- */

/* Find /sys/block/DEV/stat for st_dev (a partition's parent disk). */
void fsm_dev_resolve(struct dev_stat *d)
{
	char link[128], real[PATH_MAX], path[PATH_MAX + 32];
	if (major(d->dev) == 0) {
		snprintf(d->why, sizeof(d->why),
			 "st_dev %u:%u is not a block device", major(d->dev),
			 minor(d->dev));
		return;
	}
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(d->dev),
		 minor(d->dev));
	if (!realpath(link, real)) {
		snprintf(d->why, sizeof(d->why), "%.200s: %.200s", link,
			 strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0) {
		char *slash = strrchr(real, '/');
		if (slash)
			*slash = 0;
	}
	const char *base = strrchr(real, '/');
	snprintf(d->name, sizeof(d->name), "%.100s", base ? base + 1 : real);
	d->ok = 1;
}

int fsm_dev_read(struct dev_stat *d, uint64_t *writes, uint64_t *sectors)
{
	char path[192];
	snprintf(path, sizeof(path), "/sys/block/%.100s/stat", d->name);
	FILE *fp = fopen(path, "r");
	if (!fp) {
		snprintf(d->why, sizeof(d->why), "%.200s: %.200s", path,
			 strerror(errno));
		d->ok = 0;
		return -1;
	}
	unsigned long long v[7];
	int n = fscanf(fp, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		       &v[2], &v[3], &v[4], &v[5], &v[6]);
	fclose(fp);
	if (n != 7) {
		snprintf(d->why, sizeof(d->why), "%.200s: unexpected format",
			 path);
		d->ok = 0;
		return -1;
	}
	*writes = v[4];
	*sectors = v[6];
	return 0;
}

/* ---- the directories ---- */

/* Create directory @name under @dfd if missing (as fs_mark: not its
 * parents).  @shown: the path for messages.  Returns 0 or -errno
 * (printed). */
static int make_dir(int dfd, const char *name, const char *shown)
{
	int err = cli_sys.mkdirat(dfd, name, 0755);
	if (err && err != -EEXIST) {
		cli_error("mkdir '%s': %s", shown, fk_strerror(err));
		return err;
	}
	return 0;
}

/* -D: create and open the subdirectories 00, 01, ... of @t's
 * directory.  Returns 0 or -errno (printed). */
static int open_subdirs(struct fsm_thread *t)
{
	unsigned n = t->f->subdirs;
	t->subfd = malloc(n * sizeof(*t->subfd));
	if (!t->subfd)
		return -ENOMEM;
	for (unsigned k = 0; k < n; k++)
		t->subfd[k] = -1;
	for (unsigned k = 0; k < n; k++) {
		char name[16], shown[PATH_MAX + 16];
		snprintf(name, sizeof(name), "%02x", k);
		snprintf(shown, sizeof(shown), "%s/%s", t->dir, name);
		int err = make_dir(t->dirfd, name, shown);
		if (err)
			return err;
		t->subfd[k] = cli_sys.openat(
		    t->dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
		if (t->subfd[k] < 0) {
			cli_error("open '%s': %s", shown,
				  fk_strerror(t->subfd[k]));
			return t->subfd[k];
		}
	}
	return 0;
}

int fsm_setup(struct fsm *f, const char **backend)
{
	/* Batch methods keep a thread's files open until their fsync. */
	struct rlimit rl;
	size_t budget = 1000;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 128)
			budget = (size_t)(rl.rlim_cur - 128);
		else if (rl.rlim_cur == RLIM_INFINITY)
			budget = 1u << 20;
	}
	f->fd_chunk = budget / f->threads;
	if (f->fd_chunk < 1)
		f->fd_chunk = 1;
	if (f->fd_chunk > f->files)
		f->fd_chunk = f->files;
	f->buf = malloc(f->write_size);
	f->th = calloc(f->threads, sizeof(*f->th));
	if (!f->buf || !f->th)
		return -ENOMEM;
	for (size_t i = 0; i < f->write_size; i++)
		f->buf[i] = (char)('a' + i % 26);
	for (unsigned i = 0; i < f->threads; i++) {
		struct fsm_thread *t = &f->th[i];
		t->f = f;
		t->id = i;
		t->dir = f->dirs[i % f->nr_dirs];
		t->dirfd = -1;
		t->rng = (uint32_t)(fk_now_ns() ^ (i * 2654435761u) ^
				    ((uint32_t)getpid() << 16)) |
			 1;
		t->names = calloc(f->files, sizeof(*t->names));
		t->fds = calloc(f->files, sizeof(*t->fds));
		t->reqs = calloc(f->fd_chunk, sizeof(*t->reqs));
		t->free_reqs = calloc(f->fd_chunk, sizeof(*t->free_reqs));
		t->born_ns = calloc(f->files, sizeof(*t->born_ns));
		t->sub = calloc(f->files, sizeof(*t->sub));
		pthread_mutex_init(&t->lock, NULL);
		if (!t->names || !t->fds || !t->reqs || !t->free_reqs ||
		    !t->born_ns || !t->sub || fk_hist_init(&t->hist))
			return -ENOMEM;
		t->hist_ok = 1;
		const char *failed = t->dir;
		int err = cli_mkdir_parents(t->dir, 0755, &failed);
		if (err) {
			cli_error("mkdir '%s': %s", failed, fk_strerror(err));
			return err;
		}
		t->dirfd =
		    cli_sys.openat(AT_FDCWD, t->dir, O_RDONLY | O_DIRECTORY, 0);
		if (t->dirfd < 0) {
			cli_error("open '%s': %s", t->dir,
				  fk_strerror(t->dirfd));
			return t->dirfd;
		}
		if (f->subdirs && (err = open_subdirs(t)))
			return err;
		if (f->method >= M_BATCH) {
			err = fk_fsync_batch_create(&f->bopts, &t->batch);
			if (err) {
				cli_error("cannot set up --sync-io=%s: %s",
					  fk_sync_io_name(f->bopts.sync_io),
					  fk_strerror(err));
				return err;
			}
			*backend =
			    fk_sync_io_name(fk_fsync_batch_backend(t->batch));
		}
	}
	return 0;
}

void fsm_release(struct fsm *f)
{
	for (unsigned i = 0; f->th && i < f->threads; i++) {
		struct fsm_thread *t = &f->th[i];
		if (t->dirfd >= 0)
			cli_sys.close(t->dirfd);
		for (unsigned k = 0; t->subfd && k < f->subdirs; k++)
			if (t->subfd[k] >= 0)
				cli_sys.close(t->subfd[k]);
		free(t->subfd);
		free(t->sub);
		fk_fsync_batch_destroy(t->batch);
		free(t->names);
		free(t->fds);
		free(t->reqs);
		free(t->free_reqs);
		free(t->born_ns);
		if (t->hist_ok)
			fk_hist_release(&t->hist);
		if (t->f)
			pthread_mutex_destroy(&t->lock);
	}
	free(f->th);
	free(f->buf);
	free(f->per_sec);
}

/* -F: whether each thread's file system has room for another loop of
 * its files (fs_mark's check_space); says so when not. */
int fsm_space_for_loop(const struct fsm *f)
{
	for (unsigned i = 0; i < f->threads; i++) {
		struct statfs sf;
		if (cli_sys.fstatfs(f->th[i].dirfd, &sf))
			continue;
		if ((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize <
		    f->size * f->files) {
			printf("Insufficient free space in %s to create %u new "
			       "files, exiting\n",
			       f->th[i].dir, f->files);
			return 0;
		}
	}
	return 1;
}
