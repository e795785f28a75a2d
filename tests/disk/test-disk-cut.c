// SPDX-License-Identifier: MIT
/*
 * test-disk-cut - a power cut of the lab disk loses exactly the
 * unflushed writes.  On a ram disk with its write cache (writes durable
 * at the next FLUSH): write known 4 KiB blocks through the loop device
 * (O_DIRECT), fsync (a FLUSH), overwrite half of them and fsync, overwrite
 * the other half without one, cut, power on, and read every block back:
 *   drop     flushed blocks new, unflushed ones old, each;
 *   subset   flushed new, unflushed old or new, a mix, the same for the
 *            same seed;
 *   reorder  flushed new, unflushed old or new, the same for the same
 *            seed, and over a few seeds both kept and lost writes.
 * While cut, requests fail with EIO.  With "flush ignore" (the cut
 * tests' negative control) an fsync succeeds and makes nothing durable:
 * every block written after the last honoured FLUSH is lost at a drop
 * cut; "flush honor" restores the contract.  An armed cut ("cut drop
 * SEED flush N") happens as the N-th FLUSH arrives, which fails.  Needs root,
 * /dev/fuse, loop devices and the built flushkit-diskd (77 otherwise).
 */
#include "fktest.h"
#include "labdisk.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLK 4096
#define NBLK 128 /* blocks 0..63 flushed, 64..127 not */

static struct labdisk disk;
static int have_disk;

static void cleanup(void)
{
	if (have_disk)
		labdisk_destroy(&disk);
	have_disk = 0;
}

static void fill(uint8_t *b, unsigned blk, unsigned gen)
{
	for (unsigned i = 0; i < BLK / 4; i++) {
		uint32_t v = (blk << 20) ^ (gen << 16) ^ i;
		memcpy(b + 4 * i, &v, 4);
	}
}

static int write_blocks(int fd, unsigned from, unsigned to, unsigned gen)
{
	uint8_t *b;
	if (posix_memalign((void **)&b, BLK, BLK))
		return -1;
	for (unsigned i = from; i < to; i++) {
		fill(b, i, gen);
		if (pwrite(fd, b, BLK, (off_t)i * BLK) != BLK) {
			fprintf(stderr, "pwrite block %u: %s\n", i,
				strerror(errno));
			free(b);
			return -1;
		}
	}
	free(b);
	return 0;
}

/* Per block: 0 old (gen 1), 1 new (gen 2), -1 neither. */
static void read_blocks(int fd, int *state)
{
	uint8_t *b, *want;
	if (posix_memalign((void **)&b, BLK, BLK) ||
	    posix_memalign((void **)&want, BLK, BLK)) {
		CHECK(0);
		return;
	}
	for (unsigned i = 0; i < NBLK; i++) {
		state[i] = -1;
		if (pread(fd, b, BLK, (off_t)i * BLK) != BLK) {
			fprintf(stderr, "pread block %u: %s\n", i,
				strerror(errno));
			continue;
		}
		for (unsigned gen = 1; gen <= 2; gen++) {
			fill(want, i, gen);
			if (!memcmp(b, want, BLK))
				state[i] = (int)gen - 1;
		}
	}
	free(b);
	free(want);
}

static uint64_t stat_u64(const char *name)
{
	char *text = NULL;
	if (labdisk_stats(&disk, &text))
		return UINT64_MAX;
	char *v = labdisk_stat(text, name);
	uint64_t r = v ? strtoull(v, NULL, 10) : UINT64_MAX;
	free(v);
	free(text);
	return r;
}

/* One trial; state[] as read_blocks after the cut and poweron. */
static void trial(const char *mode, uint64_t seed, int *state)
{
	int fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	uint64_t fs0 = stat_u64("fsyncs");
	CHECK(write_blocks(fd, 0, NBLK, 1) == 0); /* old, flushed */
	CHECK(fsync(fd) == 0);
	CHECK(write_blocks(fd, 0, NBLK / 2, 2) == 0); /* new, flushed */
	CHECK(fsync(fd) == 0);
	CHECK(write_blocks(fd, NBLK / 2, NBLK, 2) == 0); /* new, not */
	/* The fsyncs reached the disk as FLUSHes. */
	CHECK(stat_u64("fsyncs") >= fs0 + 2);
	/* Before the cut every block reads new (the cache over the image). */
	int before[NBLK];
	read_blocks(fd, before);
	for (unsigned i = 0; i < NBLK; i++)
		CHECK_EQ(before[i], 1);
	CHECK(stat_u64("cache_bytes") >= (NBLK / 2) * BLK);

	char line[64];
	snprintf(line, sizeof(line), "cut %s %" PRIu64 "\n", mode, seed);
	CHECK(labdisk_ctl(&disk, line) == 0);
	CHECK_EQ(stat_u64("powered"), 0);
	CHECK_EQ(stat_u64("cut_seed"), seed);
	CHECK_EQ(stat_u64("cut_kept_blocks") + stat_u64("cut_lost_blocks"),
		 NBLK / 2);
	/* Cut: every request fails. */
	uint8_t *b;
	CHECK(posix_memalign((void **)&b, BLK, BLK) == 0);
	errno = 0;
	CHECK(pread(fd, b, BLK, 0) < 0 && errno == EIO);
	free(b);
	close(fd);
	CHECK(labdisk_ctl(&disk, "poweron\n") == 0);
	CHECK_EQ(stat_u64("cache_bytes"), 0);

	fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	read_blocks(fd, state);
	close(fd);
	for (unsigned i = 0; i < NBLK / 2; i++)
		CHECK_EQ(state[i], 1); /* flushed: new */
	for (unsigned i = NBLK / 2; i < NBLK; i++)
		CHECK(state[i] == 0 || state[i] == 1); /* never torn */
}

