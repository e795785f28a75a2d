// SPDX-License-Identifier: MIT
/*
 * html.c - HTML escaping for the benchmark pages (html.h).
 */
#include "html.h"

#include <string.h>

void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

void html_href(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._/", c))
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}
