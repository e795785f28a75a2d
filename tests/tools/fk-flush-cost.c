// SPDX-License-Identifier: MIT
/*
 * fk-flush-cost.c - the cost of a FLUSH after a burst of writes, on a
 * block device: BYTES written with direct I/O in BS requests, QD at a
 * time (QD threads, each pwrite()s its share of the requests in turn),
 * sequential from the start or random (4 KiB aligned, a fixed seed);
 * every write completed, then one fsync() of the device, timed.  What
 * fio cannot give: fio's fsync on an asynchronous engine does not wait
 * for the writes in flight, and two fio jobs leave a gap in which the
 * disk destages its cache.
 *
 *   fk-flush-cost [--random] [--repeat N] DEV BYTES BS QD
 *
 * BYTES and BS: digits with an optional K, M or G (2^10, 2^20, 2^30).
 * Before each repeat an untimed fsync() empties the cache.  Prints one
 * line per repeat, "write_ms W fsync_ms F", then "fsync_ms_mean M".
 * The device is WRITTEN.  Exit 0, 1 (an I/O error, named), 2 (usage).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct burst {
	int fd;
	uint64_t bs, nreq, devsize;
	int random;
	uint64_t seed;
	unsigned qd;
	int err; /* first errno */
	const char *dev;
	pthread_mutex_t lock;
};

struct worker {
	struct burst *b;
	unsigned idx;
	void *buf;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	unsigned shift = 0;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > UINT64_MAX >> shift)
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* Request i's offset: sequential, or a 4 KiB aligned hash of (seed, i). */
static uint64_t offset_of(const struct burst *b, uint64_t i)
{
	if (!b->random)
		return i * b->bs;
	uint64_t x = (b->seed + i) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	uint64_t slots = (b->devsize - b->bs) / 4096 + 1;
	return (x % slots) * 4096;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct burst *b = w->b;
	for (uint64_t i = w->idx; i < b->nreq; i += b->qd) {
		uint64_t off = offset_of(b, i);
		ssize_t n = pwrite(b->fd, w->buf, b->bs, (off_t)off);
		if (n != (ssize_t)b->bs) {
			pthread_mutex_lock(&b->lock);
			if (!b->err) {
				b->err = n < 0 ? errno : EIO;
				fprintf(stderr,
					"fk-flush-cost: write %s at %llu: %s\n",
					b->dev, (unsigned long long)off,
					strerror(b->err));
			}
			pthread_mutex_unlock(&b->lock);
			break;
		}
	}
	return NULL;
}

static int do_fsync(struct burst *b)
{
	if (fsync(b->fd) == 0)
		return 0;
	fprintf(stderr, "fk-flush-cost: fsync %s: %s\n", b->dev,
		strerror(errno));
	return -1;
}

int main(int argc, char **argv)
{
	int random = 0;
	unsigned long repeat = 1;
	int a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--random"))
			random = 1;
		else if (!strcmp(argv[a], "--repeat") && a + 1 < argc)
			repeat = strtoul(argv[++a], NULL, 10);
		else
			break;
	}
	uint64_t bytes, bs, qd;
	if (argc - a != 4 || parse_size(argv[a + 1], &bytes) ||
	    parse_size(argv[a + 2], &bs) || parse_size(argv[a + 3], &qd) ||
	    !bs || bs % 4096 || !qd || qd > 256 || !repeat || bytes < bs) {
		fprintf(stderr, "usage: fk-flush-cost [--random] [--repeat N] "
				"DEV BYTES BS QD\n");
		return 2;
	}
	struct burst b = {.bs = bs,
			  .nreq = bytes / bs,
			  .random = random,
			  .qd = (unsigned)qd,
			  .dev = argv[a]};
	pthread_mutex_init(&b.lock, NULL);
	b.fd = open(b.dev, O_WRONLY | O_DIRECT);
	if (b.fd < 0) {
		fprintf(stderr, "fk-flush-cost: open %s: %s\n", b.dev,
			strerror(errno));
		return 1;
	}
	if (ioctl(b.fd, BLKGETSIZE64, &b.devsize) != 0 || b.devsize < bytes) {
		fprintf(stderr,
			"fk-flush-cost: %s: not a block device of at "
			"least BYTES\n",
			b.dev);
		return 1;
	}
	struct worker *w = calloc(b.qd, sizeof(*w));
	pthread_t *th = calloc(b.qd, sizeof(*th));
	if (!w || !th)
		return 1;
	for (unsigned i = 0; i < b.qd; i++) {
		w[i].b = &b;
		w[i].idx = i;
		if (posix_memalign(&w[i].buf, 4096, bs))
			return 1;
		memset(w[i].buf, 0xa5 ^ (int)i, bs);
	}
	double sum = 0;
	for (unsigned long r = 0; r < repeat; r++) {
		if (do_fsync(&b))
			return 1;
		b.seed = r * 0x100000001b3ull + 1;
		uint64_t t0 = now_ns();
		for (unsigned i = 0; i < b.qd; i++)
			if (pthread_create(&th[i], NULL, work, &w[i]))
				return 1;
		for (unsigned i = 0; i < b.qd; i++)
			pthread_join(th[i], NULL);
		if (b.err)
			return 1;
		uint64_t t1 = now_ns();
		if (do_fsync(&b))
			return 1;
		uint64_t t2 = now_ns();
		printf("write_ms %.3f fsync_ms %.3f\n", (double)(t1 - t0) / 1e6,
		       (double)(t2 - t1) / 1e6);
		sum += (double)(t2 - t1) / 1e6;
	}
	printf("fsync_ms_mean %.3f\n", sum / (double)repeat);
	return 0;
}
