/* test_occupancy.c - FA2's split heuristic against hand-computed cases and an MPFR emulation of its float arithmetic. */
#include <limits.h>
#include <mpfr.h>

#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The heuristic through the decode helper, as FA2 calls it. */
static unsigned fa2_pick(unsigned batch, unsigned heads, unsigned kv, unsigned ctx, unsigned d, unsigned sm,
			 skv_fa2_decode *out)
{
	skv_fa2_decode f;
	unsigned s = 0;
	CHECK_OK(skv_fa2_decode_init(&f, batch, heads, kv, ctx, d, sm));
	CHECK_OK(skv_fa2_num_splits(&s, f.batch_nheads_mblocks, f.num_sms, f.num_n_blocks, SKV_FA2_MAX_SPLITS));
	if (out)
		*out = f;
	return s;
}

#define CHECK_PICK(got, want, what)                                                                  \
	do {                                                                                         \
		unsigned g_ = (got), w_ = (want);                                                    \
		if (g_ != w_)                                                                        \
			fail_msg("%s:%d: %s: FA2 picks %u, expected %u", __FILE__, __LINE__, (what), g_, \
				 w_);                                                                \
	} while (0)

/*
 * The 0.8 x SMs early return, at its boundary. H100 SXM: 132 SMs, FA2 passes
 * num_SMs = 264. In float, 0.8f * 264 = 211.1999969... (0x1.a66666p+7).
 * - batch 212, 1 head: 212 >= 211.19999 -> 1 split, whatever the context.
 * - batch 211, 1 head: 211 < 211.19999, so FA2 searches. ctx 131072, d 128:
 *   block_n 128, 1024 blocks, max_splits = min(128, 264, 1024) = 128. The
 *   waves are 211 s / 264: s = 1..4 give 0.799, 1.598, 2.398, 3.197 waves,
 *   efficiency 0.799 each; s = 5 gives 1055 / 264 = 3.996 waves, efficiency
 *   0.999. No efficiency exceeds 1, so the threshold 0.85 * max is at most
 *   0.85, above 0.799 and below 0.999: the pick is 5 (2..5 are eligible:
 *   ceil(1024 / s) = 512, 342, 256, 205 all differ from their predecessor).
 * - batch 8, 32 heads (MHA, no folding): 256 >= 211.2 -> 1.
 */
static void test_early_return(void **state)
{
	(void)state;
	skv_fa2_decode f;
	CHECK_PICK(fa2_pick(212, 1, 1, 131072, 128, 132, &f), 1, "bhm 212");
	assert_int_equal(f.batch_nheads_mblocks, 212);
	assert_int_equal(f.num_sms, 264);
	CHECK_PICK(fa2_pick(211, 1, 1, 131072, 128, 132, &f), 5, "bhm 211");
	assert_int_equal(f.num_n_blocks, 1024);
	CHECK_PICK(fa2_pick(8, 32, 32, 131072, 128, 132, NULL), 1, "batch 8 x 32 heads");
	/* the early return ignores the context entirely: one block */
	CHECK_PICK(fa2_pick(212, 1, 1, 1, 128, 132, NULL), 1, "bhm 212, 1 key");
}

/*
 * Ineligible counts are skipped. 1 x 8 heads (MHA), ctx 1280, d 128: 10
 * blocks of 128 keys, bhm 8, num_SMs 264, max_splits = min(128, 264, 10) =
 * 10. ceil(10 / s) for s = 1..10: 10 5 4 3 2 2 2 2 2 1, so 6, 7, 8, 9 are
 * ineligible (same blocks per split as s - 1). All waves are below one
 * (8 s / 264 <= 80 / 264), so eff(s) = 8 s / 264; the best eligible is s = 10
 * (0.30303), the threshold 0.85 * 0.30303 = 0.25758. s = 8 (0.2424) is below
 * it; s = 9 (0.2727) would pass but is ineligible; the pick is 10.
 */
