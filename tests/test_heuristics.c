/* test_heuristics.c - each production system's split count and layout against hand-computed cases from its source. */
#include <limits.h>

#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MAXB 64 /* bounds the pinned cases spell out */

/* One pinned case: the input, the split count and span the source gives,
 * and (when nb > 0) every boundary. */
typedef struct {
	int line;
	skv_heur_system sys;
	skv_heur_input in;
	unsigned splits;
	size_t span;
	size_t nb;
	size_t bounds[MAXB];
} hcase;

/* Input fields, in skv_heur_input order: batch, heads, kv_heads, ctx,
 * head_dim, sm_count, elem_bytes, blocks_per_sm, page_size, max_splits,
 * deterministic. */
#define IN(b, h, kv, ctx, d, sm, el, bps, pg, ms, det) {b, h, kv, ctx, d, sm, el, bps, pg, ms, det}

static void describe(char *buf, size_t n, skv_heur_system s, const skv_heur_input *in)
{
	snprintf(buf, n,
		 "%s batch=%u heads=%u kv_heads=%u ctx=%u head_dim=%u sm=%u elem=%u bps=%u page=%u max_splits=%u "
		 "det=%d",
		 skv_heur_name(s), in->batch, in->heads, in->kv_heads, in->ctx, in->head_dim, in->sm_count,
		 in->elem_bytes, in->blocks_per_sm, in->page_size, in->max_splits, in->deterministic);
}

/* The plan and bounds of a valid input (bounds allocated, caller frees). */
static size_t *plan_of(skv_heur_plan *p, skv_heur_system s, const skv_heur_input *in, int line)
{
	char d[256];
	describe(d, sizeof d, s, in);
	const char *why = skv_heur_invalid(s, in);
	if (why)
		fail_msg("%s:%d: %s rejected: %s", __FILE__, line, d, why);
	int st = skv_heur_splits(p, NULL, 0, s, in);
	if (st != SKV_OK)
		fail_msg("%s:%d: %s: status %d", __FILE__, line, d, st);
	size_t *b = malloc(p->nbounds * sizeof *b);
	skv_heur_plan q;
	assert_non_null(b);
	if (skv_heur_splits(&q, b, p->nbounds, s, in) != SKV_OK || memcmp(&q, p, sizeof q) != 0)
		fail_msg("%s:%d: %s: the plan with bounds differs from the plan alone", __FILE__, line, d);
	return b;
}

/* What every layout must satisfy: bounds from 0 to n, non-decreasing; in a
 * contiguous layout every split before the last non-empty one has span keys
 * and the splits after it none; in an interleaved one every tile but the
 * last has tile keys; the sizes add to n. */
static void check_layout(skv_heur_system s, const skv_heur_input *in, const skv_heur_plan *p, const size_t *b,
			 int line)
{
	char d[256];
	describe(d, sizeof d, s, in);
	const size_t n = in->ctx, parts = p->nbounds - 1;
	size_t sum = 0, last = 0;
	if (p->splits < 1 || b[0] != 0 || b[parts] != n)
		fail_msg("%s:%d: %s: S %u, bounds %zu .. %zu", __FILE__, line, d, p->splits, b[0], b[parts]);
	if (p->tile ? p->nbounds != (n + p->tile - 1) / p->tile + 1 : p->nbounds != (size_t)p->splits + 1)
		fail_msg("%s:%d: %s: %zu bounds for S %u tile %u", __FILE__, line, d, p->nbounds, p->splits, p->tile);
	for (size_t i = 0; i < parts; i++) {
		if (b[i + 1] < b[i])
			fail_msg("%s:%d: %s: bounds[%zu] %zu > bounds[%zu] %zu", __FILE__, line, d, i, b[i], i + 1, b[i + 1]);
		sum += b[i + 1] - b[i];
		if (b[i + 1] > b[i])
			last = i;
	}
	for (size_t i = 0; i < parts; i++) {
		const size_t len = b[i + 1] - b[i], want = i < last ? p->span : (i == last ? len : 0);
		if (len != want || (i == last && (len == 0 || len > p->span)))
			fail_msg("%s:%d: %s: part %zu has %zu keys, span %zu", __FILE__, line, d, i, len, p->span);
	}
	if (sum != n)
		fail_msg("%s:%d: %s: sizes add to %zu, not %zu", __FILE__, line, d, sum, n);
}

static void run_cases(const hcase *c, size_t nc)
{
	for (size_t k = 0; k < nc; k++) {
		char d[256];
		skv_heur_plan p;
		describe(d, sizeof d, c[k].sys, &c[k].in);
		size_t *b = plan_of(&p, c[k].sys, &c[k].in, c[k].line);
		if (p.splits != c[k].splits || p.span != c[k].span)
			fail_msg("%s:%d: %s: S %u span %zu, expected S %u span %zu", __FILE__, c[k].line, d, p.splits,
				 p.span, c[k].splits, c[k].span);
		check_layout(c[k].sys, &c[k].in, &p, b, c[k].line);
		if (c[k].nb && (p.nbounds != c[k].nb || memcmp(b, c[k].bounds, c[k].nb * sizeof *b) != 0))
			fail_msg("%s:%d: %s: bounds differ from the pinned ones (%zu of %zu)", __FILE__, c[k].line, d,
				 p.nbounds, c[k].nb);
		free(b);
	}
}

static void test_names(void **state)
{
	(void)state;
	static const char *want[] = {"fa2", "fa3", "flashinfer", "vllm-v2", "xformers", "sglang", "flex",
				     "llamacpp-cuda"};
	assert_int_equal(NELEM(want), SKV_HEUR_NSYSTEMS);
	for (unsigned i = 0; i < SKV_HEUR_NSYSTEMS; i++) {
		skv_heur_system s = SKV_HEUR_FLEX;
		assert_string_equal(skv_heur_name((skv_heur_system)i), want[i]);
		CHECK_OK(skv_heur_parse(&s, want[i]));
		assert_int_equal(s, i);
	}
	skv_heur_system s = SKV_HEUR_FA3;
	assert_null(skv_heur_name((skv_heur_system)SKV_HEUR_NSYSTEMS));
	assert_int_equal(skv_heur_parse(&s, "vllm"), SKV_EINVAL);
	assert_int_equal(skv_heur_parse(&s, NULL), SKV_EINVAL);
	assert_int_equal(skv_heur_parse(NULL, "fa2"), SKV_EINVAL);
	assert_int_equal(s, SKV_HEUR_FA3);
}

