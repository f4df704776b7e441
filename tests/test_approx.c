/* test_approx.c - the approximate-math bound model: every result within the documented error of the correctly rounded one (MPFR), deterministic, actually perturbed, flushing and special values as documented, and through the kernel and merge. */
#include "testutil.h"
#include "ref_ops.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The documented bounds, typed here from the sources skv.h cites (CUDA C++
 * Programming Guide tables 17 and 21; PTX ISA 9.1), not read from
 * lib/approx.c: kind 'u' ulps (+ floor(|g a|)), 'a' absolute inside
 * [lo, hi] and ulps (or relative, rel) outside. */
typedef struct {
	skv_math mode;
	skv_math_op op;
	double ulps, g, lo, hi, abs, rel;
	int open;
} doc_bound;

static const doc_bound docs[] = {
	{SKV_MATH_FAST, SKV_MOP_EXP, 2, 1.173, 0, 0, 0, 0, 0},		   /* __expf */
	{SKV_MATH_FAST, SKV_MOP_EXP2, 2, 0, 0, 0, 0, 0, 0},		   /* ex2.approx */
	{SKV_MATH_FAST, SKV_MOP_LOG, 3, 0, 0.5, 2, 0x1.81p-22, 0, 0},	   /* __logf: 2^-21.41 */
	{SKV_MATH_FAST, SKV_MOP_LOG2, 0, 0, 0.5, 2, 0x1p-22, 0x1p-22, 1},  /* lg2.approx */
	{SKV_MATH_FAST, SKV_MOP_DIV, 2, 0, 0, 0, 0, 0, 0},		   /* div.full */
	{SKV_MATH_FAST, SKV_MOP_RCP, 1, 0, 0, 0, 0, 0, 0},		   /* rcp.approx */
	{SKV_MATH_CUDA, SKV_MOP_EXP, 2, 0, 0, 0, 0, 0, 0},		   /* expf */
	{SKV_MATH_CUDA, SKV_MOP_EXP2, 2, 0, 0, 0, 0, 0, 0},		   /* exp2f */
	{SKV_MATH_CUDA, SKV_MOP_LOG, 1, 0, 0, 0, 0, 0, 0},		   /* logf */
	{SKV_MATH_CUDA, SKV_MOP_LOG2, 1, 0, 0, 0, 0, 0, 0},		   /* log2f */
	{SKV_MATH_CUDA, SKV_MOP_DIV, 0, 0, 0, 0, 0, 0, 0},		   /* IEEE x/y */
	{SKV_MATH_CUDA, SKV_MOP_RCP, 0, 0, 0, 0, 0, 0, 0},		   /* IEEE 1/x */
};

/* Distance in fp32 values between two fp32 numbers (the test's own
 * ordering of the bit patterns). */
static long long ulps_apart(double x, double y)
{
	float fx = (float)x, fy = (float)y;
	int32_t a, b;
	memcpy(&a, &fx, sizeof a);
	memcpy(&b, &fy, sizeof b);
	long long ka = a < 0 ? -(long long)(a & 0x7fffffff) : a, kb = b < 0 ? -(long long)(b & 0x7fffffff) : b;
	return ka > kb ? ka - kb : kb - ka;
}

static double ref_cr(skv_math_op op, double a, double b)
{
	const skv_format F = SKV_FP32;
	switch (op) {
	case SKV_MOP_EXP: return r_exp(F, a);
	case SKV_MOP_EXP2: return r_exp2(F, a);
	case SKV_MOP_LOG: return r_log(F, a);
	case SKV_MOP_LOG2: return r_log2(F, a);
	case SKV_MOP_DIV: return r_div(F, a, b);
	default: return r_div(F, 1.0, a);
	}
}

/* An fp32 argument for op: exps over [-100, 100] (and near 0), logs over
 * (0, 1e6] (and near 1), divisions of random magnitudes. */
static void draw(double *a, double *b, skv_math_op op, skv_rng *r)
{
	double u = skv_rng_uniform(r), n = skv_rng_normal(r);
	switch (op) {
	case SKV_MOP_EXP:
	case SKV_MOP_EXP2: *a = u < 0.2 ? n * 1e-3 : 200.0 * u - 100.0; break;
	case SKV_MOP_LOG:
	case SKV_MOP_LOG2: *a = u < 0.4 ? 1.0 + n * 0.3 : exp(30.0 * u - 15.0); break;
	default: *a = n * exp(20.0 * skv_rng_uniform(r) - 10.0); break;
	}
	*b = skv_rng_normal(r) * exp(10.0 * skv_rng_uniform(r) - 5.0);
	*a = skv_round(SKV_FP32, *a);
	*b = skv_round(SKV_FP32, *b);
	if ((op == SKV_MOP_LOG || op == SKV_MOP_LOG2) && !(*a > 0.0))
		*a = 1.5;
}

