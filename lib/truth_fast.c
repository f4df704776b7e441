/* truth_fast.c - the ground truth in error-free double arithmetic, streamed over the keys, certified. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "skv.h"
#include "problem_internal.h"
#include "truth_internal.h"
#include "truth_xacc.h"

/*
 * What is computed, for the m keys j of [lo, hi); u = 2^-53, RN rounding to
 * nearest double, gamma_n = n u / (1 - n u). All arithmetic is IEEE double
 * +, -, *, /, sqrt and fma (each correctly rounded, so the bits are the same
 * on every machine), integer arithmetic, and the exact accumulator of
 * lib/truth_xacc.h. TwoSum (Knuth) and TwoProd (p = RN(a b), e = fma(a, b,
 * -p)) are error-free: TwoSum for any finite operands without overflow,
 * TwoProd unless the product is below 2^-969, where e may lose up to
 * 2^-1075 ("underflow" below; it only ever adds absolute terms of that size).
 *
 * Pass 1 (reference). For each key a plain double q . k_j and P~_j = fl sum
 * |q_i| |k_ji| (four lanes, then (0 + 1) + (2 + 3)); r is the first key with
 * the largest sign(scale) q . k_j. P = max_j P~_j (1 + 2 gamma_{d+4}) + d
 * 2^-1074 bounds every sum_i |q_i k_ji|.
 *
 * The three-level cascade (lemma). Level 0 adds values into s0 by TwoSum,
 * level 1 adds values and level 0's errors into s1 by TwoSum, level 2 adds
 * values and level 1's errors into s2 by RN: s0 + s1 + s2 is the exact sum of
 * every input but level 2's roundings. A TwoSum's error is at most u |s| and
 * a recursive sum stays within (1 + gamma_n) sum |x| of its inputs, so with
 * X_l the sum of |inputs| of level l and n_l its number of operations,
 *   T0 = n0 u (1 + g0) X0 bounds level 0's errors, T1 = n1 u (1 + g1)
 *   (X1 + T0) level 1's, and |s0 + s1 + s2 - sum| <= g2 (X2 + T1),
 *   |s_l| <= (1 + g_l) (X_l + T_{l-1}) (T_{-1} = 0), g_l = gamma_{n_l}.
 * cascade() evaluates this; every bound below is computed in double and
 * enlarged by 2^-40, which covers its own roundings (fewer than 2^12).
 *
 * Scores. Per key, four lanes (i = 4 c + l) run the cascade on p, e =
 * TwoProd(q_i, k_ji) (level 0 p, level 1 e: X0 <= (1 + u) P_l, X1 <= u P_l,
 * n = d', 2 d', 2 d' with d' = ceil(d / 4)); combine() runs it again on the
 * twelve lane values and -R (R = R0 + R1 + R2, the reference key's own
 * combined lanes; n = 4, 8, 12), ordered so that the reference key gets
 * exactly Z = 0. So Z = Z0 + Z1 + Z2 = q . k_j - R + delta with |delta| <=
 * E_D (both cascades' bounds, plus d 2^-1074 for underflow), uniformly in j.
 * x = scale Z is carried as x0 + x0e + x1 + x1e + x2 (two TwoProds, x2 =
 * RN(scale Z2)); the argument error is then
 *   E_x = |scale| E_D + u |scale| |Z2|max + 2^-1073 + arg_err (the exp's),
 * and no ingredient but R is shared between keys. R's own error cancels:
 * out and L below are defined from x*_j = scale (q . k_j - R) exactly.
 * A key with x0 > 1/2 (the reference not the top) or with the small parts
 * above 2^-5 (scores beyond ~2^40) declines; x0 < -600 cuts the key (its
 * weight, below e^-599 < 2^-864, is taken as 0; see (b)).
 *
 * Weights. lib/truth_exp.c gives w = exp(x0 + ...) as m 2^(k-127), split
 * exactly into w0 = top 53 bits, w1 = next 53, w2 = last 22 (no rounding:
 * k >= -866 keeps every part normal); w1 <= 2^-51 w, w2 <= 2^-104 w. With
 * R as above, w_j = w*_j (1 + theta_j), |theta_j| <= theta = e^E_x (1 +
 * SKV_TRUTH_EXP_REL) - 1, taken as (E_x + E_x^2)(1 + r) + r.
 *
 * Accumulation. Per dimension, blocks of b keys (b the power of two with b^2
 * >= m, nb = ceil(m / b) blocks) run the cascade on a0, a1 = TwoProd(w0, v),
 * b0, b1 = TwoProd(w1, v), c0 = RN(w2 v) (level 0 a0; level 1 a1, b0;
 * level 2 b1, c0: per unit of H = sum_j w_j |v_j|, X0 = 1 + u, X1 = u +
 * 2^-51 (1 + u), X2 = u 2^-51 + 2^-104 (1 + u), n = b, 3 b, 5 b), then each
 * block's three values fold into the total by the cascade again (n = nb,
 * 2 nb, 3 nb, X_l = the block outputs' bounds). With c0's rounding (u w2 |v|
 * <= 2^-157 w |v|), N = G0 + G1 + G2 satisfies |N_i - sum_j w_j v_ji| <=
 * c_acc H_i + m 2^-1070 (the underflow terms, generously). W is the same
 * cascade with v = 1 (a1 = b1 = 0). H_i <= H^_i = (1 + 2^-51) (A_i + m
 * 2^-1074) / (1 - gamma_{m+1}), A_i = fl sum fl(w0 |v_ji|).
 *
 * Final values, exactly in an accumulator (lib/truth_xacc.h). W is
 * extracted as W0 + W1 + W2 (top 53 bits three times; the rest, tau_W, is
 * bounded by the extraction). out_i: q_k = RN(t / W0) with t the top of the
 * remainder r = N_i - (q_0 + ..) (W0 + W1 + W2), kept exact; after three
 * digits |r| is read off the accumulator, and (hi, lo) = TwoSum of q0, q1,
 * q2 drops one exact error e2: out_i = hi + lo + e2 + r / W exactly.
 * log W: l = skv_rng_log(W0) and two Newton steps l += RN_53(W e^-l - 1)
 * (the residual exact in the accumulator, truncated to 53 bits): with e^-l
 * of relative error r, |l - log W| <= eps^2 / 2 (1 + eps) + 1.01 r + 2^-51
 * |delta| after a step whose residual was delta, eps = 1.01 (|delta| (1 +
 * 2^-51) + r). L = scale R + l exactly, rounded to (hi, lo) the same way.
 *
 * The bound on out (sigma = sum of the uncut w, W*_U the same of w*; p*_j
 * the softmax of the uncut keys; A*_i = sum p*_j |v_ji|):
 *  (a) weights: sum w v / sum w - sum w* v / sum w* = sum p*_j theta_j
 *      (v_ji - out*_i) / (1 + mean theta), so <= 2 theta (1 + 4 theta) H_i
 *      / sigma;
 *  (b) cut keys: their share moves out by at most e^-599 (kappa + n_cut
 *      A*_i) / W*, kappa = sum over cut keys of max_i |v_ji|;
 *  (c) accumulation: (c_acc H_i + m 2^-1070) / sigma + |N / W| (c_acc +
 *      tau_W / sigma);
 *  (d) division: |e2| + |r| / W, read off after the fact.
 * The result is certified when ||B||_2 <= 2^-100 (||out||_2 - ||B||_2), B_i =
 * (a) + (b) + (c) + (d); then ||out - exact|| / ||exact|| <= 2^-100. For the
 * lse (L* = scale R + log W* for any R, so R's error does not enter): |e2| +
 * |r| of its rounding, the Newton bound, 1.01 (c_acc + tau_W / sigma) +
 * 1.01 theta + n_cut e^-599 (1 + theta) / sigma, certified when within
 * 2^-104 (1 + |L|).
 *
 * What the bound comes to (tests/test_truth_fast.c prints it): at d = 128
 * and scores of a few nats, theta ~ 2^-122.3 and c_acc ~ 2^-133 at 16k keys,
 * 2^-124 at 1M, so B_i ~ 2^-121.5 A_i + 2^-106 |out_i| (the dd rounding of
 * the output): normwise relative 2^-105 while ||A|| / ||out|| < 2^15.
 * Attention diffuse over m keys has ||A|| / ||out|| ~ sqrt(m): 2^10 at 1M.
 * Stronger cancellation in V, scores beyond ~2^40, m > 2^32 or values near
 * the overflow threshold decline, and lib/truth.c falls back on MPFR.
 *
 * Values that are not finite. A NaN or infinity in q or K makes some
 * |q_i| |k_ji| (or 0 * inf) NaN or infinite, so pass 1 declines; in V it
 * makes A_i (every uncut weight is positive) or kappa non-finite, so the
 * bound does not certify. skv_truth_range relies on this: it checks the
 * inputs only after a decline.
 *
 * Cost: pass 1 reads K (5 vector operations per 4 key-dimensions), pass 2
 * reads K and V once, row by row (22 vector operations per 4 for K, 37 for
 * V), plus ~1300 instructions per key (combine, exp, split) and ~1200 per
 * dimension and call (the exact ending). Callgrind, n = 16384, d = 128 (AVX2
 * loops): 33 instructions per key and dimension against 590 for the MPFR
 * path. Memory: 11 d + 140 doubles, nothing per key.
 */

