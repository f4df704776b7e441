/* test_fma64.c - the fp64 fma's two paths (the inline vfmadd and the C library's fma) give the same bits, MPFR's. */
#include "fmt_inline.h"
#include "ref_mpfr.h"
#include "testutil.h"

/* Same bits, or both NaN (a NaN's payload is not part of the contract). */
static int same(double x, double y) { return (isnan(x) && isnan(y)) || memcmp(&x, &y, sizeof x) == 0; }

/* Every path on one input: the dispatching skv_fma64_i, the public
 * skv_fma(SKV_FP64), libm, the instruction where the CPU has it, and the
 * MPFR referee (a b + c exact, rounded once to binary64 with its subnormals
 * and overflow to inf). */
static void check(double a, double b, double c, const char *file, int line)
{
	const double want = ref_fma(SKV_FP64, a, b, c);
	struct {
		const char *name;
		double got;
	} paths[] = {
		{"skv_fma64_i", skv_fma64_i(a, b, c)},
		{"skv_fma(fp64)", skv_fma(SKV_FP64, a, b, c)},
		{"libm fma", skv_fma64_libm_i(a, b, c)},
#ifdef SKV_I_FMA64_ASM
		{"vfmadd231sd", skv_fma64_hw_ok_i() ? skv_fma64_hw_i(a, b, c) : want},
#endif
	};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (!same(paths[i].got, want))
			fail_msg("%s:%d: %s(%a, %a, %a) = %a, MPFR %a", file, line, paths[i].name, a, b, c,
				 paths[i].got, want);
}
#define CHECK_FMA(a, b, c) check((a), (b), (c), __FILE__, __LINE__)

/* Whether this run exercises the instruction at all (printed, so a log
 * shows what was compared). */
static void note_paths(void)
{
#ifdef SKV_I_FMA64_ASM
	printf("# fp64 fma: %s\n", skv_fma64_hw_ok_i() ? "vfmadd231sd and libm compared"
						    : "CPU without FMA: libm path only");
#else
	printf("# fp64 fma: built with -mfma or not x86-64: the compiler's fma only\n");
#endif
}

/* A fused result differs from the rounded product plus c: a b = 1 - 2^-54
 * exactly, RN(a b) = 1 (a tie to even), so an unfused a b - 1 gives 0. */
static void test_fused(void **state)
{
	(void)state;
	note_paths();
	const double a = 1 + 0x1p-27, b = 1 - 0x1p-27;
	CHECK_BITS("fused", skv_fma64_i(a, b, -1.0), -0x1p-54);
	CHECK_BITS("unfused differs", a * b - 1.0, 0.0);
	CHECK_FMA(a, b, -1.0);
}

/* Every triple of the special and boundary values: signed zeros (exact
 * cancellation gives +0, -0 * x + -0 gives -0), subnormals, the normal
 * threshold, overflow, infinities (inf - inf is NaN), NaN. */
static void test_edges(void **state)
{
	(void)state;
	static const double e[] = {0.0,     -0.0,     DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_MIN,  -DBL_MIN, 0x1p-537,
				   1.0,     -1.0,     1 + 0x1p-52,  1 - 0x1p-53,   0.5,      3.0,      0x1p511,
				   DBL_MAX, -DBL_MAX, INFINITY,     -INFINITY,     NAN};
	const size_t n = sizeof e / sizeof e[0];
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++)
				CHECK_FMA(e[i], e[j], e[k]);
}

static double draw(skv_rng *r, int emin, int emax)
{
	const double m = 1 + skv_rng_uniform(r);
	const int e = emin + (int)skv_rng_below(r, (uint64_t)(emax - emin + 1));
	return (skv_rng_next(r) & 1 ? -m : m) * ldexp(1.0, e);
}

/* Seeded random inputs of four kinds: c near the product's size (partial
 * cancellation), c = -RN(a b) (the result is the product's rounding error,
 * the case fma exists for), results in the subnormal range, and uniformly
 * random bit patterns (infinities, NaNs, subnormals, overflows among them). */
static void test_random(void **state)
{
	(void)state;
	skv_rng r;
	skv_rng_seed(&r, 0xf3a64);
	for (int i = 0; i < 200000; i++) {
		const double a = draw(&r, -60, 60), b = draw(&r, -60, 60);
		const int ep = ilogb(a) + ilogb(b);
		CHECK_FMA(a, b, draw(&r, ep - 60, ep + 2));
		CHECK_FMA(a, b, -(a * b));
		const double s = draw(&r, -540, -520), t = draw(&r, -540, -520);
		CHECK_FMA(s, t, draw(&r, -1074, -1030));
		uint64_t x[3];
		for (int k = 0; k < 3; k++)
			x[k] = skv_rng_next(&r);
		double y[3];
		memcpy(y, x, sizeof y);
		CHECK_FMA(y[0], y[1], y[2]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fused),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
