// SPDX-License-Identifier: MIT
/*
 * monitor.c - what the kernel does with dirty data: /proc/meminfo,
 * /proc/vmstat and /sys/block/DEV/stat, the disks under a path, and the
 * settings a benchmark result depends on.
 *
 * Interface routines (flushkit.h, SECTION monitor):
 *   fk_meminfo_parse/_read, fk_vmstat_parse/_read, fk_blkstat_parse/_read
 *       parse the text of the kernel's files; readers take a path so
 *       tests can feed fixed sample files;
 *   fk_blockdev_resolve       path -> st_dev -> /sys/dev/block/MAJ:MIN ->
 *       whole disk (a partition's directory has a "partition" file and
 *       sits inside its disk's), then for a loop device the disk of its
 *       backing file (/sys/block/loopN/loop/backing_file);
 *   fk_monitor_create/_add_path/_sample/_destroy   the sampler;
 *   fk_monitor_env            sysctls, kernel, mount, disk queue settings.
 * Internal (monitor.h): fk_mountinfo_find, fk_blockdev_resolve_dev (with
 * another sysfs root, for tests), fk_read_text, fk_read_line.
 *
 * The sampler keeps /proc/meminfo, /proc/vmstat and each disk's stat
 * file open and rereads them with pread at offset 0 (procfs and sysfs
 * regenerate the text on a read at offset 0), so a sample costs one
 * read per file.
 *
 * Invariants of struct fk_monitor:
 *  1. devs[0..nr) are distinct disks (by major:minor), in the order
 *     paths were added, a loop device before its backing disk;
 *  2. stat_fd[i] is -1 or an open descriptor of devs[i]'s stat file;
 *     meminfo_fd and vmstat_fd likewise; all are closed by destroy.
 *
 * Every file is opened and read through fk_sys; nothing is printed.
 */
#include "monitor.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#define TEXT_MAX (64u * 1024u) /* /proc/meminfo, vmstat */
#define MOUNTINFO_MAX (4u * 1024u * 1024u)
#define RESOLVE_DEPTH 4 /* loops on loops */

/* Copy @src into @dst of @len bytes, truncating, always terminated. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- reading small files ------------------------------------------- */

