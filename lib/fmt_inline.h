/* fmt_inline.h - internal: inline rounding to each format and emulated arithmetic for hot loops. */
#ifndef SKV_FMT_INLINE_H
#define SKV_FMT_INLINE_H

/*
 * Every value is carried in a double. skv_round_i(f, x) rounds a double once,
 * to nearest with ties to even, to format f; the skv_OP_i functions return
 * the exact result of OP on arguments that are already values of f, rounded
 * once to f. The public functions in lib/format.c and lib/arith.c are thin
 * wrappers around these; the kernels call these directly. An out-of-range f
 * gives NaN, never a crash (callers validate configurations first).
 *
 * Requires the default floating-point environment (round to nearest, no
 * flush-to-zero) and -ffp-contract=off, which the Makefile sets.
 */

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "skv.h"

#define SKV_I_SIGN UINT64_C(0x8000000000000000)
#define SKV_I_INF UINT64_C(0x7ff0000000000000)

/* Bit pattern of 2^e for a normal double exponent e (-1022 <= e <= 1023). */
#define SKV_I_POW2_BITS(e) ((uint64_t)((e) + 1023) << 52)

static inline uint64_t skv_bits_i(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static inline double skv_from_bits_i(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/*
 * Rounds x to a binary format of precision p (p <= 52) whose normal range is
 * [2^emin, 2^(emax+1)), with subnormals, ties to even. emin - p + 53 must be
 * a normal double exponent (true for fp16 and bf16).
 *
 * Normal range of the format (|x| >= 2^emin): x is a normal double there
 * (2^emin >= 2^-126 > 2^-1022), so dropping the low 53 - p bits of its
 * pattern with round-half-even on the integer is the rounding: adding
 * half - 1 + lsb carries into the kept bits exactly when the dropped part is
 * above half, or equal to half with the kept part odd; a carry out of the
 * significand increments the exponent field, which is the right result (the
 * next binade's smallest value). A result >= 2^(emax+1) is an overflow: by
 * the IEEE rule (round as if the exponent were unbounded, then overflow) that
 * includes the midpoint between the largest finite value and 2^(emax+1),
 * since the tie goes to the even candidate 2^(emax+1).
 *
 * Subnormal range (|x| < 2^emin): the result is a multiple of the smallest
 * subnormal s = 2^(emin-p+1). With C = 2^52 * s, the sum |x| + C lies in
 * [C, 2C) where the double spacing is exactly s, so the hardware's one
 * rounding of the sum is round-to-nearest-even of |x| onto the grid sZ
 * (C is an even multiple of s, so the parity of the multiple is unchanged);
 * subtracting C is exact (Sterbenz). This covers doubles below s/2, which go
 * to zero, and the tie s/2, which goes to the even 0. The sign is put back
 * afterwards, so -0 and negative tiny values give -0.
 */
static inline double skv_round_narrow_i(double x, int p, int emin, int emax)
{
	uint64_t u = skv_bits_i(x);
	uint64_t sign = u & SKV_I_SIGN;
	uint64_t a = u ^ sign;

	if (a >= SKV_I_POW2_BITS(emin)) {
		const unsigned sh = 53u - (unsigned)p;
		const uint64_t low = (UINT64_C(1) << sh) - 1;

		if (a >= SKV_I_INF)
			return x + x; /* infinity stays, NaN is quieted */
		a += (low >> 1) + ((a >> sh) & 1);
		a &= ~low;
		if (a >= SKV_I_POW2_BITS(emax + 1))
			a = SKV_I_INF;
		return skv_from_bits_i(a | sign);
	}
	{
		const double c = skv_from_bits_i(SKV_I_POW2_BITS(emin - p + 53));
		double r = (skv_from_bits_i(a) + c) - c;
		return skv_from_bits_i(skv_bits_i(r) | sign);
	}
}

/* The format's one rounding. fp32: the hardware's double -> float
 * conversion is one correct rounding (RNE, subnormals, overflow to inf) and
 * float -> double is exact. fp64: identity. */
static inline double skv_round_i(skv_format f, double x)
{
	switch (f) {
	case SKV_FP64: return x;
	case SKV_FP32: return (double)(float)x;
	case SKV_FP16: return skv_round_narrow_i(x, 11, -14, 15);
	case SKV_BF16: return skv_round_narrow_i(x, 8, -126, 127);
	default: return NAN;
	}
}

/*
 * +, -, *, /, sqrt: the double result is the exact result rounded once to
 * 53 bits (exact for + and * of fp16 and bf16 values often; always for *
 * up to p = 26). Rounding it again to p bits gives the correctly rounded
 * p-bit result because 53 >= 2p + 2 for p <= 24 (Roux 2014; Figueroa 1995):
 * the first rounding can never move a non-midpoint onto a p-bit midpoint.
 * The operands are small enough that the double computation neither
 * overflows nor underflows for fp16, bf16 and fp32 values, so the subnormal
 * and overflow behaviour is decided by the final rounding alone.
 */
static inline double skv_add_i(skv_format f, double a, double b) { return skv_round_i(f, a + b); }
static inline double skv_sub_i(skv_format f, double a, double b) { return skv_round_i(f, a - b); }
static inline double skv_mul_i(skv_format f, double a, double b) { return skv_round_i(f, a * b); }
static inline double skv_div_i(skv_format f, double a, double b) { return skv_round_i(f, a / b); }
static inline double skv_sqrt_i(skv_format f, double a) { return skv_round_i(f, sqrt(a)); }

/*
 * a + b rounded to odd in double: the truncation of the exact sum with the
 * last significand bit forced to 1 when the sum is inexact. s = RN(a + b)
 * and e = a + b - s exactly (Knuth's TwoSum, valid without overflow). If
 * e == 0, s is exact. Otherwise the exact sum lies strictly between two
 * consecutive doubles, one of them odd; s is one of the two, and if s is
 * even the odd one is its neighbour on the side of e. Stepping one ulp in
 * magnitude is +-1 on the pattern (also across a binade boundary). s != 0
 * when e != 0 here because the callers' sums are multiples of 2^-298, far
 * above the double underflow threshold.
 */
static inline double skv_add_odd_i(double a, double b)
{
	double s = a + b;
	double bb = s - a;
	double e = (a - (s - bb)) + (b - bb);
	uint64_t u;

	if (e == 0 || !isfinite(s))
		return s;
	u = skv_bits_i(s);
	if ((u & 1) == 0)
		u = ((e > 0) == (s > 0)) ? u + 1 : u - 1;
	return skv_from_bits_i(u);
}

/*
 * fma: for p <= 26 the product of two p-bit values has at most 2p <= 52
 * significant bits and, for fp16, bf16 and fp32 exponents, lies far inside
 * the double range, so a * b is exact in double. The sum is rounded to odd
 * in double and then to nearest in f; rounding to odd at precision
 * 53 >= p + 2 followed by round to nearest gives the correctly rounded
 * result (Boldo and Melquiond, IEEE TC 57(4), 2008). fp64: the C library's
 * fma, which is correctly rounded.
 */
static inline double skv_fma_i(skv_format f, double a, double b, double c)
{
	if (f == SKV_FP64)
		return fma(a, b, c);
	return skv_round_i(f, skv_add_odd_i(a * b, c));
}

/* The elementary functions, for the slow path below. */
typedef enum {
	SKV_FN_EXP = 0,
	SKV_FN_EXP2 = 1,
	SKV_FN_LOG = 2,
	SKV_FN_LOG2 = 3,
	SKV_FN_LOG1P = 4,
	SKV_FN_EXPM1 = 5
} skv_fn;
#define SKV_NFNS 6

/* Slow path (lib/arith.c): fn(x) evaluated with MPFR at 128 bits, rounded
 * to odd in double, then rounded to f (fp16, bf16 or fp32: round to odd at
 * 53 bits then to p <= 51 bits is one correct rounding). NaN for fp64, an
 * unknown f or fn. */
double skv_fn_hard(skv_format f, skv_fn fn, double x);

/* Relative half-width of the uncertainty interval around a libm result y.
 * glibc's exp, exp2, log, log2 are within 0.52 double ulp and log1p, expm1
 * within about 1 ulp (glibc manual, "Errors in Math Functions"); the
 * interval y (1 +- 2^-46) has half-width at least 64 double ulps of y, far
 * beyond either bound. */
#define SKV_FN_MARGIN 0x1p-46

/*
 * y = libm fn(x) in double, rounded to f.
 * fp64: y itself (faithful). fp32, fp16, bf16: correctly rounded. The exact value lies in
 * I = [y - d, y + d], d = |y| 2^-46 (see SKV_FN_MARGIN). Rounding is
 * monotone, so if both ends of I round to the same value r, every point of I
 * does, and r is the correctly rounded result. Otherwise a format midpoint
 * lies in I (a hard case: for 16-bit formats a few inputs at most, typically
 * none, since the exact value of a transcendental function is never a
 * midpoint except at the exact cases; for fp32 about one call in 2^22), and
 * the value is recomputed with MPFR. Infinite and NaN y are final
 * (overflow, poles, domain errors). Correct rounding also makes the result
 * independent of the platform's libm, as long as it is within 64 ulps.
 */
static inline double skv_fn_finish_i(skv_format f, skv_fn fn, double x, double y)
{
	double d, lo, hi;

	switch (f) {
	case SKV_FP64: return y;
	case SKV_FP32:
	case SKV_FP16:
	case SKV_BF16: break;
	default: return NAN;
	}
	d = fabs(y) * SKV_FN_MARGIN;
	lo = skv_round_i(f, y - d);
	hi = skv_round_i(f, y + d);
	if (lo == hi)
		return lo; /* also right for y = +-0: d = 0 and y - 0 keeps the sign */
	if (!isfinite(y))
		return skv_round_i(f, y);
	return skv_fn_hard(f, fn, x);
}

static inline double skv_exp_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_EXP, a, exp(a)); }
static inline double skv_exp2_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_EXP2, a, exp2(a)); }
static inline double skv_log_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_LOG, a, log(a)); }
static inline double skv_log2_i(skv_format f, double a) { return skv_fn_finish_i(f, SKV_FN_LOG2, a, log2(a)); }
static inline double skv_log1p_i(skv_format f, double a)
{
	return skv_fn_finish_i(f, SKV_FN_LOG1P, a, log1p(a));
}
static inline double skv_expm1_i(skv_format f, double a)
{
	return skv_fn_finish_i(f, SKV_FN_EXPM1, a, expm1(a));
}

#endif
