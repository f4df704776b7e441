/* report_page.c - REPORT.md: the summary, one section per experiment with its chart, findings and links, then what was run (from the .meta files) and how to rerun it. */
#include "report/report_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "io/self.h"
#include "skv.h"

/* Writes n bytes of text for a Markdown table cell: '|' escaped, no line breaks. */
static void cell_n(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '|')
			fputc('\\', f);
		fputc(s[i] == '\n' ? ' ' : s[i], f);
	}
}

static void cell(FILE *f, const char *s) { cell_n(f, s, strlen(s)); }


/* Whether section i's value of key appeared in an earlier section. */
static int meta_seen(const job *j, size_t i, const char *key, const char *v, size_t n)
{
	for (size_t k = 0; k < i; k++) {
		size_t m;
		const char *w = report_meta_view(j->s[k].meta, key, &m);
		if (w && m == n && memcmp(v, w, n) == 0)
			return 1;
	}
	return 0;
}

/* The distinct values of a meta key over the sections, joined by ", ";
 * their count is returned (0: `missing` was written). */
static size_t meta_all(FILE *f, const job *j, const char *key, const char *missing)
{
	size_t shown = 0;
	for (size_t i = 0; i < j->n; i++) {
		size_t n;
		const char *v = report_meta_view(j->s[i].meta, key, &n);
		if (!v || meta_seen(j, i, key, v, n))
			continue;
		if (f) {
			fputs(shown ? ", " : "", f);
			cell_n(f, v, n);
		}
		shown++;
	}
	if (!shown && f)
		fputs(missing, f);
	return shown;
}

/* The first and last run date (ISO 8601 dates order as strings). */
static void write_dates(FILE *f, const job *j)
{
	const char *lo = NULL, *hi = NULL;
	size_t nlo = 0, nhi = 0;
	for (size_t i = 0; i < j->n; i++) {
		size_t n;
		const char *v = report_meta_view(j->s[i].meta, "date_utc", &n);
		if (!v)
			continue;
		if (!lo || strncmp(v, lo, n > nlo ? n : nlo) < 0)
			lo = v, nlo = n;
		if (!hi || strncmp(v, hi, n > nhi ? n : nhi) > 0)
			hi = v, nhi = n;
	}
	if (!lo) {
		fputs("not recorded", f);
		return;
	}
	cell_n(f, lo, nlo);
	if (nlo != nhi || memcmp(lo, hi, nlo) != 0)
		fputs(" to ", f), cell_n(f, hi, nhi);
}

/* The machine the runs name, or the one drawing the page, said so. */
static void write_machine(FILE *f, const job *j)
{
	if (meta_all(NULL, j, "machine", "")) {
		meta_all(f, j, "machine", "");
		return;
	}
	struct utsname u;
	if (uname(&u) == 0) {
		fputs("not recorded by the runs; this page was drawn on ", f);
		cell(f, u.sysname), fputc(' ', f), cell(f, u.release), fputc(' ', f), cell(f, u.machine);
	} else {
		fputs("not recorded", f);
	}
}

/* One row per experiment: seed list, sizes, wall time and the command that
 * reruns it alone, each in full. */