/*
 * FA3 (hopper/ at 0251105a2fb1), the brief's case: batch 1, 32 heads, 8 KV
 * heads, ctx 131072, head_dim 128, 132 SMs, bf16. tile_size_fwd_sm90: kBlockM
 * 128, kBlockN 176. PackGQA: seqlen_q 4, num_m_blocks = ceil(4 / 128) = 1,
 * total_mblocks = 1 x 8 x 1 = 8; num_n_blocks = ceil(131072 / 176) = 745
 * (744 x 176 = 130944); 8 < 0.8f x 132 = 105.6; 745 > 4; max_splits =
 * min(128, 132, 745) = 128. eff(s) = (8 s / 132) / ceil(8 s / 132): s <= 16
 * is below one wave (eff = 8 s / 132), s = 33 gives exactly 2 waves, eff 1,
 * the maximum. Threshold 0.85 x 1 = 0.85: s = 14 gives 112/132 = 0.848 <
 * 0.85, s = 15 gives 120/132 = 0.909: S = 15 (FA2 picks 28 here: its 2 x
 * 132 "SMs", 128-key blocks and eligibility filter, see test_fa2_mapping).
 * Split bounds on the 745 blocks: per = ceil(745 / 15) = 50 blocks = 8800
 * keys, 15 splits, the last 131072 - 14 x 8800 = 7872 keys.
 * e4m3 (elem 1): kBlockN 224, 586 blocks, same efficiencies: S = 15, per =
 * ceil(586 / 15) = 40 blocks = 8960 keys.
 */
static const hcase fa3_cases[] = {
	{__LINE__, SKV_HEUR_FA3, IN(1, 32, 8, 131072, 128, 132, 2, 0, 0, 0, 0), 15, 8800, 0, {0}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 32, 8, 131072, 128, 132, 1, 0, 0, 0, 0), 15, 8960, 0, {0}},
	/* num_n_blocks <= 4 returns 1: ctx 704 = 4 x 176. ctx 705 = 5 blocks:
	 * max_splits = 5, eff(s) = 8 s / 132 (below a wave), max 40/132 =
	 * 0.303 at s = 5, threshold 0.258: s = 4 gives 0.242, so S = 5, one
	 * block each, the last holding key 704 alone. */
	{__LINE__, SKV_HEUR_FA3, IN(1, 32, 8, 704, 128, 132, 2, 0, 0, 0, 0), 1, 704, 2, {0, 704}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 32, 8, 705, 128, 132, 2, 0, 0, 0, 0), 5, 176, 6, {0, 176, 352, 528, 704, 705}},
	/* No eligibility filter: 8 heads MHA (total_mblocks 8), ctx 1760 = 10
	 * blocks, max_splits 10, eff(s) = 8 s / 132, max 80/132 = 0.606,
	 * threshold 0.515: s = 8 gives 0.485, s = 9 gives 0.545: S = 9. per =
	 * ceil(10 / 9) = 2 blocks: 5 splits of 352 keys, 4 empty (FA2 would skip
	 * 9: ceil(10/9) = ceil(10/8) = 2). */
	{__LINE__, SKV_HEUR_FA3, IN(1, 8, 8, 1760, 128, 132, 2, 0, 0, 0, 0), 9, 352, 10,
	 {0, 352, 704, 1056, 1408, 1760, 1760, 1760, 1760, 1760}},
	/* Smallest: one key, one block: 1 split of kBlockN (the span is the
	 * tile of the head size: 64 -> 192, 96 -> 144, 128 -> 176, 192 -> 112,
	 * 256 -> 80 for 16-bit; e4m3 160, 128, 224, 160, 128). */
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 64, 1, 2, 0, 0, 0, 0), 1, 192, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 80, 1, 2, 0, 0, 0, 0), 1, 144, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 100, 1, 2, 0, 0, 0, 0), 1, 176, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 192, 1, 2, 0, 0, 0, 0), 1, 112, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 256, 1, 2, 0, 0, 0, 0), 1, 80, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 64, 1, 1, 0, 0, 0, 0), 1, 160, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 96, 1, 1, 0, 0, 0, 0), 1, 128, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0), 1, 224, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 129, 1, 1, 0, 0, 0, 0), 1, 160, 2, {0, 1}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 1, 1, 1, 256, 1, 1, 0, 0, 0, 0), 1, 128, 2, {0, 1}},
};

/*
 * FA3's float early return: 132 SMs less an sm_margin of 2 = 130; 0.8f x
 * 130 is a float product, 104.0000015 rounded to 104 exactly (0x1.ap+6). At
 * batch 104 (MHA, 1 head: total_mblocks 104) 104 >= 104 returns 1. Done with
 * the float 0.8f widened to double, 104 < 104.0000015 and the search would
 * run: eff(s) = 104 s / 130 = 0.8 s..., s = 5 gives exactly 4 waves, eff 1,
 * S = 5. Batch 103 searches in FA3 too: eff(1..4) = 103 s / 130 mod 1 waves
 * = 0.792, eff(5) = 515 / 520 = 0.990, threshold 0.85 x max < 0.85: S = 5.
 * The 0.85 rule in float: 100 SMs, total_mblocks 51 (batch 51 MHA),
 * ctx 131072 (745 blocks, max_splits 100). eff(100) = 5100 / 100 = 51
 * waves, eff 1 = the max; the threshold is the double 0.85. eff(5) =
 * 2.55 / 3 is exactly 0.85 in reals: in float 255.f / 100 = 2.5499999523
 * and / 3 = 0.84999996 (0x1.b33332p-1) < 0.85, so s = 5 fails; eff(6) =
 * 3.06 / 4 = 0.765, eff(7) = 3.57 / 4 = 0.8925 passes: S = 7. In double
 * eff(5) = 0.85 passes and S would be 5. per = ceil(745 / 7) = 107 blocks.
 */
static const hcase fa3_float_cases[] = {
	{__LINE__, SKV_HEUR_FA3, IN(104, 1, 1, 131072, 128, 130, 2, 0, 0, 0, 0), 1, 131120, 2, {0, 131072}},
	{__LINE__, SKV_HEUR_FA3, IN(103, 1, 1, 131072, 128, 130, 2, 0, 0, 0, 0), 5, 149 * 176, 0, {0}},
	{__LINE__, SKV_HEUR_FA3, IN(51, 1, 1, 131072, 128, 100, 2, 0, 0, 0, 0), 7, 107 * 176, 0, {0}},
};