static void test_ineligible_skipped(void **state)
{
	(void)state;
	skv_fa2_decode f;
	CHECK_PICK(fa2_pick(1, 8, 8, 1280, 128, 132, &f), 10, "10 blocks");
	assert_int_equal(f.num_n_blocks, 10);
	float eff[12];
	unsigned char el[NELEM(eff)];
	CHECK_OK(skv_fa2_split_table(eff, el, NELEM(eff), 8, 264, 10));
	const unsigned char want[NELEM(eff)] = {1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0};
	for (size_t i = 0; i < NELEM(eff); i++) {
		if (el[i] != want[i])
			fail_msg("%s:%d: s = %zu eligible %d, want %d", __FILE__, __LINE__, i + 1, el[i], want[i]);
		/* below one wave the efficiency is the float quotient itself */
		CHECK_BITS("eff", (double)eff[i], (double)((float)(8 * (i + 1)) / 264.0f));
	}
}

/*
 * GQA folding. 1 x 32 query heads over 8 KV heads, ctx 8192, d 128, 132 SMs:
 * 64 blocks; eligible counts (ceil(64 / s) changes): 1..8, 10, 11, 13, 16, 22,
 * 32, 64.
 * - Folded (d % 8 == 0): seqlen_q = 4, num_heads = 8, 1 m-block, bhm 8.
 *   eff = s / 33 up to s = 33: 22 -> 0.667, 32 -> 0.9697; 64 -> 512 / 264 =
 *   1.939 waves -> 0.9697. Max 0.9697, threshold 0.824: 22 fails, 32 passes.
 * - d = 100 (not a multiple of 8: FA2 does not fold): bhm 32, waves 4 s / 33.
 *   Max 0.9697 (s = 8: 32 / 33; 33 would give 1.0 but is ineligible), and the
 *   smallest eligible s above 0.824 is 7 (28 / 33 = 0.848; 6 gives 0.727).
 * d = 100 keeps block_n = 128, so only the folding differs.
 */
static void test_gqa_folding(void **state)
{
	(void)state;
	skv_fa2_decode f;
	CHECK_PICK(fa2_pick(1, 32, 8, 8192, 128, 132, &f), 32, "folded");
	assert_true(f.gqa_folded);
	assert_int_equal(f.seqlen_q, 4);
	assert_int_equal(f.num_heads, 8);
	assert_int_equal(f.num_m_blocks, 1);
	assert_int_equal(f.batch_nheads_mblocks, 8);
	CHECK_PICK(fa2_pick(1, 32, 8, 8192, 100, 132, &f), 7, "not folded (d = 100)");
	assert_false(f.gqa_folded);
	assert_int_equal(f.batch_nheads_mblocks, 32);
	assert_int_equal(f.block_n, 128);
	/* more than 64 query heads per KV head: seqlen_q 128 is 2 m-blocks */
	CHECK_OK(skv_fa2_decode_init(&f, 3, 256, 2, 100, 64, 132));
	assert_int_equal(f.seqlen_q, 128);
	assert_int_equal(f.num_m_blocks, 2);
	assert_int_equal(f.batch_nheads_mblocks, 3 * 2 * 2);
	assert_int_equal(f.block_n, 256);
	assert_int_equal(f.num_n_blocks, 1);
	CHECK_OK(skv_fa2_decode_init(&f, 1, 4, 4, 100, 129, 1));
	assert_int_equal(f.block_n, 64);
	assert_int_equal(f.num_n_blocks, 2);
}

/*
 * Float arithmetic changes the pick. A100 (108 SMs, num_SMs 216), 1 x 16
 * query heads over 2 KV heads (folded: bhm 2), ctx 76160, d 128: 595 blocks.
 * eff(s) = s / 108 for s < 108; s = 108 (1.0) is ineligible (ceil(595/108) =
 * ceil(595/107) = 6), and ceil(595 / s) = 6 from s = 100 to 118, so the best
 * eligible is s = 100: 100 / 108. In exact arithmetic the threshold is
 * 0.85 * 100 / 108 = 85 / 108 = eff(85), a tie, and s = 85 (eligible:
 * ceil(595/85) = 7, ceil(595/84) = 8) would be chosen. In FA2's arithmetic
 * eff(85) = RN32(170 / 216) = 0x1.92f684p-1 while 0.85 * RN32(200 / 216) in
 * double is 0x1.92f6844cccccdp-1, larger; 86..99 are ineligible (ceil = 7),
 * so FA2 picks 100.
 */
