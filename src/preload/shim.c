// SPDX-License-Identifier: MIT
/*
 * shim.c - per-descriptor writeback accounting of libflushkit-preload.so,
 * the shim `flushkit exec` preloads into programs that cannot be changed
 * (tar, rsync, dd, cp, a backup or log shipper).
 *
 * What it does, per regular file a program writes (interpose.c tells it
 * what was written, after the real call succeeded):
 *   - every flush_after bytes written to a descriptor, start writeback
 *     of the written range with sync_file_range(SYNC_FILE_RANGE_WRITE):
 *     WB_SYNC_NONE, never waits, consumes no writeback error;
 *   - max_dirty bounds the bytes the process wrote and has not yet seen
 *     written back: past it the writing thread waits for its own oldest
 *     hinted ranges (wait_range: SYNC_FILE_RANGE_WRITE, then cachestat(2)
 *     polled until the range holds no dirty or writeback page), so the
 *     program throttles itself instead of the whole machine
 *     stalling in balance_dirty_pages;
 *   - drop_cache: POSIX_FADV_DONTNEED of ranges already on their way to
 *     disk (the kernel skips pages still dirty or under writeback).
 * A hint, never a durability promise: it never calls fsync, and the
 * program's own fsync reports what it always would.
 *
 * The waits never use sync_file_range's WAIT flags: those check and
 * advance the writeback error cursor of the struct file they are called
 * on (file_check_and_advance_wb_err), so they would eat an EIO that the
 * program's fsync must report.  cachestat(2) (Linux 6.5) reads a range's
 * dirty and writeback counts and consumes nothing.  And the shim holds
 * no descriptor of its own while the program runs (a private one was
 * closed by the program's close_range, took the number its next open
 * expected, counted against its RLIMIT_NOFILE and leaked into fork
 * children): every call acts on the program's descriptor.  Without
 * cachestat the waits are skipped and counted (waits_skipped).
 *
 * Statistics go to a file by path at exit (FLUSHKIT_STATS, absolute),
 * opened O_NOFOLLOW | O_NONBLOCK and written only if a regular file;
 * never to a descriptor of the program's.
 *
 * Left alone (classified once per descriptor, cached): anything not a
 * regular file (pipes, sockets, terminals, devices), O_DIRECT
 * descriptors, /proc, /sys and other pseudo file systems, tmpfs and
 * ramfs (no writeback), and file systems where the probe module says
 * sync_file_range is a no-op or unsupported.
 *
 * Interface routines (shim.h): shim_enter/_leave, shim_written,
 * shim_stdio_written, shim_release, shim_release_range, shim_new_fd,
 * shim_synced, shim_truncated.
 *
 * Invariants:
 *   P1. Nothing here changes what an intercepted call returned: the
 *       interposers call libc first and restore errno after us; the
 *       calls made here (lseek SEEK_CUR, fstat, fstatfs, fcntl F_GETFL,
 *       sync_file_range WRITE, fadvise DONTNEED, cachestat) change
 *       neither the file offset, nor data, nor the program's writeback
 *       error cursor, and open no descriptor (the stats file at exit
 *       is the one exception).
 *   P2. No allocation and no lock held across a system call on the
 *       write path: the slot table is one mmap made at load time; a
 *       slot's spinlock guards only its in-memory fields.  The probe
 *       module's mutex is only taken under probe_lock, which the fork
 *       handlers hold across fork.
 *   P3. A thread re-entering the shim (a signal handler interrupting
 *       it, or a call the shim itself makes) passes straight to libc
 *       (shim_enter, a thread-local flag with the initial-exec model:
 *       no allocation on first use).  The shim's own calls do re-enter:
 *       in this .so, sys.c's write, close, openat, ... (fk_sys) and the
 *       fcntl below bind to interpose.c's exported replacements, which
 *       call libc and then find the thread inside (docs/design.md, The
 *       floors: the one intended circle).
 *   P4. g_inflight is the sum over slots of ext_bytes + fifo_bytes while
 *       max_dirty or drop_cache is set; every path that clears a slot
 *       subtracts what it held.
 *   P5. A slot's lock word carries the fork generation: the child of a
 *       fork bumps it, and the first user of a slot with an older
 *       generation takes it over and clears it (the child tracks its
 *       own writes only; a lock a parent thread held at fork is not
 *       inherited as held).
 *   P6. A slot whose descriptor was reused behind the shim's back (a
 *       close inside libc) is caught at its next hint: the fstat
 *       identity (st_dev, st_ino) no longer matches, and the slot is
 *       cleared and classified again.
 */
#include "shim.h"
#include "pacer.h"
#include "probe.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Slots: descriptors below this are tracked; higher ones pass through. */
#define MAX_SLOTS 65536
/* Hinted ranges kept per descriptor for max_dirty / drop_cache. */
#define FIFO_N 16
/* Position-based writes are located by one lseek per this many bytes. */
#define POS_CHECK (64u * 1024u)
/* A file closed with less than this written and never hinted is left to
 * the kernel's own writeback: one small write-out per small file (a tree
 * of 65000 files) costs the device more seeks than the batched writeback
 * of the flusher, and measured slower for the writer and its neighbour
 * (docs/neighbor.md). */
#define CLOSE_HINT_MIN (256u * 1024u)
/* The small-file budget is counted over periods this long: the kernel's
 * default dirty_expire_centisecs (30 s), after which the flusher has
 * written what the process left it. */
#define SMALL_PERIOD_NS (30ull * 1000 * 1000 * 1000)
/* Pacing: a bandwidth sample spans at least this long ... */
#define PACE_SAMPLE_NS (200ull * 1000 * 1000)
/* ... and counts only if the writer spent at least this share of it
 * (percent) waiting for its own writeback: the device was the limit. */
#define PACE_SATURATED_PCT 50
/* Paced this long without a new sample, the writer runs unpaced for
 * PACE_PROBE_NS (still under max_dirty) to measure the device again. */
