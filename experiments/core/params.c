/* params.c - the parameter table of the skv program and the parsing and printing of parameter values. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

/* Adapters from the library's typed parse and name functions to the table's
 * unsigned ones, so the library stays the one source of truth for names. */
#define ENUM_ADAPTERS(tag, type, parsefn, namefn)                                         \
	static int tag##_parse(unsigned *v, const char *s)                                        \
	{                                                                                         \
		type x;                                                                           \
		int st = parsefn(&x, s);                                                          \
		if (st == SKV_OK)                                                                 \
			*v = (unsigned)x;                                                         \
		return st;                                                                        \
	}                                                                                         \
	static const char *tag##_name(unsigned v) { return namefn((type)v); }

/* Stage formats: the value formats of the library's table. A scale-only
 * format (e8m0, ue4m3) is no stage's format: it is neither listed nor
 * parsed here. */
static int format_parse(unsigned *v, const char *s)
{
	skv_format x;
	if (skv_format_parse(&x, s) != SKV_OK || skv_format_is_scale(x))
		return SKV_EINVAL;
	*v = (unsigned)x;
	return SKV_OK;
}
static const char *format_name(unsigned v) { return skv_format_is_scale((skv_format)v) ? NULL : skv_format_name((skv_format)v); }
ENUM_ADAPTERS(dist, skv_dist, skv_dist_parse, skv_dist_name)
ENUM_ADAPTERS(merge, skv_merge, skv_merge_parse, skv_merge_name)
ENUM_ADAPTERS(order, skv_order, skv_order_parse, skv_order_name)
ENUM_ADAPTERS(empty, skv_empty, skv_empty_parse, skv_empty_name)
ENUM_ADAPTERS(base, skv_lse_base, skv_lse_base_parse, skv_lse_base_name)
ENUM_ADAPTERS(blocks, skv_blocks, skv_blocks_parse, skv_blocks_name)
ENUM_ADAPTERS(formula, skv_formula, skv_formula_parse, skv_formula_name)
ENUM_ADAPTERS(norm, skv_norm, skv_norm_parse, skv_norm_name)
ENUM_ADAPTERS(gpu, skv_gpu, skv_gpu_parse, skv_gpu_name)

/* The accumulator: 0 is "compute" (the compute format), SKV_ACC(f) a value
 * format f. */
static const char *acc_name(unsigned v) { return v == 0 ? "compute" : format_name(v - 1); }

static int acc_parse(unsigned *v, const char *s)
{
	unsigned f;
	if (strcmp(s, "compute") == 0) {
		*v = 0;
		return SKV_OK;
	}
	if (format_parse(&f, s) != SKV_OK)
		return SKV_EINVAL;
	*v = (unsigned)SKV_ACC((skv_format)f);
	return SKV_OK;
}

/* The KV cache: 0 is "none" (K and V as the input format holds them),
 * SKV_KV(f) a value format f. */
static const char *kv_cache_name(unsigned v) { return v == 0 ? "none" : format_name(v - 1); }

static int kv_cache_parse(unsigned *v, const char *s)
{
	unsigned f;
	if (strcmp(s, "none") == 0) {
		*v = 0;
		return SKV_OK;
	}
	if (format_parse(&f, s) != SKV_OK)
		return SKV_EINVAL;
	*v = (unsigned)SKV_KV((skv_format)f);
	return SKV_OK;
}
ENUM_ADAPTERS(kv_scale, skv_kv_scale, skv_kv_scale_parse, skv_kv_scale_name)
ENUM_ADAPTERS(kv_deq, skv_kv_deq, skv_kv_deq_parse, skv_kv_deq_name)

/* The math mode, and "own": the preset's (MATH_OWN). */
static const char *math_name(unsigned v) { return v == MATH_OWN ? "own" : skv_math_name((skv_math)v); }

static int math_parse(unsigned *v, const char *s)
{
	skv_math m;
	if (strcmp(s, "own") == 0) {
		*v = MATH_OWN;
		return SKV_OK;
	}
	if (skv_math_parse(&m, s) != SKV_OK)
		return SKV_EINVAL;
	*v = (unsigned)m;
	return SKV_OK;
}

/* The program's own enumerations: one table of names each. */
static const char *const layout_names[NLAYOUTS] = {"even", "random", "skewed", "holes", "last-empty", "all-empty",
						   "fa2",  "fixed",  "system"};

