/* SPDX-License-Identifier: MIT */
/*
 * html.h - the benchmark floor's HTML output helpers, shared by
 * "flushkit report" and "bench series" (their index.html pages).
 */
#ifndef FK_BENCH_HTML_H
#define FK_BENCH_HTML_H

#include <stdio.h>

/* @s (NULL: nothing) as HTML text or attribute value: & < > " escaped. */
void html_text(FILE *f, const char *s);

/* @s as a relative link (href): everything but [A-Za-z0-9-._/]
 * percent-encoded. */
void html_href(FILE *f, const char *s);

#endif
