// SPDX-License-Identifier: MIT
/*
 * cli-cp-parents.c - "flushkit cp --parents SRC... DIR": the copy of
 * SRC is DIR/SRC, the directories of SRC's path recreated in DIR
 * first (coreutils' make_dir_parents_private and re_protect, in our
 * words).
 *
 * Unless the directory that is to hold the copy (DIR/dirname(SRC)) is
 * there already (then, as cp, nothing of the path is made or touched):
 * before the copy, each directory component of SRC missing in DIR is
 * created, 0700 (never open to others while incomplete, as every
 * directory of a copy); after it, each one, created or already there,
 * gets its source directory's owner, mode and times (cp --parents -p,
 * which flushkit cp always is), deepest first, and is fsynced; then DIR
 * itself, which holds the first one.  So when the command exits 0 the
 * whole path DIR/SRC is durable, not only the copy below it.
 */
#include "cli-cp-parents.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Components of @src before its last one, as lengths of @src's prefixes
 * ("a/b/c": "a", "a/b"); trailing slashes ignored. */
static size_t prefixes(const char *src, size_t *ends, size_t max)
{
	size_t n = strlen(src), nr = 0;
	while (n > 1 && src[n - 1] == '/')
		n--;
	for (size_t i = 1; i < n && nr < max; i++)
		if (src[i] == '/' && src[i - 1] != '/')
			ends[nr++] = i;
	return nr;
}

static char *join(const char *dir, const char *src, size_t len)
{
	size_t dl = strlen(dir);
	char *p = malloc(dl + len + 2);
	if (p)
		snprintf(p, dl + len + 2, "%s%s%.*s", dir,
			 dl && dir[dl - 1] == '/' ? "" : "/", (int)len, src);
	return p;
}

int cli_cp_parents_prepare(struct cli_cp_parents *p, const char *src,
			   const char *dir, int verbose)
{
	memset(p, 0, sizeof(*p));
	p->dir = dir;
	p->src = src;
	struct stat ss;
	if (stat(src, &ss) < 0 && lstat(src, &ss) < 0)
		return -errno; /* reported by the caller as cp's stat */
	p->nr = prefixes(src, p->ends, CLI_CP_PARENTS_MAX);
	/* As cp: when the copy's own directory is there already, nothing
	 * of the path is made or touched. */
	struct stat pd;
	char *last = p->nr ? join(dir, src, p->ends[p->nr - 1]) : NULL;
	int there = !p->nr || (last && stat(last, &pd) == 0);
	free(last);
	if (there && p->nr && !S_ISDIR(pd.st_mode))
		return -ENOTDIR;
	for (size_t i = 0; !there && i < p->nr; i++) {
		char *sp = strndup(src, p->ends[i]);
		char *dp = join(dir, src, p->ends[i]);
		if (!sp || !dp) {
			free(sp);
			free(dp);
			return -ENOMEM;
		}
		struct stat s, d;
		int r = stat(sp, &s) < 0 ? -errno : 0;
		if (r == 0 && !S_ISDIR(s.st_mode))
			r = -ENOTDIR;
		if (r == 0 && mkdir(dp, 0700) == 0) {
			p->created[i] = 1;
			if (verbose) {
				char *qs = cli_path_quote(sp),
				     *qd = cli_path_quote(dp);
				/* cp's words: no quotes on this one. */
				printf("%s -> %s\n", qs ? qs : "?",
				       qd ? qd : "?");
				free(qs);
				free(qd);
			}
		} else if (r == 0 && (errno != EEXIST || stat(dp, &d) < 0 ||
				      !S_ISDIR(d.st_mode))) {
			r = errno == EEXIST ? -ENOTDIR : -errno;
		}
		free(sp);
		free(dp);
		if (r < 0) {
			p->failed = i;
			return r;
		}
		p->made = i + 1;
	}
	return 0;
}

char *cli_cp_parents_dst(const struct cli_cp_parents *p)
{
	return join(p->dir, p->src, strlen(p->src));
}

/* "flushkit cp: OP 'PATH': ERROR" */
static int fail(const char *op, const char *path, int err)
{
	char *q = cli_path_quote(path);
	fprintf(stderr, "flushkit cp: %s '%s': %s\n", op, q ? q : "?",
		strerror(-err));
	free(q);
	return err;
}

int cli_cp_parents_finish(const struct cli_cp_parents *p, unsigned flags)
{
	int result = 0;
	mode_t um = umask(0);
	umask(um);
	for (size_t k = p->made; k-- > 0;) {
		char *sp = strndup(p->src, p->ends[k]);
		char *dp = join(p->dir, p->src, p->ends[k]);
		struct stat s;
		int fd = -1, r = !sp || !dp ? -ENOMEM : 0;
		if (r == 0 && stat(sp, &s) < 0)
			r = fail("cannot stat", sp, -errno);
		if (r == 0 && (fd = open(dp, O_RDONLY | O_DIRECTORY |
						 O_NOFOLLOW | O_CLOEXEC)) < 0)
			r = fail("open", dp, -errno);
		if (r == 0) {
			mode_t mode = s.st_mode & 07777;
			if (!(flags & FK_COPY_NO_OWNER) &&
			    fchown(fd, s.st_uid, s.st_gid) < 0) {
				if (geteuid() == 0)
					r = fail("chown", dp, -errno);
				(void)!fchown(fd, (uid_t)-1, s.st_gid);
				mode &= ~(mode_t)(S_ISUID | S_ISGID | S_ISVTX);
			}
			if (flags & FK_COPY_NO_OWNER)
				mode &= ~(mode_t)(S_ISUID | S_ISGID);
			if (flags & FK_COPY_NO_MODE) /* cp's default */
				mode = p->created[k] ? 0777 & ~um : (mode_t)-1;
			if (mode != (mode_t)-1 && fchmod(fd, mode) < 0)
				r = fail("chmod", dp, -errno);
			struct timespec ts[2] = {s.st_atim, s.st_mtim};
			if (!(flags & FK_COPY_NO_TIMES) && futimens(fd, ts) < 0)
				r = fail("utimens", dp, -errno);
			/* Its entries and its attributes: durable. */
			if (fsync(fd) < 0)
				r = fail("fsync", dp, -errno);
		}
		if (fd >= 0)
			close(fd);
		free(sp);
		free(dp);
		if (r < 0 && !result)
			result = r;
	}
	/* DIR holds the first component: its new name, durable. */
	int fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		int r = fail(fd < 0 ? "open" : "fsync", p->dir, -errno);
		if (!result)
			result = r;
	}
	if (fd >= 0)
		close(fd);
	return result;
}
