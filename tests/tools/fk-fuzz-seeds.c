// SPDX-License-Identifier: MIT
/*
 * fk-fuzz-seeds - write the seed corpora of the fuzz targets
 * (tests/fuzz/fuzz-*.c) from a real store: fk-fuzz-seeds OUTDIR makes
 * OUTDIR/fuzz-NAME/ for wal-record, page, control, catalog and recovery,
 * each a few dozen small files, valid inputs taken from the store that
 * fuzz-store.h builds and invalid ones derived from them.  Run once to
 * (re)make tests/fuzz/corpus/; the fuzz runs add their own finds.
 */
#include "../fuzz/fuzz-store.h"
#include "fktest.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *out;
static int written;

static void seed(const char *target, const char *name, uint8_t ctl,
		 const void *p, size_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/fuzz-%s", out, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fuzz-%s/%s", out, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(&ctl, 1, 1, f) != 1 ||
	    (len && fwrite(p, 1, len, f) != len)) {
		perror(path);
		exit(1);
	}
	fclose(f);
	written++;
}

static uint8_t *load(const char *dir, const char *rel, size_t *len)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	uint8_t *d = (uint8_t *)fkt_read_file(p, len);
	if (!d) {
		fprintf(stderr, "cannot read %s\n", p);
		exit(1);
	}
	return d;
}

/* Records of the prepared store's WAL, in order. */
struct rec {
	uint64_t lsn;
	const uint8_t *p;
	uint32_t len;
	uint8_t type;
	int nfpi;
};

/* A recovery chunk: {type, flags, u16 len, payload}. */
static size_t chunk(uint8_t *o, uint8_t type, uint8_t fl, const void *p,
		    size_t len)
{
	uint16_t l = (uint16_t)len;
	o[0] = type;
	o[1] = fl;
	memcpy(o + 2, &l, 2);
	memcpy(o + 4, p, len);
	return 4 + len;
}

