// SPDX-License-Identifier: MIT
/*
 * test-disk-model.c - the lab disk's timing models (hdd, ssd, nvme) in
 * simulated time (tests/lib/fkdisksim.c drives them, no device, no
 * clock): the contract M1-M4 on every event of every run; NCQ (QD32
 * beats QD1 on hdd and ssd); sorted writes beat random ones on hdd; an
 * fsync costs the cache flush and grows with what the cache holds; with
 * the write cache off DONE is DURABLE; the SLC buffer runs out on ssd;
 * the same inputs give the same event trace.
 */
#include "fkdisksim.h"
#include "fktest.h"

#define KIB 4096ull
#define MIB (1ull << 20)
#define DEV (1ull << 40)

static const struct disk_model *model(const char *name)
{
	const char *arg;
	const struct disk_model *m = disk_model_find(name, &arg);
	if (!m) {
		fprintf(stderr, "no model %s\n", name);
		exit(1);
	}
	return m;
}

static struct fkds_res run(const char *name, struct fkds_opts o)
{
	struct fkds_res r;
	o.model = model(name);
	o.dev_bytes = o.dev_bytes ? o.dev_bytes : DEV;
	o.span = o.span ? o.span : o.dev_bytes;
	o.seed = o.seed ? o.seed : 7;
	int rc = fkds_run(&o, &r);
	CHECK_EQ(rc, 0);
	if (r.violations)
		fprintf(stderr, "%s: %llu contract violations (above)\n", name,
			(unsigned long long)r.violations);
	CHECK_EQ(r.violations, 0);
	CHECK_EQ(r.done, o.nreq);
	return r;
}

/* Every model, every kind of run: the contract holds (run() checks). */
static void test_contract(void)
{
	const char *names[] = {"hdd", "ssd", "nvme"};
	for (int i = 0; i < 3; i++)
		for (int wc = 0; wc <= 1; wc++)
			for (int op = 0; op <= 1; op++)
				for (unsigned qd = 1; qd <= 32; qd *= 32) {
					struct fkds_res r =
					    run(names[i],
						(struct fkds_opts){
						    .write_cache = wc,
						    .qd = qd,
						    .op = op ? DREQ_WRITE
							     : DREQ_READ,
						    .bs = op ? KIB : 64 * KIB,
						    .nreq = 600,
						    .fsync = op && qd > 1,
						    .flush_at_end = 1,
						    .dev_bytes = 64 * MIB});
					fkds_res_release(&r);
				}
}

static void test_ncq(void)
{
	struct fkds_opts o = {
	    .write_cache = 1, .op = DREQ_READ, .bs = KIB, .nreq = 2000};
	o.qd = 1;
	double h1 = run("hdd", o).iops;
	o.qd = 32;
	double h32 = run("hdd", o).iops;
	printf("hdd randread 4k: QD1 %.0f IOPS, QD32 %.0f IOPS\n", h1, h32);
	CHECK(h32 > 1.5 * h1);
	o.nreq = 100000;
	o.qd = 1;
	double s1 = run("ssd", o).iops;
	o.qd = 32;
	double s32 = run("ssd", o).iops;
	printf("ssd randread 4k: QD1 %.0f IOPS, QD32 %.0f IOPS\n", s1, s32);
	CHECK(s32 > 5 * s1);
}

/* Past the cache's 64 MB, sorted 4 KiB writes go at the medium's rate,
 * random ones at the seeks'. */
static void test_hdd_sorted(void)
{
	struct fkds_opts o = {.write_cache = 1,
			      .qd = 1,
			      .op = DREQ_WRITE,
			      .bs = KIB,
			      .nreq = 40000,
			      .warm = 20000};
	double rnd = run("hdd", o).iops;
	o.seq = 1;
	double seq = run("hdd", o).iops;
	printf("hdd write 4k past the cache: random %.0f IOPS, sorted %.0f "
	       "IOPS\n",
	       rnd, seq);
	CHECK(seq > 20 * rnd);
	/* Write-through: sorted still wins (no seek, a revolution at most). */
	o.write_cache = 0;
	o.nreq = 500;
	o.warm = 0;
	double wseq = run("hdd", o).iops;
	o.seq = 0;
	double wrnd = run("hdd", o).iops;
	printf("hdd write 4k, cache off: random %.0f IOPS, sorted %.0f IOPS\n",
	       wrnd, wseq);
	CHECK(wseq > wrnd);
}

