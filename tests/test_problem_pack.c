/* test_problem_pack.c - packed problems: the store table, exact packing of every value, the same problem and the same truth bits as doubles. */
#include <inttypes.h>

#include "problem_internal.h"
#include "ref_mpfr.h"
#include "testutil.h"
#include "truth_internal.h"

/* --------------------------------------------------------- the stores */

/* The store of each format, from the standards' parameters (not the
 * library's table): the smallest of binary16, bfloat16, binary32, binary64
 * whose values include the format's. */
static void test_store_table(void **state)
{
	(void)state;
	static const struct {
		skv_format f;
		int store;
	} want[] = {
		{SKV_FP16, SKV_STORE_F16},  {SKV_BF16, SKV_STORE_BF16},     {SKV_FP32, SKV_STORE_F32},
		{SKV_FP64, SKV_STORE_F64},  {SKV_TF32, SKV_STORE_F32},      {SKV_E4M3, SKV_STORE_F16},
		{SKV_E4M3_SAT, SKV_STORE_F16}, {SKV_E5M2, SKV_STORE_F16}, {SKV_E5M2_SAT, SKV_STORE_F16},
		{SKV_E2M1, SKV_STORE_F16},  {SKV_E8M0, -1},                 {SKV_UE4M3, -1},
	};
	assert_int_equal(sizeof want / sizeof want[0], SKV_NFORMATS);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		if (skv_store_of(want[i].f) != want[i].store)
			fail_msg("%s:%d: store of %s: %d, want %d", __FILE__, __LINE__, skv_format_name(want[i].f),
				 skv_store_of(want[i].f), want[i].store);
	assert_int_equal(skv_store_of((skv_format)SKV_NFORMATS), -1);
	assert_int_equal(skv_store_bytes(SKV_STORE_F16), 2);
	assert_int_equal(skv_store_bytes(SKV_STORE_BF16), 2);
	assert_int_equal(skv_store_bytes(SKV_STORE_F32), 4);
	assert_int_equal(skv_store_bytes(SKV_STORE_F64), 8);
	assert_int_equal(skv_store_bytes((skv_store)SKV_NSTORES), 0);
}

/* x through store s and back; fails unless it comes back bit for bit. */
static void round_trip(skv_store s, double x, const char *what, uint64_t pattern)
{
	unsigned char buf[8];
	double y;
	skv_pack_encode(buf, s, &x, 1);
	skv_pack_decode(&y, s, buf, 1);
	if (memcmp(&x, &y, sizeof x) != 0)
		fail_msg("%s:%d: %s pattern 0x%" PRIx64 ": %a came back as %a", __FILE__, __LINE__, what, pattern, x, y);
	skv_pack_decode_portable(&y, s, buf, 1);
	if (memcmp(&x, &y, sizeof x) != 0)
		fail_msg("%s:%d: %s pattern 0x%" PRIx64 ": %a came back as %a (portable)", __FILE__, __LINE__, what,
			 pattern, x, y);
}

/* Every finite value of every format of at most 16 bits, decoded by the
 * referee from its pattern, packs into its store and back exactly; fp32
 * and tf32 on seeded random values across their range (subnormals too);
 * fp64 values are stored as themselves. */
static void test_every_value_round_trips(void **state)
{
	(void)state;
	for (int f = 0; f < SKV_NFORMATS; f++) {
		const int s = skv_store_of((skv_format)f);
		if (s < 0 || f == SKV_FP32 || f == SKV_TF32 || f == SKV_FP64)
			continue;
		const ref_fmt *t = ref_fmt_of((skv_format)f);
		for (uint64_t b = 0; b < ref_npatterns(t); b++) {
			const double x = ref_decode((skv_format)f, b);
			if (isfinite(x))
				round_trip((skv_store)s, x, skv_format_name((skv_format)f), b);
		}
	}
	skv_rng r;
	skv_rng_seed(&r, 11);
	for (int i = 0; i < 200000; i++) {
		const double m = 2 * skv_rng_uniform(&r) - 1;
		const double x = ldexp(m, (int)skv_rng_below(&r, 300) - 160);
		round_trip(SKV_STORE_F32, skv_round(SKV_FP32, x), "fp32", (uint64_t)i);
		round_trip(SKV_STORE_F32, skv_round(SKV_TF32, x), "tf32", (uint64_t)i);
		round_trip(SKV_STORE_F64, x, "fp64", (uint64_t)i);
	}
}

/* Every binary16 and bfloat16 pattern decodes to the referee's value (the
 * F16C and portable paths alike, infinities and NaN included), and every
 * non-NaN one encodes back to itself: the encodings are the IEEE ones. */
