/* test_rng_batch.c - skv_rng_normals gives the bits of skv_rng_normal's scalar definition, on both instruction sets. */
#include "rng_internal.h"
#include "testutil.h"

/* ------------------------------------------ the scalar definition */

/* skv_rng_normal as lib/rng.c defines it, one operation at a time: the
 * polar method on u = 2 U - 1 with U = skv_rng_uniform (xoshiro256**,
 * checked against Vigna's reference code in tests/test_rng.c; the batched
 * path steps the generator with its own copy of the step), accepting
 * 0 < s < 1, and u sqrt(-2 log(s) / s) with skv_rng_log (the one specified
 * logarithm). This is the referee of the batched draws: no vector lanes,
 * no batching, the definition's order. */
static double ref_normal(skv_rng *r)
{
	for (;;) {
		const double u = 2 * skv_rng_uniform(r) - 1, v = 2 * skv_rng_uniform(r) - 1, s = u * u + v * v;
		if (s < 1 && s > 0)
			return u * sqrt(-2 * skv_rng_log(s) / s);
	}
}

static void check_state(const char *what, const skv_rng *r, const skv_rng *ref, size_t at)
{
	if (memcmp(r->s, ref->s, sizeof r->s) != 0)
		fail_msg("%s:%d: %s: generator state after %zu normals differs from the scalar draws", __FILE__,
			 __LINE__, what, at);
}

/* ------------------------------------------------------- the tests */

enum { BIG = 10000003 }; /* >= 10^7 values, not a multiple of the 256-pair rounds nor of 4 */

/* Every value of a 10^7-long stream, in one call, on each instruction set. */
static void test_long_stream(void **state)
{
	(void)state;
	double *got = malloc(BIG * sizeof *got);
	assert_non_null(got);
	for (int generic = 0; generic <= 1; generic++) {
		skv_rng r;
		skv_rng_seed(&r, 0x5eed0002 + (uint64_t)generic);
		skv_rng ref = r;
		CHECK_OK(skv_rng_normals_isa(got, BIG, &r, generic));
		for (size_t i = 0; i < BIG; i++) {
			const double want = ref_normal(&ref);
			if (memcmp(&got[i], &want, sizeof want) != 0)
				fail_msg("%s:%d: %s normal %zu: got %a, scalar definition %a", __FILE__, __LINE__,
					 generic ? "generic" : "auto", i, got[i], want);
		}
		check_state(generic ? "generic" : "auto", &r, &ref, BIG);
	}
	free(got);
}

/* Calls of every length around the round size and the lane width,
 * interleaved with scalar calls, from several seeds: the values and the
 * state where the scalar calls would leave them, and skv_rng_normal's own
 * values in between. */
static void test_lengths(void **state)
{
	(void)state;
	static const size_t lens[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 255, 256, 257, 511, 512, 513, 1000, 4099};
	static const uint64_t seeds[] = {0, 1, 42, 0x0123456789abcdef, UINT64_MAX};
	double buf[4099 + 8];
	for (int generic = 0; generic <= 1; generic++)
		for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
			skv_rng r;
			skv_rng_seed(&r, seeds[s]);
			skv_rng ref = r;
			size_t at = 0;
			for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
				buf[lens[l]] = 0x1.5p7; /* a sentinel: nothing beyond out[n) is written */
				CHECK_OK(skv_rng_normals_isa(buf, lens[l], &r, generic));
				for (size_t i = 0; i < lens[l]; i++)
					CHECK_BITS("batched normal", buf[i], ref_normal(&ref));
				CHECK_BITS("past the end", buf[lens[l]], 0x1.5p7);
				at += lens[l];
				check_state("after a batch", &r, &ref, at);
				CHECK_BITS("scalar normal after a batch", skv_rng_normal(&r), ref_normal(&ref));
				at++;
			}
		}
}

/* The public entry point is the automatic one; bad arguments leave r alone. */
static void test_public_and_errors(void **state)
{
	(void)state;
	double a[300], b[300];
	skv_rng r, q;
	skv_rng_seed(&r, 9);
	q = r;
	CHECK_OK(skv_rng_normals(a, 300, &r));
	CHECK_OK(skv_rng_normals_isa(b, 300, &q, 0));
	assert_memory_equal(a, b, sizeof a);
	assert_memory_equal(&r, &q, sizeof r);
	assert_int_equal(skv_rng_normals(a, 1, NULL), SKV_EINVAL);
	assert_int_equal(skv_rng_normals(NULL, 1, &r), SKV_EINVAL);
	assert_memory_equal(&r, &q, sizeof r);
	CHECK_OK(skv_rng_normals(NULL, 0, &r));
	assert_memory_equal(&r, &q, sizeof r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_long_stream),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_public_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
