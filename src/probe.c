// SPDX-License-Identifier: MIT
/*
 * probe.c - what a file system supports, probed once and cached.
 *
 * sync_file_range(2) is Linux-only and not honoured everywhere: a kernel
 * built without it says ENOSYS, some file systems and descriptor types
 * say EINVAL or ESPIPE, and ZFS accepts the call and does nothing (its
 * writes go through the ARC and transaction groups, not the page cache).
 * PostgreSQL's pg_flush_data() (src/backend/storage/file/fd.c) makes the
 * same distinctions: a failed hint is "just a performance optimization"
 * and the fallback is posix_fadvise(POSIX_FADV_DONTNEED).
 *
 * Interface routines:
 *   fk_probe_sync_file_range()  public: probe now if not cached
 *   fk_probe_sfr_lookup()       private: cached answer or "unknown"
 *   fk_probe_sfr_learn()        private: record a real call's outcome
 *   fk_probe_sfr_classify()     private: map a return value to support
 *   fk_probe_reset()            private: empty the cache (tests)
 *
 * Invariants:
 *   1. The cache maps st_dev to an enum fk_sfr_support value; a file
 *      system appears at most once.
 *   2. Only answers that describe the file system are cached: WORKS,
 *      NOOP and UNSUPPORTED.  A call that failed for another reason
 *      (EIO, EBADF) teaches nothing and is not cached.
 *   3. The mutex is never held across a system call.
 *   4. Once any call returned ENOSYS the kernel lacks the system call:
 *      every file system is UNSUPPORTED until fk_probe_reset().
 */
#include "probe.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>

/* File systems that accept sync_file_range and do nothing with it. */
static const unsigned long noop_fs_magic[] = {
    0x2fc12fc2, /* ZFS (ZFS_SUPER_MAGIC): ARC, not the page cache */
};

struct cache_entry {
	dev_t dev;
	int support;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cache_entry *cache;
static size_t nr_cache, alloc_cache;
static int kernel_enosys;

/* Caller holds cache_lock.  Returns the cached answer or FK_SFR_UNKNOWN. */
static int cache_get(dev_t dev)
{
	if (kernel_enosys)
		return FK_SFR_UNSUPPORTED;
	for (size_t i = 0; i < nr_cache; i++)
		if (cache[i].dev == dev)
			return cache[i].support;
	return FK_SFR_UNKNOWN;
}

/* Caller holds cache_lock.  Out of memory: the answer is not cached,
 * which only costs a later probe. */
static void cache_put(dev_t dev, int support)
{
	for (size_t i = 0; i < nr_cache; i++) {
		if (cache[i].dev == dev) {
			cache[i].support = support;
			return;
		}
	}
	if (nr_cache == alloc_cache) {
		size_t n = alloc_cache ? alloc_cache * 2 : 16;
		struct cache_entry *c = realloc(cache, n * sizeof(*c));
		if (!c)
			return;
		cache = c;
		alloc_cache = n;
	}
	cache[nr_cache].dev = dev;
	cache[nr_cache].support = support;
	nr_cache++;
}

static int lookup(dev_t dev)
{
	pthread_mutex_lock(&cache_lock);
	int r = cache_get(dev);
	pthread_mutex_unlock(&cache_lock);
	return r;
}

void fk_probe_sfr_learn(dev_t dev, int support)
{
	if (support != FK_SFR_WORKS && support != FK_SFR_NOOP &&
	    support != FK_SFR_UNSUPPORTED)
		return;
	pthread_mutex_lock(&cache_lock);
	cache_put(dev, support);
	pthread_mutex_unlock(&cache_lock);
}

int fk_probe_sfr_classify(int err)
{
	switch (err) {
	case 0:
		return FK_SFR_WORKS;
	case -ENOSYS:
		pthread_mutex_lock(&cache_lock);
		kernel_enosys = 1;
		pthread_mutex_unlock(&cache_lock);
		return FK_SFR_UNSUPPORTED;
	case -EINVAL:
	case -ESPIPE:
		return FK_SFR_UNSUPPORTED;
	default:
		return -1;
	}
}

/* FK_SFR_NOOP if the file system of @fd is a known no-op one, else
 * FK_SFR_UNKNOWN; -errno if fstatfs fails. */
static int check_fs_type(int fd)
{
	struct statfs sfs;
	int r = fk_sys.fstatfs(fd, &sfs);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(noop_fs_magic) / sizeof(noop_fs_magic[0]);
	     i++)
		if ((unsigned long)sfs.f_type == noop_fs_magic[i])
			return FK_SFR_NOOP;
	return FK_SFR_UNKNOWN;
}

int fk_probe_sfr_lookup(int fd, dev_t *dev)
{
	struct stat st;
	int r = fk_sys.fstat(fd, &st);
	if (r < 0)
		return r;
	*dev = st.st_dev;
	r = lookup(st.st_dev);
	if (r != FK_SFR_UNKNOWN)
		return r;
	r = check_fs_type(fd);
	if (r == FK_SFR_NOOP)
		fk_probe_sfr_learn(st.st_dev, r);
	/* An fstatfs failure is not fatal here: the real call decides. */
	return r < 0 ? FK_SFR_UNKNOWN : r;
}

int fk_probe_sync_file_range(int fd)
{
	struct stat st;
	int r = fk_sys.fstat(fd, &st);
	if (r < 0)
		return r;
	r = lookup(st.st_dev);
	if (r != FK_SFR_UNKNOWN)
		return r;
	r = check_fs_type(fd);
	if (r < 0)
		return r;
	if (r == FK_SFR_NOOP) {
		fk_probe_sfr_learn(st.st_dev, r);
		return r;
	}
	/*
	 * One byte at end of file: no page there is dirty, so the call
	 * starts no writeback but goes through every check a real hint
	 * meets.  (A length of 0 would mean "to end of file" and start
	 * writeback of the whole file.)
	 */
	off_t off = st.st_size > 0 ? st.st_size : 0;
	r = fk_sys.sync_file_range(fd, off, 1, SYNC_FILE_RANGE_WRITE);
	int support = fk_probe_sfr_classify(r);
	if (support < 0)
		return r; /* this call failed; the file system is unknown */
	fk_probe_sfr_learn(st.st_dev, support);
	return support;
}

void fk_probe_reset(void)
{
	pthread_mutex_lock(&cache_lock);
	free(cache);
	cache = NULL;
	nr_cache = alloc_cache = 0;
	kernel_enosys = 0;
	pthread_mutex_unlock(&cache_lock);
}
