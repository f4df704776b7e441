/* test_rng_batch.c - skv_rng_normals gives the bits of skv_rng_normal's scalar definition, on both instruction sets. */
#include <inttypes.h>

#include "rng_internal.h"
#include "testutil.h"

/* ------------------------------------------ the scalar definition */

/* skv_rng_normal as lib/rng.c defines it, transcribed on a separate copy of
 * xoshiro256** (Vigna's reference code, state as named words): the polar
 * method on u = 2 U - 1, U = (x >> 11) 2^-53, accepting 0 < s < 1, and
 * u sqrt(-2 log(s) / s) with skv_rng_log (the one specified logarithm).
 * This is the referee of the batched draws: same operations, one at a
 * time, no vector lanes. */
typedef struct {
	uint64_t a, b, c, d;
} ref_rng;

static uint64_t ref_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t ref_next(ref_rng *r)
{
	const uint64_t out = ref_rotl(r->b * 5, 7) * 9, t = r->b << 17;
	r->c ^= r->a;
	r->d ^= r->b;
	r->b ^= r->c;
	r->a ^= r->d;
	r->c ^= t;
	r->d = ref_rotl(r->d, 45);
	return out;
}

static double ref_uniform(ref_rng *r) { return ldexp((double)(ref_next(r) >> 11), -53); }

static double ref_normal(ref_rng *r)
{
	for (;;) {
		const double u = 2 * ref_uniform(r) - 1, v = 2 * ref_uniform(r) - 1, s = u * u + v * v;
		if (s < 1 && s > 0)
			return u * sqrt(-2 * skv_rng_log(s) / s);
	}
}

static ref_rng ref_from(const skv_rng *r) { return (ref_rng){r->s[0], r->s[1], r->s[2], r->s[3]}; }

static void check_state(const char *what, const skv_rng *r, const ref_rng *ref, size_t at)
{
	if (r->s[0] != ref->a || r->s[1] != ref->b || r->s[2] != ref->c || r->s[3] != ref->d)
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
		ref_rng ref = ref_from(&r);
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
			ref_rng ref = ref_from(&r);
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
