// SPDX-License-Identifier: MIT
/*
 * test-walk.c - the tree walker: pre/post order, no symlink following,
 * special files reported but never opened, vanished entries reported,
 * depth beyond PATH_MAX.
 */
#include "fktest.h"
#include "sys.h"
#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct log {
	char lines[256][128];
	int n;
	int errors, vanished;
	int max_depth;
};

static void add(struct log *l, const char *kind, const struct fk_walk_entry *e)
{
	if (e->depth > l->max_depth)
		l->max_depth = e->depth;
	if (l->n < 256 && e->depth < 8)
		snprintf(l->lines[l->n++], 128, "%s %s", kind, e->name);
}

static int pre(void *arg, const struct fk_walk_entry *e)
{
	add(arg, "pre", e);
	CHECK(e->fd >= 0);
	return 0;
}

static int post(void *arg, const struct fk_walk_entry *e)
{
	add(arg, "post", e);
	return 0;
}

static int entry(void *arg, const struct fk_walk_entry *e)
{
	add(arg,
	    S_ISLNK(e->st.st_mode)    ? "link"
	    : S_ISFIFO(e->st.st_mode) ? "fifo"
	    : S_ISSOCK(e->st.st_mode) ? "sock"
				      : "file",
	    e);
	CHECK_EQ(e->fd, -1);
	return 0;
}

static int error(void *arg, const char *op, const char *path, int err)
{
	struct log *l = arg;
	l->errors++;
	if (err == -ENOENT)
		l->vanished++;
	return 0;
}

static int find(struct log *l, const char *s)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->lines[i], s))
			return i;
	return -1;
}

int main(void)
{
	const struct fk_walk_ops ops = {pre, post, entry, error, 0, 0, 0};
	char root[PATH_MAX], p[PATH_MAX + 64];
	snprintf(root, sizeof(root), "%s/t", fkt_tmpdir());
	mkdir(root, 0755);
	snprintf(p, sizeof(p), "%s/a", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/a/f1", root);
	fkt_write_file(p, 10, 1);
	snprintf(p, sizeof(p), "%s/top", root);
	fkt_write_file(p, 10, 2);
	snprintf(p, sizeof(p), "%s/link", root);
	CHECK(symlink("a", p) == 0);
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK(mkfifo(p, 0644) == 0);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int dfd = open(root, O_RDONLY | O_DIRECTORY);
	CHECK(fchdir(dfd) == 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "sock");
	CHECK(bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	close(s);

	struct log l = {0};
	fkt_trace_start();
	CHECK_EQ(fk_walk(AT_FDCWD, root, &ops, &l), 0);
	CHECK_EQ(l.errors, 0);
	/* Directories: pre before contents, post after. */
	CHECK(find(&l, "pre t") == 0);
	CHECK(find(&l, "pre a") < find(&l, "file f1"));
	CHECK(find(&l, "file f1") < find(&l, "post a"));
	CHECK(find(&l, "post t") == l.n - 1);
	CHECK(find(&l, "link link") >= 0);
	CHECK(find(&l, "fifo fifo") >= 0);
	CHECK(find(&l, "sock sock") >= 0);
	CHECK(find(&l, "file top") >= 0);
	/* The symlink to a/ was not followed: f1 seen once. */
	int n1 = 0;
	for (int i = 0; i < l.n; i++)
		n1 += !strcmp(l.lines[i], "file f1");
	CHECK_EQ(n1, 1);
	/* Nothing but directories was opened. */
	CHECK_EQ(fkt_trace_find("open", "/fifo", 0), -1);
	CHECK_EQ(fkt_trace_find("open", "/sock", 0), -1);
	CHECK_EQ(fkt_trace_find("open", "/top", 0), -1);

	/* A directory that vanishes between getdents and open: reported
	 * with -ENOENT, the walk goes on. */
	memset(&l, 0, sizeof(l));
	fkt_fault_set("open", "/a", 1, -ENOENT);
	CHECK_EQ(fk_walk(AT_FDCWD, root, &ops, &l), 0);
	CHECK_EQ(l.vanished, 1);
	CHECK(find(&l, "file top") >= 0);
	fkt_fault_clear();
	fkt_trace_stop();

	/* A single file as root. */
	memset(&l, 0, sizeof(l));
	snprintf(p, sizeof(p), "%s/top", root);
	CHECK_EQ(fk_walk(AT_FDCWD, p, &ops, &l), 0);
	CHECK_EQ(l.n, 1);
	CHECK(find(&l, "file top") == 0);

	/* A missing root is an error. */
	snprintf(p, sizeof(p), "%s/missing", root);
	CHECK_EQ(fk_walk(AT_FDCWD, p, &ops, &l), -ENOENT);

	/* Deeper than PATH_MAX. */
	int fd = open(root, O_RDONLY | O_DIRECTORY);
	char name[200];
	memset(name, 'd', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	int levels = PATH_MAX / 200 + 5;
	for (int i = 0; i < levels; i++) {
		CHECK(mkdirat(fd, name, 0755) == 0);
		int nfd = openat(fd, name, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = nfd;
	}
	int ffd = openat(fd, "deep", O_WRONLY | O_CREAT, 0644);
	CHECK(ffd >= 0);
	close(ffd);
	close(fd);
	memset(&l, 0, sizeof(l));
	CHECK_EQ(fk_walk(AT_FDCWD, root, &ops, &l), 0);
	CHECK_EQ(l.errors, 0);
	CHECK_EQ(l.max_depth, levels + 1);
	close(dfd);
	CHECK(chdir("/") == 0);
	return fkt_done();
}
