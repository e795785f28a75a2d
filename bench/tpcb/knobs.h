/* SPDX-License-Identifier: MIT */
/*
 * knobs.h - bench tpcb's store knobs: one table row per knob,
 * {option, fk_store_opts field, kind, result key}, read by the option
 * parser, --help, the result file's "settings" line, report's labels
 * and bench series' check of --config-a/--config-b.  A new store knob
 * is one row in knobs.c.
 */
#ifndef FK_TPCB_KNOBS_H
#define FK_TPCB_KNOBS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "flushkit.h"

/* How a knob's value is parsed, stored and written. */
enum tpcb_knob_kind {
	KNOB_SIZE,     /* uint64_t bytes; "256kB" ("512MB") in settings */
	KNOB_MS,       /* uint64_t ms; "5min", "30s", "auto" */
	KNOB_FRACTION, /* double in [0, 1] */
	KNOB_BOOL,     /* int 0/1; on|off|true|false|1|0|yes|no */
	KNOB_WAL_SYNC, /* int enum fk_wal_sync_method */
	KNOB_SYNC_IO,  /* int enum fk_sync_io (cli_parse_sync_io) */
	KNOB_WAL_COMPRESSION, /* int enum fk_wal_compression */
	KNOB_FLUSH_WAIT,      /* int enum fk_writeback_wait: off|before|all
			       * ("on", the old boolean's, is all) */
	KNOB_JOBS,	      /* uint32_t 1..FK_FSYNC_BATCH_MAX_QUEUE_DEPTH
			       * (cli_parse_jobs); 0 (unset) is the default */
};

/* When a knob is a top-level member of the "settings" line (every knob
 * is in its "store" object). */
enum tpcb_knob_show {
	KNOB_SHOW_ALWAYS,
	KNOB_SHOW_GIVEN, /* set by the flush preset: only when given, so
			  * runs are labelled "flush=naive", not by each
			  * knob the preset changes */
	KNOB_SHOW_NEVER, /* file layout, not a strategy */
};

struct tpcb_knob {
	const char *option; /* long option, without "--" */
	size_t offset;	    /* of the field in struct fk_store_opts */
	enum tpcb_knob_kind kind;
	const char *key;       /* settings key ("shared_buffers") */
	const char *store_key; /* key in settings' "store" object, in the
				* field's unit ("shared_buffers_bytes") */
	enum tpcb_knob_show show;
	uint64_t min;	     /* KNOB_SIZE: at least; KNOB_MS: at least */
	int page_multiple;   /* KNOB_SIZE: a multiple of FK_PAGE_SIZE */
	const char *metavar; /* "SIZE", "DUR", ... for --help */
	const char *help;
};

/* At most this many rows (bench tpcb keeps a 64-bit mask of the knobs
 * given). */
#define TPCB_MAX_KNOBS 64

extern const struct tpcb_knob tpcb_knobs[];
extern const size_t tpcb_nr_knobs;

/* The row of long option @name (without "--"; "name=value" is cut at
 * '='), or NULL. */
const struct tpcb_knob *tpcb_knob_by_option(const char *name);
/* The row whose settings key is @key, or NULL. */
const struct tpcb_knob *tpcb_knob_by_key(const char *key);

/* Parse @val into @o's field of @k.  Returns 0 or -EINVAL. */
int tpcb_knob_apply(const struct tpcb_knob *k, struct fk_store_opts *o,
		    const char *val);

/* @o's value of @k as the settings line writes it at top level
 * ("256kB", "on", "threads"), and in the "store" object. */
struct json_object *tpcb_knob_json(const struct tpcb_knob *k,
				   const struct fk_store_opts *o);
struct json_object *tpcb_knob_store_json(const struct tpcb_knob *k,
					 const struct fk_store_opts *o);

/* The --help lines of the store knobs. */
void tpcb_knobs_help(FILE *f);

/*
 * Whether @word, one blank-separated word of a bench series
 * configuration (--config-a, --config-b), can be given to bench tpcb:
 * a value (not starting with '-'), one of its short options ("-R",
 * "-R100"), a store knob of the table or another of its long options,
 * spelled in full ("--checkpoint-timeout", "--flush=smooth").  Values
 * are not checked here: bench tpcb itself refuses a bad one, and the
 * series shows the configuration's runs as failed.  Returns 0 or
 * -EINVAL.
 */
int tpcb_option_known(const char *word);
/*
 * The long names of the bench tpcb options @word (a word as for
 * tpcb_option_known) gives, into @names (at most @max): "client" for
 * "-c", "-c4" and "--client=4"; "log" and "client" for the bundle
 * "-lc4"; a short option without a long name ("-j") gives nothing.
 * Returns how many (0 for a value or a word that is no option).
 */
int tpcb_option_names(const char *word, const char **names, int max);

/* The sync_jobs a store with @o uses (its default when 0). */
uint32_t tpcb_sync_jobs(const struct fk_store_opts *o);

#endif
