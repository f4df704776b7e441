/* heuristics_sched.c - occupancy-driven split rules: FlashInfer's chunk search, SGLang's dynamic splits, llama.cpp's waves. */
#include <limits.h>
#include <math.h>

#include "heuristics_internal.h"

static int in_list(unsigned v, const unsigned *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return 1;
	return 0;
}

/* ----------------------------------------------------------- FlashInfer */

/*
 * flashinfer-ai/flashinfer at fb28d7242b35, the batch decode plan of
 * BatchDecodeWithPagedKVCacheWrapper without tensor cores (csrc/batch_decode.cu
 * DecodePlan with BatchDecodeWithPagedKVCacheWorkEstimationDispatched), in
 * include/flashinfer/attention/scheduler.cuh:
 * - :175-182: max_grid_size = num_blocks_per_sm x num_sm (an int product),
 *   num_blocks_per_sm from cudaOccupancyMaxActiveBlocksPerMultiprocessor of
 *   the decode kernel (an input here: it depends on the compiled kernel's
 *   registers); gdy = num_kv_heads (:167).
 * - :183-190: batch x gdy >= max_grid_size: no split (one chunk of all the
 *   pages).
 * - :193-199 with :74-99: binary search of the smallest chunk (pages) in
 *   [max(128 / page_size, 1), max pages] whose chunk count
 *   sum_i ceil(pages_i / chunk) times gdy fits max_grid_size (uint32).
 * - :349-364: request i gets ceil(max(pages_i, 1) / chunk) chunks, and
 *   decode.cuh:426-432: chunk j is keys [j C, min((j+1) C, kv_len)) with C =
 *   chunk x page_size (kv_chunk_size_ptr, scheduler.cuh:471). With pages =
 *   ceil(n / page_size), ceil(pages / chunk) = ceil(n / C): no empty chunk.
 * enable_cuda_graph only decides whether one-chunk requests still go through
 * the split kernel and the padded grid (:200-206, :443-444); the chunks and
 * their count are the same, so it is not an input.
 */
static const unsigned fi_groups[] = {1, 2, 3, 4, 6, 8}; /* DISPATCH_GQA_GROUP_SIZE, utils.cuh:142-165 */
static const unsigned fi_dims[] = {64, 128, 256, 512};   /* DISPATCH_HEAD_DIM, utils.cuh:197-222 */
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *heur_flashinfer_invalid(const skv_heur_input *in)
{
	if (!in_list(in->heads / in->kv_heads, fi_groups, NELEM(fi_groups)))
		return "flashinfer: heads / kv_heads not a compiled group size (1 2 3 4 6 8)";
	if (!in_list(in->head_dim, fi_dims, NELEM(fi_dims)))
		return "flashinfer: head_dim not a compiled head size (64 128 256 512)";
	if (in->page_size == 0)
		return "flashinfer: page_size must be positive";
	if (in->blocks_per_sm == 0)
		return "flashinfer: blocks_per_sm must be positive (the occupancy of the decode kernel)";
	if ((uint64_t)in->blocks_per_sm * in->sm_count > INT_MAX)
		return "flashinfer: blocks_per_sm x sm_count above INT_MAX (its int max_grid_size)";
	/* the largest uint32 product the search forms: batch x pages x gdy at
	 * chunk 1; also keeps pages + mid - 1 in ceil_div within uint32 */
	const uint64_t pages = heur_ceil_div(in->ctx, in->page_size);
	if ((uint64_t)in->batch * pages * in->kv_heads > UINT32_MAX || pages > INT32_MAX)
		return "flashinfer: batch x pages x kv_heads above 2^32 - 1 (its uint32 batch sizes)";
	return NULL;
}

void heur_flashinfer_cut(heur_cut *c, const skv_heur_input *in)
{
	const uint64_t max_grid = (uint64_t)in->blocks_per_sm * in->sm_count, gdy = in->kv_heads;
	const uint64_t pages = heur_ceil_div(in->ctx, in->page_size);
	uint64_t chunk;
	if ((uint64_t)in->batch * gdy >= max_grid) {
		chunk = pages; /* max_num_pages_per_batch = max(1, pages), pages >= 1 */
	} else {
		uint64_t low = 128 / in->page_size, high = pages; /* min_num_pages_per_batch, max pages */
		if (low < 1)
			low = 1;
		while (low < high) {
			const uint64_t mid = (low + high) / 2;
			if ((uint64_t)in->batch * heur_ceil_div(pages, mid) * gdy > max_grid)
				low = mid + 1;
			else
				high = mid;
		}
		chunk = low; /* may exceed pages when the lower bound does: one chunk */
	}
	c->splits = (unsigned)heur_ceil_div(pages, chunk);
	c->tile = 0;
	c->span = (size_t)(chunk * in->page_size);
}

/* S splits: chunks of ceil(pages / S) pages, as many as cover the pages
 * (the plan's own count from a chunk size; can be below S). */
