/* test_merge.c - the split kernel and every merge and order against the MPFR truth, in every format. */
#include "testutil.h"

#define U64 0x1p-53

static const skv_order all_orders[] = {SKV_ORDER_SEQ, SKV_ORDER_REV, SKV_ORDER_TREE, SKV_ORDER_RANDOM,
				       SKV_ORDER_ASC, SKV_ORDER_DESC, SKV_ORDER_STRIDED};
static const skv_merge real_merges[] = {SKV_MERGE_ONEPASS, SKV_MERGE_PAIRWISE, SKV_MERGE_FLEX};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* fp64 everywhere: every real merge in every order, both bases, S from 1 to
 * 37 (odd sizes exercise the tree's carried node): error near roundoff. */
static void test_fp64_all_merges_orders(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 600, 16, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 11, 0);
	size_t bounds[64];
	for (int base = 0; base < SKV_NBASES; base++)
		for (size_t S = 1; S <= 37; S += (S < 8 ? 1 : 9)) {
			skv_config cfg = skv_config_uniform(SKV_FP64);
			cfg.base = (skv_lse_base)base;
			CHECK_OK(skv_bounds_even(bounds, t.p.n, S));
			for (size_t m = 0; m < NELEM(real_merges); m++)
				for (size_t o = 0; o < NELEM(all_orders); o++) {
					skv_merge_spec sp = skv_merge_spec_default();
					sp.merge = real_merges[m];
					sp.order = all_orders[o];
					sp.seed = 1234 + S;
					sp.threads = 3;
					double le, e = run_merge(&t, 0, bounds, S, 32, 0.0, &cfg, &sp, &le, NULL);
					if (!(e <= 64 * U64) || !(le <= 64 * U64 * fabs(t.lse[0].hi) + 1e-300))
						fail_msg("%s:%d: base %d S %zu merge %s order %s: err %a lse err %a",
							 __FILE__, __LINE__, base, S, skv_merge_name(sp.merge),
							 skv_order_name(sp.order), e, le);
				}
		}
	tcase_free(&t);
}

/* The controls are visibly wrong, the weighted merges are not. */
static void test_controls_wrong(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 1024, 8, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 7, 0);
	skv_config cfg = skv_config_uniform(SKV_FP64);
	size_t bounds[9];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 8));
	skv_merge_spec sp = skv_merge_spec_default();
	double good = run_merge(&t, 0, bounds, 8, 0, 0.0, &cfg, &sp, NULL, NULL);
	sp.merge = SKV_MERGE_MEAN;
	double mean = run_merge(&t, 0, bounds, 8, 0, 0.0, &cfg, &sp, NULL, NULL);
	sp.merge = SKV_MERGE_SUM;
	double sum = run_merge(&t, 0, bounds, 8, 0, 0.0, &cfg, &sp, NULL, NULL);
	CHECK_LE("onepass", good, 64 * U64);
	CHECK_GE("mean", mean, 1e-4);
	CHECK_GE("sum", sum, 0.5); /* the sum of 8 rows each near the answer */
	tcase_free(&t);
}

/* One split: the partial is the answer, and every merge returns it. */
static void test_single_split(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 300, 8, SKV_DIST_SINK, 1.0, SKV_FP32, 5, 0);
	skv_config cfg = skv_config_uniform(SKV_FP64);
	size_t bounds[2] = {0, 300};
	for (int m = 0; m < SKV_NMERGES; m++) {
		skv_merge_spec sp = skv_merge_spec_default();
		sp.merge = (skv_merge)m;
		double le, e = run_merge(&t, 0, bounds, 1, 64, 0.0, &cfg, &sp, &le, NULL);
		CHECK_LE(skv_merge_name(sp.merge), e, 64 * U64);
	}
	tcase_free(&t);
}

