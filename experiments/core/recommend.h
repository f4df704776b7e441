/* recommend.h - `skv recommend`'s computation: the candidate split counts of a shape, their measured error, the choice. */
#ifndef SKV_RECOMMEND_H
#define SKV_RECOMMEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/io.h"
#include "skv.h"

typedef enum { REC_NORM_REL = 0, REC_MAX_ABS = 1, REC_ULP = 2 } rec_metric;
#define REC_NMETRICS 3
/* fa2: FA2's block-aligned chunks (skv_fa2_bounds); even: skv_bounds_even. */
typedef enum { REC_LAYOUT_FA2 = 0, REC_LAYOUT_EVEN = 1 } rec_layout;
#define REC_NLAYOUTS 2
/* pow2: 1, 2, 4, ... up to --max-splits; all: every count up to it; list:
 * the counts given. FA2's own pick is always added, ineligible counts are
 * always dropped. */
typedef enum { REC_CANDS_POW2 = 0, REC_CANDS_ALL = 1, REC_CANDS_LIST = 2 } rec_cands;
typedef enum { REC_TEXT = 0, REC_CSV = 1, REC_JSON = 2 } rec_format;
#define REC_NFORMATS 3

const char *rec_metric_name(rec_metric m);
const char *rec_layout_name(rec_layout l);

enum {
	REC_MAX_SPLITS = 1024, /* largest candidate count, --max-splits and fixed-size option */
	REC_MAX_LIST = 64      /* counts in --splits=LIST */
};

typedef struct {
	unsigned batch, heads, kv_heads, ctx, head_dim, sms;
	const skv_preset *preset;
	skv_config cfg; /* the preset resolved on the input format, stage flags applied */
	skv_merge_spec spec;
	skv_dist dist;
	double score_scale, lse_offset, tol;
	rec_metric metric;
	unsigned trials;
	uint64_t seed;
	unsigned max_splits;
	rec_cands cands;
	unsigned list[REC_MAX_LIST];
	size_t nlist;
	unsigned split_size; /* keys per split of the fixed-size option; 0: FA2's at batch 1 */
	rec_layout layout;
	unsigned threads;
} rec_opts;

/* One option measured on the shape. */
typedef struct {
	unsigned splits;
	unsigned blocks_per_split; /* ceil(num_n_blocks / splits); fixed size: ceil(keys / block_n) */
	float efficiency;          /* FA2's wave efficiency of `splits` on this shape */
	double err_median;         /* over the trials whose error is not NaN (type 7) */
	double err_max;            /* NaN if any trial gave NaN */
	size_t nan_trials;
	int within_tol; /* err_max <= tol (a NaN max is never within) */
	int fa2;        /* FA2's own pick */
	int allowed;    /* splits <= --max-splits: may be recommended */
} rec_row;

typedef struct {
	skv_fa2_decode fa2;
	unsigned fa2_splits;
	int fa2_early;             /* the 0.8 x SMs early return fired */
	float fa2_best_eff;        /* the best efficiency FA2 searched (0 if early) */
	unsigned fa2_best_splits;  /* the smallest eligible count reaching it */
	rec_row *rows;         /* the count candidates, ascending */
	size_t nrows;
	size_t recommended;        /* index into rows; nrows if none is within tolerance */
	size_t fa2_row;            /* index of FA2's pick */
	rec_row fixed;         /* the fixed split size option */
	unsigned split_size;       /* its keys per split */
	unsigned split_size_fa2_batch1; /* FA2's count at batch 1 when split_size was derived from it, else 0 */
	double spread_ulps;        /* max over trials, elements and pairs of counts of
	                            * |o_a - o_b| / ulp(output format, truth); an element
	                            * near zero has a tiny ulp and dominates it */
	double spread_norm_rel;    /* max over trials and pairs of ||o_a - o_b|| / ||truth|| */
	double floor_median, floor_max; /* the metric of the exact output rounded to the output format */
	unsigned *skipped;         /* ineligible counts dropped from pow2 or a list, ascending */
	size_t nskipped;
} rec_result;

/* Index of the recommended row: the largest efficiency among the rows within
 * tolerance and allowed; equal efficiencies go to the smaller count (the row
 * that comes first, rows being ascending). n when no row qualifies. */
size_t rec_choose(const rec_row *rows, size_t n);

/* Measures every option of a parsed request. SKV_OK, or a status with a
 * one-line message (r untouched). Output is the same for every thread count. */
int rec_run(rec_result *r, const rec_opts *o, char *msg, size_t msglen);
void rec_result_free(rec_result *r);

#endif
