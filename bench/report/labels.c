// SPDX-License-Identifier: MIT
/*
 * report/labels.c - each run's label (the settings that differ between
 * the runs, "flush=naive") and colour, and the sanitizing of every
 * string that goes into the gnuplot script or the page.
 */
#include "knobs.h"
#include "report.h"
#include "results.h"

#include <string.h>

/* Settings that name files or seeds, not strategies: never in labels. */
int report_label_worthy(const char *key)
{
	return results_label_key(key);
}

/* Keep what is safe in gnuplot single-quoted strings and HTML. */
void report_sanitize(char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || strchr(" =._,:/+-()%#", c)))
			*s = '_';
	}
}

const char *report_value_text(struct json_object *v, char *buf, size_t len)
{
	if (!v)
		return "-";
	if (json_object_is_type(v, json_type_string))
		snprintf(buf, len, "%s", json_object_get_string(v));
	else
		snprintf(
		    buf, len, "%s",
		    json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	return buf;
}

static void base_name(const char *path, char *buf, size_t len)
{
	const char *b = strrchr(path, '/');
	snprintf(buf, len, "%s", b ? b + 1 : path);
	char *dot = strstr(buf, ".jsonl");
	if (dot)
		*dot = '\0';
}

/* Where a differing settings key goes in a label: "flush", then bench
 * tpcb's store knobs (knobs.h) in table order, then everything else. */
static size_t label_rank(const char *key)
{
	if (!strcmp(key, "flush"))
		return 0;
	const struct tpcb_knob *k = tpcb_knob_by_key(key);
	return k ? 1 + (size_t)(k - tpcb_knobs) : TPCB_MAX_KNOBS + 1;
}

void report_make_labels(struct run *runs, size_t nr)
{
	/* keys of any run's settings whose values differ between runs */
	const char *keys[16];
	size_t nr_keys = 0;
	for (size_t i = 0; i < nr && nr > 1; i++) {
		if (!runs[i].d.settings)
			continue;
		json_object_object_foreach(runs[i].d.settings, key, val)
		{
			/* objects and arrays (tpcb's "store") are for the
			 * run's details, not for labels */
			if (!report_label_worthy(key) || nr_keys >= 16 ||
			    !val ||
			    json_object_is_type(val, json_type_object) ||
			    json_object_is_type(val, json_type_array))
				continue;
			int seen = 0;
			for (size_t k = 0; k < nr_keys; k++)
				seen |= !strcmp(keys[k], key);
			if (seen)
				continue;
			char a[128], b[128];
			struct json_object *v0 = NULL, *vj = NULL;
			if (runs[0].d.settings)
				json_object_object_get_ex(runs[0].d.settings,
							  key, &v0);
			report_value_text(v0, a, sizeof(a));
			for (size_t j = 1; j < nr; j++) {
				vj = NULL;
				if (runs[j].d.settings)
					json_object_object_get_ex(
					    runs[j].d.settings, key, &vj);
				if (strcmp(a, report_value_text(vj, b,
								sizeof(b)))) {
					keys[nr_keys++] = key;
					break;
				}
			}
		}
	}
	for (size_t i = 0; i < nr; i++) {
		struct run *r = &runs[i];
		char v[128];
		size_t len = 0;
		r->label[0] = '\0';
		/* "flush" first (it is what the page is usually about), then
		 * the store knobs in their table's order, then the rest as
		 * they came: the first three go into the label */
		for (size_t k = 1; k < nr_keys; k++)
			for (size_t m = k; m > 0 && label_rank(keys[m]) <
							label_rank(keys[m - 1]);
			     m--) {
				const char *t = keys[m];
				keys[m] = keys[m - 1];
				keys[m - 1] = t;
			}
		for (size_t k = 0; k < nr_keys && k < 3; k++) {
			struct json_object *val = NULL;
			if (r->d.settings)
				json_object_object_get_ex(r->d.settings,
							  keys[k], &val);
			len += (size_t)snprintf(
			    r->label + len, sizeof(r->label) - len, "%s%s=%s",
			    len ? " " : "", keys[k],
			    report_value_text(val, v, sizeof(v)));
			if (len >= sizeof(r->label))
				len = sizeof(r->label) - 1;
		}
		if (!len) {
			const char *flush = result_str(r->d.settings, "flush");
			if (flush)
				snprintf(r->label, sizeof(r->label), "flush=%s",
					 flush);
			else
				base_name(r->path, r->label, sizeof(r->label));
		}
		report_sanitize(r->label);
	}
	/* identical labels (repeated runs): number them */
	for (size_t i = 0; i < nr; i++) {
		int dup = 0, idx = 0;
		for (size_t j = 0; j < nr; j++) {
			if (!strcmp(runs[i].label, runs[j].label)) {
				dup++;
				if (j < i)
					idx++;
			}
		}
		if (dup > 1) {
			size_t l = strlen(runs[i].label);
			if (l + 12 < sizeof(runs[i].label))
				snprintf(runs[i].label + l,
					 sizeof(runs[i].label) - l, " #%d",
					 idx + 1);
		}
	}
	/* Colours: naive red, smooth blue, the rest from a palette. */
	static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c",
					"#ff7f0e", "#9467bd", "#8c564b",
					"#e377c2", "#17becf"};
	int reserved = 0;
	for (size_t i = 0; i < nr; i++) {
		const char *flush = result_str(runs[i].d.settings, "flush");
		if (flush && !strcmp(flush, "smooth"))
			runs[i].color = palette[0];
		else if (flush && !strcmp(flush, "naive"))
			runs[i].color = palette[1];
		reserved |= runs[i].color != NULL;
	}
	/* the others: the rest of the palette (all of it if no run is
	 * naive or smooth) */
	size_t next = reserved ? 2 : 0;
	for (size_t i = 0; i < nr; i++)
		if (!runs[i].color)
			runs[i].color = palette[next++ % 8];
}
