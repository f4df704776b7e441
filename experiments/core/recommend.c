/* recommend.c - `skv recommend`: FA2's side of a shape, the candidates, their rows measured by the one sweep, and the choice. */
#include "core/recommend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"
#include "core/sweep_internal.h"

/* The outputs kept for the spread: rows x head-dim x 16 bytes at most. */
#define KEEP_BYTES (4.0 * 1073741824.0)

const exp_def rec_exp = {
	"recommend", KIND_REC, "the split count of one decode shape: FA2's occupancy against the measured error",
	"--ctx=32768 --trials=8 --preset=fa2 --layout=fa2",
	"Every candidate count runs the split kernel, storage and merge of the preset on the same seeded "
	"problems (trial t: skv_seed_mix(seed, t)) with FA2's layout and block_n keys a block, as skv run "
	"does; the count recommended is the most efficient one whose worst error is within --tol."};

static const char *const metric_names[REC_NMETRICS] = {"norm_rel_err", "max_abs_err", "ulp_err"};
static const char *const layout_names[] = {"fa2", "even"};

const char *rec_metric_name(rec_metric m) { return (unsigned)m < REC_NMETRICS ? metric_names[m] : NULL; }

const char *rec_layout_name(rec_layout l) { return (unsigned)l < 2 ? layout_names[l] : NULL; }

const char *rec_preset_name(const rec_opts *o) { return o->preset ? o->preset->name : "none"; }

static unsigned ceil_div(unsigned a, unsigned b) { return a / b + (a % b != 0); }

/* ---------------------------------------------------------------- request */

void rec_opts_free(rec_opts *o)
{
	if (o) {
		spec_free(&o->spec);
		memset(o, 0, sizeof *o);
	}
}

static unsigned one_u(const run_spec *s, int id) { return (unsigned)s->list[id].v[0].u; }

/* One value per parameter but --splits; a preset's fields the user left
 * are the preset's (spec_values). */
static int single_values(const run_spec *s, message *e)
{
	for (int i = 0; i < NPARAMS; i++)
		if (i != P_SPLITS && s->list[i].n > 1 && spec_applies(s, i)) {
			msg_set(e, "skv recommend: --%s takes one value here, not a list (one shape, one precision)",
				params[i].flag);
			return SKV_EINVAL;
		}
	return SKV_OK;
}

/* What the parameter table cannot say: the flags' relations and FA2's limits. */
static int check_request(const rec_opts *o, message *e)
{
	const run_spec *s = &o->spec;
	skv_fa2_decode f;
	if (s->given[P_BLOCK_SIZE]) {
		msg_set(e, "skv recommend: --block-size is FA2's block_n of the shape, not a flag here");
		return SKV_EINVAL;
	}
	if (s->list[P_LAYOUT].v[0].u != LAYOUT_FA2 && s->list[P_LAYOUT].v[0].u != LAYOUT_EVEN) {
		char v[64];
		param_format(v, sizeof v, P_LAYOUT, s->list[P_LAYOUT].v[0]);
		msg_set(e, "skv recommend: --layout=%s: not a layout of skv recommend (fa2 or even)", v);
		return SKV_EINVAL;
	}
	if (o->heads % o->kv_heads != 0) {
		msg_set(e, "skv recommend: --kv-heads=%u: does not divide --heads=%u", o->kv_heads, o->heads);
		return SKV_EINVAL;
	}
	if (o->head_dim > SKV_FA2_MAX_HEAD_DIM) {
		msg_set(e, "skv recommend: --head-dim=%u: above FA2's largest, %d", o->head_dim, SKV_FA2_MAX_HEAD_DIM);
		return SKV_EINVAL;
	}
	if (skv_fa2_decode_init(&f, o->batch, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms) != SKV_OK) {
		msg_set(e, "skv recommend: --batch=%u: batch x heads x m-blocks exceeds FA2's int range", o->batch);
		return SKV_EINVAL;
	}
	if (o->split_size && ceil_div(o->ctx, o->split_size) > REC_MAX_SPLITS) {
		msg_set(e, "skv recommend: --split-size=%u: gives %u splits of --ctx=%u, more than %d", o->split_size,
			ceil_div(o->ctx, o->split_size), o->ctx, REC_MAX_SPLITS);
		return SKV_EINVAL;
	}
	const param_list *sp = &s->list[P_SPLITS];
	if ((o->cands == REC_CANDS_LIST) != (s->given[P_SPLITS] != 0)) {
		msg_set(e, "skv recommend: --candidates=list goes with --splits=N,N,... (and --splits with a list)");
		return SKV_EINVAL;
	}
	if (o->cands == REC_CANDS_LIST && sp->n > REC_MAX_LIST) {
		msg_set(e, "skv recommend: --splits lists %zu counts, more than %d", sp->n, REC_MAX_LIST);
		return SKV_EINVAL;
	}
	for (size_t i = 0; o->cands == REC_CANDS_LIST && i < sp->n; i++)
		if (sp->v[i].u > o->max_splits) {
			msg_set(e, "skv recommend: --splits=%llu: above --max-splits=%u", (unsigned long long)sp->v[i].u,
				o->max_splits);
			return SKV_EINVAL;
		}
	return SKV_OK;
}

