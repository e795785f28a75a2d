// SPDX-License-Identifier: MIT
/*
 * durable-replace.c - replace a file's contents so that after a crash
 * or power cut it holds either the old or the new contents, never a
 * mix, never nothing.
 *
 * The sequence (what PostgreSQL does for its control file, and what
 * flushkit's page store does): write the new contents to a temporary
 * file in the same directory, fsync it, rename(2) it over the old name,
 * then fsync the directory so the rename itself is durable.  Skip the
 * first fsync and ext4 or xfs may expose an empty file after a crash;
 * skip the second and the rename may be lost.  The two fsyncs go
 * through fk_fsync_many, whose errors are sticky and never retried: a
 * failed fsync means the data may not be on disk, whatever a second
 * fsync would say.
 *
 * Every name is taken relative to the directory's descriptor (*at()
 * calls), and the temporary file is created with O_EXCL | O_NOFOLLOW:
 * a symlink planted at FILE.tmp is never written through, and a
 * FILE.tmp left by a crash is reported, not reused.  The new file gets
 * the old one's mode (0600 when there is none), whatever the umask.
 *
 *   usage: durable-replace FILE TEXT
 */
#include <flushkit.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fsync @fd through the library; report failures with @what and @path. */
static int durable(int fd, const char *what, const char *path)
{
	struct fk_fsync_req req = {.fd = fd, .op = FK_FSYNC_OP_FSYNC};
	int backend;
	int r = fk_fsync_many(NULL, &req, 1, &backend);
	if (!r)
		r = req.result;
	if (r)
		fprintf(stderr, "durable-replace: fsync %s '%s': %s\n", what,
			path, fk_strerror(r));
	return r;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: durable-replace FILE TEXT\n");
		return 2;
	}
	const char *path = argv[1], *text = argv[2];
	/* dirname and basename may change their argument: copies. */
	char dcopy[4096], bcopy[4096], tmp[4096];
	if (snprintf(dcopy, sizeof(dcopy), "%s", path) >= (int)sizeof(dcopy)) {
		fprintf(stderr, "durable-replace: '%s': name too long\n", path);
		return 1;
	}
	memcpy(bcopy, dcopy, sizeof(bcopy));
	const char *dir = dirname(dcopy), *base = basename(bcopy);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", base) >= (int)sizeof(tmp)) {
		fprintf(stderr, "durable-replace: '%s': name too long\n", path);
		return 1;
	}

	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "durable-replace: open '%s': %s\n", dir,
			strerror(errno));
		return 1;
	}
	struct stat st;
	mode_t mode = 0600;
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode))
		mode = st.st_mode & 07777;
	int fd =
	    openat(dfd, tmp,
		   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		int e = errno;
		fprintf(stderr, "durable-replace: create '%s/%s': %s%s\n", dir,
			tmp, strerror(e),
			e == EEXIST ? " (left by an earlier run? remove it)"
				    : "");
		return 1;
	}
	if (fchmod(fd, mode)) { /* the umask must not narrow the old mode */
		fprintf(stderr, "durable-replace: chmod '%s/%s': %s\n", dir,
			tmp, strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		return 1;
	}
	size_t len = strlen(text);
	ssize_t n = write(fd, text, len);
	if (n != (ssize_t)len) {
		fprintf(stderr, "durable-replace: write '%s/%s': %s\n", dir,
			tmp, n < 0 ? strerror(errno) : "short write");
		close(fd);
		unlinkat(dfd, tmp, 0);
		return 1;
	}
	if (durable(fd, "file", tmp)) {
		/* The old file is untouched; the new contents are lost. */
		close(fd);
		unlinkat(dfd, tmp, 0);
		return 1;
	}
	close(fd);
	if (renameat(dfd, tmp, dfd, base)) {
		fprintf(stderr, "durable-replace: rename '%s' to '%s': %s\n",
			tmp, path, strerror(errno));
		unlinkat(dfd, tmp, 0);
		return 1;
	}
	if (durable(dfd, "directory", dir))
		return 1; /* replaced, but the rename may not survive */
	close(dfd);
	printf("replaced '%s' (%zu bytes): durable\n", path, len);
	return 0;
}