void heur_flashinfer_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	const uint64_t pages = heur_ceil_div(in->ctx, in->page_size), chunk = heur_ceil_div(pages, S);
	c->splits = (unsigned)heur_ceil_div(pages, chunk);
	c->tile = 0;
	c->span = (size_t)(chunk * in->page_size);
}

int skv_flashinfer_merge_layout(unsigned *vec, unsigned *bdx, unsigned *bdy, unsigned head_dim,
				unsigned partial_bytes)
{
	if (!vec || !bdx || !bdy || !in_list(head_dim, fi_dims, NELEM(fi_dims)) ||
	    (partial_bytes != 2 && partial_bytes != 4))
		return SKV_EINVAL;
	const unsigned a = 16u / partial_bytes, b = head_dim / 32u;
	const unsigned v = a > b ? a : b;
	*vec = v;
	*bdx = head_dim / v;   /* <= 32 for every dispatched head size */
	*bdy = 128u / *bdx;    /* num_threads = 128 */
	return SKV_OK;
}

/* --------------------------------------------------------------- SGLang */

/*
 * sgl-project/sglang python/sglang/srt/layers/attention/triton_backend.py
 * (stored 00858422): TritonAttnBackend.__init__ and get_num_kv_splits, and
 * triton_ops/metadata.py (stored bdd1bcdf): get_num_kv_splits_triton.
 * - Deterministic inference: split_tile_size = SGLANG_TRITON_DECODE_SPLIT_TILE_SIZE
 *   (default 256) and num_kv_splits = ceil(seq_len / 256), uncapped.
 * - Otherwise (static splits off, device_core_count > 0) the Triton kernel
 *   with max_kv_splits = --triton-attention-num-kv-splits (server_args
 *   default 8), for a batch whose lengths are all ctx (min = max):
 *     max_kv_splits_1 = min(cdiv(max, min), cap) = 1, chunk_1 = max;
 *     ext_seq_len = float32(max) / 64.0;
 *     ext_cores = int32(cores x max(log2(ext_seq_len), 1.0)) in fp32,
 *                 truncated toward zero;
 *     token_grid = num_seq x num_head (kv_group 1), or
 *                  num_seq x cdiv(num_head, min(16, kv_group));
 *     max_kv_splits_2 = min(cdiv(ext_cores, token_grid), cap);
 *     num_kv_splits = max(cdiv(len, chunk_1), cdiv(len, cdiv(max, max_kv_splits_2))).
 *   num_group (speculative top-k) is 1 for plain decode. The MLA cap
 *   (_mla_decode_kv_splits_cap) and the static-splits environment switch
 *   are not modelled.
 * - Layout (triton_ops/decode_attention.py, stored 03cd2ec4, stage 1 and 2):
 *   kv_len_per_split = cdiv(cdiv(len, S), 32) x 32, split s = [s x that,
 *   min((s+1) x that, len)), skipped when empty: trailing splits can be empty.
 * fp32 log2: tl.log2 of an fp32 value; its lowering (libdevice or
 * lg2.approx) is not verified. Here it is the correctly rounded fp32 log2,
 * computed as log2 in double rounded to float (that equals the correctly
 * rounded value unless the exact logarithm lies within 2^-53 relative of a
 * float midpoint).
 */
#define SGLANG_DEFAULT_SPLITS 8u
#define SGLANG_DET_TILE 256u
#define SGLANG_MIN_BLOCK_KV 32u
#define SGLANG_BLOCK_H 16u

const char *heur_sglang_invalid(const skv_heur_input *in)
{
	/* kv_indptr is an int32 cumulative sum of the lengths */
	if ((uint64_t)in->batch * in->ctx > INT32_MAX)
		return "sglang: batch x ctx above INT32_MAX (its int32 kv_indptr)";
	if (in->sm_count > (1u << 24))
		return "sglang: sm_count above 2^24 (exact in its fp32 product)";
	return NULL;
}

/* int32(cores x max(log2(float(len) / 64), 1)) with fp32 intermediates. */
static uint64_t sglang_ext_cores(unsigned cores, unsigned len)
{
	const float ext = (float)len / 64.0f; /* exact: a power-of-two divisor, no underflow */
	const float lg = (float)log2((double)ext);
	const float m = lg > 1.0f ? lg : 1.0f;
	const float prod = (float)cores * m; /* cores <= 2^24: exact conversion */
	return (uint64_t)prod;              /* truncation toward zero, prod >= 1 */
}

void heur_sglang_cut(heur_cut *c, const skv_heur_input *in)
{
	const uint64_t len = in->ctx;
	uint64_t s;
	if (in->deterministic) {
		s = heur_ceil_div(len, SGLANG_DET_TILE);
	} else {
		const uint64_t cap = in->max_splits ? in->max_splits : SGLANG_DEFAULT_SPLITS;
		const uint64_t group = in->heads / in->kv_heads;
		const uint64_t block_h = group < SGLANG_BLOCK_H ? group : SGLANG_BLOCK_H;
		const uint64_t grid = group == 1 ? (uint64_t)in->batch * in->heads
						 : (uint64_t)in->batch * heur_ceil_div(in->heads, block_h);
		uint64_t ms2 = heur_ceil_div(sglang_ext_cores(in->sm_count, in->ctx), grid);
		if (ms2 > cap)
			ms2 = cap;
		const uint64_t s1 = 1; /* cdiv(len, chunk_1) with chunk_1 = len */
		const uint64_t s2 = heur_ceil_div(len, heur_ceil_div(len, ms2));
		s = s1 > s2 ? s1 : s2;
	}
	heur_sglang_at(c, in, (unsigned)s);
}

