/* lse_magnitude.c - the lse-magnitude experiment: error against the LSE magnitude, per LSE storage format. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

/* Where each LSE format first goes wrong (the median above
 * FINDINGS_THRESHOLD) along the offsets, and its worst at the largest. */
static int crossing_sentence(FILE *f, const results *r, size_t m, message *e)
{
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], lab[NARR_LABEL];
	const char *ex[] = {"lse_offset"};
	narr_curves cv;
	groups byfmt = {0};
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(find_crossing));
	if (rc)
		return rc;
	const groups *g = &cv.g;
	const size_t nk = cv.nk;
	find_crossing *x = cv.per;
	/* The curves are summarized per LSE format when it varies: the first
	 * crossing over the other parameters (split counts) and where it is. */
	const char *fmtkey = "lse";
	int per_fmt = results_varies(r, fmtkey);
	rc = groups_make(&byfmt, r, per_fmt ? &fmtkey : cv.keys, per_fmt ? 1 : nk, NULL, NULL);
	if (!rc)
		rc = find_crossings(x, r, g, "lse_offset", m, FINDINGS_THRESHOLD, e);
	if (!rc && g->n) {
		double lo = INFINITY, hi = -INFINITY;
		for (size_t p = 0; p < r->npoints; p++) {
			double v;
			if (results_number(&v, r, p, "lse_offset", NULL) == SKV_OK)
				lo = fmin(lo, v), hi = fmax(hi, v);
		}
		fprintf(f, "The median normwise error first exceeds %s at an LSE offset of ",
			narr_num(a, FINDINGS_THRESHOLD));
		size_t never = 0;
		for (size_t j = 0; j < byfmt.n; j++) {
			size_t best = NO_GROUP;
			for (size_t i = 0; i < g->n; i++)
				if (byfmt.of_point[g->first[i]] == j && !isnan(x[i].x) &&
				    (best == NO_GROUP || x[i].x < x[best].x))
					best = i;
			if (best == NO_GROUP) {
				never++;
				continue;
			}
			fprintf(f, "%s%s with %s", j - never ? "; " : "", narr_val(a, x[best].x), narr_group_label(lab, &byfmt, r, j, NULL));
			if (per_fmt && nk > 1)
				fprintf(f, " (first at %s)", narr_group_label(lab, g, r, best, fmtkey));
		}
		if (never) {
			fprintf(f, "%s", never < byfmt.n ? "; and it never does within the sweep (offsets " : "no offset of the sweep (");
			fprintf(f, "%s to %s) with ", narr_val(a, lo), narr_val(b, hi));
			size_t k = 0;
			for (size_t j = 0; j < byfmt.n; j++) {
				int crossed = 0;
				for (size_t i = 0; i < g->n; i++)
					crossed |= byfmt.of_point[g->first[i]] == j && !isnan(x[i].x);
				if (!crossed)
					fprintf(f, "%s%s", narr_sep(k++, never), narr_group_label(lab, &byfmt, r, j, NULL));
			}
		}
		fprintf(f, ". At the largest offset, %s, the worst median error over the other parameters is ", narr_val(c, hi));
		for (size_t j = 0; j < byfmt.n; j++) {
			double worst = -INFINITY;
			for (size_t i = 0; i < g->n; i++)
				if (byfmt.of_point[g->first[i]] == j)
					worst = isnan(x[i].y_last) || isnan(worst) ? NAN : fmax(worst, x[i].y_last);
			fprintf(f, "%s%s (%s)", narr_sep(j, byfmt.n), narr_num(a, worst), narr_group_label(lab, &byfmt, r, j, NULL));
		}
		fputs(".", f);
	}
	narr_curves_free(&cv);
	groups_free(&byfmt);
	return rc;
}


/* How many split counts give the same median (within 1%) with LSE a as
 * with LSE b at offset off: when both spacings exceed the spread of the
 * split LSEs, each rounds them all to one value and both merges weigh
 * every split alike. *n gets the split counts compared. */
static size_t same_weights(size_t *n, const results *r, size_t m, const char *a, const char *b, double off)
{
	size_t same = 0;
	*n = 0;
	for (size_t p = 0; p < r->npoints; p++) {
		double o, s;
		if (strcmp(results_get(r, p, "lse"), a) != 0 || results_number(&o, r, p, "lse_offset", NULL) || o != off ||
		    results_number(&s, r, p, "splits", NULL) || s < 2)
			continue;
		for (size_t q = 0; q < r->npoints; q++) {
			double o2, s2;
			if (strcmp(results_get(r, q, "lse"), b) != 0 || results_number(&o2, r, q, "lse_offset", NULL) ||
			    o2 != off || results_number(&s2, r, q, "splits", NULL) || s2 != s)
				continue;
			const double x = results_stat(r, p, m)->median, y = results_stat(r, q, m)->median;
			(*n)++;
			same += fabs(x - y) <= 0.01 * fmax(x, y);
		}
	}
	return same;
}