/* Uneven boundaries with empty splits, first, last and in the middle. */
static void test_uneven_and_empty(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 1000, 16, SKV_DIST_GAUSSIAN, 2.0, SKV_FP64, 3, 0);
	const size_t b[] = {0, 0, 7, 300, 301, 301, 999, 1000, 1000};
	const size_t S = NELEM(b) - 1;
	skv_config cfg = skv_config_uniform(SKV_FP64);
	for (size_t m = 0; m < NELEM(real_merges); m++)
		for (size_t o = 0; o < NELEM(all_orders); o++)
			for (int base = 0; base < SKV_NBASES; base++) {
				skv_merge_spec sp = skv_merge_spec_default();
				sp.merge = real_merges[m];
				sp.order = all_orders[o];
				sp.threads = 2;
				cfg.base = (skv_lse_base)base;
				double le, e = run_merge(&t, 0, b, S, 16, 0.0, &cfg, &sp, &le, NULL);
				if (!(e <= 64 * U64) || !(le < 1e-13))
					fail_msg("%s:%d: merge %s order %s base %d: err %a lse err %a", __FILE__,
						 __LINE__, skv_merge_name(sp.merge), skv_order_name(sp.order), base,
						 e, le);
			}
	tcase_free(&t);
}

/* Each split's LSE and normalized output are the exact ones of its range. */
static void test_split_kernel_vs_truth(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 2, 500, 8, SKV_DIST_GAUSSIAN, 1.5, SKV_BF16, 9, 0);
	const size_t b[] = {0, 1, 130, 130, 500};
	const size_t S = NELEM(b) - 1, d = t.p.d;
	skv_partials sp;
	CHECK_OK(skv_partials_init(&sp, S, d));
	skv_config cfg = skv_config_uniform(SKV_FP64);
	for (size_t row = 0; row < 2; row++) {
		CHECK_OK(skv_split_kernel(&sp, &t.p, row, b, S, 50, 0.0, &cfg));
		for (size_t s = 0; s < S; s++) {
			skv_dd o[8], l;
			CHECK_OK(skv_truth_range(o, &l, &t.p, row, b[s], b[s + 1], SKV_TRUTH_PREC));
			if (b[s] == b[s + 1]) {
				CHECK_BITS("empty lse", sp.lse[s], -INFINITY);
				CHECK_BITS("empty l", sp.l[s], 0.0);
				for (size_t i = 0; i < d; i++)
					CHECK_BITS("empty o", sp.o[s * d + i], 0.0);
				continue;
			}
			CHECK_LE("split lse", skv_abs_err(sp.lse[s], l), 32 * U64 * (1 + fabs(l.hi)));
			CHECK_LE("split out", norm_err(sp.o + s * d, o, d, SKV_FP64), 64 * U64);
			/* m + log l is the LSE too, kept apart for Flex */
			CHECK_LE("m + log l", fabs(sp.m[s] + log(sp.l[s]) - sp.lse[s]), 8 * U64 * (1 + fabs(l.hi)));
		}
	}
	skv_partials_free(&sp);
	tcase_free(&t);
}

/* Offsets of +-1000 and +-1e5 shift every score: nothing overflows in fp64,
 * the output is unchanged to the scores' own rounding (|offset| u), and the
 * merged LSE moves by the offset. */
static void test_large_offsets_fp64(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 512, 16, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 21, 0);
	skv_config cfg = skv_config_uniform(SKV_FP64);
	size_t bounds[17];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 16));
	const double offs[] = {1000, -1000, 1e5, -1e5};
	for (size_t i = 0; i < NELEM(offs); i++)
		for (size_t m = 0; m < NELEM(real_merges); m++) {
			skv_merge_spec sp = skv_merge_spec_default();
			sp.merge = real_merges[m];
			double le, e = run_merge(&t, 0, bounds, 16, 64, offs[i], &cfg, &sp, &le, NULL);
			double bound = 64 * U64 * fabs(offs[i]);
			if (!(e <= bound) || !(le <= bound))
				fail_msg("%s:%d: offset %a merge %s: err %a lse err %a bound %a", __FILE__, __LINE__,
					 offs[i], skv_merge_name(sp.merge), e, le, bound);
		}
	tcase_free(&t);
}

