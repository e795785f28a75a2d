// SPDX-License-Identifier: MIT
/*
 * fk-disk-sim.c - the calibration table of the lab-disk models in
 * simulated time: for each model (or the one named), 4 KiB random read
 * and write IOPS at QD1 and QD32, 1 MiB sequential write MB/s, the
 * fsync latency of a 4 KiB write, the FLUSH cost with a full cache and
 * the time for the SLC buffer to run out, beside the published figure
 * (a target) and the deviation.  The targets and their sources are in
 * docs/disk.md and in each model's file.
 *
 *   fk-disk-sim [--markdown] [MODEL[:ARG]...]
 *
 * ARG is the model's argument (disk/model.h), e.g. ssd:slc=1G for an SLC
 * buffer scaled down as bench/peers/disk.sh runs it; the SLC rows are
 * then sampled every slc/16 bytes over twice the buffer.
 *
 * No device, no clock: it runs the models as test-disk-model does
 * (tests/lib/fkdisksim.c), so it takes seconds whatever the load.
 */
#include "fkdisksim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB 4096ull
#define MIB (1ull << 20)
#define DEV 1000204886016ull /* every model as a 1 TB device */

struct target {
	const char *model, *what;
	double value; /* 0: no published figure */
	const char *unit, *source;
};

/* The published figures (sources: the model files' banners). */
static const struct target targets[] = {
    {"hdd", "randread 4k QD1", 78.6, "IOPS",
     "1/(8.5 ms avg seek + 4.16 ms latency), ST1000DM003 data sheet"},
    {"hdd", "randread 4k QD32", 200, "IOPS",
     "typical 7200 rpm NCQ figure, from knowledge"},
    {"hdd", "randwrite 4k QD1", 0, "IOPS", "none (cache-bound)"},
    {"hdd", "randwrite 4k QD32", 0, "IOPS", "none (cache-bound)"},
    {"hdd", "seqwrite 1M QD1", 210, "MB/s", "max sustained OD, data sheet"},
    {"hdd", "fsync 4k write", 13.7, "ms",
     "9.5 ms avg write seek + 4.16 ms latency, data sheet"},
    {"hdd", "FLUSH, cache full (seq)", 320, "ms",
     "what it held / 210 MB/s, derived from the data sheet"},
    {"hdd", "FLUSH, cache full (4k rand)", 0, "ms", "none"},
    {"ssd", "randread 4k QD1", 10000, "IOPS", "Tom's Hardware review"},
    {"ssd", "randread 4k QD32", 98000, "IOPS", "Samsung spec"},
    {"ssd", "randwrite 4k QD1", 33000, "IOPS",
     "Samsung data sheet, from knowledge"},
    {"ssd", "randwrite 4k QD32", 90000, "IOPS", "Samsung spec"},
    {"ssd", "seqwrite 1M QD1", 520, "MB/s", "Samsung spec"},
    {"ssd", "fsync 4k write", 0, "ms", "none"},
    {"ssd", "FLUSH, cache full (seq)", 0, "ms", "none"},
    {"ssd", "FLUSH, cache full (4k rand)", 0, "ms", "none"},
    {"ssd", "SLC runs out after", 23.1, "s", "12 GB (AnandTech) at 520 MB/s"},
    {"ssd", "seqwrite 1M past SLC", 420, "MB/s", "Samsung, from knowledge"},
    {"nvme", "randread 4k QD1", 15000, "IOPS",
     "Samsung data sheet, from knowledge"},
    {"nvme", "randread 4k QD32", 500000, "IOPS",
     "Samsung data sheet (QD32 x 4 threads: run at QD128)"},
    {"nvme", "randwrite 4k QD1", 60000, "IOPS",
     "Samsung data sheet, from knowledge"},
    {"nvme", "randwrite 4k QD32", 450000, "IOPS",
     "Samsung data sheet (QD32 x 4 threads: run at QD128)"},
    {"nvme", "seqwrite 1M QD1", 2500, "MB/s", "Samsung data sheet"},
    {"nvme", "fsync 4k write", 0, "ms", "none"},
    {"nvme", "FLUSH, cache full (seq)", 0, "ms", "none"},
    {"nvme", "FLUSH, cache full (4k rand)", 0, "ms", "none"},
    {"nvme", "SLC runs out after", 16.8, "s",
     "42 GB (The FPS Review) at 2500 MB/s"},
    {"nvme", "seqwrite 1M past SLC", 1200, "MB/s",
     "Samsung data sheet, from knowledge"},
};

