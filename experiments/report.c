/* report.c - the `skv report DIR` command: charts and REPORT.md from the CSV files of a run. */
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "chart.h"
#include "gnuplot.h"
#include "results.h"
#include "skv.h"
#include "summary.h"

/* Sections come in the order of the default suite, unknown experiments
 * after them by name. */
static const char *const suite_order[] = {
	"split-count", "lse-magnitude", "reduction-order", "merge-rule",
	"uneven-splits", "block-size", "systems", "empty-splits",
};
enum { NKNOWN = sizeof suite_order / sizeof *suite_order, ERR = 1024 };

/* One experiment of the folder. */
typedef struct {
	char *name;           /* EXPERIMENT */
	char *csv;            /* DIR/EXPERIMENT.csv */
	skv_results r;
	const skv_chart *chart;
	char *md, *meta;      /* DIR/EXPERIMENT.md and .meta, NULL when absent */
	char *findings;       /* Markdown from skv_summary_write */
	size_t findings_len;
} section;

/* A file written under a temporary name, renamed when everything worked. */
typedef struct {
	char *tmp, *final;
} pending;

typedef struct {
	const char *dir;
	FILE *msg;
	section *s;
	size_t n;
	pending *p;
	size_t np;
	char gnuplot[4096], scripts[4096];
} job;

/* ---------------------------------------------------------------- files */

static char *path_join(const char *dir, const char *name, const char *ext)
{
	size_t k = strlen(dir);
	const char *slash = k && dir[k - 1] == '/' ? "" : "/";
	size_t n = k + strlen(slash) + strlen(name) + strlen(ext) + 1;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s%s%s", dir, slash, name, ext);
	return p;
}

/* The whole file as a NUL-terminated string; NULL when it cannot be read. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[65536];
	size_t k;
	while (m && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, k, m);
	int bad = ferror(f) || !m;
	fclose(f);
	if (m)
		fclose(m);
	if (bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Creates an empty file named final.XXXXXX.tmp and records it for the final
 * rename; its name in *tmp. */
static int pending_new(job *j, const char *final, char **tmp)
{
	size_t n = strlen(final) + 12;
	char *t = malloc(n);
	char *fin = strdup(final);
	pending *p = realloc(j->p, (j->np + 1) * sizeof *p);
	if (!t || !fin || !p) {
		free(t);
		free(fin);
		if (p)
			j->p = p;
		return SKV_ENOMEM;
	}
	j->p = p;
	snprintf(t, n, "%s.XXXXXX.tmp", final);
	int fd = mkstemps(t, 4);
	if (fd < 0) {
		fprintf(j->msg, "skv report: cannot create a file next to %s: %s\n", final, strerror(errno));
		free(t);
		free(fin);
		return SKV_EIO;
	}
	/* mkstemps creates the file 0600; a report is for reading: give it
	 * the mode any new file gets (0666 less the umask). */
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) != 0) {
		fprintf(j->msg, "skv report: cannot set the mode of %s: %s\n", t, strerror(errno));
		close(fd);
		unlink(t);
		free(t);
		free(fin);
		return SKV_EIO;
	}
	close(fd);
	j->p[j->np++] = (pending){t, fin};
	*tmp = t;
	return SKV_OK;
}

/* Writes len bytes to a new pending file for `final`. */
static int pending_write(job *j, const char *final, const char *data, size_t len)
{
	char *tmp;
	int rc = pending_new(j, final, &tmp);
	if (rc)
		return rc;
	FILE *f = fopen(tmp, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
		fprintf(j->msg, "skv report: cannot write %s: %s\n", tmp, strerror(errno));
		return SKV_EIO;
	}
	return SKV_OK;
}

/* Renames the pending files into place (first..np); on failure removes the
 * temporary files that are left. */
static int pending_commit(job *j, size_t first, int ok)
{
	int rc = SKV_OK;
	for (size_t i = first; i < j->np; i++) {
		if (ok && rc == SKV_OK && rename(j->p[i].tmp, j->p[i].final) != 0) {
			fprintf(j->msg, "skv report: cannot rename %s to %s: %s\n", j->p[i].tmp, j->p[i].final,
				strerror(errno));
			rc = SKV_EIO;
		}
		if (!ok || rc)
			unlink(j->p[i].tmp);
		free(j->p[i].tmp);
		free(j->p[i].final);
	}
	j->np = first;
	return rc;
}

