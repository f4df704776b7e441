/* test_metrics.c - error metrics against double-double truths: hand cases, MPFR referee, special values. */
#include <float.h>
#include <mpfr.h>

#include "testutil.h"
#include "ref_mpfr.h"

static skv_dd dd(double hi, double lo) { return (skv_dd){hi, lo}; }

/* ------------------------------------------------------- abs_err */

static void test_abs_err_hand(void **state)
{
	(void)state;
	/* c == hi: the error is |lo|, which a plain |c - hi| would lose */
	CHECK_BITS("c = hi, lo = 2^-60", skv_abs_err(1.0, dd(1.0, 0x1p-60)), 0x1p-60);
	CHECK_BITS("c = hi, lo = -2^-60", skv_abs_err(1.0, dd(1.0, -0x1p-60)), 0x1p-60);
	/* (1 + 2^-52) - (1 + 2^-54) = 3 2^-54, exactly */
	CHECK_BITS("one ulp above", skv_abs_err(1 + 0x1p-52, dd(1.0, 0x1p-54)), 0x3p-54);
	CHECK_BITS("exact", skv_abs_err(-2.5, dd(-2.5, 0.0)), 0.0);
	/* subnormal differences are exact */
	CHECK_BITS("subnormal", skv_abs_err(3 * DBL_TRUE_MIN, dd(DBL_TRUE_MIN, 0.0)), 2 * DBL_TRUE_MIN);
	/* far off: opposite sign */
	CHECK_BITS("opposite sign", skv_abs_err(-1.0, dd(1.0, 0x1p-60)), 2.0);
	/* the true error exceeds DBL_MAX */
	CHECK_BITS("overflowing error", skv_abs_err(DBL_MAX, dd(-DBL_MAX, 0.0)), INFINITY);
}

static void test_abs_err_special(void **state)
{
	(void)state;
	CHECK_BITS("inf, inf", skv_abs_err(INFINITY, dd(INFINITY, 0.0)), 0.0);
	CHECK_BITS("-inf, -inf", skv_abs_err(-INFINITY, dd(-INFINITY, 0.0)), 0.0);
	CHECK_BITS("inf, -inf", skv_abs_err(INFINITY, dd(-INFINITY, 0.0)), INFINITY);
	CHECK_BITS("inf, 1", skv_abs_err(INFINITY, dd(1.0, 0.0)), INFINITY);
	CHECK_BITS("1, -inf", skv_abs_err(1.0, dd(-INFINITY, 0.0)), INFINITY);
	assert_true(isnan(skv_abs_err(NAN, dd(1.0, 0.0))));
	assert_true(isnan(skv_abs_err(1.0, dd(NAN, 0.0))));
	assert_true(isnan(skv_abs_err(1.0, dd(1.0, NAN))));
	assert_true(isnan(skv_abs_err(INFINITY, dd(NAN, 0.0))));
	assert_true(isnan(skv_abs_err(NAN, dd(INFINITY, 0.0))));
	assert_true(isnan(skv_abs_err(1.0, dd(1.0, INFINITY))));
}

/* |c - (hi + lo)| in MPFR, exactly (1200 bits cover any double pair here). */
static double exact_err(double c, skv_dd t)
{
	mpfr_t a;
	mpfr_init2(a, 1200);
	mpfr_set_d(a, c, MPFR_RNDN);
	mpfr_sub_d(a, a, t.hi, MPFR_RNDN);
	mpfr_sub_d(a, a, t.lo, MPFR_RNDN);
	mpfr_abs(a, a, MPFR_RNDN);
	const double r = mpfr_get_d(a, MPFR_RNDN);
	mpfr_clear(a);
	return r;
}

static skv_dd dd_of(mpfr_srcptr x)
{
	mpfr_t rem;
	mpfr_init2(rem, mpfr_get_prec(x));
	skv_dd t;
	t.hi = mpfr_get_d(x, MPFR_RNDN);
	mpfr_sub_d(rem, x, t.hi, MPFR_RNDN);
	t.lo = mpfr_get_d(rem, MPFR_RNDN);
	mpfr_clear(rem);
	return t;
}

