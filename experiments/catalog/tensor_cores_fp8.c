/* tensor_cores_fp8.c - the tensor-cores-fp8 experiment: FlashAttention 3's FP8 path in IEEE fp32 against the FP8 tensor cores of Ada, H100 (13-bit accumulation) and B200. */
#include "catalog/catalog.h"
#include "catalog/narrate.h"

/* A separate experiment from tensor-cores because a sweep is a cross
 * product and A100 has no FP8 tensor cores (skv_mma_unit_init refuses
 * e4m3 on it): these GPUs are the ones that take e4m3. The findings are
 * tensor-cores' (tc_findings). The output is bf16 because FA3 writes an
 * FP8 attention's output in bf16 (Dao-AILab/flash-attention hopper/
 * flash_api.cpp, mha_fwd: out_type = q_type == Float8_e4m3fn ? BFloat16 :
 * q_type); the preset's own rule (output follows the input) would round
 * it to e4m3 and hide the arithmetic under 2^-4 of output rounding. */
const experiment exp_tensor_cores_fp8 = {
	{"tensor-cores-fp8", KIND_SPLIT,
	 "FA3's FP8 path: IEEE fp32 against the Ada, H100 (13-bit accumulation) and B200 FP8 tensor cores",
	 "--preset=fa3 --input=e4m3 --output=bf16 --math=exact --gpu=ieee,ada,h100,b200 --dist=gaussian,sink "
	 "--ctx=4096 --head-dim=128 --splits=1,8,64 --trials=8",
	 "FlashAttention 3 with e4m3 q, K, V and P (its FP8 wgmma path; the output in bf16 as FA3 writes it), "
	 "q.k and P.V as IEEE fma chains in fp32 (ieee) against the FP8 tensor-core models: Ada and H100 keep "
	 "only 13 fraction bits when the products and the accumulator are aligned (neab -10 in Khattak and "
	 "Mikaitis 2025, the reason DeepSeek-V3 promotes FP8 partial sums to CUDA cores), B200 keeps 25. P.V "
	 "chains over a split's keys on the running accumulator, so more splits mean shorter chains; the sink "
	 "distribution puts most of the mass on one key, whose product then sets the alignment of the rest."},
	"FlashAttention 3's FP8 path with IEEE fp32 arithmetic against the FP8 tensor-core models of Ada, H100 "
	"(13-bit accumulation) and B200, over split counts, for gaussian scores and an attention sink.",
	{"split-count", CHART_LINES, "splits", "dist", "norm_rel_err",
	 "FA3's FP8 path: IEEE fp32 against the GPUs' FP8 tensor cores", NULL},
	tc_findings,
};
