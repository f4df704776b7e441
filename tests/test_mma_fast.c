/* test_mma_fast.c - the block FMA's shortcuts (all-normal operands, scalar and AVX2, P.V four columns at a time and q.k four keys at a time) give the general exact path's bits on seeded random blocks. */
#include "ref_mpfr.h"
#include "scan.h"
#include "testutil.h"

/*
 * The referee is lib/mma.c's general path (gather + aligned_sum), which
 * the recorded GPU vectors validate (tests/test_mma.c): a copy of the unit
 * with fast = 0 takes it for the same parameters (unit_fill derives fast;
 * no other field depends on it). Each unit of every GPU, input and output
 * format meets blocks drawn to hit the shortcuts' edges: operands across
 * the format's whole exponent range with its subnormals, zeros, infinities
 * and NaN; products cancelling pairwise; c near -a.b, zero, tiny or near
 * the output's overflow.
 */

enum { KMAX = 128, DMAX = 24, ROUNDS = 3000 };


/* A value of f: mode 0 uniform in [-2, 2); 3 and 4 the same scaled to
 * about 2^(emin / 2), so that products fall near 2^emin (4: below the
 * units' min_exp, -133 or -21 at fp16 out); 1 a random significand at an
 * exponent across [emin - p, emax] (subnormals, underflow to 0), with a
 * zero (4 in 256), an infinity or a NaN (1 in 256 each) where f has them. */
static double draw(skv_rng *r, skv_format f, int mode)
{
	const double u = skv_rng_uniform(r);
	if (mode == 0)
		return skv_round(f, 4 * u - 2);
	if (mode >= 3) {
		const int e = skv_format_emin(f) / 2 - 10 + (int)(skv_rng_next(r) % (mode == 3 ? 14 : 6));
		return skv_round(f, ldexp(4 * u - 2, e));
	}
	const uint64_t k = skv_rng_next(r) % 256;
	if (k == 0 || k > 252)
		return 0.0;
	if (k == 1)
		return skv_round(f, (u < 0.5 ? -1 : 1) * INFINITY);
	if (k == 2)
		return NAN;
	const int lo = skv_format_emin(f) - skv_format_precision(f), hi = skv_format_emax(f);
	const int e = lo + (int)(skv_rng_next(r) % (uint64_t)(hi - lo + 1));
	const double x = ldexp(1 + skv_rng_uniform(r), e) * (u < 0.5 ? -1 : 1);
	const double y = skv_round(f, x);
	return isfinite(y) ? y : skv_round(f, ldexp(1.0, hi));
}

/* a, b of K values of the unit's input as draw's mode, except mode 2:
 * pairs whose products nearly cancel (b of the second a neighbour of the
 * first's). */
static void draw_vectors(double *a, double *b, skv_rng *r, skv_format in, size_t K, int mode)
{
	for (size_t i = 0; i < K; i++) {
		a[i] = draw(r, in, mode == 2 ? 0 : mode);
		b[i] = draw(r, in, mode == 2 ? 0 : mode);
		if (mode == 2 && (i & 1)) {
			a[i] = -a[i - 1];
			b[i] = skv_round(in, b[i - 1] * (1 + ldexp(skv_rng_uniform(r) - 0.5, -6)));
		}
	}
}

/* An accumulator of the unit's output: near -a.b, zero, tiny, near overflow,
 * infinite, NaN or ordinary. */
static double draw_c(skv_rng *r, skv_format out, const double *a, const double *b, size_t K)
{
	double s = 0;
	switch (skv_rng_next(r) % 8) {
	case 0: return 0.0;
	case 1:
		for (size_t i = 0; i < K; i++)
			s -= a[i] * b[i];
		return isfinite(s) ? skv_round(out, s) : 0.0;
	case 2: return skv_round(out, ldexp(skv_rng_uniform(r) - 0.5, skv_format_emin(out) - 3));
	case 3: return skv_round(out, ldexp(skv_rng_uniform(r) + 1, skv_format_emax(out)));
	case 6: return skv_rng_uniform(r) < 0.5 ? INFINITY : -INFINITY;
	case 7: return NAN;
	default: return skv_round(out, 8 * skv_rng_uniform(r) - 4);
	}
}

