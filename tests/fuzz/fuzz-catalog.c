// SPDX-License-Identifier: MIT
/*
 * fuzz-catalog.c - libFuzzer target: the catalog decoder
 * (fk_catalog_decode: magic, version, count, length, CRC-32C, entries),
 * fed whole files as read_catalog reads them at open.
 *
 * Input: byte 0 steers the harness, the rest is the file.
 *   bit 0  recompute the trailing CRC-32C, so the entry checks are
 *          reached.
 * Every table an accepted catalog defines must be usable: id 1..64, row
 * size 1..8168, at least one row per page, a NUL-terminated name.
 */
#include "store-int.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fk_store s;
	if (size < 1)
		return 0;
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, len);
	if ((data[0] & 1) && len >= 20) {
		uint32_t crc = fk_crc32c(0, buf, len - 4);
		memcpy(buf + len - 4, &crc, 4);
	}
	memset(s.tables, 0, sizeof(s.tables));
	int r = fk_catalog_decode(&s, buf, len);
	if (r != 0 && r != -FK_ECORRUPT)
		abort();
	for (uint32_t i = 0; r == 0 && i <= FK_STORE_MAX_TABLES; i++) {
		struct fk_table *t = &s.tables[i];
		if (!t->id)
			continue;
		if (t->id != i || i == 0 || !t->row_bytes ||
		    t->row_bytes > FK_PAGE_SIZE - FK_PAGE_HDR ||
		    !t->rows_per_page ||
		    FK_PAGE_HDR + (uint64_t)t->rows_per_page * t->row_bytes >
			FK_PAGE_SIZE ||
		    strnlen(t->name, sizeof(t->name)) == sizeof(t->name))
			abort();
	}
	free(buf);
	return 0;
}
