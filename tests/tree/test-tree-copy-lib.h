/* SPDX-License-Identifier: MIT */
/*
 * test-tree-copy-lib.h - helpers shared by the test-tree-copy*.c
 * programs: build source trees, compare a copy with its source entry by
 * entry (relative to directory descriptors, so paths longer than
 * PATH_MAX work), run one copy per method through syscall-table fakes,
 * capture stderr of an in-process command.
 *
 * Header-only: each test program includes it once.
 */
#ifndef TEST_TREE_COPY_LIB_H
#define TEST_TREE_COPY_LIB_H

#include "fktest.h"
#include "flushkit.h"
#include "sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

static __attribute__((unused)) int tc_verbose;

/* Write @len bytes of pattern @seed at @off of the file @name in @dfd. */
static __attribute__((unused)) int tc_write_at(int dfd, const char *name,
					       uint64_t off, size_t len,
					       unsigned seed, mode_t mode)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT, mode);
	if (fd < 0)
		return -errno;
	char buf[4096];
	uint32_t x = seed * 2654435761u + 7;
	size_t done = 0;
	while (done < len) {
		size_t n = len - done < sizeof(buf) ? len - done : sizeof(buf);
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (char)x;
		}
		if (pwrite(fd, buf, n, (off_t)(off + done)) != (ssize_t)n) {
			close(fd);
			return -EIO;
		}
		done += n;
	}
	close(fd);
	return 0;
}

static __attribute__((unused)) void tc_set_time(int dfd, const char *name,
						time_t sec, long nsec)
{
	struct timespec ts[2] = {{sec - 100, 0}, {sec, nsec}};
	CHECK(utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) == 0);
}

/* Length of the deep chain: 24 levels of 200-byte names > PATH_MAX. */
#define TC_DEEP_LEVELS 24
#define TC_DEEP_NAME_LEN 200

static __attribute__((unused)) void tc_deep_name(char *buf, int level)
{
	memset(buf, 'd', TC_DEEP_NAME_LEN);
	buf[TC_DEEP_NAME_LEN] = 0;
	buf[0] = (char)('A' + level % 26);
}

/*
 * The fidelity tree under @root (created): nested directories, empty
 * files, a sparse file, valid and dangling symlinks, three hard links to
 * one inode, a FIFO, a UNIX socket, a chain deeper than PATH_MAX (with a
 * hard-linked pair inside it), odd names, modes 0000/0444/4755, a 0555
 * directory, distinct timestamps, an owner (root only), an xattr.
 * Returns 0 or -1.
 */
