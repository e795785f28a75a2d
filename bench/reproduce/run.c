// SPDX-License-Identifier: MIT
/*
 * run.c - "flushkit reproduce": stop signals, the children (flushkit
 * commands run from /proc/self/exe with an argv array) and the helpers of
 * the run directory (mkdir, syncfs, removal, block-layer counts).
 */
#include "reproduce.h"

volatile sig_atomic_t stop, stop_sig;
volatile pid_t child_pgid;

/* SIGINT, SIGTERM, SIGHUP and SIGPIPE (stdout is a pipe whose reader left, as
 * in "| head -1"): stop at the next step and clean up.  A handler, not
 * SIG_IGN, so the children start with SIGPIPE at its default (exec
 * resets handled signals, not ignored ones). */
void on_signal(int sig)
{
	stop = 1;
	if (!stop_sig)
		stop_sig = sig;
	if (child_pgid > 0)
		kill(-child_pgid, SIGTERM);
}

/* ---- children -------------------------------------------------------- */

int reproduce_progress;

/*
 * Run "flushkit ARGS..." (/proc/self/exe; @argv[0] is "flushkit") in
 * its own process group (child.h), stdin /dev/null, stdout and stderr
 * into @log (truncated), the command line appended to commands.txt in
 * @log's directory.  Returns its exit status, 128+N if killed by signal N,
 * -EINTR if we were told to stop, or -errno.  The one place children are
 * spawned here.
 */
int run_flushkit(const char *log, const struct child_argv *a)
{
	if (stop)
		return -EINTR;
	int rc = child_argv_check(a);
	if (rc) {
		cli_error("'flushkit %s': its argument list: %s",
			  a->n > 1 ? a->v[1] : "", strerror(-rc));
		return rc;
	}
	char *const *argv = a->v;
	/* The command, for the record: DIR/commands.txt next to the log. */
	char cmds[2400];
	const char *slash = strrchr(log, '/');
	snprintf(cmds, sizeof(cmds), "%.*s/commands.txt",
		 slash ? (int)(slash - log) : 1, slash ? log : ".");
	FILE *cf = fopen(cmds, "ae");
	if (cf) {
		fprintf(cf, "%s:", log);
		for (int i = 0; argv[i]; i++)
			fprintf(cf, " %s", argv[i]);
		fprintf(cf, "\n");
		fclose(cf);
	}
	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT |
					CHILD_SIGDFL | CHILD_SETPGID |
					CHILD_PDEATHSIG | CHILD_EXEC_MSG,
			       .out_path = log};
	/* Long work shows progress: which step, its log, and its time. */
	const char *seed = NULL;
	char seedbuf[8] = "";
	if (slash && slash - log >= 4 && slash[-4] == '/') {
		memcpy(seedbuf, slash - 3, 3);
		seed = seedbuf;
	}
	double t0 = now_s();
	if (reproduce_progress) {
		fprintf(stderr, "reproduce: %s%s%s: flushkit", seed ? seed : "",
			seed ? ": " : "", slash ? slash + 1 : log);
		int i = 1;
		for (; argv[i] && i < 4; i++)
			fprintf(stderr, " %s", argv[i]);
		fprintf(stderr, "%s started\n", argv[i] ? " ..." : "");
	}
	pid_t pid;
	rc = child_start("/proc/self/exe", argv, &o, &pid);
	if (rc) {
		cli_error("run 'flushkit %s': %s", argv[1], strerror(-rc));
		return rc;
	}
	child_pgid = pid;
	if (stop)
		kill(-pid, SIGTERM);
	rc = child_wait(pid, 0);
	child_pgid = 0;
	if (reproduce_progress)
		fprintf(stderr, "reproduce: %s%s%s: %s in %.1f s\n",
			seed ? seed : "", seed ? ": " : "",
			slash ? slash + 1 : log, rc ? "failed" : "done",
			now_s() - t0);
	if (stop)
		return -EINTR;
	if (rc)
		cli_error("'flushkit %s %s' failed with status %d; see '%s'",
			  argv[1], argv[2] ? argv[2] : "", rc, log);
	return rc;
}

/* run_flushkit of @a, its log SEED_DIR/@logname; @a is released (empty
 * for the next command). */
int run_args(struct ctx *c, const char *logname, struct child_argv *a)
{
	char log[2200];
	snprintf(log, sizeof(log), "%s/%s", c->seed_dir, logname);
	int rc = run_flushkit(log, a);
	child_argv_release(a);
	return rc;
}

/*
 * "flushkit monitor --json -- COMMAND" writes its JSON lines and
 * COMMAND's output to one file: keep the result lines ({"type": ...)
 * in @path, append the rest to @log.
 */
void split_jsonl(const char *path, const char *log)
{
	char tmp[2500];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *in = fopen(path, "re"), *out = fopen(tmp, "we"),
	     *lg = fopen(log, "ae");
	if (in && out && lg) {
		char *line = NULL;
		size_t cap = 0;
		while (getline(&line, &cap, in) > 0)
			fputs(line, strncmp(line, "{\"type\":", 8) ? lg : out);
		free(line);
	}
	if (in)
		fclose(in);
	if (lg)
		fclose(lg);
	if (out && !fclose(out))
		rename(tmp, path);
}

/* ---- small helpers --------------------------------------------------- */

double now_s(void)
{
	return (double)fk_now_ns() / 1e9;
}

int mkdir_p1(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST) {
		int e = errno;
		cli_error("mkdir '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}

int syncfs_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = syncfs(fd) ? -errno : 0;
	close(fd);
	if (r)
		cli_error("syncfs '%s': %s", path, strerror(-r));
	return r;
}

static int rm_entry(const char *path, const struct stat *sb, int flag,
		    struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

void blk_read(const struct disk *d, struct blk_counts *b)
{
	char path[128], buf[512];
	memset(b, 0, sizeof(*b));
	snprintf(path, sizeof(path), "/sys/block/loop%u/stat", d->min);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	unsigned long long f[11] = {0};
	sscanf(buf, "%llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
	       &f[3], &f[4], &f[5], &f[6]);
	b->writes = (double)f[4];
	b->merges = (double)f[5];
	b->kib = (double)f[6] / 2;
}

/* The head of a step run under "flushkit monitor --json -i MS -p PATH --
 * /proc/self/exe": the step's own arguments follow. */
void monitor_argv(struct child_argv *a, unsigned interval_ms, const char *path)
{
	child_argv_add(a, "flushkit");
	child_argv_add(a, "monitor");
	child_argv_add(a, "--json");
	child_argv_add(a, "-i");
	child_argv_add(a, "%u", interval_ms);
	child_argv_add(a, "-p");
	child_argv_add(a, "%s", path);
	child_argv_add(a, "--");
	child_argv_add(a, "/proc/self/exe");
}
