/* merge_rule.c - the merge-rule experiment: LSE-weighted merges against the plain mean and sum of the partials. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

static int merge_rule(FILE *f, const results *r, message *e)
{
	(void)e;
	size_t m = narr_metric(r, "norm_rel_err");
	char a[NARR_NUM], b[NARR_NUM], lab[NARR_LABEL];
	const char *ex[] = {"merge"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, 0);
	if (rc)
		return rc;
	const groups *g = &cv.g;
	const size_t nk = cv.nk;
	for (size_t i = 0; i < g->n; i++) {
		double rm, rs, rw;
		size_t best, bs, bw;
		int hm = find_ratio(&rm, &best, r, g, i, "merge", "mean", narr_weighted, NARR_NWEIGHTED, m) == SKV_OK;
		int hs = find_ratio(&rs, &bs, r, g, i, "merge", "sum", narr_weighted, NARR_NWEIGHTED, m) == SKV_OK;
		if (!hm && !hs)
			continue;
		if (!hm)
			best = bs;
		fprintf(f, "%s%s", i ? " " : "", nk ? narr_group_label(lab, g, r, i, NULL) : "");
		fputs(nk ? ": the" : "The", f);
		if (hm)
			fprintf(f, " plain mean's median normwise error is %s times", narr_num(a, rm));
		if (hm && hs)
			fputs(", and the", f);
		if (hs)
			fprintf(f, " plain sum's %s times", narr_num(b, rs));
		fprintf(f, " that of the better LSE-weighted merge (%s, %s).", results_get(r, best, "merge"),
			narr_num(a, results_stat(r, best, m)->median));
		/* How far apart the weighted merges are from each other. */
		const char *other[] = {"onepass", "pairwise"};
		if (find_ratio(&rw, &bw, r, g, i, "merge", strcmp(results_get(r, best, "merge"), "onepass") ? "onepass" : "pairwise",
				   other, 2, m) == SKV_OK)
			fprintf(f, " The other weighted merge is within a factor %s of it.", narr_num(a, rw));
	}
	narr_curves_free(&cv);
	narr_nan_sentence(f, r, m, 0);
	return SKV_OK;
}

const experiment exp_merge_rule = {
	{"merge-rule", KIND_SPLIT,
	 "LSE-weighted merges (onepass, pairwise) against the plain mean and sum of the partials",
	 "--ctx=1024 --head-dim=8 --splits=8 --score-scale=1 --lse-base=2 --merge=onepass,pairwise,mean,sum "
	 "--input=fp64 --compute=fp64 --p=fp64 --partial=fp64 --lse=fp64 --combine=fp64 --output=fp64 "
	 "--trials=32",
	 "The first demonstration of skv's original problem statement (the split-KV combine check of "
	 "TileLang's flash-decoding example: head-dim 8, 1024 keys, 8 splits, base 2, q ~ N(0, 1)) in "
	 "fp64 throughout: the weighted merges sit at fp64 roundoff, mean and sum are wrong by orders "
	 "of magnitude."},
	"The LSE-weighted merges (one pass, pairwise) against the plain mean and sum of the partials, which ignore "
	 "the LSEs.",
	{"merge-rule", CHART_BARS, "merge", NULL, "norm_rel_err",
	 "LSE-weighted merges against the plain mean and sum of the partials", NULL},
	merge_rule,
};
