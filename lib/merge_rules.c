/* merge_rules.c - the merge rules, one function each: one-pass, pairwise state, Flex, and the wrong-on-purpose mean and sum. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "merge_internal.h"
#include "fmt_inline.h"

double skv_mexp(const skv_mctx *x, double t)
{
	return x->base2 ? skv_m_exp2(&x->mt, x->c, t) : skv_m_exp(&x->mt, x->c, t);
}
double skv_mlog(const skv_mctx *x, double t)
{
	return x->base2 ? skv_m_log2(&x->mt, x->c, t) : skv_m_log(&x->mt, x->c, t);
}

double skv_mrcp(const skv_mctx *x, double t) { return skv_m_rcp(&x->mt, x->c, t); }

void skv_mnorm(const skv_mctx *x, double *out, const double *acc, double l)
{
	if (x->spec->norm == SKV_NORM_RCP) {
		double r = skv_mrcp(x, l);
		for (size_t i = 0; i < x->sp->d; i++)
			out[i] = skv_mul_i(x->c, acc[i], r);
	} else {
		for (size_t i = 0; i < x->sp->d; i++)
			out[i] = skv_m_div(&x->mt, x->c, acc[i], l);
	}
}

const double *skv_row_o(const skv_mctx *x, size_t s)
{
	if (x->em->unwritten && x->sp->lse[s] == -INFINITY)
		return x->nan;
	return x->sp->o + s * x->sp->d;
}

const double *skv_row_acc(const skv_mctx *x, size_t s)
{
	if (x->em->unwritten && x->sp->m[s] == -INFINITY)
		return x->nan;
	return x->sp->acc + s * x->sp->d;
}

/* ----------------------------------------------------------- reducers */

void skv_r_zero(const skv_mctx *x, double *a)
{
	(void)x;
	a[0] = 0.0;
}
void skv_r_vzero(const skv_mctx *x, double *a) { memset(a, 0, x->sp->d * sizeof *a); }
void skv_r_v1zero(const skv_mctx *x, double *a) { memset(a, 0, (x->sp->d + 1) * sizeof *a); }
void skv_r_esum(const skv_mctx *x, double *a, size_t s) { a[0] = skv_add_i(x->c, a[0], x->e[s]); }
void skv_r_ssum(const skv_mctx *x, double *a, const double *b) { a[0] = skv_add_i(x->c, a[0], b[0]); }

void skv_r_vsum(const skv_mctx *x, double *a, const double *b)
{
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_add_i(x->c, a[i], b[i]);
}

void skv_r_v1sum(const skv_mctx *x, double *a, const double *b)
{
	for (size_t i = 0; i <= x->sp->d; i++)
		a[i] = skv_add_i(x->c, a[i], b[i]);
}

/* out += w_s O_s, fused as FlashAttention's combine (nvcc contracts the
 * multiply-add to FFMA, flash_fwd_kernel.h:1252-1264). An unwritten-row
 * policy (FA3) skips splits whose weight is not > 0, so it never reads
 * their rows. */
static void wsum_add(const skv_mctx *x, double *a, size_t s)
{
	double w = x->w[s];
	if (x->em->unwritten && !(w > 0.0))
		return;
	const double *o = skv_row_o(x, s);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_fma_i(x->c, w, o[i], a[i]);
}

/* the controls: plain sum of the partial rows */
static void rsum_add(const skv_mctx *x, double *a, size_t s)
{
	const double *o = skv_row_o(x, s);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_add_i(x->c, a[i], o[i]);
}

/* Flex: l = sum_s l_s e_s in a[0], acc = sum_s acc_s e_s after it */
static void flex_add(const skv_mctx *x, double *a, size_t s)
{
	double es = x->e[s];
	const double *acc = skv_row_acc(x, s);
	a[0] = skv_fma_i(x->c, x->sp->l[s], es, a[0]);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i + 1] = skv_fma_i(x->c, acc[i], es, a[i + 1]);
}

/* ------------------------------------------------------ one-pass LSE */

