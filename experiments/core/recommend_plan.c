/* recommend_plan.c - `skv recommend`'s system side: the system's own plan, FA2's occupancy figures, the candidate counts and the options to measure. */
#include <stdlib.h>
#include <string.h>

#include "core/recommend.h"

/*
 * Every count is measured in the request's layout: the system's own layout
 * of that count (skv_heur_layout: what the system would run if it chose
 * it), FA2's, or even. Efficiency is FA2's wave model (skv_fa2_split_table:
 * thread blocks over 2 x SMs slots) for every system: it ranks counts by
 * occupancy, it is not the system's own criterion. The system's own pick
 * is always measured: as one of the counts when its plan is its layout of
 * that count, apart otherwise (FlashInfer and vLLM size a chunk, and their
 * own chunk need not be the layout of their count).
 */

int rec_preset_system(skv_heur_system *s, const skv_preset *p)
{
	if (!p || p->system < 0 || p->system >= SKV_HEUR_NSYSTEMS) {
		*s = SKV_HEUR_FA2;
		return 0;
	}
	*s = (skv_heur_system)p->system;
	return 1;
}


/* FA2's efficiency and eligibility of counts 1..n on the shape, and each
 * count's keys per split in the candidates' layout. */
typedef struct {
	float *eff;
	unsigned char *el;
	size_t *span;
	unsigned n;
} split_table;

static void table_free(split_table *t)
{
	free(t->eff);
	free(t->el);
	free(t->span);
}

/* The system's plan at `in`, and the contiguous bounds of it when asked. */
static int system_plan(skv_heur_plan *p, const rec_opts *o, const skv_heur_input *in, message *e)
{
	const char *why = skv_heur_invalid(o->system, in);
	if (why) {
		msg_set(e, "skv recommend: --system=%s on this shape: %s", skv_heur_name(o->system), why);
		return SKV_EINVAL;
	}
	return skv_heur_splits(p, NULL, 0, o->system, in);
}

/* The fixed split size: given, or the system's split size at batch 1. */
static int fixed_size(rec_result *r, const rec_opts *o, message *e)
{
	skv_heur_input one = o->heur;
	one.batch = 1;
	skv_heur_plan p;
	int st = system_plan(&p, o, &one, e);
	if (st != SKV_OK)
		return st;
	r->split_size = o->split_size;
	if (!r->split_size) {
		r->split_size = (unsigned)p.span;
		r->split_size_batch1 = p.splits;
	}
	if (r->split_size > o->ctx)
		r->split_size = o->ctx;
	r->fixed.splits = rec_ceil_div(o->ctx, r->split_size);
	r->fixed.span = r->split_size;
	return SKV_OK;
}

/* Keys per split of count s in the candidates' layout; 0 when the layout
 * cannot make s splits (a chunked system makes fewer). */
static size_t span_of(const rec_opts *o, const rec_result *r, unsigned s)
{
	skv_heur_plan p;
	switch (o->layout) {
	case REC_LAYOUT_FA2:
		return (size_t)rec_ceil_div(r->fa2.num_n_blocks, s) * r->fa2.block_n;
	case REC_LAYOUT_EVEN:
		return rec_ceil_div(o->ctx, s);
	case REC_LAYOUT_SYSTEM:
		if (skv_heur_layout(&p, NULL, 0, o->system, &o->heur, s) != SKV_OK || p.splits != s)
			return 0;
		return p.tile ? (s <= p.nbounds - 1 ? p.span : 0) : p.span;
	}
	return 0;
}

/* The table over 1..n: FA2's efficiency; eligibility FA2's for its layout
 * and even's (as FA2 filters counts), the system's own for its layout: a
 * count its layout can make, whose splits are not those of one count fewer
 * (the same span: the extra split empty, the same computation). */
static int table_make(split_table *t, const rec_opts *o, const rec_result *r, unsigned n)
{
	t->n = n;
	t->eff = malloc(n * sizeof *t->eff);
	t->el = malloc(n);
	t->span = malloc(n * sizeof *t->span);
	if (!t->eff || !t->el || !t->span)
		return SKV_ENOMEM;
	int st = skv_fa2_split_table(t->eff, t->el, n, r->fa2.batch_nheads_mblocks, r->fa2.num_sms,
				     r->fa2.num_n_blocks);
	for (unsigned s = 1; st == SKV_OK && s <= n; s++) {
		t->span[s - 1] = s <= o->ctx ? span_of(o, r, s) : 0;
		if (o->layout == REC_LAYOUT_SYSTEM)
			t->el[s - 1] = t->span[s - 1] != 0 && (r->plan.tile ? 1 : s == 1 || t->span[s - 1] != t->span[s - 2]);
		else
			t->el[s - 1] = t->el[s - 1] && s <= o->ctx;
	}
	return st;
}

