/* problem.c - seeded random attention problems (q, K, V rounded to the input format). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_inline.h"
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

/* Fills m[0..count) with RN_f(RN64(mult * z)) for consecutive normal draws z;
 * the multiplication by 1.0 is exact, so K and V are RN_f(z). Returns 0 when
 * a value overflowed the format. */
static int draw(double *m, size_t count, double mult, skv_format f, skv_rng *r)
{
	const int sat = skv_format_overflow(f) == SKV_OVERFLOW_SAT;
	const double mx = skv_format_max(f);
	int ok = 1;
	skv_rng_normals(m, count, r); /* the values of count skv_rng_normal calls */
	for (size_t i = 0; i < count; i++) {
		const double x = mult * m[i];
		m[i] = skv_round_i(f, x);
		ok &= fits_in(m[i], x, sat, mx);
	}
	return ok;
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
 * overflows, or when k0 overflows the format. */
static int place_sink(skv_problem *p, skv_format f)
{
	double qq = 0.0;
	for (size_t i = 0; i < p->d; i++)
		qq += p->q[i] * p->q[i];
	if (!(qq > 0.0) || !isfinite(qq))
		return 0;
	const double t = (skv_rng_log((double)p->n) + 2.0) / (p->scale * qq);
	int ok = isfinite(t) != 0;
	for (size_t i = 0; i < p->d; i++) {
		p->k[i] = skv_round(f, p->q[i] * t);
		ok &= fits(p->k[i], p->q[i] * t, f);
	}
	return ok;
}

/* The recency ramp: key j becomes RN_f(k_j + q_0 * t_j) with
 *   t_j = SKV_RAMP_HEIGHT * j / ((n - 1) scale |q_0|^2),
 * which adds SKV_RAMP_HEIGHT j / (n - 1) to query row 0's scaled score of
 * key j before rounding (the keys stay Gaussian across, the scores climb
 * along). Basic operations only, so the bits are the same everywhere.
 * Returns 0 when q_0 is zero or a key overflows the format. */
static int place_ramp(skv_problem *p, skv_format f)
{
	double qq = 0.0;
	for (size_t i = 0; i < p->d; i++)
		qq += p->q[i] * p->q[i];
	if (!(qq > 0.0) || !isfinite(qq))
		return 0;
	if (p->n < 2)
		return 1;
	const double c = SKV_RAMP_HEIGHT / ((double)(p->n - 1) * p->scale * qq);
	int ok = isfinite(c) != 0;
	for (size_t j = 0; j < p->n; j++) {
		double t = c * (double)j;
		for (size_t i = 0; i < p->d; i++) {
			double *kj = &p->k[j * p->d + i];
			const double x = *kj + p->q[i] * t;
			*kj = skv_round(f, x);
			ok &= fits(*kj, x, f);
		}
	}
	return ok;
}

int skv_problem_init(skv_problem *p, size_t nq, size_t n, size_t d, skv_dist dist,
		     double score_scale, skv_format input, uint64_t seed)
{
	if (!p || nq == 0 || n == 0 || d == 0 || !isfinite(score_scale) || !(score_scale > 0.0) ||
	    (unsigned)input >= SKV_NFORMATS || skv_format_is_scale(input) || (unsigned)dist >= SKV_NDISTS)
		return SKV_EINVAL;
	skv_problem t = {.nq = nq, .n = n, .d = d, .scale = 1.0 / sqrt((double)d)};
	t.q = alloc_matrix(nq, d);
	t.k = alloc_matrix(n, d);
	t.v = alloc_matrix(n, d);
	if (!t.q || !t.k || !t.v) {
		skv_problem_free(&t);
		return SKV_ENOMEM;
	}
	skv_rng r;
	skv_rng_seed(&r, seed);
	int ok = draw(t.q, nq * d, score_scale, input, &r);
	ok &= draw(t.k, n * d, 1.0, input, &r);
	ok &= draw(t.v, n * d, 1.0, input, &r);
	if (ok && dist == SKV_DIST_SINK)
		ok = place_sink(&t, input);
	if (ok && dist == SKV_DIST_RAMP)
		ok = place_ramp(&t, input);
	if (!ok) {
		skv_problem_free(&t);
		return SKV_ERANGE;
	}
	*p = t;
	return SKV_OK;
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
