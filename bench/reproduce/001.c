// SPDX-License-Identifier: MIT
/*
 * 001.c - seed 001, many fsyncs in flight (Dave Chinner, linux-mm 2014:
 * fs_mark with the XFS aio_fsync patch, 16 CPUs, SSDs).
 *
 * The seed: fs_mark creating small files with many threads on xfs, one
 * fsync per file (-S 1) against aio fsync (the fsyncs of a batch issued
 * together: several thousand dispatching concurrently); wall time 3m10s-
 * 4m58s, 30k-110k IOPS, 13.5k-21k files/s, from empty memory and (~3m45s)
 * with memory full of clean pages.
 *
 * Ours (on the ssd model by default):
 *   seed's -S 1 (sync fsync)  -> A: bench fsmark -t 16 -n 100 -s 4096 -k
 *                                -S 1 on xfs
 *   seed's aio_fsync          -> B: the same with -S batch (fk_fsync_batch:
 *                                the files' fsyncs in flight together)
 *   "from empty memory"       -> cold: the file system remounted before
 *                                each run (no global drop_caches)
 *   "memory full of clean pages" -> warm: a 1 GiB file read back into the
 *                                page cache before each run
 *   the seed's fs_mark size and 16 CPUs are not ours: 16 threads x 100
 *   files of 4 KiB per run, 5 runs a side, alternating.
 */
#include "reproduce.h"

/* ---- 001: many fsyncs in flight -------------------------------------- */

int seed_001(struct ctx *c, struct disk *d)
{
	unsigned runs = c->runs ? c->runs : c->quick ? 2 : 5;
	int threads = c->quick ? 4 : 16, files = c->quick ? 25 : 100;
	uint64_t fill = c->quick ? (16u << 20) : (1024u << 20);
	static const char *const cond[2] = {"cold", "warm"};
	struct vals iops[2][2], wall[2][2];
	memset(iops, 0, sizeof(iops));
	memset(wall, 0, sizeof(wall));

	/* The clean pages for "warm": a file written and fsynced once,
	 * read back into the page cache before each warm run. */
	char fillpath[1200];
	snprintf(fillpath, sizeof(fillpath), "%s/clean-pages", d->mnt);
	int fd = open(fillpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	static char buf[1 << 20];
	memset(buf, 0x6b, sizeof(buf));
	for (uint64_t off = 0; off < fill; off += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			break;
	if (fsync(fd)) {
		cli_error("fsync '%s': %s", fillpath, strerror(errno));
		close(fd);
		return -EIO;
	}
	close(fd); /* the remounts need the file system unused */

	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		for (unsigned r = 0; r < 2 * runs && !rc; r++) {
			int side = (r % 2) ^ ((r / 2) % 2);
			char dir[2300], fsd[1200];
			snprintf(dir, sizeof(dir), "%s/%s-%c", c->seed_dir,
				 cond[k], side ? 'b' : 'a');
			if (mkdir_p1(dir)) {
				rc = -EIO;
				break;
			}
			snprintf(fsd, sizeof(fsd), "%s/fsm", d->mnt);
			rm_tree(fsd);
			/* From empty memory: this file system's pages out of
			 * the page cache (a remount; a global drop_caches
			 * would empty everyone's on a shared machine). */
			if (disk_remount(d)) {
				rc = -EIO;
				break;
			}
			if (k == 1) {
				fd = open(fillpath, O_RDONLY | O_CLOEXEC);
				while (fd >= 0 &&
				       read(fd, buf, sizeof(buf)) > 0)
					;
				if (fd >= 0)
					close(fd);
			}
			struct child_argv a = CHILD_ARGV_INIT;
			child_argv_add(&a, "flushkit");
			child_argv_add(&a, "bench");
			child_argv_add(&a, "fsmark");
			child_argv_add(&a, "-d");
			child_argv_add(&a, "%s", fsd);
			child_argv_add(&a, "-t");
			child_argv_add(&a, "%d", threads);
			child_argv_add(&a, "-n");
			child_argv_add(&a, "%d", files);
			child_argv_add(&a, "-s");
			child_argv_add(&a, "4096");
			child_argv_add(&a, "-S");
			child_argv_add(&a, "%s", side ? "batch" : "1");
			child_argv_add(&a, "-k");
			child_argv_add(&a, "--results=%s", dir);
			struct blk_counts b0, b1;
			blk_read(d, &b0);
			double t0 = now_s();
			char logname[64];
			snprintf(logname, sizeof(logname), "%s-%c-%u.log",
				 cond[k], side ? 'b' : 'a', r / 2 + 1);
			rc = run_args(c, logname, &a);
			double dt = now_s() - t0;
			blk_read(d, &b1);
			vals_add(&iops[k][side], (b1.writes - b0.writes) / dt);
			vals_add(&wall[k][side], dt);
		}
	}
	unlink(fillpath);
	if (rc)
		return rc;

	struct table t;
	char ta[256], tb[256];
	snprintf(ta, sizeof(ta),
		 "bench fsmark -t %d -n %d -s 4096 -k -S 1 (on xfs)", threads,
		 files);
	snprintf(tb, sizeof(tb), "the same with -S batch");
	if (table_open(c, &t, "001: many fsyncs in flight (fs_mark)", ta, tb))
		return -EIO;
	for (int k = 0; k < 2; k++) {
		char da[2300], db[2300];
		snprintf(da, sizeof(da), "%s/%s-a", c->seed_dir, cond[k]);
		snprintf(db, sizeof(db), "%s/%s-b", c->seed_dir, cond[k]);
		table_note(&t, "%s",
			   k ? "\nWith the page cache holding clean "
			       "pages (warm):\n"
			     : "From empty memory (cold: the file "
			       "system remounted before each run):\n");
		table_head(&t, "A", "B (aio fsync, 6 runs)");
		struct vals va, vb;
		table_row(&t, "wall time (s)", "—",
			  k ? "~225 (3m45s)" : "190-298 (3m10s-4m58s)", '-',
			  &wall[k][0], &wall[k][1]);
		summary_vals(da, "sys_s", &va);
		summary_vals(db, "sys_s", &vb);
		table_row(&t, "sys time (s)", "—", "672-766", '?', &va, &vb);
		table_row(&t, "write IOPS", "—", "30,000-85,000", '+',
			  &iops[k][0], &iops[k][1]);
		summary_vals(da, "tps", &va);
		summary_vals(db, "tps", &vb);
		table_row(&t, "files/s", "—", "13,500-21,000", '+', &va, &vb);
		table_end(&t);
		struct fk_stats_summary sa, sb;
		fk_stats_summarize(va.v, va.n, &sa);
		fk_stats_summarize(vb.v, vb.n, &sb);
		table_note(&t,
			   "Run-to-run spread of files/s (stddev/mean): A "
			   "%.1f%%, B %.1f%% (seed: %.1f%% over its 6 runs).",
			   sa.mean ? 100 * sa.stddev / sa.mean : NAN,
			   sb.mean ? 100 * sb.stddev / sb.mean : NAN, 17.2);
	}
	char d1[2300], d2[2300];
	snprintf(d1, sizeof(d1), "%s/cold-a", c->seed_dir);
	snprintf(d2, sizeof(d2), "%s/cold-b", c->seed_dir);
	const char *dirs[] = {d1, d2};
	rc = make_report(c, dirs, 2);
	table_close(&t);
	return rc;
}
