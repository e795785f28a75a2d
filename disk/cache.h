/* SPDX-License-Identifier: MIT */
/*
 * cache.h - the lab disk's block cache: written data that is not yet
 * durable (disk/diskd.c).
 *
 * The durable image is a byte array (a memfd or a --backing file,
 * mmap'ed): what the disk holds after a power cut.  Every write is
 * copied into the cache when it arrives, block by block (BCACHE_BLOCK
 * bytes); the cache keeps, for each block it holds, the block's newest
 * data and the sequence number of the write that last wrote it.  Reads
 * see the cache over the image.  When the model reports a write
 * DURABLE, bcache_durable moves its blocks to the image.
 *
 * Coalescing.  Only a block's newest data is kept: a block written by
 * write A and then by B holds B's data.  A DURABLE of A then writes B's
 * data to the image (the disk wrote the block late, with what it held
 * by then) and keeps the block cached for B's own DURABLE.  So what was
 * flushed is on the image or overwritten there by newer data, never
 * older (contract M2 holds on the image), and a cut can yield, per
 * block, the durable data or the newest: never an intermediate
 * version that was overwritten in the cache.
 *
 * Invariants:
 * 1. A block is in the cache iff some write of it has arrived and its
 *    newest write is not yet DURABLE (and no cut came since).
 * 2. bytes == blocks held * BCACHE_BLOCK.
 * 3. The image changes only in bcache_durable and bcache_cut.
 *
 * Not thread-safe: the daemon holds its lock around every call.
 */
#ifndef FK_DISK_CACHE_H
#define FK_DISK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define BCACHE_BLOCK 4096u

struct bcache_ent {
	uint64_t key; /* block number + 1; 0 = empty slot */
	uint64_t seq; /* the write that last wrote it */
	uint8_t *data;
};

struct bcache {
	uint8_t *image; /* the durable image */
	uint64_t size;	/* bytes, a multiple of BCACHE_BLOCK */
	struct bcache_ent *tab;
	uint64_t cap; /* slots, a power of 2 */
	uint64_t n;   /* blocks held */
};

void bcache_init(struct bcache *c, uint8_t *image, uint64_t size);
void bcache_release(struct bcache *c);
static inline uint64_t bcache_bytes(const struct bcache *c)
{
	return c->n * BCACHE_BLOCK;
}
/* Copy a write of [@off, @off + @len) into the cache as write @seq.  0
 * or -ENOMEM (then the cache may hold part of it: the write fails). */
int bcache_write(struct bcache *c, uint64_t off, uint64_t len, const void *buf,
		 uint64_t seq);
/* What a read of [@off, @off + @len) sees. */
void bcache_read(const struct bcache *c, uint64_t off, uint64_t len, void *buf);
/* Write @seq is durable: its blocks go to the image (see Coalescing);
 * those whose newest write is @seq (or older) leave the cache. */
void bcache_durable(struct bcache *c, uint64_t off, uint64_t len, uint64_t seq);

/* Power cut: what of the cache reaches the image. */
enum bcache_cut {
	BCACHE_CUT_DROP,    /* nothing */
	BCACHE_CUT_SUBSET,  /* each block with probability 1/2 */
	BCACHE_CUT_REORDER, /* the writes (blocks grouped by their newest
			     * write) in a random order, a random-length
			     * prefix of it */
};
/* Apply @mode with the PRNG seeded by @seed (the same cache contents
 * and seed give the same image), then empty the cache.  *@kept and
 * *@lost: blocks applied and lost.  0 or -ENOMEM. */
int bcache_cut(struct bcache *c, enum bcache_cut mode, uint64_t seed,
	       uint64_t *kept, uint64_t *lost);

#endif
