/* report.c - the `skv report DIR` command: charts and REPORT.md from the CSV files of a run. */
#define _GNU_SOURCE /* asprintf */
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <unistd.h>

#include "io/io.h"
#include "report/chart.h"
#include "report/gnuplot.h"
#include "results/results.h"
#include "skv.h"
#include "catalog/catalog.h"

/* One experiment of the folder. */
typedef struct {
	char *name;           /* EXPERIMENT */
	char *csv;            /* DIR/EXPERIMENT.csv */
	results r;
	const experiment *exp; /* its catalog entry (exp_generic when unknown) */
	const chart_spec *chart;
	char *md, *meta;      /* DIR/EXPERIMENT.md and .meta, NULL when absent */
	char *findings;       /* Markdown from the experiment's narrator */
	size_t findings_len;
} section;

/* A file written under a temporary name, renamed when everything worked. */
typedef struct {
	char *tmp, *final;
} pending;

typedef struct {
	const char *dir;  /* where the files are */
	const char *name; /* the folder as the report and its messages name it */
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

/* Largest .md and .meta files read: far above what skv writes (a .md is a
 * few hundred bytes a point), so a wrong file is refused, not loaded. */
#define MD_MAX_BYTES ((size_t)64 << 20)
#define META_MAX_BYTES ((size_t)1 << 20)

/* The whole file as a NUL-terminated string. NULL with *why == NULL when
 * it does not exist; NULL with *why set when it exists but cannot be used:
 * not a regular file (opened without blocking, so a FIFO is refused rather
 * than waited on), larger than max, or unreadable. */
static char *slurp(const char *path, size_t max, const char **why)
{
	*why = NULL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			*why = strerror(errno);
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
		*why = fstat(fd, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file"
											: "larger than skv ever writes";
		close(fd);
		return NULL;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	ssize_t k = 0;
	while (buf && n < (size_t)st.st_size && (k = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)k;
	close(fd);
	if (!buf || k < 0) {
		*why = buf ? strerror(errno) : "out of memory";
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* Creates an empty temporary next to final (hidden, unique, registered for
 * removal on a signal) and records it for the final rename; its name in
 * *tmp. */
static int pending_new(job *j, const char *final, char **tmp)
{
	char *fin = strdup(final), *t = NULL;
	pending *p = realloc(j->p, (j->np + 1) * sizeof *p);
	if (p)
		j->p = p;
	if (!fin || !p) {
		free(fin);
		return SKV_ENOMEM;
	}
	message e = {NULL};
	if (temp_create(&t, final, &e) != SKV_OK) {
		fprintf(j->msg, "skv report: %s\n", msg_text(&e) + 5);
		msg_free(&e);
		free(fin);
		return SKV_EIO;
	}
	j->p[j->np++] = (pending){t, fin};
	*tmp = t;
	return SKV_OK;
}

/* Why writing into dir failed: ENOSPC when the file system is full, else
 * the error itself. */
static const char *write_error(const char *dir, int err)
{
	struct statvfs v;
	if (statvfs(dir, &v) == 0 && v.f_bavail == 0)
		return strerror(ENOSPC);
	return strerror(err);
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
		fprintf(j->msg, "skv report: cannot write %s: %s\n", final, write_error(j->dir, errno));
		return SKV_EIO;
	}
	return SKV_OK;
}

/* Renames the pending files first..np into place together (on disk, with
 * no signal between the renames), or, when !ok, removes them. */
static int pending_commit(job *j, size_t first, int ok)
{
	int rc = SKV_OK;
	if (ok && j->np > first) {
		char **tmp = malloc((j->np - first) * sizeof *tmp), **fin = malloc((j->np - first) * sizeof *fin);
		message e = {NULL};
		for (size_t i = first; tmp && fin && i < j->np; i++) {
			tmp[i - first] = j->p[i].tmp;
			fin[i - first] = j->p[i].final;
		}
		if (!tmp || !fin)
			rc = SKV_ENOMEM;
		else if (outdir_publish(tmp, fin, j->np - first, &e) != SKV_OK) {
			fprintf(j->msg, "skv report: %s\n", msg_text(&e) + 5);
			rc = SKV_EIO;
		}
		msg_free(&e);
		free(tmp);
		free(fin);
	}
	for (size_t i = first; i < j->np; i++) {
		if (!ok || rc)
			temp_discard(j->p[i].tmp);
		free(j->p[i].tmp);
		free(j->p[i].final);
	}
	j->np = first;
	return rc;
}

/* ----------------------------------------------------------- reading */

/* Sections come in the registry's order (the default suite's), unknown
 * experiments after them by name. */
static int cmp_section(const void *a, const void *b)
{
	const section *x = a, *y = b;
	size_t rx = experiment_rank(x->name), ry = experiment_rank(y->name);
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
			/* said, not silently dropped */
			fprintf(j->msg, "skv report: note: skipped %s/%s: %s\n", j->name, e->d_name,
				lstat(csv, &st) != 0 ? strerror(errno)
				: S_ISLNK(st.st_mode) ? "a link to nothing readable"
				: S_ISDIR(st.st_mode) ? "a folder, not a file" : "not a regular file");
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
			j->name, j->name);
		return SKV_EINVAL;
	}
	qsort(j->s, j->n, sizeof *j->s, cmp_section);
	return SKV_OK;
}

/* The value of "key: value" in a .meta file, copied into a new string;
 * NULL if absent. */
static char *meta_dup(const char *meta, const char *key)
{
	size_t k = strlen(key);
	for (const char *l = meta; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, k) == 0 && l[k] == ':') {
			const char *v = l + k + 1;
			while (*v == ' ')
				v++;
			return strndup(v, strcspn(v, "\r\n"));
		}
	return NULL;
}

/* Whether "NAME.EXT, N bytes, fnv1a64 H" (a .meta's file record) describes
 * a file of `bytes` bytes with checksum fnv. */
static int record_matches(const char *rec, size_t bytes, uint64_t fnv)
{
	unsigned long long b, h;
	const char *c = rec ? strchr(rec, ',') : NULL;
	return c && sscanf(c, ", %llu bytes, fnv1a64 %llx", &b, &h) == 2 && b == bytes && h == fnv;
}

/* The CSV against its own contents and its .meta: the experiment it names
 * (its `experiment` column, the .meta's experiment line), its row count and
 * checksum, and the .md's. A renamed, cut or mixed set is refused, naming
 * the file: the report would otherwise narrate another experiment's data. */
static int cross_check(job *j, const section *s)
{
	const csv_table *t = &s->r.csv;
	size_t col;
	if (csv_find(t, "experiment", &col) == SKV_OK)
		for (size_t i = 0; i < t->nrows; i++)
			if (strcmp(csv_get(t, i, col), s->name) != 0) {
				fprintf(j->msg, "skv report: %s/%s.csv:%zu: the row is of experiment '%s', not %s (a renamed file?)\n",
					j->name, s->name, csv_line(t, i), csv_get(t, i, col), s->name);
				return SKV_EINVAL;
			}
	if (!s->meta)
		return SKV_OK;
	char *exp = meta_dup(s->meta, "experiment"), *rows = meta_dup(s->meta, "rows");
	char *csv = meta_dup(s->meta, "csv_file"), *md = meta_dup(s->meta, "md_file");
	const char *bad = NULL;
	char why[256] = "";
	if (exp && strcmp(exp, s->name) != 0)
		snprintf(why, sizeof why, "the .meta is of experiment '%.64s'", exp), bad = "meta";
	else if (rows && strtoull(rows, NULL, 10) != t->nrows)
		snprintf(why, sizeof why, "%zu rows, the .meta says %.32s", t->nrows, rows), bad = "csv";
	else if (csv && !record_matches(csv, t->bytes, t->fnv))
		snprintf(why, sizeof why, "its size or checksum is not the one the .meta records"), bad = "csv";
	else if (md && s->md && !record_matches(md, strlen(s->md), csv_fnv1a64(CSV_FNV_INIT, s->md, strlen(s->md))))
		snprintf(why, sizeof why, "the .md's size or checksum is not the one the .meta records"), bad = "md";
	if (bad)
		fprintf(j->msg, "skv report: %s/%s.%s does not match %s.meta: %s (a cut, renamed or mixed set of files? rerun "
				"the experiment)\n",
			j->name, s->name, strcmp(bad, "meta") ? bad : "csv", s->name, why);
	free(exp), free(rows), free(csv), free(md);
	return bad ? SKV_EINVAL : SKV_OK;
}

/* The .md and .meta of a section, when present and usable. */
static int read_sidecars(job *j, section *s)
{
	static const char *const ext[] = {".md", ".meta"};
	char **dst[] = {&s->md, &s->meta};
	const size_t max[] = {MD_MAX_BYTES, META_MAX_BYTES};
	for (int k = 0; k < 2; k++) {
		char *path = path_join(j->dir, s->name, ext[k]);
		const char *why = NULL;
		if (!path)
			return SKV_ENOMEM;
		*dst[k] = slurp(path, max[k], &why);
		free(path);
		if (why) {
			fprintf(j->msg, "skv report: cannot read %s/%s%s: %s\n", j->name, s->name, ext[k], why);
			return SKV_EIO;
		}
	}
	return SKV_OK;
}

/* Says what failed (the message, else the status) and frees the message. */
static int report_fail(job *j, int rc, message *e)
{
	fprintf(j->msg, "skv report: %s\n", *msg_text(e) ? msg_text(e) : skv_strerror(rc));
	msg_free(e);
	return rc;
}

/* Reads and checks every CSV, and computes every finding, before anything
 * is written: a malformed file stops the report with its file and line. */
static int read_all(job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		section *s = &j->s[i];
		message e = {NULL};
		s->exp = experiment_find(s->name);
		if (!s->exp)
			s->exp = &exp_generic;
		s->chart = &s->exp->chart;
		const char *need[] = {s->chart->x};
		char *shown = path_join(j->name, s->name, ".csv");
		int rc = shown ? results_load(&s->r, s->csv, shown, need, s->chart->x ? 1 : 0, &e) : SKV_ENOMEM;
		free(shown);
		if (rc)
			return report_fail(j, rc, &e);
		if ((rc = read_sidecars(j, s)) != SKV_OK || (rc = cross_check(j, s)) != SKV_OK)
			return rc;
		FILE *f = open_memstream(&s->findings, &s->findings_len);
		if (!f)
			return SKV_ENOMEM;
		rc = catalog_narrate(f, &s->r, &e);
		if (fclose(f) != 0 && !rc)
			rc = SKV_ENOMEM;
		if (rc)
			return report_fail(j, rc, &e);
		msg_free(&e);
	}
	return SKV_OK;
}

