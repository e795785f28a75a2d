/* SPDX-License-Identifier: MIT */
/*
 * child.h - the benchmark floor's one way to run another program: fork +
 * execvp of a fixed argument array (no shell, no string is ever parsed),
 * optional redirections, then wait for it.
 *
 * Used by "bench series" (its bench tpcb children), "bench sync"
 * (losetup, mkfs, mount), "report" (gnuplot), "monitor" (COMMAND) and
 * "reproduce" (its steps and the PostgreSQL peer, argvs built with
 * struct child_argv).
 *
 * Exit status convention, as the shells': the child's exit status, or
 * 128+N when signal N killed it.  A program that cannot be executed
 * exits 127 (not found: ENOENT) or 126 (any other exec error).
 *
 *	struct child_opts o = {.flags = CHILD_STDIN_NULL | CHILD_STDERR_OUT,
 *			       .out_path = "run.log"};
 *	int rc = child_run("/proc/self/exe", argv, &o);
 *	(rc < 0: -errno, it could not start; else the status as above)
 *
 * An argv built from formatted strings (struct child_argv): each
 * argument allocated whole (any length: paths and JSON), the array grown
 * as needed; an allocation failure is kept and returned by
 * child_argv_check, so a caller never runs a command missing arguments.
 *
 *	struct child_argv a = CHILD_ARGV_INIT;
 *	child_argv_add(&a, "--results=%s", dir);
 *	int rc = child_argv_check(&a);	(0 or -ENOMEM)
 *	if (!rc)
 *		rc = child_run("/proc/self/exe", a.v, &o);
 *	child_argv_release(&a);
 */
#ifndef FK_BENCH_CHILD_H
#define FK_BENCH_CHILD_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* struct child_opts.flags */
enum {
	CHILD_STDIN_NULL = 1 << 0,  /* stdin from /dev/null */
	CHILD_STDOUT_NULL = 1 << 1, /* stdout to /dev/null (no out_path or
				       capture given) */
	CHILD_STDERR_OUT = 1 << 2,  /* stderr where stdout goes (err_path
				       is then ignored) */
	CHILD_SIGDFL = 1 << 3,	    /* SIGINT, SIGTERM, SIGHUP to SIG_DFL */
	CHILD_EXEC_MSG = 1 << 4,    /* exec failure: "flushkit: exec 'PROG':
				       why" on the child's stderr */
	CHILD_SETPGID = 1 << 5,	    /* the child leads a new process group
				       (set in the child and the parent, so
				       kill(-pid) reaches its children too) */
	CHILD_PDEATHSIG = 1 << 6,   /* SIGTERM to the child when the caller
				       dies (PR_SET_PDEATHSIG), so a killed
				       caller leaves no run behind */
	CHILD_SETUID = 1 << 7,	    /* the child runs as @uid:@gid (no
				       supplementary groups), set before
				       its chdir and its PDEATHSIG: a
				       root caller running a server that
				       refuses root (PostgreSQL) */
	CHILD_CLOSEFDS = 1 << 8,    /* close every descriptor above stderr
				       (close_range): a daemon it starts
				       (a PostgreSQL server) holds none of
				       the caller's, e.g. no run lock */
};

/* What the child gets besides @argv.  A zeroed struct: inherit all. */
struct child_opts {
	int flags;
	/* The child's working directory (NULL: the caller's).  @out_path
	 * and @err_path are relative to it (opened with openat). */
	const char *cwd;
	/* stdout, stderr into these files (created 0644, truncated;
	 * opened by the caller before the fork, so an error is returned,
	 * not lost in the child).  NULL: inherited. */
	const char *out_path;
	const char *err_path;
	/* child_run only: stdout into this buffer, at most @capture_len - 1
	 * bytes, NUL-terminated (more output is read and dropped). */
	char *capture;
	size_t capture_len;
	/* The child's signal mask (NULL: the caller's, inherited). */
	const sigset_t *sigmask;
	/* CHILD_SETUID: the child's user and group IDs. */
	uid_t uid;
	gid_t gid;
};

/*
 * Start @prog (execvp: looked up in PATH unless it holds a '/') with
 * @argv (NULL-terminated, argv[0] its name) and @o (NULL: inherit all;
 * @o->capture must be NULL).  On success *@pid is the child's.  Returns
 * 0, or -errno (-EINVAL for a capture; fork or an open of a redirection
 * failed: nothing was started).  Flushes stdio first.
 */
int child_start(const char *prog, char *const argv[],
		const struct child_opts *o, pid_t *pid);

/*
 * Wait for @pid (retrying EINTR).  With @nohang and the child still
 * running, returns -EAGAIN at once.  Else the exit status, 128+N if
 * signal N killed it, or -errno of waitpid.
 */
int child_wait(pid_t pid, int nohang);

/* child_start + (capture) + child_wait: the status as child_wait's, or
 * -errno if it could not start. */
int child_run(const char *prog, char *const argv[], const struct child_opts *o);

/*
 * An argv of allocated strings.  @v is NULL-terminated once an argument
 * was added (NULL before); @n arguments; @err the first error of an add
 * (-ENOMEM), after which adds do nothing.  Not thread-safe: one owner.
 */
struct child_argv {
	char **v;
	int n, cap;
	int err;
};
#define CHILD_ARGV_INIT                                                        \
	{                                                                      \
		NULL, 0, 0, 0                                                  \
	}

/* Append the argument printf(@fmt, ...) to @a.  On allocation failure
 * nothing is appended and @a->err is set (kept until release). */
void child_argv_add(struct child_argv *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 0 if every add to @a succeeded and @a holds an argument, else the
 * first error: -ENOMEM (an add failed), -EINVAL (no argument). */
int child_argv_check(const struct child_argv *a);

/* Free @a's strings and array; @a is then empty (CHILD_ARGV_INIT),
 * ready for reuse. */
void child_argv_release(struct child_argv *a);

/* A waitpid(2) status as exit status or 128+N. */
int child_status(int wstatus);

/*
 * The stop signals of a long benchmark that must undo what it set up
 * (mounts, loop devices, throttles, bdi knobs, cgroups): SIGINT, SIGTERM
 * and SIGHUP (the terminal closed), and SIGPIPE too when @with_pipe
 * (stdout's reader left, as in "| head -1").  stop_signals_catch sets
 * @handler for each and keeps the old actions in @saved;
 * stop_signals_restore puts them back.  A handler, not SIG_IGN, so
 * children start with every one of them at its default (exec resets
 * handled signals, not ignored ones).
 */
struct stop_signals {
	struct sigaction old[4];
	int with_pipe;
};
void stop_signals_catch(struct stop_signals *saved, void (*handler)(int),
			int with_pipe);
void stop_signals_restore(const struct stop_signals *saved);

#endif
