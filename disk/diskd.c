// SPDX-License-Identifier: MIT
/*
 * diskd.c - flushkit-diskd, the daemon of the lab disk (flushkit disk):
 * a FUSE file system (libfuse3, low-level API) with one file, `image`,
 * whose reads, writes and FLUSHes are answered when a timing model
 * (disk/model.h) says they complete, and a control file, `ctl`.  A loop
 * device in direct-I/O mode on MOUNTPOINT/image is the modelled block
 * device (disk/labdisk.c attaches it).
 *
 *   flushkit-diskd [-f] [--ready-fd=N] [--lock-fd=N] [--orphan-cleanup]
 *                  --model=SPEC [--size=BYTES] [--slowdown=K]
 *                  [--backing=FILE] [--no-write-cache]
 *                  [--write-log=FILE [--write-log-max=BYTES]] MOUNTPOINT
 *
 * Threads.  One receive thread (fuse_session_loop) turns each image
 * request into a struct dreq submitted to the model, stamped with the
 * model time of its arrival, and then runs the model up to now itself
 * (so a request due at once, model ram, is answered without a thread
 * switch).  The ENGINE thread sleeps (condvar on CLOCK_MONOTONIC) until
 * the model's next event or a new arrival, calls advance() and sends
 * the FUSE replies of the DONE events.  Model time is
 * model_ns = (now - t0) / slowdown; a reply is due at real time
 * t0 + at_ns * slowdown, computed from the model's event time, never
 * from when the thread woke, so scheduling jitter does not accumulate;
 * how late each reply went out is counted (late_* in the stats).  The
 * engine runs SCHED_FIFO when it may (root), else normally (sched_fifo
 * 0 in the stats); the receive thread too, one priority below it
 * (recv_sched_fifo), so a CPU-bound load delays neither arrivals nor
 * replies.  The model, the cache, the rules and the counters
 * are behind one mutex; replies are sent outside it.
 *
 * Data.  The durable image is a memfd (default; its size checked
 * against MemAvailable) or --backing FILE, mmap'ed.  Written data that
 * is not durable lives in the block cache (disk/cache.h): a write is
 * copied into it on arrival, reads see it over the image, a DURABLE
 * event moves the write's blocks to the image.  A write's request lives
 * until both its DONE and its DURABLE were reported (the model may keep
 * it after DONE until it is durable).
 *
 * Contract M2 is enforced at each flush's DONE: a write that was DONE
 * before the flush arrived and is still not DURABLE is made durable
 * there and counted (m2_violations, a line on stderr): the model is
 * wrong, the data is not lost.
 *
 * ctl: the fault rules of disk/fault.h, and
 *   cut MODE [SEED]  power loss: MODE drop, subset or reorder (cache.h);
 *                    SEED a number (default: from the clock), reported
 *                    as cut_seed.  Every request in flight fails EIO,
 *                    and every later one until poweron.
 *   poweron          the disk comes back: the durable image is served,
 *                    the cache is empty, the model is new (time 0).
 *   cut MODE SEED flush N
 *                    the same cut, armed: it happens as the N-th FLUSH
 *                    from now arrives (that FLUSH fails with EIO), the
 *                    cache full of what was written before it; stat
 *                    cut_armed counts down (0: none armed).
 *   flush ignore     a disk that lies about FLUSH: every later FLUSH
 *                    succeeds at once and makes nothing durable (the
 *                    cut tests' negative control); kept across cuts.
 *   flush honor      FLUSH as the model says (the default).
 *   log mark NAME    with --write-log: append a MARK named NAME (up to
 *                    64 bytes, no blank) to the write log; ENOENT
 *                    without a log, ENOSPC once it is full.
 *
 * --write-log=FILE: every write, every FLUSH and every ctl mark is
 * appended in arrival order to FILE (created 0600, never over an
 * existing file), at most --write-log-max bytes (default 256 MiB); the
 * format and the replay are in disk/wlog.h.
 * Reading ctl gives fault.h's counter lines, its "rule ..." lines, and
 * the lab disk's: model, slowdown, write_cache, size, powered,
 * queue_depth, queue_depth_max, queue_depth_mean, requests, merges,
 * cache_bytes, cache_limit (the model's), model_cache_bytes, busy_ns,
 * seeks, slc_used, slc_limit, replies, late_max_ns, late_mean_ns,
 * late_over_1ms, cpu_ns, wall_ns, sched_fifo, recv_sched_fifo,
 * m2_violations, cuts, cut_mode, cut_seed, cut_kept_blocks,
 * cut_lost_blocks, flush_ignore, flushes_ignored, cut_armed, write_log,
 * log_entries, log_bytes, log_max, log_full.  A snapshot is
 * taken at open, so one read sequence is consistent.
 *
 * Options for the program that starts it (labdisk.c, the fault tests'
 * tests/lib/fkfault.c): -f (else daemonize once mounted),
 * --ready-fd=N ("ready\n" once the mount exists), --orphan-cleanup (on
 * SIGUSR1, a parent-death signal: unmount what is mounted from a loop
 * device on our image, then our mount, and exit).  --lock-fd=N: a
 * descriptor of the registry lock (flock'ed by the caller), kept open
 * for the daemon's life so the disk is alive while the lock is held.
 *
 * Invariants:
 * 1. Every image request gets exactly one reply.
 * 2. A request is on `inflight` from submit to its DONE (or a cut).
 * 3. A write's struct io is freed after both DONE and DURABLE (or at a
 *    cut, with the model that knew it).
 * 4. powered == 0 exactly between a cut and the next poweron; then no
 *    model instance exists and every image request fails with EIO.
 */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "cache.h"
#include "fault.h"
#include "flushkit.h"
#include "model.h"
#include "wlog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define INO_ROOT 1
#define INO_IMAGE 2
#define INO_CTL 3

