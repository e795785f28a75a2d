// SPDX-License-Identifier: MIT
/*
 * compress.c - compression of full-page images in the WAL, as
 * PostgreSQL's wal_compression=lz4|zstd: each 8 KiB image a commit logs
 * is compressed on its own (LZ4's default acceleration, zstd level 1),
 * and logged as it is when compression would not make it smaller.
 * Built with liblz4 and/or libzstd where CMake found them
 * (FK_HAVE_LZ4, FK_HAVE_ZSTD); a method this build lacks is refused:
 * fk_store_open fails with -ENOTSUP, and a WAL record holding such an
 * image is not replayed (-ENOTSUP, never a page left unrestored).
 *
 * Pure functions but for a per-thread zstd context (created on first
 * use, freed at thread exit): no I/O, thread-safe.
 *
 * Interface routines: fk_wal_compression_name, fk_wal_compression_parse
 * (public); fk_fpi_method_available, fk_fpi_compress, fk_fpi_decompress.
 */
#include "store-int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef FK_HAVE_LZ4
#include <lz4.h>
#endif
#ifdef FK_HAVE_ZSTD
#include <zstd.h>
#endif

#define ZSTD_LEVEL 1

static const char *const names[] = {
    [FK_WAL_COMPRESSION_OFF] = "off",
    [FK_WAL_COMPRESSION_LZ4] = "lz4",
    [FK_WAL_COMPRESSION_ZSTD] = "zstd",
};

const char *fk_wal_compression_name(int method)
{
	if (method < FK_WAL_COMPRESSION_OFF || method > FK_WAL_COMPRESSION_ZSTD)
		return "unknown";
	return names[method];
}

int fk_wal_compression_parse(const char *name)
{
	if (!name)
		return -EINVAL;
	for (int i = FK_WAL_COMPRESSION_OFF; i <= FK_WAL_COMPRESSION_ZSTD; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -EINVAL;
}

int fk_fpi_method_available(int method)
{
	switch (method) {
	case FK_WAL_COMPRESSION_OFF:
		return 1;
#ifdef FK_HAVE_LZ4
	case FK_WAL_COMPRESSION_LZ4:
		return 1;
#endif
#ifdef FK_HAVE_ZSTD
	case FK_WAL_COMPRESSION_ZSTD:
		return 1;
#endif
	default:
		return 0;
	}
}

#ifdef FK_HAVE_ZSTD
static pthread_key_t zkey_c, zkey_d;
static pthread_once_t zonce = PTHREAD_ONCE_INIT;
static int zkeys_ok;

static void free_cctx(void *p)
{
	ZSTD_freeCCtx(p);
}

static void free_dctx(void *p)
{
	ZSTD_freeDCtx(p);
}

static void zkeys_init(void)
{
	zkeys_ok = !pthread_key_create(&zkey_c, free_cctx) &&
		   !pthread_key_create(&zkey_d, free_dctx);
}

static ZSTD_CCtx *thread_cctx(void)
{
	pthread_once(&zonce, zkeys_init);
	if (!zkeys_ok)
		return NULL;
	ZSTD_CCtx *c = pthread_getspecific(zkey_c);
	if (!c) {
		c = ZSTD_createCCtx();
		if (c && pthread_setspecific(zkey_c, c)) {
			ZSTD_freeCCtx(c);
			c = NULL;
		}
	}
	return c;
}

static ZSTD_DCtx *thread_dctx(void)
{
	pthread_once(&zonce, zkeys_init);
	if (!zkeys_ok)
		return NULL;
	ZSTD_DCtx *d = pthread_getspecific(zkey_d);
	if (!d) {
		d = ZSTD_createDCtx();
		if (d && pthread_setspecific(zkey_d, d)) {
			ZSTD_freeDCtx(d);
			d = NULL;
		}
	}
	return d;
}
#endif

size_t fk_fpi_compress(int method, const uint8_t *page, uint8_t *out)
{
	switch (method) {
#ifdef FK_HAVE_LZ4
	case FK_WAL_COMPRESSION_LZ4: {
		int n = LZ4_compress_default((const char *)page, (char *)out,
					     (int)FK_PAGE_SIZE,
					     (int)FK_PAGE_SIZE - 1);
		return n > 0 ? (size_t)n : 0;
	}
#endif
#ifdef FK_HAVE_ZSTD
	case FK_WAL_COMPRESSION_ZSTD: {
		ZSTD_CCtx *c = thread_cctx();
		if (!c)
			return 0;
		size_t n = ZSTD_compressCCtx(c, out, FK_PAGE_SIZE - 1, page,
					     FK_PAGE_SIZE, ZSTD_LEVEL);
		return ZSTD_isError(n) ? 0 : n;
	}
#endif
	default:
		(void)page;
		(void)out;
		return 0;
	}
}

int fk_fpi_decompress(int method, const uint8_t *in, size_t len, uint8_t *page)
{
	switch (method) {
	case FK_WAL_COMPRESSION_LZ4:
#ifdef FK_HAVE_LZ4
	{
		if (len > (size_t)INT32_MAX)
			return -FK_ECORRUPT;
		int n = LZ4_decompress_safe((const char *)in, (char *)page,
					    (int)len, (int)FK_PAGE_SIZE);
		return n == (int)FK_PAGE_SIZE ? 0 : -FK_ECORRUPT;
	}
#else
		return -ENOTSUP;
#endif
	case FK_WAL_COMPRESSION_ZSTD:
#ifdef FK_HAVE_ZSTD
	{
		ZSTD_DCtx *d = thread_dctx();
		if (!d)
			return -ENOMEM;
		size_t n = ZSTD_decompressDCtx(d, page, FK_PAGE_SIZE, in, len);
		return !ZSTD_isError(n) && n == FK_PAGE_SIZE ? 0 : -FK_ECORRUPT;
	}
#else
		return -ENOTSUP;
#endif
	default:
		return -FK_ECORRUPT;
	}
}
