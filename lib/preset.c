/* preset.c - precision profiles of production attention kernels (facts in shared/notes/systems.md). */
#include <string.h>
#include "skv.h"

#define F16 SKV_FP16
#define B16 SKV_BF16
#define F32 SKV_FP32
#define F64 SKV_FP64

/* Field order: config {input, compute, p, partial, lse, combine, output,
 * base}; merge {merge, order, seed, threads, empty, round_states}. */
static const skv_preset presets[] = {
	{"fa2",
	 "FlashAttention 2: bf16 in (fp16 selectable), fp32 scores and accumulation, P rounded to the input "
	 "type before P.V, natural LSE, fp32 partials and LSE, fp32 one-pass combine in split order, output in "
	 "the input type; the split takes exp2 of scores pre-scaled by log2 e and writes a natural LSE "
	 "(lse-base e2); an all-empty row gets LSE +inf",
	 {B16, F32, B16, F32, F32, F32, B16, SKV_BASE_E2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_FA2, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_P | SKV_FOLLOW_OUTPUT},
	{"fa3",
	 "FlashAttention 3: as fa2, but empty splits leave their partial rows unwritten (NaN here), the combine "
	 "skips splits whose weight is not > 0 and stops at the last finite LSE; all-empty LSE -inf",
	 {B16, F32, B16, F32, F32, F32, B16, SKV_BASE_E2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_FA3, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_P | SKV_FOLLOW_OUTPUT},
	{"flashinfer",
	 "FlashInfer: base-2 LSE, P kept in fp32 (o += p v on CUDA cores), partials stored in the output type, "
	 "fp32 LSE and combine, pairwise state merge: 8 strided per-thread subsets (bdy = 8 for head_dim 128) "
	 "merged in order, normalized and rounded to the input type in shared memory, then merged again; no "
	 "guard for two empty states (issue 4051: NaN)",
	 {B16, F32, F32, B16, F32, F32, B16, SKV_BASE_2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_PAIRWISE, SKV_ORDER_STRIDED, 0, 8, SKV_EMPTY_NONE, 1, SKV_NORM_DIV},
	 SKV_FOLLOW_OUTPUT | SKV_FOLLOW_PARTIAL},
	{"tilelang",
	 "TileLang flash-decoding example: fp16 in, base-2 LSE, P copied to fp16 before its GEMM, partials and "
	 "LSE in fp16, fp32 two-pass combine (global max, log-sum, sequential weighted sum), no empty guard",
	 {F16, F32, F16, F16, F16, F32, F16, SKV_BASE_2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_NONE, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_P | SKV_FOLLOW_OUTPUT},
	{"xformers",
	 "xformers split-K: natural LSE from exp2 arithmetic inside the split (lse-base e2), P cast to the value "
	 "type before tl.dot (unverified in the notes: assumed), fp32 partials, LSE in fp64, fp32 combine with a "
	 "tl.sum tree reduction; l == 0 gives 0",
	 {B16, F32, B16, F32, F64, F32, B16, SKV_BASE_E2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_ONEPASS, SKV_ORDER_TREE, 0, 1, SKV_EMPTY_GUARD, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_P | SKV_FOLLOW_OUTPUT},
	{"sglang",
	 "SGLang triton decode: natural LSE, P kept in fp32 (MHA kernel), fp32 partials and LSE, sequential "
	 "running merge over splits in fp32; empty ranges skipped by a range check",
	 {B16, F32, F32, F32, F32, F32, B16, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_PAIRWISE, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_GUARD, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_OUTPUT},
	{"flex",
	 "PyTorch FlexAttention decode: base 2, each split's max and sum stored apart in fp32 with an "
	 "unnormalized fp32 accumulator; global max, rescaled sums, one division; P cast to the input type "
	 "before tl.dot (assumed); rows with max -inf masked",
	 {B16, F32, B16, F32, F32, F32, B16, SKV_BASE_2, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_FLEX, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_GUARD, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_P | SKV_FOLLOW_OUTPUT},
	{"exact-fp64", "every stage fp64 with skv's guarded one-pass merge: the accuracy ceiling",
	 {F64, F64, F64, F64, F64, F64, F64, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_GUARD, 0, SKV_NORM_DIV},
	 SKV_FOLLOW_P | SKV_FOLLOW_OUTPUT},
	{"naive-fp16", "every stage fp16, one-pass merge, no empty guard: the floor",
	 {F16, F16, F16, F16, F16, F16, F16, SKV_BASE_E, SKV_BLOCKS_FORWARD, 0, SKV_FORMULA_SKV, 0, 0, SKV_MATH_EXACT, 0},
	 {SKV_MERGE_ONEPASS, SKV_ORDER_SEQ, 0, 1, SKV_EMPTY_NONE, 0, SKV_NORM_DIV},
	 0},
};

_Static_assert(sizeof presets / sizeof presets[0] == SKV_NPRESETS, "SKV_NPRESETS out of date");

size_t skv_preset_count(void) { return sizeof presets / sizeof presets[0]; }

const skv_preset *skv_preset_at(size_t i) { return i < skv_preset_count() ? &presets[i] : NULL; }

const skv_preset *skv_preset_find(const char *name)
{
	for (size_t i = 0; name && i < skv_preset_count(); i++)
		if (strcmp(presets[i].name, name) == 0)
			return &presets[i];
	return NULL;
}

int skv_preset_resolve(skv_config *cfg, skv_merge_spec *spec, const skv_preset *p, skv_format input)
{
	if (!cfg || !spec || !p || (unsigned)input >= SKV_NFORMATS)
		return SKV_EINVAL;
	skv_config c = p->cfg;
	c.input = input;
	if (p->follows & SKV_FOLLOW_P)
		c.p = input;
	if (p->follows & SKV_FOLLOW_OUTPUT)
		c.output = input;
	if (p->follows & SKV_FOLLOW_PARTIAL)
		c.partial = c.output;
	*cfg = c;
	*spec = p->merge;
	return SKV_OK;
}