/*
 * FA3's L2 exception: with total_mblocks >= 0.8f x num_SMs FA3 still splits
 * when one KV head (seqlen_k (d + dv) 2 bytes) exceeds 50 MiB = 52428800 and
 * num_m_blocks >= 2 num_SMs. Decode reaches it only through PackGQA: 1 SM
 * (0.8f <= every total), 256 query heads on 1 KV head: num_m_blocks =
 * ceil(256 / 128) = 2 >= 2. S = min(ceil(size / 50 MiB), 128):
 * - ctx 131072: size 131072 x 256 x 2 = 67108864, ceil(1.28) = 2; per =
 *   ceil(745 / 2) = 373 blocks = 65648 keys.
 * - ctx 102400: size = 52428800, not above the L2: S = 1.
 * - ctx 102401: 2 (per = ceil(582 / 2) = 291 blocks = 51216 keys).
 * - ctx 409600: exactly 4 x 50 MiB: 4; ctx 409601: 5.
 * - ctx 4091904, the largest FA3's int sum size + 50 MiB - 1 holds:
 *   size 2095054848, ceil(39.96) = 40: the 128 cap cannot be reached
 *   with int sizes (at most ceil(INT_MAX / 50 MiB) = 41).
 * - 128 query heads (num_m_blocks 1 < 2): S = 1 at any length.
 */
static const hcase fa3_l2_cases[] = {
	{__LINE__, SKV_HEUR_FA3, IN(1, 256, 1, 131072, 128, 1, 2, 0, 0, 0, 0), 2, 65648, 3, {0, 65648, 131072}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 256, 1, 102400, 128, 1, 2, 0, 0, 0, 0), 1, 582 * 176, 2, {0, 102400}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 256, 1, 102401, 128, 1, 2, 0, 0, 0, 0), 2, 51216, 3, {0, 51216, 102401}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 256, 1, 409600, 128, 1, 2, 0, 0, 0, 0), 4, 582 * 176, 0, {0}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 256, 1, 409601, 128, 1, 2, 0, 0, 0, 0), 5, 466 * 176, 0, {0}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 256, 1, 4091904, 128, 1, 2, 0, 0, 0, 0), 40, 582 * 176, 0, {0}},
	{__LINE__, SKV_HEUR_FA3, IN(1, 128, 1, 4091904, 128, 1, 2, 0, 0, 0, 0), 1, 23250 * 176, 0, {0}},
};

static void test_fa3(void **state)
{
	(void)state;
	run_cases(fa3_cases, NELEM(fa3_cases));
	run_cases(fa3_float_cases, NELEM(fa3_float_cases));
	run_cases(fa3_l2_cases, NELEM(fa3_l2_cases));
	const skv_heur_input big = IN(1, 256, 1, 4091905, 128, 1, 2, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_FA3, &big)); /* one key more overflows FA3's int */
	const skv_heur_input e3 = IN(1, 32, 8, 1024, 128, 132, 3, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_FA3, &e3));
	const skv_heur_input d257 = IN(1, 32, 8, 1024, 257, 132, 2, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_FA3, &d257));
}

/*
 * FA2 through the table is the existing transcription: the same split count
 * as skv_fa2_decode_init + skv_fa2_num_splits and the bounds of
 * skv_fa2_bounds, over a grid of shapes. The brief's case (batch 1, 32/8
 * heads, ctx 131072, d 128, 132 SMs): folded GQA, bhm 8, num_SMs 264, 1024
 * blocks; 8 s / 264 is below a wave up to s = 32 (0.970); s = 33 (exactly
 * one wave) is ineligible (ceil(1024/33) = ceil(1024/32) = 32) and so are
 * 66 and 99, so the best eligible efficiency is 0.970 (s = 32, 64, 128) and
 * the threshold 0.824: s = 27 gives 0.818, s = 28 gives 0.848 and is
 * eligible (ceil 37 vs 38): S = 28, 37 blocks of 128 keys per split.
 */
static void test_fa2_mapping(void **state)
{
	(void)state;
	static const hcase brief[] = {
		{__LINE__, SKV_HEUR_FA2, IN(1, 32, 8, 131072, 128, 132, 0, 0, 0, 0, 0), 28, 37 * 128, 0, {0}},
	};
	run_cases(brief, NELEM(brief));
	static const unsigned batches[] = {1, 3, 8, 64}, ctxs[] = {1, 700, 4096, 131072}, hds[] = {64, 128, 256};
	static const unsigned heads[][2] = {{32, 32}, {32, 8}, {64, 1}};
	for (size_t a = 0; a < NELEM(batches); a++)
		for (size_t c = 0; c < NELEM(ctxs); c++)
			for (size_t h = 0; h < NELEM(heads); h++)
				for (size_t d = 0; d < NELEM(hds); d++) {
					const skv_heur_input in =
						IN(batches[a], heads[h][0], heads[h][1], ctxs[c], hds[d], 108, 0, 0, 0, 0, 0);
					skv_fa2_decode f;
					unsigned s;
					skv_heur_plan p;
					CHECK_OK(skv_fa2_decode_init(&f, in.batch, in.heads, in.kv_heads, in.ctx,
								     in.head_dim, in.sm_count));
					CHECK_OK(skv_fa2_num_splits(&s, f.batch_nheads_mblocks, f.num_sms, f.num_n_blocks,
								    SKV_FA2_MAX_SPLITS));
					size_t *b = plan_of(&p, SKV_HEUR_FA2, &in, __LINE__), want[SKV_FA2_MAX_SPLITS + 1];
					CHECK_OK(skv_fa2_bounds(want, in.ctx, f.block_n, s));
					if (p.splits != s || memcmp(b, want, (s + 1) * sizeof *b) != 0)
						fail_msg("%s:%d: batch %u heads %u/%u ctx %u d %u: S %u vs FA2 %u", __FILE__,
							 __LINE__, in.batch, in.heads, in.kv_heads, in.ctx, in.head_dim,
							 p.splits, s);
					check_layout(SKV_HEUR_FA2, &in, &p, b, __LINE__);
					free(b);
				}
}