/* Lower formats: the error is of the order of the storage format's unit
 * roundoff - above a small fraction of it (the rounding really happens)
 * and below a modest multiple (nothing else goes wrong). */
static void test_lower_formats_error_order(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 2048, 64, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 17, 0);
	size_t bounds[17];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 16));
	const skv_format fs[] = {SKV_FP16, SKV_BF16, SKV_FP32};
	for (size_t i = 0; i < NELEM(fs); i++) {
		double u = skv_format_unit_roundoff(fs[i]);
		/* storage of partials alone, everything else fp64 */
		skv_config cfg = skv_config_uniform(SKV_FP64);
		cfg.input = SKV_FP32;
		cfg.partial = fs[i];
		skv_merge_spec sp = skv_merge_spec_default();
		double e = run_merge(&t, 0, bounds, 16, 128, 0.0, &cfg, &sp, NULL, NULL);
		CHECK_GE(skv_format_name(fs[i]), e, u / 64);
		CHECK_LE(skv_format_name(fs[i]), e, 4 * u);
		/* every stage in the format */
		cfg = skv_config_uniform(fs[i]);
		cfg.input = SKV_FP32;
		for (size_t m = 0; m < NELEM(real_merges); m++) {
			sp.merge = real_merges[m];
			e = run_merge(&t, 0, bounds, 16, 128, 0.0, &cfg, &sp, NULL, NULL);
			CHECK_GE(skv_format_name(fs[i]), e, u / 64);
			CHECK_LE(skv_format_name(fs[i]), e, 64 * u);
		}
	}
	tcase_free(&t);
}

/* Each stage alone in a low format, the rest fp64: every stage really
 * rounds (error above u/64) and none costs more than it should. */
static void test_each_stage_rounds(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 2048, 64, SKV_DIST_GAUSSIAN, 0.5, SKV_FP64, 19, 0);
	size_t bounds[17];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 16));
	const size_t stages[] = {offsetof(skv_config, compute), offsetof(skv_config, p),
				 offsetof(skv_config, partial), offsetof(skv_config, lse),
				 offsetof(skv_config, combine), offsetof(skv_config, output)};
	const char *names[] = {"compute", "p", "partial", "lse", "combine", "output"};
	const skv_format fs[] = {SKV_FP16, SKV_BF16, SKV_FP32};
	for (size_t k = 0; k < NELEM(stages); k++)
		for (size_t i = 0; i < NELEM(fs); i++)
			for (int m = 0; m < 2; m++) {
				skv_config cfg = skv_config_uniform(SKV_FP64);
				skv_format *field = (skv_format *)((char *)&cfg + stages[k]);
				*field = fs[i];
				skv_merge_spec sp = skv_merge_spec_default();
				sp.merge = m ? SKV_MERGE_PAIRWISE : SKV_MERGE_ONEPASS;
				double u = skv_format_unit_roundoff(fs[i]);
				double e = run_merge(&t, 0, bounds, 16, 128, 0.0, &cfg, &sp, NULL, NULL);
				if (!(e >= u / 64 && e <= 64 * u))
					fail_msg("%s:%d: stage %s in %s, merge %s: err %a, u %a", __FILE__, __LINE__,
						 names[k], skv_format_name(fs[i]), skv_merge_name(sp.merge), e, u);
			}
	tcase_free(&t);
}

/* The storage bounds stated at the top of lib/merge.c, against the truth:
 * LSE storage   ||o^ - o|| <= (exp(2E) - 1) sum_s w_s ||O_s - o||,
 * partial storage ||o^ - o|| <= u sum_s w_s ||O_s||,
 * with every other stage fp64 (its own error, about 1e-15, is the slack). */
