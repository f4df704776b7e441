/* sweep.c - the sweep: shared problems and truths, shared split-kernel runs, then rows; one or several specs; deterministic in parallel. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "core/sweep_internal.h"

/*
 * Nothing is computed twice and nothing depends on the thread count:
 *  1. instances: rows equal in every PROBLEM-stage parameter and in their
 *     trial share one skv_problem and its exact truth (per query row: the
 *     whole context, or the causal prefix);
 *  2. kernel runs: rows of one instance equal in every KERNEL-stage
 *     parameter too share one skv_split_kernel result, left in the compute
 *     format; runs of one instance that score alike (skv_scores_shared:
 *     whatever their splits, layout or block size) share one set of
 *     scores, computed first;
 *  3. rows: store in the row's formats, merge, measure (or, for the online
 *     kind, run skv_attention_online and measure).
 * The keys are the stage tags of the parameter table (core.h): a new
 * parameter shares correctly by its tag alone. Keys are exact (reals by
 * their bits); unique items are numbered in key order. Rows of several
 * specs (skv recommend's candidate counts and its fixed-size option) share
 * the same way. Each phase is an OpenMP loop with a dynamic schedule
 * writing only the slot of its own item, and instances are processed in
 * chunks of bounded memory, so the results are the same for any schedule
 * and any chunking. The seed rule is in seeds.c.
 */

const run_spec *sweep_row_spec(const sweep *w, size_t r, size_t *k, size_t *point, uint64_t *trial)
{
	size_t i = 0;
	while (r >= w->row0[i + 1])
		i++;
	const run_spec *s = w->specs[i];
	const uint64_t T = spec_trials(s);
	if (k)
		*k = i;
	if (point)
		*point = (r - w->row0[i]) / T;
	if (trial)
		*trial = (r - w->row0[i]) % T;
	return s;
}

void sweep_row_values(const sweep *w, size_t r, param_value v[NPARAMS])
{
	size_t p;
	const run_spec *s = sweep_row_spec(w, r, NULL, &p, NULL);
	spec_values(s, p, v);
}

uint64_t sweep_key_word(int id, param_value v)
{
	if (params[id].type != PT_REAL)
		return v.u;
	uint64_t u;
	memcpy(&u, &v.r, sizeof u);
	return u;
}

/* ----------------------------------------------------------- sharing keys */

typedef struct {
	const uint64_t *key;
	size_t idx;
} keyref;

static size_t key_len; /* qsort has no context: the words of the keys being sorted */