/*
 * FlashInfer (fb28d7242b35, scheduler.cuh), page size 16, 132 SMs, one
 * block per SM (max_grid 132), 32/8 heads (gdy 8):
 * - ctx 131072: 8192 pages, batch x gdy = 8 < 132; the smallest chunk c in
 *   [128/16 = 8, 8192] with ceil(8192 / c) x 8 <= 132, i.e. ceil(8192 / c)
 *   <= 16: c = 512 pages = 8192 keys, 16 chunks.
 * - batch 17: 17 x 8 = 136 >= 132: no split, one chunk of all the pages.
 * - ctx 100: 7 pages, below the lower bound of 8 pages: the search does not
 *   run, chunk 8 pages, one chunk.
 * - ctx 1000: 63 pages; any c >= 4 fits (ceil(63/4) x 8 = 128), the lower
 *   bound 8 wins: 8 chunks of 128 keys, the last 104.
 * - page 1: lower bound 128 pages, c = 8192 pages: 16 x 8192 keys; page
 *   256: lower bound max(0, 1) = 1, 512 pages, c = 32 pages = 8192 keys.
 * - 2 blocks per SM (max_grid 264): ceil(8192 / c) <= 33: c = 249 (248
 *   gives 34): 33 chunks of 3984 keys, the last 131072 - 32 x 3984 = 3584.
 * - batch 4: 4 x ceil(8192 / c) x 8 <= 132: ceil <= 4, c = 2048 pages.
 */
static const hcase flashinfer_cases[] = {
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 32, 8, 131072, 128, 132, 0, 1, 16, 0, 0), 16, 8192, 0, {0}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(17, 32, 8, 131072, 128, 132, 0, 1, 16, 0, 0), 1, 131072, 2, {0, 131072}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 32, 8, 100, 128, 132, 0, 1, 16, 0, 0), 1, 128, 2, {0, 100}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 32, 8, 1000, 128, 132, 0, 1, 16, 0, 0), 8, 128, 9,
	 {0, 128, 256, 384, 512, 640, 768, 896, 1000}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 32, 8, 131072, 128, 132, 0, 1, 1, 0, 0), 16, 8192, 0, {0}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 32, 8, 131072, 128, 132, 0, 1, 256, 0, 0), 16, 8192, 0, {0}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 32, 8, 131072, 128, 132, 0, 2, 16, 0, 0), 33, 3984, 0, {0}},
	{__LINE__, SKV_HEUR_FLASHINFER, IN(4, 32, 8, 131072, 128, 132, 0, 1, 16, 0, 0), 4, 32768, 5,
	 {0, 32768, 65536, 98304, 131072}},
	/* one key, 1 SM: batch x gdy = 1 >= max_grid 1, no split: one chunk of
	 * the one page */
	{__LINE__, SKV_HEUR_FLASHINFER, IN(1, 1, 1, 1, 64, 1, 0, 1, 1, 0, 0), 1, 1, 2, {0, 1}},
};

static void test_flashinfer(void **state)
{
	(void)state;
	run_cases(flashinfer_cases, NELEM(flashinfer_cases));
	/* cascade.cuh:704-707: vec = max(16 / bytes, d / 32), bdx = d / vec,
	 * bdy = 128 / bdx. 16-bit partials: d 64 -> vec 8, bdx 8, bdy 16;
	 * 128 -> 8, 16, 8; 256 -> 8, 32, 4; 512 -> 16, 32, 4. fp32: 64 -> 4,
	 * 16, 8; 128 -> 4, 32, 4. */
	static const unsigned rows[][5] = {{64, 2, 8, 8, 16},  {128, 2, 8, 16, 8}, {256, 2, 8, 32, 4},
					   {512, 2, 16, 32, 4}, {64, 4, 4, 16, 8}, {128, 4, 4, 32, 4}};
	for (size_t i = 0; i < NELEM(rows); i++) {
		unsigned v, x, y;
		CHECK_OK(skv_flashinfer_merge_layout(&v, &x, &y, rows[i][0], rows[i][1]));
		if (v != rows[i][2] || x != rows[i][3] || y != rows[i][4])
			fail_msg("%s:%d: d %u bytes %u: vec %u bdx %u bdy %u", __FILE__, __LINE__, rows[i][0],
				 rows[i][1], v, x, y);
	}
	unsigned v = 7, x = 7, y = 7;
	assert_int_equal(skv_flashinfer_merge_layout(&v, &x, &y, 96, 2), SKV_EINVAL);
	assert_int_equal(skv_flashinfer_merge_layout(&v, &x, &y, 128, 1), SKV_EINVAL);
	assert_int_equal(skv_flashinfer_merge_layout(NULL, &x, &y, 128, 2), SKV_EINVAL);
	assert_true(v == 7 && x == 7 && y == 7);
	static const skv_heur_input bad[] = {
		IN(1, 40, 8, 1024, 128, 132, 0, 1, 16, 0, 0), /* group 5 */
		IN(1, 32, 8, 1024, 96, 132, 0, 1, 16, 0, 0),  /* head_dim 96 */
		IN(1, 32, 8, 1024, 128, 132, 0, 0, 16, 0, 0), /* no occupancy */
		IN(1, 32, 8, 1024, 128, 132, 0, 1, 0, 0, 0),  /* no page size */
		IN(65536, 32, 8, 65536, 128, 132, 0, 1, 1, 0, 0), /* 2^16 x 2^16 x 8 pages overflow uint32 */
	};
	for (size_t i = 0; i < NELEM(bad); i++)
		assert_non_null(skv_heur_invalid(SKV_HEUR_FLASHINFER, &bad[i]));
}

/*
 * vLLM paged_attention_v2: partitions of 512 keys, S = ceil(n / 512):
 * 1 key -> 1; 512 -> 1; 513 -> 2 (the second holds 1 key); 131072 -> 256.
 * xformers (4c82fc33, CUDA get_split_k), Mq = 1:
 * - 1 x 32/8 (GQA: one head after the swap, bh = 1), Mk 131072: 131072 //
 *   1 = 131072; chunk 128; halve while > 1024: to 1024; cap 64: 64 splits of
 *   2048 keys.
 * - 1 x 32 MHA (bh 32), Mk 4096: 4096 // 32 = 128; chunk 128, 128 > 32 ->
 *   64 -> 32: 32 splits of 128.
 * - GQA bh 1, Mk 500: 1024 // 1; chunk 64 (Mk <= 512, bh <= 64), stop
 *   7.8125: 1024 -> ... -> 8 -> 4: 4 splits of 125. Mk 512: stop 8 exactly,
 *   8 is not above it: 8 of 64; Mk 511: 4 of 128 (ceil(511/4)); Mk 513:
 *   chunk 128, stop 4.008: 4 splits of 129, the last 126.
 * - 8 x 32/8 GQA: bh = 8 (not 256: H is 1 after the swap), Mk 4096: 4096 //
 *   8 = 512, chunk 128, stop 32: 512 -> ... -> 32: 32 splits of 128 (with
 *   bh 256 it would be 16).
 * - 64 x 32 MHA (bh 2048), Mk 4096: 4096 // 2048 = 2; Mk 1024: 0 -> 1.
 * - 2 x 32 MHA (bh 64), Mk 512: 1024 // 64 = 16, chunk 64, stop 8: 8 of 64;
 *   3 x 32 (bh 96 > 64): 1024 // 96 = 10, chunk 128, stop 4: 10 -> 5 -> 2:
 *   2 of 256.
 * No empty split: S <= Mk / 64 makes (S - 1) ceil(Mk / S) < Mk.
 */