/* A random 200-bit value of random sign with exponent in [-60, 60]. */
static void random_value(skv_rng *r, mpfr_t x)
{
	mpfr_set_ui(x, 0, MPFR_RNDN);
	for (int k = 0; k < 4; k++) {
		mpfr_mul_2ui(x, x, 53, MPFR_RNDN);
		mpfr_add_d(x, x, (double)(skv_rng_next(r) >> 11), MPFR_RNDN);
	}
	mpfr_mul_2si(x, x, -212 + (long)skv_rng_below(r, 121) - 60, MPFR_RNDN);
	if (skv_rng_next(r) & 1)
		mpfr_neg(x, x, MPFR_RNDN);
}

/* A computed value near t.hi: within a few ulps, a relative 2^-20, a
 * factor of 2 or 3, or of the other sign. */
static double perturb(skv_rng *r, double h)
{
	switch (skv_rng_below(r, 5)) {
	case 0: {
		double c = h;
		for (uint64_t k = skv_rng_below(r, 4); k > 0; k--)
			c = nextafter(c, (skv_rng_next(r) & 1) ? INFINITY : -INFINITY);
		return c;
	}
	case 1: return h * (1 + (skv_rng_uniform(r) - 0.5) * 0x1p-20);
	case 2: return h * (2 + skv_rng_uniform(r));
	case 3: return -h * skv_rng_uniform(r);
	default: return h * skv_rng_uniform(r) * 0.4;
	}
}

static void test_abs_err_vs_mpfr(void **state)
{
	(void)state;
	skv_rng r;
	skv_rng_seed(&r, 12);
	mpfr_t x;
	mpfr_init2(x, 212);
	for (int i = 0; i < 100000; i++) {
		random_value(&r, x);
		const skv_dd t = dd_of(x);
		const double c = perturb(&r, t.hi);
		const double got = skv_abs_err(c, t), want = exact_err(c, t);
		/* one rounding when c - hi is exact (Sterbenz), two otherwise */
		if (!(fabs(got - want) <= 0x1p-52 * want))
			fail_msg("%s:%d: abs_err(%a, (%a, %a)) = %a, exact %a", __FILE__, __LINE__, c, t.hi,
				 t.lo, got, want);
	}
	mpfr_clear(x);
}

/* ------------------------------------------------------ errors_compute */

static void test_errors_hand(void **state)
{
	(void)state;
	const skv_dd t[] = {dd(1.0, 0.0), dd(-2.0, 0x1p-55), dd(0.5, 0.0)};
	const double c[] = {1 + 0x1p-52, -2.0, 0.5 - 0x1p-54};
	/* errors 2^-52, 2^-55, 2^-54; |t| 1, 2 - 2^-55, 0.5 */
	skv_errors e;
	CHECK_OK(skv_errors_compute(&e, c, t, 3, SKV_FP64));
	CHECK_BITS("max_abs", e.max_abs, 0x1p-52);
	CHECK_BITS("max_rel", e.max_rel, 0x1p-52); /* 2^-52 / 1 beats 2^-54 / 0.5 */
	/* ulps: 2^-52 / 2^-52 = 1; t_1 = -(2 - 2^-55) lies in [1, 2): 2^-55 /
	 * 2^-52 = 1/8 (1/16 if hi's binade were used); 2^-54 / 2^-53 = 1/2 */
	CHECK_BITS("ulp", e.ulp, 1.0);
	const double want = sqrt(0x1p-104 + 0x1p-110 + 0x1p-108) / sqrt(1 + 4 + 0.25);
	CHECK_LE("norm_rel", fabs(e.norm_rel - want), 4 * DBL_EPSILON * want);
	/* normwise: the largest error 2^-52 in ulps of the largest truth,
	 * 2 - 2^-55 in [1, 2): 2^-52 / 2^-52 */
	CHECK_BITS("norm_ulp", e.norm_ulp, 1.0);
}

/* The normwise ulp count by hand: one near-zero element sets the
 * elementwise count, not the normwise one. */
