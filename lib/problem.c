/* problem.c - seeded random attention problems (q, K, V rounded to the input format). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_inline.h"
#include "problem_internal.h"
#include "skv.h"

static const char *const dist_names[SKV_NDISTS] = {
	[SKV_DIST_GAUSSIAN] = "gaussian",
	[SKV_DIST_SINK] = "sink",
	[SKV_DIST_RAMP] = "ramp",
};

const char *skv_dist_name(skv_dist d)
{
	return (unsigned)d < SKV_NDISTS ? dist_names[d] : NULL;
}

int skv_dist_parse(skv_dist *d, const char *name)
{
	if (!d || !name)
		return SKV_EINVAL;
	for (unsigned i = 0; i < SKV_NDISTS; i++) {
		if (strcmp(name, dist_names[i]) == 0) {
			*d = (skv_dist)i;
			return SKV_OK;
		}
	}
	return SKV_EINVAL;
}

/* rows * cols doubles, or NULL when the count overflows size_t or malloc fails. */
static double *alloc_matrix(size_t rows, size_t cols)
{
	if (cols > SIZE_MAX / sizeof(double) / rows)
		return NULL;
	return malloc(rows * cols * sizeof(double));
}

/* Whether x rounded to f (as r) is a value f holds, not an overflow: a
 * finite result, and for a saturating format (sat) one that did not
 * saturate (|x| beyond the largest finite value mx is refused there, as the
 * same x overflows an IEEE format or becomes NaN in e4m3). */
static int fits_in(double r, double x, int sat, double mx) { return isfinite(r) && (!sat || fabs(x) <= mx); }

static int fits(double r, double x, skv_format f)
{
	return fits_in(r, x, skv_format_overflow(f) == SKV_OVERFLOW_SAT, skv_format_max(f));
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* The rounding of drawing, four values at a time: m[i] = RN_f(m[i]) for a
 * signed format f rounded on bits (skv_round_bits_i's normal-range path:
 * the same integer steps on each lane's pattern) or by the binary32
 * conversion (skv_round_row_i's). A group with a lane outside that case
 * (below 2^emin, above max, not finite) goes through the scalar rounding
 * and fits_in; every value of a vector group is a finite value of f no
 * larger than max in magnitude, so it fits. Returns 0 if a value did not. */
__attribute__((target("avx2"))) static int round_avx2(double *m, size_t n, skv_format f, const skv_fmt_i *r)
{
	const __m256i sgn = _mm256_set1_epi64x((long long)SKV_I_SIGN), mn = _mm256_set1_epi64x((long long)r->minbits - 1);
	const __m256i mx = _mm256_set1_epi64x((long long)skv_bits_i(r->max)), half = _mm256_set1_epi64x((long long)r->half);
	const __m256i lsb = _mm256_set1_epi64x((long long)r->lsb), keep = _mm256_set1_epi64x((long long)r->keep);
	const __m128i sh = _mm_cvtsi32_si128((int)r->sh);
	const int sat = r->ovf == SKV_OVERFLOW_SAT;
	int ok = 1;
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		const __m256i u = _mm256_loadu_si256((const __m256i *)(m + i)), sign = _mm256_and_si256(u, sgn);
		__m256i a = _mm256_xor_si256(u, sign); /* |x|'s pattern, below 2^63: signed compares are right */
		__m256i bad = _mm256_or_si256(_mm256_cmpgt_epi64(mn, a), _mm256_cmpgt_epi64(a, mx));
		if (r->kind == SKV_RND_HW32) {
			const __m256d y = _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_castsi256_pd(u)));
			a = _mm256_xor_si256(_mm256_castpd_si256(y), sign);
		} else {
			a = _mm256_add_epi64(a, _mm256_add_epi64(half, _mm256_and_si256(_mm256_srl_epi64(a, sh), lsb)));
			a = _mm256_and_si256(a, keep);
		}
		bad = _mm256_or_si256(bad, _mm256_cmpgt_epi64(a, mx));
		if (_mm256_testz_si256(bad, bad)) {
			_mm256_storeu_si256((__m256i *)(m + i), _mm256_or_si256(a, sign));
			continue;
		}
		for (size_t t = i; t < i + 4; t++) {
			const double x = m[t];
			m[t] = skv_round_i(f, x);
			ok &= fits_in(m[t], x, sat, r->max);
		}
	}
	for (; i < n; i++) {
		const double x = m[i];
		m[i] = skv_round_i(f, x);
		ok &= fits_in(m[i], x, sat, r->max);
	}
	return ok;
}
#endif

/* Fills m[0..count) with RN_f(RN64(mult * z)) for consecutive normal draws z;
 * the multiplication by 1.0 is exact, so K and V are RN_f(z). Returns 0 when
 * a value overflowed the format. */