static void test_storage_bounds(void **state)
{
	(void)state;
	tcase t;
	const size_t n = 4096, d = 32;
	tcase_init(&t, 1, n, d, SKV_DIST_GAUSSIAN, 1.0, SKV_FP64, 91, 0);
	const double offs[] = {0, 30, 100, 1000};
	const size_t Ss[] = {1, 4, 16, 64};
	const skv_format fs[] = {SKV_FP16, SKV_BF16};
	double tight_lse = 0, tight_part = 0;
	double onorm = 0;
	for (size_t i = 0; i < d; i++)
		onorm += t.out[i].hi * t.out[i].hi;
	onorm = sqrt(onorm);
	for (size_t a = 0; a < NELEM(offs); a++)
		for (size_t b = 0; b < NELEM(Ss); b++) {
			const size_t S = Ss[b];
			size_t bounds[65];
			CHECK_OK(skv_bounds_even(bounds, n, S));
			skv_config c64 = skv_config_uniform(SKV_FP64);
			skv_partials raw, st;
			CHECK_OK(skv_partials_init(&raw, S, d));
			CHECK_OK(skv_partials_init(&st, S, d));
			CHECK_OK(skv_split_kernel(&raw, &t.p, 0, bounds, S, 0, offs[a], &c64));
			/* exact weights from the truth's LSE; sums for both bounds */
			long double L = (long double)t.lse[0].hi + t.lse[0].lo + offs[a], spread = 0, mass = 0;
			for (size_t s = 0; s < S; s++) {
				long double w = expl((long double)raw.lse[s] - L), dn = 0, on = 0;
				for (size_t i = 0; i < d; i++) {
					long double x = raw.o[s * d + i];
					dn += (x - t.out[i].hi) * (x - t.out[i].hi);
					on += x * x;
				}
				spread += w * sqrtl(dn);
				mass += w * sqrtl(on);
			}
			for (size_t k = 0; k < NELEM(fs); k++) {
				skv_merge_spec sp = skv_merge_spec_default();
				double o[32], lse;
				/* LSE storage alone */
				skv_config c = c64;
				c.lse = fs[k];
				CHECK_OK(skv_partials_store(&st, &raw, &c));
				double E = 0;
				for (size_t s = 0; s < S; s++)
					E = fmax(E, fabs(st.lse[s] - raw.lse[s]));
				CHECK_OK(skv_merge_run(o, &lse, &st, &sp, &c));
				double e = norm_err(o, t.out, d, SKV_FP64);
				double bound = (double)(expm1l(2.0L * E) * spread) / onorm;
				if (!(e <= bound * (1 + 1e-9) + 1e-13))
					fail_msg("%s:%d: lse %s, offset %a, S %zu: error %a above the bound %a (E %a)", __FILE__,
						 __LINE__, skv_format_name(fs[k]), offs[a], S, e, bound, E);
				if (bound > 1e-10)
					tight_lse = fmax(tight_lse, e / bound);
				/* partial storage alone */
				c = c64;
				c.partial = fs[k];
				CHECK_OK(skv_partials_store(&st, &raw, &c));
				CHECK_OK(skv_merge_run(o, &lse, &st, &sp, &c));
				e = norm_err(o, t.out, d, SKV_FP64);
				bound = (double)(skv_format_unit_roundoff(fs[k]) * mass) / onorm;
				if (!(e <= bound * (1 + 1e-9) + 1e-13))
					fail_msg("%s:%d: partial %s, offset %a, S %zu: error %a above the bound %a", __FILE__,
						 __LINE__, skv_format_name(fs[k]), offs[a], S, e, bound);
				tight_part = fmax(tight_part, e / bound);
			}
			skv_partials_free(&raw);
			skv_partials_free(&st);
		}
	printf("# storage bounds hold; the tightest measured/bound: LSE %.2f, partial %.2f\n", tight_lse, tight_part);
	/* the bounds are not vacuous: somewhere each is reached within 10x */
	CHECK_GE("LSE bound tightness", tight_lse, 0.1);
	CHECK_GE("partial bound tightness", tight_part, 0.1);
	tcase_free(&t);
}