static void test_norm_ulp_hand(void **state)
{
	(void)state;
	skv_errors e;
	/* fp16 output: truths 1000 (spacing 0.5) and 2^-20 (subnormal, spacing
	 * 2^-24); errors 0.25 and 2^-22 */
	const skv_dd t[] = {dd(1000.0, 0.0), dd(0x1p-20, 0.0)};
	const double c[] = {1000.25, 0x1p-20 + 0x1p-22};
	CHECK_OK(skv_errors_compute(&e, c, t, 2, SKV_FP16));
	CHECK_BITS("elementwise: the tiny element's 4 ulps", e.ulp, 4.0);
	CHECK_BITS("normwise: 0.25 in ulps of 1000", e.norm_ulp, 0.5);
	/* the largest error on a small element: 2^-12 in ulps of 1000 */
	const double c2[] = {1000.0, 0x1p-20 + 0x1p-12};
	CHECK_OK(skv_errors_compute(&e, c2, t, 2, SKV_FP16));
	CHECK_BITS("normwise, error on the small element", e.norm_ulp, 0x1p-12 / 0.5);
	/* the largest truth just below a power of two (t = 2 - 2^-60, hi = 2):
	 * the spacing of [1, 2), 2^-52 in fp64, not 2^-51 */
	const skv_dd t3[] = {dd(2.0, -0x1p-60), dd(-0.5, 0.0)};
	const double c3[] = {2.0, -0.5 + 0x1p-52};
	CHECK_OK(skv_errors_compute(&e, c3, t3, 2, SKV_FP64));
	CHECK_BITS("normwise below a power of two", e.norm_ulp, 1.0);
	/* the same magnitude with lo away from zero, later in the vector, wins:
	 * 2 + 2^-60 lies in [2, 4), spacing 2^-51 */
	const skv_dd t4[] = {dd(2.0, -0x1p-60), dd(-2.0, -0x1p-60)};
	const double c4[] = {2.0 - 0x1p-52, -2.0};
	CHECK_OK(skv_errors_compute(&e, c4, t4, 2, SKV_FP64));
	CHECK_BITS("normwise, largest magnitude found past a tie of hi", e.norm_ulp, (0x1p-52 - 0x1p-60) / 0x1p-51);
	/* every truth 0: the spacing at 0, as elementwise */
	const skv_dd z[] = {dd(0.0, 0.0), dd(-0.0, 0.0)};
	const double cz[] = {0.0, 0x1p-140};
	CHECK_OK(skv_errors_compute(&e, cz, z, 2, SKV_FP32));
	CHECK_BITS("normwise, zero truth", e.norm_ulp, 0x1p-140 / 0x1p-149);
	CHECK_BITS("normwise, zero truth = elementwise", e.norm_ulp, e.ulp);
}

/* The truth just below a power of two: its ulp is that of the binade below. */
static void test_errors_ulp_binade(void **state)
{
	(void)state;
	const skv_dd t = dd(1.0, -0x1p-60); /* t = 1 - 2^-60, in [1/2, 1) */
	const double c = 1 - 0x1p-53;      /* the double below 1 */
	skv_errors e;
	CHECK_OK(skv_errors_compute(&e, &c, &t, 1, SKV_FP64));
	/* (2^-53 - 2^-60) / 2^-53 = 1 - 2^-7, exact in every step */
	CHECK_BITS("ulp below a power of two", e.ulp, 1 - 0x1p-7);
	/* same value, lo pointing away from zero: hi's binade */
	const skv_dd t2 = dd(1.0, 0x1p-60);
	const double c2 = 1 + 0x1p-52;
	CHECK_OK(skv_errors_compute(&e, &c2, &t2, 1, SKV_FP64));
	CHECK_BITS("ulp above a power of two", e.ulp, (0x1p-52 - 0x1p-60) / 0x1p-52);
	/* negative side */
	const skv_dd t3 = dd(-4.0, 0x1p-58);
	const double c3 = -4.0;
	CHECK_OK(skv_errors_compute(&e, &c3, &t3, 1, SKV_FP64));
	CHECK_BITS("ulp, negative, below a power of two", e.ulp, 0x1p-58 / 0x1p-51);
}