static int draw(double *m, size_t count, double mult, skv_format f, skv_rng *r)
{
	const int sat = skv_format_overflow(f) == SKV_OVERFLOW_SAT;
	const double mx = skv_format_max(f);
	int ok = 1;
	skv_rng_normals(m, count, r); /* the values of count skv_rng_normal calls */
#if defined(__x86_64__) && defined(__GNUC__)
	/* mult = 1 (K and V): the product is exact, so the vectors round z */
	const skv_fmt_i *row = skv_fmt_i_of(f);
	if (mult == 1.0 && row && row->sgn && row->zero && (row->kind == SKV_RND_BITS || row->kind == SKV_RND_HW32) &&
	    __builtin_cpu_supports("avx2"))
		return round_avx2(m, count, f, row);
#endif
	for (size_t i = 0; i < count; i++) {
		const double x = mult * m[i];
		m[i] = skv_round_i(f, x);
		ok &= fits_in(m[i], x, sat, mx);
	}
	return ok;
}

/* K or V (side v) of t drawn in order: into the double array, or a chunk
 * of PACK_CHUNK values at a time through buf into the packed one (the same
 * stream: skv_rng_normals continues where it stopped). */
enum { PACK_CHUNK = 8192 };

static int draw_side(skv_packed *t, int v, skv_format f, skv_rng *r, double *buf)
{
	const size_t total = t->prob.n * t->prob.d, w = skv_store_bytes(t->store);
	if (t->store == SKV_STORE_F64)
		return draw(v ? t->prob.v : t->prob.k, total, 1.0, f, r);
	char *dst = v ? t->v : t->k;
	int ok = 1;
	for (size_t i0 = 0; i0 < total; i0 += PACK_CHUNK) {
		const size_t c = total - i0 < PACK_CHUNK ? total - i0 : PACK_CHUNK;
		ok &= draw(buf, c, 1.0, f, r);
		skv_pack_encode(dst + i0 * w, t->store, buf, c);
	}
	return ok;
}

/* Key row j of t from row[0..d) and back, in t's store (exact: row holds
 * values of the input format). */
static void put_key(skv_packed *t, size_t j, const double *row)
{
	const size_t d = t->prob.d;
	skv_pack_encode((char *)t->k + j * d * skv_store_bytes(t->store), t->store, row, d);
}

static void get_key(double *row, const skv_packed *t, size_t j)
{
	const skv_kv s = skv_kv_packed(t);
	skv_kv_rows(row, NULL, &s, j, j + 1);
}

/* |q_0|^2 in double, or 0 when it is zero or not finite (no direction). */
static double q0_norm2(const skv_problem *p)
{
	double qq = 0.0;
	for (size_t i = 0; i < p->d; i++)
		qq += p->q[i] * p->q[i];
	return qq > 0.0 && isfinite(qq) ? qq : 0.0;
}

/* The attention sink: key 0 becomes k0 = RN_f(q_0 * t) (q_0 is query row 0;
 * with nq > 1 the other rows see this key as an ordinary large-norm key) with
 *   t = (log(n) + 2) / (scale * |q_0|^2),
 * so before rounding scale * (q_0 . k0) = log(n) + 2 exactly: exp of that
 * score is e^2 n, against about n * exp(scale^2 |q|^2 / 2) for the n
 * Gaussian keys together, which puts most of the softmax mass on key 0.
 * Rounding k0 to the input format moves the score by about its unit roundoff
 * (relative), so it is "about" log(n) + 2. log is skv_rng_log, so the key has
 * the same bits on every machine. Returns 0 when q_0 is zero, when |q_0|^2
 * overflows, or when k0 overflows the format. row: d doubles of scratch. */
static int place_sink(skv_packed *pk, skv_format f, double *row)
{
	const skv_problem *p = &pk->prob;
	const double qq = q0_norm2(p);
	if (qq == 0.0)
		return 0;
	const double t = (skv_rng_log((double)p->n) + 2.0) / (p->scale * qq);
	int ok = isfinite(t) != 0;
	for (size_t i = 0; i < p->d; i++) {
		row[i] = skv_round(f, p->q[i] * t);
		ok &= fits(row[i], p->q[i] * t, f);
	}
	put_key(pk, 0, row);
	return ok;
}

/* The recency ramp: key j becomes RN_f(k_j + q_0 * t_j) with
 *   t_j = SKV_RAMP_HEIGHT * j / ((n - 1) scale |q_0|^2),
 * which adds SKV_RAMP_HEIGHT j / (n - 1) to query row 0's scaled score of
 * key j before rounding (the keys stay Gaussian across, the scores climb
 * along). Basic operations only, so the bits are the same everywhere.
 * Returns 0 when q_0 is zero or a key overflows the format. row: d doubles
 * of scratch (each key is read, moved and written back in t's store). */
