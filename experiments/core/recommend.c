/* recommend_run.c - `skv recommend`: the candidates, their measured error over seeded trials, and the choice. */
#include "core/recommend.h"

#include <math.h>
#include <mpfr.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

/* Problems held at once: one trial's keys and values take 16 ctx d bytes,
 * so at most this much is live however many threads run. */
#define LIVE_BYTES (4ull << 30)

static int fail(char *msg, size_t len, int st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = snprintf(msg, len, "skv recommend: ");
	if (k >= 0 && (size_t)k < len)
		k += vsnprintf(msg + k, len - (size_t)k, fmt, ap);
	va_end(ap);
	if (k >= 0 && (size_t)k < len)
		snprintf(msg + k, len - (size_t)k, ": %s", skv_strerror(st));
	return st;
}

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

static unsigned ceil_div(unsigned a, unsigned b) { return a / b + (a % b != 0); }

/* One measured option: its split boundaries. */
typedef struct {
	size_t S;
	size_t *bounds; /* [S + 1] */
} option;

/* The candidates: pow2, all or the list, plus FA2's pick, ascending without
 * repeats; ineligible ones go to r->skipped. eff and el are FA2's table for
 * 1..ntab. */
static int build_candidates(rec_result *r, const rec_opts *o, const float *eff, const unsigned char *el,
			    unsigned ntab)
{
	unsigned char *want = calloc((size_t)ntab + 1, 1);
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
	for (unsigned s = 1; s <= ntab; s++)
		if (want[s])
			el[s - 1] ? nrow++ : nskip++;
	r->rows = calloc(nrow, sizeof *r->rows);
	r->skipped = calloc(nskip ? nskip : 1, sizeof *r->skipped);
	if (!r->rows || !r->skipped) {
		free(want);
		return SKV_ENOMEM;
	}
	for (unsigned s = 1; s <= ntab; s++) {
		if (!want[s])
			continue;
		if (!el[s - 1]) {
			r->skipped[r->nskipped++] = s;
			continue;
		}
		rec_row *w = &r->rows[r->nrows++];
		w->splits = s;
		w->blocks_per_split = ceil_div(r->fa2.num_n_blocks, s);
		w->efficiency = eff[s - 1];
		w->fa2 = s == r->fa2_splits;
		w->allowed = s <= o->max_splits;
		if (w->fa2)
			r->fa2_row = r->nrows - 1;
	}
	free(want);
	return SKV_OK;
}

/* Boundaries of S splits in the requested layout; size > 0: fixed size. */
static int make_option(option *op, const rec_opts *o, unsigned block_n, size_t S, unsigned size)
{
	op->S = S;
	op->bounds = malloc((S + 1) * sizeof *op->bounds);
	if (!op->bounds)
		return SKV_ENOMEM;
	if (size) {
		for (size_t s = 0; s <= S; s++)
			op->bounds[s] = s * size < o->ctx ? s * size : o->ctx;
		return SKV_OK;
	}
	return o->layout == REC_LAYOUT_FA2 ? skv_fa2_bounds(op->bounds, o->ctx, block_n, S)
					       : skv_bounds_even(op->bounds, o->ctx, S);
}

/* The split kernel, storage and merge of one option on one problem. */
static int run_option(double *out, const skv_problem *p, const option *op, size_t block, const rec_opts *o)
{
	skv_partials sp;
	int st = skv_partials_init(&sp, op->S, p->d);
	if (st != SKV_OK)
		return st;
	double lse;
	st = skv_split_kernel(&sp, p, 0, op->bounds, op->S, block, o->lse_offset, &o->cfg);
	if (st == SKV_OK)
		st = skv_partials_store(&sp, &sp, &o->cfg);
	if (st == SKV_OK)
		st = skv_merge_run(out, &lse, &sp, &o->spec, &o->cfg);
	skv_partials_free(&sp);
	return st;
}

static double metric_of(const skv_errors *e, rec_metric m)
{
	return m == REC_MAX_ABS ? e->max_abs : m == REC_ULP ? e->ulp : e->norm_rel;
}

/* The exact value rounded once to f: RN(hi) unless hi is a midpoint of f
 * (then lo, the rest of the truth, breaks the tie). hi = RN64(t), so for
 * fp64 it is the answer. The midpoint test: the reflection 2 hi - r of the
 * rounded value is representable only when hi lies halfway. */
static double round_truth(skv_format f, skv_dd t)
{
	double r = skv_round(f, t.hi);
	if (f == SKV_FP64 || r == t.hi || t.lo == 0 || !isfinite(r))
		return r;
	const double r2 = 2 * t.hi - r;
	if (r2 != r && skv_round(f, r2) == r2 && ((t.lo > 0) == (r2 > t.hi)))
		r = r2;
	return r;
}