/* One image request, from arrival to its reply (and a write's DURABLE). */
struct io {
	struct dreq d;
	fuse_req_t req;
	uint8_t *buf; /* a read's data, made at arrival */
	int done, durable, forced;
	uint64_t done_ev;	/* dev.ev_seq at its DONE */
	struct io *next, *prev; /* inflight, or dev.undurable after DONE */
};

/* A reply to send once the lock is dropped. */
struct reply {
	fuse_req_t req;
	int op;	      /* enum dreq_op */
	int err;      /* > 0: fuse_reply_err */
	uint8_t *buf; /* a read's data (freed after) */
	size_t len;
	uint64_t due_ns; /* real CLOCK_MONOTONIC time it is due; 0: no
			  * lateness (error replies) */
};

struct replies {
	struct reply *v;
	size_t n, cap;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC: an arrival, or stop */
	const struct disk_model *model;
	const char *model_spec, *model_arg;
	void *inst; /* NULL while cut */
	int write_cache;
	double slowdown;
	uint64_t t0;	   /* real ns of model time 0 */
	uint64_t last_now; /* model ns of the last advance */
	uint64_t next_id;
	int powered, stop;
	uint64_t engine_wake; /* model ns the engine sleeps until */
	uint8_t *image;
	uint64_t size;
	struct bcache cache;
	struct fault_state faults;
	struct io *inflight, *undurable;
	uint64_t ev_seq; /* counts DONE events */
	/* stats */
	uint64_t qd, qd_max, qd_area, qd_since; /* area: qd x real ns */
	uint64_t requests, replies, late_max, late_sum, late_1ms;
	uint64_t m2_violations, cuts, cut_seed, cut_kept, cut_lost;
	const char *cut_mode;
	int flush_ignore;	  /* ctl "flush ignore": FLUSH acknowledged
				   * at once, nothing made durable */
	uint64_t flushes_ignored; /* FLUSHes so acknowledged */
	/* ctl "cut MODE SEED flush N": the cut armed at the N-th FLUSH
	 * from now (cut_armed counts down; 0: none). */
	uint64_t cut_armed, arm_seed;
	enum bcache_cut arm_mode;
	const char *arm_name;
	uint64_t start_ns;
	int sched_fifo, recv_sched_fifo;
	struct fuse_session *se;
	struct wlog_writer wlog; /* --write-log (fd -1: none) */
} dev = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .cut_mode = "none",
    .wlog = {.fd = -1},
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Model time now (lock held); never before the last advance (M3). */
static uint64_t model_now(uint64_t real)
{
	uint64_t t = real > dev.t0
			 ? (uint64_t)((double)(real - dev.t0) / dev.slowdown)
			 : 0;
	return t < dev.last_now ? dev.last_now : t;
}

static uint64_t real_of(uint64_t model_ns)
{
	return dev.t0 + (uint64_t)((double)model_ns * dev.slowdown);
}

static void qd_account(uint64_t real)
{
	if (real > dev.qd_since)
		dev.qd_area += dev.qd * (real - dev.qd_since);
	dev.qd_since = real;
}

static void list_add(struct io **head, struct io *io)
{
	io->prev = NULL;
	io->next = *head;
	if (*head)
		(*head)->prev = io;
	*head = io;
}

static void list_del(struct io **head, struct io *io)
{
	if (io->prev)
		io->prev->next = io->next;
	else
		*head = io->next;
	if (io->next)
		io->next->prev = io->prev;
	io->next = io->prev = NULL;
}

static void push_reply(struct replies *rs, struct reply r)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct reply *v = realloc(rs->v, cap * sizeof(*v));
		if (!v) {
			/* Cannot queue it: send it now, under the lock
			 * (rare; better late than never, invariant 1). */
			if (r.err)
				fuse_reply_err(r.req, r.err);
			else
				fuse_reply_err(r.req, ENOMEM);
			free(r.buf);
			return;
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = r;
}

/* Send the replies (lock NOT held) and count their lateness. */
static void send_replies(struct replies *rs)
{
	uint64_t late_max = 0, late_sum = 0, late_1ms = 0, timed = 0;
	for (size_t i = 0; i < rs->n; i++) {
		struct reply *r = &rs->v[i];
		if (r->err)
			fuse_reply_err(r->req, r->err);
		else if (r->op == DREQ_READ)
			fuse_reply_buf(r->req, (const char *)r->buf, r->len);
		else if (r->op == DREQ_WRITE)
			fuse_reply_write(r->req, r->len);
		else
			fuse_reply_err(r->req, 0);
		free(r->buf);
		if (r->due_ns) {
			uint64_t now = mono_ns();
			uint64_t late = now > r->due_ns ? now - r->due_ns : 0;
			if (late > late_max)
				late_max = late;
			late_sum += late;
			late_1ms += late > 1000000;
			timed++;
		}
	}
	rs->n = 0;
	if (timed) {
		pthread_mutex_lock(&dev.lock);
		if (late_max > dev.late_max)
			dev.late_max = late_max;
		dev.late_sum += late_sum;
		dev.late_1ms += late_1ms;
		dev.replies += timed;
		pthread_mutex_unlock(&dev.lock);
	}
}

static void make_durable(struct io *io)
{
	bcache_durable(&dev.cache, io->d.off, io->d.len, io->d.id);
	io->durable = 1;
}

/* M2 at a flush's DONE: every write DONE before the flush arrived must
 * be durable by now (see the banner). */