#define PACE_REPROBE_NS (3000ull * 1000 * 1000)
#define PACE_PROBE_NS (300ull * 1000 * 1000)
/* Longest single pacing sleep (the debt carries over). */
#define PACE_MAX_SLEEP_NS (100ull * 1000 * 1000)
#ifndef IOPRIO_WHO_PROCESS
#define IOPRIO_WHO_PROCESS 1
#endif

enum slot_state {
	ST_UNKNOWN = 0,
	ST_IGNORED = 1,
	ST_TRACKED = 2,
};

enum ignore_reason {
	IG_NOTREG,	/* pipe, socket, tty, device, directory */
	IG_DIRECT,	/* O_DIRECT */
	IG_PSEUDO,	/* /proc, /sys, debugfs, cgroup... */
	IG_NOWRITEBACK, /* tmpfs, ramfs: no backing device */
	IG_UNSUPPORTED, /* sync_file_range a no-op or unsupported */
	IG_ERROR,	/* fstat/fstatfs/fcntl failed */
	IG_N
};

struct range {
	uint64_t off, len; /* hull of the written bytes */
	uint64_t bytes;	   /* bytes written into it */
};

struct slot {
	_Atomic uint32_t lock; /* gen << 1 | held (P5) */
	_Atomic uint8_t state; /* enum slot_state */
	uint8_t append;	       /* O_APPEND at classification */
	uint8_t hinted;	       /* a flush-after range was hinted */
	dev_t dev;
	ino_t ino;
	uint64_t pos_bytes; /* position-based bytes not located yet */
	uint64_t ext_off, ext_end, ext_bytes; /* written, not hinted */
	struct range fifo[FIFO_N]; /* hinted, not waited, oldest first */
	unsigned nfifo;
	uint64_t fifo_bytes;
};

/* Configuration (from the environment, at load time). */
static int g_enabled;
static uint64_t g_flush_after = 1u << 20;
static uint64_t g_max_dirty = 8u << 20;
static int g_drop_cache;
static int g_track;	    /* max_dirty || drop_cache: keep hinted ranges */
static uint64_t g_pace_pct; /* 0: no pacing; else percent of bw */
static uint64_t g_small_budget = UINT64_MAX; /* never hinted */
static int g_hint_ioprio;		     /* 0: the thread's own */
static char g_stats_path[512];
static int g_stats; /* 1: append a line to g_stats_path at exit */

static struct slot *g_slots;
static unsigned g_nslots;
static _Atomic uint32_t g_gen = 1;
static _Atomic int64_t g_inflight;    /* P4 */
static _Atomic int64_t g_closed;      /* closed files since the last wait */
static _Atomic uint64_t g_small_left; /* small-file bytes left, this period */
static _Atomic uint64_t g_small_t0;   /* start of the period, fk_now_ns */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static __thread int t_in_shim __attribute__((tls_model("initial-exec")));

/* Counters for --stats. */
static struct {
	_Atomic uint64_t bytes_written, files, hints, hint_bytes, hint_errors;
	_Atomic uint64_t waits, wait_ns, wait_bytes, waits_skipped;
	_Atomic uint64_t wait_timeouts;
	_Atomic uint64_t drops, untracked;
	_Atomic uint64_t small_hints, small_left, pace_sleeps, pace_ns;
	_Atomic uint64_t pace_samples, pace_bw;
	_Atomic uint64_t ignored[IG_N];
} g_st;

static void stat_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

int shim_enter(void)
{
	if (!g_enabled || t_in_shim)
		return 0;
	t_in_shim = 1;
	return 1;
}

void shim_leave(void)
{
	t_in_shim = 0;
}

/* ---- slot locking (P5) ---- */

static void slot_clear(struct slot *s)
{
	atomic_store_explicit(&s->state, ST_UNKNOWN, memory_order_relaxed);
	s->append = 0;
	s->hinted = 0;
	s->dev = 0;
	s->ino = 0;
	s->pos_bytes = 0;
	s->ext_off = s->ext_end = s->ext_bytes = 0;
	s->nfifo = 0;
	s->fifo_bytes = 0;
}

static void slot_lock(struct slot *s)
{
	unsigned spins = 0;
	for (;;) {
		uint32_t g = atomic_load_explicit(&g_gen, memory_order_relaxed);
		uint32_t w =
		    atomic_load_explicit(&s->lock, memory_order_relaxed);
		if ((w >> 1) != g) {
			/* Older generation (fork child, or never used):
			 * take it over and clear it. */
			if (atomic_compare_exchange_weak_explicit(
				&s->lock, &w, (g << 1) | 1,
				memory_order_acquire, memory_order_relaxed)) {
				slot_clear(s);
				return;
			}
			continue;
		}
		if (!(w & 1) && atomic_compare_exchange_weak_explicit(
				    &s->lock, &w, w | 1, memory_order_acquire,
				    memory_order_relaxed))
			return;
		if (++spins > 64)
			sched_yield();
	}
}

static void slot_unlock(struct slot *s)
{
	uint32_t w = atomic_load_explicit(&s->lock, memory_order_relaxed);
	atomic_store_explicit(&s->lock, w & ~1u, memory_order_release);
}

static struct slot *slot_of(int fd)
{
	if (fd < 0)
		return NULL;
	if ((unsigned)fd >= g_nslots) {
		stat_add(&g_st.untracked, 1);
		return NULL;
	}
	return &g_slots[fd];
}

/* Empty @s (under its lock), keeping P4.  The state becomes UNKNOWN. */
static void slot_drop_locked(struct slot *s)
{
	if (g_track)
		atomic_fetch_sub(&g_inflight,
				 (int64_t)(s->ext_bytes + s->fifo_bytes));
	slot_clear(s);
}

/* ---- classification ---- */

static int pseudo_fs(long type)
{
	switch (type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case DEVPTS_SUPER_MAGIC:
	case BPF_FS_MAGIC:
	case PSTOREFS_MAGIC:
	case EFIVARFS_MAGIC:
	case 0x62656570: /* configfs */
		return IG_PSEUDO;
	case TMPFS_MAGIC:
	case RAMFS_MAGIC:
	case HUGETLBFS_MAGIC:
		return IG_NOWRITEBACK;
	}
	return -1;
}

