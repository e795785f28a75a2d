// SPDX-License-Identifier: MIT
/*
 * test-wal-fpi-compression.c - the packed full-page image format of a
 * COMMIT payload (FK_WAL_FPI_PACKED, fk_store_opts.wal_compression):
 *  - a compressible page packed by lz4 and by zstd is stored compressed
 *    (smaller than the page) and decodes to the same bytes;
 *  - an incompressible page is stored as it is (method off, 8192 bytes);
 *  - the record's CRC covers the stored bytes: every byte flipped is
 *    caught by fk_wal_rec_check;
 *  - with a valid CRC (what a fuzzer or a bug could produce), a bad
 *    method, nonzero header padding, a stored length out of bounds or
 *    past the payload, compressed bytes that do not decompress to one
 *    page, or an image whose page header names another (table, block)
 *    are -FK_ECORRUPT, from next_fpi and from next_op's skipping alike;
 *  - the unpacked format is untouched (nr_fpi without the flag).
 * A method this build lacks is skipped, saying so.
 */
#include "fktest.h"
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>

static uint8_t page[FK_PAGE_SIZE];

/* A TPC-B-like page: header, 100-byte rows of a number and spaces. */
static void make_page(uint32_t table, uint32_t block)
{
	fk_page_init(page, table, block);
	for (size_t at = FK_PAGE_HDR; at + 100 <= FK_PAGE_SIZE; at += 100) {
		memset(page + at, ' ', 100);
		uint64_t v = at * 2654435761u;
		memcpy(page + at, &v, 8);
	}
}

/* payload: commit header (1 packed FPI, 1 op), the image, one op. */
static size_t build(uint8_t *p, int method)
{
	size_t n = fk_wal_put_commit_hdr(p, 1 | FK_WAL_FPI_PACKED, 1);
	n += fk_wal_put_fpi_packed(p + n, 3, 17, method, page);
	n += fk_wal_put_op(p + n, FK_OP_SET, 3, 5, 0, 5, "hello");
	return n;
}

static int decode(const uint8_t *p, size_t n, int want_op)
{
	struct fk_wal_cursor c;
	uint32_t t, b;
	const uint8_t *img;
	struct fk_wal_op op;
	int r = fk_wal_commit_begin(&c, p, n);
	if (r)
		return r;
	if (want_op)
		return fk_wal_commit_next_op(&c, &op);
	r = fk_wal_commit_next_fpi(&c, &t, &b, &img);
	if (r != 1)
		return r;
	if (t != 3 || b != 17 || memcmp(img, page, FK_PAGE_SIZE))
		return -1000;
	r = fk_wal_commit_next_fpi(&c, &t, &b, &img);
	if (r != 0)
		return r < 0 ? r : -1001;
	r = fk_wal_commit_next_op(&c, &op);
	if (r != 1 || op.kind != FK_OP_SET || op.row != 5 ||
	    memcmp(op.data, "hello", 5))
		return -1002;
	return fk_wal_commit_next_op(&c, &op) == 0 ? 1 : -1003;
}

static void test_roundtrip(int method)
{
	static uint8_t rec[FK_WAL_REC_HDR + 8 + FK_WAL_FPI_PACKED_MAX + 64];
	uint8_t *p = rec + FK_WAL_REC_HDR;
	make_page(3, 17);
	size_t n = build(p, method);
	uint32_t stored;
	memcpy(&stored, p + 8 + 12, 4);
	CHECK_EQ(p[8 + 8], method);
	CHECK(stored < FK_PAGE_SIZE / 2);
	printf("%s: a TPC-B-like page packs to %u bytes\n",
	       fk_wal_compression_name(method), stored);
	CHECK_EQ(decode(p, n, 0), 1);
	CHECK_EQ(decode(p, n, 1), 1);

	/* The record's CRC covers the stored bytes: every flip caught. */
	uint32_t total = (uint32_t)(FK_WAL_REC_HDR + n);
	struct fk_wal_rec h;
	fk_wal_rec_fill(&h, total, FK_WAL_COMMIT, 4096, 0,
			fk_wal_payload_crc(p, n));
	memcpy(rec, &h, sizeof(h));
	CHECK_EQ(fk_wal_rec_check(rec, total, 4096, 0), total);
	int missed = 0;
	for (uint32_t i = 0; i < total; i++) {
		rec[i] ^= 0x10;
		if (fk_wal_rec_check(rec, total, 4096, 0) != -FK_ECORRUPT)
			missed++;
		rec[i] ^= 0x10;
	}
	CHECK_EQ(missed, 0);
}

static void test_incompressible(int method)
{
	static uint8_t p[8 + FK_WAL_FPI_PACKED_MAX + 64];
	make_page(3, 17);
	srand(7);
	for (size_t i = FK_PAGE_HDR; i < FK_PAGE_SIZE; i++)
		page[i] = (uint8_t)rand();
	size_t n = build(p, method);
	uint32_t stored;
	memcpy(&stored, p + 8 + 12, 4);
	CHECK_EQ(p[8 + 8], FK_WAL_COMPRESSION_OFF);
	CHECK_EQ(stored, FK_PAGE_SIZE);
	CHECK_EQ(decode(p, n, 0), 1);
}

