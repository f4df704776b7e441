/* split_count.c - the split-count experiment: error against the number of KV splits, per partial and LSE storage format. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

/* The slope of each curve (one per partial format, the LSE in fp64 when
 * that was run) and its error at the largest S. */
static void slopes_sentence(FILE *f, const results *r, const narr_curves *c, int lse64)
{
	const find_trend *t = c->per;
	const groups *g = &c->g;
	char a[NARR_NUM], b[NARR_NUM], lab[NARR_LABEL];
	fprintf(f, "%sthe median normwise error scales as S^a with the split count S; least-squares fits of "
		   "log error against log S over S = %s to %s give ",
		lse64 ? "With the LSE stored in fp64, so that only the partials' format acts, " : "",
		narr_val(a, t[0].x_first), narr_val(b, t[0].x_last));
	for (size_t i = 0; i < g->n; i++) {
		fputs(narr_sep(i, g->n), f);
		if (isnan(t[i].slope))
			fprintf(f, "no slope for %s (fewer than two positive errors)", narr_group_label(lab, g, r, i, NULL));
		else
			fprintf(f, "a = %.2f for %s", narr_slope2(t[i].slope), narr_group_label(lab, g, r, i, NULL));
	}
	fprintf(f, ". At S = %s the median error is ", narr_val(a, t[0].x_last));
	for (size_t i = 0; i < g->n; i++)
		fprintf(f, "%s%s (%s)", narr_sep(i, g->n), narr_num(a, t[i].y_last), narr_group_label(lab, g, r, i, NULL));
	fputs(".", f);
}

/* The LSE format's own effect, the partials exact to fp64: each curve from
 * the smallest to the largest S, and why they agree at S = 1. */
static void lse_sentence(FILE *f, const results *r, const narr_curves *c)
{
	const find_trend *t = c->per;
	const groups *g = &c->g;
	char a[NARR_NUM], b[NARR_NUM], d[NARR_NUM], lab[NARR_LABEL];
	fprintf(f, " With fp64 partials the LSE format alone goes from S = %s to S = %s as ",
		narr_val(b, t[0].x_first), narr_val(d, t[0].x_last));
	for (size_t i = 0; i < g->n; i++)
		fprintf(f, "%s%s to %s (%s)", narr_sep(i, g->n), narr_num(a, t[i].y_first), narr_num(b, t[i].y_last),
			narr_group_label(lab, g, r, i, NULL));
	fputs(".", f);
	/* Said only when the data show it: at S = 1 every LSE format gives the
	 * same error (within 1%). */
	int same = t[0].x_first == 1.0;
	for (size_t i = 1; i < g->n; i++)
		same &= fabs(t[i].y_first - t[0].y_first) <= 0.01 * fabs(t[0].y_first);
	if (same && g->n > 1)
		fputs(" At S = 1 every LSE format gives the same error: a lone split's weight is "
		      "exp(L - L) = 1 exactly whatever its stored LSE, so the LSE format only starts "
		      "to cost at S = 2.", f);
}

/* The floor of the output format against the best configuration: how far
 * the kernel's own error keeps even exact storage above the output's one
 * rounding. */
static void floor_sentence(FILE *f, const results *r, size_t m)
{
	size_t fm;
	const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
	if (!out || results_metric(r, "floor_err", &fm) != SKV_OK)
		return;
	size_t best = NO_GROUP;
	double fl = NAN;
	for (size_t p = 0; p < r->npoints; p++) {
		const double y = results_stat(r, p, m)->median;
		if (y > 0 && (best == NO_GROUP || y < results_stat(r, best, m)->median))
			best = p;
	}
	if (best == NO_GROUP || !((fl = results_stat(r, best, fm)->median) > 0))
		return;
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], lab[NARR_LABEL];
	const char *keys[NARR_KEYS];
	size_t nk = narr_keys_except(r, keys, NULL, 0);
	const char *comp = results_varies(r, "compute") ? NULL : results_get(r, 0, "compute");
	fprintf(f, " The %s floor (the exact output rounded once to %s) is %s; the smallest median error, %s "
		   "(%s), is %s times it: the kernel's own rounding%s%s%s, which no storage format removes.",
		out, out, narr_num(a, fl), narr_num(b, results_stat(r, best, m)->median),
		nk ? narr_point_label(lab, r, best, keys, nk) : r->name, narr_num(c, results_stat(r, best, m)->median / fl),
		comp ? " (compute " : "", comp ? comp : "", comp ? ")" : "");
}

static int split_count(FILE *f, const results *r, message *e)
{
	size_t m = narr_metric(r, "norm_rel_err");
	/* With the LSE in fp64 its rounding is negligible next to any partial
	 * format's, so the slope belongs to the partial format alone. */
	int lse64 = results_varies(r, "lse") && narr_has_value(r, "lse", "fp64");
	const char *ex[] = {"splits", "lse"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, lse64 ? 2 : 1, lse64 ? "lse" : NULL, "fp64", sizeof(find_trend));
	if (rc)
		return rc;
	rc = find_trends(cv.per, r, &cv.g, "splits", m, e);
	if (!rc && cv.g.n)
		slopes_sentence(f, r, &cv, lse64);
	narr_curves_free(&cv);
	if (rc)
		return rc;
	if (results_varies(r, "lse") && results_varies(r, "partial") && narr_has_value(r, "partial", "fp64")) {
		const char *ex2[] = {"splits", "partial"};
		if ((rc = narr_curves_make(&cv, r, ex2, 2, "partial", "fp64", sizeof(find_trend))))
			return rc;
		rc = find_trends(cv.per, r, &cv.g, "splits", m, e);
		if (!rc && cv.g.n)
			lse_sentence(f, r, &cv);
		narr_curves_free(&cv);
	}
	/* The erratic part: neighbouring counts, per LSE format. */
	if (!rc && results_varies(r, "splits"))
		rc = narr_jumps(f, r, m, results_varies(r, "lse") ? "lse" : NULL, NULL, e);
	if (!rc)
		floor_sentence(f, r, m);
	narr_nan_sentence(f, r, m, 0);
	return rc;
}

const experiment exp_split_count = {
	{"split-count", KIND_SPLIT,
	 "error of the merged output against the number of KV splits, per partial and LSE storage format",
	 "--ctx=16384 --head-dim=32 --splits=" CATALOG_DENSE_SPLITS " "
	 "--input=fp32 --compute=fp32 --p=fp32 --partial=fp16,bf16,fp32,fp64 "
	 "--lse=fp16,bf16,fp32,fp64 --combine=fp32 --output=fp32 --merge=onepass --trials=8",
	 "Input, compute and P in fp32 keep the kernel's own error near 1e-6 (it falls as more splits "
	 "shorten each split's accumulation), so the storage error of fp16 and bf16 partials and LSEs "
	 "stands clear of it; fp32 and fp64 storage show that kernel floor. Every count from 1 to 64, "
	 "then the powers of two: with a 16-bit LSE neighbouring counts can differ several times. "
	 "head-dim 32 and 8 trials keep the 1088 points within the report's time."},
	"How the error of the merged output grows with the number of KV splits S, for each storage format of the "
	 "partial outputs and of their LSEs.",
	{"split-count", CHART_LINES, "splits", "lse", "norm_rel_err",
	 "error of the merged output against the number of KV splits", NULL},
	split_count,
};
