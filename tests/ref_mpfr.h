/* ref_mpfr.h - test support: MPFR as the referee for rounding and arithmetic in each skv format. */
#ifndef SKV_REF_MPFR_H
#define SKV_REF_MPFR_H

/*
 * The referee knows the formats from its own table (ref_fmts below, typed
 * from the standards, never read from the library; test_round.c checks the
 * library's parameters against it, and the table against the formats'
 * decoded bit patterns).
 *
 * A format with precision p and normal exponents emin..emax (significand in
 * [1, 2)) is MPFR precision p with the exponent range [emin - p + 2,
 * emax + 1] (MPFR significands are in [1/2, 1)): the smallest subnormal
 * 2^(emin-p+1) is 0.5 * 2^(emin-p+2), and every p-bit value of the binade
 * 2^emax is below 2^(emax+1). Each operation is done with MPFR_RNDN (or the
 * given mode) in that range and then mpfr_subnormalize'd, which rounds again
 * to the precision the subnormal range allows, using the ternary value so
 * there is no double rounding. That is the rounding with the exponent range
 * unbounded above; ref_finish then applies what the format does beyond its
 * largest finite value and with signs and zeros it cannot hold:
 * - a result above the largest finite value (e4m3's 480 and MPFR's own
 *   overflow to inf alike) becomes +-inf, NaN or +-max by the overflow
 *   policy;
 * - an unsigned format gives NaN for a negative exact result and +0 for an
 *   exact -0 (MPFR's zero carries the exact result's sign, and the ternary
 *   value tells an underflowed negative from an exact -0);
 * - a format without zero (e8m0) gives NaN for an exact zero and its
 *   smallest value for a positive result that underflowed to zero.
 *
 * MPFR requires mpfr_t inputs to lie in the current exponent range, so the
 * operands are set (exactly, at 53 bits) in the default range before it is
 * narrowed; they must be values of the format. Results are read back after
 * the default range is restored.
 */

#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "skv.h"

/* How an encoding uses its top exponent field. */
enum {
	REF_IEEE,   /* all ones: infinity (fraction 0) or NaN */
	REF_FN,     /* OCP E4M3: only all ones in exponent and fraction is NaN */
	REF_FINITE, /* every pattern is a number (OCP E2M1) */
	REF_E8M0    /* OCP MX scale: 2^(E - 127), 0xFF NaN, no zero */
};

typedef struct {
	skv_format f;
	const char *name;
	int sbits, ebits, mbits, bias, enc; /* the encoding */
	int p, emin, emax;                  /* precision, exponents of the smallest normal and the top binade */
	double max, min;                    /* largest finite value, smallest positive one */
	int ovf;                            /* SKV_OVERFLOW_* */
	int is_signed, has_zero, is_scale;
} ref_fmt;

/*
 * Sources: IEEE 754-2019 table 3.5 (fp16, fp32, fp64); bf16 and tf32 keep
 * binary32's exponent field and bias with 7 and 10 fraction bits (PTX ISA,
 * cvt: .bf16 and .tf32 destination types); OCP 8-bit Floating Point
 * Specification (OFP8) rev 1.0, tables 1 and 2 (E4M3: bias 7, NaN
 * S.1111.111, no infinity, max S.1111.110 = 448; E5M2: bias 15, IEEE
 * specials, max S.11110.11 = 57344); OCP Microscaling Formats (MX) v1.0
 * (E2M1: bias 1, no inf/NaN, max 6; E8M0: bias 127, 0xFF NaN, no sign, no
 * zero); NVFP4's block scale is E4M3 with the sign bit 0 (CUDA
 * __nv_fp8_e4m3, PTX .ue4m3). Policies: as the library documents them in
 * skv.h (IEEE overflow to inf; a plain OCP E4M3 conversion gives NaN;
 * .satfinite and the FP4 and scale formats saturate).
 */
