// SPDX-License-Identifier: MIT
/*
 * test-names.c - the names of the public enums (src/names.c): every
 * value has the name the command, its JSON and the result files print
 * (flushkit sync --method, cp --method/--update/--reflink/--sparse,
 * bench tpcb --wal-sync-method, --sync-io), name and parse are inverse
 * (names.c invariant 2), any other value is "unknown", and any other
 * string, an empty one, a differently cased one or NULL is -EINVAL.
 */
#include "fktest.h"

#include "flushkit.h"

#include <errno.h>

struct table {
	const char *what;
	const char *(*name)(int);
	int (*parse)(const char *);
	const char *names[8]; /* by value, NULL-terminated */
};

static const struct table tables[] = {
    {"sfr_support",
     fk_sfr_support_name,
     fk_sfr_support_parse,
     {"works", "noop", "unsupported"}},
    {"fsync_op",
     fk_fsync_op_name,
     fk_fsync_op_parse,
     {"fsync", "fdatasync", "writeback"}},
    {"sync_io",
     fk_sync_io_name,
     fk_sync_io_parse,
     {"auto", "uring", "threads", "sequential"}},
    {"sync_method",
     fk_sync_method_name,
     fk_sync_method_parse,
     {"twopass", "fsync", "syncfs", "auto"}},
    {"copy_method",
     fk_copy_method_name,
     fk_copy_method_parse,
     {"writeback", "delayed", "fsync-each", "syncfs", "auto"}},
    {"copy_update",
     fk_copy_update_name,
     fk_copy_update_parse,
     {"all", "none", "older", "resume"}},
    {"copy_reflink",
     fk_copy_reflink_name,
     fk_copy_reflink_parse,
     {"auto", "always", "never"}},
    {"copy_sparse",
     fk_copy_sparse_name,
     fk_copy_sparse_parse,
     {"auto", "always", "never"}},
    {"report_level",
     fk_report_level_name,
     fk_report_level_parse,
     {"warning", "error"}},
    {"wal_sync_method",
     fk_wal_sync_method_name,
     fk_wal_sync_method_parse,
     {"fdatasync", "fsync", "open_datasync"}},
    {"store_create_mode",
     fk_store_create_mode_name,
     fk_store_create_mode_parse,
     {"open-existing", "create-if-missing", "create-new"}},
};

/* Each table: value v is names[v], and back. */
static void test_round_trip(void)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		const struct table *tb = &tables[t];
		int n = 0;
		for (; tb->names[n]; n++) {
			const char *got = tb->name(n);
			if (strcmp(got, tb->names[n]))
				fprintf(stderr, "%s %d: '%s' != '%s'\n",
					tb->what, n, got, tb->names[n]);
			CHECK(!strcmp(got, tb->names[n]));
			CHECK_EQ(tb->parse(tb->names[n]), n);
		}
		CHECK(n >= 2);
		/* Out of range on both sides. */
		CHECK(!strcmp(tb->name(n), "unknown"));
		CHECK(!strcmp(tb->name(-1), "unknown"));
		CHECK(!strcmp(tb->name(1000), "unknown"));
		/* Anything else is not a name. */
		CHECK_EQ(tb->parse(NULL), -EINVAL);
		CHECK_EQ(tb->parse(""), -EINVAL);
		CHECK_EQ(tb->parse("unknown"), -EINVAL);
		CHECK_EQ(tb->parse("bogus"), -EINVAL);
	}
}

/* The enum constants the tables are indexed by (a reordered enum or a
 * table entry on the wrong value fails here, not in a JSON field). */
static void test_constants(void)
{
	CHECK(!strcmp(fk_sync_method_name(FK_SYNC_SYNCFS), "syncfs"));
	CHECK_EQ(fk_sync_method_parse("auto"), FK_SYNC_AUTO);
	CHECK_EQ(fk_copy_method_parse("auto"), FK_COPY_AUTO);
	CHECK(!strcmp(fk_copy_method_name(FK_COPY_FSYNC_EACH), "fsync-each"));
	CHECK_EQ(fk_copy_method_parse("delayed"), FK_COPY_DELAYED);
	CHECK_EQ(fk_copy_update_parse("resume"), FK_COPY_UPDATE_DIFFERENT);
	CHECK_EQ(fk_copy_reflink_parse("never"), FK_COPY_REFLINK_NEVER);
	CHECK_EQ(fk_copy_sparse_parse("always"), FK_COPY_SPARSE_ALWAYS);
	CHECK_EQ(fk_wal_sync_method_parse("open_datasync"),
		 FK_WAL_OPEN_DATASYNC);
	CHECK(!strcmp(fk_wal_sync_method_name(FK_WAL_FSYNC), "fsync"));
	CHECK_EQ(fk_store_create_mode_parse("create-new"), FK_STORE_CREATE_NEW);
	CHECK(!strcmp(fk_sfr_support_name(FK_SFR_NOOP), "noop"));
	CHECK(!strcmp(fk_fsync_op_name(FK_FSYNC_OP_WRITEBACK), "writeback"));
	CHECK(!strcmp(fk_report_level_name(FK_REPORT_ERROR), "error"));
	CHECK_EQ(fk_sync_io_parse("sequential"), FK_SYNC_IO_SEQUENTIAL);
}

/* Exact matches only; fk_sync_io_parse's one alias. */
static void test_exact(void)
{
	CHECK_EQ(fk_sync_method_parse("TwoPass"), -EINVAL);
	CHECK_EQ(fk_sync_method_parse("twopass "), -EINVAL);
	CHECK_EQ(fk_copy_method_parse("fsync_each"), -EINVAL);
	CHECK_EQ(fk_wal_sync_method_parse("open-datasync"), -EINVAL);
	CHECK_EQ(fk_sync_io_parse("io_uring"), FK_SYNC_IO_URING);
	CHECK(!strcmp(fk_sync_io_name(FK_SYNC_IO_URING), "uring"));
}

int main(void)
{
	test_round_trip();
	test_constants();
	test_exact();
	return fkt_done();
}
