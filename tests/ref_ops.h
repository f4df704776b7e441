/* ref_ops.h - test support: MPFR-rounded operations in a format chosen by the test (each op rounded once, as tests/ref_mpfr.h rounds), and the lanes' butterfly as an independent halving fold. */
#ifndef SKV_REF_OPS_H
#define SKV_REF_OPS_H
#include "ref_mpfr.h"

static inline double r_add(skv_format f, double a, double b) { return ref_op2(f, mpfr_add, a, b); }
static inline double r_sub(skv_format f, double a, double b) { return ref_op2(f, mpfr_sub, a, b); }
static inline double r_mul(skv_format f, double a, double b) { return ref_op2(f, mpfr_mul, a, b); }
static inline double r_div(skv_format f, double a, double b) { return ref_op2(f, mpfr_div, a, b); }
static inline double r_fma(skv_format f, double a, double b, double c) { return ref_fma(f, a, b, c); }
static inline double r_exp(skv_format f, double a) { return ref_op1(f, mpfr_exp, a); }
static inline double r_exp2(skv_format f, double a) { return ref_op1(f, mpfr_exp2, a); }
static inline double r_log(skv_format f, double a) { return ref_op1(f, mpfr_log, a); }
static inline double r_log2(skv_format f, double a) { return ref_op1(f, mpfr_log2, a); }

/* The butterfly of T lanes (T a power of two, at most 1024) as a halving
 * fold: the first exchange (mask T/2) leaves lane i < T/2 with a_i +
 * a_(i + T/2), and addition commutes, so lane 0 ends with fold(v) for v_i =
 * a_i + a_(i+T/2). For T > 32 the 32-lane warps fold first (masks 16..1),
 * then the warp sums (masks T/2..32). a[] is overwritten. */
static inline double ref_fold(skv_format f, double *a, size_t n)
{
	for (; n > 1; n /= 2)
		for (size_t i = 0; i < n / 2; i++)
			a[i] = r_add(f, a[i], a[i + n / 2]);
	return a[0];
}

static inline double ref_butterfly(skv_format f, const double *lane, size_t T)
{
	double a[1024], warp[32];
	memcpy(a, lane, T * sizeof *a);
	if (T <= 32)
		return ref_fold(f, a, T);
	for (size_t w = 0; w < T / 32; w++)
		warp[w] = ref_fold(f, a + 32 * w, 32);
	return ref_fold(f, warp, T / 32);
}
#endif