/* Decide about @fd (no lock held).  Returns ST_TRACKED (identity in
 * *st) or ST_IGNORED (reason in *why). */
static int classify(int fd, struct stat *st, int *append, int *why)
{
	struct statfs sfs;

	if (fk_sys.fstat(fd, st) < 0) {
		*why = IG_ERROR;
		return ST_IGNORED;
	}
	if (!S_ISREG(st->st_mode)) {
		*why = IG_NOTREG;
		return ST_IGNORED;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0) {
		*why = IG_ERROR;
		return ST_IGNORED;
	}
	if (fl & O_DIRECT) {
		*why = IG_DIRECT;
		return ST_IGNORED;
	}
	*append = !!(fl & O_APPEND);
	if (fk_sys.fstatfs(fd, &sfs) < 0) {
		*why = IG_ERROR;
		return ST_IGNORED;
	}
	int p = pseudo_fs((long)sfs.f_type);
	if (p >= 0) {
		*why = p;
		return ST_IGNORED;
	}
	/* The probe module's cache, under probe_lock (P2). */
	dev_t dev;
	pthread_mutex_lock(&probe_lock);
	int sup = fk_probe_sfr_lookup(fd, &dev);
	if (sup == FK_SFR_UNKNOWN)
		sup = fk_probe_sync_file_range(fd);
	pthread_mutex_unlock(&probe_lock);
	if (sup != FK_SFR_WORKS) {
		*why = sup < 0 ? IG_ERROR : IG_UNSUPPORTED;
		return ST_IGNORED;
	}
	return ST_TRACKED;
}

/* The slot of @fd, classified; NULL unless @fd is a tracked file. */
static struct slot *tracked_slot(int fd)
{
	struct slot *s = slot_of(fd);
	if (!s)
		return NULL;
	slot_lock(s);
	int state = atomic_load_explicit(&s->state, memory_order_relaxed);
	slot_unlock(s);
	if (state == ST_UNKNOWN) {
		struct stat st;
		int append = 0, why = IG_ERROR;
		int c = classify(fd, &st, &append, &why);
		slot_lock(s);
		if (atomic_load_explicit(&s->state, memory_order_relaxed) ==
		    ST_UNKNOWN) {
			atomic_store_explicit(&s->state, c,
					      memory_order_relaxed);
			if (c == ST_TRACKED) {
				s->dev = st.st_dev;
				s->ino = st.st_ino;
				s->append = (uint8_t)append;
				stat_add(&g_st.files, 1);
			} else {
				stat_add(&g_st.ignored[why], 1);
			}
		}
		state = atomic_load_explicit(&s->state, memory_order_relaxed);
		slot_unlock(s);
	}
	return state == ST_TRACKED ? s : NULL;
}

/* ---- hints and waits ---- */

/* 1 if @fd still names the file @s was classified for (P6); else the
 * slot is cleared (classified again at the next write). */
static int same_file(struct slot *s, int fd)
{
	struct stat st;
	int r = fk_sys.fstat(fd, &st);
	slot_lock(s);
	int same =
	    r == 0 && s->dev == st.st_dev && s->ino == st.st_ino &&
	    atomic_load_explicit(&s->state, memory_order_relaxed) == ST_TRACKED;
	if (!same)
		slot_drop_locked(s);
	slot_unlock(s);
	return same;
}

/*
 * Start writeback of [off, off + len) of @fd: sync_file_range(WRITE),
 * submitted by the calling thread.  With hint_ioprio, the thread runs
 * the call at that I/O priority (ioprio_set on itself, IOPRIO_WHO_PROCESS
 * 0, unprivileged for the idle and best-effort classes) and is put back
 * to exactly the value ioprio_get reported before (0, "none: follow the
 * nice value", for a thread that never set one): the bios the call
 * submits take the submitting task's priority (the block layer's
 * bio_set_ioprio), so a scheduler that honours classes (mq-deadline,
 * BFQ) serves the program's other I/O, and every other program's,
 * before the shim's writeback, while the program's own reads and the
 * writes it makes itself keep its priority.
 */
static int sfr(int fd, uint64_t off, uint64_t len)
{
	long old = -1;
	if (g_hint_ioprio) {
		old = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
		if (old == g_hint_ioprio ||
		    (old >= 0 && syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
					 g_hint_ioprio) < 0))
			old = -1;
	}
	int e = fk_sys.sync_file_range(fd, (off_t)off, (off_t)len,
				       SYNC_FILE_RANGE_WRITE);
	if (old >= 0)
		syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, (int)old);
	return e;
}

static void pace_waited(uint64_t ns);

static void hint(int fd, const struct range *r)
{
	/* Submitting writeback blocks once the device's queue (or blk-wbt's
	 * limit) is full: time the device sets, as a wait's is. */
	uint64_t t0 = g_pace_pct ? fk_now_ns() : 0;
	int e = sfr(fd, r->off, r->len);
	if (g_pace_pct)
		pace_waited(fk_now_ns() - t0);
	if (e == 0) {
		stat_add(&g_st.hints, 1);
		stat_add(&g_st.hint_bytes, r->len);
	} else {
		stat_add(&g_st.hint_errors, 1);
	}
}

static void drop(int fd, const struct range *r)
{
	if (fk_sys.fadvise(fd, (off_t)r->off, (off_t)r->len,
			   POSIX_FADV_DONTNEED) == 0)
		stat_add(&g_st.drops, 1);
}

/* ---- pacing: a per-process balance_dirty_pages ---- */