static void test_float_arithmetic_matters(void **state)
{
	(void)state;
	CHECK_PICK(fa2_pick(1, 16, 2, 76160, 128, 108, NULL), 100, "near tie at 85");
	float eff[100];
	unsigned char el[NELEM(eff)];
	CHECK_OK(skv_fa2_split_table(eff, el, NELEM(eff), 2, 216, 595));
	CHECK_BITS("eff(85)", (double)eff[84], 0x1.92f684p-1);
	CHECK_BITS("eff(100)", (double)eff[99], (double)0x1.da12f6p-1f);
	assert_true(el[84] && el[99] && !el[85] && !el[98]);
	CHECK_GE("threshold above eff(85)", 0.85 * (double)eff[99], 0x1.92f6844cccccdp-1);
}

/*
 * MPFR referee: the heuristic with every float operation done by MPFR at 24
 * bits (binary32's range) and the threshold product at 53 bits, over a grid
 * of SM counts, every bhm up to past the early-return boundary, and block
 * counts 1..700 plus some long contexts. skv_fa2_num_splits must agree
 * everywhere, and skv_fa2_split_table must give the same efficiencies.
 */
enum { GRID_S = 160, NB_SMALL = 700 };

typedef struct {
	mpfr_t x, y, c;
} fmp;

static void fmp_init(fmp *m)
{
	mpfr_inits2(24, m->x, m->y, m->c, (mpfr_ptr)0);
}

static void fmp_clear(fmp *m) { mpfr_clears(m->x, m->y, m->c, (mpfr_ptr)0); }

/* RN32(RN32(a) / sms) / ceil(that), every step rounded to binary32. */
static float ref_eff(fmp *m, unsigned long a, unsigned long sms)
{
	int i = mpfr_set_ui(m->x, a, MPFR_RNDN);
	mpfr_subnormalize(m->x, i, MPFR_RNDN);
	i = mpfr_div_ui(m->x, m->x, sms, MPFR_RNDN);
	mpfr_subnormalize(m->x, i, MPFR_RNDN);
	mpfr_ceil(m->c, m->x);
	i = mpfr_div(m->y, m->x, m->c, MPFR_RNDN);
	mpfr_subnormalize(m->y, i, MPFR_RNDN);
	return mpfr_get_flt(m->y, MPFR_RNDN); /* exact: y has 24 bits */
}

static unsigned ref_ceil(unsigned a, unsigned b) { return a / b + (a % b != 0); }

