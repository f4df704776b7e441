/* truth.c - exact attention of one query row over a key range (lib/truth_mpfr.c computes it). */
#include <math.h>

#include "skv.h"
#include "truth_internal.h"

enum { TRUTH_PREC_MAX = 1 << 16 };

static int all_finite(const double *x, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

int skv_truth_range(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi,
		    long prec)
{
	if (!out || !lse || !p || !p->q || !p->k || !p->v || p->d == 0 || row >= p->nq || lo > hi ||
	    hi > p->n || prec < 64 || prec > TRUTH_PREC_MAX || !isfinite(p->scale))
		return SKV_EINVAL;
	const size_t d = p->d, m = hi - lo;
	if (!all_finite(p->q + row * d, d) || !all_finite(p->k + lo * d, m * d) ||
	    !all_finite(p->v + lo * d, m * d))
		return SKV_EINVAL;
	if (m == 0) {
		for (size_t i = 0; i < d; i++)
			out[i] = (skv_dd){0.0, 0.0};
		*lse = (skv_dd){-INFINITY, 0.0};
		return SKV_OK;
	}
	return skv_truth_mpfr(out, lse, p, row, lo, hi, prec);
}