/*
 * With pace (a percent), the process's writes to tracked files are held
 * to that share of the writeback bandwidth it measured for itself: a
 * per-process balance_dirty_pages (which paces every dirtier to its
 * bdi's measured write bandwidth), or RocksDB's rate limiter for one
 * program, without its configuration.
 *
 * The bandwidth is the rate at which the process wrote over a sample of
 * at least PACE_SAMPLE_NS in which it spent at least PACE_SATURATED_PCT
 * percent of the time waiting for its own writeback (max_dirty's waits,
 * and the hints' sync_file_range, which blocks while the device's queue
 * is full):
 * then the device, not the program, set the pace, and what the program
 * wrote is what the device wrote back.  Samples are smoothed (new =
 * 3/4 old + 1/4 sample).  Until the first sample the process is not
 * paced; paced, it waits too little to be sampled, so every
 * PACE_REPROBE_NS without a sample it runs unpaced (max_dirty still
 * bounds it) for PACE_PROBE_NS and is measured again.
 *
 * The pacing itself is the library's pacer (pacer.c, PostgreSQL's spread
 * checkpoint): windows of max_dirty bytes (at least flush_after), each
 * given the time the paced rate allows; after each write the writer
 * sleeps what fk_pacer_delay_ns says (at most PACE_MAX_SLEEP_NS at a
 * time; a debt carries into the next write).  Process-wide, all threads
 * together; the state is under a spinlock never held across a system
 * call (P2), reset in a fork child.
 */
static struct {
	_Atomic uint32_t lock;
	uint64_t bw;			   /* bytes/s; 0: not measured */
	uint64_t s_t0, s_bytes, s_wait_ns; /* the current sample */
	uint64_t last_sample_ns;	   /* when bw was last measured */
	uint64_t probe_until;		   /* unpaced until then */
	struct fk_pacer p;		   /* the current window */
	uint64_t w_bytes, w_done;	   /* its size, bytes written in it */
} g_pace;

static void pace_lock(void)
{
	unsigned spins = 0;
	while (atomic_exchange_explicit(&g_pace.lock, 1, memory_order_acquire))
		if (++spins > 64)
			sched_yield();
}

static void pace_unlock(void)
{
	atomic_store_explicit(&g_pace.lock, 0, memory_order_release);
}

/* A wait for the process's own writeback took @ns. */
static void pace_waited(uint64_t ns)
{
	if (!g_pace_pct)
		return;
	pace_lock();
	g_pace.s_wait_ns += ns;
	pace_unlock();
}

/* Start a pacing window at @start for the bandwidth now (locked). */
static void pace_window(uint64_t start)
{
	uint64_t rate = g_pace.bw * g_pace_pct / 100;
	if (!rate)
		rate = 1;
	g_pace.w_bytes =
	    g_max_dirty > g_flush_after ? g_max_dirty : g_flush_after;
	uint64_t budget =
	    (uint64_t)((double)g_pace.w_bytes * 1e9 / (double)rate);
	fk_pacer_start_at(&g_pace.p, start, budget, 0, 0);
	g_pace.w_done = 0;
}

/* @bytes were written to tracked files: sample, then maybe sleep. */
static void pace(uint64_t bytes)
{
	if (!g_pace_pct)
		return;
	uint64_t now = fk_now_ns(), d = 0;
	pace_lock();
	if (!g_pace.s_t0)
		g_pace.s_t0 = now;
	g_pace.s_bytes += bytes;
	uint64_t span = now - g_pace.s_t0;
	if (span >= PACE_SAMPLE_NS) {
		if (g_pace.s_wait_ns * 100 >= span * PACE_SATURATED_PCT) {
			uint64_t bw = (uint64_t)((double)g_pace.s_bytes * 1e9 /
						 (double)span);
			int first = !g_pace.bw;
			g_pace.bw = first ? bw : (3 * g_pace.bw + bw) / 4;
			g_pace.last_sample_ns = now;
			stat_add(&g_st.pace_samples, 1);
			atomic_store_explicit(&g_st.pace_bw, g_pace.bw,
					      memory_order_relaxed);
			if (first)
				pace_window(now);
		}
		g_pace.s_t0 = now;
		g_pace.s_bytes = g_pace.s_wait_ns = 0;
	}
	if (!g_pace.bw || now < g_pace.probe_until) {
		pace_unlock();
		return;
	}
	if (g_pace.probe_until) {
		/* A probe just ended: pace from here at the new rate. */
		g_pace.probe_until = 0;
		pace_window(now);
	}
	if (now - g_pace.last_sample_ns >= PACE_REPROBE_NS) {
		g_pace.probe_until = now + PACE_PROBE_NS;
		g_pace.last_sample_ns = now;
		g_pace.s_t0 = now;
		g_pace.s_bytes = g_pace.s_wait_ns = 0;
		pace_unlock();
		return;
	}
	g_pace.w_done += bytes;
	d = fk_pacer_delay_ns_at(&g_pace.p,
				 (double)g_pace.w_done / (double)g_pace.w_bytes,
				 0, PACE_MAX_SLEEP_NS, now);
	if (g_pace.w_done >= g_pace.w_bytes) {
		uint64_t carry = g_pace.w_done - g_pace.w_bytes;
		uint64_t due = g_pace.p.start_ns + g_pace.p.budget_ns;
		pace_window(due > now ? due : now);
		g_pace.w_done = carry;
	}
	pace_unlock();
	if (!d)
		return;
	/* A signal cuts the sleep short: the debt is paid later. */
	struct timespec ts = {(time_t)(d / 1000000000u),
			      (long)(d % 1000000000u)};
	nanosleep(&ts, NULL);
	stat_add(&g_st.pace_sleeps, 1);
	stat_add(&g_st.pace_ns, d);
}

/* A wait gives up on a range after this long (another thread may keep
 * re-dirtying it); counted as wait_timeouts. */
#define WAIT_CAP_NS (2000ull * 1000 * 1000)
#define WAIT_SLEEP_MIN_NS (200 * 1000)
#define WAIT_SLEEP_MAX_NS (10 * 1000 * 1000)

/* Set once cachestat(2) is found missing (kernels before 6.5). */
static _Atomic int g_no_cachestat;

/*
 * Wait until @r of the file behind the program's own descriptor @fd is
 * written back, without consuming its writeback error and without a
 * descriptor of ours (see the banner): start writeback of the range
 * (SYNC_FILE_RANGE_WRITE, WB_SYNC_NONE) and poll cachestat(2) until the
 * range holds no writeback page (and no dirty page, or writeback was
 * started a second time), sleeping 0.2 ms doubling to 10 ms between
 * polls, at most WAIT_CAP_NS.  If the program closed
 * or reused @fd meanwhile, the worst is a hint to and a query of
 * another file: nothing reaches the program.  Without cachestat (or if
 * it fails) the wait is skipped and counted.
 */