#define U 0x1p-53
#define X_CUT 600.0            /* weights below e^-600 are 0; e^(1-600) < 2^-864 */
#define E_CUT 0x1p-864         /* bound on e^(1 - X_CUT) */
#define X_TOP 0.5              /* a score above the reference by more declines */
#define SMALL_MAX 0x1p-5       /* bound on the small parts of x (exp's domain) */
#define PAD (1 + 0x1p-40)      /* covers the roundings of a bound's computation */
#define UNDER 0x1p-1074        /* the smallest subnormal */
#define SCORE_MAX 0x1p40       /* |scale| P above this declines */

/* ------------------------------------------------------ error-free steps */

static void two_sum(double *s, double *t, double a, double b)
{
	const double x = a + b, bb = x - a;
	*t = (a - (x - bb)) + (b - bb);
	*s = x;
}

/* One key's (or one block's) contribution to a three-level cascade per
 * dimension, scalar: the operations of accum in lib/truth_kern.h with v = 1
 * (a0 = w0, a1 = 0, b0 = w1, b1 = 0, c0 = w2 exactly). */
static void w_accum(double s[3], double w0, double w1, double w2)
{
	double t0, t1, t2, t3;
	two_sum(&s[0], &t0, s[0], w0);
	two_sum(&s[1], &t1, s[1], 0.0);
	two_sum(&s[1], &t2, s[1], w1);
	two_sum(&s[1], &t3, s[1], t0);
	s[2] = s[2] + t1 + t2 + t3 + 0.0 + w2;
}

