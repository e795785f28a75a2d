// SPDX-License-Identifier: MIT
/*
 * test-tree-copy-prefetch.c - the copy's read-ahead across directories
 * (tree_copy_prefetch.c, tree.h fk_prefetch_*) reads the source in the
 * copy's order, within its budget, and not what the copy passed.
 *
 * A tree of NR_DIRS directories of one FILE_BYTES file each (the walk's
 * own read-ahead stops at each directory), evicted from the cache; in
 * walk order (entries by inode number) file i starts at i * FILE_BYTES:
 *  - with the copy at 0, the files within the budget (3 files) come
 *    into the cache, and none after them, nor more than the budget is
 *    read ahead;
 *  - with the copy at file 10, files 10-12 come in; 3-9 (passed) never;
 *  - stopped, it says what it read ahead: 6 files;
 *  - a whole fk_tree_copy of the tree is still exact.
 * Residency is mincore(2) of a mapping (the reads are asynchronous: the
 * test waits up to 10 s for them).  Skips (77) where DONTNEED does not
 * evict (a file system that keeps the pages).
 */
#include "fktest.h"
#include "flushkit.h"
#include "tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NR_DIRS 20
#define FILE_BYTES (64u << 10)
#define BUDGET (3ull * FILE_BYTES)

static char path[NR_DIRS][PATH_MAX + 80]; /* in walk order */

/* Pages of @p in the cache. */
static size_t resident(const char *p)
{
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return 0;
	void *m = mmap(NULL, FILE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	long pg = sysconf(_SC_PAGESIZE);
	size_t n = (FILE_BYTES + (size_t)pg - 1) / (size_t)pg, in = 0;
	unsigned char vec[FILE_BYTES / 512];
	if (mincore(m, FILE_BYTES, vec) == 0)
		for (size_t i = 0; i < n; i++)
			in += vec[i] & 1;
	munmap(m, FILE_BYTES);
	return in;
}

static void evict(const char *p)
{
	int fd = open(p, O_RDONLY);
	if (fd >= 0) {
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

/* Wait (10 s at most) until file @i is in the cache. */
static int wait_in(int i)
{
	for (int t = 0; t < 1000; t++) {
		if (resident(path[i]) > 0)
			return 1;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

struct ent {
	ino_t ino;
	char name[256];
};

static int cmp_ino(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

int main(void)
{
	char src[PATH_MAX], dst[PATH_MAX];
	snprintf(src, sizeof(src), "%s/src", fkt_tmpdir());
	snprintf(dst, sizeof(dst), "%s/dst", fkt_tmpdir());
	CHECK_EQ(mkdir(src, 0755), 0);
	for (int i = 0; i < NR_DIRS; i++) {
		char d[PATH_MAX + 16];
		snprintf(d, sizeof(d), "%s/d%02d", src, i);
		CHECK_EQ(mkdir(d, 0755), 0);
		snprintf(d, sizeof(d), "%s/d%02d/f", src, i);
		CHECK_EQ(fkt_write_file(d, FILE_BYTES, (unsigned)i + 1), 0);
	}
	/* The walk's order: the root's entries by inode number. */
	struct ent ents[NR_DIRS];
	int n = 0;
	DIR *dir = opendir(src);
	CHECK(dir != NULL);
	struct dirent *de;
	while (dir && (de = readdir(dir)) && n < NR_DIRS) {
		if (de->d_name[0] == '.')
			continue;
		ents[n].ino = de->d_ino;
		snprintf(ents[n].name, sizeof(ents[n].name), "%s", de->d_name);
		n++;
	}
	if (dir)
		closedir(dir);
	CHECK_EQ(n, NR_DIRS);
	qsort(ents, (size_t)n, sizeof(ents[0]), cmp_ino);
	for (int i = 0; i < n; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s/f", src,
			 ents[i].name);
		evict(path[i]);
	}
	for (int i = 0; i < n; i++)
		if (resident(path[i]))
			SKIP("DONTNEED does not evict here (%s)", path[i]);

	struct fk_prefetch *p = NULL;
	CHECK_EQ(fk_prefetch_start(AT_FDCWD, src, BUDGET, 0, &p), 0);
	CHECK(p != NULL);
	if (!p)
		return fkt_done();
	fk_prefetch_reached(p, 0);
	for (int i = 0; i < 3; i++)
		CHECK(wait_in(i));
	/* Time for it to go too far, if it would. */
	struct timespec settle = {0, 300 * 1000 * 1000};
	nanosleep(&settle, NULL);
	for (int i = 3; i < n; i++)
		CHECK_EQ(resident(path[i]), 0);

	fk_prefetch_reached(p, 10ull * FILE_BYTES);
	for (int i = 10; i < 13; i++)
		CHECK(wait_in(i));
	nanosleep(&settle, NULL);
	for (int i = 3; i < 10; i++)
		CHECK_EQ(resident(path[i]), 0); /* passed: not read */
	for (int i = 13; i < n; i++)
		CHECK_EQ(resident(path[i]), 0);
	uint64_t issued = fk_prefetch_stop(p);
	printf("read ahead %llu bytes (6 files of %u)\n",
	       (unsigned long long)issued, FILE_BYTES);
	CHECK_EQ(issued, 6ull * FILE_BYTES);

	/* Not a directory: no thread, no error. */
	CHECK_EQ(fk_prefetch_start(AT_FDCWD, path[0], BUDGET, 0, &p), 0);
	CHECK(p == NULL);
	fk_prefetch_stop(NULL);

	/* The copy with it is exact. */
	for (int i = 0; i < n; i++)
		evict(path[i]);
	struct fk_tree_opts o;
	struct fk_tree_stats st;
	fk_tree_opts_init(&o);
	CHECK_EQ(fk_tree_copy(src, dst, &o, &st), 0);
	CHECK_EQ(st.files, (uint64_t)NR_DIRS);
	for (int i = 0; i < n; i++) {
		char d[PATH_MAX + 16];
		size_t la = 0, lb = 0;
		snprintf(d, sizeof(d), "%s/%s/f", dst, ents[i].name);
		char *a = fkt_read_file(path[i], &la);
		char *b = fkt_read_file(d, &lb);
		CHECK(a && b && la == lb && la == FILE_BYTES &&
		      !memcmp(a, b, la));
		free(a);
		free(b);
	}
	return fkt_done();
}
