// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-cfr-zero.c - a 0 from copy_file_range(2) is not EOF
 * until a read says so.  procfs returns 0 from copy_file_range for
 * content it has; here the syscall table's copy_file_range always
 * returns 0 (without copying), and every regular file of the copy must
 * still get its full content, with every method: a 100000-byte file, a
 * 1-byte file, an empty file.
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"
#include "test-tree-copy-lib.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static unsigned nr_cfr;

static ssize_t zero_cfr(int fd_in, off_t *off_in, int fd_out, off_t *off_out,
			size_t len, unsigned int flags)
{
	(void)fd_in;
	(void)off_in;
	(void)fd_out;
	(void)off_out;
	(void)len;
	(void)flags;
	nr_cfr++;
	return 0;
}

static void install_zero_cfr(void)
{
	nr_cfr = 0;
	fk_sys.copy_file_range = zero_cfr;
}

int main(void)
{
	char src[PATH_MAX];
	snprintf(src, sizeof(src), "%s/src", fkt_tmpdir());
	CHECK_EQ(mkdir(src, 0755), 0);
	static const char *const files[] = {"big", "one", "empty"};
	static const uint64_t sizes[] = {100000, 1, 0};
	tc_write_files(src, files, sizes, 3);
	for (size_t m = 0; m < TC_NR_METHODS; m++) {
		const char *name = fk_copy_method_name(tc_methods[m]);
		char dst[PATH_MAX];
		struct fk_tree_stats st;
		int r = tc_copy_method(src, tc_methods[m], install_zero_cfr,
				       dst, sizeof(dst), &st);
		CHECK_EQ(r, 0);
		CHECK(nr_cfr > 0); /* the injected call was made */
		CHECK_EQ(st.bytes, 100001);
		for (int i = 0; i < 3; i++) {
			char a[PATH_MAX + 16], b[PATH_MAX + 16];
			snprintf(a, sizeof(a), "%s/%s", src, files[i]);
			snprintf(b, sizeof(b), "%s/%s", dst, files[i]);
			tc_check_same(a, b, name);
		}
		printf("%-10s copy_file_range returned 0 %u times: %llu bytes "
		       "copied\n",
		       name, nr_cfr, (unsigned long long)st.bytes);
	}
	return fkt_done();
}
