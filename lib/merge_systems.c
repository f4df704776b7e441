/* merge_systems.c - the merge rules of FA3 (normalised weights), xformers (ratio), vLLM v2 and llama.cpp CPU (running merge); skv.h gives each formula and its source. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "merge_internal.h"
#include "fmt_inline.h"

/* Triton's literal for log2 e in xformers' combine, rounded to the
 * combine format as Triton types a float literal times an fp32 tensor
 * (splitk_kernels.py:987, :1018). */
#define XF_LOG2E 1.44269504

/* The sum of e_s over the splits in the spec's order. */
static int esum(double *sum, const skv_mctx *x)
{
	skv_reducer r = {1, skv_r_zero, skv_r_esum, skv_r_ssum, NULL};
	return skv_reduce(sum, &r, x);
}

/* max_s of v[s] from `start` (fmax: a NaN entry is passed over). */
static double vmax(const double *v, size_t S, double start)
{
	double M = start;
	for (size_t s = 0; s < S; s++)
		M = fmax(M, v[s]);
	return M;
}

static void masked(double *res, double *L, const skv_mctx *x)
{
	memset(res, 0, x->sp->d * sizeof *res);
	*L = -INFINITY;
}

/* ------------------------------------------------- FA3: onepass-norm */

/* out += w_s O_s by FFMA, skipping w_s not > 0 as FA3 does
 * (flash_fwd_combine_kernel.h:685: `scale(m) > 0.f`), so an unwritten row
 * is never read. */
static void fa3_add(const skv_mctx *x, double *a, size_t s)
{
	double w = x->w[s];
	if (!(w > 0.0))
		return;
	const double *o = skv_row_o(x, s);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_fma_i(x->c, w, o[i], a[i]);
}

int skv_merge_onepass_norm(double *res, double *L, const skv_mctx *x)
{
	const skv_partials *sp = x->sp;
	double M = vmax(sp->lse, sp->S, -INFINITY), Ms = M;
	if (M == -INFINITY && x->em->guard) {
		masked(res, L, x);
		return SKV_OK;
	}
	if (M == -INFINITY && !isnan(x->em->max_sub))
		Ms = x->em->max_sub; /* lse_max_cur, :604 */
	for (size_t s = 0; s < sp->S; s++)
		x->e[s] = skv_mexp(x, skv_sub_i(x->c, sp->lse[s], Ms));
	double sum;
	int st = esum(&sum, x);
	if (st != SKV_OK)
		return st;
	*L = skv_add_i(x->c, skv_mlog(x, sum), M); /* logf(lse_sum_cur) + lse_max, :614 */
	double inv = sum == 0.0 || isnan(sum) ? 0.0 : skv_mrcp(x, sum);
	for (size_t s = 0; s < sp->S; s++)
		x->w[s] = skv_mul_i(x->c, x->e[s], inv);
	skv_reducer r = {sp->d, skv_r_vzero, fa3_add, skv_r_vsum, NULL};
	return skv_reduce(res, &r, x);
}

/* ------------------------------------------------------ xformers: ratio */

/* den in a[0], num = sum RN(O_s e_s) after it: tl.sum of the products */
static void ratio_add(const skv_mctx *x, double *a, size_t s)
{
	double e = x->e[s];
	const double *o = skv_row_o(x, s);
	a[0] = skv_add_i(x->c, a[0], e);
	for (size_t i = 0; i < x->sp->d; i++)
		a[i + 1] = skv_add_i(x->c, a[i + 1], skv_mul_i(x->c, o[i], e));
}

/* The wider of the LSE storage and combine formats (ties: combine). */
static skv_format wider(const skv_mctx *x)
{
	skv_format l = x->cfg->lse;
	return skv_format_precision(l) > skv_format_precision(x->c) ? l : x->c;
}

