/* core.h - the measurement core: the parameter table, layouts, run specs and the sweep that measures them; computation only. */
#ifndef CORE_CORE_H
#define CORE_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "io/io.h"
#include "skv.h"

/* ------------------------------------------------------------- parameters */

/* Identifiers of the parameters, in table order. The order is the order of
 * the CSV columns and of the sweep: the cross product runs over the
 * parameters in this order with the last one varying fastest. Adding a
 * parameter is one identifier here and one row in params[] (params.c),
 * whose stage tag tells the sweep which work it changes (so it shares
 * correctly with no edit elsewhere), plus its use where it acts. The
 * parameters after P_THREADS have no CSV column: skv recommend's. */
typedef enum {
	P_PRESET,
	P_CTX,
	P_HEAD_DIM,
	P_DIST,
	P_SCORE_SCALE,
	P_INPUT,
	P_KV_CACHE,  /* the quantized KV cache (skv_kv_cache) */
	P_KV_SCALE,
	P_KV_DEQ,
	P_KV_SCALE_VALUE,
	P_LSE_OFFSET,
	P_SPLITS,
	P_LAYOUT,
	P_BLOCK_SIZE,
	P_CAUSAL,
	P_COMPUTE,
	P_P,
	P_LSE_BASE,
	P_PARTIAL,
	P_LSE,
	P_COMBINE,
	P_OUTPUT,
	P_BLOCKS,    /* the kernel's mechanisms (skv_config) */
	P_ACC,
	P_FORMULA,
	P_LANES,
	P_LANE_KEYS,
	P_MATH,
	P_GPU,       /* the arithmetic of q.k and P.V: IEEE or a GPU's tensor cores */
	P_MERGE,
	P_ORDER,
	P_EMPTY,
	P_MERGE_THREADS,
	P_ROUND_STATES,
	P_NORM,
	P_TRIALS,
	P_SEED,
	P_THREADS,
	P_SPLIT_SIZE, /* recommend's fixed split size (layout fixed) */
	P_BATCH,
	P_HEADS,
	P_KV_HEADS,
	P_SMS,
	P_METRIC,
	P_TOL,
	P_CANDIDATES,
	P_MAX_SPLITS,
	P_FORMAT,
	P_SYSTEM,        /* recommend: whose heuristic and layout (layout system) */
	P_PAGE_SIZE,     /* recommend: flashinfer's page */
	P_BLOCKS_PER_SM, /* recommend: flashinfer's and llama.cpp's occupancy input */
	P_KV_SPLITS,     /* recommend: sglang's cap */
	P_DETERMINISTIC, /* recommend: sglang's deterministic mode */
	NPARAMS
} param_id;

typedef enum { PT_INT, PT_REAL, PT_ENUM } param_type;

/* What a parameter changes, in the order of a row's computation: the sweep
 * shares one problem and its exact truth among the rows equal in every
 * PROBLEM parameter (and trial), one split-kernel run among those equal in
 * every KERNEL parameter too; STORE, MERGE and ROW parameters act per row.
 * NONE: no effect on any number (threads, recommend's shape and choice). */
typedef enum { STAGE_NONE, STAGE_PROBLEM, STAGE_KERNEL, STAGE_STORE, STAGE_MERGE, STAGE_ROW } param_stage;

/* Experiment kinds: which computation a row measures. A parameter lists the
 * kinds it applies to; for the others its CSV cell is empty and setting it
 * is an error. */
enum {
	KIND_SPLIT = 1u,  /* split kernel, storage, merge (one decode row) */
	KIND_ONLINE = 2u, /* skv_attention_online over every query row */
	KIND_REC = 4u,    /* skv recommend: split rows of one shape, chosen among */
	KIND_ALL = 7u
};

/* An enumeration's value names: either the library's parse and name
 * functions (one source of truth) or a table local to the program. */
typedef struct {
	const char *what;  /* "format", "order", ... for messages */
	unsigned count;    /* values are 0 .. count-1 */
	const char *(*name)(unsigned v);
	int (*parse)(unsigned *v, const char *s); /* SKV_OK or SKV_EINVAL */
} param_enum;

typedef struct {
	const char *flag;   /* command-line name: --flag=V1,V2 */
	const char *column; /* CSV column (flag with '-' -> '_'); NULL: none */
	param_type type;
	const param_enum *en; /* PT_ENUM only */
	uint64_t imin, imax;    /* PT_INT: inclusive range */
	double rmin, rmax;      /* PT_REAL: inclusive range (finite) */
	int rmin_open;          /* PT_REAL: rmin itself excluded */
	int multiple;           /* PT_REAL: "Kx" is accepted too, a multiple of a
	                         * reference the parameter's user defines (value
	                         * u = 1, r = K); recommend's --tol=2x */
	unsigned kinds;         /* KIND_* it applies to */
	param_stage stage;      /* the work it changes */
	int single;             /* one value only, never a list */
	const char *def;        /* default value, parsed like a flag */
	const char *help;
} param_def;