/* Euclidean norm of x[0..n) scaled by its largest magnitude, so that it
 * neither overflows nor underflows (LAPACK's dnrm2 idea); NaN if any x is. */
static double norm2(const double *x, size_t n)
{
	double scale = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(x[i]))
			return NAN;
		scale = fabs(x[i]) > scale ? fabs(x[i]) : scale;
	}
	if (scale == 0.0 || isinf(scale))
		return scale;
	double ssq = 0.0;
	for (size_t i = 0; i < n; i++)
		ssq += (x[i] / scale) * (x[i] / scale);
	return scale * sqrt(ssq);
}

/* How far the output moves between the count options of one trial, over
 * every pair: *ulps = max |o_a,i - o_b,i| / ulp(f, t_i) over elements (the
 * per-element max minus min, one pass), *rel = max ||o_a - o_b|| / ||t||.
 * NaN if any output is NaN. diff has d entries of scratch. */
static void spread_of(double *ulps, double *rel, const double *outs, size_t ncount, const skv_dd *truth,
		      size_t d, skv_format f, double *diff)
{
	double worst = 0.0, worst_rel = 0.0;
	for (size_t i = 0; i < d; i++) {
		double lo = outs[i], hi = outs[i];
		for (size_t c = 0; c < ncount; c++) {
			const double x = outs[c * d + i];
			lo = x < lo || isnan(x) ? x : lo;
			hi = x > hi || isnan(x) ? x : hi;
		}
		const double u = (hi - lo) / skv_ulp(f, truth[i].hi);
		worst = u > worst || isnan(u) || isnan(worst) ? u : worst;
		diff[i] = truth[i].hi;
	}
	const double tn = norm2(diff, d);
	for (size_t a = 0; a < ncount; a++)
		for (size_t b = a + 1; b < ncount; b++) {
			for (size_t i = 0; i < d; i++)
				diff[i] = outs[a * d + i] - outs[b * d + i];
			const double r = norm2(diff, d) / tn;
			worst_rel = r > worst_rel || isnan(r) || isnan(worst_rel) ? r : worst_rel;
		}
	*ulps = worst;
	*rel = worst_rel;
}

/* Median and max of v[0..n) into a row. */
static int summarize(rec_row *w, const double *v, size_t n, double tol)
{
	stat_summary s;
	int st = stats_compute(&s, v, n);
	if (st != SKV_OK)
		return st;
	w->err_median = s.median;
	w->nan_trials = s.nnan;
	w->err_max = s.nnan ? NAN : s.max;
	w->within_tol = w->err_max <= tol;
	return SKV_OK;
}

/* The FA2 side: its inputs, pick, best efficiency and the table. */
static int occupancy(rec_result *r, const rec_opts *o, float **eff, unsigned char **el, unsigned *ntab)
{
	if (skv_fa2_decode_init(&r->fa2, o->batch, o->heads, o->kv_heads, o->ctx, o->head_dim, o->sms) != SKV_OK ||
	    skv_fa2_num_splits(&r->fa2_splits, r->fa2.batch_nheads_mblocks, r->fa2.num_sms, r->fa2.num_n_blocks,
			       SKV_FA2_MAX_SPLITS) != SKV_OK)
		return SKV_EINVAL;
	/* the early return fired exactly when FA2 did not search (as in occupancy.c) */
	const float bhm = (float)r->fa2.batch_nheads_mblocks, almost = 0.8f * (float)r->fa2.num_sms;
	r->fa2_early = bhm >= almost;
	/* the fixed split size: given, or FA2's blocks per split at batch 1 */
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
	const unsigned sfix = ceil_div(o->ctx, r->split_size);
	unsigned n = o->max_splits;
	if (o->cands == REC_CANDS_LIST)
		for (size_t i = 0; i < o->nlist; i++)
			n = o->list[i] > n ? o->list[i] : n;
	n = n > SKV_FA2_MAX_SPLITS ? n : SKV_FA2_MAX_SPLITS;
	n = n > sfix ? n : sfix;
	*eff = malloc(n * sizeof **eff);
	*el = malloc(n);
	if (!*eff || !*el)
		return SKV_ENOMEM;
	int st = skv_fa2_split_table(*eff, *el, n, r->fa2.batch_nheads_mblocks, r->fa2.num_sms, r->fa2.num_n_blocks);
	if (st != SKV_OK)
		return st;
	*ntab = n;
	/* what FA2's search saw: eligible counts up to min(128, num_sms, blocks) */
	unsigned m = SKV_FA2_MAX_SPLITS;
	m = m < r->fa2.num_sms ? m : r->fa2.num_sms;
	m = m < r->fa2.num_n_blocks ? m : r->fa2.num_n_blocks;
	for (unsigned s = 1; !r->fa2_early && s <= m; s++)
		if ((*el)[s - 1] && (*eff)[s - 1] > r->fa2_best_eff) {
			r->fa2_best_eff = (*eff)[s - 1];
			r->fa2_best_splits = s;
		}
	r->fixed.splits = sfix;
	r->fixed.blocks_per_split = ceil_div(r->split_size, r->fa2.block_n);
	r->fixed.efficiency = (*eff)[sfix - 1];
	r->fixed.allowed = 0;
	return SKV_OK;
}

