/* scan.c - the online-softmax scan over key blocks, written once for every precision configuration and every formula of the table below. */
#include <math.h>
#include <string.h>
#include "scan.h"
#include "mathmode.h"

#define SKV_LOG2E 1.4426950408889634074 /* RN64(log2 e) */
#define SKV_LN2 0.69314718055994530942  /* RN64(ln 2) */
/* The literal 1.44269504 of TileLang's example, xformers and Flex (Flex's
 * RCP_LN2, common.py.jinja). In fp32 and every narrower format it rounds
 * as RN64(log2 e) does (checked: both give 0x1.715476p+0 in fp32), so it
 * also stands for FlashInfer's math::log2e. */
#define LIT_LOG2E 1.44269504
#define VLLM_EPS 1e-6 /* exp_sum + 1e-6f (attention_kernels.cuh) */

/* The formulas, indexed by skv_formula (skv.h states each with its source;
 * f8o: the Max_offset FA3 subtracts from the scaled max on FP8 inputs).
 *                         name      base        konst raw afma 2mul qsc bsum pnrm rcp lse  f8o */
static const skv_formula_row formulas[SKV_NFORMULAS] = {
	[SKV_FORMULA_SKV] = {"skv", -1, SKV_K_SKV, 0, 0, 0, 0, 0, 0, 0, SKV_L_SKV, 0},
	[SKV_FORMULA_FA2] = {"fa2", SKV_BASE_E2, SKV_K_F32D, 1, 0, 0, 0, 0, 0, 1, SKV_L_FA2, 0},
	[SKV_FORMULA_FA3] = {"fa3", SKV_BASE_E2, SKV_K_F32D, 1, 0, 0, 0, 0, 0, 1, SKV_L_FA3, 8},
	[SKV_FORMULA_TILELANG] = {"tilelang", SKV_BASE_2, SKV_K_LIT, 1, 1, 0, 0, 1, 0, 0, SKV_L_TL, 0},
	[SKV_FORMULA_FLEX] = {"flex", SKV_BASE_2, SKV_K_SKV, 0, 0, 1, 0, 1, 0, 0, SKV_L_SKV, 0},
	[SKV_FORMULA_XFORMERS] = {"xformers", SKV_BASE_E2, SKV_K_F32, 0, 0, 0, 0, 1, 0, 0, SKV_L_XF, 0},
	[SKV_FORMULA_VLLM] = {"vllm", SKV_BASE_E, SKV_K_SKV, 0, 0, 0, 0, 0, 1, 0, SKV_L_SKV, 0},
	[SKV_FORMULA_FLASHINFER] = {"flashinfer", SKV_BASE_2, SKV_K_F32, 0, 0, 0, 0, 0, 0, 1, SKV_L_SKV, 0},
	[SKV_FORMULA_QSCALE] = {"qscale", SKV_BASE_E, SKV_K_SKV, 0, 0, 0, 1, 0, 0, 0, SKV_L_SKV, 0},
	[SKV_FORMULA_TRITON] = {"triton", -1, SKV_K_SKV, 0, 0, 0, 0, 1, 0, 0, SKV_L_SKV, 0},
};

const skv_formula_row *skv_formula_row_of(skv_formula f) { return &formulas[f]; }
const char *skv_formula_name(skv_formula f) { return (unsigned)f < SKV_NFORMULAS ? formulas[f].name : NULL; }
int skv_formula_base(skv_formula f) { return (unsigned)f < SKV_NFORMULAS ? formulas[f].base : -1; }

