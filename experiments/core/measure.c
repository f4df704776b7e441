/* measure.c - the one measurement: a problem and its exact truth, a split-kernel run, and a row's storage, merge, errors, floor and states. */
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>
#include "core/stats.h"
#include "core/sweep_internal.h"

skv_config sweep_config(const param_value *v, uint64_t trial)
{
	skv_config c = skv_config_uniform(SKV_FP32); /* every field set, the new ones included */
	c.input = (skv_format)v[P_INPUT].u;
	c.compute = (skv_format)v[P_COMPUTE].u;
	c.p = (skv_format)v[P_P].u;
	c.partial = (skv_format)v[P_PARTIAL].u;
	c.lse = (skv_format)v[P_LSE].u;
	c.combine = (skv_format)v[P_COMBINE].u;
	c.output = (skv_format)v[P_OUTPUT].u;
	c.base = (skv_lse_base)v[P_LSE_BASE].u; /* the library's own values */
	c.blocks = (skv_blocks)v[P_BLOCKS].u;
	c.acc = (int)v[P_ACC].u;
	c.formula = (skv_formula)v[P_FORMULA].u;
	c.lanes = (unsigned)v[P_LANES].u;
	c.lane_keys = (unsigned)v[P_LANE_KEYS].u;
	c.math = v[P_MATH].u == MATH_OWN ? SKV_MATH_EXACT : (skv_math)v[P_MATH].u; /* own without a preset */
	c.math_seed = c.math == SKV_MATH_EXACT ? 0 : seed_math(v[P_SEED].u, trial);
	c.gpu = (int)v[P_GPU].u; /* the library's skv_gpu values */
	return c;
}

skv_merge_spec sweep_merge(const param_value *v, uint64_t trial)
{
	skv_merge_spec ms = skv_merge_spec_default();
	ms.merge = (skv_merge)v[P_MERGE].u;
	ms.order = (skv_order)v[P_ORDER].u;
	ms.empty = (skv_empty)v[P_EMPTY].u;
	ms.threads = (unsigned)v[P_MERGE_THREADS].u;
	ms.round_states = (int)v[P_ROUND_STATES].u;
	ms.norm = (skv_norm)v[P_NORM].u;
	ms.seed = seed_order(v[P_SEED].u, trial);
	return ms;
}

size_t sweep_query_rows(unsigned kind, const param_value *v)
{
	return kind == KIND_ONLINE && v[P_CAUSAL].u ? (size_t)v[P_CTX].u : 1;
}

/* t + c as a double-double. Knuth's two-sum gives s + err = t.hi + c
 * exactly; adding t.lo and renormalizing costs a few units of 2^-106
 * relative, far below any lse_err a format can show. */
static skv_dd dd_add(skv_dd t, double c)
{
	if (!isfinite(t.hi) || !isfinite(c)) {
		skv_dd r = {t.hi + c, 0.0};
		return r;
	}
	double s = t.hi + c, bb = s - t.hi;
	double err = (t.hi - (s - bb)) + (c - bb);
	double lo = err + t.lo, hi = s + lo;
	skv_dd r = {hi, lo - (hi - s)};
	return r;
}

/* Score sets of a causal instance (one row per key) hold nq n doubles: up
 * to this many; beyond, its runs score for themselves. */
#define SCORES_MAX_DOUBLES ((size_t)1 << 23)

/* ------------------------------------------------------------- instances */

skv_kv_cache sweep_kv_cache(const param_value *v)
{
	const double g = v[P_KV_SCALE_VALUE].r;
	skv_kv_cache kc = {(int)v[P_KV_CACHE].u, (skv_kv_scale)v[P_KV_SCALE].u, (skv_kv_deq)v[P_KV_DEQ].u, g, g};
	return kc;
}

/* The problem of the row's seed, and with a KV cache its quantized views:
 * the kernel reads the cache (in->prob), the truths are taken of the
 * stored values and of the original ones (measure_truth). */