/* Every perturbed result within the documented error of the correctly
 * rounded one, and skv_math_bound gives the documented bound. */
static void test_bounds(void **state)
{
	(void)state;
	skv_rng r;
	skv_rng_seed(&r, 2024);
	for (size_t k = 0; k < NELEM(docs); k++) {
		const doc_bound *w = &docs[k];
		long long widest = 0;
		for (int i = 0; i < 3000; i++) {
			double a, b, y, bu, ba;
			draw(&a, &b, w->op, &r);
			uint64_t seed = skv_rng_next(&r);
			CHECK_OK(skv_math_apply(&y, w->mode, w->op, SKV_FP32, a, b, seed));
			CHECK_OK(skv_math_bound(&bu, &ba, w->mode, w->op, SKV_FP32, a, b));
			double cr = ref_cr(w->op, a, b);
			if (isnan(cr) || isinf(cr) || cr == 0.0 || fabs(y) < 0x1p-126 || fabs(cr) < 0x1p-126)
				continue; /* special values and flushed results are tested below */
			int inside = w->abs > 0 && (w->open ? a > w->lo && a < w->hi : a >= w->lo && a <= w->hi);
			if (inside || w->rel > 0) {
				double A = inside ? w->abs : w->rel * fabs(cr);
				if (!(fabs(y - cr) <= A))
					fail_msg("%s:%d: %s op %d a %a: %a is %a from %a, bound %a", __FILE__, __LINE__,
						 skv_math_name(w->mode), w->op, a, y, fabs(y - cr), cr, A);
				if (inside)
					CHECK_LE("skv_math_bound absolute", ba, w->abs);
			} else {
				double N = w->ulps + floor(fabs(w->g * a));
				long long u = ulps_apart(y, cr);
				if ((double)u > N)
					fail_msg("%s:%d: %s op %d a %a b %a: %a is %lld ulps from %a, bound %g", __FILE__,
						 __LINE__, skv_math_name(w->mode), w->op, a, b, y, u, cr, N);
				CHECK_BITS("skv_math_bound ulps", bu, N);
				widest = u > widest ? u : widest;
			}
		}
		/* the model uses its freedom: some result sits at the bound's edge
		 * where the bound is in ulps and nonzero */
		if (w->ulps >= 1 && w->abs == 0 && w->rel == 0)
			assert_true(widest >= (long long)w->ulps);
		if (w->ulps == 0 && w->abs == 0 && w->rel == 0)
			assert_true(widest == 0);
	}
}

/* Deterministic: the same (seed, op, arguments) give the same bits; the
 * seed moves the result over the whole admissible set. */
static void test_deterministic_and_spread(void **state)
{
	(void)state;
	const double a = skv_round(SKV_FP32, 3.3);
	double y1, y2;
	CHECK_OK(skv_math_apply(&y1, SKV_MATH_FAST, SKV_MOP_EXP2, SKV_FP32, a, 0, 77));
	CHECK_OK(skv_math_apply(&y2, SKV_MATH_FAST, SKV_MOP_EXP2, SKV_FP32, a, 0, 77));
	CHECK_BITS("same seed, same bits", y1, y2);
	double cr = ref_cr(SKV_MOP_EXP2, a, 0);
	int seen[5] = {0};
	for (uint64_t s = 0; s < 400; s++) {
		double y;
		CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_EXP2, SKV_FP32, a, 0, s));
		long long u = ulps_apart(y, cr) * (y < cr ? -1 : 1);
		assert_true(u >= -2 && u <= 2);
		seen[u + 2] = 1;
	}
	for (int i = 0; i < 5; i++)
		assert_true(seen[i]); /* -2 .. 2 ulps all reached */
	/* exact mode and other formats: the correctly rounded result */
	double y;
	CHECK_OK(skv_math_apply(&y, SKV_MATH_EXACT, SKV_MOP_EXP, SKV_FP32, a, 0, 5));
	CHECK_BITS("exact mode", y, ref_cr(SKV_MOP_EXP, a, 0));
	CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_EXP, SKV_FP16, 1.5, 0, 5));
	CHECK_BITS("fp16 stays correctly rounded", y, ref_op1(SKV_FP16, mpfr_exp, 1.5));
}

