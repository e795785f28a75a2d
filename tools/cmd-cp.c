// SPDX-License-Identifier: MIT
/*
 * cmd-cp.c - "flushkit cp": copy a tree with cp -a semantics and make the
 * copy durable (fk_tree_copy).
 *
 *   flushkit cp [--method=auto|writeback|delayed|fsync-each|syncfs]
 *               [--flush-after=SIZE] [--drop-cache] [--sync-io=IO]
 *               [--jobs=N] [--summary|--json] [-q] [--progress] SRC DST
 *
 * As cp, nothing on stdout unless asked: a text summary with --summary,
 * one JSON object with --json (whose fields shared with "flushkit sync
 * --json" have the same names and units), 'SRC' -> 'DST' lines with -v;
 * on a terminal one result line on stderr unless -q.  Diagnostics
 * ("flushkit: OP 'PATH': ERROR") and progress go to stderr.  Exit
 * status: 0 ok, 1 failure or usage error (as GNU cp), 3 copied but a directory
 * fsync was not supported (durability degraded).
 */
#include "cli-cp-parents.h"
#include "cli.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flushkit cp [OPTIONS] SRC DST\n"
	    "       flushkit cp [OPTIONS] SRC... DIR\n"
	    "       flushkit cp [OPTIONS] -t DIR SRC...\n"
	    "\n"
	    "Copy SRC to DST like 'cp -a' (DST/basename(SRC) if DST is an\n"
	    "existing directory; several sources go into DIR) and make the\n"
	    "copy durable: every file and directory fsynced, files before\n"
	    "their directory, the parent of the copy last.\n"
	    "\n"
	    "cp options:\n"
	    "  -a, --archive      accepted: what the copy always does (so are\n"
	    "                     -R, -r, --recursive, -p, -d, -P,\n"
	    "                     --no-dereference, --preserve[=LIST])\n"
	    "  -f, --force        a destination symlink loop is replaced\n"
	    "                     (without -f: an error, as cp)\n"
	    "  --remove-destination  a destination symlink, or another hard\n"
	    "                     link of the source, is replaced (without\n"
	    "                     it: refused as the same file, or as a\n"
	    "                     dangling symlink), a FIFO or device too\n"
	    "                     (without it: written into, as cp)\n"
	    "  -t, --target-directory=DIR  copy every SRC into DIR\n"
	    "  -T, --no-target-directory   DST is the copy, even if it is\n"
	    "                     an existing directory\n"
	    "  -n, --no-clobber   leave existing destination files as they "
	    "are\n"
	    "  -u                 --update=older\n"
	    "  --update[=WHEN]    replace existing destination files: all,\n"
	    "                     none, older (only if older than the\n"
	    "                     source; the default of --update)\n"
	    "  -v, --verbose      print 'SRC' -> 'DST' for each entry created\n"
	    "  -b, --backup[=CONTROL]  back up each existing destination\n"
	    "                     file first (renamed, made durable): none,\n"
	    "                     simple, numbered, existing (default, or\n"
	    "                     $VERSION_CONTROL)\n"
	    "  -S, --suffix=SUFFIX  simple backups' suffix (default ~, or\n"
	    "                     $SIMPLE_BACKUP_SUFFIX)\n"
	    "  -i, --interactive  ask before replacing (the last of -i, -n\n"
	    "                     counts)\n"
	    "  -l, --link         hard-link files instead of copying\n"
	    "  -s, --symbolic-link  make symlinks to the sources instead\n"
	    "  -L, --dereference  follow every symlink of the source\n"
	    "  -H                 follow symlinks given as SRC\n"
	    "  --parents          copy SRC to DIR/SRC, making its directories\n"
	    "  --copy-contents    read FIFOs and devices into regular files\n"
	    "  --attributes-only  copy attributes, not data\n"
	    "  --no-preserve=LIST  leave out mode, ownership, timestamps,\n"
	    "                     links, xattr, context or all\n"
	    "  --strip-trailing-slashes  remove trailing slashes from each\n"
	    "                     SRC (a symlink's name, not its directory)\n"
	    "  -x, --one-file-system  copy mount points, not what is\n"
	    "                     mounted on them\n"
	    "  --reflink[=WHEN]   auto (default: FICLONE where the file\n"
	    "                     systems allow, else copy_file_range),\n"
	    "                     always (clone or fail), never (read/write)\n"
	    "  --sparse=WHEN      auto (default: holes stay holes, data\n"
	    "                     stays data), always (all-zero 4 KiB\n"
	    "                     blocks become holes too), never (holes\n"
	    "                     written as zeros)\n"
	    "\n"
	    "resume:\n"
	    "  --resume           leave destination files whose size and\n"
	    "                     mtime equal the source's; copy the rest,\n"
	    "                     then make the whole copy durable\n"
	    "  --checksum         with --resume: compare content, not mtime\n"
	    "\n"
	    "durability options:\n"
	    "  --method=METHOD    how the copy is made durable:\n"
	    "                     auto        measure (default): syncfs of "
	    "the\n"
	    "                                 destination, then each file's\n"
	    "                                 own writeback error, when the\n"
	    "                                 copy is most dirty data; else\n"
	    "                                 as delayed\n"
	    "                     writeback   start writeback while copying,\n"
	    "                                 fsync everything at the end\n"
	    "                     delayed     fsync everything at the end\n"
	    "                     fsync-each  fsync each file right after "
	    "writing it\n"
	    "                     syncfs      syncfs(2) of each file system "
	    "written\n"
	    "  --flush-after=SIZE writeback hint threshold (default 256KiB)\n"
	    "  --drop-cache       drop copied pages from the page cache\n"
	    "                     (POSIX_FADV_DONTNEED) once they are clean\n"
	    "  --sync-io=IO       how writeback/delayed issue the final "
	    "fsyncs:\n"
	    "                     auto (default), uring, threads, sequential\n"
	    "  --jobs=N           fsyncs in flight at most (default 32, "
	    "1..4096)\n"
	    "  --summary          print a summary of the copy on stdout\n"
	    "                     (by default, as cp, nothing; on a terminal\n"
	    "                     one result line on stderr)\n"
	    "  -q, --quiet        no result line, no progress unless\n"
	    "                     --progress\n"
	    "  --json             print the summary as one JSON object\n"
	    "  --progress         show progress on stderr even if not a "
	    "terminal\n"
	    "                     (then one line a second at most)\n"
	    "  --help             show this help\n"
	    "\n"
	    "exit status: 0 ok, 1 failure, 2 usage, 3 durability degraded\n"
	    "(a directory fsync was not supported by the file system)\n");
}

