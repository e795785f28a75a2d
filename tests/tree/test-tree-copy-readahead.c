// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-readahead.c - fk_tree_copy reads the source ahead of
 * the file it copies, within bounds.
 *
 * A cold source costs a copy one synchronous read per file when each
 * file is read only once the copier opens it.  The copy's walk starts
 * reading the regular files after the one being copied
 * (POSIX_FADV_WILLNEED, walk.h readahead_bytes), so the reads overlap.
 * Through the syscall table this checks, with every method:
 *  - every source file but the first of its directory (in walk order)
 *    gets a WILLNEED before its copy is created;
 *  - what is ahead (WILLNEED'd, copy not created yet) never exceeds the
 *    copy's budget, 32 MiB, and a larger (sparse) file is read ahead
 *    only up to the budget;
 *  - FIFOs and symlinks are never opened (only DT_REG entries are);
 *  - the copy has the source's content.
 */
#include "fktest.h"
#include "flushkit.h"
#include "sys.h"
#include "test-tree-copy-lib.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR_FILES 40
#define FILE_BYTES 65536
#define BUDGET (32ull << 20)
#define BIG_BYTES (40ull << 20)

static char src[PATH_MAX];
static size_t src_len;

/* Per source name: when it was read ahead, and its copy created. */
struct seen {
	char name[64];
	int ahead_seq; /* 0: never read ahead */
	uint64_t ahead_len;
	int created_seq; /* 0: copy never created */
};
static struct seen seen[NR_FILES + 8];
static int nr_seen, seq;
static uint64_t ahead_now, ahead_max;
static int opened_special;

static struct seen *lookup(const char *name)
{
	for (int i = 0; i < nr_seen; i++)
		if (!strcmp(seen[i].name, name))
			return &seen[i];
	if (nr_seen == (int)(sizeof(seen) / sizeof(seen[0])))
		return NULL;
	struct seen *s = &seen[nr_seen++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", name);
	return s;
}

static int hook_fadvise(int fd, off_t off, off_t len, int advice)
{
	if (advice == POSIX_FADV_WILLNEED) {
		char l[64], p[PATH_MAX];
		snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(l, p, sizeof(p) - 1);
		if (n > 0) {
			p[n] = 0;
			if (!strncmp(p, src, src_len) && p[src_len] == '/') {
				struct seen *s = lookup(p + src_len + 1);
				if (s && !s->ahead_seq) {
					s->ahead_seq = ++seq;
					s->ahead_len = (uint64_t)len;
					if (!s->created_seq)
						ahead_now += (uint64_t)len;
					if (ahead_now > ahead_max)
						ahead_max = ahead_now;
				}
			}
		}
	}
	return fk_sys_default.fadvise(fd, off, len, advice);
}

static int hook_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	if (!strcmp(path, "fifo") || !strcmp(path, "link"))
		opened_special++;
	if (flags & O_CREAT) {
		struct seen *s = lookup(path);
		if (s && !s->created_seq) {
			s->created_seq = ++seq;
			if (s->ahead_seq)
				ahead_now -= s->ahead_len;
		}
	}
	return fk_sys_default.openat(dirfd, path, flags, mode);
}

static void install_hooks(void)
{
	nr_seen = seq = opened_special = 0;
	ahead_now = ahead_max = 0;
	fk_sys.fadvise = hook_fadvise;
	fk_sys.openat = hook_openat;
}

int main(void)
{
	char p[PATH_MAX + 64];
	snprintf(src, sizeof(src), "%s/src", fkt_tmpdir());
	src_len = strlen(src);
	CHECK_EQ(mkdir(src, 0755), 0);
	for (int i = 0; i < NR_FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%02d", src, i);
		CHECK_EQ(fkt_write_file(p, FILE_BYTES, (unsigned)i + 1), 0);
	}
	snprintf(p, sizeof(p), "%s/big", src);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, (off_t)BIG_BYTES), 0);
	CHECK_EQ(pwrite(fd, "x", 1, (off_t)BIG_BYTES - 1), 1);
	close(fd);
	snprintf(p, sizeof(p), "%s/fifo", src);
	CHECK_EQ(mkfifo(p, 0644), 0);
	snprintf(p, sizeof(p), "%s/link", src);
	CHECK_EQ(symlink("f00", p), 0);

	for (size_t m = 0; m < TC_NR_METHODS; m++) {
		const char *name = fk_copy_method_name(tc_methods[m]);
		char dst[PATH_MAX];
		struct fk_tree_stats st;
		int r = tc_copy_method(src, tc_methods[m], install_hooks, dst,
				       sizeof(dst), &st);
		CHECK_EQ(r, 0);

		/* The first created copy had nothing before it to overlap
		 * with; every other one was read ahead before. */
		const struct seen *f0 = NULL;
		for (int i = 0; i < nr_seen; i++)
			if (seen[i].created_seq &&
			    (!f0 || seen[i].created_seq < f0->created_seq))
				f0 = &seen[i];
		int files = 0, ahead_first = 0;
		uint64_t big_len = 0;
		for (int i = 0; i < nr_seen; i++) {
			const struct seen *s = &seen[i];
			if (!s->created_seq)
				continue;
			files++;
			if (s != f0 && s->ahead_seq &&
			    s->ahead_seq < s->created_seq)
				ahead_first++;
			if (!strcmp(s->name, "big"))
				big_len = s->ahead_len;
		}
		printf("%-10s %d of %d files read ahead before their copy was "
		       "created; at most %llu bytes ahead (budget %llu); big "
		       "read ahead %llu of %llu bytes; FIFO/symlink opened "
		       "%d times\n",
		       name, ahead_first, files - 1,
		       (unsigned long long)ahead_max,
		       (unsigned long long)BUDGET, (unsigned long long)big_len,
		       (unsigned long long)BIG_BYTES, opened_special);
		CHECK_EQ(files, NR_FILES + 1);
		CHECK_EQ(ahead_first, files - 1);
		CHECK(ahead_max <= BUDGET);
		CHECK(big_len > 0 && big_len <= BUDGET);
		CHECK_EQ(opened_special, 0);
		for (int i = 0; i < NR_FILES; i += 13) {
			char a[PATH_MAX + 16], b[PATH_MAX + 16];
			snprintf(a, sizeof(a), "%s/f%02d", src, i);
			snprintf(b, sizeof(b), "%s/f%02d", dst, i);
			tc_check_same(a, b, name);
		}
	}
	return fkt_done();
}
