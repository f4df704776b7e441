/* grade.h - skv grade and skv export: a kernel's dumped tensors against the exact truth, the presets ranked by how well they reproduce them, and skv problems written out for a GPU. */
#ifndef CORE_GRADE_H
#define CORE_GRADE_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "io/io.h"
#include "io/tensors.h"
#include "skv.h"

/*
 * A dump is one decode step of attention: one query row per head.
 *   q            [H, d]        the queries (one row per query head)
 *   k, v         [Hkv, n, d]   keys and values; H is a multiple of Hkv and
 *                              query head h reads KV head h / (H / Hkv) (the
 *                              grouping of FlashAttention's and PyTorch's GQA)
 *   partial_out  [S, H, d]     each split's normalised output (FlashAttention's
 *                              out_accum layout, split first)
 *   partial_lse  [S, H]        each split's LSE
 *   out          [H, d]        the merged output
 *   lse          [H]           the merged LSE
 *   splits       [S + 1]       integer key boundaries 0 = b_0 <= ... <= b_S = n
 * With one head (H == Hkv == 1) the head axis may be left out. q, k, v are
 * required; of the rest, whatever is given is graded; partials need splits.
 */
enum { GT_Q, GT_K, GT_V, GT_PARTIAL_OUT, GT_PARTIAL_LSE, GT_OUT, GT_LSE, GT_SPLITS, GT_N };

/* "q", "k", "v", "partial_out", "partial_lse", "out", "lse", "splits". */
const char *grade_tensor_name(int id);
/* The id of a conventional name; -1 for anything else. */
int grade_tensor_find(const char *name);
/* 1 for the kernel's outputs (partial_out, partial_lse, out, lse): the
 * tensors a --prefix names. */
int grade_tensor_is_output(int id);

#define GRADE_BASE_AUTO (-1)

/* Where the tensors of a dump are, before anything is read. */
typedef struct {
	char *file[GT_N];          /* the .npy or .safetensors file of each; NULL: none */
	char *name[GT_N];          /* its name in a .safetensors file; NULL: the conventional name */
	unsigned char given[GT_N]; /* named explicitly (a flag or a manifest line): must exist */
	tensor_dtype raw;          /* integer .npy elements of raw's width hold raw's bit patterns */
	int base;                  /* GRADE_BASE_AUTO, SKV_BASE_E or SKV_BASE_2 */
	double scale;              /* the softmax scale; 0: 1/sqrt(d), as skv_problem_init sets it */
} grade_sources;

void grade_sources_init(grade_sources *s);
void grade_sources_free(grade_sources *s);
/* Every tensor of a dump path: a folder (each NAME.npy that exists, the
 * outputs as PREFIX.NAME.npy when prefix is not NULL) or a .safetensors file
 * (the tensors NAME, the outputs PREFIX.NAME). SKV_EINVAL with a message for
 * a path that is neither; SKV_EIO for one that cannot be examined. */
int grade_sources_dump(grade_sources *s, const char *path, const char *prefix, message *e);
/* Tensor id from "FILE" or "FILE:NAME" (NAME only after a .safetensors
 * FILE); a relative FILE is taken in folder dir when dir is not NULL. */
int grade_sources_set(grade_sources *s, int id, const char *value, const char *dir, message *e);

/* The manifest: lines "KEY = VALUE" ('#' starts a comment line, blank lines
 * are skipped, blanks around KEY and VALUE are dropped). KEY is a tensor's
 * conventional name (VALUE: FILE or FILE:NAME, relative to the manifest's
 * folder), raw (bf16, e4m3, e5m2, f16), lse-base (e, 2, auto) or scale (a
 * number, decimal or C hexadecimal); each at most once. SKV_EINVAL with
 * "LABEL:LINE: problem" for anything else (an unknown key, a repeated one,
 * a line without '=', an empty value, a NUL byte, a line over 4096 bytes);
 * s is then unchanged. dir: the folder relative paths are taken in (NULL:
 * as given). */
int grade_manifest_parse(grade_sources *s, const char *text, size_t len, const char *label,
			 const char *dir, message *e);
/* The same from a file (at most 1 MiB). */
int grade_manifest_read(grade_sources *s, const char *path, message *e);
/* The manifest's raw, lse-base or scale (key) set to value, read as a
 * manifest line reads it (blanks around it trimmed); SKV_EINVAL, s
 * unchanged, for another key or a value the key does not take. */
int grade_sources_option(grade_sources *s, const char *key, const char *value);

