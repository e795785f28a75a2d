// SPDX-License-Identifier: MIT
/*
 * test-cut-files.c - examples/durable-replace and flushkit exec under
 * power cuts that lose the disk's write cache (tests/lib/fkcut.h: a lab
 * disk, ram model, write cache on), on ext4, xfs and btrfs.
 *
 *  replace  FILE holds an old text (durable); `durable-replace FILE NEW`
 *           runs and the power is cut: at a random moment while it runs,
 *           as the disk's N-th FLUSH arrives (N = 1..4), or right after
 *           it exited 0.  After the remount FILE must hold exactly the
 *           old or the new text, never neither, never a mix; the new one
 *           if it had exited 0.  The texts are 24 KiB (six blocks), so a
 *           torn file shows.
 *  exec     `flushkit exec -- dd if=SRC of=MNT/eN bs=64k` (no fsync; the
 *           shim starts writeback every MiB, which makes nothing
 *           durable) exits 0, then the cut: flushkit exec promises
 *           nothing durable, and the test shows it: over the trials,
 *           at least one such file is not complete after the remount
 *           (in practice all of them).  Then `flushkit exec --
 *           durable-replace FILE NEW` exits 0, the cut: FILE holds NEW,
 *           every trial (the program's own fsyncs keep their promise
 *           under the shim).
 *
 * Cut modes drawn per cut (drop, subset, reorder).  The negative control
 * (FK_CUT_FLUSH=ignore): the disk ignores FLUSH while durable-replace
 * runs; then the replace trials that exited 0 must come back with the
 * old text in most trials (it prints the rate; the suite runs it with a
 * few trials on ext4 and checks at least half lost).
 *
 * FK_TRIALS (default 4): trials per kind per file system; FK_TEST_SEED
 * fixes the seed; FK_CUTFILES_FS ("ext4,xfs,btrfs").  Needs root,
 * /dev/fuse, loop devices, flushkit-diskd, durable-replace and flushkit
 * built (77 otherwise).  Prints "trials: N, failed: F".
 */
#include "fkcut.h"
#include "fkloop.h"
#include "fktest.h"
#include "fktorture.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEXT_BYTES (24 << 10)
#define EXEC_BYTES (4u << 20)

static char flushkit[PATH_MAX], replace_bin[PATH_MAX], src_file[PATH_MAX];
static uint64_t rng;
static struct fkt_fs cur;
static unsigned nr_trials, nr_failed;
static unsigned replace_after, replace_after_lost, replace_during;
static unsigned replace_old, replace_new;
static unsigned exec_plain, exec_plain_lost, exec_fsync, exec_fsync_lost;
static int control;

static uint64_t rnd(void)
{
	return fkt_rnd(&rng);
}

/* BUILD/tests/test-cut-files -> BUILD/@rel */
static void build_path(char *out, size_t cap, const char *rel)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		SKIP("cannot read /proc/self/exe");
	self[n] = 0;
	for (int i = 0; i < 2; i++) {
		char *slash = strrchr(self, '/');
		if (slash)
			*slash = 0;
	}
	if (strlen(self) + strlen(rel) + 2 > cap)
		SKIP("build path too long");
	strcpy(out, self);
	strcat(out, "/");
	strcat(out, rel);
}

/* A text of TEXT_BYTES: @tag repeated with a counter, so old and new
 * differ in every block. */
static char *make_text(const char *tag, unsigned id)
{
	char *t = malloc(TEXT_BYTES + 1);
	if (!t)
		exit(1);
	size_t n = 0;
	for (unsigned i = 0; n < TEXT_BYTES; i++) {
		int w = snprintf(t + n, TEXT_BYTES + 1 - n, "%s-%u-%06u.", tag,
				 id, i);
		if (w <= 0)
			break;
		n += (size_t)w;
	}
	t[TEXT_BYTES] = 0;
	return t;
}

static pid_t start(char *const argv[])
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The cut after the process is gone: 1 if it came earlier (armed). */
static int cut_and_remount(void)
{
	int g = fkt_fs_goingdown(&cur, FKT_GOINGDOWN_NOLOGFLUSH);
	if (g < 0 || fkt_fs_umount(&cur) || fkt_fs_mount(&cur)) {
		fprintf(stderr, "  cut or remount failed\n");
		fkt_failures++;
		return -1;
	}
	return g;
}

static int run_replace(const char *file, const char *text, int via_exec)
{
	char *argv[8];
	int n = 0;
	if (via_exec) {
		argv[n++] = flushkit;
		argv[n++] = "exec";
		argv[n++] = "--";
	}
	argv[n++] = replace_bin;
	argv[n++] = (char *)file;
	argv[n++] = (char *)text;
	argv[n] = NULL;
	return wait_exit(start(argv));
}

