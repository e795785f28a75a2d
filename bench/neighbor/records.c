// SPDX-License-Identifier: MIT
/*
 * records.c - bench neighbor's killed runs: the record of what this run
 * changed (neighbor.h), and the undo of what a killed run's record names.
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* What is changed now: the bdi of the file system under test and its
 * saved knobs, the blkio child group while it exists (knobs.c), the
 * PostgreSQL cluster (pg.c). */
char nb_bdi[128];
char nb_bdi_saved_strict[32], nb_bdi_saved_ratio[32];
const char *nb_bdi_ratio_knob = "max_ratio";
int nb_bdi_changed;

char nb_cgroup[256];

char nb_sched_path[128], nb_sched_saved[32];

struct nb_pg nb_pg = {.pid = -1};

/* A scheduler's name as the kernel spells them (mq-deadline, bfq, kyber,
 * none): lower-case letters, digits and '-', 1-31 of them. */
int nb_sched_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (!n || n >= sizeof(nb_sched_saved))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= '0' && name[i] <= '9') || name[i] == '-'))
			return 0;
	return 1;
}

static int state_fd = -1;
static char state_file[128];

/* Open and lock this run's record (root only: without root nothing a
 * killed run could leave is changed but the cluster, which stays then).
 * 0 or -errno (printed). */
int nb_state_open(void)
{
	if (geteuid())
		return 0;
	if (mkdir(STATE_DIR, 0700) && errno != EEXIST) {
		int e = -errno;
		cli_error("bench neighbor: mkdir '%s': %s", STATE_DIR,
			  strerror(-e));
		return e;
	}
	/* made under another name, locked, then renamed: no other run
	 * ever sees it unlocked */
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s/%d.new", STATE_DIR, (int)getpid());
	snprintf(state_file, sizeof(state_file), "%s/%d.state", STATE_DIR,
		 (int)getpid());
	state_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (state_fd < 0 || flock(state_fd, LOCK_EX | LOCK_NB) ||
	    rename(tmp, state_file)) {
		int e = -errno;
		cli_error("bench neighbor: create '%s': %s", state_file,
			  strerror(-e));
		if (state_fd >= 0) {
			close(state_fd);
			unlink(tmp);
		}
		state_fd = -1;
		state_file[0] = '\0';
		return e;
	}
	return 0;
}

static int state_put(char *buf, size_t len, size_t *n, const char *key,
		     const char *val)
{
	if (strchr(val, '\n'))
		return -EINVAL; /* a path with a newline: not recordable */
	int w = snprintf(buf + *n, len - *n, "%s %s\n", key, val);
	if (w < 0 || (size_t)w >= len - *n)
		return -ENAMETOOLONG;
	*n += (size_t)w;
	return 0;
}

/* Rewrite the record from what is changed now.  0, or -errno (printed);
 * without a record (not root) 0 when nothing needs one. */
int nb_state_save(void)
{
	if (state_fd < 0)
		return nb_bdi_changed || nb_cgroup[0] || nb_sched_path[0]
			   ? -EBADF
			   : 0;
	char buf[8192], pid[32];
	size_t n = 0;
	int e;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	e = state_put(buf, sizeof(buf), &n, "pid", pid);
	if (!e && nb_bdi_changed)
		e = state_put(buf, sizeof(buf), &n, "bdi", nb_bdi) ||
			    state_put(buf, sizeof(buf), &n, "bdi_strict_limit",
				      nb_bdi_saved_strict) ||
			    state_put(buf, sizeof(buf), &n, "bdi_ratio_knob",
				      nb_bdi_ratio_knob) ||
			    state_put(buf, sizeof(buf), &n, "bdi_ratio",
				      nb_bdi_saved_ratio)
			? -ENAMETOOLONG
			: 0;
	if (!e && nb_cgroup[0])
		e = state_put(buf, sizeof(buf), &n, "blkio", nb_cgroup);
	if (!e && nb_sched_path[0])
		e = state_put(buf, sizeof(buf), &n, "sched", nb_sched_path) ||
			    state_put(buf, sizeof(buf), &n, "sched_saved",
				      nb_sched_saved)
			? -ENAMETOOLONG
			: 0;
	if (!e && nb_pg.made)
		e = state_put(buf, sizeof(buf), &n, "pg_data", nb_pg.data) ||
			    state_put(buf, sizeof(buf), &n, "pg_sock",
				      nb_pg.sock) ||
			    state_put(buf, sizeof(buf), &n, "pg_logs",
				      nb_pg.logs)
			? -EINVAL
			: 0;
	if (!e && (ftruncate(state_fd, 0) ||
		   pwrite(state_fd, buf, n, 0) != (ssize_t)n))
		e = -errno;
	if (e)
		cli_error("bench neighbor: record what is changed in '%s': %s",
			  state_file, strerror(-e));
	return e;
}

