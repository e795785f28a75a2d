// SPDX-License-Identifier: MIT
/*
 * knobs.c - the table of bench tpcb's store knobs (knobs.h) and what
 * reads a row: the value parser, the settings-line writers, the --help
 * lines and the lookups by option and by settings key.
 */
#include "knobs.h"

#include "cli.h"
#include "results.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define F(field) offsetof(struct fk_store_opts, field)

const struct tpcb_knob tpcb_knobs[] = {
    {"shared-buffers", F(shared_buffers_bytes), KNOB_SIZE, "shared_buffers",
     "shared_buffers_bytes", KNOB_SHOW_ALWAYS, 16 * FK_PAGE_SIZE, 0, "SIZE",
     "buffer pool size (at least 16 pages)"},
    {"checkpoint-timeout", F(checkpoint_timeout_ms), KNOB_MS,
     "checkpoint_timeout", "checkpoint_timeout_ms", KNOB_SHOW_ALWAYS, 1, 0,
     "DUR", "time between checkpoints (not 0)"},
    {"max-wal-size", F(max_wal_size_bytes), KNOB_SIZE, "max_wal_size",
     "max_wal_size_bytes", KNOB_SHOW_ALWAYS, 0, 0, "SIZE",
     "WAL that starts a checkpoint"},
    {"checkpoint-completion-target", F(checkpoint_completion_target),
     KNOB_FRACTION, "checkpoint_completion_target",
     "checkpoint_completion_target", KNOB_SHOW_ALWAYS, 0, 0, "F",
     "share of the interval to spread the writes over"},
    {"checkpoint-flush-after", F(checkpoint_flush_after_bytes), KNOB_SIZE,
     "checkpoint_flush_after", "checkpoint_flush_after_bytes", KNOB_SHOW_GIVEN,
     0, 0, "SIZE", "writeback hint every SIZE (0: none)"},
    {"checkpoint-flush-wait", F(checkpoint_flush_wait), KNOB_FLUSH_WAIT,
     "checkpoint_flush_wait", "checkpoint_flush_wait", KNOB_SHOW_GIVEN, 0, 0,
     "off|before|all",
     "hints wait: before = for writeback already under way (the pre-4.4 "
     "kernel's call), all = also for their own writes (default off)"},
    {"checkpoint-sorted", F(checkpoint_sorted), KNOB_BOOL, "checkpoint_sorted",
     "checkpoint_sorted", KNOB_SHOW_GIVEN, 0, 0, "on|off",
     "sort checkpoint writes by file and block"},
    {"checkpoint-sync-spread", F(checkpoint_sync_spread_ms), KNOB_MS,
     "checkpoint_sync_spread", "checkpoint_sync_spread_ms", KNOB_SHOW_GIVEN, 0,
     0, "DUR", "spread the sync phase's fsyncs over DUR"},
    {"fsyncq-compaction", F(fsyncq_compaction), KNOB_BOOL, "fsyncq_compaction",
     "fsyncq_compaction", KNOB_SHOW_GIVEN, 0, 0, "on|off",
     "compact the fsync request queue when full"},
    {"full-page-writes", F(full_page_writes), KNOB_BOOL, "full_page_writes",
     "full_page_writes", KNOB_SHOW_ALWAYS, 0, 0, "on|off",
     "full-page images after each checkpoint"},
    {"wal-sync-method", F(wal_sync_method), KNOB_WAL_SYNC, "wal_sync_method",
     "wal_sync_method", KNOB_SHOW_ALWAYS, 0, 0, "fdatasync|fsync|open_datasync",
     "how a commit makes the WAL durable"},
    {"wal-compression", F(wal_compression), KNOB_WAL_COMPRESSION,
     "wal_compression", "wal_compression", KNOB_SHOW_GIVEN, 0, 0,
     "off|lz4|zstd",
     "compress full-page images in the WAL (default: the preset's)"},
    {"segment-size", F(segment_bytes), KNOB_SIZE, "segment_size",
     "segment_bytes", KNOB_SHOW_NEVER, FK_PAGE_SIZE, 1, "SIZE",
     "table segment file size (a multiple of the page)"},
    {"wal-segment-size", F(wal_segment_bytes), KNOB_SIZE, "wal_segment_size",
     "wal_segment_bytes", KNOB_SHOW_NEVER, 64 * 1024, 0, "SIZE",
     "WAL segment file size (at least 64kB)"},
    {"jobs", F(sync_jobs), KNOB_JOBS, "sync_jobs", "sync_jobs",
     KNOB_SHOW_ALWAYS, 0, 0, "N",
     "checkpoint fsyncs in flight at most (default 32)"},
    {"sync-io", F(sync_io), KNOB_SYNC_IO, "sync_io", "sync_io", KNOB_SHOW_GIVEN,
     0, 0, "auto|uring|threads|sequential",
     "checkpoint fsync backend (default: the preset's)"},
};

