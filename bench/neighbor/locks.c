// SPDX-License-Identifier: MIT
/*
 * locks.c - bench neighbor's locks: one run per bdi (strict), one run
 * per --dir.
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The bdi is one run's at a time: a run with strict runs holds
 * STATE_DIR/bdi-MAJ:MIN.lock flock()ed (its pid inside) from before it
 * reads the bdi's knobs to its exit.  Two at once would each save the
 * other's live strict values as the ones to restore, and each one's
 * restore would undo the other's strict_limit mid-run.  Once held, the
 * records of killed runs are undone again: one that held the bdi and
 * was killed after this run's first cleanup has left it strict.  0, or
 * -errno (printed; -EWOULDBLOCK: another run holds it).
 */
static int bdi_lock_fd = -1;

int nb_bdi_lock(void)
{
	const char *mm = nb_bdi + strlen("/sys/class/bdi/");
	char p[256], who[32] = "?";
	snprintf(p, sizeof(p), "%s/bdi-%s.lock", STATE_DIR, mm);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		int e = errno;
		cli_error("bench neighbor: create '%s': %s", p, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;
		if (e == EWOULDBLOCK) {
			ssize_t n = pread(fd, who, sizeof(who) - 1, 0);
			who[n > 0 ? n : 0] = '\0';
			who[strcspn(who, "\n")] = '\0';
			cli_error("bench neighbor: bdi %s is in use by another "
				  "bench neighbor run (pid %s), whose strict "
				  "runs change its knobs: wait for it to end, "
				  "or use another --dir or --device",
				  mm, who[0] ? who : "?");
		} else {
			cli_error("bench neighbor: flock '%s': %s", p,
				  strerror(e));
		}
		close(fd);
		return -e;
	}
	int w = snprintf(who, sizeof(who), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, who, (size_t)w, 0) != w) {
		int e = errno;
		cli_error("bench neighbor: write '%s': %s", p, strerror(e));
		close(fd);
		return -e;
	}
	bdi_lock_fd = fd; /* released at exit */
	nb_state_cleanup_stale();
	return 0;
}

/*
 * A --dir is one run's at a time: the victim's data, the neighbour's
 * output and the PostgreSQL cluster live in it under fixed names, so a
 * second run there would remove and overwrite the first one's mid-run.
 * DIR/.flushkit-neighbor.lock (created 0600 through the directory's
 * descriptor, no symlink followed) is flock()ed, its pid inside, until
 * dir_unlock removes it at exit.  A lock taken on a file its holder
 * removed meanwhile is no lock: after the flock the file must still be
 * the one at the name (st_dev, st_ino), else it is opened again.  0, or
 * -errno (printed; -EWOULDBLOCK: another run holds it).
 */
static const char dir_lock_name[] = ".flushkit-neighbor.lock";
int nb_dir_lock_fd = -1;
static int dir_lock_dfd = -1;

int nb_dir_lock(const char *dir)
{
	const char *name = dir_lock_name;
	char who[32] = "";
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		int e = errno;
		cli_error("bench neighbor: open '%s': %s", dir, strerror(e));
		return -e;
	}
	for (int tries = 0;; tries++) {
		int e, fd = openat(dfd, name,
				   O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
				   0600);
		if (fd < 0) {
			e = errno;
			cli_error("bench neighbor: create '%s/%s': %s", dir,
				  name, strerror(e));
			close(dfd);
			return -e;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			e = errno;
			if (e == EWOULDBLOCK) {
				ssize_t n = pread(fd, who, sizeof(who) - 1, 0);
				who[n > 0 ? n : 0] = '\0';
				who[strcspn(who, "\n")] = '\0';
				cli_error(
				    "bench neighbor: '%s' is in use by "
				    "another bench neighbor run (pid %s), "
				    "whose data, neighbour and PostgreSQL "
				    "cluster live there: wait for it to "
				    "end, or use another --dir",
				    dir, who[0] ? who : "?");
			} else {
				cli_error("bench neighbor: flock '%s/%s': %s",
					  dir, name, strerror(e));
			}
			close(fd);
			close(dfd);
			return -e;
		}
		struct stat held, named;
		if (fstat(fd, &held) ||
		    fstatat(dfd, name, &named, AT_SYMLINK_NOFOLLOW) ||
		    held.st_dev != named.st_dev ||
		    held.st_ino != named.st_ino) {
			/* its holder removed it between our open and
			 * flock: take the one at the name now */
			close(fd);
			if (tries < 100)
				continue;
			cli_error("bench neighbor: '%s/%s' keeps being "
				  "replaced: another run is starting and "
				  "ending there",
				  dir, name);
			close(dfd);
			return -EBUSY;
		}
		int w = snprintf(who, sizeof(who), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) || pwrite(fd, who, (size_t)w, 0) != w) {
			e = errno;
			cli_error("bench neighbor: write '%s/%s': %s", dir,
				  name, strerror(e));
			close(fd);
			close(dfd);
			return -e;
		}
		nb_dir_lock_fd = fd;
		dir_lock_dfd = dfd;
		return 0;
	}
}

/* Remove the lock file while still holding it, then release it (before
 * the file system it is on is unmounted). */
void nb_dir_unlock(void)
{
	if (nb_dir_lock_fd < 0)
		return;
	unlinkat(dir_lock_dfd, dir_lock_name, 0);
	close(nb_dir_lock_fd);
	close(dir_lock_dfd);
	nb_dir_lock_fd = dir_lock_dfd = -1;
}