/* Per-run scratch: options, then per trial the metric of each option
 * (count options first, the fixed size last), the floor and the spread. */
typedef struct {
	option *ops;
	size_t nops;
	double *err;    /* [trials][nops] */
	double *floor;  /* [trials] */
	double *spread; /* [trials] */
	double *spread_rel; /* [trials] */
	skv_problem *prob; /* [live] */
	skv_dd *truth;     /* [live][d] */
	double *outs;      /* [live][nops][d] */
	int *status;       /* [live * (nops + 1)] */
} scratch;

static void scratch_free(scratch *w)
{
	for (size_t i = 0; w->ops && i < w->nops; i++)
		free(w->ops[i].bounds);
	free(w->ops);
	free(w->err);
	free(w->floor);
	free(w->spread);
	free(w->spread_rel);
	free(w->prob);
	free(w->truth);
	free(w->outs);
	free(w->status);
}

/* Trials [t0, t0 + nb): draw the problems, then run the truth and every
 * option as independent work items into their own slots, then reduce. */
static int run_batch(scratch *w, const rec_opts *o, const rec_result *r, size_t t0, size_t nb, char *msg,
		     size_t len)
{
	const size_t d = o->head_dim, nops = w->nops, nit = nops + 1;
	const int nth = (int)o->threads;
	memset(w->prob, 0, nb * sizeof *w->prob);
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth)
	for (size_t b = 0; b < nb; b++)
		w->status[b * nit] = skv_problem_init(&w->prob[b], 1, o->ctx, d, o->dist, o->score_scale, o->cfg.input,
						      skv_seed_mix(o->seed, t0 + b));
	for (size_t b = 0; b < nb; b++)
		if (w->status[b * nit] != SKV_OK) {
			const int st = w->status[b * nit];
			for (size_t k = 0; k < nb; k++) /* a failed init left its slot zeroed */
				skv_problem_free(&w->prob[k]);
			return fail(msg, len, st, "trial %zu: skv_problem_init", t0 + b);
		}
	/* Items: the nb truths first (the longest), then trial-major options. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(nth)
	for (size_t it = 0; it < nb * nit; it++) {
		if (it < nb) {
			skv_dd lse;
			w->status[it * nit] = skv_truth_range(w->truth + it * d, &lse, &w->prob[it], 0, 0, o->ctx,
							      SKV_TRUTH_PREC);
			/* MPFR caches constants (log 2 for exp) per thread; the
			 * pool's threads never return them, so free them here. */
			mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
		} else {
			const size_t b = (it - nb) / nops, c = (it - nb) % nops;
			w->status[b * nit + 1 + c] =
				run_option(w->outs + (b * nops + c) * d, &w->prob[b], &w->ops[c], r->fa2.block_n, o);
		}
	}
	for (size_t b = 0; b < nb; b++)
		skv_problem_free(&w->prob[b]);
	for (size_t b = 0; b < nb; b++)
		for (size_t c = 0; c < nit; c++)
			if (w->status[b * nit + c] != SKV_OK)
				return c == 0 ? fail(msg, len, w->status[b * nit], "trial %zu: skv_truth_range", t0 + b)
					      : fail(msg, len, w->status[b * nit + c], "trial %zu, %zu splits", t0 + b,
						     w->ops[c - 1].S);
	double *rt = malloc(d * sizeof *rt);
	if (!rt)
		return fail(msg, len, SKV_ENOMEM, "trial %zu", t0);
	int st = SKV_OK;
	for (size_t b = 0; b < nb && st == SKV_OK; b++) {
		const size_t t = t0 + b;
		const skv_dd *tr = w->truth + b * d;
		skv_errors e;
		for (size_t c = 0; c < nops && st == SKV_OK; c++) {
			st = skv_errors_compute(&e, w->outs + (b * nops + c) * d, tr, d, o->cfg.output);
			w->err[t * nops + c] = metric_of(&e, o->metric);
		}
		for (size_t i = 0; i < d; i++)
			rt[i] = round_truth(o->cfg.output, tr[i]);
		if (st == SKV_OK)
			st = skv_errors_compute(&e, rt, tr, d, o->cfg.output);
		w->floor[t] = metric_of(&e, o->metric);
		spread_of(&w->spread[t], &w->spread_rel[t], w->outs + b * nops * d, nops - 1, tr, d, o->cfg.output, rt);
	}
	free(rt);
	return st == SKV_OK ? SKV_OK : fail(msg, len, st, "trials from %zu: skv_errors_compute", t0);
}

