// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-enospc-sources.c - ENOSPC stops a copy of several
 * sources at once: 'flushkit cp SRC1 SRC2 DIR' onto a tiny loop-mounted
 * ext4 (8 MiB image), where SRC1 (12 MiB) fills it, exits 1 naming the
 * one incomplete file, and writes nothing of SRC2 (no DIR/SRC2, no second
 * "copy stopped"), as docs/cp.md says ("nothing more is written").  Needs
 * root and loop devices (skips with 77 otherwise); always unmounts and
 * detaches the loop device.
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
	fkt_sh("losetup -j '%s' | cut -d: -f1 | xargs -r -n1 losetup -d", img);
	mounted = 0;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
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
	atexit(cleanup);
	if (fkt_sh("mount -o loop '%s' '%s' 2>/dev/null", img, mnt) != 0)
		SKIP("mount -o loop failed");
	mounted = 1;

	char src1[4300], src2[4300], dst2[4400];
	snprintf(src1, sizeof(src1), "%s/one", tmp);
	snprintf(src2, sizeof(src2), "%s/two", tmp);
	snprintf(dst2, sizeof(dst2), "%s/two", mnt);
	CHECK(mkdir(src1, 0755) == 0);
	CHECK(mkdir(src2, 0755) == 0);
	int sfd = open(src1, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < 4; i++) {
		char name[16];
		snprintf(name, sizeof(name), "big%d", i);
		CHECK(tc_write_at(sfd, name, 0, 3u << 20, (unsigned)i + 2,
				  0644) == 0);
	}
	close(sfd);
	sfd = open(src2, O_RDONLY | O_DIRECTORY);
	CHECK(tc_write_at(sfd, "small", 0, 1000, 1, 0644) == 0);
	close(sfd);

	char *argv[] = {"cp", src1, src2, mnt, NULL};
	tc_capture_start(tmp);
	int rc = cmd_cp(4, argv);
	fflush(stdout);
	char *err = tc_capture_end();
	CHECK_EQ(rc, FK_EXIT_FAILURE);
	CHECK(strstr(err, strerror(ENOSPC)) != NULL);
	/* One file stopped the copy: the second source is not tried. */
	CHECK_EQ(count(err, "copy stopped, incomplete file '"), 1);
	struct stat s;
	errno = 0;
	CHECK(lstat(dst2, &s) < 0 && errno == ENOENT);
	if (lstat(dst2, &s) == 0)
		fprintf(stderr, "after ENOSPC in '%s', '%s' was written:\n%s",
			src1, dst2, err);
	free(err);
	cleanup();
	return fkt_done();
}
