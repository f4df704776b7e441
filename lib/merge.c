/* merge.c - the merge driver: rules, reduction orders and empty-split policies as tables, their names, and the orders' drivers. */
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

/* The merge rules, indexed by skv_merge, from merge_internal.h's list. */
static const struct {
	const char *name;
	skv_merge_fn run;
	int mla;
} rules[] = {
#define SKV_MERGE_ROW(id, nm, fn, mla_) [id] = {nm, fn, mla_},
	SKV_MERGE_RULES(SKV_MERGE_ROW)
#undef SKV_MERGE_ROW
};
#define SKV_MERGE_ONE(...) +1
_Static_assert(0 SKV_MERGE_RULES(SKV_MERGE_ONE) == SKV_NMERGES, "one row per merge rule");
#undef SKV_MERGE_ONE

/* The reduction orders, indexed by skv_order. */
static const char *const order_names[SKV_NORDERS] = {
	[SKV_ORDER_SEQ] = "seq",   [SKV_ORDER_REV] = "rev",   [SKV_ORDER_TREE] = "tree",
	[SKV_ORDER_RANDOM] = "random", [SKV_ORDER_ASC] = "asc", [SKV_ORDER_DESC] = "desc",
	[SKV_ORDER_STRIDED] = "strided", [SKV_ORDER_LANES] = "lanes",
};

static const char *const norm_names[SKV_NNORMS] = {[SKV_NORM_DIV] = "div", [SKV_NORM_RCP] = "rcp"};

/* The empty-split policies, indexed by skv_empty (the fields are
 * explained in merge_internal.h). */
static const skv_empty_row empty_rows[SKV_NEMPTY] = {
	/*                     name     unwritten guard max_sub bad_sum_lse */
	[SKV_EMPTY_GUARD] = {"guard", 0, 1, NAN, NAN},
	[SKV_EMPTY_FA2] = {"fa2", 0, 0, 0.0, INFINITY},
	[SKV_EMPTY_FA3] = {"fa3", 1, 1, 0.0, -INFINITY},
	[SKV_EMPTY_NONE] = {"none", 0, 0, NAN, NAN},
};

const skv_empty_row *skv_empty_row_of(skv_empty e) { return &empty_rows[e]; }

const char *skv_merge_name(skv_merge m) { return (unsigned)m < SKV_NMERGES ? rules[m].name : NULL; }
const char *skv_order_name(skv_order o) { return (unsigned)o < SKV_NORDERS ? order_names[o] : NULL; }
const char *skv_empty_name(skv_empty e) { return (unsigned)e < SKV_NEMPTY ? empty_rows[e].name : NULL; }
const char *skv_norm_name(skv_norm n) { return (unsigned)n < SKV_NNORMS ? norm_names[n] : NULL; }

/* The index of `name` among n names reached through name_at; -1 if none. */
static int find_name(const char *(*name_at)(unsigned), unsigned n, const char *name)
{
	for (unsigned i = 0; name && i < n; i++)
		if (strcmp(name_at(i), name) == 0)
			return (int)i;
	return -1;
}

static const char *merge_at(unsigned i) { return rules[i].name; }
static const char *order_at(unsigned i) { return order_names[i]; }
static const char *empty_at(unsigned i) { return empty_rows[i].name; }
static const char *norm_at(unsigned i) { return norm_names[i]; }

int skv_merge_parse(skv_merge *m, const char *name)
{
	int i = find_name(merge_at, SKV_NMERGES, name);
	if (!m || i < 0)
		return SKV_EINVAL;
	*m = (skv_merge)i;
	return SKV_OK;
}

int skv_order_parse(skv_order *o, const char *name)
{
	int i = find_name(order_at, SKV_NORDERS, name);
	if (!o || i < 0)
		return SKV_EINVAL;
	*o = (skv_order)i;
	return SKV_OK;
}

int skv_empty_parse(skv_empty *e, const char *name)
{
	int i = find_name(empty_at, SKV_NEMPTY, name);
	if (!e || i < 0)
		return SKV_EINVAL;
	*e = (skv_empty)i;
	return SKV_OK;
}

int skv_norm_parse(skv_norm *n, const char *name)
{
	int i = find_name(norm_at, SKV_NNORMS, name);
	if (!n || i < 0)
		return SKV_EINVAL;
	*n = (skv_norm)i;
	return SKV_OK;
}

