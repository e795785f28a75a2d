// SPDX-License-Identifier: MIT
/*
 * measure.c - bench neighbor's measuring helpers: clocks,
 * /proc/meminfo and the dirty limit, the disk of a path, percentiles and
 * pgbench-format latency logs, the victim's result file.
 */
#include "child.h"
#include "cli.h"
#include "neighbor.h"
#include "reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

/* The stop signal caught (0: none), set by cmd.c's handler. */
volatile sig_atomic_t nb_stop_sig;

int nb_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = n < 0 ? -errno : 0;
	close(fd);
	if (e)
		return e;
	buf[n] = '\0';
	char *nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

int nb_write_small(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(val);
	ssize_t n = write(fd, val, len);
	int e = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	if (close(fd) && !e)
		e = -errno;
	return e;
}

double nb_now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double nb_now_epoch(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void nb_sleep_s(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

/* Dirty and Writeback of /proc/meminfo, KiB (NAN: not read). */
void nb_meminfo(double *dirty_kb, double *wb_kb)
{
	struct fk_meminfo m;
	*dirty_kb = *wb_kb = NAN;
	if (fk_meminfo_read(NULL, &m))
		return;
	*dirty_kb = (double)m.dirty_kb;
	*wb_kb = (double)m.writeback_kb;
}

static uint64_t meminfo_total_kb(void)
{
	struct fk_meminfo m;
	return fk_meminfo_read(NULL, &m) ? 0 : m.mem_total_kb;
}

/* The dirty limit: vm.dirty_bytes, else vm.dirty_ratio of MemTotal (the
 * kernel takes the ratio of the memory available to the page cache, a
 * little less: an upper bound). */
uint64_t nb_dirty_limit_bytes(void)
{
	char b[64];
	unsigned long long v;
	if (!nb_read_small("/proc/sys/vm/dirty_bytes", b, sizeof(b)) &&
	    sscanf(b, "%llu", &v) == 1 && v)
		return v;
	if (nb_read_small("/proc/sys/vm/dirty_ratio", b, sizeof(b)) ||
	    sscanf(b, "%llu", &v) != 1)
		v = 20;
	return meminfo_total_kb() * 1024 / 100 * v;
}

/* The whole disk's MAJ:MIN for the file system of @path (the bdi and
 * the blkio throttles are per disk, not per partition). */
int nb_path_disk(const char *path, unsigned *maj, unsigned *min)
{
	struct stat st;
	if (stat(path, &st))
		return -errno;
	*maj = major(st.st_dev);
	*min = minor(st.st_dev);
	char p[128], b[64];
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/partition", *maj, *min);
	if (access(p, F_OK))
		return 0;
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../dev", *maj, *min);
	if (!nb_read_small(p, b, sizeof(b)))
		sscanf(b, "%u:%u", maj, min);
	return 0;
}

/* rm -rf @path (a child with a fixed argument array). */
void nb_remove_tree(const char *path)
{
	char *argv[] = {"rm", "-rf", "--", (char *)path, NULL};
	struct child_opts o = {.flags = CHILD_STDIN_NULL};
	child_run("rm", argv, &o);
}

int nb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted @v. */
double nb_pct(const double *v, size_t n, double q)
{
	if (!n)
		return NAN;
	size_t k = (size_t)ceil(q * (double)n);
	return v[k ? k - 1 : 0];
}

static int lat_add(struct lat_set *s, double end, double lat_ms)
{
	if (s->n == s->alloc) {
		size_t na = s->alloc ? s->alloc * 2 : 65536;
		double *a = realloc(s->lat_ms, na * sizeof(double));
		if (!a)
			return -ENOMEM;
		s->lat_ms = a;
		double *b = realloc(s->end, na * sizeof(double));
		if (!b)
			return -ENOMEM;
		s->end = b;
		s->alloc = na;
	}
	s->lat_ms[s->n] = lat_ms;
	s->end[s->n++] = end;
	return 0;
}

/* Read the pgbench-format logs RUN/txlog.* (end time epoch, latency). */
int nb_read_txlogs(const char *run, struct lat_set *s, char *names,
		   size_t names_len)
{
	DIR *d = opendir(run);
	if (!d)
		return -errno;
	struct dirent *de;
	int e = 0;
	names[0] = '\0';
	while (!e && (de = readdir(d))) {
		if (strncmp(de->d_name, "txlog.", 6))
			continue;
		size_t l = strlen(names);
		snprintf(names + l, names_len - l, "%s%s", l ? " " : "",
			 de->d_name);
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", run, de->d_name);
		FILE *f = fopen(path, "re");
		if (!f) {
			e = -errno;
			break;
		}
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			long client, xact, script;
			double lat_us, ep, us;
			if (sscanf(line, "%ld %ld %lf %ld %lf %lf", &client,
				   &xact, &lat_us, &script, &ep, &us) != 6)
				continue;
			if ((e = lat_add(s, ep + us / 1e6, lat_us / 1000.0)))
				break;
		}
		fclose(f);
	}
	closedir(d);
	return e;
}

/* The victim's result file in @dir (the only *.jsonl there). */
int nb_find_result(const char *dir, char *path, size_t len)
{
	char **names;
	size_t nr;
	int e = results_list(dir, &names, &nr);
	if (e)
		return e;
	if (!nr) {
		results_list_free(names, nr);
		return -ENOENT;
	}
	snprintf(path, len, "%s/%s", dir, names[nr - 1]);
	results_list_free(names, nr);
	return 0;
}
