/* narrate.c - what every experiment's findings share: numbers as a reader writes them, labels, the NaN sentence, the generic findings. */
#include "catalog/narrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/labels.h"

/* ------------------------------------------------------------- helpers */

/* An error or ratio: two significant digits. */
const char *narr_num(char *buf, double x) { return label_number(buf, NARR_NUM, x, 2); }
/* A parameter value (split count, offset, block size): as swept. */
const char *narr_val(char *buf, double x) { return label_number(buf, NARR_NUM, x, 17); }
/* A fitted exponent: two decimals, and no "-0.00". */
double narr_slope2(double s) { return fabs(s) < 0.005 ? 0 : s; }

/* Index of metric `name`, else of norm_rel_err (every results table has it). */
size_t narr_metric(const results *r, const char *name)
{
	size_t m = 0;
	if (results_metric(r, name, &m) != SKV_OK)
		results_metric(r, "norm_rel_err", &m);
	return m;
}

/* The varying parameters except ex[0..nex), what they determine, and the
 * experiment column (see results_keys). */
size_t narr_keys_except(const results *r, const char **keys, const char *const *ex, size_t nex)
{
	const char *all[NARR_KEYS + 1];
	size_t n = 0;
	for (size_t i = 0; i < nex && n < NARR_KEYS; i++)
		all[n++] = ex[i];
	all[n++] = "experiment";
	return results_keys(r, keys, NARR_KEYS, all, n);
}

int narr_curves_make(narr_curves *c, const results *r, const char *const *ex, size_t nex, const char *where_col,
		     const char *where_val, size_t size)
{
	memset(c, 0, sizeof *c);
	c->nk = narr_keys_except(r, c->keys, ex, nex);
	int rc = groups_make(&c->g, r, c->keys, c->nk, where_col, where_val);
	if (rc)
		return rc;
	if (size && !(c->per = malloc((c->g.n ? c->g.n : 1) * size))) {
		groups_free(&c->g);
		return SKV_ENOMEM;
	}
	return SKV_OK;
}

void narr_curves_free(narr_curves *c)
{
	groups_free(&c->g);
	free(c->per);
	c->per = NULL;
}

/* Label of group i: "partial fp16, merge onepass"; `skip` names a key left out. */
char *narr_group_label(char *buf, const groups *g, const results *r, size_t i, const char *skip)
{
	const char *cols[NARR_KEYS], *vals[NARR_KEYS];
	size_t n = 0;
	for (size_t k = 0; k < g->nkeys && n < NARR_KEYS; k++) {
		if (skip && strcmp(g->key[k], skip) == 0)
			continue;
		cols[n] = g->key[k];
		vals[n++] = groups_value(g, r, i, k);
	}
	return label_join(buf, NARR_LABEL, cols, vals, n);
}

/* Label of point p in the columns keys[0..nk). */
char *narr_point_label(char *buf, const results *r, size_t p, const char *const *keys, size_t nk)
{
	const char *vals[NARR_KEYS];
	for (size_t k = 0; k < nk && k < NARR_KEYS; k++)
		vals[k] = results_get(r, p, keys[k]);
	return label_join(buf, NARR_LABEL, keys, vals, nk < NARR_KEYS ? nk : NARR_KEYS);
}

int narr_has_value(const results *r, const char *col, const char *val)
{
	for (size_t p = 0; p < r->npoints; p++) {
		const char *v = results_get(r, p, col);
		if (v && strcmp(v, val) == 0)
			return 1;
	}
	return 0;
}

/* Separator before item i of n in a running list: "", ", ", " and ". */
const char *narr_sep(size_t i, size_t n) { return i == 0 ? "" : i + 1 == n ? " and " : ", "; }

/* The unit of metric m for a sentence. */
void narr_unit(char *buf, size_t n, const results *r, size_t m)
{
	const char *name = csv_colname(&r->csv, r->metric_col[m]);
	const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
	if (strcmp(name, "ulp_err") == 0) {
		snprintf(buf, n, "ulps of %s", out && *out ? out : "the output format");
	} else if (strcmp(name, "norm_ulp_err") == 0) {
		snprintf(buf, n, "ulps of %s at the output's largest element", out && *out ? out : "the output format");
	} else {
		snprintf(buf, n, "(%s)", name);
	}
}

/* Trials whose metric m is NaN, said once per experiment: a NaN is a result
 * (an empty split read as garbage, an overflow), never hidden in a median. */