/* g += s (three levels each): level 0 s0, level 1 s1 and the error, level 2
 * s2 and the errors. */
static void fold(double *g0, double *g1, double *g2, double s0, double s1, double s2)
{
	double e0, e1, e2;
	two_sum(g0, &e0, *g0, s0);
	two_sum(g1, &e1, *g1, s1);
	two_sum(g1, &e2, *g1, e0);
	*g2 = *g2 + s2 + e1 + e2;
}

/* Z = lanes - R: level 0 the four level-0 lanes then -R0, level 1 the lanes,
 * level 0's errors, -R1, the last error, level 2 likewise. With R the
 * combination of the same lanes (computed with R = 0), every level reaches
 * exactly its R part before subtracting it, so Z = 0 exactly. */
static void combine(double z[3], const double *ln, const double r[3])
{
	double e0[4], e1[8], a0 = ln[0], a1 = ln[4], a2 = ln[8];
	for (int l = 1; l < 4; l++)
		two_sum(&a0, &e0[l - 1], a0, ln[l]);
	two_sum(&a0, &e0[3], a0, -r[0]);
	int n = 0;
	for (int l = 5; l < 8; l++)
		two_sum(&a1, &e1[n++], a1, ln[l]);
	for (int l = 0; l < 3; l++)
		two_sum(&a1, &e1[n++], a1, e0[l]);
	two_sum(&a1, &e1[n++], a1, -r[1]);
	two_sum(&a1, &e1[n++], a1, e0[3]);
	for (int l = 9; l < 12; l++)
		a2 = a2 + ln[l];
	for (int l = 0; l < 6; l++)
		a2 = a2 + e1[l];
	a2 = a2 - r[2];
	a2 = a2 + e1[6] + e1[7];
	z[0] = a0;
	z[1] = a1;
	z[2] = a2;
}

