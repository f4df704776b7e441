/* heuristics.c - production systems' decode split counts and layouts: the table, FA2, FA3, vLLM v2, xformers, Flex. */
#include <limits.h>
#include <string.h>

#include "heuristics_internal.h"

/*
 * Every rule below is read from the system's source at the commit named with
 * it (shared/notes/kernels-audit.md lists how each repository was read).
 * Where the source computes in float, the C here assigns each intermediate
 * to a float (C11 rounds on assignment, -ffp-contract=off keeps products
 * unfused), so the result is the source's and not a wider evaluation's.
 * Python and Triton integer arithmetic is exact here (uint64_t) wherever the
 * domain checks keep it below the source's own integer width.
 */

/* ------------------------------------------------------------------ FA2 */

/* The existing transcription (lib/occupancy.c) at the decode entry point:
 * skv_fa2_decode_init's domain is FA2's. */
static const char *fa2_invalid(const skv_heur_input *in)
{
	skv_fa2_decode f;
	if (skv_fa2_decode_init(&f, in->batch, in->heads, in->kv_heads, in->ctx, in->head_dim, in->sm_count) !=
	    SKV_OK)
		return "fa2: outside skv_fa2_decode_init's domain (ctx <= INT_MAX, head_dim <= 256, "
		       "2 sm_count <= SKV_FA2_MAX_SMS, batch x heads x m-blocks <= INT_MAX)";
	return NULL;
}

/* Split s is blocks [s per, (s + 1) per) of block_n keys with per =
 * ceil(nblocks / S) (flash_fwd_kernel.h:535-539): span per x block_n, the
 * layout skv_fa2_bounds writes. */
static void fa2_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	skv_fa2_decode f;
	(void)skv_fa2_decode_init(&f, in->batch, in->heads, in->kv_heads, in->ctx, in->head_dim, in->sm_count);
	c->splits = S;
	c->tile = 0;
	c->span = (size_t)heur_ceil_div(f.num_n_blocks, S) * f.block_n;
}

static void fa2_cut(heur_cut *c, const skv_heur_input *in)
{
	skv_fa2_decode f;
	unsigned s = 1;
	(void)skv_fa2_decode_init(&f, in->batch, in->heads, in->kv_heads, in->ctx, in->head_dim, in->sm_count);
	(void)skv_fa2_num_splits(&s, f.batch_nheads_mblocks, f.num_sms, f.num_n_blocks, SKV_FA2_MAX_SPLITS);
	fa2_at(c, in, s);
}

/* ------------------------------------------------------------------ FA3 */

/*
 * Dao-AILab/flash-attention at 0251105a2fb1 (hopper/), on Hopper (arch >= 90;
 * below it FA3 takes tile_size_fwd_sm8x's tiles, not modelled), dense K/V (no page
 * table, no cu_seqlens, no seqused_k: the static split; with seqused_k FA3
 * treats the value below as an upper bound and splits each sequence again at
 * run time, flash_prepare_scheduler.cu:140-161, not modelled).
 * - num_SMs = multiProcessorCount - sm_margin, not doubled (flash_api.cpp:599).
 * - seqlen_q == 1 without a window: is_causal is set false unless the KV is
 *   paged and 64 < head_dim <= 128 (flash_api.cpp:796-804), so dense decode
 *   is never causal or local: kBlockN is the non-causal one and the L2 rule's
 *   !is_causal_or_local holds.
 * - kBlockM, kBlockN: tile_size_fwd_sm90(d_rounded, dv_rounded, causal 0,
 *   local 0, element size, v_colmajor 0, paged_kv_non_TMA 0, softcap)
 *   (tile_size.h:10-54; softcap only matters for e4m3 with local, excluded),
 *   with d rounded up to 64, 96, 128, 192, 256 (flash_api.cpp:492-509).
 * - get_num_splits (flash_api.cpp:442-470): PackGQA, so seqlen_q becomes
 *   heads / kv_heads; num_m_blocks = ceil(that / kBlockM); num_n_blocks =
 *   ceil(seqlen_k / kBlockN); size_one_kv_head = seqlen_k (d + dv) elem
 *   (int); total_mblocks = b h_k num_m_blocks (int); max_splits 128.
 * - num_splits_heuristic (heuristics.h:25-59), below.
 * - Split bounds on the actual seqlen (block.h:47-56): per =
 *   ceil(num_n_blocks / S), split s = blocks [s per, min((s+1) per, nb)),
 *   empty when that is empty: the FA2 layout, on the real length.
 */
