/* test_formats.c - rounding to tf32, the 8-bit, 4-bit and scale formats: every value, midpoint and boundary, against MPFR. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_mpfr.h"
#include "expect.h"
#include "skv.h"

/* The formats this file covers (fp16 and bf16 are in test_round.c). */
static const skv_format fmts[] = {SKV_TF32, SKV_E4M3, SKV_E4M3_SAT, SKV_E5M2, SKV_E5M2_SAT, SKV_E2M1,
				      SKV_E8M0, SKV_UE4M3};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* skv_round and the referee both give want. */
#define EXPECT_BOTH(nfail, what, f, x, want)                                                        \
	do {                                                                                        \
		double x_ = (x);                                                                    \
		EXPECT(nfail, what, f, x_, skv_round(f, x_), want);                                  \
		EXPECT(nfail, "ref " what, f, x_, ref_round(f, x_), want);                           \
	} while (0)

/* What a positive result beyond the largest finite value becomes. */
static double overflow_value(const ref_fmt *t)
{
	return t->ovf == SKV_OVERFLOW_INF ? INFINITY : t->ovf == SKV_OVERFLOW_NAN ? NAN : t->max;
}

/* The nonnegative finite values of f in increasing order, decoded from the
 * patterns with the sign bit clear (the encodings order them so, which is
 * checked); *n gets the count. The caller frees. */
static double *values_up(const ref_fmt *t, size_t *n)
{
	const uint64_t half = ref_npatterns(t) >> t->sbits;
	double *v = malloc(half * sizeof *v);
	size_t k = 0;

	assert_non_null(v);
	for (uint64_t b = 0; b < half; b++) {
		double x = ref_decode(t->f, b);
		if (!isfinite(x))
			continue;
		if (k > 0 && !(x > v[k - 1]))
			fail_msg("%s:%d: %s: pattern %#llx decodes to %a, not above %a", __FILE__, __LINE__, t->name,
				 (unsigned long long)b, x, v[k - 1]);
		v[k++] = x;
	}
	*n = k;
	return v;
}

/* ------------------------------------------------------------ every value */

/* Every pattern decodes (independently of the library) to a value that
 * skv_round and the referee leave unchanged, bit for bit; NaN patterns stay
 * NaN. The decoded largest and smallest positive values are the table's. */
static void test_every_value(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(fmts); i++) {
		const ref_fmt *t = ref_fmt_of(fmts[i]);
		size_t n;
		double *v = values_up(t, &n);

		for (uint64_t b = 0; b < ref_npatterns(t); b++) {
			double x = ref_decode(t->f, b);
			/* e5m2-sat's infinity patterns are no values of it: it
			 * saturates an infinite input */
			double want = isinf(x) && t->ovf != SKV_OVERFLOW_INF ? copysign(overflow_value(t), x) : x;
			EXPECT_BOTH(nfail, "round(value)", t->f, x, want);
		}
		/* the library's storage width is the referee's encoding width
		 * (tf32: its 19 bits held in a 32-bit word; ue4m3: 7 in a byte) */
		const int want_bits = t->f == SKV_TF32 ? 32 : t->f == SKV_UE4M3 ? 8 : t->sbits + t->ebits + t->mbits;
		if (skv_format_bits(t->f) != want_bits) {
			print_error("%s:%d: %s: skv_format_bits %d, encoding %d bits\n", __FILE__, __LINE__,
				    skv_format_name(t->f), skv_format_bits(t->f), want_bits);
			nfail++;
		}
		EXPECT(nfail, "largest decoded", t->f, v[n - 1], v[n - 1], t->max);
		EXPECT(nfail, "smallest positive decoded", t->f, v[0], v[v[0] == 0], t->min);
		free(v);
	}
	assert_int_equal(nfail, 0);
	assert_int_equal(skv_format_bits(SKV_FP16), 16);
	assert_int_equal(skv_format_bits(SKV_BF16), 16);
	assert_int_equal(skv_format_bits(SKV_FP32), 32);
	assert_int_equal(skv_format_bits(SKV_FP64), 64);
	assert_int_equal(skv_format_bits((skv_format)SKV_NFORMATS), 0);
}

/* ------------------------------------------------------------- midpoints */