static int keyref_cmp(const void *a, const void *b)
{
	const keyref *x = a, *y = b;
	for (size_t i = 0; i < key_len; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* ids[i] = the number of the distinct key of item i (numbered in key order);
 * rep[id] = the first item with that key. keys is [n][len]. Called from one
 * thread (key_len). */
static int dedupe(size_t *ids, size_t **rep_out, size_t *nunique, const uint64_t *keys, size_t n, size_t len)
{
	keyref *refs = malloc((n ? n : 1) * sizeof *refs);
	size_t *rep = malloc((n ? n : 1) * sizeof *rep);
	if (!refs || !rep) {
		free(refs);
		free(rep);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		refs[i] = (keyref){keys + i * len, i};
	key_len = len;
	qsort(refs, n, sizeof *refs, keyref_cmp);
	size_t u = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || memcmp(refs[i].key, refs[i - 1].key, len * sizeof(uint64_t)) != 0)
			rep[u++] = refs[i].idx; /* ties sort by index: the first item */
		ids[refs[i].idx] = u - 1;
	}
	free(refs);
	*rep_out = rep;
	*nunique = u;
	return SKV_OK;
}

/* The words of row r's key for `stage`: the values of every parameter of
 * that stage, after `head` words given by the caller. */
static size_t stage_words(param_stage stage)
{
	size_t n = 0;
	for (int i = 0; i < NPARAMS; i++)
		n += params[i].stage == stage;
	return n;
}

static void fill_key(uint64_t *k, const param_value *v, param_stage stage)
{
	for (int i = 0; i < NPARAMS; i++)
		if (params[i].stage == stage)
			*k++ = sweep_key_word(i, v[i]);
}

/* Instances from the PROBLEM parameters with the trial and the number of
 * query rows; kernel runs from the instance and the KERNEL parameters. */
static int build_sharing(sweep *w)
{
	const size_t np = stage_words(STAGE_PROBLEM), nk = stage_words(STAGE_KERNEL);
	const size_t len = (np + 2 > nk + 1 ? np + 2 : nk + 1);
	uint64_t *keys = malloc(w->nrows * len * sizeof *keys);
	size_t *rep = NULL;
	if (!keys)
		return SKV_ENOMEM;
	for (size_t r = 0; r < w->nrows; r++) {
		param_value v[NPARAMS];
		uint64_t trial;
		const run_spec *s = sweep_row_spec(w, r, NULL, NULL, &trial);
		sweep_row_values(w, r, v);
		uint64_t *k = keys + r * (np + 2);
		fill_key(k, v, STAGE_PROBLEM);
		k[np] = sweep_query_rows(s->exp->kind, v);
		k[np + 1] = trial;
	}
	int st = dedupe(w->row_inst, &rep, &w->ninst, keys, w->nrows, np + 2);
	w->inst = st == SKV_OK ? calloc(w->ninst ? w->ninst : 1, sizeof *w->inst) : NULL;
	if (!w->inst) {
		free(keys);
		free(rep);
		return st == SKV_OK ? SKV_ENOMEM : st;
	}
	for (size_t i = 0; i < w->ninst; i++) {
		param_value v[NPARAMS];
		const run_spec *s = sweep_row_spec(w, rep[i], NULL, NULL, NULL);
		sweep_row_values(w, rep[i], v);
		w->inst[i].rep = rep[i];
		w->inst[i].nq = sweep_query_rows(s->exp->kind, v);
	}
	free(rep);
	rep = NULL;
	/* Kernel runs, for the split rows; an online row's kernel is its own. */
	for (size_t r = 0; r < w->nrows; r++) {
		param_value v[NPARAMS];
		sweep_row_values(w, r, v);
		uint64_t *k = keys + r * (nk + 1);
		k[0] = w->row_inst[r];
		fill_key(k + 1, v, STAGE_KERNEL);
	}
	st = dedupe(w->row_run, &rep, &w->nruns, keys, w->nrows, nk + 1);
	if (st == SKV_OK) {
		w->runs = calloc(w->nruns ? w->nruns : 1, sizeof *w->runs);
		if (!w->runs)
			st = SKV_ENOMEM;
		for (size_t i = 0; w->runs && i < w->nruns; i++)
			w->runs[i].rep = rep[i];
	}
	free(rep);
	free(keys);
	return st;
}

/* Groups items by instance: order[start[i] .. start[i+1]) are the items
 * (rows or runs) of instance i, in increasing item order. */
static int group_by_instance(size_t **order_out, size_t **start_out, const size_t *inst_of, size_t n,
			     size_t ninst)
{
	size_t *order = malloc((n ? n : 1) * sizeof *order);
	size_t *start = calloc(ninst + 1, sizeof *start);
	size_t *fill = malloc((ninst ? ninst : 1) * sizeof *fill);
	if (!order || !start || !fill) {
		free(order), free(start), free(fill);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		start[inst_of[i] + 1]++;
	for (size_t i = 0; i < ninst; i++)
		start[i + 1] += start[i];
	memcpy(fill, start, ninst * sizeof *fill);
	for (size_t i = 0; i < n; i++)
		order[fill[inst_of[i]]++] = i;
	free(fill);
	*order_out = order;
	*start_out = start;
	return SKV_OK;
}

/* --------------------------------------------------------------- failures */

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

static int fail(message *e, const sweep *w, const char *what, size_t row, int st)
{
	size_t p;
	uint64_t t;
	const run_spec *s = sweep_row_spec(w, row, NULL, &p, &t);
	msg_set(e, "skv: %s: %s failed at point %zu trial %llu: %s", s->exp->name, what, p, (unsigned long long)t,
		skv_strerror(st));
	return st == SKV_ENOMEM ? SKV_ENOMEM : SKV_EIO;
}

/* ----------------------------------------------------------------- phases */

/* Adds the seconds since t0 to instance i's busy time, when the sweep
 * keeps it (timing only: never an input to a result). */
static void busy_add(sweep *w, size_t i, double t0)
{
	if (!w->inst_busy)
		return;
	double dt = progress_now() - t0;
#pragma omp atomic
	w->inst_busy[i] += dt;
}

static double busy_start(const sweep *w) { return w->inst_busy ? progress_now() : 0.0; }

/* Phase 1: the problems of instances ids[0..n), then every (instance,
 * query row) truth. */
static int phase_instances(sweep *w, const size_t *ids, size_t n, message *e)
{
	size_t ntruth = 0;
#pragma omp parallel for schedule(dynamic) num_threads(w->threads)
	for (size_t k = 0; k < n; k++) {
		instance *in = &w->inst[ids[k]];
		param_value v[NPARAMS];
		double t0 = busy_start(w);
		sweep_row_values(w, in->rep, v);
		in->st = measure_instance(w, in);
		busy_add(w, ids[k], t0);
		progress_add(&w->pg, progress_draw_work(v, in->nq), SIZE_MAX);
	}
	for (size_t k = 0; k < n; k++) {
		const instance *in = &w->inst[ids[k]];
		if (in->st != SKV_OK)
			return in->st == SKV_ERANGE ? measure_range_error(e, w, in->rep, in->kv_range)
						    : fail(e, w, "drawing the problem", in->rep, in->st);
		ntruth += in->nq;
	}
	size_t *ti = malloc(ntruth * sizeof *ti), *tq = malloc(ntruth * sizeof *tq);
	int *tst = malloc(ntruth * sizeof *tst);
	if (!ti || !tq || !tst) {
		free(ti), free(tq), free(tst);
		return fail(e, w, "allocating", w->inst[ids[0]].rep, SKV_ENOMEM);
	}
	for (size_t k = 0, t = 0; k < n; k++)
		for (size_t q = 0; q < w->inst[ids[k]].nq; q++, t++)
			ti[t] = ids[k], tq[t] = q;
	size_t calls = 0;
#pragma omp parallel for schedule(dynamic) num_threads(w->threads) reduction(+ : calls)
	for (size_t t = 0; t < ntruth; t++) {
		instance *in = &w->inst[ti[t]];
		int causal = in->nq > 1; /* one row per key: the causal online kind */
		double t0 = busy_start(w);
		tst[t] = measure_truth(in, tq[t], causal);
		busy_add(w, ti[t], t0);
		calls++;
		progress_add(&w->pg, 8.0 * (double)(causal ? tq[t] + 1 : in->prob->n) * (double)in->prob->d, SIZE_MAX);
	}
	w->n_truth += calls;
	size_t which = 0;
	int st = first_failure(tst, ti, ntruth, &which);
	free(tq), free(tst), free(ti);
	return st != SKV_OK ? fail(e, w, "computing the exact truth", w->inst[which].rep, st) : SKV_OK;
}

/* Phase 2a: the score sets of the chunk's runs, numbered in run order on
 * one thread, then computed in parallel (each into its own slot). */
static int phase_scores(sweep *w, const size_t *items, size_t n, const size_t *ids, size_t ni, message *e)
{
	for (size_t k = 0; k < n; k++) {
		kernel_run *kr = &w->runs[items[k]];
		int st = measure_score_slot(w, kr);
		if (st != SKV_OK)
			return fail(e, w, "allocating the scores", kr->rep, st);
	}
	size_t nz = 0;
	for (size_t c = 0; c < ni; c++)
		nz += w->inst[ids[c]].nz;
	size_t *zi = malloc((nz ? nz : 1) * sizeof *zi), *zs = malloc((nz ? nz : 1) * sizeof *zs);
	int *zst = malloc((nz ? nz : 1) * sizeof *zst);
	if (!zi || !zs || !zst) {
		free(zi), free(zs), free(zst);
		return fail(e, w, "allocating", w->inst[ids[0]].rep, SKV_ENOMEM);
	}
	for (size_t c = 0, k = 0; c < ni; c++)
		for (size_t z = 0; z < w->inst[ids[c]].nz; z++, k++)
			zi[k] = ids[c], zs[k] = z;
#pragma omp parallel for schedule(dynamic) num_threads(w->threads)
	for (size_t k = 0; k < nz; k++)
		zst[k] = measure_scores(&w->inst[zi[k]], zs[k]);
	size_t which = 0;
	int st = first_failure(zst, zi, nz, &which);
	free(zs), free(zst), free(zi);
	return st != SKV_OK ? fail(e, w, "the scores", w->inst[which].rep, st) : SKV_OK;
}

/* Phase 2b: the chunk's split-kernel runs. */
static int phase_kernels(sweep *w, const size_t *items, size_t n, message *e)
{
	size_t calls = 0;
#pragma omp parallel for schedule(dynamic) num_threads(w->threads) reduction(+ : calls)
	for (size_t k = 0; k < n; k++) {
		kernel_run *kr = &w->runs[items[k]];
		param_value v[NPARAMS];
		sweep_row_values(w, kr->rep, v);
		const run_spec *s = sweep_row_spec(w, kr->rep, NULL, NULL, NULL);
		if (s->exp->kind == KIND_ONLINE)
			continue; /* the online kind's computation is its row */
		double t0 = busy_start(w);
		kr->st = measure_kernel(w, kr);
		busy_add(w, w->row_inst[kr->rep], t0);
		calls++;
		progress_add(&w->pg, progress_kernel_work(v), SIZE_MAX);
	}
	w->n_kernel += calls;
	for (size_t k = 0; k < n; k++)
		if (w->runs[items[k]].st != SKV_OK)
			return fail(e, w, "the split kernel", w->runs[items[k]].rep, w->runs[items[k]].st);
	return SKV_OK;
}

/* Phase 3: the chunk's rows. */
static int phase_rows(sweep *w, const size_t *items, size_t n, message *e)
{
#pragma omp parallel for schedule(dynamic) num_threads(w->threads)
	for (size_t k = 0; k < n; k++) {
		size_t r = items[k], kk, p;
		param_value v[NPARAMS];
		const run_spec *s = sweep_row_spec(w, r, &kk, &p, NULL);
		sweep_row_values(w, r, v);
		double t0 = busy_start(w);
		w->row_st[r] = measure_row(w, r);
		busy_add(w, w->row_inst[r], t0);
		progress_add(&w->pg, progress_row_work(s->exp->kind, v), w->point0[kk] + p);
	}
	for (size_t k = 0; k < n; k++)
		if (w->row_st[items[k]] != SKV_OK) {
			const run_spec *s = sweep_row_spec(w, items[k], NULL, NULL, NULL);
			return fail(e, w, s->exp->kind == KIND_ONLINE ? "the online attention" : "the merge", items[k],
				    w->row_st[items[k]]);
		}
	return SKV_OK;
}

/* ------------------------------------------------------------------- run */

void sweep_result_free(sweep_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->rows && i < r->nrows; i++) {
		free(r->rows[i].out);
		free(r->rows[i].truth);
	}
	free(r->rows);
	memset(r, 0, sizeof *r);
}

void sweep_close(sweep *w)
{
	for (size_t i = 0; w->inst && i < w->ninst; i++)
		measure_instance_free(&w->inst[i]);
	for (size_t i = 0; w->runs && i < w->nruns; i++)
		skv_partials_free(&w->runs[i].sp);
	sweep_result rows = {0, w->nrows, 0, w->rows, 0, 0, 0, 0, 0};
	sweep_result_free(&rows); /* the rows still owned (and the outputs kept so far) */
	free(w->inst), free(w->runs), free(w->row_inst), free(w->row_run), free(w->row_st);
	free(w->row0), free(w->point0), free(w->pg.trials_left);
	free(w->rows_by), free(w->rows_start), free(w->runs_by), free(w->runs_start), free(w->inst_busy);
	memset(w, 0, sizeof *w);
}

/* The rows of every spec, numbered; their places; the progress counters. */
static int sweep_setup(sweep *w, const run_spec *const *specs, size_t n, const sweep_opts *o)
{
	w->specs = specs;
	w->nspecs = n;
	w->row0 = calloc(n + 1, sizeof *w->row0);
	w->point0 = calloc(n + 1, sizeof *w->point0);
	if (!w->row0 || !w->point0)
		return SKV_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		w->point0[k + 1] = w->point0[k] + spec_npoints(specs[k]);
		w->row0[k + 1] = w->row0[k] + spec_npoints(specs[k]) * (size_t)spec_trials(specs[k]);
	}
	w->nrows = w->row0[n]; /* each bounded by spec_check */
	w->threads = spec_threads(specs[0]);
	w->keep_outputs = o && o->keep_outputs;
	w->rows = calloc(w->nrows ? w->nrows : 1, sizeof *w->rows);
	w->row_inst = malloc((w->nrows ? w->nrows : 1) * sizeof *w->row_inst);
	w->row_run = calloc(w->nrows ? w->nrows : 1, sizeof *w->row_run);
	w->row_st = calloc(w->nrows ? w->nrows : 1, sizeof *w->row_st);
	if (!w->rows || !w->row_inst || !w->row_run || !w->row_st)
		return SKV_ENOMEM;
	for (size_t r = 0; r < w->nrows; r++)
		sweep_row_spec(w, r, &w->rows[r].spec, &w->rows[r].point, &w->rows[r].trial);
	w->pg.npoints = w->point0[n];
	if (w->pg.f) {
		w->pg.trials_left = malloc((w->pg.npoints ? w->pg.npoints : 1) * sizeof *w->pg.trials_left);
		if (!w->pg.trials_left)
			return SKV_ENOMEM;
		for (size_t k = 0; k < n; k++)
			for (size_t p = w->point0[k]; p < w->point0[k + 1]; p++)
				w->pg.trials_left[p] = spec_trials(specs[k]);
	}
	return build_sharing(w);
}