static int measure(rec_result *r, const rec_opts *o, scratch *w, char *msg, size_t len)
{
	const size_t d = o->head_dim, T = o->trials;
	w->nops = r->nrows + 1;
	w->ops = calloc(w->nops, sizeof *w->ops);
	if (!w->ops)
		return fail(msg, len, SKV_ENOMEM, "options");
	for (size_t c = 0; c < w->nops; c++) {
		const int last = c == r->nrows;
		int st = make_option(&w->ops[c], o, r->fa2.block_n, last ? r->fixed.splits : r->rows[c].splits,
				     last ? r->split_size : 0);
		if (st != SKV_OK)
			return fail(msg, len, st, "split boundaries");
	}
	/* trials held at once: the threads, within LIVE_BYTES of problems */
	const size_t per = 16 * (size_t)o->ctx * d;
	size_t live = LIVE_BYTES / per;
	live = live < 1 ? 1 : live;
	live = live < o->threads ? live : o->threads;
	live = live < T ? live : T;
	w->err = malloc(T * w->nops * sizeof *w->err);
	w->floor = malloc(T * sizeof *w->floor);
	w->spread = malloc(T * sizeof *w->spread);
	w->spread_rel = malloc(T * sizeof *w->spread_rel);
	w->prob = calloc(live, sizeof *w->prob);
	w->truth = malloc(live * d * sizeof *w->truth);
	w->outs = malloc(live * w->nops * d * sizeof *w->outs);
	w->status = malloc(live * (w->nops + 1) * sizeof *w->status);
	if (!w->err || !w->floor || !w->spread || !w->spread_rel || !w->prob || !w->truth || !w->outs || !w->status)
		return fail(msg, len, SKV_ENOMEM, "%zu trials", T);
	for (size_t t0 = 0; t0 < T; t0 += live) {
		int st = run_batch(w, o, r, t0, T - t0 < live ? T - t0 : live, msg, len);
		if (st != SKV_OK)
			return st;
	}
	double *col = malloc(T * sizeof *col);
	if (!col)
		return fail(msg, len, SKV_ENOMEM, "summary");
	int st = SKV_OK;
	for (size_t c = 0; c < w->nops && st == SKV_OK; c++) {
		for (size_t t = 0; t < T; t++)
			col[t] = w->err[t * w->nops + c];
		st = summarize(c < r->nrows ? &r->rows[c] : &r->fixed, col, T, o->tol);
	}
	stat_summary s;
	if (st == SKV_OK)
		st = stats_compute(&s, w->floor, T);
	if (st == SKV_OK) {
		r->floor_median = s.median;
		r->floor_max = s.nnan ? NAN : s.max;
		r->spread_ulps = r->spread_norm_rel = 0.0;
		for (size_t t = 0; t < T; t++) {
			const double u = w->spread[t], v = w->spread_rel[t];
			r->spread_ulps = u > r->spread_ulps || isnan(u) || isnan(r->spread_ulps) ? u : r->spread_ulps;
			r->spread_norm_rel =
				v > r->spread_norm_rel || isnan(v) || isnan(r->spread_norm_rel) ? v : r->spread_norm_rel;
		}
	}
	free(col);
	return st == SKV_OK ? SKV_OK : fail(msg, len, st, "summary");
}

int rec_run(rec_result *out, const rec_opts *o, char *msg, size_t len)
{
	if (!out || !o || !o->preset || o->trials == 0 || o->threads == 0 || !(o->tol > 0) ||
	    skv_config_check(&o->cfg) != SKV_OK)
		return fail(msg, len, SKV_EINVAL, "bad options");
	rec_result r;
	memset(&r, 0, sizeof r);
	float *eff = NULL;
	unsigned char *el = NULL;
	unsigned ntab = 0;
	scratch w;
	memset(&w, 0, sizeof w);
	int st = occupancy(&r, o, &eff, &el, &ntab);
	if (st != SKV_OK)
		fail(msg, len, st, "FA2 heuristic on this shape");
	if (st == SKV_OK && (st = build_candidates(&r, o, eff, el, ntab)) != SKV_OK)
		fail(msg, len, st, "candidates");
	if (st == SKV_OK)
		st = measure(&r, o, &w, msg, len);
	free(eff);
	free(el);
	scratch_free(&w);
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
