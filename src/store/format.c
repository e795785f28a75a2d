// SPDX-License-Identifier: MIT
/*
 * format.c - the page store's on-disk formats: pages, WAL segment
 * headers, WAL record headers and the COMMIT record payload.
 *
 * Interface routines: fk_page_init, fk_page_set_crc, fk_page_verify;
 * fk_wal_seg_fill, fk_wal_seg_check; fk_wal_rec_fill, fk_wal_rec_check;
 * fk_wal_put_commit_hdr, fk_wal_put_fpi, fk_wal_put_fpi_packed,
 * fk_wal_put_op (encoders) and
 * fk_wal_commit_begin/next_fpi/next_op (decoder).  Pure functions: no
 * I/O, no state, thread-safe.  The layouts are drawn in docs/design.md.
 *
 * A record's CRC-32C covers the payload first, then the 32-byte header
 * with the crc field zero: the payload part can be computed before the
 * WAL insert lock is taken, and only 32 bytes under it (PostgreSQL's
 * XLogRecordAssemble / XLogInsertRecord split the same way).
 */
#include "store-int.h"

#include <string.h>

/* ---- pages ---- */

void fk_page_init(uint8_t *page, uint32_t table, uint32_t block)
{
	memset(page, 0, FK_PAGE_SIZE);
	memcpy(page + 12, &table, 4);
	memcpy(page + 16, &block, 4);
}

static uint32_t page_crc(const uint8_t *page)
{
	static const uint8_t zero[4];
	uint32_t c = fk_crc32c(0, page, 8);
	c = fk_crc32c(c, zero, 4);
	return fk_crc32c(c, page + 12, FK_PAGE_SIZE - 12);
}

void fk_page_set_crc(uint8_t *page)
{
	uint32_t c = page_crc(page);
	memcpy(page + 8, &c, 4);
}

int fk_page_verify(uint8_t *page, uint32_t table, uint32_t block)
{
	uint32_t c, t, b;
	memcpy(&c, page + 8, 4);
	memcpy(&t, page + 12, 4);
	memcpy(&b, page + 16, 4);
	if (c == 0 && t == 0 && b == 0) {
		/* A page never written (beyond EOF or a hole) is all zero,
		 * as PostgreSQL's PageIsNew. */
		for (size_t i = 0; i < FK_PAGE_SIZE; i += 8) {
			uint64_t w;
			memcpy(&w, page + i, 8);
			if (w)
				return -FK_ECORRUPT;
		}
		fk_page_init(page, table, block);
		return 0;
	}
	if (c != page_crc(page) || t != table || b != block)
		return -FK_ECORRUPT;
	return 0;
}

/* ---- WAL segment header ---- */

void fk_wal_seg_fill(struct fk_wal_seg *h, uint64_t segno, uint64_t seg_bytes)
{
	memset(h, 0, sizeof(*h));
	h->magic = FK_WAL_MAGIC;
	h->version = FK_WAL_VERSION;
	h->segno = segno;
	h->start_lsn = segno * seg_bytes;
	h->seg_bytes = (uint32_t)seg_bytes;
	h->crc = fk_crc32c(0, h, 28);
}

int fk_wal_seg_check(const void *buf, uint64_t segno, uint64_t seg_bytes)
{
	struct fk_wal_seg h;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != FK_WAL_MAGIC || h.version != FK_WAL_VERSION ||
	    h.segno != segno || h.start_lsn != segno * seg_bytes ||
	    h.seg_bytes != seg_bytes || h.crc != fk_crc32c(0, &h, 28))
		return -FK_ECORRUPT;
	return 0;
}

/* ---- WAL record header ---- */

_Static_assert(sizeof(struct fk_wal_rec) == FK_WAL_REC_HDR, "rec hdr");
_Static_assert(sizeof(struct fk_wal_seg) == FK_WAL_SEG_HDR, "seg hdr");

void fk_wal_rec_fill(struct fk_wal_rec *h, uint32_t total_len, uint8_t type,
		     uint64_t lsn, uint64_t prev_lsn, uint32_t payload_crc)
{
	memset(h, 0, sizeof(*h));
	h->total_len = total_len;
	h->type = type;
	h->lsn = lsn;
	h->prev_lsn = prev_lsn;
	h->crc = fk_crc32c(payload_crc, h, FK_WAL_REC_HDR);
}

