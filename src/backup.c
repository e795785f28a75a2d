// SPDX-License-Identifier: MIT
/*
 * backup.c - the names of cp's backups (cp --backup=CONTROL, enum
 * fk_copy_backup), as GNU's backupfile.c gives them:
 *  - SIMPLE: NAME + suffix ("~" unless told: -S, SIMPLE_BACKUP_SUFFIX);
 *  - NUMBERED: NAME.~N~, N one more than the highest N of the names
 *    NAME.~N~ in the directory (N a decimal number without a leading
 *    zero), 1 if there is none;
 *  - EXISTING: NUMBERED if NAME has a numbered backup, else SIMPLE.
 * The directory is read relative to its descriptor (getdents through
 * fdopendir of a dup), nothing by path.  (flushkit.h: fk_copy_backup_name).
 */
#include "flushkit.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The highest N of the names @name.~N~ in @dirfd (0: none), or -errno. */
static long highest_numbered(int dirfd, const char *name)
{
	int fd = fk_sys.openat(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		int err = -errno;
		fk_sys.close(fd);
		return err;
	}
	size_t nl = strlen(name);
	long best = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *p = de->d_name;
		if (strncmp(p, name, nl) || strncmp(p + nl, ".~", 2))
			continue;
		p += nl + 2;
		if (*p < '1' || *p > '9')
			continue;
		long n = 0;
		while (*p >= '0' && *p <= '9' && n < 100000000)
			n = n * 10 + (*p++ - '0');
		if (p[0] == '~' && p[1] == 0 && n > best)
			best = n;
	}
	closedir(d);
	return best;
}

int fk_copy_backup_name(int dirfd, const char *name, int backup,
			const char *suffix, char **out, int *numbered)
{
	if (!out || !numbered || !name || !*name || strchr(name, '/') ||
	    backup < FK_COPY_BACKUP_SIMPLE || backup > FK_COPY_BACKUP_EXISTING)
		return -EINVAL;
	*out = NULL;
	*numbered = 0;
	if (!suffix || !*suffix || strchr(suffix, '/'))
		suffix = "~";
	long n = 0;
	if (backup == FK_COPY_BACKUP_NUMBERED ||
	    backup == FK_COPY_BACKUP_EXISTING) {
		n = highest_numbered(dirfd, name);
		if (n < 0)
			return (int)n;
		if (backup == FK_COPY_BACKUP_NUMBERED || n > 0) {
			*numbered = 1;
			n++;
		}
	}
	size_t len = strlen(name) + strlen(suffix) + 24;
	char *b = malloc(len);
	if (!b)
		return -ENOMEM;
	if (*numbered)
		snprintf(b, len, "%s.~%ld~", name, n);
	else
		snprintf(b, len, "%s%s", name, suffix);
	*out = b;
	return 0;
}
