// SPDX-License-Identifier: MIT
/*
 * test-bench-child.c - the benchmark floor's child-process helper
 * (bench/lib/child.h): exit status as is, 128+N for death by signal N,
 * 127 for a program not found, 126 for one that cannot be executed;
 * stdout captured into a buffer (truncated, NUL-terminated, the rest
 * drained so the child does not block); stdout and stderr into a file
 * opened relative to the child's working directory; stdin from
 * /dev/null; the signal mask handed to the child; CHILD_CLOSEFDS: the
 * child has none of the caller's descriptors above stderr (a server it
 * starts must not hold the caller's lock), its redirections kept; and
 * child_wait's -EAGAIN for a child still running; struct child_argv
 * keeps every argument whole and in order, however long and however
 * many (the child gets them all), and is empty again after release.
 */
#include "child.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *sh_argv[] = {"sh", "-c", NULL, NULL};

static int sh(const char *script, const struct child_opts *o)
{
	sh_argv[2] = (char *)script;
	return child_run("sh", sh_argv, o);
}

static void test_status(void)
{
	CHECK_EQ(sh("exit 0", NULL), 0);
	CHECK_EQ(sh("exit 3", NULL), 3);
	CHECK_EQ(sh("kill -TERM $$", NULL), 128 + SIGTERM);
	CHECK_EQ(sh("kill -KILL $$", NULL), 128 + SIGKILL);
	char *none[] = {"no-such-program-fk", NULL};
	CHECK_EQ(child_run("no-such-program-fk", none, NULL), 127);
	char *dir[] = {"/", NULL};
	CHECK_EQ(child_run("/", dir, NULL), 126);
}

static void test_capture(void)
{
	char buf[8];
	struct child_opts o = {.flags = CHILD_STDIN_NULL,
			       .capture = buf,
			       .capture_len = sizeof(buf)};
	CHECK_EQ(sh("echo hi", &o), 0);
	CHECK(!strcmp(buf, "hi\n"));
	/* more than fits: cut, NUL-terminated, and the child is not left
	 * blocked on a full pipe (1 MiB > a pipe's 64 KiB) */
	CHECK_EQ(sh("head -c 1048576 /dev/zero | tr '\\0' x; exit 5", &o), 5);
	CHECK_EQ(strlen(buf), sizeof(buf) - 1);
	CHECK(!strcmp(buf, "xxxxxxx"));
	/* stdin is /dev/null: read gets EOF at once */
	CHECK_EQ(sh("cat; echo end", &o), 0);
	CHECK(!strcmp(buf, "end\n"));
	/* a capture is for child_run only */
	pid_t pid;
	CHECK_EQ(child_start("sh", sh_argv, &o, &pid), -EINVAL);
}

static void test_files(void)
{
	char dir[] = "/tmp/fk-child-XXXXXX";
	char path[PATH_MAX], buf[64] = "";
	CHECK(mkdtemp(dir) != NULL);
	struct child_opts o = {
	    .flags = CHILD_STDERR_OUT, .cwd = dir, .out_path = "log"};
	CHECK_EQ(sh("echo out; echo err >&2; pwd > here", &o), 0);
	snprintf(path, sizeof(path), "%s/log", dir);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = 0;
		fclose(f);
	}
	CHECK(!strcmp(buf, "out\nerr\n"));
	struct stat st;
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0644);
	/* the child ran in @cwd */
	snprintf(path, sizeof(path), "%s/here", dir);
	CHECK_EQ(access(path, F_OK), 0);
	/* separate stderr file, truncated on reuse */
	o = (struct child_opts){
	    .cwd = dir, .out_path = "log", .err_path = "err"};
	CHECK_EQ(sh("echo 2 >&2", &o), 0);
	snprintf(path, sizeof(path), "%s/log", dir);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 0);
	snprintf(path, sizeof(path), "%s/err", dir);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_size, 2);
	/* a redirection that cannot be opened: -errno, nothing started */
	o = (struct child_opts){.cwd = dir, .out_path = "no/such/log"};
	CHECK_EQ(sh("touch ran", &o), -ENOENT);
	snprintf(path, sizeof(path), "%s/ran", dir);
	CHECK(access(path, F_OK) != 0);
	o = (struct child_opts){.cwd = "/nonexistent-fk-dir"};
	CHECK_EQ(sh("exit 0", &o), -ENOENT);
	fkt_rm_rf(dir);
}