ssize_t fk_read_text(int dirfd, const char *path, size_t max, char **out)
{
	size_t alloc = 4096, len = 0;
	char *buf = malloc(alloc);
	if (!buf)
		return -ENOMEM;
	int fd = fk_sys.openat(dirfd, path, O_RDONLY, 0);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	for (;;) {
		if (len + 1 >= alloc) {
			if (alloc > max) {
				fk_sys.close(fd);
				free(buf);
				return -EFBIG;
			}
			char *p = realloc(buf, alloc * 2);
			if (!p) {
				fk_sys.close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = p;
			alloc *= 2;
		}
		ssize_t n = fk_sys.read(fd, buf + len, alloc - len - 1);
		if (n < 0) {
			fk_sys.close(fd);
			free(buf);
			return n;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	fk_sys.close(fd);
	if (len > max) {
		free(buf);
		return -EFBIG;
	}
	buf[len] = '\0';
	*out = buf;
	return (ssize_t)len;
}

ssize_t fk_read_line(const char *path, char *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;
	buf[0] = '\0';
	int fd = fk_sys.openat(AT_FDCWD, path, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t n = fk_sys.read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			fk_sys.close(fd);
			buf[0] = '\0';
			return n;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	fk_sys.close(fd);
	buf[got] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return (ssize_t)strlen(buf);
}

/* Reread an open procfs/sysfs file from offset 0 into *buf (grown as
 * needed, NUL-terminated).  Returns the length or -errno. */
static ssize_t reread(int fd, char **buf, size_t *alloc)
{
	size_t len = 0;
	for (;;) {
		if (len + 1 >= *alloc) {
			size_t n = *alloc ? *alloc * 2 : 8192;
			if (n > TEXT_MAX * 4)
				return -EFBIG;
			char *p = realloc(*buf, n);
			if (!p)
				return -ENOMEM;
			*buf = p;
			*alloc = n;
		}
		ssize_t n =
		    fk_sys.pread(fd, *buf + len, *alloc - len - 1, (off_t)len);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	(*buf)[len] = '\0';
	return (ssize_t)len;
}

/* ---- parsers --------------------------------------------------------- */

/* Find "\nKEY" followed by @sep at a line start; return the text after
 * the separator, or NULL. */
static const char *find_key(const char *buf, const char *key, char sep)
{
	size_t klen = strlen(key);
	const char *p = buf;
	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == sep)
			return p + klen + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static int key_u64(const char *buf, const char *key, char sep, uint64_t *v)
{
	const char *p = find_key(buf, key, sep);
	if (!p)
		return 0;
	*v = strtoull(p, NULL, 10);
	return 1;
}

int fk_meminfo_parse(const char *buf, struct fk_meminfo *out)
{
	memset(out, 0, sizeof(*out));
	key_u64(buf, "MemTotal", ':', &out->mem_total_kb);
	key_u64(buf, "MemAvailable", ':', &out->mem_available_kb);
	key_u64(buf, "Cached", ':', &out->cached_kb);
	int found = key_u64(buf, "Dirty", ':', &out->dirty_kb);
	found += key_u64(buf, "Writeback", ':', &out->writeback_kb);
	return found ? 0 : -EINVAL;
}

int fk_vmstat_parse(const char *buf, struct fk_vmstat *out)
{
	memset(out, 0, sizeof(*out));
	int found = key_u64(buf, "nr_dirty", ' ', &out->nr_dirty);
	key_u64(buf, "nr_writeback", ' ', &out->nr_writeback);
	key_u64(buf, "nr_dirty_threshold", ' ', &out->nr_dirty_threshold);
	key_u64(buf, "nr_dirty_background_threshold", ' ',
		&out->nr_dirty_background_threshold);
	return found ? 0 : -EINVAL;
}

int fk_blkstat_parse(const char *buf, struct fk_blkstat *out)
{
	uint64_t v[17] = {0};
	int n = 0;
	const char *p = buf;
	while (n < 17) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		char *end;
		v[n++] = strtoull(p, &end, 10);
		p = end;
	}
	memset(out, 0, sizeof(*out));
	if (n < 11)
		return -EINVAL;
	out->read_ios = v[0];
	out->read_merges = v[1];
	out->read_sectors = v[2];
	out->read_ticks_ms = v[3];
	out->write_ios = v[4];
	out->write_merges = v[5];
	out->write_sectors = v[6];
	out->write_ticks_ms = v[7];
	out->in_flight = v[8];
	out->io_ticks_ms = v[9];
	out->time_in_queue_ms = v[10];
	out->discard_ios = v[11];
	out->discard_merges = v[12];
	out->discard_sectors = v[13];
	out->discard_ticks_ms = v[14];
	out->flush_ios = v[15];
	out->flush_ticks_ms = v[16];
	out->nr_fields = n;
	return 0;
}

static int read_parse(const char *path, void *out,
		      int (*parse)(const char *, void *))
{
	char *buf;
	ssize_t n = fk_read_text(AT_FDCWD, path, TEXT_MAX, &buf);
	if (n < 0)
		return (int)n;
	int r = parse(buf, out);
	free(buf);
	return r;
}

static int parse_meminfo(const char *b, void *o)
{
	return fk_meminfo_parse(b, o);
}

static int parse_vmstat(const char *b, void *o)
{
	return fk_vmstat_parse(b, o);
}

static int parse_blkstat(const char *b, void *o)
{
	return fk_blkstat_parse(b, o);
}

int fk_meminfo_read(const char *path, struct fk_meminfo *out)
{
	return read_parse(path ? path : "/proc/meminfo", out, parse_meminfo);
}

int fk_vmstat_read(const char *path, struct fk_vmstat *out)
{
	return read_parse(path ? path : "/proc/vmstat", out, parse_vmstat);
}

int fk_blkstat_read(const char *path, struct fk_blkstat *out)
{
	if (!path)
		return -EINVAL;
	return read_parse(path, out, parse_blkstat);
}

/* ---- mountinfo ------------------------------------------------------- */

/* Copy the next space-separated field of *p into dst (decoding \ooo
 * escapes), advancing *p.  Returns 0 or -EINVAL at end of line. */
static int next_field(const char **p, char *dst, size_t len)
{
	const char *s = *p;
	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return -EINVAL;
	size_t o = 0;
	while (*s && *s != ' ' && *s != '\n') {
		char c = *s++;
		if (c == '\\' && s[0] >= '0' && s[0] <= '7' && s[1] >= '0' &&
		    s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
			c = (char)(((s[0] - '0') << 6) | ((s[1] - '0') << 3) |
				   (s[2] - '0'));
			s += 3;
		}
		if (o + 1 < len)
			dst[o++] = c;
	}
	if (len)
		dst[o] = '\0';
	*p = s;
	return 0;
}

static int parse_mount_line(const char *line, struct fk_mount *m)
{
	char tmp[256];
	const char *p = line;
	memset(m, 0, sizeof(*m));
	if (next_field(&p, tmp, sizeof(tmp)) || /* mount id */
	    next_field(&p, tmp, sizeof(tmp)) || /* parent id */
	    next_field(&p, tmp, sizeof(tmp)))	/* major:minor */
		return -EINVAL;
	unsigned maj, min;
	if (sscanf(tmp, "%u:%u", &maj, &min) != 2)
		return -EINVAL;
	m->major = maj;
	m->minor = min;
	if (next_field(&p, m->root, sizeof(m->root)) ||
	    next_field(&p, m->mount_point, sizeof(m->mount_point)) ||
	    next_field(&p, m->mount_options, sizeof(m->mount_options)))
		return -EINVAL;
	/* optional fields up to the "-" separator */
	for (;;) {
		if (next_field(&p, tmp, sizeof(tmp)))
			return -EINVAL;
		if (!strcmp(tmp, "-"))
			break;
	}
	if (next_field(&p, m->fs_type, sizeof(m->fs_type)) ||
	    next_field(&p, m->source, sizeof(m->source)))
		return -EINVAL;
	next_field(&p, m->super_options, sizeof(m->super_options));
	return 0;
}

/* Length of @mp if it is a prefix of @path at a component boundary, or
 * -1. */
static long prefix_len(const char *mp, const char *path)
{
	size_t n = strlen(mp);
	if (!strcmp(mp, "/"))
		return path[0] == '/' ? 1 : -1;
	if (strncmp(mp, path, n) || (path[n] && path[n] != '/'))
		return -1;
	return (long)n;
}

int fk_mountinfo_find(const char *buf, uint32_t major, uint32_t minor,
		      const char *abs_path, struct fk_mount *out)
{
	struct fk_mount m;
	long best_dev = -2, best_any = -2;
	int have_dev_last = 0;
	struct fk_mount dev_last, any_best;
	const char *line = buf;
	while (line && *line) {
		if (!parse_mount_line(line, &m)) {
			long pl =
			    abs_path ? prefix_len(m.mount_point, abs_path) : -1;
			if (m.major == major && m.minor == minor) {
				dev_last = m;
				have_dev_last = 1;
				if (pl >= 0 && pl >= best_dev) {
					best_dev = pl;
					*out = m;
				}
			}
			if (pl >= 0 && pl >= best_any) {
				best_any = pl;
				any_best = m;
			}
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (best_dev >= 0)
		return 0;
	if (have_dev_last) {
		*out = dev_last;
		return 0;
	}
	if (best_any >= 0) {
		*out = any_best;
		return 0;
	}
	return -ENOENT;
}

/* ---- device resolution ----------------------------------------------- */

static const char *last_component(const char *p, size_t *len)
{
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		n--;
	size_t s = n;
	while (s > 0 && p[s - 1] != '/')
		s--;
	*len = n - s;
	return p + s;
}

static int copy_name(char *dst, const char *src, size_t len)
{
	if (len == 0 || len >= FK_DEVNAME_MAX)
		return -ENAMETOOLONG;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return 0;
}

static int exists(const char *path)
{
	struct stat st;
	return fk_sys.fstatat(AT_FDCWD, path, &st, 0) == 0;
}

/* One device number to one whole disk (no loop following).  Returns 1
 * if found, 0 if the number is not a block device in sysfs, -errno. */
static int resolve_disk(const char *sys, uint32_t maj, uint32_t min,
			struct fk_blockdev *d)
{
	char p[512], q[600], link[512];
	memset(d, 0, sizeof(*d));
	snprintf(p, sizeof(p), "%s/dev/block/%u:%u", sys, maj, min);
	ssize_t n = fk_sys.readlinkat(AT_FDCWD, p, link, sizeof(link) - 1);
	if (n == -ENOENT)
		return 0;
	if (n < 0)
		return (int)n;
	link[n] = '\0';
	size_t blen;
	const char *base = last_component(link, &blen);
	snprintf(q, sizeof(q), "%s/partition", p);
	if (!exists(q)) {
		d->major = maj;
		d->minor = min;
		int r = copy_name(d->name, base, blen);
		return r ? r : 1;
	}
	int r = copy_name(d->part, base, blen);
	if (r)
		return r;
	/* The disk is the partition's parent directory in sysfs. */
	link[base - link] = '\0';
	const char *disk = last_component(link, &blen);
	r = copy_name(d->name, disk, blen);
	if (r)
		return r;
	char devno[32];
	snprintf(q, sizeof(q), "%s/../dev", p);
	unsigned dmaj, dmin;
	if (fk_read_line(q, devno, sizeof(devno)) > 0 &&
	    sscanf(devno, "%u:%u", &dmaj, &dmin) == 2) {
		d->major = dmaj;
		d->minor = dmin;
	}
	return 1;
}

static int have_dev(const struct fk_blockdev *devs, size_t nr,
		    const struct fk_blockdev *d)
{
	for (size_t i = 0; i < nr; i++)
		if (devs[i].major == d->major && devs[i].minor == d->minor &&
		    !strcmp(devs[i].name, d->name))
			return 1;
	return 0;
}

/* The device of an anonymous st_dev (btrfs): its mount source. */
static int source_devno(const char *mountinfo, uint32_t maj, uint32_t min,
			uint32_t *omaj, uint32_t *omin)
{
	char *buf;
	struct fk_mount m;
	ssize_t n = fk_read_text(AT_FDCWD, mountinfo, MOUNTINFO_MAX, &buf);
	if (n < 0)
		return (int)n;
	int r = fk_mountinfo_find(buf, maj, min, NULL, &m);
	free(buf);
	if (r)
		return 0;
	if (m.major != maj || m.minor != min || strncmp(m.source, "/dev/", 5))
		return 0;
	struct stat st;
	if (fk_sys.fstatat(AT_FDCWD, m.source, &st, 0) || !S_ISBLK(st.st_mode))
		return 0;
	*omaj = major(st.st_rdev);
	*omin = minor(st.st_rdev);
	return 1;
}

static int resolve_rec(const char *sys, const char *mountinfo, uint32_t maj,
		       uint32_t min, const char *backing_of,
		       struct fk_blockdev *devs, size_t max, size_t *nr,
		       int depth)
{
	struct fk_blockdev d;
	int r = resolve_disk(sys, maj, min, &d);
	if (r < 0)
		return r;
	if (r == 0) {
		uint32_t smaj = 0, smin = 0;
		if (source_devno(mountinfo, maj, min, &smaj, &smin) <= 0 ||
		    (smaj == maj && smin == min))
			return 0;
		r = resolve_disk(sys, smaj, smin, &d);
		if (r <= 0)
			return r;
	}
	if (backing_of)
		copy_str(d.backing_of, sizeof(d.backing_of), backing_of);
	if (have_dev(devs, *nr, &d) || *nr >= max)
		return 0;
	devs[(*nr)++] = d;

	/* A loop device: also the disk under its backing file. */
	char p[512], file[4096];
	snprintf(p, sizeof(p), "%s/block/%s/loop/backing_file", sys, d.name);
	if (depth >= RESOLVE_DEPTH || fk_read_line(p, file, sizeof(file)) <= 0)
		return 0;
	struct stat st;
	if (fk_sys.fstatat(AT_FDCWD, file, &st, 0))
		return 0; /* deleted or not visible from here */
	char name[FK_DEVNAME_MAX];
	memcpy(name, d.name, sizeof(name));
	return resolve_rec(sys, mountinfo, major(st.st_dev), minor(st.st_dev),
			   name, devs, max, nr, depth + 1);
}

int fk_blockdev_resolve_dev(const char *sys_root, const char *mountinfo,
			    uint32_t major_nr, uint32_t minor_nr,
			    struct fk_blockdev *devs, size_t max)
{
	size_t nr = 0;
	int r = resolve_rec(sys_root, mountinfo, major_nr, minor_nr, NULL, devs,
			    max, &nr, 0);
	return r < 0 ? r : (int)nr;
}

int fk_blockdev_resolve(const char *path, struct fk_blockdev *devs, size_t max)
{
	struct stat st;
	int r = fk_sys.fstatat(AT_FDCWD, path, &st, 0);
	if (r)
		return r;
	return fk_blockdev_resolve_dev("/sys", "/proc/self/mountinfo",
				       major(st.st_dev), minor(st.st_dev), devs,
				       max);
}

/* ---- the sampler ------------------------------------------------------ */

struct fk_monitor {
	struct fk_blockdev devs[FK_MONITOR_MAX_DEVICES];
	int stat_fd[FK_MONITOR_MAX_DEVICES];
	size_t nr;
	int meminfo_fd, vmstat_fd;
	char *buf;
	size_t buf_alloc;
};

int fk_monitor_create(struct fk_monitor **out)
{
	struct fk_monitor *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->meminfo_fd = m->vmstat_fd = -1;
	for (size_t i = 0; i < FK_MONITOR_MAX_DEVICES; i++)
		m->stat_fd[i] = -1;
	*out = m;
	return 0;
}

void fk_monitor_destroy(struct fk_monitor *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++)
		if (m->stat_fd[i] >= 0)
			fk_sys.close(m->stat_fd[i]);
	if (m->meminfo_fd >= 0)
		fk_sys.close(m->meminfo_fd);
	if (m->vmstat_fd >= 0)
		fk_sys.close(m->vmstat_fd);
	free(m->buf);
	free(m);
}

int fk_monitor_add_path(struct fk_monitor *m, const char *path)
{
	struct fk_blockdev d[FK_MONITOR_MAX_DEVICES];
	int n = fk_blockdev_resolve(path, d, FK_MONITOR_MAX_DEVICES);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (have_dev(m->devs, m->nr, &d[i]))
			continue;
		if (m->nr >= FK_MONITOR_MAX_DEVICES)
			return -E2BIG;
		m->devs[m->nr] = d[i];
		m->stat_fd[m->nr] = -1;
		m->nr++;
	}
	return (int)m->nr;
}

size_t fk_monitor_nr_devices(const struct fk_monitor *m)
{
	return m->nr;
}

const struct fk_blockdev *fk_monitor_device(const struct fk_monitor *m,
					    size_t i)
{
	return i < m->nr ? &m->devs[i] : NULL;
}

/* Reread *fd (opening @path on first use) and parse it. */
static int sample_file(struct fk_monitor *m, int *fd, const char *path,
		       int (*parse)(const char *, void *), void *out)
{
	if (*fd < 0) {
		int r = fk_sys.openat(AT_FDCWD, path, O_RDONLY, 0);
		if (r < 0)
			return r;
		*fd = r;
	}
	ssize_t n = reread(*fd, &m->buf, &m->buf_alloc);
	if (n < 0)
		return (int)n;
	return parse(m->buf, out);
}

int fk_monitor_sample(struct fk_monitor *m, struct fk_monitor_sample *s)
{
	struct timespec ts;
	int err = 0, r;
	memset(s, 0, sizeof(*s));
	s->time_ns = fk_now_ns();
	clock_gettime(CLOCK_REALTIME, &ts);
	s->realtime_ns =
	    (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	r = sample_file(m, &m->meminfo_fd, "/proc/meminfo", parse_meminfo,
			&s->mem);
	if (r && !err)
		err = r;
	r = sample_file(m, &m->vmstat_fd, "/proc/vmstat", parse_vmstat, &s->vm);
	if (r && !err)
		err = r;
	s->nr_devices = m->nr;
	for (size_t i = 0; i < m->nr; i++) {
		char p[128];
		snprintf(p, sizeof(p), "/sys/block/%s/stat", m->devs[i].name);
		r = sample_file(m, &m->stat_fd[i], p, parse_blkstat,
				&s->dev[i]);
		if (r) {
			memset(&s->dev[i], 0, sizeof(s->dev[i]));
			/* The disk may have gone (loop detached): reopen
			 * next time. */
			if (m->stat_fd[i] >= 0) {
				fk_sys.close(m->stat_fd[i]);
				m->stat_fd[i] = -1;
			}
			if (!err)
				err = r;
		}
	}
	return err;
}

/* ---- environment ----------------------------------------------------- */

static int64_t read_i64(const char *path)
{
	char buf[64];
	if (fk_read_line(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

void fk_blockdev_env_read(const char *sys_root, const char *name,
			  struct fk_blockdev_env *env)
{
	char p[256], buf[256];
	memset(env, 0, sizeof(*env));
	copy_str(env->name, sizeof(env->name), name);
	env->rotational = -1;
	snprintf(p, sizeof(p), "%s/block/%s/queue/scheduler", sys_root, name);
	if (fk_read_line(p, buf, sizeof(buf)) > 0) {
		/* "mq-deadline kyber [bfq] none": the one in brackets */
		char *open = strchr(buf, '['), *close = strchr(buf, ']');
		char *s = buf;
		if (open && close && close > open) {
			s = open + 1;
			*close = '\0';
		}
		copy_str(env->scheduler, sizeof(env->scheduler), s);
	}
	snprintf(p, sizeof(p), "%s/block/%s/queue/write_cache", sys_root, name);
	if (fk_read_line(p, buf, sizeof(buf)) > 0)
		copy_str(env->write_cache, sizeof(env->write_cache), buf);
	snprintf(p, sizeof(p), "%s/block/%s/queue/rotational", sys_root, name);
	env->rotational = (int)read_i64(p);
}

/* The absolute name of an open file, from /proc/self/fd. */
static int abs_name(int fd, char *buf, size_t len)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	ssize_t n = fk_sys.readlinkat(AT_FDCWD, p, buf, len - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

int fk_monitor_env(const char *path, struct fk_monitor_env *env)
{
	static const char *vm = "/proc/sys/vm/";
	char p[128];
	memset(env, 0, sizeof(*env));
#define SYSCTL(f)                                                              \
	do {                                                                   \
		snprintf(p, sizeof(p), "%s%s", vm, #f);                        \
		env->f = read_i64(p);                                          \
	} while (0)
	SYSCTL(dirty_ratio);
	SYSCTL(dirty_background_ratio);
	SYSCTL(dirty_bytes);
	SYSCTL(dirty_background_bytes);
	SYSCTL(dirty_expire_centisecs);
	SYSCTL(dirty_writeback_centisecs);
#undef SYSCTL
	fk_read_line("/proc/sys/kernel/osrelease", env->kernel_release,
		     sizeof(env->kernel_release));
	fk_read_line("/proc/sys/kernel/version", env->kernel_version,
		     sizeof(env->kernel_version));
	if (!path)
		return 0;

	int fd = fk_sys.openat(AT_FDCWD, path, O_PATH, 0);
	if (fd < 0)
		return fd;
	struct stat st;
	char abs[4096];
	int r = fk_sys.fstat(fd, &st);
	if (!r && abs_name(fd, abs, sizeof(abs)))
		abs[0] = '\0';
	fk_sys.close(fd);
	if (r)
		return r;

	char *buf;
	if (fk_read_text(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX,
			 &buf) >= 0) {
		struct fk_mount m;
		if (!fk_mountinfo_find(buf, major(st.st_dev), minor(st.st_dev),
				       abs[0] ? abs : NULL, &m)) {
			copy_str(env->fs_type, sizeof(env->fs_type), m.fs_type);
			copy_str(env->mount_point, sizeof(env->mount_point),
				 m.mount_point);
			copy_str(env->mount_source, sizeof(env->mount_source),
				 m.source);
			copy_str(env->mount_options, sizeof(env->mount_options),
				 m.mount_options);
			copy_str(env->super_options, sizeof(env->super_options),
				 m.super_options);
		}
		free(buf);
	}
	r = fk_blockdev_resolve_dev("/sys", "/proc/self/mountinfo",
				    major(st.st_dev), minor(st.st_dev),
				    env->devs, FK_MONITOR_MAX_DEVICES);
	if (r < 0)
		return r;
	env->nr_devices = (size_t)r;
	for (size_t i = 0; i < env->nr_devices; i++)
		fk_blockdev_env_read("/sys", env->devs[i].name,
				     &env->dev_env[i]);
	return 0;
}
