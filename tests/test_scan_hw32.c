/* test_scan_hw32.c - the scan's hardware binary32 loops give the emulated (MPFR-proven) bits, shared scores give the kernel's own partials, and packed problems the tensor-core scan's bits as doubles. */
#include <float.h>

#include "fmt_inline.h"
#include "ref_mpfr.h"
#include "scan.h"
#include "testutil.h"


static const skv_config *fp32_cfg(void)
{
	static skv_config c;
	c = skv_config_uniform(SKV_FP32);
	c.input = SKV_BF16;
	return &c;
}

/* Which path this run compares (printed, so a log says what ran). */
static void note_path(void)
{
	printf("# hw32: %s\n", skv_hw32_on(fp32_cfg()) ? "AVX2+FMA loops compared with the emulation"
							: "no AVX2/FMA here: the emulated loops only");
}

/* A binary32 value as a double: a random pattern (subnormals, infinities
 * and NaNs among them) or a random significand at an exponent in [emin,
 * emax] (the range where products and sums overflow, underflow or tie). */
static double f32_pattern(skv_rng *r)
{
	uint32_t u = (uint32_t)skv_rng_next(r);
	float f;
	memcpy(&f, &u, sizeof f);
	return (double)f;
}

static double f32_at(skv_rng *r, int emin, int emax)
{
	const double m = 1 + skv_rng_uniform(r);
	const int e = emin + (int)skv_rng_below(r, (uint64_t)(emax - emin + 1));
	return skv_round(SKV_FP32, (skv_rng_next(r) & 1 ? -m : m) * ldexp(1.0, e)); /* subnormals: fewer bits */
}

/* One fma both ways (the dot of length 1 and one P.V lane) against MPFR. */
static void check_fma(double a, double b, double c, const char *file, int line)
{
	const double want = ref_fma(SKV_FP32, a, b, c), emu = skv_fma_i(SKV_FP32, a, b, c);
	double acc[1] = {c};
	skv_hw32_pv(acc, a, &b, 1);
	if (!ref_same(emu, want) || !ref_same(acc[0], want))
		fail_msg("%s:%d: fma32(%a, %a, %a): emulated %a, hw pv %a, MPFR %a", file, line, a, b, c, emu, acc[0],
			 want);
	if (c == 0.0 && !signbit(c)) {
		const double dot = skv_hw32_dot(&a, &b, 1);
		if (!ref_same(dot, want))
			fail_msg("%s:%d: dot32(%a, %a) = %a, MPFR %a", file, line, a, b, dot, want);
	}
}
#define CHECK_FMA(a, b, c) check_fma((a), (b), (c), __FILE__, __LINE__)

/* Every triple of edge values: signed zeros, the subnormal extremes and
 * threshold, ties (1 + 2^-24 is a binary32 midpoint: 2^-12 2^-12 + 1 ties
 * to even 1, + 3 2^-24 goes up), products that overflow to inf or fall
 * below the subnormals, infinities, NaN. */
static void test_edges(void **state)
{
	(void)state;
	note_path();
	static const double e[] = {0.0,       -0.0,     0x1p-149, -0x1p-149, 0x1p-126, 0x1.fffffcp-127, 0x1p-12,
				   -0x1p-12,  0x3p-12,  1.0,      -1.0,      1 + 0x1p-23, 0x1.8p64, FLT_MAX,
				   -FLT_MAX,  0x1p-75,  INFINITY, -INFINITY, NAN};
	const size_t n = sizeof e / sizeof e[0];
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++)
				CHECK_FMA(e[i], e[j], e[k]);
	CHECK_BITS("tie down to even", skv_hw32_dot((const double[]){0x1p-12, 1.0}, (const double[]){0x1p-12, 1.0}, 2),
		   1.0);
	CHECK_BITS("tie up to even", skv_hw32_dot((const double[]){0x3p-12, 1.0}, (const double[]){0x1p-12, 1.0}, 2),
		   1.0 + 0x1p-22);
}