static unsigned count_new(const int *state)
{
	unsigned n = 0;
	for (unsigned i = NBLK / 2; i < NBLK; i++)
		n += state[i] == 1;
	return n;
}

int main(void)
{
	if (!fkt_is_root() || access("/dev/fuse", R_OK | W_OK) ||
	    access("/dev/loop-control", F_OK))
		SKIP("needs root, /dev/fuse and loop devices");
	char bin[4096];
	if (labdisk_daemon_path(bin, sizeof(bin)))
		SKIP("no flushkit-diskd");
	char name[64];
	snprintf(name, sizeof(name), "test-cut-%ld", (long)getpid());
	struct labdisk_opts o = {.model = "ram",
				 .size = 16 << 20,
				 .name = name,
				 .orphan_cleanup = 1};
	if (labdisk_create(&o, &disk)) {
		fprintf(stderr, "cannot create the disk\n");
		return 1;
	}
	have_disk = 1;
	atexit(cleanup);

	int s1[NBLK], s2[NBLK];
	trial("drop", 1, s1);
	CHECK_EQ(count_new(s1), 0);
	CHECK_EQ(stat_u64("cut_lost_blocks"), NBLK / 2);

	trial("subset", 42, s1);
	trial("subset", 42, s2);
	CHECK(!memcmp(s1, s2, sizeof(s1)));
	/* A random half: all or none of 64 would be chance 2^-63. */
	CHECK(count_new(s1) > 0 && count_new(s1) < NBLK / 2);
	trial("subset", 43, s2);
	CHECK(memcmp(s1, s2, sizeof(s1)) != 0);

	unsigned kept = 0, lost = 0;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		trial("reorder", seed, s1);
		trial("reorder", seed, s2);
		CHECK(!memcmp(s1, s2, sizeof(s1)));
		kept += count_new(s1);
		lost += NBLK / 2 - count_new(s1);
	}
	CHECK(kept > 0 && lost > 0);
	printf("reorder over 4 seeds: %u unflushed blocks kept, %u lost\n",
	       kept, lost);
	CHECK_EQ(stat_u64("m2_violations"), 0);

	/* A disk that ignores FLUSH: the fsync'ed overwrite is lost. */
	{
		int fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		CHECK(fd >= 0);
		CHECK(write_blocks(fd, 0, NBLK, 1) == 0);
		CHECK(fsync(fd) == 0); /* honoured: gen 1 durable */
		CHECK(labdisk_ctl(&disk, "flush ignore\n") == 0);
		CHECK_EQ(stat_u64("flush_ignore"), 1);
		uint64_t ign = stat_u64("flushes_ignored");
		CHECK(write_blocks(fd, 0, NBLK, 2) == 0);
		CHECK(fsync(fd) == 0); /* succeeds: nothing durable */
		CHECK(stat_u64("flushes_ignored") > ign);
		close(fd);
		CHECK(labdisk_ctl(&disk, "cut drop 5\npoweron\n") == 0);
		fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		CHECK(fd >= 0);
		read_blocks(fd, s1);
		close(fd);
		for (unsigned i = 0; i < NBLK; i++)
			CHECK_EQ(s1[i], 0); /* all old: the fsync lied */
		CHECK(labdisk_ctl(&disk, "flush bogus\n") == -EINVAL);
		CHECK(labdisk_ctl(&disk, "flush honor\n") == 0);
		CHECK_EQ(stat_u64("flush_ignore"), 0);
		/* Honoured again: the same sequence keeps gen 2. */
		int s3[NBLK];
		fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		CHECK(write_blocks(fd, 0, NBLK, 2) == 0);
		CHECK(fsync(fd) == 0);
		close(fd);
		CHECK(labdisk_ctl(&disk, "cut drop 5\npoweron\n") == 0);
		fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		read_blocks(fd, s3);
		close(fd);
		for (unsigned i = 0; i < NBLK; i++)
			CHECK_EQ(s3[i], 1);
	}
	/* An armed cut: at the 2nd FLUSH from now, before it is done. */
	{
		int fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		CHECK(fd >= 0);
		CHECK(write_blocks(fd, 0, NBLK, 1) == 0);
		CHECK(fsync(fd) == 0);
		CHECK(labdisk_ctl(&disk, "cut drop 9 flush 2\n") == 0);
		CHECK_EQ(stat_u64("cut_armed"), 2);
		CHECK(write_blocks(fd, 0, NBLK / 2, 2) == 0);
		CHECK(fsync(fd) == 0); /* the 1st: honoured */
		CHECK_EQ(stat_u64("cut_armed"), 1);
		CHECK_EQ(stat_u64("powered"), 1);
		CHECK(write_blocks(fd, NBLK / 2, NBLK, 2) == 0);
		errno = 0;
		CHECK(fsync(fd) < 0 && errno == EIO); /* the 2nd: the cut */
		CHECK_EQ(stat_u64("powered"), 0);
		CHECK_EQ(stat_u64("cut_armed"), 0);
		CHECK_EQ(stat_u64("cut_lost_blocks"), NBLK / 2);
		close(fd);
		CHECK(labdisk_ctl(&disk, "poweron\n") == 0);
		fd = open(disk.dev, O_RDWR | O_DIRECT | O_CLOEXEC);
		read_blocks(fd, s1);
		close(fd);
		for (unsigned i = 0; i < NBLK; i++)
			CHECK_EQ(s1[i], i < NBLK / 2 ? 1 : 0);
		CHECK(labdisk_ctl(&disk, "cut drop 9 flush 0\n") == -EINVAL);
	}
	cleanup();
	return fkt_done();
}