static int place_ramp(skv_packed *pk, skv_format f, double *row)
{
	const skv_problem *p = &pk->prob;
	const double qq = q0_norm2(p);
	if (qq == 0.0)
		return 0;
	if (p->n < 2)
		return 1;
	const double c = SKV_RAMP_HEIGHT / ((double)(p->n - 1) * p->scale * qq);
	int ok = isfinite(c) != 0;
	for (size_t j = 0; j < p->n; j++) {
		double t = c * (double)j;
		get_key(row, pk, j);
		for (size_t i = 0; i < p->d; i++) {
			const double x = row[i] + p->q[i] * t;
			row[i] = skv_round(f, x);
			ok &= fits(row[i], x, f);
		}
		put_key(pk, j, row);
	}
	return ok;
}

/* The problem of skv_problem_init in store s: K and V as doubles (k and v
 * then alias prob.k and prob.v) or packed. */
static int alloc_in(skv_packed *t, size_t nq, size_t n, size_t d, skv_store s)
{
	const size_t w = skv_store_bytes(s);
	*t = (skv_packed){.prob = {.nq = nq, .n = n, .d = d, .scale = 1.0 / sqrt((double)d)}, .store = s};
	t->prob.q = alloc_matrix(nq, d);
	if (s == SKV_STORE_F64) {
		t->k = t->prob.k = alloc_matrix(n, d);
		t->v = t->prob.v = alloc_matrix(n, d);
	} else if (d <= SIZE_MAX / w / n) {
		t->k = malloc(n * d * w);
		t->v = malloc(n * d * w);
	}
	return t->prob.q && t->k && t->v;
}

static int init_in(skv_packed *p, size_t nq, size_t n, size_t d, skv_dist dist, double score_scale,
		   skv_format input, uint64_t seed, skv_store s)
{
	skv_packed t;
	double *buf = malloc((d > PACK_CHUNK ? d : PACK_CHUNK) * sizeof *buf);
	if (!alloc_in(&t, nq, n, d, s) || !buf) {
		free(buf);
		skv_packed_free(&t);
		return SKV_ENOMEM;
	}
	skv_rng r;
	skv_rng_seed(&r, seed);
	int ok = draw(t.prob.q, nq * d, score_scale, input, &r);
	ok &= draw_side(&t, 0, input, &r, buf);
	ok &= draw_side(&t, 1, input, &r, buf);
	if (ok && dist == SKV_DIST_SINK)
		ok = place_sink(&t, input, buf);
	if (ok && dist == SKV_DIST_RAMP)
		ok = place_ramp(&t, input, buf);
	free(buf);
	if (!ok) {
		skv_packed_free(&t);
		return SKV_ERANGE;
	}
	*p = t;
	return SKV_OK;
}

static int init_args_ok(const void *p, size_t nq, size_t n, size_t d, skv_dist dist, double score_scale,
			skv_format input)
{
	return p && nq != 0 && n != 0 && d != 0 && isfinite(score_scale) && score_scale > 0.0 &&
	       (unsigned)input < SKV_NFORMATS && !skv_format_is_scale(input) && (unsigned)dist < SKV_NDISTS;
}

int skv_problem_init(skv_problem *p, size_t nq, size_t n, size_t d, skv_dist dist,
		     double score_scale, skv_format input, uint64_t seed)
{
	if (!init_args_ok(p, nq, n, d, dist, score_scale, input))
		return SKV_EINVAL;
	skv_packed t;
	const int st = init_in(&t, nq, n, d, dist, score_scale, input, seed, SKV_STORE_F64);
	if (st == SKV_OK)
		*p = t.prob;
	return st;
}

int skv_packed_init(skv_packed *p, size_t nq, size_t n, size_t d, skv_dist dist, double score_scale,
		    skv_format input, uint64_t seed)
{
	if (!init_args_ok(p, nq, n, d, dist, score_scale, input))
		return SKV_EINVAL;
	return init_in(p, nq, n, d, dist, score_scale, input, seed, (skv_store)skv_store_of(input));
}

void skv_problem_free(skv_problem *p)
{
	if (!p)
		return;
	free(p->q);
	free(p->k);
	free(p->v);
	*p = (skv_problem){0};
}

void skv_packed_free(skv_packed *p)
{
	if (!p)
		return;
	if (p->store != SKV_STORE_F64) {
		free(p->k);
		free(p->v);
	}
	skv_problem_free(&p->prob); /* q, and K and V when they are doubles */
	*p = (skv_packed){.prob = {0}};
}