/* Seeded random operands: patterns, near-cancellation, subnormal results. */
static void test_random_fma(void **state)
{
	(void)state;
	skv_rng r;
	skv_rng_seed(&r, 0x5ca32);
	for (int i = 0; i < 100000; i++) {
		CHECK_FMA(f32_pattern(&r), f32_pattern(&r), f32_pattern(&r));
		const double a = f32_at(&r, -30, 30), b = f32_at(&r, -30, 30);
		const int ep = ilogb(a) + ilogb(b);
		CHECK_FMA(a, b, f32_at(&r, ep - 30, ep + 2));
		CHECK_FMA(a, b, -skv_round(SKV_FP32, a * b));
		CHECK_FMA(f32_at(&r, -80, -70), f32_at(&r, -80, -70), f32_at(&r, -149, -127));
		CHECK_FMA(f32_at(&r, 60, 64), f32_at(&r, 60, 64), f32_at(&r, 120, 127));
	}
}

/* Whole loops: a dot of length d (any d, tails included) and a P.V update
 * of d lanes against the emulated loops, step for step in the same order. */
static void test_loops(void **state)
{
	(void)state;
	skv_rng r;
	skv_rng_seed(&r, 0x100b5);
	double q[133], k[133], acc[133], emu[133];
	for (size_t d = 1; d <= 133; d += (d < 12 ? 1 : 11)) {
		for (int t = 0; t < 200; t++) {
			const int wide = t % 4 == 0;
			for (size_t i = 0; i < d; i++) {
				q[i] = wide ? f32_pattern(&r) : f32_at(&r, -8, 4);
				k[i] = wide ? f32_pattern(&r) : f32_at(&r, -8, 4);
				acc[i] = emu[i] = wide ? f32_pattern(&r) : f32_at(&r, -6, 6);
			}
			double s = 0.0;
			for (size_t i = 0; i < d; i++)
				s = skv_fma_i(SKV_FP32, q[i], k[i], s);
			const double h = skv_hw32_dot(q, k, d);
			if (!ref_same(h, s))
				fail_msg("%s:%d: dot d=%zu trial %d: hw %a, emulated %a (q0 %a k0 %a)", __FILE__, __LINE__,
					 d, t, h, s, q[0], k[0]);
			const double p = skv_round(SKV_BF16, f32_at(&r, -20, 0));
			skv_hw32_pv(acc, p, k, d);
			for (size_t i = 0; i < d; i++) {
				const double want = skv_fma_i(SKV_FP32, p, k[i], emu[i]);
				if (!ref_same(acc[i], want))
					fail_msg("%s:%d: pv d=%zu lane %zu: fma(%a, %a, %a): hw %a, emulated %a", __FILE__,
						 __LINE__, d, i, p, k[i], emu[i], acc[i], want);
			}
		}
	}
}

/* The condition: compute fp32 with inputs of binary32 values only. */
static void test_condition(void **state)
{
	(void)state;
	skv_config c = *fp32_cfg();
	const int hw = skv_hw32_on(&c);
	c.input = SKV_FP64;
	CHECK_BITS("fp64 input", (double)skv_hw32_on(&c), 0.0);
	c.input = SKV_FP16;
	CHECK_BITS("fp16 input", (double)skv_hw32_on(&c), (double)hw);
	c.compute = SKV_BF16;
	CHECK_BITS("bf16 compute", (double)skv_hw32_on(&c), 0.0);
}

static void same_partials(const skv_partials *a, const skv_partials *b, const char *what)
{
	for (size_t i = 0; i < a->S * a->d; i++)
		if (!ref_same(a->o[i], b->o[i]) || !ref_same(a->acc[i], b->acc[i]))
			fail_msg("%s:%d: %s: element %zu: shared scores %a / %a, own %a / %a", __FILE__, __LINE__, what, i,
				 a->o[i], a->acc[i], b->o[i], b->acc[i]);
	for (size_t s = 0; s < a->S; s++)
		if (!ref_same(a->lse[s], b->lse[s]) || !ref_same(a->m[s], b->m[s]) || !ref_same(a->l[s], b->l[s]))
			fail_msg("%s:%d: %s: split %zu: lse %a vs %a, m %a vs %a, l %a vs %a", __FILE__, __LINE__, what, s,
				 a->lse[s], b->lse[s], a->m[s], b->m[s], a->l[s], b->l[s]);
}

/* One z from skv_scores_packed serves kernels of every split count and
 * block size, for every formula (raw scores, q-scaling, Flex's two
 * multiplies, vLLM's normalised P) and several compute formats: the same
 * partials as the kernel that scores by itself on the problem as doubles
 * (so the packed reader's rows are the same values too). */
