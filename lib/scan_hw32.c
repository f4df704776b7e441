/* scan_hw32.c - the scan's two fma loops (q . k and P.V) in hardware binary32 arithmetic where it is the emulated operation itself. */
#include <math.h>

#include "scan.h"
#include "fmt_inline.h"

/*
 * Why the hardware gives the same bits. For binary32 values a, b, c the
 * emulation skv_fma_i(SKV_FP32, a, b, c) is RN32(RO53(a b + c)): a b is
 * exact in double (two 24-bit significands, exponents within 2^-298 ..
 * 2^256), the sum is rounded to odd at 53 bits and then to nearest at 24,
 * which is the correctly rounded a b + c (Boldo and Melquiond, IEEE TC
 * 57(4), 2008; the argument is in lib/fmt_inline.h), subnormals and
 * overflow to infinity included, since the last rounding is the hardware's
 * double -> float conversion. The FMA instruction on binary32 operands,
 * VFMADD231SS/PS, computes a b + c "with infinite precision" and rounds
 * once to binary32 under MXCSR (Intel SDM vol. 2, VFMADD231SS; round to
 * nearest even, no flush-to-zero and no denormals-are-zero in the default
 * environment lib/fmt_inline.h requires): the same correctly rounded value,
 * so the same bits, for every finite or infinite operand (a NaN result is
 * a NaN on both paths; its payload is nobody's number). Converting a
 * double that holds a binary32 value to float, and back, is exact.
 *
 * So the loops below are the emulated ones exactly when every operand is a
 * binary32 value: q and K, V hold values of cfg->input (skv_problem's
 * contract: the kernels and the truth see the same numbers), which are
 * binary32 values when the input's store (lib/problem_pack.c's table) is
 * binary32 or narrower; the accumulator starts at 0 and only ever holds
 * results of binary32 operations (skv_mul_i and skv_fma_i in compute fp32);
 * P is e(.) in compute fp32 (correctly rounded, or the approximate-math
 * model, whose results are binary32 values: lib/approx.c's val_of), then
 * rounded to cfg->p, which either keeps it or rounds it to a format whose
 * values are binary32 values. skv_hw32_on states the condition; a CPU
 * without AVX2 and FMA keeps the emulated loops (tests/test_scan_hw32.c
 * compares both on seeded random and edge operands).
 */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HW32 1
#define HW32_ATTR __attribute__((target("avx2,fma")))

static int cpu_ok(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

/* q . k in binary32: s = fma(q_i, k_i, s) for i = 0 .. d-1 in order, as
 * the emulated chain (one rounding per step, the same order). */
HW32_ATTR static double dot_hw(const double *q, const double *k, size_t d)
{
	float s = 0.0f;
	for (size_t i = 0; i < d; i++)
		s = fmaf((float)q[i], (float)k[i], s);
	return (double)s;
}

/* acc_i = fma(p, v_i, acc_i) for every i: independent lanes, four at a time. */
HW32_ATTR static void pv_hw(double *acc, double p, const double *v, size_t d)
{
	const float pf = (float)p;
	const __m128 p4 = _mm_set1_ps(pf);
	size_t i = 0;
	for (; i + 4 <= d; i += 4) {
		const __m128 vv = _mm256_cvtpd_ps(_mm256_loadu_pd(v + i));
		const __m128 aa = _mm256_cvtpd_ps(_mm256_loadu_pd(acc + i));
		_mm256_storeu_pd(acc + i, _mm256_cvtps_pd(_mm_fmadd_ps(p4, vv, aa)));
	}
	for (; i < d; i++)
		acc[i] = (double)fmaf(pf, (float)v[i], (float)acc[i]);
}
#else
#define HW32 0
#endif

int skv_hw32_on(const skv_config *cfg)
{
	if (cfg->compute != SKV_FP32)
		return 0;
	const int s = skv_store_of(cfg->input);
	if (s != SKV_STORE_F32 && s != SKV_STORE_F16 && s != SKV_STORE_BF16)
		return 0;
#if HW32
	return cpu_ok();
#else
	return 0;
#endif
}

double skv_hw32_dot(const double *q, const double *k, size_t d)
{
#if HW32
	return dot_hw(q, k, d);
#else
	double s = 0.0;
	for (size_t i = 0; i < d; i++)
		s = skv_fma_i(SKV_FP32, q[i], k[i], s);
	return s;
#endif
}

void skv_hw32_pv(double *acc, double p, const double *v, size_t d)
{
#if HW32
	pv_hw(acc, p, v, d);
#else
	for (size_t i = 0; i < d; i++)
		acc[i] = skv_fma_i(SKV_FP32, p, v[i], acc[i]);
#endif
}