/* m 2^(k-127) as w0 + w1 + w2 exactly (bits 127..75, 74..22, 21..0 of m;
 * every part normal for k >= -895). */
static void texp_split(double w[3], const skv_texp *e)
{
	const uint64_t m0 = (uint64_t)(e->m >> 75), m1 = (uint64_t)(e->m >> 22) & ((UINT64_C(1) << 53) - 1);
	const uint64_t m2 = (uint64_t)e->m & ((UINT64_C(1) << 22) - 1);
	w[0] = (double)m0 * skv_pow2(e->k - 52);
	w[1] = (double)m1 * skv_pow2(e->k - 105);
	w[2] = (double)m2 * skv_pow2(e->k - 127);
}

/* ------------------------------------------------------------ bounds */

static double gam(double n) { return n * U / (1 - n * U); }

/* The cascade lemma: returns the error bound, out gets |s_l| bounds. */
static double cascade(double out[3], const double in[3], double n0, double n1, double n2)
{
	const double g0 = gam(n0), g1 = gam(n1), g2 = gam(n2);
	const double t0 = n0 * U * (1 + g0) * in[0], t1 = n1 * U * (1 + g1) * (in[1] + t0);
	out[0] = (1 + g0) * in[0];
	out[1] = (1 + g1) * (in[1] + t0);
	out[2] = (1 + g2) * (in[2] + t1);
	return g2 * (in[2] + t1);
}

/* Score bound E_D and |Z2| bound, for sum |q k| <= P and the reference R. */
static void score_bound(double *ed, double *z2, double P, const double r[3], size_t d)
{
	const double dq = (double)((d + 3) / 4), lane_in[3] = {1 + U, U, 0};
	double lane_out[3], comb_out[3];
	const double el = cascade(lane_out, lane_in, dq, 2 * dq, 2 * dq);
	const double comb_in[3] = {lane_out[0] * P + fabs(r[0]), lane_out[1] * P + fabs(r[1]),
				   lane_out[2] * P + fabs(r[2])};
	const double ec = cascade(comb_out, comb_in, 4, 8, 12);
	*ed = (el * P + ec + (double)d * UNDER) * PAD;
	*z2 = comb_out[2] * PAD;
}

/* Accumulation bound per unit of H, for m keys in blocks of b. */
static double acc_bound(double m, double b)
{
	const double nb = ceil(m / b), in[3] = {1 + U, U + 0x1p-51 * (1 + U), U * 0x1p-51 + 0x1p-104 * (1 + U)};
	double blk[3], tot[3];
	const double e_blk = cascade(blk, in, b, 3 * b, 5 * b);
	const double e_fold = cascade(tot, blk, nb, 2 * nb, 3 * nb);
	return (e_blk + e_fold + 0x1p-157) * PAD;
}

/* ----------------------------------------------------------- scratch */

