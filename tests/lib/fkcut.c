// SPDX-License-Identifier: MIT
/*
 * fkcut.c - file systems on a lab disk, cut at the disk (see fkcut.h).
 */
#include "fkcut.h"
#include "fkloop.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const modes[] = {"drop", "subset", "reorder"};

int fkt_cut_mode_ok(const char *mode)
{
	if (!mode || !strcmp(mode, "mixed"))
		return 0;
	for (size_t i = 0; i < 3; i++)
		if (!strcmp(mode, modes[i]))
			return 0;
	return -1;
}

int fkt_cut_opts_env(struct fkt_cut_opts *o, uint64_t seed)
{
	memset(o, 0, sizeof(*o));
	o->seed = seed;
	const char *m = getenv("FK_CUT_MODE");
	if (m && *m) {
		if (fkt_cut_mode_ok(m)) {
			fprintf(stderr,
				"fkcut: FK_CUT_MODE '%s': not drop, "
				"subset, reorder or mixed\n",
				m);
			return -1;
		}
		o->mode = m;
	}
	const char *f = getenv("FK_CUT_FLUSH");
	if (f && *f) {
		if (!strcmp(f, "ignore"))
			o->flush_ignore = 1;
		else if (strcmp(f, "honor")) {
			fprintf(stderr,
				"fkcut: FK_CUT_FLUSH '%s': not honor or "
				"ignore\n",
				f);
			return -1;
		}
	}
	/* A disk that ignores FLUSH and keeps a random part of its cache
	 * leaves a file system that may not mount at all; the control's
	 * default is drop: the image as at the window's start. */
	if (o->flush_ignore && !o->mode)
		o->mode = "drop";
	const char *c = getenv("FK_CUT");
	return c && !strcmp(c, "disk");
}

static uint64_t next(struct fkt_cut *c)
{
	/* splitmix64 */
	uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static int flush_dev(const char *dev)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = fsync(fd) ? -errno : 0;
	close(fd);
	return r;
}

int fkt_fs_create_cut(struct fkt_fs *fs, const char *type, uint64_t size_bytes,
		      const char *mnt, const struct fkt_cut_opts *o)
{
	static unsigned serial;
	char bin[4096];
	memset(fs, 0, sizeof(*fs));
	if (!fkt_is_root() || access("/dev/fuse", R_OK | W_OK) ||
	    access("/dev/loop-control", F_OK) ||
	    labdisk_daemon_path(bin, sizeof(bin)))
		return 77;
	if (fkt_cut_mode_ok(o->mode) || strlen(type) >= sizeof(fs->type) ||
	    strlen(mnt) >= sizeof(fs->mnt))
		return -1;
	struct fkt_cut *c = calloc(1, sizeof(*c));
	if (!c)
		return -1;
	snprintf(c->mode, sizeof(c->mode), "%s",
		 o->mode && strcmp(o->mode, "mixed") ? o->mode : "");
	c->flush_ignore = o->flush_ignore;
	c->rng = o->seed;
	char name[64];
	snprintf(name, sizeof(name), "fkcut-%ld-%u", (long)getpid(), serial++);
	struct labdisk_opts lo = {.model = "ram",
				  .size = size_bytes,
				  .name = name,
				  .orphan_cleanup = 1};
	if (labdisk_create(&lo, &c->disk)) {
		fprintf(stderr, "fkcut: cannot create the lab disk %s\n", name);
		free(c);
		return -1;
	}
	int r = fkt_mkfs(type, c->disk.dev);
	if (!r && (r = flush_dev(c->disk.dev))) {
		fprintf(stderr, "fkcut: fsync %s: %s\n", c->disk.dev,
			strerror(-r));
		r = -1;
	}
	if (r) {
		labdisk_destroy(&c->disk);
		free(c);
		return r;
	}
	strcpy(fs->type, type);
	strcpy(fs->mnt, mnt);
	snprintf(fs->blkdev, sizeof(fs->blkdev), "%s", c->disk.dev);
	fs->cut = c;
	mkdir(mnt, 0755);
	if (fkt_fs_mount(fs)) {
		fkt_cut_destroy(fs);
		return -1;
	}
	printf(
	    "fkcut: %s on %s (lab disk %s, ram, write cache), cut mode %s%s\n",
	    type, c->disk.dev, c->disk.name, c->mode[0] ? c->mode : "mixed",
	    c->flush_ignore ? ", FLUSH ignored (negative control)" : "");
	return 0;
}

static uint64_t stat_u64(const struct fkt_cut *c, const char *name)
{
	char *text = NULL;
	if (labdisk_stats(&c->disk, &text))
		return UINT64_MAX;
	char *v = labdisk_stat(text, name);
	uint64_t r = v ? strtoull(v, NULL, 10) : UINT64_MAX;
	free(v);
	free(text);
	return r;
}

static uint64_t draw(struct fkt_cut *c, const char **mode)
{
	uint64_t seed = next(c);
	*mode = c->mode[0] ? c->mode : modes[next(c) % 3];
	return seed;
}