int measure_instance(sweep *w, instance *in)
{
	param_value v[NPARAMS];
	uint64_t trial;
	sweep_row_spec(w, in->rep, NULL, NULL, &trial);
	sweep_row_values(w, in->rep, v);
	size_t n = (size_t)v[P_CTX].u, d = (size_t)v[P_HEAD_DIM].u;
	in->has_kv = v[P_KV_CACHE].u != 0;
	in->tout = malloc(in->nq * d * sizeof *in->tout);
	in->tlse = malloc(in->nq * sizeof *in->tlse);
	if (in->has_kv) {
		in->oout = malloc(in->nq * d * sizeof *in->oout);
		in->olse = malloc(in->nq * sizeof *in->olse);
	}
	if (!in->tout || !in->tlse || (in->has_kv && (!in->oout || !in->olse)))
		return SKV_ENOMEM;
	const skv_format input = (skv_format)v[P_INPUT].u;
	in->prob = &in->pk.prob;
	if (!in->has_kv)
		return skv_packed_init(&in->pk, in->nq, n, d, (skv_dist)v[P_DIST].u, v[P_SCORE_SCALE].r, input,
				       seed_problem(v[P_SEED].u, trial));
	/* the same values as the packed draw (skv_packed_init: value for value) */
	int st = skv_problem_init(&in->orig, in->nq, n, d, (skv_dist)v[P_DIST].u, v[P_SCORE_SCALE].r, input,
				  seed_problem(v[P_SEED].u, trial));
	if (st != SKV_OK)
		return st;
	const skv_kv_cache kc = sweep_kv_cache(v);
	st = skv_kv_quantize(&in->kv, &in->orig, input, &kc);
	in->kv_range = st == SKV_ERANGE;
	if (st == SKV_OK) {
		/* the kernel reads the cache as doubles (the codes of the scores
		 * placement need not fit the input's store); kv owns the arrays */
		in->pk.prob = in->kv.kern;
		in->pk.store = SKV_STORE_F64;
		in->pk.k = in->kv.kern.k;
		in->pk.v = in->kv.kern.v;
	}
	return st;
}

void measure_instance_free(instance *in)
{
	if (in->has_kv) { /* pk views kv's arrays: kv frees them */
		in->pk = (skv_packed){.prob = {0}};
		skv_kv_problem_free(&in->kv);
		skv_problem_free(&in->orig);
	}
	skv_packed_free(&in->pk);
	free(in->tout);
	free(in->tlse);
	free(in->oout);
	free(in->olse);
	for (size_t i = 0; i < in->nz; i++)
		free(in->z[i]);
	free(in->z);
	free(in->zcfg);
	free(in->zoff);
	memset(&in->pk, 0, sizeof in->pk);
	in->tout = in->tlse = in->oout = in->olse = NULL;
	in->has_kv = 0;
	in->z = NULL;
	in->zcfg = NULL;
	in->zoff = NULL;
	in->nz = 0;
}

size_t measure_instance_bytes(const sweep *w, const instance *in)
{
	param_value v[NPARAMS];
	sweep_row_values(w, in->rep, v);
	size_t n = (size_t)v[P_CTX].u, d = (size_t)v[P_HEAD_DIM].u;
	const size_t wb = skv_store_bytes((skv_store)skv_store_of((skv_format)v[P_INPUT].u));
	/* q as doubles, K and V packed, the truth, and a few score sets of nq n */
	const size_t zs = in->nq <= SCORES_MAX_DOUBLES / n ? 4 * in->nq * n * sizeof(double) : 0;
	if (v[P_KV_CACHE].u != 0) /* doubles: the original, the kernel's view, (scores) the truth's; two truths */
		return (v[P_KV_DEQ].u == SKV_KVD_SCORES ? 3 : 2) * (in->nq + 2 * n) * d * sizeof(double) +
		       2 * in->nq * (d + 1) * sizeof(skv_dd) + zs;
	return in->nq * d * sizeof(double) + 2 * n * d * wb + in->nq * (d + 1) * sizeof(skv_dd) + zs;
}

/* A drawn problem that overflows its input format, or a KV cache that
 * stores a non-finite value (an overflow in a cache format whose policy is
 * NaN or infinity): a usage error, named by the flags that chose it
 * (skv_problem_init's SKV_ERANGE: a value, the sink key or the ramp outside
 * the format, or no direction for them; skv_kv_quantize's). */