static const hcase vllm_xformers_cases[] = {
	{__LINE__, SKV_HEUR_VLLM_V2, IN(1, 32, 8, 1, 128, 132, 0, 0, 0, 0, 0), 1, 512, 2, {0, 1}},
	{__LINE__, SKV_HEUR_VLLM_V2, IN(1, 32, 8, 512, 128, 132, 0, 0, 0, 0, 0), 1, 512, 2, {0, 512}},
	{__LINE__, SKV_HEUR_VLLM_V2, IN(1, 32, 8, 513, 128, 132, 0, 0, 0, 0, 0), 2, 512, 3, {0, 512, 513}},
	{__LINE__, SKV_HEUR_VLLM_V2, IN(256, 32, 8, 131072, 80, 1, 0, 0, 0, 0, 0), 256, 512, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 32, 8, 131072, 128, 132, 0, 0, 0, 0, 0), 64, 2048, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 32, 32, 4096, 128, 132, 0, 0, 0, 0, 0), 32, 128, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 32, 8, 500, 128, 132, 0, 0, 0, 0, 0), 4, 125, 5, {0, 125, 250, 375, 500}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 32, 8, 512, 128, 132, 0, 0, 0, 0, 0), 8, 64, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 32, 8, 511, 128, 132, 0, 0, 0, 0, 0), 4, 128, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 32, 8, 513, 128, 132, 0, 0, 0, 0, 0), 4, 129, 5, {0, 129, 258, 387, 513}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(8, 32, 8, 4096, 128, 132, 0, 0, 0, 0, 0), 32, 128, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(64, 32, 32, 4096, 128, 132, 0, 0, 0, 0, 0), 2, 2048, 3, {0, 2048, 4096}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(64, 32, 32, 1024, 128, 132, 0, 0, 0, 0, 0), 1, 1024, 2, {0, 1024}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(2, 32, 32, 512, 128, 1, 0, 0, 0, 0, 0), 8, 64, 0, {0}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(3, 32, 32, 512, 128, 1, 0, 0, 0, 0, 0), 2, 256, 3, {0, 256, 512}},
	{__LINE__, SKV_HEUR_XFORMERS, IN(1, 1, 1, 1, 64, 1, 0, 0, 0, 0, 0), 1, 1, 2, {0, 1}},
};

static void test_vllm_xformers(void **state)
{
	(void)state;
	run_cases(vllm_xformers_cases, NELEM(vllm_xformers_cases));
	const skv_heur_input d100 = IN(1, 32, 8, 1024, 100, 132, 0, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_VLLM_V2, &d100));
}

/*
 * SGLang (triton_backend.py 00858422, metadata.py bdd1bcdf,
 * decode_attention.py 03cd2ec4), 132 SMs, 32/8 heads (kv group 4, block_h
 * 4, token_grid = 1 x ceil(32 / 4) = 8):
 * - ctx 131072, cap 8: ext = 131072 / 64 = 2048, log2 11, 132 x 11 = 1452,
 *   cdiv(1452, 8) = 182 -> cap 8; chunk cdiv(131072, 8) = 16384: 8 splits
 *   of 16384 (a multiple of 32).
 * - ctx 100, cap 8: log2(1.5625) = 0.64 -> 1, ext_cores 132, cdiv(132, 8) =
 *   17 -> 8; chunk cdiv(100, 8) = 13, S = cdiv(100, 13) = 8; split length
 *   cdiv(13, 32) x 32 = 32: 4 splits of keys, 4 empty.
 * - ctx 10: chunk cdiv(10, 8) = 2, S = 5; length 32: one split, 4 empty.
 * - 256 x 32 MHA: token_grid 8192 > 1452: one split.
 * - deterministic, 256-key tiles: ctx 256 -> 1; 257 -> 2, length cdiv(129,
 *   32) x 32 = 160; 300 -> 2, length 160; 131072 -> 512 (not capped at 8).
 * The fp32 core count (float vs double): 1 x 32 MHA (token_grid 32), cap
 * 64, ctx 785544: ext = 12274.125, log2 = 13.58333256... rounds to the
 * float 13.583333015 (0x1.b2aaaap+3), 132 x that = 1792.99996 rounds to
 * the float 1793: ext_cores 1793, cdiv(1793, 32) = 57, chunk cdiv(785544,
 * 57) = 13782, S = 57, length 431 x 32 = 13792. In double 132 x 13.58333256
 * = 1792.9999 truncates to 1792, cdiv = 56 and S = 56. Likewise 1 x 1 head,
 * cap 4096, ctx 49355: float 9.59090900 (0x1.32e8bap+3) x 132 = 1266 exactly
 * in float (double: 1265.99994 -> 1265): S = cdiv(49355, cdiv(49355, 1266) =
 * 39) = 1266, length cdiv(39, 32) x 32 = 64: 772 splits hold keys, 494 are
 * empty; double would give 1234.
 */