/* lse-base e2 (FlashAttention: exp2 inside the split, natural LSE out) is
 * its own arithmetic: as accurate as base e in fp32, different bits, and its
 * LSE and max are in natural units (m + log l is the LSE). */
static void test_base_e2(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 1024, 32, SKV_DIST_GAUSSIAN, 1.0, SKV_FP32, 53, 0);
	size_t b[9];
	CHECK_OK(skv_bounds_even(b, 1024, 8));
	skv_config ce = skv_config_uniform(SKV_FP32), c2 = ce;
	c2.base = SKV_BASE_E2;
	skv_merge_spec sp = skv_merge_spec_default();
	double oe[32], o2[32];
	double ee = run_merge(&t, 0, b, 8, 128, 0.0, &ce, &sp, NULL, oe);
	double le, e2 = run_merge(&t, 0, b, 8, 128, 0.0, &c2, &sp, &le, o2);
	CHECK_LE("base e2 in fp32", e2, 16 * 0x1p-24);
	CHECK_LE("base e2 lse", le, 64 * 0x1p-24 * fabs(t.lse[0].hi));
	CHECK_LE("base e in fp32", ee, 16 * 0x1p-24);
	assert_true(memcmp(oe, o2, sizeof oe) != 0);
	skv_partials sp2;
	CHECK_OK(skv_partials_init(&sp2, 8, 32));
	CHECK_OK(skv_split_kernel(&sp2, &t.p, 0, b, 8, 128, 0.0, &c2));
	for (size_t s = 0; s < 8; s++)
		CHECK_LE("e2: m + log l is the LSE", fabs(sp2.m[s] + log(sp2.l[s]) - sp2.lse[s]), 1e-5);
	skv_partials_free(&sp2);
	skv_lse_base bb;
	CHECK_OK(skv_lse_base_parse(&bb, "e2"));
	assert_int_equal(bb, SKV_BASE_E2);
	assert_string_equal(skv_lse_base_name(SKV_BASE_2), "2");
	assert_int_equal(skv_lse_base_parse(&bb, "10"), SKV_EINVAL);
	tcase_free(&t);
}

/* An fp16 LSE at a large offset costs what its spacing says: offset 1000
 * has spacing 0.5 in fp16, so weights are off by up to e^0.25. */
static void test_fp16_lse_large_offset(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 4096, 32, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 23, 0);
	size_t bounds[65];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 64));
	skv_config cfg = skv_config_uniform(SKV_FP64);
	cfg.lse = SKV_FP16;
	skv_merge_spec sp = skv_merge_spec_default();
	double e0 = run_merge(&t, 0, bounds, 64, 128, 0.0, &cfg, &sp, NULL, NULL);
	double e1 = run_merge(&t, 0, bounds, 64, 128, 1000.0, &cfg, &sp, NULL, NULL);
	CHECK_GE("fp16 lse at 1000", e1, 1e-3);
	CHECK_GE("grows with offset", e1, 10 * e0);
	cfg.lse = SKV_FP32;
	double e2 = run_merge(&t, 0, bounds, 64, 128, 1000.0, &cfg, &sp, NULL, NULL);
	CHECK_LE("fp32 lse at 1000", e2, 1e-4);
	tcase_free(&t);
}

/* In a low format the order changes the bits: show that the orders are
 * really different reductions (a broken order driver would not). */
