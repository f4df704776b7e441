/* preset_sources.c - the source of every preset field: repository, commit, file:line, read / inferred / assumed, and what the code says. */
#include "preset_internal.h"

/* The commits read (12 hex digits). llama.cpp's ggml sources are read in
 * ggml-org/ggml, which carries the same src/ tree (llama.cpp's own snapshot
 * is over the size a fetch can bring; its stored ops.cpp predates the
 * split path). */
#define FA "Dao-AILab/flash-attention", "0251105a2fb1"
#define FI "flashinfer-ai/flashinfer", "fb28d7242b35"
#define FIP "flashinfer-ai/flashinfer", "299e6d11ede0" /* the parent of d7f2c6464758 (PR 4401) */
#define TL "tile-ai/tilelang", "a35008a42531"
#define XF "facebookresearch/xformers", "4c82fc337935"
#define SG "sgl-project/sglang", "03cd2ec4af85"
#define SGB "sgl-project/sglang", "008584222645"
#define VL "vllm-project/vllm", "04d1abd3918b"
#define VLU "vllm-project/vllm", "001ceb3e98e7"
#define PT "pytorch/pytorch", "05382727fd08"
#define PTD "pytorch/pytorch", "00804f38f1a7"
#define GG "ggml-org/ggml", "d99724f2b141"

/* R(REPO, where, note) with REPO a "repo", "commit" pair: variadic, so a
 * pair passed through FI_COMMON's parameter still splits in two. */
#define SRC_(st, repo, commit, where, note) {repo, commit, where, st, note}
#define SRC(...) SRC_(__VA_ARGS__)
#define R(...) SRC(SKV_SRC_READ, __VA_ARGS__)
#define INF(...) SRC(SKV_SRC_INFERRED, __VA_ARGS__)
#define ASM(...) SRC(SKV_SRC_ASSUMED, __VA_ARGS__)
#define DEF(note) {"skv", "", "lib/preset.c", SKV_SRC_DEFINED, note}
#define NA DEF("not used by this preset's rule or order")

#define FAK "csrc/flash_attn/src/flash_fwd_kernel.h"
#define FAS "csrc/flash_attn/src/softmax.h"
#define FA3C "hopper/flash_fwd_combine_kernel.h"
#define FIS "include/flashinfer/attention/state.cuh"
#define FIC "include/flashinfer/attention/cascade.cuh"
#define FID "include/flashinfer/attention/decode.cuh"
#define TLE "examples/flash_decoding/example_gqa_decode.py"
#define XFK "xformers/ops/fmha/_triton/splitk_kernels.py"
#define XFH "xformers/ops/fmha/triton_splitk.py"
#define SGD "python/sglang/srt/layers/attention/triton_ops/decode_attention.py"
#define SGT "python/sglang/srt/layers/attention/triton_backend.py"
#define VLK "csrc/attention/attention_kernels.cuh"
#define VLT "vllm/attention/ops/triton_unified_attention.py"
#define PTC "torch/_inductor/kernel/flex/templates/common.py.jinja"
#define PTF "torch/_inductor/kernel/flex/flex_decoding.py"
#define GGC "src/ggml-cpu/ops.cpp"
#define GGV "src/ggml-cuda/fattn-vec.cuh"
#define GGF "src/ggml-cuda/fattn-common.cuh"

#define TRITON_MATH "Triton lowers fp32 exp/exp2 to ex2.approx, log to lg2.approx and / to div.full.f32"
#define TRITON_SUM "tl.sum's lane order depends on the layout; modelled as one sequential sum"
#define TRITON_DOT "Triton lowers tl.dot on fp16, bf16 and FP8 to mma.sync or wgmma"

