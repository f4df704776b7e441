/* mma_fast.c - the block FMA's common case (no sticky bit, c aligned or added after two half-blocks, the model's subnormal and product handling) without per-product branches, four lanes (columns of P.V, keys of q.k) at a time where AVX2 is there. */
#include <limits.h>
#include <math.h>

#include "mma_internal.h"
#include "scan.h"

/*
 * The sums are those of lib/mma.c's gather + aligned_sum (see the model
 * there): S = trunc(c / g) + sum trunc(P_i / g), g = 2^(E - 23 - neab),
 * rounded once. Both functions below compute exactly those operations on
 * the same doubles; they differ only in how they find E.
 */

/* Zero products kept at exponent INT_MIN instead of dropped (they add
 * trunc(0) = 0 and never raise E) and no branch per product. *bad is set
 * for a non-finite product. */
static double block_fast(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb,
			 unsigned len, double c, int *bad)
{
	double P[NMAX];
	const int emin = u->emin_in;
	int E = INT_MIN;
	uint64_t special = 0;
	for (unsigned i = 0; i < len; i++) {
		const double x = a[i * sa], y = b[i * sb], p = x * y;
		int ex = expo(x), ey = expo(y);
		ex = ex < emin ? emin : ex;
		ey = ey < emin ? emin : ey;
		const int e = p != 0 ? ex + ey : INT_MIN;
		E = e > E ? e : E;
		special |= (skv_bits_i(p) & SKV_I_INF) == SKV_I_INF;
		P[i] = p;
	}
	if (special) {
		*bad = 1;
		return 0.0;
	}
	if (c != 0) {
		const int ec = expo(c) < -126 ? -126 : expo(c);
		E = ec > E ? ec : E;
	} else if (E == INT_MIN) {
		return 0.0; /* no nonzero product and c = 0 */
	}
	E = E < u->par.min_exp ? u->par.min_exp : E;
	const int G = E - 23 - u->par.neab;
	const double scale = pow2i(-G);
	int64_t S = (int64_t)(c * scale);
	for (unsigned i = 0; i < len; i++)
		S += (int64_t)(P[i] * scale);
	return skv_mma_round_out(u, (double)S * pow2i(G), u->par.final_round);
}

/*
 * The shortcut when every operand is normal in the input format: biased
 * exponent field f in [lo, hi], lo = emin_in + 1023, hi = emax_in + 1023.
 * Then e_x = f_x - 1023 needs no clamp to emin_in, no product is zero, and
 * |a b| < 2^(2 emax_in + 2) <= 2^258 is finite, so E = max(f_x + f_y) - 2046
 * from the fields alone and block_fast's zero and special tests drop out.
 * One unsigned compare per operand finds the others: f - lo wraps above
 * hi - lo when f < lo. Returns 0, with *r untouched, when an operand is
 * zero, subnormal in the format or outside its range (block_fast's case).
 */
static int block_normal(double *r, const skv_mma_unit *u, const double *a, size_t sa, const double *b,
			size_t sb, unsigned len, double c)
{
	const uint64_t lo = (uint64_t)(u->emin_in + 1023), span = (uint64_t)(skv_format_emax(u->input) + 1023) - lo;
	uint64_t off = 0, fs = 0;
	for (unsigned i = 0; i < len; i++) {
		const uint64_t fx = (skv_bits_i(a[i * sa]) >> 52) & 0x7ff, fy = (skv_bits_i(b[i * sb]) >> 52) & 0x7ff;
		const uint64_t ox = fx - lo, oy = fy - lo, f = fx + fy;
		off = ox > off ? ox : off;
		off = oy > off ? oy : off;
		fs = f > fs ? f : fs;
	}
	if (len == 0 || off > span)
		return 0;
	int E = (int)fs - 2046;
	if (c != 0) {
		const int ec = expo(c) < -126 ? -126 : expo(c);
		E = ec > E ? ec : E;
	}
	E = E < u->par.min_exp ? u->par.min_exp : E;
	const int G = E - 23 - u->par.neab;
	const double scale = pow2i(-G);
	int64_t S = (int64_t)(c * scale);
	for (unsigned i = 0; i < len; i++)
		S += (int64_t)(a[i * sa] * b[i * sb] * scale);
	*r = skv_mma_round_out(u, (double)S * pow2i(G), u->par.final_round);
	return 1;
}