static const struct {
	unsigned max_hd, elem, block_m, block_n;
} fa3_tiles[] = {
	{64, 2, 192, 192},  {96, 2, 192, 144},  {128, 2, 128, 176}, {192, 2, 128, 112}, {256, 2, 128, 80},
	{64, 1, 192, 160},  {96, 1, 192, 128},  {128, 1, 128, 224}, {192, 1, 128, 160}, {256, 1, 128, 128},
};
#define FA3_L2 (50u * 1024u * 1024u) /* "we assume that L2 size is 50MB" (heuristics.h:30), not the GPU's */
#define FA3_MAX_SPLITS 128u          /* get_num_splits' argument (flash_api.cpp:469) */

static int fa3_tile(unsigned *block_m, unsigned *block_n, unsigned hd, unsigned elem)
{
	for (size_t i = 0; i < sizeof fa3_tiles / sizeof fa3_tiles[0]; i++)
		if (fa3_tiles[i].elem == elem && hd <= fa3_tiles[i].max_hd) {
			*block_m = fa3_tiles[i].block_m;
			*block_n = fa3_tiles[i].block_n;
			return 1;
		}
	return 0;
}

/* The int quantities of get_num_splits, in 64 bits; fa3_invalid keeps each
 * within FA3's int. */
typedef struct {
	uint64_t num_m_blocks, num_n_blocks, total_mblocks, size_one_kv_head;
	unsigned block_n;
} fa3_args;

static int fa3_args_of(fa3_args *a, const skv_heur_input *in)
{
	unsigned bm, bn;
	if (!fa3_tile(&bm, &bn, in->head_dim, in->elem_bytes))
		return 0;
	a->block_n = bn;
	a->num_m_blocks = heur_ceil_div(in->heads / in->kv_heads, bm);
	a->num_n_blocks = heur_ceil_div(in->ctx, bn);
	a->total_mblocks = (uint64_t)in->batch * in->kv_heads * a->num_m_blocks;
	a->size_one_kv_head = (uint64_t)in->ctx * (2u * (uint64_t)in->head_dim) * in->elem_bytes;
	return 1;
}

static const char *fa3_invalid(const skv_heur_input *in)
{
	fa3_args a;
	if (in->elem_bytes != 1 && in->elem_bytes != 2)
		return "fa3: elem_bytes must be 2 (fp16/bf16) or 1 (e4m3)";
	if (!fa3_args_of(&a, in))
		return "fa3: head_dim above 256 (FA3's largest tile, tile_size.h)";
	if (in->sm_count > SKV_FA2_MAX_SMS)
		return "fa3: sm_count above SKV_FA2_MAX_SMS keeps total_mblocks x splits out of int";
	if (a.total_mblocks > INT_MAX)
		return "fa3: batch x kv_heads x m-blocks above INT_MAX (FA3's int total_mblocks)";
	/* size_one_kv_head + size_l2 - 1 is formed in int (heuristics.h:34) */
	if (a.size_one_kv_head > (uint64_t)INT_MAX - (FA3_L2 - 1))
		return "fa3: ctx x 2 head_dim x elem_bytes + 50 MiB above INT_MAX (FA3's int size_one_kv_head)";
	return NULL;
}

/* num_splits_heuristic(total_mblocks, num_SMs, num_n_blocks, num_m_blocks,
 * size_one_kv_head, is_causal_or_local = false, max_splits = 128). The wave
 * efficiency float(total_mblocks * s) / num_SMs, then n / ceil(n), is FA2's
 * float expression to the operation, so skv_fa2_split_table computes it;
 * unlike FA2 every s counts (no eligibility filter), and the 0.85 literal is
 * a double, so the threshold and comparison are in double. */
static unsigned fa3_heuristic(const fa3_args *a, unsigned num_sms)
{
	const float tm = (float)a->total_mblocks;
	const float almost = 0.8f * (float)num_sms; /* float x int: a float product */
	if (tm >= almost) {
		/* one KV head over the assumed L2, queries going over it twice */
		if (a->size_one_kv_head > FA3_L2 && a->num_m_blocks >= 2u * (uint64_t)num_sms) {
			const uint64_t s = heur_ceil_div(a->size_one_kv_head, FA3_L2);
			return s < FA3_MAX_SPLITS ? (unsigned)s : FA3_MAX_SPLITS;
		}
		return 1;
	}
	if (a->num_n_blocks <= 4)
		return 1;
	unsigned m = FA3_MAX_SPLITS;
	if (m > num_sms)
		m = num_sms;
	if (m > a->num_n_blocks)
		m = (unsigned)a->num_n_blocks;
	float eff[FA3_MAX_SPLITS];
	unsigned char eligible[FA3_MAX_SPLITS]; /* FA2's filter; FA3 has none, unused */
	(void)skv_fa2_split_table(eff, eligible, m, (unsigned)a->total_mblocks, num_sms, (unsigned)a->num_n_blocks);
	float max_eff = 0.f;
	for (unsigned s = 1; s <= m; s++)
		if (eff[s - 1] > max_eff)
			max_eff = eff[s - 1];
	const double threshold = 0.85 * (double)max_eff;
	for (unsigned s = 1; s <= m; s++)
		if ((double)eff[s - 1] >= threshold)
			return s;
	return 1;
}

