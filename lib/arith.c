/* arith.c - emulated arithmetic in each format (public wrappers) and the MPFR slow path of the elementary functions. */
#include <math.h>
#include <mpfr.h>

#include "fmt_inline.h"
#include "skv.h"

/* Working precision of the slow path. For a transcendental value v the
 * 128-bit result z satisfies |z - v| <= 2^-127 |z|; rounding z to odd in
 * double (53 >= p + 2 bits) and then to nearest in f gives RN_f(v) unless v
 * lies within 2^-127 relative of a midpoint of f. The exact cases
 * (exp(0), exp2 of an integer, log(1), log2 of a power of two, log1p(0),
 * expm1(0)) MPFR returns exactly (ternary 0), the odd rounding keeps them,
 * and the last rounding applies the tie rule when one is a midpoint of f:
 * log2(512) = 9 lies halfway between e5m2's 8 and 10 and goes to the even
 * 8. That no input of fp16, bf16 or the 8- and 4-bit formats comes that
 * close to a midpoint is checked on all of their inputs in
 * tests/test_arith.c (which also runs this path alone on every input). */
#define SKV_HARD_PREC 128

/* RO53(z): z truncated to a double, last significand bit set if inexact.
 * Inside the double normal range this is round to odd. Outside it the
 * rounding to f is decided anyway: a z below 2^-1022 is below half of every
 * format's smallest subnormal (2^-150) and gives its zero (e8m0 never gets
 * there: its values are at least 2^-127, so exp and exp2 of them are at
 * least 1, expm1 and log1p above 2^-128, log and log2 at least -127 or
 * NaN), and a z above DBL_MAX
 * truncates to DBL_MAX, which overflows f as z does. */
static double skv_get_d_odd(const mpfr_t z)
{
	double d = mpfr_get_d(z, MPFR_RNDZ);
	uint64_t u;

	if (mpfr_cmp_d(z, d) == 0 || !isfinite(d) || d == 0)
		return d;
	u = skv_bits_i(d);
	u |= 1;
	return skv_from_bits_i(u);
}

double skv_fn_hard(skv_format f, skv_fn fn, double x)
{
	mpfr_t z, mx;
	double r;

	if ((unsigned)f >= SKV_NFORMATS || skv_fmts_i[f].kind == SKV_RND_ID || (unsigned)fn >= SKV_NFNS)
		return NAN;
	/* The default exponent range holds every double and every result here,
	 * and no global MPFR state is changed, so this is safe to call from
	 * several threads (MPFR's constant caches are per thread when MPFR is
	 * built thread-safe, as Debian's is). */
	mpfr_init2(z, SKV_HARD_PREC);
	mpfr_init2(mx, 53);
	mpfr_set_d(mx, x, MPFR_RNDN); /* exact */
	switch (fn) {
	case SKV_FN_EXP: mpfr_exp(z, mx, MPFR_RNDN); break;
	case SKV_FN_EXP2: mpfr_exp2(z, mx, MPFR_RNDN); break;
	case SKV_FN_LOG: mpfr_log(z, mx, MPFR_RNDN); break;
	case SKV_FN_LOG2: mpfr_log2(z, mx, MPFR_RNDN); break;
	case SKV_FN_LOG1P: mpfr_log1p(z, mx, MPFR_RNDN); break;
	case SKV_FN_EXPM1: mpfr_expm1(z, mx, MPFR_RNDN); break;
	}
	r = skv_round_i(f, skv_get_d_odd(z));
	mpfr_clear(mx);
	mpfr_clear(z);
	return r;
}

double skv_add(skv_format f, double a, double b) { return skv_add_i(f, a, b); }
double skv_sub(skv_format f, double a, double b) { return skv_sub_i(f, a, b); }
double skv_mul(skv_format f, double a, double b) { return skv_mul_i(f, a, b); }
double skv_div(skv_format f, double a, double b) { return skv_div_i(f, a, b); }
double skv_fma(skv_format f, double a, double b, double c) { return skv_fma_i(f, a, b, c); }
double skv_sqrt(skv_format f, double a) { return skv_sqrt_i(f, a); }
double skv_exp(skv_format f, double a) { return skv_exp_i(f, a); }
double skv_exp2(skv_format f, double a) { return skv_exp2_i(f, a); }
double skv_log(skv_format f, double a) { return skv_log_i(f, a); }
double skv_log2(skv_format f, double a) { return skv_log2_i(f, a); }
double skv_log1p(skv_format f, double a) { return skv_log1p_i(f, a); }
double skv_expm1(skv_format f, double a) { return skv_expm1_i(f, a); }
