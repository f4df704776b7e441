/* test_kvcache.c - quantized KV caches: known values worked by hand from the cited definitions, scale edge cases, both references, bad caches. */
#include "testutil.h"
#include "catalog/catalog.h"

/* A problem of n keys of head dimension d with K and V given (q zero). */
static skv_problem mk(size_t n, size_t d, const double *k, const double *v)
{
	skv_problem p = {1, n, d, calloc(d, sizeof(double)), malloc(n * d * sizeof(double)),
			 malloc(n * d * sizeof(double)), 0.125};
	assert_non_null(p.q);
	assert_non_null(p.k);
	assert_non_null(p.v);
	for (size_t i = 0; i < n * d; i++) {
		p.k[i] = k ? k[i] : 0.0;
		p.v[i] = v ? v[i] : 0.0;
	}
	return p;
}

static skv_kv_cache cache(skv_format f, skv_kv_scale s, double ks, double vs)
{
	skv_kv_cache c = {SKV_KV(f), s, SKV_KVD_VALUES, ks, vs};
	return c;
}

/* Checks kern.k (or truth.k) against want[0..n). */
static void check_k(const double *got, const double *want, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&got[i], &want[i], sizeof got[i]) != 0)
			fail_msg("%s:%d: %s element %zu: got %a, want %a", __FILE__, __LINE__, what, i, got[i], want[i]);
}

/* Tensor scale given 0.5 in e4m3-sat (3 fraction bits): 0.8125 / 0.5 =
 * 1.625 = 1.101b is a value; 0.84375 / 0.5 = 1.6875 is the midpoint of
 * 1.625 (mantissa 101) and 1.75 (110) and ties to the even 1.75; 300 / 0.5
 * = 600 saturates to 448; -0.001 / 0.5 = -0.002 lies between the
 * subnormals 0 and 2^-9 = 0.00195..., nearer 2^-9. */
static void test_tensor_given(void **state)
{
	(void)state;
	const double k[4] = {0.8125, 0.84375, 300, -0.001}, want[4] = {0.8125, 0.875, 224, -0x1p-10};
	skv_problem p = mk(1, 4, k, k);
	skv_kv_cache c = cache(SKV_E4M3_SAT, SKV_KVS_TENSOR, 0.5, 0.5);
	skv_kv_problem kp;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP64, &c));
	check_k(kp.kern.k, want, 4, "kern.k");
	check_k(kp.truth.v, want, 4, "truth.v");
	assert_true(kp.shared);
	CHECK_BITS("k_scale", kp.k_scale, 0.5);
	CHECK_BITS("v_post", kp.v_post, 1.0);
	skv_kv_problem_free(&kp);
	/* the same in plain e4m3: 600 overflows to NaN, which no truth can hold */
	c.format = SKV_KV(SKV_E4M3);
	assert_int_equal(skv_kv_quantize(&kp, &p, SKV_FP64, &c), SKV_ERANGE);
	skv_problem_free(&p);
}

/* amax 3.5: s = RN32(3.5 / 448) = 2^-7 exactly; 1 / 2^-7 = 128 and
 * 0.875 / 2^-7 = 112 are e4m3 values; 0.0001 / 2^-7 = 0.0128 is subnormal
 * in e4m3 (spacing 2^-9): 6.55 spacings round to 7, 7 2^-16. Per token the
 * second row's amax 0.875 gives 0.875 / 448 = 2^-9 and 0.0001 / 2^-9 =
 * 0.0512 is normal (spacing 2^-8 in [2^-5, 2^-4)): 13.1 -> 13, 13 2^-17;
 * the first row keeps 2^-7 (its amax 3.5). */
static void test_amax_and_token(void **state)
{
	(void)state;
	const double k[4] = {3.5, 1, 0.875, 0.0001};
	skv_problem p = mk(2, 2, k, k);
	skv_kv_cache c = cache(SKV_E4M3, SKV_KVS_TENSOR, 0, 0);
	skv_kv_problem kp;
	const double wt[4] = {3.5, 1, 0.875, 7 * 0x1p-16}, wk[4] = {3.5, 1, 0.875, 13 * 0x1p-17};
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP32, &c));
	CHECK_BITS("tensor scale", kp.k_scale, 0x1p-7);
	check_k(kp.kern.k, wt, 4, "tensor amax");
	skv_kv_problem_free(&kp);
	c.scale = SKV_KVS_HEAD; /* one head: the tensor's numbers */
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP32, &c));
	check_k(kp.kern.k, wt, 4, "head amax");
	skv_kv_problem_free(&kp);
	c.scale = SKV_KVS_TOKEN;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP32, &c));
	check_k(kp.kern.k, wk, 4, "token amax");
	skv_kv_problem_free(&kp);
	skv_problem_free(&p);
}

