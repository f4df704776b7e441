/* scan.c - the online-softmax scan over key blocks, written once for every precision configuration. */
#include <math.h>
#include "scan.h"
#include "fmt_inline.h"

#define SKV_LOG2E 1.4426950408889634074 /* RN64(log2 e) */
#define SKV_LN2 0.69314718055994530942  /* RN64(ln 2) */

void skv_scan_consts_init(skv_scan_consts *sc, double scale, double lse_offset, const skv_config *cfg)
{
	/* FlashInfer and TileLang fold log2 e into the softmax scale on the host,
	 * so the kernel multiplies once by a constant rounded once. */
	double k = cfg->base != SKV_BASE_E ? SKV_LOG2E : 1.0;
	sc->scale = skv_round_i(cfg->compute, scale * k);
	sc->offset = skv_round_i(cfg->compute, lse_offset * k);
}

double skv_lse_to_natural(double lse, skv_lse_base base) { return base == SKV_BASE_2 ? lse * SKV_LN2 : lse; }

void skv_scan(double *m, double *l, double *acc, const double *q, const double *k, const double *v,
	      size_t d, size_t lo, size_t hi, size_t block, const skv_scan_consts *sc, const skv_config *cfg,
	      double *zbuf)
{
	const skv_format c = cfg->compute, pf = cfg->p;
	const int base2 = cfg->base != SKV_BASE_E; /* the split's arithmetic */
	if (block == 0)
		block = hi - lo;
	double mm = *m, ll = *l;
	/* b0 steps to the block's end, never by adding `block` (which may be
	 * anything up to SIZE_MAX: no blocking) */
	for (size_t b0 = lo, b1; b0 < hi; b0 = b1) {
		b1 = hi - b0 < block ? hi : b0 + block;
		/* Scores of the block: q . k_j accumulated by fma, as a tensor core
		 * accumulates exact products; then the scale and the offset. */
		double bmax = -INFINITY;
		for (size_t j = b0; j < b1; j++) {
			const double *kj = k + j * d;
			double s = 0.0;
			for (size_t i = 0; i < d; i++)
				s = skv_fma_i(c, q[i], kj[i], s);
			s = skv_add_i(c, skv_mul_i(c, s, sc->scale), sc->offset);
			zbuf[j - b0] = s;
			bmax = fmax(bmax, s);
		}
		double mnew = fmax(mm, bmax);
		if (mnew == -INFINITY)
			continue; /* only reachable with -inf scores: nothing to add */
		if (mnew != mm) {
			/* Rescale the running sum and output; when the max does not move
			 * alpha = exp(0) = 1 exactly and the products are identities. */
			double d_m = skv_sub_i(c, mm, mnew);
			double alpha = base2 ? skv_exp2_i(c, d_m) : skv_exp_i(c, d_m);
			ll = skv_mul_i(c, ll, alpha);
			for (size_t i = 0; i < d; i++)
				acc[i] = skv_mul_i(c, acc[i], alpha);
			mm = mnew;
		}
		for (size_t j = b0; j < b1; j++) {
			double t = skv_sub_i(c, zbuf[j - b0], mm);
			double pj = base2 ? skv_exp2_i(c, t) : skv_exp_i(c, t);
			ll = skv_add_i(c, ll, pj);
			/* FlashAttention converts P to the input type before its
			 * tensor-core P.V; the sum above uses the unrounded P. */
			double pr = skv_round_i(pf, pj);
			const double *vj = v + j * d;
			for (size_t i = 0; i < d; i++)
				acc[i] = skv_fma_i(c, pr, vj[i], acc[i]);
		}
	}
	*m = mm;
	*l = ll;
}

void skv_scan_finish(double *out, double *lse, double m, double l, const double *acc, size_t d,
		     const skv_config *cfg)
{
	const skv_format c = cfg->compute;
	if (l == 0.0) {
		for (size_t i = 0; i < d; i++)
			out[i] = 0.0;
		*lse = -INFINITY;
		return;
	}
	for (size_t i = 0; i < d; i++)
		out[i] = skv_div_i(c, acc[i], l);
	if (cfg->base == SKV_BASE_E2) {
		/* FlashAttention: lse = row_max * softmax_scale + log(row_sum), one
		 * fused multiply-add; here m is in log2 units, so the factor is ln 2 */
		*lse = skv_fma_i(c, m, skv_round_i(c, SKV_LN2), skv_log_i(c, l));
		return;
	}
	double lg = cfg->base == SKV_BASE_2 ? skv_log2_i(c, l) : skv_log_i(c, l);
	*lse = skv_add_i(c, m, lg);
}

double skv_scan_max_out(double m, const skv_config *cfg)
{
	return cfg->base == SKV_BASE_E2 ? skv_mul_i(cfg->compute, m, skv_round_i(cfg->compute, SKV_LN2)) : m;
}
