/* results.c - an experiment's CSV read by column name into parameter points with per-trial metrics. */
#include "results/results.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv.h"


static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A row as the sort sees it: its fields and which of them are parameters. */
typedef struct {
	char *const *f;
	const unsigned char *param;
	size_t ncols, row;
	unsigned long long trial;
} rowref;

/* Orders rows by their parameters, column by column. */
static int cmp_params(const rowref *x, const rowref *y)
{
	for (size_t c = 0; c < x->ncols; c++)
		if (x->param[c]) {
			int d = strcmp(x->f[c], y->f[c]);
			if (d)
				return d;
		}
	return 0;
}

/* Parameters, then trial, then row: the trials of a point become adjacent
 * and a repeated trial sits next to its twin. */
static int cmp_rows(const void *a, const void *b)
{
	const rowref *x = a, *y = b;
	int d = cmp_params(x, y);
	if (d)
		return d;
	if (x->trial != y->trial)
		return (x->trial > y->trial) - (x->trial < y->trial);
	return (x->row > y->row) - (x->row < y->row);
}

/* A trial number: decimal digits only, below 2^63. */
static int parse_trial(unsigned long long *v, const char *s)
{
	if (!*s || strlen(s) > 18)
		return 0;
	unsigned long long x = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		x = 10 * x + (unsigned long long)(*s - '0');
	}
	*v = x;
	return 1;
}

/* Checks the required columns and classifies every column. */
static int classify(results *o, const char *const *required, size_t nrequired, message *e)
{
	const csv_table *t = &o->csv;
	static const char *const always[] = {"trial", "norm_rel_err"};
	const size_t nalways = sizeof always / sizeof *always;
	size_t col;
	for (size_t i = 0; i < nalways + nrequired; i++) {
		const char *need = i < nalways ? always[i] : required[i - nalways];
		if (csv_find(t, need, &col) != SKV_OK) {
			csv_fail(e, t->name, 1, "missing required column '%s'", need);
			return SKV_EINVAL;
		}
	}
	if (t->nrows == 0) {
		csv_fail(e, t->name, 1, "no data rows after the header");
		return SKV_EINVAL;
	}
	csv_find(t, "trial", &o->trial_col);
	o->param = calloc(t->ncols, 1);
	o->varies = calloc(t->ncols, 1);
	o->metric_col = malloc(t->ncols * sizeof *o->metric_col);
	if (!o->param || !o->varies || !o->metric_col)
		return SKV_ENOMEM;
	for (size_t c = 0; c < t->ncols; c++) {
		const char *h = csv_colname(t, c);
		if (ends_with(h, "_err"))
			o->metric_col[o->nmetric++] = c;
		else if (c != o->trial_col && !ends_with(h, "_state"))
			o->param[c] = 1;
		for (size_t i = 1; i < t->nrows && !o->varies[c]; i++)
			o->varies[c] = strcmp(csv_get(t, i, c), csv_get(t, 0, c)) != 0;
	}
	return SKV_OK;
}

/* An error as skv writes it: a finite decimal number >= 0 (no hex, no
 * literal beyond the double range), or exactly "inf" or "nan". An error is
 * never negative, and an overflowing literal such as 1e999 is not one a
 * run can have printed. */
static int metric_value(double *v, const char *s)
{
	if (strcmp(s, "inf") == 0 || strcmp(s, "nan") == 0)
		return csv_number(v, s) == SKV_OK;
	if (strpbrk(s, "xXnNiI") || csv_number(v, s) != SKV_OK)
		return 0;
	return isfinite(*v) && *v >= 0;
}

