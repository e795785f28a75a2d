// SPDX-License-Identifier: MIT
/*
 * table.c - "flushkit reproduce": reading the result files, the
 * tables (table.md and table.html: the seed's figures beside ours, the
 * markers, the count of seed effects shown) and the report.
 */
#include "reproduce.h"

/* ---- reading result files -------------------------------------------- */

void vals_add(struct vals *s, double v)
{
	if (s->n < MAX_VALS && isfinite(v))
		s->v[s->n++] = v;
}

static void worst_add(struct collect *c, const struct result_progress *p)
{
	double tps = p->tps;
	if (!isfinite(tps))
		return;
	int n = c->nworst, i;
	if (n == 5 && tps >= c->worst_tps[4])
		return;
	if (n < 5)
		n = ++c->nworst;
	for (i = n - 1; i > 0 && c->worst_tps[i - 1] > tps; i--) {
		c->worst_tps[i] = c->worst_tps[i - 1];
		c->worst_t[i] = c->worst_t[i - 1];
		c->worst_lat[i] = c->worst_lat[i - 1];
		c->worst_sd[i] = c->worst_sd[i - 1];
	}
	c->worst_tps[i] = tps;
	c->worst_t[i] = p->t_s;
	c->worst_lat[i] = p->lat_avg_ms;
	c->worst_sd[i] = p->lat_stddev_ms;
}

/* One result file (reader.h) through @c. */
static void collect_run(struct collect *c, const struct result_run *r)
{
	char why[256];
	if (c->fs) {
		const char *fs = result_str(r->settings, "fs");
		const char *m = result_str(r->settings, "method");
		if (!fs || !m || strcmp(fs, c->fs) || strcmp(m, c->method) ||
		    (int)result_num(r->settings, "fs_count", 0) != c->count)
			return;
	}
	if (!c->key) { /* the worst progress seconds */
		for (size_t i = 0; i < r->nr_prog; i++)
			worst_add(c, &r->prog[i]);
		return;
	}
	if (!strcmp(c->type, "summary")) {
		if (!result_run_refused(r, why, sizeof(why)))
			vals_add(c->out, result_num(r->summary, c->key, NAN));
		return;
	}
	size_t n = r->runs ? json_object_array_length(r->runs) : 0;
	for (size_t i = 0; i < n; i++)
		vals_add(c->out,
			 result_num(json_object_array_get_idx(r->runs, i),
				    c->key, NAN));
}

/* Every result file in @dir through @c. */
void collect_dir(const char *dir, struct collect *c)
{
	char **names;
	size_t nr;
	if (results_list(dir, &names, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		char path[4096];
		struct result_run r;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!result_run_load(path, &r))
			collect_run(c, &r);
		result_run_release(&r);
	}
	results_list_free(names, nr);
}

void summary_vals(const char *dir, const char *key, struct vals *out)
{
	struct collect c;
	memset(&c, 0, sizeof(c));
	memset(out, 0, sizeof(*out));
	c.type = "summary";
	c.key = key;
	c.out = out;
	collect_dir(dir, &c);
}

/* ---- the tables ------------------------------------------------------ */

/* Open the seed's table.md and table.html with fopen @mode ("we" a new
 * table, "ae" one more after it) and write @title's heading. */
int table_open_mode(struct ctx *c, struct table *t, const char *title,
		    const char *cmd_a, const char *cmd_b, const char *mode)
{
	char path[2200];
	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/table.md", c->seed_dir);
	t->md = fopen(path, mode);
	snprintf(path, sizeof(path), "%s/table.html", c->seed_dir);
	t->html = fopen(path, mode);
	if (!t->md || !t->html) {
		int e = errno;
		cli_error("create '%s': %s", path, strerror(e));
		if (t->md)
			fclose(t->md);
		if (t->html)
			fclose(t->html);
		return -e;
	}
	char dev[256];
	disk_profile_describe(&c->prof, dev, sizeof(dev));
	fprintf(t->md, "%s### %s\n\nDevice: %s.  A: %s.  B: %s.\n\n",
		mode[0] == 'a' ? "\n" : "", title, dev, cmd_a, cmd_b);
	fprintf(t->html,
		"<h2>%s</h2>\n<p>Device: %s.  A: <code>%s"
		"</code>.  B: <code>%s</code>.</p>\n",
		title, dev, cmd_a, cmd_b);
	return 0;
}

int table_open(struct ctx *c, struct table *t, const char *title,
	       const char *cmd_a, const char *cmd_b)
{
	return table_open_mode(c, t, title, cmd_a, cmd_b, "we");
}

