/* truth.c - exact attention of one query row over a key range: the certified fast path, MPFR behind it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "skv.h"
#include "truth_internal.h"

/*
 * Two paths compute the same thing, L = log sum_j exp(s_j) and out =
 * sum_j exp(s_j - L) v_j for s_j = scale (q . k_j):
 *
 * - prec <= SKV_TRUTH_PREC: lib/truth_fast.c, in error-free double
 *   arithmetic (TwoSum, TwoProd by fma, a 128-bit fixed-point exp, an exact
 *   accumulator for the last steps), streamed over the keys. It derives a
 *   bound on its own error as it goes and returns its result only when
 *   ||out - exact||_2 <= 2^-100 ||exact||_2 and |lse - L| <= 2^-104 (1 +
 *   |L|) are proven (the derivation is in that file's header). Otherwise
 *   (strong cancellation in V, scores beyond ~2^40, values near the
 *   overflow threshold, more than 2^32 keys) the MPFR path runs at 128
 *   bits, then at 256, 512, 1024 until its own bound 2^(1-P) (5 + 4 log m)
 *   ||V|| (lib/truth_mpfr.c) is within 2^-100 of the result's norm; past
 *   1024 bits (an output below about 2^-900 ||V||, a cancellation to the
 *   last of some 900 bits) the 1024-bit result stands with that absolute
 *   bound. A request for fewer than 128 bits gets the same certified
 *   answer: prec is a floor on the accuracy asked for. Its weights carry
 *   about 2^-122 relative error against 128-bit MPFR's 2^-127 (1 + 2 |d_j|),
 *   and both round the result to a double-double (2^-106), which dominates.
 * - prec > SKV_TRUTH_PREC: lib/truth_mpfr.c at prec bits, as before (the
 *   tests' referee runs at 256 bits).
 *
 * Both paths are deterministic (the fast path uses only correctly rounded
 * IEEE operations and integers, MPFR rounds correctly) and keep no state
 * between calls: skv_truth_range may be called from several threads at
 * once. The fast path does not touch MPFR at all; the MPFR path sets its
 * exponent range for the call and restores it and the flags, which are
 * per-thread in a thread-safe MPFR build (mpfr_buildopt_tls_p).
 */

enum { TRUTH_PREC_MAX = 1 << 16, FALLBACK_PREC_MAX = 1024 };

