/* truth_mpfr.c - the ground truth with MPFR at any precision: the referee and the fast path's fallback. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "skv.h"
#include "truth_internal.h"
#include "truth_xacc.h"

/*
 * What is computed. For the keys j of [lo, hi), with s_j = scale (q . k_j):
 *   r       a reference key whose score is (about) the largest;
 *   D_j     = q . k_j - q . k_r, exactly, in a fixed-point integer
 *             accumulator (every product of two doubles is an integer times
 *             a power of two; see lib/truth_xacc.h): no cancellation, no rounding;
 *   d_j     = RN(scale * RN(D_j));
 *   w_j     = RN(exp(d_j))                         (w_r = 1 exactly);
 *   W       = RN(sum_j w_j)                        (mpfr_sum: one rounding);
 *   L       = RN(RN(scale * RN(q . k_r)) + RN(log W));
 *   N_i     = RN(sum_j w_j v_ji)   (each w_j v_ji exact, at one limb more
 *             than w_j, the sum rounded once by mpfr_sum);
 *   out_i   = RN(N_i / W).
 * RN is rounding to nearest at P = prec bits, u = 2^-P.
 *
 * Error bound (first order in u; m = hi - lo keys, p_j = w_j / W the softmax,
 * V_i = max_j |v_ji|). d_j carries two roundings, so |delta d_j| <= 2u |d_j|,
 * and w_j has relative error e_j <= u (1 + 2 |d_j|). Measuring the scores from
 * the top key rather than from 0 is what makes the bound independent of the
 * score magnitude: sum_j p_j |d_j| = H(p) - log W <= log m (entropy bound,
 * W >= 1 when r is the top key), so
 *   |W error| / W        <= u (2 + 2 log m),
 *   |N_i error| / W      <= u (1 + 2 log m) V_i + u |out_i|,
 *   |out_i error|        <= u (5 + 4 log m) V_i,
 *   |L error|            <= u (2 |s_r| + 3 + 3 log m + |L|).
 * r is the key with the largest double-precision score, so the true top d_j
 * is at most a few fp64 ulps of the scores above 0, which adds a negligible
 * term to log m.
 *
 * How the bound is used. lib/truth.c serves precisions above
 * SKV_TRUTH_PREC with this path as it is (tests ask 256 bits of it as the
 * referee) and falls back on it when the fast path cannot certify its
 * result: it then doubles P from 128 until 2^(1-P) (5 + 4 log m) ||V||
 * (twice the bound above, normwise, with ||V|| = sqrt(sum_i V_i^2), which
 * covers the second-order terms) is within 2^-100 of the output's norm.
 * With m = 2^20 keys the output bound at 128 bits is 61 u < 2^-122 V_i;
 * tests/test_truth.c checks it at 64, 80 and 96 bits, where the error shows
 * through the double-double result.
 *
 * Cost. Per key: d integer products into the accumulator, a handful of
 * limbs to MPFR, one mpfr_mul_d, one mpfr_exp (the largest part). Per output
 * element: m exact products and one mpfr_sum. Every mpfr_t lives in one
 * scratch block allocated once per call (MPFR's custom interface); the loops
 * allocate nothing. It is about 590 instructions per key and dimension at 128
 * bits (n = 16384, d = 128; 18x the fast path) and it holds n weights and
 * products (~112 bytes per key), read column by column, so it grows a little
 * faster than n (../shared/notes/performance-audit.md: 7.7 us per key at 16k
 * keys, 13.2 at 1M). tests/bench_truth.c measures it against the fast path.
 */

/* With 64-bit limbs (every GMP build skv targets) doubles are loaded into
 * MPFR values and w_j v_ji is formed by writing the significand limbs
 * directly through MPFR's custom interface: 3-4 ns instead of the 30-60 ns
 * of mpfr_set_d / mpfr_mul_d, which would dominate the cost. Elsewhere the
 * portable MPFR calls do the same, exactly, more slowly. */