/* ------------------------------------------------------------ charts */

static int draw_all(job *j)
{
	char *plotdir = path_join(j->dir, ".plot", "");
	if (!plotdir)
		return SKV_ENOMEM;
	int made = mkdir(plotdir, 0777) == 0;
	if (made)
		stage_track(plotdir, 1);
	if (!made && errno != EEXIST) {
		fprintf(j->msg, "skv report: cannot create %s: %s\n", plotdir, strerror(errno));
		free(plotdir);
		return SKV_EIO;
	}
	int rc = SKV_OK;
	for (size_t i = 0; i < j->n && !rc; i++) {
		section *s = &j->s[i];
		message e = {NULL};
		/* The chart data goes into place at once: the script finds it next
		 * to the CSV, and it is derived from the CSV alone. */
		char *data = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&data, &len);
		if (!f) {
			rc = SKV_ENOMEM;
			break;
		}
		rc = chart_write_data(f, &s->r, s->chart, &e);
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
		else if (*msg_text(&e))
			fprintf(j->msg, "skv report: %s\n", msg_text(&e));
		msg_free(&e);
		free(data);
		free(dat);
		char script[4096 + 64];
		snprintf(script, sizeof script, "%s%s.gp", j->scripts, s->chart->script);
		static const char *const terms[] = {"png", "svg"};
		char *warned = NULL;
		for (size_t t = 0; t < sizeof terms / sizeof *terms && !rc; t++) {
			char ext[8], *out, *tmp, *shown, *w = NULL;
			snprintf(ext, sizeof ext, ".%s", terms[t]);
			out = path_join(j->dir, s->name, ext);
			shown = path_join(j->name, s->name, ext);
			rc = out && shown ? pending_new(j, out, &tmp) : SKV_ENOMEM;
			if (!rc && (rc = gnuplot_run(j->gnuplot, script, s->csv, tmp, terms[t], shown, &w, &e)))
				fprintf(j->msg, "skv report: %s\n", msg_text(&e));
			msg_free(&e);
			if (w && !warned)
				warned = w;
			else
				free(w);
			free(out);
			free(shown);
		}
		/* gnuplot's own messages go to a log beside the chart data, said in
		 * one line: never onto the terminal unasked. */
		char *log = warned ? path_join(plotdir, s->name, ".log") : NULL;
		if (!rc && warned && log && (rc = pending_write(j, log, warned, strlen(warned))) == SKV_OK)
			fprintf(j->msg, "skv report: note: gnuplot warned while drawing %s; its messages are in %s/.plot/%s.log\n",
				s->name, j->name, s->name);
		free(log);
		free(warned);
	}
	free(plotdir);
	return rc;
}