static void test_patterns(void **state)
{
	(void)state;
	const struct {
		skv_store s;
		skv_format f;
	} c[] = {{SKV_STORE_F16, SKV_FP16}, {SKV_STORE_BF16, SKV_BF16}};
	static uint16_t h[65536], back[65536];
	static double x[65536], y[65536];
	for (unsigned i = 0; i < 65536; i++)
		h[i] = (uint16_t)i;
	for (size_t k = 0; k < 2; k++) {
		skv_pack_decode(x, c[k].s, h, 65536);
		skv_pack_decode_portable(y, c[k].s, h, 65536);
		skv_pack_encode(back, c[k].s, x, 65536);
		for (unsigned i = 0; i < 65536; i++) {
			const double want = ref_decode16(c[k].f, i);
			if (!ref_same(x[i], want) || !ref_same(y[i], want))
				fail_msg("%s:%d: %s pattern 0x%04x: %a (portable %a), want %a", __FILE__, __LINE__,
					 skv_format_name(c[k].f), i, x[i], y[i], want);
			if (!isnan(want) && back[i] != i)
				fail_msg("%s:%d: %s %a encoded as 0x%04x, want 0x%04x", __FILE__, __LINE__,
					 skv_format_name(c[k].f), want, back[i], i);
		}
	}
}

/* ------------------------------------------------ packed problems */

/* The packed problem's q, K and V equal skv_problem_init's bit for bit, or
 * both fail with the same status. */
static void check_same_problem(size_t nq, size_t n, size_t d, skv_dist dist, double ss, skv_format f,
			       uint64_t seed)
{
	skv_problem p;
	skv_packed pk;
	const int a = skv_problem_init(&p, nq, n, d, dist, ss, f, seed);
	const int b = skv_packed_init(&pk, nq, n, d, dist, ss, f, seed);
	if (a != b)
		fail_msg("%s:%d: %s %s n=%zu d=%zu: double problem %d, packed %d", __FILE__, __LINE__,
			 skv_format_name(f), skv_dist_name(dist), n, d, a, b);
	if (a != SKV_OK)
		return;
	assert_int_equal(pk.store, skv_store_of(f));
	assert_true(pk.prob.nq == nq && pk.prob.n == n && pk.prob.d == d);
	assert_memory_equal(&pk.prob.scale, &p.scale, sizeof p.scale);
	assert_memory_equal(pk.prob.q, p.q, nq * d * sizeof *p.q);
	assert_true(f == SKV_FP64 ? pk.prob.k == pk.k : pk.prob.k == NULL && pk.prob.v == NULL);
	double *k = malloc(n * d * sizeof *k), *v = malloc(n * d * sizeof *v);
	CHECK_OK(skv_packed_rows(k, v, &pk, 0, n));
	for (size_t i = 0; i < n * d; i++) {
		CHECK_BITS("packed k", k[i], p.k[i]);
		CHECK_BITS("packed v", v[i], p.v[i]);
	}
	free(k);
	free(v);
	skv_problem_free(&p);
	skv_packed_free(&pk);
	assert_null(pk.k);
}

/* Every value format, each distribution, sizes across the 8192-value
 * drawing chunks, and an overflow (ERANGE) that both refuse alike. */
static void test_same_problems(void **state)
{
	(void)state;
	const skv_dist dists[] = {SKV_DIST_GAUSSIAN, SKV_DIST_SINK, SKV_DIST_RAMP};
	for (int f = 0; f < SKV_NFORMATS; f++) {
		if (skv_format_is_scale((skv_format)f))
			continue;
		for (size_t k = 0; k < 3; k++) {
			check_same_problem(2, 100, 130, dists[k], 0.5, (skv_format)f, 3 + (uint64_t)f);
			check_same_problem(1, 7, 3, dists[k], 1.0, (skv_format)f, 4);
		}
	}
	check_same_problem(1, 64, 16, SKV_DIST_GAUSSIAN, 1e6, SKV_E4M3, 5); /* q overflows e4m3 */
	skv_packed pk;
	assert_int_equal(skv_packed_init(&pk, 1, 4, 4, SKV_DIST_GAUSSIAN, 0.5, SKV_E8M0, 1), SKV_EINVAL);
	assert_int_equal(skv_packed_init(NULL, 1, 4, 4, SKV_DIST_GAUSSIAN, 0.5, SKV_FP16, 1), SKV_EINVAL);
}