static void wait_range(int fd, const struct range *r)
{
	struct fk_cachestat cs;
	uint64_t t0 = fk_now_ns();
	long sleep_ns = WAIT_SLEEP_MIN_NS;

	if (atomic_load_explicit(&g_no_cachestat, memory_order_relaxed)) {
		stat_add(&g_st.waits_skipped, 1);
		return;
	}
	/* Writeback is started once, and once more when it has drained
	 * with pages still dirty (skipped because under writeback at the
	 * first start): pages another thread dirties after that are its
	 * own, so the wait ends then, not only when the range is clean. */
	int rehinted = 0;
	sfr(fd, r->off, r->len);
	for (;;) {
		int e = fk_sys.cachestat_range(fd, r->off, r->len, &cs);
		if (e < 0) {
			if (e == -ENOSYS)
				atomic_store(&g_no_cachestat, 1);
			stat_add(&g_st.waits_skipped, 1);
			return;
		}
		if (!cs.nr_dirty && !cs.nr_writeback)
			break;
		if (!cs.nr_writeback) {
			if (rehinted)
				break;
			rehinted = 1;
			sfr(fd, r->off, r->len);
			continue;
		}
		if (fk_now_ns() - t0 >= WAIT_CAP_NS) {
			stat_add(&g_st.wait_timeouts, 1);
			break;
		}
		struct timespec ts = {0, sleep_ns};
		nanosleep(&ts, NULL);
		sleep_ns = sleep_ns * 2 > WAIT_SLEEP_MAX_NS ? WAIT_SLEEP_MAX_NS
							    : sleep_ns * 2;
	}
	uint64_t waited = fk_now_ns() - t0;
	pace_waited(waited);
	stat_add(&g_st.wait_ns, waited);
	stat_add(&g_st.waits, 1);
	stat_add(&g_st.wait_bytes, r->bytes);
}

/* Append @r to the slot's FIFO (under its lock); a full FIFO merges its
 * two oldest entries into their hull (a wider wait, never a lost one). */
static void fifo_push(struct slot *s, const struct range *r)
{
	/* A range that continues the newest one joins it while that stays
	 * below an eighth of max_dirty: waits come in steps that small. */
	uint64_t step =
	    g_max_dirty / 8 > g_flush_after ? g_max_dirty / 8 : g_flush_after;
	if (s->nfifo) {
		struct range *last = &s->fifo[s->nfifo - 1];
		if (last->off + last->len == r->off &&
		    last->bytes + r->bytes <= step) {
			last->len += r->len;
			last->bytes += r->bytes;
			s->fifo_bytes += r->bytes;
			return;
		}
	}
	if (s->nfifo == FIFO_N) {
		struct range *a = &s->fifo[0], *b = &s->fifo[1];
		uint64_t lo = a->off < b->off ? a->off : b->off;
		uint64_t ea = a->off + a->len, eb = b->off + b->len;
		uint64_t hi = ea > eb ? ea : eb;
		a->off = lo;
		a->len = hi - lo;
		a->bytes += b->bytes;
		memmove(&s->fifo[1], &s->fifo[2],
			(FIFO_N - 2) * sizeof(s->fifo[0]));
		s->nfifo--;
	}
	s->fifo[s->nfifo++] = *r;
	s->fifo_bytes += r->bytes;
}

static int fifo_pop(struct slot *s, struct range *r)
{
	if (!s->nfifo)
		return 0;
	*r = s->fifo[0];
	memmove(&s->fifo[0], &s->fifo[1], (s->nfifo - 1) * sizeof(s->fifo[0]));
	s->nfifo--;
	s->fifo_bytes -= r->bytes;
	return 1;
}

/* Take the slot's unhinted extent as a range (under its lock). */
static int take_ext(struct slot *s, struct range *r)
{
	if (!s->ext_bytes)
		return 0;
	r->off = s->ext_off;
	r->len = s->ext_end - s->ext_off;
	r->bytes = s->ext_bytes;
	s->ext_bytes = 0;
	s->ext_off = s->ext_end = 0;
	return 1;
}

/* Hint @r (taken from @s) and keep it for a later wait or drop. */
static void hint_and_keep(struct slot *s, int fd, const struct range *r)
{
	struct range old;
	int have_old = 0;

	if (!same_file(s, fd)) {
		/* The slot was cleared, and @r's bytes with it.  But @r
		 * had already left the slot: take them out here (P4). */
		if (g_track)
			atomic_fetch_sub(&g_inflight, (int64_t)r->bytes);
		return;
	}
	hint(fd, r);
	if (!g_track)
		return;
	slot_lock(s);
	fifo_push(s, r);
	/* drop_cache alone: ranges hinted two hints ago are written
	 * back by now, or the kernel keeps what is not. */
	if (!g_max_dirty && s->nfifo > 2)
		have_old = fifo_pop(s, &old);
	slot_unlock(s);
	if (have_old) {
		drop(fd, &old);
		atomic_fetch_sub(&g_inflight, (int64_t)old.bytes);
	}
}

/* Past max_dirty: wait for this descriptor's oldest ranges. */
static void throttle(struct slot *s, int fd)
{
	while (atomic_load(&g_inflight) > (int64_t)g_max_dirty) {
		struct range r;
		int from_ext = 0, have;
		slot_lock(s);
		have = fifo_pop(s, &r);
		if (!have)
			have = from_ext = take_ext(s, &r);
		slot_unlock(s);
		if (!have)
			break;
		if (from_ext)
			hint(fd, &r);
		wait_range(fd, &r);
		atomic_fetch_sub(&g_inflight, (int64_t)r.bytes);
		if (g_drop_cache)
			drop(fd, &r);
	}
}

