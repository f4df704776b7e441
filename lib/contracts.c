/* contracts.c - the fp64 merge of split partials, the merge of two online-softmax states, and fp32 blockwise attention. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "merge_internal.h"
#include "skv.h"

/* Visit non-empty splits by LSE descending, ties by the bytes of the row:
 * a total order of the data alone, so any permutation of the splits gives
 * the same sums in the same order and the same bits. */
typedef struct {
	double lse;
	const double *row;
	size_t d;
} split_ref;

static int cmp_split(const void *pa, const void *pb)
{
	const split_ref *a = pa, *b = pb;
	if (a->lse != b->lse)
		return a->lse < b->lse ? 1 : -1;
	return memcmp(a->row, b->row, a->d * sizeof *a->row);
}

/*
 * The merge of one head, in fp64, of the n non-empty splits sorted as above
 * (so L_0 = M is the largest LSE):
 *   d_s = L_s - M exactly as the double-double dh + dl (TwoSum),
 *   e_s = exp(dh) (1 + dl)          (e_0 = 1),
 *   out_i = (sum_s e_s O_si) / (sum_s e_s),
 * both sums in the sorted order. The output is normalised by the sum of the
 * weights it used, so they sum to 1 within rounding whatever the magnitude
 * of the LSEs: no weight is formed against a rounded total LSE, which at
 * |L| = 1e17 (spacing 16) would give weights summing to 2 or more.
 *
 * Error, against the exact merge of the given doubles x_i = sum_s exp(L_s)
 * O_si / sum_s exp(L_s): exp is faithful (relative error below 2u, u =
 * 2^-53) and dl (|dl| <= u |d_s| <= 746 u where exp does not underflow)
 * enters through 1 + dl with a second-order error dl^2 / 2, so each e_s is
 * within 3u of exp(d_s); the two sums of n terms add at most n u each, the
 * division u. Since sum_s e_s >= e_0 = 1 and the exact weights sum to 1,
 *   |out_i - x_i| <= (2n + 8) u max_s |O_si|    (first order in u),
 * independent of the LSE magnitude. (The LSEs' own spacing, 16 at 1e17,
 * bounds how well the given doubles describe a real attention; that error
 * is in the inputs, and no merge can remove it.) tests/test_contracts.c
 * checks the bound against MPFR at |L| from 0 to DBL_MAX.
 */
static void merge_head(double *out, const split_ref *refs, size_t n, size_t d)
{
	const double M = refs[0].lse;
	double den = 0.0;
	for (size_t i = 0; i < d; i++)
		out[i] = 0.0;
	for (size_t k = 0; k < n; k++) {
		const double L = refs[k].lse;
		double dh = L - M, bb = dh - L, dl = (L - (dh - bb)) + (-M - bb); /* TwoSum(L, -M) */
		double e = exp(dh);
		if (isfinite(dl))
			e = fma(e, dl, e);
		den += e;
		for (size_t i = 0; i < d; i++)
			out[i] = fma(e, refs[k].row[i], out[i]);
	}
	for (size_t i = 0; i < d; i++)
		out[i] /= den;
}

int skv_merge_partials(double *out, const double *outs, const double *lses, size_t S, size_t H, size_t d)
{
	if (!out || !outs || !lses || S == 0 || H == 0 || d == 0 || S > SIZE_MAX / H / d / sizeof(double))
		return SKV_EINVAL;
	/* Validate every head before writing anything. Rows of empty splits are
	 * never read (their weight is exactly 0). */
	for (size_t h = 0; h < H; h++) {
		int any = 0;
		for (size_t s = 0; s < S; s++) {
			double L = lses[s * H + h];
			if (isnan(L) || L == INFINITY)
				return SKV_EINVAL;
			if (L == -INFINITY)
				continue;
			any = 1;
			const double *row = outs + (s * H + h) * d;
			for (size_t i = 0; i < d; i++)
				if (!isfinite(row[i]))
					return SKV_EINVAL;
		}
		if (!any)
			return SKV_EINVAL;
	}
	split_ref *refs = malloc(S * sizeof *refs);
	double *res = malloc(H * d * sizeof *res);
	if (!refs || !res) {
		free(refs);
		free(res);
		return SKV_ENOMEM;
	}
	for (size_t h = 0; h < H; h++) {
		size_t n = 0;
		for (size_t s = 0; s < S; s++)
			if (lses[s * H + h] != -INFINITY)
				refs[n++] = (split_ref){lses[s * H + h], outs + (s * H + h) * d, d};
		qsort(refs, n, sizeof *refs, cmp_split);
		merge_head(res + h * d, refs, n, d);
	}
	memcpy(out, res, H * d * sizeof *out);
	free(res);
	free(refs);
	return SKV_OK;
}