const size_t tpcb_nr_knobs = sizeof(tpcb_knobs) / sizeof(tpcb_knobs[0]);
_Static_assert(sizeof(tpcb_knobs) / sizeof(tpcb_knobs[0]) <= TPCB_MAX_KNOBS,
	       "too many knobs for the knobs-given mask");

const struct tpcb_knob *tpcb_knob_by_option(const char *name)
{
	size_t n = strcspn(name, "=");
	for (size_t i = 0; i < tpcb_nr_knobs; i++)
		if (strlen(tpcb_knobs[i].option) == n &&
		    !strncmp(tpcb_knobs[i].option, name, n))
			return &tpcb_knobs[i];
	return NULL;
}

const struct tpcb_knob *tpcb_knob_by_key(const char *key)
{
	for (size_t i = 0; i < tpcb_nr_knobs; i++)
		if (!strcmp(tpcb_knobs[i].key, key))
			return &tpcb_knobs[i];
	return NULL;
}

static void *field(const struct tpcb_knob *k, const struct fk_store_opts *o)
{
	return (char *)o + k->offset;
}

/* enum fk_writeback_wait's names: "off", "before", "all"; "on" (the
 * knob was a boolean, and on meant all) is still taken for all. */
static const char *const flush_wait_names[] = {
    [FK_WRITEBACK_WAIT_NONE] = "off",
    [FK_WRITEBACK_WAIT_ALL] = "all",
    [FK_WRITEBACK_WAIT_BEFORE] = "before",
};

static int flush_wait_parse(const char *s)
{
	for (int i = 0;
	     i < (int)(sizeof(flush_wait_names) / sizeof(flush_wait_names[0]));
	     i++)
		if (!strcmp(s, flush_wait_names[i]))
			return i;
	return strcmp(s, "on") ? -EINVAL : FK_WRITEBACK_WAIT_ALL;
}

static const char *flush_wait_name(int w)
{
	return w >= 0 && w < (int)(sizeof(flush_wait_names) /
				   sizeof(flush_wait_names[0]))
		   ? flush_wait_names[w]
		   : "?";
}

int tpcb_knob_apply(const struct tpcb_knob *k, struct fk_store_opts *o,
		    const char *val)
{
	void *p = field(k, o);
	uint64_t u;
	int b, io;
	if (!val)
		return -EINVAL;
	switch (k->kind) {
	case KNOB_SIZE:
		if (cli_parse_size(val, &u) || u < k->min ||
		    (k->page_multiple && u % FK_PAGE_SIZE))
			return -EINVAL;
		*(uint64_t *)p = u;
		return 0;
	case KNOB_MS:
		if (cli_parse_duration_ms(val, &u) || u < k->min)
			return -EINVAL;
		*(uint64_t *)p = u;
		return 0;
	case KNOB_FRACTION: {
		/* The store's range (fk_store_opts): more than 0, at most
		 * 1; so a value the parser takes never fails the open. */
		double d;
		if (cli_parse_decimal(val, &d) || d <= 0 || d > 1.0)
			return -EINVAL;
		*(double *)p = d;
		return 0;
	}
	case KNOB_BOOL:
		if (cli_parse_bool(val, &b))
			return -EINVAL;
		*(int *)p = b;
		return 0;
	case KNOB_WAL_SYNC:
		if ((io = fk_wal_sync_method_parse(val)) < 0)
			return -EINVAL;
		*(int *)p = io;
		return 0;
	case KNOB_SYNC_IO:
		if ((io = cli_parse_sync_io(val)) < 0)
			return -EINVAL;
		*(int *)p = io;
		return 0;
	case KNOB_WAL_COMPRESSION:
		if ((io = fk_wal_compression_parse(val)) < 0)
			return -EINVAL;
		*(int *)p = io;
		return 0;
	case KNOB_FLUSH_WAIT:
		if ((io = flush_wait_parse(val)) < 0)
			return -EINVAL;
		*(int *)p = io;
		return 0;
	case KNOB_JOBS:
		return cli_parse_jobs(val, (uint32_t *)p);
	}
	return -EINVAL;
}

