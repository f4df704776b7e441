/* merge.c - merges of split partials (one-pass, pairwise state, Flex, and the wrong-on-purpose controls), generic over order and configuration. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "merge_internal.h"
#include "scan.h"
#include "fmt_inline.h"

/*
 * What storage costs, in exact arithmetic (tests/test_merge.c checks both
 * bounds against the MPFR truth). With exact weights w_s = exp(L_s - L),
 * sum w_s = 1, and o = sum w_s O_s:
 *
 * LSE storage. Stored L^_s = L_s + e_s gives weights
 *   w^_s = w_s exp(e_s) / sum_t w_t exp(e_t),
 * so w^_s / w_s lies in [exp(-2E), exp(2E)] with E = max_s |e_s|, and since
 * both weight sets sum to 1, o^ - o = sum_s (w^_s - w_s)(O_s - o):
 *   ||o^ - o|| <= (exp(2E) - 1) sum_s w_s ||O_s - o||.
 * With |e_s| at most half an ulp of L_s (about u |L_s|) the error grows with the
 * LSE magnitude, not with S, and vanishes at S = 1 (w^_1 = w_1 = 1) or when
 * every split has the same output. The merged LSE moves by at most E.
 *
 * Partial storage. Stored O^_si = O_si (1 + d_si), |d_si| <= u:
 *   ||o^ - o|| <= u sum_s w_s ||O_s||,
 * about u ||o|| when the partials agree, more when they cancel.
 */

/* Everything a reduction step needs to know about the merge in progress. */
typedef struct {
	const skv_partials *sp;
	const skv_merge_spec *spec;
	const skv_config *cfg;
	skv_format c;
	int base2, guard;
	const double *e;   /* onepass/flex: per-split factor e(L_s - M) */
	const double *w;   /* onepass: per-split weight e(L_s - LSE_total) */
	const double *nan; /* a row of NaN: what an unwritten (FA3) row holds */
} mctx;

/* A reduction over the splits, in any order: a fold (init, add) and a
 * combine of two partial results, plus an optional seal applied to each
 * strided subset before the subsets are combined. Accumulators are `width`
 * doubles. Each merge is one such reducer; each order is one driver. */
typedef struct {
	size_t width;
	void (*init)(const mctx *x, double *a);
	void (*add)(const mctx *x, double *a, size_t s);
	void (*combine)(const mctx *x, double *a, const double *b);
	void (*seal)(const mctx *x, double *a);
} reducer;

static double e_(const mctx *x, double t) { return x->base2 ? skv_exp2_i(x->c, t) : skv_exp_i(x->c, t); }
static double lg_(const mctx *x, double t) { return x->base2 ? skv_log2_i(x->c, t) : skv_log_i(x->c, t); }

/* The stored row of split s as the merge reads it: FA3 never writes the
 * partial output of an empty split, modelled as NaN. */
static const double *row_o(const mctx *x, size_t s)
{
	if (x->spec->empty == SKV_EMPTY_FA3 && x->sp->lse[s] == -INFINITY)
		return x->nan;
	return x->sp->o + s * x->sp->d;
}

static const double *row_acc(const mctx *x, size_t s)
{
	if (x->spec->empty == SKV_EMPTY_FA3 && x->sp->m[s] == -INFINITY)
		return x->nan;
	return x->sp->acc + s * x->sp->d;
}

static void zero_init(const mctx *x, double *a)
{
	(void)x;
	a[0] = 0.0;
}
static void vzero_init(const mctx *x, double *a) { memset(a, 0, x->sp->d * sizeof *a); }

/* scalar sum of e_s (onepass, mean/sum LSE) */
static void esum_add(const mctx *x, double *a, size_t s) { a[0] = skv_add_i(x->c, a[0], x->e[s]); }
static void ssum_combine(const mctx *x, double *a, const double *b) { a[0] = skv_add_i(x->c, a[0], b[0]); }

/* vector sum (all vector merges combine subresults by addition) */
static void vsum_combine(const mctx *x, double *a, const double *b)
{
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_add_i(x->c, a[i], b[i]);
}

/* onepass: out += w_s O_s, fused as FlashAttention's combine (nvcc
 * contracts the multiply-add to FFMA). FA3 skips splits whose weight is not
 * > 0, so it never reads their unwritten rows. */
static void wsum_add(const mctx *x, double *a, size_t s)
{
	double w = x->w[s];
	if (x->spec->empty == SKV_EMPTY_FA3 && !(w > 0.0))
		return;
	const double *o = row_o(x, s);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_fma_i(x->c, w, o[i], a[i]);
}

