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
	"recommend", KIND_REC, "the split count of one decode shape: a system's heuristic and FA2's occupancy model against the measured error",
	"--ctx=32768 --trials=8 --preset=fa2 --layout=system",
	"Every candidate count runs the split kernel, storage and merge of the preset on the same seeded "
	"problems (trial t: skv_seed_mix(seed, t)) in the layout the system makes of that count, with FA2's "
	"block_n keys a block, as skv run does; the count recommended is the most efficient one (FA2's wave "
	"model) whose worst error is within --tol."};

static const char *const metric_names[REC_NMETRICS] = {"norm_rel_err", "max_abs_err", "ulp_err"};
static const char *const layout_names[] = {"fa2", "even", "system"};

const char *rec_metric_name(rec_metric m) { return (unsigned)m < REC_NMETRICS ? metric_names[m] : NULL; }

const char *rec_layout_name(rec_layout l) { return (unsigned)l < 3 ? layout_names[l] : NULL; }

const char *rec_preset_name(const rec_opts *o) { return o->preset ? o->preset->name : "none"; }


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
	const uint64_t lay = s->list[P_LAYOUT].v[0].u;
	if (lay != LAYOUT_FA2 && lay != LAYOUT_EVEN && lay != LAYOUT_SYSTEM) {
		char v[64];
		param_format(v, sizeof v, P_LAYOUT, s->list[P_LAYOUT].v[0]);
		msg_set(e, "skv recommend: --layout=%s: not a layout of skv recommend (system, fa2 or even)", v);
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
	if (o->split_size && rec_ceil_div(o->ctx, o->split_size) > REC_MAX_SPLITS) {
		msg_set(e, "skv recommend: --split-size=%u: gives %u splits of --ctx=%u, more than %d", o->split_size,
			rec_ceil_div(o->ctx, o->split_size), o->ctx, REC_MAX_SPLITS);
		return SKV_EINVAL;
	}
	/* A threshold in the metric's units must be one the metric can meet
	 * and mean: a relative error of 1 is no agreement at all, and no
	 * output rounded to its format is within half an ulp everywhere
	 * (so --tol=0.001 meant as 1e-3 relative is refused for ulp_err). */
	if (!o->tol_multiple && o->metric != REC_MAX_ABS && (o->metric == REC_ULP ? o->tol < 0.5 : o->tol >= 1)) {
		msg_set(e, "skv recommend: --tol=%g with --metric=%s: %s", o->tol, rec_metric_name(o->metric),
			o->metric == REC_ULP ? "below half an ulp, which not even the exact output rounded once meets "
					       "(the metric is in ulps of the output format; or give --tol=Kx)"
					     : "a relative error of 1 or more is no agreement (or give --tol=Kx)");
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
	o.cfg = sweep_config(v, 0);
	o.merge = sweep_merge(v, 0);
	o.kv = sweep_kv_cache(v);
	o.dist = (skv_dist)v[P_DIST].u;
	o.score_scale = v[P_SCORE_SCALE].r, o.lse_offset = v[P_LSE_OFFSET].r;
	o.tol = v[P_TOL].r, o.tol_multiple = v[P_TOL].u != 0;
	o.metric = (rec_metric)v[P_METRIC].u;
	o.trials = (unsigned)v[P_TRIALS].u, o.seed = v[P_SEED].u, o.max_splits = (unsigned)v[P_MAX_SPLITS].u;
	o.cands = (rec_cands)v[P_CANDIDATES].u;
	for (size_t i = 0; o.cands == REC_CANDS_LIST && i < s->list[P_SPLITS].n && i < REC_MAX_LIST; i++)
		o.list[o.nlist++] = (unsigned)s->list[P_SPLITS].v[i].u;
	o.split_size = (unsigned)v[P_SPLIT_SIZE].u;
	o.layout = v[P_LAYOUT].u == LAYOUT_EVEN ? REC_LAYOUT_EVEN
		   : v[P_LAYOUT].u == LAYOUT_FA2 ? REC_LAYOUT_FA2
						 : REC_LAYOUT_SYSTEM;
	o.format = (rec_format)v[P_FORMAT].u;
	if (v[P_SYSTEM].u == 0) {
		o.system_default = !rec_preset_system(&o.system, o.preset);
		v[P_SYSTEM].u = (uint64_t)o.system + 1;
	} else {
		o.system = (skv_heur_system)(v[P_SYSTEM].u - 1);
	}
	skv_heur_system sys;
	(void)layout_heur_input(&o.heur, &sys, v);
	if (st == SKV_OK)
		st = check_request(&o, e);
	if (st != SKV_OK) {
		rec_opts_free(&o);
		return st;
	}
	*out = o;
	return SKV_OK;
}

/* ---------------------------------------------------------------- the choice */

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

/* -------------------------------------------------------- the measurement */

/* One option's spec: the request with these splits, layout and split size,
 * the system named (for layout system) and FA2's block_n keys a block. */
static int option_spec(run_spec *sp, const rec_opts *o, const rec_result *r, const param_value *splits, size_t n,
		       uint64_t layout, unsigned split_size, message *e)
{
	const param_value blk = {r->fa2.block_n, 0.0}, lay = {layout, 0.0}, size = {split_size, 0.0},
			  sys = {(uint64_t)o->system + 1, 0.0};
	int st = spec_copy(sp, &o->spec, e);
	if (st != SKV_OK)
		return st;
	if ((st = spec_set_values(sp, P_SPLITS, splits, n, e)) == SKV_OK &&
	    (st = spec_set_values(sp, P_LAYOUT, &lay, 1, e)) == SKV_OK &&
	    (st = spec_set_values(sp, P_SPLIT_SIZE, &size, 1, e)) == SKV_OK &&
	    (st = spec_set_values(sp, P_SYSTEM, &sys, 1, e)) == SKV_OK &&
	    (st = spec_set_values(sp, P_BLOCK_SIZE, &blk, 1, e)) == SKV_OK)
		st = spec_check(sp, e);
	if (st != SKV_OK)
		spec_free(sp);
	return st;
}

static const uint64_t layout_ids[] = {[REC_LAYOUT_FA2] = LAYOUT_FA2, [REC_LAYOUT_EVEN] = LAYOUT_EVEN,
				      [REC_LAYOUT_SYSTEM] = LAYOUT_SYSTEM};

/* The specs of the sweep: the candidate counts in the request's layout, the
 * fixed-size option, and the system's own plan when it is no count's row
 * (a contiguous chunking without empty splits: fixed-size splits). *n gets
 * 2 or 3. */
static int make_specs(run_spec sp[3], size_t *n, const rec_opts *o, const rec_result *r, message *e)
{
	param_value *cnt = malloc(r->nrows * sizeof *cnt);
	if (!cnt)
		return SKV_ENOMEM;
	for (size_t i = 0; i < r->nrows; i++)
		cnt[i] = (param_value){r->rows[i].splits, 0.0};
	const param_value fs = {r->fixed.splits, 0.0}, os = {r->own.splits, 0.0};
	*n = r->pick_row < r->nrows ? 2 : 3;
	int st = option_spec(&sp[0], o, r, cnt, r->nrows, layout_ids[o->layout], 0, e);
	free(cnt);
	if (st == SKV_OK && (st = option_spec(&sp[1], o, r, &fs, 1, LAYOUT_FIXED, r->split_size, e)) != SKV_OK)
		spec_free(&sp[0]);
	if (st == SKV_OK && *n == 3 &&
	    (st = option_spec(&sp[2], o, r, &os, 1, LAYOUT_FIXED, (unsigned)r->own.span, e)) != SKV_OK) {
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
static int summarize(rec_row *w, const sweep_row *rows, size_t T, const rec_opts *o, double tol, double *col,
		     int floor)
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
	w->within_tol = w->err_max <= tol;
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
	rec_row fl;
	if (st == SKV_OK && (st = summarize(&fl, sw->rows, T, o, 0.0, col, 1)) == SKV_OK) {
		r->floor_median = fl.err_median;
		r->floor_max = fl.err_max;
		r->tol = o->tol_multiple ? o->tol * r->floor_max : o->tol;
	}
	for (size_t c = 0; c < n && st == SKV_OK; c++)
		st = summarize(&r->rows[c], sw->rows + c * T, T, o, r->tol, col, 0);
	if (st == SKV_OK)
		st = summarize(&r->fixed, sw->rows + n * T, T, o, r->tol, col, 0);
	if (st == SKV_OK && r->pick_row == n)
		st = summarize(&r->own, sw->rows + (n + 1) * T, T, o, r->tol, col, 0);
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
	const double keep = (double)(r->nrows + 2) * o->trials * o->head_dim * 16;
	if (keep > KEEP_BYTES) {
		msg_set(e, "skv recommend: %zu options x --trials=%u keep %.3g GiB of outputs for the spread (at most 4); "
			   "fewer trials or candidates", r->nrows + 2, o->trials, keep / 1073741824.0);
		return SKV_EINVAL;
	}
	run_spec sp[3];
	size_t n;
	int st = make_specs(sp, &n, o, r, e);
	if (st != SKV_OK)
		return st;
	const run_spec *const specs[3] = {&sp[0], &sp[1], &sp[2]};
	const sweep_opts so = {progress, 1, 0};
	sweep_result sw;
	st = sweep_run_specs(&sw, specs, n, &so, e);
	for (size_t i = 0; i < n; i++)
		spec_free(&sp[i]);
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
	int st = rec_plan(&r, o, e);
	if (st == SKV_OK)
		st = measure(&r, o, progress, e);
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
