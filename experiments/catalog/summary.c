/* summary.c - the findings paragraph of each experiment's section of REPORT.md, every number computed from its CSV. */
#include "catalog/summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/findings.h"
#include "results/groups.h"
#include "results/labels.h"
#include "skv.h"

enum { MAXKEYS = 32, LABEL = 256, NUM = 32 };

/* ------------------------------------------------------------- helpers */

/* An error or ratio: two significant digits. */
static const char *num(char *buf, double x) { return label_number(buf, NUM, x, 2); }
/* A parameter value (split count, offset, block size): as swept. */
static const char *val(char *buf, double x) { return label_number(buf, NUM, x, 17); }
/* A fitted exponent: two decimals, and no "-0.00". */
static double slope2(double s) { return fabs(s) < 0.005 ? 0 : s; }

/* Index of metric `name`, else of norm_rel_err (every results table has it). */
static size_t metric(const results *r, const char *name)
{
	size_t m = 0;
	if (results_metric(r, name, &m) != SKV_OK)
		results_metric(r, "norm_rel_err", &m);
	return m;
}

/* The varying parameters except ex[0..nex), what they determine, and the
 * experiment column (see results_keys). */
static size_t keys_except(const results *r, const char **keys, const char *const *ex, size_t nex)
{
	const char *all[MAXKEYS + 1];
	size_t n = 0;
	for (size_t i = 0; i < nex && n < MAXKEYS; i++)
		all[n++] = ex[i];
	all[n++] = "experiment";
	return results_keys(r, keys, MAXKEYS, all, n);
}

/* Label of group i: "partial fp16, merge onepass"; `skip` names a key left out. */
static char *group_label(char *buf, const groups *g, const results *r, size_t i, const char *skip)
{
	const char *cols[MAXKEYS], *vals[MAXKEYS];
	size_t n = 0;
	for (size_t k = 0; k < g->nkeys && n < MAXKEYS; k++) {
		if (skip && strcmp(g->key[k], skip) == 0)
			continue;
		cols[n] = g->key[k];
		vals[n++] = groups_value(g, r, i, k);
	}
	return label_join(buf, LABEL, cols, vals, n);
}

/* Label of point p in the columns keys[0..nk). */
static char *point_label(char *buf, const results *r, size_t p, const char *const *keys, size_t nk)
{
	const char *vals[MAXKEYS];
	for (size_t k = 0; k < nk && k < MAXKEYS; k++)
		vals[k] = results_get(r, p, keys[k]);
	return label_join(buf, LABEL, keys, vals, nk < MAXKEYS ? nk : MAXKEYS);
}

static int has_value(const results *r, const char *col, const char *val)
{
	for (size_t p = 0; p < r->npoints; p++) {
		const char *v = results_get(r, p, col);
		if (v && strcmp(v, val) == 0)
			return 1;
	}
	return 0;
}

/* Separator before item i of n in a running list: "", ", ", " and ". */
static const char *sep(size_t i, size_t n) { return i == 0 ? "" : i + 1 == n ? " and " : ", "; }

/* The unit of metric m for a sentence. */
static void unit(char *buf, size_t n, const results *r, size_t m)
{
	const char *name = csv_colname(&r->csv, r->metric_col[m]);
	if (strcmp(name, "ulp_err") == 0) {
		const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
		snprintf(buf, n, "ulps of %s", out && *out ? out : "the output format");
	} else {
		snprintf(buf, n, "(%s)", name);
	}
}

/* Trials whose metric m is NaN, said once per experiment: a NaN is a result
 * (an empty split read as garbage, an overflow), never hidden in a median. */
static void nan_sentence(FILE *f, const results *r, size_t m, int always)
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
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, NULL, 0);
	char lab[LABEL];
	fprintf(f, " %zu of %zu trials gave a NaN %s, at %zu point%s (the first: %s); the medians above leave them out.",
		nan, r->csv.nrows, csv_colname(&r->csv, r->metric_col[m]), pts, pts == 1 ? "" : "s",
		nk ? point_label(lab, r, first, keys, nk) : r->name);
}

/* --------------------------------------------------------- split-count */

