// SPDX-License-Identifier: MIT
/*
 * fuzz-recovery.c - libFuzzer target: a whole store directory through
 * recovery.  The input becomes the WAL after the last checkpoint record
 * of a small prepared store (fuzz-store.h, marked as crashed), then
 * fk_store_open runs recovery: the segment reader, record validation,
 * replay of COMMIT records (full-page images, SET / ADD_I64 / APPEND on
 * any table, row and offset), the WAL cut and the end-of-recovery
 * checkpoint.  Errors are return values; never a crash, a hang or a
 * sanitizer report.  When the open succeeds the store must be usable:
 * one more commit, a clean close, and a second open that sees the same
 * row counts (recovery is idempotent) or, after nonsense with a valid
 * CRC that open's checks catch only then, fails with -FK_ECORRUPT.
 *
 * Input: byte 0 steers the harness.
 *   bit 2 set: the next 32 bytes replace the control file's checkpoint
 *          LSN, redo LSN and the row counts of tables 1 and 2 (its CRC
 *          recomputed): recovery from anywhere, any row counts.
 *   bit 1 set: the input's last 8 KiB replace account page 1 on disk
 *          (torn or corrupt pages; reads must give the row or
 *          -FK_ECORRUPT, never anything else).
 *   bit 0 set: "raw": the rest is written as-is at the end of the WAL
 *          (the reader must reject it or stop at it).
 *   bit 0 clear: "framed": the rest is a list of chunks
 *          {u8 type, u8 flags, u16 len, payload[len]}; each becomes a
 *          record with a correct header (LSN, prev LSN, CRC) unless the
 *          chunk's flags spoil it: bit 0 the CRC, bit 1 the LSN, bit 2
 *          the prev LSN, bit 3 the length (+8).  A record that does not
 *          fit the segment is preceded by a PAD and goes to the next one
 *          (flags bit 4: with a wrong segment header there).
 * The prepared store lives in fk-fuzz-recovery-PID under $FK_FUZZ_TMP,
 * else /dev/shm, else /var/tmp; removed at exit, or by the next run if
 * its process is gone (libFuzzer exits without atexit handlers).
 */
#include "fktest.h"
#include "fuzz-store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct snap_file {
	char name[64]; /* relative: control, base/1.0, wal/... */
	uint8_t *data;
	size_t len;
};

static char top[4096], work[4200];
static struct snap_file files[64];
static int nfiles;
static uint64_t wal_end;   /* LSN after the checkpoint record */
static uint64_t last_prev; /* LSN of the checkpoint record */
static int ready = -1;

static int slurp(const char *dir, const char *rel)
{
	char p[8400];
	size_t len;
	snprintf(p, sizeof(p), "%s/%.300s", dir, rel);
	if (nfiles == (int)(sizeof(files) / sizeof(files[0])))
		return -1;
	uint8_t *d = (uint8_t *)fkt_read_file(p, &len);
	if (!d)
		return -1;
	snprintf(files[nfiles].name, sizeof(files[nfiles].name), "%s", rel);
	files[nfiles].data = d;
	files[nfiles].len = len;
	nfiles++;
	return 0;
}

static int slurp_dir(const char *dir, const char *sub)
{
	char p[8400], rel[300];
	snprintf(p, sizeof(p), "%s/%s", dir, sub);
	DIR *d = opendir(p);
	struct dirent *de;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) > 40)
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", sub, de->d_name);
		if (slurp(dir, rel)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return 0;
}

static struct snap_file *find(const char *rel)
{
	for (int i = 0; i < nfiles; i++)
		if (!strcmp(files[i].name, rel))
			return &files[i];
	return NULL;
}

static void cleanup(void)
{
	if (top[0])
		fkt_rm_rf(top);
}

/* libFuzzer ends with _Exit (no atexit): remove the directories of
 * earlier runs whose process is gone. */
