/* reduction_order.c - the reduction-order experiment: spread of the error across reduction orders of the merge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

/* The second measure of the spread, beside the first (m): with the
 * normwise ulps first, the elementwise ulp_err (in ulps of each element,
 * which the smallest elements set); with ulp_err first (a CSV without
 * norm_ulp_err), the normwise relative error in units of the output
 * format's unit roundoff u (*scale). NULL when the CSV has neither. */
static find_spread *second_spread(size_t *m2, double *scale, const results *r, const groups *g, size_t m)
{
	skv_format of;
	const char *out = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
	const int normwise = strcmp(csv_colname(&r->csv, r->metric_col[m]), "norm_ulp_err") == 0;
	*scale = 1;
	if (normwise ? results_metric(r, "ulp_err", m2) != SKV_OK
		     : results_metric(r, "norm_rel_err", m2) != SKV_OK || !out || skv_format_parse(&of, out) != SKV_OK)
		return NULL;
	if (!normwise)
		*scale = skv_format_unit_roundoff(of);
	find_spread *s = malloc((g->n ? g->n : 1) * sizeof *s);
	if (s && find_spreads(s, r, g, *m2) != SKV_OK) {
		free(s);
		s = NULL;
	}
	return s;
}

static void extremes(size_t *lo, size_t *hi, size_t *top, const find_spread *s, size_t n)
{
	*lo = *hi = *top = 0;
	for (size_t i = 1; i < n; i++) {
		*lo = s[i].median < s[*lo].median ? i : *lo;
		*hi = s[i].median > s[*hi].median ? i : *hi;
		*top = s[i].max > s[*top].max ? i : *top;
	}
}

static void spread_table(FILE *f, const results *r, const narr_curves *cv, const find_spread *s, const find_spread *s2,
			 double scale, size_t m, const char *u, const char *u2)
{
	char a[NARR_NUM], b[NARR_NUM], c1[NARR_NUM], c2[NARR_NUM], c3[NARR_NUM], lab[NARR_LABEL];
	fprintf(f, "\n\n| configuration | median spread (%s) | largest spread |%s%s%s lowest median error | highest "
		   "median error | trials |\n|---|---:|---:|%s---|---|---:|\n",
		u, s2 ? " " : "", s2 ? u2 : "", s2 ? " |" : "", s2 ? "---:|" : "");
	for (size_t i = 0; i < cv->g.n; i++) {
		fprintf(f, "| %s | %s | %s |", cv->nk ? narr_group_label(lab, &cv->g, r, i, NULL) : r->name,
			narr_num(a, s[i].median), narr_num(b, s[i].max));
		if (s2)
			fprintf(f, " %s |", narr_num(c3, s2[i].median / scale));
		fprintf(f, " %s (%s) | %s (%s) | %zu |\n", results_get(r, s[i].lo, "order"),
			narr_num(c1, results_stat(r, s[i].lo, m)->median), results_get(r, s[i].hi, "order"),
			narr_num(c2, results_stat(r, s[i].hi, m)->median), s[i].ntrials);
	}
}

static int reduction_order(FILE *f, const results *r, message *e)
{
	(void)e;
	/* Normwise ulps (of the output's largest element) when the CSV has
	 * them: the unit a reader judges a spread by; one near-zero element
	 * sets the elementwise count. */
	size_t m = narr_metric(r, "norm_ulp_err"), m2;
	if (strcmp(csv_colname(&r->csv, r->metric_col[m]), "norm_ulp_err") != 0)
		m = narr_metric(r, "ulp_err");
	const int normwise = strcmp(csv_colname(&r->csv, r->metric_col[m]), "norm_ulp_err") == 0;
	char a[NARR_NUM], b[NARR_NUM], u[96], u2[96], lab[NARR_LABEL];
	narr_unit(u, sizeof u, r, m);
	const char *ex[] = {"order"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(find_spread));
	if (rc)
		return rc;
	const groups *g = &cv.g;
	find_spread *s = cv.per, *s2 = NULL;
	double scale = 1;
	rc = find_spreads(s, r, g, m);
	if (!rc && g->n)
		s2 = second_spread(&m2, &scale, r, g, m);
	if (!rc && g->n) {
		size_t lo, hi, top;
		extremes(&lo, &hi, &top, s, g->n);
		fprintf(f, "On the same random instance, changing only the reduction order (%zu order%s) moves the "
			   "largest error by a median of %s to %s %s across the configurations in the table below",
			s[0].npoints, s[0].npoints == 1 ? "" : "s", narr_num(a, s[lo].median), narr_num(b, s[hi].median), u);
		fprintf(f, ", and by at most %s (%s).", narr_num(a, s[top].max), cv.nk ? narr_group_label(lab, g, r, top, NULL) : r->name);
		if (s2) {
			extremes(&lo, &hi, &top, s2, g->n);
			snprintf(u2, sizeof u2, normwise ? "median spread (elementwise ulps)" : "median spread, normwise (u)");
			const char *out = results_get(r, 0, "output");
			if (normwise)
				fprintf(f, " Counted elementwise instead (ulp_err, each error in ulps of its own element), the "
					   "same spreads read %s to %s: that count is set by the output's smallest elements, "
					   "whose ulps are tiny.",
					narr_num(a, s2[lo].median), narr_num(b, s2[hi].median));
			else
				fprintf(f, " That ulp count is set by the output's smallest elements; normwise, the order moves "
					   "||o - o*||_2 / ||o*||_2 by a median of %s to %s units of %s's unit roundoff u.",
					narr_num(a, s2[lo].median / scale), narr_num(b, s2[hi].median / scale), out);
		}
		spread_table(f, r, &cv, s, s2, scale, m, normwise ? "normwise ulps" : u, u2);
	}
	free(s2);
	narr_curves_free(&cv);
	if (!rc)
		narr_nan_sentence(f, r, m, 0);
	return rc;
}

const experiment exp_reduction_order = {
	{"reduction-order", KIND_SPLIT,
	 "spread of the error across reduction orders for both real merges, one random permutation per trial",
	 "--ctx=2048 --head-dim=64 --splits=64 --order=seq,rev,tree,random,asc,desc,strided --merge-threads=8 "
	 "--merge=onepass,pairwise --input=fp32 --compute=fp32 --p=fp32 --partial=fp16,fp32 --lse=fp32 "
	 "--combine=fp16,fp32 --output=fp32 --trials=32",
	 "The merge's own rounding depends on the order: with an fp16 combine it shows at the 1e-3 "
	 "level; with fp32 partials and combine at the 1e-7 level; with fp16 partials and an fp32 "
	 "combine the storage error hides it. strided is FlashInfer's order with 8 threads. Outputs are "
	 "fp32 so its ulps (norm_ulp_err, at the largest element) resolve the spread."},
	"The same partials merged in different orders: how much the order alone moves the result, in units in the "
	 "last place of the output's largest element.",
	{"reduction-order", CHART_BOXES, "order", "combine", "norm_ulp_err",
	 "the error across reduction orders of the merge, in ulps of the output's largest element", NULL},
	reduction_order,
};