uint32_t tpcb_sync_jobs(const struct fk_store_opts *o)
{
	return o->sync_jobs ? o->sync_jobs : FK_FSYNC_BATCH_DEFAULT_QUEUE_DEPTH;
}

/* PostgreSQL's units: "512MB", "256kB", "0". */
static const char *size_text(uint64_t b, char *buf, size_t len)
{
	static const struct {
		uint64_t mul;
		const char *unit;
	} u[] = {{1ull << 40, "TB"},
		 {1ull << 30, "GB"},
		 {1ull << 20, "MB"},
		 {1ull << 10, "kB"}};
	for (size_t i = 0; b && i < sizeof(u) / sizeof(u[0]); i++)
		if (b % u[i].mul == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", b / u[i].mul,
				 u[i].unit);
			return buf;
		}
	snprintf(buf, len, "%" PRIu64, b);
	return buf;
}

static const char *ms_text(uint64_t ms, char *buf, size_t len)
{
	if (ms == FK_SYNC_SPREAD_AUTO)
		snprintf(buf, len, "auto");
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%" PRIu64 "min", ms / 60000);
	else if (ms && ms % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", ms);
	return buf;
}

struct json_object *tpcb_knob_json(const struct tpcb_knob *k,
				   const struct fk_store_opts *o)
{
	const void *p = field(k, o);
	char b[64];
	switch (k->kind) {
	case KNOB_SIZE:
		return json_object_new_string(
		    size_text(*(const uint64_t *)p, b, sizeof(b)));
	case KNOB_MS:
		return json_object_new_string(
		    ms_text(*(const uint64_t *)p, b, sizeof(b)));
	case KNOB_FRACTION:
		return results_json_double(*(const double *)p, 3);
	case KNOB_BOOL:
		return json_object_new_string(*(const int *)p ? "on" : "off");
	case KNOB_WAL_SYNC:
		return json_object_new_string(
		    fk_wal_sync_method_name(*(const int *)p));
	case KNOB_SYNC_IO:
		return json_object_new_string(fk_sync_io_name(*(const int *)p));
	case KNOB_WAL_COMPRESSION:
		return json_object_new_string(
		    fk_wal_compression_name(*(const int *)p));
	case KNOB_FLUSH_WAIT:
		return json_object_new_string(flush_wait_name(*(const int *)p));
	case KNOB_JOBS:
		return json_object_new_int64(tpcb_sync_jobs(o));
	}
	return NULL;
}

struct json_object *tpcb_knob_store_json(const struct tpcb_knob *k,
					 const struct fk_store_opts *o)
{
	const void *p = field(k, o);
	switch (k->kind) {
	case KNOB_SIZE:
		return json_object_new_int64((int64_t) * (const uint64_t *)p);
	case KNOB_MS:
		if (*(const uint64_t *)p == FK_SYNC_SPREAD_AUTO)
			return json_object_new_string("auto");
		return json_object_new_int64((int64_t) * (const uint64_t *)p);
	case KNOB_BOOL:
		return json_object_new_boolean(*(const int *)p);
	default:
		return tpcb_knob_json(k, o);
	}
}

void tpcb_knobs_help(FILE *f)
{
	for (size_t i = 0; i < tpcb_nr_knobs; i++) {
		const struct tpcb_knob *k = &tpcb_knobs[i];
		char opt[96];
		snprintf(opt, sizeof(opt), "--%s=%s", k->option, k->metavar);
		if (strlen(opt) <= 24)
			fprintf(f, "      %-24s %s\n", opt, k->help);
		else
			fprintf(f, "      %s\n%31s%s\n", opt, "", k->help);
	}
}