/* The ETA's denominator: every item's work units. */
static double total_work(const sweep *w)
{
	double t = 0;
	param_value v[NPARAMS];
	for (size_t i = 0; i < w->ninst; i++) {
		sweep_row_values(w, w->inst[i].rep, v);
		t += progress_truth_work(v, w->inst[i].nq) + progress_draw_work(v, w->inst[i].nq);
	}
	for (size_t k = 0; k < w->nruns; k++) {
		sweep_row_values(w, w->runs[k].rep, v);
		t += progress_kernel_work(v);
	}
	for (size_t r = 0; r < w->nrows; r++) {
		const run_spec *s = sweep_row_spec(w, r, NULL, NULL, NULL);
		sweep_row_values(w, r, v);
		t += progress_row_work(s->exp->kind, v);
	}
	return t;
}

int sweep_open(sweep *w, const run_spec *const *specs, size_t n, const sweep_opts *o)
{
	memset(w, 0, sizeof *w);
	progress_start(&w->pg, o ? o->progress : NULL, specs[0]->exp->name, progress_now());
	size_t *run_inst = NULL;
	int rc = sweep_setup(w, specs, n, o);
	if (rc == SKV_OK && (run_inst = malloc((w->nruns ? w->nruns : 1) * sizeof *run_inst)) == NULL)
		rc = SKV_ENOMEM;
	for (size_t k = 0; rc == SKV_OK && k < w->nruns; k++)
		run_inst[k] = w->row_inst[w->runs[k].rep];
	if (rc == SKV_OK)
		rc = group_by_instance(&w->rows_by, &w->rows_start, w->row_inst, w->nrows, w->ninst);
	if (rc == SKV_OK)
		rc = group_by_instance(&w->runs_by, &w->runs_start, run_inst, w->nruns, w->ninst);
	if (rc == SKV_OK && o && o->timed && !(w->inst_busy = calloc(w->ninst ? w->ninst : 1, sizeof *w->inst_busy)))
		rc = SKV_ENOMEM;
	if (rc == SKV_OK && w->pg.f)
		w->pg.work_total = total_work(w);
	free(run_inst);
	if (rc != SKV_OK)
		sweep_close(w);
	return rc;
}