int skv_merge_states(double *merged_max, double *merged_sum, double *merged_out, const double max[2],
		     const double sum[2], const double *acc, size_t D)
{
	if (!merged_max || !merged_sum || !merged_out || !max || !sum || !acc || D == 0 ||
	    D > SIZE_MAX / 2 / sizeof(double))
		return SKV_EINVAL;
	for (int i = 0; i < 2; i++) {
		if (!isfinite(sum[i]) || sum[i] < 0.0 || isnan(max[i]) || max[i] == INFINITY)
			return SKV_EINVAL;
		/* A block with keys must have a finite accumulator, as
		 * skv_merge_partials requires of a non-empty split's row: a NaN
		 * or infinity would come out as a silent NaN. */
		for (size_t k = 0; max[i] != -INFINITY && k < D; k++)
			if (!isfinite(acc[(size_t)i * D + k]))
				return SKV_EINVAL;
	}
	double *a = malloc(D * sizeof *a);
	if (!a)
		return SKV_ENOMEM;
	memcpy(a, acc, D * sizeof *a);
	double m = max[0], l = sum[0];
	/* A block without keys has max -inf: weigh it 0, as exp(-inf) does. */
	skv_state_merge(&m, &l, a, max[1], sum[1], acc + D, D, SKV_FP64, 0, 1, NULL);
	if (m == -INFINITY || l == 0.0) {
		/* no mass at all: the empty state, never 0/0 */
		*merged_max = m == -INFINITY ? -INFINITY : m;
		*merged_sum = 0.0;
		memset(merged_out, 0, D * sizeof *merged_out);
	} else {
		for (size_t i = 0; i < D; i++)
			merged_out[i] = a[i] / l;
		*merged_max = m;
		*merged_sum = l;
	}
	free(a);
	return SKV_OK;
}

int skv_attention_blockwise_f32(float *out, const float *q, const float *k, const float *v, size_t Tq,
				size_t Tk, size_t d, size_t block_size, int causal)
{
	if (!out || !q || !k || !v || Tq == 0 || Tk == 0 || d == 0 || block_size == 0 ||
	    Tk % block_size != 0 || (causal && Tq != Tk) || Tk > SIZE_MAX / d / sizeof(double) ||
	    Tq > SIZE_MAX / d / sizeof(double))
		return SKV_EINVAL;
	skv_problem p = {Tq, Tk, d, NULL, NULL, NULL, 1.0 / sqrt((double)d)};
	p.q = malloc(Tq * d * sizeof *p.q);
	p.k = malloc(Tk * d * sizeof *p.k);
	p.v = malloc(Tk * d * sizeof *p.v);
	double *o = malloc(Tq * d * sizeof *o);
	int st = SKV_ENOMEM;
	if (p.q && p.k && p.v && o) {
		int finite = 1;
		for (size_t i = 0; i < Tq * d; i++)
			finite &= isfinite(p.q[i] = q[i]);
		for (size_t i = 0; i < Tk * d; i++) {
			finite &= isfinite(p.k[i] = k[i]);
			finite &= isfinite(p.v[i] = v[i]);
		}
		if (!finite) { /* a NaN or infinite input would come out as a silent NaN */
			st = SKV_EINVAL;
			goto done;
		}
		const skv_config cfg = skv_config_uniform(SKV_FP32);
		st = skv_attention_online(o, NULL, &p, block_size, causal, 0.0, &cfg);
		/* Finite inputs can still overflow fp32 (a score q . k / sqrt(d)
		 * beyond FLT_MAX, whose exp(s - max) is then inf - inf): that is a
		 * status, never a NaN handed back as a result. */
		for (size_t i = 0; st == SKV_OK && i < Tq * d; i++)
			if (!isfinite(o[i]))
				st = SKV_ERANGE;
		if (st == SKV_OK)
			for (size_t i = 0; i < Tq * d; i++)
				out[i] = (float)o[i]; /* exact: o is already in fp32 */
	}
done:
	free(p.q);
	free(p.k);
	free(p.v);
	free(o);
	return st;
}