int rec_opts_init(rec_opts *out, run_spec *spec, message *e)
{
	rec_opts o;
	memset(&o, 0, sizeof o);
	o.spec = *spec;
	memset(spec, 0, sizeof *spec);
	const run_spec *s = &o.spec;
	int st = single_values(s, e);
	o.batch = one_u(s, P_BATCH), o.heads = one_u(s, P_HEADS), o.kv_heads = one_u(s, P_KV_HEADS);
	o.kv_heads = o.kv_heads ? o.kv_heads : o.heads;
	o.ctx = one_u(s, P_CTX), o.head_dim = one_u(s, P_HEAD_DIM), o.sms = one_u(s, P_SMS);
	const uint64_t pr = s->list[P_PRESET].v[0].u;
	o.preset = pr ? skv_preset_at(pr - 1) : NULL;
	param_value v[NPARAMS];
	spec_values(s, 0, v);
	o.cfg = sweep_config(v);
	o.merge = sweep_merge(v, 0);
	o.dist = (skv_dist)v[P_DIST].u;
	o.score_scale = v[P_SCORE_SCALE].r, o.lse_offset = v[P_LSE_OFFSET].r, o.tol = v[P_TOL].r;
	o.metric = (rec_metric)v[P_METRIC].u;
	o.trials = (unsigned)v[P_TRIALS].u, o.seed = v[P_SEED].u, o.max_splits = (unsigned)v[P_MAX_SPLITS].u;
	o.cands = (rec_cands)v[P_CANDIDATES].u;
	for (size_t i = 0; o.cands == REC_CANDS_LIST && i < s->list[P_SPLITS].n && i < REC_MAX_LIST; i++)
		o.list[o.nlist++] = (unsigned)s->list[P_SPLITS].v[i].u;
	o.split_size = (unsigned)v[P_SPLIT_SIZE].u;
	o.layout = v[P_LAYOUT].u == LAYOUT_EVEN ? REC_LAYOUT_EVEN : REC_LAYOUT_FA2;
	o.format = (rec_format)v[P_FORMAT].u;
	if (st == SKV_OK)
		st = check_request(&o, e);
	if (st != SKV_OK) {
		rec_opts_free(&o);
		return st;
	}
	*out = o;
	return SKV_OK;
}

/* ---------------------------------------------------------------- the FA2 side */

size_t rec_choose(const rec_row *rows, size_t n)
{
	size_t best = n;
	for (size_t i = 0; rows && i < n; i++) {
		if (!rows[i].within_tol || !rows[i].allowed)
			continue;
		/* strictly greater: an equal efficiency keeps the earlier, smaller count */
		if (best == n || rows[i].efficiency > rows[best].efficiency)
			best = i;
	}
	return best;
}

/* FA2's efficiency and eligibility of counts 1..n on the shape. */
typedef struct {
	float *eff;
	unsigned char *el;
	unsigned n;
} split_table;