static void test_mpfr_referee(void **state)
{
	(void)state;
	const mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
	mpfr_set_emin(-148);
	mpfr_set_emax(128);
	fmp m;
	fmp_init(&m);
	mpfr_t t, b;
	mpfr_init2(t, 53);
	mpfr_init2(b, 24);
	const unsigned sms_list[] = {2 * 108, 2 * 132, 2 * 142, 2 * 16, 2 * 46, 2 * 170, 7};
	const unsigned longs[] = {1024, 4095, 8192, 16384, 65536, 131071, 1u << 20};
	unsigned nb_list[NB_SMALL + NELEM(longs)];
	size_t nnb = 0;
	for (unsigned nb = 1; nb <= NB_SMALL; nb++)
		nb_list[nnb++] = nb;
	for (size_t i = 0; i < NELEM(longs); i++)
		nb_list[nnb++] = longs[i];
	float eff[GRID_S], got[GRID_S];
	unsigned char el[GRID_S];
	size_t checked = 0, want_checked = 0;
	for (size_t k = 0; k < NELEM(sms_list); k++) {
		const unsigned sms = sms_list[k];
		want_checked += (size_t)sms * nnb;
		/* the early-return boundary: RN32(0.8f * sms) against RN32(bhm) */
		mpfr_set_flt(b, 0.8f, MPFR_RNDN);
		mpfr_mul_ui(b, b, sms, MPFR_RNDN);
		for (unsigned bhm = 1; bhm <= sms; bhm++) {
			for (unsigned s = 1; s <= GRID_S; s++)
				eff[s - 1] = ref_eff(&m, (unsigned long)bhm * s, sms);
			mpfr_set_ui(m.x, bhm, MPFR_RNDN);
			const int early = mpfr_cmp(m.x, b) >= 0;
			for (size_t j = 0; j < nnb; j++) {
				const unsigned nb = nb_list[j];
				unsigned want = 1;
				if (!early) {
					unsigned ms = SKV_FA2_MAX_SPLITS < sms ? SKV_FA2_MAX_SPLITS : sms;
					ms = ms < nb ? ms : nb;
					float best = 0.f;
					for (unsigned s = 1; s <= ms; s++)
						if ((s == 1 || ref_ceil(nb, s) != ref_ceil(nb, s - 1)) && eff[s - 1] > best)
							best = eff[s - 1];
					mpfr_set_d(t, 0.85, MPFR_RNDN);
					mpfr_mul_d(t, t, (double)best, MPFR_RNDN);
					const double thr = mpfr_get_d(t, MPFR_RNDN);
					for (unsigned s = 1; s <= ms; s++)
						if ((s == 1 || ref_ceil(nb, s) != ref_ceil(nb, s - 1)) &&
						    (double)eff[s - 1] >= thr) {
							want = s;
							break;
						}
				}
				unsigned pick = 0;
				CHECK_OK(skv_fa2_num_splits(&pick, bhm, sms, nb, SKV_FA2_MAX_SPLITS));
				if (pick != want)
					fail_msg("%s:%d: bhm %u num_sms %u nblocks %u: pick %u, MPFR referee %u",
						 __FILE__, __LINE__, bhm, sms, nb, pick, want);
				checked++;
			}
			CHECK_OK(skv_fa2_split_table(got, el, GRID_S, bhm, sms, 595));
			for (unsigned s = 1; s <= GRID_S; s++)
				if (memcmp(&got[s - 1], &eff[s - 1], sizeof got[0]) != 0)
					fail_msg("%s:%d: eff bhm %u num_sms %u s %u: %a, MPFR %a", __FILE__, __LINE__,
						 bhm, sms, s, (double)got[s - 1], (double)eff[s - 1]);
		}
	}
	assert_int_equal(checked, want_checked);
	mpfr_clears(t, b, (mpfr_ptr)0);
	fmp_clear(&m);
	mpfr_set_emin(emin);
	mpfr_set_emax(emax);
}

/* FA2's layout, exhaustively for small sizes: contiguous, block-aligned
 * chunks of ceil(nb / S) blocks, the last one clamped to n, and a split left
 * empty exactly when S is ineligible. */
