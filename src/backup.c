// SPDX-License-Identifier: MIT
/*
 * backup.c - the names of cp's backups (cp --backup=CONTROL, enum
 * fk_copy_backup), as GNU's backupfile.c gives them:
 *  - SIMPLE: NAME + suffix ("~" unless told: -S, SIMPLE_BACKUP_SUFFIX);
 *  - NUMBERED: NAME.~N~, N one more than the highest N of the names
 *    NAME.~N~ in the directory (N a decimal number without a leading
 *    zero, of any length), 1 if there is none;
 *  - EXISTING: NUMBERED if NAME has a numbered backup, else SIMPLE.
 * The directory is read relative to its descriptor (getdents through
 * fdopendir of a dup), nothing by path.  (flushkit.h: fk_copy_backup_name).
 */
#include "flushkit.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The highest N of the names @name.~N~ in @dirfd into @best as its
 * decimal digits (NUL-terminated; "" if none): 0 or -errno.  N is kept
 * as a string, as GNU's backupfile.c does, so no number is too big (a
 * longer digit string is the larger N, equal lengths compare as
 * strings).  @best holds NAME_MAX + 1 bytes.
 */
static int highest_numbered(int dirfd, const char *name, char *best)
{
	best[0] = 0;
	int fd = fk_sys.openat(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		int err = -errno;
		fk_sys.close(fd);
		return err;
	}
	size_t nl = strlen(name), bl = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *p = de->d_name;
		if (strncmp(p, name, nl) || strncmp(p + nl, ".~", 2))
			continue;
		p += nl + 2;
		if (*p < '1' || *p > '9')
			continue;
		size_t dl = strspn(p, "0123456789");
		if (p[dl] != '~' || p[dl + 1] != 0 || dl > NAME_MAX)
			continue;
		if (dl > bl || (dl == bl && memcmp(p, best, dl) > 0)) {
			memcpy(best, p, dl);
			best[dl] = 0;
			bl = dl;
		}
	}
	closedir(d);
	return 0;
}

/* @digits (a decimal number, NAME_MAX + 2 bytes of room) plus one. */
static void increment(char *digits)
{
	size_t n = strlen(digits);
	for (size_t i = n; i-- > 0;) {
		if (digits[i] != '9') {
			digits[i]++;
			return;
		}
		digits[i] = '0';
	}
	memmove(digits + 1, digits, n + 1);
	digits[0] = '1';
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
	char n[NAME_MAX + 2] = "";
	if (backup == FK_COPY_BACKUP_NUMBERED ||
	    backup == FK_COPY_BACKUP_EXISTING) {
		int r = highest_numbered(dirfd, name, n);
		if (r < 0)
			return r;
		if (backup == FK_COPY_BACKUP_NUMBERED || n[0]) {
			*numbered = 1;
			if (!n[0])
				strcpy(n, "0");
			increment(n);
		}
	}
	size_t len = strlen(name) + strlen(suffix) + sizeof(n) + 4;
	char *b = malloc(len);
	if (!b)
		return -ENOMEM;
	if (*numbered)
		snprintf(b, len, "%s.~%s~", name, n);
	else
		snprintf(b, len, "%s%s", name, suffix);
	*out = b;
	return 0;
}