static void check_m2(struct io *flush)
{
	for (struct io *w = dev.undurable, *nx; w; w = nx) {
		nx = w->next;
		if (w->done_ev >= flush->done_ev || w->forced)
			continue;
		if (!dev.m2_violations)
			fprintf(stderr,
				"flushkit-diskd: model %s broke M2: a flush "
				"completed before write %" PRIu64
				" (DONE before it) was durable; made durable\n",
				dev.model->name, w->d.id);
		dev.m2_violations++;
		bcache_durable(&dev.cache, w->d.off, w->d.len, w->d.id);
		w->forced = 1;
	}
}

static void on_event(void *ctx, struct dreq *r, enum dreq_ev ev, uint64_t at)
{
	struct replies *rs = ctx;
	struct io *io = r->priv;
	if (ev == DREQ_EV_DURABLE) {
		if (io->durable)
			return; /* M1 broken: the second one is ignored */
		if (!io->forced)
			make_durable(io);
		io->durable = 1;
		if (io->done) {
			list_del(&dev.undurable, io);
			free(io);
		}
		return;
	}
	if (io->done)
		return; /* M1 broken: a second DONE */
	io->done = 1;
	list_del(&dev.inflight, io);
	uint64_t real = real_of(at);
	qd_account(real);
	dev.qd--;
	struct reply rp = {.req = io->req,
			   .op = (int)r->op,
			   .buf = io->buf,
			   .len = r->len,
			   .due_ns = real};
	io->buf = NULL;
	push_reply(rs, rp);
	if (r->op == DREQ_FLUSH) {
		/* done_ev of a flush: the event count at its arrival. */
		check_m2(io);
		free(io);
	} else if (r->op == DREQ_WRITE && !io->durable) {
		io->done_ev = dev.ev_seq++;
		list_add(&dev.undurable, io);
	} else {
		free(io);
	}
}

/* Run the model up to now (lock held); returns its next event time. */
static uint64_t pump(struct replies *rs)
{
	if (!dev.inst)
		return UINT64_MAX;
	uint64_t now = model_now(mono_ns());
	dev.last_now = now;
	return dev.model->advance(dev.inst, now, on_event, rs);
}

/* ---- the engine thread ---- */

static void *engine(void *arg)
{
	(void)arg;
	struct sched_param sp = {.sched_priority = 10};
	int fifo = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
	struct replies rs = {0};
	pthread_mutex_lock(&dev.lock);
	dev.sched_fifo = fifo; /* status reads it under the lock */
	while (!dev.stop) {
		uint64_t next = pump(&rs);
		if (rs.n) {
			pthread_mutex_unlock(&dev.lock);
			send_replies(&rs);
			pthread_mutex_lock(&dev.lock);
			continue;
		}
		dev.engine_wake = next;
		if (next == UINT64_MAX) {
			pthread_cond_wait(&dev.cond, &dev.lock);
		} else {
			uint64_t due = real_of(next);
			struct timespec ts = {
			    .tv_sec = (time_t)(due / 1000000000ull),
			    .tv_nsec = (long)(due % 1000000000ull)};
			pthread_cond_timedwait(&dev.cond, &dev.lock, &ts);
		}
		dev.engine_wake = 0; /* awake: no signal needed */
	}
	pthread_mutex_unlock(&dev.lock);
	free(rs.v);
	return NULL;
}

/* ---- image requests (the receive thread) ---- */

/* Submit (lock held): the request is the model's until its DONE. */
static void submit(struct io *io, enum dreq_op op, uint64_t off, uint64_t len)
{
	uint64_t real = mono_ns();
	io->d.op = op;
	io->d.off = off;
	io->d.len = len;
	io->d.arrive_ns = model_now(real);
	io->d.priv = io;
	io->done_ev = dev.ev_seq; /* a flush's: writes DONE before it */
	list_add(&dev.inflight, io);
	qd_account(real);
	dev.qd++;
	if (dev.qd > dev.qd_max)
		dev.qd_max = dev.qd;
	dev.requests++;
	dev.model->submit(dev.inst, &io->d);
}

/* After a submit: what is due now is answered from here. */
static void submitted(void)
{
	struct replies rs = {0};
	pthread_mutex_lock(&dev.lock);
	/* Wake the engine only when its sleep would end too late. */
	if (pump(&rs) < dev.engine_wake)
		pthread_cond_signal(&dev.cond);
	pthread_mutex_unlock(&dev.lock);
	send_replies(&rs);
	free(rs.v);
}

static int image_range_ok(uint64_t off, uint64_t len)
{
	return off <= dev.size && len <= dev.size - off;
}

static void image_read(fuse_req_t req, size_t size, off_t off)
{
	uint64_t o = (uint64_t)off, len = size;
	if (o > dev.size)
		o = dev.size;
	if (len > dev.size - o)
		len = dev.size - o;
	pthread_mutex_lock(&dev.lock);
	int err = dev.powered
		      ? fault_account(&dev.faults, FAULT_OP_READ, o, len)
		      : EIO;
	struct io *io = NULL;
	if (!err) {
		io = calloc(1, sizeof(*io));
		if (io && len)
			io->buf = malloc(len);
		if (!io || (len && !io->buf)) {
			err = ENOMEM;
			if (io)
				free(io);
			io = NULL;
		}
	}
	if (err) {
		pthread_mutex_unlock(&dev.lock);
		fuse_reply_err(req, err);
		return;
	}
	io->req = req;
	io->d.id = ++dev.next_id;
	bcache_read(&dev.cache, o, len, io->buf);
	submit(io, DREQ_READ, o, len);
	pthread_mutex_unlock(&dev.lock);
	submitted();
}