extern const param_def params[NPARAMS];

/* The program's own enumerations. */
typedef enum {
	LAYOUT_EVEN = 0,
	LAYOUT_RANDOM = 1,
	LAYOUT_SKEWED = 2,
	LAYOUT_HOLES = 3,
	LAYOUT_LAST_EMPTY = 4,
	LAYOUT_ALL_EMPTY = 5,
	LAYOUT_FA2 = 6,   /* skv_fa2_bounds with --block-size keys a block */
	LAYOUT_FIXED = 7, /* splits of --split-size keys (skv recommend's fixed-size option) */
	LAYOUT_SYSTEM = 8 /* the layout --system makes of S splits (skv_heur_layout; skv recommend) */
} layout_id;
#define NLAYOUTS 9

/* One value of a parameter: u for integers and enums, r for reals. */
typedef struct {
	uint64_t u;
	double r;
} param_value;

typedef struct {
	size_t n;
	param_value *v;
} param_list;

/* The math parameter's value for "the preset's own mode" (resolved by
 * spec_values; without a preset it is exact). */
#define MATH_OWN SKV_NMATHS

/* Index of the parameter named by flag (without "--"); -1 if none. */
int param_find(const char *flag);
/* Index of the parameter whose CSV column is col; -1 if none. */
int param_by_column(const char *col);
/* 1 when parameter id cannot matter given another's value: value(on, ctx)
 * is parameter on's value as the CSV writes it, or NULL when it varies or
 * is unknown (then id may matter). The rules are params.c's. */
int param_inert(int id, const char *(*value)(int on, void *ctx), void *ctx);
/* Parses one value of parameter id. SKV_EINVAL with a message naming
 * the token on error. */
int param_parse(param_value *v, int id, const char *s, message *e);
/* Writes a value as it appears in the CSV (shortest round-trip reals). */
void param_format(char *buf, size_t n, int id, param_value v);
/* Writes the allowed values or range of a parameter ("fp16, bf16, ..."). */
void param_allowed(char *buf, size_t n, int id);
/* Shortest decimal that reads back as x (%.Ng, N <= 17); inf, -inf, nan. */
void format_double(char *buf, size_t n, double x);

/* Split boundaries of `layout` (see layout.c for the definitions): bounds has
 * S + 1 entries. SKV_EINVAL for S == 0, S > n, S below the layout's
 * smallest count or a bad layout. */
int layout_bounds(size_t *bounds, size_t n, size_t S, layout_id layout, uint64_t seed, size_t block,
		  size_t split_size);
/* The smallest split count the layout takes (2 for last-empty, else 1). */
size_t layout_min_splits(layout_id layout);
/* The heuristics' input of a point's values (recommend's shape parameters;
 * kv-heads 0 is heads; element bytes 1 for an 8-bit input format, else 2),
 * and the system of P_SYSTEM (SKV_EINVAL for "preset", which recommend
 * resolves before measuring). */
int layout_heur_input(skv_heur_input *in, skv_heur_system *sys, const param_value *v);
/* Layout system: the system's layout of S splits as *ntiles + 1 tile
 * bounds (malloc'd), tile t belonging to split t mod S: S contiguous tiles,
 * or llamacpp-cuda's interleaved ones (skv_split_kernel_tiled runs either).
 * SKV_EINVAL when the system makes another count of S (a chunked system:
 * flashinfer, vllm-v2) or the shape is outside its domain. */
int layout_system_tiles(size_t **tiles, size_t *ntiles, size_t S, const param_value *v);

/* ------------------------------------------------------------ experiments */

typedef struct {
	const char *name;
	unsigned kind;       /* KIND_SPLIT or KIND_ONLINE */
	const char *summary; /* one line */
	const char *defaults; /* flags applied over the table's defaults */
	const char *why;      /* what the defaults show, for --help */
} exp_def;


/* -------------------------------------------------------------- run specs */

/* A parsed run request: the value list of every parameter. */
typedef struct {
	const exp_def *exp;
	param_list list[NPARAMS];
	unsigned char given[NPARAMS]; /* set by the user, not a default */
	char *out;                            /* output folder */
	char *shown_out;                      /* the folder to name when out is a staging
	                                       * folder standing in for it; NULL: out */
} run_spec;

/* Starts a spec for the named experiment with the table's defaults and the
 * experiment's own defaults applied. USAGE for an unknown experiment. */
int spec_init(run_spec *s, const exp_def *x, message *e);
/* Sets parameter `flag` (no dashes) to the comma-separated list `value`.
 * `given` marks it as the user's. USAGE on error (s unchanged). */
int spec_set(run_spec *s, const char *flag, const char *value, int given,
		     message *e);