/* ----------------------------------------------------------- reading */

static size_t rank_of(const char *name)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (strcmp(name, suite_order[i]) == 0)
			return i;
	return NKNOWN;
}

static int cmp_section(const void *a, const void *b)
{
	const section *x = a, *y = b;
	size_t rx = rank_of(x->name), ry = rank_of(y->name);
	if (rx != ry)
		return (rx > ry) - (rx < ry);
	return strcmp(x->name, y->name);
}

/* Finds the CSV files of DIR (regular, not hidden) in suite order. */
static int list_csv(job *j)
{
	DIR *d = opendir(j->dir);
	if (!d) {
		fprintf(j->msg, "skv report: %s: %s\n", j->dir, strerror(errno));
		return SKV_EIO;
	}
	struct dirent *e;
	int rc = SKV_OK;
	while (!rc && (e = readdir(d))) {
		size_t k = strlen(e->d_name);
		if (e->d_name[0] == '.' || k <= 4 || strcmp(e->d_name + k - 4, ".csv") != 0)
			continue;
		char *name = strndup(e->d_name, k - 4), *csv = path_join(j->dir, name, ".csv");
		section *s = realloc(j->s, (j->n + 1) * sizeof *s);
		struct stat st;
		if (!name || !csv || !s) {
			free(name), free(csv);
			if (s)
				j->s = s;
			rc = SKV_ENOMEM;
			break;
		}
		j->s = s;
		if (stat(csv, &st) != 0 || !S_ISREG(st.st_mode)) {
			free(name), free(csv);
			continue;
		}
		memset(&j->s[j->n], 0, sizeof *j->s);
		j->s[j->n].name = name;
		j->s[j->n].csv = csv;
		j->n++;
	}
	closedir(d);
	if (rc) {
		fprintf(j->msg, "skv report: out of memory\n");
		return rc;
	}
	if (j->n == 0) {
		fprintf(j->msg, "skv report: %s: no EXPERIMENT.csv file to report on (run `skv run` or `skv suite` with --out=%s first)\n",
			j->dir, j->dir);
		return SKV_EINVAL;
	}
	qsort(j->s, j->n, sizeof *j->s, cmp_section);
	return SKV_OK;
}

/* Reads and checks every CSV, and computes every finding, before anything
 * is written: a malformed file stops the report with its file and line. */
static int read_all(job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		section *s = &j->s[i];
		char err[ERR] = "";
		s->chart = skv_chart_for(s->name);
		const char *need[] = {s->chart->x};
		int rc = skv_results_load(&s->r, s->csv, need, s->chart->x ? 1 : 0, err, sizeof err);
		if (rc) {
			fprintf(j->msg, "skv report: %s\n", err);
			return rc;
		}
		char *md = path_join(j->dir, s->name, ".md"), *meta = path_join(j->dir, s->name, ".meta");
		if (!md || !meta) {
			free(md), free(meta);
			return SKV_ENOMEM;
		}
		s->md = slurp(md);
		s->meta = slurp(meta);
		free(md), free(meta);
		FILE *f = open_memstream(&s->findings, &s->findings_len);
		if (!f)
			return SKV_ENOMEM;
		rc = skv_summary_write(f, &s->r, err, sizeof err);
		if (fclose(f) != 0 && !rc)
			rc = SKV_ENOMEM;
		if (rc) {
			fprintf(j->msg, "skv report: %s\n", *err ? err : skv_strerror(rc));
			return rc;
		}
	}
	return SKV_OK;
}

/* ------------------------------------------------------------ charts */