static void image_write(fuse_req_t req, const char *buf, size_t size, off_t off)
{
	uint64_t o = (uint64_t)off;
	if (off < 0 || !image_range_ok(o, size)) {
		fuse_reply_err(req, ENOSPC); /* past the end of the disk */
		return;
	}
	pthread_mutex_lock(&dev.lock);
	int err = dev.powered
		      ? fault_account(&dev.faults, FAULT_OP_WRITE, o, size)
		      : EIO;
	struct io *io = NULL;
	if (!err) {
		io = calloc(1, sizeof(*io));
		if (!io)
			err = ENOMEM;
	}
	if (!err) {
		io->req = req;
		io->d.id = ++dev.next_id;
		if (bcache_write(&dev.cache, o, size, buf, io->d.id)) {
			free(io);
			err = ENOMEM;
		}
	}
	if (err) {
		pthread_mutex_unlock(&dev.lock);
		fuse_reply_err(req, err);
		return;
	}
	/* In the cache now: the log has it, in arrival order. */
	wlog_append(&dev.wlog, WLOG_WRITE, o, buf, size);
	submit(io, DREQ_WRITE, o, size);
	pthread_mutex_unlock(&dev.lock);
	submitted();
}

static int power_cut(enum bcache_cut mode, const char *name, uint64_t seed,
		     struct replies *rs);

static void image_fsync(fuse_req_t req)
{
	pthread_mutex_lock(&dev.lock);
	dev.faults.c.fsyncs++;
	int err = dev.powered ? fault_account(&dev.faults, FAULT_OP_FSYNC, 0, 0)
			      : EIO;
	struct io *io = NULL;
	if (!err && dev.cut_armed && --dev.cut_armed == 0) {
		/* The armed cut: the power goes as this FLUSH arrives, with
		 * everything written before it still in the cache. */
		struct replies rs = {0};
		power_cut(dev.arm_mode, dev.arm_name, dev.arm_seed, &rs);
		pthread_mutex_unlock(&dev.lock);
		send_replies(&rs);
		free(rs.v);
		fuse_reply_err(req, EIO);
		return;
	}
	if (!err && dev.flush_ignore) {
		/* A disk that lies: the FLUSH succeeds, the cache stays
		 * as volatile as it was (the negative control of the cut
		 * tests). */
		dev.flushes_ignored++;
		wlog_append(&dev.wlog, WLOG_FLUSH_IGNORED, 0, NULL, 0);
		pthread_mutex_unlock(&dev.lock);
		fuse_reply_err(req, 0);
		return;
	}
	if (!err) {
		io = calloc(1, sizeof(*io));
		if (!io)
			err = ENOMEM;
	}
	if (err) {
		pthread_mutex_unlock(&dev.lock);
		fuse_reply_err(req, err);
		return;
	}
	io->req = req;
	io->d.id = ++dev.next_id;
	/* Logged as it arrives: what the file system waited for before
	 * sending it (the writes it covers) was logged before it. */
	wlog_append(&dev.wlog, WLOG_FLUSH, 0, NULL, 0);
	submit(io, DREQ_FLUSH, 0, 0);
	pthread_mutex_unlock(&dev.lock);
	submitted();
}

/* ---- power ---- */

static int model_start(void)
{
	int err = 0;
	dev.inst =
	    dev.model->create(dev.size, dev.model_arg, dev.write_cache, &err);
	if (!dev.inst)
		return -(err ? err : EINVAL);
	dev.t0 = mono_ns();
	dev.last_now = 0;
	dev.powered = 1;
	return 0;
}

/* Lock held; the EIO replies of what was in flight go to @rs. */
static int power_cut(enum bcache_cut mode, const char *name, uint64_t seed,
		     struct replies *rs)
{
	if (!dev.powered)
		return 0; /* already off: nothing more to lose */
	/* The log ends: what the disk holds from here is the cut's. */
	wlog_append(&dev.wlog, WLOG_CUT, 0, NULL, 0);
	uint64_t real = mono_ns();
	qd_account(real);
	for (struct io *io = dev.inflight, *nx; io; io = nx) {
		nx = io->next;
		struct reply rp = {.req = io->req, .err = EIO, .buf = io->buf};
		push_reply(rs, rp);
		free(io);
	}
	dev.inflight = NULL;
	for (struct io *io = dev.undurable, *nx; io; io = nx) {
		nx = io->next;
		free(io);
	}
	dev.undurable = NULL;
	dev.qd = 0;
	/* The requests it held are freed above; destroy must not touch
	 * them (model.h: a model owns no request memory). */
	dev.model->destroy(dev.inst);
	dev.inst = NULL;
	dev.powered = 0;
	int r =
	    bcache_cut(&dev.cache, mode, seed, &dev.cut_kept, &dev.cut_lost);
	if (r) {
		/* No memory to choose a subset: lose everything. */
		bcache_cut(&dev.cache, BCACHE_CUT_DROP, seed, &dev.cut_kept,
			   &dev.cut_lost);
	}
	dev.cuts++;
	dev.cut_armed = 0;
	dev.cut_mode = name;
	dev.cut_seed = seed;
	return 0;
}

/* ---- ctl ---- */

