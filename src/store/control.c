// SPDX-License-Identifier: MIT
/*
 * control.c - the page store's control file and catalog, and the
 * tables the catalog names.
 *
 *   control   geometry, state (clean / in production), last checkpoint
 *             and redo LSNs, row counts per table; CRC-32C (576 bytes,
 *             drawn in docs/design.md)
 *   catalog   tables (id, name, row size); CRC-32C
 * Both are replaced atomically (write_durable): write NAME.tmp, fsync
 * it, rename it over NAME, fsync the directory.  A failed fsync on the
 * way stops the store (fk_store_stop); a failure before any fsync
 * (ENOSPC writing NAME.tmp) leaves NAME as it was (S6).
 *
 * Calls only core.c (the sticky stop) and crc32c.c: the checkpointer
 * (which writes the control file at the end of each checkpoint),
 * recovery and the store's face call it, never the other way round.
 *
 * Interface routines: fk_store_write_control, fk_control_read,
 * fk_catalog_write, fk_catalog_read, the pure decoders fk_control_decode
 * and fk_catalog_decode (fuzzed in tests/fuzz/), and the public
 * fk_store_create_table, fk_store_table, fk_store_table_rows.
 */
#include "store-int.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTL_MAGIC 0x54434b46u /* "FKCT" */
#define CAT_MAGIC 0x54414b46u /* "FKAT" */
#define FMT_VERSION 1u

struct cat_entry {
	uint32_t id, row_bytes;
	char name[64];
};

/* ---- the control file ---- */

/*
 * Replace @name in @dirfd atomically and durably with @len bytes.
 * S6: a failure before any fsync (ENOSPC writing NAME.tmp, say) leaves
 * NAME as it was and removes NAME.tmp, so it can simply be tried again
 * once space is freed; a failed fsync (of NAME.tmp or of the directory
 * after the rename) stops the store, as it must never be retried into
 * success.
 */
static int write_durable(struct fk_store *s, int dirfd, const char *name,
			 const void *buf, size_t len)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	int fd = fk_sys.openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return fd;
	int r = fk_pwrite_all(fd, buf, len, 0);
	int synced = 0;
	if (!r) {
		r = fk_sys.fsync(fd);
		synced = 1;
	}
	int rc = fk_sys.close(fd);
	if (!r)
		r = rc;
	if (r && synced) {
		char what[80];
		snprintf(what, sizeof(what), "fsync of %s", tmp);
		fk_store_stop(s, r, what);
	}
	if (!r)
		r = fk_sys.renameat(dirfd, tmp, dirfd, name);
	if (r) {
		fk_sys.unlinkat(dirfd, tmp, 0);
		return r;
	}
	r = fk_sys.fsync(dirfd);
	if (r)
		fk_store_stop(s, r, "fsync of the data directory");
	return r;
}

int fk_store_write_control(struct fk_store *s, int clean,
			   const struct fk_wal_ckpt *ck)
{
	struct fk_control c;
	memset(&c, 0, sizeof(c));
	c.magic = CTL_MAGIC;
	c.version = FMT_VERSION;
	c.state = clean ? FK_CONTROL_CLEAN : FK_CONTROL_PRODUCTION;
	c.checkpoint_lsn = s->ckpt_lsn;
	c.redo_lsn = ck->redo_lsn;
	c.wal_seg_bytes = s->wal_seg_bytes;
	c.seg_bytes = s->seg_bytes;
	memcpy(c.rows, ck->rows, sizeof(c.rows));
	c.crc = fk_crc32c(0, &c, offsetof(struct fk_control, crc));
	return write_durable(s, s->dirfd, "control", &c, sizeof(c));
}

int fk_control_decode(struct fk_control *c, const void *buf, size_t len)
{
	memset(c, 0, sizeof(*c));
	if (len != sizeof(*c))
		return -FK_ECORRUPT;
	memcpy(c, buf, sizeof(*c));
	if (c->magic != CTL_MAGIC || c->version != FMT_VERSION ||
	    c->crc != fk_crc32c(0, c, offsetof(struct fk_control, crc)))
		return -FK_ECORRUPT;
	/* The geometry divides every LSN and block number and sizes the
	 * WAL reader's buffer: a zero or absurd value that passed the CRC
	 * (found by tests/fuzz/fuzz-control.c) must not reach a division or
	 * a huge malloc.  Same bounds as check_opts applies at creation. */
	if ((c->state != FK_CONTROL_CLEAN &&
	     c->state != FK_CONTROL_PRODUCTION) ||
	    c->wal_seg_bytes < 65536 || c->wal_seg_bytes % 8192 ||
	    c->wal_seg_bytes > (1ull << 30) || !c->seg_bytes ||
	    c->seg_bytes % FK_PAGE_SIZE ||
	    c->seg_bytes / FK_PAGE_SIZE > UINT32_MAX)
		return -FK_ECORRUPT;
	return 0;
}

int fk_control_read(struct fk_store *s, struct fk_control *c)
{
	uint8_t buf[sizeof(*c) + 1];
	int fd = fk_sys.openat(s->dirfd, "control", O_RDONLY, 0);
	if (fd < 0)
		return fd;
	/* One byte more than the format: a longer file is corrupt too. */
	ssize_t n = fk_pread_all(fd, buf, sizeof(buf), 0);
	fk_sys.close(fd);
	if (n < 0)
		return (int)n;
	return fk_control_decode(c, buf, (size_t)n);
}

/* ---- the catalog ---- */

