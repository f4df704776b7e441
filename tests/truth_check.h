/* truth_check.h - test support: exact distances between double-double truths and MPFR values. */
#ifndef SKV_TRUTH_CHECK_H
#define SKV_TRUTH_CHECK_H
#include <math.h>
#include <mpfr.h>
#include <stddef.h>
#include <stdlib.h>

#include "skv.h"

enum { CMP_PREC = 1200 };

/* |hi + lo - x|, the sum formed exactly at 1200 bits (hi and lo are at
 * most about 1100 binades apart). */
static inline double dd_dist(skv_dd t, mpfr_srcptr x)
{
	mpfr_t a;
	mpfr_init2(a, CMP_PREC);
	mpfr_set_d(a, t.hi, MPFR_RNDN);
	mpfr_add_d(a, a, t.lo, MPFR_RNDN);
	mpfr_sub(a, a, x, MPFR_RNDN);
	const double r = fabs(mpfr_get_d(a, MPFR_RNDN));
	mpfr_clear(a);
	return r;
}

/* ||a - ref||_2, rounded up, and ||ref||_2 in *den (a_i double-doubles,
 * ref_i MPFR values), each difference formed exactly at 1200 bits. */
static inline double dd_norm_err_mpfr(double *den_out, const skv_dd *a, mpfr_t *ref, size_t n)
{
	mpfr_t x, num, den;
	mpfr_inits2(CMP_PREC, x, num, den, (mpfr_ptr)0);
	mpfr_set_zero(num, 1);
	mpfr_set_zero(den, 1);
	for (size_t i = 0; i < n; i++) {
		mpfr_set_d(x, a[i].hi, MPFR_RNDN);
		mpfr_add_d(x, x, a[i].lo, MPFR_RNDN);
		mpfr_sub(x, x, ref[i], MPFR_RNDN);
		mpfr_fma(num, x, x, num, MPFR_RNDN);
		mpfr_fma(den, ref[i], ref[i], den, MPFR_RNDN);
	}
	mpfr_sqrt(num, num, MPFR_RNDU);
	mpfr_sqrt(den, den, MPFR_RNDN);
	*den_out = mpfr_get_d(den, MPFR_RNDN);
	const double r = mpfr_get_d(num, MPFR_RNDU);
	mpfr_clears(x, num, den, (mpfr_ptr)0);
	return r;
}

/* The same against a referee b + b3 known to three doubles (b3 NULL: to
 * two), b_i + b3_i formed exactly. */
static inline double dd_norm_err3(double *den_out, const skv_dd *a, const skv_dd *b, const double *b3,
				  size_t n)
{
	mpfr_t *y = malloc(n * sizeof *y);
	for (size_t i = 0; i < n; i++) {
		mpfr_init2(y[i], CMP_PREC);
		mpfr_set_d(y[i], b[i].hi, MPFR_RNDN);
		mpfr_add_d(y[i], y[i], b[i].lo, MPFR_RNDN);
		mpfr_add_d(y[i], y[i], b3 ? b3[i] : 0.0, MPFR_RNDN);
	}
	const double r = dd_norm_err_mpfr(den_out, a, y, n);
	for (size_t i = 0; i < n; i++)
		mpfr_clear(y[i]);
	free(y);
	return r;
}

/* ||a - b||_2 / ||b||_2 (+inf for ||b|| = 0 < ||a - b||, 0 for 0 / 0). */
static inline double dd_norm_rel(const skv_dd *a, const skv_dd *b, size_t n)
{
	double den;
	const double num = dd_norm_err3(&den, a, b, NULL, n);
	return num == 0 ? 0 : num / den;
}
#endif
