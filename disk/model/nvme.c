// SPDX-License-Identifier: MIT
/*
 * nvme.c - the "nvme" model: a 2018-2020 NVMe TLC drive, after the
 * Samsung SSD 970 EVO 1 TB (MZ-V7E1T0: Phoenix controller, 8 channels,
 * 5 cores of which one talks to the host; 64-layer TLC V-NAND, 32 dies
 * of 256 Gbit; 1 GB LPDDR4; PCIe 3.0 x4, NVMe 1.3).  The engine is
 * disk/model/flash.c (flash.h has the design); this file is its table
 * of parameters.
 *
 * Published figures it is calibrated on (docs/disk.md has the table):
 *   - 3,400 MB/s sequential read, 2,500 MB/s sequential write; 4 KiB
 *     random read 500,000 IOPS and write 450,000 IOPS at QD32 with 4
 *     threads (Samsung's 970 EVO data sheet; the sequential figures and
 *     the 500k are quoted by Legit Reviews and The FPS Review, the 450k
 *     for the 1 TB model from knowledge: KitGuru quotes 480k for 2 TB);
 *   - 4 KiB random read 15,000 IOPS and write 60,000 IOPS at QD1
 *     (the data sheet, from knowledge; not found here);
 *   - Intelligent TurboWrite: 6 GB fixed + 36 GB dynamic SLC on the
 *     1 TB model (The FPS Review, 2020); 1,200 MB/s sequential write
 *     past it (the data sheet, from knowledge).
 * Not published, assumed: a 64 MiB user-data write buffer; FLUSH's own
 * cost 50 us; the SLC buffer empties at the TLC rate while idle.  The
 * NAND figures per die are chosen so that the aggregates match.
 */
#include "flash.h"

static const struct flash_par nvme_par = {
    .link_bps = 3.5e9, /* PCIe 3.0 x4: 3.94 GB/s less TLP overhead */
    .half_duplex = 0,
    .queue_depth = 1024,
    .flush_barrier = 0, /* an NVMe flush is a queued command */
    .ctrl_cores = 4,
    .ctrl_read_ns = 8000,  /* 4 cores: 500k IOPS */
    .ctrl_write_ns = 8890, /* 4 cores: 450k IOPS */
    .lat_read_ns = 12400,  /* QD1 read 66.7 us in all */
    .lat_write_ns = 6600,  /* QD1 write 16.7 us in all */
    .dies = 32,
    .channels = 8,
    .page_bytes = 16384,
    .t_read_ns = 40000,
    .ch_bps = 800e6,	     /* Toggle DDR 3.0 */
    .t_prog_slc_ns = 189000, /* 32 dies: 2.5 GB/s */
    .t_prog_tlc_ns = 416000, /* 32 dies: 1.2 GB/s */
    .slc_bytes = 42000000000ull,
    .slc_drain_bps = 1.2e9,
    .cache_bytes = 64ull << 20,
    .flush_ns = 50000,
};

static void *nvme_create(uint64_t bytes, const char *arg, int write_cache,
			 int *err)
{
	return flash_create(&nvme_par, bytes, arg, write_cache, err);
}

const struct disk_model disk_model_nvme = {
    .name = "nvme",
    .imitates = "PCIe 3.0 x4 NVMe TLC SSD with an SLC buffer (Samsung 970 "
		"EVO 1 TB)",
    /* Samsung spec: 2500 MB/s, 450k IOPS */
    .nominal_write_bps = 2500ull * 1000 * 1000,
    .nominal_write_iops = 450000,
    .create = nvme_create,
    .destroy = flash_destroy,
    .submit = flash_submit,
    .advance = flash_advance,
    .stats = flash_stats,
};
