/* rng.c - platform-independent random numbers: xoshiro256**, splitmix64 seeding, uniform, normal. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rng_internal.h"
#include "skv.h"

/* Every double operation below must round once to binary64, as IEEE 754
 * specifies, for the streams to have the same bits on every machine: no
 * x87 extended evaluation (the Makefile's -ffp-contract=off rules out fused
 * multiply-adds). */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "skv's random streams need FLT_EVAL_METHOD == 0 (SSE2 or equivalent double arithmetic)"
#endif

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; the constants of Vigna's public-domain
 * splitmix64.c): a Weyl sequence with increment the odd integer nearest
 * 2^64 / golden ratio, passed through a bijective finalizer (Stafford's
 * "Mix13" variant of the MurmurHash3 finalizer). */
enum { SM_SHIFT1 = 30, SM_SHIFT2 = 27, SM_SHIFT3 = 31 };
static const uint64_t sm_gamma = UINT64_C(0x9e3779b97f4a7c15);
static const uint64_t sm_mul1 = UINT64_C(0xbf58476d1ce4e5b9);
static const uint64_t sm_mul2 = UINT64_C(0x94d049bb133111eb);

static uint64_t sm_mix(uint64_t z)
{
	z = (z ^ (z >> SM_SHIFT1)) * sm_mul1;
	z = (z ^ (z >> SM_SHIFT2)) * sm_mul2;
	return z ^ (z >> SM_SHIFT3);
}

static uint64_t sm_next(uint64_t *state)
{
	*state += sm_gamma;
	return sm_mix(*state);
}

/* The four state words are four consecutive splitmix64 outputs, as Blackman
 * and Vigna recommend. They cannot all be zero (the only forbidden state):
 * sm_mix is a bijection, so at most one of four distinct Weyl states maps to
 * zero. */
