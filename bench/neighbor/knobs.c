// SPDX-License-Identifier: MIT
/*
 * knobs.c - what bench neighbor changes on the machine: the bdi's
 * strict_limit and max_bytes (strict) and the blkio child group (blkio),
 * restored on every exit path (and recorded first: records.c).
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int nb_bdi_knob(const char *knob, char *path, size_t len)
{
	return snprintf(path, len, "%s/%s", nb_bdi, knob) >= (int)len
		   ? -ENAMETOOLONG
		   : 0;
}

/* Restore strict_limit and max_ratio(_fine) (max_bytes follows the
 * ratio: the kernel keeps one limit).  Prints what could not be. */
static int bdi_restore(void)
{
	if (!nb_bdi_changed)
		return 0;
	char p[256];
	int e = 0, r;
	nb_bdi_knob(nb_bdi_ratio_knob, p, sizeof(p));
	if ((r = nb_write_small(p, nb_bdi_saved_ratio))) {
		cli_error("bench neighbor: restore '%s' to %s: %s", p,
			  nb_bdi_saved_ratio, strerror(-r));
		e = r;
	}
	nb_bdi_knob("strict_limit", p, sizeof(p));
	if ((r = nb_write_small(p, nb_bdi_saved_strict))) {
		cli_error("bench neighbor: restore '%s' to %s: %s", p,
			  nb_bdi_saved_strict, strerror(-r));
		e = r;
	}
	nb_bdi_changed = 0;
	nb_state_save();
	return e;
}

int nb_bdi_set(uint64_t max_bytes)
{
	char p[256], v[32];
	int e;
	nb_bdi_knob("strict_limit", p, sizeof(p));
	if ((e = nb_read_small(p, nb_bdi_saved_strict,
			       sizeof(nb_bdi_saved_strict))))
		return e;
	nb_bdi_knob(nb_bdi_ratio_knob, p, sizeof(p));
	if ((e = nb_read_small(p, nb_bdi_saved_ratio,
			       sizeof(nb_bdi_saved_ratio))))
		return e;
	/* recorded before the first write: a SIGKILL from here on
	 * leaves what the next run restores */
	nb_bdi_changed = 1;
	if ((e = nb_state_save())) {
		nb_bdi_changed = 0;
		return e;
	}
	nb_bdi_knob("max_bytes", p, sizeof(p));
	snprintf(v, sizeof(v), "%llu", (unsigned long long)max_bytes);
	if ((e = nb_write_small(p, v))) {
		cli_error("bench neighbor: write '%s': %s", p, strerror(-e));
		bdi_restore();
		return e;
	}
	nb_bdi_knob("strict_limit", p, sizeof(p));
	if ((e = nb_write_small(p, "1"))) {
		cli_error("bench neighbor: write '%s': %s", p, strerror(-e));
		bdi_restore();
		return e;
	}
	return 0;
}

