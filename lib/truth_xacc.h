/* truth_xacc.h - internal: an exact fixed-point accumulator of doubles and of products of two doubles. */
#ifndef SKV_TRUTH_XACC_H
#define SKV_TRUTH_XACC_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/*
 * A double is M 2^e with an integer M < 2^53 and e >= -1074 (e = E - 1075
 * for a normal number with biased exponent E, -1074 for a subnormal), so a
 * product of two is an integer below 2^106 times 2^e with -2148 <= e and
 * every product is below 2^2048. skv_xacc holds a sum of such products (and
 * of plain doubles) exactly, as sum_k c[k] 2^(XA_BASE + 32 k) with signed
 * 64-bit chunks c[k]: a product is split into 32-bit pieces added to three to
 * five chunks (carries deferred, Neal's "small superaccumulator",
 * arXiv:1505.05571, 2015). Each addition adds less than 3 * 2^32 to a chunk,
 * so XA_FLUSH = 2^26 of them stay far below 2^63 before skv_xacc_norm
 * propagates the carries. lib/truth_mpfr.c sums dot products with it,
 * lib/truth_fast.c the last steps of the fast truth (skv_xacc_top).
 */
enum {
	XA_RADIX_BITS = 32,
	XA_BASE = -2176,   /* a multiple of 32 at or below -2148 */
	XA_NCHUNK = 140,   /* (2048 - XA_BASE) / 32 = 132 chunks, + carries, + margin */
	XA_FLUSH = 1 << 26,
	DBL_FRAC_BITS = DBL_MANT_DIG - 1,
	DBL_EXP_MASK = 0x7ff,
	DBL_LSB_BIAS = 1075 /* value = M 2^(E - 1075) for a normal double */
};
#define XA_DIGIT_MASK ((UINT64_C(1) << XA_RADIX_BITS) - 1)

typedef struct {
	int64_t c[XA_NCHUNK];
	int lo, hi; /* chunks outside [lo, hi] are zero; lo > hi when empty */
} skv_xacc;

/* x = M 2^e exactly (M = 0 for x = 0), for finite x. */
static inline uint64_t skv_dbl_int(double x, int *e)
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	const int E = (int)((b >> DBL_FRAC_BITS) & DBL_EXP_MASK);
	const uint64_t f = b & ((UINT64_C(1) << DBL_FRAC_BITS) - 1);
	*e = E ? E - DBL_LSB_BIAS : 1 - DBL_LSB_BIAS;
	return E ? f | (UINT64_C(1) << DBL_FRAC_BITS) : f;
}

/* An empty accumulator (for one just declared: every chunk zeroed). */
static inline void skv_xacc_init(skv_xacc *a)
{
	memset(a->c, 0, sizeof a->c);
	a->lo = XA_NCHUNK;
	a->hi = -1;
}

static inline void skv_xacc_clear(skv_xacc *a)
{
	for (int k = a->lo; k <= a->hi; k++)
		a->c[k] = 0;
	a->lo = XA_NCHUNK;
	a->hi = -1;
}

/* Adds (or subtracts) v 2^(XA_BASE + pos), pos >= 0: v << (pos % 32) spans
 * 96 bits, three 32-bit pieces. */
static inline void skv_xacc_add(skv_xacc *a, uint64_t v, int pos, int neg)
{
	if (v == 0)
		return;
	const int k = pos / XA_RADIX_BITS, s = pos % XA_RADIX_BITS;
	const uint64_t sh = v << s;
	const int64_t p0 = (int64_t)(sh & XA_DIGIT_MASK);
	const int64_t p1 = (int64_t)(sh >> XA_RADIX_BITS);
	const int64_t p2 = s ? (int64_t)(v >> (2 * XA_RADIX_BITS - s)) : 0;
	if (neg) {
		a->c[k] -= p0;
		a->c[k + 1] -= p1;
		a->c[k + 2] -= p2;
	} else {
		a->c[k] += p0;
		a->c[k + 1] += p1;
		a->c[k + 2] += p2;
	}
	if (k < a->lo)
		a->lo = k;
	if (k + 2 > a->hi)
		a->hi = k + 2;
}

/* Adds (neg: subtracts) the exact product (Mx 2^ex) (My 2^ey), both M < 2^53:
 * with M = m1 2^32 + m0, the partial products m0 n0 < 2^64, m0 n1 + m1 n0 <
 * 2^54 and m1 n1 < 2^42 are exact in 64-bit integers. */
static inline void skv_xacc_add_product(skv_xacc *a, uint64_t mx, int ex, uint64_t my, int ey, int neg)
{
	const uint64_t x0 = mx & XA_DIGIT_MASK, x1 = mx >> XA_RADIX_BITS;
	const uint64_t y0 = my & XA_DIGIT_MASK, y1 = my >> XA_RADIX_BITS;
	const int pos = ex + ey - XA_BASE;
	skv_xacc_add(a, x0 * y0, pos, neg);
	skv_xacc_add(a, x0 * y1 + x1 * y0, pos + XA_RADIX_BITS, neg);
	skv_xacc_add(a, x1 * y1, pos + 2 * XA_RADIX_BITS, neg);
}