/* A dump read and checked: every value as stored, decoded exactly. */
typedef struct {
	size_t H, Hkv, n, d, S;           /* S: 0 without splits */
	double *q, *k, *v;                /* [H][d], [Hkv][n][d], [Hkv][n][d] */
	double *po, *pl, *out, *lse;      /* [S][H][d], [S][H], [H][d], [H]; NULL when absent */
	size_t *bounds;                   /* [S + 1]; NULL when absent */
	skv_format fmt[GT_N];             /* each floating tensor's format (its ulp unit) */
	char *where[GT_N];                /* "FILE" or "FILE:NAME" of each tensor read; NULL absent */
	double scale;                     /* the softmax scale */
	int base;                         /* as the sources asked: GRADE_BASE_AUTO or a base */
} grade_dump;

/* Reads and checks every tensor: shapes against each other (the message
 * shows the shape found and the one expected), q, k, v finite, the splits
 * integers, nondecreasing from 0 to n, a floating format for the others.
 * SKV_EINVAL (exit 2) with one line "FILE: tensor NAME: problem"; SKV_EIO for
 * a file that cannot be read; SKV_ENOMEM. Nothing is kept on error. */
int grade_load(grade_dump *dp, const grade_sources *s, message *e);
void grade_dump_free(grade_dump *dp);
/* Query head h of the dump as a one-row problem (pointers into dp: never
 * skv_problem_free it). */
skv_problem grade_head_problem(const grade_dump *dp, size_t h);
/* The tensor dtype skv writes a format's values in (TENSOR_NONE for the
 * scale-only formats), and the format of a floating dtype (-1 otherwise). */
tensor_dtype grade_format_dtype(skv_format f);
int grade_dtype_format(tensor_dtype dt);

/* -------------------------------------------------------------- grading */

/* What a row grades. */
enum { GI_OUT, GI_LSE, GI_MERGE_OUT, GI_MERGE_LSE, GI_PARTIAL_OUT, GI_PARTIAL_LSE, GI_N };
/* "out", "lse", "merge_out", "merge_lse", "partial_out", "partial_lse". */
const char *grade_item_name(int item);

#define GRADE_NO_SPLIT SIZE_MAX

typedef struct {
	int item;
	size_t head, split; /* split: GRADE_NO_SPLIT for the merged items */
	size_t lo, hi;      /* the keys the truth covers: [lo, hi) */
	skv_format fmt;     /* the graded tensor's format: ulps and floor are its */
	int defined;        /* 0: no truth (a merge of NaN or infinite partials); errors NaN */
	skv_errors err, floor;
	size_t n, nnan, npinf, nninf; /* elements and the non-finite ones */
} grade_row;

typedef struct {
	grade_row *rows; /* by head, then item, then split */
	size_t nrows;
	int base;        /* SKV_BASE_E or SKV_BASE_2: the LSEs' base (E when there is none) */
	int detected;    /* 1: detected; 0: given (or no LSE to detect it from) */
	size_t nlse;     /* the finite LSEs the detection compared */
	double dev_e, dev_2, sep; /* max |LSE - exact| under each base; the bases' separation */
} grade_result;

/* Grades the dump: the exact truth of the whole context and of every split
 * from the inputs as stored (skv_truth_range, certified 2^-100), the errors
 * of each tensor given, and the merge alone. The LSE base is dp->base, or
 * detected when GRADE_BASE_AUTO (grade.c states the rule); an ambiguous dump
 * is refused (SKV_EINVAL, the message gives both distances). Deterministic
 * for any thread count. */
int grade_run(grade_result *r, const grade_dump *dp, message *e);
void grade_result_free(grade_result *r);

/* LSE x in base `from` as one in base `to` (SKV_BASE_E or SKV_BASE_2), in
 * double: x RN(log2 e) or x RN(ln 2); x itself when the bases agree. */
double grade_lse_convert(double x, int from, int to);

/* ---------------------------------------------------------- emulations */

typedef struct {
	int own_math;       /* 0: correctly rounded math; 1: the preset's own math mode */
	uint64_t math_seed; /* its seed */
	size_t block;       /* keys per online-softmax block (0: a split is one block);
	                     * presets with a narrow accumulator run one key per block */
	int gpu;            /* skv_gpu of q.k and P.V in the presets on tensor cores
	                     * (SKV_GPU_IEEE, 0: IEEE fp32; the others run IEEE) */
} grade_emu_opts;

