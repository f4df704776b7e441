/* recommend.h - `skv recommend`: a split count for deployment from measured error and FA2's occupancy heuristic. */
#ifndef SKV_RECOMMEND_H
#define SKV_RECOMMEND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "skv.h"

/* The command, argv[0] == "recommend". Exit status 0 when the report was
 * printed, also when no count is within tolerance (the report says so, and
 * JSON has "recommended_splits": null); 2 for bad usage (one line on stderr
 * naming the flag and value, nothing on stdout); 1 for a runtime failure
 * (one line on stderr). --help prints the usage on stdout, status 0. */
int skv_app_recommend(int argc, char **argv);
/* The same, writing the report to out and messages to err. */
int skv_app_recommend_io(int argc, char **argv, FILE *out, FILE *err);

typedef enum { SKV_REC_NORM_REL = 0, SKV_REC_MAX_ABS = 1, SKV_REC_ULP = 2 } skv_rec_metric;
#define SKV_REC_NMETRICS 3
/* fa2: FA2's block-aligned chunks (skv_fa2_bounds); even: skv_bounds_even. */
typedef enum { SKV_REC_LAYOUT_FA2 = 0, SKV_REC_LAYOUT_EVEN = 1 } skv_rec_layout;
#define SKV_REC_NLAYOUTS 2
/* pow2: 1, 2, 4, ... up to --max-splits; all: every count up to it; list:
 * the counts given. FA2's own pick is always added, ineligible counts are
 * always dropped. */
typedef enum { SKV_REC_CANDS_POW2 = 0, SKV_REC_CANDS_ALL = 1, SKV_REC_CANDS_LIST = 2 } skv_rec_cands;
typedef enum { SKV_REC_TEXT = 0, SKV_REC_CSV = 1, SKV_REC_JSON = 2 } skv_rec_format;
#define SKV_REC_NFORMATS 3

const char *skv_rec_metric_name(skv_rec_metric m);
const char *skv_rec_layout_name(skv_rec_layout l);

enum {
	SKV_REC_MAX_SPLITS = 1024, /* largest candidate count, --max-splits and fixed-size option */
	SKV_REC_MAX_LIST = 64      /* counts in --splits=LIST */
};

typedef struct {
	unsigned batch, heads, kv_heads, ctx, head_dim, sms;
	const skv_preset *preset;
	skv_config cfg; /* the preset resolved on the input format, stage flags applied */
	skv_merge_spec spec;
	skv_dist dist;
	double score_scale, lse_offset, tol;
	skv_rec_metric metric;
	unsigned trials;
	uint64_t seed;
	unsigned max_splits;
	skv_rec_cands cands;
	unsigned list[SKV_REC_MAX_LIST];
	size_t nlist;
	unsigned split_size; /* keys per split of the fixed-size option; 0: FA2's at batch 1 */
	skv_rec_layout layout;
	unsigned threads;
} skv_rec_opts;

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
} skv_rec_row;

typedef struct {
	skv_fa2_decode fa2;
	unsigned fa2_splits;
	int fa2_early;             /* the 0.8 x SMs early return fired */
	float fa2_best_eff;        /* the best efficiency FA2 searched (0 if early) */
	unsigned fa2_best_splits;  /* the smallest eligible count reaching it */
	skv_rec_row *rows;         /* the count candidates, ascending */
	size_t nrows;
	size_t recommended;        /* index into rows; nrows if none is within tolerance */
	size_t fa2_row;            /* index of FA2's pick */
	skv_rec_row fixed;         /* the fixed split size option */
	unsigned split_size;       /* its keys per split */
	unsigned split_size_fa2_batch1; /* FA2's count at batch 1 when split_size was derived from it, else 0 */
	double spread_ulps;        /* max over trials, elements and pairs of counts of
	                            * |o_a - o_b| / ulp(output format, truth); an element
	                            * near zero has a tiny ulp and dominates it */
	double spread_norm_rel;    /* max over trials and pairs of ||o_a - o_b|| / ||truth|| */
	double floor_median, floor_max; /* the metric of the exact output rounded to the output format */
	unsigned *skipped;         /* ineligible counts dropped from pow2 or a list, ascending */
	size_t nskipped;
} skv_rec_result;

/* Index of the recommended row: the largest efficiency among the rows within
 * tolerance and allowed; equal efficiencies go to the smaller count (the row
 * that comes first, rows being ascending). n when no row qualifies. */
size_t skv_rec_choose(const skv_rec_row *rows, size_t n);

/* Options with every default (see skv recommend --help). */
void skv_rec_opts_default(skv_rec_opts *o);
/* Parses the command line (argv[0] is "recommend"). SKV_OK; SKV_EINVAL with
 * a one-line message in msg naming the flag and value. *help is set when
 * --help was given (the rest is then not checked). */
int skv_rec_parse(skv_rec_opts *o, skv_rec_format *fmt, int *help, int argc, char **argv, char *msg,
		  size_t msglen);

/* Measures every option of a parsed request. SKV_OK, or a status with a
 * one-line message (r untouched). Output is the same for every thread count. */
int skv_rec_run(skv_rec_result *r, const skv_rec_opts *o, char *msg, size_t msglen);
void skv_rec_result_free(skv_rec_result *r);

/* The report. */
void skv_rec_print_text(FILE *f, const skv_rec_opts *o, const skv_rec_result *r);
void skv_rec_print_csv(FILE *f, const skv_rec_opts *o, const skv_rec_result *r);
void skv_rec_print_json(FILE *f, const skv_rec_opts *o, const skv_rec_result *r);
void skv_rec_usage(FILE *f);

#endif