/*
 * block_fast four lanes at a time (AVX2, behind a CPU check) for finite
 * operands of the input's range. The exponent field alone, x & 0x7ff0..0,
 * is the double 2^floor(log2 |x|) for a nonzero x (+inf for NaN and
 * infinities), so max(x & 0x7ff0..0, 2^emin_in) is 2^e_x with e_x's clamp
 * to emin_in, the range test is one max against 2^emax_in (below it every
 * product is finite: block_fast's special case cannot occur), and 2^e_x
 * 2^e_y = 2^(e_x + e_y) exactly (e_x + e_y >= -252: a normal double). A
 * zero product's lane is masked to 0, below every 2^e (block_fast's
 * INT_MIN), so E is a max of doubles.
 * scale = 2^-G and g = 2^G are integer differences of exponent fields. The
 * addends trunc(P / g) are integers below 2^(25 + neab) <= 2^32 in
 * magnitude, so their sum over at most 65 of them (|S| < 2^39) is exact in
 * double in any order: the same S as block_fast's int64_t sum, and
 * VROUNDPD toward zero is C's truncating conversion. The once-per-block
 * rounding stays skv_mma_round_out, per lane.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MMA_AVX2 1
#define AVX2_ATTR __attribute__((target("avx2")))
#define RZ_ (_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)

static int avx2_ok(void) { return __builtin_cpu_supports("avx2"); }

/* Units whose instructions the four-lane code below may take whole. */
static int vec_unit(const skv_mma_unit *u)
{
	return u->fast && !u->par.halves && u->par.cjoin == SKV_MMA_C_ALIGNED && u->par.out_subnormals && avx2_ok();
}

/* Units whose instructions cols4 takes: vec_unit's, and the FP8 mma.sync
 * units (two half-blocks aligned from 0, then c added: lib/mma.c's
 * block). */
static int vec_cols(const skv_mma_unit *u)
{
	return vec_unit(u) || (u->fast && u->par.halves && u->par.cjoin == SKV_MMA_C_AFTER && u->par.out_subnormals &&
			       avx2_ok());
}

typedef struct {
	__m256d field, lo, hi, ctiny, cmin; /* 0x7ff0..0; 2^emin_in, 2^emax_in; 2^-126; 2^min_exp */
	__m256i kscale, kg;                 /* fields of 2^(23 + neab) 2^1023 and of 2^(23 + neab) */
	/* lanes_round: the output's biased exponent fields emin_out + 1022
	 * and emax_out + 1024 (the open interval of the normal range), the
	 * low s = 52 - out_frac bits cleared and 2^(s-1) - 1 added for rne */
	__m256i fbelow, fabove, keep, half, one;
	__m128i s;
	int rmode; /* 0: rounded per lane (lane_out), 1: rz, 2: rne */
} lanes;

AVX2_ATTR static void lanes_init(lanes *l, const skv_mma_unit *u)
{
	const uint64_t w = (uint64_t)(23 + u->par.neab); /* 3 .. 30 (params_ok) */
	l->field = _mm256_castsi256_pd(_mm256_set1_epi64x((long long)SKV_I_INF));
	l->lo = _mm256_set1_pd(pow2i(u->emin_in));
	l->hi = _mm256_set1_pd(pow2i(skv_format_emax(u->input)));
	l->ctiny = _mm256_set1_pd(pow2i(-126));
	l->cmin = _mm256_set1_pd(pow2i(u->par.min_exp));
	l->kscale = _mm256_set1_epi64x((long long)((2046 + w) << 52));
	l->kg = _mm256_set1_epi64x((long long)(w << 52));
	const int sh = 52 - u->par.out_frac; /* 29 .. 51 (params_ok: out_frac >= 1) */
	l->fbelow = _mm256_set1_epi64x(u->emin_out + 1022);
	l->fabove = _mm256_set1_epi64x(u->emax_out + 1024);
	l->keep = _mm256_set1_epi64x((long long)~((UINT64_C(1) << sh) - 1));
	l->half = _mm256_set1_epi64x((long long)((UINT64_C(1) << (sh - 1)) - 1));
	l->one = _mm256_set1_epi64x(1);
	l->s = _mm_cvtsi32_si128(sh);
	l->rmode = u->par.final_round == SKV_MMA_RZ ? 1 : u->par.final_round == SKV_MMA_RNE ? 2 : 0;
}