static void failed(const char *what, const skv_mma_unit *u, size_t K, int line)
{
	fail_msg("%s:%d: %s: %s %s -> %s, K %zu", __FILE__, line, what, skv_gpu_name((skv_gpu)u->gpu),
		 skv_format_name(u->input), skv_format_name(u->output), K);
}

/* One dot product, contiguous (the AVX2 block) and strided (scalar), and
 * the chain of the GPU's instructions over it. */
static void check_dot(const skv_mma_unit *u, const skv_mma_unit *ref, skv_rng *r, size_t K, int mode)
{
	double a[KMAX], b[2 * KMAX];
	draw_vectors(a, b, r, u->input, K, mode);
	for (size_t i = K; i < KMAX; i++) /* past K: products a wrong read would add */
		a[i] = b[i] = 1.0;
	const double c = draw_c(r, u->output, a, b, K);
	const double want = skv_mma_dot_fast(ref, a, 1, b, 1, K, c), got = skv_mma_dot_fast(u, a, 1, b, 1, K, c);
	if (!ref_same(got, want)) {
		for (size_t i = 0; i < K; i++)
			print_message("a[%zu] %a b[%zu] %a\n", i, a[i], i, b[i]);
		print_message("c %a: got %a, want %a\n", c, got, want);
		failed("contiguous dot", u, K, __LINE__);
	}
	unsigned k = u->par.n;
	skv_mma_tile(&k, NULL, (skv_gpu)u->gpu, u->input);
	double ch = c;
	for (size_t k0 = 0; k0 < K; k0 += k) /* q.k's chain of instructions */
		ch = skv_mma_dot_fast(ref, a + k0, 1, b + k0, 1, K - k0 < k ? K - k0 : k, ch);
	const double gc = skv_mma_chain(u, k, a, 1, b, 1, K, c);
	if (!ref_same(gc, ch)) {
		print_message("c %a: got %a, want %a\n", c, gc, ch);
		failed("instruction chain", u, K, __LINE__);
	}
	for (size_t i = K; i-- > 0;) /* b at stride 2 */
		b[2 * i] = b[i], b[2 * i + 1] = NAN;
	const double s = skv_mma_dot_fast(u, a, 1, b, 2, K, c);
	if (!ref_same(s, want)) {
		print_message("c %a: got %a, want %a\n", c, s, want);
		failed("strided dot", u, K, __LINE__);
	}
}

/* P.V of n keys over d columns through skv_mma_pv against each column's
 * chain of instructions on the general path. */
static void check_pv(const skv_mma_unit *u, const skv_mma_unit *ref, skv_rng *r, size_t n, size_t d, int mode)
{
	unsigned k = u->par.n;
	skv_mma_tile(&k, NULL, (skv_gpu)u->gpu, u->input);
	double p[KMAX], v[KMAX * DMAX], acc[DMAX], want[DMAX], tmp[KMAX];
	for (size_t i = 0; i < d; i++) {
		draw_vectors(p, tmp, r, u->input, n, mode);
		for (size_t j = 0; j < n; j++)
			v[j * d + i] = tmp[j];
	}
	draw_vectors(p, tmp, r, u->input, n, mode);
	for (size_t i = 0; i < d; i++)
		acc[i] = want[i] = draw_c(r, u->output, p, tmp, n);
	for (size_t k0 = 0; k0 < n; k0 += k)
		for (size_t i = 0; i < d; i++)
			want[i] = skv_mma_dot_fast(ref, p + k0, 1, v + k0 * d + i, d, n - k0 < k ? n - k0 : k, want[i]);
	skv_mma_pv(acc, u, k, p, v, n, d);
	for (size_t i = 0; i < d; i++)
		if (!ref_same(acc[i], want[i])) {
			for (size_t j = 0; j < n; j++)
				print_message("p[%zu] %a v %a\n", j, p[j], v[j * d + i]);
			print_message("column %zu of %zu: got %a, want %a\n", i, d, acc[i], want[i]);
			failed("P.V", u, n, __LINE__);
		}
}

/* Four keys' q.k through skv_mma_dot4 (the keys transposed into four
 * columns) against each key's chain of instructions on the general path. */