/* 0 old, 1 new, -1 neither (printed). */
static int which_text(const char *file, const char *old, const char *new)
{
	size_t len = 0;
	char *got = fkt_read_file(file, &len);
	int r = -1;
	if (got && len == TEXT_BYTES && !memcmp(got, old, len))
		r = 0;
	else if (got && len == TEXT_BYTES && !memcmp(got, new, len))
		r = 1;
	else
		printf("    %s: %s (%zu bytes)\n", file,
		       got ? "neither the old nor the new text" : "missing",
		       len);
	free(got);
	return r;
}

static void trial_replace(unsigned id)
{
	int before = fkt_failures;
	char file[PATH_MAX], tmp[PATH_MAX + 8];
	snprintf(file, sizeof(file), "%s/r%u", cur.mnt, id);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	char *old = make_text("old", id), *new = make_text("new", id);
	/* The old text, durable (flushes honoured). */
	if (run_replace(file, old, 0) != 0) {
		fprintf(stderr, "  durable-replace (old) failed\n");
		fkt_failures++;
		goto out;
	}
	/* 0 timed, 1 armed, 2 and 3 after exit */
	uint64_t how = (rnd() >> 7) % 4;
	if (how == 1 && fkt_cut_arm_flush(&cur, 1 + rnd() % 4)) {
		fkt_failures++;
		goto out;
	}
	if (fkt_cut_window(&cur)) {
		fkt_failures++;
		goto out;
	}
	char *argv[] = {replace_bin, file, new, NULL};
	pid_t pid = start(argv);
	int rc = -1, cut_during = 0;
	if (how == 0) {
		struct timespec d = {0, (long)(rnd() % 3000000)};
		nanosleep(&d, NULL);
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		} else {
			fkt_fs_goingdown(&cur, FKT_GOINGDOWN_NOLOGFLUSH);
			cut_during = 1;
			kill(pid, SIGKILL);
			wait_exit(pid);
		}
	} else {
		rc = wait_exit(pid);
	}
	int g = cut_and_remount();
	if (g < 0)
		goto out;
	if (g == 1)
		cut_during = 1; /* at the armed FLUSH */
	int w = which_text(file, old, new);
	const char *res = w == 1 ? "new" : w == 0 ? "old" : "NEITHER";
	printf("  %-5s replace %s: %s %d, %s\n", cur.type,
	       cut_during ? "cut during" : "cut after ",
	       rc < 0 ? "killed" : "exit", rc < 0 ? 9 : rc, res);
	if (w < 0) {
		fprintf(stderr, "  %s: durable-replace left neither text\n",
			cur.type);
		fkt_failures++;
	}
	if (cut_during) {
		replace_during++;
	} else if (rc == 0) {
		replace_after++;
		if (w != 1) {
			replace_after_lost++;
			if (!control) {
				fprintf(stderr,
					"  %s: durable-replace exited 0, the "
					"new text is lost\n",
					cur.type);
				fkt_failures++;
			}
		}
	} else {
		fprintf(stderr, "  durable-replace exit %d before any cut\n",
			rc);
		fkt_failures++;
	}
	replace_old += w == 0;
	replace_new += w == 1;
out:
	unlink(file);
	unlink(tmp);
	free(old);
	free(new);
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr, "  trial %u FAILED (replace on %s)\n", id,
			cur.type);
	}
}

static void trial_exec(unsigned id)
{
	int before = fkt_failures;
	char out[PATH_MAX], of[PATH_MAX + 8], file[PATH_MAX];
	snprintf(out, sizeof(out), "%s/e%u", cur.mnt, id);
	snprintf(of, sizeof(of), "of=%s", out);
	char inarg[PATH_MAX + 8];
	snprintf(inarg, sizeof(inarg), "if=%s", src_file);
	/* No fsync: dd under the shim (writeback hints every MiB). */
	char *argv[] = {flushkit, "exec",   "--",	   "/bin/dd", inarg,
			of,	  "bs=64k", "status=none", NULL};
	int rc = wait_exit(start(argv));
	CHECK_EQ(rc, 0);
	if (cut_and_remount() < 0)
		goto out;
	size_t len = 0, slen = 0;
	char *got = fkt_read_file(out, &len);
	char *want = fkt_read_file(src_file, &slen);
	int complete = got && want && len == slen && !memcmp(got, want, len);
	free(got);
	free(want);
	exec_plain++;
	exec_plain_lost += !complete;
	printf("  %-5s exec dd (no fsync), cut after exit 0: %s (%zu of %zu "
	       "bytes)\n",
	       cur.type, complete ? "complete" : "lost (allowed)", len, slen);

	/* The program's own fsyncs, under the shim. */
	snprintf(file, sizeof(file), "%s/x%u", cur.mnt, id);
	char *old = make_text("old", id), *new = make_text("new", id);
	if (run_replace(file, old, 0) != 0 || run_replace(file, new, 1) != 0) {
		fprintf(stderr, "  durable-replace under exec failed\n");
		fkt_failures++;
	} else if (cut_and_remount() >= 0) {
		int w = which_text(file, old, new);
		exec_fsync++;
		exec_fsync_lost += w != 1;
		printf("  %-5s exec durable-replace, cut after exit 0: %s\n",
		       cur.type, w == 1 ? "new" : "LOST");
		CHECK_EQ(w, 1);
	}
	unlink(file);
	free(old);
	free(new);
out:
	unlink(out);
	nr_trials++;
	if (fkt_failures != before) {
		nr_failed++;
		fprintf(stderr, "  trial %u FAILED (exec on %s)\n", id,
			cur.type);
	}
}