/* Under cat_mu (or single-threaded). */
int fk_catalog_write(struct fk_store *s)
{
	size_t n = 0, len;
	uint8_t *buf = malloc(
	    16 + (FK_STORE_MAX_TABLES + 1) * sizeof(struct cat_entry) + 4);
	if (!buf)
		return -ENOMEM;
	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		struct fk_table *t = &s->tables[i];
		if (!t->id)
			continue;
		struct cat_entry e;
		memset(&e, 0, sizeof(e));
		e.id = t->id;
		e.row_bytes = t->row_bytes;
		memcpy(e.name, t->name, sizeof(e.name));
		memcpy(buf + 16 + n * sizeof(e), &e, sizeof(e));
		n++;
	}
	uint32_t hdr[4] = {CAT_MAGIC, FMT_VERSION, (uint32_t)n, 0};
	memcpy(buf, hdr, 16);
	len = 16 + n * sizeof(struct cat_entry);
	uint32_t crc = fk_crc32c(0, buf, len);
	memcpy(buf + len, &crc, 4);
	int r = write_durable(s, s->dirfd, "catalog", buf, len + 4);
	free(buf);
	return r;
}

static void table_setup(struct fk_table *t, uint32_t id, const char *name,
			uint32_t row_bytes)
{
	t->id = id;
	t->row_bytes = row_bytes;
	t->rows_per_page = (FK_PAGE_SIZE - FK_PAGE_HDR) / row_bytes;
	snprintf(t->name, sizeof(t->name), "%s", name);
}

int fk_catalog_decode(struct fk_store *s, const void *buf, size_t n)
{
	uint32_t hdr[4], crc;
	if (n < 20)
		return -FK_ECORRUPT;
	memcpy(hdr, buf, 16);
	if (hdr[0] != CAT_MAGIC || hdr[1] != FMT_VERSION ||
	    hdr[2] > FK_STORE_MAX_TABLES ||
	    n != 16 + hdr[2] * sizeof(struct cat_entry) + 4)
		return -FK_ECORRUPT;
	memcpy(&crc, (const uint8_t *)buf + n - 4, 4);
	if (crc != fk_crc32c(0, buf, n - 4))
		return -FK_ECORRUPT;
	for (uint32_t i = 0; i < hdr[2]; i++) {
		struct cat_entry e;
		memcpy(&e, (const uint8_t *)buf + 16 + i * sizeof(e),
		       sizeof(e));
		if (!e.id || e.id > FK_STORE_MAX_TABLES || !e.row_bytes ||
		    e.row_bytes > FK_PAGE_SIZE - FK_PAGE_HDR)
			return -FK_ECORRUPT;
		e.name[sizeof(e.name) - 1] = 0;
		table_setup(&s->tables[e.id], e.id, e.name, e.row_bytes);
	}
	return 0;
}

int fk_catalog_read(struct fk_store *s)
{
	size_t cap =
	    16 + (FK_STORE_MAX_TABLES + 1) * sizeof(struct cat_entry) + 4;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	int fd = fk_sys.openat(s->dirfd, "catalog", O_RDONLY, 0);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	ssize_t n = fk_pread_all(fd, buf, cap, 0);
	fk_sys.close(fd);
	int r = n < 0 ? (int)n : fk_catalog_decode(s, buf, (size_t)n);
	free(buf);
	return r;
}

/* ---- tables ---- */

int fk_store_create_table(struct fk_store *s, const char *name,
			  uint32_t row_bytes, uint32_t *id)
{
	if (!name || !*name || strlen(name) >= 64 || !row_bytes ||
	    row_bytes > FK_PAGE_SIZE - FK_PAGE_HDR)
		return -EINVAL;
	int r = fk_store_stopped(s);
	if (r)
		return r;
	pthread_mutex_lock(&s->cat_mu);
	uint32_t free_id = 0;
	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		if (s->tables[i].id && !strcmp(s->tables[i].name, name)) {
			pthread_mutex_unlock(&s->cat_mu);
			return -EEXIST;
		}
		if (!s->tables[i].id && !free_id)
			free_id = i;
	}
	if (!free_id) {
		pthread_mutex_unlock(&s->cat_mu);
		return -ENOSPC;
	}
	struct fk_table *t = &s->tables[free_id];
	table_setup(t, 0, name, row_bytes);
	t->id = free_id; /* for fk_catalog_write */
	r = fk_catalog_write(s);
	if (r) {
		t->id = 0;
	} else {
		__atomic_store_n(&t->rows, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&t->id, free_id, __ATOMIC_RELEASE);
		if (id)
			*id = free_id;
	}
	pthread_mutex_unlock(&s->cat_mu);
	return r;
}

int fk_store_table(struct fk_store *s, const char *name, uint32_t *id,
		   uint32_t *row_bytes)
{
	int r = -ENOENT;
	if (!name)
		return -EINVAL;
	pthread_mutex_lock(&s->cat_mu);
	for (uint32_t i = 1; i <= FK_STORE_MAX_TABLES; i++) {
		if (s->tables[i].id && !strcmp(s->tables[i].name, name)) {
			if (id)
				*id = i;
			if (row_bytes)
				*row_bytes = s->tables[i].row_bytes;
			r = 0;
			break;
		}
	}
	pthread_mutex_unlock(&s->cat_mu);
	return r;
}

int fk_store_table_rows(struct fk_store *s, uint32_t id, uint64_t *rows)
{
	struct fk_table *t = fk_store_get_table(s, id);
	if (!t)
		return -ENOENT;
	*rows = __atomic_load_n(&t->rows, __ATOMIC_ACQUIRE);
	return 0;
}
