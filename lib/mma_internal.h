/* mma_internal.h - what lib/mma.c (the general block FMA) and lib/mma_fast.c (its common case) share. */
#ifndef SKV_MMA_INTERNAL_H
#define SKV_MMA_INTERNAL_H

#include <math.h>

#include "fmt_inline.h"
#include "skv.h"

enum { NMAX = 64 }; /* the most products one block takes */

/* 2^e for a normal double exponent. */
static inline double pow2i(int e) { return skv_from_bits_i(SKV_I_POW2_BITS(e)); }

/* floor(log2 |x|) of a nonzero normal double, from its exponent field. */
static inline int expo(double x) { return (int)((skv_bits_i(x) >> 52) & 0x7ff) - 1023; }

/* skv_mma_round_out's normal range, e_v in [emin_out, emax_out], for rz
 * and rne, on v's bits: the low s = 52 - out_frac significand bits cleared
 * (rz: truncation of the magnitude), after adding 2^(s-1) - 1 plus the
 * kept last bit (rne: ties to even; a carry into the exponent field is the
 * rounding up to the next binade). The result is then at least 2^e_v, so
 * only overflow remains: a field above emax_out is +-inf. Returns 0, *r
 * untouched, outside that case. */
static inline int skv_mma_round_bits(double *r, const skv_mma_unit *u, double v, skv_mma_round m)
{
	const int e_v = expo(v);
	if (e_v < u->emin_out || e_v > u->emax_out || (m != SKV_MMA_RZ && m != SKV_MMA_RNE))
		return 0;
	const int s = 52 - u->par.out_frac;
	uint64_t b = skv_bits_i(v);
	if (m == SKV_MMA_RNE)
		b += ((UINT64_C(1) << (s - 1)) - 1) + ((b >> s) & 1);
	b &= ~((UINT64_C(1) << s) - 1);
	*r = (int)((b >> 52) & 0x7ff) - 1023 > u->emax_out ? copysign(INFINITY, v) : skv_from_bits_i(b);
	return 1;
}

/* The base input format of f (e4m3-sat: e4m3, ...), -1 if f is no unit
 * input (lib/mma.c). */
int skv_mma_input_base(skv_format f);

/* v (exact) rounded once to the unit's output in mode m (lib/mma.c). */
double skv_mma_round_out(const skv_mma_unit *u, double v, skv_mma_round m);

/* GEMM.m's NaN and infinity rule over the K products and c (lib/mma.c). */
double skv_mma_special(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
		       double c);

/* The chain of blocks for a unit with u->fast, no halves and c aligned,
 * c finite (lib/mma_fast.c): the same value as lib/mma.c's gather path. */
double skv_mma_fast_dot(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
			double c);

/* kt[4 i + t] = kr[t d + i] for t < 4, i < d: four rows as four columns. */
void skv_mma_transpose4(double *kt, const double *kr, size_t d);

#endif