/* MX with e2m1 elements (emax 2), d = 64. Block 0 has amax 7: X = 2^(2 -
 * 2) = 1; 7 clamps to 6; 5 is the midpoint of 4 (mantissa 0) and 6 (1)
 * -> 4; 2.5 of 2 and 3 -> 2; 0.25 of 0 and 0.5 -> 0; -1.25 of -1 and -1.5
 * -> -1. Block 1 has amax 0.75: X = 2^(-1 - 2) = 2^-3; 0.75 -> 6 X; 0.1 ->
 * 0.8 -> 1 -> 0.125. */
static void test_mx(void **state)
{
	(void)state;
	double k[64] = {7, 5, 2.5, 0.25, -1.25}, want[64] = {6, 4, 2, 0, -1};
	k[32] = 0.75;
	k[33] = 0.1;
	want[32] = 0.75;
	want[33] = 0.125;
	skv_problem p = mk(1, 64, k, NULL);
	skv_kv_cache c = cache(SKV_E2M1, SKV_KVS_MX, 0, 0);
	skv_kv_problem kp;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP64, &c));
	check_k(kp.kern.k, want, 64, "mx e2m1");
	for (size_t i = 0; i < 64; i++) /* V is all zero: X = 2^-127, zeros stay zeros */
		CHECK_BITS("zero block", kp.kern.v[i], 0.0);
	skv_kv_problem_free(&kp);
	/* the clamp in plain e4m3 (overflow to NaN): amax 500 gives X = 2^(8 -
	 * 8) = 1, 500 clamps to 448 instead of rounding to 512 (NaN) */
	p.k[0] = 500;
	c.format = SKV_KV(SKV_E4M3);
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP64, &c));
	CHECK_BITS("mx e4m3 clamp", kp.kern.k[0], 448);
	skv_kv_problem_free(&kp);
	skv_problem_free(&p);
}

/* NVFP4, e2m1, d = 16, tensor scale given 0.25: amax 3 -> RN32(3 / 6) =
 * 0.5, / 0.25 = 2, a ue4m3 value; element scale 2 * 0.25 = 0.5; 3 -> 6 ->
 * 3; 1.1 -> 2.2 -> 2 -> 1; -0.4 -> -0.8 -> -1 -> -0.5. Derived: the tensor
 * scale is RN32(3 / (6 * 448)). */
static void test_nvfp4(void **state)
{
	(void)state;
	double k[16] = {3, 1.1, -0.4}, want[16] = {3, 1, -0.5};
	skv_problem p = mk(1, 16, k, NULL);
	skv_kv_cache c = cache(SKV_E2M1, SKV_KVS_NVFP4, 0.25, 0);
	skv_kv_problem kp;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP64, &c));
	check_k(kp.kern.k, want, 16, "nvfp4 e2m1");
	skv_kv_problem_free(&kp);
	c.k_scale = 0;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_FP64, &c));
	CHECK_BITS("derived tensor scale", kp.k_scale, skv_round(SKV_FP32, 3.0 / 2688.0));
	CHECK_BITS("amax element keeps its value", kp.kern.k[0], skv_round(SKV_FP32, 3.0));
	skv_kv_problem_free(&kp);
	skv_problem_free(&p);
}

/* SGLang's fp4 cache, d = 32 (two blocks of 16). Block 0, amax 5: 5 / 6
 * rounds to 0.8333..., ceil(log2) = 0, X = 1; ties go away from zero, so
 * 5 -> 6, 2.5 -> 3, 0.25 -> 0.5, -1.25 -> -1.5 (round to nearest even
 * gives 4, 2, 0, -1), and 1.1 -> 1. Block 1, amax 12.5: 12.5 / 6 =
 * 2.083..., X = 2^2, 12.5 / 4 = 3.125 -> 3 -> 12; 0.75 / 4 = 0.1875 -> 0. */
static void test_sglang_fp4(void **state)
{
	(void)state;
	double k[32] = {5, 2.5, 0.25, -1.25, 1.1}, want[32] = {6, 3, 0.5, -1.5, 1};
	k[16] = 12.5, k[17] = 0.75;
	want[16] = 12;
	skv_problem p = mk(1, 32, k, NULL);
	skv_kv_cache c = cache(SKV_E2M1, SKV_KVS_SGLANG, 0, 0);
	skv_kv_problem kp;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_BF16, &c));
	check_k(kp.kern.k, want, 32, "sglang-fp4");
	for (size_t i = 0; i < 32; i++) /* an all-zero block: X = 2^-33, zeros */
		CHECK_BITS("zero block", kp.kern.v[i], 0.0);
	skv_kv_problem_free(&kp);
	c.format = SKV_KV(SKV_E4M3);
	assert_non_null(skv_kv_cache_invalid(&c, 32));
	skv_problem_free(&p);
}