typedef struct {
	size_t d, d4;
	double *q4, *aq4, *s0, *s1, *s2, *a, *g0, *g1, *g2;
	double lanes[12], r[3], ws[3], wg[3];
	double kappa, arg_err;
	size_t ncut;
	const skv_truth_kernels *kern;
	skv_xacc x;
	double *mem;
} fast;

static void fast_free(fast *f)
{
	if (f) {
		free(f->mem);
		free(f);
	}
}

static fast *fast_new(const double *q, size_t d, const skv_truth_kernels *kern)
{
	fast *f = malloc(sizeof *f);
	const size_t d4 = (d + 3) / 4 * 4;
	if (!f || d4 > SIZE_MAX / sizeof(double) / 9 || !(f->mem = calloc(9 * d4, sizeof(double)))) {
		free(f);
		return NULL;
	}
	double **arr[9] = {&f->q4, &f->aq4, &f->s0, &f->s1, &f->s2, &f->a, &f->g0, &f->g1, &f->g2};
	for (size_t i = 0; i < 9; i++)
		*arr[i] = f->mem + i * d4;
	for (size_t i = 0; i < d; i++) {
		f->q4[i] = q[i];
		f->aq4[i] = fabs(q[i]);
	}
	f->d = d;
	f->d4 = d4;
	f->kern = kern;
	f->kappa = f->arg_err = 0;
	f->ncut = 0;
	memset(f->wg, 0, sizeof f->wg);
	skv_xacc_init(&f->x);
	return f;
}

/* ------------------------------------------------------------ passes */

/* Pass 1: the reference key r and P (bound on every sum_i |q_i k_ji|);
 * SKV_TRUTH_NO_RANGE when a sum of |products| is not below 2^1000. */
static int pass1(size_t *r, double *P, fast *f, skv_rows *k, size_t m, double scale)
{
	const double sg = scale > 0 ? 1.0 : scale < 0 ? -1.0 : 0.0;
	double best = -INFINITY, pmax = 0.0;
	*r = 0;
	for (size_t j = 0; j < m; j++) {
		double dot, ab;
		f->kern->scan(&dot, &ab, f->q4, f->aq4, skv_rows_k(k, j), f->d);
		if (!(ab < 0x1p1000))
			return SKV_TRUTH_NO_RANGE;
		if (sg * dot > best) {
			best = sg * dot;
			*r = j;
		}
		pmax = fmax(pmax, ab);
	}
	*P = (pmax * (1 + 2 * gam((double)f->d + 4)) + (double)f->d * UNDER) * PAD;
	return SKV_TRUTH_CERTIFIED;
}

/* The weight of key row k (w[3], or a cut key: returns 1), or a reason to
 * decline (> 1 is never returned for a weight: see the codes). */
enum { KEY_WEIGHT = 0, KEY_CUT = 1, KEY_DECLINE = 2 };

static int key_weight(double w[3], int *why, fast *f, const double *k, double scale)
{
	double z[3], xs[4];
	f->kern->dot3(f->lanes, f->q4, k, f->d);
	combine(z, f->lanes, f->r);
	const double x0 = scale * z[0], x1 = scale * z[1];
	xs[0] = fma(scale, z[0], -x0);
	xs[1] = x1;
	xs[2] = fma(scale, z[1], -x1);
	xs[3] = scale * z[2];
	if (!(fabs(xs[0]) + fabs(xs[1]) + fabs(xs[2]) + fabs(xs[3]) <= SMALL_MAX)) {
		*why = SKV_TRUTH_NO_RANGE;
		return KEY_DECLINE;
	}
	if (x0 > X_TOP) {
		*why = SKV_TRUTH_NO_TOP;
		return KEY_DECLINE;
	}
	if (x0 < -X_CUT)
		return KEY_CUT;
	skv_texp e;
	if (skv_truth_exp(&e, x0, xs, 4) != 0) {
		*why = SKV_TRUTH_NO_RANGE;
		return KEY_DECLINE;
	}
	f->arg_err = fmax(f->arg_err, e.arg_err);
	texp_split(w, &e);
	return KEY_WEIGHT;
}

