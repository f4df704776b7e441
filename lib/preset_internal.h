/* preset_internal.h - internal: the per-preset source tables of lib/preset_sources.c, read by lib/preset.c. */
#ifndef SKV_PRESET_INTERNAL_H
#define SKV_PRESET_INTERNAL_H
#include "skv.h"

/* Each is [SKV_NPFIELDS], indexed by skv_preset_field. */
extern const skv_source skv_src_fa2[], skv_src_fa3[], skv_src_fa3_fp8[], skv_src_flashinfer[], skv_src_tilelang[], skv_src_xformers[],
	skv_src_sglang[], skv_src_flex[], skv_src_exact[], skv_src_naive[], skv_src_vllm_v2[], skv_src_vllm_unified[],
	skv_src_llamacpp_cpu[], skv_src_llamacpp_cuda[], skv_src_sglang_gqa[], skv_src_flashinfer_pre[];
/* The kv-cache field's source of each preset (skv_preset.kv_source). */
extern const skv_source skv_src_nokv, skv_src_kv_vllm, skv_src_kv_flashinfer, skv_src_kv_sglang;
#endif