static int split_count(FILE *f, const results *r, char *err, size_t errlen)
{
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], b[NUM], lab[LABEL];
	/* With the LSE in fp64 its rounding is negligible next to any partial
	 * format's, so the slope belongs to the partial format alone. */
	int lse64 = results_varies(r, "lse") && has_value(r, "lse", "fp64");
	const char *ex[] = {"splits", "lse"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, lse64 ? 2 : 1);
	groups g;
	int rc = groups_make(&g, r, keys, nk, lse64 ? "lse" : NULL, "fp64");
	if (rc)
		return rc;
	find_trend *t = malloc((g.n ? g.n : 1) * sizeof *t);
	if (!t) {
		groups_free(&g);
		return SKV_ENOMEM;
	}
	rc = find_trends(t, r, &g, "splits", m, err, errlen);
	if (!rc && g.n) {
		fprintf(f, "%sthe median normwise error scales as S^a with the split count S; least-squares fits of "
			   "log error against log S over S = %s to %s give ",
			lse64 ? "With the LSE stored in fp64, so that only the partials' format acts, " : "",
			val(a, t[0].x_first), val(b, t[0].x_last));
		for (size_t i = 0; i < g.n; i++) {
			fputs(sep(i, g.n), f);
			if (isnan(t[i].slope))
				fprintf(f, "no slope for %s (fewer than two positive errors)", group_label(lab, &g, r, i, NULL));
			else
				fprintf(f, "a = %.2f for %s", slope2(t[i].slope), group_label(lab, &g, r, i, NULL));
		}
		fprintf(f, ". At S = %s the median error is ", val(a, t[0].x_last));
		for (size_t i = 0; i < g.n; i++)
			fprintf(f, "%s%s (%s)", sep(i, g.n), num(a, t[i].y_last), group_label(lab, &g, r, i, NULL));
		fputs(".", f);
	}
	free(t);
	groups_free(&g);
	if (rc)
		return rc;
	/* The LSE format's own effect, with the partials exact to fp64. */
	if (results_varies(r, "lse") && results_varies(r, "partial") && has_value(r, "partial", "fp64")) {
		const char *ex2[] = {"splits", "partial"};
		nk = keys_except(r, keys, ex2, 2);
		if ((rc = groups_make(&g, r, keys, nk, "partial", "fp64")))
			return rc;
		t = malloc((g.n ? g.n : 1) * sizeof *t);
		rc = t ? find_trends(t, r, &g, "splits", m, err, errlen) : SKV_ENOMEM;
		if (!rc && g.n) {
			char c[NUM];
			fprintf(f, " With fp64 partials the LSE format alone goes from S = %s to S = %s as ",
				val(b, t[0].x_first), val(c, t[0].x_last));
			for (size_t i = 0; i < g.n; i++)
				fprintf(f, "%s%s to %s (%s)", sep(i, g.n), num(a, t[i].y_first), num(b, t[i].y_last),
					group_label(lab, &g, r, i, NULL));
			fputs(".", f);
			/* Said only when the data show it: at S = 1 every LSE format
			 * gives the same error (within 1%). */
			int same = t[0].x_first == 1.0;
			for (size_t i = 1; i < g.n; i++)
				same &= fabs(t[i].y_first - t[0].y_first) <= 0.01 * fabs(t[0].y_first);
			if (same && g.n > 1)
				fputs(" At S = 1 every LSE format gives the same error: a lone split's weight is "
				      "exp(L - L) = 1 exactly whatever its stored LSE, so the LSE format only starts "
				      "to cost at S = 2.", f);
		}
		free(t);
		groups_free(&g);
	}
	nan_sentence(f, r, m, 0);
	return rc;
}

/* ------------------------------------------------------- lse-magnitude */

