/* scan_mma.c - the kernels' tensor-core path: the k of the MMA instruction each GPU takes (which products share one), and q.k and P.V chained through those instructions. */
#include <string.h>
#include "mma_internal.h"
#include "scan.h"

/*
 * Which MMA instruction attention kernels issue, per GPU and input format.
 * Shapes from the PTX ISA 9.0 (as quoted, instruction by instruction, by
 * the ptx-90-parser crate on docs.rs: mma.rs, wgmma_mma_async.rs; and
 * NVIDIA's CCCL tcgen05_mma page): mma.sync takes .m8n8k4 for .f16 (the
 * only shape on sm_70), .m16n8k16 for .f16/.bf16, .m16n8k8 for .tf32 and
 * .m16n8k32 for .e4m3/.e5m2 (sm_89 on); wgmma.mma_async takes .m64nNk16
 * for .f16/.bf16, .m64nNk8 for .tf32 and .m64nNk32 for .e4m3/.e5m2
 * (sm_90a); tcgen05.mma's K is 32 bytes of the A type: 16 for kind::f16,
 * 8 for kind::tf32, 32 for kind::f8f6f4 (sm_100a).
 *
 * The kernels (Dao-AILab/flash-attention at 0251105a2fb1):
 * - FA2 instantiates MMA_Atom<SM80_16x8x16_F32F16F16F32_TN> or
 *   <SM80_16x8x16_F32BF16BF16F32_TN> in a TiledMMA with Tile<16 kNWarps,
 *   16, 16> (csrc/flash_attn/src/kernel_traits.h:29-33, 74-77): mma.sync
 *   m16n8k16 on Ampere, Ada, Hopper and Blackwell alike. Its gemm and
 *   gemm_rs (csrc/flash_attn/src/utils.h:153-158, 176-180) issue the k
 *   slices of size<2>(tCrA) in increasing order into the same fp32
 *   accumulator: S from clear(acc_s) (flash_fwd_kernel.h:862, 886), O as
 *   acc_o, cleared once (:841) and rescaled between key blocks (:924-934).
 * - FA3 takes its atoms from GMMA::ss_op_selector / rs_op_selector
 *   (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:90-110): wgmma with k = 16
 *   for fp16/bf16 and k = 32 for FP8, the k blocks in increasing order
 *   (hopper/utils.h:284-295), S with zero_init (mainloop :1141) and O
 *   accumulated into tOrO (:1182). For FP8 it permutes the registers of S
 *   between neighbouring 8-column groups (permute_Cregs_fp8, hopper/
 *   utils.h:489-504) so that P matches the FP8 A-operand layout: which
 *   register holds a key changes, not which 32 keys share an instruction,
 *   and a block FMA's exact sum does not depend on its products' order.
 * - Triton kernels (xformers, SGLang's grouped kernel, Flex, vLLM's
 *   unified kernel) write tl.dot, which Triton lowers to mma.sync (MMAv2)
 *   or, on sm_90 for large enough tiles, wgmma (MMAv3): the same k.
 *   TileLang's T.gemm lowers to the same instructions.
 * Volta runs none of FA2 and FA3 (FA2 needs sm_80: its README and
 * kernel_traits.h:29); its row is Triton's and CUTLASS's m8n8k4.
 */
