/* ref_mpfr.h - test support: MPFR as the referee for rounding and arithmetic in each skv format. */
#ifndef SKV_REF_MPFR_H
#define SKV_REF_MPFR_H

/*
 * A format f with precision p and normal exponents emin..emax (as skv.h
 * gives them, significand in [1, 2)) is MPFR precision p with the exponent
 * range [emin - p + 2, emax + 1] (MPFR significands are in [1/2, 1)): the
 * smallest subnormal 2^(emin-p+1) is 0.5 * 2^(emin-p+2), the largest finite
 * value is below 2^(emax+1). Each operation is done with MPFR_RNDN (or the
 * given mode) in that range and then mpfr_subnormalize'd, which rounds again
 * to the precision the subnormal range allows, using the ternary value so
 * there is no double rounding. The parameters come from the library
 * (skv_format_precision/emin/emax); test_round.c checks them against an
 * independent table and checks this referee on every 16-bit value.
 *
 * MPFR requires mpfr_t inputs to lie in the current exponent range, so the
 * operands are set (exactly, at 53 bits) in the default range before it is
 * narrowed; they must be values of f, which every format value is. Results
 * are read back after the default range is restored.
 */

#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <string.h>

#include "skv.h"

typedef int (*ref_fn1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
typedef int (*ref_fn2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

typedef struct {
	mpfr_exp_t emin, emax; /* the range to restore */
} ref_range;

/* Narrows the exponent range to format f; returns the previous range. */
static inline ref_range ref_enter(skv_format f)
{
	ref_range old = {mpfr_get_emin(), mpfr_get_emax()};
	int p = skv_format_precision(f);

	mpfr_set_emin(skv_format_emin(f) - p + 2);
	mpfr_set_emax(skv_format_emax(f) + 1);
	return old;
}

static inline void ref_leave(ref_range old)
{
	mpfr_set_emin(old.emin);
	mpfr_set_emax(old.emax);
}

/* x rounded to f (MPFR: set at precision p, subnormalize). */
static inline double ref_round_mode(skv_format f, double x, mpfr_rnd_t rnd)
{
	mpfr_t r;
	ref_range old;
	int inex;
	double y;

	mpfr_init2(r, skv_format_precision(f));
	old = ref_enter(f);
	inex = mpfr_set_d(r, x, rnd);
	mpfr_subnormalize(r, inex, rnd);
	ref_leave(old);
	y = mpfr_get_d(r, MPFR_RNDN); /* exact: r has at most 53 bits */
	mpfr_clear(r);
	return y;
}

static inline double ref_round(skv_format f, double x) { return ref_round_mode(f, x, MPFR_RNDN); }

/* op(a) rounded to f with mode rnd; *ternary (may be NULL) gets the sign of
 * (result - exact). */
static inline double ref_op1_mode(skv_format f, ref_fn1 op, double a, mpfr_rnd_t rnd, int *ternary)
{
	mpfr_t r, x;
	ref_range old;
	int inex;
	double y;

	mpfr_init2(r, skv_format_precision(f));
	mpfr_init2(x, 53);
	mpfr_set_d(x, a, MPFR_RNDN);
	old = ref_enter(f);
	inex = op(r, x, rnd);
	inex = mpfr_subnormalize(r, inex, rnd);
	ref_leave(old);
	y = mpfr_get_d(r, MPFR_RNDN);
	if (ternary != NULL)
		*ternary = inex;
	mpfr_clears(r, x, (mpfr_ptr)0);
	return y;
}

static inline double ref_op1(skv_format f, ref_fn1 op, double a) { return ref_op1_mode(f, op, a, MPFR_RNDN, NULL); }

static inline double ref_op2(skv_format f, ref_fn2 op, double a, double b)
{
	mpfr_t r, x, z;
	ref_range old;
	int inex;
	double y;

	mpfr_init2(r, skv_format_precision(f));
	mpfr_inits2(53, x, z, (mpfr_ptr)0);
	mpfr_set_d(x, a, MPFR_RNDN);
	mpfr_set_d(z, b, MPFR_RNDN);
	old = ref_enter(f);
	inex = op(r, x, z, MPFR_RNDN);
	mpfr_subnormalize(r, inex, MPFR_RNDN);
	ref_leave(old);
	y = mpfr_get_d(r, MPFR_RNDN);
	mpfr_clears(r, x, z, (mpfr_ptr)0);
	return y;
}

/* a * b + c rounded once to f. */
static inline double ref_fma(skv_format f, double a, double b, double c)
{
	mpfr_t r, x, z, w;
	ref_range old;
	int inex;
	double y;

	mpfr_init2(r, skv_format_precision(f));
	mpfr_inits2(53, x, z, w, (mpfr_ptr)0);
	mpfr_set_d(x, a, MPFR_RNDN);
	mpfr_set_d(z, b, MPFR_RNDN);
	mpfr_set_d(w, c, MPFR_RNDN);
	old = ref_enter(f);
	inex = mpfr_fma(r, x, z, w, MPFR_RNDN);
	mpfr_subnormalize(r, inex, MPFR_RNDN);
	ref_leave(old);
	y = mpfr_get_d(r, MPFR_RNDN);
	mpfr_clears(r, x, z, w, (mpfr_ptr)0);
	return y;
}

/*
 * The value of 16-bit pattern `bits` in fp16 or bf16, decoded without the
 * library: fp16 field by field (sign, 5-bit exponent with bias 15, 10-bit
 * fraction; exponent 0 subnormal, 31 infinity or NaN); bf16 as the upper
 * half of a binary32 pattern converted by the hardware. NaN for another f.
 */
static inline double ref_decode16(skv_format f, unsigned bits)
{
	double sign = (bits & 0x8000u) ? -1.0 : 1.0;

	if (f == SKV_FP16) {
		unsigned e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
		if (e == 0x1fu)
			return m ? NAN : sign * INFINITY;
		if (e == 0)
			return sign * ldexp((double)m, -24);
		return sign * ldexp((double)(m | 0x400u), (int)e - 25);
	}
	if (f == SKV_BF16) {
		uint32_t u = (uint32_t)(bits & 0xffffu) << 16;
		float v;
		memcpy(&v, &u, sizeof v);
		return (double)v;
	}
	return NAN;
}

/* Bit-for-bit equality, with every NaN equal to every NaN. */
static inline int ref_same(double x, double y)
{
	if (x != x || y != y)
		return x != x && y != y;
	return memcmp(&x, &y, sizeof x) == 0;
}

#endif
