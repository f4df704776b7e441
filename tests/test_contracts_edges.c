/* test_contracts_edges.c - the library at its edges: merges of huge LSEs against MPFR, no silent NaN, any block or size, partial structs (D4, D5, D7, D8). */
#include "testutil.h"

#include <float.h>
#include <mpfr.h>

/* The exact merge of the given doubles, x_i = sum_s e^(L_s - M) O_si /
 * sum_s e^(L_s - M), in MPFR at 256 bits (L_s - M is exact there: both
 * are doubles and the precision holds their difference). */
static void mpfr_merge(double *x, const double *outs, const double *lses, size_t S, size_t d)
{
	mpfr_t M, t, den, num;
	mpfr_inits2(256, M, t, den, num, (mpfr_ptr)0);
	double Md = -INFINITY;
	for (size_t s = 0; s < S; s++)
		Md = lses[s] > Md ? lses[s] : Md;
	mpfr_set_d(M, Md, MPFR_RNDN);
	for (size_t i = 0; i < d; i++) {
		mpfr_set_zero(den, 1);
		mpfr_set_zero(num, 1);
		for (size_t s = 0; s < S; s++) {
			if (lses[s] == -INFINITY)
				continue;
			mpfr_set_d(t, lses[s], MPFR_RNDN);
			mpfr_sub(t, t, M, MPFR_RNDN); /* exact */
			mpfr_exp(t, t, MPFR_RNDN);
			mpfr_add(den, den, t, MPFR_RNDN);
			mpfr_mul_d(t, t, outs[s * d + i], MPFR_RNDN);
			mpfr_add(num, num, t, MPFR_RNDN);
		}
		mpfr_div(num, num, den, MPFR_RNDN);
		x[i] = mpfr_get_d(num, MPFR_RNDN);
	}
	mpfr_clears(M, t, den, num, (mpfr_ptr)0);
}

/* D4: at every LSE magnitude, from 0 to DBL_MAX, the merge stays within
 * its stated bound (2n + 8) u max|O| of the exact merge of the given
 * doubles; two equal LSEs over outputs 1 and 2 give 1.5 (it gave 3 at
 * 1e17 and beyond: the weights summed to 2). */
static void test_merge_partials_any_magnitude(void **state)
{
	(void)state;
	const double u = 0x1p-53;
	const double X[] = {0.0, 1e3, 1e6, 1e7, 1e9, 1e12, 1e15, 1e17, 1e300, DBL_MAX, -1e300, -1e17};
	skv_rng r;
	skv_rng_seed(&r, 4);
	for (size_t i = 0; i < sizeof X / sizeof *X; i++) {
		const double two[2] = {1.0, 2.0}, eq[2] = {X[i], X[i]};
		double o;
		CHECK_OK(skv_merge_partials(&o, two, eq, 2, 1, 1));
		CHECK_BITS("equal LSEs", o, 1.5);
		/* random splits whose LSEs spread over a few nats around X */
		for (int trial = 0; trial < 20; trial++) {
			enum { S = 9, D = 5 };
			double outs[S * D], lses[S], x[D], out[D], big = 0;
			for (size_t s = 0; s < S; s++) {
				double step = X[i] == 0 ? 1 : fabs(X[i]) * 0x1p-52; /* a few spacings of X */
				lses[s] = s == 3 ? -INFINITY : X[i] - step * (double)skv_rng_below(&r, 8);
				if (!isfinite(lses[s]) && s != 3)
					lses[s] = X[i];
				for (size_t k = 0; k < D; k++) {
					outs[s * D + k] = skv_rng_normal(&r) * (trial % 2 ? 1e6 : 1);
					big = fmax(big, s == 3 ? 0 : fabs(outs[s * D + k]));
				}
			}
			CHECK_OK(skv_merge_partials(out, outs, lses, S, 1, D));
			mpfr_merge(x, outs, lses, S, D);
			for (size_t k = 0; k < D; k++)
				if (!(fabs(out[k] - x[k]) <= (2 * 8 + 8) * u * big))
					fail_msg("%s:%d: LSE around %a, trial %d: out[%zu] = %a, exact %a: error %a above (2n+8)u "
						 "max|O| = %a",
						 __FILE__, __LINE__, X[i], trial, k, out[k], x[k], fabs(out[k] - x[k]),
						 (2 * 8 + 8) * u * big);
		}
	}
}

/* D5: finite fp32 inputs whose score overflows fp32 give a status, not a
 * NaN; merge_states refuses a NaN or infinite accumulator of a block with
 * keys, as merge_partials refuses such a row. */