static const ref_fmt ref_fmts[] = {
	{SKV_FP16, "fp16", 1, 5, 10, 15, REF_IEEE, 11, -14, 15, 65504.0, 0x1p-24, SKV_OVERFLOW_INF, 1, 1, 0},
	{SKV_BF16, "bf16", 1, 8, 7, 127, REF_IEEE, 8, -126, 127, 0x1.fep127, 0x1p-133, SKV_OVERFLOW_INF, 1, 1, 0},
	{SKV_FP32, "fp32", 1, 8, 23, 127, REF_IEEE, 24, -126, 127, FLT_MAX, 0x1p-149, SKV_OVERFLOW_INF, 1, 1, 0},
	{SKV_FP64, "fp64", 1, 11, 52, 1023, REF_IEEE, 53, -1022, 1023, DBL_MAX, 0x1p-1074, SKV_OVERFLOW_INF, 1, 1,
	 0},
	{SKV_TF32, "tf32", 1, 8, 10, 127, REF_IEEE, 11, -126, 127, 0x1.ffcp127, 0x1p-136, SKV_OVERFLOW_INF, 1, 1, 0},
	{SKV_E4M3, "e4m3", 1, 4, 3, 7, REF_FN, 4, -6, 8, 448.0, 0x1p-9, SKV_OVERFLOW_NAN, 1, 1, 0},
	{SKV_E4M3_SAT, "e4m3-sat", 1, 4, 3, 7, REF_FN, 4, -6, 8, 448.0, 0x1p-9, SKV_OVERFLOW_SAT, 1, 1, 0},
	{SKV_E5M2, "e5m2", 1, 5, 2, 15, REF_IEEE, 3, -14, 15, 57344.0, 0x1p-16, SKV_OVERFLOW_INF, 1, 1, 0},
	{SKV_E5M2_SAT, "e5m2-sat", 1, 5, 2, 15, REF_IEEE, 3, -14, 15, 57344.0, 0x1p-16, SKV_OVERFLOW_SAT, 1, 1, 0},
	{SKV_E2M1, "e2m1", 1, 2, 1, 1, REF_FINITE, 2, 0, 2, 6.0, 0.5, SKV_OVERFLOW_SAT, 1, 1, 0},
	{SKV_E8M0, "e8m0", 0, 8, 0, 127, REF_E8M0, 1, -127, 127, 0x1p127, 0x1p-127, SKV_OVERFLOW_SAT, 0, 0, 1},
	{SKV_UE4M3, "ue4m3", 0, 4, 3, 7, REF_FN, 4, -6, 8, 448.0, 0x1p-9, SKV_OVERFLOW_SAT, 0, 1, 1},
};
#define REF_NFMTS (sizeof ref_fmts / sizeof ref_fmts[0])

/* The referee's row for f; NULL if it has none. */
static inline const ref_fmt *ref_fmt_of(skv_format f)
{
	for (size_t i = 0; i < REF_NFMTS; i++)
		if (ref_fmts[i].f == f)
			return &ref_fmts[i];
	return NULL;
}

/* Number of bit patterns of f's encoding. */
static inline uint64_t ref_npatterns(const ref_fmt *t)
{
	return UINT64_C(1) << (t->sbits + t->ebits + t->mbits);
}

/* The value of pattern `bits` of f, decoded field by field from the table's
 * encoding (sign, exponent with bias, fraction; exponent 0 subnormal except
 * in e8m0), without the library. */
static inline double ref_decode(skv_format f, uint64_t bits)
{
	const ref_fmt *t = ref_fmt_of(f);
	const uint64_t mtop = (UINT64_C(1) << t->mbits) - 1, etop = (UINT64_C(1) << t->ebits) - 1;
	const uint64_t m = bits & mtop, e = (bits >> t->mbits) & etop;
	const int neg = t->sbits && ((bits >> (t->mbits + t->ebits)) & 1);
	double v;

	if (t->enc == REF_IEEE && e == etop)
		return m ? NAN : (neg ? -INFINITY : INFINITY);
	if ((t->enc == REF_FN && e == etop && m == mtop) || (t->enc == REF_E8M0 && e == etop))
		return NAN;
	if (t->enc == REF_E8M0)
		v = ldexp(1.0, (int)e - t->bias);
	else if (e == 0)
		v = ldexp((double)m, 1 - t->bias - t->mbits);
	else
		v = ldexp((double)(m | (mtop + 1)), (int)e - t->bias - t->mbits);
	return neg ? -v : v;
}

