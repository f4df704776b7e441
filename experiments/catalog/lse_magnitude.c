/* lse_magnitude.c - the lse-magnitude experiment: error against the LSE magnitude, per LSE storage format. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

static int lse_magnitude(FILE *f, const results *r, message *e)
{
	size_t m = narr_metric(r, "norm_rel_err");
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
	if (!rc)
		narr_nan_sentence(f, r, m, 0);
	return rc;
}

const experiment exp_lse_magnitude = {
	{"lse-magnitude", KIND_SPLIT,
	 "error against the LSE magnitude (a constant score offset) for each LSE storage format",
	 "--ctx=4096 --head-dim=128 --splits=4,32,256 --lse-offset=0,10,100,1000,10000 "
	 "--lse=fp16,bf16,fp32,fp64 --input=fp32 --compute=fp64 --p=fp64 --partial=fp64 "
	 "--combine=fp64 --output=fp64 --merge=onepass --trials=16",
	 "Every stage but the LSE storage is fp64, so the error is the LSE format's own: an LSE of "
	 "magnitude M stored with unit roundoff u moves each merge weight by about M u; once the "
	 "spacing exceeds the spread of the split LSEs they round together and the merge degenerates."},
	"A constant offset added to every score leaves the exact output unchanged but moves every LSE by that much: "
	 "how large an LSE each storage format can hold before the merge weights go wrong.",
	{"lse-magnitude", CHART_LINES, "lse_offset", "splits", "norm_rel_err",
	 "error against the magnitude of the LSEs, per LSE storage format", NULL},
	lse_magnitude,
};