static int lse_magnitude(FILE *f, const results *r, char *err, size_t errlen)
{
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], b[NUM], c[NUM], lab[LABEL];
	const char *ex[] = {"lse_offset"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, 1);
	groups g, byfmt;
	int rc = groups_make(&g, r, keys, nk, NULL, NULL);
	if (rc)
		return rc;
	/* The curves are summarized per LSE format when it varies: the first
	 * crossing over the other parameters (split counts) and where it is. */
	const char *fmtkey = "lse";
	int per_fmt = results_varies(r, fmtkey);
	rc = groups_make(&byfmt, r, per_fmt ? &fmtkey : keys, per_fmt ? 1 : nk, NULL, NULL);
	find_crossing *x = malloc((g.n ? g.n : 1) * sizeof *x);
	if (!rc && !x)
		rc = SKV_ENOMEM;
	if (!rc)
		rc = find_crossings(x, r, &g, "lse_offset", m, SUMMARY_THRESHOLD, err, errlen);
	if (!rc && g.n) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t p = 0; p < r->npoints; p++) {
			double v;
			if (results_number(&v, r, p, "lse_offset", NULL, 0) == SKV_OK)
				lo = fmin(lo, v), hi = fmax(hi, v);
		}
		fprintf(f, "The median normwise error first exceeds %s at an LSE offset of ",
			num(a, SUMMARY_THRESHOLD));
		size_t never = 0;
		for (size_t j = 0; j < byfmt.n; j++) {
			size_t best = NO_GROUP;
			for (size_t i = 0; i < g.n; i++)
				if (byfmt.of_point[g.first[i]] == j && !isnan(x[i].x) &&
				    (best == NO_GROUP || x[i].x < x[best].x))
					best = i;
			if (best == NO_GROUP) {
				never++;
				continue;
			}
			fprintf(f, "%s%s with %s", j - never ? "; " : "", val(a, x[best].x), group_label(lab, &byfmt, r, j, NULL));
			if (per_fmt && nk > 1)
				fprintf(f, " (first at %s)", group_label(lab, &g, r, best, fmtkey));
		}
		if (never) {
			fprintf(f, "%s", never < byfmt.n ? "; and it never does within the sweep (offsets " : "no offset of the sweep (");
			fprintf(f, "%s to %s) with ", val(a, lo), val(b, hi));
			size_t k = 0;
			for (size_t j = 0; j < byfmt.n; j++) {
				int crossed = 0;
				for (size_t i = 0; i < g.n; i++)
					crossed |= byfmt.of_point[g.first[i]] == j && !isnan(x[i].x);
				if (!crossed)
					fprintf(f, "%s%s", sep(k++, never), group_label(lab, &byfmt, r, j, NULL));
			}
		}
		fprintf(f, ". At the largest offset, %s, the worst median error over the other parameters is ", val(c, hi));
		for (size_t j = 0; j < byfmt.n; j++) {
			double worst = -INFINITY;
			for (size_t i = 0; i < g.n; i++)
				if (byfmt.of_point[g.first[i]] == j)
					worst = isnan(x[i].y_last) || isnan(worst) ? NAN : fmax(worst, x[i].y_last);
			fprintf(f, "%s%s (%s)", sep(j, byfmt.n), num(a, worst), group_label(lab, &byfmt, r, j, NULL));
		}
		fputs(".", f);
	}
	free(x);
	groups_free(&g);
	groups_free(&byfmt);
	if (!rc)
		nan_sentence(f, r, m, 0);
	return rc;
}

/* ----------------------------------------------------- reduction-order */

