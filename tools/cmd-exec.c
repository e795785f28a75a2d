// SPDX-License-Identifier: MIT
/*
 * cmd-exec.c - "flushkit exec [OPTIONS] [--] COMMAND [ARGS...]": run a
 * program that cannot be changed (tar, rsync, dd, a backup tool) with
 * libflushkit-preload.so preloaded, so its writes start writeback early
 * and it throttles itself past --max-dirty instead of filling the page
 * cache (src/preload/shim.c; docs/exec.md).
 *
 * The options reach the shim as environment variables (kept by every
 * child that keeps its environment):
 *   LD_PRELOAD            the shim's absolute path, before any others
 *   FLUSHKIT_FLUSH_AFTER  --flush-after in bytes (decimal)
 *   FLUSHKIT_MAX_DIRTY    --max-dirty in bytes, 0 = no bound
 *   FLUSHKIT_DROP_CACHE   1 with --drop-cache, else 0
 *   FLUSHKIT_PACE         --pace in percent, 0 = not paced
 *   FLUSHKIT_SMALL_BUDGET --small-budget in bytes (UINT64_MAX: unlimited)
 *   FLUSHKIT_HINT_IOPRIO  --hint-ioprio as an ioprio_set(2) value, 0 = none
 *   FLUSHKIT_STATS        a file each process appends its counters to
 * Sizes are parsed here, by the tree's one size parser; the shim reads
 * plain byte counts and disables itself (one message) on anything else.
 *
 * COMMAND is found in PATH as execvp(3) would, checked (a statically
 * linked program has no dynamic loader to preload anything; a set-user-
 * or set-group-ID program or one with file capabilities runs in secure
 * mode, where the loader ignores LD_PRELOAD: both are refused, exit 1,
 * unless --force), then run with execv(2) in a child.  A file the kernel
 * cannot execute for its format (ENOEXEC: a text file without "#!") is
 * run as execvp(3) runs it, "/bin/sh PATH ARGS...", so the command
 * behaves as under env(1); no shell otherwise.
 *
 * Exit status: COMMAND's; 128+N if it died of signal N; 2 for a usage
 * error of flushkit exec itself; 126 if COMMAND is found but cannot be
 * run, 127 if it is not found (as env(1)); 1 if it is refused or the
 * shim is missing.
 */
#include "cli.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/ioprio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define DEFAULT_FLUSH_AFTER (1ull << 20)
#define DEFAULT_MAX_DIRTY (8ull << 20)
#define DEFAULT_SMALL_BUDGET UINT64_MAX /* unlimited */
#define PRELOAD_NAME "libflushkit-preload.so"

enum {
	EXIT_CANNOT_RUN = 126,
	EXIT_NOT_FOUND = 127,
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: flushkit exec [OPTIONS] [--] COMMAND [ARGS...]\n"
	    "\n"
	    "Run COMMAND with early writeback of the files it writes: every\n"
	    "--flush-after bytes written to a file start writeback of them\n"
	    "(sync_file_range), and past --max-dirty bytes written but not\n"
	    "yet written back the writing thread waits for its oldest.\n"
	    "A hint, never durability: no fsync is added or removed.\n"
	    "\n"
	    "options:\n"
	    "  --flush-after=SIZE  start writeback every SIZE written to a\n"
	    "                      file (default 1M, at least 4k)\n"
	    "  --max-dirty=SIZE    bound on bytes written and not yet seen\n"
	    "                      written back (default 8M; 0: no bound)\n"
	    "  --pace=PERCENT      hold the writes to PERCENT (1-100) of the\n"
	    "                      writeback bandwidth the process measures\n"
	    "                      (default 0: not paced)\n"
	    "  --small-budget=SIZE small files (closed under 256k) are left\n"
	    "                      to the kernel up to SIZE per 30 s, then\n"
	    "                      hinted at close (default unlimited:\n"
	    "                      never hinted)\n"
	    "  --hint-ioprio=CLASS the shim's own writeback at idle or\n"
	    "                      be[:0-7], COMMAND's other I/O unchanged\n"
	    "  --drop-cache        drop ranges already written back from the\n"
	    "                      page cache (POSIX_FADV_DONTNEED)\n"
	    "  --ioprio=CLASS[:N]  COMMAND's I/O priority: idle, be[:0-7],\n"
	    "                      rt[:0-7] (root); it also applies to the\n"
	    "                      writeback the shim starts (submitted by\n"
	    "                      COMMAND), not to the flusher's\n"
	    "  --stats[=FILE]      at exit, each process's bytes written,\n"
	    "                      hints and waits: to stderr, or FILE (a\n"
	    "                      regular file; a FIFO or device refused)\n"
	    "  --force             run a static program, or one set-user-ID\n"
	    "                      to another user, anyway (the shim cannot\n"
	    "                      act in it)\n"
	    "  --preload=PATH      the shim to preload (default: next to the\n"
	    "                      flushkit binary, then the installed one)\n"
	    "\n"
	    "Exit status: COMMAND's, 128+N if it died of signal N, 126 if it\n"
	    "cannot be run, 127 if not found, 2 for a usage error, 1 if\n"
	    "refused (static, set-user-ID) or the shim is missing.\n");
}

