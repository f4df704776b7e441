/* sweep_internal.h - internal to the core: the sweep's working state, the one measurement of a row, the progress line. */
#ifndef CORE_SWEEP_INTERNAL_H
#define CORE_SWEEP_INTERNAL_H

#include <stdio.h>

#include "core/core.h"

/* Instances of one chunk are kept in memory together: problems plus truths
 * up to this many bytes (at least one instance), then freed. */
#define SWEEP_CHUNK_BYTES ((size_t)256 << 20)
/* Seconds per work unit (progress.c) of one x86-64 thread: the constant of
 * every CPU-time estimate (a refusal's, a unit's, a shard's). */
#define SWEEP_SECONDS_PER_UNIT 8e-9

/* One random instance: the problem and its exact attention. With a KV
 * cache (has_kv) prob is the kernel's view of the quantized cache (kv.kern),
 * tout and tlse the exact attention of the stored cache (kv.truth), oout and
 * olse that of the original K and V (orig); without one oout and olse are
 * NULL and tout, tlse serve both references. */
typedef struct {
	size_t rep; /* first row that uses it */
	size_t nq;
	skv_packed pk;        /* K and V in the input's store (skv_packed_init); with a KV
	                       * cache, doubles viewing kv.kern's arrays (kv owns them) */
	const skv_problem *prob; /* &pk.prob: nq, n, d, q, scale */
	skv_dd *tout; /* [nq][d] */
	skv_dd *tlse; /* [nq] */
	int has_kv;
	skv_problem orig;
	skv_kv_problem kv;
	skv_dd *oout, *olse;
	int st;
	int kv_range; /* st is SKV_ERANGE from the cache, not the draw */
	/* The score sets of its split-kernel runs (skv_scores of row 0): one
	 * per configuration and offset that score differently, shared by every
	 * run that scores alike (any splits, layout, block size). */
	size_t nz;
	double **z;       /* [nz][n] */
	skv_config *zcfg; /* [nz] a configuration each was computed under */
	double *zoff;     /* [nz] its lse offset */
} instance;

/* One split-kernel run, in the compute format, shared by every row that
 * differs only in the stages after the kernel (storage, merge, output). */
typedef struct {
	size_t rep;
	skv_partials sp;
	int st;
	size_t zi; /* its score set in its instance, SIZE_MAX for none (it scores itself) */
} kernel_run;

/* The progress line on a terminal. The phases differ in cost, so progress
 * is counted in work units of roughly equal time (progress.c). */
typedef struct {
	FILE *f;
	const char *name;
	double t0, last, work_done, work_total;
	size_t points_done, npoints;
	uint64_t *trials_left; /* per point (over every spec) */
	int printed;
} progress;

/* The work of one sweep, shared by the phase functions. Rows are the rows
 * of specs[0], then of specs[1], ...; within a spec point-major, trial
 * fastest. An instance with every kernel run and row measured on it is a
 * work unit (units.c): rows_by[rows_start[i] .. rows_start[i+1]) are the
 * rows of instance i in increasing order, runs_by likewise its kernel runs. */
typedef struct sweep {
	const run_spec *const *specs;
	size_t nspecs;
	size_t *row0;   /* [nspecs + 1] the first row of each spec */
	size_t *point0; /* [nspecs + 1] the first point (over every spec) of each */
	size_t nrows;
	size_t *row_inst, *row_run;
	instance *inst;
	size_t ninst;
	kernel_run *runs;
	size_t nruns;
	sweep_row *rows;
	int *row_st;
	int keep_outputs;
	size_t n_truth, n_kernel;
	progress pg;
	int threads;
	size_t *rows_by, *rows_start, *runs_by, *runs_start;
	double *inst_busy; /* [ninst] seconds spent on each instance's items (sweep_opts.timed), else NULL */
} sweep;

/* Numbers the rows of specs[0..n) and builds their sharing (no work yet);
 * w->rows then holds a zeroed row for each. SKV_ENOMEM (w left empty). */
int sweep_open(sweep *w, const run_spec *const *specs, size_t n, const sweep_opts *o);
/* Called after each chunk with its instances ids[0..n), whose rows are then
 * complete in w->rows; a status other than SKV_OK stops the run with it. */
typedef int (*sweep_chunk_fn)(void *ctx, sweep *w, const size_t *ids, size_t n, message *e);
/* Measures instances ids[0..n) (distinct) and every row of theirs, in
 * chunks of at most chunk_max instances (0: no limit but the memory one,
 * SWEEP_CHUNK_BYTES), in the order given. Rows of other instances are left
 * as they are. A failure's status with its message. */
int sweep_run_list(sweep *w, const size_t *ids, size_t n, size_t chunk_max, sweep_chunk_fn done, void *ctx,
		   message *e);
/* Frees everything, the rows still in w->rows included. */
void sweep_close(sweep *w);

/* Where row r lies: its spec (index in *k), point and trial. */
const run_spec *sweep_row_spec(const sweep *w, size_t r, size_t *k, size_t *point, uint64_t *trial);
/* The parameter values row r runs with (its point, its preset resolved). */
void sweep_row_values(const sweep *w, size_t r, param_value v[NPARAMS]);

/* The key word of one parameter value: the integer, or a real's bits (so
 * keys compare exactly). */
uint64_t sweep_key_word(int id, param_value v);
/* Query rows of a problem: ctx for the causal online kind, else 1. */
size_t sweep_query_rows(unsigned kind, const param_value *v);
/* The kernel configuration and merge of a row's values (trial t: the
 * random order's seed). */
skv_config sweep_config(const param_value *v, uint64_t trial);
skv_merge_spec sweep_merge(const param_value *v, uint64_t trial);
/* The KV cache of a row's values. */
skv_kv_cache sweep_kv_cache(const param_value *v);

/* measure.c: the one measurement. */
int measure_instance(sweep *w, instance *in);
void measure_instance_free(instance *in);
size_t measure_instance_bytes(const sweep *w, const instance *in);
/* Exact attention of query row qr of `in`: the whole context, or its causal
 * prefix 0..qr when the instance has one row per key. */
/* The usage error of an instance whose draw (kv 0) or KV cache (kv 1)
 * gave SKV_ERANGE, naming the flags that chose it: SKV_EINVAL. */
int measure_range_error(message *e, const sweep *w, size_t row, int kv);
int measure_truth(instance *in, size_t qr, int causal);
/* The score set of kernel run kr in its instance: an existing one that
 * scores alike, or a new empty slot (filled by measure_scores). */
int measure_score_slot(sweep *w, kernel_run *kr);
int measure_scores(instance *in, size_t zi);
int measure_kernel(sweep *w, kernel_run *kr);
/* Row r: store the shared kernel run in the row's formats, merge, measure
 * (or, for the online kind, run skv_attention_online and measure). */
int measure_row(sweep *w, size_t r);
/* The floor of format f: the errors of the exact values truth[0..n)
 * rounded once to f (skv_dd_round), which no computation in f can beat. */
int measure_floor(skv_errors *fe, const skv_dd *truth, size_t n, skv_format f);

/* progress.c */
void progress_start(progress *pg, FILE *f, const char *name, double t0);
void progress_print(progress *pg, int final);
/* Called once per finished item, from any thread; point is the point of a
 * finished row, or SIZE_MAX for a truth or kernel item. */
void progress_add(progress *pg, double work, size_t point);
/* Work units of the items, for the ETA only. */
double progress_draw_work(const param_value *v, size_t nq);
double progress_truth_work(const param_value *v, size_t nq);
double progress_kernel_work(const param_value *v);
double progress_row_work(unsigned kind, const param_value *v);

#endif
