/* SPDX-License-Identifier: MIT */
/*
 * flushkit.h - the public interface of libflushkit.
 *
 * libflushkit packages the writeback and fsync techniques that made
 * PostgreSQL's checkpoints smooth (sorted checkpoint writes, early
 * writeback with sync_file_range(2), fsync request queue compaction,
 * spread checkpoints) for any program, plus durable tree sync and copy
 * and an embeddable crash-safe page store that uses all of them.
 *
 * Conventions (as in liburing):
 *  - every function returns 0 (or a count) on success and a negative
 *    errno value on failure; errno itself is never the channel;
 *  - offsets and lengths are uint64_t bytes, times are integers whose
 *    name carries the unit (_ns, _us, _ms);
 *  - structs are caller-allocated with _init/_release, or opaque with
 *    _create/_destroy (or _open/_close);
 *  - the library never prints; diagnostics go to caller callbacks;
 *  - every enum of values has fk_X_name (value -> static string,
 *    "unknown" for others) and fk_X_parse (exact name -> value, or
 *    -EINVAL), declared beside it: the one spelling the command, its
 *    JSON and the result files use;
 *  - fsync errors are sticky: once a flush of a file failed, every later
 *    report for it fails too, and nothing is retried into success.
 *
 * Sections, in layer order:
 *   1. errors and versions
 *   2. probe            (what a file system supports)
 *   3. writeback        (struct fk_writeback: early writeback hints)
 *   4. fsync queue      (struct fk_fsyncq: fsync requests with compaction)
 *   5. pacer            (struct fk_pacer: spreading work over time)
 *   6. stats            (struct fk_hist: latency histograms; mean, stddev
 *                        and the two-standard-error comparison)
 *      monitor          (Dirty/Writeback and block-layer counters)
 *   6b. batched fsync   (fk_fsync_many: io_uring, thread pool, sequential)
 *   7. tree sync and copy
 *   8. page store       (struct fk_store)
 *   9. clock            (fk_now_ns)
 * Section 1 is in this file; each other section is a header of its own,
 * <flushkit/NAME.h> (NAME: probe, writeback, fsyncq, pacer, stats,
 * monitor, fsync_batch, tree, store, clock), included at the end of this
 * one in that order (each its own block: clang-format would sort
 * them).  Include <flushkit.h> only: a section's header alone is an
 * error.
 *
 * Building against it: pkg-config --cflags --libs flushkit (add
 * --static for libflushkit.a), or CMake find_package(flushkit) and the
 * target flushkit::flushkit.  The exported symbol set is the linker
 * version script src/libflushkit.map; the SONAME policy is in
 * libflushkit(3) (docs/libflushkit.md).
 */
#ifndef FLUSHKIT_H
#define FLUSHKIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(FK_BUILDING_LIBRARY)
#define FK_API __attribute__((visibility("default")))
#else
#define FK_API
#endif

/* ===================================================================
 * 1. Errors and versions
 * =================================================================== */

/* SECTION errors */

/*
 * flushkit's own error codes, returned negated like errno values.  They
 * start well above any errno value.
 */
enum fk_error {
	/* The operation completed but durability is degraded: a directory
	 * could not be fsynced (EINVAL/ENOTSUP from CIFS, some FUSE), or a
	 * file could not (EINVAL: procfs, sysfs "do not support
	 * synchronization"). */
	FK_EDEGRADED = 10001,
	/* A page or WAL record failed its CRC-32C check, or a file the
	 * store needs (control file, table segment) is missing. */
	FK_ECORRUPT = 10002,
	/* The store was stopped by an earlier, sticky error. */
	FK_ESTOPPED = 10003,
};

/*
 * fk_strerror - describe an error code.
 * @err: a negative errno value or -FK_E* code (the sign is ignored).
 * Returns a static string; never NULL.  Thread-safe.  No I/O.
 */
FK_API const char *fk_strerror(int err);

/*
 * Compile-time version of this header.  fk_version() returns the same
 * numbers for the library actually loaded, so a program can compare the
 * two (the library may be newer than the header it was built with, never
 * older within one SONAME).  The build (CMakeLists.txt) reads the
 * version from these three lines: they are its one source.
 */
#define FK_VERSION_MAJOR 0
#define FK_VERSION_MINOR 2
#define FK_VERSION_PATCH 0
#define FK_VERSION_STR_(x) #x
#define FK_VERSION_STR(x) FK_VERSION_STR_(x)
#define FK_VERSION_STRING                                                      \
	FK_VERSION_STR(FK_VERSION_MAJOR)                                       \
	"." FK_VERSION_STR(FK_VERSION_MINOR) "." FK_VERSION_STR(               \
	    FK_VERSION_PATCH)
/* FK_VERSION_NUMBER, e.g. 0x000100 for 0.1.0: for #if comparisons. */
#define FK_VERSION_NUMBER                                                      \
	((FK_VERSION_MAJOR << 16) | (FK_VERSION_MINOR << 8) | FK_VERSION_PATCH)

/*
 * fk_version - the version of the library loaded at run time, as
 * "MAJOR.MINOR.PATCH" (FK_VERSION_STRING of the header it was built
 * from).  Returns a static string; never NULL.  No I/O.  Thread-safe.
 */
FK_API const char *fk_version(void);

#include <flushkit/probe.h>

#include <flushkit/writeback.h>

#include <flushkit/fsyncq.h>

#include <flushkit/pacer.h>

#include <flushkit/stats.h>

#include <flushkit/monitor.h>

#include <flushkit/fsync_batch.h>

#include <flushkit/tree.h>

#include <flushkit/store.h>

#include <flushkit/clock.h>

#ifdef __cplusplus
}
#endif
#endif /* FLUSHKIT_H */