static void test_orders_differ_in_fp16(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 4096, 16, SKV_DIST_GAUSSIAN, 1.0, SKV_FP16, 29, 0);
	size_t bounds[65];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 64));
	skv_config cfg = skv_config_uniform(SKV_FP16);
	double outs[NELEM(all_orders)][16];
	for (size_t o = 0; o < NELEM(all_orders); o++) {
		skv_merge_spec sp = skv_merge_spec_default();
		sp.merge = SKV_MERGE_PAIRWISE;
		sp.order = all_orders[o];
		sp.threads = 8;
		run_merge(&t, 0, bounds, 64, 64, 0.0, &cfg, &sp, NULL, outs[o]);
	}
	size_t distinct = 0;
	for (size_t a = 0; a < NELEM(all_orders); a++) {
		int seen = 0;
		for (size_t b = 0; b < a; b++)
			seen |= memcmp(outs[a], outs[b], sizeof outs[a]) == 0;
		distinct += !seen;
	}
	CHECK_GE("distinct results across orders", (double)distinct, 4);
	tcase_free(&t);
}

/* The random order is a permutation fixed by its seed. */
static void test_random_order_seeded(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 2048, 16, SKV_DIST_GAUSSIAN, 1.0, SKV_FP16, 31, 0);
	size_t bounds[33];
	CHECK_OK(skv_bounds_even(bounds, t.p.n, 32));
	skv_config cfg = skv_config_uniform(SKV_FP16);
	skv_merge_spec sp = skv_merge_spec_default();
	sp.order = SKV_ORDER_RANDOM;
	double a[16], b[16], c[16];
	sp.seed = 5;
	run_merge(&t, 0, bounds, 32, 0, 0.0, &cfg, &sp, NULL, a);
	run_merge(&t, 0, bounds, 32, 0, 0.0, &cfg, &sp, NULL, b);
	assert_memory_equal(a, b, sizeof a);
	int differs = 0;
	for (uint64_t s = 6; s < 16 && !differs; s++) {
		sp.seed = s;
		run_merge(&t, 0, bounds, 32, 0, 0.0, &cfg, &sp, NULL, c);
		differs = memcmp(a, c, sizeof a) != 0;
	}
	assert_true(differs);
	tcase_free(&t);
}

/* All splits empty: what each guard returns. */
static void test_all_empty_policies(void **state)
{
	(void)state;
	skv_partials sp;
	const size_t S = 4, d = 3;
	CHECK_OK(skv_partials_init(&sp, S, d));
	for (size_t s = 0; s < S; s++) {
		sp.lse[s] = sp.m[s] = -INFINITY;
		sp.l[s] = 0.0;
	}
	skv_config cfg = skv_config_uniform(SKV_FP32);
	const struct {
		skv_empty e;
		double lse;
		int out_nan;
	} want[] = {{SKV_EMPTY_GUARD, -INFINITY, 0}, {SKV_EMPTY_FA2, INFINITY, 0}, {SKV_EMPTY_FA3, -INFINITY, 0},
		    {SKV_EMPTY_NONE, NAN, 1}};
	for (size_t i = 0; i < NELEM(want); i++) {
		skv_merge_spec spec = skv_merge_spec_default();
		spec.empty = want[i].e;
		double out[3], lse;
		CHECK_OK(skv_merge_run(out, &lse, &sp, &spec, &cfg));
		if (isnan(want[i].lse))
			assert_true(isnan(lse));
		else
			CHECK_BITS(skv_empty_name(want[i].e), lse, want[i].lse);
		for (size_t k = 0; k < d; k++)
			assert_int_equal(isnan(out[k]) != 0, want[i].out_nan);
	}
	/* pairwise: two empty states give NaN without a guard (FlashInfer 4051) */
	skv_merge_spec spec = skv_merge_spec_default();
	spec.merge = SKV_MERGE_PAIRWISE;
	double out[3], lse;
	CHECK_OK(skv_merge_run(out, &lse, &sp, &spec, &cfg));
	CHECK_BITS("pairwise guard", lse, -INFINITY);
	CHECK_BITS("pairwise guard out", out[0], 0.0);
	spec.empty = SKV_EMPTY_NONE;
	CHECK_OK(skv_merge_run(out, &lse, &sp, &spec, &cfg));
	assert_true(isnan(out[0]));
	skv_partials_free(&sp);
}

/* FA3 never writes empty rows (NaN here): its onepass skips them, a merge
 * that reads them multiplies NaN by zero. */