void narr_nan_sentence(FILE *f, const results *r, size_t m, int always)
{
	size_t nan = 0, pts = 0, first = NO_GROUP;
	for (size_t p = 0; p < r->npoints; p++) {
		size_t k = results_stat(r, p, m)->nnan;
		nan += k;
		pts += k > 0;
		if (k && first == NO_GROUP)
			first = p;
	}
	if (!nan) {
		if (always)
			fprintf(f, " No trial gave a NaN %s.", csv_colname(&r->csv, r->metric_col[m]));
		return;
	}
	const char *keys[NARR_KEYS];
	size_t nk = narr_keys_except(r, keys, NULL, 0);
	char lab[NARR_LABEL];
	fprintf(f, " %zu of %zu trials gave a NaN %s, at %zu point%s (the first: %s); the medians above leave them out.",
		nan, r->csv.nrows, csv_colname(&r->csv, r->metric_col[m]), pts, pts == 1 ? "" : "s",
		nk ? narr_point_label(lab, r, first, keys, nk) : r->name);
}

/* The LSE-weighted merges (the others, mean and sum, are the controls). */
const char *const narr_weighted[NARR_NWEIGHTED] = {"onepass", "pairwise", "flex"};

int narr_is_weighted(const char *merge)
{
	for (size_t i = 0; i < NARR_NWEIGHTED; i++)
		if (merge && strcmp(merge, narr_weighted[i]) == 0)
			return 1;
	return 0;
}

/* -------------------------------------------------------------- jumps */

/* The curve of the largest jump among those whose `by` group is j. */
static size_t top_jump(const find_jump *t, const narr_curves *cv, const groups *byv, size_t j)
{
	size_t top = NO_GROUP;
	for (size_t i = 0; i < cv->g.n; i++)
		if (byv->of_point[cv->g.first[i]] == j && !isnan(t[i].ratio) && (top == NO_GROUP || t[i].ratio > t[top].ratio))
			top = i;
	return top;
}

int narr_jumps(FILE *f, const results *r, size_t m, const char *by, narr_jump *best, message *e)
{
	const char *ex[] = {"splits"};
	narr_curves cv;
	groups byv;
	int per = by && results_varies(r, by);
	if (best)
		best->ratio = NAN;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(find_jump));
	if (rc)
		return rc;
	if ((rc = groups_make(&byv, r, &by, per ? 1 : 0, NULL, NULL))) {
		narr_curves_free(&cv);
		return rc;
	}
	const find_jump *t = cv.per;
	rc = find_jumps(cv.per, r, &cv.g, "splits", m, 2, 64, 1, e);
	size_t shown = 0, n = 0;
	for (size_t j = 0; !rc && j < byv.n; j++)
		n += top_jump(t, &cv, &byv, j) != NO_GROUP;
	for (size_t j = 0; !rc && j < byv.n; j++) {
		size_t i = top_jump(t, &cv, &byv, j);
		if (i == NO_GROUP)
			continue;
		char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], d[NARR_NUM], q[NARR_NUM], lab[NARR_LABEL], who[NARR_LABEL];
		if (!shown && f)
			fputs(" Between neighbouring split counts (2 to 64) the median moves by up to a factor of ", f);
		narr_group_label(lab, &cv.g, r, i, per ? by : NULL);
		if (per)
			label_value(who, sizeof who, by, groups_value(&byv, r, j, 0));
		if (f)
			fprintf(f, "%s%s%s%s (%s%s%s at S = %s, %s at S = %s)", narr_sep(shown, n),
				narr_num(q, t[i].ratio), per ? " with " : "", per ? who : "", lab, *lab ? ": " : "",
				narr_num(a, t[i].y_a), narr_val(b, t[i].x_a), narr_num(c, t[i].y_b), narr_val(d, t[i].x_b));
		if (best && !(t[i].ratio <= best->ratio))
			*best = (narr_jump){t[i].ratio, cv.g.first[i], t[i].x_a, t[i].y_a, t[i].x_b, t[i].y_b};
		shown++;
	}
	if (shown && f)
		fputs(".", f);
	groups_free(&byv);
	narr_curves_free(&cv);
	return rc;
}

/* ------------------------------------------------------------- generic */

