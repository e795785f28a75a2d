/* SPDX-License-Identifier: MIT */
/*
 * test-tree-sync-fixture.h - the small tree the tree-sync tests sync,
 * and checks over the call trace (fktest.h) that hold for every method
 * that fsyncs: each inode once, each directory after its contents,
 * special files never opened.
 *
 * The tree (under ROOT):
 *   a            100000 bytes
 *   b            empty
 *   h2           hard link to sub/deep/h1
 *   fifo, sock   a FIFO and a UNIX socket: never opened
 *   lnk, dangle  symlinks (to a, and to nowhere): never opened
 *   sub/c        65536 bytes
 *   sub/h3       hard link to sub/deep/h1
 *   sub/deep/h1  5000 bytes (3 links)
 * 4 regular-file inodes, 3 directories.
 */
#ifndef TEST_TREE_SYNC_FIXTURE_H
#define TEST_TREE_SYNC_FIXTURE_H

#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define FIX_FILES 4
#define FIX_DIRS 3

static inline void fix_path(char *out, size_t len, const char *root,
			    const char *rel)
{
	int n = snprintf(out, len, "%s/%s", root, rel);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "path too long: %s/%s\n", root, rel);
		exit(1);
	}
}

/* Build the tree at @root (must not exist).  Exits on failure. */
static inline void fix_build(const char *root)
{
	char p[4096], q[4096];
	static const char *dirs[] = {"", "sub", "sub/deep"};
	for (size_t i = 0; i < 3; i++) {
		fix_path(p, sizeof(p), root, dirs[i]);
		if (mkdir(p, 0755) != 0) {
			perror(p);
			exit(1);
		}
	}
	fix_path(p, sizeof(p), root, "a");
	CHECK_EQ(fkt_write_file(p, 100000, 1), 0);
	fix_path(p, sizeof(p), root, "b");
	CHECK_EQ(fkt_write_file(p, 0, 2), 0);
	fix_path(p, sizeof(p), root, "sub/c");
	CHECK_EQ(fkt_write_file(p, 65536, 3), 0);
	fix_path(p, sizeof(p), root, "sub/deep/h1");
	CHECK_EQ(fkt_write_file(p, 5000, 4), 0);
	fix_path(q, sizeof(q), root, "h2");
	CHECK_EQ(link(p, q), 0);
	fix_path(q, sizeof(q), root, "sub/h3");
	CHECK_EQ(link(p, q), 0);
	fix_path(p, sizeof(p), root, "fifo");
	CHECK_EQ(mkfifo(p, 0644), 0);
	fix_path(p, sizeof(p), root, "lnk");
	CHECK_EQ(symlink("a", p), 0);
	fix_path(p, sizeof(p), root, "dangle");
	CHECK_EQ(symlink("nowhere", p), 0);

	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	fix_path(p, sizeof(p), root, "sock");
	if (strlen(p) >= sizeof(sa.sun_path))
		SKIP("socket path too long: %s", p);
	strcpy(sa.sun_path, p);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(s >= 0);
	CHECK_EQ(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
}

/* fsync calls (files and directories) whose path ends with @suffix. */
static inline size_t fix_nr_fsync(const char *suffix)
{
	return fkt_trace_nr("fsync", suffix) +
	       fkt_trace_nr("fdatasync", suffix);
}

/*
 * Every regular-file inode fsynced exactly once (the hard-linked one
 * through any one of its names), each directory exactly once and after
 * every fsync below it, FIFO/socket/symlinks never opened.
 */
static inline void fix_check_fsyncs(const char *root)
{
	CHECK_EQ(fix_nr_fsync("/a"), 1);
	CHECK_EQ(fix_nr_fsync("/b"), 1);
	CHECK_EQ(fix_nr_fsync("/sub/c"), 1);
	CHECK_EQ(fix_nr_fsync("/sub/deep/h1") + fix_nr_fsync("/h2") +
		     fix_nr_fsync("/sub/h3"),
		 1);
	CHECK_EQ(fix_nr_fsync("/sub"), 1);
	CHECK_EQ(fix_nr_fsync("/sub/deep"), 1);
	CHECK_EQ(fix_nr_fsync(root), 1);
	CHECK_EQ(fkt_trace_nr("fsync", NULL), FIX_FILES + FIX_DIRS);

	CHECK_EQ(fkt_trace_nr("open", "/fifo"), 0);
	CHECK_EQ(fkt_trace_nr("open", "/sock"), 0);
	CHECK_EQ(fkt_trace_nr("open", "/lnk"), 0);
	CHECK_EQ(fkt_trace_nr("open", "/dangle"), 0);

	/* A directory's fsync comes after the fsync of everything in it. */
	size_t n = fkt_trace_count();
	for (size_t i = 0; i < n; i++) {
		const struct fkt_call *ci = fkt_trace_get(i);
		if (strcmp(ci->op, "fsync"))
			continue;
		for (size_t j = 0; j < n; j++) {
			const struct fkt_call *cj = fkt_trace_get(j);
			size_t lj = strlen(cj->path);
			if (strcmp(cj->op, "fsync") || i == j)
				continue;
			if (!strncmp(ci->path, cj->path, lj) &&
			    ci->path[lj] == '/' && j < i) {
				fprintf(stderr,
					"directory %s fsynced (#%zu) "
					"before %s (#%zu)\n",
					cj->path, j, ci->path, i);
				fkt_failures++;
			}
		}
	}
}

#endif