/* FA2's figures: its early return and the best efficiency it searched. */
static int fa2_side(rec_result *r)
{
	unsigned m = SKV_FA2_MAX_SPLITS;
	m = m < r->fa2.num_sms ? m : r->fa2.num_sms;
	m = m < r->fa2.num_n_blocks ? m : r->fa2.num_n_blocks;
	/* the early return fired exactly when FA2 did not search (as in occupancy.c) */
	const float bhm = (float)r->fa2.batch_nheads_mblocks, almost = 0.8f * (float)r->fa2.num_sms;
	r->fa2_early = bhm >= almost;
	float eff[SKV_FA2_MAX_SPLITS];
	unsigned char el[SKV_FA2_MAX_SPLITS];
	int st = skv_fa2_split_table(eff, el, m, r->fa2.batch_nheads_mblocks, r->fa2.num_sms, r->fa2.num_n_blocks);
	for (unsigned s = 1; st == SKV_OK && !r->fa2_early && s <= m; s++)
		if (el[s - 1] && eff[s - 1] > r->fa2_best_eff) {
			r->fa2_best_eff = eff[s - 1];
			r->fa2_best_splits = s;
		}
	return st;
}

/* Whether the system's plan is its own layout of its count (then it is a
 * candidate row): the same span and tiles. */
static int plan_is_layout(const rec_opts *o, const rec_result *r)
{
	skv_heur_plan p;
	return o->layout == REC_LAYOUT_SYSTEM && skv_heur_layout(&p, NULL, 0, o->system, &o->heur, r->plan.splits) == SKV_OK &&
	       p.splits == r->plan.splits && p.span == r->plan.span && p.tile == r->plan.tile;
}

/* The candidates: pow2, all or the list, plus the system's count, ascending
 * without repeats; ineligible ones go to r->skipped. */
static int build_candidates(rec_result *r, const rec_opts *o, const split_table *t, int pick_is_row)
{
	unsigned char *want = calloc((size_t)t->n + 1, 1);
	if (!want)
		return SKV_ENOMEM;
	if (o->cands == REC_CANDS_LIST)
		for (size_t i = 0; i < o->nlist; i++)
			want[o->list[i]] = 1;
	else
		for (unsigned s = 1; s <= o->max_splits; s = o->cands == REC_CANDS_POW2 ? 2 * s : s + 1)
			want[s] = 1;
	const unsigned pick = r->plan.splits;
	if (pick_is_row || o->layout != REC_LAYOUT_SYSTEM)
		want[pick] = 2; /* measured whatever its eligibility: it is what the system runs */
	size_t nrow = 0, nskip = 0;
	for (unsigned s = 1; s <= t->n; s++)
		if (want[s])
			t->el[s - 1] || want[s] == 2 ? nrow++ : nskip++;
	r->rows = calloc(nrow ? nrow : 1, sizeof *r->rows);
	r->skipped = calloc(nskip ? nskip : 1, sizeof *r->skipped);
	r->pick_row = nrow;
	for (unsigned s = 1; r->rows && r->skipped && s <= t->n; s++) {
		if (!want[s])
			continue;
		if (!t->el[s - 1] && want[s] != 2) {
			r->skipped[r->nskipped++] = s;
			continue;
		}
		rec_row *w = &r->rows[r->nrows++];
		w->splits = s;
		w->span = t->span[s - 1];
		w->efficiency = t->eff[s - 1];
		w->pick = want[s] == 2;
		w->allowed = s <= o->max_splits;
		if (w->pick)
			r->pick_row = r->nrows - 1;
	}
	free(want);
	return r->rows && r->skipped ? SKV_OK : SKV_ENOMEM;
}

int rec_plan(rec_result *r, const rec_opts *o, message *e)
{
	int st = skv_fa2_decode_init(&r->fa2, o->batch, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms);
	if (st == SKV_OK)
		st = skv_fa2_num_splits(&r->fa2_splits, r->fa2.batch_nheads_mblocks, r->fa2.num_sms,
					r->fa2.num_n_blocks, SKV_FA2_MAX_SPLITS);
	if (st != SKV_OK) {
		msg_set(e, "skv recommend: FA2's occupancy model on this shape: %s", skv_strerror(st));
		return st;
	}
	if ((st = system_plan(&r->plan, o, &o->heur, e)) != SKV_OK || (st = fixed_size(r, o, e)) != SKV_OK)
		return st;
	unsigned n = o->max_splits > SKV_FA2_MAX_SPLITS ? o->max_splits : SKV_FA2_MAX_SPLITS;
	for (size_t i = 0; i < o->nlist; i++)
		n = o->list[i] > n ? o->list[i] : n;
	n = n > r->fixed.splits ? n : r->fixed.splits;
	n = n > r->plan.splits ? n : r->plan.splits;
	split_table t = {NULL, NULL, NULL, 0};
	st = table_make(&t, o, r, n);
	if (st == SKV_OK)
		st = fa2_side(r);
	const int pick_is_row = o->layout != REC_LAYOUT_SYSTEM || plan_is_layout(o, r);
	if (st == SKV_OK)
		st = build_candidates(r, o, &t, pick_is_row);
	if (st == SKV_OK) {
		r->fixed.efficiency = t.eff[r->fixed.splits - 1];
		r->fixed.allowed = 0;
		r->own.splits = r->plan.splits;
		r->own.span = r->plan.span;
		r->own.efficiency = t.eff[r->plan.splits - 1];
		r->own.pick = 1;
		r->own.allowed = 0;
	}
	table_free(&t);
	if (st != SKV_OK)
		msg_set(e, "skv recommend: the candidates: %s", skv_strerror(st));
	return st;
}