/* Pass 2: every key's weight into W and w v into N, block by block. */
static int pass2(fast *f, skv_rows *k, size_t m, double scale, size_t b)
{
	const size_t d = f->d, d4 = f->d4;
	for (size_t j0 = 0; j0 < m; j0 += b) {
		const size_t j1 = m - j0 < b ? m : j0 + b;
		memset(f->s0, 0, 3 * d4 * sizeof(double)); /* s0, s1, s2 are consecutive */
		memset(f->ws, 0, sizeof f->ws);
		for (size_t j = j0; j < j1; j++) {
			double w[3];
			int why = 0;
			const int kind = key_weight(w, &why, f, skv_rows_k(k, j), scale);
			const double *v = skv_rows_v(k, j);
			if (kind == KEY_DECLINE)
				return why;
			if (kind == KEY_CUT) {
				double vmax = 0; /* NaN if a value is NaN: never certified */
				for (size_t i = 0; i < d; i++)
					if (!(fabs(v[i]) <= vmax))
						vmax = fabs(v[i]);
				f->kappa += vmax;
				f->ncut++;
				continue;
			}
			w_accum(f->ws, w[0], w[1], w[2]);
			f->kern->accum(f->s0, f->s1, f->s2, f->a, v, d, w[0], w[1], w[2]);
		}
		for (size_t i = 0; i < d; i++)
			fold(&f->g0[i], &f->g1[i], &f->g2[i], f->s0[i], f->s1[i], f->s2[i]);
		fold(&f->wg[0], &f->wg[1], &f->wg[2], f->ws[0], f->ws[1], f->ws[2]);
	}
	return SKV_TRUTH_CERTIFIED;
}

/* ------------------------------------------------------- exact ending */

/* The value of x as t[0] + t[1] + t[2] + rest (each t the top 53 bits of
 * what is left, so |t1| <= 2^-52 |t0|, ...); returns a bound on |rest|. */
static double extract3(double t[3], skv_xacc *x)
{
	for (int c = 0; c < 3; c++) {
		t[c] = skv_xacc_top(x);
		skv_xacc_add_dbl(x, -t[c]);
	}
	return fabs(skv_xacc_top(x)) * (1 + 0x1p-51) + 0x1p-1073;
}

/* (hi, lo) from three digits, hi = RN(hi + lo) (the skv_dd form); returns
 * the one error it drops, |t[0] + t[1] + t[2] - hi - lo|. */
static double to_dd(skv_dd *o, const double t[3])
{
	double hi, s, lo, e;
	two_sum(&hi, &s, t[0], t[1]);
	two_sum(&lo, &e, s, t[2]);
	two_sum(&o->hi, &o->lo, hi, lo);
	return fabs(e);
}

/* o = (g0 + g1 + g2) / (w0 + w1 + w2) by three quotient digits, the
 * remainder kept exact; returns the bound (d) on |o - quotient|. */
static double divide(skv_dd *o, skv_xacc *x, double g0, double g1, double g2, const double w[3])
{
	double q[3];
	skv_xacc_clear(x);
	skv_xacc_add_dbl(x, g0);
	skv_xacc_add_dbl(x, g1);
	skv_xacc_add_dbl(x, g2);
	for (int c = 0; c < 3; c++) {
		q[c] = skv_xacc_top(x) / w[0];
		for (int e = 0; e < 3; e++)
			skv_xacc_add_mul(x, q[c], w[e], 1);
	}
	const double rest = fabs(skv_xacc_top(x)) * (1 + 0x1p-51) + 0x1p-1073;
	return (to_dd(o, q) + rest / w[0]) * PAD; /* W >= w0 > 0: digits of W */
}

/* l[0] + l[1] + l[2] ~ log(w0 + w1 + w2) by two Newton steps from
 * skv_rng_log(w0); returns the bound on the error, or -1 to decline. */
