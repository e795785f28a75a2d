// SPDX-License-Identifier: MIT
/*
 * test-crc32c.c - CRC-32C known vectors (RFC 3720 B.4), the hardware
 * and table paths agree at every alignment and length, and continuing
 * a CRC equals computing it in one go.  The agreement of the two paths
 * is a check only where crc32c.c uses the instruction (x86-64 with
 * SSE4.2, the same question it asks); elsewhere both runs take the table
 * path, and the test says "not checked" instead of comparing it with
 * itself.
 */
#include "fktest.h"
#include "store-int.h"

/* Whether fk_crc32c uses the CRC32 instruction here (crc32c.c's test). */
static int have_hw(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
	return 0;
#endif
}

int main(void)
{
	uint8_t buf[4096 + 16];
	uint8_t z[32] = {0}, ff[32], inc[32], dec[32];

	for (int i = 0; i < 32; i++) {
		ff[i] = 0xff;
		inc[i] = (uint8_t)i;
		dec[i] = (uint8_t)(31 - i);
	}
	for (int sw = 0; sw < 2; sw++) {
		fk_crc32c_force_sw(sw);
		CHECK_EQ(fk_crc32c(0, "123456789", 9), 0xE3069283u);
		CHECK_EQ(fk_crc32c(0, "", 0), 0);
		/* RFC 3720, appendix B.4. */
		CHECK_EQ(fk_crc32c(0, z, 32), 0x8A9136AAu);
		CHECK_EQ(fk_crc32c(0, ff, 32), 0x62A8AB43u);
		CHECK_EQ(fk_crc32c(0, inc, 32), 0x46DD794Eu);
		CHECK_EQ(fk_crc32c(0, dec, 32), 0x113FDB5Cu);
		/* Continuation. */
		CHECK_EQ(fk_crc32c(fk_crc32c(0, "1234", 4), "56789", 5),
			 0xE3069283u);
	}
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	if (!have_hw()) {
		printf("not checked: the SSE4.2 instruction and the tables "
		       "agree (no SSE4.2 here: only the table path runs)\n");
		return fkt_done();
	}
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len < 300; len += 7) {
			fk_crc32c_force_sw(1);
			uint32_t a = fk_crc32c(0, buf + off, len);
			fk_crc32c_force_sw(0);
			uint32_t b = fk_crc32c(0, buf + off, len);
			CHECK_EQ(a, b);
		}
	printf("checked: the SSE4.2 instruction and the tables agree at "
	       "9 alignments x 43 lengths\n");
	return fkt_done();
}
