/* test_round.c - skv_round and the format parameters, bit for bit against MPFR and independent decoding. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ref_mpfr.h"
#include "expect.h"
#include "skv.h"

static const skv_format all_formats[] = {SKV_FP16, SKV_BF16, SKV_FP32, SKV_FP64};
static const skv_format narrow_formats[] = {SKV_FP16, SKV_BF16};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------- parameters */

/* The table of numerics.md (and of skv.h for the formats added since),
 * typed in independently of lib/format.c and of the referee's table. */
static const struct {
	skv_format f;
	const char *name;
	int p, emin, emax;
	double max, u, min_normal, min_sub;
	int mpfr_emin, mpfr_emax;
	int ovf, sgn, scale, zero;
} table[] = {
	{SKV_FP16, "fp16", 11, -14, 15, 65504.0, 0x1p-11, 0x1p-14, 0x1p-24, -23, 16, SKV_OVERFLOW_INF, 1, 0, 1},
	{SKV_BF16, "bf16", 8, -126, 127, 0x1.fep127, 0x1p-8, 0x1p-126, 0x1p-133, -132, 128, SKV_OVERFLOW_INF, 1, 0, 1},
	{SKV_FP32, "fp32", 24, -126, 127, FLT_MAX, 0x1p-24, FLT_MIN, 0x1p-149, -148, 128, SKV_OVERFLOW_INF, 1, 0, 1},
	{SKV_FP64, "fp64", 53, -1022, 1023, DBL_MAX, 0x1p-53, DBL_MIN, 0x1p-1074, -1073, 1024, SKV_OVERFLOW_INF, 1, 0,
	 1},
	{SKV_TF32, "tf32", 11, -126, 127, 0x1.ffcp127, 0x1p-11, 0x1p-126, 0x1p-136, -135, 128, SKV_OVERFLOW_INF, 1, 0,
	 1},
	{SKV_E4M3, "e4m3", 4, -6, 8, 448.0, 0x1p-4, 0x1p-6, 0x1p-9, -8, 9, SKV_OVERFLOW_NAN, 1, 0, 1},
	{SKV_E4M3_SAT, "e4m3-sat", 4, -6, 8, 448.0, 0x1p-4, 0x1p-6, 0x1p-9, -8, 9, SKV_OVERFLOW_SAT, 1, 0, 1},
	{SKV_E5M2, "e5m2", 3, -14, 15, 57344.0, 0x1p-3, 0x1p-14, 0x1p-16, -15, 16, SKV_OVERFLOW_INF, 1, 0, 1},
	{SKV_E5M2_SAT, "e5m2-sat", 3, -14, 15, 57344.0, 0x1p-3, 0x1p-14, 0x1p-16, -15, 16, SKV_OVERFLOW_SAT, 1, 0, 1},
	{SKV_E2M1, "e2m1", 2, 0, 2, 6.0, 0x1p-2, 1.0, 0.5, 0, 3, SKV_OVERFLOW_SAT, 1, 0, 1},
	{SKV_E8M0, "e8m0", 1, -127, 127, 0x1p127, 0x1p-1, 0x1p-127, 0x1p-127, -126, 128, SKV_OVERFLOW_SAT, 0, 1, 0},
	{SKV_UE4M3, "ue4m3", 4, -6, 8, 448.0, 0x1p-4, 0x1p-6, 0x1p-9, -8, 9, SKV_OVERFLOW_SAT, 0, 1, 1},
};