static void remove_stale(const char *t)
{
	DIR *d = opendir(t);
	struct dirent *de;
	char p[4300];
	while (d && (de = readdir(d))) {
		int pid;
		if (sscanf(de->d_name, "fk-fuzz-recovery-%d", &pid) != 1 ||
		    pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(p, sizeof(p), "%s/%.200s", t, de->d_name);
		fkt_rm_rf(p);
	}
	if (d)
		closedir(d);
}

static int prepare(void)
{
	const char *t = getenv("FK_FUZZ_TMP");
	char prep[4200];
	struct fk_control c;
	if (!t)
		t = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/var/tmp";
	remove_stale(t);
	snprintf(top, sizeof(top), "%s/fk-fuzz-recovery-%d", t, (int)getpid());
	fkt_rm_rf(top);
	if (mkdir(top, 0700))
		return -1;
	atexit(cleanup);
	snprintf(prep, sizeof(prep), "%s/prep", top);
	snprintf(work, sizeof(work), "%s/work", top);
	if (fuzz_store_build(prep))
		return -1;
	if (slurp(prep, "control") || slurp(prep, "catalog") ||
	    slurp_dir(prep, "base") || slurp_dir(prep, "wal"))
		return -1;
	/* Crashed, so recovery replays and cuts. */
	struct snap_file *cf = find("control");
	if (fk_control_decode(&c, cf->data, cf->len))
		return -1;
	c.state = 2;
	c.crc = fk_crc32c(0, &c, offsetof(struct fk_control, crc));
	memcpy(cf->data, &c, sizeof(c));
	/* The end of the WAL: just after the shutdown checkpoint record. */
	char rel[64];
	snprintf(rel, sizeof(rel), "wal/%016llX",
		 (unsigned long long)(c.checkpoint_lsn / FUZZ_WALSEG));
	struct snap_file *sf = find(rel);
	if (!sf || sf->len != FUZZ_WALSEG)
		return -1;
	long n = fk_wal_rec_check(sf->data + c.checkpoint_lsn % FUZZ_WALSEG,
				  FUZZ_WALSEG - c.checkpoint_lsn % FUZZ_WALSEG,
				  c.checkpoint_lsn, 0);
	if (n < 0)
		return -1;
	last_prev = c.checkpoint_lsn;
	wal_end = c.checkpoint_lsn + FK_WAL_ALIGN((uint64_t)n);
	/* The checkpointer preallocates the next segments when it gets to
	 * it: make them exist always, zero-filled, so every run sees the
	 * same directory (inputs replay the same way). */
	for (uint64_t k = 1; k < 3; k++) {
		snprintf(rel, sizeof(rel), "wal/%016llX",
			 (unsigned long long)(wal_end / FUZZ_WALSEG + k));
		if (find(rel))
			continue;
		if (nfiles == (int)(sizeof(files) / sizeof(files[0])))
			return -1;
		snprintf(files[nfiles].name, sizeof(files[nfiles].name), "%s",
			 rel);
		files[nfiles].data = calloc(1, FUZZ_WALSEG);
		files[nfiles].len = FUZZ_WALSEG;
		if (!files[nfiles++].data)
			return -1;
	}
	return 0;
}

/* The WAL segments being built for one input. */
struct segs {
	uint64_t first;	 /* segment number of seg[0] */
	uint8_t *seg[3]; /* NULL: file absent */
};

static uint8_t *seg_at(struct segs *w, uint64_t lsn)
{
	uint64_t i = lsn / FUZZ_WALSEG - w->first;
	return i < 3 ? w->seg[i] : NULL;
}

static void put(struct segs *w, uint64_t lsn, const void *p, size_t len)
{
	if (len) /* an empty payload may end at the last segment's end */
		memcpy(seg_at(w, lsn) + lsn % FUZZ_WALSEG, p, len);
}

static void frame(struct segs *w, const uint8_t *in, size_t len)
{
	uint64_t pos = wal_end, prev = last_prev;
	while (len >= 4) {
		uint8_t type = in[0], fl = in[1];
		uint16_t plen;
		memcpy(&plen, in + 2, 2);
		in += 4;
		len -= 4;
		if (plen > len)
			plen = (uint16_t)len;
		uint64_t total = FK_WAL_REC_HDR + (uint64_t)plen;
		uint64_t off = pos % FUZZ_WALSEG;
		if (off == 0)
			return;
		if (FUZZ_WALSEG - off < FK_WAL_ALIGN(total)) {
			/* PAD (or a short tail), then the next segment. */
			uint64_t rem = FUZZ_WALSEG - off;
			if (rem >= FK_WAL_REC_HDR) {
				struct fk_wal_rec h;
				fk_wal_rec_fill(&h, (uint32_t)rem, FK_WAL_PAD,
						pos, prev, 0);
				put(w, pos, &h, sizeof(h));
				prev = pos;
			}
			pos += rem;
			if (!seg_at(w, pos) ||
			    FK_WAL_ALIGN(total) > FUZZ_WALSEG - FK_WAL_SEG_HDR)
				return;
			struct fk_wal_seg sh;
			fk_wal_seg_fill(&sh,
					pos / FUZZ_WALSEG + ((fl & 16) ? 7 : 0),
					FUZZ_WALSEG);
			put(w, pos, &sh, sizeof(sh));
			pos += FK_WAL_SEG_HDR;
		}
		struct fk_wal_rec h;
		fk_wal_rec_fill(&h, (uint32_t)total + ((fl & 8) ? 8 : 0), type,
				pos + ((fl & 2) ? 8 : 0),
				prev ^ ((fl & 4) ? 8 : 0),
				fk_wal_payload_crc(in, plen));
		if (fl & 1)
			h.crc ^= 1;
		put(w, pos, &h, sizeof(h));
		put(w, pos + FK_WAL_REC_HDR, in, plen);
		if (getenv("FK_FUZZ_VERBOSE"))
			fprintf(stderr, "record type %u at %llu, %llu bytes\n",
				type, (unsigned long long)pos,
				(unsigned long long)total);
		in += plen;
		len -= plen;
		prev = pos;
		pos += FK_WAL_ALIGN(total);
	}
}

static int write_file(const char *rel, const void *p, size_t len)
{
	char path[8400];
	snprintf(path, sizeof(path), "%s/%.63s", work, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	ssize_t n = len ? write(fd, p, len) : 0;
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static void log_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "store: %s\n", line);
}

static int rows_of(struct fk_store *s, uint64_t *a, uint64_t *h)
{
	if (fk_store_table_rows(s, 1, a) || fk_store_table_rows(s, 2, h))
		return -1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[8400];
	if (ready < 0)
		ready = prepare() == 0;
	if (!ready) {
		fprintf(stderr, "fuzz-recovery: cannot prepare the store\n");
		abort();
	}
	if (size < 1)
		return 0;

	/* The directory, fresh from the snapshot. */
	fkt_rm_rf(work);
	snprintf(path, sizeof(path), "%s/base", work);
	if (mkdir(work, 0700) || mkdir(path, 0700))
		abort();
	snprintf(path, sizeof(path), "%s/wal", work);
	if (mkdir(path, 0700))
		abort();
	struct segs w;
	w.first = wal_end / FUZZ_WALSEG;
	for (int i = 0; i < 3; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "wal/%016llX",
			 (unsigned long long)(w.first + (uint64_t)i));
		struct snap_file *f = find(rel);
		w.seg[i] =
		    f && f->len == FUZZ_WALSEG ? malloc(FUZZ_WALSEG) : NULL;
		if (w.seg[i])
			memcpy(w.seg[i], f->data, FUZZ_WALSEG);
	}
	if (!w.seg[0])
		abort();
	/* Bit 1: the input's last 8 KiB are account page 1 on disk. */
	const uint8_t *page = NULL;
	uint8_t mode = data[0];
	const uint8_t *in = data + 1;
	size_t len = size - 1;
	if ((mode & 2) && len >= FK_PAGE_SIZE) {
		page = in + len - FK_PAGE_SIZE;
		len -= FK_PAGE_SIZE;
	}
	/* Bit 2: the next 32 bytes are the control file's checkpoint and
	 * redo LSNs and the row counts of tables 1 and 2 (CRC fixed). */
	struct fk_control ctl;
	int ctl_set = 0;
	if ((mode & 4) && len >= 32) {
		struct snap_file *cf = find("control");
		if (fk_control_decode(&ctl, cf->data, cf->len))
			abort();
		memcpy(&ctl.checkpoint_lsn, in, 8);
		memcpy(&ctl.redo_lsn, in + 8, 8);
		memcpy(&ctl.rows[1], in + 16, 16);
		ctl.crc = fk_crc32c(0, &ctl, offsetof(struct fk_control, crc));
		ctl_set = 1;
		in += 32;
		len -= 32;
	}
	if (mode & 1) {
		size_t off = wal_end % FUZZ_WALSEG, n = len;
		if (n > FUZZ_WALSEG - off)
			n = FUZZ_WALSEG - off;
		memcpy(w.seg[0] + off, in, n);
	} else {
		frame(&w, in, len);
	}
	for (int i = 0; i < nfiles; i++) {
		int k = -1;
		for (int j = 0; j < 3; j++) {
			char rel[64];
			snprintf(rel, sizeof(rel), "wal/%016llX",
				 (unsigned long long)(w.first + (uint64_t)j));
			if (!strcmp(rel, files[i].name))
				k = j;
		}
		const void *d = k >= 0 ? w.seg[k] : files[i].data;
		if (ctl_set && !strcmp(files[i].name, "control"))
			d = &ctl;
		if (write_file(files[i].name, d, files[i].len))
			abort();
	}
	if (page) {
		snprintf(path, sizeof(path), "%s/base/1.0", work);
		int fd = open(path, O_WRONLY);
		if (fd < 0 || pwrite(fd, page, FK_PAGE_SIZE, FK_PAGE_SIZE) !=
				  (ssize_t)FK_PAGE_SIZE)
			abort();
		close(fd);
	}
	for (int i = 0; i < 3; i++)
		free(w.seg[i]);

	/* Recovery. */
	struct fk_store_opts o = fuzz_store_opts();
	struct fk_store *s = NULL;
	int verbose = getenv("FK_FUZZ_VERBOSE") != NULL;
	if (verbose)
		o.log = log_line;
	int r = fk_store_open(work, &o, &s);
	if (verbose && r)
		fprintf(stderr, "open: %s\n", fk_strerror(r));
	if (r)
		return 0; /* refused: fine, as long as it did not crash */
	uint64_t acc, hist, acc2, hist2;
	if (rows_of(s, &acc, &hist))
		abort();
	/* Every row of an open store has a 32-bit block number. */
	const uint64_t rpp_acc = (FK_PAGE_SIZE - FK_PAGE_HDR) / 64;
	const uint64_t rpp_hist = (FK_PAGE_SIZE - FK_PAGE_HDR) / 48;
	if ((acc && (acc - 1) / rpp_acc > UINT32_MAX) ||
	    (hist && (hist - 1) / rpp_hist > UINT32_MAX)) {
		fprintf(stderr, "rows %llu/%llu past 32-bit blocks\n",
			(unsigned long long)acc, (unsigned long long)hist);
		abort();
	}
	/* Reads: a row, or -FK_ECORRUPT for a page that fails its
	 * checks; nothing else (the first rows, the last ones). */
	for (uint32_t t = 1; t <= 2; t++) {
		uint64_t n = t == 1 ? acc : hist;
		uint8_t row[64];
		for (uint64_t i = 0; i < n; i++) {
			if (i == 1000 && n > 1100)
				i = n - 100;
			int e = fk_store_read(s, t, i, row);
			if (e && e != -FK_ECORRUPT) {
				fprintf(stderr, "read %u/%llu: %s\n", t,
					(unsigned long long)i, fk_strerror(e));
				abort();
			}
		}
	}
	if (verbose) {
		struct fk_store_stats st;
		fk_store_get_stats(s, &st);
		fprintf(stderr, "open: %llu records replayed, rows %llu/%llu\n",
			(unsigned long long)st.recovery_records,
			(unsigned long long)acc, (unsigned long long)hist);
	}
	/* Usable: one more commit (it may fail on a page recovery left
	 * corrupt, with an error), then a clean close. */
	struct fk_batch b;
	uint8_t h[48] = {0};
	fk_batch_init(&b);
	fk_batch_append_copy(&b, 2, h, sizeof(h), NULL);
	int rc = fk_store_commit(s, &b, NULL);
	fk_batch_release(&b);
	if (rc && rc != -FK_ECORRUPT && rc != -ENOBUFS && rc != -E2BIG) {
		fprintf(stderr, "commit after recovery: %s\n", fk_strerror(rc));
		abort();
	}
	r = fk_store_close(s);
	if (r) {
		fprintf(stderr, "close after recovery: %s\n", fk_strerror(r));
		abort();
	}
	/* Idempotent: a second open sees the same store. */
	r = fk_store_open(work, &o, &s);
	if (r == -FK_ECORRUPT) {
		/* A CRC-valid record of nonsense (an append far past the
		 * rows) can leave what open's own checks then refuse: an
		 * error, as it should be, not a crash. */
		if (verbose)
			fprintf(stderr, "second open: %s\n", fk_strerror(r));
		return 0;
	}
	if (r) {
		fprintf(stderr, "second open: %s\n", fk_strerror(r));
		abort();
	}
	if (rows_of(s, &acc2, &hist2) || acc2 != acc ||
	    hist2 != hist + (rc == 0)) {
		fprintf(stderr, "rows %llu/%llu then %llu/%llu\n",
			(unsigned long long)acc, (unsigned long long)hist,
			(unsigned long long)acc2, (unsigned long long)hist2);
		abort();
	}
	if (fk_store_close(s))
		abort();
	return 0;
}