/* controls: plain sum of the partial rows */
static void rsum_add(const mctx *x, double *a, size_t s)
{
	const double *o = row_o(x, s);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_add_i(x->c, a[i], o[i]);
}

/* flex: the sum l = sum_s l_s e_s in a[0] and acc = sum_s acc_s e_s after it */
static void flex_init(const mctx *x, double *a) { memset(a, 0, (x->sp->d + 1) * sizeof *a); }
static void flex_add(const mctx *x, double *a, size_t s)
{
	double es = x->e[s];
	const double *acc = row_acc(x, s);
	a[0] = skv_fma_i(x->c, x->sp->l[s], es, a[0]);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i + 1] = skv_fma_i(x->c, acc[i], es, a[i + 1]);
}
static void flex_combine(const mctx *x, double *a, const double *b)
{
	for (size_t i = 0; i <= x->sp->d; i++)
		a[i] = skv_add_i(x->c, a[i], b[i]);
}

/* pairwise: state (m, d, acc[]) in a[0], a[1], a[2..]. The initial state is
 * FlashInfer's: m = -inf, d = 1, acc = 0 (d is immaterial once a finite
 * state arrives: it is multiplied by e(-inf) = 0). */
static void st_init(const mctx *x, double *a)
{
	a[0] = -INFINITY;
	a[1] = 1.0;
	memset(a + 2, 0, x->sp->d * sizeof *a);
}

void skv_state_merge(double *ma, double *da, double *acca, double mb, double db, const double *accb,
		     size_t d, skv_format c, int base2, int guard)
{
	double m = fmax(*ma, mb);
	if (guard && m == -INFINITY)
		return;
	double ta = skv_sub_i(c, *ma, m), tb = skv_sub_i(c, mb, m);
	double x = base2 ? skv_exp2_i(c, ta) : skv_exp_i(c, ta);
	double y = base2 ? skv_exp2_i(c, tb) : skv_exp_i(c, tb);
	*da = skv_fma_i(c, *da, x, skv_mul_i(c, db, y));
	for (size_t i = 0; i < d; i++)
		acca[i] = skv_fma_i(c, acca[i], x, skv_mul_i(c, accb[i], y));
	*ma = m;
}

static void st_add(const mctx *x, double *a, size_t s)
{
	/* An empty split is skipped by every guarded system (SGLang's range
	 * check, FA3's scale test); without a guard it enters the formula. */
	if (x->guard && x->sp->lse[s] == -INFINITY)
		return;
	skv_state_merge(&a[0], &a[1], a + 2, x->sp->lse[s], 1.0, row_o(x, s), x->sp->d, x->c, x->base2,
			x->guard);
}

static void st_combine(const mctx *x, double *a, const double *b)
{
	skv_state_merge(&a[0], &a[1], a + 2, b[0], b[1], b + 2, x->sp->d, x->c, x->base2, x->guard);
}

/* FlashInfer: each thread normalizes its state and writes (o, lse) to shared
 * memory, o in the input type, before thread 0 merges them again. */
static void st_seal(const mctx *x, double *a)
{
	if (x->guard && a[0] == -INFINITY)
		return;
	size_t d = x->sp->d;
	for (size_t i = 0; i < d; i++) {
		double o = skv_div_i(x->c, a[2 + i], a[1]);
		a[2 + i] = x->spec->round_states ? skv_round_i(x->cfg->input, o) : o;
	}
	a[0] = skv_add_i(x->c, a[0], lg_(x, a[1]));
	a[1] = 1.0;
}

static int cmp_key(const void *pa, const void *pb)
{
	const double *a = pa, *b = pb; /* {key, index} pairs; index breaks ties: stable */
	if (a[0] < b[0])
		return -1;
	if (a[0] > b[0])
		return 1;
	return (a[1] > b[1]) - (a[1] < b[1]);
}

