/* kv_cache.c - the kv-cache experiment: error against the split count per KV cache format and scale granularity, against the stored cache and against the original K and V. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"

/* The merge's error is "visible next to the cache's" when the error
 * against the stored cache (the kernel's arithmetic and the merge) reaches
 * this fraction of the error against the original K and V (what the user
 * sees, the cache's own error included). */
#define KV_VISIBLE 0.1

/* Per configuration (cache format and scale granularity): the median
 * errors against the original at the first point and their spread over the
 * split counts and offsets, the largest error against the stored cache,
 * and the smallest split count at which that error is visible. */
typedef struct {
	double orig_first, orig_lo, orig_hi, stored_max, visible_s;
} kv_summary;

static int summarize(kv_summary *o, const results *r, const groups *g, size_t gi, size_t mo, size_t ms,
		     message *e)
{
	*o = (kv_summary){NAN, INFINITY, -INFINITY, -INFINITY, NAN};
	for (size_t p = 0; p < r->npoints; p++) {
		if (g->of_point[p] != gi)
			continue;
		const double so = results_stat(r, p, mo)->median, ss = results_stat(r, p, ms)->median;
		double s;
		int rc = results_number(&s, r, p, "splits", e);
		if (rc)
			return rc;
		if (isnan(o->orig_first))
			o->orig_first = so;
		o->orig_lo = fmin(o->orig_lo, so);
		o->orig_hi = fmax(o->orig_hi, so);
		o->stored_max = fmax(o->stored_max, ss);
		if (ss >= KV_VISIBLE * so && (isnan(o->visible_s) || s < o->visible_s))
			o->visible_s = s;
	}
	return SKV_OK;
}

/* "e4m3-sat: tensor 0.031, token 0.029; e2m1: ...": each cache format's
 * configurations with their error against the original. */
static void cost_sentence(FILE *f, const results *r, const groups *g, const kv_summary *k)
{
	char a[NARR_NUM];
	fputs("Against the original K and V (the orig_* columns: what a user of the cache sees) the median "
	      "normwise error at the first point of each curve is ", f);
	const char *prev = NULL;
	for (size_t i = 0; i < g->n; i++) {
		const char *c = groups_value(g, r, i, 0), *s = groups_value(g, r, i, 1);
		if (!prev || strcmp(prev, c) != 0)
			fprintf(f, "%s%s with ", prev ? "; " : "", c);
		else
			fputs(", ", f);
		fprintf(f, "%s scales %s", s, narr_num(a, k[i].orig_first));
		prev = c;
	}
	fputs(".", f);
}

static void split_sentence(FILE *f, const results *r, const groups *g, const kv_summary *k)
{
	char a[NARR_NUM], b[NARR_NUM], lab[NARR_LABEL];
	double spread = 0, smax = 0;
	size_t worst = 0, nvis = 0;
	for (size_t i = 0; i < g->n; i++) {
		const double sp = k[i].orig_hi / k[i].orig_lo;
		if (sp > spread)
			spread = sp, worst = i;
		smax = fmax(smax, k[i].stored_max / k[i].orig_first);
		nvis += !isnan(k[i].visible_s);
	}
	fprintf(f, " Over every split count and LSE offset of the sweep that error moves by at most %.2g%% (%s)",
		100 * (spread - 1), narr_group_label(lab, g, r, worst, NULL));
	fputs(spread < 1.1 ? ": the cache's error does not grow with the splits." : ".", f);
	if (nvis == 0) {
		fprintf(f, " Against the stored cache the kernel's arithmetic and the merge add at most %s of the "
			   "cache's error, so at no split count and no offset of the sweep does the merge's error "
			   "become visible next to it (reach %s of it).",
			narr_num(b, smax), narr_num(a, KV_VISIBLE));
		return;
	}
	fprintf(f, " The merge's error against the stored cache reaches %s of the cache's first at ",
		narr_num(a, KV_VISIBLE));
	for (size_t i = 0, j = 0; i < g->n; i++)
		if (!isnan(k[i].visible_s))
			fprintf(f, "%sS = %s (%s)", narr_sep(j++, nvis), narr_val(b, k[i].visible_s),
				narr_group_label(lab, g, r, i, NULL));
	fprintf(f, "%s.", nvis < g->n ? ", and never for the other configurations" : "");
}

static int kv_cache(FILE *f, const results *r, message *e)
{
	size_t mo, ms = narr_metric(r, "norm_rel_err"), mf;
	if (results_metric(r, "orig_norm_rel_err", &mo) != SKV_OK || !results_varies(r, "kv_cache"))
		return narr_generic(f, r, e);
	const char *keys[] = {"kv_cache", "kv_scale"};
	groups g;
	int rc = groups_make(&g, r, keys, 2, NULL, NULL);
	if (rc)
		return rc;
	kv_summary *k = calloc(g.n ? g.n : 1, sizeof *k);
	if (!k) {
		groups_free(&g);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; !rc && i < g.n; i++)
		rc = summarize(&k[i], r, &g, i, mo, ms, e);
	if (!rc && g.n) {
		cost_sentence(f, r, &g, k);
		split_sentence(f, r, &g, k);
		char a[NARR_NUM];
		if (results_metric(r, "floor_err", &mf) == SKV_OK)
			fprintf(f, " The output format's floor (the exact output rounded once to it) is %s.",
				narr_num(a, results_stat(r, 0, mf)->median));
		narr_nan_sentence(f, r, mo, 0);
	}
	free(k);
	groups_free(&g);
	return rc;
}

const experiment exp_kv_cache = {
	{"kv-cache", KIND_SPLIT,
	 "error of the merged output against the number of KV splits for each quantized KV cache format and scale "
	 "granularity, against the stored cache and against the original K and V",
	 "--ctx=4096 --head-dim=128 --splits=1,4,16,64,256 --lse-offset=0,1000 --input=bf16 --compute=fp32 --p=bf16 "
	 "--partial=fp32 --lse=fp32 --combine=fp32 --output=bf16 --merge=onepass --kv-cache=e4m3-sat,e5m2-sat,e2m1 "
	 "--kv-scale=tensor,token,mx,nvfp4 --kv-deq=values --trials=3",
	 "bf16 tensors stored in 8- and 4-bit caches (saturating, as vLLM stores with __NV_SATFINITE) with each "
	 "scale granularity, read by an FA2-like kernel (fp32 arithmetic, P in bf16, fp32 partials and LSEs, a "
	 "bf16 output whose floor the chart draws), "
	 "at LSE offsets 0 and 1000: the norm_rel_err columns are the kernel's and the merge's error on the "
	 "stored cache, the orig_* columns add the cache's own."},
	"What storing K and V in an 8- or 4-bit cache costs, for each scale granularity that serving systems use "
	"(one scale per tensor, per token, per block of 32 with an e8m0 scale as OCP MX, per block of 16 with an "
	"e4m3 scale over an fp32 tensor scale as NVFP4), and whether the split count and the merge add to it. "
	"The chart shows the error against the original K and V; the findings compare it with the error the "
	"kernel and the merge make on the stored cache.",
	{"split-count", CHART_LINES, "splits", "kv_cache", "orig_norm_rel_err",
	 "error against the original K and V, by cache format (panels) and scale granularity", NULL},
	kv_cache,
};