/*
 * cp's messages: "flushkit cp: MESSAGE" on stderr, the text after the
 * prefix in GNU cp's words where it has them (a peer harness may read
 * "flushkit cp: " as cp's program name, "cp: ").  A usage error adds
 * "Try 'flushkit cp --help' for more information." and returns exit 1, as GNU
 * cp (cli_usage_status).
 */
static void cp_vmsg(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "flushkit cp: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void cp_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void cp_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cp_vmsg("", fmt, ap);
	va_end(ap);
}

static void cp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cp_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cp_vmsg("warning: ", fmt, ap);
	va_end(ap);
}

static int cp_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int cp_usage(const char *fmt, ...)
{
	va_list ap;
	if (fmt) {
		va_start(ap, fmt);
		cp_vmsg("", fmt, ap);
		va_end(ap);
	}
	return cli_usage_try("cp"); /* 1, as GNU cp */
}

/* The one source of a "cp SRC DST" (NULL with several), for GNU's
 * "cannot overwrite non-directory 'DST' with directory 'SRC'". */
static const char *cp_one_src;

/* The copy's fk_report_fn: "flushkit cp: OP 'PATH': ERROR" (GNU's
 * "cannot stat" for a stat), kept for --json's error_list; two
 * refusals in GNU cp's own form, without an errno. */
static void cp_report(void *arg, int level, const char *op, const char *path,
		      int err)
{
	static const char relative[] =
	    "can make relative symbolic links only in current directory";
	char *q = path ? cli_path_quote(path) : NULL;
	if (!strcmp(op, "stat"))
		op = "cannot stat";
	if (!strcmp(op, relative))
		fprintf(stderr, "flushkit cp: %s: %s\n", q ? q : "?", op);
	else if (!strcmp(op, "cannot overwrite non-directory") && cp_one_src) {
		char *qs = cli_path_quote(cp_one_src);
		fprintf(stderr, "flushkit cp: %s '%s' with directory '%s'\n",
			op, q ? q : "?", qs ? qs : "?");
		free(qs);
	} else
		fprintf(stderr, "flushkit cp: %s%s '%s': %s\n",
			level == FK_REPORT_WARNING ? "warning: " : "", op,
			q ? q : "?", fk_strerror(err));
	free(q);
	cli_tree_keep_error(arg, level, op, path, err);
}

/* cp's refusals (enum fk_copy_refusal), in GNU cp's words. */
static void cp_refused(void *arg, int refusal, const char *op, const char *src,
		       const char *dst, int err)
{
	char *qs = cli_path_quote(src), *qd = cli_path_quote(dst);
	const char *s = qs ? qs : "?", *d = qd ? qd : "?";
	switch (refusal) {
	case FK_COPY_REFUSED_SAME_FILE:
		cp_error("'%s' and '%s' are the same file", s, d);
		break;
	case FK_COPY_REFUSED_DANGLING:
		cp_error("not writing through dangling symlink '%s'", d);
		break;
	case FK_COPY_REFUSED_JUST_CREATED_SYMLINK:
		cp_error("will not copy '%s' through just-created symlink '%s'",
			 s, d);
		break;
	case FK_COPY_REFUSED_JUST_CREATED:
		cp_error("will not overwrite just-created '%s' with '%s'", d,
			 s);
		break;
	case FK_COPY_REFUSED_BACKUP_IS_SOURCE:
		cp_error("backing up '%s' might destroy source;  '%s' not "
			 "copied",
			 d, s);
		break;
	case FK_COPY_REFUSED_LINK:
	case FK_COPY_REFUSED_SYMLINK:
		cp_error("cannot create %s '%s' to '%s': %s",
			 refusal == FK_COPY_REFUSED_LINK ? "hard link"
							 : "symbolic link",
			 d, s, fk_strerror(err));
		break;
	case FK_COPY_REFUSED_INTO_SELF:
		cp_error("cannot copy a directory, '%s', into itself, '%s'", s,
			 d);
		break;
	default:
		cp_error("%s '%s': %s", op, d, fk_strerror(err));
	}
	free(qs);
	free(qd);
	cli_tree_keep_error(arg, FK_REPORT_ERROR, op, dst, err);
}