/* The visiting order of the splits for the sequential orders. */
static int make_perm(size_t *perm, const skv_partials *sp, const skv_merge_spec *spec)
{
	size_t S = sp->S;
	for (size_t s = 0; s < S; s++)
		perm[s] = spec->order == SKV_ORDER_REV ? S - 1 - s : s;
	if (spec->order == SKV_ORDER_RANDOM) {
		skv_rng r;
		skv_rng_seed(&r, spec->seed);
		for (size_t i = S - 1; i > 0; i--) { /* Fisher-Yates */
			size_t j = (size_t)skv_rng_below(&r, (uint64_t)i + 1);
			size_t t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
	} else if (spec->order == SKV_ORDER_ASC || spec->order == SKV_ORDER_DESC) {
		double *kv = malloc(2 * S * sizeof *kv);
		if (!kv)
			return SKV_ENOMEM;
		for (size_t s = 0; s < S; s++) {
			double L = sp->lse[s];
			kv[2 * s] = spec->order == SKV_ORDER_DESC ? -L : L;
			kv[2 * s + 1] = (double)s;
		}
		qsort(kv, S, 2 * sizeof *kv, cmp_key);
		for (size_t s = 0; s < S; s++)
			perm[s] = (size_t)kv[2 * s + 1];
		free(kv);
	}
	return SKV_OK;
}

/* Runs reducer r over the splits in the spec's order into res[width]. */
static int reduce(double *res, const reducer *r, const mctx *x, const size_t *perm)
{
	const size_t S = x->sp->S, W = r->width;
	const skv_order ord = x->spec->order;
	if (ord == SKV_ORDER_TREE) {
		double *lv = malloc(S * W * sizeof *lv);
		if (!lv)
			return SKV_ENOMEM;
		for (size_t s = 0; s < S; s++) {
			r->init(x, lv + s * W);
			r->add(x, lv + s * W, s);
		}
		/* Level by level: (0+1) (2+3) ...; an odd last node moves up. */
		for (size_t n = S; n > 1; n = (n + 1) / 2)
			for (size_t i = 0; i < n / 2; i++) {
				r->combine(x, lv + 2 * i * W, lv + (2 * i + 1) * W);
				if (i)
					memmove(lv + i * W, lv + 2 * i * W, W * sizeof *lv);
				if (n % 2 && i == n / 2 - 1)
					memmove(lv + (i + 1) * W, lv + (n - 1) * W, W * sizeof *lv);
			}
		memcpy(res, lv, W * sizeof *lv);
		free(lv);
		return SKV_OK;
	}
	if (ord == SKV_ORDER_STRIDED) {
		size_t T = x->spec->threads < S ? x->spec->threads : S;
		double *part = malloc(W * sizeof *part);
		if (!part)
			return SKV_ENOMEM;
		r->init(x, res);
		for (size_t t = 0; t < T; t++) {
			r->init(x, part);
			for (size_t s = t; s < S; s += T)
				r->add(x, part, s);
			if (r->seal)
				r->seal(x, part);
			r->combine(x, res, part);
		}
		free(part);
		return SKV_OK;
	}
	r->init(x, res);
	for (size_t k = 0; k < S; k++)
		r->add(x, res, perm[k]);
	return SKV_OK;
}

static int spec_check(const skv_merge_spec *s)
{
	return s && (unsigned)s->merge < SKV_NMERGES && (unsigned)s->order < SKV_NORDERS &&
	       (unsigned)s->empty < SKV_NEMPTY && s->threads >= 1;
}

int skv_merge_run(double *out, double *lse, const skv_partials *sp, const skv_merge_spec *spec,
		  const skv_config *cfg)
{
	/* o and lse are always read; flex reads the split maxes, sums and
	 * accumulators (m, l, acc), which a partials struct may leave NULL.
	 * The sizes must leave room for the reducers' (d + 2)-wide states of
	 * all S splits (the tree order keeps one per split). */
	if (!out || !lse || !sp || !sp->o || !sp->lse || sp->S == 0 || sp->d == 0 || !spec_check(spec) ||
	    skv_config_check(cfg) != SKV_OK || sp->d > SIZE_MAX / sizeof(double) - 2 ||
	    sp->S > SIZE_MAX / (sp->d + 2) / sizeof(double) ||
	    (spec->merge == SKV_MERGE_FLEX && (!sp->m || !sp->l || !sp->acc)))
		return SKV_EINVAL;
	const size_t S = sp->S, d = sp->d;
	mctx x = {sp, spec, cfg, cfg->combine, cfg->base == SKV_BASE_2,
		  spec->empty == SKV_EMPTY_GUARD || spec->empty == SKV_EMPTY_FA3, NULL, NULL, NULL};
	size_t *perm = malloc(S * sizeof *perm);
	double *ew = malloc(2 * S * sizeof *ew), *nan = malloc(d * sizeof *nan);
	double *acc = malloc((d + 2) * sizeof *acc), *res = malloc(d * sizeof *res);
	int st = SKV_ENOMEM;
	if (!perm || !ew || !nan || !acc || !res)
		goto done;
	for (size_t i = 0; i < d; i++)
		nan[i] = NAN;
	x.nan = nan;
	x.e = ew;
	x.w = ew + S;
	if ((st = make_perm(perm, sp, spec)) != SKV_OK)
		goto done;

	const skv_format c = x.c;
	double L;
	if (spec->merge == SKV_MERGE_PAIRWISE) {
		reducer r = {d + 2, st_init, st_add, st_combine, st_seal};
		if ((st = reduce(acc, &r, &x, perm)) != SKV_OK)
			goto done;
		if (x.guard && acc[0] == -INFINITY) {
			memset(res, 0, d * sizeof *res);
			L = -INFINITY;
		} else {
			for (size_t i = 0; i < d; i++)
				res[i] = skv_div_i(c, acc[2 + i], acc[1]);
			L = skv_add_i(c, acc[0], lg_(&x, acc[1]));
		}
	} else if (spec->merge == SKV_MERGE_FLEX) {
		/* FlexAttention decode: global max of the split maxes, then the
		 * rescaled sums and accumulators, one division at the end; rows
		 * whose max is -inf are masked to zero. */
		double M = -INFINITY;
		for (size_t s = 0; s < S; s++)
			M = fmax(M, sp->m[s]);
		if (M == -INFINITY && spec->empty != SKV_EMPTY_NONE) {
			memset(res, 0, d * sizeof *res);
			L = -INFINITY;
		} else {
			for (size_t s = 0; s < S; s++)
				ew[s] = e_(&x, skv_sub_i(c, sp->m[s], M));
			reducer r = {d + 1, flex_init, flex_add, flex_combine, NULL};
			if ((st = reduce(acc, &r, &x, perm)) != SKV_OK)
				goto done;
			for (size_t i = 0; i < d; i++)
				res[i] = skv_div_i(c, acc[i + 1], acc[0]);
			L = skv_add_i(c, M, lg_(&x, acc[0]));
		}
	} else {
		/* One pass over the LSEs (FlashAttention's combine), also the LSE of
		 * the controls: M = max L_s, LSE = M + log sum e(L_s - M). */
		double M = -INFINITY;
		for (size_t s = 0; s < S; s++)
			M = fmax(M, sp->lse[s]);
		int all_empty = M == -INFINITY;
		if (all_empty && spec->empty == SKV_EMPTY_GUARD) {
			L = -INFINITY;
		} else {
			if (all_empty && (spec->empty == SKV_EMPTY_FA2 || spec->empty == SKV_EMPTY_FA3))
				M = 0.0; /* both FlashAttentions: max == -inf uses 0 */
			for (size_t s = 0; s < S; s++)
				ew[s] = e_(&x, skv_sub_i(c, sp->lse[s], M));
			reducer r = {1, zero_init, esum_add, ssum_combine, NULL};
			if ((st = reduce(acc, &r, &x, perm)) != SKV_OK)
				goto done;
			double sum = acc[0];
			if ((spec->empty == SKV_EMPTY_FA2 || spec->empty == SKV_EMPTY_FA3) && (sum == 0.0 || isnan(sum)))
				L = spec->empty == SKV_EMPTY_FA2 ? INFINITY : -INFINITY;
			else
				L = skv_add_i(c, lg_(&x, sum), M);
		}
		if (spec->merge == SKV_MERGE_ONEPASS) {
			if (all_empty && spec->empty == SKV_EMPTY_GUARD) {
				memset(res, 0, d * sizeof *res);
			} else {
				for (size_t s = 0; s < S; s++)
					ew[S + s] = e_(&x, skv_sub_i(c, sp->lse[s], L));
				reducer r = {d, vzero_init, wsum_add, vsum_combine, NULL};
				if ((st = reduce(res, &r, &x, perm)) != SKV_OK)
					goto done;
			}
		} else {
			reducer r = {d, vzero_init, rsum_add, vsum_combine, NULL};
			if ((st = reduce(res, &r, &x, perm)) != SKV_OK)
				goto done;
			if (spec->merge == SKV_MERGE_MEAN) {
				double n = skv_round_i(c, (double)S);
				for (size_t i = 0; i < d; i++)
					res[i] = skv_div_i(c, res[i], n);
			}
		}
	}
	for (size_t i = 0; i < d; i++)
		out[i] = skv_round_i(cfg->output, res[i]);
	*lse = skv_lse_to_natural(L, cfg->base);
	st = SKV_OK;
done:
	free(perm);
	free(ew);
	free(nan);
	free(acc);
	free(res);
	return st;
}