int narr_generic(FILE *f, const results *r, message *e)
{
	(void)e;
	size_t m = narr_metric(r, "norm_rel_err");
	char a[NARR_NUM], b[NARR_NUM], l1[NARR_LABEL], l2[NARR_LABEL];
	const char *keys[NARR_KEYS];
	size_t nk = narr_keys_except(r, keys, NULL, 0);
	size_t lo = NO_GROUP, hi = NO_GROUP, trials = 0;
	for (size_t p = 0; p < r->npoints; p++) {
		double v = results_stat(r, p, m)->median;
		size_t n = results_stat(r, p, m)->n;
		trials = n > trials ? n : trials;
		if (isnan(v))
			continue;
		if (lo == NO_GROUP || v < results_stat(r, lo, m)->median)
			lo = p;
		if (hi == NO_GROUP || v > results_stat(r, hi, m)->median)
			hi = p;
	}
	fprintf(f, "%zu parameter point%s, up to %zu trial%s each", r->npoints, r->npoints == 1 ? "" : "s", trials,
		trials == 1 ? "" : "s");
	if (lo != NO_GROUP)
		fprintf(f, "; the median %s ranges from %s (%s) to %s (%s)", csv_colname(&r->csv, r->metric_col[m]),
			narr_num(a, results_stat(r, lo, m)->median), nk ? narr_point_label(l1, r, lo, keys, nk) : r->name,
			narr_num(b, results_stat(r, hi, m)->median), nk ? narr_point_label(l2, r, hi, keys, nk) : r->name);
	fputs(".", f);
	narr_nan_sentence(f, r, m, 1);
	return SKV_OK;
}

const char *narr_pct(char *buf, double ratio)
{
	const double c = (ratio - 1) * 100;
	snprintf(buf, NARR_NUM, c == 0 ? "0%%" : "%+.2g%%", c);
	return buf;
}

int narr_ratios_to(narr_ratios *out, const results *r, const char *col, const char *base, const char *val, size_t m)
{
	memset(out, 0, sizeof *out);
	out->lo = out->hi = NO_GROUP;
	const char *ex[] = {col};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(size_t));
	if (rc)
		return rc;
	size_t *at_base = cv.per; /* each curve's point where col reads base */
	for (size_t i = 0; i < cv.g.n; i++)
		at_base[i] = NO_GROUP;
	for (size_t p = 0; p < r->npoints; p++)
		if (cv.g.of_point[p] != NO_GROUP && strcmp(results_get(r, p, col), base) == 0)
			at_base[cv.g.of_point[p]] = p;
	for (size_t p = 0; p < r->npoints; p++) {
		const size_t i = cv.g.of_point[p], q = i == NO_GROUP ? NO_GROUP : at_base[i];
		const char *v = results_get(r, p, col);
		if (q == NO_GROUP || strcmp(v, base) == 0 || (val && strcmp(v, val) != 0))
			continue;
		const double a = results_stat(r, q, m)->median, b = results_stat(r, p, m)->median;
		if (!(a > 0) || isnan(b))
			continue; /* no ratio to a zero or NaN median */
		const double x = b / a;
		out->n++;
		out->equal += b == a;
		if (out->lo == NO_GROUP || x < out->rlo)
			out->lo = p, out->rlo = x;
		if (out->hi == NO_GROUP || x > out->rhi)
			out->hi = p, out->rhi = x;
	}
	narr_curves_free(&cv);
	return SKV_OK;
}

size_t narr_values(const char **v, size_t cap, const results *r, const char *col)
{
	size_t n = 0;
	for (size_t p = 0; p < r->npoints; p++) {
		const char *x = results_get(r, p, col);
		size_t k = 0;
		while (x && k < n && strcmp(v[k], x) != 0)
			k++;
		if (x && k == n && n < cap)
			v[n++] = x;
	}
	return n;
}

double narr_jump_spacing(const results *r, const narr_jump *j, double *off, double *lse, int *have_ctx)
{
	const char *fmt = results_get(r, j->point, "lse");
	skv_format lf;
	double ctx;
	if (!fmt || skv_format_parse(&lf, fmt) != SKV_OK || results_number(off, r, j->point, "lse_offset", NULL))
		return NAN;
	*have_ctx = results_number(&ctx, r, j->point, "ctx", NULL) == SKV_OK && ctx >= j->s_a;
	*lse = *off + (*have_ctx ? log(ctx / j->s_a) : 0);
	return skv_ulp(lf, *lse);
}