static double log_w(double l[3], skv_xacc *x, const double w[3])
{
	double bound = -1;
	l[0] = skv_rng_log(w[0]);
	l[1] = l[2] = 0.0;
	for (int s = 0; s < 2; s++) {
		skv_texp e;
		double ew[3];
		const double rest[1] = {-l[1]};
		if (skv_truth_exp(&e, -l[0], rest, s) != 0)
			return -1;
		texp_split(ew, &e);
		skv_xacc_clear(x);
		for (int a = 0; a < 3; a++)
			for (int b = 0; b < 3; b++)
				skv_xacc_add_mul(x, w[a], ew[b], 0);
		skv_xacc_add_dbl(x, -1.0);
		const double dl = skv_xacc_top(x), r = (e.arg_err + SKV_TRUTH_EXP_REL) * (1 + 0x1p-20);
		const double eps = 1.01 * (fabs(dl) * (1 + 0x1p-51) + UNDER + r);
		if (!(eps <= 0x1p-20))
			return -1;
		l[1 + s] = dl;
		bound = (0.51 * eps * eps + 1.01 * r + 0x1p-52 * fabs(dl) + UNDER) * PAD;
	}
	return bound;
}

/* ||x||_2 over n values of stride s, rounded up (up) or down by 2^-40. */
static double norm2(const double *x, size_t n, size_t s, int up)
{
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, fabs(x[i * s]));
	if (mx == 0)
		return 0;
	int e;
	frexp(mx, &e);
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const double y = ldexp(x[i * s], -e);
		sum += y * y;
	}
	const double g = 1 + 2 * gam((double)n + 2); /* the sum's roundings */
	if (up)
		return ldexp(sqrt(sum * g) * PAD + (double)n * 0x1p-1000, e);
	return ldexp(sqrt(sum / g) / PAD, e);
}

/* ------------------------------------------------------------ the truth */

/* The bounds (a) to (d) of the header for each output, into f->a (which
 * held A_i); out into o. Returns sigma_lo, or 0 to decline. */
static double outputs(skv_dd *o, fast *f, const double W[3], double tau_w, double theta, double cacc,
		      double m)
{
	const double sig = (W[0] - tau_w) / (1 + cacc) / PAD, gm = gam(m + 1);
	if (!(sig > 0))
		return 0;
	const double cw = cacc + tau_w / sig, kap = f->kappa / (1 - gm);
	for (size_t i = 0; i < f->d; i++) {
		const double bd = divide(&o[i], &f->x, f->g0[i], f->g1[i], f->g2[i], W);
		const double h = (1 + 0x1p-51) * (f->a[i] + m * UNDER) / (1 - gm) * PAD;
		const double ba = 2 * theta * (1 + 4 * theta) * h / sig;
		const double bb = E_CUT * (1 + theta) * (kap + (double)f->ncut * (1 + 4 * theta) * h / sig) / sig;
		const double bc = (cacc * h + m * 0x1p-1070) / sig + (fabs(o[i].hi) * (1 + 0x1p-52) + bd) * cw;
		f->a[i] = (ba + bb + bc + bd) * PAD;
	}
	return sig;
}