static void check_dot4(const skv_mma_unit *u, const skv_mma_unit *ref, skv_rng *r, size_t K, int mode)
{
	unsigned k = u->par.n;
	skv_mma_tile(&k, NULL, (skv_gpu)u->gpu, u->input);
	double q[KMAX], kr[4 * KMAX], kt[4 * KMAX], tmp[KMAX], s[4];
	for (size_t t = 0; t < 4; t++) {
		draw_vectors(q, tmp, r, u->input, K, mode);
		memcpy(kr + t * K, tmp, K * sizeof *tmp);
	}
	draw_vectors(q, tmp, r, u->input, K, mode);
	skv_mma_dot4(s, u, k, q, kr, K, kt);
	for (size_t t = 0; t < 4; t++) {
		double want = 0.0;
		for (size_t k0 = 0; k0 < K; k0 += k)
			want = skv_mma_dot_fast(ref, q + k0, 1, kr + t * K + k0, 1, K - k0 < k ? K - k0 : k, want);
		if (!ref_same(s[t], want)) {
			for (size_t j = 0; j < K; j++)
				print_message("q[%zu] %a k %a\n", j, q[j], kr[t * K + j]);
			print_message("key %zu of 4: got %a, want %a\n", t, s[t], want);
			failed("four keys' q.k", u, K, __LINE__);
		}
	}
}

static void test_random(void **state)
{
	(void)state;
	static const skv_format ins[] = {SKV_FP16, SKV_BF16, SKV_TF32, SKV_E4M3, SKV_E5M2};
	static const skv_format outs[] = {SKV_FP32, SKV_FP16};
	skv_rng r;
	skv_rng_seed(&r, 20261201);
	int units = 0;
	for (int g = SKV_GPU_V100; g < SKV_NGPUS; g++)
		for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++)
			for (size_t o = 0; o < 2; o++) {
				skv_mma_unit u, ref;
				if (skv_mma_unit_init(&u, (skv_gpu)g, ins[i], outs[o]) != SKV_OK)
					continue;
				ref = u;
				ref.fast = 0;
				units++;
				for (int t = 0; t < ROUNDS; t++) {
					const int mode = t % 5;
					const uint64_t w = skv_rng_next(&r);
					const size_t K = w % 2 ? 1 + (w >> 8) % KMAX : (size_t)u.par.n << (w >> 1) % 3;
					check_dot(&u, &ref, &r, K < KMAX ? K : KMAX, mode);
					if ((t >> 2) % 2 == 1)
						check_dot4(&u, &ref, &r, 1 + skv_rng_next(&r) % KMAX, mode);
					if ((t >> 2) % 2 == 0)
						check_pv(&u, &ref, &r, 1 + skv_rng_next(&r) % 64, 1 + skv_rng_next(&r) % DMAX,
							 mode);
				}
			}
	assert_int_equal(units, 30); /* the unit table's rows (lib/mma.c) */
}

/* The four-lane output rounding at the top of fp16: c = 65504, the
 * largest fp16, plus 16 is 65520, the midpoint to 2^16, which rne rounds
 * to even, 2^16: +inf; plus 8 stays 65504. Every lane of P.V against
 * the general path, for each unit with fp16 out. */
static void test_round_top(void **state)
{
	(void)state;
	static const skv_format ins[] = {SKV_FP16, SKV_E4M3, SKV_E5M2};
	int units = 0;
	for (int g = SKV_GPU_V100; g < SKV_NGPUS; g++)
		for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
			skv_mma_unit u, ref;
			unsigned k;
			if (skv_mma_unit_init(&u, (skv_gpu)g, ins[i], SKV_FP16) != SKV_OK ||
			    skv_mma_tile(&k, NULL, (skv_gpu)g, ins[i]) != SKV_OK)
				continue;
			ref = u;
			ref.fast = 0;
			units++;
			for (double add = 8; add <= 16; add += 8) {
				double p[32] = {4.0}, v[32 * 4] = {0}, acc[4], want[4];
				for (int t = 0; t < 4; t++)
					v[t] = add / 4, acc[t] = want[t] = 65504.0;
				for (int t = 0; t < 4; t++)
					want[t] = skv_mma_dot_fast(&ref, p, 1, v + t, 4, k, want[t]);
				skv_mma_pv(acc, &u, k, p, v, k, 4);
				for (int t = 0; t < 4; t++)
					if (!ref_same(acc[t], want[t])) {
						print_message("65504 + %g: got %a, want %a\n", add, acc[t], want[t]);
						failed("P.V at the top of fp16", &u, k, __LINE__);
					}
			}
		}
	assert_true(units >= 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_random), cmocka_unit_test(test_round_top)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