#if GMP_NUMB_BITS == 64 && GMP_NAIL_BITS == 0 && DBL_MANT_DIG == 53
#define LIMB64 1
#else
#define LIMB64 0
#endif

/* The accumulator's digits are below 2^33 in magnitude: one limb is plenty. */
#define TERM_PREC 64

/* A double as (-1)^neg m 2^e, m < 2^53 an integer. */
typedef struct {
	uint64_t m;
	int e, neg;
} dint;

/* ------------------------------------------------------------ scratch */

enum { S_DOTR, S_SREF, S_W, S_LOGW, S_L, S_N, S_OUT, S_REM, S_BEST, S_CUR, N_SCALARS };

typedef struct {
	size_t n, d;
	dint *q;      /* [d] the query row, decomposed */
	skv_xacc acc, ref;   /* the current key; the reference key, negated */
	mpfr_t term[XA_NCHUNK]; /* an accumulator's chunks, TERM_PREC */
	mpfr_ptr tp[XA_NCHUNK];
	mpfr_t *w;    /* [n] weights, prec */
	mpfr_t *prod; /* [n] w_j v_ji, prod_prec(prec) bits (exact) */
	mpfr_ptr *pp; /* [n] the nonzero products */
	mpfr_t x[N_SCALARS]; /* prec */
	mp_limb_t *limbs;
} scratch;

static size_t nlimbs(mpfr_prec_t prec)
{
	return (mpfr_custom_get_size(prec) + sizeof(mp_limb_t) - 1) / sizeof(mp_limb_t);
}

/* Precision holding w v exactly for a prec-bit w and a double v: prec + 53
 * bits; with LIMB64 one limb more than w has, as mul_exact writes. */
static mpfr_prec_t prod_prec(mpfr_prec_t prec)
{
	return LIMB64 ? (mpfr_prec_t)((nlimbs(prec) + 1) * GMP_NUMB_BITS) : prec + DBL_MANT_DIG;
}

/* a * b, or 0 when it overflows size_t (no size here is legitimately 0). */
static size_t mul_size(size_t a, size_t b)
{
	return a != 0 && b > SIZE_MAX / a ? 0 : a * b;
}

static void scratch_free(scratch *s)
{
	free(s->q);
	free(s->w);
	free(s->prod);
	free(s->pp);
	free(s->limbs);
	free(s);
}

/* Points count values of precision prec at consecutive pieces of *mem. */
static void place(mpfr_t *v, size_t count, mpfr_prec_t prec, mp_limb_t **mem)
{
	const size_t step = nlimbs(prec);
	for (size_t i = 0; i < count; i++, *mem += step)
		mpfr_custom_init_set(v[i], MPFR_ZERO_KIND, 0, prec, *mem);
}

static scratch *scratch_new(size_t n, size_t d, mpfr_prec_t prec)
{
	const size_t lt = nlimbs(TERM_PREC), lw = nlimbs(prec), lp = nlimbs(prod_prec(prec));
	const size_t per_key = mul_size(n, lw + lp);
	const size_t total = per_key + XA_NCHUNK * lt + N_SCALARS * lw;
	if (!per_key || total < per_key || !mul_size(total, sizeof(mp_limb_t)) ||
	    !mul_size(n, sizeof(mpfr_t)) || !mul_size(d, sizeof(dint)))
		return NULL;
	scratch *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->n = n;
	s->d = d;
	s->q = malloc(d * sizeof *s->q);
	s->w = malloc(n * sizeof(mpfr_t));
	s->prod = malloc(n * sizeof(mpfr_t));
	s->pp = malloc(n * sizeof(mpfr_ptr));
	s->limbs = malloc(total * sizeof(mp_limb_t));
	if (!s->q || !s->w || !s->prod || !s->pp || !s->limbs) {
		scratch_free(s);
		return NULL;
	}
	for (int k = 0; k < XA_NCHUNK; k++)
		s->acc.c[k] = s->ref.c[k] = 0;
	s->acc.lo = s->ref.lo = XA_NCHUNK;
	s->acc.hi = s->ref.hi = -1;
	mp_limb_t *mem = s->limbs;
	place(s->w, n, prec, &mem);
	place(s->prod, n, prod_prec(prec), &mem);
	place(s->term, XA_NCHUNK, TERM_PREC, &mem);
	place(s->x, N_SCALARS, prec, &mem);
	return s;
}