/* The run ends: nothing left to record. */
void nb_state_close(void)
{
	if (state_fd < 0)
		return;
	if (!nb_bdi_changed && !nb_cgroup[0] && !nb_sched_path[0] &&
	    !nb_pg.made)
		unlink(state_file);
	close(state_fd);
	state_fd = -1;
}

static int has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Stop a postmaster a killed run left in @data (its postmaster.pid,
 * checked to be a process working in @data), SIGQUIT then SIGKILL. */
static void stale_postmaster(const char *data)
{
	char p[1200], b[64], cwd[1200];
	snprintf(p, sizeof(p), "%s/postmaster.pid", data);
	if (nb_read_small(p, b, sizeof(b)))
		return;
	int pid = atoi(b);
	if (pid <= 1)
		return;
	snprintf(p, sizeof(p), "/proc/%d/cwd", pid);
	ssize_t n = readlink(p, cwd, sizeof(cwd) - 1);
	if (n < 0)
		return;
	cwd[n] = '\0';
	if (strcmp(cwd, data))
		return; /* another process has that pid now */
	kill(pid, SIGQUIT);
	for (int i = 0; i < 100 && !kill(pid, 0); i++)
		nb_sleep_s(0.05);
	if (!kill(pid, 0))
		kill(pid, SIGKILL);
	for (int i = 0; i < 100 && !kill(pid, 0); i++)
		nb_sleep_s(0.05);
	fprintf(stderr,
		"flushkit: bench neighbor: stopped PostgreSQL (pid %d) left "
		"by a killed run\n",
		pid);
}