static void write_experiments(FILE *f, const job *j)
{
	fputs("| experiment | seed | points | trials | rows | wall time (s) | to rerun it alone |\n"
	      "|---|---:|---:|---:|---:|---:|---|\n",
	      f);
	for (size_t i = 0; i < j->n; i++) {
		const section *s = &j->s[i];
		size_t trials = 0, n;
		for (size_t p = 0; p < s->r.npoints; p++) {
			size_t k = s->r.point_start[p + 1] - s->r.point_start[p];
			trials = k > trials ? k : trials;
		}
		fprintf(f, "| [%s](#%s) | ", s->name, s->name);
		const char *v = report_meta_view(s->meta, "seed", &n);
		v ? cell_n(f, v, n) : fputs("?", f);
		fprintf(f, " | %zu | %zu | %zu | ", s->r.npoints, trials, s->r.csv.nrows);
		v = report_meta_view(s->meta, "wall_time_s", &n);
		v ? cell_n(f, v, n) : fputs("?", f);
		fputs(" | ", f);
		v = report_meta_view(s->meta, "reproduce", &n);
		if (!v)
			v = report_meta_view(s->meta, "command", &n);
		if (v) {
			fputc('`', f);
			cell_n(f, v, n);
			fputc('`', f);
		} else {
			fputs("not recorded", f);
		}
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

/* How the rerun commands start: the program of the first recorded one
 * (build/skv from a checkout, skv installed, as io/self.c decides when the
 * experiment ran), said once under the table. */
static void rerun_note(FILE *f, const job *j)
{
	size_t n = 0;
	const char *v = NULL;
	for (size_t i = 0; i < j->n && !v; i++)
		v = report_meta_view(j->s[i].meta, "reproduce", &n);
	if (!v)
		return;
	size_t k = strcspn(v, " ");
	k = k < n ? k : n;
	if (k == 3 && strncmp(v, "skv", 3) == 0)
		fputs("The commands start with `skv`, the installed program (`make install`); from a checkout, type "
		      "`build/skv` instead, from its root.\n\n",
		      f);
	else if (k > 4 && strncmp(v + k - 4, "/skv", 4) == 0 && v[0] != '/')
		fprintf(f, "The commands start with `%.*s`, the program built in the checkout, and run from its root; "
			   "once installed (`make install`), type `skv` instead.\n\n",
			(int)k, v);
	else
		fprintf(f, "The commands start with `%.*s`, the program that ran them; an installed skv is typed `skv`.\n\n",
			(int)k, v);
}

/* What was run: versions, machine, dates, and one row per experiment. */
static void write_runs(FILE *f, const job *j)
{
	fputs("## What was run\n\n| | |\n|---|---|\n| command | ", f);
	/* One command (a suite) for every experiment, or one each. */
	size_t ncmd = meta_all(NULL, j, "command", "");
	if (ncmd == 1) {
		fputc('`', f);
		meta_all(f, j, "command", "");
		fputc('`', f);
	} else {
		fputs(ncmd ? "one per experiment (in its .meta file); each experiment's own flags are below"
			   : "not recorded",
		      f);
	}
	fputs(" |\n| skv version | ", f);
	meta_all(f, j, "skv_version", "not recorded");
	fputs(" (git commit ", f);
	meta_all(f, j, "git_commit", "not recorded");
	fputs(") |\n| MPFR version | ", f);
	meta_all(f, j, "mpfr_version", "not recorded");
	fputs(" |\n| compiler | ", f);
	meta_all(f, j, "compiler", "not recorded");
	fputs(" |\n| machine | ", f);
	write_machine(f, j);
	fputs(" |\n| date (UTC) | ", f);
	write_dates(f, j);
	double total = 0;
	size_t timed = 0, n;
	for (size_t i = 0; i < j->n; i++) {
		const char *v = report_meta_view(j->s[i].meta, "wall_time_s", &n);
		if (v) {
			total += strtod(v, NULL);
			timed++;
		}
	}
	if (timed)
		fprintf(f, " |\n| wall time | %.1f s for %zu experiment%s |\n\n", total, timed, timed == 1 ? "" : "s");
	else
		fputs(" |\n| wall time | not recorded |\n\n", f);
	write_experiments(f, j);
	rerun_note(f, j);
}

static void write_header(FILE *f, const job *j)
{
	char prog[4096];
	self_program(prog, sizeof prog);
	fprintf(f, "# skv report\n\n"
		   "<!-- Written by `%s report %s` from the CSV files in this folder: rerun it rather than edit. -->\n\n"
		   "Precision of the split-KV (flash-decoding) attention merge, measured by skv %s against an MPFR "
		   "reference. Every number below is computed from the CSV files next to this page; `%s report %s` "
		   "rewrites the page and redraws every chart from them without rerunning anything. What was run, and "
		   "the command that reruns each experiment, is [at the end](#what-was-run).\n\n",
		prog, j->name, skv_version(), prog, j->name);
}

static void write_section(FILE *f, const job *j, const section *s)
{
	const char *about = s->exp->about;
	fprintf(f, "## %s\n\n%s\n\n", s->name,
		about ? about : "An experiment this version of `skv report` has no specific findings for: the median "
				"error at each of its parameter points.");
	fprintf(f, "![%s: %s](%s.png)\n\n", s->name, s->chart->title, s->name);
	char scripts[4200];
	self_shown_path(scripts, sizeof scripts, j->scripts);
	fprintf(f, "[SVG](%s.svg) · [CSV](%s.csv)%s%s%s%s%s%s · redraw this chart: `gnuplot -c %s%s.gp %s/%s.csv`\n\n",
		s->name, s->name, s->md ? " · [table of every point](" : "", s->md ? s->name : "", s->md ? ".md)" : "",
		s->meta ? " · [meta](" : "", s->meta ? s->name : "", s->meta ? ".meta)" : "", scripts, s->chart->script,
		j->name, s->name);
	fputs("**Findings.** ", f);
	fwrite(s->findings, 1, s->findings_len, f);
	fputc('\n', f);
}

int report_write_page(job *j)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return SKV_ENOMEM;
	write_header(f, j);
	int rc = report_write_summary(f, j);
	for (size_t i = 0; i < j->n && !rc; i++)
		write_section(f, j, &j->s[i]);
	if (!rc)
		write_runs(f, j);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || rc) {
		free(text);
		return rc ? rc : SKV_ENOMEM;
	}
	char *out = report_path(j->dir, "REPORT", ".md");
	rc = out ? report_pending_write(j, out, text, len) : SKV_ENOMEM;
	free(out);
	free(text);
	return rc;
}