static int markdown;

static double target_override;
static const char *model_arg; /* MODEL:ARG's ARG */

static void row(const char *model, const char *what, double v)
{
	const struct target *t = NULL;
	for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++)
		if (!strcmp(targets[i].model, model) &&
		    !strcmp(targets[i].what, what))
			t = &targets[i];
	const char *unit = t ? t->unit : "";
	char tv[32] = "-", dev[32] = "-";
	double tval = target_override ? target_override : t ? t->value : 0;
	target_override = 0;
	if (tval) {
		snprintf(tv, sizeof(tv), "%.4g", tval);
		snprintf(dev, sizeof(dev), "%+.1f%%",
			 100.0 * (v - tval) / tval);
	}
	if (markdown)
		printf("| %s | %s | %.4g %s | %s | %s | %s |\n", model, what, v,
		       unit, tv, dev, t ? t->source : "");
	else
		printf("%-5s %-28s %12.4g %-5s %10s %8s  %s\n", model, what, v,
		       unit, tv, dev, t ? t->source : "");
	fflush(stdout);
}

static struct fkds_res run(const struct disk_model *m, struct fkds_opts o)
{
	struct fkds_res r;
	o.model = m;
	o.arg = model_arg;
	o.dev_bytes = DEV;
	if (!o.span)
		o.span = DEV;
	if (!o.seed)
		o.seed = 42;
	if (fkds_run(&o, &r) || r.violations) {
		fprintf(stderr, "%s: run failed (%llu contract violations)\n",
			m->name, (unsigned long long)r.violations);
		exit(1);
	}
	return r;
}

