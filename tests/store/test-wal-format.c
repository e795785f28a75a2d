// SPDX-License-Identifier: MIT
/*
 * test-wal-format.c - WAL record and commit payload encode/decode: a
 * record round-trips; every single-byte corruption, a wrong LSN or
 * prev LSN, a short buffer, or a bad length is rejected; segment
 * headers identify their segment; pages verify their CRC and identity.
 */
#include "fktest.h"
#include "store-int.h"

#include <stdlib.h>

int main(void)
{
	static uint8_t rec[FK_WAL_REC_HDR + 8 + FK_WAL_FPI_BYTES + 256];
	static uint8_t page[FK_PAGE_SIZE];
	uint8_t *p = rec + FK_WAL_REC_HDR;
	size_t n = 0;
	int64_t delta = -4242;

	for (size_t i = 0; i < sizeof(page); i++)
		page[i] = (uint8_t)(i * 7);
	n += fk_wal_put_commit_hdr(p, 1, 3);
	n += fk_wal_put_fpi(p + n, 3, 17, page);
	n += fk_wal_put_op(p + n, FK_OP_SET, 2, 99, 4, 5, "hello");
	n += fk_wal_put_op(p + n, FK_OP_ADD_I64, 1, 7, 8, 8, &delta);
	n += fk_wal_put_op(p + n, FK_OP_APPEND, 4, 12345, 0, 3, "abc");
	uint32_t total = (uint32_t)(FK_WAL_REC_HDR + n);
	struct fk_wal_rec h;
	fk_wal_rec_fill(&h, total, FK_WAL_COMMIT, 1000, 500,
			fk_wal_payload_crc(p, n));
	memcpy(rec, &h, sizeof(h));

	CHECK_EQ(fk_wal_rec_check(rec, total, 1000, 500), total);
	CHECK_EQ(fk_wal_rec_check(rec, total, 1000, 0), total);
	CHECK_EQ(fk_wal_rec_check(rec, total, 1008, 500), -FK_ECORRUPT);
	CHECK_EQ(fk_wal_rec_check(rec, total, 1000, 508), -FK_ECORRUPT);
	CHECK_EQ(fk_wal_rec_check(rec, total - 1, 1000, 500), -FK_ECORRUPT);
	CHECK_EQ(fk_wal_rec_check(rec, 10, 1000, 500), -FK_ECORRUPT);
	/* Every byte matters (header, FPI, ops). */
	int missed = 0;
	for (uint32_t i = 0; i < total; i++) {
		rec[i] ^= 0x20;
		if (fk_wal_rec_check(rec, total, 1000, 500) != -FK_ECORRUPT)
			missed++;
		rec[i] ^= 0x20;
	}
	CHECK_EQ(missed, 0);

	/* Decode. */
	struct fk_wal_cursor c;
	uint32_t t, b;
	const uint8_t *img;
	struct fk_wal_op op;
	CHECK_EQ(fk_wal_commit_begin(&c, p, n), 0);
	CHECK_EQ(fk_wal_commit_next_fpi(&c, &t, &b, &img), 1);
	CHECK(t == 3 && b == 17 && !memcmp(img, page, FK_PAGE_SIZE));
	CHECK_EQ(fk_wal_commit_next_fpi(&c, &t, &b, &img), 0);
	CHECK_EQ(fk_wal_commit_next_op(&c, &op), 1);
	CHECK(op.kind == FK_OP_SET && op.table == 2 && op.row == 99 &&
	      op.off == 4 && op.len == 5 && !memcmp(op.data, "hello", 5));
	CHECK_EQ(fk_wal_commit_next_op(&c, &op), 1);
	int64_t d;
	memcpy(&d, op.data, 8);
	CHECK(op.kind == FK_OP_ADD_I64 && op.row == 7 && d == -4242);
	CHECK_EQ(fk_wal_commit_next_op(&c, &op), 1);
	CHECK(op.kind == FK_OP_APPEND && op.row == 12345 && op.len == 3);
	CHECK_EQ(fk_wal_commit_next_op(&c, &op), 0);
	/* Ops without consuming FPIs first; truncated payloads. */
	CHECK_EQ(fk_wal_commit_begin(&c, p, n), 0);
	CHECK_EQ(fk_wal_commit_next_op(&c, &op), 1);
	CHECK_EQ(op.kind, FK_OP_SET);
	CHECK_EQ(fk_wal_commit_begin(&c, p, n - 8), 0);
	int r;
	while ((r = fk_wal_commit_next_op(&c, &op)) > 0)
		;
	CHECK_EQ(r, -FK_ECORRUPT);
	CHECK_EQ(fk_wal_commit_begin(&c, p, 100), -FK_ECORRUPT);

	/* PAD records cover their header only. */
	uint8_t pad[64];
	memset(pad, 0x55, sizeof(pad));
	fk_wal_rec_fill(&h, 64, FK_WAL_PAD, 2048, 1000, 0);
	memcpy(pad, &h, sizeof(h));
	CHECK_EQ(fk_wal_rec_check(pad, 64, 2048, 1000), 64);

	/* Segment headers. */
	struct fk_wal_seg sh;
	fk_wal_seg_fill(&sh, 5, 1 << 20);
	CHECK_EQ(fk_wal_seg_check(&sh, 5, 1 << 20), 0);
	CHECK_EQ(fk_wal_seg_check(&sh, 6, 1 << 20), -FK_ECORRUPT);
	CHECK_EQ(fk_wal_seg_check(&sh, 5, 2 << 20), -FK_ECORRUPT);

	/* Pages. */
	fk_page_init(page, 3, 9);
	memcpy(page + 100, "row", 3);
	fk_page_set_crc(page);
	CHECK_EQ(fk_page_verify(page, 3, 9), 0);
	CHECK_EQ(fk_page_verify(page, 3, 10), -FK_ECORRUPT);
	CHECK_EQ(fk_page_verify(page, 4, 9), -FK_ECORRUPT);
	page[5000] ^= 1;
	CHECK_EQ(fk_page_verify(page, 3, 9), -FK_ECORRUPT);
	memset(page, 0, sizeof(page));
	CHECK_EQ(fk_page_verify(page, 3, 9), 0); /* new page */
	uint32_t tb;
	memcpy(&tb, page + 12, 4);
	CHECK_EQ(tb, 3);
	memset(page, 0, sizeof(page));
	page[8000] = 1;
	CHECK_EQ(fk_page_verify(page, 3, 9), -FK_ECORRUPT);
	return fkt_done();
}