/*
 * Every midpoint between consecutive nonnegative values, including the one
 * between max and the next value of the unbounded grid, max + 2^(emax-p+1)
 * (the overflow threshold), and the doubles one ulp either side, both signs
 * for a signed format. The expected result is known without MPFR: ties go
 * to the even pattern (for p = 1, where every significand is 1, to the
 * larger power of two, as MPFR rounds at precision 1); a result past max is
 * the policy's; and MPFR must agree too.
 */
static void test_midpoints(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(fmts); i++) {
		const ref_fmt *t = ref_fmt_of(fmts[i]);
		const double next = t->max + ldexp(1.0, t->emax - t->p + 1), ovf = overflow_value(t);
		size_t n;
		double *v = values_up(t, &n);

		for (size_t k = 0; k < n; k++) {
			const double lo = v[k], hi = (k + 1 < n) ? v[k + 1] : next;
			const double hi_r = (k + 1 < n) ? hi : ovf;
			const double mid = lo / 2 + hi / 2; /* exact: one more bit */
			const double tie = (t->p == 1 || (k % 2) != 0) ? hi_r : lo;
			for (int s = 0; s < 1 + t->is_signed; s++) {
				const double sg = s ? -1.0 : 1.0;
				EXPECT_BOTH(nfail, "round(mid)", t->f, sg * mid, sg * tie);
				EXPECT_BOTH(nfail, "round(mid-)", t->f, sg * nextafter(mid, 0.0), sg * lo);
				EXPECT_BOTH(nfail, "round(mid+)", t->f, sg * nextafter(mid, INFINITY), sg * hi_r);
			}
		}
		free(v);
	}
	assert_int_equal(nfail, 0);
}

/* ------------------------------------------------------------- the edges */

/*
 * The overflow boundary from max to twice the threshold and beyond,
 * infinities, NaN (a signalling pattern too), signed zeros, everything
 * below half the smallest subnormal (double subnormals too), and negative
 * inputs to an unsigned format, with the expected values written out from
 * the table's policy, sign and zero.
 */
static void test_edges(void **state)
{
	long nfail = 0;
	uint64_t seed = 17;

	(void)state;
	for (size_t i = 0; i < COUNT(fmts); i++) {
		const ref_fmt *t = ref_fmt_of(fmts[i]);
		const skv_format f = t->f;
		const double next = t->max + ldexp(1.0, t->emax - t->p + 1), ovf = overflow_value(t);
		const double thr = t->max / 2 + next / 2;
		const double big[] = {next, nextafter(next, INFINITY), 2 * next, 0x1p200, DBL_MAX, INFINITY};
		const double tiny[] = {DBL_TRUE_MIN, 0x1p-1060, DBL_MIN, 0x1p-600, t->min / 4, nextafter(t->min / 2, 0)};
		const double inf_r = t->ovf == SKV_OVERFLOW_INF ? INFINITY : ovf;

		EXPECT_BOTH(nfail, "round(max+)", f, nextafter(t->max, INFINITY), t->max);
		EXPECT_BOTH(nfail, "round(thr-)", f, nextafter(thr, 0), t->max);
		EXPECT_BOTH(nfail, "round(thr+)", f, nextafter(thr, INFINITY), ovf);
		for (size_t j = 0; j < COUNT(big); j++)
			EXPECT_BOTH(nfail, "round(big)", f, big[j], isinf(big[j]) ? inf_r : ovf);
		for (size_t j = 0; j < COUNT(tiny); j++)
			EXPECT_BOTH(nfail, "round(tiny)", f, tiny[j], t->has_zero ? 0.0 : t->min);
		/* Random doubles in (0, min/2) go to zero (or to min in a format
		 * without zero), in (min/2, min] to min. */
		for (int j = 0; j < 10000; j++) {
			double u = t->min / 2 * ldexp((double)(splitmix64(&seed) >> 11) + 1, -53);
			EXPECT_BOTH(nfail, "round(<min/2)", f, u, t->has_zero ? 0.0 : t->min);
			EXPECT_BOTH(nfail, "round(min/2+)", f, u + t->min / 2, t->min);
		}
		if (t->is_signed) {
			EXPECT_BOTH(nfail, "round(-big)", f, -0x1p200, -ovf);
			EXPECT_BOTH(nfail, "round(-inf)", f, -INFINITY, -inf_r);
			EXPECT_BOTH(nfail, "round(-tiny)", f, -DBL_TRUE_MIN, -0.0);
			EXPECT_BOTH(nfail, "round(-0)", f, -0.0, -0.0);
		}
		if (!t->is_signed) { /* a negative input is NaN, -0 is +0 (NaN without zero) */
			size_t n;
			double *v = values_up(t, &n);
			for (size_t k = 0; k < n; k++)
				EXPECT_BOTH(nfail, "round(-value)", f, -v[k], v[k] == 0 ? 0.0 : NAN);
			free(v);
			EXPECT_BOTH(nfail, "round(-0)", f, -0.0, t->has_zero ? 0.0 : NAN);
			EXPECT_BOTH(nfail, "round(-tiny)", f, -DBL_TRUE_MIN, NAN);
			EXPECT_BOTH(nfail, "round(-big)", f, -0x1p200, NAN);
			EXPECT_BOTH(nfail, "round(-inf)", f, -INFINITY, NAN);
		}
		EXPECT_BOTH(nfail, "round(+0)", f, 0.0, t->has_zero ? 0.0 : NAN);
		EXPECT_BOTH(nfail, "round(inf)", f, INFINITY, inf_r);
		EXPECT_BOTH(nfail, "round(nan)", f, NAN, NAN);
		EXPECT_BOTH(nfail, "round(-nan)", f, -NAN, NAN);
		EXPECT_BOTH(nfail, "round(snan)", f, from_bits(UINT64_C(0x7ff0000000000001)), NAN);
	}
	assert_int_equal(nfail, 0);
}