/* ------------------------------------------------- MPFR from doubles */

#if LIMB64
/* |x| = M 2^(e - 64) with M in [2^63, 2^64): MPFR's significand-in-[1/2, 1)
 * convention with one full limb, from the exact x = Mi 2^ei of dbl_int. */
static mp_limb_t dbl_limb(double x, mpfr_exp_t *e)
{
	int ei;
	uint64_t m = skv_dbl_int(x, &ei);
	int sh = 0;
	while (!(m >> (GMP_NUMB_BITS - 1))) {
		m <<= 1;
		sh++;
	}
	*e = (mpfr_exp_t)ei + GMP_NUMB_BITS - sh;
	return (mp_limb_t)m;
}
#endif

/* t = x 2^sh exactly, x a nonzero double, t of TERM_PREC bits. */
static void set_term(mpfr_ptr t, double x, long sh)
{
#if LIMB64
	mp_limb_t *sig = mpfr_custom_get_significand(t);
	mpfr_exp_t e;
	sig[0] = dbl_limb(x, &e);
	mpfr_custom_init_set(t, x < 0 ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, e + sh, TERM_PREC, sig);
#else
	mpfr_set_d(t, x, MPFR_RNDN);
	mpfr_mul_2si(t, t, sh, MPFR_RNDN);
#endif
}

/* r = RN(the accumulator's value) at r's precision: its chunks, normalized
 * to exact doubles, summed once by mpfr_sum. */
static void xacc_get(mpfr_ptr r, skv_xacc *a, scratch *s)
{
	skv_xacc_norm(a);
	unsigned long c = 0;
	for (int k = a->lo; k <= a->hi; k++) {
		if (a->c[k] != 0) {
			set_term(s->term[c], (double)a->c[k], XA_BASE + (long)k * XA_RADIX_BITS);
			s->tp[c] = s->term[c];
			c++;
		}
	}
	mpfr_sum(r, s->tp, c, MPFR_RNDN);
}

/* r = w v exactly, for w > 0 of precision prec (nw limbs) and v a nonzero
 * finite double; r has prod_prec(prec) bits. With LIMB64: the significands
 * are W in [1/2, 1) (nw limbs) and M / 2^64 in [1/2, 1); their product, nw + 1
 * limbs from mpn_mul_1, lies in [1/4, 1), so at most one left shift
 * normalizes it; no bit is lost (nw + 1 limbs hold any nw-limb by 1-limb
 * product) and the bits below prec + 53 are zero, as MPFR requires. */
static void mul_exact(mpfr_ptr r, mpfr_srcptr w, double v, size_t nw)
{
#if LIMB64
	mp_limb_t *rp = mpfr_custom_get_significand(r);
	const mp_limb_t *wp = mpfr_custom_get_significand(w);
	mpfr_exp_t ev;
	const mp_limb_t M = dbl_limb(v, &ev);
	mpfr_exp_t e = mpfr_custom_get_exp(w) + ev;
	rp[nw] = mpn_mul_1(rp, wp, (mp_size_t)nw, M);
	if (!(rp[nw] >> (GMP_NUMB_BITS - 1))) {
		mpn_lshift(rp, rp, (mp_size_t)nw + 1, 1);
		e--;
	}
	mpfr_custom_init_set(r, v < 0 ? -MPFR_REGULAR_KIND : MPFR_REGULAR_KIND, e,
			     (mpfr_prec_t)((nw + 1) * GMP_NUMB_BITS), rp);
#else
	(void)nw;
	mpfr_mul_d(r, w, v, MPFR_RNDN);
#endif
}

/* ------------------------------------------------------------ the truth */