static void test_errors_formats(void **state)
{
	(void)state;
	const skv_dd one = dd(1.0, 0.0);
	const struct {
		skv_format f;
		double c;
	} cs[] = {{SKV_FP16, 1 + 0x1p-10}, {SKV_BF16, 1 + 0x1p-7}, {SKV_FP32, 1 + 0x1p-23},
		  {SKV_FP64, 1 + 0x1p-52}};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		skv_errors e;
		CHECK_OK(skv_errors_compute(&e, &cs[i].c, &one, 1, cs[i].f));
		CHECK_BITS("one ulp of the format", e.ulp, 1.0);
	}
	/* fp16 subnormal range: spacing 2^-24 */
	const skv_dd tiny = dd(0x1p-20, 0.0);
	const double c = 0x1p-20 + 0x1p-23;
	skv_errors e;
	CHECK_OK(skv_errors_compute(&e, &c, &tiny, 1, SKV_FP16));
	CHECK_BITS("fp16 subnormal ulps", e.ulp, 2.0);
}

static void test_errors_zero_truth(void **state)
{
	(void)state;
	const skv_dd z[] = {dd(0.0, 0.0), dd(-0.0, 0.0)};
	const double c0[] = {0.0, -0.0}, c1[] = {0.0, 0x1p-30};
	skv_errors e;
	CHECK_OK(skv_errors_compute(&e, c0, z, 2, SKV_FP32));
	CHECK_BITS("zero: max_abs", e.max_abs, 0.0);
	CHECK_BITS("zero: max_rel", e.max_rel, 0.0);
	CHECK_BITS("zero: norm_rel", e.norm_rel, 0.0);
	CHECK_BITS("zero: ulp", e.ulp, 0.0);
	CHECK_OK(skv_errors_compute(&e, c1, z, 2, SKV_FP32));
	CHECK_BITS("nonzero against zero: max_abs", e.max_abs, 0x1p-30);
	CHECK_BITS("nonzero against zero: max_rel", e.max_rel, INFINITY);
	CHECK_BITS("nonzero against zero: norm_rel", e.norm_rel, INFINITY);
	CHECK_BITS("nonzero against zero: ulp", e.ulp, 0x1p-30 / 0x1p-149);
	/* a zero element among nonzero ones adds 0 when matched */
	const skv_dd t[] = {dd(0.0, 0.0), dd(1.0, 0.0)};
	const double c[] = {0.0, 1 + 0x1p-52};
	CHECK_OK(skv_errors_compute(&e, c, t, 2, SKV_FP64));
	CHECK_BITS("mixed: max_rel", e.max_rel, 0x1p-52);
	CHECK_BITS("mixed: norm_rel", e.norm_rel, 0x1p-52);
}

static void test_errors_nan_inf(void **state)
{
	(void)state;
	const skv_dd t[] = {dd(1.0, 0.0), dd(2.0, 0.0), dd(3.0, 0.0)};
	skv_errors e;
	for (size_t pos = 0; pos < 3; pos++) {
		double c[] = {1.0, 2.0, 3.0};
		c[pos] = NAN;
		CHECK_OK(skv_errors_compute(&e, c, t, 3, SKV_FP16));
		assert_true(isnan(e.max_abs) && isnan(e.max_rel) && isnan(e.norm_rel) && isnan(e.ulp) &&
			    isnan(e.norm_ulp));
	}
	const skv_dd tn[] = {dd(1.0, 0.0), dd(NAN, 0.0)};
	const double cn[] = {1.0, 1.0};
	CHECK_OK(skv_errors_compute(&e, cn, tn, 2, SKV_FP16));
	assert_true(isnan(e.max_abs) && isnan(e.max_rel) && isnan(e.norm_rel) && isnan(e.ulp) && isnan(e.norm_ulp));
	const double ci[] = {1.0, INFINITY, 3.0};
	CHECK_OK(skv_errors_compute(&e, ci, t, 3, SKV_FP16));
	CHECK_BITS("inf: max_abs", e.max_abs, INFINITY);
	CHECK_BITS("inf: max_rel", e.max_rel, INFINITY);
	CHECK_BITS("inf: norm_rel", e.norm_rel, INFINITY);
	CHECK_BITS("inf: ulp", e.ulp, INFINITY);
	CHECK_BITS("inf: norm_ulp", e.norm_ulp, INFINITY);
	/* an infinite truth matched exactly contributes nothing */
	const skv_dd tinf[] = {dd(INFINITY, 0.0), dd(1.0, 0.0)};
	const double cinf[] = {INFINITY, 1 + 0x1p-52};
	CHECK_OK(skv_errors_compute(&e, cinf, tinf, 2, SKV_FP64));
	CHECK_BITS("matched inf: max_abs", e.max_abs, 0x1p-52);
	CHECK_BITS("matched inf: max_rel", e.max_rel, 0x1p-52);
	CHECK_BITS("matched inf: ulp", e.ulp, 1.0);
	/* the largest truth is infinite: the spacing of fp64's top binade */
	CHECK_BITS("matched inf: norm_ulp", e.norm_ulp, 0x1p-52 / 0x1p971);
	CHECK_BITS("matched inf: norm_rel (finite error, infinite truth)", e.norm_rel, 0.0);
}