static int draw_all(job *j)
{
	char *plotdir = path_join(j->dir, ".plot", "");
	if (!plotdir)
		return SKV_ENOMEM;
	if (mkdir(plotdir, 0777) != 0 && errno != EEXIST) {
		fprintf(j->msg, "skv report: cannot create %s: %s\n", plotdir, strerror(errno));
		free(plotdir);
		return SKV_EIO;
	}
	int rc = SKV_OK;
	for (size_t i = 0; i < j->n && !rc; i++) {
		section *s = &j->s[i];
		char err[ERR] = "";
		/* The chart data goes into place at once: the script finds it next
		 * to the CSV, and it is derived from the CSV alone. */
		char *data = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&data, &len);
		if (!f) {
			rc = SKV_ENOMEM;
			break;
		}
		rc = skv_chart_write_data(f, &s->r, s->chart, err, sizeof err);
		if (fclose(f) != 0 && !rc)
			rc = SKV_ENOMEM;
		char *dat = path_join(plotdir, s->name, ".gp");
		size_t mark = j->np;
		if (!rc && !dat)
			rc = SKV_ENOMEM;
		if (!rc)
			rc = pending_write(j, dat, data, len);
		if (!rc)
			rc = pending_commit(j, mark, 1);
		else if (*err)
			fprintf(j->msg, "skv report: %s\n", err);
		free(data);
		free(dat);
		char script[4096 + 64];
		snprintf(script, sizeof script, "%s%s.gp", j->scripts, s->chart->script);
		static const char *const terms[] = {"png", "svg"};
		for (size_t t = 0; t < sizeof terms / sizeof *terms && !rc; t++) {
			char ext[8], *out, *tmp;
			snprintf(ext, sizeof ext, ".%s", terms[t]);
			out = path_join(j->dir, s->name, ext);
			rc = out ? pending_new(j, out, &tmp) : SKV_ENOMEM;
			if (!rc && (rc = skv_gnuplot_run(j->gnuplot, script, s->csv, tmp, terms[t], err, sizeof err)))
				fprintf(j->msg, "skv report: %s\n", err);
			free(out);
		}
	}
	free(plotdir);
	return rc;
}

/* ----------------------------------------------------------- REPORT.md */

/* The value of "key: value" in a .meta file, copied into buf; NULL if absent. */
static const char *meta_get(const char *meta, const char *key, char *buf, size_t n)
{
	size_t k = strlen(key);
	for (const char *l = meta; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, k) == 0 && l[k] == ':') {
			const char *v = l + k + 1;
			while (*v == ' ')
				v++;
			size_t len = strcspn(v, "\r\n");
			snprintf(buf, n, "%.*s", (int)len, v);
			return buf;
		}
	}
	return NULL;
}

/* Writes text for a Markdown table cell: '|' escaped, no line breaks. */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

/* The distinct values of a meta key over the sections, joined by ", ". */
static void meta_all(FILE *f, const job *j, const char *key, const char *missing)
{
	size_t shown = 0;
	for (size_t i = 0; i < j->n; i++) {
		char v[1024], w[1024];
		if (!meta_get(j->s[i].meta, key, v, sizeof v))
			continue;
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = meta_get(j->s[k].meta, key, w, sizeof w) && strcmp(v, w) == 0;
		if (seen)
			continue;
		fputs(shown++ ? ", " : "", f);
		cell(f, v);
	}
	if (!shown)
		fputs(missing, f);
}