static void test_rows_errors(void **state)
{
	(void)state;
	skv_packed pk;
	CHECK_OK(skv_packed_init(&pk, 1, 10, 4, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 1));
	double k[40];
	k[0] = 0x1.5p3;
	assert_int_equal(skv_packed_rows(k, NULL, NULL, 0, 1), SKV_EINVAL);
	assert_int_equal(skv_packed_rows(k, NULL, &pk, 3, 2), SKV_EINVAL);
	assert_int_equal(skv_packed_rows(k, NULL, &pk, 0, 11), SKV_EINVAL);
	CHECK_BITS("nothing written", k[0], 0x1.5p3);
	CHECK_OK(skv_packed_rows(NULL, NULL, &pk, 0, 10));
	/* a reader of doubles refuses the packed problem instead of misreading it */
	skv_dd out[4], lse;
	assert_int_equal(skv_truth_range(out, &lse, &pk.prob, 0, 0, 10, SKV_TRUTH_PREC), SKV_EINVAL);
	skv_packed_free(&pk);
}

/* ------------------------------------------------------- the truth */

static void same_truth(const skv_problem *p, const skv_packed *pk, size_t row, size_t lo, size_t hi, long prec)
{
	const size_t d = p->d;
	skv_dd *a = malloc(d * sizeof *a), *b = malloc(d * sizeof *b), la, lb;
	CHECK_OK(skv_truth_range(a, &la, p, row, lo, hi, prec));
	CHECK_OK(skv_truth_range_packed(b, &lb, pk, row, lo, hi, prec));
	for (size_t i = 0; i < d; i++) {
		CHECK_BITS("out hi", b[i].hi, a[i].hi);
		CHECK_BITS("out lo", b[i].lo, a[i].lo);
	}
	CHECK_BITS("lse hi", lb.hi, la.hi);
	CHECK_BITS("lse lo", lb.lo, la.lo);
	free(a);
	free(b);
}

/* The fast path over ranges that start and end inside and across the
 * 64-key decoding chunks, for each store, and the MPFR path (prec 256)
 * on the decoded range. */
static void test_truth_same_bits(void **state)
{
	(void)state;
	const skv_format fs[] = {SKV_FP16, SKV_BF16, SKV_FP32, SKV_E4M3, SKV_FP64};
	const size_t ranges[][2] = {{0, 1000}, {3, 997}, {64, 128}, {0, 1}, {500, 500}, {63, 65}};
	for (size_t f = 0; f < sizeof fs / sizeof fs[0]; f++) {
		skv_problem p;
		skv_packed pk;
		CHECK_OK(skv_problem_init(&p, 2, 1000, 24, SKV_DIST_SINK, 0.5, fs[f], 9));
		CHECK_OK(skv_packed_init(&pk, 2, 1000, 24, SKV_DIST_SINK, 0.5, fs[f], 9));
		for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
			same_truth(&p, &pk, r % 2, ranges[r][0], ranges[r][1], SKV_TRUTH_PREC);
		same_truth(&p, &pk, 1, 10, 200, 256);
		skv_problem_free(&p);
		skv_packed_free(&pk);
	}
}

/* A packed problem built by hand whose fast truth declines (V cancels
 * exactly: equal scores, values +-1 in turn, so out = 0): the fallback runs
 * on the decoded range and gives the double problem's bits. */
static void test_truth_fallback(void **state)
{
	(void)state;
	enum { N = 64, D = 4 };
	double q[D] = {0, 0, 0, 0}, k[N * D], v[N * D];
	float kf[N * D], vf[N * D];
	for (size_t i = 0; i < N * D; i++) {
		k[i] = (double)(i % 7) - 3;
		v[i] = (i / D) % 2 ? 1.0 : -1.0;
		kf[i] = (float)k[i];
		vf[i] = (float)v[i];
	}
	const skv_problem p = {.nq = 1, .n = N, .d = D, .q = q, .k = k, .v = v, .scale = 0.5};
	const skv_packed pk = {.prob = {.nq = 1, .n = N, .d = D, .q = q, .scale = 0.5},
			       .store = SKV_STORE_F32, .k = kf, .v = vf};
	skv_dd out[D], lse;
	skv_truth_cert cert;
	assert_int_equal(skv_truth_fast(out, &lse, &cert, &p, 0, 0, N, SKV_TRUTH_ISA_AUTO), SKV_TRUTH_DECLINED);
	same_truth(&p, &pk, 0, 0, N, SKV_TRUTH_PREC);
	same_truth(&p, &pk, 0, 1, N - 1, SKV_TRUTH_PREC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_table),
		cmocka_unit_test(test_every_value_round_trips),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_same_problems),
		cmocka_unit_test(test_rows_errors),
		cmocka_unit_test(test_truth_same_bits),
		cmocka_unit_test(test_truth_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
