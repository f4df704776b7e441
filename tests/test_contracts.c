/* test_contracts.c - the seed contracts: skv_merge_partials, skv_merge_states, skv_attention_blockwise_f32. */
#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* H heads (one problem each) split at bounds; partials laid out [S][H][d]
 * as the contract says, from the fp64 split kernel; truth [H][d]. */
typedef struct {
	size_t S, H, d;
	double *outs, *lses;
	skv_dd *truth;
} mcase;

static void mcase_init(mcase *m, uint64_t seed, size_t n, size_t H, size_t d, const size_t *bounds, size_t S,
		       double sscale, double offset)
{
	m->S = S;
	m->H = H;
	m->d = d;
	m->outs = malloc(S * H * d * sizeof *m->outs);
	m->lses = malloc(S * H * sizeof *m->lses);
	m->truth = malloc(H * d * sizeof *m->truth);
	skv_config cfg = skv_config_uniform(SKV_FP64);
	for (size_t h = 0; h < H; h++) {
		tcase t;
		tcase_init(&t, 1, n, d, SKV_DIST_GAUSSIAN, sscale, SKV_FP64, seed + h, 0);
		skv_partials sp;
		CHECK_OK(skv_partials_init(&sp, S, d));
		CHECK_OK(skv_split_kernel(&sp, &t.p, 0, bounds, S, 0, offset, &cfg));
		for (size_t s = 0; s < S; s++) {
			memcpy(m->outs + (s * H + h) * d, sp.o + s * d, d * sizeof(double));
			m->lses[s * H + h] = sp.lse[s];
		}
		memcpy(m->truth + h * d, t.out, d * sizeof *t.out);
		skv_partials_free(&sp);
		tcase_free(&t);
	}
}

static void mcase_free(mcase *m)
{
	free(m->outs);
	free(m->lses);
	free(m->truth);
}

static double max_abs(const double *o, const skv_dd *t, size_t n)
{
	skv_errors e;
	CHECK_OK(skv_errors_compute(&e, o, t, n, SKV_FP64));
	return e.max_abs;
}

static void check_case(uint64_t seed, size_t n, size_t H, size_t d, const size_t *b, size_t S, double sscale)
{
	mcase m;
	mcase_init(&m, seed, n, H, d, b, S, sscale, 0.0);
	double *out = malloc(H * d * sizeof *out);
	CHECK_OK(skv_merge_partials(out, m.outs, m.lses, S, H, d));
	CHECK_LE("max abs error", max_abs(out, m.truth, H * d), 1e-13);
	free(out);
	mcase_free(&m);
}

/* The seed's visible tests, with the MPFR truth as the reference. */
static void test_two_equal_splits(void **state)
{
	(void)state;
	const size_t b[] = {0, 32, 64};
	check_case(1, 64, 2, 8, b, 2, 3.0);
}

static void test_uneven_splits(void **state)
{
	(void)state;
	const size_t b[] = {0, 7, 300, 301, 1000};
	check_case(2, 1000, 4, 16, b, 4, 3.0);
}

static void test_empty_splits_and_single(void **state)
{
	(void)state;
	const size_t b[] = {0, 0, 100, 100, 250, 250};
	check_case(3, 250, 3, 8, b, 5, 3.0);
	const size_t one[] = {0, 77};
	check_case(4, 77, 2, 5, one, 1, 3.0);
	/* S = 1: the partial is returned as it is */
	mcase m;
	mcase_init(&m, 5, 77, 2, 5, one, 1, 3.0, 0.0);
	double out[10];
	CHECK_OK(skv_merge_partials(out, m.outs, m.lses, 1, 2, 5));
	for (size_t i = 0; i < 10; i++)
		CHECK_BITS("S = 1", out[i], m.outs[i]);
	mcase_free(&m);
}

/* LSEs of 1000 and far beyond: shifting every LSE of a head by the same
 * constant changes nothing, and nothing overflows. */
static void test_extreme_lses(void **state)
{
	(void)state;
	const size_t b[] = {0, 10, 200, 333, 512};
	const double shifts[] = {1000, -1000, 1e5, -1e5, 1e300, -1e300};
	mcase m;
	mcase_init(&m, 6, 512, 2, 8, b, 4, 3.0, 0.0);
	double out[16];
	for (size_t i = 0; i < NELEM(shifts); i++) {
		double *l = malloc(sizeof(double) * 4 * 2);
		for (size_t k = 0; k < 8; k++)
			l[k] = m.lses[k] + shifts[i];
		CHECK_OK(skv_merge_partials(out, m.outs, l, 4, 2, 8));
		if (fabs(shifts[i]) > 1e10) {
			/* 1e300 + L rounds every LSE alike: the weights are lost, but
			 * nothing overflows and the result is a finite average */
			for (size_t k = 0; k < 16; k++)
				assert_true(isfinite(out[k]));
		} else {
			/* the shifted LSEs are rounded: |shift| u of weight error */
			CHECK_LE("shifted", max_abs(out, m.truth, 16), 1e-10);
		}
		free(l);
	}
	/* genuinely large scores: the kernel itself sees scores near 1000 */
	mcase m2;
	mcase_init(&m2, 7, 512, 2, 8, b, 4, 3.0, 1000.0);
	CHECK_OK(skv_merge_partials(out, m2.outs, m2.lses, 4, 2, 8));
	CHECK_LE("offset 1000", max_abs(out, m2.truth, 16), 1e-10);
	mcase_free(&m2);
	mcase_free(&m);
}