/* Adds the finite double x exactly. */
static inline void skv_xacc_add_dbl(skv_xacc *a, double x)
{
	int e;
	const uint64_t m = skv_dbl_int(x, &e);
	skv_xacc_add(a, m, e - XA_BASE, signbit(x) != 0);
}

/* Adds (neg: subtracts) the exact product x y of two finite doubles. */
static inline void skv_xacc_add_mul(skv_xacc *a, double x, double y, int neg)
{
	int ex, ey;
	const uint64_t mx = skv_dbl_int(x, &ex), my = skv_dbl_int(y, &ey);
	if (mx && my)
		skv_xacc_add_product(a, mx, ex, my, ey, neg ^ (signbit(x) != 0) ^ (signbit(y) != 0));
}

/* Propagates carries: afterwards c[lo..hi-1] are digits in [0, 2^32) and the
 * top chunk c[hi] is in [-2^32, 2^32) (it carries the sign), so every chunk
 * is an exact double. The value is unchanged: c[k] = low + carry 2^32
 * exactly, with low = c[k] mod 2^32 (two's complement bits, well defined for
 * the uint64_t conversion) and (c[k] - low) / 2^32 an exact division. */
static inline void skv_xacc_norm(skv_xacc *a)
{
	if (a->lo > a->hi)
		return;
	int64_t carry = 0;
	for (int k = a->lo; k < a->hi; k++) {
		const int64_t v = a->c[k] + carry;
		const int64_t low = (int64_t)((uint64_t)v & XA_DIGIT_MASK);
		carry = (v - low) / ((int64_t)1 << XA_RADIX_BITS);
		a->c[k] = low;
	}
	a->c[a->hi] += carry;
	while (a->c[a->hi] >= ((int64_t)1 << XA_RADIX_BITS) || a->c[a->hi] < -((int64_t)1 << XA_RADIX_BITS)) {
		const int64_t v = a->c[a->hi];
		const int64_t low = (int64_t)((uint64_t)v & XA_DIGIT_MASK);
		a->c[a->hi] = low;
		a->c[++a->hi] = (v - low) / ((int64_t)1 << XA_RADIX_BITS);
	}
}

/* Negates the value in place (then normalized). */
static inline void skv_xacc_negate(skv_xacc *a)
{
	for (int k = a->lo; k <= a->hi; k++)
		a->c[k] = -a->c[k];
	skv_xacc_norm(a);
}

/* 2^e for a normal exponent e (-1022 <= e <= 1023). */
static inline double skv_pow2(int e)
{
	const uint64_t b = (uint64_t)(e + 1023) << DBL_FRAC_BITS;
	double p;
	memcpy(&p, &b, sizeof p);
	return p;
}

/* x 2^e for an integer-valued 1 <= x < 2^53: exact while normal (inf past
 * the largest double); below 2^-1022 one rounding to nearest (x 2^e1 with
 * e1 >= -1000 is exact, only the last factor rounds), and 0 below 2^-1100,
 * so the error is at most 2^-1074 there. */
static inline double skv_xacc_scale(double x, int e)
{
	if (e >= 0) {
		for (; e > 1000; e -= 1000)
			x *= skv_pow2(1000);
		return x * skv_pow2(e);
	}
	if (e < -1100 - DBL_MANT_DIG)
		return 0.0;
	const int e1 = e < -1000 ? -1000 : e;
	return x * skv_pow2(e1) * skv_pow2(e - e1);
}

/*
 * The value with its magnitude truncated to its top 53 bits: t with
 * |value| - |t| in [0, 2^-52 |t|] and the sign of the value (0 for 0). Where
 * t is below 2^-1022 the last scaling may round it to the subnormal grid, so
 * then | |value| - |t| | <= 2^-52 |t| + 2^-1074. Normalizes a; the value is
 * unchanged.
 */
static inline double skv_xacc_top(skv_xacc *a)
{
	skv_xacc_norm(a);
	if (a->lo > a->hi)
		return 0.0;
	const int neg = a->c[a->hi] < 0;
	if (neg)
		skv_xacc_negate(a);
	int h = a->hi;
	while (h >= a->lo && a->c[h] == 0)
		h--;
	double t = 0.0;
	if (h >= a->lo) {
		/* three digits, the top one nonzero: 65 to 96 bits */
		const uint64_t d1 = h - 1 >= a->lo ? (uint64_t)a->c[h - 1] : 0;
		const uint64_t d2 = h - 2 >= a->lo ? (uint64_t)a->c[h - 2] : 0;
		const unsigned __int128 x = ((unsigned __int128)(uint64_t)a->c[h] << 64) | (d1 << 32) | d2;
		const int bits = 64 + 64 - __builtin_clzll((uint64_t)a->c[h]);
		const uint64_t m = (uint64_t)(x >> (bits - DBL_MANT_DIG));
		t = skv_xacc_scale((double)m, XA_BASE + (h - 2) * XA_RADIX_BITS + bits - DBL_MANT_DIG);
	}
	if (neg) {
		skv_xacc_negate(a);
		t = -t;
	}
	return t;
}

#endif