int main(int argc, char **argv)
{
	char dir[4200], name[64];
	struct rec recs[256];
	int nrec = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: fk-fuzz-seeds OUTDIR\n");
		return 2;
	}
	out = argv[1];
	mkdir(out, 0755);
	snprintf(dir, sizeof(dir), "%s/store", fkt_tmpdir());
	if (fuzz_store_build(dir)) {
		fprintf(stderr, "cannot build the store\n");
		return 1;
	}

	/* ---- control ---- */
	size_t clen, catlen;
	uint8_t *ctl = load(dir, "control", &clen);
	struct fk_control c;
	if (fk_control_decode(&c, ctl, clen)) {
		fprintf(stderr, "control does not decode\n");
		return 1;
	}
	seed("control", "valid", 0, ctl, clen);
	seed("control", "valid-fixcrc", 1, ctl, clen);
	seed("control", "short", 0, ctl, clen - 9);
	seed("control", "empty", 0, ctl, 0);
	{
		struct fk_control m;
		const struct {
			const char *n;
			size_t off;
			uint64_t v;
			int w;
		} muts[] = {
		    {"walseg-zero", offsetof(struct fk_control, wal_seg_bytes),
		     0, 8},
		    {"walseg-huge", offsetof(struct fk_control, wal_seg_bytes),
		     1ull << 40, 8},
		    {"walseg-odd", offsetof(struct fk_control, wal_seg_bytes),
		     65537, 8},
		    {"seg-zero", offsetof(struct fk_control, seg_bytes), 0, 8},
		    {"seg-one-page", offsetof(struct fk_control, seg_bytes),
		     8192, 8},
		    {"state-3", offsetof(struct fk_control, state), 3, 4},
		    {"state-crashed", offsetof(struct fk_control, state), 2, 4},
		    {"version-2", offsetof(struct fk_control, version), 2, 4},
		    {"redo-past-ckpt", offsetof(struct fk_control, redo_lsn),
		     ~0ull, 8},
		    {"rows-huge", offsetof(struct fk_control, rows) + 8, ~0ull,
		     8},
		};
		for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
			memcpy(&m, &c, sizeof(m));
			memcpy((uint8_t *)&m + muts[i].off, &muts[i].v,
			       muts[i].w);
			seed("control", muts[i].n, 1, &m, sizeof(m));
		}
	}

	/* ---- catalog ---- */
	uint8_t *cat = load(dir, "catalog", &catlen);
	seed("catalog", "valid", 0, cat, catlen);
	seed("catalog", "valid-fixcrc", 1, cat, catlen);
	seed("catalog", "short", 0, cat, catlen - 1);
	seed("catalog", "header-only", 1, cat, 20);
	{
		uint8_t m[4096];
		const struct {
			const char *n;
			size_t off;
			uint32_t v;
		} muts[] = {
		    {"count-65", 8, 65},
		    {"count-1", 8, 1},
		    {"id-zero", 16, 0},
		    {"id-65", 16, 65},
		    {"id-dup", 16 + 72, 1},
		    {"rowbytes-zero", 20, 0},
		    {"rowbytes-big", 20, 8169},
		    {"rowbytes-max", 20, 8168},
		    {"name-unterminated", 24 + 60, 0x41414141},
		    {"magic", 0, 0},
		};
		for (size_t i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
			memcpy(m, cat, catlen);
			memcpy(m + muts[i].off, &muts[i].v, 4);
			seed("catalog", muts[i].n, 1, m, catlen);
		}
	}

	/* ---- pages ---- */
	size_t blen;
	uint8_t *base = load(dir, "base/1.0", &blen);
	uint8_t pin[8 + FK_PAGE_SIZE];
	for (uint32_t blk = 0; blk < 2 && (blk + 1) * FK_PAGE_SIZE <= blen;
	     blk++) {
		uint32_t t = 1;
		memcpy(pin, &t, 4);
		memcpy(pin + 4, &blk, 4);
		memcpy(pin + 8, base + blk * FK_PAGE_SIZE, FK_PAGE_SIZE);
		snprintf(name, sizeof(name), "acc-%u", blk);
		seed("page", name, 0, pin, sizeof(pin));
		snprintf(name, sizeof(name), "acc-%u-wrong-block", blk);
		t = blk + 1;
		memcpy(pin + 4, &t, 4);
		seed("page", name, 0, pin, sizeof(pin));
		snprintf(name, sizeof(name), "acc-%u-fixcrc-identity", blk);
		seed("page", name, 3, pin, sizeof(pin));
		/* Torn: first 4 KiB of this page, the rest of the next. */
		memcpy(pin + 4, &blk, 4);
		if ((blk + 2) * FK_PAGE_SIZE <= blen)
			memcpy(pin + 8 + 4096,
			       base + (blk + 1) * FK_PAGE_SIZE + 4096, 4096);
		else
			memset(pin + 8 + 4096, 0, 4096);
		snprintf(name, sizeof(name), "acc-%u-torn", blk);
		seed("page", name, 0, pin, sizeof(pin));
		snprintf(name, sizeof(name), "acc-%u-short", blk);
		memcpy(pin + 8, base + blk * FK_PAGE_SIZE, FK_PAGE_SIZE);
		seed("page", name, 0, pin, 8 + 4096);
	}
	memset(pin, 0, sizeof(pin));
	seed("page", "zero", 0, pin, sizeof(pin));
	pin[8 + 8000] = 1;
	seed("page", "almost-zero", 0, pin, sizeof(pin));
	seed("page", "almost-zero-fixcrc", 1, pin, sizeof(pin));
	seed("page", "tiny", 0, pin, 4);

	/* ---- WAL records ---- */
	uint8_t *segs[16];
	int nseg = 0;
	for (uint64_t sn = 1; nseg < 16; sn++) {
		char rel[4300];
		size_t len;
		snprintf(rel, sizeof(rel), "%s/wal/%016llX", dir,
			 (unsigned long long)sn);
		uint8_t *d = (uint8_t *)fkt_read_file(rel, &len);
		if (!d)
			break;
		if (len != FUZZ_WALSEG ||
		    fk_wal_seg_check(d, sn, FUZZ_WALSEG)) {
			free(d);
			break;
		}
		segs[nseg++] = d;
	}
	uint64_t pos = FUZZ_WALSEG + FK_WAL_SEG_HDR, prev = 0;
	while (nrec < 256 && pos / FUZZ_WALSEG - 1 < (uint64_t)nseg) {
		uint8_t *sg = segs[pos / FUZZ_WALSEG - 1];
		uint64_t off = pos % FUZZ_WALSEG;
		if (off == 0) {
			pos += FK_WAL_SEG_HDR;
			continue;
		}
		if (FUZZ_WALSEG - off < FK_WAL_REC_HDR) {
			pos += FUZZ_WALSEG - off;
			continue;
		}
		long n =
		    fk_wal_rec_check(sg + off, FUZZ_WALSEG - off, pos, prev);
		if (n < 0)
			break;
		struct rec *r = &recs[nrec++];
		r->lsn = pos;
		r->p = sg + off;
		r->len = (uint32_t)n;
		r->type = sg[off + 4];
		memcpy(&r->nfpi, sg + off + FK_WAL_REC_HDR, 4);
		if (r->type != FK_WAL_COMMIT)
			r->nfpi = 0;
		prev = pos;
		pos += FK_WAL_ALIGN((uint64_t)n);
	}
	int have[4] = {0};
	const struct rec *fpi = NULL, *nofpi = NULL, *ck = NULL, *pad = NULL;
	for (int i = 0; i < nrec; i++) {
		const struct rec *r = &recs[i];
		if (r->type == FK_WAL_COMMIT && r->nfpi && !fpi)
			fpi = r;
		if (r->type == FK_WAL_COMMIT && !r->nfpi && !nofpi)
			nofpi = r;
		if (r->type == FK_WAL_CHECKPOINT)
			ck = r;
		if (r->type == FK_WAL_PAD && !pad)
			pad = r;
		if (r->type > 3 || have[r->type] >= 2)
			continue;
		have[r->type]++;
		snprintf(name, sizeof(name), "rec-%d-type%u", i, r->type);
		seed("wal-record", name, 2, r->p, r->len);
	}
	if (!fpi || !nofpi || !ck) {
		fprintf(stderr, "the WAL lacks a record kind (%d records)\n",
			nrec);
		return 1;
	}
	uint8_t *m = malloc(4 * FUZZ_WALSEG);
	seed("wal-record", "commit-fpi", 0, fpi->p, fpi->len);
	seed("wal-record", "commit-ops", 0, nofpi->p, nofpi->len);
	seed("wal-record", "checkpoint", 0, ck->p, ck->len);
	seed("wal-record", "commit-ops-otherlsn", 4, nofpi->p, nofpi->len);
	seed("wal-record", "commit-ops-short", 0, nofpi->p, nofpi->len - 1);
	seed("wal-record", "header-only", 1, nofpi->p, FK_WAL_REC_HDR);
	memcpy(m, nofpi->p, nofpi->len);
	m[FK_WAL_REC_HDR + 8] = 9; /* op kind 9 */
	seed("wal-record", "commit-badkind-fixcrc", 1, m, nofpi->len);
	memcpy(m, nofpi->p, nofpi->len);
	m[FK_WAL_REC_HDR + 4] = 200; /* nr_ops 200 */
	seed("wal-record", "commit-nrops-fixcrc", 1, m, nofpi->len);
	memcpy(m, fpi->p, fpi->len);
	m[FK_WAL_REC_HDR] = 7; /* nr_fpi 7 */
	seed("wal-record", "commit-nrfpi-fixcrc", 1, m, fpi->len);
	memcpy(m, nofpi->p, nofpi->len);
	m[FK_WAL_REC_HDR + 8 + 20] = 0xff; /* op len 255 */
	seed("wal-record", "commit-oplen-fixcrc", 1, m, nofpi->len);
	seed("wal-record", "segment-header", 0, segs[0], FK_WAL_SEG_HDR);
	if (pad)
		seed("wal-record", "pad", 2, pad->p, pad->len);

	/* ---- recovery: chunks of real payloads ---- */
	size_t n = 0;
