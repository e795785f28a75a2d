// SPDX-License-Identifier: MIT
/*
 * batch.c - write batches (struct fk_batch): the ops a commit applies,
 * collected by the caller before fk_store_commit.  An op is a struct
 * fk_batch_op (store-int.h) in b->ops; its data is copied into b->data,
 * except fk_batch_append's row, which is the caller's and is read at
 * commit.  No store state, no I/O, no locks: a batch belongs to one
 * thread at a time.
 *
 * Interface routines: fk_batch_init, fk_batch_release, fk_batch_reset,
 * fk_batch_set, fk_batch_add_i64, fk_batch_append, fk_batch_append_copy.
 */
#include "store-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fk_batch_init(struct fk_batch *b)
{
	memset(b, 0, sizeof(*b));
}

void fk_batch_release(struct fk_batch *b)
{
	free(b->ops);
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void fk_batch_reset(struct fk_batch *b)
{
	b->nr_ops = 0;
	b->data_len = 0;
}

static int batch_add(struct fk_batch *b, uint8_t kind, uint32_t table,
		     uint64_t row, uint32_t off, const void *data, uint32_t len,
		     void *result)
{
	if (!b || (len && !data))
		return -EINVAL;
	if (b->nr_ops == b->alloc_ops) {
		size_t n = b->alloc_ops ? b->alloc_ops * 2 : 8;
		void *p = realloc(b->ops, n * sizeof(struct fk_batch_op));
		if (!p)
			return -ENOMEM;
		b->ops = p;
		b->alloc_ops = n;
	}
	if (b->data_len + len > b->data_alloc) {
		size_t n = b->data_alloc ? b->data_alloc * 2 : 256;
		while (n < b->data_len + len)
			n *= 2;
		void *p = realloc(b->data, n);
		if (!p)
			return -ENOMEM;
		b->data = p;
		b->data_alloc = n;
	}
	struct fk_batch_op *op = (struct fk_batch_op *)b->ops + b->nr_ops++;
	op->kind = kind;
	op->table = table;
	op->row = row;
	op->off = off;
	op->len = len;
	op->data_off = b->data_len;
	op->ext = NULL;
	op->result = result;
	if (len)
		memcpy((uint8_t *)b->data + b->data_len, data, len);
	b->data_len += len;
	return 0;
}

int fk_batch_set(struct fk_batch *b, uint32_t table, uint64_t row,
		 uint32_t offset, const void *data, uint32_t len)
{
	if (!len)
		return -EINVAL;
	return batch_add(b, FK_OP_SET, table, row, offset, data, len, NULL);
}

int fk_batch_add_i64(struct fk_batch *b, uint32_t table, uint64_t row,
		     uint32_t offset, int64_t delta, int64_t *result)
{
	return batch_add(b, FK_OP_ADD_I64, table, row, offset, &delta, 8,
			 result);
}

int fk_batch_append(struct fk_batch *b, uint32_t table, const void *row,
		    uint64_t *rowno)
{
	/* The batch does not know the table's row size, so the row is
	 * read at commit (documented: it must stay valid until then). */
	if (!row)
		return -EINVAL;
	int r = batch_add(b, FK_OP_APPEND, table, 0, 0, row, 0, rowno);
	if (r)
		return r;
	struct fk_batch_op *op = (struct fk_batch_op *)b->ops + b->nr_ops - 1;
	op->len = UINT32_MAX;
	op->ext = row;
	return 0;
}

int fk_batch_append_copy(struct fk_batch *b, uint32_t table, const void *row,
			 uint32_t row_bytes, uint64_t *rowno)
{
	if (!row_bytes)
		return -EINVAL;
	return batch_add(b, FK_OP_APPEND, table, 0, 0, row, row_bytes, rowno);
}