static int reduction_order(FILE *f, const results *r, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	size_t m = metric(r, "ulp_err");
	char a[NUM], b[NUM], u[64], lab[LABEL];
	unit(u, sizeof u, r, m);
	const char *ex[] = {"order"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, 1);
	groups g;
	int rc = groups_make(&g, r, keys, nk, NULL, NULL);
	if (rc)
		return rc;
	find_spread *s = malloc((g.n ? g.n : 1) * sizeof *s);
	rc = s ? find_spreads(s, r, &g, m) : SKV_ENOMEM;
	/* The ulp metric is a max over elements and the smallest elements have
	 * the smallest ulps: the normwise error in units of the output format's
	 * unit roundoff says how far the order moves the output as a whole. */
	size_t mn;
	skv_format of;
	const char *outname = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
	int normwise = results_metric(r, "norm_rel_err", &mn) == SKV_OK && outname &&
		       skv_format_parse(&of, outname) == SKV_OK;
	find_spread *sn = normwise ? malloc((g.n ? g.n : 1) * sizeof *sn) : NULL;
	if (!rc && normwise && (!sn || find_spreads(sn, r, &g, mn) != SKV_OK)) {
		free(sn);
		sn = NULL;
	}
	const double uo = sn ? skv_format_unit_roundoff(of) : 0.0;
	if (!rc && g.n) {
		size_t lo = 0, hi = 0, top = 0;
		for (size_t i = 1; i < g.n; i++) {
			lo = s[i].median < s[lo].median ? i : lo;
			hi = s[i].median > s[hi].median ? i : hi;
			top = s[i].max > s[top].max ? i : top;
		}
		fprintf(f, "On the same random instance, changing only the reduction order (%zu orders) moves the "
			   "largest error by a median of %s to %s %s across the configurations in the table below",
			s[0].npoints, num(a, s[lo].median), num(b, s[hi].median), u);
		fprintf(f, ", and by at most %s (%s).", num(a, s[top].max), nk ? group_label(lab, &g, r, top, NULL) : r->name);
		if (sn) {
			size_t nlo = 0, nhi = 0;
			for (size_t i = 1; i < g.n; i++) {
				nlo = sn[i].median < sn[nlo].median ? i : nlo;
				nhi = sn[i].median > sn[nhi].median ? i : nhi;
			}
			fprintf(f, " That ulp count is set by the output's smallest elements; normwise, the order moves "
				   "||o - o*||_2 / ||o*||_2 by a median of %s to %s units of %s's unit roundoff u.",
				num(a, sn[nlo].median / uo), num(b, sn[nhi].median / uo), outname);
		}
		fprintf(f, "\n\n| configuration | median spread (%s) | largest spread |%s lowest median error | highest "
			   "median error | trials |\n|---|---:|---:|%s---|---|---:|\n",
			u, sn ? " median spread, normwise (u) |" : "", sn ? "---:|" : "");
		for (size_t i = 0; i < g.n; i++) {
			char c1[NUM], c2[NUM], c3[NUM];
			fprintf(f, "| %s | %s | %s |", nk ? group_label(lab, &g, r, i, NULL) : r->name, num(a, s[i].median),
				num(b, s[i].max));
			if (sn)
				fprintf(f, " %s |", num(c3, sn[i].median / uo));
			fprintf(f, " %s (%s) | %s (%s) | %zu |\n", results_get(r, s[i].lo, "order"),
				num(c1, results_stat(r, s[i].lo, m)->median), results_get(r, s[i].hi, "order"),
				num(c2, results_stat(r, s[i].hi, m)->median), s[i].ntrials);
		}
	}
	free(s);
	free(sn);
	groups_free(&g);
	if (!rc)
		nan_sentence(f, r, m, 0);
	return rc;
}

/* ---------------------------------------------------------- merge-rule */

static const char *const weighted[] = {"onepass", "pairwise", "flex"};

static int merge_rule(FILE *f, const results *r, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], b[NUM], lab[LABEL];
	const char *ex[] = {"merge"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, 1);
	groups g;
	int rc = groups_make(&g, r, keys, nk, NULL, NULL);
	if (rc)
		return rc;
	for (size_t i = 0; i < g.n; i++) {
		double rm, rs, rw;
		size_t best, bs, bw;
		int hm = find_ratio(&rm, &best, r, &g, i, "merge", "mean", weighted, 3, m) == SKV_OK;
		int hs = find_ratio(&rs, &bs, r, &g, i, "merge", "sum", weighted, 3, m) == SKV_OK;
		if (!hm && !hs)
			continue;
		if (!hm)
			best = bs;
		fprintf(f, "%s%s", i ? " " : "", nk ? group_label(lab, &g, r, i, NULL) : "");
		fputs(nk ? ": the" : "The", f);
		if (hm)
			fprintf(f, " plain mean's median normwise error is %s times", num(a, rm));
		if (hm && hs)
			fputs(", and the", f);
		if (hs)
			fprintf(f, " plain sum's %s times", num(b, rs));
		fprintf(f, " that of the better LSE-weighted merge (%s, %s).", results_get(r, best, "merge"),
			num(a, results_stat(r, best, m)->median));
		/* How far apart the weighted merges are from each other. */
		const char *other[] = {"onepass", "pairwise"};
		if (find_ratio(&rw, &bw, r, &g, i, "merge", strcmp(results_get(r, best, "merge"), "onepass") ? "onepass" : "pairwise",
				   other, 2, m) == SKV_OK)
			fprintf(f, " The other weighted merge is within a factor %s of it.", num(a, rw));
	}
	groups_free(&g);
	nan_sentence(f, r, m, 0);
	return SKV_OK;
}

/* ------------------------------------------------------- uneven-splits */

static int is_weighted(const char *merge)
{
	for (size_t i = 0; i < sizeof weighted / sizeof *weighted; i++)
		if (merge && strcmp(merge, weighted[i]) == 0)
			return 1;
	return 0;
}

