/* occupancy.c - FlashAttention 2's split-count heuristic and split layout for decode, with its float arithmetic. */
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "skv.h"

/*
 * Transcribed from Dao-AILab/flash-attention at 0251105a2fb1:
 * csrc/flash_attn/flash_api.cpp:281-347 (num_splits_heuristic and
 * set_params_splitkv; the GQA fold of seqlen_q at :431 and :1319) and
 * csrc/flash_attn/src/flash_fwd_kernel.h:535-539 (n_blocks_per_split).
 * FA2 works in C++ int and float:
 *
 *   if (batch_nheads_mblocks >= 0.8f * num_SMs) return 1;
 *       int >= float: both sides are floats; 0.8f * num_SMs is a float
 *       product (num_SMs converted to float first).
 *   float n_waves = float(batch_nheads_mblocks * num_splits) / num_SMs;
 *       an int product, converted to float (rounded to nearest), divided by
 *       num_SMs converted to float: one float division.
 *   float eff = n_waves / ceil(n_waves);
 *       whether ceil resolves to the float or the double overload, ceil of a
 *       float is an integer that is itself a float, so the divisor is the
 *       same; a double quotient rounded to float equals the float quotient
 *       because 53 >= 2 * 24 + 2 (double rounding is innocuous for division).
 *       ceilf and a float division are therefore exact transcriptions.
 *   if (efficiency[num_splits - 1] >= 0.85 * max_efficiency)
 *       0.85 is a double literal: both floats are widened and the product
 *       and comparison are in double. Done here in double too; a float
 *       0.85f would move the threshold by 2.8e-8 relative and can flip a
 *       near tie.
 * Every intermediate FA2 keeps in a float (or double) is assigned to a
 * float (double) variable here: C11 rounds on assignment, so the results
 * are FA2's even where FLT_EVAL_METHOD != 0 evaluates wider (x87), and
 * -ffp-contract=off keeps the products from fusing.
 */

/* FA2's ceildiv (a + b - 1) / b, written without the overflow of a + b - 1. */
static unsigned ceil_div(unsigned a, unsigned b) { return a / b + (a % b != 0); }

/* FA2's is_split_eligible: s == 1, or s splits give a different number of
 * blocks per split than s - 1 splits (otherwise s is s - 1 splits plus
 * empty ones: with 64 blocks, 12 splits of 6 blocks are 11 splits). */
static int split_eligible(unsigned s, unsigned nblocks)
{
	return s == 1 || ceil_div(nblocks, s) != ceil_div(nblocks, s - 1);
}

/* FA2's wave efficiency of s splits: the fraction of the last wave of
 * num_sms thread blocks that is busy, n_waves / ceil(n_waves). The product
 * is formed in 64 bits: it equals FA2's int product wherever that does not
 * overflow, which is everywhere FA2 evaluates it (see skv.h). */
static float wave_efficiency(unsigned bhm, unsigned num_sms, unsigned s)
{
	const float work = (float)((uint64_t)bhm * s), sms = (float)num_sms;
	const float n_waves = work / sms;
	const float eff = n_waves / ceilf(n_waves);
	return eff;
}

static int fa2_args_ok(unsigned bhm, unsigned num_sms, unsigned nblocks)
{
	return bhm >= 1 && bhm <= INT_MAX && num_sms >= 1 && num_sms <= SKV_FA2_MAX_SMS && nblocks >= 1 &&
	       nblocks <= INT_MAX;
}

int skv_fa2_num_splits(unsigned *splits, unsigned batch_nheads_mblocks, unsigned num_sms, unsigned num_n_blocks,
		       unsigned max_splits)
{
	if (!splits || !fa2_args_ok(batch_nheads_mblocks, num_sms, num_n_blocks) || max_splits == 0 ||
	    max_splits > INT_MAX)
		return SKV_EINVAL;
	/* If we have enough to almost fill the SMs, then just use 1 split. */
	const float bhm = (float)batch_nheads_mblocks, almost = 0.8f * (float)num_sms;
	if (bhm >= almost) {
		*splits = 1;
		return SKV_OK;
	}
	unsigned m = max_splits;
	if (m > num_sms)
		m = num_sms;
	if (m > num_n_blocks)
		m = num_n_blocks;
	/* FA2 stores each efficiency in a vector (0 for ineligible counts) and
	 * reads it back in the second loop; recomputing the same expression
	 * gives the same float, so no table is kept. */
	float max_efficiency = 0.f;
	for (unsigned s = 1; s <= m; s++) {
		if (!split_eligible(s, num_n_blocks))
			continue;
		const float eff = wave_efficiency(batch_nheads_mblocks, num_sms, s);
		if (eff > max_efficiency)
			max_efficiency = eff;
	}
	const double threshold = 0.85 * (double)max_efficiency;
	for (unsigned s = 1; s <= m; s++) {
		if (!split_eligible(s, num_n_blocks))
			continue;
		const float eff = wave_efficiency(batch_nheads_mblocks, num_sms, s);
		if ((double)eff >= threshold) {
			*splits = s;
			return SKV_OK;
		}
	}
	*splits = 1; /* reached only when every efficiency is NaN, which validated inputs exclude */
	return SKV_OK;
}

