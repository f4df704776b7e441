/* block_size.c - the block-size experiment: online softmax attention against its block size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"
#include "results/labels.h"

/* The change from the smallest to the largest block, as a factor, at its
 * least and its most, and the range of the fitted slopes. */
static void factor_sentence(FILE *f, const results *r, const narr_curves *cv)
{
	const find_trend *t = cv->per;
	const groups *g = &cv->g;
	char a[NARR_NUM], b[NARR_NUM], c[NARR_NUM], d[NARR_NUM], lab[NARR_LABEL], lab2[NARR_LABEL];
	size_t lo = 0, hi = 0;
	double slo = INFINITY, shi = -INFINITY;
	for (size_t i = 0; i < g->n; i++) {
		double fi = t[i].y_last / t[i].y_first, flo = t[lo].y_last / t[lo].y_first,
		       fhi = t[hi].y_last / t[hi].y_first;
		lo = fi < flo ? i : lo;
		hi = fi > fhi ? i : hi;
		if (!isnan(t[i].slope))
			slo = fmin(slo, t[i].slope), shi = fmax(shi, t[i].slope);
	}
	fprintf(f, "From block size %s to %s the median normwise error changes by a factor of %s (%s) to %s (%s)",
		narr_val(a, t[0].x_first), narr_val(b, t[0].x_last), narr_num(c, t[lo].y_last / t[lo].y_first),
		cv->nk ? narr_group_label(lab, g, r, lo, NULL) : r->name, narr_num(d, t[hi].y_last / t[hi].y_first),
		cv->nk ? narr_group_label(lab2, g, r, hi, NULL) : r->name);
	if (slo <= shi)
		fprintf(f, "; the fitted log-log slopes lie between %.2f and %.2f", slo, shi);
	fputs(".", f);
}

/* Causal attention against the single decode row, over the configurations
 * that ran both. */
static int causal_sentence(FILE *f, const results *r, size_t m)
{
	const char *ex[] = {"causal"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, 0);
	if (rc)
		return rc;
	const char *nc[] = {"0"};
	char a[NARR_NUM], b[NARR_NUM];
	double lo = INFINITY, hi = -INFINITY;
	size_t n = 0, best;
	for (size_t i = 0; i < cv.g.n; i++) {
		double q;
		if (find_ratio(&q, &best, r, &cv.g, i, "causal", "1", nc, 1, m) == SKV_OK && !isnan(q)) {
			lo = fmin(lo, q), hi = fmax(hi, q);
			n++;
		}
	}
	if (n)
		fprintf(f, " Causal attention (every query row, each over its prefix) has %s to %s times the median "
			   "error of the single decode row, over the %zu matching configurations.",
			narr_num(a, lo), narr_num(b, hi), n);
	narr_curves_free(&cv);
	return SKV_OK;
}

static int block_size(FILE *f, const results *r, message *e)
{
	size_t m = narr_metric(r, "norm_rel_err");
	const char *ex[] = {"block_size"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(find_trend));
	if (rc)
		return rc;
	rc = find_trends(cv.per, r, &cv.g, "block_size", m, e);
	if (!rc && cv.g.n)
		factor_sentence(f, r, &cv);
	narr_curves_free(&cv);
	if (!rc && results_varies(r, "causal"))
		rc = causal_sentence(f, r, m);
	if (rc)
		return rc;
	narr_nan_sentence(f, r, m, 0);
	return SKV_OK;
}


const experiment exp_block_size = {
	{"block-size", KIND_ONLINE,
	 "online softmax attention against its block size, per compute format, causal and not",
	 "--ctx=256 --head-dim=64 --dist=gaussian,ramp --block-size=1,2,4,8,16,32,64,128,256 --causal=0,1 "
	 "--input=fp32 --compute=fp16,bf16,fp32 --p=fp32 --output=fp32 --trials=8",
	 "Whether the block size of the online softmax matters: each block rescales the running max, "
	 "sum and output in the compute format; one block (256) rescales nothing. The ramp "
	 "distribution (a recency bias of 8 nats across the context) moves the running max at every "
	 "block, the worst case for rescaling. Causal runs all 256 rows, each over its own prefix; "
	 "non-causal one decode row."},
	"Online softmax attention (no splits): how the block size, and with it the number of rescalings of the "
	 "running state, changes the error in each compute format, for one decode row and for causal attention.",
	{"split-count", CHART_LINES, "block_size", "dist", "norm_rel_err",
	 "online softmax attention error against its block size", NULL},
	block_size,
};