static void fa3_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	fa3_args a;
	(void)fa3_args_of(&a, in);
	c->splits = S;
	c->tile = 0;
	c->span = (size_t)heur_ceil_div(a.num_n_blocks, S) * a.block_n;
}

static void fa3_cut(heur_cut *c, const skv_heur_input *in)
{
	fa3_args a;
	(void)fa3_args_of(&a, in);
	fa3_at(c, in, fa3_heuristic(&a, in->sm_count));
}

/* -------------------------------------------------------------- vLLM v2 */

/*
 * vllm-project/vllm: csrc/attention/paged_attention_v2.cu (stored 0e60ae8f,
 * paged_attention_v2_launcher: PARTITION_SIZE = 512, grid z =
 * max_num_partitions) and attention_kernels.cuh (stored 04d1abd3,
 * paged_attention_kernel: partition p takes blocks [p 512/BLOCK_SIZE, ...)
 * clamped to the sequence, "partition_idx * PARTITION_SIZE >= seq_len"
 * returns; paged_attention_v2_reduce_kernel reads num_partitions =
 * DIVIDE_ROUND_UP(seq_len, 512)). So S = ceil(seq_len / 512), partitions of
 * 512 keys, the last short, none empty (PARTITION_SIZE % block_size == 0 is
 * asserted by the caller). The caller's v1/v2 choice is not part of this
 * rule: vllm/attention/ops/paged_attn.py (stored 002a0ba9, forward_decode)
 * takes v1 (no split) when max_seq_len <= 8192 and (max_num_partitions == 1
 * or num_seqs x num_heads > 512).
 */
#define VLLM_PARTITION 512u

static const char *vllm_invalid(const skv_heur_input *in)
{
	static const unsigned dims[] = {32, 64, 80, 96, 112, 120, 128, 192, 256}; /* the launcher's switch */
	if (in->ctx > INT_MAX)
		return "vllm-v2: ctx above INT_MAX (the kernel's int seq_len)";
	for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
		if (in->head_dim == dims[i])
			return NULL;
	return "vllm-v2: head_dim not one the launcher compiles (32 64 80 96 112 120 128 192 256)";
}

/* S partitions: vLLM's partition size is a compile-time constant, so S
 * other than its own means another PARTITION_SIZE: ceil(ctx / S) rounded up
 * to the KV block size (16, vLLM's default; the launcher asserts
 * PARTITION_SIZE % block_size == 0), as many as cover the keys. */
#define VLLM_BLOCK 16u

static void vllm_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	const uint64_t part = heur_ceil_div(heur_ceil_div(in->ctx, S), VLLM_BLOCK) * VLLM_BLOCK;
	c->splits = (unsigned)heur_ceil_div(in->ctx, part);
	c->tile = 0;
	c->span = (size_t)part;
}

static void vllm_cut(heur_cut *c, const skv_heur_input *in)
{
	c->splits = (unsigned)heur_ceil_div(in->ctx, VLLM_PARTITION);
	c->tile = 0;
	c->span = VLLM_PARTITION;
}

/* ------------------------------------------------------------- xformers */

