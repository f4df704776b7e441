/* approx_math.c - the approx-math experiment: each preset's approximate GPU math (a bound model) against correctly rounded arithmetic. */
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"

/* For each preset and LSE offset, the ratio of the median error with the
 * preset's own math to that with exact math; the sentence gives the
 * largest and smallest ratio and where. */
typedef struct {
	double ratio;
	size_t exact, own;
} math_pair;

static int approx_math(FILE *f, const results *r, message *e)
{
	(void)e;
	if (!results_varies(r, "math"))
		return narr_generic(f, r, e);
	const size_t m = narr_metric(r, "norm_rel_err");
	const char *ex[] = {"math"};
	narr_curves cv;
	int rc = narr_curves_make(&cv, r, ex, 1, NULL, NULL, sizeof(math_pair));
	if (rc)
		return rc;
	math_pair *mp = cv.per;
	for (size_t i = 0; i < cv.g.n; i++)
		mp[i] = (math_pair){NAN, NO_GROUP, NO_GROUP};
	for (size_t p = 0; p < r->npoints; p++) {
		const size_t i = cv.g.of_point[p];
		if (i == NO_GROUP)
			continue;
		if (strcmp(results_get(r, p, "math"), "exact") == 0)
			mp[i].exact = p;
		else
			mp[i].own = p;
	}
	size_t hi = NO_GROUP, lo = NO_GROUP;
	for (size_t i = 0; i < cv.g.n; i++) {
		if (mp[i].exact == NO_GROUP || mp[i].own == NO_GROUP)
			continue;
		const double a = results_stat(r, mp[i].exact, m)->median, b = results_stat(r, mp[i].own, m)->median;
		mp[i].ratio = a > 0 ? b / a : NAN;
		if (isnan(mp[i].ratio))
			continue;
		hi = hi == NO_GROUP || mp[i].ratio > mp[hi].ratio ? i : hi;
		lo = lo == NO_GROUP || mp[i].ratio < mp[lo].ratio ? i : lo;
	}
	char a[NARR_NUM], b[NARR_NUM], la[NARR_LABEL], lb[NARR_LABEL];
	if (hi != NO_GROUP)
		fprintf(f,
			"With each preset's own math (its kernels' approximate exp, log and division, modelled as the "
			"correctly rounded result moved within the documented error bound, drawn per trial), the "
			"median normwise error is between %s (%s) and %s (%s) times that with correctly rounded "
			"arithmetic. The model bounds what the approximations can do; it does not reproduce a "
			"GPU's bits.",
			narr_num(a, mp[lo].ratio), narr_group_label(la, &cv.g, r, lo, NULL), narr_num(b, mp[hi].ratio),
			narr_group_label(lb, &cv.g, r, hi, NULL));
	narr_nan_sentence(f, r, m, 0);
	narr_curves_free(&cv);
	return SKV_OK;
}

const experiment exp_approx_math = {
	{"approx-math", KIND_SPLIT,
	 "each preset's approximate GPU math (a bound model) against correctly rounded arithmetic",
	 "--preset=fa2,fa3,flashinfer,tilelang,xformers,sglang,flex,vllm-v2,vllm-unified,llamacpp-cuda,sglang-gqa "
	 "--math=exact,own --ctx=8192 --head-dim=128 --splits=16 --lse-offset=0,500 --trials=16",
	 "Every GPU preset's kernels use approximate instructions (ex2.approx, lg2.approx, rcp.approx, "
	 "__expf, __fdividef) or the CUDA library's 1-2 ulp functions (TileLang); math own replaces each "
	 "fp32 exp, log and division of the kernel and the merge by the correctly rounded result moved "
	 "within the instruction's documented maximum error (PTX ISA 9.1, CUDA Programming Guide tables 17 "
	 "and 21), deterministically per trial. exact is skv's correctly rounded arithmetic."},
	"Each preset's approximate GPU math, as a bound model (results moved within the documented error of the "
	 "approximate instructions), against correctly rounded arithmetic.",
	{"merge-rule", CHART_BARS, "preset", "lse_offset", "norm_rel_err",
	 "approximate GPU math (bound model) against correctly rounded arithmetic", NULL},
	approx_math,
};