/* ----------------------------------------------------------- REPORT.md */

/* The value of "key: value" in a .meta file: a view into the text (its
 * length in *n; it ends at the line's end), NULL if absent. Views, not
 * copies: a value is never cut, however long (a seed list, a command). */
static const char *meta_view(const char *meta, const char *key, size_t *n)
{
	size_t k = strlen(key);
	for (const char *l = meta; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, k) == 0 && l[k] == ':') {
			const char *v = l + k + 1;
			while (*v == ' ')
				v++;
			*n = strcspn(v, "\r\n");
			return v;
		}
	return NULL;
}

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
		const char *w = meta_view(j->s[k].meta, key, &m);
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
		const char *v = meta_view(j->s[i].meta, key, &n);
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
		const char *v = meta_view(j->s[i].meta, "date_utc", &n);
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
		const char *v = meta_view(s->meta, "seed", &n);
		v ? cell_n(f, v, n) : fputs("?", f);
		fprintf(f, " | %zu | %zu | %zu | ", s->r.npoints, trials, s->r.csv.nrows);
		v = meta_view(s->meta, "wall_time_s", &n);
		v ? cell_n(f, v, n) : fputs("?", f);
		fputs(" | ", f);
		v = meta_view(s->meta, "reproduce", &n);
		if (!v)
			v = meta_view(s->meta, "command", &n);
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