/* A preset run on every head of a dump's problem. */
typedef struct {
	size_t H, S, d;
	skv_config cfg;
	skv_merge_spec merge;
	double *po, *pl; /* [S][H][d], [S][H]: stored partials; LSEs in the preset's written base */
	double *out;     /* [H][d] in cfg.output */
	double *lse;     /* [H] merged LSE, natural */
	int base;        /* SKV_BASE_2 for base-2 presets, else SKV_BASE_E: the partial LSEs' base */
} grade_emu;

/* Runs preset p (resolved in full for dp's input format and head_dim) on
 * every head over bounds[0..S]. SKV_EINVAL with a message when the preset
 * does not take this problem; SKV_ENOMEM. */
int grade_emulate(grade_emu *em, const grade_dump *dp, const size_t *bounds, size_t S, const skv_preset *p,
		  skv_format input, const grade_emu_opts *o, message *e);
void grade_emu_free(grade_emu *em);

/* The quantiles identify reports of the ulp distances. */
#define GRADE_NQ 4 /* median, 90th and 99th percentiles, maximum */

typedef struct {
	size_t preset;  /* skv_preset_at index */
	int gpu;        /* the skv_gpu its tensor cores ran (SKV_GPU_IEEE: IEEE) */
	size_t S;       /* splits it ran */
	int status;     /* SKV_OK, or why it did not run (why) */
	char why[200];
	size_t same[GT_N], total[GT_N]; /* bit-identical elements of each output compared */
	size_t same_all, total_all;
	double ulp[GRADE_NQ];  /* quantiles of |emulated - dump| / ulp(dump) over every element */
	double normwise;       /* ||emulated - dump|| / ||dump|| of out (of partial_out without out) */
	int tie;               /* 1: ranks equal to the one above on every key */
} grade_cand;

typedef struct {
	const grade_emu_opts *emu;
	const size_t *counts; /* without splits in the dump: the split counts tried (NULL: 1) */
	size_t ncounts;
	layout_id layout;     /* and their layout: even or fa2 (blocks of `block` keys) */
	const unsigned char *use; /* [SKV_NPRESETS]: the presets tried (NULL: all) */
	unsigned gpus;        /* bit g: the presets on tensor cores also run with GPU
	                       * model g (skv_gpu) where its unit takes the input */
} grade_id_opts;

typedef struct {
	grade_cand *c; /* best first */
	size_t n;
	int base;      /* the base the LSEs were compared in */
	skv_format input;
} grade_ranking;

/* Runs every preset asked on the dump's inputs and split boundaries (or
 * each count of o->counts) and ranks them by agreement with the dump's
 * outputs: most bit-identical elements, then the smaller median, 90th
 * percentile and largest ulp distance, then the smaller normwise distance,
 * then the presets' order. The outputs compared are those the dump has;
 * LSEs in base `base` (a preset writing the other base is converted by
 * grade_lse_convert, so it matches none of them bit for bit). SKV_EINVAL
 * when q, k and v are not of one format, or the dump has no output. */
int grade_identify(grade_ranking *r, const grade_dump *dp, int base, const grade_id_opts *o, message *e);
void grade_ranking_free(grade_ranking *r);

/* -------------------------------------------------------------- export */

typedef struct {
	size_t ctx, head_dim, heads, kv_heads;
	skv_dist dist;
	double score_scale;
	skv_format input;
	uint64_t seed, trial;
	size_t splits, block, split_size;
	layout_id layout;
	unsigned char use[SKV_NPRESETS]; /* the presets written */
	int all;                          /* --preset=all: presets that do not take the problem are skipped */
	grade_emu_opts emu;
	const char *out;     /* a .safetensors file, or a folder of .npy files */
	const char *command; /* recorded in the metadata */
} export_opts;

/* What export wrote, for its one-line summary. */
typedef struct {
	size_t npresets, nskipped, ntensors;
	char skipped[512]; /* the presets left out and why */
} export_summary;

/* Draws the problem as skv run draws trial `trial` of `seed` (KV head 0's
 * problem is skv_problem_init with seed_problem(seed, trial) and heads /
 * kv_heads query rows; KV head g > 0 draws from skv_seed_mix of that seed
 * and 16 + g), cuts it by the layout (seed_layout(seed, trial) for random),
 * runs each preset and writes everything, all or nothing (grade_export.c
 * lists the tensors and the metadata). SKV_EINVAL with a message for a bad
 * combination; SKV_ERANGE when a drawn value overflows the input format;
 * SKV_EIO, SKV_ENOMEM. */
int export_run(export_summary *sum, const export_opts *o, message *e);

#endif
