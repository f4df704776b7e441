/* kernel.c - the split kernel: per-split online softmax, normalized partial outputs and LSEs, and their storage. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "scan.h"
#include "fmt_inline.h"
#include "problem_internal.h"

int skv_partials_init(skv_partials *sp, size_t S, size_t d)
{
	if (!sp || S == 0 || d == 0 || S > SIZE_MAX / d / sizeof(double))
		return SKV_EINVAL;
	skv_partials t = {S, d, NULL, NULL, NULL, NULL, NULL};
	t.o = calloc(S * d, sizeof *t.o);
	t.acc = calloc(S * d, sizeof *t.acc);
	t.lse = calloc(S, sizeof *t.lse);
	t.m = calloc(S, sizeof *t.m);
	t.l = calloc(S, sizeof *t.l);
	if (!t.o || !t.acc || !t.lse || !t.m || !t.l) {
		skv_partials_free(&t);
		return SKV_ENOMEM;
	}
	*sp = t;
	return SKV_OK;
}

void skv_partials_free(skv_partials *sp)
{
	if (!sp)
		return;
	free(sp->o);
	free(sp->acc);
	free(sp->lse);
	free(sp->m);
	free(sp->l);
	memset(sp, 0, sizeof *sp);
}

int skv_bounds_even(size_t *bounds, size_t n, size_t S)
{
	if (!bounds || S == 0 || S > n)
		return SKV_EINVAL;
	/* s * n / S without overflow for any size_t n: n = a S + r. */
	size_t a = n / S, r = n % S;
	for (size_t s = 0; s <= S; s++)
		bounds[s] = s * a + s * r / S;
	return SKV_OK;
}

static int bounds_ok(const size_t *bounds, size_t S, size_t n)
{
	if (bounds[0] != 0 || bounds[S] != n)
		return 0;
	for (size_t s = 0; s < S; s++)
		if (bounds[s] > bounds[s + 1])
			return 0;
	return 1;
}

/* The score buffer a split needs: one block, or the longest tile when
 * blocks are longer (any block size up to SIZE_MAX allocates only what is
 * used); the longest tile has at most n keys, and n * d doubles already
 * exist as K. A pnorm formula scores a whole split at once. */
static size_t zbuf_len(const size_t *tiles, size_t ntiles, size_t block)
{
	size_t longest = 0;
	for (size_t t = 0; t < ntiles; t++)
		if (tiles[t + 1] - tiles[t] > longest)
			longest = tiles[t + 1] - tiles[t];
	size_t z = block == 0 || block > longest ? longest : block;
	return z ? z : 1;
}

/* The problem's sizes and arrays: K and V through s (any store). */
static int problem_ok(const skv_kv *s, size_t row)
{
	const skv_problem *p = s->p;
	return p && skv_kv_ok(s) && p->q && row < p->nq && p->d > 0 && p->n <= SIZE_MAX / p->d / sizeof(double) &&
	       p->nq <= SIZE_MAX / p->d / sizeof(double);
}

static int kernel_args_ok(const skv_partials *out, const skv_kv *s, size_t row, const size_t *tiles,
			  size_t ntiles, size_t S, double lse_offset, const skv_config *cfg)
{
	return out && problem_ok(s, row) && tiles && S > 0 && ntiles > 0 && skv_config_check(cfg) == SKV_OK &&
	       !isnan(lse_offset) && !isinf(lse_offset) && out->S == S && out->d == s->p->d && out->o && out->acc &&
	       out->lse && out->m && out->l && bounds_ok(tiles, ntiles, s->p->n) &&
	       (!skv_formula_row_of(cfg->formula)->pnorm || ntiles <= S);
}

int skv_scores_shared(const skv_config *a, const skv_config *b)
{
	/* a GPU's q.k is its MMA chain (scan.c, score), not IEEE's */
	return a && b && a->compute == b->compute && a->formula == b->formula && a->base == b->base &&
	       a->gpu == b->gpu;
}

static int scores_kv(double *z, const skv_kv *s, size_t row, size_t lo, size_t hi, double lse_offset,
		     const skv_config *cfg)
{
	if (!z || !problem_ok(s, row) || lo > hi || hi > s->p->n || skv_config_check(cfg) != SKV_OK ||
	    isnan(lse_offset) || isinf(lse_offset))
		return SKV_EINVAL;
	const skv_problem *p = s->p;
	skv_rows rd;
	/* q, and for a tensor-core config the keys' transposes (scan.h) */
	double *qs = malloc((cfg->gpu ? 9 : 1) * p->d * sizeof *qs);
	if (!qs || skv_rows_open(&rd, s, lo, hi) != SKV_OK) {
		free(qs);
		return SKV_ENOMEM;
	}
	skv_scan_consts sc;
	skv_scan_consts_init(&sc, p->scale, lse_offset, cfg);
	skv_scan_query(qs, p->q + row * p->d, p->d, &sc, cfg);
	skv_scan_scores(z, qs, &rd, p->d, lo, hi, &sc, cfg, cfg->gpu ? qs + p->d : NULL);
	skv_rows_close(&rd);
	free(qs);
	return SKV_OK;
}