static void write_header(FILE *f, const job *j)
{
	fprintf(f, "# skv report\n\n"
		   "<!-- Written by `skv report %s` from the CSV files in this folder: rerun it rather than edit. -->\n\n"
		   "Precision of the split-KV (flash-decoding) attention merge, measured by skv %s against an MPFR "
		   "reference. Every number in the findings below is computed from the CSV files next to this page; "
		   "`skv report DIR` rewrites the page and redraws every chart from them without rerunning anything.\n\n",
		j->name, skv_version());
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
		const char *v = meta_view(j->s[i].meta, "wall_time_s", &n);
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
	const char *about = s->exp->about;
	fprintf(f, "## %s\n\n%s\n\n", s->name,
		about ? about : "An experiment this version of `skv report` has no specific findings for: the median "
				"error at each of its parameter points.");
	fprintf(f, "![%s: %s](%s.png)\n\n", s->name, s->chart->title, s->name);
	fprintf(f, "[SVG](%s.svg) · [CSV](%s.csv)%s%s%s%s%s%s · redraw this chart: `gnuplot -c scripts/%s.gp %s/%s.csv`\n\n",
		s->name, s->name, s->md ? " · [table](" : "", s->md ? s->name : "", s->md ? ".md)" : "",
		s->meta ? " · [meta](" : "", s->meta ? s->name : "", s->meta ? ".meta)" : "", s->chart->script, j->name,
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
		results_free(&j->s[i].r);
		free(j->s[i].name);
		free(j->s[i].csv);
		free(j->s[i].md);
		free(j->s[i].meta);
		free(j->s[i].findings);
	}
	free(j->s);
}

/* "reports/default/" is named "reports/default" in messages and links. */
static char *strip_slashes(const char *dir)
{
	char *d = strdup(dir);
	for (size_t k = d ? strlen(d) : 0; k > 1 && d[k - 1] == '/'; k--)
		d[k - 1] = '\0';
	return d;
}

int report_run(const char *dir, FILE *msg) { return report_run_as(dir, NULL, msg); }

int report_run_as(const char *dir, const char *shown, FILE *msg)
{
	if (!msg)
		msg = stderr;
	if (!dir || !*dir) {
		fprintf(msg, "skv report: no folder given (usage: skv report DIR)\n");
		return SKV_EINVAL;
	}
	char *d = strip_slashes(dir), *nm = strip_slashes(shown ? shown : dir);
	if (!d || !nm) {
		free(d), free(nm);
		fprintf(msg, "skv report: out of memory\n");
		return SKV_ENOMEM;
	}
	job j = {.dir = d, .name = nm, .msg = msg};
	int rc = list_csv(&j);
	if (!rc)
		rc = read_all(&j);
	if (!rc && gnuplot_find(j.gnuplot, sizeof j.gnuplot) != SKV_OK) {
		fprintf(msg, "skv report: gnuplot not found on PATH; the charts need it. Install it with: %s\n",
			GNUPLOT_INSTALL);
		rc = SKV_EIO;
	}
	if (!rc && gnuplot_scripts(j.scripts, sizeof j.scripts) != SKV_OK) {
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
		fprintf(msg, "skv report: %zu experiment%s, %zu chart%s (PNG and SVG) -> %s%sREPORT.md\n", j.n,
			j.n == 1 ? "" : "s", j.n, j.n == 1 ? "" : "s", nm, strcmp(nm, "/") == 0 ? "" : "/");
	job_free(&j);
	free(d);
	free(nm);
	return rc;
}