/* ||e|| / ||t|| where the squares overflow or underflow a double. */
static void test_errors_norm_scaling(void **state)
{
	(void)state;
	const double scales[] = {0x1p1000, 0x1p-1000, 1.0};
	for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
		const double a = scales[s];
		const skv_dd t[] = {dd(3 * a, 0.0), dd(4 * a, 0.0)};
		const double c[] = {3 * a * (1 + 0x1p-40), 4 * a};
		skv_errors e;
		CHECK_OK(skv_errors_compute(&e, c, t, 2, SKV_FP64));
		/* ||e|| = 3a 2^-40, ||t|| = 5a */
		const double want = 0.6 * 0x1p-40;
		if (!(fabs(e.norm_rel - want) <= 4 * DBL_EPSILON * want))
			fail_msg("%s:%d: scale %a: norm_rel %a, want %a", __FILE__, __LINE__, a, e.norm_rel,
				 want);
	}
}

/* Every metric against MPFR on random vectors (truths at 212 bits). */
static void test_errors_vs_mpfr(void **state)
{
	(void)state;
	enum { N = 500, ROUNDS = 40 };
	skv_rng r;
	skv_rng_seed(&r, 33);
	mpfr_t x, err, num, den, m, big;
	mpfr_inits2(212, x, big, (mpfr_ptr)0);
	mpfr_inits2(1200, err, num, den, m, (mpfr_ptr)0);
	skv_dd t[N];
	double c[N];
	for (int round = 0; round < ROUNDS; round++) {
		const skv_format f = (skv_format)(round % SKV_NFORMATS);
		double max_abs = 0, max_rel = 0, max_ulp = 0;
		mpfr_set_zero(num, 1);
		mpfr_set_zero(den, 1);
		mpfr_set_zero(big, 1);
		for (size_t i = 0; i < N; i++) {
			random_value(&r, x);
			t[i] = dd_of(x);
			c[i] = perturb(&r, t[i].hi);
			/* the exact error against the 212-bit value itself */
			mpfr_set_d(err, c[i], MPFR_RNDN);
			mpfr_sub(err, err, x, MPFR_RNDN);
			mpfr_abs(err, err, MPFR_RNDN);
			const double ea = mpfr_get_d(err, MPFR_RNDN);
			max_abs = fmax(max_abs, ea);
			mpfr_div(m, err, x, MPFR_RNDN);
			max_rel = fmax(max_rel, fabs(mpfr_get_d(m, MPFR_RNDN)));
			/* ulp of f at x: 2^(e - p + 1), e = E - 1 (E the MPFR
			 * exponent) clamped to [emin, emax] as skv_ulp documents */
			long ex = (long)mpfr_get_exp(x) - 1;
			if (ex < skv_format_emin(f))
				ex = skv_format_emin(f);
			if (ex > skv_format_emax(f))
				ex = skv_format_emax(f);
			mpfr_mul_2si(m, err, -(ex - skv_format_precision(f) + 1), MPFR_RNDN);
			max_ulp = fmax(max_ulp, mpfr_get_d(m, MPFR_RNDN));
			mpfr_fma(num, err, err, num, MPFR_RNDN);
			mpfr_fma(den, x, x, den, MPFR_RNDN);
			if (mpfr_cmpabs(x, big) > 0)
				mpfr_abs(big, x, MPFR_RNDN);
		}
		/* normwise ulps: the largest exact error over the spacing of f at
		 * the largest |x|, clamped as above */
		long eb = (long)mpfr_get_exp(big) - 1;
		eb = eb < skv_format_emin(f) ? skv_format_emin(f) : eb > skv_format_emax(f) ? skv_format_emax(f) : eb;
		const double norm_ulp = ldexp(max_abs, -(int)(eb - skv_format_precision(f) + 1));
		mpfr_div(num, num, den, MPFR_RNDN);
		mpfr_sqrt(num, num, MPFR_RNDN);
		const double norm = mpfr_get_d(num, MPFR_RNDN);
		skv_errors e;
		CHECK_OK(skv_errors_compute(&e, c, t, N, f));
		/* the truth's double-double drops ~2^-106 relative; the rest is
		 * a few roundings of double arithmetic */
		const double tol = 0x1p-48;
		if (!(fabs(e.max_abs - max_abs) <= tol * max_abs) || !(fabs(e.max_rel - max_rel) <= tol * max_rel) ||
		    !(fabs(e.ulp - max_ulp) <= tol * max_ulp) || !(fabs(e.norm_rel - norm) <= tol * norm) ||
		    !(fabs(e.norm_ulp - norm_ulp) <= tol * norm_ulp) || !(e.norm_ulp <= e.ulp))
			fail_msg("%s:%d: round %d (rng seed 33) fmt %d: got abs %a rel %a ulp %a norm %a norm_ulp %a, "
				 "MPFR %a %a %a %a %a",
				 __FILE__, __LINE__, round, (int)f, e.max_abs, e.max_rel, e.ulp, e.norm_rel, e.norm_ulp,
				 max_abs, max_rel, max_ulp, norm, norm_ulp);
	}
	mpfr_clears(x, err, num, den, m, big, (mpfr_ptr)0);
}

