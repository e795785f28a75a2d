// SPDX-License-Identifier: MIT
/*
 * fuzz-wal-record.c - libFuzzer target: WAL record decoding, as recovery
 * does it: fk_wal_rec_check (length, LSN, prev LSN, type, CRC), then the
 * COMMIT payload (fk_wal_commit_begin / next_fpi / next_op, every record
 * kind: FPIs, SET, ADD_I64, APPEND) or the CHECKPOINT payload, and the
 * segment header check.
 *
 * Input: byte 0 steers the harness, the rest is the record (header and
 * payload) as it would sit in a segment.
 *   bit 0  recompute the record's CRC, so the fuzzer reaches the payload
 *          decoders (it cannot forge a CRC-32C on its own);
 *   bit 1  expect the prev LSN the header names (else 0: not checked);
 *   bit 2  expect a different LSN than the header names (must fail).
 * Every accepted record is decoded to its end; the decoded pieces must
 * lie inside the record (checked here: a violation aborts).  Errors are
 * return values, never a crash, a hang or a sanitizer report.
 */
#include "store-int.h"

#include <stdlib.h>
#include <string.h>

#define IN(p, n) ((p) >= base && (p) + (n) <= end)

static void decode_commit(const uint8_t *base, size_t len)
{
	const uint8_t *end = base + len;
	struct fk_wal_cursor c;
	uint32_t table, block;
	const uint8_t *page;
	struct fk_wal_op op;
	int r;

	if (fk_wal_commit_begin(&c, base, len))
		return;
	while ((r = fk_wal_commit_next_fpi(&c, &table, &block, &page)) > 0) {
		if (!IN(page, FK_PAGE_SIZE))
			abort();
		/* Recovery installs the image; a page check must not crash
		 * on any content. */
		uint8_t copy[FK_PAGE_SIZE];
		memcpy(copy, page, sizeof(copy));
		(void)fk_page_verify(copy, table, block);
	}
	if (r < 0)
		return;
	while ((r = fk_wal_commit_next_op(&c, &op)) > 0) {
		if (op.kind < FK_OP_SET || op.kind > FK_OP_APPEND ||
		    !IN(op.data, op.len) ||
		    (op.kind == FK_OP_ADD_I64 && op.len != 8))
			abort();
		/* Touch the data as apply_op would. */
		volatile uint8_t sum = 0;
		for (uint32_t i = 0; i < op.len; i++)
			sum += op.data[i];
		(void)sum;
	}
	/* Ops only (FPIs skipped by the cursor). */
	if (!fk_wal_commit_begin(&c, base, len))
		while (fk_wal_commit_next_op(&c, &op) > 0)
			if (!IN(op.data, op.len))
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t ctl = data[0];
	size_t len = size - 1;
	/* A copy of exactly the input's size, so ASan sees any overread. */
	uint8_t *rec = malloc(len ? len : 1);
	if (!rec)
		return 0;
	memcpy(rec, data + 1, len);

	struct fk_wal_rec h;
	memset(&h, 0, sizeof(h));
	if (len >= FK_WAL_REC_HDR)
		memcpy(&h, rec, sizeof(h));
	if ((ctl & 1) && len >= FK_WAL_REC_HDR &&
	    h.total_len >= FK_WAL_REC_HDR && h.total_len <= len) {
		uint32_t pc =
		    h.type == FK_WAL_PAD
			? 0
			: fk_wal_payload_crc(rec + FK_WAL_REC_HDR,
					     h.total_len - FK_WAL_REC_HDR);
		struct fk_wal_rec z = h;
		z.crc = 0;
		h.crc = fk_crc32c(pc, &z, FK_WAL_REC_HDR);
		memcpy(rec, &h, sizeof(h));
	}
	uint64_t prev = (ctl & 2) ? h.prev_lsn : 0;
	long n = fk_wal_rec_check(rec, len, h.lsn, prev);
	if ((ctl & 4) && fk_wal_rec_check(rec, len, h.lsn + 8, prev) >= 0)
		abort(); /* a record is valid at its own LSN only */
	if (n >= 0) {
		if (n < FK_WAL_REC_HDR || (size_t)n > len)
			abort();
		const uint8_t *pl = rec + FK_WAL_REC_HDR;
		size_t plen = (size_t)n - FK_WAL_REC_HDR;
		if (h.type == FK_WAL_COMMIT) {
			decode_commit(pl, plen);
		} else if (h.type == FK_WAL_CHECKPOINT &&
			   plen == sizeof(struct fk_wal_ckpt)) {
			struct fk_wal_ckpt ck;
			memcpy(&ck, pl, sizeof(ck));
			(void)ck;
		}
	}
	/* The same bytes as a segment header. */
	if (len >= FK_WAL_SEG_HDR) {
		struct fk_wal_seg sh;
		memcpy(&sh, rec, sizeof(sh));
		if (sh.seg_bytes &&
		    fk_wal_seg_check(rec, sh.segno, sh.seg_bytes) == 0 &&
		    sh.start_lsn != sh.segno * sh.seg_bytes)
			abort();
	}
	free(rec);
	return 0;
}
