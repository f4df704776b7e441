/* preset.c - precision profiles of production attention kernels, each field from the systems' source (lib/preset_sources.c cites it). */
#include <string.h>
#include "preset_internal.h"

#define F16 SKV_FP16
#define B16 SKV_BF16
#define F32 SKV_FP32
#define F64 SKV_FP64

/* A configuration: the seven stage formats and base, then the mechanisms
 * (blocks, acc, formula, lanes, lane_keys, math; math_seed 0, gpu ieee: a
 * preset is a kernel, the GPU the program's --gpu). */
#define CFG(in, comp, p, part, lse, comb, out, base, blocks, acc, formula, lanes, lk, math)                        \
	{in, comp, p, part, lse, comb, out, SKV_BASE_##base, SKV_BLOCKS_##blocks, acc, SKV_FORMULA_##formula, lanes, lk, \
	 SKV_MATH_##math, 0, SKV_GPU_IEEE}
/* A merge: rule, order, seed 0, threads, empty policy, state rounding, norm. */
#define MRG(merge, order, threads, empty, round, norm)                                                          \
	{SKV_MERGE_##merge, SKV_ORDER_##order, 0, threads, SKV_EMPTY_##empty, round, SKV_NORM_##norm}
#define FP SKV_FOLLOW_P
#define FO SKV_FOLLOW_OUTPUT
#define FPA SKV_FOLLOW_PARTIAL
#define FT SKV_FOLLOW_THREADS
#define NOSYS (-1)
#define TC 1 /* q.k and P.V on tensor cores */
#define CC 0 /* on CUDA cores or the CPU */
/* No KV cache: K and V as the input format holds them. */
#define NOKV {0, SKV_KVS_NONE, SKV_KVD_VALUES, 0, 0}, &skv_src_nokv
/* A cache: format, scale granularity, placement, the given tensor scale of K and V (0: from the amax). */
#define KV(f, scale, deq, g) {SKV_KV(f), SKV_KVS_##scale, SKV_KVD_##deq, g, g}

static const skv_preset presets[] = {
	{"fa2",
	 "FlashAttention 2 (split-KV decode): bf16 in, fp32 arithmetic with fast math, raw scores with exp2(fma), "
	 "key blocks last to first, the row sum in the 4 lanes of a quad, P rounded to the input type before P.V, "
	 "fp32 partials and LSE, fp32 one-pass combine whose exp-sum runs over 32 lanes; an all-empty row gets "
	 "LSE +inf",
	 CFG(B16, F32, B16, F32, F32, F32, B16, E2, REVERSE, 0, FA2, 4, 2, FAST), MRG(ONEPASS, LANES, 32, FA2, 0, DIV),
	 FP | FO, SKV_HEUR_FA2, TC, skv_src_fa2, NOKV},
	{"fa3",
	 "FlashAttention 3 (hopper): as fa2 but the LSE factor RN(c ln 2), normalised combine weights e(L_s - M) "
	 "RN(1/sum) (the total LSE is not in the weights), empty splits' rows unwritten and skipped",
	 CFG(B16, F32, B16, F32, F32, F32, B16, E2, REVERSE, 0, FA3, 4, 2, FAST),
	 MRG(ONEPASS_NORM, LANES, 32, FA3, 0, DIV), FP | FO, SKV_HEUR_FA3, TC, skv_src_fa3, NOKV},
	{"flashinfer",
	 "FlashInfer decode (since PR 4401): base-2 LSE, P kept in fp32 (o += p v on CUDA cores), partials in the "
	 "output type, fp32 LSE and combine, pairwise state merge over strided per-thread subsets (bdy from "
	 "head_dim and the partial width: 8 for 128 and 16-bit partials), sealed states rounded to the partial "
	 "type in shared memory, o * rcp(d) normalisation; two empty states merge to output 0, LSE -inf",
	 CFG(B16, F32, F32, B16, F32, F32, B16, 2, FORWARD, 0, FLASHINFER, 0, 0, FAST),
	 MRG(PAIRWISE, STRIDED, 8, GUARD, 1, RCP), FO | FPA | FT, SKV_HEUR_FLASHINFER, CC, skv_src_flashinfer, NOKV},
	{"tilelang",
	 "TileLang flash-decoding example: fp16 in, base-2 raw-score formulas, P copied to fp16 before its GEMM, "
	 "partials and LSE in fp16, fp32 two-pass combine in split order, the CUDA math library without fast "
	 "math, no empty guard",
	 CFG(F16, F32, F16, F16, F16, F32, F16, 2, FORWARD, 0, TILELANG, 0, 0, CUDA), MRG(ONEPASS, SEQ, 1, NONE, 0, DIV),
	 FP | FO, NOSYS, TC, skv_src_tilelang, NOKV},
	{"xformers",
	 "xformers split-K (Triton): natural LSE from exp2 arithmetic, P cast to the value type before tl.dot, "
	 "fp32 partials, the split LSE evaluated and stored in fp64, the ratio combine sum e_s O_s / sum e_s over "
	 "a tl.sum tree; l == 0 gives 0",
	 CFG(B16, F32, B16, F32, F64, F32, B16, E2, FORWARD, 0, XFORMERS, 0, 0, FAST), MRG(RATIO, TREE, 1, GUARD, 0, DIV),
	 FP | FO, SKV_HEUR_XFORMERS, TC, skv_src_xformers, NOKV},
	{"sglang",
	 "SGLang triton decode, MHA kernel: natural LSE, fp32 scores (a bf16 product-and-sum score is inferred "
	 "from Triton's promotion rules, not modelled), P kept in fp32, fp32 partials and LSE, sequential running "
	 "merge over splits in fp32; empty ranges skipped by a range check",
	 CFG(B16, F32, F32, F32, F32, F32, B16, E, FORWARD, 0, TRITON, 0, 0, FAST), MRG(PAIRWISE, SEQ, 1, GUARD, 0, DIV),
	 FO, SKV_HEUR_SGLANG, CC, skv_src_sglang, NOKV},
	{"flex",
	 "PyTorch FlexAttention decode: base 2 with two scale multiplications, each split's max and sum stored "
	 "apart in fp32 with an unnormalized fp32 accumulator; global max, rescaled sums, one division; P cast to "
	 "the input type before tl.dot; rows with max -inf masked",
	 CFG(B16, F32, B16, F32, F32, F32, B16, 2, FORWARD, 0, FLEX, 0, 0, FAST), MRG(FLEX, SEQ, 1, GUARD, 0, DIV),
	 FP | FO, SKV_HEUR_FLEX, TC, skv_src_flex, NOKV},
	{"exact-fp64", "every stage fp64 with skv's guarded one-pass merge: the accuracy ceiling",
	 CFG(F64, F64, F64, F64, F64, F64, F64, E, FORWARD, 0, SKV, 0, 0, EXACT), MRG(ONEPASS, SEQ, 1, GUARD, 0, DIV),
	 FP | FO, NOSYS, CC, skv_src_exact, NOKV},
	{"naive-fp16", "every stage fp16, one-pass merge, no empty guard: the floor",
	 CFG(F16, F16, F16, F16, F16, F16, F16, E, FORWARD, 0, SKV, 0, 0, EXACT), MRG(ONEPASS, SEQ, 1, NONE, 0, DIV), 0,
	 NOSYS, CC, skv_src_naive, NOKV},
	{"vllm-v2",
	 "vLLM paged_attention_v2: 512-token partitions scored whole, the exp-sum over 128 threads, P normalised "
	 "by 1/(l + 1e-6) and rounded to the input type before P.V, partials in the input type, fp32 max and sum, "
	 "a reduce weighting each partial by l_j e(m_j - M) / (sum + 1e-6); no partition is empty",
	 CFG(B16, F32, B16, B16, F32, F32, B16, E, FORWARD, 0, VLLM, 128, 1, FAST), MRG(VLLM, LANES, 128, NONE, 0, DIV),
	 FP | FO | FPA, SKV_HEUR_VLLM_V2, CC, skv_src_vllm_v2, NOKV},
	{"vllm-unified",
	 "vLLM V1 Triton unified attention, 3D decode path: 16 segments of 16-key tiles, P cast to the value type "
	 "before tl.dot, unnormalized fp32 segment outputs with fp32 max and sum, Flex-style reduce of rescaled "
	 "sums over a tl.sum tree; an empty sum gives 0",
	 CFG(B16, F32, B16, F32, F32, F32, B16, E, FORWARD, 0, TRITON, 0, 0, FAST), MRG(FLEX, TREE, 1, GUARD, 0, DIV),
	 FP | FO, NOSYS, TC, skv_src_vllm_unified, NOKV},
	{"llamacpp-cpu",
	 "llama.cpp CPU decode (f16 K and V, 512 keys or more): one contiguous chunk of ceil(n/threads) keys per "
	 "thread, Q rounded to fp16, one key per block (block size 1), the P.V accumulator in fp16 rounded after "
	 "every key, fp32 unnormalized partials, a running merge of (M, S, acc) skipping empty chunks, output "
	 "fp32 scaled by 1/S",
	 CFG(F16, F32, F32, F32, F32, F32, F32, E, FORWARD, SKV_ACC(F16), SKV, 0, 0, EXACT),
	 MRG(RUNNING, SEQ, 1, GUARD, 0, RCP), 0, NOSYS, CC, skv_src_llamacpp_cpu, NOKV},
	{"llamacpp-cuda",
	 "llama.cpp CUDA vec kernel: fp16 K and V, Q pre-scaled, fp32 scores and accumulator with fast math, "
	 "splits over interleaved 128-key tiles (skv_split_kernel_tiled), unnormalized fp32 partials with (max, "
	 "sum), combine num/den in split order, fp32 output; an all-masked row gives 0/0",
	 CFG(F16, F32, F32, F32, F32, F32, F32, E, FORWARD, 0, QSCALE, 0, 0, FAST), MRG(FLEX, SEQ, 1, NONE, 0, DIV), 0,
	 SKV_HEUR_LLAMACPP_CUDA, CC, skv_src_llamacpp_cuda, NOKV},
	{"sglang-gqa",
	 "SGLang triton decode, grouped kernel (GQA, MQA, MLA: the common path): as sglang but scores by tl.dot "
	 "in fp32 and P cast to the value type before tl.dot",
	 CFG(B16, F32, B16, F32, F32, F32, B16, E, FORWARD, 0, TRITON, 0, 0, FAST), MRG(PAIRWISE, SEQ, 1, GUARD, 0, DIV),
	 FP | FO, SKV_HEUR_SGLANG, TC, skv_src_sglang_gqa, NOKV},
	{"flashinfer-pre4401",
	 "FlashInfer before PR 4401 (d7f2c646): as flashinfer but the state merge has no guard, so two empty "
	 "states (caller-supplied LSE -inf) merge to NaN (issue 4051), and normalisation divides",
	 CFG(B16, F32, F32, B16, F32, F32, B16, 2, FORWARD, 0, FLASHINFER, 0, 0, FAST),
	 MRG(PAIRWISE, STRIDED, 8, NONE, 1, DIV), FO | FPA | FT, SKV_HEUR_FLASHINFER, CC, skv_src_flashinfer_pre, NOKV},
	{"fa3-fp8",
	 "FlashAttention 3's FP8 forward path: q, K, V in e4m3 (unit descales), P converted to e4m3 before its "
	 "wgmma after FA3's Max_offset 8 moves the row max to 2^8, output in bf16 as FA3 writes it; the rest as fa3",
	 CFG(SKV_E4M3_SAT, F32, SKV_E4M3_SAT, F32, F32, F32, B16, E2, REVERSE, 0, FA3, 4, 2, FAST),
	 MRG(ONEPASS_NORM, LANES, 32, FA3, 0, DIV), FP, SKV_HEUR_FA3, TC, skv_src_fa3_fp8, NOKV},
	{"vllm-fp8kv",
	 "vLLM paged_attention_v2 with --kv-cache-dtype fp8 (e4m3): K and V stored as e4m3 with __NV_SATFINITE "
	 "over one fp32 scale per tensor (1.0, vLLM's default when the checkpoint has none), dequantized to the "
	 "input type before the dot products; the rest as vllm-v2",
	 CFG(B16, F32, B16, B16, F32, F32, B16, E, FORWARD, 0, VLLM, 128, 1, FAST), MRG(VLLM, LANES, 128, NONE, 0, DIV),
	 FP | FO | FPA, SKV_HEUR_VLLM_V2, CC, skv_src_vllm_v2, KV(SKV_E4M3_SAT, TENSOR, VALUES, 1.0), &skv_src_kv_vllm},
	{"flashinfer-fp8kv",
	 "FlashInfer decode on an e4m3 cache (written saturating, as vLLM writes it) with per-tensor scales from "
	 "the amax (assumed: a calibrated checkpoint's amax / 448): the kernel reads the codes, k_scale joins "
	 "sm_scale on the host and v_scale multiplies the output after the kernel; the rest as flashinfer",
	 CFG(B16, F32, F32, B16, F32, F32, B16, 2, FORWARD, 0, FLASHINFER, 0, 0, FAST),
	 MRG(PAIRWISE, STRIDED, 8, GUARD, 1, RCP), FO | FPA | FT, SKV_HEUR_FLASHINFER, CC, skv_src_flashinfer,
	 KV(SKV_E4M3_SAT, TENSOR, SCORES, 0), &skv_src_kv_flashinfer},
	{"sglang-fp4kv",
	 "SGLang triton decode (grouped kernel) with --kv-cache-dtype fp4_e2m1: K and V in e2m1 with an e8m0 "
	 "scale per 16 elements, 2^ceil(log2(amax / 6)), ties rounded away from zero, dequantized to bf16 before "
	 "attention; the rest as sglang-gqa",
	 CFG(B16, F32, B16, F32, F32, F32, B16, E, FORWARD, 0, TRITON, 0, 0, FAST), MRG(PAIRWISE, SEQ, 1, GUARD, 0, DIV),
	 FP | FO, SKV_HEUR_SGLANG, TC, skv_src_sglang_gqa, KV(SKV_E2M1, SGLANG, VALUES, 0), &skv_src_kv_sglang},
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

int skv_preset_resolve_full(skv_config *cfg, skv_merge_spec *spec, const skv_preset *p, skv_format input,
			  unsigned head_dim)
{
	if (!cfg || !spec || !p || (unsigned)input >= SKV_NFORMATS)
		return SKV_EINVAL;
	/* an 8-bit path (FA3's Is_FP8) exists for 8-bit tensors only */
	if (skv_format_bits(p->cfg.input) == 8 && skv_format_bits(input) != 8)
		return SKV_EINVAL;
	skv_config c = p->cfg;
	skv_merge_spec m = p->merge;
	c.input = input;
	if (p->follows & SKV_FOLLOW_P)
		c.p = input;
	if (p->follows & SKV_FOLLOW_OUTPUT)
		c.output = input;
	if (p->follows & SKV_FOLLOW_PARTIAL)
		c.partial = c.output;
	if (p->follows & SKV_FOLLOW_THREADS) {
		/* FlashInfer's partial types (DTypeIn) are 16- or 32-bit; fp64 has
		 * no FlashInfer path and takes the fp32 layout */
		int wide = c.partial == SKV_FP32 || c.partial == SKV_TF32 || c.partial == SKV_FP64;
		unsigned vec, bdx, bdy, bytes = wide ? 4 : 2;
		if (skv_flashinfer_merge_layout(&vec, &bdx, &bdy, head_dim, bytes) != SKV_OK)
			return SKV_EINVAL;
		m.threads = bdy;
	}
	*cfg = c;
	*spec = m;
	return SKV_OK;
}

int skv_preset_resolve(skv_config *cfg, skv_merge_spec *spec, const skv_preset *p, skv_format input)
{
	if (!cfg || !spec || !p || (unsigned)input >= SKV_NFORMATS)
		return SKV_EINVAL;
	skv_config c, full;
	skv_merge_spec m = skv_merge_spec_default(), fm;
	/* head_dim 128: the old resolution's FlashInfer threads are the preset's
	 * own 8, which the legacy subset keeps (p->merge.threads) */
	if (skv_preset_resolve_full(&full, &fm, p, input, 128) != SKV_OK)
		return SKV_EINVAL;
	c = skv_config_uniform(full.input);
	c.compute = full.compute;
	c.p = full.p;
	c.partial = full.partial;
	c.lse = full.lse;
	c.combine = full.combine;
	c.output = full.output;
	c.base = full.base;
	m.merge = fm.merge;
	m.order = fm.order;
	m.threads = p->merge.threads;
	m.empty = fm.empty;
	m.round_states = fm.round_states;
	*cfg = c;
	*spec = m;
	return SKV_OK;
}