typedef int (*ref_fn1)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
typedef int (*ref_fn2)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

typedef struct {
	mpfr_exp_t emin, emax; /* the range to restore */
} ref_range;

/* Narrows the exponent range to format f; returns the previous range. */
static inline ref_range ref_enter(skv_format f)
{
	ref_range old = {mpfr_get_emin(), mpfr_get_emax()};
	const ref_fmt *t = ref_fmt_of(f);

	mpfr_set_emin(t->emin - t->p + 2);
	mpfr_set_emax(t->emax + 1);
	return old;
}

static inline void ref_leave(ref_range old)
{
	mpfr_set_emin(old.emin);
	mpfr_set_emax(old.emax);
}

/* The format's value of r, a result rounded in f's range with ternary
 * value inex (see the top of this file). */
static inline double ref_finish(skv_format f, mpfr_srcptr r, int inex)
{
	const ref_fmt *t = ref_fmt_of(f);
	double y;

	if (mpfr_nan_p(r))
		return NAN;
	if (!t->is_signed && mpfr_signbit(r))
		return (mpfr_zero_p(r) && inex == 0 && t->has_zero) ? 0.0 : NAN;
	if (!t->has_zero && mpfr_zero_p(r))
		return inex != 0 ? t->min : NAN;
	y = mpfr_get_d(r, MPFR_RNDN); /* exact: r has at most 53 bits */
	if (fabs(y) > t->max) {
		if (t->ovf == SKV_OVERFLOW_NAN)
			return NAN;
		if (t->ovf == SKV_OVERFLOW_SAT)
			return y < 0 ? -t->max : t->max;
		return y < 0 ? -INFINITY : INFINITY;
	}
	return y;
}

/* x rounded to f (MPFR: set at precision p, subnormalize). */
static inline double ref_round_mode(skv_format f, double x, mpfr_rnd_t rnd)
{
	mpfr_t r;
	ref_range old;
	int inex;
	double y;

	mpfr_init2(r, ref_fmt_of(f)->p);
	old = ref_enter(f);
	inex = mpfr_set_d(r, x, rnd);
	inex = mpfr_subnormalize(r, inex, rnd);
	ref_leave(old);
	y = ref_finish(f, r, inex);
	mpfr_clear(r);
	return y;
}

static inline double ref_round(skv_format f, double x) { return ref_round_mode(f, x, MPFR_RNDN); }

/* op(a) rounded to f with mode rnd; *ternary (may be NULL) gets the sign of
 * (result - exact) before the format's overflow policy. */
static inline double ref_op1_mode(skv_format f, ref_fn1 op, double a, mpfr_rnd_t rnd, int *ternary)
{
	mpfr_t r, x;
	ref_range old;
	int inex;
	double y;

	mpfr_init2(r, ref_fmt_of(f)->p);
	mpfr_init2(x, 53);
	mpfr_set_d(x, a, MPFR_RNDN);
	old = ref_enter(f);
	inex = op(r, x, rnd);
	inex = mpfr_subnormalize(r, inex, rnd);
	ref_leave(old);
	y = ref_finish(f, r, inex);
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

	mpfr_init2(r, ref_fmt_of(f)->p);
	mpfr_inits2(53, x, z, (mpfr_ptr)0);
	mpfr_set_d(x, a, MPFR_RNDN);
	mpfr_set_d(z, b, MPFR_RNDN);
	old = ref_enter(f);
	inex = op(r, x, z, MPFR_RNDN);
	inex = mpfr_subnormalize(r, inex, MPFR_RNDN);
	ref_leave(old);
	y = ref_finish(f, r, inex);
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

	mpfr_init2(r, ref_fmt_of(f)->p);
	mpfr_inits2(53, x, z, w, (mpfr_ptr)0);
	mpfr_set_d(x, a, MPFR_RNDN);
	mpfr_set_d(z, b, MPFR_RNDN);
	mpfr_set_d(w, c, MPFR_RNDN);
	old = ref_enter(f);
	inex = mpfr_fma(r, x, z, w, MPFR_RNDN);
	inex = mpfr_subnormalize(r, inex, MPFR_RNDN);
	ref_leave(old);
	y = ref_finish(f, r, inex);
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
