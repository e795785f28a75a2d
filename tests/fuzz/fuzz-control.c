// SPDX-License-Identifier: MIT
/*
 * fuzz-control.c - libFuzzer target: the control file decoder
 * (fk_control_decode: magic, version, CRC-32C, state, geometry), fed
 * whole files as read_control reads them at open.
 *
 * Input: byte 0 steers the harness, the rest is the file.
 *   bit 0  recompute the CRC-32C (over the 568 bytes before it), so the
 *          checks behind the CRC are reached.
 * An accepted file must give a geometry the store can divide by and
 * allocate (the bounds check_opts puts on a new store); the decoded
 * struct is then used the way open uses it (segment of the redo LSN,
 * blocks per segment).
 */
#include "store-int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fk_control c;
	if (size < 1)
		return 0;
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, len);
	if ((data[0] & 1) && len == sizeof(c)) {
		uint32_t crc =
		    fk_crc32c(0, buf, offsetof(struct fk_control, crc));
		memcpy(buf + offsetof(struct fk_control, crc), &crc, 4);
	}
	int r = fk_control_decode(&c, buf, len);
	if (r != 0 && r != -FK_ECORRUPT)
		abort();
	if (r == 0) {
		if (c.wal_seg_bytes < 65536 || c.wal_seg_bytes > (1ull << 30) ||
		    !c.seg_bytes || c.seg_bytes % FK_PAGE_SIZE)
			abort();
		volatile uint64_t seg = c.redo_lsn / c.wal_seg_bytes +
					c.checkpoint_lsn % c.wal_seg_bytes;
		volatile uint64_t bps = c.seg_bytes / FK_PAGE_SIZE;
		(void)seg;
		(void)bps;
	}
	free(buf);
	return 0;
}
