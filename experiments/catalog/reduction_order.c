/* reduction_order.c - the reduction-order experiment: spread of the error across reduction orders of the merge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

static int reduction_order(FILE *f, const results *r, message *e)
{
	(void)e;
	size_t m = narr_metric(r, "ulp_err");
	char a[NARR_NUM], b[NARR_NUM], u[64], lab[NARR_LABEL];
	narr_unit(u, sizeof u, r, m);
	const char *ex[] = {"order"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(find_spread));
	if (rc)
		return rc;
	const groups *g = &cv.g;
	const size_t nk = cv.nk;
	find_spread *s = cv.per;
	rc = find_spreads(s, r, g, m);
	/* The ulp metric is a max over elements and the smallest elements have
	 * the smallest ulps: the normwise error in units of the output format's
	 * unit roundoff says how far the order moves the output as a whole. */
	size_t mn;
	skv_format of;
	const char *outname = results_varies(r, "output") ? NULL : results_get(r, 0, "output");
	int normwise = results_metric(r, "norm_rel_err", &mn) == SKV_OK && outname &&
		       skv_format_parse(&of, outname) == SKV_OK;
	find_spread *sn = normwise ? malloc((g->n ? g->n : 1) * sizeof *sn) : NULL;
	if (!rc && normwise && (!sn || find_spreads(sn, r, g, mn) != SKV_OK)) {
		free(sn);
		sn = NULL;
	}
	const double uo = sn ? skv_format_unit_roundoff(of) : 0.0;
	if (!rc && g->n) {
		size_t lo = 0, hi = 0, top = 0;
		for (size_t i = 1; i < g->n; i++) {
			lo = s[i].median < s[lo].median ? i : lo;
			hi = s[i].median > s[hi].median ? i : hi;
			top = s[i].max > s[top].max ? i : top;
		}
		fprintf(f, "On the same random instance, changing only the reduction order (%zu orders) moves the "
			   "largest error by a median of %s to %s %s across the configurations in the table below",
			s[0].npoints, narr_num(a, s[lo].median), narr_num(b, s[hi].median), u);
		fprintf(f, ", and by at most %s (%s).", narr_num(a, s[top].max), nk ? narr_group_label(lab, g, r, top, NULL) : r->name);
		if (sn) {
			size_t nlo = 0, nhi = 0;
			for (size_t i = 1; i < g->n; i++) {
				nlo = sn[i].median < sn[nlo].median ? i : nlo;
				nhi = sn[i].median > sn[nhi].median ? i : nhi;
			}
			fprintf(f, " That ulp count is set by the output's smallest elements; normwise, the order moves "
				   "||o - o*||_2 / ||o*||_2 by a median of %s to %s units of %s's unit roundoff u.",
				narr_num(a, sn[nlo].median / uo), narr_num(b, sn[nhi].median / uo), outname);
		}
		fprintf(f, "\n\n| configuration | median spread (%s) | largest spread |%s lowest median error | highest "
			   "median error | trials |\n|---|---:|---:|%s---|---|---:|\n",
			u, sn ? " median spread, normwise (u) |" : "", sn ? "---:|" : "");
		for (size_t i = 0; i < g->n; i++) {
			char c1[NARR_NUM], c2[NARR_NUM], c3[NARR_NUM];
			fprintf(f, "| %s | %s | %s |", nk ? narr_group_label(lab, g, r, i, NULL) : r->name, narr_num(a, s[i].median),
				narr_num(b, s[i].max));
			if (sn)
				fprintf(f, " %s |", narr_num(c3, sn[i].median / uo));
			fprintf(f, " %s (%s) | %s (%s) | %zu |\n", results_get(r, s[i].lo, "order"),
				narr_num(c1, results_stat(r, s[i].lo, m)->median), results_get(r, s[i].hi, "order"),
				narr_num(c2, results_stat(r, s[i].hi, m)->median), s[i].ntrials);
		}
	}
	free(sn);
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
	 "fp32 so ulp_err resolves the spread."},
	"The same partials merged in different orders: how much the order alone moves the result, in units in the "
	 "last place of the output format.",
	{"reduction-order", CHART_BOXES, "order", "combine", "ulp_err",
	 "spread of the error across reduction orders of the merge", NULL},
	reduction_order,
};
