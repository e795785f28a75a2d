/* SPDX-License-Identifier: MIT */
/*
 * flushkit/probe.h - section 2 of <flushkit.h>, probe:
 * what a file system supports (fk_probe_*).
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_PROBE_H
#define FLUSHKIT_PROBE_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/probe.h>"
#endif

/* ===================================================================
 * 2. Probe
 * =================================================================== */

/* SECTION probe */
/* What sync_file_range(2) does on a file system. */
enum fk_sfr_support {
	FK_SFR_WORKS = 0,	/* starts writeback as documented */
	FK_SFR_NOOP = 1,	/* accepted but known to do nothing (ZFS) */
	FK_SFR_UNSUPPORTED = 2, /* ENOSYS, EINVAL or ESPIPE */
};

/*
 * fk_sfr_support_name - the name of an enum fk_sfr_support value: "works",
 * "noop" or "unsupported".
 * @support: an enum fk_sfr_support value.
 * Return: a static string (never freed); "unknown" for any other
 * value.  Never NULL.
 *
 * fk_sfr_support_parse - the inverse: the value a name stands for.
 * @name: a NUL-terminated name as above, matched exactly (case and
 *      all); may be NULL.  Borrowed for the call.
 * Return: the enum fk_sfr_support value (>= 0), or
 *   -EINVAL  @name is NULL or is not one of the names.
 *
 * No I/O, no allocation; thread-safe (constant tables only).
 */
FK_API const char *fk_sfr_support_name(int support);
FK_API int fk_sfr_support_parse(const char *name);

/*
 * fk_probe_sync_file_range - does sync_file_range(2) work for this file?
 * @fd: an open descriptor of a regular file on the file system to probe
 *      (any descriptor type is accepted: a pipe or socket answers
 *      FK_SFR_UNSUPPORTED).  Not closed; the caller keeps ownership.
 *
 * Returns an enum fk_sfr_support value (>= 0):
 *   FK_SFR_WORKS        the call is accepted; hints start writeback;
 *   FK_SFR_NOOP         fstatfs(2) names a file system where the call is
 *                       accepted but does nothing: ZFS (f_type
 *                       0x2fc12fc2), whose writes go through the ARC;
 *   FK_SFR_UNSUPPORTED  the call failed with ENOSYS (kernel without it;
 *                       then every file system is unsupported), EINVAL
 *                       or ESPIPE (file system or descriptor type).
 * or a negative errno value:
 *   -EBADF etc.         fstat(2) or fstatfs(2) of @fd failed;
 *   -EIO etc.           the probing call itself failed for another
 *                       reason; nothing is cached, a later call probes
 *                       again.
 *
 * The answer is cached per file system (st_dev) for the life of the
 * process; struct fk_writeback feeds the same cache from its real
 * calls.  Blocking and I/O: fstat, and on the first call for a file
 * system fstatfs and one sync_file_range(fd, st_size, 1,
 * SYNC_FILE_RANGE_WRITE): one byte at end of file, where no page is
 * dirty, so it starts no writeback (a length of 0 would mean "to end of
 * file").  Thread-safe (the cache has a mutex, never held across a
 * system call).  The same distinctions as PostgreSQL's pg_flush_data()
 * (src/backend/storage/file/fd.c); Linux sync_file_range(2).
 */
FK_API int fk_probe_sync_file_range(int fd);

#endif /* FLUSHKIT_PROBE_H */