static const hcase sglang_cases[] = {
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 8, 131072, 128, 132, 0, 0, 0, 0, 0), 8, 16384, 0, {0}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 8, 100, 128, 132, 0, 0, 0, 8, 0), 8, 32, 9,
	 {0, 32, 64, 96, 100, 100, 100, 100, 100}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 8, 10, 128, 132, 0, 0, 0, 0, 0), 5, 32, 6, {0, 10, 10, 10, 10, 10}},
	{__LINE__, SKV_HEUR_SGLANG, IN(256, 32, 32, 8192, 128, 132, 0, 0, 0, 0, 0), 1, 8192, 2, {0, 8192}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 8, 256, 128, 132, 0, 0, 0, 0, 1), 1, 256, 2, {0, 256}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 8, 257, 128, 132, 0, 0, 0, 0, 1), 2, 160, 3, {0, 160, 257}},
	{__LINE__, SKV_HEUR_SGLANG, IN(7, 32, 8, 300, 128, 132, 0, 0, 0, 0, 1), 2, 160, 3, {0, 160, 300}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 8, 131072, 128, 132, 0, 0, 0, 0, 1), 512, 256, 0, {0}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 32, 32, 785544, 128, 132, 0, 0, 0, 64, 0), 57, 13792, 0, {0}},
	{__LINE__, SKV_HEUR_SGLANG, IN(1, 1, 1, 49355, 128, 132, 0, 0, 0, 4096, 0), 1266, 64, 0, {0}},
};

/*
 * Flex (flex_decoding.py 00804f38): SPLIT_KV = max(num_SM // (B Hkv) x 2, 1),
 * independent of the length; TILE_KV = ceil(ceil(n / S) / 64) x 64.
 * - 1 x 8 KV heads, 132 SMs: 132 // 8 = 16, x 2 = 32; ctx 131072: 4096.
 * - 8 x 32 KV heads: 132 // 256 = 0 -> 1.
 * - bh 132: 1 x 2 = 2; bh 67: 132 // 67 = 1 -> 2; bh 66: 4.
 * - 1 x 8, ctx 1000: S 32, ceil(1000 / 32) = 32 -> tile 64: 16 splits hold
 *   keys (the last 40), 16 are empty.
 * llama.cpp CUDA vec kernel (fattn-common.cuh 7c95e797, fattn-vec.cuh
 * 026f95b1), 32/8 heads (ntiles_total 32), 132 SMs:
 * - 2 blocks per SM, ctx 131072, D 128: ntiles_KQ 1024, start P = 2,
 *   blocks_per_wave 264: P = 2..8 give 64 .. 256 blocks in one wave, eff
 *   24 36 .. 96 (25600 / 264); P = 9: 288 blocks, 2 waves, eff 54, and the
 *   best 96 >= 95 with more waves stops the search: P = 8; 1024 tiles.
 * - 1 block per SM, ctx 256, D 128: ntiles_KQ 2: eff 24, 48: P = 2, one
 *   128-key tile each. D 64: ntiles_KQ = 4 (nbatch_fa = D): P = 4 but only
 *   2 tiles of 128 keys: blocks 2 and 3 are empty. D 256: ntiles_KQ 1, P 1.
 * - ctx 300, D 128: 3 tiles, P = 3, the last tile 44 keys.
 * - 8 x 32 heads: 256 blocks = 2 waves of 132, eff 96 at P = 1; P = 2 is 4
 *   waves: stop, P = 1.
 */
static const hcase flex_llama_cases[] = {
	{__LINE__, SKV_HEUR_FLEX, IN(1, 32, 8, 131072, 128, 132, 0, 0, 0, 0, 0), 32, 4096, 0, {0}},
	{__LINE__, SKV_HEUR_FLEX, IN(8, 32, 32, 131072, 128, 132, 0, 0, 0, 0, 0), 1, 131072, 2, {0, 131072}},
	{__LINE__, SKV_HEUR_FLEX, IN(1, 132, 132, 4096, 128, 132, 0, 0, 0, 0, 0), 2, 2048, 3, {0, 2048, 4096}},
	{__LINE__, SKV_HEUR_FLEX, IN(1, 67, 67, 4096, 128, 132, 0, 0, 0, 0, 0), 2, 2048, 3, {0, 2048, 4096}},
	{__LINE__, SKV_HEUR_FLEX, IN(1, 66, 66, 4096, 128, 132, 0, 0, 0, 0, 0), 4, 1024, 0, {0}},
	{__LINE__, SKV_HEUR_FLEX, IN(1, 32, 8, 1000, 128, 132, 0, 0, 0, 0, 0), 32, 64, 33,
	 {0,    64,   128,  192,  256,  320,  384,  448,  512,  576,  640,  704,  768,  832,  896,  960, 1000,
	  1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(1, 32, 8, 131072, 128, 132, 0, 2, 0, 0, 0), 8, 128, 0, {0}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(1, 32, 8, 256, 128, 132, 0, 1, 0, 0, 0), 2, 128, 3, {0, 128, 256}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(1, 32, 8, 256, 64, 132, 0, 1, 0, 0, 0), 4, 128, 3, {0, 128, 256}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(1, 32, 8, 256, 256, 132, 0, 1, 0, 0, 0), 1, 128, 3, {0, 128, 256}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(1, 32, 8, 300, 128, 132, 0, 1, 0, 0, 0), 3, 128, 4, {0, 128, 256, 300}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(8, 32, 8, 131072, 128, 132, 0, 1, 0, 0, 0), 1, 128, 0, {0}},
	{__LINE__, SKV_HEUR_LLAMACPP_CUDA, IN(1, 1, 1, 1, 64, 1, 0, 1, 0, 0, 0), 1, 128, 2, {0, 1}},
};

static void test_sglang_flex_llamacpp(void **state)
{
	(void)state;
	run_cases(sglang_cases, NELEM(sglang_cases));
	run_cases(flex_llama_cases, NELEM(flex_llama_cases));
	const skv_heur_input g3 = IN(1, 24, 8, 1000, 128, 132, 0, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_FLEX, &g3)); /* group 3: not flex decoding */
	const skv_heur_input d96 = IN(1, 32, 8, 1000, 96, 132, 0, 1, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_LLAMACPP_CUDA, &d96));
	const skv_heur_input sg = IN(2, 32, 8, 1u << 30, 128, 132, 0, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_SGLANG, &sg)); /* 2^31 keys in int32 kv_indptr */
}

/* A deterministic sweep of the whole input space the systems share: every
 * accepted input has a layout with the properties of check_layout. */
