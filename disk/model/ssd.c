// SPDX-License-Identifier: MIT
/*
 * ssd.c - the "ssd" model: a SATA SSD of the seeds' era, after the
 * Samsung SSD 840 EVO 1 TB (seed 000 ran on one): MEX controller,
 * 19 nm TLC NAND, TurboWrite (an SLC write buffer), SATA 6 Gb/s.  The
 * engine is disk/model/flash.c (flash.h has the design); this file is
 * its table of parameters.
 *
 * Published figures it is calibrated on (docs/disk.md has the table):
 *   - 4 KiB random read 98,000 IOPS, random write 90,000 IOPS at QD32;
 *     540 MB/s sequential read, 520 MB/s sequential write (Samsung's
 *     specification, quoted by ocaholic.ch's 840 EVO review table);
 *   - about 10,000 IOPS 4 KiB random read at QD1 (Tom's Hardware, "840
 *     EVO SSD: Tested at 120, 250, 500 and 1000 GB", p. 7);
 *   - 33,000 IOPS 4 KiB random write at QD1 (Samsung's 840 EVO data
 *     sheet, from knowledge: not found here);
 *   - TurboWrite buffer 12 GB on the 1 TB model, emptied into TLC in
 *     "15 - 30 seconds" of idle time (AnandTech, "Samsung SSD 840 EVO
 *     Review", 2013, TurboWrite page);
 *   - about 420 MB/s sequential write once TurboWrite is full (Samsung's
 *     figure for the 500 GB-1 TB models, from knowledge).
 * Not published, assumed: the DRAM write buffer's share of the 1 GB
 * LPDDR2 (most of it holds the mapping table) is taken as 32 MiB; the
 * FLUSH CACHE cost beyond programming the buffer, 200 us.  The NAND
 * figures per die (64 dies of 128 Gbit on 8 channels, 16 KiB pages)
 * are chosen so that the aggregates match the figures above; t_read
 * is a plausible 19 nm TLC read time.
 */
#include "flash.h"

static const struct flash_par ssd_par = {
    .link_bps = 550e6, /* SATA 6 Gb/s after 8b/10b and framing */
    .half_duplex = 1,
    .queue_depth = 32, /* NCQ */
    .flush_barrier = 1,
    .ctrl_cores = 1,
    .ctrl_read_ns = 10200,  /* 98k IOPS at depth */
    .ctrl_write_ns = 11100, /* 90k IOPS at depth */
    .lat_read_ns = 12100,   /* QD1 read 100 us in all */
    .lat_write_ns = 11750,  /* QD1 write 30.3 us in all */
    .dies = 64,
    .channels = 8,
    .page_bytes = 16384,
    .t_read_ns = 60000,
    .ch_bps = 400e6,		 /* Toggle DDR 2.0 */
    .t_prog_slc_ns = 600000,	 /* 64 dies: ~1.6 GB/s, above the link */
    .t_prog_tlc_ns = 2455000,	 /* 64 dies: 420 MB/s */
    .slc_bytes = 12000000000ull, /* TurboWrite, 1 TB model */
    .slc_drain_bps = 400e6,	 /* 12 GB in 30 s */
    .cache_bytes = 32ull << 20,
    .flush_ns = 200000,
};

static void *ssd_create(uint64_t bytes, const char *arg, int write_cache,
			int *err)
{
	return flash_create(&ssd_par, bytes, arg, write_cache, err);
}

const struct disk_model disk_model_ssd = {
    .name = "ssd",
    .imitates = "SATA TLC SSD with an SLC buffer (Samsung 840 EVO 1 TB)",
    /* Samsung spec: 520 MB/s, 90k IOPS QD32 */
    .nominal_write_bps = 520ull * 1000 * 1000,
    .nominal_write_iops = 90000,
    .create = ssd_create,
    .destroy = flash_destroy,
    .submit = flash_submit,
    .advance = flash_advance,
    .stats = flash_stats,
};
