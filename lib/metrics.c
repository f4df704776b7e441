/* metrics.c - errors of computed values against a double-double ground truth. */
#include <math.h>

#include "skv.h"

/*
 * The truth is t = hi + lo + tail with hi = RN(t), lo = RN(t - hi), |tail| <=
 * 2^-106 |t| or so. The error is taken as RN((c - hi) - lo):
 * - c - hi is exact (Sterbenz's lemma) when hi / 2 <= c <= 2 hi, which is
 *   every case where c agrees with the truth to better than a factor of 2;
 *   it is exact as well whenever the difference is subnormal. Then the only
 *   rounding is the last one, so the result is |c - t| to a relative 2^-53
 *   plus the truth's own tail: the c == hi case correctly reports |lo|.
 * - Otherwise (c off by more than a factor of 2, or of the other sign)
 *   |c - hi| >= |hi| / 2 and its rounding changes the result by a relative
 *   2^-53, while |lo| <= 2^-53 |hi| moves it by at most 2^-52 of itself: an
 *   error of 50% or more reported to within a few fp64 ulps of itself.
 * - c - hi can overflow to +-inf only when |c - t| really exceeds DBL_MAX.
 */
/* 1 if h (finite, nonzero) is a midpoint of f's grid with the exponent
 * range unbounded above: an odd multiple of half the spacing q of h's
 * binade (clamped to [emin, emax] as skv_ulp does, so the subnormal grid and
 * the grid of the top binade continue past max). That covers the midpoints
 * between neighbours, the one below a power of two (2^(e+1) - q/2 lies in
 * binade e), and the overflow threshold: max + q/2 for every format (fp16's
 * 65520, e4m3's 464). |h| / (q/2) is exact: q/2 >= 2^(emin - p) is a power of
 * two well inside the double range for every format with p < 53. */
static int is_midpoint(skv_format f, double h)
{
	const double k = fabs(h) / (0.5 * skv_ulp(f, h));
	return k == floor(k) && fmod(k, 2.0) == 1.0;
}

/* RN_f(hi) is RN_f(hi + lo) unless hi is itself a midpoint of f: the
 * midpoints of every format with p < 53 are doubles, and |lo| <= ulp(hi)/2
 * keeps t and hi on the same side of every other one. At a midpoint the tie
 * is not a tie for t: lo decides, so round the next double toward lo (it
 * lies strictly between hi and the neighbour on lo's side, whose rounding
 * is t's). This holds whatever f's overflow policy: at the threshold the
 * tie goes to infinity (IEEE, the even 2^(emax+1)) or to max (e4m3, the
 * even 448), and lo picks max or the policy's overflow value (inf, NaN or
 * max) instead. fp64 has no midpoint that is a double: hi is its value. */
double skv_dd_round(skv_format f, skv_dd t)
{
	double r = skv_round(f, t.hi);
	if (t.lo == 0.0 || r == t.hi || !isfinite(t.hi) || t.hi == 0.0 || !is_midpoint(f, t.hi))
		return r;
	return skv_round(f, nextafter(t.hi, t.lo > 0 ? INFINITY : -INFINITY));
}

double skv_abs_err(double c, skv_dd t)
{
	if (isnan(c) || isnan(t.hi) || isnan(t.lo))
		return NAN;
	if (isinf(c) || isinf(t.hi))
		return c == t.hi ? 0.0 : INFINITY;
	if (isinf(t.lo)) /* not a double-double of a finite value */
		return NAN;
	return fabs((c - t.hi) - t.lo);
}

/* The spacing of format f at the truth t = hi + lo. skv_ulp(f, hi) is the
 * spacing of hi's binade; t lies in the binade below when |hi| is a power of
 * two and lo points towards zero (t = 1 - 2^-60 has hi = 1 but the spacing of
 * [1/2, 1)), and nextafter(|hi|, 0) is then in that binade. */
static double ulp_at(skv_format f, skv_dd t)
{
	double a = fabs(t.hi);
	if (a != 0 && isfinite(a) && t.lo != 0 && (signbit(t.lo) != signbit(t.hi))) {
		int e;
		if (frexp(a, &e) == 0.5)
			a = nextafter(a, 0.0);
	}
	return skv_ulp(f, a);
}

/* Euclidean norm without overflow or underflow, as scale^2 * ssq with
 * scale = max |x_i| (Hammarling's scaling, LAPACK's classic dlassq);
 * infinities are counted apart. */
typedef struct {
	double scale, ssq;
	int inf;
} norm_acc;