long fk_wal_rec_check(const void *buf, size_t avail, uint64_t lsn,
		      uint64_t prev)
{
	struct fk_wal_rec h;
	if (avail < FK_WAL_REC_HDR)
		return -FK_ECORRUPT;
	memcpy(&h, buf, sizeof(h));
	if (h.total_len < FK_WAL_REC_HDR || h.total_len > avail ||
	    h.lsn != lsn || (prev && h.prev_lsn != prev) ||
	    h.type < FK_WAL_PAD || h.type > FK_WAL_CHECKPOINT || h.reserved ||
	    h.reserved2)
		return -FK_ECORRUPT;
	uint32_t crc = h.crc;
	h.crc = 0;
	uint32_t c = 0;
	/* A PAD record's CRC covers its header only. */
	if (h.type != FK_WAL_PAD)
		c = fk_crc32c(0, (const uint8_t *)buf + FK_WAL_REC_HDR,
			      h.total_len - FK_WAL_REC_HDR);
	if (fk_crc32c(c, &h, FK_WAL_REC_HDR) != crc)
		return -FK_ECORRUPT;
	return (long)h.total_len;
}

/* ---- COMMIT payload ---- */

size_t fk_wal_put_commit_hdr(uint8_t *out, uint32_t nr_fpi, uint32_t nr_ops)
{
	memcpy(out, &nr_fpi, 4);
	memcpy(out + 4, &nr_ops, 4);
	return 8;
}

size_t fk_wal_put_fpi(uint8_t *out, uint32_t table, uint32_t block,
		      const uint8_t *page)
{
	memcpy(out, &table, 4);
	memcpy(out + 4, &block, 4);
	memcpy(out + 8, page, FK_PAGE_SIZE);
	return FK_WAL_FPI_BYTES;
}

size_t fk_wal_put_op(uint8_t *out, uint8_t kind, uint32_t table, uint64_t row,
		     uint32_t off, uint32_t len, const void *data)
{
	memset(out, 0, 8);
	out[0] = kind;
	memcpy(out + 4, &table, 4);
	memcpy(out + 8, &row, 8);
	memcpy(out + 16, &off, 4);
	memcpy(out + 20, &len, 4);
	memcpy(out + FK_WAL_OP_HDR, data, len);
	size_t padded = (size_t)FK_WAL_ALIGN(len);
	memset(out + FK_WAL_OP_HDR + len, 0, padded - len);
	return FK_WAL_OP_HDR + padded;
}

size_t fk_wal_put_fpi_packed(uint8_t *out, uint32_t table, uint32_t block,
			     int method, const uint8_t *page)
{
	size_t len = 0;
	memset(out, 0, FK_WAL_FPI_PACKED_HDR);
	if (method != FK_WAL_COMPRESSION_OFF)
		len =
		    fk_fpi_compress(method, page, out + FK_WAL_FPI_PACKED_HDR);
	if (!len) {
		/* Not smaller compressed (or off): the image as it is. */
		method = FK_WAL_COMPRESSION_OFF;
		len = FK_PAGE_SIZE;
		memcpy(out + FK_WAL_FPI_PACKED_HDR, page, FK_PAGE_SIZE);
	}
	uint32_t len32 = (uint32_t)len;
	memcpy(out, &table, 4);
	memcpy(out + 4, &block, 4);
	out[8] = (uint8_t)method;
	memcpy(out + 12, &len32, 4);
	size_t padded = (size_t)FK_WAL_ALIGN(len);
	memset(out + FK_WAL_FPI_PACKED_HDR + len, 0, padded - len);
	return FK_WAL_FPI_PACKED_HDR + padded;
}

int fk_wal_commit_begin(struct fk_wal_cursor *c, const void *payload,
			size_t len)
{
	c->p = c->end = NULL;
	c->nr_fpi = c->nr_ops = c->i_fpi = c->i_op = 0;
	c->packed = 0;
	if (len < 8)
		return -FK_ECORRUPT;
	c->p = payload;
	c->end = c->p + len;
	memcpy(&c->nr_fpi, c->p, 4);
	memcpy(&c->nr_ops, c->p + 4, 4);
	c->p += 8;
	if (c->nr_fpi & FK_WAL_FPI_PACKED) {
		c->packed = 1;
		c->nr_fpi &= ~FK_WAL_FPI_PACKED;
	}
	if ((uint64_t)c->nr_fpi *
		(c->packed ? FK_WAL_FPI_PACKED_HDR + 8 : FK_WAL_FPI_BYTES) >
	    len)
		return -FK_ECORRUPT;
	return 0;
}

/*
 * The next image's entry without restoring it: (table, block), how it
 * is stored (@method, enum fk_wal_compression) and its stored bytes.
 * Advances the cursor.  1, or -FK_ECORRUPT (the caller checked that one
 * is left).
 */