/* The fixed split size: given, or FA2's blocks per split at batch 1. */
static int fixed_size(rec_result *r, const rec_opts *o)
{
	skv_fa2_decode one;
	unsigned s1 = 0;
	if (skv_fa2_decode_init(&one, 1, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms) != SKV_OK ||
	    skv_fa2_num_splits(&s1, one.batch_nheads_mblocks, one.num_sms, one.num_n_blocks, SKV_FA2_MAX_SPLITS) !=
		    SKV_OK)
		return SKV_EINVAL;
	r->split_size = o->split_size;
	if (!r->split_size) {
		r->split_size = ceil_div(one.num_n_blocks, s1) * one.block_n;
		r->split_size_fa2_batch1 = s1;
	}
	if (r->split_size > o->ctx)
		r->split_size = o->ctx;
	r->fixed.splits = ceil_div(o->ctx, r->split_size);
	return SKV_OK;
}

/* FA2's inputs, pick and best efficiency, the fixed size, and the table. */
static int occupancy(rec_result *r, const rec_opts *o, split_table *t)
{
	if (skv_fa2_decode_init(&r->fa2, o->batch, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms) != SKV_OK ||
	    skv_fa2_num_splits(&r->fa2_splits, r->fa2.batch_nheads_mblocks, r->fa2.num_sms, r->fa2.num_n_blocks,
			       SKV_FA2_MAX_SPLITS) != SKV_OK || fixed_size(r, o) != SKV_OK)
		return SKV_EINVAL;
	/* the early return fired exactly when FA2 did not search (as in occupancy.c) */
	const float bhm = (float)r->fa2.batch_nheads_mblocks, almost = 0.8f * (float)r->fa2.num_sms;
	r->fa2_early = bhm >= almost;
	unsigned n = o->max_splits;
	for (size_t i = 0; i < o->nlist; i++)
		n = o->list[i] > n ? o->list[i] : n;
	n = n > SKV_FA2_MAX_SPLITS ? n : SKV_FA2_MAX_SPLITS;
	n = n > r->fixed.splits ? n : r->fixed.splits;
	t->eff = malloc(n * sizeof *t->eff);
	t->el = malloc(n);
	t->n = n;
	if (!t->eff || !t->el)
		return SKV_ENOMEM;
	int st = skv_fa2_split_table(t->eff, t->el, n, r->fa2.batch_nheads_mblocks, r->fa2.num_sms,
				     r->fa2.num_n_blocks);
	if (st != SKV_OK)
		return st;
	/* what FA2's search saw: eligible counts up to min(128, num_sms, blocks) */
	unsigned m = SKV_FA2_MAX_SPLITS;
	m = m < r->fa2.num_sms ? m : r->fa2.num_sms;
	m = m < r->fa2.num_n_blocks ? m : r->fa2.num_n_blocks;
	for (unsigned s = 1; !r->fa2_early && s <= m; s++)
		if (t->el[s - 1] && t->eff[s - 1] > r->fa2_best_eff) {
			r->fa2_best_eff = t->eff[s - 1];
			r->fa2_best_splits = s;
		}
	r->fixed.blocks_per_split = ceil_div(r->split_size, r->fa2.block_n);
	r->fixed.efficiency = t->eff[r->fixed.splits - 1];
	r->fixed.allowed = 0;
	return SKV_OK;
}

/* The candidates: pow2, all or the list, plus FA2's pick, ascending without
 * repeats; ineligible ones go to r->skipped. */
static int build_candidates(rec_result *r, const rec_opts *o, const split_table *t)
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
	want[r->fa2_splits] = 1;
	size_t nrow = 0, nskip = 0;
	for (unsigned s = 1; s <= t->n; s++)
		if (want[s])
			t->el[s - 1] ? nrow++ : nskip++;
	r->rows = calloc(nrow, sizeof *r->rows);
	r->skipped = calloc(nskip ? nskip : 1, sizeof *r->skipped);
	for (unsigned s = 1; r->rows && r->skipped && s <= t->n; s++) {
		if (!want[s])
			continue;
		if (!t->el[s - 1]) {
			r->skipped[r->nskipped++] = s;
			continue;
		}
		rec_row *w = &r->rows[r->nrows++];
		w->splits = s;
		w->blocks_per_split = ceil_div(r->fa2.num_n_blocks, s);
		w->efficiency = t->eff[s - 1];
		w->fa2 = s == r->fa2_splits;
		w->allowed = s <= o->max_splits;
		if (w->fa2)
			r->fa2_row = r->nrows - 1;
	}
	free(want);
	return r->rows && r->skipped ? SKV_OK : SKV_ENOMEM;
}

