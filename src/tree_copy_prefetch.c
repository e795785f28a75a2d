// SPDX-License-Identifier: MIT
/*
 * tree_copy_prefetch.c - read a copy's source ahead across directories,
 * from a thread of its own.
 *
 * Interface routines: fk_prefetch_start(), fk_prefetch_reached(),
 * fk_prefetch_stop() (tree.h).
 *
 * The walk's own read-ahead (walk.c read_ahead) stops at the next
 * subdirectory: what is below it is copied first.  /usr/share has 12
 * files a directory on average (65k files, 5.3k directories), so most
 * of a cold source's reads were still started one directory at a time.
 * This thread walks the source in the copy's order (entries of each
 * directory by inode number, as fk_walk, a subdirectory at its place)
 * and starts the reads (POSIX_FADV_WILLNEED) of the regular files a
 * byte budget ahead of the copy, whatever directory they are in, so the
 * device has many reads queued instead of one.
 *
 * Position: bytes of regular files (st_size, in walk order) before a
 * file.  The copy says how far it got (fk_prefetch_reached, the
 * position of the file it is at); the thread reads ahead only files
 * that start at or past it, and waits while the file it would read next
 * ends more than the budget past it (a larger file is read only up to
 * the budget).  A file the copy already passed is not read.
 *
 * The thread is only a hint: it reports nothing, changes nothing, and
 * what it fails to open or read is left to the copy (which opens every
 * file itself and reports its errors).  It holds at most three
 * descriptors (the root, one directory, one file).  So it calls the kernel
 * directly, not through the syscall table (sys.h): a fault a test injects there
 * is meant for the copy's own calls.  It opens only what lstat says is
 * a regular file, O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, checks the open file
 * is regular, and closes it at once (the pages stay in the cache, the
 * reads in flight).  Directories are opened O_NOATIME where allowed (as
 * fk_walk), by their path from the root, and never more than
 * PREFETCH_MAX_DEPTH deep nor past PATH_MAX (there the thread stops: the
 * copy reads the rest as before).  With one_fs, directories on
 * another file system than the root's are not entered (cp -x).
 */
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PREFETCH_MAX_DEPTH 64

struct fk_prefetch {
	pthread_t thread;
	int root_fd;
	dev_t root_dev;
	int one_fs;
	uint64_t budget;
	uint64_t pos;		 /* the thread's position (its own) */
	_Atomic uint64_t copy;	 /* the copy's position */
	_Atomic int stop;	 /* the copy is done: stop */
	_Atomic uint64_t wake;	 /* the thread waits until copy >= wake */
	_Atomic uint64_t issued; /* bytes read ahead (stats) */
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

struct pent {
	uint64_t ino;
	size_t off;
	unsigned char type;
};

struct plist {
	struct pent *e;
	size_t nr, alloc;
	char *names;
	size_t len, names_alloc;
};

static int cmp_ino(const void *a, const void *b)
{
	const struct pent *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int plist_add(struct plist *l, uint64_t ino, unsigned char type,
		     const char *name)
{
	size_t n = strlen(name) + 1;
	if (l->nr == l->alloc) {
		size_t a = l->alloc ? l->alloc * 2 : 64;
		struct pent *p = realloc(l->e, a * sizeof(*p));
		if (!p)
			return -1;
		l->e = p;
		l->alloc = a;
	}
	if (l->len + n > l->names_alloc) {
		size_t a = l->names_alloc ? l->names_alloc * 2 : 4096;
		while (a < l->len + n)
			a *= 2;
		char *p = realloc(l->names, a);
		if (!p)
			return -1;
		l->names = p;
		l->names_alloc = a;
	}
	memcpy(l->names + l->len, name, n);
	l->e[l->nr++] = (struct pent){.ino = ino, .off = l->len, .type = type};
	l->len += n;
	return 0;
}

struct kdirent {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* The entries of directory @fd but "." and "..", by inode number (the
 * order fk_walk visits them in).  0, or -1 (the directory is skipped). */
static int plist_read(int fd, struct plist *l)
{
	char buf[32768] __attribute__((aligned(8)));
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct kdirent *d = (void *)(buf + off);
			off += d->d_reclen;
			const char *nm = d->d_name;
			if (nm[0] == '.' &&
			    (nm[1] == 0 || (nm[1] == '.' && nm[2] == 0)))
				continue;
			if (plist_add(l, d->d_ino, d->d_type, nm))
				return -1;
		}
	}
	if (l->nr > 1)
		qsort(l->e, l->nr, sizeof(*l->e), cmp_ino);
	return 0;
}

/* Wait until the copy is at least at @at, or told to stop.  Returns
 * nonzero to stop. */
static int wait_copy(struct fk_prefetch *p, uint64_t at)
{
	if (atomic_load(&p->copy) >= at)
		return atomic_load(&p->stop);
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->wake, at);
	while (!atomic_load(&p->stop) && atomic_load(&p->copy) < at)
		pthread_cond_wait(&p->cond, &p->lock);
	atomic_store(&p->wake, UINT64_MAX);
	pthread_mutex_unlock(&p->lock);
	return atomic_load(&p->stop);
}

/* A regular file of size @size at the thread's position: read it ahead
 * (within the budget) unless the copy is past it.  Nonzero: stop. */