/* Dequantisation into bf16 with a scale that is no power of two: x' =
 * RN_bf16(RN32(q s)) (vLLM: __float2bfloat16(float(fp8) * scale)). */
static void test_dequant_rounds(void **state)
{
	(void)state;
	const double k[2] = {0.2, -0.7};
	skv_problem p = mk(1, 2, k, k);
	skv_kv_cache c = cache(SKV_E4M3_SAT, SKV_KVS_TENSOR, 0.1, 0.1);
	skv_kv_problem kp;
	CHECK_OK(skv_kv_quantize(&kp, &p, SKV_BF16, &c));
	const double s = skv_round(SKV_FP32, 0.1);
	for (int i = 0; i < 2; i++) {
		const double q = skv_round(SKV_E4M3_SAT, skv_div(SKV_FP32, k[i], s));
		CHECK_BITS("bf16 dequant", kp.kern.k[i], skv_round(SKV_BF16, skv_mul(SKV_FP32, q, s)));
	}
	skv_kv_problem_free(&kp);
	skv_problem_free(&p);
}

/* Scores placement: the kernel reads the codes with the scale folded into
 * the softmax scale; the truth's values are code * scale exactly, which
 * with a power-of-two scale and fp32 input are also the values placement's
 * dequantized values, bit for bit. */
static void test_scores_placement(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 64, 32, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 7));
	skv_kv_cache c = cache(SKV_E4M3_SAT, SKV_KVS_TENSOR, 0x1p-3, 0x1p-2);
	skv_kv_problem a, b;
	CHECK_OK(skv_kv_quantize(&a, &p, SKV_FP32, &c));
	c.deq = SKV_KVD_SCORES;
	CHECK_OK(skv_kv_quantize(&b, &p, SKV_FP32, &c));
	assert_false(b.shared);
	CHECK_BITS("kernel scale", b.kern.scale, p.scale * 0x1p-3);
	CHECK_BITS("truth scale", b.truth.scale, p.scale);
	CHECK_BITS("v_post", b.v_post, 0x1p-2);
	check_k(b.truth.k, a.truth.k, 64 * 32, "scores truth = values truth");
	check_k(b.truth.v, a.truth.v, 64 * 32, "scores truth V");
	for (size_t i = 0; i < 64 * 32; i++)
		CHECK_BITS("code", b.kern.k[i], skv_round(SKV_E4M3_SAT, p.k[i] * 8));
	CHECK_BITS("post", skv_kv_post(SKV_BF16, 1.0 / 3, 0.1), skv_round(SKV_BF16, skv_mul(SKV_FP32, 1.0 / 3, 0.1)));
	skv_kv_problem_free(&a);
	skv_kv_problem_free(&b);
	skv_problem_free(&p);
}

/* The two references: the quantized truth differs from the original's for
 * a real cache, equals it (and the problem) with no cache. */
static void test_references(void **state)
{
	(void)state;
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 256, 32, SKV_DIST_GAUSSIAN, 0.5, SKV_BF16, 3));
	skv_kv_cache none = {0, SKV_KVS_NONE, SKV_KVD_VALUES, 0, 0}, c = cache(SKV_E2M1, SKV_KVS_MX, 0, 0);
	skv_kv_problem a, b;
	CHECK_OK(skv_kv_quantize(&a, &p, SKV_BF16, &none));
	CHECK_OK(skv_kv_quantize(&b, &p, SKV_BF16, &c));
	check_k(a.truth.k, p.k, 256 * 32, "no cache");
	skv_dd to[32], tq[32], t0[32], lo, lq, l0;
	CHECK_OK(skv_truth_range(to, &lo, &p, 0, 0, 256, SKV_TRUTH_PREC));
	CHECK_OK(skv_truth_range(t0, &l0, &a.truth, 0, 0, 256, SKV_TRUTH_PREC));
	CHECK_OK(skv_truth_range(tq, &lq, &b.truth, 0, 0, 256, SKV_TRUTH_PREC));
	double diff = 0;
	for (int i = 0; i < 32; i++) {
		CHECK_BITS("no cache: same truth", t0[i].hi, to[i].hi);
		diff = fmax(diff, fabs(tq[i].hi - to[i].hi));
	}
	CHECK_GE("fp4 cache moves the truth", diff, 1e-3);
	CHECK_LE("but not beyond e2m1's reach", diff, 1.0);
	skv_kv_problem_free(&a);
	skv_kv_problem_free(&b);
	skv_problem_free(&p);
}

