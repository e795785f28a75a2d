// SPDX-License-Identifier: MIT
/*
 * cli-util.c - helpers shared by the subcommands: messages, size and
 * duration parsing, the one parser each of --sync-io and --jobs.
 */
#include "cli-sys.h"
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("flushkit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* "flushkit CMD: " or "flushkit: " */
static void usage_prefix(const char *cmd)
{
	if (cmd)
		fprintf(stderr, "flushkit %s: ", cmd);
	else
		fputs("flushkit: ", stderr);
}

int cli_usage_status(const char *cmd)
{
	/* The drop-ins of GNU's cp and sync exit as they do: 1 (their
	 * usage(EXIT_FAILURE)), so that a script written for them reads
	 * a usage error as it always has. */
	if (cmd && (!strcmp(cmd, "cp") || !strcmp(cmd, "sync")))
		return FK_EXIT_FAILURE;
	return FK_EXIT_USAGE;
}

int cli_usage_try(const char *cmd)
{
	fprintf(stderr, "Try 'flushkit%s%s --help' for more information.\n",
		cmd ? " " : "", cmd ? cmd : "");
	return cli_usage_status(cmd);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	usage_prefix(cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return cli_usage_try(cmd);
}

int cli_bad_value(const char *cmd, const char *opt, const char *val,
		  const char *hint_fmt, ...)
{
	usage_prefix(cmd);
	fprintf(stderr, "invalid value '%s' for %s", val ? val : "", opt);
	if (hint_fmt) {
		va_list ap;
		fputs(" (", stderr);
		va_start(ap, hint_fmt);
		vfprintf(stderr, hint_fmt, ap);
		va_end(ap);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
	return cli_usage_try(cmd);
}

/*
 * The long option "--NAME[=ARG]" names in @longopts: the exact match,
 * else the one option NAME abbreviates; NULL if none, and *@ambiguous
 * set if NAME abbreviates more than one (aliases of one option, same
 * has_arg and val, count once, as getopt_long has it).
 */
static const struct option *find_long(const struct option *longopts,
				      const char *arg, int *ambiguous)
{
	size_t len = strcspn(arg, "=");
	const struct option *found = NULL;
	*ambiguous = 0;
	for (const struct option *o = longopts; o && o->name; o++) {
		if (strncmp(o->name, arg, len))
			continue;
		if (strlen(o->name) == len)
			return o;
		if (!found)
			found = o;
		else if (found->has_arg != o->has_arg || found->val != o->val ||
			 found->flag != o->flag)
			*ambiguous = 1;
	}
	return *ambiguous ? NULL : found;
}

int cli_option_error(const char *cmd, int c, char *const *argv,
		     const struct option *longopts)
{
	/* After a long option getopt_long has moved optind past it; after
	 * a short one, past its word only when it was the word's last
	 * letter: optopt tells them apart (0 for an unknown long option,
	 * the letter for a short one).  A long option's word starts with
	 * "--" and, when getopt stopped at it, is argv[optind - 1]. */
	const char *word = optind > 0 ? argv[optind - 1] : NULL;
	int is_long = word && !strncmp(word, "--", 2) && word[2];
	const struct option *lo = NULL;
	int ambiguous = 0;
	if (is_long) {
		lo = find_long(longopts, word + 2, &ambiguous);
		/* An unknown short option in a word after a long one
		 * ("--json -xq"): optopt is the letter, and the long
		 * option before it is no mistake. */
		if (optopt && (!lo || lo->val != optopt))
			is_long = 0;
		else if (optopt && c == '?' &&
			 (lo->has_arg != no_argument || !strchr(word, '=')))
			is_long = 0;
	}
	if (is_long) {
		size_t len = strcspn(word + 2, "=");
		if (c == ':')
			return cli_usage_error(cmd,
					       "option '--%s' requires an "
					       "argument",
					       lo->name);
		if (ambiguous)
			return cli_usage_error(cmd,
					       "option '--%.*s' is ambiguous",
					       (int)len, word + 2);
		if (lo)
			return cli_usage_error(cmd,
					       "option '--%s' doesn't allow an "
					       "argument",
					       lo->name);
		return cli_usage_error(cmd, "unrecognized option '%s'", word);
	}
	if (c == ':')
		return cli_usage_error(
		    cmd, "option requires an argument -- '%c'", optopt);
	if (optopt > 0 && optopt < 256 && isprint(optopt))
		return cli_usage_error(cmd, "invalid option -- '%c'", optopt);
	return cli_usage_error(cmd, "unrecognized option '%s'",
			       word ? word : "");
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;
	fputs("flushkit: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_report(void *arg, int level, const char *op, const char *path, int err)
{
	(void)arg;
	fprintf(stderr, "flushkit: %s%s '%s': %s\n",
		level == FK_REPORT_WARNING ? "warning: " : "", op, path,
		fk_strerror(err));
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_u64_list(const char *s, uint64_t *out, int max, int *nr,
		       uint64_t *dup)
{
	int n = 0;
	if (!s)
		return -EINVAL;
	for (const char *p = s;; p++) {
		size_t len = strcspn(p, ",");
		char word[32];
		uint64_t v;
		if (!len || len >= sizeof(word))
			return -EINVAL;
		memcpy(word, p, len);
		word[len] = 0;
		if (cli_parse_u64(word, &v) || !v)
			return -EINVAL;
		if (n == max)
			return -E2BIG;
		for (int i = 0; i < n; i++)
			if (out[i] == v) {
				*dup = v;
				return -EEXIST;
			}
		out[n++] = v;
		p += len;
		if (!*p)
			break;
	}
	*nr = n;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	if (!s || !*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	uint64_t mult = 1;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'b':
			mult = 1;
			break;
		case 'k':
			mult = 1ull << 10;
			break;
		case 'm':
			mult = 1ull << 20;
			break;
		case 'g':
			mult = 1ull << 30;
			break;
		case 't':
			mult = 1ull << 40;
			break;
		default:
			return -EINVAL;
		}
		const char *rest = end + 1;
		if (mult != 1 && *rest && strcasecmp(rest, "b") &&
		    strcasecmp(rest, "ib"))
			return -EINVAL;
		if (mult == 1 && *rest)
			return -EINVAL;
	}
	if (v && mult > UINT64_MAX / v)
		return -EINVAL;
	*out = v * mult;
	return 0;
}

/* Length of the decimal number at @s (cli_parse_decimal's syntax), 0 if
 * none starts there. */
static size_t decimal_len(const char *s)
{
	size_t n = 0, digits = 0;
	while (isdigit((unsigned char)s[n]))
		n++, digits++;
	if (s[n] == '.') {
		n++;
		while (isdigit((unsigned char)s[n]))
			n++, digits++;
	}
	if (!digits)
		return 0;
	if (s[n] == 'e' || s[n] == 'E') {
		size_t e = n + 1;
		if (s[e] == '+' || s[e] == '-')
			e++;
		if (isdigit((unsigned char)s[e])) {
			while (isdigit((unsigned char)s[e]))
				e++;
			n = e;
		}
	}
	return n;
}

/* The decimal number at @s, *@end past it.  0 or -EINVAL. */
static int parse_decimal_prefix(const char *s, double *out, const char **end)
{
	char num[64], *e;
	size_t n = s ? decimal_len(s) : 0;
	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = 0;
	errno = 0;
	double v = strtod(num, &e);
	if (errno || *e || !isfinite(v))
		return -EINVAL;
	*out = v;
	*end = s + n;
	return 0;
}

int cli_parse_decimal(const char *s, double *out)
{
	const char *end;
	double v;
	if (parse_decimal_prefix(s, &v, &end) || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_duration_ms(const char *s, uint64_t *out_ms)
{
	const char *end;
	double v;
	if (parse_decimal_prefix(s, &v, &end))
		return -EINVAL;
	double mult;
	if (!*end || !strcmp(end, "s"))
		mult = 1000;
	else if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "min"))
		mult = 60000;
	else if (!strcmp(end, "h"))
		mult = 3600000;
	else
		return -EINVAL;
	if (v * mult >= 18446744073709549568.0) /* below 2^64 */
		return -EINVAL;
	*out_ms = (uint64_t)(v * mult + 0.5);
	return 0;
}

int cli_parse_bool(const char *s, int *out)
{
	if (!s)
		return -EINVAL;
	if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1") ||
	    !strcmp(s, "yes"))
		*out = 1;
	else if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0") ||
		 !strcmp(s, "no"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

int cli_parse_sync_io(const char *s)
{
	/* The library's name table; this is the one place the CLI asks. */
	int io = s ? fk_sync_io_parse(s) : -EINVAL;
	return io < 0 ? -EINVAL : io;
}

int cli_parse_jobs(const char *s, uint32_t *out)
{
	uint64_t v;
	if (cli_parse_u64(s, &v) || v < 1 || v > FK_FSYNC_BATCH_MAX_QUEUE_DEPTH)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cli_bad_sync_io(const char *cmd, const char *val)
{
	return cli_bad_value(cmd, "--sync-io", val,
			     "auto, uring, threads or sequential");
}

int cli_bad_jobs(const char *cmd, const char *val)
{
	return cli_bad_value(cmd, "--jobs", val, "1..%u",
			     FK_FSYNC_BATCH_MAX_QUEUE_DEPTH);
}

const char *cli_human_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	int i = 0;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

int cli_progress_wanted(int forced)
{
	return forced || isatty(STDERR_FILENO);
}

int cli_mkdir_parents(const char *path, mode_t mode, const char **failed)
{
	static char prefix[4096];
	size_t n = strlen(path);
	if (!n || n >= sizeof(prefix))
		return n ? -ENAMETOOLONG : -ENOENT;
	memcpy(prefix, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (prefix[i] != '/' && prefix[i] != '\0')
			continue;
		if (prefix[i - 1] == '/')
			continue; /* "a//b" or a trailing slash */
		char c = prefix[i];
		prefix[i] = '\0';
		int err = cli_sys.mkdirat(AT_FDCWD, prefix, mode);
		struct stat st;
		if (err == -EEXIST)
			err = stat(prefix, &st)	    ? -errno
			      : S_ISDIR(st.st_mode) ? 0
						    : -ENOTDIR;
		if (err) {
			if (failed)
				*failed = prefix;
			return err;
		}
		prefix[i] = c;
	}
	return 0;
}