/* The line of a cut that happened (the daemon's figures). */
static void report(struct fkt_cut *c, const char *how)
{
	char *text = NULL;
	char *m = NULL;
	if (!labdisk_stats(&c->disk, &text))
		m = labdisk_stat(text, "cut_mode");
	free(text);
	c->cuts++;
	snprintf(c->last_mode, sizeof(c->last_mode), "%s", m ? m : "?");
	free(m);
	c->last_seed = stat_u64(c, "cut_seed");
	printf("cut %u: %smode %s seed %" PRIu64 " (kept %" PRIu64
	       " cached blocks, lost %" PRIu64 ")\n",
	       c->cuts, how, c->last_mode, c->last_seed,
	       stat_u64(c, "cut_kept_blocks"), stat_u64(c, "cut_lost_blocks"));
	fflush(stdout);
}

int fkt_cut_power(struct fkt_fs *fs)
{
	struct fkt_cut *c = fs->cut;
	if (!c)
		return -EINVAL;
	if (c->is_cut)
		return 0;
	if (stat_u64(c, "powered") == 0) {
		/* Cut already: by the armed FLUSH, or by another process
		 * (a forked child's fkt_cut_power, which drew from a copy
		 * of our state: draw the same to stay in step). */
		c->is_cut = 1;
		if (c->armed) {
			c->armed = 0;
			report(c, "at the armed FLUSH, ");
		} else {
			next(c);
			if (!c->mode[0])
				next(c);
			c->cuts++; /* the child printed its line */
		}
		return 1;
	}
	c->armed = 0;
	const char *mode;
	uint64_t seed = draw(c, &mode);
	char line[96];
	snprintf(line, sizeof(line), "cut %s %" PRIu64 "\n", mode, seed);
	int r = labdisk_ctl(&c->disk, line);
	if (r)
		return r;
	c->is_cut = 1;
	report(c, "");
	return 0;
}

int fkt_cut_arm_flush(struct fkt_fs *fs, uint64_t n)
{
	struct fkt_cut *c = fs->cut;
	if (!c || c->is_cut || !n)
		return -EINVAL;
	const char *mode;
	uint64_t seed = draw(c, &mode);
	char line[128];
	snprintf(line, sizeof(line), "cut %s %" PRIu64 " flush %" PRIu64 "\n",
		 mode, seed, n);
	int r = labdisk_ctl(&c->disk, line);
	if (r)
		return r;
	c->armed = n;
	return 0;
}

int fkt_cut_window(struct fkt_fs *fs)
{
	struct fkt_cut *c = fs->cut;
	if (!c || !c->flush_ignore)
		return 0;
	return labdisk_ctl(&c->disk, "flush ignore\n");
}

int fkt_cut_restore(struct fkt_fs *fs)
{
	struct fkt_cut *c = fs->cut;
	if (!c)
		return 0;
	if (!c->is_cut) {
		/* A child cut it (its flag is its own): the disk knows. */
		if (stat_u64(c, "powered") != 0)
			return 0;
	}
	/* Still cut: dirty buffer-cache pages fail here and are dropped;
	 * none may reach the disk once it is powered again. */
	int fd = open(c->disk.dev, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ioctl(fd, BLKFLSBUF, 0);
		close(fd);
	}
	int r = labdisk_ctl(&c->disk, "poweron\nflush honor\n");
	if (r) {
		fprintf(stderr, "fkcut: poweron %s: %s\n", c->disk.dev,
			strerror(-r));
		return r;
	}
	c->is_cut = 0;
	return 0;
}

void fkt_cut_destroy(struct fkt_fs *fs)
{
	struct fkt_cut *c = fs->cut;
	if (!c)
		return;
	labdisk_destroy(&c->disk);
	free(c);
	fs->cut = NULL;
	fs->blkdev[0] = 0;
}

uint64_t fkt_cut_seed_env(void)
{
	const char *s = getenv("FK_TEST_SEED");
	return s && *s ? strtoull(s, NULL, 0)
		       : (uint64_t)time(NULL) ^ (uint64_t)getpid();
}

void fkt_rnd_seed(uint64_t *state, uint64_t seed)
{
	*state = seed ? seed : 1;
}

uint64_t fkt_rnd(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

uint64_t fkt_rnd_below(uint64_t *state, uint64_t n)
{
	return n ? fkt_rnd(state) % n : 0;
}

#define CLEANUP_MAX 4
static struct fkt_fs *cleanup_fs[CLEANUP_MAX];
static unsigned cleanup_nr;
static pid_t *cleanup_child;

static void cleanup_run(void)
{
	if (cleanup_child && *cleanup_child > 0) {
		kill(*cleanup_child, SIGKILL);
		waitpid(*cleanup_child, NULL, 0);
		*cleanup_child = -1;
	}
	for (unsigned i = 0; i < cleanup_nr; i++)
		fkt_fs_destroy(cleanup_fs[i]);
}

static void cleanup_signal(int sig)
{
	cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

void fkt_cleanup_at_exit(struct fkt_fs *const *fss, unsigned n, pid_t *child)
{
	if (n > CLEANUP_MAX)
		n = CLEANUP_MAX;
	for (unsigned i = 0; i < n; i++)
		cleanup_fs[i] = fss[i];
	cleanup_nr = n;
	cleanup_child = child;
	atexit(cleanup_run);
	signal(SIGTERM, cleanup_signal);
	signal(SIGINT, cleanup_signal);
}
