// SPDX-License-Identifier: MIT
/*
 * child.c - run another program for a benchmark command: fork + execvp
 * of a fixed argv, redirections opened (openat) by the parent before the
 * fork, the exit status as the shells give it (128+N for signal N).  See
 * child.h for the interface.
 *
 * Between fork and exec the child calls only async-signal-safe functions
 * (dup2, fchdir, sigprocmask, signal, close_range, write, execvp,
 * _exit; setgroups, setgid and setuid, one thread after the fork), so a
 * multi-threaded caller (bench tpcb's monitor thread) is safe.
 *
 * struct child_argv: each argument vasprintf'd whole, the array doubled
 * as needed (one slot always left for the terminating NULL); the first
 * allocation failure is sticky, so the caller's one check before it runs
 * the command covers every add.
 */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The descriptors a child gets, opened by the parent. */
struct child_fds {
	int dir, in, out, err, pipe_r;
};

static void close_fds(struct child_fds *f)
{
	int *all[] = {&f->dir, &f->in, &f->out, &f->err, &f->pipe_r};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		/* out and err may share one descriptor */
		if (*all[i] >= 0 && (all[i] != &f->err || f->err != f->out))
			close(*all[i]);
		*all[i] = -1;
	}
}

static int open_out(int dir, const char *path)
{
	int fd =
	    openat(dir, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	return fd < 0 ? -errno : fd;
}

static int open_fds(const struct child_opts *o, struct child_fds *f,
		    int capture)
{
	int r;
	*f = (struct child_fds){-1, -1, -1, -1, -1};
	int dir = AT_FDCWD;
	if (o->cwd) {
		f->dir = open(o->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (f->dir < 0)
			return -errno;
		dir = f->dir;
	}
	if ((o->flags & CHILD_STDIN_NULL) &&
	    (f->in = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		goto fail_errno;
	if (capture) {
		int p[2];
		if (pipe2(p, O_CLOEXEC))
			goto fail_errno;
		f->pipe_r = p[0];
		f->out = p[1];
	} else if (o->out_path) {
		if ((r = open_out(dir, o->out_path)) < 0)
			goto fail;
		f->out = r;
	} else if ((o->flags & CHILD_STDOUT_NULL) &&
		   (f->out = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
		goto fail_errno;
	}
	if (o->flags & CHILD_STDERR_OUT) {
		f->err = f->out;
	} else if (o->err_path) {
		if ((r = open_out(dir, o->err_path)) < 0)
			goto fail;
		f->err = r;
	}
	return 0;
fail_errno:
	r = -errno;
fail:
	close_fds(f);
	return r;
}

/* In the child: "flushkit: exec 'PROG': why" on stderr, signal-safe. */
static void exec_msg(const char *prog, int e)
{
	const char *why = strerrordesc_np(e); /* strerror is not signal-safe */
	const char *parts[] = {"flushkit: exec '", prog,
			       "': ", why ? why : "error", "\n"};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (write(STDERR_FILENO, parts[i], strlen(parts[i])) < 0)
			return;
}

static int start(const char *prog, char *const argv[],
		 const struct child_opts *o, struct child_fds *f, pid_t *pid)
{
	fflush(NULL);
	pid_t parent = getpid();
	pid_t p = fork();
	if (p < 0)
		return -errno;
	if (p == 0) {
		if (o->flags & CHILD_SETPGID)
			setpgid(0, 0);
		/* before the prctl: a change of credentials clears the
		 * parent-death signal */
		if ((o->flags & CHILD_SETUID) &&
		    (setgroups(1, &o->gid) || setgid(o->gid) || setuid(o->uid)))
			_exit(126);
		if ((o->flags & CHILD_PDEATHSIG) &&
		    (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent))
			_exit(126); /* the caller died before the prctl */
		if (o->sigmask)
			sigprocmask(SIG_SETMASK, o->sigmask, NULL);
		if (o->flags & CHILD_SIGDFL) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			signal(SIGHUP, SIG_DFL);
		}
		if ((f->dir >= 0 && fchdir(f->dir)) ||
		    (f->in >= 0 && dup2(f->in, STDIN_FILENO) < 0) ||
		    (f->out >= 0 && dup2(f->out, STDOUT_FILENO) < 0) ||
		    (f->err >= 0 && dup2(f->err, STDERR_FILENO) < 0))
			_exit(126);
		if ((o->flags & CHILD_CLOSEFDS) &&
		    close_range(STDERR_FILENO + 1, ~0U, 0))
			_exit(126);
		execvp(prog, argv);
		int e = errno;
		if (o->flags & CHILD_EXEC_MSG)
			exec_msg(prog, e);
		_exit(e == ENOENT ? 127 : 126);
	}
	if (o->flags & CHILD_SETPGID)
		setpgid(p, p); /* either side may run first */
	*pid = p;
	return 0;
}

int child_status(int wstatus)
{
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return WEXITSTATUS(wstatus);
}

int child_start(const char *prog, char *const argv[],
		const struct child_opts *o, pid_t *pid)
{
	static const struct child_opts none;
	struct child_fds f;
	if (!o)
		o = &none;
	if (o->capture)
		return -EINVAL;
	int r = open_fds(o, &f, 0);
	if (r)
		return r;
	r = start(prog, argv, o, &f, pid);
	close_fds(&f);
	return r;
}

int child_wait(pid_t pid, int nohang)
{
	int st;
	pid_t w;
	while ((w = waitpid(pid, &st, nohang ? WNOHANG : 0)) < 0)
		if (errno != EINTR)
			return -errno;
	if (w == 0)
		return -EAGAIN;
	return child_status(st);
}

/* Read the pipe to its end into @buf (@len - 1 bytes kept, NUL). */
static void read_capture(int fd, char *buf, size_t len)
{
	size_t n = 0;
	char drop[512];
	for (;;) {
		char *to = n + 1 < len ? buf + n : drop;
		size_t room = n + 1 < len ? len - 1 - n : sizeof(drop);
		ssize_t r = read(fd, to, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (to == buf + n)
			n += (size_t)r;
	}
	if (len)
		buf[n] = 0;
}

int child_run(const char *prog, char *const argv[], const struct child_opts *o)
{
	static const struct child_opts none;
	struct child_fds f;
	pid_t pid = -1;
	if (!o)
		o = &none;
	int capture = o->capture != NULL;
	int r = open_fds(o, &f, capture);
	if (r)
		return r;
	r = start(prog, argv, o, &f, &pid);
	if (r) {
		close_fds(&f);
		return r;
	}
	if (capture) {
		/* the write end must be closed here for the read to end */
		if (f.err == f.out)
			f.err = -1;
		close(f.out);
		f.out = -1;
		read_capture(f.pipe_r, o->capture, o->capture_len);
	}
	close_fds(&f);
	return child_wait(pid, 0);
}

static const int stop_signo[4] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

void stop_signals_catch(struct stop_signals *saved, void (*handler)(int),
			int with_pipe)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	saved->with_pipe = with_pipe;
	for (int i = 0; i < (with_pipe ? 4 : 3); i++)
		sigaction(stop_signo[i], &sa, &saved->old[i]);
}

void stop_signals_restore(const struct stop_signals *saved)
{
	for (int i = 0; i < (saved->with_pipe ? 4 : 3); i++)
		sigaction(stop_signo[i], &saved->old[i], NULL);
}

void child_argv_add(struct child_argv *a, const char *fmt, ...)
{
	if (a->err)
		return;
	if (a->n + 1 >= a->cap) {
		int cap = a->cap ? 2 * a->cap : 16;
		char **v = realloc(a->v, (size_t)cap * sizeof(*v));
		if (!v) {
			a->err = -ENOMEM;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	char *s;
	int r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0) {
		a->err = -ENOMEM;
		return;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

int child_argv_check(const struct child_argv *a)
{
	if (a->err)
		return a->err;
	return a->n ? 0 : -EINVAL;
}

void child_argv_release(struct child_argv *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = a->cap = a->err = 0;
}