static void test_start_wait(void)
{
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	/* the child gets @sigmask: SIGUSR1 unblocked kills it */
	struct child_opts o = {.sigmask = &old};
	pid_t pid;
	sh_argv[2] = "kill -USR1 $$; sleep 1";
	CHECK_EQ(child_start("sh", sh_argv, &o, &pid), 0);
	CHECK_EQ(child_wait(pid, 0), 128 + SIGUSR1);
	/* without it the mask is inherited: SIGUSR1 stays blocked */
	sh_argv[2] = "kill -USR1 $$; exit 4";
	CHECK_EQ(child_start("sh", sh_argv, NULL, &pid), 0);
	CHECK_EQ(child_wait(pid, 0), 4);
	sigprocmask(SIG_SETMASK, &old, NULL);

	sh_argv[2] = "sleep 5";
	CHECK_EQ(child_start("sh", sh_argv, NULL, &pid), 0);
	CHECK_EQ(child_wait(pid, 1), -EAGAIN);
	kill(pid, SIGKILL);
	CHECK_EQ(child_wait(pid, 0), 128 + SIGKILL);
	CHECK_EQ(child_wait(pid, 0), -ECHILD);
}

static void test_closefds(void)
{
	/* A descriptor without O_CLOEXEC, as the run lock of disk.c. */
	int fd = open("/dev/null", O_RDONLY);
	CHECK(fd > STDERR_FILENO);
	char script[64], buf[16];
	snprintf(script, sizeof(script), "[ -e /proc/$$/fd/%d ]", fd);
	CHECK_EQ(sh(script, NULL), 0); /* inherited without the flag */
	struct child_opts o = {.flags = CHILD_CLOSEFDS};
	CHECK_EQ(sh(script, &o), 1);
	/* the redirections stay: a capture still reads stdout */
	o = (struct child_opts){.flags = CHILD_CLOSEFDS | CHILD_STDIN_NULL,
				.capture = buf,
				.capture_len = sizeof(buf)};
	snprintf(script, sizeof(script), "[ -e /proc/$$/fd/%d ] || echo closed",
		 fd);
	CHECK_EQ(sh(script, &o), 0);
	CHECK(!strcmp(buf, "closed\n"));
	close(fd);
}

static void test_argv(void)
{
	struct child_argv a = CHILD_ARGV_INIT;
	CHECK_EQ(child_argv_check(&a), -EINVAL); /* nothing to run */
	/* More than 64 arguments of more than 256 bytes each. */
	enum { N = 100, LEN = 5000 };
	static char arg[LEN + 1];
	memset(arg, 'x', LEN);
	child_argv_add(&a, "sh");
	child_argv_add(&a, "-c");
	child_argv_add(&a, "%s",
		       "[ $# -eq 100 ] && [ ${#1} -eq 5003 ] && "
		       "[ ${#100} -eq 5003 ] && echo \"${1%%x*}${100%%x*}\"");
	child_argv_add(&a, "sh");
	for (int i = 1; i <= N; i++)
		child_argv_add(&a, "%03d%s", i, arg);
	CHECK_EQ(child_argv_check(&a), 0);
	CHECK_EQ(a.n, N + 4);
	CHECK(a.v[a.n] == NULL);
	CHECK_EQ(strlen(a.v[4]), LEN + 3);
	CHECK(a.n == N + 4 && !strncmp(a.v[N + 3], "100xxx", 6));
	char buf[16];
	struct child_opts o = {.flags = CHILD_STDIN_NULL,
			       .capture = buf,
			       .capture_len = sizeof(buf)};
	CHECK_EQ(child_run("sh", a.v, &o), 0);
	CHECK(!strcmp(buf, "001100\n"));
	child_argv_release(&a);
	CHECK(a.v == NULL);
	CHECK_EQ(a.n, 0);
	CHECK_EQ(child_argv_check(&a), -EINVAL);
	/* reused after release */
	child_argv_add(&a, "true");
	CHECK_EQ(child_argv_check(&a), 0);
	CHECK_EQ(child_run("true", a.v, NULL), 0);
	child_argv_release(&a);
}

int main(void)
{
	test_argv();
	test_status();
	test_capture();
	test_files();
	test_closefds();
	test_start_wait();
	return fkt_done();
}