static void test_errors_bad_input(void **state)
{
	(void)state;
	const skv_dd t[] = {dd(1.0, 0.0)};
	const double c[] = {1.0};
	skv_errors e, sentinel;
	memset(&sentinel, 0x5a, sizeof sentinel);
	e = sentinel;
	assert_int_equal(skv_errors_compute(NULL, c, t, 1, SKV_FP64), SKV_EINVAL);
	assert_int_equal(skv_errors_compute(&e, NULL, t, 1, SKV_FP64), SKV_EINVAL);
	assert_int_equal(skv_errors_compute(&e, c, NULL, 1, SKV_FP64), SKV_EINVAL);
	assert_int_equal(skv_errors_compute(&e, c, t, 0, SKV_FP64), SKV_EINVAL);
	assert_int_equal(skv_errors_compute(&e, c, t, 1, (skv_format)SKV_NFORMATS), SKV_EINVAL);
	assert_int_equal(skv_errors_compute(&e, c, t, 1, (skv_format)-1), SKV_EINVAL);
	assert_memory_equal(&e, &sentinel, sizeof e);
}

/* skv_dd_round against MPFR's one rounding of hi + lo: at every midpoint
 * of fp16 and bf16 with lo either side (where rounding hi alone ties the
 * wrong way), at the overflow threshold, and on random pairs in every
 * format. */
/* The reference: hi + lo exact in MPFR, then one rounding written out by
 * hand (not through a narrowed exponent range, where MPFR's underflow
 * rounds the p-bit result again): below 2^emin a multiple of the smallest
 * subnormal by mpfr_rint, else p bits, and the overflow threshold
 * (2 - 2^-p) 2^emax (ties go to infinity, the even side). */
static double ref_dd_round(skv_format f, double hi, double lo)
{
	const int p = skv_format_precision(f), emin = skv_format_emin(f), emax = skv_format_emax(f);
	mpfr_t s, r;
	mpfr_init2(s, 2200);
	mpfr_init2(r, p);
	mpfr_set_d(s, hi, MPFR_RNDN);
	mpfr_add_d(s, s, lo, MPFR_RNDN); /* exact at 2200 bits */
	double y;
	mpfr_t lim;
	mpfr_init2(lim, 2);
	mpfr_set_ui_2exp(lim, 1, emin, MPFR_RNDN); /* 2^emin, the smallest normal */
	int sub = mpfr_cmpabs(s, lim) < 0;
	mpfr_clear(lim);
	if (sub) {
		mpfr_mul_2si(s, s, p - 1 - emin, MPFR_RNDN); /* in units of the smallest subnormal */
		mpfr_rint(s, s, MPFR_RNDN);
		y = ldexp(mpfr_get_d(s, MPFR_RNDN), emin - p + 1);
		if (y == 0.0 && (hi < 0 || (hi == 0 && lo < 0)))
			y = -0.0;
	} else {
		mpfr_set(r, s, MPFR_RNDN);
		y = mpfr_get_d(r, MPFR_RNDN);
		mpfr_t th, h;
		mpfr_inits2(p + 2, th, h, (mpfr_ptr)0);
		mpfr_set_ui_2exp(th, 1, emax + 1, MPFR_RNDN);
		mpfr_set_ui_2exp(h, 1, emax - p, MPFR_RNDN);
		mpfr_sub(th, th, h, MPFR_RNDN); /* (2 - 2^-p) 2^emax, exact in p + 2 bits */
		mpfr_clear(h);
		if (mpfr_cmpabs(s, th) >= 0)
			y = hi < 0 ? -INFINITY : INFINITY;
		mpfr_clear(th);
	}
	mpfr_clears(s, r, (mpfr_ptr)0);
	return y;
}