static int uneven_splits(FILE *f, const results *r, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], lab[LABEL];
	const char *ex[] = {"layout"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, 1);
	groups g;
	int rc = groups_make(&g, r, keys, nk, NULL, NULL);
	if (rc)
		return rc;
	/* Per configuration: the worst layout's median against even splits'. */
	double worst[2] = {-INFINITY, -INFINITY};
	size_t wg[2] = {NO_GROUP, NO_GROUP}, wp[2] = {0, 0};
	const char *even[] = {"even"};
	for (size_t i = 0; i < g.n; i++) {
		int w = is_weighted(results_get(r, g.first[i], "merge")) || !results_get(r, g.first[i], "merge");
		for (size_t p = 0; p < r->npoints; p++) {
			double ratio;
			size_t base;
			if (g.of_point[p] != i)
				continue;
			if (find_ratio(&ratio, &base, r, &g, i, "layout", results_get(r, p, "layout"), even, 1, m) ||
			    !(ratio > worst[w]))
				continue;
			worst[w] = ratio;
			wg[w] = i;
			wp[w] = p;
		}
	}
	if (wg[1] != NO_GROUP)
		fprintf(f, "Against even splits, the worst layout multiplies the median normwise error of the LSE-weighted "
			   "merges by at most %s (layout %s, %s).",
			num(a, worst[1]), results_get(r, wp[1], "layout"), nk ? group_label(lab, &g, r, wg[1], NULL) : r->name);
	if (wg[0] != NO_GROUP)
		fprintf(f, "%sor the plain mean and sum, which ignore the split sizes, the factor reaches %s (layout %s, %s).",
			wg[1] != NO_GROUP ? " F" : "F", num(a, worst[0]), results_get(r, wp[0], "layout"),
			nk ? group_label(lab, &g, r, wg[0], NULL) : r->name);
	groups_free(&g);
	nan_sentence(f, r, m, 1);
	return SKV_OK;
}

/* ---------------------------------------------------------- block-size */

static int block_size(FILE *f, const results *r, char *err, size_t errlen)
{
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], b[NUM], c[NUM], d[NUM], lab[LABEL], lab2[LABEL];
	const char *ex[] = {"block_size"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, 1);
	groups g;
	int rc = groups_make(&g, r, keys, nk, NULL, NULL);
	if (rc)
		return rc;
	find_trend *t = malloc((g.n ? g.n : 1) * sizeof *t);
	rc = t ? find_trends(t, r, &g, "block_size", m, err, errlen) : SKV_ENOMEM;
	if (!rc && g.n) {
		/* The change from the smallest to the largest block, as a factor. */
		size_t lo = 0, hi = 0;
		double slo = INFINITY, shi = -INFINITY;
		for (size_t i = 0; i < g.n; i++) {
			double fi = t[i].y_last / t[i].y_first, flo = t[lo].y_last / t[lo].y_first,
			       fhi = t[hi].y_last / t[hi].y_first;
			lo = fi < flo ? i : lo;
			hi = fi > fhi ? i : hi;
			if (!isnan(t[i].slope))
				slo = fmin(slo, t[i].slope), shi = fmax(shi, t[i].slope);
		}
		fprintf(f, "From block size %s to %s the median normwise error changes by a factor of %s (%s) to %s (%s)",
			val(a, t[0].x_first), val(b, t[0].x_last), num(c, t[lo].y_last / t[lo].y_first),
			nk ? group_label(lab, &g, r, lo, NULL) : r->name, num(d, t[hi].y_last / t[hi].y_first),
			nk ? group_label(lab2, &g, r, hi, NULL) : r->name);
		if (slo <= shi)
			fprintf(f, "; the fitted log-log slopes lie between %.2f and %.2f", slo, shi);
		fputs(".", f);
	}
	free(t);
	groups_free(&g);
	if (rc)
		return rc;
	if (results_varies(r, "causal")) {
		const char *ex2[] = {"causal"};
		nk = keys_except(r, keys, ex2, 1);
		if ((rc = groups_make(&g, r, keys, nk, NULL, NULL)))
			return rc;
		const char *nc[] = {"0"};
		double lo = INFINITY, hi = -INFINITY;
		size_t n = 0, best;
		for (size_t i = 0; i < g.n; i++) {
			double q;
			if (find_ratio(&q, &best, r, &g, i, "causal", "1", nc, 1, m) == SKV_OK && !isnan(q)) {
				lo = fmin(lo, q), hi = fmax(hi, q);
				n++;
			}
		}
		if (n)
			fprintf(f, " Causal attention (every query row, each over its prefix) has %s to %s times the median "
				   "error of the single decode row, over the %zu matching configurations.",
				num(a, lo), num(b, hi), n);
		groups_free(&g);
	}
	nan_sentence(f, r, m, 0);
	return SKV_OK;
}