static void test_fa3_unwritten_rows(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 200, 8, SKV_DIST_GAUSSIAN, 1.0, SKV_FP32, 41, 0);
	const size_t b[] = {0, 100, 100, 200};
	skv_config cfg = skv_config_uniform(SKV_FP32);
	skv_merge_spec sp = skv_merge_spec_default();
	sp.empty = SKV_EMPTY_FA3;
	double e = run_merge(&t, 0, b, 3, 32, 0.0, &cfg, &sp, NULL, NULL);
	CHECK_LE("fa3 onepass", e, 1e-5);
	sp.merge = SKV_MERGE_MEAN;
	double o[8];
	run_merge(&t, 0, b, 3, 32, 0.0, &cfg, &sp, NULL, o);
	assert_true(isnan(o[0]));
	tcase_free(&t);
}

/* Online softmax attention, causal and not, block sizes 1 .. n: fp64 near
 * roundoff, fp32 near its own. */
static void test_online_vs_truth(void **state)
{
	(void)state;
	const size_t n = 48, d = 8;
	for (int causal = 0; causal < 2; causal++) {
		tcase t;
		tcase_init(&t, n, n, d, SKV_DIST_GAUSSIAN, 2.0, SKV_FP32, 43 + causal, causal);
		double *o = malloc(n * d * sizeof *o), *lse = malloc(n * sizeof *lse);
		const size_t blocks[] = {1, 2, 5, 16, 47, 48, 0};
		for (size_t bi = 0; bi < NELEM(blocks); bi++)
			for (int f = SKV_FP32; f <= SKV_FP64; f++) {
				skv_config cfg = skv_config_uniform((skv_format)f);
				cfg.base = (skv_lse_base)(bi % SKV_NBASES);
				CHECK_OK(skv_attention_online(o, lse, &t.p, blocks[bi], causal, 0.0, &cfg));
				double u = skv_format_unit_roundoff((skv_format)f);
				double e = norm_err(o, t.out, n * d, (skv_format)f);
				if (!(e <= 64 * u))
					fail_msg("%s:%d: causal %d block %zu %s: err %a", __FILE__, __LINE__, causal,
						 blocks[bi], skv_format_name((skv_format)f), e);
				for (size_t r = 0; r < n; r++)
					CHECK_LE("row lse", skv_abs_err(lse[r], t.lse[r]), 64 * u * (1 + fabs(lse[r])));
			}
		free(o);
		free(lse);
		tcase_free(&t);
	}
}

/* Block size changes the arithmetic in a low format (rescaling steps). */
static void test_online_block_matters_fp16(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 256, 16, SKV_DIST_GAUSSIAN, 1.0, SKV_FP16, 47, 0);
	skv_config cfg = skv_config_uniform(SKV_FP16);
	double a[16], b[16];
	CHECK_OK(skv_attention_online(a, NULL, &t.p, 1, 0, 0.0, &cfg));
	CHECK_OK(skv_attention_online(b, NULL, &t.p, 0, 0, 0.0, &cfg));
	assert_true(memcmp(a, b, sizeof a) != 0);
	CHECK_LE("fp16 block 1", norm_err(a, t.out, 16, SKV_FP16), 0.05);
	tcase_free(&t);
}