static int cgroup_remove(void)
{
	if (!nb_cgroup[0])
		return 0;
	int e = 0;
	/* the neighbour has exited (or been killed and reaped): empty */
	for (int i = 0; i < 50; i++) {
		if (!rmdir(nb_cgroup) || errno == ENOENT) {
			nb_cgroup[0] = '\0';
			nb_state_save();
			return 0;
		}
		e = -errno;
		if (e != -EBUSY)
			break;
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	cli_error("bench neighbor: rmdir '%s': %s", nb_cgroup, strerror(-e));
	return e;
}

/* The blkio child group of this run (one per benchmark process). */
const char *nb_cgroup_path(void)
{
	static char p[256];
	snprintf(p, sizeof(p), "/sys/fs/cgroup/blkio/flushkit-neighbor-%d",
		 (int)getpid());
	return p;
}

int nb_cgroup_make(unsigned maj, unsigned min, uint64_t bps)
{
	snprintf(nb_cgroup, sizeof(nb_cgroup), "%s", nb_cgroup_path());
	int se = nb_state_save(); /* before the group exists */
	if (se) {
		nb_cgroup[0] = '\0';
		return se;
	}
	if (mkdir(nb_cgroup, 0755) && errno != EEXIST) {
		int e = -errno;
		cli_error("bench neighbor: mkdir '%s': %s", nb_cgroup,
			  strerror(-e));
		nb_cgroup[0] = '\0';
		return e;
	}
	char p[320], v[64];
	snprintf(p, sizeof(p), "%s/blkio.throttle.write_bps_device", nb_cgroup);
	snprintf(v, sizeof(v), "%u:%u %llu", maj, min, (unsigned long long)bps);
	int e = nb_write_small(p, v);
	if (e) {
		cli_error("bench neighbor: write '%s' to '%s': %s", v, p,
			  strerror(-e));
		cgroup_remove();
	}
	return e;
}

void nb_restore_all(void)
{
	bdi_restore();
	cgroup_remove();
}

/* "flushkit bench neighbor --in-cgroup=DIR -- PROG ARGS": join the blkio
 * group DIR, then exec PROG (so the neighbour's first write is in it). */
int nb_in_cgroup_exec(const char *dir, char **argv)
{
	char p[512], v[32];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	snprintf(v, sizeof(v), "%d", (int)getpid());
	int e = nb_write_small(p, v);
	if (e) {
		cli_error("bench neighbor: write '%s': %s", p, strerror(-e));
		return 126;
	}
	execvp(argv[0], argv);
	cli_error("bench neighbor: exec '%s': %s", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* The selected scheduler of queue/scheduler file @path ("none
 * [mq-deadline] kyber bfq": the bracketed one).  0 or -errno. */
int nb_sched_current(const char *path, char *name, size_t len)
{
	char b[256];
	int e = nb_read_small(path, b, sizeof(b));
	if (e)
		return e;
	char *o = strchr(b, '['), *c = o ? strchr(o, ']') : NULL;
	if (!c) /* a queue without a choice: the one word */
		o = b - 1, c = b + strcspn(b, " ");
	*c = '\0';
	if (!nb_sched_name_ok(o + 1))
		return -EINVAL;
	snprintf(name, len, "%s", o + 1);
	return 0;
}

/* Whether @name is one of the words of @list (brackets ignored). */
static int sched_listed(const char *list, const char *name)
{
	char b[256];
	snprintf(b, sizeof(b), "%s", list);
	char *save = NULL;
	for (char *t = strtok_r(b, " []", &save); t;
	     t = strtok_r(NULL, " []", &save))
		if (!strcmp(t, name))
			return 1;
	return 0;
}

/* Select I/O scheduler @name on disk MAJ:MIN for the whole benchmark
 * (every configuration runs under it); the one before is recorded first
 * and restored by nb_sched_restore on every exit path.  0 or -errno
 * (printed; -ENOENT: not one this kernel offers for the disk). */
int nb_sched_set(unsigned maj, unsigned min, const char *name)
{
	char p[128], list[256], cur[32];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/scheduler", maj,
		 min);
	int e = nb_read_small(p, list, sizeof(list));
	if (!e)
		e = nb_sched_current(p, cur, sizeof(cur));
	if (e) {
		cli_error("bench neighbor: read '%s': %s", p, strerror(-e));
		return e;
	}
	if (!sched_listed(list, name)) {
		cli_error("bench neighbor: --scheduler=%s: disk %u:%u offers "
			  "%s",
			  name, maj, min, list);
		return -ENOENT;
	}
	if (!strcmp(cur, name))
		return 0; /* nothing to change, nothing to restore */
	snprintf(nb_sched_path, sizeof(nb_sched_path), "%s", p);
	snprintf(nb_sched_saved, sizeof(nb_sched_saved), "%s", cur);
	if ((e = nb_state_save())) { /* recorded before the write */
		nb_sched_path[0] = '\0';
		return e;
	}
	if ((e = nb_write_small(p, name)) ||
	    (e = nb_sched_current(p, cur, sizeof(cur))) ||
	    (e = strcmp(cur, name) ? -EIO : 0)) {
		cli_error("bench neighbor: write '%s' to '%s': %s", name, p,
			  strerror(-e));
		nb_sched_restore();
		return e;
	}
	return 0;
}

int nb_sched_restore(void)
{
	if (!nb_sched_path[0])
		return 0;
	int e = nb_write_small(nb_sched_path, nb_sched_saved);
	if (e) {
		cli_error("bench neighbor: restore '%s' to %s: %s",
			  nb_sched_path, nb_sched_saved, strerror(-e));
		return e;
	}
	nb_sched_path[0] = '\0';
	nb_state_save();
	return 0;
}
