// SPDX-License-Identifier: MIT
/*
 * test-exec-inproc-threads.c - the shim's code under a multithreaded
 * writer, linked into this program (not preloaded) so the ASan/UBSan
 * and TSan builds check it: a preloaded sanitized shim cannot run in an
 * unsanitized program, so the sanitizer builds link src/preload/ into
 * this test (CMakeLists.txt), whose own write, pwrite, fwrite, close...
 * then go through the shim exactly as a preloaded program's would.
 *
 * 8 writer threads (write, pwrite, fwrite, each its own file), 2 threads
 * pwriting disjoint halves of one shared descriptor, 1 thread opening,
 * writing and closing small files (descriptor numbers reused), 1 thread
 * forking children that write a file and exit while the others write
 * (fork safety: a slot lock held at fork is not inherited as held), and
 * SIGUSR1 sent to the writers, whose handler pwrites to a file of its
 * own (the shim re-entered from a signal handler).  Tiny thresholds
 * (256 KiB flush-after, 2 MiB max-dirty, drop-cache) so hints, waits and
 * drops all happen.  Checks: every file has exactly its bytes, the
 * children exit 0, the shim counted hints and waits.
 */
#include "fktest.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void shim_counters(uint64_t *hints, uint64_t *waits, uint64_t *bytes);

#define MiB (1024 * 1024)
#define PER_THREAD (8 * MiB)
#define CHUNK 16384

static const char *dir;
static int shared_fd, sig_fd;
static atomic_long sig_count;
static atomic_int stop;
static atomic_int failures;

static void fill(char *b, size_t len, unsigned seed, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (char)(seed * 7 + (off + i) / 4096);
}

static int verify(const char *path, uint64_t len, unsigned seed)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	char *got = malloc(CHUNK), *want = malloc(CHUNK);
	int ok = 1;
	for (uint64_t off = 0; off < len && ok; off += CHUNK) {
		if (pread(fd, got, CHUNK, (off_t)off) != CHUNK)
			ok = 0;
		fill(want, CHUNK, seed, off);
		if (ok && memcmp(got, want, CHUNK))
			ok = 0;
	}
	struct stat st;
	if (fstat(fd, &st) || (uint64_t)st.st_size != len)
		ok = 0;
	close(fd);
	free(got);
	free(want);
	if (!ok)
		fprintf(stderr, "content of %s is wrong\n", path);
	return ok;
}

static void on_usr1(int sig)
{
	(void)sig;
	long n = atomic_fetch_add(&sig_count, 1);
	/* Through the shim, from a signal handler. */
	if (pwrite(sig_fd, "s", 1, n) != 1)
		atomic_fetch_add(&failures, 1);
}

struct writer {
	int idx;
	pthread_t th;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char path[PATH_MAX], *b = malloc(CHUNK);
	snprintf(path, sizeof(path), "%s/w%d", dir, w->idx);
	int mode = w->idx % 3;
	FILE *f = NULL;
	int fd = -1;
	if (mode == 2)
		f = fopen(path, "w");
	else
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (uint64_t off = 0; off < PER_THREAD; off += CHUNK) {
		fill(b, CHUNK, (unsigned)w->idx, off);
		ssize_t r = mode == 0	? write(fd, b, CHUNK)
			    : mode == 1 ? pwrite(fd, b, CHUNK, (off_t)off)
					: (ssize_t)fwrite(b, 1, CHUNK, f);
		if (r != CHUNK)
			atomic_fetch_add(&failures, 1);
	}
	if (f)
		fclose(f);
	else
		close(fd);
	free(b);
	return NULL;
}

static void *shared_main(void *arg)
{
	int half = *(int *)arg;
	char *b = malloc(CHUNK);
	uint64_t base = (uint64_t)half * PER_THREAD;
	for (uint64_t off = base; off < base + PER_THREAD; off += CHUNK) {
		fill(b, CHUNK, 99, off);
		if (pwrite(shared_fd, b, CHUNK, (off_t)off) != CHUNK)
			atomic_fetch_add(&failures, 1);
	}
	free(b);
	return NULL;
}