static void norm_add(norm_acc *a, double x)
{
	const double ax = fabs(x);
	if (ax == 0)
		return;
	if (isinf(ax)) {
		a->inf = 1;
		return;
	}
	if (a->scale < ax) {
		const double r = a->scale / ax;
		a->ssq = 1.0 + a->ssq * r * r;
		a->scale = ax;
	} else {
		const double r = ax / a->scale;
		a->ssq += r * r;
	}
}

/* ||e|| / ||t||, with ||t|| = 0 giving 0 for e = 0 and +inf otherwise, an
 * infinite error giving +inf and an infinite truth with a finite error 0.
 * The ratio of the scales is formed on their exponents, so it neither
 * overflows nor underflows unless the quotient itself does. */
static double norm_ratio(const norm_acc *e, const norm_acc *t)
{
	if (e->inf)
		return INFINITY;
	if (e->scale == 0)
		return 0.0;
	if (t->inf)
		return 0.0;
	if (t->scale == 0)
		return INFINITY;
	int ee, et;
	const double fe = frexp(e->scale, &ee), ft = frexp(t->scale, &et);
	return ldexp(fe / ft * sqrt(e->ssq / t->ssq), ee - et);
}

double skv_norm2(const double *x, size_t n)
{
	norm_acc a = {0.0, 0.0, 0};
	for (size_t i = 0; i < n; i++) {
		if (isnan(x[i]))
			return NAN;
		norm_add(&a, x[i]);
	}
	return a.inf ? INFINITY : a.scale * sqrt(a.ssq);
}

/* Whether |a| > |b| for double-doubles: |hi| first (|lo| when hi is 0, as
 * below), then lo taken towards or away from zero (1 - 2^-60 lies below
 * 1 + 0, so the spacing of the larger is that of its true binade). */
static int dd_mag_above(skv_dd a, skv_dd b)
{
	const double ha = a.hi != 0 ? fabs(a.hi) : fabs(a.lo), hb = b.hi != 0 ? fabs(b.hi) : fabs(b.lo);
	if (ha != hb)
		return ha > hb;
	const double la = signbit(a.hi) ? -a.lo : a.lo, lb = signbit(b.hi) ? -b.lo : b.lo;
	return a.hi != 0 && b.hi != 0 && la > lb;
}

int skv_errors_compute(skv_errors *e, const double *computed, const skv_dd *truth, size_t n,
		       skv_format ulp_format)
{
	if (!e || !computed || !truth || n == 0 || (unsigned)ulp_format >= SKV_NFORMATS)
		return SKV_EINVAL;
	skv_errors r = {0.0, 0.0, 0.0, 0.0, 0.0};
	norm_acc ne = {0.0, 0.0, 0}, nt = {0.0, 0.0, 0};
	skv_dd tmax = truth[0]; /* the truth of largest magnitude */
	for (size_t i = 0; i < n; i++) {
		const skv_dd t = truth[i];
		const double err = skv_abs_err(computed[i], t);
		if (isnan(err)) {
			*e = (skv_errors){NAN, NAN, NAN, NAN, NAN};
			return SKV_OK;
		}
		if (dd_mag_above(t, tmax))
			tmax = t;
		/* |t| to within 2^-53 of itself; hi == 0 with lo != 0 is not a
		 * rounded double-double, but |lo| is then the right magnitude. */
		const double tmag = t.hi != 0 ? fabs(t.hi) : fabs(t.lo);
		double rel;
		if (tmag == 0 || isinf(tmag)) /* truth exactly 0, or infinite */
			rel = err == 0 ? 0.0 : INFINITY;
		else
			rel = err / tmag;
		const double ulps = err / ulp_at(ulp_format, t);
		r.max_abs = fmax(r.max_abs, err);
		r.max_rel = fmax(r.max_rel, rel);
		r.ulp = fmax(r.ulp, ulps);
		norm_add(&ne, err);
		norm_add(&nt, tmag);
	}
	r.norm_rel = norm_ratio(&ne, &nt);
	/* One spacing for every element, that of the largest truth: the ulp of
	 * the output's scale, which a near-zero element cannot shrink. The
	 * spacing is a power of two, so the division is exact while the
	 * quotient is a normal double. For the element j of the largest error,
	 * |t_j| <= max |t_i| gives ulp(t_j) <= ulp(max |t_i|): norm_ulp <= ulp. */
	r.norm_ulp = r.max_abs / (tmax.hi != 0 ? ulp_at(ulp_format, tmax) : skv_ulp(ulp_format, tmax.lo));
	*e = r;
	return SKV_OK;
}
