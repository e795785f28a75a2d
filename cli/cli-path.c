// SPDX-License-Identifier: MIT
/*
 * cli-path.c - show file names safely: in messages on a terminal and in
 * JSON output.
 *
 * A file name is any bytes but '/' and NUL: it can hold a newline (a
 * message that spans lines and looks like two), escape sequences, or
 * bytes that are not UTF-8 (which JSON cannot carry).
 *
 * Interface routines (see cli.h): cli_path_quote (C-style escapes for
 * messages), cli_path_utf8 (valid UTF-8 for JSON, U+FFFD for bad bytes),
 * cli_report_path (an fk_report_fn printing quoted paths).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at @s (1-4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	unsigned cp = c & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

char *cli_path_quote(const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	size_t len = strlen(path);
	char *out = malloc(len * 4 + 1); /* worst case "\xff" each */
	if (!out)
		return NULL;
	char *o = out;
	static const char hex[] = "0123456789abcdef";
	while (*s) {
		size_t n = utf8_len(s);
		if (n > 1) {
			/* Printable or not, a valid multi-byte character is
			 * shown as is, except C1 controls (U+0080-U+009F). */
			if (!(n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
				memcpy(o, s, n);
				o += n;
				s += n;
				continue;
			}
		}
		unsigned char c = *s++;
		if (n == 1 && c >= 0x20 && c != 0x7f && c != '\\') {
			*o++ = (char)c;
			continue;
		}
		*o++ = '\\';
		switch (c) {
		case '\\':
			*o++ = '\\';
			break;
		case '\n':
			*o++ = 'n';
			break;
		case '\t':
			*o++ = 't';
			break;
		case '\r':
			*o++ = 'r';
			break;
		default:
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
		if (n == 2 && c == 0xc2) {
			/* The second byte of a C1 control. */
			c = *s++;
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = 0;
	return out;
}

char *cli_path_utf8(const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	size_t len = strlen(path);
	char *out = malloc(len * 3 + 1); /* U+FFFD is 3 bytes */
	if (!out)
		return NULL;
	char *o = out;
	while (*s) {
		size_t n = utf8_len(s);
		if (n) {
			memcpy(o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
		}
	}
	*o = 0;
	return out;
}

void cli_report_path(void *arg, int level, const char *op, const char *path,
		     int err)
{
	char *q = path ? cli_path_quote(path) : NULL;
	cli_report(arg, level, op, q ? q : (path ? "?" : ""), err);
	free(q);
}