static int generic(FILE *f, const results *r, char *err, size_t errlen);

/* ------------------------------------------------------------- systems */

static int cmp_median(const void *a, const void *b, const results *r, size_t m)
{
	double x = results_stat(r, *(const size_t *)a, m)->median;
	double y = results_stat(r, *(const size_t *)b, m)->median;
	/* NaN ranks last: a preset that returns NaN is the least accurate. */
	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x > y) - (x < y);
}

/* The two ends of the preset range, left out of "the production presets". */
static int reference_preset(const char *name)
{
	return strcmp(name, "exact-fp64") == 0 || strcmp(name, "naive-fp16") == 0 || strcmp(name, "none") == 0;
}

static int systems(FILE *f, const results *r, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	if (!results_varies(r, "preset"))
		return SKV_EINVAL;
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], lab[LABEL];
	const char *ex[] = {"preset"};
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, ex, 1);
	groups g, pre;
	const char *pk = "preset";
	int rc = groups_make(&g, r, keys, nk, NULL, NULL);
	if (rc)
		return rc;
	if ((rc = groups_make(&pre, r, &pk, 1, NULL, NULL))) {
		groups_free(&g);
		return rc;
	}
	size_t *ord = malloc(r->npoints * sizeof *ord);
	size_t *first = calloc(pre.n, sizeof *first), *last = calloc(pre.n, sizeof *last);
	char *table = NULL;
	size_t tlen = 0;
	FILE *t = open_memstream(&table, &tlen);
	if (!ord || !first || !last || !t) {
		if (t)
			fclose(t);
		free(table), free(ord), free(first), free(last);
		groups_free(&g), groups_free(&pre);
		return SKV_ENOMEM;
	}
	fputs("| operating point | presets from most to least accurate (median normwise error) |\n|---|---|\n", t);
	for (size_t i = 0; i < g.n; i++) {
		size_t k = 0;
		for (size_t p = 0; p < r->npoints; p++)
			if (g.of_point[p] == i) {
				/* insertion by median, stable: ties keep the sweep order */
				size_t j = k++;
				for (; j > 0 && cmp_median(&ord[j - 1], &p, r, m) > 0; j--)
					ord[j] = ord[j - 1];
				ord[j] = p;
			}
		/* Best and worst among the production presets. */
		size_t lo = NO_GROUP, hi = NO_GROUP;
		for (size_t j = 0; j < k; j++)
			if (!reference_preset(results_get(r, ord[j], "preset"))) {
				lo = lo == NO_GROUP ? j : lo;
				hi = j;
			}
		if (lo != NO_GROUP) {
			first[pre.of_point[ord[lo]]]++;
			last[pre.of_point[ord[hi]]]++;
		}
		fprintf(t, "| %s |", nk ? group_label(lab, &g, r, i, NULL) : r->name);
		for (size_t j = 0; j < k; j++)
			fprintf(t, "%s %s (%s)", j ? "," : "", results_get(r, ord[j], "preset"),
				num(a, results_stat(r, ord[j], m)->median));
		fputs(" |\n", t);
	}
	fclose(t);
	size_t bi = 0, wi = 0;
	for (size_t j = 1; j < pre.n; j++) {
		bi = first[j] > first[bi] ? j : bi;
		wi = last[j] > last[wi] ? j : wi;
	}
	if (first[bi])
		fprintf(f, "Among the production presets (all but exact-fp64 and naive-fp16, the two ends), %s has the "
			   "smallest median normwise error at %zu of the %zu operating points and %s the largest at %zu "
			   "(ties keep the order of the sweep).",
			groups_value(&pre, r, bi, 0), first[bi], g.n, groups_value(&pre, r, wi, 0), last[wi]);
	/* How far each preset sits above its output format's floor: the exact
	 * answer rounded once to the output format, which no kernel beats. */
	size_t fm;
	if (results_metric(r, "floor_err", &fm) == SKV_OK) {
		fputs(" Against the floor (the exact output rounded once to the preset's output format), the largest "
		      "ratio of median error to median floor over the operating points is ", f);
		for (size_t j = 0; j < pre.n; j++) {
			double worst = 0.0;
			for (size_t p = 0; p < r->npoints; p++) {
				if (pre.of_point[p] != j)
					continue;
				double e = results_stat(r, p, m)->median, fl = results_stat(r, p, fm)->median;
				if (fl > 0.0 && !isnan(e))
					worst = fmax(worst, e / fl);
			}
			fprintf(f, "%s%s (%s)", sep(j, pre.n), num(a, worst), groups_value(&pre, r, j, 0));
		}
		fputs(": near 1, the kernel and merge add nothing to the output rounding; far above it, they "
		      "dominate.", f);
	}
	nan_sentence(f, r, m, 1);
	fprintf(f, "\n\n%s", table);
	free(table), free(ord), free(first), free(last);
	groups_free(&g);
	groups_free(&pre);
	return SKV_OK;
}