/* One line (lock held): 0 or -errno. */
static int control_line(char *line, struct replies *rs)
{
	char copy[256];
	snprintf(copy, sizeof(copy), "%s", line);
	int r = fault_control(&dev.faults, line);
	if (r <= 0)
		return r;
	char *tok[6];
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(copy, " \t\r", &save); t && n < 6;
	     t = strtok_r(NULL, " \t\r", &save))
		tok[n++] = t;
	uint64_t at_flush = 0;
	if (n == 5 && !strcmp(tok[0], "cut") && !strcmp(tok[3], "flush")) {
		if (fault_parse_u64(tok[4], &at_flush) || !at_flush)
			return -EINVAL;
		n = 3;
	}
	if (n >= 2 && n <= 3 && !strcmp(tok[0], "cut")) {
		static const struct {
			const char *name;
			enum bcache_cut mode;
		} modes[] = {{"drop", BCACHE_CUT_DROP},
			     {"subset", BCACHE_CUT_SUBSET},
			     {"reorder", BCACHE_CUT_REORDER}};
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			if (strcmp(tok[1], modes[i].name))
				continue;
			uint64_t seed;
			if (n == 3) {
				if (fault_parse_u64(tok[2], &seed))
					return -EINVAL;
			} else {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				seed = (uint64_t)ts.tv_sec * 1000000000ull +
				       (uint64_t)ts.tv_nsec;
			}
			if (at_flush) {
				if (!dev.powered)
					return -EIO;
				dev.cut_armed = at_flush;
				dev.arm_mode = modes[i].mode;
				dev.arm_name = modes[i].name;
				dev.arm_seed = seed;
				return 0;
			}
			return power_cut(modes[i].mode, modes[i].name, seed,
					 rs);
		}
		return -EINVAL;
	}
	if (n == 2 && !strcmp(tok[0], "flush")) {
		if (!strcmp(tok[1], "ignore"))
			dev.flush_ignore = 1;
		else if (!strcmp(tok[1], "honor"))
			dev.flush_ignore = 0;
		else
			return -EINVAL;
		return 0;
	}
	if (n == 3 && !strcmp(tok[0], "log") && !strcmp(tok[1], "mark")) {
		size_t len = strlen(tok[2]);
		if (len > WLOG_MARK_MAX)
			return -EINVAL;
		if (dev.wlog.fd < 0)
			return -ENOENT;
		if (dev.wlog.ended)
			return dev.wlog.full ? -ENOSPC : -EIO;
		return wlog_append(&dev.wlog, WLOG_MARK, 0, tok[2], len);
	}
	if (n == 1 && !strcmp(tok[0], "poweron")) {
		if (dev.powered)
			return 0;
		return model_start();
	}
	return -EINVAL;
}

static int control(const char *buf, size_t len)
{
	char *text = strndup(buf, len);
	if (!text)
		return -ENOMEM;
	struct replies rs = {0};
	int r = 0;
	char *save = NULL;
	pthread_mutex_lock(&dev.lock);
	for (char *line = strtok_r(text, "\n", &save); line && !r;
	     line = strtok_r(NULL, "\n", &save))
		r = control_line(line, &rs);
	pthread_cond_signal(&dev.cond);
	pthread_mutex_unlock(&dev.lock);
	send_replies(&rs);
	free(rs.v);
	free(text);
	return r;
}

struct snap {
	char *text;
	size_t len;
};

static struct snap *status(void)
{
	struct snap *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	FILE *f = open_memstream(&s->text, &s->len);
	if (!f) {
		free(s);
		return NULL;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	uint64_t cpu =
	    (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
		1000000000ull +
	    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	pthread_mutex_lock(&dev.lock);
	uint64_t real = mono_ns();
	qd_account(real);
	struct disk_model_stats ms = {0};
	if (dev.inst)
		dev.model->stats(dev.inst, &ms);
	fault_print(&dev.faults, f);
	uint64_t wall = real - dev.start_ns;
	fprintf(
	    f,
	    "model %s\nslowdown %g\nwrite_cache %d\nsize %" PRIu64
	    "\npowered %d\nqueue_depth %" PRIu64 "\nqueue_depth_max %" PRIu64
	    "\nqueue_depth_mean %.3f\n"
	    "requests %" PRIu64 "\nmerges %" PRIu64 "\ncache_bytes %" PRIu64
	    "\ncache_limit %" PRIu64 "\nmodel_cache_bytes %" PRIu64
	    "\nbusy_ns %" PRIu64 "\nseeks %" PRIu64 "\nslc_used %" PRIu64
	    "\nslc_limit %" PRIu64 "\nreplies %" PRIu64 "\nlate_max_ns %" PRIu64
	    "\nlate_mean_ns %" PRIu64 "\nlate_over_1ms %" PRIu64
	    "\ncpu_ns %" PRIu64 "\nwall_ns %" PRIu64 "\nsched_fifo %d\n"
	    "recv_sched_fifo %d\n"
	    "m2_violations %" PRIu64 "\ncuts %" PRIu64 "\ncut_mode %s\n"
	    "cut_seed %" PRIu64 "\ncut_kept_blocks %" PRIu64
	    "\ncut_lost_blocks %" PRIu64 "\nflush_ignore %d\n"
	    "flushes_ignored %" PRIu64 "\ncut_armed %" PRIu64 "\n"
	    "write_log %d\nlog_entries %" PRIu64 "\nlog_bytes %" PRIu64
	    "\nlog_max %" PRIu64 "\nlog_full %d\n",
	    dev.model_spec, dev.slowdown, dev.write_cache, dev.size,
	    dev.powered, dev.qd, dev.qd_max,
	    wall ? (double)dev.qd_area / (double)wall : 0.0, dev.requests,
	    ms.merged, bcache_bytes(&dev.cache), ms.cache_limit, ms.cache_bytes,
	    ms.busy_ns, ms.seeks, ms.slc_used, ms.slc_limit, dev.replies,
	    dev.late_max, dev.replies ? dev.late_sum / dev.replies : 0,
	    dev.late_1ms, cpu, wall, dev.sched_fifo, dev.recv_sched_fifo,
	    dev.m2_violations, dev.cuts, dev.cut_mode, dev.cut_seed,
	    dev.cut_kept, dev.cut_lost, dev.flush_ignore, dev.flushes_ignored,
	    dev.cut_armed, dev.wlog.fd >= 0, dev.wlog.seq, dev.wlog.bytes,
	    dev.wlog.max, dev.wlog.full);
	pthread_mutex_unlock(&dev.lock);
	fclose(f);
	return s;
}

/* ---- the FUSE operations ---- */

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_blksize = BCACHE_BLOCK;
	if (ino == INO_ROOT) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		if (ino == INO_IMAGE) {
			st->st_size = (off_t)dev.size;
			st->st_blocks = (blkcnt_t)(dev.size / 512);
		}
	}
}