/* ------------------------------------------------------- random doubles */

/* A random double: a quarter raw 64-bit patterns (the whole double range,
 * infinities and NaN included), the rest with an exponent uniform over the
 * format's range widened a few binades either side, random sign and
 * fraction. */
static double random_double(uint64_t *s, const ref_fmt *t)
{
	uint64_t r = splitmix64(s);
	int lo = t->emin - t->p - 3, hi = t->emax + 2;
	int e;

	if ((r & 3) == 0)
		return from_bits(splitmix64(s));
	e = lo + (int)(splitmix64(s) % (uint64_t)(hi - lo + 1));
	return from_bits((r & UINT64_C(0x8000000000000000)) | ((uint64_t)(e + 1023) << 52) | (splitmix64(s) >> 12));
}

static void test_random(void **state)
{
	const long n = 1000000;
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(fmts); i++) {
		const ref_fmt *t = ref_fmt_of(fmts[i]);
		uint64_t seed = UINT64_C(0xf0f0000) + (uint64_t)t->f;
		for (long j = 0; j < n; j++) {
			double x = random_double(&seed, t);
			EXPECT(nfail, "round(random)", t->f, x, skv_round(t->f, x), ref_round(t->f, x));
		}
	}
	assert_int_equal(nfail, 0);
}

/* ----------------------------------------------------------- conversions */

/*
 * Conversions: every fp16 and bf16 value and 10^5 random fp32 patterns
 * rounded to each format, and every value of each format rounded to fp16,
 * bf16 and fp32 (back), all bit for bit against the referee.
 */
static void test_conversions(void **state)
{
	const skv_format wide[] = {SKV_FP16, SKV_BF16, SKV_FP32};
	long nfail = 0;
	uint64_t seed = 23;

	(void)state;
	for (size_t i = 0; i < COUNT(fmts); i++) {
		const ref_fmt *t = ref_fmt_of(fmts[i]);
		for (unsigned b = 0; b <= 0xffffu; b++)
			for (int w = 0; w < 2; w++) {
				double x = ref_decode16(wide[w], b);
				EXPECT(nfail, "from 16-bit", t->f, x, skv_round(t->f, x), ref_round(t->f, x));
			}
		for (int j = 0; j < 100000; j++) {
			uint32_t u = (uint32_t)splitmix64(&seed);
			float x32;
			memcpy(&x32, &u, sizeof x32);
			EXPECT(nfail, "from fp32", t->f, x32, skv_round(t->f, x32), ref_round(t->f, x32));
		}
		for (uint64_t b = 0; b < ref_npatterns(t); b++) {
			double v = ref_decode(t->f, b);
			for (size_t w = 0; w < COUNT(wide); w++)
				EXPECT(nfail, "to wide", wide[w], v, skv_round(wide[w], v), ref_round(wide[w], v));
		}
	}
	assert_int_equal(nfail, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_value), cmocka_unit_test(test_midpoints),
		cmocka_unit_test(test_edges),       cmocka_unit_test(test_random),
		cmocka_unit_test(test_conversions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