/* -------------------------------------------------------- the measurement */

/* The two specs of the sweep: the candidate counts in the request's layout,
 * and the fixed-size option; both at FA2's block_n keys a block. */
static int make_specs(run_spec sp[2], const rec_opts *o, const rec_result *r, message *e)
{
	param_value *cnt = malloc(r->nrows * sizeof *cnt);
	if (!cnt)
		return SKV_ENOMEM;
	for (size_t i = 0; i < r->nrows; i++)
		cnt[i] = (param_value){r->rows[i].splits, 0.0};
	const param_value blk = {r->fa2.block_n, 0.0}, fix = {LAYOUT_FIXED, 0.0}, S = {r->fixed.splits, 0.0},
			  size = {r->split_size, 0.0};
	int st = spec_copy(&sp[0], &o->spec, e);
	if (st == SKV_OK && (st = spec_copy(&sp[1], &o->spec, e)) != SKV_OK)
		spec_free(&sp[0]);
	if (st != SKV_OK) {
		free(cnt);
		return st;
	}
	if ((st = spec_set_values(&sp[0], P_SPLITS, cnt, r->nrows, e)) == SKV_OK &&
	    (st = spec_set_values(&sp[0], P_BLOCK_SIZE, &blk, 1, e)) == SKV_OK &&
	    (st = spec_set_values(&sp[1], P_SPLITS, &S, 1, e)) == SKV_OK &&
	    (st = spec_set_values(&sp[1], P_LAYOUT, &fix, 1, e)) == SKV_OK &&
	    (st = spec_set_values(&sp[1], P_SPLIT_SIZE, &size, 1, e)) == SKV_OK &&
	    (st = spec_set_values(&sp[1], P_BLOCK_SIZE, &blk, 1, e)) == SKV_OK && (st = spec_check(&sp[0], e)) == SKV_OK)
		st = spec_check(&sp[1], e);
	free(cnt);
	if (st != SKV_OK) {
		spec_free(&sp[0]);
		spec_free(&sp[1]);
	}
	return st;
}

static double metric_of(const skv_errors *e, rec_metric m)
{
	return m == REC_MAX_ABS ? e->max_abs : m == REC_ULP ? e->ulp : e->norm_rel;
}

/* How far the outputs of the n count rows of one trial move, over every
 * pair: *ulps = max_i (max_c o_c,i - min_c o_c,i) / ulp(f, t_i) (one pass),
 * *rel = max_{a<b} ||o_a - o_b|| / ||t||. NaN if any output is NaN. diff
 * has d entries of scratch. */
static void spread_of(double *ulps, double *rel, const sweep_row *const *rows, size_t n, size_t d, skv_format f,
		      double *diff)
{
	double worst = 0.0, worst_rel = 0.0;
	const double *t = rows[0]->truth;
	for (size_t i = 0; i < d; i++) {
		double lo = rows[0]->out[i], hi = lo;
		for (size_t c = 1; c < n; c++) {
			const double x = rows[c]->out[i];
			lo = x < lo || isnan(x) ? x : lo;
			hi = x > hi || isnan(x) ? x : hi;
		}
		worst = stats_max(worst, (hi - lo) / skv_ulp(f, t[i]));
	}
	const double tn = skv_norm2(t, d);
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++) {
			for (size_t i = 0; i < d; i++)
				diff[i] = rows[a]->out[i] - rows[b]->out[i];
			worst_rel = stats_max(worst_rel, skv_norm2(diff, d) / tn);
		}
	*ulps = worst;
	*rel = worst_rel;
}

/* Median and max of one option's metric over the trials. */
static int summarize(rec_row *w, const sweep_row *rows, size_t T, const rec_opts *o, double *col, int floor)
{
	for (size_t t = 0; t < T; t++)
		col[t] = metric_of(floor ? &rows[t].floor : &rows[t].err, o->metric);
	stat_summary s;
	int st = stats_compute(&s, col, T);
	if (st != SKV_OK)
		return st;
	w->err_median = s.median;
	w->nan_trials = s.nnan;
	w->err_max = s.nnan ? NAN : s.max;
	w->within_tol = w->err_max <= o->tol;
	return SKV_OK;
}