/* Systems come from the library's heuristics: value 0 is "preset" (the
 * preset's system), value i + 1 system i. */
static const char *system_name(unsigned v) { return v == 0 ? "preset" : skv_heur_name((skv_heur_system)(v - 1)); }

static int system_parse(unsigned *v, const char *s)
{
	skv_heur_system x;
	if (strcmp(s, "preset") == 0) {
		*v = 0;
		return SKV_OK;
	}
	if (skv_heur_parse(&x, s) != SKV_OK)
		return SKV_EINVAL;
	*v = (unsigned)x + 1;
	return SKV_OK;
}

/* Presets come from the library: value 0 is "none", value i + 1 preset i. */
static const char *preset_name(unsigned v)
{
	const skv_preset *p = v ? skv_preset_at(v - 1) : NULL;
	return v == 0 ? "none" : p ? p->name : NULL;
}

static int preset_parse(unsigned *v, const char *s)
{
	if (strcmp(s, "none") == 0) {
		*v = 0;
		return SKV_OK;
	}
	for (size_t i = 0; i < skv_preset_count(); i++)
		if (strcmp(s, skv_preset_at(i)->name) == 0) {
			*v = (unsigned)i + 1;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

static int table_parse(unsigned *v, const char *s, const char *const *tab, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(s, tab[i]) == 0) {
			*v = i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

#define TABLE_ENUM(tag, tab)                                                              \
	static int tag##_parse(unsigned *v, const char *s)                                        \
	{                                                                                         \
		return table_parse(v, s, tab, sizeof tab / sizeof tab[0]);                        \
	}                                                                                         \
	static const char *tag##_name(unsigned v) { return v < sizeof tab / sizeof tab[0] ? tab[v] : NULL; }

TABLE_ENUM(layout, layout_names)

static const param_enum en_format = {"format", SKV_NFORMATS, format_name, format_parse};
static const param_enum en_dist = {"distribution", SKV_NDISTS, dist_name, dist_parse};
static const param_enum en_merge = {"merge", SKV_NMERGES, merge_name, merge_parse};
static const param_enum en_order = {"order", SKV_NORDERS, order_name, order_parse};
static const param_enum en_empty = {"empty-split mode", SKV_NEMPTY, empty_name, empty_parse};
/* The count is a bound, not the presets' number: a value past the last
 * preset has no name (preset_name gives NULL), so a new preset is a row of
 * lib/preset.c and nothing here. */
#define PRESET_VALUES 1024u
static const param_enum en_preset = {"preset", PRESET_VALUES, preset_name, preset_parse};
static const param_enum en_base = {"LSE base", SKV_NBASES, base_name, base_parse};
static const param_enum en_blocks = {"block order", SKV_NBLOCKS, blocks_name, blocks_parse};
static const param_enum en_acc = {"accumulator", SKV_NFORMATS + 1, acc_name, acc_parse};
static const param_enum en_formula = {"formula", SKV_NFORMULAS, formula_name, formula_parse};
static const param_enum en_kv_cache = {"cache format", SKV_NFORMATS + 1, kv_cache_name, kv_cache_parse};
static const param_enum en_kv_scale = {"scale granularity", SKV_NKVSCALES, kv_scale_name, kv_scale_parse};
static const param_enum en_kv_deq = {"dequantisation placement", SKV_NKVDEQS, kv_deq_name, kv_deq_parse};
static const param_enum en_math = {"math mode", SKV_NMATHS + 1, math_name, math_parse};
static const param_enum en_norm = {"normalisation", SKV_NNORMS, norm_name, norm_parse};
static const param_enum en_gpu = {"GPU", SKV_NGPUS, gpu_name, gpu_parse};
static const param_enum en_layout = {"layout", NLAYOUTS, layout_name, layout_parse};
static const param_enum en_system = {"system", SKV_HEUR_NSYSTEMS + 1, system_name, system_parse};

/* recommend's own enumerations */
static const char *const metric_names[] = {"norm_rel_err", "max_abs_err", "ulp_err"};
static const char *const candidate_names[] = {"pow2", "all", "list"};
static const char *const out_format_names[] = {"text", "csv", "json"};
TABLE_ENUM(metric, metric_names)
TABLE_ENUM(candidates, candidate_names)
TABLE_ENUM(out_format, out_format_names)
static const param_enum en_metric = {"metric", 3, metric_name, metric_parse};
static const param_enum en_candidates = {"candidate set", 3, candidates_name, candidates_parse};
static const param_enum en_out_format = {"output format", 3, out_format_name, out_format_parse};

#define INT(lo, hi) PT_INT, NULL, (lo), (hi), 0, 0, 0, 0
#define REAL(lo, hi, open) PT_REAL, NULL, 0, 0, (lo), (hi), (open), 0
#define REAL_OR_MULTIPLE(lo, hi, open) PT_REAL, NULL, 0, 0, (lo), (hi), (open), 1
#define ENUM(en) PT_ENUM, &(en), 0, 0, 0, 0, 0, 0
#define SPLIT (KIND_SPLIT | KIND_REC)
#define ONLINE KIND_ONLINE
#define ALL KIND_ALL
#define REC KIND_REC
#define PROBLEM STAGE_PROBLEM
#define KERNEL STAGE_KERNEL
#define STORE STAGE_STORE
#define MERGE STAGE_MERGE
#define ROW STAGE_ROW
#define NONE STAGE_NONE

/* The one parameter table: flag, CSV column, type and range, the kinds it
 * applies to, the stage it changes, single, default, help. The ranges keep
 * every size within what the sweep can allocate and index; lse-offset stays
 * where fp64 still resolves a score (1e9 has spacing 1.2e-7). A preset is
 * resolved into the fields it fixes before anything is computed, so its own
 * stage is the row's. */
const param_def params[NPARAMS] = {
	[P_PRESET] = {"preset", "preset", ENUM(en_preset), ALL, ROW, 0, "none",
		      "production-kernel profile (skv list shows each): sets every stage format, the LSE "
		      "base, merge, order, empty-split mode; explicit flags override single fields"},
	[P_CTX] = {"ctx", "ctx", INT(1, 1u << 24), ALL, PROBLEM, 0, "4096", "keys in the context"},
	[P_HEAD_DIM] = {"head-dim", "head_dim", INT(1, 4096), ALL, PROBLEM, 0, "128", "head dimension d"},
	[P_DIST] = {"dist", "dist", ENUM(en_dist), ALL, PROBLEM, 0, "gaussian",
		    "score distribution (sink: key 0 carries about 87% of the mass; ramp: a recency "
		    "bias of 8 nats across the context, the running max moves at every block)"},
	[P_SCORE_SCALE] = {"score-scale", "score_scale", REAL(0, 1e6, 1), ALL, PROBLEM, 0, "0.5",
			   "standard deviation of q (K and V are N(0, 1))"},
	[P_INPUT] = {"input", "input", ENUM(en_format), ALL, PROBLEM, 0, "fp32",
		     "format of q, K, V (the truth sees the same rounded values)"},
	[P_KV_CACHE] = {"kv-cache", "kv_cache", ENUM(en_kv_cache), SPLIT, PROBLEM, 0, "none",
			 "format K and V are stored in (none: as the input holds them); the metrics are against the "
			 "truth of the stored cache, the orig_* columns against the original K and V"},
	[P_KV_SCALE] = {"kv-scale", "kv_scale", ENUM(en_kv_scale), SPLIT, PROBLEM, 0, "none",
			 "the cache's scales: none, tensor, head (one head: as tensor), token, mx (32 elements, e8m0), "
			 "nvfp4 (16 elements, ue4m3 over an fp32 tensor scale)"},
	[P_KV_DEQ] = {"kv-deq", "kv_deq", ENUM(en_kv_deq), SPLIT, PROBLEM, 0, "values",
		      "where the kernel applies the scales: values (dequantized to the input format before the dot, "
		      "vLLM) or scores (K's scale in the softmax scale, V's on the output, FlashInfer)"},
	[P_KV_SCALE_VALUE] = {"kv-scale-value", "kv_scale_value", REAL(0, 1e30, 0), SPLIT, PROBLEM, 0, "0",
			      "the given tensor scale of K and V (0: amax / fmax of each tensor)"},
	[P_LSE_OFFSET] = {"lse-offset", "lse_offset", REAL(-1e9, 1e9, 0), ALL, KERNEL, 0, "0",
			  "constant added to every scaled score (natural-log units): moves the "
			  "LSEs, not the exact output"},
	[P_SPLITS] = {"splits", "splits", INT(1, 1u << 20), SPLIT, KERNEL, 0, "1",
		      "number of KV splits (at most ctx)"},
	[P_LAYOUT] = {"layout", "layout", ENUM(en_layout), SPLIT, KERNEL, 0, "even",
		      "split boundaries: even; random (cuts on the even grid, some splits "
		      "empty); skewed (sizes halve: n/2, n/4, ...); holes (every odd split empty); "
		      "last-empty (S-1 even splits, the last empty); all-empty (every key masked: "
		      "all splits empty, the exact output is 0 with LSE -inf); fa2 (FlashAttention 2's: "
		      "ceil(blocks / S) blocks of --block-size keys per split, trailing splits empty when "
		      "S is ineligible); fixed (splits of --split-size keys, skv recommend); system (the layout "
		      "--system makes of S splits, skv recommend)"},
	[P_BLOCK_SIZE] = {"block-size", "block_size", INT(0, 1u << 24), ALL, KERNEL, 0, "128",
			  "keys per online-softmax block (0: one block per split or row)"},
	[P_CAUSAL] = {"causal", "causal", INT(0, 1), ONLINE, PROBLEM, 0, "0",
		      "1: ctx query rows under the causal mask; 0: one decode row"},
	[P_COMPUTE] = {"compute", "compute", ENUM(en_format), ALL, KERNEL, 0, "fp32",
		       "arithmetic inside a split: scores, max, exp, sums, P.V"},
	[P_P] = {"p", "p", ENUM(en_format), ALL, KERNEL, 0, "fp32", "format of the probabilities fed to P.V"},
	[P_LSE_BASE] = {"lse-base", "lse_base", ENUM(en_base), ALL, KERNEL, 0, "e",
			"LSE base: e (exp, log), 2 (scores pre-scaled by log2 e in compute, exp2, log2 "
			"throughout), e2 (base-2 arithmetic inside the split, natural LSE written and "
			"merged, as FlashAttention does)"},
	[P_PARTIAL] = {"partial", "partial", ENUM(en_format), SPLIT, STORE, 0, "fp32",
		       "storage of each split's normalized output"},
	[P_LSE] = {"lse", "lse", ENUM(en_format), SPLIT, STORE, 0, "fp32", "storage of each split's LSE"},
	[P_COMBINE] = {"combine", "combine", ENUM(en_format), SPLIT, MERGE, 0, "fp32", "arithmetic of the merge"},
	[P_OUTPUT] = {"output", "output", ENUM(en_format), ALL, ROW, 0, "fp32",
		      "format of the result (and unit of ulp_err)"},
	[P_BLOCKS] = {"blocks", "blocks", ENUM(en_blocks), ALL, KERNEL, 0, "forward",
		      "order of the key blocks inside a split: forward, or reverse (FlashAttention 2 and 3)"},
	[P_ACC] = {"acc", "acc", ENUM(en_acc), ALL, KERNEL, 0, "compute",
		   "format of the P.V accumulator: compute (the compute format), or a format it is rounded "
		   "to after every update (llama.cpp CPU: fp16)"},
	[P_FORMULA] = {"formula", "formula", ENUM(en_formula), ALL, KERNEL, 0, "skv",
		       "score, normalisation and LSE formulas as each system writes them (skv.h lists them)"},
	[P_LANES] = {"lanes", "lanes", INT(0, 1024), ALL, KERNEL, 0, "0",
		     "exp-sum lanes of a split (0 or 1: one sequential sum; a power of two: strided lanes "
		     "then a butterfly)"},
	[P_LANE_KEYS] = {"lane-keys", "lane_keys", INT(0, 1024), ALL, KERNEL, 0, "0",
			 "consecutive keys per lane (0: 1)"},
	[P_MATH] = {"math", "math", ENUM(en_math), ALL, KERNEL, 0, "own",
		    "fp32 exp, log, division: exact (correctly rounded), fast or cuda (the documented error "
		    "bounds of the approximate instructions, drawn per trial from the seed: a bound model, not "
		    "the hardware's bits), or own (the preset's; exact without one). An explicit mode holds over "
		    "the preset's"},
	[P_GPU] = {"gpu", "gpu", ENUM(en_gpu), ALL, KERNEL, 0, "ieee",
		   "q.k and P.V: ieee (fma chains in compute) or a GPU's tensor cores, as its kernels issue the MMA "
		   "instructions (a bit-accurate model of v100, a100 (a2, a30), ada (l40s), h100 (h200), b200; "
		   "the input format must be one its tensor cores take, P in it, the accumulator fp32 or fp16). "
		   "A preset whose kernels use CUDA cores runs ieee whatever is asked (skv list shows "
		   "tensor-cores per preset)"},
	[P_MERGE] = {"merge", "merge", ENUM(en_merge), SPLIT, MERGE, 0, "onepass",
		     "merge rule (mean and sum are wrong on purpose)"},
	[P_ORDER] = {"order", "order", ENUM(en_order), SPLIT, MERGE, 0, "seq",
		     "reduction order of the merge (random: a new permutation per trial)"},
	[P_EMPTY] = {"empty", "empty", ENUM(en_empty), SPLIT, MERGE, 0, "guard", "what the merge does with empty splits"},
	[P_MERGE_THREADS] = {"merge-threads", "merge_threads", INT(1, 1024), SPLIT, MERGE, 0, "1",
			     "threads of the strided order"},
	[P_ROUND_STATES] = {"round-states", "round_states", INT(0, 1), SPLIT, MERGE, 0, "0",
			    "1: per-thread merge states rounded to the input format (FlashInfer's "
			    "shared-memory stage)"},
	[P_NORM] = {"norm", "norm", ENUM(en_norm), SPLIT, MERGE, 0, "div",
		    "the merge's final normalisation: div, or rcp (a reciprocal then a product, FlashInfer)"},
	[P_TRIALS] = {"trials", "trials", INT(1, 1000000), ALL, ROW, 1, "5", "random instances per point"},
	[P_SEED] = {"seed", "seed", INT(0, UINT64_MAX), ALL, PROBLEM, 0, "1",
		    "base seed; trial t draws its problem from skv_seed_mix(seed, t)"},
	[P_THREADS] = {"threads", NULL, INT(0, 4096), ALL, NONE, 1, "0",
		       "OpenMP threads (0: the OpenMP default); never changes the results"},
	/* skv recommend's: the shape, the candidates and the choice. */
	[P_SPLIT_SIZE] = {"split-size", NULL, INT(0, 1u << 24), REC, KERNEL, 1, "0",
			  "keys per split of the fixed-size option (0: FA2's split size at batch 1)"},
	[P_BATCH] = {"batch", NULL, INT(1, 1u << 20), REC, NONE, 1, "1", "sequences decoded together"},
	[P_HEADS] = {"heads", NULL, INT(1, 1u << 16), REC, NONE, 1, "32", "query heads"},
	[P_KV_HEADS] = {"kv-heads", NULL, INT(0, 1u << 16), REC, NONE, 1, "0",
			"key/value heads, dividing --heads (0: as many as --heads)"},
	[P_SMS] = {"sms", NULL, INT(1, SKV_FA2_MAX_SMS / 2), REC, NONE, 1, "132",
		   "the GPU's SM count: A100 108, H100 SXM 132, L40S 142"},
	[P_METRIC] = {"metric", NULL, ENUM(en_metric), REC, NONE, 1, "norm_rel_err",
		      "what the tolerance bounds (ulp_err: in ulps of the output format)"},
	[P_TOL] = {"tol", NULL, REAL_OR_MULTIPLE(0, 1e300, 1), REC, NONE, 1, "2x",
		   "a count is within tolerance when the max of the metric over the trials is at most this: "
		   "a value in the metric's units, or Kx, K times the floor (the metric of the exact output "
		   "rounded once to the output format, its max over the trials)"},
	[P_CANDIDATES] = {"candidates", NULL, ENUM(en_candidates), REC, NONE, 1, "pow2",
			  "the counts measured: pow2 (1, 2, 4, ... up to --max-splits), all (every count up to "
			  "it) or list (--splits; given --splits implies it)"},
	[P_MAX_SPLITS] = {"max-splits", NULL, INT(1, 1024), REC, NONE, 1, "128",
			  "largest count considered and recommended"},
	[P_FORMAT] = {"format", NULL, ENUM(en_out_format), REC, NONE, 1, "text", "the report: text, csv or json"},
	[P_SYSTEM] = {"system", NULL, ENUM(en_system), REC, KERNEL, 1, "preset",
		      "whose split-count heuristic is reproduced and whose layout --layout=system cuts: the preset's "
		      "system (FA2's for a preset without one), or one named"},
	[P_PAGE_SIZE] = {"page-size", NULL, INT(1, 1u << 16), REC, KERNEL, 1, "16",
			 "tokens per KV-cache page (flashinfer: its chunks are whole pages)"},
	[P_BLOCKS_PER_SM] = {"blocks-per-sm", NULL, INT(1, 1024), REC, NONE, 1, "1",
			     "flashinfer, llamacpp-cuda: thread blocks of the split kernel per SM, the answer of "
			     "cudaOccupancyMaxActiveBlocksPerMultiprocessor the system asks at run time"},
	[P_KV_SPLITS] = {"kv-splits", NULL, INT(0, 1024), REC, NONE, 1, "0",
			 "sglang: --triton-attention-num-kv-splits, the cap of its dynamic count (0: its default, 8)"},
	[P_DETERMINISTIC] = {"deterministic", NULL, INT(0, 1), REC, NONE, 1, "0",
			     "sglang: 1 is --enable-deterministic-inference (splits of 256 keys)"},
};

/* Parameters that matter only through another: id is inert while
 * parameter `on` holds the value `at` (as its CSV column writes it).
 * Without a KV cache no scale, placement or given scale is read (measure.c:
 * has_kv); with one exp-sum (lanes 0 or 1) no lane takes keys (lib/scan.c,
 * sum_add). A chart's fixed-parameter line leaves them out. */
static const struct {
	int id, on;
	const char *at;
} inert[] = {
	{P_KV_SCALE, P_KV_CACHE, "none"}, {P_KV_DEQ, P_KV_CACHE, "none"}, {P_KV_SCALE_VALUE, P_KV_CACHE, "none"},
	{P_LANE_KEYS, P_LANES, "0"},      {P_LANE_KEYS, P_LANES, "1"},
};

int param_inert(int id, const char *(*value)(int on, void *ctx), void *ctx)
{
	for (size_t i = 0; i < sizeof inert / sizeof inert[0]; i++) {
		const char *v = inert[i].id == id ? value(inert[i].on, ctx) : NULL;
		if (v && strcmp(v, inert[i].at) == 0)
			return 1;
	}
	return 0;
}

int param_by_column(const char *col)
{
	for (int i = 0; col && i < NPARAMS; i++)
		if (params[i].column && strcmp(params[i].column, col) == 0)
			return i;
	return -1;
}

int param_find(const char *flag)
{
	for (int i = 0; i < NPARAMS; i++)
		if (strcmp(params[i].flag, flag) == 0)
			return i;
	return -1;
}

void param_allowed(char *buf, size_t n, int id)
{
	const param_def *p = &params[id];
	size_t len = 0;
	buf[0] = '\0';
	switch (p->type) {
	case PT_ENUM:
		for (unsigned v = 0; v < p->en->count; v++) {
			if (!p->en->name(v))
				continue; /* not a value of this parameter (a scale format) */
			int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", p->en->name(v));
			if (w < 0 || (size_t)w >= n - len)
				return;
			len += (size_t)w;
		}
		break;
	case PT_INT:
		snprintf(buf, n, "an integer in [%" PRIu64 ", %" PRIu64 "]", p->imin, p->imax);
		break;
	case PT_REAL: {
		char lo[32], hi[32];
		format_double(lo, sizeof lo, p->rmin);
		format_double(hi, sizeof hi, p->rmax);
		snprintf(buf, n, "a number in %s%s, %s]%s", p->rmin_open ? "(" : "[", lo, hi,
			 p->multiple ? ", or a multiple Kx (K in the same range)" : "");
		break;
	}
	}
}

/*
 * Number syntax, one rule for every parameter: decimal, or C hexadecimal
 * with a 0x prefix (integers 0x1F; reals 0x1.8p3, which states a double
 * exactly). No sign for integers, no leading blanks, no inf or nan, nothing
 * after the number. A real literal is read as the double nearest to it (as
 * strtod rounds), also when that is subnormal or zero (1e-400 reads as 0),
 * and that double is what the range check sees.
 */
static int is_hex_prefix(const char *s) { return s[0] == '0' && (s[1] == 'x' || s[1] == 'X'); }

/* An integer token: digits only, or 0x and hex digits only (strtoull alone
 * would accept leading blanks and signs and wrap "-1" to 2^64 - 1). */
static int int_token(const char *s)
{
	const int hex = is_hex_prefix(s);
	const char *d = hex ? s + 2 : s;
	if (!*d)
		return 0;
	for (; *d; d++)
		if (!(hex ? (*d >= '0' && *d <= '9') || (*d >= 'a' && *d <= 'f') || (*d >= 'A' && *d <= 'F')
			  : *d >= '0' && *d <= '9'))
			return 0;
	return 1;
}

/* A real token: what strtod reads, minus blanks, inf and nan. */
static int real_token(const char *s)
{
	if (!*s || *s == ' ' || *s == '\t' || *s == '\n')
		return 0;
	for (const char *c = s; *c; c++)
		if (*c == 'n' || *c == 'N' || *c == 'i' || *c == 'I')
			return 0; /* inf, infinity, nan: never a parameter value */
	return 1;
}

static int malformed(message *e, const param_def *p, const char *s, const char *allowed)
{
	msg_set(e, "skv: malformed number '%s' for --%s (expected %s)", s, p->flag, allowed);
	return SKV_EINVAL;
}

static int out_of_range(message *e, const param_def *p, const char *s, const char *allowed)
{
	msg_set(e, "skv: --%s=%s is out of range (expected %s)", p->flag, s, allowed);
	return SKV_EINVAL;
}

int param_parse(param_value *v, int id, const char *s, message *e)
{
	const param_def *p = &params[id];
	char allowed[256];
	param_value x = {0, 0.0};
	param_allowed(allowed, sizeof allowed, id);
	switch (p->type) {
	case PT_ENUM: {
		unsigned u;
		if (p->en->parse(&u, s) != SKV_OK) {
			msg_set(e, "skv: unknown %s '%s' for --%s (expected %s)", p->en->what,
				 s, p->flag, allowed);
			return SKV_EINVAL;
		}
		x.u = u;
		break;
	}
	case PT_INT: {
		if (!int_token(s))
			return malformed(e, p, s, allowed);
		errno = 0;
		unsigned long long u = strtoull(s, NULL, is_hex_prefix(s) ? 16 : 10);
		if (errno == ERANGE || u < p->imin || u > p->imax)
			return out_of_range(e, p, s, allowed);
		x.u = (uint64_t)u;
		break;
	}
	case PT_REAL: {
		char *end;
		if (!real_token(s))
			return malformed(e, p, s, allowed);
		errno = 0;
		double r = strtod(s, &end);
		/* "2x": a multiple; hex reals (0x1p1x) are read whole by strtod
		 * first, so only a last 'x' after the number marks it */
		if (p->multiple && end != s && end[0] == 'x' && end[1] == '\0') {
			x.u = 1;
			end++;
		}
		if (end == s || *end)
			return malformed(e, p, s, allowed);
		/* ERANGE with a finite result is an underflow: r is the nearest
		 * double (0 or subnormal), kept; with an infinite one, overflow. */
		if (!isfinite(r) || r < p->rmin || r > p->rmax || (p->rmin_open && r == p->rmin))
			return out_of_range(e, p, s, allowed);
		x.r = r;
		break;
	}
	}
	*v = x;
	return SKV_OK;
}

void format_double(char *buf, size_t n, double x)
{
	if (isnan(x)) {
		snprintf(buf, n, "nan"); /* never glibc's "-nan" */
		return;
	}
	if (isinf(x)) {
		snprintf(buf, n, x < 0 ? "-inf" : "inf");
		return;
	}
	/* An integer below 2^53 prints as one ("10", not "1e+01"): exact. */
	if (x == floor(x) && fabs(x) < 0x1p53) {
		snprintf(buf, n, "%.0f", x);
		return;
	}
	/* 17 significant digits always round-trip a double; the first shorter
	 * precision that reads back to the same value gives the shortest form. */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

void param_format(char *buf, size_t n, int id, param_value v)
{
	const param_def *p = &params[id];
	switch (p->type) {
	case PT_ENUM:
		snprintf(buf, n, "%s", p->en->name((unsigned)v.u));
		break;
	case PT_INT:
		snprintf(buf, n, "%" PRIu64, v.u);
		break;
	case PT_REAL:
		format_double(buf, n, v.r);
		if (p->multiple && v.u && strlen(buf) + 1 < n)
			strcat(buf, "x");
		break;
	}
}