/* a += q . k exactly, q decomposed in s->q. */
static void add_dot(skv_xacc *a, const scratch *s, const double *k)
{
	for (size_t i = 0, since = 0; i < s->d; i++) {
		int ek;
		const uint64_t mk = skv_dbl_int(k[i], &ek);
		if (mk == 0 || s->q[i].m == 0)
			continue;
		const int neg = s->q[i].neg ^ (signbit(k[i]) != 0);
		skv_xacc_add_product(a, s->q[i].m, s->q[i].e, mk, ek, neg);
		if (++since == XA_FLUSH) {
			skv_xacc_norm(a);
			since = 0;
		}
	}
}

/* Index (from 0) of a key of [0, m) whose score scale (q . k_j) is the
 * largest. A plain double dot product picks it when every approximate score
 * is finite (enough: d_j of the chosen key is then within a few fp64 ulps of
 * the top, see the bound above); otherwise (products near overflow) the
 * scores are compared exactly-rounded in MPFR. */
static size_t pick_reference(scratch *s, const double *q, const double *k, size_t m, double scale)
{
	const size_t d = s->d;
	size_t best = 0;
	double top = -INFINITY;
	int finite = 1;
	for (size_t j = 0; j < m && finite; j++) {
		double a = 0.0;
		for (size_t i = 0; i < d; i++)
			a += q[i] * k[j * d + i];
		a *= scale;
		finite = isfinite(a);
		if (a > top) {
			top = a;
			best = j;
		}
	}
	if (finite)
		return best;
	best = 0;
	for (size_t j = 0; j < m; j++) {
		skv_xacc_clear(&s->acc);
		add_dot(&s->acc, s, k + j * d);
		mpfr_ptr cur = s->x[j == 0 ? S_BEST : S_CUR];
		xacc_get(cur, &s->acc, s);
		mpfr_mul_d(cur, cur, scale, MPFR_RNDN);
		if (j > 0 && mpfr_greater_p(cur, s->x[S_BEST])) {
			mpfr_set(s->x[S_BEST], cur, MPFR_RNDN);
			best = j;
		}
	}
	skv_xacc_clear(&s->acc); /* the caller expects an empty accumulator */
	return best;
}

/* dd from an MPFR value: hi = RN53(x), lo = RN53(x - hi). x - hi is exact
 * at x's precision (P >= 53): it is a multiple of x's last place and at most
 * half an ulp of hi, so it spans at most P - 53 bits. With third, also
 * RN53(x - hi - lo) (exact likewise), for tests that need the truth beyond
 * the double-double. */
static skv_dd to_dd(mpfr_srcptr x, mpfr_ptr rem, double *third)
{
	skv_dd r;
	r.hi = mpfr_get_d(x, MPFR_RNDN);
	if (!isfinite(r.hi)) {
		r.lo = 0.0;
		if (third)
			*third = 0.0;
		return r;
	}
	mpfr_sub_d(rem, x, r.hi, MPFR_RNDN);
	r.lo = mpfr_get_d(rem, MPFR_RNDN);
	if (third) {
		mpfr_sub_d(rem, rem, r.lo, MPFR_RNDN);
		*third = mpfr_get_d(rem, MPFR_RNDN);
	}
	return r;
}