/* Account @bytes at @off of the tracked slot @s. */
static void note(struct slot *s, int fd, uint64_t off, uint64_t bytes)
{
	struct range r;
	int full = 0;

	slot_lock(s);
	if (!s->ext_bytes) {
		s->ext_off = off;
		s->ext_end = off + bytes;
	} else {
		if (off < s->ext_off)
			s->ext_off = off;
		if (off + bytes > s->ext_end)
			s->ext_end = off + bytes;
	}
	s->ext_bytes += bytes;
	if (g_track)
		atomic_fetch_add(&g_inflight, (int64_t)bytes);
	if (s->ext_bytes >= g_flush_after) {
		full = take_ext(s, &r);
		s->hinted = 1;
	}
	slot_unlock(s);

	if (full)
		hint_and_keep(s, fd, &r);
	if (g_max_dirty && atomic_load(&g_inflight) > (int64_t)g_max_dirty)
		throttle(s, fd);
	pace(bytes);
}

/* Locate the slot's position-based bytes with one lseek and note them. */
static void locate(struct slot *s, int fd)
{
	off_t pos = fk_sys.lseek(fd, 0, SEEK_CUR);
	slot_lock(s);
	uint64_t acc = s->pos_bytes;
	s->pos_bytes = 0;
	if (pos < 0)
		slot_drop_locked(s); /* not seekable after all: P6 */
	slot_unlock(s);
	if (pos < 0 || !acc)
		return;
	uint64_t end = (uint64_t)pos;
	note(s, fd, end >= acc ? end - acc : 0, end >= acc ? acc : end);
}

static void pos_written(struct slot *s, int fd, uint64_t bytes)
{
	slot_lock(s);
	s->pos_bytes += bytes;
	int due = s->pos_bytes >= POS_CHECK || s->pos_bytes >= g_flush_after;
	slot_unlock(s);
	if (due)
		locate(s, fd);
}

void shim_written(int fd, uint64_t off, uint64_t bytes)
{
	if (!bytes)
		return;
	struct slot *s = tracked_slot(fd);
	if (!s)
		return;
	/* Counted when written, not when located or hinted: a process that
	 * exits before its position-based bytes are located wrote them. */
	stat_add(&g_st.bytes_written, bytes);
	/* O_APPEND: Linux appends even a pwrite, whatever its offset. */
	if (s->append)
		off = SHIM_APPEND;
	if (off == SHIM_POS) {
		pos_written(s, fd, bytes);
		return;
	}
	if (off == SHIM_APPEND) {
		struct stat st;
		if (fk_sys.fstat(fd, &st) < 0)
			return;
		uint64_t end = (uint64_t)st.st_size;
		off = end >= bytes ? end - bytes : 0;
	}
	note(s, fd, off, bytes);
}

void shim_stdio_written(int fd, uint64_t bytes)
{
	if (!bytes)
		return;
	struct slot *s = tracked_slot(fd);
	if (!s)
		return;
	stat_add(&g_st.bytes_written, bytes);
	pos_written(s, fd, bytes);
}

/*
 * A file closed with fewer than CLOSE_HINT_MIN bytes written, never
 * hinted: 1 if it is left to the kernel's writeback (the process has
 * left less than small_budget bytes of such files to it in this
 * SMALL_PERIOD_NS period: a program that writes a few small files is
 * not touched), 0 if it is to be hinted now (past the budget: a tree
 * writer, whose small files add up to what the flusher would write in
 * one burst).  The hinted ones count against max_dirty like every
 * closed file (shim_release's close wait).
 */
static int small_left_to_kernel(uint64_t bytes)
{
	if (g_small_budget == UINT64_MAX)
		return 1;
	uint64_t now = fk_now_ns();
	uint64_t t0 = atomic_load_explicit(&g_small_t0, memory_order_relaxed);
	if (!t0 || now - t0 >= SMALL_PERIOD_NS) {
		/* Racy between threads, harmlessly: a period restarts
		 * twice, or one file more is hinted or left. */
		atomic_store(&g_small_t0, now);
		atomic_store(&g_small_left, 0);
	}
	uint64_t left = atomic_fetch_add(&g_small_left, bytes) + bytes;
	if (left <= g_small_budget) {
		stat_add(&g_st.small_left, 1);
		return 1;
	}
	atomic_fetch_sub(&g_small_left, bytes);
	return 0;
}

void shim_release(int fd, int closing)
{
	struct slot *s = slot_of(fd);
	struct range r, span = {0, 0, 0};
	int have_ext;

	if (!s)
		return;
	slot_lock(s);
	int state = atomic_load_explicit(&s->state, memory_order_relaxed);
	int pending = s->pos_bytes > 0;
	slot_unlock(s);
	if (state == ST_TRACKED && pending)
		locate(s, fd);

	slot_lock(s);
	state = atomic_load_explicit(&s->state, memory_order_relaxed);
	have_ext = state == ST_TRACKED && take_ext(s, &r);
	/* The hull of everything still held, for the wait and the drop. */
	uint64_t lo = UINT64_MAX, hi = 0, held = 0;
	if (have_ext) {
		lo = r.off;
		hi = r.off + r.len;
		held += r.bytes;
		if (g_track)
			atomic_fetch_sub(&g_inflight, (int64_t)r.bytes);
	}
	for (unsigned i = 0; state == ST_TRACKED && i < s->nfifo; i++) {
		const struct range *f = &s->fifo[i];
		if (f->off < lo)
			lo = f->off;
		if (f->off + f->len > hi)
			hi = f->off + f->len;
	}
	held += s->fifo_bytes;
	int small = closing && !s->hinted && have_ext &&
		    r.bytes < CLOSE_HINT_MIN && r.bytes < g_flush_after;
	slot_drop_locked(s);
	slot_unlock(s);
	if (state != ST_TRACKED)
		return;
	if (small && small_left_to_kernel(r.bytes))
		return;
	if (small)
		stat_add(&g_st.small_hints, 1);
	if (have_ext)
		hint(fd, &r);
	if (!held || lo >= hi)
		return;
	span.off = lo;
	span.len = hi - lo;
	span.bytes = held;
	/*
	 * A closed file's ranges can no longer be waited for.  When the
	 * files closed since the last such wait exceed max_dirty, wait for
	 * this one (the newest: writeback of the older ones started
	 * earlier) and start counting again.
	 */
	if (closing && g_max_dirty &&
	    atomic_fetch_add(&g_closed, (int64_t)held) + (int64_t)held >
		(int64_t)g_max_dirty) {
		/* Before the real close (interpose.c): still the
		 * program's descriptor of this file. */
		wait_range(fd, &span);
		atomic_store(&g_closed, 0);
	}
	if (g_drop_cache)
		drop(fd, &span);
}