int skv_formula_parse(skv_formula *f, const char *name)
{
	for (unsigned i = 0; f && name && i < SKV_NFORMULAS; i++)
		if (strcmp(formulas[i].name, name) == 0) {
			*f = (skv_formula)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* e in the split's arithmetic (exp2 unless the base is e), the
 * reciprocal, division and logs, in compute under the config's math */
static double k_exp(const skv_config *cfg, double t)
{
	skv_mth m = skv_mth_of(cfg);
	return cfg->base != SKV_BASE_E ? skv_m_exp2(&m, cfg->compute, t) : skv_m_exp(&m, cfg->compute, t);
}
static double k_rcp(const skv_config *cfg, double t)
{
	skv_mth m = skv_mth_of(cfg);
	return skv_m_rcp(&m, cfg->compute, t);
}
static double k_div(const skv_config *cfg, skv_format f, double a, double b)
{
	skv_mth m = skv_mth_of(cfg);
	return skv_m_div(&m, f, a, b);
}
static double k_log(const skv_config *cfg, skv_format f, double t)
{
	skv_mth m = skv_mth_of(cfg);
	return skv_m_log(&m, f, t);
}
static double k_log2(const skv_config *cfg, skv_format f, double t)
{
	skv_mth m = skv_mth_of(cfg);
	return skv_m_log2(&m, f, t);
}

/* FA3's Is_FP8: Element is float_e4m3_t or float_e5m2_t
 * (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:44). */
static int is_fp8(skv_format f)
{
	return f == SKV_E4M3 || f == SKV_E4M3_SAT || f == SKV_E5M2 || f == SKV_E5M2_SAT;
}

void skv_scan_consts_init(skv_scan_consts *sc, double scale, double lse_offset, const skv_config *cfg)
{
	/* FlashInfer and TileLang fold log2 e into the softmax scale on the host,
	 * so the kernel multiplies once by a constant rounded once. */
	const skv_formula_row *f = &formulas[cfg->formula];
	const skv_format c = cfg->compute;
	double k = cfg->base != SKV_BASE_E ? SKV_LOG2E : 1.0, rs = skv_round_i(c, scale);
	if (f->konst == SKV_K_F32D)
		sc->scale = skv_round_i(c, rs * k); /* exact product in double, one rounding */
	else if (f->konst == SKV_K_F32)
		sc->scale = skv_mul_i(c, rs, skv_round_i(c, k == 1.0 ? 1.0 : LIT_LOG2E));
	else if (f->konst == SKV_K_LIT)
		sc->scale = skv_round_i(c, scale * (k == 1.0 ? 1.0 : LIT_LOG2E));
	else
		sc->scale = skv_round_i(c, scale * k);
	sc->rscale = rs;
	sc->k2 = skv_round_i(c, LIT_LOG2E);
	if (f->raw)
		sc->offset = skv_round_i(c, lse_offset / rs); /* the raw shift whose scaled value is the offset */
	else if (f->two_mul || f->qscale)
		sc->offset = skv_round_i(c, lse_offset);
	else
		sc->offset = skv_round_i(c, lse_offset * k);
	sc->maxoff = is_fp8(cfg->input) ? f->fp8_offset : 0.0;
	skv_scan_mma_init(sc, cfg);
}

double skv_lse_to_natural(double lse, skv_lse_base base) { return base == SKV_BASE_2 ? lse * SKV_LN2 : lse; }

void skv_scan_reset(skv_scan_state *st, size_t d, const skv_config *cfg)
{
	st->m = -INFINITY;
	st->l = 0.0;
	for (unsigned t = 0; st->lane && t < cfg->lanes; t++)
		st->lane[t] = 0.0;
	memset(st->acc, 0, d * sizeof *st->acc);
}

void skv_scan_query(double *qs, const double *q, size_t d, const skv_scan_consts *sc, const skv_config *cfg)
{
	for (size_t i = 0; i < d; i++)
		qs[i] = formulas[cfg->formula].qscale ? skv_mul_i(cfg->compute, q[i], sc->rscale) : q[i];
}

/* The formula's scale and offset applied to a dot product s. */
static double scaled(double s, const skv_scan_consts *sc, const skv_formula_row *f, skv_format c)
{
	if (f->raw || f->qscale)
		return skv_add_i(c, s, sc->offset);
	if (f->two_mul)
		return skv_mul_i(c, skv_add_i(c, skv_mul_i(c, s, sc->rscale), sc->offset), sc->k2);
	return skv_add_i(c, skv_mul_i(c, s, sc->scale), sc->offset);
}

/* The score of key kj: q . kj accumulated by fma in compute (the IEEE
 * arithmetic, cfg->gpu 0; scores_mma has the tensor cores'), then the
 * formula's scale and offset. */
static double score(const double *q, const double *kj, size_t d, const skv_scan_consts *sc, const skv_formula_row *f,
		    skv_format c, int hw)
{
	double s = 0.0;
	if (hw)
		s = skv_hw32_dot(q, kj, d); /* the same chain in hardware binary32 (scan_hw32.c) */
	else
		for (size_t i = 0; i < d; i++)
			s = skv_fma_i(c, q[i], kj[i], s);
	return scaled(s, sc, f, c);
}

/* z[0..n) = the scores of keys j0 .. j0 + n - 1 on the tensor cores (the
 * GPU's MMA instructions over head_dim from 0, then the formula's scale
 * and offset), four keys at a time with kt (8 d doubles) as scratch: their
 * rows (copied into kt + 4 d unless they are a double problem's, as the
 * reader's next call may overwrite a row) chained together by
 * skv_mma_dot4, the same chains as skv_mma_chain's; the rest one by one. */
static void scores_mma(double *z, const double *q, skv_rows *rd, size_t d, size_t j0, size_t n,
		       const skv_scan_consts *sc, const skv_formula_row *f, skv_format c, double *kt)
{
	size_t j = 0;
	for (; j + 4 <= n; j += 4) {
		const double *kr = kt + 4 * d;
		if (skv_rows_plain(rd))
			kr = skv_rows_k(rd, j0 + j - rd->lo);
		else
			for (size_t t = 0; t < 4; t++)
				memcpy(kt + (4 + t) * d, skv_rows_k(rd, j0 + j + t - rd->lo), d * sizeof *kt);
		double s[4];
		skv_mma_dot4(s, &sc->unit, sc->tile_k, q, kr, d, kt);
		for (size_t t = 0; t < 4; t++)
			z[j + t] = scaled(s[t], sc, f, c);
	}
	for (; j < n; j++)
		z[j] = scaled(skv_mma_chain(&sc->unit, sc->tile_k, q, 1, skv_rows_k(rd, j0 + j - rd->lo), 1, d, 0.0), sc,
			      f, c);
}

void skv_scan_scores(double *z, const double *q, skv_rows *rd, size_t d, size_t lo, size_t hi,
		     const skv_scan_consts *sc, const skv_config *cfg, double *kt)
{
	const int hw = skv_hw32_on(cfg);
	const skv_formula_row *f = &formulas[cfg->formula];
	if (sc->tile_k) {
		scores_mma(z + lo, q, rd, d, lo, hi - lo, sc, f, cfg->compute, kt);
		return;
	}
	for (size_t j = lo; j < hi; j++)
		z[j] = score(q, skv_rows_k(rd, j - rd->lo), d, sc, f, cfg->compute, hw);
}

/* One accumulator update, computed in compute and kept in the
 * accumulator's format when it has its own (llama.cpp CPU's fp16). */
static double acc_keep(const skv_config *cfg, double x)
{
	return cfg->acc ? skv_round_i((skv_format)(cfg->acc - 1), x) : x;
}

/* The rescale of the running state when the max moves from mo to mn. */
static void rescale(skv_scan_state *st, double mo, double mn, size_t d, const skv_scan_consts *sc,
		    const skv_formula_row *f, const skv_config *cfg, double *alpha)
{
	const skv_format c = cfg->compute;
	double a;
	if (f->raw && f->alpha_fma)
		a = k_exp(cfg, skv_fma_i(c, mo, sc->scale, -skv_mul_i(c, mn, sc->scale)));
	else if (f->raw)
		a = k_exp(cfg, skv_mul_i(c, skv_sub_i(c, mo, mn), sc->scale));
	else
		a = k_exp(cfg, skv_sub_i(c, mo, mn));
	*alpha = a;
	if (!f->blocksum) {
		if (cfg->lanes > 1)
			for (unsigned t = 0; t < cfg->lanes; t++)
				st->lane[t] = skv_mul_i(c, st->lane[t], a);
		else
			st->l = skv_mul_i(c, st->l, a);
	}
	for (size_t i = 0; i < d; i++)
		st->acc[i] = acc_keep(cfg, skv_mul_i(c, st->acc[i], a));
}

/* What p's exponent subtracts, from the running max m (finite), the same
 * for every key of a block: raw formulas RN(m c) (FA3 on FP8: max_scaled
 * = fma(m, c, -8)), the others m. */
static double max_term(double m, const skv_scan_consts *sc, const skv_formula_row *f, const skv_config *cfg)
{
	const skv_format c = cfg->compute;
	if (f->raw && sc->maxoff != 0)
		return skv_fma_i(c, m, sc->scale, -sc->maxoff);
	return f->raw ? skv_mul_i(c, m, sc->scale) : m;
}

/* p of a score z against the max term mt (max_term): e(fma(z, c, -mt))
 * for raw formulas, e(z - mt) for the others. */
static double prob(double z, double mt, const skv_scan_consts *sc, const skv_formula_row *f, const skv_config *cfg)
{
	const skv_format c = cfg->compute;
	return k_exp(cfg, f->raw ? skv_fma_i(c, z, sc->scale, -mt) : skv_sub_i(c, z, mt));
}

/* Adds p (of key j, range start lo) to the exp-sum: its lane's, or the one
 * sum. */
static void sum_add(skv_scan_state *st, double p, size_t j, size_t lo, const skv_config *cfg)
{
	if (cfg->lanes > 1) {
		size_t g = cfg->lane_keys ? cfg->lane_keys : 1, t = (j - lo) / g % cfg->lanes;
		st->lane[t] = skv_add_i(cfg->compute, st->lane[t], p);
	} else {
		st->l = skv_add_i(cfg->compute, st->l, p);
	}
}

/* acc += pr v_j in compute, kept in the accumulator's format: in hardware
 * binary32 where skv_hw32_on allows it and there is no accumulator format. */
static void pv_add(skv_scan_state *st, double pr, const double *vj, size_t d, const skv_config *cfg, int hw)
{
	if (hw && !cfg->acc) {
		skv_hw32_pv(st->acc, pr, vj, d);
		return;
	}
	for (size_t i = 0; i < d; i++)
		st->acc[i] = acc_keep(cfg, skv_fma_i(cfg->compute, pr, vj[i], st->acc[i]));
}

/* The score of key j: the shared one (st->z, skv_scores) or computed. */
static double score_of(const skv_scan_state *st, const double *q, skv_rows *rd, size_t j, size_t d,
		       const skv_scan_consts *sc, const skv_formula_row *f, skv_format c, int hw)
{
	return st->z ? st->z[j] : score(q, skv_rows_k(rd, j - rd->lo), d, sc, f, c, hw);
}

/* One block [b0, b1) of the online softmax. */
/* The running max after a block whose scores are zbuf[0..n) (max of the
 * old max and theirs: fmax is exact, so the order is free), and the state
 * rescaled to it (*alpha the factor, 1 when the max does not move). 0 when
 * the max stays -inf (only with -inf scores): nothing to add. */
static int block_max(skv_scan_state *st, double *alpha, const double *zbuf, size_t n, size_t d,
		     const skv_scan_consts *sc, const skv_formula_row *f, const skv_config *cfg)
{
	double mnew = st->m;
	for (size_t j = 0; j < n; j++)
		mnew = fmax(mnew, zbuf[j]);
	if (mnew == -INFINITY)
		return 0;
	/* When the max does not move alpha = e(0) = 1 exactly and the products
	 * would be identities, so only a moving max rescales. */
	if (mnew != st->m)
		rescale(st, st->m, mnew, d, sc, f, cfg, alpha);
	st->m = mnew;
	return 1;
}

/* P of key j from its score z against the running max's term mt, added
 * to the block's sum *bs (formulas that sum a block apart) or to the
 * state's. */
static double p_summed(skv_scan_state *st, double *bs, double z, double mt, size_t j, size_t lo,
		       const skv_scan_consts *sc, const skv_formula_row *f, const skv_config *cfg)
{
	const double pj = prob(z, mt, sc, f, cfg);
	if (f->blocksum)
		*bs = skv_add_i(cfg->compute, *bs, pj);
	else
		sum_add(st, pj, j, lo, cfg);
	return pj;
}

static void scan_block(skv_scan_state *st, const double *q, skv_rows *rd, size_t d, size_t b0,
		       size_t b1, size_t lo, const skv_scan_consts *sc, const skv_config *cfg, double *zbuf, int hw)
{
	const skv_format c = cfg->compute, pf = cfg->p;
	const skv_formula_row *f = &formulas[cfg->formula];
	double alpha = 1.0, bs = 0.0;
	for (size_t j = b0; j < b1; j++)
		zbuf[j - b0] = score_of(st, q, rd, j, d, sc, f, c, hw);
	if (!block_max(st, &alpha, zbuf, b1 - b0, d, sc, f, cfg))
		return;
	const double mt = max_term(st->m, sc, f, cfg);
	for (size_t j = b0; j < b1; j++) {
		const double pj = p_summed(st, &bs, zbuf[j - b0], mt, j, lo, sc, f, cfg);
		/* FlashAttention converts P to the input type before its
		 * tensor-core P.V; the sum above uses the unrounded P. */
		pv_add(st, skv_round_i(pf, pj), skv_rows_v(rd, j - rd->lo), d, cfg, hw);
	}
	if (f->blocksum)
		st->l = skv_fma_i(c, st->l, alpha, bs);
}

/* P.V of the block's n keys from b0 on the tensor cores, by skv_mma_pv on
 * the running acc: the block's V rows in place for a double problem; else
 * SKV_SCAN_MMA_ROWS rows at a time copied into vs (the reader's rows stay
 * valid only until its next call), a whole number of instructions since
 * every k divides it, so the same chains as one call over the block. */
static void pv_mma(double *acc, const skv_scan_consts *sc, const double *p, skv_rows *rd, size_t b0, size_t n,
		   size_t d, double *vs)
{
	if (n > 0 && skv_rows_plain(rd)) {
		skv_mma_pv(acc, &sc->unit, sc->tile_k, p, skv_rows_v(rd, b0 - rd->lo), n, d);
		return;
	}
	/* SKV_SCAN_MMA_ROWS rows a call: whole instructions (every k divides it) */
	for (size_t k0 = 0; k0 < n; k0 += SKV_SCAN_MMA_ROWS) {
		const size_t len = n - k0 < SKV_SCAN_MMA_ROWS ? n - k0 : SKV_SCAN_MMA_ROWS;
		for (size_t t = 0; t < len; t++)
			memcpy(vs + t * d, skv_rows_v(rd, b0 + k0 + t - rd->lo), d * sizeof *vs);
		skv_mma_pv(acc, &sc->unit, sc->tile_k, p + k0, vs, len, d);
	}
}

/* One block [b0, b1) with q.k and P.V on the tensor cores of cfg->gpu
 * (skv.h, skv_config.gpu): the scores as chains of MMA instructions over
 * head_dim from 0 (score, or the shared ones), then max, rescale, P and
 * the exp-sum exactly as scan_block, P rounded to cfg->p into zbuf, and
 * the block's P.V as instructions over its keys on the running
 * accumulator. The accumulator format is compute (the config check
 * refuses another). */
static void scan_block_mma(skv_scan_state *st, const double *q, skv_rows *rd, size_t d, size_t b0, size_t b1,
			   size_t lo, const skv_scan_consts *sc, const skv_config *cfg, double *zbuf, double *vs)
{
	const skv_format c = cfg->compute;
	const skv_formula_row *f = &formulas[cfg->formula];
	double alpha = 1.0, bs = 0.0;
	if (st->z) /* vs is free until P.V: the keys' transposes */
		memcpy(zbuf, st->z + b0, (b1 - b0) * sizeof *zbuf);
	else
		scores_mma(zbuf, q, rd, d, b0, b1 - b0, sc, f, c, vs);
	if (!block_max(st, &alpha, zbuf, b1 - b0, d, sc, f, cfg))
		return;
	const double mt = max_term(st->m, sc, f, cfg);
	for (size_t j = b0; j < b1; j++) /* P rounded: the A operand of P.V */
		zbuf[j - b0] = skv_round_i(cfg->p, p_summed(st, &bs, zbuf[j - b0], mt, j, lo, sc, f, cfg));
	pv_mma(st->acc, sc, zbuf, rd, b0, b1 - b0, d, vs);
	if (f->blocksum)
		st->l = skv_fma_i(c, st->l, alpha, bs);
}

/* vLLM's split: every score first, the max, the exp-sum, then P
 * normalised by RN(1/RN(l + RN(1e-6))) and rounded to cfg->p before P.V;
 * the accumulator is then the partial itself. */
static void scan_pnorm(skv_scan_state *st, const double *q, skv_rows *rd, size_t d, size_t lo,
		       size_t hi, const skv_scan_consts *sc, const skv_config *cfg, double *zbuf, int hw)
{
	const skv_format c = cfg->compute;
	const skv_formula_row *f = &formulas[cfg->formula];
	double m = -INFINITY;
	for (size_t j = lo; j < hi; j++) {
		zbuf[j - lo] = score_of(st, q, rd, j, d, sc, f, c, hw);
		m = fmax(m, zbuf[j - lo]);
	}
	if (m == -INFINITY)
		return;
	st->m = m;
	const double mt = max_term(m, sc, f, cfg);
	for (size_t j = lo; j < hi; j++) {
		zbuf[j - lo] = prob(zbuf[j - lo], mt, sc, f, cfg);
		sum_add(st, zbuf[j - lo], j, lo, cfg);
	}
	double l = cfg->lanes > 1 ? skv_butterfly(st->lane, cfg->lanes, c) : st->l;
	double inv = k_rcp(cfg, skv_add_i(c, l, skv_round_i(c, VLLM_EPS)));
	for (size_t j = lo; j < hi; j++) {
		pv_add(st, skv_round_i(cfg->p, skv_mul_i(c, zbuf[j - lo], inv)), skv_rows_v(rd, j - rd->lo), d, cfg, hw);
	}
}

void skv_scan(skv_scan_state *st, const double *q, skv_rows *rd, size_t d, size_t lo,
	      size_t hi, size_t block, const skv_scan_consts *sc, const skv_config *cfg, double *zbuf)
{
	const int hw = skv_hw32_on(cfg);
	if (formulas[cfg->formula].pnorm) {
		scan_pnorm(st, q, rd, d, lo, hi, sc, cfg, zbuf, hw);
		return;
	}
	const size_t n = hi - lo;
	if (block == 0 || block > n)
		block = n;
	if (n == 0)
		return;
	/* Blocks cut from lo (the last may be short), visited in cfg's order;
	 * nb * block never exceeds n + block - 1, and b0 = lo + i * block <= hi. */
	const size_t nb = n / block + (n % block != 0);
	for (size_t i = 0; i < nb; i++) {
		size_t bi = cfg->blocks == SKV_BLOCKS_REVERSE ? nb - 1 - i : i, b0 = lo + bi * block;
		size_t b1 = hi - b0 < block ? hi : b0 + block;
		if (cfg->gpu != SKV_GPU_IEEE)
			scan_block_mma(st, q, rd, d, b0, b1, lo, sc, cfg, zbuf, zbuf + block);
		else
			scan_block(st, q, rd, d, b0, b1, lo, sc, cfg, zbuf, hw);
	}
}

double skv_butterfly(const double *lane, size_t T, skv_format c)
{
	/* masks W/2 .. 1 inside each warp of W = min(T, 32) lanes, then T/2 ..
	 * W across warps (lane t of warp j meets the same lane of warp j xor
	 * (mask / W)); every lane is kept, as every thread holds one */
	const size_t W = T < 32 ? T : 32;
	double a[1024], b[1024];
	size_t masks[24], nm = 0;
	for (size_t m = W / 2; m >= 1; m /= 2)
		masks[nm++] = m;
	for (size_t m = T / 2; m >= W; m /= 2)
		masks[nm++] = m;
	memcpy(a, lane, T * sizeof *a);
	for (size_t i = 0; i < nm; i++) {
		for (size_t t = 0; t < T; t++)
			b[t] = skv_add_i(c, a[t], a[t ^ masks[i]]);
		memcpy(a, b, T * sizeof *a);
	}
	return a[0];
}

/* The LSE of a finished split, as the formula writes it. m is the
 * formula's max (raw or scaled), ms the scaled one. */
static double split_lse(double m, double ms, double l, const skv_scan_consts *sc, const skv_config *cfg)
{
	const skv_format c = cfg->compute, lf = cfg->lse;
	switch (formulas[cfg->formula].lse) {
	case SKV_L_FA2:
		return skv_fma_i(c, m, sc->rscale, k_log(cfg, c, l));
	case SKV_L_FA3:
		return skv_fma_i(c, m, skv_mul_i(c, sc->scale, skv_round_i(c, SKV_LN2)), k_log(cfg, c, l));
	case SKV_L_TL:
		return skv_fma_i(c, m, sc->scale, k_log2(cfg, c, l));
	case SKV_L_XF: /* in the LSE's own format, from the compute-format m and l */
		return k_div(cfg, lf, skv_add_i(lf, k_log2(cfg, lf, l), m), skv_round_i(c, LIT_LOG2E));
	default:
		break;
	}
	if (cfg->base == SKV_BASE_E2)
		/* FlashAttention: lse = row_max * softmax_scale + log(row_sum), one
		 * fused multiply-add; here m is in log2 units, so the factor is ln 2 */
		return skv_fma_i(c, ms, skv_round_i(c, SKV_LN2), k_log(cfg, c, l));
	return skv_add_i(c, ms, cfg->base == SKV_BASE_2 ? k_log2(cfg, c, l) : k_log(cfg, c, l));
}

void skv_scan_finish(double *out, double *lse, double *m_out, double *l_out, const skv_scan_state *st,
		     size_t d, const skv_scan_consts *sc, const skv_config *cfg)
{
	const skv_format c = cfg->compute;
	const skv_formula_row *f = &formulas[cfg->formula];
	double l = st->l;
	if (cfg->lanes > 1 && !f->blocksum)
		l = skv_butterfly(st->lane, cfg->lanes, c);
	double ms = f->raw && st->m != -INFINITY ? skv_mul_i(c, st->m, sc->scale) : st->m;
	*m_out = cfg->base == SKV_BASE_E2 ? skv_mul_i(c, ms, skv_round_i(c, SKV_LN2)) : ms;
	/* FA3 on FP8: P carried 2^maxoff; the LSE's sum is scaled back
	 * (sum *= 1 / (1 << Max_offset)), the normalisation keeps it */
	*l_out = sc->maxoff != 0 ? skv_mul_i(c, l, ldexp(1.0, -(int)sc->maxoff)) : l;
	if (l == 0.0) {
		for (size_t i = 0; i < d; i++)
			out[i] = 0.0;
		*lse = -INFINITY;
		return;
	}
	double r = f->rcp ? k_rcp(cfg, l) : 0.0;
	for (size_t i = 0; i < d; i++)
		out[i] = f->pnorm ? st->acc[i] : f->rcp ? skv_mul_i(c, st->acc[i], r) : k_div(cfg, c, st->acc[i], l);
	*lse = split_lse(st->m, ms, *l_out, sc, cfg);
}
