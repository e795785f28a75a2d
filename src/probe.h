/* SPDX-License-Identifier: MIT */
/*
 * probe.h - private interface of the probe module (see probe.c).
 *
 * The writeback module does not make a separate probe call: it asks the
 * cache what it already knows about a descriptor's file system, makes
 * its real sync_file_range call, and teaches the cache the outcome.  So
 * a traced run shows only the calls that carry data ranges.
 *
 * Private to the library and its tests.
 */
#ifndef FK_PROBE_H
#define FK_PROBE_H

#include <sys/types.h>

#include "flushkit.h"

/* Not an enum fk_sfr_support value: "not known yet, try a real call". */
#define FK_SFR_UNKNOWN 3

/*
 * fk_probe_sfr_lookup - what is known about sync_file_range on the file
 * system of @fd, without calling it.  Stores the file system's st_dev in
 * *@dev.  Returns an enum fk_sfr_support value, FK_SFR_UNKNOWN, or -errno
 * if fstat fails (then *@dev is untouched).  On a cache miss, fstatfs
 * decides whether the file system is a known no-op one (cached as
 * FK_SFR_NOOP).  Thread-safe.
 */
int fk_probe_sfr_lookup(int fd, dev_t *dev);

/* Record what a real sync_file_range call on file system @dev showed
 * (FK_SFR_WORKS or FK_SFR_UNSUPPORTED).  Thread-safe. */
void fk_probe_sfr_learn(dev_t dev, int support);

/*
 * fk_probe_sfr_classify - what a sync_file_range return value says about
 * the file system: 0 -> FK_SFR_WORKS; -ENOSYS, -EINVAL, -ESPIPE ->
 * FK_SFR_UNSUPPORTED; anything else -> -1 (an error of this call, e.g.
 * -EIO or -EBADF, not a property of the file system).
 */
int fk_probe_sfr_classify(int err);

/* Forget every cached answer (tests).  Thread-safe. */
void fk_probe_reset(void);

#endif
