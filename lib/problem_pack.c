/* problem_pack.c - K and V packed exactly in the narrowest store of their input format, and read back as doubles. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_inline.h"
#include "problem_internal.h"
#include "skv.h"

/*
 * The stores, as data. A value of format f (precision p, normal exponents
 * emin..emax, so its smallest subnormal is 2^(emin - p + 1)) is a value of
 * store s when p_f <= p_s, emax_f <= emax_s and emin_f - p_f >= emin_s - p_s:
 * every binade of f is then one of s with room for f's significand, and f's
 * finest quantum (at its subnormals, or at s's subnormals where f is still
 * normal) is a multiple of s's. So packing a value of f in s and reading it
 * back is exact, and skv_store_of picks the first (smallest) store of the
 * table that holds f. Parameters: IEEE 754-2008 Table 3.5 (binary16,
 * binary32, binary64); bfloat16 as in lib/fmt_inline.h's format table.
 */
typedef struct {
	int p, emin, emax;
	size_t bytes;
} store_row;

static const store_row stores[SKV_NSTORES] = {
	[SKV_STORE_F16] = {11, -14, 15, 2},
	[SKV_STORE_BF16] = {8, -126, 127, 2},
	[SKV_STORE_F32] = {24, -126, 127, 4},
	[SKV_STORE_F64] = {53, -1022, 1023, 8},
};
static const skv_store by_size[SKV_NSTORES] = {SKV_STORE_F16, SKV_STORE_BF16, SKV_STORE_F32, SKV_STORE_F64};

int skv_store_of(skv_format f)
{
	if ((unsigned)f >= SKV_NFORMATS || skv_format_is_scale(f) != 0)
		return -1;
	const int p = skv_format_precision(f), emin = skv_format_emin(f), emax = skv_format_emax(f);
	for (int i = 0; i < SKV_NSTORES; i++) {
		const store_row *s = &stores[by_size[i]];
		if (p <= s->p && emax <= s->emax && emin - p >= s->emin - s->p)
			return (int)by_size[i];
	}
	return -1;
}

size_t skv_store_bytes(skv_store s) { return (unsigned)s < SKV_NSTORES ? stores[s].bytes : 0; }

/* ------------------------------------------------ the encodings */

/* binary16 pattern of a binary16 value x: |x| < 2^-14 is m 2^-24 with m
 * an integer below 2^10 (exact product); otherwise the exponent rebiased
 * (15 for 1023) and the top 10 fraction bits, the rest being zero. */
static uint16_t f16_bits(double x)
{
	const uint64_t b = skv_bits_i(x);
	const uint16_t sign = (uint16_t)((b >> 48) & 0x8000);
	const double a = fabs(x);
	if (a != a)
		return sign | 0x7e00;
	if (a < 0x1p-14)
		return sign | (uint16_t)(a * 0x1p24);
	if (a > 65504)
		return sign | 0x7c00;
	const int e = (int)((b >> 52) & 0x7ff) - 1023;
	return sign | (uint16_t)((e + 15) << 10) | (uint16_t)((b >> 42) & 0x3ff);
}

static double f16_value(uint16_t h)
{
	const unsigned e = (h >> 10) & 31, m = h & 0x3ffu;
	const int neg = (h & 0x8000) != 0;
	double a;
	if (e == 0)
		a = (double)m * 0x1p-24; /* exact: m < 2^10 */
	else if (e == 31)
		a = m ? NAN : INFINITY;
	else
		a = skv_from_bits_i((uint64_t)(e - 15 + 1023) << 52 | (uint64_t)m << 42);
	return neg ? -a : a;
}

/* bfloat16 is the top half of binary32: a bf16 value converts to float
 * exactly and its low 16 bits are zero. */
static uint16_t bf16_bits(double x)
{
	const float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return (uint16_t)(u >> 16);
}

static double bf16_value(uint16_t h)
{
	const uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return (double)f;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* bfloat16 patterns eight at a time: each double holds a bf16 value, so
 * vcvtpd2ps is exact and the float's top half is the pattern (bf16_bits);
 * vpsrld and vpackusdw (the halves are below 2^16) keep it, in order. */
__attribute__((target("avx2"))) static size_t bf16_encode_avx2(uint16_t *h, const double *x, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m128i a = _mm_srli_epi32(_mm_castps_si128(_mm256_cvtpd_ps(_mm256_loadu_pd(x + i))), 16);
		const __m128i b = _mm_srli_epi32(_mm_castps_si128(_mm256_cvtpd_ps(_mm256_loadu_pd(x + i + 4))), 16);
		_mm_storeu_si128((__m128i *)(h + i), _mm_packus_epi32(a, b));
	}
	return i;
}
#endif