enum {
	OPT_FLUSH_AFTER = 256,
	OPT_MAX_DIRTY,
	OPT_DROP_CACHE,
	OPT_STATS,
	OPT_FORCE,
	OPT_PRELOAD,
	OPT_IOPRIO,
	OPT_PACE,
	OPT_SMALL_BUDGET,
	OPT_HINT_IOPRIO,
};

static const struct option long_opts[] = {
    {"flush-after", required_argument, NULL, OPT_FLUSH_AFTER},
    {"max-dirty", required_argument, NULL, OPT_MAX_DIRTY},
    {"drop-cache", no_argument, NULL, OPT_DROP_CACHE},
    {"stats", optional_argument, NULL, OPT_STATS},
    {"force", no_argument, NULL, OPT_FORCE},
    {"preload", required_argument, NULL, OPT_PRELOAD},
    {"ioprio", required_argument, NULL, OPT_IOPRIO},
    {"pace", required_argument, NULL, OPT_PACE},
    {"small-budget", required_argument, NULL, OPT_SMALL_BUDGET},
    {"hint-ioprio", required_argument, NULL, OPT_HINT_IOPRIO},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/*
 * Parse --ioprio: "idle", "be[:N]" or "rt[:N]" (N 0-7, default 4) into
 * an ioprio_set(2) value.  0 or -EINVAL.
 */
static int parse_ioprio(const char *s, int *value)
{
	int class, level = 4;
	size_t n = strcspn(s, ":");
	if (n == 4 && !strncmp(s, "idle", 4))
		class = IOPRIO_CLASS_IDLE;
	else if (n == 2 && !strncmp(s, "be", 2))
		class = IOPRIO_CLASS_BE;
	else if (n == 2 && !strncmp(s, "rt", 2))
		class = IOPRIO_CLASS_RT;
	else
		return -EINVAL;
	if (s[n]) {
		if (class == IOPRIO_CLASS_IDLE || s[n + 1] < '0' ||
		    s[n + 1] > '7' || s[n + 2])
			return -EINVAL;
		level = s[n + 1] - '0';
	}
	*value =
	    IOPRIO_PRIO_VALUE(class, class == IOPRIO_CLASS_IDLE ? 0 : level);
	return 0;
}

/*
 * Find @name as execvp(3) does: a name with a slash is itself; else the
 * first PATH entry (default "/bin:/usr/bin") where it is an executable
 * regular file.  An empty entry (leading, doubled or trailing ':', or
 * PATH "") is the current directory, and the path is then @name itself,
 * as glibc's (so a script's $0 is "NAME", not "./NAME").  Returns a
 * malloc'ed path, or NULL with *err: -ENOENT (nowhere), -EACCES (found,
 * not executable), -ENOMEM.
 */
static char *find_command(const char *name, int *err)
{
	if (strchr(name, '/')) {
		char *p = strdup(name);
		*err = p ? 0 : -ENOMEM;
		return p;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	int saw_eacces = 0;
	size_t nl = strlen(name);
	for (;;) {
		const char *colon = strchr(path, ':');
		size_t dl = colon ? (size_t)(colon - path) : strlen(path);
		char *cand = malloc(dl + nl + 3);
		if (!cand) {
			*err = -ENOMEM;
			return NULL;
		}
		if (dl == 0)
			snprintf(cand, dl + nl + 3, "%s", name);
		else
			snprintf(cand, dl + nl + 3, "%.*s/%s", (int)dl, path,
				 name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0) {
				*err = 0;
				return cand;
			}
			saw_eacces = 1;
		}
		free(cand);
		if (!colon)
			break;
		path = colon + 1;
	}
	*err = saw_eacces ? -EACCES : -ENOENT;
	return NULL;
}

/*
 * Is @path an ELF program the dynamic loader runs (it has PT_INTERP)?
 * 1 dynamic, 0 static (no PT_INTERP), -1 not an ELF file of this
 * machine's class (a script, or let execv judge it).
 */
static int elf_dynamic(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf64_Ehdr eh;
	int ret = -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	ret = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph)) {
			ret = -1;
			break;
		}
		if (ph.p_type == PT_INTERP) {
			ret = 1;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

/* The interpreter of a "#!" script (malloc'ed), or NULL. */
static char *script_interpreter(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = 0;
	char *p = buf + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strcspn(p, " \t\n");
	if (!len)
		return NULL;
	p[len] = 0;
	return strdup(p);
}

/*
 * Why the shim could not act in @path, or NULL: "statically linked",
 * "set-user-ID", "set-group-ID", "has file capabilities".  A set-ID bit
 * counts only where the exec changes credentials (the file's owner is
 * not our effective user, its group not our effective group): only then
 * does the kernel mark the exec secure (AT_SECURE) and the loader
 * ignore LD_PRELOAD; root running a root-owned set-user-ID program gets
 * the shim (docs/exec.md says so).
 */
static const char *cannot_preload(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return NULL;
	if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
		return "a set-user-ID program (the dynamic loader ignores "
		       "LD_PRELOAD for it)";
	if ((st.st_mode & S_ISGID) && st.st_gid != getegid())
		return "a set-group-ID program (the dynamic loader ignores "
		       "LD_PRELOAD for it)";
	if (getxattr(path, "security.capability", NULL, 0) >= 0)
		return "a program with file capabilities (the dynamic loader "
		       "ignores LD_PRELOAD for it)";
	int d = elf_dynamic(path);
	if (d == 0)
		return "statically linked (no dynamic loader to preload the "
		       "shim into)";
	if (d < 0) {
		char *interp = script_interpreter(path);
		const char *why = NULL;
		if (interp && elf_dynamic(interp) == 0)
			why = "a script whose interpreter is statically linked";
		free(interp);
		return why;
	}
	return NULL;
}

/* The shim: --preload, else next to this binary, else installed. */
static char *find_preload(const char *opt)
{
	if (opt) {
		char *r = realpath(opt, NULL);
		return r;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			char cand[2 * PATH_MAX];
			slash[1] = 0;
			snprintf(cand, sizeof(cand), "%s%s", self,
				 PRELOAD_NAME);
			if (access(cand, R_OK) == 0)
				return strdup(cand);
#ifdef FK_PRELOAD_RELDIR
			/* an installed tree moved or installed under another
			 * prefix: BINDIR/../LIBDIR/flushkit/ */
			int len =
			    snprintf(cand, sizeof(cand), "%s../%s/%s", self,
				     FK_PRELOAD_RELDIR, PRELOAD_NAME);
			if (len > 0 && len < (int)sizeof(cand) &&
			    access(cand, R_OK) == 0)
				return strdup(cand);
#endif
		}
	}
#ifdef FK_PRELOAD_INSTALLED
	if (access(FK_PRELOAD_INSTALLED, R_OK) == 0)
		return strdup(FK_PRELOAD_INSTALLED);
#endif
	return NULL;
}

