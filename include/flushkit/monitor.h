/* SPDX-License-Identifier: MIT */
/*
 * flushkit/monitor.h - section 6 of <flushkit.h>, monitor:
 * Dirty/Writeback and block-layer counters.
 *
 * Part of <flushkit.h>, which includes every section in layer order
 * (its opening comment lists them, with the conventions they follow),
 * inside its extern "C" and after FK_API and the error codes: include
 * <flushkit.h>, not this file.
 */
#ifndef FLUSHKIT_MONITOR_H
#define FLUSHKIT_MONITOR_H

#ifndef FLUSHKIT_H
#error "include <flushkit.h>, not <flushkit/monitor.h>"
#endif

/* ===================================================================
 * Monitor
 * =================================================================== */

/* SECTION monitor */
/*
 * What the kernel is doing with dirty data, sampled from /proc and /sys:
 * the Dirty and Writeback lines of /proc/meminfo, the dirty thresholds of
 * /proc/vmstat, and /sys/block/DEV/stat of the disks under given paths
 * (the counts blktrace-era investigations of checkpoint stalls used).
 * The parsers take a buffer, the readers a file path (NULL for the live
 * file), so fixed sample files can be parsed in tests.  Every file is
 * read with openat/read/close through the syscall table.  No printing.
 * Field meanings: Documentation/filesystems/proc.rst and
 * Documentation/block/stat.rst of the Linux sources.
 */

/* From /proc/meminfo.  Values in KiB (the file's "kB" is KiB). */
struct fk_meminfo {
	uint64_t mem_total_kb;
	uint64_t mem_available_kb;
	uint64_t cached_kb;
	uint64_t dirty_kb;     /* dirty page cache, not yet written */
	uint64_t writeback_kb; /* being written back right now */
};

/* From /proc/vmstat.  Values in pages (sysconf(_SC_PAGESIZE) bytes). */
struct fk_vmstat {
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_dirty_threshold;		/* dirty pages that throttle
						 * writers (dirty_ratio) */
	uint64_t nr_dirty_background_threshold; /* where flusher threads
						 * start writeback */
};

/*
 * /sys/block/DEV/stat.  Kernels before 4.18 have 11 fields, 4.18 to 5.4
 * add 4 discard fields (15), 5.5 and later 2 flush fields (17); fields a
 * kernel does not have are 0 and @nr_fields says how many were read.
 * Sectors are 512 bytes whatever the device's sector size.
 */
struct fk_blkstat {
	uint64_t read_ios, read_merges, read_sectors, read_ticks_ms;
	uint64_t write_ios, write_merges, write_sectors, write_ticks_ms;
	uint64_t in_flight, io_ticks_ms, time_in_queue_ms;
	uint64_t discard_ios, discard_merges, discard_sectors;
	uint64_t discard_ticks_ms;
	uint64_t flush_ios, flush_ticks_ms;
	int nr_fields; /* 11, 15 or 17 (more are ignored) */
};

/*
 * fk_meminfo_parse - parse the text of /proc/meminfo in @buf
 * (NUL-terminated).  Lines missing from @buf leave their field 0.
 * Returns 0, or -EINVAL if neither Dirty nor Writeback is present.
 * No I/O.  Thread-safe.
 */
FK_API int fk_meminfo_parse(const char *buf, struct fk_meminfo *out);
/*
 * fk_meminfo_read - read and parse @path (NULL: /proc/meminfo).
 * Returns 0, -errno from openat/read (-ENOENT without /proc), -EFBIG
 * if the file exceeds 64 KiB, or -EINVAL as fk_meminfo_parse.  Does
 * blocking I/O (a procfs read does not touch the disk).  Thread-safe.
 */
FK_API int fk_meminfo_read(const char *path, struct fk_meminfo *out);

/* As fk_meminfo_parse/_read, for /proc/vmstat.  -EINVAL if nr_dirty
 * is missing. */
FK_API int fk_vmstat_parse(const char *buf, struct fk_vmstat *out);
FK_API int fk_vmstat_read(const char *path, struct fk_vmstat *out);

/* As fk_meminfo_parse/_read, for one line of /sys/block/DEV/stat
 * (@path required).  -EINVAL if fewer than 11 numbers. */
FK_API int fk_blkstat_parse(const char *buf, struct fk_blkstat *out);
FK_API int fk_blkstat_read(const char *path, struct fk_blkstat *out);

#define FK_DEVNAME_MAX 32 /* bytes, with the NUL */
#define FK_MONITOR_MAX_DEVICES 8

/* A whole disk found under a path, as named in /sys/block. */
struct fk_blockdev {
	char name[FK_DEVNAME_MAX];	 /* "vda", "nvme0n1", "loop3" */
	char part[FK_DEVNAME_MAX];	 /* partition the path is on ("vda2"),
					  * "" if on the whole disk */
	char backing_of[FK_DEVNAME_MAX]; /* set when this disk holds the
					  * backing file of loop device
					  * "loopN"; "" otherwise */
	uint32_t major, minor;		 /* of the whole disk */
};