skv_merge_spec skv_merge_spec_default(void)
{
	skv_merge_spec s = {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_GUARD, 0, SKV_NORM_DIV};
	return s;
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

/* The pairwise tree: (0+1) (2+3) ... level by level; an odd last node
 * moves up unchanged. */
static int reduce_tree(double *res, const skv_reducer *r, const skv_mctx *x)
{
	const size_t S = x->sp->S, W = r->width;
	double *lv = malloc(S * W * sizeof *lv);
	if (!lv)
		return SKV_ENOMEM;
	for (size_t s = 0; s < S; s++) {
		r->init(x, lv + s * W);
		r->add(x, lv + s * W, s);
	}
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

/* FlashInfer's strided subsets: subset t holds splits t, t + T, ... in
 * order, is sealed, and the subsets are combined in order. */
static int reduce_strided(double *res, const skv_reducer *r, const skv_mctx *x)
{
	const size_t S = x->sp->S;
	size_t T = x->spec->threads < S ? x->spec->threads : S;
	double *part = malloc(r->width * sizeof *part);
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

/* GPU lanes (SKV_ORDER_LANES in skv.h): for a reducer of one value (every
 * such reducer here is a sum in the combine format), lane t folds splits
 * t, t + T, ... in order, then the lanes' butterfly (lib/scan.c). */
static int reduce_lanes(double *res, const skv_reducer *r, const skv_mctx *x)
{
	const size_t S = x->sp->S, T = x->spec->threads;
	double *a = malloc(T * sizeof *a);
	if (!a)
		return SKV_ENOMEM;
	for (size_t t = 0; t < T; t++) {
		r->init(x, a + t);
		for (size_t s = t; s < S; s += T)
			r->add(x, a + t, s);
	}
	res[0] = skv_butterfly(a, T, x->c);
	free(a);
	return SKV_OK;
}

int skv_reduce(double *res, const skv_reducer *r, const skv_mctx *x)
{
	if (x->spec->order == SKV_ORDER_LANES && r->width == 1)
		return reduce_lanes(res, r, x);
	if (x->spec->order == SKV_ORDER_TREE)
		return reduce_tree(res, r, x);
	if (x->spec->order == SKV_ORDER_STRIDED)
		return reduce_strided(res, r, x);
	r->init(x, res);
	for (size_t k = 0; k < x->sp->S; k++)
		r->add(x, res, x->perm[k]);
	return SKV_OK;
}

static int spec_check(const skv_merge_spec *s)
{
	return s && (unsigned)s->merge < SKV_NMERGES && (unsigned)s->order < SKV_NORDERS &&
	       (unsigned)s->empty < SKV_NEMPTY && (unsigned)s->norm < SKV_NNORMS && s->threads >= 1 &&
	       (s->order != SKV_ORDER_LANES || (s->threads <= 1024 && (s->threads & (s->threads - 1)) == 0));
}

static int merge_args_ok(const double *out, const double *lse, const skv_partials *sp,
			 const skv_merge_spec *spec, const skv_config *cfg)
{
	/* The sizes must leave room for the reducers' (d + 2)-wide states of
	 * all S splits (the tree order keeps one per split). */
	return out && lse && sp && sp->o && sp->lse && sp->S > 0 && sp->d > 0 && spec_check(spec) &&
	       skv_config_check(cfg) == SKV_OK && sp->d <= SIZE_MAX / sizeof(double) - 2 &&
	       sp->S <= SIZE_MAX / (sp->d + 2) / sizeof(double) &&
	       (!rules[spec->merge].mla || (sp->m && sp->l && sp->acc));
}

int skv_merge_run(double *out, double *lse, const skv_partials *sp, const skv_merge_spec *spec,
		  const skv_config *cfg)
{
	if (!merge_args_ok(out, lse, sp, spec, cfg))
		return SKV_EINVAL;
	const size_t S = sp->S, d = sp->d;
	size_t *perm = malloc(S * sizeof *perm);
	double *ew = malloc(2 * S * sizeof *ew), *nan = malloc(d * sizeof *nan);
	double *res = malloc(d * sizeof *res), L = 0.0;
	int st = SKV_ENOMEM;
	if (!perm || !ew || !nan || !res)
		goto done;
	for (size_t i = 0; i < d; i++)
		nan[i] = NAN;
	skv_mctx x = {sp, spec, cfg, skv_empty_row_of(spec->empty), cfg->combine, cfg->base == SKV_BASE_2,
		      ew, ew + S, nan, perm, skv_mth_of(cfg)};
	if ((st = make_perm(perm, sp, spec)) != SKV_OK || (st = rules[spec->merge].run(res, &L, &x)) != SKV_OK)
		goto done;
	for (size_t i = 0; i < d; i++)
		out[i] = skv_round_i(cfg->output, res[i]);
	*lse = skv_lse_to_natural(L, cfg->base);
done:
	free(perm);
	free(ew);
	free(nan);
	free(res);
	return st;
}
