// SPDX-License-Identifier: MIT
/*
 * crc32c.c - CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected as
 * 0x82F63B78), the checksum of every page and WAL record of the store.
 *
 * Interface: fk_crc32c(crc, data, len), continuing from @crc (0 to
 * start); crc32c("123456789") = 0xE3069283 (RFC 3720, iSCSI).
 *
 * On x86-64 with SSE4.2 the CRC32 instruction does 8 bytes per step
 * (detected at run time with __builtin_cpu_supports); elsewhere a
 * slicing-by-8 table method (Intel, "A Systematic Approach to Building
 * High Performance Software-based CRC Generators", 2005).  The tables
 * are built once, thread-safely, with pthread_once.
 */
#include "store-int.h"

#include <pthread.h>
#include <string.h>

static uint32_t table8[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int use_hw = -1;

static void build_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table8[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table8[t][i] = (table8[t - 1][i] >> 8) ^
				       table8[0][table8[t - 1][i] & 0xff];
#if defined(__x86_64__)
	__builtin_cpu_init();
	use_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
	use_hw = 0;
#endif
}

static uint32_t crc_sw(uint32_t c, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = table8[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint32_t lo = (uint32_t)w ^ c, hi = (uint32_t)(w >> 32);
		c = table8[7][lo & 0xff] ^ table8[6][(lo >> 8) & 0xff] ^
		    table8[5][(lo >> 16) & 0xff] ^ table8[4][lo >> 24] ^
		    table8[3][hi & 0xff] ^ table8[2][(hi >> 8) & 0xff] ^
		    table8[1][(hi >> 16) & 0xff] ^ table8[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = table8[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t c, const uint8_t *p, size_t len)
{
	uint64_t c64;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi(c, *p++);
		len--;
	}
	c64 = c;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c64 = __builtin_ia32_crc32di(c64, w);
		p += 8;
		len -= 8;
	}
	c = (uint32_t)c64;
	while (len--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t fk_crc32c(uint32_t crc, const void *data, size_t len)
{
	pthread_once(&table_once, build_tables);
	uint32_t c = ~crc;
#if defined(__x86_64__)
	if (use_hw)
		return ~crc_hw(c, data, len);
#endif
	return ~crc_sw(c, data, len);
}

/* For the unit test: force the table method (0) or autodetect (-1). */
void fk_crc32c_force_sw(int sw)
{
	pthread_once(&table_once, build_tables);
	if (sw)
		use_hw = 0;
#if defined(__x86_64__)
	else
		use_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
}
