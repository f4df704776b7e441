/* engine.c - the experiment engine: shared instances and truths, shared split-kernel runs, then rows; deterministic in parallel. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/core.h"

/*
 * Nothing is computed twice and nothing depends on the thread count:
 *  1. instances: rows with the same (ctx, head_dim, dist, score_scale, input,
 *     query rows, seed, trial) share one skv_problem and its MPFR truth (per
 *     query row: the whole context, or the causal prefix);
 *  2. kernel runs: rows of one instance with the same (splits, layout,
 *     compute, p, lse_base, lse_offset, block_size) share one skv_split_kernel
 *     result, left in the compute format;
 *  3. rows: store in the row's partial and LSE formats, merge, measure (or,
 *     for the online kind, run skv_attention_online and measure).
 * Sharing keys are exact (reals by their bits); unique items are numbered in
 * key order. Each phase is an OpenMP loop with a dynamic schedule writing only
 * the slot of its own item, and instances are processed in chunks of bounded
 * memory, so the results are the same for any schedule and any chunking.
 *
 * Seeds. Trial t of a run with base seed S uses
 *   problem seed  P = skv_seed_mix(S, t)      (skv_problem_init)
 *   layout seed     skv_seed_mix(P, 1)        (the random layout's cuts)
 *   order seed      skv_seed_mix(P, 2)        (the random reduction order)
 * so one CSV row is reproduced from its seed and trial columns alone, and
 * every variant of a trial (formats, merges, orders) sees the same problem.
 */
uint64_t seed_problem(uint64_t seed, uint64_t trial) { return skv_seed_mix(seed, trial); }
uint64_t seed_layout(uint64_t seed, uint64_t trial)
{
	return skv_seed_mix(seed_problem(seed, trial), 1);
}
uint64_t seed_order(uint64_t seed, uint64_t trial)
{
	return skv_seed_mix(seed_problem(seed, trial), 2);
}

/* Instances of one chunk are kept in memory together: problems plus truths
 * up to this many bytes (at least one instance), then freed. */
static const size_t chunk_bytes = (size_t)256 << 20;

enum { KEY_WORDS = 8 };

/* One random instance: the problem and its exact attention. */
typedef struct {
	size_t rep; /* first row that uses it */
	size_t nq;
	skv_problem prob;
	skv_dd *tout; /* [nq][d] */
	skv_dd *tlse; /* [nq] */
	int st;
} instance;

/* One split-kernel run, in the compute format, shared by every row that
 * differs only in storage formats, merge, order, combine and output. */
typedef struct {
	size_t rep;
	skv_partials sp;
	int st;
} kernel_run;

typedef struct {
	const uint64_t *key;
	size_t idx;
} keyref;

