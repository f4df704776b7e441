/* layout.c - split boundaries of the layouts: even, random (with empty splits), skewed, holes, last-empty, all-empty, fa2, fixed. */
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include "core/stats.h"

/*
 * n keys in S splits, bounds[0] = 0 <= bounds[1] <= ... <= bounds[S] = n:
 *
 * even:   bounds[s] = floor(s n / S): sizes differ by at most one.
 * random: the S - 1 inner boundaries are drawn independently and uniformly,
 *         with replacement, from the S + 1 even boundaries {floor(i n / S)},
 *         then sorted. A split is empty when two draws coincide (or a draw is
 *         0 or n): with S splits about a third of them are empty, and the
 *         others span one or several even slots. Draws use skv_rng seeded
 *         with `seed` and skv_rng_below (no modulo bias).
 * skewed: bounds[s] = n - floor(n / 2^s) for s < S: split s holds about
 *         n / 2^(s+1) keys and the last one the remaining floor(n / 2^(S-1));
 *         splits with 2^s > n are empty.
 * holes:  the keys go evenly to the ceil(S / 2) even-numbered splits; every
 *         odd-numbered split is empty.
 * last-empty: the keys go evenly to the first S - 1 splits, the last one is
 *         empty (one empty split; S = 1 is refused).
 * all-empty: every split is empty: a query whose keys are all masked. The
 *         bounds are all 0 (no key is visited); the engine measures it
 *         against the empty attention (output 0, LSE -inf).
 * fa2:    FlashAttention 2's (skv_fa2_bounds): ceil(nb / S) blocks of
 *         `block` keys per split, nb = ceil(n / block); the trailing splits
 *         of an ineligible S are empty.
 * fixed:  splits of split_size keys, the last one shorter (S must be
 *         ceil(n / split_size)).
 */
size_t layout_min_splits(layout_id layout)
{
	return layout == LAYOUT_LAST_EMPTY ? 2 : 1;
}

int layout_bounds(size_t *bounds, size_t n, size_t S, layout_id layout, uint64_t seed, size_t block,
		  size_t split_size)
{
	if (!bounds || S == 0 || S > n)
		return SKV_EINVAL;
	switch (layout) {
	case LAYOUT_EVEN:
		return skv_bounds_even(bounds, n, S);
	case LAYOUT_RANDOM: {
		size_t *grid = malloc((S + 1) * sizeof *grid);
		if (!grid)
			return SKV_ENOMEM;
		int st = skv_bounds_even(grid, n, S);
		if (st != SKV_OK) {
			free(grid);
			return st;
		}
		skv_rng r;
		skv_rng_seed(&r, seed);
		bounds[0] = 0;
		bounds[S] = n;
		for (size_t s = 1; s < S; s++)
			bounds[s] = grid[skv_rng_below(&r, (uint64_t)S + 1)];
		qsort(bounds + 1, S - 1, sizeof *bounds, stats_cmp_size);
		free(grid);
		return SKV_OK;
	}
	case LAYOUT_SKEWED: {
		const size_t bits = sizeof(size_t) * 8;
		for (size_t s = 0; s < S; s++)
			bounds[s] = n - (s < bits ? n >> s : 0);
		bounds[S] = n;
		return SKV_OK;
	}
	case LAYOUT_LAST_EMPTY: {
		if (S < 2)
			return SKV_EINVAL;
		int st = skv_bounds_even(bounds, n, S - 1);
		bounds[S] = n;
		return st;
	}
	case LAYOUT_ALL_EMPTY:
		memset(bounds, 0, (S + 1) * sizeof *bounds);
		return SKV_OK;
	case LAYOUT_FA2:
		return skv_fa2_bounds(bounds, n, block ? block : n, S);
	case LAYOUT_FIXED:
		/* split s = [s size, (s + 1) size) clamped to n: S must be
		 * ceil(n / size), so that no split is empty and every key is in one */
		if (split_size == 0 || S != n / split_size + (n % split_size != 0))
			return SKV_EINVAL;
		for (size_t s = 0; s <= S; s++)
			bounds[s] = s < S ? s * split_size : n;
		return SKV_OK;
	case LAYOUT_HOLES: {
		size_t full = (S + 1) / 2;
		size_t *grid = malloc((full + 1) * sizeof *grid);
		if (!grid)
			return SKV_ENOMEM;
		int st = skv_bounds_even(grid, n, full);
		if (st != SKV_OK) {
			free(grid);
			return st;
		}
		/* split 2i = [grid[i], grid[i+1]), split 2i+1 = [grid[i+1], grid[i+1]). */
		for (size_t s = 0; s <= S; s++)
			bounds[s] = grid[(s + 1) / 2];
		free(grid);
		return SKV_OK;
	}
	case LAYOUT_SYSTEM: /* needs the shape: layout_system_bounds */
		return SKV_EINVAL;
	}
	return SKV_EINVAL;
}

int layout_heur_input(skv_heur_input *in, skv_heur_system *sys, const param_value *v)
{
	const unsigned heads = (unsigned)v[P_HEADS].u, kv = (unsigned)v[P_KV_HEADS].u;
	const skv_format f = (skv_format)v[P_INPUT].u;
	*in = (skv_heur_input){
		.batch = (unsigned)v[P_BATCH].u,
		.heads = heads,
		.kv_heads = kv ? kv : heads,
		.ctx = (unsigned)v[P_CTX].u,
		.head_dim = (unsigned)v[P_HEAD_DIM].u,
		.sm_count = (unsigned)v[P_SMS].u,
		.elem_bytes = skv_format_bits(f) <= 8 ? 1u : 2u, /* fa3's e4m3 path or its 16-bit one */
		.blocks_per_sm = (unsigned)v[P_BLOCKS_PER_SM].u,
		.page_size = (unsigned)v[P_PAGE_SIZE].u,
		.max_splits = (unsigned)v[P_KV_SPLITS].u,
		.deterministic = (int)v[P_DETERMINISTIC].u,
	};
	if (v[P_SYSTEM].u == 0)
		return SKV_EINVAL;
	*sys = (skv_heur_system)(v[P_SYSTEM].u - 1);
	return SKV_OK;
}

int layout_system_tiles(size_t **tiles, size_t *ntiles, size_t S, const param_value *v)
{
	skv_heur_input in;
	skv_heur_system sys;
	skv_heur_plan p;
	*tiles = NULL;
	if (S > UINT32_MAX || layout_heur_input(&in, &sys, v) != SKV_OK ||
	    skv_heur_layout(&p, NULL, 0, sys, &in, (unsigned)S) != SKV_OK || p.splits != S)
		return SKV_EINVAL;
	size_t *b = malloc(p.nbounds * sizeof *b);
	if (!b)
		return SKV_ENOMEM;
	int st = skv_heur_layout(&p, b, p.nbounds, sys, &in, (unsigned)S);
	if (st != SKV_OK) {
		free(b);
		return st;
	}
	*tiles = b;
	*ntiles = p.nbounds - 1;
	return SKV_OK;
}
