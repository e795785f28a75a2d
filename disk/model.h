/* SPDX-License-Identifier: MIT */
/*
 * model.h - the timing models of the lab disk (flushkit disk).
 *
 * A model is a discrete-event simulation of one block device in virtual
 * time (nanoseconds).  The daemon (disk/diskd.c) feeds it the requests
 * the loop device sends (read, write, flush), and asks it which of them
 * are done at a given virtual time; it sends the FUSE reply of a request
 * only when the model says it completed, so the host sees the model's
 * latencies and its concurrency (many requests in flight).  The model
 * knows nothing of FUSE, threads or data: it is pure timing, driven by
 * a clock it is given, so tests/disk/test-disk-model.c runs it in simulated
 * time with no device at all.
 *
 * Virtual time.  The daemon maps real time to model time as
 * model_ns = (real_ns - t0) / slowdown: with --slowdown K every time in
 * the model is K times longer in real time, so a 2-core machine can run
 * a model whose full speed it cannot drive.  A model never reads a clock.
 *
 * Write cache.  A model with a volatile write cache completes (DONE) a
 * write when it is in the cache, and reports it DURABLE later, when it
 * has reached the medium.  A model without one (or with it disabled)
 * reports DONE and DURABLE together.  Contract, checked by the daemon
 * and by test-disk-model:
 *   M1. every submitted request gets exactly one DREQ_EV_DONE;
 *       every write also exactly one DREQ_EV_DURABLE, never before its
 *       data arrived (submit) and, if it is DURABLE before DONE, both
 *       in the same advance call;
 *   M2. a flush's DONE comes after the DURABLE of every write whose
 *       DONE came before the flush was submitted (FLUSH semantics: what
 *       was acknowledged before the flush is on the medium after it);
 *   M3. events come in nondecreasing virtual time, and advance(now)
 *       reports only events at or before @now;
 *   M4. the returned next-event time is > now, or UINT64_MAX when the
 *       model has nothing in progress (idle: no event until a submit).
 * The daemon keeps the data: DURABLE of a write moves its blocks from
 * the daemon's cache to the durable image (what survives `disk cut`).
 *
 * Threads: a model instance is used by one thread at a time (the
 * daemon's engine thread holds its lock around every call).
 */
#ifndef FK_DISK_MODEL_H
#define FK_DISK_MODEL_H

#include <stddef.h>
#include <stdint.h>

enum dreq_op {
	DREQ_READ,
	DREQ_WRITE,
	DREQ_FLUSH, /* REQ_OP_FLUSH (the loop device's vfs_fsync of the image)
		     */
};

enum dreq_ev {
	DREQ_EV_DONE,	 /* reply to the host now */
	DREQ_EV_DURABLE, /* a write's data is on the medium */
};

struct dreq {
	enum dreq_op op;
	uint64_t off, len;  /* bytes on the device; 0, 0 for a flush */
	uint64_t arrive_ns; /* model time of submit (set by the caller) */
	uint64_t id;	    /* the caller's, unique, increasing */
	void *priv;	    /* the caller's */
	/* For the model's own use (queue links, state); the caller zeroes
	 * them before submit and never reads them. */
	uint64_t m_start_ns, m_done_ns;
	int m_state, m_unit;
	struct dreq *m_next, *m_prev;
};

/* Called by advance for each event, in time order (M3). */
typedef void (*dreq_event_fn)(void *ctx, struct dreq *r, enum dreq_ev ev,
			      uint64_t at_ns);

/* What a model reports of itself (flushkit disk stats). */
struct disk_model_stats {
	uint64_t queued;      /* requests submitted, not yet DONE */
	uint64_t cache_bytes; /* in the write cache, not yet DURABLE */
	uint64_t cache_limit; /* its size; 0 = no volatile cache */
	uint64_t busy_ns;     /* virtual time some unit was busy */
	uint64_t seeks;	      /* hdd: head movements; others 0 */
	uint64_t slc_used;    /* ssd: bytes in the SLC buffer; others 0 */
	uint64_t slc_limit;   /* ssd: SLC buffer size; others 0 */
	uint64_t merged;      /* requests the model served together */
};

struct disk_model {
	const char *name;     /* "hdd", "ssd", "nvme", "throttle", "ram" */
	const char *imitates; /* the real device, one line */
	/*
	 * Nominal write speed, for callers that size work by it (reproduce
	 * 004's small-file writer) and print it: the sustained sequential
	 * write rate (bytes/s) and 4 KiB random write IOPS past the cache,
	 * from the calibration table in docs/disk.md.  0 = no limit (ram);
	 * throttle's are its arguments (disk_throttle_parse), so 0 here.
	 */
	uint64_t nominal_write_bps, nominal_write_iops;
	/*
	 * New instance for a device of @bytes.  @arg is what followed the
	 * name after ':' in --model (throttle: "BPS:IOPS"; NULL if none).
	 * @write_cache: 1 the volatile cache is on (the default), 0 off
	 * (write-through: DONE = DURABLE).  NULL with *err set to a
	 * positive errno (EINVAL: a bad @arg) on failure.
	 */
	void *(*create)(uint64_t bytes, const char *arg, int write_cache,
			int *err);
	/* Free the instance.  It may still hold requests (a power cut
	 * destroys a busy model): it must not touch them. */
	void (*destroy)(void *m);
	/* A request arrives at r->arrive_ns (>= every earlier arrival). */
	void (*submit)(void *m, struct dreq *r);
	/*
	 * Report every event at or before @now_ns through @fn and return
	 * the time of the next event the model knows of (M4).  A request
	 * belongs to the caller again once its last event was reported:
	 * DONE for a read or a flush, the later of DONE and DURABLE for a
	 * write (the model keeps a write's pointer until its DURABLE).
	 */
	uint64_t (*advance)(void *m, uint64_t now_ns, dreq_event_fn fn,
			    void *ctx);
	void (*stats)(void *m, struct disk_model_stats *out);
};

/* The models (disk/model/NAME.c). */
extern const struct disk_model disk_model_hdd;
extern const struct disk_model disk_model_ssd;
extern const struct disk_model disk_model_nvme;
extern const struct disk_model disk_model_throttle;
extern const struct disk_model disk_model_ram; /* no timing: faults only */

/*
 * Find a model by --model value ("hdd", "ssd", "nvme", "ram",
 * "throttle:BPS:IOPS").  Sets *arg to what followed "NAME:" (NULL if
 * nothing).  NULL if there is no such model.
 */
const struct disk_model *disk_model_find(const char *spec, const char **arg);
/* The @i-th model (0, 1, ...), NULL past the last. */
const struct disk_model *disk_model_at(size_t i);

/*
 * Parse throttle's "BPS:IOPS" (disk/model/throttle.c; the one parser of
 * that value in the tree).  BPS: digits with an optional decimal suffix
 * k, M or G (10^3, 10^6, 10^9), then optionally "B" or "B/s"; IOPS:
 * digits; 0 = no limit on that axis, not both.  0 or -EINVAL.
 */
int disk_throttle_parse(const char *s, uint64_t *bps, uint64_t *iops);

#endif