void table_head(struct table *t, const char *seed_a, const char *seed_b)
{
	fprintf(t->md,
		"| metric | seed %s | seed %s | seed's effect | ours A | "
		"ours B | ours (2σ) | shown | detectable (2σ) | "
		"runs for the seed's effect |\n"
		"|---|---|---|---|---|---|---|---|---|---|\n",
		seed_a, seed_b);
	fprintf(t->html,
		"<table border=\"1\" cellpadding=\"3\"><tr><th>metric</th>"
		"<th>seed %s</th><th>seed %s</th><th>seed's effect</th>"
		"<th>ours A</th><th>ours B</th><th>ours (2&sigma;)</th>"
		"<th>shown</th><th>detectable (2&sigma;)</th>"
		"<th>runs for the seed's effect</th></tr>\n",
		seed_a, seed_b);
}

void table_end(struct table *t)
{
	fprintf(t->md, "\n");
	fprintf(t->html, "</table>\n");
}

static void fmt_side(const struct fk_stats_summary *s, char *buf, size_t len)
{
	if (!s->n)
		snprintf(buf, len, "(no runs)");
	else if (s->n == 1)
		snprintf(buf, len, "%.4g (n=1)", s->mean);
	else
		snprintf(buf, len, "%.4g ± %.2g (n=%zu)", s->mean, s->stddev,
			 (size_t)s->n);
}

/* The seed's figure @s as a number: its first token ("7873859",
 * "4.189 ± 0.052" -> 4.189); NaN for a range ("306-632"), "—", "many". */
static double seed_number(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || (*end && *end != ' '))
		return NAN;
	return v;
}

/*
 * The power of a comparison: the smallest difference of the means that
 * the 2σ rule could call (the threshold of fk_stats_compare), and the
 * runs a side that would bring that threshold down to @effect (in the
 * values' units) at the spread measured: with n runs a side,
 * 2*sqrt((sA^2 + sB^2)/n) <= |effect| gives n >= 4 (sA^2 + sB^2) /
 * effect^2.  0 when the spread is unknown (a side with under 2 runs) or
 * @effect is 0 or not a number.  Sizing a run from the spread of a
 * first sample alone (not from its difference) is the "internal pilot"
 * of Wittes and Brittain (Stat. Med. 9, 1990): it leaves the test's
 * false-positive rate as it was.
 */
unsigned runs_for_effect(const struct vals *a, const struct vals *b,
			 double effect)
{
	struct fk_stats_summary sa, sb;
	fk_stats_summarize(a->v, a->n, &sa);
	fk_stats_summarize(b->v, b->n, &sb);
	if (sa.n < 2 || sb.n < 2 || !isfinite(effect) || effect == 0)
		return 0;
	double var = sa.stddev * sa.stddev + sb.stddev * sb.stddev;
	double n = ceil(4 * var / (effect * effect));
	return n < 2 ? 2 : n > 1e6 ? 1000000 : (unsigned)n;
}

/* The two power cells of a row (see runs_for_effect): "±THR (P% of
 * A)" and, where the seed published both figures as numbers and a
 * direction, "seed E%: N a side". */
static void fmt_power(const struct fk_stats_summary *sa,
		      const struct fk_stats_summary *sb, double thr,
		      const char *seed_a, const char *seed_b, char seed_dir,
		      const struct vals *a, const struct vals *b, char *det,
		      size_t dlen, char *need, size_t nlen)
{
	snprintf(det, dlen, "—");
	snprintf(need, nlen, "—");
	if (!isfinite(thr))
		return;
	if (sa->mean != 0)
		snprintf(det, dlen, "±%.3g (%.1f%%)", thr,
			 100 * thr / fabs(sa->mean));
	else
		snprintf(det, dlen, "±%.3g", thr);
	double x = seed_number(seed_a), y = seed_number(seed_b);
	if ((seed_dir != '+' && seed_dir != '-') || !isfinite(x) ||
	    !isfinite(y) || x == 0 || sa->mean == 0)
		return;
	double rel = (y - x) / x; /* the seed's effect, as a share */
	unsigned n = runs_for_effect(a, b, rel * sa->mean);
	if (n)
		snprintf(need, nlen, "seed %+.0f%%: %u a side (ran %zu)",
			 100 * rel, n, (size_t)(sa->n < sb->n ? sa->n : sb->n));
}

/* One row: the seed's two figures (text, "—" if not published), the
 * seed's direction (+, -, 0; '?' none), our two sides, and the power of
 * our comparison (fmt_power).  Returns our marker. */
