/* merge_internal.h - internal: the merge context, the reducer interface, the empty-split policy rows and the online state merge. */
#ifndef SKV_MERGE_INTERNAL_H
#define SKV_MERGE_INTERNAL_H
#include "skv.h"
#include "mathmode.h"

/* What an empty-split policy (skv_empty) does, as data: one row per policy
 * (lib/merge.c holds the table), read by every merge rule in the one way
 * its comment says, so no rule tests the policy's name.
 *   unwritten     an empty split's row is never written (FA3's epilogue
 *                 skips it, hopper/epilogue_fwd.hpp:441,452-454): it reads
 *                 as NaN, and the one-pass sum skips every weight not > 0
 *                 (flash_fwd_combine_kernel.h:685)
 *   guard         empty splits are skipped by the state merges and an
 *                 all-empty row gives out = 0, LSE = -inf before any
 *                 arithmetic (never NaN)
 *   max_sub       a max of -inf is replaced by this value (FA2 and FA3 use
 *                 0, flash_fwd_kernel.h:1196, flash_fwd_combine_kernel.h:604);
 *                 NaN: no substitute
 *   bad_sum_lse   the merged LSE when the weights' sum is 0 or NaN (FA2
 *                 +inf, flash_fwd_kernel.h:1204; FA3 -inf); NaN: the
 *                 formula's log(sum) + max
 * A policy with a guard or a max substitute also keeps a rule's own mask
 * of an all-empty row (Flex's g_M == -inf); "none" leaves the formula. */
typedef struct {
	const char *name;
	int unwritten, guard;
	double max_sub, bad_sum_lse;
} skv_empty_row;

/* The row of policy e (e valid). */
const skv_empty_row *skv_empty_row_of(skv_empty e);

/* Everything a merge rule and a reduction step need. */
typedef struct {
	const skv_partials *sp;
	const skv_merge_spec *spec;
	const skv_config *cfg;
	const skv_empty_row *em;
	skv_format c;
	int base2;
	double *e;         /* [S] per-split factor (weights, scales) */
	double *w;         /* [S] second per-split factor */
	const double *nan; /* [d] a row of NaN: what an unwritten row holds */
	const size_t *perm; /* [S] the visiting order of the sequential orders */
	skv_mth mt;        /* the config's math (exact or the bound model) */
} skv_mctx;

/* A reduction over the splits, in any order: a fold (init, add) and a
 * combine of two partial results, plus an optional seal applied to each
 * strided subset before the subsets are combined. Accumulators are `width`
 * doubles. Each rule's sums are reducers; each order is one driver. */
typedef struct {
	size_t width;
	void (*init)(const skv_mctx *x, double *a);
	void (*add)(const skv_mctx *x, double *a, size_t s);
	void (*combine)(const skv_mctx *x, double *a, const double *b);
	void (*seal)(const skv_mctx *x, double *a);
} skv_reducer;

/* The reducers' common pieces (lib/merge_rules.c): zero one value, d
 * values or d + 1 values; add e_s to a scalar sum; combine two scalar sums,
 * two d-vectors or two (d + 1)-vectors by addition, all in the combine
 * format. */
void skv_r_zero(const skv_mctx *x, double *a);
void skv_r_vzero(const skv_mctx *x, double *a);
void skv_r_v1zero(const skv_mctx *x, double *a);
void skv_r_esum(const skv_mctx *x, double *a, size_t s);
void skv_r_ssum(const skv_mctx *x, double *a, const double *b);
void skv_r_vsum(const skv_mctx *x, double *a, const double *b);
void skv_r_v1sum(const skv_mctx *x, double *a, const double *b);

/* Runs r over the splits in the spec's order into res[width].
 * SKV_ENOMEM. */
int skv_reduce(double *res, const skv_reducer *r, const skv_mctx *x);

/* One merge rule: computes the merged output res[d] (in the combine
 * format, before the output rounding) and the merged LSE *L (in the
 * config's base). SKV_ENOMEM. */
typedef int (*skv_merge_fn)(double *res, double *L, const skv_mctx *x);

/* The merge rules, one X(enum value, name, function, mla) row each: merge.c's
 * table and these declarations come from it, so a new rule is its enum value
 * in skv.h, a row here, its function (merge_rules.c, merge_systems.c) and its
 * test. `mla`: the rule reads the split maxes, sums and accumulators (m, l,
 * acc), which a partials struct may leave NULL. */
#define SKV_MERGE_RULES(X)                                                    \
	X(SKV_MERGE_ONEPASS, "onepass", skv_merge_onepass, 0)                 \
	X(SKV_MERGE_PAIRWISE, "pairwise", skv_merge_pairwise, 0)              \
	X(SKV_MERGE_MEAN, "mean", skv_merge_mean, 0)                          \
	X(SKV_MERGE_SUM, "sum", skv_merge_sum, 0)                             \
	X(SKV_MERGE_FLEX, "flex", skv_merge_flex, 1)                          \
	X(SKV_MERGE_ONEPASS_NORM, "onepass-norm", skv_merge_onepass_norm, 0)  \
	X(SKV_MERGE_RATIO, "ratio", skv_merge_ratio, 0)                       \
	X(SKV_MERGE_VLLM, "vllm", skv_merge_vllm, 1)                          \
	X(SKV_MERGE_RUNNING, "running", skv_merge_running, 1)

#define SKV_MERGE_DECL(id, nm, fn, mla) int fn(double *res, double *L, const skv_mctx *x);
SKV_MERGE_RULES(SKV_MERGE_DECL)
#undef SKV_MERGE_DECL

/* e and log in the config's base (exp2/log2 in base 2), in format c. */
double skv_mexp(const skv_mctx *x, double t);
double skv_mlog(const skv_mctx *x, double t);
/* RN(1 / t) in format c. */
double skv_mrcp(const skv_mctx *x, double t);
/* out[i] = acc[i] / l by the spec's normalisation (division, or times the
 * rounded reciprocal), for i < d. */
void skv_mnorm(const skv_mctx *x, double *out, const double *acc, double l);

/* The stored row of split s as a rule reads it: the NaN row for an
 * unwritten empty split. */
const double *skv_row_o(const skv_mctx *x, size_t s);
const double *skv_row_acc(const skv_mctx *x, size_t s);

/* Folds state b = (mb, db, accb[d]) into a = (*ma, *da, acca[d]), the
 * FlashInfer / SGLang online merge, every operation in format c (e under
 * the math mt; NULL: correctly rounded):
 *   m = max(ma, mb), x = e(ma - m), y = e(mb - m),
 *   d = fma(da, x, db * y),  acc_i = fma(acc_i, x, accb_i * y)
 * with e = exp or exp2. With guard set, a merge whose max is -inf (two
 * empty states) leaves a as it is instead of computing -inf - -inf = NaN. */
void skv_state_merge(double *ma, double *da, double *acca, double mb, double db, const double *accb,
		     size_t d, skv_format c, int base2, int guard, const skv_mth *mt);
#endif