/* A flush after writes costs writing what the cache holds. */
static void test_flush_cost(void)
{
	const char *names[] = {"hdd", "ssd", "nvme"};
	for (int i = 0; i < 3; i++) {
		struct fkds_opts o = {.write_cache = 1,
				      .qd = 32,
				      .op = DREQ_WRITE,
				      .bs = KIB,
				      .flush_at_end = 1};
		o.nreq = 16;
		struct fkds_res small = run(names[i], o);
		o.nreq = 64; /* 64 MiB at once: more than the dies take */
		o.bs = MIB;
		o.seq = 1;
		struct fkds_res big = run(names[i], o);
		printf("%s: flush after 16 x 4k: %.3f ms (cache %llu B), "
		       "after 64 x 1M: %.3f ms (cache %llu B)\n",
		       names[i], (double)small.flush_end_ns / 1e6,
		       (unsigned long long)small.cache_at_flush,
		       (double)big.flush_end_ns / 1e6,
		       (unsigned long long)big.cache_at_flush);
		CHECK(big.cache_at_flush > small.cache_at_flush);
		CHECK(big.flush_end_ns > small.flush_end_ns);
		/* With the cache off there is nothing left to flush. */
		o.write_cache = 0;
		struct fkds_res wt = run(names[i], o);
		CHECK(wt.flush_end_ns < big.flush_end_ns);
		CHECK_EQ(wt.cache_at_flush, 0);
	}
	/* fio --fsync=1 on hdd: the fsync waits for the head. */
	struct fkds_res f = run("hdd", (struct fkds_opts){.write_cache = 1,
							  .qd = 1,
							  .op = DREQ_WRITE,
							  .bs = KIB,
							  .nreq = 200,
							  .fsync = 1});
	printf("hdd fsync of a 4k write: %.2f ms\n", f.flush_mean_ns / 1e6);
	CHECK(f.flush_mean_ns > 2e6);
	CHECK(f.lat_mean_ns < 1e6); /* the write itself: into the cache */
}

/* Write cache off: DONE and DURABLE at the same time, every write. */
static void test_write_through(void)
{
	const char *names[] = {"hdd", "ssd", "nvme"};
	for (int i = 0; i < 3; i++) {
		struct fkds_opts o = {.write_cache = 0,
				      .qd = 8,
				      .op = DREQ_WRITE,
				      .bs = 16 * KIB,
				      .nreq = 1000,
				      .fsync = 1};
		struct fkds_res r = run(names[i], o);
		CHECK_EQ(r.wt_mismatch, 0);
		CHECK_EQ(r.st.cache_limit, 0);
		o.write_cache = 1; /* and the check can fail */
		r = run(names[i], o);
		CHECK(r.wt_mismatch > 0);
	}
}

/* ssd: sequential writes slow down once the 12 GB SLC buffer is full. */
static void test_slc(void)
{
	uint64_t bucket = 1024 * MIB;
	struct fkds_res r =
	    run("ssd", (struct fkds_opts){.write_cache = 1,
					  .qd = 4,
					  .op = DREQ_WRITE,
					  .seq = 1,
					  .bs = MIB,
					  .nreq = 16 * 1024,
					  .bucket_bytes = bucket});
	CHECK(r.nbucket >= 16);
	if (r.nbucket < 16)
		return;
	double early =
	    (double)bucket / (double)(r.bucket_ns[2] - r.bucket_ns[1]);
	double late =
	    (double)bucket / (double)(r.bucket_ns[15] - r.bucket_ns[14]);
	printf("ssd seq write: %.0f MB/s in the 2nd GiB, %.0f MB/s in the "
	       "16th (SLC %llu of %llu B used)\n",
	       early * 1e3, late * 1e3, (unsigned long long)r.st.slc_used,
	       (unsigned long long)r.st.slc_limit);
	CHECK(late < 0.9 * early);
	CHECK_EQ(r.st.slc_used, r.st.slc_limit > r.st.slc_used
				    ? r.st.slc_used
				    : r.st.slc_limit);
	CHECK(r.st.slc_used + 16 * MIB >= r.st.slc_limit);
	fkds_res_release(&r);
}

/* The same inputs give the same trace; another seed another. */
static void test_determinism(void)
{
	const char *names[] = {"hdd", "ssd", "nvme"};
	for (int i = 0; i < 3; i++) {
		struct fkds_opts o = {.write_cache = 1,
				      .qd = 16,
				      .op = DREQ_WRITE,
				      .bs = 8 * KIB,
				      .nreq = 3000,
				      .fsync = 1,
				      .seed = 3};
		uint64_t a = run(names[i], o).trace_hash;
		uint64_t b = run(names[i], o).trace_hash;
		CHECK(a == b);
		o.op = DREQ_READ;
		o.fsync = 0;
		a = run(names[i], o).trace_hash;
		b = run(names[i], o).trace_hash;
		CHECK(a == b);
		/* The hash sees the timing: on hdd other offsets are other
		 * seeks (flash may well time other offsets the same). */
		o.seed = 4;
		if (i == 0)
			CHECK(a != run(names[i], o).trace_hash);
	}
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_contract();
	test_ncq();
	test_hdd_sorted();
	test_flush_cost();
	test_write_through();
	test_slc();
	test_determinism();
	return fkt_done();
}