void skv_rng_seed(skv_rng *r, uint64_t seed)
{
	if (!r)
		return;
	uint64_t x = seed;
	for (size_t i = 0; i < sizeof r->s / sizeof r->s[0]; i++)
		r->s[i] = sm_next(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** 1.0 (Blackman and Vigna, "Scrambled linear pseudorandom
 * number generators", ACM TOMS 47(4), 2021; reference code xoshiro256starstar.c):
 * output rotl(s1 * 5, 7) * 9, then the linear engine step. */
uint64_t skv_rng_next(skv_rng *r)
{
	if (!r)
		return 0;
	uint64_t *s = r->s;
	const uint64_t result = rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* The top 53 bits (the best of xoshiro's output) times 2^-53: an exact
 * conversion (an integer below 2^53 times a power of two), so the value is
 * k * 2^-53 for a uniform integer k in [0, 2^53). */
double skv_rng_uniform(skv_rng *r)
{
	return (double)(skv_rng_next(r) >> 11) * 0x1p-53;
}

/* log(1 + f) for f = m - 1, m in [sqrt(1/2), sqrt(2)), by the scheme of
 * fdlibm's e_log.c (Sun Microsystems, 1993): with s = f / (2 + f),
 *   log(1 + f) = log((1 + s) / (1 - s)) = 2 atanh(s) = 2s + s R,
 *   R = sum_{k>=1} 2 s^(2k) / (2k + 1),
 * and since 2s = f - s f = f - hfsq + s hfsq with hfsq = f^2 / 2,
 *   log(1 + f) = f - (hfsq - s (hfsq + R)).
 * f is exact (Sterbenz: m / 2 <= 1 <= 2m), so the rounding errors only touch
 * hfsq - s(...), at most |f| / 2 <= 0.21 of the result: the total stays
 * below one ulp. |s| <= (sqrt 2 - 1) / (sqrt 2 + 1) < 0.1716, z = s^2 < 0.0295;
 * the series is Taylor's (no minimax fit), and stopping after z^11 leaves
 * s z^12 * 2/25 < 2^-66 |log(1 + f)|, far below rounding. */
enum { LOG_NCOEF = 11 };
static const double log_coef[LOG_NCOEF] = {
	2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13,
	2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21, 2.0 / 23,
};

/* ln 2 split as in fdlibm: ln2_hi has 32 significant bits, so e * ln2_hi
 * is exact for every exponent |e| < 2^21; ln2_hi + ln2_lo is ln 2 to about
 * 2^-85 relative (checked against MPFR in tests/test_rng.c). */
static const double ln2_hi = 0x1.62e42feep-1;
static const double ln2_lo = 0x1.a39ef35793c76p-33;
static const double sqrt2 = 0x1.6a09e667f3bcdp+0; /* RN(sqrt 2) */

enum { DBL_EXP_BIAS = 1023, DBL_MANT_BITS = 52, DBL_EXP_MASK = 0x7ff };

double skv_rng_log(double x)
{
	if (x != x || x < 0)
		return NAN;
	if (x == 0)
		return -INFINITY;
	if (x == INFINITY)
		return x;
	int e = 0;
	if (x < DBL_MIN) { /* subnormal: scale into the normal range, exactly */
		x *= 0x1p54;
		e = -54;
	}
	uint64_t bits;
	memcpy(&bits, &x, sizeof bits);
	e += (int)((bits >> DBL_MANT_BITS) & DBL_EXP_MASK) - DBL_EXP_BIAS;
	/* m = x * 2^-e in [1, 2): the same significand with a zero exponent. */
	bits = (bits & ((UINT64_C(1) << DBL_MANT_BITS) - 1)) | ((uint64_t)DBL_EXP_BIAS << DBL_MANT_BITS);
	double m;
	memcpy(&m, &bits, sizeof m);
	if (m >= sqrt2) { /* into [sqrt(1/2), sqrt(2)): halving is exact */
		m *= 0.5;
		e += 1;
	}
	const double f = m - 1.0; /* exact (Sterbenz) */
	const double s = f / (2.0 + f);
	const double z = s * s;
	/* R = sum_{k=1..11} c_k z^k by Estrin's scheme (independent halves, so
	 * the multiplications overlap); every term is positive, so the order
	 * of evaluation costs no accuracy, and it is fixed, so it costs no
	 * reproducibility. */
	const double *c = log_coef;
	const double z2 = z * z, z4 = z2 * z2, z8 = z4 * z4;
	const double R = z * ((c[0] + z * c[1]) + z2 * (c[2] + z * c[3]) +
			      z4 * ((c[4] + z * c[5]) + z2 * (c[6] + z * c[7])) +
			      z8 * ((c[8] + z * c[9]) + z2 * c[10]));
	const double hfsq = 0.5 * f * f;
	if (e == 0)
		return f - (hfsq - s * (hfsq + R));
	const double de = (double)e;
	return de * ln2_hi - ((hfsq - (s * (hfsq + R) + de * ln2_lo)) - f);
}

/* Marsaglia and Bray's polar method (SIAM Review 6(3), 1964): draw (u, v)
 * uniform on the square [-1, 1)^2 until 0 < s = u^2 + v^2 < 1; then
 * u * sqrt(-2 log(s) / s) and v * sqrt(-2 log(s) / s) are independent
 * standard normals. skv returns the first and discards the second, so the
 * generator state stays the four xoshiro words of the header and each call
 * is a pure function of the state (one normal = one accepted pair, about
 * 2.55 uniforms on average). 2U - 1 is exact (U = k 2^-53), the logarithm is
 * skv_rng_log and sqrt is correctly rounded by IEEE 754, so every step is
 * specified to the bit. */
double skv_rng_normal(skv_rng *r)
{
	if (!r)
		return NAN; /* no generator: not a number rather than a fake draw */
	double u, v, s;
	do {
		u = 2.0 * skv_rng_uniform(r) - 1.0;
		v = 2.0 * skv_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	return u * sqrt(-2.0 * skv_rng_log(s) / s);
}

/* ------------------------------------------------ normals in batches */

/* skv_rng_normals draws the stream of skv_rng_normal in rounds: the
 * generator's outputs for up to NB pairs (the serial part: the xoshiro
 * state update, nothing else), then the pairs' u, v, s and acceptance on
 * four lanes, the accepted (u, s) packed, and their transform on four
 * lanes. A round draws at most as many pairs as normals are still wanted,
 * so it never accepts more than that many and the generator ends exactly
 * where the scalar calls leave it (no pair is drawn ahead and put back).
 * The lanes do the scalar code's operations (lib/rng_vec.h), so the values
 * are the same bits; tests/test_rng_batch.c checks 10^7 of them and the
 * state against the scalar definition, on both instruction sets. */
enum { NB = 256 }; /* pairs per round: 14 KiB of buffers, in L1 */

typedef double v4 __attribute__((vector_size(32)));
typedef uint64_t v4u __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));
#pragma GCC diagnostic ignored "-Wpsabi" /* v4 arguments: static functions of this file only */

#define RV_ONE_BITS UINT64_C(0x3ff0000000000000)   /* 1.0 */
#define RV_ULP52_BITS UINT64_C(0x3cb0000000000000) /* 2^-52 */
#define RV_MANT_MASK ((UINT64_C(1) << DBL_MANT_BITS) - 1)
#define RV_MAGIC_BITS UINT64_C(0x4330000000000000) /* 2^52 */
#define RV_MAGIC_BIAS (0x1p52 + DBL_EXP_BIAS)

#define RV(name) rv_##name##_generic
#define RV_ATTR
#define RV_SQRT(x) ((v4){sqrt((x)[0]), sqrt((x)[1]), sqrt((x)[2]), sqrt((x)[3])})
#include "rng_vec.h"
#undef RV
#undef RV_ATTR
#undef RV_SQRT

typedef struct {
	void (*pairs)(double *, double *, int64_t *, const uint64_t *, const uint64_t *, size_t);
	void (*polar)(double *, const double *, const double *, size_t);
} rv_kernels;
static const rv_kernels rv_generic = {rv_pairs_generic, rv_polar_generic};

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RV(name) rv_##name##_avx2
#define RV_ATTR __attribute__((target("avx2")))
#define RV_SQRT(x) ((v4)_mm256_sqrt_pd((__m256d)(x)))
#include "rng_vec.h"
#undef RV
#undef RV_ATTR
#undef RV_SQRT
static const rv_kernels rv_avx2 = {rv_pairs_avx2, rv_polar_avx2};
#endif

static const rv_kernels *rv_get(int generic)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (!generic && __builtin_cpu_supports("avx2"))
		return &rv_avx2;
#endif
	(void)generic;
	return &rv_generic;
}

/* The generator's next 2 n outputs, alternately into xu and xv (u's draw
 * first, as in skv_rng_normal), with the state in locals; then xu and xv
 * zero up to the next multiple of 4 (lanes computed and never used). */
static void raw_pairs(uint64_t *xu, uint64_t *xv, size_t n, skv_rng *r)
{
	uint64_t s0 = r->s[0], s1 = r->s[1], s2 = r->s[2], s3 = r->s[3];
#define XO_STEP(out)                                                                                    \
	do {                                                                                            \
		const uint64_t t_ = s1 << 17;                                                           \
		(out) = rotl(s1 * 5, 7) * 9;                                                            \
		s2 ^= s0;                                                                               \
		s3 ^= s1;                                                                               \
		s1 ^= s2;                                                                               \
		s0 ^= s3;                                                                               \
		s2 ^= t_;                                                                               \
		s3 = rotl(s3, 45);                                                                      \
	} while (0)
	for (size_t i = 0; i < n; i++) {
		XO_STEP(xu[i]);
		XO_STEP(xv[i]);
	}
#undef XO_STEP
	r->s[0] = s0, r->s[1] = s1, r->s[2] = s2, r->s[3] = s3;
	for (size_t i = n; i % 4; i++)
		xu[i] = xv[i] = 0;
}

/* One round: up to `want` (<= NB) pairs, the accepted ones' normals into
 * out; returns how many. */
static size_t round_normals(double *out, size_t want, skv_rng *r, const rv_kernels *k)
{
	/* raw_pairs writes every lane k->pairs reads; the zeros only keep GCC
	 * at -O1 from warning that it might not (-Wmaybe-uninitialized). */
	uint64_t xu[NB] = {0}, xv[NB] = {0};
	double u[NB], s[NB], uc[NB + 4], sc[NB + 4], o[NB];
	int64_t acc[NB];
	const size_t w4 = (want + 3) & ~(size_t)3;
	raw_pairs(xu, xv, want, r);
	k->pairs(u, s, acc, xu, xv, w4);
	size_t c = 0;
	for (size_t i = 0; i < want; i++) { /* branch-free packing: 21% reject at random */
		uc[c] = u[i];
		sc[c] = s[i];
		c += (size_t)(acc[i] & 1);
	}
	for (size_t i = c; i % 4; i++) /* lanes computed and never used */
		uc[i] = 0.0, sc[i] = 0.5;
	k->polar(o, uc, sc, (c + 3) & ~(size_t)3);
	memcpy(out, o, c * sizeof *o);
	return c;
}

int skv_rng_normals_isa(double *out, size_t n, skv_rng *r, int generic)
{
	if (!r || (!out && n))
		return SKV_EINVAL;
	const rv_kernels *k = rv_get(generic);
	for (size_t done = 0; done < n;)
		done += round_normals(out + done, n - done < NB ? n - done : NB, r, k);
	return SKV_OK;
}

int skv_rng_normals(double *out, size_t n, skv_rng *r) { return skv_rng_normals_isa(out, n, r, 0); }

/* Rejection as in OpenBSD's arc4random_uniform: accept x >= 2^64 mod n, so
 * the accepted range [2^64 mod n, 2^64) holds a whole number of copies of
 * [0, n) and x % n is exactly uniform. At most half the draws are rejected
 * (n > 2^63 is the worst case), on average far fewer. */
uint64_t skv_rng_below(skv_rng *r, uint64_t n)
{
	if (n == 0 || !r)
		return 0;
	const uint64_t threshold = (0 - n) % n; /* (2^64 - n) mod n = 2^64 mod n */
	for (;;) {
		const uint64_t x = skv_rng_next(r);
		if (x >= threshold)
			return x % n;
	}
}

/* A two-step splitmix64 chain: h = splitmix64 output for state a, then the
 * splitmix64 output for state h ^ b. Not symmetric, so (a, b) and (b, a)
 * give different seeds; each step is a bijection in its input word. */
uint64_t skv_seed_mix(uint64_t a, uint64_t b)
{
	uint64_t x = a;
	x = sm_next(&x) ^ b;
	return sm_next(&x);
}