static void write_header(FILE *f, const job *j)
{
	fprintf(f, "# skv report\n\n"
		   "<!-- Written by `skv report %s` from the CSV files in this folder: rerun it rather than edit. -->\n\n"
		   "Precision of the split-KV (flash-decoding) attention merge, measured by skv %s against an MPFR "
		   "reference. Every number in the findings below is computed from the CSV files next to this page; "
		   "`skv report DIR` rewrites the page and redraws every chart from them without rerunning anything.\n\n",
		j->dir, skv_version());
	fputs("## What was run\n\n| | |\n|---|---|\n| command | ", f);
	/* One command (a suite) for every experiment, or one each. */
	char v[1024], w[1024];
	size_t ncmd = 0;
	for (size_t i = 0; i < j->n; i++) {
		int seen = 0;
		if (!meta_get(j->s[i].meta, "command", v, sizeof v))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = meta_get(j->s[k].meta, "command", w, sizeof w) && strcmp(v, w) == 0;
		ncmd += !seen;
	}
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
	size_t with_machine = 0;
	for (size_t i = 0; i < j->n; i++)
		with_machine += meta_get(j->s[i].meta, "machine", v, sizeof v) != NULL;
	if (with_machine) {
		meta_all(f, j, "machine", "");
	} else {
		/* The .meta files do not say where the data was produced: name the
		 * machine that drew the report, and say so. */
		struct utsname u;
		if (uname(&u) == 0) {
			fputs("not recorded by the runs; this page was drawn on ", f);
			cell(f, u.sysname), fputc(' ', f), cell(f, u.release), fputc(' ', f), cell(f, u.machine);
		} else {
			fputs("not recorded", f);
		}
	}
	fputs(" |\n| date (UTC) | ", f);
	/* ISO 8601 dates order as strings: the first and the last run. */
	char lo[1024] = "", hi[1024] = "";
	for (size_t i = 0; i < j->n; i++)
		if (meta_get(j->s[i].meta, "date_utc", v, sizeof v)) {
			if (!*lo || strcmp(v, lo) < 0)
				snprintf(lo, sizeof lo, "%s", v);
			if (!*hi || strcmp(v, hi) > 0)
				snprintf(hi, sizeof hi, "%s", v);
		}
	if (*lo) {
		cell(f, lo);
		if (strcmp(lo, hi) != 0)
			fputs(" to ", f), cell(f, hi);
	} else {
		fputs("not recorded", f);
	}
	double total = 0;
	size_t timed = 0;
	for (size_t i = 0; i < j->n; i++)
		if (meta_get(j->s[i].meta, "wall_time_s", v, sizeof v)) {
			total += strtod(v, NULL);
			timed++;
		}
	if (timed)
		fprintf(f, " |\n| wall time | %.1f s for %zu experiment%s |\n\n", total, timed, timed == 1 ? "" : "s");
	else
		fputs(" |\n| wall time | not recorded |\n\n", f);
	fputs("| experiment | seed | points | trials | rows | wall time (s) | to rerun it alone |\n|---|---:|---:|---:|---:|---:|---|\n",
	      f);
	for (size_t i = 0; i < j->n; i++) {
		const section *s = &j->s[i];
		char seed[256], t[64], cmd[4096];
		size_t trials = 0;
		for (size_t p = 0; p < s->r.npoints; p++) {
			size_t k = s->r.point_start[p + 1] - s->r.point_start[p];
			trials = k > trials ? k : trials;
		}
		fprintf(f, "| [%s](#%s) | %s | %zu | %zu | %zu | %s | ", s->name, s->name,
			meta_get(s->meta, "seed", seed, sizeof seed) ? seed : "?", s->r.npoints, trials, s->r.csv.nrows,
			meta_get(s->meta, "wall_time_s", t, sizeof t) ? t : "?");
		if (meta_get(s->meta, "reproduce", cmd, sizeof cmd) || meta_get(s->meta, "command", cmd, sizeof cmd)) {
			fputc('`', f);
			cell(f, cmd);
			fputc('`', f);
		} else {
			fputs("not recorded", f);
		}
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

/* The program's aggregated table (EXPERIMENT.md) without its title line,
 * its headings moved below this page's. */
static void write_table(FILE *f, const section *s)
{
	fprintf(f, "<details><summary>Median and max over the trials of each point (%s.md)</summary>\n\n", s->name);
	const char *l = s->md;
	if (l && strncmp(l, "# ", 2) == 0)
		l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "";
	while (l && *l == '\n')
		l++;
	for (; l && *l;) {
		size_t k = strcspn(l, "\n");
		if (*l == '#')
			fputs("###", f);
		fwrite(l, 1, k, f);
		fputc('\n', f);
		l += k + (l[k] == '\n');
	}
	fputs("\n</details>\n\n", f);
}

static void write_section(FILE *f, const job *j, const section *s)
{
	const char *about = skv_summary_about(s->name);
	fprintf(f, "## %s\n\n%s\n\n", s->name,
		about ? about : "An experiment this version of `skv report` has no specific findings for: the median "
				"error at each of its parameter points.");
	fprintf(f, "![%s: %s](%s.png)\n\n", s->name, s->chart->title, s->name);
	fprintf(f, "[SVG](%s.svg) · [CSV](%s.csv)%s%s%s%s%s%s · redraw this chart: `gnuplot -c scripts/%s.gp %s/%s.csv`\n\n",
		s->name, s->name, s->md ? " · [table](" : "", s->md ? s->name : "", s->md ? ".md)" : "",
		s->meta ? " · [meta](" : "", s->meta ? s->name : "", s->meta ? ".meta)" : "", s->chart->script, j->dir,
		s->name);
	fputs("**Findings.** ", f);
	fwrite(s->findings, 1, s->findings_len, f);
	fputc('\n', f);
	if (s->md)
		write_table(f, s);
}

static int write_report(job *j)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return SKV_ENOMEM;
	write_header(f, j);
	for (size_t i = 0; i < j->n; i++)
		write_section(f, j, &j->s[i]);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		free(text);
		return SKV_ENOMEM;
	}
	char *out = path_join(j->dir, "REPORT", ".md");
	int rc = out ? pending_write(j, out, text, len) : SKV_ENOMEM;
	free(out);
	free(text);
	return rc;
}