/* items[] = the items (rows or runs, as grouped by `by` and `start`) of
 * instances ids[0..n), instance after instance; returns their number. */
static size_t chunk_items(size_t *items, const size_t *by, const size_t *start, const size_t *ids, size_t n)
{
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		for (size_t j = start[ids[k]]; j < start[ids[k] + 1]; j++)
			items[m++] = by[j];
	return m;
}

/* One chunk through the three phases; its problems, truths and kernel runs
 * freed after. Every result lands in the slot of its item, so neither the
 * chunking nor the schedule changes the output. */
static int run_chunk(sweep *w, const size_t *ids, size_t n, message *e)
{
	size_t nr = 0, nk = 0;
	for (size_t k = 0; k < n; k++) {
		nr += w->rows_start[ids[k] + 1] - w->rows_start[ids[k]];
		nk += w->runs_start[ids[k] + 1] - w->runs_start[ids[k]];
	}
	size_t *rows = malloc((nr ? nr : 1) * sizeof *rows), *runs = malloc((nk ? nk : 1) * sizeof *runs);
	if (!rows || !runs) {
		free(rows), free(runs);
		return fail(e, w, "allocating", w->inst[ids[0]].rep, SKV_ENOMEM);
	}
	chunk_items(rows, w->rows_by, w->rows_start, ids, n);
	chunk_items(runs, w->runs_by, w->runs_start, ids, n);
	int rc = phase_instances(w, ids, n, e);
	if (rc == SKV_OK)
		rc = phase_scores(w, runs, nk, ids, n, e);
	if (rc == SKV_OK)
		rc = phase_kernels(w, runs, nk, e);
	if (rc == SKV_OK)
		rc = phase_rows(w, rows, nr, e);
	for (size_t k = 0; k < nk; k++)
		skv_partials_free(&w->runs[runs[k]].sp);
	for (size_t k = 0; k < n; k++)
		measure_instance_free(&w->inst[ids[k]]);
	free(rows), free(runs);
	return rc;
}