static const struct {
	skv_gpu g;
	skv_format in;
	unsigned k;
	const char *instr;
} tiles[] = {
	{SKV_GPU_V100, SKV_FP16, 4, "mma.sync m8n8k4 .f16"},
#define MMA_SYNC_(G)                                                 \
	{G, SKV_FP16, 16, "mma.sync m16n8k16 .f16 (FA2, Triton)"},  \
	{G, SKV_BF16, 16, "mma.sync m16n8k16 .bf16 (FA2, Triton)"}, \
	{G, SKV_TF32, 8, "mma.sync m16n8k8 .tf32"}
	MMA_SYNC_(SKV_GPU_A100),
	MMA_SYNC_(SKV_GPU_ADA),
	{SKV_GPU_ADA, SKV_E4M3, 32, "mma.sync m16n8k32 .e4m3"},
	{SKV_GPU_ADA, SKV_E5M2, 32, "mma.sync m16n8k32 .e5m2"},
	{SKV_GPU_H100, SKV_FP16, 16, "wgmma m64nNk16 .f16 (FA3), mma.sync m16n8k16 (FA2)"},
	{SKV_GPU_H100, SKV_BF16, 16, "wgmma m64nNk16 .bf16 (FA3), mma.sync m16n8k16 (FA2)"},
	{SKV_GPU_H100, SKV_TF32, 8, "wgmma m64nNk8 .tf32, mma.sync m16n8k8"},
	{SKV_GPU_H100, SKV_E4M3, 32, "wgmma m64nNk32 .e4m3 (FA3), mma.sync m16n8k32"},
	{SKV_GPU_H100, SKV_E5M2, 32, "wgmma m64nNk32 .e5m2, mma.sync m16n8k32"},
	/* the B200 units are those of the mma.sync vectors; tcgen05.mma has
	 * the same K and no recorded vectors (skv.h, tensor cores) */
	{SKV_GPU_B200, SKV_FP16, 16, "tcgen05.mma kind::f16 K16, mma.sync m16n8k16 (FA2)"},
	{SKV_GPU_B200, SKV_BF16, 16, "tcgen05.mma kind::f16 K16, mma.sync m16n8k16 (FA2)"},
	{SKV_GPU_B200, SKV_TF32, 8, "tcgen05.mma kind::tf32 K8, mma.sync m16n8k8"},
	{SKV_GPU_B200, SKV_E4M3, 32, "tcgen05.mma kind::f8f6f4 K32, mma.sync m16n8k32"},
	{SKV_GPU_B200, SKV_E5M2, 32, "tcgen05.mma kind::f8f6f4 K32, mma.sync m16n8k32"},
};

int skv_mma_tile(unsigned *k, const char **instr, skv_gpu g, skv_format in)
{
	for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++)
		if (tiles[i].g == g && (int)tiles[i].in == skv_mma_input_base(in)) {
			if (k)
				*k = tiles[i].k;
			if (instr)
				*instr = tiles[i].instr;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* The instructions of k products over a reduction of K, cut from its start,
 * the last one short (its zero padding drops out of the block FMA), each the
 * unit's chain of blocks on the c the previous one left. */
double skv_mma_chain(const skv_mma_unit *u, unsigned k, const double *a, size_t sa, const double *b, size_t sb,
		     size_t K, double c)
{
	for (size_t k0 = 0; k0 < K; k0 += k)
		c = skv_mma_dot_fast(u, a + k0 * sa, sa, b + k0 * sb, sb, K - k0 < k ? K - k0 : k, c);
	return c;
}

/* Four keys as the four columns of one P.V over head_dim, q its A
 * operand: skv_mma_pv cuts instructions of k from index 0 and gives
 * column t skv_mma_dot_fast(q + k0, 1, kt + 4 k0 + t, 4, len, c) on the c
 * the last left, which is skv_mma_chain's instruction on key t (the block
 * FMA reads values, not addresses). */
void skv_mma_dot4(double s[4], const skv_mma_unit *u, unsigned k, const double *q, const double *kr, size_t d,
		  double *kt)
{
	skv_mma_transpose4(kt, kr, d);
	for (int t = 0; t < 4; t++)
		s[t] = 0.0;
	skv_mma_pv(s, u, k, q, kt, d, 4);
}

void skv_scan_mma_init(skv_scan_consts *sc, const skv_config *cfg)
{
	memset(&sc->unit, 0, sizeof sc->unit);
	sc->tile_k = 0;
	if (cfg->gpu == SKV_GPU_IEEE)
		return;
	/* skv_config_check has made sure both exist */
	skv_mma_unit_init(&sc->unit, (skv_gpu)cfg->gpu, cfg->input, cfg->compute);
	skv_mma_tile(&sc->tile_k, NULL, (skv_gpu)cfg->gpu, cfg->input);
}