static int fpi_entry(struct fk_wal_cursor *c, uint32_t *table, uint32_t *block,
		     int *method, const uint8_t **data, uint32_t *len)
{
	size_t left = (size_t)(c->end - c->p);
	if (!c->packed) {
		if (left < FK_WAL_FPI_BYTES)
			return -FK_ECORRUPT;
		memcpy(table, c->p, 4);
		memcpy(block, c->p + 4, 4);
		*method = FK_WAL_COMPRESSION_OFF;
		*data = c->p + 8;
		*len = FK_PAGE_SIZE;
		c->p += FK_WAL_FPI_BYTES;
		c->i_fpi++;
		return 1;
	}
	if (left < FK_WAL_FPI_PACKED_HDR)
		return -FK_ECORRUPT;
	memcpy(table, c->p, 4);
	memcpy(block, c->p + 4, 4);
	*method = c->p[8];
	memcpy(len, c->p + 12, 4);
	/* An image is stored as it is only at full size, compressed only
	 * when smaller; the header's padding is zero. */
	if (c->p[9] || c->p[10] || c->p[11] ||
	    *method > FK_WAL_COMPRESSION_ZSTD ||
	    (*method == FK_WAL_COMPRESSION_OFF
		 ? *len != FK_PAGE_SIZE
		 : !*len || *len >= FK_PAGE_SIZE) ||
	    FK_WAL_ALIGN(*len) > left - FK_WAL_FPI_PACKED_HDR)
		return -FK_ECORRUPT;
	*data = c->p + FK_WAL_FPI_PACKED_HDR;
	c->p += FK_WAL_FPI_PACKED_HDR + (size_t)FK_WAL_ALIGN(*len);
	c->i_fpi++;
	return 1;
}

int fk_wal_commit_next_fpi(struct fk_wal_cursor *c, uint32_t *table,
			   uint32_t *block, const uint8_t **page)
{
	const uint8_t *data;
	uint32_t len, t, b;
	int method;
	if (c->i_fpi == c->nr_fpi)
		return 0;
	int r = fpi_entry(c, table, block, &method, &data, &len);
	if (r < 0)
		return r;
	if (!c->packed) {
		*page = data;
		return 1;
	}
	if (method == FK_WAL_COMPRESSION_OFF) {
		*page = data;
	} else {
		/* The record's CRC covered the stored (compressed) bytes;
		 * the image must decompress to exactly one page. */
		r = fk_fpi_decompress(method, data, len, c->img);
		if (r)
			return r;
		*page = c->img;
	}
	/* A packed image is a buffer's page: its header names it. */
	memcpy(&t, *page + 12, 4);
	memcpy(&b, *page + 16, 4);
	if (t != *table || b != *block)
		return -FK_ECORRUPT;
	return 1;
}

int fk_wal_commit_next_op(struct fk_wal_cursor *c, struct fk_wal_op *op)
{
	/* Skip FPIs the caller did not consume. */
	while (c->i_fpi < c->nr_fpi) {
		uint32_t t, b, len;
		const uint8_t *data;
		int method;
		int r = fpi_entry(c, &t, &b, &method, &data, &len);
		if (r < 0)
			return r;
	}
	if (c->i_op == c->nr_ops)
		return c->p == c->end ? 0 : -FK_ECORRUPT;
	if ((size_t)(c->end - c->p) < FK_WAL_OP_HDR)
		return -FK_ECORRUPT;
	op->kind = c->p[0];
	memcpy(&op->table, c->p + 4, 4);
	memcpy(&op->row, c->p + 8, 8);
	memcpy(&op->off, c->p + 16, 4);
	memcpy(&op->len, c->p + 20, 4);
	if (op->kind < FK_OP_SET || op->kind > FK_OP_APPEND ||
	    (op->kind == FK_OP_ADD_I64 && op->len != 8) ||
	    FK_WAL_ALIGN(op->len) > (uint64_t)(c->end - c->p) - FK_WAL_OP_HDR)
		return -FK_ECORRUPT;
	op->data = c->p + FK_WAL_OP_HDR;
	c->p += fk_wal_op_size(op->len);
	c->i_op++;
	return 1;
}

/* ---- applying an op to a page (commit and redo) ---- */

void fk_page_apply_op(const struct fk_table *t, uint8_t *page,
		      const struct fk_wal_op *op, int64_t *result)
{
	uint8_t *p = fk_row_ptr(t, page, op->row);
	if (op->kind == FK_OP_ADD_I64) {
		int64_t v, d;
		memcpy(&v, p + op->off, 8);
		memcpy(&d, op->data, 8);
		v = (int64_t)((uint64_t)v + (uint64_t)d);
		memcpy(p + op->off, &v, 8);
		if (result)
			*result = v;
		return;
	}
	memcpy(p + op->off, op->data, op->len);
	if (op->kind == FK_OP_APPEND) {
		uint16_t nrows;
		uint32_t slot = (uint32_t)(op->row % t->rows_per_page) + 1;
		memcpy(&nrows, page + 20, 2);
		if (slot > nrows) {
			nrows = (uint16_t)slot;
			memcpy(page + 20, &nrows, 2);
		}
	}
}