static int prefetch_file(struct fk_prefetch *p, int dfd, const char *name,
			 uint64_t size)
{
	uint64_t at = p->pos;
	p->pos += size;
	if (size == 0 || atomic_load(&p->copy) > at)
		return atomic_load(&p->stop);
	/* The whole file within the budget, or (larger than it) once the
	 * copy is at its start. */
	uint64_t end = at + (size < p->budget ? size : p->budget);
	if (wait_copy(p, end > p->budget ? end - p->budget : 0))
		return 1;
	uint64_t copy = atomic_load(&p->copy);
	if (copy > at)
		return 0; /* passed meanwhile */
	uint64_t n = copy + p->budget - at;
	if (n > size)
		n = size;
	int fd =
	    openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat s;
	if (fstat(fd, &s) == 0 && S_ISREG(s.st_mode) &&
	    posix_fadvise(fd, 0, (off_t)n, POSIX_FADV_WILLNEED) == 0)
		atomic_fetch_add(&p->issued, n);
	close(fd);
	return 0;
}

/* Open directory @name (a path below @dfd) without following any
 * symlink on the way (openat2 RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH;
 * where the kernel has no openat2, O_NOFOLLOW on the last component). */
static int open_dir(int dfd, const char *name)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
	for (int noatime = 1; noatime >= 0; noatime--) {
		struct open_how how = {
		    .flags = (uint64_t)(flags | (noatime ? O_NOATIME : 0)),
		    .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH,
		};
		int fd =
		    (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
		if (fd < 0 && errno == ENOSYS)
			fd = openat(dfd, name, (int)how.flags);
		if (fd >= 0 || errno != EPERM)
			return fd;
	}
	return -1;
}

/*
 * Walk the directory at @rel (relative to the root; "" is the root) at
 * @depth; @rel has room for PATH_MAX bytes.  At most three descriptors
 * are held (the root's, this directory's, a file's): a subdirectory is
 * walked with this one closed, which is opened again by its path after.
 * Nonzero: stop.
 */
static int prefetch_dir(struct fk_prefetch *p, char *rel, int depth)
{
	struct plist l = {0};
	int stop = 0;
	size_t rl = strlen(rel);
	int fd = open_dir(p->root_fd, rl ? rel : ".");
	if (fd < 0)
		return 0; /* the copy cannot read it either */
	if (plist_read(fd, &l) < 0)
		goto out;
	for (size_t i = 0; !stop && i < l.nr; i++) {
		const char *nm = l.names + l.e[i].off;
		unsigned char t = l.e[i].type;
		struct stat s;
		if (t != DT_REG && t != DT_DIR && t != DT_UNKNOWN)
			continue;
		if (fd < 0) {
			fd = open_dir(p->root_fd, rl ? rel : ".");
			if (fd < 0)
				break; /* moved away: the copy says so */
		}
		if (fstatat(fd, nm, &s, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISREG(s.st_mode)) {
			stop = prefetch_file(p, fd, nm, (uint64_t)s.st_size);
			continue;
		}
		if (!S_ISDIR(s.st_mode))
			continue;
		/* cp -x: the copy does not enter it either. */
		if (p->one_fs && s.st_dev != p->root_dev)
			continue;
		size_t nl = strlen(nm);
		/* Too deep or too long: the copy's positions below are not
		 * followed; the rest is read as before. */
		if (depth >= PREFETCH_MAX_DEPTH || rl + nl + 2 > PATH_MAX) {
			stop = 1;
			break;
		}
		close(fd);
		fd = -1;
		if (rl)
			rel[rl] = '/';
		memcpy(rel + rl + (rl ? 1 : 0), nm, nl + 1);
		stop = prefetch_dir(p, rel, depth + 1);
		rel[rl] = 0;
	}
out:
	free(l.e);
	free(l.names);
	if (fd >= 0)
		close(fd);
	return stop;
}

static void *prefetch_main(void *arg)
{
	struct fk_prefetch *p = arg;
	char *rel = malloc(PATH_MAX);
	if (rel) {
		rel[0] = 0;
		prefetch_dir(p, rel, 0);
	}
	free(rel);
	return NULL;
}

int fk_prefetch_start(int at_fd, const char *root, uint64_t budget, int one_fs,
		      struct fk_prefetch **out)
{
	*out = NULL;
	if (!budget)
		return 0;
	struct fk_prefetch *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	struct stat s;
	/* The root as given (a trailing slash follows a symlink, as for
	 * the walk); what is below it, beneath it. */
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
	p->root_fd = openat(at_fd, root, flags | O_NOATIME);
	if (p->root_fd < 0 && errno == EPERM)
		p->root_fd = openat(at_fd, root, flags);
	if (p->root_fd < 0 || fstat(p->root_fd, &s) < 0) {
		/* A file, a symlink copied as one, or unreadable: nothing
		 * to read ahead (the copy reports what it cannot read). */
		if (p->root_fd >= 0)
			close(p->root_fd);
		free(p);
		return 0;
	}
	p->root_dev = s.st_dev;
	p->one_fs = one_fs;
	p->budget = budget;
	atomic_init(&p->copy, 0);
	atomic_init(&p->stop, 0);
	atomic_init(&p->wake, UINT64_MAX);
	atomic_init(&p->issued, 0);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	int r = pthread_create(&p->thread, NULL, prefetch_main, p);
	if (r) {
		close(p->root_fd);
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->cond);
		free(p);
		return -r;
	}
	*out = p;
	return 0;
}

void fk_prefetch_reached(struct fk_prefetch *p, uint64_t pos)
{
	if (!p)
		return;
	atomic_store(&p->copy, pos);
	if (pos >= atomic_load(&p->wake)) {
		pthread_mutex_lock(&p->lock);
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
	}
}

uint64_t fk_prefetch_stop(struct fk_prefetch *p)
{
	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->stop, 1);
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	close(p->root_fd);
	uint64_t n = atomic_load(&p->issued);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
	return n;
}
