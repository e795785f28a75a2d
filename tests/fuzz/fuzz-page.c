// SPDX-License-Identifier: MIT
/*
 * fuzz-page.c - libFuzzer target: data page validation (fk_page_verify),
 * the check every page read from disk passes before it is used (B6 in
 * src/store/bufpool.c).
 *
 * Input: byte 0 steers the harness, bytes 1..8 are the (table, block) the
 * reader expects, the rest is the page (zero-padded or cut to 8 KiB, as
 * read_page zero-fills a short read).
 *   bit 0  set the page's CRC first (fk_page_set_crc), so the identity
 *          and zero-page paths are reached;
 *   bit 1  copy the expected (table, block) into the page header.
 * An accepted page must be what the caller asked for: its identity
 * fields equal (table, block) and its CRC verifies again; a page that is
 * not all zero and whose CRC does not match must be rejected.
 */
#include "store-int.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t page[FK_PAGE_SIZE], orig[FK_PAGE_SIZE];
	uint32_t table = 0, block = 0, t, b;

	if (size < 9)
		return 0;
	uint8_t ctl = data[0];
	memcpy(&table, data + 1, 4);
	memcpy(&block, data + 5, 4);
	size_t n = size - 9;
	if (n > FK_PAGE_SIZE)
		n = FK_PAGE_SIZE;
	memset(page, 0, sizeof(page));
	memcpy(page, data + 9, n);
	if (ctl & 2) {
		memcpy(page + 12, &table, 4);
		memcpy(page + 16, &block, 4);
	}
	if (ctl & 1)
		fk_page_set_crc(page);
	memcpy(orig, page, sizeof(page));

	int zero = 1;
	for (size_t i = 0; i < sizeof(page) && zero; i++)
		zero = !page[i];
	int r = fk_page_verify(page, table, block);
	if (r != 0 && r != -FK_ECORRUPT)
		abort();
	if (r == 0) {
		memcpy(&t, page + 12, 4);
		memcpy(&b, page + 16, 4);
		if (t != table || b != block)
			abort(); /* a page of another place accepted */
		if (!zero) {
			/* Unchanged, and its CRC is the one it carries. */
			if (memcmp(page, orig, sizeof(page)))
				abort();
			fk_page_set_crc(orig);
			if (memcmp(page, orig, sizeof(page)))
				abort();
		}
	}
	return 0;
}