/* Invalid arguments: nothing written. */
static void test_bad_input(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 16, 4, SKV_DIST_GAUSSIAN, 1.0, SKV_FP32, 1, 0);
	skv_partials sp;
	CHECK_OK(skv_partials_init(&sp, 2, 4));
	skv_config cfg = skv_config_uniform(SKV_FP32), bad = cfg;
	bad.compute = (skv_format)17;
	size_t b[] = {0, 8, 16}, bb[] = {0, 9, 8}, bz[] = {1, 8, 16};
	assert_int_equal(skv_split_kernel(&sp, &t.p, 0, b, 2, 4, 0.0, &bad), SKV_EINVAL);
	assert_int_equal(skv_split_kernel(&sp, &t.p, 0, bb, 2, 4, 0.0, &cfg), SKV_EINVAL);
	assert_int_equal(skv_split_kernel(&sp, &t.p, 0, bz, 2, 4, 0.0, &cfg), SKV_EINVAL);
	assert_int_equal(skv_split_kernel(&sp, &t.p, 1, b, 2, 4, 0.0, &cfg), SKV_EINVAL);
	assert_int_equal(skv_split_kernel(&sp, &t.p, 0, b, 3, 4, 0.0, &cfg), SKV_EINVAL);
	assert_int_equal(skv_split_kernel(&sp, &t.p, 0, b, 2, 4, NAN, &cfg), SKV_EINVAL);
	assert_int_equal(skv_split_kernel(NULL, &t.p, 0, b, 2, 4, 0.0, &cfg), SKV_EINVAL);
	assert_int_equal(skv_bounds_even(b, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_bounds_even(b, 1, 0), SKV_EINVAL);
	assert_int_equal(skv_partials_init(&sp, 0, 4), SKV_EINVAL);
	double out[4] = {7, 7, 7, 7}, lse = 7;
	skv_merge_spec spec = skv_merge_spec_default();
	spec.threads = 0;
	assert_int_equal(skv_merge_run(out, &lse, &sp, &spec, &cfg), SKV_EINVAL);
	spec = skv_merge_spec_default();
	spec.order = (skv_order)99;
	assert_int_equal(skv_merge_run(out, &lse, &sp, &spec, &cfg), SKV_EINVAL);
	spec = skv_merge_spec_default();
	assert_int_equal(skv_merge_run(out, &lse, &sp, &spec, &bad), SKV_EINVAL);
	assert_int_equal(skv_merge_run(out, NULL, &sp, &spec, &cfg), SKV_EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK_BITS("untouched", out[i], 7.0);
	CHECK_BITS("untouched lse", lse, 7.0);
	double o2[16 * 4];
	skv_problem p2 = t.p;
	p2.nq = 2;
	assert_int_equal(skv_attention_online(o2, NULL, &p2, 4, 1, 0.0, &cfg), SKV_EINVAL);
	/* names round-trip and reject unknowns */
	for (int m = 0; m < SKV_NMERGES; m++) {
		skv_merge mm;
		CHECK_OK(skv_merge_parse(&mm, skv_merge_name((skv_merge)m)));
		assert_int_equal(mm, m);
	}
	for (int o = 0; o < SKV_NORDERS; o++) {
		skv_order oo;
		CHECK_OK(skv_order_parse(&oo, skv_order_name((skv_order)o)));
		assert_int_equal(oo, o);
	}
	skv_merge mm;
	assert_int_equal(skv_merge_parse(&mm, "avg"), SKV_EINVAL);
	assert_null(skv_order_name((skv_order)SKV_NORDERS));
	skv_partials_free(&sp);
	tcase_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fp64_all_merges_orders),
		cmocka_unit_test(test_controls_wrong),
		cmocka_unit_test(test_single_split),
		cmocka_unit_test(test_uneven_and_empty),
		cmocka_unit_test(test_split_kernel_vs_truth),
		cmocka_unit_test(test_large_offsets_fp64),
		cmocka_unit_test(test_lower_formats_error_order),
		cmocka_unit_test(test_each_stage_rounds),
		cmocka_unit_test(test_storage_bounds),
		cmocka_unit_test(test_base_e2),
		cmocka_unit_test(test_fp16_lse_large_offset),
		cmocka_unit_test(test_orders_differ_in_fp16),
		cmocka_unit_test(test_random_order_seeded),
		cmocka_unit_test(test_all_empty_policies),
		cmocka_unit_test(test_fa3_unwritten_rows),
		cmocka_unit_test(test_online_vs_truth),
		cmocka_unit_test(test_online_block_matters_fp16),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
