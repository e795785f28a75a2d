/* SPDX-License-Identifier: MIT */
/*
 * flash.h - the flash-drive engine shared by the "ssd" and "nvme"
 * models: one simulation, two tables of parameters (disk/model/ssd.c,
 * disk/model/nvme.c, where the real devices and their figures are).
 *
 * The drive, as the engine sees it:
 *   - a host link (SATA: one half-duplex link; PCIe: one per direction)
 *     at link_bps, each transfer after the one before it;
 *   - a queue of queue_depth commands in the drive (NCQ 32, NVMe deep);
 *     more wait in the host queue;
 *   - a controller of ctrl_cores cores, each command taking one core for
 *     ctrl_read_ns / ctrl_write_ns (the IOPS limit at depth), and a
 *     fixed, uncontended latency lat_read_ns / lat_write_ns (firmware
 *     path, the rest of the QD1 latency);
 *   - dies (channels of dies each): a read of page p goes to die
 *     hash(p) % dies, takes t_read_ns on the die then page transfer on
 *     its channel (ch_bps); reads are placed on the die when issued, so
 *     they wait behind at most the program in progress;
 *   - a volatile DRAM write buffer of cache_bytes: a write is DONE when
 *     its data crossed the link into it; the buffer is programmed to the
 *     dies in page_bytes pages (log-structured: the next free die, data
 *     in arrival order, a page as soon as a die is free, a part page
 *     too), in SLC mode (t_prog_slc_ns) while the SLC buffer has room
 *     (slc_bytes), then TLC (t_prog_tlc_ns); the SLC buffer empties into
 *     TLC only while the drive is idle, at slc_drain_bps (the model's
 *     argument "slc=SIZE", as in --model=ssd:slc=128M, scales it down);
 *   - FLUSH: complete when every write DONE before it is programmed,
 *     plus flush_ns.  With flush_barrier (ATA FLUSH CACHE is non-queued)
 *     it waits for the commands before it and holds those after it.
 *
 * Invariants:
 *   F1. bytes enter the buffer stream in arrival order (writes are
 *       admitted in order, the link is FIFO and lat_write_ns constant),
 *       and a write is DURABLE when every page holding its bytes, and
 *       every earlier page, is programmed: DURABLE in arrival order, so
 *       overlapping writes reach the medium oldest first;
 *   F2. a flush's target is the stream position at its start; it is
 *       done when the programmed frontier reaches it (M2);
 *   F3. everything is emitted from run_until() in time order (M3).
 * The engine owns a request from submit to DONE; after it only its
 * pointer is kept, to report DURABLE.
 */
#ifndef FK_DISK_FLASH_H
#define FK_DISK_FLASH_H

#include "model.h"

struct flash_par {
	double link_bps; /* per direction (half_duplex: shared) */
	int half_duplex; /* SATA */
	unsigned queue_depth;
	int flush_barrier; /* ATA FLUSH CACHE: non-queued */
	unsigned ctrl_cores;
	uint64_t ctrl_read_ns, ctrl_write_ns;
	uint64_t lat_read_ns, lat_write_ns;
	unsigned dies, channels;
	uint64_t page_bytes;
	uint64_t t_read_ns;
	double ch_bps;
	uint64_t t_prog_slc_ns, t_prog_tlc_ns;
	uint64_t slc_bytes;
	double slc_drain_bps;
	uint64_t cache_bytes;
	uint64_t flush_ns;
};

void *flash_create(const struct flash_par *p, uint64_t bytes, const char *arg,
		   int write_cache, int *err);
void flash_destroy(void *m);
void flash_submit(void *m, struct dreq *r);
uint64_t flash_advance(void *m, uint64_t now_ns, dreq_event_fn fn, void *ctx);
void flash_stats(void *m, struct disk_model_stats *out);

#endif