/* Replaces parameter id's list by v[0..n) (n >= 1, values already in
 * range: the program's own settings, not the user's). SKV_EIO when out of memory. */
int spec_set_values(run_spec *s, int id, const param_value *v, size_t n, message *e);
/* A deep copy of s. */
int spec_copy(run_spec *d, const run_spec *s, message *e);
/* Applies command-line tokens (--flag=V, --flag V, --out=DIR). USAGE on error. */
int spec_args(run_spec *s, int argc, char **argv, message *e);
/* Cross-parameter checks (splits <= ctx, supported merge specs, sweep size).
 * USAGE on error. */
int spec_check(const run_spec *s, message *e);
void spec_free(run_spec *s);

/* Number of parameter points (the cross product) and of rows (points x
 * trials); 0 if the product overflows. */
size_t spec_npoints(const run_spec *s);
uint64_t spec_trials(const run_spec *s);
/* Seconds on the monotonic clock (core/progress.c). */
double progress_now(void);
/* The OpenMP threads a run takes: --threads, or the OpenMP default (0). */
int spec_threads(const run_spec *s);
/* The values of point `pt`: mixed radix over the lists, last parameter
 * fastest. */
void spec_point(const run_spec *s, size_t pt, param_value vals[NPARAMS]);
/* The values point `pt` runs with: its point values with the point's preset
 * applied. The engine, the CSV and the Markdown table read these. */
void spec_values(const run_spec *s, size_t pt, param_value vals[NPARAMS]);
/* Whether parameter id applies to the spec's experiment. */
int spec_applies(const run_spec *s, int id);
/* The flags that reproduce the spec (every applicable parameter). */
int spec_flags(char **out, const run_spec *s);

/* ----------------------------------------------------------------- engine */

/* What a merge returned, beyond its error: the empty-split semantics. */
typedef enum { OUT_FINITE = 0, OUT_NAN = 1, OUT_INF = 2 } out_state_id;
typedef enum { LSE_FINITE = 0, LSE_NEG_INF = 1, LSE_POS_INF = 2, LSE_NAN = 3 } lse_state_id;
const char *out_state_name(int s);
const char *lse_state_name(int s);

typedef struct {
	size_t spec; /* which spec of the sweep (0 for a single one) */
	size_t point;
	uint64_t trial;
	skv_errors err;  /* against the exact attention of the stored KV cache */
	double lse_err;
	skv_errors err_orig; /* against that of the original K and V (= err without a cache) */
	double lse_err_orig;
	skv_errors floor; /* the errors of the exact output rounded once to the output format */
	unsigned char out_state; /* out_state_id of the whole output */
	unsigned char lse_state; /* lse_state_id of the merged LSE (worst row) */
	double *out;   /* the merged output (head-dim values), when the sweep keeps them; else NULL */
	double *truth; /* with out: the exact output's leading doubles (the hi of each skv_dd) */
} sweep_row;

typedef struct {
	size_t npoints, nrows;
	uint64_t trials;
	sweep_row *rows; /* point-major, trial fastest */
	/* What the engine computed, for the tests of its sharing. */
	size_t n_instances;   /* random problems drawn */
	size_t n_truth_calls; /* skv_truth_range calls */
	size_t n_kernel_runs; /* skv_split_kernel calls */
	int threads;          /* OpenMP threads used (metadata only) */
	double wall_s;
} sweep_result;

/* How a sweep runs: a progress line on a stream (NULL: none); keep_outputs:
 * every row keeps its merged output and the truth's leading doubles
 * (sweep_row.out, .truth); timed: the seconds spent on each instance are
 * kept (the work units' measured costs, units.h). */
typedef struct {
	FILE *progress;
	int keep_outputs;
	int timed;
} sweep_opts;

/* Seeds of trial t of a run with base seed `seed` (the rule: seeds.c). */
uint64_t seed_problem(uint64_t seed, uint64_t trial);
uint64_t seed_layout(uint64_t seed, uint64_t trial);
uint64_t seed_order(uint64_t seed, uint64_t trial);
uint64_t seed_math(uint64_t seed, uint64_t trial);

/* The peak memory (bytes) and CPU time (seconds, from fixed costs per key
 * measured on x86-64: an estimate within a factor of a few) of running
 * spec s on `threads` threads. SKV_ENOMEM. */
int sweep_estimate(double *bytes, double *cpu_s, const run_spec *s, int threads);

/* Runs every point and trial of a checked spec. progress: a stream for the
 * progress line, or NULL for none. RUNTIME with a message on failure. */
int sweep_run(sweep_result *r, const run_spec *s, FILE *progress, message *e);
/* The rows of several checked specs in one sweep, sharing problems,
 * truths and kernel runs among them; rows spec after spec. */
int sweep_run_specs(sweep_result *r, const run_spec *const *specs, size_t n, const sweep_opts *o, message *e);
void sweep_result_free(sweep_result *r);

#endif