/* S splits of kv_len_per_split = cdiv(cdiv(len, S), 32) 32 keys, trailing
 * ones empty when the rounding covers the keys early. */
void heur_sglang_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	c->splits = S;
	c->tile = 0;
	c->span = (size_t)(heur_ceil_div(heur_ceil_div(in->ctx, S), SGLANG_MIN_BLOCK_KV) * SGLANG_MIN_BLOCK_KV);
}

/* ------------------------------------------------------- llama.cpp CUDA */

/*
 * ggml-org/llama.cpp, the vec kernel for one query column (Q->ne[1] == 1):
 * ggml/src/ggml-cuda/fattn-vec.cuh (stored 026f95b1):
 * ggml_cuda_flash_attn_ext_vec_case_impl launches launch_fattn<D, 1, 1> with
 * nbatch_fa = D and nthreads = 128; flash_attn_ext_vec has block y take the
 * 128-key tiles y, y + P, y + 2P, ... (k_VKQ_0 = y 128, step gridDim.y 128).
 * ggml/src/ggml-cuda/fattn-common.cuh (stored 7c95e797), launch_fattn
 * without stream-K:
 *   ntiles_total = ceil(ne1 / 1) x gqa_ratio x ne12 x ne3 = heads x ne3;
 *   ntiles_KQ = ceil(n_kv / nbatch_fa);
 *   P = min(max_blocks_per_sm, ntiles_KQ); blocks_per_wave = nsm x max_blocks_per_sm;
 *   for P' = P .. ntiles_KQ: total = ntiles_total P'; nwaves = ceil(total / bpw);
 *     eff = 100 total / (nwaves bpw) (int); stop once the best eff >= 95 and
 *     nwaves exceeds the best's; a strictly better eff takes P'.
 * Here batch is Q->ne[3] (one stream per sequence), n_kv = ctx is K->ne[1]
 * (the KV view llama.cpp passes, whose tail the mask hides), and the KV_max
 * mask scan (taken when ne3 > 1 and n_kv % 256 == 0) that stops blocks early
 * is not modelled. Which kernel llama.cpp picks for a given GPU and model
 * (vec, MMA, tile) is decided elsewhere (fattn.cu) and not modelled.
 */
#define LLAMACPP_TILE 128u /* nthreads keys per tile */

const char *heur_llamacpp_invalid(const skv_heur_input *in)
{
	static const unsigned dims[] = {64, 128, 256}; /* the vec cases instantiated */
	if (!in_list(in->head_dim, dims, NELEM(dims)))
		return "llamacpp-cuda: head_dim not a vec-kernel case (64 128 256)";
	if (in->blocks_per_sm == 0)
		return "llamacpp-cuda: blocks_per_sm must be positive (the occupancy of the vec kernel)";
	const uint64_t bpw = (uint64_t)in->sm_count * in->blocks_per_sm;
	const uint64_t ntiles_total = (uint64_t)in->heads * in->batch;
	const uint64_t ntiles_kq = heur_ceil_div(in->ctx, in->head_dim);
	/* 100 x ntiles_total x P' in int, with P' <= ntiles_KQ */
	if (ntiles_total > INT_MAX || bpw > INT_MAX / 100 || ntiles_total * ntiles_kq > INT_MAX / 100)
		return "llamacpp-cuda: 100 x heads x batch x ctx / head_dim or the wave size overflow its int";
	return NULL;
}

void heur_llamacpp_cut(heur_cut *c, const skv_heur_input *in)
{
	const uint64_t bps = in->blocks_per_sm, bpw = (uint64_t)in->sm_count * bps;
	const uint64_t ntiles_total = (uint64_t)in->heads * in->batch;
	const uint64_t ntiles_kq = heur_ceil_div(in->ctx, in->head_dim);
	uint64_t p = bps < ntiles_kq ? bps : ntiles_kq;
	uint64_t nwaves_best = 0, eff_best = 0;
	for (uint64_t t = p; t <= ntiles_kq; t++) {
		const uint64_t total = ntiles_total * t;
		const uint64_t nwaves = heur_ceil_div(total, bpw);
		const uint64_t eff = 100 * total / (nwaves * bpw);
		if (eff_best >= 95 && nwaves > nwaves_best)
			break;
		if (eff > eff_best) {
			nwaves_best = nwaves;
			eff_best = eff;
			p = t;
		}
	}
	heur_llamacpp_at(c, in, (unsigned)p);
}

/* S blocks taking the 128-key tiles round-robin. */
void heur_llamacpp_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	(void)in;
	c->splits = S;
	c->tile = LLAMACPP_TILE;
	c->span = LLAMACPP_TILE;
}