int skv_merge_ratio(double *res, double *L, const skv_mctx *x)
{
	const skv_partials *sp = x->sp;
	const skv_format c = x->c;
	const int e2 = x->cfg->base == SKV_BASE_E2;
	const double k = skv_round_i(c, XF_LOG2E);
	double M = vmax(sp->lse, sp->S, -INFINITY);
	if (M == -INFINITY && (x->em->guard || !isnan(x->em->max_sub))) {
		masked(res, L, x); /* where(lse_max == -inf, 0, acc), :995, :1019 */
		return SKV_OK;
	}
	for (size_t s = 0; s < sp->S; s++) {
		double t = skv_sub_i(c, sp->lse[s], M);
		x->e[s] = e2 ? skv_m_exp2(&x->mt, c, skv_mul_i(c, t, k)) : skv_mexp(x, t);
	}
	double *a = malloc((sp->d + 1) * sizeof *a);
	if (!a)
		return SKV_ENOMEM;
	skv_reducer r = {sp->d + 1, skv_r_v1zero, ratio_add, skv_r_v1sum, NULL};
	int st = skv_reduce(a, &r, x);
	if (st == SKV_OK) {
		skv_mnorm(x, res, a + 1, a[0]);
		double t = e2 ? skv_m_div(&x->mt, c, skv_m_log2(&x->mt, c, a[0]), k) : skv_mlog(x, a[0]);
		*L = skv_add_i(wider(x), M, t);
	}
	free(a);
	return st;
}

/* ------------------------------------------------------------- vLLM v2 */

/* acc += RN(O_s r_s) inv, contracted to FFMA (attention_kernels.cuh,
 * paged_attention_v2_reduce_kernel's last loop); inv is in x->w[0]. */
static void vllm_add(const skv_mctx *x, double *a, size_t s)
{
	const double *o = skv_row_o(x, s), inv = x->w[0];
	for (size_t i = 0; i < x->sp->d; i++)
		a[i] = skv_fma_i(x->c, skv_mul_i(x->c, o[i], x->e[s]), inv, a[i]);
}

int skv_merge_vllm(double *res, double *L, const skv_mctx *x)
{
	const skv_partials *sp = x->sp;
	const skv_format c = x->c;
	if (sp->S == 1) { /* num_partitions == 1: tmp_out is copied */
		memcpy(res, skv_row_o(x, 0), sp->d * sizeof *res);
		*L = sp->lse[0];
		return SKV_OK;
	}
	if (x->em->guard && vmax(sp->m, sp->S, -INFINITY) == -INFINITY) {
		masked(res, L, x);
		return SKV_OK;
	}
	double M = vmax(sp->m, sp->S, -skv_format_max(c)); /* max_logit = -FLT_MAX */
	for (size_t s = 0; s < sp->S; s++)
		x->e[s] = skv_mul_i(c, sp->l[s], skv_mexp(x, skv_sub_i(c, sp->m[s], M)));
	double G;
	int st = esum(&G, x);
	if (st != SKV_OK)
		return st;
	x->w[0] = skv_mrcp(x, skv_add_i(c, G, skv_round_i(c, 1e-6))); /* __fdividef(1.0f, G + 1e-6f) */
	skv_reducer r = {sp->d, skv_r_vzero, vllm_add, skv_r_vsum, NULL};
	st = skv_reduce(res, &r, x);
	*L = skv_add_i(c, M, skv_mlog(x, G));
	return st;
}

/* ------------------------------------------------- llama.cpp CPU: running */

/* state (M, S, acc[d]) in a[0], a[1], a[2..], from (-inf, 0, 0) */
static void run_init(const skv_mctx *x, double *a)
{
	a[0] = -INFINITY;
	a[1] = 0.0;
	memset(a + 2, 0, x->sp->d * sizeof *a);
}

static void run_add(const skv_mctx *x, double *a, size_t s)
{
	const int g = x->em->guard;
	if (g && x->sp->l[s] == 0.0) /* if (S_chunk == 0.0f) continue; */
		return;
	skv_state_merge(&a[0], &a[1], a + 2, x->sp->m[s], x->sp->l[s], skv_row_acc(x, s), x->sp->d, x->c, x->base2,
			g, &x->mt);
}

static void run_combine(const skv_mctx *x, double *a, const double *b)
{
	skv_state_merge(&a[0], &a[1], a + 2, b[0], b[1], b + 2, x->sp->d, x->c, x->base2, x->em->guard, &x->mt);
}

int skv_merge_running(double *res, double *L, const skv_mctx *x)
{
	const size_t d = x->sp->d;
	double *a = malloc((d + 2) * sizeof *a);
	if (!a)
		return SKV_ENOMEM;
	skv_reducer r = {d + 2, run_init, run_add, run_combine, NULL};
	int st = skv_reduce(a, &r, x);
	if (st == SKV_OK) {
		if (a[1] != 0.0) /* if (S_final != 0.0f) scale by 1/S */
			skv_mnorm(x, res, a + 2, a[1]);
		else
			memcpy(res, a + 2, d * sizeof *res);
		*L = skv_add_i(x->c, a[0], skv_mlog(x, a[1]));
	}
	free(a);
	return st;
}