/* Undo what the killed run of record @path left.  The count undone. */
static int stale_undo(const char *path, int fd)
{
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 0;
	}
	char line[1300], pid[32] = "?", bdir[256] = "", sl[32] = "",
			 knob[32] = "", ratio[32] = "", sched[128] = "",
			 sched_saved[32] = "";
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *v = strchr(line, ' ');
		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(line, "pid"))
			snprintf(pid, sizeof(pid), "%s", v);
		else if (!strcmp(line, "bdi") &&
			 has_prefix(v, "/sys/class/bdi/"))
			snprintf(bdir, sizeof(bdir), "%s", v);
		else if (!strcmp(line, "bdi_strict_limit"))
			snprintf(sl, sizeof(sl), "%s", v);
		else if (!strcmp(line, "bdi_ratio_knob") &&
			 (!strcmp(v, "max_ratio") ||
			  !strcmp(v, "max_ratio_fine")))
			snprintf(knob, sizeof(knob), "%s", v);
		else if (!strcmp(line, "bdi_ratio"))
			snprintf(ratio, sizeof(ratio), "%s", v);
		else if (!strcmp(line, "sched") &&
			 has_prefix(v, "/sys/dev/block/") &&
			 strlen(v) > strlen("/queue/scheduler") &&
			 !strcmp(v + strlen(v) - strlen("/queue/scheduler"),
				 "/queue/scheduler") &&
			 !strstr(v, ".."))
			snprintf(sched, sizeof(sched), "%s", v);
		else if (!strcmp(line, "sched_saved") && nb_sched_name_ok(v))
			snprintf(sched_saved, sizeof(sched_saved), "%s", v);
		else if (!strcmp(line, "blkio") &&
			 has_prefix(v, "/sys/fs/cgroup/blkio/"
				       "flushkit-neighbor-")) {
			/* its members first (a neighbour still running) */
			char p[512], b[4096];
			snprintf(p, sizeof(p), "%s/cgroup.procs", v);
			if (!nb_read_small(p, b, sizeof(b))) {
				FILE *pf = fopen(p, "re");
				int m;
				while (pf && fscanf(pf, "%d", &m) == 1)
					if (m > 1)
						kill(m, SIGKILL);
				if (pf)
					fclose(pf);
			}
			int ok = 0;
			for (int i = 0; i < 50 && !ok; i++) {
				ok = !rmdir(v) || errno == ENOENT;
				if (!ok)
					nb_sleep_s(0.02);
			}
			if (ok)
				fprintf(stderr,
					"flushkit: bench neighbor: removed "
					"blkio group %s left by a killed run "
					"(pid %s)\n",
					v, pid);
			else
				cli_error("bench neighbor: rmdir '%s' (left by "
					  "a killed run): %s",
					  v, strerror(errno));
			n++;
		} else if (!strcmp(line, "pg_data") && v[0] == '/') {
			stale_postmaster(v);
			nb_remove_tree(v);
			fprintf(stderr,
				"flushkit: bench neighbor: removed the "
				"PostgreSQL cluster %s left by a killed run "
				"(pid %s)\n",
				v, pid);
			n++;
		} else if ((!strcmp(line, "pg_sock") &&
			    has_prefix(v, "/tmp/flushkit-neighbor-pg.")) ||
			   (!strcmp(line, "pg_logs") &&
			    has_prefix(v,
				       "/dev/shm/flushkit-neighbor-txlog."))) {
			nb_remove_tree(v);
			n++;
		}
	}
	if (bdir[0] && sl[0] && knob[0] && ratio[0]) {
		char p[320];
		snprintf(p, sizeof(p), "%s/%s", bdir, knob);
		int e = nb_write_small(p, ratio);
		snprintf(p, sizeof(p), "%s/strict_limit", bdir);
		if (!e)
			e = nb_write_small(p, sl);
		if (e)
			cli_error("bench neighbor: restore '%s' (left by a "
				  "killed run): %s",
				  p, strerror(-e));
		else
			fprintf(stderr,
				"flushkit: bench neighbor: restored bdi %s "
				"strict_limit %s %s %s left by a killed run "
				"(pid %s)\n",
				bdir + strlen("/sys/class/bdi/"), sl, knob,
				ratio, pid);
		n++;
	}
	if (sched[0] && sched_saved[0]) {
		/* a lab disk's loop device may be gone with its daemon, or
		 * be another disk's by now: only a queue that still exists,
		 * and only on the word of the record */
		int e = nb_write_small(sched, sched_saved);
		if (e && e != -ENOENT)
			cli_error("bench neighbor: restore '%s' to %s (left by "
				  "a killed run): %s",
				  sched, sched_saved, strerror(-e));
		else if (!e)
			fprintf(stderr,
				"flushkit: bench neighbor: restored %s to %s "
				"left by a killed run (pid %s)\n",
				sched, sched_saved, pid);
		n++;
	}
	unlink(path);
	fclose(f);
	return n;
}

/* Undo what killed runs left (every record nobody holds locked).  The
 * count undone. */
int nb_state_cleanup_stale(void)
{
	DIR *d = opendir(STATE_DIR);
	if (!d)
		return 0;
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 7 || strcmp(de->d_name + l - 6, ".state"))
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", STATE_DIR, de->d_name);
		if (!strcmp(p, state_file))
			continue;
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			close(fd); /* a live run's */
			continue;
		}
		n += stale_undo(p, fd);
	}
	closedir(d);
	return n;
}