/* The computation of the comment at the top, on a valid non-empty range. */
static int truth_core(skv_dd *out, double *out3, skv_dd *lse, double *lse3, const skv_problem *p,
		      size_t row, size_t lo, size_t m, mpfr_prec_t prec)
{
	const size_t d = p->d;
	const double *q = p->q + row * d, *k = p->k + lo * d, *v = p->v + lo * d;
	scratch *s = scratch_new(m, d, prec);
	if (!s)
		return SKV_ENOMEM;
	for (size_t i = 0; i < d; i++) {
		s->q[i].m = skv_dbl_int(q[i], &s->q[i].e);
		s->q[i].neg = signbit(q[i]) != 0;
	}

	const size_t r = pick_reference(s, q, k, m, p->scale);
	add_dot(&s->ref, s, k + r * d);
	xacc_get(s->x[S_DOTR], &s->ref, s); /* also normalizes s->ref */
	mpfr_mul_d(s->x[S_SREF], s->x[S_DOTR], p->scale, MPFR_RNDN);

	for (size_t j = 0; j < m; j++) {
		if (j == r) {
			mpfr_set_ui(s->w[j], 1, MPFR_RNDN);
			continue;
		}
		/* acc = -(q . k_r): the reference's normalized chunks, negated
		 * (acc is empty here: cleared after each key and by
		 * pick_reference) */
		for (int c = s->ref.lo; c <= s->ref.hi; c++)
			s->acc.c[c] = -s->ref.c[c];
		s->acc.lo = s->ref.lo;
		s->acc.hi = s->ref.hi;
		add_dot(&s->acc, s, k + j * d);
		xacc_get(s->w[j], &s->acc, s);
		skv_xacc_clear(&s->acc);
		mpfr_mul_d(s->w[j], s->w[j], p->scale, MPFR_RNDN);
		mpfr_exp(s->w[j], s->w[j], MPFR_RNDN);
	}
	for (size_t j = 0; j < m; j++)
		s->pp[j] = s->w[j];
	mpfr_sum(s->x[S_W], s->pp, (unsigned long)m, MPFR_RNDN);
	mpfr_log(s->x[S_LOGW], s->x[S_W], MPFR_RNDN);
	mpfr_add(s->x[S_L], s->x[S_SREF], s->x[S_LOGW], MPFR_RNDN);
	double l3;
	const skv_dd L = to_dd(s->x[S_L], s->x[S_REM], &l3);
	if (!isfinite(L.hi)) { /* |L| beyond DBL_MAX: scores near 2^1024 */
		scratch_free(s);
		return SKV_ERANGE;
	}

	const size_t nw = nlimbs(prec);
	for (size_t i = 0; i < d; i++) {
		size_t c = 0;
		for (size_t j = 0; j < m; j++) {
			const double vji = v[j * d + i];
			/* w_j is 0 only below MPFR's smallest exponent, about
			 * 2^(-2^62): its terms are dropped, harmlessly. */
			if (vji != 0.0 && !mpfr_zero_p(s->w[j])) {
				mul_exact(s->prod[c], s->w[j], vji, nw);
				s->pp[c] = s->prod[c];
				c++;
			}
		}
		mpfr_sum(s->x[S_N], s->pp, (unsigned long)c, MPFR_RNDN);
		mpfr_div(s->x[S_OUT], s->x[S_N], s->x[S_W], MPFR_RNDN);
		out[i] = to_dd(s->x[S_OUT], s->x[S_REM], out3 ? &out3[i] : NULL);
	}
	*lse = L;
	if (lse3)
		*lse3 = l3;
	scratch_free(s);
	return SKV_OK;
}

int skv_truth_mpfr3(skv_dd *out, double *out3, skv_dd *lse, double *lse3, const skv_problem *p, size_t row,
		    size_t lo, size_t hi, long prec)
{
	/* The widest exponent range, so that no weight underflows whatever the
	 * caller left set for its IEEE emulation; range and flags are restored,
	 * so the call has no effect on the caller's MPFR state. */
	const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	const mpfr_flags_t flags = mpfr_flags_save();
	mpfr_set_emin(mpfr_get_emin_min());
	mpfr_set_emax(mpfr_get_emax_max());
	const int st = truth_core(out, out3, lse, lse3, p, row, lo, hi - lo, (mpfr_prec_t)prec);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
	mpfr_flags_restore(flags, MPFR_FLAGS_ALL);
	return st;
}

int skv_truth_mpfr(skv_dd *out, skv_dd *lse, const skv_problem *p, size_t row, size_t lo, size_t hi,
		   long prec)
{
	return skv_truth_mpfr3(out, NULL, lse, NULL, p, row, lo, hi, prec);
}