/*
 * fk_blockdev_resolve - the disks a path's data goes to.
 * @path: any existing file or directory (followed if a symlink).
 * @devs: receives up to @max disks: first the disk of the path's file
 *        system (stat -> st_dev -> /sys/dev/block/MAJ:MIN, going up to
 *        the whole disk for a partition, whose directory has a
 *        "partition" file); if that is a loop device, then the disk
 *        holding its backing file (/sys/block/loopN/loop/backing_file),
 *        and so on for stacked loops.  File systems with an anonymous
 *        st_dev (btrfs, major 0) are looked up by their mount source in
 *        /proc/self/mountinfo.
 * Returns the number of disks filled (0 for tmpfs, NFS, ...), or -errno
 * from stat (-ENOENT: no such path).  Does I/O (/sys, /proc reads).
 * Thread-safe.
 */
FK_API int fk_blockdev_resolve(const char *path, struct fk_blockdev *devs,
			       size_t max);

/*
 * struct fk_monitor - a sampler (opaque).  Add the paths whose disks to
 * watch, then call fk_monitor_sample at whatever interval the caller
 * chooses (flushkit uses 1 s, down to 100 ms).  Not thread-safe: one
 * thread samples (others may sample their own fk_monitor).
 */
struct fk_monitor;

/* One sample.  Counters are cumulative, as the kernel keeps them. */
struct fk_monitor_sample {
	uint64_t time_ns;     /* CLOCK_MONOTONIC */
	uint64_t realtime_ns; /* CLOCK_REALTIME (for logs) */
	struct fk_meminfo mem;
	struct fk_vmstat vm;
	size_t nr_devices; /* as fk_monitor_nr_devices */
	struct fk_blkstat dev[FK_MONITOR_MAX_DEVICES];
};

/* Returns 0 or -ENOMEM. */
FK_API int fk_monitor_create(struct fk_monitor **out);
FK_API void fk_monitor_destroy(struct fk_monitor *m);
/*
 * fk_monitor_add_path - watch the disks under @path (fk_blockdev_resolve).
 * A disk already watched is not added twice.  Returns the number of
 * disks watched now, -errno from fk_blockdev_resolve, or -E2BIG past
 * FK_MONITOR_MAX_DEVICES disks.  Does I/O.
 */
FK_API int fk_monitor_add_path(struct fk_monitor *m, const char *path);
FK_API size_t fk_monitor_nr_devices(const struct fk_monitor *m);
/* The i-th watched disk (i < nr_devices); owned by @m. */
FK_API const struct fk_blockdev *fk_monitor_device(const struct fk_monitor *m,
						   size_t i);
/*
 * fk_monitor_sample - read /proc/meminfo, /proc/vmstat and the stat file
 * of every watched disk into @s.  Returns 0, or the first -errno (the
 * other fields are still filled where they could be read; a disk that
 * went away leaves its entry zeroed with nr_fields 0).  Does I/O
 * (procfs/sysfs only; never waits for the disk).
 */
FK_API int fk_monitor_sample(struct fk_monitor *m, struct fk_monitor_sample *s);

/* The queue settings of one disk. */
struct fk_blockdev_env {
	char name[FK_DEVNAME_MAX];
	char scheduler[32];   /* the selected one: "mq-deadline", "none" */
	char write_cache[16]; /* "write back", "write through", "" */
	int rotational;	      /* 1, 0, or -1 if unknown */
};

/*
 * The environment a result depends on: dirty-writeback sysctls, kernel,
 * and the file system and disks under a path.  Integers are -1 where a
 * file could not be read; strings are "" then.
 */
struct fk_monitor_env {
	int64_t dirty_ratio;		/* percent */
	int64_t dirty_background_ratio; /* percent */
	int64_t dirty_bytes;		/* 0 = ratio used */
	int64_t dirty_background_bytes;
	int64_t dirty_expire_centisecs;
	int64_t dirty_writeback_centisecs;
	char kernel_release[128]; /* uname -r */
	char kernel_version[256]; /* uname -v */
	char fs_type[32];	  /* "ext4", "xfs", "tmpfs" */
	char mount_point[256];
	char mount_source[256];	 /* "/dev/vda1" */
	char mount_options[256]; /* per mount: "rw,relatime" */
	char super_options[256]; /* file system: "rw,discard" */
	size_t nr_devices;
	struct fk_blockdev devs[FK_MONITOR_MAX_DEVICES];
	struct fk_blockdev_env dev_env[FK_MONITOR_MAX_DEVICES];
};

/*
 * fk_monitor_env - fill @env for @path (NULL: only the sysctls and the
 * kernel).  The mount is the /proc/self/mountinfo entry with the path's
 * st_dev whose mount point is the longest prefix of the path's absolute
 * name.  Returns 0, or -errno if @path cannot be examined (what could
 * be read is still filled).  Does I/O (/proc, /sys).  Thread-safe.
 */
FK_API int fk_monitor_env(const char *path, struct fk_monitor_env *env);

#endif /* FLUSHKIT_MONITOR_H */
