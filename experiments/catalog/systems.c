/* systems.c - the systems experiment: every production-kernel preset side by side. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

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

/* The table of every operating point (curve i of cv), its presets from
 * most to least accurate; first[j] and last[j] count the points where
 * preset j (a group of pre) is the best and the worst production preset. */
static void ranking_table(FILE *t, size_t *first, size_t *last, size_t *ord, const results *r, const narr_curves *cv,
			  const groups *pre, size_t m)
{
	char a[NARR_NUM], lab[NARR_LABEL];
	fputs("| operating point | presets from most to least accurate (median normwise error) |\n|---|---|\n", t);
	for (size_t i = 0; i < cv->g.n; i++) {
		size_t k = 0;
		for (size_t p = 0; p < r->npoints; p++)
			if (cv->g.of_point[p] == i) {
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
			first[pre->of_point[ord[lo]]]++;
			last[pre->of_point[ord[hi]]]++;
		}
		fprintf(t, "| %s |", cv->nk ? narr_group_label(lab, &cv->g, r, i, NULL) : r->name);
		for (size_t j = 0; j < k; j++)
			fprintf(t, "%s %s (%s)", j ? "," : "", results_get(r, ord[j], "preset"),
				narr_num(a, results_stat(r, ord[j], m)->median));
		fputs(" |\n", t);
	}
}

/* How far each preset sits above its output format's floor: the exact
 * answer rounded once to the output format, which no kernel beats. */
static void floor_sentence(FILE *f, const results *r, const groups *pre, size_t m, size_t fm)
{
	char a[NARR_NUM];
	fputs(" Against the floor (the exact output rounded once to the preset's output format), the largest "
	      "ratio of median error to median floor over the operating points is ", f);
	for (size_t j = 0; j < pre->n; j++) {
		double worst = 0.0;
		for (size_t p = 0; p < r->npoints; p++) {
			if (pre->of_point[p] != j)
				continue;
			double e = results_stat(r, p, m)->median, fl = results_stat(r, p, fm)->median;
			if (fl > 0.0 && !isnan(e))
				worst = fmax(worst, e / fl);
		}
		fprintf(f, "%s%s (%s)", narr_sep(j, pre->n), narr_num(a, worst), groups_value(pre, r, j, 0));
	}
	fputs(": near 1, the kernel and merge add nothing to the output rounding; far above it, they "
	      "dominate.", f);
}

static int systems(FILE *f, const results *r, message *e)
{
	(void)e;
	if (!results_varies(r, "preset"))
		return SKV_EINVAL;
	size_t m = narr_metric(r, "norm_rel_err");
	const char *ex[] = {"preset"}, *pk = "preset";
	narr_curves cv;
	groups pre;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, 0);
	if (rc)
		return rc;
	if ((rc = groups_make(&pre, r, &pk, 1, NULL, NULL))) {
		narr_curves_free(&cv);
		return rc;
	}
	size_t *ord = malloc(r->npoints * sizeof *ord);
	size_t *first = calloc(pre.n, sizeof *first), *last = calloc(pre.n, sizeof *last);
	char *table = NULL;
	size_t tlen = 0;
	FILE *t = ord && first && last ? open_memstream(&table, &tlen) : NULL;
	rc = t ? SKV_OK : SKV_ENOMEM;
	if (t) {
		ranking_table(t, first, last, ord, r, &cv, &pre, m);
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
				groups_value(&pre, r, bi, 0), first[bi], cv.g.n, groups_value(&pre, r, wi, 0), last[wi]);
		size_t fm;
		if (results_metric(r, "floor_err", &fm) == SKV_OK)
			floor_sentence(f, r, &pre, m, fm);
		narr_nan_sentence(f, r, m, 1);
		fprintf(f, "\n\n%s", table);
	}
	free(table), free(ord), free(first), free(last);
	narr_curves_free(&cv);
	groups_free(&pre);
	return rc;
}

const experiment exp_systems = {
	{"systems", KIND_SPLIT,
	 "every production-kernel preset side by side over split counts and LSE magnitudes",
	 "--preset=" NO_KV_PRESETS " --math=exact --ctx=8192 --head-dim=128 --splits=1,4,16,64,256 --lse-offset=0,50,500 --trials=8",
	 "Each preset fixes what a real system does (skv list shows every field with its source): the "
	 "stage formats, LSE base, score and LSE formulas, block order, accumulator, exp-sum lanes, merge "
	 "rule, order, normalisation and empty-split mode; the offsets put the LSEs near 0, 50 and 500. "
	 "Arithmetic is correctly rounded here (the approx-math experiment adds the systems' approximate "
	 "math). The error mixes the split kernel's own (bf16 inputs, P rounded or not) with the storage "
	 "and merge: read exact-fp64 and naive-fp16 as the two ends."},
	"The precision profiles of production attention kernels (presets) side by side over split counts and LSE "
	 "offsets.",
	{"split-count", CHART_LINES, "splits", "lse_offset", "norm_rel_err",
	 "production kernels' precision profiles against the number of splits", "exact-fp64"},
	systems,
};