int main(void)
{
	/* flushkit exec preloads the (unsanitized) shim into its command:
	 * in the sanitizer builds ASan must not insist on coming first, as
	 * test-exec-fds says; only the children read this. */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
	if (!fkt_is_root())
		SKIP("needs root (lab disk, loop devices)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	build_path(flushkit, sizeof(flushkit), "flushkit");
	build_path(replace_bin, sizeof(replace_bin),
		   "tests/tools/durable-replace");
	if (access(flushkit, X_OK) || access(replace_bin, X_OK))
		SKIP("flushkit or durable-replace not built");
	uint64_t seed = fkt_cut_seed_env();
	fkt_rnd_seed(&rng, seed);
	unsigned trials = fkt_torture_trials_env(4);
	const char *fss = getenv("FK_CUTFILES_FS");
	if (!fss || !*fss)
		fss = "ext4,xfs,btrfs";
	struct fkt_cut_opts co;
	if (fkt_cut_opts_env(&co, seed) < 0)
		return 2;
	control = co.flush_ignore;
	printf("seed: %llu (FK_TEST_SEED), trials: %u (FK_TRIALS), file "
	       "systems: %s%s\n",
	       (unsigned long long)seed, trials, fss,
	       control ? ", FLUSH ignored (negative control)" : "");
	static struct fkt_fs *const cleanup_fss[] = {&cur};
	fkt_cleanup_at_exit(cleanup_fss, 1, NULL);
	snprintf(src_file, sizeof(src_file), "%s/exec-src", fkt_tmpdir());
	if (fkt_write_file(src_file, EXEC_BYTES, (unsigned)seed)) {
		fprintf(stderr, "cannot write %s\n", src_file);
		return 1;
	}
	static const char *const types[] = {"ext4", "xfs", "btrfs"};
	int ran = 0;
	unsigned id = 0;
	for (int i = 0; i < 3; i++) {
		if (!strstr(fss, types[i]))
			continue;
		char mnt[PATH_MAX];
		snprintf(mnt, sizeof(mnt), "%s/mnt-%s", fkt_tmpdir(), types[i]);
		int r =
		    fkt_fs_create_cut(&cur, types[i], 320ull << 20, mnt, &co);
		if (r == 77) {
			printf("%s: not available, skipped\n", types[i]);
			continue;
		}
		CHECK_EQ(r, 0);
		if (r)
			continue;
		ran++;
		for (unsigned k = 0; k < trials; k++)
			trial_replace(++id);
		for (unsigned k = 0; !control && k < trials; k++)
			trial_exec(++id);
		fkt_fs_destroy(&cur);
	}
	if (!ran)
		SKIP("no lab disk, loop devices or mkfs");
	printf("replace: %u cut during a run (%u old, %u new overall), %u "
	       "cut right after exit 0, %u of them lost the new text\n",
	       replace_during, replace_old, replace_new, replace_after,
	       replace_after_lost);
	if (control) {
		printf("negative control: %u of %u replaces that exited 0 "
		       "lost the new text\n",
		       replace_after_lost, replace_after);
		CHECK(replace_after > 0);
		CHECK(2 * replace_after_lost >= replace_after);
	} else {
		printf("exec: %u of %u files written without fsync lost, %u "
		       "of %u durable-replace runs lost\n",
		       exec_plain_lost, exec_plain, exec_fsync_lost,
		       exec_fsync);
		/* exec promises nothing: shown, not assumed. */
		CHECK(exec_plain_lost > 0);
		CHECK_EQ(exec_fsync_lost, 0);
	}
	printf("trials: %u, failed: %u\n", nr_trials, nr_failed);
	return fkt_done();
}