/* The LSE of the one-pass family (FlashAttention's combine, also the LSE
 * of the controls): M = max L_s, LSE = M + log sum e(L_s - M), with the
 * policy's substitute for M = -inf and its LSE for a sum of 0 or NaN;
 * e_s = e(L_s - M) is left in x->e. *all_empty says M was -inf. */
static int onepass_lse(double *L, int *all_empty, const skv_mctx *x)
{
	const skv_partials *sp = x->sp;
	double M = -INFINITY;
	for (size_t s = 0; s < sp->S; s++)
		M = fmax(M, sp->lse[s]);
	*all_empty = M == -INFINITY;
	if (*all_empty && x->em->guard) {
		*L = -INFINITY;
		return SKV_OK;
	}
	if (*all_empty && !isnan(x->em->max_sub))
		M = x->em->max_sub;
	for (size_t s = 0; s < sp->S; s++)
		x->e[s] = skv_mexp(x, skv_sub_i(x->c, sp->lse[s], M));
	skv_reducer r = {1, skv_r_zero, skv_r_esum, skv_r_ssum, NULL};
	double sum;
	int st = skv_reduce(&sum, &r, x);
	if (st != SKV_OK)
		return st;
	if (!isnan(x->em->bad_sum_lse) && (sum == 0.0 || isnan(sum)))
		*L = x->em->bad_sum_lse;
	else
		*L = skv_add_i(x->c, skv_mlog(x, sum), M);
	return SKV_OK;
}

/* One pass (FA2, TileLang): w_s = e(L_s - LSE), out = sum_s w_s O_s. */
int skv_merge_onepass(double *res, double *L, const skv_mctx *x)
{
	int all_empty, st = onepass_lse(L, &all_empty, x);
	if (st != SKV_OK)
		return st;
	if (all_empty && x->em->guard) {
		memset(res, 0, x->sp->d * sizeof *res);
		return SKV_OK;
	}
	for (size_t s = 0; s < x->sp->S; s++)
		x->w[s] = skv_mexp(x, skv_sub_i(x->c, x->sp->lse[s], *L));
	skv_reducer r = {x->sp->d, skv_r_vzero, wsum_add, skv_r_vsum, NULL};
	return skv_reduce(res, &r, x);
}

/* The controls, wrong on purpose (the demonstration of skv's original
 * problem statement: averaging or summing partials ignores their mass): the plain sum
 * of the partials, and their mean; both return the one-pass LSE. */
int skv_merge_sum(double *res, double *L, const skv_mctx *x)
{
	int all_empty, st = onepass_lse(L, &all_empty, x);
	if (st != SKV_OK)
		return st;
	skv_reducer r = {x->sp->d, skv_r_vzero, rsum_add, skv_r_vsum, NULL};
	return skv_reduce(res, &r, x);
}

int skv_merge_mean(double *res, double *L, const skv_mctx *x)
{
	int st = skv_merge_sum(res, L, x);
	if (st != SKV_OK)
		return st;
	double n = skv_round_i(x->c, (double)x->sp->S);
	for (size_t i = 0; i < x->sp->d; i++)
		res[i] = skv_m_div(&x->mt, x->c, res[i], n);
	return SKV_OK;
}

/* --------------------------------------------------------- Flex */

/* FlexAttention decode (flex_decoding.py, the Reduction block): global max
 * of the split maxes, then the rescaled sums and accumulators, one
 * division at the end; a row whose max is -inf is masked to out 0,
 * LSE -inf unless the policy is "none". */
int skv_merge_flex(double *res, double *L, const skv_mctx *x)
{
	const skv_partials *sp = x->sp;
	const size_t d = sp->d;
	double M = -INFINITY;
	for (size_t s = 0; s < sp->S; s++)
		M = fmax(M, sp->m[s]);
	if (M == -INFINITY && (x->em->guard || !isnan(x->em->max_sub))) {
		memset(res, 0, d * sizeof *res);
		*L = -INFINITY;
		return SKV_OK;
	}
	for (size_t s = 0; s < sp->S; s++)
		x->e[s] = skv_mexp(x, skv_sub_i(x->c, sp->m[s], M));
	double *acc = malloc((d + 1) * sizeof *acc);
	if (!acc)
		return SKV_ENOMEM;
	skv_reducer r = {d + 1, skv_r_v1zero, flex_add, skv_r_v1sum, NULL};
	int st = skv_reduce(acc, &r, x);
	if (st == SKV_OK) {
		skv_mnorm(x, res, acc + 1, acc[0]);
		*L = skv_add_i(x->c, M, skv_mlog(x, acc[0]));
	}
	free(acc);
	return st;
}