int skv_fa2_split_table(float *efficiency, unsigned char *eligible, unsigned n, unsigned batch_nheads_mblocks,
			unsigned num_sms, unsigned num_n_blocks)
{
	if (!efficiency || !eligible || n == 0 || n > INT_MAX ||
	    !fa2_args_ok(batch_nheads_mblocks, num_sms, num_n_blocks))
		return SKV_EINVAL;
	for (unsigned s = 1; s <= n; s++) {
		efficiency[s - 1] = wave_efficiency(batch_nheads_mblocks, num_sms, s);
		eligible[s - 1] = (unsigned char)split_eligible(s, num_n_blocks);
	}
	return SKV_OK;
}

int skv_fa2_decode_init(skv_fa2_decode *f, unsigned batch, unsigned heads, unsigned kv_heads, unsigned ctx,
			unsigned head_dim, unsigned sm_count)
{
	if (!f || batch == 0 || heads == 0 || kv_heads == 0 || heads % kv_heads != 0 || ctx == 0 || ctx > INT_MAX ||
	    head_dim == 0 || head_dim > SKV_FA2_MAX_HEAD_DIM || sm_count == 0 || sm_count > SKV_FA2_MAX_SMS / 2)
		return SKV_EINVAL;
	skv_fa2_decode r;
	/* set_params_splitkv: block_n from the head size rounded up to a
	 * multiple of 8, which is <= 64 (<= 128) exactly when head_dim is,
	 * since 64 and 128 are multiples of 8. */
	r.block_n = head_dim <= 64 ? 256 : (head_dim <= 128 ? 128 : 64);
	r.num_n_blocks = ceil_div(ctx, r.block_n);
	/* mha_fwd and mha_fwd_kvcache: one query token with more query than
	 * key/value heads, no sliding window, no ALiBi, head size a multiple
	 * of 8 (seqlenq_ngroups_swapped): each group's query heads become the
	 * query-length axis of one key/value head. */
	r.gqa_folded = heads > kv_heads && head_dim % 8 == 0;
	r.seqlen_q = r.gqa_folded ? heads / kv_heads : 1;
	r.num_heads = r.gqa_folded ? kv_heads : heads;
	r.num_m_blocks = ceil_div(r.seqlen_q, 64);
	const uint64_t bhm = (uint64_t)batch * r.num_heads * r.num_m_blocks;
	if (bhm > INT_MAX) /* FA2's int product would overflow */
		return SKV_EINVAL;
	r.batch_nheads_mblocks = (unsigned)bhm;
	/* "We multiply number of SMs by 2 to hard-code the fact that we're
	 * using 128 threads per block." */
	r.num_sms = 2 * sm_count;
	*f = r;
	return SKV_OK;
}

int skv_fa2_bounds(size_t *bounds, size_t n, size_t block_n, size_t S)
{
	if (!bounds || n == 0 || block_n == 0 || S == 0 || S == SIZE_MAX)
		return SKV_EINVAL;
	const size_t nblocks = n / block_n + (n % block_n != 0);
	const size_t per = nblocks / S + (nblocks % S != 0); /* n_blocks_per_split */
	/* Split s is blocks [s per, (s + 1) per) clamped to the keys: the first
	 * `used` splits are non-empty and the rest (an ineligible S) are empty,
	 * for which FA2 writes O = 0 and LSE = -inf. For s < used, s per <=
	 * nblocks - 1, so s per block_n < n: no product overflows. */
	const size_t used = nblocks / per + (nblocks % per != 0);
	for (size_t s = 0; s <= S; s++)
		bounds[s] = s < used ? s * per * block_n : n;
	return SKV_OK;
}