static void test_bounds(void **state)
{
	(void)state;
	enum { MAXS = 48 };
	size_t bounds[MAXS + 1];
	float eff[MAXS];
	unsigned char el[MAXS];
	const size_t blocks[] = {1, 3, 64, 128};
	for (size_t bi = 0; bi < NELEM(blocks); bi++)
		for (size_t n = 1; n <= 400; n++) {
			const size_t bn = blocks[bi], nb = (n + bn - 1) / bn;
			if (nb > INT_MAX)
				continue;
			CHECK_OK(skv_fa2_split_table(eff, el, MAXS, 1, 264, (unsigned)nb));
			for (size_t S = 1; S <= MAXS; S++) {
				CHECK_OK(skv_fa2_bounds(bounds, n, bn, S));
				const size_t per = (nb + S - 1) / S;
				size_t empty = 0;
				for (size_t s = 0; s < S; s++) {
					const size_t lo = s * per * bn < n ? s * per * bn : n;
					const size_t hi = (s + 1) * per * bn < n ? (s + 1) * per * bn : n;
					if (bounds[s] != lo || bounds[s + 1] != hi)
						fail_msg("%s:%d: n %zu block %zu S %zu split %zu: [%zu, %zu) want [%zu, %zu)",
							 __FILE__, __LINE__, n, bn, S, s, bounds[s], bounds[s + 1], lo, hi);
					empty += lo == hi;
				}
				if ((empty == 0) != (el[S - 1] == 1))
					fail_msg("%s:%d: n %zu block %zu S %zu: %zu empty splits, eligible %d", __FILE__,
						 __LINE__, n, bn, S, empty, el[S - 1]);
			}
		}
	size_t b2[3] = {7, 7, 7};
	assert_int_equal(skv_fa2_bounds(NULL, 10, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_fa2_bounds(b2, 0, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_fa2_bounds(b2, 10, 0, 2), SKV_EINVAL);
	assert_int_equal(skv_fa2_bounds(b2, 10, 1, 0), SKV_EINVAL);
	assert_true(b2[0] == 7 && b2[1] == 7 && b2[2] == 7);
}

/* Bad arguments: SKV_EINVAL and nothing written. */
static void test_invalid(void **state)
{
	(void)state;
	skv_fa2_decode f, sentinel;
	memset(&sentinel, 0xa5, sizeof sentinel);
	f = sentinel;
	const struct {
		unsigned b, h, k, c, d, sm;
	} bad[] = {
		{0, 8, 8, 100, 128, 132},  {1, 0, 8, 100, 128, 132},   {1, 8, 0, 100, 128, 132},
		{1, 12, 5, 100, 128, 132}, {1, 8, 16, 100, 128, 132},  {1, 8, 8, 0, 128, 132},
		{1, 8, 8, 100, 0, 132},    {1, 8, 8, 100, 257, 132},   {1, 8, 8, 100, 128, 0},
		{1, 8, 8, 100, 128, SKV_FA2_MAX_SMS / 2 + 1},         {1, 8, 8, (unsigned)INT_MAX + 1u, 128, 132},
		{1u << 20, 1u << 16, 1u << 16, 100, 128, 132}, /* bhm = 2^36 */
	};
	for (size_t i = 0; i < NELEM(bad); i++) {
		if (skv_fa2_decode_init(&f, bad[i].b, bad[i].h, bad[i].k, bad[i].c, bad[i].d, bad[i].sm) != SKV_EINVAL)
			fail_msg("%s:%d: case %zu accepted", __FILE__, __LINE__, i);
		assert_memory_equal(&f, &sentinel, sizeof f);
	}
	unsigned s = 77;
	float e[2] = {5.f, 5.f};
	unsigned char el[2] = {9, 9};
	assert_int_equal(skv_fa2_num_splits(NULL, 1, 264, 10, 128), SKV_EINVAL);
	assert_int_equal(skv_fa2_num_splits(&s, 0, 264, 10, 128), SKV_EINVAL);
	assert_int_equal(skv_fa2_num_splits(&s, 1, 0, 10, 128), SKV_EINVAL);
	assert_int_equal(skv_fa2_num_splits(&s, 1, SKV_FA2_MAX_SMS + 1, 10, 128), SKV_EINVAL);
	assert_int_equal(skv_fa2_num_splits(&s, 1, 264, 0, 128), SKV_EINVAL);
	assert_int_equal(skv_fa2_num_splits(&s, 1, 264, 10, 0), SKV_EINVAL);
	assert_int_equal(skv_fa2_num_splits(&s, (unsigned)INT_MAX + 1u, 264, 10, 128), SKV_EINVAL);
	assert_int_equal(s, 77);
	assert_int_equal(skv_fa2_split_table(e, el, 0, 1, 264, 10), SKV_EINVAL);
	assert_int_equal(skv_fa2_split_table(NULL, el, 2, 1, 264, 10), SKV_EINVAL);
	assert_int_equal(skv_fa2_split_table(e, NULL, 2, 1, 264, 10), SKV_EINVAL);
	assert_int_equal(skv_fa2_split_table(e, el, 2, 0, 264, 10), SKV_EINVAL);
	assert_true(e[0] == 5.f && el[0] == 9);
	/* the largest accepted values work: FA2's int product stays in range */
	CHECK_OK(skv_fa2_num_splits(&s, 1, SKV_FA2_MAX_SMS, INT_MAX, (unsigned)INT_MAX));
	assert_true(s >= 1 && s <= SKV_FA2_MAX_SMS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_early_return),
		cmocka_unit_test(test_ineligible_skipped),
		cmocka_unit_test(test_gqa_folding),
		cmocka_unit_test(test_float_arithmetic_matters),
		cmocka_unit_test(test_mpfr_referee),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