/* skv_mma_round_out on four lanes at once: 1 with *r set when every lane
 * of v is zero (+0, as a zero sum is) or in the output's normal range
 * before and after rounding (where skv_mma_round_bits gives a finite
 * value: the same bit operations), else 0, *r untouched. */
AVX2_ATTR static inline __attribute__((always_inline)) int lanes_round(__m256d *r, const lanes *l, __m256d v)
{
	if (!l->rmode)
		return 0;
	__m256i b = _mm256_castpd_si256(v);
	const __m256i f = _mm256_srli_epi64(_mm256_slli_epi64(b, 1), 53);
	const __m256i in = _mm256_and_si256(_mm256_cmpgt_epi64(f, l->fbelow), _mm256_cmpgt_epi64(l->fabove, f));
	const __m256i zero = _mm256_castpd_si256(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_EQ_OQ));
	if (_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_or_si256(in, zero))) != 15)
		return 0;
	if (l->rmode == 2)
		b = _mm256_add_epi64(b, _mm256_add_epi64(l->half, _mm256_and_si256(_mm256_srl_epi64(b, l->s), l->one)));
	b = _mm256_and_si256(b, l->keep);
	const __m256i f2 = _mm256_srli_epi64(_mm256_slli_epi64(b, 1), 53);
	if (_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(l->fabove, f2))) != 15)
		return 0; /* overflow: +-inf, which cols4 gives back */
	*r = _mm256_castsi256_pd(_mm256_andnot_si256(zero, b)); /* a zero sum is +0 (skv_mma_round_out) */
	return 1;
}

/* 2^E of four lanes from their product maxima pm and accumulators c: c's
 * 2^max(e_c, -126) joins when c != 0, then the floor 2^min_exp. */
AVX2_ATTR static __m256d lanes_E(const lanes *l, __m256d pm, __m256d c)
{
	__m256d ce = _mm256_max_pd(_mm256_and_pd(c, l->field), l->ctiny);
	ce = _mm256_andnot_pd(_mm256_cmp_pd(c, _mm256_setzero_pd(), _CMP_EQ_OQ), ce);
	return _mm256_max_pd(_mm256_max_pd(pm, ce), l->cmin);
}

/* One lane's block: block_fast's S, already summed, rounded. */
static inline double lane_out(const skv_mma_unit *u, double S, double g)
{
	double r;
	return skv_mma_round_bits(&r, u, S * g, u->par.final_round) ? r : skv_mma_round_out(u, S * g, u->par.final_round);
}

/* block_fast for contiguous a and b, len a multiple of 4; 0, *r untouched,
 * when an operand is infinite, NaN or beyond the format's range. */
AVX2_ATTR static int block_lanes(double *r, const skv_mma_unit *u, const lanes *l, const double *a,
				   const double *b, unsigned len, double c)
{
	__m256d pm = _mm256_setzero_pd(), mx = _mm256_setzero_pd();
	for (unsigned i = 0; i < len; i += 4) {
		const __m256d x0 = _mm256_loadu_pd(a + i), y0 = _mm256_loadu_pd(b + i);
		const __m256d x = _mm256_and_pd(x0, l->field), y = _mm256_and_pd(y0, l->field);
		const __m256d z = _mm256_cmp_pd(_mm256_mul_pd(x0, y0), _mm256_setzero_pd(), _CMP_EQ_OQ);
		pm = _mm256_max_pd(pm, _mm256_andnot_pd(z, _mm256_mul_pd(_mm256_max_pd(x, l->lo), _mm256_max_pd(y, l->lo))));
		mx = _mm256_max_pd(mx, _mm256_max_pd(x, y));
	}
	if (len == 0 || _mm256_movemask_pd(_mm256_cmp_pd(mx, l->hi, _CMP_GT_OQ)))
		return 0;
	__m128d h = _mm_max_pd(_mm256_castpd256_pd128(pm), _mm256_extractf128_pd(pm, 1));
	h = _mm_max_sd(h, _mm_unpackhi_pd(h, h));
	const __m256d E = lanes_E(l, _mm256_set1_pd(_mm_cvtsd_f64(h)), _mm256_set1_pd(c));
	const __m256i eb = _mm256_castpd_si256(E);
	const __m256d scale = _mm256_castsi256_pd(_mm256_sub_epi64(l->kscale, eb));
	__m256d S = _mm256_setzero_pd();
	for (unsigned i = 0; i < len; i += 4) {
		const __m256d t = _mm256_mul_pd(_mm256_mul_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i)), scale);
		S = _mm256_add_pd(S, _mm256_round_pd(t, RZ_));
	}
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(S), _mm256_extractf128_pd(S, 1));
	s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
	const double sc = _mm256_cvtsd_f64(scale), g = _mm256_cvtsd_f64(_mm256_castsi256_pd(_mm256_sub_epi64(eb, l->kg)));
	*r = lane_out(u, trunc(c * sc) + _mm_cvtsd_f64(s), g);
	return 1;
}