/* ------------------------------------------------------------ command */

static void job_free(job *j)
{
	pending_commit(j, 0, 0);
	free(j->p);
	for (size_t i = 0; i < j->n; i++) {
		skv_results_free(&j->s[i].r);
		free(j->s[i].name);
		free(j->s[i].csv);
		free(j->s[i].md);
		free(j->s[i].meta);
		free(j->s[i].findings);
	}
	free(j->s);
}

int skv_report_run(const char *dir, FILE *msg)
{
	if (!msg)
		msg = stderr;
	if (!dir || !*dir) {
		fprintf(msg, "skv report: no folder given (usage: skv report DIR)\n");
		return 2;
	}
	/* "reports/default/" is named "reports/default" in messages and links. */
	char *d = strdup(dir);
	if (!d) {
		fprintf(msg, "skv report: out of memory\n");
		return 1;
	}
	for (size_t k = strlen(d); k > 1 && d[k - 1] == '/'; k--)
		d[k - 1] = '\0';
	job j = {.dir = d, .msg = msg};
	int rc = list_csv(&j);
	if (!rc)
		rc = read_all(&j);
	if (!rc && skv_gnuplot_find(j.gnuplot, sizeof j.gnuplot) != SKV_OK) {
		fprintf(msg, "skv report: gnuplot not found on PATH; the charts need it. Install it with: %s\n",
			SKV_GNUPLOT_INSTALL);
		rc = SKV_EIO;
	}
	if (!rc && skv_gnuplot_scripts(j.scripts, sizeof j.scripts) != SKV_OK) {
		fprintf(msg, "skv report: the chart scripts (scripts/common.gp) were not found next to the skv executable "
			     "nor in ./scripts; set SKV_SCRIPTS to their folder\n");
		rc = SKV_EIO;
	}
	if (!rc)
		rc = draw_all(&j);
	if (!rc)
		rc = write_report(&j);
	if (!rc)
		rc = pending_commit(&j, 0, 1);
	if (rc == SKV_ENOMEM)
		fprintf(msg, "skv report: out of memory\n");
	if (!rc)
		fprintf(msg, "skv report: %zu experiment%s, %zu charts (PNG and SVG) -> %s%sREPORT.md\n", j.n,
			j.n == 1 ? "" : "s", j.n, d, strcmp(d, "/") == 0 ? "" : "/");
	job_free(&j);
	free(d);
	return rc ? 1 : 0;
}

int skv_app_report(int argc, char **argv)
{
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: skv report DIR\n\n"
		       "Reads every DIR/EXPERIMENT.csv written by `skv run` or `skv suite` and writes, without\n"
		       "rerunning anything: DIR/EXPERIMENT.png and .svg (gnuplot charts; the aggregated numbers\n"
		       "they draw are in DIR/.plot/EXPERIMENT.gp) and DIR/REPORT.md (what was run, each chart,\n"
		       "its table and findings computed from the CSV). Redraw one chart by hand with\n"
		       "  gnuplot -c scripts/CHART.gp DIR/EXPERIMENT.csv [OUT.png|OUT.svg]\n"
		       "(the script is named in REPORT.md). Needs gnuplot: %s.\n"
		       "exit status: 0 success, 1 a missing or malformed input or a failed write, 2 bad usage.\n",
		       SKV_GNUPLOT_INSTALL);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "skv report: %s (usage: skv report DIR)\n",
			argc < 2 ? "no folder given" : argc > 2 ? "one folder only" : "unknown option");
		return 2;
	}
	return skv_report_run(argv[1], stderr);
}
