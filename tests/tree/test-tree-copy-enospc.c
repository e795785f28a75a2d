// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-enospc.c - a real ENOSPC: 'flushkit cp' of a 13 MiB
 * tree onto a tiny loop-mounted ext4 (8 MiB image) stops with exit 1 and
 * a message naming the incomplete file, which is there, shorter than its
 * source.  Needs root and loop devices (skips with 77 otherwise); always
 * unmounts and detaches the loop device.
 */
#include "cli.h"
#include "fktest.h"
#include "test-tree-copy-lib.h"

#include <sys/stat.h>

static char img[4200], mnt[4200];
static int mounted;

static void cleanup(void)
{
	if (!mounted)
		return;
	fkt_sh("umount '%s'", mnt);
	/* mount -o loop sets autoclear; detach explicitly in case. */
	fkt_sh("losetup -j '%s' | cut -d: -f1 | xargs -r -n1 losetup -d", img);
	mounted = 0;
}

int main(void)
{
	if (!fkt_is_root())
		SKIP("needs root for a loop mount");
	const char *tmp = fkt_tmpdir();
	snprintf(img, sizeof(img), "%s/img", tmp);
	snprintf(mnt, sizeof(mnt), "%s/mnt", tmp);
	if (fkt_sh("truncate -s 8M '%s' && mkfs.ext4 -q -m 0 '%s' "
		   ">/dev/null 2>&1",
		   img, img) != 0)
		SKIP("mkfs.ext4 failed");
	CHECK(mkdir(mnt, 0755) == 0);
	atexit(cleanup); /* runs before the temp dir is removed */
	if (fkt_sh("mount -o loop '%s' '%s' 2>/dev/null", img, mnt) != 0)
		SKIP("mount -o loop failed");
	mounted = 1;

	char src[4300], dst[4300];
	snprintf(src, sizeof(src), "%s/src", tmp);
	CHECK(mkdir(src, 0755) == 0);
	int sfd = open(src, O_RDONLY | O_DIRECTORY);
	CHECK(tc_write_at(sfd, "small", 0, 1000, 1, 0644) == 0);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "big%d", i);
		CHECK(tc_write_at(sfd, name, 0, 3u << 20, (unsigned)i + 2,
				  0644) == 0);
	}
	close(sfd);
	snprintf(dst, sizeof(dst), "%s/copy", mnt);

	char *argv[] = {"cp", src, dst, NULL};
	tc_capture_start(tmp);
	int rc = cmd_cp(3, argv);
	fflush(stdout);
	char *err = tc_capture_end();
	CHECK_EQ(rc, FK_EXIT_FAILURE);

	/* "flushkit: copy stopped, incomplete file 'PATH': No space..." */
	const char *key = "incomplete file '";
	char *at = strstr(err, key);
	CHECK(at != NULL);
	CHECK(strstr(err, strerror(ENOSPC)) != NULL);
	if (at) {
		char *path = at + strlen(key);
		char *end = strstr(path, "': ");
		CHECK(end != NULL);
		if (end) {
			*end = 0;
			CHECK(strncmp(path, dst, strlen(dst)) == 0);
			struct stat d, s;
			char sp[4400];
			const char *base = strrchr(path, '/');
			snprintf(sp, sizeof(sp), "%s%s", src, base ? base : "");
			CHECK(lstat(path, &d) == 0);
			CHECK(lstat(sp, &s) == 0);
			CHECK(S_ISREG(d.st_mode));
			CHECK(d.st_size < s.st_size);
			fprintf(stderr, "incomplete: %s, %lld of %lld bytes\n",
				path, (long long)d.st_size,
				(long long)s.st_size);
		}
	}
	free(err);
	cleanup();
	return fkt_done();
}