/* Column j's product terms for four columns, p[j] times v[j d + 0..4):
 * the running max pm of 2^(e_p + e_v) (0 for a zero product) and mx of
 * the operands' 2^e (the range test). */
#define PROD_MAX_(j)                                                                                           \
	do {                                                                                                    \
		const __m256d y0_ = _mm256_loadu_pd(v + (j) * d), y_ = _mm256_and_pd(y0_, l->field);            \
		const __m256d z_ = _mm256_cmp_pd(y0_, _mm256_setzero_pd(), _CMP_EQ_OQ);                         \
		pm = _mm256_max_pd(pm, _mm256_andnot_pd(z_, _mm256_mul_pd(_mm256_set1_pd(pf[j]), _mm256_max_pd(y_, l->lo)))); \
		mx = _mm256_max_pd(mx, y_);                                                                     \
	} while (0)
#define PROD_ADD_(j) \
	S = _mm256_add_pd(S, _mm256_round_pd(_mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(p[j]), _mm256_loadu_pd(v + (j) * d)), scale), RZ_))

/* BODY(j) for the products j of [j0, j1) a block takes (h < 0), or its
 * half h takes: (j - j0) mod 4 in {2h, 2h + 1} (lib/mma.c, gather). */
#define EACH_PRODUCT_(BODY)                                                  \
	do {                                                                 \
		if (h < 0)                                                   \
			for (size_t j = j0; j < j1; j++)                     \
				BODY(j);                                     \
		else                                                         \
			for (size_t j = j0 + 2 * (size_t)h; j < j1; j += 4) { \
				BODY(j);                                     \
				if (j + 1 < j1)                              \
					BODY(j + 1);                         \
			}                                                    \
	} while (0)

/* One aligned block sum for four columns on accumulators *c (finite): the
 * products j of [j0, j1) (h < 0), or of its half h (halves: (j - j0) mod 4
 * in {2h, 2h + 1}), aligned with c to their E and rounded once, into *c.
 * 0 when a lane leaves the case (an operand v out of the format's range, a
 * result infinite or NaN); *c is then partly written. An infinite or NaN c
 * needs no test of its own: it makes E's field all ones, c scale and S
 * infinite or NaN (the products stay finite), and skv_mma_round_out
 * passes an infinity or a NaN through, which the finiteness test sees. */
AVX2_ATTR static inline __attribute__((always_inline)) int
lanes_sum(__m256d *c, const skv_mma_unit *u, const lanes *l, const double *p, const double *pf, const double *v,
	  size_t d, size_t j0, size_t j1, int h)
{
	__m256d pm = _mm256_setzero_pd(), mx = _mm256_setzero_pd();
	EACH_PRODUCT_(PROD_MAX_);
	if (_mm256_movemask_pd(_mm256_cmp_pd(mx, l->hi, _CMP_GT_OQ)))
		return 0;
	const __m256i eb = _mm256_castpd_si256(lanes_E(l, pm, *c));
	const __m256d scale = _mm256_castsi256_pd(_mm256_sub_epi64(l->kscale, eb));
	__m256d S = _mm256_round_pd(_mm256_mul_pd(*c, scale), RZ_);
	EACH_PRODUCT_(PROD_ADD_);
	const __m256d g = _mm256_castsi256_pd(_mm256_sub_epi64(eb, l->kg));
	if (lanes_round(c, l, _mm256_mul_pd(S, g)))
		return 1; /* S g is exact: an integer below 2^39 times a power of 2 */
	double s4[4], g4[4], r4[4];
	_mm256_storeu_pd(s4, S);
	_mm256_storeu_pd(g4, g);
	for (int i = 0; i < 4; i++) {
		r4[i] = lane_out(u, s4[i], g4[i]);
		if (!isfinite(r4[i]))
			return 0;
	}
	*c = _mm256_loadu_pd(r4);
	return 1;
}

