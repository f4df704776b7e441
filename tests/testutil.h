/* testutil.h - shared test helpers: problems with their MPFR truth, error checks that print hex floats and file:line. */
#ifndef SKV_TESTUTIL_H
#define SKV_TESTUTIL_H
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "skv.h"

/* Fails with both values as hex floats (so the case replays) unless a <= b. */
#define CHECK_LE(what, a, b)                                                                          \
	do {                                                                                          \
		double a_ = (a), b_ = (b);                                                            \
		if (!(a_ <= b_))                                                                      \
			fail_msg("%s:%d: %s: %a (%.3g) > bound %a (%.3g)", __FILE__, __LINE__, (what), \
				 a_, a_, b_, b_);                                                     \
	} while (0)

#define CHECK_GE(what, a, b)                                                                          \
	do {                                                                                          \
		double a_ = (a), b_ = (b);                                                            \
		if (!(a_ >= b_))                                                                      \
			fail_msg("%s:%d: %s: %a (%.3g) < bound %a (%.3g)", __FILE__, __LINE__, (what), \
				 a_, a_, b_, b_);                                                     \
	} while (0)

#define CHECK_BITS(what, got, want)                                                                   \
	do {                                                                                          \
		double g_ = (got), w_ = (want);                                                       \
		if (memcmp(&g_, &w_, sizeof g_) != 0)                                                 \
			fail_msg("%s:%d: %s: got %a, want %a", __FILE__, __LINE__, (what), g_, w_);     \
	} while (0)

#define CHECK_OK(call)                                                                                \
	do {                                                                                          \
		int st_ = (call);                                                                     \
		if (st_ != SKV_OK)                                                                    \
			fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #call, st_,          \
				 skv_strerror(st_));                                                  \
	} while (0)

/* A problem and the MPFR truth of each query row over all keys (or, when
 * causal, over keys 0..row). */
typedef struct {
	skv_problem p;
	skv_dd *out; /* [nq][d] */
	skv_dd *lse; /* [nq] */
} tcase;

static inline void tcase_init(tcase *t, size_t nq, size_t n, size_t d, skv_dist dist, double sscale,
			      skv_format in, uint64_t seed, int causal)
{
	CHECK_OK(skv_problem_init(&t->p, nq, n, d, dist, sscale, in, seed));
	t->out = malloc(nq * d * sizeof *t->out);
	t->lse = malloc(nq * sizeof *t->lse);
	assert_non_null(t->out);
	assert_non_null(t->lse);
	for (size_t r = 0; r < nq; r++)
		CHECK_OK(skv_truth_range(t->out + r * d, t->lse + r, &t->p, r, 0, causal ? r + 1 : n,
					 SKV_TRUTH_PREC));
}

static inline void tcase_free(tcase *t)
{
	skv_problem_free(&t->p);
	free(t->out);
	free(t->lse);
}

/* Normwise relative error of computed[0..n) against truth. */
static inline double norm_err(const double *c, const skv_dd *t, size_t n, skv_format f)
{
	skv_errors e;
	CHECK_OK(skv_errors_compute(&e, c, t, n, f));
	return e.norm_rel;
}

/* t + x as a double-double (Knuth's TwoSum keeps the rounding error). */
static inline skv_dd dd_add(skv_dd t, double x)
{
	double s = t.hi + x, bb = s - t.hi, err = (t.hi - (s - bb)) + (x - bb);
	skv_dd r = {s, t.lo + err};
	double h = r.hi + r.lo;
	r.lo = r.lo - (h - r.hi);
	r.hi = h;
	return r;
}

/* Splits of one row through the kernel, stored and merged. Returns the
 * normwise error against the row's truth; *lse_err gets |lse - truth|. */
static inline double run_merge(const tcase *t, size_t row, const size_t *bounds, size_t S, size_t block,
			       double offset, const skv_config *cfg, const skv_merge_spec *spec,
			       double *lse_err, double *out)
{
	skv_partials sp;
	size_t d = t->p.d;
	CHECK_OK(skv_partials_init(&sp, S, d));
	CHECK_OK(skv_split_kernel(&sp, &t->p, row, bounds, S, block, offset, cfg));
	CHECK_OK(skv_partials_store(&sp, &sp, cfg));
	double *o = out ? out : malloc(d * sizeof *o), lse;
	CHECK_OK(skv_merge_run(o, &lse, &sp, spec, cfg));
	double e = norm_err(o, t->out + row * d, d, cfg->output);
	if (lse_err) {
		*lse_err = skv_abs_err(lse, dd_add(t->lse[row], offset));
	}
	if (!out)
		free(o);
	skv_partials_free(&sp);
	return e;
}
#endif
