// SPDX-License-Identifier: MIT
/*
 * names.c - the names of the values of flushkit's public enums, and
 * their parsers: one table per enum, so that the command, the
 * benchmarks, the result files and the tests all print and read the
 * same word for the same value (a JSON "method" field, a --method=
 * option, a settings line of a result file).
 *
 * Interface routines (see include/flushkit.h, each beside its enum):
 *   fk_sfr_support_name/_parse      "works", "noop", "unsupported"
 *   fk_fsync_op_name/_parse         "fsync", "fdatasync", "writeback"
 *   fk_sync_io_name/_parse          "auto", "uring", "threads",
 *                                   "sequential" ("io_uring" parses)
 *   fk_sync_method_name/_parse      "twopass", "fsync", "syncfs", "auto"
 *   fk_copy_method_name/_parse      "writeback", "delayed", "fsync-each",
 *                                   "syncfs", "auto"
 *   fk_copy_update_name/_parse      "all", "none", "older", "resume"
 *   fk_copy_reflink_name/_parse     "auto", "always", "never"
 *   fk_copy_sparse_name/_parse      "auto", "always", "never"
 *   fk_report_level_name/_parse     "warning", "error"
 *   fk_wal_sync_method_name/_parse  "fdatasync", "fsync", "open_datasync"
 *   fk_store_create_mode_name/_parse "open-existing", "create-if-missing",
 *                                   "create-new"
 *
 * Enums without a name table, and why: enum fk_error (fk_strerror
 * describes a code), enum fk_stats_marker (its values are the printable
 * characters themselves), enum fk_copy_flags (a set of bits, not one
 * value).
 *
 * Invariants:
 *  1. Each table is indexed by the enum's value, from 0 to its last
 *     value without a gap; a name belongs to one value only.
 *  2. name(parse(s)) == s for every name s of a table, and
 *     parse(name(v)) == v for every value v (tests/base/test-names.c).
 *  3. No I/O, no state: every function is thread-safe.
 */
#include "flushkit.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define NR(t) (sizeof(t) / sizeof((t)[0]))

static const char *name_of(const char *const *names, size_t nr, int v)
{
	if (v < 0 || (size_t)v >= nr || !names[v])
		return "unknown";
	return names[v];
}

static int parse_of(const char *const *names, size_t nr, const char *s)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		if (names[i] && !strcmp(s, names[i]))
			return (int)i;
	return -EINVAL;
}

#define NAMES(prefix, table)                                                   \
	const char *fk_##prefix##_name(int v)                                  \
	{                                                                      \
		return name_of(table, NR(table), v);                           \
	}                                                                      \
	int fk_##prefix##_parse(const char *name)                              \
	{                                                                      \
		return parse_of(table, NR(table), name);                       \
	}

static const char *const sfr_support_names[] = {
    [FK_SFR_WORKS] = "works",
    [FK_SFR_NOOP] = "noop",
    [FK_SFR_UNSUPPORTED] = "unsupported",
};
NAMES(sfr_support, sfr_support_names)

static const char *const fsync_op_names[] = {
    [FK_FSYNC_OP_FSYNC] = "fsync",
    [FK_FSYNC_OP_FDATASYNC] = "fdatasync",
    [FK_FSYNC_OP_WRITEBACK] = "writeback",
};
NAMES(fsync_op, fsync_op_names)

static const char *const sync_io_names[] = {
    [FK_SYNC_IO_AUTO] = "auto",
    [FK_SYNC_IO_URING] = "uring",
    [FK_SYNC_IO_THREADS] = "threads",
    [FK_SYNC_IO_SEQUENTIAL] = "sequential",
};

const char *fk_sync_io_name(int sync_io)
{
	return name_of(sync_io_names, NR(sync_io_names), sync_io);
}

int fk_sync_io_parse(const char *name)
{
	/* The library's own name of the interface is accepted too. */
	if (name && !strcmp(name, "io_uring"))
		return FK_SYNC_IO_URING;
	return parse_of(sync_io_names, NR(sync_io_names), name);
}

static const char *const sync_method_names[] = {
    [FK_SYNC_TWOPASS] = "twopass",
    [FK_SYNC_FSYNC] = "fsync",
    [FK_SYNC_SYNCFS] = "syncfs",
    [FK_SYNC_AUTO] = "auto",
};
NAMES(sync_method, sync_method_names)

static const char *const copy_method_names[] = {
    [FK_COPY_WRITEBACK] = "writeback",
    [FK_COPY_DELAYED] = "delayed",
    [FK_COPY_FSYNC_EACH] = "fsync-each",
    [FK_COPY_SYNCFS] = "syncfs",
    [FK_COPY_AUTO] = "auto",
};
NAMES(copy_method, copy_method_names)

static const char *const copy_update_names[] = {
    [FK_COPY_UPDATE_ALL] = "all",
    [FK_COPY_UPDATE_NONE] = "none",
    [FK_COPY_UPDATE_OLDER] = "older",
    [FK_COPY_UPDATE_DIFFERENT] = "resume",
};
NAMES(copy_update, copy_update_names)

static const char *const copy_reflink_names[] = {
    [FK_COPY_REFLINK_AUTO] = "auto",
    [FK_COPY_REFLINK_ALWAYS] = "always",
    [FK_COPY_REFLINK_NEVER] = "never",
};
NAMES(copy_reflink, copy_reflink_names)

static const char *const copy_sparse_names[] = {
    [FK_COPY_SPARSE_AUTO] = "auto",
    [FK_COPY_SPARSE_ALWAYS] = "always",
    [FK_COPY_SPARSE_NEVER] = "never",
};
NAMES(copy_sparse, copy_sparse_names)

static const char *const report_level_names[] = {
    [FK_REPORT_WARNING] = "warning",
    [FK_REPORT_ERROR] = "error",
};
NAMES(report_level, report_level_names)

static const char *const wal_sync_method_names[] = {
    [FK_WAL_FDATASYNC] = "fdatasync",
    [FK_WAL_FSYNC] = "fsync",
    [FK_WAL_OPEN_DATASYNC] = "open_datasync",
};
NAMES(wal_sync_method, wal_sync_method_names)

static const char *const store_create_mode_names[] = {
    [FK_STORE_OPEN_EXISTING] = "open-existing",
    [FK_STORE_CREATE_IF_MISSING] = "create-if-missing",
    [FK_STORE_CREATE_NEW] = "create-new",
};
NAMES(store_create_mode, store_create_mode_names)