static void op_init(void *ud, struct fuse_conn_info *conn)
{
	(void)ud;
	/* Many requests in flight: the model decides when each ends. */
	conn->max_background = 128;
	conn->congestion_threshold = 96;
	conn->max_write = 1u << 20; /* libfuse sets max_pages from it */
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	if (parent != INO_ROOT) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!strcmp(name, "image"))
		e.ino = INO_IMAGE;
	else if (!strcmp(name, "ctl"))
		e.ino = INO_CTL;
	else {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)fi;
	if (ino < INO_ROOT || ino > INO_CTL) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat st;
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, 0);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)fi;
	/* The image's size is the disk's: it does not change.  Mode and
	 * times are ignored; O_TRUNC of ctl is fine. */
	if (ino == INO_IMAGE && (to_set & FUSE_SET_ATTR_SIZE) &&
	    (uint64_t)attr->st_size != dev.size) {
		fuse_reply_err(req, EPERM);
		return;
	}
	struct stat st;
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, 0);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != INO_ROOT) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	static const struct {
		const char *name;
		fuse_ino_t ino;
	} ents[] = {{".", INO_ROOT},
		    {"..", INO_ROOT},
		    {"image", INO_IMAGE},
		    {"ctl", INO_CTL}};
	char buf[1024];
	size_t used = 0;
	for (size_t i = (size_t)off; i < sizeof(ents) / sizeof(ents[0]); i++) {
		struct stat st;
		fill_attr(ents[i].ino, &st);
		size_t need =
		    fuse_add_direntry(req, buf + used, sizeof(buf) - used,
				      ents[i].name, &st, (off_t)(i + 1));
		if (used + need > size || need > sizeof(buf) - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino == INO_IMAGE) {
		fi->direct_io = 1; /* every read and write reaches us */
		fi->keep_cache = 0;
		fuse_reply_open(req, fi);
		return;
	}
	if (ino != INO_CTL) {
		fuse_reply_err(req, ino == INO_ROOT ? EISDIR : ENOENT);
		return;
	}
	fi->direct_io = 1; /* size 0, contents made at open */
	fi->fh = 0;
	if ((fi->flags & O_ACCMODE) != O_WRONLY) {
		struct snap *s = status();
		if (!s) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		fi->fh = (uint64_t)(uintptr_t)s;
	}
	fuse_reply_open(req, fi);
}

static void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	if (ino == INO_CTL && fi->fh) {
		struct snap *s = (struct snap *)(uintptr_t)fi->fh;
		free(s->text);
		free(s);
	}
	fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	if (ino == INO_IMAGE) {
		image_read(req, size, off);
		return;
	}
	if (ino != INO_CTL || !fi->fh) {
		fuse_reply_err(req, EBADF);
		return;
	}
	struct snap *s = (struct snap *)(uintptr_t)fi->fh;
	size_t n = 0;
	if (off >= 0 && (size_t)off < s->len)
		n = s->len - (size_t)off < size ? s->len - (size_t)off : size;
	fuse_reply_buf(req, n ? s->text + off : NULL, n);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (ino == INO_IMAGE) {
		image_write(req, buf, size, off);
		return;
	}
	if (ino != INO_CTL) {
		fuse_reply_err(req, EBADF);
		return;
	}
	int r = control(buf, size);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_write(req, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	int err = 0;
	if (ino == INO_IMAGE) {
		/* A close of the image (counted as "flushes"): no device
		 * FLUSH, but the f rules apply to it (fault.h). */
		pthread_mutex_lock(&dev.lock);
		dev.faults.c.flushes++;
		err = fault_account(&dev.faults, FAULT_OP_FSYNC, 0, 0);
		pthread_mutex_unlock(&dev.lock);
	}
	fuse_reply_err(req, err);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	if (ino == INO_IMAGE)
		image_fsync(req);
	else
		fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops ops = {
    .init = op_init,
    .lookup = op_lookup,
    .getattr = op_getattr,
    .setattr = op_setattr,
    .readdir = op_readdir,
    .open = op_open,
    .release = op_release,
    .read = op_read,
    .write = op_write,
    .flush = op_flush,
    .fsync = op_fsync,
};

/* ---- --orphan-cleanup ---- */

static char mountpoint[PATH_MAX];

static void umount_dev(const char *majmin)
{
	for (int pass = 0; pass < 8; pass++) {
		FILE *f = fopen("/proc/self/mountinfo", "r");
		if (!f)
			return;
		char line[4096], mp[4096] = "";
		while (fgets(line, sizeof(line), f)) {
			char devno[64], m[4096];
			if (sscanf(line, "%*s %*s %63s %*s %4095s", devno, m) ==
				2 &&
			    !strcmp(devno, majmin))
				strcpy(mp, m); /* the last (topmost) one */
		}
		fclose(f);
		if (!mp[0])
			return;
		int ok = 0;
		for (int i = 0; i < 50 && !ok; i++) {
			ok = umount2(mp, 0) == 0;
			if (!ok && errno != EBUSY)
				break;
			if (!ok)
				usleep(100 * 1000);
		}
		if (!ok)
			umount2(mp, MNT_DETACH);
		fprintf(stderr, "flushkit-diskd: orphaned: unmounted %s\n", mp);
	}
}

static void orphan_cleanup(void)
{
	char image[PATH_MAX + 8];
	snprintf(image, sizeof(image), "%s/image", mountpoint);
	DIR *d = opendir("/sys/block");
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, "loop", 4))
				continue;
			char p[512], bf[PATH_MAX] = "", majmin[64] = "";
			snprintf(p, sizeof(p),
				 "/sys/block/%s/loop/backing_file", de->d_name);
			FILE *f = fopen(p, "r");
			if (!f)
				continue;
			if (!fgets(bf, sizeof(bf), f))
				bf[0] = 0;
			fclose(f);
			bf[strcspn(bf, "\n")] = 0;
			if (strcmp(bf, image))
				continue;
			snprintf(p, sizeof(p), "/sys/block/%s/dev", de->d_name);
			f = fopen(p, "r");
			if (f && fgets(majmin, sizeof(majmin), f)) {
				majmin[strcspn(majmin, "\n")] = 0;
				umount_dev(majmin);
			}
			if (f)
				fclose(f);
		}
		closedir(d);
	}
	for (int i = 0; i < 100; i++) {
		if (umount2(mountpoint, 0) == 0 || errno != EBUSY)
			return;
		usleep(50 * 1000);
	}
	umount2(mountpoint, MNT_DETACH);
}