static void test_layout_sweep(void **state)
{
	(void)state;
	static const unsigned dims[] = {64, 128, 256};
	static const unsigned heads[][2] = {{32, 32}, {32, 8}, {64, 8}, {8, 1}, {28, 4}};
	uint64_t x = 0x243f6a8885a308d3u; /* a fixed LCG seed */
	unsigned accepted = 0;
	for (int k = 0; k < 1500; k++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		const unsigned r = (unsigned)(x >> 33);
		const unsigned ctx = r % 4 == 0 ? 1 + r % 97 : 1 + r % 300000;
		const skv_heur_input in = IN(1 + (r >> 3) % 40, heads[(r >> 9) % 5][0], heads[(r >> 9) % 5][1], ctx,
					     dims[(r >> 12) % 3], 1 + (r >> 14) % 160, 1 + (r >> 22) % 2,
					     1 + (r >> 23) % 4, 1u << ((r >> 25) % 6), (r >> 28) % 3 * 16, (r >> 30) & 1);
		for (unsigned s = 0; s < SKV_HEUR_NSYSTEMS; s++) {
			if (skv_heur_invalid((skv_heur_system)s, &in))
				continue;
			skv_heur_plan p;
			size_t *b = plan_of(&p, (skv_heur_system)s, &in, __LINE__);
			check_layout((skv_heur_system)s, &in, &p, b, __LINE__);
			free(b);
			accepted++;
		}
	}
	assert_true(accepted > 8000); /* most draws are in every domain */
}

/* The layout of a forced count: check_layout's rules for every system and
 * count; the system's own count gives skv_heur_splits' plan exactly for the
 * systems that choose a count (flashinfer and vllm-v2 choose a chunk size,
 * so their forced layout at their own count may differ); pinned cases from
 * each rule by hand; and the count out of range refused. */
static size_t *forced(skv_heur_plan *p, skv_heur_system s, const skv_heur_input *in, unsigned S, int line)
{
	CHECK_OK(skv_heur_layout(p, NULL, 0, s, in, S));
	size_t *b = malloc(p->nbounds * sizeof *b);
	assert_non_null(b);
	skv_heur_plan q;
	CHECK_OK(skv_heur_layout(&q, b, p->nbounds, s, in, S));
	assert_memory_equal(&q, p, sizeof q);
	check_layout(s, in, p, b, line);
	return b;
}

static void test_forced_layout(void **state)
{
	(void)state;
	uint64_t x = 0x13198a2e03707344u;
	static const unsigned dims[] = {64, 128, 256}, counts[] = {1, 2, 3, 7, 64, 1000};
	for (int k = 0; k < 300; k++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		const unsigned r = (unsigned)(x >> 33);
		const skv_heur_input in = IN(1 + r % 8, 32, 8, 1 + (r >> 3) % 70000, dims[(r >> 20) % 3], 1 + (r >> 22) % 160,
					     2, 1 + (r >> 29) % 2, 16, 0, 0);
		for (unsigned s = 0; s < SKV_HEUR_NSYSTEMS; s++) {
			const skv_heur_system sys = (skv_heur_system)s;
			if (skv_heur_invalid(sys, &in))
				continue;
			skv_heur_plan own, p;
			size_t *b0 = plan_of(&own, sys, &in, __LINE__);
			size_t *b1 = forced(&p, sys, &in, own.splits, __LINE__);
			if (sys != SKV_HEUR_FLASHINFER && sys != SKV_HEUR_VLLM_V2 &&
			    (memcmp(&own, &p, sizeof p) != 0 || memcmp(b0, b1, p.nbounds * sizeof *b0) != 0))
				fail_msg("%s:%d: %s ctx %u: the layout at its own count %u is not its plan", __FILE__,
					 __LINE__, skv_heur_name(sys), in.ctx, own.splits);
			free(b0);
			free(b1);
			for (size_t c = 0; c < NELEM(counts) && counts[c] <= in.ctx; c++) {
				size_t *b = forced(&p, sys, &in, counts[c], __LINE__);
				const int chunked = sys == SKV_HEUR_FLASHINFER || sys == SKV_HEUR_VLLM_V2;
				if (chunked ? p.splits > counts[c] : p.splits != counts[c])
					fail_msg("%s:%d: %s: %u splits asked, %u planned", __FILE__, __LINE__,
						 skv_heur_name(sys), counts[c], p.splits);
				free(b);
			}
		}
	}
	const skv_heur_input in = IN(1, 32, 8, 1000, 128, 132, 2, 1, 16, 0, 0);
	static const struct {
		skv_heur_system sys;
		unsigned S, splits;
		size_t span;
	} pin[] = {
		/* 63 pages of 16: chunks of ceil(63 / S) pages */
		{SKV_HEUR_FLASHINFER, 4, 4, 256},
		{SKV_HEUR_FLASHINFER, 10, 9, 112}, /* 7 pages: ceil(63 / 7) = 9 chunks */
		/* partitions ceil(1000 / S) rounded up to 16 */
		{SKV_HEUR_VLLM_V2, 3, 3, 336},
		{SKV_HEUR_VLLM_V2, 64, 63, 16},
		{SKV_HEUR_SGLANG, 3, 3, 352},   /* 334 up to 32 */
		{SKV_HEUR_SGLANG, 30, 30, 64},  /* 34 up to 64: 16 splits cover the keys, 14 empty */
		{SKV_HEUR_FLEX, 3, 3, 384},     /* 334 up to 64 */
		{SKV_HEUR_XFORMERS, 3, 3, 334},
		{SKV_HEUR_LLAMACPP_CUDA, 3, 3, 128},
	};
	for (size_t i = 0; i < NELEM(pin); i++) {
		skv_heur_plan p;
		size_t *b = forced(&p, pin[i].sys, &in, pin[i].S, __LINE__);
		if (p.splits != pin[i].splits || p.span != pin[i].span)
			fail_msg("%s:%d: %s S %u: %u splits span %zu, expected %u span %zu", __FILE__, __LINE__,
				 skv_heur_name(pin[i].sys), pin[i].S, p.splits, p.span, pin[i].splits, pin[i].span);
		free(b);
	}
	/* FA2's forced layout is skv_fa2_bounds at its block_n */
	skv_fa2_decode f;
	CHECK_OK(skv_fa2_decode_init(&f, 1, 32, 8, 1000, 128, 132));
	size_t want[8], *b;
	skv_heur_plan p;
	CHECK_OK(skv_fa2_bounds(want, 1000, f.block_n, 7));
	b = forced(&p, SKV_HEUR_FA2, &in, 7, __LINE__);
	assert_memory_equal(b, want, 8 * sizeof *b);
	free(b);
	assert_int_equal(skv_heur_layout(&p, NULL, 0, SKV_HEUR_FA2, &in, 0), SKV_EINVAL);
	assert_int_equal(skv_heur_layout(&p, NULL, 0, SKV_HEUR_FA2, &in, 1001), SKV_EINVAL);
}