/* The library and the referee both have every row's parameters. */
static void test_parameters(void **state)
{
	const mpfr_exp_t emin0 = mpfr_get_emin(), emax0 = mpfr_get_emax();

	(void)state;
	assert_int_equal(COUNT(table), SKV_NFORMATS);
	assert_int_equal(REF_NFMTS, SKV_NFORMATS);
	for (size_t i = 0; i < COUNT(table); i++) {
		skv_format f = table[i].f, g = SKV_FP64;
		const ref_fmt *t = ref_fmt_of(f);
		ref_range old;

		assert_non_null(t);
		assert_string_equal(skv_format_name(f), table[i].name);
		assert_string_equal(t->name, table[i].name);
		assert_int_equal(skv_format_parse(&g, table[i].name), SKV_OK);
		assert_int_equal(g, f);
		assert_int_equal(skv_format_precision(f), table[i].p);
		assert_int_equal(skv_format_emin(f), table[i].emin);
		assert_int_equal(skv_format_emax(f), table[i].emax);
		assert_true(ref_same(skv_format_max(f), table[i].max));
		assert_true(ref_same(skv_format_unit_roundoff(f), table[i].u));
		assert_int_equal(skv_format_overflow(f), table[i].ovf);
		assert_int_equal(skv_format_is_signed(f), table[i].sgn);
		assert_int_equal(skv_format_is_scale(f), table[i].scale);
		assert_int_equal(t->p, table[i].p);
		assert_int_equal(t->emin, table[i].emin);
		assert_int_equal(t->emax, table[i].emax);
		assert_true(ref_same(t->max, table[i].max));
		assert_true(ref_same(t->min, table[i].zero ? table[i].min_sub : table[i].min_normal));
		assert_int_equal(t->ovf, table[i].ovf);
		assert_int_equal(t->is_signed, table[i].sgn);
		assert_int_equal(t->is_scale, table[i].scale);
		assert_int_equal(t->has_zero, table[i].zero);
		/* The referee's exponent range is the one numerics.md gives. */
		old = ref_enter(f);
		assert_int_equal(mpfr_get_emin(), table[i].mpfr_emin);
		assert_int_equal(mpfr_get_emax(), table[i].mpfr_emax);
		ref_leave(old);
		/* Extremes round to themselves; the smallest subnormal is the
		 * first nonzero value, its half rounds to zero (tie to even). */
		assert_true(ref_same(skv_round(f, table[i].max), table[i].max));
		assert_true(ref_same(skv_round(f, table[i].min_normal), table[i].min_normal));
		assert_true(ref_same(skv_round(f, table[i].min_sub), table[i].min_sub));
		assert_true(ref_same(skv_round(f, table[i].min_sub * 0.75), table[i].min_sub));
		if (table[i].zero)
			assert_true(ref_same(skv_round(f, table[i].min_sub / 2), 0.0));
		if (table[i].sgn)
			assert_true(ref_same(skv_round(f, -table[i].min_sub / 2), table[i].zero ? -0.0 : -table[i].min_sub));
	}
	/* The referee put MPFR's exponent range back. */
	assert_int_equal(mpfr_get_emin(), emin0);
	assert_int_equal(mpfr_get_emax(), emax0);
}

static void test_bad_format(void **state)
{
	const skv_format bad[] = {(skv_format)SKV_NFORMATS, (skv_format)-1, (skv_format)1000};
	skv_format g = SKV_BF16;

	(void)state;
	for (size_t i = 0; i < COUNT(bad); i++) {
		assert_null(skv_format_name(bad[i]));
		assert_int_equal(skv_format_precision(bad[i]), 0);
		assert_int_equal(skv_format_emin(bad[i]), INT_MIN);
		assert_int_equal(skv_format_emax(bad[i]), INT_MIN);
		assert_true(isnan(skv_format_max(bad[i])));
		assert_true(isnan(skv_format_unit_roundoff(bad[i])));
		assert_true(isnan(skv_ulp(bad[i], 1.0)));
		assert_true(isnan(skv_round(bad[i], 1.0)));
		assert_true(isnan(skv_round(bad[i], 0.0)));
		assert_int_equal(skv_format_overflow(bad[i]), -1);
		assert_int_equal(skv_format_is_signed(bad[i]), -1);
		assert_int_equal(skv_format_is_scale(bad[i]), -1);
	}
	assert_int_equal(skv_format_parse(&g, "fp8"), SKV_EINVAL);
	assert_int_equal(skv_format_parse(&g, "FP16"), SKV_EINVAL);
	assert_int_equal(skv_format_parse(&g, ""), SKV_EINVAL);
	assert_int_equal(skv_format_parse(&g, NULL), SKV_EINVAL);
	assert_int_equal(g, SKV_BF16); /* untouched on error */
	assert_int_equal(skv_format_parse(NULL, "fp16"), SKV_EINVAL);
}

/* ------------------------------------------------ every 16-bit value */

