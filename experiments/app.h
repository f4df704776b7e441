/* app.h - the skv program's internal interface: parameter table, experiments, run specs, engine, output, commands. */
#ifndef SKV_APP_H
#define SKV_APP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "skv.h"

/* Exit statuses of the program and of every command function below. */
enum { SKV_APP_EXIT_OK = 0, SKV_APP_EXIT_RUNTIME = 1, SKV_APP_EXIT_USAGE = 2 };

/* A one-line error message ("skv: ..." without the newline), written by the
 * function that detected the problem and printed by the command. The text
 * is allocated to its full length (never cut), and control characters of
 * the values it quotes (a line break, a terminal escape) are written as
 * \n, \t, \xHH, so it stays one printable line. Start with {NULL}; free
 * with skv_app_error_free. */
typedef struct {
	char *msg;
} skv_app_error;

/* Replaces the message of e (an out-of-memory note if formatting fails). */
void skv_app_errorf(skv_app_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The message, or "" when there is none. */
const char *skv_app_error_text(const skv_app_error *e);
void skv_app_error_free(skv_app_error *e);

/* ------------------------------------------------------------- parameters */

/* Identifiers of the parameters, in table order. The order is the order of
 * the CSV columns and of the sweep: the cross product runs over the
 * parameters in this order with the last one varying fastest. Adding a
 * parameter is one identifier here and one line in skv_app_params[]
 * (params.c), plus its use in the engine. */
typedef enum {
	SKV_APP_P_PRESET,
	SKV_APP_P_CTX,
	SKV_APP_P_HEAD_DIM,
	SKV_APP_P_DIST,
	SKV_APP_P_SCORE_SCALE,
	SKV_APP_P_INPUT,
	SKV_APP_P_LSE_OFFSET,
	SKV_APP_P_SPLITS,
	SKV_APP_P_LAYOUT,
	SKV_APP_P_BLOCK_SIZE,
	SKV_APP_P_CAUSAL,
	SKV_APP_P_COMPUTE,
	SKV_APP_P_P,
	SKV_APP_P_LSE_BASE,
	SKV_APP_P_PARTIAL,
	SKV_APP_P_LSE,
	SKV_APP_P_COMBINE,
	SKV_APP_P_OUTPUT,
	SKV_APP_P_MERGE,
	SKV_APP_P_ORDER,
	SKV_APP_P_EMPTY,
	SKV_APP_P_MERGE_THREADS,
	SKV_APP_P_ROUND_STATES,
	SKV_APP_P_TRIALS,
	SKV_APP_P_SEED,
	SKV_APP_P_THREADS,
	SKV_APP_NPARAMS
} skv_app_param_id;

typedef enum { SKV_APP_INT, SKV_APP_REAL, SKV_APP_ENUM } skv_app_type;

/* Experiment kinds: which computation a row measures. A parameter lists the
 * kinds it applies to; for the others its CSV cell is empty and setting it
 * is an error. */
enum {
	SKV_APP_KIND_SPLIT = 1u,  /* split kernel, storage, merge (one decode row) */
	SKV_APP_KIND_ONLINE = 2u, /* skv_attention_online over every query row */
	SKV_APP_KIND_ALL = 3u
};

/* An enumeration's value names: either the library's parse and name
 * functions (one source of truth) or a table local to the program. */
typedef struct {
	const char *what;  /* "format", "order", ... for messages */
	unsigned count;    /* values are 0 .. count-1 */
	const char *(*name)(unsigned v);
	int (*parse)(unsigned *v, const char *s); /* SKV_OK or SKV_EINVAL */
} skv_app_enum;

typedef struct {
	const char *flag;   /* command-line name: --flag=V1,V2 */
	const char *column; /* CSV column (flag with '-' -> '_'); NULL: none */
	skv_app_type type;
	const skv_app_enum *en; /* SKV_APP_ENUM only */
	uint64_t imin, imax;    /* SKV_APP_INT: inclusive range */
	double rmin, rmax;      /* SKV_APP_REAL: inclusive range (finite) */
	int rmin_open;          /* SKV_APP_REAL: rmin itself excluded */
	unsigned kinds;         /* SKV_APP_KIND_* it applies to */
	int single;             /* one value only, never a list */
	const char *def;        /* default value, parsed like a flag */
	const char *help;
} skv_app_param;

extern const skv_app_param skv_app_params[SKV_APP_NPARAMS];

/* The program's own enumerations. */
typedef enum {
	SKV_APP_LAYOUT_EVEN = 0,
	SKV_APP_LAYOUT_RANDOM = 1,
	SKV_APP_LAYOUT_SKEWED = 2,
	SKV_APP_LAYOUT_HOLES = 3,
	SKV_APP_LAYOUT_LAST_EMPTY = 4,
	SKV_APP_LAYOUT_ALL_EMPTY = 5
} skv_app_layout;
#define SKV_APP_NLAYOUTS 6

/* One value of a parameter: u for integers and enums, r for reals. */
typedef struct {
	uint64_t u;
	double r;
} skv_app_value;

typedef struct {
	size_t n;
	skv_app_value *v;
} skv_app_list;

/* Index of the parameter named by flag (without "--"); -1 if none. */
int skv_app_param_find(const char *flag);
/* Parses one value of parameter id. SKV_APP_EXIT_USAGE with a message naming
 * the token on error. */
int skv_app_value_parse(skv_app_value *v, int id, const char *s, skv_app_error *e);
/* Writes a value as it appears in the CSV (shortest round-trip reals). */
void skv_app_value_format(char *buf, size_t n, int id, skv_app_value v);
/* Writes the allowed values or range of a parameter ("fp16, bf16, ..."). */
void skv_app_param_allowed(char *buf, size_t n, int id);
/* Shortest decimal that reads back as x (%.Ng, N <= 17); inf, -inf, nan. */
void skv_app_format_double(char *buf, size_t n, double x);

/* Split boundaries of `layout` (see layout.c for the definitions): bounds has
 * S + 1 entries. SKV_EINVAL for S == 0, S > n, S below the layout's
 * smallest count or a bad layout. */
int skv_app_layout_bounds(size_t *bounds, size_t n, size_t S, skv_app_layout layout, uint64_t seed);
/* The smallest split count the layout takes (2 for last-empty, else 1). */
size_t skv_app_layout_min_splits(skv_app_layout layout);

/* ------------------------------------------------------------ experiments */

typedef struct {
	const char *name;
	unsigned kind;       /* SKV_APP_KIND_SPLIT or SKV_APP_KIND_ONLINE */
	const char *summary; /* one line */
	const char *defaults; /* flags applied over the table's defaults */
	const char *why;      /* what the defaults show, for --help */
} skv_app_experiment;

extern const skv_app_experiment skv_app_experiments[];
extern const size_t skv_app_nexperiments;
const skv_app_experiment *skv_app_experiment_find(const char *name);

/* -------------------------------------------------------------- run specs */

/* A parsed run request: the value list of every parameter. */
typedef struct {
	const skv_app_experiment *exp;
	skv_app_list list[SKV_APP_NPARAMS];
	unsigned char given[SKV_APP_NPARAMS]; /* set by the user, not a default */
	char *out;                            /* output folder */
	char *shown_out;                      /* the folder to name when out is a staging
	                                       * folder standing in for it; NULL: out */
} skv_app_spec;

/* Starts a spec for the named experiment with the table's defaults and the
 * experiment's own defaults applied. USAGE for an unknown experiment. */
int skv_app_spec_init(skv_app_spec *s, const char *experiment, skv_app_error *e);
/* Sets parameter `flag` (no dashes) to the comma-separated list `value`.
 * `given` marks it as the user's. USAGE on error (s unchanged). */
int skv_app_spec_set(skv_app_spec *s, const char *flag, const char *value, int given,
		     skv_app_error *e);
/* Applies command-line tokens (--flag=V, --flag V, --out=DIR). USAGE on error. */
int skv_app_spec_args(skv_app_spec *s, int argc, char **argv, skv_app_error *e);
/* Cross-parameter checks (splits <= ctx, supported merge specs, sweep size).
 * USAGE on error. */
int skv_app_spec_check(const skv_app_spec *s, skv_app_error *e);
void skv_app_spec_free(skv_app_spec *s);

/* Number of parameter points (the cross product) and of rows (points x
 * trials); 0 if the product overflows. */
size_t skv_app_spec_npoints(const skv_app_spec *s);
uint64_t skv_app_spec_trials(const skv_app_spec *s);
/* The values of point `pt`: mixed radix over the lists, last parameter
 * fastest. */
void skv_app_spec_point(const skv_app_spec *s, size_t pt, skv_app_value vals[SKV_APP_NPARAMS]);
/* The values point `pt` runs with: its point values with the point's preset
 * applied. The engine, the CSV and the Markdown table read these. */
void skv_app_spec_values(const skv_app_spec *s, size_t pt, skv_app_value vals[SKV_APP_NPARAMS]);
/* Whether parameter id applies to the spec's experiment. */
int skv_app_spec_applies(const skv_app_spec *s, int id);
/* The flags that reproduce the spec (every applicable parameter). */
int skv_app_spec_flags(char **out, const skv_app_spec *s);

/* ----------------------------------------------------------------- engine */

/* What a merge returned, beyond its error: the empty-split semantics. */
typedef enum { SKV_APP_OUT_FINITE = 0, SKV_APP_OUT_NAN = 1, SKV_APP_OUT_INF = 2 } skv_app_out_state;
typedef enum { SKV_APP_LSE_FINITE = 0, SKV_APP_LSE_NEG_INF = 1, SKV_APP_LSE_POS_INF = 2, SKV_APP_LSE_NAN = 3 } skv_app_lse_state;
const char *skv_app_out_state_name(int s);
const char *skv_app_lse_state_name(int s);

typedef struct {
	size_t point;
	uint64_t trial;
	skv_errors err;
	double lse_err;
	double floor_err; /* norm_rel_err of the exact output rounded once to the output format */
	unsigned char out_state; /* skv_app_out_state of the whole output */
	unsigned char lse_state; /* skv_app_lse_state of the merged LSE (worst row) */
} skv_app_row;

typedef struct {
	size_t npoints, nrows;
	uint64_t trials;
	skv_app_row *rows; /* point-major, trial fastest */
	/* What the engine computed, for the tests of its sharing. */
	size_t n_instances;   /* random problems drawn */
	size_t n_truth_calls; /* skv_truth_range calls */
	size_t n_kernel_runs; /* skv_split_kernel calls */
	int threads;          /* OpenMP threads used (metadata only) */
	double wall_s;
} skv_app_result;

/* Seeds of trial t of a run with base seed `seed` (documented in engine.c). */
uint64_t skv_app_problem_seed(uint64_t seed, uint64_t trial);
uint64_t skv_app_layout_seed(uint64_t seed, uint64_t trial);
uint64_t skv_app_order_seed(uint64_t seed, uint64_t trial);

/* The peak memory (bytes) and CPU time (seconds, from fixed costs per key
 * measured on x86-64: an estimate within a factor of a few) of running
 * spec s on `threads` threads. SKV_ENOMEM. */
int skv_app_engine_estimate(double *bytes, double *cpu_s, const skv_app_spec *s, int threads);

/* Runs every point and trial of a checked spec. progress: a stream for the
 * progress line, or NULL for none. RUNTIME with a message on failure. */
int skv_app_engine_run(skv_app_result *r, const skv_app_spec *s, FILE *progress, skv_app_error *e);
void skv_app_result_free(skv_app_result *r);

/* ----------------------------------------------------------------- output */

/* Size and FNV-1a 64 checksum of a file (skv_csv_fnv1a64), as the .meta
 * records them. */
typedef struct {
	size_t bytes;
	uint64_t fnv;
} skv_app_file_sum;

int skv_app_write_csv(FILE *f, const skv_app_spec *s, const skv_app_result *r);
int skv_app_write_md(FILE *f, const skv_app_spec *s, const skv_app_result *r);
/* sums: the CSV's and the .md's (NULL: not recorded). */
int skv_app_write_meta(FILE *f, const skv_app_spec *s, const skv_app_result *r, const char *command,
		       const skv_app_file_sum *sums);
/* The run's seeds, the whole list, comma-separated. */
void skv_app_seed_list(FILE *f, const skv_app_spec *s);
/* Creates the folder (and its parents) if missing and checks that a file can
 * be created in it. RUNTIME with a message otherwise. */
int skv_app_out_prepare(const char *dir, skv_app_error *e);
/* Takes the folder's lock (DIR/.skv.lock, flock) for the rest of the
 * process, noting `command` as the holder, and removes the temporaries a
 * killed run left there; a folder locked by another process is refused
 * (RUNTIME, the message names the holder). Taking a held lock again is a
 * no-op. outdir.c states the rules. */
int skv_app_out_lock(const char *dir, const char *command, skv_app_error *e);
/* Flushes tmp[0..n) to disk and renames each to final[i], in order, with
 * signals blocked, then flushes the folder. RUNTIME with a message. */
int skv_app_publish(char *const *tmp, char *const *final, size_t n, skv_app_error *e);
/* A staged folder: created beside dir (.NAME.staging-XXXXXX), filled like
 * any output folder, then exchanged with dir in one rename; the old folder
 * is removed. Until then everything in it is temporary (removed on a
 * signal or on failure, by skv_app_stage_end). */
int skv_app_stage_begin(char **stage, const char *dir, skv_app_error *e);
int skv_app_stage_publish(const char *dir, skv_app_error *e);
void skv_app_stage_end(void);
/* Keeps path (dir: a folder) registered as temporary when it lies in the
 * staged folder. */
void skv_app_stage_track(const char *path, int dir);

/* ------------------------------------------------------------ temporaries */

/* Installs the handler that removes registered temporaries on SIGINT,
 * SIGTERM, SIGHUP and SIGPIPE (and at exit); tempfile.c explains it. */
void skv_app_temp_install(void);
/* Creates an empty hidden file next to final (".NAME.XXXXXX.tmp", mode
 * 0666 less the umask) and registers it; *path is malloc'd. */
int skv_app_temp_create(char **path, const char *final, skv_app_error *e);
/* Registers a path (dir: a folder) for removal; forgets one; forgets
 * every path under a folder; removes a file and forgets it. */
int skv_app_temp_add(const char *path, int dir);
void skv_app_temp_forget(const char *path);
void skv_app_temp_forget_under(const char *dir);
void skv_app_temp_discard(const char *path);
/* Writes DIR/EXPERIMENT.{csv,md,meta} through temporary names and renames
 * them into place only once all three are complete. */
int skv_app_write_outputs(const skv_app_spec *s, const skv_app_result *r, const char *command,
			  skv_app_error *e);

/* --------------------------------------------------------------- commands */

/* The whole program: argv as main receives it. Returns the exit status. */
int skv_app_main(int argc, char **argv);
/* Runs a checked spec whose --out is prepared and locked, writes its files
 * and prints the one-line summary; an exit status, with a message in e. */
int skv_app_execute(const skv_app_spec *s, const char *command, skv_app_error *e);
/* `skv suite FILE [--flags] [--out=DIR] [--report]` (argv after "suite"). */
int skv_app_suite(int argc, char **argv, const char *command);
/* Parses and checks a suite's text (modified in place: lines are cut at
 * their ends) with the command-line flags argv[0..argc) that follow the
 * file, running nothing; *nspecs gets the number of runs. An exit status
 * with a message in e. */
int skv_app_suite_parse(size_t *nspecs, const char *file, char *text, size_t len, int argc, char **argv,
			skv_app_error *e);
/* Prints e's message on stderr, frees it, returns st. */
int skv_app_fail(skv_app_error *e, int st);

#endif