/* Any permutation of the splits gives the same bits. */
static void test_order_independent(void **state)
{
	(void)state;
	const size_t S = 9, H = 2, d = 6;
	const size_t b[] = {0, 3, 50, 50, 120, 121, 300, 301, 450, 600};
	mcase m;
	mcase_init(&m, 8, 600, H, d, b, S, 3.0, 0.0);
	double ref[12], out[12];
	CHECK_OK(skv_merge_partials(ref, m.outs, m.lses, S, H, d));
	skv_rng r;
	skv_rng_seed(&r, 99);
	double *po = malloc(S * H * d * sizeof *po), *pl = malloc(S * H * sizeof *pl);
	for (int trial = 0; trial < 50; trial++) {
		size_t perm[9];
		for (size_t s = 0; s < S; s++)
			perm[s] = s;
		for (size_t i = S - 1; i > 0; i--) {
			size_t j = (size_t)skv_rng_below(&r, i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (size_t s = 0; s < S; s++) {
			memcpy(po + s * H * d, m.outs + perm[s] * H * d, H * d * sizeof *po);
			memcpy(pl + s * H, m.lses + perm[s] * H, H * sizeof *pl);
		}
		CHECK_OK(skv_merge_partials(out, po, pl, S, H, d));
		for (size_t i = 0; i < H * d; i++)
			CHECK_BITS("permuted", out[i], ref[i]);
	}
	free(po);
	free(pl);
	mcase_free(&m);
}

static void test_merge_partials_bad_input(void **state)
{
	(void)state;
	double outs[2 * 1 * 2] = {1, 2, 3, 4}, lses[2] = {0.5, -1};
	double out[2] = {42, 42};
	assert_int_equal(skv_merge_partials(NULL, outs, lses, 2, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_partials(out, NULL, lses, 2, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_partials(out, outs, NULL, 2, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_partials(out, outs, lses, 0, 1, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_partials(out, outs, lses, 2, 0, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_partials(out, outs, lses, 2, 1, 0), SKV_EINVAL);
	const double bad[] = {NAN, INFINITY};
	for (size_t i = 0; i < NELEM(bad); i++) {
		double l[2] = {0.5, bad[i]};
		assert_int_equal(skv_merge_partials(out, outs, l, 2, 1, 2), SKV_EINVAL);
	}
	double empty[2] = {-INFINITY, -INFINITY};
	double z[4] = {0, 0, 0, 0};
	assert_int_equal(skv_merge_partials(out, z, empty, 2, 1, 2), SKV_EINVAL);
	/* a second head all empty, the first fine: still invalid, nothing written */
	double o2[2 * 2 * 1] = {1, 0, 2, 0}, l2[4] = {0.1, -INFINITY, 0.2, -INFINITY};
	assert_int_equal(skv_merge_partials(out, o2, l2, 2, 2, 1), SKV_EINVAL);
	CHECK_BITS("untouched", out[0], 42.0);
	CHECK_BITS("untouched", out[1], 42.0);
	CHECK_OK(skv_merge_partials(out, outs, lses, 2, 1, 2));
}

/* merge_states against the formula in long double and a hand case. */
static void test_merge_states_values(void **state)
{
	(void)state;
	/* hand case: m = (0, ln 3), l = (1, 1): a = (1/3, 1), l = 4/3 */
	double mx[2] = {0.0, log(3.0)}, sm[2] = {1.0, 1.0}, acc[2 * 2] = {3.0, 0.0, 0.0, 3.0};
	double mm, ms, mo[4];
	CHECK_OK(skv_merge_states(&mm, &ms, mo, mx, sm, acc, 2));
	CHECK_BITS("max", mm, log(3.0));
	CHECK_LE("sum", fabs(ms - 4.0 / 3.0), 4e-16);
	CHECK_LE("out0", fabs(mo[0] - 0.75), 4e-16); /* (1/3 * 3) / (4/3) */
	CHECK_LE("out1", fabs(mo[1] - 2.25), 4e-16); /* (1 * 3) / (4/3) */
	skv_rng r;
	skv_rng_seed(&r, 2024);
	for (int trial = 0; trial < 2000; trial++) {
		double m2[2], l2[2], a2[2 * 4];
		for (int i = 0; i < 2; i++) {
			m2[i] = 2000 * (skv_rng_uniform(&r) - 0.5);
			l2[i] = 1 + 100 * skv_rng_uniform(&r);
		}
		m2[1] = m2[0] + 40 * (skv_rng_uniform(&r) - 0.5); /* both matter */
		for (int i = 0; i < 8; i++)
			a2[i] = skv_rng_normal(&r) * 10;
		CHECK_OK(skv_merge_states(&mm, &ms, mo, m2, l2, a2, 4)); /* acc is [2][4] */
		long double M = m2[0] > m2[1] ? m2[0] : m2[1];
		long double a0 = expl(m2[0] - M), a1 = expl(m2[1] - M), L = a0 * l2[0] + a1 * l2[1];
		CHECK_BITS("max", mm, (double)M);
		CHECK_LE("sum", fabsl(ms - L) / L, 1e-15);
		for (int i = 0; i < 4; i++) {
			long double o = (a0 * a2[i] + a1 * a2[4 + i]) / L;
			long double scale = (fabsl(a0 * a2[i]) + fabsl(a1 * a2[4 + i])) / L;
			if (!(fabsl(mo[i] - o) <= 1e-15 * scale + 1e-300))
				fail_msg("%s:%d: m %a %a l %a %a acc %a %a: out %a want %La", __FILE__, __LINE__,
					 m2[0], m2[1], l2[0], l2[1], a2[i], a2[4 + i], mo[i], o);
		}
	}
}

/* Two online-softmax halves merged equal the whole, and empty blocks work. */
static void test_merge_states_halves_and_empty(void **state)
{
	(void)state;
	tcase t;
	tcase_init(&t, 1, 300, 8, SKV_DIST_GAUSSIAN, 3.0, SKV_FP64, 12, 0);
	skv_config cfg = skv_config_uniform(SKV_FP64);
	skv_partials sp;
	const size_t b[] = {0, 123, 300};
	CHECK_OK(skv_partials_init(&sp, 2, 8));
	CHECK_OK(skv_split_kernel(&sp, &t.p, 0, b, 2, 0, 0.0, &cfg));
	double mm, ms, mo[8];
	CHECK_OK(skv_merge_states(&mm, &ms, mo, sp.m, sp.l, sp.acc, 8));
	CHECK_LE("halves", norm_err(mo, t.out, 8, SKV_FP64), 1e-14);
	CHECK_LE("lse", skv_abs_err(mm + log(ms), t.lse[0]), 1e-13);
	/* one block empty: the other comes back */
	double m1[2] = {sp.m[0], -INFINITY}, l1[2] = {sp.l[0], 0.0}, a1[16];
	memcpy(a1, sp.acc, 8 * sizeof(double));
	memset(a1 + 8, 0, 8 * sizeof(double));
	CHECK_OK(skv_merge_states(&mm, &ms, mo, m1, l1, a1, 8));
	CHECK_BITS("max", mm, sp.m[0]);
	CHECK_BITS("sum", ms, sp.l[0]);
	for (int i = 0; i < 8; i++)
		CHECK_LE("one empty", fabs(mo[i] - sp.acc[i] / sp.l[0]), 0.0);
	/* both empty: the empty state, no NaN */
	double m0[2] = {-INFINITY, -INFINITY}, l0[2] = {0, 0};
	CHECK_OK(skv_merge_states(&mm, &ms, mo, m0, l0, a1, 8));
	CHECK_BITS("empty max", mm, -INFINITY);
	CHECK_BITS("empty sum", ms, 0.0);
	for (int i = 0; i < 8; i++)
		CHECK_BITS("empty out", mo[i], 0.0);
	skv_partials_free(&sp);
	tcase_free(&t);
}

static void test_merge_states_bad_input(void **state)
{
	(void)state;
	double mx[2] = {0, 1}, sm[2] = {1, 2}, acc[4] = {1, 2, 3, 4};
	double mm = 5, ms = 5, mo[2] = {5, 5};
	const double badsum[] = {-1.0, INFINITY, NAN, -INFINITY};
	for (size_t i = 0; i < NELEM(badsum); i++) {
		double s2[2] = {1, badsum[i]};
		assert_int_equal(skv_merge_states(&mm, &ms, mo, mx, s2, acc, 2), SKV_EINVAL);
	}
	const double badmax[] = {NAN, INFINITY};
	for (size_t i = 0; i < NELEM(badmax); i++) {
		double m2[2] = {badmax[i], 0};
		assert_int_equal(skv_merge_states(&mm, &ms, mo, m2, sm, acc, 2), SKV_EINVAL);
	}
	assert_int_equal(skv_merge_states(&mm, &ms, mo, mx, sm, acc, 0), SKV_EINVAL);
	assert_int_equal(skv_merge_states(NULL, &ms, mo, mx, sm, acc, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_states(&mm, NULL, mo, mx, sm, acc, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_states(&mm, &ms, NULL, mx, sm, acc, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_states(&mm, &ms, mo, NULL, sm, acc, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_states(&mm, &ms, mo, mx, NULL, acc, 2), SKV_EINVAL);
	assert_int_equal(skv_merge_states(&mm, &ms, mo, mx, sm, NULL, 2), SKV_EINVAL);
	CHECK_BITS("untouched", mm, 5.0);
	CHECK_BITS("untouched", ms, 5.0);
	CHECK_BITS("untouched", mo[0], 5.0);
}

/* blockwise f32 against the truth of the same float inputs. */
static void test_blockwise_f32(void **state)
{
	(void)state;
	const size_t T = 64, d = 16;
	for (int causal = 0; causal < 2; causal++)
		for (int big = 0; big < 2; big++) {
			/* big: scores beyond 1000 in magnitude (q scaled by 1000) */
			tcase t;
			tcase_init(&t, T, T, d, SKV_DIST_GAUSSIAN, big ? 1000.0 : 1.0, SKV_FP32, 50 + causal, causal);
			float *q = malloc(T * d * sizeof *q), *k = malloc(T * d * sizeof *k), *v = malloc(T * d * sizeof *v);
			float *o = malloc(T * d * sizeof *o);
			double *od = malloc(T * d * sizeof *od);
			for (size_t i = 0; i < T * d; i++) {
				q[i] = (float)t.p.q[i];
				k[i] = (float)t.p.k[i];
				v[i] = (float)t.p.v[i];
			}
			if (big) {
				double smax = 0;
				for (size_t r = 0; r < T; r++)
					for (size_t j = 0; j < T; j++) {
						double s = 0;
						for (size_t i = 0; i < d; i++)
							s += t.p.q[r * d + i] * t.p.k[j * d + i];
						smax = fmax(smax, fabs(s * t.p.scale));
					}
				CHECK_GE("scores beyond 1000", smax, 1000.0);
			}
			const size_t blocks[] = {1, 2, 4, 8, 16, 32, 64};
			for (size_t bi = 0; bi < NELEM(blocks); bi++) {
				CHECK_OK(skv_attention_blockwise_f32(o, q, k, v, T, T, d, blocks[bi], causal));
				for (size_t i = 0; i < T * d; i++)
					od[i] = o[i];
				/* large scores: the fp32 score rounding is |s| 2^-24 ~ 1e-4 */
				double e = norm_err(od, t.out, T * d, SKV_FP32);
				double bound = big ? 2e-3 : 1e-5;
				if (!(e <= bound))
					fail_msg("%s:%d: causal %d big %d block %zu: err %a", __FILE__, __LINE__, causal,
						 big, blocks[bi], e);
			}
			free(q);
			free(k);
			free(v);
			free(o);
			free(od);
			tcase_free(&t);
		}
}

static void test_blockwise_f32_bad_input(void **state)
{
	(void)state;
	float q[4 * 2] = {0}, k[4 * 2] = {0}, v[4 * 2] = {0}, o[4 * 2];
	for (int i = 0; i < 8; i++)
		o[i] = 9.0f;
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 4, 4, 2, 3, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 3, 4, 2, 2, 1), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 0, 4, 2, 2, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 4, 0, 2, 2, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 4, 4, 0, 2, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 4, 4, 2, 0, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(NULL, q, k, v, 4, 4, 2, 2, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, NULL, k, v, 4, 4, 2, 2, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, NULL, v, 4, 4, 2, 2, 0), SKV_EINVAL);
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, NULL, 4, 4, 2, 2, 0), SKV_EINVAL);
	q[3] = NAN;
	assert_int_equal(skv_attention_blockwise_f32(o, q, k, v, 4, 4, 2, 2, 0), SKV_EINVAL);
	for (int i = 0; i < 8; i++)
		assert_true(o[i] == 9.0f);
	q[3] = 0;
	CHECK_OK(skv_attention_blockwise_f32(o, q, k, v, 4, 4, 2, 2, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_equal_splits),
		cmocka_unit_test(test_uneven_splits),
		cmocka_unit_test(test_empty_splits_and_single),
		cmocka_unit_test(test_extreme_lses),
		cmocka_unit_test(test_order_independent),
		cmocka_unit_test(test_merge_partials_bad_input),
		cmocka_unit_test(test_merge_states_values),
		cmocka_unit_test(test_merge_states_halves_and_empty),
		cmocka_unit_test(test_merge_states_bad_input),
		cmocka_unit_test(test_blockwise_f32),
		cmocka_unit_test(test_blockwise_f32_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