/* Each of the 65,536 patterns decodes (independently of the library) to a
 * value that skv_round and the MPFR referee both leave unchanged, bit for
 * bit; NaN patterns stay NaN. This also verifies the referee's parameters. */
static void test_every_value(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(narrow_formats); i++) {
		skv_format f = narrow_formats[i];
		for (unsigned bits = 0; bits <= 0xffffu; bits++) {
			double v = ref_decode16(f, bits);
			EXPECT(nfail, "round(value)", f, v, skv_round(f, v), v);
			EXPECT(nfail, "ref_round(value)", f, v, ref_round(f, v), v);
		}
	}
	assert_int_equal(nfail, 0);
}

/* Every midpoint between consecutive nonnegative values (including between
 * the largest finite value and 2^(emax+1), the overflow threshold), and the
 * doubles one ulp either side, both signs: the expected result is known
 * without MPFR (ties to the even pattern; the top tie and above overflow),
 * and MPFR must agree too. This covers the whole subnormal range. */
static void test_midpoints(void **state)
{
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(narrow_formats); i++) {
		skv_format f = narrow_formats[i];
		const unsigned top = (f == SKV_FP16) ? 0x7bffu : 0x7f7fu; /* largest finite */
		const double thresh = ldexp(1.0, skv_format_emax(f) + 1);

		assert_true(ref_same(ref_decode16(f, top), skv_format_max(f)));
		for (unsigned k = 0; k <= top; k++) {
			double lo = ref_decode16(f, k);
			double hi = (k == top) ? thresh : ref_decode16(f, k + 1);
			double hi_r = (k == top) ? INFINITY : hi;
			double mid = (lo + hi) / 2; /* exact: one more bit */
			double tie = (k % 2 == 0) ? lo : hi_r;
			double below = nextafter(mid, 0.0), above = nextafter(mid, INFINITY);

			for (int s = 0; s < 2; s++) {
				double sg = s ? -1.0 : 1.0;
				EXPECT(nfail, "round(mid)", f, sg * mid, skv_round(f, sg * mid), sg * tie);
				EXPECT(nfail, "round(mid-)", f, sg * below, skv_round(f, sg * below), sg * lo);
				EXPECT(nfail, "round(mid+)", f, sg * above, skv_round(f, sg * above), sg * hi_r);
				EXPECT(nfail, "ref(mid)", f, sg * mid, ref_round(f, sg * mid), sg * tie);
				EXPECT(nfail, "ref(mid-)", f, sg * below, ref_round(f, sg * below), sg * lo);
				EXPECT(nfail, "ref(mid+)", f, sg * above, ref_round(f, sg * above), sg * hi_r);
			}
		}
	}
	assert_int_equal(nfail, 0);
}

/* The overflow threshold and beyond, infinities, NaN, signed zeros, and
 * everything below half the smallest subnormal (double subnormals too). */