static void *orphan_watch(void *arg)
{
	sigset_t *set = arg;
	int sig;
	if (sigwait(set, &sig) == 0)
		orphan_cleanup();
	return NULL;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flushkit-diskd [-f] [--ready-fd=N] [--lock-fd=N] "
		"[--orphan-cleanup]\n"
		"                      --model=SPEC [--size=BYTES] "
		"[--slowdown=K] [--backing=FILE]\n"
		"                      [--no-write-cache] "
		"[--write-log=FILE [--write-log-max=BYTES]]\n"
		"                      MOUNTPOINT\n"
		"       flushkit-diskd --help | --version\n"
		"\n"
		"The lab disk's daemon, started by 'flushkit disk create'.\n");
}

/*
 * A usage error, in the form of every flushkit command (cli.h's
 * cli_usage_error; the daemon does not link the command's layer):
 * "flushkit-diskd: MESSAGE", "Try 'flushkit-diskd --help' for more
 * information.", exit 2.
 */
static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("flushkit-diskd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'flushkit-diskd --help' for more information.\n", stderr);
	return 2;
}

/* getopt_long's mistakes (optstring starting with ':'), in GNU's words
 * as cli_option_error has them. */
static int option_error(int c, char **argv)
{
	const char *word = optind > 0 ? argv[optind - 1] : "";
	int len = (int)strcspn(word, "=");
	if (strncmp(word, "--", 2)) /* a short option */
		return usage_error(c == ':' ? "option requires an argument -- "
					      "'%c'"
					    : "invalid option -- '%c'",
				   optopt);
	if (c == ':')
		return usage_error("option '%.*s' requires an argument", len,
				   word);
	if (optopt) /* known, but given an argument */
		return usage_error("option '%.*s' doesn't allow an argument",
				   len, word);
	return usage_error("unrecognized option '%s'", word);
}

/* MemAvailable in bytes, 0 if unknown. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return 0;
	char line[256];
	unsigned long long kb = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* The durable image: a memfd, or @backing; mmap'ed.  0 or 1 (printed). */
static int image_open(const char *backing, uint64_t size, int size_given)
{
	int fd;
	if (backing) {
		fd = open(backing, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "flushkit-diskd: open '%s': %s\n",
				backing, strerror(errno));
			return 1;
		}
		struct stat st;
		if (fstat(fd, &st) != 0) {
			fprintf(stderr, "flushkit-diskd: stat '%s': %s\n",
				backing, strerror(errno));
			close(fd);
			return 1;
		}
		if (!size_given)
			size = (uint64_t)st.st_size;
		else if ((uint64_t)st.st_size < size &&
			 ftruncate(fd, (off_t)size) != 0) {
			fprintf(stderr, "flushkit-diskd: truncate '%s': %s\n",
				backing, strerror(errno));
			close(fd);
			return 1;
		}
	} else {
		uint64_t avail = mem_available();
		if (avail && size > avail) {
			fprintf(stderr,
				"flushkit-diskd: a %" PRIu64
				" MiB disk does not fit in memory "
				"(MemAvailable %" PRIu64 " MiB)\n",
				size >> 20, avail >> 20);
			return 1;
		}
		fd = memfd_create("flushkit-disk", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
			fprintf(stderr,
				"flushkit-diskd: memfd of %" PRIu64
				" bytes: %s\n",
				size, strerror(errno));
			return 1;
		}
	}
	if (!size || size % BCACHE_BLOCK) {
		fprintf(stderr,
			"flushkit-diskd: size %" PRIu64
			" is not a positive multiple of %u\n",
			size, BCACHE_BLOCK);
		close(fd);
		return 1;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr,
			"flushkit-diskd: mmap of %" PRIu64 " bytes: %s\n", size,
			strerror(errno));
		close(fd);
		return 1;
	}
	close(fd);
	dev.image = p;
	dev.size = size;
	return 0;
}