/* --------------------------------------------------------- empty-splits */

/* The outcome columns (out_state, lse_state) of point p over its trials:
 * "nan" when every trial agrees, "finite 1, nan 1" otherwise. */
static void states(char *buf, size_t n, const results *r, size_t p, const char *col)
{
	size_t c;
	buf[0] = '\0';
	if (csv_find(&r->csv, col, &c) != SKV_OK)
		return;
	size_t len = 0;
	const size_t s = r->point_start[p], e = r->point_start[p + 1];
	for (size_t i = s; i < e; i++) {
		const char *v = csv_get(&r->csv, r->point_rows[i], c);
		int seen = 0;
		for (size_t j = s; j < i && !seen; j++)
			seen = strcmp(v, csv_get(&r->csv, r->point_rows[j], c)) == 0;
		if (seen)
			continue;
		size_t count = 0;
		for (size_t j = i; j < e; j++)
			count += strcmp(v, csv_get(&r->csv, r->point_rows[j], c)) == 0;
		int k = count == e - s ? snprintf(buf + len, n - len, "%s", v)
				       : snprintf(buf + len, n - len, "%s%s %zu", len ? ", " : "", v, count);
		if (k < 0 || (size_t)k >= n - len)
			return;
		len += (size_t)k;
	}
}

static int empty_splits(FILE *f, const results *r, char *err, size_t errlen)
{
	size_t lc, pc;
	if (csv_find(&r->csv, "preset", &pc) != SKV_OK || csv_find(&r->csv, "layout", &lc) != SKV_OK ||
	    csv_find(&r->csv, "out_state", &lc) != SKV_OK)
		return generic(f, r, err, errlen);
	size_t m = metric(r, "norm_rel_err");
	const char *pk = "preset", *lk = "layout";
	groups pre, lay;
	int rc = groups_make(&pre, r, &pk, 1, NULL, NULL);
	if (rc)
		return rc;
	if ((rc = groups_make(&lay, r, &lk, 1, NULL, NULL))) {
		groups_free(&pre);
		return rc;
	}
	/* Which presets return NaN, and for which layouts. */
	size_t bad = 0;
	for (size_t i = 0; i < pre.n; i++) {
		int any = 0;
		for (size_t p = 0; p < r->npoints; p++) {
			char st[128];
			states(st, sizeof st, r, p, "out_state");
			if (pre.of_point[p] != i || !strstr(st, "nan"))
				continue;
			fprintf(f, "%s%s%s", any ? ", " : bad ? "; " : "Merged output NaN: ", any ? "" : groups_value(&pre, r, i, 0),
				any ? "" : " (");
			fputs(results_get(r, p, "layout"), f);
			any = 1;
		}
		if (any) {
			fputc(')', f);
			bad++;
		}
	}
	fprintf(f, bad ? ". %zu of %zu presets return NaN for at least one layout; the table gives every outcome "
			 "(output state, merged LSE state) over the trials."
		       : "No preset returns a NaN output for any layout (%zu of %zu); the table gives every outcome "
			 "(output state, merged LSE state) over the trials.",
		bad, pre.n);
	fputs("\n\n| preset |", f);
	for (size_t j = 0; j < lay.n; j++)
		fprintf(f, " %s |", groups_value(&lay, r, j, 0));
	fputs("\n|---|", f);
	for (size_t j = 0; j < lay.n; j++)
		fputs("---|", f);
	fputc('\n', f);
	for (size_t i = 0; i < pre.n; i++) {
		fprintf(f, "| %s |", groups_value(&pre, r, i, 0));
		for (size_t j = 0; j < lay.n; j++) {
			size_t p;
			for (p = 0; p < r->npoints; p++)
				if (pre.of_point[p] == i && lay.of_point[p] == j)
					break;
			if (p == r->npoints) {
				fputs(" |", f);
				continue;
			}
			char o[128], l[128], a[NUM];
			states(o, sizeof o, r, p, "out_state");
			states(l, sizeof l, r, p, "lse_state");
			fprintf(f, " %s, LSE %s", o, *l ? l : "?");
			double med = results_stat(r, p, m)->median;
			if (!isnan(med))
				fprintf(f, " (%s)", num(a, med));
			fputs(" |", f);
		}
		fputc('\n', f);
	}
	fputs("\nEach cell: output state, merged LSE state, and in parentheses the median normwise error when it is a "
	      "number.\n", f);
	groups_free(&pre);
	groups_free(&lay);
	return SKV_OK;
}