static void test_edges(void **state)
{
	long nfail = 0;
	uint64_t seed = 7;

	(void)state;
	for (size_t i = 0; i < COUNT(all_formats); i++) {
		skv_format f = all_formats[i];
		const double thresh = ldexp(1.0, skv_format_emax(f) + 1);
		const double half_sub = ldexp(1.0, skv_format_emin(f) - skv_format_precision(f));
		const double big[] = {DBL_MAX, 1e300, 0x1p1000, INFINITY};
		const double tiny[] = {DBL_TRUE_MIN, 0x1p-1060, DBL_MIN, 0x1p-600, 0x1p-300, 0x1p-160};

		if (f != SKV_FP64) {
			EXPECT(nfail, "round(2^(emax+1))", f, thresh, skv_round(f, thresh), INFINITY);
			EXPECT(nfail, "round(-2^(emax+1))", f, -thresh, skv_round(f, -thresh), -INFINITY);
			EXPECT(nfail, "round(2^(emax+1)-)", f, nextafter(thresh, 0), skv_round(f, nextafter(thresh, 0)),
			       INFINITY);
			for (size_t j = 0; j < COUNT(big); j++) {
				EXPECT(nfail, "round(big)", f, big[j], skv_round(f, big[j]), INFINITY);
				EXPECT(nfail, "round(-big)", f, -big[j], skv_round(f, -big[j]), -INFINITY);
				EXPECT(nfail, "ref(big)", f, big[j], ref_round(f, big[j]), INFINITY);
			}
			for (size_t j = 0; j < COUNT(tiny); j++) {
				if (tiny[j] > half_sub)
					continue;
				EXPECT(nfail, "round(tiny)", f, tiny[j], skv_round(f, tiny[j]), 0.0);
				EXPECT(nfail, "round(-tiny)", f, -tiny[j], skv_round(f, -tiny[j]), -0.0);
				EXPECT(nfail, "ref(-tiny)", f, -tiny[j], ref_round(f, -tiny[j]), -0.0);
			}
			/* Random doubles in (0, s/2] go to zero, in (s/2, s] to s. */
			for (int j = 0; j < 10000; j++) {
				double t = half_sub * ldexp((double)(splitmix64(&seed) >> 11), -53);
				EXPECT(nfail, "round(<s/2)", f, t, skv_round(f, t), 0.0);
				EXPECT(nfail, "round(s/2+)", f, t + half_sub, skv_round(f, t + half_sub),
				       t == 0 ? 0.0 : 2 * half_sub);
			}
		}
		EXPECT(nfail, "round(+0)", f, 0.0, skv_round(f, 0.0), 0.0);
		EXPECT(nfail, "round(-0)", f, -0.0, skv_round(f, -0.0), -0.0);
		EXPECT(nfail, "round(inf)", f, INFINITY, skv_round(f, INFINITY), INFINITY);
		EXPECT(nfail, "round(-inf)", f, -INFINITY, skv_round(f, -INFINITY), -INFINITY);
		EXPECT(nfail, "round(nan)", f, NAN, skv_round(f, NAN), NAN);
		EXPECT(nfail, "round(-nan)", f, -NAN, skv_round(f, -NAN), NAN);
		/* A signalling NaN pattern stays a NaN. */
		EXPECT(nfail, "round(snan)", f, 0, skv_round(f, from_bits(UINT64_C(0x7ff0000000000001))), NAN);
	}
	assert_int_equal(nfail, 0);
}

/* ------------------------------------------------------- random doubles */

/* A random double: a quarter are raw 64-bit patterns (the whole double
 * range, including infinities and NaN), the rest have an exponent uniform
 * over the format's range widened by a few binades either side (subnormals,
 * underflow to zero and overflow all occur), random sign and fraction. */
static double random_double(uint64_t *s, skv_format f)
{
	uint64_t r = splitmix64(s);
	int lo = skv_format_emin(f) - skv_format_precision(f) - 3, hi = skv_format_emax(f) + 2;
	int e;

	if ((r & 3) == 0)
		return from_bits(splitmix64(s));
	e = lo + (int)(splitmix64(s) % (uint64_t)(hi - lo + 1));
	if (e < -1022)
		e = -1022;
	if (e > 1023)
		e = 1023;
	return from_bits((r & UINT64_C(0x8000000000000000)) | ((uint64_t)(e + 1023) << 52) |
			 (splitmix64(s) >> 12));
}

static void test_random(void **state)
{
	const long n = 1000000;
	long nfail = 0;

	(void)state;
	for (size_t i = 0; i < COUNT(all_formats); i++) {
		skv_format f = all_formats[i];
		uint64_t seed = UINT64_C(0x5eed0000) + i;
		for (long j = 0; j < n; j++) {
			double x = random_double(&seed, f);
			EXPECT(nfail, "round(random)", f, x, skv_round(f, x), ref_round(f, x));
		}
	}
	assert_int_equal(nfail, 0);
}

/* fp32: midpoints of random pairs of neighbours and the doubles around them
 * (the hardware conversion against MPFR where it matters most). */