/* Parses every trial number (into ref) and metric (into o->value). */
static int parse_values(results *o, rowref *ref, message *e)
{
	const csv_table *t = &o->csv;
	/* nmetric >= 1: norm_rel_err is required. */
	if (t->nrows > SIZE_MAX / sizeof(double) / o->nmetric)
		return SKV_ENOMEM;
	o->value = malloc(t->nrows * o->nmetric * sizeof *o->value);
	if (!o->value)
		return SKV_ENOMEM;
	for (size_t i = 0; i < t->nrows; i++) {
		const char *tr = csv_get(t, i, o->trial_col);
		ref[i] = (rowref){t->field + (i + 1) * t->ncols, o->param, t->ncols, i, 0};
		if (!parse_trial(&ref[i].trial, tr)) {
			csv_fail(e, t->name, csv_line(t, i),
			     "column 'trial': '%s' is not a nonnegative integer", tr);
			return SKV_EINVAL;
		}
		for (size_t m = 0; m < o->nmetric; m++) {
			const char *s = csv_get(t, i, o->metric_col[m]);
			double *v = &o->value[i * o->nmetric + m];
			if (!metric_value(v, s)) {
				csv_fail(e, t->name, csv_line(t, i),
					     "column '%s': '%s' is not an error value (a number >= 0, inf or nan)",
					     csv_colname(t, o->metric_col[m]), s);
				return SKV_EINVAL;
			}
		}
	}
	return SKV_OK;
}

/* Groups the rows into points: sorts them by parameters and trial, cuts
 * where the parameters change, then numbers the groups by their first row so
 * points come in sweep order. A repeated (parameters, trial) is an error. */
static int group(results *o, rowref *ref, message *e)
{
	const csv_table *t = &o->csv;
	size_t n = t->nrows;
	qsort(ref, n, sizeof *ref, cmp_rows);
	o->row_point = malloc(n * sizeof *o->row_point);
	o->point_row = malloc(n * sizeof *o->point_row);
	o->point_start = malloc((n + 1) * sizeof *o->point_start);
	o->point_rows = malloc(n * sizeof *o->point_rows);
	size_t *lead = malloc(n * sizeof *lead); /* first row of the group of ref[i] */
	if (!o->row_point || !o->point_row || !o->point_start || !o->point_rows || !lead) {
		free(lead);
		return SKV_ENOMEM;
	}
	size_t ng = 0;
	for (size_t i = 0, g = 0; i <= n; i++) {
		if (i > 0 && i < n && cmp_params(&ref[i], &ref[i - 1]) == 0) {
			if (ref[i].trial == ref[i - 1].trial) {
				/* Within equal parameters and trial the sort is by row. */
				size_t a = ref[i - 1].row, b = ref[i].row;
				csv_fail(e, t->name, csv_line(t, b),
				     "trial %llu repeats the parameters and trial of line %zu", ref[i].trial,
				     csv_line(t, a));
				free(lead);
				return SKV_EINVAL;
			}
			continue;
		}
		if (i > 0) { /* close the group ref[g..i) */
			size_t m = ref[g].row;
			for (size_t k = g; k < i; k++)
				m = ref[k].row < m ? ref[k].row : m;
			for (size_t k = g; k < i; k++)
				lead[k] = m;
			o->point_row[ng++] = m;
		}
		g = i;
	}
	qsort(o->point_row, ng, sizeof *o->point_row, stats_cmp_size);
	o->npoints = ng;
	/* Rows of point p: point_rows[point_start[p] .. point_start[p + 1]), in
	 * trial order (ref is sorted by trial within a group). */
	memset(o->point_start, 0, (n + 1) * sizeof *o->point_start);
	for (size_t i = 0; i < n; i++) {
		size_t *at = bsearch(&lead[i], o->point_row, ng, sizeof *o->point_row, stats_cmp_size);
		o->row_point[ref[i].row] = (size_t)(at - o->point_row);
		o->point_start[o->row_point[ref[i].row] + 1]++;
	}
	for (size_t p = 0; p < ng; p++)
		o->point_start[p + 1] += o->point_start[p];
	for (size_t i = 0; i < n; i++) /* lead is free now: reuse it as a cursor */
		lead[i] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t p = o->row_point[ref[i].row];
		o->point_rows[o->point_start[p] + lead[p]++] = ref[i].row;
	}
	free(lead);
	return SKV_OK;
}

/* The summary of every metric at every point. */
static int summarize(results *o)
{
	size_t n = o->csv.nrows;
	o->stat = malloc(o->npoints * o->nmetric * sizeof *o->stat);
	double *buf = malloc(n * sizeof *buf);
	int rc = o->stat && buf ? SKV_OK : SKV_ENOMEM;
	for (size_t p = 0; p < o->npoints && !rc; p++)
		for (size_t m = 0; m < o->nmetric && !rc; m++) {
			size_t k = o->point_start[p + 1] - o->point_start[p];
			for (size_t i = 0; i < k; i++)
				buf[i] = o->value[o->point_rows[o->point_start[p] + i] * o->nmetric + m];
			rc = stats_compute(&o->stat[p * o->nmetric + m], buf, k);
		}
	free(buf);
	return rc;
}

