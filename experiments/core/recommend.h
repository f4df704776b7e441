/* recommend.h - `skv recommend`'s computation: the candidate split counts of a shape, measured by the one sweep, and the choice. */
#ifndef CORE_RECOMMEND_H
#define CORE_RECOMMEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/core.h"
#include "io/io.h"
#include "skv.h"

/* The metric the tolerance bounds: a field of skv_errors. */
typedef enum { REC_NORM_REL = 0, REC_MAX_ABS = 1, REC_ULP = 2 } rec_metric;
#define REC_NMETRICS 3
/* system: the layout the system makes of each count (layout system, the
 * default); fa2: FA2's block-aligned chunks (layout fa2); even: layout even. */
typedef enum { REC_LAYOUT_FA2 = 0, REC_LAYOUT_EVEN = 1, REC_LAYOUT_SYSTEM = 2 } rec_layout;
/* pow2: 1, 2, 4, ... up to --max-splits; all: every count up to it; list:
 * the counts of --splits. FA2's pick is always added, ineligible counts are
 * always dropped. The values of the candidates parameter. */
typedef enum { REC_CANDS_POW2 = 0, REC_CANDS_ALL = 1, REC_CANDS_LIST = 2 } rec_cands;
/* The values of the format parameter. */
typedef enum { REC_TEXT = 0, REC_CSV = 1, REC_JSON = 2 } rec_format;

/* ceil(a / b) for b > 0. */
static inline unsigned rec_ceil_div(unsigned a, unsigned b) { return a / b + (a % b != 0); }

const char *rec_metric_name(rec_metric m);
const char *rec_layout_name(rec_layout l);

enum {
	REC_MAX_SPLITS = 1024, /* largest candidate count (the max-splits parameter's range) and fixed-size count */
	REC_MAX_LIST = 64      /* counts in --splits */
};

/* skv recommend as an experiment of the parameter table: its kind is
 * KIND_REC and its defaults are the command's (ctx 32768, 8 trials, the
 * fa2 preset, FA2's layout). */
extern const exp_def rec_exp;

/* A request: the run spec every flag went into, and its values read out.
 * Everything numeric is measured from `spec` (the sweep's one path); the
 * fields below are what the choice and the report read. */
typedef struct {
	run_spec spec; /* owned; one value per parameter, --splits a list */
	unsigned batch, heads, kv_heads, ctx, head_dim, sms;
	const skv_preset *preset; /* NULL: none */
	skv_config cfg;           /* the stage formats the rows run with (the preset resolved) */
	skv_merge_spec merge;
	skv_kv_cache kv; /* the KV cache the rows read (format 0: none) */
	skv_dist dist;
	double score_scale, lse_offset;
	double tol;       /* --tol: in the metric's units, or the multiple K of --tol=Kx */
	int tol_multiple; /* --tol=Kx: the threshold is K times the floor's max over the trials */
	rec_metric metric;
	unsigned trials;
	uint64_t seed;
	unsigned max_splits;
	rec_cands cands;
	unsigned list[REC_MAX_LIST];
	size_t nlist;
	unsigned split_size; /* keys per split of the fixed-size option; 0: FA2's at batch 1 */
	rec_layout layout;
	rec_format format;
	skv_heur_system system; /* whose heuristic: --system, or the preset's */
	int system_default;     /* 1: the preset has no heuristic of its own, FA2's stands in */
	skv_heur_input heur;    /* the heuristics' input of the request */
} rec_opts;

/* Reads a request out of a spec of rec_exp (taken over: freed by
 * rec_opts_free, also on failure) and checks what the table cannot: one
 * value per parameter, kv-heads dividing heads, FA2's head-dim limit and
 * int range, the candidate list. SKV_EINVAL with a message naming the flag
 * and value. */
int rec_opts_init(rec_opts *o, run_spec *spec, message *e);
void rec_opts_free(rec_opts *o);
/* The name of the request's preset ("none" when there is none). */
const char *rec_preset_name(const rec_opts *o);

/* The system a preset names (its split heuristic), and whether there is
 * one (0: FA2's stands in, e.g. for tilelang, whose examples fix the count). */
int rec_preset_system(skv_heur_system *s, const skv_preset *p);

/* One option measured on the shape. */
typedef struct {
	unsigned splits;
	size_t span;               /* keys of every split but the last non-empty one */
	float efficiency;          /* FA2's wave efficiency of `splits` on this shape */
	double err_median;         /* over the trials whose error is not NaN (type 7) */
	double err_max;            /* NaN if any trial gave NaN */
	size_t nan_trials;
	int within_tol; /* err_max <= the threshold (a NaN max is never within) */
	int pick;       /* the system's own pick */
	int allowed;    /* splits <= --max-splits: may be recommended */
} rec_row;

typedef struct {
	skv_heur_plan plan;        /* the system's own plan on the shape */
	size_t pick_row;           /* its row among the counts; nrows when it is measured apart (own) */
	rec_row own;               /* the system's own plan when its layout is not a count's (chunked systems) */
	skv_fa2_decode fa2;        /* FA2's inputs: its occupancy model gives every efficiency */
	unsigned fa2_splits;
	int fa2_early;             /* the 0.8 x SMs early return fired */
	float fa2_best_eff;        /* the best efficiency FA2 searched (0 if early) */
	unsigned fa2_best_splits;  /* the smallest eligible count reaching it */
	rec_row *rows;             /* the count candidates, ascending */
	size_t nrows;
	size_t recommended;        /* index into rows; nrows if none is within tolerance */
	rec_row fixed;             /* the fixed split size option */
	unsigned split_size;       /* its keys per split */
	unsigned split_size_batch1; /* the system's count at batch 1 when split_size is its split size there, else 0 */
	double spread_ulps;        /* max over trials, elements and pairs of counts of
	                            * |o_a - o_b| / ulp(output format, truth); an element
	                            * near zero has a tiny ulp and dominates it */
	double spread_norm_rel;    /* max over trials and pairs of ||o_a - o_b|| / ||truth|| */
	double floor_median, floor_max; /* the metric of the exact output rounded to the output format */
	double tol;                /* the threshold applied: --tol, or K floor_max for --tol=Kx */
	unsigned *skipped;         /* ineligible counts dropped from pow2 or a list, ascending: the same
	                            * layout as one split fewer, or a count the system's layout cannot make */
	size_t nskipped;
} rec_result;

/* The system's side of a request: its plan, FA2's occupancy figures, the
 * candidates and the fixed-size and own options, unmeasured
 * (recommend_plan.c). SKV_EINVAL with a message for a shape outside the
 * system's domain. */
int rec_plan(rec_result *r, const rec_opts *o, message *e);

/* Index of the recommended row: the largest efficiency among the rows within
 * tolerance and allowed; equal efficiencies go to the smaller count (the row
 * that comes first, rows being ascending). n when no row qualifies. */
size_t rec_choose(const rec_row *rows, size_t n);

/* Measures every option of a request in one sweep_run_specs (the candidate
 * counts as one spec, the fixed size as another, sharing problems and
 * truths). SKV_OK, or a status with a one-line message (r untouched); the
 * same output for every thread count. progress: a stream for the sweep's
 * progress line, or NULL. */
int rec_run(rec_result *r, const rec_opts *o, FILE *progress, message *e);
void rec_result_free(rec_result *r);

#endif