void skv_pack_encode(void *dst, skv_store s, const double *x, size_t n)
{
	uint16_t *h = dst;
	float *f = dst;
	size_t i0 = 0;
	switch (s) {
	case SKV_STORE_F16:
		for (size_t i = 0; i < n; i++)
			h[i] = f16_bits(x[i]);
		break;
	case SKV_STORE_BF16:
#if defined(__x86_64__) && defined(__GNUC__)
		if (__builtin_cpu_supports("avx2"))
			i0 = bf16_encode_avx2(h, x, n);
#endif
		for (size_t i = i0; i < n; i++)
			h[i] = bf16_bits(x[i]);
		break;
	case SKV_STORE_F32:
		for (size_t i = 0; i < n; i++)
			f[i] = (float)x[i];
		break;
	case SKV_STORE_F64: memcpy(dst, x, n * sizeof *x); break;
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <stdatomic.h>
#include <immintrin.h>
/* F16C present: CPUID leaf 1, ECX bit 29 (bit_F16C), and AVX usable (the OS
 * saves the YMM state, which __builtin_cpu_supports("avx") checks). Asked
 * through cpuid because clang before 16 does not know the "f16c" feature
 * string of __builtin_cpu_supports. */
static int cpu_detect_f16c(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	return (c & bit_F16C) && __builtin_cpu_supports("avx");
}

/* Asked once: cpuid costs microseconds in a VM, and every decoded chunk of
 * an fp16 or FP8 problem asks (an atomic, as the sweep's threads decode). */
static int cpu_has_f16c(void)
{
	static _Atomic int have = -1;
	int v = atomic_load_explicit(&have, memory_order_relaxed);
	if (v < 0) {
		v = cpu_detect_f16c();
		atomic_store_explicit(&have, v, memory_order_relaxed);
	}
	return v;
}

/* F16C's vcvtph2ps: binary16 to binary32 is exact (every binary16 value is
 * a binary32 value, NaNs quieted), then float to double exact; the same
 * values as f16_value (tests/test_problem_pack.c: every pattern). */
__attribute__((target("avx,f16c"))) static void f16_decode_f16c(double *dst, const uint16_t *h, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i)));
		_mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
		_mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
	}
	for (; i < n; i++)
		dst[i] = f16_value(h[i]);
}

/* bfloat16 eight at a time: the pattern shifted into a binary32's top half
 * (vpmovzxwd, vpslld) is the bf16 value as a float, and vcvtps2pd widens
 * it exactly, quieting a NaN as the scalar float -> double conversion of
 * bf16_value does; the same values (tests/test_problem_pack.c: every
 * pattern, against the portable loop). */
__attribute__((target("avx2"))) static void bf16_decode_avx2(double *dst, const uint16_t *h, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(h + i))), 16);
		const __m256 f = _mm256_castsi256_ps(w);
		_mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
		_mm256_storeu_pd(dst + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
	}
	for (; i < n; i++)
		dst[i] = bf16_value(h[i]);
}
#endif

/* dst = src decoded; f16c: use F16C for binary16 and AVX2 for bfloat16
 * where the CPU has them (0: the portable loops, for the tests). */
static void decode(double *dst, skv_store s, const void *src, size_t n, int f16c)
{
	const uint16_t *h = src;
	const float *f = src;
	switch (s) {
	case SKV_STORE_F16:
#if defined(__x86_64__) && defined(__GNUC__)
		if (f16c && cpu_has_f16c()) {
			f16_decode_f16c(dst, h, n);
			break;
		}
#endif
		for (size_t i = 0; i < n; i++)
			dst[i] = f16_value(h[i]);
		break;
	case SKV_STORE_BF16:
#if defined(__x86_64__) && defined(__GNUC__)
		if (f16c && __builtin_cpu_supports("avx2")) {
			bf16_decode_avx2(dst, h, n);
			break;
		}
#endif
		for (size_t i = 0; i < n; i++)
			dst[i] = bf16_value(h[i]);
		break;
	case SKV_STORE_F32:
		for (size_t i = 0; i < n; i++)
			dst[i] = (double)f[i];
		break;
	case SKV_STORE_F64: memcpy(dst, src, n * sizeof *dst); break;
	}
	(void)f16c;
}

void skv_pack_decode(double *dst, skv_store s, const void *src, size_t n) { decode(dst, s, src, n, 1); }

/* For the tests: the portable binary16 decoding alone. */
void skv_pack_decode_portable(double *dst, skv_store s, const void *src, size_t n) { decode(dst, s, src, n, 0); }

/* ------------------------------------------------ reading rows */

int skv_kv_ok(const skv_kv *s) { return (unsigned)s->store < SKV_NSTORES && s->k && s->v; }

void skv_kv_rows(double *k, double *v, const skv_kv *s, size_t lo, size_t hi)
{
	const size_t d = s->p->d, w = skv_store_bytes(s->store);
	if (k)
		skv_pack_decode(k, s->store, (const char *)s->k + lo * d * w, (hi - lo) * d);
	if (v)
		skv_pack_decode(v, s->store, (const char *)s->v + lo * d * w, (hi - lo) * d);
}

int skv_packed_rows(double *k, double *v, const skv_packed *p, size_t lo, size_t hi)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_packed(p);
	if (hi < lo || hi > p->prob.n || !skv_kv_ok(&s))
		return SKV_EINVAL;
	skv_kv_rows(k, v, &s, lo, hi);
	return SKV_OK;
}

int skv_rows_open(skv_rows *r, const skv_kv *s, size_t lo, size_t hi)
{
	*r = (skv_rows){.s = s, .lo = lo, .hi = hi};
	if (s->store == SKV_STORE_F64)
		return SKV_OK;
	r->kb = malloc(2 * SKV_ROWS_CHUNK * s->p->d * sizeof *r->kb);
	if (!r->kb)
		return SKV_ENOMEM;
	r->vb = r->kb + SKV_ROWS_CHUNK * s->p->d;
	return SKV_OK;
}

void skv_rows_close(skv_rows *r)
{
	free(r->kb);
	*r = (skv_rows){0};
}

void skv_rows_fill(skv_rows *r, int v, size_t j)
{
	const size_t m = r->hi - r->lo, j0 = j - j % SKV_ROWS_CHUNK;
	const size_t cnt = m - j0 < SKV_ROWS_CHUNK ? m - j0 : SKV_ROWS_CHUNK;
	skv_kv_rows(v ? NULL : r->kb, v ? r->vb : NULL, r->s, r->lo + j0, r->lo + j0 + cnt);
	if (v)
		r->v0 = j0, r->vn = cnt;
	else
		r->k0 = j0, r->kn = cnt;
}