const skv_source skv_src_fa2[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(FA, "csrc/flash_attn/flash_api.cpp:262", "FP16_SWITCH(!params.is_bf16): bf16 or fp16"),
	[SKV_PF_COMPUTE] = R(FA, FAS ":67-186", "fp32 scores, row max, row sum and acc_o"),
	[SKV_PF_P] = R(FA, FAK ":929,994", "rP = convert_type<Element>(acc_s), then gemm_rs"),
	[SKV_PF_PARTIAL] = R(FA, "csrc/flash_attn/flash_api.cpp:339; " FAK ":528,1016", "out_accum kFloat"),
	[SKV_PF_LSE] = R(FA, "csrc/flash_attn/flash_api.cpp:338", "softmax_lse_accum kFloat"),
	[SKV_PF_COMBINE] = R(FA, FAK ":1190-1266", "the combine's registers are fp32"),
	[SKV_PF_OUTPUT] = R(FA, FAK ":1273", "convert_type<Element>(tOrO)"),
	[SKV_PF_BASE] = R(FA, FAS ":76-88,180", "exp2 of log2e-scaled scores, a natural LSE written"),
	[SKV_PF_BLOCKS] = R(FA, FAK ":830,944", "n_block = n_block_max - 1; for (; n_block >= n_block_min; --n_block)"),
	[SKV_PF_ACC] = R(FA, FAS ":148-160", "acc_o rescaled and accumulated in fp32"),
	[SKV_PF_FORMULA] = R(FA, "csrc/flash_attn/flash_api.cpp:138; " FAS ":76-88,148-186",
			     "raw scores; exp2f(x * scale - max_scaled) (one FFMA, says the source); o * (1/sum); "
			     "lse = row_max * softmax_scale + __logf(sum)"),
	[SKV_PF_LANES] = INF(FA, FAS ":46-60,167", "thread_reduce_ then quad_allreduce_: a row's columns lie in "
						   "the 4 threads of a quad, 2 of every 8 (the mma.sync C fragment)"),
	[SKV_PF_MATH] = R(FA, "setup.py:321", "--use_fast_math"),
	[SKV_PF_MERGE] = R(FA, FAK ":1197-1264", "lse_logsum = logf(sum) + max; O += expf(lse - lse_logsum) * Oaccum"),
	[SKV_PF_ORDER] = R(FA, FAK ":1183-1201; csrc/flash_attn/src/utils.h:112-131",
			   "lane t sums splits t + 32 l, Allreduce butterfly; O summed in split order"),
	[SKV_PF_THREADS] = R(FA, "csrc/flash_attn/src/flash_fwd_launch_template.h:140; " FAK ":1175",
			     "128 threads / kBlockM 4 (head_dim 128) = 32 lanes; padding splits are -inf"),
	[SKV_PF_EMPTY] = R(FA, FAK ":580,1196,1204", "empty split O 0, LSE -inf; max -inf uses 0; sum 0 gives +inf"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = NA,
	[SKV_PF_SYSTEM] = R(FA, "csrc/flash_attn/flash_api.cpp:281-347", "num_splits_heuristic, set_params_splitkv"),
	[SKV_PF_TENSOR_CORES] = R(FA, "csrc/flash_attn/src/kernel_traits.h:29-33,74-77; " FAK ":886,934",
				  "MMA_Atom SM80_16x8x16_F32{F16F16,BF16BF16}F32_TN (mma.sync m16n8k16): gemm for S, "
				  "gemm_rs for O += P V"),
};

/* The fields fa3 and fa3-fp8 share: one kernel, two input types. */
#define FA3_SHARED \
	[SKV_PF_COMPUTE] = R(FA, "hopper/softmax.h:96-170", "fp32 row_max, row_sum, acc_o"), \
	[SKV_PF_PARTIAL] = R(FA, "hopper/flash_api.cpp:1093-1097", "outaccum_type = at::ScalarType::Float"), \
	[SKV_PF_LSE] = R(FA, "hopper/flash_api.cpp:1098", "softmax_lse_accum kFloat"), \
	[SKV_PF_COMBINE] = R(FA, FA3C ":580-700", "float lse_sum, scale, tOrO"), \
	[SKV_PF_BASE] = R(FA, "hopper/softmax.h:63-88,151", "exp2 of log2e-scaled scores, a natural LSE written"), \
	[SKV_PF_BLOCKS] = R(FA, "hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:793,861", "n_block from n_block_max - 1 down"), \
	[SKV_PF_ACC] = R(FA, "hopper/softmax.h:163-170", "rescale_o on the fp32 accumulator"), \
	[SKV_PF_FORMULA] = R(FA, "hopper/flash_api.cpp:138; hopper/softmax.h:63-88,112-120,140-154", \
			     "raw scores, exp2f(x * scale - max_scaled); o * inv_sum; lse = row_max * " \
			     "(softmax_scale_log2 * float(M_LN2)) + __logf(sum)"), \
	[SKV_PF_LANES] = INF(FA, "hopper/softmax.h:60,140", "quad_allreduce_ at finalize: the wgmma C fragment spreads " \
							    "a row over a quad like mma.sync"), \
	[SKV_PF_MATH] = R(FA, "hopper/setup.py:668", "--use_fast_math"), \
	[SKV_PF_MERGE] = R(FA, FA3C ":593-621,669-693", "scale = expf(L_s - max), inv_sum = 1/sum, w = scale * inv_sum; " \
							 "the total LSE is not in the weights"), \
	[SKV_PF_ORDER] = R(FA, FA3C ":111-114,593-617", "lane holds splits lane + 32 j, Allreduce<32>; O in split order"), \
	[SKV_PF_THREADS] = R(FA, "hopper/flash_fwd_combine_launch_template.h:24,69; " FA3C ":73,111", \
			     "256 threads / kBlockM 8 (kBlockK 128) = 32 lanes per column"), \
	[SKV_PF_EMPTY] = R(FA, "hopper/epilogue_fwd.hpp:441,452-454; " FA3C ":599-605,669,685", \
			   "empty split: LSE -inf, O unwritten; the combine skips scale <= 0"), \
	[SKV_PF_ROUND_STATES] = NA, \
	[SKV_PF_NORM] = NA, \
	[SKV_PF_SYSTEM] = R(FA, "hopper/heuristics.h:25-59", "num_splits_heuristic (FA3's own)"), \
	[SKV_PF_TENSOR_CORES] = R(FA, "hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:90-110,1141,1182", \
				  "TiledMmaQK, TiledMmaPV from GMMA::ss/rs_op_selector: wgmma for S and O")

const skv_source skv_src_fa3[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(FA, "hopper/flash_api.cpp:397-407", "bf16 or fp16 (e4m3 with Max_offset)"),
	[SKV_PF_P] = R(FA, "hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:1157-1159", "convert_type_out(tOrP_acc, tOrP)"),
	[SKV_PF_OUTPUT] = R(FA, FA3C ":702-703", "convert_type_out(tOrO, rO)"),
	FA3_SHARED,
};

const skv_source skv_src_fa3_fp8[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(FA, "hopper/flash_api.cpp:397-407", "q, k, v in Float8_e4m3fn (with q/k/v_descale; unit "
							    "descales here, the tensors already e4m3 values)"),
	[SKV_PF_P] = ASM(FA, "hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp:1157-1159",
			 "convert_type_out(tOrP_acc, tOrP) to the e4m3 Element; saturating as CUTLASS's float_e4m3_t "
			 "conversion (cvt.rn.satfinite) is assumed, immaterial: P <= 2^Max_offset = 256 < 448"),
	[SKV_PF_OUTPUT] = R(FA, "hopper/flash_api.cpp mha_fwd", "out_type = q_type == Float8_e4m3fn ? BFloat16 : q_type"),
	FA3_SHARED,
};

/* FlashInfer since PR 4401, and the fields its predecessor shares. */
#define FI_COMMON(C)                                                                                              \
	[SKV_PF_INPUT] = R(C, FID " (DTypeQ, DTypeKV)", "bf16 or fp16 (fp8 KV possible)"),                          \
	[SKV_PF_COMPUTE] = R(C, FIS ":29-36; " FID ":62-118", "the state o, m, d is fp32"),                        \
	[SKV_PF_P] = R(C, FID ":133-146", "st.o[i] + s[j] * v_vec[i] with float s: P stays fp32"),                  \
	[SKV_PF_PARTIAL] = R(C, "csrc/batch_decode.cu:231; " FID ":596-601", "tmp_v is DTypeO*: the output type"),  \
	[SKV_PF_LSE] = R(C, FIS ":45", "float tmp_s; get_lse() = m + ptx_log2(d): base 2"),                          \
	[SKV_PF_COMBINE] = R(C, FIC ":374-470", "the merge's state_t is fp32"),                                   \
	[SKV_PF_OUTPUT] = R(C, FIC ":465", "st.o.cast_store(v_merged): DTypeO"),                                  \
	[SKV_PF_BASE] = R(C, "include/flashinfer/attention/variants.cuh:54; " FID ":96-116",                      \
			  "sm_scale_log2 = sm_scale * math::log2e; ptx_exp2"),                                         \
	[SKV_PF_BLOCKS] = ASM(C, FID, "tiles in order; the per-thread-group states FlashInfer merges at the end "    \
				      "(sync_state) are not modelled: one online softmax"),                            \
	[SKV_PF_ACC] = R(C, FID ":133-146", "float st.o"),                                                         \
	[SKV_PF_FORMULA] = R(C, "include/flashinfer/attention/variants.cuh:54; " FID ":88-116; " FIS ":74-83",      \
			     "s *= sm_scale_log2 (fp32 product); exp2(s - m); o * rcp(d)"),                          \
	[SKV_PF_LANES] = ASM(C, FID ":108-112", "st.d += s[j] per thread, states merged later: one sequential sum"), \
	[SKV_PF_MATH] = R(C, "include/flashinfer/math.cuh:44-51,169-176,200-207",                                  \
			  "ex2.approx.ftz.f32, lg2.approx.ftz.f32, rcp.approx.ftz.f32"),                               \
	[SKV_PF_MERGE] = R(C, FIS ":53-67; " FIC ":429-466", "state_t::merge: d = d_prev f1 + d_o f2, o likewise"),   \
	[SKV_PF_ORDER] = R(C, FIC ":124-142,429-463", "thread ty merges splits iter * bdy + ty, then the bdy states in " \
						  "order (threadblock_sync_state)"),                                 \
	[SKV_PF_THREADS] = R(C, FIC ":704-707", "bdy = 128 / (head_dim / max(16 / sizeof(DTypeIn), head_dim / 32))"), \
	[SKV_PF_ROUND_STATES] = R(C, FIC ":124-131,386", "st.o.cast_store(v_smem): DTypeIn, the partials' type"),    \
	[SKV_PF_SYSTEM] = R(C, "include/flashinfer/attention/scheduler.cuh:74-99,148-210", "the decode plan"),        \
	[SKV_PF_TENSOR_CORES] = R(C, FID ":84,143", "s[j] += q_vec[i] * k_vec[i]; st.o[i] + s[j] * v_vec[i]: "        \
						   "per-thread fp32 on CUDA cores")

const skv_source skv_src_flashinfer[SKV_NPFIELDS] = {
	FI_COMMON(FI),
	[SKV_PF_EMPTY] = R(FI, FIS ":53-83", "max(m_prev - m, -inf) drops the NaN of two empty states; normalize: "
					     "d > 0 ? 1/d : 0 (PR 4401)"),
	[SKV_PF_NORM] = R(FI, FIS ":74-83", "o[i] * __fdividef(1.f, d)"),
};

const skv_source skv_src_flashinfer_pre[SKV_NPFIELDS] = {
	FI_COMMON(FIP),
	[SKV_PF_EMPTY] = R(FIP, FIS ":53-63", "d_prev * exp2(m_prev - m) + ...: two -inf states give NaN (issue 4051)"),
	[SKV_PF_NORM] = R(FIP, FIS ":72-77", "o[i] = __fdividef(o[i], d)"),
};

const skv_source skv_src_tilelang[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(TL, TLE ":56", "dtype = T.float16"),
	[SKV_PF_COMPUTE] = R(TL, TLE ":57", "accum_dtype = T.float32"),
	[SKV_PF_P] = R(TL, TLE ":136,148", "T.copy(acc_s, acc_s_cast) to fp16, then T.gemm"),
	[SKV_PF_PARTIAL] = R(TL, TLE ":73", "Output_partial = T.alloc_global(part_shape, dtype)"),
	[SKV_PF_LSE] = R(TL, TLE ":51,72", "glse in dtype (fp16)"),
	[SKV_PF_COMBINE] = R(TL, TLE ":165-186", "lse_logsum_local, o_accum_local in accum_dtype"),
	[SKV_PF_OUTPUT] = R(TL, TLE ":188", "Output = o_accum_local (fp16)"),
	[SKV_PF_BASE] = R(TL, TLE ":51,130-152", "scale includes 1.44269504; exp2 and log2"),
	[SKV_PF_BLOCKS] = R(TL, TLE ":100-102", "T.Pipelined(loop_range): k increasing"),
	[SKV_PF_ACC] = R(TL, TLE ":83", "acc_o in accum_dtype"),
	[SKV_PF_FORMULA] = INF(TL, TLE ":51,130-152", "raw scores, exp2(acc_s * scale - scores_max * scale), logsum * scale "
						   "+ scores_sum, log2(logsum) + scores_max * scale; nvcc's fma contraction inferred"),
	[SKV_PF_LANES] = ASM(TL, TLE ":133", "T.reduce_sum's lane order is layout-dependent; one sequential block sum"),
	[SKV_PF_MATH] = R(TL, "tilelang/cuda/backend.py:72,98", "TL_ENABLE_FAST_MATH defaults to False"),
	[SKV_PF_MERGE] = R(TL, TLE ":165-186", "global max, serial exp2 sum, log2 + max, serial o += po * exp2(lse - L)"),
	[SKV_PF_ORDER] = R(TL, TLE ":173-186", "T.serial(num_split)"),
	[SKV_PF_THREADS] = NA,
	[SKV_PF_EMPTY] = R(TL, TLE ":123-132", "no guard: a masked tile gives -inf * scale - -inf * scale = NaN"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = NA,
	[SKV_PF_SYSTEM] = ASM(TL, TLE ":18,37-39", "num_split fixed (8) or autotuned: no skv_heur system"),
	[SKV_PF_TENSOR_CORES] = INF(TL, TLE ":121,148", "T.gemm(Q_shared, K_shared, acc_s) and T.gemm(acc_s_cast, "
						      "V_shared, acc_o): TileLang's GEMMs on tensor cores"),
};

const skv_source skv_src_xformers[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(XF, XFK, "bf16 or fp16 (int4/fp8 KV options)"),
	[SKV_PF_COMPUTE] = R(XF, XFK ":343-345,515-532", "m_i, l_i, acc fp32"),
	[SKV_PF_P] = R(XF, XFK ":527,532", "p = p.to(Q.dtype.element_ty); tl.dot(p, v[i])"),
	[SKV_PF_PARTIAL] = R(XF, XFH ":793-806", "o_splitk_dtype float32 (float64 only for an fp64 output)"),
	[SKV_PF_LSE] = R(XF, XFH ":815-830", "lse_splitk_dtype = torch.float64 when split"),
	[SKV_PF_COMBINE] = R(XF, XFK ":986-1019", "(lse - lse_max).to(float32), fp32 sums"),
	[SKV_PF_OUTPUT] = R(XF, XFK ":1008", "tl.store(Out_ptr, acc)"),
	[SKV_PF_BASE] = R(XF, XFK ":353-362,515-532", "exp2 of qk * (sm_scale * log2e), a natural LSE written"),
	[SKV_PF_BLOCKS] = R(XF, XFK ":470-560", "for start_n in range(lo, hi, BLOCK_N)"),
	[SKV_PF_ACC] = R(XF, XFK ":530-532", "acc[i] *= alpha; acc[i] += tl.dot(p, v[i]) in fp32"),
	[SKV_PF_FORMULA] = INF(XF, XFK ":361-362,478,527,580-585",
			       "qk_scale = sm_scale * log2e in fp32; l_i = l_i * alpha + tl.sum(p, 1) (Triton's fusion "
			       "inferred); LSE (log2(l.to(f64)) + m.to(f64)) / log2e in the LSE's fp64"),
	[SKV_PF_LANES] = ASM(XF, XFK ":526", TRITON_SUM),
	[SKV_PF_MATH] = INF(XF, XFK, TRITON_MATH),
	[SKV_PF_MERGE] = R(XF, XFK ":986-1019", "num = tl.sum(out_s * e_s), den = tl.sum(e_s), acc = num / den"),
	[SKV_PF_ORDER] = INF(XF, XFK ":989-993", "tl.sum over the padded power-of-two split axis: a tree, layout-dependent"),
	[SKV_PF_THREADS] = NA,
	[SKV_PF_EMPTY] = R(XF, XFK ":563,995,1019", "where(l_i == 0, 0, acc / l_i); where(lse_max == -inf, 0, acc)"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = R(XF, XFK ":1003", "acc = numerator / sumexp"),
	[SKV_PF_SYSTEM] = R(XF, XFH ":337-380", "split_k from Mk, B*H and the chunk size"),
	[SKV_PF_TENSOR_CORES] = INF(XF, XFK ":477,532", "qk += tl.dot(q, k); acc += tl.dot(p, v): " TRITON_DOT),
};

/* SGLang's two decode kernels share all but the scores and P. */
#define SG_COMMON                                                                                                 \
	[SKV_PF_INPUT] = ASM(SG, SGD, "the model dtype (bf16 in the systems experiment)"),                           \
	[SKV_PF_PARTIAL] = R(SGB, SGT " init_forward_metadata", "attn_logits dtype=torch.float32"),                  \
	[SKV_PF_LSE] = R(SGB, SGT " init_forward_metadata", "attn_lse float32; Att_Lse = e_max + tl.log(e_sum)"),      \
	[SKV_PF_COMBINE] = R(SG, SGD " _fwd_kernel_stage2", "fp32 e_sum, e_max, acc"),                              \
	[SKV_PF_OUTPUT] = R(SG, SGD " _fwd_kernel_stage2", "stored to O in the model dtype"),                       \
	[SKV_PF_BASE] = R(SG, SGD, "tl.exp and tl.log: natural"),                                                    \
	[SKV_PF_BLOCKS] = R(SG, SGD " _fwd_kernel_stage1", "for start_n in range(split_kv_start, split_kv_end, BLOCK_N)"), \
	[SKV_PF_ACC] = R(SG, SGD " _fwd_kernel_stage1", "acc = tl.zeros(..., tl.float32)"),                         \
	[SKV_PF_FORMULA] = INF(SG, SGD " _fwd_kernel_stage1", "e_sum = e_sum * re_scale + tl.sum(p, 0) (Triton's fusion " \
							       "inferred)"),                                         \
	[SKV_PF_LANES] = ASM(SG, SGD, TRITON_SUM),                                                                   \
	[SKV_PF_MATH] = INF(SG, SGD, TRITON_MATH),                                                                   \
	[SKV_PF_MERGE] = INF(SG, SGD " _fwd_kernel_stage2", "online merge over splits; Triton fuses acc += exp_logic * " \
							     "tv as fma(exp_logic, tv, acc old): skv fuses the other product"), \
	[SKV_PF_ORDER] = R(SG, SGD " _fwd_kernel_stage2", "for split_kv_id in range(0, MAX_KV_SPLITS)"),             \
	[SKV_PF_THREADS] = NA,                                                                                     \
	[SKV_PF_EMPTY] = R(SG, SGD, "if split_kv_end > split_kv_start: empty splits skipped"),                       \
	[SKV_PF_ROUND_STATES] = NA,                                                                                \
	[SKV_PF_NORM] = R(SG, SGD " _fwd_kernel_stage2", "acc / e_sum"),                                             \
	[SKV_PF_SYSTEM] = R(SGB, SGT " get_num_kv_splits", "dynamic (get_num_kv_splits_triton) or 256-key tiles")

const skv_source skv_src_sglang[SKV_NPFIELDS] = {
	SG_COMMON,
	[SKV_PF_COMPUTE] = ASM(SG, SGD " _fwd_kernel_stage1",
			       "fp32 scores assumed; qk = tl.sum(q[None, :] * k, 1) on bf16 q and k is bf16 products "
			       "summed in bf16 by Triton's promotion (inferred, a GPU check can settle it)"),
	[SKV_PF_P] = R(SG, SGD " _fwd_kernel_stage1", "acc += tl.sum(p[:, None] * v, 0) with fp32 p"),
	[SKV_PF_TENSOR_CORES] = R(SG, SGD " _fwd_kernel_stage1", "qk = tl.sum(q[None, :] * k, 1), acc += tl.sum(p[:, "
								 "None] * v, 0): no tl.dot, CUDA cores"),
};

const skv_source skv_src_sglang_gqa[SKV_NPFIELDS] = {
	SG_COMMON,
	[SKV_PF_COMPUTE] = R(SG, SGD " _fwd_grouped_kernel_stage1", "qk = tl.dot(q, k.to(q.dtype)): fp32 accumulation"),
	[SKV_PF_P] = R(SG, SGD " _fwd_grouped_kernel_stage1", "acc += tl.dot(p.to(v.dtype), v)"),
	[SKV_PF_TENSOR_CORES] = INF(SG, SGD " _fwd_grouped_kernel_stage1", "qk = tl.dot(q, k.to(q.dtype)); acc += "
									   "tl.dot(p.to(v.dtype), v): " TRITON_DOT),
};

const skv_source skv_src_flex[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(PTD, PTF, "the query dtype"),
	[SKV_PF_COMPUTE] = R(PT, PTC " forward_block_mn", "fp32 qk, m_i, l_i, acc"),
	[SKV_PF_P] = R(PT, PTC " forward_block_mn", "acc = tl.dot(p.to(MATMUL_PRECISION), v, acc)"),
	[SKV_PF_PARTIAL] = R(PTD, PTF, "layout_acc float32: buf_ACC unnormalized"),
	[SKV_PF_LSE] = R(PTD, PTF, "buf_M, buf_L float32 apart"),
	[SKV_PF_COMBINE] = R(PTD, PTF " (Reduction)", "lowerings on the fp32 buffers"),
	[SKV_PF_OUTPUT] = R(PTD, PTF " (Reduction)", "convert_element_type(output, query.get_dtype())"),
	[SKV_PF_BASE] = R(PT, PTC, "post_mod_scores *= RCP_LN2; exp2"),
	[SKV_PF_BLOCKS] = R(PT, PTC " forward_inner", "for start_n in range(block_n_start, block_n_end)"),
	[SKV_PF_ACC] = R(PT, PTC " forward_block_mn", "acc = acc * alpha; tl.dot(..., acc) in fp32"),
	[SKV_PF_FORMULA] = INF(PT, PTC " forward_block_mn", "qk *= SM_SCALE, score_mod, *= RCP_LN2 (1.44269504); l_i = l_i "
							   "* alpha + tl.sum(p, 1) (Triton's fusion inferred)"),
	[SKV_PF_LANES] = ASM(PT, PTC, TRITON_SUM),
	[SKV_PF_MATH] = INF(PT, PTC, TRITON_MATH),
	[SKV_PF_MERGE] = INF(PTD, PTF " (Reduction)", "alpha = exp2(buf_M - g_M); g_L = sum(buf_L alpha); out = sum(buf_ACC "
						     "alpha) / g_L; whether Inductor fuses the products is inferred"),
	[SKV_PF_ORDER] = INF(PTD, PTF " (Reduction)", "aten.sum over the split axis: Inductor's reduction order"),
	[SKV_PF_THREADS] = NA,
	[SKV_PF_EMPTY] = R(PTD, PTF " (Reduction)", "masked_rows: adj_M = 0, g_L = 1: output 0, LSE -inf"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = R(PTD, PTF " (Reduction)", "aten.div(output, L)"),
	[SKV_PF_SYSTEM] = R(PTD, PTF " get_split_k", "num_SM // (B * Hkv) * 2, at least 1"),
	[SKV_PF_TENSOR_CORES] = INF(PT, PTC " forward_block_mn", "qk = tl.dot(q, k); acc = tl.dot(p.to(MATMUL_PRECISION), "
								 "v, acc): " TRITON_DOT),
};

#define CONTROL(what)                                                                                              \
	{                                                                                                          \
		[SKV_PF_INPUT] = DEF(what), [SKV_PF_COMPUTE] = DEF(what), [SKV_PF_P] = DEF(what),                    \
		[SKV_PF_PARTIAL] = DEF(what), [SKV_PF_LSE] = DEF(what), [SKV_PF_COMBINE] = DEF(what),                \
		[SKV_PF_OUTPUT] = DEF(what), [SKV_PF_BASE] = DEF(what), [SKV_PF_BLOCKS] = DEF(what),                 \
		[SKV_PF_ACC] = DEF(what), [SKV_PF_FORMULA] = DEF(what), [SKV_PF_LANES] = DEF(what),                  \
		[SKV_PF_MATH] = DEF(what), [SKV_PF_MERGE] = DEF(what), [SKV_PF_ORDER] = DEF(what),                   \
		[SKV_PF_THREADS] = DEF(what), [SKV_PF_EMPTY] = DEF(what), [SKV_PF_ROUND_STATES] = DEF(what),         \
		[SKV_PF_NORM] = DEF(what), [SKV_PF_SYSTEM] = DEF(what), [SKV_PF_TENSOR_CORES] = DEF(what),           \
	}

const skv_source skv_src_exact[SKV_NPFIELDS] = CONTROL("a control: every stage fp64, skv's guarded one-pass merge");
const skv_source skv_src_naive[SKV_NPFIELDS] = CONTROL("a control: every stage fp16, no guard");

const skv_source skv_src_vllm_v2[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = ASM(VL, VLK, "scalar_t: the model dtype (bf16 in the systems experiment)"),
	[SKV_PF_COMPUTE] = R(VL, VLK " paged_attention_kernel", "fp32 logits, qk_max, exp_sum, accs"),
	[SKV_PF_P] = R(VL, VLK " paged_attention_kernel", "from_float(logits_vec, ...) of the normalised p, then dot(logits_vec, v_vec)"),
	[SKV_PF_PARTIAL] = R(VL, VLK " paged_attention_kernel", "from_float(*(out_ptr + row_idx), accs[i]): tmp_out in scalar_t"),
	[SKV_PF_LSE] = R(VL, VLK " paged_attention_kernel", "max_logits = qk_max, exp_sums = exp_sum: float"),
	[SKV_PF_COMBINE] = R(VL, VLK " paged_attention_v2_reduce_kernel", "fp32 max_logit, global_exp_sum, acc"),
	[SKV_PF_OUTPUT] = R(VL, VLK " paged_attention_v2_reduce_kernel", "from_float(out_ptr[i], acc)"),
	[SKV_PF_BASE] = R(VL, VLK, "__expf, expf: natural"),
	[SKV_PF_BLOCKS] = R(VL, VLK " paged_attention_kernel", "every logit of the partition before any exp"),
	[SKV_PF_ACC] = R(VL, VLK " paged_attention_kernel", "float accs[NUM_ROWS_PER_THREAD]"),
	[SKV_PF_FORMULA] = R(VL, VLK " paged_attention_kernel", "qk = scale * Qk_dot; __expf(logits - qk_max); inv_sum = "
								"__fdividef(1.f, exp_sum + 1e-6f); logits *= inv_sum"),
	[SKV_PF_LANES] = INF(VL, VLK " block_sum", "exp_sum over i = thread_idx; i += NUM_THREADS, then xor 16..1 and the "
						   "warps; NUM_THREADS = 128 from paged_attention_v2.cu (not re-read here)"),
	[SKV_PF_MATH] = INF(VL, VLK, "__expf and __fdividef explicit; the reduce's expf fast only under fast math"),
	[SKV_PF_MERGE] = R(VL, VLK " paged_attention_v2_reduce_kernel", "rescaled = exp_sums[i] * expf(m_i - max); inv = "
									 "__fdividef(1, global + 1e-6f); acc += tmp_out * rescaled * inv"),
	[SKV_PF_ORDER] = R(VL, VLK " paged_attention_v2_reduce_kernel", "global_exp_sum per thread strided, block_sum; acc "
									 "over j in order"),
	[SKV_PF_THREADS] = INF(VL, VLK " paged_attention_v2_reduce_kernel", "NUM_THREADS = 128 (the launcher)"),
	[SKV_PF_EMPTY] = R(VL, VLK " paged_attention_kernel", "partitions past seq_len return at once and are never read"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = NA,
	[SKV_PF_SYSTEM] = INF(VL, "vllm/attention/ops/paged_attn.py", "_PARTITION_SIZE = 512 (read by the audit, 002a0ba9)"),
	[SKV_PF_TENSOR_CORES] = R(VL, VLK " paged_attention_kernel", "Qk_dot's per-thread products and warp shuffles, "
								     "dot(logits_vec, v_vec) into float accs: CUDA cores"),
};

const skv_source skv_src_vllm_unified[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = ASM(VLU, VLT, "the model dtype (bf16 in the systems experiment)"),
	[SKV_PF_COMPUTE] = R(VLU, VLT " kernel_unified_attention_3d", "S fp32 (scale * tl.dot(Q, K)), M, L, acc fp32"),
	[SKV_PF_P] = R(VLU, VLT " kernel_unified_attention_3d", "acc += tl.dot(P.to(V.dtype), V)"),
	[SKV_PF_PARTIAL] = R(VLU, VLT " unified_attention", "segm_output float32, unnormalized"),
	[SKV_PF_LSE] = R(VLU, VLT " unified_attention", "segm_max, segm_expsum float32"),
	[SKV_PF_COMBINE] = R(VLU, VLT " reduce_segments", "fp32 loads and sums of the float32 buffers"),
	[SKV_PF_OUTPUT] = R(VLU, VLT " reduce_segments", "tl.store(output_ptr, acc)"),
	[SKV_PF_BASE] = R(VLU, VLT, "tl.exp: natural"),
	[SKV_PF_BLOCKS] = R(VLU, VLT " kernel_unified_attention_3d", "for j in range(segm_idx * tiles_per_segment, ...)"),
	[SKV_PF_ACC] = R(VLU, VLT " kernel_unified_attention_3d", "acc fp32"),
	[SKV_PF_FORMULA] = INF(VLU, VLT " kernel_unified_attention_3d", "L = L * alpha + l_j, l_j = tl.sum(P) (fusion "
									"inferred); L starts at 1.0, immaterial: the first alpha is 0"),
	[SKV_PF_LANES] = ASM(VLU, VLT, TRITON_SUM),
	[SKV_PF_MATH] = INF(VLU, VLT, TRITON_MATH),
	[SKV_PF_MERGE] = INF(VLU, VLT " reduce_segments", "overall_max; expsum * exp(m - M), tl.sum; tl.sum(segm_output * "
							  "exp(m - M)) / expsum: the products rounded before tl.sum, where "
							  "skv's flex rule fuses them (difference not modelled)"),
	[SKV_PF_ORDER] = INF(VLU, VLT " reduce_segments", "tl.sum over the segments: a layout-dependent tree"),
	[SKV_PF_THREADS] = NA,
	[SKV_PF_EMPTY] = ASM(VLU, VLT " reduce_segments", "segments past the sequence are masked to -inf / 0; where(expsum == "
							  "0, 0, ...); an all-empty row is unreachable"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = R(VLU, VLT " reduce_segments", "acc_sum / overall_expsum"),
	[SKV_PF_SYSTEM] = ASM(VLU, VLT " unified_attention", "NUM_SEGMENTS = 16 fixed: no skv_heur system"),
	[SKV_PF_TENSOR_CORES] = INF(VLU, VLT " kernel_unified_attention_3d", "S = scale * tl.dot(Q, K); acc += "
									    "tl.dot(P.to(V.dtype), V): " TRITON_DOT),
};

const skv_source skv_src_llamacpp_cpu[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = R(GG, GGC ":9126,8597", "the split path needs f16 (or f32) K and V; Q (f32) converted to fp16 by q_to_vec_dot"),
	[SKV_PF_COMPUTE] = R(GG, GGC ":8479-8700", "float s, M, S; expf"),
	[SKV_PF_P] = R(GG, GGC ":8630-8643", "vs = expf(s - M) in float into ggml_vec_mad_f16"),
	[SKV_PF_PARTIAL] = R(GG, GGC ":8672,8699", "VKQ32 from VKQ16, partial = [M, S, VKQ] float"),
	[SKV_PF_LSE] = R(GG, GGC ":8697-8699", "partial[0] = M, partial[1] = S: float"),
	[SKV_PF_COMBINE] = R(GG, GGC ":9007-9073", "float M_final, S_final, VKQ_final"),
	[SKV_PF_OUTPUT] = R(GG, GGC ":9071", "memcpy of float VKQ_final into dst"),
	[SKV_PF_BASE] = R(GG, GGC ":8630-8667", "expf: natural"),
	[SKV_PF_BLOCKS] = R(GG, GGC ":8603", "for ic = ic_start; ic < ic_end: one key at a time, in order"),
	[SKV_PF_ACC] = R(GG, "src/ggml-cpu/vec.h:439,769; src/ggml-cpu/simd-mappings.h:596-647",
			 "VKQ16 fp16: fp16(fma(v, vs, y)) per key, fp16(y * ms) on a new max (x86, F16C and FMA)"),
	[SKV_PF_FORMULA] = ASM(GG, GGC ":8614,8667", "s = s * scale; S = S * ms + vs taken as two roundings (a compiler "
						      "contracting it to fma is not modelled)"),
	[SKV_PF_LANES] = ASM(GG, GGC ":8667", "S summed key by key in one float"),
	[SKV_PF_MATH] = ASM(GG, GGC, "libm expf on the CPU, taken as correctly rounded (glibc's is within 0.502 ulp)"),
	[SKV_PF_MERGE] = INF(GG, GGC ":9054-9066", "M_new = fmaxf, two expf, VKQ = VKQ * old + chunk * new (contracted to "
						     "fma(VKQ, old, chunk new) in the shipped build: inferred)"),
	[SKV_PF_ORDER] = R(GG, GGC ":9045", "for chunk_idx = 0 .. n_chunks - 1"),
	[SKV_PF_THREADS] = NA,
	[SKV_PF_EMPTY] = R(GG, GGC ":9047,9054,9067", "chunks past the keys and S_chunk == 0 skipped; S_final == 0 leaves 0"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = R(GG, GGC ":9068-9069", "S_inv = 1.0f / S_final; ggml_vec_scale_f32"),
	[SKV_PF_SYSTEM] = R(GG, GGC ":9129", "chunk_size = ceil(nek1 / nth): one split per thread, no heuristic"),
	[SKV_PF_TENSOR_CORES] = R(GG, GGC ":8612,8643", "kq_vec_dot and ggml_vec_mad_f16 on the CPU: no tensor cores"),
};

const skv_source skv_src_llamacpp_cuda[SKV_NPFIELDS] = {
	[SKV_PF_INPUT] = ASM(GG, GGV, "fp16 K and V; skv rounds q to the input format too, llama.cpp keeps Q in fp32 on NVIDIA"),
	[SKV_PF_COMPUTE] = R(GG, GGV ":132,254-301", "float KQ, KQ_max, KQ_sum (NVIDIA: no V_DOT2_F32_F16)"),
	[SKV_PF_P] = R(GG, GGV ":361", "float KQ_k into the fp32 VKQ on NVIDIA (half2 on AMD)"),
	[SKV_PF_PARTIAL] = R(GG, GGV ":497-503", "dst_val not divided when gridDim.y > 1: unnormalized float"),
	[SKV_PF_LSE] = R(GG, GGV ":514", "make_float2(KQ_max, KQ_sum)"),
	[SKV_PF_COMBINE] = R(GG, GGF ":916-969", "float kqmax, VKQ_numerator, VKQ_denominator"),
	[SKV_PF_OUTPUT] = R(GG, GGF ":969", "dst (float) = numerator / denominator"),
	[SKV_PF_BASE] = R(GG, GGV ":297,301", "expf: natural"),
	[SKV_PF_BLOCKS] = R(GG, GGV ":254", "k_VKQ_0 from blockIdx.y * nthreads up by gridDim.y * nthreads"),
	[SKV_PF_ACC] = R(GG, GGV ":125-128", "float2 VKQ on NVIDIA"),
	[SKV_PF_FORMULA] = R(GG, GGV ":240-245", "Q_reg *= scale before the dot; the per-warp maxes, the +3 ln 2 max "
						  "offset and the cross-warp merge of the 4 warps are not modelled"),
	[SKV_PF_LANES] = ASM(GG, GGV ":479-488", "per-thread sums reduced over the warp then the warps: not modelled"),
	[SKV_PF_MATH] = R(GG, "src/ggml-cuda/CMakeLists.txt:197", "set(CUDA_FLAGS -use_fast_math -extended-lambda)"),
	[SKV_PF_MERGE] = R(GG, GGF ":956-969", "num += expf(m_l - kqmax) * VKQ_l, den += ... * sum_l (FFMA), num / den"),
	[SKV_PF_ORDER] = R(GG, GGF ":961", "for l = 0 .. parallel_blocks - 1"),
	[SKV_PF_THREADS] = NA,
	[SKV_PF_EMPTY] = R(GG, GGV ":136; " GGF ":956-969", "KQ_max starts at -FLT_MAX/2: an empty split weighs 0; an "
							     "all-masked row is 0/0"),
	[SKV_PF_ROUND_STATES] = NA,
	[SKV_PF_NORM] = R(GG, GGF ":969", "VKQ_numerator / VKQ_denominator"),
	[SKV_PF_SYSTEM] = R(GG, GGF ":1115-1178", "parallel_blocks from the occupancy and a wave-efficiency loop"),
	[SKV_PF_TENSOR_CORES] = R(GG, GGV ":273,361-373", "vec_dot_KQ and VKQ += V * KQ_k per thread: CUDA cores (llama.cpp's "
							    "MMA kernel, fattn-mma-f16.cuh, is not modelled)"),
};

static const char *const field_names[SKV_NPFIELDS] = {
	"input", "compute", "p", "partial", "lse", "combine", "output", "base", "blocks", "acc",
	"formula", "lanes", "math", "merge", "order", "threads", "empty", "round-states", "norm", "system",
	"tensor-cores", "kv-cache",
};

static const char *const status_names[SKV_NSRCS] = {"read", "inferred", "assumed", "defined"};

/* The kv-cache field (skv_preset.kv_source). The caches' own rules (how
 * each granularity scales, quantizes and dequantizes) are cited in
 * lib/kvcache.c; these say what each system stores and where it applies
 * the scales. */
const skv_source skv_src_nokv = DEF("no KV cache: K and V as the input format holds them");
const skv_source skv_src_kv_vllm =
	R(VL, VLK " paged_attention_kernel",
	  "k_vecs[j] = fp8::scaled_convert<K_vec, Quant_vec, KV_DTYPE>(k_vec_quant, *k_scale), v likewise: "
	  "dequantized to scalar_t before Qk_dot and the P.V dot; stored by reshape_and_cache through "
	  "scaled_vec_conversion, __nv_cvt_float_to_fp8(float(x) / scale, __NV_SATFINITE) "
	  "(csrc/quantization/fp8/nvidia/quant_utils.cuh at 03476e5c1184); scales 1.0 unless given "
	  "(docs.vllm.ai v0.6.6 quantization/fp8_e4m3_kvcache: 'scaling factors default to 1.0')");
const skv_source skv_src_kv_flashinfer =
	R("flashinfer-ai/flashinfer", "6b1a33f00684", "flashinfer/decode.py BatchDecodeWithPagedKVCacheWrapper.run",
	  "`if k_scale is not None: sm_scale *= k_scale` before the kernel (which reads the fp8 codes), "
	  "`if v_scale is not None: out *= v_scale` after it; one scalar per tensor (the amax-derived value "
	  "is assumed: FlashInfer takes whatever the caller calibrated)");
const skv_source skv_src_kv_sglang =
	R("sgl-project/sglang", "0e6b6cf0ac71", "python/sglang/srt/layers/quantization/kvfp4_tensor.py KVFP4QuantizeUtil",
	  "batched_quantize: blocks of 16, scale_exp = ceil(log2(clamp(block_max / 6, min=1e-10))), magnitude = "
	  "sum(|x / 2^scale_exp| >= E2M1_BOUNDS); batched_dequantize to bfloat16 before the attention kernel "
	  "(the cache pool dequantizes on access, sgl-project/sglang PR 12612)");

const char *skv_preset_field_name(skv_preset_field f) { return (unsigned)f < SKV_NPFIELDS ? field_names[f] : NULL; }

const char *skv_src_status_name(skv_src_status s) { return (unsigned)s < SKV_NSRCS ? status_names[s] : NULL; }

const skv_source *skv_preset_source(const skv_preset *p, skv_preset_field f)
{
	if (p && f == SKV_PF_KV_CACHE)
		return p->kv_source;
	return p && p->sources && (unsigned)f < SKV_NPFIELDS ? &p->sources[f] : NULL;
}