/* *c + r rounded to the output (lib/mma.c's block, SKV_MMA_C_AFTER): the
 * double sum of two values of the output rounded once more, correct as
 * skv_add_i's is (lib/fmt_inline.h); fp32 by the hardware conversion,
 * which rounds to nearest even with fp32's subnormals and overflow. 0 for
 * a lane that is not finite. */
AVX2_ATTR static int lanes_add_out(__m256d *c, const skv_mma_unit *u, __m256d r)
{
	__m256d t = _mm256_add_pd(*c, r);
	if (u->output == SKV_FP32) {
		t = _mm256_cvtps_pd(_mm256_cvtpd_ps(t));
	} else {
		double t4[4];
		_mm256_storeu_pd(t4, t);
		for (int i = 0; i < 4; i++)
			t4[i] = skv_round_i(u->output, t4[i]);
		t = _mm256_loadu_pd(t4);
	}
	const __m256d inf = _mm256_set1_pd(INFINITY);
	if (_mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), t), inf, _CMP_LT_OQ)) != 15)
		return 0;
	*c = t;
	return 1;
}

/* Whole instructions, len products, for four columns: acc[0..4) += p .
 * v[j d + 0..4), the unit's blocks of n in turn from j = 0, pf[j] = 2^e_p (0 for p = 0);
 * with halves, each block's two half-blocks chained from 0 and added to
 * acc after (lib/mma.c's block). Returns 0, acc untouched, when a lane
 * leaves lanes_sum's case. */
AVX2_ATTR static int cols4(double *acc, const skv_mma_unit *u, const lanes *l, const double *p, const double *pf,
			   const double *v, size_t len, size_t d)
{
	__m256d c = _mm256_loadu_pd(acc);
	for (size_t k0 = 0; k0 < len; k0 += u->par.n) {
		const size_t k1 = len - k0 < u->par.n ? len : k0 + u->par.n;
		if (!u->par.halves) {
			if (!lanes_sum(&c, u, l, p, pf, v, d, k0, k1, -1))
				return 0;
			continue;
		}
		__m256d r = _mm256_setzero_pd();
		if (!lanes_sum(&r, u, l, p, pf, v, d, k0, k1, 0) || !lanes_sum(&r, u, l, p, pf, v, d, k0, k1, 1) ||
		    !lanes_add_out(&c, u, r))
			return 0;
	}
	_mm256_storeu_pd(acc, c);
	return 1;
}
#define block_lanes_ block_lanes
#else
#define MMA_AVX2 0
#define block_lanes_(r, u, l, a, b, len, c) 0
#endif

double skv_mma_fast_dot(const skv_mma_unit *u, const double *a, size_t sa, const double *b, size_t sb, size_t K,
			double c)
{
	double d = c;
	int bad = 0;
#if MMA_AVX2
	lanes l;
	const int vec = sa == 1 && sb == 1 && avx2_ok();
	if (vec)
		lanes_init(&l, u);
#else
	const int vec = 0;
#endif
	for (size_t k0 = 0; k0 < K; k0 += u->par.n) {
		const unsigned len = K - k0 < u->par.n ? (unsigned)(K - k0) : u->par.n;
		const double *ak = a + k0 * sa, *bk = b + k0 * sb;
		double r;
		/* An overflowed accumulator stays infinite; its blocks still run,
		 * with c = 0, to find NaN and infinite products. */
		const double ck = isfinite(d) ? d : 0.0;
		if (!(vec && len % 4 == 0 ? block_lanes_(&r, u, &l, ak, bk, len, ck)
					  : block_normal(&r, u, ak, sa, bk, sb, len, ck))) {
			r = block_fast(u, ak, sa, bk, sb, len, ck, &bad);
			if (bad)
				return skv_mma_special(u, a, sa, b, sb, K, c);
		}
		d = isfinite(d) ? r : d;
	}
	return d;
}

#if MMA_AVX2
/* pf[j] = 2^e_p of p[j] clamped to 2^emin_in, 0 for p = 0, for j < len.
 * An infinite or NaN p needs no test: it makes every product of its lanes
 * infinite or NaN, so S too, and cols4 gives the columns back (see
 * there). */