static int keyref_cmp(const void *a, const void *b)
{
	const keyref *x = a, *y = b;
	for (size_t i = 0; i < KEY_WORDS; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* ids[i] = the number of the distinct key of item i (numbered in key order);
 * rep[id] = the first item with that key. keys is [n][KEY_WORDS]. */
static int dedupe(size_t *ids, size_t **rep_out, size_t *nunique, const uint64_t *keys, size_t n)
{
	keyref *refs = malloc((n ? n : 1) * sizeof *refs);
	size_t *rep = malloc((n ? n : 1) * sizeof *rep);
	if (!refs || !rep) {
		free(refs);
		free(rep);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		refs[i].key = keys + i * KEY_WORDS;
		refs[i].idx = i;
	}
	qsort(refs, n, sizeof *refs, keyref_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || memcmp(refs[i].key, refs[i - 1].key, KEY_WORDS * sizeof(uint64_t)) != 0)
			rep[u++] = refs[i].idx; /* ties sort by index: the first item */
		ids[refs[i].idx] = u - 1;
	}
	free(refs);
	*rep_out = rep;
	*nunique = u;
	return SKV_OK;
}

static uint64_t bits_of(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static skv_config config_of(const param_value *v)
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
	return c;
}

static size_t nq_of(unsigned kind, const param_value *v)
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

/* max that keeps NaN: a NaN lse anywhere makes the row's lse_err NaN. */
static double max_nan(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress on a terminal. The phases differ in cost, so progress is counted
 * in work units of roughly equal time, measured once on x86-64: drawing a
 * problem costs about 2 units per drawn value, an MPFR truth about 8 per key
 * and dimension, the split kernel and the online softmax 1, a store and
 * merge about 1 per split and dimension. Only the ETA uses them. */
enum { WORK_DRAW = 2, WORK_TRUTH = 8, WORK_KERNEL = 1, WORK_MERGE = 1 };

typedef struct {
	FILE *f;
	const char *name;
	double t0, last, work_done, work_total;
	size_t points_done, npoints;
	uint64_t trials;
	uint64_t *trials_done; /* per point */
	int printed;
} progress;

static void progress_print(progress *pg, int final)
{
	double el = now_s() - pg->t0, frac = pg->work_total > 0 ? pg->work_done / pg->work_total : 1.0;
	/* Points finish only in the last phase (each needs all its trials'
	 * truths and kernel runs), so the share of the work leads the line. */
	fprintf(pg->f, "\rskv: %s: %3.0f%% of the work, %zu/%zu points done, %.1f s elapsed", pg->name,
		100.0 * (frac < 1.0 ? frac : 1.0), pg->points_done, pg->npoints, el);
	if (!final && frac > 0)
		fprintf(pg->f, ", ETA %.1f s  ", el * (1.0 - frac) / frac);
	else
		fprintf(pg->f, "%s", final ? "          \n" : "  ");
	fflush(pg->f);
	pg->printed = 1;
}

/* Called once per finished item, from any thread; point is the point of a
 * finished row, or SIZE_MAX for a truth or kernel item. */
static void progress_add(progress *pg, double work, size_t point)
{
	if (!pg->f)
		return;
#pragma omp critical(skv_progress_line)
	{
		pg->work_done += work;
		if (point != SIZE_MAX && ++pg->trials_done[point] == pg->trials)
			pg->points_done++;
		double t = now_s();
		if (t - pg->last >= 0.25) {
			pg->last = t;
			progress_print(pg, 0);
		}
	}
}

/* The work of one run, shared by the phase functions. */
typedef struct {
	const run_spec *s;
	size_t nrows;
	uint64_t trials;
	size_t *row_inst, *row_run;
	instance *inst;
	size_t ninst;
	kernel_run *runs;
	size_t nruns;
	sweep_row *rows;
	int *row_st;
	size_t n_truth, n_kernel;
	progress pg;
	int threads;
} engine;

static void row_values(const engine *en, size_t row, param_value v[NPARAMS])
{
	spec_values(en->s, row / en->trials, v);
}

/* Work units (see progress) of the items, for the ETA only. */
static double keys_dims(const param_value *v, int causal)
{
	double n = (double)v[P_CTX].u, d = (double)v[P_HEAD_DIM].u;
	return (causal ? n * (n + 1) / 2 : n) * d;
}

static double draw_work(const param_value *v, size_t nq)
{
	return WORK_DRAW * (double)(nq + 2 * v[P_CTX].u) * (double)v[P_HEAD_DIM].u;
}

static double kernel_work(const engine *en, size_t rep)
{
	param_value v[NPARAMS];
	row_values(en, rep, v);
	return WORK_KERNEL * keys_dims(v, 0);
}

static double row_work(const engine *en, size_t r)
{
	param_value v[NPARAMS];
	row_values(en, r, v);
	if (en->s->exp->kind == KIND_ONLINE)
		return WORK_KERNEL * keys_dims(v, nq_of(KIND_ONLINE, v) > 1);
	return WORK_MERGE * (double)v[P_SPLITS].u * (double)v[P_HEAD_DIM].u;
}

static double total_work(const engine *en)
{
	double w = 0;
	for (size_t i = 0; i < en->ninst; i++) {
		param_value v[NPARAMS];
		row_values(en, en->inst[i].rep, v);
		w += WORK_TRUTH * keys_dims(v, en->inst[i].nq > 1) + draw_work(v, en->inst[i].nq);
	}
	for (size_t k = 0; k < en->nruns; k++)
		w += kernel_work(en, en->runs[k].rep);
	for (size_t r = 0; r < en->nrows; r++)
		w += row_work(en, r);
	return w;
}

static int instance_init(engine *en, instance *in)
{
	param_value v[NPARAMS];
	row_values(en, in->rep, v);
	uint64_t trial = in->rep % en->trials;
	size_t n = (size_t)v[P_CTX].u, d = (size_t)v[P_HEAD_DIM].u;
	in->tout = malloc(in->nq * d * sizeof *in->tout);
	in->tlse = malloc(in->nq * sizeof *in->tlse);
	if (!in->tout || !in->tlse)
		return SKV_ENOMEM;
	return skv_problem_init(&in->prob, in->nq, n, d, (skv_dist)v[P_DIST].u, v[P_SCORE_SCALE].r,
				(skv_format)v[P_INPUT].u,
				seed_problem(v[P_SEED].u, trial));
}

static void instance_free(instance *in)
{
	skv_problem_free(&in->prob);
	free(in->tout);
	free(in->tlse);
	memset(&in->prob, 0, sizeof in->prob);
	in->tout = NULL;
	in->tlse = NULL;
}

static size_t instance_bytes(const engine *en, const instance *in)
{
	param_value v[NPARAMS];
	row_values(en, in->rep, v);
	size_t n = (size_t)v[P_CTX].u, d = (size_t)v[P_HEAD_DIM].u;
	return (in->nq + 2 * n) * d * sizeof(double) + in->nq * (d + 1) * sizeof(skv_dd);
}

/* Exact attention of query row qr of instance in: the whole context, or its
 * causal prefix 0..qr when the instance has one row per key. */
static int truth_row(instance *in, size_t qr, int causal)
{
	const size_t d = in->prob.d;
	size_t hi = causal ? qr + 1 : in->prob.n;
	return skv_truth_range(in->tout + qr * d, &in->tlse[qr], &in->prob, qr, 0, hi, SKV_TRUTH_PREC);
}

static int kernel_run_do(engine *en, kernel_run *kr)
{
	param_value v[NPARAMS];
	row_values(en, kr->rep, v);
	uint64_t trial = kr->rep % en->trials;
	const instance *in = &en->inst[en->row_inst[kr->rep]];
	size_t S = (size_t)v[P_SPLITS].u, n = in->prob.n;
	skv_config cfg = config_of(v);
	size_t *bounds = malloc((S + 1) * sizeof *bounds);
	if (!bounds)
		return SKV_ENOMEM;
	int st = layout_bounds(bounds, n, S, (layout_id)v[P_LAYOUT].u,
				       seed_layout(v[P_SEED].u, trial));
	if (st == SKV_OK)
		st = skv_partials_init(&kr->sp, S, in->prob.d);
	if (st == SKV_OK && v[P_LAYOUT].u == LAYOUT_ALL_EMPTY) {
		/* every key masked: what a split kernel writes for an empty split */
		for (size_t s = 0; s < S; s++) {
			kr->sp.lse[s] = kr->sp.m[s] = -INFINITY;
			kr->sp.l[s] = 0.0;
		}
	} else if (st == SKV_OK)
		st = skv_split_kernel(&kr->sp, &in->prob, 0, bounds, S, (size_t)v[P_BLOCK_SIZE].u,
				      v[P_LSE_OFFSET].r, &cfg);
	free(bounds);
	return st;
}

/* The floor of the output format: the normwise error of the exact output
 * rounded once to it, which no computation in that format can beat. */
static int floor_err(double *fe, const skv_dd *truth, size_t n, skv_format f)
{
	double *fl = malloc(n * sizeof *fl);
	if (!fl)
		return SKV_ENOMEM;
	for (size_t i = 0; i < n; i++)
		fl[i] = skv_dd_round(f, truth[i]);
	skv_errors e;
	int rc = skv_errors_compute(&e, fl, truth, n, f);
	*fe = e.norm_rel;
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
	return isnan(l) ? LSE_NAN : l == INFINITY ? LSE_POS_INF
			  : l == -INFINITY ? LSE_NEG_INF : LSE_FINITE;
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

/* A split-kind row: store the shared kernel run in the row's formats, merge,
 * measure. */
static int row_split(engine *en, size_t r)
{
	param_value v[NPARAMS];
	row_values(en, r, v);
	uint64_t trial = r % en->trials;
	const instance *in = &en->inst[en->row_inst[r]];
	const kernel_run *kr = &en->runs[en->row_run[r]];
	const size_t d = in->prob.d;
	skv_config cfg = config_of(v);
	skv_partials st;
	int rc = skv_partials_init(&st, kr->sp.S, d);
	if (rc != SKV_OK)
		return rc;
	double *out = malloc(d * sizeof *out), lse = 0.0;
	rc = out ? skv_partials_store(&st, &kr->sp, &cfg) : SKV_ENOMEM;
	if (rc == SKV_OK) {
		skv_merge_spec ms = skv_merge_spec_default();
		ms.merge = (skv_merge)v[P_MERGE].u;
		ms.order = (skv_order)v[P_ORDER].u;
		ms.empty = (skv_empty)v[P_EMPTY].u;
		ms.threads = (unsigned)v[P_MERGE_THREADS].u;
		ms.round_states = (int)v[P_ROUND_STATES].u;
		ms.seed = seed_order(v[P_SEED].u, trial);
		rc = skv_merge_run(out, &lse, &st, &ms, &cfg);
	}
	/* All keys masked: the exact attention is empty, output 0, LSE -inf. */
	const int masked = v[P_LAYOUT].u == LAYOUT_ALL_EMPTY;
	skv_dd *zero = masked ? calloc(d, sizeof *zero) : NULL;
	if (masked && !zero)
		rc = SKV_ENOMEM;
	if (rc == SKV_OK)
		rc = skv_errors_compute(&en->rows[r].err, out, masked ? zero : in->tout, d, cfg.output);
	if (rc == SKV_OK)
		rc = floor_err(&en->rows[r].floor_err, masked ? zero : in->tout, d, cfg.output);
	if (rc == SKV_OK) {
		skv_dd tl = masked ? (skv_dd){-INFINITY, 0.0} : dd_add(in->tlse[0], v[P_LSE_OFFSET].r);
		en->rows[r].lse_err = skv_abs_err(lse, tl);
		en->rows[r].out_state = (unsigned char)out_state(out, d);
		en->rows[r].lse_state = (unsigned char)lse_state(lse);
	}
	free(zero);
	free(out);
	skv_partials_free(&st);
	return rc;
}

/* An online-kind row: blockwise attention over every query row. */
static int row_online(engine *en, size_t r)
{
	param_value v[NPARAMS];
	row_values(en, r, v);
	const instance *in = &en->inst[en->row_inst[r]];
	const size_t d = in->prob.d, nq = in->nq;
	skv_config cfg = config_of(v);
	double *out = malloc(nq * d * sizeof *out), *lse = malloc(nq * sizeof *lse);
	int rc = out && lse ? SKV_OK : SKV_ENOMEM;
	if (rc == SKV_OK)
		rc = skv_attention_online(out, lse, &in->prob, (size_t)v[P_BLOCK_SIZE].u,
					  (int)v[P_CAUSAL].u, v[P_LSE_OFFSET].r, &cfg);
	if (rc == SKV_OK)
		rc = skv_errors_compute(&en->rows[r].err, out, in->tout, nq * d, cfg.output);
	if (rc == SKV_OK)
		rc = floor_err(&en->rows[r].floor_err, in->tout, nq * d, cfg.output);
	if (rc == SKV_OK) {
		double m = 0.0;
		int ls = LSE_FINITE;
		for (size_t i = 0; i < nq; i++) {
			m = max_nan(m, skv_abs_err(lse[i], dd_add(in->tlse[i], v[P_LSE_OFFSET].r)));
			if (lse_state(lse[i]) > ls)
				ls = lse_state(lse[i]);
		}
		en->rows[r].lse_err = m;
		en->rows[r].out_state = (unsigned char)out_state(out, nq * d);
		en->rows[r].lse_state = (unsigned char)ls;
	}
	free(out);
	free(lse);
	return rc;
}

/* Groups items by instance: order[start[i] .. start[i+1]) are the items
 * (rows or runs) of instance i, in increasing item order. */
static int group_by_instance(size_t **order_out, size_t **start_out, const size_t *inst_of, size_t n,
			     size_t ninst)
{
	size_t *order = malloc((n ? n : 1) * sizeof *order);
	size_t *start = calloc(ninst + 1, sizeof *start);
	if (!order || !start) {
		free(order);
		free(start);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		start[inst_of[i] + 1]++;
	for (size_t i = 0; i < ninst; i++)
		start[i + 1] += start[i];
	size_t *fill = malloc((ninst ? ninst : 1) * sizeof *fill);
	if (!fill) {
		free(order);
		free(start);
		return SKV_ENOMEM;
	}
	memcpy(fill, start, ninst * sizeof *fill);
	for (size_t i = 0; i < n; i++)
		order[fill[inst_of[i]]++] = i;
	free(fill);
	*order_out = order;
	*start_out = start;
	return SKV_OK;
}

/* The first failing item of a phase, in item order, so the message does not
 * depend on the thread count. */
static int first_failure(const int *st, const size_t *items, size_t n, size_t *which)
{
	for (size_t k = 0; k < n; k++)
		if (st[k] != SKV_OK) {
			*which = items ? items[k] : k;
			return st[k];
		}
	return SKV_OK;
}

static int fail(message *e, const engine *en, const char *what, size_t row, int st)
{
	msg_set(e, "skv: %s: %s failed at point %zu trial %llu: %s", en->s->exp->name, what,
		 row / en->trials, (unsigned long long)(row % en->trials), skv_strerror(st));
	return SKV_EIO;
}

/* A drawn problem that overflows its input format: a usage error, named by
 * the flags that chose it (skv_problem_init's SKV_ERANGE: a value, the sink
 * key or the ramp outside the format, or no direction for them). */
static int draw_range(message *e, const engine *en, size_t row)
{
	param_value v[NPARAMS];
	row_values(en, row, v);
	char in[32], sc[32], dist[32];
	param_format(in, sizeof in, P_INPUT, v[P_INPUT]);
	param_format(sc, sizeof sc, P_SCORE_SCALE, v[P_SCORE_SCALE]);
	param_format(dist, sizeof dist, P_DIST, v[P_DIST]);
	msg_set(e, "skv: %s: --score-scale=%s with --dist=%s draws a value that --input=%s cannot hold (largest "
			  "%g) at point %zu trial %llu; lower --score-scale or widen --input",
		       en->s->exp->name, sc, dist, in, skv_format_max((skv_format)v[P_INPUT].u),
		       row / en->trials, (unsigned long long)(row % en->trials));
	return SKV_EINVAL;
}

/* Phase 1: the chunk's problems, then every (instance, query row) truth. */
static int phase_instances(engine *en, size_t i0, size_t i1, message *e)
{
	const int causal_kind = en->s->exp->kind == KIND_ONLINE;
	size_t ntruth = 0;
#pragma omp parallel for schedule(dynamic) num_threads(en->threads)
	for (size_t i = i0; i < i1; i++) {
		param_value v[NPARAMS];
		row_values(en, en->inst[i].rep, v);
		en->inst[i].st = instance_init(en, &en->inst[i]);
		progress_add(&en->pg, draw_work(v, en->inst[i].nq), SIZE_MAX);
	}
	for (size_t i = i0; i < i1; i++) {
		if (en->inst[i].st != SKV_OK)
			return en->inst[i].st == SKV_ERANGE ? draw_range(e, en, en->inst[i].rep)
							    : fail(e, en, "drawing the problem", en->inst[i].rep, en->inst[i].st);
		ntruth += en->inst[i].nq;
	}
	size_t *ti = malloc(ntruth * sizeof *ti), *tq = malloc(ntruth * sizeof *tq);
	int *tst = malloc(ntruth * sizeof *tst);
	if (!ti || !tq || !tst) {
		free(ti);
		free(tq);
		free(tst);
		return fail(e, en, "allocating", en->inst[i0].rep, SKV_ENOMEM);
	}
	size_t k = 0;
	for (size_t i = i0; i < i1; i++)
		for (size_t q = 0; q < en->inst[i].nq; q++, k++) {
			ti[k] = i;
			tq[k] = q;
		}
	size_t calls = 0;
#pragma omp parallel for schedule(dynamic) num_threads(en->threads) reduction(+ : calls)
	for (size_t t = 0; t < ntruth; t++) {
		instance *in = &en->inst[ti[t]];
		int causal = causal_kind && in->nq > 1;
		tst[t] = truth_row(in, tq[t], causal);
		calls++;
		progress_add(&en->pg, (double)WORK_TRUTH * (double)(causal ? tq[t] + 1 : in->prob.n) * (double)in->prob.d,
			     SIZE_MAX);
	}
	en->n_truth += calls;
	size_t which = 0;
	int st = first_failure(tst, ti, ntruth, &which);
	free(tq);
	free(tst);
	if (st != SKV_OK) {
		size_t rep = en->inst[which].rep;
		free(ti);
		return fail(e, en, "computing the MPFR truth", rep, st);
	}
	free(ti);
	return SKV_OK;
}

/* Phase 2: the chunk's split-kernel runs. */
static int phase_kernels(engine *en, const size_t *items, size_t n, message *e)
{
	size_t calls = 0;
#pragma omp parallel for schedule(dynamic) num_threads(en->threads) reduction(+ : calls)
	for (size_t k = 0; k < n; k++) {
		kernel_run *kr = &en->runs[items[k]];
		kr->st = kernel_run_do(en, kr);
		calls++;
		progress_add(&en->pg, kernel_work(en, kr->rep), SIZE_MAX);
	}
	en->n_kernel += calls;
	for (size_t k = 0; k < n; k++)
		if (en->runs[items[k]].st != SKV_OK)
			return fail(e, en, "the split kernel", en->runs[items[k]].rep, en->runs[items[k]].st);
	return SKV_OK;
}

/* Phase 3: the chunk's rows. */
static int phase_rows(engine *en, const size_t *items, size_t n, message *e)
{
	const int online = en->s->exp->kind == KIND_ONLINE;
#pragma omp parallel for schedule(dynamic) num_threads(en->threads)
	for (size_t k = 0; k < n; k++) {
		size_t r = items[k];
		en->row_st[r] = online ? row_online(en, r) : row_split(en, r);
		progress_add(&en->pg, row_work(en, r), r / en->trials);
	}
	for (size_t k = 0; k < n; k++)
		if (en->row_st[items[k]] != SKV_OK)
			return fail(e, en, online ? "the online attention" : "the merge", items[k],
				    en->row_st[items[k]]);
	return SKV_OK;
}

/* Builds the keys of rows (instance) and of runs (kernel), then the unique
 * lists. Returns an skv_status. */
static int build_sharing(engine *en)
{
	const run_spec *s = en->s;
	const size_t nrows = en->nrows;
	uint64_t *keys = malloc(nrows * KEY_WORDS * sizeof *keys);
	size_t *rep = NULL;
	if (!keys)
		return SKV_ENOMEM;
	for (size_t r = 0; r < nrows; r++) {
		param_value v[NPARAMS];
		row_values(en, r, v);
		uint64_t *k = keys + r * KEY_WORDS;
		k[0] = v[P_CTX].u;
		k[1] = v[P_HEAD_DIM].u;
		k[2] = v[P_DIST].u;
		k[3] = bits_of(v[P_SCORE_SCALE].r);
		k[4] = v[P_INPUT].u;
		k[5] = nq_of(s->exp->kind, v);
		k[6] = v[P_SEED].u;
		k[7] = r % en->trials;
	}
	int st = dedupe(en->row_inst, &rep, &en->ninst, keys, nrows);
	if (st != SKV_OK) {
		free(keys);
		return st;
	}
	en->inst = calloc(en->ninst, sizeof *en->inst);
	if (!en->inst) {
		free(keys);
		free(rep);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < en->ninst; i++) {
		param_value v[NPARAMS];
		row_values(en, rep[i], v);
		en->inst[i].rep = rep[i];
		en->inst[i].nq = nq_of(s->exp->kind, v);
	}
	free(rep);
	rep = NULL;
	if (s->exp->kind == KIND_SPLIT) {
		for (size_t r = 0; r < nrows; r++) {
			param_value v[NPARAMS];
			row_values(en, r, v);
			uint64_t *k = keys + r * KEY_WORDS;
			k[0] = en->row_inst[r];
			k[1] = v[P_SPLITS].u;
			k[2] = v[P_LAYOUT].u;
			k[3] = v[P_COMPUTE].u;
			k[4] = v[P_P].u;
			k[5] = v[P_LSE_BASE].u;
			k[6] = bits_of(v[P_LSE_OFFSET].r);
			k[7] = v[P_BLOCK_SIZE].u;
		}
		st = dedupe(en->row_run, &rep, &en->nruns, keys, nrows);
		if (st == SKV_OK) {
			en->runs = calloc(en->nruns, sizeof *en->runs);
			if (!en->runs)
				st = SKV_ENOMEM;
			for (size_t i = 0; en->runs && i < en->nruns; i++)
				en->runs[i].rep = rep[i];
		}
	}
	free(rep);
	free(keys);
	return st;
}

/* ------------------------------------------------------------ estimate */

/* One point's sizes, for the estimate. */
typedef struct {
	double n, d, nq, S;
	uint64_t key[7]; /* what its instance depends on, trial aside */
} point_size;

static int cmp_point_key(const void *a, const void *b)
{
	const point_size *x = a, *y = b;
	return memcmp(x->key, y->key, sizeof x->key);
}

/* Bytes MPFR's truth holds per key while it runs (the weights and the exact
 * products at 128 bits, their pointers; lib/truth.c), with room. */
enum { TRUTH_BYTES_PER_KEY = 160 };
/* Seconds per work unit (see progress), measured on x86-64: an estimate. */
#define SECONDS_PER_UNIT 8e-9

int sweep_estimate(double *bytes, double *cpu_s, const run_spec *s, int threads)
{
	const size_t np = spec_npoints(s);
	const double T = (double)spec_trials(s);
	point_size *ps = malloc((np ? np : 1) * sizeof *ps);
	if (!ps)
		return SKV_ENOMEM;
	double inst_max = 0, run_max = 0, work = 0, rows = (double)np * T;
	for (size_t p = 0; p < np; p++) {
		param_value v[NPARAMS];
		spec_values(s, p, v);
		point_size *q = &ps[p];
		q->n = (double)v[P_CTX].u, q->d = (double)v[P_HEAD_DIM].u;
		q->nq = (double)nq_of(s->exp->kind, v);
		q->S = s->exp->kind == KIND_SPLIT ? (double)v[P_SPLITS].u : 1;
		const uint64_t k[7] = {v[P_CTX].u, v[P_HEAD_DIM].u, v[P_DIST].u,
				       bits_of(v[P_SCORE_SCALE].r), v[P_INPUT].u, (uint64_t)q->nq,
				       v[P_SEED].u};
		memcpy(q->key, k, sizeof k);
		double inst = (q->nq + 2 * q->n) * q->d * 8 + q->nq * (q->d + 1) * 16;
		inst_max = inst > inst_max ? inst : inst_max;
		double run = q->S * q->d * 16 + q->S * 24 + q->nq * q->d * 8;
		run_max = run > run_max ? run : run_max;
		/* a kernel run or online pass, and a store and merge, per trial */
		work += T * (WORK_KERNEL * keys_dims(v, q->nq > 1) + WORK_MERGE * q->S * q->d);
	}
	/* Problems and truths once per distinct instance and trial. */
	qsort(ps, np, sizeof *ps, cmp_point_key);
	for (size_t p = 0; p < np; p++)
		if (p == 0 || cmp_point_key(&ps[p - 1], &ps[p]) != 0) {
			const point_size *q = &ps[p];
			double kd = q->nq > 1 ? q->n * (q->n + 1) / 2 * q->d : q->n * q->d;
			work += T * (WORK_TRUTH * kd + WORK_DRAW * (q->nq + 2 * q->n) * q->d);
		}
	double nmax = 0;
	for (size_t p = 0; p < np; p++)
		nmax = ps[p].n > nmax ? ps[p].n : nmax;
	free(ps);
	/* A chunk of instances (chunk_bytes, or one when larger), every kernel
	 * run of the chunk (bounded here by one run per point and trial of the
	 * chunk's instances), each thread's truth and row scratch, the rows and
	 * their sharing keys. */
	const double chunk = inst_max > (double)chunk_bytes ? inst_max : (double)chunk_bytes;
	const double per_chunk = inst_max > 0 ? chunk / inst_max : 1;
	const double runs = run_max * (per_chunk * (double)np < rows ? per_chunk * (double)np : rows);
	*bytes = (inst_max < chunk ? inst_max * per_chunk : inst_max) + runs +
		 (double)threads * (TRUTH_BYTES_PER_KEY * nmax + run_max) + rows * (sizeof(sweep_row) + 96);
	*cpu_s = work * SECONDS_PER_UNIT;
	return SKV_OK;
}

static void engine_free(engine *en)
{
	if (en->inst)
		for (size_t i = 0; i < en->ninst; i++)
			instance_free(&en->inst[i]);
	if (en->runs)
		for (size_t i = 0; i < en->nruns; i++)
			skv_partials_free(&en->runs[i].sp);
	free(en->inst);
	free(en->runs);
	free(en->row_inst);
	free(en->row_run);
	free(en->row_st);
	free(en->pg.trials_done);
}

void sweep_result_free(sweep_result *r)
{
	if (!r)
		return;
	free(r->rows);
	memset(r, 0, sizeof *r);
}

int sweep_run(sweep_result *res, const run_spec *s, FILE *progress_f, message *e)
{
	engine en;
	memset(&en, 0, sizeof en);
	double t0 = now_s();
	en.s = s;
	en.trials = spec_trials(s);
	size_t npoints = spec_npoints(s);
	en.nrows = npoints * (size_t)en.trials; /* bounded by spec_check */
	uint64_t th = s->list[P_THREADS].v[0].u;
	en.threads = th ? (int)th : omp_get_max_threads();
	en.rows = calloc(en.nrows, sizeof *en.rows);
	en.row_inst = malloc(en.nrows * sizeof *en.row_inst);
	en.row_run = calloc(en.nrows, sizeof *en.row_run);
	en.row_st = calloc(en.nrows, sizeof *en.row_st);
	en.pg.f = progress_f;
	en.pg.name = s->exp->name;
	en.pg.t0 = en.pg.last = t0;
	en.pg.npoints = npoints;
	en.pg.trials = en.trials;
	en.pg.trials_done = progress_f ? calloc(npoints, sizeof *en.pg.trials_done) : NULL;
	size_t *rows_by = NULL, *rows_start = NULL, *runs_by = NULL, *runs_start = NULL, *run_inst = NULL;
	int rc = SKV_OK;
	if (!en.rows || !en.row_inst || !en.row_run || !en.row_st || (progress_f && !en.pg.trials_done) ||
	    build_sharing(&en) != SKV_OK) {
		msg_set(e, "skv: %s: out of memory", s->exp->name);
		rc = SKV_EIO;
		goto done;
	}
	if (en.pg.f)
		en.pg.work_total = total_work(&en);
	for (size_t r = 0; r < en.nrows; r++) {
		en.rows[r].point = r / en.trials;
		en.rows[r].trial = r % en.trials;
	}
	run_inst = malloc((en.nruns ? en.nruns : 1) * sizeof *run_inst);
	if (run_inst)
		for (size_t k = 0; k < en.nruns; k++)
			run_inst[k] = en.row_inst[en.runs[k].rep];
	if (!run_inst || group_by_instance(&rows_by, &rows_start, en.row_inst, en.nrows, en.ninst) != SKV_OK ||
	    group_by_instance(&runs_by, &runs_start, run_inst, en.nruns, en.ninst) != SKV_OK) {
		msg_set(e, "skv: %s: out of memory", s->exp->name);
		rc = SKV_EIO;
		goto done;
	}
	/* Chunks of instances in id order; every result lands in the slot of its
	 * item, so neither the chunking nor the schedule changes the output. */
	for (size_t i0 = 0; i0 < en.ninst && rc == SKV_OK;) {
		size_t i1 = i0 + 1, bytes = instance_bytes(&en, &en.inst[i0]);
		while (i1 < en.ninst && bytes + instance_bytes(&en, &en.inst[i1]) <= chunk_bytes)
			bytes += instance_bytes(&en, &en.inst[i1++]);
		rc = phase_instances(&en, i0, i1, e);
		if (rc == SKV_OK)
			rc = phase_kernels(&en, runs_by + runs_start[i0], runs_start[i1] - runs_start[i0], e);
		if (rc == SKV_OK)
			rc = phase_rows(&en, rows_by + rows_start[i0], rows_start[i1] - rows_start[i0], e);
		for (size_t k = runs_start[i0]; k < runs_start[i1]; k++)
			skv_partials_free(&en.runs[runs_by[k]].sp);
		for (size_t i = i0; i < i1; i++)
			instance_free(&en.inst[i]);
		i0 = i1;
	}
	if (en.pg.f && en.pg.printed && rc == SKV_OK)
		progress_print(&en.pg, 1);
done:
	if (rc == SKV_OK) {
		res->npoints = npoints;
		res->nrows = en.nrows;
		res->trials = en.trials;
		res->rows = en.rows;
		res->n_instances = en.ninst;
		res->n_truth_calls = en.n_truth;
		res->n_kernel_runs = en.n_kernel;
		res->threads = en.threads;
		res->wall_s = now_s() - t0;
		en.rows = NULL;
	} else if (en.pg.f && en.pg.printed) {
		fputc('\n', en.pg.f);
	}
	free(en.rows);
	free(rows_by);
	free(rows_start);
	free(runs_by);
	free(runs_start);
	free(run_inst);
	engine_free(&en);
	return rc;
}