struct progress_state {
	int tty;
	int shown;
	uint64_t last_ns; /* the last line, on a pipe */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Called at most every 100 ms, during the copy and the durability
 * phase; on a pipe (a log), one line a second at most. */
static void show_progress(void *arg, const struct fk_tree_stats *st)
{
	struct progress_state *p = arg;
	uint64_t now = now_ns();
	if (!p->tty && p->last_ns && now - p->last_ns < 1000000000ull)
		return;
	p->last_ns = now;
	char b[32];
	double elapsed_s = (double)st->walk_ns / 1e9;
	double rate =
	    elapsed_s > 0 ? (double)st->bytes / elapsed_s / (1 << 20) : 0;
	fprintf(stderr,
		"%scopied %llu files, %llu dirs, %s, %.1f MiB/s; fsync %llu "
		"files, %llu dirs%s",
		p->tty ? "\r" : "", (unsigned long long)st->files,
		(unsigned long long)st->dirs,
		cli_human_bytes(st->bytes, b, sizeof(b)), rate,
		(unsigned long long)st->fsync_calls,
		(unsigned long long)st->dir_fsync_calls,
		p->tty ? "\033[K" : "\n");
	p->shown = 1;
}

static void print_json(const char *src, char **srcs, int nr_src,
		       const char *dst, const struct fk_tree_opts *opt,
		       const struct fk_tree_stats *st, int r, int exit_code,
		       struct cli_tree_errors *errs)
{
	struct json_object *o = json_object_new_object();
#define ADD_U64(name, v)                                                       \
	json_object_object_add(o, name, json_object_new_uint64(v))
	json_object_object_add(o, "command", json_object_new_string("cp"));
	/* JSON strings are UTF-8; file names need not be. */
	char *u_src = src ? cli_path_utf8(src) : NULL,
	     *u_dst = cli_path_utf8(dst);
	json_object_object_add(
	    o, "src", src ? json_object_new_string(u_src ? u_src : "?") : NULL);
	struct json_object *list = json_object_new_array();
	for (int i = 0; i < nr_src; i++) {
		char *u = cli_path_utf8(srcs[i]);
		json_object_array_add(list,
				      json_object_new_string(u ? u : "?"));
		free(u);
	}
	json_object_object_add(o, "sources", list);
	json_object_object_add(o, "dst",
			       json_object_new_string(u_dst ? u_dst : "?"));
	free(u_src);
	free(u_dst);
	json_object_object_add(
	    o, "method",
	    json_object_new_string(fk_copy_method_name(opt->copy_method)));
	json_object_object_add(o, "drop_cache",
			       json_object_new_boolean(opt->drop_cache));
	json_object_object_add(
	    o, "update",
	    json_object_new_string(fk_copy_update_name(opt->update)));
	json_object_object_add(
	    o, "checksum",
	    json_object_new_boolean(opt->copy_flags & FK_COPY_CHECKSUM));
	json_object_object_add(
	    o, "reflink",
	    json_object_new_string(fk_copy_reflink_name(opt->reflink)));
	json_object_object_add(o, "sync_io",
			       json_object_new_string(cli_tree_sync_io(st)));
	ADD_U64("sync_jobs", st->sync_jobs);
	ADD_U64("files", st->files);
	ADD_U64("dirs", st->dirs);
	ADD_U64("symlinks", st->symlinks);
	ADD_U64("specials", st->specials);
	ADD_U64("hardlinks", st->hardlinks);
	ADD_U64("bytes", st->bytes);
	ADD_U64("skipped", st->skipped);
	ADD_U64("skipped_bytes", st->skipped_bytes);
	ADD_U64("reflinks", st->reflinks);
	ADD_U64("vanished", st->vanished);
	ADD_U64("errors", st->errors);
	ADD_U64("warnings", st->warnings);
	ADD_U64("fsync_calls", st->fsync_calls);
	ADD_U64("dir_fsync_calls", st->dir_fsync_calls);
	ADD_U64("syncfs_calls", st->syncfs_calls);
	ADD_U64("writeback_ranges", st->writeback_ranges);
	ADD_U64("writeback_bytes", st->writeback_bytes);
	json_object_object_add(o, "copy_s", cli_json_secs(st->walk_ns));
	json_object_object_add(o, "fsync_s", cli_json_secs(st->fsync_ns));
	json_object_object_add(o, "total_s", cli_json_secs(st->total_ns));
	json_object_object_add(o, "degraded",
			       json_object_new_boolean(st->degraded));
	json_object_object_add(
	    o, "result", json_object_new_string(cli_tree_result(exit_code)));
	json_object_object_add(o, "error",
			       r < 0 && r != -FK_EDEGRADED
				   ? json_object_new_string(fk_strerror(r))
				   : NULL);
	cli_tree_json_errors(o, errs);
	json_object_object_add(o, "exit", json_object_new_int(exit_code));
#undef ADD_U64
	results_json_print(o);
	json_object_put(o);
}

/* "1 file", "2 files": @one for a count of 1, else @many. */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void print_text(const char *src, int nr_src, const char *dst,
		       const struct fk_tree_opts *opt,
		       const struct fk_tree_stats *st, int exit_code)
{
	char b1[32], b2[32];
	char *q_src = src ? cli_path_quote(src) : NULL,
	     *q_dst = cli_path_quote(dst);
	if (src)
		printf("flushkit cp '%s' -> '%s': ", q_src ? q_src : "?",
		       q_dst ? q_dst : "?");
	else
		printf("flushkit cp %d sources -> '%s': ", nr_src,
		       q_dst ? q_dst : "?");
	printf("%s (method %s%s)\n", cli_tree_result(exit_code),
	       fk_copy_method_name(opt->copy_method),
	       opt->drop_cache ? ", drop-cache" : "");
	free(q_src);
	free(q_dst);
	printf("  files         %llu\n", (unsigned long long)st->files);
	printf("  directories   %llu\n", (unsigned long long)st->dirs);
	printf("  symlinks      %llu\n", (unsigned long long)st->symlinks);
	printf("  specials      %llu\n", (unsigned long long)st->specials);
	printf("  hard links    %llu\n", (unsigned long long)st->hardlinks);
	printf("  bytes         %llu (%s)\n", (unsigned long long)st->bytes,
	       cli_human_bytes(st->bytes, b1, sizeof(b1)));
	if (st->reflinks)
		printf("  cloned        %llu %s (FICLONE: extents shared "
		       "with the source)\n",
		       (unsigned long long)st->reflinks,
		       plural(st->reflinks, "file", "files"));
	if (opt->update != FK_COPY_UPDATE_ALL)
		printf("  left as were  %llu %s, %s (--update=%s)\n",
		       (unsigned long long)st->skipped,
		       plural(st->skipped, "entry", "entries"),
		       cli_human_bytes(st->skipped_bytes, b2, sizeof(b2)),
		       fk_copy_update_name(opt->update));
	if (st->vanished)
		printf("  vanished      %llu\n",
		       (unsigned long long)st->vanished);
	printf("  errors        %llu\n", (unsigned long long)st->errors);
	/* Each file and directory is fsynced twice: its data (a directory:
	 * its entries), then its times (set only once those are durable). */
	if (opt->copy_method == FK_COPY_SYNCFS || st->syncfs_calls)
		printf("  syncfs        %llu %s (data, then times), "
		       "%llu directory %s\n",
		       (unsigned long long)st->syncfs_calls,
		       plural(st->syncfs_calls, "call", "calls"),
		       (unsigned long long)st->dir_fsync_calls,
		       plural(st->dir_fsync_calls, "fsync", "fsyncs"));
	else
		printf("  fsync         %llu %s, %llu %s (each "
		       "twice: contents, then times)\n",
		       (unsigned long long)st->fsync_calls,
		       plural(st->fsync_calls, "file", "files"),
		       (unsigned long long)st->dir_fsync_calls,
		       plural(st->dir_fsync_calls, "directory", "directories"));
	if (st->sync_io)
		printf("  sync io       %s, %u in flight at most\n",
		       cli_tree_sync_io(st), st->sync_jobs);
	printf("  writeback     %llu ranges, %s\n",
	       (unsigned long long)st->writeback_ranges,
	       cli_human_bytes(st->writeback_bytes, b2, sizeof(b2)));
	printf("  time          copy %.3f s, fsync %.3f s, total %.3f s\n",
	       cli_secs(st->walk_ns), cli_secs(st->fsync_ns),
	       cli_secs(st->total_ns));
	if (st->degraded)
		printf("  durability    DEGRADED: a directory fsync was not "
		       "supported\n");
}

/* cp -v's output and the backup the next line names (-b). */
struct verbose {
	FILE *f;
	char *backup_dst, *backup; /* the last backup made, or NULL */
};

/* cp -v -b: remember the backup of @dst for its "'SRC' -> 'DST'" line. */
static void note_backup(void *arg, const char *dst, const char *backup)
{
	struct verbose *v = arg;
	free(v->backup_dst);
	free(v->backup);
	v->backup_dst = strdup(dst);
	v->backup = strdup(backup);
}

/* cp -v: one line per entry created, "'SRC' -> 'DST'", and as cp's
 * " (backup: 'B')" when DST's old entry was backed up to B. */
static void show_copied(void *arg, const char *src, const char *dst)
{
	struct verbose *v = arg;
	char *q_src = cli_path_quote(src), *q_dst = cli_path_quote(dst);
	fprintf(v->f, "'%s' -> '%s'", q_src ? q_src : "?", q_dst ? q_dst : "?");
	if (v->backup_dst && v->backup && !strcmp(v->backup_dst, dst)) {
		char *q_b = cli_path_quote(v->backup);
		fprintf(v->f, " (backup: '%s')", q_b ? q_b : "?");
		free(q_b);
	}
	fputc('\n', v->f);
	free(v->backup_dst);
	free(v->backup);
	v->backup_dst = v->backup = NULL;
	free(q_src);
	free(q_dst);
}

/* The attributes --preserve=LIST and --no-preserve=LIST name, as the
 * FK_COPY_NO_* flags that leave them out ("context": the SELinux label,
 * an xattr here, copied with them; "all": every one).  Returns the
 * flags of @list, comma-separated, or -1 if a word is none of them. */
static int attr_list(const char *list)
{
	static const struct {
		const char *name;
		unsigned flags;
	} attrs[] = {
	    {"mode", FK_COPY_NO_MODE},
	    {"ownership", FK_COPY_NO_OWNER},
	    {"timestamps", FK_COPY_NO_TIMES},
	    {"links", FK_COPY_NO_LINKS},
	    {"xattr", FK_COPY_NO_XATTR},
	    {"context", 0},
	    {"all", FK_COPY_NO_MODE | FK_COPY_NO_OWNER | FK_COPY_NO_TIMES |
			FK_COPY_NO_LINKS | FK_COPY_NO_XATTR},
	};
	char *copy = strdup(list), *save = NULL;
	int bad = !copy || !*list, flags = 0;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !bad;
	     t = strtok_r(NULL, ",", &save)) {
		bad = 1;
		for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
			if (!strcmp(t, attrs[i].name)) {
				bad = 0;
				flags |= (int)attrs[i].flags;
			}
	}
	free(copy);
	return bad ? -1 : flags;
}