AVX2_ATTR static void lanes_pf(double *pf, const lanes *l, const double *p, size_t len)
{
	size_t j = 0;
	for (; j + 4 <= len; j += 4) {
		const __m256d x = _mm256_loadu_pd(p + j), z = _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_EQ_OQ);
		_mm256_storeu_pd(pf + j, _mm256_andnot_pd(z, _mm256_max_pd(_mm256_and_pd(x, l->field), l->lo)));
	}
	for (; j < len; j++) {
		const double f = skv_from_bits_i(skv_bits_i(p[j]) & SKV_I_INF), lo = _mm256_cvtsd_f64(l->lo);
		pf[j] = p[j] == 0 ? 0.0 : f > lo ? f : lo;
	}
}

/* Products per cols4 call: a multiple of every k (4 .. 64), so a chunk is
 * whole instructions, and pf's size. */
enum { CHUNK = 256 };

/* skv_mma_pv with the lanes: per chunk of whole instructions, four
 * columns at a time where cols4 takes them, the others (and the last d %
 * 4) one by one. A chunk's instructions chained are its blocks of n
 * chained from its start (n divides k, skv_mma_tile), which is what cols4
 * computes. */
AVX2_ATTR static void cols_lanes(double *acc, const skv_mma_unit *u, unsigned k, const double *p, const double *v,
				 size_t n, size_t d)
{
	lanes l;
	lanes_init(&l, u);
	double pf[CHUNK];
	for (size_t k0 = 0; k0 < n; k0 += CHUNK) {
		const size_t len = n - k0 < CHUNK ? n - k0 : CHUNK;
		const double *pk = p + k0, *vk = v + k0 * d;
		lanes_pf(pf, &l, pk, len);
		size_t i = 0;
		for (; i + 4 <= d; i += 4)
			if (!cols4(acc + i, u, &l, pk, pf, vk + i, len, d))
				for (size_t t = i; t < i + 4; t++)
					acc[t] = skv_mma_chain(u, k, pk, 1, vk + t, d, len, acc[t]);
		for (; i < d; i++)
			acc[i] = skv_mma_chain(u, k, pk, 1, vk + i, d, len, acc[i]);
	}
}
#endif

#if MMA_AVX2
/* Four 4 x 4 tiles at a time: rows r0..r3 of four elements become four
 * columns (unpack pairs, then swap 128-bit halves). */
AVX2_ATTR static size_t transpose_lanes(double *kt, const double *kr, size_t d)
{
	size_t i = 0;
	for (; i + 4 <= d; i += 4) {
		const __m256d r0 = _mm256_loadu_pd(kr + i), r1 = _mm256_loadu_pd(kr + d + i);
		const __m256d r2 = _mm256_loadu_pd(kr + 2 * d + i), r3 = _mm256_loadu_pd(kr + 3 * d + i);
		const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
		const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
		_mm256_storeu_pd(kt + 4 * i, _mm256_permute2f128_pd(t0, t2, 0x20));
		_mm256_storeu_pd(kt + 4 * i + 4, _mm256_permute2f128_pd(t1, t3, 0x20));
		_mm256_storeu_pd(kt + 4 * i + 8, _mm256_permute2f128_pd(t0, t2, 0x31));
		_mm256_storeu_pd(kt + 4 * i + 12, _mm256_permute2f128_pd(t1, t3, 0x31));
	}
	return i;
}
#endif

void skv_mma_transpose4(double *kt, const double *kr, size_t d)
{
	size_t i = 0;
#if MMA_AVX2
	if (avx2_ok())
		i = transpose_lanes(kt, kr, d);
#endif
	for (; i < d; i++)
		for (size_t t = 0; t < 4; t++)
			kt[4 * i + t] = kr[t * d + i];
}

/* P.V over d columns (lib/scan.h): four columns at a time where the
 * lanes take the unit, else each column's skv_mma_chain. */
void skv_mma_pv(double *acc, const skv_mma_unit *u, unsigned k, const double *p, const double *v, size_t n,
		size_t d)
{
#if MMA_AVX2
	if (vec_cols(u) && k <= NMAX && CHUNK % k == 0 && k % u->par.n == 0) {
		cols_lanes(acc, u, k, p, v, n, d);
		return;
	}
#endif
	for (size_t i = 0; i < d; i++)
		acc[i] = skv_mma_chain(u, k, p, 1, v + i, d, n, acc[i]);
}