static int set_env_u64(const char *name, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return setenv(name, buf, 1);
}

static int setup_env(const char *preload, uint64_t flush_after,
		     uint64_t max_dirty, int drop_cache, const char *stats)
{
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(preload) + (old ? strlen(old) + 1 : 0) + 1;
	char *v = malloc(len);
	if (!v)
		return -1;
	if (old && *old)
		snprintf(v, len, "%s %s", preload, old);
	else
		snprintf(v, len, "%s", preload);
	int r = setenv("LD_PRELOAD", v, 1);
	free(v);
	if (r || set_env_u64("FLUSHKIT_FLUSH_AFTER", flush_after) ||
	    set_env_u64("FLUSHKIT_MAX_DIRTY", max_dirty) ||
	    setenv("FLUSHKIT_DROP_CACHE", drop_cache ? "1" : "0", 1))
		return -1;
	if (stats)
		return setenv("FLUSHKIT_STATS", stats, 1);
	return unsetenv("FLUSHKIT_STATS");
}

static pid_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* Print the per-process statistics lines of @path on stderr, and their
 * sum over processes. */
static void print_stats(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		cli_warn("no statistics in '%s': %s", path, strerror(errno));
		return;
	}
	char line[1024];
	uint64_t procs = 0, files = 0, bytes = 0, hints = 0, waits = 0,
		 wait_ms = 0, skipped = 0, timeouts = 0;
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stderr);
		procs++;
		const char *keys[] = {
		    "files=",	"bytes_written=", "hints=",	   "waits=",
		    "wait_ms=", "waits_skipped=", "wait_timeouts="};
		uint64_t *dst[] = {&files,   &bytes,   &hints,	 &waits,
				   &wait_ms, &skipped, &timeouts};
		for (int i = 0; i < 7; i++) {
			char pat[32];
			snprintf(pat, sizeof(pat), " %s", keys[i]);
			const char *p = strstr(line, pat);
			if (p)
				*dst[i] += strtoull(p + strlen(pat), NULL, 10);
		}
	}
	fclose(f);
	char hb[32];
	fprintf(stderr,
		"flushkit exec: %" PRIu64 " process%s reported: wrote %s to "
		"%" PRIu64 " file%s; %" PRIu64 " writeback hint%s, %" PRIu64
		" wait%s (%.3f s)",
		procs, procs == 1 ? "" : "es",
		cli_human_bytes(bytes, hb, sizeof(hb)), files,
		files == 1 ? "" : "s", hints, hints == 1 ? "" : "s", waits,
		waits == 1 ? "" : "s", (double)wait_ms / 1000.0);
	/* Waits not made (no cachestat(2): the dirty bound was not kept)
	 * and waits cut at their time cap, when there were any. */
	if (skipped)
		fprintf(stderr, "; %" PRIu64 " wait%s skipped", skipped,
			skipped == 1 ? "" : "s");
	if (timeouts)
		fprintf(stderr, "; %" PRIu64 " wait%s timed out", timeouts,
			timeouts == 1 ? "" : "s");
	fputc('\n', stderr);
}