/*
 * --backup=CONTROL, as cp's (an unambiguous prefix will do): none or
 * off, simple or never, existing or nil, numbered or t.  NULL:
 * $VERSION_CONTROL, else existing.  Returns the enum fk_copy_backup
 * value, or -1 (-2: ambiguous).
 */
static int backup_parse(const char *word)
{
	static const struct {
		const char *name;
		int backup;
	} controls[] = {
	    {"none", FK_COPY_BACKUP_NONE},
	    {"off", FK_COPY_BACKUP_NONE},
	    {"simple", FK_COPY_BACKUP_SIMPLE},
	    {"never", FK_COPY_BACKUP_SIMPLE},
	    {"existing", FK_COPY_BACKUP_EXISTING},
	    {"nil", FK_COPY_BACKUP_EXISTING},
	    {"numbered", FK_COPY_BACKUP_NUMBERED},
	    {"t", FK_COPY_BACKUP_NUMBERED},
	};
	if (!word)
		word = getenv("VERSION_CONTROL");
	if (!word || !*word)
		return FK_COPY_BACKUP_EXISTING;
	int found = -1;
	size_t n = strlen(word);
	for (size_t i = 0; i < sizeof(controls) / sizeof(controls[0]); i++) {
		if (!strcmp(word, controls[i].name))
			return controls[i].backup;
		if (!strncmp(word, controls[i].name, n)) {
			if (found >= 0 && found != controls[i].backup)
				return -2;
			found = controls[i].backup;
		}
	}
	return found;
}

/* cp -i: "flushkit cp: overwrite 'DST'? " on stderr, a line from stdin;
 * yes if it starts with y or Y (the C locale's yesexpr). */
static int ask_overwrite(void *arg, const char *src, const char *dst)
{
	(void)arg;
	(void)src;
	char *q = cli_path_quote(dst);
	fprintf(stderr, "flushkit cp: overwrite '%s'? ", q ? q : "?");
	fflush(stderr);
	free(q);
	int c = getchar(), yes = c == 'y' || c == 'Y';
	while (c != EOF && c != '\n')
		c = getchar();
	return yes;
}

enum {
	OPT_METHOD = 256,
	OPT_FLUSH_AFTER,
	OPT_DROP_CACHE,
	OPT_JSON,
	OPT_PROGRESS,
	OPT_SYNC_IO,
	OPT_JOBS,
	OPT_UPDATE,
	OPT_RESUME,
	OPT_CHECKSUM,
	OPT_REFLINK,
	OPT_SPARSE,
	OPT_PRESERVE,
	OPT_NO_PRESERVE,
	OPT_REMOVE_DEST,
	OPT_SUMMARY,
	OPT_STRIP_SLASHES,
	OPT_BACKUP,
	OPT_PARENTS,
	OPT_COPY_CONTENTS,
	OPT_ATTR_ONLY,
};

/*
 * The directory entry @path names, as (parent directory, last
 * component): the component (trailing slashes ignored) into @base, of
 * @len bytes, the parent's stat into @dir.  Returns 0, or -1 if it
 * cannot be told (too long, the parent cannot be stat'ed).
 */
static int dir_entry_of(const char *path, struct stat *dir, char *base,
			size_t len)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && path[b - 1] != '/')
		b--;
	if (n - b >= len)
		return -1;
	memcpy(base, path + b, n - b);
	base[n - b] = 0;
	char *parent = b == 0 ? strdup(".") : strndup(path, b == 1 ? 1 : b - 1);
	if (!parent)
		return -1;
	int r = stat(parent, dir);
	free(parent);
	return r < 0 ? -1 : 0;
}

/* Whether sources @a and @b name the same directory entry: the same
 * last component in the same directory ("x" and "./x"), as coreutils'
 * same_name; two hard links of one file are two entries. */