/*
 * facebookresearch/xformers at 4c82fc33 (the last commit with the code; HEAD
 * re-exports the mslk package, not read): xformers/ops/fmha/triton_splitk.py.
 * The call (apply, :759-786): after the GQA swap (:723-744: K/V expanded with
 * stride 0 along H, as the BMGHK GQA layout is passed, become one head) H is
 * 1 for GQA/MQA and the head count for MHA passed as BMHK (G = 1, :167-175 of
 * common.py); Mk is the key length; no tensor bias. get_split_k, CUDA branch
 * (:337-371): Mq = 1 skips the "Mq > 1 and B G H > 64" return;
 *   bh = max(B H, 1); split_k = max(Mk, 1024) // bh;
 *   max_chunk_size = 64 if Mk <= 512 and bh <= 64 else 128;
 *   while split_k > Mk / max_chunk_size: split_k //= 2;
 *   split_k = max(min(split_k, 64), 1).
 * Python compares the int split_k with the float Mk / max_chunk_size
 * exactly, and that quotient is exact (a power-of-two divisor, Mk < 2^53),
 * so the test is split_k x max_chunk_size > Mk in integers. split_size =
 * ceil(Mk / split_k) (:839), split s = [s split_size, min((s+1) split_size,
 * kv_len)) (splitk_kernels.py:216-240, non-paged). The ROCm branch
 * (:342-358) is another rule, not modelled.
 */
static const char *xformers_invalid(const skv_heur_input *in)
{
	(void)in;
	return NULL; /* Python integers: every common input */
}

static void xformers_cut(heur_cut *c, const skv_heur_input *in)
{
	const uint64_t bh = in->heads == in->kv_heads ? (uint64_t)in->batch * in->heads : in->batch;
	const uint64_t mk = in->ctx;
	uint64_t split = (mk > 1024 ? mk : 1024) / bh;
	const uint64_t chunk = mk <= 512 && bh <= 64 ? 64 : 128;
	while (split * chunk > mk) /* split <= 2^32, chunk <= 128: no overflow */
		split /= 2;
	if (split > 64)
		split = 64;
	if (split < 1)
		split = 1;
	c->splits = (unsigned)split;
	c->tile = 0;
	c->span = (size_t)heur_ceil_div(mk, split);
}

/* S splits of ceil(Mk / S) keys (split_size, triton_splitk.py:839). */
static void xformers_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	c->splits = S;
	c->tile = 0;
	c->span = (size_t)heur_ceil_div(in->ctx, S);
}

/* ----------------------------------------------------------------- Flex */

/*
 * pytorch/pytorch torch/_inductor/kernel/flex/flex_decoding.py (stored
 * 00804f38): get_split_k(B, H = Hkv, Mk) = max(num_SM // max(B H, 1) * 2, 1)
 * (Python: (num_SM // bh) * 2); Mk is passed but unused. The flex-decoding
 * kernel is only chosen when heads / kv_heads is a power of two
 * (_use_flex_decoding). Layout (templates/flex_decode.py.jinja, stored
 * 0b53f857, with full blocks): TILE_KV = ceil(ceil(KV_LEN / SPLIT_KV) /
 * BLOCK_N) BLOCK_N with BLOCK_N = 64 (the default FlexDecodeConfig, no
 * max-autotune), split t = [t TILE_KV, (t+1) TILE_KV) clamped, trailing
 * splits empty when TILE_KV rounds up. Two facts of that template are not
 * modelled and make the layout version dependent: full blocks go to the CTAs
 * in reverse (CTA t takes range S-1-t), and without full blocks TILE_KV is
 * computed from kv_num_blocks x SPARSE_KV_BLOCK_SIZE, which for the default
 * block mask (one 2^30-key block) leaves every key to CTA 0. Older templates
 * (e.g. the version with SM = 128 hard-coded) use ceil(KV_LEN / SPLIT_KV)
 * for all blocks, as modelled here.
 */
#define FLEX_BLOCK_N 64u

static const char *flex_invalid(const skv_heur_input *in)
{
	const unsigned g = in->heads / in->kv_heads;
	if ((g & (g - 1)) != 0)
		return "flex: heads / kv_heads not a power of two (flex_attention does not use flex decoding)";
	return NULL;
}

/* S splits of TILE_KV = ceil(ceil(KV_LEN / S) / BLOCK_N) BLOCK_N keys. */
static void flex_at(heur_cut *c, const skv_heur_input *in, unsigned S)
{
	c->splits = S;
	c->tile = 0;
	c->span = (size_t)(heur_ceil_div(heur_ceil_div(in->ctx, S), FLEX_BLOCK_N) * FLEX_BLOCK_N);
}

static void flex_cut(heur_cut *c, const skv_heur_input *in)
{
	const uint64_t bh = (uint64_t)in->batch * in->kv_heads;
	uint64_t s = in->sm_count / bh * 2;
	if (s < 1)
		s = 1;
	flex_at(c, in, (unsigned)s);
}

/* ---------------------------------------------------------------- table */