int cmd_exec(int argc, char **argv)
{
	uint64_t flush_after = DEFAULT_FLUSH_AFTER;
	uint64_t max_dirty = DEFAULT_MAX_DIRTY;
	int drop_cache = 0, force = 0, stats = 0, ioprio = -1;
	uint64_t pace = 0, small_budget = DEFAULT_SMALL_BUDGET;
	int hint_ioprio = 0;
	const char *stats_file = NULL, *preload_opt = NULL;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_FLUSH_AFTER:
			if (cli_parse_size(optarg, &flush_after) ||
			    flush_after < 4096) {
				return cli_bad_value("exec", "--flush-after",
						     optarg,
						     "a size of at least 4k");
			}
			break;
		case OPT_MAX_DIRTY:
			if (cli_parse_size(optarg, &max_dirty)) {
				return cli_bad_value("exec", "--max-dirty",
						     optarg,
						     "a size; 0: no bound");
			}
			break;
		case OPT_DROP_CACHE:
			drop_cache = 1;
			break;
		case OPT_STATS:
			stats = 1;
			stats_file = optarg;
			if (stats_file && !*stats_file) {
				return cli_bad_value("exec", "--stats", "",
						     "a file name");
			}
			break;
		case OPT_FORCE:
			force = 1;
			break;
		case OPT_PRELOAD:
			preload_opt = optarg;
			break;
		case OPT_IOPRIO:
			if (parse_ioprio(optarg, &ioprio)) {
				return cli_bad_value("exec", "--ioprio", optarg,
						     "idle, be[:0-7] or "
						     "rt[:0-7]");
			}
			break;
		case OPT_PACE:
			if (cli_parse_u64(optarg, &pace) || pace > 100) {
				return cli_bad_value("exec", "--pace", optarg,
						     "a percent, 0-100");
			}
			break;
		case OPT_SMALL_BUDGET:
			if (!strcmp(optarg, "unlimited")) {
				small_budget = UINT64_MAX;
			} else if (cli_parse_size(optarg, &small_budget) ||
				   small_budget == UINT64_MAX) {
				return cli_bad_value("exec", "--small-budget",
						     optarg,
						     "a size or unlimited");
			}
			break;
		case OPT_HINT_IOPRIO:
			if (!strncmp(optarg, "rt", 2) ||
			    parse_ioprio(optarg, &hint_ioprio)) {
				return cli_bad_value("exec", "--hint-ioprio",
						     optarg,
						     "idle or be[:0-7]");
			}
			break;
		case 'h':
			usage(stdout);
			return FK_EXIT_OK;
		default:
			return cli_option_error("exec", c, argv, long_opts);
		}
	}
	if (optind >= argc)
		return cli_usage_error("exec", "missing COMMAND operand");
	if (max_dirty && max_dirty < flush_after)
		return cli_usage_error("exec", "--max-dirty must be 0 or at "
					       "least --flush-after");

	char **cmd = argv + optind;
	int err;
	char *path = find_command(cmd[0], &err);
	if (!path) {
		cli_error("exec '%s': %s", cmd[0], strerror(-err));
		return err == -EACCES ? EXIT_CANNOT_RUN : EXIT_NOT_FOUND;
	}
	const char *why = cannot_preload(path);
	if (why && !force) {
		cli_error("exec '%s': %s; run it without flushkit exec, or "
			  "with --force to run it without the shim's help",
			  path, why);
		free(path);
		return FK_EXIT_FAILURE;
	}
	char *preload = find_preload(preload_opt);
	if (!preload) {
		cli_error("exec: cannot find %s%s%s", preload_opt ? "'" : "",
			  preload_opt ? preload_opt : PRELOAD_NAME,
			  preload_opt ? "'" : " next to flushkit or installed");
		free(path);
		return FK_EXIT_FAILURE;
	}

	/* --stats=FILE: every process appends to FILE at its exit, in
	 * whatever directory it is then: FILE must be a regular file (or
	 * not exist: created 0600), checked before the command runs, so no
	 * line is dropped without a word and no process blocks on a FIFO or
	 * writes into a device.  The shim gets its canonical path (it opens
	 * it with O_NOFOLLOW | O_NONBLOCK and writes only to a regular
	 * file). */
	char abs_stats[PATH_MAX];
	if (stats_file && strcmp(stats_file, "-")) {
		int sfd = open(stats_file,
			       O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK |
				   O_NOCTTY | O_CLOEXEC,
			       0600);
		struct stat sst;
		if (sfd < 0) {
			cli_error("exec: --stats: open '%s': %s", stats_file,
				  errno == ENXIO ? "a FIFO; a regular file "
						   "expected"
						 : strerror(errno));
			free(path);
			free(preload);
			return FK_EXIT_FAILURE;
		}
		if (fstat(sfd, &sst) || !S_ISREG(sst.st_mode)) {
			cli_error("exec: --stats '%s': not a regular file",
				  stats_file);
			close(sfd);
			free(path);
			free(preload);
			return FK_EXIT_FAILURE;
		}
		close(sfd);
		if (!realpath(stats_file, abs_stats)) {
			cli_error("exec: --stats: realpath '%s': %s",
				  stats_file, strerror(errno));
			free(path);
			free(preload);
			return FK_EXIT_FAILURE;
		}
		stats_file = abs_stats;
	} else if (stats_file) {
		stats_file = NULL; /* "-": stderr, as without FILE */
	}

	/* --stats without FILE (or "-"): the processes append to a file in
	 * a private directory of ours, printed on our stderr when COMMAND
	 * is done; never to COMMAND's fd 2 (it may close it, or reopen a
	 * data file on it). */
	char tmp_dir[PATH_MAX] = "", tmp_stats[PATH_MAX + 16] = "";
	if (stats && !stats_file) {
		const char *td = getenv("TMPDIR");
		snprintf(tmp_dir, sizeof(tmp_dir), "%s/flushkit-exec.XXXXXX",
			 td && *td ? td : "/tmp");
		int fd = -1;
		if (mkdtemp(tmp_dir)) {
			snprintf(tmp_stats, sizeof(tmp_stats), "%s/stats",
				 tmp_dir);
			fd =
			    open(tmp_stats,
				 O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		}
		if (fd < 0) {
			cli_error("exec: --stats: create '%s': %s",
				  tmp_stats[0] ? tmp_stats : tmp_dir,
				  strerror(errno));
			if (tmp_stats[0])
				rmdir(tmp_dir);
			free(path);
			free(preload);
			return FK_EXIT_FAILURE;
		}
		close(fd);
		stats_file = tmp_stats;
	}
	if (setup_env(preload, flush_after, max_dirty, drop_cache,
		      stats_file) ||
	    set_env_u64("FLUSHKIT_PACE", pace) ||
	    set_env_u64("FLUSHKIT_SMALL_BUDGET", small_budget) ||
	    set_env_u64("FLUSHKIT_HINT_IOPRIO", (uint64_t)hint_ioprio)) {
		cli_error("exec: setenv: %s", strerror(errno));
		free(path);
		free(preload);
		return FK_EXIT_FAILURE;
	}
	free(preload);

	/* Ctrl-C and Ctrl-\ reach COMMAND through the terminal's process
	 * group; this process waits for it (as system(3)).  A TERM, HUP
	 * or USR1/2 sent to this process is passed on. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
	struct sigaction fwd = {.sa_handler = forward_signal};
	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	int fwd_sigs[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
	struct sigaction old_fwd[4];

	/* --ioprio: set here, inherited by COMMAND (and its children):
	 * the writeback the shim starts is submitted by COMMAND, so it
	 * carries this priority; the flusher's does not */
	if (ioprio >= 0 &&
	    syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, ioprio) < 0) {
		cli_error("exec: --ioprio: ioprio_set: %s", strerror(errno));
		free(path);
		return FK_EXIT_FAILURE;
	}

	/* execvp's fallback for ENOEXEC, built before the fork (no
	 * allocation in the child): /bin/sh PATH ARG1... */
	size_t argc_cmd = 0;
	while (cmd[argc_cmd])
		argc_cmd++;
	char **sh_argv = calloc(argc_cmd + 2, sizeof(char *));
	if (!sh_argv) {
		cli_error("exec: %s", strerror(ENOMEM));
		free(path);
		return FK_EXIT_FAILURE;
	}
	sh_argv[0] = "/bin/sh";
	sh_argv[1] = path;
	for (size_t i = 1; i < argc_cmd; i++)
		sh_argv[i + 1] = cmd[i];

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cli_error("exec: fork: %s", strerror(errno));
		free(sh_argv);
		free(path);
		return FK_EXIT_FAILURE;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		execv(path, cmd);
		int e = errno;
		if (e == ENOEXEC) {
			execv(sh_argv[0], sh_argv);
			e = errno;
		}
		cli_error("exec '%s': %s", path, strerror(e));
		_exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN);
	}
	child_pid = pid;
	for (int i = 0; i < 4; i++)
		sigaction(fwd_sigs[i], &fwd, &old_fwd[i]);
	free(sh_argv);
	free(path);

	int status;
	pid_t w;
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	for (int i = 0; i < 4; i++)
		sigaction(fwd_sigs[i], &old_fwd[i], NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (w < 0) {
		cli_error("exec: waitpid: %s", strerror(errno));
		return FK_EXIT_FAILURE;
	}
	if (tmp_stats[0]) {
		print_stats(tmp_stats);
		unlink(tmp_stats);
		rmdir(tmp_dir);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return FK_EXIT_FAILURE;
}
