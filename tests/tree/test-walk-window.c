// SPDX-License-Identifier: MIT
/*
 * test-walk-window.c - the walker holds at most FK_WALK_MAX_DIR_FDS
 * directory descriptors whatever the depth (walk.c, invariant 1):
 *
 *  - a chain of 40 directories with a file at each level: every entry
 *    is visited, each directory's dir_post after its contents, and the
 *    descriptors open in the process never exceed those open before the
 *    walk plus FK_WALK_MAX_DIR_FDS plus the root's parent;
 *  - an ancestor above the window moved away (renamed elsewhere) while
 *    the walk is deep below it: the ".." it is reopened through is not
 *    the directory it was, so the walk reports "reopen" with -ESTALE and
 *    stops with it, instead of going on in the wrong place.
 */
#include "fktest.h"
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEVELS 40

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", "..", and the one reading it */
}

struct state {
	int base_fds, max_fds;
	int pre, post, files, max_depth;
	int order_ok;
	int last_post_depth;
	const char *move_from, *move_to; /* rename at the deepest */
	int moved;
	int errors, stale;
	char error_op[32];
};

static void look(struct state *s, const struct fk_walk_entry *e)
{
	int n = count_fds();
	if (n > s->max_fds)
		s->max_fds = n;
	if (e->depth > s->max_depth)
		s->max_depth = e->depth;
}

static int pre(void *arg, const struct fk_walk_entry *e)
{
	struct state *s = arg;
	look(s, e);
	s->pre++;
	return 0;
}

static int post(void *arg, const struct fk_walk_entry *e)
{
	struct state *s = arg;
	look(s, e);
	/* Bottom-up along the chain: each dir_post one level up. */
	if (s->post && e->depth != s->last_post_depth - 1)
		s->order_ok = 0;
	s->last_post_depth = e->depth;
	s->post++;
	CHECK(e->fd >= 0);
	return 0;
}

static int entry(void *arg, const struct fk_walk_entry *e)
{
	struct state *s = arg;
	look(s, e);
	CHECK(e->dirfd >= 0);
	struct stat st;
	CHECK_EQ(fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW), 0);
	s->files++;
	if (s->move_from && !s->moved && e->depth == LEVELS + 1) {
		CHECK_EQ(rename(s->move_from, s->move_to), 0);
		s->moved = 1;
	}
	return 0;
}

static int error(void *arg, const char *op, const char *path, int err)
{
	struct state *s = arg;
	(void)path;
	s->errors++;
	if (err == -ESTALE)
		s->stale++;
	snprintf(s->error_op, sizeof(s->error_op), "%s", op);
	return 0;
}

static const struct fk_walk_ops ops = {
    .dir_pre = pre,
    .dir_post = post,
    .entry = entry,
    .error = error,
};

/* root/l1/l2/.../lLEVELS, a file "f" in each. */
static void make_chain(const char *root)
{
	char p[PATH_MAX], f[PATH_MAX + 8];
	snprintf(p, sizeof(p), "%s", root);
	CHECK_EQ(mkdir(p, 0755), 0);
	for (int i = 1; i <= LEVELS; i++) {
		size_t n = strlen(p);
		snprintf(p + n, sizeof(p) - n, "/l%d", i);
		CHECK_EQ(mkdir(p, 0755), 0);
		snprintf(f, sizeof(f), "%s/f", p);
		CHECK_EQ(fkt_write_file(f, 10, (unsigned)i), 0);
	}
}

static void test_deep_chain(void)
{
	char root[PATH_MAX];
	snprintf(root, sizeof(root), "%s/chain", fkt_tmpdir());
	make_chain(root);
	struct state s = {.order_ok = 1};
	s.base_fds = count_fds();
	int r = fk_walk(AT_FDCWD, root, &ops, &s);
	CHECK_EQ(r, 0);
	CHECK_EQ(s.errors, 0);
	CHECK_EQ(s.pre, LEVELS + 1);
	CHECK_EQ(s.post, LEVELS + 1);
	CHECK_EQ(s.files, LEVELS);
	CHECK_EQ(s.max_depth, LEVELS + 1);
	CHECK(s.order_ok);
	printf("deep chain: %d levels, descriptors open at most %d (%d "
	       "before the walk, window %d)\n",
	       LEVELS, s.max_fds, s.base_fds, FK_WALK_MAX_DIR_FDS);
	/* The window, the root's parent, and one the callback's count
	 * itself may see. */
	CHECK(s.max_fds <= s.base_fds + FK_WALK_MAX_DIR_FDS + 1);
	CHECK_EQ(count_fds(), s.base_fds);
}

static void test_ancestor_moved(void)
{
	char root[PATH_MAX], from[PATH_MAX + 16], to[PATH_MAX + 16];
	snprintf(root, sizeof(root), "%s/moved", fkt_tmpdir());
	make_chain(root);
	/* l1/l2 goes to the root, deep below the window's reach. */
	snprintf(from, sizeof(from), "%s/l1/l2", root);
	snprintf(to, sizeof(to), "%s/away", root);
	struct state s = {.order_ok = 1, .move_from = from, .move_to = to};
	int base = count_fds();
	int r = fk_walk(AT_FDCWD, root, &ops, &s);
	printf("ancestor moved: walk returned %d, %d errors (op \"%s\"), "
	       "%d ESTALE\n",
	       r, s.errors, s.error_op, s.stale);
	CHECK(s.moved);
	CHECK_EQ(r, -ESTALE);
	CHECK_EQ(s.stale, 1);
	CHECK(!strcmp(s.error_op, "reopen"));
	CHECK_EQ(count_fds(), base);
}

int main(void)
{
	test_deep_chain();
	test_ancestor_moved();
	return fkt_done();
}