int skv_scores(double *z, const skv_problem *p, size_t row, double lse_offset, const skv_config *cfg)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_plain(p);
	return scores_kv(z, &s, row, 0, p->n, lse_offset, cfg);
}

int skv_scores_packed(double *z, const skv_packed *p, size_t row, size_t lo, size_t hi, double lse_offset,
		      const skv_config *cfg)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_packed(p);
	return scores_kv(z, &s, row, lo, hi, lse_offset, cfg);
}

/* The split kernel on K and V read through s, with the scores z (or NULL). */
static int kernel_kv(skv_partials *out, const skv_kv *s, size_t row, const double *z, const size_t *tiles,
		     size_t ntiles, size_t S, size_t block, double lse_offset, const skv_config *cfg)
{
	if (!kernel_args_ok(out, s, row, tiles, ntiles, S, lse_offset, cfg))
		return SKV_EINVAL;
	const skv_problem *p = s->p;
	const size_t d = p->d;
	const int pnorm = skv_formula_row_of(cfg->formula)->pnorm;
	double *zbuf = malloc(skv_scan_zlen(zbuf_len(tiles, ntiles, pnorm ? 0 : block), d, cfg) * sizeof *zbuf);
	double *qs = malloc(d * sizeof *qs), *lane = cfg->lanes > 1 ? malloc(cfg->lanes * sizeof *lane) : NULL;
	skv_rows rd;
	int st = zbuf && qs && (cfg->lanes <= 1 || lane) ? skv_rows_open(&rd, s, 0, p->n) : SKV_ENOMEM;
	if (st != SKV_OK) {
		free(zbuf);
		free(qs);
		free(lane);
		return SKV_ENOMEM;
	}
	skv_scan_consts sc;
	skv_scan_consts_init(&sc, p->scale, lse_offset, cfg);
	skv_scan_query(qs, p->q + row * d, d, &sc, cfg);
	const int rev = cfg->blocks == SKV_BLOCKS_REVERSE;
	for (size_t sp = 0; sp < S; sp++) {
		skv_scan_state ss = {0.0, 0.0, lane, out->acc + sp * d, z};
		skv_scan_reset(&ss, d, cfg);
		/* split sp holds tiles sp, sp + S, ...: nt of them */
		size_t nt = sp < ntiles ? (ntiles - sp - 1) / S + 1 : 0;
		for (size_t i = 0; i < nt; i++) {
			size_t t = sp + (rev ? nt - 1 - i : i) * S;
			skv_scan(&ss, qs, &rd, d, tiles[t], tiles[t + 1], block, &sc, cfg, zbuf);
		}
		skv_scan_finish(out->o + sp * d, &out->lse[sp], &out->m[sp], &out->l[sp], &ss, d, &sc, cfg);
	}
	skv_rows_close(&rd);
	free(zbuf);
	free(qs);
	free(lane);
	return SKV_OK;
}

int skv_split_kernel_tiled(skv_partials *out, const skv_problem *p, size_t row, const size_t *tiles,
			   size_t ntiles, size_t S, size_t block, double lse_offset, const skv_config *cfg)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_plain(p);
	return kernel_kv(out, &s, row, NULL, tiles, ntiles, S, block, lse_offset, cfg);
}

int skv_split_kernel_packed(skv_partials *out, const skv_packed *p, size_t row, const double *z,
			    const size_t *tiles, size_t ntiles, size_t S, size_t block, double lse_offset,
			    const skv_config *cfg)
{
	if (!p)
		return SKV_EINVAL;
	const skv_kv s = skv_kv_packed(p);
	return kernel_kv(out, &s, row, z, tiles, ntiles, S, block, lse_offset, cfg);
}

int skv_split_kernel(skv_partials *out, const skv_problem *p, size_t row, const size_t *bounds,
		     size_t S, size_t block, double lse_offset, const skv_config *cfg)
{
	return skv_split_kernel_tiled(out, p, row, bounds, S, S, block, lse_offset, cfg);
}

/* Rounds n values of src to f into dst (either may be NULL only when the
 * other is). */
static void store_array(double *dst, const double *src, size_t n, skv_format f)
{
	for (size_t i = 0; src && i < n; i++)
		dst[i] = skv_round_i(f, src[i]);
}

int skv_partials_store(skv_partials *dst, const skv_partials *src, const skv_config *cfg)
{
	if (!dst || !src || skv_config_check(cfg) != SKV_OK || dst->S != src->S || dst->d != src->d ||
	    src->S == 0 || src->d == 0 || src->S > SIZE_MAX / src->d / sizeof(double) || !dst->o || !src->o ||
	    !dst->lse || !src->lse || (src->acc && !dst->acc) || (src->m && !dst->m) || (src->l && !dst->l))
		return SKV_EINVAL;
	const size_t n = src->S * src->d;
	store_array(dst->o, src->o, n, cfg->partial);
	store_array(dst->acc, src->acc, n, cfg->partial);
	store_array(dst->lse, src->lse, src->S, cfg->lse);
	store_array(dst->m, src->m, src->S, cfg->lse);
	store_array(dst->l, src->l, src->S, cfg->lse);
	return SKV_OK;
}
