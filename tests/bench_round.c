/* bench_round.c - throughput of rounding to each format and of fp16 add/mul/exp, against a plain loop. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fmt_inline.h"
#include "skv.h"

/* Small arrays (L1-resident) so the figures are the arithmetic, not memory. */
enum { N = 4096, BEST_OF = 5 };
static double xs[N], ys[N], out[N];

/* Keeps the compiler from dropping or merging repetitions of a loop. */
#define CLOBBER(p) __asm__ volatile("" : : "r"(p) : "memory")

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef enum {
	K_PLAIN, /* out = x + y: the reference loop */
	K_ROUND_FP16, K_ROUND_BF16, K_ROUND_FP32, K_ROUND_FP64,
	K_CALL_FP16, K_CALL_BF16, K_CALL_FP32, K_CALL_FP64,
	K_ADD_FP16, K_MUL_FP16, K_EXP_FP16, K_EXP_LIBM,
	K_COUNT
} kernel;

static const char *const names[] = {
	"plain loop (x + y in double)",
	"skv_round_i fp16 (inline)", "skv_round_i bf16 (inline)", "skv_round_i fp32 (inline)",
	"skv_round_i fp64 (inline)",
	"skv_round fp16 (call)", "skv_round bf16 (call)", "skv_round fp32 (call)", "skv_round fp64 (call)",
	"skv_add_i fp16", "skv_mul_i fp16", "skv_exp_i fp16", "exp (libm double, no rounding)",
};
_Static_assert(sizeof names / sizeof names[0] == K_COUNT, "one name per kernel");

static void run(kernel k)
{
	switch (k) {
	case K_PLAIN: for (int i = 0; i < N; i++) out[i] = xs[i] + ys[i]; break;
	case K_ROUND_FP16: for (int i = 0; i < N; i++) out[i] = skv_round_i(SKV_FP16, xs[i]); break;
	case K_ROUND_BF16: for (int i = 0; i < N; i++) out[i] = skv_round_i(SKV_BF16, xs[i]); break;
	case K_ROUND_FP32: for (int i = 0; i < N; i++) out[i] = skv_round_i(SKV_FP32, xs[i]); break;
	case K_ROUND_FP64: for (int i = 0; i < N; i++) out[i] = skv_round_i(SKV_FP64, xs[i]); break;
	case K_CALL_FP16: for (int i = 0; i < N; i++) out[i] = skv_round(SKV_FP16, xs[i]); break;
	case K_CALL_BF16: for (int i = 0; i < N; i++) out[i] = skv_round(SKV_BF16, xs[i]); break;
	case K_CALL_FP32: for (int i = 0; i < N; i++) out[i] = skv_round(SKV_FP32, xs[i]); break;
	case K_CALL_FP64: for (int i = 0; i < N; i++) out[i] = skv_round(SKV_FP64, xs[i]); break;
	case K_ADD_FP16: for (int i = 0; i < N; i++) out[i] = skv_add_i(SKV_FP16, xs[i], ys[i]); break;
	case K_MUL_FP16: for (int i = 0; i < N; i++) out[i] = skv_mul_i(SKV_FP16, xs[i], ys[i]); break;
	case K_EXP_FP16: for (int i = 0; i < N; i++) out[i] = skv_exp_i(SKV_FP16, xs[i]); break;
	case K_EXP_LIBM: for (int i = 0; i < N; i++) out[i] = exp(xs[i]); break;
	default: break;
	}
	CLOBBER(out);
}

/* Best of BEST_OF timings of `reps` passes, in seconds per value. */
static double time_kernel(kernel k, long reps)
{
	double best = INFINITY;

	for (int b = 0; b < BEST_OF; b++) {
		double t0 = now();
		for (long r = 0; r < reps; r++) {
			CLOBBER(xs);
			run(k);
		}
		double t = (now() - t0) / ((double)reps * N);
		if (t < best)
			best = t;
	}
	return best;
}

int main(void)
{
	uint64_t seed = 2024;
	const long reps = 2000; /* 8.2 million values per timing */
	double base, sum = 0;

	/* fp16 values in [-8, 8] (moderate: exp stays finite, products and
	 * sums mostly normal), so the inputs are values of every format. */
	for (int i = 0; i < N; i++) {
		xs[i] = skv_round(SKV_FP16, ldexp((double)(splitmix64(&seed) >> 11), -53) * 16 - 8);
		ys[i] = skv_round(SKV_FP16, ldexp((double)(splitmix64(&seed) >> 11), -53) * 16 - 8);
	}
	base = time_kernel(K_PLAIN, reps);
	printf("%-34s %10s %12s %12s\n", "operation", "ns/value", "Mvalues/s", "x plain loop");
	for (int k = 0; k < K_COUNT; k++) {
		double t = (k == K_PLAIN) ? base : time_kernel((kernel)k, reps);
		printf("%-34s %10.2f %12.0f %12.2f\n", names[k], t * 1e9, 1e-6 / t, t / base);
		sum += out[k];
	}
	printf("(N = %d values per pass, %ld passes, best of %d; checksum %g)\n", N, reps, BEST_OF, sum);
	return 0;
}