/* Corruptions under a valid CRC: the decoder itself must refuse. */
static void test_corrupt(int method)
{
	static uint8_t p[8 + FK_WAL_FPI_PACKED_MAX + 64], q[sizeof(p)];
	make_page(3, 17);
	size_t n = build(p, method);
	uint8_t *e = p + 8; /* the image's entry */
	uint32_t stored, v;
	memcpy(&stored, e + 12, 4);
	struct {
		const char *what;
		size_t off;
		uint8_t val;
	} bytes[] = {
	    {"method 3", 8, 3},
	    {"method 255", 8, 255},
	    {"padding", 9, 1},
	    {"padding", 11, 0x80},
	};
	for (size_t i = 0; i < sizeof(bytes) / sizeof(bytes[0]); i++) {
		memcpy(q, p, n);
		q[8 + bytes[i].off] = bytes[i].val;
		int r = decode(q, n, 0);
		if (r != -FK_ECORRUPT)
			printf("%s: %s: %d\n", fk_wal_compression_name(method),
			       bytes[i].what, r);
		CHECK_EQ(r, -FK_ECORRUPT);
		if (bytes[i].off < 16)
			CHECK_EQ(decode(q, n, 1), -FK_ECORRUPT);
	}
	/* Stored lengths: 0, the page size for a compressed image, past
	 * the payload, one short. */
	uint32_t lens[] = {0, FK_PAGE_SIZE, (uint32_t)n, stored - 1};
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memcpy(q, p, n);
		memcpy(q + 8 + 12, &lens[i], 4);
		CHECK_EQ(decode(q, n, 0), -FK_ECORRUPT);
	}
	/* The method "off" needs the full page. */
	memcpy(q, p, n);
	q[8 + 8] = FK_WAL_COMPRESSION_OFF;
	CHECK_EQ(decode(q, n, 0), -FK_ECORRUPT);
	/* An image of another page: its header names (4, 17). */
	make_page(4, 17);
	n = fk_wal_put_commit_hdr(q, 1 | FK_WAL_FPI_PACKED, 0);
	n += fk_wal_put_fpi_packed(q + n, 3, 17, method, page);
	struct fk_wal_cursor c;
	uint32_t t, b;
	const uint8_t *img;
	CHECK_EQ(fk_wal_commit_begin(&c, q, n), 0);
	CHECK_EQ(fk_wal_commit_next_fpi(&c, &t, &b, &img), -FK_ECORRUPT);
	/* A count of images the payload cannot hold. */
	v = 1000 | FK_WAL_FPI_PACKED;
	memcpy(q, &v, 4);
	CHECK_EQ(fk_wal_commit_begin(&c, q, n), -FK_ECORRUPT);
}

/* Without the flag, nr_fpi counts unpacked images as before. */
static void test_unpacked_unchanged(void)
{
	static uint8_t p[8 + FK_WAL_FPI_BYTES];
	make_page(3, 17);
	size_t n = fk_wal_put_commit_hdr(p, 1, 0);
	n += fk_wal_put_fpi(p + n, 3, 17, page);
	CHECK_EQ(n, 8 + FK_WAL_FPI_BYTES);
	struct fk_wal_cursor c;
	uint32_t t, b;
	const uint8_t *img;
	CHECK_EQ(fk_wal_commit_begin(&c, p, n), 0);
	CHECK_EQ(fk_wal_commit_next_fpi(&c, &t, &b, &img), 1);
	CHECK(img == p + 16 && t == 3 && b == 17);
}

int main(void)
{
	int ran = 0;
	CHECK_EQ(fk_wal_compression_parse("lz4"), FK_WAL_COMPRESSION_LZ4);
	CHECK_EQ(fk_wal_compression_parse("zstd"), FK_WAL_COMPRESSION_ZSTD);
	CHECK_EQ(fk_wal_compression_parse("off"), FK_WAL_COMPRESSION_OFF);
	CHECK_EQ(fk_wal_compression_parse("gzip"), -EINVAL);
	CHECK(!strcmp(fk_wal_compression_name(7), "unknown"));
	test_unpacked_unchanged();
	for (int m = FK_WAL_COMPRESSION_LZ4; m <= FK_WAL_COMPRESSION_ZSTD;
	     m++) {
		if (!fk_fpi_method_available(m)) {
			printf("%s: not in this build, not checked\n",
			       fk_wal_compression_name(m));
			continue;
		}
		test_roundtrip(m);
		test_incompressible(m);
		test_corrupt(m);
		ran++;
	}
	if (!ran) {
		printf("SKIP: neither lz4 nor zstd in this build\n");
		int rc = fkt_done();
		return rc ? rc : 77;
	}
	return fkt_done();
}
