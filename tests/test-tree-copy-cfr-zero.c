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

static void check_same(const char *a, const char *b, const char *method)
{
	size_t la, lb;
	char *x = fkt_read_file(a, &la), *y = fkt_read_file(b, &lb);
	if (!x || !y || la != lb || memcmp(x, y, la)) {
		fprintf(stderr, "%s: %s: %zu bytes, source %zu\n", method, b,
			y ? lb : 0, x ? la : 0);
		fkt_failures++;
	}
	free(x);
	free(y);
}

int main(void)
{
	char src[PATH_MAX], p[PATH_MAX + 16];
	snprintf(src, sizeof(src), "%s/src", fkt_tmpdir());
	CHECK_EQ(mkdir(src, 0755), 0);
	static const char *const files[] = {"big", "one", "empty"};
	static const uint64_t sizes[] = {100000, 1, 0};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", src, files[i]);
		CHECK_EQ(fkt_write_file(p, sizes[i], (unsigned)i + 1), 0);
	}
	static const struct {
		const char *name;
		int method;
	} methods[] = {
		{"writeback", FK_COPY_WRITEBACK},
		{"delayed", FK_COPY_DELAYED},
		{"fsync-each", FK_COPY_FSYNC_EACH},
		{"syncfs", FK_COPY_SYNCFS},
	};
	for (size_t m = 0; m < 4; m++) {
		char dst[PATH_MAX];
		snprintf(dst, sizeof(dst), "%s/dst-%s", fkt_tmpdir(),
			 methods[m].name);
		struct fk_tree_opts o;
		fk_tree_opts_init(&o);
		o.copy_method = methods[m].method;
		nr_cfr = 0;
		fk_sys.copy_file_range = zero_cfr;
		struct fk_tree_stats st;
		int r = fk_tree_copy(src, dst, &o, &st);
		fk_sys_reset();
		CHECK_EQ(r, 0);
		CHECK(nr_cfr > 0);	/* the injected call was made */
		CHECK_EQ(st.bytes, 100001);
		for (int i = 0; i < 3; i++) {
			char a[PATH_MAX + 16], b[PATH_MAX + 16];
			snprintf(a, sizeof(a), "%s/%s", src, files[i]);
			snprintf(b, sizeof(b), "%s/%s", dst, files[i]);
			check_same(a, b, methods[m].name);
		}
		printf("%-10s copy_file_range returned 0 %u times: %llu bytes "
		       "copied\n",
		       methods[m].name, nr_cfr, (unsigned long long)st.bytes);
	}
	return fkt_done();
}
