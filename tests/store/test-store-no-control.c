// SPDX-License-Identifier: MIT
/*
 * test-store-no-control.c - a loaded store whose control file is gone is
 * corrupt, not new (store invariant S9): fk_store_open fails with
 * -FK_ECORRUPT, a log line names the missing control file, and nothing
 * in the directory changes, whatever the create mode.
 *
 * Regression: a missing control file meant "new store": the open
 * rewrote catalog (losing every table) and then failed with a bare
 * -ENOENT.
 *
 *  1. A store with a bulk-loaded table, closed cleanly, control deleted.
 *  2. The same after a kill -9 in the middle of commits (the WAL holds
 *     records past the last checkpoint), control deleted.
 *  3. After a kill -9, the catalog deleted (the control file kept): also
 *     -FK_ECORRUPT, the log naming the catalog, nothing changed; before,
 *     -ENOENT, the answer for a directory with no store at all.
 * Each is opened with every create mode; a listing of the directory with
 * sizes, mtimes and checksums is the same before and after.
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROW 32
#define NLOAD 5000

static struct fk_store_opts opts(void)
{
	struct fk_store_opts o;
	fk_store_opts_init(&o);
	o.shared_buffers_bytes = 256 * FK_PAGE_SIZE;
	o.segment_bytes = 16 * FK_PAGE_SIZE;
	o.wal_segment_bytes = 256 << 10;
	o.checkpoint_timeout_ms = 3600000;
	o.log = fkt_store_log;
	return o;
}

static void fill(void *arg, uint64_t rowno, void *row)
{
	(void)arg;
	memset(row, 0, ROW);
	memcpy(row, &rowno, 8);
}

static void load(const char *dir)
{
	struct fk_store_opts o = opts();
	struct fk_store *s = NULL;
	uint32_t id;
	o.create_mode = FK_STORE_CREATE_IF_MISSING;
	CHECK_EQ(fk_store_open(dir, &o, &s), 0);
	if (!s)
		exit(1);
	CHECK_EQ(fk_store_create_table(s, "accounts", ROW, &id), 0);
	CHECK_EQ(fk_store_bulk_load(s, id, NLOAD, fill, NULL), 0);
	CHECK_EQ(fk_store_close(s), 0);
}

/* Commit updates in a child until it is killed. */
static void crash(const char *dir)
{
	int p[2];
	uint64_t n = 0, v;
	if (pipe(p))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		struct fk_store_opts o = opts();
		struct fk_store *s = NULL;
		struct fk_batch b;
		uint32_t id;
		o.log = NULL;
		close(p[0]);
		if (fk_store_open(dir, &o, &s) ||
		    fk_store_table(s, "accounts", &id, NULL))
			_exit(2);
		fk_batch_init(&b);
		for (uint64_t i = 0;; i++) {
			fk_batch_reset(&b);
			fk_batch_add_i64(&b, id, i % NLOAD, 8, 1, NULL);
			if (fk_store_commit(s, &b, NULL) ||
			    write(p[1], &i, 8) != 8)
				_exit(3);
		}
	}
	close(p[1]);
	while (n < 200 && read(p[0], &v, 8) == 8)
		n = v + 1;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(p[0]);
}

/* @nmodes: how many of the create modes below apply (FK_STORE_CREATE_NEW
 * on a directory with a control file is -EEXIST, rightly). */
static void expect_corrupt(const char *dir, const char *label,
			   const char *logged, size_t nmodes)
{
	static const struct {
		int mode;
		const char *name;
	} modes[] = {
	    {FK_STORE_OPEN_EXISTING, "open-existing"},
	    {FK_STORE_CREATE_IF_MISSING, "create-if-missing"},
	    {FK_STORE_CREATE_NEW, "create-new"},
	};
	for (size_t i = 0; i < nmodes && i < sizeof(modes) / sizeof(modes[0]);
	     i++) {
		struct fk_store_opts o = opts();
		struct fk_store *s = NULL;
		o.create_mode = modes[i].mode;
		char *before = fkt_dir_digest(dir);
		fkt_store_log_clear();
		int r = fk_store_open(dir, &o, &s);
		char *after = fkt_dir_digest(dir);
		printf("%s, %s: open: %s\n%s", label, modes[i].name,
		       fk_strerror(r), fkt_store_log_text());
		CHECK_EQ(r, -FK_ECORRUPT);
		CHECK(s == NULL);
		if (s)
			fk_store_close(s);
		CHECK(fkt_store_log_has(logged));
		CHECK(before && after);
		if (before && after && strcmp(before, after))
			printf("directory changed:\nbefore:\n%safter:\n%s",
			       before, after);
		CHECK(before && after && !strcmp(before, after));
		free(before);
		free(after);
	}
}

int main(void)
{
	char dir[4200], path[4300];

	snprintf(dir, sizeof(dir), "%s/clean", fkt_tmpdir());
	load(dir);
	snprintf(path, sizeof(path), "%s/control", dir);
	CHECK_EQ(unlink(path), 0);
	expect_corrupt(dir, "closed cleanly",
		       "control file 'control' is missing", 3);

	snprintf(dir, sizeof(dir), "%s/crashed", fkt_tmpdir());
	load(dir);
	crash(dir);
	snprintf(path, sizeof(path), "%s/control", dir);
	CHECK_EQ(unlink(path), 0);
	expect_corrupt(dir, "after kill -9",
		       "control file 'control' is missing", 3);

	/* A store with its control file but without its catalog: damaged
	 * too (-FK_ECORRUPT naming the catalog), never "no store" (-ENOENT,
	 * which bench tpcb answered with "create one with -i"). */
	snprintf(dir, sizeof(dir), "%s/nocatalog", fkt_tmpdir());
	load(dir);
	crash(dir);
	snprintf(path, sizeof(path), "%s/catalog", dir);
	CHECK_EQ(unlink(path), 0);
	expect_corrupt(dir, "catalog missing, after kill -9",
		       "catalog file 'catalog' is missing", 2);
	return fkt_done();
}
