/* tensor_cores.c - the tensor-cores experiment: each tensor-core preset's q.k and P.V in IEEE fp32 against the GPUs' tensor-core arithmetic, and the findings both tensor-core experiments share. */
#include <math.h>
#include <string.h>

#include "catalog/catalog.h"
#include "catalog/narrate.h"

/* The GPUs of r other than ieee, in the order the rows first name them. */
static size_t gpus_of(const char **g, size_t cap, const results *r)
{
	size_t n = 0;
	for (size_t p = 0; p < r->npoints; p++) {
		const char *v = results_get(r, p, "gpu");
		size_t k = 0;
		while (k < n && strcmp(g[k], v) != 0)
			k++;
		if (k == n && n < cap && strcmp(v, "ieee") != 0)
			g[n++] = v;
	}
	return n;
}

/* The findings of both tensor-core experiments: for every point computed on
 * a GPU's tensor cores, the ratio of its median normwise error to that of
 * the same point in IEEE arithmetic (results/narrate's narr_ratios_to), the
 * extremes over all points, how many medians did not move, and each GPU's
 * range. */
int tc_findings(FILE *f, const results *r, message *e)
{
	if (!results_varies(r, "gpu") || !narr_has_value(r, "gpu", "ieee"))
		return narr_generic(f, r, e);
	const size_t m = narr_metric(r, "norm_rel_err");
	const char *keys[NARR_KEYS], *g[SKV_NGPUS];
	const size_t nk = narr_keys_except(r, keys, NULL, 0), ng = gpus_of(g, SKV_NGPUS, r);
	narr_ratios all;
	int rc = narr_ratios_to(&all, r, "gpu", "ieee", NULL, m);
	if (rc || all.n == 0)
		return rc ? rc : narr_generic(f, r, e);
	char a[NARR_NUM], b[NARR_NUM], la[NARR_LABEL], lb[NARR_LABEL];
	fprintf(f,
		"Computing q.k and P.V as the GPUs' tensor cores do (blocks of exact products aligned to the largest "
		"exponent with truncated bits, normalised once, rounded toward zero) instead of as IEEE fma chains "
		"moves the median normwise error by between %s (%s) and %s (%s); %zu of the %zu medians do not "
		"move.",
		narr_pct(a, all.rlo), narr_point_label(la, r, all.lo, keys, nk), narr_pct(b, all.rhi),
		narr_point_label(lb, r, all.hi, keys, nk), all.equal, all.n);
	fputs(" Per GPU, from the smallest to the largest change:", f);
	for (size_t i = 0; i < ng; i++) {
		narr_ratios one;
		if ((rc = narr_ratios_to(&one, r, "gpu", "ieee", g[i], m)) != SKV_OK)
			return rc;
		if (one.n)
			fprintf(f, "%s %s %s to %s", i ? ";" : "", g[i], narr_pct(a, one.rlo), narr_pct(b, one.rhi));
	}
	fputs(".\n", f);
	narr_nan_sentence(f, r, m, 0);
	return SKV_OK;
}

const experiment exp_tensor_cores = {
	{"tensor-cores", KIND_SPLIT,
	 "each tensor-core preset's q.k and P.V in IEEE fp32 against the a100, h100 and b200 tensor-core models",
	 "--preset=fa2,fa3,tilelang,flex,xformers,sglang-gqa,vllm-unified --math=exact --gpu=ieee,a100,h100,b200 "
	 "--ctx=4096 --head-dim=128 --splits=1,64 --trials=4",
	 "The presets whose kernels issue MMA instructions (skv list: tensor-cores 1), each as it runs (bf16 or "
	 "fp16 inputs, P rounded to the input type before P.V, its partial and output formats), with q.k and "
	 "P.V as IEEE fma chains in fp32 (ieee) and as the bit-accurate tensor-core models of A100, H100 and B200 "
	 "(the block FMA of Khattak and Mikaitis 2025, as the kernels' mma.sync or wgmma instructions chain it; "
	 "skv mma --check validates them against the recorded GPU output). One split and 64 splits of 4096 keys; "
	 "math exact, so the arithmetic of the products is the only difference."},
	"Each tensor-core preset's q.k and P.V as IEEE fp32 fma chains against the bit-accurate tensor-core models "
	"of A100, H100 and B200, the presets' formats otherwise unchanged.",
	{"merge-rule", CHART_BARS, "preset", "splits", "norm_rel_err",
	 "IEEE fp32 against the GPUs' tensor-core arithmetic for q.k and P.V", NULL},
	tc_findings,
};