int measure_range_error(message *e, const sweep *w, size_t row, int kv)
{
	param_value v[NPARAMS];
	size_t p;
	uint64_t t;
	const run_spec *s = sweep_row_spec(w, row, NULL, &p, &t);
	sweep_row_values(w, row, v);
	const int f[2][3] = {{P_INPUT, P_SCORE_SCALE, P_DIST}, {P_KV_CACHE, P_KV_SCALE, P_KV_SCALE_VALUE}};
	char a[3][32];
	for (int i = 0; i < 3; i++)
		param_format(a[i], sizeof a[i], f[kv][i], v[f[kv][i]]);
	if (kv)
		msg_set(e, "skv: %s: --kv-cache=%s with --kv-scale=%s --kv-scale-value=%s stores a value beyond the "
			   "cache format's largest %g (NaN or inf) at point %zu trial %llu; use a saturating format "
			   "(e4m3-sat, e5m2-sat) or a larger scale",
			s->exp->name, a[0], a[1], a[2], skv_format_max((skv_format)(v[P_KV_CACHE].u - 1)), p,
			(unsigned long long)t);
	else
		msg_set(e, "skv: %s: --score-scale=%s with --dist=%s draws a value that --input=%s cannot hold (largest "
			   "%g) at point %zu trial %llu; lower --score-scale or widen --input",
			s->exp->name, a[1], a[2], a[0], skv_format_max((skv_format)v[P_INPUT].u), p, (unsigned long long)t);
	return SKV_EINVAL;
}

int measure_truth(instance *in, size_t qr, int causal)
{
	const size_t d = in->prob->d;
	size_t hi = causal ? qr + 1 : in->prob->n;
	int st = in->has_kv ? skv_truth_range(in->tout + qr * d, &in->tlse[qr], &in->kv.truth, qr, 0, hi, SKV_TRUTH_PREC)
			    : skv_truth_range_packed(in->tout + qr * d, &in->tlse[qr], &in->pk, qr, 0, hi, SKV_TRUTH_PREC);
	if (st == SKV_OK && in->has_kv)
		st = skv_truth_range(in->oout + qr * d, &in->olse[qr], &in->orig, qr, 0, hi, SKV_TRUTH_PREC);
	/* MPFR caches constants (log 2 for exp) per thread when its fallback
	 * ran; the pool's threads never return them, so free them here (skv.h,
	 * threads). */
	mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
	return st;
}

/* ------------------------------------------------------------ kernel runs */

/* The scores do not depend on the splits, the layout or the block size
 * (skv_scores): runs of one instance that score alike (skv_scores_shared,
 * the same offset bits) share one set. Called from one thread, in run
 * order, so the numbering does not depend on the schedule. */
int measure_score_slot(sweep *w, kernel_run *kr)
{
	param_value v[NPARAMS];
	uint64_t trial;
	sweep_row_spec(w, kr->rep, NULL, NULL, &trial);
	sweep_row_values(w, kr->rep, v);
	instance *in = &w->inst[w->row_inst[kr->rep]];
	kr->zi = SIZE_MAX;
	if (in->nq > SCORES_MAX_DOUBLES / in->prob->n)
		return SKV_OK;
	const skv_config cfg = sweep_config(v, trial);
	const double off = v[P_LSE_OFFSET].r;
	for (size_t i = 0; i < in->nz; i++)
		if (skv_scores_shared(&in->zcfg[i], &cfg) && memcmp(&in->zoff[i], &off, sizeof off) == 0) {
			kr->zi = i;
			return SKV_OK;
		}
	double **z = realloc(in->z, (in->nz + 1) * sizeof *z);
	if (z)
		in->z = z;
	skv_config *c = realloc(in->zcfg, (in->nz + 1) * sizeof *c);
	if (c)
		in->zcfg = c;
	double *o = realloc(in->zoff, (in->nz + 1) * sizeof *o);
	if (o)
		in->zoff = o;
	if (!z || !c || !o)
		return SKV_ENOMEM;
	in->z[in->nz] = NULL;
	in->zcfg[in->nz] = cfg;
	in->zoff[in->nz] = off;
	kr->zi = in->nz++;
	return SKV_OK;
}

/* Set zi of `in`: row r's scores at z + r n, over the causal prefix where
 * the instance has one row per key. */
int measure_scores(instance *in, size_t zi)
{
	const size_t n = in->prob->n;
	in->z[zi] = malloc(in->nq * n * sizeof **in->z);
	if (!in->z[zi])
		return SKV_ENOMEM;
	int st = SKV_OK;
	for (size_t r = 0; r < in->nq && st == SKV_OK; r++)
		st = skv_scores_packed(in->z[zi] + r * n, &in->pk, r, 0, in->nq > 1 ? r + 1 : n, in->zoff[zi],
				       &in->zcfg[zi]);
	return st;
}