static void *churn_main(void *arg)
{
	(void)arg;
	char path[PATH_MAX], *b = malloc(100000);
	for (int i = 0; !atomic_load(&stop) && i < 400; i++) {
		snprintf(path, sizeof(path), "%s/churn%d", dir, i % 8);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		fill(b, 100000, 5, 0);
		if (write(fd, b, 100000) != 100000)
			atomic_fetch_add(&failures, 1);
		int d = dup(fd);
		close(fd);
		close(d);
	}
	free(b);
	return NULL;
}

static void *fork_main(void *arg)
{
	(void)arg;
	/* The child of a multithreaded fork may call only
	 * async-signal-safe functions: its path and buffer are made before
	 * the fork (a malloc in the child hung on an allocator lock another
	 * thread held at fork, under GCC 12's ASan). */
	static char b[CHUNK];
	char path[PATH_MAX];
	for (int i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "%s/child%d", dir, i);
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			int ok = fd >= 0;
			for (uint64_t off = 0; ok && off < MiB; off += CHUNK) {
				fill(b, CHUNK, 40, off);
				ok = write(fd, b, CHUNK) == CHUNK;
			}
			ok = ok && close(fd) == 0;
			_exit(ok ? 0 : 1);
		}
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			atomic_fetch_add(&failures, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	/* The shim reads its configuration when the program starts. */
	if (!getenv("FLUSHKIT_MAX_DIRTY")) {
		setenv("FLUSHKIT_FLUSH_AFTER", "262144", 1);
		setenv("FLUSHKIT_MAX_DIRTY", "2097152", 1);
		setenv("FLUSHKIT_DROP_CACHE", "1", 1);
		execv("/proc/self/exe", argv);
		perror("execv");
		return 1;
	}
	(void)argc;
	dir = fkt_tmpdir();
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/shared", dir);
	shared_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	snprintf(path, sizeof(path), "%s/sig", dir);
	sig_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(shared_fd >= 0 && sig_fd >= 0);
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	struct writer w[8];
	pthread_t sh[2], churn, forker;
	int halves[2] = {0, 1};
	for (int i = 0; i < 8; i++) {
		w[i].idx = i;
		pthread_create(&w[i].th, NULL, writer_main, &w[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&sh[i], NULL, shared_main, &halves[i]);
	pthread_create(&churn, NULL, churn_main, NULL);
	pthread_create(&forker, NULL, fork_main, NULL);
	long sent = 0;
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 8; i++)
			if (pthread_kill(w[i].th, SIGUSR1) == 0)
				sent++;
		usleep(500);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(w[i].th, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(sh[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(churn, NULL);
	pthread_join(forker, NULL);

	CHECK_EQ(atomic_load(&failures), 0);
	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "%s/w%d", dir, i);
		CHECK(verify(path, PER_THREAD, (unsigned)i));
	}
	snprintf(path, sizeof(path), "%s/shared", dir);
	CHECK(verify(path, 2 * PER_THREAD, 99));
	for (int i = 0; i < 20; i++) {
		snprintf(path, sizeof(path), "%s/child%d", dir, i);
		CHECK(verify(path, MiB, 40));
	}
	struct stat st;
	CHECK(fstat(sig_fd, &st) == 0 && st.st_size == atomic_load(&sig_count));
	close(shared_fd);
	close(sig_fd);

	uint64_t hints, waits, bytes;
	shim_counters(&hints, &waits, &bytes);
	printf("signals %ld handled %ld; shim: hints %llu waits %llu bytes "
	       "%llu\n",
	       sent, atomic_load(&sig_count), (unsigned long long)hints,
	       (unsigned long long)waits, (unsigned long long)bytes);
	CHECK(hints > 0);
	CHECK(waits > 0);
	CHECK(bytes >= 10ull * PER_THREAD);
	return fkt_done();
}
