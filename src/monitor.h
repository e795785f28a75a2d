/* SPDX-License-Identifier: MIT */
/*
 * monitor.h - internals of the monitor module shared with its tests.
 *
 * The public side (parsers, device resolution, the sampler, the
 * environment snapshot) is SECTION monitor of flushkit.h.  Here are the
 * pieces that take a different root for /sys and /proc files, so tests
 * can resolve devices in a fake sysfs tree built in a temporary
 * directory, and the mountinfo parser.
 *
 * Private to the library and its tests.
 */
#ifndef FK_MONITOR_H
#define FK_MONITOR_H

#include "flushkit.h"

#include <stddef.h>
#include <stdint.h>

/* One line of /proc/self/mountinfo (proc(5)), with escapes decoded. */
struct fk_mount {
	uint32_t major, minor; /* st_dev of files on it */
	char root[256];	       /* subtree mounted ("/" mostly) */
	char mount_point[256];
	char mount_options[256]; /* per-mount options */
	char fs_type[32];
	char source[256];	 /* "/dev/vda1", "tmpfs", ... */
	char super_options[256]; /* per-superblock options */
};

/*
 * Find the mount of a file with st_dev @major:@minor and absolute path
 * @abs_path (may be NULL) in the mountinfo text @buf: among the lines
 * with that device, the one whose mount point is the longest prefix of
 * @abs_path (at a '/' boundary); the last such line if none is a prefix;
 * if no line has the device, the longest prefix of any.  Returns 0 or
 * -ENOENT.  No I/O.
 */
int fk_mountinfo_find(const char *buf, uint32_t major, uint32_t minor,
		      const char *abs_path, struct fk_mount *out);

/*
 * Read the whole (small, pseudo-) file @path relative to @dirfd into a
 * malloc'ed NUL-terminated buffer, at most @max bytes.  Returns the
 * length, or -errno (-EFBIG if larger than @max).  Uses openat/read/close
 * of fk_sys.
 */
ssize_t fk_read_text(int dirfd, const char *path, size_t max, char **out);

/*
 * Read @path into @buf (@len bytes, NUL-terminated, trailing newline
 * removed).  Returns the string length or -errno.
 */
ssize_t fk_read_line(const char *path, char *buf, size_t len);

/*
 * fk_blockdev_resolve with other roots: @sys_root instead of "/sys" and
 * @mountinfo instead of "/proc/self/mountinfo"; start from the device
 * number @major:@minor (an st_dev).  Returns as fk_blockdev_resolve.
 */
int fk_blockdev_resolve_dev(const char *sys_root, const char *mountinfo,
			    uint32_t major, uint32_t minor,
			    struct fk_blockdev *devs, size_t max);

/* Read the queue settings of disk @name under @sys_root ("/sys"). */
void fk_blockdev_env_read(const char *sys_root, const char *name,
			  struct fk_blockdev_env *env);

#endif
