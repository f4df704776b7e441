/* report_read.c - the CSV files of a report folder found, read and checked against their .md and .meta, and their findings computed. */
#include "report/report_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv.h"

/* Largest .md and .meta files read: far above what skv writes (a .md is a
 * few hundred bytes a point), so a wrong file is refused, not loaded. */
#define MD_MAX_BYTES ((size_t)64 << 20)
#define META_MAX_BYTES ((size_t)1 << 20)

/* The whole file as a NUL-terminated string. NULL with *why == NULL when
 * it does not exist; NULL with *why set when it exists but cannot be used:
 * not a regular file (a FIFO is refused rather than waited on), larger
 * than max, or unreadable. */
static char *slurp(const char *path, size_t max, const char **why)
{
	char *t = NULL;
	size_t n;
	io_slurp_info in;
	*why = NULL;
	if (io_slurp(&t, &n, path, max, &in) == SKV_OK)
		return t;
	*why = in.why == IO_READ_MISSING     ? NULL
	       : in.why == IO_READ_NOT_REGULAR ? "not a regular file"
	       : in.why == IO_READ_TOO_LARGE   ? "larger than skv ever writes"
	       : in.why == IO_READ_NOMEM       ? "out of memory"
					       : strerror(in.err);
	return NULL;
}

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

int report_list_csv(job *j)
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
		char *name = strndup(e->d_name, k - 4), *csv = report_path(j->dir, name, ".csv");
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

const char *report_meta_view(const char *meta, const char *key, size_t *n)
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

/* The value of "key: value" in a .meta file, copied into a new string;
 * NULL if absent. */
static char *meta_dup(const char *meta, const char *key)
{
	size_t n;
	const char *v = report_meta_view(meta, key, &n);
	return v ? strndup(v, n) : NULL;
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
		char *path = report_path(j->dir, s->name, ext[k]);
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

int report_fail(job *j, int rc, message *e)
{
	fprintf(j->msg, "skv report: %s\n", *msg_text(e) ? msg_text(e) : skv_strerror(rc));
	msg_free(e);
	return rc;
}

int report_read_all(job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		section *s = &j->s[i];
		message e = {NULL};
		s->exp = experiment_find(s->name);
		if (!s->exp)
			s->exp = &exp_generic;
		s->chart = &s->exp->chart;
		const char *need[] = {s->chart->x};
		char *shown = report_path(j->name, s->name, ".csv");
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