static int finite_all(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

static int decline(skv_truth_cert *c, int why)
{
	c->reason = (skv_truth_reason)why;
	return SKV_TRUTH_DECLINED;
}

static int run(skv_dd *out, skv_dd *lse, skv_truth_cert *c, fast *f, skv_dd *o, skv_rows *k, size_t m,
	       double scale)
{
	const size_t d = f->d;
	size_t r, b = 1;
	double P;
	int why = pass1(&r, &P, f, k, m, scale);
	if (!why && !(fabs(scale) * 2 * P <= SCORE_MAX))
		why = SKV_TRUTH_NO_RANGE;
	if (why)
		return decline(c, why);
	const double zero[3] = {0, 0, 0};
	f->kern->dot3(f->lanes, f->q4, skv_rows_k(k, r), d);
	combine(f->r, f->lanes, zero);
	while (b * b < m)
		b *= 2;
	if ((why = pass2(f, k, m, scale, b)) != 0)
		return decline(c, why);
	if (!finite_all(f->s0, 4 * f->d4) || !finite_all(f->g0, 3 * f->d4) || !finite_all(f->wg, 3))
		return decline(c, SKV_TRUTH_NO_RANGE);

	double ed, z2, W[3], l[3], L[3];
	score_bound(&ed, &z2, P, f->r, d);
	const double ex = (fabs(scale) * ed + U * fabs(scale) * z2 + 0x1p-1073 + f->arg_err) * PAD;
	if (!(ex <= 0x1p-20))
		return decline(c, SKV_TRUTH_NO_BOUND);
	const double theta = ((ex + ex * ex) * (1 + SKV_TRUTH_EXP_REL) + SKV_TRUTH_EXP_REL) * PAD;
	const double cacc = acc_bound((double)m, (double)b);
	skv_xacc_clear(&f->x);
	for (int i = 0; i < 3; i++)
		skv_xacc_add_dbl(&f->x, f->wg[i]);
	const double tau_w = extract3(W, &f->x) + (double)m * 0x1p-1070;
	const double sig = outputs(o, f, W, tau_w, theta, cacc, (double)m);
	const double nb = norm2(f->a, d, 1, 1), no = norm2(&o[0].hi, d, 2, 0) * (1 - 0x1p-52);
	if (!(sig > 0) || !(nb <= SKV_TRUTH_CERT_REL * (no - nb)))
		return decline(c, SKV_TRUTH_NO_BOUND);

	const double lb = log_w(l, &f->x, W);
	if (lb < 0)
		return decline(c, SKV_TRUTH_NO_BOUND);
	skv_xacc_clear(&f->x);
	for (int i = 0; i < 3; i++) {
		skv_xacc_add_mul(&f->x, scale, f->r[i], 0);
		skv_xacc_add_dbl(&f->x, l[i]);
	}
	skv_dd L2;
	const double lrest = extract3(L, &f->x), le = to_dd(&L2, L) + lrest;
	c->lse_err = (le + lb + 1.01 * (cacc + tau_w / sig) + 1.01 * theta +
		      (double)f->ncut * E_CUT * (1 + theta) / sig) * PAD;
	if (!(c->lse_err <= SKV_TRUTH_CERT_LSE * (1 + fabs(L2.hi)) * (1 - 0x1p-50)))
		return decline(c, SKV_TRUTH_NO_BOUND);
	c->reason = SKV_TRUTH_CERTIFIED;
	c->err_norm = nb;
	c->out_norm = no;
	c->theta = theta;
	c->acc_rel = cacc;
	c->ncut = f->ncut;
	memcpy(out, o, d * sizeof *o);
	*lse = L2;
	return SKV_OK;
}

int skv_truth_fast_kv(skv_dd *out, skv_dd *lse, skv_truth_cert *cert, const skv_kv *s, size_t row, size_t lo,
		      size_t hi, skv_truth_isa isa)
{
	const skv_truth_kernels *kern = skv_truth_kernels_get(isa);
	if (!kern)
		return SKV_EINVAL;
	memset(cert, 0, sizeof *cert);
	const size_t d = s->p->d, m = hi - lo;
	if (m > (UINT64_C(1) << 32) || d > ((size_t)1 << 24))
		return decline(cert, SKV_TRUTH_NO_RANGE);
	fast *f = fast_new(s->p->q + row * d, d, kern);
	skv_dd *o = malloc(d * sizeof *o);
	skv_rows k;
	int st = SKV_ENOMEM;
	if (f && o && skv_rows_open(&k, s, lo, hi) == SKV_OK) {
		st = run(out, lse, cert, f, o, &k, m, s->p->scale);
		skv_rows_close(&k);
	}
	free(o);
	fast_free(f);
	return st;
}