int table_row(struct table *t, const char *label, const char *seed_a,
	      const char *seed_b, char seed_dir, const struct vals *a,
	      const struct vals *b)
{
	struct fk_stats_summary sa, sb;
	fk_stats_summarize(a->v, a->n, &sa);
	fk_stats_summarize(b->v, b->n, &sb);
	double thr = NAN;
	int m = a->n && b->n ? fk_stats_compare(&sa, &sb, &thr) : '?';
	const char *shown = "—";
	if (seed_dir == '+' || seed_dir == '-') {
		t->with_effect++;
		shown = m == '?'	? "? (too few runs)"
			: m == seed_dir ? "yes"
					: "no";
		if (m == seed_dir)
			t->shown++;
	}
	char ta[96], tb[96], det[64], need[96];
	fmt_side(&sa, ta, sizeof(ta));
	fmt_side(&sb, tb, sizeof(tb));
	fmt_power(&sa, &sb, thr, seed_a, seed_b, seed_dir, a, b, det,
		  sizeof(det), need, sizeof(need));
	char dir[2] = {seed_dir == '?' ? '\0' : seed_dir, 0};
	fprintf(t->md, "| %s | %s | %s | %s | %s | %s | %c | %s | %s | %s |\n",
		label, seed_a, seed_b, dir[0] ? dir : "—", ta, tb, m, shown,
		det, need);
	fprintf(t->html,
		"<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
		"<td>%s</td><td>%c</td><td>%s</td><td>%s</td><td>%s</td>"
		"</tr>\n",
		label, seed_a, seed_b, dir[0] ? dir : "&mdash;", ta, tb, m,
		shown, det, need);
	t->rows++;
	return m;
}

void table_note(struct table *t, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(t->md, "%s\n", buf);
	fprintf(t->html, "<pre>%s</pre>\n", buf);
}

/* The count of seed effects shown, by @who (NULL: ours), and close. */
void table_close_as(struct table *t, const char *who)
{
	table_note(t,
		   "\nPower: \"detectable (2σ)\" is the smallest difference "
		   "of the means each row could call at 2σ with its runs and "
		   "spread (2*sqrt(sA²/nA + sB²/nB), and as a share of A); "
		   "\"runs for the seed's effect\" the runs a side that would "
		   "bring it down to the seed's relative effect at this "
		   "spread.");
	table_note(t, "\nSeed effects shown%s%s at 2σ: %d of %d.",
		   who ? " by " : "", who ? who : "", t->shown, t->with_effect);
	fclose(t->md);
	fclose(t->html);
	printf("  seed effects shown%s%s at 2 sigma: %d of %d\n",
	       who ? " by " : "", who ? who : "", t->shown, t->with_effect);
}

void table_close(struct table *t)
{
	table_close_as(t, NULL);
}

/*
 * "flushkit report" of the result files in the directories @dirs.  0 when
 * it ran (a report that failed is printed, and the seed's tables stand)
 * or we were told to stop; -errno when it could not run at all (its
 * argument list could not be built: no report of a partial file list).
 */
int make_report(struct ctx *c, const char *const *dirs, int nr)
{
	struct child_argv a = CHILD_ARGV_INIT;
	child_argv_add(&a, "flushkit");
	child_argv_add(&a, "report");
	for (int i = 0; i < nr; i++) {
		DIR *d = opendir(dirs[i]);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			size_t l = strlen(e->d_name);
			if (l > 6 && !strcmp(e->d_name + l - 6, ".jsonl"))
				child_argv_add(&a, "%s/%s", dirs[i], e->d_name);
		}
		closedir(d);
	}
	child_argv_add(&a, "-o");
	child_argv_add(&a, "%s/report", c->seed_dir);
	int rc = run_args(c, "report.log", &a);
	return rc < 0 && rc != -EINTR ? rc : 0;
}

/* ---- the PostgreSQL peer --------------------------------------------- */

/*
 * A private PostgreSQL 15 cluster on a seed's disk.  initdb as user
 * postgres (runuser(1)) into a directory of the disk; the server listens
 * on a unix socket in the run directory only (RUN/pgsock-NAME: no TCP
 * port, so two runs never meet); stopped ("pg_ctl stop -m fast") and its
 * directories removed when the seed ends, on an error and after a stop
 * signal (pg_release; pg_stop_all before a disk is destroyed and at
 * exit).  Before initdb the data directory is named in the record
 * RUN/NAME.pgcluster, so that the server of a run killed with SIGKILL
 * is found: pg_cleanup_stale, before the disks' own cleanup at the next
 * start and in --cleanup, stops the server of every record in a run
 * directory whose lock nobody holds (immediate shutdown, SIGQUIT, then
 * SIGKILL), once its working directory shows it is that cluster's.
 * PostgreSQL's programs get none of our descriptors (CHILD_CLOSEFDS): a
 * server holding the run lock would make a killed run look alive for as
 * long as the server runs.  PG_BIN (environment) overrides
 * /usr/lib/postgresql/15/bin, as in bench/peers/tpcb.sh.
 */