static void test_fp32_midpoints(void **state)
{
	const skv_format f = SKV_FP32;
	uint64_t seed = 32;
	long nfail = 0;

	(void)state;
	for (int j = 0; j < 200000; j++) {
		uint32_t u = (uint32_t)splitmix64(&seed) & 0x7f7fffffu; /* finite, below max */
		float a, b;
		double mid;
		uint32_t u1 = u + 1;

		memcpy(&a, &u, sizeof a);
		memcpy(&b, &u1, sizeof b);
		mid = ((double)a + (double)b) / 2;
		EXPECT(nfail, "fp32 mid", f, mid, skv_round(f, mid), ref_round(f, mid));
		EXPECT(nfail, "fp32 mid", f, mid, skv_round(f, mid), (u & 1) ? (double)b : (double)a);
		EXPECT(nfail, "fp32 mid-", f, mid, skv_round(f, nextafter(mid, 0)), (double)a);
		EXPECT(nfail, "fp32 mid+", f, mid, skv_round(f, nextafter(mid, INFINITY)), (double)b);
	}
	assert_int_equal(nfail, 0);
}

/* ------------------------------------------------------------------- ulp */

/* For every nonnegative finite value v_k of fp16 and bf16, the spacing at
 * v_k is v_{k+1} - v_k (the next value is at most the next power of two);
 * at the largest finite value it is 2^(emax+1) - max. fp32 and fp64 are
 * checked with nextafterf / nextafter on random values. */
static void test_ulp(void **state)
{
	long nfail = 0;
	uint64_t seed = 99;

	(void)state;
	for (size_t i = 0; i < COUNT(narrow_formats); i++) {
		skv_format f = narrow_formats[i];
		const unsigned top = (f == SKV_FP16) ? 0x7bffu : 0x7f7fu;
		const double thresh = ldexp(1.0, skv_format_emax(f) + 1);
		for (unsigned k = 0; k <= top; k++) {
			double v = ref_decode16(f, k);
			double next = (k == top) ? thresh : ref_decode16(f, k + 1);
			EXPECT(nfail, "ulp", f, v, skv_ulp(f, v), next - v);
			EXPECT(nfail, "ulp(-x)", f, -v, skv_ulp(f, -v), next - v);
		}
		EXPECT(nfail, "ulp(inf)", f, INFINITY, skv_ulp(f, INFINITY), thresh - skv_format_max(f));
		EXPECT(nfail, "ulp(nan)", f, NAN, skv_ulp(f, NAN), NAN);
	}
	for (int j = 0; j < 100000; j++) {
		uint32_t u = (uint32_t)splitmix64(&seed) & 0x7f7ffffeu;
		uint64_t w = splitmix64(&seed) & UINT64_C(0x7fefffffffffffff);
		float a;
		double x;

		memcpy(&a, &u, sizeof a);
		EXPECT(nfail, "ulp", SKV_FP32, a, skv_ulp(SKV_FP32, a), (double)nextafterf(a, INFINITY) - a);
		x = from_bits(w);
		EXPECT(nfail, "ulp", SKV_FP64, x, skv_ulp(SKV_FP64, x), nextafter(x, INFINITY) - x);
	}
	EXPECT(nfail, "ulp(0)", SKV_FP32, 0.0, skv_ulp(SKV_FP32, 0.0), 0x1p-149);
	EXPECT(nfail, "ulp(0)", SKV_FP64, 0.0, skv_ulp(SKV_FP64, 0.0), 0x1p-1074);
	EXPECT(nfail, "ulp(max)", SKV_FP64, DBL_MAX, skv_ulp(SKV_FP64, DBL_MAX), 0x1p971);
	EXPECT(nfail, "ulp(inf)", SKV_FP32, INFINITY, skv_ulp(SKV_FP32, -INFINITY), 0x1p104);
	/* A double between fp32 values: the spacing of its fp32 binade. */
	EXPECT(nfail, "ulp(1+2^-40)", SKV_FP32, 1 + 0x1p-40, skv_ulp(SKV_FP32, 1 + 0x1p-40), 0x1p-23);
	EXPECT(nfail, "ulp(1e-40)", SKV_FP16, 1e-40, skv_ulp(SKV_FP16, 1e-40), 0x1p-24);
	assert_int_equal(nfail, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parameters),   cmocka_unit_test(test_bad_format),
		cmocka_unit_test(test_every_value),  cmocka_unit_test(test_midpoints),
		cmocka_unit_test(test_edges),        cmocka_unit_test(test_random),
		cmocka_unit_test(test_fp32_midpoints), cmocka_unit_test(test_ulp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