int measure_kernel(sweep *w, kernel_run *kr)
{
	param_value v[NPARAMS];
	uint64_t trial;
	sweep_row_spec(w, kr->rep, NULL, NULL, &trial);
	sweep_row_values(w, kr->rep, v);
	const instance *in = &w->inst[w->row_inst[kr->rep]];
	const double *z = kr->zi != SIZE_MAX ? in->z[kr->zi] : NULL;
	size_t S = (size_t)v[P_SPLITS].u, n = in->prob->n, ntiles = S;
	skv_config cfg = sweep_config(v, trial);
	size_t *bounds = NULL;
	int st;
	if (v[P_LAYOUT].u == LAYOUT_SYSTEM) { /* a system's layout: contiguous or interleaved tiles */
		st = layout_system_tiles(&bounds, &ntiles, S, v);
	} else {
		bounds = malloc((S + 1) * sizeof *bounds);
		st = bounds ? layout_bounds(bounds, n, S, (layout_id)v[P_LAYOUT].u, seed_layout(v[P_SEED].u, trial),
					    (size_t)v[P_BLOCK_SIZE].u, (size_t)v[P_SPLIT_SIZE].u)
			    : SKV_ENOMEM;
	}
	if (st == SKV_OK)
		st = skv_partials_init(&kr->sp, S, in->prob->d);
	if (st == SKV_OK && v[P_LAYOUT].u == LAYOUT_ALL_EMPTY) {
		/* every key masked: what a split kernel writes for an empty split */
		for (size_t s = 0; s < S; s++) {
			kr->sp.lse[s] = kr->sp.m[s] = -INFINITY;
			kr->sp.l[s] = 0.0;
		}
	} else if (st == SKV_OK && v[P_LAYOUT].u == LAYOUT_SYSTEM) {
		st = skv_split_kernel_packed(&kr->sp, &in->pk, 0, z, bounds, ntiles, S,
					     (size_t)v[P_BLOCK_SIZE].u, v[P_LSE_OFFSET].r, &cfg);
	} else if (st == SKV_OK) {
		st = skv_split_kernel_packed(&kr->sp, &in->pk, 0, z, bounds, S, S,
					     (size_t)v[P_BLOCK_SIZE].u, v[P_LSE_OFFSET].r, &cfg);
	}
	free(bounds);
	return st;
}

/* ------------------------------------------------------------------ rows */

/* The floor of the output format: the errors of the exact output rounded
 * once to it (skv_dd_round, the one rounding of the truth), which no
 * computation in that format can beat. */
int measure_floor(skv_errors *fe, const skv_dd *truth, size_t n, skv_format f)
{
	double *fl = malloc(n * sizeof *fl);
	if (!fl)
		return SKV_ENOMEM;
	for (size_t i = 0; i < n; i++)
		fl[i] = skv_dd_round(f, truth[i]);
	int rc = skv_errors_compute(fe, fl, truth, n, f);
	free(fl);
	return rc;
}

/* NaN anywhere wins over an infinity, which wins over finite. */
static int out_state(const double *o, size_t n)
{
	int s = OUT_FINITE;
	for (size_t i = 0; i < n; i++) {
		if (isnan(o[i]))
			return OUT_NAN;
		if (isinf(o[i]))
			s = OUT_INF;
	}
	return s;
}

static int lse_state(double l)
{
	return isnan(l) ? LSE_NAN : l == INFINITY ? LSE_POS_INF : l == -INFINITY ? LSE_NEG_INF : LSE_FINITE;
}

const char *out_state_name(int s)
{
	static const char *const n[] = {"finite", "nan", "inf"};
	return s >= 0 && s < (int)(sizeof n / sizeof n[0]) ? n[s] : "?";
}

const char *lse_state_name(int s)
{
	static const char *const n[] = {"finite", "-inf", "+inf", "nan"};
	return s >= 0 && s < (int)(sizeof n / sizeof n[0]) ? n[s] : "?";
}

/* The errors of out[0..n) (the row's result, in the output format) against
 * the truth, the floor, and the output state; the output is kept in the
 * row when the sweep asks for it (out is then the row's, not freed). */