/* The rows of the sweep into the result: spec 0 holds the counts (point
 * c, trial t at c T + t), spec 1 the fixed size. */
static int collect(rec_result *r, const rec_opts *o, const sweep_result *sw)
{
	const size_t T = o->trials, n = r->nrows, d = o->head_dim;
	double *col = malloc(T * sizeof *col), *diff = malloc(d * sizeof *diff);
	const sweep_row **trial = malloc(n * sizeof *trial);
	int st = col && diff && trial ? SKV_OK : SKV_ENOMEM;
	for (size_t c = 0; c < n && st == SKV_OK; c++)
		st = summarize(&r->rows[c], sw->rows + c * T, T, o, col, 0);
	if (st == SKV_OK)
		st = summarize(&r->fixed, sw->rows + n * T, T, o, col, 0);
	rec_row fl;
	if (st == SKV_OK && (st = summarize(&fl, sw->rows, T, o, col, 1)) == SKV_OK) {
		r->floor_median = fl.err_median;
		r->floor_max = fl.err_max;
	}
	r->spread_ulps = r->spread_norm_rel = 0.0;
	for (size_t t = 0; t < T && st == SKV_OK; t++) {
		for (size_t c = 0; c < n; c++)
			trial[c] = &sw->rows[c * T + t];
		double u, v;
		spread_of(&u, &v, trial, n, d, o->cfg.output, diff);
		r->spread_ulps = stats_max(r->spread_ulps, u);
		r->spread_norm_rel = stats_max(r->spread_norm_rel, v);
	}
	free(col);
	free(diff);
	free(trial);
	return st;
}

static int measure(rec_result *r, const rec_opts *o, FILE *progress, message *e)
{
	const double keep = (double)(r->nrows + 1) * o->trials * o->head_dim * 16;
	if (keep > KEEP_BYTES) {
		msg_set(e, "skv recommend: %zu options x --trials=%u keep %.3g GiB of outputs for the spread (at most 4); "
			   "fewer trials or candidates", r->nrows + 1, o->trials, keep / 1073741824.0);
		return SKV_EINVAL;
	}
	run_spec sp[2];
	int st = make_specs(sp, o, r, e);
	if (st != SKV_OK)
		return st;
	const run_spec *const specs[2] = {&sp[0], &sp[1]};
	const sweep_opts so = {progress, 1, 0};
	sweep_result sw;
	st = sweep_run_specs(&sw, specs, 2, &so, e);
	spec_free(&sp[0]);
	spec_free(&sp[1]);
	if (st != SKV_OK)
		return st;
	st = collect(r, o, &sw);
	sweep_result_free(&sw);
	if (st != SKV_OK)
		msg_set(e, "skv recommend: summarizing the trials: %s", skv_strerror(st));
	return st;
}

int rec_run(rec_result *out, const rec_opts *o, FILE *progress, message *e)
{
	if (!out || !o || o->trials == 0 || !(o->tol > 0)) {
		msg_set(e, "skv recommend: bad options");
		return SKV_EINVAL;
	}
	rec_result r;
	memset(&r, 0, sizeof r);
	split_table t = {NULL, NULL, 0};
	int st = occupancy(&r, o, &t);
	if (st != SKV_OK)
		msg_set(e, "skv recommend: FA2's heuristic on this shape: %s", skv_strerror(st));
	if (st == SKV_OK && (st = build_candidates(&r, o, &t)) != SKV_OK)
		msg_set(e, "skv recommend: the candidates: %s", skv_strerror(st));
	if (st == SKV_OK)
		st = measure(&r, o, progress, e);
	free(t.eff);
	free(t.el);
	if (st != SKV_OK) {
		rec_result_free(&r);
		return st;
	}
	r.recommended = rec_choose(r.rows, r.nrows);
	*out = r;
	return SKV_OK;
}

void rec_result_free(rec_result *r)
{
	if (!r)
		return;
	free(r->rows);
	free(r->skipped);
	memset(r, 0, sizeof *r);
}
