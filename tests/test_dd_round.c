/* test_dd_round.c - skv_dd_round in every format and overflow policy, against one rounding of hi + lo written out in MPFR. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "ref_mpfr.h"
#include "skv.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Formats whose midpoints are all tried (fp16 and bf16: test_metrics.c). */
static const skv_format swept[] = {SKV_TF32, SKV_E4M3, SKV_E4M3_SAT, SKV_E5M2, SKV_E5M2_SAT, SKV_E2M1,
				       SKV_E8M0, SKV_UE4M3};

/*
 * The reference: s = hi + lo exact in MPFR, then one rounding written out
 * from the referee's table (not through a narrowed exponent range, which
 * MPFR requires the input to lie in): below 2^emin a multiple of the
 * smallest subnormal by mpfr_rint, else p bits with the exponent unbounded;
 * then what the format does past max (its policy), with a negative value in
 * an unsigned format (NaN), with zero where it has none (NaN for an exact 0,
 * the smallest value for a positive s that rounds to 0).
 */
static double ref_dd(skv_format f, double hi, double lo)
{
	const ref_fmt *t = ref_fmt_of(f);
	mpfr_t s, r;
	double y;
	int sgn;

	mpfr_init2(s, 2200);
	mpfr_init2(r, t->p);
	mpfr_set_d(s, hi, MPFR_RNDN);
	mpfr_add_d(s, s, lo, MPFR_RNDN); /* exact at 2200 bits */
	sgn = mpfr_sgn(s);
	if (sgn == 0 || mpfr_get_exp(s) <= t->emin) { /* |s| < 2^emin */
		mpfr_mul_2si(s, s, t->p - 1 - t->emin, MPFR_RNDN); /* in units of the smallest subnormal */
		mpfr_rint(s, s, MPFR_RNDN);
		y = ldexp(mpfr_get_d(s, MPFR_RNDN), t->emin - t->p + 1);
	} else {
		mpfr_set(r, s, MPFR_RNDN);
		y = mpfr_get_d(r, MPFR_RNDN);
	}
	mpfr_clears(s, r, (mpfr_ptr)0);
	if (y == 0 && sgn < 0)
		y = -0.0;
	if (!t->is_signed && (sgn < 0 || signbit(y)))
		return NAN;
	if (!t->has_zero && y == 0)
		return sgn > 0 ? t->min : NAN;
	if (fabs(y) > t->max)
		return t->ovf == SKV_OVERFLOW_NAN ? NAN : t->ovf == SKV_OVERFLOW_SAT ? copysign(t->max, y) : y * INFINITY;
	return y;
}

static long check(skv_format f, double hi, double lo, int line)
{
	skv_dd d = {hi, lo};
	double got = skv_dd_round(f, d), want = ref_dd(f, hi, lo);
	if (ref_same(got, want))
		return 0;
	print_error("%s:%d: skv_dd_round(%s, %a + %a) = %a, want %a\n", __FILE__, line, skv_format_name(f), hi, lo,
		    got, want);
	return 1;
}

/* Every midpoint of each swept format, the overflow threshold max + q/2
 * included (q the spacing of the top binade), with lo a quarter double ulp
 * either way, both signs; the doubles next to each midpoint with lo toward
 * it; and every value with the same lo. */
static void test_midpoints(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(swept) && nfail < 10; i++) {
		const ref_fmt *t = ref_fmt_of(swept[i]);
		const uint64_t half = ref_npatterns(t) >> t->sbits;
		const double top = t->max + ldexp(1.0, t->emax - t->p + 1);
		double prev = NAN;
		for (uint64_t b = 0; b <= half && nfail < 10; b++) {
			double v = b < half ? ref_decode(t->f, b) : top;
			if (!isfinite(v))
				v = top; /* the patterns past max (inf, NaN) */
			if (v == prev || v == 0) /* a double-double with hi = 0 is 0 itself */
				continue;
			const double m = isnan(prev) ? v : prev / 2 + v / 2, q = 0.25 * (nextafter(m, INFINITY) - m);
			for (int s = -1; s <= 1; s += 2) {
				/* hi one double beyond the midpoint, lo back toward it:
				 * t stays beyond, so hi's own rounding is t's */
				const double mo = nextafter(m, s * INFINITY), qo = 0.25 * (nextafter(fabs(mo), INFINITY) - fabs(mo));
				nfail += check(t->f, m, s * q, __LINE__);
				nfail += check(t->f, -m, s * q, __LINE__);
				nfail += check(t->f, v, s * q, __LINE__);
				nfail += check(t->f, mo, -s * qo, __LINE__);
				nfail += check(t->f, -mo, s * qo, __LINE__);
			}
			prev = v;
		}
	}
	assert_int_equal(nfail, 0);
}

/* Random pairs over every format's range: hi with a random exponent from
 * below the subnormals to past the top, lo within half a double ulp of it. */
static void test_random(void **state)
{
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15);
	long nfail = 0;

	(void)state;
	for (int f = 0; f < SKV_NFORMATS && nfail < 10; f++) {
		const ref_fmt *t = ref_fmt_of((skv_format)f);
		const int elo = t->emin - t->p - 2, ehi = t->emax + 2;
		for (int i = 0; i < 50000 && nfail < 10; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
			const int e = elo + (int)(x % (uint64_t)(ehi - elo + 1));
			double hi = ldexp((double)(x >> 11) * 0x1p-53 + 0.5, e > 1023 ? 1023 : e);
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			const double lo = ((double)(x >> 11) * 0x1p-53 - 0.5) * (nextafter(hi, INFINITY) - hi);
			if (x & 1)
				hi = -hi;
			/* Half the cases on hi rounded to the format's grid or its
			 * midpoints, where lo decides. */
			if ((x >> 1) & 1) {
				const double q = ldexp(1.0, (ilogb(hi) < t->emin ? t->emin : ilogb(hi)) - t->p);
				hi = nearbyint(hi / q) * q;
			}
			if (isfinite(hi) && hi != 0 && hi + lo == hi) /* a double-double: hi = RN(hi + lo) */
				nfail += check((skv_format)f, hi, lo, __LINE__);
		}
	}
	assert_int_equal(nfail, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_midpoints),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