static int measure_out(sweep *w, size_t r, double *out, const skv_dd *truth, size_t n, skv_format f)
{
	sweep_row *row = &w->rows[r];
	int rc = skv_errors_compute(&row->err, out, truth, n, f);
	if (rc == SKV_OK)
		rc = measure_floor(&row->floor, truth, n, f);
	row->out_state = (unsigned char)out_state(out, n);
	if (rc == SKV_OK && w->keep_outputs) {
		row->truth = malloc(n * sizeof *row->truth);
		if (!row->truth) {
			free(out);
			return SKV_ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			row->truth[i] = truth[i].hi;
		row->out = out;
		return SKV_OK;
	}
	free(out);
	return rc;
}

/* A split-kind row: store the shared kernel run in the row's formats, merge,
 * measure. */
static int row_split(sweep *w, size_t r, const param_value *v, uint64_t trial)
{
	const instance *in = &w->inst[w->row_inst[r]];
	const kernel_run *kr = &w->runs[w->row_run[r]];
	const size_t d = in->prob->d;
	skv_config cfg = sweep_config(v, trial);
	skv_partials st;
	int rc = skv_partials_init(&st, kr->sp.S, d);
	if (rc != SKV_OK)
		return rc;
	double *out = malloc(d * sizeof *out), lse = 0.0;
	rc = out ? skv_partials_store(&st, &kr->sp, &cfg) : SKV_ENOMEM;
	skv_merge_spec ms = sweep_merge(v, trial);
	if (rc == SKV_OK)
		rc = skv_merge_run(out, &lse, &st, &ms, &cfg);
	skv_partials_free(&st);
	/* All keys masked: the exact attention is empty, output 0, LSE -inf. */
	const int masked = v[P_LAYOUT].u == LAYOUT_ALL_EMPTY;
	skv_dd *zero = masked ? calloc(d, sizeof *zero) : NULL;
	if (rc != SKV_OK || (masked && !zero)) {
		free(out);
		free(zero);
		return rc != SKV_OK ? rc : SKV_ENOMEM;
	}
	if (in->has_kv) /* scores placement: V's scale on the merged output */
		for (size_t i = 0; i < d; i++)
			out[i] = skv_kv_post(cfg.output, out[i], in->kv.v_post);
	skv_dd tl = masked ? (skv_dd){-INFINITY, 0.0} : dd_add(in->tlse[0], v[P_LSE_OFFSET].r);
	w->rows[r].lse_err = skv_abs_err(lse, tl);
	w->rows[r].lse_state = (unsigned char)lse_state(lse);
	/* the second reference: the original K and V (the same truth without a cache) */
	const int orig = in->has_kv && !masked;
	skv_dd to = orig ? dd_add(in->olse[0], v[P_LSE_OFFSET].r) : tl;
	w->rows[r].lse_err_orig = skv_abs_err(lse, to);
	rc = orig ? skv_errors_compute(&w->rows[r].err_orig, out, in->oout, d, cfg.output) : SKV_OK;
	if (rc == SKV_OK)
		rc = measure_out(w, r, out, masked ? zero : in->tout, d, cfg.output);
	else
		free(out);
	if (!orig) /* the same truth: the same errors */
		w->rows[r].err_orig = w->rows[r].err;
	free(zero);
	return rc;
}

/* An online-kind row: blockwise attention over every query row. */
static int row_online(sweep *w, size_t r, const param_value *v, uint64_t trial)
{
	const instance *in = &w->inst[w->row_inst[r]];
	const size_t d = in->prob->d, nq = in->nq;
	const size_t zi = w->runs[w->row_run[r]].zi;
	skv_config cfg = sweep_config(v, trial);
	double *out = malloc(nq * d * sizeof *out), *lse = malloc(nq * sizeof *lse);
	int rc = out && lse ? SKV_OK : SKV_ENOMEM;
	if (rc == SKV_OK)
		rc = skv_attention_online_packed(out, lse, &in->pk, zi != SIZE_MAX ? in->z[zi] : NULL,
						 (size_t)v[P_BLOCK_SIZE].u, (int)v[P_CAUSAL].u,
					  v[P_LSE_OFFSET].r, &cfg);
	if (rc != SKV_OK) {
		free(out);
		free(lse);
		return rc;
	}
	double m = 0.0;
	int ls = LSE_FINITE;
	for (size_t i = 0; i < nq; i++) {
		m = stats_max(m, skv_abs_err(lse[i], dd_add(in->tlse[i], v[P_LSE_OFFSET].r)));
		if (lse_state(lse[i]) > ls)
			ls = lse_state(lse[i]);
	}
	free(lse);
	w->rows[r].lse_err = w->rows[r].lse_err_orig = m;
	w->rows[r].lse_state = (unsigned char)ls;
	int rc2 = measure_out(w, r, out, in->tout, nq * d, cfg.output);
	w->rows[r].err_orig = w->rows[r].err; /* no cache in the online kind: one reference */
	return rc2;
}

int measure_row(sweep *w, size_t r)
{
	param_value v[NPARAMS];
	uint64_t trial;
	const run_spec *s = sweep_row_spec(w, r, NULL, NULL, &trial);
	sweep_row_values(w, r, v);
	return s->exp->kind == KIND_ONLINE ? row_online(w, r, v, trial) : row_split(w, r, v, trial);
}