/* --------------------------------------------------------- pairwise */

void skv_state_merge(double *ma, double *da, double *acca, double mb, double db, const double *accb,
		     size_t d, skv_format c, int base2, int guard, const skv_mth *mt)
{
	double m = fmax(*ma, mb);
	if (guard && m == -INFINITY)
		return;
	double ta = skv_sub_i(c, *ma, m), tb = skv_sub_i(c, mb, m);
	double x = base2 ? skv_m_exp2(mt, c, ta) : skv_m_exp(mt, c, ta);
	double y = base2 ? skv_m_exp2(mt, c, tb) : skv_m_exp(mt, c, tb);
	*da = skv_fma_i(c, *da, x, skv_mul_i(c, db, y));
	for (size_t i = 0; i < d; i++)
		acca[i] = skv_fma_i(c, acca[i], x, skv_mul_i(c, accb[i], y));
	*ma = m;
}

/* State (m, d, acc[]) in a[0], a[1], a[2..]. The initial state is
 * FlashInfer's: m = -inf, d = 1, acc = 0 (d is immaterial once a finite
 * state arrives: it is multiplied by e(-inf) = 0). */
static void st_init(const skv_mctx *x, double *a)
{
	a[0] = -INFINITY;
	a[1] = 1.0;
	memset(a + 2, 0, x->sp->d * sizeof *a);
}

static void st_add(const skv_mctx *x, double *a, size_t s)
{
	/* An empty split is skipped by every guarded system (SGLang's range
	 * check, FA3's scale test); without a guard it enters the formula. */
	int g = x->em->guard;
	if (g && x->sp->lse[s] == -INFINITY)
		return;
	skv_state_merge(&a[0], &a[1], a + 2, x->sp->lse[s], 1.0, skv_row_o(x, s), x->sp->d, x->c, x->base2, g,
			&x->mt);
}

static void st_combine(const skv_mctx *x, double *a, const double *b)
{
	skv_state_merge(&a[0], &a[1], a + 2, b[0], b[1], b + 2, x->sp->d, x->c, x->base2, x->em->guard, &x->mt);
}

/* FlashInfer: each thread normalizes its state and writes (o, lse) to shared
 * memory, o in the smem type DTypeIn, which is the type of the partials V
 * the merge reads (cascade.cuh:129-131, 386 at flashinfer-ai/flashinfer
 * fb28d7242b35), before the states are merged again. */
static void st_seal(const skv_mctx *x, double *a)
{
	if (x->em->guard && a[0] == -INFINITY)
		return;
	skv_mnorm(x, a + 2, a + 2, a[1]);
	for (size_t i = 0; x->spec->round_states && i < x->sp->d; i++)
		a[2 + i] = skv_round_i(x->cfg->partial, a[2 + i]);
	a[0] = skv_add_i(x->c, a[0], skv_mlog(x, a[1]));
	a[1] = 1.0;
}

/* The online state merge folded over the splits (FlashInfer, SGLang). */
int skv_merge_pairwise(double *res, double *L, const skv_mctx *x)
{
	const size_t d = x->sp->d;
	double *acc = malloc((d + 2) * sizeof *acc);
	if (!acc)
		return SKV_ENOMEM;
	skv_reducer r = {d + 2, st_init, st_add, st_combine, st_seal};
	int st = skv_reduce(acc, &r, x);
	if (st == SKV_OK && x->em->guard && acc[0] == -INFINITY) {
		memset(res, 0, d * sizeof *res);
		*L = -INFINITY;
	} else if (st == SKV_OK) {
		skv_mnorm(x, res, acc + 2, acc[1]);
		*L = skv_add_i(x->c, acc[0], skv_mlog(x, acc[1]));
	}
	free(acc);
	return st;
}