static void model_table(const struct disk_model *m)
{
	int hdd = !strcmp(m->name, "hdd");
	int nvme = !strcmp(m->name, "nvme");
	unsigned hi = nvme ? 128 : 32;
	uint64_t cache;
	struct fkds_res r;
	/* Random reads: hdd needs fewer to settle. */
	uint64_t nr = hdd ? 4000 : 200000;
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 1,
				      .op = DREQ_READ,
				      .bs = KIB,
				      .nreq = nr / (hdd ? 2 : 4)});
	row(m->name, "randread 4k QD1", r.iops);
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = hi,
				      .op = DREQ_READ,
				      .bs = KIB,
				      .nreq = nr,
				      .warm = hi});
	row(m->name, "randread 4k QD32", r.iops);
	/* Random writes: past the cache's fill, so the rate is the
	 * medium's (hdd: 64 MB = 16k writes absorbed first). */
	uint64_t nw = hdd ? 40000 : 400000;
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 1,
				      .op = DREQ_WRITE,
				      .bs = KIB,
				      .nreq = nw,
				      .warm = nw / 2});
	row(m->name, "randwrite 4k QD1", r.iops);
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = hi,
				      .op = DREQ_WRITE,
				      .bs = KIB,
				      .nreq = nw,
				      .warm = nw / 2});
	row(m->name, "randwrite 4k QD32", r.iops);
	/* 1 MiB sequential, past the cache's fill. */
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 1,
				      .op = DREQ_WRITE,
				      .seq = 1,
				      .bs = MIB,
				      .nreq = 2048,
				      .warm = 256});
	row(m->name, "seqwrite 1M QD1", r.mbps);
	/* fio --fsync=1: a 4 KiB random write, then its fsync. */
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 1,
				      .op = DREQ_WRITE,
				      .bs = KIB,
				      .nreq = 500,
				      .fsync = 1});
	row(m->name, "fsync 4k write", r.flush_mean_ns / 1e6);
	/* A full cache, then FLUSH: sequential and 4 KiB random fill. */
	struct fkds_res st = run(m, (struct fkds_opts){.write_cache = 1,
						       .qd = 1,
						       .op = DREQ_READ,
						       .bs = KIB,
						       .nreq = 1});
	cache = st.st.cache_limit;
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 32,
				      .op = DREQ_WRITE,
				      .seq = 1,
				      .bs = MIB,
				      .nreq = cache / MIB,
				      .flush_at_end = 1});
	if (hdd)
		target_override = (double)r.cache_at_flush / 210e6 * 1e3;
	row(m->name, "FLUSH, cache full (seq)", (double)r.flush_end_ns / 1e6);
	fprintf(stderr, "  (%s: cache held %.1f MB at the flush)\n", m->name,
		(double)r.cache_at_flush / 1e6);
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 32,
				      .op = DREQ_WRITE,
				      .bs = KIB,
				      .nreq = cache / KIB,
				      .flush_at_end = 1});
	row(m->name, "FLUSH, cache full (4k rand)",
	    (double)r.flush_end_ns / 1e6);
	fprintf(stderr, "  (%s: cache held %.1f MB at the flush)\n", m->name,
		(double)r.cache_at_flush / 1e6);
	if (!st.st.slc_limit)
		return;
	/* Sequential 1 MiB writes at QD4 through the SLC buffer and past
	 * it: the time the rate falls below 0.8 of the first GB's. */
	uint64_t slc = st.st.slc_limit, bucket = 256 * MIB;
	uint64_t n = (slc + slc / 3) / MIB;
	if (model_arg) { /* scaled down: finer buckets, longer past it */
		bucket = slc / 16 / MIB * MIB;
		n = 2 * slc / MIB;
	}
	r = run(m, (struct fkds_opts){.write_cache = 1,
				      .qd = 4,
				      .op = DREQ_WRITE,
				      .seq = 1,
				      .bs = MIB,
				      .nreq = n,
				      .bucket_bytes = bucket});
	double first = 4.0 * (double)bucket / 1e6 /
		       ((double)r.bucket_ns[3] / 1e9); /* MB/s */
	double out = -1;
	for (uint64_t k = 5; k < r.nbucket; k++) {
		double rate =
		    (double)bucket / 1e6 /
		    ((double)(r.bucket_ns[k] - r.bucket_ns[k - 1]) / 1e9);
		if (rate < 0.8 * first) {
			out = (double)r.bucket_ns[k - 1] / 1e9;
			break;
		}
	}
	if (model_arg) { /* the published run-out, scaled to this buffer */
		int err = 0;
		void *full = m->create(DEV, NULL, 1, &err);
		struct disk_model_stats fs = {0};
		if (full) {
			m->stats(full, &fs);
			m->destroy(full);
		}
		for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]);
		     i++)
			if (fs.slc_limit &&
			    !strcmp(targets[i].model, m->name) &&
			    !strcmp(targets[i].what, "SLC runs out after"))
				target_override = targets[i].value *
						  (double)slc /
						  (double)fs.slc_limit;
	}
	row(m->name, "SLC runs out after", out);
	uint64_t k0 = r.nbucket - 8, k1 = r.nbucket - 1;
	row(m->name, "seqwrite 1M past SLC",
	    (double)(k1 - k0) * (double)bucket / 1e6 /
		((double)(r.bucket_ns[k1] - r.bucket_ns[k0]) / 1e9));
	fkds_res_release(&r);
}

int main(int argc, char **argv)
{
	int i = 1;
	if (i < argc && !strcmp(argv[i], "--markdown")) {
		markdown = 1;
		i++;
	}
	if (markdown)
		printf("| model | figure | model | target | deviation | "
		       "target's source |\n|---|---|---|---|---|---|\n");
	else
		printf("%-5s %-28s %12s %-5s %10s %8s  %s\n", "model", "figure",
		       "model", "", "target", "dev", "source");
	const char *names[] = {"hdd", "ssd", "nvme"};
	int any = i < argc;
	for (size_t k = 0; k < 3; k++) {
		int want = !any;
		size_t nl = strlen(names[k]);
		model_arg = NULL;
		for (int j = i; j < argc; j++) {
			if (!strncmp(argv[j], names[k], nl) &&
			    (argv[j][nl] == ':' || !argv[j][nl])) {
				want = 1;
				model_arg =
				    argv[j][nl] ? argv[j] + nl + 1 : NULL;
			}
		}
		if (!want)
			continue;
		const char *arg;
		const struct disk_model *m = disk_model_find(names[k], &arg);
		if (!m) {
			fprintf(stderr, "fk-disk-sim: no model %s\n", names[k]);
			return 1;
		}
		model_table(m);
	}
	return 0;
}