/* Bad caches: one reason each, and skv_kv_quantize refuses them. */
static void test_invalid(void **state)
{
	(void)state;
	struct {
		skv_kv_cache c;
		size_t d;
	} bad[] = {
		{{SKV_KV(SKV_E8M0), SKV_KVS_TENSOR, 0, 0, 0}, 32},  {{SKV_KV(SKV_UE4M3), SKV_KVS_NONE, 0, 0, 0}, 32},
		{{SKV_KV(SKV_E2M1), SKV_KVS_MX, 0, 0, 0}, 48},       {{SKV_KV(SKV_E2M1), SKV_KVS_NVFP4, 0, 0, 0}, 40},
		{{SKV_KV(SKV_E4M3), SKV_KVS_TENSOR, 0, -1, 0}, 32}, {{SKV_KV(SKV_E4M3), SKV_KVS_TENSOR, 0, 0, INFINITY}, 32},
		{{SKV_KV(SKV_E4M3), SKV_KVS_TENSOR, 0, NAN, 0}, 32}, {{SKV_KV(SKV_E4M3), SKV_KVS_TENSOR, 0, 1e-50, 0}, 32},
		{{SKV_KV(SKV_E4M3), SKV_KVS_TOKEN, 0, 2, 0}, 32},    {{SKV_KV(SKV_E4M3), SKV_KVS_TOKEN, 1, 0, 0}, 32},
		{{0, SKV_KVS_TENSOR, 0, 0, 0}, 32},                  {{SKV_NFORMATS + 1, SKV_KVS_NONE, 0, 0, 0}, 32},
		{{SKV_KV(SKV_E4M3), SKV_NKVSCALES, 0, 0, 0}, 32},    {{SKV_KV(SKV_E4M3), SKV_KVS_NONE, 2, 0, 0}, 32},
	};
	skv_problem p;
	CHECK_OK(skv_problem_init(&p, 1, 4, 48, SKV_DIST_GAUSSIAN, 0.5, SKV_FP32, 1));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *why = skv_kv_cache_invalid(&bad[i].c, bad[i].d);
		if (!why)
			fail_msg("%s:%d: bad cache %zu accepted", __FILE__, __LINE__, i);
		assert_null(strchr(why, '\n'));
		skv_kv_problem kp = {.k_scale = 42};
		if (bad[i].d == 48) {
			assert_int_equal(skv_kv_quantize(&kp, &p, SKV_FP32, &bad[i].c), SKV_EINVAL);
			CHECK_BITS("untouched", kp.k_scale, 42);
		}
	}
	skv_kv_cache ok = cache(SKV_E4M3, SKV_KVS_NVFP4, 0, 0);
	assert_null(skv_kv_cache_invalid(&ok, 48));
	assert_null(skv_kv_cache_invalid(&ok, 16));
	skv_kv_scale s;
	skv_kv_deq dq;
	assert_int_equal(skv_kv_scale_parse(&s, "token"), SKV_OK);
	assert_int_equal(s, SKV_KVS_TOKEN);
	assert_int_equal(skv_kv_scale_parse(&s, "block"), SKV_EINVAL);
	assert_int_equal(skv_kv_deq_parse(&dq, "scores"), SKV_OK);
	assert_string_equal(skv_kv_scale_name(SKV_KVS_MX), "mx");
	assert_null(skv_kv_scale_name(SKV_NKVSCALES));
	assert_int_equal(skv_kv_block(SKV_KVS_NVFP4), 16);
	skv_problem_free(&p);
}

/* The systems and empty-splits experiments sweep NO_KV_PRESETS: every
 * preset without a KV cache, in the library's order. */
static void test_no_kv_presets(void **state)
{
	(void)state;
	char list[] = NO_KV_PRESETS;
	size_t i = 0;
	for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (i < skv_preset_count() && skv_preset_at(i)->kv.format != 0)
			i++;
		assert_true(i < skv_preset_count());
		assert_string_equal(t, skv_preset_at(i)->name);
		i++;
	}
	while (i < skv_preset_count() && skv_preset_at(i)->kv.format != 0)
		i++;
	assert_int_equal(i, skv_preset_count()); /* none left out */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tensor_given),     cmocka_unit_test(test_amax_and_token),
		cmocka_unit_test(test_mx),               cmocka_unit_test(test_nvfp4),
		cmocka_unit_test(test_dequant_rounds),   cmocka_unit_test(test_scores_placement),
		cmocka_unit_test(test_references),       cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_sglang_fp4),       cmocka_unit_test(test_no_kv_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