void shim_release_range(unsigned first, unsigned last)
{
	if (last >= g_nslots)
		last = g_nslots ? g_nslots - 1 : 0;
	for (unsigned fd = first; fd <= last && fd < g_nslots; fd++) {
		struct slot *s = &g_slots[fd];
		/* A racy peek is enough: slots never used stay UNKNOWN. */
		if (atomic_load_explicit(&s->state, memory_order_relaxed) !=
		    ST_UNKNOWN)
			shim_release((int)fd, 1);
	}
}

void shim_new_fd(int fd)
{
	if (fd < 0 || (unsigned)fd >= g_nslots)
		return;
	struct slot *s = &g_slots[fd];
	slot_lock(s);
	slot_drop_locked(s);
	slot_unlock(s);
}

void shim_synced(int fd)
{
	if (fd < 0 || (unsigned)fd >= g_nslots)
		return;
	struct slot *s = &g_slots[fd];
	slot_lock(s);
	if (atomic_load_explicit(&s->state, memory_order_relaxed) ==
	    ST_TRACKED) {
		/* Clean now: nothing left to hint or wait for. */
		if (g_track)
			atomic_fetch_sub(&g_inflight, (int64_t)(s->ext_bytes +
								s->fifo_bytes));
		s->ext_bytes = s->ext_off = s->ext_end = 0;
		s->nfifo = 0;
		s->fifo_bytes = 0;
		s->pos_bytes = 0;
	}
	slot_unlock(s);
}

void shim_truncated(int fd, uint64_t length)
{
	if (fd < 0 || (unsigned)fd >= g_nslots)
		return;
	struct slot *s = &g_slots[fd];
	slot_lock(s);
	/* Dirty pages past the new end are gone: so is that extent. */
	if (s->ext_bytes && s->ext_off >= length) {
		if (g_track)
			atomic_fetch_sub(&g_inflight, (int64_t)s->ext_bytes);
		s->ext_bytes = s->ext_off = s->ext_end = 0;
	} else if (s->ext_bytes && s->ext_end > length) {
		s->ext_end = length;
	}
	slot_unlock(s);
}

/* ---- configuration, fork, statistics ---- */

/* A decimal byte count (flushkit exec passes every size already parsed
 * by its size parser, as plain digits).  0 or -1. */
static int env_u64(const char *name, uint64_t *out)
{
	const char *v = getenv(name);
	if (!v)
		return 0;
	uint64_t x = 0;
	if (!*v)
		return -1;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' ||
		    x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*out = x;
	return 0;
}

static void say(const char *a, const char *b, const char *c)
{
	/* write(2), not stdio: no allocation, no buffer of the program's. */
	const char *parts[] = {"flushkit-preload: ", a, b, c, "\n"};
	for (size_t i = 0; i < 5; i++)
		if (parts[i])
			fk_sys.write(2, parts[i], strlen(parts[i]));
}

static void on_fork_prepare(void)
{
	pthread_mutex_lock(&probe_lock);
}

static void on_fork_parent(void)
{
	pthread_mutex_unlock(&probe_lock);
}

static void on_fork_child(void)
{
	pthread_mutex_unlock(&probe_lock);
	/* P5: the child tracks its own writes from here. */
	uint32_t g = atomic_load(&g_gen) + 1;
	if (g >= (1u << 31))
		g = 1;
	atomic_store(&g_gen, g);
	atomic_store(&g_inflight, 0);
	atomic_store(&g_closed, 0);
	atomic_store(&g_small_left, 0);
	atomic_store(&g_small_t0, 0);
	memset(&g_pace, 0, sizeof(g_pace));
	memset(&g_st, 0, sizeof(g_st));
}

/* The unprivileged classes only: idle (level 0), best-effort 0-7. */
static int hint_ioprio_ok(uint64_t v)
{
	uint64_t class = v >> 13, level = v & 0x1fff;
	return v == 0 || (class == 3 && level == 0) ||
	       (class == 2 && level < 8);
}

static void config(void)
{
	const char *bad = NULL;
	const char *v;
	uint64_t hint_ioprio = 0;

	if (env_u64("FLUSHKIT_FLUSH_AFTER", &g_flush_after))
		bad = "FLUSHKIT_FLUSH_AFTER";
	else if (env_u64("FLUSHKIT_MAX_DIRTY", &g_max_dirty))
		bad = "FLUSHKIT_MAX_DIRTY";
	else if (env_u64("FLUSHKIT_PACE", &g_pace_pct) || g_pace_pct > 100)
		bad = "FLUSHKIT_PACE";
	else if (env_u64("FLUSHKIT_SMALL_BUDGET", &g_small_budget))
		bad = "FLUSHKIT_SMALL_BUDGET";
	else if (env_u64("FLUSHKIT_HINT_IOPRIO", &hint_ioprio) ||
		 !hint_ioprio_ok(hint_ioprio))
		bad = "FLUSHKIT_HINT_IOPRIO";
	else if ((v = getenv("FLUSHKIT_DROP_CACHE")) && strcmp(v, "0") &&
		 strcmp(v, "1"))
		bad = "FLUSHKIT_DROP_CACHE";
	else if (g_flush_after < 4096)
		bad = "FLUSHKIT_FLUSH_AFTER";
	else if (g_max_dirty && g_max_dirty < g_flush_after)
		bad = "FLUSHKIT_MAX_DIRTY";
	if (bad) {
		say("malformed ", bad,
		    " (decimal: flush-after >= 4096, max-dirty 0 or >= "
		    "flush-after, pace 0-100, hint-ioprio an idle or "
		    "best-effort ioprio value); writeback hints disabled in "
		    "this process");
		return;
	}
	g_hint_ioprio = (int)hint_ioprio;
	g_drop_cache = v && !strcmp(v, "1");
	g_track = g_max_dirty || g_drop_cache;
	v = getenv("FLUSHKIT_STATS");
	if (v && *v) {
		/* Statistics go to a file by path, never to a descriptor of
		 * the program's (its fd 2 may be a data file by then). */
		if (v[0] != '/') {
			say("FLUSHKIT_STATS must be an absolute path; no "
			    "statistics",
			    NULL, NULL);
		} else if (strlen(v) < sizeof(g_stats_path)) {
			strcpy(g_stats_path, v);
			g_stats = 1;
		} else {
			say("FLUSHKIT_STATS path too long; no statistics", NULL,
			    NULL);
		}
	}

	struct rlimit rl;
	unsigned n = MAX_SLOTS;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n)
		n = (unsigned)rl.rlim_max;
	void *m =
	    mmap(NULL, (size_t)n * sizeof(struct slot), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		say("cannot map the descriptor table; writeback hints "
		    "disabled in this process",
		    NULL, NULL);
		return;
	}
	g_slots = m;
	g_nslots = n;
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
	g_enabled = 1;
}

