// SPDX-License-Identifier: MIT
/*
 * cache.c - the lab disk's block cache (see cache.h): an open-addressing
 * hash table of 4 KiB blocks (linear probing, backward-shift deletion),
 * each with its newest data and the sequence number of its last write.
 *
 * Interface routines: bcache_init, bcache_release, bcache_write,
 * bcache_read, bcache_durable, bcache_cut.
 */
#include "cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

void bcache_init(struct bcache *c, uint8_t *image, uint64_t size)
{
	memset(c, 0, sizeof(*c));
	c->image = image;
	c->size = size;
}

static void free_all(struct bcache *c)
{
	for (uint64_t i = 0; i < c->cap; i++)
		if (c->tab[i].key)
			free(c->tab[i].data);
	free(c->tab);
	c->tab = NULL;
	c->cap = c->n = 0;
}

void bcache_release(struct bcache *c)
{
	free_all(c);
}

static struct bcache_ent *find(const struct bcache *c, uint64_t blk)
{
	if (!c->cap)
		return NULL;
	uint64_t key = blk + 1, mask = c->cap - 1;
	for (uint64_t i = hash(key) & mask;; i = (i + 1) & mask) {
		if (c->tab[i].key == key)
			return &c->tab[i];
		if (!c->tab[i].key)
			return NULL;
	}
}

static void put(struct bcache_ent *tab, uint64_t cap, struct bcache_ent e)
{
	uint64_t mask = cap - 1;
	uint64_t i = hash(e.key) & mask;
	while (tab[i].key)
		i = (i + 1) & mask;
	tab[i] = e;
}

static int grow(struct bcache *c)
{
	uint64_t cap = c->cap ? c->cap * 2 : 1024;
	struct bcache_ent *tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (uint64_t i = 0; i < c->cap; i++)
		if (c->tab[i].key)
			put(tab, cap, c->tab[i]);
	free(c->tab);
	c->tab = tab;
	c->cap = cap;
	return 0;
}

static void del(struct bcache *c, struct bcache_ent *e)
{
	uint64_t mask = c->cap - 1;
	uint64_t i = (uint64_t)(e - c->tab);
	free(e->data);
	c->tab[i].key = 0;
	c->n--;
	/* Backward shift: move up every entry of the run after the hole
	 * whose home slot is not between the hole and it. */
	for (uint64_t j = (i + 1) & mask; c->tab[j].key; j = (j + 1) & mask) {
		uint64_t home = hash(c->tab[j].key) & mask;
		int between =
		    i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (between)
			continue;
		c->tab[i] = c->tab[j];
		c->tab[j].key = 0;
		i = j;
	}
}

int bcache_write(struct bcache *c, uint64_t off, uint64_t len, const void *buf,
		 uint64_t seq)
{
	const uint8_t *src = buf;
	while (len) {
		uint64_t blk = off / BCACHE_BLOCK;
		uint64_t in = off % BCACHE_BLOCK;
		uint64_t n = BCACHE_BLOCK - in < len ? BCACHE_BLOCK - in : len;
		struct bcache_ent *e = find(c, blk);
		if (!e) {
			if ((c->n + 1) * 2 > c->cap && grow(c))
				return -ENOMEM;
			uint8_t *d = malloc(BCACHE_BLOCK);
			if (!d)
				return -ENOMEM;
			/* A partial block starts as the durable one. */
			if (n < BCACHE_BLOCK)
				memcpy(d, c->image + blk * BCACHE_BLOCK,
				       BCACHE_BLOCK);
			struct bcache_ent ne = {blk + 1, seq, d};
			put(c->tab, c->cap, ne);
			c->n++;
			e = find(c, blk);
		}
		memcpy(e->data + in, src, n);
		e->seq = seq;
		src += n;
		off += n;
		len -= n;
	}
	return 0;
}

void bcache_read(const struct bcache *c, uint64_t off, uint64_t len, void *buf)
{
	uint8_t *dst = buf;
	while (len) {
		uint64_t blk = off / BCACHE_BLOCK;
		uint64_t in = off % BCACHE_BLOCK;
		uint64_t n = BCACHE_BLOCK - in < len ? BCACHE_BLOCK - in : len;
		const struct bcache_ent *e = find(c, blk);
		memcpy(dst, e ? e->data + in : c->image + off, n);
		dst += n;
		off += n;
		len -= n;
	}
}

void bcache_durable(struct bcache *c, uint64_t off, uint64_t len, uint64_t seq)
{
	if (!len)
		return;
	uint64_t first = off / BCACHE_BLOCK;
	uint64_t last = (off + len - 1) / BCACHE_BLOCK;
	for (uint64_t blk = first; blk <= last; blk++) {
		struct bcache_ent *e = find(c, blk);
		if (!e)
			continue; /* already written by a later DURABLE */
		memcpy(c->image + blk * BCACHE_BLOCK, e->data, BCACHE_BLOCK);
		if (e->seq <= seq)
			del(c, e);
	}
}

/* splitmix64: the cut's PRNG (small, seedable, good enough to pick). */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int by_seq_blk(const void *a, const void *b)
{
	const struct bcache_ent *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int by_blk(const void *a, const void *b)
{
	const struct bcache_ent *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

int bcache_cut(struct bcache *c, enum bcache_cut mode, uint64_t seed,
	       uint64_t *kept, uint64_t *lost)
{
	*kept = 0;
	*lost = c->n;
	if (mode == BCACHE_CUT_DROP || !c->n) {
		free_all(c);
		return 0;
	}
	/* In an order that depends on the contents only (the table's
	 * layout depends on the history of arrivals). */
	struct bcache_ent *v = malloc(c->n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	uint64_t n = 0;
	for (uint64_t i = 0; i < c->cap; i++)
		if (c->tab[i].key)
			v[n++] = c->tab[i];
	uint64_t s = seed;
	if (mode == BCACHE_CUT_SUBSET) {
		qsort(v, n, sizeof(*v), by_blk);
		for (uint64_t i = 0; i < n; i++)
			if (next_rand(&s) & 1) {
				memcpy(c->image + (v[i].key - 1) * BCACHE_BLOCK,
				       v[i].data, BCACHE_BLOCK);
				(*kept)++;
			}
	} else {
		/* Groups: the blocks of one write (same seq), in seq order;
		 * a permutation of the groups; its first k applied. */
		qsort(v, n, sizeof(*v), by_seq_blk);
		uint64_t ng = 0;
		uint64_t *start = malloc((n + 1) * sizeof(*start));
		if (!start) {
			free(v);
			return -ENOMEM;
		}
		for (uint64_t i = 0; i < n; i++)
			if (!i || v[i].seq != v[i - 1].seq)
				start[ng++] = i;
		start[ng] = n;
		uint64_t *perm = malloc(ng * sizeof(*perm));
		if (!perm) {
			free(start);
			free(v);
			return -ENOMEM;
		}
		for (uint64_t i = 0; i < ng; i++)
			perm[i] = i;
		for (uint64_t i = ng - 1; i > 0; i--) {
			uint64_t j = next_rand(&s) % (i + 1);
			uint64_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		uint64_t k = next_rand(&s) % (ng + 1);
		for (uint64_t g = 0; g < k; g++)
			for (uint64_t i = start[perm[g]];
			     i < start[perm[g] + 1]; i++) {
				memcpy(c->image + (v[i].key - 1) * BCACHE_BLOCK,
				       v[i].data, BCACHE_BLOCK);
				(*kept)++;
			}
		free(perm);
		free(start);
	}
	*lost = n - *kept;
	free(v);
	free_all(c);
	return 0;
}