/* ------------------------------------------------------------- generic */

static int generic(FILE *f, const results *r, char *err, size_t errlen)
{
	(void)err, (void)errlen;
	size_t m = metric(r, "norm_rel_err");
	char a[NUM], b[NUM], l1[LABEL], l2[LABEL];
	const char *keys[MAXKEYS];
	size_t nk = keys_except(r, keys, NULL, 0);
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
			num(a, results_stat(r, lo, m)->median), nk ? point_label(l1, r, lo, keys, nk) : r->name,
			num(b, results_stat(r, hi, m)->median), nk ? point_label(l2, r, hi, keys, nk) : r->name);
	fputs(".", f);
	nan_sentence(f, r, m, 1);
	return SKV_OK;
}

/* ------------------------------------------------------------ dispatch */

static const struct {
	const char *name;
	int (*write)(FILE *, const results *, char *, size_t);
	const char *about;
} known[] = {
	{"split-count", split_count,
	 "How the error of the merged output grows with the number of KV splits S, for each storage format of the "
	 "partial outputs and of their LSEs."},
	{"lse-magnitude", lse_magnitude,
	 "A constant offset added to every score leaves the exact output unchanged but moves every LSE by that much: "
	 "how large an LSE each storage format can hold before the merge weights go wrong."},
	{"reduction-order", reduction_order,
	 "The same partials merged in different orders: how much the order alone moves the result, in units in the "
	 "last place of the output format."},
	{"merge-rule", merge_rule,
	 "The LSE-weighted merges (one pass, pairwise) against the plain mean and sum of the partials, which ignore "
	 "the LSEs."},
	{"uneven-splits", uneven_splits,
	 "Uneven split boundaries and empty splits: whether each merge rule stays accurate and free of NaN."},
	{"block-size", block_size,
	 "Online softmax attention (no splits): how the block size, and with it the number of rescalings of the "
	 "running state, changes the error in each compute format, for one decode row and for causal attention."},
	{"systems", systems,
	 "The precision profiles of production attention kernels (presets) side by side over split counts and LSE "
	 "offsets."},
	{"empty-splits", empty_splits,
	 "What each preset's merge returns when one, several or all splits are empty."},
};

const char *summary_about(const char *experiment)
{
	for (size_t i = 0; experiment && i < sizeof known / sizeof *known; i++)
		if (strcmp(known[i].name, experiment) == 0)
			return known[i].about;
	return NULL;
}

int summary_write(FILE *f, const results *r, char *err, size_t errlen)
{
	if (!f || !r)
		return SKV_EINVAL;
	if (err && errlen)
		err[0] = '\0';
	int (*write)(FILE *, const results *, char *, size_t) = generic;
	for (size_t i = 0; i < sizeof known / sizeof *known; i++)
		if (strcmp(known[i].name, r->name) == 0)
			write = known[i].write;
	int rc = write(f, r, err, errlen);
	/* A known experiment whose CSV lacks what its findings need (a systems
	 * table without presets) still gets the generic findings. */
	if (rc == SKV_EINVAL && write != generic && (!err || !*err))
		rc = generic(f, r, err, errlen);
	if (!rc)
		fputc('\n', f);
	return rc ? rc : ferror(f) ? SKV_EIO : SKV_OK;
}