int results_from_csv(results *r, csv_table *csv, const char *name, const char *const *required,
			 size_t nrequired, message *e)
{
	if (!r || !csv || !name || (!required && nrequired)) {
		if (csv)
			csv_free(csv);
		csv_fail(e, name ? name : "(null)", 0, "invalid argument");
		return SKV_EINVAL;
	}
	results o = {0};
	o.csv = *csv;
	memset(csv, 0, sizeof *csv);
	rowref *ref = NULL;
	int rc = classify(&o, required, nrequired, e);
	if (!rc) {
		o.name = strdup(name);
		ref = malloc(o.csv.nrows * sizeof *ref);
		rc = o.name && ref ? SKV_OK : SKV_ENOMEM;
	}
	if (!rc)
		rc = parse_values(&o, ref, e);
	if (!rc)
		rc = group(&o, ref, e);
	if (!rc)
		rc = summarize(&o);
	free(ref);
	if (rc) {
		if (rc == SKV_ENOMEM)
			csv_fail(e, o.csv.name, 0, "out of memory");
		results_free(&o);
		return rc;
	}
	*r = o;
	return SKV_OK;
}

int results_load(results *r, const char *path, const char *shown, const char *const *required,
		     size_t nrequired, message *e)
{
	if (!r || !path)
		return SKV_EINVAL;
	csv_table t;
	int rc = csv_read_as(&t, path, shown ? shown : path, e);
	if (rc)
		return rc;
	/* The experiment is named by the file: DIR/NAME.csv -> NAME. */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 4 && strcmp(base + n - 4, ".csv") == 0)
		n -= 4;
	char *name = strndup(base, n);
	if (!name) {
		csv_free(&t);
		return SKV_ENOMEM;
	}
	rc = results_from_csv(r, &t, name, required, nrequired, e);
	free(name);
	return rc;
}

void results_free(results *r)
{
	if (!r)
		return;
	csv_free(&r->csv);
	free(r->name);
	free(r->metric_col);
	free(r->value);
	free(r->param);
	free(r->varies);
	free(r->point_row);
	free(r->row_point);
	free(r->point_start);
	free(r->point_rows);
	free(r->stat);
	memset(r, 0, sizeof *r);
}

int results_metric(const results *r, const char *name, size_t *m)
{
	if (!r || !name || !m)
		return SKV_EINVAL;
	for (size_t i = 0; i < r->nmetric; i++)
		if (strcmp(csv_colname(&r->csv, r->metric_col[i]), name) == 0) {
			*m = i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

const stat_summary *results_stat(const results *r, size_t p, size_t m)
{
	if (!r || p >= r->npoints || m >= r->nmetric)
		return NULL;
	return &r->stat[p * r->nmetric + m];
}

const char *results_get(const results *r, size_t p, const char *col)
{
	size_t c;
	if (!r || p >= r->npoints || csv_find(&r->csv, col, &c) != SKV_OK)
		return NULL;
	return csv_get(&r->csv, r->point_row[p], c);
}

int results_varies(const results *r, const char *col)
{
	size_t c;
	return r && col && csv_find(&r->csv, col, &c) == SKV_OK && r->varies[c];
}

int results_number(double *x, const results *r, size_t p, const char *col, message *e)
{
	if (!x || !r || p >= r->npoints || !col)
		return SKV_EINVAL;
	const char *s = results_get(r, p, col);
	if (!s) {
		csv_fail(e, r->csv.name, 1, "missing required column '%s'", col);
		return SKV_EINVAL;
	}
	if (csv_number(x, s) != SKV_OK) {
		csv_fail(e, r->csv.name, csv_line(&r->csv, r->point_row[p]),
		     "column '%s': '%s' is not a number", col, s);
		return SKV_EINVAL;
	}
	return SKV_OK;
}