static __attribute__((unused)) int tc_make_fidelity_tree(const char *root)
{
	if (mkdir(root, 0755) < 0)
		return -1;
	int r = open(root, O_RDONLY | O_DIRECTORY);
	if (r < 0)
		return -1;
	int top = r;
	CHECK(mkdirat(top, "a", 0755) == 0);
	int a = openat(top, "a", O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(a, "b", 0750) == 0);
	int b = openat(a, "b", O_RDONLY | O_DIRECTORY);
	CHECK(mkdirat(b, "c", 0700) == 0);
	int cdir = openat(b, "c", O_RDONLY | O_DIRECTORY);
	CHECK(a >= 0 && b >= 0 && cdir >= 0);

	/* Regular files, empty ones, a bigger one. */
	CHECK(tc_write_at(top, "small", 0, 100, 1, 0644) == 0);
	CHECK(tc_write_at(a, "empty", 0, 0, 0, 0644) == 0);
	CHECK(tc_write_at(cdir, "empty2", 0, 0, 0, 0600) == 0);
	CHECK(tc_write_at(b, "big", 0, 3 * 1024 * 1024 + 17, 2, 0640) == 0);

	/* Sparse: 8 MiB with data at 1 MiB and 5 MiB, a trailing hole. */
	CHECK(tc_write_at(top, "sparse", 1 << 20, 8192, 3, 0644) == 0);
	CHECK(tc_write_at(top, "sparse", 5 << 20, 100, 4, 0644) == 0);
	int fd = openat(top, "sparse", O_WRONLY);
	CHECK(fd >= 0 && ftruncate(fd, 8 << 20) == 0);
	close(fd);
	/* All hole. */
	fd = openat(a, "allhole", O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	close(fd);

	/* Symlinks: valid, dangling, to a directory. */
	CHECK(symlinkat("small", top, "link-valid") == 0);
	CHECK(symlinkat("no/such/target", top, "link-dangling") == 0);
	CHECK(symlinkat("b/c", a, "link-dir") == 0);

	/* Three hard links to one inode. */
	CHECK(tc_write_at(top, "hl1", 0, 5000, 5, 0644) == 0);
	CHECK(linkat(top, "hl1", a, "hl2", 0) == 0);
	CHECK(linkat(top, "hl1", cdir, "hl3", 0) == 0);

	/* FIFO and a UNIX socket (bound, then closed). */
	CHECK(mkfifoat(top, "fifo", 0640) == 0);
	{
		char cwd[4096];
		CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
		CHECK(fchdir(a) == 0);
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		strcpy(sa.sun_path, "sock");
		CHECK(s >= 0 &&
		      bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
		close(s);
		CHECK(chdir(cwd) == 0);
	}

	/* Odd names. */
	CHECK(tc_write_at(top, "with space", 0, 10, 6, 0644) == 0);
	CHECK(tc_write_at(top, "new\nline", 0, 11, 7, 0644) == 0);
	CHECK(tc_write_at(a, "bad\xff\xfe-utf8", 0, 12, 8, 0644) == 0);
	CHECK(mkdirat(top, "dir with space\n\xff", 0755) == 0);

	/* Modes: written first, then chmod (content needs write access). */
	if (fkt_is_root()) {
		/* Only root can read a 0000 file, so only root copies it. */
		CHECK(tc_write_at(top, "mode0000", 0, 20, 9, 0600) == 0);
		CHECK(fchmodat(top, "mode0000", 0, 0) == 0);
		tc_set_time(top, "mode0000", 1310000000, 1);
	}
	CHECK(tc_write_at(top, "mode0444", 0, 21, 10, 0600) == 0);
	CHECK(fchmodat(top, "mode0444", 0444, 0) == 0);
	CHECK(tc_write_at(top, "mode4755", 0, 22, 11, 0600) == 0);
	CHECK(fchmodat(top, "mode4755", 04755, 0) == 0);
	/* A read-only directory with content. */
	CHECK(mkdirat(top, "ro-dir", 0755) == 0);
	int ro = openat(top, "ro-dir", O_RDONLY | O_DIRECTORY);
	CHECK(tc_write_at(ro, "inside", 0, 30, 12, 0644) == 0);
	CHECK(fchmod(ro, 0555) == 0);
	close(ro);

	/* Owner (root only) and an xattr (where supported). */
	if (fkt_is_root())
		CHECK(fchownat(top, "small", 1234, 5678, 0) == 0);
	fd = openat(top, "small", O_RDONLY);
	if (fd >= 0) {
		if (fsetxattr(fd, "user.flushkit", "v1", 2, 0) < 0 &&
		    tc_verbose)
			fprintf(stderr, "(no user xattrs here)\n");
		close(fd);
	}

	/* Deeper than PATH_MAX, built with mkdirat/openat chains. */
	{
		char name[TC_DEEP_NAME_LEN + 1];
		int cur = dup(top);
		for (int i = 0; i < TC_DEEP_LEVELS; i++) {
			tc_deep_name(name, i);
			CHECK(mkdirat(cur, name, 0755) == 0);
			int next = openat(cur, name, O_RDONLY | O_DIRECTORY);
			CHECK(next >= 0);
			close(cur);
			cur = next;
		}
		CHECK(tc_write_at(cur, "deepfile", 0, 1000, 13, 0644) == 0);
		CHECK(mkdirat(cur, "sub", 0755) == 0);
		int sub = openat(cur, "sub", O_RDONLY | O_DIRECTORY);
		CHECK(linkat(cur, "deepfile", sub, "deeplink", 0) == 0);
		tc_set_time(sub, ".", 1500000000, 123456789);
		close(sub);
		tc_set_time(cur, "deepfile", 1400000000, 5);
		close(cur);
	}

	/* Distinct timestamps with nanoseconds, directories last. */
	tc_set_time(top, "small", 1000000000, 111111111);
	tc_set_time(top, "sparse", 1100000000, 222222222);
	tc_set_time(top, "link-valid", 1200000000, 333333333);
	tc_set_time(top, "fifo", 1300000000, 444444444);
	tc_set_time(cdir, ".", 1320000000, 2);
	tc_set_time(b, ".", 1330000000, 3);
	tc_set_time(a, ".", 1340000000, 4);
	tc_set_time(top, "ro-dir", 1350000000, 5);
	close(cdir);
	close(b);
	close(a);
	tc_set_time(top, ".", 1360000000, 6);
	close(top);
	return 0;
}

/* Compare two file contents (both open). */
static __attribute__((unused)) int tc_same_content(int f1, int f2)
{
	char b1[65536], b2[65536];
	for (off_t off = 0;; off += (off_t)sizeof(b1)) {
		ssize_t n1 = pread(f1, b1, sizeof(b1), off);
		ssize_t n2 = pread(f2, b2, sizeof(b2), off);
		if (n1 != n2 || n1 < 0)
			return 0;
		if (n1 == 0)
			return 1;
		if (memcmp(b1, b2, (size_t)n1))
			return 0;
	}
}

struct tc_cmp {
	int entries; /* entries compared */
	int mismatches;
	int check_atime; /* never: reading the source changes it */
};

#define TC_MISMATCH(cmp, path, ...)                                            \
	do {                                                                   \
		fprintf(stderr, "mismatch at '%s': ", path);                   \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		(cmp)->mismatches++;                                           \
	} while (0)

static __attribute__((unused)) void
tc_cmp_dir(struct tc_cmp *cmp, int sdir, int ddir, const char *path, int depth);

/* Compare entry @name of @sdir with the same name in @ddir. */
static __attribute__((unused)) void tc_cmp_entry(struct tc_cmp *cmp, int sdir,
						 int ddir, const char *name,
						 const char *path, int depth)
{
	struct stat s, d;
	cmp->entries++;
	if (fstatat(sdir, name, &s, AT_SYMLINK_NOFOLLOW) < 0) {
		TC_MISMATCH(cmp, path, "source lstat failed");
		return;
	}
	if (fstatat(ddir, name, &d, AT_SYMLINK_NOFOLLOW) < 0) {
		TC_MISMATCH(cmp, path, "missing in the copy");
		return;
	}
	if ((s.st_mode & S_IFMT) != (d.st_mode & S_IFMT)) {
		TC_MISMATCH(cmp, path, "type %o != %o", s.st_mode & S_IFMT,
			    d.st_mode & S_IFMT);
		return;
	}
	if (!S_ISLNK(s.st_mode) && s.st_mode != d.st_mode)
		TC_MISMATCH(cmp, path, "mode %o != %o", s.st_mode, d.st_mode);
	if (s.st_nlink != d.st_nlink)
		TC_MISMATCH(cmp, path, "nlink %lu != %lu",
			    (unsigned long)s.st_nlink,
			    (unsigned long)d.st_nlink);
	if (fkt_is_root() && (s.st_uid != d.st_uid || s.st_gid != d.st_gid))
		TC_MISMATCH(cmp, path, "owner %u:%u != %u:%u", s.st_uid,
			    s.st_gid, d.st_uid, d.st_gid);
	if (s.st_mtim.tv_sec != d.st_mtim.tv_sec ||
	    s.st_mtim.tv_nsec != d.st_mtim.tv_nsec)
		TC_MISMATCH(cmp, path, "mtime %ld.%09ld != %ld.%09ld",
			    (long)s.st_mtim.tv_sec, s.st_mtim.tv_nsec,
			    (long)d.st_mtim.tv_sec, d.st_mtim.tv_nsec);
	if (!S_ISDIR(s.st_mode) && s.st_size != d.st_size)
		TC_MISMATCH(cmp, path, "size %lld != %lld",
			    (long long)s.st_size, (long long)d.st_size);
	if (S_ISCHR(s.st_mode) || S_ISBLK(s.st_mode))
		if (s.st_rdev != d.st_rdev)
			TC_MISMATCH(cmp, path, "rdev differs");

	if (S_ISREG(s.st_mode)) {
		/* Sparse files stay sparse: allocation compared, with a
		 * little slack for file-system metadata blocks. */
		if (d.st_blocks > s.st_blocks + 16)
			TC_MISMATCH(cmp, path, "blocks %lld > %lld",
				    (long long)d.st_blocks,
				    (long long)s.st_blocks);
		int f1 = openat(sdir, name, O_RDONLY | O_NOFOLLOW);
		int f2 = openat(ddir, name, O_RDONLY | O_NOFOLLOW);
		if (f1 < 0 || f2 < 0 || !tc_same_content(f1, f2))
			TC_MISMATCH(cmp, path, "content differs");
		char v1[64] = "", v2[64] = "";
		ssize_t n1 =
		    f1 >= 0 ? fgetxattr(f1, "user.flushkit", v1, sizeof(v1))
			    : -1;
		ssize_t n2 =
		    f2 >= 0 ? fgetxattr(f2, "user.flushkit", v2, sizeof(v2))
			    : -1;
		if (n1 >= 0 && (n1 != n2 || memcmp(v1, v2, (size_t)n1)))
			TC_MISMATCH(cmp, path, "xattr user.flushkit differs");
		if (f1 >= 0)
			close(f1);
		if (f2 >= 0)
			close(f2);
	} else if (S_ISLNK(s.st_mode)) {
		char t1[4096], t2[4096];
		ssize_t n1 = readlinkat(sdir, name, t1, sizeof(t1));
		ssize_t n2 = readlinkat(ddir, name, t2, sizeof(t2));
		if (n1 < 0 || n1 != n2 || memcmp(t1, t2, (size_t)n1))
			TC_MISMATCH(cmp, path, "link target differs");
	} else if (S_ISDIR(s.st_mode)) {
		int s2 = openat(sdir, name, O_RDONLY | O_DIRECTORY);
		int d2 = openat(ddir, name, O_RDONLY | O_DIRECTORY);
		if (s2 < 0 || d2 < 0)
			TC_MISMATCH(cmp, path, "cannot open directory");
		else
			tc_cmp_dir(cmp, s2, d2, path, depth + 1);
		if (s2 >= 0)
			close(s2);
		if (d2 >= 0)
			close(d2);
	}
}

/* Names in a directory, sorted, NUL-separated; returns count. */
static __attribute__((unused)) int tc_names(int dfd, char ***out)
{
	int fd = dup(dfd);
	DIR *dir = fdopendir(fd);
	char **names = NULL;
	int n = 0;
	struct dirent *de;
	rewinddir(dir);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = realloc(names, (size_t)(n + 1) * sizeof(*names));
		names[n++] = strdup(de->d_name);
	}
	closedir(dir);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0;
		     j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out = names;
	return n;
}

static __attribute__((unused)) void tc_free_names(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static __attribute__((unused)) void
tc_cmp_dir(struct tc_cmp *cmp, int sdir, int ddir, const char *path, int depth)
{
	char **sn, **dn;
	int ns = tc_names(sdir, &sn), nd = tc_names(ddir, &dn);
	if (ns != nd)
		TC_MISMATCH(cmp, path, "%d entries in source, %d in copy", ns,
			    nd);
	for (int i = 0; i < ns && i < nd; i++)
		if (strcmp(sn[i], dn[i]))
			TC_MISMATCH(cmp, path, "name '%s' != '%s'", sn[i],
				    dn[i]);
	for (int i = 0; i < ns; i++) {
		/* Display paths are cut short in deep trees. */
		char p[600];
		if (depth < 3)
			snprintf(p, sizeof(p), "%s/%s", path, sn[i]);
		else
			snprintf(p, sizeof(p), "%s/.../%.40s", path, sn[i]);
		tc_cmp_entry(cmp, sdir, ddir, sn[i], depth < 3 ? p : path,
			     depth);
	}
	tc_free_names(sn, ns);
	tc_free_names(dn, nd);
}

/* Compare the trees @src and @dst (paths); returns mismatches. */
static __attribute__((unused)) int
tc_compare_trees(const char *src, const char *dst, int *entries)
{
	struct tc_cmp cmp = {0};
	char *sp = strdup(src), *dp = strdup(dst);
	char *sb = strrchr(sp, '/'), *db = strrchr(dp, '/');
	*sb = 0;
	*db = 0;
	int sdir = open(sp, O_RDONLY | O_DIRECTORY);
	int ddir = open(dp, O_RDONLY | O_DIRECTORY);
	CHECK(sdir >= 0 && ddir >= 0);
	/* The top entries may have different names: compare through
	 * a fixed name by looking them up directly. */
	if (strcmp(sb + 1, db + 1) == 0) {
		tc_cmp_entry(&cmp, sdir, ddir, sb + 1, dst, 0);
	} else {
		struct stat s, d;
		CHECK(fstatat(sdir, sb + 1, &s, AT_SYMLINK_NOFOLLOW) == 0);
		CHECK(fstatat(ddir, db + 1, &d, AT_SYMLINK_NOFOLLOW) == 0);
		int s2 = openat(sdir, sb + 1, O_RDONLY | O_DIRECTORY);
		int d2 = openat(ddir, db + 1, O_RDONLY | O_DIRECTORY);
		CHECK(s2 >= 0 && d2 >= 0);
		if (s.st_mode != d.st_mode ||
		    s.st_mtim.tv_sec != d.st_mtim.tv_sec ||
		    s.st_mtim.tv_nsec != d.st_mtim.tv_nsec)
			TC_MISMATCH(&cmp, dst, "top mode or mtime differs");
		tc_cmp_dir(&cmp, s2, d2, dst, 1);
		close(s2);
		close(d2);
	}
	close(sdir);
	close(ddir);
	free(sp);
	free(dp);
	if (entries)
		*entries = cmp.entries;
	return cmp.mismatches;
}

/* ---- one copy per method, through syscall-table fakes ---- */

/* Every copy method, the default first: the per-method tests run each. */
static __attribute__((unused)) const int tc_methods[] = {
    FK_COPY_AUTO,	FK_COPY_WRITEBACK, FK_COPY_DELAYED,
    FK_COPY_FSYNC_EACH, FK_COPY_SYNCFS,
};
#define TC_NR_METHODS (sizeof(tc_methods) / sizeof(tc_methods[0]))

/* Create the @n files @names[i] of @sizes[i] bytes (pattern i + 1) in
 * the directory @dir. */
static __attribute__((unused)) void tc_write_files(const char *dir,
						   const char *const *names,
						   const uint64_t *sizes, int n)
{
	char p[4200];
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		CHECK_EQ(fkt_write_file(p, sizes[i], (unsigned)i + 1), 0);
	}
}

/*
 * Copy @src to TMPDIR/dst-NAME (NAME: fk_copy_method_name(@method);
 * the path goes to @dst, @len bytes) with the default options but
 * copy_method @method, through the syscall-table fakes that @install
 * puts in fk_sys (NULL: none; it also zeroes the fakes' counters).  The
 * table is reset after the copy whatever it returned, so the checks
 * that follow make real calls.  Returns fk_tree_copy's result; fills @st.
 */
static __attribute__((unused)) int tc_copy_method(const char *src, int method,
						  void (*install)(void),
						  char *dst, size_t len,
						  struct fk_tree_stats *st)
{
	snprintf(dst, len, "%s/dst-%s", fkt_tmpdir(),
		 fk_copy_method_name(method));
	struct fk_tree_opts o;
	fk_tree_opts_init(&o);
	o.copy_method = method;
	if (install)
		install();
	int r = fk_tree_copy(src, dst, &o, st);
	fk_sys_reset();
	return r;
}

/* The file @b (a copy) has the content of @a; else a failure naming @b
 * (and @label, if not NULL) with both sizes. */
static __attribute__((unused)) void tc_check_same(const char *a, const char *b,
						  const char *label)
{
	size_t la, lb;
	char *x = fkt_read_file(a, &la), *y = fkt_read_file(b, &lb);
	if (!x || !y || la != lb || memcmp(x, y, la)) {
		fprintf(stderr, "%s%s%s: %zu bytes, source %zu\n",
			label ? label : "", label ? ": " : "", b, y ? lb : 0,
			x ? la : 0);
		fkt_failures++;
	}
	free(x);
	free(y);
}

/* ---- stderr capture for in-process commands ---- */

static __attribute__((unused)) int tc_saved_stderr = -1;
static __attribute__((unused)) char tc_capture_path[4200];

static __attribute__((unused)) void tc_capture_start(const char *dir)
{
	fflush(stderr);
	snprintf(tc_capture_path, sizeof(tc_capture_path), "%s/stderr.txt",
		 dir);
	int fd = open(tc_capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	tc_saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

/* Stop capturing; returns the captured text (caller frees) and echoes
 * it to the real stderr for the test log. */
static __attribute__((unused)) char *tc_capture_end(void)
{
	fflush(stderr);
	dup2(tc_saved_stderr, 2);
	close(tc_saved_stderr);
	char *text = fkt_read_file(tc_capture_path, NULL);
	if (text)
		fprintf(stderr,
			"--- captured stderr ---\n%s-----------------------\n",
			text);
	return text ? text : strdup("");
}

#endif
