// SPDX-License-Identifier: MIT
/*
 * test-copy-backup-name.c - fk_copy_backup_name gives GNU's backup names
 * (coreutils' backupfile.c, checked by hand against cp 9.1):
 *  - SIMPLE: NAME + suffix, "~" for a NULL, empty or '/'-holding one;
 *  - NUMBERED: one more than the highest NAME.~N~ there, 1 if none; N of
 *    any length (2^31 and 10^20 are numbers too: they were ignored, so
 *    cp went back to NAME.~1~), a leading zero or a non-digit makes the
 *    name no backup of NAME, and another NAME's backups do not count;
 *  - EXISTING: NUMBERED if NAME has a numbered backup, else SIMPLE;
 *  - bad arguments are -EINVAL.
 */
#include "fktest.h"
#include "flushkit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int dirfd_;

static void touch(const char *name)
{
	int fd = openat(dirfd_, name, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void expect(int backup, const char *suffix, const char *want,
		   int want_numbered)
{
	char *out = (char *)1;
	int numbered = -1;
	int r =
	    fk_copy_backup_name(dirfd_, "f", backup, suffix, &out, &numbered);
	CHECK_EQ(r, 0);
	if (r == 0) {
		if (strcmp(out, want)) {
			fprintf(stderr, "backup %d: got '%s', want '%s'\n",
				backup, out, want);
			fkt_failures++;
		}
		CHECK_EQ(numbered, want_numbered);
		free(out);
	}
}

int main(void)
{
	char dir[] = "/tmp/test-copy-backup-name.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(dirfd_ >= 0);
	if (dirfd_ < 0)
		return fkt_done();
	touch("f");

	expect(FK_COPY_BACKUP_SIMPLE, NULL, "f~", 0);
	expect(FK_COPY_BACKUP_SIMPLE, "", "f~", 0);
	expect(FK_COPY_BACKUP_SIMPLE, "a/b", "f~", 0);
	expect(FK_COPY_BACKUP_SIMPLE, ".bak", "f.bak", 0);
	expect(FK_COPY_BACKUP_EXISTING, NULL, "f~", 0);
	expect(FK_COPY_BACKUP_NUMBERED, NULL, "f.~1~", 1);

	/* Not backups of f: a leading zero, a non-digit, no closing ~,
	 * another name's. */
	touch("f.~07~");
	touch("f.~12x~");
	touch("f.~13");
	touch("g.~50~");
	touch("ff.~60~");
	expect(FK_COPY_BACKUP_NUMBERED, NULL, "f.~1~", 1);
	expect(FK_COPY_BACKUP_EXISTING, NULL, "f~", 0);

	touch("f.~9~");
	expect(FK_COPY_BACKUP_NUMBERED, NULL, "f.~10~", 1);
	expect(FK_COPY_BACKUP_EXISTING, NULL, "f.~10~", 1);
	touch("f.~2147483648~");
	expect(FK_COPY_BACKUP_NUMBERED, NULL, "f.~2147483649~", 1);
	touch("f.~99999999999999999999~");
	expect(FK_COPY_BACKUP_NUMBERED, NULL, "f.~100000000000000000000~", 1);
	touch("f.~100000000000000000000~");
	touch("f.~3~");
	expect(FK_COPY_BACKUP_EXISTING, NULL, "f.~100000000000000000001~", 1);

	char *out = NULL;
	int numbered = 0;
	CHECK_EQ(fk_copy_backup_name(dirfd_, "a/f", FK_COPY_BACKUP_SIMPLE, NULL,
				     &out, &numbered),
		 -EINVAL);
	CHECK_EQ(fk_copy_backup_name(dirfd_, "", FK_COPY_BACKUP_SIMPLE, NULL,
				     &out, &numbered),
		 -EINVAL);
	CHECK_EQ(fk_copy_backup_name(dirfd_, "f", FK_COPY_BACKUP_NONE, NULL,
				     &out, &numbered),
		 -EINVAL);
	CHECK_EQ(fk_copy_backup_name(dirfd_, "f", FK_COPY_BACKUP_SIMPLE, NULL,
				     NULL, &numbered),
		 -EINVAL);
	CHECK_EQ(fk_copy_backup_name(-1, "f", FK_COPY_BACKUP_NUMBERED, NULL,
				     &out, &numbered),
		 -EBADF);

	fkt_sh("rm -rf '%s'", dir);
	close(dirfd_);
	return fkt_done();
}