static void check_dd_round(skv_format f, double hi, double lo, int line)
{
	skv_dd t = {hi, lo};
	double got = skv_dd_round(f, t), want = ref_dd_round(f, hi, lo);
	if (!ref_same(got, want))
		fail_msg("%s:%d: skv_dd_round(%s, %a + %a) = %a, want %a", __FILE__, line, skv_format_name(f), hi, lo,
			 got, want);
}

static void test_dd_round(void **state)
{
	(void)state;
	const skv_format narrow[] = {SKV_FP16, SKV_BF16};
	for (size_t k = 0; k < 2; k++) {
		skv_format f = narrow[k];
		for (unsigned b = 0; b < 0x7c00u + (f == SKV_BF16) * 0x0380u; b++) {
			double a = ref_decode16(f, b), c = ref_decode16(f, b + 1);
			if (!isfinite(a) || !isfinite(c))
				continue;
			double m = 0.5 * a + 0.5 * c; /* exact: a midpoint is a double */
			double q = 0.25 * (nextafter(m, INFINITY) - m);
			for (int s = -1; s <= 1; s += 2) {
				check_dd_round(f, m, s * q, __LINE__);
				check_dd_round(f, -m, s * q, __LINE__);
			}
		}
	}
	/* the overflow threshold (2 - 2^-p) 2^emax (a double for p < 53), lo
	 * just below and above it */
	const skv_format wide[] = {SKV_FP16, SKV_BF16, SKV_FP32};
	for (size_t k = 0; k < 3; k++) {
		skv_format f = wide[k];
		double th = ldexp(2.0 - ldexp(1.0, -skv_format_precision(f)), skv_format_emax(f));
		double q = 0.25 * (nextafter(th, INFINITY) - th);
		check_dd_round(f, th, -q, __LINE__);
		check_dd_round(f, th, q, __LINE__);
		check_dd_round(f, -th, q, __LINE__);
		check_dd_round(f, -th, -q, __LINE__);
	}
	uint64_t x = 0x9e3779b97f4a7c15u;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		double hi = ldexp((double)(x >> 11) * 0x1p-53 + 0.5, (int)(x % 80) - 40);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double lo = ((double)(x >> 11) * 0x1p-53 - 0.5) * (nextafter(hi, INFINITY) - hi);
		for (int f = 0; f < SKV_NFORMATS; f++) /* the others: test_dd_round.c */
			if (skv_format_overflow((skv_format)f) == SKV_OVERFLOW_INF)
				check_dd_round((skv_format)f, hi, lo, __LINE__);
	}
	check_dd_round(SKV_FP16, 1.0, 0.0, __LINE__);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_abs_err_hand),
		cmocka_unit_test(test_abs_err_special),
		cmocka_unit_test(test_abs_err_vs_mpfr),
		cmocka_unit_test(test_errors_hand),
		cmocka_unit_test(test_errors_ulp_binade),
		cmocka_unit_test(test_norm_ulp_hand),
		cmocka_unit_test(test_errors_formats),
		cmocka_unit_test(test_errors_zero_truth),
		cmocka_unit_test(test_errors_nan_inf),
		cmocka_unit_test(test_errors_norm_scaling),
		cmocka_unit_test(test_errors_vs_mpfr),
		cmocka_unit_test(test_errors_bad_input),
		cmocka_unit_test(test_dd_round),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