/* Flush to zero in the fast mode only, and the PTX tables' special values. */
static void test_ftz_and_specials(void **state)
{
	(void)state;
	double y;
	CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_EXP2, SKV_FP32, -130.0, 0, 1));
	CHECK_BITS("ex2.approx.ftz of a subnormal result", y, 0.0);
	CHECK_OK(skv_math_apply(&y, SKV_MATH_CUDA, SKV_MOP_EXP2, SKV_FP32, -130.0, 0, 1));
	assert_true(y > 0.0 && y < 0x1p-126); /* exp2f keeps subnormals */
	CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_EXP2, SKV_FP32, 0x1p-140, 0, 1));
	CHECK_BITS("subnormal argument reads as 0", y, 1.0);
	CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_RCP, SKV_FP32, 0x1p-140, 0, 1));
	CHECK_BITS("rcp of a flushed subnormal", y, INFINITY);
	static const struct {
		skv_math_op op;
		double a, want;
	} sp[] = {
		{SKV_MOP_EXP2, -INFINITY, 0.0}, {SKV_MOP_EXP2, 0.0, 1.0}, {SKV_MOP_EXP2, -0.0, 1.0},
		{SKV_MOP_EXP2, INFINITY, INFINITY}, {SKV_MOP_EXP, 0.0, 1.0}, {SKV_MOP_LOG2, 0.0, -INFINITY},
		{SKV_MOP_LOG2, INFINITY, INFINITY}, {SKV_MOP_LOG2, 1.0, 0.0}, {SKV_MOP_LOG, 1.0, 0.0},
		{SKV_MOP_RCP, 0.0, INFINITY}, {SKV_MOP_RCP, -0.0, -INFINITY}, {SKV_MOP_RCP, INFINITY, 0.0},
		{SKV_MOP_EXP2, 200.0, INFINITY}, /* overflow stays an overflow */
	};
	for (size_t i = 0; i < NELEM(sp); i++)
		for (uint64_t s = 0; s < 20; s++) {
			CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, sp[i].op, SKV_FP32, sp[i].a, 0, s));
			CHECK_BITS("special value", y, sp[i].want);
		}
	CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_LOG2, SKV_FP32, -1.0, 0, 1));
	assert_true(isnan(y));
	CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_EXP, SKV_FP32, NAN, 0, 1));
	assert_true(isnan(y));
	/* a finite result never steps to infinity */
	const double big = skv_round(SKV_FP32, 88.72);
	for (uint64_t s = 0; s < 200; s++) {
		CHECK_OK(skv_math_apply(&y, SKV_MATH_FAST, SKV_MOP_EXP, SKV_FP32, big, 0, s));
		assert_true(isfinite(y));
	}
	assert_int_equal(skv_math_apply(&y, (skv_math)SKV_NMATHS, SKV_MOP_EXP, SKV_FP32, 1, 0, 0), SKV_EINVAL);
	assert_int_equal(skv_math_apply(&y, SKV_MATH_FAST, (skv_math_op)SKV_NMOPS, SKV_FP32, 1, 0, 0), SKV_EINVAL);
	assert_int_equal(skv_math_apply(NULL, SKV_MATH_FAST, SKV_MOP_EXP, SKV_FP32, 1, 0, 0), SKV_EINVAL);
	skv_math m;
	CHECK_OK(skv_math_parse(&m, "fast"));
	assert_int_equal(m, SKV_MATH_FAST);
	assert_int_equal(skv_math_parse(&m, "faster"), SKV_EINVAL);
}

/* Through the kernel and the merge: the fast mode is deterministic, moves
 * the result with the seed, stays near the exact-mode result, and the exact
 * mode ignores the seed. */
static void test_kernel_and_merge(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 2048, 32, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 8, 0);
	size_t b[9];
	CHECK_OK(skv_bounds_even(b, 2048, 8));
	skv_config c = skv_config_uniform(SKV_FP32);
	c.input = SKV_BF16;
	c.base = SKV_BASE_E2;
	c.formula = SKV_FORMULA_FA2;
	skv_merge_spec m = skv_merge_spec_default();
	double ex[32], f1[32], f2[32], f3[32], le, l1, l2, l3;
	double e0 = run_merge(&t, 0, b, 8, 128, 100.0, &c, &m, &le, ex);
	c.math_seed = 999;
	double e0s = run_merge(&t, 0, b, 8, 128, 100.0, &c, &m, &le, f3);
	CHECK_BITS("exact mode ignores the seed", e0s, e0);
	c.math = SKV_MATH_FAST;
	c.math_seed = 1;
	run_merge(&t, 0, b, 8, 128, 100.0, &c, &m, &l1, f1);
	run_merge(&t, 0, b, 8, 128, 100.0, &c, &m, &l2, f2);
	c.math_seed = 2;
	double e3 = run_merge(&t, 0, b, 8, 128, 100.0, &c, &m, &l3, f3);
	int differs = 0, moved = 0;
	for (size_t i = 0; i < 32; i++) {
		CHECK_BITS("fast mode deterministic", f1[i], f2[i]);
		differs |= f1[i] != f3[i];
		moved |= f1[i] != ex[i];
	}
	assert_true(differs && moved);
	CHECK_LE("fast mode stays near", e3, 4 * e0 + 1e-6);
	tcase_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_deterministic_and_spread),
		cmocka_unit_test(test_ftz_and_specials),
		cmocka_unit_test(test_kernel_and_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