static void test_no_silent_nan(void **state)
{
	(void)state;
	float q[4] = {3e38f, 0, 0, 0}, k[8] = {3e38f, 0, 0, 0, 1, 1, 1, 1}, v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	float out[4] = {42, 42, 42, 42};
	assert_int_equal(skv_attention_blockwise_f32(out, q, k, v, 1, 2, 4, 2, 0), SKV_ERANGE);
	for (int i = 0; i < 4; i++)
		CHECK_BITS("untouched", (double)out[i], 42.0);
	double mx[2] = {0, 1}, sm[2] = {1, 1}, mm = 7, ms = 7, mo[2] = {7, 7};
	const double bad[] = {NAN, INFINITY, -INFINITY};
	for (size_t b = 0; b < 3; b++) {
		double acc[4] = {1, bad[b], 3, 4};
		mo[0] = 7;
		assert_int_equal(skv_merge_states(&mm, &ms, mo, mx, sm, acc, 2), SKV_EINVAL);
		CHECK_BITS("untouched", mo[0], 7.0);
		/* the same value in an empty block (max -inf) is never read */
		double m1[2] = {-INFINITY, 1}, l1[2] = {0, 1};
		CHECK_OK(skv_merge_states(&mm, &ms, mo, m1, l1, acc, 2));
		CHECK_BITS("the other block", mo[0], 3.0);
	}
}

/* D7: a block size beyond the split is no blocking at all, up to SIZE_MAX,
 * and gives the same bits as block 0; sizes whose byte counts overflow are
 * refused, never allocated short. */
static void test_any_block_size(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 2, 64, 4, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 1));
	skv_config cfg = skv_config_uniform(SKV_FP32);
	skv_partials a, b;
	CHECK_OK(skv_partials_init(&a, 2, 4));
	CHECK_OK(skv_partials_init(&b, 2, 4));
	size_t bounds[3] = {0, 40, 64};
	CHECK_OK(skv_split_kernel(&a, &p, 0, bounds, 2, 0, 0.0, &cfg));
	const size_t huge[] = {((size_t)1 << 61) + 1, (size_t)1 << 62, SIZE_MAX};
	for (size_t i = 0; i < 3; i++) {
		CHECK_OK(skv_split_kernel(&b, &p, 0, bounds, 2, huge[i], 0.0, &cfg));
		for (size_t k = 0; k < 8; k++)
			CHECK_BITS("same as one block", b.o[k], a.o[k]);
		double o1[8], o2[8];
		CHECK_OK(skv_attention_online(o1, NULL, &p, 0, 0, 0.0, &cfg));
		CHECK_OK(skv_attention_online(o2, NULL, &p, huge[i], 0, 0.0, &cfg));
		for (size_t k = 0; k < 8; k++)
			CHECK_BITS("online, same as one block", o2[k], o1[k]);
	}
	double mx[2] = {0, 0}, sm[2] = {1, 1}, acc[4] = {1, 2, 3, 4}, mm, ms, mo[2];
	assert_int_equal(skv_merge_states(&mm, &ms, mo, mx, sm, acc, ((size_t)1 << 61) + 1), SKV_EINVAL);
	skv_problem q = p;
	q.nq = SIZE_MAX / 2; /* a hand-built struct whose nq * d overflows */
	double out[8];
	assert_int_equal(skv_attention_online(out, NULL, &q, 4, 0, 0.0, &cfg), SKV_EINVAL);
	skv_partials_free(&a);
	skv_partials_free(&b);
	skv_problem_free(&p);
}

/* D8: partials holding only o and lse (what a caller that stores no state
 * has) are stored and merged by onepass and pairwise; flex, which needs
 * the maxes, sums and accumulators, refuses them. */
static void test_partials_without_state(void **state)
{
	(void)state;
	double o[4] = {1, 2, 3, 4}, lse[2] = {0, 1}, oo[4], ll[2], out[2], l;
	skv_partials src = {2, 2, o, lse, NULL, NULL, NULL}, dst = {2, 2, oo, ll, NULL, NULL, NULL};
	skv_config cfg = skv_config_uniform(SKV_FP16);
	CHECK_OK(skv_partials_store(&dst, &src, &cfg));
	CHECK_BITS("stored", dst.o[3], 4.0);
	skv_merge_spec ms = skv_merge_spec_default();
	for (int m = 0; m < 3; m++) {
		ms.merge = m == 0 ? SKV_MERGE_ONEPASS : m == 1 ? SKV_MERGE_PAIRWISE : SKV_MERGE_FLEX;
		int st = skv_merge_run(out, &l, &dst, &ms, &cfg);
		assert_int_equal(st, m < 2 ? SKV_OK : SKV_EINVAL);
	}
	/* a source with state into a destination without: refused */
	skv_partials full;
	CHECK_OK(skv_partials_init(&full, 2, 2));
	assert_int_equal(skv_partials_store(&dst, &full, &cfg), SKV_EINVAL);
	skv_partials_free(&full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_partials_any_magnitude),
		cmocka_unit_test(test_no_silent_nan),
		cmocka_unit_test(test_any_block_size),
		cmocka_unit_test(test_partials_without_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