/* Bad input: SKV_EINVAL or SKV_ERANGE, the plan and the bounds untouched. */
static void test_errors(void **state)
{
	(void)state;
	const skv_heur_input ok = IN(1, 32, 8, 1000, 128, 132, 2, 1, 16, 0, 0);
	skv_heur_plan p = {77, 77, 77, 77}, q;
	size_t b[4] = {9, 9, 9, 9};
	assert_int_equal(skv_heur_splits(NULL, b, 4, SKV_HEUR_FA3, &ok), SKV_EINVAL);
	assert_int_equal(skv_heur_splits(&p, b, 4, SKV_HEUR_FA3, NULL), SKV_EINVAL);
	assert_int_equal(skv_heur_splits(&p, b, 4, (skv_heur_system)SKV_HEUR_NSYSTEMS, &ok), SKV_EINVAL);
	assert_non_null(skv_heur_invalid((skv_heur_system)99, &ok));
	assert_non_null(skv_heur_invalid(SKV_HEUR_FA3, NULL));
	static const skv_heur_input bad[] = {
		IN(0, 32, 8, 1000, 128, 132, 2, 1, 16, 0, 0), IN(1, 0, 8, 1000, 128, 132, 2, 1, 16, 0, 0),
		IN(1, 32, 0, 1000, 128, 132, 2, 1, 16, 0, 0), IN(1, 32, 8, 0, 128, 132, 2, 1, 16, 0, 0),
		IN(1, 32, 8, 1000, 0, 132, 2, 1, 16, 0, 0),   IN(1, 32, 8, 1000, 128, 0, 2, 1, 16, 0, 0),
		IN(1, 32, 6, 1000, 128, 132, 2, 1, 16, 0, 0), /* 32 heads over 6 KV heads */
	};
	for (size_t i = 0; i < NELEM(bad); i++)
		for (unsigned s = 0; s < SKV_HEUR_NSYSTEMS; s++) {
			assert_non_null(skv_heur_invalid((skv_heur_system)s, &bad[i]));
			assert_int_equal(skv_heur_splits(&p, b, 4, (skv_heur_system)s, &bad[i]), SKV_EINVAL);
		}
	/* fa3 at 1000 keys: 6 blocks, S = 6 needs 7 bounds */
	CHECK_OK(skv_heur_splits(&q, NULL, 0, SKV_HEUR_FA3, &ok));
	assert_int_equal(q.nbounds, q.splits + 1);
	assert_true(q.nbounds > 4);
	assert_int_equal(skv_heur_splits(&p, b, 4, SKV_HEUR_FA3, &ok), SKV_ERANGE);
	assert_true(p.splits == 77 && p.tile == 77 && p.span == 77 && p.nbounds == 77);
	for (size_t i = 0; i < NELEM(b); i++)
		assert_int_equal(b[i], 9);
}

/* The largest inputs each domain takes, planned without bounds. */
static void test_largest(void **state)
{
	(void)state;
	skv_heur_plan p;
	/* vLLM: INT_MAX keys, ceil(2147483647 / 512) = 4194304 partitions */
	const skv_heur_input v = IN(1, 32, 8, INT_MAX, 128, 132, 0, 0, 0, 0, 0);
	CHECK_OK(skv_heur_splits(&p, NULL, 0, SKV_HEUR_VLLM_V2, &v));
	assert_int_equal(p.splits, 4194304);
	assert_int_equal(p.nbounds, 4194305);
	const skv_heur_input v1 = IN(1, 32, 8, (unsigned)INT_MAX + 1u, 128, 132, 0, 0, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_VLLM_V2, &v1));
	/* xformers at UINT_MAX keys, GQA: 4294967295 // 1 halves to 33554431
	 * <= 4294967295 / 128 = 33554431.99; cap 64 */
	const skv_heur_input x = IN(1, 32, 8, UINT_MAX, 128, 132, 0, 0, 0, 0, 0);
	CHECK_OK(skv_heur_splits(&p, NULL, 0, SKV_HEUR_XFORMERS, &x));
	assert_int_equal(p.splits, 64);
	assert_int_equal(p.span, 67108864); /* ceil(4294967295 / 64) */
	/* SGLang at INT32_MAX keys, deterministic: ceil(2^31 - 1 / 256) = 2^23 */
	const skv_heur_input sg = IN(1, 32, 8, INT_MAX, 128, 132, 0, 0, 0, 0, 1);
	CHECK_OK(skv_heur_splits(&p, NULL, 0, SKV_HEUR_SGLANG, &sg));
	assert_int_equal(p.splits, 8388608);
	/* FlashInfer: 2^32 - 1 keys in pages of 4 are 2^30 pages (pages must
	 * stay an int32); 1 x 1 < 132 blocks; the smallest chunk with
	 * ceil(2^30 / c) <= 132 is c = 8134408 (8134407 x 132 = 1073741724 <
	 * 2^30): 132 chunks of 32537632 keys */
	const skv_heur_input fi = IN(1, 1, 1, UINT_MAX, 128, 132, 0, 1, 4, 0, 0);
	CHECK_OK(skv_heur_splits(&p, NULL, 0, SKV_HEUR_FLASHINFER, &fi));
	assert_int_equal(p.splits, 132);
	assert_int_equal(p.span, 32537632);
	const skv_heur_input fi1 = IN(2, 1, 1, UINT_MAX, 128, 132, 0, 1, 1, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_FLASHINFER, &fi1));
	/* llama.cpp: 100 x heads x batch x ntiles_KQ must stay in int */
	const skv_heur_input ll = IN(1, 32, 8, 1u << 20, 64, 132, 0, 1, 0, 0, 0);
	CHECK_OK(skv_heur_splits(&p, NULL, 0, SKV_HEUR_LLAMACPP_CUDA, &ll));
	const skv_heur_input ll1 = IN(64, 32, 8, 1u << 20, 64, 132, 0, 1, 0, 0, 0);
	assert_non_null(skv_heur_invalid(SKV_HEUR_LLAMACPP_CUDA, &ll1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),	       cmocka_unit_test(test_fa3),
		cmocka_unit_test(test_fa2_mapping),    cmocka_unit_test(test_flashinfer),
		cmocka_unit_test(test_vllm_xformers),  cmocka_unit_test(test_sglang_flex_llamacpp),
		cmocka_unit_test(test_layout_sweep),   cmocka_unit_test(test_forced_layout),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_largest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
