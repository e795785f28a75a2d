/* SPDX-License-Identifier: MIT */
/*
 * labdisk.h - the client side of the lab disk (flushkit disk): start
 * flushkit-diskd, put a loop device (direct I/O) on its image, find,
 * control, list, destroy and clean up disks.  Used by `flushkit disk`
 * (disk/cmd-disk.c), by the tests, and (later) by bench/lib/disk.c.
 *
 * The stack:  /dev/loopN (LO_FLAGS_DIRECT_IO, LOOP_CONFIGURE)
 *             -> DIR/fuse/image (flushkit-diskd, FUSE low-level API)
 *             -> a memfd (or --backing FILE), and the timing model.
 *
 * Registry.  Each disk has a directory DIR = LABDISK_ROOT/NAME holding
 *   lock   flock'ed by the daemon for its life (the creator takes it
 *          first and hands the descriptor to the daemon, so there is no
 *          moment a live disk's lock is free);
 *   fuse/  the FUSE mount point (fuse/image, fuse/ctl);
 *   info   "KEY VALUE" lines: name, pid, loop, model, size, slowdown,
 *          write_cache, backing (written once the loop device exists),
 *          and one "part /dev/loopM" per labdisk_attach_part;
 *   log    the daemon's stdout and stderr.
 * A directory whose lock is free is stale (its daemon died):
 * labdisk_cleanup_stale lazily unmounts the mounts of its loop devices,
 * detaches them (every loop device whose backing file is its image: the
 * disk's own and its parts, recorded or not), unmounts the dead FUSE mount and
 * removes the directory.
 *
 * The daemon is found as `flushkit exec` finds its shim: $FLUSHKIT_DISKD,
 * else flushkit-diskd next to the running program (or one or two
 * directories up: the tests in BUILD/tests, the test tools in
 * BUILD/tests/tools), else BINDIR/../LIBDIR/flushkit/, else the
 * configured LIBDIR/flushkit/.
 *
 * Every function returns 0 (or a count) or -errno and prints what
 * failed (cli_error), naming the path and the operation.  Not
 * thread-safe.  Needs root (loop devices, mounts).
 */
#ifndef FK_LABDISK_H
#define FK_LABDISK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LABDISK_ROOT "/run/flushkit-disk"
/* Loop devices on parts of one disk's image (labdisk_attach_part). */
#define LABDISK_MAX_PARTS 8

struct labdisk_opts {
	const char *model;   /* --model value: "ram", "throttle:150M:150" */
	uint64_t size;	     /* bytes; 0: 4 GiB (a --backing file: its size) */
	double slowdown;     /* 0 or 1: none */
	const char *backing; /* NULL: a memfd */
	int no_write_cache;
	/* --write-log FILE: the daemon logs every write, FLUSH and mark
	 * to FILE (disk/wlog.h), at most write_log_max bytes (0: 256 MiB).
	 * Not with a backing file. */
	const char *write_log;
	uint64_t write_log_max;
	const char *name; /* NULL: disk0, disk1, ... the first free */
	/* Tests: the daemon gets a parent-death signal and unmounts what
	 * is mounted from the disk when the caller dies (--orphan-cleanup),
	 * so a test killed by SIGKILL leaves nothing mounted. */
	int orphan_cleanup;
};

struct labdisk {
	char name[64];
	char dir[256];	 /* LABDISK_ROOT/NAME */
	char ctl[300];	 /* DIR/fuse/ctl */
	char image[300]; /* DIR/fuse/image */
	char dev[32];	 /* "/dev/loopN"; "" if none */
	char model[128];
	uint64_t size;
	char parts[LABDISK_MAX_PARTS][32]; /* labdisk_attach_part's devices */
	int nr_parts;
	pid_t pid;
	int alive; /* the lock is held */
};

/* A disk's size without --size or --backing, bytes. */
#define LABDISK_DEFAULT_SIZE (4ull << 30)

/* Why labdisk_check refused: the option, its value, what it allows
 * (or why not), for one usage-error line. */
struct labdisk_refusal {
	const char *opt; /* "--model", "--size", "--name" */
	const char *val; /* the value given (may point into val_buf) */
	char val_buf[32];
	char hint[256];
};
/* The checks of labdisk_create, said nowhere: 0, or -EINVAL (a bad
 * option) or -ENOMEM (@size does not fit in memory) with @why filled.
 * @size: the disk's bytes (0 with a backing file: its size). */
int labdisk_check(const struct labdisk_opts *o, uint64_t size,
		  struct labdisk_refusal *why);
/* Start a disk; fills @d.  -EINVAL: a bad option (message printed),
 * -ENOMEM: it does not fit in memory, -EEXIST: the name is taken. */
int labdisk_create(const struct labdisk_opts *o, struct labdisk *d);
/*
 * Attach one more loop device (direct I/O) on the bytes [@off, @off +
 * @len) of @d's image (LOOP_CONFIGURE with lo_offset, lo_sizelimit;
 * 4 KiB-aligned), record it in info ("part DEV") and put its name in
 * @dev.  File systems on parts of one disk share its one model instance
 * (one actuator, one cache): seed 004's two file systems per disk.
 * labdisk_destroy and the stale cleanup detach it with the disk.
 */
int labdisk_attach_part(struct labdisk *d, uint64_t off, uint64_t len,
			char *dev, size_t cap);
/* Find a disk by NAME or /dev/loopN.  -ENOENT if there is none. */
int labdisk_open(const char *which, struct labdisk *d);
/* Write one or more ctl lines ("cut drop 7", "fail w EIO 0 0");
 * -EINVAL: the daemon refused a line. */
int labdisk_ctl(const struct labdisk *d, const char *lines);
/* The ctl text ("NAME VALUE" lines); *@text malloc'ed. */
int labdisk_stats(const struct labdisk *d, char **text);
/* The value of stat @name in @text, or NULL. A malloc'ed copy. */
char *labdisk_stat(const char *text, const char *name);
/* Unmount what is mounted from its loop devices, detach them, unmount
 * FUSE, stop the daemon, remove the directory. */
int labdisk_destroy(struct labdisk *d);
/* Every disk in the registry (alive or not): *@v malloc'ed, count. */
int labdisk_list(struct labdisk **v);
/* Remove the stale disks (see the banner): the number removed. */
int labdisk_cleanup_stale(void);
/* The daemon's path (see the banner) into @path.  -ENOENT if none. */
int labdisk_daemon_path(char *path, size_t cap);

#endif
