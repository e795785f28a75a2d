/* SPDX-License-Identifier: MIT */
/*
 * fkdisksim.h - drive a lab-disk model (disk/model.h) in simulated time
 * with a closed-loop workload, checking the model's contract M1-M4 on
 * every event.  Used by test-disk-model and tests/tools/fk-disk-sim.
 *
 * The workload: @qd slots, each issuing its next request when the one
 * before it is DONE (at that virtual time), until @nreq requests were
 * issued; reads or writes of @bs bytes, at random @bs-aligned offsets
 * in [0, span) or sequential from 0; with @fsync, every write is
 * followed by a FLUSH from its slot (fio's fsync=1); with @flush_at_end,
 * one FLUSH once every request is DONE (its latency is flush_end_ns).
 * Then the model is run until idle, so every write is DURABLE.
 * Deterministic: the same options give the same events (trace_hash).
 */
#ifndef FKDISKSIM_H
#define FKDISKSIM_H

#include "model.h"

#include <stdint.h>

struct fkds_opts {
	const struct disk_model *model;
	const char *arg; /* the model's argument ("slc=1G"), or NULL */
	uint64_t dev_bytes;
	int write_cache;
	unsigned qd;
	enum dreq_op op; /* DREQ_READ or DREQ_WRITE */
	int seq;
	uint64_t bs, span, nreq;
	uint64_t warm; /* DONEs not counted in the rate */
	int fsync, flush_at_end;
	uint64_t seed;
	uint64_t bucket_bytes; /* sample the time every this many bytes */
};

struct fkds_res {
	uint64_t done, bytes;
	uint64_t t_warm_ns, t_last_ns; /* at the warm-th, the last DONE */
	double iops, mbps;	       /* after warm-up: DONEs, 1e6 B/s */
	double lat_mean_ns;	       /* request latency (not flushes) */
	uint64_t flushes;
	double flush_mean_ns;
	uint64_t flush_max_ns;
	uint64_t flush_end_ns;	 /* the flush_at_end one */
	uint64_t cache_at_flush; /* cache_bytes when it was submitted */
	uint64_t t_idle_ns;	 /* when the model went idle */
	uint64_t violations;	 /* contract breaches (printed) */
	uint64_t wt_mismatch;	 /* writes whose DURABLE at != DONE at */
	uint64_t trace_hash;	 /* FNV-1a of every (id, event, time) */
	uint64_t *bucket_ns;	 /* time bytes reached k*bucket_bytes */
	uint64_t nbucket;
	struct disk_model_stats st; /* at the end */
};

/* Run; 0, or -ENOMEM / -EINVAL (model create failed; message printed).
 * Release with fkds_res_release. */
int fkds_run(const struct fkds_opts *o, struct fkds_res *res);
void fkds_res_release(struct fkds_res *res);

#endif