#define PL(r) ((r)->p + FK_WAL_REC_HDR), ((r)->len - FK_WAL_REC_HDR)
	n = chunk(m, FK_WAL_COMMIT, 0, PL(nofpi));
	seed("recovery", "one-commit", 0, m, n);
	n = chunk(m, FK_WAL_COMMIT, 0, PL(fpi));
	seed("recovery", "one-commit-fpi", 0, m, n);
	n = 0;
	for (int i = 0, k = 0; i < nrec && k < 4; i++)
		if (recs[i].type == FK_WAL_COMMIT && !recs[i].nfpi) {
			n += chunk(m + n, FK_WAL_COMMIT, 0, PL(&recs[i]));
			k++;
		}
	seed("recovery", "four-commits", 0, m, n);
	size_t n2 = n;
	m[1] = 1; /* first chunk's CRC spoilt */
	seed("recovery", "four-commits-badcrc-first", 0, m, n2);
	m[1] = 0;
	for (int fl = 2, k = 0; fl <= 8; fl *= 2, k++) {
		size_t at = chunk(m, FK_WAL_COMMIT, 0, PL(nofpi));
		at += chunk(m + at, FK_WAL_COMMIT, (uint8_t)fl, PL(nofpi));
		at += chunk(m + at, FK_WAL_COMMIT, 0, PL(nofpi));
		snprintf(name, sizeof(name), "second-spoilt-%d", fl);
		seed("recovery", name, 0, m, at);
	}
	n = chunk(m, FK_WAL_CHECKPOINT, 0, PL(ck));
	n += chunk(m + n, FK_WAL_COMMIT, 0, PL(nofpi));
	seed("recovery", "checkpoint-commit", 0, m, n);
	n = chunk(m, 9, 0, PL(nofpi));
	seed("recovery", "unknown-type", 0, m, n);
	/* Enough FPI commits to cross into the next segment. */
	n = 0;
	for (int k = 0; k < 5; k++)
		n += chunk(m + n, FK_WAL_COMMIT, 0, PL(fpi));
	n += chunk(m + n, FK_WAL_COMMIT, 0, PL(nofpi));
	seed("recovery", "cross-segment", 0, m, n);
	n = 0;
	for (int k = 0; k < 5; k++)
		n += chunk(m + n, FK_WAL_COMMIT, 16, PL(fpi));
	n += chunk(m + n, FK_WAL_COMMIT, 16, PL(nofpi));
	seed("recovery", "cross-segment-badheader", 0, m, n);
	/* Raw: a real record at the wrong LSN (stale). */
	seed("recovery", "raw-stale-record", 1, nofpi->p, nofpi->len);
	memset(m, 0, 64);
	seed("recovery", "raw-zero", 1, m, 64);
	/* Bit 2: checkpoint/redo LSNs and row counts from the input. */
	{
		uint64_t v[4] = {c.checkpoint_lsn, c.redo_lsn, c.rows[1],
				 c.rows[2]};
		size_t k = chunk(m + 32, FK_WAL_COMMIT, 0, PL(nofpi));
		memcpy(m, v, 32);
		seed("recovery", "control-same", 4, m, 32 + k);
		v[2] = ~0ull >> 1;
		v[3] = 1000000;
		memcpy(m, v, 32);
		seed("recovery", "control-rows-huge", 4, m, 32 + k);
		v[0] = c.checkpoint_lsn + 8;
		v[2] = c.rows[1];
		v[3] = c.rows[2];
		memcpy(m, v, 32);
		seed("recovery", "control-ckpt-moved", 4, m, 32 + k);
		v[0] = c.checkpoint_lsn;
		v[1] = 0;
		memcpy(m, v, 32);
		seed("recovery", "control-redo-zero", 4, m, 32 + k);
	}
	/* Bit 1: account page 1 from the input's last 8 KiB. */
	if (blen >= 3 * FK_PAGE_SIZE) {
		n = chunk(m, FK_WAL_COMMIT, 0, PL(nofpi));
		memcpy(m + n, base + FK_PAGE_SIZE, FK_PAGE_SIZE);
		seed("recovery", "page-valid", 2, m, n + FK_PAGE_SIZE);
		memcpy(m + n + 4096, base + 2 * FK_PAGE_SIZE + 4096, 4096);
		seed("recovery", "page-torn", 2, m, n + FK_PAGE_SIZE);
		memset(m + n, 0, FK_PAGE_SIZE);
		seed("recovery", "page-zero", 2, m, n + FK_PAGE_SIZE);
		memcpy(m + n, base + 2 * FK_PAGE_SIZE, FK_PAGE_SIZE);
		seed("recovery", "page-misdirected", 2, m, n + FK_PAGE_SIZE);
	}
	memset(m, 0xA5, 512);
	seed("recovery", "raw-junk", 1, m, 512);
	free(m);
	free(ctl);
	free(cat);
	free(base);
	for (int i = 0; i < nseg; i++)
		free(segs[i]);
	printf("%d seed files in %s\n", written, out);
	return 0;
}