/* Append "KEY=VALUE " to buf at *n (no stdio). */
static void put_kv(char *buf, size_t cap, size_t *n, const char *k, uint64_t v)
{
	char d[24];
	int nd = 0;
	do {
		d[nd++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	size_t kl = strlen(k);
	if (*n + kl + 1 + (size_t)nd + 1 >= cap)
		return;
	memcpy(buf + *n, k, kl);
	*n += kl;
	buf[(*n)++] = '=';
	while (nd)
		buf[(*n)++] = d[--nd];
	buf[(*n)++] = ' ';
}

static uint64_t ld(_Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

static void report(void)
{
	char buf[1024];
	size_t n = 0;

	if (!g_enabled || !g_stats)
		return;
	t_in_shim = 1;
	memcpy(buf, "flushkit-preload: ", 18);
	n = 18;
	put_kv(buf, sizeof(buf), &n, "pid", (uint64_t)getpid());
	put_kv(buf, sizeof(buf), &n, "files", ld(&g_st.files));
	put_kv(buf, sizeof(buf), &n, "bytes_written", ld(&g_st.bytes_written));
	put_kv(buf, sizeof(buf), &n, "hints", ld(&g_st.hints));
	put_kv(buf, sizeof(buf), &n, "hint_bytes", ld(&g_st.hint_bytes));
	put_kv(buf, sizeof(buf), &n, "hint_errors", ld(&g_st.hint_errors));
	put_kv(buf, sizeof(buf), &n, "waits", ld(&g_st.waits));
	put_kv(buf, sizeof(buf), &n, "wait_ms", ld(&g_st.wait_ns) / 1000000);
	put_kv(buf, sizeof(buf), &n, "wait_bytes", ld(&g_st.wait_bytes));
	put_kv(buf, sizeof(buf), &n, "waits_skipped", ld(&g_st.waits_skipped));
	put_kv(buf, sizeof(buf), &n, "wait_timeouts", ld(&g_st.wait_timeouts));
	put_kv(buf, sizeof(buf), &n, "drops", ld(&g_st.drops));
	put_kv(buf, sizeof(buf), &n, "small_hints", ld(&g_st.small_hints));
	put_kv(buf, sizeof(buf), &n, "small_left", ld(&g_st.small_left));
	put_kv(buf, sizeof(buf), &n, "pace_sleeps", ld(&g_st.pace_sleeps));
	put_kv(buf, sizeof(buf), &n, "pace_ms", ld(&g_st.pace_ns) / 1000000);
	put_kv(buf, sizeof(buf), &n, "pace_samples", ld(&g_st.pace_samples));
	put_kv(buf, sizeof(buf), &n, "wb_bandwidth", ld(&g_st.pace_bw));
	put_kv(buf, sizeof(buf), &n, "ignored_notreg",
	       ld(&g_st.ignored[IG_NOTREG]));
	put_kv(buf, sizeof(buf), &n, "ignored_direct",
	       ld(&g_st.ignored[IG_DIRECT]));
	put_kv(buf, sizeof(buf), &n, "ignored_pseudo",
	       ld(&g_st.ignored[IG_PSEUDO]));
	put_kv(buf, sizeof(buf), &n, "ignored_nowriteback",
	       ld(&g_st.ignored[IG_NOWRITEBACK]));
	put_kv(buf, sizeof(buf), &n, "ignored_unsupported",
	       ld(&g_st.ignored[IG_UNSUPPORTED]));
	put_kv(buf, sizeof(buf), &n, "ignored_error",
	       ld(&g_st.ignored[IG_ERROR]));
	put_kv(buf, sizeof(buf), &n, "untracked_fds", ld(&g_st.untracked));
	buf[n - 1] = '\n';
	/* Never blocks (a FIFO without a reader: ENXIO), never follows a
	 * symlink, writes only to a regular file; a process at its
	 * descriptor limit cannot open it and loses its line (flushkit
	 * exec counts the lines it got: "N processes reported"). */
	int fd = fk_sys.openat(AT_FDCWD, g_stats_path,
			       O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK |
				   O_NOFOLLOW | O_NOCTTY,
			       0600);
	if (fd >= 0) {
		struct stat st;
		if (fk_sys.fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			fk_sys.write(fd, buf, n);
		fk_sys.close(fd);
	}
	t_in_shim = 0;
}

/* For the in-process tests (the shim linked, not preloaded). */
void shim_counters(uint64_t *hints, uint64_t *waits, uint64_t *bytes)
{
	*hints = ld(&g_st.hints);
	*waits = ld(&g_st.waits);
	*bytes = ld(&g_st.bytes_written);
}

/* Exposed for the in-process tests (linked, not preloaded). */
void shim_init(void) __attribute__((constructor));
void shim_fini(void) __attribute__((destructor));

void shim_init(void)
{
	if (g_enabled || g_slots)
		return;
	t_in_shim = 1;
	config();
	t_in_shim = 0;
}

void shim_fini(void)
{
	report();
}