static void test_shared_scores(void **state)
{
	(void)state;
	const size_t n = 700, d = 40;
	skv_problem p;
	skv_packed pk;
	CHECK_OK(skv_problem_init(&p, 1, n, d, SKV_DIST_SINK, 1.5, SKV_BF16, 77));
	CHECK_OK(skv_packed_init(&pk, 1, n, d, SKV_DIST_SINK, 1.5, SKV_BF16, 77));
	double *z = malloc(n * sizeof *z), *z2 = malloc(n * sizeof *z2);
	static const skv_format comp[] = {SKV_FP32, SKV_BF16, SKV_FP64};
	for (unsigned f = 0; f < SKV_NFORMULAS; f++)
		for (size_t c = 0; c < sizeof comp / sizeof comp[0]; c++) {
			skv_config cfg = skv_config_uniform(comp[c]);
			cfg.input = SKV_BF16;
			cfg.p = SKV_BF16;
			cfg.formula = (skv_formula)f;
			const int base = skv_formula_base(cfg.formula);
			cfg.base = base >= 0 ? (skv_lse_base)base : SKV_BASE_E;
			CHECK_OK(skv_scores_packed(z, &pk, 0, 0, n, 0.75, &cfg));
			CHECK_OK(skv_scores(z2, &p, 0, 0.75, &cfg));
			for (size_t j = 0; j < n; j++)
				CHECK_BITS("packed scores", z[j], z2[j]);
			static const size_t splits[] = {1, 3, 16}, blocks[] = {0, 32, 128};
			for (size_t s = 0; s < 3; s++)
				for (size_t b = 0; b < 3; b++) {
					size_t bounds[17];
					skv_partials a, o;
					CHECK_OK(skv_bounds_even(bounds, n, splits[s]));
					CHECK_OK(skv_partials_init(&a, splits[s], d));
					CHECK_OK(skv_partials_init(&o, splits[s], d));
					CHECK_OK(skv_split_kernel_packed(&a, &pk, 0, z, bounds, splits[s], splits[s], blocks[b],
									 0.75, &cfg));
					CHECK_OK(skv_split_kernel(&o, &p, 0, bounds, splits[s], blocks[b], 0.75, &cfg));
					same_partials(&a, &o, skv_formula_name(cfg.formula));
					skv_partials_free(&a);
					skv_partials_free(&o);
				}
		}
	skv_config a = skv_config_uniform(SKV_FP32), b = a;
	b.partial = SKV_FP16, b.blocks = SKV_BLOCKS_REVERSE;
	CHECK_BITS("shared across storage and order", (double)skv_scores_shared(&a, &b), 1.0);
	b.base = SKV_BASE_2;
	CHECK_BITS("not across bases", (double)skv_scores_shared(&a, &b), 0.0);
	b.base = a.base, b.formula = SKV_FORMULA_QSCALE;
	CHECK_BITS("not across formulas", (double)skv_scores_shared(&a, &b), 0.0);
	b.formula = a.formula, b.compute = SKV_BF16;
	CHECK_BITS("not across compute", (double)skv_scores_shared(&a, &b), 0.0);
	free(z);
	free(z2);
	skv_problem_free(&p);
	skv_packed_free(&pk);
}

/* The tensor-core scan on a packed problem (rows decoded a chunk at a
 * time, so copied: four keys for q.k, SKV_SCAN_MMA_ROWS V rows for P.V)
 * against the same problem as doubles (rows in place), scoring by itself
 * and with shared scores, for each GPU and input format: 701 keys and
 * head_dim 38 leave short instructions, a last group of fewer than four
 * keys and columns, and blocks across the reader's chunks. */