int main(int argc, char **argv)
{
	int foreground = 0, ready_fd = -1, orphan = 0, size_given = 0;
	const char *backing = NULL, *mnt = NULL, *spec = NULL;
	const char *wlog_path = NULL;
	uint64_t size = 4ull << 30, wlog_max = 256ull << 20;
	int wlog_max_given = 0;
	dev.slowdown = 1.0;
	dev.write_cache = 1;
	enum {
		O_READY = 256,
		O_LOCK,
		O_ORPHAN,
		O_MODEL,
		O_SIZE,
		O_SLOW,
		O_BACK,
		O_NOWC,
		O_WLOG,
		O_WLOG_MAX,
		O_HELP,
		O_VERSION
	};
	static const struct option opts[] = {
	    {"ready-fd", required_argument, NULL, O_READY},
	    {"lock-fd", required_argument, NULL, O_LOCK},
	    {"orphan-cleanup", no_argument, NULL, O_ORPHAN},
	    {"model", required_argument, NULL, O_MODEL},
	    {"size", required_argument, NULL, O_SIZE},
	    {"slowdown", required_argument, NULL, O_SLOW},
	    {"backing", required_argument, NULL, O_BACK},
	    {"no-write-cache", no_argument, NULL, O_NOWC},
	    {"write-log", required_argument, NULL, O_WLOG},
	    {"write-log-max", required_argument, NULL, O_WLOG_MAX},
	    {"help", no_argument, NULL, O_HELP},
	    {"version", no_argument, NULL, O_VERSION},
	    {NULL, 0, NULL, 0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'f':
			foreground = 1;
			break;
		case O_READY:
			ready_fd = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || ready_fd < 0)
				return usage_error("invalid value '%s' for "
						   "--ready-fd (a descriptor)",
						   optarg);
			break;
		case O_LOCK: /* kept open: nothing to do but not close it */
			break;
		case O_ORPHAN:
			orphan = 1;
			break;
		case O_MODEL:
			spec = optarg;
			break;
		case O_SIZE:
			if (fault_parse_u64(optarg, &size))
				return usage_error("invalid value '%s' for "
						   "--size (bytes)",
						   optarg);
			size_given = 1;
			break;
		case O_SLOW:
			dev.slowdown = strtod(optarg, &end);
			if (*end || !(dev.slowdown > 0) ||
			    !isfinite(dev.slowdown))
				return usage_error("invalid value '%s' for "
						   "--slowdown (a number > 0)",
						   optarg);
			break;
		case O_BACK:
			backing = optarg;
			break;
		case O_NOWC:
			dev.write_cache = 0;
			break;
		case O_WLOG:
			wlog_path = optarg;
			break;
		case O_WLOG_MAX:
			if (fault_parse_u64(optarg, &wlog_max) ||
			    wlog_max < 4096)
				return usage_error("invalid value '%s' for "
						   "--write-log-max (bytes, "
						   "at least 4096)",
						   optarg);
			wlog_max_given = 1;
			break;
		case O_HELP:
			usage(stdout);
			return 0;
		case O_VERSION:
			printf("flushkit-diskd %s\n", FK_VERSION_STRING);
			return 0;
		default:
			return option_error(c, argv);
		}
	}
	if (optind < argc)
		mnt = argv[optind];
	if (optind + 1 < argc)
		return usage_error("extra operand '%s'", argv[optind + 1]);
	if (!mnt)
		return usage_error("missing MOUNTPOINT operand");
	if (!spec)
		return usage_error("--model is required");
	if (wlog_path && backing)
		return usage_error("--write-log with --backing: the replay "
				   "starts from a zeroed image");
	if (wlog_max_given && !wlog_path)
		return usage_error("--write-log-max without --write-log");
	dev.model = disk_model_find(spec, &dev.model_arg);
	if (!dev.model) {
		return usage_error("invalid value '%s' for --model", spec);
	}
	dev.model_spec = spec;
	if (!realpath(mnt, mountpoint)) {
		fprintf(stderr, "flushkit-diskd: mount point '%s': %s\n", mnt,
			strerror(errno));
		return 1;
	}
	if (image_open(backing, size, size_given))
		return 1;
	if (wlog_path && wlog_open(&dev.wlog, wlog_path, dev.size, wlog_max))
		return 1;
	bcache_init(&dev.cache, dev.image, dev.size);
	int r = model_start();
	if (r) {
		fprintf(stderr, "flushkit-diskd: model '%s': %s\n", spec,
			strerror(-r));
		return 2;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&dev.cond, &ca);

	char *fargv[] = {argv[0], "-o",
			 getuid() == 0 ? "allow_other,fsname=flushkit-disk,"
					 "subtype=flushkit-diskd"
				       : "fsname=flushkit-disk,"
					 "subtype=flushkit-diskd",
			 NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_session *se =
	    fuse_session_new(&args, &ops, sizeof(ops), NULL);
	/* The parse made a malloc'ed copy of the arguments: ours to free
	 * (LeakSanitizer reports it at exit otherwise). */
	fuse_opt_free_args(&args);
	if (!se)
		return 1;
	dev.se = se;
	if (fuse_set_signal_handlers(se) != 0)
		return 1;
	if (fuse_session_mount(se, mountpoint) != 0) {
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
		return 1;
	}
	if (!foreground && fuse_daemonize(0) != 0)
		return 1;
	if (ready_fd >= 0) {
		if (write(ready_fd, "ready\n", 6) != 6)
			perror("flushkit-diskd: ready fd");
		close(ready_fd);
	}
	static sigset_t usr1;
	if (orphan) {
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		pthread_t watcher;
		if (pthread_create(&watcher, NULL, orphan_watch, &usr1) == 0)
			pthread_detach(watcher);
		if (getppid() == 1)
			kill(getpid(), SIGUSR1);
	}
	dev.start_ns = mono_ns();
	dev.qd_since = dev.start_ns;
	pthread_t eng;
	if (pthread_create(&eng, NULL, engine, NULL) != 0) {
		fprintf(stderr, "flushkit-diskd: engine thread: %s\n",
			strerror(errno));
		fuse_session_unmount(se);
		return 1;
	}
	/* The receive thread stamps each arrival: behind the engine, but
	 * before the CPU-bound load of a busy machine (determinism). */
	struct sched_param rsp = {.sched_priority = 9};
	dev.recv_sched_fifo =
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &rsp) == 0;
	r = fuse_session_loop(se);
	pthread_mutex_lock(&dev.lock);
	dev.stop = 1;
	pthread_cond_signal(&dev.cond);
	pthread_mutex_unlock(&dev.lock);
	pthread_join(eng, NULL);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	if (dev.m2_violations)
		fprintf(stderr, "flushkit-diskd: %" PRIu64 " M2 violations\n",
			dev.m2_violations);
	return r ? 1 : 0;
}