static int all_finite(const double *x, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* An upper bound on ||V||_2, V_i = max_j |v_ji| over the range (the norm in
 * double, rounded up generously: it only chooses a precision). */
static double v_norm(const skv_problem *p, size_t lo, size_t hi)
{
	const size_t d = p->d;
	double mx = 0, s = 0;
	for (size_t j = lo * d; j < hi * d; j++)
		mx = fmax(mx, fabs(p->v[j]));
	if (mx == 0)
		return 0;
	for (size_t i = 0; i < d; i++) {
		double vi = 0;
		for (size_t j = lo; j < hi; j++)
			vi = fmax(vi, fabs(p->v[j * d + i]));
		vi /= mx;
		s += vi * vi;
	}
	return sqrt(s) * mx * (1 + 0x1p-30);
}

/* The MPFR truth at the least precision from 128 (doubling) whose bound is
 * within 2^-100 of the result's norm; see the header. */
static int truth_fallback(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi)
{
	const size_t d = p->d, m = hi - lo;
	skv_dd *tmp = malloc(d * sizeof *tmp), l;
	if (!tmp)
		return SKV_ENOMEM;
	const double vn = v_norm(p, lo, hi);
	double bits = 0; /* 5 + 4 ln m <= 5 + 3 bitlength(m) */
	for (size_t x = m; x; x >>= 1)
		bits++;
	int st;
	for (long prec = SKV_TRUTH_PREC;; prec *= 2) {
		if ((st = skv_truth_mpfr(tmp, &l, p, row, lo, hi, prec)) != SKV_OK)
			break;
		double on = 0;
		for (size_t i = 0; i < d; i++)
			on = fmax(on, fabs(tmp[i].hi)); /* a lower bound on ||out||_2 */
		const double bound = ldexp((5 + 3 * bits) * vn, 1 - (int)prec);
		if (prec >= FALLBACK_PREC_MAX || bound <= 0x1p-100 * (on * (1 - 0x1p-50) - bound))
			break;
	}
	if (st == SKV_OK) {
		memcpy(out, tmp, d * sizeof *out);
		*lse = l;
	}
	free(tmp);
	return st;
}

/* The inputs of the range checked, then the MPFR path (prec above
 * SKV_TRUTH_PREC) or the fallback. */
static int truth_slow(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi,
		      long prec)
{
	const size_t d = p->d, m = hi - lo;
	if (!all_finite(p->q + row * d, d) || !all_finite(p->k + lo * d, m * d) ||
	    !all_finite(p->v + lo * d, m * d))
		return SKV_EINVAL;
	return prec > SKV_TRUTH_PREC ? skv_truth_mpfr(out, lse, p, row, lo, hi, prec)
				     : truth_fallback(out, lse, p, row, lo, hi);
}

/* truth_slow on a packed problem: its range decoded into a double problem
 * of one query row (the MPFR paths read only q's row, the range's keys,
 * scale and d, so the result is the same). */
static int truth_slow_packed(skv_dd *out, skv_dd *lse, const skv_kv *s, size_t row, size_t lo, size_t hi,
			     long prec)
{
	const size_t d = s->p->d, m = hi - lo;
	if (m > SIZE_MAX / sizeof(double) / d)
		return SKV_ENOMEM;
	double *k = malloc(m * d * sizeof *k), *v = malloc(m * d * sizeof *v);
	int st = SKV_ENOMEM;
	if (k && v) {
		skv_kv_rows(k, v, s, lo, hi);
		const skv_problem t = {.nq = 1, .n = m, .d = d, .q = s->p->q + row * d, .k = k, .v = v,
				       .scale = s->p->scale};
		st = truth_slow(out, lse, &t, 0, 0, m, prec);
	}
	free(k);
	free(v);
	return st;
}

static int truth_kv(skv_dd *out, skv_dd *lse, const skv_kv *s, size_t row, size_t lo, size_t hi, long prec)
{
	const skv_problem *p = s->p;
	if (!out || !lse || !skv_kv_ok(s) || !p->q || p->d == 0 || row >= p->nq || lo > hi || hi > p->n ||
	    prec < 64 || prec > TRUTH_PREC_MAX || !isfinite(p->scale))
		return SKV_EINVAL;
	const size_t d = p->d;
	if (hi == lo) {
		if (!all_finite(p->q + row * d, d))
			return SKV_EINVAL;
		for (size_t i = 0; i < d; i++)
			out[i] = (skv_dd){0.0, 0.0};
		*lse = (skv_dd){-INFINITY, 0.0};
		return SKV_OK;
	}
	/* The fast path declines on any value that is not finite (see
	 * lib/truth_fast.c), so the inputs are scanned only after it did. */
	if (prec <= SKV_TRUTH_PREC) {
		skv_truth_cert cert;
		const int st = skv_truth_fast_kv(out, lse, &cert, s, row, lo, hi, SKV_TRUTH_ISA_AUTO);
		if (st != SKV_TRUTH_DECLINED)
			return st;
	}
	return s->store == SKV_STORE_F64 ? truth_slow(out, lse, p, row, lo, hi, prec)
					 : truth_slow_packed(out, lse, s, row, lo, hi, prec);
}

int skv_truth_range(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi,
		    long prec)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_plain(p);
	return truth_kv(out, lse, &s, row, lo, hi, prec);
}

int skv_truth_range_packed(skv_dd *out, skv_dd *lse, const skv_packed *p, size_t row, size_t lo, size_t hi,
			   long prec)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_packed(p);
	return truth_kv(out, lse, &s, row, lo, hi, prec);
}

int skv_truth_fast(skv_dd *out, skv_dd *lse, skv_truth_cert *cert, const skv_problem *p, size_t row,
		   size_t lo, size_t hi, skv_truth_isa isa)
{
	const skv_kv s = skv_kv_plain(p);
	return skv_truth_fast_kv(out, lse, cert, &s, row, lo, hi, isa);
}