static void test_packed_gpu(void **state)
{
	(void)state;
	const size_t n = 701, d = 38;
	static const skv_format ins[] = {SKV_FP16, SKV_BF16, SKV_E4M3, SKV_E5M2};
	double *z = malloc(n * sizeof *z);
	int runs = 0;
	for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
		skv_problem p;
		skv_packed pk;
		CHECK_OK(skv_problem_init(&p, 1, n, d, SKV_DIST_GAUSSIAN, 1.0, ins[i], 31));
		CHECK_OK(skv_packed_init(&pk, 1, n, d, SKV_DIST_GAUSSIAN, 1.0, ins[i], 31));
		for (int g = SKV_GPU_V100; g < SKV_NGPUS; g++) {
			if (skv_mma_tile(NULL, NULL, (skv_gpu)g, ins[i]) != SKV_OK)
				continue;
			skv_config cfg = skv_config_uniform(SKV_FP32);
			cfg.input = cfg.p = ins[i];
			cfg.gpu = g;
			CHECK_OK(skv_scores_packed(z, &pk, 0, 0, n, 0.5, &cfg));
			static const size_t splits[] = {1, 5}, blocks[] = {0, 37, 128};
			for (size_t s = 0; s < 2; s++)
				for (size_t b = 0; b < 3; b++)
					for (int shared = 0; shared < 2; shared++) {
						size_t bounds[6];
						skv_partials a, o;
						CHECK_OK(skv_bounds_even(bounds, n, splits[s]));
						CHECK_OK(skv_partials_init(&a, splits[s], d));
						CHECK_OK(skv_partials_init(&o, splits[s], d));
						CHECK_OK(skv_split_kernel_packed(&a, &pk, 0, shared ? z : NULL, bounds, splits[s],
										 splits[s], blocks[b], 0.5, &cfg));
						CHECK_OK(skv_split_kernel(&o, &p, 0, bounds, splits[s], blocks[b], 0.5, &cfg));
						same_partials(&a, &o, skv_gpu_name((skv_gpu)g));
						skv_partials_free(&a);
						skv_partials_free(&o);
						runs++;
					}
		}
		skv_problem_free(&p);
		skv_packed_free(&pk);
	}
	free(z);
	assert_int_equal(runs, (5 + 4 + 3 + 3) * 12); /* fp16 on all five, bf16 on four, FP8 on three */
}

/* Blockwise attention on the packed problem, causal or not, scoring for
 * itself or reading one shared score matrix for every block size: the rows
 * of the problem as doubles, bit for bit (fp16 input: the F16C decoding). */
static void test_online_packed(void **state)
{
	(void)state;
	const size_t n = 150, d = 24;
	skv_problem p;
	skv_packed pk;
	CHECK_OK(skv_problem_init(&p, n, n, d, SKV_DIST_GAUSSIAN, 1.0, SKV_FP16, 5));
	CHECK_OK(skv_packed_init(&pk, n, n, d, SKV_DIST_GAUSSIAN, 1.0, SKV_FP16, 5));
	double *o1 = malloc(n * d * sizeof *o1), *o2 = malloc(n * d * sizeof *o2), l1[150], l2[150];
	double *z = malloc(n * n * sizeof *z);
	static const skv_format comp[] = {SKV_FP32, SKV_FP16};
	for (int causal = 0; causal < 2; causal++)
		for (size_t c = 0; c < 2; c++) {
			skv_config cfg = skv_config_uniform(comp[c]);
			cfg.input = SKV_FP16;
			for (size_t r = 0; r < n; r++)
				CHECK_OK(skv_scores_packed(z + r * n, &pk, r, 0, causal ? r + 1 : n, 0.0, &cfg));
			for (int shared = 0; shared < 2; shared++)
				for (size_t blk = 1; blk <= 64; blk *= 8) {
					CHECK_OK(skv_attention_online(o1, l1, &p, blk, causal, 0.0, &cfg));
					CHECK_OK(skv_attention_online_packed(o2, l2, &pk, shared ? z : NULL, blk, causal, 0.0,
									     &cfg));
					for (size_t i = 0; i < n * d; i++)
						CHECK_BITS(shared ? "online, shared scores" : "online packed", o2[i], o1[i]);
					for (size_t i = 0; i < n; i++)
						CHECK_BITS("online packed lse", l2[i], l1[i]);
				}
		}
	free(o1);
	free(o2);
	free(z);
	skv_problem_free(&p);
	skv_packed_free(&pk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),   cmocka_unit_test(test_random_fma), cmocka_unit_test(test_loops),
		cmocka_unit_test(test_condition), cmocka_unit_test(test_shared_scores),
		cmocka_unit_test(test_online_packed),
		cmocka_unit_test(test_packed_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