static int same_entry(const char *a, const char *b)
{
	struct stat da, db;
	char ba[NAME_MAX + 1], bb[NAME_MAX + 1];
	return !dir_entry_of(a, &da, ba, sizeof(ba)) &&
	       !dir_entry_of(b, &db, bb, sizeof(bb)) && !strcmp(ba, bb) &&
	       da.st_dev == db.st_dev && da.st_ino == db.st_ino;
}

/* Whether source @i is an earlier source given again (cp -a's "specified
 * more than once"): the same inode (lstat: never followed, as cp -a), a
 * directory ("d", "./d/"), or a non-directory by the same directory
 * entry ("x", "./x"; another hard link of it is another source, copied
 * and linked). */
static int source_seen(char **ops, int i)
{
	struct stat a, b;
	if (lstat(ops[i], &a))
		return 0;
	for (int j = 0; j < i; j++)
		if (!lstat(ops[j], &b) && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino &&
		    (S_ISDIR(a.st_mode) || same_entry(ops[i], ops[j])))
			return 1;
	return 0;
}

/*
 * --resume SRC DST, SRC a directory, DST an existing directory without
 * DST/basename(SRC): cp's rule would start a new copy inside DST
 * (DST/SRC), while the copy to resume is most likely DST itself (the
 * first run created it).  Never nest silently: refuse, with the command
 * that resumes DST (-T) and the one that copies into it anew (without
 * --resume).  Returns 1 (refused, said) or 0.
 */