/* Why the largest jump: the spacing of its format at its LSEs (a split of
 * ctx / S keys with scores near 0 has its LSE near offset + ln(ctx / S)),
 * and what rounding a split across a boundary does to its weight. */
static void grid_sentence(FILE *f, const results *r, size_t m, const narr_jump *j)
{
	const char *fmt = results_get(r, j->point, "lse");
	double off, lse;
	int have_ctx;
	const double h = narr_jump_spacing(r, j, &off, &lse, &have_ctx);
	if (isnan(h))
		return;
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], d[NARR_NUM];
	fprintf(f, " At LSE offset %s, %s stores LSEs %s apart", narr_val(a, off), fmt, narr_num(b, h));
	if (have_ctx)
		fprintf(f, " (a split of ctx/S keys has its LSE near the offset + ln(ctx/S), %s at S = %s)",
			label_number(c, sizeof c, lse, 5), narr_val(d, j->s_a));
	fprintf(f, ": where the spacing exceeds the spread of the split LSEs they round to one value and the merge "
		   "weighs every split alike; where a rounding boundary falls among them, some round a whole spacing "
		   "away from the others and their weights move by a factor e^%s = %s. Which counts have a boundary "
		   "among their LSEs changes with ln(ctx/S): lse-grid maps it.",
		narr_num(a, h), narr_num(b, exp(h)));
	/* The alike weights, seen: two formats whose spacings both exceed the
	 * spread give the same error at the largest offset. */
	double hi = -INFINITY;
	for (size_t p = 0; p < r->npoints; p++) {
		double o;
		if (results_number(&o, r, p, "lse_offset", NULL) == SKV_OK)
			hi = fmax(hi, o);
	}
	size_t n = 0, same = narr_has_value(r, "lse", "fp16") && narr_has_value(r, "lse", "bf16")
				 ? same_weights(&n, r, m, "fp16", "bf16", hi) : 0;
	if (same * 2 > n)
		fprintf(f, " At offset %s, fp16 and bf16 give the same median error (within 1%%) at %zu of the %zu "
			   "split counts from 2: both weigh every split alike.",
			narr_val(a, hi), same, n);
}

static int lse_magnitude(FILE *f, const results *r, message *e)
{
	size_t m = narr_metric(r, "norm_rel_err");
	int rc = crossing_sentence(f, r, m, e);
	narr_jump j;
	if (!rc && results_varies(r, "splits"))
		rc = narr_jumps(f, r, m, "lse", &j, e);
	if (!rc && results_varies(r, "splits") && !isnan(j.ratio))
		grid_sentence(f, r, m, &j);
	if (!rc)
		narr_nan_sentence(f, r, m, 0);
	return rc;
}

const experiment exp_lse_magnitude = {
	{"lse-magnitude", KIND_SPLIT,
	 "error against the LSE magnitude (a constant score offset) for each LSE storage format",
	 "--ctx=4096 --head-dim=16 --splits=" CATALOG_DENSE_SPLITS " --lse-offset=0,10,100,300,1000,10000 "
	 "--lse=fp16,bf16,fp32,fp64 --input=fp32 --compute=fp64 --p=fp64 --partial=fp64 "
	 "--combine=fp64 --output=fp64 --merge=onepass --trials=8",
	 "Every stage but the LSE storage is fp64, so the error is the LSE format's own: an LSE of "
	 "magnitude M stored with unit roundoff u moves each merge weight by about M u; once the "
	 "spacing exceeds the spread of the split LSEs they round together and the merge degenerates. "
	 "Every split count from 1 to 64: where the split LSEs fall on the grid changes with the count. "
	 "head-dim 16 and 8 trials keep the 1632 points within the report's time."},
	"A constant offset added to every score leaves the exact output unchanged but moves every LSE by that much: "
	 "how large an LSE each storage format can hold before the merge weights go wrong, at every split count.",
	{"split-count", CHART_LINES, "splits", "lse_offset", "norm_rel_err",
	 "error against the number of KV splits at each LSE magnitude, per LSE storage format", NULL},
	lse_magnitude,
};