static const struct {
	const char *name;
	const char *(*invalid)(const skv_heur_input *);
	void (*cut)(heur_cut *, const skv_heur_input *);
	void (*at)(heur_cut *, const skv_heur_input *, unsigned); /* the layout of a forced count */
} systems[] = {
	[SKV_HEUR_FA2] = {"fa2", fa2_invalid, fa2_cut, fa2_at},
	[SKV_HEUR_FA3] = {"fa3", fa3_invalid, fa3_cut, fa3_at},
	[SKV_HEUR_FLASHINFER] = {"flashinfer", heur_flashinfer_invalid, heur_flashinfer_cut, heur_flashinfer_at},
	[SKV_HEUR_VLLM_V2] = {"vllm-v2", vllm_invalid, vllm_cut, vllm_at},
	[SKV_HEUR_XFORMERS] = {"xformers", xformers_invalid, xformers_cut, xformers_at},
	[SKV_HEUR_SGLANG] = {"sglang", heur_sglang_invalid, heur_sglang_cut, heur_sglang_at},
	[SKV_HEUR_FLEX] = {"flex", flex_invalid, flex_cut, flex_at},
	[SKV_HEUR_LLAMACPP_CUDA] = {"llamacpp-cuda", heur_llamacpp_invalid, heur_llamacpp_cut, heur_llamacpp_at},
};
_Static_assert(sizeof systems / sizeof systems[0] == SKV_HEUR_NSYSTEMS, "one row per system");

const char *skv_heur_name(skv_heur_system s) { return (unsigned)s < SKV_HEUR_NSYSTEMS ? systems[s].name : NULL; }

int skv_heur_parse(skv_heur_system *s, const char *name)
{
	if (s == NULL || name == NULL)
		return SKV_EINVAL;
	for (unsigned i = 0; i < SKV_HEUR_NSYSTEMS; i++)
		if (strcmp(name, systems[i].name) == 0) {
			*s = (skv_heur_system)i;
			return SKV_OK;
		}
	return SKV_EINVAL;
}

/* The checks every system shares, then the system's own. */
const char *skv_heur_invalid(skv_heur_system s, const skv_heur_input *in)
{
	if ((unsigned)s >= SKV_HEUR_NSYSTEMS)
		return "unknown system";
	if (in == NULL)
		return "no input";
	if (in->batch == 0 || in->heads == 0 || in->kv_heads == 0 || in->ctx == 0 || in->head_dim == 0 ||
	    in->sm_count == 0)
		return "batch, heads, kv_heads, ctx, head_dim and sm_count must be positive";
	if (in->heads % in->kv_heads != 0)
		return "heads must be a multiple of kv_heads";
	return systems[s].invalid(in);
}

/* Contiguous: split s starts at min(s span, n); the systems make S span >= n,
 * so bounds[S] = n. Interleaved: tile t starts at t tile. Only products below
 * n are formed. */
static void heur_fill(size_t *bounds, const heur_cut *c, size_t n, size_t nbounds)
{
	const size_t step = c->tile ? c->tile : c->span;
	const size_t used = n / step + (n % step != 0);
	for (size_t i = 0; i < nbounds; i++)
		bounds[i] = i < used ? i * step : n;
}

/* The plan of a cut: nbounds, and the bounds when asked. */
static int heur_plan_of(skv_heur_plan *plan, size_t *bounds, size_t cap, const heur_cut *c, size_t n)
{
	const size_t nbounds = c->tile ? n / c->tile + (n % c->tile != 0) + 1 : (size_t)c->splits + 1;
	if (bounds != NULL && cap < nbounds)
		return SKV_ERANGE;
	if (bounds != NULL)
		heur_fill(bounds, c, n, nbounds);
	*plan = (skv_heur_plan){c->splits, c->tile, c->tile ? c->tile : c->span, nbounds};
	return SKV_OK;
}

int skv_heur_splits(skv_heur_plan *plan, size_t *bounds, size_t cap, skv_heur_system s,
		    const skv_heur_input *in)
{
	if (plan == NULL || skv_heur_invalid(s, in) != NULL)
		return SKV_EINVAL;
	heur_cut c;
	systems[s].cut(&c, in);
	return heur_plan_of(plan, bounds, cap, &c, in->ctx);
}

int skv_heur_layout(skv_heur_plan *plan, size_t *bounds, size_t cap, skv_heur_system s,
		    const skv_heur_input *in, unsigned splits)
{
	if (plan == NULL || splits == 0 || splits > in->ctx || skv_heur_invalid(s, in) != NULL)
		return SKV_EINVAL;
	heur_cut c;
	systems[s].at(&c, in, splits);
	return heur_plan_of(plan, bounds, cap, &c, in->ctx);
}