int sweep_run_list(sweep *w, const size_t *ids, size_t n, size_t chunk_max, sweep_chunk_fn done, void *ctx,
		   message *e)
{
	int rc = SKV_OK;
	for (size_t k0 = 0; k0 < n && rc == SKV_OK;) {
		size_t k1 = k0 + 1, bytes = measure_instance_bytes(w, &w->inst[ids[k0]]);
		while (k1 < n && (!chunk_max || k1 - k0 < chunk_max) &&
		       bytes + measure_instance_bytes(w, &w->inst[ids[k1]]) <= SWEEP_CHUNK_BYTES)
			bytes += measure_instance_bytes(w, &w->inst[ids[k1++]]);
		/* a multiple of the threads: every one draws a problem each round */
		const size_t T = w->threads > 0 ? (size_t)w->threads : 1;
		if (k1 < n && k1 - k0 > T)
			k1 = k0 + (k1 - k0) / T * T;
		rc = run_chunk(w, ids + k0, k1 - k0, e);
		if (rc == SKV_OK && done)
			rc = done(ctx, w, ids + k0, k1 - k0, e);
		k0 = k1;
	}
	return rc;
}

int sweep_run_specs(sweep_result *res, const run_spec *const *specs, size_t n, const sweep_opts *o, message *e)
{
	sweep w;
	double t0 = progress_now();
	int rc = sweep_open(&w, specs, n, o);
	size_t *all = rc == SKV_OK ? malloc((w.ninst ? w.ninst : 1) * sizeof *all) : NULL;
	if (rc != SKV_OK || !all) {
		if (rc == SKV_OK)
			sweep_close(&w);
		free(all);
		msg_set(e, "skv: %s: out of memory", specs[0]->exp->name);
		return SKV_ENOMEM;
	}
	for (size_t i = 0; i < w.ninst; i++)
		all[i] = i;
	rc = sweep_run_list(&w, all, w.ninst, 0, NULL, NULL, e);
	free(all);
	if (w.pg.f && w.pg.printed)
		rc == SKV_OK ? progress_print(&w.pg, 1) : (void)fputc('\n', w.pg.f);
	if (rc == SKV_OK) {
		*res = (sweep_result){w.point0[n], w.nrows, spec_trials(specs[0]), w.rows, w.ninst, w.n_truth,
				      w.n_kernel, w.threads, progress_now() - t0};
		w.rows = NULL;
	}
	sweep_close(&w);
	return rc;
}

int sweep_run(sweep_result *res, const run_spec *s, FILE *progress_f, message *e)
{
	const sweep_opts o = {progress_f, 0, 0};
	return sweep_run_specs(res, &s, 1, &o, e);
}
