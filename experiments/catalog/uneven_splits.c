/* uneven_splits.c - the uneven-splits experiment: uneven boundaries and empty splits, for every merge rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

static int uneven_splits(FILE *f, const results *r, message *e)
{
	(void)e;
	size_t m = narr_metric(r, "norm_rel_err");
	char a[NARR_NUM], lab[NARR_LABEL];
	const char *ex[] = {"layout"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, 0);
	if (rc)
		return rc;
	const groups *g = &cv.g;
	const size_t nk = cv.nk;
	/* Per configuration: the worst layout's median against even splits'. */
	double worst[2] = {-INFINITY, -INFINITY};
	size_t wg[2] = {NO_GROUP, NO_GROUP}, wp[2] = {0, 0};
	const char *even[] = {"even"};
	for (size_t i = 0; i < g->n; i++) {
		int w = narr_is_weighted(results_get(r, g->first[i], "merge")) || !results_get(r, g->first[i], "merge");
		for (size_t p = 0; p < r->npoints; p++) {
			double ratio;
			size_t base;
			if (g->of_point[p] != i)
				continue;
			if (find_ratio(&ratio, &base, r, g, i, "layout", results_get(r, p, "layout"), even, 1, m) ||
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
			narr_num(a, worst[1]), results_get(r, wp[1], "layout"), nk ? narr_group_label(lab, g, r, wg[1], NULL) : r->name);
	if (wg[0] != NO_GROUP)
		fprintf(f, "%sor the plain mean and sum, which ignore the split sizes, the factor reaches %s (layout %s, %s).",
			wg[1] != NO_GROUP ? " F" : "F", narr_num(a, worst[0]), results_get(r, wp[0], "layout"),
			nk ? narr_group_label(lab, g, r, wg[0], NULL) : r->name);
	narr_curves_free(&cv);
	narr_nan_sentence(f, r, m, 1);
	return SKV_OK;
}

const experiment exp_uneven_splits = {
	{"uneven-splits", KIND_SPLIT,
	 "uneven boundaries and empty splits (layouts even, random, skewed, holes) for every merge rule",
	 "--ctx=4096 --head-dim=64 --splits=16,128 --layout=even,random,skewed,holes "
	 "--merge=onepass,pairwise,mean,sum --input=fp32 --compute=fp32 --p=fp32 --partial=fp32 "
	 "--lse=fp32 --combine=fp32 --output=fp32 --trials=16",
	 "The weighted merges stay at the fp32 kernel floor whatever the boundaries and skip empty "
	 "splits without NaN; the mean and sum, which ignore the split sizes, are wrong, most of all "
	 "when the sizes are skewed."},
	"Uneven split boundaries and empty splits: whether each merge rule stays accurate and free of NaN.",
	{"merge-rule", CHART_BARS, "layout", "splits", "norm_rel_err",
	 "uneven and empty splits, per merge rule", NULL},
	uneven_splits,
};