static int resume_would_nest(const char *src, const char *dst)
{
	struct stat ss, ds, ns;
	if (stat(src, &ss) < 0 || !S_ISDIR(ss.st_mode) || stat(dst, &ds) < 0 ||
	    !S_ISDIR(ds.st_mode))
		return 0;
	size_t n = strlen(src);
	while (n > 1 && src[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && src[b - 1] != '/')
		b--;
	if (n == b || (n - b == 1 && src[b] == '.') ||
	    (n - b == 2 && !strncmp(src + b, "..", 2)) || src[b] == '/')
		return 0; /* ".", "..", "/": the contents go into DST */
	size_t dl = strlen(dst);
	char *nested = malloc(dl + (n - b) + 2);
	if (!nested)
		return 0;
	sprintf(nested, "%s%s%.*s", dst, dl && dst[dl - 1] == '/' ? "" : "/",
		(int)(n - b), src + b);
	int missing = lstat(nested, &ns) < 0 && errno == ENOENT;
	if (missing) {
		char *qs = cli_path_quote(src), *qd = cli_path_quote(dst),
		     *qn = cli_path_quote(nested);
		cp_error("--resume: nothing to resume at '%s'; '%s' is a "
			 "directory, so this would start a new copy inside "
			 "it. To resume the copy that is '%s': flushkit cp "
			 "--resume -T '%s' '%s'; to copy into it anew: "
			 "flushkit cp '%s' '%s'",
			 qn ? qn : "?", qd ? qd : "?", qd ? qd : "?",
			 qs ? qs : "?", qd ? qd : "?", qs ? qs : "?",
			 qd ? qd : "?");
		free(qs);
		free(qd);
		free(qn);
	}
	free(nested);
	return missing;
}

/*
 * With POSIXLY_CORRECT, the name a dangling symlink @dst points to when
 * @src is a regular file (relative targets from @dst's directory), as
 * malloc'ed string; else a malloc'ed copy of @dst.
 */
static char *posix_through_dangling(const char *src, const char *dst)
{
	struct stat ss, ds;
	char target[PATH_MAX];
	ssize_t n;
	if (stat(src, &ss) < 0 || !S_ISREG(ss.st_mode) || lstat(dst, &ds) < 0 ||
	    !S_ISLNK(ds.st_mode) || stat(dst, &ds) == 0 || errno != ENOENT ||
	    (n = readlink(dst, target, sizeof(target) - 1)) <= 0)
		return strdup(dst);
	target[n] = 0;
	const char *slash = strrchr(dst, '/');
	if (target[0] == '/' || !slash)
		return strdup(target);
	size_t dl = (size_t)(slash - dst) + 1;
	char *p = malloc(dl + (size_t)n + 1);
	if (p) {
		memcpy(p, dst, dl);
		memcpy(p + dl, target, (size_t)n + 1);
	}
	return p;
}

/* The name cp -f --backup F F copies F to: F's backup name (in F's
 * directory), malloc'ed; NULL if F is no regular file or on error. */
static char *backup_of(const char *path, int backup, const char *suffix)
{
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return NULL;
	const char *slash = strrchr(path, '/');
	char *dir =
	    slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
		  : strdup(".");
	const char *base = slash ? slash + 1 : path;
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	char *name = NULL, *full = NULL;
	int numbered;
	if (dfd >= 0 && *base &&
	    fk_copy_backup_name(dfd, base, backup, suffix, &name, &numbered) ==
		0) {
		size_t n = strlen(dir) + strlen(name) + 2;
		full = malloc(n);
		if (full)
			snprintf(full, n, "%s/%s", dir, name);
	}
	if (dfd >= 0)
		close(dfd);
	free(dir);
	free(name);
	return full;
}

/*
 * cp --parents SRC... DIR: each SRC copied to DIR/SRC (-T), the
 * directories of its path made in DIR before and given their source's
 * attributes and fsynced after (cli-cp-parents.c).  Each source is a
 * copy of its own: hard links between two sources are not kept.
 * Returns the first error, as fk_tree_copy_sources.
 */
static int copy_parents(const char **srcs, size_t nr, const char *dir,
			const struct fk_tree_opts *o, struct fk_tree_stats *sum,
			int verbose)
{
	struct fk_tree_opts one = *o;
	one.copy_flags |= FK_COPY_NO_TARGET_DIR;
	int result = 0;
	for (size_t i = 0; i < nr; i++) {
		static struct cli_cp_parents p;
		struct fk_tree_stats st = {0};
		int r = cli_cp_parents_prepare(&p, srcs[i], dir, verbose);
		char *d = r < 0 ? NULL : cli_cp_parents_dst(&p);
		if (r < 0 || !d) {
			char *q = cli_path_quote(srcs[i]);
			cp_error("cannot stat '%s': %s", q ? q : "?",
				 strerror(r < 0 ? -r : ENOMEM));
			free(q);
			sum->errors++;
			if (!result)
				result = r < 0 ? r : -ENOMEM;
			if (p.made)
				cli_cp_parents_finish(&p, o->copy_flags);
			continue;
		}
		r = fk_tree_copy(srcs[i], d, &one, &st);
		free(d);
		fk_tree_stats_add(sum,
				  &st); /* --parents: each source on its own */
		int fr = cli_cp_parents_finish(&p, o->copy_flags);
		if (fr < 0)
			sum->errors++;
		if (r < 0 && r != -FK_EDEGRADED && !result)
			result = r;
		if (fr < 0 && !result)
			result = fr;
		if (r == -FK_EDEGRADED && !result)
			result = r;
	}
	return result;
}

int cmd_cp(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"method", required_argument, NULL, OPT_METHOD},
	    {"flush-after", required_argument, NULL, OPT_FLUSH_AFTER},
	    {"drop-cache", no_argument, NULL, OPT_DROP_CACHE},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"summary", no_argument, NULL, OPT_SUMMARY},
	    {"strip-trailing-slashes", no_argument, NULL, OPT_STRIP_SLASHES},
	    {"backup", optional_argument, NULL, OPT_BACKUP},
	    {"suffix", required_argument, NULL, 'S'},
	    {"dereference", no_argument, NULL, 'L'},
	    {"interactive", no_argument, NULL, 'i'},
	    {"link", no_argument, NULL, 'l'},
	    {"symbolic-link", no_argument, NULL, 's'},
	    {"parents", no_argument, NULL, OPT_PARENTS},
	    {"copy-contents", no_argument, NULL, OPT_COPY_CONTENTS},
	    {"attributes-only", no_argument, NULL, OPT_ATTR_ONLY},
	    {"quiet", no_argument, NULL, 'q'},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"sync-io", required_argument, NULL, OPT_SYNC_IO},
	    {"jobs", required_argument, NULL, OPT_JOBS},
	    {"archive", no_argument, NULL, 'a'},
	    {"recursive", no_argument, NULL, 'R'},
	    {"no-dereference", no_argument, NULL, 'P'},
	    {"force", no_argument, NULL, 'f'},
	    {"remove-destination", no_argument, NULL, OPT_REMOVE_DEST},
	    {"target-directory", required_argument, NULL, 't'},
	    {"no-target-directory", no_argument, NULL, 'T'},
	    {"no-clobber", no_argument, NULL, 'n'},
	    {"update", optional_argument, NULL, OPT_UPDATE},
	    {"resume", no_argument, NULL, OPT_RESUME},
	    {"checksum", no_argument, NULL, OPT_CHECKSUM},
	    {"verbose", no_argument, NULL, 'v'},
	    {"one-file-system", no_argument, NULL, 'x'},
	    {"reflink", optional_argument, NULL, OPT_REFLINK},
	    {"sparse", required_argument, NULL, OPT_SPARSE},
	    {"preserve", optional_argument, NULL, OPT_PRESERVE},
	    {"no-preserve", required_argument, NULL, OPT_NO_PRESERVE},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct fk_tree_opts o;
	int json = 0, summary = 0, quiet = 0, strip_slashes = 0,
	    force_progress = 0, verbose = 0, c;
	int make_backups = 0, interactive = 0, parents = 0;
	const char *backup_control = NULL, *suffix = NULL;
	/* -L, -H, -P (and -a, -d, which imply -P): the last one given */
	unsigned deref = 0;
	const char *target_dir = NULL;
	fk_tree_opts_init(&o);
	o.copy_method = FK_COPY_AUTO;
	struct cli_tree_errors errs = {0};
	o.report = cp_report; /* names quoted: one line each */
	o.report_arg = &errs;
	o.refused = cp_refused;
	o.refused_arg = &errs;

	int parsed; /* a parsed enum value, or -EINVAL */
	optind = 0; /* callable more than once (tests run it in-process) */
	opterr = 0; /* its mistakes: cli_option_error, as every command */
	while ((c = getopt_long(argc, argv, ":aRrPpdfnquvxTt:hbS:HLils",
				longopts, NULL)) != -1) {
		switch (c) {
		case 'a': /* what the copy always does */
		case 'P':
		case 'd':
			deref = 0; /* -a and -d imply -P, as in cp */
			if (c == 'a')
				o.copy_flags &= ~(unsigned)attr_list("all");
			break;
		case 'p':
			o.copy_flags &=
			    ~(unsigned)attr_list("mode,ownership,timestamps");
			break;
		case 'R':
		case 'r':
			break;
		case 'L':
			deref = FK_COPY_DEREF;
			break;
		case 'H':
			deref = FK_COPY_DEREF_ARGS;
			break;
		case 'b':
			make_backups = 1;
			break;
		case OPT_BACKUP:
			make_backups = 1;
			backup_control = optarg;
			break;
		case 'S':
			make_backups = 1;
			suffix = optarg;
			break;
		case 'i': /* cp: the last of -i and -n counts */
			interactive = 1;
			if (o.update == FK_COPY_UPDATE_NONE)
				o.update = FK_COPY_UPDATE_ALL;
			break;
		case 'l':
			o.copy_flags |= FK_COPY_LINK;
			break;
		case 's':
			o.copy_flags |= FK_COPY_SYMLINK;
			break;
		case OPT_PARENTS:
			parents = 1;
			break;
		case OPT_COPY_CONTENTS:
			o.copy_flags |= FK_COPY_CONTENTS;
			break;
		case OPT_ATTR_ONLY:
			o.copy_flags |= FK_COPY_ATTR_ONLY;
			break;
		case 'f': /* a destination symlink loop is replaced */
			o.copy_flags |= FK_COPY_FORCE;
			break;
		case OPT_REMOVE_DEST:
			o.copy_flags |= FK_COPY_REMOVE_DEST;
			break;
		case 't':
			target_dir = optarg;
			break;
		case 'T':
			o.copy_flags |= FK_COPY_NO_TARGET_DIR;
			break;
		case 'n':
			o.update = FK_COPY_UPDATE_NONE;
			interactive = 0;
			break;
		case 'u':
			o.update = FK_COPY_UPDATE_OLDER;
			break;
		case OPT_UPDATE:
			/* "resume" is --resume's name, not an --update. */
			parsed = optarg ? fk_copy_update_parse(optarg)
					: FK_COPY_UPDATE_OLDER;
			if (parsed >= 0 && parsed != FK_COPY_UPDATE_DIFFERENT)
				o.update = parsed;
			else {
				return cp_usage("invalid argument '%s' for "
						"'--update' (all, none or "
						"older)",
						optarg);
			}
			break;
		case OPT_RESUME:
			o.update = FK_COPY_UPDATE_DIFFERENT;
			break;
		case OPT_CHECKSUM:
			o.copy_flags |= FK_COPY_CHECKSUM;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'x':
			o.copy_flags |= FK_COPY_ONE_FS;
			break;
		case OPT_REFLINK:
			parsed = optarg ? fk_copy_reflink_parse(optarg)
					: FK_COPY_REFLINK_ALWAYS;
			if (parsed >= 0)
				o.reflink = parsed;
			else {
				return cp_usage("invalid argument '%s' for "
						"'--reflink' (auto, always or "
						"never)",
						optarg);
			}
			break;
		case OPT_SPARSE:
			parsed = fk_copy_sparse_parse(optarg);
			if (parsed >= 0)
				o.sparse = parsed;
			else {
				return cp_usage("invalid argument '%s' for "
						"'--sparse' (auto, always or "
						"never)",
						optarg);
			}
			break;
		case OPT_PRESERVE:
		case OPT_NO_PRESERVE:
			parsed = attr_list(
			    optarg ? optarg : "mode,ownership,timestamps");
			if (parsed < 0) {
				return cp_usage("invalid attribute '%s' for "
						"'--%spreserve' (mode, "
						"ownership, timestamps, links, "
						"xattr, context, all)",
						optarg,
						c == OPT_PRESERVE ? "" : "no-");
			}
			if (c == OPT_PRESERVE) /* the later one counts */
				o.copy_flags &= ~(unsigned)parsed;
			else
				o.copy_flags |= (unsigned)parsed;
			break;
		case OPT_METHOD:
			parsed = fk_copy_method_parse(optarg);
			if (parsed < 0) {
				return cp_usage("invalid argument '%s' for "
						"'--method' (auto, writeback, "
						"delayed, fsync-each, syncfs)",
						optarg);
			}
			o.copy_method = parsed;
			break;
		case OPT_FLUSH_AFTER:
			if (cli_parse_size(optarg, &o.flush_after_bytes)) {
				return cp_usage("invalid argument '%s' for "
						"'--flush-after' (a size: "
						"256KiB, 1M)",
						optarg);
			}
			break;
		case OPT_DROP_CACHE:
			o.drop_cache = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_SUMMARY:
			summary = 1;
			break;
		case OPT_STRIP_SLASHES:
			strip_slashes = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_PROGRESS:
			force_progress = 1;
			break;
		case OPT_SYNC_IO:
			o.sync_io = cli_parse_sync_io(optarg);
			if (o.sync_io < 0)
				return cli_bad_sync_io("cp", optarg);
			break;
		case OPT_JOBS:
			if (cli_parse_jobs(optarg, &o.sync_jobs))
				return cli_bad_jobs("cp", optarg);
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("cp", c, argv, longopts);
		}
	}
	o.copy_flags |= deref;
	if (make_backups) {
		o.backup = backup_parse(backup_control);
		if (o.backup < 0) {
			/* GNU cp's words (argmatch's), the list of what
			 * is valid on lines of their own, exit 1. */
			cp_error("%s argument '%s' for '%s'",
				 o.backup == -2 ? "ambiguous" : "invalid",
				 backup_control ? backup_control
						: getenv("VERSION_CONTROL"),
				 backup_control ? "backup type"
						: "$VERSION_CONTROL");
			fputs("Valid arguments are:\n"
			      "  - 'none', 'off'\n"
			      "  - 'simple', 'never'\n"
			      "  - 'existing', 'nil'\n"
			      "  - 'numbered', 't'\n",
			      stderr);
			return cp_usage(NULL);
		}
		o.backup_suffix =
		    suffix ? suffix : getenv("SIMPLE_BACKUP_SUFFIX");
	}
	/* Refused combinations: exit 1, as cp (its usage(EXIT_FAILURE)). */
	if (o.backup && o.update == FK_COPY_UPDATE_NONE) {
		cp_usage("options --backup and --no-clobber are mutually "
			 "exclusive");
		return FK_EXIT_FAILURE;
	}
	if ((o.copy_flags & FK_COPY_LINK) && (o.copy_flags & FK_COPY_SYMLINK)) {
		cp_usage("cannot make both hard and symbolic links");
		return FK_EXIT_FAILURE;
	}
	if ((o.copy_flags & (FK_COPY_LINK | FK_COPY_SYMLINK)) &&
	    (o.copy_flags & FK_COPY_ATTR_ONLY)) {
		cp_usage("cannot combine --attributes-only with --link or "
			 "--symbolic-link");
		return FK_EXIT_FAILURE;
	}
	if (interactive) {
		o.overwrite = ask_overwrite;
		o.overwrite_arg = NULL;
	}
	if (o.reflink == FK_COPY_REFLINK_ALWAYS &&
	    o.sparse != FK_COPY_SPARSE_AUTO) {
		/* Refused combinations: exit 1, as cp. */
		cp_error("--reflink=always goes only with --sparse=auto");
		return FK_EXIT_FAILURE;
	}
	if ((o.copy_flags & FK_COPY_CHECKSUM) &&
	    o.update != FK_COPY_UPDATE_DIFFERENT) {
		return cp_usage("--checksum goes with --resume");
	}
	/* The operands, as cp: SRC... DIR, -t DIR SRC..., -T SRC DST. */
	int nr_ops = argc - optind;
	char **ops = argv + optind;
	if (target_dir && (o.copy_flags & FK_COPY_NO_TARGET_DIR)) {
		cp_error("cannot combine --target-directory (-t) and "
			 "--no-target-directory (-T)");
		return FK_EXIT_FAILURE;
	}
	if (nr_ops == 0 || (nr_ops == 1 && !target_dir)) {
		if (nr_ops == 0)
			return cp_usage("missing file operand");
		return cp_usage("missing destination file operand after "
				"'%s'",
				ops[0]);
	}
	if ((o.copy_flags & FK_COPY_NO_TARGET_DIR) && nr_ops > 2) {
		return cp_usage("extra operand '%s'", ops[2]);
	}
	const char *dst = target_dir;
	int nr_src = nr_ops;
	if (!dst) {
		dst = ops[--nr_src];
	}
	/* --strip-trailing-slashes: "link/" names the symlink again, not
	 * the directory it points to. */
	for (int i = 0; strip_slashes && i < nr_src; i++)
		for (size_t n = strlen(ops[i]); n > 1 && ops[i][n - 1] == '/';)
			ops[i][--n] = 0;
	if (parents && !target_dir && nr_src == 1) {
		struct stat ds;
		if (stat(dst, &ds) < 0 || !S_ISDIR(ds.st_mode)) {
			cp_usage("with --parents, the destination must be a "
				 "directory");
			return FK_EXIT_FAILURE;
		}
	}
	/* cp -f --backup F F: as cp, a copy of F at its backup's name, F
	 * left as it is (a backup of F would rename the source). */
	char *backup_dst = NULL;
	if ((o.copy_flags & FK_COPY_FORCE) && o.backup && nr_src == 1 &&
	    !target_dir && !strcmp(ops[0], dst)) {
		backup_dst = backup_of(dst, o.backup, o.backup_suffix);
		if (backup_dst) {
			dst = backup_dst;
			o.backup = FK_COPY_BACKUP_NONE;
		}
	}
	if (target_dir || nr_src > 1) {
		struct stat ds;
		char *q = cli_path_quote(dst);
		errno = 0;
		if (stat(dst, &ds) < 0 || !S_ISDIR(ds.st_mode)) {
			int err = errno;
			if (!target_dir && err == 0)
				cp_error("target '%s' is not a directory",
					 q ? q : "?");
			else
				cp_error("target%s '%s': %s",
					 target_dir ? " directory" : "",
					 q ? q : "?",
					 strerror(err ? err : ENOTDIR));
			free(q);
			free(backup_dst);
			return FK_EXIT_FAILURE;
		}
		free(q);
	}

	/* POSIXLY_CORRECT: cp's historical behaviour, a regular file
	 * copied onto a dangling symlink is written through it, to the
	 * name it points to (made durable there, as any new name). */
	char *through = NULL;
	if (getenv("POSIXLY_CORRECT") && nr_src == 1 && !target_dir)
		dst = through = posix_through_dangling(ops[0], dst);
	if (!dst) {
		cp_error("%s", strerror(ENOMEM));
		return FK_EXIT_FAILURE;
	}

	if (o.update == FK_COPY_UPDATE_DIFFERENT && !target_dir &&
	    !(o.copy_flags & FK_COPY_NO_TARGET_DIR) && nr_src == 1 &&
	    resume_would_nest(ops[0], dst)) {
		free(through);
		return FK_EXIT_FAILURE;
	}

	struct progress_state ps = {.tty = isatty(STDERR_FILENO)};
	if (force_progress || (!quiet && cli_progress_wanted(0))) {
		o.progress = show_progress;
		o.progress_arg = &ps;
	}
	struct verbose vb = {.f = json ? stderr : stdout};
	if (verbose) {
		/* With --json, stdout is the JSON object's. */
		o.copied = show_copied;
		o.copied_arg = &vb;
		if (o.backup) {
			o.backed_up = note_backup;
			o.backed_up_arg = &vb;
		}
	}

	cli_raise_nofile();
	struct fk_tree_stats sum = {0};
	/* All sources in one fk_tree_copy_sources call, so that hard links
	 * between them are kept (one link map, as cp -a); each source's
	 * durability phase ends with the fsync of the target directory.  A
	 * source named twice (the same inode: "x x", "x ./x") is copied
	 * once, with GNU cp's warning (and its exit status, 0). */
	const char **srcs = calloc((size_t)nr_src, sizeof(*srcs));
	if (!srcs) {
		cp_error("%s", strerror(ENOMEM));
		free(through);
		return FK_EXIT_FAILURE;
	}
	size_t nr_copy = 0;
	for (int i = 0; i < nr_src; i++) {
		if (nr_src > 1 && source_seen(ops, i)) {
			struct stat ss;
			char *q = cli_path_quote(ops[i]);
			int dir = !lstat(ops[i], &ss) && S_ISDIR(ss.st_mode);
			cp_warn("source %s '%s' specified more than once",
				dir ? "directory" : "file", q ? q : "?");
			free(q);
			continue;
		}
		srcs[nr_copy++] = ops[i];
	}
	cp_one_src = nr_copy == 1 && !target_dir ? srcs[0] : NULL;
	int r = parents ? copy_parents(srcs, nr_copy, dst, &o, &sum,
				       verbose && !json)
			: fk_tree_copy_sources(srcs, nr_copy, dst, &o, &sum);
	free(srcs);
	free(vb.backup_dst); /* a backup whose copy then failed */
	free(vb.backup);
	if (ps.shown && ps.tty)
		fputc('\n', stderr);

	int exit_code = cli_tree_exit(r);
	const char *src = nr_src == 1 ? ops[0] : NULL;

	/* The result: as GNU cp, nothing on stdout unless asked (--summary,
	 * --json); on a terminal, one line on stderr unless -q. */
	if (json)
		print_json(src, ops, nr_src, dst, &o, &sum, r, exit_code,
			   &errs);
	else if (summary)
		print_text(src, nr_src, dst, &o, &sum, exit_code);
	fflush(stdout);
	int tty_line = !json && !summary && !quiet && isatty(STDERR_FILENO);

	/* One source by its name; several as "N sources" (each failed
	 * one was named in its own error line above). */
	char *q_src = src ? cli_path_quote(src) : NULL,
	     *q_dst = cli_path_quote(dst);
	char what[64 + PATH_MAX];
	if (src)
		snprintf(what, sizeof(what), "'%s'", q_src ? q_src : "?");
	else
		snprintf(what, sizeof(what), "%d sources", nr_src);
	if (tty_line) {
		char b[32];
		fprintf(stderr,
			"flushkit cp %s -> '%s': %s (method %s): %llu %s, "
			"%s",
			what, q_dst ? q_dst : "?", cli_tree_result(exit_code),
			fk_copy_method_name(o.copy_method),
			(unsigned long long)sum.files,
			plural(sum.files, "file", "files"),
			cli_human_bytes(sum.bytes, b, sizeof(b)));
		if (sum.errors)
			fprintf(stderr, ", %llu %s",
				(unsigned long long)sum.errors,
				plural(sum.errors, "error", "errors"));
		fprintf(stderr, ", %.3f s%s\n", cli_secs(sum.total_ns),
			exit_code == FK_EXIT_DEGRADED
			    ? "; durability degraded (directory sync not "
			      "supported)"
			    : "");
	} else if (exit_code == FK_EXIT_FAILURE && (summary || json))
		cp_error("%s to '%s' failed (%llu %s): %s", what,
			 q_dst ? q_dst : "?", (unsigned long long)sum.errors,
			 plural(sum.errors, "error", "errors"), fk_strerror(r));
	else if (exit_code == FK_EXIT_DEGRADED)
		cp_warn("%s to '%s': durability degraded (directory "
			"sync not supported)",
			what, q_dst ? q_dst : "?");
	free(q_src);
	free(q_dst);
	json_object_put(errs.list);
	free(through);
	free(backup_dst);
	return exit_code;
}
